/* Engine setup, the requester scheduler, doorbells, the event ring and the
 * objects' owners (contexts). */
#include <string.h>

#include "internal.h"
#include "pool.h"

const char *const rocev2_counter_names[] = {
#define ROCEV2_COUNTER_NAME(name) #name,
	ROCEV2_COUNTERS(ROCEV2_COUNTER_NAME)
#undef ROCEV2_COUNTER_NAME
};

int rocev2_init(struct rocev2 *e, const struct rocev2_env *env)
{
	if (!env || !env->tx || !env->now_ns || !env->dma)
		return -HAL_EINVAL;
	memset(e, 0, sizeof(*e));
	e->env = *env;
	e->boot_ipv4 = env->ipv4;
	timer_heap_init(&e->timers, e->timer_slots, ROCEV2_MAX_TIMERS);
	e->pause_timeout_ns = ROCEV2_PAUSE_TIMEOUT_DEFAULT_NS;
	rocev2_dcqcn_defaults(&e->dcqcn);
	(void)rocev2_set_dcqcn(e, &e->dcqcn, NULL);    /* the defaults are in range */
	return 0;
}

void rocev2_set_ack_coalesce(struct rocev2 *e, int on)
{
	e->ack_coalesce = on != 0;
}

/* The instances rocev2_open hands out (rocev2.h says why the engine owns
 * them); taken in order, never given back: one per port for the run. */
static struct rocev2 engines[ROCEV2_MAX_ENGINES];
static unsigned engines_open;

int rocev2_open(const struct rocev2_env *env, struct rocev2 **e)
{
	int rc;

	if (engines_open >= ROCEV2_MAX_ENGINES)
		return -HAL_ENOMEM;
	if ((rc = rocev2_init(&engines[engines_open], env)) != 0)
		return rc;
	*e = &engines[engines_open++];
	return 0;
}

/* The scheduler is a FIFO of QPs with requester or read-reply work: a QP
 * appears at most once (qp->scheduled), so a busy QP cannot starve others:
 * each pass gives it one budget slice and puts it back at the tail. */
void rocev2_sched(struct rocev2 *e, struct rocev2_qp *qp)
{
	if (qp->scheduled)
		return;
	qp->scheduled = 1;
	qp->sched_next = NULL;
	if (e->sched_tail)
		e->sched_tail->sched_next = qp;
	else
		e->sched_head = qp;
	e->sched_tail = qp;
}

static struct rocev2_qp *sched_pop(struct rocev2 *e)
{
	struct rocev2_qp *qp = e->sched_head;

	if (!qp)
		return NULL;
	e->sched_head = qp->sched_next;
	if (!e->sched_head)
		e->sched_tail = NULL;
	qp->sched_next = NULL;
	qp->scheduled = 0;
	return qp;
}

int rocev2_has_work(const struct rocev2 *e)
{
	return e->sched_head != NULL || rocev2_ethq_pending(e);
}

uint64_t rocev2_next_deadline(const struct rocev2 *e)
{
	return timer_heap_next(&e->timers);
}

unsigned rocev2_run_timers(struct rocev2 *e, uint64_t now)
{
	return timer_heap_run(&e->timers, now);
}

#define ROCEV2_QP_SLICE 16u

int rocev2_poll(struct rocev2 *e, unsigned budget)
{
	/* Serve at most the QPs queued when we started: a QP re-queued during
	 * this pass waits for the next one (bounded work per loop iteration). */
	struct rocev2_qp *last = e->sched_tail;

	/* The host's Ethernet frames first, then the completions' one raise
	 * (for these and for the frames received since the last pass). */
	budget -= rocev2_ethq_tx(e, budget);
	rocev2_ethq_raise(e);
	while (budget > 0 && e->sched_head) {
		struct rocev2_qp *qp = sched_pop(e);
		unsigned slice = budget < ROCEV2_QP_SLICE ? budget : ROCEV2_QP_SLICE, sent;
		int was_last = qp == last;

		if (qp->in_use) {
			sent = rocev2_resp_run(e, qp, slice);
			if (sent < slice)
				sent += rocev2_req_run(e, qp, slice - sent);
			else
				/* Read replies used the whole slice: the requester
				 * has had no turn, so the QP goes back in line. */
				rocev2_sched(e, qp);
			budget -= sent < budget ? sent : budget;
			if (e->cnt.tx_busy && sent == 0 && qp->scheduled)
				break;   /* TX ring full: try again next iteration */
		}
		if (was_last)
			break;
	}
	return rocev2_has_work(e);
}

