/* rocev2/crc32.c: the IEEE CRC-32 check value and incremental use. */
#include "cmocka_main.h"

#include <string.h>

#include "rocev2/crc32.h"

static void test_check_value(void **state)
{
	(void)state;
	/* The catalogue check value of CRC-32/ISO-HDLC. */
	assert_int_equal(rocev2_crc32("123456789", 9), 0xcbf43926u);
	assert_int_equal(rocev2_crc32("", 0), 0);
}

static void test_incremental_equals_one_shot(void **state)
{
	uint8_t buf[1000];
	uint32_t s = 0xffffffffu;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 31u + 7u);
	for (i = 0; i < sizeof(buf); i += 137)
		s = rocev2_crc32_update(s, buf + i, sizeof(buf) - i < 137 ? sizeof(buf) - i : 137);
	assert_int_equal(~s, rocev2_crc32(buf, sizeof(buf)));
	buf[500] ^= 1;
	assert_int_not_equal(~s, rocev2_crc32(buf, sizeof(buf)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_value),
		cmocka_unit_test(test_incremental_equals_one_shot),
	};
	return cmocka_run_group_tests_name("rocev2/crc32", tests, NULL, NULL);
}
