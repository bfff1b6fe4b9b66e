/* Command queue transport (mnic/cmd.h; mlx5 PRM "Command Interface",
 * Linux mlx5/core/cmd.c seen from the device side).
 *
 * Per doorbell poll:
 *   1. cmdq_ctrl: 0 -> OFF (ci reset to the host's pi); ENABLE while OFF ->
 *      validate and latch cmdq_addr/cmdq_log_size (RUNNING, ci again the
 *      host's pi) or BAD_CONFIG with a syndrome.  While RUNNING the host's
 *      later writes to cmdq_addr/cmdq_log_size are ignored: only a disable
 *      re-latches.  Disable and enable are the two halves of the reset
 *      handshake a host uses to resynchronise a queue whose indices
 *      disagree (docs/host-interface.md, "Resynchronisation"): the firmware
 *      keeps nothing of a queue across it, and ci = pi means "no entry in
 *      flight"; entries dropped that way are counted (cmdq_resyncs).
 *   2. while cmdq_pi != ci and entry ci is HW-owned (at most one ring):
 *        read the entry (after its owner bit: rmb), check it, gather the
 *        logical input (16 inline bytes + input mailbox chain), check the
 *        whole output chain, dispatch, scatter the output (out_inline +
 *        output chain), wmb, status_own = delivery << 1 (SW-owned), wmb,
 *        cmdq_ci = ++ci.
 * A delivery error answers the entry with the status and runs nothing.
 *
 * Staging: the logical input and output of the command in service live in
 * one static buffer of MNIC_CMD_MAX_LEN (no allocation); the output is
 * written over the input (mgmt.h: handlers read first).  The addresses of
 * the output chain are checked and saved before the command runs, so the
 * command never runs when its answer cannot be delivered, and the host
 * cannot redirect the output after the check.
 */
#include <stddef.h>
#include <string.h>

#include "hal/errno.h"
#include "hal/mmio.h"
#include "mgmt/mgmt.h"
#include "mnic/cmd_names.h"

static uint8_t cmd_buf[MNIC_CMD_MAX_LEN] __attribute__((aligned(8)));
static uint64_t out_blocks[MNIC_CMD_MAX_BLOCKS];

_Static_assert(MNIC_CMD_MBOX_AREA >= MNIC_CMDQ_MAX_ENTRIES * MNIC_CMDQ_ENTRY_SIZE,
	       "mailboxes after the largest ring");
_Static_assert(offsetof(struct mnic_cmd_mailbox, next) == MNIC_CMD_MBOX_DATA + 48u,
	       "mailbox trailer");

/* The 64-byte trailer of a mailbox block: everything after the data. */
struct mbox_trailer {
	uint8_t reserved0[48];
	uint64_t next;
	uint32_t block_num;
	uint8_t reserved1;
	uint8_t token;
	uint8_t ctrl_signature;
	uint8_t signature;
};
_Static_assert(sizeof(struct mbox_trailer) == MNIC_CMD_MBOX_SIZE - MNIC_CMD_MBOX_DATA,
	       "mailbox trailer size");

const char *const mnic_mgmt_counter_names[] = {
#define MNIC_MGMT_COUNTER_NAME(name) #name,
	MNIC_MGMT_COUNTERS(MNIC_MGMT_COUNTER_NAME)
#undef MNIC_MGMT_COUNTER_NAME
};

void mnic_mgmt_init(struct mnic_mgmt *m, const struct mnic_mgmt_cfg *cfg)
{
	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	if (m->cfg.n_eth > MNIC_MGMT_MAX_PORTS)
		m->cfg.n_eth = MNIC_MGMT_MAX_PORTS;
	m->cmdq_state = MNIC_CMDQ_OFF;
	m->ctx[MNIC_CTX_MGMT].in_use = 1;
	m->ctx[MNIC_CTX_MGMT].ua_offset = MNIC_USER_AREA_OFFSET;
	m->ctx[MNIC_CTX_MGMT].ua_size = cfg->dma->window_size > MNIC_USER_AREA_OFFSET
						? cfg->dma->window_size - MNIC_USER_AREA_OFFSET : 0;
	/* Entries rung before the firmware came up (or left in a BAR file by
	 * an earlier run) are not served: the host starts from cmdq_ci. */
	m->ci = cfg->seg->cmdq_pi;
	m->db_seen = cfg->db->db_seq;
	cfg->seg->cmdq_syndrome = 0;
	cfg->seg->cmdq_ci = m->ci;
	cfg->seg->db_seen = m->db_seen;
	hal_wmb();
	cfg->seg->cmdq_status = MNIC_CMDQ_OFF;
}

/* ---- configuration ------------------------------------------------------- */

