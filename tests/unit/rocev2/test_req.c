/* rocev2 req.c: the requester.  WQEs are posted to a real SQ in a fake
 * host window (the real queue.c, qp.c, net.c, recv.c, comp.c of the
 * engine), the frames the engine transmits are parsed back with
 * rocev2_parse() on a second engine that plays the peer's address, and
 * responses are crafted with wire.h helpers and fed through rocev2_rx().
 *
 * Expected opcodes, PSNs and header contents come from IBA 9.2-9.4 tables
 * written out here, not from req.c's tables. */
#include "reqcomp_harness.h"

/* IBA 9.2 Table 36: the opcode of packet k of n of each message kind. */
enum { K_SEND, K_SEND_IMM, K_SEND_INV, K_WRITE, K_WRITE_IMM, K_NUM };
static const struct {
	uint8_t wr;
	uint8_t first, middle, last, only;
	int reth, imm, inv, se_ok;
	uint8_t wc;
} kinds[K_NUM] = {
	[K_SEND] = { MNIC_WR_SEND, 0x00, 0x01, 0x02, 0x04, 0, 0, 0, 1, MNIC_WC_SEND },
	[K_SEND_IMM] = { MNIC_WR_SEND_WITH_IMM, 0x00, 0x01, 0x03, 0x05, 0, 1, 0, 1, MNIC_WC_SEND },
	[K_SEND_INV] = { MNIC_WR_SEND_WITH_INV, 0x00, 0x01, 0x16, 0x17, 0, 0, 1, 1, MNIC_WC_SEND },
	[K_WRITE] = { MNIC_WR_RDMA_WRITE, 0x06, 0x07, 0x08, 0x0a, 1, 0, 0, 0, MNIC_WC_RDMA_WRITE },
	[K_WRITE_IMM] = { MNIC_WR_RDMA_WRITE_WITH_IMM, 0x06, 0x07, 0x09, 0x0b, 1, 1, 0, 1,
			  MNIC_WC_RDMA_WRITE },
};

/* Frames f0.. carry message kind k of len bytes from SRC at psn0. */
static void check_msg(unsigned f0, unsigned k, uint32_t len, uint32_t mtu, uint32_t psn0,
		      int solicited)
{
	uint32_t n = len ? (len + mtu - 1) / mtu : 1, i;

	assert_true(f0 + n <= nframes);
	for (i = 0; i < n; i++) {
		struct rocev2_pkt p;
		uint32_t exp_len = i + 1 < n ? mtu : len - i * mtu;
		int first = i == 0, last = i + 1 == n;
		uint8_t exp_op = first && last ? kinds[k].only
				 : first      ? kinds[k].first
				 : last       ? kinds[k].last
					      : kinds[k].middle;
		const uint8_t *hdr;

		frame_pkt(f0 + i, &p);
		assert_int_equal(p.opcode, exp_op);
		assert_int_equal(p.psn, (psn0 + i) & BTH_PSN_MASK);
		assert_int_equal(p.paylen, exp_len);
		assert_int_equal(bth_pad(p.bth), (-exp_len) & 3u);
		assert_memory_equal(p.payload, host + SRC + i * mtu, exp_len);
		assert_int_equal(p.ackreq, last);
		assert_int_equal(bth_se(p.bth), last && solicited && kinds[k].se_ok);
		hdr = p.bth->b + BTH_LEN;
		if (kinds[k].reth && first) {
			const struct reth *r = (const struct reth *)hdr;

			assert_int_equal(reth_va(r), REMOTE_VA);
			assert_int_equal(reth_rkey(r), REMOTE_RKEY);
			assert_int_equal(reth_len(r), len);
			hdr += RETH_LEN;
		}
		if (kinds[k].imm && last)
			assert_int_equal(get_be32(hdr), 0xa1b2c3d4u);
		if (kinds[k].inv && last)
			assert_int_equal(get_be32(hdr), 0xa1b2c3d4u);
		assert_int_equal(p.bth->b + p.info->hdr_len, p.payload);
	}
}

