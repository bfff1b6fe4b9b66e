/* The requester (IBA 9.7, rxe_req.c): send WQEs in, request packets out.
 *
 * One pass of rocev2_req_run() walks an explicit state machine, one step
 * per state, until the budget is spent or something makes it wait:
 *
 *   CHECK_QP -> [RETRY] -> NEXT_WQE -> CHECK_LIMITS -> BUILD -> SEND -> UPDATE
 *   (CHECK_LIMITS includes the DCQCN pacer once a CNP has cut the rate)
 *                              ^                                        |
 *                              +----------------------------------------+
 *   errors: NEXT_WQE / BUILD -> WQE_ERROR;   waits and stops: EXIT
 *
 * PSN bookkeeping (IBA 9.7.1): a WQE occupies the PSN range
 * [first_psn, last_psn], fixed when its first packet goes out and kept in
 * req.track[] until the completer retires it.  SEND and WRITE take one PSN
 * per packet, a READ request one PSN per response packet it asks for, an
 * atomic one.  req.psn is the next PSN to send; after a rewind
 * (need_retry) it goes back to comp.psn and the WQEs from comp.wqe_index
 * are sent again from the packet the completer still waits for.
 *
 * The host owns the SQ ring: a WQE is read (rocev2_sq_read) into req.wqe
 * and checked before anything of it is sent, and checked again against
 * req.track[] when it is read a second time for a retransmission.
 *
 * A WQE that cannot be executed (IBA 10.8.3: invalid opcode, length,
 * alignment, local protection) is recorded in req.err_* and sending stops
 * there.  Its error CQE is written, in order, by rocev2_req_flush() when
 * the QP moves to Error: at once if it is the oldest WQE, otherwise when
 * the completer has retired the WQEs before it.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

/* req.track[].state */
enum rocev2_wqe_state {
	WQE_STATE_POSTED = 0,           /* read from the SQ, nothing sent yet */
	WQE_STATE_PENDING = 1,          /* first packet sent: PSN range fixed */
};

enum req_step {
	REQST_CHECK_QP,                 /* QP state, migration flags, first run */
	REQST_RETRY,                    /* rewind to the completer's position */
	REQST_NEXT_WQE,                 /* the WQE at req.wqe_index: fetch and check */
	REQST_CHECK_LIMITS,             /* fence, rd/atomic credits, PSN window, budget */
	REQST_BUILD,                    /* headers and payload into e->tx */
	REQST_SEND,
	REQST_UPDATE,                   /* PSN, offset, track, timer */
	REQST_WQE_ERROR,                /* the WQE cannot be executed */
	REQST_EXIT,
	REQST_NUM,
};

const char *const rocev2_req_step_names[REQST_NUM] = {
	[REQST_CHECK_QP] = "CHECK_QP",     [REQST_RETRY] = "RETRY",
	[REQST_NEXT_WQE] = "NEXT_WQE",     [REQST_CHECK_LIMITS] = "CHECK_LIMITS",
	[REQST_BUILD] = "BUILD",           [REQST_SEND] = "SEND",
	[REQST_UPDATE] = "UPDATE",         [REQST_WQE_ERROR] = "WQE_ERROR",
	[REQST_EXIT] = "EXIT",
};

/* What a work request becomes on the wire.  The extension headers of each
 * packet follow from its opcode's row in rocev2_opcodes[] (RETH, ImmDt,
 * IETH, AtomicETH), so only the opcode per position is listed here. */
enum {
	WR_PAYLOAD = 1u << 0,           /* SEND/WRITE: data, one PSN per packet */
	WR_READ = 1u << 1,              /* one request, a PSN per response packet */
	WR_ATOMIC = 1u << 2,            /* one request, one PSN, 8-byte result */
	WR_SE = 1u << 3,                /* BTH SE meaningful (IBA 9.2: SEND, WRITE w/ imm) */
};
enum { POS_FIRST, POS_MIDDLE, POS_LAST, POS_ONLY, POS_NUM };

struct req_wr_info {
	uint8_t valid;
	uint8_t flags;
	uint8_t wc_opcode;              /* enum mnic_wc_opcode (flush CQEs) */
	uint8_t opcode[POS_NUM];
};

