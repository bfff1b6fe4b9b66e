/* Completion queues: a ring of CQEs in host memory that only the firmware
 * writes (abi/include/mnic/queues.h).  The host tells how far it has
 * consumed through the CQ's doorbell record; the firmware never overwrites
 * an unconsumed CQE: a full CQ is an overflow, which IBA 11.6.2 makes an
 * asynchronous CQ error, after which the CQ accepts nothing.  A CQ bound
 * to an event queue is armed through its doorbell record and fires
 * completion events (eq.c). */
#include <stddef.h>

#include "hal/mmio.h"
#include "pool.h"

struct rocev2_cq *rocev2_cq_get(struct rocev2 *e, uint32_t handle)
{
	uint32_t idx = rocev2_handle_index(handle);
	struct rocev2_cq *cq;

	if (idx >= ROCEV2_MAX_CQ)
		return NULL;
	cq = &e->cqs[idx];
	if (!cq->in_use || cq->gen != rocev2_handle_gen(handle))
		return NULL;
	return cq;
}

ROCEV2_CTL int rocev2_create_cq(struct rocev2 *e, const struct rocev2_queue_attr *q, uint32_t *handle)
{
	struct rocev2_cq *cq;
	uint32_t idx;
	int err;

	if (!q || !handle)
		return -HAL_EINVAL;
	err = rocev2_queue_attr_check(e, q, MNIC_CQE_SIZE, 1);
	if (err)
		return err;
	ROCEV2_POOL_FIND_FREE(e->cqs, ROCEV2_MAX_CQ, idx);
	if (idx >= ROCEV2_MAX_CQ)
		return -HAL_ENOMEM;
	cq = &e->cqs[idx];
	cq->gen = rocev2_pool_next_gen(cq->gen, ROCEV2_HANDLE_GEN_MAX);
	cq->error = 0;
	cq->q = *q;
	cq->pi = 0;                 /* the host hands over a zeroed ring */
	cq->refcnt = 0;
	cq->owner = e->creator;
	rocev2_cq_events_reset(cq);
	cq->in_use = 1;
	rocev2_queue_mtt_ref(e, q, 1);
	e->n_cq++;
	*handle = rocev2_handle(cq->gen, idx);
	return 0;
}

ROCEV2_CTL int rocev2_destroy_cq(struct rocev2 *e, uint32_t handle)
{
	struct rocev2_cq *cq = rocev2_cq_get(e, handle);

	if (!cq)
		return -HAL_EINVAL;
	if (cq->refcnt)
		return -HAL_EBUSY;      /* IBA 11.2.8.4: QPs still associated */
	rocev2_cq_unbind(e, cq);
	rocev2_queue_mtt_ref(e, &cq->q, -1);
	cq->in_use = 0;
	e->n_cq--;
	return 0;
}

static void cq_overflow(struct rocev2 *e, struct rocev2_cq *cq, uint32_t idx)
{
	cq->error = 1;
	e->cnt.cq_overflows++;
	rocev2_post_event(e, cq->owner, ROCEV2_EVENT_CQ_ERR, rocev2_handle(cq->gen, idx));
}

/* Write cqe into slot pi of the CQ's ring with that slot's owner phase.
 * 0, or -HAL_EFAULT (counted). */
int rocev2_cq_write(struct rocev2 *e, const struct rocev2_queue_attr *q, uint32_t pi,
		    const struct mnic_cqe *cqe)
{
	const size_t owner_off = offsetof(struct mnic_cqe, owner);
	const uint64_t slot = q->ring_addr + (uint64_t)(pi & (q->size - 1u)) * MNIC_CQE_SIZE;
	const uint8_t owner = MNIC_CQE_OWNER(pi, q->size);
	struct mnic_cqe body = *cqe;

	/* The whole CQE first, its owner byte still the previous lap's phase
	 * (what the slot holds: the host sees the slot as empty) ... */
	body.owner = owner ^ 1u;
	if (rocev2_ctl_write(e, q->ring_mtt, slot, &body, sizeof(body)) < 0)
		goto fault;
	/* ... and the owner byte only after a write barrier: the host polls the
	 * owner byte and reads the rest once it flips, so no store of the CQE
	 * body may become visible after it (queues.h, CQE ownership). */
	hal_wmb();
	if (rocev2_ctl_write(e, q->ring_mtt, slot + owner_off, &owner, 1) < 0)
		goto fault;
	return 0;
fault:
	e->cnt.dma_errors++;
	return -HAL_EFAULT;
}

int rocev2_cq_post(struct rocev2 *e, uint16_t cq_index, struct mnic_cqe *cqe)
{
	const uint32_t idx = cq_index;
	struct rocev2_cq *cq;
	struct mnic_dbrec rec;

	if (idx >= ROCEV2_MAX_CQ || !e->cqs[idx].in_use)
		return -HAL_EINVAL;
	cq = &e->cqs[idx];
	if (cq->error) {
		e->cnt.cq_err_drops++;
		return -HAL_ENOSPC;
	}
	if (rocev2_ctl_read(e, cq->q.dbrec_mtt, cq->q.dbrec_addr, &rec, sizeof(rec)) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	/* The arm word rides in the record just read: an arm is taken before
	 * this CQE is written, so the CQE can fire it (eq.c). */
	rocev2_cq_arm_take(e, cq, idx, &rec);
	/* Free-running indices: pi - ci is the number of unconsumed CQEs.  A
	 * consumer index ahead of pi (hostile or corrupt) makes the difference
	 * wrap to a huge value and counts as an overflow as well. */
	if (cq->pi - rec.index >= cq->q.size) {
		cq_overflow(e, cq, idx);
		return -HAL_ENOSPC;
	}
	if (rocev2_cq_write(e, &cq->q, cq->pi, cqe) < 0)
		return -HAL_EFAULT;
	cq->pi++;
	/* IBA 11.4.2.2: a solicited event is a receive completion of a
	 * message with SE, or any completion in error. */
	rocev2_cq_completed(e, cq, idx, (cqe->flags & MNIC_CQE_SOLICITED) ||
				       cqe->status != MNIC_WC_SUCCESS);
	return 0;
}
