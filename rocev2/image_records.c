/* One codec per record type of the migration image (docs/migration-image.md):
 * encode (dump.c's writer) and decode with every value check (restore.c's
 * reader), side by side so that each pair reads as the record's layout.
 *
 * A decoder accepts only what this engine could hold (qp.c's attribute
 * checks, the stages' invariants that index arrays or bound lengths); what
 * depends on the target engine (slot free, memory in its DMA window) is
 * restore.c's.
 */
#include <stddef.h>
#include <string.h>

#include "image_codec.h"

#define MR_ACCESS_ALL (ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_WRITE | \
		       ROCEV2_ACCESS_REMOTE_READ | ROCEV2_ACCESS_REMOTE_ATOMIC)
#define QP_FLAGS_ALL (ROCEV2_DUMP_QPF_PAUSED | ROCEV2_DUMP_QPF_HAS_KEY)
#define PSN_OK(v) ((v) <= BTH_PSN_MASK)
#define FLAG_OK(v) ((v) <= 1u)

/* The QP record being decoded (not reentrant: image_codec.h). */
struct qp_rec qp_scratch;

/* ---- handles ------------------------------------------------------------------ */

/* A PD/CQ/SRQ handle that can name a slot: index in range, generation
 * not 0 (pool.h). */
static int handle_ok(uint32_t h, uint32_t max)
{
	return rocev2_handle_index(h) < max && rocev2_handle_gen(h) != 0;
}

static int qpn_ok(uint32_t qpn)
{
	return qpn <= BTH_QPN_MASK && (qpn & ROCEV2_QPN_IDX_MASK) < ROCEV2_MAX_QP &&
	       (qpn >> ROCEV2_QPN_IDX_BITS) != 0;
}

static int lkey_ok(uint32_t lkey)
{
	return (lkey >> ROCEV2_MR_KEY_BITS) < ROCEV2_MAX_MR && (lkey & ROCEV2_MR_KEY_MAX) != 0;
}

/* An MTT reference: none (physical mode) or a handle that can name a slot. */
static int mtt_ref_ok(uint32_t h)
{
	return h == ROCEV2_NO_MTT || handle_ok(h, ROCEV2_MAX_MTT);
}

/* A queue's shape (queue.c's rocev2_queue_attr_check without the window
 * and the MTTs' ranges, which are this NIC's and checked when the object
 * is made).  A queue of size 0 names no MTT. */
static int queue_shape_ok(const struct rocev2_queue_attr *q, int may_be_none)
{
	if (q->size == 0)
		return may_be_none && q->ring_mtt == ROCEV2_NO_MTT && q->dbrec_mtt == ROCEV2_NO_MTT;
	return q->size <= ROCEV2_MAX_QUEUE_SIZE && !(q->size & (q->size - 1u)) &&
	       !(q->dbrec_addr & (sizeof(struct mnic_dbrec) - 1u)) && mtt_ref_ok(q->ring_mtt) &&
	       mtt_ref_ok(q->dbrec_mtt);
}

static void out_queue(struct dump_out *o, const struct rocev2_queue_attr *q)
{
	img_out_le(o, q->ring_addr, 8);
	img_out_le(o, q->dbrec_addr, 8);
	img_out_le(o, q->size, 4);
	img_out_le(o, q->ring_mtt, 4);
	img_out_le(o, q->dbrec_mtt, 4);
}

static void in_queue(struct dump_in *in, struct rocev2_queue_attr *q)
{
	q->ring_addr = img_in_u64(in);
	q->dbrec_addr = img_in_u64(in);
	q->size = img_in_u32(in);
	q->ring_mtt = img_in_u32(in);
	q->dbrec_mtt = img_in_u32(in);
}

/* ---- MTT: the shape only; the pages are the target host's (REFILL) ---------------- */
void img_mtt_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx)
{
	const struct rocev2_mtt *m = &e->mtts[idx];

	img_out_le(o, rocev2_handle(m->gen, idx), 4);
	img_out_le(o, m->iova, 8);
	img_out_le(o, m->length, 8);
	img_out_le(o, m->page_shift, 1);
}

