/* The ICRC engines on a board's CPU (QEMU): each engine is first checked
 * against the others, against the spec's definition run bitwise and against
 * frames recorded from Linux rxe, then timed through rocev2_icrc_by on the
 * same 4 KiB buffer as bench/engine_pair.c's host figure.
 *
 *   icrc-bench.elf check          the checks only (tests/system/icrc_boards.sh)
 *   icrc-bench.elf time MIB       the checks, then MIB MiB per engine, the
 *                                 engines interleaved (make bench)
 *
 * Output: "ICRC CHECK PASS engines=N" (or FAIL with what differed), then one
 * "icrc_gbps_<board>[<suffix>]: X.XX Gbit/s" line per engine; exit 0 when
 * every check passed.  Figures: icrc_gbps_a15 (the table engine A15 runs),
 * icrc_gbps_a72 (CRC32X, what A72 runs) and icrc_gbps_a72_nocrc (A72 without
 * the CRC instructions: the table engine).
 *
 * A program of its own on the board's HAL (it provides fw_main), not a
 * firmware mode, so that the firmware's text does not carry it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hal/platform.h"
#include "internal.h"
#include "lib/crc32.h"
#include "rxe_frames.h"

#define BUF_LEN 4096

struct engine {
	const char *name;
	const char *suffix;          /* figure name after icrc_gbps_<board> */
	crc32_raw_fn *fn;            /* NULL: rocev2_icrc itself */
};

/* The front function first (its figure is the board's: CRC32X on A72, the
 * table on A15), then every other engine the CPU can run. */
static const struct engine engines[] = {
	{ "rocev2_icrc", "", NULL },
#if defined(__ARM_FEATURE_CRC32)
	{ "table", "_nocrc", crc32_ieee_raw_table },
#endif
};

static const struct hal_console_ops *con;
static _Alignas(8) uint8_t buf[BUF_LEN + 8];

static void put_str(const char *s)
{
	while (*s)
		con->putc(*s++);
}

static void put_u64(uint64_t v)
{
	char d[21];
	int n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		con->putc(d[--n]);
}

static void put_hex32(uint32_t v)
{
	int i;

	put_str("0x");
	for (i = 28; i >= 0; i -= 4)
		con->putc("0123456789abcdef"[(v >> i) & 0xfu]);
}

static uint32_t icrc_with(const struct engine *e, const uint8_t *ip, size_t len)
{
	return e->fn ? rocev2_icrc_by(e->fn, ip, len) : rocev2_icrc(ip, len);
}

/* The spec's definition (IBA A17.3.3) bit by bit on a masked copy: shares
 * nothing with lib/crc32.c or icrc.c. */
static uint32_t ref_icrc(const uint8_t *ip, size_t len)
{
	static const size_t masked[] = { 1, 8, 10, 11, 26, 27, 32 };
	uint32_t reg = 0xffffffffu;
	size_t i, m;

	for (i = 0; i < 8 + len; i++) {
		uint8_t b = i < 8 ? 0xff : ip[i - 8];

		for (m = 0; m < sizeof(masked) / sizeof(masked[0]); m++)
			if (i >= 8 && i - 8 == masked[m])
				b = 0xff;
		reg ^= b;
		for (int k = 0; k < 8; k++)
			reg = (reg >> 1) ^ ((reg & 1u) ? 0xedb88320u : 0u);
	}
	return ~reg;
}

static int fail(const struct engine *e, const char *what, size_t a, size_t b, uint32_t got,
		uint32_t want)
{
	put_str("ICRC CHECK FAIL engine=");
	put_str(e->name);
	put_str(" ");
	put_str(what);
	put_str(" ");
	put_u64(a);
	put_str(" ");
	put_u64(b);
	put_str(" got ");
	put_hex32(got);
	put_str(" want ");
	put_hex32(want);
	put_str("\n");
	return 1;
}

