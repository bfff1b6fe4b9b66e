/* RoCEv2 over IPv6 (issue 19 item 1): the port's GID table (gid.c), the
 * IPv6 transmit template (net.c), the receive checks (recv.c) and the
 * ICRC over the masked IPv6 header (icrc.c).
 *
 * ipv6_send_only_frame was built in python3 from the wire formats (RFC
 * 8200 3 header, RFC 768, IBA 9.2 BTH) with the ICRC as zlib.crc32 of
 * b'\xff' * 8 + the IPv6 header with traffic class, flow label and hop
 * limit as ones (byte 0 0x6f, bytes 1..3 and 7 0xff; IBA A17.3.3), the UDP
 * header with its checksum as ones, the BTH with byte 4 as ones, and the
 * payload and pad, stored little-endian, and the UDP checksum over the
 * RFC 8200 8.1 pseudo-header and the datagram with the ICRC: not with this
 * code.  The frames
 * the engine sends go through the receive side of a second engine and
 * through an ICRC computed here with zlib the same way.
 *
 * Build: test_ipv6.c recv_doubles.c rocev2/recv.c rocev2/net.c rocev2/gid.c
 * rocev2/icrc.c rocev2/opcode.c (unit.mk). */
#include "cmocka_main.h"

#include <string.h>
#include <zlib.h>

#include "rocev2/internal.h"

struct recv_delivery {
	const struct rocev2_qp *qp;
	struct rocev2_pkt pkt;
	uint8_t payload[64];
};
extern struct recv_delivery recv_resp_calls[8], recv_comp_calls[8];
extern unsigned recv_n_resp, recv_n_comp, recv_n_lookup;
extern uint32_t recv_stale_qpn;

static const uint8_t our_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t our_gid[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t peer_gid[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };
static const uint8_t our_ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t peer_ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };
#define OUR_IP   0x0a000001u
#define OUR_QPN  0x000011u
#define PEER_QPN 0x000123u

/* fd00::1 -> fd00::2, SEND_ONLY, AckReq, PSN 0xabcd, DestQP 0x123, sport
 * 0xdf94 (QPN 17), traffic class 0x68, flow label 0x12345, hop limit 64,
 * payload "hello", PadCnt 3, UDP checksum 0x5493. */
static const uint8_t ipv6_send_only_frame[86] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x66, 0x81, 0x23, 0x45, 0x00, 0x20, 0x11, 0x40, 0xfd, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xdf, 0x94, 0x12, 0xb7, 0x00, 0x20,
	0x54, 0x93, 0x04, 0x30, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23, 0x80, 0x00,
	0xab, 0xcd, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00, 0x41, 0x3b,
	0x08, 0x9c,
};

/* ---- fixture: eng (ours) sends and receives; peer's QP addresses us ----- */
static struct rocev2 eng, peer;
static struct rocev2_qp *qp, *pqp;
static struct hal_dma dma;
static uint8_t host_mem[4096];
static uint8_t wire[ROCEV2_TX_MAX];
static size_t wire_len;
static unsigned tx_calls;

static int capture_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	assert_true(len <= sizeof(wire));
	memcpy(wire, frame, len);
	wire_len = len;
	tx_calls++;
	return 0;
}

static uint64_t fake_now(void *ctx)
{
	(void)ctx;
	return 0;
}

static void env_init(struct rocev2 *e, const uint8_t *mac, uint32_t ip)
{
	memset(e, 0, sizeof(*e));
	e->env.tx = capture_tx;
	e->env.now_ns = fake_now;
	e->env.dma = &dma;
	memcpy(e->env.mac, mac, 6);
	e->env.ipv4 = ip;
	e->boot_ipv4 = ip;
	e->tos_keep = 0xff;             /* ECT off: the AV's traffic class as it is */
}

static struct rocev2_qp *qp_init(struct rocev2 *e, unsigned slot, uint32_t qpn, uint32_t dqpn,
				 const uint8_t *dmac, const uint8_t *dgid, uint8_t sgid_index)
{
	struct rocev2_qp *q = &e->qps[slot];

	q->in_use = 1;
	q->qpn = qpn;
	q->state = ROCEV2_QPS_RTS;
	q->sport = rocev2_udp_sport(qpn);
	q->attr.dest_qp_num = dqpn;
	memcpy(q->attr.av.dmac, dmac, 6);
	memcpy(q->attr.av.dgid, dgid, 16);
	q->attr.av.sgid_index = sgid_index;
	q->attr.av.ttl = 64;
	q->attr.av.tos = 0x68;
	q->attr.av.flow_label = 0x12345;
	q->mtu = 1024;
	return q;
}

