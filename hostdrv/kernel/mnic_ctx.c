// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: tenancy.  Every open file of /dev/mnicN is a firmware context
 * (mnic/cmd.h "contexts"): allocated by the module on first need
 * (MNIC_IOC_CTX, the first MNIC_IOC_CMD issued in it, the first mmap of
 * its user-area range), freed with DEALLOC_CONTEXT when the file is
 * released, so a process that dies leaves no object behind.
 *
 * The command policy: the module, never user space, writes hdr.ctx.  An
 * ordinary command is issued in the file's context; a command of the
 * privileged set is issued as MNIC_CTX_MGMT for a caller with
 * CAP_NET_ADMIN and refused with -EPERM for any other; the module owns
 * ALLOC/DEALLOC_CONTEXT.  CAP_NET_ADMIN and not CAP_SYS_ADMIN: the set
 * configures and controls a network device (migration policy, its
 * firmware, other tenants' connections), the capability ethtool and
 * devlink flashing ask for, and a migration agent should not need the
 * catch-all capability.  capable() checks the initial user namespace:
 * NET_ADMIN inside a container's own namespace is not enough, and a file
 * descriptor handed to another process carries no privilege. */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/uaccess.h>

#include "mnic.h"

static unsigned int ctx_ua_mib = 16;
module_param(ctx_ua_mib, uint, 0644);
MODULE_PARM_DESC(ctx_ua_mib,
		 "user-area range of an open file's context unless MNIC_IOC_CTX asks (MiB; at most a quarter of the user area; halved down to 64 KiB while the firmware has no room)");

/* How a command is issued (mnic_cmd_policy). */
enum mnic_cmd_pol {
	MNIC_POL_OWN,      /* in the file's context (the default) */
	MNIC_POL_VIEW,     /* a query: as MNIC_CTX_MGMT for CAP_NET_ADMIN (the whole
			      NIC), else in the file's context (its own objects) */
	MNIC_POL_SELF,     /* names a context (handle_in): the file's own (or
			      MNIC_CTX_SELF) in its context, another: privileged */
	MNIC_POL_PRIV,     /* CAP_NET_ADMIN, then as MNIC_CTX_MGMT; else -EPERM */
	MNIC_POL_MODULE,   /* the module's alone: refused */
};

/* Opcodes whose policy is not MNIC_POL_OWN: the privileged set of
 * mnic/cmd.h "contexts", and the context commands the module keeps. */
static const struct {
	u16 opcode;
	u8 policy;
} mnic_cmd_policies[] = {
	{ MNIC_CMD_QUERY_DEVICE, MNIC_POL_VIEW },
	{ MNIC_CMD_QUERY_QP, MNIC_POL_VIEW },
	{ MNIC_CMD_QUERY_COUNTERS, MNIC_POL_PRIV },
	{ MNIC_CMD_MIG_CONFIG, MNIC_POL_PRIV },
	{ MNIC_CMD_QUERY_DCQCN, MNIC_POL_VIEW },
	{ MNIC_CMD_SET_DCQCN, MNIC_POL_PRIV },
	{ MNIC_CMD_SET_GID, MNIC_POL_PRIV },
	{ MNIC_CMD_CREATE_ETHQ, MNIC_POL_MODULE },
	{ MNIC_CMD_DESTROY_ETHQ, MNIC_POL_MODULE },
	{ MNIC_CMD_FW_FLASH_BEGIN, MNIC_POL_PRIV },
	{ MNIC_CMD_FW_FLASH_DATA, MNIC_POL_PRIV },
	{ MNIC_CMD_FW_FLASH_END, MNIC_POL_PRIV },
	{ MNIC_CMD_FW_ACTIVATE, MNIC_POL_PRIV },
	{ MNIC_CMD_DUMP_CONTEXT, MNIC_POL_SELF },
	{ MNIC_CMD_RESUME_CONTEXT, MNIC_POL_SELF },
	{ MNIC_CMD_ABORT_DUMP, MNIC_POL_SELF },
	{ MNIC_CMD_QUERY_CONTEXT, MNIC_POL_SELF },
	{ MNIC_CMD_ALLOC_CONTEXT, MNIC_POL_MODULE },
	{ MNIC_CMD_DEALLOC_CONTEXT, MNIC_POL_MODULE },
};

/* The policy of an opcode; -1: not an opcode of mnic/cmd.h. */
static int cmd_policy_of(u16 opcode)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mnic_cmd_policies); i++)
		if (mnic_cmd_policies[i].opcode == opcode)
			return mnic_cmd_policies[i].policy;
	return mnic_opcode_name(opcode) ? MNIC_POL_OWN : -1;
}

