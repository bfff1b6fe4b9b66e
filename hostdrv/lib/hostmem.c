/* Host-memory mode of the BAR backend (docs/libmnic.md "Host memory";
 * docs/host-interface.md "Host memory and translation").  A NIC that
 * reports a host-memory aperture (QUERY_DEVICE hostmem_size != 0: a POSIX
 * NIC's --hostmem FILE) DMAs into that file, whose offsets are the
 * host-physical addresses (HPA).  libmnic plays the host's memory manager:
 *
 *   host-memory file          page 0..T-1: this page table (owner per page)
 *   +-----+-----+-----+-----+-----+-----+-----+
 *   | tbl | tbl |  A  |  B  |  A  | free|  A  |   A: a context's pages, any order
 *   +-----+-----+-----+-----+-----+-----+-----+
 *               ^ HPA = file offset
 *   process VA  [ A.v0 | A.v1 | A.v2 ]           each page mapped MAP_FIXED at
 *                                                 its virtual slot: IOVA = VA
 *
 * A context's memory is a set of 4 KiB pages taken from the file under
 * the table's lock, owned by the context's owner tag (a tenant's pid, or
 * MNIC_OWNER_MGMT_MEM), each remembering its virtual page index, mapped in
 * order at one reserved VA range.  The allocator (mem.c) runs over that
 * range as over a user-area range; every ring, doorbell record and MR gets
 * an MTT from its VA to the pages' HPAs.  The table lives in the first
 * pages of the file itself, as an OS keeps its page array in the RAM it
 * manages; those pages are never handed out.  A tenant's pages go back at
 * mnic_close or, when it died, with the reap (owner gone); the management
 * range persists, and the next mnicctl maps it again at the same VA (its
 * allocator header records it). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libmnic_int.h"
#include "mnic/ioctl.h"

#define PAGE 4096u

static struct mnic_hm_page *table_of(struct mnic_hm_hdr *h)
{
	return (struct mnic_hm_page *)(h + 1);
}

uint32_t mnic_hm_table_pages(uint64_t size)
{
	uint64_t npages = size / PAGE;

	return (uint32_t)((sizeof(struct mnic_hm_hdr) + npages * sizeof(struct mnic_hm_page) +
			   PAGE - 1) / PAGE);
}

int mnic_hm_init(struct mnic_hm_hdr *h, uint64_t size)
{
	uint32_t zero = 0, tp = mnic_hm_table_pages(size);
	uint64_t npages = size / PAGE;
	struct mnic_hm_page *t = table_of(h);

	if (size % PAGE || npages > UINT32_MAX || npages <= tp)
		return -EINVAL;
	if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == MNIC_HM_MAGIC)
		return h->version == 1 && h->npages == npages && h->table_pages == tp &&
				       h->free_pages <= npages - tp ? 0 : -EUCLEAN;
	if (!__atomic_compare_exchange_n(&h->magic, &zero, 1u, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		for (long spin = 0; spin < 100000000L; spin++)
			if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == MNIC_HM_MAGIC)
				return mnic_hm_init(h, size);
		return -ETIMEDOUT;
	}
	h->version = 1;
	h->npages = (uint32_t)npages;
	h->table_pages = tp;
	h->lock = 0;
	h->free_pages = (uint32_t)npages - tp;
	for (uint32_t i = 0; i < npages; i++) {
		t[i].owner = i < tp ? MNIC_HM_RESERVED : 0;
		t[i].vpage = 0;
	}
	/* the table whole before anyone may take a page */
	__atomic_store_n(&h->magic, MNIC_HM_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int mnic_hm_take(struct mnic_hm_hdr *h, uint32_t owner, uint32_t n, uint64_t shuffle_seed,
		 uint32_t *pfn)
{
	struct mnic_hm_page *t = table_of(h);
	uint32_t got = 0;
	int err;

	if (owner == 0 || owner == MNIC_HM_RESERVED || n == 0)
		return -EINVAL;
	err = mnic_pid_lock(&h->lock);
	if (err < 0)
		return err;
	if (h->free_pages < n) {
		mnic_pid_unlock(&h->lock);
		return -ENOMEM;
	}
	for (uint32_t i = h->table_pages; i < h->npages && got < n; i++)
		if (t[i].owner == 0)
			pfn[got++] = i;
	/* shuffled: a random order of the lowest free pages, so that no two
	 * virtually adjacent pages need be physically adjacent */
	if (shuffle_seed)
		for (uint32_t i = got - 1; i > 0; i--) {
			uint32_t j = (uint32_t)(next_rand(&shuffle_seed) % (i + 1u)), x = pfn[i];

			pfn[i] = pfn[j];
			pfn[j] = x;
		}
	for (uint32_t v = 0; v < got; v++) {
		t[pfn[v]].owner = owner;
		t[pfn[v]].vpage = v;
	}
	h->free_pages -= got;
	mnic_pid_unlock(&h->lock);
	return 0;
}

int mnic_hm_find(struct mnic_hm_hdr *h, uint32_t owner, uint32_t *pfn, uint32_t max)
{
	const struct mnic_hm_page *t = table_of(h);
	uint32_t n = 0;
	int err = mnic_pid_lock(&h->lock);

	if (err < 0)
		return err;
	for (uint32_t i = h->table_pages; i < h->npages; i++)
		if (t[i].owner == owner)
			n++;
	if (n > max) {
		err = -E2BIG;
	} else {
		for (uint32_t v = 0; v < n; v++)
			pfn[v] = UINT32_MAX;
		for (uint32_t i = h->table_pages; i < h->npages; i++)
			if (t[i].owner == owner && t[i].vpage < n)
				pfn[t[i].vpage] = i;
		for (uint32_t v = 0; v < n; v++)
			if (pfn[v] == UINT32_MAX)
				err = -EUCLEAN;   /* a slot no page claims (two claim another) */
	}
	mnic_pid_unlock(&h->lock);
	return err < 0 ? err : (int)n;
}

int mnic_hm_release(struct mnic_hm_hdr *h, uint32_t owner, int (*gone)(uint32_t owner))
{
	struct mnic_hm_page *t = table_of(h);
	int freed = 0, err = mnic_pid_lock(&h->lock);

	if (err < 0)
		return err;
	for (uint32_t i = h->table_pages; i < h->npages; i++) {
		uint32_t o = t[i].owner;

		if (o == 0 || o == MNIC_HM_RESERVED || (owner ? o != owner : !gone(o)))
			continue;
		t[i].owner = 0;
		t[i].vpage = 0;
		freed++;
	}
	h->free_pages += (uint32_t)freed;
	mnic_pid_unlock(&h->lock);
	return freed;
}

/* ---- the device ---------------------------------------------------------------- */

static int owner_gone(uint32_t owner)
{
	return owner > MNIC_OWNER_MGMT_MEM && owner <= (uint32_t)INT32_MAX &&
	       kill((pid_t)owner, 0) < 0 && errno == ESRCH;
}

/* The host-memory file of BAR file `bar`: $MNIC_HOSTMEM (a process with one
 * NIC), else "<bar>.hostmem". */
static void hostmem_path(const char *bar, char *path, size_t len)
{
	const char *env = getenv("MNIC_HOSTMEM");

	if (env && *env)
		snprintf(path, len, "%s", env);
	else
		snprintf(path, len, "%s.hostmem", bar);
}

int mnic_hostmem_attach(struct mnic_dev *dev)
{
	struct mnic_cmd_simple_in in = {.hdr = {.opcode = MNIC_CMD_QUERY_DEVICE}};
	struct mnic_cmd_query_device_out q;
	struct stat st;
	size_t tlen;
	void *map;
	int err;

	if (dev->backend != MNIC_BACKEND_BAR || dev->hm_checked)
		return 0;
	err = mnic_cmd_as(dev, MNIC_CTX_MGMT, &in, sizeof(in), &q, sizeof(q), NULL);
	if (err < 0)
		return err;
	dev->hm_checked = 1;
	if (q.hostmem_size == 0)
		return 0;   /* physical mode: the DMA window is the aperture */
	if (q.hostmem_size % PAGE || q.hostmem_size > (1ull << 40))
		return mnic_reply_err(dev);
	hostmem_path(dev->path, dev->hm_path, sizeof(dev->hm_path));
	dev->hm_fd = open(dev->hm_path, O_RDWR | O_CLOEXEC);
	if (dev->hm_fd < 0 || fstat(dev->hm_fd, &st) < 0 || (uint64_t)st.st_size < q.hostmem_size) {
		err = dev->hm_fd < 0 ? -errno : -ENODEV;
		fprintf(stderr, "libmnic: %s has a %llu-byte host-memory aperture: %s must be that "
			"file (set MNIC_HOSTMEM to its path)\n", dev->path,
			(unsigned long long)q.hostmem_size, dev->hm_path);
		goto fail;
	}
	tlen = (size_t)mnic_hm_table_pages(q.hostmem_size) * PAGE;
	map = mmap(NULL, tlen, PROT_READ | PROT_WRITE, MAP_SHARED, dev->hm_fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	dev->hm_table = map;
	dev->hm_table_len = tlen;
	dev->hm_size = q.hostmem_size;
	err = mnic_hm_init(dev->hm_table, q.hostmem_size);
	if (err < 0)
		goto fail;
	return 0;
fail:
	mnic_hostmem_detach(dev);
	dev->hm_checked = 1;
	return mnic_set_err(dev, MNIC_ERR_TRANSPORT, err);
}

static void unmap_view(struct mnic_dev *dev)
{
	if (dev->hm_va)
		munmap(dev->hm_va, (size_t)dev->hm_npages * PAGE);
	free(dev->hm_pfn);
	dev->hm_va = NULL;
	dev->hm_pfn = NULL;
	dev->hm_npages = 0;
}

void mnic_hostmem_detach(struct mnic_dev *dev)
{
	unmap_view(dev);
	if (dev->hm_table)
		munmap(dev->hm_table, dev->hm_table_len);
	if (dev->hm_path[0] && dev->hm_fd >= 0)
		close(dev->hm_fd);
	dev->hm_path[0] = '\0';
	dev->hm_table = NULL;
	dev->hm_fd = -1;
	dev->hm_size = 0;
	dev->hm_checked = 0;
}

/* The VA a range was mapped at before (the allocator header in its first
 * page records it), read through a short mapping of that page. */
static void *previous_va(struct mnic_dev *dev, uint32_t pfn0)
{
	struct mnic_user_hdr *h = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, dev->hm_fd,
				       (off_t)pfn0 * PAGE);
	void *va = NULL;

	if (h == MAP_FAILED)
		return NULL;
	if (h->magic == MNIC_USER_HDR_MAGIC)
		va = (void *)(uintptr_t)h->base;
	munmap(h, PAGE);
	return va;
}

/* Map the pages in pfn[] in order at one VA range (runs of physically
 * adjacent pages in one mmap). */
static int map_view(struct mnic_dev *dev, uint32_t *pfn, uint32_t n, void *want)
{
	size_t len = (size_t)n * PAGE;
	uint8_t *va = mmap(want, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
					       (want ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	if (va == MAP_FAILED)
		return -errno;
	if (want && va != want) {
		munmap(va, len);
		return -EADDRINUSE;
	}
	for (uint32_t v = 0; v < n;) {
		uint32_t run = 1;

		while (v + run < n && pfn[v + run] == pfn[v] + run)
			run++;
		if (mmap(va + (size_t)v * PAGE, (size_t)run * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, dev->hm_fd, (off_t)pfn[v] * PAGE) == MAP_FAILED) {
			int err = -errno;

			munmap(va, len);
			return err;
		}
		v += run;
	}
	dev->hm_va = va;
	dev->hm_pfn = pfn;
	dev->hm_npages = n;
	dev->user = va;
	dev->user_off = (uint64_t)(uintptr_t)va;   /* IOVA = VA, as verbs */
	dev->user_size = len;
	return 0;
}

static uint64_t shuffle_seed(void)
{
	const char *env = getenv("MNIC_HOSTMEM_SHUFFLE");

	if (!env || !*env || !strcmp(env, "0"))
		return 0;
	return ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ 0x9e3779b97f4a7c15ull;
}

int mnic_hostmem_view(struct mnic_dev *dev, uint32_t owner, uint64_t bytes, int keep)
{
	uint32_t n = (uint32_t)((bytes + PAGE - 1) / PAGE), *pfn;
	void *want = NULL;
	int err, found = 0;

	unmap_view(dev);
	if (n < 2 || bytes > dev->hm_size)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	pfn = calloc(dev->hm_size / PAGE, sizeof(*pfn));
	if (!pfn)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	if (keep) {
		found = mnic_hm_find(dev->hm_table, owner, pfn, (uint32_t)(dev->hm_size / PAGE));
		if (found < 0) {
			free(pfn);
			return mnic_set_err(dev, MNIC_ERR_ARG, found);
		}
	}
	if (found > 0) {
		n = (uint32_t)found;
		want = previous_va(dev, pfn[0]);
	} else {
		err = mnic_hm_take(dev->hm_table, owner, n, shuffle_seed(), pfn);
		if (err < 0) {
			free(pfn);
			return mnic_set_err(dev, MNIC_ERR_ARG, err);
		}
	}
	err = map_view(dev, pfn, n, want);
	if (err < 0) {
		if (!found)
			mnic_hm_release(dev->hm_table, owner, NULL);
		free(pfn);
		return mnic_set_err(dev, MNIC_ERR_TRANSPORT, err);
	}
	/* a range found again keeps its allocator state; new pages start empty */
	if (!found && (err = mnic_umem_reset(dev->user, dev->user_off, dev->user_size)) < 0)
		return err;
	return 0;
}

void mnic_hostmem_release(struct mnic_dev *dev, uint32_t owner)
{
	unmap_view(dev);
	if (dev->hm_table && owner)
		mnic_hm_release(dev->hm_table, owner, NULL);
}

int mnic_hostmem_reap(struct mnic_dev *dev)
{
	if (!dev->hm_table)
		return 0;
	return mnic_hm_release(dev->hm_table, 0, owner_gone);
}

/* ---- kernel backend on a NIC with host memory (kmem mode) ----------------------- */

int mnic_kmem_setup(struct mnic_dev *dev)
{
	struct mnic_cmd_simple_in in = {.hdr = {.opcode = MNIC_CMD_QUERY_DEVICE}};
	struct mnic_cmd_query_device_out q;
	void *map;
	int err;

	if (dev->backend != MNIC_BACKEND_KERNEL || dev->kmem)
		return 0;
	err = mnic_cmd(dev, &in, sizeof(in), &q, sizeof(q), NULL);
	if (err < 0)
		return err;
	if (q.hostmem_size == 0)
		return 0;   /* physical mode in the file's range of the window */
	/* The window range the module mapped is not what the NIC's data path
	 * reaches (that is the host's RAM): the same size of our own memory,
	 * zeroed, takes its place.  Private and anonymous: the module pins
	 * its pages with FOLL_LONGTERM, so they stay where the NIC sees them. */
	map = mmap(NULL, (size_t)dev->user_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return mnic_set_err(dev, MNIC_ERR_ARG, -errno);
	if (dev->user_map)
		munmap(dev->user_map, (size_t)dev->user_size);
	dev->user_map = map;
	dev->user = map;
	dev->area = map;
	dev->user_off = (uint64_t)(uintptr_t)map;    /* IOVA = VA, as verbs */
	dev->area_off = dev->user_off;
	dev->kmem = 1;
	return 0;
}

/* Why the module refuses a registration, by errno (mnic_mem.c
 * mnic_ioctl_reg_mem); NULL: another failure (a command it sent). */
static const struct {
	int err;
	const char *why;
} reg_mem_refusals[] = {
	{EFAULT, "not mapped read-write in this process (the NIC may write an MR's pages, "
		 "so a read-only or unmapped range cannot be pinned)"},
	{ENOMEM, "more pinned than RLIMIT_MEMLOCK allows (ulimit -l; CAP_IPC_LOCK lifts it), "
		 "or no memory"},
	{E2BIG, "longer than the module allows (mnic.ko parameter max_reg_mib)"},
	{EINVAL, "an empty or wrapping range, or one past the user address space"},
	{EOPNOTSUPP, "the NIC has no host-memory aperture"},
};

const char *mnic_kmem_refusal(int err)
{
	for (size_t i = 0; i < sizeof(reg_mem_refusals) / sizeof(reg_mem_refusals[0]); i++)
		if (reg_mem_refusals[i].err == (err < 0 ? -err : err))
			return reg_mem_refusals[i].why;
	return NULL;
}

/* [addr, addr + len) of this process pinned by the module, as an MTT of
 * this file (the module refuses a tenant's own MTT commands). */
static int kmem_reg(struct mnic_dev *dev, uint64_t addr, uint64_t len, uint32_t *mtt)
{
	struct mnic_ioc_reg_mem r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.version = MNIC_IOC_VERSION;
	r.addr = addr;
	r.length = len;
	if (ioctl(dev->fd, MNIC_IOC_REG_MEM, &r) < 0) {
		int err = -errno;
		const char *why = mnic_kmem_refusal(err);

		return mnic_set_err_detail(dev, MNIC_ERR_ARG, err,
					   "MNIC_IOC_REG_MEM of [0x%llx, +%llu) refused by the "
					   "module%s%s", (unsigned long long)addr,
					   (unsigned long long)len, why ? ": " : "", why ? why : "");
	}
	if (r.mtt == MNIC_MTT_NONE)
		return mnic_reply_err(dev);
	*mtt = r.mtt;
	return 0;
}

int mnic_kmem_dereg(struct mnic_dev *dev, uint32_t mtt)
{
	struct mnic_ioc_dereg_mem d;

	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.version = MNIC_IOC_VERSION;
	d.mtt = mtt;
	if (ioctl(dev->fd, MNIC_IOC_DEREG_MEM, &d) < 0)
		return mnic_set_err(dev, MNIC_ERR_ARG, -errno);
	return 0;
}

int mnic_hostmem_mtt(struct mnic_dev *dev, uint64_t addr, uint64_t len, uint32_t *mtt)
{
	uint64_t first, last, *pages;
	uint32_t n;
	int err;

	*mtt = MNIC_MTT_NONE;
	if (dev->kmem) {
		/* any memory of this process: the module pins it or says why not */
		if (len == 0)
			return mnic_set_err(dev, MNIC_ERR_ARG, -EFAULT);
		return kmem_reg(dev, addr, len, mtt);
	}
	if (!dev->hm_va)
		return 0;   /* physical mode: window addresses are the HPAs */
	if (len == 0 || !mnic_window_ptr(dev, addr, len))
		return mnic_set_err(dev, MNIC_ERR_ARG, -EFAULT);
	first = (addr - dev->user_off) / PAGE;
	last = (addr - dev->user_off + len - 1) / PAGE;
	n = (uint32_t)(last - first + 1);
	pages = malloc((size_t)n * sizeof(*pages));
	if (!pages)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	for (uint32_t i = 0; i < n; i++)
		pages[i] = (uint64_t)dev->hm_pfn[first + i] * PAGE;
	err = mnic_reg_mtt(dev, addr, len, 12, pages, n, mtt);
	free(pages);
	return err;
}

int mnic_hostmem_info(struct mnic_dev *dev, struct mnic_hostmem_info *info)
{
	int err;

	if (!dev || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	err = mnic_hostmem_attach(dev);   /* the aperture; the view only if there is one */
	if (err < 0)
		return err;
	if (!dev->hm_table)
		return 0;
	info->aperture = dev->hm_size;
	info->free_pages = __atomic_load_n(&dev->hm_table->free_pages, __ATOMIC_RELAXED);
	info->pages = dev->hm_npages;
	for (uint32_t v = 1; v < dev->hm_npages; v++)
		if (dev->hm_pfn[v] != dev->hm_pfn[v - 1] + 1)
			info->discontiguities++;
	return 0;
}

/* ---- migration: an owner's pages onto the target's aperture ---------------------- */

/* Copy `n` pages of file `from` at from_pfn[] to file `to` at to_pfn[],
 * runs adjacent in both files in one read and one write. */
static int copy_pages(int from, const uint32_t *from_pfn, int to, const uint32_t *to_pfn,
		      uint32_t n)
{
	enum { MAX_RUN = 256 };   /* pages: 1 MiB per transfer */
	uint8_t *buf = malloc((size_t)MAX_RUN * PAGE);

	if (!buf)
		return -ENOMEM;
	for (uint32_t v = 0; v < n;) {
		uint32_t run = 1;
		size_t len;

		while (v + run < n && run < MAX_RUN && from_pfn[v + run] == from_pfn[v] + run &&
		       to_pfn[v + run] == to_pfn[v] + run)
			run++;
		len = (size_t)run * PAGE;
		if (pread(from, buf, len, (off_t)from_pfn[v] * PAGE) != (ssize_t)len ||
		    pwrite(to, buf, len, (off_t)to_pfn[v] * PAGE) != (ssize_t)len) {
			free(buf);
			return -EIO;
		}
		v += run;
	}
	free(buf);
	return 0;
}

int mnic_hostmem_move(struct mnic_dev *src, struct mnic_dev *dst, uint32_t owner,
		      struct mnic_hm_move *mv)
{
	struct mnic_user_hdr uh;
	uint32_t *from = NULL, *to = NULL;
	int n, err;

	memset(mv, 0, sizeof(*mv));
	if ((err = mnic_hostmem_attach(src)) < 0 || (err = mnic_hostmem_attach(dst)) < 0)
		return err;
	if (!src->hm_table && !dst->hm_table)
		return 0;   /* physical mode on both: the user-area copy moves the memory */
	if (!src->hm_table || !dst->hm_table)
		return mnic_set_err(dst, MNIC_ERR_ARG, -EXDEV);   /* window <-> host memory */
	from = calloc(src->hm_size / PAGE, sizeof(*from));
	if (!from)
		return mnic_set_err(dst, MNIC_ERR_ARG, -ENOMEM);
	n = mnic_hm_find(src->hm_table, owner, from, (uint32_t)(src->hm_size / PAGE));
	if (n <= 0) {
		free(from);
		return n < 0 ? mnic_set_err(src, MNIC_ERR_ARG, n) : 0;   /* no memory to move */
	}
	/* the range's allocator header (its first page) names the VA it lives at */
	if (pread(src->hm_fd, &uh, sizeof(uh), (off_t)from[0] * PAGE) != (ssize_t)sizeof(uh) ||
	    uh.magic != MNIC_USER_HDR_MAGIC || uh.base == 0 || uh.base % PAGE ||
	    uh.size != (uint64_t)n * PAGE) {
		free(from);
		return mnic_set_err(src, MNIC_ERR_ARG, -EUCLEAN);
	}
	to = calloc((size_t)n, sizeof(*to));
	if (!to) {
		free(from);
		return mnic_set_err(dst, MNIC_ERR_ARG, -ENOMEM);
	}
	/* the target must not hold pages of this owner already: two ranges
	 * under one owner tag could not be told apart */
	err = mnic_hm_find(dst->hm_table, owner, to, (uint32_t)n);
	if (err != 0) {
		free(from);
		free(to);
		return mnic_set_err(dst, MNIC_ERR_ARG, err < 0 && err != -E2BIG ? err : -EEXIST);
	}
	err = mnic_hm_take(dst->hm_table, owner, (uint32_t)n, shuffle_seed(), to);
	if (err == 0)
		err = copy_pages(src->hm_fd, from, dst->hm_fd, to, (uint32_t)n);
	if (err < 0) {
		mnic_hm_release(dst->hm_table, owner, NULL);
		free(from);
		free(to);
		return mnic_set_err(dst, MNIC_ERR_ARG, err);
	}
	for (int v = 0; v < n; v++)
		mv->same_frames += from[v] == to[v];
	free(from);
	/* the copy complete before anything tells the target NIC of it */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	mv->owner = owner;
	mv->npages = (uint32_t)n;
	mv->base = uh.base;
	mv->pfn = to;
	return 0;
}

struct refill {
	struct mnic_dev *dev;
	const struct mnic_hm_move *mv;
	uint32_t mtts;
	int err;
};

static uint64_t rd_le(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* One MTT record of the image (docs/migration-image.md "MTT"): every entry
 * from the target page its IOVA's virtual page moved to. */
static int refill_one(const struct mnic_img_rec *rec, const uint8_t *p, void *arg)
{
	struct refill *r = arg;
	const struct mnic_hm_move *mv = r->mv;
	uint32_t handle, shift, npages;
	uint64_t iova, length, first, *pages;

	if (rec->type != MNIC_IMG_TYPE_MTT)
		return 0;
	handle = (uint32_t)rd_le(p, 4);
	iova = rd_le(p + 4, 8);
	length = rd_le(p + 12, 8);
	shift = p[20];
	/* libmnic's host-memory ranges are 4 KiB pages; an MTT outside the
	 * owner's range is not one this library made */
	first = iova & ~(uint64_t)(PAGE - 1);
	if (shift != 12 || length == 0 || first < mv->base ||
	    (first - mv->base) / PAGE >= mv->npages ||
	    (iova - first + length + PAGE - 1) / PAGE > mv->npages - (first - mv->base) / PAGE)
		return r->err = mnic_set_err(r->dev, MNIC_ERR_ARG, -EFAULT);
	npages = (uint32_t)((iova - first + length + PAGE - 1) / PAGE);
	pages = malloc((size_t)npages * sizeof(*pages));
	if (!pages)
		return r->err = mnic_set_err(r->dev, MNIC_ERR_ARG, -ENOMEM);
	for (uint32_t i = 0; i < npages; i++)
		pages[i] = (uint64_t)mv->pfn[(first - mv->base) / PAGE + i] * PAGE;
	r->err = mnic_write_mtt(r->dev, handle, 0, pages, npages);
	free(pages);
	if (r->err == 0)
		r->mtts++;
	return r->err;
}

int mnic_hostmem_refill(struct mnic_dev *dst, struct mnic_hm_move *mv, const uint8_t *img,
			uint32_t len)
{
	struct refill r = {.dev = dst, .mv = mv};
	char why[128];
	int err;

	mv->mtts = 0;
	if (!mv->npages)
		return 0;
	err = mnic_img_parse(img, len, NULL, refill_one, &r, why, sizeof(why));
	mv->mtts = r.mtts;
	if (err < 0 && r.err == 0)
		return mnic_set_err(dst, MNIC_ERR_ARG, err);   /* framing: yet the NIC took it */
	return err;
}

void mnic_hostmem_unmove(struct mnic_dev *dst, struct mnic_hm_move *mv)
{
	if (mv->npages && dst->hm_table)
		mnic_hm_release(dst->hm_table, mv->owner, NULL);
	free(mv->pfn);
	memset(mv, 0, sizeof(*mv));
}

void mnic_hostmem_move_done(struct mnic_hm_move *mv)
{
	free(mv->pfn);
	mv->pfn = NULL;
}

/* The reopen of mnic_reopen_inplace in host-memory mode: the process's
 * pages moved to the target's aperture ("<bar>.hostmem", where the
 * migration put them under this process's owner tag); each is mapped over
 * its old self at the same VA, and the source's pages are handed back.
 * Only system calls and plain stores (a signal handler runs it): the page
 * list goes to an anonymous mapping, never to malloc. */
int mnic_hostmem_reopen_inplace(struct mnic_dev *dev, const char *bar, size_t bar_len)
{
	static const char ext[] = ".hostmem";
	char path[sizeof(dev->hm_path)];
	uint32_t owner = (uint32_t)getpid(), *pfn;
	struct mnic_hm_hdr *h, hdr;
	size_t tlen, plen;
	struct stat st;
	int fd, n, err = 0;

	if (!dev->hm_va)
		return 0;   /* physical mode: the BAR is the memory */
	if (dev->role != MNIC_ROLE_TENANT)
		return -EOPNOTSUPP;   /* a management range does not follow a process */
	if (bar_len + sizeof(ext) > sizeof(path))
		return -ENAMETOOLONG;
	for (size_t i = 0; i < bar_len; i++)
		path[i] = bar[i];
	for (size_t i = 0; i < sizeof(ext); i++)
		path[bar_len + i] = ext[i];
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		err = -EIO;
	else if (hdr.magic != MNIC_HM_MAGIC || hdr.version != 1 || hdr.npages == 0 ||
		 (uint64_t)st.st_size < (uint64_t)hdr.npages * PAGE ||
		 hdr.table_pages != mnic_hm_table_pages((uint64_t)hdr.npages * PAGE))
		err = -EUCLEAN;   /* no page table a libmnic made */
	if (err) {
		close(fd);
		return err;
	}
	tlen = (size_t)hdr.table_pages * PAGE;
	plen = ((size_t)hdr.npages * sizeof(*pfn) + PAGE - 1) & ~(size_t)(PAGE - 1);
	h = mmap(NULL, tlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	pfn = mmap(NULL, plen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED || pfn == MAP_FAILED) {
		err = -ENOMEM;
		goto out;
	}
	n = mnic_hm_find(h, owner, pfn, hdr.npages);
	if (n < 0 || (uint32_t)n != dev->hm_npages) {
		err = n < 0 ? n : -EXDEV;   /* not this process's range, or none */
		goto out;
	}
	for (uint32_t v = 0; v < (uint32_t)n;) {
		uint32_t run = 1;

		while (v + run < (uint32_t)n && pfn[v + run] == pfn[v] + run)
			run++;
		if (mmap((uint8_t *)dev->hm_va + (size_t)v * PAGE, (size_t)run * PAGE,
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			 (off_t)pfn[v] * PAGE) == MAP_FAILED) {
			err = -errno;   /* half over: the view is lost either way */
			goto out;
		}
		v += run;
	}
	/* the source's pages: the NIC there freed the context before the thaw */
	mnic_hm_release(dev->hm_table, owner, NULL);
	munmap(dev->hm_table, dev->hm_table_len);
	close(dev->hm_fd);
	for (uint32_t v = 0; v < (uint32_t)n; v++)
		dev->hm_pfn[v] = pfn[v];   /* same count: the array fits */
	dev->hm_table = h;
	dev->hm_table_len = tlen;
	dev->hm_fd = fd;
	dev->hm_size = (uint64_t)hdr.npages * PAGE;
	for (size_t i = 0; i <= bar_len + sizeof(ext) - 1; i++)
		dev->hm_path[i] = path[i];
	munmap(pfn, plen);
	return 0;
out:
	if (pfn != MAP_FAILED)
		munmap(pfn, plen);
	if (h != MAP_FAILED)
		munmap(h, tlen);
	close(fd);
	return err;
}
