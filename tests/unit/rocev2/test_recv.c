/* rocev2/recv.c: receive parsing and demultiplexing in isolation.
 *
 * Every discard path gets a crafted frame and must bump its own counter
 * exactly once, touch no other counter and deliver nothing; valid requests
 * reach the responder and valid responses the completer with the right
 * struct rocev2_pkt.  The QP lookup and both stages are test doubles
 * (recv_doubles.c).  Frames come from a peer engine transmitting through
 * the real net.c, plus two frames built independently in python3 (see
 * test_net.c).
 *
 * Build: test_recv.c recv_doubles.c rocev2/recv.c rocev2/net.c
 *        rocev2/icrc.c rocev2/opcode.c lib/timer.c hal/common/dma_window.c */
#include "cmocka_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocev2/internal.h"

struct recv_delivery {
	const struct rocev2_qp *qp;
	struct rocev2_pkt pkt;
	uint8_t payload[64];
};
extern struct recv_delivery recv_resp_calls[8], recv_comp_calls[8];
extern unsigned recv_n_resp, recv_n_comp, recv_n_lookup;
extern uint32_t recv_stale_qpn;          /* recv_doubles.c */

static const char *const cnt_names[] = {
#define CNT_NAME(name) #name,
	ROCEV2_COUNTERS(CNT_NAME)
#undef CNT_NAME
};
#define CNT(name) (offsetof(struct rocev2_counters, name) / sizeof(uint64_t))

static const uint8_t our_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t peer_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
#define OUR_IP   0x0a000002u
#define PEER_IP  0x0a000001u
#define OUR_QPN  0x123u
#define STALE_QPN 0x1123u               /* a QP of eng's that is gone */
#define PEER_QPN 17u

/* From test_net.c: 10.0.0.1 -> 10.0.0.2, DestQP 0x123 (python3-built). */
static const uint8_t py_send_only[66] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x68, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x26, 0x4f, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xdf, 0x94,
	0x12, 0xb7, 0x00, 0x20, 0x00, 0x00, 0x04, 0x30, 0xff, 0xff, 0x00, 0x00,
	0x01, 0x23, 0x80, 0x00, 0xab, 0xcd, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00,
	0x00, 0x00, 0x3d, 0xb3, 0xf6, 0x27,
};
static const uint8_t py_write_only[82] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x68, 0x00, 0x44, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x26, 0x3f, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xdf, 0x94,
	0x12, 0xb7, 0x00, 0x30, 0x00, 0x00, 0x0a, 0x80, 0xff, 0xff, 0x00, 0x00,
	0x01, 0x23, 0x80, 0xff, 0xff, 0xff, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
	0x77, 0x88, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01,
	0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xc5, 0xab, 0x19, 0xd4,
};

/* ---- fixture -------------------------------------------------------------- */
static struct rocev2 eng, peer;         /* eng receives; peer transmits */
static struct rocev2_qp peer_qp;
static struct rocev2_qp *qp;            /* eng's QP 0x123 */
static struct hal_dma dma;
static uint8_t host_mem[4096];
static uint8_t wire[ROCEV2_TX_MAX + 64];
static size_t wire_len;

static int capture_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	assert_true(len <= sizeof(wire));
	memcpy(wire, frame, len);
	wire_len = len;
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
}

static int setup(void **state)
{
	(void)state;
	hal_dma_window_init(&dma, host_mem, sizeof(host_mem));
	env_init(&eng, our_mac, OUR_IP);
	env_init(&peer, peer_mac, PEER_IP);

	recv_stale_qpn = STALE_QPN;
	qp = &eng.qps[3];
	qp->in_use = 1;
	qp->qpn = OUR_QPN;
	qp->state = ROCEV2_QPS_RTS;
	qp->attr.dest_qp_num = PEER_QPN;
	memcpy(qp->attr.av.dmac, peer_mac, 6);
	rocev2_av_set_ipv4(&qp->attr.av, PEER_IP);

	memset(&peer_qp, 0, sizeof(peer_qp));
	peer_qp.in_use = 1;
	peer_qp.qpn = PEER_QPN;
	peer_qp.sport = rocev2_udp_sport(PEER_QPN);
	peer_qp.attr.dest_qp_num = OUR_QPN;
	memcpy(peer_qp.attr.av.dmac, our_mac, 6);
	rocev2_av_set_ipv4(&peer_qp.attr.av, OUR_IP);
	peer_qp.attr.av.ttl = 64;

	recv_n_resp = recv_n_comp = recv_n_lookup = 0;
	memset(recv_resp_calls, 0, sizeof(recv_resp_calls));
	memset(recv_comp_calls, 0, sizeof(recv_comp_calls));
	return 0;
}

