/* A RAM-backed struct hal_flash with NOR semantics (erase sets a block to
 * 0xff, a write ANDs), for the tests of hal/flash.h and of its users
 * (boot/, mgmt/fwflash.c).  It counts every op that reaches it and every
 * one whose range the contract should have refused (bad_calls: must stay
 * 0), so a test sees both what was done and that the wrappers checked. */
#ifndef RAM_FLASH_H
#define RAM_FLASH_H

#include <stdint.h>

#include "hal/flash.h"

struct ram_flash {
	struct hal_flash flash;
	struct hal_flash_info info;
	uint8_t *mem;
	unsigned reads, writes, erases, maps, bad_calls;
};

/* mem is info.size bytes the caller owns; it is left as it is. */
struct hal_flash *ram_flash_init(struct ram_flash *r, uint8_t *mem, uint32_t size,
				 uint32_t erase_block, uint32_t write_block);

#endif
