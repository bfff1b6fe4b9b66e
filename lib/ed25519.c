/* Ed25519 verification (RFC 8032 5.1), written for this project.
 *
 * Field GF(p), p = 2^255 - 19: ten signed 32-bit limbs of alternating 26
 * and 25 bits (limb i weighs 2^ceil(25.5 i)), so a product of two limbs
 * fits 64 bits on the 32-bit A15 as well as the A72 and one multiply is
 * 100 limb products.  A product term of limbs i + j >= 10 wraps with
 * 2^255 = 19 (mod p); two odd limbs' product weighs twice the even
 * position it lands on.  Every operation ends with one carry pass, which
 * keeps each limb below 2^26 (plus a small spill into limb 1), so sums of
 * ten products stay below 2^61.
 *
 * Curve: -x^2 + y^2 = 1 + d x^2 y^2, d = -121665/121666 (RFC 8032 5.1),
 * points in extended coordinates (X:Y:Z:T), x = X/Z, y = Y/Z, xy = T/Z
 * (Hisil, Wong, Carter, Dawson 2008: "add-2008-hwcd-3", "dbl-2008-hwcd"
 * with a = -1).  Verification computes [S]B - [k]A with one shared
 * doubling chain (Straus) and compares its encoding with R.
 *
 * Not constant time, on purpose: the key, the message and the signature
 * are all public (lib/ed25519.h). */
#include <string.h>

#include "lib/ed25519.h"
#include "lib/sha512.h"

typedef struct {
	int32_t v[10];
} fe;

struct ge {
	fe X, Y, Z, T;
};

static unsigned limb_bits(unsigned i)
{
	return 26u - (i & 1u);
}

/* One carry pass from 64-bit sums: limbs 0, 2..9 end in [0, 2^w), limb 1
 * may spill a little over 2^25.  Floor division by a power of two
 * (arithmetic shift), so negative sums carry correctly too. */
static void fe_carry(fe *o, int64_t h[10])
{
	int64_t c;
	unsigned i, w;

	for (i = 0; i < 10; i++) {
		w = limb_bits(i);
		c = h[i] >> w;
		h[i] -= c * ((int64_t)1 << w);
		if (i < 9)
			h[i + 1] += c;
		else
			h[0] += 19 * c;
	}
	c = h[0] >> 26;
	h[0] -= c * ((int64_t)1 << 26);
	h[1] += c;
	for (i = 0; i < 10; i++)
		o->v[i] = (int32_t)h[i];
}

static void fe_set(fe *o, int32_t small)
{
	memset(o, 0, sizeof(*o));
	o->v[0] = small;
}

static void fe_add(fe *o, const fe *f, const fe *g)
{
	int64_t h[10];
	unsigned i;

	for (i = 0; i < 10; i++)
		h[i] = (int64_t)f->v[i] + g->v[i];
	fe_carry(o, h);
}

static void fe_sub(fe *o, const fe *f, const fe *g)
{
	int64_t h[10];
	unsigned i;

	for (i = 0; i < 10; i++)
		h[i] = (int64_t)f->v[i] - g->v[i];
	fe_carry(o, h);
}

static void fe_neg(fe *o, const fe *f)
{
	fe z;

	fe_set(&z, 0);
	fe_sub(o, &z, f);
}

static void fe_mul(fe *o, const fe *f, const fe *g)
{
	int64_t h[10] = { 0 }, p;
	unsigned i, j, k;

	for (i = 0; i < 10; i++)
		for (j = 0; j < 10; j++) {
			p = (int64_t)f->v[i] * g->v[j];
			if (i & j & 1u)
				p *= 2;
			k = i + j;
			if (k >= 10) {
				k -= 10;
				p *= 19;
			}
			h[k] += p;
		}
	fe_carry(o, h);
}

static void fe_sq(fe *o, const fe *f)
{
	fe_mul(o, f, f);
}

