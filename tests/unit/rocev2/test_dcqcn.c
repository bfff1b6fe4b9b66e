/* DCQCN (rocev2/cc.c) on the real engine: the notification point (a
 * packet marked CE -> exactly one CNP per QP per interval, its bytes), the
 * reaction point (a CNP -> the rate cut of the formula, alpha, recovery on
 * the timers back to line rate and to the idle path), the pacer (the send
 * rate is Rc, counted in bytes over simulated time), hostile CNPs
 * (counted, no effect) and the parameters' validation.  The peer engine
 * of reqcomp_harness.h builds what arrives. */
#include "reqcomp_harness.h"

/* (Harness helpers this file does not need.) */
static void (*const unused_helpers[])(void) __attribute__((unused)) = {
	(void (*)(void))expect_cqe, (void (*)(void))expect_no_cqe, (void (*)(void))frame_pkt,
};

static struct rocev2_dcqcn_params params;

static void set_params(void)
{
	unsigned bad = 99;

	assert_int_equal(rocev2_set_dcqcn(e, &params, &bad), 0);
	assert_int_equal(bad, 99);
}

static int setup(void **state)
{
	(void)state;
	h_init(&cfg_default);
	rocev2_dcqcn_defaults(&params);
	return 0;
}

/* The IPv4 checksum after an edit of the header (the switch's job). */
static void fix_ip_csum(uint8_t *f)
{
	put_be16(f + ETH_HLEN + 10, 0);
	put_be16(f + ETH_HLEN + 10, (uint16_t)~ipv4_csum_fold(f + ETH_HLEN));
}

/* A request from the peer, marked CE on the way as a switch would. */
static void inject_ce_request(uint32_t psn)
{
	struct rocev2_tx t;

	/* A SEND to a QP without receive WQEs: RNR NAKed, the QP stays. */
	(void)psn;
	rocev2_tx_prepare(&peer, &peer_qp, &t, OP_SEND_ONLY, 0x777, 1, 0, 8);
	memset(t.payload, 0x5a, 8);
	assert_int_equal(rocev2_tx_send(&peer, &t), 0);
	assert_int_equal(peer_frame[ETH_HLEN + 1] & IPV4_ECN_MASK, IPV4_ECN_ECT0);
	peer_frame[ETH_HLEN + 1] |= IPV4_ECN_CE;
	fix_ip_csum(peer_frame);
	rocev2_rx(e, peer_frame, peer_len);
}

/* A CNP from the peer to our QP, as the peer's cc.c builds it; edit may
 * spoil it before it is sent (ICRC computed over the edit). */
static void build_cnp(uint32_t dest_qpn, int becn)
{
	struct rocev2_tx t;
	uint32_t saved = peer_qp.attr.dest_qp_num;

	peer_qp.attr.dest_qp_num = dest_qpn;
	rocev2_tx_tmpl_stale(&peer_qp);         /* as modify_qp does */
	rocev2_tx_prepare(&peer, &peer_qp, &t, OP_CNP, 0, 0, 0, 0);
	if (becn)
		t.bth[4] |= BTH_BECN;
	assert_int_equal(rocev2_tx_send(&peer, &t), 0);
	peer_qp.attr.dest_qp_num = saved;
	rocev2_tx_tmpl_stale(&peer_qp);
}

static void inject_cnp(void)
{
	build_cnp(qpn, 1);
	rocev2_rx(e, peer_frame, peer_len);
}

static unsigned count_cnps(void)
{
	unsigned i, n = 0;

	for (i = 0; i < nframes; i++)
		n += frames[i][ROCEV2_HDR_OFFSET] == OP_CNP;
	return n;
}

static const uint8_t *last_cnp(size_t *len)
{
	unsigned i = nframes;

	while (i-- > 0)
		if (frames[i][ROCEV2_HDR_OFFSET] == OP_CNP) {
			*len = frame_len[i];
			return frames[i];
		}
	fail_msg("no CNP sent");
	return NULL;
}

