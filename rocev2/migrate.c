/* Live migration of RC QPs: MigrOS (USENIX ATC'21) moved into the NIC.
 * Reference: the team notes shared/reference/rocev2-and-migros.md (outside
 * this repository, next to it), items 1(a)-1(e).
 *
 * Two flags per QP, not verbs states (reference 1(a)), and one exchange:
 *
 *   source context           wire                         peer QP
 *   --------------           ----                         -------
 *   dump: qp->stopped = 1
 *   request at resp.psn  <-- SEND/WRITE/READ/ATOMIC ----
 *   NAK_STOPPED (0x65)   ---- ACK syndrome 0x65 -------->  paused = 1, pause timer
 *                                                          (sends nothing, keeps
 *   target: restore, then                                   its WQEs, spends no
 *   rocev2_resume_context()                                 retries)
 *   stopped = 0, RESUME  ---- 0x19, PSN = comp.psn - 1 -->  MAC check, new dmac/dip,
 *                                                          paused = 0, rewinds
 *   resume_pending = 0   <--- ACK, PSN = RESUME's PSN ---
 *   rewinds to comp.psn      ordinary RC recovery fills the gaps both ways
 *
 *   Stopped   the dump sets it (dump.c).  The requester sends nothing
 *             (req.c), the completer drops responses (comp.c), new requests
 *             at resp.psn get NAK_STOPPED and are dropped, duplicates are
 *             still answered (resp.c, reference 1(c) "stopped side"), and
 *             nothing writes host memory: the host is frozen for its own
 *             checkpoint, so no CQE may appear behind the image's back.
 *   Paused    the completer got NAK_STOPPED (comp.c st_pause ->
 *             rocev2_mig_paused).  Sends nothing; the retransmit timer keeps
 *             running without spending retries (comp.c).  After
 *             e->pause_timeout_ns the QP goes to ERR (mig_pause_timeout):
 *             the application gets an error CQE for every WQE, never a hang.
 *   Resuming  mig.resume_pending: our RESUME is to be sent or not yet ACKed.
 *             The requester sends nothing else, the completer takes only the
 *             RESUME's ACK; the responder serves requests as usual (MigrOS
 *             get_req holds them back instead): a peer only sends to us once
 *             it has our RESUME, so they come after it.
 *
 * Abort (rocev2_abort_dump) is a resume in place: the peers that our
 * NAK_STOPPED paused have no other way out of Paused than a RESUME (MigrOS
 * has no un-pause), so every QP in RTS or SQD sends one exactly as after a
 * restore, from the address it already had.
 *
 * A QP in RTR (restored or aborted) sends its RESUME when the application
 * moves it to RTS (rocev2_mig_rts, from modify_qp; mig.resume_at_rts),
 * with the usual retransmission; until then a peer it NAK'd stays Paused
 * (and errors out after its pause timeout if the move never comes).  Not
 * at resume time, although RTR has the address vector and dest QPN (IBA
 * 10.3.1): the RESUME's PSN must be one the QP's send window has already
 * left behind, and in RTR there is no window yet.  sq_psn comes with
 * RTR -> RTS and may be anything, so a PSN picked in RTR may fall inside
 * the first requests' PSNs; an ACK of a RESUME sent again (or duplicated
 * on the wire) arriving after the move would then acknowledge requests
 * the peer never received, the failure described below for MigrOS's
 * comp.psn.  recv.c therefore keeps giving an RTR QP no responses.
 *
 * Both sides rewind at once, where MigrOS waits for the retransmit timer:
 * the paused side when the RESUME arrives (rocev2_mig_resumed), the
 * resumed side when its ACK does (rocev2_mig_resume_acked).
 *
 * The RESUME packet (reference 1(b)/1(c)), sent here rather than by the
 * requester so that its format and its MAC live in one file with the check
 * of received ones:
 *
 *   BTH   opcode 0x19, DestQP = attr.dest_qp_num, PSN = comp.psn - 1 (the
 *         newest acknowledged), AckReq 1, SE 0, PadCnt 0; req.psn is not moved
 *   AETH  present, all zero (MigrOS sends it zeroed)
 *   MAC   only when the QP has a migration key: 8 bytes, SipHash-2-4 in its
 *         canonical byte order (the little-endian 64-bit result)
 *
 *   SipHash message, 16 bytes, big-endian 32-bit words (network order):
 *     0..3   sender's QPN   (the receiver's attr.dest_qp_num)
 *     4..7   receiver's QPN (the RESUME's BTH DestQP)
 *     8..11  PSN            (the RESUME's BTH PSN)
 *    12..15  sender's IPv4 address (the RESUME's IPv4 source)
 *
 * so a MAC is good for one direction of one connection, one PSN and one
 * new address: a forged RESUME cannot redirect a QP, and a replayed one can
 * only point it at the address it already has.
 *
 * The RESUME's PSN echoes in its ACK.  It is comp.psn - 1, a PSN that is
 * already acknowledged, so no ACK at it can complete anything: an ACK of a
 * RESUME sent again that arrives after the rewind is an ordinary duplicate
 * ACK.  (MigrOS sends comp.psn, the oldest outstanding request's PSN: such
 * a late ACK then acknowledged the request sent again at that PSN; if that
 * one was lost, RC could not recover it, and a READ or atomic completed
 * without its data.  Found by tests/integration/migrate_posix.sh under
 * loss.)  The receiver only echoes the PSN, so a MigrOS peer works either
 * way; while resume_pending an ACK at resume_psn is taken for the RESUME's.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "lib/siphash.h"

/* resume_psn before the RESUME is on the wire: matches no 24-bit PSN, so
 * no ACK can be taken for it (comp.c compares the PSN). */