/* Firmware status -> errno: the syndrome's errno when it carries one. */
static int status_errno(const struct mnic_cmd_out_hdr *h)
{
	u32 e = MNIC_SYND_ERRNO(h->syndrome);

	if (e > 0 && e < MAX_ERRNO)
		return -(int)e;
	return h->status == MNIC_CMD_STAT_NO_RESOURCES ? -ENOSPC : -EIO;
}

/* One command of the module's own (hdr.ctx as the caller set it: MNIC_CTX_MGMT,
 * or a file's context for the objects it makes for that file). */
int mnic_module_cmd(struct mnic_kdev *d, void *in, u32 in_len, void *out, u32 out_len,
		      u32 timeout_ms)
{
	struct mnic_kcmd k = { .in = in, .in_len = in_len, .out = out, .out_len = out_len,
			       .timeout_ms = timeout_ms, .flags = MNIC_KCMD_F_MODULE };
	int ret = mnic_cmd_run(d, &k);

	if (ret)
		return ret;
	if (k.delivery != MNIC_CMD_DELIV_OK)
		return -EIO;
	if (((struct mnic_cmd_out_hdr *)out)->status != MNIC_CMD_STAT_OK)
		return status_errno(out);
	return 0;
}

/* DEALLOC_CONTEXT: the firmware destroys every object of the context and
 * frees its range.  A failure is counted and logged. */
int mnic_ctx_dealloc(struct mnic_kdev *d, u16 ctx, u32 timeout_ms)
{
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = MNIC_CMD_DEALLOC_CONTEXT, .ctx = MNIC_CTX_MGMT },
		.handle = ctx,
	};
	struct mnic_cmd_simple_out out;
	int ret = mnic_module_cmd(d, &in, sizeof(in), &out, sizeof(out), timeout_ms);

	if (ret) {
		mnic_count(d, MNIC_KCNT_ctx_dealloc_failed);
		dev_warn_ratelimited(&d->pdev->dev, "DEALLOC_CONTEXT %u failed (%d): its objects remain\n",
				     ctx, ret);
		return ret;
	}
	mnic_count(d, MNIC_KCNT_ctx_dealloc);
	return 0;
}

/* The firmware's answer names a range the module will map to user space:
 * it must lie in the user area of this BAR, aligned as the ABI says. */
static bool ctx_reply_ok(const struct mnic_kdev *d, const struct mnic_cmd_alloc_context_out *o,
			 u64 want_offset, u64 size)
{
	u64 window = d->bar_len - MNIC_DMA_WINDOW_OFFSET;

	return o->ctx != MNIC_CTX_MGMT && o->ctx <= MNIC_CTX_MAX &&
	       o->ua_offset % MNIC_CTX_UA_ALIGN == 0 && o->ua_size % MNIC_CTX_UA_ALIGN == 0 &&
	       o->ua_size != 0 && o->ua_size <= size && o->ua_offset >= MNIC_USER_AREA_OFFSET &&
	       o->ua_offset < window && o->ua_size <= window - o->ua_offset &&
	       (!want_offset || o->ua_offset == want_offset);
}

