// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: the RDMA device's queue pairs (IBA 10.2.4, 11.2.5) and address
 * handles.  RC only (the engine's one transport).  The SQ and RQ rings and
 * their doorbell records are in one buffer of the application's memory
 * (mnic/ib_abi.h struct mnic_ib_create_qp_req), pinned into one MTT
 * (mnic_ib_mr.c); the provider writes WQEs and producer indices there and
 * rings db_seq (mnic/queues.h).  modify_qp and query_qp translate between
 * ib_qp_attr and the command interface's struct mnic_qp_attr (values as
 * verbs): the address vector of a RoCEv2 QP (IBA annex A17.4) is the
 * GRH's destination GID (IPv4-mapped, RFC 4291 2.5.5.2, for RoCEv2 over
 * IPv4, else an IPv6 address), its source GID index (the core's table,
 * which mnic_netdev.c mirrors into the firmware's at the same indices),
 * hop limit, traffic class, flow label and the destination MAC, which
 * the core resolved before the op is called (ib_resolve_eth_dmac).
 */
#include <linux/inet.h>
#include <net/ipv6.h>

#include "mnic_ib.h"

/* The attributes the engine takes (rocev2/qp.c QP_MASK_KNOWN; the
 * command's attr_mask has the ibv_qp_attr_mask = IB_QP_* values). */
#define MNIC_IB_QP_MASK (IB_QP_STATE | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | IB_QP_PORT |    \
			 IB_QP_AV | IB_QP_PATH_MTU | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |           \
			 IB_QP_RNR_RETRY | IB_QP_RQ_PSN | IB_QP_MAX_QP_RD_ATOMIC |               \
			 IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |         \
			 IB_QP_DEST_QPN)

static bool pow2_in(u32 v, u32 min, u32 max)
{
	return v && is_power_of_2(v) && v >= min && v <= max;
}

/* The request's buffer layout (mnic/ib_abi.h), every bound with >=. */
static bool qp_req_ok(const struct mnic_ib_dev *ib, const struct mnic_ib_create_qp_req *r,
		      const struct ib_qp_cap *cap)
{
	u64 sq_len = (u64)r->sq_entries * MNIC_WQE_SIZE;
	u64 rq_end = (u64)r->rq_off + (u64)r->rq_entries * MNIC_WQE_SIZE;
	u64 rec = sizeof(struct mnic_dbrec);

	if (r->reserved || !pow2_in(r->sq_entries, max(cap->max_send_wr, 1u), ib->max_qp_wr) ||
	    !pow2_in(r->rq_entries, max(cap->max_recv_wr, 1u), ib->max_qp_wr))
		return false;
	if (!r->buf_len || !PAGE_ALIGNED(r->buf_addr) || !PAGE_ALIGNED(r->buf_len) ||
	    r->buf_addr + r->buf_len < r->buf_addr)
		return false;
	if (r->rq_off % MNIC_WQE_SIZE || r->rq_off < sq_len || rq_end > r->buf_len)
		return false;
	if (r->sq_dbrec_off % rec || r->rq_dbrec_off % rec || r->sq_dbrec_off < rq_end ||
	    r->rq_dbrec_off < rq_end || r->sq_dbrec_off == r->rq_dbrec_off ||
	    (u64)r->sq_dbrec_off + rec > r->buf_len || (u64)r->rq_dbrec_off + rec > r->buf_len)
		return false;
	return true;
}

