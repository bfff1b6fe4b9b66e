/* Queue pairs: creation, the verbs state machine (IBA 10.3.1, as
 * ibv_modify_qp for RC), query, destruction, and the move to the error
 * state that the stages use.
 *
 *            +-------+  INIT   +------+  RTR  +-----+  RTS  +-----+ <--> SQD
 *   create ->| RESET |-------->| INIT |------>| RTR |------>| RTS |
 *            +-------+         +------+       +-----+       +-----+ <--- SQE
 *   any state -> RESET, any state -> ERR; INIT, RTS and SQD modify in place.
 *
 * The table qp_transitions says which moves exist, which attributes each
 * requires and which it may change; everything else is refused with the QP
 * unchanged.  Attribute values are all checked before anything is written. */
#include <string.h>

#include "pool.h"

#define M(a) ROCEV2_QP_##a

/* What entering the new state does beyond storing attributes. */
enum qp_action {
	QP_ACT_NONE,
	QP_ACT_INIT,        /* RESET -> INIT: fresh stage state, empty queues */
	QP_ACT_RESET,       /* any -> RESET: stop timers, forget everything */
	QP_ACT_ERROR,       /* any -> ERR: flush (user request, no event) */
	QP_ACT_RTS,         /* -> RTS: the requester may have WQEs waiting */
	QP_ACT_NUM,
};

struct qp_transition {
	uint8_t valid;
	uint8_t action;     /* enum qp_action */
	uint32_t req;       /* attributes that must be given (besides STATE) */
	uint32_t opt;       /* attributes that may be given */
};

#define TO_RESET { 1, QP_ACT_RESET, 0, 0 }
#define TO_ERR { 1, QP_ACT_ERROR, 0, 0 }
#define SQD_SQD_OPT (M(PORT) | M(AV) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | \
		     M(MAX_QP_RD_ATOMIC) | M(MAX_DEST_RD_ATOMIC) | M(ACCESS_FLAGS) |     \
		     M(PKEY_INDEX) | M(MIN_RNR_TIMER))

/* IBA 10.3.1 and Linux ib_modify_qp_is_ok() for RC (alternate path, path
 * migration and SQD notification are not supported, so their bits are not
 * listed).  Deviations: RESET -> ERR is allowed (IBA: any state to Error);
 * SQE -> RTS takes no optional attribute, as the RC column of the verbs
 * table (an RC QP never enters SQE on its own: errors go to ERR). */
static const struct qp_transition qp_transitions[ROCEV2_QPS_NUM][ROCEV2_QPS_NUM] = {
	[ROCEV2_QPS_RESET] = {
		[ROCEV2_QPS_RESET] = TO_RESET,
		[ROCEV2_QPS_INIT] = { 1, QP_ACT_INIT, M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS), 0 },
		[ROCEV2_QPS_ERR] = TO_ERR,
	},
	[ROCEV2_QPS_INIT] = {
		[ROCEV2_QPS_RESET] = TO_RESET,
		[ROCEV2_QPS_INIT] = { 1, QP_ACT_NONE, 0, M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS) },
		[ROCEV2_QPS_RTR] = { 1, QP_ACT_NONE,
				     M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) |
				     M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER),
				     M(ACCESS_FLAGS) | M(PKEY_INDEX) },
		[ROCEV2_QPS_ERR] = TO_ERR,
	},
	[ROCEV2_QPS_RTR] = {
		[ROCEV2_QPS_RESET] = TO_RESET,
		[ROCEV2_QPS_RTS] = { 1, QP_ACT_RTS,
				     M(SQ_PSN) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) |
				     M(MAX_QP_RD_ATOMIC),
				     M(ACCESS_FLAGS) | M(MIN_RNR_TIMER) },
		[ROCEV2_QPS_ERR] = TO_ERR,
	},
	[ROCEV2_QPS_RTS] = {
		[ROCEV2_QPS_RESET] = TO_RESET,
		[ROCEV2_QPS_RTS] = { 1, QP_ACT_NONE, 0, M(ACCESS_FLAGS) | M(MIN_RNR_TIMER) },
		[ROCEV2_QPS_SQD] = { 1, QP_ACT_NONE, 0, 0 },
		[ROCEV2_QPS_ERR] = TO_ERR,
	},
	[ROCEV2_QPS_SQD] = {
		[ROCEV2_QPS_RESET] = TO_RESET,
		[ROCEV2_QPS_RTS] = { 1, QP_ACT_RTS, 0, M(ACCESS_FLAGS) | M(MIN_RNR_TIMER) },
		[ROCEV2_QPS_SQD] = { 1, QP_ACT_NONE, 0, SQD_SQD_OPT },
		[ROCEV2_QPS_ERR] = TO_ERR,
	},
	[ROCEV2_QPS_SQE] = {
		[ROCEV2_QPS_RESET] = TO_RESET,
		[ROCEV2_QPS_RTS] = { 1, QP_ACT_RTS, 0, 0 },
		[ROCEV2_QPS_ERR] = TO_ERR,
	},
	[ROCEV2_QPS_ERR] = {
		[ROCEV2_QPS_RESET] = TO_RESET,
		[ROCEV2_QPS_ERR] = TO_ERR,
	},
};

