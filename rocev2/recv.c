/* Receive demux: one Ethernet frame in, at most one packet out to the
 * responder (requests) or the completer (responses).  rxe_recv.c's
 * rxe_rcv/hdr_check/check_type_state/check_addr in one pass over the
 * headers, outermost first, with the ICRC last (rxe does the same: the
 * cheap header checks reject foreign traffic before the CRC pass).
 *
 *   Ethernet   EtherType 0x0800 or 0x86DD, destination = our MAC
 *   IPv4       version 4, IHL 5, checksum, not a fragment, total length
 *              within the frame (Ethernet padding may follow it),
 *              destination = one of our addresses, protocol UDP
 *   IPv6       version 6, payload length within the frame, destination
 *              = one of our IPv6 GIDs, next header UDP (RoCEv2 senders
 *              use no extension headers: IBA A17.4.5.1, the GRH is the
 *              IPv6 header)
 *   UDP        destination port 4791, length = the IP payload
 *   BTH        TVer 0, a known RC opcode, default P_Key, PadCnt and
 *              length consistent with the opcode, ICRC
 *   QP         exists, its state accepts the packet, source = its peer
 *   ECN        CE-marked: the QP sends a CNP (cc.c, DCQCN notification point)
 *   CNP        (opcode 0x81) to the reaction point (cc.c); a malformed one
 *              or one for no QP has counters of its own
 *
 * Every discard is a verdict; one table maps it to its counter, so each
 * dropped frame is counted exactly once and in one place.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

enum rx_verdict {
	RX_NOT_ROCE,
	RX_SHORT,
	RX_BAD_IP,
	RX_BAD_DST,
	RX_BAD_UDP,
	RX_BAD_TVER,
	RX_BAD_OPCODE,
	RX_BAD_PKEY,
	RX_BAD_PAD,
	RX_BAD_ICRC,
	RX_NO_QP,
	RX_STALE_QP,
	RX_BAD_STATE,
	RX_BAD_SRC,
	RX_BAD_CNP,
	RX_CNP_NO_QP,
	RX_VERDICT_NUM,
};

#define RX_CNT(name) offsetof(struct rocev2_counters, name)

static const struct {
	size_t counter;                 /* offset in struct rocev2_counters */
	int err;                        /* rocev2_parse's return value */
} rx_discards[RX_VERDICT_NUM] = {
	[RX_NOT_ROCE] = { RX_CNT(rx_not_roce), -HAL_ENXIO },
	[RX_SHORT] = { RX_CNT(rx_short), -HAL_EINVAL },
	[RX_BAD_IP] = { RX_CNT(rx_bad_ip), -HAL_EINVAL },
	[RX_BAD_DST] = { RX_CNT(rx_bad_dst), -HAL_ENXIO },
	[RX_BAD_UDP] = { RX_CNT(rx_bad_udp), -HAL_EINVAL },
	[RX_BAD_TVER] = { RX_CNT(rx_bad_tver), -HAL_EINVAL },
	[RX_BAD_OPCODE] = { RX_CNT(rx_bad_opcode), -HAL_EINVAL },
	[RX_BAD_PKEY] = { RX_CNT(rx_bad_pkey), -HAL_EINVAL },
	[RX_BAD_PAD] = { RX_CNT(rx_bad_pad), -HAL_EINVAL },
	[RX_BAD_ICRC] = { RX_CNT(rx_bad_icrc), -HAL_EIO },
	[RX_NO_QP] = { RX_CNT(rx_no_qp), -HAL_ENXIO },
	[RX_STALE_QP] = { RX_CNT(rx_stale_qp), -HAL_ENXIO },
	[RX_BAD_STATE] = { RX_CNT(rx_bad_state), -HAL_EINVAL },
	[RX_BAD_SRC] = { RX_CNT(rx_bad_src), -HAL_EINVAL },
	[RX_BAD_CNP] = { RX_CNT(cnp_malformed), -HAL_EINVAL },
	[RX_CNP_NO_QP] = { RX_CNT(cnp_no_qp), -HAL_ENXIO },
};

static int rx_discard(struct rocev2 *e, enum rx_verdict v)
{
	uint64_t *counter = (uint64_t *)((uint8_t *)&e->cnt + rx_discards[v].counter);

	(*counter)++;
	return rx_discards[v].err;
}

#define IPV4_FRAG_MF     0x2000u
#define IPV4_FRAG_OFFSET 0x1fffu
/* P_Key match (IBA 10.9.3): the low 15 bits are the key, bit 15 the
 * membership.  Our only partition is the default one, which we hold as a
 * full member, so a full (0xFFFF) or limited (0x7FFF) default key matches. */