/* The canonical value in [0, p) as 32 little-endian bytes (bit 255 zero). */
static void fe_tobytes(uint8_t s[32], const fe *f)
{
	int64_t h[10], c, q;
	uint64_t acc = 0;
	unsigned i, w, bits = 0, k = 0;

	for (i = 0; i < 10; i++)
		h[i] = f->v[i];
	/* Carry with wrap until nothing leaves limb 9: then every limb is in
	 * [0, 2^w) and the value in [0, 2^255); each wrap moves it by p. */
	do {
		for (i = 0, c = 0; i < 10; i++) {
			w = limb_bits(i);
			h[i] += c;
			c = h[i] >> w;
			h[i] -= c * ((int64_t)1 << w);
		}
		h[0] += 19 * c;
	} while (c != 0);
	/* value >= p exactly when value + 19 reaches 2^255 */
	for (i = 0, q = 19; i < 10; i++)
		q = (h[i] + q) >> limb_bits(i);
	h[0] += 19 * q;
	for (i = 0, c = 0; i < 10; i++) {
		w = limb_bits(i);
		h[i] += c;
		c = h[i] >> w;
		h[i] -= c * ((int64_t)1 << w);   /* the carry out of limb 9 is q * 2^255 */
	}
	for (i = 0; i < 10; i++) {
		acc |= (uint64_t)h[i] << bits;
		bits += limb_bits(i);
		while (bits >= 8) {
			s[k++] = (uint8_t)acc;
			acc >>= 8;
			bits -= 8;
		}
	}
	s[31] = (uint8_t)acc;
}

/* The low 255 bits of s (bit 255 is the caller's: the sign of x). */
static void fe_frombytes(fe *f, const uint8_t s[32])
{
	uint64_t acc = 0;
	unsigned i, w, bits = 0, k = 0;

	for (i = 0; i < 10; i++) {
		w = limb_bits(i);
		while (bits < w) {
			acc |= (uint64_t)(k == 31 ? s[k] & 0x7f : s[k]) << bits;
			k++;
			bits += 8;
		}
		f->v[i] = (int32_t)(acc & (((uint64_t)1 << w) - 1));
		acc >>= w;
		bits -= w;
	}
}

static int fe_iszero(const fe *f)
{
	uint8_t s[32], any = 0;
	unsigned i;

	fe_tobytes(s, f);
	for (i = 0; i < 32; i++)
		any |= s[i];
	return any == 0;
}

static int fe_equal(const fe *f, const fe *g)
{
	fe d;

	fe_sub(&d, f, g);
	return fe_iszero(&d);
}

static int fe_isodd(const fe *f)
{
	uint8_t s[32];

	fe_tobytes(s, f);
	return s[0] & 1;
}

/* f^e for e = 2^(8*31) * top + (2^(8*31) - 256) + low, i.e. the bytes
 * {low, 0xff x 30, top} little-endian: p - 2, (p - 5) / 8 and (p - 1) / 4
 * all have that form.  Square and multiply from the top bit. */
static void fe_pow(fe *o, const fe *f, uint8_t low, uint8_t top)
{
	fe r;
	int bit;
	uint8_t b;

	fe_set(&r, 1);
	for (bit = 255; bit >= 0; bit--) {
		b = bit >= 248 ? top : bit < 8 ? low : 0xff;
		fe_sq(&r, &r);
		if (b >> (bit & 7) & 1)
			fe_mul(&r, &r, f);
	}
	*o = r;
}

static void fe_invert(fe *o, const fe *f)
{
	fe_pow(o, f, 0xeb, 0x7f);          /* p - 2 = 2^255 - 21 (Fermat) */
}

/* ---- constants, computed once from their definitions ---------------- */

static struct {
	int ready;
	fe d, d2, sqrtm1;
	struct ge B;
} C;

static int ge_decode(struct ge *P, const uint8_t s[32]);

static void constants(void)
{
	/* RFC 8032 5.1: B's y = 4/5, encoded 0x58 0x66 ... 0x66 with x even */
	uint8_t b[32];
	fe t;

	if (C.ready)
		return;
	fe_set(&t, 121666);
	fe_invert(&t, &t);
	fe_set(&C.d, -121665);
	fe_mul(&C.d, &C.d, &t);
	fe_add(&C.d2, &C.d, &C.d);
	fe_set(&t, 2);
	fe_pow(&C.sqrtm1, &t, 0xfb, 0x1f);   /* 2^((p - 1) / 4) = sqrt(-1) */
	memset(b, 0x66, sizeof(b));
	b[0] = 0x58;
	C.ready = 1;
	ge_decode(&C.B, b);
}