#define QP_MASK_KNOWN (M(STATE) | M(ACCESS_FLAGS) | M(PKEY_INDEX) | M(PORT) | M(AV) |        \
		       M(PATH_MTU) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(RQ_PSN) |   \
		       M(MAX_QP_RD_ATOMIC) | M(MIN_RNR_TIMER) | M(SQ_PSN) |                   \
		       M(MAX_DEST_RD_ATOMIC) | M(DEST_QPN))
#define QP_ACCESS_ALL (ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_WRITE | \
		       ROCEV2_ACCESS_REMOTE_READ | ROCEV2_ACCESS_REMOTE_ATOMIC)
#define QP_PKEY_TABLE_SIZE 1u       /* one P_Key: the default 0xffff */

const char *const rocev2_qp_state_names[ROCEV2_QPS_NUM] = {
	[ROCEV2_QPS_RESET] = "RESET", [ROCEV2_QPS_INIT] = "INIT", [ROCEV2_QPS_RTR] = "RTR",
	[ROCEV2_QPS_RTS] = "RTS",     [ROCEV2_QPS_SQD] = "SQD",   [ROCEV2_QPS_SQE] = "SQE",
	[ROCEV2_QPS_ERR] = "ERR",
};

struct rocev2_qp *rocev2_qp_lookup(struct rocev2 *e, uint32_t qpn)
{
	uint32_t idx = qpn & ROCEV2_QPN_IDX_MASK;
	uint32_t gen = qpn >> ROCEV2_QPN_IDX_BITS;
	struct rocev2_qp *qp;

	if (idx >= ROCEV2_MAX_QP || gen > ROCEV2_QPN_GEN_MAX)
		return NULL;
	qp = &e->qps[idx];
	if (!qp->in_use || qp->gen != gen)
		return NULL;
	return qp;
}

/* A QPN that names no live QP but one this NIC issued and has destroyed
 * since: its slot's generation has moved past it, or the slot is free at
 * that generation.  Generations start at 1 (pool.h), so generation 0 was
 * never issued.  Such a packet is a peer's late retransmission (rxe
 * retransmits after everything is acked, docs/interop.md) or one still in
 * flight when the QP went away; IBA 9.6.1.5.1 drops it silently like any
 * packet to an invalid QP, and recv.c counts it apart from QPNs the NIC
 * never gave out, which point at a misrouted or forged packet.  After the
 * generation wraps (ROCEV2_QPN_GEN_MAX) the split is approximate. */