/* The peer sends one packet; it lands in wire[]. */
static void peer_send(uint8_t opcode, uint32_t psn, uint32_t paylen)
{
	const struct rocev2_opcode_info *info = rocev2_opcode(opcode);
	struct rocev2_tx t;
	uint32_t i;

	rocev2_tx_prepare(&peer, &peer_qp, &t, opcode, psn, 1, 0, paylen);
	if (info->mask & OPM_RETH)
		reth_init((struct reth *)(t.bth + info->reth), 0x1000, 0x4242, paylen ? paylen : 64);
	if (info->mask & OPM_AETH)
		aeth_init((struct aeth *)(t.bth + info->aeth), AETH_ACK_UNLIMITED, 9);
	if (info->mask & OPM_ATMETH)
		atmeth_init((struct atmeth *)(t.bth + info->atmeth), 0x2000, 0x4343, 5, 6);
	if (info->mask & OPM_ATMACK)
		atmack_init((struct atmack *)(t.bth + info->atmack), 0x77);
	if (info->mask & OPM_IMMDT)
		immdt_init((struct immdt *)(t.bth + info->immdt), 0xcafef00du);
	if (info->mask & OPM_IETH)
		ieth_init((struct ieth *)(t.bth + info->ieth), 0x5151);
	for (i = 0; i < paylen; i++)
		t.payload[i] = (uint8_t)(i * 7u + 1u);
	assert_int_equal(rocev2_tx_send(&peer, &t), 0);
}

/* After a mutation: make the IPv4 checksum and the ICRC right again, so
 * that only the check under test can refuse the frame. */
static void fix_csum(uint8_t *f)
{
	uint8_t *ip = f + ETH_HLEN;
	uint32_t s = 0;
	unsigned i;

	ip[10] = ip[11] = 0;
	for (i = 0; i < IPV4_HLEN; i += 2)
		s += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (s >> 16)
		s = (s & 0xffffu) + (s >> 16);
	put_be16(ip + 10, (uint16_t)~s);
}

static void fix_all(uint8_t *f, size_t len)
{
	uint8_t *ip = f + ETH_HLEN;
	size_t tot = get_be16(ip + 2);

	fix_csum(f);
	if (tot > len - ETH_HLEN)
		tot = len - ETH_HLEN;
	if (tot >= IPV4_HLEN + UDP_HLEN + BTH_LEN + ICRC_LEN)
		put_le32(ip + tot - ICRC_LEN, rocev2_icrc(ip, tot - ICRC_LEN));
}

/* Resize the RoCE part by delta bytes (IPv4 and UDP lengths follow). */
static void grow(uint8_t *f, size_t *len, int delta)
{
	uint8_t *ip = f + ETH_HLEN;

	*len = (size_t)((int)*len + delta);
	put_be16(ip + 2, (uint16_t)(get_be16(ip + 2) + delta));
	put_be16(ip + 24, (uint16_t)(get_be16(ip + 24) + delta));
}

/* Deliver len bytes of f from an exact-size heap copy (ASan sees any
 * overread) and check that only counter `which` (besides rx_frames) moved
 * and nothing was delivered. */
static void expect_discard(const char *what, const uint8_t *f, size_t len, size_t which)
{
	uint64_t before[ROCEV2_NUM_COUNTERS], *after = (uint64_t *)&eng.cnt;
	uint8_t *copy = malloc(len ? len : 1);
	unsigned i;

	assert_non_null(copy);
	memcpy(copy, f, len);
	memcpy(before, &eng.cnt, sizeof(before));
	recv_n_resp = recv_n_comp = 0;
	rocev2_rx(&eng, copy, len);
	free(copy);
	for (i = 0; i < ROCEV2_NUM_COUNTERS; i++) {
		uint64_t want = before[i] + (i == which || i == CNT(rx_frames));

		if (after[i] != want)
			fail_msg("%s: counter %s is %llu, expected %llu (wanted %s)", what, cnt_names[i],
				 (unsigned long long)after[i], (unsigned long long)want,
				 cnt_names[which]);
	}
	if (recv_n_resp || recv_n_comp)
		fail_msg("%s: delivered to a stage", what);
}

static void expect_delivered(const char *what, const uint8_t *f, size_t len, int to_resp)
{
	unsigned resp = recv_n_resp, comp = recv_n_comp;
	uint64_t drops = eng.cnt.rx_not_roce + eng.cnt.rx_short + eng.cnt.rx_bad_ip +
			 eng.cnt.rx_bad_dst + eng.cnt.rx_bad_udp + eng.cnt.rx_bad_icrc +
			 eng.cnt.rx_bad_tver + eng.cnt.rx_bad_opcode + eng.cnt.rx_bad_pkey +
			 eng.cnt.rx_bad_pad + eng.cnt.rx_no_qp + eng.cnt.rx_stale_qp +
			 eng.cnt.rx_bad_state +
			 eng.cnt.rx_bad_src;

	rocev2_rx(&eng, f, len);
	if (recv_n_resp != resp + (to_resp ? 1u : 0u) || recv_n_comp != comp + (to_resp ? 0u : 1u))
		fail_msg("%s: not delivered to the %s", what, to_resp ? "responder" : "completer");
	assert_int_equal(drops, eng.cnt.rx_not_roce + eng.cnt.rx_short + eng.cnt.rx_bad_ip +
					eng.cnt.rx_bad_dst + eng.cnt.rx_bad_udp +
					eng.cnt.rx_bad_icrc + eng.cnt.rx_bad_tver +
					eng.cnt.rx_bad_opcode + eng.cnt.rx_bad_pkey +
					eng.cnt.rx_bad_pad + eng.cnt.rx_no_qp +
					eng.cnt.rx_stale_qp + eng.cnt.rx_bad_state +
					eng.cnt.rx_bad_src);
}

