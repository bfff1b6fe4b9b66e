/* tests/unit/hal/ram_flash.h: a NOR flash in RAM behind hal_flash_ops. */
#include "ram_flash.h"

#include <string.h>

static struct ram_flash *of(struct hal_flash *f)
{
	return f->priv;
}

/* What the contract promises every op: inside the device, aligned. */
static int inside(struct ram_flash *r, uint32_t off, uint32_t len, uint32_t unit)
{
	if (off >= r->info.size || len > r->info.size - off || (off & (unit - 1u)) ||
	    (len & (unit - 1u))) {
		r->bad_calls++;
		return 0;
	}
	return 1;
}

static int rf_read(struct hal_flash *f, uint32_t off, void *dst, uint32_t len)
{
	struct ram_flash *r = of(f);

	r->reads++;
	if (!inside(r, off, len, 1))
		return -HAL_EFAULT;
	memcpy(dst, r->mem + off, len);
	return 0;
}

static int rf_write(struct hal_flash *f, uint32_t off, const void *src, uint32_t len)
{
	struct ram_flash *r = of(f);
	const uint8_t *p = src;

	r->writes++;
	if (!inside(r, off, len, r->info.write_block))
		return -HAL_EFAULT;
	for (uint32_t i = 0; i < len; i++)
		r->mem[off + i] &= p[i];
	return 0;
}

static int rf_erase(struct hal_flash *f, uint32_t off)
{
	struct ram_flash *r = of(f);

	r->erases++;
	if (!inside(r, off, r->info.erase_block, r->info.erase_block))
		return -HAL_EFAULT;
	memset(r->mem + off, 0xff, r->info.erase_block);
	return 0;
}

static const uint8_t *rf_map(struct hal_flash *f, uint32_t off, uint32_t len)
{
	struct ram_flash *r = of(f);

	r->maps++;
	return inside(r, off, len, 1) ? r->mem + off : NULL;
}

static const struct hal_flash_ops ram_flash_ops = {
	.read = rf_read,
	.write = rf_write,
	.erase = rf_erase,
	.map = rf_map,
};

struct hal_flash *ram_flash_init(struct ram_flash *r, uint8_t *mem, uint32_t size,
				 uint32_t erase_block, uint32_t write_block)
{
	memset(r, 0, sizeof(*r));
	r->info = (struct hal_flash_info){ size, erase_block, write_block };
	r->mem = mem;
	r->flash = (struct hal_flash){ &ram_flash_ops, &r->info, { 0, 0 }, r };
	return &r->flash;
}