#define MIG_NO_PSN UINT32_MAX
#define MIG_MAC_LEN 8u
/* RESUME retransmission period for a QP without a retransmit timer
 * (timeout 0): 4.096 us * 2^14, about 67 ms. */
#define MIG_RESUME_PERIOD_DEFAULT_NS ROCEV2_RETRANS_NS(14)
/* TX ring full: try the RESUME again this soon. */
#define MIG_TX_BUSY_NS 10000ull

#define MIG_QP_OF(t, member) \
	((struct rocev2_qp *)(void *)((uint8_t *)(t) - offsetof(struct rocev2_qp, member)))

/* The RESUME MAC (layout in the header comment) into mac[8]. */
static void mig_mac(const uint8_t key[16], uint32_t src_qpn, uint32_t dst_qpn, uint32_t psn,
		    uint32_t src_ip, uint8_t mac[MIG_MAC_LEN])
{
	uint8_t msg[16];
	uint64_t h;

	put_be32(msg, src_qpn & BTH_QPN_MASK);
	put_be32(msg + 4, dst_qpn & BTH_QPN_MASK);
	put_be32(msg + 8, psn & BTH_PSN_MASK);
	put_be32(msg + 12, src_ip);
	h = siphash24(key, msg, sizeof(msg));
	put_le32(mac, (uint32_t)h);
	put_le32(mac + 4, (uint32_t)(h >> 32));
}

/* ---- helpers ------------------------------------------------------------- */

/* A QP with a send queue to resume (IBA 10.3.1: RTS, or SQD finishing). */
static int mig_may_resume(const struct rocev2_qp *qp)
{
	return qp->state == ROCEV2_QPS_RTS || qp->state == ROCEV2_QPS_SQD;
}

/* Requests sent and not completed: what a rewind sends again. */
static int mig_outstanding(const struct rocev2_qp *qp)
{
	return qp->req.started && (int32_t)(qp->req.next_new - qp->comp.wqe_index) > 0;
}

/* Send again from comp.psn now, not after a retransmit timeout. */
static void mig_rewind(struct rocev2 *e, struct rocev2_qp *qp)
{
	if (mig_outstanding(qp))
		qp->req.need_retry = 1;
	rocev2_sched(e, qp);
}