static struct rocev2_dcqcn_state cc_state(void)
{
	struct rocev2_dcqcn_state s;

	assert_int_equal(rocev2_qp_dcqcn_state(e, qpn, &s), 0);
	return s;
}

/* ---- notification point --------------------------------------------------- */

static void test_cnp_one_per_interval(void **state)
{
	static const uint8_t zero[CNP_RSVD_LEN];
	struct rocev2_pkt p;
	const uint8_t *f;
	size_t len;
	unsigned i;

	(void)state;
	inject_ce_request(0x777);
	assert_int_equal(e->cnt.ecn_ce_received, 1);
	assert_int_equal(e->cnt.cnp_sent, 1);
	assert_int_equal(count_cnps(), 1);

	/* The CNP's bytes (IBA A17.9.2). */
	f = last_cnp(&len);
	assert_int_equal(len, ETH_HLEN + IPV4_HLEN + UDP_HLEN + BTH_LEN + CNP_RSVD_LEN + ICRC_LEN);
	assert_memory_equal(f, peer_mac, 6);
	assert_int_equal(f[ETH_HLEN + 1] & IPV4_ECN_MASK, IPV4_ECN_NOT_ECT);
	assert_int_equal(ipv4_csum_fold(f + ETH_HLEN), 0xffffu);
	assert_int_equal(get_be16(f + ETH_HLEN + IPV4_HLEN + 2), ROCEV2_UDP_DPORT);
	assert_int_equal(f[ROCEV2_HDR_OFFSET], 0x81);                   /* OpCode CNP */
	assert_int_equal(f[ROCEV2_HDR_OFFSET + 4], BTH_BECN);           /* BECN, no FECN */
	assert_int_equal(get_be24(f + ROCEV2_HDR_OFFSET + 5), DEST_QPN); /* the sender's QP */
	assert_int_equal(get_be32(f + ROCEV2_HDR_OFFSET + 8), 0);        /* AckReq 0, PSN 0 */
	assert_memory_equal(f + ROCEV2_HDR_OFFSET + BTH_LEN, zero, CNP_RSVD_LEN);
	/* The peer's parser checks the ICRC and takes it as a CNP. */
	assert_int_equal(rocev2_parse(&peer, f, len, &p), 0);
	assert_int_equal(p.opcode, OP_CNP);
	assert_int_equal(p.paylen, 0);
	assert_int_equal(p.qpn, DEST_QPN);
	assert_int_equal(rocev2_icrc(f + ETH_HLEN, len - ETH_HLEN - ICRC_LEN),
			 get_le32(f + len - ICRC_LEN));

	/* More CE within 50 us: none. */
	for (i = 0; i < 5; i++) {
		advance(9000);
		inject_ce_request(0x778 + i);
	}
	assert_int_equal(count_cnps(), 1);
	assert_int_equal(e->cnt.cnp_suppressed, 5);
	assert_int_equal(e->cnt.ecn_ce_received, 6);
	/* 50 us after the first: the next CE sends one. */
	advance(5000);
	inject_ce_request(0x77d);
	assert_int_equal(count_cnps(), 2);
	assert_int_equal(e->cnt.cnp_sent, 2);
	/* Unmarked packets send none. */
	advance(100000);
	inject(OP_ACKNOWLEDGE, 0, AETH_ACK_UNLIMITED, NULL, 0, 0);
	assert_int_equal(count_cnps(), 2);
	assert_int_equal(e->cnt.ecn_ce_received, 7);    /* (an ACK is ECT(0), not CE) */
}

