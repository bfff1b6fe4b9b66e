/* Command dispatcher and handlers (mnic/cmd.h, docs/host-interface.md).
 *
 * One table row per opcode: {opcode, name, input and output size, op_mod
 * limit, reserved byte ranges, handle fields, handler}.  Before a handler
 * runs, the dispatcher has checked, in this order (each refusal a status,
 * a syndrome MNIC_SYND(errno, site) and a counter):
 *   opcode known                  BAD_OP
 *   in_len  >= the input struct   BAD_INPUT_LEN
 *   out_len >= the output struct  BAD_OUTPUT_LEN
 *   reserved fields zero          BAD_PARAM
 *   op_mod defined                BAD_PARAM
 *   handles name live objects     BAD_RES
 * Handlers check addresses (user area), call the engine, and map its
 * -HAL_E* error through err_status[].  The engine changes nothing when it
 * refuses, so no handler has anything to undo except DUMP_CONTEXT.
 *
 * Handlers read their whole input into locals before writing output: the
 * output is written over the input in the one staging buffer (mgmt.h).
 */
#include <stddef.h>
#include <string.h>

#include "hal/errno.h"
#include "fwflash.h"
#include "mgmt.h"
#include "mnic/cmd_names.h"
#include "rocev2/dump.h"
#include "rocev2/rocev2.h"

struct cmd_call {
	uint8_t *buf;
	uint32_t in_len, out_len;
	uint32_t produced;             /* output bytes, header included */
	uint16_t opcode, op_mod;
	uint8_t status;
	uint32_t syndrome;
};

typedef int (*cmd_fn)(struct mnic_mgmt *m, struct cmd_call *c);

/* H_QP_BY_QPN: a QPN when op_mod is MNIC_QUERY_QP_BY_QPN, a slot cursor
 * otherwise (QUERY_QP op_mod NEXT). */
enum handle_kind { H_NONE, H_PD, H_CQ, H_SRQ, H_SRQ_OPT, H_QP, H_MR, H_QP_BY_QPN };

struct cmd_range {
	uint16_t off, len;
};
struct cmd_handle {
	uint16_t off;
	uint8_t kind;                  /* enum handle_kind */
};

struct cmd_desc {
	uint16_t opcode;
	const char *name;
	uint32_t in_len, out_len;      /* at least */
	uint16_t max_op_mod;
	struct cmd_range rsvd[3];      /* reserved-zero bytes beyond in_hdr.reserved */
	struct cmd_handle handles[4];
	cmd_fn fn;
	int (*obj_fn)(struct rocev2 *e, uint32_t handle);   /* destroy-style commands */
};

/* ---- errors ------------------------------------------------------------------ */

static const struct {
	int err;
	uint8_t status;
} err_status[] = {
	{ HAL_EINVAL, MNIC_CMD_STAT_BAD_PARAM },     /* bad value, state transition */
	{ HAL_ERANGE, MNIC_CMD_STAT_BAD_PARAM },     /* record/image version */
	{ HAL_EFAULT, MNIC_CMD_STAT_BAD_PARAM },     /* memory outside the window */
	{ HAL_EIO, MNIC_CMD_STAT_BAD_PARAM },        /* image CRC mismatch */
	{ HAL_EACCES, MNIC_CMD_STAT_BAD_PARAM },
	{ HAL_EEXIST, MNIC_CMD_STAT_BAD_INDEX },     /* restore: handle/MRN/QPN taken */
	{ HAL_EBUSY, MNIC_CMD_STAT_RES_BUSY },       /* still referenced; refill twice */
	{ HAL_ENOMEM, MNIC_CMD_STAT_NO_RESOURCES },  /* pool exhausted */
	{ HAL_EAGAIN, MNIC_CMD_STAT_NO_RESOURCES },
	{ HAL_ENOSPC, MNIC_CMD_STAT_EXCEED_LIM },
	{ HAL_E2BIG, MNIC_CMD_STAT_EXCEED_LIM },
};

static int fail(struct cmd_call *c, uint8_t status, int err, uint32_t site)
{
	c->status = status;
	c->syndrome = MNIC_SYND(err, site);
	return -1;
}

static int engine_fail(struct mnic_mgmt *m, struct cmd_call *c, int rc)
{
	uint8_t status = MNIC_CMD_STAT_INT_ERR;
	int err = rc < 0 ? -rc : rc;
	size_t i;

	for (i = 0; i < sizeof(err_status) / sizeof(err_status[0]); i++)
		if (err_status[i].err == err)
			status = err_status[i].status;
	m->cnt.engine_errors++;
	return fail(c, status, err, MNIC_SITE_ENGINE);
}

/* ---- helpers ----------------------------------------------------------------- */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t i = 0;

	for (; src && i + 1 < cap && src[i]; i++)
		dst[i] = src[i];
	for (; i < cap; i++)
		dst[i] = '\0';
}

int mnic_user_range_ok(const struct mnic_mgmt *m, uint64_t addr, uint64_t len)
{
	uint64_t size = m->cfg.dma->window_size;

	return addr >= MNIC_USER_AREA_OFFSET && addr <= size && len <= size - addr;
}

static int queue_ok(struct mnic_mgmt *m, struct cmd_call *c, uint64_t ring, uint64_t dbrec,
		    uint32_t size, uint32_t entry_size)
{
	if (size == 0)
		return 0;               /* no queue: the engine decides if that is allowed */
	if (!mnic_user_range_ok(m, ring, (uint64_t)size * entry_size)) {
		m->cnt.refused_address++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_RING_ADDR);
	}
	if (!mnic_user_range_ok(m, dbrec, sizeof(struct mnic_dbrec))) {
		m->cnt.refused_address++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_DBREC_ADDR);
	}
	return 0;
}