static void mig_arm_pause(struct rocev2 *e, struct rocev2_qp *qp)
{
	uint64_t now = rocev2_now(e), ns = e->pause_timeout_ns;

	if (!ns || timer_armed(&qp->mig.pause_timer))
		return;
	/* A heap without room is counted there (stats.full); the QP then
	 * waits for its RESUME without a deadline. */
	(void)timer_arm(&e->timers, &qp->mig.pause_timer,
			   ns > TIMER_NEVER - now ? TIMER_NEVER : now + ns);
}

static uint64_t mig_resume_period(const struct rocev2_qp *qp)
{
	return qp->attr.timeout ? ROCEV2_RETRANS_NS(qp->attr.timeout) : MIG_RESUME_PERIOD_DEFAULT_NS;
}

/* One RESUME (layout in the header comment).  0, -HAL_EAGAIN (TX ring
 * full, nothing sent) or another transmit error (lost like on the wire). */
static int mig_send_resume(struct rocev2 *e, struct rocev2_qp *qp, uint32_t psn)
{
	struct rocev2_tx t;

	rocev2_tx_prepare(e, qp, &t, OP_RESUME, psn, 1, 0, qp->mig.has_key ? MIG_MAC_LEN : 0u);
	/* tx_prepare zeroed the AETH: MigrOS sends it so. */
	if (qp->mig.has_key)
		mig_mac(qp->mig.key, qp->qpn, qp->attr.dest_qp_num, psn, e->env.ipv4, t.payload);
	return rocev2_tx_send(e, &t);
}

/* Send (or send again) the RESUME and arm its retransmission. */
static void mig_transmit(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_mig *m = &qp->mig;
	/* The completer takes nothing but the RESUME's ACK meanwhile, so
	 * comp.psn, and with it the RESUME's PSN, stays put until it comes.
	 * comp.psn - 1: acknowledged already (header comment). */
	uint32_t psn = (qp->comp.psn - 1u) & BTH_PSN_MASK;
	uint64_t next = mig_resume_period(qp);

	if (mig_send_resume(e, qp, psn) == -HAL_EAGAIN) {
		next = MIG_TX_BUSY_NS;          /* not sent: not a retransmission */
	} else if (m->resume_psn == MIG_NO_PSN) {
		e->cnt.mig_resumes_sent++;
		m->resume_psn = psn;
	} else {
		/* No ACK within the period.  Never given up (a peer that stays
		 * away ends its own wait by its pause timeout): only counted. */
		e->cnt.mig_resume_retransmits++;
		m->resume_retries++;
		m->resume_psn = psn;
	}
	(void)timer_arm(&e->timers, &m->resume_timer, rocev2_now(e) + next);
}

static void mig_start_resume(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_mig *m = &qp->mig;

	m->resume_pending = 1;
	m->resume_psn = MIG_NO_PSN;
	m->resume_retries = 0;
	mig_transmit(e, qp);
}

/* ---- timers ------------------------------------------------------------- */

/* No RESUME ACK within the period (or the TX ring was full). */
static void mig_resume_timeout(struct timer *t, void *arg)
{
	struct rocev2 *e = arg;
	struct rocev2_qp *qp = MIG_QP_OF(t, mig.resume_timer);

	/* (ERR and RESET cancel the timer; stopped: dumped again, the next
	 * resume restarts the exchange.) */
	if (!qp->in_use || !qp->mig.resume_pending || !mig_may_resume(qp) || qp->stopped)
		return;
	mig_transmit(e, qp);
}

/* The stopped peer never resumed: IBA 10.8.3.1 error completions instead
 * of a hang.  The head WQE completes with RETRY_EXC_ERR (the peer stopped
 * answering, as for an exhausted retry count) and vendor_err = 0x65, the
 * NAK that paused us; the rest are flushed; QP_FATAL reports the QP. */