int rocev2_qpn_stale(const struct rocev2 *e, uint32_t qpn)
{
	uint32_t idx = qpn & ROCEV2_QPN_IDX_MASK;
	uint32_t gen = qpn >> ROCEV2_QPN_IDX_BITS;
	const struct rocev2_qp *qp;

	if (idx >= ROCEV2_MAX_QP || gen == 0 || gen > ROCEV2_QPN_GEN_MAX)
		return 0;
	qp = &e->qps[idx];
	return qp->in_use ? gen < qp->gen : gen <= qp->gen;
}

/* A work queue of a QP: size 0 means none (a QP that only receives, or
 * one whose receives come from an SRQ). */
static int qp_wq_check(struct rocev2 *e, const struct rocev2_queue_attr *q, int need_written)
{
	if (q->size == 0)
		return 0;
	return rocev2_queue_attr_check(e, q, MNIC_WQE_SIZE, need_written);
}

/* The MTT references of a QP's work queues (none for a queue of size 0). */
static void qp_wq_mtt_ref(struct rocev2 *e, const struct rocev2_qp *qp, int delta)
{
	if (qp->sq.q.size)
		rocev2_queue_mtt_ref(e, &qp->sq.q, delta);
	if (qp->rq.q.size)
		rocev2_queue_mtt_ref(e, &qp->rq.q, delta);
}

/* Every timer of the QP: the completer's and the migration ones (a QP in
 * ERR neither waits for a paused peer nor repeats its RESUME). */
static void qp_stop_timers(struct rocev2 *e, struct rocev2_qp *qp)
{
	timer_cancel(&e->timers, &qp->comp.retrans_timer);
	timer_cancel(&e->timers, &qp->comp.rnr_timer);
	timer_cancel(&e->timers, &qp->mig.pause_timer);
	timer_cancel(&e->timers, &qp->mig.resume_timer);
	rocev2_cc_stop(e, qp);
}

/* Take qp out of the scheduler FIFO (rocev2.c) before its slot is reused:
 * a later create clears sched_next, which would cut the list.  Each QP is
 * in the FIFO at most once, so the walk is bounded by ROCEV2_MAX_QP. */
static void qp_unschedule(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_qp **link = &e->sched_head, *prev = NULL;

	if (!qp->scheduled)
		return;
	while (*link && *link != qp) {
		prev = *link;
		link = &prev->sched_next;
	}
	if (*link) {
		*link = qp->sched_next;
		if (e->sched_tail == qp)
			e->sched_tail = prev;
	}
	qp->scheduled = 0;
	qp->sched_next = NULL;
}

/* Stage state and queue indices as after creation.  The host hands over
 * zeroed rings, so the queues start at index 0. */
static void qp_reset_state(struct rocev2 *e, struct rocev2_qp *qp)
{
	qp_stop_timers(e, qp);
	rocev2_req_reset(qp);
	rocev2_comp_reset(e, qp);
	rocev2_resp_reset(qp);
	rocev2_cc_reset(e, qp, 0);
	qp->sq.ci = qp->sq.pi = 0;
	qp->rq.ci = qp->rq.pi = 0;
	qp->stopped = qp->paused = 0;
}

/* The QP constructor, shared by create and restore (restore.c): check the
 * references and queues of `a`, then build the QP `qpn` in its slot (which
 * the caller found free) in RESET, holding its PD, CQs and SRQ. */
