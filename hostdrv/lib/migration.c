/* Migration orchestration: the sequence of device steps a live migration
 * is made of (dump on the sources, user-area copy, restore on the targets
 * with peer overrides, resume; or abort), over the commands of mig.c.  The
 * freeze and thaw of the process are the caller's (libmnic.h, "migration
 * orchestration", has the order of calls and the state each leaves). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libmnic_int.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *const step_names[] = {
	[MNIC_MIG_STEP_NONE] = "none",
	[MNIC_MIG_STEP_ADD_PAIR] = "add_pair",
	[MNIC_MIG_STEP_DUMP] = "checkpoint",
	[MNIC_MIG_STEP_TRANSFER] = "transfer",
	[MNIC_MIG_STEP_RESTORE] = "restore",
	[MNIC_MIG_STEP_RESUME] = "resume",
	[MNIC_MIG_STEP_ABORT] = "abort",
};

static const char *const state_names[] = {
	[MNIC_MIG_SETUP] = "SETUP",
	[MNIC_MIG_DUMPED] = "DUMPED",
	[MNIC_MIG_TRANSFERRED] = "TRANSFERRED",
	[MNIC_MIG_RESTORED] = "RESTORED",
	[MNIC_MIG_RESUMED] = "RESUMED",
	[MNIC_MIG_FAILED] = "FAILED",
	[MNIC_MIG_ABORTED] = "ABORTED",
};

const char *mnic_mig_step_name(enum mnic_mig_step step)
{
	return (unsigned)step < sizeof(step_names) / sizeof(step_names[0]) ? step_names[step] : "?";
}

const char *mnic_mig_state_name(enum mnic_mig_state state)
{
	return (unsigned)state < sizeof(state_names) / sizeof(state_names[0]) ? state_names[state]
									       : "?";
}

/* A step failed on `dev`: keep the device's own account of it (a later
 * command, e.g. the abort, would overwrite it) and what the caller must do. */
static int fail(struct mnic_mig *m, enum mnic_mig_step step, uint32_t pair, struct mnic_dev *dev,
		const char *what, int err)
{
	struct mnic_mig_error *e = &m->err;

	memset(e, 0, sizeof(*e));
	e->step = step;
	e->pair = (int32_t)pair;
	e->dev = dev;
	e->what = what;
	e->err = err;
	e->action = step == MNIC_MIG_STEP_RESUME ? MNIC_MIG_ACT_TARGET : MNIC_MIG_ACT_ABORT;
	if (dev)
		e->result = *mnic_last_error(dev);
	m->state = MNIC_MIG_FAILED;
	return err;
}

static int any_resumed(const struct mnic_mig *m)
{
	for (uint32_t i = 0; i < m->n_pairs; i++)
		if (m->pair[i].resumed)
			return 1;
	return 0;
}

/* May `step` run now?  In order from its predecessor's state; a failed
 * resume may be retried. */
static int in_order(const struct mnic_mig *m, enum mnic_mig_step step)
{
	switch (step) {
	case MNIC_MIG_STEP_ADD_PAIR:
		return m->state == MNIC_MIG_SETUP;
	case MNIC_MIG_STEP_DUMP:
		return m->state == MNIC_MIG_SETUP && m->n_pairs > 0;
	case MNIC_MIG_STEP_TRANSFER:
		return m->state == MNIC_MIG_DUMPED;
	case MNIC_MIG_STEP_RESTORE:
		return m->state == MNIC_MIG_TRANSFERRED;
	case MNIC_MIG_STEP_RESUME:
		return m->state == MNIC_MIG_RESTORED ||
		       (m->state == MNIC_MIG_FAILED && m->err.step == MNIC_MIG_STEP_RESUME);
	case MNIC_MIG_STEP_ABORT:
		return m->state != MNIC_MIG_RESUMED && !any_resumed(m);
	default:
		return 0;
	}
}

static void progress(const struct mnic_mig *m, uint32_t pair, enum mnic_mig_step step)
{
	if (m->opts.progress)
		m->opts.progress(m->opts.arg, m, pair, step);
}

int mnic_mig_begin(struct mnic_mig *m, const struct mnic_mig_opts *opts)
{
	if (!m)
		return -EINVAL;
	if (opts && opts->override && opts->override->old_dip && !opts->override->new_dip)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->err.pair = -1;
	if (opts)
		m->opts = *opts;
	if (m->opts.override) {
		m->override = *m->opts.override;
		m->opts.override = &m->override;   /* the caller's may go away */
	}
	return 0;
}

