/* Contexts on the host side (mnic/cmd.h "contexts", docs/libmnic.md
 * "Contexts"): a tenant handle's own firmware context, made on first use;
 * the management handle's commands for contexts; adopting a context to act
 * for it (dump, restore); freeing the contexts of processes that died.
 *
 * BAR backend.  The library drives the command queue itself, so it is the
 * one that writes the issuing context into each command (cmdq.c).  A tenant
 * allocates its context as MNIC_CTX_MGMT (ALLOC_CONTEXT, UA_ANY), owner tag
 * = its process id, and frees it in mnic_close.  A tenant killed before
 * that leaves its context behind; the next tenant to allocate one frees
 * every context whose owner process no longer exists (kill(pid, 0) ==
 * ESRCH).  A reused pid only delays that (the context stays until that
 * process too is gone); pids of another pid namespace are not seen: the
 * BAR backend is for processes of one host, the kernel driver is the
 * boundary between containers.
 *
 * Kernel backend.  The module owns the contexts (one per open file, freed
 * on release), so a tenant handle only asks it for its range.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libmnic_int.h"

static uint64_t round_up_ua(uint64_t v)
{
	return (v + MNIC_CTX_UA_ALIGN - 1) & ~(uint64_t)(MNIC_CTX_UA_ALIGN - 1);
}

static void info_of(const struct mnic_cmd_query_context_out *o, struct mnic_ctx_info *info)
{
	memset(info, 0, sizeof(*info));
	info->ctx = o->ctx;
	info->owner_tag = o->owner_tag;
	info->ua_offset = o->ua_offset;
	info->ua_size = o->ua_size;
	info->n_pd = o->n_pd;
	info->n_mr = o->n_mr;
	info->n_cq = o->n_cq;
	info->n_srq = o->n_srq;
	info->n_qp = o->n_qp;
	info->flags = o->flags;
}

int mnic_ctx_set_range(struct mnic_dev *dev, uint64_t off, uint64_t size)
{
	if (off < dev->area_off || size == 0 || off - dev->area_off > dev->area_size ||
	    size > dev->area_size - (off - dev->area_off))
		return -ERANGE;   /* a range outside the user area: not from this firmware */
	dev->user = dev->area + (off - dev->area_off);
	dev->user_off = off;
	dev->user_size = size;
	return 0;
}

static int query_as(struct mnic_dev *dev, uint16_t issuer, uint32_t ctx, int next,
		    struct mnic_ctx_info *info)
{
	struct mnic_cmd_handle_in in;
	struct mnic_cmd_query_context_out o;
	int err;

	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_QUERY_CONTEXT;
	in.hdr.op_mod = next ? MNIC_QUERY_CTX_NEXT : MNIC_QUERY_CTX_BY_ID;
	in.handle = ctx;
	err = mnic_cmd_as(dev, issuer, &in, sizeof(in), &o, sizeof(o), NULL);
	if (err < 0)
		return err;
	if (o.ctx == MNIC_CTX_MGMT || o.ctx > MNIC_CTX_MAX || (next && o.ctx < ctx) ||
	    (!next && o.ctx != ctx)) {
		return mnic_reply_err(dev);
	}
	info_of(&o, info);
	return 0;
}

static int alloc_as_mgmt(struct mnic_dev *dev, uint16_t op_mod, uint64_t ua_offset,
			 uint64_t ua_size, uint32_t owner_tag, struct mnic_ctx_info *info)
{
	struct mnic_cmd_alloc_context_in in;
	struct mnic_cmd_alloc_context_out o;
	int err;

	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_ALLOC_CONTEXT;
	in.hdr.op_mod = op_mod;
	in.ua_offset = ua_offset;
	in.ua_size = round_up_ua(ua_size);
	in.owner_tag = owner_tag;
	err = mnic_cmd_as(dev, MNIC_CTX_MGMT, &in, sizeof(in), &o, sizeof(o), NULL);
	if (err < 0)
		return err;
	if (o.ctx == MNIC_CTX_MGMT || o.ctx > MNIC_CTX_MAX || o.ua_size < in.ua_size ||
	    (op_mod == MNIC_CTX_UA_AT && o.ua_offset != ua_offset)) {
		return mnic_reply_err(dev);
	}
	memset(info, 0, sizeof(*info));
	info->ctx = o.ctx;
	info->owner_tag = owner_tag;
	info->ua_offset = o.ua_offset;
	info->ua_size = o.ua_size;
	return 0;
}