static int setup(void **state)
{
	(void)state;
	hal_dma_window_init(&dma, host_mem, sizeof(host_mem));
	env_init(&eng, our_mac, OUR_IP);
	env_init(&peer, peer_mac, 0x0a000002u);
	/* our table: 0 link-local, 1 an IPv4 address, 2 a global IPv6 one */
	assert_int_equal(rocev2_set_gid(&eng, 0, our_ll), 0);
	{
		uint8_t g4[16];

		mnic_gid_from_ipv4(g4, OUR_IP);
		assert_int_equal(rocev2_set_gid(&eng, 1, g4), 0);
	}
	assert_int_equal(rocev2_set_gid(&eng, 2, our_gid), 0);
	assert_int_equal(rocev2_set_gid(&peer, 0, peer_ll), 0);
	assert_int_equal(rocev2_set_gid(&peer, 3, peer_gid), 0);
	qp = qp_init(&eng, 3, OUR_QPN, PEER_QPN, peer_mac, peer_gid, 2);
	pqp = qp_init(&peer, 5, PEER_QPN, OUR_QPN, our_mac, our_gid, 3);
	recv_n_resp = recv_n_comp = recv_n_lookup = 0;
	memset(recv_resp_calls, 0, sizeof(recv_resp_calls));
	wire_len = 0;
	tx_calls = 0;
	return 0;
}

static void send_hello(struct rocev2 *e, struct rocev2_qp *q, int expect_rc)
{
	struct rocev2_tx t;

	rocev2_tx_prepare(e, q, &t, OP_SEND_ONLY, 0xabcd, 1, 0, 5);
	memcpy(t.payload, "hello", 5);
	assert_int_equal(rocev2_tx_send(e, &t), expect_rc);
}

/* The ICRC of an IPv6 frame (f: Ethernet on), computed here with zlib from
 * the masks IBA A17.3.3 names. */
static uint32_t zlib_icrc6(const uint8_t *f, size_t len)
{
	uint8_t m[2048];
	size_t n = len - ETH_HLEN - ICRC_LEN;

	assert_true(8 + n <= sizeof(m));
	memset(m, 0xff, 8);
	memcpy(m + 8, f + ETH_HLEN, n);
	m[8] |= 0x0f;                           /* traffic class, high half */
	m[9] = m[10] = m[11] = 0xff;            /* traffic class, flow label */
	m[8 + 7] = 0xff;                        /* hop limit */
	m[8 + 46] = m[8 + 47] = 0xff;           /* UDP checksum */
	m[8 + 52] = 0xff;                       /* BTH byte 4 */
	return (uint32_t)crc32(0, m, (uInt)(8 + n));
}

/* RFC 8200 8.1 / RFC 768: the frame's UDP checksum verifies (the sum over
 * the pseudo-header and the datagram, its checksum field included, is
 * 0xFFFF), computed here 16 bits at a time. */
static int udp6_checksum_ok(const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + ETH_HLEN, *udp = ip + IPV6_HLEN;
	size_t n = len - ETH_HLEN - IPV6_HLEN, i;
	uint32_t s = IPV6_NEXT_UDP + (uint32_t)n;

	for (i = 8; i < 40; i += 2)
		s += (uint32_t)ip[i] << 8 | ip[i + 1];
	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)udp[i] << 8 | udp[i + 1];
	if (n & 1)
		s += (uint32_t)udp[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffffu) + (s >> 16);
	return s == 0xffffu && get_be16(udp + 6) != 0;
}

/* ---- the ICRC ------------------------------------------------------------- */

/* Every engine agrees with the recorded frame's ICRC and with zlib, and
 * every masked field is masked: changing it leaves the ICRC, changing an
 * invariant byte does not. */
