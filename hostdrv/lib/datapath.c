/* The data path: WQEs into rings in the user area, doorbell records, the
 * doorbell page's db_seq, and CQ polling by owner phase (mnic/queues.h).  No
 * command and no system call: the NIC reads the rings by DMA. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include "libmnic_int.h"
#include "mnic/ioctl.h"

static volatile uint32_t *db_seq(struct mnic_dev *dev)
{
	return &dev->db->db_seq;
}

void mnic_ring_doorbell(struct mnic_dev *dev)
{
	/* WQEs and doorbell records visible before the NIC may see the new
	 * db_seq (mnic/abi.h: it re-reads every record on a change).  The
	 * increment is atomic: several threads or processes may ring. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_fetch_add((uint32_t *)(uintptr_t)db_seq(dev), 1u, __ATOMIC_SEQ_CST);
	/* the NIC hears it at once where it has a doorbell channel; through
	 * the kernel module, where the NIC has a doorbell register (a QEMU
	 * NIC's ivshmem-doorbell), which the mapped doorbell page is not */
	if (dev->backend == MNIC_BACKEND_KERNEL) {
		if (dev->kinfo.flags & MNIC_INFO_F_RING)
			(void)ioctl(dev->fd, MNIC_IOC_RING, 0);   /* failing: the poll serves it */
	} else {
		mnic_dbch_ring(dev);
	}
}

static void write_dbrec(struct mnic_dev *dev, uint64_t addr, uint32_t index)
{
	volatile struct mnic_dbrec *rec = mnic_window_ptr(dev, addr, sizeof(*rec));

	/* the WQEs before the index that publishes them */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (rec)
		rec->index = index;
}

/* The count only: an SGE's address need not be in the handle's memory
 * (over /dev/mnicN with host memory an MR may be any buffer of the
 * process); the NIC checks each SGE against its lkey's MR (rocev2/queue.c). */
static int sges_ok(const struct mnic_sge *sg, uint32_t n, uint32_t max)
{
	if (n > max || (n && !sg))
		return 0;
	return 1;
}

/* The host address of WQE `index` of a work queue (free-running index). */
static void *wqe_slot(struct mnic_dev *dev, const struct mnic_queue_desc *q, uint32_t index)
{
	return mnic_window_ptr(dev, q->ring_addr + (uint64_t)(index & (q->size - 1)) * MNIC_WQE_SIZE,
			       MNIC_WQE_SIZE);
}

/* Opcodes a send queue takes (IBA 9.4.1, mnic/queues.h) */
static const uint8_t wr_opcode_ok[MNIC_WR_NUM] = {
	[MNIC_WR_RDMA_WRITE] = 1, [MNIC_WR_RDMA_WRITE_WITH_IMM] = 1, [MNIC_WR_SEND] = 1,
	[MNIC_WR_SEND_WITH_IMM] = 1, [MNIC_WR_RDMA_READ] = 1, [MNIC_WR_ATOMIC_CMP_AND_SWP] = 1,
	[MNIC_WR_ATOMIC_FETCH_AND_ADD] = 1, [MNIC_WR_SEND_WITH_INV] = 1,
};

