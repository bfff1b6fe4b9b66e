/* CRC-32 (IEEE) and CRC-32C: one slicing-by-16 engine over two table sets,
 * and the AArch64 CRC32 instructions where the CPU has them (crc32.h). */
#include "lib/crc32.h"

#define POLY_IEEE 0xedb88320u
#define POLY_CASTAGNOLI 0x82f63b78u

/* ---- slicing-by-N ------------------------------------------------------ *
 * t[0] is the classic byte table; t[k][i] is the register contribution of
 * byte i followed by k zero bytes, so N bytes fold in with N independent
 * lookups instead of a chain of N. */
#define CRC_SLICES 16
struct crc_tables {
	uint32_t t[CRC_SLICES][256];
	int state;                 /* 0 unbuilt, 1 being built, 2 ready */
};

static struct crc_tables tab_ieee, tab_c;

static void tables_build(struct crc_tables *ct, uint32_t poly)
{
	uint32_t i, j, k;

	for (i = 0; i < 256; i++) {
		uint32_t c = i;

		for (j = 0; j < 8; j++)
			c = (c & 1u) ? (c >> 1) ^ poly : c >> 1;
		ct->t[0][i] = c;
	}
	for (k = 1; k < CRC_SLICES; k++)
		for (i = 0; i < 256; i++) {
			uint32_t c = ct->t[k - 1][i];

			ct->t[k][i] = (c >> 8) ^ ct->t[0][c & 0xffu];
		}
}

/* Build once.  The host side is multi-threaded (libmnic): the first caller
 * claims the build with a compare-and-swap, others wait for the release
 * store, so nobody reads a half-built table.  The firmware (freestanding)
 * has one thread of control and its caches and MMU are off, where
 * exclusive loads/stores are implementation defined: a plain flag there. */
static const struct crc_tables *tables(struct crc_tables *ct, uint32_t poly)
{
#if __STDC_HOSTED__
	int idle = 0;

	if (__atomic_load_n(&ct->state, __ATOMIC_ACQUIRE) == 2)
		return ct;
	if (__atomic_compare_exchange_n(&ct->state, &idle, 1, 0, __ATOMIC_ACQUIRE,
					__ATOMIC_ACQUIRE)) {
		tables_build(ct, poly);
		__atomic_store_n(&ct->state, 2, __ATOMIC_RELEASE);
		return ct;
	}
	while (__atomic_load_n(&ct->state, __ATOMIC_ACQUIRE) != 2)
		;
#else
	if (ct->state != 2) {
		tables_build(ct, poly);
		ct->state = 2;
	}
#endif
	return ct;
}

