/* Restore of a migration image (target side; format:
 * docs/migration-image.md, codecs: image_records.c).
 *
 * rocev2_restore_image() checks the whole image first (header, CRC32C,
 * every record's length, type, version and values, handle ranges, no
 * object twice, every reference resolved inside the image), then
 * recreates the objects kind by kind with their original handles, keys
 * and QPNs, each QP created and then refilled.  A failure while applying
 * (a slot already taken, memory outside this NIC's window) destroys what
 * was made, in reverse dependency order, and puts the slots' generation
 * counters back: the engine is as before.
 *
 *   image --validate--> [MTTs] -> [PDs] -> [MRs] -> [CQs] -> [SRQs] -> [QP create+refill]
 *                          <----------------- rollback on failure ---------------
 *
 * The per-object commands (MigrOS's ibv_restore_object) are the same
 * steps one record at a time.  Not reentrant: the validation and rollback
 * scratch below is static (control path, one caller at a time).
 */
#include <stddef.h>
#include <string.h>

#include "image_codec.h"
#include "lib/crc32.h"

/* Static scratch (see the header comment): while an image is validated,
 * the generation (MR: key byte) of the image's object at each index, 0 if
 * none; while it is applied, the slot's generation before the restore,
 * which a rollback puts back. */
static struct {
	uint16_t pd[ROCEV2_MAX_PD];
	uint16_t cq[ROCEV2_MAX_CQ];
	uint16_t srq[ROCEV2_MAX_SRQ];
	uint16_t qp[ROCEV2_MAX_QP];
	uint16_t mtt[ROCEV2_MAX_MTT];
	uint8_t mr[ROCEV2_MAX_MR];
} slot;

/* ---- object by object ------------------------------------------------------------ */

/* Slot helpers: make the object at exactly this index and generation,
 * as pd.c/mr.c/cq.c/srq.c/qp.c make one at the first free slot. */
/* The options ask for the peer-address override (rocev2.h: an old GID
 * that is not all zero). */
static int restore_override(const struct rocev2_restore_opts *o)
{
	static const uint8_t zero[ROCEV2_GID_LEN];

	return memcmp(o->old_dgid, zero, ROCEV2_GID_LEN) != 0;
}

static int pd_apply(struct rocev2 *e, const struct pd_rec *r)
{
	uint32_t idx = rocev2_handle_index(r->handle);
	struct rocev2_pd *pd = &e->pds[idx];

	if (pd->in_use)
		return -HAL_EEXIST;
	pd->gen = (uint16_t)rocev2_handle_gen(r->handle);
	pd->refcnt = 0;
	pd->owner = e->creator;
	pd->in_use = 1;
	e->n_pd++;
	return 0;
}

/* The MTT's shape at its handle, unwritten: the target host's pages come
 * with REFILL (rocev2_write_mtt while the context is Stopped, which the
 * restored MTT makes it until rocev2_resume_context). */
static int mtt_apply(struct rocev2 *e, const struct mtt_rec *r)
{
	uint32_t idx = rocev2_handle_index(r->handle);
	int rc;

	if (e->mtts[idx].in_use)
		return -HAL_EEXIST;
	rc = rocev2_mtt_install(e, idx, (uint16_t)rocev2_handle_gen(r->handle), &r->a);
	if (rc)
		return rc;
	e->owner_stopped[e->creator] = 1;
	return 0;
}

int rocev2_restore_mtt(struct rocev2 *e, const void *payload, size_t len)
{
	struct mtt_rec r;
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = img_mtt_decode(payload, len, &r);
	return rc ? rc : mtt_apply(e, &r);
}

int rocev2_restore_pd(struct rocev2 *e, const void *payload, size_t len)
{
	struct pd_rec r;
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = img_pd_decode(payload, len, &r);
	return rc ? rc : pd_apply(e, &r);
}

/* MigrOS forces the MRN (a sysctl) and then sets the keys
 * (IBV_RESTORE_MR_KEYS); here both in one step.  A taken MRN is an error,
 * never a renumbering: the peer holds the rkey. */
