/* Responder (IBA 9.7.5): executes the requests a peer's requester sends
 * to this QP and answers them: ACK/NAK, RDMA READ responses, ATOMIC
 * ACKNOWLEDGEs.  The structure is rxe_resp.c's: one request packet walks an
 * explicit state machine, each state's helper returns the next state, and
 * every error is a state whose row in resp_naks[] decides the NAK, the
 * completion status, the async event and the counter, in one place.
 *
 *   GET_REQ -> CHK_PSN -> CHK_OP_SEQ -> CHK_OP_VALID -> CHK_RESOURCE
 *     |          |  `-> DUPLICATE_REQUEST (re-ACK / replay / drop)
 *     |          `----> ERR_PSN_OUT_OF_SEQ, ERR_STOPPED
 *     `-> RESUME (MigrOS)
 *   CHK_RESOURCE -> CHK_LENGTH -> CHK_RKEY -> EXECUTE
 *   EXECUTE -> COMPLETE (receive CQE) -> ACKNOWLEDGE -> DONE
 *           -> READ_REPLY / ATOMIC_REPLY -> DONE
 *   any CHK_* / EXECUTE -> ERR_* (NAK) -> DONE
 *
 * Replies are not bound to the packet that asked for them: a READ is
 * accepted and recorded in a responder resource (IBA 9.7.5.1.4), and its
 * response packets leave from there, a few inline and the rest from
 * rocev2_resp_run() when the scheduler gives the QP a slice.  Responses
 * leave in PSN order (IBA 9.7.5.1.1): resources are sent in the order they
 * were accepted, and an ACK/NAK decided while replies are still going out
 * waits behind them (resp.ack_deferred).  Meanwhile new requests keep being
 * executed, as the peer's requester pipelines them.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

/* Read response packets rocev2_resp_rx sends itself before leaving the
 * rest to rocev2_resp_run: small, so one large READ cannot hold up the
 * receive path (other QPs' packets wait behind it). */
#ifndef ROCEV2_RESP_RX_BUDGET
#define ROCEV2_RESP_RX_BUDGET 4u
#endif

/* One request packet on its way through the state machine. */
struct resp_ctx {
	struct rocev2 *e;
	struct rocev2_qp *qp;
	const struct rocev2_pkt *pkt;
	uint32_t mask;                  /* pkt's opcode mask (OPM_*) */
	uint32_t slot;                  /* READ/ATOMIC: resource slot CHK_RESOURCE chose */
};

static const char *const resp_state_names[RESPST_NUM] = {
	[RESPST_NONE] = "NONE",
	[RESPST_GET_REQ] = "GET_REQ",
	[RESPST_CHK_PSN] = "CHK_PSN",
	[RESPST_CHK_OP_SEQ] = "CHK_OP_SEQ",
	[RESPST_CHK_OP_VALID] = "CHK_OP_VALID",
	[RESPST_CHK_RESOURCE] = "CHK_RESOURCE",
	[RESPST_CHK_LENGTH] = "CHK_LENGTH",
	[RESPST_CHK_RKEY] = "CHK_RKEY",
	[RESPST_EXECUTE] = "EXECUTE",
	[RESPST_COMPLETE] = "COMPLETE",
	[RESPST_READ_REPLY] = "READ_REPLY",
	[RESPST_ATOMIC_REPLY] = "ATOMIC_REPLY",
	[RESPST_ACKNOWLEDGE] = "ACKNOWLEDGE",
	[RESPST_DUPLICATE_REQUEST] = "DUPLICATE_REQUEST",
	[RESPST_RESUME] = "RESUME",
	[RESPST_ERR_PSN_OUT_OF_SEQ] = "ERR_PSN_OUT_OF_SEQ",
	[RESPST_ERR_STOPPED] = "ERR_STOPPED",
	[RESPST_ERR_RNR] = "ERR_RNR",
	[RESPST_ERR_MISSING_OPCODE_FIRST] = "ERR_MISSING_OPCODE_FIRST",
	[RESPST_ERR_MISSING_OPCODE_LAST] = "ERR_MISSING_OPCODE_LAST",
	[RESPST_ERR_UNSUPPORTED_OPCODE] = "ERR_UNSUPPORTED_OPCODE",
	[RESPST_ERR_TOO_MANY_RD_ATOMIC] = "ERR_TOO_MANY_RD_ATOMIC",
	[RESPST_ERR_LENGTH] = "ERR_LENGTH",
	[RESPST_ERR_RECV_TOO_LONG] = "ERR_RECV_TOO_LONG",
	[RESPST_ERR_MISALIGNED_ATOMIC] = "ERR_MISALIGNED_ATOMIC",
	[RESPST_ERR_RKEY_VIOLATION] = "ERR_RKEY_VIOLATION",
	[RESPST_ERR_MALFORMED_WQE] = "ERR_MALFORMED_WQE",
	[RESPST_ERR_PROTECTION] = "ERR_PROTECTION",
	[RESPST_ERR_MEMORY] = "ERR_MEMORY",
	[RESPST_ERR_CQ_OVERFLOW] = "ERR_CQ_OVERFLOW",
	[RESPST_DONE] = "DONE",
};

const char *rocev2_resp_state_name(unsigned state)
{
	return state < RESPST_NUM && resp_state_names[state] ? resp_state_names[state] : "?";
}

/* ---- the NAK table ------------------------------------------------------ *
 * IBA 9.9 (responder error classes, as rxe applies them): class B (PSN
 * sequence, RNR, and MigrOS's "stopped") NAKs and drops the packet, the QP
 * stays usable; class A/C (invalid request, remote access, remote
 * operational) NAKs, completes the receive WQE in progress with an error
 * and moves the QP to ERR (rocev2_qp_to_error: flush, affiliated async
 * event, IBA 11.6.3).  A CQ overflow (class G) sends nothing: the CQ
 * already reported it. */
#define NO_EVENT 0xffu
#define NO_COUNTER SIZE_MAX
#define CNT(name) offsetof(struct rocev2_counters, name)

struct resp_nak {
	uint8_t syndrome;               /* AETH syndrome; 0 = send nothing */
	uint8_t fatal;                  /* class A/C/G: the QP goes to ERR */
	uint8_t psn_expected;           /* NAK carries resp.psn, not the packet's PSN */
	uint8_t wc_status;              /* the receive WQE in progress (fatal only) */
	uint8_t event;                  /* enum rocev2_event_type (fatal only) */
	size_t counter;                 /* offset in struct rocev2_counters */
	size_t reason;                  /* a second one: the cause, or NO_COUNTER */
};

/* Every invalid-request NAK counts in resp_inv_req_naks and in the counter
 * of its cause, so that a failing run names it. */
#define INV_REQ(status, cause) \
	{ AETH_NAK_INVALID_REQ, 1, 0, status, ROCEV2_EVENT_QP_REQ_ERR, CNT(resp_inv_req_naks), \
	  CNT(cause) }

