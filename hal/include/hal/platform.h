/* What the firmware needs from the platform it runs on, beyond drivers:
 * bring-up, the command line, sleeping until an event, booting from flash,
 * resetting and exiting.  Each backend (hal/qemu-virt, hal/posix)
 * implements this once. */
#ifndef HAL_PLATFORM_H
#define HAL_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "hal/console.h"
#include "hal/dma.h"
#include "hal/doorbell.h"
#include "hal/eth.h"
#include "hal/flash.h"
#include "hal/hostif.h"
#include "hal/timer.h"

#define HAL_MAX_ETH 2

/* Booting from flash (docs/firmware-images.md): what a first-stage loader
 * booted the firmware from and what it left behind.  All zero on a
 * platform without a loader (POSIX). */
struct hal_boot {
	struct hal_flash *flash;           /* the A/B slot flash; NULL: none */
	const void *handoff;               /* where a loader leaves its hand-off
					      (struct mnic_boot_handoff: the firmware
					      checks its magic); NULL: no loader here */
	uint64_t image_ram_base;           /* a firmware image must load into */
	uint64_t image_ram_end;            /* [base, end); end 0: no range */
	uintptr_t rom_base;                /* the boot flash (loader, key slot), read as */
	uint32_t rom_size;                 /* memory; size 0: none (no key slot) */
};

struct hal_platform {
	const char *board;                 /* board name */
	uint32_t board_id;                 /* the descriptor's board_id, named by images */
	const struct hal_console_ops *console;
	const struct hal_timer_ops *timer;
	struct hal_eth *eth[HAL_MAX_ETH];  /* NULL-terminated when fewer */
	unsigned n_eth;
	struct hal_hostif hostif;          /* bar == NULL when absent */
	struct hal_hostmem hostmem;        /* base == NULL when absent (optional) */
	struct hal_doorbell *doorbell;     /* the host's doorbells and vectors;
					      NULL: none, the loop polls the BAR */
	struct hal_boot boot;
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

/* Restart the whole system as its reset would (qemu-virt: PSCI
 * SYSTEM_RESET, the loader runs again; RAM keeps its contents).  Returns
 * only if it could not: -HAL_ENOTSUP on a platform that has no reset of
 * its own (POSIX), another negative error if the reset failed. */
int hal_platform_reset(struct hal_platform *p);

/* Leave with an exit code (semihosting SYS_EXIT_EXTENDED on boards). */
void hal_platform_exit(int code) __attribute__((noreturn));

/* The firmware's entry, the one call a platform makes upward: boards call
 * it from their startup after building argv (semihosting SYS_GET_CMDLINE),
 * POSIX from main().  Defined in firmware/main.c. */
int fw_main(int argc, char **argv);

#endif
