/* Completion events: CQ arm (IBA 11.4.2.2 Request Completion
 * Notification) and event queues in host memory (mnic/queues.h
 * "Completion events", docs/host-interface.md).
 *
 * A CQ's arm is a small state machine driven by the arm word of its
 * doorbell record, read whenever the firmware writes a CQE (cq.c reads the
 * record anyway) and when the data-path doorbell moves:
 *
 *   DISARMED --arm word (sn ok, NEXT|SOLICITED)--> ARMED(cmd, sn)
 *   ARMED(SOLICITED, sn) --NEXT with the same sn--> ARMED(NEXT, sn)
 *   ARMED --qualifying CQE, or one already past the consumer index-->
 *            EQE written, vector raised, DISARMED (sn spent: fired)
 *
 * Which sn an arm may carry (arm_sn_ok): before a fire the one in force
 * (a repeat or an upgrade), after one only the next (the host counts the
 * events it took).  Everything else is stale and ignored, so neither a
 * repeated write nor a late one fires twice.
 *
 * An EQ is written as a CQ is: body, write barrier, owner byte; the
 * firmware never overwrites an EQE the host has not consumed (the EQ's
 * doorbell record holds the host's consumer index).
 */
#include <stddef.h>
#include <string.h>

#include "hal/mmio.h"
#include "pool.h"

/* ---- objects ---------------------------------------------------------------- */

static struct rocev2_eq *eq_get(struct rocev2 *e, uint32_t handle)
{
	uint32_t idx = rocev2_handle_index(handle);
	struct rocev2_eq *eq;

	if (idx >= ROCEV2_MAX_EQ)
		return NULL;
	eq = &e->eqs[idx];
	if (!eq->in_use || eq->gen != rocev2_handle_gen(handle))
		return NULL;
	return eq;
}

int rocev2_eq_owner(struct rocev2 *e, uint32_t handle, uint32_t *owner)
{
	const struct rocev2_eq *eq = eq_get(e, handle);

	if (!eq)
		return -HAL_EINVAL;
	*owner = eq->owner;
	return 0;
}

int rocev2_create_eq(struct rocev2 *e, const struct rocev2_queue_attr *q, uint32_t vector,
		     uint32_t *handle)
{
	struct rocev2_eq *eq;
	uint32_t idx;
	int err;

	if (!q || !handle || vector < MNIC_EQ_VECTOR_MIN || vector > MNIC_EQ_VECTOR_MAX)
		return -HAL_EINVAL;
	err = rocev2_queue_attr_check(e, q, MNIC_EQE_SIZE, 1);
	if (err)
		return err;
	ROCEV2_POOL_FIND_FREE(e->eqs, ROCEV2_MAX_EQ, idx);
	if (idx >= ROCEV2_MAX_EQ)
		return -HAL_ENOMEM;
	eq = &e->eqs[idx];
	eq->gen = rocev2_pool_next_gen(eq->gen, ROCEV2_HANDLE_GEN_MAX);
	eq->q = *q;
	eq->pi = 0;                 /* the host hands over a zeroed ring */
	eq->vector = (uint16_t)vector;
	eq->refcnt = 0;
	eq->owner = e->creator;
	eq->in_use = 1;
	rocev2_queue_mtt_ref(e, q, 1);
	e->n_eq++;
	*handle = rocev2_handle(eq->gen, idx);
	return 0;
}

int rocev2_destroy_eq(struct rocev2 *e, uint32_t handle)
{
	struct rocev2_eq *eq = eq_get(e, handle);

	if (!eq)
		return -HAL_EINVAL;
	if (eq->refcnt)
		return -HAL_EBUSY;      /* CQs still bound: their events need it */
	rocev2_queue_mtt_ref(e, &eq->q, -1);
	eq->in_use = 0;
	e->n_eq--;
	return 0;
}