static int qp_doorbell_state_ok(const struct rocev2_qp *qp)
{
	return qp->state != ROCEV2_QPS_RESET;
}

int rocev2_sq_doorbell(struct rocev2 *e, uint32_t qpn)
{
	struct rocev2_qp *qp = rocev2_qp_lookup(e, qpn);

	if (!qp)
		return -HAL_EINVAL;
	if (!qp_doorbell_state_ok(qp))
		return -HAL_EINVAL;
	if (qp->state == ROCEV2_QPS_ERR) {
		/* IBA 10.8.3.1: WRs posted to a QP in error complete flushed. */
		rocev2_req_flush(e, qp);
		return 0;
	}
	rocev2_sched(e, qp);
	return 0;
}

int rocev2_rq_doorbell(struct rocev2 *e, uint32_t qpn)
{
	struct rocev2_qp *qp = rocev2_qp_lookup(e, qpn);

	if (!qp || !qp_doorbell_state_ok(qp) || qp->srq != ROCEV2_NO_SRQ)
		return -HAL_EINVAL;
	if (qp->state == ROCEV2_QPS_ERR)
		rocev2_resp_flush(e, qp);
	/* Otherwise the responder reads the producer index when it needs a
	 * WQE (an RNR'd sender retries on its own timer). */
	return 0;
}

unsigned rocev2_doorbells_changed(struct rocev2 *e)
{
	unsigned i, refreshed = 0;

	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		const struct rocev2_qp *qp = &e->qps[i];

		/* A QP in RESET has no queues to look at (the doorbells refuse). */
		if (!qp->in_use || qp->state == ROCEV2_QPS_RESET)
			continue;
		if (qp->sq.q.size) {
			(void)rocev2_sq_doorbell(e, qp->qpn);
			refreshed++;
		}
		if (qp->rq.q.size && qp->srq == ROCEV2_NO_SRQ) {
			(void)rocev2_rq_doorbell(e, qp->qpn);
			refreshed++;
		}
	}
	if (e->ethq.live) {
		(void)rocev2_ethq_tx_doorbell(e);
		refreshed++;
	}
	for (i = 0; i < ROCEV2_MAX_SRQ; i++) {
		const struct rocev2_srq *srq = &e->srqs[i];

		if (!srq->in_use)
			continue;
		(void)rocev2_srq_doorbell(e, rocev2_handle(srq->gen, i));
		refreshed++;
	}
	/* CQ arms (eq.c): a host that armed after its last poll rang */
	refreshed += rocev2_cq_arms_changed(e);
	return refreshed;
}

void rocev2_post_event(struct rocev2 *e, uint16_t owner, uint32_t type, uint32_t handle)
{
	uint32_t next = (e->ev_head + 1) % ROCEV2_EVENT_RING;

	if (next == e->ev_tail) {
		e->cnt.events_lost++;
		return;
	}
	e->events[e->ev_head] = (struct rocev2_owned_event){ { type, handle }, owner };
	e->ev_head = next;
}

/* The owner's oldest event; the older events of other owners move up one
 * slot to close the gap, so each owner still reads its own in order. */
int rocev2_get_event(struct rocev2 *e, uint32_t owner, struct rocev2_event *ev)
{
	uint32_t i, prev;

	for (i = e->ev_tail; i != e->ev_head; i = (i + 1) % ROCEV2_EVENT_RING)
		if (e->events[i].owner == owner)
			break;
	if (i == e->ev_head)
		return -HAL_EAGAIN;
	*ev = e->events[i].ev;
	for (; i != e->ev_tail; i = prev) {
		prev = (i + ROCEV2_EVENT_RING - 1) % ROCEV2_EVENT_RING;
		e->events[i] = e->events[prev];
	}
	e->ev_tail = (e->ev_tail + 1) % ROCEV2_EVENT_RING;
	return 0;
}