static void test_message_packets(void **state)
{
	static const unsigned mtus[] = { ROCEV2_MTU_256, ROCEV2_MTU_4096 };
	unsigned m, k, s;

	(void)state;
	for (m = 0; m < 2; m++) {
		for (k = 0; k < K_NUM; k++) {
			struct cfg c = cfg_default;
			uint32_t mtu = rocev2_mtu_bytes(mtus[m]);
			const uint32_t sizes[] = { 0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu + 17 };

			c.mtu = mtus[m];
			for (s = 0; s < 6; s++) {
				uint32_t n = sizes[s] ? (sizes[s] + mtu - 1) / mtu : 1;

				c.sq_psn = 100 + s;
				h_init(&c);
				post_op(kinds[k].wr, 1, SRC, sizes[s], MNIC_SEND_SIGNALED);
				assert_int_equal(pump(), n);
				check_msg(0, k, sizes[s], mtu, 100 + s, 0);
				assert_int_equal(e->cnt.req_packets, n);
				assert_int_equal(qp->req.psn, 100 + s + n);
				/* ACK of the last PSN completes it. */
				ack(100 + s + n - 1);
				expect_cqe(1, MNIC_WC_SUCCESS, kinds[k].wc, sizes[s]);
				expect_no_cqe();
				assert_false(timer_armed(&qp->comp.retrans_timer));
			}
		}
	}
}

/* IBA 9.2.3: SE on the last packet of a SEND or WRITE with immediate
 * only, when the WR asked for it. */
static void test_solicited_event(void **state)
{
	unsigned k;

	(void)state;
	for (k = 0; k < K_NUM; k++) {
		h_init(&cfg_default);
		post_op(kinds[k].wr, 1, SRC, 3 * 256 + 17, MNIC_SEND_SOLICITED);
		assert_int_equal(pump(), 4);
		check_msg(0, k, 3 * 256 + 17, 256, 0, 1);
	}
}

/* Several SGEs: the payload is the concatenation, split at MTU borders
 * independent of SGE borders. */
static void test_gather_across_sges(void **state)
{
	struct mnic_send_wqe w = wqe(MNIC_WR_SEND, 1, SRC, 100, 0);
	uint8_t expect[700];
	unsigned i, off = 0;

	(void)state;
	h_init(&cfg_default);
	w.num_sge = 3;
	w.sge[1] = (struct mnic_sge){ SRC + 5000, 301, lkey };
	w.sge[2] = (struct mnic_sge){ SRC + 9001, 299, lkey };
	memcpy(expect, host + SRC, 100);
	memcpy(expect + 100, host + SRC + 5000, 301);
	memcpy(expect + 401, host + SRC + 9001, 299);
	post(&w);
	assert_int_equal(pump(), 3);
	for (i = 0; i < 3; i++) {
		struct rocev2_pkt p;

		frame_pkt(i, &p);
		assert_memory_equal(p.payload, expect + off, p.paylen);
		off += p.paylen;
	}
	assert_int_equal(off, 700);
}

/* An inline WQE: the payload is the WQE's own bytes (mnic/queues.h
 * MNIC_SEND_INLINE), segmented by the MTU, read again from the SQ slot on
 * a retransmission; the gather list's MR is never consulted. */
static struct mnic_send_wqe inline_wqe(uint8_t opcode, uint64_t wr_id, uint32_t len)
{
	struct mnic_send_wqe w = wqe(opcode, wr_id, 0, 0, MNIC_SEND_INLINE | MNIC_SEND_SIGNALED);
	uint32_t i;

	memset(w.sge, 0, sizeof(w.sge));
	w.num_sge = 0;
	w.inline_len = len;
	for (i = 0; i < len && i < MNIC_MAX_INLINE; i++)
		w.inline_data[i] = (uint8_t)(i * 7u + 3u);
	return w;
}