int mnic_post_send(struct mnic_qp *qp, struct mnic_send_wr *wr, struct mnic_send_wr **bad_wr)
{
	struct mnic_send_wqe w;
	uint32_t posted = 0;
	int err = 0;

	if (bad_wr)
		*bad_wr = NULL;
	if (!qp)
		return -EINVAL;
	for (; wr; wr = wr->next) {
		uint32_t idx = qp->sq_pi;
		void *slot;

		if (wr->opcode >= MNIC_WR_NUM || !wr_opcode_ok[wr->opcode] ||
		    !sges_ok(wr->sg_list, wr->num_sge, qp->max_send_sge) ||
		    (wr->send_flags & ~(uint32_t)(MNIC_SEND_FENCE | MNIC_SEND_SIGNALED |
						   MNIC_SEND_SOLICITED))) {
			err = -EINVAL;
			break;
		}
		if (qp->sq_pi - qp->sq_ci >= qp->sq.size) {
			err = -ENOMEM;
			break;
		}
		slot = wqe_slot(qp->dev, &qp->sq, idx);
		if (!slot) {
			err = -EFAULT;
			break;
		}
		memset(&w, 0, sizeof(w));
		w.wr_id = wr->wr_id;
		w.opcode = (uint8_t)wr->opcode;
		w.send_flags = (uint8_t)wr->send_flags;
		w.num_sge = (uint8_t)wr->num_sge;
		w.imm_data = wr->imm_data;
		w.remote_addr = wr->remote_addr;
		w.rkey = wr->rkey;
		w.compare_add = wr->compare_add;
		w.swap = wr->swap;
		if (wr->num_sge)
			memcpy(w.sge, wr->sg_list, wr->num_sge * sizeof(w.sge[0]));
		memcpy(slot, &w, sizeof(w));
		if (qp->sq_sig_all || (wr->send_flags & MNIC_SEND_SIGNALED))
			qp->sig_fifo[qp->sig_tail++ & (qp->sq.size - 1)] = idx;
		qp->sq_pi++;
		posted++;
	}
	if (err && bad_wr)
		*bad_wr = wr;
	if (posted) {
		write_dbrec(qp->dev, qp->sq.dbrec_addr, qp->sq_pi);
		mnic_ring_doorbell(qp->dev);
	}
	return err;
}

static int post_recv_ring(struct mnic_dev *dev, const struct mnic_queue_desc *q, uint32_t *pi,
			  uint32_t ci, uint32_t max_sge, struct mnic_recv_wr *wr,
			  struct mnic_recv_wr **bad_wr)
{
	struct mnic_recv_wqe w;
	uint32_t posted = 0;
	int err = 0;

	if (bad_wr)
		*bad_wr = NULL;
	if (q->size == 0) {
		err = -EINVAL;   /* a QP on an SRQ has no RQ */
		goto out;
	}
	for (; wr; wr = wr->next) {
		void *slot;

		if (!sges_ok(wr->sg_list, wr->num_sge, max_sge)) {
			err = -EINVAL;
			break;
		}
		if (*pi - ci >= q->size) {
			err = -ENOMEM;
			break;
		}
		slot = wqe_slot(dev, q, *pi);
		if (!slot) {
			err = -EFAULT;
			break;
		}
		memset(&w, 0, sizeof(w));
		w.wr_id = wr->wr_id;
		w.num_sge = (uint8_t)wr->num_sge;
		if (wr->num_sge)
			memcpy(w.sge, wr->sg_list, wr->num_sge * sizeof(w.sge[0]));
		memcpy(slot, &w, sizeof(w));
		(*pi)++;
		posted++;
	}
out:
	if (err && bad_wr)
		*bad_wr = wr;
	if (posted) {
		write_dbrec(dev, q->dbrec_addr, *pi);
		mnic_ring_doorbell(dev);
	}
	return err;
}

int mnic_post_recv(struct mnic_qp *qp, struct mnic_recv_wr *wr, struct mnic_recv_wr **bad_wr)
{
	if (!qp)
		return -EINVAL;
	return post_recv_ring(qp->dev, &qp->rq, &qp->rq_pi, qp->rq_ci, qp->max_recv_sge, wr,
			      bad_wr);
}

int mnic_post_srq_recv(struct mnic_srq *srq, struct mnic_recv_wr *wr,
		       struct mnic_recv_wr **bad_wr)
{
	if (!srq)
		return -EINVAL;
	return post_recv_ring(srq->dev, &srq->q, &srq->pi, srq->ci, srq->max_sge, wr, bad_wr);
}

int mnic_cq_ring_poll(const volatile struct mnic_cqe *ring, uint32_t size, uint32_t *ci, int n,
		      struct mnic_cqe *out)
{
	int got = 0;

	if (!ring || size == 0 || (size & (size - 1)) || n < 0)
		return -EINVAL;
	while (got < n) {
		const volatile struct mnic_cqe *c = &ring[*ci & (size - 1)];

		if (c->owner != MNIC_CQE_OWNER(*ci, size))
			break;
		/* the owner byte is written last (queues.h): the rest of the
		 * CQE is read after it */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(&out[got], (const void *)(uintptr_t)c, sizeof(*out));
		got++;
		(*ci)++;
	}
	return got;
}