static int mr_range_ok(struct mnic_mgmt *m, struct cmd_call *c, uint64_t addr, uint64_t len)
{
	if (mnic_user_range_ok(m, addr, len))
		return 0;
	m->cnt.refused_address++;
	return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_MR_ADDR);
}

static struct rocev2_queue_attr queue_attr(const struct mnic_queue_desc *q)
{
	struct rocev2_queue_attr a = { q->ring_addr, q->dbrec_addr, q->size };

	return a;
}

static void put_handle_out(struct cmd_call *c, uint32_t handle)
{
	struct mnic_cmd_handle_out o;

	memset(&o, 0, sizeof(o));
	o.handle = handle;
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
}

/* ---- device ---------------------------------------------------------------- */

static int h_nop(struct mnic_mgmt *m, struct cmd_call *c)
{
	(void)m;
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

static int h_query_device(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct rocev2_device_info info;
	struct mnic_cmd_query_device_out o;

	rocev2_query_device(m->cfg.engine, &info);
	memset(&o, 0, sizeof(o));
	o.fw_version = MNIC_FW_VERSION_CUR;
	o.cmdif_rev = MNIC_CMDIF_REV;
	o.board_id = m->cfg.board_id;
	o.max_qp = ROCEV2_MAX_QP;
	o.max_mr = ROCEV2_MAX_MR;
	o.max_pd = ROCEV2_MAX_PD;
	o.max_cq = ROCEV2_MAX_CQ;
	o.max_srq = ROCEV2_MAX_SRQ;
	o.max_sge = MNIC_MAX_SGE;
	o.max_qp_wr = ROCEV2_MAX_QUEUE_SIZE;
	o.max_cqe = ROCEV2_MAX_QUEUE_SIZE;
	o.max_rd_atomic = ROCEV2_MAX_RD_ATOMIC;
	o.max_msg = ROCEV2_MAX_MSG;
	o.ipv4 = info.ipv4;
	memcpy(o.mac, info.mac, sizeof(o.mac));
	o.window_size = m->cfg.dma->window_size;
	o.user_area_offset = MNIC_USER_AREA_OFFSET;
	o.image_max = MNIC_CMD_MAX_LEN - (uint32_t)sizeof(struct mnic_cmd_dump_out);
	o.pause_timeout_ms = (uint32_t)(info.pause_timeout_ns / 1000000u);
	o.n_pd = info.objects[ROCEV2_OBJ_PD];
	o.n_mr = info.objects[ROCEV2_OBJ_MR];
	o.n_cq = info.objects[ROCEV2_OBJ_CQ];
	o.n_srq = info.objects[ROCEV2_OBJ_SRQ];
	o.n_qp = info.objects[ROCEV2_OBJ_QP];
	o.flags = (info.stopped ? MNIC_DEV_F_STOPPED : 0u) |
		  (info.migration ? MNIC_DEV_F_MIGRATION : 0u);
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
	return 0;
}

/* Firmware update commands live in mgmt/fwflash.c (issue #8). */
static int h_fw(struct mnic_mgmt *m, struct cmd_call *c)
{
	return mnic_fwflash_cmd(m, c->opcode, c->op_mod, c->buf, c->in_len, c->out_len,
				&c->produced, &c->status, &c->syndrome);
}

static int h_fw_query(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_fw_query_out o;

	if (c->op_mod == MNIC_FW_QUERY_SLOTS)
		return h_fw(m, c);
	memset(&o, 0, sizeof(o));
	o.fw_version = MNIC_FW_VERSION_CUR;
	o.board_id = m->cfg.board_id;
	copy_str(o.board_name, sizeof(o.board_name), m->cfg.board_name);
#ifdef __VERSION__
	copy_str(o.build, sizeof(o.build), "cc " __VERSION__);
#else
	copy_str(o.build, sizeof(o.build), "cc unknown");
#endif
	o.uptime_ns = rocev2_clock_ns(m->cfg.engine) - m->cfg.boot_ns;
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
	return 0;
}

/* PORT counters: per Ethernet port, then the DMA window. */
static const struct {
	const char *name;
	size_t off;
} eth_stats[] = {
	{ "tx_frames", offsetof(struct hal_eth_stats, tx_frames) },
	{ "tx_bytes", offsetof(struct hal_eth_stats, tx_bytes) },
	{ "tx_busy", offsetof(struct hal_eth_stats, tx_busy) },
	{ "tx_too_long", offsetof(struct hal_eth_stats, tx_too_long) },
	{ "rx_frames", offsetof(struct hal_eth_stats, rx_frames) },
	{ "rx_bytes", offsetof(struct hal_eth_stats, rx_bytes) },
	{ "rx_too_long", offsetof(struct hal_eth_stats, rx_too_long) },
	{ "rx_dropped", offsetof(struct hal_eth_stats, rx_dropped) },
}, dma_stats[] = {
	{ "dma_reads", offsetof(struct hal_dma_stats, reads) },
	{ "dma_writes", offsetof(struct hal_dma_stats, writes) },
	{ "dma_read_bytes", offsetof(struct hal_dma_stats, read_bytes) },
	{ "dma_write_bytes", offsetof(struct hal_dma_stats, write_bytes) },
	{ "dma_out_of_window", offsetof(struct hal_dma_stats, out_of_window) },
};
#define N_ETH_STATS (sizeof(eth_stats) / sizeof(eth_stats[0]))
#define N_DMA_STATS (sizeof(dma_stats) / sizeof(dma_stats[0]))

static uint32_t counters_total(const struct mnic_mgmt *m, uint16_t op_mod)
{
	switch (op_mod) {
	case MNIC_COUNTERS_ENGINE:
		return ROCEV2_NUM_COUNTERS;
	case MNIC_COUNTERS_MGMT:
		return MNIC_MGMT_NUM_COUNTERS;
	default:
		return m->cfg.n_eth * N_ETH_STATS + N_DMA_STATS;
	}
}

static void counter_at(const struct mnic_mgmt *m, uint16_t op_mod, uint32_t i, struct mnic_counter *k)
{
	memset(k, 0, sizeof(*k));
	if (op_mod == MNIC_COUNTERS_ENGINE) {
		copy_str(k->name, sizeof(k->name), rocev2_counter_names[i]);
		k->value = ((const uint64_t *)rocev2_counters(m->cfg.engine))[i];
	} else if (op_mod == MNIC_COUNTERS_MGMT) {
		copy_str(k->name, sizeof(k->name), mnic_mgmt_counter_names[i]);
		k->value = ((const uint64_t *)&m->cnt)[i];
	} else if (i < m->cfg.n_eth * N_ETH_STATS) {
		const struct hal_eth *eth = m->cfg.eth[i / N_ETH_STATS];
		uint32_t s = i % N_ETH_STATS;

		k->name[0] = 'e';
		k->name[1] = 't';
		k->name[2] = 'h';
		k->name[3] = (char)('0' + i / N_ETH_STATS);
		k->name[4] = '_';
		copy_str(k->name + 5, sizeof(k->name) - 5u, eth_stats[s].name);
		k->value = eth ? *(const uint64_t *)((const uint8_t *)&eth->stats + eth_stats[s].off) : 0;
	} else {
		i -= m->cfg.n_eth * N_ETH_STATS;
		copy_str(k->name, sizeof(k->name), dma_stats[i].name);
		k->value = *(const uint64_t *)((const uint8_t *)&m->cfg.dma->stats + dma_stats[i].off);
	}
}

static int h_query_counters(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_query_counters_out o;
	uint32_t i, room = (c->out_len - (uint32_t)sizeof(o)) / (uint32_t)sizeof(struct mnic_counter);

	memset(&o, 0, sizeof(o));
	o.total = counters_total(m, c->op_mod);
	o.count = o.total < room ? o.total : room;
	for (i = 0; i < o.count; i++) {
		struct mnic_counter k;

		counter_at(m, c->op_mod, i, &k);
		memcpy(c->buf + sizeof(o) + (size_t)i * sizeof(k), &k, sizeof(k));
	}
	memcpy(c->buf, &o, sizeof(o));
	c->produced = (uint32_t)(sizeof(o) + (size_t)o.count * sizeof(struct mnic_counter));
	return 0;
}

static int h_get_events(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_get_events_out o;
	uint32_t room = (c->out_len - (uint32_t)sizeof(o)) / (uint32_t)sizeof(struct mnic_event);
	struct rocev2_event ev;

	memset(&o, 0, sizeof(o));
	while (o.count < room && rocev2_get_event(m->cfg.engine, &ev) == 0) {
		struct mnic_event w = { ev.type, ev.handle };

		memcpy(c->buf + sizeof(o) + (size_t)o.count * sizeof(w), &w, sizeof(w));
		o.count++;
	}
	memcpy(c->buf, &o, sizeof(o));
	c->produced = (uint32_t)(sizeof(o) + (size_t)o.count * sizeof(struct mnic_event));
	return 0;
}

/* ---- objects ----------------------------------------------------------------- */

static int h_alloc_pd(struct mnic_mgmt *m, struct cmd_call *c)
{
	uint32_t pd;
	int rc = rocev2_alloc_pd(m->cfg.engine, &pd);

	if (rc)
		return engine_fail(m, c, rc);
	put_handle_out(c, pd);
	return 0;
}

/* DEALLOC_PD, DEREG_MR, DESTROY_CQ/SRQ/QP: the table names the call. */
static int h_handle(struct mnic_mgmt *m, struct cmd_call *c);

static int h_reg_mr(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_reg_mr_in in;
	struct mnic_cmd_reg_mr_out o;
	uint32_t lkey, rkey;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (mr_range_ok(m, c, in.addr, in.length))
		return -1;
	rc = rocev2_reg_mr(m->cfg.engine, in.pd, in.addr, in.length, in.access, &lkey, &rkey);
	if (rc)
		return engine_fail(m, c, rc);
	memset(&o, 0, sizeof(o));
	o.lkey = lkey;
	o.rkey = rkey;
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
	return 0;
}

static int h_create_cq(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_create_cq_in in;
	struct rocev2_queue_attr q;
	uint32_t cq;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (queue_ok(m, c, in.q.ring_addr, in.q.dbrec_addr, in.q.size, MNIC_CQE_SIZE))
		return -1;
	q = queue_attr(&in.q);
	rc = rocev2_create_cq(m->cfg.engine, &q, &cq);
	if (rc)
		return engine_fail(m, c, rc);
	put_handle_out(c, cq);
	return 0;
}

static int h_create_srq(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_create_srq_in in;
	struct rocev2_srq_attr a;
	uint32_t srq;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (queue_ok(m, c, in.q.ring_addr, in.q.dbrec_addr, in.q.size, MNIC_WQE_SIZE))
		return -1;
	memset(&a, 0, sizeof(a));
	a.q = queue_attr(&in.q);
	a.max_sge = in.max_sge;
	a.srq_limit = in.srq_limit;
	rc = rocev2_create_srq(m->cfg.engine, in.pd, &a, &srq);
	if (rc)
		return engine_fail(m, c, rc);
	put_handle_out(c, srq);
	return 0;
}

static int h_modify_srq(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_modify_srq_in in;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	rc = rocev2_modify_srq_limit(m->cfg.engine, in.srq, in.srq_limit);
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

static int h_create_qp(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_create_qp_in in;
	struct rocev2_qp_init_attr a;
	uint32_t qpn;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (queue_ok(m, c, in.sq.ring_addr, in.sq.dbrec_addr, in.sq.size, MNIC_WQE_SIZE) ||
	    queue_ok(m, c, in.rq.ring_addr, in.rq.dbrec_addr, in.rq.size, MNIC_WQE_SIZE))
		return -1;
	memset(&a, 0, sizeof(a));
	a.pd = in.pd;
	a.send_cq = in.send_cq;
	a.recv_cq = in.recv_cq;
	a.srq = in.srq == MNIC_NO_SRQ ? ROCEV2_NO_SRQ : in.srq;
	a.sq = queue_attr(&in.sq);
	a.rq = queue_attr(&in.rq);
	a.max_send_sge = in.max_send_sge;
	a.max_recv_sge = in.max_recv_sge;
	a.sq_sig_all = in.sq_sig_all != 0;
	rc = rocev2_create_qp(m->cfg.engine, &a, &qpn);
	if (rc)
		return engine_fail(m, c, rc);
	put_handle_out(c, qpn);
	return 0;
}

static int h_modify_qp(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_modify_qp_in in;
	struct rocev2_qp_attr a;
	uint32_t flags;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	/* Live: the dispatcher checked. */
	if (rocev2_qp_mig_flags(m->cfg.engine, in.qpn, &flags) == 0 &&
	    (flags & ROCEV2_QP_MIG_STOPPED)) {
		/* Its state is in an image (or comes from one): changing it now
		 * would make source and target disagree.  RESUME or ABORT first. */
		m->cnt.refused_stopped++;
		return fail(c, MNIC_CMD_STAT_BAD_RES_STATE, HAL_EBUSY, MNIC_SITE_QP_STOPPED);
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = in.attr.qp_state;
	a.path_mtu = in.attr.path_mtu;
	a.qp_access_flags = in.attr.qp_access_flags;
	a.rq_psn = in.attr.rq_psn;
	a.sq_psn = in.attr.sq_psn;
	a.dest_qp_num = in.attr.dest_qp_num;
	memcpy(a.av.dmac, in.attr.dmac, sizeof(a.av.dmac));
	a.av.ttl = in.attr.ttl;
	a.av.tos = in.attr.tos;
	a.av.dip = in.attr.dip;
	a.timeout = in.attr.timeout;
	a.retry_cnt = in.attr.retry_cnt;
	a.rnr_retry = in.attr.rnr_retry;
	a.min_rnr_timer = in.attr.min_rnr_timer;
	a.max_rd_atomic = in.attr.max_rd_atomic;
	a.max_dest_rd_atomic = in.attr.max_dest_rd_atomic;
	a.pkey_index = in.attr.pkey_index;
	rc = rocev2_modify_qp(m->cfg.engine, in.qpn, &a, in.attr_mask);
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

static int h_query_qp(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_handle_in in;
	struct mnic_cmd_query_qp_out o;
	struct rocev2_qp_attr a;
	uint32_t flags;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	/* `mnicctl qp list`: the first live QP at or after the slot of
	 * in.handle; its QPN goes in the reply's reserved word. */
	if (c->op_mod == MNIC_QUERY_QP_NEXT &&
	    rocev2_obj_next(m->cfg.engine, ROCEV2_OBJ_QP, in.handle, &in.handle) != 0)
		return fail(c, MNIC_CMD_STAT_BAD_RES, HAL_ENXIO, MNIC_SITE_QP);
	rc = rocev2_query_qp(m->cfg.engine, in.handle, &a);
	if (rc)
		return engine_fail(m, c, rc);
	memset(&o, 0, sizeof(o));
	o.attr.qp_state = a.qp_state;
	o.attr.cur_qp_state = a.cur_qp_state;
	o.attr.path_mtu = a.path_mtu;
	o.attr.qp_access_flags = a.qp_access_flags;
	o.attr.rq_psn = a.rq_psn;
	o.attr.sq_psn = a.sq_psn;
	o.attr.dest_qp_num = a.dest_qp_num;
	o.attr.dip = a.av.dip;
	memcpy(o.attr.dmac, a.av.dmac, sizeof(o.attr.dmac));
	o.attr.ttl = a.av.ttl;
	o.attr.tos = a.av.tos;
	o.attr.timeout = a.timeout;
	o.attr.retry_cnt = a.retry_cnt;
	o.attr.rnr_retry = a.rnr_retry;
	o.attr.min_rnr_timer = a.min_rnr_timer;
	o.attr.max_rd_atomic = a.max_rd_atomic;
	o.attr.max_dest_rd_atomic = a.max_dest_rd_atomic;
	o.attr.pkey_index = a.pkey_index;
	if (c->op_mod == MNIC_QUERY_QP_NEXT)
		o.reserved = in.handle;
	if (rocev2_qp_mig_flags(m->cfg.engine, in.handle, &flags) == 0)
		o.mig_flags = (flags & ROCEV2_QP_MIG_STOPPED ? MNIC_QP_F_STOPPED : 0u) |
			      (flags & ROCEV2_QP_MIG_PAUSED ? MNIC_QP_F_PAUSED : 0u) |
			      (flags & ROCEV2_QP_MIG_HAS_KEY ? MNIC_QP_F_HAS_KEY : 0u);
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
	return 0;
}

static int h_set_qp_mig_key(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_set_qp_mig_key_in in;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	rc = rocev2_set_mig_key(m->cfg.engine, in.qpn, in.key);
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

/* ---- migration ----------------------------------------------------------------- */

static int h_dump_context(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct rocev2 *e = m->cfg.engine;
	struct mnic_cmd_dump_out o;
	struct rocev2_dump_stats st;
	size_t len = 0;
	int was_stopped = rocev2_context_stopped(e), rc;
	unsigned i;

	memset(&st, 0, sizeof(st));
	rc = rocev2_dump_context(e, c->buf + sizeof(o), c->out_len - sizeof(o), &len, &st);
	if (rc && !was_stopped)
		(void)rocev2_abort_dump(e);   /* roll back: QPs resume in place */
	memset(&o, 0, sizeof(o));
	_Static_assert(sizeof(o.objects) / sizeof(o.objects[0]) == ROCEV2_OBJ_NUM &&
		       sizeof(o.bytes) / sizeof(o.bytes[0]) == ROCEV2_OBJ_NUM, "dump stats");
	for (i = 0; i < ROCEV2_OBJ_NUM; i++) {
		o.objects[i] = st.objects[i];
		o.bytes[i] = st.bytes[i];
	}
	o.image_len = st.total;
	memcpy(c->buf, &o, sizeof(o));
	if (rc == -HAL_ENOSPC) {
		/* The host learns the size it needs (image_len) and asks again. */
		m->cnt.dump_too_small++;
		c->produced = sizeof(o);
		return fail(c, MNIC_CMD_STAT_BAD_OUTPUT_LEN, HAL_ENOSPC, MNIC_SITE_DUMP_SPACE);
	}
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = (uint32_t)(sizeof(o) + len);
	return 0;
}

/* Addresses inside a record (offsets: docs/migration-image.md) must lie in
 * the user area, as for the commands that create the objects. */
static int record_addrs_ok(struct mnic_mgmt *m, struct cmd_call *c, uint32_t type,
			   const uint8_t *p, size_t len)
{
	switch (type) {
	case ROCEV2_OBJ_MR:
		if (len >= ROCEV2_DUMP_MR_LEN)
			return mr_range_ok(m, c, get64(p + 8), get64(p + 16));
		return 0;
	case ROCEV2_OBJ_CQ:
		if (len >= ROCEV2_DUMP_CQ_LEN)
			return queue_ok(m, c, get64(p + 4), get64(p + 12), get32(p + 20), MNIC_CQE_SIZE);
		return 0;
	case ROCEV2_OBJ_SRQ:
		if (len >= ROCEV2_DUMP_SRQ_LEN)
			return queue_ok(m, c, get64(p + 8), get64(p + 16), get32(p + 24), MNIC_WQE_SIZE);
		return 0;
	case ROCEV2_OBJ_QP:
		if (len >= ROCEV2_DUMP_QP_MIN_LEN)
			return queue_ok(m, c, get64(p + 20), get64(p + 28), get32(p + 36), MNIC_WQE_SIZE) ||
			       queue_ok(m, c, get64(p + 48), get64(p + 56), get32(p + 64), MNIC_WQE_SIZE);
		return 0;
	default:
		return 0;
	}
}

typedef int (*restore_fn)(struct rocev2 *e, const void *payload, size_t len);

/* Which record types each op_mod takes, and the call for each. */
static const restore_fn restore_calls[MNIC_RESTORE_IMAGE][ROCEV2_OBJ_LIVE_NUM] = {
	[MNIC_RESTORE_CREATE] = {
		[ROCEV2_OBJ_PD] = rocev2_restore_pd,
		[ROCEV2_OBJ_CQ] = rocev2_restore_cq,
		[ROCEV2_OBJ_SRQ] = rocev2_restore_srq,
		[ROCEV2_OBJ_QP] = rocev2_restore_qp_create,
	},
	[MNIC_RESTORE_REFILL] = { [ROCEV2_OBJ_QP] = rocev2_restore_qp_refill },
	[MNIC_RESTORE_MR_KEYS] = { [ROCEV2_OBJ_MR] = rocev2_restore_mr },
};

static int restore_image(struct mnic_mgmt *m, struct cmd_call *c,
			 const struct mnic_cmd_restore_in *in, const uint8_t *img)
{
	struct rocev2_restore_opts opts;
	size_t pos;
	int rc;

	if (in->old_dip && !in->new_dip) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_OVERRIDE);
	}
	rc = rocev2_validate_image(img, in->data_len);
	if (rc)
		return engine_fail(m, c, rc);
	/* Validated: every record header is sound and inside the image. */
	for (pos = ROCEV2_DUMP_HDR_LEN; pos + ROCEV2_DUMP_REC_HDR_LEN <= in->data_len;) {
		uint32_t type = (uint32_t)img[pos] | (uint32_t)img[pos + 1] << 8;
		uint32_t rlen = get32(img + pos + 4);

		if (rlen < ROCEV2_DUMP_REC_HDR_LEN || rlen > in->data_len - pos)
			break;
		if (record_addrs_ok(m, c, type, img + pos + ROCEV2_DUMP_REC_HDR_LEN,
				    rlen - ROCEV2_DUMP_REC_HDR_LEN))
			return -1;
		pos += rlen;
	}
	memset(&opts, 0, sizeof(opts));
	opts.old_dip = in->old_dip;
	opts.new_dip = in->new_dip;
	memcpy(opts.new_dmac, in->new_dmac, sizeof(opts.new_dmac));
	rc = rocev2_restore_image(m->cfg.engine, img, in->data_len, &opts);
	if (rc)
		return engine_fail(m, c, rc);
	return 0;
}

static int h_restore_object(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_restore_in in;
	const uint8_t *data = c->buf + sizeof(in);
	uint32_t type, version, rlen;
	restore_fn fn;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (in.data_len > c->in_len - sizeof(in)) {
		m->cnt.refused_in_len++;
		return fail(c, MNIC_CMD_STAT_BAD_INPUT_LEN, HAL_EINVAL, MNIC_SITE_DATA_LEN);
	}
	if (c->op_mod == MNIC_RESTORE_IMAGE) {
		if (restore_image(m, c, &in, data))
			return -1;
		c->produced = sizeof(struct mnic_cmd_simple_out);
		return 0;
	}
	/* One record: its header must describe exactly data_len bytes. */
	if (in.data_len < ROCEV2_DUMP_REC_HDR_LEN) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RECORD);
	}
	type = (uint32_t)data[0] | (uint32_t)data[1] << 8;
	version = (uint32_t)data[2] | (uint32_t)data[3] << 8;
	rlen = get32(data + 4);
	if (rlen != in.data_len) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RECORD);
	}
	if (version != ROCEV2_DUMP_REC_VERSION) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_ERANGE, MNIC_SITE_RECORD);
	}
	fn = type < ROCEV2_OBJ_LIVE_NUM ? restore_calls[c->op_mod][type] : NULL;
	if (!fn) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RECORD_TYPE);
	}
	if (record_addrs_ok(m, c, type, data + ROCEV2_DUMP_REC_HDR_LEN,
			    rlen - ROCEV2_DUMP_REC_HDR_LEN))
		return -1;
	rc = fn(m->cfg.engine, data + ROCEV2_DUMP_REC_HDR_LEN, rlen - ROCEV2_DUMP_REC_HDR_LEN);
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

