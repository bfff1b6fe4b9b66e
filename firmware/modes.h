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

int fw_mode_run(struct fw_ctx *c, const struct fw_args *a);
int fw_mode_selftest(struct fw_ctx *c, const struct fw_args *a);
int fw_mode_rawx(struct fw_ctx *c, const struct fw_args *a);
int fw_mode_rcx(struct fw_ctx *c, const struct fw_args *a);

/* Exit codes shared by every mode (scripts rely on them). */
#define FW_EXIT_OK        0
#define FW_EXIT_FAIL      1
#define FW_EXIT_USAGE     2
#define FW_EXIT_PLATFORM  3

#endif