static void test_inline_payload(void **state)
{
	struct mnic_send_wqe w = inline_wqe(MNIC_WR_SEND, 1, MNIC_MAX_INLINE);
	struct mnic_send_wqe wr = inline_wqe(MNIC_WR_RDMA_WRITE, 2, 5);
	struct rocev2_pkt p0, p1, p2;

	(void)state;
	h_init(&cfg_default);
	post(&w);
	assert_int_equal(pump(), 2);           /* 448 bytes at MTU 256 */
	frame_pkt(0, &p0);
	frame_pkt(1, &p1);
	assert_int_equal(p0.paylen, 256);
	assert_int_equal(p1.paylen, MNIC_MAX_INLINE - 256);
	assert_memory_equal(p0.payload, w.inline_data, 256);
	assert_memory_equal(p1.payload, w.inline_data + 256, MNIC_MAX_INLINE - 256);
	assert_int_equal(e->cnt.req_inline_pkts, 2);
	assert_int_equal(e->cnt.sge_prot_errors, 0);
	/* The retransmission reads the slot again: the same bytes. */
	advance(4096ull << 10);
	assert_int_equal(pump(), 2);
	frame_pkt(2, &p2);
	assert_memory_equal(p2.payload, w.inline_data, 256);
	assert_int_equal(e->cnt.req_retransmits, 2);   /* per packet */
	ack(1);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, MNIC_MAX_INLINE);
	/* An inline WRITE: RETH length 5, the five bytes. */
	post(&wr);
	assert_int_equal(pump(), 1);
	frame_pkt(4, &p0);
	assert_int_equal(p0.paylen, 5);
	assert_memory_equal(p0.payload, wr.inline_data, 5);
	ack(2);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 5);
	expect_no_cqe();
}

/* Inline data only on SENDs and WRITEs, with no gather list, at most
 * MNIC_MAX_INLINE bytes (IBA 10.8.2.1; mnic/queues.h): anything else
 * completes in error and nothing is sent. */
static void test_inline_refusals(void **state)
{
	static const struct {
		const char *what;
		uint8_t opcode, num_sge;
		uint32_t len;
		uint8_t status;
	} cases[] = {
		{ "inline READ", MNIC_WR_RDMA_READ, 0, 8, MNIC_WC_LOC_QP_OP_ERR },
		{ "inline atomic", MNIC_WR_ATOMIC_FETCH_AND_ADD, 0, 8, MNIC_WC_LOC_QP_OP_ERR },
		{ "inline with a gather list", MNIC_WR_SEND, 1, 8, MNIC_WC_LOC_QP_OP_ERR },
		{ "inline_len > MNIC_MAX_INLINE", MNIC_WR_SEND, 0, MNIC_MAX_INLINE + 1,
		  MNIC_WC_LOC_LEN_ERR },
		{ "inline_len 2^32 - 1", MNIC_WR_RDMA_WRITE, 0, UINT32_MAX, MNIC_WC_LOC_LEN_ERR },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mnic_send_wqe w = inline_wqe(cases[i].opcode, 0x100 + i, cases[i].len);

		h_init(&cfg_default);
		w.num_sge = cases[i].num_sge;
		w.remote_addr = 0x1000;
		post(&w);
		if (pump() != 0)
			fail_msg("%s: a packet was sent", cases[i].what);
		expect_cqe(0x100 + i, cases[i].status, 0, 0);
		assert_int_equal(qp->state, ROCEV2_QPS_ERR);
		assert_int_equal(e->cnt.req_bad_wqe, 1);
		assert_int_equal(e->cnt.req_inline_pkts, 0);
	}
}

static void test_read_request(void **state)
{
	static const unsigned mtus[] = { ROCEV2_MTU_256, ROCEV2_MTU_4096 };
	unsigned m, s;

	(void)state;
	for (m = 0; m < 2; m++) {
		struct cfg c = cfg_default;
		uint32_t mtu = rocev2_mtu_bytes(mtus[m]);
		const uint32_t sizes[] = { 0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu + 17 };

		c.mtu = mtus[m];
		for (s = 0; s < 6; s++) {
			uint32_t n = sizes[s] ? (sizes[s] + mtu - 1) / mtu : 1;
			struct rocev2_pkt p;
			const struct reth *r;

			h_init(&c);
			post_op(MNIC_WR_RDMA_READ, 1, DST, sizes[s], MNIC_SEND_SIGNALED);
			post_op(MNIC_WR_SEND, 2, SRC, 0, 0);
			assert_int_equal(pump(), 2);
			frame_pkt(0, &p);
			assert_int_equal(p.opcode, OP_READ_REQUEST);
			assert_int_equal(p.psn, 0);
			assert_int_equal(p.paylen, 0);
			assert_true(p.ackreq);
			r = pkt_reth(&p);
			assert_int_equal(reth_va(r), REMOTE_VA);
			assert_int_equal(reth_rkey(r), REMOTE_RKEY);
			assert_int_equal(reth_len(r), sizes[s]);
			/* The READ used one PSN per response packet. */
			frame_pkt(1, &p);
			assert_int_equal(p.opcode, OP_SEND_ONLY);
			assert_int_equal(p.psn, n);
			assert_int_equal(qp->req.track[0].last_psn, n - 1);
			assert_int_equal(qp->req.rd_atomic_outstanding, 1);
		}
	}
}

