/* Memory in the user area: a bump allocator whose whole state is the
 * header at the start of the user area (struct mnic_user_hdr), so a copy
 * of the user area is a copy of the application's memory layout (what a
 * checkpoint carries of a process).  `next` advances by compare-and-swap:
 * processes sharing one NIC allocate without a lock. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include "libmnic_int.h"

static struct mnic_user_hdr *hdr_of(uint8_t *user)
{
	return (struct mnic_user_hdr *)user;
}

/* Make the header valid for this user area.  A header from another NIC's
 * user area of the same geometry (a migrated copy) is kept as it is. */
static int hdr_init(uint8_t *user, uint64_t user_off, uint64_t user_size)
{
	struct mnic_user_hdr *h = hdr_of(user);
	uint32_t magic = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);
	uint32_t zero = 0;

	if (user_size < MNIC_USER_HDR_SIZE)
		return -ENOMEM;
	if (magic == MNIC_USER_HDR_MAGIC) {
		if (h->version != 1 || h->base != user_off || h->size != user_size ||
		    h->next < user_off + MNIC_USER_HDR_SIZE || h->next > user_off + user_size)
			return -EUCLEAN;   /* corrupt, or a user area of another shape */
		return 0;
	}
	if (magic != 0)
		return -EUCLEAN;
	/* First user: claim the header with magic = 1 (initialising), fill it,
	 * then publish the magic.  A racing process waits for the magic. */
	if (__atomic_compare_exchange_n(&h->magic, &zero, 1u, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		h->version = 1;
		h->base = user_off;
		h->size = user_size;
		h->root = 0;
		h->allocs = 0;
		memset(h->reserved, 0, sizeof(h->reserved));
		__atomic_store_n(&h->next, user_off + MNIC_USER_HDR_SIZE, __ATOMIC_RELEASE);
		__atomic_store_n(&h->magic, MNIC_USER_HDR_MAGIC, __ATOMIC_RELEASE);
		return 0;
	}
	for (long spin = 0; spin < 100000000L; spin++)
		if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == MNIC_USER_HDR_MAGIC)
			return 0;
	return -ETIMEDOUT;
}

int mnic_umem_alloc(uint8_t *user, uint64_t user_off, uint64_t user_size, uint64_t size,
		    uint64_t align, uint64_t *addr)
{
	struct mnic_user_hdr *h = hdr_of(user);
	uint64_t old, start, end, limit = user_off + user_size;
	int err;

	if (align == 0)
		align = 64;
	if (size == 0 || (align & (align - 1)) || align < 8 || align > (1ull << 30))
		return -EINVAL;
	err = hdr_init(user, user_off, user_size);
	if (err < 0)
		return err;
	old = __atomic_load_n(&h->next, __ATOMIC_ACQUIRE);
	do {
		if (old < user_off + MNIC_USER_HDR_SIZE || old > limit)
			return -EUCLEAN;
		start = (old + align - 1) & ~(align - 1);
		if (start < old || start >= limit || size > limit - start)
			return -ENOMEM;
		end = start + size;
	} while (!__atomic_compare_exchange_n(&h->next, &old, end, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	__atomic_fetch_add(&h->allocs, 1, __ATOMIC_RELAXED);
	memset(user + (start - user_off), 0, size);
	*addr = start;
	return 0;
}

int mnic_umem_reset(uint8_t *user, uint64_t user_off, uint64_t user_size)
{
	struct mnic_user_hdr *h = hdr_of(user);

	if (user_size < MNIC_USER_HDR_SIZE)
		return -ENOMEM;
	__atomic_store_n(&h->magic, 0u, __ATOMIC_RELEASE);
	memset(user, 0, MNIC_USER_HDR_SIZE);
	return hdr_init(user, user_off, user_size);
}

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

int mnic_mem_usage(struct mnic_dev *dev, uint64_t *used, uint64_t *size)
{
	struct mnic_user_hdr *h;
	int err = mnic_mem_ensure(dev);

	if (err == 0)
		err = hdr_init(dev->user, dev->user_off, dev->user_size);
	if (err < 0)
		return err;
	h = hdr_of(dev->user);
	if (used)
		*used = __atomic_load_n(&h->next, __ATOMIC_ACQUIRE) - dev->user_off;
	if (size)
		*size = dev->user_size;
	return 0;
}

int mnic_mem_set_root(struct mnic_dev *dev, uint64_t addr)
{
	int err = mnic_mem_ensure(dev);

	if (err == 0)
		err = hdr_init(dev->user, dev->user_off, dev->user_size);

	if (err < 0)
		return err;
	if (addr && !mnic_window_ptr(dev, addr, 1))
		return -EINVAL;
	__atomic_store_n(&hdr_of(dev->user)->root, addr, __ATOMIC_RELEASE);
	return 0;
}

int mnic_mem_get_root(struct mnic_dev *dev, uint64_t *addr)
{
	int err = mnic_mem_ensure(dev);

	if (err == 0)
		err = hdr_init(dev->user, dev->user_off, dev->user_size);

	if (err < 0)
		return err;
	*addr = __atomic_load_n(&hdr_of(dev->user)->root, __ATOMIC_ACQUIRE);
	return 0;
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