/* ---- points ---------------------------------------------------------- */

static void ge_identity(struct ge *P)
{
	fe_set(&P->X, 0);
	fe_set(&P->Y, 1);
	fe_set(&P->Z, 1);
	fe_set(&P->T, 0);
}

static void ge_add(struct ge *o, const struct ge *P, const struct ge *Q)
{
	fe a, b, c, d, e, f, g, h, t;

	fe_sub(&a, &P->Y, &P->X);
	fe_sub(&t, &Q->Y, &Q->X);
	fe_mul(&a, &a, &t);
	fe_add(&b, &P->Y, &P->X);
	fe_add(&t, &Q->Y, &Q->X);
	fe_mul(&b, &b, &t);
	fe_mul(&c, &P->T, &Q->T);
	fe_mul(&c, &c, &C.d2);
	fe_mul(&d, &P->Z, &Q->Z);
	fe_add(&d, &d, &d);
	fe_sub(&e, &b, &a);
	fe_sub(&f, &d, &c);
	fe_add(&g, &d, &c);
	fe_add(&h, &b, &a);
	fe_mul(&o->X, &e, &f);
	fe_mul(&o->Y, &g, &h);
	fe_mul(&o->T, &e, &h);
	fe_mul(&o->Z, &f, &g);
}

/* dbl-2008-hwcd, a = -1, every term negated (the products are unchanged) */
static void ge_double(struct ge *o, const struct ge *P)
{
	fe a, b, c, e, f, g, h;

	fe_sq(&a, &P->X);
	fe_sq(&b, &P->Y);
	fe_sq(&c, &P->Z);
	fe_add(&c, &c, &c);
	fe_add(&h, &a, &b);
	fe_add(&e, &P->X, &P->Y);
	fe_sq(&e, &e);
	fe_sub(&e, &h, &e);
	fe_sub(&g, &a, &b);
	fe_add(&f, &c, &g);
	fe_mul(&o->X, &e, &f);
	fe_mul(&o->Y, &g, &h);
	fe_mul(&o->T, &e, &h);
	fe_mul(&o->Z, &f, &g);
}

static void ge_neg(struct ge *o, const struct ge *P)
{
	fe_neg(&o->X, &P->X);
	o->Y = P->Y;
	o->Z = P->Z;
	fe_neg(&o->T, &P->T);
}

static void ge_encode(uint8_t s[32], const struct ge *P)
{
	fe zi, x, y;

	fe_invert(&zi, &P->Z);
	fe_mul(&x, &P->X, &zi);
	fe_mul(&y, &P->Y, &zi);
	fe_tobytes(s, &y);
	s[31] |= (uint8_t)(fe_isodd(&x) << 7);
}

/* RFC 8032 5.1.3; 0 or -1 (not a point, or a non-canonical y). */
static int ge_decode(struct ge *P, const uint8_t s[32])
{
	fe u, v, v3, x, t;
	unsigned i, sign = s[31] >> 7, ones = 1;

	/* y >= p: bytes {>= 0xed, 0xff x 30, 0x7f} */
	for (i = 1; i < 31; i++)
		ones &= s[i] == 0xff;
	if (ones && (s[31] & 0x7f) == 0x7f && s[0] >= 0xed)
		return -1;
	fe_frombytes(&P->Y, s);
	fe_set(&P->Z, 1);
	/* x^2 = u / v, u = y^2 - 1, v = d y^2 + 1 */
	fe_sq(&u, &P->Y);
	fe_mul(&v, &u, &C.d);
	fe_sub(&u, &u, &P->Z);
	fe_add(&v, &v, &P->Z);
	/* candidate x = u v^3 (u v^7)^((p - 5) / 8) */
	fe_sq(&v3, &v);
	fe_mul(&v3, &v3, &v);
	fe_sq(&t, &v3);
	fe_mul(&t, &t, &v);
	fe_mul(&t, &t, &u);
	fe_pow(&t, &t, 0xfd, 0x0f);
	fe_mul(&x, &t, &v3);
	fe_mul(&x, &x, &u);
	/* v x^2 = u: x; v x^2 = -u: x sqrt(-1); else no square root */
	fe_sq(&t, &x);
	fe_mul(&t, &t, &v);
	if (!fe_equal(&t, &u)) {
		fe_neg(&u, &u);
		if (!fe_equal(&t, &u))
			return -1;
		fe_mul(&x, &x, &C.sqrtm1);
	}
	if (fe_iszero(&x) && sign)
		return -1;
	if ((unsigned)fe_isodd(&x) != sign)
		fe_neg(&x, &x);
	P->X = x;
	fe_mul(&P->T, &x, &P->Y);
	return 0;
}

