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
 * Served: query_device (the firmware's QUERY_DEVICE), query_port (state
 * from the firmware), get_port_immutable, get_link_layer, query_pkey,
 * get_dev_fw_str, alloc/dealloc_ucontext (a firmware context per
 * ucontext, mnic_ctx.c, and the doorbell page's mmap entry), mmap /
 * mmap_free (that page only), alloc/dealloc_pd (ALLOC_PD/DEALLOC_PD in
 * that context); MRs in mnic_ib_mr.c, CQs in mnic_ib_cq.c, QPs and AHs in
 * mnic_ib_qp.c (docs/kernel-driver.md "RDMA device").
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

#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>

#include "mnic_ib.h"

/* The RoCE GID table the core keeps (IPv4 and IPv6 addresses of the
 * netdev, later; one RoCEv2 entry each). */
#define MNIC_IB_GID_TBL_LEN        16
#define MNIC_IB_PKEY_DEFAULT       0xffff   /* IBA 10.9.1.2: the full-member default P_Key */
#define MNIC_PCI_DEVICE_IVSHMEM    0x1110

/* A failed command during unregistration: was it the firmware that
 * failed (no answer, or no longer READY), not the command? */
static void note_failure(struct mnic_ib_dev *ib, int ret)
{
	if (ib->unregistering &&
	    (ret == -ETIMEDOUT || ioread32(&ib->d->seg->state) != MNIC_STATE_READY))
		WRITE_ONCE(ib->fw_gone, true);
}

/* A command of a uverbs call, in the ucontext's context (in->hdr.ctx). */
int mnic_ib_cmd(struct mnic_ib_dev *ib, void *in, u32 in_len, void *out, u32 out_len)
{
	return mnic_module_cmd(ib->d, in, in_len, out, out_len, MNIC_IB_CMD_TIMEOUT_MS);
}

/* A destroy command (DEALLOC_PD, DESTROY_CQ/QP, DEREG_MR, DESTROY_MTT,
 * DEALLOC_CONTEXT): skipped once unregistration saw the firmware fail. */
int mnic_ib_destroy_cmd(struct mnic_ib_dev *ib, void *in, u32 in_len, void *out, u32 out_len)
{
	int ret;

	if (READ_ONCE(ib->fw_gone))
		return -EIO;
	ret = mnic_module_cmd(ib->d, in, in_len, out, out_len,
			      ib->unregistering ? MNIC_CTX_REMOVE_TIMEOUT_MS : MNIC_IB_CMD_TIMEOUT_MS);
	if (ret)
		note_failure(ib, ret);
	return ret;
}

/* A verb without driver-private input: any non-zero byte of it is a
 * caller that expects something this driver does not do. */
int mnic_ib_udata_none(struct mnic_kdev *d, struct ib_udata *udata)
{
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen)) {
		mnic_count(d, MNIC_KCNT_ib_refused_udata);
		return -EINVAL;
	}
	return 0;
}

/* A verb's driver-private request (mnic/ib_abi.h): exactly len bytes, or
 * more whose tail is zero (a newer provider's fields this driver does not
 * know must be unused). */
int mnic_ib_udata_req(struct mnic_kdev *d, struct ib_udata *udata, void *req, size_t len)
{
	if (!udata || udata->inlen < len ||
	    (udata->inlen > len && !ib_is_udata_cleared(udata, len, udata->inlen - len))) {
		mnic_count(d, MNIC_KCNT_ib_refused_udata);
		return -EINVAL;
	}
	if (ib_copy_from_udata(req, udata, len)) {
		mnic_count(d, MNIC_KCNT_copy_fault);
		return -EFAULT;
	}
	return 0;
}

/* A create verb's driver request (len bytes, 0 for none) and the optional
 * struct mnic_ib_create_tail after it (mnic/ib_mig.h); without a tail the
 * request follows mnic_ib_udata_req's rule. */
int mnic_ib_udata_tail(struct mnic_kdev *d, struct ib_udata *udata, void *req, size_t len,
		       struct mnic_ib_create_tail *tail)
{
	*tail = (struct mnic_ib_create_tail){ .comp_fd = -1 };
	if (udata && udata->inlen == len + sizeof(*tail)) {
		if ((len && ib_copy_from_udata(req, udata, len)) ||
		    copy_from_user(tail, (const u8 __user *)udata->inbuf + len, sizeof(*tail))) {
			mnic_count(d, MNIC_KCNT_copy_fault);
			return -EFAULT;
		}
		if (tail->magic != MNIC_IB_TAIL_MAGIC || tail->reserved) {
			mnic_count(d, MNIC_KCNT_ib_refused_udata);
			return -EINVAL;
		}
		return 0;
	}
	if (!len)
		return mnic_ib_udata_none(d, udata);
	return mnic_ib_udata_req(d, udata, req, len);
}

