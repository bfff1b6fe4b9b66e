/* Seeded link impairment: drop, duplicate, reorder and corrupt frames.
 *
 * Linux netem is not available on the machines we test on, so fault
 * injection lives here, between the firmware and the switch.  Every decision
 * comes from a PRNG of our own with a fixed per-frame draw pattern, so a seed
 * reproduces the same impairment on every machine and libc, and changing one
 * rate never shifts the decisions made for the others.
 *
 * One call to impair_apply() decides for one frame, in this order:
 *
 *   drop     the frame disappears (nothing else applies to it)
 *   corrupt  one random bit is flipped, in a private copy
 *   dup      the (possibly corrupted) frame is emitted twice
 *   reorder  the frame is held back and emitted right after the next frame
 *            that is emitted (the two swap places); impair_flush() releases
 *            it when no such frame comes.  At most one frame is held: a frame
 *            drawn for reorder while another is held is emitted normally, so
 *            the effective swap rate is r/(1+r) for a configured rate r.
 *
 * Frames longer than HAL_ETH_MAX_FRAME can still be dropped or duplicated but
 * are never corrupted or held (no room to copy them).  Empty frames are never
 * corrupted.
 */
#ifndef POSIX_IMPAIR_H
#define POSIX_IMPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "hal/eth.h"

#define IMPAIR_PPM_ONE 1000000u  /* rate 1.0 */

struct impair_cfg {
	uint32_t drop_ppm, dup_ppm, reorder_ppm, corrupt_ppm;
	uint64_t seed;
};

struct impair_stats {
	uint64_t frames;      /* frames offered to impair_apply() */
	uint64_t dropped;
	uint64_t duplicated;  /* frames emitted twice */
	uint64_t reordered;   /* held frames released after a later frame */
	uint64_t corrupted;
};

/* xoshiro256** state (Blackman & Vigna, "Scrambled linear pseudorandom number
 * generators", 2018); exposed so tests can check it against the paper's
 * definition. */
struct impair_rng {
	uint64_t s[4];
};

typedef void (*impair_emit_fn)(void *ctx, const void *frame, size_t len);

struct impair {
	struct impair_cfg cfg;
	struct impair_rng rng;
	struct impair_stats stats;
	int held;                 /* non-zero while held_frame is occupied */
	unsigned held_copies;     /* 2 when the held frame was also duplicated */
	size_t held_len;
	uint8_t held_frame[HAL_ETH_MAX_FRAME];
	uint8_t scratch[HAL_ETH_MAX_FRAME];  /* corrupted copy of the current frame */
};

/* Parse "drop=0.01,dup=0.5%,reorder=0.02,corrupt=0.001,seed=42".  Rates are
 * fractions 0..1 or percentages with a '%' suffix, resolved to 1 ppm; the
 * seed is a decimal or 0x-prefixed 64-bit number (default 0).  Keys may be
 * omitted (rate 0); the empty string is a valid all-zero spec.  Returns 0, or
 * -HAL_EINVAL with a message naming what to fix in err (when errlen > 0);
 * *c is only written on success. */
int impair_parse(struct impair_cfg *c, const char *spec, char *err, size_t errlen);

/* The config in the syntax impair_parse() reads back unchanged.  Returns the
 * snprintf() length. */
int impair_format(const struct impair_cfg *c, char *buf, size_t len);

/* Non-zero when any rate is non-zero. */
int impair_cfg_active(const struct impair_cfg *c);

void impair_init(struct impair *im, const struct impair_cfg *c);

/* Decide for one frame; emit is called for every frame that leaves, the
 * current one and possibly a released held one.  The caller's buffer is never
 * written.  Returns the number of emit calls (0..4: a duplicated frame
 * followed by a duplicated held frame). */
unsigned impair_apply(struct impair *im, const void *frame, size_t len,
		      impair_emit_fn emit, void *ctx);

/* Release the held frame, if any (not counted as reordered: nothing overtook
 * it).  Returns the number of emit calls. */
unsigned impair_flush(struct impair *im, impair_emit_fn emit, void *ctx);

static inline int impair_holding(const struct impair *im)
{
	return im->held;
}

void impair_rng_seed(struct impair_rng *r, uint64_t seed);
uint64_t impair_rng_next(struct impair_rng *r);

#endif
