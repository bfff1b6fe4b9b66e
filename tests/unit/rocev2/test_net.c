/* rocev2/net.c: transmit framing, byte for byte.
 *
 * The expected frames were built in python3 from the wire formats (RFC 791
 * header and checksum, RFC 768, IBA 9.2 BTH, 9.3.3 RETH) with the ICRC as
 * zlib.crc32(b'\xff'*8 + masked IPv4..pad) stored little-endian, not with
 * this code.  Build: test_net.c rocev2/net.c rocev2/icrc.c rocev2/opcode.c. */
#include "cmocka_main.h"

#include <string.h>

#include "rocev2/internal.h"

static const uint8_t our_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
#define OUR_IP  0x0a000001u     /* 10.0.0.1 */
#define PEER_IP 0x0a000002u     /* 10.0.0.2 */

/* SEND_ONLY, AckReq, PSN 0xabcd, DestQP 0x123, sport 0xdf94 (QPN 17,
 * reference 2.4), TOS 0x68, TTL 64, payload "hello", PadCnt 3. */
static const uint8_t send_only_frame[66] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x68, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x26, 0x4f, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xdf, 0x94,
	0x12, 0xb7, 0x00, 0x20, 0x00, 0x00, 0x04, 0x30, 0xff, 0xff, 0x00, 0x00,
	0x01, 0x23, 0x80, 0x00, 0xab, 0xcd, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00,
	0x00, 0x00, 0x3d, 0xb3, 0xf6, 0x27,
};

/* RDMA_WRITE_ONLY, SE, AckReq, PSN 0xffffff, RETH va 0x1122334455667788
 * rkey 0xdeadbeef len 8, payload 00..07, PadCnt 0. */
static const uint8_t write_only_frame[82] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x68, 0x00, 0x44, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x26, 0x3f, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xdf, 0x94,
	0x12, 0xb7, 0x00, 0x30, 0x00, 0x00, 0x0a, 0x80, 0xff, 0xff, 0x00, 0x00,
	0x01, 0x23, 0x80, 0xff, 0xff, 0xff, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
	0x77, 0x88, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01,
	0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xc5, 0xab, 0x19, 0xd4,
};

/* ---- fixture: an engine whose env->tx records frames ------------------ */
static struct rocev2 eng;
static struct rocev2_qp qp;
static struct hal_dma dma;
static uint8_t host_mem[4096];
static uint8_t last_frame[ROCEV2_TX_MAX];
static size_t last_len;
static unsigned tx_calls;
static int tx_rc;                       /* what the fake port returns */

static int fake_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	tx_calls++;
	if (tx_rc == 0) {
		assert_true(len <= sizeof(last_frame));
		memcpy(last_frame, frame, len);
		last_len = len;
	}
	return tx_rc;
}

static uint64_t fake_now(void *ctx)
{
	(void)ctx;
	return 0;
}

static int setup(void **state)
{
	(void)state;
	hal_dma_window_init(&dma, host_mem, sizeof(host_mem));
	/* rocev2_init() is memset + copy of env; done here so this test links
	 * net.c alone, without the scheduler and the stages it calls. */
	memset(&eng, 0, sizeof(eng));
	eng.env.tx = fake_tx;
	eng.env.now_ns = fake_now;
	eng.env.dma = &dma;
	memcpy(eng.env.mac, our_mac, 6);
	eng.env.ipv4 = OUR_IP;
	eng.tos_keep = 0xff;            /* ECT off: the AV's TOS as it is (test_dcqcn_ect0) */
	eng.tos_ecn = 0;
	memset(&qp, 0, sizeof(qp));
	qp.in_use = 1;
	qp.state = ROCEV2_QPS_RTS;
	qp.qpn = 17;
	qp.sport = rocev2_udp_sport(17);
	qp.attr.dest_qp_num = 0x123;
	memcpy(qp.attr.av.dmac, peer_mac, 6);
	rocev2_av_set_ipv4(&qp.attr.av, PEER_IP);
	qp.attr.av.ttl = 64;
	qp.attr.av.tos = 0x68;
	qp.mtu = 1024;
	memset(last_frame, 0, sizeof(last_frame));
	last_len = 0;
	tx_calls = 0;
	tx_rc = 0;
	return 0;
}