static void test_atomic_requests(void **state)
{
	struct mnic_send_wqe w;
	struct rocev2_pkt p;
	const struct atmeth *a;

	(void)state;
	h_init(&cfg_default);
	w = wqe(MNIC_WR_ATOMIC_CMP_AND_SWP, 1, DST, 8, 0);
	w.remote_addr = 0x1000;
	w.compare_add = 0x1111222233334444ull;
	w.swap = 0x5555666677778888ull;
	post(&w);
	w = wqe(MNIC_WR_ATOMIC_FETCH_AND_ADD, 2, DST + 8, 8, 0);
	w.remote_addr = 0x2008;
	w.compare_add = 42;
	post(&w);
	assert_int_equal(pump(), 2);

	frame_pkt(0, &p);
	assert_int_equal(p.opcode, OP_COMPARE_SWAP);
	assert_int_equal(p.psn, 0);
	assert_true(p.ackreq);
	a = pkt_atmeth(&p);
	assert_int_equal(atmeth_va(a), 0x1000);
	assert_int_equal(atmeth_rkey(a), REMOTE_RKEY);
	assert_int_equal(atmeth_swap_add(a), 0x5555666677778888ull);
	assert_int_equal(atmeth_comp(a), 0x1111222233334444ull);

	frame_pkt(1, &p);
	assert_int_equal(p.opcode, OP_FETCH_ADD);
	assert_int_equal(p.psn, 1);
	a = pkt_atmeth(&p);
	assert_int_equal(atmeth_va(a), 0x2008);
	assert_int_equal(atmeth_swap_add(a), 42);
	assert_int_equal(atmeth_comp(a), 0);
	assert_int_equal(qp->req.rd_atomic_outstanding, 2);
}

/* IBA 9.7.1: PSNs are 24 bits; a message, a READ's response range and the
 * ACKs all cross 0xFFFFFF -> 0. */
static void test_psn_wrap(void **state)
{
	struct cfg c = cfg_default;
	uint8_t data[256];
	struct rocev2_pkt p;

	(void)state;
	c.sq_psn = 0xfffffe;
	h_init(&c);
	post_op(MNIC_WR_SEND, 1, SRC, 3 * 256 + 17, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_RDMA_READ, 2, DST, 2 * 256, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 3, SRC, 5, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 6);
	check_msg(0, K_SEND, 3 * 256 + 17, 256, 0xfffffe, 0);
	frame_pkt(4, &p);
	assert_int_equal(p.opcode, OP_READ_REQUEST);
	assert_int_equal(p.psn, 2);
	frame_pkt(5, &p);
	assert_int_equal(p.psn, 4);

	ack(1);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 3 * 256 + 17);
	memset(data, 0x5a, sizeof(data));
	inject(OP_READ_RESPONSE_FIRST, 2, AETH_ACK_UNLIMITED, data, 256, 0);
	inject(OP_READ_RESPONSE_LAST, 3, AETH_ACK_UNLIMITED, data, 256, 0);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_RDMA_READ, 512);
	ack(4);
	expect_cqe(3, MNIC_WC_SUCCESS, MNIC_WC_SEND, 5);
	expect_no_cqe();
	assert_int_equal(qp->comp.psn, 5);
	assert_int_equal(e->cnt.comp_dup_acks, 0);
}