int mnic_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init, struct ib_udata *udata)
{
	struct mnic_ib_dev *ib = to_mib(ibqp->device);
	struct mnic_kdev *d = ib->d;
	struct mnic_ib_qp *qp = to_mqp(ibqp);
	struct mnic_ib_create_qp_req req;
	struct mnic_ib_create_qp_resp resp = { 0 };
	struct mnic_cmd_create_qp_in in = { .hdr = { .opcode = MNIC_CMD_CREATE_QP } };
	struct mnic_cmd_handle_out out;
	struct mnic_ib_create_tail tail;
	struct mnic_ib_ucontext *uc;
	u64 buf;
	int ret;

	if (!udata) {
		mnic_count(d, MNIC_KCNT_ib_refused_kernel);
		return -EOPNOTSUPP;
	}
	/* RC with its own RQ, no inline data, no creation flags; SGE counts
	 * within a WQE's room (mnic/queues.h). */
	if (init->qp_type != IB_QPT_RC || init->srq || init->create_flags ||
	    init->cap.max_inline_data > MNIC_MAX_INLINE || init->cap.max_send_sge > ib->max_sge ||
	    init->cap.max_recv_sge > ib->max_sge || !init->send_cq || !init->recv_cq) {
		mnic_count(d, MNIC_KCNT_ib_refused_qp_attr);
		return -EOPNOTSUPP;
	}
	ret = mnic_ib_udata_tail(d, udata, &req, sizeof(req), &tail);
	if (ret)
		return ret;
	if (!qp_req_ok(ib, &req, &init->cap)) {
		mnic_count(d, MNIC_KCNT_ib_refused_udata);
		return -EINVAL;
	}
	uc = udata_muc(udata);
	qp->uc = uc;
	qp->req = req;
	buf = req.buf_addr;
	qp->max_send_sge = max(init->cap.max_send_sge, 1u);
	qp->max_recv_sge = max(init->cap.max_recv_sge, 1u);
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	if (tail.handle) {
		/* a restore's: the image's QP (in its restored state) on these
		 * rings, pinned by RESUME */
		struct mnic_ib_mig_claim c = {
			.kind = MNIC_IB_OBJ_QP, .handle = tail.handle, .addr = buf,
			.len = req.buf_len, .iova = buf, .pd = to_mpd(ibqp->pd)->pdn,
			.send_cq = to_mcq(init->send_cq)->handle,
			.recv_cq = to_mcq(init->recv_cq)->handle,
			.rq_ring = buf + req.rq_off, .sq_entries = req.sq_entries,
			.rq_entries = req.rq_entries,
		};

		ret = mnic_ib_mig_claim(ib, uc, &c, IB_ACCESS_LOCAL_WRITE, &qp->mem);
		if (ret)
			goto err;
		out.handle = tail.handle;
		goto made;
	}
	ret = mnic_ib_umem_get(ib, uc, req.buf_addr, req.buf_len, req.buf_addr,
			       IB_ACCESS_LOCAL_WRITE, &qp->mem);
	if (ret)
		goto err;
	in.hdr.ctx = uc->fw.ctx;
	in.pd = to_mpd(ibqp->pd)->pdn;
	in.send_cq = to_mcq(init->send_cq)->handle;
	in.recv_cq = to_mcq(init->recv_cq)->handle;
	in.srq = MNIC_NO_SRQ;
	in.max_send_sge = qp->max_send_sge;
	in.max_recv_sge = qp->max_recv_sge;
	in.sq_sig_all = qp->sig_all;
	in.sq = (struct mnic_queue_desc){
		.ring_addr = buf, .dbrec_addr = buf + req.sq_dbrec_off, .size = req.sq_entries,
		.ring_mtt = qp->mem.mtt, .dbrec_mtt = qp->mem.mtt,
	};
	in.rq = (struct mnic_queue_desc){
		.ring_addr = buf + req.rq_off, .dbrec_addr = buf + req.rq_dbrec_off,
		.size = req.rq_entries, .ring_mtt = qp->mem.mtt, .dbrec_mtt = qp->mem.mtt,
	};
	ret = mnic_ib_cmd(ib, &in, sizeof(in), &out, sizeof(out));
	if (ret)
		goto err_umem;
made:
	qp->qpn = out.handle;
	mnic_ib_obj_add(uc, &qp->obj, MNIC_IB_OBJ_QP);
	qp->sq_entries = req.sq_entries;
	qp->rq_entries = req.rq_entries;
	ibqp->qp_num = qp->qpn;
	/* What the QP holds (the core returns it to ibv_create_qp) */
	init->cap.max_send_wr = qp->sq_entries;
	init->cap.max_recv_wr = qp->rq_entries;
	init->cap.max_send_sge = qp->max_send_sge;
	init->cap.max_recv_sge = qp->max_recv_sge;
	init->cap.max_inline_data = MNIC_MAX_INLINE;
	resp.qpn = qp->qpn;
	resp.sq_entries = qp->sq_entries;
	resp.rq_entries = qp->rq_entries;
	resp.max_sge = ib->max_sge;
	ret = mnic_ib_udata_resp(udata, &resp, sizeof(resp));
	if (ret)
		goto err_qp;
	mnic_count(d, MNIC_KCNT_ib_qp);
	return 0;

err_qp:
	mnic_ib_destroy_qp(ibqp, udata);
	mnic_count(d, MNIC_KCNT_ib_qp_failed);
	return ret;
err_umem:
	mnic_ib_umem_put(ib, uc, &qp->mem, true);
err:
	mnic_count(d, MNIC_KCNT_ib_qp_failed);
	return ret;
}

