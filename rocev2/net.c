/* Transmit framing: every RoCEv2 frame the engine sends is laid out here.
 *
 *   0            14            34        42    54            hdr_len
 *   +------------+-------------+---------+-----+------------+---------+-----+------+
 *   | Ethernet II| IPv4 (no    | UDP     | BTH | RETH/AETH/ | payload | pad | ICRC |
 *   | dmac smac  | options, DF)| ->4791  |     | ... (table)| 0..MTU  | 0-3 | LE32 |
 *   +------------+-------------+---------+-----+------------+---------+-----+------+
 *
 * The first 50 bytes depend only on the QP and the port: each QP keeps
 * them as a template (internal.h struct rocev2_tx_tmpl), built by
 * tx_tmpl_build() when stale.  rocev2_tx_prepare() copies it and patches
 * the BTH's per-packet bytes; the stage fills the extension headers and
 * copies the payload in place; rocev2_tx_send() then writes the lengths
 * and pad, the IPv4 checksum (the template's sum plus the total length,
 * RFC 1624) and the ICRC, and hands the frame to the port.  One frame
 * buffer per engine (e->tx): frames are built and sent one at a time,
 * run to completion.  Frames under 60 bytes are padded by the port driver
 * (hal/eth.h), outside the IP length, so not here.
 */
#include <string.h>

#include "internal.h"

#define IP_OFF  ETH_HLEN
#define UDP_OFF (ETH_HLEN + IPV4_HLEN)
#define BTH_OFF ROCEV2_HDR_OFFSET
/* Largest payload the frame buffer holds (ROCEV2_TX_MAX: 4096-byte MTU). */
#define TX_MAX_PAYLOAD 4096u
_Static_assert(ROCEV2_HDR_OFFSET + ROCEV2_MAX_HDR + TX_MAX_PAYLOAD + 3u + ICRC_LEN <= ROCEV2_TX_MAX,
	       "e->tx holds the largest frame");

/* The extension headers' zeroing in tx_prepare: from the first 8-byte
 * boundary after the BTH to one at or past the largest header set. */
#define TX_ZERO_OFF 56u
#define TX_ZERO_END 128u
_Static_assert(TX_ZERO_OFF == BTH_OFF + BTH_LEN + 2u && TX_ZERO_OFF % 8u == 0,
	       "two bytes, then words");
_Static_assert(TX_ZERO_END >= BTH_OFF + ROCEV2_MAX_HDR && TX_ZERO_END <= ROCEV2_TX_MAX,
	       "every extension header byte, inside the buffer");

/* IBA 9.2 / RoCEv2 annex: the transport packet (BTH..ICRC) is a multiple
 * of 4 bytes; PadCnt says how many pad bytes follow the payload. */
static inline unsigned pad_count(uint32_t paylen)
{
	return (unsigned)(-paylen & 3u);
}

/* The QP's template (internal.h): everything of Ethernet, IPv4, UDP and
 * the BTH's first 8 bytes that is the same in each of its packets, with
 * the per-packet fields zero. */
static ROCEV2_CTL __attribute__((noinline)) void tx_tmpl_build(struct rocev2 *e, struct rocev2_qp *qp)
{
	const struct rocev2_av *av = &qp->attr.av;
	uint8_t *f = qp->tmpl.b;
	uint8_t *ip = f + IP_OFF, *udp = f + UDP_OFF;

	memset(f, 0, sizeof(qp->tmpl.b));
	/* Ethernet II: the host resolved the peer's MAC into the AV. */
	memcpy(f, av->dmac, 6);
	memcpy(f + 6, e->env.mac, 6);
	put_be16(f + 12, ETHERTYPE_IPV4);

	/* IPv4 (RFC 791): no options, never fragmented (DF: the path MTU
	 * bounds every RoCE packet), id 0 as an atomic datagram may use
	 * (RFC 6864 4.1).  Total length and checksum: tx_send. */
	ip[0] = IPV4_VER_IHL;
	/* ECN (RFC 3168): ECT(0) in the low bits of the host's TOS unless
	 * DCQCN's ECT flag is off (cc.c); the ICRC masks the byte (IBA
	 * A17.3.3), so a switch may mark CE on the way. */
	ip[1] = (uint8_t)((av->tos & e->tos_keep) | e->tos_ecn);
	put_be16(ip + 6, IPV4_FLAG_DF);
	ip[8] = av->ttl;
	ip[9] = IPV4_PROTO_UDP;
	put_be32(ip + 12, e->env.ipv4);
	put_be32(ip + 16, av->dip);
	qp->tmpl.ip_sum = ipv4_csum_fold(ip);

	/* UDP (RFC 768): fixed source port per QP so one flow keeps one ECMP
	 * path (rxe_qp.c); checksum 0, as RoCEv2 (IBA annex A17) sends it:
	 * the ICRC protects the packet end to end. */
	put_be16(udp, qp->sport);
	put_be16(udp + 2, ROCEV2_UDP_DPORT);

	/* BTH (IBA 9.2) bytes 2..7: default P_Key, FECN/BECN 0, DestQP. */
	put_be16(f + BTH_OFF + 2, BTH_DEF_PKEY);
	put_be24(f + BTH_OFF + 5, qp->attr.dest_qp_num & BTH_QPN_MASK);
	qp->tmpl.gen = e->tmpl_gen + 1u;
}

