/* Object commands: PD, MR, CQ, SRQ and QP (mnic/cmd.h,
 * docs/host-interface.md).  Rings, doorbell records and MRs in physical
 * mode must lie in the issuer's user-area range (mem_ok); with an MTT the
 * engine checks them against it (mtt_engine_fail names that refusal); the
 * dispatcher checked that every handle, MTTs included, is the issuer's;
 * the engine validates the rest and changes nothing when it refuses. */
#include <string.h>

#include "cmd_priv.h"
#include "hal/errno.h"

static void put_handle_out(struct cmd_call *c, uint32_t handle)
{
	struct mnic_cmd_handle_out o;

	memset(&o, 0, sizeof(o));
	o.handle = handle;
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
}

/* 1 when the queue names an MTT. */
static int queue_uses_mtt(const struct mnic_queue_desc *q)
{
	return q->ring_mtt != MNIC_MTT_NONE || q->dbrec_mtt != MNIC_MTT_NONE;
}

static struct rocev2_queue_attr queue_attr(const struct mnic_queue_desc *q)
{
	struct rocev2_queue_attr a = { .ring_addr = q->ring_addr, .dbrec_addr = q->dbrec_addr,
				       .size = q->size, .ring_mtt = q->ring_mtt,
				       .dbrec_mtt = q->dbrec_mtt };

	return a;
}

int h_alloc_pd(struct mnic_mgmt *m, struct cmd_call *c)
{
	uint32_t pd;
	int rc = rocev2_alloc_pd(m->cfg.engine, &pd);

	if (rc)
		return engine_fail(m, c, rc);
	put_handle_out(c, pd);
	return 0;
}

int h_reg_mr(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_reg_mr_in in;
	struct mnic_cmd_reg_mr_out o;
	uint32_t lkey, rkey;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (mem_ok(m, c, in.mtt, in.addr, in.length, MNIC_SITE_MR_ADDR))
		return -1;
	rc = rocev2_reg_mr_mtt(m->cfg.engine, in.pd, in.mtt, in.addr, in.length, in.access, &lkey,
			       &rkey);
	if (rc)
		return mtt_engine_fail(m, c, rc, in.mtt != MNIC_MTT_NONE);
	memset(&o, 0, sizeof(o));
	o.lkey = lkey;
	o.rkey = rkey;
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
	return 0;
}

int h_create_cq(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_create_cq_in in;
	struct rocev2_queue_attr q;
	uint32_t cq;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (queue_ok(m, c, &in.q, MNIC_CQE_SIZE))
		return -1;
	q = queue_attr(&in.q);
	rc = rocev2_create_cq(m->cfg.engine, &q, &cq);
	if (rc)
		return mtt_engine_fail(m, c, rc, queue_uses_mtt(&in.q));
	put_handle_out(c, cq);
	return 0;
}

int h_resize_cq(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_resize_cq_in in;
	struct rocev2_queue_attr q;
	uint32_t moved;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (queue_ok(m, c, &in.q, MNIC_CQE_SIZE))
		return -1;
	q = queue_attr(&in.q);
	rc = rocev2_resize_cq(m->cfg.engine, in.cq, &q, &moved);
	if (rc)
		return mtt_engine_fail(m, c, rc, queue_uses_mtt(&in.q));
	put_handle_out(c, moved);   /* the handle field: the CQEs moved */
	return 0;
}

/* Completion events (mnic/queues.h): an EQ is a ring as a CQ's; the
 * engine checks the vector's range. */
int h_create_eq(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_create_eq_in in;
	struct rocev2_queue_attr q;
	uint32_t eq;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (queue_ok(m, c, &in.q, MNIC_EQE_SIZE))
		return -1;
	q = queue_attr(&in.q);
	rc = rocev2_create_eq(m->cfg.engine, &q, in.vector, &eq);
	if (rc)
		return mtt_engine_fail(m, c, rc, queue_uses_mtt(&in.q));
	put_handle_out(c, eq);
	return 0;
}