static int mr_apply(struct rocev2 *e, const struct mr_rec *r)
{
	uint32_t idx = r->lkey >> ROCEV2_MR_KEY_BITS;
	struct rocev2_mr *mr = &e->mrs[idx];
	struct rocev2_pd *pd;
	int rc;

	if (mr->in_use)
		return -HAL_EEXIST;
	pd = rocev2_pd_get(e, r->pd);
	if (!pd || pd->owner != e->creator)
		return -HAL_EINVAL;
	if ((rc = rocev2_mtt_check(e, r->mtt, r->addr, r->length, 0)) != 0)
		return rc;
	mr->key = (uint8_t)(r->lkey & ROCEV2_MR_KEY_MAX);
	mr->pd = (uint16_t)(pd - e->pds);
	mr->access = r->access;
	mr->addr = r->addr;
	mr->length = r->length;
	mr->lkey = r->lkey;
	mr->rkey = r->lkey;
	mr->mtt = r->mtt;
	mr->owner = e->creator;
	mr->in_use = 1;
	pd->refcnt++;
	rocev2_mtt_ref(e, r->mtt, 1);
	e->n_mr++;
	return 0;
}

int rocev2_restore_mr(struct rocev2 *e, const void *payload, size_t len)
{
	struct mr_rec r;
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = img_mr_decode(payload, len, &r);
	return rc ? rc : mr_apply(e, &r);
}

static int cq_apply(struct rocev2 *e, const struct cq_rec *r)
{
	struct rocev2_cq *cq = &e->cqs[rocev2_handle_index(r->handle)];
	int rc;

	if (cq->in_use)
		return -HAL_EEXIST;
	rc = rocev2_queue_attr_check(e, &r->q, MNIC_CQE_SIZE, 0);
	if (rc)
		return rc;
	cq->gen = (uint16_t)rocev2_handle_gen(r->handle);
	cq->error = r->error;
	cq->q = r->q;
	cq->pi = r->pi;
	cq->refcnt = 0;
	cq->owner = e->creator;
	/* not in the image: bound to no EQ until the host binds it again */
	rocev2_cq_events_reset(cq);
	cq->in_use = 1;
	rocev2_queue_mtt_ref(e, &r->q, 1);
	e->n_cq++;
	return 0;
}

int rocev2_restore_cq(struct rocev2 *e, const void *payload, size_t len)
{
	struct cq_rec r;
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = img_cq_decode(payload, len, &r);
	return rc ? rc : cq_apply(e, &r);
}

static int srq_apply(struct rocev2 *e, const struct srq_rec *r)
{
	struct rocev2_srq *srq = &e->srqs[rocev2_handle_index(r->handle)];
	struct rocev2_pd *pd;
	int rc;

	if (srq->in_use)
		return -HAL_EEXIST;
	pd = rocev2_pd_get(e, r->pd);
	if (!pd || pd->owner != e->creator)
		return -HAL_EINVAL;
	rc = rocev2_queue_attr_check(e, &r->q, MNIC_WQE_SIZE, 0);
	if (rc)
		return rc;
	srq->gen = (uint16_t)rocev2_handle_gen(r->handle);
	srq->pd = (uint16_t)(pd - e->pds);
	srq->max_sge = r->max_sge;
	srq->limit = r->limit;
	srq->limit_armed = r->limit_armed;
	/* The producer index is a cache: rocev2_rq_take re-reads the
	 * doorbell record before every take. */
	srq->wq = (struct rocev2_wq){ .q = r->q, .ci = r->ci, .pi = r->ci };
	srq->refcnt = 0;
	srq->owner = e->creator;
	srq->in_use = 1;
	pd->refcnt++;
	rocev2_queue_mtt_ref(e, &r->q, 1);
	e->n_srq++;
	return 0;
}

int rocev2_restore_srq(struct rocev2 *e, const void *payload, size_t len)
{
	struct srq_rec r;
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = img_srq_decode(payload, len, &r);
	return rc ? rc : srq_apply(e, &r);
}

/* qp.c's constructor, at the QPN's slot and generation; the QP stays
 * Stopped until rocev2_resume_context. */