int img_mtt_decode(const void *p, size_t len, struct mtt_rec *r)
{
	struct dump_in in = { p, len, 0, 0 };

	r->handle = img_in_u32(&in);
	r->a.iova = img_in_u64(&in);
	r->a.length = img_in_u64(&in);
	r->a.page_shift = img_in_u8(&in);
	/* mtt.c's shape rules (rocev2_create_mtt). */
	if (img_in_done(&in) || !handle_ok(r->handle, ROCEV2_MAX_MTT) ||
	    r->a.page_shift < ROCEV2_PAGE_SHIFT_MIN || r->a.page_shift > ROCEV2_PAGE_SHIFT_MAX ||
	    r->a.length == 0 || r->a.length > UINT64_MAX - r->a.iova)
		return -HAL_EINVAL;
	return 0;
}

/* ---- PD ------------------------------------------------------------------------- */
void img_pd_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx)
{
	img_out_le(o, rocev2_handle(e->pds[idx].gen, idx), 4);
}

int img_pd_decode(const void *p, size_t len, struct pd_rec *r)
{
	struct dump_in in = { p, len, 0, 0 };

	r->handle = img_in_u32(&in);
	if (img_in_done(&in) || !handle_ok(r->handle, ROCEV2_MAX_PD))
		return -HAL_EINVAL;
	return 0;
}

/* ---- MR ------------------------------------------------------------------------- */
void img_mr_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx)
{
	const struct rocev2_mr *mr = &e->mrs[idx];

	img_out_le(o, mr->lkey, 4);
	img_out_le(o, rocev2_handle(e->pds[mr->pd].gen, mr->pd), 4);
	img_out_le(o, mr->addr, 8);
	img_out_le(o, mr->length, 8);
	img_out_le(o, mr->access, 4);
	img_out_le(o, mr->mtt, 4);
}

int img_mr_decode(const void *p, size_t len, struct mr_rec *r)
{
	struct dump_in in = { p, len, 0, 0 };

	r->lkey = img_in_u32(&in);
	r->pd = img_in_u32(&in);
	r->addr = img_in_u64(&in);
	r->length = img_in_u64(&in);
	r->access = img_in_u32(&in);
	r->mtt = img_in_u32(&in);
	if (img_in_done(&in) || !lkey_ok(r->lkey) || !handle_ok(r->pd, ROCEV2_MAX_PD) ||
	    !mtt_ref_ok(r->mtt))
		return -HAL_EINVAL;
	/* mr.c's rules: known bits; remote write or atomic needs local write
	 * (IBA 10.6.3.1). */
	if ((r->access & ~(uint32_t)MR_ACCESS_ALL) ||
	    ((r->access & (ROCEV2_ACCESS_REMOTE_WRITE | ROCEV2_ACCESS_REMOTE_ATOMIC)) &&
	     !(r->access & ROCEV2_ACCESS_LOCAL_WRITE)))
		return -HAL_EINVAL;
	return 0;
}

/* ---- CQ ------------------------------------------------------------------------- */
void img_cq_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx)
{
	const struct rocev2_cq *cq = &e->cqs[idx];

	img_out_le(o, rocev2_handle(cq->gen, idx), 4);
	out_queue(o, &cq->q);
	img_out_le(o, cq->pi, 4);
	img_out_le(o, cq->error, 1);
}

int img_cq_decode(const void *p, size_t len, struct cq_rec *r)
{
	struct dump_in in = { p, len, 0, 0 };

	r->handle = img_in_u32(&in);
	in_queue(&in, &r->q);
	r->pi = img_in_u32(&in);
	r->error = img_in_u8(&in);
	if (img_in_done(&in) || !handle_ok(r->handle, ROCEV2_MAX_CQ) || !queue_shape_ok(&r->q, 0) ||
	    !FLAG_OK(r->error))
		return -HAL_EINVAL;
	return 0;
}

