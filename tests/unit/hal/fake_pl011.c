#include "fake_pl011.h"

#include <string.h>

#include "hal/mmio.h"

#define FR_BUSY  (1u << 3)
#define FR_RXFE  (1u << 4)
#define FR_TXFF  (1u << 5)
#define FR_TXFE  (1u << 7)
#define CR_UARTEN 1u

struct fake_pl011 fake_pl011;

void fake_pl011_reset(void)
{
	static const uint32_t periph[4] = { 0x11, 0x10, 0x14, 0x00 };
	static const uint32_t pcell[4] = { 0x0d, 0xf0, 0x05, 0xb1 };

	memset(&fake_pl011, 0, sizeof(fake_pl011));
	fake_pl011.base = FAKE_PL011_BASE;
	memcpy(fake_pl011.periph_id, periph, sizeof(periph));
	memcpy(fake_pl011.pcell_id, pcell, sizeof(pcell));
	fake_pl011.cr = 0x300;
}

void fake_pl011_rx_push(uint16_t dr_value)
{
	if (fake_pl011.rx_tail - fake_pl011.rx_head < FAKE_PL011_RX_MAX)
		fake_pl011.rx[fake_pl011.rx_tail++ % FAKE_PL011_RX_MAX] = dr_value;
}

static uint32_t fr_value(void)
{
	struct fake_pl011 *u = &fake_pl011;
	uint32_t fr = 0;
	int full = u->txff_stuck || u->txff_remaining > 0;

	u->fr_reads++;
	if (u->fr_force)
		return u->fr_forced;
	if (full) {
		fr |= FR_TXFF;
		if (u->txff_remaining > 0)
			u->txff_remaining--;
	} else {
		fr |= FR_TXFE;
	}
	if (u->rx_head == u->rx_tail)
		fr |= FR_RXFE;
	if (u->busy_reads > 0) {
		fr |= FR_BUSY;
		u->busy_reads--;
	}
	return fr;
}

uint32_t mmio_read32(uintptr_t addr)
{
	struct fake_pl011 *u = &fake_pl011;
	uintptr_t off = addr - u->base;

	u->reads++;
	if (addr < u->base || off >= 0x1000 || (off & 3)) {
		u->bad_access++;
		return 0xffffffffu;
	}
	if (u->absent)
		return 0xffffffffu;
	if (off >= 0xfe0 && off < 0xff0)
		return u->periph_id[(off - 0xfe0) / 4];
	if (off >= 0xff0)
		return u->pcell_id[(off - 0xff0) / 4];
	switch (off) {
	case 0x000:
		if (u->rx_head == u->rx_tail)
			return 0;
		return u->rx[u->rx_head++ % FAKE_PL011_RX_MAX];
	case 0x018:
		return fr_value();
	case 0x02c:
		return u->lcr_h;
	case 0x030:
		return u->cr;
	case 0x038:
		return u->imsc;
	default:
		return 0;
	}
}

void mmio_write32(uintptr_t addr, uint32_t val)
{
	struct fake_pl011 *u = &fake_pl011;
	uintptr_t off = addr - u->base;

	u->writes++;
	if (addr < u->base || off >= 0x1000 || (off & 3)) {
		u->bad_access++;
		return;
	}
	switch (off) {
	case 0x000:
		if (u->txff_stuck || u->txff_remaining > 0) {
			u->tx_while_full++;
			return;
		}
		if (u->tx_len < FAKE_PL011_TX_MAX)
			u->tx[u->tx_len++] = (uint8_t)val;
		u->txff_remaining = u->txff_hold_reads;
		break;
	case 0x004:
		u->ecr_writes++;
		break;
	case 0x02c:
		if (u->cr & CR_UARTEN)
			u->lcr_h_while_enabled++;
		u->lcr_h = val;
		break;
	case 0x030:
		u->cr = val;
		break;
	case 0x038:
		u->imsc = val;
		break;
	case 0x044:
		u->last_icr = val;
		break;
	default:
		u->bad_access++;
		break;
	}
}

/* The driver uses 32-bit accesses only. */
uint16_t mmio_read16(uintptr_t addr)
{
	(void)addr;
	fake_pl011.bad_access++;
	return 0xffff;
}

void mmio_write16(uintptr_t addr, uint16_t val)
{
	(void)addr;
	(void)val;
	fake_pl011.bad_access++;
}

uint8_t mmio_read8(uintptr_t addr)
{
	(void)addr;
	fake_pl011.bad_access++;
	return 0xff;
}

void mmio_write8(uintptr_t addr, uint8_t val)
{
	(void)addr;
	(void)val;
	fake_pl011.bad_access++;
}
