/* Host work queues (abi/include/mnic/queues.h): doorbell records, send and
 * receive WQEs, and the scatter/gather lists they carry.
 *
 * Everything read from host memory is hostile: producer indices are
 * clamped to the ring, WQE opcodes and SGE counts are validated before any
 * stage uses them, and every SGE is checked against its MR (lkey, PD,
 * bounds, access) before a byte moves.  WQEs are copied into firmware
 * memory once and used from there, so the host cannot change a WQE between
 * its check and its use. */
#include "pool.h"

int rocev2_queue_attr_check(const struct rocev2 *e, const struct rocev2_queue_attr *q,
			    uint32_t entry_size)
{
	if (q->size == 0 || q->size > ROCEV2_MAX_QUEUE_SIZE || (q->size & (q->size - 1u)))
		return -HAL_EINVAL;
	if (q->dbrec_addr & (sizeof(struct mnic_dbrec) - 1u))
		return -HAL_EINVAL;
	if (!rocev2_in_window(e, q->ring_addr, (uint64_t)q->size * entry_size) ||
	    !rocev2_in_window(e, q->dbrec_addr, sizeof(struct mnic_dbrec)))
		return -HAL_EFAULT;
	return 0;
}

static uint64_t wq_slot(const struct rocev2_wq *wq, uint32_t index)
{
	return wq->q.ring_addr + (uint64_t)(index & (wq->q.size - 1u)) * MNIC_WQE_SIZE;
}

uint32_t rocev2_wq_refresh(struct rocev2 *e, struct rocev2_wq *wq)
{
	struct mnic_dbrec rec;

	if (wq->q.size == 0)
		return 0;
	if (hal_dma_read(e->env.dma, wq->q.dbrec_addr, &rec, sizeof(rec)) < 0) {
		e->cnt.dma_errors++;
		return wq->pi - wq->ci;
	}
	/* At most size WQEs can be posted beyond what we consumed; a producer
	 * further ahead (or behind ci, which wraps to the same test) would
	 * make us read slots twice in one pass.  Treat it as a full ring. */
	if (rec.index - wq->ci > wq->q.size) {
		e->cnt.wq_bad_producer++;
		rec.index = wq->ci + wq->q.size;
	}
	wq->pi = rec.index;
	return wq->pi - wq->ci;
}

/* Work request opcodes this engine executes (IBA 10.8.2 for RC, without
 * memory windows and local invalidate). */
static const uint8_t wr_supported[MNIC_WR_NUM] = {
	[MNIC_WR_RDMA_WRITE] = 1,
	[MNIC_WR_RDMA_WRITE_WITH_IMM] = 1,
	[MNIC_WR_SEND] = 1,
	[MNIC_WR_SEND_WITH_IMM] = 1,
	[MNIC_WR_RDMA_READ] = 1,
	[MNIC_WR_ATOMIC_CMP_AND_SWP] = 1,
	[MNIC_WR_ATOMIC_FETCH_AND_ADD] = 1,
	[MNIC_WR_SEND_WITH_INV] = 1,
};