static int check(const struct engine *e)
{
	static uint8_t frame[RXE_FRAME_MAX];
	size_t len, align, i;

	/* Odd lengths and alignments: the engines' bytewise heads and tails. */
	for (align = 0; align < 8; align++)
		for (len = 0; len <= 300; len += (len < 48 ? 1 : 17)) {
			uint32_t want = ref_icrc(buf + align, len);
			uint32_t got = icrc_with(e, buf + align, len);

			if (got != want)
				return fail(e, "len/align", len, align, got, want);
		}
	/* A whole 4 KiB buffer, against the front function. */
	if (icrc_with(e, buf, BUF_LEN) != rocev2_icrc(buf, BUF_LEN))
		return fail(e, "4KiB", BUF_LEN, 0, icrc_with(e, buf, BUF_LEN), rocev2_icrc(buf, BUF_LEN));
	/* Frames rxe sent: IPv4 header .. pad, against the ICRC on the wire. */
	for (i = 0; i < sizeof(rxe_frames) / sizeof(rxe_frames[0]); i++) {
		size_t n = rxe_frame_build(&rxe_frames[i], frame);
		uint32_t want = get_le32(frame + n - ICRC_LEN);
		uint32_t got = icrc_with(e, frame + ETH_HLEN, n - ETH_HLEN - ICRC_LEN);

		if (got != want)
			return fail(e, "rxe frame", i, n, got, want);
	}
	return 0;
}

static void put_gbps(const char *board, const char *suffix, uint64_t bytes, uint64_t ns)
{
	/* Gbit/s with two decimals: bits per ns is Gbit/s. */
	uint64_t centi = ns ? bytes * 8 * 100 / ns : 0;

	put_str("icrc_gbps_");
	put_str(board);
	put_str(suffix);
	put_str(": ");
	put_u64(centi / 100);
	put_str(".");
	con->putc((char)('0' + centi / 10 % 10));
	con->putc((char)('0' + centi % 10));
	put_str(" Gbit/s\n");
}

/* MIB MiB per engine in ROUNDS interleaved rounds, so that the load of a
 * shared host weighs on every engine alike. */
#define ROUNDS 16
static void time_engines(const struct hal_platform *p, const char *board, unsigned mib)
{
	uint64_t per_round = ((uint64_t)mib << 20) / ROUNDS / BUF_LEN * BUF_LEN;
	uint64_t ns[sizeof(engines) / sizeof(engines[0])] = { 0 };
	volatile uint32_t sink = 0;
	size_t e;
	unsigned r;

	if (per_round == 0)
		per_round = BUF_LEN;
	for (r = 0; r < ROUNDS; r++)
		for (e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
			uint64_t done, t0 = p->timer->now_ns();

			for (done = 0; done < per_round; done += BUF_LEN)
				sink ^= icrc_with(&engines[e], buf, BUF_LEN);
			ns[e] += p->timer->now_ns() - t0;
		}
	(void)sink;
	for (e = 0; e < sizeof(engines) / sizeof(engines[0]); e++)
		put_gbps(board, engines[e].suffix, per_round * ROUNDS, ns[e]);
}

static unsigned parse_mib(const char *s)
{
	unsigned v = 0;

	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 100000)
			return 0;
		v = v * 10 + (unsigned)(*s - '0');
	}
	return v;
}

int fw_main(int argc, char **argv)
{
	struct hal_platform p;
	const char *board;
	unsigned mib = 0, failed = 0;
	size_t i, n = sizeof(engines) / sizeof(engines[0]);
	uint32_t seed = 7;

	if (hal_platform_init(&p, &argc, &argv) != 0)
		return 3;
	con = p.console;
	if (argc < 2 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "time") != 0) ||
	    (strcmp(argv[1], "time") == 0 && (argc < 3 || (mib = parse_mib(argv[2])) == 0))) {
		put_str("usage: icrc-bench.elf check | time MIB (MIB 1..100000)\n");
		return 2;
	}
	for (i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	for (i = 0; i < n; i++)
		failed += (unsigned)check(&engines[i]);
	if (failed)
		return 1;
	put_str("ICRC CHECK PASS engines=");
	put_u64(n);
	put_str(" rxe_frames=");
	put_u64(sizeof(rxe_frames) / sizeof(rxe_frames[0]));
	put_str("\n");
	if (mib == 0)
		return 0;
	/* "qemu-virt-a72" -> "a72" */
	board = strrchr(p.board, '-') ? strrchr(p.board, '-') + 1 : p.board;
	time_engines(&p, board, mib);
	return 0;
}