/* The driver-private response, as much of it as the caller has room for. */
int mnic_ib_udata_resp(struct ib_udata *udata, void *resp, size_t len)
{
	if (!udata || !udata->outlen)
		return 0;
	return ib_copy_to_udata(udata, resp, min_t(size_t, len, udata->outlen));
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

	ret = mnic_ib_udata_none(d, uhw);
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
	struct net_device *ndev;
	enum ib_mtu active;
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
	/* The engine takes path MTUs up to 4096 (MODIFY_QP); the active one
	 * is the largest whose RoCEv2 frame (IBA A16.2: IP, UDP, BTH, the
	 * largest extended header, ICRC around the payload) fits the
	 * netdev's MTU: 1024 at 1500, 4096 from 4196 (iboe_get_mtu, as
	 * rxe).  Without the netdev, a 1500-byte Ethernet frame's 1024. */
	ndev = mnic_netdev_of(d);
	active = ndev ? iboe_get_mtu(READ_ONCE(ndev->mtu)) : IB_MTU_1024;
	if (active < IB_MTU_256)
		active = IB_MTU_256;
	if (active > IB_MTU_4096)
		active = IB_MTU_4096;
	pa->max_mtu = IB_MTU_4096;
	pa->active_mtu = active;
	pa->phys_mtu = ib_mtu_enum_to_int(active);
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

/* The doorbell page (struct mnic_db_page, alone in its 64 KiB of BAR2):
 * the one mapping a ucontext gets.  Why it is safe to hand to any tenant:
 * the page holds nothing but db_seq, which only tells the firmware to
 * re-read doorbell records; a tenant that writes it at will costs the NIC
 * rescans, it reads or changes no other tenant's data, rings or objects
 * (each context's records are in its own pinned memory, and the firmware
 * checks every index against its ring).  Not mapped: the init segment
 * (the command queue's registers: /dev/mnicN maps it read-only).  The
 * ivshmem-doorbell register BAR0 is the second mapping, only where it owns
 * its page and user_doorbell allows (mnic_irq.c says what else a process
 * can do with it): the application then rings the NIC's vector 0 itself
 * after db_seq, and the firmware serves it at once instead of on its
 * adaptive poll (docs/kernel-driver.md "Mapping"). */
static int mmap_entry_add(struct mnic_ib_ucontext *uc, phys_addr_t phys, bool uncached,
			  struct mnic_ib_mmap_entry **out, u64 *offset)
{
	struct mnic_ib_mmap_entry *e = kzalloc(sizeof(*e), GFP_KERNEL);
	int ret;

	if (!e)
		return -ENOMEM;
	e->phys = phys;
	e->uncached = uncached;
	ret = rdma_user_mmap_entry_insert(&uc->ibuc, &e->rdma, PAGE_SIZE);
	if (ret) {
		kfree(e);
		return ret;
	}
	*out = e;
	*offset = rdma_user_mmap_get_offset(&e->rdma);
	return 0;
}

static void uc_entries_remove(struct mnic_ib_ucontext *uc)
{
	if (uc->uar)
		rdma_user_mmap_entry_remove(&uc->uar->rdma);
	uc->uar = NULL;
	rdma_user_mmap_entry_remove(&uc->db->rdma);
}

/* A ucontext is a tenant, as an open /dev/mnicN is: its own firmware
 * context, which owns every object made through it and one user-area
 * range (zeroed by mnic_ctx_alloc).  Response: the doorbell page's mmap
 * offset and the ring formats (mnic/ib_abi.h). */
static int mnic_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct mnic_ib_dev *ib = to_mib(ibuc->device);
	struct mnic_kdev *d = ib->d;
	struct mnic_ib_ucontext *uc = to_muc(ibuc);
	struct mnic_ib_alloc_ucontext_resp resp = {
		.db_mmap_len = PAGE_SIZE, .wqe_size = MNIC_WQE_SIZE, .cqe_size = MNIC_CQE_SIZE,
		.max_sge = ib->max_sge, .max_inline = MNIC_MAX_INLINE,
		.max_qp_wr = ib->max_qp_wr, .max_cqe = ib->max_cqe,
	};
	int ret;

	ret = mnic_ib_udata_none(d, udata);
	if (ret)
		return ret;
	mutex_init(&uc->orphan_lock);
	INIT_LIST_HEAD(&uc->orphans);
	mutex_init(&uc->objs_lock);
	INIT_LIST_HEAD(&uc->objs);
	uc->async_fd = -1;
	uc->mig = NULL;
	atomic_set(&uc->n_ah, 0);
	ret = mnic_ctx_alloc(d, 0, 0, &uc->fw);
	if (ret)
		return ret;
	BUILD_BUG_ON(MNIC_DB_PAGE_OFFSET % PAGE_SIZE);
	uc->uar = NULL;
	ret = mmap_entry_add(uc, d->bar_phys + MNIC_DB_PAGE_OFFSET, false, &uc->db,
			     &resp.db_mmap_offset);
	if (ret)
		goto err_ctx;
	if (READ_ONCE(d->irq_ok) && d->uar_ok) {
		ret = mmap_entry_add(uc, d->uar_phys, true, &uc->uar, &resp.uar_mmap_offset);
		if (ret)
			goto err_entry;
		resp.flags |= MNIC_IB_CTX_F_DB_RING;
		resp.uar_offset = MNIC_IRQ_REG_DOORBELL;
		resp.uar_ring = d->irq_ring;
	}
	ret = mnic_ib_eq_create(ib, uc);
	if (ret)
		goto err_entry;
	resp.ctx = uc->fw.ctx;
	ret = mnic_ib_udata_resp(udata, &resp, sizeof(resp));
	if (ret)
		goto err_eq;
	mnic_count(d, MNIC_KCNT_ib_ucontext);
	if (uc->uar)
		mnic_count(d, MNIC_KCNT_ib_uar);
	return 0;

err_eq:
	uc_entries_remove(uc);
	mnic_ib_eq_destroy(ib, uc, mnic_ctx_dealloc(d, uc->fw.ctx, MNIC_CTX_RELEASE_TIMEOUT_MS) == 0);
	return ret;
err_entry:
	uc_entries_remove(uc);
err_ctx:
	mnic_ctx_dealloc(d, uc->fw.ctx, MNIC_CTX_RELEASE_TIMEOUT_MS);
	return ret;
}

