/* Flash device interface (ops table), NOR semantics: erase sets a whole
 * erase block to 0xff, a write can only clear bits.
 *
 * A device is a const geometry (struct hal_flash_info), its driver's
 * runtime data (priv) and an ops table.  Policy code (boot/: the A/B boot
 * record, image verification, the update) calls the hal_flash_* wrappers
 * below, never the ops: the wrappers check every offset and length against
 * the geometry (they may come from a host command or from the flash
 * itself, so they are hostile), count each refusal, and the ops only ever
 * see ranges inside the device, aligned as the geometry says.
 *
 * Drivers: hal/qemu-virt/pflash.c (CFI NOR banks of QEMU virt).
 */
#ifndef HAL_FLASH_H
#define HAL_FLASH_H

#include <stddef.h>
#include <stdint.h>

#include "hal/errno.h"

/* Geometry, fixed for a device.  erase_block and write_block are powers of
 * two; size is a multiple of erase_block. */
struct hal_flash_info {
	uint32_t size;          /* bytes; offsets lie in [0, size) */
	uint32_t erase_block;   /* unit of erase: offsets are multiples of it */
	uint32_t write_block;   /* unit of write: offset and length multiples of it */
};

struct hal_flash_stats {
	uint64_t out_of_range;  /* refused: offset or length beyond the device */
	uint64_t misaligned;    /* refused: not on the erase/write unit */
};

struct hal_flash;

struct hal_flash_ops {
	/* Copy len bytes at off into dst.  Required. */
	int (*read)(struct hal_flash *f, uint32_t off, void *dst, uint32_t len);
	/* Program len bytes at off (clears bits only: the range must have been
	 * erased for the data to read back).  Required. */
	int (*write)(struct hal_flash *f, uint32_t off, const void *src, uint32_t len);
	/* Erase the erase block at off.  Required. */
	int (*erase)(struct hal_flash *f, uint32_t off);
	/* A read-only view of [off, off + len) in the CPU's address space, valid
	 * until the next write or erase.  Optional (NULL): only memory-mapped
	 * parts have one; boot/ verifies images in place through it. */
	const uint8_t *(*map)(struct hal_flash *f, uint32_t off, uint32_t len);
};

struct hal_flash {
	const struct hal_flash_ops *ops;
	const struct hal_flash_info *info;
	struct hal_flash_stats stats;
	void *priv;                     /* the driver's instance */
};

/* [off, off + len) inside the device; len 0 is a range too, off is not
 * allowed to be the end. */
static inline int hal_flash_range_ok(struct hal_flash *f, uint32_t off, uint32_t len)
{
	if (off >= f->info->size || len > f->info->size - off) {
		f->stats.out_of_range++;
		return 0;
	}
	return 1;
}

/* Returns 0 or a negative HAL error: -HAL_EINVAL for a range the device
 * does not have or a misaligned one, else the driver's (-HAL_EIO,
 * -HAL_ETIMEDOUT). */
static inline int hal_flash_read(struct hal_flash *f, uint32_t off, void *dst, uint32_t len)
{
	if (!hal_flash_range_ok(f, off, len))
		return -HAL_EINVAL;
	return f->ops->read(f, off, dst, len);
}

static inline int hal_flash_write(struct hal_flash *f, uint32_t off, const void *src, uint32_t len)
{
	if (!hal_flash_range_ok(f, off, len))
		return -HAL_EINVAL;
	if ((off | len) & (f->info->write_block - 1u)) {
		f->stats.misaligned++;
		return -HAL_EINVAL;
	}
	return f->ops->write(f, off, src, len);
}

static inline int hal_flash_erase(struct hal_flash *f, uint32_t off)
{
	if (!hal_flash_range_ok(f, off, f->info->erase_block))
		return -HAL_EINVAL;
	if (off & (f->info->erase_block - 1u)) {
		f->stats.misaligned++;
		return -HAL_EINVAL;
	}
	return f->ops->erase(f, off);
}

/* NULL when the range is not in the device or the device is not mapped. */
static inline const uint8_t *hal_flash_map(struct hal_flash *f, uint32_t off, uint32_t len)
{
	if (!f->ops->map || !hal_flash_range_ok(f, off, len))
		return NULL;
	return f->ops->map(f, off, len);
}

#endif