static void test_ipv6_icrc_masks(void **state)
{
	const uint8_t *ip = ipv6_send_only_frame + ETH_HLEN;
	size_t len = sizeof(ipv6_send_only_frame) - ETH_HLEN - ICRC_LEN;
	uint32_t want = get_le32(ipv6_send_only_frame + sizeof(ipv6_send_only_frame) - 4);
	static const unsigned masked[] = { 0, 1, 2, 3, 7, 46, 47, 52 };
	uint8_t f[sizeof(ipv6_send_only_frame)];
	unsigned i;

	(void)state;
	assert_int_equal(rocev2_icrc6(ip, len), want);
	assert_int_equal(rocev2_icrc6_by(crc32_ieee_raw, ip, len), want);
	assert_int_equal(zlib_icrc6(ipv6_send_only_frame, sizeof(ipv6_send_only_frame)), want);
	for (i = 0; i < sizeof(masked) / sizeof(masked[0]); i++) {
		memcpy(f, ipv6_send_only_frame, sizeof(f));
		/* byte 0: only its low nibble (the version stays 6) */
		f[ETH_HLEN + masked[i]] ^= masked[i] == 0 ? 0x0f : 0xa5;
		assert_int_equal(rocev2_icrc6(f + ETH_HLEN, len), want);
	}
	for (i = 0; i < len; i++) {
		unsigned k, is_masked = 0;

		for (k = 0; k < sizeof(masked) / sizeof(masked[0]); k++)
			is_masked |= masked[k] == i && i != 0;
		if (is_masked)
			continue;
		memcpy(f, ipv6_send_only_frame, sizeof(f));
		f[ETH_HLEN + i] ^= i == 0 ? 0x10 : 0x01;    /* byte 0: its version bits */
		if (rocev2_icrc6(f + ETH_HLEN, len) == want)
			fail_msg("IPv6 ICRC does not cover byte %u", i);
	}
	/* Not the IPv4 ICRC over the same bytes. */
	assert_int_not_equal(rocev2_icrc(ip, len), want);
}

/* ---- transmit ------------------------------------------------------------- */

/* A QP whose destination GID is IPv6 sends the frame byte for byte: the
 * template's IPv6 header from its AV and its sgid_index's entry. */
static void test_ipv6_send_only_byte_exact(void **state)
{
	(void)state;
	memset(eng.tx, 0xa5, sizeof(eng.tx));
	send_hello(&eng, qp, 0);
	assert_int_equal(tx_calls, 1);
	assert_int_equal(wire_len, sizeof(ipv6_send_only_frame));
	assert_int_equal(get_be16(wire + 12), ETHERTYPE_IPV6);
	assert_int_equal(wire[14] >> 4, 6);
	assert_memory_equal(wire + 22, our_gid, 16);            /* sgid_index 2's entry */
	assert_memory_equal(wire + 38, peer_gid, 16);
	assert_memory_equal(wire, ipv6_send_only_frame, sizeof(ipv6_send_only_frame));
	assert_true(udp6_checksum_ok(wire, wire_len));
	assert_int_equal(eng.cnt.tx_packets, 1);
	assert_int_equal(eng.cnt.tx_bytes, sizeof(ipv6_send_only_frame));
}

/* The frame's length fields follow the packet (a WRITE with a RETH and a
 * payload that needs no pad), and its ICRC is zlib's. */
static void test_ipv6_write_lengths(void **state)
{
	const struct rocev2_opcode_info *info = rocev2_opcode(OP_WRITE_ONLY);
	struct rocev2_tx t;
	unsigned i;

	(void)state;
	rocev2_tx_prepare(&eng, qp, &t, OP_WRITE_ONLY, 7, 1, 0, 256);
	assert_ptr_equal(t.frame, eng.tx + ROCEV2_TX_BTH - ROCEV2_HDR_OFFSET6);
	assert_ptr_equal(t.bth, eng.tx + ROCEV2_TX_BTH);
	reth_init((struct reth *)(t.bth + info->reth), 0x1000, 0x4242, 256);
	for (i = 0; i < 256; i++)
		t.payload[i] = (uint8_t)i;
	assert_int_equal(rocev2_tx_send(&eng, &t), 0);
	assert_int_equal(wire_len, ETH_HLEN + IPV6_HLEN + UDP_HLEN + BTH_LEN + RETH_LEN + 256 + ICRC_LEN);
	assert_int_equal(get_be16(wire + 18), UDP_HLEN + BTH_LEN + RETH_LEN + 256 + ICRC_LEN);
	assert_int_equal(get_be16(wire + 54 + 4), UDP_HLEN + BTH_LEN + RETH_LEN + 256 + ICRC_LEN);
	assert_int_equal(wire[62 + 1] & 0x30, 0);               /* PadCnt 0 */
	assert_int_equal(get_le32(wire + wire_len - 4), zlib_icrc6(wire, wire_len));
	assert_true(udp6_checksum_ok(wire, wire_len));
	/* odd payload lengths and every pad count */
	for (i = 1; i <= 9; i++) {
		rocev2_tx_prepare(&eng, qp, &t, OP_SEND_ONLY, 8, 1, 0, i);
		memset(t.payload, (int)(0xf0 + i), i);
		assert_int_equal(rocev2_tx_send(&eng, &t), 0);
		assert_int_equal(get_le32(wire + wire_len - 4), zlib_icrc6(wire, wire_len));
		if (!udp6_checksum_ok(wire, wire_len))
			fail_msg("UDP checksum wrong at payload %u", i);
	}
}

