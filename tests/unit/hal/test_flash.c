/* hal/flash.h: the wrappers check every offset and length against the
 * geometry before a driver sees them (they may come from a host command or
 * from the flash itself), count each refusal, and pass valid ranges
 * through unchanged.  The device is tests/unit/hal/ram_flash.c. */
#include "cmocka_main.h"

#include <string.h>

#include "hal/errno.h"
#include "hal/flash.h"
#include "ram_flash.h"

#define SIZE  0x10000u
#define BLOCK 0x1000u
#define WORD  4u

static uint8_t mem[SIZE];
static struct ram_flash rf;
static struct hal_flash *f;

static int setup(void **state)
{
	(void)state;
	memset(mem, 0xff, sizeof(mem));
	f = ram_flash_init(&rf, mem, SIZE, BLOCK, WORD);
	return 0;
}

/* Nothing the contract refused reached the device. */
static void no_bad_calls(void)
{
	assert_int_equal(rf.bad_calls, 0);
}

static void test_read_bounds(void **state)
{
	uint8_t b[8];

	(void)state;
	mem[SIZE - 1] = 0x5a;
	assert_int_equal(hal_flash_read(f, SIZE - 1, b, 1), 0);
	assert_int_equal(b[0], 0x5a);
	assert_int_equal(hal_flash_read(f, 0, b, 0), 0);
	assert_int_equal(rf.reads, 2);
	/* offset at or past the end, length past the end, sums that wrap */
	assert_int_equal(hal_flash_read(f, SIZE, b, 0), -HAL_EINVAL);
	assert_int_equal(hal_flash_read(f, SIZE, b, 1), -HAL_EINVAL);
	assert_int_equal(hal_flash_read(f, SIZE - 1, b, 2), -HAL_EINVAL);
	assert_int_equal(hal_flash_read(f, 0, b, SIZE + 1), -HAL_EINVAL);
	assert_int_equal(hal_flash_read(f, 0xffffffffu, b, 1), -HAL_EINVAL);
	assert_int_equal(hal_flash_read(f, 8, b, 0xfffffff8u), -HAL_EINVAL);
	assert_int_equal(rf.reads, 2);
	assert_int_equal(f->stats.out_of_range, 6);
	assert_int_equal(f->stats.misaligned, 0);
	no_bad_calls();
}

static void test_write_bounds_and_alignment(void **state)
{
	const uint8_t w[8] = { 0x0f, 0xf0, 0x00, 0xff, 1, 2, 3, 4 };

	(void)state;
	assert_int_equal(hal_flash_write(f, SIZE - WORD, w, WORD), 0);
	assert_memory_equal(mem + SIZE - WORD, w, WORD);
	/* NOR: a second write only clears bits */
	assert_int_equal(hal_flash_write(f, SIZE - WORD, w + 4, WORD), 0);
	assert_int_equal(mem[SIZE - WORD], 0x0f & 1);
	assert_int_equal(rf.writes, 2);
	assert_int_equal(hal_flash_write(f, SIZE, w, WORD), -HAL_EINVAL);
	assert_int_equal(hal_flash_write(f, SIZE - WORD, w, 2 * WORD), -HAL_EINVAL);
	assert_int_equal(hal_flash_write(f, 0xfffffffcu, w, WORD), -HAL_EINVAL);
	assert_int_equal(f->stats.out_of_range, 3);
	assert_int_equal(hal_flash_write(f, 2, w, WORD), -HAL_EINVAL);
	assert_int_equal(hal_flash_write(f, 0, w, 3), -HAL_EINVAL);
	assert_int_equal(f->stats.misaligned, 2);
	assert_int_equal(rf.writes, 2);
	no_bad_calls();
}

static void test_erase_bounds_and_alignment(void **state)
{
	(void)state;
	memset(mem, 0, sizeof(mem));
	assert_int_equal(hal_flash_erase(f, SIZE - BLOCK), 0);
	assert_int_equal(mem[SIZE - BLOCK], 0xff);
	assert_int_equal(mem[SIZE - 1], 0xff);
	assert_int_equal(mem[SIZE - BLOCK - 1], 0);
	assert_int_equal(hal_flash_erase(f, SIZE), -HAL_EINVAL);
	assert_int_equal(hal_flash_erase(f, 0xfffff000u), -HAL_EINVAL);
	assert_int_equal(f->stats.out_of_range, 2);
	/* off the erase unit; in the last block its block would pass the end */
	assert_int_equal(hal_flash_erase(f, BLOCK + WORD), -HAL_EINVAL);
	assert_int_equal(f->stats.misaligned, 1);
	assert_int_equal(hal_flash_erase(f, SIZE - BLOCK + WORD), -HAL_EINVAL);
	assert_int_equal(f->stats.out_of_range, 3);
	assert_int_equal(rf.erases, 1);
	no_bad_calls();
}

static void test_map(void **state)
{
	struct hal_flash_ops unmapped = *f->ops;
	struct hal_flash plain = *f;

	(void)state;
	assert_ptr_equal(hal_flash_map(f, 0, SIZE), mem);
	assert_ptr_equal(hal_flash_map(f, SIZE - 1, 1), mem + SIZE - 1);
	assert_null(hal_flash_map(f, SIZE, 0));
	assert_null(hal_flash_map(f, 1, SIZE));
	assert_int_equal(f->stats.out_of_range, 2);
	assert_int_equal(rf.maps, 2);
	/* a device that is not memory-mapped has no view, and that is no refusal */
	unmapped.map = NULL;
	plain.ops = &unmapped;
	assert_null(hal_flash_map(&plain, 0, 4));
	assert_int_equal(plain.stats.out_of_range, 0);
	no_bad_calls();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_read_bounds, setup),
		cmocka_unit_test_setup(test_write_bounds_and_alignment, setup),
		cmocka_unit_test_setup(test_erase_bounds_and_alignment, setup),
		cmocka_unit_test_setup(test_map, setup),
	};
	return cmocka_run_group_tests_name("hal/flash", tests, NULL, NULL);
}