static const struct resp_nak resp_naks[RESPST_NUM] = {
	/* IBA 9.7.5.1.1: a gap; NAK once with the PSN we expect. */
	[RESPST_ERR_PSN_OUT_OF_SEQ] = { AETH_NAK_PSN_SEQ_ERROR, 0, 1, 0, NO_EVENT,
					CNT(resp_out_of_seq), NO_COUNTER },
	/* MigrOS (reference 1(c)): the QP is being checkpointed; the peer
	 * pauses and resends after our RESUME. */
	[RESPST_ERR_STOPPED] = { AETH_NAK_STOPPED, 0, 1, 0, NO_EVENT, CNT(resp_stopped_naks),
				 NO_COUNTER },
	/* No receive WQE (IBA 9.7.5.1.4 resources); low 5 bits: our
	 * min_rnr_timer. */
	[RESPST_ERR_RNR] = { AETH_RNR_NAK, 0, 0, 0, NO_EVENT, CNT(resp_rnr_naks), NO_COUNTER },
	/* IBA 9.7.5.1.2 / 9.7.5.1.3 / 9.7.5.1.4 (class C, as rxe). */
	[RESPST_ERR_MISSING_OPCODE_FIRST] = INV_REQ(MNIC_WC_REM_INV_REQ_ERR,
						    resp_invreq_no_first),
	[RESPST_ERR_MISSING_OPCODE_LAST] = INV_REQ(MNIC_WC_REM_INV_REQ_ERR,
						   resp_invreq_no_last),
	[RESPST_ERR_UNSUPPORTED_OPCODE] = INV_REQ(MNIC_WC_REM_INV_REQ_ERR,
						  resp_invreq_op_access),
	[RESPST_ERR_TOO_MANY_RD_ATOMIC] = INV_REQ(MNIC_WC_REM_INV_REQ_ERR, resp_invreq_rd_atomic),
	[RESPST_ERR_LENGTH] = INV_REQ(MNIC_WC_REM_INV_REQ_ERR, resp_invreq_length),
	[RESPST_ERR_MISALIGNED_ATOMIC] = INV_REQ(MNIC_WC_REM_INV_REQ_ERR,
						 resp_invreq_misaligned),
	/* A SEND longer than the receive buffers (IBA 9.7.5.1.4): a local
	 * length error for our WQE, an invalid request for the peer. */
	[RESPST_ERR_RECV_TOO_LONG] = INV_REQ(MNIC_WC_LOC_LEN_ERR, resp_invreq_recv_long),
	/* IBA 9.7.5.1.5: R_Key, bounds, PD or access.  A WRITE_IMM's receive
	 * WQE reports it as a local access error (ibv_wc_status). */
	[RESPST_ERR_RKEY_VIOLATION] = { AETH_NAK_REM_ACC_ERR, 1, 0, MNIC_WC_LOC_ACCESS_ERR,
					ROCEV2_EVENT_QP_ACCESS_ERR, CNT(resp_rem_acc_naks), NO_COUNTER },
	/* Our own receive WQE or host memory failed (class A): remote
	 * operational error for the peer. */
	[RESPST_ERR_MALFORMED_WQE] = { AETH_NAK_REM_OP_ERR, 1, 0, MNIC_WC_LOC_QP_OP_ERR,
				       ROCEV2_EVENT_QP_FATAL, CNT(resp_rem_op_naks), NO_COUNTER },
	[RESPST_ERR_PROTECTION] = { AETH_NAK_REM_OP_ERR, 1, 0, MNIC_WC_LOC_PROT_ERR,
				    ROCEV2_EVENT_QP_ACCESS_ERR, CNT(resp_rem_op_naks), NO_COUNTER },
	[RESPST_ERR_MEMORY] = { AETH_NAK_REM_OP_ERR, 1, 0, MNIC_WC_LOC_QP_OP_ERR,
				ROCEV2_EVENT_QP_FATAL, CNT(resp_rem_op_naks), NO_COUNTER },
	[RESPST_ERR_CQ_OVERFLOW] = { 0, 1, 0, 0, ROCEV2_EVENT_QP_FATAL, NO_COUNTER, NO_COUNTER },
};

static void count(struct rocev2 *e, size_t counter)
{
	if (counter != NO_COUNTER && counter + sizeof(uint64_t) <= sizeof(e->cnt))
		(*(uint64_t *)((uint8_t *)&e->cnt + counter))++;
}

/* ---- small helpers -------------------------------------------------------- */

/* Host memory is little-endian (mnic/queues.h): an atomic's target is the
 * host's native 64-bit integer. */
static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}
static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/* qp->mtu comes from attr.path_mtu (256..4096); anything else is a bug
 * elsewhere, and dividing by it must still be safe. */
static uint32_t resp_mtu(const struct rocev2_qp *qp)
{
	return qp->mtu >= 256u && qp->mtu <= 4096u ? qp->mtu : 256u;
}

/* Responder resources in use: max_dest_rd_atomic, bounded by the array. */
static uint32_t resp_nres(const struct rocev2_qp *qp)
{
	uint32_t n = qp->attr.max_dest_rd_atomic;

	return n < ROCEV2_MAX_RD_ATOMIC ? n : ROCEV2_MAX_RD_ATOMIC;
}

/* Response packets of a READ of len bytes (IBA 9.7.5.1.4: a zero-length
 * READ still gets one, RDMA READ Response Only). */
static uint32_t read_npkts(uint32_t len, uint32_t mtu)
{
	return len ? (uint32_t)(((uint64_t)len + mtu - 1u) / mtu) : 1u;
}

/* Which states the responder works in (IBA 10.3.1): from RTR on; SQD and
 * SQE only stop the send queue. */
static const uint8_t resp_state_ok[ROCEV2_QPS_NUM] = {
	[ROCEV2_QPS_RTR] = 1,
	[ROCEV2_QPS_RTS] = 1,
	[ROCEV2_QPS_SQD] = 1,
	[ROCEV2_QPS_SQE] = 1,
};

static int resp_qp_ok(const struct rocev2_qp *qp)
{
	return qp->state < ROCEV2_QPS_NUM && resp_state_ok[qp->state];
}

/* IBA 9.7.5.1.5: R_Key names an MR of this QP's PD that covers [va, va+len)
 * and grants access. */
static int resp_rkey_ok(struct rocev2 *e, const struct rocev2_qp *qp, uint32_t rkey,
			uint64_t va, uint64_t len, uint32_t access)
{
	const struct rocev2_mr *mr = rocev2_mr_lookup(e, rkey);

	return mr && mr->rkey == rkey && rocev2_mr_check(mr, qp->pd, va, len, access) == 0;
}

/* Forget every reply still to be sent (a duplicate restarts one, the QP
 * failed, or the peer moved): the requester asks again for whatever it
 * is missing, and duplicates are replayed. */
/* The waiting ACK/NAK goes no more (sent, covered, or abandoned), and with
 * it the count of requests coalesced into it. */
static void resp_drop_deferred(struct rocev2_resp *r)
{
	r->ack_deferred = 0;
	r->ack_coalesced = 0;
}

static void resp_abandon_replies(struct rocev2_resp *r)
{
	unsigned i;

	for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++)
		r->res[i].sending = 0;
	r->res_pending = 0;
	resp_drop_deferred(r);
}

/* The reply to send after the one in slot: the next slot in ring order
 * (= acceptance order = PSN order) still sending; slot + 1, 0 if none.
 * The scan runs over the whole array so that slots left behind by a
 * smaller max_dest_rd_atomic keep their place in the order. */
