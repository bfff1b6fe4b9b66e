/* Congestion control: DCQCN (Zhu et al., "Congestion Control for
 * Large-Scale RDMA Deployments", SIGCOMM 2015), the RoCEv2 scheme of IBA
 * Annex A17.9.
 *
 *   sender (reaction point)        switch                receiver (notification point)
 *   req.c --data, ECT(0)--------> queue >= K: CE ------> recv.c: CE -> rocev2_cc_ce
 *     ^ pacer at Rc                                                   |  <= 1 per QP per
 *     |                                                               v  cnp_interval_us
 *   rocev2_cc_cnp_rx <----------- CNP (opcode 0x81, BECN, DestQP = sender's QP)
 *     cut:  Rt = Rc, Rc = Rc (1 - alpha/2), alpha = (1 - g) alpha + g
 *     alpha timer K without a CNP: alpha = (1 - g) alpha
 *     rate timer T, byte counter B: an increase event each; with
 *       i = events since the cut of that kind, F stages:
 *       max(iT, iB) <= F          fast recovery    Rc = (Rt + Rc) / 2
 *       min(iT, iB) >  F          hyper increase   Rt += Rhai; Rc = (Rt + Rc) / 2
 *       otherwise                 additive         Rt += Rai;  Rc = (Rt + Rc) / 2
 *
 * A QP is idle (qp->cc.active 0) until its first CNP and again once it has
 * recovered to line rate: then the requester pays one branch per packet
 * and no timer runs.  While active, the requester asks the pacer (a token
 * bucket filled at Rc, ROCEV2_CC_BUCKET bytes deep) before each packet; out
 * of tokens, the QP waits on its pacer timer, which schedules it again.
 * One timer serves both the alpha decay and the rate timer: it is armed
 * at the earlier of the two due times.
 *
 * Fixed point only (the boards have no FPU in use): rates in kbit/s
 * (uint32_t: up to 4.29 Tbit/s), alpha and g in 1/65536.  A CNP goes out
 * Not-ECT: a switch must not mark it, and marking it would mean nothing
 * (no CNP answers a CNP).
 */
#include <string.h>

#include "internal.h"

#define ALPHA_ONE          65536u        /* alpha = 1.0 */
#define KBPS_PER_MBPS      1000u
/* Pacer bucket depth: a burst of up to 16 KiB after an idle period (at
 * least two 4 KiB-MTU frames), so a late wakeup of the loop loses little. */
#define ROCEV2_CC_BUCKET   16384
#define NS_PER_US          1000ull

/* ---- parameters --------------------------------------------------------- */

void rocev2_dcqcn_defaults(struct rocev2_dcqcn_params *p)
{
	*p = (struct rocev2_dcqcn_params){
		.flags = ROCEV2_DCQCN_F_ENABLE | ROCEV2_DCQCN_F_ECT,
		.g = 256,                       /* 1/256 */
		.alpha_us = 55,
		.rate_timer_us = 55,
		.byte_counter = 10u << 20,      /* 10 MB */
		.fast_recovery = 5,
		.rai_mbps = 40,
		.rhai_mbps = 200,
		.min_rate_mbps = 10,
		.line_rate_mbps = 10000,
		.cnp_interval_us = 50,
	};
}

/* Bounds of every field, in struct order (bad_field indexes this).  A
 * bound of 0 in max means "the line rate" (rates may not exceed it). */
