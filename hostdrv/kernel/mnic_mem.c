// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: user memory registration for host-physical DMA (issue 14;
 * docs/host-interface.md "Host memory and translation", docs/kernel-driver.md
 * "Host memory").
 *
 * MNIC_IOC_REG_MEM pins the calling process's pages of [addr, addr + len)
 * (pin_user_pages_fast, FOLL_WRITE | FOLL_LONGTERM: the NIC writes them
 * for as long as the registration lives, so they must not migrate), turns
 * them into host-physical addresses (the guest-physical address of each
 * page: the NIC maps this VM's RAM as its host-memory aperture), and makes
 * the MTT in the file's firmware context: CREATE_MTT, WRITE_MTT in chunks,
 * and with MNIC_REG_MEM_MR a REG_MR over it.  The module is the only
 * writer of page lists: mnic_mem_cmd_check refuses a tenant's MTT
 * commands, an mtt the module did not make for the file, and physical
 * mode (mtt 0: raw host-physical addresses) once the NIC has an aperture.
 *
 * Lifetime: a registration ends with MNIC_IOC_DEREG_MEM (DEREG_MR,
 * DESTROY_MTT, then unpin) or with the file's context (release, remove):
 * DEALLOC_CONTEXT destroys every object of the context first, so the NIC
 * has no way left to the pages when they are unpinned.  If the firmware
 * does not confirm that (a failed DEALLOC_CONTEXT), the pages stay pinned
 * for good (counter mem_pages_leaked): a page the NIC may still write must
 * never go back to the allocator.
 */
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "mnic.h"

static unsigned int max_reg_mib = 1024;
module_param(max_reg_mib, uint, 0644);
MODULE_PARM_DESC(max_reg_mib,
		 "largest MNIC_IOC_REG_MEM (MiB); RLIMIT_MEMLOCK bounds a process without CAP_IPC_LOCK too");

/* Entries per WRITE_MTT: 32 KiB of page addresses, 65 mailbox blocks,
 * far inside MNIC_CMD_MAX_LEN and the driver area's mailbox room. */
#define MNIC_MTT_CHUNK 4096u
/* Pages per pin_user_pages_fast call (its count is an int). */
#define MNIC_PIN_CHUNK 65536u

struct mnic_mem {
	struct list_head node;             /* in mnic_file.mems */
	struct mm_struct *mm;              /* charged pinned_vm (mmgrab) */
	struct page **pages;
	u32 npages;
	u32 mtt;
	u32 lkey;                          /* 0: no MR */
};

static bool has_aperture(const struct mnic_kdev *d)
{
	return READ_ONCE(d->hostmem_size) != 0;
}

/* ---- the tenant's commands (MNIC_IOC_CMD) ------------------------------ */

/* Where an object command names memory: an mtt field and, for a queue,
 * its size (0: no queue, the mtt is not used). */
#define MNIC_NO_SIZE 0xffffu
struct mtt_ref {
	u16 mtt_at;
	u16 size_at;                       /* MNIC_NO_SIZE: always used (an MR) */
};
#define QREF_(type, q) \
	{ offsetof(type, q.ring_mtt), offsetof(type, q.size) }, \
	{ offsetof(type, q.dbrec_mtt), offsetof(type, q.size) }
static const struct {
	u16 opcode;
	u16 len;                           /* an input that holds the fields */
	u8 n;
	struct mtt_ref ref[4];
} mnic_mtt_refs[] = {
	{ MNIC_CMD_REG_MR, sizeof(struct mnic_cmd_reg_mr_in), 1,
	  { { offsetof(struct mnic_cmd_reg_mr_in, mtt), MNIC_NO_SIZE } } },
	{ MNIC_CMD_CREATE_CQ, sizeof(struct mnic_cmd_create_cq_in), 2,
	  { QREF_(struct mnic_cmd_create_cq_in, q) } },
	{ MNIC_CMD_CREATE_SRQ, sizeof(struct mnic_cmd_create_srq_in), 2,
	  { QREF_(struct mnic_cmd_create_srq_in, q) } },
	{ MNIC_CMD_CREATE_QP, sizeof(struct mnic_cmd_create_qp_in), 4,
	  { QREF_(struct mnic_cmd_create_qp_in, sq), QREF_(struct mnic_cmd_create_qp_in, rq) } },
};
#undef QREF_

static u32 get_u32(const u8 *in, u16 at)
{
	u32 v;

	memcpy(&v, in + at, sizeof(v));
	return v;
}

static bool file_owns_mtt(struct mnic_file *mf, u32 mtt)
{
	struct mnic_mem *m;
	bool found = false;

	mutex_lock(&mf->mem_lock);
	list_for_each_entry(m, &mf->mems, node)
		if (m->mtt == mtt) {
			found = true;
			break;
		}
	mutex_unlock(&mf->mem_lock);
	return found;
}

/* A tenant's command, in the kernel copy the firmware gets: it may name
 * only MTTs the module made for this file, never write page lists, and
 * not use physical mode when the NIC reaches host memory (an HPA there is
 * any page of the host).  0 or -errno, counted. */
int mnic_mem_cmd_check(struct mnic_file *mf, const u8 *in, u32 in_len)
{
	struct mnic_kdev *d = mf->d;
	const struct mnic_cmd_in_hdr *hdr = (const void *)in;
	size_t i;
	u8 j;

	if (hdr->opcode == MNIC_CMD_CREATE_MTT || hdr->opcode == MNIC_CMD_WRITE_MTT ||
	    hdr->opcode == MNIC_CMD_DESTROY_MTT) {
		mnic_count(d, MNIC_KCNT_refused_mtt);
		dev_dbg(&d->pdev->dev, "%s refused: the module owns page lists\n",
			mnic_opcode_name(hdr->opcode));
		return -EPERM;
	}
	/* An image restores objects with the addresses it carries; the
	 * module does not yet refill a tenant's MTTs: with an aperture those
	 * addresses would be raw host pages. */
	if (hdr->opcode == MNIC_CMD_RESTORE_OBJECT && has_aperture(d)) {
		mnic_count(d, MNIC_KCNT_refused_phys);
		return -EPERM;
	}
	for (i = 0; i < ARRAY_SIZE(mnic_mtt_refs); i++) {
		if (mnic_mtt_refs[i].opcode != hdr->opcode)
			continue;
		/* Too short to hold the fields: the firmware's dispatcher
		 * refuses it (BAD_INPUT_LEN) before any handler runs, and
		 * the caller sees that status. */
		if (in_len < mnic_mtt_refs[i].len)
			break;
		for (j = 0; j < mnic_mtt_refs[i].n; j++) {
			const struct mtt_ref *r = &mnic_mtt_refs[i].ref[j];
			u32 mtt = get_u32(in, r->mtt_at);

			if (r->size_at != MNIC_NO_SIZE && get_u32(in, r->size_at) == 0)
				continue;
			if (mtt == MNIC_MTT_NONE && has_aperture(d)) {
				mnic_count(d, MNIC_KCNT_refused_phys);
				dev_dbg(&d->pdev->dev, "%s refused: physical mode on a NIC with host memory\n",
					mnic_opcode_name(hdr->opcode));
				return -EPERM;
			}
			if (mtt != MNIC_MTT_NONE && !file_owns_mtt(mf, mtt)) {
				mnic_count(d, MNIC_KCNT_refused_mtt);
				return -EPERM;
			}
		}
		break;
	}
	return 0;
}

/* ---- pinning ---------------------------------------------------------- */

/* Charge npages to the process's pinned_vm (/proc/PID/status VmPin),
 * within RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK. */
static int charge_pinned(struct mnic_kdev *d, struct mm_struct *mm, u64 npages)
{
	u64 limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	u64 now = atomic64_add_return(npages, &mm->pinned_vm);

	if (now > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		mnic_count(d, MNIC_KCNT_reg_refused_memlock);
		return -ENOMEM;
	}
	return 0;
}

static void mem_unpin(struct mnic_kdev *d, struct mnic_mem *m, u32 npinned)
{
	/* Dirty: the NIC may have written any of them. */
	unpin_user_pages_dirty_lock(m->pages, npinned, true);
	atomic64_sub(m->npages, &m->mm->pinned_vm);
	atomic64_add(npinned, &d->cnt[MNIC_KCNT_mem_pages_unpinned]);
}

static void mem_free(struct mnic_mem *m)
{
	mmdrop(m->mm);
	kvfree(m->pages);
	kfree(m);
}

static int mem_pin(struct mnic_kdev *d, struct mnic_mem *m, unsigned long start)
{
	u32 done = 0;
	int n;

	while (done < m->npages) {
		n = pin_user_pages_fast(start + ((unsigned long)done << PAGE_SHIFT),
					min(m->npages - done, MNIC_PIN_CHUNK),
					FOLL_WRITE | FOLL_LONGTERM, m->pages + done);
		if (n <= 0) {
			if (done)
				unpin_user_pages(m->pages, done);
			mnic_count(d, MNIC_KCNT_reg_refused_pin);
			return n ? n : -EFAULT;
		}
		done += n;
	}
	atomic64_add(done, &d->cnt[MNIC_KCNT_mem_pages_pinned]);
	return 0;
}

/* ---- the module's MTT and MR commands (also mnic_ib_mr.c, mnic_ib_cq.c,
 * mnic_ib_qp.c: the RDMA device's pinned memory goes the same way) ------- */

int mnic_mtt_destroy(struct mnic_kdev *d, u16 ctx, u32 mtt, u32 timeout_ms)
{
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = MNIC_CMD_DESTROY_MTT, .ctx = ctx }, .handle = mtt,
	};
	struct mnic_cmd_simple_out out;

	return mnic_module_cmd(d, &in, sizeof(in), &out, sizeof(out), timeout_ms);
}