static int qp_create_apply(struct rocev2 *e, const struct qp_rec *r)
{
	struct rocev2_qp_init_attr a = {
		.pd = r->pd, .send_cq = r->scq, .recv_cq = r->rcq, .srq = r->srq,
		.sq = r->sq.q, .rq = r->rq.q,
		.max_send_sge = r->max_send_sge, .max_recv_sge = r->max_recv_sge,
		.sq_sig_all = r->sq_sig_all,
	};
	int rc;

	if (e->qps[r->qpn & ROCEV2_QPN_IDX_MASK].in_use)
		return -HAL_EEXIST;
	if ((rc = rocev2_qp_install(e, r->qpn, &a, 0)) != 0)
		return rc;
	e->qps[r->qpn & ROCEV2_QPN_IDX_MASK].stopped = 1;
	return 0;
}

/* The QP that rocev2_restore_qp_create made from this record. */
static int qp_matches(const struct rocev2 *e, const struct rocev2_qp *qp, const struct qp_rec *r)
{
	uint32_t srq = qp->srq == ROCEV2_NO_SRQ ? ROCEV2_NO_SRQ
						 : rocev2_handle(e->srqs[qp->srq].gen, qp->srq);

	return rocev2_handle(e->pds[qp->pd].gen, qp->pd) == r->pd &&
	       rocev2_handle(e->cqs[qp->scq].gen, qp->scq) == r->scq &&
	       rocev2_handle(e->cqs[qp->rcq].gen, qp->rcq) == r->rcq && srq == r->srq &&
	       !memcmp(&qp->sq.q, &r->sq.q, sizeof(qp->sq.q)) &&
	       !memcmp(&qp->rq.q, &r->rq.q, sizeof(qp->rq.q)) &&
	       qp->max_send_sge == r->max_send_sge && qp->max_recv_sge == r->max_recv_sge &&
	       qp->sq_sig_all == r->sq_sig_all;
}

/* MigrOS's IBV_RESTORE_QP_REFILL: attributes and stage state onto the
 * QP made by qp_create_apply; nothing armed, nothing scheduled. */
static int qp_refill_apply(struct rocev2 *e, const struct qp_rec *r)
{
	struct rocev2_qp *qp = rocev2_qp_lookup(e, r->qpn);
	const struct rocev2_resp *p = &r->resp;
	uint32_t i;

	if (!qp || !qp_matches(e, qp, r))
		return -HAL_EINVAL;
	if (qp->state != ROCEV2_QPS_RESET || qp->req.started)
		return -HAL_EBUSY;
	qp->attr = r->attr;
	qp->state = r->state;
	qp->mtu = rocev2_mtu_bytes(r->attr.path_mtu);
	qp->paused = (r->flags & ROCEV2_DUMP_QPF_PAUSED) != 0;
	qp->stopped = 1;
	qp->sq.ci = r->sq.ci;
	qp->sq.pi = r->sq.pi;
	qp->rq.ci = r->rq.ci;
	qp->rq.pi = r->rq.pi;

	img_copy_fields(&qp->req, &r->req, req_fields, NFIELDS(req_fields));
	for (i = 0; i < r->ntrack; i++) {
		uint32_t t = (r->comp.wqe_index + i) % ROCEV2_MAX_INFLIGHT_WQE;

		img_copy_fields(&qp->req.track[t], &r->req.track[t], track_fields,
			    NFIELDS(track_fields));
	}
	qp->req.wqe_loaded = 0;
	qp->req.sq_pi = qp->sq.pi;

	img_copy_fields(&qp->comp, &r->comp, comp_fields, NFIELDS(comp_fields));
	qp->comp.wqe_loaded = 0;

	img_copy_fields(&qp->resp, p, resp_fields, NFIELDS(resp_fields));
	for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++) {
		memset(&qp->resp.res[i], 0, sizeof(qp->resp.res[i]));
		if (p->res[i].type)
			img_copy_fields(&qp->resp.res[i], &p->res[i], res_fields, NFIELDS(res_fields));
	}
	memset(&qp->resp.rwqe, 0, sizeof(qp->resp.rwqe));
	qp->resp.rwqe_length = 0;
	if (p->rwqe_valid) {
		qp->resp.rwqe.wr_id = p->rwqe.wr_id;
		qp->resp.rwqe.num_sge = p->rwqe.num_sge;
		for (i = 0; i < p->rwqe.num_sge; i++)
			qp->resp.rwqe.sge[i] = p->rwqe.sge[i];
		qp->resp.rwqe_length = p->rwqe_length;
	}

	/* rocev2_mig_reset (create) forgot epochs and keys: the image's. */
	qp->mig.has_key = (r->flags & ROCEV2_DUMP_QPF_HAS_KEY) != 0;
	qp->mig.tx_epoch = r->tx_epoch;
	qp->mig.rx_epoch = r->rx_epoch;
	memcpy(qp->mig.tx_key, r->tx_key, sizeof(qp->mig.tx_key));
	memcpy(qp->mig.rx_key, r->rx_key, sizeof(qp->mig.rx_key));
	return 0;
}

