/* rocev2/icrc.c: the RoCEv2 ICRC against vectors computed outside this
 * code and against the spec's definition run bytewise on a masked copy
 * (the CRC engines themselves: tests/unit/lib/test_crc32.c).
 *
 * How the expected values were obtained (python3, zlib), independently of
 * icrc.c: ICRC = zlib.crc32(b'\xff' * 8 + masked), where masked is the
 * packet from the IPv4 header to the end of the pad with bytes 1 (TOS),
 * 8 (TTL), 10-11 (IP checksum), 26-27 (UDP checksum) and 32 (BTH byte 4)
 * set to 0xff (IBA A17.3.3; rxe_icrc.c), stored on the wire little-endian.
 * Two of the vectors below were also checked against third-party values:
 * a CNP captured on a ConnectX-4 Lx and a UC SEND_ONLY built by scapy
 * (secdev/scapy test/contrib/roce.uts); the zlib formula reproduces both.
 *
 * rocev2_icrc runs ISA-L on this (x86-64) host; every engine the host can
 * run (ISA-L, lib/crc32.c's table, zlib) is also driven through
 * rocev2_icrc_by and cross-checked, and all of them against frames
 * recorded from Linux rxe (rxe_frames.h).  The AArch64 CRC32 engine is
 * checked the same way on the A72 board (bench/icrc_board.c,
 * tests/system/icrc_boards.sh). */
#include "cmocka_main.h"

#define crc32_ieee isal_crc32_ieee_nonreflected   /* as rocev2/icrc.c does */
#include <isa-l/crc.h>
#undef crc32_ieee
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "internal.h"
#include "rxe_frames.h"

#define ICRC_SEED 0xdebb20e3u   /* register after 8 x 0xFF from all ones */

/* CRC-32 register, bit by bit from the polynomial: independent of lib/. */
static uint32_t crc_update_bitwise(uint32_t reg, const uint8_t *p, size_t len)
{
	while (len--) {
		reg ^= *p++;
		for (int k = 0; k < 8; k++)
			reg = (reg >> 1) ^ ((reg & 1u) ? 0xedb88320u : 0u);
	}
	return reg;
}

/* Reference: the spec's definition, bytewise, with a masked copy of the
 * whole packet (the slow way icrc.c avoids). */
static uint32_t ref_icrc(const uint8_t *ip, size_t len)
{
	static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const size_t masked[] = { 1, 8, 10, 11, 26, 27, 32 };
	uint8_t *copy = malloc(len + 1);
	uint32_t s;
	size_t i;

	assert_non_null(copy);
	memcpy(copy, ip, len);
	for (i = 0; i < sizeof(masked) / sizeof(masked[0]); i++)
		if (masked[i] < len)
			copy[masked[i]] = 0xff;
	s = crc_update_bitwise(0xffffffffu, lrh, sizeof(lrh));
	s = crc_update_bitwise(s, copy, len);
	free(copy);
	return ~s;
}

/* ConnectX-4 Lx CNP (opcode 0x81, BECN set, TOS 0xc2) as captured, ICRC
 * 82 fd 00 2a on the wire = 0x2a00fd82 little-endian. */
static const uint8_t cx4_cnp_frame[74] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32,
	0x08, 0x00, 0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
	0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd,
	0x00, 0x2a,
};

/* scapy's UC SEND_ONLY (opcode 0x24, MigReq, PadCnt 2, TOS 1, UDP checksum
 * 0xaca2), IPv4 header onwards without the ICRC; scapy gives icrc
 * 0x78f353f3 as wire bytes 78 f3 53 f3. */
static const uint8_t scapy_uc_ip[56] = {
	0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11, 0xb4, 0xd5,
	0xc0, 0xa8, 0x00, 0x07, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0x00, 0x12, 0xb7,
	0x00, 0x2c, 0xac, 0xa2, 0x24, 0x60, 0xff, 0xff, 0x00, 0x00, 0x00, 0xd3,
	0x00, 0xcf, 0x17, 0x10, 0x46, 0x30, 0x81, 0x8b, 0xe2, 0x89, 0x35, 0xd9,
	0x0e, 0x9a, 0x95, 0x50, 0x54, 0x01, 0xbe, 0x88,
};
/* ...followed by the last payload bytes 5e 50 and pad 00 00 (60 bytes) */
static const uint8_t scapy_uc_tail[4] = { 0x5e, 0x50, 0x00, 0x00 };

/* Our own RC SEND_ONLY, 5-byte payload "hello", PadCnt 3, TOS 0x68,
 * TTL 64, 10.0.0.1 -> 10.0.0.2, sport 0xdf94, DestQP 0x123, AckReq,
 * PSN 0xabcd: IPv4 header to end of pad (48 bytes); ICRC 0x27f6b33d
 * (python3: zlib.crc32(b'\xff'*8 + masked) == 0x27f6b33d). */