int rocev2_qp_install(struct rocev2 *e, uint32_t qpn, const struct rocev2_qp_init_attr *a,
		      int need_written)
{
	struct rocev2_qp *qp = &e->qps[qpn & ROCEV2_QPN_IDX_MASK];
	struct rocev2_pd *pd;
	struct rocev2_cq *scq, *rcq;
	struct rocev2_srq *srq = NULL;
	int err;

	pd = rocev2_pd_get(e, a->pd);
	scq = rocev2_cq_get(e, a->send_cq);
	rcq = rocev2_cq_get(e, a->recv_cq);
	/* A QP refers only to objects of its own context. */
	if (!pd || !scq || !rcq || pd->owner != e->creator || scq->owner != e->creator ||
	    rcq->owner != e->creator)
		return -HAL_EINVAL;
	if (a->srq != ROCEV2_NO_SRQ) {
		srq = rocev2_srq_get(e, a->srq);
		if (!srq || srq->owner != e->creator || a->rq.size != 0)
			return -HAL_EINVAL;
	}
	if (a->max_send_sge > MNIC_MAX_SGE || a->max_recv_sge > MNIC_MAX_SGE)
		return -HAL_EINVAL;
	err = qp_wq_check(e, &a->sq, need_written);
	if (!err)
		err = qp_wq_check(e, &a->rq, need_written);
	if (err)
		return err;

	memset(qp, 0, sizeof(*qp));
	qp->gen = (uint16_t)(qpn >> ROCEV2_QPN_IDX_BITS);
	qp->qpn = qpn;
	qp->state = ROCEV2_QPS_RESET;
	qp->pd = (uint16_t)(pd - e->pds);
	qp->scq = (uint16_t)(scq - e->cqs);
	qp->rcq = (uint16_t)(rcq - e->cqs);
	qp->srq = srq ? (uint32_t)(srq - e->srqs) : ROCEV2_NO_SRQ;
	qp->sq.q = a->sq;
	qp->rq.q = a->rq;
	qp->max_send_sge = a->max_send_sge;
	qp->max_recv_sge = a->max_recv_sge;
	qp->sq_sig_all = a->sq_sig_all != 0;
	qp->owner = e->creator;
	qp->sport = rocev2_udp_sport(qp->qpn);
	qp->attr.path_mtu = ROCEV2_MTU_256;    /* until INIT -> RTR sets it */
	qp->mtu = rocev2_mtu_bytes(ROCEV2_MTU_256);
	/* memset left heap_idx 0, which reads as armed: set every timer idle
	 * before anything may cancel them (comp_reset and mig_reset install
	 * the callbacks). */
	timer_setup(&qp->comp.retrans_timer, NULL, NULL);
	timer_setup(&qp->comp.rnr_timer, NULL, NULL);
	timer_setup(&qp->mig.pause_timer, NULL, NULL);
	timer_setup(&qp->mig.resume_timer, NULL, NULL);
	rocev2_cc_reset(e, qp, 1);
	qp->in_use = 1;
	qp_reset_state(e, qp);
	rocev2_mig_reset(e, qp);

	pd->refcnt++;
	scq->refcnt++;
	rcq->refcnt++;
	if (srq)
		srq->refcnt++;
	qp_wq_mtt_ref(e, qp, 1);
	e->n_qp++;
	return 0;
}

int rocev2_create_qp(struct rocev2 *e, const struct rocev2_qp_init_attr *a, uint32_t *qpn)
{
	uint32_t idx, n;
	uint16_t gen;
	int err;

	if (!a || !qpn)
		return -HAL_EINVAL;
	ROCEV2_POOL_FIND_FREE(e->qps, ROCEV2_MAX_QP, idx);
	if (idx >= ROCEV2_MAX_QP)
		return -HAL_ENOMEM;
	gen = rocev2_pool_next_gen(e->qps[idx].gen, ROCEV2_QPN_GEN_MAX);
	n = (uint32_t)gen << ROCEV2_QPN_IDX_BITS | idx;
	if ((err = rocev2_qp_install(e, n, a, 1)) != 0)
		return err;
	*qpn = n;
	return 0;
}

int rocev2_destroy_qp(struct rocev2 *e, uint32_t qpn)
{
	struct rocev2_qp *qp = rocev2_qp_lookup(e, qpn);

	if (!qp)
		return -HAL_EINVAL;
	qp_stop_timers(e, qp);
	rocev2_mig_reset(e, qp);        /* the migration key goes with the QP */
	qp_unschedule(e, qp);
	e->pds[qp->pd].refcnt--;
	e->cqs[qp->scq].refcnt--;
	e->cqs[qp->rcq].refcnt--;
	if (qp->srq != ROCEV2_NO_SRQ)
		e->srqs[qp->srq].refcnt--;
	qp_wq_mtt_ref(e, qp, -1);
	qp->state = ROCEV2_QPS_RESET;
	qp->in_use = 0;             /* gen is kept: the next owner moves it on */
	e->n_qp--;
	return 0;
}