/* ---- valid packets ------------------------------------------------------ */

static void test_python_send_reaches_responder(void **state)
{
	const struct recv_delivery *d = &recv_resp_calls[0];

	(void)state;
	expect_delivered("python SEND_ONLY", py_send_only, sizeof(py_send_only), 1);
	assert_ptr_equal(d->qp, qp);
	assert_ptr_equal(d->pkt.frame, py_send_only);
	assert_int_equal(d->pkt.len, sizeof(py_send_only));
	assert_ptr_equal(d->pkt.l3, py_send_only + 14);
	assert_int_equal(d->pkt.v6, 0);
	assert_ptr_equal(d->pkt.udp, py_send_only + 34);
	assert_ptr_equal(d->pkt.bth, py_send_only + 42);
	assert_ptr_equal(d->pkt.info, rocev2_opcode(OP_SEND_ONLY));
	assert_int_equal(d->pkt.opcode, OP_SEND_ONLY);
	assert_int_equal(d->pkt.ackreq, 1);
	assert_int_equal(d->pkt.psn, 0xabcd);
	assert_int_equal(d->pkt.qpn, OUR_QPN);
	assert_ptr_equal(d->pkt.payload, py_send_only + 54);
	assert_int_equal(d->pkt.paylen, 5);
	assert_memory_equal(d->payload, "hello", 5);
	assert_int_equal(eng.cnt.rx_frames, 1);
	assert_int_equal(eng.cnt.rx_req_packets, 1);
	assert_int_equal(eng.cnt.rx_resp_packets, 0);
	assert_int_equal(recv_n_comp, 0);
}

static void test_python_write_reaches_responder(void **state)
{
	const struct recv_delivery *d = &recv_resp_calls[0];

	(void)state;
	expect_delivered("python WRITE_ONLY", py_write_only, sizeof(py_write_only), 1);
	assert_int_equal(d->pkt.opcode, OP_WRITE_ONLY);
	assert_int_equal(d->pkt.psn, 0xffffff);
	assert_int_equal(reth_va(pkt_reth(&d->pkt)), 0x1122334455667788ull);
	assert_int_equal(reth_rkey(pkt_reth(&d->pkt)), 0xdeadbeefu);
	assert_int_equal(reth_len(pkt_reth(&d->pkt)), 8);
	assert_int_equal(d->pkt.paylen, 8);
	assert_memory_equal(d->payload, "\0\1\2\3\4\5\6\7", 8);
	assert_true(bth_se(d->pkt.bth));
}

static void test_ack_reaches_completer(void **state)
{
	const struct recv_delivery *d = &recv_comp_calls[0];

	(void)state;
	peer_send(OP_ACKNOWLEDGE, 0x345678, 0);
	expect_delivered("ACK", wire, wire_len, 0);
	assert_ptr_equal(d->qp, qp);
	assert_int_equal(d->pkt.opcode, OP_ACKNOWLEDGE);
	assert_int_equal(d->pkt.psn, 0x345678);
	assert_int_equal(d->pkt.qpn, OUR_QPN);
	assert_int_equal(d->pkt.paylen, 0);
	assert_int_equal(aeth_syndrome(pkt_aeth(&d->pkt)), AETH_ACK_UNLIMITED);
	assert_int_equal(aeth_msn(pkt_aeth(&d->pkt)), 9);
	assert_int_equal(eng.cnt.rx_resp_packets, 1);
	assert_int_equal(eng.cnt.rx_req_packets, 0);
	assert_int_equal(recv_n_resp, 0);
}

/* Every opcode of the table, every payload length mod 4, built by net.c,
 * comes back out of the parser with the same fields. */
static void test_round_trip_every_opcode(void **state)
{
	unsigned op;
	uint32_t n;

	(void)state;
	for (op = 0; op < 256; op++) {
		const struct rocev2_opcode_info *info = rocev2_opcode((uint8_t)op);

		/* A CNP needs BECN, which this generic builder does not set:
		 * test_dcqcn round-trips CNPs from cc.c's own builder. */
		if (!(info->mask & OPM_VALID) || (info->mask & OPM_CNP))
			continue;
		for (n = 0; n <= ((info->mask & OPM_PAYLOAD) ? 9u : 0u); n++) {
			struct rocev2_pkt pkt;
			uint32_t i;

			peer_send((uint8_t)op, 0x100 + n, n);
			assert_int_equal(rocev2_parse(&eng, wire, wire_len, &pkt), 0);
			assert_int_equal(pkt.opcode, op);
			assert_ptr_equal(pkt.info, info);
			assert_int_equal(pkt.psn, 0x100 + n);
			assert_int_equal(pkt.qpn, OUR_QPN);
			assert_int_equal(pkt.paylen, n);
			assert_ptr_equal(pkt.payload, wire + ROCEV2_HDR_OFFSET + info->hdr_len);
			for (i = 0; i < n; i++)
				assert_int_equal(pkt.payload[i], (uint8_t)(i * 7u + 1u));
			/* Raw offsets, not pkt_immdt(): internal.h's accessors index
			 * struct bth's 12-byte array past its end (ImmDt at 28 in
			 * WRITE_ONLY_IMM), which clang's UBSan reports. */
			if (info->mask & OPM_IMMDT)
				assert_int_equal(get_be32((const uint8_t *)pkt.bth + info->immdt),
						 0xcafef00du);
			if (info->mask & OPM_ATMETH)
				assert_int_equal(atmeth_rkey(pkt_atmeth(&pkt)), 0x4343);
		}
	}
	assert_int_equal(eng.cnt.rx_short + eng.cnt.rx_bad_pad + eng.cnt.rx_bad_icrc, 0);
}