static void mig_pause_timeout(struct timer *t, void *arg)
{
	struct rocev2 *e = arg;
	struct rocev2_qp *qp = MIG_QP_OF(t, mig.pause_timer);
	struct rocev2_req *req = &qp->req;
	uint32_t head = qp->comp.wqe_index;

	if (!qp->in_use || !qp->paused)
		return;
	/* Our own host is frozen for a checkpoint: no CQE may be written
	 * behind the image's back.  rocev2_resume_context re-arms the timer. */
	if (qp->stopped)
		return;
	if (qp->state != ROCEV2_QPS_RTS && qp->state != ROCEV2_QPS_SQD &&
	    qp->state != ROCEV2_QPS_SQE)
		return;
	e->cnt.mig_pause_timeouts++;
	if (mig_outstanding(qp) && !(req->err_pending && req->err_index == head)) {
		req->err_pending = 1;
		req->err_index = head;
		req->err_status = MNIC_WC_RETRY_EXC_ERR;
		req->err_vendor = AETH_NAK_STOPPED;
	}
	qp->paused = 0;
	rocev2_qp_to_error(e, qp, ROCEV2_EVENT_QP_FATAL);
}

/* ---- stage hooks (internal.h) -------------------------------------------- */

void rocev2_mig_reset(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_mig *m = &qp->mig;

	/* Armed timers leave the heap before the memset forgets they are in
	 * it (qp.c sets them up idle before the first call). */
	timer_cancel(&e->timers, &m->pause_timer);
	timer_cancel(&e->timers, &m->resume_timer);
	memset(m, 0, sizeof(*m));       /* the key too: it belonged to the old connection */
	m->resume_psn = MIG_NO_PSN;
	timer_setup(&m->pause_timer, mig_pause_timeout, e);
	timer_setup(&m->resume_timer, mig_resume_timeout, e);
}

void rocev2_mig_paused(struct rocev2 *e, struct rocev2_qp *qp)
{
	e->cnt.mig_pauses++;
	mig_arm_pause(e, qp);
}

/* MigrOS leaves what the stopped peer NAK'd to the retransmit timer; we
 * rewind at once, which takes a retransmit timeout off the downtime. */
void rocev2_mig_resumed(struct rocev2 *e, struct rocev2_qp *qp)
{
	timer_cancel(&e->timers, &qp->mig.pause_timer);
	if (!qp->paused)
		return;                 /* a RESUME we already had, or an aborted dump's */
	qp->paused = 0;
	mig_rewind(e, qp);
}

int rocev2_mig_check_resume(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	uint8_t mac[MIG_MAC_LEN], diff = 0;
	unsigned i;

	/* Without a key, MigrOS's unauthenticated RESUME; a MAC the peer adds
	 * anyway is ignored. */
	if (!qp->mig.has_key)
		return 0;
	if (pkt->paylen != MIG_MAC_LEN || !pkt->ip || !pkt->payload) {
		e->cnt.mig_resume_forged++;
		return -HAL_EACCES;
	}
	mig_mac(qp->mig.key, qp->attr.dest_qp_num, qp->qpn, pkt->psn, ipv4_saddr(pkt->ip), mac);
	/* Every byte compared: the time taken says nothing about the MAC. */
	for (i = 0; i < MIG_MAC_LEN; i++)
		diff |= (uint8_t)(mac[i] ^ pkt->payload[i]);
	if (diff) {
		e->cnt.mig_resume_forged++;
		return -HAL_EACCES;
	}
	return 0;
}

void rocev2_mig_resume_acked(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_mig *m = &qp->mig;

	if (!m->resume_pending || m->resume_psn == MIG_NO_PSN)
		return;
	m->resume_pending = 0;
	timer_cancel(&e->timers, &m->resume_timer);
	e->cnt.mig_resumes_acked++;
	/* Responses to what we sent before the stop were dropped (stopped) or
	 * went to our old address (restored): send again from comp.psn; the
	 * peer answers duplicates (replays READs and atomics, never executes
	 * them twice) and NAKs a gap. */
	mig_rewind(e, qp);
}

/* RTR -> RTS of a QP resumed in RTR: now it has a send PSN, and its
 * RESUME carries sq_psn - 1 (qp_attr_apply set comp.psn = sq_psn), which
 * stays acknowledged as the window moves on (header comment).  Still
 * stopped (dumped again, the host moved it anyway): rocev2_resume_context
 * finds it in RTS and sends the RESUME then. */