/* A range MNIC_IOC_CTX may ask for: aligned, in the user area, and
 * small enough that its mmap offsets stay below MNIC_MMAP_INITSEG.  An
 * exact offset needs its size (a restore knows both). */
static bool ctx_want_ok(const struct mnic_kdev *d, u64 want_offset, u64 want_size)
{
	u64 window = d->bar_len - MNIC_DMA_WINDOW_OFFSET;

	if (want_offset % MNIC_CTX_UA_ALIGN || want_size % MNIC_CTX_UA_ALIGN ||
	    want_size >= MNIC_MMAP_INITSEG || want_size > window - MNIC_USER_AREA_OFFSET)
		return false;
	return !want_offset || (want_size && want_offset >= MNIC_USER_AREA_OFFSET &&
				want_offset < window && want_size <= window - want_offset);
}

/* ALLOC_CONTEXT: a firmware context and its user-area range, checked and
 * zeroed (an open file's, mnic_file_ctx, or an RDMA ucontext's,
 * mnic_ib.c).  want_offset 0: any range; want_size 0: ctx_ua_mib (at most
 * a quarter of the user area), halved while the firmware has no room. */
int mnic_ctx_alloc(struct mnic_kdev *d, u64 want_offset, u64 want_size, struct mnic_fwctx *c)
{
	u64 user_size = d->bar_len - MNIC_DMA_WINDOW_OFFSET - MNIC_USER_AREA_OFFSET;
	struct mnic_cmd_alloc_context_out out;
	struct mnic_cmd_alloc_context_in in;
	u64 size;
	int ret;

	/* The default leaves room for three more tenants of the same size on
	 * a small BAR (a 16 MiB ivshmem BAR has a 13 MiB user area). */
	size = want_size ? want_size :
		min_t(u64, (u64)ctx_ua_mib << 20, round_down(user_size / 4, MNIC_CTX_UA_ALIGN));
	size = round_down(min_t(u64, size, MNIC_MMAP_INITSEG - MNIC_CTX_UA_ALIGN), MNIC_CTX_UA_ALIGN);
	if (!size) {
		mnic_count(d, MNIC_KCNT_ctx_alloc_failed);
		return -ENOSPC;
	}
	for (;;) {
		in = (struct mnic_cmd_alloc_context_in){
			.hdr = { .opcode = MNIC_CMD_ALLOC_CONTEXT,
				 .op_mod = want_offset ? MNIC_CTX_UA_AT : MNIC_CTX_UA_ANY,
				 .ctx = MNIC_CTX_MGMT },
			.ua_offset = want_offset,
			.ua_size = size,
		};
		ret = mnic_module_cmd(d, &in, sizeof(in), &out, sizeof(out), 0);
		if (!ret || out.hdr.status != MNIC_CMD_STAT_NO_RESOURCES || want_size ||
		    size <= MNIC_CTX_UA_ALIGN)
			break;
		size = round_down(size / 2, MNIC_CTX_UA_ALIGN);
	}
	if (ret && out.hdr.status == MNIC_CMD_STAT_BAD_OP) {
		/* A firmware from before contexts: no tenant can be served. */
		dev_err_ratelimited(&d->pdev->dev,
				    "the firmware does not serve ALLOC_CONTEXT: update it to one with contexts\n");
		ret = -EPROTO;
	}
	if (ret) {
		mnic_count(d, MNIC_KCNT_ctx_alloc_failed);
		dev_dbg(&d->pdev->dev, "ALLOC_CONTEXT (%llu bytes) failed: %d\n", size, ret);
		return ret;
	}
	if (!ctx_reply_ok(d, &out, want_offset, size)) {
		mnic_count(d, MNIC_KCNT_ctx_bad_reply);
		dev_err_ratelimited(&d->pdev->dev,
				    "ALLOC_CONTEXT answered context %u range 0x%llx+0x%llx: not in the user area\n",
				    out.ctx, out.ua_offset, out.ua_size);
		if (out.ctx != MNIC_CTX_MGMT && out.ctx <= MNIC_CTX_MAX)
			mnic_ctx_dealloc(d, out.ctx, 0);
		return -EPROTO;
	}
	/* A range another tenant had before: none of its bytes reach this one. */
	memset_io(d->window + out.ua_offset, 0, out.ua_size);
	wmb();  /* the zeroes reach the BAR before the range is mapped */
	c->ctx = out.ctx;
	c->ua_offset = out.ua_offset;
	c->ua_size = out.ua_size;
	mnic_count(d, MNIC_KCNT_ctx_alloc);
	return 0;
}

