/* Transmit framing: every RoCEv2 frame the engine sends is laid out here.
 *
 *   e->tx:  0   4           24          44/64     66    78          hdr_len
 *           .   +-----------+-----------+---------+-----+-----------+---------+-----+------+
 *   IPv6    .   | Ethernet  | IPv6 (40 B, no ext.) | UDP | BTH | RETH/AETH | payload | pad | ICRC |
 *   IPv4    .   .           | Ethernet | IPv4 (DF)| UDP | BTH | ...       | 0..MTU  | 0-3 | LE32 |
 *
 * The BTH always starts at ROCEV2_TX_BTH (66) in the frame buffer, so the
 * stages, which address everything from the BTH, never see the family:
 * a frame over IPv4 starts at 24 (14 + 20 + 8 before the BTH), one over
 * IPv6 at 4 (14 + 40 + 8).  The QP's destination GID picks the family
 * (rocev2.h: IPv4-mapped is IPv4).
 *
 * Everything before the BTH's ninth byte depends only on the QP and the
 * port: each QP keeps it as a template laid out as e->tx (internal.h
 * struct rocev2_tx_tmpl), built by tx_tmpl_build() when stale.
 * rocev2_tx_prepare() copies it and patches the BTH's per-packet bytes;
 * the stage fills the extension headers and copies the payload in place;
 * rocev2_tx_send() then writes the lengths and pad, the IPv4 header
 * checksum (the template's sum plus the total length, RFC 1624) or, over
 * IPv6, which has none, the UDP checksum (tx_send6), the ICRC, and hands
 * the frame to the port.  One frame buffer per
 * engine (e->tx): frames are built and sent one at a time, run to
 * completion.  Frames under 60 bytes are padded by the port driver
 * (hal/eth.h), outside the IP length, so not here.
 */
#include <string.h>

#include "internal.h"

#define BTH_OFF   ROCEV2_TX_BTH
#define V4_START  (ROCEV2_TX_BTH - ROCEV2_HDR_OFFSET)    /* 24 */
#define V6_START  (ROCEV2_TX_BTH - ROCEV2_HDR_OFFSET6)   /* 4 */
_Static_assert(V4_START % 8u == 0 && V4_START + ROCEV2_HDR_OFFSET == BTH_OFF && V6_START + ROCEV2_HDR_OFFSET6 == BTH_OFF,
	       "the IPv4 template copy starts on a word");
/* Largest payload the frame buffer holds (ROCEV2_TX_MAX: 4096-byte MTU). */
#define TX_MAX_PAYLOAD 4096u
_Static_assert(BTH_OFF + ROCEV2_MAX_HDR + TX_MAX_PAYLOAD + 3u + ICRC_LEN <= ROCEV2_TX_MAX,
	       "e->tx holds the largest frame");

/* The extension headers' zeroing in tx_prepare: from the first 8-byte
 * boundary after the BTH to one at or past the largest header set. */
#define TX_ZERO_OFF 80u
#define TX_ZERO_END 152u
_Static_assert(TX_ZERO_OFF == BTH_OFF + BTH_LEN + 2u && TX_ZERO_OFF % 8u == 0,
	       "two bytes, then words");
_Static_assert(TX_ZERO_END >= BTH_OFF + ROCEV2_MAX_HDR && TX_ZERO_END <= ROCEV2_TX_MAX &&
	       (TX_ZERO_END - TX_ZERO_OFF) % 8u == 0, "every extension header byte, inside the buffer");
_Static_assert(ROCEV2_TMPL_LEN == TX_ZERO_OFF, "the template ends where the zeroing starts");

/* RFC 1071 one's-complement sum of len bytes, added to sum (a folded
 * 16-bit value), folded; the words as the RFC writes them (big-endian).
 * Word loads in the CPU's order, then one swap: the sum does not depend
 * on byte order (RFC 1071 2(B)). */
static uint16_t inet_sum(const uint8_t *p, size_t len, uint16_t sum)
{
	uint64_t acc = 0;
	uint32_t w;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		memcpy(&w, p + i, 4);
		acc += w;
	}
	if (len - i >= 2) {
		uint16_t h;

		memcpy(&h, p + i, 2);
		acc += h;
		i += 2;
	}
	if (i < len) {
		uint8_t last[2] = { p[i], 0 };
		uint16_t h;

		memcpy(&h, last, 2);
		acc += h;
	}
	while (acc >> 16)
		acc = (acc & 0xffffu) + (acc >> 16);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	acc = (acc >> 8 | acc << 8) & 0xffffu;