/* Ethernet pads short frames to 60 bytes beyond the IPv4 length. */
static void test_ethernet_padding_accepted(void **state)
{
	uint8_t f[60];

	(void)state;
	peer_send(OP_SEND_ONLY, 1, 0);
	assert_int_equal(wire_len, 58);
	memset(f, 0, sizeof(f));
	memcpy(f, wire, wire_len);
	expect_delivered("padded 58->60", f, sizeof(f), 1);
	assert_int_equal(recv_resp_calls[0].pkt.len, 58);
	assert_int_equal(recv_resp_calls[0].pkt.paylen, 0);
	/* Padding after a longer frame too (some drivers round up). */
	memset(wire + sizeof(py_send_only), 0x99, 16);
	memcpy(wire, py_send_only, sizeof(py_send_only));
	expect_delivered("66+16 trailer", wire, sizeof(py_send_only) + 16, 1);
}

/* Limited default P_Key 0x7FFF matches our full member default. */
static void test_limited_pkey_accepted(void **state)
{
	(void)state;
	peer_send(OP_SEND_ONLY, 1, 4);
	put_be16(wire + ROCEV2_HDR_OFFSET + 2, 0x7fff);
	fix_all(wire, wire_len);
	expect_delivered("P_Key 0x7fff", wire, wire_len, 1);
}

/* ---- every discard path ------------------------------------------------- */

enum base { BASE_SEND, BASE_ACK, BASE_WRITE };
enum fix { FIX_NONE, FIX_CSUM, FIX_ALL };       /* what to recompute after the mutation */
#define DELIVERED CNT(rx_frames)                /* a mutation that stays a valid packet */

struct discard_case {
	const char *name;
	enum base base;
	size_t counter;
	void (*mutate)(uint8_t *f, size_t *len);
	enum fix fix;
};

