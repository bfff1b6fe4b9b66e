/* Behavioural model of one PL011 (PL011 TRM 3.3) behind the HAL_MMIO_HOOKS
 * accessors, for tests/unit/hal/test_pl011.c. */
#ifndef FAKE_PL011_H
#define FAKE_PL011_H

#include <stddef.h>
#include <stdint.h>

#define FAKE_PL011_BASE   ((uintptr_t)0x09000000u)
#define FAKE_PL011_TX_MAX 256
#define FAKE_PL011_RX_MAX 64

struct fake_pl011 {
	uintptr_t base;
	/* transmitter: after each DR write FR.TXFF stays set for
	 * txff_hold_reads FR reads (a FIFO draining); txff_stuck holds it */
	uint8_t tx[FAKE_PL011_TX_MAX];
	size_t tx_len;
	unsigned txff_hold_reads;
	unsigned txff_remaining;
	int txff_stuck;
	/* receiver: DR values ([7:0] data, [11:8] error flags) */
	uint16_t rx[FAKE_PL011_RX_MAX];
	size_t rx_head, rx_tail;
	/* FR.BUSY for this many FR reads (pl011_init waits on it) */
	unsigned busy_reads;
	/* when set, FR reads return fr_forced and the ID registers idle */
	int fr_force;
	uint32_t fr_forced;
	int absent;             /* every read returns all-ones */
	uint32_t periph_id[4], pcell_id[4];
	uint32_t cr, lcr_h, imsc, last_icr, ecr_writes;
	/* observations */
	unsigned fr_reads, reads, writes;
	unsigned tx_while_full;     /* DR written while TXFF was set */
	unsigned lcr_h_while_enabled; /* LCR_H written with CR.UARTEN set */
	unsigned bad_access;        /* unknown offset / other device */
};

extern struct fake_pl011 fake_pl011;

/* QEMU 7.2 reset state: IDs 0x11,0x10,0x14,0x00 / 0x0d,0xf0,0x05,0xb1,
 * CR = TXE|RXE, FIFOs empty. */
void fake_pl011_reset(void);
void fake_pl011_rx_push(uint16_t dr_value);

#endif