static void send_hello(int expect_rc)
{
	struct rocev2_tx t;

	rocev2_tx_prepare(&eng, &qp, &t, OP_SEND_ONLY, 0xabcd, 1, 0, 5);
	memcpy(t.payload, "hello", 5);
	assert_int_equal(rocev2_tx_send(&eng, &t), expect_rc);
}

static uint16_t csum_fold(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffffu) + (s >> 16);
	return (uint16_t)s;
}

static void test_send_only_byte_exact(void **state)
{
	const uint8_t *f = last_frame, *ip = f + 14, *udp = f + 34, *bth = f + 42;

	(void)state;
	/* Dirty buffer: nothing from a previous frame may leak into pad bytes. */
	memset(eng.tx, 0xa5, sizeof(eng.tx));
	send_hello(0);
	assert_int_equal(tx_calls, 1);
	assert_int_equal(last_len, sizeof(send_only_frame));

	/* Field by field, so a mismatch says which one. */
	assert_memory_equal(f, peer_mac, 6);                    /* dst = av.dmac */
	assert_memory_equal(f + 6, our_mac, 6);                 /* src = env.mac */
	assert_int_equal(get_be16(f + 12), 0x0800);
	assert_int_equal(ip[0], 0x45);
	assert_int_equal(ip[1], 0x68);                          /* TOS = av.tos */
	assert_int_equal(get_be16(ip + 2), 20 + 8 + 12 + 5 + 3 + 4);
	assert_int_equal(get_be16(ip + 4), 0);                  /* id */
	assert_int_equal(get_be16(ip + 6), 0x4000);             /* DF, offset 0 */
	assert_int_equal(ip[8], 64);                            /* TTL = av.ttl */
	assert_int_equal(ip[9], 17);
	assert_int_equal(csum_fold(ip, 20), 0xffff);            /* checksum valid */
	assert_int_equal(get_be32(ip + 12), OUR_IP);
	assert_int_equal(get_be32(ip + 16), PEER_IP);
	assert_int_equal(get_be16(udp), 0xdf94);
	assert_int_equal(get_be16(udp + 2), 4791);
	assert_int_equal(get_be16(udp + 4), 8 + 12 + 5 + 3 + 4);
	assert_int_equal(get_be16(udp + 6), 0);
	assert_int_equal(bth[0], OP_SEND_ONLY);
	assert_int_equal(bth[1], 0x30);                         /* SE 0, M 0, PadCnt 3, TVer 0 */
	assert_int_equal(get_be16(bth + 2), 0xffff);
	assert_int_equal(bth[4], 0);
	assert_int_equal(get_be24(bth + 5), 0x123);
	assert_int_equal(bth[8], 0x80);
	assert_int_equal(get_be24(bth + 9), 0xabcd);
	assert_memory_equal(bth + 12, "hello\0\0\0", 8);        /* payload + zero pad */
	assert_int_equal(get_le32(f + 62), rocev2_icrc(ip, 48));
	/* ...and the whole frame against the independently built one. */
	assert_memory_equal(last_frame, send_only_frame, sizeof(send_only_frame));

	assert_int_equal(eng.cnt.tx_packets, 1);
	assert_int_equal(eng.cnt.tx_bytes, sizeof(send_only_frame));
	assert_int_equal(eng.cnt.tx_busy + eng.cnt.tx_errors, 0);
}

static void test_write_only_reth(void **state)
{
	const struct rocev2_opcode_info *info = rocev2_opcode(OP_WRITE_ONLY);
	struct rocev2_tx t;
	unsigned i;

	(void)state;
	rocev2_tx_prepare(&eng, &qp, &t, OP_WRITE_ONLY, 0xffffff, 1, 1, 8);
	/* The BTH at its fixed place (internal.h ROCEV2_TX_BTH), the IPv4
	 * frame 42 bytes before it. */
	assert_ptr_equal(t.frame, eng.tx + ROCEV2_TX_BTH - 42);
	assert_ptr_equal(t.bth, eng.tx + ROCEV2_TX_BTH);
	assert_ptr_equal(t.payload, eng.tx + ROCEV2_TX_BTH + 28);
	assert_int_equal(t.paylen, 8);
	reth_init((struct reth *)(t.bth + info->reth), 0x1122334455667788ull, 0xdeadbeefu, 8);
	for (i = 0; i < 8; i++)
		t.payload[i] = (uint8_t)i;
	assert_int_equal(rocev2_tx_send(&eng, &t), 0);
	assert_int_equal(last_len, sizeof(write_only_frame));
	assert_int_equal(last_frame[43], 0x80);                 /* SE, PadCnt 0 */
	assert_memory_equal(last_frame, write_only_frame, sizeof(write_only_frame));
}