int rocev2_restore_qp_create(struct rocev2 *e, const void *payload, size_t len)
{
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = img_qp_decode(payload, len, &qp_scratch);
	return rc ? rc : qp_create_apply(e, &qp_scratch);
}

int rocev2_restore_qp_refill(struct rocev2 *e, const void *payload, size_t len)
{
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = img_qp_decode(payload, len, &qp_scratch);
	return rc ? rc : qp_refill_apply(e, &qp_scratch);
}

/* ---- restore ---------------------------------------------------------------------- */

/* Payload bytes of a record of this type at least (unknown type: 0). */
static size_t rec_min_len(uint32_t type)
{
	switch (type) {
	case ROCEV2_OBJ_PD:
		return ROCEV2_DUMP_PD_LEN;
	case ROCEV2_OBJ_MR:
		return ROCEV2_DUMP_MR_LEN;
	case ROCEV2_OBJ_CQ:
		return ROCEV2_DUMP_CQ_LEN;
	case ROCEV2_OBJ_SRQ:
		return ROCEV2_DUMP_SRQ_LEN;
	case ROCEV2_OBJ_QP:
		return ROCEV2_DUMP_QP_MIN_LEN;
	case ROCEV2_OBJ_MTT:
		return ROCEV2_DUMP_MTT_LEN;
	default:
		return 0;
	}
}

/* One record on its own: decoded and its values checked; the object's
 * index recorded so that the second pass can resolve references. */
static int rec_check(const struct rocev2_record *r)
{
	struct pd_rec pd;
	struct mtt_rec mtt;
	struct mr_rec mr;
	struct cq_rec cq;
	struct srq_rec srq;
	uint32_t idx;
	int rc;

	switch (r->type) {
	case ROCEV2_OBJ_MTT:
		rc = img_mtt_decode(r->payload, r->len, &mtt);
		if (rc)
			return rc;
		idx = rocev2_handle_index(mtt.handle);
		if (slot.mtt[idx])
			return -HAL_EINVAL;
		slot.mtt[idx] = (uint16_t)rocev2_handle_gen(mtt.handle);
		return 0;
	case ROCEV2_OBJ_PD:
		rc = img_pd_decode(r->payload, r->len, &pd);
		if (rc)
			return rc;
		idx = rocev2_handle_index(pd.handle);
		if (slot.pd[idx])
			return -HAL_EINVAL;
		slot.pd[idx] = (uint16_t)rocev2_handle_gen(pd.handle);
		return 0;
	case ROCEV2_OBJ_MR:
		rc = img_mr_decode(r->payload, r->len, &mr);
		if (rc)
			return rc;
		idx = mr.lkey >> ROCEV2_MR_KEY_BITS;
		if (slot.mr[idx])
			return -HAL_EINVAL;
		slot.mr[idx] = (uint8_t)(mr.lkey & ROCEV2_MR_KEY_MAX);
		return 0;
	case ROCEV2_OBJ_CQ:
		rc = img_cq_decode(r->payload, r->len, &cq);
		if (rc)
			return rc;
		idx = rocev2_handle_index(cq.handle);
		if (slot.cq[idx])
			return -HAL_EINVAL;
		slot.cq[idx] = (uint16_t)rocev2_handle_gen(cq.handle);
		return 0;
	case ROCEV2_OBJ_SRQ:
		rc = img_srq_decode(r->payload, r->len, &srq);
		if (rc)
			return rc;
		idx = rocev2_handle_index(srq.handle);
		if (slot.srq[idx])
			return -HAL_EINVAL;
		slot.srq[idx] = (uint16_t)rocev2_handle_gen(srq.handle);
		return 0;
	default:
		rc = img_qp_decode(r->payload, r->len, &qp_scratch);
		if (rc)
			return rc;
		idx = qp_scratch.qpn & ROCEV2_QPN_IDX_MASK;
		if (slot.qp[idx])
			return -HAL_EINVAL;
		slot.qp[idx] = (uint16_t)(qp_scratch.qpn >> ROCEV2_QPN_IDX_BITS);
		return 0;
	}
}

