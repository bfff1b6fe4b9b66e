/* SipHash-2-4: a keyed 64-bit PRF for short messages (Aumasson, Bernstein,
 * 2012).  The RESUME MAC of the migration extension (rocev2/migrate.c).
 * Key and message bytes as in the paper: the key is k0 || k1 little-endian,
 * the result is the 64-bit value whose little-endian bytes are the paper's
 * output. */
#ifndef LIB_SIPHASH_H
#define LIB_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_LEN 16u

uint64_t siphash24(const uint8_t key[SIPHASH_KEY_LEN], const void *data, size_t len);

#endif