/* ---- SRQ ------------------------------------------------------------------------ */
void img_srq_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx)
{
	const struct rocev2_srq *srq = &e->srqs[idx];

	img_out_le(o, rocev2_handle(srq->gen, idx), 4);
	img_out_le(o, rocev2_handle(e->pds[srq->pd].gen, srq->pd), 4);
	out_queue(o, &srq->wq.q);
	img_out_le(o, srq->wq.ci, 4);
	img_out_le(o, srq->max_sge, 4);
	img_out_le(o, srq->limit, 4);
	img_out_le(o, srq->limit_armed, 1);
}

int img_srq_decode(const void *p, size_t len, struct srq_rec *r)
{
	struct dump_in in = { p, len, 0, 0 };

	r->handle = img_in_u32(&in);
	r->pd = img_in_u32(&in);
	in_queue(&in, &r->q);
	r->ci = img_in_u32(&in);
	r->max_sge = img_in_u32(&in);
	r->limit = img_in_u32(&in);
	r->limit_armed = img_in_u8(&in);
	if (img_in_done(&in) || !handle_ok(r->handle, ROCEV2_MAX_SRQ) ||
	    !handle_ok(r->pd, ROCEV2_MAX_PD) || !queue_shape_ok(&r->q, 0))
		return -HAL_EINVAL;
	/* srq.c's rules; armed only with a limit (modify_srq_limit). */
	if (r->max_sge > MNIC_MAX_SGE || r->limit >= r->q.size || !FLAG_OK(r->limit_armed) ||
	    (r->limit_armed && r->limit == 0))
		return -HAL_EINVAL;
	return 0;
}

/* ---- QP ------------------------------------------------------------------------- */

/* Send WQEs whose track[] entry is live: [comp.wqe_index, next_new). */
static uint32_t qp_ntrack(const struct rocev2_qp *qp)
{
	return qp->req.next_new - qp->comp.wqe_index;
}

static void out_wq(struct dump_out *o, const struct rocev2_wq *wq)
{
	out_queue(o, &wq->q);
	img_out_le(o, wq->ci, 4);
	img_out_le(o, wq->pi, 4);
}

static void in_wq(struct dump_in *in, struct rocev2_wq *wq)
{
	in_queue(in, &wq->q);
	wq->ci = img_in_u32(in);
	wq->pi = img_in_u32(in);
}

/* -HAL_EIO: the QP's own state contradicts itself (never, unless memory
 * is corrupt); nothing of it can be written. */