/* Values of the attributes present in mask (IBA 10.3.1 / ibv_modify_qp). */
static int qp_attr_check(const struct rocev2_qp_attr *a, uint32_t mask)
{
	if ((mask & M(ACCESS_FLAGS)) && (a->qp_access_flags & ~(uint32_t)QP_ACCESS_ALL))
		return -HAL_EINVAL;
	if ((mask & M(PKEY_INDEX)) && a->pkey_index >= QP_PKEY_TABLE_SIZE)
		return -HAL_EINVAL;
	if ((mask & M(PATH_MTU)) &&
	    (a->path_mtu < ROCEV2_MTU_256 || a->path_mtu > ROCEV2_MTU_4096))
		return -HAL_EINVAL;
	if ((mask & M(TIMEOUT)) && a->timeout > 31u)
		return -HAL_EINVAL;
	if ((mask & M(RETRY_CNT)) && a->retry_cnt > 7u)
		return -HAL_EINVAL;
	if ((mask & M(RNR_RETRY)) && a->rnr_retry > 7u)
		return -HAL_EINVAL;
	if ((mask & M(MIN_RNR_TIMER)) && a->min_rnr_timer > 31u)
		return -HAL_EINVAL;
	if ((mask & M(MAX_QP_RD_ATOMIC)) && a->max_rd_atomic > ROCEV2_MAX_RD_ATOMIC)
		return -HAL_EINVAL;
	if ((mask & M(MAX_DEST_RD_ATOMIC)) && a->max_dest_rd_atomic > ROCEV2_MAX_RD_ATOMIC)
		return -HAL_EINVAL;
	if ((mask & M(DEST_QPN)) && a->dest_qp_num > BTH_QPN_MASK)
		return -HAL_EINVAL;
	/* The AV (IBA 11.2.4.1 GRH fields): a unicast destination GID, a
	 * 20-bit flow label, a GID table index.  Whether the port has a
	 * source address of the destination's family is decided per packet
	 * (rocev2_set_gid): the host's table may change under a live QP. */
	if ((mask & M(AV)) &&
	    (!rocev2_gid_unicast(a->av.dgid) || a->av.flow_label > ROCEV2_FLOW_LABEL_MASK ||
	     a->av.sgid_index >= ROCEV2_GID_TBL_LEN))
		return -HAL_EINVAL;
	return 0;
}

/* Store the attributes of mask and mirror them into the stage state that
 * depends on them (as rxe_qp_from_attr). */
static void qp_attr_apply(struct rocev2_qp *qp, const struct rocev2_qp_attr *a, uint32_t mask)
{
	struct rocev2_qp_attr *q = &qp->attr;

	if (mask & M(ACCESS_FLAGS))
		q->qp_access_flags = a->qp_access_flags;
	if (mask & M(PKEY_INDEX))
		q->pkey_index = a->pkey_index;
	if (mask & M(AV))
		q->av = a->av;
	if (mask & M(PATH_MTU)) {
		q->path_mtu = a->path_mtu;
		qp->mtu = rocev2_mtu_bytes(a->path_mtu);
	}
	if (mask & M(TIMEOUT))
		q->timeout = a->timeout;
	if (mask & M(RETRY_CNT)) {
		q->retry_cnt = a->retry_cnt;
		qp->comp.retry_cnt = a->retry_cnt;
	}
	if (mask & M(RNR_RETRY)) {
		q->rnr_retry = a->rnr_retry;
		qp->comp.rnr_retry = a->rnr_retry;
	}
	if (mask & M(RQ_PSN)) {
		q->rq_psn = a->rq_psn & BTH_PSN_MASK;
		qp->resp.psn = q->rq_psn;
	}
	if (mask & M(MAX_QP_RD_ATOMIC))
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & M(MIN_RNR_TIMER))
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & M(SQ_PSN)) {
		q->sq_psn = a->sq_psn & BTH_PSN_MASK;
		qp->req.psn = q->sq_psn;
		qp->comp.psn = q->sq_psn;
	}
	if (mask & M(MAX_DEST_RD_ATOMIC))
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & M(DEST_QPN))
		q->dest_qp_num = a->dest_qp_num;
}