/* RXE_MAX_UNACKED_PSNS: at most 128 PSNs beyond comp.psn; AckReq on the
 * last packet and at least every 64 packets. */
static void test_psn_window_and_ackreq(void **state)
{
	unsigned i;

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_SEND, 1, SRC, 200 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 128);
	assert_true(e->cnt.req_window_full >= 1);
	assert_int_equal(qp->req.state, REQ_STATE_WAIT);
	for (i = 0; i < 128; i++) {
		struct rocev2_pkt p;

		frame_pkt(i, &p);
		assert_int_equal(p.psn, i);
		assert_int_equal(p.ackreq, i == 63 || i == 127);
	}
	ack(63);                        /* window opens by 64 */
	assert_int_equal(pump(), 64);
	ack(191);
	assert_int_equal(pump(), 8);
	for (i = 128; i < 200; i++) {
		struct rocev2_pkt p;

		frame_pkt(i, &p);
		assert_int_equal(p.psn, i);
		assert_int_equal(p.ackreq, i == 191 || i == 199);
	}
	expect_no_cqe();
	ack(199);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 200 * 256);
}

/* Packets sent again ask for an ACK every ROCEV2_RETRY_PKT_PER_ACK (8), so
 * that a recovery's progress is confirmed as it goes; once past what was
 * sent before, every 64 again. */
static void test_ackreq_when_retransmitting(void **state)
{
	unsigned i;

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_WRITE, 1, SRC, 40 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 40);
	ack(1);
	inject(OP_ACKNOWLEDGE, 4, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 37);   /* PSN 4 twice (req_repeat_head), 5..39 */
	for (i = 41; i < 77; i++) {
		struct rocev2_pkt p;

		frame_pkt(i, &p);
		assert_int_equal(p.psn, i - 37);
		assert_int_equal(p.ackreq, (i - 41 + 1) % 8 == 0 || i == 76);
	}
	ack(39);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 40 * 256);
	/* New packets after it: the usual spacing. */
	post_op(MNIC_WR_RDMA_WRITE, 2, SRC, 20 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 20);
	for (i = 77; i < 97; i++) {
		struct rocev2_pkt p;

		frame_pkt(i, &p);
		assert_int_equal(p.ackreq, i == 96);
	}
}

/* At most ROCEV2_MAX_INFLIGHT_WQE WQEs between the completer and the
 * requester (the size of req.track[]). */
static void test_inflight_wqe_limit(void **state)
{
	unsigned i;

	(void)state;
	h_init(&cfg_default);
	for (i = 0; i < 70; i++)
		post_op(MNIC_WR_SEND, i, SRC, 0, 0);
	assert_int_equal(pump(), ROCEV2_MAX_INFLIGHT_WQE);
	assert_true(e->cnt.req_inflight_full >= 1);
	ack(9);
	assert_int_equal(pump(), 6);
	assert_int_equal(qp->comp.wqe_index, 10);
	ack(69);
	assert_int_equal(qp->comp.wqe_index, 70);
	assert_int_equal(qp->sq.ci, 70);
	assert_int_equal(e->cnt.comp_completions, 70);
	expect_no_cqe();                /* all unsignaled */
}

/* max_rd_atomic: the third READ waits until the first completes. */
static void test_rd_atomic_limit(void **state)
{
	struct cfg c = cfg_default;
	uint8_t data[16] = { 1, 2, 3 };
	struct rocev2_pkt p;

	(void)state;
	c.max_rd_atomic = 2;
	h_init(&c);
	post_op(MNIC_WR_RDMA_READ, 1, DST, 16, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_ATOMIC_FETCH_AND_ADD, 2, DST + 64, 8, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_RDMA_READ, 3, DST + 128, 16, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 2);
	assert_int_equal(e->cnt.req_rd_atomic_limit, 1);
	assert_int_equal(qp->req.rd_atomic_outstanding, 2);
	inject(OP_READ_RESPONSE_ONLY, 0, AETH_ACK_UNLIMITED, data, 16, 0);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_READ, 16);
	assert_int_equal(pump(), 1);
	frame_pkt(2, &p);
	assert_int_equal(p.opcode, OP_READ_REQUEST);
	assert_int_equal(p.psn, 2);
	assert_int_equal(qp->req.rd_atomic_outstanding, 2);
}