/* Source address rules (rocev2.h rocev2_set_gid): an sgid_index of the
 * other family or unset falls back to the port's first address of the
 * destination's family and scope; with none the QP sends nothing and says
 * so (tx_no_gid), and sends again once the host gives it one. */
static void test_ipv6_source_selection(void **state)
{
	uint8_t src[16];

	(void)state;
	qp->attr.av.sgid_index = 1;                             /* the IPv4 entry */
	rocev2_tx_tmpl_stale(qp);
	assert_int_equal(rocev2_qp_sgid(&eng, qp, src), 0);
	assert_memory_equal(src, our_gid, 16);                  /* the global one, not fe80:: */
	memcpy(qp->attr.av.dgid, peer_ll, 16);
	assert_int_equal(rocev2_qp_sgid(&eng, qp, src), 0);
	assert_memory_equal(src, our_ll, 16);                   /* link-local to link-local */
	send_hello(&eng, qp, 0);
	assert_memory_equal(wire + 22, our_ll, 16);
	/* an IPv4 peer from an IPv6 entry: the port's IPv4 address */
	qp->attr.av.sgid_index = 2;
	rocev2_av_set_ipv4(&qp->attr.av, 0x0a000002u);
	rocev2_tx_tmpl_stale(qp);
	send_hello(&eng, qp, 0);
	assert_int_equal(get_be16(wire + 12), ETHERTYPE_IPV4);
	assert_int_equal(get_be32(wire + 14 + 12), OUR_IP);
	/* no IPv6 address at all: refused, counted, nothing on the wire */
	memcpy(qp->attr.av.dgid, peer_gid, 16);
	rocev2_tx_tmpl_stale(qp);
	assert_int_equal(rocev2_set_gid(&eng, 0, NULL), 0);
	assert_int_equal(rocev2_set_gid(&eng, 2, NULL), 0);
	tx_calls = 0;
	send_hello(&eng, qp, -HAL_ENXIO);
	assert_int_equal(tx_calls, 0);
	assert_int_equal(eng.cnt.tx_no_gid, 1);
	assert_int_equal(rocev2_set_gid(&eng, 7, our_gid), 0);  /* the table changed: rebuilt */
	send_hello(&eng, qp, 0);
	assert_int_equal(tx_calls, 1);
	assert_memory_equal(wire + 22, our_gid, 16);
}

/* What a GID table entry may hold (rocev2_gid_unicast). */
static void test_ipv6_gid_table_refuses(void **state)
{
	static const uint8_t any[16], loop[16] = { [15] = 1 };
	static const uint8_t mcast[16] = { 0xff, 0x02, [15] = 1 };
	uint8_t g[16];

	(void)state;
	assert_int_equal(rocev2_set_gid(&eng, 4, any), -HAL_EINVAL);
	assert_int_equal(rocev2_set_gid(&eng, 4, loop), -HAL_EINVAL);
	assert_int_equal(rocev2_set_gid(&eng, 4, mcast), -HAL_EINVAL);
	mnic_gid_from_ipv4(g, 0x7f000001u);
	assert_int_equal(rocev2_set_gid(&eng, 4, g), -HAL_EINVAL);
	mnic_gid_from_ipv4(g, 0xe0000001u);
	assert_int_equal(rocev2_set_gid(&eng, 4, g), -HAL_EINVAL);
	assert_int_equal(rocev2_set_gid(&eng, ROCEV2_GID_TBL_LEN, our_gid), -HAL_EINVAL);
	assert_false(rocev2_gid_ours6(&eng, any));
	/* the IPv4 address in force: the lowest valid v4 entry, else the boot one */
	mnic_gid_from_ipv4(g, 0xc0a80001u);
	assert_int_equal(rocev2_set_gid(&eng, 0, g), 0);
	assert_int_equal(eng.env.ipv4, 0xc0a80001u);
	assert_true(rocev2_gid_ours4(&eng, OUR_IP));            /* entry 1 still */
	assert_int_equal(rocev2_set_gid(&eng, 0, NULL), 0);
	assert_int_equal(rocev2_set_gid(&eng, 1, NULL), 0);
	assert_int_equal(eng.env.ipv4, OUR_IP);                 /* the boot address */
}

