/* RoCEv2 on the wire: Ethernet II / IPv4 or IPv6 / UDP 4791 / BTH /
 * extension headers / payload / pad / ICRC.  Wire structs are byte arrays so that no
 * compiler padding or host byte order can leak onto the wire; accessors
 * own the byte order (all big-endian except the ICRC, which goes out
 * least-significant byte first, IBA A17.3.3 / rxe_icrc.c).
 *
 *   +----------+----------+---------+-----+------------------+---------+-----+------+
 *   | Ethernet |   IPv4   |   UDP   | BTH | RETH/AETH/...    | payload | pad | ICRC |
 *   |   14 B   |   20 B   |   8 B   | 12B | per opcode table |  0..MTU | 0-3 |  4 B |
 *   +----------+----------+---------+-----+------------------+---------+-----+------+
 */
#ifndef ROCEV2_WIRE_H
#define ROCEV2_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ETH_HLEN          14u
#define ETHERTYPE_IPV4    0x0800u
#define IPV4_HLEN         20u
#define UDP_HLEN          8u
#define ROCEV2_UDP_DPORT  4791u
#define ROCEV2_SPORT_BASE 0xc000u
#define ICRC_LEN          4u
#define ETHERTYPE_IPV6    0x86ddu
#define IPV6_HLEN         40u
#define ROCEV2_HDR_OFFSET (ETH_HLEN + IPV4_HLEN + UDP_HLEN)   /* BTH starts here: 42 */
#define ROCEV2_HDR_OFFSET6 (ETH_HLEN + IPV6_HLEN + UDP_HLEN)  /* over IPv6: 62 */
#define ROCEV2_MAX_HDR    80u   /* BTH + largest extension set (IBA 9.2) */

#define BTH_LEN           12u
#define RETH_LEN          16u
#define AETH_LEN          4u
#define ATMETH_LEN        28u
#define ATMACK_LEN        8u
#define IMMDT_LEN         4u
#define CNP_RSVD_LEN      16u   /* reserved bytes after a CNP's BTH (IBA A17.9.2) */
#define IETH_LEN          4u

/* ---- big-endian helpers ------------------------------------------------ *
 * The 16/32/64-bit ones are one load or store and a byte swap (memcpy: no
 * alignment assumed; on the boards, built with strict alignment, the
 * compiler makes the same byte accesses the shifts would). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WIRE_BE16(x) __builtin_bswap16(x)
#define WIRE_BE32(x) __builtin_bswap32(x)
#define WIRE_BE64(x) __builtin_bswap64(x)
#else
#define WIRE_BE16(x) (x)
#define WIRE_BE32(x) (x)
#define WIRE_BE64(x) (x)
#endif
static inline uint16_t get_be16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return WIRE_BE16(v);
}
static inline uint32_t get_be24(const uint8_t *p) { return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]; }
static inline uint32_t get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return WIRE_BE32(v);
}
static inline uint64_t get_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return WIRE_BE64(v);
}
static inline void put_be16(uint8_t *p, uint16_t v)
{
	v = WIRE_BE16(v);
	memcpy(p, &v, 2);
}
static inline void put_be24(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 16); p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)v; }
static inline void put_be32(uint8_t *p, uint32_t v)
{
	v = WIRE_BE32(v);
	memcpy(p, &v, 4);
}
static inline void put_be64(uint8_t *p, uint64_t v)
{
	v = WIRE_BE64(v);
	memcpy(p, &v, 8);
}
static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

/* ---- Ethernet, IPv4, UDP ---------------------------------------------- */
struct eth_hdr { uint8_t b[ETH_HLEN]; };     /* dst[6] src[6] type[2] */
struct ipv4_hdr { uint8_t b[IPV4_HLEN]; };   /* RFC 791, no options */
struct udp_hdr { uint8_t b[UDP_HLEN]; };     /* RFC 768 */
_Static_assert(sizeof(struct eth_hdr) == 14, "eth");
_Static_assert(sizeof(struct ipv4_hdr) == 20, "ipv4");
_Static_assert(sizeof(struct udp_hdr) == 8, "udp");

#define IPV4_VER_IHL      0x45u
#define IPV4_FLAG_DF      0x4000u
#define IPV4_PROTO_UDP    17u
/* ECN field, the low two bits of the TOS byte (RFC 3168 5). */
#define IPV4_ECN_MASK     0x03u
#define IPV4_ECN_NOT_ECT  0x00u
#define IPV4_ECN_ECT0     0x02u
#define IPV4_ECN_CE       0x03u