/* max_rd_atomic 0: reads and atomics are not allowed on this QP. */
static void test_rd_atomic_zero_invalid(void **state)
{
	struct cfg c = cfg_default;
	struct rocev2_event ev;

	(void)state;
	c.max_rd_atomic = 0;
	h_init(&c);
	post_op(MNIC_WR_RDMA_READ, 7, DST, 16, 0);
	post_op(MNIC_WR_SEND, 8, SRC, 16, 0);
	assert_int_equal(pump(), 0);
	expect_cqe(7, MNIC_WC_LOC_QP_OP_ERR, 0, 0);
	expect_cqe(8, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	expect_no_cqe();
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_int_equal(e->cnt.req_bad_wqe, 1);
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
}

/* IBA 10.8.3.3: a fenced WR waits for earlier READs/atomics; unfenced
 * ones do not. */
static void test_fence(void **state)
{
	uint8_t data[16] = { 0 };
	struct rocev2_pkt p;

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_READ, 1, DST, 16, 0);
	post_op(MNIC_WR_SEND, 2, SRC, 10, 0);
	post_op(MNIC_WR_SEND, 3, SRC, 10, MNIC_SEND_FENCE);
	assert_int_equal(pump(), 2);
	assert_int_equal(e->cnt.req_fence_wait, 1);
	assert_int_equal(qp->req.state, REQ_STATE_WAIT);
	ack(1);                         /* passes the READ: its responses were lost */
	assert_int_equal(pump(), 2);    /* READ and SEND 2 again, still fenced */
	assert_int_equal(nframes, 4);
	inject(OP_READ_RESPONSE_ONLY, 0, AETH_ACK_UNLIMITED, data, 16, 0);
	assert_int_equal(pump(), 1);
	frame_pkt(4, &p);
	assert_int_equal(p.opcode, OP_SEND_ONLY);
	assert_int_equal(p.psn, 2);
}

/* IBA 10.8.3: WQEs the requester cannot execute complete with an error
 * and move the QP to Error; the WQEs after them are flushed. */
static void test_invalid_wqes(void **state)
{
	static const struct {
		const char *what;
		uint8_t opcode, num_sge;
		uint32_t len0, len1;
		uint64_t remote;
		uint8_t status;
	} cases[] = {
		{ "unsupported opcode 7", 7, 1, 8, 0, REMOTE_VA, MNIC_WC_LOC_QP_OP_ERR },
		{ "opcode out of range", 200, 1, 8, 0, REMOTE_VA, MNIC_WC_LOC_QP_OP_ERR },
		{ "num_sge > max_send_sge", MNIC_WR_SEND, 5, 8, 8, REMOTE_VA,
		  MNIC_WC_LOC_QP_OP_ERR },
		{ "message > ROCEV2_MAX_MSG", MNIC_WR_RDMA_WRITE, 2, 1u << 29, (1u << 29) + 1,
		  REMOTE_VA, MNIC_WC_LOC_LEN_ERR },
		{ "misaligned atomic", MNIC_WR_ATOMIC_CMP_AND_SWP, 1, 8, 0, 0x1004,
		  MNIC_WC_LOC_QP_OP_ERR },
		{ "atomic SGE of 4 bytes", MNIC_WR_ATOMIC_FETCH_AND_ADD, 1, 4, 0, 0x1000,
		  MNIC_WC_LOC_LEN_ERR },
		{ "atomic with two SGEs", MNIC_WR_ATOMIC_FETCH_AND_ADD, 2, 4, 4, 0x1000,
		  MNIC_WC_LOC_LEN_ERR },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfg c = cfg_default;
		struct mnic_send_wqe w;
		struct rocev2_event ev;

		c.max_send_sge = 4;
		h_init(&c);
		w = wqe(cases[i].opcode, 0x100 + i, DST, cases[i].len0, 0);
		w.num_sge = cases[i].num_sge;
		w.remote_addr = cases[i].remote;
		w.sge[1] = (struct mnic_sge){ DST + 64, cases[i].len1, lkey };
		w.sge[2] = w.sge[3] = w.sge[4] = w.sge[1];
		post(&w);
		post_op(MNIC_WR_SEND, 0x200 + i, SRC, 8, MNIC_SEND_SIGNALED);
		if (pump() != 0)
			fail_msg("%s: a packet was sent", cases[i].what);
		expect_cqe(0x100 + i, cases[i].status, 0, 0);
		expect_cqe(0x200 + i, MNIC_WC_WR_FLUSH_ERR, 0, 0);
		expect_no_cqe();
		assert_int_equal(qp->state, ROCEV2_QPS_ERR);
		assert_int_equal(e->cnt.req_bad_wqe, 1);
		assert_int_equal(e->cnt.flushed_wqes, 1);
		assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
		/* IBA 10.8.3.1: WRs posted in Error complete flushed at once. */
		post_op(MNIC_WR_SEND, 0x300 + i, SRC, 8, 0);
		expect_cqe(0x300 + i, MNIC_WC_WR_FLUSH_ERR, 0, 0);
		assert_int_equal(pump(), 0);
	}
}

