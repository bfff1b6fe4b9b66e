// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: the RDMA device's completion queues (IBA 11.2.8).  The CQE ring
 * and its doorbell record are in the application's memory (one buffer,
 * mnic/ib_abi.h struct mnic_ib_create_cq_req), pinned into one MTT
 * (mnic_ib_mr.c); CREATE_CQ names both through it.  The provider polls
 * the ring and writes the consumer index and arm word itself
 * (mnic/queues.h): the module creates, resizes and destroys.
 *
 * Resize (IBA 11.2.8.3): the provider, which stopped polling the CQ, hands
 * a new buffer laid out as at creation; it is pinned into its own MTT,
 * RESIZE_CQ moves the CQ there with its unconsumed CQEs (the firmware
 * only reads the old ring), and the old buffer is unpinned once the
 * firmware answered.  A refusal (fewer entries than CQEs outstanding:
 * -ENOSPC) leaves the CQ on its old ring.
 *
 * Not served: kernel CQs, creation flags.  A CQ created with a completion channel is bound to its
 * ucontext's EQ (mnic_ib_eq.c): its events reach the channel.
 */
#include "mnic_ib.h"

/* The request's buffer layout (mnic/ib_abi.h), every bound with >=. */
static bool cq_req_ok(const struct mnic_ib_dev *ib, const struct mnic_ib_create_cq_req *r,
		      u32 cqe)
{
	u64 ring_len = (u64)r->entries * MNIC_CQE_SIZE;

	if (!r->entries || !is_power_of_2(r->entries) || r->entries < cqe ||
	    r->entries > ib->max_cqe)
		return false;
	if (!r->buf_len || !PAGE_ALIGNED(r->buf_addr) || !PAGE_ALIGNED(r->buf_len) ||
	    r->buf_addr + r->buf_len < r->buf_addr)
		return false;
	if (ring_len >= r->buf_len || r->dbrec_off % sizeof(struct mnic_dbrec) ||
	    r->dbrec_off < ring_len || (u64)r->dbrec_off + sizeof(struct mnic_dbrec) > r->buf_len)
		return false;
	return true;
}

/* The request of create_cq (with its optional tail: tail given) and of
 * resize_cq (none: tail NULL), the same buffer layout: read and checked,
 * refusals counted. */
static int cq_req_get(struct mnic_ib_dev *ib, struct ib_udata *udata, u32 cqe,
		      struct mnic_ib_create_cq_req *req, struct mnic_ib_create_tail *tail)
{
	int ret = tail ? mnic_ib_udata_tail(ib->d, udata, req, sizeof(*req), tail) :
			 mnic_ib_udata_req(ib->d, udata, req, sizeof(*req));

	if (ret)
		return ret;
	if (!cq_req_ok(ib, req, cqe)) {
		mnic_count(ib->d, MNIC_KCNT_ib_refused_udata);
		return -EINVAL;
	}
	return 0;
}

/* The ring and record of a checked request, both in the buffer's MTT. */
static struct mnic_queue_desc cq_desc(const struct mnic_ib_create_cq_req *req, u32 mtt)
{
	return (struct mnic_queue_desc){
		.ring_addr = req->buf_addr, .dbrec_addr = req->buf_addr + req->dbrec_off,
		.size = req->entries, .ring_mtt = mtt, .dbrec_mtt = mtt,
	};
}