static inline const uint8_t *eth_dst(const struct eth_hdr *h) { return h->b; }
static inline const uint8_t *eth_src(const struct eth_hdr *h) { return h->b + 6; }
static inline uint16_t eth_type(const struct eth_hdr *h) { return get_be16(h->b + 12); }

static inline uint8_t ipv4_ver_ihl(const struct ipv4_hdr *h) { return h->b[0]; }
static inline uint8_t ipv4_tos(const struct ipv4_hdr *h) { return h->b[1]; }
static inline uint16_t ipv4_tot_len(const struct ipv4_hdr *h) { return get_be16(h->b + 2); }
static inline uint16_t ipv4_frag(const struct ipv4_hdr *h) { return get_be16(h->b + 6); }
static inline uint8_t ipv4_ttl(const struct ipv4_hdr *h) { return h->b[8]; }
static inline uint8_t ipv4_proto(const struct ipv4_hdr *h) { return h->b[9]; }
static inline uint16_t ipv4_csum(const struct ipv4_hdr *h) { return get_be16(h->b + 10); }
static inline uint32_t ipv4_saddr(const struct ipv4_hdr *h) { return get_be32(h->b + 12); }
static inline uint32_t ipv4_daddr(const struct ipv4_hdr *h) { return get_be32(h->b + 16); }

/* ---- IPv6 (RFC 8200 3), RoCEv2's GRH (IBA A17.4.5.1: the GRH is the
 * IPv6 header; traffic class = GRH TClass, flow label, hop limit) ------- */
struct ipv6_hdr { uint8_t b[IPV6_HLEN]; };   /* no extension headers */
_Static_assert(sizeof(struct ipv6_hdr) == 40, "ipv6");
#define IPV6_NEXT_UDP     17u

static inline unsigned ipv6_version(const struct ipv6_hdr *h) { return h->b[0] >> 4; }
/* Traffic class: the low nibble of byte 0 and the high nibble of byte 1;
 * its low two bits are the ECN field (RFC 3168 5). */
static inline uint8_t ipv6_tclass(const struct ipv6_hdr *h)
{
	return (uint8_t)((h->b[0] & 0x0fu) << 4 | h->b[1] >> 4);
}
static inline uint16_t ipv6_payload_len(const struct ipv6_hdr *h) { return get_be16(h->b + 4); }
static inline uint8_t ipv6_next(const struct ipv6_hdr *h) { return h->b[6]; }
static inline uint8_t ipv6_hop_limit(const struct ipv6_hdr *h) { return h->b[7]; }
static inline const uint8_t *ipv6_saddr(const struct ipv6_hdr *h) { return h->b + 8; }
static inline const uint8_t *ipv6_daddr(const struct ipv6_hdr *h) { return h->b + 24; }

/* RFC 1071 one's-complement sum over the 20-byte header: the checksum to
 * write is ~fold with the field zeroed; a received header is intact when
 * fold == 0xFFFF.  On x86 the sum is taken over 32-bit words in the CPU's
 * order and folded (RFC 1071 2(B): the one's-complement sum does not
 * depend on byte order, a little-endian CPU gets it byte-swapped).  The
 * boards are built with strict alignment (Makefile ARCH_FLAGS), where a
 * word load from a frame of unknown alignment becomes byte loads anyway:
 * they sum the 16-bit words as the RFC writes them. */
#if defined(__x86_64__) || defined(__i386__)
static inline uint16_t ipv4_csum_fold(const uint8_t *ip)
{
	uint32_t w[IPV4_HLEN / 4];
	uint64_t sum;

	memcpy(w, ip, IPV4_HLEN);
	sum = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	sum = (sum & 0xffffffffu) + (sum >> 32);        /* <= 2^32 + 3 */
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	sum = (sum >> 8 | sum << 8) & 0xffffu;
#endif
	return (uint16_t)sum;
}
#else
static inline uint16_t ipv4_csum_fold(const uint8_t *ip)
{
	uint32_t sum = 0;
	unsigned i;

	for (i = 0; i < IPV4_HLEN; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)sum;
}
#endif