#define WR_OPS(f, m, l, o) { f, m, l, o }
static const struct req_wr_info req_wr_info[MNIC_WR_NUM] = {
	[MNIC_WR_RDMA_WRITE] = { 1, WR_PAYLOAD, MNIC_WC_RDMA_WRITE,
		WR_OPS(OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST, OP_WRITE_ONLY) },
	[MNIC_WR_RDMA_WRITE_WITH_IMM] = { 1, WR_PAYLOAD | WR_SE, MNIC_WC_RDMA_WRITE,
		WR_OPS(OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST_IMM, OP_WRITE_ONLY_IMM) },
	[MNIC_WR_SEND] = { 1, WR_PAYLOAD | WR_SE, MNIC_WC_SEND,
		WR_OPS(OP_SEND_FIRST, OP_SEND_MIDDLE, OP_SEND_LAST, OP_SEND_ONLY) },
	[MNIC_WR_SEND_WITH_IMM] = { 1, WR_PAYLOAD | WR_SE, MNIC_WC_SEND,
		WR_OPS(OP_SEND_FIRST, OP_SEND_MIDDLE, OP_SEND_LAST_IMM, OP_SEND_ONLY_IMM) },
	[MNIC_WR_SEND_WITH_INV] = { 1, WR_PAYLOAD | WR_SE, MNIC_WC_SEND,
		WR_OPS(OP_SEND_FIRST, OP_SEND_MIDDLE, OP_SEND_LAST_INV, OP_SEND_ONLY_INV) },
	[MNIC_WR_RDMA_READ] = { 1, WR_READ, MNIC_WC_RDMA_READ,
		WR_OPS(OP_READ_REQUEST, OP_READ_REQUEST, OP_READ_REQUEST, OP_READ_REQUEST) },
	[MNIC_WR_ATOMIC_CMP_AND_SWP] = { 1, WR_ATOMIC, MNIC_WC_COMP_SWAP,
		WR_OPS(OP_COMPARE_SWAP, OP_COMPARE_SWAP, OP_COMPARE_SWAP, OP_COMPARE_SWAP) },
	[MNIC_WR_ATOMIC_FETCH_AND_ADD] = { 1, WR_ATOMIC, MNIC_WC_FETCH_ADD,
		WR_OPS(OP_FETCH_ADD, OP_FETCH_ADD, OP_FETCH_ADD, OP_FETCH_ADD) },
};

static const struct req_wr_info *wr_info(uint8_t wr_opcode)
{
	static const struct req_wr_info none;

	return wr_opcode < MNIC_WR_NUM && req_wr_info[wr_opcode].valid ? &req_wr_info[wr_opcode]
								       : &none;
}

/* One pass of the machine: what BUILD decided, for SEND and UPDATE. */
struct req_ctx {
	struct rocev2 *e;
	struct rocev2_qp *qp;
	unsigned budget, sent;
	const struct req_wr_info *wi;
	struct rocev2_wqe_track *tr;
	struct rocev2_tx tx;
	uint32_t paylen;
	uint32_t psn_advance;           /* PSNs this packet uses */
	uint8_t opcode;
	uint8_t end;                    /* last packet of the message */
	uint8_t ackreq;
	uint8_t status;                 /* WQE_ERROR: enum mnic_wc_status */
	uint32_t vendor;                /* WQE_ERROR: ROCEV2_VERR_* */
};

static struct rocev2_wqe_track *track_of(struct rocev2_qp *qp, uint32_t index)
{
	return &qp->req.track[index % ROCEV2_MAX_INFLIGHT_WQE];
}

/* SQ index i has had a packet sent (its track entry is valid). */
static int wqe_started(const struct rocev2_qp *qp, uint32_t index)
{
	return (int32_t)(qp->req.next_new - index) > 0;
}

/* Packets of a message of len bytes: at least one (IBA 9.7: a
 * zero-length message is one packet without payload). */
static uint32_t msg_packets(uint64_t len, uint32_t mtu)
{
	return len ? (uint32_t)((len + mtu - 1u) / mtu) : 1u;
}

/* PSNs a WQE of this length occupies. */
static uint32_t wqe_psns(const struct req_wr_info *wi, uint64_t len, uint32_t mtu)
{
	return wi->flags & WR_ATOMIC ? 1u : msg_packets(len, mtu);
}

/* The QP may send requests: RTS, or SQD while finishing a message (IBA
 * 10.3.1; checked per WQE in NEXT_WQE).  Not while MigrOS has it stopped
 * (checkpoint) or paused (its peer is stopped), nor before the peer has
 * ACKed our RESUME (migrate.c sends it, and the ACK rewinds us to
 * comp.psn), nor during an RNR wait. */