static struct mnic_qp *find_qp(struct mnic_dev *dev, uint32_t qpn)
{
	for (uint32_t i = 0; i < dev->n_qps; i++)
		if (dev->qps[i]->qp_num == qpn)
			return dev->qps[i];
	return NULL;
}

static uint64_t sq_wr_id(struct mnic_qp *qp, uint32_t idx)
{
	const struct mnic_send_wqe *w = mnic_window_ptr(
		qp->dev, qp->sq.ring_addr + (uint64_t)(idx & (qp->sq.size - 1)) * MNIC_WQE_SIZE,
		MNIC_WQE_SIZE);

	return w ? w->wr_id : 0;
}

/* Free the SQ slots a send completion retires.  RC completes in order
 * (IBA 9.7.5.2.1), so a successful CQE retires the oldest signaled WQE and
 * every unsignaled one before it.  An error CQE may belong to an
 * unsignaled WQE (errors always complete): match it by wr_id from the
 * oldest outstanding WQE; if that is ambiguous the slot count stays
 * conservative (fewer free slots, never a reused live one). */
static void retire_send(struct mnic_qp *qp, const struct mnic_cqe *c)
{
	uint32_t outstanding = qp->sq_pi - qp->sq_ci;

	if (c->status == MNIC_WC_SUCCESS && qp->sig_head != qp->sig_tail) {
		uint32_t idx = qp->sig_fifo[qp->sig_head++ & (qp->sq.size - 1)];

		if (idx - qp->sq_ci < outstanding)
			qp->sq_ci = idx + 1;
		return;
	}
	for (uint32_t i = 0; i < outstanding; i++) {
		uint32_t idx = qp->sq_ci + i;

		if (sq_wr_id(qp, idx) != c->wr_id)
			continue;
		qp->sq_ci = idx + 1;
		/* signaled entries now behind ci are retired too */
		while (qp->sig_head != qp->sig_tail &&
		       qp->sig_fifo[qp->sig_head & (qp->sq.size - 1)] - qp->sq_ci >= (1u << 31))
			qp->sig_head++;
		return;
	}
}

static void retire(struct mnic_dev *dev, const struct mnic_cqe *c)
{
	struct mnic_qp *qp = find_qp(dev, c->qp_num);

	if (!qp)
		return;
	if (c->opcode >= MNIC_WC_RECV) {
		if (qp->srq) {
			if (qp->srq->pi != qp->srq->ci)
				qp->srq->ci++;
		} else if (qp->rq_pi != qp->rq_ci) {
			qp->rq_ci++;
		}
		return;
	}
	retire_send(qp, c);
}

int mnic_poll_cq(struct mnic_cq *cq, int n, struct mnic_wc *wc)
{
	const volatile struct mnic_cqe *ring;
	struct mnic_cqe c[16];
	uint32_t ci;
	int total = 0;

	if (!cq || n < 0 || (n && !wc))
		return -EINVAL;
	ring = mnic_window_ptr(cq->dev, cq->q.ring_addr, (uint64_t)cq->q.size * MNIC_CQE_SIZE);
	if (!ring)
		return -EFAULT;
	while (total < n) {
		int want = n - total < 16 ? n - total : 16;
		int got;

		ci = cq->ci;
		got = mnic_cq_ring_poll(ring, cq->q.size, &ci, want, c);
		if (got <= 0)
			break;
		for (int i = 0; i < got; i++) {
			struct mnic_wc *w = &wc[total + i];

			w->wr_id = c[i].wr_id;
			w->status = c[i].status;
			w->opcode = c[i].opcode;
			w->flags = c[i].flags;
			w->byte_len = c[i].byte_len;
			w->qp_num = c[i].qp_num;
			w->imm_data = c[i].imm_data;
			w->src_qp = c[i].src_qp;
			w->vendor_err = c[i].vendor_err;
			retire(cq->dev, &c[i]);
		}
		cq->ci = ci;
		total += got;
		if (got < want)
			break;
	}
	if (total) {
		/* the CQEs are read before the NIC may reuse their slots: it
		 * reads the consumer index before writing (rocev2/cq.c) */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		write_dbrec(cq->dev, cq->q.dbrec_addr, cq->ci);
	}
	return total;
}