static void m_ethertype_ipv6(uint8_t *f, size_t *l) { (void)l; put_be16(f + 12, 0x86dd); }
static void m_ethertype_arp(uint8_t *f, size_t *l) { (void)l; put_be16(f + 12, 0x0806); }
static void m_ethertype_vlan(uint8_t *f, size_t *l) { (void)l; put_be16(f + 12, 0x8100); }
static void m_proto_tcp(uint8_t *f, size_t *l) { (void)l; f[14 + 9] = 6; }
static void m_dport(uint8_t *f, size_t *l) { (void)l; put_be16(f + 36, 4792); }
static void m_dmac_other(uint8_t *f, size_t *l) { (void)l; f[5] = 0x03; }
static void m_dmac_bcast(uint8_t *f, size_t *l) { (void)l; memset(f, 0xff, 6); }
static void m_dmac_mcast(uint8_t *f, size_t *l) { (void)l; f[0] = 0x01; f[1] = 0x00; f[2] = 0x5e; }
static void m_dip_other(uint8_t *f, size_t *l) { (void)l; put_be32(f + 30, 0x0a000003u); }
static void m_dip_bcast(uint8_t *f, size_t *l) { (void)l; put_be32(f + 30, 0xffffffffu); }
static void m_len_10(uint8_t *f, size_t *l) { (void)f; *l = 10; }
static void m_len_eth_only(uint8_t *f, size_t *l) { (void)f; *l = 14; }
static void m_len_half_ip(uint8_t *f, size_t *l) { (void)f; *l = 14 + 12; }
static void m_cut_1(uint8_t *f, size_t *l) { (void)f; (*l)--; }
static void m_tot_big(uint8_t *f, size_t *l) { (void)l; put_be16(f + 16, (uint16_t)(get_be16(f + 16) + 4)); }
static void m_no_udp(uint8_t *f, size_t *l) { put_be16(f + 16, 24); *l = 14 + 24; }
static void m_bth_cut(uint8_t *f, size_t *l) { (void)f; grow(f, l, -(int)(*l - 14 - 20 - 8 - 12)); }
static void m_write_no_reth(uint8_t *f, size_t *l) { grow(f, l, -(int)(*l - 14 - 20 - 8 - 16)); }
static void m_ver6(uint8_t *f, size_t *l) { (void)l; f[14] = 0x65; }
static void m_ihl6(uint8_t *f, size_t *l) { (void)l; f[14] = 0x46; }
static void m_ihl4(uint8_t *f, size_t *l) { (void)l; f[14] = 0x44; }
static void m_ip_csum(uint8_t *f, size_t *l) { (void)l; f[14 + 11] ^= 0x40; }
static void m_mf(uint8_t *f, size_t *l) { (void)l; put_be16(f + 20, 0x2000); }
static void m_frag_off(uint8_t *f, size_t *l) { (void)l; put_be16(f + 20, 0x4000 | 0x0010); }
static void m_tot_small(uint8_t *f, size_t *l) { (void)l; put_be16(f + 16, 19); }
static void m_udp_len_plus(uint8_t *f, size_t *l) { (void)l; put_be16(f + 38, (uint16_t)(get_be16(f + 38) + 1)); }
static void m_udp_len_minus(uint8_t *f, size_t *l) { (void)l; put_be16(f + 38, (uint16_t)(get_be16(f + 38) - 4)); }
static void m_udp_len_zero(uint8_t *f, size_t *l) { (void)l; put_be16(f + 38, 0); }
static void m_tver1(uint8_t *f, size_t *l) { (void)l; f[43] |= 0x01; }
static void m_tver15(uint8_t *f, size_t *l) { (void)l; f[43] |= 0x0f; }
static void m_op_reserved(uint8_t *f, size_t *l) { (void)l; f[42] = 0x15; }
static void m_op_pause(uint8_t *f, size_t *l) { (void)l; f[42] = 0x18; }
static void m_op_uc(uint8_t *f, size_t *l) { (void)l; f[42] = 0x24; }
static void m_op_ud(uint8_t *f, size_t *l) { (void)l; f[42] = 0x64; }
static void m_op_cnp(uint8_t *f, size_t *l) { (void)l; f[42] = 0x81; }
static void m_op_ff(uint8_t *f, size_t *l) { (void)l; f[42] = 0xff; }
static void m_pkey_other(uint8_t *f, size_t *l) { (void)l; put_be16(f + 44, 0x8001); }
static void m_pkey_zero(uint8_t *f, size_t *l) { (void)l; put_be16(f + 44, 0x0000); }
static void m_pkey_7ffe(uint8_t *f, size_t *l) { (void)l; put_be16(f + 44, 0x7ffe); }
static void m_pad_2(uint8_t *f, size_t *l) { (void)l; f[43] = (uint8_t)((f[43] & ~0x30) | 0x20); }
static void m_send_len_odd(uint8_t *f, size_t *l) { grow(f, l, 1); }
static void m_send_empty_pad3(uint8_t *f, size_t *l) { grow(f, l, -5); }
static void m_ack_payload(uint8_t *f, size_t *l) { grow(f, l, 4); }
static void m_ack_odd(uint8_t *f, size_t *l) { grow(f, l, 3); }
static void m_ack_pad3(uint8_t *f, size_t *l) { f[43] |= 0x30; grow(f, l, 3); }
static void m_ack_pad1(uint8_t *f, size_t *l) { (void)l; f[43] |= 0x10; }
static void m_payload_flip(uint8_t *f, size_t *l) { (void)l; f[54] ^= 0x01; }
static void m_icrc_flip(uint8_t *f, size_t *l) { f[*l - 1] ^= 0x80; }
static void m_psn_flip(uint8_t *f, size_t *l) { (void)l; f[53] ^= 0x01; }
static void m_sport_flip(uint8_t *f, size_t *l) { (void)l; f[35] ^= 0x01; }
static void m_saddr_flip(uint8_t *f, size_t *l) { (void)l; f[29] ^= 0x01; }
static void m_qpn_unknown(uint8_t *f, size_t *l) { (void)l; put_be24(f + 47, 0x456); }
static void m_qpn_zero(uint8_t *f, size_t *l) { (void)l; put_be24(f + 47, 0); }
static void m_qpn_stale(uint8_t *f, size_t *l) { (void)l; put_be24(f + 47, STALE_QPN); }
static void m_saddr_other(uint8_t *f, size_t *l) { (void)l; put_be32(f + 26, 0x0a000009u); }

