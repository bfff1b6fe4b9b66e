/* CFI NOR flash driver for QEMU virt's pflash_cfi01 banks (pflash.h).
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
 * The bank is read as memory (map) only in read-array mode: each operation
 * ends with 0xff.  Ordering: MMIO accessors are volatile and the device is
 * Device-nGnRE/strongly-ordered with the MMU off, so command, data and
 * status accesses reach it in program order; the dsb before returning makes
 * the bank's new contents visible to the plain loads of map(). */
#include "pflash.h"

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

static int pf_erase(void *ctx, uint32_t off)
{
	struct pflash *p = ctx;
	uintptr_t a = p->base + off;
	int rc;

	if (off >= p->size || (off & (MNIC_FLASH_SECTOR - 1)))
		return -HAL_EINVAL;
	p->stats.erases++;
	mmio_write32(a, CMD(CFI_ERASE));
	mmio_write32(a, CMD(CFI_CONFIRM));
	rc = wait_ready(p, a);
	mmio_write32(a, CMD(CFI_READ_ARRAY));
	barrier();
	return rc;
}

static int pf_program(void *ctx, uint32_t off, const void *src, uint32_t len)
{
	struct pflash *p = ctx;
	const uint8_t *s = src;
	uint32_t i, w;
	int rc = 0;

	if ((off & 3u) || (len & 3u) || off > p->size || len > p->size - off)
		return -HAL_EINVAL;
	p->stats.programs++;
	for (i = 0; i < len && rc == 0; i += 4) {
		uintptr_t a = p->base + off + i;

		w = (uint32_t)s[i] | (uint32_t)s[i + 1] << 8 | (uint32_t)s[i + 2] << 16 |
		    (uint32_t)s[i + 3] << 24;
		if (w == 0xffffffffu)
			continue;          /* erased already: nothing to clear */
		mmio_write32(a, CMD(CFI_PROGRAM));
		mmio_write32(a, w);
		rc = wait_ready(p, a);
		p->stats.words++;
	}
	mmio_write32(p->base + off, CMD(CFI_READ_ARRAY));
	barrier();
	return rc;
}

static const uint8_t *pf_map(void *ctx, uint32_t off, uint32_t len)
{
	struct pflash *p = ctx;

	if (off > p->size || len > p->size - off)
		return 0;
	return (const uint8_t *)(p->base + off);
}

void pflash_init(struct pflash *p, uintptr_t base, uint32_t size, struct boot_flash *f)
{
	p->base = base;
	p->size = size;
	p->last_status = 0;
	p->stats = (struct pflash_stats){ 0, 0, 0, 0, 0 };
	mmio_write32(base, CMD(CFI_CLEAR));
	mmio_write32(base, CMD(CFI_READ_ARRAY));
	barrier();
	f->ctx = p;
	f->size = size;
	f->sector = MNIC_FLASH_SECTOR;
	f->erase = pf_erase;
	f->program = pf_program;
	f->map = pf_map;
}