void rocev2_cq_events_reset(struct rocev2_cq *cq)
{
	cq->eq = ROCEV2_NO_EQ;
	cq->arm_seen = 0;
	cq->armed = MNIC_CQ_ARM_NONE;
	cq->arm_sn = 0;
	cq->fired = 0;
	cq->has_solicited = 0;
	cq->sol_end = 0;
}

void rocev2_cq_unbind(struct rocev2 *e, struct rocev2_cq *cq)
{
	if (cq->eq < ROCEV2_MAX_EQ && e->eqs[cq->eq].in_use)
		e->eqs[cq->eq].refcnt--;
	cq->eq = ROCEV2_NO_EQ;
}

int rocev2_cq_set_eq(struct rocev2 *e, uint32_t cq_handle, uint32_t eq_handle)
{
	struct rocev2_cq *cq = rocev2_cq_get(e, cq_handle);
	struct rocev2_eq *eq = NULL;

	if (!cq || cq->owner != e->creator)
		return -HAL_EINVAL;
	if (eq_handle != ROCEV2_NO_EQ) {
		eq = eq_get(e, eq_handle);
		if (!eq || eq->owner != cq->owner)
			return -HAL_EINVAL;
	}
	rocev2_cq_unbind(e, cq);
	if (eq) {
		eq->refcnt++;
		cq->eq = rocev2_handle_index(eq_handle);
	}
	return 0;
}

/* ---- firing -------------------------------------------------------------------- */

/* Write one EQE for cq into its EQ and raise the EQ's vector.  0, or < 0
 * when nothing was written (EQ full, DMA error): the CQ stays armed. */