int rocev2_sq_read(struct rocev2 *e, struct rocev2_qp *qp, uint32_t index,
		   struct mnic_send_wqe *wqe)
{
	if (qp->sq.q.size == 0)
		return -HAL_EINVAL;
	if (hal_dma_read(e->env.dma, wq_slot(&qp->sq, index), wqe, sizeof(*wqe)) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	/* The copy is complete (wr_id included) even when invalid, so that the
	 * requester can complete it with an error. */
	if (wqe->opcode >= MNIC_WR_NUM || !wr_supported[wqe->opcode])
		return -HAL_EINVAL;
	if (wqe->num_sge > qp->max_send_sge)
		return -HAL_EINVAL;
	return 0;
}

/* The QP's receive queue: its own RQ or its SRQ. */
static int rq_of(struct rocev2 *e, struct rocev2_qp *qp, struct rocev2_wq **wq,
		 struct rocev2_srq **srq, uint32_t *max_sge)
{
	*srq = NULL;
	if (qp->srq == ROCEV2_NO_SRQ) {
		*wq = &qp->rq;
		*max_sge = qp->max_recv_sge;
		return 0;
	}
	if (qp->srq >= ROCEV2_MAX_SRQ || !e->srqs[qp->srq].in_use)
		return -HAL_EINVAL;
	*srq = &e->srqs[qp->srq];
	*wq = &(*srq)->wq;
	*max_sge = (*srq)->max_sge;
	return 0;
}

/* A receive WQE with too many SGEs is still consumed and returned with
 * -HAL_EINVAL (wr_id valid): the responder completes it with an error on
 * this QP instead of leaving it at the head of a shared queue. */
int rocev2_rq_take(struct rocev2 *e, struct rocev2_qp *qp, struct mnic_recv_wqe *wqe)
{
	struct rocev2_wq *wq;
	struct rocev2_srq *srq;
	uint32_t max_sge;
	int err;

	err = rq_of(e, qp, &wq, &srq, &max_sge);
	if (err)
		return err;
	/* Re-read the producer every time: the SRQ limit below must count
	 * what the host has posted by now, not what it had at the last read. */
	if (rocev2_wq_refresh(e, wq) == 0)
		return -HAL_EAGAIN;
	if (hal_dma_read(e->env.dma, wq_slot(wq, wq->ci), wqe, sizeof(*wqe)) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	wq->ci++;
	err = 0;
	if (wqe->num_sge > max_sge) {
		e->cnt.rq_bad_wqe++;
		err = -HAL_EINVAL;
	}
	/* IBA 10.2.9 (SRQ limit): one event when fewer than limit WQEs
	 * remain, then disarmed until the host arms it again. */
	if (srq && srq->limit_armed && wq->pi - wq->ci < srq->limit) {
		srq->limit_armed = 0;
		e->cnt.srq_limit_events++;
		rocev2_post_event(e, srq->owner, ROCEV2_EVENT_SRQ_LIMIT_REACHED,
				  rocev2_handle(srq->gen, (uint32_t)(srq - e->srqs)));
	}
	return err;
}

int rocev2_sge_total(const struct mnic_sge *sge, unsigned n, uint64_t *total)
{
	uint64_t sum = 0;
	unsigned i;

	if (n > MNIC_MAX_SGE)
		return -HAL_E2BIG;
	for (i = 0; i < n; i++)
		sum += sge[i].length;          /* <= 28 * (2^32 - 1): cannot wrap */
	*total = sum;
	return sum > ROCEV2_MAX_MSG ? -HAL_E2BIG : 0;
}

/* Move len bytes between firmware memory and the message at offset off
 * of the SGE list: into `to` (gather) or from `from` (scatter, from !=
 * NULL).  The length check comes first so that a too-short list fails
 * before anything is written.  Each SGE touched is checked as a whole
 * against its MR: the SGE is the unit the host described, and its end
 * cannot wrap once it lies inside the MR. */
static int sge_copy(struct rocev2 *e, const struct rocev2_qp *qp, const struct mnic_sge *sge,
		    unsigned n, uint64_t off, uint8_t *to, const uint8_t *from, uint32_t len)
{
	/* IBA 10.6.3.1: local writes need LOCAL_WRITE; local reads need no
	 * flag. */
	uint32_t access = from ? ROCEV2_ACCESS_LOCAL_WRITE : 0;
	uint64_t total = 0;
	uint32_t done = 0;
	unsigned i;

	if (n > MNIC_MAX_SGE)
		return -HAL_E2BIG;
	for (i = 0; i < n; i++)
		total += sge[i].length;
	if (off > total || len > total - off)
		return -HAL_E2BIG;
	for (i = 0; i < n && done < len; i++) {
		const struct mnic_sge *s = &sge[i];
		uint32_t chunk;
		int rc;

		if (off >= s->length) {
			off -= s->length;
			continue;
		}
		if (rocev2_mr_check(rocev2_mr_lookup(e, s->lkey), qp->pd, s->addr, s->length,
				    access) < 0) {
			e->cnt.sge_prot_errors++;
			return -HAL_EFAULT;
		}
		chunk = s->length - (uint32_t)off;
		if (chunk > len - done)
			chunk = len - done;
		rc = from ? hal_dma_write(e->env.dma, s->addr + off, from + done, chunk)
			  : hal_dma_read(e->env.dma, s->addr + off, to + done, chunk);
		if (rc < 0) {
			e->cnt.dma_errors++;
			return -HAL_EFAULT;
		}
		done += chunk;
		off = 0;
	}
	return 0;
}

int rocev2_sge_gather(struct rocev2 *e, const struct rocev2_qp *qp, const struct mnic_sge *sge,
		      unsigned n, uint64_t off, void *dst, uint32_t len)
{
	return sge_copy(e, qp, sge, n, off, dst, NULL, len);
}

int rocev2_sge_scatter(struct rocev2 *e, const struct rocev2_qp *qp, const struct mnic_sge *sge,
		       unsigned n, uint64_t off, const void *src, uint32_t len)
{
	return sge_copy(e, qp, sge, n, off, NULL, src, len);
}

/* A zero-length access moves nothing and cannot fault: a zero-length RDMA
 * operation names no memory (its VA may be anything, even past the window). */
int rocev2_mem_write(struct rocev2 *e, uint64_t addr, const void *src, uint32_t len)
{
	if (len == 0)
		return 0;
	if (hal_dma_write(e->env.dma, addr, src, len) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	return 0;
}

int rocev2_mem_read(struct rocev2 *e, uint64_t addr, void *dst, uint32_t len)
{
	if (len == 0)
		return 0;
	if (hal_dma_read(e->env.dma, addr, dst, len) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	return 0;
}
