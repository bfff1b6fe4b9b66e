/* hal/common/dma_window.c: every host address and length is hostile. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "hal/dma.h"
#include "hal/errno.h"

#define WIN 4096u

/* Guard bytes on both sides catch a copy that escapes the window even when
 * the sanitizer cannot (the window is one object with its guards). */
#define GUARD 64u
static uint8_t mem[GUARD + WIN + GUARD];
static struct hal_dma dma;

static int setup(void **state)
{
	(void)state;
	memset(mem, 0xee, sizeof(mem));
	for (unsigned i = 0; i < WIN; i++)
		mem[GUARD + i] = (uint8_t)(i * 3u);
	hal_dma_window_init(&dma, mem + GUARD, WIN);
	return 0;
}

static void assert_guards_intact(void)
{
	for (unsigned i = 0; i < GUARD; i++) {
		assert_int_equal(mem[i], 0xee);
		assert_int_equal(mem[GUARD + WIN + i], 0xee);
	}
}

static void test_init_clears_stats(void **state)
{
	(void)state;
	dma.stats.reads = 99;
	hal_dma_window_init(&dma, mem + GUARD, WIN);
	assert_non_null(dma.ops);
	assert_ptr_equal(dma.window, mem + GUARD);
	assert_int_equal(dma.window_size, WIN);
	assert_int_equal(dma.stats.reads + dma.stats.writes + dma.stats.read_bytes +
			 dma.stats.write_bytes + dma.stats.out_of_window, 0);
}

static void test_copies_inside_the_window(void **state)
{
	uint8_t buf[100], pat[100];

	(void)state;
	assert_int_equal(hal_dma_read(&dma, 1000, buf, sizeof(buf)), 0);
	for (unsigned i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], (uint8_t)((1000 + i) * 3u));

	for (unsigned i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(0xa0 + i);
	assert_int_equal(hal_dma_write(&dma, 7, pat, sizeof(pat)), 0);
	assert_memory_equal(mem + GUARD + 7, pat, sizeof(pat));
	assert_int_equal(hal_dma_read(&dma, 0, buf, 1), 0);
	assert_int_equal(buf[0], 0);

	assert_int_equal(dma.stats.reads, 2);
	assert_int_equal(dma.stats.read_bytes, 101);
	assert_int_equal(dma.stats.writes, 1);
	assert_int_equal(dma.stats.write_bytes, 100);
	assert_int_equal(dma.stats.out_of_window, 0);
	assert_guards_intact();
}

static void test_boundary_exactly_at_the_end(void **state)
{
	/* One byte larger than the transfers, so that the refused ones
	 * name memory that exists (dma.h's copy is inline: the compiler sees
	 * the memcpy it guards). */
	uint8_t buf[WIN + 1], ones[17];

	(void)state;
	memset(ones, 0x11, sizeof(ones));
	assert_int_equal(hal_dma_write(&dma, WIN - 16, ones, 16), 0);
	assert_int_equal(hal_dma_read(&dma, WIN - 16, buf, 16), 0);
	assert_memory_equal(buf, ones, 16);
	assert_int_equal(hal_dma_read(&dma, WIN - 1, buf, 1), 0);
	assert_int_equal(hal_dma_read(&dma, 0, buf, WIN), 0);
	/* one byte too many */
	assert_int_equal(hal_dma_read(&dma, WIN - 16, buf, 17), -HAL_EFAULT);
	assert_int_equal(hal_dma_write(&dma, WIN - 16, ones, 17), -HAL_EFAULT);
	assert_int_equal(hal_dma_read(&dma, 0, buf, WIN + 1), -HAL_EFAULT);
	assert_int_equal(dma.stats.out_of_window, 3);
	assert_int_equal(dma.stats.reads, 3);
	assert_int_equal(dma.stats.writes, 1);
	assert_guards_intact();
}

static void test_address_equal_to_size_is_outside(void **state)
{
	uint8_t buf[4] = { 1, 2, 3, 4 };

	(void)state;
	assert_int_equal(hal_dma_read(&dma, WIN, buf, 1), -HAL_EFAULT);
	assert_int_equal(hal_dma_write(&dma, WIN, buf, 1), -HAL_EFAULT);
	/* even an empty transfer may not name an address past the window */
	assert_int_equal(hal_dma_read(&dma, WIN, buf, 0), -HAL_EFAULT);
	assert_int_equal(hal_dma_read(&dma, WIN + 1, buf, 0), -HAL_EFAULT);
	assert_int_equal(hal_dma_write(&dma, UINT64_MAX, buf, 1), -HAL_EFAULT);
	assert_int_equal(dma.stats.out_of_window, 5);
	/* and an empty one inside it is a harmless no-op */
	assert_int_equal(hal_dma_write(&dma, WIN - 1, buf, 0), 0);
	assert_int_equal(dma.stats.write_bytes, 0);
	assert_memory_equal(buf, ((uint8_t[]){ 1, 2, 3, 4 }), 4);
	assert_guards_intact();
}