/* An invalid WQE behind outstanding ones completes after them, in order. */
static void test_invalid_wqe_after_outstanding(void **state)
{
	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_SEND, 1, SRC, 300, MNIC_SEND_SIGNALED);
	post_op(8, 2, SRC, 8, 0);       /* 8: not an opcode we execute */
	post_op(MNIC_WR_SEND, 3, SRC, 8, 0);
	assert_int_equal(pump(), 2);
	expect_no_cqe();
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
	assert_int_equal(qp->req.state, REQ_STATE_ERROR);
	ack(1);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 300);
	expect_cqe(2, MNIC_WC_LOC_QP_OP_ERR, 0, 0);
	expect_cqe(3, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	expect_no_cqe();
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
}

/* IBA 10.8.3: an SGE the QP may not read (bad lkey) is a local protection
 * error; the packets before the bad SGE went out. */
static void test_gather_protection(void **state)
{
	struct mnic_send_wqe w;

	(void)state;
	h_init(&cfg_default);
	w = wqe(MNIC_WR_SEND, 1, SRC, 300, 0);
	w.num_sge = 2;
	w.sge[1] = (struct mnic_sge){ SRC, 300, 0x7777 };
	post(&w);
	post_op(MNIC_WR_SEND, 2, SRC, 8, 0);
	assert_int_equal(pump(), 1);    /* bytes 0..255 came from the good SGE */
	expect_cqe(1, MNIC_WC_LOC_PROT_ERR, 0, 0);
	expect_cqe(2, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_false(timer_armed(&qp->comp.retrans_timer));
}

/* TX ring full: nothing changes, the same packet goes out later. */
static void test_tx_busy(void **state)
{
	(void)state;
	h_init(&cfg_default);
	tx_rc = -HAL_EAGAIN;
	post_op(MNIC_WR_SEND, 1, SRC, 600, 0);
	rocev2_poll(e, 64);
	assert_int_equal(nframes, 0);
	assert_true(e->cnt.tx_busy >= 1);
	assert_int_equal(qp->req.psn, 0);
	assert_true(qp->scheduled);
	assert_int_equal(e->cnt.req_packets, 0);
	tx_rc = 0;
	assert_int_equal(pump(), 3);
	check_msg(0, K_SEND, 600, 256, 0, 0);
}

/* The budget bounds one run; the QP stays scheduled for the rest. */
static void test_budget(void **state)
{
	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_SEND, 1, SRC, 5 * 256, 0);
	qp->scheduled = 0;              /* take it off the FIFO: run it by hand */
	e->sched_head = e->sched_tail = NULL;
	assert_int_equal(rocev2_req_run(e, qp, 2), 2);
	assert_true(qp->scheduled);
	assert_int_equal(qp->req.state, REQ_STATE_SENDING);
	assert_int_equal(rocev2_req_run(e, qp, 0), 0);
	assert_int_equal(pump(), 3);
	check_msg(0, K_SEND, 5 * 256, 256, 0, 0);
}

