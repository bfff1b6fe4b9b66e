#include "pl011.h"

#include "hal/errno.h"
#include "hal/mmio.h"

/* Register offsets (PL011 TRM 3.2, table 3-1) */
#define UARTDR        0x000
#define UARTRSR_ECR   0x004
#define UARTFR        0x018
#define UARTLCR_H     0x02c
#define UARTCR        0x030
#define UARTIMSC      0x038
#define UARTICR       0x044
#define UARTPERIPHID0 0xfe0
#define UARTPCELLID0  0xff0

/* UARTDR read (TRM 3.3.1): data in [7:0], OE/BE/PE/FE in [11:8] */
#define DR_DATA       0xffu
#define DR_ERRORS     0xf00u

/* UARTFR (TRM 3.3.3); [31:9] reserved, read as zero */
#define FR_BUSY       (1u << 3)
#define FR_RXFE       (1u << 4)
#define FR_TXFF       (1u << 5)
#define FR_RXFF       (1u << 6)
#define FR_TXFE       (1u << 7)
#define FR_RESERVED   0xfffffe00u

/* UARTLCR_H (TRM 3.3.7) */
#define LCR_H_FEN     (1u << 4)
#define LCR_H_WLEN_8  (3u << 5)

/* UARTCR (TRM 3.3.8) */
#define CR_UARTEN     (1u << 0)
#define CR_TXE        (1u << 8)
#define CR_RXE        (1u << 9)

/* UARTICR: bits [10:0] clear every interrupt source (TRM 3.3.13) */
#define ICR_ALL       0x7ffu

/* Identification registers (TRM 3.3.14-3.3.15), one byte in each word's
 * [7:0].  PeriphID2[7:4] is the revision (r1p5 reads 3, QEMU reads 1), so
 * only the designer nibble [3:0] of PeriphID2 is compared. */
static const uint8_t pl011_periph_id[4] = { 0x11, 0x10, 0x04, 0x00 };
static const uint8_t pl011_periph_id_mask[4] = { 0xff, 0xff, 0x0f, 0xff };
static const uint8_t pl011_pcell_id[4] = { 0x0d, 0xf0, 0x05, 0xb1 };

static uint32_t tx_dropped;
static uint32_t rx_errors;

static int pl011_wait_fr_clear(uintptr_t base, uint32_t bits)
{
	uint32_t spins;

	for (spins = 0; spins < PL011_TX_SPIN_LIMIT; spins++) {
		if ((mmio_read32(base + UARTFR) & bits) == 0)
			return 0;
	}
	return -HAL_ETIMEDOUT;
}

void pl011_init(uintptr_t base)
{
	/* TRM 3.3.8: disable, let the current character finish, then
	 * reprogram LCR_H (clearing and setting FEN flushes the FIFOs).  A
	 * BUSY that never clears costs one bounded wait and is not fatal. */
	mmio_write32(base + UARTCR, 0);
	(void)pl011_wait_fr_clear(base, FR_BUSY);
	mmio_write32(base + UARTLCR_H, 0);
	mmio_write32(base + UARTLCR_H, LCR_H_WLEN_8 | LCR_H_FEN);
	mmio_write32(base + UARTIMSC, 0);
	mmio_write32(base + UARTICR, ICR_ALL);
	mmio_write32(base + UARTRSR_ECR, 0);
	mmio_write32(base + UARTCR, CR_UARTEN | CR_TXE | CR_RXE);
}

void pl011_putc(uintptr_t base, char c)
{
	if (pl011_wait_fr_clear(base, FR_TXFF) != 0) {
		tx_dropped++;
		return;
	}
	mmio_write32(base + UARTDR, (uint8_t)c);
}

int pl011_getc(uintptr_t base)
{
	uint32_t dr;

	if (mmio_read32(base + UARTFR) & FR_RXFE)
		return -1;
	dr = mmio_read32(base + UARTDR);
	if (dr & DR_ERRORS) {
		rx_errors++;
		mmio_write32(base + UARTRSR_ECR, 0);
	}
	return (int)(dr & DR_DATA);
}

int pl011_selftest(uintptr_t base)
{
	uint32_t fr;
	unsigned i;

	for (i = 0; i < 4; i++) {
		uint32_t periph = mmio_read32(base + UARTPERIPHID0 + 4u * i);
		uint32_t pcell = mmio_read32(base + UARTPCELLID0 + 4u * i);

		if ((periph & 0xffu & pl011_periph_id_mask[i]) != pl011_periph_id[i])
			return -HAL_ENODEV;
		if ((pcell & 0xffu) != pl011_pcell_id[i])
			return -HAL_ENODEV;
	}
	fr = mmio_read32(base + UARTFR);
	if (fr & FR_RESERVED)
		return -HAL_ENODEV;
	if ((fr & (FR_TXFF | FR_TXFE)) == (FR_TXFF | FR_TXFE))
		return -HAL_ENODEV;
	if ((fr & (FR_RXFF | FR_RXFE)) == (FR_RXFF | FR_RXFE))
		return -HAL_ENODEV;
	return 0;
}

uint32_t pl011_dropped(void)
{
	return tx_dropped;
}

uint32_t pl011_rx_errors(void)
{
	return rx_errors;
}
