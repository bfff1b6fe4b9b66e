/* hal/posix/impair.c: rates, determinism, and each impairment's shape. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hal/errno.h"
#include "impair.h"

#define RATE_FRAMES 100000u
#define FRAME_LEN 64u

static struct impair im;   /* 18 KB: static, as in the backend */

/* ---- frames that survive one flipped bit ---------------------------------
 * The sequence number is stored three times; a single flipped bit can only
 * spoil one copy, so a bitwise majority vote recovers it. */

static void make_frame(uint8_t *f, size_t len, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		f[i] = (uint8_t)(seq * 131u + i * 7u + 1u);
	if (len >= 12)
		for (unsigned k = 0; k < 3; k++)
			memcpy(f + 4 * k, &seq, 4);
}

static uint32_t frame_seq(const uint8_t *f)
{
	uint32_t a, b, c;

	memcpy(&a, f, 4);
	memcpy(&b, f + 4, 4);
	memcpy(&c, f + 8, 4);
	return (a & b) | (a & c) | (b & c);
}

static unsigned bits_differing(const uint8_t *x, const uint8_t *y, size_t len)
{
	unsigned n = 0;

	for (size_t i = 0; i < len; i++)
		n += (unsigned)__builtin_popcount((unsigned)(x[i] ^ y[i]));
	return n;
}

/* ---- an observer of the emitted stream ---------------------------------- */

struct observer {
	unsigned frames;        /* offered */
	unsigned emitted;
	uint8_t *count;         /* emissions per seq */
	uint8_t *corrupt;       /* seq seen with exactly one bit flipped */
	uint8_t *late;          /* seq emitted after a higher seq */
	uint32_t max_seq;
	int any;
	unsigned bad;           /* emissions that are neither intact nor one-bit-off */
	uint64_t hash;          /* FNV-1a over (len, bytes) of every emission */
};

static void observer_init(struct observer *o, unsigned frames)
{
	memset(o, 0, sizeof(*o));
	o->frames = frames;
	o->count = calloc(frames, 1);
	o->corrupt = calloc(frames, 1);
	o->late = calloc(frames, 1);
	o->hash = 0xcbf29ce484222325ull;
	assert_non_null(o->count);
	assert_non_null(o->corrupt);
	assert_non_null(o->late);
}

static void observer_free(struct observer *o)
{
	free(o->count);
	free(o->corrupt);
	free(o->late);
}

static void hash_bytes(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		*h ^= b[i];
		*h *= 0x100000001b3ull;
	}
}

static void observe(void *ctx, const void *f, size_t len)
{
	struct observer *o = ctx;
	uint8_t orig[FRAME_LEN];
	uint32_t seq = frame_seq(f);
	uint64_t len64 = len;
	unsigned diff;

	hash_bytes(&o->hash, &len64, sizeof(len64));
	hash_bytes(&o->hash, f, len);
	o->emitted++;
	if (len != FRAME_LEN || seq >= o->frames) {
		o->bad++;
		return;
	}
	make_frame(orig, len, seq);
	diff = bits_differing(orig, f, len);
	if (diff == 1)
		o->corrupt[seq] = 1;
	else if (diff != 0)
		o->bad++;
	if (o->count[seq] < 255)
		o->count[seq]++;
	if (o->any && seq < o->max_seq)
		o->late[seq] = 1;
	if (!o->any || seq > o->max_seq)
		o->max_seq = seq;
	o->any = 1;
}

static void run_stream(struct observer *o, const struct impair_cfg *c, unsigned frames)
{
	uint8_t f[FRAME_LEN];

	impair_init(&im, c);
	observer_init(o, frames);
	for (uint32_t seq = 0; seq < frames; seq++) {
		make_frame(f, sizeof(f), seq);
		impair_apply(&im, f, sizeof(f), observe, o);
	}
	impair_flush(&im, observe, o);
}

struct measured {
	unsigned dropped, duplicated, corrupted, late;
};

