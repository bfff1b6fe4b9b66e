// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: the RDMA device.  Every bound NIC is also an ib_device mnicN
 * (ib_core), so that ib_uverbs gives user space /dev/infiniband/uverbsN and
 * an rdma-core provider can drive it; /dev/mnicN stays for mnicctl.
 *
 * A user-space data path, as efa has it: no kernel verbs (no post/poll
 * ops, so the core leaves kverbs_provider clear and no kernel client such
 * as the MAD layer binds), the rings and doorbells will be mapped into the
 * application.  RoCEv2 on an Ethernet port (IBA vol. 1 annex A17): node
 * type CA, one port, link layer Ethernet, RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
 * the core keeps the RoCE GID table (no netdev yet: it stays empty).
 *
 * What is served in this step: query_device (the firmware's QUERY_DEVICE),
 * query_port (state from the firmware), get_port_immutable,
 * get_link_layer, query_pkey, get_dev_fw_str, alloc/dealloc_ucontext (a
 * firmware context per ucontext, mnic_ctx.c), alloc/dealloc_pd
 * (ALLOC_PD/DEALLOC_PD in that context).  mmap is refused (-EINVAL; the
 * core calls the op without a NULL check, so it must exist); CQ, QP, MR
 * and AH ops are NULL: ib_uverbs then answers -EOPNOTSUPP
 * (docs/kernel-driver.md "RDMA device").
 *
 * Lifetime: registered last in probe (after /dev/mnicN), unregistered
 * first in remove, while the command queue still runs.  Unregistering
 * disassociates the ucontexts still open: the core destroys their PDs and
 * the contexts themselves through the ops below, so the firmware keeps
 * nothing of them; the files stay open and get -EIO.  Those commands are
 * bounded (2 s), and once the firmware failed one the rest are skipped.
 */
#include <linux/etherdevice.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/slab.h>

#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "mnic.h"

/* The driver's uverbs ABI (the provider's match table checks it). */
#define MNIC_IB_UVERBS_ABI_VERSION 1
#define MNIC_IB_PORT               1
/* The RoCE GID table the core keeps (IPv4 and IPv6 addresses of the
 * netdev, later; one RoCEv2 entry each). */
#define MNIC_IB_GID_TBL_LEN        16
#define MNIC_IB_PKEY_DEFAULT       0xffff   /* IBA 10.9.1.2: the full-member default P_Key */
/* The module's commands for a uverbs call: bounded, so that a firmware
 * that stopped answering fails the call instead of holding it. */
#define MNIC_IB_CMD_TIMEOUT_MS     10000u
#define MNIC_PCI_DEVICE_IVSHMEM    0x1110

struct mnic_ib_dev {
	struct ib_device ibdev;            /* first: ib_alloc_device */
	struct mnic_kdev *d;
	u32 max_msg;                       /* QUERY_DEVICE at registration */
	/* Unregistration destroys the objects of the files still open: after
	 * the first of its commands that fails the firmware is taken as gone
	 * and the rest are only counted (as remove does for open files). */
	bool unregistering;
	bool fw_gone;
};

struct mnic_ib_ucontext {
	struct ib_ucontext ibuc;
	struct mnic_fwctx fw;              /* its firmware context and range */
};

struct mnic_ib_pd {
	struct ib_pd ibpd;
	u16 ctx;                           /* the context it was allocated in */
	u32 pdn;
};

static struct mnic_ib_dev *to_mib(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mnic_ib_dev, ibdev);
}

static struct mnic_ib_ucontext *to_muc(struct ib_ucontext *uc)
{
	return container_of(uc, struct mnic_ib_ucontext, ibuc);
}

static struct mnic_ib_pd *to_mpd(struct ib_pd *pd)
{
	return container_of(pd, struct mnic_ib_pd, ibpd);
}

/* A failed command during unregistration: was it the firmware that
 * failed (no answer, or no longer READY), not the command? */
static void note_failure(struct mnic_ib_dev *ib, int ret)
{
	if (ib->unregistering &&
	    (ret == -ETIMEDOUT || ioread32(&ib->d->seg->state) != MNIC_STATE_READY))
		WRITE_ONCE(ib->fw_gone, true);
}