static void test_cnp_interval_param_and_disable(void **state)
{
	(void)state;
	params.cnp_interval_us = 200;
	set_params();
	inject_ce_request(0x777);
	advance(150000);
	inject_ce_request(0x778);
	assert_int_equal(count_cnps(), 1);
	advance(50000);
	inject_ce_request(0x779);
	assert_int_equal(count_cnps(), 2);
	/* DCQCN off: CE is counted, no CNP. */
	params.flags = ROCEV2_DCQCN_F_ECT;
	set_params();
	advance(1000000);
	inject_ce_request(0x77a);
	assert_int_equal(count_cnps(), 2);
	assert_int_equal(e->cnt.ecn_ce_received, 4);
}

/* ---- reaction point ------------------------------------------------------- */

static void test_cnp_rate_cut_formula(void **state)
{
	struct rocev2_dcqcn_state s;
	uint32_t rc, alpha, g = 4096;   /* 1/16: alpha's moves are visible */

	(void)state;
	params.g = g;
	params.line_rate_mbps = 1000;
	set_params();
	s = cc_state();
	assert_int_equal(s.active, 0);
	assert_int_equal(s.rate_kbps, 1000000);

	/* First CNP: alpha starts at 1, so Rc halves; Rt = the old Rc. */
	inject_cnp();
	assert_int_equal(e->cnt.cnp_received, 1);
	assert_int_equal(e->cnt.rate_cuts, 1);
	s = cc_state();
	assert_int_equal(s.active, 1);
	assert_int_equal(s.rate_kbps, 500000);
	assert_int_equal(s.target_kbps, 1000000);
	assert_int_equal(s.alpha, 65536);               /* (1 - g) 1 + g */

	/* K = 55 us without a CNP: alpha = (1 - g) alpha. */
	advance(55000);
	alpha = 65536 - 65536 / 16;
	s = cc_state();
	assert_int_equal(s.alpha, alpha);
	rc = s.rate_kbps;                               /* the T event raised it too */
	assert_int_equal(rc, (500000 + 1000000 + 1) / 2);

	/* Second CNP: Rt = Rc, Rc = Rc (1 - alpha / 2), alpha = (1 - g) alpha + g. */
	inject_cnp();
	s = cc_state();
	assert_int_equal(s.target_kbps, rc);
	assert_int_equal(s.rate_kbps, rc - (uint32_t)(((uint64_t)rc * alpha) >> 17));
	assert_int_equal(s.alpha, alpha - (alpha * g >> 16) + g);
	assert_int_equal(e->cnt.rate_cuts, 2);

	/* Many CNPs: never below the floor. */
	for (rc = 0; rc < 40; rc++)
		inject_cnp();
	assert_int_equal(cc_state().rate_kbps, params.min_rate_mbps * 1000u);
}

static void test_dcqcn_recovery_to_line_rate(void **state)
{
	struct rocev2_dcqcn_state s;
	uint32_t prev, steps = 0;

	(void)state;
	inject_cnp();
	s = cc_state();
	assert_int_equal(s.rate_kbps, 5000000);         /* 10 Gbit/s default line rate halved */
	/* Fast recovery: each T event halves the distance to Rt (= line). */
	prev = s.rate_kbps;
	while (cc_state().active) {
		advance(55000);
		s = cc_state();
		assert_true(s.rate_kbps > prev || !s.active);
		if (steps < 5)
			assert_int_equal(s.rate_kbps, (prev + 10000000u + 1u) / 2u);
		prev = s.rate_kbps;
		assert_true(++steps < 64);
	}
	assert_int_equal(s.rate_kbps, 10000000);
	assert_int_equal(e->cnt.rate_increases, steps);
	/* Idle again: no timer of DCQCN in the heap. */
	assert_false(timer_armed(&qp->cc.timer));
	assert_false(timer_armed(&qp->cc.pacer));
}

