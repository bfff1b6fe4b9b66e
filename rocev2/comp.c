/* The completer (IBA 9.7, requester side; rxe_comp.c): responses in, send
 * completions out; owner of the retransmit and RNR timers.
 *
 * An explicit state machine; each state's helper returns the next one, and
 * every error is a state, so each NAK, retry and error is decided in one
 * place:
 *
 *   GET_ACK -> GET_WQE -> [CHECK_NAK] -> CHECK_PSN -> CHECK_ACK -> READ / ATOMIC / WRITE_SEND
 *                ^  |                        |                         |
 *                |  |                        +-> COMP_WQE (implicit)   +-> COMP_ACK -> UPDATE_COMP
 *                +--+----------------------------------------------------------------------+
 *   CHECK_NAK    (sequence NAKs only: one no responder could have sent is discarded)
 *   ERROR_RETRY  (sequence NAK, lost read responses, retransmit timeout)
 *   RNR_RETRY    (RNR NAK)          PAUSE (MigrOS NAK 0x65)
 *   ERROR        (fatal NAK, bad response, local protection, retries exhausted)
 *   CQ_ERROR     (the send CQ cannot take a completion)
 *   DONE         (timers, requester wake-up)
 *
 * The oldest uncompleted send WQE is comp.wqe_index; its PSN range comes
 * from the requester's track[].  comp.psn is the oldest PSN not yet
 * acknowledged.  A response acknowledges, explicitly or implicitly, every
 * WQE whose last PSN it passes (IBA 9.7: ACKs are cumulative).
 *
 * Loss recovery without the timer (issue 18).  Go-back-N starts as soon as
 * a response shows a loss: a sequence NAK (IBA 9.7.5.2.2), or a response
 * past a read or atomic response that never came (read responses come in
 * PSN order, IBA 9.7.5.1.3: the responder went on without us).  A round
 * under way answers every later sign of the same loss, so these start
 * another only with news:
 * - a sequence NAK past comp.psn acknowledges something (progress): a new
 *   loss.  One at comp.psn while a round resends from there is a copy
 *   (the responder NAKs once per gap until the PSN it waits for arrives,
 *   IBA 9.7.5.2.2) and one behind comp.psn is stale (dropped in CHECK_PSN);
 * - a response gap below comp.gap_psn: the round that a gap at gap_psn
 *   started asks for the responses again from comp.psn, and what is left
 *   of the stream it replaces comes after gap_psn, so a gap below it is
 *   in the new stream (its responses were lost too).
 * At most ROCEV2_FAST_RETRIES rounds per loss (between two steps of
 * progress) start this way; then only the retransmit timer resends, so
 * duplicated or reordered responses cannot make the requester resend
 * without end.  Every decision has its counter (comp_nak_retries,
 * comp_gap_retries, comp_retry_dup_ignored, comp_fast_retry_spent).
 *
 * Retries (IBA 9.7.6.1.3, the retry counter of the QP attributes): one is
 * spent per recovery round that starts without progress (a retransmit
 * timeout, or a NAK or lost response that acknowledges nothing new), and
 * all come back whenever comp.psn moves forward or a WQE completes.  So
 * losses spread over a long message, each recovered, never run out of
 * them, while a peer that answers nothing ends in RETRY_EXC_ERR after
 * retry_cnt retransmissions.
 *
 * The PSNs that only NAKs acknowledged (a sequence or RNR NAK inside the
 * head WQE moves comp.psn without any response confirming it) are
 * [comp.psn - comp.nak_skipped, comp.psn).  A later sequence NAK inside
 * that range is believed (comp.psn goes back to it), and a retransmit
 * timeout rewinds to its start: so a forged NAK ahead of the real loss
 * cannot make the real NAK a "duplicate" and hold every rewind past the
 * packet the responder waits for.
 *
 * Error completions go through rocev2_qp_to_error(): the failed WQE is
 * recorded in req.err_* and rocev2_req_flush() writes its CQE first, then
 * flushes the rest, so that one function writes every error completion in
 * SQ order.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

enum comp_state {
	COMPST_GET_ACK,
	COMPST_GET_WQE,
	COMPST_CHECK_NAK,
	COMPST_CHECK_PSN,
	COMPST_CHECK_ACK,
	COMPST_READ,
	COMPST_ATOMIC,
	COMPST_WRITE_SEND,
	COMPST_COMP_ACK,
	COMPST_COMP_WQE,
	COMPST_UPDATE_COMP,
	COMPST_ERROR_RETRY,
	COMPST_RNR_RETRY,
	COMPST_PAUSE,
	COMPST_ERROR,
	COMPST_CQ_ERROR,
	COMPST_DONE,
	COMPST_NUM,
};

const char *const rocev2_comp_state_names[COMPST_NUM] = {
	[COMPST_GET_ACK] = "GET_ACK",         [COMPST_GET_WQE] = "GET_WQE",
	[COMPST_CHECK_NAK] = "CHECK_NAK",     [COMPST_CHECK_PSN] = "CHECK_PSN",
	[COMPST_CHECK_ACK] = "CHECK_ACK",
	[COMPST_READ] = "READ",               [COMPST_ATOMIC] = "ATOMIC",
	[COMPST_WRITE_SEND] = "WRITE_SEND",   [COMPST_COMP_ACK] = "COMP_ACK",
	[COMPST_COMP_WQE] = "COMP_WQE",       [COMPST_UPDATE_COMP] = "UPDATE_COMP",
	[COMPST_ERROR_RETRY] = "ERROR_RETRY", [COMPST_RNR_RETRY] = "RNR_RETRY",
	[COMPST_PAUSE] = "PAUSE",             [COMPST_ERROR] = "ERROR",
	[COMPST_CQ_ERROR] = "CQ_ERROR",       [COMPST_DONE] = "DONE",
};

/* RNR NAK timer field -> microseconds (IBA 9.7.5.2.8 timer encoding; reference
 * 2.2).  Code 25 is 61.44 ms as in the IBA table: rxe's rnrnak_usec[] has
 * 61410 there, a typo its own constant name (IB_RNR_TIMER_061_44)
 * contradicts. */