static void cmdq_bad_config(struct mnic_mgmt *m, uint32_t site)
{
	m->cnt.cmdq_bad_config++;
	m->cmdq_state = MNIC_CMDQ_BAD_CONFIG;
	m->cfg.seg->cmdq_syndrome = MNIC_SYND(HAL_EINVAL, site);
	/* The syndrome is visible before the status that tells to read it. */
	hal_wmb();
	m->cfg.seg->cmdq_status = MNIC_CMDQ_BAD_CONFIG;
}

/* ci = the host's pi: every entry between them is dropped unserved. */
static void resync_ci(struct mnic_mgmt *m)
{
	uint32_t pi = m->cfg.seg->cmdq_pi;

	if (pi != m->ci)
		m->cnt.cmdq_resyncs++;
	m->ci = pi;
}

static void cmdq_enable(struct mnic_mgmt *m, uint32_t ctrl)
{
	volatile struct mnic_init_seg *s = m->cfg.seg;
	uint64_t addr = s->cmdq_addr;
	uint32_t log_size = s->cmdq_log_size;
	uint64_t bytes;

	if (ctrl != MNIC_CMDQ_CTRL_ENABLE)
		return cmdq_bad_config(m, MNIC_SITE_CMDQ_CTRL);
	if (m->cfg.dma->window_size < MNIC_DRIVER_AREA_SIZE)
		return cmdq_bad_config(m, MNIC_SITE_CMDQ_WINDOW);
	if (addr & 0xfffu)
		return cmdq_bad_config(m, MNIC_SITE_CMDQ_ALIGN);
	if (log_size > MNIC_CMDQ_MAX_LOG_SIZE)
		return cmdq_bad_config(m, MNIC_SITE_CMDQ_LOG_SIZE);
	bytes = (uint64_t)MNIC_CMDQ_ENTRY_SIZE << log_size;
	if (addr >= MNIC_DRIVER_AREA_SIZE || bytes > MNIC_DRIVER_AREA_SIZE - addr)
		return cmdq_bad_config(m, MNIC_SITE_CMDQ_RANGE);
	m->ring_addr = addr;
	m->ring_size = 1u << log_size;
	m->cmdq_state = MNIC_CMDQ_RUNNING;
	m->cnt.cmdq_enables++;
	/* A queue that was off holds no entries: whatever the host wrote to
	 * cmdq_pi meanwhile is where the new queue starts. */
	resync_ci(m);
	s->cmdq_syndrome = 0;
	s->cmdq_ci = m->ci;
	/* ci and the cleared syndrome before RUNNING: the host starts issuing
	 * at cmdq_ci as soon as it reads RUNNING. */
	hal_wmb();
	s->cmdq_status = MNIC_CMDQ_RUNNING;
}

static void cmdq_disable(struct mnic_mgmt *m)
{
	volatile struct mnic_init_seg *s = m->cfg.seg;

	m->cnt.cmdq_disables++;
	resync_ci(m);
	m->cmdq_state = MNIC_CMDQ_OFF;
	s->cmdq_ci = m->ci;
	s->cmdq_syndrome = 0;
	hal_wmb();
	s->cmdq_status = MNIC_CMDQ_OFF;
}

/* ---- mailbox chains -------------------------------------------------------- */

static uint32_t chain_blocks(uint32_t len)
{
	return len <= MNIC_CMD_INLINE_LEN ? 0u
					  : (len - MNIC_CMD_INLINE_LEN + MNIC_CMD_MBOX_DATA - 1u) /
						    MNIC_CMD_MBOX_DATA;
}

/* A mailbox may only sit in the driver area after the largest ring,
 * 8-byte aligned (mnic/cmd.h). */
static int mbox_addr_ok(uint64_t addr)
{
	return !(addr & 7u) && addr >= MNIC_CMD_MBOX_AREA &&
	       addr <= MNIC_DRIVER_AREA_SIZE - MNIC_CMD_MBOX_SIZE;
}

/* Follow block i of a chain at addr: check address, block number and
 * token, return the next address.  bad_ptr is the delivery status for a
 * bad address (input or output chain).  0 or a delivery status. */
static uint32_t chain_step(struct mnic_mgmt *m, uint64_t addr, uint32_t i, uint8_t token,
			   uint32_t bad_ptr, uint64_t *next)
{
	struct mbox_trailer t;

	if (!mbox_addr_ok(addr))
		return bad_ptr;
	if (hal_dma_read(m->cfg.dma, addr + MNIC_CMD_MBOX_DATA, &t, sizeof(t)) < 0)
		return bad_ptr;
	if (t.block_num != i)
		return MNIC_CMD_DELIV_BAD_BLOCK_NUMBER;
	if (t.token != token)
		return MNIC_CMD_DELIV_TOKEN_ERR;
	*next = t.next;
	return MNIC_CMD_DELIV_OK;
}

