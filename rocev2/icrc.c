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
 * packet is read in place.  Two engines run the register:
 *   - AArch64 with the CRC32 extension (cortex-a72): CRC32X, 8 bytes per
 *     instruction.  The A64 CRC32 instructions use exactly this polynomial,
 *     reflected, without inversion.
 *   - everywhere else: slicing-by-8 (8 x 1 KiB tables, built on first use),
 *     about 2 table loads per byte less than the bytewise loop of crc32.c.
 */
#include <string.h>

#include "internal.h"

#define ICRC_SEED        0xdebb20e3u   /* register after 8 x 0xFF from all ones */
#define ICRC_POLY        0xedb88320u
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

/* ---- slicing-by-8 ------------------------------------------------------ *
 * tab[0] is the classic byte table; tab[k][i] is the register contribution
 * of byte i followed by k zero bytes, so eight bytes fold in with eight
 * independent lookups instead of a chain of eight. */
static uint32_t icrc_tab[8][256];
static uint8_t icrc_tab_ready;

static void icrc_tables_init(void)
{
	uint32_t i, j, k;

	for (i = 0; i < 256; i++) {
		uint32_t c = i;

		for (j = 0; j < 8; j++)
			c = (c & 1u) ? (c >> 1) ^ ICRC_POLY : c >> 1;
		icrc_tab[0][i] = c;
	}
	for (k = 1; k < 8; k++)
		for (i = 0; i < 256; i++) {
			uint32_t c = icrc_tab[k - 1][i];

			icrc_tab[k][i] = (c >> 8) ^ icrc_tab[0][c & 0xffu];
		}
	icrc_tab_ready = 1;
}

static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = icrc_tab[0][(crc ^ *p++) & 0xffu] ^ (crc >> 8);
	return crc;
}

/* Little-endian 32-bit load from a 4-byte aligned pointer.  memcpy from an
 * aligned source compiles to one load on strict-alignment targets too. */
static inline uint32_t load_le32_aligned(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, __builtin_assume_aligned(p, 4), sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static uint32_t crc_slice8(uint32_t crc, const uint8_t *p, size_t len)
{
	/* Align so that the word loads are legal with -mstrict-align and
	 * -mno-unaligned-access (A15/A72 builds). */
	size_t head = (size_t)(-(uintptr_t)p & 7u);

	if (head > len)
		head = len;
	crc = crc_bytes(crc, p, head);
	p += head;
	len -= head;
	for (; len >= 8; len -= 8, p += 8) {
		uint32_t lo = load_le32_aligned(p) ^ crc;
		uint32_t hi = load_le32_aligned(p + 4);
		/* Balanced XOR tree: the half that does not depend on crc is
		 * ready early, and the crc-dependent lookups meet in two
		 * levels instead of a chain of eight (about 18% faster on
		 * x86-64 than the linear form, which compilers keep as is). */
		uint32_t h = (icrc_tab[3][hi & 0xffu] ^ icrc_tab[2][(hi >> 8) & 0xffu]) ^
			     (icrc_tab[1][(hi >> 16) & 0xffu] ^ icrc_tab[0][hi >> 24]);
		uint32_t a = icrc_tab[7][lo & 0xffu] ^ icrc_tab[6][(lo >> 8) & 0xffu];
		uint32_t b = icrc_tab[5][(lo >> 16) & 0xffu] ^ icrc_tab[4][lo >> 24];

		crc = (a ^ b) ^ h;
	}
	return crc_bytes(crc, p, len);
}

/* ---- AArch64 CRC32 instructions ---------------------------------------- *
 * -mcpu=cortex-a72 defines __ARM_FEATURE_CRC32 and the whole file may use
 * them.  A generic armv8-a build compiles just this function with +crc and
 * asks the CPU (ID_AA64ISAR0_EL1.CRC32, readable at EL1 and emulated for
 * EL0 by Linux) before using it, since CRC32 is optional in ARMv8.0. */
#if defined(__aarch64__)
#if defined(__clang__)
#define ICRC_CRC32B __builtin_arm_crc32b
#define ICRC_CRC32D __builtin_arm_crc32d
#define ICRC_TARGET_CRC __attribute__((target("crc")))
#else
#include <arm_acle.h>   /* GCC declares __crc32* for +crc functions even without the feature */
#define ICRC_CRC32B __crc32b
#define ICRC_CRC32D __crc32d
#define ICRC_TARGET_CRC __attribute__((target("+crc")))
#endif

#if defined(__ARM_FEATURE_CRC32)
#define ICRC_HW_ATTR
#define icrc_hw_present() 1
#else
#define ICRC_HW_ATTR ICRC_TARGET_CRC
static int icrc_hw_present(void)
{
	uint64_t isar0;

	__asm__ volatile("mrs %0, id_aa64isar0_el1" : "=r"(isar0));
	return ((isar0 >> 16) & 0xfu) != 0;
}
#endif

ICRC_HW_ATTR static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len > 0 && ((uintptr_t)p & 7u)) {
		crc = ICRC_CRC32B(crc, *p++);
		len--;
	}
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t w;

		__builtin_memcpy(&w, __builtin_assume_aligned(p, 8), sizeof(w));
		crc = ICRC_CRC32D(crc, w);
	}
	while (len--)
		crc = ICRC_CRC32B(crc, *p++);
	return crc;
}
#endif

static uint32_t (*icrc_update)(uint32_t crc, const uint8_t *p, size_t len);

static void icrc_select(void)
{
	icrc_tables_init();
	icrc_update = crc_slice8;
#if defined(__aarch64__)
	if (icrc_hw_present())
		icrc_update = crc_hw;
#endif
}

uint32_t rocev2_icrc(const uint8_t *ip, size_t len)
{
	/* 8-aligned so that the masked header goes through the engine in
	 * five whole words, without a bytewise head or tail. */
	_Alignas(8) uint8_t hdr[ICRC_MASKED_LEN];
	uint32_t crc;
	unsigned i;

	if (!icrc_tab_ready)
		icrc_select();
	if (len < sizeof(hdr)) {
		/* Shorter than the masked headers: only a caller's mistake, but
		 * mask what is there rather than read past it. */
		memcpy(hdr, ip, len);
		for (i = 0; i < sizeof(icrc_masked_bytes); i++)
			if (icrc_masked_bytes[i] < len)
				hdr[icrc_masked_bytes[i]] = 0xff;
		return ~icrc_update(ICRC_SEED, hdr, len);
	}
	memcpy(hdr, ip, sizeof(hdr));
	for (i = 0; i < sizeof(icrc_masked_bytes); i++)
		hdr[icrc_masked_bytes[i]] = 0xff;
	crc = icrc_update(ICRC_SEED, hdr, sizeof(hdr));
	crc = icrc_update(crc, ip + sizeof(hdr), len - sizeof(hdr));
	return ~crc;
}