int h_modify_cq(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_modify_cq_in in;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	rc = rocev2_cq_set_eq(m->cfg.engine, in.cq,
			      in.eq == MNIC_EQ_NONE ? ROCEV2_NO_EQ : in.eq);
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

int h_create_srq(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_create_srq_in in;
	struct rocev2_srq_attr a;
	uint32_t srq;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (queue_ok(m, c, &in.q, MNIC_WQE_SIZE))
		return -1;
	memset(&a, 0, sizeof(a));
	a.q = queue_attr(&in.q);
	a.max_sge = in.max_sge;
	a.srq_limit = in.srq_limit;
	rc = rocev2_create_srq(m->cfg.engine, in.pd, &a, &srq);
	if (rc)
		return mtt_engine_fail(m, c, rc, queue_uses_mtt(&in.q));
	put_handle_out(c, srq);
	return 0;
}

int h_modify_srq(struct mnic_mgmt *m, struct cmd_call *c)
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

int h_create_qp(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_create_qp_in in;
	struct rocev2_qp_init_attr a;
	uint32_t qpn;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (queue_ok(m, c, &in.sq, MNIC_WQE_SIZE) || queue_ok(m, c, &in.rq, MNIC_WQE_SIZE))
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
		return mtt_engine_fail(m, c, rc, queue_uses_mtt(&in.sq) || queue_uses_mtt(&in.rq));
	put_handle_out(c, qpn);
	return 0;
}

int h_modify_qp(struct mnic_mgmt *m, struct cmd_call *c)
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
	memcpy(a.av.dgid, in.attr.dgid, sizeof(a.av.dgid));
	a.av.flow_label = in.attr.flow_label;
	a.av.sgid_index = in.attr.sgid_index;
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

/* QUERY_QP NEXT's walk: other contexts' QPs are skipped, not shown. */
static int qp_next(struct mnic_mgmt *m, const struct cmd_call *c, uint32_t *qpn)
{
	uint32_t cursor = *qpn, owner;

	while (rocev2_obj_next(m->cfg.engine, ROCEV2_OBJ_QP, cursor, qpn) == 0) {
		if (c->ctx == MNIC_CTX_MGMT ||
		    (rocev2_obj_owner(m->cfg.engine, ROCEV2_OBJ_QP, *qpn, &owner) == 0 &&
		     owner == c->ctx))
			return 0;
		/* The slot after it; a QPN + 1 could carry into the generation. */
		cursor = (*qpn & ((1u << ROCEV2_QPN_IDX_BITS) - 1u)) + 1u;
		if (cursor >= ROCEV2_MAX_QP)
			break;
	}
	return -HAL_ENXIO;
}

int h_query_qp(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_handle_in in;
	struct mnic_cmd_query_qp_out o;
	struct rocev2_qp_attr a;
	uint32_t flags;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	/* `mnicctl qp list`: the first live QP of the issuer (any, for
	 * MNIC_CTX_MGMT) at or after the slot of in.handle; its QPN goes in
	 * the reply's reserved word. */
	if (c->op_mod == MNIC_QUERY_QP_NEXT && qp_next(m, c, &in.handle) != 0)
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
	memcpy(o.attr.dgid, a.av.dgid, sizeof(o.attr.dgid));
	o.attr.flow_label = a.av.flow_label;
	o.attr.sgid_index = a.av.sgid_index;
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

int h_set_qp_mig_key(struct mnic_mgmt *m, struct cmd_call *c)
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

/* DEALLOC_PD, DEREG_MR, DESTROY_CQ/SRQ/QP: the table names the call. */
int h_handle(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_handle_in in;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (!c->desc->obj_fn)
		return fail(c, MNIC_CMD_STAT_INT_ERR, HAL_EINVAL, MNIC_SITE_OPCODE);
	rc = c->desc->obj_fn(m->cfg.engine, in.handle);
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

/* Host Ethernet queues (mnic/cmd.h, MNIC_CTX_MGMT only: the dispatcher
 * row): two rings checked as a CQ's, the buffer MTT by the dispatcher
 * (an MTT of the issuer's) and the engine (fully written). */
int h_create_ethq(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_create_ethq_in in;
	struct rocev2_ethq_attr a;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (queue_ok(m, c, &in.tx, MNIC_ETH_DESC_SIZE) || queue_ok(m, c, &in.rx, MNIC_ETH_DESC_SIZE))
		return -1;
	a.tx = queue_attr(&in.tx);
	a.rx = queue_attr(&in.rx);
	a.buf_mtt = in.buf_mtt;
	a.vector = in.vector;
	rc = rocev2_create_ethq(m->cfg.engine, &a);
	if (rc)
		return mtt_engine_fail(m, c, rc, 1);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

int h_destroy_ethq(struct mnic_mgmt *m, struct cmd_call *c)
{
	int rc = rocev2_destroy_ethq(m->cfg.engine);

	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}
