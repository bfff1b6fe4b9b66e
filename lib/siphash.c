/* SipHash-2-4 (Aumasson, Bernstein: "SipHash: a fast short-input PRF",
 * 2012): 2 compression rounds per 8-byte word, 4 finalisation rounds. */
#include "lib/siphash.h"

static uint64_t sip_rotl(uint64_t x, unsigned b)
{
	return x << b | x >> (64u - b);
}

static uint64_t sip_le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = sip_rotl(v[1], 13);
	v[1] ^= v[0];
	v[0] = sip_rotl(v[0], 32);
	v[2] += v[3];
	v[3] = sip_rotl(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = sip_rotl(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = sip_rotl(v[1], 17);
	v[1] ^= v[2];
	v[2] = sip_rotl(v[2], 32);
}

uint64_t siphash24(const uint8_t key[SIPHASH_KEY_LEN], const void *data, size_t len)
{
	const uint8_t *msg = data;
	uint64_t k0 = sip_le64(key), k1 = sip_le64(key + 8);
	uint64_t v[4] = {
		0x736f6d6570736575ull ^ k0, 0x646f72616e646f6dull ^ k1,
		0x6c7967656e657261ull ^ k0, 0x7465646279746573ull ^ k1,
	};
	uint64_t m, last = (uint64_t)(len & 0xffu) << 56;
	size_t i, j;

	for (i = 0; i + 8u <= len; i += 8u) {
		m = sip_le64(msg + i);
		v[3] ^= m;
		sip_round(v);
		sip_round(v);
		v[0] ^= m;
	}
	for (j = 0; i + j < len; j++)
		last |= (uint64_t)msg[i + j] << (8u * j);
	v[3] ^= last;
	sip_round(v);
	sip_round(v);
	v[0] ^= last;
	v[2] ^= 0xffu;
	for (j = 0; j < 4u; j++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