/* The image's object with this handle (its index and generation). */
static int in_image(const uint16_t *gens, uint32_t h)
{
	return gens[rocev2_handle_index(h)] == rocev2_handle_gen(h);
}

/* An MTT reference: physical mode, or an MTT of the image. */
static int mtt_in_image(uint32_t h)
{
	return h == ROCEV2_NO_MTT || in_image(slot.mtt, h);
}

static int queue_in_image(const struct rocev2_queue_attr *q)
{
	return mtt_in_image(q->ring_mtt) && mtt_in_image(q->dbrec_mtt);
}

/* Second pass: every reference names an object of the image (an image
 * is a whole context; the per-object commands are for anything else). */
static int rec_refs_ok(const struct rocev2_record *r)
{
	struct mr_rec mr;
	struct cq_rec cq;
	struct srq_rec srq;
	const struct qp_rec *q = &qp_scratch;

	switch (r->type) {
	case ROCEV2_OBJ_MR:
		(void)img_mr_decode(r->payload, r->len, &mr);
		return in_image(slot.pd, mr.pd) && mtt_in_image(mr.mtt);
	case ROCEV2_OBJ_CQ:
		(void)img_cq_decode(r->payload, r->len, &cq);
		return queue_in_image(&cq.q);
	case ROCEV2_OBJ_SRQ:
		(void)img_srq_decode(r->payload, r->len, &srq);
		return in_image(slot.pd, srq.pd) && queue_in_image(&srq.q);
	case ROCEV2_OBJ_QP:
		(void)img_qp_decode(r->payload, r->len, &qp_scratch);
		return in_image(slot.pd, q->pd) && in_image(slot.cq, q->scq) &&
		       in_image(slot.cq, q->rcq) &&
		       (q->srq == ROCEV2_NO_SRQ || in_image(slot.srq, q->srq)) &&
		       queue_in_image(&q->sq.q) && queue_in_image(&q->rq.q);
	default:
		return 1;
	}
}

int rocev2_image_validate(const void *img, size_t len)
{
	struct rocev2_image_iter it;
	struct rocev2_record r;
	uint32_t count, i;
	int rc;

	rc = image_header_check(img, len, &count);
	if (rc)
		return rc;

	/* Pass 1: every record's frame and contents.  Each record takes at
	 * least its header, so the walk is bounded by len whatever count
	 * says. */
	memset(&slot, 0, sizeof(slot));
	rocev2_image_iter_init(&it, img, len);
	for (i = 0; i < count; i++) {
		if (rocev2_image_next(&it, &r) <= 0)
			return -HAL_EINVAL;     /* a frame out of the image, or count too high */
		if (!rec_min_len(r.type))
			return -HAL_EINVAL;     /* unknown type */
		if (r.version != rocev2_dump_rec_version(r.type))
			return -HAL_ERANGE;
		if (r.len < rec_min_len(r.type))
			return -HAL_EINVAL;
		rc = rec_check(&r);
		if (rc)
			return rc;
	}
	if (it.pos != len)
		return -HAL_EINVAL;     /* count says fewer records than there are */

	/* Pass 2: references, whatever order the records came in. */
	rocev2_image_iter_init(&it, img, len);
	while (rocev2_image_next(&it, &r) > 0)
		if (!rec_refs_ok(&r))
			return -HAL_EINVAL;
	return 0;
}

/* The order objects are made in: a kind after the kinds it refers to. */
static const uint16_t restore_order[] = {
	ROCEV2_OBJ_MTT, ROCEV2_OBJ_PD, ROCEV2_OBJ_MR, ROCEV2_OBJ_CQ, ROCEV2_OBJ_SRQ, ROCEV2_OBJ_QP,
};
#define NKINDS (sizeof(restore_order) / sizeof(restore_order[0]))