static struct measured measure(const struct observer *o)
{
	struct measured m = { 0 };

	for (unsigned s = 0; s < o->frames; s++) {
		m.dropped += o->count[s] == 0;
		m.duplicated += o->count[s] == 2;
		m.corrupted += o->corrupt[s];
		m.late += o->late[s];
	}
	return m;
}

/* Within rel (relative) of the expected rate, and never tighter than five
 * binomial standard deviations so that small rates get a fair band. */
static double square_root(double x)
{
	double r = x > 1 ? x : 1;

	for (unsigned i = 0; i < 64; i++)
		r = 0.5 * (r + x / r);
	return r;
}

static void assert_rate(const char *what, unsigned events, unsigned trials, double rate, double rel)
{
	double expected = rate * trials;
	double band = rel * expected, sigma5 = 5.0 * square_root(expected * (1.0 - rate));
	double off = events > expected ? events - expected : expected - events;

	if (sigma5 > band)
		band = sigma5;
	if (off > band)
		fail_msg("%s: %u events in %u trials, expected %.1f +- %.1f", what, events,
			 trials, expected, band);
}

/* ---- tests -------------------------------------------------------------- */

/* Reference values computed from the definitions in Blackman & Vigna (2018)
 * with an independent implementation: the state {1, 2, 3, 4} by hand, the
 * splitmix64 and seed-42 values in Python. */
static void test_prng_matches_reference(void **state)
{
	struct impair_rng r = { .s = { 1, 2, 3, 4 } };

	(void)state;
	assert_int_equal(impair_rng_next(&r), 11520u);
	assert_int_equal(impair_rng_next(&r), 0u);
	assert_int_equal(impair_rng_next(&r), 1509978240u);
	assert_int_equal(impair_rng_next(&r), 1215971899390074240ull);

	impair_rng_seed(&r, 0);
	assert_int_equal(r.s[0], 0xe220a8397b1dcdafull);
	assert_int_equal(r.s[1], 0x6e789e6aa1b965f4ull);
	assert_int_equal(r.s[2], 0x06c45d188009454full);
	assert_int_equal(r.s[3], 0xf88bb8a8724c81ecull);

	impair_rng_seed(&r, 42);
	assert_int_equal(impair_rng_next(&r), 0x15780b2e0c2ec716ull);
	assert_int_equal(impair_rng_next(&r), 0x6104d9866d113a7eull);
	assert_int_equal(impair_rng_next(&r), 0xae17533239e499a1ull);
}

static void test_measured_rates_match_config(void **state)
{
	/* drop applies to every frame; the others only to frames that survive
	 * it, and a swap needs no frame already held (rate r / (1 + r)). */
	static const struct impair_cfg base = {
		.drop_ppm = 20000, .dup_ppm = 10000, .reorder_ppm = 20000, .corrupt_ppm = 10000,
	};
	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct impair_cfg c = base;
		struct observer o;
		struct measured m;
		unsigned kept;
		double r;

		c.seed = seed;
		run_stream(&o, &c, RATE_FRAMES);
		m = measure(&o);
		kept = RATE_FRAMES - m.dropped;
		r = c.reorder_ppm / 1e6;

		assert_int_equal(o.bad, 0);
		assert_int_equal(im.stats.frames, RATE_FRAMES);
		assert_int_equal(im.stats.dropped, m.dropped);
		assert_int_equal(im.stats.duplicated, m.duplicated);
		assert_int_equal(im.stats.corrupted, m.corrupted);
		assert_int_equal(im.stats.reordered, m.late);
		assert_int_equal(o.emitted, kept + m.duplicated);

		assert_rate("drop", m.dropped, RATE_FRAMES, c.drop_ppm / 1e6, 0.15);
		assert_rate("dup", m.duplicated, kept, c.dup_ppm / 1e6, 0.15);
		assert_rate("corrupt", m.corrupted, kept, c.corrupt_ppm / 1e6, 0.15);
		assert_rate("reorder", m.late, kept, r / (1 + r), 0.15);
		observer_free(&o);
	}
}

