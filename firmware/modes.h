/* Firmware run modes, selected by the first word of the command line. */
#ifndef FW_MODES_H
#define FW_MODES_H

#include "args.h"
#include "loop.h"

struct fw_ctx {
	struct hal_platform *plat;
	struct fw_loop *loop;
	struct hal_dma dma;            /* the BAR's DMA window: command queue, mailboxes */
	struct hal_dma hostmem;        /* the platform's host-memory aperture, if any */
	struct hal_dma *host_dma;      /* what the engine reaches (rings, MRs):
					  &hostmem, or &dma without an aperture */
};

struct fw_mode {
	const char *name;
	int (*run)(struct fw_ctx *c, const struct fw_args *a);
	const char *help;
};

int fw_mode_run(struct fw_ctx *c, const struct fw_args *a);
int fw_mode_selftest(struct fw_ctx *c, const struct fw_args *a);
int fw_mode_rawx(struct fw_ctx *c, const struct fw_args *a);
int fw_mode_rcx(struct fw_ctx *c, const struct fw_args *a);

/* The lab's modes (rawx, rcx: traffic generators, the firmware plays the
 * peer and the host, for tests and the bench; selftest: every driver
 * exercised on the emulated hardware, tests/system/selftest_boards.sh) are
 * not part of the product image:
 * the boards link them into mnic-fw-lab.elf only (firmware/lab_modes.c;
 * mnic-fw.elf links firmware/lab_none.c, no lab mode), so what ships and
 * what counts against the text budget is the NIC alone.  The POSIX NIC, a
 * test vehicle, always has them. */
extern const struct fw_mode fw_lab_modes[];
extern const unsigned fw_lab_n_modes;

/* Exit codes shared by every mode (scripts rely on them). */
#define FW_EXIT_OK        0
#define FW_EXIT_FAIL      1
#define FW_EXIT_USAGE     2
#define FW_EXIT_PLATFORM  3

#endif