void rocev2_tx_prepare(struct rocev2 *e, struct rocev2_qp *qp, struct rocev2_tx *t,
		       uint8_t opcode, uint32_t psn, int ackreq, int se, uint32_t paylen)
{
	const struct rocev2_opcode_info *info = rocev2_opcode(opcode);
	uint8_t *f = e->tx, *bth = f + BTH_OFF;

	if (qp->tmpl.gen != e->tmpl_gen + 1u)
		tx_tmpl_build(e, qp);
	/* Both arrays are 8-byte aligned (internal.h), which the compiler sees
	 * through the member names: word copies even on boards built with
	 * strict alignment. */
	memcpy(e->tx, qp->tmpl.b, ROCEV2_TMPL_LEN);
	/* BTH (IBA 9.2): TVer 0, MigReq 0; PadCnt follows the payload
	 * (tx_send). */
	bth[0] = opcode;
	bth[1] = se ? BTH_SE : 0;
	put_be32(bth + 8, (ackreq ? (uint32_t)BTH_ACKREQ << 24 : 0u) | (psn & BTH_PSN_MASK));
	/* Extension headers start zeroed: a field a stage forgets (e.g. the
	 * RESUME AETH, sent as zero) never leaks a previous frame's bytes.
	 * The largest set is cleared whatever the opcode (a fixed size costs
	 * a few stores; what lies past this opcode's headers is payload):
	 * bytes 54..55, then 56..127 as aligned words. */
	bth[BTH_LEN] = 0;
	bth[BTH_LEN + 1] = 0;
	memset(e->tx + TX_ZERO_OFF, 0, TX_ZERO_END - TX_ZERO_OFF);

	t->frame = f;
	t->bth = bth;
	t->payload = bth + info->hdr_len;
	t->paylen = paylen;
	t->ip_sum = qp->tmpl.ip_sum;
	t->opcode = opcode;
}

int rocev2_tx_send(struct rocev2 *e, struct rocev2_tx *t)
{
	const struct rocev2_opcode_info *info = rocev2_opcode(t->opcode);
	uint8_t *f = e->tx;
	uint32_t paylen = t->paylen;
	unsigned pad = pad_count(paylen);
	size_t ip_len, frame_len;
	uint16_t csum;
	int rc;

	/* Stage contract (internal.h): t came from tx_prepare, the opcode is
	 * one we know and its payload fits.  A violation is our bug, not the
	 * peer's: refuse the frame rather than send garbage. */
	if (t->frame != f || !(info->mask & OPM_VALID) || paylen > TX_MAX_PAYLOAD ||
	    (paylen && !(info->mask & OPM_PAYLOAD))) {
		e->cnt.tx_errors++;
		return -HAL_EINVAL;
	}
	/* IBA 9.2 / RoCEv2 annex: the transport packet (BTH..ICRC) is a
	 * multiple of 4 bytes; PadCnt says how many zero bytes follow the
	 * payload.  Three zero bytes are stored whatever the count: the ICRC
	 * then overwrites those past the pad (the buffer holds them). */
	ip_len = IPV4_HLEN + UDP_HLEN + info->hdr_len + paylen + pad;
	put_be16(f + IP_OFF + 2, (uint16_t)(ip_len + ICRC_LEN));
	put_be16(f + UDP_OFF + 4, (uint16_t)(ip_len + ICRC_LEN - IPV4_HLEN));
	f[BTH_OFF + 1] = (uint8_t)((f[BTH_OFF + 1] & ~BTH_PAD_MASK) | (pad << 4));
	memset(f + BTH_OFF + info->hdr_len + paylen, 0, 3);
	/* RFC 791 checksum: the template's sum plus the total length (RFC
	 * 1624: the other fields are the template's). */
	csum = (uint16_t)~csum16_add(t->ip_sum, (uint16_t)(ip_len + ICRC_LEN));
	put_be16(f + IP_OFF + 10, csum);

	/* IBA A17.3.3: ICRC after the pad, least significant byte first. */
	put_le32(f + IP_OFF + ip_len, rocev2_icrc(f + IP_OFF, ip_len));
	frame_len = ETH_HLEN + ip_len + ICRC_LEN;

	rc = e->env.tx(e->env.ctx, f, frame_len);
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
