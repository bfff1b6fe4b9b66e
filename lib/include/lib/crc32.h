/* CRC-32 in its two reflected variants, one implementation for both.
 *
 *   crc32_ieee  IEEE 802.3 polynomial 0x04C11DB7 (reflected 0xEDB88320):
 *               the RoCEv2 ICRC (IBA A17.3.3, rocev2/icrc.c), the Ethernet
 *               FCS, zlib's crc32() and rawx's frame check.
 *   crc32c      Castagnoli polynomial 0x1EDC6F41 (reflected 0x82F63B78):
 *               the migration image (docs/migration-image.md) and the
 *               messages of mnic-traffic.
 *
 * Two conventions:
 *   *_raw(reg, ...)  the bare shift register, no pre/post inversion (what
 *                    the ICRC needs: it starts from a precomputed register
 *                    and inverts once at the end);
 *   crc32_ieee(crc, ...), crc32c(crc, ...)  zlib's convention: start with
 *                    0, pass the previous result to continue a stream.
 *
 * Engines: slicing-by-16 (16 x 1 KiB tables per polynomial, built once on
 * first use, thread-safe); on AArch64 with the CRC32 extension the CRC32X /
 * CRC32CX instructions, which implement exactly these reflected
 * polynomials without inversion.  *_raw uses the best of them.  The ICRC
 * on x86-64 hosts runs ISA-L instead (rocev2/icrc.c). */
#ifndef LIB_CRC32_H
#define LIB_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* An engine on the bare register (the *_raw convention). */
typedef uint32_t crc32_raw_fn(uint32_t reg, const void *buf, size_t len);

uint32_t crc32_ieee_raw(uint32_t reg, const void *buf, size_t len);
uint32_t crc32c_raw(uint32_t reg, const void *buf, size_t len);

/* The table engine on its own, where crc32_ieee_raw runs the CRC32
 * instructions or the ICRC runs ISA-L: cross-checks and figures. */
uint32_t crc32_ieee_raw_table(uint32_t reg, const void *buf, size_t len);

static inline uint32_t crc32_ieee(uint32_t crc, const void *buf, size_t len)
{
	return ~crc32_ieee_raw(~crc, buf, len);
}

static inline uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	return ~crc32c_raw(~crc, buf, len);
}

#endif