static uint32_t resp_next_reply(const struct rocev2_resp *r, uint32_t slot)
{
	uint32_t i, s;

	for (i = 1; i < ROCEV2_MAX_RD_ATOMIC; i++) {
		s = (slot + i) % ROCEV2_MAX_RD_ATOMIC;
		if (r->res[s].sending)
			return s + 1u;
	}
	return 0;
}

/* ---- transmit ------------------------------------------------------------ */

/* One ACKNOWLEDGE: 0 or the tx error (nothing is retried here).
 * NAK_STOPPED carries the migration extension (epoch, MAC: migrate.c). */
static int resp_send_ack(struct rocev2 *e, struct rocev2_qp *qp, uint8_t syndrome, uint32_t psn,
			 uint32_t msn)
{
	struct rocev2_tx t;
	uint32_t ext = rocev2_mig_ack_ext_len(qp, syndrome);
	int rc;

	rocev2_tx_prepare(e, qp, &t, OP_ACKNOWLEDGE, psn, 0, 0, ext);
	aeth_init((struct aeth *)(t.bth + rocev2_opcode(OP_ACKNOWLEDGE)->aeth), syndrome, msn);
	if (ext)
		rocev2_mig_put_ack_ext(qp, syndrome, psn, t.payload);
	rc = rocev2_tx_send(e, &t);
	if (rc == 0 && (syndrome & AETH_TYPE_MASK) == AETH_ACK)
		e->cnt.resp_acks_sent++;
	/* A waiting (coalesced) ACK this one covers goes no more: an ACK
	 * acknowledges its PSN and all before, a NAK all before its PSN. */
	if (rc == 0 && qp->resp.ack_deferred &&
	    psn_cmp(psn, qp->resp.ack_deferred_psn) >= ((syndrome & AETH_TYPE_MASK) == AETH_ACK ? 0 : 1)) {
		if (qp->resp.ack_coalesced && psn != qp->resp.ack_deferred_psn)
			e->cnt.resp_acks_coalesced++;
		resp_drop_deferred(&qp->resp);
	}
	return rc;
}

static void resp_defer_ack(struct rocev2 *e, struct rocev2_qp *qp, uint8_t syndrome, uint32_t psn,
			   uint32_t msn);

/* Send an ACK/NAK now, or, when behind is set and replies are still going
 * out, after them (IBA 9.7.5.1.1: responses in PSN order).  Only one waits:
 * the one with the later PSN wins (a later ACK covers an earlier one; a
 * NAK's PSN was executed by the time a later ACK is decided).  A full TX
 * ring defers it the same way (resp_emit sends it when the ring has room):
 * dropped, a NAK or the ACK of a message's last packet would leave the
 * requester waiting for its retransmit timer (IBA 9.7.6.1.3), and a
 * sequence NAK is sent once per gap.  Another transmit error is a frame
 * lost on the wire: the requester times out and resends, and the
 * duplicate is acknowledged again. */
static void resp_ack(struct rocev2 *e, struct rocev2_qp *qp, uint8_t syndrome, uint32_t psn,
		     uint32_t msn, int behind)
{
	struct rocev2_resp *r = &qp->resp;
	int rc = 0;

	if (!(behind && (r->res_pending || r->ack_deferred))) {
		rc = resp_send_ack(e, qp, syndrome, psn, msn);
		if (rc != -HAL_EAGAIN) {
			if (rc < 0)
				e->cnt.resp_tx_dropped++;
			return;
		}
	}
	resp_defer_ack(e, qp, syndrome, psn, msn);
}

/* The one ACK/NAK that waits for resp_emit: the later PSN wins (a later
 * ACK covers an earlier one; a NAK's PSN was executed by the time a later
 * ACK is decided). */
static void resp_defer_ack(struct rocev2 *e, struct rocev2_qp *qp, uint8_t syndrome, uint32_t psn,
			   uint32_t msn)
{
	struct rocev2_resp *r = &qp->resp;

	if (!r->ack_deferred || psn_cmp(psn, r->ack_deferred_psn) >= 0) {
		r->ack_deferred = 1;
		r->ack_syndrome = syndrome;
		r->ack_deferred_psn = psn & BTH_PSN_MASK;
		r->ack_deferred_msn = msn;
	}
	rocev2_sched(e, qp);
}

/* RDMA READ response opcode [first packet][last packet] (IBA 9.2 Table 36). */
static const uint8_t read_resp_opcode[2][2] = {
	{ OP_READ_RESPONSE_MIDDLE, OP_READ_RESPONSE_LAST },
	{ OP_READ_RESPONSE_FIRST, OP_READ_RESPONSE_ONLY },
};

/* One response packet of resource res.  0 sent (res advanced), -HAL_EAGAIN
 * nothing sent and the position kept, -HAL_EFAULT the memory is no longer
 * readable by its R_Key, -HAL_EIO host memory failed. */
static int resp_send_reply(struct rocev2 *e, struct rocev2_qp *qp, struct rocev2_resp_res *res)
{
	const struct rocev2_opcode_info *info;
	struct rocev2_tx t;
	uint32_t mtu = resp_mtu(qp), n;
	uint8_t opcode;
	int rc;

	if (res->type != OP_READ_REQUEST) {
		/* ATOMIC ACKNOWLEDGE = AETH + AtomicAckETH (wire.h) with the
		 * value before the operation, the same bytes for a replay. */
		rocev2_tx_prepare(e, qp, &t, OP_ATOMIC_ACKNOWLEDGE, res->first_psn, 0, 0, 0);
		info = rocev2_opcode(OP_ATOMIC_ACKNOWLEDGE);
		aeth_init((struct aeth *)(t.bth + info->aeth), AETH_ACK_UNLIMITED, res->msn);
		atmack_init((struct atmack *)(t.bth + info->atmack), res->orig);
		rc = rocev2_tx_send(e, &t);
		if (rc == -HAL_EAGAIN)
			return rc;
		res->sending = 0;       /* sent, or lost like on the wire */
		return 0;
	}

	n = res->resid < mtu ? res->resid : mtu;
	/* Every response stream, a replay from a later PSN included, is a
	 * whole response message, FIRST .. LAST or ONLY: the requester sent a
	 * new READ request for the rest, and hfi1/qib answer it so.  rxe
	 * continues with MIDDLE/LAST instead; our req.c/comp.c, like hfi1,
	 * expect a new stream. */
	opcode = read_resp_opcode[res->cur_psn == res->start_psn][res->resid <= mtu];
	/* Checked per packet: the MR may have been deregistered since the
	 * request was accepted, and a long read spans many scheduler slices. */
	if (n && !resp_rkey_ok(e, qp, res->rkey, res->va, n, ROCEV2_ACCESS_REMOTE_READ))
		return -HAL_EFAULT;
	rocev2_tx_prepare(e, qp, &t, opcode, res->cur_psn, 0, 0, n);
	info = rocev2_opcode(opcode);
	if (info->mask & OPM_AETH)      /* IBA 9.3.5: all but MIDDLE */
		aeth_init((struct aeth *)(t.bth + info->aeth), AETH_ACK_UNLIMITED, res->msn);
	if (n && rocev2_mem_read(e, res->rkey, res->va, t.payload, n) < 0)
		return -HAL_EIO;
	rc = rocev2_tx_send(e, &t);
	if (rc == -HAL_EAGAIN)
		return rc;
	/* Sent, or another transmit error: then lost like on the wire, and
	 * the requester asks again from its PSN. */
	e->cnt.resp_read_packets++;
	res->va += n;
	res->resid -= n;
	res->cur_psn = psn_add(res->cur_psn, 1);
	if (opcode == OP_READ_RESPONSE_LAST || opcode == OP_READ_RESPONSE_ONLY)
		res->sending = 0;
	return 0;
}