static int req_may_send(const struct rocev2_qp *qp)
{
	if (qp->state != ROCEV2_QPS_RTS && qp->state != ROCEV2_QPS_SQD)
		return 0;
	return !MIG_STOPPED(qp) && !MIG_PAUSED(qp) && !MIG_RESUME_PENDING(qp) && !qp->comp.rnr_wait;
}

/* First run after the QP reached RTS: the PSNs as modify_qp set them and
 * the SQ index the queue starts at. */
static void req_start(struct rocev2_qp *qp)
{
	struct rocev2_req *req = &qp->req;

	req->psn = qp->attr.sq_psn & BTH_PSN_MASK;
	req->psn_hw = req->psn;
	qp->comp.psn = req->psn;
	req->wqe_index = req->next_new = req->sq_pi = qp->sq.ci;
	qp->comp.wqe_index = qp->sq.ci;
	req->opcode = qp->comp.opcode = 0xff;
	req->started = 1;
}

/* rxe req_retry: go back to the oldest packet the completer still waits
 * for.  Inside a started WQE the position is comp.psn - first_psn packets
 * in (SEND/WRITE), or the next response byte the completer needs (READ:
 * the request is sent again for the rest only, as hfi1/rxe); atomics
 * are sent again whole (the responder replays, IBA 9.7.5.1.4). */
static void req_rewind(struct rocev2_qp *qp)
{
	struct rocev2_req *req = &qp->req;
	struct rocev2_comp *comp = &qp->comp;
	uint32_t index = comp->wqe_index;

	req->need_retry = 0;
	req->wqe_index = index;
	req->psn = comp->psn;
	req->offset = 0;
	req->wqe_loaded = 0;
	req->opcode = 0xff;
	req->noack_pkts = 0;
	if (wqe_started(qp, index)) {
		const struct rocev2_wqe_track *tr = track_of(qp, index);
		const struct req_wr_info *wi = wr_info(tr->wr_opcode);
		uint32_t npsn = (comp->psn - tr->first_psn) & BTH_PSN_MASK;
		uint32_t span = (tr->last_psn - tr->first_psn) & BTH_PSN_MASK;

		if (npsn > span) {              /* comp.psn outside the WQE: resend it whole */
			npsn = 0;
			req->psn = tr->first_psn;
		}
		if (wi->flags & WR_READ) {
			req->offset = npsn ? comp->read_offset : 0;
			comp->opcode = 0xff;    /* a new response stream starts */
		} else if (wi->flags & WR_PAYLOAD) {
			req->offset = (uint64_t)npsn * qp->mtu;
		}
	}
}

/* Checks of IBA 10.8.3 that rocev2_sq_read leaves to the stage: lengths,
 * atomic operands, rd/atomic permission.  Returns a WC status (SUCCESS if
 * the WQE can be executed) and sets *vendor. */
static uint8_t req_wqe_check(struct rocev2_qp *qp, const struct mnic_send_wqe *w,
			     const struct req_wr_info *wi, uint64_t *len, uint32_t *vendor)
{
	*vendor = ROCEV2_VERR_BAD_WQE;
	if (!wi->valid || w->num_sge > MNIC_MAX_SGE)
		return MNIC_WC_LOC_QP_OP_ERR;
	/* max_rd_atomic 0: this QP may not initiate reads or atomics. */
	if ((wi->flags & (WR_READ | WR_ATOMIC)) && qp->attr.max_rd_atomic == 0)
		return MNIC_WC_LOC_QP_OP_ERR;
	/* IBA 9.4: an atomic operates on a naturally aligned 64-bit word. */
	if ((wi->flags & WR_ATOMIC) && (w->remote_addr & 7u))
		return MNIC_WC_LOC_QP_OP_ERR;
	*vendor = ROCEV2_VERR_LENGTH;
	if (w->send_flags & MNIC_SEND_INLINE) {
		/* IBA 10.8.2.1: inline data only on SENDs and WRITEs; the
		 * payload fills the gather list's place (mnic/queues.h). */
		*vendor = ROCEV2_VERR_BAD_WQE;
		if (!(wi->flags & WR_PAYLOAD) || w->num_sge != 0)
			return MNIC_WC_LOC_QP_OP_ERR;
		*vendor = ROCEV2_VERR_LENGTH;
		if (w->inline_len > MNIC_MAX_INLINE)
			return MNIC_WC_LOC_LEN_ERR;
		*len = w->inline_len;
		*vendor = ROCEV2_VERR_NONE;
		return MNIC_WC_SUCCESS;
	}
	if (rocev2_sge_total(w->sge, w->num_sge, len) < 0)
		return MNIC_WC_LOC_LEN_ERR;
	if ((wi->flags & WR_ATOMIC) && (w->num_sge != 1 || w->sge[0].length != 8u))
		return MNIC_WC_LOC_LEN_ERR;
	*vendor = ROCEV2_VERR_NONE;
	return MNIC_WC_SUCCESS;
}