static void test_dcqcn_additive_after_fast_recovery(void **state)
{
	struct rocev2_dcqcn_state s;
	unsigned i;

	(void)state;
	params.line_rate_mbps = 1000;
	set_params();
	inject_cnp();                                   /* 500 Mbit/s, Rt 1000 */
	advance(1000);
	inject_cnp();                                   /* Rt = 500, Rc = 250 */
	s = cc_state();
	assert_int_equal(s.target_kbps, 500000);
	assert_int_equal(s.rate_kbps, 250000);
	for (i = 0; i < 5; i++)                         /* F = 5 fast recovery stages: Rt fixed */
		advance(55000);
	s = cc_state();
	assert_int_equal(s.target_kbps, 500000);
	advance(55000);                                 /* the 5th event: additive, Rt += Rai */
	assert_int_equal(cc_state().target_kbps, 500000 + params.rai_mbps * 1000u);
}

/* ---- pacer ------------------------------------------------------------------ */

/* Keep the SQ full of 4 KiB WRITEs, ACK what was sent, count the bytes
 * sent over [0, dur) of simulated time in 1 us steps. */
static uint64_t run_paced(uint64_t dur_ns)
{
	uint64_t bytes = 0, t;
	unsigned i;

	for (t = 0; t < dur_ns; t += 1000) {
		while (sq_pi - qp->comp.wqe_index < 32)
			post_op(MNIC_WR_RDMA_WRITE, sq_pi, SRC, 4096, 0);
		advance(1000);
		pump();
		for (i = 0; i < nframes; i++)
			bytes += frame_len[i];
		if (nframes)
			ack(get_be24(frames[nframes - 1] + ROCEV2_HDR_OFFSET + 9));
		nframes = 0;
	}
	return bytes;
}

static void test_dcqcn_pacer_keeps_rate(void **state)
{
	uint64_t bytes, expect;
	unsigned i;

	(void)state;
	params.line_rate_mbps = 1000;
	params.rate_timer_us = 1000000;                 /* Rc stays where the CNP put it */
	params.alpha_us = 1000000;
	params.byte_counter = 1u << 30;
	set_params();

	/* Idle: no pacing, a poll sends as much as the window allows at once. */
	for (i = 0; i < 4; i++)
		post_op(MNIC_WR_RDMA_WRITE, sq_pi, SRC, 4096, 0);
	pump();
	assert_true(nframes >= 64);
	assert_int_equal(e->cnt.pacer_waits, 0);
	ack(get_be24(frames[nframes - 1] + ROCEV2_HDR_OFFSET + 9));
	nframes = 0;

	inject_cnp();
	assert_int_equal(cc_state().rate_kbps, 500000);
	run_paced(1000000);                             /* the bucket's burst is spent */
	bytes = run_paced(20000000);                    /* 20 ms at 500 Mbit/s */
	expect = 500000ull * 20000000ull / 8000000ull;  /* 1,250,000 bytes */
	assert_true(bytes * 100 >= expect * 98);
	assert_true(bytes * 100 <= expect * 102);
	assert_true(e->cnt.pacer_waits > 1000);
	assert_int_equal(e->cnt.req_retransmits, 0);
	print_message("pacer: %llu bytes in 20 ms at Rc 500 Mbit/s (%llu expected), %llu waits\n",
		      (unsigned long long)bytes, (unsigned long long)expect,
		      (unsigned long long)e->cnt.pacer_waits);
}

/* With the byte counter the rate recovers as bytes go out. */
static void test_dcqcn_byte_counter_recovery(void **state)
{
	uint32_t before;

	(void)state;
	params.line_rate_mbps = 1000;
	params.rate_timer_us = 1000000;
	params.alpha_us = 1000000;
	params.byte_counter = 16 * 1024;
	set_params();
	inject_cnp();
	before = cc_state().rate_kbps;
	run_paced(5000000);
	assert_true(e->cnt.rate_increases >= 10);
	assert_true(cc_state().rate_kbps > before || !cc_state().active);
}

/* ---- hostile CNPs ------------------------------------------------------------ */

