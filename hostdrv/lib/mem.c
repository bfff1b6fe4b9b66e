/* Memory for rings, doorbell records and MRs: a first-fit free list with
 * coalescing (boundary tags) whose whole state lives in the area it
 * manages (struct mnic_user_hdr, then struct mnic_umem_blk before every
 * payload), so a copy of the area is a copy of the application's memory
 * layout (what a checkpoint carries of a process), and several processes
 * sharing one NIC allocate in one area under its lock word.
 *
 *   base                 base + 4096
 *   | mnic_user_hdr ...  | blk | payload ... | blk | payload | blk (free) ...| end
 *                          size, prev_size: each block finds both neighbours
 *
 * A free merges with a free block on either side at once, so the area
 * goes back to one free block when everything is freed (the figure
 * mnic_mem_usage reports returns to 0). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "libmnic_int.h"

#define BLK MNIC_UMEM_BLK_SIZE
#define MIN_BLOCK (2u * BLK)   /* a split leaves at least a header and 64 bytes */

struct area {
	uint8_t *user;
	uint64_t off;        /* window address (or IOVA) of user[0] */
	uint64_t end;        /* relative end of the last block (size rounded down to 64) */
	struct mnic_user_hdr *h;
};

static struct mnic_umem_blk *blk_at(const struct area *a, uint64_t rel)
{
	return (struct mnic_umem_blk *)(a->user + rel);
}

static int area_of(struct area *a, uint8_t *user, uint64_t off, uint64_t size)
{
	if (!user || off % BLK || size < MNIC_USER_HDR_SIZE + MIN_BLOCK)
		return -ENOMEM;
	a->user = user;
	a->off = off;
	a->end = size & ~(uint64_t)(BLK - 1);
	a->h = (struct mnic_user_hdr *)user;
	return 0;
}

/* Make the header valid for this area.  A header from another NIC's area
 * of the same geometry (a migrated copy) is kept as it is. */
static int hdr_init(const struct area *a, uint64_t size)
{
	struct mnic_user_hdr *h = a->h;
	uint32_t magic = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);
	uint32_t zero = 0;

	if (magic == MNIC_USER_HDR_MAGIC) {
		if (h->version != MNIC_USER_HDR_VERSION || h->base != a->off || h->size != size ||
		    h->in_use > a->end)
			return -EUCLEAN;   /* corrupt, or an area of another shape or version */
		return 0;
	}
	if (magic != 0)
		return -EUCLEAN;
	/* First user: claim the header with magic = 1 (initialising), lay out
	 * one free block over everything, then publish the magic.  A racing
	 * process waits for the magic. */
	if (__atomic_compare_exchange_n(&h->magic, &zero, 1u, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		struct mnic_umem_blk *b = blk_at(a, MNIC_USER_HDR_SIZE);

		h->version = MNIC_USER_HDR_VERSION;
		h->base = a->off;
		h->size = size;
		h->root = 0;
		h->allocs = 0;
		h->in_use = 0;
		h->lock = 0;
		h->reserved0 = 0;
		h->reserved1 = 0;
		memset(b, 0, sizeof(*b));
		b->magic = MNIC_UMEM_BLK_FREE;
		b->size = a->end - MNIC_USER_HDR_SIZE;
		/* the layout complete before any process may walk it */
		__atomic_store_n(&h->magic, MNIC_USER_HDR_MAGIC, __ATOMIC_RELEASE);
		return 0;
	}
	for (long spin = 0; spin < 100000000L; spin++)
		if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == MNIC_USER_HDR_MAGIC)
			return 0;
	return -ETIMEDOUT;
}

