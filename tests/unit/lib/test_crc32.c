/* lib/crc32.c: both polynomials against their catalogue check values, RFC
 * 3720's CRC32C vectors and zlib's crc32 (an independent implementation);
 * the slicing-by-16 engine against the bytewise loop at every length and
 * alignment.
 *
 * crc32.c is included so that its static engines can be driven directly:
 * build this test WITHOUT lib/crc32.c. */
#include "cmocka_main.h"

#include <string.h>
#include <zlib.h>

#include "../../../lib/crc32.c"

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (uint8_t)(seed >> 16);
	}
}

static void test_check_values(void **state)
{
	(void)state;
	/* The catalogue check values of CRC-32/ISO-HDLC and CRC-32/ISCSI. */
	assert_int_equal(crc32_ieee(0, "123456789", 9), 0xcbf43926u);
	assert_int_equal(crc32c(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(crc32_ieee(0, "", 0), 0);
	assert_int_equal(crc32c(0, "", 0), 0);
	/* The raw register: 8 x 0xFF from all ones is the ICRC seed. */
	assert_int_equal(crc32_ieee_raw(0xffffffffu, "\xff\xff\xff\xff\xff\xff\xff\xff", 8),
			 0xdebb20e3u);
}

/* RFC 3720 appendix B.4 (iSCSI CRC32C examples). */
static void test_rfc3720_vectors(void **state)
{
	uint8_t b[32];
	size_t i;

	(void)state;
	memset(b, 0, sizeof(b));
	assert_int_equal(crc32c(0, b, 32), 0x8a9136aau);
	memset(b, 0xff, sizeof(b));
	assert_int_equal(crc32c(0, b, 32), 0x62a8ab43u);
	for (i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	assert_int_equal(crc32c(0, b, 32), 0x46dd794eu);
	for (i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	assert_int_equal(crc32c(0, b, 32), 0x113fdb5cu);
}

static void test_equals_zlib(void **state)
{
	static uint8_t buf[5000];
	size_t len;

	(void)state;
	fill(buf, sizeof(buf), 3);
	for (len = 0; len <= sizeof(buf); len += (len < 64 ? 1 : 97))
		assert_int_equal(crc32_ieee(0, buf, len), (uint32_t)crc32(0, buf, (uInt)len));
	/* chained, as zlib chains */
	assert_int_equal(crc32_ieee(crc32_ieee(0, buf, 1000), buf + 1000, 4000),
			 (uint32_t)crc32(0, buf, 5000));
}

static void test_incremental_equals_one_shot(void **state)
{
	uint8_t buf[1000];
	uint32_t a = 0, c = 0;
	size_t i;

	(void)state;
	fill(buf, sizeof(buf), 9);
	for (i = 0; i < sizeof(buf); i += 137) {
		size_t n = sizeof(buf) - i < 137 ? sizeof(buf) - i : 137;

		a = crc32_ieee(a, buf + i, n);
		c = crc32c(c, buf + i, n);
	}
	assert_int_equal(a, crc32_ieee(0, buf, sizeof(buf)));
	assert_int_equal(c, crc32c(0, buf, sizeof(buf)));
	buf[500] ^= 1;
	assert_int_not_equal(a, crc32_ieee(0, buf, sizeof(buf)));
	assert_int_not_equal(c, crc32c(0, buf, sizeof(buf)));
}

/* crc_table (slicing-by-16 and its bytewise head and tail) == the
 * bytewise loop for every length 0..300 at every alignment 0..7, from
 * arbitrary starting registers, for both tables; and the selected engine
 * (CRC32 instructions on AArch64) and the public table engine agree too. */
static void test_slice16_equals_bytewise(void **state)
{
	static uint8_t buf[300 + 16];
	const struct crc_tables *ts[2] = { tables(&tab_ieee, POLY_IEEE),
					   tables(&tab_c, POLY_CASTAGNOLI) };
	size_t len, align, t;

	(void)state;
	fill(buf, sizeof(buf), 1);
	for (t = 0; t < 2; t++)
		for (align = 0; align < 8; align++)
			for (len = 0; len <= 300; len++) {
				uint32_t seed = 0xffffffffu ^ (uint32_t)(len * 2654435761u);

				if (crc_table(ts[t], seed, buf + align, len) !=
				    crc_bytes(ts[t], seed, buf + align, len))
					fail_msg("slice16 differs: poly %zu len %zu align %zu", t, len,
						 align);
			}
	for (len = 0; len <= 300; len += 7) {
		assert_int_equal(crc32_ieee_raw(0xdebb20e3u, buf + 3, len),
				 crc_bytes(ts[0], 0xdebb20e3u, buf + 3, len));
		assert_int_equal(crc32_ieee_raw_table(0xdebb20e3u, buf + 3, len),
				 crc_bytes(ts[0], 0xdebb20e3u, buf + 3, len));
		assert_int_equal(crc32c_raw(0x12345678u, buf + 5, len),
				 crc_bytes(ts[1], 0x12345678u, buf + 5, len));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_values),
		cmocka_unit_test(test_rfc3720_vectors),
		cmocka_unit_test(test_equals_zlib),
		cmocka_unit_test(test_incremental_equals_one_shot),
		cmocka_unit_test(test_slice16_equals_bytewise),
	};
	return cmocka_run_group_tests_name("lib/crc32", tests, NULL, NULL);
}
