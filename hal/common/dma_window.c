/* DMA backend for a host window that is directly addressable (ivshmem BAR2
 * on the boards, an mmap'd shared file on POSIX): a transfer is a copy,
 * bounds-checked because every address and length comes from the host.
 *
 * Portable C with no platform calls: the boards link this file as is. */
#include <string.h>

#include "hal/dma.h"
#include "hal/errno.h"

/* Written as two comparisons so that no sum can wrap: addr < size holds
 * before size - addr is computed.  An address equal to the size is outside
 * the window even for an empty transfer. */
static int window_check(struct hal_dma *d, uint64_t addr, size_t len)
{
	if (addr >= d->window_size || (uint64_t)len > d->window_size - addr) {
		d->stats.out_of_window++;
		return -HAL_EFAULT;
	}
	return 0;
}

/* The copies need no volatile semantics: ordering against the host is set by
 * the caller's hal_rmb()/hal_wmb() around the ownership check, and the window
 * is not a C object of this program, only a mapping of shared bytes. */
static int window_read(struct hal_dma *d, uint64_t addr, void *dst, size_t len)
{
	if (window_check(d, addr, len) < 0)
		return -HAL_EFAULT;
	if (len)
		memcpy(dst, (const uint8_t *)(uintptr_t)d->window + addr, len);
	d->stats.reads++;
	d->stats.read_bytes += len;
	return 0;
}

static int window_write(struct hal_dma *d, uint64_t addr, const void *src, size_t len)
{
	if (window_check(d, addr, len) < 0)
		return -HAL_EFAULT;
	if (len)
		memcpy((uint8_t *)(uintptr_t)d->window + addr, src, len);
	d->stats.writes++;
	d->stats.write_bytes += len;
	return 0;
}

static const struct hal_dma_ops window_ops = {
	.read = window_read,
	.write = window_write,
};

void hal_dma_window_init(struct hal_dma *d, volatile uint8_t *window, uint64_t size)
{
	memset(d, 0, sizeof(*d));
	d->ops = &window_ops;
	d->window = window;
	d->window_size = window ? size : 0;
}