static void resp_fatal(struct rocev2 *e, struct rocev2_qp *qp, enum rocev2_resp_state s,
		       uint32_t psn);

/* Send queued replies, then a deferred ACK/NAK, within budget packets.
 * Stops on a full TX ring with the position kept; leaves the QP scheduled
 * while anything remains. */
static unsigned resp_emit(struct rocev2 *e, struct rocev2_qp *qp, unsigned budget)
{
	struct rocev2_resp *r = &qp->resp;
	unsigned sent = 0;
	int rc;

	while (sent < budget) {
		if (r->res_pending) {
			uint32_t slot = r->res_pending - 1u;
			struct rocev2_resp_res *res;

			if (slot >= ROCEV2_MAX_RD_ATOMIC) {     /* never: corrupt state */
				r->res_pending = 0;
				continue;
			}
			res = &r->res[slot];
			if (res->sending) {
				rc = resp_send_reply(e, qp, res);
				if (rc == -HAL_EAGAIN)
					break;
				if (rc < 0) {
					resp_fatal(e, qp, rc == -HAL_EFAULT ? RESPST_ERR_RKEY_VIOLATION
									 : RESPST_ERR_MEMORY,
						   res->cur_psn);
					return sent;
				}
				sent++;
			}
			if (!res->sending)
				r->res_pending = resp_next_reply(r, slot);
			continue;
		}
		if (r->ack_deferred) {
			rc = resp_send_ack(e, qp, r->ack_syndrome, r->ack_deferred_psn,
					   r->ack_deferred_msn);
			if (rc == -HAL_EAGAIN)
				break;
			if (rc < 0)
				e->cnt.resp_tx_dropped++;
			resp_drop_deferred(r);
			sent++;
			continue;
		}
		break;
	}
	if (r->res_pending || r->ack_deferred)
		rocev2_sched(e, qp);
	return sent;
}

/* ---- completions ------------------------------------------------------------ */

/* Receive CQE for rwqe (IBA 11.4.2 work completions).  Consumes rwqe. */
static int resp_complete_rwqe(struct rocev2 *e, struct rocev2_qp *qp, uint8_t status,
			      uint8_t opcode, uint8_t flags, uint32_t byte_len, uint32_t imm,
			      uint32_t vendor_err)
{
	struct mnic_cqe cqe;

	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = qp->resp.rwqe.wr_id;
	cqe.status = status;
	cqe.opcode = opcode;
	cqe.flags = flags;
	cqe.byte_len = byte_len;
	cqe.qp_num = qp->qpn;
	cqe.imm_data = imm;
	cqe.src_qp = qp->attr.dest_qp_num;
	cqe.vendor_err = vendor_err;
	qp->resp.rwqe_valid = 0;
	return rocev2_cq_post(e, qp->rcq, &cqe);
}

/* Class A/C/G error (resp_naks[s].fatal): the receive WQE in progress
 * completes with the row's status, the NAK goes out now (nothing still
 * queued matters: the QP is dead), then the QP moves to ERR, which flushes
 * the rest (rocev2_resp_flush). */
static void resp_fatal(struct rocev2 *e, struct rocev2_qp *qp, enum rocev2_resp_state s,
		       uint32_t psn)
{
	const struct resp_nak *n = &resp_naks[s];

	count(e, n->counter);
	count(e, n->reason);
	qp->resp.last_error = (uint8_t)s;
	if (qp->resp.rwqe_valid)
		(void)resp_complete_rwqe(e, qp, n->wc_status, MNIC_WC_RECV, 0, 0, 0, n->syndrome);
	resp_abandon_replies(&qp->resp);
	if (n->syndrome && resp_send_ack(e, qp, n->syndrome, psn, qp->resp.msn) < 0)
		e->cnt.resp_tx_dropped++;
	rocev2_qp_to_error(e, qp, n->event == NO_EVENT ? -1 : n->event);
}

/* ---- states ---------------------------------------------------------------- */

static enum rocev2_resp_state resp_get_req(struct resp_ctx *c, enum rocev2_resp_state s)
{
	(void)s;
	if (!resp_qp_ok(c->qp)) {
		c->e->cnt.resp_bad_state++;     /* recv.c filters; a stage never trusts it */
		return RESPST_DONE;
	}
	if (!c->pkt->bth || !c->pkt->info || !(c->mask & OPM_REQ)) {
		c->e->cnt.resp_bad_packet++;
		return RESPST_DONE;
	}
	/* MigrOS (reference 1(c) step 2): RESUME bypasses the PSN checks. */
	if (c->mask & OPM_RESUME)
		return RESPST_RESUME;
	return RESPST_CHK_PSN;
}

/* IBA 9.7.5.1.1: expected, duplicate (behind) or out of sequence (ahead),
 * in 24-bit serial arithmetic (psn_cmp, so 0xffffff is before 0). */
static enum rocev2_resp_state resp_chk_psn(struct resp_ctx *c, enum rocev2_resp_state s)
{
	struct rocev2_resp *r = &c->qp->resp;
	int32_t diff = psn_cmp(c->pkt->psn, r->psn);

	(void)s;
	if (diff > 0) {
		/* One NAK per gap: the requester resends from resp.psn, and the
		 * packets already on their way behind the gap are dropped. */
		if (r->sent_psn_nak) {
			c->e->cnt.resp_seq_nak_silent++;
			return RESPST_DONE;
		}
		r->sent_psn_nak = 1;
		return RESPST_ERR_PSN_OUT_OF_SEQ;
	}
	if (diff < 0) {
		c->e->cnt.resp_dup_requests++;
		return RESPST_DUPLICATE_REQUEST;
	}
	/* MigrOS: while stopped (checkpoint) no new request executes; the
	 * peer pauses on NAK_STOPPED.  Duplicates above still get answers. */
	if (MIG_STOPPED(c->qp))
		return RESPST_ERR_STOPPED;
	r->sent_psn_nak = 0;
	return RESPST_CHK_OP_SEQ;
}

/* IBA 9.7.5.1.2 (rxe check_op_seq): inside a multi-packet SEND or WRITE
 * only MIDDLE/LAST of the same kind may follow; outside one, no MIDDLE or
 * LAST.  prev is the last accepted opcode (0xff: none, an empty mask). */
static enum rocev2_resp_state resp_chk_op_seq(struct resp_ctx *c, enum rocev2_resp_state s)
{
	const uint32_t kinds = OPM_SEND | OPM_WRITE;
	uint32_t prev = rocev2_opcode(c->qp->resp.opcode)->mask;

	(void)s;
	if ((prev & kinds) && !(prev & OPM_END)) {
		if ((c->mask & prev & kinds) && !(c->mask & OPM_START))
			return RESPST_CHK_OP_VALID;
		return RESPST_ERR_MISSING_OPCODE_LAST;
	}
	if ((c->mask & kinds) && !(c->mask & OPM_START))
		return RESPST_ERR_MISSING_OPCODE_FIRST;
	return RESPST_CHK_OP_VALID;
}