/* The retransmit timer runs while requests are outstanding (the
 * completer re-arms it on progress and stops it when all is acked). */
static void req_arm_retrans(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct timer *t = &qp->comp.retrans_timer;

	if (!qp->attr.timeout || !t->fn || timer_armed(t))
		return;
	timer_arm(&e->timers, t, rocev2_now(e) + ROCEV2_RETRANS_NS(qp->attr.timeout));
}

/* IBA 11.6.3: SQ drained once the QP is in SQD and nothing it sent is
 * outstanding any more; reported once per SQD period. */
static void req_check_drained(struct rocev2 *e, struct rocev2_qp *qp)
{
	if (qp->comp.drained || qp->comp.wqe_index != qp->req.next_new)
		return;
	qp->comp.drained = 1;
	rocev2_post_event(e, qp->owner, ROCEV2_EVENT_SQ_DRAINED, qp->qpn);
}

static enum req_step step_check_qp(struct req_ctx *c)
{
	struct rocev2_qp *qp = c->qp;

	if (qp->state == ROCEV2_QPS_ERR) {
		qp->req.state = REQ_STATE_ERROR;
		return REQST_EXIT;
	}
	if (!req_may_send(qp))
		return REQST_EXIT;      /* resume, RNR timer or RTS schedules us again */
	if (!qp->req.started)
		req_start(qp);
	if (qp->state == ROCEV2_QPS_RTS)
		qp->comp.drained = 0;
	/* Rewind when the completer asks for it, and catch up when it has
	 * moved past us (a late ACK of the first transmission acknowledged
	 * what we were sending again). */
	if (qp->req.need_retry || (int32_t)(qp->req.wqe_index - qp->comp.wqe_index) < 0 ||
	    psn_cmp(qp->req.psn, qp->comp.psn) < 0)
		return REQST_RETRY;
	return REQST_NEXT_WQE;
}