static void test_small_rates_within_binomial_band(void **state)
{
	static const struct impair_cfg c = {
		.drop_ppm = 1000, .dup_ppm = 500, .reorder_ppm = 2000, .corrupt_ppm = 100, .seed = 9,
	};
	struct observer o;
	struct measured m;
	unsigned kept;

	(void)state;
	run_stream(&o, &c, RATE_FRAMES);
	m = measure(&o);
	kept = RATE_FRAMES - m.dropped;
	assert_rate("drop", m.dropped, RATE_FRAMES, 0.001, 0.15);
	assert_rate("dup", m.duplicated, kept, 0.0005, 0.15);
	assert_rate("reorder", m.late, kept, 0.002, 0.15);
	assert_rate("corrupt", m.corrupted, kept, 0.0001, 0.15);
	observer_free(&o);
}

static uint64_t stream_hash(uint64_t seed)
{
	struct impair_cfg c = {
		.drop_ppm = 50000, .dup_ppm = 50000, .reorder_ppm = 50000, .corrupt_ppm = 50000,
		.seed = seed,
	};
	struct observer o;
	uint64_t h;

	run_stream(&o, &c, 10000);
	h = o.hash;
	observer_free(&o);
	return h;
}

static void test_same_seed_same_decisions(void **state)
{
	(void)state;
	assert_int_equal(stream_hash(42), stream_hash(42));
	assert_int_not_equal(stream_hash(42), stream_hash(43));
	assert_int_not_equal(stream_hash(42), stream_hash(42ull | 1ull << 63));
}

/* Every frame makes the same draws whatever the rates, so adding drops only
 * removes frames from the corrupted set; it never moves corruption. */
static void test_rates_do_not_shift_each_other(void **state)
{
	struct impair_cfg c = { .corrupt_ppm = 100000, .seed = 5 };
	struct observer alone, with_drop;

	(void)state;
	run_stream(&alone, &c, 20000);
	c.drop_ppm = 300000;
	run_stream(&with_drop, &c, 20000);
	for (unsigned s = 0; s < 20000; s++) {
		if (with_drop.count[s] == 0)
			continue;
		assert_int_equal(with_drop.corrupt[s], alone.corrupt[s]);
	}
	observer_free(&alone);
	observer_free(&with_drop);
}

struct frame_log {
	unsigned n;
	size_t len[16];
	uint8_t data[16][HAL_ETH_MAX_FRAME + 64];
	const void *ptr[16];
};

static struct frame_log flog;

static void log_frame(void *ctx, const void *f, size_t len)
{
	struct frame_log *l = ctx;

	assert_true(l->n < 16);
	assert_true(len <= sizeof(l->data[0]));
	memcpy(l->data[l->n], f, len);
	l->len[l->n] = len;
	l->ptr[l->n] = f;
	l->n++;
}

static void test_zero_config_passes_everything_in_order(void **state)
{
	static const struct impair_cfg zero = { .seed = 77 };
	struct observer o;
	uint8_t f[FRAME_LEN];

	(void)state;
	impair_init(&im, &zero);
	observer_init(&o, 5000);
	for (uint32_t seq = 0; seq < 5000; seq++) {
		make_frame(f, sizeof(f), seq);
		assert_int_equal(impair_apply(&im, f, sizeof(f), observe, &o), 1);
		assert_int_equal(o.emitted, seq + 1);
		assert_int_equal(o.max_seq, seq);
	}
	assert_int_equal(impair_flush(&im, observe, &o), 0);
	assert_int_equal(o.bad, 0);
	for (unsigned s = 0; s < 5000; s++) {
		assert_int_equal(o.count[s], 1);
		assert_int_equal(o.corrupt[s], 0);
		assert_int_equal(o.late[s], 0);
	}
	assert_int_equal(im.stats.frames, 5000);
	assert_int_equal(im.stats.dropped + im.stats.duplicated + im.stats.reordered +
			 im.stats.corrupted, 0);
	assert_false(impair_cfg_active(&zero));
	observer_free(&o);
}