/* IBA 9.7.5.1.3: the QP must allow the remote operation (its access
 * flags); rxe answers an invalid request. */
static const struct {
	uint32_t kind;
	uint32_t access;
} resp_op_access[] = {
	{ OPM_WRITE, ROCEV2_ACCESS_REMOTE_WRITE },
	{ OPM_READ, ROCEV2_ACCESS_REMOTE_READ },
	{ OPM_ATOMIC, ROCEV2_ACCESS_REMOTE_ATOMIC },
};

static enum rocev2_resp_state resp_chk_op_valid(struct resp_ctx *c, enum rocev2_resp_state s)
{
	unsigned i;

	(void)s;
	for (i = 0; i < sizeof(resp_op_access) / sizeof(resp_op_access[0]); i++)
		if ((c->mask & resp_op_access[i].kind) &&
		    !(c->qp->attr.qp_access_flags & resp_op_access[i].access))
			return RESPST_ERR_UNSUPPORTED_OPCODE;
	return RESPST_CHK_RESOURCE;
}

/* Did rocev2_rq_take's -HAL_EINVAL consume a WQE?  queue.c returns it for
 * a WQE with too many SGEs (consumed, wr_id valid: we complete it) and for
 * a QP whose SRQ is gone (nothing taken). */
static int resp_rq_present(const struct rocev2 *e, const struct rocev2_qp *qp)
{
	return qp->srq == ROCEV2_NO_SRQ || (qp->srq < ROCEV2_MAX_SRQ && e->srqs[qp->srq].in_use);
}

static enum rocev2_resp_state resp_take_rwqe(struct resp_ctx *c)
{
	struct rocev2_resp *r = &c->qp->resp;
	uint64_t total;
	int rc;

	/* rq_take reads the header and the SGEs the WQE uses, and leaves
	 * wr_id and num_sge 0 when it cannot read them. */
	rc = rocev2_rq_take(c->e, c->qp, &r->rwqe);
	if (rc == -HAL_EAGAIN)
		return RESPST_ERR_RNR;
	if (rc == 0 || (rc == -HAL_EINVAL && resp_rq_present(c->e, c->qp)))
		r->rwqe_valid = 1;
	if (rc < 0)
		return RESPST_ERR_MALFORMED_WQE;
	r->rwqe_offset = 0;
	/* num_sge was checked against max_recv_sge by rq_take; sge_total
	 * bounds it by the array again and the sum by ROCEV2_MAX_MSG. */
	if (rocev2_sge_total(r->rwqe.sge, r->rwqe.num_sge, &total) < 0)
		return RESPST_ERR_MALFORMED_WQE;
	r->rwqe_length = total;
	return RESPST_CHK_LENGTH;
}

/* IBA 9.7.5.1.4 (resources): a receive WQE for a SEND (taken at its first
 * packet) and for a WRITE with immediate (taken at its last packet, which
 * carries the immediate); a responder resource slot for a READ/ATOMIC. */
static enum rocev2_resp_state resp_chk_resource(struct resp_ctx *c, enum rocev2_resp_state s)
{
	struct rocev2_resp *r = &c->qp->resp;
	uint32_t n, slot;

	(void)s;
	if (((c->mask & OPM_SEND) && (c->mask & OPM_START)) ||
	    ((c->mask & OPM_WRITE) && (c->mask & OPM_IMMDT))) {
		if (!r->rwqe_valid)
			return resp_take_rwqe(c);
	} else if ((c->mask & OPM_SEND) && !r->rwqe_valid) {
		return RESPST_ERR_MISSING_OPCODE_FIRST;         /* never after CHK_OP_SEQ */
	}
	if (c->mask & (OPM_READ | OPM_ATOMIC)) {
		/* The requester keeps at most max_dest_rd_atomic outstanding
		 * (its max_rd_atomic, IBA 9.4.4/9.7.5.1.4), so the oldest slot
		 * is free again once its reply left: the requester had it
		 * before sending this.  A slot still sending its first reply
		 * here means the peer broke the limit.  A slot whose reply the
		 * requester may have had already (replay: a duplicate of that
		 * oldest request came in before this one, or the reply was
		 * restored from an image that the stopped source kept sending
		 * after, rocev2_resp_resumed) is stale: the requester completed
		 * that request, or it could not have sent this one, so the
		 * reply stops and the slot is reused (rxe recycles its oldest
		 * resource the same way).  Newer replies still queued keep
		 * their order ahead of this one (IBA 9.7.5.1.1). */
		n = resp_nres(c->qp);
		if (n == 0)
			return RESPST_ERR_TOO_MANY_RD_ATOMIC;
		slot = r->res_head % n;
		if (r->res[slot].sending && !r->res[slot].replay)
			return RESPST_ERR_TOO_MANY_RD_ATOMIC;
		if (r->res[slot].sending) {
			c->e->cnt.resp_replays_dropped++;
			r->res[slot].sending = 0;
			if (r->res_pending == slot + 1u)
				r->res_pending = resp_next_reply(r, slot);
		}
		c->slot = slot;
	}
	return RESPST_CHK_LENGTH;
}

/* IBA 9.7.5.1.4 / rxe check_length: FIRST and MIDDLE carry exactly one MTU,
 * LAST and ONLY at most one; a WRITE carries exactly what its RETH said; a
 * SEND fits in the receive WQE. */
static enum rocev2_resp_state resp_chk_length(struct resp_ctx *c, enum rocev2_resp_state s)
{
	const struct rocev2_resp *r = &c->qp->resp;
	uint32_t mtu = resp_mtu(c->qp), paylen = c->pkt->paylen;
	uint64_t resid;

	(void)s;
	if (paylen > mtu)
		return RESPST_ERR_LENGTH;
	if ((c->mask & (OPM_SEND | OPM_WRITE)) && !(c->mask & OPM_END) && paylen != mtu)
		return RESPST_ERR_LENGTH;
	if (c->mask & OPM_SEND) {
		if (r->rwqe_offset > r->rwqe_length || paylen > r->rwqe_length - r->rwqe_offset)
			return RESPST_ERR_RECV_TOO_LONG;
	}
	if (c->mask & OPM_RETH) {
		if (reth_len(pkt_reth(c->pkt)) > ROCEV2_MAX_MSG)
			return RESPST_ERR_LENGTH;
	}
	if (c->mask & OPM_WRITE) {
		resid = (c->mask & OPM_START) ? reth_len(pkt_reth(c->pkt)) : r->write_resid;
		if (paylen > resid || ((c->mask & OPM_END) && paylen != resid))
			return RESPST_ERR_LENGTH;
	}
	return RESPST_CHK_RKEY;
}

/* IBA 9.7.5.1.5: R_Key, range and access for the memory the request
 * touches.  A zero-length WRITE/READ names no memory and need not carry a
 * valid R_Key, so it is not checked (as rxe).  Later WRITE packets are checked against the stored
 * R_Key too: an MR deregistered mid-message stops the writes. */
static enum rocev2_resp_state resp_chk_rkey(struct resp_ctx *c, enum rocev2_resp_state s)
{
	const struct rocev2_resp *r = &c->qp->resp;
	const struct reth *reth;
	const struct atmeth *atm;

