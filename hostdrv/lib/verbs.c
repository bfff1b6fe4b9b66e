/* Objects: PD, MR, CQ, SRQ, QP.  Each create allocates its rings and
 * doorbell records (mnic_alloc), sends one command and checks the reply;
 * the memory is then bound to the object (mnic_mem_bind), so whoever
 * destroys it, this process or another by handle (mnic_destroy_object),
 * returns it.  A refused create returns its memory at once.  Each destroy
 * sends one command and frees the library's struct and the memory only
 * when the device agreed (verbs semantics). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libmnic_int.h"

#define RING_ALIGN 4096u

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n && p < (1u << 30))
		p <<= 1;
	return p;
}

void mnic_track_qp(struct mnic_dev *dev, struct mnic_qp *qp, int add)
{
	if (add) {
		if (dev->n_qps == dev->cap_qps) {
			uint32_t cap = dev->cap_qps ? dev->cap_qps * 2 : 16;
			struct mnic_qp **n = realloc(dev->qps, cap * sizeof(*n));

			if (!n)
				return;   /* the QP works; its WQEs retire by wr_id scan only */
			dev->qps = n;
			dev->cap_qps = cap;
		}
		dev->qps[dev->n_qps++] = qp;
		return;
	}
	for (uint32_t i = 0; i < dev->n_qps; i++)
		if (dev->qps[i] == qp) {
			dev->qps[i] = dev->qps[--dev->n_qps];
			return;
		}
}

static int handle_cmd(struct mnic_dev *dev, uint16_t opcode, uint32_t handle)
{
	struct mnic_cmd_handle_in in = {.hdr = {.opcode = opcode}, .handle = handle};
	struct mnic_cmd_simple_out out;

	return mnic_cmd(dev, &in, sizeof(in), &out, sizeof(out), NULL);
}

/* A handle from a create: 0 never names an object (generation 0). */
static int create_cmd(struct mnic_dev *dev, const void *in, uint32_t in_len, uint32_t *handle)
{
	struct mnic_cmd_handle_out out;
	int err = mnic_cmd(dev, in, in_len, &out, sizeof(out), NULL);

	if (err < 0)
		return err;
	if (out.handle == 0)
		return mnic_reply_err(dev);
	*handle = out.handle;
	return 0;
}

int mnic_alloc_pd(struct mnic_dev *dev, struct mnic_pd **out)
{
	struct mnic_cmd_simple_in in = {.hdr = {.opcode = MNIC_CMD_ALLOC_PD}};
	struct mnic_pd *pd;
	int err;

	if (!dev || !out)
		return -EINVAL;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	err = create_cmd(dev, &in, sizeof(in), &pd->handle);
	if (err < 0) {
		free(pd);
		return err;
	}
	pd->dev = dev;
	*out = pd;
	return 0;
}

int mnic_dealloc_pd(struct mnic_pd *pd)
{
	int err;

	if (!pd)
		return -EINVAL;
	err = handle_cmd(pd->dev, MNIC_CMD_DEALLOC_PD, pd->handle);
	if (err == 0)
		free(pd);
	return err;
}

/* A refused create's MTT: the refusal stays the last error. */
static void drop_mtt(struct mnic_dev *dev, uint32_t mtt)
{
	struct mnic_cmd_result keep = dev->last;

	if (mtt)
		mnic_destroy_mtt(dev, mtt);
	dev->last = keep;
}

int mnic_reg_mr(struct mnic_pd *pd, uint64_t addr, uint64_t length, uint32_t access,
		struct mnic_mr **out)
{
	struct mnic_cmd_reg_mr_in in;
	struct mnic_cmd_reg_mr_out o;
	struct mnic_mr *mr;
	uint32_t mtt;
	void *ptr;
	int err;