/* A RoCEv2 address vector (IBA A17.4.1): a GRH and a RoCEv2 source GID
 * entry; the firmware checks the values (a unicast GID, the index in its
 * table).  0 or -EINVAL. */
static int av_to_fw(const struct rdma_ah_attr *ah, struct mnic_qp_attr *a)
{
	const struct ib_global_route *grh;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE || !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (grh->sgid_attr && grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	if (grh->sgid_index >= MNIC_GID_TBL_LEN)
		return -EINVAL;
	memcpy(a->dgid, grh->dgid.raw, sizeof(a->dgid));
	a->sgid_index = grh->sgid_index;
	a->flow_label = grh->flow_label;
	memcpy(a->dmac, ah->roce.dmac, ETH_ALEN);
	a->ttl = grh->hop_limit;
	a->tos = grh->traffic_class;
	return 0;
}

int mnic_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_udata *udata)
{
	struct mnic_ib_dev *ib = to_mib(ibqp->device);
	struct mnic_kdev *d = ib->d;
	struct mnic_ib_qp *qp = to_mqp(ibqp);
	struct mnic_cmd_modify_qp_in in = {
		.hdr = { .opcode = MNIC_CMD_MODIFY_QP, .ctx = qp->uc->fw.ctx },
		.qpn = qp->qpn, .attr_mask = mask,
	};
	struct mnic_qp_attr *a = &in.attr;
	struct mnic_cmd_simple_out out;
	int ret;

	ret = mnic_ib_udata_none(d, udata);
	if (ret)
		return ret;
	if ((mask & ~MNIC_IB_QP_MASK) || ((mask & IB_QP_PORT) && attr->port_num != MNIC_IB_PORT)) {
		mnic_count(d, MNIC_KCNT_ib_refused_qp_attr);
		return -EOPNOTSUPP;
	}
	if ((mask & IB_QP_AV) && av_to_fw(&attr->ah_attr, a)) {
		mnic_count(d, MNIC_KCNT_ib_refused_qp_attr);
		return -EINVAL;
	}
	/* The engine range-checks the values (rocev2/qp.c); the narrowing
	 * below loses nothing it would take. */
	a->qp_state = attr->qp_state;
	a->path_mtu = attr->path_mtu;
	a->qp_access_flags = attr->qp_access_flags;
	a->rq_psn = attr->rq_psn;
	a->sq_psn = attr->sq_psn;
	a->dest_qp_num = attr->dest_qp_num;
	a->timeout = attr->timeout;
	a->retry_cnt = attr->retry_cnt;
	a->rnr_retry = attr->rnr_retry;
	a->min_rnr_timer = attr->min_rnr_timer;
	a->max_rd_atomic = attr->max_rd_atomic;
	a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	a->pkey_index = attr->pkey_index;
	return mnic_ib_cmd(ib, &in, sizeof(in), &out, sizeof(out));
}

