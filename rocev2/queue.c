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

int rocev2_queue_attr_check(struct rocev2 *e, const struct rocev2_queue_attr *q,
			    uint32_t entry_size, int need_written)
{
	int rc;

	if (q->size == 0 || q->size > ROCEV2_MAX_QUEUE_SIZE || (q->size & (q->size - 1u)))
		return -HAL_EINVAL;
	if (q->dbrec_addr & (sizeof(struct mnic_dbrec) - 1u))
		return -HAL_EINVAL;
	rc = rocev2_mtt_check(e, q->ring_mtt, q->ring_addr, (uint64_t)q->size * entry_size,
			      need_written);
	if (rc == 0)
		rc = rocev2_mtt_check(e, q->dbrec_mtt, q->dbrec_addr, sizeof(struct mnic_dbrec),
				      need_written);
	return rc;
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
	if (rocev2_ctl_read(e, wq->q.dbrec_mtt, wq->q.dbrec_addr, &rec, sizeof(rec)) < 0) {
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

/* A WQE is read in at most two parts, not as the whole 512-byte slot: its
 * 64-byte header with the first SGE (the common list of one, or 16 bytes
 * of inline data) in one transfer, then only what else it uses (num_sge
 * SGEs, or inline_len bytes).  Past that the firmware copy holds whatever
 * an earlier WQE left; nothing reads it (sge_total and the stages stop at
 * num_sge and inline_len, and the migration image skips the copy). */
#define WQE_HDR 64u
#define WQE_FIRST (WQE_HDR + sizeof(struct mnic_sge))
_Static_assert(offsetof(struct mnic_send_wqe, sge) == WQE_HDR &&
		       offsetof(struct mnic_recv_wqe, sge) == WQE_HDR,
	       "WQE headers (mnic/queues.h)");
_Static_assert(WQE_FIRST <= MNIC_WQE_SIZE, "the first read stays in the slot");

/* The rest of a WQE at slot whose first WQE_FIRST bytes are in w: `used`
 * bytes after the header. */
static int wqe_read_rest(struct rocev2 *e, uint32_t mtt, uint64_t slot, void *w, uint32_t used)
{
	if (used <= WQE_FIRST - WQE_HDR)
		return 0;
	return rocev2_host_read(e, mtt, slot + WQE_FIRST, (uint8_t *)w + WQE_FIRST,
				used - (WQE_FIRST - WQE_HDR));
}

int rocev2_sq_read(struct rocev2 *e, struct rocev2_qp *qp, uint32_t index,
		   struct mnic_send_wqe *wqe)
{
	uint64_t slot = wq_slot(&qp->sq, index);
	uint32_t rest;

	if (qp->sq.q.size == 0)
		return -HAL_EINVAL;
	if (rocev2_ctl_read(e, qp->sq.q.ring_mtt, slot, wqe, WQE_FIRST) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	/* The header is complete (wr_id included) even when invalid, so that
	 * the requester can complete it with an error. */
	if (wqe->opcode >= MNIC_WR_NUM || !wr_supported[wqe->opcode])
		return -HAL_EINVAL;
	if (wqe->num_sge > qp->max_send_sge)
		return -HAL_EINVAL;
	/* Inline data may be at most MNIC_MAX_INLINE (req_wqe_check fails a
	 * longer one, so the bound here only keeps the read in the slot). */
	rest = wqe->send_flags & MNIC_SEND_INLINE
		       ? (wqe->inline_len < MNIC_MAX_INLINE ? wqe->inline_len : MNIC_MAX_INLINE)
		       : wqe->num_sge * (uint32_t)sizeof(struct mnic_sge);
	if (wqe_read_rest(e, qp->sq.q.ring_mtt, slot, wqe, rest) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
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
	uint64_t slot;
	int err;

	err = rq_of(e, qp, &wq, &srq, &max_sge);
	if (err)
		return err;
	/* An SRQ's producer is read every time: its limit below must count
	 * what the host has posted by now, not what it had at the last read.
	 * The QP's own RQ is read again only when the WQEs known to be posted
	 * are used up (as the requester does with the SQ). */
	if ((srq || wq->pi == wq->ci) && rocev2_wq_refresh(e, wq) == 0)
		return -HAL_EAGAIN;
	slot = wq_slot(wq, wq->ci);
	if (rocev2_ctl_read(e, wq->q.ring_mtt, slot, wqe, WQE_FIRST) < 0)
		goto fault;
	/* The SGEs it uses (the two-part read, above); one with too many is
	 * consumed with its header only, num_sge cut to none. */
	err = 0;
	if (wqe->num_sge > max_sge) {
		e->cnt.rq_bad_wqe++;
		wqe->num_sge = 0;
		err = -HAL_EINVAL;
	} else if (wqe_read_rest(e, wq->q.ring_mtt, slot, wqe,
				 wqe->num_sge * (uint32_t)sizeof(struct mnic_sge)) < 0) {
		goto fault;
	}
	wq->ci++;
	/* IBA 10.2.9 (SRQ limit): one event when fewer than limit WQEs
	 * remain, then disarmed until the host arms it again. */
	if (srq && srq->limit_armed && wq->pi - wq->ci < srq->limit) {
		srq->limit_armed = 0;
		e->cnt.srq_limit_events++;
		rocev2_post_event(e, srq->owner, ROCEV2_EVENT_SRQ_LIMIT_REACHED,
				  rocev2_handle(srq->gen, (uint32_t)(srq - e->srqs)));
	}
	return err;
fault:
	/* Nothing consumed; no wr_id or SGE count for a caller to use. */
	wqe->wr_id = 0;
	wqe->num_sge = 0;
	e->cnt.dma_errors++;
	return -HAL_EFAULT;
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
		const struct rocev2_mr *mr;
		uint32_t chunk;
		int rc;

		if (off >= s->length) {
			off -= s->length;
			continue;
		}
		mr = rocev2_mr_lookup(e, s->lkey);
		if (rocev2_mr_check(mr, qp->pd, s->addr, s->length, access) < 0) {
			e->cnt.sge_prot_errors++;
			return -HAL_EFAULT;
		}
		chunk = s->length - (uint32_t)off;
		if (chunk > len - done)
			chunk = len - done;
		rc = from ? rocev2_host_write(e, mr->mtt, s->addr + off, from + done, chunk)
			  : rocev2_host_read(e, mr->mtt, s->addr + off, to + done, chunk);
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
int rocev2_mem_write(struct rocev2 *e, uint32_t rkey, uint64_t va, const void *src, uint32_t len)
{
	const struct rocev2_mr *mr;

	if (len == 0)
		return 0;
	mr = rocev2_mr_lookup(e, rkey);
	if (!mr || rocev2_host_write(e, mr->mtt, va, src, len) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	return 0;
}

int rocev2_mem_read(struct rocev2 *e, uint32_t rkey, uint64_t va, void *dst, uint32_t len)
{
	const struct rocev2_mr *mr;

	if (len == 0)
		return 0;
	mr = rocev2_mr_lookup(e, rkey);
	if (!mr || rocev2_host_read(e, mr->mtt, va, dst, len) < 0) {
		e->cnt.dma_errors++;
		return -HAL_EFAULT;
	}
	return 0;
}