#endif
	return csum16_add(sum, (uint16_t)acc);
}

/* IBA 9.2 / RoCEv2 annex: the transport packet (BTH..ICRC) is a multiple
 * of 4 bytes; PadCnt says how many pad bytes follow the payload. */
static inline unsigned pad_count(uint32_t paylen)
{
	return (unsigned)(-paylen & 3u);
}

/* The QP's template (internal.h): everything of Ethernet, IP, UDP and the
 * BTH's first 8 bytes that is the same in each of its packets, with the
 * per-packet fields zero. */
static ROCEV2_CTL __attribute__((noinline)) void tx_tmpl_build(struct rocev2 *e, struct rocev2_qp *qp)
{
	const struct rocev2_av *av = &qp->attr.av;
	uint8_t src[ROCEV2_GID_LEN];
	int v6 = !mnic_gid_is_v4(av->dgid);
	uint8_t *f = qp->tmpl.b + (v6 ? V6_START : V4_START);
	uint8_t *ip = f + ETH_HLEN, *udp;
	/* ECN (RFC 3168): ECT(0) in the low bits of the host's TOS / traffic
	 * class unless DCQCN's ECT flag is off (cc.c); the ICRC masks the
	 * field (IBA A17.3.3), so a switch may mark CE on the way. */
	uint8_t tos = (uint8_t)((av->tos & e->tos_keep) | e->tos_ecn);

	memset(qp->tmpl.b, 0, sizeof(qp->tmpl.b));
	qp->tmpl.start = (uint8_t)(v6 ? V6_START : V4_START);
	qp->tmpl.flags = (uint8_t)((v6 ? TX_F_V6 : 0u) | (rocev2_qp_sgid(e, qp, src) < 0 ? TX_F_NO_SRC : 0u));
	/* Ethernet II: the host resolved the peer's MAC into the AV. */
	memcpy(f, av->dmac, 6);
	memcpy(f + 6, e->env.mac, 6);
	put_be16(f + 12, v6 ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4);
	if (v6) {
		/* IPv6 (RFC 8200 3), RoCEv2's GRH (IBA A17.4.5.1): version 6,
		 * traffic class, flow label, next header UDP, hop limit; no
		 * extension headers.  Payload length: tx_send. */
		uint32_t fl = av->flow_label & ROCEV2_FLOW_LABEL_MASK;

		ip[0] = (uint8_t)(0x60u | tos >> 4);
		ip[1] = (uint8_t)((uint8_t)(tos << 4) | (fl >> 16));
		put_be16(ip + 2, (uint16_t)fl);
		ip[6] = IPV6_NEXT_UDP;
		ip[7] = av->ttl;
		memcpy(ip + 8, src, ROCEV2_GID_LEN);
		memcpy(ip + 24, av->dgid, ROCEV2_GID_LEN);
		/* the UDP pseudo-header's fixed part (RFC 8200 8.1): both
		 * addresses and the next header; tx_send adds the length */
		qp->tmpl.ip_sum = inet_sum(ip + 8, 2 * ROCEV2_GID_LEN, IPV6_NEXT_UDP);
		udp = ip + IPV6_HLEN;
	} else {
		/* IPv4 (RFC 791): no options, never fragmented (DF: the path MTU
		 * bounds every RoCE packet), id 0 as an atomic datagram may use
		 * (RFC 6864 4.1).  Total length and checksum: tx_send. */
		ip[0] = IPV4_VER_IHL;
		ip[1] = tos;
		put_be16(ip + 6, IPV4_FLAG_DF);
		ip[8] = av->ttl;
		ip[9] = IPV4_PROTO_UDP;
		memcpy(ip + 12, src + 12, 4);
		memcpy(ip + 16, av->dgid + 12, 4);
		qp->tmpl.ip_sum = ipv4_csum_fold(ip);
		udp = ip + IPV4_HLEN;
	}

	/* UDP (RFC 768): fixed source port per QP so one flow keeps one ECMP
	 * path (rxe_qp.c).  Over IPv4 the checksum is 0, as RoCEv2 (IBA annex
	 * A17) sends it: the ICRC protects the packet end to end.  Over IPv6
	 * tx_send computes it (RFC 8200 8.1 makes it mandatory; rxe sends 0
	 * there as well, which RFC 6935/6936 allow only to receivers that
	 * opted in, and which tshark flags): the ICRC masks the field, so
	 * either is valid to a RoCE receiver. */
	put_be16(udp, qp->sport);
	put_be16(udp + 2, ROCEV2_UDP_DPORT);

	/* BTH (IBA 9.2) bytes 2..7: default P_Key, FECN/BECN 0, DestQP. */
	put_be16(qp->tmpl.b + BTH_OFF + 2, BTH_DEF_PKEY);
	put_be24(qp->tmpl.b + BTH_OFF + 5, qp->attr.dest_qp_num & BTH_QPN_MASK);
	qp->tmpl.gen = e->tmpl_gen + 1u;
}

