/* SHA-512 (FIPS 180-4 section 6.4), portable C: the hash inside Ed25519
 * (RFC 8032 5.1), used by lib/ed25519.c in the loader and the firmware. */
#ifndef LIB_SHA512_H
#define LIB_SHA512_H

#include <stddef.h>
#include <stdint.h>

#define SHA512_LEN 64u

struct sha512 {
	uint64_t h[8];
	uint64_t bytes;            /* message length so far (< 2^61 bytes) */
	uint8_t block[128];
	uint32_t fill;             /* bytes in block */
};

void sha512_init(struct sha512 *s);
void sha512_update(struct sha512 *s, const void *data, size_t len);
void sha512_final(struct sha512 *s, uint8_t out[SHA512_LEN]);
void sha512(const void *data, size_t len, uint8_t out[SHA512_LEN]);

#endif