/* Walk a chain of exactly n blocks from first.  With dst, gather len bytes
 * (of the logical stream after the inline part) into it; with addrs, save
 * each block's address.  A chain that ends early, goes on after block n - 1,
 * or loops (a block reached twice carries the wrong number) is refused. */
static uint32_t chain_walk(struct mnic_mgmt *m, uint64_t first, uint32_t n, uint8_t token,
			   uint32_t bad_ptr, uint8_t *dst, uint32_t len, uint64_t *addrs)
{
	uint64_t addr = first, next = 0;
	uint32_t i, st;

	for (i = 0; i < n; i++) {
		if (addr == 0)
			return bad_ptr;          /* short chain */
		st = chain_step(m, addr, i, token, bad_ptr, &next);
		if (st)
			return st;
		if (dst) {
			uint32_t off = i * MNIC_CMD_MBOX_DATA;
			uint32_t chunk = len - off < MNIC_CMD_MBOX_DATA ? len - off : MNIC_CMD_MBOX_DATA;

			if (hal_dma_read(m->cfg.dma, addr, dst + off, chunk) < 0)
				return bad_ptr;
		}
		if (addrs)
			addrs[i] = addr;
		addr = next;
	}
	if (n && addr != 0)
		return bad_ptr;                  /* longer than the length says */
	return MNIC_CMD_DELIV_OK;
}

static uint32_t scatter_output(struct mnic_mgmt *m, uint64_t entry, const uint8_t *out,
			       uint32_t produced)
{
	uint8_t inl[MNIC_CMD_INLINE_LEN];
	uint32_t n = produced < MNIC_CMD_INLINE_LEN ? produced : MNIC_CMD_INLINE_LEN;
	uint32_t i, rest;

	memset(inl, 0, sizeof(inl));
	memcpy(inl, out, n);
	if (hal_dma_write(m->cfg.dma, entry + offsetof(struct mnic_cmdq_entry, out_inline), inl,
			  sizeof(inl)) < 0)
		return MNIC_CMD_DELIV_INTERNAL_ERR;
	rest = produced - n;
	for (i = 0; rest; i++) {
		uint32_t chunk = rest < MNIC_CMD_MBOX_DATA ? rest : MNIC_CMD_MBOX_DATA;

		if (hal_dma_write(m->cfg.dma, out_blocks[i], out + n, chunk) < 0)
			return MNIC_CMD_DELIV_INTERNAL_ERR;
		n += chunk;
		rest -= chunk;
	}
	return MNIC_CMD_DELIV_OK;
}

/* ---- one entry ------------------------------------------------------------- */

static void count_delivery(struct mnic_mgmt *m, uint32_t st)
{
	static const size_t field[] = {
		[MNIC_CMD_DELIV_TOKEN_ERR] = offsetof(struct mnic_mgmt_counters, deliv_token_err),
		[MNIC_CMD_DELIV_BAD_BLOCK_NUMBER] =
			offsetof(struct mnic_mgmt_counters, deliv_bad_block_num),
		[MNIC_CMD_DELIV_BAD_OUTPUT_POINTER] =
			offsetof(struct mnic_mgmt_counters, deliv_bad_out_ptr),
		[MNIC_CMD_DELIV_BAD_INPUT_POINTER] =
			offsetof(struct mnic_mgmt_counters, deliv_bad_in_ptr),
		[MNIC_CMD_DELIV_INTERNAL_ERR] = offsetof(struct mnic_mgmt_counters, deliv_internal_err),
		[MNIC_CMD_DELIV_INPUT_LEN_ERR] = offsetof(struct mnic_mgmt_counters, deliv_in_len_err),
		[MNIC_CMD_DELIV_OUTPUT_LEN_ERR] =
			offsetof(struct mnic_mgmt_counters, deliv_out_len_err),
		[MNIC_CMD_DELIV_RES_NOT_ZERO] = offsetof(struct mnic_mgmt_counters, deliv_res_not_zero),
		[MNIC_CMD_DELIV_BAD_CMD_TYPE] = offsetof(struct mnic_mgmt_counters, deliv_bad_cmd_type),
	};
	size_t off = st < sizeof(field) / sizeof(field[0]) ? field[st] : 0;

	if (st == MNIC_CMD_DELIV_OK)
		return;
	if (!off)   /* a status without its own counter (signature): internal */
		off = offsetof(struct mnic_mgmt_counters, deliv_internal_err);
	(*(uint64_t *)((uint8_t *)&m->cnt + off))++;
}

/* Check and run the entry e (read from entry address at); returns the
 * delivery status.  On OK the output has been scattered. */
