/* CFI parallel NOR flash, Intel/Sharp extended command set (CFI ID 0x0001),
 * as QEMU virt maps it (hw/block/pflash_cfi01.c: two banks of 64 MiB, each
 * two 16-bit devices side by side on a 32-bit bus, 256 KiB sectors).  A
 * bank is a struct hal_flash (hal/flash.h): the board hands the slot flash
 * (bank 1) to the firmware, the loader binds it itself. */
#ifndef HAL_QEMU_PFLASH_H
#define HAL_QEMU_PFLASH_H

#include <stdint.h>

#include "hal/flash.h"

#define PFLASH_SECTOR 0x40000u    /* erase block of QEMU virt's banks */
#define PFLASH_WORD   4u          /* the 32-bit bus: unit of a program */

struct pflash_config {
	uintptr_t base;               /* CPU address of the bank */
	struct hal_flash_info info;
};

#define PFLASH_CONFIG(base_, size_) { (uintptr_t)(base_), { (uint32_t)(size_), PFLASH_SECTOR, PFLASH_WORD } }

struct pflash_stats {
	uint64_t erases, programs, words, errors, status_timeouts;
};

struct pflash {
	struct hal_flash flash;       /* what policy code is given */
	const struct pflash_config *cfg;
	uint32_t last_status;
	struct pflash_stats stats;
};

/* Bind to a bank; leaves it in read-array mode so it reads like memory.
 * Returns &p->flash. */
struct hal_flash *pflash_init(struct pflash *p, const struct pflash_config *cfg);

#endif
