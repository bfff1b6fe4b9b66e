#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "fake_pl011.h"
#include "hal/errno.h"
#include "pl011.h"

#define BASE FAKE_PL011_BASE

static int setup(void **state)
{
	(void)state;
	fake_pl011_reset();
	return 0;
}

static void put_str(const char *s)
{
	while (*s)
		pl011_putc(BASE, *s++);
}

static void test_putc_bytes_in_order_respecting_txff(void **state)
{
	static const char msg[] = "Hello, \xff\x01 PL011\n";
	uint32_t dropped = pl011_dropped();

	(void)state;
	fake_pl011.txff_hold_reads = 3;
	put_str(msg);

	assert_int_equal(fake_pl011.tx_len, strlen(msg));
	assert_memory_equal(fake_pl011.tx, msg, strlen(msg));
	assert_int_equal(fake_pl011.tx_while_full, 0);
	/* first byte: one FR read; each later byte: 3 with TXFF + 1 clear */
	assert_int_equal(fake_pl011.fr_reads, 1 + 4 * (strlen(msg) - 1));
	assert_int_equal(pl011_dropped(), dropped);
	assert_int_equal(fake_pl011.bad_access, 0);
}

static void test_putc_timeout_drops_and_counts(void **state)
{
	uint32_t dropped = pl011_dropped();

	(void)state;
	fake_pl011.txff_stuck = 1;
	pl011_putc(BASE, 'x');
	pl011_putc(BASE, 'y');
	assert_int_equal(fake_pl011.tx_len, 0);
	assert_int_equal(fake_pl011.tx_while_full, 0);
	assert_int_equal(pl011_dropped(), dropped + 2);
	assert_int_equal(fake_pl011.fr_reads, 2 * PL011_TX_SPIN_LIMIT);

	fake_pl011.txff_stuck = 0;
	pl011_putc(BASE, 'z');
	assert_int_equal(fake_pl011.tx_len, 1);
	assert_int_equal(fake_pl011.tx[0], 'z');
	assert_int_equal(pl011_dropped(), dropped + 2);
}

static void test_getc(void **state)
{
	uint32_t errors = pl011_rx_errors();

	(void)state;
	assert_int_equal(pl011_getc(BASE), -1);
	fake_pl011_rx_push('a');
	fake_pl011_rx_push(0xff);
	fake_pl011_rx_push(0x800 | 'b');  /* overrun flagged with the byte */
	assert_int_equal(pl011_getc(BASE), 'a');
	assert_int_equal(pl011_getc(BASE), 0xff);
	assert_int_equal(pl011_rx_errors(), errors);
	assert_int_equal(pl011_getc(BASE), 'b');
	assert_int_equal(pl011_rx_errors(), errors + 1);
	assert_int_equal(fake_pl011.ecr_writes, 1);
	assert_int_equal(pl011_getc(BASE), -1);
	assert_int_equal(fake_pl011.bad_access, 0);
}

static void test_init(void **state)
{
	(void)state;
	fake_pl011.cr = 0x301;          /* left enabled by an earlier stage */
	fake_pl011.busy_reads = 5;
	fake_pl011.imsc = 0x7ff;
	pl011_init(BASE);

	assert_int_equal(fake_pl011.busy_reads, 0);
	assert_int_equal(fake_pl011.lcr_h_while_enabled, 0);
	assert_int_equal(fake_pl011.lcr_h, 0x70);
	assert_int_equal(fake_pl011.imsc, 0);
	assert_int_equal(fake_pl011.last_icr, 0x7ff);
	assert_int_equal(fake_pl011.cr, 0x301);
	assert_int_equal(fake_pl011.bad_access, 0);

	pl011_putc(BASE, 'k');
	assert_int_equal(fake_pl011.tx_len, 1);
}

static void test_init_bounded_when_busy_sticks(void **state)
{
	(void)state;
	fake_pl011.busy_reads = ~0u;
	pl011_init(BASE);
	assert_int_equal(fake_pl011.fr_reads, PL011_TX_SPIN_LIMIT);
	assert_int_equal(fake_pl011.cr, 0x301);
}

static void test_selftest_good(void **state)
{
	(void)state;
	assert_int_equal(pl011_selftest(BASE), 0);
	assert_int_equal(fake_pl011.writes, 0);

	fake_pl011.periph_id[2] = 0x34;  /* r1p5 silicon */
	assert_int_equal(pl011_selftest(BASE), 0);

	fake_pl011_rx_push('q');          /* RX not empty is a sane state */
	fake_pl011.txff_hold_reads = 1;
	pl011_putc(BASE, 'p');
	assert_int_equal(pl011_selftest(BASE), 0);
}

static void test_selftest_bad_ids(void **state)
{
	static const struct {
		int cell;
		unsigned idx;
		uint32_t val;
	} bad[] = {
		{ 0, 0, 0x10 },  /* part 0x010: PL010 */
		{ 0, 1, 0x11 },
		{ 0, 2, 0x15 },  /* designer not Arm */
		{ 0, 3, 0x01 },
		{ 1, 0, 0x0c },
		{ 1, 1, 0xe0 },
		{ 1, 2, 0x06 },
		{ 1, 3, 0xb0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t *reg;
		uint32_t saved;

		fake_pl011_reset();
		reg = bad[i].cell ? &fake_pl011.pcell_id[bad[i].idx] :
				     &fake_pl011.periph_id[bad[i].idx];
		saved = *reg;
		*reg = bad[i].val;
		assert_int_equal(pl011_selftest(BASE), -HAL_ENODEV);
		*reg = saved;
		assert_int_equal(pl011_selftest(BASE), 0);
	}
}

static void test_selftest_absent_or_insane_fr(void **state)
{
	(void)state;
	fake_pl011.absent = 1;
	assert_int_equal(pl011_selftest(BASE), -HAL_ENODEV);

	fake_pl011_reset();
	fake_pl011.fr_force = 1;
	fake_pl011.fr_forced = 0x90 | 0x200;     /* reserved bit 9 */
	assert_int_equal(pl011_selftest(BASE), -HAL_ENODEV);
	fake_pl011.fr_forced = 0x90 | 0x20;      /* TX full and empty */
	assert_int_equal(pl011_selftest(BASE), -HAL_ENODEV);
	fake_pl011.fr_forced = 0x90 | 0x40;      /* RX full and empty */
	assert_int_equal(pl011_selftest(BASE), -HAL_ENODEV);
	fake_pl011.fr_forced = 0x90;
	assert_int_equal(pl011_selftest(BASE), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_putc_bytes_in_order_respecting_txff, setup),
		cmocka_unit_test_setup(test_putc_timeout_drops_and_counts, setup),
		cmocka_unit_test_setup(test_getc, setup),
		cmocka_unit_test_setup(test_init, setup),
		cmocka_unit_test_setup(test_init_bounded_when_busy_sticks, setup),
		cmocka_unit_test_setup(test_selftest_good, setup),
		cmocka_unit_test_setup(test_selftest_bad_ids, setup),
		cmocka_unit_test_setup(test_selftest_absent_or_insane_fr, setup),
	};

	return cmocka_run_group_tests_name("pl011", tests, NULL, NULL);
}
