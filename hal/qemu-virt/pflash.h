/* CFI parallel NOR flash, Intel/Sharp extended command set (CFI ID 0x0001),
 * as QEMU virt maps it (hw/block/pflash_cfi01.c: two banks of 64 MiB, each
 * two 16-bit devices side by side on a 32-bit bus, 256 KiB sectors).  The
 * slot flash (bank 1) as a struct boot_flash for boot/bootrec.c. */
#ifndef HAL_QEMU_PFLASH_H
#define HAL_QEMU_PFLASH_H

#include <stdint.h>

#include "boot/bootrec.h"

struct pflash_stats {
	uint64_t erases, programs, words, errors, status_timeouts;
};

struct pflash {
	uintptr_t base;
	uint32_t size;
	uint32_t last_status;
	struct pflash_stats stats;
};

/* Bind to a bank and fill *f (ops on it); leaves the bank in read-array
 * mode so it reads like memory. */
void pflash_init(struct pflash *p, uintptr_t base, uint32_t size, struct boot_flash *f);

#endif
