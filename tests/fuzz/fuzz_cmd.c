/* libFuzzer: the host interface (mgmt/) with a hostile host.
 *
 * The first input byte picks a mode; the rest is the material:
 *
 *   0  one logical command: bytes [1, 5) are out_len (little-endian, taken
 *      modulo MNIC_CMD_MAX_LEN + 1), the rest is the input, handed to
 *      mnic_cmd_dispatch
 *   1  a sequence: [u16 in_len][u16 out_len][in_len bytes] chunks, each
 *      dispatched in turn (create, then modify, dump, restore ...)
 *   2  raw ring and mailbox bytes: the material is copied over the driver
 *      area from window address 0 (ring, mailboxes), the queue is enabled
 *      with log_size from the first byte, then cmdq_pi set from the next
 *      two, and the transport serves what it finds
 *
 * Every input starts from the same state: a fresh engine (small pools)
 * holding, in MNIC_CTX_MGMT, a PD, an MR, a CQ and a QP made through the
 * engine calls, so that commands naming handle 0x10000 / QPN 0x1000 /
 * lkey 0x1 reach the handlers; and context 1 (ALLOC_CONTEXT UA_AT, the
 * upper half of the user area) with the same four objects (handle
 * 0x10001 / QPN 0x1001 / lkey 0x101), so that a header's ctx field (byte
 * 4) of 1 issues as a tenant and names its own objects or MGMT's.
 * Invariants beyond the sanitizers: the dispatcher always answers with
 * 8 <= produced <= out_len; afterwards QUERY_DEVICE still succeeds with
 * the object counts the engine really has (for MGMT: all, for context 1:
 * its own); every object refers only to objects of its own context, and
 * a context's rings and MRs lie in its range (none left once it is gone).
 */
#include <stdint.h>
#include <string.h>

#include "mgmt/mgmt.h"
#include "rocev2/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define WINDOW (MNIC_DRIVER_AREA_SIZE + 256u * 1024u)
#define USER MNIC_USER_AREA_OFFSET
#define TENANT_UA (USER + 128u * 1024u)   /* context 1: [TENANT_UA, + 128 KiB) */
#define TENANT_UA_SIZE (128u * 1024u)

static uint8_t bar[MNIC_DMA_WINDOW_OFFSET + WINDOW] __attribute__((aligned(64)));
static uint8_t buf[MNIC_CMD_MAX_LEN] __attribute__((aligned(8)));
static struct rocev2 eng;
static struct hal_dma dma;
static struct mnic_mgmt mgmt;

static int dummy_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	(void)frame;
	if (len > ROCEV2_TX_MAX)
		__builtin_trap();
	return 0;
}

static uint64_t dummy_now(void *ctx)
{
	(void)ctx;
	return 1000000u;
}

/* A PD, an MR, a CQ and a QP for the engine's current owner, at base. */
static void objects_at(uint64_t base)
{
	struct rocev2_queue_attr cq = { .ring_addr = base, .dbrec_addr = base + 0x800, .size = 64 };
	struct rocev2_qp_init_attr qa = {
		.srq = ROCEV2_NO_SRQ, .sq = { base + 0x1000, base + 0x808, 8 },
		.rq = { base + 0x2000, base + 0x810, 8 }, .max_send_sge = 2, .max_recv_sge = 2,
	};
	uint32_t lkey, rkey, qpn;

	if (rocev2_alloc_pd(&eng, &qa.pd) ||
	    rocev2_reg_mr(&eng, qa.pd, base + 0x10000, 0x10000,
			  ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_WRITE, &lkey, &rkey) ||
	    rocev2_create_cq(&eng, &cq, &qa.send_cq))
		__builtin_trap();
	qa.recv_cq = qa.send_cq;
	if (rocev2_create_qp(&eng, &qa, &qpn))
		__builtin_trap();
}

