// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: the RDMA device's user memory (issue 16).  reg_user_mr, and the
 * rings of CQs and QPs, pin the application's pages with ib_umem (which
 * charges them to RLIMIT_MEMLOCK / pinned_vm as every RDMA driver does)
 * and give them to the firmware as an MTT of the ucontext's firmware
 * context: the same CREATE_MTT / WRITE_MTT / REG_MR commands as
 * MNIC_IOC_REG_MEM (mnic_mem.c, whose helpers these are), host-physical
 * address = this VM's physical address of each page (docs/host-interface.md
 * "Host memory and translation").
 *
 * Release order: the object's destroy command (DESTROY_CQ/QP, DEREG_MR),
 * DESTROY_MTT, then ib_umem_release.  When the firmware fails one of the
 * commands the NIC may still reach the pages: they become an orphan of
 * the ucontext and are released only once DEALLOC_CONTEXT succeeded
 * (every object of the context gone); if that fails too they stay pinned
 * for good (ib_pages_leaked), as mnic_mem.c does with mem_pages_leaked.
 */
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "mnic_ib.h"

/* The pinned pages of a umem in order: each scatterlist entry is
 * physically contiguous, whole pages from offset 0 (ib_umem_get). */
struct umem_walk {
	struct scatterlist *sg;
	unsigned int off;
};

static u64 next_umem_page(void *it)
{
	struct umem_walk *w = it;
	u64 addr;

	if (!w->sg)
		return 0;   /* not reached: the page count comes from the same umem */
	addr = page_to_phys(sg_page(w->sg)) + w->sg->offset + w->off;
	w->off += PAGE_SIZE;
	if (w->off >= w->sg->length) {
		w->sg = sg_next(w->sg);
		w->off = 0;
	}
	return addr;
}

int mnic_ib_umem_get(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc, u64 addr, u64 len,
		     u64 iova, int access, struct mnic_ib_umem *m)
{
	struct mnic_kdev *d = ib->d;
	struct umem_walk walk;
	size_t npages;
	int ret;

	m->mtt = MNIC_MTT_NONE;
	INIT_LIST_HEAD(&m->orphan);
	if (!READ_ONCE(d->hostmem_size)) {
		/* The NIC reaches only its BAR window: host pages mean nothing to it. */
		mnic_count(d, MNIC_KCNT_reg_no_aperture);
		return -EOPNOTSUPP;
	}
	m->umem = ib_umem_get(&ib->ibdev, addr, len, access);
	if (IS_ERR(m->umem)) {
		ret = PTR_ERR(m->umem);
		m->umem = NULL;
		mnic_count(d, MNIC_KCNT_reg_refused_pin);
		return ret;
	}
	npages = ib_umem_num_pages(m->umem);
	if (npages > U32_MAX) {
		ret = -E2BIG;
		goto err_release;
	}
	walk.sg = m->umem->sgt_append.sgt.sgl;
	walk.off = 0;
	ret = mnic_mtt_create(d, uc->fw.ctx, iova, len, npages, next_umem_page, &walk,
			      MNIC_IB_CMD_TIMEOUT_MS, &m->mtt);
	if (ret == -EREMOTEIO) {
		/* An MTT the firmware may still hold: keep the pages. */
		mnic_ib_umem_put(ib, uc, m, false);
		return ret;
	}
	if (ret)
		goto err_release;
	atomic64_add(npages, &d->cnt[MNIC_KCNT_mem_pages_pinned]);
	return 0;

err_release:
	ib_umem_release(m->umem);
	m->umem = NULL;
	return ret;
}

/* A restored object's memory, pinned by now (mnic_ib_mig.c): WRITE_MTT of
 * its pages into the image's MTT. */
int mnic_ib_umem_refill(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc,
			struct mnic_ib_umem *m, u32 *pages)
{
	struct umem_walk walk = { .sg = m->umem->sgt_append.sgt.sgl };
	size_t npages = ib_umem_num_pages(m->umem);

	if (npages > U32_MAX)
		return -E2BIG;
	atomic64_add(npages, &ib->d->cnt[MNIC_KCNT_mem_pages_pinned]);
	*pages += npages;
	return mnic_mtt_write(ib->d, uc->fw.ctx, m->mtt, npages, next_umem_page, &walk,
			      MNIC_IB_CMD_TIMEOUT_MS);
}

/* destroyed: the object that used the memory is gone from the firmware. */
void mnic_ib_umem_put(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc,
		      struct mnic_ib_umem *m, bool destroyed)
{
	struct mnic_kdev *d = ib->d;
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = MNIC_CMD_DESTROY_MTT, .ctx = uc->fw.ctx }, .handle = m->mtt,
	};
	struct mnic_cmd_simple_out out;

	if (!m->umem)
		return;
	if (destroyed && m->mtt != MNIC_MTT_NONE &&
	    mnic_ib_destroy_cmd(ib, &in, sizeof(in), &out, sizeof(out)) == 0) {
		atomic64_add(ib_umem_num_pages(m->umem), &d->cnt[MNIC_KCNT_mem_pages_unpinned]);
		ib_umem_release(m->umem);
		m->umem = NULL;
		return;
	}
	mnic_count(d, MNIC_KCNT_ib_destroy_failed);
	atomic64_add(ib_umem_num_pages(m->umem), &d->cnt[MNIC_KCNT_ib_pages_orphaned]);
	/* The object struct goes when this returns: the umem moves to a
	 * holder of its own on the ucontext. */
	{
		struct mnic_ib_umem *o = kmalloc(sizeof(*o), GFP_KERNEL);

		if (!o) {
			/* Nowhere to keep it: it stays pinned for good. */
			atomic64_add(ib_umem_num_pages(m->umem), &d->cnt[MNIC_KCNT_ib_pages_leaked]);
			m->umem = NULL;
			return;
		}
		*o = *m;
		mutex_lock(&uc->orphan_lock);
		list_add(&o->orphan, &uc->orphans);
		mutex_unlock(&uc->orphan_lock);
	}
	m->umem = NULL;
}

