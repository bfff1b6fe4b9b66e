/* What the firmware needs from the platform it runs on, beyond drivers:
 * bring-up, the command line, sleeping until an event, and exiting.  Each
 * backend (hal/qemu-virt, hal/posix) implements this once. */
#ifndef HAL_PLATFORM_H
#define HAL_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "hal/console.h"
#include "hal/dma.h"
#include "hal/eth.h"
#include "hal/hostif.h"
#include "hal/timer.h"

#define HAL_MAX_ETH 2

struct hal_platform {
	const char *board;                 /* board name */
	const struct hal_console_ops *console;
	const struct hal_timer_ops *timer;
	struct hal_eth *eth[HAL_MAX_ETH];  /* NULL-terminated when fewer */
	unsigned n_eth;
	struct hal_hostif hostif;          /* bar == NULL when absent */
};

/* One result line of a board self-test check. */
typedef void (*hal_selftest_report_fn)(void *ctx, const char *check, int rc,
				       const char *detail);

/* Bring up the platform: console first, then timer, interrupts, buses and
 * devices.  Fills *p.  Platform options are consumed from argc and argv (POSIX:
 * everything before "--"); what is left is the firmware's own command line
 * (argv[0] is the image).  Returns 0 or a negative error (already logged). */
int hal_platform_init(struct hal_platform *p, int *argc, char ***argv);

/* Service device interrupts (acknowledge, let drivers reap rings).  Called
 * by the event loop each iteration, never from interrupt context. */
void hal_platform_poll(struct hal_platform *p);

/* Sleep until an interrupt/fd is ready or until deadline_ns.  The caller
 * has already checked that no work is pending; a wakeup that races with
 * the check is not lost (boards: WFI wakes on a pending interrupt even
 * while masked; POSIX: poll() on level-triggered fds). */
void hal_platform_wait(struct hal_platform *p, uint64_t deadline_ns);

/* Board-specific self-tests of every driver on the real (emulated)
 * hardware: each check is reported through report(); returns the number of
 * failed checks. */
int hal_platform_selftest(struct hal_platform *p, hal_selftest_report_fn report, void *ctx);

/* Leave with an exit code (semihosting SYS_EXIT_EXTENDED on boards). */
void hal_platform_exit(int code) __attribute__((noreturn));

#endif