static void fresh(void)
{
	struct rocev2_env env = { .tx = dummy_tx, .now_ns = dummy_now, 
				  .dma = &dma, .mac = { 2, 0, 0, 0, 0, 1 }, .ipv4 = 0x0a000001 };
	struct mnic_cmd_alloc_context_in a = { { MNIC_CMD_ALLOC_CONTEXT, MNIC_CTX_UA_AT, 0, 0 },
					       TENANT_UA, TENANT_UA_SIZE, 7, 0 };
	struct mnic_mgmt_cfg cfg;

	memset(bar, 0, sizeof(bar));
	hal_dma_window_init(&dma, bar + MNIC_DMA_WINDOW_OFFSET, WINDOW);
	if (rocev2_init(&eng, &env))
		__builtin_trap();
	objects_at(USER);
	memset(&cfg, 0, sizeof(cfg));
	cfg.seg = (volatile struct mnic_init_seg *)bar;
	cfg.db = (volatile struct mnic_db_page *)(bar + MNIC_DB_PAGE_OFFSET);
	cfg.dma = &dma;
	cfg.engine = &eng;
	cfg.board_id = 3;
	cfg.board_name = "fuzz";
	mnic_mgmt_init(&mgmt, &cfg);
	memcpy(buf, &a, sizeof(a));
	if (mnic_cmd_dispatch(&mgmt, buf, sizeof(a), sizeof(struct mnic_cmd_alloc_context_out)) !=
		    sizeof(struct mnic_cmd_alloc_context_out) ||
	    buf[0] != MNIC_CMD_STAT_OK || rocev2_create_as(&eng, 1))
		__builtin_trap();
	objects_at(TENANT_UA);
	(void)rocev2_create_as(&eng, MNIC_CTX_MGMT);
}

static void dispatch(uint32_t in_len, uint32_t out_len)
{
	uint32_t produced;

	if (in_len < 8 || out_len < 8)
		return;
	produced = mnic_cmd_dispatch(&mgmt, buf, in_len, out_len);
	if (produced < 8 || produced > out_len)
		__builtin_trap();
}

/* QUERY_DEVICE as ctx: the whole answer when OK, the header alone when not. */
static struct mnic_cmd_query_device_out query_device(uint16_t ctx)
{
	struct mnic_cmd_simple_in in = { { MNIC_CMD_QUERY_DEVICE, 0, ctx, 0 } };
	struct mnic_cmd_query_device_out o;
	uint32_t produced;

	memcpy(buf, &in, sizeof(in));
	produced = mnic_cmd_dispatch(&mgmt, buf, sizeof(in), sizeof(o));
	memset(&o, 0, sizeof(o));
	memcpy(&o, buf, sizeof(o));
	if (produced != (o.hdr.status == MNIC_CMD_STAT_OK ? sizeof(o) : sizeof(o.hdr)))
		__builtin_trap();
	return o;
}

/* [addr, addr + len) in the range of owner (which must still exist). */
static void owned_range(uint16_t owner, uint64_t addr, uint64_t len)
{
	if (!mnic_ctx_range_ok(&mgmt, owner, addr, len))
		__builtin_trap();
}

/* Ownership: references stay inside a context, memory inside its range. */
static void owners_consistent(void)
{
	uint32_t i;

	for (i = 0; i < ROCEV2_MAX_MR; i++)
		if (eng.mrs[i].in_use) {
			if (eng.pds[eng.mrs[i].pd].owner != eng.mrs[i].owner)
				__builtin_trap();
			owned_range(eng.mrs[i].owner, eng.mrs[i].addr, eng.mrs[i].length);
		}
	for (i = 0; i < ROCEV2_MAX_CQ; i++)
		if (eng.cqs[i].in_use)
			owned_range(eng.cqs[i].owner, eng.cqs[i].q.ring_addr,
				    (uint64_t)eng.cqs[i].q.size * MNIC_CQE_SIZE);
	for (i = 0; i < ROCEV2_MAX_SRQ; i++)
		if (eng.srqs[i].in_use && eng.pds[eng.srqs[i].pd].owner != eng.srqs[i].owner)
			__builtin_trap();
	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		const struct rocev2_qp *qp = &eng.qps[i];

		if (!qp->in_use)
			continue;
		if (eng.pds[qp->pd].owner != qp->owner || eng.cqs[qp->scq].owner != qp->owner ||
		    eng.cqs[qp->rcq].owner != qp->owner ||
		    (qp->srq != ROCEV2_NO_SRQ && eng.srqs[qp->srq].owner != qp->owner))
			__builtin_trap();
		if (qp->sq.q.size)
			owned_range(qp->owner, qp->sq.q.ring_addr,
				    (uint64_t)qp->sq.q.size * MNIC_WQE_SIZE);
	}
}