/* rocev2_tx_prepare with a valid template: a leaf (no call), so that the
 * packet path saves no registers for it. */
static inline __attribute__((always_inline)) void tx_prepare_fast(struct rocev2 *e, struct rocev2_qp *qp,
								  struct rocev2_tx *t, uint8_t opcode,
								  uint32_t psn, int ackreq, int se,
								  uint32_t paylen)
{
	const struct rocev2_opcode_info *info = rocev2_opcode(opcode);
	uint8_t *bth = e->tx + BTH_OFF;

	/* Both arrays are 8-byte aligned (internal.h), which the compiler sees
	 * through the member names: word copies even on boards built with
	 * strict alignment.  IPv4 needs the template's bytes from 24 on. */
	if (qp->tmpl.flags & TX_F_V6)
		memcpy(e->tx, qp->tmpl.b, ROCEV2_TMPL_LEN);
	else
		memcpy(e->tx + V4_START, qp->tmpl.b + V4_START, ROCEV2_TMPL_LEN - V4_START);
	/* BTH (IBA 9.2): TVer 0, MigReq 0; PadCnt follows the payload
	 * (tx_send). */
	bth[0] = opcode;
	bth[1] = se ? BTH_SE : 0;
	put_be32(bth + 8, (ackreq ? (uint32_t)BTH_ACKREQ << 24 : 0u) | (psn & BTH_PSN_MASK));
	/* Extension headers start zeroed: a field a stage forgets (e.g. the
	 * RESUME AETH, sent as zero) never leaks a previous frame's bytes.
	 * The largest set is cleared whatever the opcode (a fixed size costs
	 * a few stores; what lies past this opcode's headers is payload):
	 * the two bytes after the BTH, then the rest as aligned words. */
	bth[BTH_LEN] = 0;
	bth[BTH_LEN + 1] = 0;
	memset(e->tx + TX_ZERO_OFF, 0, TX_ZERO_END - TX_ZERO_OFF);

	t->frame = e->tx + qp->tmpl.start;
	t->bth = bth;
	t->payload = bth + info->hdr_len;
	t->paylen = paylen;
	t->ip_sum = qp->tmpl.ip_sum;
	t->opcode = opcode;
	t->flags = qp->tmpl.flags;
}

/* The template is stale (rocev2_tx_tmpl_stale*): built anew, then the
 * packet as usual (the template is valid now: one level only). */
static ROCEV2_CTL __attribute__((noinline)) void tx_prepare_build(struct rocev2 *e, struct rocev2_qp *qp,
								  struct rocev2_tx *t, uint8_t opcode,
								  uint32_t psn, int ackreq, int se,
								  uint32_t paylen)
{
	tx_tmpl_build(e, qp);
	rocev2_tx_prepare(e, qp, t, opcode, psn, ackreq, se, paylen);
}

void rocev2_tx_prepare(struct rocev2 *e, struct rocev2_qp *qp, struct rocev2_tx *t,
		       uint8_t opcode, uint32_t psn, int ackreq, int se, uint32_t paylen)
{
	if (qp->tmpl.gen != e->tmpl_gen + 1u) {
		tx_prepare_build(e, qp, t, opcode, psn, ackreq, se, paylen);
		return;
	}
	tx_prepare_fast(e, qp, t, opcode, psn, ackreq, se, paylen);
}