	if (!pd || !out)
		return -EINVAL;
	if (length == 0 || addr + length < addr)
		return mnic_set_err(pd->dev, MNIC_ERR_ARG, -EFAULT);
	ptr = mnic_window_ptr(pd->dev, addr, length);
	/* kmem mode: any buffer of this process (heap, stack, a mapped file;
	 * IOVA = VA), pinned by the module.  Elsewhere only the handle's own
	 * memory: nothing could pin the rest where the NIC reaches it. */
	if (!ptr && !pd->dev->kmem)
		return mnic_set_err_detail(
			pd->dev, MNIC_ERR_ARG, -EFAULT,
			"[0x%llx, +%llu) is not memory of this handle (mnic_alloc): only "
			"/dev/mnicN on a NIC with host memory registers any buffer of the "
			"process", (unsigned long long)addr, (unsigned long long)length);
	/* host-memory mode: the MR's pages through an MTT (IOVA = addr) */
	err = mnic_hostmem_mtt(pd->dev, addr, length, &mtt);
	if (err < 0)
		return err;
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_REG_MR;
	in.pd = pd->handle;
	in.access = access;
	in.addr = addr;
	in.length = length;
	in.mtt = mtt;
	err = mnic_cmd(pd->dev, &in, sizeof(in), &o, sizeof(o), NULL);
	if (err == 0 && (o.lkey == 0 || o.rkey == 0))
		err = mnic_reply_err(pd->dev);   /* an MR we cannot name: keep its MTT */
	else if (err < 0)
		drop_mtt(pd->dev, mtt);
	if (err < 0)
		return err;
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		handle_cmd(pd->dev, MNIC_CMD_DEREG_MR, o.lkey);
		drop_mtt(pd->dev, mtt);
		return mnic_set_err(pd->dev, MNIC_ERR_ARG, -ENOMEM);
	}
	/* so that a destroy by lkey (mnic_destroy_object) finds it; a buffer
	 * outside the handle's memory has no block: its MTT goes (and its
	 * pages are unpinned) at mnic_dereg_mr or mnic_close */
	if (mtt && ptr)
		mnic_mem_set_mtt(pd->dev, addr, mtt);
	else if (!ptr)
		ptr = (void *)(uintptr_t)addr;
	mr->mtt = mtt;
	mr->dev = pd->dev;
	mr->pd = pd;
	mr->lkey = o.lkey;
	mr->rkey = o.rkey;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->ptr = ptr;
	*out = mr;
	return 0;
}

int mnic_dereg_mr(struct mnic_mr *mr)
{
	int err;

	if (!mr)
		return -EINVAL;
	err = handle_cmd(mr->dev, MNIC_CMD_DEREG_MR, mr->lkey);
	if (err == 0) {
		if (mr->mtt)
			mnic_destroy_mtt(mr->dev, mr->mtt);
		free(mr);
	}
	return err;
}

/* A refused create's cleanup: the refusal stays the last error. */
static void free_queue(struct mnic_dev *dev, struct mnic_queue_desc *q)
{
	struct mnic_cmd_result keep = dev->last;

	if (q->size == 0)
		return;
	if (q->ring_mtt)
		mnic_destroy_mtt(dev, q->ring_mtt);
	if (q->dbrec_mtt)
		mnic_destroy_mtt(dev, q->dbrec_mtt);
	mnic_free(dev, q->ring_addr);
	mnic_free(dev, q->dbrec_addr);
	memset(q, 0, sizeof(*q));
	dev->last = keep;
}

/* Ring + doorbell record for `entries` entries of `esize` bytes. */
static int alloc_queue(struct mnic_dev *dev, uint32_t entries, uint32_t esize,
		       struct mnic_queue_desc *q)
{
	struct mnic_buf ring, db;
	int err;

	memset(q, 0, sizeof(*q));
	if (entries == 0)
		return 0;
	err = mnic_alloc(dev, (uint64_t)entries * esize, RING_ALIGN, &ring);
	if (err < 0)
		return err;
	err = mnic_alloc(dev, sizeof(struct mnic_dbrec), 64, &db);
	if (err < 0) {
		mnic_free(dev, ring.addr);
		return err;
	}
	q->ring_addr = ring.addr;
	q->dbrec_addr = db.addr;
	q->size = entries;
	/* host-memory mode: ring and record each through an MTT, recorded in
	 * their blocks for a destroy by handle */
	err = mnic_hostmem_mtt(dev, ring.addr, ring.len, &q->ring_mtt);
	if (err == 0)
		err = mnic_hostmem_mtt(dev, db.addr, db.len, &q->dbrec_mtt);
	if (err < 0) {
		free_queue(dev, q);
		return err;
	}
	if (q->ring_mtt)
		mnic_mem_set_mtt(dev, ring.addr, q->ring_mtt);
	if (q->dbrec_mtt)
		mnic_mem_set_mtt(dev, db.addr, q->dbrec_mtt);
	return 0;
}