int img_qp_encode(struct dump_out *o, const struct rocev2 *e, const struct rocev2_qp *qp)
{
	const struct rocev2_qp_attr *a = &qp->attr;
	const struct rocev2_resp *r = &qp->resp;
	uint32_t ntrack = qp_ntrack(qp), nres = 0, i;
	uint8_t flags = 0;

	if (ntrack > ROCEV2_MAX_INFLIGHT_WQE || (r->rwqe_valid && r->rwqe.num_sge > MNIC_MAX_SGE))
		return -HAL_EIO;
	for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++)
		nres += r->res[i].type != 0;
	if (qp->paused)
		flags |= ROCEV2_DUMP_QPF_PAUSED;
	if (qp->mig.has_key)
		flags |= ROCEV2_DUMP_QPF_HAS_KEY;

	img_out_le(o, qp->qpn, 4);
	img_out_le(o, rocev2_handle(e->pds[qp->pd].gen, qp->pd), 4);
	img_out_le(o, rocev2_handle(e->cqs[qp->scq].gen, qp->scq), 4);
	img_out_le(o, rocev2_handle(e->cqs[qp->rcq].gen, qp->rcq), 4);
	img_out_le(o, qp->srq == ROCEV2_NO_SRQ ? ROCEV2_NO_SRQ
					   : rocev2_handle(e->srqs[qp->srq].gen, qp->srq), 4);
	out_wq(o, &qp->sq);
	out_wq(o, &qp->rq);
	img_out_le(o, qp->max_send_sge, 1);
	img_out_le(o, qp->max_recv_sge, 1);
	img_out_le(o, qp->sq_sig_all, 1);
	img_out_le(o, qp->state, 1);
	img_out_le(o, flags, 1);
	img_out_le(o, a->path_mtu, 1);
	img_out_le(o, a->qp_access_flags, 1);
	img_out_le(o, a->timeout, 1);
	img_out_le(o, a->retry_cnt, 1);
	img_out_le(o, a->rnr_retry, 1);
	img_out_le(o, a->min_rnr_timer, 1);
	img_out_le(o, a->max_rd_atomic, 1);
	img_out_le(o, a->max_dest_rd_atomic, 1);
	img_out_le(o, a->av.ttl, 1);
	img_out_le(o, a->av.tos, 1);
	img_out_bytes(o, a->av.dmac, sizeof(a->av.dmac));
	img_out_bytes(o, a->av.dgid, sizeof(a->av.dgid));
	img_out_le(o, a->av.flow_label, 4);
	img_out_le(o, a->av.sgid_index, 1);
	img_out_le(o, a->pkey_index, 2);
	img_out_le(o, a->dest_qp_num, 4);
	img_out_le(o, a->rq_psn, 4);
	img_out_le(o, a->sq_psn, 4);
	img_out_le(o, ntrack, 1);
	img_out_le(o, nres, 1);
	img_out_fields(o, &qp->req, req_fields, NFIELDS(req_fields));
	img_out_fields(o, &qp->comp, comp_fields, NFIELDS(comp_fields));
	img_out_fields(o, r, resp_fields, NFIELDS(resp_fields));
	img_out_le(o, qp->mig.tx_epoch, 4);
	img_out_le(o, qp->mig.rx_epoch, 4);
	if (qp->mig.has_key) {
		img_out_bytes(o, qp->mig.tx_key, sizeof(qp->mig.tx_key));
		img_out_bytes(o, qp->mig.rx_key, sizeof(qp->mig.rx_key));
	}
	for (i = 0; i < ntrack; i++)
		img_out_fields(o, &qp->req.track[(qp->comp.wqe_index + i) % ROCEV2_MAX_INFLIGHT_WQE],
			   track_fields, NFIELDS(track_fields));
	for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++) {
		if (!r->res[i].type)
			continue;
		img_out_le(o, i, 1);
		img_out_fields(o, &r->res[i], res_fields, NFIELDS(res_fields));
	}
	if (r->rwqe_valid) {
		img_out_le(o, r->rwqe.wr_id, 8);
		img_out_le(o, r->rwqe.num_sge, 1);
		for (i = 0; i < r->rwqe.num_sge; i++) {
			img_out_le(o, r->rwqe.sge[i].addr, 8);
			img_out_le(o, r->rwqe.sge[i].length, 4);
			img_out_le(o, r->rwqe.sge[i].lkey, 4);
		}
	}
	return 0;
}

static int opcode_ok(uint8_t op)
{
	return op == 0xffu || (rocev2_opcode(op)->mask & OPM_VALID);
}

/* Values a QP of this engine can hold (qp.c's attribute checks, the
 * stages' invariants that index arrays or bound lengths). */