#define LINE 0u
static const struct {
	size_t off;
	uint32_t min, max;
} dcqcn_bounds[] = {
	{ offsetof(struct rocev2_dcqcn_params, flags), 0,
	  ROCEV2_DCQCN_F_ENABLE | ROCEV2_DCQCN_F_ECT },
	{ offsetof(struct rocev2_dcqcn_params, g), 1, ALPHA_ONE },
	{ offsetof(struct rocev2_dcqcn_params, alpha_us), 1, 1000000 },
	{ offsetof(struct rocev2_dcqcn_params, rate_timer_us), 1, 1000000 },
	{ offsetof(struct rocev2_dcqcn_params, byte_counter), 1024, 1u << 30 },
	{ offsetof(struct rocev2_dcqcn_params, fast_recovery), 1, 32 },
	{ offsetof(struct rocev2_dcqcn_params, rai_mbps), 1, LINE },
	{ offsetof(struct rocev2_dcqcn_params, rhai_mbps), 1, LINE },
	{ offsetof(struct rocev2_dcqcn_params, min_rate_mbps), 1, LINE },
	{ offsetof(struct rocev2_dcqcn_params, line_rate_mbps), 1, 400000 },   /* 400 Gbit/s */
	{ offsetof(struct rocev2_dcqcn_params, cnp_interval_us), 1, 1000000 },
};
_Static_assert(sizeof(dcqcn_bounds) / sizeof(dcqcn_bounds[0]) ==
		       sizeof(struct rocev2_dcqcn_params) / sizeof(uint32_t),
	       "a bound for every parameter");

static void cc_apply_tos(struct rocev2 *e)
{
	int ect = (e->dcqcn.flags & ROCEV2_DCQCN_F_ECT) != 0;

	e->tos_keep = ect ? (uint8_t)~IPV4_ECN_MASK : 0xffu;
	e->tos_ecn = ect ? IPV4_ECN_ECT0 : 0u;
	rocev2_tx_tmpl_stale_all(e);    /* the TOS byte of every template */
}

int rocev2_set_dcqcn(struct rocev2 *e, const struct rocev2_dcqcn_params *p, unsigned *bad_field)
{
	unsigned i;

	for (i = 0; i < sizeof(dcqcn_bounds) / sizeof(dcqcn_bounds[0]); i++) {
		uint32_t v, max = dcqcn_bounds[i].max;

		memcpy(&v, (const uint8_t *)p + dcqcn_bounds[i].off, sizeof(v));
		if (max == LINE)
			max = p->line_rate_mbps;
		if (v < dcqcn_bounds[i].min || v > max ||
		    (i == 0 && (v & ~dcqcn_bounds[0].max))) {
			if (bad_field)
				*bad_field = i;
			return -HAL_EINVAL;
		}
	}
	e->dcqcn = *p;
	cc_apply_tos(e);
	for (i = 0; i < ROCEV2_MAX_QP; i++)
		if (e->qps[i].in_use)
			rocev2_cc_reset(e, &e->qps[i], 0);
	return 0;
}

void rocev2_get_dcqcn(const struct rocev2 *e, struct rocev2_dcqcn_params *p)
{
	*p = e->dcqcn;
}

static uint32_t line_kbps(const struct rocev2 *e)
{
	return e->dcqcn.line_rate_mbps * KBPS_PER_MBPS;
}

int rocev2_qp_dcqcn_state(const struct rocev2 *e, uint32_t qpn, struct rocev2_dcqcn_state *s)
{
	const struct rocev2_qp *qp = rocev2_qp_lookup((struct rocev2 *)e, qpn);

	if (!qp)
		return -HAL_EINVAL;
	s->active = qp->cc.active;
	s->rate_kbps = qp->cc.active ? qp->cc.rc : line_kbps(e);
	s->target_kbps = qp->cc.active ? qp->cc.rt : line_kbps(e);
	s->alpha = qp->cc.alpha;
	return 0;
}

/* ---- per-QP state ----------------------------------------------------------- */

void rocev2_cc_stop(struct rocev2 *e, struct rocev2_qp *qp)
{
	timer_cancel(&e->timers, &qp->cc.timer);
	timer_cancel(&e->timers, &qp->cc.pacer);
}

static void cc_timeout(struct timer *t, void *arg);
static void cc_pacer_timeout(struct timer *t, void *arg);

void rocev2_cc_reset(struct rocev2 *e, struct rocev2_qp *qp, int setup)
{
	if (!setup)
		rocev2_cc_stop(e, qp);
	memset(&qp->cc, 0, sizeof(qp->cc));
	timer_setup(&qp->cc.timer, cc_timeout, e);
	timer_setup(&qp->cc.pacer, cc_pacer_timeout, e);
}

#define QP_OF(t, member) \
	((struct rocev2_qp *)(void *)((uint8_t *)(t) - offsetof(struct rocev2_qp, member)))

