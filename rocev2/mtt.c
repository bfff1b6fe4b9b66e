/* Memory translation tables (docs/host-interface.md "Host memory and
 * translation"; abi/include/mnic/cmd.h CREATE/WRITE/DESTROY_MTT).
 *
 * An MTT maps one IOVA range [iova, iova + length) onto pages of
 * 2^page_shift bytes: entry i is the host-physical page of IOVA page
 * (iova >> page_shift) + i.  The entries of every MTT live in one pool of
 * ROCEV2_MTT_PAGES page frame numbers (HPA >> 12, 4 bytes each) in
 * firmware RAM; an MTT holds a contiguous run of it, found first fit.
 *
 *   entry value   ROCEV2_MTT_UNWRITTEN (create) -> a PFN (WRITE_MTT)
 *   mtt->written  entries holding a PFN; the MTT is usable when it equals
 *                 npages (rocev2_mtt_check), and a restored context
 *                 resumes only then (rocev2_resume_context)
 *
 * Every page is checked when it is written (aligned to the page size, the
 * whole page inside the host-memory aperture env.dma), so the data path
 * only range-checks the IOVA against the MTT and never leaves a page
 * without translating again (rocev2_host_read/write).  An object holds a
 * reference (refcnt) on each MTT it names: an MTT in use is not destroyed,
 * and is rewritten only while its context is Stopped (a restore's REFILL:
 * the target's pages under the same IOVAs).
 *
 * Handles are PD-style (pool.h): generation << 16 | index, never 0
 * (ROCEV2_NO_MTT, physical mode). */
#include "pool.h"

#define MTT_PFN_SHIFT 12u

_Static_assert(ROCEV2_PAGE_SHIFT_MIN >= MTT_PFN_SHIFT, "an entry holds a 4 KiB frame number");
_Static_assert(ROCEV2_MTT_PAGES < UINT32_MAX, "entry indices are uint32_t");

struct rocev2_mtt *rocev2_mtt_get(struct rocev2 *e, uint32_t handle)
{
	uint32_t idx = rocev2_handle_index(handle);
	struct rocev2_mtt *m;

	if (handle == ROCEV2_NO_MTT || idx >= ROCEV2_MAX_MTT)
		return NULL;
	m = &e->mtts[idx];
	if (!m->in_use || m->gen != rocev2_handle_gen(handle))
		return NULL;
	return m;
}

/* The lowest run of n free entries: candidates are 0 and the end of each
 * MTT that overlaps the previous candidate, so each step passes one MTT
 * (at most ROCEV2_MAX_MTT steps; a control-path command). */
static int mtt_pool_find(const struct rocev2 *e, uint32_t n, uint32_t *first)
{
	uint32_t start = 0, i;
	int moved;

	do {
		moved = 0;
		if (n > ROCEV2_MTT_PAGES - start)
			return -HAL_ENOMEM;
		for (i = 0; i < ROCEV2_MAX_MTT; i++) {
			const struct rocev2_mtt *m = &e->mtts[i];

			if (m->in_use && m->first < start + n && start < m->first + m->npages) {
				start = m->first + m->npages;
				moved = 1;
			}
		}
	} while (moved);
	*first = start;
	return 0;
}

/* Build the MTT at slot idx (free) with generation gen: create and
 * restore share it.  -HAL_EINVAL for a bad shape, -HAL_ENOMEM for no run
 * of entries (each counted). */