static enum req_step step_next_wqe(struct req_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	struct rocev2_req *req = &qp->req;
	uint32_t index = req->wqe_index;
	struct rocev2_wqe_track *tr = track_of(qp, index);
	uint64_t len = 0;
	uint32_t vendor;
	uint8_t status;
	int rc;

	c->tr = tr;
	if (req->wqe_loaded) {
		c->wi = wr_info(req->wqe.opcode);
		return REQST_CHECK_LIMITS;
	}
	if (req->err_pending && index == req->err_index) {
		req->state = REQ_STATE_ERROR;   /* nothing is sent past a failed WQE */
		return REQST_EXIT;
	}
	/* The doorbell record is read again only when the WQEs known to be
	 * posted are used up. */
	if ((int32_t)(qp->sq.pi - index) <= 0)
		rocev2_wq_refresh(c->e, &qp->sq);
	req->sq_pi = qp->sq.pi;
	if ((int32_t)(qp->sq.pi - index) <= 0) {
		req->state = REQ_STATE_IDLE;
		if (qp->state == ROCEV2_QPS_SQD)
			req_check_drained(c->e, qp);
		return REQST_EXIT;
	}
	if (!wqe_started(qp, index)) {
		/* IBA 10.3.1: in SQD nothing new is started. */
		if (qp->state == ROCEV2_QPS_SQD) {
			req->state = REQ_STATE_IDLE;
			req_check_drained(c->e, qp);
			return REQST_EXIT;
		}
		if (index - qp->comp.wqe_index >= ROCEV2_MAX_INFLIGHT_WQE) {
			c->e->cnt.req_inflight_full++;
			req->state = REQ_STATE_WAIT;
			return REQST_EXIT;
		}
	}

	/* IBA 10.8.3: an opcode we do not execute or too many SGEs
	 * (rocev2_sq_read), or an unreadable slot, is a local QP operation
	 * error; lengths and operands are checked here. */
	rc = rocev2_sq_read(c->e, qp, index, &req->wqe);
	if (rc < 0) {
		status = MNIC_WC_LOC_QP_OP_ERR;
		vendor = rc == -HAL_EFAULT ? ROCEV2_VERR_WQE_DMA : ROCEV2_VERR_BAD_WQE;
	} else {
		c->wi = wr_info(req->wqe.opcode);
		status = req_wqe_check(qp, &req->wqe, c->wi, &len, &vendor);
	}
	if (status != MNIC_WC_SUCCESS) {
		c->status = status;
		c->vendor = vendor;
		return REQST_WQE_ERROR;
	}
	if (wqe_started(qp, index)) {
		/* Sent before: the host must not have rewritten it meanwhile,
		 * or the retransmission would not match what the responder got
		 * and what the completer will report. */
		if (tr->wr_opcode != req->wqe.opcode || tr->length != len) {
			c->status = MNIC_WC_LOC_QP_OP_ERR;
			c->vendor = ROCEV2_VERR_WQE_CHANGED;
			return REQST_WQE_ERROR;
		}
	} else {
		tr->first_psn = tr->last_psn = req->psn;
		tr->length = (uint32_t)len;     /* <= ROCEV2_MAX_MSG */
		tr->wr_opcode = req->wqe.opcode;
		tr->send_flags = req->wqe.send_flags;
		tr->state = WQE_STATE_POSTED;
		tr->reserved = 0;
	}
	req->wqe_loaded = 1;            /* c->wi: set with the check above */
	return REQST_CHECK_LIMITS;
}

static enum req_step step_check_limits(struct req_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	struct rocev2_req *req = &qp->req;
	uint32_t max_rd_atomic = qp->attr.max_rd_atomic < ROCEV2_MAX_RD_ATOMIC
					 ? qp->attr.max_rd_atomic
					 : ROCEV2_MAX_RD_ATOMIC;

	if (!wqe_started(qp, req->wqe_index)) {
		/* IBA 10.8.3 (fence indicator): a fenced WR waits until every
		 * earlier READ and atomic has completed. */
		if ((req->wqe.send_flags & MNIC_SEND_FENCE) && req->rd_atomic_outstanding) {
			c->e->cnt.req_fence_wait++;
			req->state = REQ_STATE_WAIT;
			return REQST_EXIT;
		}
		/* Initiator depth (max_rd_atomic, IBA 10.3.1 attributes). */
		if ((c->wi->flags & (WR_READ | WR_ATOMIC)) &&
		    req->rd_atomic_outstanding >= max_rd_atomic) {
			c->e->cnt.req_rd_atomic_limit++;
			req->state = REQ_STATE_WAIT;
			return REQST_EXIT;
		}
	}
	/* PSN window (rxe RXE_MAX_UNACKED_PSNS): psn_cmp keeps it right across
	 * the 2^24 wrap. */
	if (psn_cmp(req->psn, psn_add(qp->comp.psn, ROCEV2_MAX_UNACKED_PSNS)) >= 0) {
		c->e->cnt.req_window_full++;
		req->state = REQ_STATE_WAIT;
		return REQST_EXIT;
	}
	if (c->sent >= c->budget) {
		req->state = REQ_STATE_SENDING;
		rocev2_sched(c->e, qp);
		return REQST_EXIT;
	}
	/* DCQCN pacer (cc.c): only after a CNP cut this QP's rate; out of
	 * tokens, the pacer timer schedules the QP again. */
	if (qp->cc.active && !rocev2_cc_may_send(c->e, qp)) {
		req->state = REQ_STATE_WAIT;
		return REQST_EXIT;
	}
	return REQST_BUILD;
}

