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

static inline int hal_dma_read(struct hal_dma *d, uint64_t a, void *dst, size_t n)
{
	return d->ops->read(d, a, dst, n);
}
static inline int hal_dma_write(struct hal_dma *d, uint64_t a, const void *src, size_t n)
{
	return d->ops->write(d, a, src, n);
}

#endif