int mnic_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init)
{
	struct mnic_ib_dev *ib = to_mib(ibqp->device);
	struct mnic_ib_qp *qp = to_mqp(ibqp);
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = MNIC_CMD_QUERY_QP, .ctx = qp->uc->fw.ctx }, .handle = qp->qpn,
	};
	struct mnic_cmd_query_qp_out out;
	const struct mnic_qp_attr *a = &out.attr;
	static const u8 no_gid[sizeof(a->dgid)];
	int ret;

	ret = mnic_ib_cmd(ib, &in, sizeof(in), &out, sizeof(out));
	if (ret)
		return ret;
	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = a->qp_state;
	attr->cur_qp_state = a->cur_qp_state;
	attr->path_mtu = a->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qp_access_flags = a->qp_access_flags;
	attr->rq_psn = a->rq_psn;
	attr->sq_psn = a->sq_psn;
	attr->dest_qp_num = a->dest_qp_num;
	attr->pkey_index = a->pkey_index;
	attr->port_num = MNIC_IB_PORT;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->cap.max_send_wr = qp->sq_entries;
	attr->cap.max_recv_wr = qp->rq_entries;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->max_recv_sge;
	attr->cap.max_inline_data = MNIC_MAX_INLINE;
	if (memcmp(a->dgid, no_gid, sizeof(no_gid)) != 0) {
		attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(&attr->ah_attr, MNIC_IB_PORT);
		rdma_ah_set_grh(&attr->ah_attr, (union ib_gid *)out.attr.dgid, a->flow_label,
				a->sgid_index, a->ttl, a->tos);
		memcpy(attr->ah_attr.roce.dmac, a->dmac, ETH_ALEN);
	}
	init->qp_type = IB_QPT_RC;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/* Never fails (also with traffic running: the firmware stops the QP and
 * its DMA before it answers); a QP the firmware did not destroy goes with
 * its context, its rings stay pinned until then. */
int mnic_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct mnic_ib_dev *ib = to_mib(ibqp->device);
	struct mnic_ib_qp *qp = to_mqp(ibqp);
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = MNIC_CMD_DESTROY_QP, .ctx = qp->uc->fw.ctx }, .handle = qp->qpn,
	};
	struct mnic_cmd_simple_out out;
	bool ok;

	mnic_ib_obj_del(qp->uc, &qp->obj);
	ok = mnic_ib_destroy_cmd(ib, &in, sizeof(in), &out, sizeof(out)) == 0;
	mnic_ib_umem_put(ib, qp->uc, &qp->mem, ok);
	return 0;
}

/* An AH holds a RoCEv2 address vector (the core resolved the MAC); the
 * engine has no AH objects (no UD), so nothing reaches the firmware.  A
 * vector the engine could not send to is refused here already. */
int mnic_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init, struct ib_udata *udata)
{
	struct mnic_ib_ah *ah = container_of(ibah, struct mnic_ib_ah, ibah);
	struct mnic_kdev *d = to_mib(ibah->device)->d;
	int ret;

	ret = mnic_ib_udata_none(d, udata);
	if (ret)
		return ret;
	if (av_to_fw(init->ah_attr, &ah->av)) {
		mnic_count(d, MNIC_KCNT_ib_refused_ah);
		return -EINVAL;
	}
	if (udata) {
		ah->uc = udata_muc(udata);
		atomic_inc(&ah->uc->n_ah);
	}
	mnic_count(d, MNIC_KCNT_ib_ah);
	return 0;
}

int mnic_ib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct mnic_ib_ah *ah = container_of(ibah, struct mnic_ib_ah, ibah);

	if (ah->uc)
		atomic_dec(&ah->uc->n_ah);
	return 0;
}