static int dealloc_as(struct mnic_dev *dev, uint16_t issuer, uint32_t ctx)
{
	struct mnic_cmd_handle_in in;
	struct mnic_cmd_simple_out o;

	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_DEALLOC_CONTEXT;
	in.handle = ctx;
	return mnic_cmd_as(dev, issuer, &in, sizeof(in), &o, sizeof(o), NULL);
}

static int owner_gone(uint32_t pid)
{
	return pid > 1 && pid <= (uint32_t)INT32_MAX && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

static int reap(struct mnic_dev *dev)
{
	struct mnic_ctx_info ci;
	uint32_t next = 1;
	int freed = 0, kept = 0, err;

	while (next <= MNIC_CTX_MAX && (err = query_as(dev, MNIC_CTX_MGMT, next, 1, &ci)) == 0) {
		next = ci.ctx + 1;
		if (ci.owner_tag && owner_gone(ci.owner_tag)) {
			if (dealloc_as(dev, MNIC_CTX_MGMT, ci.ctx) == 0)
				freed++;
			else
				kept++;
		}
	}
	if (next <= MNIC_CTX_MAX && err != -ENXIO)
		return err;
	/* the dead owners' pages, once none of their contexts is left: the
	 * NIC may still reach the pages of one that would not go */
	if (!kept && mnic_hostmem_attach(dev) == 0)
		mnic_hostmem_reap(dev);
	return freed;
}

int mnic_reap_contexts(struct mnic_dev *dev)
{
	if (!dev)
		return -EINVAL;
	if (dev->backend != MNIC_BACKEND_BAR)
		return mnic_set_err(dev, MNIC_ERR_ARG, -EOPNOTSUPP);   /* the module frees them */
	return reap(dev);
}

/* The size a tenant asks for: its own setting, $MNIC_CTX_MEM, or half of
 * the user area (two tenants fit by default). */
static uint64_t tenant_size(const struct mnic_dev *dev)
{
	const char *env = getenv("MNIC_CTX_MEM");
	uint64_t v = dev->ctx_size;

	if (!v && env && *env) {
		char *end;
		unsigned long long x = strtoull(env, &end, 0);

		if (*end == 'K' || *end == 'k')
			x <<= 10;
		else if (*end == 'M' || *end == 'm')
			x <<= 20;
		v = x;
	}
	if (!v)
		v = (dev->area_size / 2) & ~(uint64_t)(MNIC_CTX_UA_ALIGN - 1);
	return round_up_ua(v ? v : MNIC_CTX_UA_ALIGN);
}

static int ensure_bar(struct mnic_dev *dev)
{
	struct mnic_ctx_info ci;
	uint32_t pid = (uint32_t)getpid();
	int err;

	if (dev->ctx_lost) {
		/* rebound by a migration: the context moved with its owner tag */
		err = mnic_find_context(dev, pid, &ci);
		if (err < 0)
			return err;
		/* host-memory mode: the memory is the view the reopen mapped */
		err = dev->hm_va ? 0 : mnic_ctx_set_range(dev, ci.ua_offset, ci.ua_size);
		if (err < 0)
			return mnic_set_err(dev, MNIC_ERR_REPLY, err);
		dev->ctx = (uint16_t)ci.ctx;
		dev->ctx_owned = 1;
		dev->ctx_lost = 0;
		return 0;
	}
	err = mnic_hostmem_attach(dev);
	if (err < 0)
		return err;
	reap(dev);
	/* host-memory mode: the context's memory is pages of the aperture, its
	 * window range only what ALLOC_CONTEXT needs */
	err = alloc_as_mgmt(dev, MNIC_CTX_UA_ANY, 0,
			    dev->hm_table ? MNIC_CTX_UA_ALIGN : tenant_size(dev), pid, &ci);
	if (err < 0)
		return err;
	err = mnic_ctx_set_range(dev, ci.ua_offset, ci.ua_size);
	if (err == 0 && dev->hm_table) {
		err = mnic_hostmem_view(dev, pid, tenant_size(dev), 0);
		if (err < 0) {
			dealloc_as(dev, MNIC_CTX_MGMT, ci.ctx);
			return err;
		}
	} else if (err == 0) {
		err = mnic_umem_reset(dev->user, dev->user_off, dev->user_size);
	}
	if (err < 0) {
		dealloc_as(dev, MNIC_CTX_MGMT, ci.ctx);
		return mnic_set_err(dev, MNIC_ERR_REPLY, err);
	}
	dev->ctx = (uint16_t)ci.ctx;
	dev->ctx_owned = 1;
	return 0;
}

int mnic_ctx_ensure(struct mnic_dev *dev)
{
	if (dev->role == MNIC_ROLE_MGMT || dev->backend != MNIC_BACKEND_BAR)
		return 0;
	if (dev->ctx && !dev->ctx_lost)
		return 0;
	return ensure_bar(dev);
}

static int find_mgmt_mem(struct mnic_dev *dev, struct mnic_ctx_info *ci)
{
	return mnic_find_context(dev, MNIC_OWNER_MGMT_MEM, ci);
}

int mnic_mem_ensure(struct mnic_dev *dev)
{
	struct mnic_ctx_info ci;
	int err;

	if (dev->role != MNIC_ROLE_MGMT)
		return mnic_ctx_ensure(dev);
	if (dev->backend != MNIC_BACKEND_BAR || dev->ctx != MNIC_CTX_MGMT || dev->mem_ready)
		return 0;   /* the module's range, or an adopted context's */
	err = mnic_hostmem_attach(dev);
	if (err < 0)
		return err;
	err = find_mgmt_mem(dev, &ci);
	if (err == -ESRCH) {
		err = alloc_as_mgmt(dev, MNIC_CTX_UA_ANY, 0,
				    dev->hm_table ? MNIC_CTX_UA_ALIGN : tenant_size(dev) / 2,
				    MNIC_OWNER_MGMT_MEM, &ci);
		if (err == 0 && (err = mnic_ctx_set_range(dev, ci.ua_offset, ci.ua_size)) == 0 &&
		    !dev->hm_table)
			err = mnic_umem_reset(dev->user, dev->user_off, dev->user_size);
	} else if (err == 0) {
		err = mnic_ctx_set_range(dev, ci.ua_offset, ci.ua_size);
	}
	/* host-memory mode: the management pages, found again (kept across
	 * mnicctl runs, at the VA they had) or taken now */
	if (err == 0 && dev->hm_table)
		err = mnic_hostmem_view(dev, MNIC_OWNER_MGMT_MEM, tenant_size(dev) / 2, 1);
	if (err < 0)
		return err;
	dev->mem_ready = 1;
	return 0;
}

int mnic_mgmt_mem_at(struct mnic_dev *dev, uint64_t off, uint64_t size)
{
	struct mnic_ctx_info ci;
	int err;

	if (dev->role != MNIC_ROLE_MGMT || dev->backend != MNIC_BACKEND_BAR)
		return -EINVAL;
	err = find_mgmt_mem(dev, &ci);
	if (err == 0 && (ci.ua_offset != off || ci.ua_size != size))
		return mnic_set_err(dev, MNIC_ERR_ARG, -EEXIST);   /* another range here */
	if (err == -ESRCH)
		err = alloc_as_mgmt(dev, MNIC_CTX_UA_AT, off, size, MNIC_OWNER_MGMT_MEM, &ci);
	if (err == 0)
		err = mnic_ctx_set_range(dev, off, size);
	if (err == 0)
		dev->mem_ready = 1;
	return err;
}

void mnic_ctx_release(struct mnic_dev *dev)
{
	if (dev->backend != MNIC_BACKEND_BAR || !dev->ctx_owned || !dev->ctx)
		return;
	if (dev->ctx_lost && ensure_bar(dev) < 0)
		return;   /* migrated and not found: nothing of ours to free here */
	/* a context may free itself; the objects go with it, then its pages
	 * (kept while the NIC may reach them: a reap frees them later) */
	if (dealloc_as(dev, dev->ctx, MNIC_CTX_SELF) == 0 && dev->role == MNIC_ROLE_TENANT)
		mnic_hostmem_release(dev, (uint32_t)getpid());
	dev->ctx = MNIC_CTX_MGMT;
	dev->ctx_owned = 0;
}

int mnic_set_context_size(struct mnic_dev *dev, uint64_t bytes)
{
	if (!dev || bytes == 0)
		return -EINVAL;
	if (dev->ctx)
		return mnic_set_err(dev, MNIC_ERR_ARG, -EBUSY);
	dev->ctx_size = round_up_ua(bytes);
	return 0;
}

int mnic_context(struct mnic_dev *dev, struct mnic_ctx_info *info)
{
	int err;

	if (!dev || !info)
		return -EINVAL;
	err = mnic_ctx_ensure(dev);
	if (err < 0)
		return err;
	if (dev->ctx == MNIC_CTX_MGMT) {
		memset(info, 0, sizeof(*info));
		info->ua_offset = dev->user_off;
		info->ua_size = dev->user_size;
		return 0;
	}
	return query_as(dev, dev->ctx, dev->ctx, 0, info);
}

int mnic_query_context(struct mnic_dev *dev, uint32_t ctx, int next, struct mnic_ctx_info *info)
{
	if (!dev || !info || ctx > 0xffffu)
		return -EINVAL;
	return query_as(dev, dev->ctx, ctx, next, info);
}

int mnic_alloc_context(struct mnic_dev *dev, uint64_t ua_offset, uint64_t ua_size,
		       uint32_t owner_tag, struct mnic_ctx_info *info)
{
	if (!dev || !info || ua_size == 0)
		return -EINVAL;
	if (dev->role != MNIC_ROLE_MGMT)
		return mnic_set_err(dev, MNIC_ERR_ARG, -EPERM);
	return alloc_as_mgmt(dev, ua_offset ? MNIC_CTX_UA_AT : MNIC_CTX_UA_ANY, ua_offset, ua_size,
			     owner_tag, info);
}

int mnic_dealloc_context(struct mnic_dev *dev, uint32_t ctx)
{
	if (!dev || ctx == MNIC_CTX_MGMT || ctx > MNIC_CTX_MAX)
		return -EINVAL;
	if (dev->ctx == ctx) {
		/* the context this handle acts as: back to the management view */
		int err = dealloc_as(dev, MNIC_CTX_MGMT, ctx);

		if (err == 0)
			mnic_adopt_context(dev, MNIC_CTX_MGMT);
		return err;
	}
	return dealloc_as(dev, dev->ctx, ctx);
}

int mnic_adopt_context(struct mnic_dev *dev, uint32_t ctx)
{
	struct mnic_ctx_info ci;
	int err;

	if (!dev || ctx > MNIC_CTX_MAX)
		return -EINVAL;
	if (dev->role != MNIC_ROLE_MGMT || dev->backend != MNIC_BACKEND_BAR)
		return mnic_set_err(dev, MNIC_ERR_ARG, -EPERM);
	if (ctx == MNIC_CTX_MGMT) {
		dev->ctx = MNIC_CTX_MGMT;
		dev->mem_ready = 0;
		return mnic_ctx_set_range(dev, dev->area_off, dev->area_size);
	}
	err = query_as(dev, MNIC_CTX_MGMT, ctx, 0, &ci);
	if (err < 0)
		return err;
	err = mnic_ctx_set_range(dev, ci.ua_offset, ci.ua_size);
	if (err < 0)
		return mnic_set_err(dev, MNIC_ERR_REPLY, err);
	dev->ctx = (uint16_t)ctx;
	return 0;
}

int mnic_find_context(struct mnic_dev *dev, uint32_t owner_tag, struct mnic_ctx_info *info)
{
	uint32_t next = 1;
	int err;

	if (!dev || !info || owner_tag == 0)
		return -EINVAL;
	while (next <= MNIC_CTX_MAX && (err = query_as(dev, MNIC_CTX_MGMT, next, 1, info)) == 0) {
		if (info->owner_tag == owner_tag)
			return 0;
		next = info->ctx + 1;
	}
	if (next <= MNIC_CTX_MAX && err != -ENXIO)
		return err;
	return mnic_set_err(dev, MNIC_ERR_ARG, -ESRCH);
}

enum mnic_role mnic_dev_role(const struct mnic_dev *dev)
{
	return dev ? dev->role : MNIC_ROLE_TENANT;
}
