/* Memory translation tables: CREATE_MTT, WRITE_MTT, DESTROY_MTT (mnic/cmd.h,
 * docs/host-interface.md "Host memory and translation").
 *
 * The engine keeps the tables, their owners and counts, checks an
 * object's IOVA range against its MTT and translates every access
 * (rocev2.h, rocev2/mtt.c); the dispatcher checks MTT handles as any other
 * (unknown or another context's: BAD_RES, MNIC_SITE_MTT).  mgmt adds the
 * host interface's own rule on pages: every page WRITE_MTT gives lies in
 * the host memory the issuer may reach, inside the host-memory aperture
 * when the NIC has one, else (the DMA window is the aperture) inside the
 * issuer's user-area range, never the driver area (command ring,
 * mailboxes) or another tenant's pages; the engine checks only its
 * aperture.  That takes each MTT's page size, which the engine does not
 * report: mgmt keeps the shape of every MTT CREATE_MTT made (struct
 * mnic_mtt).  Each refusal has its status, its site and its counter and
 * is decided before the engine writes anything.
 */
#include <string.h>

#include "cmd_priv.h"
#include "hal/errno.h"

/* ---- the slots ---------------------------------------------------------------- */

/* The slot of handle (a CREATE_MTT of this NIC), ROCEV2_MAX_MTT for none. */
static size_t mtt_index(const struct mnic_mgmt *m, uint32_t handle)
{
	size_t i;

	if (handle == MNIC_MTT_NONE)
		return ROCEV2_MAX_MTT;  /* also what a free slot holds */
	for (i = 0; i < ROCEV2_MAX_MTT; i++)
		if (m->mtt[i].handle == handle)
			break;
	return i;
}

static const struct mnic_mtt *mtt_find(const struct mnic_mgmt *m, uint32_t handle)
{
	size_t i = mtt_index(m, handle);

	return i < ROCEV2_MAX_MTT ? &m->mtt[i] : NULL;
}

void mtt_forget_ctx(struct mnic_mgmt *m, uint32_t ctx)
{
	size_t i;

	for (i = 0; i < ROCEV2_MAX_MTT; i++)
		if (m->mtt[i].handle != MNIC_MTT_NONE && m->mtt[i].ctx == ctx)
			memset(&m->mtt[i], 0, sizeof(m->mtt[i]));
}

int mtt_engine_fail(struct mnic_mgmt *m, struct cmd_call *c, int rc, int uses_mtt)
{
	if (uses_mtt && rc == -HAL_EFAULT) {
		m->cnt.refused_mtt_cover++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_MTT_COVER);
	}
	if (uses_mtt && rc == -HAL_EAGAIN) {
		/* CREATE_MTT's entries start unwritten; a restore's come back so */
		m->cnt.refused_mtt_cover++;
		return fail(c, MNIC_CMD_STAT_BAD_RES_STATE, HAL_EAGAIN, MNIC_SITE_MTT_COVER);
	}
	return engine_fail(m, c, rc);
}

/* ---- CREATE_MTT --------------------------------------------------------------- */

/* Entries [iova, iova + length) needs at 2^shift bytes a page, or 0 for a
 * bad shape (mnic/cmd.h: shift in range, length > 0, iova + length does
 * not wrap, so the last byte is below 2^64 - 1) or one the engine's pool
 * could never hold. */
static uint32_t mtt_shape_pages(uint64_t iova, uint64_t length, uint32_t shift)
{
	uint64_t n;

	if (shift < MNIC_PAGE_SHIFT_MIN || shift > MNIC_PAGE_SHIFT_MAX || length == 0 ||
	    length > UINT64_MAX - iova)
		return 0;
	n = ((iova + (length - 1u)) >> shift) - (iova >> shift) + 1u;
	return n > ROCEV2_MTT_PAGES ? 0 : (uint32_t)n;
}

int h_create_mtt(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_create_mtt_in in;
	struct mnic_cmd_create_mtt_out o;
	struct rocev2_mtt_attr a;
	struct mnic_mtt *slot = NULL;
	uint32_t handle, npages;
	size_t i;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (mtt_shape_pages(in.iova, in.length, in.page_shift) == 0) {
		m->cnt.refused_mtt_shape++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_MTT_SHAPE);
	}
	for (i = 0; i < ROCEV2_MAX_MTT && !slot; i++)
		if (m->mtt[i].handle == MNIC_MTT_NONE)
			slot = &m->mtt[i];
	if (!slot)   /* a slot per engine MTT: the engine has none left either */
		return engine_fail(m, c, -HAL_ENOMEM);
	memset(&a, 0, sizeof(a));
	a.iova = in.iova;
	a.length = in.length;
	a.page_shift = in.page_shift;
	rc = rocev2_create_mtt(m->cfg.engine, &a, &handle, &npages);
	if (rc == -HAL_EINVAL) {
		m->cnt.refused_mtt_shape++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_MTT_SHAPE);
	}
	if (rc)
		return engine_fail(m, c, rc);
	*slot = (struct mnic_mtt){ handle, npages, c->ctx, (uint8_t)in.page_shift };
	memset(&o, 0, sizeof(o));
	o.mtt = handle;
	o.npages = npages;
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
	return 0;
}