static int qp_values_ok(const struct qp_rec *r)
{
	const struct rocev2_qp_attr *a = &r->attr;
	const struct rocev2_req *q = &r->req;
	const struct rocev2_comp *c = &r->comp;
	const struct rocev2_resp *p = &r->resp;
	uint32_t i, idx;

	if (!qpn_ok(r->qpn) || !handle_ok(r->pd, ROCEV2_MAX_PD) ||
	    !handle_ok(r->scq, ROCEV2_MAX_CQ) || !handle_ok(r->rcq, ROCEV2_MAX_CQ) ||
	    (r->srq != ROCEV2_NO_SRQ && !handle_ok(r->srq, ROCEV2_MAX_SRQ)))
		return 0;
	if (!queue_shape_ok(&r->sq.q, 1) || !queue_shape_ok(&r->rq.q, 1) ||
	    (r->srq != ROCEV2_NO_SRQ && r->rq.q.size != 0))
		return 0;
	if (r->max_send_sge > MNIC_MAX_SGE || r->max_recv_sge > MNIC_MAX_SGE ||
	    !FLAG_OK(r->sq_sig_all) || r->state >= ROCEV2_QPS_NUM || (r->flags & ~QP_FLAGS_ALL))
		return 0;
	if (a->path_mtu < ROCEV2_MTU_256 || a->path_mtu > ROCEV2_MTU_4096 ||
	    (a->qp_access_flags & ~(uint32_t)MR_ACCESS_ALL) || a->timeout > 31u ||
	    a->retry_cnt > 7u || a->rnr_retry > 7u || a->min_rnr_timer > 31u ||
	    a->max_rd_atomic > ROCEV2_MAX_RD_ATOMIC ||
	    a->max_dest_rd_atomic > ROCEV2_MAX_RD_ATOMIC ||
	    a->pkey_index != 0 || a->dest_qp_num > BTH_QPN_MASK || !PSN_OK(a->rq_psn) ||
	    !PSN_OK(a->sq_psn) || a->av.flow_label > ROCEV2_FLOW_LABEL_MASK ||
	    a->av.sgid_index >= ROCEV2_GID_TBL_LEN)
		return 0;
	/* Requester and completer. */
	if (q->state > REQ_STATE_ERROR || !opcode_ok(q->opcode) || !FLAG_OK(q->need_retry) ||
	    !PSN_OK(q->psn) || !PSN_OK(q->psn_hw) || q->offset > ROCEV2_MAX_MSG ||
	    q->rd_atomic_outstanding > ROCEV2_MAX_INFLIGHT_WQE || !FLAG_OK(q->started) ||
	    !FLAG_OK(q->err_pending))
		return 0;
	if (r->ntrack > ROCEV2_MAX_INFLIGHT_WQE || q->next_new - c->wqe_index != r->ntrack)
		return 0;
	for (i = 0; i < r->ntrack; i++) {
		const struct rocev2_wqe_track *t =
			&q->track[(c->wqe_index + i) % ROCEV2_MAX_INFLIGHT_WQE];

		if (!PSN_OK(t->first_psn) || !PSN_OK(t->last_psn) || t->length > ROCEV2_MAX_MSG ||
		    t->wr_opcode >= MNIC_WR_NUM || !FLAG_OK(t->state))
			return 0;
	}
	if (!PSN_OK(c->psn) || !opcode_ok(c->opcode) || c->retry_cnt > 7u || c->rnr_retry > 7u ||
	    c->read_offset > ROCEV2_MAX_MSG || !FLAG_OK(c->started_retry) ||
	    !FLAG_OK(c->rnr_wait) || !FLAG_OK(c->drained))
		return 0;
	/* Responder. */
	if (!PSN_OK(p->psn) || !PSN_OK(p->msn) || !opcode_ok(p->opcode) ||
	    !FLAG_OK(p->sent_psn_nak) || !FLAG_OK(p->rwqe_valid) ||
	    p->rwqe_offset > ROCEV2_MAX_MSG || p->write_resid > ROCEV2_MAX_MSG ||
	    p->write_length > ROCEV2_MAX_MSG || p->res_head >= ROCEV2_MAX_RD_ATOMIC ||
	    p->res_pending > ROCEV2_MAX_RD_ATOMIC || !PSN_OK(p->ack_psn) ||
	    !FLAG_OK(p->ack_psn_valid) || !FLAG_OK(p->ack_deferred) ||
	    !PSN_OK(p->ack_deferred_psn) || !PSN_OK(p->ack_deferred_msn))
		return 0;
	for (idx = 0; idx < ROCEV2_MAX_RD_ATOMIC; idx++) {
		const struct rocev2_resp_res *s = &p->res[idx];

		if (!s->type)
			continue;
		if ((s->type != OP_READ_REQUEST && s->type != OP_COMPARE_SWAP &&
		     s->type != OP_FETCH_ADD) ||
		    !PSN_OK(s->first_psn) || !PSN_OK(s->last_psn) || !PSN_OK(s->cur_psn) ||
		    !PSN_OK(s->start_psn) || !PSN_OK(s->msn) || !FLAG_OK(s->replay) ||
		    !FLAG_OK(s->sending) || s->length > ROCEV2_MAX_MSG || s->resid > s->length)
			return 0;
	}
	if (p->rwqe_valid && (p->rwqe.num_sge > MNIC_MAX_SGE || p->rwqe_offset > p->rwqe_length))
		return 0;
	return 1;
}