static int ge_is_identity(const struct ge *P)
{
	return fe_iszero(&P->X) && fe_equal(&P->Y, &P->Z);
}

/* ---- scalars mod L = 2^252 + 27742317777372353535851937790883648493 ---- */

static const uint8_t L_bytes[32] = {
	0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
	0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
};

/* a >= b, 32-byte little-endian */
static int sc_ge(const uint8_t a[32], const uint8_t b[32])
{
	int i;

	for (i = 31; i >= 0; i--)
		if (a[i] != b[i])
			return a[i] > b[i];
	return 1;
}

/* r = 64-byte little-endian h mod L, one bit at a time from the top:
 * r = 2 r + bit, minus L when it reaches L (r < L < 2^253 throughout). */
static void sc_reduce(uint8_t r[32], const uint8_t h[64])
{
	unsigned i, j, carry, borrow;
	int bit;

	memset(r, 0, 32);
	for (bit = 511; bit >= 0; bit--) {
		carry = h[bit / 8] >> (bit % 8) & 1u;
		for (j = 0; j < 32; j++) {
			unsigned v = (unsigned)r[j] << 1 | carry;

			r[j] = (uint8_t)v;
			carry = v >> 8;
		}
		if (!sc_ge(r, L_bytes))
			continue;
		for (i = 0, borrow = 0; i < 32; i++) {
			int v = (int)r[i] - L_bytes[i] - (int)borrow;

			borrow = v < 0;
			r[i] = (uint8_t)(v + (borrow ? 256 : 0));
		}
	}
}

static unsigned sc_bit(const uint8_t s[32], unsigned i)
{
	return s[i / 8] >> (i % 8) & 1u;
}

int ed25519_pubkey_check(const uint8_t pub[ED25519_PUBKEY_LEN])
{
	struct ge A;

	constants();
	if (ge_decode(&A, pub) != 0)
		return -1;
	ge_double(&A, &A);
	ge_double(&A, &A);
	ge_double(&A, &A);
	return ge_is_identity(&A) ? -1 : 0;   /* [8]A = O: small order */
}

int ed25519_verify(const uint8_t sig[ED25519_SIG_LEN], const void *msg, size_t len,
		   const uint8_t pub[ED25519_PUBKEY_LEN])
{
	struct ge A, table[4], acc;
	struct sha512 h;
	uint8_t hk[64], k[32], rc[32];
	const uint8_t *S = sig + 32;
	int i;
	unsigned sel;

	constants();
	if (sc_ge(S, L_bytes))            /* RFC 8032 5.1.7 step 1: S < L */
		return -1;
	if (ed25519_pubkey_check(pub) != 0 || ge_decode(&A, pub) != 0)
		return -1;
	/* k = SHA-512(R || A || M) mod L (step 2) */
	sha512_init(&h);
	sha512_update(&h, sig, 32);
	sha512_update(&h, pub, 32);
	sha512_update(&h, msg, len);
	sha512_final(&h, hk);
	sc_reduce(k, hk);
	/* step 3, as [S]B - [k]A == R: table[bits of S | bits of k << 1] */
	ge_identity(&table[0]);
	table[1] = C.B;
	ge_neg(&table[2], &A);
	ge_add(&table[3], &table[1], &table[2]);
	ge_identity(&acc);
	for (i = 255; i >= 0; i--) {
		ge_double(&acc, &acc);
		sel = sc_bit(S, (unsigned)i) | sc_bit(k, (unsigned)i) << 1;
		if (sel)
			ge_add(&acc, &acc, &table[sel]);
	}
	ge_encode(rc, &acc);
	return memcmp(rc, sig, 32) == 0 ? 0 : -1;
}