static void cc_arm(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_cc *cc = &qp->cc;

	timer_arm(&e->timers, &cc->timer, cc->alpha_due < cc->rate_due ? cc->alpha_due : cc->rate_due);
}

/* Back at line rate: nothing to pace, no timer (the idle path again). */
static void cc_idle(struct rocev2 *e, struct rocev2_qp *qp)
{
	rocev2_cc_stop(e, qp);
	qp->cc.active = 0;
	if (qp->req.state == REQ_STATE_WAIT || qp->req.state == REQ_STATE_SENDING)
		rocev2_sched(e, qp);    /* it may have been waiting for tokens */
}

/* One rate increase event (the table in the header comment). */
static void cc_increase(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_cc *cc = &qp->cc;
	const struct rocev2_dcqcn_params *p = &e->dcqcn;
	uint32_t line = line_kbps(e);
	uint32_t hi = cc->t_events > cc->b_events ? cc->t_events : cc->b_events;
	uint32_t lo = cc->t_events < cc->b_events ? cc->t_events : cc->b_events;
	uint64_t rt = cc->rt;

	if (lo > p->fast_recovery)
		rt += (uint64_t)p->rhai_mbps * KBPS_PER_MBPS;
	else if (hi > p->fast_recovery)
		rt += (uint64_t)p->rai_mbps * KBPS_PER_MBPS;
	cc->rt = rt < line ? (uint32_t)rt : line;
	/* (Rt + Rc) / 2 rounded up, so that Rc reaches Rt. */
	cc->rc = (uint32_t)(((uint64_t)cc->rt + cc->rc + 1u) / 2u);
	e->cnt.rate_increases++;
	if (cc->rc >= line)
		cc_idle(e, qp);
}

static void cc_timeout(struct timer *t, void *arg)
{
	struct rocev2 *e = arg;
	struct rocev2_qp *qp = QP_OF(t, cc.timer);
	struct rocev2_cc *cc = &qp->cc;
	uint64_t now = rocev2_now(e);

	if (!qp->in_use || !cc->active)
		return;
	if (now >= cc->alpha_due) {
		/* No CNP for K: alpha = (1 - g) alpha. */
		cc->alpha -= (uint32_t)(((uint64_t)cc->alpha * e->dcqcn.g) >> 16);
		cc->alpha_due = now + e->dcqcn.alpha_us * NS_PER_US;
	}
	if (now >= cc->rate_due) {
		cc->rate_due = now + e->dcqcn.rate_timer_us * NS_PER_US;
		if (cc->t_events < UINT8_MAX)
			cc->t_events++;
		cc_increase(e, qp);
		if (!cc->active)
			return;
	}
	cc_arm(e, qp);
}

static void cc_pacer_timeout(struct timer *t, void *arg)
{
	struct rocev2 *e = arg;
	struct rocev2_qp *qp = QP_OF(t, cc.pacer);

	if (qp->in_use)
		rocev2_sched(e, qp);
}

/* ---- notification point ------------------------------------------------------ */

void rocev2_cc_ce(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_cc *cc = &qp->cc;
	uint64_t now;
	struct rocev2_tx t;

	e->cnt.ecn_ce_received++;
	if (!(e->dcqcn.flags & ROCEV2_DCQCN_F_ENABLE))
		return;
	now = rocev2_now(e);
	if (cc->cnp_sent && now - cc->last_cnp_ns < e->dcqcn.cnp_interval_us * NS_PER_US) {
		e->cnt.cnp_suppressed++;
		return;
	}
	/* IBA A17.9.2: BTH with OpCode CNP, DestQP = the QP that sent the
	 * marked packet (our peer QP), BECN 1, PSN and AckReq 0; 16 reserved
	 * bytes (tx_prepare zeroes them); ICRC. */
	rocev2_tx_prepare(e, qp, &t, OP_CNP, 0, 0, 0, 0);
	t.bth[4] |= BTH_BECN;
	rocev2_tx_set_tos(&t, (uint8_t)(rocev2_tx_tos(&t) & ~IPV4_ECN_MASK));   /* Not-ECT */
	if (rocev2_tx_send(e, &t) < 0)
		return;         /* counted by tx_send; the next CE tries again */
	cc->cnp_sent = 1;
	cc->last_cnp_ns = now;
	e->cnt.cnp_sent++;
}

