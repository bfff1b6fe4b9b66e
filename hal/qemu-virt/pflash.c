/* CFI NOR flash driver for QEMU virt's pflash_cfi01 banks (pflash.h),
 * behind the hal/flash.h contract: its wrappers have checked every range
 * and alignment before an op here runs.
 *
 * Commands (Intel "Common Flash Interface" command set 0001, as QEMU's
 * pflash_cfi01 implements it), written to any address in the block:
 *   0x20, 0xd0   block erase, confirm
 *   0x40, data   word program
 *   0x70         read status register; 0x50 clear status; 0xff read array
 * Status register: bit 7 ready, 5 erase error, 4 program error, 3 VPP low,
 * 1 block locked.  The bus carries two 16-bit devices side by side, so
 * commands are written to both halves (CMD(x)) and status bits are checked
 * in both.  Every erase/program is followed by a status poll: QEMU
 * completes them at once, real parts take micro- to milliseconds, hence a
 * bounded poll counted as a timeout instead of a hang.
 *
 * The bank is read as memory (read, map) only in read-array mode: each
 * operation ends with 0xff.  Ordering: MMIO accessors are volatile and the
 * device is Device-nGnRE/strongly-ordered with the MMU off, so command,
 * data and status accesses reach it in program order; the dsb before
 * returning makes the bank's new contents visible to the plain loads of
 * read() and map(). */
#include "pflash.h"

#include <string.h>

#include "hal/errno.h"
#include "hal/mmio.h"

#define CMD(x) ((uint32_t)(x) | (uint32_t)(x) << 16)
#define CFI_ERASE       0x20u
#define CFI_CONFIRM     0xd0u
#define CFI_PROGRAM     0x40u
#define CFI_CLEAR       0x50u
#define CFI_READ_STATUS 0x70u
#define CFI_READ_ARRAY  0xffu
#define ST_READY        CMD(0x80u)
#define ST_ERRORS       CMD(0x3au)    /* erase, program, VPP, locked */
#define POLL_LIMIT      1000000u

static void barrier(void)
{
#if defined(__aarch64__) || defined(__arm__)
	__asm__ volatile("dsb sy" ::: "memory");
#endif
}

static int wait_ready(struct pflash *p, uintptr_t a)
{
	uint32_t st = 0, n;

	for (n = 0; n < POLL_LIMIT; n++) {
		st = mmio_read32(a);
		if ((st & ST_READY) == ST_READY)
			break;
	}
	p->last_status = st;
	if (n == POLL_LIMIT) {
		p->stats.status_timeouts++;
		mmio_write32(a, CMD(CFI_READ_ARRAY));
		return -HAL_ETIMEDOUT;
	}
	if (st & ST_ERRORS) {
		p->stats.errors++;
		mmio_write32(a, CMD(CFI_CLEAR));
		mmio_write32(a, CMD(CFI_READ_ARRAY));
		return -HAL_EIO;
	}
	return 0;
}

static uintptr_t addr(const struct pflash *p, uint32_t off)
{
	return p->cfg->base + off;
}

static int pf_erase(struct hal_flash *f, uint32_t off)
{
	struct pflash *p = f->priv;
	uintptr_t a = addr(p, off);
	int rc;

	p->stats.erases++;
	mmio_write32(a, CMD(CFI_ERASE));
	mmio_write32(a, CMD(CFI_CONFIRM));
	rc = wait_ready(p, a);
	mmio_write32(a, CMD(CFI_READ_ARRAY));
	barrier();
	return rc;
}

static int pf_write(struct hal_flash *f, uint32_t off, const void *src, uint32_t len)
{
	struct pflash *p = f->priv;
	const uint8_t *s = src;
	uint32_t i, w;
	int rc = 0;

	p->stats.programs++;
	for (i = 0; i < len && rc == 0; i += PFLASH_WORD) {
		uintptr_t a = addr(p, off + i);

		w = (uint32_t)s[i] | (uint32_t)s[i + 1] << 8 | (uint32_t)s[i + 2] << 16 |
		    (uint32_t)s[i + 3] << 24;
		if (w == 0xffffffffu)
			continue;          /* erased already: nothing to clear */
		mmio_write32(a, CMD(CFI_PROGRAM));
		mmio_write32(a, w);
		rc = wait_ready(p, a);
		p->stats.words++;
	}
	mmio_write32(addr(p, off), CMD(CFI_READ_ARRAY));
	barrier();
	return rc;
}

static int pf_read(struct hal_flash *f, uint32_t off, void *dst, uint32_t len)
{
	memcpy(dst, (const void *)addr(f->priv, off), len);
	return 0;
}

static const uint8_t *pf_map(struct hal_flash *f, uint32_t off, uint32_t len)
{
	(void)len;
	return (const uint8_t *)addr(f->priv, off);
}

static const struct hal_flash_ops pflash_ops = {
	.read = pf_read,
	.write = pf_write,
	.erase = pf_erase,
	.map = pf_map,
};

struct hal_flash *pflash_init(struct pflash *p, const struct pflash_config *cfg)
{
	p->cfg = cfg;
	p->last_status = 0;
	p->stats = (struct pflash_stats){ 0, 0, 0, 0, 0 };
	p->flash = (struct hal_flash){ &pflash_ops, &cfg->info, { 0, 0 }, p };
	mmio_write32(cfg->base, CMD(CFI_CLEAR));
	mmio_write32(cfg->base, CMD(CFI_READ_ARRAY));
	barrier();
	return &p->flash;
}