/* Close, exit or unregistration (every object of the ucontext destroyed
 * by the core before): the firmware destroys whatever of the context is
 * left (counted in ctx_dealloc / ctx_dealloc_failed); pinned memory whose
 * object's destroy failed is released only if that succeeded. */
static void mnic_ib_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct mnic_ib_dev *ib = to_mib(ibuc->device);
	struct mnic_ib_ucontext *uc = to_muc(ibuc);
	int ret = -EIO;

	uc_entries_remove(uc);
	if (READ_ONCE(ib->fw_gone)) {
		mnic_count(ib->d, MNIC_KCNT_ctx_dealloc_failed);
	} else {
		ret = mnic_ctx_dealloc(ib->d, uc->fw.ctx, ib->unregistering ?
				       MNIC_CTX_REMOVE_TIMEOUT_MS : MNIC_CTX_RELEASE_TIMEOUT_MS);
		if (ret)
			note_failure(ib, ret);
	}
	mnic_ib_orphans_free(ib, uc, ret == 0);
	mnic_ib_eq_destroy(ib, uc, ret == 0);
	mnic_ib_mig_free(uc);
}

/* The doorbell page, and the register page where given
 * (rdma_user_mmap_entry_get checks the offset and that the length is the
 * entry's): shared; the doorbell page write-combining as every user
 * mapping of the BAR2 memory (docs/kernel-driver.md "Mapping"). */
static int mnic_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct mnic_kdev *d = to_mib(ibuc->device)->d;
	struct rdma_user_mmap_entry *rdma = rdma_user_mmap_entry_get(ibuc, vma);
	struct mnic_ib_mmap_entry *e;
	int ret;

	if (!rdma) {
		mnic_count(d, MNIC_KCNT_ib_refused_mmap);
		return -EINVAL;
	}
	e = container_of(rdma, struct mnic_ib_mmap_entry, rdma);
	if (!(vma->vm_flags & VM_SHARED)) {
		mnic_count(d, MNIC_KCNT_ib_refused_mmap);
		ret = -EINVAL;
	} else {
		/* the register page uncached: each ring one write, in order
		 * after the stores it announces (provider: a release fence) */
		ret = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(e->phys), PAGE_SIZE,
					e->uncached ? pgprot_noncached(vma->vm_page_prot) :
					pgprot_writecombine(vma->vm_page_prot), rdma);
		if (ret)
			mnic_count(d, MNIC_KCNT_ib_refused_mmap);
		else
			WRITE_ONCE(e->mapped_at, vma->vm_start);
	}
	rdma_user_mmap_entry_put(rdma);
	return ret;
}

