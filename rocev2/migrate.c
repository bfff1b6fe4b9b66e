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
 *   stopped = 0, RESUME  ---- 0x19, PSN = comp.psn - 1 -->  epoch + MAC check, new
 *     (epoch n + 1)          epoch, address, MAC           dmac/dip from the payload,
 *                                                          paused = 0, rewinds
 *   resume_pending = 0   <--- ACK + extension (epoch, ----
 *                             MAC), PSN = RESUME's PSN
 *   rewinds to comp.psn      ordinary RC recovery fills the gaps both ways
 *
 *   Stopped   the dump sets it (dump.c).  The requester sends nothing
 *             (req.c), the completer drops responses (comp.c), new requests
 *             at resp.psn get NAK_STOPPED and are dropped, duplicates are
 *             still answered (resp.c, reference 1(c) "stopped side"), and
 *             nothing writes host memory: the host is frozen for its own
 *             checkpoint, so no CQE may appear behind the image's back.
 *   Paused    the completer got NAK_STOPPED (comp.c st_pause ->
 *             rocev2_mig_paused), once rocev2_mig_check_nak_stopped has
 *             accepted its epoch and MAC.  Sends nothing; the retransmit timer keeps
 *             running without spending retries (comp.c).  After
 *             e->pause_timeout_ns in total the QP goes to ERR (mig_pause_timeout):
 *             the application gets an error CQE for every WQE, never a hang.
 *   Resuming  mig.resume_pending: our RESUME is to be sent or not yet ACKed.
 *             The requester sends nothing else, the completer takes only the
 *             RESUME's ACK; after the resume budget the QP goes to ERR; the responder serves requests as usual (MigrOS
 *             get_req holds them back instead): a peer only sends to us once
 *             it has our RESUME, so they come after it.
 *
 * Abort (rocev2_abort_dump) is a resume in place: the peers that our
 * NAK_STOPPED paused have no other way out of Paused than a RESUME (MigrOS
 * has no un-pause), so every Stopped QP of the context in RTS or SQD sends
 * one exactly as after a restore, from the address it already had.  Both
 * act on one context (owner) and on its Stopped QPs only: other contexts'
 * QPs, and QPs never stopped, are not touched.
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
 * the paused side when the RESUME arrives (rocev2_mig_rx_resume), the
 * resumed side when its ACK does (rocev2_mig_resume_acked).
 *
 * The migration protocol, version 2 (version 1 carried an IPv4 address
 * only).  MigrOS's wire values stay (RESUME
 * = opcode 0x19, NAK_STOPPED = ACK syndrome 0x65, reference 1(b)/1(c));
 * its payloads are extended, with a version byte.  All of it is built and
 * checked here, so that formats, MACs and their checks live in one file.
 *
 *   RESUME: BTH opcode 0x19, DestQP = attr.dest_qp_num, PSN = comp.psn - 1
 *   (the newest acknowledged), AckReq 1; AETH present, all zero (as MigrOS);
 *   payload:
 *     0      version (2)
 *     1      flags: bit 0 = a MAC follows (the QP has a key)
 *     2..3   0
 *     4..7   epoch (the sender's migrations, see below), big-endian
 *     8..23  the sender's new GID (its source address: IPv4-mapped for
 *            RoCEv2 over IPv4, rocev2.h)
 *    24..29  the sender's new Ethernet address
 *    30..31  0
 *    32..39  MAC (keyed only)
 *   The receiver takes its new dmac/dgid from bytes 8..29, which the MAC
 *   covers, never from the frame's Ethernet/IP headers, which neither
 *   the MAC nor the ICRC (IBA A17.3.3: Ethernet is not covered) protects.
 *   The GID may change family (a peer moved from an IPv4 to an IPv6
 *   port): the receiver's next frames follow it.
 *
 *   ACKNOWLEDGE extension (payload after the AETH), carried by the ACK of
 *   a RESUME (syndrome ACK) and by NAK_STOPPED (syndrome 0x65):
 *     0      version (2)
 *     1      flags: bit 0 = a MAC follows
 *     2      kind: 2 = RESUME's ACK, 3 = NAK_STOPPED
 *     3      0
 *     4..7   epoch: the RESUME's (ACK), the stopped side's current (NAK)
 *     8..15  MAC (keyed only)
 *   A plain ACK carries none, so a duplicate ACK at the RESUME's PSN can
 *   no longer be taken for the RESUME's ACK: only one echoing its epoch
 *   and PSN (and, keyed, with the MAC) completes the RESUME.
 *
 *   MAC: SipHash-2-4 (canonical byte order, the little-endian 64-bit
 *   result) over 48 bytes, big-endian words:
 *     0      kind (1 = RESUME, 2 = RESUME's ACK, 3 = NAK_STOPPED)
 *     1      version (2)
 *     2..3   0
 *     4..7   epoch
 *     8..11  sender's QPN  (the receiver's attr.dest_qp_num)
 *    12..15  receiver's QPN (the BTH DestQP)
 *    16..19  BTH PSN
 *    20..35  new GID (RESUME; 0 otherwise)
 *    36..41  new Ethernet address (RESUME; 0 otherwise), 42..47 0
 *   so a MAC is good for one kind of message, one direction of one
 *   connection, one epoch, one PSN and one new address.
 *
 * Epochs and keys.  Each direction of a connection has an epoch and a key
 * (struct rocev2_mig: tx for this end's migrations, rx for its peer's);
 * rocev2_set_mig_key starts both at (0, the operator's key K), on both
 * ends.  Each time this end starts a RESUME exchange (after a restore, or
 * an aborted dump) it moves its tx epoch to n + 1 and its key to
 *     K(n + 1) = SipHash-2-4(K(n), "MNICMIGR" || n + 1 || 0)
 *             || SipHash-2-4(K(n), "MNICMIGR" || n + 1 || 1),
 * and MACs the RESUME under it.  The peer accepts an epoch rx + d for
 * 1 <= d <= MIG_EPOCH_WINDOW (computing K(rx + d) from its K(rx), d
 * ratchet steps, and checking the MAC under it), then moves its rx epoch
 * and key there and forgets the old key.  Its ACK is MACed under the new
 * key.  The image carries both epochs and both keys (docs/migration-image.md,
 * QP record version 2).  NAK_STOPPED carries the stopped side's current tx
 * epoch, MACed under its current key: the peer accepts it at its rx epoch
 * or up to MIG_EPOCH_WINDOW ahead (pausing moves no epoch).
 *
 *   What this gives.  A captured RESUME is worthless once it has been
 *   accepted: its epoch is then the peer's current one (or a past one,
 *   if a later epoch was accepted first), and a RESUME of
 *   the current epoch is only answered (its ACK, again) when it changes
 *   nothing (same address, QP not Paused); of a past epoch it is dropped
 *   without a look (mig_resume_replayed).  A NAK_STOPPED is good for one
 *   epoch, which ends with the migration it announced: replaying it
 *   later pauses nothing.  Rewriting any field of a RESUME (the address
 *   in particular) breaks its MAC (mig_resume_forged).  The ratchet is
 *   one-way (SipHash as a PRF: K(n) is not computable from K(n + 1)), so
 *   an image of a later migration does not give the keys of earlier ones.
 *   What it does not give: K(n) gives every later key, so whoever reads
 *   an image (it carries the key in the clear) can forge RESUMEs of all
 *   later epochs of that connection until the operator installs a new key
 *   on both ends (SET_QP_MIG_KEY; the key exchange is the orchestrator's,
 *   out of band).  The wire is cleartext: nothing here is confidential,
 *   and a man in the middle can always drop frames (the bounds below then
 *   end the wait with error completions, never a hang).
 *
 *   Double faults: why a window, not exactly the next epoch.  A QP
 *   dumped again while its RESUME is unacknowledged (or not even sent:
 *   a full TX ring holds it back) starts the next exchange at the epoch
 *   after that one; the image cannot say whether the peer had the first.
 *   If it had not, the new RESUME is two ahead, and NAK_STOPPEDs of the
 *   second stop one ahead.  Accepting exactly rx + 1 dropped both: the
 *   peer kept retrying the old address and ran out of retries.  Within
 *   the window nothing is weaker: only a holder of K(rx) can MAC an epoch
 *   ahead, accepted epochs only grow (a replay is always behind), and a
 *   hostile frame costs at most MIG_EPOCH_WINDOW ratchet steps (two
 *   SipHash-2-4 of 16 bytes each).  Beyond the window (more dumps in a
 *   row than that, each without a RESUME reaching the peer) the QP errors
 *   out after its resume budget.
 *
 * Who follows a RESUME (resp.c hands it to rocev2_mig_rx_resume):
 *   - its PSN must be one the responder has received already
 *     (psn_cmp(psn, resp.psn) < 0; the sender's comp.psn - 1), else
 *     mig_resume_refused;
 *   - keyed: a MAC for a next epoch (within the window) moves the QP to the new
 *     address, Paused or not (a peer idle during the migration was never
 *     NAK'd, and the epoch MAC proves the migration); the current epoch
 *     is ACKed again only if it changes nothing;
 *   - unkeyed: only with MNIC_MIG_CFG_UNKEYED (mig_unkeyed_refused), the
 *     epoch still within the window, and only a Paused QP changes address
 *     (an unkeyed RESUME at a live QP from a foreign address is dropped,
 *     mig_resume_refused; one from the address it has is ACKed).
 *   NAK_STOPPED pauses only with a good MAC for the current rx epoch or
 *   one within the window ahead (mig_nak_stopped_forged), or unkeyed
 *   under MNIC_MIG_CFG_UNKEYED.
 *
 * Bounds.  Paused ends only with a RESUME that completes a migration (the
 * next epoch): replays neither un-pause nor restart the pause timer, so a
 * QP is Paused at most e->pause_timeout_ns in total across any number of
 * NAK_STOPPED/RESUME frames before it goes to ERR.  The RESUME is resent
 * each retransmit period until e->resume_budget_ns has passed (0: the
 * QP's retry_cnt x its period, at least one period; retry_cnt 7 is 7, as
 * IBA 9.7.6.1.2 counts it), then the QP goes to ERR and its WQEs complete
 * in error (mig_resume_gave_up): a peer that is gone is detected.
 *
 * The RESUME's PSN, comp.psn - 1, is already acknowledged, so no ACK at it
 * can complete anything: an ACK of a RESUME sent again that arrives after
 * the rewind is an ordinary duplicate ACK.  (MigrOS sends comp.psn, the
 * oldest outstanding request's PSN: such a late ACK then acknowledged the
 * request sent again at that PSN; if that one was lost, RC could not
 * recover it, and a READ or atomic completed without its data.  Found by
 * tests/integration/migrate_posix.sh under loss.)
 *
 * Compatibility: MigrOS's AETH-only RESUME and extension-less NAK_STOPPED
 * carry no epoch and are refused; a peer must speak version 2.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "lib/siphash.h"

/* resume_psn before the RESUME is on the wire: matches no 24-bit PSN, so
 * no ACK can be taken for it. */
#define MIG_NO_PSN UINT32_MAX
/* How far ahead of its rx epoch a peer's RESUME or NAK_STOPPED may be
 * (header comment, "Double faults"). */
#define MIG_EPOCH_WINDOW 4u
#define MIG_MAC_LEN 8u
#define MIG_VERSION 2u
#define MIG_F_MAC 0x01u
/* Message kinds (MAC byte 0; extension byte 2). */
#define MIG_KIND_RESUME 1u
#define MIG_KIND_RESUME_ACK 2u
#define MIG_KIND_NAK_STOPPED 3u
/* RESUME payload and ACKNOWLEDGE extension (header comment). */
#define MIG_RESUME_LEN 32u
#define MIG_RESUME_OFF_EPOCH 4u
#define MIG_RESUME_OFF_GID 8u
#define MIG_RESUME_OFF_MAC_ADDR 24u
#define MIG_EXT_LEN 8u
#define MIG_EXT_OFF_KIND 2u
#define MIG_EXT_OFF_EPOCH 4u
#define MIG_MSG_LEN 48u
_Static_assert(MIG_RESUME_LEN % 4u == 0 && MIG_EXT_LEN % 4u == 0 && MIG_MAC_LEN % 4u == 0,
	       "IBA 9.2: payloads without pad");
/* RESUME retransmission period for a QP without a retransmit timer
 * (timeout 0): 4.096 us * 2^14, about 67 ms. */
#define MIG_RESUME_PERIOD_DEFAULT_NS ROCEV2_RETRANS_NS(14)
/* TX ring full: try the RESUME again this soon. */
#define MIG_TX_BUSY_NS 10000ull

#define MIG_QP_OF(t, member) \
	((struct rocev2_qp *)(void *)((uint8_t *)(t) - offsetof(struct rocev2_qp, member)))

/* What a message carries into its MAC (layout in the header comment). */
struct mig_msg {
	uint8_t kind;
	uint32_t epoch;
	uint32_t src_qpn, dst_qpn, psn;
	const uint8_t *gid;             /* RESUME: new GID (16 bytes), else NULL */
	const uint8_t *mac_addr;        /* RESUME: new Ethernet address, else NULL */
};

static void mig_mac(const uint8_t key[16], const struct mig_msg *m, uint8_t mac[MIG_MAC_LEN])
{
	uint8_t msg[MIG_MSG_LEN];
	uint64_t h;

	memset(msg, 0, sizeof(msg));
	msg[0] = m->kind;
	msg[1] = MIG_VERSION;
	put_be32(msg + 4, m->epoch);
	put_be32(msg + 8, m->src_qpn & BTH_QPN_MASK);
	put_be32(msg + 12, m->dst_qpn & BTH_QPN_MASK);
	put_be32(msg + 16, m->psn & BTH_PSN_MASK);
	if (m->gid)
		memcpy(msg + 20, m->gid, ROCEV2_GID_LEN);
	if (m->mac_addr)
		memcpy(msg + 36, m->mac_addr, 6);
	h = siphash24(key, msg, sizeof(msg));
	put_le32(mac, (uint32_t)h);
	put_le32(mac + 4, (uint32_t)(h >> 32));
}

/* 0 if mac is the MAC of m under key.  Every byte compared: the time
 * taken says nothing about where a forged MAC goes wrong. */
static int mig_mac_check(const uint8_t key[16], const struct mig_msg *m, const uint8_t *mac)
{
	uint8_t want[MIG_MAC_LEN], diff = 0;
	unsigned i;

	mig_mac(key, m, want);
	for (i = 0; i < MIG_MAC_LEN; i++)
		diff |= (uint8_t)(want[i] ^ mac[i]);
	return diff ? -HAL_EACCES : 0;
}

/* K(epoch) from K(epoch - 1) (header comment): one-way. */
static void mig_ratchet(const uint8_t key[16], uint32_t epoch, uint8_t out[16])
{
	uint8_t msg[16] = { 'M', 'N', 'I', 'C', 'M', 'I', 'G', 'R' };
	uint64_t h0, h1;

	put_be32(msg + 8, epoch);
	put_be32(msg + 12, 0);
	h0 = siphash24(key, msg, sizeof(msg));
	put_be32(msg + 12, 1);
	h1 = siphash24(key, msg, sizeof(msg));
	put_le32(out, (uint32_t)h0);
	put_le32(out + 4, (uint32_t)(h0 >> 32));
	put_le32(out + 8, (uint32_t)h1);
	put_le32(out + 12, (uint32_t)(h1 >> 32));
}

/* K(to) from K(from), from <= to: to - from ratchet steps. */
static void mig_key_at(const uint8_t key[16], uint32_t from, uint32_t to, uint8_t out[16])
{
	memcpy(out, key, 16);
	while (from != to)
		mig_ratchet(out, ++from, out);
}

/* An unkeyed message is taken only where the operator allowed it. */
static int mig_unkeyed_ok(struct rocev2 *e)
{
	if (e->mig_flags & ROCEV2_MIG_F_UNKEYED)
		return 1;
	e->cnt.mig_unkeyed_refused++;
	return 0;
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

/* How long RESUMEs are resent: MIG_CONFIG's budget, else retry_cnt
 * periods; at least one period (retry_cnt 0: the first RESUME and its
 * timeout, as IBA's retry_cnt 0 allows the first transmission only). */
static uint64_t mig_resume_budget(const struct rocev2 *e, const struct rocev2_qp *qp)
{
	uint64_t period = mig_resume_period(qp);
	uint64_t ns = e->resume_budget_ns ? e->resume_budget_ns
					  : (uint64_t)qp->attr.retry_cnt * period;

	return ns > period ? ns : period;
}

/* The error completions of a QP whose peer is gone or never came back
 * (IBA 10.8.3.1): the head WQE completes with RETRY_EXC_ERR (the peer
 * stopped answering, as for an exhausted retry count) and vendor_err
 * names the cause; the rest are flushed; QP_FATAL reports the QP. */
static void mig_fail(struct rocev2 *e, struct rocev2_qp *qp, uint8_t vendor)
{
	struct rocev2_req *req = &qp->req;
	uint32_t head = qp->comp.wqe_index;

	if (mig_outstanding(qp) && !(req->err_pending && req->err_index == head)) {
		req->err_pending = 1;
		req->err_index = head;
		req->err_status = MNIC_WC_RETRY_EXC_ERR;
		req->err_vendor = vendor;
	}
	qp->paused = 0;
	qp->mig.resume_pending = 0;
	rocev2_qp_to_error(e, qp, ROCEV2_EVENT_QP_FATAL);
}

/* One RESUME (layout in the header comment), from the address the QP's
 * packets come from (rocev2_qp_sgid: what its peer will see them come
 * from).  0, -HAL_EAGAIN (TX ring full, nothing sent) or another transmit
 * error (lost like on the wire; tx_no_gid without an address). */
static int mig_send_resume(struct rocev2 *e, struct rocev2_qp *qp, uint32_t psn)
{
	const struct rocev2_mig *m = &qp->mig;
	struct rocev2_tx t;
	uint8_t src[ROCEV2_GID_LEN] = { 0 };
	struct mig_msg msg = { MIG_KIND_RESUME, m->tx_epoch, qp->qpn, qp->attr.dest_qp_num, psn,
			       src, e->env.mac };

	(void)rocev2_qp_sgid(e, qp, src);       /* none: tx_send refuses the frame */

	rocev2_tx_prepare(e, qp, &t, OP_RESUME, psn, 1, 0,
			  MIG_RESUME_LEN + (m->has_key ? MIG_MAC_LEN : 0u));
	/* tx_prepare zeroed the AETH: MigrOS sends it so. */
	memset(t.payload, 0, MIG_RESUME_LEN);
	t.payload[0] = MIG_VERSION;
	t.payload[1] = m->has_key ? MIG_F_MAC : 0u;
	put_be32(t.payload + MIG_RESUME_OFF_EPOCH, m->tx_epoch);
	memcpy(t.payload + MIG_RESUME_OFF_GID, src, ROCEV2_GID_LEN);
	memcpy(t.payload + MIG_RESUME_OFF_MAC_ADDR, e->env.mac, 6);
	if (m->has_key)
		mig_mac(m->tx_key, &msg, t.payload + MIG_RESUME_LEN);
	return rocev2_tx_send(e, &t);
}

/* Send (or send again) the RESUME and arm its retransmission, or give up
 * once the budget is spent. */
static void mig_transmit(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_mig *m = &qp->mig;
	/* The completer takes nothing but the RESUME's ACK meanwhile, so
	 * comp.psn, and with it the RESUME's PSN, stays put until it comes.
	 * comp.psn - 1: acknowledged already (header comment). */
	uint32_t psn = (qp->comp.psn - 1u) & BTH_PSN_MASK;
	uint64_t now = rocev2_now(e), next = mig_resume_period(qp);

	if (m->resume_psn != MIG_NO_PSN && now >= m->resume_deadline) {
		e->cnt.mig_resume_gave_up++;
		mig_fail(e, qp, OP_RESUME);
		return;
	}
	if (mig_send_resume(e, qp, psn) == -HAL_EAGAIN) {
		next = MIG_TX_BUSY_NS;          /* not sent: not a retransmission */
	} else if (m->resume_psn == MIG_NO_PSN) {
		e->cnt.mig_resumes_sent++;
		m->resume_psn = psn;
	} else {
		e->cnt.mig_resume_retransmits++;
		m->resume_retries++;
		m->resume_psn = psn;
	}
	/* The last wait ends at the deadline, where the next call gives up
	 * (a first RESUME held back by a full ring may go out after it). */
	if (m->resume_psn != MIG_NO_PSN && now + next > m->resume_deadline)
		next = m->resume_deadline > now ? m->resume_deadline - now : 0;
	(void)timer_arm(&e->timers, &m->resume_timer, now + next);
}

/* Start a RESUME exchange: a new epoch and key for this end's direction,
 * unless the previous exchange is still unacknowledged on this QP (a
 * resume called again in place: the peer may have accepted that epoch,
 * and accepts a RESUME of it again when it changes nothing). */
static void mig_start_resume(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_mig *m = &qp->mig;

	if (!m->resume_pending) {
		m->tx_epoch++;
		if (m->has_key)
			mig_ratchet(m->tx_key, m->tx_epoch, m->tx_key);
	}
	m->resume_pending = 1;
	m->resume_psn = MIG_NO_PSN;
	m->resume_retries = 0;
	m->resume_deadline = rocev2_now(e) + mig_resume_budget(e, qp);
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

/* The stopped peer never resumed: error completions instead of a hang
 * (mig_fail), vendor_err = 0x65, the NAK that paused us. */
static void mig_pause_timeout(struct timer *t, void *arg)
{
	struct rocev2 *e = arg;
	struct rocev2_qp *qp = MIG_QP_OF(t, mig.pause_timer);

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
	mig_fail(e, qp, AETH_NAK_STOPPED);
}

/* ---- stage hooks (internal.h) -------------------------------------------- */

void rocev2_mig_reset(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_mig *m = &qp->mig;

	/* Armed timers leave the heap before the memset forgets they are in
	 * it (qp.c sets them up idle before the first call). */
	timer_cancel(&e->timers, &m->pause_timer);
	timer_cancel(&e->timers, &m->resume_timer);
	memset(m, 0, sizeof(*m));       /* keys and epochs too: the old connection's */
	m->resume_psn = MIG_NO_PSN;
	timer_setup(&m->pause_timer, mig_pause_timeout, e);
	timer_setup(&m->resume_timer, mig_resume_timeout, e);
}

/* The pause timer is armed once per pause and cancelled only by a RESUME
 * that completes a migration (rocev2_mig_rx_resume): NAK_STOPPEDs that
 * come while Paused do not move the deadline (header comment, Bounds). */
void rocev2_mig_paused(struct rocev2 *e, struct rocev2_qp *qp)
{
	e->cnt.mig_pauses++;
	mig_arm_pause(e, qp);
}

/* The ACKNOWLEDGE extension at pkt's payload: 1 and its fields if well
 * formed (version, flags agreeing with the length, reserved bytes 0). */
static int mig_ext_parse(const struct rocev2_pkt *pkt, uint8_t *kind, uint32_t *epoch,
			 const uint8_t **mac)
{
	const uint8_t *p = pkt->payload;

	if (!p || (pkt->paylen != MIG_EXT_LEN && pkt->paylen != MIG_EXT_LEN + MIG_MAC_LEN))
		return 0;
	if (p[0] != MIG_VERSION || (p[1] & ~MIG_F_MAC) || p[3] != 0 ||
	    !(p[1] & MIG_F_MAC) != (pkt->paylen == MIG_EXT_LEN))
		return 0;
	*kind = p[MIG_EXT_OFF_KIND];
	*epoch = get_be32(p + MIG_EXT_OFF_EPOCH);
	*mac = (p[1] & MIG_F_MAC) ? p + MIG_EXT_LEN : NULL;
	return 1;
}

int rocev2_mig_check_nak_stopped(struct rocev2 *e, struct rocev2_qp *qp,
				 const struct rocev2_pkt *pkt)
{
	const struct rocev2_mig *m = &qp->mig;
	struct mig_msg msg = { MIG_KIND_NAK_STOPPED, 0, qp->attr.dest_qp_num, qp->qpn, pkt->psn,
			       0, NULL };
	const uint8_t *mac;
	uint8_t kind, key[16];

	if (!mig_ext_parse(pkt, &kind, &msg.epoch, &mac) || kind != MIG_KIND_NAK_STOPPED ||
	    msg.epoch - m->rx_epoch > MIG_EPOCH_WINDOW) {
		e->cnt.mig_nak_stopped_forged++;
		return -HAL_EACCES;
	}
	if (!m->has_key) {
		if (mac) {                      /* keyed peer, unkeyed QP: misconfigured */
			e->cnt.mig_nak_stopped_forged++;
			return -HAL_EACCES;
		}
		return mig_unkeyed_ok(e) ? 0 : -HAL_EACCES;
	}
	if (!mac) {
		e->cnt.mig_nak_stopped_forged++;
		return -HAL_EACCES;
	}
	mig_key_at(m->rx_key, m->rx_epoch, msg.epoch, key);
	if (mig_mac_check(key, &msg, mac) < 0) {
		e->cnt.mig_nak_stopped_forged++;
		return -HAL_EACCES;
	}
	return 0;
}

int rocev2_mig_is_resume_ack(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	const struct rocev2_mig *m = &qp->mig;
	struct mig_msg msg = { MIG_KIND_RESUME_ACK, 0, qp->attr.dest_qp_num, qp->qpn, pkt->psn,
			       0, NULL };
	const uint8_t *mac;
	uint8_t kind;

	(void)e;
	if (m->resume_psn == MIG_NO_PSN || pkt->psn != m->resume_psn ||
	    !mig_ext_parse(pkt, &kind, &msg.epoch, &mac) || kind != MIG_KIND_RESUME_ACK ||
	    msg.epoch != m->tx_epoch)
		return 0;
	if (!m->has_key)
		return mac == NULL;
	return mac && mig_mac_check(m->tx_key, &msg, mac) == 0;
}

uint32_t rocev2_mig_ack_ext_len(const struct rocev2_qp *qp, uint8_t syndrome)
{
	if (syndrome != AETH_NAK_STOPPED)
		return 0;
	return MIG_EXT_LEN + (qp->mig.has_key ? MIG_MAC_LEN : 0u);
}

/* kind's extension at buf: NAK_STOPPED from our tx epoch and key (we are
 * the stopped side), the RESUME's ACK from the rx ones just adopted. */
static void mig_put_ext(const struct rocev2_qp *qp, uint8_t kind, uint32_t psn, uint8_t *buf)
{
	const struct rocev2_mig *m = &qp->mig;
	uint32_t epoch = kind == MIG_KIND_NAK_STOPPED ? m->tx_epoch : m->rx_epoch;
	struct mig_msg msg = { kind, epoch, qp->qpn, qp->attr.dest_qp_num, psn, 0, NULL };

	memset(buf, 0, MIG_EXT_LEN);
	buf[0] = MIG_VERSION;
	buf[1] = m->has_key ? MIG_F_MAC : 0u;
	buf[MIG_EXT_OFF_KIND] = kind;
	put_be32(buf + MIG_EXT_OFF_EPOCH, epoch);
	if (m->has_key)
		mig_mac(kind == MIG_KIND_NAK_STOPPED ? m->tx_key : m->rx_key, &msg,
			buf + MIG_EXT_LEN);
}

void rocev2_mig_put_ack_ext(const struct rocev2_qp *qp, uint8_t syndrome, uint32_t psn,
			    uint8_t *buf)
{
	if (syndrome == AETH_NAK_STOPPED)
		mig_put_ext(qp, MIG_KIND_NAK_STOPPED, psn, buf);
}

/* The RESUME's ACK: its PSN, the extension echoing its epoch.  Not
 * deferred behind replies (resp.c): lost or not sent, the RESUME comes
 * again and is ACKed again. */
static void mig_send_resume_ack(struct rocev2 *e, struct rocev2_qp *qp, uint32_t psn)
{
	struct rocev2_tx t;
	uint32_t len = MIG_EXT_LEN + (qp->mig.has_key ? MIG_MAC_LEN : 0u);

	rocev2_tx_prepare(e, qp, &t, OP_ACKNOWLEDGE, psn, 0, 0, len);
	aeth_init((struct aeth *)(t.bth + rocev2_opcode(OP_ACKNOWLEDGE)->aeth), AETH_ACK_UNLIMITED,
		  qp->resp.msn);
	mig_put_ext(qp, MIG_KIND_RESUME_ACK, psn, t.payload);
	if (rocev2_tx_send(e, &t) == 0)
		e->cnt.resp_acks_sent++;
	else
		e->cnt.resp_tx_dropped++;
}

/* What a RESUME asks for, once its payload is checked. */
enum mig_resume_verdict { MIG_RESUME_NEW, MIG_RESUME_REPEAT, MIG_RESUME_DROP };

/* Epoch and MAC of a well-formed RESUME (header comment, "Who follows a
 * RESUME").  NEW leaves the next rx key in next_key. */
static enum mig_resume_verdict mig_resume_verdict(struct rocev2 *e, const struct rocev2_qp *qp,
						  const struct mig_msg *msg, const uint8_t *mac,
						  uint8_t next_key[16])
{
	const struct rocev2_mig *m = &qp->mig;
	uint32_t ahead = msg->epoch - m->rx_epoch;

	if (ahead > MIG_EPOCH_WINDOW) {
		if ((int32_t)ahead < 0)
			e->cnt.mig_resume_replayed++;   /* past epoch: its key is gone */
		else
			e->cnt.mig_resume_forged++;
		return MIG_RESUME_DROP;
	}
	if (!m->has_key) {
		if (mac) {
			e->cnt.mig_resume_forged++;
			return MIG_RESUME_DROP;
		}
		if (!mig_unkeyed_ok(e))
			return MIG_RESUME_DROP;
		return ahead ? MIG_RESUME_NEW : MIG_RESUME_REPEAT;
	}
	if (!mac) {
		e->cnt.mig_resume_forged++;
		return MIG_RESUME_DROP;
	}
	mig_key_at(m->rx_key, m->rx_epoch, msg->epoch, next_key);
	if (mig_mac_check(next_key, msg, mac) < 0) {
		e->cnt.mig_resume_forged++;
		return MIG_RESUME_DROP;
	}
	return ahead ? MIG_RESUME_NEW : MIG_RESUME_REPEAT;
}

int rocev2_mig_rx_resume(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	struct rocev2_mig *m = &qp->mig;
	const uint8_t *p = pkt->payload, *mac;
	struct mig_msg msg = { MIG_KIND_RESUME, 0, qp->attr.dest_qp_num, qp->qpn, pkt->psn, NULL, NULL };
	uint8_t next_key[16];
	int moves;

	/* Well formed: version 2, flags agreeing with the length, reserved
	 * bytes zero, a unicast Ethernet address and a GID packets may come
	 * from. */
	if (!p || (pkt->paylen != MIG_RESUME_LEN && pkt->paylen != MIG_RESUME_LEN + MIG_MAC_LEN) ||
	    p[0] != MIG_VERSION || (p[1] & ~MIG_F_MAC) || p[2] || p[3] || p[30] || p[31] ||
	    !(p[1] & MIG_F_MAC) != (pkt->paylen == MIG_RESUME_LEN) ||
	    (p[MIG_RESUME_OFF_MAC_ADDR] & 1u) || !rocev2_gid_unicast(p + MIG_RESUME_OFF_GID)) {
		e->cnt.mig_resume_forged++;
		return -HAL_EACCES;
	}
	/* A stopped QP's state is in its image already: it must not move
	 * behind it.  The peer resends until we are resumed (its budget). */
	if (qp->stopped) {
		e->cnt.mig_resume_refused++;
		return -HAL_EACCES;
	}
	msg.epoch = get_be32(p + MIG_RESUME_OFF_EPOCH);
	msg.gid = p + MIG_RESUME_OFF_GID;
	msg.mac_addr = p + MIG_RESUME_OFF_MAC_ADDR;
	mac = (p[1] & MIG_F_MAC) ? p + MIG_RESUME_LEN : NULL;

	switch (mig_resume_verdict(e, qp, &msg, mac, next_key)) {
	case MIG_RESUME_DROP:
		return -HAL_EACCES;
	case MIG_RESUME_REPEAT:
		/* Our ACK was lost and the RESUME came again, or it is a
		 * replay: answered only if it changes nothing. */
		if (qp->paused || memcmp(msg.gid, qp->attr.av.dgid, ROCEV2_GID_LEN) != 0 ||
		    memcmp(msg.mac_addr, qp->attr.av.dmac, 6) != 0) {
			e->cnt.mig_resume_replayed++;
			return -HAL_EACCES;
		}
		e->cnt.mig_resume_repeats++;
		mig_send_resume_ack(e, qp, pkt->psn);
		return 0;
	case MIG_RESUME_NEW:
		break;
	}
	moves = memcmp(msg.gid, qp->attr.av.dgid, ROCEV2_GID_LEN) != 0 ||
		memcmp(msg.mac_addr, qp->attr.av.dmac, 6) != 0;
	/* Its PSN: one we received already (the sender's newest ACKed). */
	if (psn_cmp(pkt->psn, qp->resp.psn) >= 0 || (!m->has_key && moves && !qp->paused)) {
		e->cnt.mig_resume_refused++;
		return -HAL_EACCES;
	}
	m->rx_epoch = msg.epoch;
	if (m->has_key)
		memcpy(m->rx_key, next_key, sizeof(m->rx_key));
	memcpy(qp->attr.av.dmac, msg.mac_addr, 6);
	memcpy(qp->attr.av.dgid, msg.gid, ROCEV2_GID_LEN);
	rocev2_tx_tmpl_stale(qp);
	/* A migration completed: the pause (if any) ends here, and so does its
	 * bound.  MigrOS leaves what the stopped peer NAK'd to the retransmit
	 * timer; we rewind at once, which takes a timeout off the downtime. */
	timer_cancel(&e->timers, &m->pause_timer);
	if (qp->paused) {
		qp->paused = 0;
		mig_rewind(e, qp);
	}
	mig_send_resume_ack(e, qp, pkt->psn);
	return 1;
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
	/* A restore recreates MTTs unwritten: the target's pages must be
	 * in them (REFILL, rocev2_write_mtt) before anything runs on them. */
	if (!rocev2_owner_mtts_written(e, owner)) {
		e->cnt.mtt_resume_unwritten++;
		return -HAL_EAGAIN;
	}
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

/* key NULL removes the key: RESUMEs and NAK_STOPPEDs go out without a MAC
 * and are accepted without one only under ROCEV2_MIG_F_UNKEYED.  Either
 * way both directions restart at epoch 0 (both ends are (re)keyed alike,
 * header comment).  A move to RESET forgets it (rocev2_mig_reset). */
int rocev2_set_mig_key(struct rocev2 *e, uint32_t qpn, const uint8_t key[16])
{
	struct rocev2_qp *qp = rocev2_qp_lookup(e, qpn);
	struct rocev2_mig *m;

	if (!qp)
		return -HAL_EINVAL;
	m = &qp->mig;
	m->tx_epoch = 0;
	m->rx_epoch = 0;
	if (!key) {
		memset(m->tx_key, 0, sizeof(m->tx_key));
		memset(m->rx_key, 0, sizeof(m->rx_key));
		m->has_key = 0;
		return 0;
	}
	memcpy(m->tx_key, key, sizeof(m->tx_key));
	memcpy(m->rx_key, key, sizeof(m->rx_key));
	m->has_key = 1;
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

/* Applies to exchanges started from here on. */
void rocev2_set_resume_budget(struct rocev2 *e, uint64_t ns)
{
	e->resume_budget_ns = ns;
}

void rocev2_set_mig_flags(struct rocev2 *e, uint32_t flags)
{
	e->mig_flags = flags & ROCEV2_MIG_F_UNKEYED;
}
