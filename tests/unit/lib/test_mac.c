/* lib/mac.c: the one parser of "xx:xx:xx:xx:xx:xx" behind the firmware's
 * peers=, the POSIX NIC's --mac, mnicctl's overrides and the switch's
 * rules.  Every prefix of a good address is refused without reading past
 * its end (ASan holds the test to that: each prefix is a heap copy of its
 * own length). */
#include <stdlib.h>
#include <string.h>

#include "cmocka_main.h"

#include "lib/mac.h"

static void test_good(void **state)
{
	static const uint8_t want[6] = { 0x52, 0x54, 0x00, 0xab, 0xCD, 0x0f };
	uint8_t mac[6];

	(void)state;
	assert_int_equal(lib_mac_parse("52:54:00:ab:cd:0f", mac), 0);
	assert_memory_equal(mac, want, 6);
	assert_int_equal(lib_mac_parse("52:54:00:AB:Cd:0F,next", mac), 0);   /* the tail is the caller's */
	assert_memory_equal(mac, want, 6);
	assert_int_equal(LIB_MAC_TEXT_LEN, 17);
}

static void test_prefixes_and_bad_characters(void **state)
{
	static const char good[] = "52:54:00:ab:cd:0f";
	static const char *const bad[] = {
		"52-54-00-ab-cd-0f", "52:54:00:ab:cd:0g", "5:254:00:ab:cd:0f", "52:54:00:ab:cd:f",
		"52:54:00:ab:cd", " 52:54:00:ab:cd:0f", "52:54:00:ab:cd:0 ", "x2:54:00:ab:cd:0f",
	};
	uint8_t mac[6];

	(void)state;
	for (size_t n = 0; n < sizeof(good) - 1; n++) {
		char *p = malloc(n + 1);

		assert_non_null(p);
		memcpy(p, good, n);
		p[n] = '\0';
		assert_int_equal(lib_mac_parse(p, mac), -1);
		free(p);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(lib_mac_parse(bad[i], mac), -1);
}

static void test_hex_digit(void **state)
{
	(void)state;
	assert_int_equal(lib_hex_digit('0'), 0);
	assert_int_equal(lib_hex_digit('9'), 9);
	assert_int_equal(lib_hex_digit('a'), 10);
	assert_int_equal(lib_hex_digit('F'), 15);
	assert_int_equal(lib_hex_digit('g'), -1);
	assert_int_equal(lib_hex_digit(':'), -1);
	assert_int_equal(lib_hex_digit('\0'), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_prefixes_and_bad_characters),
		cmocka_unit_test(test_hex_digit),
	};

	return cmocka_run_group_tests_name("lib_mac", tests, NULL, NULL);
}