/* One's-complement addition of a 16-bit value to a folded sum (RFC 1624:
 * how an incremental checksum adds a field). */
static inline uint16_t csum16_add(uint16_t sum, uint16_t v)
{
	uint32_t s = (uint32_t)sum + v;

	return (uint16_t)((s & 0xffffu) + (s >> 16));
}

static inline uint16_t udp_sport(const struct udp_hdr *h) { return get_be16(h->b); }
static inline uint16_t udp_dport(const struct udp_hdr *h) { return get_be16(h->b + 2); }
static inline uint16_t udp_len(const struct udp_hdr *h) { return get_be16(h->b + 4); }

/* ---- BTH (IBA 9.2, 12 B) ---------------------------------------------- *
 *  0: OpCode  1: SE|M|PadCnt|TVer  2-3: P_Key  4: FECN|BECN|resv6a
 *  5-7: DestQP  8: AckReq|resv7  9-11: PSN                                  */
struct bth { uint8_t b[BTH_LEN]; };
_Static_assert(sizeof(struct bth) == 12, "bth");
#define BTH_FECN      0x80u   /* byte 4 */
#define BTH_BECN      0x40u   /* byte 4: set in every CNP (IBA A17.9.2) */
#define BTH_SE        0x80u
#define BTH_MIG       0x40u
#define BTH_PAD_MASK  0x30u
#define BTH_TVER_MASK 0x0fu
#define BTH_ACKREQ    0x80u
#define BTH_PSN_MASK  0xffffffu
#define BTH_QPN_MASK  0xffffffu
#define BTH_DEF_PKEY  0xffffu

static inline uint8_t bth_opcode(const struct bth *h) { return h->b[0]; }
static inline int bth_se(const struct bth *h) { return !!(h->b[1] & BTH_SE); }
static inline int bth_mig(const struct bth *h) { return !!(h->b[1] & BTH_MIG); }
static inline unsigned bth_pad(const struct bth *h) { return (h->b[1] & BTH_PAD_MASK) >> 4; }
static inline unsigned bth_tver(const struct bth *h) { return h->b[1] & BTH_TVER_MASK; }
static inline uint16_t bth_pkey(const struct bth *h) { return get_be16(h->b + 2); }
/* DestQP and PSN: the 24 bits under a 32-bit load from the byte before
 * (FECN/BECN, AckReq: masked off). */
static inline uint32_t bth_qpn(const struct bth *h) { return get_be32(h->b + 4) & BTH_QPN_MASK; }
static inline int bth_ackreq(const struct bth *h) { return !!(h->b[8] & BTH_ACKREQ); }
static inline uint32_t bth_psn(const struct bth *h) { return get_be32(h->b + 8) & BTH_PSN_MASK; }
static inline int bth_becn(const struct bth *h) { return !!(h->b[4] & BTH_BECN); }

static inline void bth_init(struct bth *h, uint8_t opcode, int se, unsigned pad, uint16_t pkey,
			    uint32_t qpn, int ackreq, uint32_t psn)
{
	h->b[0] = opcode;
	h->b[1] = (uint8_t)((se ? BTH_SE : 0) | ((pad & 3u) << 4));  /* TVer 0, MigReq 0 */
	put_be16(h->b + 2, pkey);
	h->b[4] = 0;
	put_be24(h->b + 5, qpn & BTH_QPN_MASK);
	h->b[8] = ackreq ? BTH_ACKREQ : 0;
	put_be24(h->b + 9, psn & BTH_PSN_MASK);
}

/* ---- RETH (IBA 9.3.3, 16 B): VA, R_Key, DMA length --------------------- */
struct reth { uint8_t b[RETH_LEN]; };
_Static_assert(sizeof(struct reth) == 16, "reth");
static inline uint64_t reth_va(const struct reth *h) { return get_be64(h->b); }
static inline uint32_t reth_rkey(const struct reth *h) { return get_be32(h->b + 8); }
static inline uint32_t reth_len(const struct reth *h) { return get_be32(h->b + 12); }
static inline void reth_init(struct reth *h, uint64_t va, uint32_t rkey, uint32_t len)
{
	put_be64(h->b, va);
	put_be32(h->b + 8, rkey);
	put_be32(h->b + 12, len);
}