#define PKEY_BASE_MASK   0x7fffu

static int mac_equal(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, 6) == 0;   /* a 4- and a 2-byte compare where loads may be unaligned */
}

/* IPv6 (RFC 8200 3) up to UDP: 0 with *roce_len (BTH .. ICRC) and
 * *l3_len (IPv6 header .. ICRC) set, or the discard's error.  Out of line:
 * IPv4 keeps the straight path. */
static __attribute__((noinline)) int parse_ip6(struct rocev2 *e, const uint8_t *frame, size_t len,
					       struct rocev2_pkt *pkt, uint32_t *roce_len, uint32_t *l3_len)
{
	const struct ipv6_hdr *ip;
	const struct udp_hdr *udp;
	uint32_t plen;

	if (len < ETH_HLEN + IPV6_HLEN)
		return rx_discard(e, RX_SHORT);
	ip = (const struct ipv6_hdr *)(frame + ETH_HLEN);
	if (ipv6_version(ip) != 6)
		return rx_discard(e, RX_BAD_IP);
	plen = ipv6_payload_len(ip);
	/* Bytes beyond the payload are Ethernet padding (short frames). */
	if (plen > len - ETH_HLEN - IPV6_HLEN)
		return rx_discard(e, RX_SHORT);
	if (!rocev2_gid_ours6(e, ipv6_daddr(ip)))
		return rx_discard(e, RX_BAD_DST);
	/* An extension header (hop-by-hop, routing, fragment: no reassembly)
	 * would put UDP elsewhere; RoCEv2 senders send none. */
	if (ipv6_next(ip) != IPV6_NEXT_UDP)
		return rx_discard(e, RX_NOT_ROCE);
	if (plen < UDP_HLEN)
		return rx_discard(e, RX_SHORT);
	udp = (const struct udp_hdr *)(frame + ETH_HLEN + IPV6_HLEN);
	if (udp_dport(udp) != ROCEV2_UDP_DPORT)
		return rx_discard(e, RX_NOT_ROCE);
	if (udp_len(udp) != plen)
		return rx_discard(e, RX_BAD_UDP);
	pkt->l3 = ip->b;
	pkt->v6 = 1;
	pkt->udp = udp;
	e->cnt.rx_ipv6_packets++;
	*roce_len = plen - UDP_HLEN;
	*l3_len = IPV6_HLEN + plen;
	return 0;
}