static const uint8_t send_only_ip[48] = {
	0x45, 0x68, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0x4f,
	0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xdf, 0x94, 0x12, 0xb7,
	0x00, 0x20, 0x00, 0x00, 0x04, 0x30, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23,
	0x80, 0x00, 0xab, 0xcd, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00,
};
#define SEND_ONLY_ICRC 0x27f6b33du

static void test_rxe_seed(void **state)
{
	static const uint8_t ff8[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	(void)state;
	/* python3: ~zlib.crc32(b'\xff'*8) & 0xffffffff == 0xdebb20e3 */
	assert_int_equal(crc_update_bitwise(0xffffffffu, ff8, sizeof(ff8)), 0xdebb20e3u);
	assert_int_equal(crc_update_bitwise(0xffffffffu, ff8, sizeof(ff8)), ICRC_SEED);
	/* An empty packet leaves just the seed, inverted. */
	assert_int_equal(rocev2_icrc(ff8, 0), ~0xdebb20e3u);
}

static void test_connectx4_capture(void **state)
{
	const uint8_t *ip = cx4_cnp_frame + ETH_HLEN;
	size_t len = sizeof(cx4_cnp_frame) - ETH_HLEN - ICRC_LEN;

	(void)state;
	assert_int_equal(rocev2_icrc(ip, len), 0x2a00fd82u);
	assert_int_equal(rocev2_icrc(ip, len), get_le32(ip + len));
}

static void test_scapy_vector(void **state)
{
	uint8_t pkt[60];

	(void)state;
	memcpy(pkt, scapy_uc_ip, sizeof(scapy_uc_ip));
	memcpy(pkt + sizeof(scapy_uc_ip), scapy_uc_tail, sizeof(scapy_uc_tail));
	assert_int_equal(rocev2_icrc(pkt, sizeof(pkt)), 0xf353f378u);
}

static void test_send_only_vector(void **state)
{
	(void)state;
	assert_int_equal(rocev2_icrc(send_only_ip, sizeof(send_only_ip)), SEND_ONLY_ICRC);
	assert_int_equal(ref_icrc(send_only_ip, sizeof(send_only_ip)), SEND_ONLY_ICRC);
}

/* One vector per masked field: rewriting it in flight keeps the ICRC. */
static void test_masked_fields_do_not_count(void **state)
{
	static const struct { size_t off, len; const char *name; } fields[] = {
		{ 1, 1, "IPv4 TOS" },
		{ 8, 1, "IPv4 TTL" },
		{ 10, 2, "IPv4 header checksum" },
		{ 26, 2, "UDP checksum" },
		{ 32, 1, "BTH FECN/BECN/resv6a" },
	};
	static const uint8_t values[] = { 0x00, 0x01, 0x5a, 0xa5, 0xc0, 0xfe, 0xff };
	uint8_t pkt[sizeof(send_only_ip)];
	size_t f, v, i;

	(void)state;
	for (f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
		for (v = 0; v < sizeof(values); v++) {
			memcpy(pkt, send_only_ip, sizeof(pkt));
			for (i = 0; i < fields[f].len; i++)
				pkt[fields[f].off + i] = values[v];
			if (rocev2_icrc(pkt, sizeof(pkt)) != SEND_ONLY_ICRC)
				fail_msg("%s = 0x%02x changed the ICRC", fields[f].name, values[v]);
		}
	/* The rewrites a router really does, together: TTL-1, new checksum,
	 * ECN CE in TOS, and a switch setting FECN. */
	memcpy(pkt, send_only_ip, sizeof(pkt));
	pkt[1] |= 0x03;
	pkt[8]--;
	pkt[10] = 0x12;
	pkt[11] = 0x34;
	pkt[32] = 0x80;
	assert_int_equal(rocev2_icrc(pkt, sizeof(pkt)), SEND_ONLY_ICRC);
}

/* Every other byte is invariant: any single-bit change shows. */
static void test_other_bytes_count(void **state)
{
	uint8_t pkt[sizeof(send_only_ip)];
	size_t i;
	unsigned bit;

	(void)state;
	for (i = 0; i < sizeof(pkt); i++) {
		if (i == 1 || i == 8 || i == 10 || i == 11 || i == 26 || i == 27 || i == 32)
			continue;
		for (bit = 0; bit < 8; bit++) {
			memcpy(pkt, send_only_ip, sizeof(pkt));
			pkt[i] ^= (uint8_t)(1u << bit);
			if (rocev2_icrc(pkt, sizeof(pkt)) == SEND_ONLY_ICRC)
				fail_msg("byte %zu bit %u not covered by the ICRC", i, bit);
		}
	}
	/* The rest of the BTH (DestQP, AckReq, PSN) is covered: only byte 4 is masked. */
	memcpy(pkt, send_only_ip, sizeof(pkt));
	pkt[IPV4_HLEN + UDP_HLEN + 5] ^= 0x01;
	assert_int_not_equal(rocev2_icrc(pkt, sizeof(pkt)), SEND_ONLY_ICRC);
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (uint8_t)(seed >> 16);
	}
}

/* The whole ICRC at odd alignments and lengths against the reference. */
static void test_icrc_equals_reference(void **state)
{
	static uint8_t buf[400 + 16];
	size_t len, align;

	(void)state;
	fill(buf, sizeof(buf), 7);
	for (align = 0; align < 8; align += 1)
		for (len = 0; len <= 400; len += (len < 48 ? 1 : 13))
			if (rocev2_icrc(buf + align, len) != ref_icrc(buf + align, len))
				fail_msg("icrc differs: len %zu align %zu", len, align);
}

/* A packet shorter than the 40 masked header bytes is never read past its
 * end (exact-size heap copies, so ASan would see an overread). */
static void test_short_packet_in_bounds(void **state)
{
	size_t len;

	(void)state;
	for (len = 0; len < 48; len++) {
		uint8_t *p = malloc(len ? len : 1);

		assert_non_null(p);
		memcpy(p, send_only_ip, len);
		assert_int_equal(rocev2_icrc(p, len), ref_icrc(send_only_ip, len));
		free(p);
	}
}

/* The engines as bare registers, each from its own library. */
static uint32_t engine_isal(uint32_t reg, const void *buf, size_t len)
{
	return ~crc32_gzip_refl(~reg, buf, len);
}

static uint32_t engine_zlib(uint32_t reg, const void *buf, size_t len)
{
	return ~(uint32_t)crc32(~reg, buf, (uInt)len);
}

static const struct {
	const char *name;
	crc32_raw_fn *fn;
} engines[] = {
	{ "ISA-L crc32_gzip_refl", engine_isal },
	{ "zlib crc32", engine_zlib },
	{ "lib/crc32.c table", crc32_ieee_raw_table },
	{ "lib/crc32.c best (crc32_ieee_raw)", crc32_ieee_raw },
};
#define N_ENGINES (sizeof(engines) / sizeof(engines[0]))

/* Every engine gives the front function's ICRC, and the front function the
 * bitwise reference's, at every alignment over lengths that exercise each
 * engine's paths (ISA-L: < 16, < 64, < 256 bytes and its folding loops;
 * the table: bytes and its 16-byte step). */
static void test_icrc_engines_agree(void **state)
{
	static uint8_t buf[9000 + 8];
	size_t len, align, e;

	(void)state;
	fill(buf, sizeof(buf), 11);
	for (align = 0; align < 8; align++)
		for (len = 0; len <= 9000; len += (len < 300 ? 1 : len < 4200 ? 97 : 1201)) {
			uint32_t want = rocev2_icrc(buf + align, len);

			if (len <= 1100 && want != ref_icrc(buf + align, len))
				fail_msg("rocev2_icrc differs from the reference: len %zu align %zu",
					 len, align);
			for (e = 0; e < N_ENGINES; e++)
				if (rocev2_icrc_by(engines[e].fn, buf + align, len) != want)
					fail_msg("%s differs: len %zu align %zu", engines[e].name, len,
						 align);
		}
}

/* Frames Linux rxe sent (SEND_FIRST, SEND_LAST, ACK): every engine
 * reproduces the ICRC on the wire, and the receive path's check (ICRC of
 * what precedes it) accepts them; one flipped payload bit is caught. */
static void test_icrc_rxe_frames(void **state)
{
	uint8_t frame[RXE_FRAME_MAX];
	size_t i, e;

	(void)state;
	for (i = 0; i < sizeof(rxe_frames) / sizeof(rxe_frames[0]); i++) {
		size_t n = rxe_frame_build(&rxe_frames[i], frame);
		const uint8_t *ip = frame + ETH_HLEN;
		size_t len = n - ETH_HLEN - ICRC_LEN;
		uint32_t wire = get_le32(frame + n - ICRC_LEN);

		/* The rebuilt frame is as long as its IPv4 header says. */
		assert_int_equal(ETH_HLEN + get_be16(ip + 2), n);
		if (rocev2_icrc(ip, len) != wire)
			fail_msg("%s: rocev2_icrc 0x%08x, wire 0x%08x", rxe_frames[i].name,
				 rocev2_icrc(ip, len), wire);
		assert_int_equal(ref_icrc(ip, len), wire);
		for (e = 0; e < N_ENGINES; e++)
			if (rocev2_icrc_by(engines[e].fn, ip, len) != wire)
				fail_msg("%s: %s differs", rxe_frames[i].name, engines[e].name);
		frame[n - ICRC_LEN - 1] ^= 0x10;
		assert_int_not_equal(rocev2_icrc(ip, len), wire);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rxe_seed),
		cmocka_unit_test(test_connectx4_capture),
		cmocka_unit_test(test_scapy_vector),
		cmocka_unit_test(test_send_only_vector),
		cmocka_unit_test(test_masked_fields_do_not_count),
		cmocka_unit_test(test_other_bytes_count),
		cmocka_unit_test(test_icrc_equals_reference),
		cmocka_unit_test(test_short_packet_in_bounds),
		cmocka_unit_test(test_icrc_engines_agree),
		cmocka_unit_test(test_icrc_rxe_frames),
	};
	return cmocka_run_group_tests_name("rocev2/icrc", tests, NULL, NULL);
}