static int holder_gone(uint32_t pid)
{
	return pid != 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* The lock word holds the holder's process id.  Acquire pairs with the
 * release in mnic_pid_unlock, so a holder's writes are seen whole.  A
 * holder killed inside (a few stores) is taken over: its half-done split
 * at worst leaves a block the next walk refuses. */
int mnic_pid_lock(uint32_t *word)
{
	uint32_t self = (uint32_t)getpid();

	for (long spin = 0; spin < 20000000L; spin++) {
		uint32_t cur = 0;

		if (__atomic_compare_exchange_n(word, &cur, self, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 0;
		if ((spin & 1023) == 1023 && cur != self && holder_gone(cur) &&
		    __atomic_compare_exchange_n(word, &cur, self, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 0;
		sched_yield();
	}
	return -ETIMEDOUT;
}

void mnic_pid_unlock(uint32_t *word)
{
	__atomic_store_n(word, 0u, __ATOMIC_RELEASE);
}

static int area_lock(const struct area *a)
{
	return mnic_pid_lock(&a->h->lock);
}

static void area_unlock(const struct area *a)
{
	mnic_pid_unlock(&a->h->lock);
}

static int open_locked(struct area *a, uint8_t *user, uint64_t off, uint64_t size)
{
	int err = area_of(a, user, off, size);

	if (err == 0)
		err = hdr_init(a, size);
	if (err == 0)
		err = area_lock(a);
	return err;
}

/* A block at rel with the expected prev_size, inside the area. */
static int blk_ok(const struct area *a, uint64_t rel, uint64_t prev_size)
{
	const struct mnic_umem_blk *b;

	if (rel < MNIC_USER_HDR_SIZE || rel >= a->end || a->end - rel < BLK)
		return 0;
	b = blk_at(a, rel);
	return (b->magic == MNIC_UMEM_BLK_FREE || b->magic == MNIC_UMEM_BLK_USED) &&
	       b->size >= BLK && b->size % BLK == 0 && b->size <= a->end - rel &&
	       b->prev_size == prev_size;
}

/* The block after rel (if any) learns rel's new size. */
static void fix_next(const struct area *a, uint64_t rel)
{
	uint64_t next = rel + blk_at(a, rel)->size;

	if (next < a->end)
		blk_at(a, next)->prev_size = blk_at(a, rel)->size;
}

/* Split the block at rel so that [rel, rel + size) is one block and the
 * rest a free block after it. */
static void split(const struct area *a, uint64_t rel, uint64_t size)
{
	struct mnic_umem_blk *b = blk_at(a, rel), *t = blk_at(a, rel + size);

	memset(t, 0, sizeof(*t));
	t->magic = MNIC_UMEM_BLK_FREE;
	t->size = b->size - size;
	t->prev_size = size;
	b->size = size;
	fix_next(a, rel + size);
}

static int alloc_locked(const struct area *a, uint64_t len, uint64_t align, uint64_t *addr)
{
	uint64_t rel = MNIC_USER_HDR_SIZE, prev = 0, need;

	if (len > a->end)
		return -ENOMEM;
	need = ((len + BLK - 1) & ~(uint64_t)(BLK - 1)) + BLK;
	for (; rel < a->end; prev = blk_at(a, rel)->size, rel += prev) {
		struct mnic_umem_blk *b;
		uint64_t payload, start;

		if (!blk_ok(a, rel, prev))
			return -EUCLEAN;
		b = blk_at(a, rel);
		if (b->magic != MNIC_UMEM_BLK_FREE)
			continue;
		/* payload aligned as a window address; its header right before */
		payload = ((a->off + rel + BLK + align - 1) & ~(align - 1)) - a->off;
		start = payload - BLK;   /* rel, or >= 64 past it (both multiples of 64) */
		if (start - rel > b->size || need > b->size - (start - rel))
			continue;
		if (start > rel) {   /* the gap before stays free, a block of its own */
			split(a, rel, start - rel);
			b = blk_at(a, start);
		}
		if (b->size - need >= MIN_BLOCK)
			split(a, start, need);
		b->magic = MNIC_UMEM_BLK_USED;
		b->kind = MNIC_OBJ_NONE;
		b->handle = 0;
		b->mtt = 0;
		b->len = len;
		a->h->in_use += b->size;
		a->h->allocs++;
		memset(a->user + payload, 0, len);
		*addr = a->off + payload;
		return 0;
	}
	return -ENOMEM;
}

/* The used block whose payload is at addr, checked against both
 * neighbours' boundary tags (application data that merely looks like a
 * header is not a block).  Returns its relative offset or a negative errno. */
static int64_t used_blk_of(const struct area *a, uint64_t addr)
{
	const struct mnic_umem_blk *b;
	uint64_t rel;

	if (addr < a->off + MNIC_USER_HDR_SIZE + BLK || (addr - a->off) % BLK)
		return -EINVAL;
	rel = addr - a->off - BLK;
	if (rel >= a->end || a->end - rel < BLK)
		return -EINVAL;
	b = blk_at(a, rel);
	if (b->magic != MNIC_UMEM_BLK_USED || b->size < BLK || b->size % BLK ||
	    b->size > a->end - rel)
		return -EINVAL;
	if (rel + b->size < a->end && !blk_ok(a, rel + b->size, b->size))
		return -EUCLEAN;
	if (b->prev_size == 0 ? rel != MNIC_USER_HDR_SIZE
			      : (b->prev_size > rel - MNIC_USER_HDR_SIZE ||
				 !blk_ok(a, rel - b->prev_size, blk_at(a, rel - b->prev_size)->prev_size) ||
				 blk_at(a, rel - b->prev_size)->size != b->prev_size))
		return -EUCLEAN;
	return (int64_t)rel;
}

/* Free the used block at rel, merging with free neighbours; returns the
 * relative offset of the free block that now covers it. */
static uint64_t free_locked(const struct area *a, uint64_t rel)
{
	struct mnic_umem_blk *b = blk_at(a, rel);
	uint64_t next = rel + b->size;

	a->h->in_use -= b->size;
	a->h->allocs--;
	b->magic = MNIC_UMEM_BLK_FREE;
	b->kind = MNIC_OBJ_NONE;
	b->handle = 0;
	b->mtt = 0;
	b->len = 0;
	if (next < a->end && blk_at(a, next)->magic == MNIC_UMEM_BLK_FREE) {
		b->size += blk_at(a, next)->size;
		blk_at(a, next)->magic = 0;   /* a stale header never validates */
		fix_next(a, rel);
	}
	if (b->prev_size && blk_at(a, rel - b->prev_size)->magic == MNIC_UMEM_BLK_FREE) {
		uint64_t p = rel - b->prev_size;

		blk_at(a, p)->size += b->size;
		b->magic = 0;
		fix_next(a, p);
		return p;
	}
	return rel;
}

int mnic_umem_alloc(uint8_t *user, uint64_t user_off, uint64_t user_size, uint64_t size,
		    uint64_t align, uint64_t *addr)
{
	struct area a;
	int err;

	if (align == 0)
		align = 64;
	if (size == 0 || (align & (align - 1)) || align < 8 || align > (1ull << 30))
		return -EINVAL;
	if (align < BLK)
		align = BLK;   /* blocks are 64-byte granular */
	err = open_locked(&a, user, user_off, user_size);
	if (err < 0)
		return err;
	err = alloc_locked(&a, size, align, addr);
	area_unlock(&a);
	return err;
}

int mnic_umem_free(uint8_t *user, uint64_t user_off, uint64_t user_size, uint64_t addr)
{
	struct area a;
	int64_t rel;
	int err = open_locked(&a, user, user_off, user_size);

	if (err < 0)
		return err;
	rel = used_blk_of(&a, addr);
	if (rel >= 0)
		free_locked(&a, (uint64_t)rel);
	area_unlock(&a);
	return rel < 0 ? (int)rel : 0;
}

int mnic_umem_bind(uint8_t *user, uint64_t user_off, uint64_t user_size, uint64_t addr,
		   uint32_t kind, uint32_t handle, uint32_t mtt)
{
	struct area a;
	int64_t rel;
	int err = open_locked(&a, user, user_off, user_size);

	if (err < 0)
		return err;
	rel = used_blk_of(&a, addr);
	if (rel >= 0) {
		struct mnic_umem_blk *b = blk_at(&a, (uint64_t)rel);

		if (kind != MNIC_OBJ_NONE) {
			b->kind = kind;
			b->handle = handle;
		}
		if (mtt)
			b->mtt = mtt;
	}
	area_unlock(&a);
	return rel < 0 ? (int)rel : 0;
}

int mnic_umem_release(uint8_t *user, uint64_t user_off, uint64_t user_size, uint32_t kind,
		      uint32_t handle, uint32_t *mtts, uint32_t max_mtts, uint32_t *n_mtts)
{
	uint64_t rel = MNIC_USER_HDR_SIZE, prev = 0;
	struct area a;
	int freed = 0, err = open_locked(&a, user, user_off, user_size);

	if (err < 0)
		return err;
	*n_mtts = 0;
	for (; rel < a.end; prev = blk_at(&a, rel)->size, rel += prev) {
		struct mnic_umem_blk *b;

		if (!blk_ok(&a, rel, prev)) {
			freed = -EUCLEAN;
			break;
		}
		b = blk_at(&a, rel);
		if (b->magic != MNIC_UMEM_BLK_USED || b->kind != kind || b->handle != handle ||
		    kind == MNIC_OBJ_NONE)
			continue;
		if (b->mtt && *n_mtts < max_mtts)
			mtts[(*n_mtts)++] = b->mtt;
		rel = free_locked(&a, rel);
		prev = blk_at(&a, rel)->prev_size;
		freed++;
	}
	area_unlock(&a);
	return freed;
}

int mnic_umem_stats(uint8_t *user, uint64_t user_off, uint64_t user_size,
		    struct mnic_mem_stats *st)
{
	uint64_t rel = MNIC_USER_HDR_SIZE, prev = 0;
	struct area a;
	int err = open_locked(&a, user, user_off, user_size);

	if (err < 0)
		return err;
	memset(st, 0, sizeof(*st));
	st->size = user_size;
	st->in_use = a.h->in_use;
	st->allocs = a.h->allocs;
	for (; rel < a.end; prev = blk_at(&a, rel)->size, rel += prev) {
		const struct mnic_umem_blk *b;

		if (!blk_ok(&a, rel, prev)) {
			err = -EUCLEAN;
			break;
		}
		b = blk_at(&a, rel);
		if (b->magic == MNIC_UMEM_BLK_FREE) {
			st->free_blocks++;
			if (b->size - BLK > st->largest_free)
				st->largest_free = b->size - BLK;
		}
	}
	area_unlock(&a);
	return err;
}

int mnic_umem_reset(uint8_t *user, uint64_t user_off, uint64_t user_size)
{
	struct area a;
	int err = area_of(&a, user, user_off, user_size);

	if (err < 0)
		return err;
	__atomic_store_n(&a.h->magic, 0u, __ATOMIC_RELEASE);
	memset(user, 0, MNIC_USER_HDR_SIZE);
	return hdr_init(&a, user_size);
}

/* root: read and written without the lock (one aligned word) */
int mnic_umem_root(uint8_t *user, uint64_t user_off, uint64_t user_size, uint64_t *get,
		   const uint64_t *set)
{
	struct area a;
	int err = area_of(&a, user, user_off, user_size);

	if (err == 0)
		err = hdr_init(&a, user_size);
	if (err < 0)
		return err;
	if (set)
		__atomic_store_n(&a.h->root, *set, __ATOMIC_RELEASE);
	if (get)
		*get = __atomic_load_n(&a.h->root, __ATOMIC_ACQUIRE);
	return 0;
}

/* ---- the device's view ------------------------------------------------------ */

int mnic_alloc(struct mnic_dev *dev, uint64_t size, uint64_t align, struct mnic_buf *buf)
{
	uint64_t addr;
	int err;

	if (!dev || !buf)
		return -EINVAL;
	err = mnic_mem_ensure(dev);   /* a tenant's memory is its context's range */
	if (err < 0)
		return err;
	err = mnic_umem_alloc(dev->user, dev->user_off, dev->user_size, size, align, &addr);
	if (err < 0)
		return mnic_set_err(dev, MNIC_ERR_ARG, err);
	buf->addr = addr;
	buf->len = size;
	buf->ptr = dev->user + (addr - dev->user_off);
	return mnic_set_err(dev, MNIC_ERR_NONE, 0);
}

int mnic_free(struct mnic_dev *dev, uint64_t addr)
{
	int err;

	if (!dev)
		return -EINVAL;
	err = mnic_mem_ensure(dev);
	if (err == 0)
		err = mnic_umem_free(dev->user, dev->user_off, dev->user_size, addr);
	return err < 0 ? mnic_set_err(dev, MNIC_ERR_ARG, err) : mnic_set_err(dev, MNIC_ERR_NONE, 0);
}

int mnic_mem_bind(struct mnic_dev *dev, uint64_t addr, enum mnic_obj_kind kind, uint32_t handle)
{
	int err;

	if (!dev || kind == MNIC_OBJ_NONE || kind > MNIC_OBJ_EQ)
		return -EINVAL;
	err = mnic_mem_ensure(dev);
	if (err == 0)
		err = mnic_umem_bind(dev->user, dev->user_off, dev->user_size, addr, kind, handle, 0);
	return err < 0 ? mnic_set_err(dev, MNIC_ERR_ARG, err) : 0;
}

int mnic_mem_set_mtt(struct mnic_dev *dev, uint64_t addr, uint32_t mtt)
{
	return mnic_umem_bind(dev->user, dev->user_off, dev->user_size, addr, MNIC_OBJ_NONE, 0, mtt);
}

int mnic_mem_release(struct mnic_dev *dev, enum mnic_obj_kind kind, uint32_t handle)
{
	uint32_t mtts[8], n = 0;
	int freed;

	if (mnic_mem_ensure(dev) < 0)
		return 0;
	/* an object holds at most two rings + two doorbell records (a QP) */
	freed = mnic_umem_release(dev->user, dev->user_off, dev->user_size, kind, handle, mtts,
				  sizeof(mtts) / sizeof(mtts[0]), &n);
	for (uint32_t i = 0; i < n; i++)
		mnic_destroy_mtt(dev, mtts[i]);
	return freed;
}

static const uint16_t destroy_opcode[] = {
	[MNIC_OBJ_MR] = MNIC_CMD_DEREG_MR,
	[MNIC_OBJ_CQ] = MNIC_CMD_DESTROY_CQ,
	[MNIC_OBJ_SRQ] = MNIC_CMD_DESTROY_SRQ,
	[MNIC_OBJ_QP] = MNIC_CMD_DESTROY_QP,
	[MNIC_OBJ_EQ] = MNIC_CMD_DESTROY_EQ,
};

int mnic_destroy_object(struct mnic_dev *dev, enum mnic_obj_kind kind, uint32_t handle)
{
	struct mnic_cmd_handle_in in;
	struct mnic_cmd_simple_out out;
	int err;

	if (!dev || kind == MNIC_OBJ_NONE || kind > MNIC_OBJ_EQ)
		return -EINVAL;
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = destroy_opcode[kind];
	in.handle = handle;
	err = mnic_cmd(dev, &in, sizeof(in), &out, sizeof(out), NULL);
	if (err < 0)
		return err;
	mnic_mem_release(dev, kind, handle);
	return mnic_set_err(dev, MNIC_ERR_NONE, 0);
}

void *mnic_window_ptr(struct mnic_dev *dev, uint64_t addr, uint64_t len)
{
	if (!dev || addr < dev->user_off || addr - dev->user_off > dev->user_size ||
	    len > dev->user_size - (addr - dev->user_off))
		return NULL;
	return dev->user + (addr - dev->user_off);
}

int mnic_mem_reset(struct mnic_dev *dev)
{
	int err = mnic_mem_ensure(dev);

	return err < 0 ? err : mnic_umem_reset(dev->user, dev->user_off, dev->user_size);
}

int mnic_mem_stats(struct mnic_dev *dev, struct mnic_mem_stats *st)
{
	int err;

	if (!dev || !st)
		return -EINVAL;
	err = mnic_mem_ensure(dev);
	if (err == 0)
		err = mnic_umem_stats(dev->user, dev->user_off, dev->user_size, st);
	return err;
}

int mnic_mem_usage(struct mnic_dev *dev, uint64_t *used, uint64_t *size)
{
	struct mnic_mem_stats st;
	int err = mnic_mem_stats(dev, &st);

	if (err < 0)
		return err;
	if (used)
		*used = st.in_use;
	if (size)
		*size = st.size;
	return 0;
}

int mnic_mem_set_root(struct mnic_dev *dev, uint64_t addr)
{
	int err = mnic_mem_ensure(dev);

	if (err < 0)
		return err;
	if (addr && !mnic_window_ptr(dev, addr, 1))
		return -EINVAL;
	return mnic_umem_root(dev->user, dev->user_off, dev->user_size, NULL, &addr);
}

int mnic_mem_get_root(struct mnic_dev *dev, uint64_t *addr)
{
	int err = mnic_mem_ensure(dev);

	return err < 0 ? err : mnic_umem_root(dev->user, dev->user_off, dev->user_size, addr, NULL);
}

int64_t mnic_copy_user_area(struct mnic_dev *from, struct mnic_dev *to)
{
	if (!from || !to || from == to)
		return -EINVAL;
	if (from->user_off != to->user_off || from->user_size != to->user_size) {
		mnic_set_err(to, MNIC_ERR_ARG, -EINVAL);
		return -EXDEV;   /* different geometry: the addresses would not hold */
	}
	memcpy(to->user, from->user, (size_t)from->user_size);
	/* the copy complete before anything that tells the target NIC */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return (int64_t)from->user_size;
}