static uint32_t serve_entry(struct mnic_mgmt *m, uint64_t at, const struct mnic_cmdq_entry *e)
{
	uint32_t st, in_blocks, out_blocks_n, produced, n;

	if (e->type != MNIC_CMD_TYPE_PCIE)
		return MNIC_CMD_DELIV_BAD_CMD_TYPE;
	if (e->reserved0[0] | e->reserved0[1] | e->reserved0[2] | e->reserved1)
		return MNIC_CMD_DELIV_RES_NOT_ZERO;
	if (e->in_len < sizeof(struct mnic_cmd_in_hdr) || e->in_len > MNIC_CMD_MAX_LEN)
		return MNIC_CMD_DELIV_INPUT_LEN_ERR;
	if (e->out_len < sizeof(struct mnic_cmd_out_hdr) || e->out_len > MNIC_CMD_MAX_LEN)
		return MNIC_CMD_DELIV_OUTPUT_LEN_ERR;

	/* Gather: inline part, then the input chain's data. */
	n = e->in_len < MNIC_CMD_INLINE_LEN ? e->in_len : MNIC_CMD_INLINE_LEN;
	memcpy(cmd_buf, e->in_inline, n);
	in_blocks = chain_blocks(e->in_len);
	st = chain_walk(m, in_blocks ? e->in_mbox : 0, in_blocks, e->token,
			MNIC_CMD_DELIV_BAD_INPUT_POINTER, cmd_buf + MNIC_CMD_INLINE_LEN,
			e->in_len - n, NULL);
	if (st)
		return st;
	/* The whole output chain is checked (and its addresses kept) before
	 * the command runs: a command never has effects the host cannot see. */
	out_blocks_n = chain_blocks(e->out_len);
	st = chain_walk(m, out_blocks_n ? e->out_mbox : 0, out_blocks_n, e->token,
			MNIC_CMD_DELIV_BAD_OUTPUT_POINTER, NULL, 0, out_blocks);
	if (st)
		return st;

	produced = mnic_cmd_dispatch(m, cmd_buf, e->in_len, e->out_len);
	if (produced < sizeof(struct mnic_cmd_out_hdr) || produced > e->out_len)
		return MNIC_CMD_DELIV_INTERNAL_ERR;
	return scatter_output(m, at, cmd_buf, produced);
}

static int serve_one(struct mnic_mgmt *m)
{
	uint64_t at = m->ring_addr + (uint64_t)(m->ci & (m->ring_size - 1u)) * MNIC_CMDQ_ENTRY_SIZE;
	const uint64_t own_at = at + offsetof(struct mnic_cmdq_entry, status_own);
	struct mnic_cmdq_entry e;
	uint8_t own;
	uint32_t st;

	if (hal_dma_read(m->cfg.dma, own_at, &own, 1) < 0) {
		m->cnt.deliv_internal_err++;
		return 0;
	}
	if (!(own & MNIC_CMD_OWNER_HW)) {
		m->cnt.cmdq_not_owned++;
		return 0;
	}
	/* The host wrote the entry, then (wmb) the owner bit: read the body
	 * only after seeing the bit, or we could see a stale body. */
	hal_rmb();
	if (hal_dma_read(m->cfg.dma, at, &e, sizeof(e)) < 0) {
		m->cnt.deliv_internal_err++;
		return 0;
	}
	st = serve_entry(m, at, &e);
	count_delivery(m, st);
	m->cnt.cmds_delivered++;
	/* Output (out_inline, mailboxes) is in host memory before the owner
	 * bit hands the entry back: the host reads the output once it sees
	 * status_own SW-owned. */
	hal_wmb();
	own = (uint8_t)(st << 1);
	if (hal_dma_write(m->cfg.dma, own_at, &own, 1) < 0) {
		m->cnt.deliv_internal_err++;
		return 0;
	}
	m->ci++;
	/* ci after the status: a host that polls cmdq_ci instead of the owner
	 * bit also finds the entry complete. */
	hal_wmb();
	m->cfg.seg->cmdq_ci = m->ci;
	return 1;
}

unsigned mnic_cmdq_service(struct mnic_mgmt *m)
{
	volatile struct mnic_init_seg *s = m->cfg.seg;
	uint32_t ctrl = s->cmdq_ctrl;
	unsigned served = 0;

	if (ctrl == 0) {
		if (m->cmdq_state != MNIC_CMDQ_OFF)
			cmdq_disable(m);
		return 0;
	}
	if (m->cmdq_state == MNIC_CMDQ_OFF)
		cmdq_enable(m, ctrl);
	if (m->cmdq_state != MNIC_CMDQ_RUNNING)
		return 0;
	if (s->cmdq_pi - m->ci > m->ring_size)
		m->cnt.cmdq_pi_ahead++;
	/* At most one ring per poll, so the loop stays responsive; a host that
	 * keeps the ring full is served again at the fast poll period. */
	while (served < m->ring_size && s->cmdq_pi != m->ci) {
		/* pi first, then the entry it announces (host: owner, wmb, pi). */
		hal_rmb();
		if (!serve_one(m))
			break;
		served++;
	}
	return served;
}
