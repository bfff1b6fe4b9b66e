/* RESIZE_CQ (IBA 11.2.8.3 Resize CQ; mnic/cmd.h): a CQ moves to another
 * ring with the CQEs its host has not consumed yet.  A control-path
 * command, so apart from cq.c's per-CQE path (built for speed, Makefile
 * HOT_SRCS): this is built for size.
 *
 * The old ring is only read: every refusal, and a DMA fault half-way,
 * leaves the CQ producing into it as before.  The new ring gets the
 * unconsumed CQEs at slots 0..n-1 with its own owner phase (written as
 * cq.c writes any CQE: body, barrier, owner byte), the producer index
 * becomes n, and the host, which stopped polling for the command,
 * consumes from slot 0 of the new ring. */
#include "hal/mmio.h"
#include "pool.h"

int rocev2_resize_cq(struct rocev2 *e, uint32_t handle, const struct rocev2_queue_attr *q,
		     uint32_t *moved)
{
	struct rocev2_cq *cq = rocev2_cq_get(e, handle);
	struct mnic_dbrec rec, nrec;
	struct mnic_cqe cqe;
	uint32_t n, i;
	int err;

	if (!cq || !q || !moved || cq->owner != e->creator || cq->error)
		return -HAL_EINVAL;
	err = rocev2_queue_attr_check(e, q, MNIC_CQE_SIZE, 1);
	if (err)
		return err;
	if (rocev2_host_read(e, cq->q.dbrec_mtt, cq->q.dbrec_addr, &rec, sizeof(rec)) < 0 ||
	    rocev2_host_read(e, q->dbrec_mtt, q->dbrec_addr, &nrec, sizeof(nrec)) < 0)
		goto fault;
	/* a consumer index ahead of pi wraps to a huge count: refused too */
	n = cq->pi - rec.index;
	if (n > cq->q.size || nrec.index != 0)
		return -HAL_EINVAL;
	if (n > q->size)
		return -HAL_ENOSPC;   /* IBA 11.2.8.3: not below the CQEs outstanding */
	/* An arm in the old record is taken before the move (the new record
	 * carries the same word, so it is not taken twice). */
	rocev2_cq_arm_take(e, cq, rocev2_handle_index(handle), &rec);
	for (i = 0; i < n; i++) {
		uint64_t from = cq->q.ring_addr +
				(uint64_t)((rec.index + i) & (cq->q.size - 1u)) * MNIC_CQE_SIZE;

		if (rocev2_host_read(e, cq->q.ring_mtt, from, &cqe, sizeof(cqe)) < 0)
			goto fault;
		if (rocev2_cq_write(e, q, i, &cqe) < 0)
			return -HAL_EFAULT;   /* counted; the CQ still on its old ring */
	}
	/* the newest solicited CQE, renumbered, if it is among those moved */
	if (cq->has_solicited && cq->sol_end - rec.index <= n)
		cq->sol_end -= rec.index;
	else
		cq->has_solicited = 0;
	rocev2_queue_mtt_ref(e, q, 1);
	rocev2_queue_mtt_ref(e, &cq->q, -1);
	cq->q = *q;
	cq->pi = n;
	e->cnt.cq_resizes++;
	*moved = n;
	return 0;
fault:
	e->cnt.dma_errors++;
	return -HAL_EFAULT;
}