int mnic_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata)
{
	struct mnic_ib_dev *ib = to_mib(ibcq->device);
	struct mnic_kdev *d = ib->d;
	struct mnic_ib_cq *cq = to_mcq(ibcq);
	struct mnic_ib_create_cq_req req;
	struct mnic_ib_create_cq_resp resp = { 0 };
	struct mnic_cmd_create_cq_in in = { .hdr = { .opcode = MNIC_CMD_CREATE_CQ } };
	struct mnic_cmd_handle_out out;
	struct mnic_ib_create_tail tail;
	struct mnic_ib_ucontext *uc;
	int ret;

	if (!udata) {
		mnic_count(d, MNIC_KCNT_ib_refused_kernel);
		return -EOPNOTSUPP;
	}
	if (attr->flags) {
		mnic_count(d, MNIC_KCNT_ib_refused_qp_attr);
		return -EOPNOTSUPP;
	}
	ret = cq_req_get(ib, udata, attr->cqe, &req, &tail);
	if (ret)
		return ret;
	uc = udata_muc(udata);
	cq->uc = uc;
	cq->req = req;
	cq->cqe = attr->cqe;
	cq->comp_fd = tail.comp_fd;
	mutex_init(&cq->resize_lock);
	if (tail.handle) {
		/* a restore's: the image's CQ on this ring, pinned by RESUME */
		struct mnic_ib_mig_claim c = {
			.kind = MNIC_IB_OBJ_CQ, .handle = tail.handle, .addr = req.buf_addr,
			.len = req.buf_len, .iova = req.buf_addr, .cq_entries = req.entries,
			.dbrec = req.buf_addr + req.dbrec_off,
		};

		ret = mnic_ib_mig_claim(ib, uc, &c, IB_ACCESS_LOCAL_WRITE, &cq->mem);
		if (ret)
			goto err;
		cq->handle = tail.handle;
	} else {
		ret = mnic_ib_umem_get(ib, uc, req.buf_addr, req.buf_len, req.buf_addr,
				       IB_ACCESS_LOCAL_WRITE, &cq->mem);
		if (ret)
			goto err;
		in.hdr.ctx = uc->fw.ctx;
		in.q = cq_desc(&req, cq->mem.mtt);
		ret = mnic_ib_cmd(ib, &in, sizeof(in), &out, sizeof(out));
		if (ret)
			goto err_umem;
		cq->handle = out.handle;
	}
	cq->entries = req.entries;
	ibcq->cqe = req.entries;
	mnic_ib_obj_add(uc, &cq->obj, MNIC_IB_OBJ_CQ);
	/* with a completion channel: its events (mnic_ib_eq.c) */
	ret = mnic_ib_eq_bind(ib, cq);
	if (ret)
		goto err_cq;
	resp.cq_handle = cq->handle;
	resp.entries = cq->entries;
	ret = mnic_ib_udata_resp(udata, &resp, sizeof(resp));
	if (ret)
		goto err_cq;
	mnic_count(d, MNIC_KCNT_ib_cq);
	return 0;

err_cq:
	mnic_ib_destroy_cq(ibcq, udata);
	mnic_count(d, MNIC_KCNT_ib_cq_failed);
	return ret;
err_umem:
	mnic_ib_umem_put(ib, uc, &cq->mem, true);
err:
	mnic_count(d, MNIC_KCNT_ib_cq_failed);
	return ret;
}

int mnic_ib_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct mnic_ib_dev *ib = to_mib(ibcq->device);
	struct mnic_kdev *d = ib->d;
	struct mnic_ib_cq *cq = to_mcq(ibcq);
	struct mnic_ib_create_cq_req req;
	struct mnic_ib_resize_cq_resp resp = { 0 };
	struct mnic_cmd_resize_cq_in in = { .hdr = { .opcode = MNIC_CMD_RESIZE_CQ } };
	struct mnic_cmd_handle_out out;
	struct mnic_ib_umem mem, old;
	int ret;

	if (!udata) {
		mnic_count(d, MNIC_KCNT_ib_refused_kernel);
		return -EOPNOTSUPP;
	}
	if (cqe < 1) {
		mnic_count(d, MNIC_KCNT_ib_refused_udata);
		return -EINVAL;
	}
	ret = cq_req_get(ib, udata, cqe, &req, NULL);
	if (ret)
		return ret;
	/* ib_uverbs holds the CQ for reading only: two resizes may meet */
	mutex_lock(&cq->resize_lock);
	ret = mnic_ib_umem_get(ib, cq->uc, req.buf_addr, req.buf_len, req.buf_addr,
			       IB_ACCESS_LOCAL_WRITE, &mem);
	if (ret)
		goto out;
	in.hdr.ctx = cq->uc->fw.ctx;
	in.cq = cq->handle;
	in.q = cq_desc(&req, mem.mtt);
	ret = mnic_ib_cmd(ib, &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		/* the firmware answered no: it never used the new MTT */
		mnic_ib_umem_put(ib, cq->uc, &mem, ret != -ETIMEDOUT);
		goto out;
	}
	old = cq->mem;
	cq->mem = mem;
	cq->req = req;
	cq->entries = req.entries;
	ibcq->cqe = req.entries;
	mnic_ib_umem_put(ib, cq->uc, &old, true);
	resp.entries = req.entries;
	resp.moved = out.handle;
	mnic_count(d, MNIC_KCNT_ib_cq_resize);
	ret = mnic_ib_udata_resp(udata, &resp, sizeof(resp));
out:
	mutex_unlock(&cq->resize_lock);
	if (ret)
		mnic_count(d, MNIC_KCNT_ib_cq_resize_failed);
	return ret;
}

/* Never fails: a CQ the firmware did not destroy goes with its context,
 * its ring stays pinned until then (mnic_ib_umem_put). */
int mnic_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mnic_ib_dev *ib = to_mib(ibcq->device);
	struct mnic_ib_cq *cq = to_mcq(ibcq);
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = MNIC_CMD_DESTROY_CQ, .ctx = cq->uc->fw.ctx }, .handle = cq->handle,
	};
	struct mnic_cmd_simple_out out;
	bool ok;

	mnic_ib_obj_del(cq->uc, &cq->obj);
	/* no event reaches the CQ from here on */
	if (cq->bound)
		mnic_ib_eq_unbind(cq);
	ok = mnic_ib_destroy_cmd(ib, &in, sizeof(in), &out, sizeof(out)) == 0;
	mnic_ib_umem_put(ib, cq->uc, &cq->mem, ok);
	return 0;
}