static const struct discard_case discard_cases[] = {
	{ "EtherType IPv6 on an IPv4 header", BASE_SEND, CNT(rx_bad_ip), m_ethertype_ipv6, FIX_NONE },
	{ "EtherType ARP", BASE_SEND, CNT(rx_not_roce), m_ethertype_arp, FIX_NONE },
	{ "VLAN tag", BASE_SEND, CNT(rx_not_roce), m_ethertype_vlan, FIX_NONE },
	{ "IP protocol TCP", BASE_SEND, CNT(rx_not_roce), m_proto_tcp, FIX_ALL },
	{ "UDP port 4792", BASE_SEND, CNT(rx_not_roce), m_dport, FIX_ALL },
	{ "dst MAC other", BASE_SEND, CNT(rx_bad_dst), m_dmac_other, FIX_NONE },
	{ "dst MAC broadcast", BASE_SEND, CNT(rx_bad_dst), m_dmac_bcast, FIX_NONE },
	{ "dst MAC multicast", BASE_SEND, CNT(rx_bad_dst), m_dmac_mcast, FIX_NONE },
	{ "dst IP other", BASE_SEND, CNT(rx_bad_dst), m_dip_other, FIX_ALL },
	{ "dst IP broadcast", BASE_SEND, CNT(rx_bad_dst), m_dip_bcast, FIX_ALL },
	{ "10-byte frame", BASE_SEND, CNT(rx_short), m_len_10, FIX_NONE },
	{ "Ethernet header only", BASE_SEND, CNT(rx_short), m_len_eth_only, FIX_NONE },
	{ "half an IPv4 header", BASE_SEND, CNT(rx_short), m_len_half_ip, FIX_NONE },
	{ "last byte cut", BASE_SEND, CNT(rx_short), m_cut_1, FIX_NONE },
	{ "IP length beyond frame", BASE_SEND, CNT(rx_short), m_tot_big, FIX_ALL },
	{ "no UDP header", BASE_SEND, CNT(rx_short), m_no_udp, FIX_ALL },
	{ "BTH without ICRC", BASE_SEND, CNT(rx_short), m_bth_cut, FIX_ALL },
	{ "WRITE_ONLY without RETH", BASE_WRITE, CNT(rx_short), m_write_no_reth, FIX_ALL },
	{ "ACK pad 1 beyond length", BASE_ACK, CNT(rx_short), m_ack_pad1, FIX_ALL },
	{ "IP version 6", BASE_SEND, CNT(rx_bad_ip), m_ver6, FIX_CSUM },
	{ "IP options (IHL 6)", BASE_SEND, CNT(rx_bad_ip), m_ihl6, FIX_CSUM },
	{ "IHL 4", BASE_SEND, CNT(rx_bad_ip), m_ihl4, FIX_CSUM },
	{ "IP checksum", BASE_SEND, CNT(rx_bad_ip), m_ip_csum, FIX_NONE },
	{ "more fragments", BASE_SEND, CNT(rx_bad_ip), m_mf, FIX_CSUM },
	{ "fragment offset", BASE_SEND, CNT(rx_bad_ip), m_frag_off, FIX_CSUM },
	{ "IP length 19", BASE_SEND, CNT(rx_bad_ip), m_tot_small, FIX_CSUM },
	{ "UDP length +1", BASE_SEND, CNT(rx_bad_udp), m_udp_len_plus, FIX_ALL },
	{ "UDP length -4", BASE_SEND, CNT(rx_bad_udp), m_udp_len_minus, FIX_ALL },
	{ "UDP length 0", BASE_SEND, CNT(rx_bad_udp), m_udp_len_zero, FIX_ALL },
	{ "TVer 1", BASE_SEND, CNT(rx_bad_tver), m_tver1, FIX_ALL },
	{ "TVer 15", BASE_ACK, CNT(rx_bad_tver), m_tver15, FIX_ALL },
	{ "opcode 0x15 reserved", BASE_SEND, CNT(rx_bad_opcode), m_op_reserved, FIX_ALL },
	{ "opcode 0x18 PAUSE", BASE_SEND, CNT(rx_bad_opcode), m_op_pause, FIX_ALL },
	{ "opcode UC SEND_ONLY", BASE_SEND, CNT(rx_bad_opcode), m_op_uc, FIX_ALL },
	{ "opcode UD SEND_ONLY", BASE_SEND, CNT(rx_bad_opcode), m_op_ud, FIX_ALL },
	/* 0x81 is the CNP (cc.c): too short for its 16 reserved bytes */
	{ "CNP of a SEND's length", BASE_SEND, CNT(cnp_malformed), m_op_cnp, FIX_ALL },
	{ "opcode 0xff", BASE_SEND, CNT(rx_bad_opcode), m_op_ff, FIX_ALL },
	{ "P_Key 0x8001", BASE_SEND, CNT(rx_bad_pkey), m_pkey_other, FIX_ALL },
	{ "P_Key 0", BASE_SEND, CNT(rx_bad_pkey), m_pkey_zero, FIX_ALL },
	{ "P_Key 0x7ffe", BASE_ACK, CNT(rx_bad_pkey), m_pkey_7ffe, FIX_ALL },
	{ "SEND length not 4-aligned", BASE_SEND, CNT(rx_bad_pad), m_send_len_odd, FIX_ALL },
	{ "SEND no payload, pad 3", BASE_SEND, CNT(rx_bad_pad), m_send_empty_pad3, FIX_ALL },
	{ "SEND pad 2 for 6 bytes (consistent)", BASE_SEND, DELIVERED, m_pad_2, FIX_ALL },
	/* An ACK may carry the migration extension; its length and contents
	 * are the completer's business (rocev2/migrate.c). */
	{ "ACK with payload", BASE_ACK, DELIVERED, m_ack_payload, FIX_ALL },
	{ "ACK with 3 bytes, no pad", BASE_ACK, CNT(rx_bad_pad), m_ack_odd, FIX_ALL },
	{ "ACK with pad 3", BASE_ACK, CNT(rx_bad_pad), m_ack_pad3, FIX_ALL },
	{ "payload bit flipped", BASE_SEND, CNT(rx_bad_icrc), m_payload_flip, FIX_NONE },
	{ "ICRC bit flipped", BASE_SEND, CNT(rx_bad_icrc), m_icrc_flip, FIX_NONE },
	{ "PSN bit flipped", BASE_ACK, CNT(rx_bad_icrc), m_psn_flip, FIX_NONE },
	{ "UDP source port flipped", BASE_SEND, CNT(rx_bad_icrc), m_sport_flip, FIX_NONE },
	{ "IP source flipped, checksum fixed", BASE_SEND, CNT(rx_bad_icrc), m_saddr_flip, FIX_CSUM },
	{ "unknown QPN", BASE_SEND, CNT(rx_no_qp), m_qpn_unknown, FIX_ALL },
	{ "QPN 0", BASE_ACK, CNT(rx_no_qp), m_qpn_zero, FIX_ALL },
	{ "QPN of a destroyed QP (SEND)", BASE_SEND, CNT(rx_stale_qp), m_qpn_stale, FIX_ALL },
	{ "QPN of a destroyed QP (ACK)", BASE_ACK, CNT(rx_stale_qp), m_qpn_stale, FIX_ALL },
	{ "source IP not the peer", BASE_SEND, CNT(rx_bad_src), m_saddr_other, FIX_ALL },
	{ "ACK from another source", BASE_ACK, CNT(rx_bad_src), m_saddr_other, FIX_ALL },
};