static int h_resume_context(struct mnic_mgmt *m, struct cmd_call *c)
{
	int rc = rocev2_resume_context(m->cfg.engine);

	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

static int h_abort_dump(struct mnic_mgmt *m, struct cmd_call *c)
{
	int rc = rocev2_abort_dump(m->cfg.engine);

	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

static int h_mig_config(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_mig_config_in in;

	memcpy(&in, c->buf, sizeof(in));
	rocev2_set_pause_timeout(m->cfg.engine, (uint64_t)in.pause_timeout_ms * 1000000u);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

/* ---- the table ------------------------------------------------------------------ */

#define IN(t) sizeof(struct t)
#define RSVD(t, f) { offsetof(struct t, f), sizeof(((struct t *)0)->f) }
#define RSVD_Q(t, q) { offsetof(struct t, q) + offsetof(struct mnic_queue_desc, reserved), 4 }
#define HANDLE(t, f, k) { offsetof(struct t, f), k }
#define HANDLE_IN(k) { HANDLE(mnic_cmd_handle_in, handle, k) }

static const struct cmd_desc cmd_table[] = {
	{ MNIC_CMD_QUERY_DEVICE, "QUERY_DEVICE", IN(mnic_cmd_simple_in),
	  IN(mnic_cmd_query_device_out), 0, { { 0, 0 } }, { { 0, 0 } }, h_query_device, NULL },
	{ MNIC_CMD_FW_QUERY, "FW_QUERY", IN(mnic_cmd_simple_in), IN(mnic_cmd_fw_query_out),
	  MNIC_FW_QUERY_SLOTS,
	  { { 0, 0 } }, { { 0, 0 } }, h_fw_query, NULL },
	{ MNIC_CMD_QUERY_COUNTERS, "QUERY_COUNTERS", IN(mnic_cmd_simple_in),
	  IN(mnic_cmd_query_counters_out), MNIC_COUNTERS_PORT, { { 0, 0 } }, { { 0, 0 } },
	  h_query_counters, NULL },
	{ MNIC_CMD_GET_EVENTS, "GET_EVENTS", IN(mnic_cmd_simple_in), IN(mnic_cmd_get_events_out), 0,
	  { { 0, 0 } }, { { 0, 0 } }, h_get_events, NULL },
	{ MNIC_CMD_NOP, "NOP", IN(mnic_cmd_simple_in), IN(mnic_cmd_simple_out), 0, { { 0, 0 } },
	  { { 0, 0 } }, h_nop, NULL },
	{ MNIC_CMD_CREATE_CQ, "CREATE_CQ", IN(mnic_cmd_create_cq_in), IN(mnic_cmd_handle_out), 0,
	  { RSVD_Q(mnic_cmd_create_cq_in, q) }, { { 0, 0 } }, h_create_cq, NULL },
	{ MNIC_CMD_DESTROY_CQ, "DESTROY_CQ", IN(mnic_cmd_handle_in), IN(mnic_cmd_simple_out), 0,
	  { RSVD(mnic_cmd_handle_in, reserved) }, HANDLE_IN(H_CQ), h_handle, rocev2_destroy_cq },
	{ MNIC_CMD_CREATE_QP, "CREATE_QP", IN(mnic_cmd_create_qp_in), IN(mnic_cmd_handle_out), 0,
	  { RSVD(mnic_cmd_create_qp_in, reserved), RSVD_Q(mnic_cmd_create_qp_in, sq),
	    RSVD_Q(mnic_cmd_create_qp_in, rq) },
	  { HANDLE(mnic_cmd_create_qp_in, pd, H_PD), HANDLE(mnic_cmd_create_qp_in, send_cq, H_CQ),
	    HANDLE(mnic_cmd_create_qp_in, recv_cq, H_CQ),
	    HANDLE(mnic_cmd_create_qp_in, srq, H_SRQ_OPT) },
	  h_create_qp, NULL },
	{ MNIC_CMD_MODIFY_QP, "MODIFY_QP", IN(mnic_cmd_modify_qp_in), IN(mnic_cmd_simple_out), 0,
	  { { 0, 0 } }, { HANDLE(mnic_cmd_modify_qp_in, qpn, H_QP) }, h_modify_qp, NULL },
	{ MNIC_CMD_QUERY_QP, "QUERY_QP", IN(mnic_cmd_handle_in), IN(mnic_cmd_query_qp_out),
	  MNIC_QUERY_QP_NEXT, { RSVD(mnic_cmd_handle_in, reserved) }, HANDLE_IN(H_QP_BY_QPN),
	  h_query_qp, NULL },
	{ MNIC_CMD_DESTROY_QP, "DESTROY_QP", IN(mnic_cmd_handle_in), IN(mnic_cmd_simple_out), 0,
	  { RSVD(mnic_cmd_handle_in, reserved) }, HANDLE_IN(H_QP), h_handle, rocev2_destroy_qp },
	{ MNIC_CMD_SET_QP_MIG_KEY, "SET_QP_MIG_KEY", IN(mnic_cmd_set_qp_mig_key_in),
	  IN(mnic_cmd_simple_out), 0, { RSVD(mnic_cmd_set_qp_mig_key_in, reserved) },
	  { HANDLE(mnic_cmd_set_qp_mig_key_in, qpn, H_QP) }, h_set_qp_mig_key, NULL },
	{ MNIC_CMD_CREATE_SRQ, "CREATE_SRQ", IN(mnic_cmd_create_srq_in), IN(mnic_cmd_handle_out), 0,
	  { RSVD(mnic_cmd_create_srq_in, reserved), RSVD_Q(mnic_cmd_create_srq_in, q) },
	  { HANDLE(mnic_cmd_create_srq_in, pd, H_PD) }, h_create_srq, NULL },
	{ MNIC_CMD_DESTROY_SRQ, "DESTROY_SRQ", IN(mnic_cmd_handle_in), IN(mnic_cmd_simple_out), 0,
	  { RSVD(mnic_cmd_handle_in, reserved) }, HANDLE_IN(H_SRQ), h_handle, rocev2_destroy_srq },
	{ MNIC_CMD_MODIFY_SRQ, "MODIFY_SRQ", IN(mnic_cmd_modify_srq_in), IN(mnic_cmd_simple_out), 0,
	  { { 0, 0 } }, { HANDLE(mnic_cmd_modify_srq_in, srq, H_SRQ) }, h_modify_srq, NULL },
	{ MNIC_CMD_ALLOC_PD, "ALLOC_PD", IN(mnic_cmd_simple_in), IN(mnic_cmd_handle_out), 0,
	  { { 0, 0 } }, { { 0, 0 } }, h_alloc_pd, NULL },
	{ MNIC_CMD_DEALLOC_PD, "DEALLOC_PD", IN(mnic_cmd_handle_in), IN(mnic_cmd_simple_out), 0,
	  { RSVD(mnic_cmd_handle_in, reserved) }, HANDLE_IN(H_PD), h_handle, rocev2_dealloc_pd },
	{ MNIC_CMD_REG_MR, "REG_MR", IN(mnic_cmd_reg_mr_in), IN(mnic_cmd_reg_mr_out), 0,
	  { { 0, 0 } }, { HANDLE(mnic_cmd_reg_mr_in, pd, H_PD) }, h_reg_mr, NULL },
	{ MNIC_CMD_DEREG_MR, "DEREG_MR", IN(mnic_cmd_handle_in), IN(mnic_cmd_simple_out), 0,
	  { RSVD(mnic_cmd_handle_in, reserved) }, HANDLE_IN(H_MR), h_handle, rocev2_dereg_mr },
	{ MNIC_CMD_DUMP_CONTEXT, "DUMP_CONTEXT", IN(mnic_cmd_simple_in), IN(mnic_cmd_dump_out), 0,
	  { { 0, 0 } }, { { 0, 0 } }, h_dump_context, NULL },
	{ MNIC_CMD_RESTORE_OBJECT, "RESTORE_OBJECT", IN(mnic_cmd_restore_in),
	  IN(mnic_cmd_simple_out), MNIC_RESTORE_IMAGE, { RSVD(mnic_cmd_restore_in, reserved) },
	  { { 0, 0 } }, h_restore_object, NULL },
	{ MNIC_CMD_RESUME_CONTEXT, "RESUME_CONTEXT", IN(mnic_cmd_simple_in),
	  IN(mnic_cmd_simple_out), 0, { { 0, 0 } }, { { 0, 0 } }, h_resume_context, NULL },
	{ MNIC_CMD_ABORT_DUMP, "ABORT_DUMP", IN(mnic_cmd_simple_in), IN(mnic_cmd_simple_out), 0,
	  { { 0, 0 } }, { { 0, 0 } }, h_abort_dump, NULL },
	{ MNIC_CMD_FW_FLASH_BEGIN, "FW_FLASH_BEGIN", IN(mnic_cmd_fw_flash_begin_in),
	  IN(mnic_cmd_simple_out), 0, { RSVD(mnic_cmd_fw_flash_begin_in, reserved) }, { { 0, 0 } },
	  h_fw, NULL },
	{ MNIC_CMD_FW_FLASH_DATA, "FW_FLASH_DATA", IN(mnic_cmd_fw_flash_data_in),
	  IN(mnic_cmd_simple_out), 0, { { 0, 0 } }, { { 0, 0 } }, h_fw, NULL },
	{ MNIC_CMD_FW_FLASH_END, "FW_FLASH_END", IN(mnic_cmd_simple_in),
	  IN(mnic_cmd_fw_flash_end_out), 0, { { 0, 0 } }, { { 0, 0 } }, h_fw, NULL },
	{ MNIC_CMD_FW_ACTIVATE, "FW_ACTIVATE", IN(mnic_cmd_fw_activate_in), IN(mnic_cmd_simple_out),
	  0, { RSVD(mnic_cmd_fw_activate_in, reserved) }, { { 0, 0 } }, h_fw, NULL },
	{ MNIC_CMD_MIG_CONFIG, "MIG_CONFIG", IN(mnic_cmd_mig_config_in), IN(mnic_cmd_simple_out), 0,
	  { RSVD(mnic_cmd_mig_config_in, reserved) }, { { 0, 0 } }, h_mig_config, NULL },
};
#define N_CMDS (sizeof(cmd_table) / sizeof(cmd_table[0]))

static const struct cmd_desc *cmd_lookup(uint16_t opcode)
{
	size_t i;

	for (i = 0; i < N_CMDS; i++)
		if (cmd_table[i].opcode == opcode)
			return &cmd_table[i];
	return NULL;
}

static int h_handle(struct mnic_mgmt *m, struct cmd_call *c)
{
	const struct cmd_desc *d = cmd_lookup(c->opcode);
	struct mnic_cmd_handle_in in;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (!d || !d->obj_fn)
		return fail(c, MNIC_CMD_STAT_INT_ERR, HAL_EINVAL, MNIC_SITE_OPCODE);
	rc = d->obj_fn(m->cfg.engine, in.handle);
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

/* 1 when the handle names a live object of kind k (NO_SRQ for H_SRQ_OPT):
 * the engine's own validation (rocev2_obj_live). */
static int handle_live(struct rocev2 *e, uint8_t k, uint32_t h, uint16_t op_mod)
{
	switch (k) {
	case H_QP_BY_QPN:
		if (op_mod != MNIC_QUERY_QP_BY_QPN)
			return 1;
		return rocev2_obj_live(e, ROCEV2_OBJ_QP, h);
	case H_PD:
		return rocev2_obj_live(e, ROCEV2_OBJ_PD, h);
	case H_CQ:
		return rocev2_obj_live(e, ROCEV2_OBJ_CQ, h);
	case H_SRQ_OPT:
		if (h == MNIC_NO_SRQ)
			return 1;
		return rocev2_obj_live(e, ROCEV2_OBJ_SRQ, h);
	case H_SRQ:
		return rocev2_obj_live(e, ROCEV2_OBJ_SRQ, h);
	case H_QP:
		return rocev2_obj_live(e, ROCEV2_OBJ_QP, h);
	case H_MR:
		return rocev2_obj_live(e, ROCEV2_OBJ_MR, h);
	default:
		return 1;
	}
}

static const uint16_t handle_site[] = {
	[H_PD] = MNIC_SITE_PD, [H_CQ] = MNIC_SITE_CQ, [H_SRQ] = MNIC_SITE_SRQ,
	[H_SRQ_OPT] = MNIC_SITE_SRQ, [H_QP] = MNIC_SITE_QP, [H_MR] = MNIC_SITE_MR,
	[H_QP_BY_QPN] = MNIC_SITE_QP,
};

static int dispatch_checks(struct mnic_mgmt *m, const struct cmd_desc *d, struct cmd_call *c,
			   const struct mnic_cmd_in_hdr *hdr)
{
	size_t i, j;

	if (c->in_len < d->in_len) {
		m->cnt.refused_in_len++;
		return fail(c, MNIC_CMD_STAT_BAD_INPUT_LEN, HAL_EINVAL, MNIC_SITE_IN_LEN);
	}
	if (c->out_len < d->out_len) {
		m->cnt.refused_out_len++;
		return fail(c, MNIC_CMD_STAT_BAD_OUTPUT_LEN, HAL_EINVAL, MNIC_SITE_OUT_LEN);
	}
	if (hdr->reserved) {
		m->cnt.refused_reserved++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RESERVED);
	}
	for (i = 0; i < sizeof(d->rsvd) / sizeof(d->rsvd[0]); i++)
		for (j = 0; j < d->rsvd[i].len; j++)
			if (c->buf[d->rsvd[i].off + j]) {
				m->cnt.refused_reserved++;
				return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RESERVED);
			}
	if (hdr->op_mod > d->max_op_mod) {
		m->cnt.refused_op_mod++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_OP_MOD);
	}
	for (i = 0; i < sizeof(d->handles) / sizeof(d->handles[0]); i++) {
		const struct cmd_handle *h = &d->handles[i];

		if (h->kind == H_NONE)
			continue;
		if (!handle_live(m->cfg.engine, h->kind, get32(c->buf + h->off), hdr->op_mod)) {
			m->cnt.refused_handle++;
			return fail(c, MNIC_CMD_STAT_BAD_RES, HAL_EINVAL, handle_site[h->kind]);
		}
	}
	return 0;
}

uint32_t mnic_cmd_dispatch(struct mnic_mgmt *m, uint8_t *buf, uint32_t in_len, uint32_t out_len)
{
	struct cmd_call c = { buf, in_len, out_len, sizeof(struct mnic_cmd_out_hdr), 0, 0,
			      MNIC_CMD_STAT_OK, 0 };
	struct mnic_cmd_in_hdr hdr;
	struct mnic_cmd_out_hdr out;
	const struct cmd_desc *d;
	int rc;

	if (in_len < sizeof(hdr) || in_len > MNIC_CMD_MAX_LEN || out_len < sizeof(out) ||
	    out_len > MNIC_CMD_MAX_LEN)
		return 0;
	memcpy(&hdr, buf, sizeof(hdr));
	c.opcode = hdr.opcode;
	c.op_mod = hdr.op_mod;
	d = cmd_lookup(hdr.opcode);
	if (!d) {
		m->cnt.refused_opcode++;
		rc = fail(&c, MNIC_CMD_STAT_BAD_OP, HAL_EINVAL, MNIC_SITE_OPCODE);
	} else {
		rc = dispatch_checks(m, d, &c, &hdr);
		if (!rc)
			rc = d->fn(m, &c);
	}
	if (rc) {
		m->cnt.cmds_failed++;
		if (c.status == MNIC_CMD_STAT_OK)
			c.status = MNIC_CMD_STAT_INT_ERR;
	} else {
		m->cnt.cmds_ok++;
	}
	if (c.produced < sizeof(out) || c.produced > out_len)
		c.produced = sizeof(out);
	/* The header goes last: handlers wrote their fields over the input. */
	memset(&out, 0, sizeof(out));
	out.status = c.status;
	out.syndrome = c.syndrome;
	memcpy(buf, &out, sizeof(out));
	return c.produced;
}
