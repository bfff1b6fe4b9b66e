/* A fake host for the command interface tests: a malloc'd BAR (init
 * segment + host DMA window, the window reached by the firmware through
 * the real hal_dma window backend), a real engine in a silent environment
 * (tests/unit/rocev2/silent_env.h) and the real mgmt/ code.  The host side
 * writes entries and mailbox chains into the window exactly as a driver
 * would, rings cmdq_pi, and the test calls mnic_cmdq_service() where the
 * event loop would.  Shared by test_cmdq.c and test_cmd.c.
 */
#ifndef FAKE_HOST_H
#define FAKE_HOST_H

#include <stdlib.h>
#include <string.h>

#include "cmocka_main.h"
#include "mgmt/mgmt.h"
#include "mnic/cmd_names.h"
#include "silent_env.h"

#ifndef HOST_WINDOW
#define HOST_WINDOW (4u << 20)              /* driver area 2 MiB + user area 2 MiB */
#endif
#define HOST_BAR (MNIC_DMA_WINDOW_OFFSET + HOST_WINDOW)
#define HOST_LOG_SIZE 3u                     /* 8 entries */
#define HOST_IN_MBOX MNIC_CMD_MBOX_AREA      /* input chain from here */
#define HOST_USER MNIC_USER_AREA_OFFSET

struct host {
	uint8_t *bar;
	volatile struct mnic_init_seg *seg;
	uint8_t *win;
	struct hal_dma dma;
	uint8_t *hostmem;             /* the host-memory aperture, or NULL */
	struct hal_dma hostmem_dma;   /* the engine's DMA when hostmem is set */
	struct rocev2 *e;
	struct mnic_mgmt m;
	uint8_t token;
	uint32_t pi;
};

/* Hooks a test uses to damage an entry or its chains before the doorbell. */
struct host_xfer {
	uint64_t in_mbox, out_mbox;   /* where the chains start (0: defaults) */
	void (*corrupt)(struct host *h, struct mnic_cmdq_entry *e, void *arg);
	void *arg;
	int no_ring;                  /* leave the entry SW-owned */
};

/* hostmem_size 0: the engine reaches the DMA window, as the firmware
 * without a host-memory aperture; else a malloc'd aperture of that size
 * is the engine's (and mgmt's cfg.hostmem), the window keeping the
 * command queue. */
