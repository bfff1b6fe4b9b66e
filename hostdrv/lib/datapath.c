/* The data path: WQEs into rings in the user area, doorbell records, the
 * doorbell page's db_seq, and CQ polling by owner phase (mnic/queues.h).  No
 * command and no system call: the NIC reads the rings by DMA.  The ring
 * formats themselves are wqe.c's (shared with the rdma-core provider). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include "libmnic_int.h"
#include "mnic/ioctl.h"
#include "wqe.h"

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

/* The host address of WQE `index` of a work queue (free-running index). */
static void *wqe_slot(struct mnic_dev *dev, const struct mnic_queue_desc *q, uint32_t index)
{
	return mnic_window_ptr(dev, q->ring_addr + (uint64_t)(index & (q->size - 1)) * MNIC_WQE_SIZE,
			       MNIC_WQE_SIZE);
}

/* Inline data of a libmnic work request: its SGE addresses are user-area
 * addresses (as for every MR of this API). */
static const void *user_area_map(void *arg, uint64_t addr, uint32_t len)
{
	return mnic_window_ptr(arg, addr, len);
}

int mnic_post_send(struct mnic_qp *qp, struct mnic_send_wr *wr, struct mnic_send_wr **bad_wr)
{
	struct mnic_sq_track t;
	uint32_t posted = 0;
	int err = 0;

	if (bad_wr)
		*bad_wr = NULL;
	if (!qp)
		return -EINVAL;
	t = (struct mnic_sq_track){ .pi = qp->sq_pi, .ci = qp->sq_ci, .size = qp->sq.size,
				    .sig_fifo = qp->sig_fifo, .sig_head = qp->sig_head,
				    .sig_tail = qp->sig_tail };
	for (; wr; wr = wr->next) {
		uint32_t idx = t.pi;
		void *slot;

		if (t.pi - t.ci >= t.size) {
			err = -ENOMEM;
			break;
		}
		slot = wqe_slot(qp->dev, &qp->sq, idx);
		if (!slot) {
			err = -EFAULT;
			break;
		}
		err = mnic_wqe_send_fill(slot, wr, qp->max_send_sge, user_area_map, qp->dev);
		if (err)
			break;
		mnic_sq_posted(&t, idx, qp->sq_sig_all || (wr->send_flags & MNIC_SEND_SIGNALED));
		t.pi++;
		posted++;
	}
	qp->sq_pi = t.pi;
	qp->sig_tail = t.sig_tail;
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

		if (*pi - ci >= q->size) {
			err = -ENOMEM;
			break;
		}
		slot = wqe_slot(dev, q, *pi);
		if (!slot) {
			err = -EFAULT;
			break;
		}
		err = mnic_wqe_recv_fill(slot, wr, max_sge);
		if (err)
			break;
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

static struct mnic_qp *find_qp(struct mnic_dev *dev, uint32_t qpn)
{
	for (uint32_t i = 0; i < dev->n_qps; i++)
		if (dev->qps[i]->qp_num == qpn)
			return dev->qps[i];
	return NULL;
}

/* Free the SQ slots a send completion retires (wqe.c, mnic_sq_retire). */
static void retire_send(struct mnic_qp *qp, const struct mnic_cqe *c)
{
	struct mnic_sq_track t = {
		.pi = qp->sq_pi, .ci = qp->sq_ci, .size = qp->sq.size, .sig_fifo = qp->sig_fifo,
		.sig_head = qp->sig_head, .sig_tail = qp->sig_tail,
	};

	mnic_sq_retire(&t, mnic_window_ptr(qp->dev, qp->sq.ring_addr,
					   (uint64_t)qp->sq.size * MNIC_WQE_SIZE), c);
	qp->sq_ci = t.ci;
	qp->sig_head = t.sig_head;
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