static size_t make_base(enum base b, uint8_t *f)
{
	switch (b) {
	case BASE_SEND:
		memcpy(f, py_send_only, sizeof(py_send_only));
		return sizeof(py_send_only);
	case BASE_WRITE:
		memcpy(f, py_write_only, sizeof(py_write_only));
		return sizeof(py_write_only);
	case BASE_ACK:
		peer_send(OP_ACKNOWLEDGE, 0x42, 0);
		memcpy(f, wire, wire_len);
		return wire_len;
	}
	return 0;
}

static void test_every_discard_path(void **state)
{
	static uint8_t f[256];
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(discard_cases) / sizeof(discard_cases[0]); i++) {
		const struct discard_case *c = &discard_cases[i];

		len = make_base(c->base, f);
		/* The unmutated base is delivered... */
		expect_delivered(c->name, f, len, c->base != BASE_ACK);
		/* ...the mutated one is counted once, where it should be. */
		c->mutate(f, &len);
		if (c->fix == FIX_ALL)
			fix_all(f, len);
		else if (c->fix == FIX_CSUM)
			fix_csum(f);
		if (c->counter == DELIVERED)
			expect_delivered(c->name, f, len, c->base != BASE_ACK);
		else
			expect_discard(c->name, f, len, c->counter);
	}
	/* Only a payload-carrying frame can have a broken ICRC: none of the
	 * rejected frames reached a stage (expect_discard checked each). */
}

/* rxe check_type_state: which states accept requests and responses. */
static void test_state_matrix(void **state)
{
	static const struct { uint8_t st; int req_ok, resp_ok; } m[] = {
		{ ROCEV2_QPS_RESET, 0, 0 }, { ROCEV2_QPS_INIT, 0, 0 }, { ROCEV2_QPS_RTR, 1, 0 },
		{ ROCEV2_QPS_RTS, 1, 1 },   { ROCEV2_QPS_SQD, 1, 1 },  { ROCEV2_QPS_SQE, 1, 1 },
		{ ROCEV2_QPS_ERR, 0, 0 },   { ROCEV2_QPS_NUM, 0, 0 },  { 0xff, 0, 0 },
	};
	uint8_t ack[128];
	size_t ack_len, i;
	char what[64];

	(void)state;
	peer_send(OP_ACKNOWLEDGE, 7, 0);
	memcpy(ack, wire, wire_len);
	ack_len = wire_len;
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		qp->state = m[i].st;
		snprintf(what, sizeof(what), "SEND in state %u", m[i].st);
		if (m[i].req_ok)
			expect_delivered(what, py_send_only, sizeof(py_send_only), 1);
		else
			expect_discard(what, py_send_only, sizeof(py_send_only), CNT(rx_bad_state));
		snprintf(what, sizeof(what), "ACK in state %u", m[i].st);
		if (m[i].resp_ok)
			expect_delivered(what, ack, ack_len, 0);
		else
			expect_discard(what, ack, ack_len, CNT(rx_bad_state));
	}
}

/* MigrOS check_addr: only a RESUME is not held to av.dip, whatever the
 * QP's state (before, a paused QP took every opcode from anywhere). */