/* A destroy command (DEALLOC_PD, DEALLOC_CONTEXT): skipped once
 * unregistration saw the firmware fail. */
static int destroy_cmd(struct mnic_ib_dev *ib, void *in, u32 in_len, void *out, u32 out_len,
		       u32 timeout_ms)
{
	int ret;

	if (READ_ONCE(ib->fw_gone))
		return -EIO;
	ret = mnic_module_cmd(ib->d, in, in_len, out, out_len,
			      ib->unregistering ? MNIC_CTX_REMOVE_TIMEOUT_MS : timeout_ms);
	if (ret)
		note_failure(ib, ret);
	return ret;
}

/* No driver-private input is read in this step: any non-zero byte of it
 * is a caller that expects something this driver does not do. */
static int udata_in_none(struct mnic_kdev *d, struct ib_udata *udata)
{
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen)) {
		mnic_count(d, MNIC_KCNT_ib_refused_udata);
		return -EINVAL;
	}
	return 0;
}

static int clamp_int(u32 v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

/* QUERY_DEVICE as MNIC_CTX_MGMT: the whole NIC's limits. */
static int query_fw_device(struct mnic_kdev *d, struct mnic_cmd_query_device_out *out)
{
	struct mnic_cmd_simple_in in = { .hdr = { .opcode = MNIC_CMD_QUERY_DEVICE,
						  .ctx = MNIC_CTX_MGMT } };
	int ret = mnic_module_cmd(d, &in, sizeof(in), out, sizeof(*out), MNIC_IB_CMD_TIMEOUT_MS);

	if (ret) {
		mnic_count(d, MNIC_KCNT_ib_query_failed);
		dev_warn_ratelimited(&d->pdev->dev, "QUERY_DEVICE for the RDMA device failed: %d\n", ret);
	}
	return ret;
}

/* The attributes (IBA 11.2.1.2 Query HCA) from the firmware's QUERY_DEVICE. */
static int mnic_ib_query_device(struct ib_device *ibdev, struct ib_device_attr *a,
				struct ib_udata *uhw)
{
	struct mnic_kdev *d = to_mib(ibdev)->d;
	struct mnic_cmd_query_device_out *q;
	int ret;

	ret = udata_in_none(d, uhw);
	if (ret)
		return ret;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	ret = query_fw_device(d, q);
	if (ret)
		goto out;
	memset(a, 0, sizeof(*a));
	a->fw_ver = ioread32(&d->seg->fw_version);
	a->sys_image_guid = ibdev->node_guid;
	/* An MR cannot be larger than the memory the NIC reaches: the
	 * host-memory aperture, else the DMA window. */
	a->max_mr_size = q->hostmem_size ? q->hostmem_size : q->window_size;
	if (q->page_shift_min >= PAGE_SHIFT && q->page_shift_min <= q->page_shift_max &&
	    q->page_shift_max < 64)
		a->page_size_cap = GENMASK_ULL(q->page_shift_max, q->page_shift_min);
	else
		a->page_size_cap = PAGE_SIZE;
	a->vendor_id = PCI_VENDOR_ID_REDHAT_QUMRANET;
	a->vendor_part_id = MNIC_PCI_DEVICE_IVSHMEM;
	a->hw_ver = q->board_id;
	a->max_qp = clamp_int(q->max_qp);
	a->max_qp_wr = clamp_int(q->max_qp_wr);
	a->max_send_sge = clamp_int(q->max_sge);
	a->max_recv_sge = clamp_int(q->max_sge);
	a->max_sge_rd = clamp_int(q->max_sge);
	a->max_cq = clamp_int(q->max_cq);
	a->max_cqe = clamp_int(q->max_cqe);
	a->max_mr = clamp_int(q->max_mr);
	a->max_pd = clamp_int(q->max_pd);
	a->max_qp_rd_atom = clamp_int(q->max_rd_atomic);
	a->max_qp_init_rd_atom = clamp_int(q->max_rd_atomic);
	a->max_res_rd_atom = clamp_int(min_t(u64, (u64)q->max_qp * q->max_rd_atomic, INT_MAX));
	/* The engine executes atomics itself, one at a time: atomic with
	 * respect to this NIC's operations, not to the host's CPUs
	 * (IBA 10.6.3.2, "HCA" atomicity). */
	a->atomic_cap = IB_ATOMIC_HCA;
	a->masked_atomic_cap = IB_ATOMIC_NONE;
	a->max_srq = clamp_int(q->max_srq);
	if (q->max_srq) {
		a->max_srq_wr = clamp_int(q->max_qp_wr);
		a->max_srq_sge = clamp_int(q->max_sge);
	}
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;   /* 4.096 us * 2^15 = 134 ms: a firmware loop, not silicon */
out:
	kfree(q);
	return ret;
}

static void mnic_ib_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	u32 fw = ioread32(&to_mib(ibdev)->d->seg->fw_version);

	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u", fw >> 24, (fw >> 16) & 0xff, fw & 0xffff);
}