void mnic_ib_orphans_free(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc, bool dma_stopped)
{
	struct mnic_kdev *d = ib->d;
	struct mnic_ib_umem *o, *tmp;

	mutex_lock(&uc->orphan_lock);
	list_for_each_entry_safe(o, tmp, &uc->orphans, orphan) {
		list_del(&o->orphan);
		if (dma_stopped) {
			atomic64_add(ib_umem_num_pages(o->umem), &d->cnt[MNIC_KCNT_mem_pages_unpinned]);
			ib_umem_release(o->umem);
		} else {
			atomic64_add(ib_umem_num_pages(o->umem), &d->cnt[MNIC_KCNT_ib_pages_leaked]);
		}
		kfree(o);
	}
	mutex_unlock(&uc->orphan_lock);
}

/* Access rights the engine checks (IBA 10.6.3.1); the optional ones
 * (relaxed ordering) are hints a device may ignore. */
#define MNIC_IB_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			   IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

struct ib_mr *mnic_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 virt_addr,
				  int access, struct ib_udata *udata)
{
	struct mnic_ib_dev *ib = to_mib(ibpd->device);
	struct mnic_kdev *d = ib->d;
	struct mnic_ib_pd *pd = to_mpd(ibpd);
	struct mnic_ib_create_tail tail;
	struct mnic_ib_ucontext *uc;
	struct mnic_ib_mr *mr;
	u32 fw_access;
	int ret;

	if (!udata) {
		mnic_count(d, MNIC_KCNT_ib_refused_kernel);
		return ERR_PTR(-EOPNOTSUPP);
	}
	ret = mnic_ib_udata_tail(d, udata, NULL, 0, &tail);
	if (ret)
		return ERR_PTR(ret);
	fw_access = access & ~IB_ACCESS_OPTIONAL;
	if (fw_access & ~MNIC_IB_MR_ACCESS) {
		/* ON_DEMAND, MW_BIND, ZERO_BASED, ...: not served */
		mnic_count(d, MNIC_KCNT_reg_refused_range);
		return ERR_PTR(-EOPNOTSUPP);
	}
	/* The MTT's pages are those of [virt_addr, +length): the same
	 * offset in the first page as the pinned range, else the NIC's
	 * translation would be off by the difference. */
	if (length == 0 || ((start ^ virt_addr) & ~PAGE_MASK) || virt_addr + length < virt_addr) {
		mnic_count(d, MNIC_KCNT_reg_refused_range);
		return ERR_PTR(-EINVAL);
	}
	uc = udata_muc(udata);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->uc = uc;
	mr->start = start;
	mr->length = length;
	mr->virt = virt_addr;
	mr->access = access;
	if (tail.handle) {
		/* a restore's: the image's MR at its key, pinned by RESUME */
		struct mnic_ib_mig_claim c = {
			.kind = MNIC_IB_OBJ_MR, .handle = tail.handle, .addr = start,
			.len = length, .iova = virt_addr, .pd = pd->pdn,
		};

		ret = mnic_ib_mig_claim(ib, uc, &c, access, &mr->mem);
		if (ret)
			goto err_free;
		mr->ibmr.lkey = mr->ibmr.rkey = tail.handle;
	} else {
		/* The MTT's IOVA is the MR's (virt_addr), its pages those pinned
		 * from start: the firmware translates the MR's addresses through it. */
		ret = mnic_ib_umem_get(ib, uc, start, length, virt_addr, access, &mr->mem);
		if (ret)
			goto err_free;
		ret = mnic_mr_reg_cmd(d, uc->fw.ctx, pd->pdn, fw_access, virt_addr, length,
				      mr->mem.mtt, MNIC_IB_CMD_TIMEOUT_MS, &mr->ibmr.lkey,
				      &mr->ibmr.rkey);
		if (ret)
			goto err_umem;
	}
	mnic_ib_obj_add(uc, &mr->obj, MNIC_IB_OBJ_MR);
	mnic_count(d, MNIC_KCNT_ib_mr);
	return &mr->ibmr;

err_umem:
	mnic_ib_umem_put(ib, uc, &mr->mem, true);
err_free:
	mnic_count(d, MNIC_KCNT_ib_mr_failed);
	kfree(mr);
	return ERR_PTR(ret);
}

/* Never fails (the core cannot undo a destroy on close): pages the
 * firmware may still reach are kept (mnic_ib_umem_put). */
int mnic_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mnic_ib_dev *ib = to_mib(ibmr->device);
	struct mnic_ib_mr *mr = container_of(ibmr, struct mnic_ib_mr, ibmr);
	struct mnic_ib_ucontext *uc = mr->uc;
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = MNIC_CMD_DEREG_MR, .ctx = uc->fw.ctx }, .handle = ibmr->lkey,
	};
	struct mnic_cmd_simple_out out;
	bool ok;

	mnic_ib_obj_del(uc, &mr->obj);
	ok = mnic_ib_destroy_cmd(ib, &in, sizeof(in), &out, sizeof(out)) == 0;
	mnic_ib_umem_put(ib, uc, &mr->mem, ok);
	kfree(mr);
	return 0;
}