int mnic_mig_add_pair(struct mnic_mig *m, struct mnic_dev *src, struct mnic_dev *dst)
{
	struct mnic_mig_pair *p;
	uint32_t i;
	int err;

	if (!m || !src || !dst || src == dst)
		return -EINVAL;
	if (!in_order(m, MNIC_MIG_STEP_ADD_PAIR))
		return -EPROTO;
	if (m->n_pairs == MNIC_MIG_MAX_PAIRS)
		return -E2BIG;
	/* with two pairs the overrides follow from the four addresses */
	if (m->n_pairs == 1 && m->opts.override)
		return -EINVAL;
	i = m->n_pairs;
	p = &m->pair[i];
	memset(p, 0, sizeof(*p));
	err = mnic_query_device(src, &p->src_info);
	if (err < 0)
		return fail(m, MNIC_MIG_STEP_ADD_PAIR, i, src, "QUERY_DEVICE", err);
	err = mnic_query_device(dst, &p->dst_info);
	if (err < 0)
		return fail(m, MNIC_MIG_STEP_ADD_PAIR, i, dst, "QUERY_DEVICE", err);
	err = mnic_context(src, &p->src_ctx);
	if (err < 0)
		return fail(m, MNIC_MIG_STEP_ADD_PAIR, i, src, "QUERY_CONTEXT", err);
	/* a context moves into a context of its own on the target, made by
	 * the management handle there */
	if (p->src_ctx.ctx && (mnic_dev_role(dst) != MNIC_ROLE_MGMT ||
			       mnic_dev_backend(dst) != MNIC_BACKEND_BAR))
		return -EINVAL;
	p->src = src;
	p->dst = dst;
	m->n_pairs++;
	return (int)i;
}

int mnic_mig_dump(struct mnic_mig *m)
{
	if (!m)
		return -EINVAL;
	if (!in_order(m, MNIC_MIG_STEP_DUMP))
		return -EPROTO;
	for (uint32_t i = 0; i < m->n_pairs; i++) {
		struct mnic_mig_pair *p = &m->pair[i];
		double t0;
		int err;

		progress(m, i, MNIC_MIG_STEP_DUMP);
		t0 = now_ms();
		err = mnic_dump_context(p->src, 0, &p->img, &p->img_len, &p->stats);
		p->checkpoint_ms = now_ms() - t0;
		if (err < 0)
			return fail(m, MNIC_MIG_STEP_DUMP, i, p->src, "DUMP_CONTEXT", err);
		p->dumped = 1;
	}
	m->state = MNIC_MIG_DUMPED;
	return 0;
}

/* The memory of the moving context onto the target: with host memory on
 * both NICs its pages (the process's memory at new page frames: MigrOS's
 * split, restore refills the MTTs), else its user-area range copied at
 * the same window addresses.  MNIC_CTX_MGMT's objects (no context of
 * their own) use the management range, which the target gets at the same
 * window place first. */
static int move_memory(struct mnic_mig_pair *p)
{
	const int mgmt = !p->src_ctx.ctx;
	int err, hostmem;
	int64_t n;

	if ((err = mnic_hostmem_attach(p->src)) < 0 || (err = mnic_hostmem_attach(p->dst)) < 0)
		return err;
	hostmem = p->src->hm_table || p->dst->hm_table;
	if (mgmt && mnic_dev_role(p->src) == MNIC_ROLE_MGMT &&
	    mnic_dev_role(p->dst) == MNIC_ROLE_MGMT && mnic_dev_backend(p->src) == MNIC_BACKEND_BAR &&
	    mnic_dev_backend(p->dst) == MNIC_BACKEND_BAR) {
		struct mnic_ctx_info ci = {0};

		err = mnic_mem_ensure(p->src);
		if (err == 0 && hostmem)   /* the range's window place, not the view's VA */
			err = mnic_find_context(p->src, MNIC_OWNER_MGMT_MEM, &ci);
		else
			ci = (struct mnic_ctx_info){.ua_offset = p->src->user_off,
						    .ua_size = p->src->user_size};
		if (err == 0)
			err = mnic_mgmt_mem_at(p->dst, ci.ua_offset, ci.ua_size);
		if (err < 0)
			return err;
	}
	if (hostmem) {
		err = mnic_hostmem_move(p->src, p->dst,
					mgmt ? MNIC_OWNER_MGMT_MEM : p->src_ctx.owner_tag, &p->hm);
		if (err == 0)
			p->user_area_bytes = (uint64_t)p->hm.npages * 4096u;
		return err;
	}
	n = mnic_copy_user_area(p->src, p->dst);
	if (n < 0)
		return (int)n;
	p->user_area_bytes = (uint64_t)n;
	return 0;
}

