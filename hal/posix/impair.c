/* Seeded link impairment (see impair.h for the decision order). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hal/errno.h"
#include "impair.h"

/* ---- PRNG ---------------------------------------------------------------
 * xoshiro256** seeded through splitmix64, both as defined by Blackman &
 * Vigna (2018): splitmix64 spreads a 64-bit seed over the 256-bit state and
 * cannot produce the all-zero state xoshiro must avoid.  Only fixed-width
 * integer arithmetic, so the stream is identical on every machine. */

static uint64_t rotl64(uint64_t x, unsigned k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void impair_rng_seed(struct impair_rng *r, uint64_t seed)
{
	for (unsigned i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

uint64_t impair_rng_next(struct impair_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl64(s[3], 45);
	return result;
}

/* Uniform in [0, n) for n < 2^32 from the top 32 bits (multiply-shift; the
 * bias is below n / 2^32, under 0.03 % for ppm draws). */
static uint32_t rng_below(struct impair_rng *r, uint32_t n)
{
	return (uint32_t)(((impair_rng_next(r) >> 32) * n) >> 32);
}

/* ---- configuration ------------------------------------------------------ */

/* Values are echoed back in messages, bounded so a message stays one line. */
#define SHOWN(n) (int)((n) > 40 ? 40 : (n))

__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

enum rate_result { RATE_OK, RATE_NOT_A_NUMBER, RATE_ABOVE_ONE, RATE_BELOW_PPM };

/* Exact decimal parse (no strtod: locale- and libm-free), value kept in
 * units of 1e-9 so that both 0.000001 and 0.0001% land exactly on 1 ppm. */
static enum rate_result parse_rate(const char *s, size_t n, uint32_t *ppm)
{
	const uint64_t nano = 1000000000ull;
	uint64_t whole = 0, frac = 0, scale = nano / 10, v, limit;
	size_t i = 0, digits = 0;
	int percent = 0;

	if (n > 0 && s[n - 1] == '%') {
		percent = 1;
		n--;
	}
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
		if (whole <= 1000)
			whole = whole * 10 + (uint64_t)(s[i] - '0');
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
			frac += (uint64_t)(s[i] - '0') * scale;
			scale /= 10;
		}
	}
	if (digits == 0 || i != n)
		return RATE_NOT_A_NUMBER;
	if (whole > 1000)
		whole = 1001;   /* out of range either way; keeps v from overflowing */
	v = whole * nano + frac;
	limit = percent ? 100 * nano : nano;
	if (v > limit)
		return RATE_ABOVE_ONE;
	/* fraction: ppm = v / 1000; percent: ppm = v * 1e4 / 1e9 = v / 1e5 */
	if (percent)
		*ppm = (uint32_t)((v + 50000) / 100000);
	else
		*ppm = (uint32_t)((v + 500) / 1000);
	if (v != 0 && *ppm == 0)
		return RATE_BELOW_PPM;
	return RATE_OK;
}

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	size_t i = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n)
		return -1;
	for (; i < n; i++) {
		unsigned d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned)(s[i] - 'A' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

enum impair_key { KEY_DROP, KEY_DUP, KEY_REORDER, KEY_CORRUPT, KEY_SEED, KEY_COUNT };

static const char *const key_names[KEY_COUNT] = {
	[KEY_DROP] = "drop",
	[KEY_DUP] = "dup",
	[KEY_REORDER] = "reorder",
	[KEY_CORRUPT] = "corrupt",
	[KEY_SEED] = "seed",
};

static uint32_t *rate_field(struct impair_cfg *c, enum impair_key k)
{
	switch (k) {
	case KEY_DROP: return &c->drop_ppm;
	case KEY_DUP: return &c->dup_ppm;
	case KEY_REORDER: return &c->reorder_ppm;
	case KEY_CORRUPT: return &c->corrupt_ppm;
	default: return NULL;
	}
}

int impair_parse(struct impair_cfg *c, const char *spec, char *err, size_t errlen)
{
	struct impair_cfg out = { 0 };
	unsigned seen = 0;
	const char *p = spec;

	if (err && errlen)
		err[0] = '\0';
	if (!spec) {
		set_err(err, errlen, "no impairment spec");
		return -HAL_EINVAL;
	}
	while (*p) {
		const char *end = strchr(p, ',');
		size_t itemlen = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', itemlen);
		size_t keylen = eq ? (size_t)(eq - p) : itemlen;
		const char *val = eq ? eq + 1 : p + itemlen;
		size_t vallen = (size_t)(p + itemlen - val);
		unsigned k;

		if (itemlen == 0 || (end && end[1] == '\0')) {
			set_err(err, errlen, "empty item in impairment spec (stray ',')");
			return -HAL_EINVAL;
		}
		for (k = 0; k < KEY_COUNT; k++)
			if (strlen(key_names[k]) == keylen && !memcmp(key_names[k], p, keylen))
				break;
		if (k == KEY_COUNT) {
			set_err(err, errlen, "unknown key '%.*s' in impairment spec; "
				"use drop, dup, reorder, corrupt or seed", SHOWN(keylen), p);
			return -HAL_EINVAL;
		}
		if (!eq || vallen == 0) {
			set_err(err, errlen, "%.*s has no value; write key=value, e.g. %.*s=%s",
				SHOWN(keylen), p, SHOWN(keylen), p, k == KEY_SEED ? "42" : "0.01");
			return -HAL_EINVAL;
		}
		if (seen & (1u << k)) {
			set_err(err, errlen, "%.*s given twice in impairment spec", SHOWN(keylen), p);
			return -HAL_EINVAL;
		}
		seen |= 1u << k;

		if (k == KEY_SEED) {
			if (parse_u64(val, vallen, &out.seed) < 0) {
				set_err(err, errlen, "%.*s=%.*s is not a 64-bit number; "
					"give decimal or 0x-prefixed hex",
					SHOWN(keylen), p, SHOWN(vallen), val);
				return -HAL_EINVAL;
			}
		} else {
			switch (parse_rate(val, vallen, rate_field(&out, (enum impair_key)k))) {
			case RATE_OK:
				break;
			case RATE_NOT_A_NUMBER:
				set_err(err, errlen, "%.*s=%.*s is not a rate; give a fraction 0..1 "
					"(0.01) or a percentage (1%%)",
					SHOWN(keylen), p, SHOWN(vallen), val);
				return -HAL_EINVAL;
			case RATE_ABOVE_ONE:
				set_err(err, errlen, "%.*s=%.*s is above 1; rates are fractions 0..1 "
					"or percentages up to 100%%",
					SHOWN(keylen), p, SHOWN(vallen), val);
				return -HAL_EINVAL;
			case RATE_BELOW_PPM:
				set_err(err, errlen, "%.*s=%.*s is below the 1 ppm resolution; "
					"use 0 or at least 0.000001",
					SHOWN(keylen), p, SHOWN(vallen), val);
				return -HAL_EINVAL;
			}
		}
		p += itemlen + (end ? 1 : 0);
	}
	*c = out;
	return 0;
}

int impair_format(const struct impair_cfg *c, char *buf, size_t len)
{
	return snprintf(buf, len,
			"drop=%" PRIu32 ".%06" PRIu32 ",dup=%" PRIu32 ".%06" PRIu32
			",reorder=%" PRIu32 ".%06" PRIu32 ",corrupt=%" PRIu32 ".%06" PRIu32
			",seed=%" PRIu64,
			c->drop_ppm / IMPAIR_PPM_ONE, c->drop_ppm % IMPAIR_PPM_ONE,
			c->dup_ppm / IMPAIR_PPM_ONE, c->dup_ppm % IMPAIR_PPM_ONE,
			c->reorder_ppm / IMPAIR_PPM_ONE, c->reorder_ppm % IMPAIR_PPM_ONE,
			c->corrupt_ppm / IMPAIR_PPM_ONE, c->corrupt_ppm % IMPAIR_PPM_ONE,
			c->seed);
}

int impair_cfg_active(const struct impair_cfg *c)
{
	return c->drop_ppm || c->dup_ppm || c->reorder_ppm || c->corrupt_ppm;
}

/* ---- the pipeline ------------------------------------------------------- */

void impair_init(struct impair *im, const struct impair_cfg *c)
{
	memset(im, 0, sizeof(*im));
	im->cfg = *c;
	impair_rng_seed(&im->rng, c->seed);
}

static unsigned emit_copies(impair_emit_fn emit, void *ctx, const void *f, size_t len,
			    unsigned copies)
{
	for (unsigned i = 0; i < copies; i++)
		emit(ctx, f, len);
	return copies;
}

unsigned impair_apply(struct impair *im, const void *frame, size_t len,
		      impair_emit_fn emit, void *ctx)
{
	const struct impair_cfg *c = &im->cfg;
	/* Every frame consumes the same five draws whatever the rates, so one
	 * seed gives the same per-frame decisions for each impairment even when
	 * another rate changes. */
	uint32_t drop = rng_below(&im->rng, IMPAIR_PPM_ONE);
	uint32_t corrupt = rng_below(&im->rng, IMPAIR_PPM_ONE);
	uint32_t dup = rng_below(&im->rng, IMPAIR_PPM_ONE);
	uint32_t reorder = rng_below(&im->rng, IMPAIR_PPM_ONE);
	uint64_t bit_draw = impair_rng_next(&im->rng) >> 32;
	int copyable = len <= HAL_ETH_MAX_FRAME;
	const void *out = frame;
	unsigned copies = 1, n;

	im->stats.frames++;
	if (drop < c->drop_ppm) {
		im->stats.dropped++;
		return 0;
	}
	if (corrupt < c->corrupt_ppm && copyable && len > 0) {
		/* bit_draw < 2^32 and len * 8 < 2^17, so the product fits */
		uint64_t bit = (bit_draw * (uint64_t)(len * 8)) >> 32;

		memcpy(im->scratch, frame, len);
		im->scratch[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		out = im->scratch;
		im->stats.corrupted++;
	}
	if (dup < c->dup_ppm) {
		copies = 2;
		im->stats.duplicated++;
	}
	if (reorder < c->reorder_ppm && copyable && !im->held) {
		if (len)
			memcpy(im->held_frame, out, len);
		im->held = 1;
		im->held_len = len;
		im->held_copies = copies;
		return 0;
	}
	n = emit_copies(emit, ctx, out, len, copies);
	if (im->held) {
		im->held = 0;
		im->stats.reordered++;
		n += emit_copies(emit, ctx, im->held_frame, im->held_len, im->held_copies);
	}
	return n;
}

unsigned impair_flush(struct impair *im, impair_emit_fn emit, void *ctx)
{
	if (!im->held)
		return 0;
	im->held = 0;
	return emit_copies(emit, ctx, im->held_frame, im->held_len, im->held_copies);
}