/* ---- receive -------------------------------------------------------------- */

static void deliver(const uint8_t *f, size_t len)
{
	rocev2_rx(&eng, f, len);
}

/* The recorded frame, to a QP whose peer is fd00::2 and which sends from
 * fd00::1: parsed as RoCEv2 over IPv6, handed to the responder. */
static void test_ipv6_receive_recorded(void **state)
{
	uint8_t f[sizeof(ipv6_send_only_frame)];

	(void)state;
	/* the recorded frame runs from fd00::1 to fd00::2: swap to come to us */
	memcpy(f, ipv6_send_only_frame, sizeof(f));
	memcpy(f, our_mac, 6);
	memcpy(f + 6, peer_mac, 6);
	memcpy(f + 22, peer_gid, 16);
	memcpy(f + 38, our_gid, 16);
	put_be24(f + 62 + 5, OUR_QPN);
	put_le32(f + sizeof(f) - 4, zlib_icrc6(f, sizeof(f)));
	deliver(f, sizeof(f));
	assert_int_equal(recv_n_resp, 1);
	assert_ptr_equal(recv_resp_calls[0].qp, qp);
	assert_int_equal(recv_resp_calls[0].pkt.v6, 1);
	assert_int_equal(recv_resp_calls[0].pkt.opcode, OP_SEND_ONLY);
	assert_int_equal(recv_resp_calls[0].pkt.psn, 0xabcd);
	assert_int_equal(recv_resp_calls[0].pkt.paylen, 5);
	assert_memory_equal(recv_resp_calls[0].payload, "hello", 5);
	assert_int_equal(eng.cnt.rx_ipv6_packets, 1);
	assert_int_equal(eng.cnt.rx_req_packets, 1);
	/* Ethernet padding after the payload length is not the packet's. */
	{
		uint8_t padded[sizeof(f) + 10];

		memcpy(padded, f, sizeof(f));
		memset(padded + sizeof(f), 0xee, 10);
		deliver(padded, sizeof(padded));
		assert_int_equal(recv_n_resp, 2);
		assert_int_equal(recv_resp_calls[1].pkt.len, sizeof(f));
	}
}

/* The peer engine's frames reach us: its template is the other side of
 * ours; a CE mark in the traffic class is seen (DCQCN). */
static void test_ipv6_engine_to_engine(void **state)
{
	struct rocev2_tx t;

	(void)state;
	send_hello(&peer, pqp, 0);
	assert_memory_equal(wire + 22, peer_gid, 16);           /* its entry 3 */
	deliver(wire, wire_len);
	assert_int_equal(recv_n_resp, 1);
	assert_int_equal(recv_resp_calls[0].pkt.v6, 1);
	/* a switch marks CE (RFC 3168 over the traffic class): the ICRC
	 * masks it, the notification point sees it */
	rocev2_tx_prepare(&peer, pqp, &t, OP_SEND_ONLY, 0xabce, 1, 0, 5);
	memcpy(t.payload, "hello", 5);
	rocev2_tx_set_tos(&t, (uint8_t)(rocev2_tx_tos(&t) | IPV4_ECN_CE));
	assert_int_equal(rocev2_tx_tos(&t), 0x68 | IPV4_ECN_CE);
	assert_int_equal(rocev2_tx_send(&peer, &t), 0);
	assert_int_equal(wire[14] & 0x0f, 0x6);                 /* traffic class high half */
	assert_int_equal(wire[15] >> 4, (0x68 | IPV4_ECN_CE) & 0x0f);
	deliver(wire, wire_len);
	assert_int_equal(recv_n_resp, 2);
}

