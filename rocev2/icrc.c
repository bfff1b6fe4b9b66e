/* RoCEv2 invariant CRC (IBA A17.3.3, RoCEv2 annex; rxe_icrc.c).
 *
 * The ICRC is CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) over
 *
 *   8 bytes of 0xFF     the masked LRH that RoCE does not carry
 *   IPv4 header         TOS, TTL and header checksum as all ones, or
 *   IPv6 header         traffic class, flow label and hop limit as all
 *                       ones (the version nibble stays: 0x6F FF FF FF)
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
 * Only the 40 (IPv6: 60) header bytes whose masks differ are copied; the rest of the
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
#define ICRC_MASKED_LEN6 (IPV6_HLEN + UDP_HLEN + BTH_LEN)   /* 60 */

/* Byte offsets, from the start of the IPv4 header, of the fields the ICRC
 * treats as all ones (IBA A17.3.3; RFC 791 / RFC 768 layouts). */
static const uint8_t icrc_masked_bytes[] = {
	1,                                  /* IPv4 TOS (DSCP/ECN: rewritten by routers) */
	8,                                  /* IPv4 TTL (decremented per hop) */
	10, 11,                             /* IPv4 header checksum (follows TTL) */
	IPV4_HLEN + 6, IPV4_HLEN + 7,       /* UDP checksum (optional, may be filled in) */
	IPV4_HLEN + UDP_HLEN + 4,           /* BTH FECN/BECN/resv6a (congestion marking) */
};
/* From the start of the IPv6 header (RFC 8200 3).  Byte 0's low nibble
 * (the traffic class's high half) is masked apart, in icrc_run. */
static const uint8_t icrc_masked_bytes6[] = {
	1, 2, 3,                            /* traffic class (low half), flow label */
	7,                                  /* hop limit (decremented per hop) */
	IPV6_HLEN + 6, IPV6_HLEN + 7,       /* UDP checksum */
	IPV6_HLEN + UDP_HLEN + 4,           /* BTH FECN/BECN/resv6a */
};

/* Inline in every entry point so that rocev2_icrc calls its engine
 * directly and each family's masks are constants. */
static inline uint32_t icrc_run(crc32_raw_fn *engine, const uint8_t *ip, size_t len, int v6)
{
	/* 8-aligned so that the masked header goes through the engine in
	 * whole words, without a bytewise head. */
	_Alignas(8) uint8_t hdr[ICRC_MASKED_LEN6];
	const uint8_t *masks = v6 ? icrc_masked_bytes6 : icrc_masked_bytes;
	size_t nmasks = v6 ? sizeof(icrc_masked_bytes6) : sizeof(icrc_masked_bytes);
	size_t masked = v6 ? ICRC_MASKED_LEN6 : ICRC_MASKED_LEN;
	/* A packet shorter than the masked headers is only a caller's
	 * mistake, but mask what is there rather than read past it. */
	size_t n = len < masked ? len : masked;
	uint32_t crc;
	unsigned i;

	memcpy(hdr, ip, n);
	for (i = 0; i < nmasks; i++)
		if (masks[i] < n)
			hdr[masks[i]] = 0xff;
	if (v6 && n > 0)
		hdr[0] |= 0x0fu;
	crc = engine(ICRC_SEED, hdr, n);
	if (len > n)
		crc = engine(crc, ip + n, len - n);
	return ~crc;
}

uint32_t rocev2_icrc(const uint8_t *ip, size_t len)
{
	return icrc_run(ICRC_ENGINE, ip, len, 0);
}

uint32_t rocev2_icrc_by(crc32_raw_fn *engine, const uint8_t *ip, size_t len)
{
	return icrc_run(engine, ip, len, 0);
}

uint32_t rocev2_icrc6(const uint8_t *ip, size_t len)
{
	return icrc_run(ICRC_ENGINE, ip, len, 1);
}

uint32_t rocev2_icrc6_by(crc32_raw_fn *engine, const uint8_t *ip, size_t len)
{
	return icrc_run(engine, ip, len, 1);
}