static void bind_queue(struct mnic_dev *dev, const struct mnic_queue_desc *q,
		       enum mnic_obj_kind kind, uint32_t handle)
{
	if (q->size == 0)
		return;
	mnic_mem_bind(dev, q->ring_addr, kind, handle);
	mnic_mem_bind(dev, q->dbrec_addr, kind, handle);
}

int mnic_create_cq(struct mnic_dev *dev, uint32_t cqe, struct mnic_cq **out)
{
	struct mnic_cmd_create_cq_in in;
	struct mnic_cq *cq;
	int err;

	if (!dev || !out || cqe == 0 || cqe > 65536)
		return dev ? mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL) : -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	err = alloc_queue(dev, pow2_at_least(cqe), MNIC_CQE_SIZE, &cq->q);
	if (err < 0)
		goto fail;
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_CREATE_CQ;
	in.q = cq->q;
	err = create_cmd(dev, &in, sizeof(in), &cq->handle);
	if (err < 0)
		goto fail;
	bind_queue(dev, &cq->q, MNIC_OBJ_CQ, cq->handle);
	cq->dev = dev;
	*out = cq;
	return 0;
fail:
	free_queue(dev, &cq->q);
	free(cq);
	return err;
}

int mnic_destroy_cq(struct mnic_cq *cq)
{
	int err;

	if (!cq)
		return -EINVAL;
	/* ibv_destroy_cq waits for every event to be acknowledged */
	if (cq->channel && cq->events_got != cq->events_acked)
		return mnic_set_err(cq->dev, MNIC_ERR_ARG, -EBUSY);
	err = handle_cmd(cq->dev, MNIC_CMD_DESTROY_CQ, cq->handle);
	if (err == 0) {
		mnic_comp_channel_unlink(cq);
		mnic_mem_release(cq->dev, MNIC_OBJ_CQ, cq->handle);
		free(cq);
	}
	return err;
}

int mnic_create_srq(struct mnic_pd *pd, uint32_t max_wr, uint32_t max_sge, uint32_t srq_limit,
		    struct mnic_srq **out)
{
	struct mnic_cmd_create_srq_in in;
	struct mnic_srq *srq;
	int err;

	if (!pd || !out)
		return -EINVAL;
	if (max_wr == 0 || max_wr > 65536 || max_sge == 0 || max_sge > MNIC_MAX_SGE)
		return mnic_set_err(pd->dev, MNIC_ERR_ARG, -EINVAL);
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return mnic_set_err(pd->dev, MNIC_ERR_ARG, -ENOMEM);
	err = alloc_queue(pd->dev, pow2_at_least(max_wr), MNIC_WQE_SIZE, &srq->q);
	if (err < 0)
		goto fail;
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_CREATE_SRQ;
	in.pd = pd->handle;
	in.max_sge = max_sge;
	in.srq_limit = srq_limit;
	in.q = srq->q;
	err = create_cmd(pd->dev, &in, sizeof(in), &srq->handle);
	if (err < 0)
		goto fail;
	bind_queue(pd->dev, &srq->q, MNIC_OBJ_SRQ, srq->handle);
	srq->dev = pd->dev;
	srq->pd = pd;
	srq->max_sge = max_sge;
	srq->srq_limit = srq_limit;
	*out = srq;
	return 0;
fail:
	free_queue(pd->dev, &srq->q);
	free(srq);
	return err;
}

int mnic_modify_srq(struct mnic_srq *srq, uint32_t srq_limit)
{
	struct mnic_cmd_modify_srq_in in;
	struct mnic_cmd_simple_out out;
	int err;

	if (!srq)
		return -EINVAL;
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_MODIFY_SRQ;
	in.srq = srq->handle;
	in.srq_limit = srq_limit;
	err = mnic_cmd(srq->dev, &in, sizeof(in), &out, sizeof(out), NULL);
	if (err == 0)
		srq->srq_limit = srq_limit;
	return err;
}

int mnic_destroy_srq(struct mnic_srq *srq)
{
	int err;

	if (!srq)
		return -EINVAL;
	err = handle_cmd(srq->dev, MNIC_CMD_DESTROY_SRQ, srq->handle);
	if (err == 0) {
		mnic_mem_release(srq->dev, MNIC_OBJ_SRQ, srq->handle);
		free(srq);
	}
	return err;
}