int mnic_mig_transfer(struct mnic_mig *m)
{
	if (!m)
		return -EINVAL;
	if (!in_order(m, MNIC_MIG_STEP_TRANSFER))
		return -EPROTO;
	for (uint32_t i = 0; i < m->n_pairs; i++) {
		struct mnic_mig_pair *p = &m->pair[i];
		double t0;

		progress(m, i, MNIC_MIG_STEP_TRANSFER);
		t0 = now_ms();
		if (p->src_ctx.ctx && !p->dst_allocated) {
			const struct mnic_ctx_info *s = &p->src_ctx;
			int err = mnic_hostmem_attach(p->src);

			if (err == 0)
				err = mnic_hostmem_attach(p->dst);
			/* the same window range, as the image's physical addresses
			 * are window places; with host memory on both the records
			 * hold IOVAs only and the target picks the range */
			if (err == 0)
				err = mnic_alloc_context(p->dst,
							 p->src->hm_table && p->dst->hm_table
								 ? 0 : s->ua_offset,
							 s->ua_size, s->owner_tag, &p->dst_ctx);

			if (err == 0) {
				p->dst_allocated = 1;
				err = mnic_adopt_context(p->dst, p->dst_ctx.ctx);
			}
			if (err < 0) {
				p->transfer_ms = now_ms() - t0;
				return fail(m, MNIC_MIG_STEP_TRANSFER, i, p->dst, "ALLOC_CONTEXT",
					    err);
			}
		}
		if (m->opts.copy_user_area) {
			int err = move_memory(p);

			if (err < 0) {
				p->transfer_ms = now_ms() - t0;
				return fail(m, MNIC_MIG_STEP_TRANSFER, i, p->dst,
					    "memory onto the target (user area or host-memory pages)",
					    err);
			}
		}
		p->transfer_ms = now_ms() - t0;
		p->transferred = 1;
	}
	m->state = MNIC_MIG_TRANSFERRED;
	return 0;
}

const struct mnic_peer_override *mnic_mig_override(const struct mnic_mig *m, uint32_t pair,
						  struct mnic_peer_override *ov)
{
	if (!m || !ov || pair >= m->n_pairs)
		return NULL;
	memset(ov, 0, sizeof(*ov));
	if (m->n_pairs == 2) {
		const struct mnic_mig_pair *q = &m->pair[1 - pair];

		ov->old_dip = q->src_info.ipv4;
		ov->new_dip = q->dst_info.ipv4;
		memcpy(ov->new_dmac, q->dst_info.mac, sizeof(ov->new_dmac));
		return ov;
	}
	if (!m->opts.override)
		return NULL;
	*ov = *m->opts.override;
	return ov;
}

int mnic_mig_restore(struct mnic_mig *m)
{
	if (!m)
		return -EINVAL;
	if (!in_order(m, MNIC_MIG_STEP_RESTORE))
		return -EPROTO;
	for (uint32_t i = 0; i < m->n_pairs; i++) {
		struct mnic_mig_pair *p = &m->pair[i];
		struct mnic_peer_override buf;
		const struct mnic_peer_override *ov = mnic_mig_override(m, i, &buf);
		double t0;
		int err;

		progress(m, i, MNIC_MIG_STEP_RESTORE);
		t0 = now_ms();
		err = mnic_restore_image(p->dst, p->img, p->img_len, ov);
		if (err < 0) {
			p->restore_ms = now_ms() - t0;
			return fail(m, MNIC_MIG_STEP_RESTORE, i, p->dst, "RESTORE_OBJECT(IMAGE)", err);
		}
		/* host memory: the restored MTTs, unwritten, get the target's pages
		 * (WRITE_MTT while Stopped; RESUME refuses an MTT left unwritten) */
		err = mnic_hostmem_refill(p->dst, &p->hm, p->img, p->img_len);
		p->restore_ms = now_ms() - t0;
		if (err < 0)
			return fail(m, MNIC_MIG_STEP_RESTORE, i, p->dst,
				    "WRITE_MTT (the target's pages)", err);
		p->restored = 1;
	}
	m->state = MNIC_MIG_RESTORED;
	return 0;
}

