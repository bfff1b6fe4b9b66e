/* firmware/args.c: key=value checking, numbers, MAC lists. */
#include "cmocka_main.h"

#include <string.h>

#include "args.h"
#include "hal/errno.h"
#include "log.h"

static char logbuf[4096];
static size_t loglen;

static void cap_putc(char c)
{
	if (loglen + 1 < sizeof(logbuf))
		logbuf[loglen++] = c;
	logbuf[loglen] = '\0';
}

static const struct hal_console_ops cap = { .putc = cap_putc, .getc = NULL };

static int setup(void **state)
{
	(void)state;
	loglen = 0;
	logbuf[0] = '\0';
	fw_log_init(&cap, NULL);
	return 0;
}

static void test_check_rejects_unknown_and_malformed(void **state)
{
	static const char *const keys[] = { "count", "peers", NULL };
	char *good[] = { "count=5", "peers=x" };
	char *unknown[] = { "count=5", "cuont=6" };
	char *prefix[] = { "coun=5" };
	char *noeq[] = { "count" };
	struct fw_args a;

	(void)state;
	a = (struct fw_args){ 2, good };
	assert_int_equal(fw_args_check(&a, keys), 0);
	a = (struct fw_args){ 2, unknown };
	assert_int_equal(fw_args_check(&a, keys), -HAL_EINVAL);
	assert_non_null(strstr(logbuf, "cuont=6"));
	a = (struct fw_args){ 1, prefix };
	assert_int_equal(fw_args_check(&a, keys), -HAL_EINVAL);
	a = (struct fw_args){ 1, noeq };
	assert_int_equal(fw_args_check(&a, keys), -HAL_EINVAL);
}

static void test_u64(void **state)
{
	char *w[] = { "a=123", "b=0x1F", "c=99999999999999999999", "d=12x", "e=", "f=300", "a=7" };
	struct fw_args a = { 7, w };
	uint64_t v;

	(void)state;
	assert_int_equal(fw_args_u64(&a, "a", 0, 1000, &v), 0);
	assert_int_equal(v, 7);   /* last occurrence wins */
	assert_int_equal(fw_args_u64(&a, "b", 0, 1000, &v), 0);
	assert_int_equal(v, 31);
	assert_int_equal(fw_args_u64(&a, "c", 0, UINT64_MAX, &v), -HAL_EINVAL);
	assert_int_equal(fw_args_u64(&a, "d", 0, 1000, &v), -HAL_EINVAL);
	assert_int_equal(fw_args_u64(&a, "e", 0, 1000, &v), -HAL_EINVAL);
	assert_int_equal(fw_args_u64(&a, "f", 0, 299, &v), -HAL_EINVAL);
	assert_int_equal(fw_args_u64(&a, "f", 0, 300, &v), 0);
	assert_int_equal(fw_args_u64(&a, "missing", 42, 1000, &v), 0);
	assert_int_equal(v, 42);
}

static void test_macs(void **state)
{
	uint8_t m[4][6];

	(void)state;
	assert_int_equal(fw_parse_mac("52:54:00:aB:cd:0f", m[0]), 0);
	assert_memory_equal(m[0], ((uint8_t[]){ 0x52, 0x54, 0, 0xab, 0xcd, 0x0f }), 6);
	assert_int_equal(fw_parse_mac("52:54:00:ab:cd", m[0]), -HAL_EINVAL);
	assert_int_equal(fw_parse_mac("52:54:00:ab:cd:0g", m[0]), -HAL_EINVAL);
	assert_int_equal(fw_parse_mac("52-54-00-ab-cd-0f", m[0]), -HAL_EINVAL);
	assert_int_equal(fw_parse_mac("52:54:00:ab:cd:0f0", m[0]), -HAL_EINVAL);
	assert_int_equal(fw_parse_mac_list("52:54:00:00:00:01,52:54:00:00:00:02", m, 4), 2);
	assert_int_equal(m[1][5], 2);
	assert_int_equal(fw_parse_mac_list("52:54:00:00:00:01;52:54:00:00:00:02", m, 4), -HAL_EINVAL);
	assert_int_equal(fw_parse_mac_list("52:54:00:00:00:01,52:54:00:00:00:02,52:54:00:00:00:03",
					   m, 2), -HAL_EINVAL);
	assert_int_equal(fw_parse_mac_list("", m, 2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_check_rejects_unknown_and_malformed, setup),
		cmocka_unit_test_setup(test_u64, setup),
		cmocka_unit_test_setup(test_macs, setup),
	};
	return cmocka_run_group_tests_name("firmware/args", tests, NULL, NULL);
}