/* The caller's frame sits in a read-only page: a write would fault. */
static void test_corrupt_flips_one_bit_of_a_copy(void **state)
{
	static const struct impair_cfg all = { .corrupt_ppm = IMPAIR_PPM_ONE, .seed = 3 };
	long page = sysconf(_SC_PAGESIZE);
	unsigned hits[FRAME_LEN * 8] = { 0 };
	uint8_t *ro, orig[1500];

	(void)state;
	ro = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(ro != MAP_FAILED);
	impair_init(&im, &all);
	for (uint32_t i = 0; i < 20000; i++) {
		size_t len = i < 2000 ? 1 + i % 1500 : FRAME_LEN;

		assert_int_equal(mprotect(ro, (size_t)page, PROT_READ | PROT_WRITE), 0);
		make_frame(ro, len, i);
		memcpy(orig, ro, len);
		assert_int_equal(mprotect(ro, (size_t)page, PROT_READ), 0);

		flog.n = 0;
		assert_int_equal(impair_apply(&im, ro, len, log_frame, &flog), 1);
		assert_int_equal(flog.n, 1);
		assert_int_equal(flog.len[0], len);
		assert_ptr_not_equal(flog.ptr[0], ro);
		assert_memory_equal(ro, orig, len);
		assert_int_equal(bits_differing(flog.data[0], orig, len), 1);
		if (len == FRAME_LEN)
			for (unsigned b = 0; b < FRAME_LEN * 8; b++)
				if ((flog.data[0][b / 8] ^ orig[b / 8]) & (1u << (b % 8)))
					hits[b]++;
	}
	/* 18000 flips over 512 positions (about 35 each): all of them, first
	 * and last bit included, must be reachable. */
	for (unsigned b = 0; b < FRAME_LEN * 8; b++)
		assert_true(hits[b] > 0);
	assert_int_equal(im.stats.corrupted, 20000);
	munmap(ro, (size_t)page);
}