/* addr + len wraps past 2^64 to a small number that a naive
 * "addr + len <= size" check would accept. */
static void test_length_overflow_wraps(void **state)
{
	uint8_t buf[64];

	(void)state;
	assert_int_equal(hal_dma_read(&dma, 16, buf, SIZE_MAX), -HAL_EFAULT);
	assert_int_equal(hal_dma_write(&dma, 16, buf, SIZE_MAX - 15), -HAL_EFAULT);
	assert_int_equal(hal_dma_read(&dma, UINT64_MAX - 8, buf, 16), -HAL_EFAULT);
	assert_int_equal(hal_dma_write(&dma, UINT64_MAX - 8, buf, 16), -HAL_EFAULT);
	assert_int_equal(hal_dma_read(&dma, WIN - 1, buf, SIZE_MAX), -HAL_EFAULT);
	assert_int_equal(dma.stats.out_of_window, 5);
	assert_int_equal(dma.stats.reads + dma.stats.writes, 0);
	assert_int_equal(dma.stats.read_bytes + dma.stats.write_bytes, 0);
	assert_guards_intact();
}

static void test_empty_window_refuses_everything(void **state)
{
	uint8_t buf[1];

	(void)state;
	hal_dma_window_init(&dma, NULL, 0);
	assert_int_equal(hal_dma_read(&dma, 0, buf, 0), -HAL_EFAULT);
	assert_int_equal(hal_dma_write(&dma, 0, buf, 1), -HAL_EFAULT);
	/* a NULL window has no size whatever the caller says */
	hal_dma_window_init(&dma, NULL, 1u << 20);
	assert_int_equal(dma.window_size, 0);
	assert_int_equal(hal_dma_read(&dma, 0, buf, 1), -HAL_EFAULT);
	assert_int_equal(dma.stats.out_of_window, 1);
}

/* dma.h's inline copy (the engine's rings, doorbell records and CQEs take
 * it) and the ops table's entries give the same verdict, the same bytes and
 * the same counters for every transfer, boundaries and wraps included. */
static struct {
	uint64_t addr;
	size_t len;
} xfer_cases[] = {
	{ 0, 0 }, { 0, 1 }, { 7, 100 }, { WIN - 16, 16 }, { WIN - 16, 17 }, { WIN - 1, 1 },
	{ 0, WIN }, { 0, WIN + 1 }, { WIN, 0 }, { WIN, 1 }, { WIN + 1, 0 }, { UINT64_MAX, 1 },
	{ 16, SIZE_MAX }, { UINT64_MAX - 8, 16 }, { WIN - 1, SIZE_MAX },
};

static void test_inline_copy_matches_the_table(void **state)
{
	static uint8_t a[WIN + 1], b[WIN + 1];
	struct hal_dma table;

	(void)state;
	hal_dma_window_init(&table, mem + GUARD, WIN);
	assert_ptr_equal(dma.ops, &hal_dma_window_ops);
	for (unsigned i = 0; i < sizeof(xfer_cases) / sizeof(xfer_cases[0]); i++) {
		uint64_t addr = xfer_cases[i].addr;
		size_t len = xfer_cases[i].len;
		int want = table.ops->read(&table, addr, b, len);

		memset(a, 0, sizeof(a));
		assert_int_equal(hal_dma_window_read(&dma, addr, a, len), want);
		if (want == 0)
			assert_memory_equal(a, b, len);
		assert_int_equal(hal_dma_window_write(&dma, addr, a, len),
				 table.ops->write(&table, addr, a, len));
	}
	assert_memory_equal(&dma.stats, &table.stats, sizeof(dma.stats));
	assert_int_equal(dma.stats.out_of_window, 2u * 9u);
	assert_guards_intact();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_init_clears_stats, setup),
		cmocka_unit_test_setup(test_copies_inside_the_window, setup),
		cmocka_unit_test_setup(test_boundary_exactly_at_the_end, setup),
		cmocka_unit_test_setup(test_address_equal_to_size_is_outside, setup),
		cmocka_unit_test_setup(test_length_overflow_wraps, setup),
		cmocka_unit_test_setup(test_empty_window_refuses_everything, setup),
		cmocka_unit_test_setup(test_inline_copy_matches_the_table, setup),
	};

	return cmocka_run_group_tests_name("dma_window", tests, NULL, NULL);
}