int rocev2_parse(struct rocev2 *e, const uint8_t *frame, size_t len, struct rocev2_pkt *pkt)
{
	const struct eth_hdr *eth = (const struct eth_hdr *)frame;
	const struct ipv4_hdr *ip;
	const struct udp_hdr *udp;
	const struct bth *bth;
	const struct rocev2_opcode_info *info;
	uint32_t roce_len, l3_len, bth_off, hdr_len, pad, paylen, icrc;
	uint16_t type;
	int rc, v6;

	/* ---- Ethernet II ---- */
	if (len < ETH_HLEN)
		return rx_discard(e, RX_SHORT);
	type = eth_type(eth);
	if (type != ETHERTYPE_IPV4 && type != ETHERTYPE_IPV6)
		return rx_discard(e, RX_NOT_ROCE);      /* ARP, VLAN tags: not ours */
	/* RC is unicast: a broadcast or another station's frame is refused. */
	if (!mac_equal(eth_dst(eth), e->env.mac))
		return rx_discard(e, RX_BAD_DST);

	v6 = type == ETHERTYPE_IPV6;
	if (v6) {
		if ((rc = parse_ip6(e, frame, len, pkt, &roce_len, &l3_len)) != 0)
			return rc;
		bth_off = ROCEV2_HDR_OFFSET6;
	} else {
		/* ---- IPv4 (RFC 791) ---- */
		if (len < ETH_HLEN + IPV4_HLEN)
			return rx_discard(e, RX_SHORT);
		ip = (const struct ipv4_hdr *)(frame + ETH_HLEN);
		/* Version 4, IHL 5: RoCEv2 senders never use options, and the BTH
		 * offset below assumes none. */
		if (ipv4_ver_ihl(ip) != IPV4_VER_IHL)
			return rx_discard(e, RX_BAD_IP);
		if (ipv4_csum_fold(ip->b) != 0xffffu)
			return rx_discard(e, RX_BAD_IP);
		/* No reassembly: a fragment of a RoCE packet is useless alone. */
		if (ipv4_frag(ip) & (IPV4_FRAG_MF | IPV4_FRAG_OFFSET))
			return rx_discard(e, RX_BAD_IP);
		l3_len = ipv4_tot_len(ip);
		if (l3_len < IPV4_HLEN)
			return rx_discard(e, RX_BAD_IP);
		/* Bytes beyond tot_len are Ethernet padding (short frames). */
		if (l3_len > len - ETH_HLEN)
			return rx_discard(e, RX_SHORT);
		if (ipv4_daddr(ip) != e->env.ipv4 && !rocev2_gid_ours4(e, ipv4_daddr(ip)))
			return rx_discard(e, RX_BAD_DST);
		if (ipv4_proto(ip) != IPV4_PROTO_UDP)
			return rx_discard(e, RX_NOT_ROCE);

		/* ---- UDP (RFC 768); the checksum is not used by RoCEv2, the
		 * ICRC covers the packet, so a non-zero one is not checked. ---- */
		if (l3_len < IPV4_HLEN + UDP_HLEN)
			return rx_discard(e, RX_SHORT);
		udp = (const struct udp_hdr *)(frame + ETH_HLEN + IPV4_HLEN);
		if (udp_dport(udp) != ROCEV2_UDP_DPORT)
			return rx_discard(e, RX_NOT_ROCE);
		if (udp_len(udp) != l3_len - IPV4_HLEN)
			return rx_discard(e, RX_BAD_UDP);
		roce_len = l3_len - IPV4_HLEN - UDP_HLEN;      /* BTH .. ICRC */
		pkt->l3 = ip->b;
		pkt->v6 = 0;
		pkt->udp = udp;
		bth_off = ROCEV2_HDR_OFFSET;
	}

	/* ---- BTH (IBA 9.2) ---- */
	if (roce_len < BTH_LEN + ICRC_LEN)
		return rx_discard(e, RX_SHORT);
	bth = (const struct bth *)(frame + bth_off);
	if (bth_tver(bth) != 0)                          /* IBA 9.2.4: TVer 0 */
		return rx_discard(e, RX_BAD_TVER);
	info = rocev2_opcode(bth_opcode(bth));
	if (!(info->mask & OPM_VALID))                   /* not RC, or not implemented */
		return rx_discard(e, RX_BAD_OPCODE);
	if ((bth_pkey(bth) & PKEY_BASE_MASK) != (BTH_DEF_PKEY & PKEY_BASE_MASK))
		return rx_discard(e, RX_BAD_PKEY);
	hdr_len = info->hdr_len;
	pad = bth_pad(bth);
	if (roce_len < hdr_len + pad + ICRC_LEN)
		return rx_discard(e, info->mask & OPM_CNP ? RX_BAD_CNP : RX_SHORT);
	paylen = roce_len - hdr_len - pad - ICRC_LEN;
	/* IBA 9.2: PadCnt rounds the payload to 4 bytes; an opcode without
	 * payload (READ request, atomics) has neither.  RESUME and ACK carry
	 * the migration payloads (multiples of 4, no pad); their exact
	 * lengths are migrate.c's business, not the demux's. */
	if (info->mask & OPM_PAYLOAD ? ((paylen + pad) & 3u) != 0 : (pad | paylen) != 0)
		return rx_discard(e, info->mask & OPM_CNP ? RX_BAD_CNP : RX_BAD_PAD);
	/* IBA A17.9.2: a CNP has BECN set.  Refused here, so that a frame is
	 * counted once: a CNP that reaches cc.c is cnp_received and valid. */
	if ((info->mask & OPM_CNP) && !bth_becn(bth))
		return rx_discard(e, RX_BAD_CNP);

	/* ---- ICRC (IBA A17.3.3): over the IP header .. pad.  (Offsets are
	 * taken from frame, never from the small wire structs' arrays, which
	 * must not be indexed past their own size.) ---- */
	icrc = v6 ? rocev2_icrc6(frame + ETH_HLEN, l3_len - ICRC_LEN)
		  : rocev2_icrc(frame + ETH_HLEN, l3_len - ICRC_LEN);
	if (icrc != get_le32(frame + ETH_HLEN + l3_len - ICRC_LEN))
		return rx_discard(e, RX_BAD_ICRC);

	pkt->frame = frame;
	pkt->len = ETH_HLEN + l3_len;           /* without Ethernet padding */
	pkt->bth = bth;
	pkt->info = info;
	pkt->opcode = bth_opcode(bth);
	pkt->ackreq = (uint8_t)bth_ackreq(bth);
	pkt->psn = bth_psn(bth);
	pkt->qpn = bth_qpn(bth);
	pkt->payload = frame + bth_off + hdr_len;
	pkt->paylen = paylen;
	return 0;
}

