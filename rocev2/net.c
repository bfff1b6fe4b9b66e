/* Transmit framing: every RoCEv2 frame the engine sends is laid out here.
 *
 *   0            14            34        42    54            hdr_len
 *   +------------+-------------+---------+-----+------------+---------+-----+------+
 *   | Ethernet II| IPv4 (no    | UDP     | BTH | RETH/AETH/ | payload | pad | ICRC |
 *   | dmac smac  | options, DF)| ->4791  |     | ... (table)| 0..MTU  | 0-3 | LE32 |
 *   +------------+-------------+---------+-----+------------+---------+-----+------+
 *
 * rocev2_tx_prepare() writes everything that does not depend on the
 * caller's work (addresses, ports, BTH); the stage fills the extension
 * headers and copies the payload in place; rocev2_tx_send() then fixes the
 * lengths, pad, IPv4 checksum and ICRC and hands the frame to the port.
 * One frame buffer per engine (e->tx): frames are built and sent one at a
 * time, run to completion.  Frames under 60 bytes are padded by the port
 * driver (hal/eth.h), outside the IP length, so not here.
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

/* IBA 9.2 / RoCEv2 annex: the transport packet (BTH..ICRC) is a multiple
 * of 4 bytes; PadCnt says how many pad bytes follow the payload. */
static inline unsigned pad_count(uint32_t paylen)
{
	return (unsigned)(-paylen & 3u);
}

/* Lengths and PadCnt for paylen bytes of payload: written by both calls so
 * that the frame is consistent even if a stage shortened t->paylen. */
static void tx_set_lengths(uint8_t *f, const struct rocev2_opcode_info *info, uint32_t paylen)
{
	unsigned pad = pad_count(paylen);
	uint32_t udp_len = UDP_HLEN + info->hdr_len + paylen + pad + ICRC_LEN;

	put_be16(f + IP_OFF + 2, (uint16_t)(IPV4_HLEN + udp_len));
	put_be16(f + UDP_OFF + 4, (uint16_t)udp_len);
	f[BTH_OFF + 1] = (uint8_t)((f[BTH_OFF + 1] & ~BTH_PAD_MASK) | (pad << 4));
}

void rocev2_tx_prepare(struct rocev2 *e, const struct rocev2_qp *qp, struct rocev2_tx *t,
		       uint8_t opcode, uint32_t psn, int ackreq, int se, uint32_t paylen)
{
	const struct rocev2_opcode_info *info = rocev2_opcode(opcode);
	const struct rocev2_av *av = &qp->attr.av;
	uint8_t *f = e->tx;
	uint8_t *ip = f + IP_OFF, *udp = f + UDP_OFF;
	/* Lay out no more than the buffer holds; tx_send refuses the frame. */
	uint32_t layout_len = paylen <= TX_MAX_PAYLOAD ? paylen : 0;

	/* Ethernet II: the host resolved the peer's MAC into the AV. */
	memcpy(f, av->dmac, 6);
	memcpy(f + 6, e->env.mac, 6);
	put_be16(f + 12, ETHERTYPE_IPV4);

	/* IPv4 (RFC 791): no options, never fragmented (DF: the path MTU
	 * bounds every RoCE packet), id 0 as an atomic datagram may use
	 * (RFC 6864 4.1). */
	ip[0] = IPV4_VER_IHL;
	/* ECN (RFC 3168): ECT(0) in the low bits of the host's TOS unless
	 * DCQCN's ECT flag is off (cc.c); the ICRC masks the byte (IBA
	 * A17.3.3), so a switch may mark CE on the way. */
	ip[1] = (uint8_t)((av->tos & e->tos_keep) | e->tos_ecn);
	put_be16(ip + 4, 0);
	put_be16(ip + 6, IPV4_FLAG_DF);
	ip[8] = av->ttl;
	ip[9] = IPV4_PROTO_UDP;
	put_be16(ip + 10, 0);                   /* checksum: tx_send */
	put_be32(ip + 12, e->env.ipv4);
	put_be32(ip + 16, av->dip);

	/* UDP (RFC 768): fixed source port per QP so one flow keeps one ECMP
	 * path (rxe_qp.c); checksum 0, as RoCEv2 (IBA annex A17) sends it:
	 * the ICRC protects the packet end to end. */
	put_be16(udp, qp->sport);
	put_be16(udp + 2, ROCEV2_UDP_DPORT);
	put_be16(udp + 6, 0);

	/* BTH (IBA 9.2): default P_Key, TVer 0, MigReq 0. */
	bth_init((struct bth *)(f + BTH_OFF), opcode, se, pad_count(layout_len), BTH_DEF_PKEY,
		 qp->attr.dest_qp_num, ackreq, psn);
	/* Extension headers start zeroed: a field a stage forgets (e.g. the
	 * RESUME AETH, sent as zero) never leaks a previous frame's bytes. */
	memset(f + BTH_OFF + BTH_LEN, 0, (size_t)(info->hdr_len > BTH_LEN ? info->hdr_len - BTH_LEN : 0));
	tx_set_lengths(f, info, layout_len);

	t->frame = f;
	t->bth = f + BTH_OFF;
	t->payload = f + BTH_OFF + info->hdr_len;
	t->paylen = paylen;
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
	tx_set_lengths(f, info, paylen);
	memset(f + BTH_OFF + info->hdr_len + paylen, 0, pad);   /* pad bytes are zero (IBA 9.2) */

	put_be16(f + IP_OFF + 10, 0);
	csum = (uint16_t)~ipv4_csum_fold(f + IP_OFF);
	put_be16(f + IP_OFF + 10, csum);

	ip_len = IPV4_HLEN + UDP_HLEN + info->hdr_len + paylen + pad;
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
