/* lib/sha256.c against the FIPS 180-4 example vectors, and incremental
 * use against one shot. */
#include "cmocka_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sha256.h"

static void hex(const uint8_t *d, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void check_sha(const void *msg, size_t len, const char *want)
{
	uint8_t d[32];
	char h[65];

	sha256(msg, len, d);
	hex(d, h);
	assert_string_equal(h, want);
}

/* FIPS 180-4 / NIST CSRC "Examples with intermediate values": SHA-256 of
 * "abc", the 448-bit two-block message, the 896-bit message, the empty
 * message and one million 'a'. */
static void test_sha256_vectors(void **state)
{
	static const char m448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	static const char m896[] = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
				   "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	char *million = malloc(1000000);

	(void)state;
	check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_sha(m448, strlen(m448),
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	check_sha(m896, strlen(m896),
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
	check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_non_null(million);
	memset(million, 'a', 1000000);
	check_sha(million, 1000000,
		  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

/* Incremental updates in every split of a 200-byte message equal one shot
 * (block-boundary and padding paths: 55, 56, 63, 64 bytes). */
static void test_sha256_incremental(void **state)
{
	uint8_t msg[200], one[32], inc[32];
	struct sha256 s;

	(void)state;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	for (size_t len = 0; len <= sizeof(msg); len += 1) {
		sha256(msg, len, one);
		for (size_t cut = 0; cut <= len; cut += 13) {
			sha256_init(&s);
			sha256_update(&s, msg, cut);
			sha256_update(&s, msg + cut, len - cut);
			sha256_final(&s, inc);
			assert_memory_equal(one, inc, 32);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_sha256_incremental),
	};
	return cmocka_run_group_tests_name("lib/sha256", tests, NULL, NULL);
}