/* The port (IBA 14.2.5.6 PortInfo, the fields RoCE keeps): ACTIVE while
 * the firmware is READY and serves its command queue. */
static int mnic_ib_query_port(struct ib_device *ibdev, u32 port, struct ib_port_attr *pa)
{
	struct mnic_ib_dev *ib = to_mib(ibdev);
	struct mnic_kdev *d = ib->d;
	bool up;

	if (port != MNIC_IB_PORT) {
		mnic_count(d, MNIC_KCNT_ib_refused_port);
		return -EINVAL;
	}
	up = ioread32(&d->seg->state) == MNIC_STATE_READY &&
	     ioread32(&d->seg->cmdq_status) == MNIC_CMDQ_RUNNING;
	memset(pa, 0, sizeof(*pa));
	pa->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	pa->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP : IB_PORT_PHYS_STATE_DISABLED;
	/* The engine takes path MTUs up to 4096 (MODIFY_QP); a 1500-byte
	 * Ethernet frame carries 1024 (until a netdev says otherwise). */
	pa->max_mtu = IB_MTU_4096;
	pa->active_mtu = IB_MTU_1024;
	pa->phys_mtu = ib_mtu_enum_to_int(IB_MTU_1024);
	pa->gid_tbl_len = MNIC_IB_GID_TBL_LEN;
	pa->ip_gids = 1;
	pa->port_cap_flags = IB_PORT_CM_SUP | IB_UVERBS_PCF_IP_BASED_GIDS;
	pa->max_msg_sz = ib->max_msg;
	pa->pkey_tbl_len = 1;
	pa->max_vl_num = 1;
	pa->active_width = IB_WIDTH_1X;
	pa->active_speed = IB_SPEED_SDR;
	return 0;
}

static int mnic_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
				      struct ib_port_immutable *im)
{
	if (port != MNIC_IB_PORT) {
		mnic_count(to_mib(ibdev)->d, MNIC_KCNT_ib_refused_port);
		return -EINVAL;
	}
	im->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	im->gid_tbl_len = MNIC_IB_GID_TBL_LEN;
	im->pkey_tbl_len = 1;
	im->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer mnic_ib_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int mnic_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (port != MNIC_IB_PORT || index != 0) {
		mnic_count(to_mib(ibdev)->d, MNIC_KCNT_ib_refused_port);
		return -EINVAL;
	}
	*pkey = MNIC_IB_PKEY_DEFAULT;
	return 0;
}

/* A ucontext is a tenant, as an open /dev/mnicN is: its own firmware
 * context, which owns every object made through it and one user-area
 * range (zeroed by mnic_ctx_alloc). */
static int mnic_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct mnic_kdev *d = to_mib(ibuc->device)->d;
	struct mnic_ib_ucontext *uc = to_muc(ibuc);
	int ret;

	ret = udata_in_none(d, udata);
	if (ret)
		return ret;
	ret = mnic_ctx_alloc(d, 0, 0, &uc->fw);
	if (ret)
		return ret;
	mnic_count(d, MNIC_KCNT_ib_ucontext);
	return 0;
}

/* Close, exit or unregistration: the firmware destroys whatever of the
 * context is left (counted in ctx_dealloc / ctx_dealloc_failed). */
