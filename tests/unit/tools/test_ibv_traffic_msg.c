/* tests/tools/ibv_traffic_msg.c: ibv-traffic's message format, CRC32C and
 * the receiver's judgement (seq order, loss, duplicates, damage), and the
 * plan both ends compute for each other.  A message is judged by its
 * bytes alone: every single damaged byte, anywhere, is refused. */
#include <stdlib.h>
#include <string.h>

#include "cmocka_main.h"

#include "lib/crc32.h"
#include "tests/tools/ibv_traffic_msg.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The header at the offsets the format's drawing gives, and the CRC32C
 * (zlib convention, crc field zero) computed here on its own. */
static void test_layout_and_crc(void **state)
{
	uint8_t m[100], z[100];
	uint32_t crc;

	(void)state;
	ibvt_msg_fill(m, sizeof(m), IBVT_WIMM, 1, 0x0102030405060708ull);
	assert_memory_equal(m, "IBVT", 4);
	assert_int_equal(m[4], IBVT_WIMM);
	assert_int_equal(m[5], 1);
	assert_int_equal(m[6] | m[7], 0);
	assert_int_equal(le32(m + 8), 0x05060708u);
	assert_int_equal(le32(m + 12), 0x01020304u);
	assert_int_equal(le32(m + 16), sizeof(m));
	assert_int_equal(le32(m + 24) | le32(m + 28), 0);
	memcpy(z, m, sizeof(m));
	memset(z + 20, 0, 4);
	crc = crc32c(0, z, sizeof(z));
	assert_int_equal(le32(m + 20), crc);
	/* crc32c itself: the check value of "123456789" (RFC 3720 B.4) */
	assert_int_equal(crc32c(0, "123456789", 9), 0xe3069283u);
}

static void test_roundtrip_every_length(void **state)
{
	static const uint32_t lens[] = {IBVT_HDR_LEN, IBVT_HDR_LEN + 1, 33, 39, 40, 95, 96, 97, 1024, 4095, 4096, 65536};
	static const enum ibvt_kind kinds[] = {IBVT_SEND, IBVT_WIMM, IBVT_RSLOT};
	uint8_t *m = malloc(65536);
	const char *why;
	uint64_t seq;

	(void)state;
	assert_non_null(m);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (size_t k = 0; k < 3; k++) {
			ibvt_msg_fill(m, lens[i], kinds[k], (uint8_t)(i & 1), 1000 + i);
			assert_int_equal(ibvt_msg_check(m, lens[i], kinds[k], (uint8_t)(i & 1), 1000 + i, &seq, &why), 0);
			assert_null(why);
			assert_int_equal(seq, 1000 + i);
			assert_int_equal(ibvt_msg_check(m, lens[i], kinds[k], (uint8_t)(i & 1), UINT64_MAX, &seq, &why), 0);
		}
	free(m);
}

/* One byte changed (each bit of it, in turn), at every offset: refused. */
static void test_every_damaged_byte_refused(void **state)
{
	enum { LEN = 300 };
	uint8_t m[LEN], d[LEN];
	const char *why;

	(void)state;
	ibvt_msg_fill(m, LEN, IBVT_SEND, 0, 7);
	for (unsigned off = 0; off < LEN; off++)
		for (unsigned bit = 0; bit < 8; bit++) {
			memcpy(d, m, LEN);
			d[off] ^= (uint8_t)(1u << bit);
			assert_int_not_equal(ibvt_msg_check(d, LEN, IBVT_SEND, 0, UINT64_MAX, NULL, &why), 0);
			assert_non_null(why);
		}
}

/* A wrong payload under a recomputed CRC (a device that moved the right
 * number of bytes from the wrong place, e.g. another message): the
 * payload check refuses it on its own. */
static void test_payload_checked_beyond_crc(void **state)
{
	uint8_t a[200], b[200];
	const char *why;
	uint32_t crc;

	(void)state;
	ibvt_msg_fill(a, sizeof(a), IBVT_SEND, 1, 3);
	ibvt_msg_fill(b, sizeof(b), IBVT_SEND, 1, 4);
	memcpy(a + IBVT_HDR_LEN, b + IBVT_HDR_LEN, sizeof(a) - IBVT_HDR_LEN);   /* seq 3's header, 4's payload */
	memset(a + 20, 0, 4);
	crc = crc32c(0, a, sizeof(a));
	for (unsigned i = 0; i < 4; i++)
		a[20 + i] = (uint8_t)(crc >> (8 * i));
	assert_int_not_equal(ibvt_msg_check(a, sizeof(a), IBVT_SEND, 1, 3, NULL, &why), 0);
	assert_string_equal(why, "payload byte wrong");
}