/* Decode and check one QP record payload into r. */
int img_qp_decode(const void *payload, size_t len, struct qp_rec *r)
{
	struct dump_in in = { payload, len, 0, 0 };
	struct rocev2_qp_attr *a = &r->attr;
	struct rocev2_resp *p = &r->resp;
	uint32_t i, slot_no;

	memset(r, 0, sizeof(*r));
	r->qpn = img_in_u32(&in);
	r->pd = img_in_u32(&in);
	r->scq = img_in_u32(&in);
	r->rcq = img_in_u32(&in);
	r->srq = img_in_u32(&in);
	in_wq(&in, &r->sq);
	in_wq(&in, &r->rq);
	r->max_send_sge = img_in_u8(&in);
	r->max_recv_sge = img_in_u8(&in);
	r->sq_sig_all = img_in_u8(&in);
	r->state = img_in_u8(&in);
	r->flags = img_in_u8(&in);
	a->path_mtu = img_in_u8(&in);
	a->qp_access_flags = img_in_u8(&in);
	a->timeout = img_in_u8(&in);
	a->retry_cnt = img_in_u8(&in);
	a->rnr_retry = img_in_u8(&in);
	a->min_rnr_timer = img_in_u8(&in);
	a->max_rd_atomic = img_in_u8(&in);
	a->max_dest_rd_atomic = img_in_u8(&in);
	a->av.ttl = img_in_u8(&in);
	a->av.tos = img_in_u8(&in);
	img_in_bytes(&in, a->av.dmac, sizeof(a->av.dmac));
	img_in_bytes(&in, a->av.dgid, sizeof(a->av.dgid));
	a->av.flow_label = img_in_u32(&in);
	a->av.sgid_index = img_in_u8(&in);
	a->pkey_index = img_in_u16(&in);
	a->dest_qp_num = img_in_u32(&in);
	a->rq_psn = img_in_u32(&in);
	a->sq_psn = img_in_u32(&in);
	a->qp_state = r->state;
	r->ntrack = img_in_u8(&in);
	r->nres = img_in_u8(&in);
	img_in_fields(&in, &r->req, req_fields, NFIELDS(req_fields));
	img_in_fields(&in, &r->comp, comp_fields, NFIELDS(comp_fields));
	img_in_fields(&in, p, resp_fields, NFIELDS(resp_fields));
	r->tx_epoch = img_in_u32(&in);
	r->rx_epoch = img_in_u32(&in);
	if (in.bad)
		return -HAL_EINVAL;
	if (r->flags & ROCEV2_DUMP_QPF_HAS_KEY) {
		img_in_bytes(&in, r->tx_key, sizeof(r->tx_key));
		img_in_bytes(&in, r->rx_key, sizeof(r->rx_key));
	}
	if (r->ntrack > ROCEV2_MAX_INFLIGHT_WQE || r->nres > ROCEV2_MAX_RD_ATOMIC)
		return -HAL_EINVAL;
	for (i = 0; i < r->ntrack; i++)
		img_in_fields(&in, &r->req.track[(r->comp.wqe_index + i) % ROCEV2_MAX_INFLIGHT_WQE],
			  track_fields, NFIELDS(track_fields));
	for (i = 0; i < r->nres; i++) {
		struct rocev2_resp_res *s;

		slot_no = img_in_u8(&in);
		if (in.bad || slot_no >= ROCEV2_MAX_RD_ATOMIC || p->res[slot_no].type)
			return -HAL_EINVAL;     /* out of range or twice */
		s = &p->res[slot_no];
		img_in_fields(&in, s, res_fields, NFIELDS(res_fields));
		if (!s->type)
			return -HAL_EINVAL;     /* only slots in use are listed */
	}
	if (p->rwqe_valid) {
		p->rwqe.wr_id = img_in_u64(&in);
		p->rwqe.num_sge = img_in_u8(&in);
		if (p->rwqe.num_sge > MNIC_MAX_SGE)
			return -HAL_EINVAL;
		for (i = 0; i < p->rwqe.num_sge; i++) {
			p->rwqe.sge[i].addr = img_in_u64(&in);
			p->rwqe.sge[i].length = img_in_u32(&in);
			p->rwqe.sge[i].lkey = img_in_u32(&in);
		}
		if (rocev2_sge_total(p->rwqe.sge, p->rwqe.num_sge, &p->rwqe_length) < 0)
			return -HAL_EINVAL;
	}
	if (img_in_done(&in) || !qp_values_ok(r))
		return -HAL_EINVAL;
	return 0;
}

