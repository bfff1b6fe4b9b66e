/* firmware/fmt.c against the host's snprintf for every supported form. */
#include "cmocka_main.h"

#include <stdio.h>
#include <string.h>

#include "fmt.h"

#define SAME(...)                                                        \
	do {                                                             \
		char a[128], b[128];                                     \
		int ra = fw_snprintf(a, sizeof(a), __VA_ARGS__);         \
		int rb = snprintf(b, sizeof(b), __VA_ARGS__);            \
		assert_string_equal(a, b);                               \
		assert_int_equal(ra, rb);                                \
	} while (0)

static void test_matches_libc(void **state)
{
	(void)state;
	SAME("plain");
	SAME("%d %i %u", -42, 7, 4000000000u);
	SAME("%x %X %08x %-6x|", 0xbeefu, 0xbeefu, 0x1au, 0x1au);
	SAME("%ld %lu %lx", -1234567890L, 1234567890UL, 0xdeadbeefUL);
	SAME("%lld %llu %llx", -9000000000000000000LL, 18446744073709551615ULL,
	     0x0123456789abcdefULL);
	SAME("%zu", (size_t)12345);
	SAME("%5d|%-5d|%05d|%05d", 42, 42, 42, -42);
	SAME("%s|%10s|%-10s|", "abc", "abc", "abc");
	SAME("%c%c%%", 'o', 'k');
	SAME("%02x:%02x", 0, 255);
	SAME("%d", -2147483647 - 1);
	SAME("%lld", (long long)(-9223372036854775807LL - 1));
}

static void test_truncates_and_terminates(void **state)
{
	char buf[8];
	int r;

	(void)state;
	memset(buf, 'x', sizeof(buf));
	r = fw_snprintf(buf, sizeof(buf), "%s", "0123456789");
	assert_int_equal(r, 10);
	assert_string_equal(buf, "0123456");
	r = fw_snprintf(buf, 0, "%d", 12345);
	assert_int_equal(r, 5);
	assert_int_equal(buf[0], '0');
	r = fw_snprintf(buf, 1, "%d", 12345);
	assert_int_equal(buf[0], '\0');
}

/* No format attribute here: these are the malformed calls the compiler
 * would otherwise refuse to build. */
static int unchecked(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fw_vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

static void test_odd_formats_are_safe(void **state)
{
	char buf[32];

	(void)state;
	unchecked(buf, sizeof(buf), "%s", (const char *)NULL);
	assert_string_equal(buf, "(null)");
	unchecked(buf, sizeof(buf), "a%");
	assert_string_equal(buf, "a");
	unchecked(buf, sizeof(buf), "<%q>");
	assert_string_equal(buf, "<%q>");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_libc),
		cmocka_unit_test(test_truncates_and_terminates),
		cmocka_unit_test(test_odd_formats_are_safe),
	};
	return cmocka_run_group_tests_name("firmware/fmt", tests, NULL, NULL);
}