/* Remember the generation of the slot r will take (for a rollback). */
static void save_slot(const struct rocev2 *e, const struct rocev2_record *r)
{
	uint32_t h = get_le32(r->payload);     /* every payload starts with it */

	switch (r->type) {
	case ROCEV2_OBJ_MTT:
		slot.mtt[rocev2_handle_index(h)] = e->mtts[rocev2_handle_index(h)].gen;
		break;
	case ROCEV2_OBJ_PD:
		slot.pd[rocev2_handle_index(h)] = e->pds[rocev2_handle_index(h)].gen;
		break;
	case ROCEV2_OBJ_MR:
		slot.mr[h >> ROCEV2_MR_KEY_BITS] = e->mrs[h >> ROCEV2_MR_KEY_BITS].key;
		break;
	case ROCEV2_OBJ_CQ:
		slot.cq[rocev2_handle_index(h)] = e->cqs[rocev2_handle_index(h)].gen;
		break;
	case ROCEV2_OBJ_SRQ:
		slot.srq[rocev2_handle_index(h)] = e->srqs[rocev2_handle_index(h)].gen;
		break;
	default:
		slot.qp[h & ROCEV2_QPN_IDX_MASK] = e->qps[h & ROCEV2_QPN_IDX_MASK].gen;
		break;
	}
}

static int rec_apply(struct rocev2 *e, const struct rocev2_record *r,
		     const struct rocev2_restore_opts *opts)
{
	struct rocev2_qp *qp;
	int rc;

	switch (r->type) {
	case ROCEV2_OBJ_MTT:
		return rocev2_restore_mtt(e, r->payload, r->len);
	case ROCEV2_OBJ_PD:
		return rocev2_restore_pd(e, r->payload, r->len);
	case ROCEV2_OBJ_MR:
		return rocev2_restore_mr(e, r->payload, r->len);
	case ROCEV2_OBJ_CQ:
		return rocev2_restore_cq(e, r->payload, r->len);
	case ROCEV2_OBJ_SRQ:
		return rocev2_restore_srq(e, r->payload, r->len);
	default:
		rc = rocev2_restore_qp_create(e, r->payload, r->len);
		if (rc)
			return rc;
		rc = rocev2_restore_qp_refill(e, r->payload, r->len);
		qp = rocev2_qp_lookup(e, qp_scratch.qpn);
		if (rc) {
			(void)rocev2_destroy_qp(e, qp_scratch.qpn);
			e->qps[qp_scratch.qpn & ROCEV2_QPN_IDX_MASK].gen =
				slot.qp[qp_scratch.qpn & ROCEV2_QPN_IDX_MASK];
			return rc;
		}
		/* Both ends migrated at once: the peer is elsewhere now. */
		if (opts && restore_override(opts) &&
		    memcmp(qp->attr.av.dgid, opts->old_dgid, ROCEV2_GID_LEN) == 0) {
			memcpy(qp->attr.av.dgid, opts->new_dgid, ROCEV2_GID_LEN);
			memcpy(qp->attr.av.dmac, opts->new_dmac, sizeof(qp->attr.av.dmac));
			rocev2_tx_tmpl_stale(qp);
		}
		return 0;
	}
}

/* Destroy what the image made and give every slot its generation back. */
static void rec_undo(struct rocev2 *e, const struct rocev2_record *r)
{
	uint32_t h = get_le32(r->payload), idx;

	switch (r->type) {
	case ROCEV2_OBJ_MTT:
		idx = rocev2_handle_index(h);
		(void)rocev2_destroy_mtt(e, h);
		e->mtts[idx].gen = slot.mtt[idx];
		break;
	case ROCEV2_OBJ_PD:
		idx = rocev2_handle_index(h);
		(void)rocev2_dealloc_pd(e, h);
		e->pds[idx].gen = slot.pd[idx];
		break;
	case ROCEV2_OBJ_MR:
		idx = h >> ROCEV2_MR_KEY_BITS;
		(void)rocev2_dereg_mr(e, h);
		e->mrs[idx].key = slot.mr[idx];
		break;
	case ROCEV2_OBJ_CQ:
		idx = rocev2_handle_index(h);
		(void)rocev2_destroy_cq(e, h);
		e->cqs[idx].gen = slot.cq[idx];
		break;
	case ROCEV2_OBJ_SRQ:
		idx = rocev2_handle_index(h);
		(void)rocev2_destroy_srq(e, h);
		e->srqs[idx].gen = slot.srq[idx];
		break;
	default:
		idx = h & ROCEV2_QPN_IDX_MASK;
		(void)rocev2_destroy_qp(e, h);
		e->qps[idx].gen = slot.qp[idx];
		break;
	}
}