typedef void (*mutate_fn)(uint8_t *f, size_t *len);
static void m_version(uint8_t *f, size_t *l) { (void)l; f[14] = (uint8_t)(0x40 | (f[14] & 0x0f)); }
static void m_trunc_hdr(uint8_t *f, size_t *l) { (void)f; *l = ETH_HLEN + IPV6_HLEN - 1; }
static void m_plen_long(uint8_t *f, size_t *l) { put_be16(f + 18, (uint16_t)(*l - ETH_HLEN - IPV6_HLEN + 1)); }
static void m_dst_other(uint8_t *f, size_t *l) { (void)l; f[53] ^= 0x40; }
static void m_next_hbh(uint8_t *f, size_t *l) { (void)l; f[20] = 0; }
static void m_next_frag(uint8_t *f, size_t *l) { (void)l; f[20] = 44; }
static void m_dport(uint8_t *f, size_t *l) { (void)l; put_be16(f + 56, 4792); }
static void m_udp_len(uint8_t *f, size_t *l) { (void)l; put_be16(f + 58, (uint16_t)(get_be16(f + 58) - 4)); }
static void m_plen_short(uint8_t *f, size_t *l) { (void)l; put_be16(f + 18, 4); }
static void m_src_other(uint8_t *f, size_t *l) { (void)l; f[37] ^= 0x01; }
static void m_icrc(uint8_t *f, size_t *l) { f[*l - 1] ^= 0x01; }
static void m_payload(uint8_t *f, size_t *l) { (void)l; f[74] ^= 0x01; }

/* Every check on the IPv6 path, each counted once in its own counter,
 * nothing delivered (the ICRC is made right again after each mutation
 * but the last two, so that only the check under test can refuse). */
static void test_ipv6_every_discard(void **state)
{
#define C(name) offsetof(struct rocev2_counters, name)
	static const struct {
		const char *what;
		mutate_fn m;
		size_t counter;
		int fix_icrc;
	} cases[] = {
		{ "version 4 in an IPv6 frame", m_version, C(rx_bad_ip), 1 },
		{ "truncated IPv6 header", m_trunc_hdr, C(rx_short), 0 },
		{ "payload length past the frame", m_plen_long, C(rx_short), 0 },
		{ "not one of our GIDs", m_dst_other, C(rx_bad_dst), 1 },
		{ "hop-by-hop extension header", m_next_hbh, C(rx_not_roce), 1 },
		{ "fragment header", m_next_frag, C(rx_not_roce), 1 },
		{ "UDP port 4792", m_dport, C(rx_not_roce), 1 },
		{ "UDP length not the payload length", m_udp_len, C(rx_bad_udp), 1 },
		{ "payload length under UDP", m_plen_short, C(rx_short), 0 },
		{ "source not the QP's peer", m_src_other, C(rx_bad_src), 1 },
		{ "ICRC", m_icrc, C(rx_bad_icrc), 0 },
		{ "payload bit flip", m_payload, C(rx_bad_icrc), 0 },
	};
#undef C
	uint8_t f[ROCEV2_TX_MAX];
	size_t i, len;

	(void)state;
	send_hello(&peer, pqp, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t *c = (uint64_t *)((uint8_t *)&eng.cnt + cases[i].counter), before = *c;
		struct rocev2_counters snap = eng.cnt;

		memcpy(f, wire, wire_len);
		len = wire_len;
		cases[i].m(f, &len);
		if (cases[i].fix_icrc)
			put_le32(f + len - 4, zlib_icrc6(f, len));
		deliver(f, len);
		if (*c != before + 1)
			fail_msg("%s: counter not incremented", cases[i].what);
		if (recv_n_resp || recv_n_comp)
			fail_msg("%s: delivered", cases[i].what);
		/* exactly one counter moved besides rx_frames (and, for the
		 * checks after the IPv6 and UDP headers, rx_ipv6_packets) */
		snap.rx_frames++;
		if (cases[i].counter == offsetof(struct rocev2_counters, rx_bad_src) ||
		    cases[i].counter == offsetof(struct rocev2_counters, rx_bad_icrc))
			snap.rx_ipv6_packets++;
		*(uint64_t *)((uint8_t *)&snap + cases[i].counter) += 1;
		if (memcmp(&snap, &eng.cnt, sizeof(snap)) != 0)
			fail_msg("%s: another counter moved", cases[i].what);
	}
	/* and the frame itself, unmutated, passes */
	deliver(wire, wire_len);
	assert_int_equal(recv_n_resp, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_ipv6_icrc_masks, setup),
		cmocka_unit_test_setup(test_ipv6_send_only_byte_exact, setup),
		cmocka_unit_test_setup(test_ipv6_write_lengths, setup),
		cmocka_unit_test_setup(test_ipv6_source_selection, setup),
		cmocka_unit_test_setup(test_ipv6_gid_table_refuses, setup),
		cmocka_unit_test_setup(test_ipv6_receive_recorded, setup),
		cmocka_unit_test_setup(test_ipv6_engine_to_engine, setup),
		cmocka_unit_test_setup(test_ipv6_every_discard, setup),
	};

	return cmocka_run_group_tests_name("ipv6", tests, NULL, NULL);
}
