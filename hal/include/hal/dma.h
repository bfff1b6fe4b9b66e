/* DMA between the NIC and host memory (ops table).
 *
 * Host addresses are offsets into the host DMA window of the BAR.  Every
 * transfer is bounds-checked against the window: a host-supplied address or
 * length is hostile until proven otherwise.
 */
#ifndef HAL_DMA_H
#define HAL_DMA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hal/errno.h"

struct hal_dma;

struct hal_dma_ops {
	int (*read)(struct hal_dma *d, uint64_t host_addr, void *dst, size_t len);
	int (*write)(struct hal_dma *d, uint64_t host_addr, const void *src, size_t len);
};

/* DMA window counters, an X-macro list as HAL_ETH_STATS (QUERY_COUNTERS
 * op_mod PORT: dma_<name>). */
#define HAL_DMA_STATS(X) X(reads) X(writes) X(read_bytes) X(write_bytes) X(out_of_window)

struct hal_dma_stats {
#define HAL_DMA_STAT_FIELD_(name) uint64_t name;
	HAL_DMA_STATS(HAL_DMA_STAT_FIELD_)
#undef HAL_DMA_STAT_FIELD_
};

struct hal_dma {
	const struct hal_dma_ops *ops;
	volatile uint8_t *window;   /* CPU address of host address 0 */
	uint64_t window_size;
	struct hal_dma_stats stats;
};

/* The window backend shared by the boards and POSIX: host memory is directly
 * addressable (ivshmem / shared file), so a transfer is a bounds-checked copy. */
void hal_dma_window_init(struct hal_dma *d, volatile uint8_t *window, uint64_t size);
extern const struct hal_dma_ops hal_dma_window_ops;
int hal_dma_window_fault(struct hal_dma *d);

/* The window's transfer, inline: a ring slot, a doorbell record or a CQE is
 * a handful of bytes, and the call through the ops table and the library
 * memcpy cost more than the copy (issue 18 item 2).  With a constant length
 * the compiler turns the memcpy into moves.  Two comparisons so that no sum
 * can wrap: addr < size holds before size - addr is computed; an address
 * equal to the size is outside the window even for an empty transfer.  No
 * volatile semantics are needed: ordering against the host is the caller's
 * hal_rmb()/hal_wmb() around the ownership check, and the window is not a C
 * object of this program, only a mapping of shared bytes. */
static inline int hal_dma_window_in(const struct hal_dma *d, uint64_t a, size_t n)
{
	return a < d->window_size && (uint64_t)n <= d->window_size - a;
}

static inline int hal_dma_window_read(struct hal_dma *d, uint64_t a, void *dst, size_t n)
{
	if (!hal_dma_window_in(d, a, n))
		return hal_dma_window_fault(d);
	if (n)
		memcpy(dst, (const uint8_t *)(uintptr_t)d->window + a, n);
	d->stats.reads++;
	d->stats.read_bytes += n;
	return 0;
}

static inline int hal_dma_window_write(struct hal_dma *d, uint64_t a, const void *src, size_t n)
{
	if (!hal_dma_window_in(d, a, n))
		return hal_dma_window_fault(d);
	if (n)
		memcpy((uint8_t *)(uintptr_t)d->window + a, src, n);
	d->stats.writes++;
	d->stats.write_bytes += n;
	return 0;
}

/* Any backend, through the table: what most callers want (one call, small
 * text); a hot path that moves a few bytes checks for the window and uses
 * the inline copy above (rocev2_ctl_read). */
static inline int hal_dma_read(struct hal_dma *d, uint64_t a, void *dst, size_t n)
{
	return d->ops->read(d, a, dst, n);
}
static inline int hal_dma_write(struct hal_dma *d, uint64_t a, const void *src, size_t n)
{
	return d->ops->write(d, a, src, n);
}

#endif
