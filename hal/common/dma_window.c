/* DMA backend for a host window that is directly addressable (ivshmem BAR2
 * on the boards, an mmap'd shared file on POSIX): a transfer is a copy,
 * bounds-checked because every address and length comes from the host.
 *
 * Portable C with no platform calls: the boards link this file as is. */
#include <string.h>

#include "hal/dma.h"
#include "hal/errno.h"

/* An address or length outside the window: counted, refused (dma.h). */
int hal_dma_window_fault(struct hal_dma *d)
{
	d->stats.out_of_window++;
	return -HAL_EFAULT;
}

/* The ops table's entries, for callers that hold the table (a wrapper over
 * this backend, as the unit tests' DMA log): dma.h's inline copy. */
static int window_read(struct hal_dma *d, uint64_t addr, void *dst, size_t len)
{
	return hal_dma_window_read(d, addr, dst, len);
}

static int window_write(struct hal_dma *d, uint64_t addr, const void *src, size_t len)
{
	return hal_dma_window_write(d, addr, src, len);
}

const struct hal_dma_ops hal_dma_window_ops = {
	.read = window_read,
	.write = window_write,
};

void hal_dma_window_init(struct hal_dma *d, volatile uint8_t *window, uint64_t size)
{
	memset(d, 0, sizeof(*d));
	d->ops = &hal_dma_window_ops;
	d->window = window;
	d->window_size = window ? size : 0;
}