static void test_cnp_hostile(void **state)
{
	uint8_t f[ROCEV2_TX_MAX];
	uint64_t received;
	size_t len;

	(void)state;
	/* For no QP (a stale generation, and a free slot). */
	build_cnp(qpn + (1u << ROCEV2_QPN_IDX_BITS), 1);
	rocev2_rx(e, peer_frame, peer_len);
	build_cnp(qpn + 5, 1);
	rocev2_rx(e, peer_frame, peer_len);
	assert_int_equal(e->cnt.cnp_no_qp, 2);
	assert_int_equal(e->cnt.rx_no_qp, 0);

	/* Without BECN: refused by the demux, counted once (not also as
	 * delivered: the fuzzer's one-outcome-per-frame rule). */
	received = e->cnt.cnp_received;
	build_cnp(qpn, 0);
	rocev2_rx(e, peer_frame, peer_len);
	assert_int_equal(e->cnt.cnp_malformed, 1);
	assert_int_equal(e->cnt.cnp_received, received);

	/* Short: without its reserved bytes (lengths and ICRC made consistent). */
	build_cnp(qpn, 1);
	memcpy(f, peer_frame, peer_len);
	len = peer_len - CNP_RSVD_LEN;
	put_be16(f + ETH_HLEN + 2, (uint16_t)(len - ETH_HLEN));
	put_be16(f + ETH_HLEN + IPV4_HLEN + 4, (uint16_t)(len - ETH_HLEN - IPV4_HLEN));
	fix_ip_csum(f);
	put_le32(f + len - ICRC_LEN, rocev2_icrc(f + ETH_HLEN, len - ETH_HLEN - ICRC_LEN));
	rocev2_rx(e, f, len);
	assert_int_equal(e->cnt.cnp_malformed, 2);

	/* With 8 bytes of payload. */
	build_cnp(qpn, 1);
	memcpy(f, peer_frame, peer_len - ICRC_LEN);
	memset(f + peer_len - ICRC_LEN, 0x11, 8);
	len = peer_len + 8;
	put_be16(f + ETH_HLEN + 2, (uint16_t)(len - ETH_HLEN));
	put_be16(f + ETH_HLEN + IPV4_HLEN + 4, (uint16_t)(len - ETH_HLEN - IPV4_HLEN));
	fix_ip_csum(f);
	put_le32(f + len - ICRC_LEN, rocev2_icrc(f + ETH_HLEN, len - ETH_HLEN - ICRC_LEN));
	rocev2_rx(e, f, len);
	assert_int_equal(e->cnt.cnp_malformed, 3);

	/* Truncated on the wire: the ICRC's bytes cut. */
	build_cnp(qpn, 1);
	rocev2_rx(e, peer_frame, peer_len - 2);
	assert_true(e->cnt.rx_short + e->cnt.cnp_malformed >= 4);

	/* Bad ICRC. */
	build_cnp(qpn, 1);
	peer_frame[ROCEV2_HDR_OFFSET + 20] ^= 1;
	rocev2_rx(e, peer_frame, peer_len);
	assert_int_equal(e->cnt.rx_bad_icrc, 1);

	/* From an address that is not the QP's peer. */
	build_cnp(qpn, 1);
	put_be32(peer_frame + ETH_HLEN + 12, PEER_IP + 1);
	fix_ip_csum(peer_frame);
	put_le32(peer_frame + peer_len - ICRC_LEN,
		 rocev2_icrc(peer_frame + ETH_HLEN, peer_len - ETH_HLEN - ICRC_LEN));
	rocev2_rx(e, peer_frame, peer_len);
	assert_int_equal(e->cnt.rx_bad_src, 1);

	/* None of them moved the rate. */
	assert_int_equal(e->cnt.cnp_received, 0);       /* none got to cc.c (BECN-less: the demux) */
	assert_int_equal(e->cnt.rate_cuts, 0);
	assert_int_equal(cc_state().active, 0);
	/* A CNP to a QP in RESET is refused by the state check. */
	set_state(ROCEV2_QPS_RESET);
	inject_cnp();
	assert_int_equal(e->cnt.rx_bad_state, 1);
	assert_int_equal(e->cnt.rate_cuts, 0);
}