ROCEV2_CTL int rocev2_mtt_install(struct rocev2 *e, uint32_t idx, uint16_t gen,
		       const struct rocev2_mtt_attr *a)
{
	struct rocev2_mtt *m = &e->mtts[idx];
	uint64_t n;
	uint32_t first, i;

	if (a->page_shift < ROCEV2_PAGE_SHIFT_MIN || a->page_shift > ROCEV2_PAGE_SHIFT_MAX ||
	    a->length == 0 || a->length > UINT64_MAX - a->iova) {
		e->cnt.mtt_refused_shape++;
		return -HAL_EINVAL;
	}
	/* Pages from the one holding iova to the one holding the last byte. */
	n = ((a->iova + a->length - 1u) >> a->page_shift) - (a->iova >> a->page_shift) + 1u;
	if (n > ROCEV2_MTT_PAGES || mtt_pool_find(e, (uint32_t)n, &first) < 0) {
		e->cnt.mtt_refused_nomem++;
		return -HAL_ENOMEM;
	}
	m->gen = gen;
	m->page_shift = (uint8_t)a->page_shift;
	m->iova = a->iova;
	m->length = a->length;
	m->first = first;
	m->npages = (uint32_t)n;
	m->written = 0;
	m->refcnt = 0;
	m->owner = e->creator;
	m->in_use = 1;
	for (i = 0; i < m->npages; i++)
		e->mtt_pages[first + i] = ROCEV2_MTT_UNWRITTEN;
	e->n_mtt++;
	return 0;
}

ROCEV2_CTL int rocev2_create_mtt(struct rocev2 *e, const struct rocev2_mtt_attr *a, uint32_t *handle,
		      uint32_t *npages)
{
	uint32_t idx;
	int rc;

	if (!a || !handle || !npages) {
		e->cnt.mtt_refused_shape++;
		return -HAL_EINVAL;
	}
	ROCEV2_POOL_FIND_FREE(e->mtts, ROCEV2_MAX_MTT, idx);
	if (idx >= ROCEV2_MAX_MTT) {
		e->cnt.mtt_refused_nomem++;
		return -HAL_ENOMEM;
	}
	rc = rocev2_mtt_install(e, idx, rocev2_pool_next_gen(e->mtts[idx].gen,
							     ROCEV2_HANDLE_GEN_MAX), a);
	if (rc)
		return rc;
	*handle = rocev2_handle(e->mtts[idx].gen, idx);
	*npages = e->mtts[idx].npages;
	return 0;
}

/* Every page is checked before any is written: a refused list changes
 * nothing. */
ROCEV2_CTL int rocev2_write_mtt(struct rocev2 *e, uint32_t handle, uint32_t first, const uint64_t *pages,
		     uint32_t count)
{
	struct rocev2_mtt *m = rocev2_mtt_get(e, handle);
	uint64_t page, size = e->env.dma->window_size;
	uint32_t i, *ent;

	if (!m || (count && !pages))
		return -HAL_EINVAL;
	if (first >= m->npages || count > m->npages - first) {
		e->cnt.mtt_refused_range++;
		return -HAL_ERANGE;
	}
	if (m->refcnt && !rocev2_context_stopped(e, m->owner)) {
		e->cnt.mtt_refused_busy++;
		return -HAL_EBUSY;
	}
	page = 1ull << m->page_shift;
	for (i = 0; i < count; i++) {
		if (pages[i] & (page - 1u)) {
			e->cnt.mtt_refused_align++;
			return -HAL_EINVAL;
		}
		/* The whole page in the aperture; and its frame number must not
		 * be the unwritten mark (an aperture of 16 TiB). */
		if (page > size || pages[i] > size - page ||
		    pages[i] >> MTT_PFN_SHIFT >= ROCEV2_MTT_UNWRITTEN) {
			e->cnt.mtt_refused_page++;
			return -HAL_EINVAL;
		}
	}
	ent = &e->mtt_pages[m->first + first];
	for (i = 0; i < count; i++) {
		if (ent[i] == ROCEV2_MTT_UNWRITTEN)
			m->written++;
		ent[i] = (uint32_t)(pages[i] >> MTT_PFN_SHIFT);
	}
	return 0;
}

ROCEV2_CTL int rocev2_destroy_mtt(struct rocev2 *e, uint32_t handle)
{
	struct rocev2_mtt *m = rocev2_mtt_get(e, handle);

	if (!m)
		return -HAL_EINVAL;
	if (m->refcnt) {
		e->cnt.mtt_refused_busy++;
		return -HAL_EBUSY;
	}
	m->in_use = 0;              /* gen is kept: the next owner moves it on */
	e->n_mtt--;
	return 0;
}