int mnic_mr_dereg_cmd(struct mnic_kdev *d, u16 ctx, u32 lkey, u32 timeout_ms)
{
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = MNIC_CMD_DEREG_MR, .ctx = ctx }, .handle = lkey,
	};
	struct mnic_cmd_simple_out out;

	return mnic_module_cmd(d, &in, sizeof(in), &out, sizeof(out), timeout_ms);
}

/* WRITE_MTT of every entry, MNIC_MTT_CHUNK at a time; the page addresses
 * come from next_page, in order. */
int mnic_mtt_write(struct mnic_kdev *d, u16 ctx, u32 mtt, u32 npages,
		   u64 (*next_page)(void *it), void *it, u32 timeout_ms)
{
	struct mnic_cmd_write_mtt_in *in;
	struct mnic_cmd_simple_out out;
	u32 first, count, i;
	u64 *pages;
	int ret = 0;

	in = kvmalloc(sizeof(*in) + MNIC_MTT_CHUNK * sizeof(u64), GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	pages = (u64 *)(in + 1);
	for (first = 0; first < npages && !ret; first += count) {
		count = min(npages - first, MNIC_MTT_CHUNK);
		*in = (struct mnic_cmd_write_mtt_in){
			.hdr = { .opcode = MNIC_CMD_WRITE_MTT, .ctx = ctx },
			.mtt = mtt, .first = first, .count = count,
		};
		for (i = 0; i < count; i++)
			pages[i] = next_page(it);
		ret = mnic_module_cmd(d, in, sizeof(*in) + count * sizeof(u64), &out, sizeof(out),
				      timeout_ms);
	}
	kvfree(in);
	return ret;
}

/* An MTT in context ctx for [iova, iova + length) over npages PAGE_SIZE
 * pages, whose host-physical addresses next_page gives in order:
 * CREATE_MTT (its answer must cover exactly npages), WRITE_MTT of every
 * entry; on failure the MTT is destroyed again (if that fails too,
 * -EREMOTEIO: the firmware may still hold it, the pages must stay pinned). */
int mnic_mtt_create(struct mnic_kdev *d, u16 ctx, u64 iova, u64 length, u32 npages,
		    u64 (*next_page)(void *it), void *it, u32 timeout_ms, u32 *mtt)
{
	struct mnic_cmd_create_mtt_in in = {
		.hdr = { .opcode = MNIC_CMD_CREATE_MTT, .ctx = ctx },
		.iova = iova, .length = length, .page_shift = PAGE_SHIFT,
	};
	struct mnic_cmd_create_mtt_out out;
	int ret = mnic_module_cmd(d, &in, sizeof(in), &out, sizeof(out), timeout_ms);

	if (ret)
		return ret;
	if (out.mtt == MNIC_MTT_NONE || out.npages != npages) {
		mnic_count(d, MNIC_KCNT_reg_bad_reply);
		dev_err_ratelimited(&d->pdev->dev,
				    "CREATE_MTT answered mtt %u of %u pages for %u pinned\n",
				    out.mtt, out.npages, npages);
		if (out.mtt != MNIC_MTT_NONE && mnic_mtt_destroy(d, ctx, out.mtt, timeout_ms))
			return -EREMOTEIO;
		return -EPROTO;
	}
	ret = mnic_mtt_write(d, ctx, out.mtt, npages, next_page, it, timeout_ms);
	if (ret) {
		if (mnic_mtt_destroy(d, ctx, out.mtt, timeout_ms))
			return -EREMOTEIO;
		return ret;
	}
	*mtt = out.mtt;
	return 0;
}

int mnic_mr_reg_cmd(struct mnic_kdev *d, u16 ctx, u32 pd, u32 access, u64 addr, u64 length,
		    u32 mtt, u32 timeout_ms, u32 *lkey, u32 *rkey)
{
	struct mnic_cmd_reg_mr_in in = {
		.hdr = { .opcode = MNIC_CMD_REG_MR, .ctx = ctx },
		.pd = pd, .access = access, .addr = addr, .length = length, .mtt = mtt,
	};
	struct mnic_cmd_reg_mr_out out;
	int ret = mnic_module_cmd(d, &in, sizeof(in), &out, sizeof(out), timeout_ms);

	if (!ret) {
		*lkey = out.lkey;
		*rkey = out.rkey;
	}
	return ret;
}

/* The pages of a registration, in order. */
struct page_walk {
	struct page **pages;
	u32 next;
};

static u64 next_pinned_page(void *it)
{
	struct page_walk *w = it;

	/* Host-physical address = this VM's physical address
	 * (docs/host-interface.md "GPA and the RAM file"). */
	return page_to_phys(w->pages[w->next++]);
}

/* ---- ioctls ----------------------------------------------------------- */

long mnic_ioctl_reg_mem(struct mnic_file *mf, struct mnic_ioc_reg_mem __user *uarg)
{
	struct mnic_kdev *d = mf->d;
	struct page_walk walk = { 0 };
	struct mnic_ioc_reg_mem r;
	unsigned long start;
	struct mnic_mem *m;
	u64 end, npages;
	int ret;

	if (copy_from_user(&r, uarg, sizeof(r)))
		return -EFAULT;
	if (r.size != sizeof(r) || r.version == 0 || r.version > MNIC_IOC_VERSION ||
	    (r.flags & ~MNIC_REG_MEM_MR) || r.mtt || r.lkey || r.rkey || r.npages ||
	    r.page_shift || (!(r.flags & MNIC_REG_MEM_MR) && (r.pd || r.access))) {
		mnic_count(d, MNIC_KCNT_refused_struct);
		return -EINVAL;
	}
	/* Hostile ranges: empty, wrapping, past the user address space,
	 * larger than the module allows (checked before anything is pinned). */
	if (r.length == 0 || check_add_overflow(r.addr, r.length, &end) || end > TASK_SIZE_MAX) {
		mnic_count(d, MNIC_KCNT_reg_refused_range);
		return -EINVAL;
	}
	if (r.length > (u64)max_reg_mib << 20) {
		mnic_count(d, MNIC_KCNT_reg_refused_range);
		return -E2BIG;
	}
	if (!has_aperture(d)) {
		/* The NIC reaches only its BAR window: host pages mean nothing to it. */
		mnic_count(d, MNIC_KCNT_reg_no_aperture);
		return -EOPNOTSUPP;
	}
	start = r.addr & PAGE_MASK;
	npages = (PAGE_ALIGN(end) - start) >> PAGE_SHIFT;

	ret = mnic_file_ctx(mf, 0, 0);
	if (ret)
		return ret;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->npages = npages;
	m->mm = current->mm;
	mmgrab(m->mm);
	m->pages = kvmalloc_array(npages, sizeof(*m->pages), GFP_KERNEL);
	if (!m->pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = charge_pinned(d, m->mm, npages);
	if (ret)
		goto err_free;
	ret = mem_pin(d, m, start);
	if (ret)
		goto err_uncharge;
	walk.pages = m->pages;
	ret = mnic_mtt_create(d, mf->ctx, r.addr, r.length, m->npages, next_pinned_page, &walk, 0,
			      &m->mtt);
	if (ret == -EREMOTEIO)
		goto err_leak;
	if (ret)
		goto err_unpin;
	if (r.flags & MNIC_REG_MEM_MR) {
		ret = mnic_mr_reg_cmd(d, mf->ctx, r.pd, r.access, r.addr, r.length, m->mtt, 0,
				      &r.lkey, &r.rkey);
		if (ret)
			goto err_mtt;
		m->lkey = r.lkey;
	}
	r.mtt = m->mtt;
	r.npages = m->npages;
	r.page_shift = PAGE_SHIFT;
	mutex_lock(&mf->mem_lock);
	list_add(&m->node, &mf->mems);
	mutex_unlock(&mf->mem_lock);
	mnic_count(d, MNIC_KCNT_reg_ok);
	if (copy_to_user(uarg, &r, sizeof(r))) {
		/* The caller cannot know the handle: take it back. */
		mnic_count(d, MNIC_KCNT_copy_fault);
		mnic_mem_dereg(mf, m->mtt);
		return -EFAULT;
	}
	return 0;

err_mtt:
	if (!mnic_mtt_destroy(d, mf->ctx, m->mtt, 0))
		goto err_unpin;
err_leak:
	/* Still in the firmware: its pages stay pinned for good. */
	atomic64_add(m->npages, &d->cnt[MNIC_KCNT_mem_pages_leaked]);
	atomic64_sub(m->npages, &m->mm->pinned_vm);
	mnic_count(d, MNIC_KCNT_reg_failed);
	mem_free(m);  /* the pins stay; only the array goes */
	return ret;
err_unpin:
	mem_unpin(d, m, m->npages);
	mnic_count(d, MNIC_KCNT_reg_failed);
	mem_free(m);
	return ret;
err_uncharge:
	atomic64_sub(m->npages, &m->mm->pinned_vm);
err_free:
	mnic_count(d, MNIC_KCNT_reg_failed);
	mem_free(m);
	return ret;
}

/* Deregister mf's registration mtt: DEREG_MR, DESTROY_MTT, unpin.
 * -ENOENT: none; -EBUSY: a queue still uses the MTT (nothing changes). */
int mnic_mem_dereg(struct mnic_file *mf, u32 mtt)
{
	struct mnic_kdev *d = mf->d;
	struct mnic_mem *m, *found = NULL;
	int ret;

	mutex_lock(&mf->mem_lock);
	list_for_each_entry(m, &mf->mems, node)
		if (m->mtt == mtt) {
			found = m;
			break;
		}
	if (!found) {
		mutex_unlock(&mf->mem_lock);
		mnic_count(d, MNIC_KCNT_dereg_refused);
		return -ENOENT;
	}
	/* The MR first: the MTT is busy while it stands.  An MR the tenant
	 * deregistered itself answers as missing, which is fine. */
	if (found->lkey && !mnic_mr_dereg_cmd(d, mf->ctx, found->lkey, 0))
		found->lkey = 0;
	ret = mnic_mtt_destroy(d, mf->ctx, mtt, 0);
	if (ret) {
		mutex_unlock(&mf->mem_lock);
		mnic_count(d, MNIC_KCNT_dereg_refused);
		return ret;
	}
	list_del(&found->node);
	mutex_unlock(&mf->mem_lock);
	mem_unpin(d, found, found->npages);
	mem_free(found);
	mnic_count(d, MNIC_KCNT_dereg_ok);
	return 0;
}

long mnic_ioctl_dereg_mem(struct mnic_file *mf, struct mnic_ioc_dereg_mem __user *uarg)
{
	struct mnic_ioc_dereg_mem r;

	if (copy_from_user(&r, uarg, sizeof(r)))
		return -EFAULT;
	if (r.size != sizeof(r) || r.version == 0 || r.version > MNIC_IOC_VERSION || r.reserved) {
		mnic_count(mf->d, MNIC_KCNT_refused_struct);
		return -EINVAL;
	}
	return mnic_mem_dereg(mf, r.mtt);
}

/* The file's context is gone (ctx_lock held by the caller): every
 * registration goes.  dma_stopped: the firmware confirmed it (every
 * object of the context destroyed), so the pages are unpinned; else they
 * stay pinned for good and are counted as leaked. */
void mnic_mem_forget(struct mnic_file *mf, bool dma_stopped)
{
	struct mnic_kdev *d = mf->d;
	struct mnic_mem *m, *tmp;

	mutex_lock(&mf->mem_lock);
	list_for_each_entry_safe(m, tmp, &mf->mems, node) {
		list_del(&m->node);
		if (dma_stopped) {
			mem_unpin(d, m, m->npages);
		} else {
			atomic64_add(m->npages, &d->cnt[MNIC_KCNT_mem_pages_leaked]);
			atomic64_sub(m->npages, &m->mm->pinned_vm);
		}
		mem_free(m);
	}
	mutex_unlock(&mf->mem_lock);
}