/* ---- parameters ---------------------------------------------------------------- */

static void test_dcqcn_params_validated(void **state)
{
	static const struct {
		size_t off;
		uint32_t value;
		unsigned field;
	} bad[] = {
		{ offsetof(struct rocev2_dcqcn_params, flags), 4, 0 },
		{ offsetof(struct rocev2_dcqcn_params, g), 0, 1 },
		{ offsetof(struct rocev2_dcqcn_params, g), 65537, 1 },
		{ offsetof(struct rocev2_dcqcn_params, alpha_us), 0, 2 },
		{ offsetof(struct rocev2_dcqcn_params, rate_timer_us), 1000001, 3 },
		{ offsetof(struct rocev2_dcqcn_params, byte_counter), 100, 4 },
		{ offsetof(struct rocev2_dcqcn_params, fast_recovery), 0, 5 },
		{ offsetof(struct rocev2_dcqcn_params, rai_mbps), 10001, 6 },
		{ offsetof(struct rocev2_dcqcn_params, rhai_mbps), 0, 7 },
		{ offsetof(struct rocev2_dcqcn_params, min_rate_mbps), 20000, 8 },
		{ offsetof(struct rocev2_dcqcn_params, line_rate_mbps), 400001, 9 },
		{ offsetof(struct rocev2_dcqcn_params, cnp_interval_us), 0, 10 },
	};
	struct rocev2_dcqcn_params p, got, def;
	unsigned i, field;

	(void)state;
	rocev2_dcqcn_defaults(&def);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = def;
		memcpy((uint8_t *)&p + bad[i].off, &bad[i].value, sizeof(uint32_t));
		field = 99;
		assert_int_equal(rocev2_set_dcqcn(e, &p, &field), -HAL_EINVAL);
		assert_int_equal(field, bad[i].field);
		rocev2_get_dcqcn(e, &got);
		assert_memory_equal(&got, &def, sizeof(def));   /* nothing changed */
	}
	/* ECT off: the AV's TOS goes out as it is. */
	p = def;
	p.flags = ROCEV2_DCQCN_F_ENABLE;
	assert_int_equal(rocev2_set_dcqcn(e, &p, NULL), 0);
	post_op(MNIC_WR_RDMA_WRITE, 1, SRC, 16, 0);
	pump();
	assert_int_equal(frames[nframes - 1][ETH_HLEN + 1], 0);
	/* Defaults again: ECT(0). */
	assert_int_equal(rocev2_set_dcqcn(e, &def, NULL), 0);
	post_op(MNIC_WR_RDMA_WRITE, 2, SRC, 16, 0);
	pump();
	assert_int_equal(frames[nframes - 1][ETH_HLEN + 1], IPV4_ECN_ECT0);
	/* A CNP with DCQCN off changes nothing. */
	p.flags = 0;
	assert_int_equal(rocev2_set_dcqcn(e, &p, NULL), 0);
	inject_cnp();
	assert_int_equal(e->cnt.cnp_received, 1);
	assert_int_equal(e->cnt.rate_cuts, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_cnp_one_per_interval, setup),
		cmocka_unit_test_setup(test_cnp_interval_param_and_disable, setup),
		cmocka_unit_test_setup(test_cnp_rate_cut_formula, setup),
		cmocka_unit_test_setup(test_dcqcn_recovery_to_line_rate, setup),
		cmocka_unit_test_setup(test_dcqcn_additive_after_fast_recovery, setup),
		cmocka_unit_test_setup(test_dcqcn_pacer_keeps_rate, setup),
		cmocka_unit_test_setup(test_dcqcn_byte_counter_recovery, setup),
		cmocka_unit_test_setup(test_cnp_hostile, setup),
		cmocka_unit_test_setup(test_dcqcn_params_validated, setup),
	};

	return cmocka_run_group_tests_name("rocev2/dcqcn", tests, NULL, NULL);
}