int mnic_create_qp(struct mnic_qp_init_attr *a, struct mnic_qp **out)
{
	struct mnic_cmd_create_qp_in in;
	struct mnic_dev *dev;
	struct mnic_qp *qp;
	int err;

	if (!a || !out || !a->pd || !a->send_cq || !a->recv_cq)
		return -EINVAL;
	dev = a->pd->dev;
	if (a->send_cq->dev != dev || a->recv_cq->dev != dev || (a->srq && a->srq->dev != dev) ||
	    a->max_send_wr == 0 || a->max_send_wr > 65536 || a->max_recv_wr > 65536 ||
	    (a->srq && a->max_recv_wr) || a->max_send_sge > MNIC_MAX_SGE ||
	    a->max_recv_sge > MNIC_MAX_SGE)
		return mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	err = alloc_queue(dev, pow2_at_least(a->max_send_wr), MNIC_WQE_SIZE, &qp->sq);
	if (err < 0)
		goto fail;
	if (!a->srq && a->max_recv_wr) {
		err = alloc_queue(dev, pow2_at_least(a->max_recv_wr), MNIC_WQE_SIZE, &qp->rq);
		if (err < 0)
			goto fail;
	}
	qp->sig_fifo = calloc(qp->sq.size, sizeof(uint32_t));
	if (!qp->sig_fifo) {
		err = mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
		goto fail;
	}
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_CREATE_QP;
	in.pd = a->pd->handle;
	in.send_cq = a->send_cq->handle;
	in.recv_cq = a->recv_cq->handle;
	in.srq = a->srq ? a->srq->handle : MNIC_NO_SRQ;
	in.max_send_sge = a->max_send_sge;
	in.max_recv_sge = a->max_recv_sge;
	in.sq_sig_all = a->sq_sig_all ? 1 : 0;
	in.sq = qp->sq;
	in.rq = qp->rq;
	err = create_cmd(dev, &in, sizeof(in), &qp->qp_num);
	if (err < 0)
		goto fail;
	if (qp->qp_num > 0xffffffu) {
		/* the NIC may hold a QP on these rings: keep them, lose only the struct */
		err = mnic_reply_err(dev);
		free(qp->sig_fifo);
		free(qp);
		return err;
	}
	bind_queue(dev, &qp->sq, MNIC_OBJ_QP, qp->qp_num);
	bind_queue(dev, &qp->rq, MNIC_OBJ_QP, qp->qp_num);
	qp->dev = dev;
	qp->pd = a->pd;
	qp->send_cq = a->send_cq;
	qp->recv_cq = a->recv_cq;
	qp->srq = a->srq;
	qp->max_send_sge = a->max_send_sge;
	qp->max_recv_sge = a->max_recv_sge;
	qp->sq_sig_all = a->sq_sig_all ? 1 : 0;
	mnic_track_qp(dev, qp, 1);
	*out = qp;
	return 0;
fail:
	free_queue(dev, &qp->sq);
	free_queue(dev, &qp->rq);
	free(qp->sig_fifo);
	free(qp);
	return err;
}

int mnic_modify_qp(struct mnic_qp *qp, const struct mnic_qp_attr *attr, uint32_t attr_mask)
{
	struct mnic_cmd_modify_qp_in in;
	struct mnic_cmd_simple_out out;

	if (!qp || !attr)
		return -EINVAL;
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_MODIFY_QP;
	in.qpn = qp->qp_num;
	in.attr_mask = attr_mask;
	in.attr = *attr;
	return mnic_cmd(qp->dev, &in, sizeof(in), &out, sizeof(out), NULL);
}

int mnic_query_qp(struct mnic_dev *dev, uint32_t qpn, struct mnic_cmd_query_qp_out *out)
{
	struct mnic_cmd_handle_in in = {.hdr = {.opcode = MNIC_CMD_QUERY_QP}, .handle = qpn};
	int err;

	if (!dev || !out)
		return -EINVAL;
	err = mnic_cmd(dev, &in, sizeof(in), out, sizeof(*out), NULL);
	if (err < 0)
		return err;
	if (out->attr.qp_state > MNIC_QPS_ERR || out->attr.path_mtu > 5)
		return mnic_reply_err(dev);
	return 0;
}

int mnic_destroy_qp(struct mnic_qp *qp)
{
	int err;

	if (!qp)
		return -EINVAL;
	err = handle_cmd(qp->dev, MNIC_CMD_DESTROY_QP, qp->qp_num);
	if (err == 0) {
		mnic_mem_release(qp->dev, MNIC_OBJ_QP, qp->qp_num);
		mnic_track_qp(qp->dev, qp, 0);
		free(qp->sig_fifo);
		free(qp);
	}
	return err;
}