static inline void host_init_hostmem(struct host *h, uint64_t hostmem_size)
{
	struct rocev2_env env;
	struct mnic_mgmt_cfg cfg;

	memset(h, 0, sizeof(*h));
	h->bar = calloc(1, HOST_BAR);
	assert_non_null(h->bar);
	h->seg = (volatile struct mnic_init_seg *)h->bar;
	h->win = h->bar + MNIC_DMA_WINDOW_OFFSET;
	hal_dma_window_init(&h->dma, h->win, HOST_WINDOW);
	if (hostmem_size) {
		h->hostmem = calloc(1, hostmem_size);
		assert_non_null(h->hostmem);
		hal_dma_window_init(&h->hostmem_dma, h->hostmem, hostmem_size);
	}
	h->e = calloc(1, sizeof(*h->e));
	assert_non_null(h->e);
	env = silent_env(h->hostmem ? &h->hostmem_dma : &h->dma);
	assert_int_equal(rocev2_init(h->e, &env), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.seg = h->seg;
	cfg.db = (volatile struct mnic_db_page *)(h->bar + MNIC_DB_PAGE_OFFSET);
	cfg.dma = &h->dma;
	cfg.hostmem = h->hostmem ? &h->hostmem_dma : NULL;
	cfg.engine = h->e;
	cfg.board_id = 3;
	cfg.board_name = "test";
	mnic_mgmt_init(&h->m, &cfg);
	h->token = 0x40;
}

static inline void host_init(struct host *h)
{
	host_init_hostmem(h, 0);
}

static inline void host_free(struct host *h)
{
	free(h->e);
	free(h->hostmem);
	free(h->bar);
}

/* Configure and enable the ring at window address 0. */
static inline void host_enable(struct host *h)
{
	h->seg->cmdq_addr = 0;
	h->seg->cmdq_log_size = HOST_LOG_SIZE;
	h->seg->cmdq_ctrl = MNIC_CMDQ_CTRL_ENABLE;
	mnic_cmdq_service(&h->m);
	assert_int_equal(h->seg->cmdq_status, MNIC_CMDQ_RUNNING);
	h->pi = h->seg->cmdq_ci;
}

static inline uint32_t host_blocks(uint32_t len)
{
	return len <= MNIC_CMD_INLINE_LEN ? 0 : (len - MNIC_CMD_INLINE_LEN + 511u) / 512u;
}

/* Lay out a chain of the blocks for len bytes at base, data from src
 * (NULL: zero).  Returns the first block's address (0 if none). */
static inline uint64_t host_chain(struct host *h, uint64_t base, const uint8_t *src, uint32_t len)
{
	uint32_t n = host_blocks(len), i;

	for (i = 0; i < n; i++) {
		struct mnic_cmd_mailbox *b = (struct mnic_cmd_mailbox *)(h->win + base +
									 (uint64_t)i * MNIC_CMD_MBOX_SIZE);
		uint32_t off = MNIC_CMD_INLINE_LEN + i * 512u;
		uint32_t chunk = len - off < 512u ? len - off : 512u;

		memset(b, 0, sizeof(*b));
		if (src)
			memcpy(b->data, src + off, chunk);
		b->next = i + 1 < n ? base + (uint64_t)(i + 1) * MNIC_CMD_MBOX_SIZE : 0;
		b->block_num = i;
		b->token = h->token;
	}
	return n ? base : 0;
}

static inline struct mnic_cmd_mailbox *host_mbox(struct host *h, uint64_t addr)
{
	return (struct mnic_cmd_mailbox *)(h->win + addr);
}

static inline struct mnic_cmdq_entry *host_entry(struct host *h, uint32_t index)
{
	return (struct mnic_cmdq_entry *)(h->win + (uint64_t)(index & ((1u << HOST_LOG_SIZE) - 1u)) *
							  MNIC_CMDQ_ENTRY_SIZE);
}

/* Issue one command; returns its delivery status; out gets out_len bytes
 * (inline + chain).  Checks the transport's promises on every call: the
 * entry came back SW-owned, ci moved by one, the token is untouched. */
static inline uint32_t host_xfer(struct host *h, const void *in, uint32_t in_len, void *out,
				 uint32_t out_len, const struct host_xfer *x)
{
	struct mnic_cmdq_entry *e = host_entry(h, h->pi);
	uint64_t in_base = x && x->in_mbox ? x->in_mbox : HOST_IN_MBOX;
	uint64_t out_base = x && x->out_mbox ? x->out_mbox
					     : in_base + (uint64_t)host_blocks(in_len) * MNIC_CMD_MBOX_SIZE;
	uint32_t ci0 = h->seg->cmdq_ci, n, i;
	uint8_t token;

	h->token = (uint8_t)(h->token * 7u + 13u);
	token = h->token;
	memset(e, 0, sizeof(*e));
	e->type = MNIC_CMD_TYPE_PCIE;
	e->in_len = in_len;
	e->out_len = out_len;
	e->token = token;
	memcpy(e->in_inline, in, in_len < 16u ? in_len : 16u);
	e->in_mbox = host_chain(h, in_base, in, in_len);
	e->out_mbox = host_chain(h, out_base, NULL, out_len);
	if (x && x->corrupt)
		x->corrupt(h, e, x->arg);
	if (!(x && x->no_ring))
		e->status_own = MNIC_CMD_OWNER_HW;
	h->pi++;
	h->seg->cmdq_pi = h->pi;
	mnic_cmdq_service(&h->m);
	if (x && x->no_ring)
		return 0xff;
	assert_int_equal(e->status_own & MNIC_CMD_OWNER_HW, 0);
	assert_int_equal(h->seg->cmdq_ci, ci0 + 1u);
	assert_int_equal(e->token, token);
	if (out) {
		uint8_t *o = out;

		n = out_len < 16u ? out_len : 16u;
		memcpy(o, e->out_inline, n);
		for (i = 0; i < host_blocks(out_len); i++) {
			uint32_t off = 16u + i * 512u, chunk = out_len - off < 512u ? out_len - off : 512u;

			memcpy(o + off, host_mbox(h, out_base + (uint64_t)i * MNIC_CMD_MBOX_SIZE)->data,
			       chunk);
		}
	}
	return e->status_own >> 1;
}

/* A command that must be delivered; returns the command status. */
static inline uint8_t host_cmd(struct host *h, const void *in, uint32_t in_len, void *out,
			       uint32_t out_len)
{
	uint32_t d = host_xfer(h, in, in_len, out, out_len, NULL);

	assert_int_equal(d, MNIC_CMD_DELIV_OK);
	return ((const uint8_t *)out)[0];
}

static inline uint32_t out_syndrome(const void *out)
{
	uint32_t s;

	memcpy(&s, (const uint8_t *)out + 4, 4);
	return s;
}

static inline struct mnic_cmd_in_hdr in_hdr(uint16_t opcode, uint16_t op_mod)
{
	struct mnic_cmd_in_hdr hd = { opcode, op_mod, 0, 0 };

	return hd;
}

/* The firmware still answers: QUERY_DEVICE succeeds. */
static inline struct mnic_cmd_query_device_out host_query_device(struct host *h)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_QUERY_DEVICE, 0) };
	struct mnic_cmd_query_device_out o;

	memset(&o, 0xee, sizeof(o));
	assert_int_equal(host_cmd(h, &in, sizeof(in), &o, sizeof(o)), MNIC_CMD_STAT_OK);
	assert_int_equal(o.cmdif_rev, MNIC_CMDIF_REV);
	return o;
}

#endif