static void test_reorder_swaps_adjacent_and_flush_releases(void **state)
{
	static const struct impair_cfg all = { .reorder_ppm = IMPAIR_PPM_ONE };
	uint8_t f[5][FRAME_LEN];
	static const uint32_t order[4] = { 1, 0, 3, 2 };

	(void)state;
	impair_init(&im, &all);
	flog.n = 0;
	for (uint32_t i = 0; i < 5; i++)
		make_frame(f[i], FRAME_LEN, i);
	assert_int_equal(impair_apply(&im, f[0], FRAME_LEN, log_frame, &flog), 0);
	assert_true(impair_holding(&im));
	assert_int_equal(impair_apply(&im, f[1], FRAME_LEN, log_frame, &flog), 2);
	assert_false(impair_holding(&im));
	assert_int_equal(impair_apply(&im, f[2], FRAME_LEN, log_frame, &flog), 0);
	assert_int_equal(impair_apply(&im, f[3], FRAME_LEN, log_frame, &flog), 2);
	assert_int_equal(impair_apply(&im, f[4], FRAME_LEN, log_frame, &flog), 0);
	assert_int_equal(flog.n, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_memory_equal(flog.data[i], f[order[i]], FRAME_LEN);
	/* the held frame was copied: the caller may reuse its buffer at once */
	memset(f[4], 0, FRAME_LEN);
	make_frame(f[0], FRAME_LEN, 4);
	assert_int_equal(impair_flush(&im, log_frame, &flog), 1);
	assert_int_equal(flog.n, 5);
	assert_memory_equal(flog.data[4], f[0], FRAME_LEN);
	assert_int_equal(impair_flush(&im, log_frame, &flog), 0);
	assert_int_equal(im.stats.reordered, 2);   /* frame 4 was released, not overtaken */
}

static void test_dup_emits_identical_copies(void **state)
{
	static const struct impair_cfg all = { .dup_ppm = IMPAIR_PPM_ONE };
	static const struct impair_cfg dup_reorder = {
		.dup_ppm = IMPAIR_PPM_ONE, .reorder_ppm = IMPAIR_PPM_ONE,
	};
	uint8_t a[FRAME_LEN], b[FRAME_LEN];

	(void)state;
	make_frame(a, FRAME_LEN, 10);
	make_frame(b, FRAME_LEN, 11);
	impair_init(&im, &all);
	flog.n = 0;
	assert_int_equal(impair_apply(&im, a, FRAME_LEN, log_frame, &flog), 2);
	assert_int_equal(flog.n, 2);
	assert_memory_equal(flog.data[0], a, FRAME_LEN);
	assert_memory_equal(flog.data[1], a, FRAME_LEN);
	assert_int_equal(im.stats.duplicated, 1);

	/* a duplicated frame that is also held comes back twice after the next */
	impair_init(&im, &dup_reorder);
	flog.n = 0;
	assert_int_equal(impair_apply(&im, a, FRAME_LEN, log_frame, &flog), 0);
	assert_int_equal(impair_apply(&im, b, FRAME_LEN, log_frame, &flog), 4);
	assert_memory_equal(flog.data[0], b, FRAME_LEN);
	assert_memory_equal(flog.data[1], b, FRAME_LEN);
	assert_memory_equal(flog.data[2], a, FRAME_LEN);
	assert_memory_equal(flog.data[3], a, FRAME_LEN);
}

static void test_drop_all_and_oversized_frames(void **state)
{
	static const struct impair_cfg drop = { .drop_ppm = IMPAIR_PPM_ONE };
	static const struct impair_cfg rest = {
		.corrupt_ppm = IMPAIR_PPM_ONE, .reorder_ppm = IMPAIR_PPM_ONE,
	};
	static uint8_t big[HAL_ETH_MAX_FRAME + 64];
	uint8_t f[FRAME_LEN];

	(void)state;
	impair_init(&im, &drop);
	flog.n = 0;
	make_frame(f, FRAME_LEN, 1);
	for (unsigned i = 0; i < 100; i++)
		assert_int_equal(impair_apply(&im, f, FRAME_LEN, log_frame, &flog), 0);
	assert_int_equal(flog.n, 0);
	assert_int_equal(im.stats.dropped, 100);

	/* too large to copy: never corrupted or held, passed through as is */
	impair_init(&im, &rest);
	flog.n = 0;
	make_frame(big, sizeof(big), 2);
	assert_int_equal(impair_apply(&im, big, sizeof(big), log_frame, &flog), 1);
	assert_int_equal(flog.len[0], sizeof(big));
	assert_memory_equal(flog.data[0], big, sizeof(big));
	assert_false(impair_holding(&im));
	assert_int_equal(im.stats.corrupted, 0);
}

static void test_parse_accepts_good_specs(void **state)
{
	struct impair_cfg c, back;
	char err[200], text[200];

	(void)state;
	assert_int_equal(impair_parse(&c, "drop=0.01,dup=0.005,reorder=0.02,corrupt=0.001,seed=42",
				      err, sizeof(err)), 0);
	assert_int_equal(c.drop_ppm, 10000);
	assert_int_equal(c.dup_ppm, 5000);
	assert_int_equal(c.reorder_ppm, 20000);
	assert_int_equal(c.corrupt_ppm, 1000);
	assert_int_equal(c.seed, 42);
	assert_true(impair_cfg_active(&c));

	assert_int_equal(impair_parse(&c, "drop=1%,dup=0.5%,reorder=100%,corrupt=0.0001%",
				      err, sizeof(err)), 0);
	assert_int_equal(c.drop_ppm, 10000);
	assert_int_equal(c.dup_ppm, 5000);
	assert_int_equal(c.reorder_ppm, 1000000);
	assert_int_equal(c.corrupt_ppm, 1);
	assert_int_equal(c.seed, 0);

	assert_int_equal(impair_parse(&c, "seed=0xFFFFFFFFFFFFFFFF,drop=1,dup=.5,corrupt=0.000001",
				      err, sizeof(err)), 0);
	assert_int_equal(c.seed, UINT64_MAX);
	assert_int_equal(c.drop_ppm, 1000000);
	assert_int_equal(c.dup_ppm, 500000);
	assert_int_equal(c.corrupt_ppm, 1);

	assert_int_equal(impair_parse(&c, "", err, sizeof(err)), 0);
	assert_false(impair_cfg_active(&c));
	assert_int_equal(impair_parse(&c, "drop=0,seed=18446744073709551615", NULL, 0), 0);
	assert_int_equal(c.seed, UINT64_MAX);

	/* the formatted config reads back to the same config */
	c = (struct impair_cfg){ 123456, 1, 1000000, 999999, 7 };
	impair_format(&c, text, sizeof(text));
	assert_int_equal(impair_parse(&back, text, err, sizeof(err)), 0);
	assert_memory_equal(&back, &c, sizeof(c));
}

static void test_parse_rejects_bad_specs_with_a_message(void **state)
{
	static const struct {
		const char *spec, *must_mention;
	} bad[] = {
		{ "drop=1.5", "above 1" },
		{ "drop=101%", "above 1" },
		{ "drop=abc", "not a rate" },
		{ "drop=-0.1", "not a rate" },
		{ "drop=1e-3", "not a rate" },
		{ "drop=0.1x", "not a rate" },
		{ "drop=.", "not a rate" },
		{ "drop=", "has no value" },
		{ "drop", "has no value" },
		{ "loss=0.1", "unknown key 'loss'" },
		{ "drop=0.1,drop=0.2", "given twice" },
		{ "drop=0.1,", "empty item" },
		{ ",drop=0.1", "empty item" },
		{ "drop=0.1,,dup=0.1", "empty item" },
		{ "drop=0.0000001", "1 ppm" },
		{ "seed=abc", "not a 64-bit number" },
		{ "seed=-1", "not a 64-bit number" },
		{ "seed=18446744073709551616", "not a 64-bit number" },
		{ "seed=0x", "not a 64-bit number" },
		{ " drop=0.1", "unknown key" },
	};
	const struct impair_cfg sentinel = { 1, 2, 3, 4, 5 };

	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct impair_cfg c = sentinel;
		char err[200];

		if (impair_parse(&c, bad[i].spec, err, sizeof(err)) != -HAL_EINVAL)
			fail_msg("'%s' was accepted", bad[i].spec);
		if (!strstr(err, bad[i].must_mention))
			fail_msg("'%s': message '%s' does not say '%s'", bad[i].spec, err,
				 bad[i].must_mention);
		assert_null(strchr(err, '\n'));
		assert_memory_equal(&c, &sentinel, sizeof(c));
		assert_int_equal(impair_parse(&c, bad[i].spec, NULL, 0), -HAL_EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prng_matches_reference),
		cmocka_unit_test(test_measured_rates_match_config),
		cmocka_unit_test(test_small_rates_within_binomial_band),
		cmocka_unit_test(test_same_seed_same_decisions),
		cmocka_unit_test(test_rates_do_not_shift_each_other),
		cmocka_unit_test(test_zero_config_passes_everything_in_order),
		cmocka_unit_test(test_corrupt_flips_one_bit_of_a_copy),
		cmocka_unit_test(test_reorder_swaps_adjacent_and_flush_releases),
		cmocka_unit_test(test_dup_emits_identical_copies),
		cmocka_unit_test(test_drop_all_and_oversized_frames),
		cmocka_unit_test(test_parse_accepts_good_specs),
		cmocka_unit_test(test_parse_rejects_bad_specs_with_a_message),
	};

	return cmocka_run_group_tests_name("impair", tests, NULL, NULL);
}