/* Which packets a QP state accepts (IBA 10.3.1; rxe check_type_state):
 * the responder runs from RTR on, the requester from RTS; SQD and SQE
 * still receive both (outstanding requests complete, the receive queue
 * keeps working).  RESET, INIT and ERR drop everything (an ERR QP has
 * flushed its queues; a late response must not complete anything).  A QP
 * resumed in RTR takes no response either: its RESUME, and so the ACK it
 * waits for, only go out at RTS (migrate.c header comment). */
static const uint32_t rx_state_accepts[ROCEV2_QPS_NUM] = {
	[ROCEV2_QPS_RESET] = 0,
	[ROCEV2_QPS_INIT] = 0,
	[ROCEV2_QPS_RTR] = OPM_REQ,
	[ROCEV2_QPS_RTS] = OPM_REQ | OPM_RESP | OPM_CNP,
	[ROCEV2_QPS_SQD] = OPM_REQ | OPM_RESP | OPM_CNP,
	[ROCEV2_QPS_SQE] = OPM_REQ | OPM_RESP | OPM_CNP,
	[ROCEV2_QPS_ERR] = 0,
};

/* Where an accepted packet goes, by opcode class. */
static const struct {
	uint32_t mask;
	size_t counter;
	void (*stage)(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt);
} rx_stages[] = {
	{ OPM_REQ, RX_CNT(rx_req_packets), rocev2_resp_rx },
	{ OPM_RESP, RX_CNT(rx_resp_packets), rocev2_comp_rx },
	{ OPM_CNP, RX_CNT(cnp_received), rocev2_cc_cnp_rx },
};

/* The packet's source is the QP's peer: the same family and address. */
static inline int from_peer(const struct rocev2_pkt *p, const struct rocev2_av *av)
{
	if (p->v6)
		return memcmp(ipv6_saddr((const struct ipv6_hdr *)p->l3), av->dgid, ROCEV2_GID_LEN) == 0;
	return mnic_gid_is_v4(av->dgid) && memcmp(p->l3 + 12, av->dgid + 12, 4) == 0;
}

/* The ECN field (RFC 3168 5): the TOS's or the traffic class's low bits. */
static inline unsigned pkt_ecn(const struct rocev2_pkt *p)
{
	return (p->v6 ? p->l3[1] >> 4 : p->l3[1]) & IPV4_ECN_MASK;
}

void rocev2_rx(struct rocev2 *e, const uint8_t *frame, size_t len)
{
	struct rocev2_pkt pkt;
	struct rocev2_qp *qp;
	uint32_t mask;
	unsigned i;

	e->cnt.rx_frames++;
	if (rocev2_ethq_rx(e, frame, len))
		return;
	if (rocev2_parse(e, frame, len, &pkt) < 0)
		return;
	qp = rocev2_qp_lookup(e, pkt.qpn);
	if (!qp) {
		rx_discard(e, pkt.info->mask & OPM_CNP      ? RX_CNP_NO_QP
			      : rocev2_qpn_stale(e, pkt.qpn) ? RX_STALE_QP
							     : RX_NO_QP);
		return;
	}
	mask = pkt.info->mask;
	if (qp->state >= ROCEV2_QPS_NUM || !(rx_state_accepts[qp->state] & mask)) {
		rx_discard(e, RX_BAD_STATE);
		return;
	}
	/* rxe check_addr: only the QP's peer may talk to it.  MigrOS: a
	 * peer that has moved announces its new address with RESUME, the one
	 * frame not held to the old address (reference 1(c); resp.c decides
	 * whether to follow it).  Everything else, to a paused QP too, comes
	 * from av.dgid: the moved peer sends nothing before its RESUME is
	 * ACKed, which has moved av.dgid. */
	if (!(mask & OPM_RESUME) && !from_peer(&pkt, &qp->attr.av)) {
		rx_discard(e, RX_BAD_SRC);
		return;
	}
	/* DCQCN notification point (cc.c): a packet a switch marked CE
	 * (RFC 3168) asks its sender to slow down.  One branch when unmarked. */
	if (pkt_ecn(&pkt) == IPV4_ECN_CE && !(mask & OPM_CNP))
		rocev2_cc_ce(e, qp);
	for (i = 0; i < sizeof(rx_stages) / sizeof(rx_stages[0]); i++)
		if (mask & rx_stages[i].mask) {
			(*(uint64_t *)((uint8_t *)&e->cnt + rx_stages[i].counter))++;
			rx_stages[i].stage(e, qp, &pkt);
			return;
		}
	rx_discard(e, RX_BAD_OPCODE);   /* a table row with neither class */
}
