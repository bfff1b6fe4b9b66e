/* lib/siphash.c against the SipHash paper's vectors (Aumasson, Bernstein
 * 2012, appendix A: key 00..0f, message 00..len-1, the 64-bit result read
 * little-endian from the paper's output bytes). */
#include "cmocka_main.h"

#include "lib/siphash.h"

static void test_paper_vectors(void **state)
{
	static const struct {
		size_t len;
		uint64_t want;
	} v[] = {
		{ 0, 0x726fdb47dd0e0e31ull },  { 1, 0x74f839c593dc67fdull },
		{ 7, 0xab0200f58b01d137ull },  { 8, 0x93f5f5799a932462ull },
		{ 15, 0xa129ca6149be45e5ull }, { 16, 0x3f2acc7f57c29bdbull },
		{ 63, 0x958a324ceb064572ull },
	};
	uint8_t key[SIPHASH_KEY_LEN], msg[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)i;
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_int_equal(siphash24(key, msg, v[i].len), v[i].want);
}

/* A PRF: one key bit or one message bit changes the result. */
static void test_key_and_message_matter(void **state)
{
	uint8_t key[SIPHASH_KEY_LEN] = { 0 }, msg[16] = { 0 };
	uint64_t base;

	(void)state;
	base = siphash24(key, msg, sizeof(msg));
	key[15] ^= 0x80;
	assert_int_not_equal(siphash24(key, msg, sizeof(msg)), base);
	key[15] ^= 0x80;
	msg[0] ^= 1;
	assert_int_not_equal(siphash24(key, msg, sizeof(msg)), base);
	msg[0] ^= 1;
	assert_int_equal(siphash24(key, msg, sizeof(msg)), base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paper_vectors),
		cmocka_unit_test(test_key_and_message_matter),
	};
	return cmocka_run_group_tests_name("lib/siphash", tests, NULL, NULL);
}