/* Hand the finished frame to the port; counted. */
static inline __attribute__((always_inline)) int tx_out(struct rocev2 *e, const uint8_t *f, size_t frame_len)
{
	int rc = e->env.tx(e->env.ctx, f, frame_len);

	if (rc == -HAL_EAGAIN) {
		e->cnt.tx_busy++;       /* ring full: nothing sent, the stage retries */
		return rc;
	}
	if (rc < 0) {
		e->cnt.tx_errors++;
		return rc;
	}
	e->cnt.tx_packets++;
	e->cnt.tx_bytes += frame_len;
	return 0;
}

/* The rest of tx_send over IPv6 (and for a template without a source
 * address): out of line, so that the IPv4 path keeps its registers. */
static __attribute__((noinline)) int tx_send6(struct rocev2 *e, struct rocev2_tx *t, size_t l4_len)
{
	uint8_t *ip = t->frame + ETH_HLEN;
	uint16_t csum;

	if (t->flags & TX_F_NO_SRC) {
		e->cnt.tx_no_gid++;     /* the port has no address of the QP's family */
		return -HAL_ENXIO;
	}
	/* RFC 8200: the payload length counts everything after the fixed
	 * header, here UDP .. ICRC. */
	put_be16(ip + 4, (uint16_t)(l4_len + ICRC_LEN));
	put_be16(ip + IPV6_HLEN + 4, (uint16_t)(l4_len + ICRC_LEN));
	put_be16(ip + IPV6_HLEN + 6, 0);
	/* IBA A17.3.3: ICRC after the pad, least significant byte first; it
	 * masks the UDP checksum, so that comes after it, over it (RFC 768:
	 * 0 is sent as 0xFFFF). */
	put_le32(ip + IPV6_HLEN + l4_len, rocev2_icrc6(ip, IPV6_HLEN + l4_len));
	csum = (uint16_t)~inet_sum(ip + IPV6_HLEN, l4_len + ICRC_LEN,
				   csum16_add(t->ip_sum, (uint16_t)(l4_len + ICRC_LEN)));
	put_be16(ip + IPV6_HLEN + 6, csum ? csum : 0xffffu);
	return tx_out(e, t->frame, ETH_HLEN + IPV6_HLEN + l4_len + ICRC_LEN);
}

int rocev2_tx_send(struct rocev2 *e, struct rocev2_tx *t)
{
	const struct rocev2_opcode_info *info = rocev2_opcode(t->opcode);
	uint8_t *f = t->frame, *ip = f + ETH_HLEN;
	uint32_t paylen = t->paylen;
	unsigned pad = pad_count(paylen);
	size_t l4_len, ip_len;
	uint16_t csum;

	/* Stage contract (internal.h): t came from tx_prepare (its frame
	 * starts where a template puts one in e->tx), the opcode is one we
	 * know and its payload fits.  A violation is our bug, not the peer's: refuse
	 * the frame rather than send garbage. */
	if ((f != e->tx + V4_START && f != e->tx + V6_START) || !(info->mask & OPM_VALID) ||
	    paylen > TX_MAX_PAYLOAD || (paylen && !(info->mask & OPM_PAYLOAD))) {
		e->cnt.tx_errors++;
		return -HAL_EINVAL;
	}
	/* IBA 9.2 / RoCEv2 annex: the transport packet (BTH..ICRC) is a
	 * multiple of 4 bytes; PadCnt says how many zero bytes follow the
	 * payload.  Three zero bytes are stored whatever the count: the ICRC
	 * then overwrites those past the pad (the buffer holds them). */
	l4_len = UDP_HLEN + info->hdr_len + paylen + pad;
	e->tx[BTH_OFF + 1] = (uint8_t)((e->tx[BTH_OFF + 1] & ~BTH_PAD_MASK) | (pad << 4));
	memset(e->tx + BTH_OFF + info->hdr_len + paylen, 0, 3);
	if (t->flags)
		return tx_send6(e, t, l4_len);
	ip_len = IPV4_HLEN + l4_len;
	put_be16(ip + 2, (uint16_t)(ip_len + ICRC_LEN));
	put_be16(ip + IPV4_HLEN + 4, (uint16_t)(l4_len + ICRC_LEN));
	/* RFC 791 checksum: the template's sum plus the total length (RFC
	 * 1624: the other fields are the template's). */
	csum = (uint16_t)~csum16_add(t->ip_sum, (uint16_t)(ip_len + ICRC_LEN));
	put_be16(ip + 10, csum);
	put_le32(ip + ip_len, rocev2_icrc(ip, ip_len));
	return tx_out(e, f, ETH_HLEN + ip_len + ICRC_LEN);
}