static const uint32_t rnr_timer_us[32] = {
	655360, 10,    20,    30,    40,    60,     80,     120,
	160,    240,   320,   480,   640,   960,    1280,   1920,
	2560,   3840,  5120,  7680,  10240, 15360,  20480,  30720,
	40960,  61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* rnr_retry 7 never runs out: of the two 3-bit retry counts of the QP
 * attributes only the RNR retry count gives 7 the meaning "infinite"
 * (IBA 9.7.5.2.8 and the Modify QP attributes, 11.2.4.2).  retry_cnt 7 is
 * seven retries (rxe treats 7 as infinite for both: a dead peer is never
 * detected). */
#define RNR_RETRY_INFINITE 7u

/* Per work request: the completion opcode and which response completes it. */
enum { CWR_RD = 1u << 0, CWR_ATOMIC = 1u << 1 };
static const struct {
	uint8_t valid;
	uint8_t flags;
	uint8_t wc_opcode;              /* enum mnic_wc_opcode */
} comp_wr[MNIC_WR_NUM] = {
	[MNIC_WR_RDMA_WRITE] = { 1, 0, MNIC_WC_RDMA_WRITE },
	[MNIC_WR_RDMA_WRITE_WITH_IMM] = { 1, 0, MNIC_WC_RDMA_WRITE },
	[MNIC_WR_SEND] = { 1, 0, MNIC_WC_SEND },
	[MNIC_WR_SEND_WITH_IMM] = { 1, 0, MNIC_WC_SEND },
	[MNIC_WR_SEND_WITH_INV] = { 1, 0, MNIC_WC_SEND },
	[MNIC_WR_RDMA_READ] = { 1, CWR_RD, MNIC_WC_RDMA_READ },
	[MNIC_WR_ATOMIC_CMP_AND_SWP] = { 1, CWR_ATOMIC, MNIC_WC_COMP_SWAP },
	[MNIC_WR_ATOMIC_FETCH_AND_ADD] = { 1, CWR_ATOMIC, MNIC_WC_FETCH_ADD },
};

static uint8_t wr_flags(uint8_t wr_opcode)
{
	return wr_opcode < MNIC_WR_NUM ? comp_wr[wr_opcode].flags : 0;
}

/* NAK codes (AETH syndrome 011xxxxx, IBA 9.3.5; MigrOS
 * 0x64/0x65): where each goes.  Codes not listed are reserved; as rxe, the
 * requester treats them as a remote operational error. */
#define COMP_CNT(name) offsetof(struct rocev2_counters, name)
struct comp_nak {
	uint8_t valid;
	uint8_t next;                   /* enum comp_state */
	uint8_t status;                 /* COMPST_ERROR: enum mnic_wc_status */
	size_t counter;                 /* offset in struct rocev2_counters */
};
static const struct comp_nak comp_naks[32] = {
	[AETH_NAK_PSN_SEQ_ERROR & 0x1f] = { 1, COMPST_ERROR_RETRY, 0, COMP_CNT(comp_naks_seq) },
	[AETH_NAK_INVALID_REQ & 0x1f] = { 1, COMPST_ERROR, MNIC_WC_REM_INV_REQ_ERR,
					  COMP_CNT(comp_naks_fatal) },
	[AETH_NAK_REM_ACC_ERR & 0x1f] = { 1, COMPST_ERROR, MNIC_WC_REM_ACCESS_ERR,
					  COMP_CNT(comp_naks_fatal) },
	[AETH_NAK_REM_OP_ERR & 0x1f] = { 1, COMPST_ERROR, MNIC_WC_REM_OP_ERR,
					 COMP_CNT(comp_naks_fatal) },
	/* MigrOS: a READ the responder cannot serve (e.g. after a restore). */
	[AETH_NAK_INV_RD_REQ & 0x1f] = { 1, COMPST_ERROR, MNIC_WC_REM_INV_REQ_ERR,
					 COMP_CNT(comp_naks_fatal) },
	[AETH_NAK_STOPPED & 0x1f] = { 1, COMPST_PAUSE, 0, COMP_CNT(comp_naks_stopped) },
};
static const struct comp_nak comp_nak_reserved = {
	1, COMPST_ERROR, MNIC_WC_REM_OP_ERR, COMP_CNT(comp_naks_fatal)
};

struct comp_ctx {
	struct rocev2 *e;
	struct rocev2_qp *qp;
	const struct rocev2_pkt *pkt;   /* NULL: timer run, or the packet is used up */
	struct rocev2_wqe_track *tr;    /* the oldest uncompleted WQE */
	uint8_t timeout;                /* run by the retransmit timer */
	uint8_t progress;               /* a WQE completed or comp.psn moved */
	uint8_t seq_nak;                /* pkt is a PSN sequence error NAK */
	uint8_t gap;                    /* pkt is past a read/atomic response never received */
	uint8_t nak_checked;            /* ... that CHECK_NAK has let through */
	uint8_t status;                 /* COMPST_ERROR */
	uint32_t vendor;                /* COMPST_ERROR: CQE vendor_err */
};

static inline void count(struct rocev2 *e, size_t counter)
{
	(*(uint64_t *)((uint8_t *)&e->cnt + counter))++;
}

static int wqe_started(const struct rocev2_qp *qp, uint32_t index)
{
	return (int32_t)(qp->req.next_new - index) > 0;
}

/* Something the requester sent is waiting for a response. */
static int comp_outstanding(const struct rocev2_qp *qp)
{
	return qp->req.started && wqe_started(qp, qp->comp.wqe_index);
}

static int comp_qp_state_ok(const struct rocev2_qp *qp)
{
	return qp->state == ROCEV2_QPS_RTS || qp->state == ROCEV2_QPS_SQD ||
	       qp->state == ROCEV2_QPS_SQE;
}

static enum comp_state comp_error(struct comp_ctx *c, uint8_t status, uint32_t vendor)
{
	c->status = status;
	c->vendor = vendor;
	return COMPST_ERROR;
}

/* A good response (ACK, read response, atomic ACK): the RNR retries start
 * over (rxe reset_retry_counters); the transport retries follow from the
 * progress it makes (comp_advanced). */
static void comp_reset_rnr_retries(struct rocev2_qp *qp)
{
	qp->comp.rnr_retry = qp->attr.rnr_retry;
}

/* comp.psn moved forward or a WQE completed: the requester made progress,
 * so the transport retries start over and the next loss starts a new
 * recovery round (IBA 9.7.6.1.3: the count is of retries of the same
 * request). */
static void comp_advanced(struct comp_ctx *c)
{
	c->qp->comp.retry_cnt = c->qp->attr.retry_cnt;
	c->qp->comp.started_retry = 0;
	c->qp->comp.fast_retries = 0;
	c->progress = 1;
}

/* The oldest PSN of those below comp.psn that only NAKs acknowledged
 * (comp.psn itself when there are none): the last one a response or a
 * completion confirmed. */
static uint32_t comp_nak_floor(const struct rocev2_comp *comp)
{
	return (comp->psn - comp->nak_skipped) & BTH_PSN_MASK;
}

/* The head WQE's scatter list (READ data, atomic result), read once. */
static int comp_load_wqe(struct comp_ctx *c)
{
	struct rocev2_comp *comp = &c->qp->comp;

	if (comp->wqe_loaded)
		return 0;
	if (rocev2_sq_read(c->e, c->qp, comp->wqe_index, &comp->wqe) < 0 ||
	    comp->wqe.opcode != c->tr->wr_opcode)
		return -HAL_EINVAL;     /* the host rewrote a WQE in flight */
	comp->wqe_loaded = 1;
	return 0;
}

/* Retire the head WQE successfully.  IBA 10.7.3.1: a CQE only when the
 * WQE asked for one (or the QP signals all); the SQ slot is free either
 * way, and the host learns that from the next CQE (comp.wqe_index is the
 * SQ consumer index). */
static int comp_complete(struct comp_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	struct rocev2_comp *comp = &qp->comp;
	const struct rocev2_wqe_track *tr = c->tr;
	int rc = 0;

	if ((wr_flags(tr->wr_opcode) & (CWR_RD | CWR_ATOMIC)) && qp->req.rd_atomic_outstanding)
		qp->req.rd_atomic_outstanding--;
	if ((tr->send_flags & MNIC_SEND_SIGNALED) || qp->sq_sig_all) {
		struct mnic_cqe cqe;
		uint64_t wr_id = 0;

		if (comp->wqe_loaded)
			wr_id = comp->wqe.wr_id;
		else if (rocev2_sq_read(c->e, qp, comp->wqe_index, &comp->wqe) != -HAL_EFAULT)
			wr_id = comp->wqe.wr_id;   /* the copy is complete even if invalid */
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = wr_id;
		cqe.status = MNIC_WC_SUCCESS;
		cqe.opcode = comp_wr[tr->wr_opcode < MNIC_WR_NUM ? tr->wr_opcode : 0].wc_opcode;
		cqe.byte_len = tr->length;      /* READ: bytes read; atomics: 8 */
		cqe.qp_num = qp->qpn;
		rc = rocev2_cq_post(c->e, qp->scq, &cqe);
	}
	comp->wqe_index++;
	qp->sq.ci = comp->wqe_index;
	comp->wqe_loaded = 0;
	comp->read_offset = 0;
	comp->nak_skipped = 0;          /* acknowledged for good: the WQE is retired */
	c->e->cnt.comp_completions++;
	comp_advanced(c);
	return rc;
}

/* MigrOS (reference 1(c) steps 5-6): the responder ACKs the RESUME at its
 * PSN; version 1 adds an extension echoing its epoch (with a MAC when
 * keyed), so neither a duplicate plain ACK at that PSN nor a replayed ACK
 * of an earlier RESUME completes it (migrate.c).  Nothing else is taken:
 * the responses to what we sent before the stop are resent after the
 * rewind (rocev2_mig_resume_acked). */
static enum comp_state st_resume_ack(struct comp_ctx *c)
{
	const struct rocev2_pkt *pkt = c->pkt;

	if (pkt->opcode == OP_ACKNOWLEDGE &&
	    (aeth_syndrome(pkt_aeth(pkt)) & AETH_TYPE_MASK) == AETH_ACK &&
	    rocev2_mig_is_resume_ack(c->e, c->qp, pkt)) {
		rocev2_mig_resume_acked(c->e, c->qp);
		return COMPST_DONE;
	}
	c->e->cnt.mig_resume_wait_drops++;
	return COMPST_DONE;
}

static enum comp_state st_get_ack(struct comp_ctx *c)
{
	struct rocev2_qp *qp = c->qp;

	if (!comp_qp_state_ok(qp)) {
		c->e->cnt.comp_bad_state++;
		return COMPST_DONE;
	}
	/* MigrOS: while stopped (checkpoint) the state must not move; while
	 * paused the peer is stopped and everything will be retransmitted
	 * after its RESUME (reference 1(e), check_psn). */
	if (MIG_STOPPED(qp)) {
		c->e->cnt.comp_paused_drops++;
		return COMPST_DONE;
	}
	/* Our RESUME is out (restored, or a dump aborted): its ACK and nothing
	 * else.  Paused too (the peer stopped as well) still takes it. */
	if (MIG_RESUME_PENDING(qp))
		return st_resume_ack(c);
	if (MIG_PAUSED(qp)) {
		c->e->cnt.comp_paused_drops++;
		return COMPST_DONE;
	}
	/* Only NAK_STOPPED and the RESUME's ACK carry a payload (the
	 * migration extension).  A NAK_STOPPED pauses only with a good epoch
	 * and MAC, checked before it moves comp.psn (migrate.c); a RESUME's
	 * ACK that comes when none is pending is a late duplicate. */
	if (c->pkt->opcode == OP_ACKNOWLEDGE) {
		if (aeth_syndrome(pkt_aeth(c->pkt)) == AETH_NAK_STOPPED) {
			if (rocev2_mig_check_nak_stopped(c->e, qp, c->pkt) < 0)
				return COMPST_DONE;
		} else if (c->pkt->paylen) {
			c->e->cnt.comp_dup_acks++;
			return COMPST_DONE;
		}
	}
	return COMPST_GET_WQE;
}

static enum comp_state st_get_wqe(struct comp_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	uint32_t index = qp->comp.wqe_index;

	c->tr = &qp->req.track[index % ROCEV2_MAX_INFLIGHT_WQE];
	/* A WQE the requester found unusable: complete it now that every
	 * WQE before it has completed. */
	if (qp->req.err_pending && qp->req.err_index == index)
		return comp_error(c, qp->req.err_status, qp->req.err_vendor);
	if (!comp_outstanding(qp)) {
		if (c->pkt)
			c->e->cnt.comp_dup_acks++;   /* nothing waits for it */
		return COMPST_DONE;
	}
	if (!c->pkt)
		return c->timeout ? COMPST_ERROR_RETRY : COMPST_DONE;
	return c->seq_nak && !c->nak_checked ? COMPST_CHECK_NAK : COMPST_CHECK_PSN;
}

/* IBA 9.7.5.2.2: a responder sends a PSN sequence error NAK when a
 * request arrives past the PSN it expects, which the NAK carries; every
 * PSN before it arrived (the NAK acknowledges them).  Two things follow
 * that a forged or corrupt NAK need not respect, and it is discarded
 * before it acknowledges anything:
 * - its PSN lies below the last request sent (one past it never left);
 * - no READ or atomic lies before it, or straddles it: their responses
 *   carry their data, and a NAK past one would complete it without them
 *   (a responder that executed it expects the PSN after its response
 *   range, never one inside it).
 * At most ROCEV2_MAX_INFLIGHT_WQE WQEs are walked (those sent). */
static enum comp_state st_check_nak(struct comp_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	uint32_t psn = c->pkt->psn;
	uint32_t i;

	c->nak_checked = 1;
	if (psn_cmp(psn_add(psn, 1), qp->req.psn_hw) >= 0) {
		c->e->cnt.comp_nak_bogus++;
		return COMPST_DONE;
	}
	for (i = qp->comp.wqe_index; wqe_started(qp, i); i++) {
		const struct rocev2_wqe_track *tr = &qp->req.track[i % ROCEV2_MAX_INFLIGHT_WQE];

		if (psn_cmp(psn, tr->first_psn) <= 0)
			break;
		if (wr_flags(tr->wr_opcode) & (CWR_RD | CWR_ATOMIC)) {
			c->e->cnt.comp_nak_bogus++;
			return COMPST_DONE;
		}
		if (psn_cmp(psn, tr->last_psn) <= 0)
			break;
	}
	return COMPST_CHECK_PSN;
}

static enum comp_state st_check_psn(struct comp_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	const struct rocev2_pkt *pkt = c->pkt;
	uint8_t flags = wr_flags(c->tr->wr_opcode);

	/* Never sent: a stray or forged response must not complete WQEs
	 * whose packets have not all gone out. */
	if (psn_cmp(pkt->psn, qp->req.psn_hw) >= 0) {
		c->e->cnt.comp_bad_resp++;
		return COMPST_DONE;
	}
	/* Past the head WQE: it is implicitly acknowledged (IBA 9.7),
	 * unless it is a READ or atomic, whose responses carry its data: the
	 * responder went on, so they were lost (IBA 9.7.5.1.3) -> retry. */
	if (psn_cmp(pkt->psn, c->tr->last_psn) > 0) {
		if (!(flags & (CWR_RD | CWR_ATOMIC)))
			return COMPST_COMP_WQE;
		c->gap = 1;
		return COMPST_ERROR_RETRY;
	}
	/* Already acknowledged: a duplicate.  Except a sequence NAK that
	 * contradicts only what an earlier sequence NAK acknowledged: of
	 * the two, it may be the responder's (see the header). */
	if (psn_cmp(pkt->psn, qp->comp.psn) < 0 &&
	    !(c->seq_nak && psn_cmp(pkt->psn, comp_nak_floor(&qp->comp)) >= 0)) {
		c->e->cnt.comp_dup_acks++;
		return COMPST_DONE;
	}
	/* Read responses and atomic ACKs arrive in PSN order: one ahead of
	 * comp.psn means one before it was lost.  A read response starts the
	 * retry at once (see the header); anything else there is dropped. */
	if (psn_cmp(pkt->psn, qp->comp.psn) > 0 && (flags & (CWR_RD | CWR_ATOMIC))) {
		c->e->cnt.comp_out_of_seq++;
		if (!(pkt->info->mask & OPM_READ))
			return COMPST_DONE;
		c->gap = 1;
		return COMPST_ERROR_RETRY;
	}
	return COMPST_CHECK_ACK;
}

/* PSN sequence error NAK (IBA 9.7.5.2.2, checked by CHECK_NAK): everything
 * before its PSN arrived (implicit ACK), the packet at it did not.  Ahead
 * of comp.psn it is progress, acknowledged by this NAK only
 * (comp.nak_skipped); behind it (inside that range, CHECK_PSN) it takes
 * back what an earlier NAK claimed, and the recovery round under way,
 * which resends from the wrong PSN, gives way to a new one. */
static void comp_seq_nak_psn(struct comp_ctx *c)
{
	struct rocev2_comp *comp = &c->qp->comp;
	uint32_t psn = c->pkt->psn;

	if (psn_cmp(psn, comp->psn) > 0) {
		comp->nak_skipped += (psn - comp->psn) & BTH_PSN_MASK;
		comp->psn = psn;
		comp_advanced(c);
	} else if (psn_cmp(psn, comp->psn) < 0) {
		comp->nak_skipped -= (comp->psn - psn) & BTH_PSN_MASK;
		comp->psn = psn;
		comp->started_retry = 0;
	}
}

/* Opcode sequence and syndrome of a response at a PSN we expect. */
static enum comp_state st_check_ack(struct comp_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	const struct rocev2_pkt *pkt = c->pkt;
	uint32_t mask = pkt->info->mask;
	uint8_t flags = wr_flags(c->tr->wr_opcode);
	uint8_t syn = (mask & OPM_AETH) ? aeth_syndrome(pkt_aeth(pkt)) : AETH_ACK;
	const struct comp_nak *nak;

	/* Read responses come FIRST MIDDLE* LAST, or ONLY (IBA 9.4.3).  Out of
	 * sequence (e.g. the tail of a stream the requester has already asked
	 * for again) is dropped. */
	if (qp->comp.opcode == 0xff ? !(mask & OPM_START)
				    : pkt->opcode != OP_READ_RESPONSE_MIDDLE &&
					      pkt->opcode != OP_READ_RESPONSE_LAST) {
		c->e->cnt.comp_out_of_seq++;
		return COMPST_DONE;
	}
	if ((mask & (OPM_READ | OPM_ATOMIC)) && (syn & AETH_TYPE_MASK) != AETH_ACK) {
		c->e->cnt.comp_bad_resp++;      /* data responses carry an ACK syndrome */
		return COMPST_DONE;
	}
	if (mask & OPM_READ) {
		if (!(flags & CWR_RD)) {
			c->e->cnt.comp_bad_resp++;
			return comp_error(c, MNIC_WC_BAD_RESP_ERR, ROCEV2_VERR_BAD_RESP);
		}
		comp_reset_rnr_retries(qp);
		return COMPST_READ;
	}
	if (mask & OPM_ATOMIC) {
		if (!(flags & CWR_ATOMIC)) {
			c->e->cnt.comp_bad_resp++;
			return comp_error(c, MNIC_WC_BAD_RESP_ERR, ROCEV2_VERR_BAD_RESP);
		}
		comp_reset_rnr_retries(qp);
		return COMPST_ATOMIC;
	}
	/* ACKNOWLEDGE (AETH, IBA 9.3.5).  The credit field of an ACK is not used:
	 * as rxe, we neither send nor honour end-to-end credits (IBA 9.7.7.2
	 * allows a requester to ignore them when the responder advertises
	 * none, and we post receive WQEs by RNR NAK instead). */
	switch (syn & AETH_TYPE_MASK) {
	case AETH_ACK:
		/* A READ or atomic completes with its own responses, which
		 * carry its data (IBA 9.7.5.1.3; the responder never ACKs
		 * one), never with a plain ACK at its PSN: that is a late
		 * ACK of a RESUME sent again (PSN = comp.psn, migrate.c), or
		 * stray.  Dropped; the retransmit timer recovers a lost
		 * response. */
		if (flags & (CWR_RD | CWR_ATOMIC)) {
			c->e->cnt.comp_dup_acks++;
			return COMPST_DONE;
		}
		c->e->cnt.comp_acks++;
		comp_reset_rnr_retries(qp);
		return COMPST_WRITE_SEND;
	case AETH_RNR_NAK:
		c->e->cnt.comp_naks_rnr++;
		return COMPST_RNR_RETRY;
	case AETH_NAK:
		nak = comp_naks[syn & 0x1f].valid ? &comp_naks[syn & 0x1f] : &comp_nak_reserved;
		count(c->e, nak->counter);
		if (nak->next == COMPST_ERROR_RETRY) {
			comp_seq_nak_psn(c);
		} else if (nak->next == COMPST_PAUSE) {
			/* MigrOS NAK_STOPPED carries the responder's expected
			 * PSN: everything before it arrived (implicit ACK). */
			if (psn_cmp(pkt->psn, qp->comp.psn) > 0) {
				qp->comp.psn = pkt->psn;
				c->progress = 1;
			}
		}
		return nak->next == COMPST_ERROR ? comp_error(c, nak->status, syn)
						 : (enum comp_state)nak->next;
	default:
		c->e->cnt.comp_bad_resp++;      /* reserved syndrome type 010 */
		return COMPST_DONE;
	}
}

/* RDMA READ response data into the READ's scatter list at read_offset
 * (IBA 9.4.3: FIRST and MIDDLE carry exactly one PMTU, the END packet
 * the rest). */
static enum comp_state st_read(struct comp_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	struct rocev2_comp *comp = &qp->comp;
	const struct rocev2_pkt *pkt = c->pkt;
	int end = !!(pkt->info->mask & OPM_END);
	uint64_t remaining = c->tr->length - comp->read_offset;
	int rc;

	if (pkt->paylen > remaining || pkt->paylen > qp->mtu ||
	    (end ? pkt->paylen != remaining : pkt->paylen != qp->mtu)) {
		c->e->cnt.comp_bad_resp++;
		return comp_error(c, MNIC_WC_BAD_RESP_ERR, ROCEV2_VERR_BAD_RESP);
	}
	if (comp_load_wqe(c) < 0)
		return comp_error(c, MNIC_WC_LOC_QP_OP_ERR, ROCEV2_VERR_WQE_CHANGED);
	if (pkt->paylen) {
		rc = rocev2_sge_scatter(c->e, qp, comp->wqe.sge, comp->wqe.num_sge, comp->read_offset,
					pkt->payload, pkt->paylen);
		if (rc < 0)
			return comp_error(c, rc == -HAL_EFAULT ? MNIC_WC_LOC_PROT_ERR
							      : MNIC_WC_LOC_LEN_ERR,
					  ROCEV2_VERR_SCATTER);
	}
	comp->read_offset += pkt->paylen;
	return end ? COMPST_COMP_ACK : COMPST_UPDATE_COMP;
}

/* ATOMIC ACKNOWLEDGE: the original remote value into the local 8 bytes
 * (IBA 9.4; host memory is little-endian, queues.h). */
static enum comp_state st_atomic(struct comp_ctx *c)
{
	uint64_t orig = atmack_orig(pkt_atmack(c->pkt));
	uint8_t le[8];
	unsigned i;
	int rc;

	for (i = 0; i < 8; i++)
		le[i] = (uint8_t)(orig >> (8 * i));
	if (comp_load_wqe(c) < 0)
		return comp_error(c, MNIC_WC_LOC_QP_OP_ERR, ROCEV2_VERR_WQE_CHANGED);
	rc = rocev2_sge_scatter(c->e, c->qp, c->qp->comp.wqe.sge, c->qp->comp.wqe.num_sge, 0, le,
				sizeof(le));
	if (rc < 0)
		return comp_error(c, rc == -HAL_EFAULT ? MNIC_WC_LOC_PROT_ERR : MNIC_WC_LOC_LEN_ERR,
				  ROCEV2_VERR_SCATTER);
	return COMPST_COMP_ACK;
}

static enum comp_state st_comp_wqe(struct comp_ctx *c)
{
	struct rocev2_comp *comp = &c->qp->comp;
	int rc = comp_complete(c);

	if (psn_cmp(c->tr->last_psn, comp->psn) >= 0)
		comp->psn = psn_add(c->tr->last_psn, 1);
	comp->opcode = 0xff;
	return rc < 0 ? COMPST_CQ_ERROR : COMPST_GET_WQE;
}

static enum comp_state st_update_comp(struct comp_ctx *c)
{
	struct rocev2_comp *comp = &c->qp->comp;
	const struct rocev2_pkt *pkt = c->pkt;

	comp->opcode = (pkt->info->mask & OPM_END) ? 0xff : pkt->opcode;
	if (psn_cmp(pkt->psn, comp->psn) >= 0) {
		comp->psn = psn_add(pkt->psn, 1);
		comp->nak_skipped = 0;  /* a response confirms every PSN up to it */
		comp_advanced(c);
	}
	c->pkt = NULL;                  /* used up: look at the new head once more */
	return COMPST_GET_WQE;
}

/* A response that shows a loss: may it start a round (see the header)? */
static int comp_fast_retry_ok(struct comp_ctx *c)
{
	struct rocev2_comp *comp = &c->qp->comp;

	if (comp->started_retry && !(c->gap && psn_cmp(c->pkt->psn, comp->gap_psn) < 0)) {
		c->e->cnt.comp_retry_dup_ignored++;
		return 0;
	}
	if (comp->fast_retries >= ROCEV2_FAST_RETRIES) {
		c->e->cnt.comp_fast_retry_spent++;
		return 0;
	}
	return 1;
}

/* rxe COMPST_ERROR_RETRY: go back to comp.psn, within retry_cnt.  A
 * round that starts after progress (comp_advanced gave the retries back)
 * spends one too, so retry_cnt 0 never retransmits. */
static enum comp_state st_error_retry(struct comp_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	struct rocev2_comp *comp = &qp->comp;

	if (!comp_outstanding(qp))
		return COMPST_DONE;
	if (!c->timeout && !comp_fast_retry_ok(c))
		return COMPST_DONE;
	if (comp->retry_cnt == 0) {
		c->e->cnt.comp_retry_exceeded++;
		return comp_error(c, MNIC_WC_RETRY_EXC_ERR, ROCEV2_VERR_RETRY);
	}
	comp->retry_cnt--;
	if (c->timeout) {
		c->e->cnt.comp_retry_timeouts++;
		/* Nothing came since sequence NAKs moved comp.psn: send again
		 * from the last PSN a response confirmed. */
		comp->psn = comp_nak_floor(comp);
		comp->nak_skipped = 0;
	} else {
		comp->fast_retries++;
		if (c->gap)
			c->e->cnt.comp_gap_retries++;
		else
			c->e->cnt.comp_nak_retries++;
	}
	/* What is left of a response stream the round replaces lies past
	 * the gap that started it; after a NAK or a timeout none is left. */
	comp->gap_psn = c->gap ? c->pkt->psn : qp->req.psn_hw;
	comp->started_retry = 1;
	qp->req.need_retry = 1;
	qp->req.repeat_head = 1;        /* req.c: its first packet twice */
	rocev2_sched(c->e, qp);
	return COMPST_DONE;
}

/* IBA 9.7.5.2.8: wait the time the NAK asks for, then send again from its
 * PSN (which the packets before it implicitly acknowledged). */
static enum comp_state st_rnr_retry(struct comp_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	struct rocev2_comp *comp = &qp->comp;
	const struct rocev2_pkt *pkt = c->pkt;
	uint8_t syn = aeth_syndrome(pkt_aeth(pkt));

	if (comp->rnr_retry == 0) {
		c->e->cnt.comp_rnr_exceeded++;
		return comp_error(c, MNIC_WC_RNR_RETRY_EXC_ERR, syn);
	}
	if (comp->rnr_retry != RNR_RETRY_INFINITE)
		comp->rnr_retry--;
	/* Like a sequence NAK, it acknowledges what lies before its PSN. */
	if (psn_cmp(pkt->psn, comp->psn) > 0) {
		comp->nak_skipped += (pkt->psn - comp->psn) & BTH_PSN_MASK;
		comp->psn = pkt->psn;
		comp_advanced(c);
	}
	/* The requester stays quiet until the RNR timer fires; the retransmit
	 * timer would only resend early. */
	comp->rnr_wait = 1;
	timer_cancel(&c->e->timers, &comp->retrans_timer);
	if (timer_arm(&c->e->timers, &comp->rnr_timer,
			 rocev2_now(c->e) + (uint64_t)rnr_timer_us[syn & 0x1f] * 1000u) < 0) {
		/* Timer heap full (counted there): resend now rather than
		 * never. */
		comp->rnr_wait = 0;
		qp->req.need_retry = 1;
		rocev2_sched(c->e, qp);
	}
	return COMPST_DONE;
}

/* MigrOS NAK_STOPPED: the peer QP is being checkpointed.  Send nothing
 * until its RESUME (the responder clears paused and rewinds the
 * requester); the retransmit timer keeps running without consuming
 * retries; the pause timer bounds the wait (migrate.c). */
static enum comp_state st_pause(struct comp_ctx *c)
{
	c->qp->paused = 1;
	rocev2_mig_paused(c->e, c->qp);
	return COMPST_DONE;
}

/* Complete the head WQE with c->status and move the QP to Error
 * (IBA 10.8.3.1); the flush writes that CQE before the flushed ones. */
static enum comp_state st_error(struct comp_ctx *c)
{
	struct rocev2_req *req = &c->qp->req;

	if (!(req->err_pending && req->err_index == c->qp->comp.wqe_index)) {
		req->err_pending = 1;
		req->err_index = c->qp->comp.wqe_index;
		req->err_status = c->status;
		req->err_vendor = c->vendor;
	}
	/* Reported by the CQE: no asynchronous event (IBA 11.6.3 lists none
	 * for requester completion errors), except an SQ that cannot be
	 * read at all. */
	rocev2_qp_to_error(c->e, c->qp,
			   req->err_vendor == ROCEV2_VERR_WQE_DMA ? ROCEV2_EVENT_QP_FATAL : -1);
	c->progress = 0;
	return COMPST_DONE;
}

/* The send CQ refused the completion just retired (full: IBA 11.6.2 makes
 * the overrun a CQ error, which cq.c reports with CQ_ERR; or its memory
 * failed).  A completion is lost, so the QP cannot go on: Error with the
 * affiliated QP_FATAL event, as the responder does for its receive CQ
 * (resp.c RESPST_ERR_CQ_OVERFLOW).  The flush finds the CQ in error. */
static enum comp_state st_cq_error(struct comp_ctx *c)
{
	c->e->cnt.comp_cq_errors++;
	rocev2_qp_to_error(c->e, c->qp, ROCEV2_EVENT_QP_FATAL);
	c->progress = 0;
	return COMPST_DONE;
}

/* After a run: timers and the requester follow the progress made. */
static void comp_done(struct comp_ctx *c)
{
	struct rocev2 *e = c->e;
	struct rocev2_qp *qp = c->qp;
	struct rocev2_comp *comp = &qp->comp;

	if (!c->progress || !comp_qp_state_ok(qp))
		return;
	/* rxe: the retransmit timer restarts on every progress and stops
	 * when nothing is outstanding. */
	if (comp->rnr_wait || !comp_outstanding(qp) || !qp->attr.timeout)
		timer_cancel(&e->timers, &comp->retrans_timer);
	else
		timer_arm(&e->timers, &comp->retrans_timer,
			     rocev2_now(e) + ROCEV2_RETRANS_NS(qp->attr.timeout));
	/* The window, the in-flight WQEs, rd/atomic credits or a fence may
	 * have opened; a requester behind comp has to catch up; in SQD the
	 * requester reports the drained SQ. */
	if (qp->req.state == REQ_STATE_WAIT || qp->state == ROCEV2_QPS_SQD ||
	    (int32_t)(qp->req.wqe_index - comp->wqe_index) < 0 ||
	    psn_cmp(qp->req.psn, comp->psn) < 0)
		rocev2_sched(e, qp);
}

static void comp_run(struct comp_ctx *c, enum comp_state state)
{
	while (state != COMPST_DONE) {
		switch (state) {
		case COMPST_GET_ACK:
			state = st_get_ack(c);
			break;
		case COMPST_GET_WQE:
			state = st_get_wqe(c);
			break;
		case COMPST_CHECK_NAK:
			state = st_check_nak(c);
			break;
		case COMPST_CHECK_PSN:
			state = st_check_psn(c);
			break;
		case COMPST_CHECK_ACK:
			state = st_check_ack(c);
			break;
		case COMPST_READ:
			state = st_read(c);
			break;
		case COMPST_ATOMIC:
			state = st_atomic(c);
			break;
		case COMPST_WRITE_SEND:
			/* A multi-packet message is complete at its last PSN;
			 * before that the ACK only moves comp.psn. */
			state = c->pkt->psn == c->tr->last_psn ? COMPST_COMP_ACK : COMPST_UPDATE_COMP;
			break;
		case COMPST_COMP_ACK:
			state = comp_complete(c) < 0 ? COMPST_CQ_ERROR : COMPST_UPDATE_COMP;
			break;
		case COMPST_COMP_WQE:
			state = st_comp_wqe(c);
			break;
		case COMPST_UPDATE_COMP:
			state = st_update_comp(c);
			break;
		case COMPST_ERROR_RETRY:
			state = st_error_retry(c);
			break;
		case COMPST_RNR_RETRY:
			state = st_rnr_retry(c);
			break;
		case COMPST_PAUSE:
			state = st_pause(c);
			break;
		case COMPST_ERROR:
			state = st_error(c);
			break;
		case COMPST_CQ_ERROR:
			state = st_cq_error(c);
			break;
		case COMPST_DONE:
		case COMPST_NUM:
			state = COMPST_DONE;
			break;
		}
		c->qp->comp.last_state = (uint8_t)state;
	}
	comp_done(c);
}

void rocev2_comp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	struct comp_ctx c = { .e = e, .qp = qp, .pkt = pkt };

	c.seq_nak = pkt->opcode == OP_ACKNOWLEDGE &&
		    aeth_syndrome(pkt_aeth(pkt)) == AETH_NAK_PSN_SEQ_ERROR;
	comp_run(&c, COMPST_GET_ACK);
}