/* The next packet of the loaded WQE, at req.offset / req.psn. */
static enum req_step step_build(struct req_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	struct rocev2_req *req = &qp->req;
	const struct mnic_send_wqe *w = &req->wqe;
	const struct req_wr_info *wi = c->wi;
	const struct rocev2_opcode_info *info;
	uint64_t remaining = c->tr->length - req->offset;
	unsigned pos;
	int se, rc;

	if (wi->flags & WR_PAYLOAD) {
		c->end = remaining <= qp->mtu;
		c->paylen = c->end ? (uint32_t)remaining : qp->mtu;
		c->psn_advance = 1;
		pos = req->offset == 0 ? (c->end ? POS_ONLY : POS_FIRST)
				       : (c->end ? POS_LAST : POS_MIDDLE);
	} else {
		c->end = 1;
		c->paylen = 0;
		c->psn_advance = wqe_psns(wi, remaining, qp->mtu);
		pos = POS_ONLY;
	}
	c->opcode = wi->opcode[pos];
	info = rocev2_opcode(c->opcode);
	/* AckReq on the last packet of a message (IBA 9.7), and at least
	 * every ROCEV2_MAX_PKT_PER_ACK packets so that long messages are acked
	 * (and the window advances) as they go (rxe).  Packets sent again ask
	 * every ROCEV2_RETRY_PKT_PER_ACK: each ACK of a recovery confirms its
	 * progress at once (the completer gives the retries back, and a later
	 * timeout resends from there, comp.c). */
	c->ackreq = c->end || req->noack_pkts + 1u >= (psn_cmp(req->psn, req->psn_hw) < 0
								? ROCEV2_RETRY_PKT_PER_ACK
								: ROCEV2_MAX_PKT_PER_ACK);
	se = c->end && (wi->flags & WR_SE) && (w->send_flags & MNIC_SEND_SOLICITED);

	rocev2_tx_prepare(c->e, qp, &c->tx, c->opcode, req->psn, c->ackreq, se, c->paylen);
	if (info->mask & OPM_RETH) {
		/* WRITE: the whole message, on its first packet (IBA 9.3.3).
		 * READ: what is still missing (a rewound READ asks for the
		 * rest only). */
		if (wi->flags & WR_READ)
			reth_init((struct reth *)(c->tx.bth + info->reth), w->remote_addr + req->offset,
				  w->rkey, (uint32_t)remaining);
		else
			reth_init((struct reth *)(c->tx.bth + info->reth), w->remote_addr, w->rkey,
				  c->tr->length);
	}
	if (info->mask & OPM_ATMETH) {
		/* IBA 9.3.4: swap (CMP_AND_SWP) or add (FETCH_AND_ADD) data, then
		 * the compare data. */
		if (w->opcode == MNIC_WR_ATOMIC_CMP_AND_SWP)
			atmeth_init((struct atmeth *)(c->tx.bth + info->atmeth), w->remote_addr, w->rkey,
				    w->swap, w->compare_add);
		else
			atmeth_init((struct atmeth *)(c->tx.bth + info->atmeth), w->remote_addr, w->rkey,
				    w->compare_add, 0);
	}
	if (info->mask & OPM_IMMDT)
		immdt_init((struct immdt *)(c->tx.bth + info->immdt), w->imm_data);
	if (info->mask & OPM_IETH)
		ieth_init((struct ieth *)(c->tx.bth + info->ieth), w->imm_data);
	if (c->paylen && (w->send_flags & MNIC_SEND_INLINE)) {
		/* The WQE copy is the payload (re-read from the SQ slot for a
		 * retransmission); req_wqe_check bounded inline_len, and the
		 * packet lies inside the message. */
		if (req->offset >= w->inline_len || c->paylen > w->inline_len - req->offset) {
			c->status = MNIC_WC_LOC_LEN_ERR;
			c->vendor = ROCEV2_VERR_LENGTH;
			return REQST_WQE_ERROR;
		}
		memcpy(c->tx.payload, w->inline_data + req->offset, c->paylen);
		c->e->cnt.req_inline_pkts++;
	} else if (c->paylen) {
		rc = rocev2_sge_gather(c->e, qp, w->sge, w->num_sge, req->offset, c->tx.payload,
				       c->paylen);
		if (rc < 0) {
			/* IBA 10.8.3: local protection (lkey, PD, bounds) or a
			 * list shorter than the message. */
			c->status = rc == -HAL_EFAULT ? MNIC_WC_LOC_PROT_ERR : MNIC_WC_LOC_LEN_ERR;
			c->vendor = ROCEV2_VERR_GATHER;
			return REQST_WQE_ERROR;
		}
	}
	return REQST_SEND;
}

