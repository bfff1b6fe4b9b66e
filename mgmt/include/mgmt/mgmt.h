/* The firmware side of the host interface (docs/host-interface.md).
 *
 *   cmdq.c      transport: init-segment configuration, ring entries,
 *               mailbox chains gathered/scattered through hal_dma, ownership
 *   cmd.c       dispatcher: the opcode table, length/reserved/handle/address
 *               checks (cmd_priv.h: what the handlers share)
 *   cmd_device.c, cmd_objects.c, cmd_migrate.c, cmd_context.c, cmd_mtt.c
 *               one handler per opcode, by object, calling the RoCEv2 engine
 *               (rocev2/rocev2.h); firmware update in fwflash.c; contexts
 *               (tenants: who issued a command, what it owns) in
 *               cmd_context.c; memory translation tables in cmd_mtt.c
 *   doorbell.c  data-path doorbells: db_seq -> re-read every live queue's
 *               doorbell record
 *
 * Everything the host gives is hostile: the init segment is read once per
 * field per poll, entries and mailboxes only through hal_dma (bounds-checked
 * window addresses), every length is checked with >= before use, and every
 * refusal is counted (counters.h).  Run to completion on the event loop: no
 * locking.
 */
#ifndef MGMT_MGMT_H
#define MGMT_MGMT_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "hal/dma.h"
#include "hal/doorbell.h"
#include "hal/eth.h"
#include "mnic/abi.h"
#include "mnic/cmd.h"
#include "rocev2/rocev2.h"

#define MNIC_MGMT_MAX_PORTS 4u
#define MNIC_CMD_MAX_BLOCKS ((MNIC_CMD_MAX_LEN - MNIC_CMD_INLINE_LEN + MNIC_CMD_MBOX_DATA - 1u) / \
			     MNIC_CMD_MBOX_DATA)

struct mnic_mgmt_cfg {
	volatile struct mnic_init_seg *seg;   /* the BAR's init segment */
	volatile struct mnic_db_page *db;     /* the BAR's doorbell page */
	struct hal_dma *dma;                  /* the BAR's host DMA window */
	struct hal_dma *hostmem;              /* the engine's host-memory aperture
						 (its env.dma); NULL: the DMA window
						 is the aperture */
	struct rocev2 *engine;                /* initialised by the caller */
	uint32_t board_id;
	const char *board_name;
	uint64_t boot_ns;                     /* engine clock at boot (uptime) */
	struct hal_eth *eth[MNIC_MGMT_MAX_PORTS];   /* PORT counters; may be NULL */
	unsigned n_eth;
	const struct hal_doorbell *doorbell;  /* PORT counters dbch_*; NULL: no channel */
};

/* A context (docs/host-interface.md "Contexts"): the engine owner id is
 * its index.  [MNIC_CTX_MGMT] is always in use and holds the whole user
 * area; the others hold disjoint MNIC_CTX_UA_ALIGN-aligned ranges of it. */
struct mnic_ctx {
	uint8_t in_use;
	uint32_t owner_tag;                   /* ALLOC_CONTEXT's, opaque */
	uint64_t ua_offset, ua_size;          /* window addresses */
};

/* The shape of an MTT made by CREATE_MTT (cmd_mtt.c): what checking a
 * WRITE_MTT page list against the issuer's range takes, which the engine
 * does not report.  Handles, owners and counts are the engine's.  handle
 * 0 (MNIC_MTT_NONE): a free slot. */
struct mnic_mtt {
	uint32_t handle;
	uint32_t npages;
	uint16_t ctx;
	uint8_t page_shift;
};

struct mnic_mgmt {
	struct mnic_mgmt_cfg cfg;
	struct mnic_ctx ctx[MNIC_CTX_MAX + 1u];
	struct mnic_mtt mtt[ROCEV2_MAX_MTT];
	struct mnic_mgmt_counters cnt;
	/* transport: latched configuration */
	uint32_t cmdq_state;                  /* enum mnic_cmdq_status */
	uint64_t ring_addr;
	uint32_t ring_size;                   /* entries */
	uint32_t ci;                          /* free-running consumer index */
	/* data path */
	uint32_t db_seen;
	/* (the host's RoCEv2 GID table, SET_GID, is the engine's:
	 * rocev2_set_gid) */
};

/* Take the configuration; publishes cmdq_status OFF and ci = the host's pi. */
void mnic_mgmt_init(struct mnic_mgmt *m, const struct mnic_mgmt_cfg *cfg);

/* One doorbell poll of the command queue: follow cmdq_ctrl (latch/validate
 * on enable, reset on disable) and serve up to one ring of HW-owned entries.
 * Returns the number of entries answered. */
unsigned mnic_cmdq_service(struct mnic_mgmt *m);

/* Data-path doorbells: when db_page.db_seq changed, re-read the doorbell record of
 * every live SQ/RQ/SRQ.  Returns 1 when db_seq had changed. */
int mnic_db_service(struct mnic_mgmt *m);

/* The dispatcher, on one logical command in buf: bytes [0, in_len) are the
 * input, the output is written over it from byte 0 (handlers read their
 * input before writing).  buf holds MNIC_CMD_MAX_LEN bytes, 8-byte aligned
 * (WRITE_MTT hands its page list to the engine in place); 8 <= in_len,
 * out_len <= MNIC_CMD_MAX_LEN.  Always writes an output header; returns the
 * output bytes produced (8 .. out_len), 0 only for lengths out of range. */
uint32_t mnic_cmd_dispatch(struct mnic_mgmt *m, uint8_t *buf, uint32_t in_len, uint32_t out_len);

/* True when [addr, addr + len) lies in the user-area range of context ctx
 * (MNIC_CTX_MGMT: the whole user area of the window). */
int mnic_ctx_range_ok(const struct mnic_mgmt *m, uint32_t ctx, uint64_t addr, uint64_t len);

#endif