/* ALLOC_CONTEXT for mf; ctx_lock held. */
static int ctx_alloc(struct mnic_file *mf, u64 want_offset, u64 want_size)
{
	struct mnic_fwctx c;
	int ret = mnic_ctx_alloc(mf->d, want_offset, want_size, &c);

	if (ret)
		return ret;
	mf->ctx = c.ctx;
	mf->ua_offset = c.ua_offset;
	mf->ua_size = c.ua_size;
	mf->has_ctx = true;
	return 0;
}

/* The file's context, allocated if it has none; caller holds remove_lock
 * for reading (the device is alive).  A range asked for that differs from
 * the context's: -EBUSY. */
int mnic_file_ctx(struct mnic_file *mf, u64 want_offset, u64 want_size)
{
	int ret = 0;

	mutex_lock(&mf->ctx_lock);
	if (!mf->has_ctx)
		ret = ctx_alloc(mf, want_offset, want_size);
	else if ((want_offset && want_offset != mf->ua_offset) ||
		 (want_size && want_size != mf->ua_size))
		ret = -EBUSY;
	mutex_unlock(&mf->ctx_lock);
	return ret;
}

/* Free the file's context, if any (release, or remove for files that
 * outlive it).  A failure is counted; the file has no context afterwards
 * either way. */
void mnic_file_ctx_free(struct mnic_file *mf, u32 timeout_ms)
{
	mutex_lock(&mf->ctx_lock);
	if (mf->has_ctx)
		mnic_mem_forget(mf, !mnic_ctx_dealloc(mf->d, mf->ctx,
					 timeout_ms ? timeout_ms : MNIC_CTX_RELEASE_TIMEOUT_MS));
	mf->has_ctx = false;
	mutex_unlock(&mf->ctx_lock);
}

/* remove, holding remove_lock for writing: free the contexts of the files
 * still open (a release that comes later sees the device dead and frees
 * nothing).  Their mappings go first: a range freed here may belong to
 * another tenant after a rebind, so a later access gets SIGBUS rather than
 * that tenant's memory.  After the first failure the firmware is not
 * answering: the rest are only forgotten. */
void mnic_files_ctx_free(struct mnic_kdev *d)
{
	struct mnic_file *mf;
	bool answering = true;

	mutex_lock(&d->files_lock);
	list_for_each_entry(mf, &d->files, node) {
		unmap_mapping_range(mf->mapping, 0, 0, 1);
		mutex_lock(&mf->ctx_lock);
		if (mf->has_ctx && answering)
			answering = !mnic_ctx_dealloc(d, mf->ctx, MNIC_CTX_REMOVE_TIMEOUT_MS);
		else if (mf->has_ctx)
			mnic_count(d, MNIC_KCNT_ctx_dealloc_failed);
		/* Registered pages go back only if the firmware confirmed
		 * that the context, and so every way to them, is gone. */
		if (mf->has_ctx)
			mnic_mem_forget(mf, answering);
		mf->has_ctx = false;
		mutex_unlock(&mf->ctx_lock);
	}
	mutex_unlock(&d->files_lock);
}