/* ---- host memory of a record ---------------------------------------------------- */

/* A queue's ring and doorbell record in physical mode; none for a queue
 * of size 0, nor for a part an MTT maps (its addresses are IOVAs, which
 * the MTT confines to the pages WRITE_MTT checked). */
static unsigned queue_ranges(struct rocev2_host_range *out, unsigned n,
			     const struct rocev2_queue_attr *q, uint32_t entry_size)
{
	if (q->size == 0)
		return n;
	if (q->ring_mtt == ROCEV2_NO_MTT)
		out[n++] = (struct rocev2_host_range){ q->ring_addr,
						       (uint64_t)q->size * entry_size,
						       ROCEV2_RANGE_RING };
	if (q->dbrec_mtt == ROCEV2_NO_MTT)
		out[n++] = (struct rocev2_host_range){ q->dbrec_addr, sizeof(struct mnic_dbrec),
						       ROCEV2_RANGE_DBREC };
	return n;
}

int rocev2_record_host_ranges(uint32_t type, const void *payload, size_t len,
			      struct rocev2_host_range out[], unsigned cap)
{
	struct rocev2_host_range r[ROCEV2_RECORD_MAX_RANGES];
	struct pd_rec pd;
	struct mtt_rec mtt;
	struct mr_rec mr;
	struct cq_rec cq;
	struct srq_rec srq;
	unsigned n = 0;

	if (!payload || (!out && cap))
		return -HAL_EINVAL;
	switch (type) {
	case ROCEV2_OBJ_PD:
		if (img_pd_decode(payload, len, &pd))
			return -HAL_EINVAL;
		break;                  /* a PD names no host memory */
	case ROCEV2_OBJ_MTT:
		if (img_mtt_decode(payload, len, &mtt))
			return -HAL_EINVAL;
		break;                  /* IOVAs; the target's pages come with REFILL */
	case ROCEV2_OBJ_MR:
		if (img_mr_decode(payload, len, &mr))
			return -HAL_EINVAL;
		if (mr.mtt == ROCEV2_NO_MTT)
			r[n++] = (struct rocev2_host_range){ mr.addr, mr.length, ROCEV2_RANGE_MR };
		break;
	case ROCEV2_OBJ_CQ:
		if (img_cq_decode(payload, len, &cq))
			return -HAL_EINVAL;
		n = queue_ranges(r, n, &cq.q, MNIC_CQE_SIZE);
		break;
	case ROCEV2_OBJ_SRQ:
		if (img_srq_decode(payload, len, &srq))
			return -HAL_EINVAL;
		n = queue_ranges(r, n, &srq.q, MNIC_WQE_SIZE);
		break;
	case ROCEV2_OBJ_QP:
		if (img_qp_decode(payload, len, &qp_scratch))
			return -HAL_EINVAL;
		n = queue_ranges(r, n, &qp_scratch.sq.q, MNIC_WQE_SIZE);
		n = queue_ranges(r, n, &qp_scratch.rq.q, MNIC_WQE_SIZE);
		break;
	default:
		return -HAL_EINVAL;
	}
	if (n > cap)
		return -HAL_ENOSPC;
	if (n)
		memcpy(out, r, n * sizeof(r[0]));
	return (int)n;
}