/* The first packet of a retry round (comp.c sets repeat_head) goes out
 * twice when a copy is harmless: a SEND or WRITE packet that cannot take
 * a receive WQE (no SEND FIRST/ONLY, no immediate), so the responder
 * answers the copy as a duplicate (IBA 9.7.5.1.1: an ACK, never an RNR
 * NAK) or, if the first was lost, takes it as the PSN it waits for.  The
 * responder NAKs a gap once (IBA 9.7.5.2.2) and keeps quiet until that
 * PSN arrives, so a lost resend would otherwise cost a retransmit timeout.
 * Best effort: a full TX ring sends it once. */
static void req_repeat_head(struct req_ctx *c)
{
	uint32_t mask = rocev2_opcode(c->opcode)->mask;

	c->qp->req.repeat_head = 0;
	if (!(mask & (OPM_SEND | OPM_WRITE)) || (mask & (OPM_IMMDT | OPM_IETH)) ||
	    ((mask & OPM_SEND) && (mask & OPM_START)))
		return;
	if (rocev2_tx_send(c->e, &c->tx) == 0)
		c->e->cnt.req_head_repeats++;
}

static enum req_step step_send(struct req_ctx *c)
{
	int rc = rocev2_tx_send(c->e, &c->tx);

	if (rc == -HAL_EAGAIN) {
		/* TX ring full: nothing changed, the same packet is built again
		 * on the next pass. */
		c->qp->req.state = REQ_STATE_SENDING;
		rocev2_sched(c->e, c->qp);
		return REQST_EXIT;
	}
	if (rc == 0 && c->qp->req.repeat_head)
		req_repeat_head(c);
	/* Any other failure (counted in tx_errors) is a packet lost on the
	 * wire: the retransmit timer recovers it like any other loss. */
	return REQST_UPDATE;
}

static enum req_step step_update(struct req_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	struct rocev2_req *req = &qp->req;
	struct rocev2_wqe_track *tr = c->tr;

	if (!wqe_started(qp, req->wqe_index)) {
		tr->first_psn = req->psn;
		tr->last_psn = psn_add(req->psn, wqe_psns(c->wi, tr->length, qp->mtu) - 1u);
		tr->state = WQE_STATE_PENDING;
		req->next_new = req->wqe_index + 1u;
		if (c->wi->flags & (WR_READ | WR_ATOMIC))
			req->rd_atomic_outstanding++;
	}
	if (psn_cmp(req->psn, req->psn_hw) < 0)
		c->e->cnt.req_retransmits++;
	c->e->cnt.req_packets++;
	req->opcode = c->opcode;
	req->psn = psn_add(req->psn, c->psn_advance);
	if (psn_cmp(req->psn, req->psn_hw) > 0)
		req->psn_hw = req->psn;
	req->noack_pkts = c->ackreq ? 0 : req->noack_pkts + 1u;
	req->offset += c->paylen;
	c->sent++;
	if (qp->cc.active)
		rocev2_cc_sent(c->e, qp, ((qp->tmpl.flags & TX_F_V6) ? ROCEV2_HDR_OFFSET6 : ROCEV2_HDR_OFFSET) +
						 rocev2_opcode(c->opcode)->hdr_len + c->paylen + ICRC_LEN);
	req_arm_retrans(c->e, qp);
	if (c->end) {
		req->wqe_index++;
		req->wqe_loaded = 0;
		req->offset = 0;
	}
	req->state = REQ_STATE_SENDING;
	return REQST_NEXT_WQE;
}

/* The WQE at req.wqe_index cannot be executed: record it, stop sending.
 * IBA 10.8.3: the QP goes to Error; its CQE (with this status) comes
 * first in the flush, after the WQEs before it have completed. */
static enum req_step step_wqe_error(struct req_ctx *c)
{
	struct rocev2_qp *qp = c->qp;
	struct rocev2_req *req = &qp->req;

	c->e->cnt.req_bad_wqe++;
	req->err_pending = 1;
	req->err_index = req->wqe_index;
	req->err_status = c->status;
	req->err_vendor = c->vendor;
	req->wqe_loaded = 0;
	req->state = REQ_STATE_ERROR;
	if (req->err_index == qp->comp.wqe_index)
		rocev2_qp_to_error(c->e, qp, -1);   /* reported by its CQE, no event */
	return REQST_EXIT;
}