void rocev2_mig_rts(struct rocev2 *e, struct rocev2_qp *qp)
{
	if (!qp->mig.resume_at_rts)
		return;
	qp->mig.resume_at_rts = 0;
	if (!qp->stopped && mig_may_resume(qp))
		mig_start_resume(e, qp);
}

/* ---- public API (rocev2.h) ------------------------------------------------ */

/* Only the owner's Stopped QPs (dumped or restored): a QP that was never
 * stopped, or belongs to another context, is not one the peer expects a
 * RESUME from, and a peer without the extension would stall on it. */
int rocev2_resume_context(struct rocev2 *e, uint32_t owner)
{
	unsigned i;

	if (owner >= ROCEV2_MAX_OWNERS)
		return -HAL_EINVAL;
	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		struct rocev2_qp *qp = &e->qps[i];

		if (!qp->in_use || qp->owner != owner || !qp->stopped)
			continue;
		qp->stopped = 0;
		/* Paused when it was dumped (its peer stopped too): the wait
		 * for the peer's RESUME starts again here. */
		if (qp->paused)
			mig_arm_pause(e, qp);
		/* A restore arms no timer (restore.c): an RNR wait without its
		 * timer would never end (the time it asked for has passed,
		 * resend), and outstanding requests need their retransmit
		 * timer (it spends no retries before the RESUME's ACK). */
		if (qp->comp.rnr_wait && !timer_armed(&qp->comp.rnr_timer)) {
			qp->comp.rnr_wait = 0;
			qp->req.need_retry = 1;
		}
		if (mig_outstanding(qp) && qp->attr.timeout &&
		    !timer_armed(&qp->comp.retrans_timer))
			(void)timer_arm(&e->timers, &qp->comp.retrans_timer,
					   rocev2_now(e) + ROCEV2_RETRANS_NS(qp->attr.timeout));
		if (mig_may_resume(qp))
			mig_start_resume(e, qp);
		else if (qp->state == ROCEV2_QPS_RTR)
			qp->mig.resume_at_rts = 1;      /* rocev2_mig_rts (header comment) */
		/* Replies and deferred ACKs (resp_run) continue, as replays
		 * (the requester may have them from the stopped source); the
		 * requester waits for the RESUME's ACK. */
		rocev2_resp_resumed(qp);
		if (qp->state >= ROCEV2_QPS_RTR && qp->state <= ROCEV2_QPS_SQE)
			rocev2_sched(e, qp);
	}
	e->owner_stopped[owner] = 0;
	return 0;
}

int rocev2_abort_dump(struct rocev2 *e, uint32_t owner)
{
	if (owner >= ROCEV2_MAX_OWNERS)
		return -HAL_EINVAL;
	if (!rocev2_context_stopped(e, owner))
		return 0;               /* nothing to undo */
	e->cnt.mig_aborts++;
	return rocev2_resume_context(e, owner);
}

/* key NULL removes the key: RESUMEs go out without a MAC and are accepted
 * without one.  A move to RESET forgets it (rocev2_mig_reset). */
int rocev2_set_mig_key(struct rocev2 *e, uint32_t qpn, const uint8_t key[16])
{
	struct rocev2_qp *qp = rocev2_qp_lookup(e, qpn);

	if (!qp)
		return -HAL_EINVAL;
	if (!key) {
		memset(qp->mig.key, 0, sizeof(qp->mig.key));
		qp->mig.has_key = 0;
		return 0;
	}
	memcpy(qp->mig.key, key, sizeof(qp->mig.key));
	qp->mig.has_key = 1;
	return 0;
}

/* Takes effect at once: a QP paused now waits ns from here (0: forever).
 * One that is also stopped gets its deadline when it is resumed. */
void rocev2_set_pause_timeout(struct rocev2 *e, uint64_t ns)
{
	unsigned i;

	e->pause_timeout_ns = ns;
	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		struct rocev2_qp *qp = &e->qps[i];

		if (!qp->in_use || !qp->paused || qp->stopped)
			continue;
		timer_cancel(&e->timers, &qp->mig.pause_timer);
		mig_arm_pause(e, qp);
	}
}