static void still_answers(void)
{
	struct mnic_cmd_query_device_out o = query_device(MNIC_CTX_MGMT);
	uint32_t n[ROCEV2_OBJ_LIVE_NUM];

	if (o.hdr.status != MNIC_CMD_STAT_OK || o.n_qp != eng.n_qp || o.n_pd != eng.n_pd ||
	    o.n_mr != eng.n_mr || o.n_cq != eng.n_cq || o.n_srq != eng.n_srq)
		__builtin_trap();
	/* The tenant, if it still exists, sees exactly its own objects. */
	o = query_device(1);
	rocev2_owner_objects(&eng, 1, n);
	if (mgmt.ctx[1].in_use
		    ? o.hdr.status != MNIC_CMD_STAT_OK || o.ctx != 1 || o.n_qp != n[ROCEV2_OBJ_QP] ||
			      o.n_pd != n[ROCEV2_OBJ_PD] || o.n_mr != n[ROCEV2_OBJ_MR] ||
			      o.n_cq != n[ROCEV2_OBJ_CQ] || o.n_srq != n[ROCEV2_OBJ_SRQ]
		    : o.hdr.status != MNIC_CMD_STAT_BAD_PARAM)
		__builtin_trap();
	owners_consistent();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	volatile struct mnic_init_seg *seg = (volatile struct mnic_init_seg *)bar;
	uint32_t out_len;
	size_t pos;

	if (size < 1)
		return 0;
	fresh();
	switch (data[0] % 3u) {
	case 0:
		if (size < 5)
			return 0;
		memcpy(&out_len, data + 1, 4);
		out_len %= MNIC_CMD_MAX_LEN + 1u;
		memcpy(buf, data + 5, size - 5);
		dispatch((uint32_t)(size - 5), out_len);
		break;
	case 1:
		for (pos = 1; pos + 4 <= size;) {
			uint32_t in_len = (uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8;

			out_len = (uint32_t)data[pos + 2] | (uint32_t)data[pos + 3] << 8;
			pos += 4;
			if (in_len > size - pos)
				in_len = (uint32_t)(size - pos);
			memcpy(buf, data + pos, in_len);
			pos += in_len;
			dispatch(in_len, out_len);
			/* The data path runs between commands, as on the loop. */
			((volatile struct mnic_db_page *)(bar + MNIC_DB_PAGE_OFFSET))->db_seq++;
			(void)mnic_db_service(&mgmt);
			(void)rocev2_poll(&eng, 16);
		}
		break;
	default:
		if (size < 4)
			return 0;
		memcpy(bar + MNIC_DMA_WINDOW_OFFSET, data + 4,
		       size - 4 < MNIC_DRIVER_AREA_SIZE ? size - 4 : MNIC_DRIVER_AREA_SIZE);
		seg->cmdq_addr = 0;
		seg->cmdq_log_size = data[1] % 8u;   /* 7: BAD_CONFIG */
		seg->cmdq_ctrl = MNIC_CMDQ_CTRL_ENABLE;
		/* enabled first: a queue starts at the host's pi (ci = pi = 0 here),
		 * so a doorbell rung before the enable would serve nothing */
		(void)mnic_cmdq_service(&mgmt);
		seg->cmdq_pi = (uint32_t)data[2] | (uint32_t)data[3] << 8;
		(void)mnic_cmdq_service(&mgmt);
		(void)mnic_cmdq_service(&mgmt);
		if (mgmt.cmdq_state == MNIC_CMDQ_RUNNING && seg->cmdq_ci - 0u > 2u * 64u)
			__builtin_trap();   /* at most one ring per service call */
		break;
	}
	still_answers();
	return 0;
}