unsigned rocev2_req_run(struct rocev2 *e, struct rocev2_qp *qp, unsigned budget)
{
	struct req_ctx c = { .e = e, .qp = qp, .budget = budget };
	enum req_step step = REQST_CHECK_QP;

	while (step != REQST_EXIT) {
		switch (step) {
		case REQST_CHECK_QP:
			step = step_check_qp(&c);
			break;
		case REQST_RETRY:
			req_rewind(qp);
			step = REQST_NEXT_WQE;
			break;
		case REQST_NEXT_WQE:
			step = step_next_wqe(&c);
			break;
		case REQST_CHECK_LIMITS:
			step = step_check_limits(&c);
			break;
		case REQST_BUILD:
			step = step_build(&c);
			break;
		case REQST_SEND:
			step = step_send(&c);
			break;
		case REQST_UPDATE:
			step = step_update(&c);
			break;
		case REQST_WQE_ERROR:
			step = step_wqe_error(&c);
			break;
		case REQST_EXIT:
		case REQST_NUM:
			step = REQST_EXIT;
			break;
		}
	}
	return c.sent;
}

void rocev2_req_reset(struct rocev2_qp *qp)
{
	memset(&qp->req, 0, sizeof(qp->req));
	qp->req.opcode = 0xff;
	qp->req.state = REQ_STATE_IDLE;
}

/* One send CQE written by the flush: the failed WQE (its own status) or a
 * flushed one.  IBA 10.8.3.1: error completions are generated
 * whatever the signaling; only wr_id, status, QP number (and vendor_err)
 * are defined, opcode is filled when the WQE names a valid one. */
static void req_flush_cqe(struct rocev2 *e, struct rocev2_qp *qp, uint32_t index,
			  uint8_t status, uint32_t vendor)
{
	struct mnic_send_wqe w;
	struct mnic_cqe cqe;

	memset(&cqe, 0, sizeof(cqe));
	memset(&w, 0, sizeof(w));
	/* sq_read copies the slot even when it is invalid; only a DMA
	 * failure leaves wr_id unknown (0). */
	if (rocev2_sq_read(e, qp, index, &w) == -HAL_EFAULT)
		memset(&w, 0, sizeof(w));
	cqe.wr_id = w.wr_id;
	cqe.status = status;
	cqe.opcode = wr_info(w.opcode)->wc_opcode;
	cqe.qp_num = qp->qpn;
	cqe.vendor_err = vendor;
	rocev2_cq_post(e, qp->scq, &cqe);   /* overflow: the CQ reports it (CQ_ERR) */
}

/* IBA 10.8.3.1: in Error, every WQE not completed yet (outstanding or
 * merely posted) completes with WR_FLUSH_ERR, in order; a WQE that failed
 * (req.err_*) completes first with its own status.  Called on the move to
 * Error and again from the SQ doorbell for WQEs posted later. */
void rocev2_req_flush(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_req *req = &qp->req;
	struct rocev2_comp *comp = &qp->comp;
	uint32_t index;

	timer_cancel(&e->timers, &comp->retrans_timer);
	timer_cancel(&e->timers, &comp->rnr_timer);
	if (!req->started) {
		/* Never ran: the completer's position is the SQ's. */
		comp->wqe_index = qp->sq.ci;
		req->started = 1;
		req->psn = req->psn_hw = comp->psn;
	}
	rocev2_wq_refresh(e, &qp->sq);
	index = comp->wqe_index;
	/* wq_refresh bounds pi - ci by the ring size: the walk is bounded. */
	while ((int32_t)(qp->sq.pi - index) > 0) {
		if (req->err_pending && index == req->err_index) {
			req_flush_cqe(e, qp, index, req->err_status, req->err_vendor);
			e->cnt.comp_completions++;
		} else {
			req_flush_cqe(e, qp, index, MNIC_WC_WR_FLUSH_ERR, ROCEV2_VERR_NONE);
			e->cnt.flushed_wqes++;
		}
		index++;
	}
	comp->wqe_index = qp->sq.ci = index;
	comp->wqe_loaded = 0;
	comp->read_offset = 0;
	comp->opcode = 0xff;
	comp->rnr_wait = 0;
	req->wqe_index = req->next_new = req->sq_pi = index;
	req->wqe_loaded = 0;
	req->offset = 0;
	req->need_retry = 0;
	req->rd_atomic_outstanding = 0;
	req->err_pending = 0;
	req->state = REQ_STATE_ERROR;
}