static int eq_post(struct rocev2 *e, struct rocev2_cq *cq, uint32_t cq_idx)
{
	const size_t owner_off = offsetof(struct mnic_eqe, owner);
	struct rocev2_eq *eq = &e->eqs[cq->eq];
	struct mnic_dbrec rec;
	struct mnic_eqe eqe;
	uint64_t slot;
	uint8_t owner;

	if (rocev2_host_read(e, eq->q.dbrec_mtt, eq->q.dbrec_addr, &rec, sizeof(rec)) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	/* pi - ci unconsumed EQEs; a consumer index ahead of pi (hostile)
	 * wraps to a huge value and is full as well: nothing is overwritten. */
	if (eq->pi - rec.index >= eq->q.size) {
		e->cnt.eq_overflows++;
		/* the host has EQEs to take: wake it, it may have missed one */
		if (e->env.raise)
			e->env.raise(e->env.ctx, eq->vector);
		return -HAL_ENOSPC;
	}
	memset(&eqe, 0, sizeof(eqe));
	eqe.cq = rocev2_handle(cq->gen, cq_idx);
	eqe.type = MNIC_EQE_COMPLETION;
	eqe.arm_sn = cq->arm_sn;
	slot = eq->q.ring_addr + (uint64_t)(eq->pi & (eq->q.size - 1u)) * MNIC_EQE_SIZE;
	owner = MNIC_CQE_OWNER(eq->pi, eq->q.size);
	if (rocev2_host_write(e, eq->q.ring_mtt, slot, &eqe, owner_off) < 0 ||
	    rocev2_host_write(e, eq->q.ring_mtt, slot + owner_off + 1u,
			      (const uint8_t *)&eqe + owner_off + 1u,
			      MNIC_EQE_SIZE - owner_off - 1u) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	/* The owner byte only after a write barrier, as for CQEs: the host
	 * reads the body once the owner flips. */
	hal_wmb();
	if (rocev2_host_write(e, eq->q.ring_mtt, slot + owner_off, &owner, 1) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	eq->pi++;
	e->cnt.cq_events++;
	/* After the owner byte: a host woken by the vector finds the EQE (the
	 * raise is a system call or an MMIO write, ordered after it). */
	if (e->env.raise) {
		e->env.raise(e->env.ctx, eq->vector);
		e->cnt.eq_raises++;
	}
	return 0;
}

void rocev2_cq_fire(struct rocev2 *e, struct rocev2_cq *cq, uint32_t idx)
{
	if (cq->eq >= ROCEV2_MAX_EQ || eq_post(e, cq, idx) < 0)
		return;
	cq->armed = MNIC_CQ_ARM_NONE;   /* one event per arm */
	cq->fired = 1;
}

/* ---- the arm word ------------------------------------------------------------ */

static int arm_sn_ok(const struct rocev2_cq *cq, uint8_t sn)
{
	return cq->fired ? sn == (uint8_t)(cq->arm_sn + 1u) : sn == cq->arm_sn;
}

/* Does a CQE in [ci, pi) qualify for the arm in force?  NEXT: any; SOLICITED:
 * the newest solicited one (index sol_end - 1) is unconsumed. */
static int pending_qualifies(const struct rocev2_cq *cq, uint32_t ci)
{
	uint32_t unconsumed = cq->pi - ci;

	/* a consumer index ahead of pi is hostile: nothing is pending */
	if (unconsumed == 0 || unconsumed > cq->q.size)
		return 0;
	if (cq->armed == MNIC_CQ_ARM_NEXT)
		return 1;
	return cq->armed == MNIC_CQ_ARM_SOLICITED && cq->has_solicited &&
	       cq->pi - cq->sol_end < unconsumed;
}

void rocev2_cq_arm_new(struct rocev2 *e, struct rocev2_cq *cq, uint32_t idx,
		       const struct mnic_dbrec *rec)
{
	const uint32_t arm = rec->arm;
	const uint8_t cmd = (uint8_t)MNIC_CQ_ARM_GET_CMD(arm);
	const uint8_t sn = (uint8_t)MNIC_CQ_ARM_GET_SN(arm);

	cq->arm_seen = arm;
	if ((arm & MNIC_CQ_ARM_RSVD_MASK) || cmd > MNIC_CQ_ARM_SOLICITED) {
		e->cnt.cq_arm_refused++;
		return;
	}
	if (cmd == MNIC_CQ_ARM_NONE)
		return;
	if (cq->eq == ROCEV2_NO_EQ) {
		e->cnt.cq_arm_no_eq++;
		return;
	}
	if (!arm_sn_ok(cq, sn)) {
		e->cnt.cq_arm_stale++;
		return;
	}
	if (cq->fired) {
		cq->fired = 0;
		cq->arm_sn = sn;
		cq->armed = cmd;
	} else if (cq->armed != MNIC_CQ_ARM_NEXT) {
		cq->armed = cmd;        /* NONE -> cmd, SOLICITED -> NEXT or SOLICITED */
	}
	e->cnt.cq_arms++;
	/* The race IBA leaves to the consumer (poll, arm, poll again): CQEs
	 * that landed after the host's last poll and before this arm fire the
	 * event now, so a host that sleeps after arming is woken. */
	if (pending_qualifies(cq, rec->index)) {
		uint64_t before = e->cnt.cq_events;

		rocev2_cq_fire(e, cq, idx);
		e->cnt.cq_events_at_arm += e->cnt.cq_events - before;
	}
}

unsigned rocev2_cq_arms_changed(struct rocev2 *e)
{
	unsigned i, n = 0;

	for (i = 0; i < ROCEV2_MAX_CQ; i++) {
		struct rocev2_cq *cq = &e->cqs[i];
		struct mnic_dbrec rec;

		/* an arm of a CQ without an EQ is seen (and counted) with its next CQE */
		if (!cq->in_use || cq->eq == ROCEV2_NO_EQ || cq->error)
			continue;
		if (rocev2_host_read(e, cq->q.dbrec_mtt, cq->q.dbrec_addr, &rec, sizeof(rec)) < 0) {
			e->cnt.dma_errors++;
			continue;
		}
		rocev2_cq_arm_take(e, cq, i, &rec);
		n++;
	}
	return n;
}
