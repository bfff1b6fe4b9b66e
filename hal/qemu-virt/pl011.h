/* Arm PrimeCell UART (PL011), polled.  Register map and bits: PL011 TRM
 * (Arm DDI 0183G) 3.2/3.3.
 *
 * Every wait is bounded: a byte that cannot be sent within
 * PL011_TX_SPIN_LIMIT polls of FR is dropped and counted (pl011_dropped()),
 * so a wedged or absent UART never hangs the firmware. */
#ifndef PL011_H
#define PL011_H

#include <stdint.h>

#ifndef PL011_TX_SPIN_LIMIT
#define PL011_TX_SPIN_LIMIT 100000u  /* FR polls; > 10 ms at 115200 baud on hardware */
#endif

/* Masks and clears all interrupts, selects 8N1 with FIFOs and enables the
 * UART, transmitter and receiver.  The baud rate divisors (IBRD/FBRD) are
 * left as found: QEMU ignores them and on hardware the boot loader has set
 * them for the console.  QEMU 7.2 transmits without any of this (DR writes
 * work from reset), so calling pl011_init() is optional there. */
void pl011_init(uintptr_t base);

/* Waits while FR.TXFF, then writes DR.  On timeout the byte is dropped. */
void pl011_putc(uintptr_t base, char c);

/* One received byte (0..255), or -1 when FR.RXFE.  A byte received with a
 * framing/parity/break/overrun error is still returned and counted in
 * pl011_rx_errors(); the error is cleared through RSR/ECR. */
int pl011_getc(uintptr_t base);

/* 0 if the PrimeCell/peripheral ID registers identify a PL011 and FR holds
 * no impossible state; -HAL_ENODEV otherwise.  Reads only, no side effects. */
int pl011_selftest(uintptr_t base);

/* Counters over all PL011 instances since reset. */
uint32_t pl011_dropped(void);
uint32_t pl011_rx_errors(void);

#endif