int rocev2_modify_qp(struct rocev2 *e, uint32_t qpn, const struct rocev2_qp_attr *attr,
		     uint32_t mask)
{
	struct rocev2_qp *qp = rocev2_qp_lookup(e, qpn);
	const struct qp_transition *t;
	uint32_t next, given;

	if (!qp || !attr || (mask & ~(uint32_t)QP_MASK_KNOWN))
		return -HAL_EINVAL;
	next = (mask & M(STATE)) ? attr->qp_state : qp->state;
	if (next >= ROCEV2_QPS_NUM || qp->state >= ROCEV2_QPS_NUM)
		return -HAL_EINVAL;
	t = &qp_transitions[qp->state][next];
	given = mask & ~(uint32_t)M(STATE);
	if (!t->valid || (given & t->req) != t->req || (given & ~(t->req | t->opt)))
		return -HAL_EINVAL;
	if (qp_attr_check(attr, given) < 0)
		return -HAL_EINVAL;

	/* Nothing has changed so far: from here on the modify succeeds. */
	switch ((enum qp_action)t->action) {
	case QP_ACT_INIT:
		qp_reset_state(e, qp);
		break;
	case QP_ACT_RESET:
		/* A new connection may follow: its migration key is set anew
		 * (one set between create and INIT survives RESET -> INIT). */
		qp_reset_state(e, qp);
		rocev2_mig_reset(e, qp);
		break;
	case QP_ACT_ERROR:
		/* IBA 10.3.1: a user-requested move to Error flushes like any
		 * other, but is no asynchronous error: no event. */
		rocev2_qp_to_error(e, qp, -1);
		return 0;
	case QP_ACT_NONE:
	case QP_ACT_RTS:
	case QP_ACT_NUM:
		break;
	}
	qp_attr_apply(qp, attr, given);
	rocev2_tx_tmpl_stale(qp);       /* AV, destination QP: net.c builds it anew */
	qp->state = (uint8_t)next;
	qp->attr.qp_state = next;
	if (t->action == QP_ACT_RTS) {
		/* A QP restored (or resumed in place) in RTR owes its peer a
		 * RESUME from here on (migrate.c); the requester waits for its
		 * ACK. */
		rocev2_mig_rts(e, qp);
		rocev2_sched(e, qp);
	}
	return 0;
}

int rocev2_query_qp(struct rocev2 *e, uint32_t qpn, struct rocev2_qp_attr *attr)
{
	struct rocev2_qp *qp = rocev2_qp_lookup(e, qpn);

	if (!qp || !attr)
		return -HAL_EINVAL;
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_psn = qp->req.psn;
	attr->rq_psn = qp->resp.psn;
	return 0;
}

/* IBA 10.3.1 / 11.6.3: the QP stops, every outstanding and posted WQE
 * completes with WR_FLUSH_ERR (the stages' flush hooks), and an affiliated
 * asynchronous event reports why.  Only the move into ERR reports: a QP
 * already in error is flushed again (new WQEs may have been posted) but
 * raises no second event.  The completer's timers stop: after the flush
 * nothing is left to retransmit. */
void rocev2_qp_to_error(struct rocev2 *e, struct rocev2_qp *qp, int event)
{
	int was_error = qp->state == ROCEV2_QPS_ERR;

	qp->state = ROCEV2_QPS_ERR;
	qp->attr.qp_state = ROCEV2_QPS_ERR;
	qp_stop_timers(e, qp);
	rocev2_req_flush(e, qp);
	rocev2_resp_flush(e, qp);
	if (event >= 0 && !was_error)
		rocev2_post_event(e, qp->owner, (uint32_t)event, qp->qpn);
}