static void test_header_mismatches(void **state)
{
	uint8_t m[64];
	const char *why;

	(void)state;
	ibvt_msg_fill(m, sizeof(m), IBVT_SEND, 0, 9);
	assert_int_not_equal(ibvt_msg_check(m, sizeof(m), IBVT_WIMM, 0, 9, NULL, &why), 0);
	assert_string_equal(why, "wrong kind");
	assert_int_not_equal(ibvt_msg_check(m, sizeof(m), IBVT_SEND, 1, 9, NULL, &why), 0);
	assert_string_equal(why, "wrong direction");
	assert_int_not_equal(ibvt_msg_check(m, sizeof(m), IBVT_SEND, 0, 8, NULL, &why), 0);
	assert_string_equal(why, "wrong seq");
	assert_int_not_equal(ibvt_msg_check(m, sizeof(m) - 1, IBVT_SEND, 0, 9, NULL, &why), 0);
	assert_string_equal(why, "length differs from the received length");
	assert_int_not_equal(ibvt_msg_check(m, IBVT_HDR_LEN - 1, IBVT_SEND, 0, 9, NULL, &why), 0);
	assert_string_equal(why, "shorter than the header");
	memset(m, 0, sizeof(m));   /* a buffer nothing was placed in */
	assert_int_not_equal(ibvt_msg_check(m, sizeof(m), IBVT_SEND, 0, 9, NULL, &why), 0);
	assert_string_equal(why, "bad magic");
}

static void take(struct ibvt_rx *rx, uint64_t seq, enum ibvt_verdict want)
{
	uint8_t m[80];
	const char *why;

	ibvt_msg_fill(m, sizeof(m), IBVT_SEND, 1, seq);
	assert_int_equal(ibvt_rx_take(rx, m, sizeof(m), IBVT_SEND, 1, 0, &why), want);
}

/* 0 1 2 | 1 (dup) | 5 (3, 4 missing: ooo) 6 | the peer sent 8: 7 lost */
static void test_rx_order_loss_dup(void **state)
{
	struct ibvt_rx rx = {0};
	uint8_t m[80];
	const char *why;

	(void)state;
	take(&rx, 0, IBVT_OK);
	take(&rx, 1, IBVT_OK);
	take(&rx, 2, IBVT_OK);
	take(&rx, 1, IBVT_DUP);
	take(&rx, 5, IBVT_OOO);
	take(&rx, 6, IBVT_OK);
	assert_int_equal(rx.ok, 4);
	assert_int_equal(rx.dup, 1);
	assert_int_equal(rx.ooo, 1);
	assert_int_equal(rx.lost, 2);
	ibvt_rx_finish(&rx, 8);
	assert_int_equal(rx.lost, 3);
	/* a WRITE_WITH_IMM whose immediate is not its seq; a damaged one */
	ibvt_msg_fill(m, sizeof(m), IBVT_WIMM, 1, 8);
	assert_int_equal(ibvt_rx_take(&rx, m, sizeof(m), IBVT_WIMM, 1, 9, &why), IBVT_BAD);
	assert_int_equal(ibvt_rx_take(&rx, m, sizeof(m), IBVT_WIMM, 1, 8, &why), IBVT_OK);
	m[50] ^= 1;
	assert_int_equal(ibvt_rx_take(&rx, m, sizeof(m), IBVT_WIMM, 1, 9, &why), IBVT_BAD);
	assert_int_equal(rx.bad, 2);
	/* nothing lost at the end of a clean stream */
	struct ibvt_rx clean = {0};

	for (uint64_t s = 0; s < 10; s++)
		take(&clean, s, IBVT_OK);
	ibvt_rx_finish(&clean, 10);
	assert_int_equal(clean.lost + clean.dup + clean.ooo + clean.bad, 0);
}

/* The plan: the same for both ends, every operation present, lengths in
 * range with the largest one among them, the message count its own. */
static void test_plan(void **state)
{
	uint64_t seen[IBVT_OP_NUM] = {0}, msgs = 0;
	int max_seen = 0;

	(void)state;
	for (uint64_t i = 0; i < 2000; i++) {
		enum ibvt_op op = ibvt_plan_op(42, i);
		uint32_t len = ibvt_plan_len(42, i, 4096);

		assert_int_equal(op, ibvt_plan_op(42, i));
		assert_true(op < IBVT_OP_NUM);
		seen[op]++;
		msgs += op == IBVT_OP_SEND || op == IBVT_OP_WIMM;
		assert_true(len >= IBVT_HDR_LEN && len <= 4096);
		max_seen |= len == 4096;
		assert_true(ibvt_plan_add(42, i) >= 1 && ibvt_plan_add(42, i) <= 16);
	}
	for (int op = 0; op < IBVT_OP_NUM; op++)
		assert_true(seen[op] > 50);
	assert_true(max_seen);
	assert_int_equal(ibvt_plan_msgs(42, 2000), msgs);
	assert_int_not_equal(ibvt_plan_msgs(43, 2000), 0);
	assert_int_equal(ibvt_plan_len(1, 1, IBVT_HDR_LEN), IBVT_HDR_LEN);
	for (uint32_t k = 0; k < 64; k++) {
		uint32_t l = ibvt_rslot_len(k, 1000);

		assert_true(l >= IBVT_HDR_LEN && l <= 1000);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_and_crc),
		cmocka_unit_test(test_roundtrip_every_length),
		cmocka_unit_test(test_every_damaged_byte_refused),
		cmocka_unit_test(test_payload_checked_beyond_crc),
		cmocka_unit_test(test_header_mismatches),
		cmocka_unit_test(test_rx_order_loss_dup),
		cmocka_unit_test(test_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