/* Payload-less opcodes: ACK carries BTH + AETH + ICRC only. */
static void test_ack_no_payload(void **state)
{
	struct rocev2_tx t;

	(void)state;
	memset(eng.tx, 0xee, sizeof(eng.tx));
	rocev2_tx_prepare(&eng, &qp, &t, OP_ACKNOWLEDGE, 0x10, 0, 0, 0);
	aeth_init((struct aeth *)(t.bth + rocev2_opcode(OP_ACKNOWLEDGE)->aeth), AETH_ACK_UNLIMITED, 7);
	assert_int_equal(rocev2_tx_send(&eng, &t), 0);
	assert_int_equal(last_len, 14 + 20 + 8 + 16 + 4);
	assert_int_equal(last_frame[43] & BTH_PAD_MASK, 0);
	assert_int_equal(last_frame[54], AETH_ACK_UNLIMITED);
	assert_int_equal(get_be24(last_frame + 55), 7);
	assert_int_equal(get_le32(last_frame + 58), rocev2_icrc(last_frame + 14, 20 + 8 + 16));
}

/* Extension headers start zeroed (the RESUME AETH goes out as zero). */
static void test_ext_headers_zeroed(void **state)
{
	struct rocev2_tx t;

	(void)state;
	memset(eng.tx, 0xff, sizeof(eng.tx));
	rocev2_tx_prepare(&eng, &qp, &t, OP_RESUME, 5, 1, 0, 0);
	assert_int_equal(rocev2_tx_send(&eng, &t), 0);
	assert_int_equal(last_len, 14 + 20 + 8 + 16 + 4);
	assert_int_equal(get_be32(last_frame + 54), 0);
}

/* PadCnt, lengths and zero pad for every payload length mod 4. */
static void test_pad_counts(void **state)
{
	struct rocev2_tx t;
	uint32_t n;

	(void)state;
	for (n = 0; n <= 9; n++) {
		unsigned pad = (4 - n % 4) % 4;

		memset(eng.tx, 0x5a, sizeof(eng.tx));
		rocev2_tx_prepare(&eng, &qp, &t, OP_SEND_MIDDLE, n, 0, 0, n);
		memset(t.payload, 0x11, n);
		assert_int_equal(rocev2_tx_send(&eng, &t), 0);
		assert_int_equal(last_len, 14 + 20 + 8 + 12 + n + pad + 4);
		assert_int_equal((last_frame[43] >> 4) & 3, pad);
		assert_int_equal(get_be16(last_frame + 16), 20 + 8 + 12 + n + pad + 4);
		assert_int_equal(get_be16(last_frame + 38), 8 + 12 + n + pad + 4);
		for (unsigned i = 0; i < pad; i++)
			assert_int_equal(last_frame[54 + n + i], 0);
		assert_int_equal(csum_fold(last_frame + 14, 20), 0xffff);
	}
}

/* A stage that shortens t->paylen after prepare still sends a consistent frame. */
static void test_paylen_changed_after_prepare(void **state)
{
	struct rocev2_tx t;

	(void)state;
	rocev2_tx_prepare(&eng, &qp, &t, OP_SEND_ONLY, 0xabcd, 1, 0, 1000);
	memcpy(t.payload, "hello", 5);
	t.paylen = 5;
	assert_int_equal(rocev2_tx_send(&eng, &t), 0);
	assert_memory_equal(last_frame, send_only_frame, sizeof(send_only_frame));
}

/* -HAL_EAGAIN: ring full, counted in tx_busy only; other errors in
 * tx_errors; the same frame goes out once the ring drains. */
static void test_tx_busy_and_errors(void **state)
{
	(void)state;
	tx_rc = -HAL_EAGAIN;
	send_hello(-HAL_EAGAIN);
	send_hello(-HAL_EAGAIN);
	assert_int_equal(eng.cnt.tx_busy, 2);
	assert_int_equal(eng.cnt.tx_errors, 0);
	assert_int_equal(eng.cnt.tx_packets, 0);
	assert_int_equal(eng.cnt.tx_bytes, 0);

	tx_rc = -HAL_EIO;
	send_hello(-HAL_EIO);
	assert_int_equal(eng.cnt.tx_errors, 1);
	assert_int_equal(eng.cnt.tx_busy, 2);
	assert_int_equal(eng.cnt.tx_packets, 0);

	tx_rc = 0;
	send_hello(0);
	assert_int_equal(eng.cnt.tx_packets, 1);
	assert_int_equal(eng.cnt.tx_bytes, 66);
	assert_int_equal(tx_calls, 4);
	assert_memory_equal(last_frame, send_only_frame, sizeof(send_only_frame));
}