/* ---- AETH (IBA 9.3.5, 4 B): syndrome | MSN ----------------------------- */
struct aeth { uint8_t b[AETH_LEN]; };
_Static_assert(sizeof(struct aeth) == 4, "aeth");
#define AETH_TYPE_MASK          0xe0u
#define AETH_ACK                0x00u
#define AETH_RNR_NAK            0x20u
#define AETH_NAK                0x60u
#define AETH_ACK_UNLIMITED      0x1fu   /* credits not used, as rxe (IBA 9.7.7.2) */
#define AETH_NAK_PSN_SEQ_ERROR  0x60u
#define AETH_NAK_INVALID_REQ    0x61u
#define AETH_NAK_REM_ACC_ERR    0x62u
#define AETH_NAK_REM_OP_ERR     0x63u
#define AETH_NAK_INV_RD_REQ     0x64u   /* MigrOS value */
#define AETH_NAK_STOPPED        0x65u   /* MigrOS AETH_NAK_PAUSE: the peer QP is stopped */
#define AETH_MSN_MASK           0xffffffu
static inline uint8_t aeth_syndrome(const struct aeth *h) { return h->b[0]; }
static inline uint32_t aeth_msn(const struct aeth *h) { return get_be24(h->b + 1); }
static inline void aeth_init(struct aeth *h, uint8_t syndrome, uint32_t msn)
{
	put_be32(h->b, (uint32_t)syndrome << 24 | (msn & AETH_MSN_MASK));
}

/* ---- AtomicETH (IBA 9.3.4, 28 B): VA, R_Key, swap/add, compare -------- */
struct atmeth { uint8_t b[ATMETH_LEN]; };
_Static_assert(sizeof(struct atmeth) == 28, "atmeth");
static inline uint64_t atmeth_va(const struct atmeth *h) { return get_be64(h->b); }
static inline uint32_t atmeth_rkey(const struct atmeth *h) { return get_be32(h->b + 8); }
static inline uint64_t atmeth_swap_add(const struct atmeth *h) { return get_be64(h->b + 12); }
static inline uint64_t atmeth_comp(const struct atmeth *h) { return get_be64(h->b + 20); }
static inline void atmeth_init(struct atmeth *h, uint64_t va, uint32_t rkey, uint64_t swap_add,
			       uint64_t comp)
{
	put_be64(h->b, va);
	put_be32(h->b + 8, rkey);
	put_be64(h->b + 12, swap_add);
	put_be64(h->b + 20, comp);
}

/* ---- AtomicAckETH (IBA 9.5.3, 8 B): original remote data -------------- */
struct atmack { uint8_t b[ATMACK_LEN]; };
_Static_assert(sizeof(struct atmack) == 8, "atmack");
static inline uint64_t atmack_orig(const struct atmack *h) { return get_be64(h->b); }
static inline void atmack_init(struct atmack *h, uint64_t orig) { put_be64(h->b, orig); }

/* ---- ImmDt and IETH (4 B each) ---------------------------------------- */
struct immdt { uint8_t b[IMMDT_LEN]; };
struct ieth { uint8_t b[IETH_LEN]; };
_Static_assert(sizeof(struct immdt) == 4, "immdt");
_Static_assert(sizeof(struct ieth) == 4, "ieth");
static inline uint32_t immdt_imm(const struct immdt *h) { return get_be32(h->b); }
static inline void immdt_init(struct immdt *h, uint32_t imm) { put_be32(h->b, imm); }
static inline uint32_t ieth_rkey(const struct ieth *h) { return get_be32(h->b); }
static inline void ieth_init(struct ieth *h, uint32_t rkey) { put_be32(h->b, rkey); }

/* ---- PSN arithmetic (IBA 9.7.1): 24-bit serial numbers ---------------- *
 * psn_cmp(a, b) < 0 when a is before b, within a window of +-2^23.       */
static inline int32_t psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8);
}
static inline uint32_t psn_add(uint32_t a, uint32_t n) { return (a + n) & BTH_PSN_MASK; }

/* UDP source port for a QP: 0xC000 + hash_32(qpn, 14), fixed per QP so
 * that a QP's packets stay on one ECMP path (rxe_qp.c). */
static inline uint16_t rocev2_udp_sport(uint32_t qpn)
{
	return (uint16_t)(ROCEV2_SPORT_BASE + (((qpn * 0x61c88647u) >> 18) & 0x3fffu));
}

#endif