int mnic_mig_resume(struct mnic_mig *m)
{
	if (!m)
		return -EINVAL;
	if (!in_order(m, MNIC_MIG_STEP_RESUME))
		return -EPROTO;
	for (uint32_t i = 0; i < m->n_pairs; i++) {
		struct mnic_mig_pair *p = &m->pair[i];
		double t0;
		int err;

		if (p->resumed)
			continue;
		progress(m, i, MNIC_MIG_STEP_RESUME);
		t0 = now_ms();
		err = mnic_resume_context(p->dst);
		p->resume_ms = now_ms() - t0;
		if (err < 0)
			return fail(m, MNIC_MIG_STEP_RESUME, i, p->dst, "RESUME_CONTEXT", err);
		p->resumed = 1;
		/* the context lives on the target now; its stopped copy on the
		 * source goes (a failure leaves it stopped, never running) */
		if (p->src_ctx.ctx && mnic_dealloc_context(p->src, p->src_ctx.ctx) == 0)
			p->src_freed = 1;
	}
	memset(&m->err, 0, sizeof(m->err));
	m->err.pair = -1;
	m->state = MNIC_MIG_RESUMED;
	return 0;
}

int mnic_mig_abort(struct mnic_mig *m)
{
	struct mnic_dev *bad_dev = NULL;
	int first = 0;
	int32_t bad = -1;

	if (!m)
		return -EINVAL;
	if (!in_order(m, MNIC_MIG_STEP_ABORT))
		return -EBUSY;   /* the context runs on a target now */
	for (uint32_t i = 0; i < m->n_pairs; i++) {
		struct mnic_mig_pair *p = &m->pair[i];
		struct mnic_dev *on = p->src;
		int err = 0;

		if (p->dumped && !p->aborted) {
			err = mnic_abort_dump(p->src);
			if (err == 0)
				p->aborted = 1;
		}
		if (err == 0 && p->dst_allocated) {
			/* what the target restored goes with its context */
			on = p->dst;
			err = mnic_dealloc_context(p->dst, p->dst_ctx.ctx);
			if (err == 0)
				p->dst_allocated = 0;
		}
		/* the pages taken on the target, once no object there reaches
		 * them (MNIC_CTX_MGMT's restored objects keep theirs) */
		if (err == 0 && p->hm.npages && (p->src_ctx.ctx || !p->restored))
			mnic_hostmem_unmove(p->dst, &p->hm);
		if (err < 0 && !first) {
			first = err;
			bad = (int32_t)i;
			bad_dev = on;
		}
	}
	if (first)
		return fail(m, MNIC_MIG_STEP_ABORT, (uint32_t)bad, bad_dev,
			    bad_dev == m->pair[bad].src ? "ABORT_DUMP" : "DEALLOC_CONTEXT", first);
	m->state = MNIC_MIG_ABORTED;
	return 0;
}

void mnic_mig_end(struct mnic_mig *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->n_pairs; i++) {
		free(m->pair[i].img);
		m->pair[i].img = NULL;
		mnic_hostmem_move_done(&m->pair[i].hm);
	}
}

char *mnic_mig_strerror(const struct mnic_mig *m, char *buf, size_t len)
{
	const struct mnic_mig_error *e;
	char why[256];
	const char *todo;

	if (!buf || len == 0)
		return buf;
	buf[0] = '\0';
	if (!m || m->err.action == MNIC_MIG_ACT_NONE)
		return buf;
	e = &m->err;
	if (e->result.layer != MNIC_ERR_NONE && e->result.err == e->err && e->result.opcode)
		mnic_strerror_result(&e->result, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s: %s", e->what ? e->what : "?", strerror(-e->err));
	if (e->action == MNIC_MIG_ACT_TARGET)
		todo = "the context is on the targets: mnic_mig_resume again resumes the rest";
	else if (e->step == MNIC_MIG_STEP_ABORT)
		todo = "that source is still stopped: mnic_mig_abort again";
	else
		todo = "the sources are still stopped: mnic_mig_abort resumes them in place";
	snprintf(buf, len, "%s of pair %d on %s failed: %s; %s", mnic_mig_step_name(e->step),
		 (int)e->pair, e->dev ? mnic_dev_path(e->dev) : "?", why, todo);
	return buf;
}
