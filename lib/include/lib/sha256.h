/* SHA-256 (FIPS 180-4 section 6.2), portable C: used by the loader, the
 * firmware and the host tool alike. */
#ifndef LIB_SHA256_H
#define LIB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32u

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;            /* message length so far */
	uint8_t block[64];
	uint32_t fill;             /* bytes in block */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);
void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

#endif