/* ---- WRITE_MTT ---------------------------------------------------------------- */

/* 1 when the page of 2^shift bytes at hpa is one the issuer may have the
 * NIC reach: aligned, and wholly inside the host-memory aperture, or, with
 * none, inside the issuer's user-area range of the DMA window. */
static int page_ok(const struct mnic_mgmt *m, const struct cmd_call *c, uint64_t hpa,
		   uint32_t shift)
{
	uint64_t page = 1ull << shift;

	if (hpa & (page - 1u))
		return 0;
	if (m->cfg.hostmem)
		return hpa < m->cfg.hostmem->window_size && page <= m->cfg.hostmem->window_size - hpa;
	return mnic_ctx_range_ok(m, c->ctx, hpa, page);
}

/* Check every page (t NULL: the engine checks them against its aperture)
 * and write them; the engine's refusals under their sites. */
static int mtt_write(struct mnic_mgmt *m, struct cmd_call *c, const struct mnic_cmd_write_mtt_in *in,
		     const struct mnic_mtt *t)
{
	const uint64_t *pages;
	uint32_t i;
	int rc;

	/* The list follows the header in the staging buffer, 8-byte aligned
	 * (cmdq.c's cmd_buf is; 32 bytes of header keep it so). */
	pages = (const uint64_t *)(const void *)(c->buf + sizeof(*in));
	for (i = 0; t && i < in->count; i++)
		if (!page_ok(m, c, pages[i], t->page_shift)) {
			m->cnt.refused_mtt_page++;
			return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_MTT_PAGE);
		}
	rc = rocev2_write_mtt(m->cfg.engine, in->mtt, in->first, pages, in->count);
	switch (rc) {
	case 0:
		c->produced = sizeof(struct mnic_cmd_simple_out);
		return 0;
	case -HAL_EBUSY:
		/* Objects use it and its context is not Stopped: only a
		 * restore's refill may change pages under an object. */
		m->cnt.refused_mtt_busy++;
		return fail(c, MNIC_CMD_STAT_BAD_RES_STATE, HAL_EBUSY, MNIC_SITE_MTT_BUSY);
	case -HAL_ERANGE:
		m->cnt.refused_mtt_range++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_ERANGE, MNIC_SITE_MTT_RANGE);
	case -HAL_EINVAL:   /* a page unaligned or outside the engine's aperture */
		m->cnt.refused_mtt_page++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_MTT_PAGE);
	default:
		return engine_fail(m, c, rc);
	}
}

int h_write_mtt(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_write_mtt_in in;
	const struct mnic_mtt *t;

	memcpy(&in, c->buf, sizeof(in));
	t = mtt_find(m, in.mtt);        /* live and the issuer's: the dispatcher checked */
	/* count first, bounded by what one command carries, so that
	 * 32 + 8 x count is computed in 64 bits of a bounded value. */
	if (in.count == 0 || in.count > MNIC_MTT_WRITE_MAX) {
		m->cnt.refused_mtt_range++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_MTT_RANGE);
	}
	if ((uint64_t)c->in_len != sizeof(in) + (uint64_t)in.count * sizeof(uint64_t)) {
		m->cnt.refused_mtt_len++;
		return fail(c, MNIC_CMD_STAT_BAD_INPUT_LEN, HAL_EINVAL, MNIC_SITE_IN_LEN);
	}
	if (!t) {
		/* An MTT a restore recreated has no shape here (the engine
		 * reports none): its pages can be checked only against a
		 * separate aperture, which the engine does itself. */
		if (m->cfg.hostmem)
			return mtt_write(m, c, &in, NULL);
		m->cnt.refused_mtt_page++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_ENOTSUP, MNIC_SITE_MTT_PAGE);
	}
	if (in.first >= t->npages || in.count > t->npages - in.first) {
		m->cnt.refused_mtt_range++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_ERANGE, MNIC_SITE_MTT_RANGE);
	}
	return mtt_write(m, c, &in, t);
}

/* ---- DESTROY_MTT -------------------------------------------------------------- */

int h_destroy_mtt(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_handle_in in;
	size_t i;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	rc = rocev2_destroy_mtt(m->cfg.engine, in.handle);
	if (rc == -HAL_EBUSY) {
		m->cnt.refused_mtt_busy++;
		return fail(c, MNIC_CMD_STAT_BAD_RES_STATE, HAL_EBUSY, MNIC_SITE_MTT_BUSY);
	}
	if (rc)
		return engine_fail(m, c, rc);
	i = mtt_index(m, in.handle);
	if (i < ROCEV2_MAX_MTT)
		memset(&m->mtt[i], 0, sizeof(m->mtt[i]));
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}