long mnic_ioctl_ctx(struct mnic_file *mf, struct mnic_ioc_ctx __user *uarg)
{
	struct mnic_kdev *d = mf->d;
	struct mnic_ioc_ctx c;
	int ret;

	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;
	if (c.size != sizeof(c) || c.version == 0 || c.version > MNIC_IOC_VERSION ||
	    c.reserved || !ctx_want_ok(d, c.ua_offset, c.ua_size)) {
		mnic_count(d, MNIC_KCNT_refused_struct);
		return -EINVAL;
	}
	ret = mnic_file_ctx(mf, c.ua_offset, c.ua_size);
	if (ret)
		return ret;
	mutex_lock(&mf->ctx_lock);
	c.ctx = mf->ctx;
	c.ua_offset = mf->ua_offset;
	c.ua_size = mf->ua_size;
	mutex_unlock(&mf->ctx_lock);
	return copy_to_user(uarg, &c, sizeof(c)) ? -EFAULT : 0;
}

/* The file's context id, allocating it; ctx_lock is not held across the
 * command that follows: the context lives until release, and release
 * cannot run while this file is in an ioctl. */
static int own_ctx(struct mnic_file *mf, u16 *ctx)
{
	int ret = mnic_file_ctx(mf, 0, 0);

	if (!ret)
		*ctx = READ_ONCE(mf->ctx);
	return ret;
}

/* Decide how the command in `in` (the kernel copy the firmware gets) is
 * issued, and stamp hdr.ctx (and, for MNIC_POL_SELF, the handle) in it.
 * 0, or -errno with the refusal counted. */
int mnic_cmd_policy(struct mnic_file *mf, u8 *in, u32 in_len)
{
	struct mnic_kdev *d = mf->d;
	struct mnic_cmd_in_hdr *hdr = (struct mnic_cmd_in_hdr *)in;
	const size_t handle_at = offsetof(struct mnic_cmd_handle_in, handle);
	int policy = cmd_policy_of(hdr->opcode);
	u32 handle = 0;
	u16 ctx = MNIC_CTX_MGMT;
	int ret;

	switch (policy) {
	case MNIC_POL_OWN:
		break;
	case MNIC_POL_VIEW:
		if (ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN))
			goto mgmt;
		break;
	case MNIC_POL_SELF:
		/* Short of a handle, the command names no context of its own:
		 * privileged (the firmware refuses the length anyway). */
		if (in_len >= sizeof(struct mnic_cmd_handle_in))
			memcpy(&handle, in + handle_at, sizeof(handle));
		if (handle == MNIC_CTX_SELF)
			break;
		mutex_lock(&mf->ctx_lock);
		ret = mf->has_ctx && handle == mf->ctx;
		mutex_unlock(&mf->ctx_lock);
		if (ret)
			break;
		fallthrough;
	case MNIC_POL_PRIV:
		if (!capable(CAP_NET_ADMIN)) {
			mnic_count(d, MNIC_KCNT_refused_priv);
			dev_dbg(&d->pdev->dev, "%s refused: needs CAP_NET_ADMIN\n",
				mnic_opcode_name(hdr->opcode));
			return -EPERM;
		}
		goto mgmt;
	case MNIC_POL_MODULE:
		mnic_count(d, MNIC_KCNT_refused_ctx_opcode);
		return -EOPNOTSUPP;
	default:
		mnic_count(d, MNIC_KCNT_refused_opcode);
		dev_dbg(&d->pdev->dev, "opcode 0x%x refused: not in mnic/cmd.h\n", hdr->opcode);
		return -EOPNOTSUPP;
	}
	ret = mnic_mem_cmd_check(mf, in, in_len);
	if (ret)
		return ret;
	ret = own_ctx(mf, &ctx);
	if (ret)
		return ret;
	if (policy == MNIC_POL_SELF) {
		handle = ctx;
		memcpy(in + handle_at, &handle, sizeof(handle));
	}
mgmt:
	hdr->ctx = ctx;
	return 0;
}