/* Stage bugs are refused, counted, and never reach the port. */
static void test_contract_violations(void **state)
{
	struct rocev2_tx t;

	(void)state;
	rocev2_tx_prepare(&eng, &qp, &t, OP_SEND_ONLY, 1, 0, 0, 4097);   /* beyond the buffer */
	assert_int_equal(rocev2_tx_send(&eng, &t), -HAL_EINVAL);
	/* payload where the opcode has none (an ACKNOWLEDGE may carry the
	 * migration extension, migrate.c; an ATOMIC_ACKNOWLEDGE never) */
	rocev2_tx_prepare(&eng, &qp, &t, OP_ATOMIC_ACKNOWLEDGE, 1, 0, 0, 0);
	t.paylen = 4;
	assert_int_equal(rocev2_tx_send(&eng, &t), -HAL_EINVAL);
	rocev2_tx_prepare(&eng, &qp, &t, 0x15, 1, 0, 0, 0);              /* reserved opcode */
	assert_int_equal(rocev2_tx_send(&eng, &t), -HAL_EINVAL);
	t.frame = NULL;                                                   /* not from prepare */
	t.opcode = OP_SEND_ONLY;
	assert_int_equal(rocev2_tx_send(&eng, &t), -HAL_EINVAL);
	assert_int_equal(eng.cnt.tx_errors, 4);
	assert_int_equal(tx_calls, 0);
	/* The largest frame fits the buffer exactly. */
	rocev2_tx_prepare(&eng, &qp, &t, OP_WRITE_ONLY_IMM, 1, 0, 0, 4096);
	memset(t.payload, 0x77, 4096);
	assert_int_equal(rocev2_tx_send(&eng, &t), 0);
	assert_true(last_len <= ROCEV2_TX_MAX);
}

/* DCQCN (cc.c): with ECT on, the TOS byte carries ECT(0) in its ECN bits
 * (RFC 3168) over the host's DSCP; the IPv4 checksum covers it and the
 * ICRC does not (IBA A17.3.3 masks TOS), so the frame's ICRC is the one
 * without ECT, and a switch's CE mark leaves it valid. */
static void test_dcqcn_ect0(void **state)
{
	uint8_t plain[ROCEV2_TX_MAX];
	size_t plain_len, icrc_off;
	uint8_t *ip = last_frame + ETH_HLEN;

	(void)state;
	send_hello(0);
	plain_len = last_len;
	memcpy(plain, last_frame, last_len);
	assert_int_equal(plain[ETH_HLEN + 1], 0x68);

	eng.tos_keep = (uint8_t)~IPV4_ECN_MASK;
	eng.tos_ecn = IPV4_ECN_ECT0;
	qp.attr.av.tos = 0x69;          /* the host's ECN bits are replaced */
	rocev2_tx_tmpl_stale_all(&eng); /* as cc.c does when it sets the ECN bits */
	send_hello(0);
	assert_int_equal(last_len, plain_len);
	assert_int_equal(ip[1], 0x6a);
	assert_int_equal(ipv4_csum_fold(ip), 0xffffu);
	icrc_off = plain_len - ICRC_LEN;
	assert_memory_equal(last_frame + icrc_off, plain + icrc_off, ICRC_LEN);
	/* CE, as a switch marks it (checksum fixed, ICRC untouched). */
	ip[1] |= IPV4_ECN_CE;
	put_be16(ip + 10, 0);
	put_be16(ip + 10, (uint16_t)~ipv4_csum_fold(ip));
	assert_int_equal(rocev2_icrc(ip, icrc_off - ETH_HLEN), get_le32(last_frame + icrc_off));
}

/* The QP's header template (internal.h) follows every change that names
 * it stale, and only those: the AV and destination QP (modify_qp,
 * rocev2_tx_tmpl_stale), the port's address (rocev2_tx_tmpl_stale_all);
 * the checksum is right for every length, and after a TOS rewrite. */