/* IBA 10.3.1: SQD finishes the message under way, starts nothing new,
 * and reports the drained SQ once everything is acknowledged. */
static void test_sqd(void **state)
{
	struct rocev2_event ev;
	struct rocev2_pkt p;

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_SEND, 1, SRC, 3 * 256, 0);
	qp->scheduled = 0;
	e->sched_head = e->sched_tail = NULL;
	assert_int_equal(rocev2_req_run(e, qp, 1), 1);
	set_state(ROCEV2_QPS_SQD);
	post_op(MNIC_WR_SEND, 2, SRC, 8, 0);
	rocev2_sched(e, qp);
	assert_int_equal(pump(), 2);    /* the rest of message 1 only */
	check_msg(0, K_SEND, 3 * 256, 256, 0, 0);
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
	ack(2);
	pump();
	assert_int_equal(rocev2_get_event(e, 0, &ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_SQ_DRAINED);
	assert_int_equal(ev.handle, qpn);
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
	set_state(ROCEV2_QPS_RTS);
	assert_int_equal(pump(), 1);
	frame_pkt(3, &p);
	assert_int_equal(p.psn, 3);
}

/* MigrOS: a stopped or paused QP sends nothing. */
static void test_stopped_paused(void **state)
{
	(void)state;
	h_init(&cfg_default);
	qp->paused = 1;
	post_op(MNIC_WR_SEND, 1, SRC, 8, 0);
	assert_int_equal(pump(), 0);
	qp->paused = 0;
	qp->stopped = 1;
	rocev2_sched(e, qp);
	assert_int_equal(pump(), 0);
	qp->stopped = 0;
	rocev2_sched(e, qp);
	assert_int_equal(pump(), 1);
}

/* Reaching RTS arms nothing; a sent packet arms the retransmit timer at
 * now + 4.096 us * 2^timeout; timeout 0 arms none. */
static void test_retransmit_timer_armed(void **state)
{
	struct cfg c = cfg_default;

	(void)state;
	h_init(&c);
	assert_false(timer_armed(&qp->comp.retrans_timer));
	post_op(MNIC_WR_SEND, 1, SRC, 8, 0);
	pump();
	assert_true(timer_armed(&qp->comp.retrans_timer));
	assert_int_equal(qp->comp.retrans_timer.deadline, now + (4096ull << 10));
	/* It fires: the packet goes out again, counted as a retransmission. */
	advance((4096ull << 10) - 1);
	assert_int_equal(pump(), 0);
	advance(1);
	assert_int_equal(pump(), 1);
	check_msg(1, K_SEND, 8, 256, 0, 0);
	assert_int_equal(e->cnt.req_retransmits, 1);
	assert_int_equal(e->cnt.req_packets, 2);
	c.timeout = 0;
	h_init(&c);
	post_op(MNIC_WR_SEND, 1, SRC, 8, 0);
	pump();
	assert_false(timer_armed(&qp->comp.retrans_timer));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_message_packets),
		cmocka_unit_test(test_solicited_event),
		cmocka_unit_test(test_gather_across_sges),
		cmocka_unit_test(test_inline_payload),
		cmocka_unit_test(test_inline_refusals),
		cmocka_unit_test(test_read_request),
		cmocka_unit_test(test_atomic_requests),
		cmocka_unit_test(test_psn_wrap),
		cmocka_unit_test(test_psn_window_and_ackreq),
		cmocka_unit_test(test_ackreq_when_retransmitting),
		cmocka_unit_test(test_inflight_wqe_limit),
		cmocka_unit_test(test_rd_atomic_limit),
		cmocka_unit_test(test_rd_atomic_zero_invalid),
		cmocka_unit_test(test_fence),
		cmocka_unit_test(test_invalid_wqes),
		cmocka_unit_test(test_invalid_wqe_after_outstanding),
		cmocka_unit_test(test_gather_protection),
		cmocka_unit_test(test_tx_busy),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_sqd),
		cmocka_unit_test(test_stopped_paused),
		cmocka_unit_test(test_retransmit_timer_armed),
	};
	return cmocka_run_group_tests_name("rocev2/req", tests, NULL, NULL);
}