static uint32_t crc_bytes(const struct crc_tables *ct, uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = ct->t[0][(crc ^ *p++) & 0xffu] ^ (crc >> 8);
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

/* Fold the 16 aligned bytes at p into crc: byte j meets table t[15-j].
 * The words that do not depend on crc go first, so the crc-dependent
 * lookups meet the rest in one XOR rather than at the end of a chain (the
 * balanced form was about 18% faster on x86-64 than the linear one, which
 * compilers keep as written). */
static inline uint32_t crc_fold16(const struct crc_tables *ct, uint32_t crc, const uint8_t *p)
{
	uint32_t acc = 0;
	unsigned i = 4;

	while (i--) {
		uint32_t w = load_le32_aligned(p + 4 * i) ^ (i == 0 ? crc : 0u);
		unsigned k = 15 - 4 * i;

		acc ^= (ct->t[k][w & 0xffu] ^ ct->t[k - 1][(w >> 8) & 0xffu]) ^
		       (ct->t[k - 2][(w >> 16) & 0xffu] ^ ct->t[k - 3][w >> 24]);
	}
	return acc;
}

/* Slicing-by-16, bytes for the head and tail.  Chosen for the A15 (the
 * board without CRC instructions) by measuring under QEMU, in one run:
 * slicing-by-16 3.34-3.59 Gbit/s, slicing-by-8 2.67-3.13 (docs/ARCHITECTURE.md
 * "ICRC").  The tables are built at run time, in .bss, so the firmware's
 * text does not grow with them; an 8-byte step for the tail would cost
 * 144 bytes of A15 text for at most 15 bytes a call. */
static uint32_t crc_table(const struct crc_tables *ct, uint32_t crc, const uint8_t *p, size_t len)
{
	/* Align so that the word loads are legal with -mstrict-align and
	 * -mno-unaligned-access (A15/A72 builds). */
	size_t head = (size_t)(-(uintptr_t)p & 3u);

	if (head > len)
		head = len;
	crc = crc_bytes(ct, crc, p, head);
	p += head;
	len -= head;
	for (; len >= 16; len -= 16, p += 16)
		crc = crc_fold16(ct, crc, p);
	return crc_bytes(ct, crc, p, len);
}

/* ---- AArch64 CRC32 instructions ---------------------------------------- *
 * -mcpu=cortex-a72 defines __ARM_FEATURE_CRC32 and the whole file may use
 * them.  A generic armv8-a build compiles just these functions with +crc
 * and asks the CPU (ID_AA64ISAR0_EL1.CRC32, readable at EL1 and emulated
 * for EL0 by Linux) before using them, since CRC32 is optional in ARMv8.0. */
#if defined(__aarch64__)
#if defined(__clang__)
#define CRC_TARGET __attribute__((target("crc")))
#define CRC32B __builtin_arm_crc32b
#define CRC32D __builtin_arm_crc32d
#define CRC32CB __builtin_arm_crc32cb
#define CRC32CD __builtin_arm_crc32cd
#else
#include <arm_acle.h>   /* GCC declares __crc32* for +crc functions even without the feature */
#define CRC_TARGET __attribute__((target("+crc")))
#define CRC32B __crc32b
#define CRC32D __crc32d
#define CRC32CB __crc32cb
#define CRC32CD __crc32cd
#endif

#if defined(__ARM_FEATURE_CRC32)
#define CRC_HW_ATTR
#define crc_hw_present() 1
#else
#define CRC_HW_ATTR CRC_TARGET
static int crc_hw_present(void)
{
	static int present = -1;
	uint64_t isar0;

	if (present < 0) {
		__asm__ volatile("mrs %0, id_aa64isar0_el1" : "=r"(isar0));
		present = ((isar0 >> 16) & 0xfu) != 0;
	}
	return present;
}
#endif

/* One body, two instruction pairs. */
#define CRC_HW_BODY(op_b, op_d)                                                        \
	do {                                                                           \
		while (len > 0 && ((uintptr_t)p & 7u)) {                               \
			crc = op_b(crc, *p++);                                         \
			len--;                                                         \
		}                                                                      \
		for (; len >= 8; len -= 8, p += 8) {                                   \
			uint64_t w;                                                    \
			__builtin_memcpy(&w, __builtin_assume_aligned(p, 8), sizeof(w)); \
			crc = op_d(crc, w);                                            \
		}                                                                      \
		while (len--)                                                          \
			crc = op_b(crc, *p++);                                         \
		return crc;                                                            \
	} while (0)

CRC_HW_ATTR static uint32_t crc_hw_ieee(uint32_t crc, const uint8_t *p, size_t len)
{
	CRC_HW_BODY(CRC32B, CRC32D);
}

CRC_HW_ATTR static uint32_t crc_hw_c(uint32_t crc, const uint8_t *p, size_t len)
{
	CRC_HW_BODY(CRC32CB, CRC32CD);
}
#endif

uint32_t crc32_ieee_raw_table(uint32_t reg, const void *buf, size_t len)
{
	return crc_table(tables(&tab_ieee, POLY_IEEE), reg, buf, len);
}

uint32_t crc32_ieee_raw(uint32_t reg, const void *buf, size_t len)
{
#if defined(__aarch64__)
	if (crc_hw_present())
		return crc_hw_ieee(reg, buf, len);
#endif
	return crc32_ieee_raw_table(reg, buf, len);
}

uint32_t crc32c_raw(uint32_t reg, const void *buf, size_t len)
{
#if defined(__aarch64__)
	if (crc_hw_present())
		return crc_hw_c(reg, buf, len);
#endif
	return crc_table(tables(&tab_c, POLY_CASTAGNOLI), reg, buf, len);
}