static void test_template_follows_changes(void **state)
{
	static const uint8_t mac2[6] = { 0x02, 0, 0, 0, 0, 0x77 };
	struct rocev2_tx t;
	uint32_t n;

	(void)state;
	send_hello(0);
	assert_memory_equal(last_frame, send_only_frame, sizeof(send_only_frame));
	/* Changed without saying so: the template is kept (what it is for). */
	rocev2_av_set_ipv4(&qp.attr.av, 0x0a000009u);
	send_hello(0);
	assert_int_equal(get_be32(last_frame + 30), PEER_IP);
	/* Named stale: the new AV and destination QP. */
	memcpy(qp.attr.av.dmac, mac2, 6);
	qp.attr.dest_qp_num = 0xabcdef;
	qp.attr.av.ttl = 3;
	rocev2_tx_tmpl_stale(&qp);
	send_hello(0);
	assert_memory_equal(last_frame, mac2, 6);
	assert_int_equal(get_be32(last_frame + 30), 0x0a000009u);
	assert_int_equal(last_frame[22], 3);
	assert_int_equal(get_be24(last_frame + 47), 0xabcdef);
	assert_int_equal(csum_fold(last_frame + 14, 20), 0xffff);
	/* The port's address, for every QP. */
	eng.env.ipv4 = 0x0a0000feu;
	rocev2_tx_tmpl_stale_all(&eng);
	send_hello(0);
	assert_int_equal(get_be32(last_frame + 26), 0x0a0000feu);
	assert_int_equal(csum_fold(last_frame + 14, 20), 0xffff);
	/* Every length's checksum and lengths. */
	for (n = 0; n <= 4096; n += 37) {
		rocev2_tx_prepare(&eng, &qp, &t, OP_WRITE_ONLY, n, 1, 0, n);
		memset(t.payload, 0x3c, n);
		assert_int_equal(rocev2_tx_send(&eng, &t), 0);
		assert_int_equal(get_be16(last_frame + 16), last_len - 14);
		assert_int_equal(get_be16(last_frame + 38), last_len - 34);
		assert_int_equal(csum_fold(last_frame + 14, 20), 0xffff);
		assert_int_equal(ipv4_csum_fold(last_frame + 14), 0xffff);
	}
	/* A TOS rewrite after prepare (cc.c's CNP): the checksum follows. */
	for (n = 0; n < 256; n += 5) {
		rocev2_tx_prepare(&eng, &qp, &t, OP_CNP, 0, 0, 0, 0);
		rocev2_tx_set_tos(&t, (uint8_t)n);
		assert_int_equal(rocev2_tx_send(&eng, &t), 0);
		assert_int_equal(last_frame[15], n);
		assert_int_equal(csum_fold(last_frame + 14, 20), 0xffff);
	}
}

/* ipv4_csum_fold (word sums on x86, 16-bit words on the boards) against
 * the RFC 1071 reference over headers of pseudo-random bytes. */
static void test_csum_fold_reference(void **state)
{
	uint8_t h[IPV4_HLEN + 3];
	uint32_t x = 12345;
	unsigned i, k, off;

	(void)state;
	for (k = 0; k < 20000; k++) {
		off = k % 4;            /* every alignment */
		for (i = 0; i < IPV4_HLEN; i++) {
			x = x * 1103515245u + 12345u;
			h[off + i] = (uint8_t)(k < 10 ? 0xff : x >> 16);
		}
		assert_int_equal(ipv4_csum_fold(h + off), csum_fold(h + off, IPV4_HLEN));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_send_only_byte_exact, setup),
		cmocka_unit_test_setup(test_template_follows_changes, setup),
		cmocka_unit_test_setup(test_csum_fold_reference, setup),
		cmocka_unit_test_setup(test_write_only_reth, setup),
		cmocka_unit_test_setup(test_ack_no_payload, setup),
		cmocka_unit_test_setup(test_ext_headers_zeroed, setup),
		cmocka_unit_test_setup(test_pad_counts, setup),
		cmocka_unit_test_setup(test_paylen_changed_after_prepare, setup),
		cmocka_unit_test_setup(test_tx_busy_and_errors, setup),
		cmocka_unit_test_setup(test_contract_violations, setup),
		cmocka_unit_test_setup(test_dcqcn_ect0, setup),
	};
	return cmocka_run_group_tests_name("rocev2/net", tests, NULL, NULL);
}