static void mnic_ib_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct mnic_ib_dev *ib = to_mib(ibuc->device);
	struct mnic_ib_ucontext *uc = to_muc(ibuc);
	int ret;

	if (READ_ONCE(ib->fw_gone)) {
		mnic_count(ib->d, MNIC_KCNT_ctx_dealloc_failed);
		return;
	}
	ret = mnic_ctx_dealloc(ib->d, uc->fw.ctx, ib->unregistering ? MNIC_CTX_REMOVE_TIMEOUT_MS :
			       MNIC_CTX_RELEASE_TIMEOUT_MS);
	if (ret)
		note_failure(ib, ret);
}

/* Nothing is mapped in this step (the doorbell and ring pages come with
 * CQs and QPs). */
static int mnic_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	mnic_count(to_mib(ibuc->device)->d, MNIC_KCNT_ib_refused_mmap);
	return -EINVAL;
}

/* Unregistration with files open: the core zaps the mappings it made and
 * then destroys every object through the ops; nothing of ours remains. */
static void mnic_ib_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int mnic_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct mnic_kdev *d = to_mib(ibpd->device)->d;
	struct mnic_ib_pd *pd = to_mpd(ibpd);
	struct mnic_cmd_simple_in in = { .hdr = { .opcode = MNIC_CMD_ALLOC_PD } };
	struct mnic_cmd_handle_out out;
	struct mnic_ib_ucontext *uc;
	int ret;

	/* Kernel verbs are not served: a PD without a user context has no
	 * firmware context to live in. */
	if (!udata) {
		mnic_count(d, MNIC_KCNT_ib_refused_kernel);
		return -EOPNOTSUPP;
	}
	ret = udata_in_none(d, udata);
	if (ret)
		return ret;
	uc = rdma_udata_to_drv_context(udata, struct mnic_ib_ucontext, ibuc);
	in.hdr.ctx = uc->fw.ctx;
	ret = mnic_module_cmd(d, &in, sizeof(in), &out, sizeof(out), MNIC_IB_CMD_TIMEOUT_MS);
	if (ret) {
		mnic_count(d, MNIC_KCNT_ib_pd_failed);
		return ret;
	}
	pd->ctx = uc->fw.ctx;
	pd->pdn = out.handle;
	mnic_count(d, MNIC_KCNT_ib_pd);
	return 0;
}

/* Never fails: the core cannot undo a destroy on close (it would only
 * WARN), and a PD the firmware did not free goes with its context. */
static int mnic_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct mnic_kdev *d = to_mib(ibpd->device)->d;
	struct mnic_ib_pd *pd = to_mpd(ibpd);
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = MNIC_CMD_DEALLOC_PD, .ctx = pd->ctx },
		.handle = pd->pdn,
	};
	struct mnic_cmd_simple_out out;
	int ret = destroy_cmd(to_mib(ibpd->device), &in, sizeof(in), &out, sizeof(out),
			      MNIC_IB_CMD_TIMEOUT_MS);

	if (ret) {
		mnic_count(d, MNIC_KCNT_ib_pd_dealloc_failed);
		dev_warn_ratelimited(&d->pdev->dev, "DEALLOC_PD %u (context %u) failed: %d\n",
				     pd->pdn, pd->ctx, ret);
	}
	return 0;
}

/* The RoCE GID table (the core fills it from the netdev's addresses):
 * pushed to the firmware, mnic_netdev.c. */
static int mnic_ib_add_gid(const struct ib_gid_attr *attr, void **context)
{
	return mnic_netdev_add_gid(to_mib(attr->device)->d, attr);
}

static int mnic_ib_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return mnic_netdev_del_gid(to_mib(attr->device)->d, attr);
}