	(void)s;
	if (c->mask & OPM_WRITE) {
		if (c->mask & OPM_START) {
			reth = pkt_reth(c->pkt);
			if (reth_len(reth) &&
			    !resp_rkey_ok(c->e, c->qp, reth_rkey(reth), reth_va(reth), reth_len(reth),
					  ROCEV2_ACCESS_REMOTE_WRITE))
				return RESPST_ERR_RKEY_VIOLATION;
		} else if (c->pkt->paylen &&
			   !resp_rkey_ok(c->e, c->qp, r->write_rkey, r->write_va, c->pkt->paylen,
					 ROCEV2_ACCESS_REMOTE_WRITE)) {
			return RESPST_ERR_RKEY_VIOLATION;
		}
	} else if (c->mask & OPM_READ) {
		reth = pkt_reth(c->pkt);
		if (reth_len(reth) &&
		    !resp_rkey_ok(c->e, c->qp, reth_rkey(reth), reth_va(reth), reth_len(reth),
				  ROCEV2_ACCESS_REMOTE_READ))
			return RESPST_ERR_RKEY_VIOLATION;
	} else if (c->mask & OPM_ATOMIC) {
		atm = pkt_atmeth(c->pkt);
		if (atmeth_va(atm) & 7u)        /* atomics act on aligned 64-bit words */
			return RESPST_ERR_MISALIGNED_ATOMIC;
		if (!resp_rkey_ok(c->e, c->qp, atmeth_rkey(atm), atmeth_va(atm), 8,
				  ROCEV2_ACCESS_REMOTE_ATOMIC))
			return RESPST_ERR_RKEY_VIOLATION;
	}
	return RESPST_EXECUTE;
}

/* Record a READ/ATOMIC in the slot CHK_RESOURCE chose and queue its reply
 * behind the ones still going out.  IBA 9.7.5.1.2 (C9-148): the MSN counts
 * a READ/ATOMIC when it is accepted. */
static struct rocev2_resp_res *resp_res_accept(struct resp_ctx *c, uint32_t npkts)
{
	struct rocev2_resp *r = &c->qp->resp;
	struct rocev2_resp_res *res = &r->res[c->slot];
	uint32_t n = resp_nres(c->qp);

	memset(res, 0, sizeof(*res));
	res->type = c->pkt->opcode;
	res->first_psn = c->pkt->psn;
	res->last_psn = psn_add(c->pkt->psn, npkts - 1u);
	res->cur_psn = res->start_psn = c->pkt->psn;
	r->msn = (r->msn + 1u) & AETH_MSN_MASK;
	res->msn = r->msn;
	res->sending = 1;
	r->res_head = (c->slot + 1u) % n;
	r->psn = psn_add(c->pkt->psn, npkts);
	r->opcode = c->pkt->opcode;
	if (!r->res_pending)
		r->res_pending = c->slot + 1u;
	/* Whatever ACK/NAK waited has a PSN before this reply's: the reply
	 * acknowledges it implicitly (a response PSN acknowledges all before
	 * it), or its PSN is the one just executed. */
	resp_drop_deferred(r);
	return res;
}

static enum rocev2_resp_state resp_execute_atomic(struct resp_ctx *c)
{
	const struct atmeth *atm = pkt_atmeth(c->pkt);
	struct rocev2_resp_res *res;
	uint64_t orig, val;
	uint8_t b[8];

	/* Read, modify, write back.  The firmware runs one packet at a time,
	 * so no other request of ours sees the word in between; the host CPU
	 * may (as with any DMA atomic without a bus lock). */
	if (rocev2_mem_read(c->e, atmeth_rkey(atm), atmeth_va(atm), b, sizeof(b)) < 0)
		return RESPST_ERR_MEMORY;
	orig = get_le64(b);
	if (c->pkt->opcode == OP_COMPARE_SWAP)
		val = orig == atmeth_comp(atm) ? atmeth_swap_add(atm) : orig;
	else
		val = orig + atmeth_swap_add(atm);
	if (val != orig) {
		put_le64(b, val);
		if (rocev2_mem_write(c->e, atmeth_rkey(atm), atmeth_va(atm), b, sizeof(b)) < 0)
			return RESPST_ERR_MEMORY;
	}
	res = resp_res_accept(c, 1);
	res->va = res->va_org = atmeth_va(atm);
	res->rkey = atmeth_rkey(atm);
	res->length = 8;
	res->orig = orig;
	return RESPST_ATOMIC_REPLY;
}

static enum rocev2_resp_state resp_execute(struct resp_ctx *c, enum rocev2_resp_state s)
{
	struct rocev2_resp *r = &c->qp->resp;
	const struct rocev2_pkt *pkt = c->pkt;
	const struct reth *reth;
	struct rocev2_resp_res *res;
	int rc;

	(void)s;
	if (c->mask & OPM_READ) {
		reth = pkt_reth(pkt);
		res = resp_res_accept(c, read_npkts(reth_len(reth), resp_mtu(c->qp)));
		res->va = res->va_org = reth_va(reth);
		res->rkey = reth_rkey(reth);
		res->resid = res->length = reth_len(reth);
		c->e->cnt.resp_packets++;
		return RESPST_READ_REPLY;
	}
	if (c->mask & OPM_ATOMIC) {
		s = resp_execute_atomic(c);
		if (s == RESPST_ATOMIC_REPLY)
			c->e->cnt.resp_packets++;
		return s;
	}
	if (c->mask & OPM_SEND) {
		if (pkt->paylen) {
			rc = rocev2_sge_scatter(c->e, c->qp, r->rwqe.sge, r->rwqe.num_sge, r->rwqe_offset,
						pkt->payload, pkt->paylen);
			if (rc == -HAL_E2BIG)
				return RESPST_ERR_RECV_TOO_LONG;
			if (rc < 0)
				return RESPST_ERR_PROTECTION;   /* lkey/PD/bounds/LOCAL_WRITE or DMA */
		}
		r->rwqe_offset += pkt->paylen;
	} else {                        /* OPM_WRITE */
		if (c->mask & OPM_START) {
			reth = pkt_reth(pkt);
			r->write_va = reth_va(reth);
			r->write_rkey = reth_rkey(reth);
			r->write_resid = reth_len(reth);
			r->write_length = reth_len(reth);
		}
		if (pkt->paylen &&
		    rocev2_mem_write(c->e, r->write_rkey, r->write_va, pkt->payload, pkt->paylen) < 0)
			return RESPST_ERR_MEMORY;
		r->write_va += pkt->paylen;
		r->write_resid -= pkt->paylen;
	}
	r->psn = psn_add(pkt->psn, 1);
	r->ack_psn = r->psn;
	r->ack_psn_valid = 1;
	r->opcode = pkt->opcode;
	if (c->mask & OPM_END)          /* IBA 9.7.5.1.2: one more message done */
		r->msn = (r->msn + 1u) & AETH_MSN_MASK;
	c->e->cnt.resp_packets++;
	if (((c->mask & OPM_SEND) && (c->mask & OPM_END)) || (c->mask & OPM_IMMDT))
		return RESPST_COMPLETE;
	return RESPST_ACKNOWLEDGE;
}

/* IBA 11.4.2: the receive WQE completes with the last packet of a SEND or
 * of a WRITE with immediate. */
static enum rocev2_resp_state resp_complete(struct resp_ctx *c, enum rocev2_resp_state s)
{
	struct rocev2_resp *r = &c->qp->resp;
	uint8_t opcode = MNIC_WC_RECV, flags = 0;
	uint32_t byte_len = (uint32_t)r->rwqe_offset, imm = 0;

