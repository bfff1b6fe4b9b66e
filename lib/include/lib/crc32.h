/* CRC-32 (IEEE 802.3 polynomial, reflected, 0xEDB88320): the CRC behind the
 * RoCEv2 ICRC (IBA A16.7.3 / RoCEv2 annex) and the Ethernet FCS.
 * Table-driven, the table built once by rocev2_crc32_init() (1 KiB). */
#ifndef ROCEV2_CRC32_H
#define ROCEV2_CRC32_H

#include <stddef.h>
#include <stdint.h>

void rocev2_crc32_init(void);
/* Continue a CRC: pass the previous state (start with 0xffffffff) and
 * finish with ~state.  rocev2_crc32() does both for one buffer. */
uint32_t rocev2_crc32_update(uint32_t state, const void *buf, size_t len);
uint32_t rocev2_crc32(const void *buf, size_t len);

#endif