static const struct ib_device_ops mnic_ib_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	/* No rdma_driver_id of our own: libibverbs matches the provider by
	 * the parent PCI device's modalias instead. */
	.uverbs_no_driver_id_binding = 1,
	.uverbs_abi_ver = MNIC_IB_UVERBS_ABI_VERSION,

	.add_gid = mnic_ib_add_gid,
	.alloc_pd = mnic_ib_alloc_pd,
	.alloc_ucontext = mnic_ib_alloc_ucontext,
	.dealloc_pd = mnic_ib_dealloc_pd,
	.dealloc_ucontext = mnic_ib_dealloc_ucontext,
	.del_gid = mnic_ib_del_gid,
	.disassociate_ucontext = mnic_ib_disassociate_ucontext,
	.get_dev_fw_str = mnic_ib_get_dev_fw_str,
	.get_link_layer = mnic_ib_get_link_layer,
	.get_port_immutable = mnic_ib_get_port_immutable,
	.mmap = mnic_ib_mmap,
	.query_device = mnic_ib_query_device,
	.query_pkey = mnic_ib_query_pkey,
	.query_port = mnic_ib_query_port,

	INIT_RDMA_OBJ_SIZE(ib_pd, mnic_ib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, mnic_ib_ucontext, ibuc),
};

/* The node GUID: the port's MAC as a modified EUI-64 (RFC 4291 2.5.1,
 * as RoCE devices derive it). */
static __be64 guid_of_mac(const u8 mac[ETH_ALEN])
{
	u8 g[8] = { mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5] };
	__be64 v;

	memcpy(&v, g, sizeof(v));
	return v;
}

int mnic_ib_register(struct mnic_kdev *d)
{
	char board[sizeof_field(struct mnic_init_seg, board_name) + 1];
	struct mnic_cmd_query_device_out *q;
	struct mnic_ib_dev *ib;
	u8 mac[ETH_ALEN];
	int ret;

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	ret = query_fw_device(d, q);
	if (ret)
		goto out;
	ib = ib_alloc_device(mnic_ib_dev, ibdev);
	if (!ib) {
		ret = -ENOMEM;
		goto out;
	}
	ib->d = d;
	ib->max_msg = q->max_msg;
	memcpy_fromio(mac, d->seg->mac, sizeof(mac));
	memcpy_fromio(board, d->seg->board_name, sizeof(board) - 1);
	board[sizeof(board) - 1] = '\0';
	ib->ibdev.node_type = RDMA_NODE_IB_CA;
	ib->ibdev.node_guid = guid_of_mac(mac);
	ib->ibdev.phys_port_cnt = 1;
	ib->ibdev.num_comp_vectors = 1;
	ib->ibdev.dev.parent = &d->pdev->dev;
	snprintf(ib->ibdev.node_desc, sizeof(ib->ibdev.node_desc), "mnic %s", board);
	ib_set_device_ops(&ib->ibdev, &mnic_ib_ops);
	/* The port's netdev: the core's RoCE GID table follows its addresses
	 * (add_gid/del_gid), and RTR resolves MACs through it. */
	BUILD_BUG_ON(MNIC_IB_GID_TBL_LEN != MNIC_GID_TBL_LEN);
	ret = ib_device_set_netdev(&ib->ibdev, mnic_netdev_of(d), MNIC_IB_PORT);
	if (ret) {
		dev_err(&d->pdev->dev, "ib_device_set_netdev failed: %d\n", ret);
		ib_dealloc_device(&ib->ibdev);
		goto out;
	}
	/* The core calls query_device and the port ops from here on. */
	ret = ib_register_device(&ib->ibdev, "mnic%d", &d->pdev->dev);
	if (ret) {
		dev_err(&d->pdev->dev, "ib_register_device failed: %d\n", ret);
		ib_dealloc_device(&ib->ibdev);
		goto out;
	}
	d->ib = ib;
	dev_info(&d->pdev->dev, "RDMA device %s (RoCEv2, port 1)\n", dev_name(&ib->ibdev.dev));
out:
	kfree(q);
	return ret;
}

/* First in remove: ucontexts still open are disassociated and their
 * objects destroyed through the ops, so the command queue must run. */
void mnic_ib_unregister(struct mnic_kdev *d)
{
	if (!d->ib)
		return;
	/* Ops in progress finish before ib_unregister_device returns; those it
	 * runs itself see the flag. */
	WRITE_ONCE(d->ib->unregistering, true);
	ib_unregister_device(&d->ib->ibdev);
	ib_dealloc_device(&d->ib->ibdev);
	d->ib = NULL;
}

/* The RDMA device is of use from user space with ib_uverbs (modprobe
 * loads it after this module). */
MODULE_SOFTDEP("post: ib_uverbs");