int rocev2_mtt_check(struct rocev2 *e, uint32_t handle, uint64_t addr, uint64_t len,
		     int need_written)
{
	const struct rocev2_mtt *m;

	if (handle == ROCEV2_NO_MTT)
		return rocev2_in_window(e, addr, len) ? 0 : -HAL_EFAULT;
	m = rocev2_mtt_get(e, handle);
	if (!m || m->owner != e->creator) {
		e->cnt.mtt_refused_cover++;
		return -HAL_EINVAL;
	}
	if (addr < m->iova || len > m->length || addr - m->iova > m->length - len) {
		e->cnt.mtt_refused_cover++;
		return -HAL_EFAULT;
	}
	if (need_written && m->written != m->npages) {
		e->cnt.mtt_refused_unwritten++;
		return -HAL_EAGAIN;
	}
	return 0;
}

void rocev2_mtt_ref(struct rocev2 *e, uint32_t handle, int delta)
{
	struct rocev2_mtt *m = rocev2_mtt_get(e, handle);

	if (m)
		m->refcnt = (uint32_t)((int64_t)m->refcnt + delta);
}

int rocev2_owner_mtts_written(const struct rocev2 *e, uint32_t owner)
{
	uint32_t i;

	for (i = 0; i < ROCEV2_MAX_MTT; i++)
		if (e->mtts[i].in_use && e->mtts[i].owner == owner &&
		    e->mtts[i].written != e->mtts[i].npages)
			return 0;
	return 1;
}

/* The data path: addr inside the MTT's range (an object's range was
 * checked when it was created; a ring slot or an SGE is inside it, but
 * the check is cheap and the MTT's entries may be unwritten during a
 * restore), then one page at a time. */
int rocev2_mtt_xlate(struct rocev2 *e, uint32_t handle, uint64_t addr, uint64_t len,
		     uint64_t *hpa, uint64_t *chunk)
{
	uint32_t idx = rocev2_handle_index(handle);
	const struct rocev2_mtt *m;
	uint64_t off, in_page, page;
	uint32_t pfn;

	if (idx >= ROCEV2_MAX_MTT)
		goto fault;
	m = &e->mtts[idx];
	if (!m->in_use || addr < m->iova || len > m->length || addr - m->iova > m->length - len)
		goto fault;
	page = 1ull << m->page_shift;
	off = addr - (m->iova & ~(page - 1u));
	in_page = off & (page - 1u);
	pfn = e->mtt_pages[m->first + (uint32_t)(off >> m->page_shift)];
	if (pfn == ROCEV2_MTT_UNWRITTEN)
		goto fault;
	*hpa = ((uint64_t)pfn << MTT_PFN_SHIFT) + in_page;
	*chunk = page - in_page < len ? page - in_page : len;
	return 0;
fault:
	e->cnt.xlate_faults++;
	return -HAL_EFAULT;
}

/* to != NULL: read into it; else write from. */
static int host_copy(struct rocev2 *e, uint32_t mtt, uint64_t addr, uint8_t *to,
		     const uint8_t *from, size_t len)
{
	uint64_t hpa, chunk;
	int rc;

	while (len) {
		if (rocev2_mtt_xlate(e, mtt, addr, len, &hpa, &chunk) < 0)
			return -HAL_EFAULT;
		rc = to ? hal_dma_read(e->env.dma, hpa, to, (size_t)chunk)
			: hal_dma_write(e->env.dma, hpa, from, (size_t)chunk);
		if (rc < 0)
			return rc;
		if (to)
			to += chunk;
		else
			from += chunk;
		addr += chunk;
		len -= (size_t)chunk;
	}
	return 0;
}

int rocev2_host_read(struct rocev2 *e, uint32_t mtt, uint64_t addr, void *dst, size_t len)
{
	if (mtt == ROCEV2_NO_MTT)
		return hal_dma_read(e->env.dma, addr, dst, len);
	return host_copy(e, mtt, addr, dst, NULL, len);
}

int rocev2_host_write(struct rocev2 *e, uint32_t mtt, uint64_t addr, const void *src, size_t len)
{
	if (mtt == ROCEV2_NO_MTT)
		return hal_dma_write(e->env.dma, addr, src, len);
	return host_copy(e, mtt, addr, NULL, src, len);
}