/* ---- reaction point ------------------------------------------------------------ */

void rocev2_cc_cnp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	struct rocev2_cc *cc = &qp->cc;
	const struct rocev2_dcqcn_params *p = &e->dcqcn;
	uint64_t now;
	uint32_t floor = p->min_rate_mbps * KBPS_PER_MBPS;

	(void)pkt;                      /* recv.c refused a CNP without BECN */
	if (!(p->flags & ROCEV2_DCQCN_F_ENABLE))
		return;
	now = rocev2_now(e);
	if (!cc->active) {
		cc->active = 1;
		cc->rc = cc->rt = line_kbps(e);
		cc->alpha = ALPHA_ONE;          /* DCQCN starts at alpha 1: the first cut halves */
		cc->tokens = ROCEV2_CC_BUCKET;
		cc->tokens_ns = now;
		cc->bytes = 0;
	}
	/* Rt = Rc; Rc = Rc (1 - alpha/2); alpha = (1 - g) alpha + g. */
	cc->rt = cc->rc;
	cc->rc -= (uint32_t)(((uint64_t)cc->rc * cc->alpha) >> 17);
	if (cc->rc < floor)
		cc->rc = floor;
	cc->alpha = cc->alpha - (uint32_t)(((uint64_t)cc->alpha * p->g) >> 16) + p->g;
	if (cc->alpha > ALPHA_ONE)
		cc->alpha = ALPHA_ONE;
	cc->t_events = cc->b_events = 0;
	cc->bytes = 0;
	cc->alpha_due = now + p->alpha_us * NS_PER_US;
	cc->rate_due = now + p->rate_timer_us * NS_PER_US;
	cc_arm(e, qp);
	e->cnt.rate_cuts++;
}

/* Refill: Rc kbit/s for dt ns is Rc * dt / 8e6 bytes. */
static void cc_refill(struct rocev2_cc *cc, uint64_t now)
{
	uint64_t dt = now - cc->tokens_ns, add;

	if (dt > 1000000000ull)
		dt = 1000000000ull;             /* a second fills any bucket */
	add = (uint64_t)cc->rc * dt / 8000000u;
	if (add == 0)
		return;                         /* keep tokens_ns: the fraction accrues */
	cc->tokens_ns += add * 8000000u / cc->rc;
	if (now - cc->tokens_ns > 1000000000ull)
		cc->tokens_ns = now;
	cc->tokens = (int64_t)cc->tokens + (int64_t)add > ROCEV2_CC_BUCKET
			     ? ROCEV2_CC_BUCKET
			     : (int32_t)(cc->tokens + (int64_t)add);
}

int rocev2_cc_may_send(struct rocev2 *e, struct rocev2_qp *qp)
{
	struct rocev2_cc *cc = &qp->cc;
	uint64_t now = rocev2_now(e), wait;

	cc_refill(cc, now);
	if (cc->tokens >= 0)
		return 1;
	/* In debt: wait until the bucket is back at zero (rounded up). */
	wait = ((uint64_t)(-(int64_t)cc->tokens) * 8000000u + cc->rc - 1u) / cc->rc;
	if (!timer_armed(&cc->pacer))
		e->cnt.pacer_waits++;
	timer_arm(&e->timers, &cc->pacer, now + (wait ? wait : 1u));
	return 0;
}

void rocev2_cc_sent(struct rocev2 *e, struct rocev2_qp *qp, uint32_t bytes)
{
	struct rocev2_cc *cc = &qp->cc;

	cc->tokens -= (int32_t)bytes;
	cc->bytes += bytes;
	if (cc->bytes >= e->dcqcn.byte_counter) {
		cc->bytes -= e->dcqcn.byte_counter;
		if (cc->b_events < UINT8_MAX)
			cc->b_events++;
		cc_increase(e, qp);
	}
}