	(void)s;
	if (c->mask & OPM_WRITE) {
		opcode = MNIC_WC_RECV_RDMA_WITH_IMM;
		byte_len = r->write_length;
	}
	if (c->mask & OPM_IMMDT) {
		flags |= MNIC_CQE_WITH_IMM;
		imm = immdt_imm(pkt_immdt(c->pkt));
	}
	if (c->mask & OPM_IETH) {
		/* No memory windows here: nothing to invalidate, but the rkey
		 * is reported as the verbs consumer expects. */
		flags |= MNIC_CQE_WITH_INV;
		imm = ieth_rkey(pkt_ieth(c->pkt));
	}
	/* IBA 9.2.3: SE in the last packet of a SEND or RDMA WRITE with
	 * immediate makes the completion solicited (completion events). */
	if (bth_se(c->pkt->bth))
		flags |= MNIC_CQE_SOLICITED;
	if (resp_complete_rwqe(c->e, c->qp, MNIC_WC_SUCCESS, opcode, flags, byte_len, imm, 0) < 0)
		return RESPST_ERR_CQ_OVERFLOW;
	return RESPST_ACKNOWLEDGE;
}

/* IBA 9.7.5.2: ACK when the requester asked (AckReq); coalesced
 * otherwise.  Syndrome 0x1F: end-to-end credits are not implemented (as
 * rxe), the requester is told "unlimited".
 *
 * With rocev2_set_ack_coalesce on (an ACK covers every earlier PSN, IBA
 * 9.7.5.1) the ACK waits for the next poll, which sends one for the
 * newest request (resp_emit), unless replies are queued (their order
 * rules) or this is the ROCEV2_ACK_COALESCE_MAXth request since the last
 * ACK: then it goes now and covers those waiting (resp_send_ack). */
static enum rocev2_resp_state resp_acknowledge(struct resp_ctx *c, enum rocev2_resp_state s)
{
	struct rocev2_resp *r = &c->qp->resp;

	(void)s;
	if (!c->pkt->ackreq)
		return RESPST_DONE;
	if (c->e->ack_coalesce && !r->res_pending && r->ack_coalesced + 1u < ROCEV2_ACK_COALESCE_MAX &&
	    (!r->ack_deferred || r->ack_coalesced)) {
		if (r->ack_coalesced)
			c->e->cnt.resp_acks_coalesced++;        /* one ACK fewer on the wire */
		r->ack_coalesced++;
		resp_defer_ack(c->e, c->qp, AETH_ACK_UNLIMITED, c->pkt->psn, r->msn);
		return RESPST_DONE;
	}
	resp_ack(c->e, c->qp, AETH_ACK_UNLIMITED, c->pkt->psn, r->msn, r->res_pending || !r->ack_coalesced);
	return RESPST_DONE;
}

static enum rocev2_resp_state resp_reply(struct resp_ctx *c, enum rocev2_resp_state s)
{
	(void)s;
	resp_emit(c->e, c->qp, ROCEV2_RESP_RX_BUDGET);
	return RESPST_DONE;
}

