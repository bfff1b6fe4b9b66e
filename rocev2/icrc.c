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
 * packet is read in place.  The register runs, chained over the masked
 * copy and then the packet, in the fastest engine the build has:
 *
 *   x86-64 hosts (POSIX NIC, tests, bench)  ISA-L's crc32_gzip_refl, which
 *       folds with PCLMULQDQ/VPCLMULQDQ (chosen by ISA-L at run time);
 *   AArch64 with the CRC32 extension (A72)  CRC32X, lib/crc32.c;
 *   elsewhere (A15)                         slicing-by-N tables, lib/crc32.c.
 *
 * docs/ARCHITECTURE.md "ICRC" gives the figures behind the choice.
 */
#include <string.h>

#if defined(__x86_64__) && __STDC_HOSTED__
/* ISA-L's crc.h also declares a crc32_ieee, its non-reflected CRC, whose
 * name lib/crc32.h uses for zlib's: keep ISA-L's out of the way. */
#define crc32_ieee isal_crc32_ieee_nonreflected
#include <isa-l/crc.h>
#undef crc32_ieee
#define ICRC_HAVE_ISAL 1
#endif

#include "internal.h"
#include "lib/crc32.h"

#if defined(ICRC_HAVE_ISAL)

/* ISA-L keeps zlib's convention (inverted in, inverted out): undo both to
 * get the bare register. */
static uint32_t icrc_engine_isal(uint32_t reg, const void *buf, size_t len)
{
	return ~crc32_gzip_refl(~reg, buf, len);
}
#define ICRC_ENGINE icrc_engine_isal
#else
#define ICRC_ENGINE crc32_ieee_raw
#endif

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

/* Inline in both entry points so that rocev2_icrc calls its engine
 * directly. */
static inline uint32_t icrc_run(crc32_raw_fn *engine, const uint8_t *ip, size_t len)
{
	/* 8-aligned so that the masked header goes through the engine in
	 * whole words, without a bytewise head. */
	_Alignas(8) uint8_t hdr[ICRC_MASKED_LEN];
	/* A packet shorter than the masked headers is only a caller's
	 * mistake, but mask what is there rather than read past it. */
	size_t n = len < sizeof(hdr) ? len : sizeof(hdr);
	uint32_t crc;
	unsigned i;

	memcpy(hdr, ip, n);
	for (i = 0; i < sizeof(icrc_masked_bytes); i++)
		if (icrc_masked_bytes[i] < n)
			hdr[icrc_masked_bytes[i]] = 0xff;
	crc = engine(ICRC_SEED, hdr, n);
	if (len > n)
		crc = engine(crc, ip + n, len - n);
	return ~crc;
}

uint32_t rocev2_icrc(const uint8_t *ip, size_t len)
{
	return icrc_run(ICRC_ENGINE, ip, len);
}

uint32_t rocev2_icrc_by(crc32_raw_fn *engine, const uint8_t *ip, size_t len)
{
	return icrc_run(engine, ip, len);
}