void mnic_track_qp_forget(struct mnic_dev *dev, struct mnic_qp *qp)
{
	if (!dev || !qp)
		return;
	mnic_track_qp(dev, qp, 0);
	free(qp->sig_fifo);
	free(qp);
}

int mnic_set_qp_mig_key(struct mnic_qp *qp, const uint8_t key[16])
{
	struct mnic_cmd_set_qp_mig_key_in in;
	struct mnic_cmd_simple_out out;

	if (!qp || !key)
		return -EINVAL;
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_SET_QP_MIG_KEY;
	in.qpn = qp->qp_num;
	memcpy(in.key, key, sizeof(in.key));
	return mnic_cmd(qp->dev, &in, sizeof(in), &out, sizeof(out), NULL);
}

/* IBA 10.3.1 / ibv_rc_pingpong's sequence: INIT, RTR, RTS. */
int mnic_connect_rc(struct mnic_qp *qp, const struct mnic_rc_connect *c)
{
	struct mnic_qp_attr a;
	uint8_t rd = c->max_rd_atomic ? c->max_rd_atomic : 1;
	int err;

	if (!qp || !c)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	a.qp_state = MNIC_QPS_INIT;
	a.pkey_index = 0;
	a.qp_access_flags = c->access;
	err = mnic_modify_qp(qp, &a, MNIC_QP_STATE | MNIC_QP_PKEY_INDEX | MNIC_QP_PORT |
					     MNIC_QP_ACCESS_FLAGS);
	if (err < 0)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = MNIC_QPS_RTR;
	a.path_mtu = c->path_mtu ? c->path_mtu : 3;
	a.dest_qp_num = c->dest_qp_num;
	a.rq_psn = c->rq_psn;
	a.max_dest_rd_atomic = rd;
	a.min_rnr_timer = 12;
	memcpy(a.dgid, c->dgid, sizeof(a.dgid));
	a.sgid_index = c->sgid_index;
	memcpy(a.dmac, c->dmac, 6);
	a.ttl = 64;
	err = mnic_modify_qp(qp, &a, MNIC_QP_STATE | MNIC_QP_AV | MNIC_QP_PATH_MTU |
					     MNIC_QP_DEST_QPN | MNIC_QP_RQ_PSN |
					     MNIC_QP_MAX_DEST_RD_ATOMIC | MNIC_QP_MIN_RNR_TIMER);
	if (err < 0)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = MNIC_QPS_RTS;
	/* 4.096 us * 2^14 = 67 ms per try.  retry_cnt 7 is seven retries
	 * (IBA; the firmware spends one per recovery round without
	 * progress): a peer that is gone ends in RETRY_EXC_ERR after about
	 * 0.5 s.  rnr_retry 7 is infinite. */
	a.timeout = c->timeout ? c->timeout : 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = c->sq_psn;
	a.max_rd_atomic = rd;
	return mnic_modify_qp(qp, &a, MNIC_QP_STATE | MNIC_QP_TIMEOUT | MNIC_QP_RETRY_CNT |
					      MNIC_QP_RNR_RETRY | MNIC_QP_SQ_PSN |
					      MNIC_QP_MAX_QP_RD_ATOMIC);
}

/* For event.c (completion channels), which builds its EQ as a CQ. */
int mnic_queue_alloc(struct mnic_dev *dev, uint32_t entries, uint32_t esize,
		     struct mnic_queue_desc *q)
{
	return alloc_queue(dev, entries, esize, q);
}

void mnic_queue_free(struct mnic_dev *dev, struct mnic_queue_desc *q)
{
	free_queue(dev, q);
}

void mnic_queue_bind(struct mnic_dev *dev, const struct mnic_queue_desc *q,
		     enum mnic_obj_kind kind, uint32_t handle)
{
	bind_queue(dev, q, kind, handle);
}

int mnic_create_cmd(struct mnic_dev *dev, const void *in, uint32_t in_len, uint32_t *handle)
{
	return create_cmd(dev, in, in_len, handle);
}

int mnic_handle_cmd(struct mnic_dev *dev, uint16_t opcode, uint32_t handle)
{
	return handle_cmd(dev, opcode, handle);
}