static void test_source_check_exemptions(void **state)
{
	uint8_t f[128];
	size_t len;

	(void)state;
	/* RESUME from the peer's new address reaches the responder... */
	peer.env.ipv4 = 0x0a000063u;
	rocev2_tx_tmpl_stale_all(&peer);
	peer_send(OP_RESUME, 0x77, 0);
	memcpy(f, wire, wire_len);
	len = wire_len;
	expect_delivered("RESUME from a new address", f, len, 1);
	assert_int_equal(recv_resp_calls[0].pkt.opcode, OP_RESUME);
	assert_int_equal(get_be32(recv_resp_calls[0].pkt.l3 + 12), 0x0a000063u);
	/* ...a SEND or an ACK from there does not, paused or not. */
	peer_send(OP_SEND_ONLY, 0x77, 3);
	memcpy(f, wire, wire_len);
	len = wire_len;
	expect_discard("SEND from a new address", f, len, CNT(rx_bad_src));
	qp->paused = 1;
	expect_discard("SEND to a paused QP from a new address", f, len, CNT(rx_bad_src));
	peer_send(OP_ACKNOWLEDGE, 0x77, 0);
	expect_discard("ACK to a paused QP from a new address", wire, wire_len, CNT(rx_bad_src));
	peer_send(OP_RESUME, 0x77, 0);
	expect_delivered("RESUME to a paused QP from a new address", wire, wire_len, 1);
	qp->paused = 0;
	peer_send(OP_ACKNOWLEDGE, 0x77, 0);
	expect_discard("ACK from a new address", wire, wire_len, CNT(rx_bad_src));
	/* From av.dip, a paused QP takes the rest as before. */
	peer.env.ipv4 = rocev2_av_ipv4(&qp->attr.av);
	rocev2_tx_tmpl_stale_all(&peer);
	qp->paused = 1;
	peer_send(OP_ACKNOWLEDGE, 0x77, 0);
	expect_delivered("ACK to a paused QP from its peer", wire, wire_len, 0);
	qp->paused = 0;
	peer.env.ipv4 = 0x0a000063u;
	rocev2_tx_tmpl_stale_all(&peer);
	/* The destination checks still apply to RESUME. */
	peer_send(OP_RESUME, 0x77, 0);
	put_be32(wire + 30, 0x0a000005u);
	fix_all(wire, wire_len);
	expect_discard("RESUME to another address", wire, wire_len, CNT(rx_bad_dst));
}

/* Every prefix of valid frames is refused, counted once, never read
 * past (exact-size heap copies: run under ASan). */
static void test_truncated_every_length(void **state)
{
	static const uint8_t ops[] = { OP_SEND_ONLY, OP_WRITE_ONLY_IMM, OP_ACKNOWLEDGE,
				       OP_ATOMIC_ACKNOWLEDGE, OP_COMPARE_SWAP, OP_READ_RESPONSE_ONLY,
				       OP_RESUME };
	uint8_t f[256];
	size_t i, len, full;
	char what[64];

	(void)state;
	for (i = 0; i < sizeof(ops); i++) {
		peer_send(ops[i], 1, (rocev2_opcode(ops[i])->mask & OPM_PAYLOAD) ? 13 : 0);
		full = wire_len;
		memcpy(f, wire, full);
		for (len = 0; len < full; len++) {
			snprintf(what, sizeof(what), "%s cut to %zu", rocev2_opcode(ops[i])->name, len);
			/* Before the EtherType is complete nothing says IPv4. */
			expect_discard(what, f, len, CNT(rx_short));
		}
		expect_delivered("uncut", f, full, !(rocev2_opcode(ops[i])->mask & OPM_RESP));
	}
}

/* rocev2_parse alone: 0 and fields, or a negative error and one counter. */
static void test_parse_return_values(void **state)
{
	struct rocev2_pkt pkt;
	uint8_t f[128];

	(void)state;
	memset(&pkt, 0, sizeof(pkt));
	assert_int_equal(rocev2_parse(&eng, py_send_only, sizeof(py_send_only), &pkt), 0);
	assert_int_equal(pkt.paylen, 5);
	memcpy(f, py_send_only, sizeof(py_send_only));
	f[60] ^= 1;
	assert_true(rocev2_parse(&eng, f, sizeof(py_send_only), &pkt) < 0);
	assert_int_equal(eng.cnt.rx_bad_icrc, 1);
	assert_true(rocev2_parse(&eng, f, 3, &pkt) < 0);
	assert_int_equal(eng.cnt.rx_short, 1);
	assert_int_equal(eng.cnt.rx_frames, 0);         /* counted by rocev2_rx only */
	assert_int_equal(recv_n_lookup, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_python_send_reaches_responder, setup),
		cmocka_unit_test_setup(test_python_write_reaches_responder, setup),
		cmocka_unit_test_setup(test_ack_reaches_completer, setup),
		cmocka_unit_test_setup(test_round_trip_every_opcode, setup),
		cmocka_unit_test_setup(test_ethernet_padding_accepted, setup),
		cmocka_unit_test_setup(test_limited_pkey_accepted, setup),
		cmocka_unit_test_setup(test_every_discard_path, setup),
		cmocka_unit_test_setup(test_state_matrix, setup),
		cmocka_unit_test_setup(test_source_check_exemptions, setup),
		cmocka_unit_test_setup(test_truncated_every_length, setup),
		cmocka_unit_test_setup(test_parse_return_values, setup),
	};
	return cmocka_run_group_tests_name("rocev2/recv", tests, NULL, NULL);
}