/* Undo the kinds before kind k in full and, of kind k, the records before
 * byte offset stop: reverse dependency order, so that nothing is still
 * referenced when it is destroyed. */
static void restore_rollback(struct rocev2 *e, const uint8_t *img, size_t len, size_t k,
			     size_t stop)
{
	struct rocev2_image_iter it;
	struct rocev2_record r;

	for (;;) {
		rocev2_image_iter_init(&it, img, len);
		while (it.pos < stop && rocev2_image_next(&it, &r) > 0)
			if (r.type == restore_order[k])
				rec_undo(e, &r);
		if (k == 0)
			break;
		k--;
		stop = len;
	}
}

int rocev2_restore_image(struct rocev2 *e, const void *img, size_t len,
			 const struct rocev2_restore_opts *opts)
{
	struct rocev2_image_iter it;
	struct rocev2_record r;
	size_t k, at;
	uint8_t was_stopped;
	int rc;

	if (!e || !img)
		return -HAL_EINVAL;
	was_stopped = e->owner_stopped[e->creator];     /* a restored MTT stops it */
	if (opts && restore_override(opts) && !rocev2_gid_unicast(opts->new_dgid))
		return -HAL_EINVAL;
	rc = rocev2_image_validate(img, len);
	if (rc)
		return rc;
	/* From here on slot[] holds the generations to give back. */
	for (k = 0; k < NKINDS; k++) {
		rocev2_image_iter_init(&it, img, len);
		for (at = it.pos; rocev2_image_next(&it, &r) > 0; at = it.pos) {
			if (r.type != restore_order[k])
				continue;
			save_slot(e, &r);
			rc = rec_apply(e, &r, opts);
			if (rc) {
				restore_rollback(e, img, len, k, at);
				e->owner_stopped[e->creator] = was_stopped;
				return rc;
			}
		}
	}
	return 0;
}

/* ---- one record (the per-object commands) -------------------------------------------- */

typedef int (*restore_fn)(struct rocev2 *e, const void *payload, size_t len);

/* Which record types each op takes, and the call for each. */
static const restore_fn restore_calls[ROCEV2_RESTORE_OPS][ROCEV2_OBJ_LIVE_NUM] = {
	[ROCEV2_RESTORE_CREATE] = {
		[ROCEV2_OBJ_MTT] = rocev2_restore_mtt,
		[ROCEV2_OBJ_PD] = rocev2_restore_pd,
		[ROCEV2_OBJ_CQ] = rocev2_restore_cq,
		[ROCEV2_OBJ_SRQ] = rocev2_restore_srq,
		[ROCEV2_OBJ_QP] = rocev2_restore_qp_create,
	},
	[ROCEV2_RESTORE_REFILL] = { [ROCEV2_OBJ_QP] = rocev2_restore_qp_refill },
	[ROCEV2_RESTORE_MR_KEYS] = { [ROCEV2_OBJ_MR] = rocev2_restore_mr },
};

int rocev2_restore_op_takes(enum rocev2_restore_op op, uint32_t type)
{
	return (unsigned)op < ROCEV2_RESTORE_OPS && type < ROCEV2_OBJ_LIVE_NUM &&
	       restore_calls[op][type] != NULL;
}

int rocev2_restore_record(struct rocev2 *e, enum rocev2_restore_op op, uint32_t type,
			  const void *payload, size_t len)
{
	if (!rocev2_restore_op_takes(op, type))
		return -HAL_EINVAL;
	return restore_calls[op][type](e, payload, len);
}
