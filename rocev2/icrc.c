/* RoCEv2 invariant CRC (IBA A17.3.3, RoCEv2 annex; rxe_icrc.c).
 *
 * The ICRC is CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) over
 *
 *   8 bytes of 0xFF     the masked LRH that RoCE does not carry
 *   IPv4 header         TOS, TTL and header checksum as all ones
 *   UDP header          checksum as all ones
 *   BTH                 byte 4 (FECN, BECN, resv6a) as all ones
 *   extension headers, payload, pad
 *
 * inverted at the end.  The masked fields are the ones routers and
 * switches may rewrite in flight; everything else is invariant end to end.
 *
 * Convention: the state here is the raw shift register without the
 * implicit pre/post inversion of zlib's crc32() (Linux crc32_le).  Running
 * the 8 bytes of 0xFF through a register preset to all ones leaves
 * 0xDEBB20E3 (= ~zlib.crc32(b'\xff' * 8)), so we start there and never
 * touch the LRH.
 *
 * Only the 40 header bytes whose masks differ are copied; the rest of the
 * packet is read in place.  The register runs in lib/crc32.c (slicing-by-8,
 * or the AArch64 CRC32 instructions where present).
 */
#include <string.h>

#include "internal.h"
#include "lib/crc32.h"

#define ICRC_SEED        0xdebb20e3u   /* register after 8 x 0xFF from all ones */
#define ICRC_MASKED_LEN  (IPV4_HLEN + UDP_HLEN + BTH_LEN)   /* 40 */

/* Byte offsets, from the start of the IPv4 header, of the fields the ICRC
 * treats as all ones (IBA A17.3.3; RFC 791 / RFC 768 layouts). */
static const uint8_t icrc_masked_bytes[] = {
	1,                                  /* IPv4 TOS (DSCP/ECN: rewritten by routers) */
	8,                                  /* IPv4 TTL (decremented per hop) */
	10, 11,                             /* IPv4 header checksum (follows TTL) */
	IPV4_HLEN + 6, IPV4_HLEN + 7,       /* UDP checksum (optional, may be filled in) */
	IPV4_HLEN + UDP_HLEN + 4,           /* BTH FECN/BECN/resv6a (congestion marking) */
};

uint32_t rocev2_icrc(const uint8_t *ip, size_t len)
{
	/* 8-aligned so that the masked header goes through the engine in
	 * five whole words, without a bytewise head or tail. */
	_Alignas(8) uint8_t hdr[ICRC_MASKED_LEN];
	uint32_t crc;
	unsigned i;

	if (len < sizeof(hdr)) {
		/* Shorter than the masked headers: only a caller's mistake, but
		 * mask what is there rather than read past it. */
		memcpy(hdr, ip, len);
		for (i = 0; i < sizeof(icrc_masked_bytes); i++)
			if (icrc_masked_bytes[i] < len)
				hdr[icrc_masked_bytes[i]] = 0xff;
		return ~crc32_ieee_raw(ICRC_SEED, hdr, len);
	}
	memcpy(hdr, ip, sizeof(hdr));
	for (i = 0; i < sizeof(icrc_masked_bytes); i++)
		hdr[icrc_masked_bytes[i]] = 0xff;
	crc = crc32_ieee_raw(ICRC_SEED, hdr, sizeof(hdr));
	crc = crc32_ieee_raw(crc, ip + sizeof(hdr), len - sizeof(hdr));
	return ~crc;
}