#define QP_OF(t, member) \
	((struct rocev2_qp *)(void *)((uint8_t *)(t) - offsetof(struct rocev2_qp, member)))

/* Retransmit (transport) timer: no response within the timeout. */
static void comp_retrans_timeout(struct timer *t, void *arg)
{
	struct rocev2 *e = arg;
	struct rocev2_qp *qp = QP_OF(t, comp.retrans_timer);
	struct comp_ctx c = { .e = e, .qp = qp, .timeout = 1 };

	if (!qp->in_use || !comp_qp_state_ok(qp) || !comp_outstanding(qp) || qp->comp.rnr_wait)
		return;
	if (MIG_STOPPED(qp) || MIG_PAUSED(qp) || MIG_RESUME_PENDING(qp)) {
		/* MigrOS: the peer cannot answer while stopped, and nothing is
		 * resent before our RESUME is ACKed (its own timer repeats it);
		 * keep watching without spending retries. */
		if (qp->attr.timeout)
			timer_arm(&e->timers, t,
				     rocev2_now(e) + ROCEV2_RETRANS_NS(qp->attr.timeout));
		return;
	}
	comp_run(&c, COMPST_GET_WQE);
}

/* RNR timer: the responder should have a receive WQE by now. */
static void comp_rnr_timeout(struct timer *t, void *arg)
{
	struct rocev2 *e = arg;
	struct rocev2_qp *qp = QP_OF(t, comp.rnr_timer);

	if (!qp->in_use)
		return;
	qp->comp.rnr_wait = 0;
	if (!comp_qp_state_ok(qp))
		return;
	qp->req.need_retry = 1;
	rocev2_sched(e, qp);
}

void rocev2_comp_reset(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_comp *comp = &qp->comp;

	/* The timers may be armed (reset from RTS): take them out of the heap
	 * before the memset forgets that they are in it. */
	timer_cancel(&e->timers, &comp->retrans_timer);
	timer_cancel(&e->timers, &comp->rnr_timer);
	memset(comp, 0, sizeof(*comp));
	timer_setup(&comp->retrans_timer, comp_retrans_timeout, e);
	timer_setup(&comp->rnr_timer, comp_rnr_timeout, e);
	comp->opcode = 0xff;
	comp->retry_cnt = qp->attr.retry_cnt;
	comp->rnr_retry = qp->attr.rnr_retry;
	comp->last_state = COMPST_DONE;
}