/* A read or atomic resource whose response PSNs contain psn. */
static struct rocev2_resp_res *resp_find_res(struct rocev2_resp *r, uint32_t n, uint32_t psn)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct rocev2_resp_res *res = &r->res[i];

		if (res->type && psn_cmp(psn, res->first_psn) >= 0 &&
		    psn_cmp(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

/* Make res the reply in progress: the requester is retrying from this PSN
 * and resends everything after it, so replies queued behind are dropped
 * and come again as duplicates. */
static void resp_replay(struct resp_ctx *c, struct rocev2_resp_res *res)
{
	struct rocev2_resp *r = &c->qp->resp;

	resp_abandon_replies(r);
	res->replay = 1;
	res->sending = 1;
	r->res_pending = (uint32_t)(res - r->res) + 1u;
}

/* IBA 9.7.5.1.1 (duplicates): never executed twice.  SEND/WRITE: ACK
 * again (C9-105) with the newest executed SEND/WRITE PSN and the current
 * MSN; READ: respond again from the resource; ATOMIC: resend the saved
 * result, never execute it twice; no resource: drop (class D). */
static enum rocev2_resp_state resp_duplicate(struct resp_ctx *c, enum rocev2_resp_state s)
{
	struct rocev2_resp *r = &c->qp->resp;
	const struct rocev2_pkt *pkt = c->pkt;
	struct rocev2_resp_res *res;
	uint64_t va, len;

	(void)s;
	if (c->mask & (OPM_SEND | OPM_WRITE)) {
		/* rxe's ack_psn: a READ/ATOMIC accepted since is acknowledged by
		 * its own responses only, never by an ACK (an ACK with an
		 * ATOMIC's PSN would complete it without its value). */
		uint32_t ack = r->ack_psn_valid ? r->ack_psn : c->qp->attr.rq_psn;

		resp_ack(c->e, c->qp, AETH_ACK_UNLIMITED, psn_add(ack, BTH_PSN_MASK), r->msn, 1);
		return RESPST_DONE;
	}
	res = resp_find_res(r, ROCEV2_MAX_RD_ATOMIC, pkt->psn);
	if (!res || !(res->type == OP_READ_REQUEST ? (c->mask & OPM_READ) : (c->mask & OPM_ATOMIC))) {
		c->e->cnt.resp_dup_dropped++;   /* class D: silently dropped */
		return RESPST_DONE;
	}
	if (c->mask & OPM_READ) {
		/* The duplicate may ask for the tail only (the requester got the
		 * first packets): same R_Key, and exactly the bytes of the
		 * original from the one its PSN stands for to the end, so that
		 * its responses fill the resource's PSN range (as hfi1/qib). */
		const struct reth *reth = pkt_reth(pkt);
		uint64_t skip = (uint64_t)((pkt->psn - res->first_psn) & BTH_PSN_MASK) *
				resp_mtu(c->qp);

		va = reth_va(reth);
		len = reth_len(reth);
		if (reth_rkey(reth) != res->rkey || skip > res->length ||
		    len != res->length - skip || va != res->va_org + skip) {
			c->e->cnt.resp_dup_dropped++;
			return RESPST_DONE;
		}
		resp_replay(c, res);
		res->cur_psn = res->start_psn = pkt->psn;
		res->va = va;
		res->resid = (uint32_t)len;
		c->e->cnt.resp_read_replays++;
		return RESPST_READ_REPLY;
	}
	if (atmeth_rkey(pkt_atmeth(pkt)) != res->rkey || atmeth_va(pkt_atmeth(pkt)) != res->va) {
		c->e->cnt.resp_dup_dropped++;
		return RESPST_DONE;
	}
	resp_replay(c, res);
	c->e->cnt.resp_atomic_replays++;
	return RESPST_ATOMIC_REPLY;
}

/* MigrOS RESUME (reference 1(c), receiver side): the peer QP was restored
 * elsewhere (or its dump was aborted).  migrate.c checks it (epoch, MAC,
 * PSN, Paused), takes the new address from its authenticated payload,
 * un-pauses, rewinds the requester and sends the ACK that echoes its epoch
 * (rocev2_mig_rx_resume).  Dropped: counted there, no ACK, a paused QP
 * stays paused and keeps its deadline. */
static enum rocev2_resp_state resp_resume(struct resp_ctx *c, enum rocev2_resp_state s)
{
	struct rocev2_qp *qp = c->qp;

	(void)s;
	if (rocev2_mig_rx_resume(c->e, qp, c->pkt) <= 0)
		return RESPST_DONE;
	qp->resp.sent_psn_nak = 0;
	/* Replies under way went to the old address; the restored requester
	 * asks again for what it misses. */
	resp_abandon_replies(&qp->resp);
	c->e->cnt.resp_resumes++;
	rocev2_sched(c->e, qp);
	return RESPST_DONE;
}

/* Every ERR_* state: the NAK as resp_naks[] says. */
static enum rocev2_resp_state resp_nak(struct resp_ctx *c, enum rocev2_resp_state s)
{
	const struct resp_nak *n = &resp_naks[s];
	struct rocev2_qp *qp = c->qp;
	uint32_t psn = n->psn_expected ? qp->resp.psn : c->pkt->psn;
	uint8_t syndrome = n->syndrome;

	if (n->fatal) {
		resp_fatal(c->e, qp, s, psn);
		return RESPST_DONE;
	}
	if (s == RESPST_ERR_RNR)
		syndrome |= qp->attr.min_rnr_timer & (uint8_t)~AETH_TYPE_MASK;
	count(c->e, n->counter);
	qp->resp.last_error = (uint8_t)s;
	resp_ack(c->e, qp, syndrome, psn, qp->resp.msn, 1);
	return RESPST_DONE;
}

/* The machine: each state's handler.  A switch rather than a table of
 * pointers so that the compiler inlines the handlers into the one loop
 * that runs them (issue 18: an indirect call per state was a tenth of a
 * SEND's receive path); resp_step's cases are the table. */
static enum rocev2_resp_state resp_step(struct resp_ctx *c, enum rocev2_resp_state s)
{
	switch (s) {
	case RESPST_GET_REQ:            return resp_get_req(c, s);
	case RESPST_CHK_PSN:            return resp_chk_psn(c, s);
	case RESPST_CHK_OP_SEQ:         return resp_chk_op_seq(c, s);
	case RESPST_CHK_OP_VALID:       return resp_chk_op_valid(c, s);
	case RESPST_CHK_RESOURCE:       return resp_chk_resource(c, s);
	case RESPST_CHK_LENGTH:         return resp_chk_length(c, s);
	case RESPST_CHK_RKEY:           return resp_chk_rkey(c, s);
	case RESPST_EXECUTE:            return resp_execute(c, s);
	case RESPST_COMPLETE:           return resp_complete(c, s);
	case RESPST_READ_REPLY:
	case RESPST_ATOMIC_REPLY:       return resp_reply(c, s);
	case RESPST_ACKNOWLEDGE:        return resp_acknowledge(c, s);
	case RESPST_DUPLICATE_REQUEST:  return resp_duplicate(c, s);
	case RESPST_RESUME:             return resp_resume(c, s);
	case RESPST_ERR_PSN_OUT_OF_SEQ:
	case RESPST_ERR_STOPPED:
	case RESPST_ERR_RNR:
	case RESPST_ERR_MISSING_OPCODE_FIRST:
	case RESPST_ERR_MISSING_OPCODE_LAST:
	case RESPST_ERR_UNSUPPORTED_OPCODE:
	case RESPST_ERR_TOO_MANY_RD_ATOMIC:
	case RESPST_ERR_LENGTH:
	case RESPST_ERR_RECV_TOO_LONG:
	case RESPST_ERR_MISALIGNED_ATOMIC:
	case RESPST_ERR_RKEY_VIOLATION:
	case RESPST_ERR_MALFORMED_WQE:
	case RESPST_ERR_PROTECTION:
	case RESPST_ERR_MEMORY:
	case RESPST_ERR_CQ_OVERFLOW:    return resp_nak(c, s);
	case RESPST_NONE:
	case RESPST_DONE:
	case RESPST_NUM:
		break;
	}
	return RESPST_DONE;             /* no handler: a table bug; stop */
}

/* ---- entry points ------------------------------------------------------- */

void rocev2_resp_reset(struct rocev2_qp *qp)
{
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->resp.psn = qp->attr.rq_psn & BTH_PSN_MASK;
	qp->resp.opcode = 0xff;
}

void rocev2_resp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	struct resp_ctx c = { e, qp, pkt, pkt->info ? pkt->info->mask : 0u, 0 };
	enum rocev2_resp_state s = RESPST_GET_REQ, last = s;
	unsigned steps = 0;

	/* Each path visits a state at most once: more steps than states is a
	 * table bug, and stopping beats looping in the receive path. */
	while (s != RESPST_DONE && steps++ < RESPST_NUM) {
		last = s;
		s = resp_step(&c, s);
	}
	qp->resp.last_state = (uint8_t)last;
}

unsigned rocev2_resp_run(struct rocev2 *e, struct rocev2_qp *qp, unsigned budget)
{
	if (!resp_qp_ok(qp)) {
		resp_abandon_replies(&qp->resp);
		return 0;
	}
	return resp_emit(e, qp, budget);
}

/* MigrOS: the image was taken when the context stopped, but a stopped
 * responder keeps sending the replies it had queued and answers
 * duplicates (migrate.c), so the requester may have completed a READ or
 * ATOMIC whose reply the restored copy still has to send, and then sent a
 * new one within its limit.  Replies still to be sent go on, but as
 * replays: a new request may take their slot (resp_chk_resource).  After
 * an aborted dump nothing lagged; a requester within its limit never
 * needs the slot early, so marking those too costs nothing. */
void rocev2_resp_resumed(struct rocev2_qp *qp)
{
	unsigned i;

	for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++)
		if (qp->resp.res[i].sending)
			qp->resp.res[i].replay = 1;
}

/* IBA 10.3.1 (QP in Error): the receive WQE being filled and every WQE
 * posted to the QP's own RQ complete with WR_FLUSH_ERR.  WQEs of an SRQ
 * belong to the SRQ and stay for its other QPs (IBA 10.2.9). */
void rocev2_resp_flush(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_resp *r = &qp->resp;
	uint32_t i;
	int rc;

	resp_abandon_replies(r);
	r->write_resid = 0;
	if (r->rwqe_valid) {
		if (resp_complete_rwqe(e, qp, MNIC_WC_WR_FLUSH_ERR, MNIC_WC_RECV, 0, 0, 0, 0) < 0)
			return;                 /* CQ in error: it takes no more */
		e->cnt.flushed_wqes++;
	}
	if (qp->srq != ROCEV2_NO_SRQ)
		return;
	/* Bounded by the ring: rq_take never yields more than size WQEs per
	 * producer read, and the host may keep posting while we flush. */
	for (i = 0; i < qp->rq.q.size; i++) {
		memset(&r->rwqe, 0, sizeof(r->rwqe));
		rc = rocev2_rq_take(e, qp, &r->rwqe);
		if (rc < 0 && rc != -HAL_EINVAL)        /* EINVAL: consumed, bad SGE count */
			break;
		if (resp_complete_rwqe(e, qp, MNIC_WC_WR_FLUSH_ERR, MNIC_WC_RECV, 0, 0, 0, 0) < 0)
			break;
		e->cnt.flushed_wqes++;
	}
}