static void mnic_ib_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	kfree(container_of(rdma, struct mnic_ib_mmap_entry, rdma));
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
	struct mnic_ib_create_tail tail;
	struct mnic_ib_ucontext *uc;
	int ret;

	/* Kernel verbs are not served: a PD without a user context has no
	 * firmware context to live in. */
	if (!udata) {
		mnic_count(d, MNIC_KCNT_ib_refused_kernel);
		return -EOPNOTSUPP;
	}
	ret = mnic_ib_udata_tail(d, udata, NULL, 0, &tail);
	if (ret)
		return ret;
	uc = rdma_udata_to_drv_context(udata, struct mnic_ib_ucontext, ibuc);
	pd->uc = uc;
	pd->ctx = uc->fw.ctx;
	if (tail.handle) {
		/* a restore's: the image's PD, or a filler taking a handle */
		struct mnic_ib_mig_claim c = { .kind = MNIC_IB_OBJ_PD, .handle = tail.handle };

		if (tail.handle == MNIC_IB_RESTORE_FILLER) {
			if (!uc->mig) {
				mnic_count(d, MNIC_KCNT_ib_mig_refused);
				return -EINVAL;
			}
			pd->filler = true;
			return 0;   /* not on the list: a dump never sees it */
		}
		ret = mnic_ib_mig_claim(to_mib(ibpd->device), uc, &c, 0, NULL);
		if (ret)
			return ret;
		pd->pdn = tail.handle;
	} else {
		in.hdr.ctx = uc->fw.ctx;
		ret = mnic_module_cmd(d, &in, sizeof(in), &out, sizeof(out),
				      MNIC_IB_CMD_TIMEOUT_MS);
		if (ret) {
			mnic_count(d, MNIC_KCNT_ib_pd_failed);
			return ret;
		}
		pd->pdn = out.handle;
	}
	mnic_ib_obj_add(uc, &pd->obj, MNIC_IB_OBJ_PD);
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
	int ret;

	if (pd->filler)
		return 0;
	mnic_ib_obj_del(pd->uc, &pd->obj);
	ret = mnic_ib_destroy_cmd(to_mib(ibpd->device), &in, sizeof(in), &out, sizeof(out));
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
	.create_ah = mnic_ib_create_ah,
	.create_cq = mnic_ib_create_cq,
	.create_qp = mnic_ib_create_qp,
	.dealloc_pd = mnic_ib_dealloc_pd,
	.dealloc_ucontext = mnic_ib_dealloc_ucontext,
	.del_gid = mnic_ib_del_gid,
	.dereg_mr = mnic_ib_dereg_mr,
	.destroy_ah = mnic_ib_destroy_ah,
	.destroy_cq = mnic_ib_destroy_cq,
	.destroy_qp = mnic_ib_destroy_qp,
	.disassociate_ucontext = mnic_ib_disassociate_ucontext,
	.get_dev_fw_str = mnic_ib_get_dev_fw_str,
	.get_link_layer = mnic_ib_get_link_layer,
	.get_port_immutable = mnic_ib_get_port_immutable,
	.mmap = mnic_ib_mmap,
	.mmap_free = mnic_ib_mmap_free,
	.modify_qp = mnic_ib_modify_qp,
	.query_device = mnic_ib_query_device,
	.query_pkey = mnic_ib_query_pkey,
	.query_port = mnic_ib_query_port,
	.query_qp = mnic_ib_query_qp,
	.reg_user_mr = mnic_ib_reg_user_mr,
	.resize_cq = mnic_ib_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, mnic_ib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, mnic_ib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, mnic_ib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, mnic_ib_qp, ibqp),
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
	ib->max_qp_wr = q->max_qp_wr;
	ib->max_cqe = q->max_cqe;
	ib->max_sge = min_t(u32, q->max_sge, MNIC_MAX_SGE);
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
	ib->ibdev.driver_def = mnic_ib_uapi_defs;   /* migration methods, mnic_ib_mig.c */
	mnic_ib_eq_init(ib);
	/* The port's netdev: the core's RoCE GID table follows its addresses
	 * (add_gid/del_gid), and RTR resolves MACs through it. */
	BUILD_BUG_ON(MNIC_IB_GID_TBL_LEN != MNIC_GID_TBL_LEN);
	ret = ib_device_set_netdev(&ib->ibdev, mnic_netdev_of(d), MNIC_IB_PORT);
	if (ret) {
		dev_err(&d->pdev->dev, "ib_device_set_netdev failed: %d\n", ret);
		mnic_ib_eq_exit(ib);
		ib_dealloc_device(&ib->ibdev);
		goto out;
	}
	/* The core calls query_device and the port ops from here on. */
	ret = ib_register_device(&ib->ibdev, "mnic%d", &d->pdev->dev);
	if (ret) {
		dev_err(&d->pdev->dev, "ib_register_device failed: %d\n", ret);
		mnic_ib_eq_exit(ib);
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
	mnic_ib_eq_exit(d->ib);
	ib_dealloc_device(&d->ib->ibdev);
	d->ib = NULL;
}

