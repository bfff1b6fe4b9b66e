/* rocev2 comp.c: the completer.  The requester (req.c) sends real packets
 * from WQEs in a fake host window; responses (ACK, NAK, RNR NAK, read
 * responses, atomic ACKs) are crafted with wire.h helpers on a second
 * engine that plays the peer's address and fed through rocev2_rx(); CQEs
 * are read back from the host CQ ring; time is a fake clock driving the
 * real timer heap.  The whole engine is linked (queue.c, qp.c, net.c,
 * recv.c, resp.c ...), no doubles. */
#include <stdlib.h>

#include "reqcomp_harness.h"

#define T_RETRANS (4096ull << 10)       /* cfg_default.timeout = 10 */

/* IBA 9.7.5.1.2: one ACK retires every WQE up to its PSN; CQEs only for
 * the signaled ones, in SQ order; the SQ consumer index moves for all. */
static void test_ack_coalescing(void **state)
{
	struct cfg c = cfg_default;

	(void)state;
	h_init(&c);
	post_op(MNIC_WR_SEND, 1, SRC, 10, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 2, SRC, 20, 0);
	post_op(MNIC_WR_RDMA_WRITE, 3, SRC, 300, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND_WITH_IMM, 4, SRC, 0, 0);
	assert_int_equal(pump(), 5);
	assert_true(timer_armed(&qp->comp.retrans_timer));
	ack(4);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 10);
	expect_cqe(3, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 300);
	expect_no_cqe();
	assert_int_equal(qp->sq.ci, 4);
	assert_int_equal(qp->comp.wqe_index, 4);
	assert_int_equal(qp->comp.psn, 5);
	assert_int_equal(e->cnt.comp_completions, 4);
	assert_int_equal(e->cnt.comp_acks, 1);
	assert_false(timer_armed(&qp->comp.retrans_timer));

	/* sq_sig_all: every WQE completes with a CQE. */
	c.sig_all = 1;
	h_init(&c);
	post_op(MNIC_WR_SEND, 1, SRC, 10, 0);
	post_op(MNIC_WR_RDMA_WRITE_WITH_IMM, 2, SRC, 10, 0);
	assert_int_equal(pump(), 2);
	ack(1);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 10);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 10);
	expect_no_cqe();
}

/* An ACK inside a message moves comp.psn and restarts the retransmit
 * timer; the WQE completes at its last PSN. */
static void test_partial_ack(void **state)
{
	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_SEND, 1, SRC, 3 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 3);
	assert_int_equal(qp->comp.retrans_timer.deadline, now + T_RETRANS);
	advance(1000);
	ack(0);
	expect_no_cqe();
	assert_int_equal(qp->comp.psn, 1);
	assert_int_equal(qp->comp.retrans_timer.deadline, now + T_RETRANS);
	ack(2);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 3 * 256);
	assert_false(timer_armed(&qp->comp.retrans_timer));
}

/* READ responses are placed at read_offset across the SGE list. */
static void test_read_scatter(void **state)
{
	static uint8_t before[0x1000], data[785];
	struct mnic_send_wqe w;
	unsigned i;

	(void)state;
	h_init(&cfg_default);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13u + 1u);
	memcpy(before, host + DST, sizeof(before));
	w = wqe(MNIC_WR_RDMA_READ, 9, DST, 100, MNIC_SEND_SIGNALED);
	w.num_sge = 3;
	w.sge[1] = (struct mnic_sge){ DST + 1000, 300, lkey };
	w.sge[2] = (struct mnic_sge){ DST + 3000, 385, lkey };
	post(&w);
	assert_int_equal(pump(), 1);
	inject(OP_READ_RESPONSE_FIRST, 0, AETH_ACK_UNLIMITED, data, 256, 0);
	inject(OP_READ_RESPONSE_MIDDLE, 1, 0, data + 256, 256, 0);
	inject(OP_READ_RESPONSE_MIDDLE, 2, 0, data + 512, 256, 0);
	expect_no_cqe();
	assert_int_equal(qp->comp.read_offset, 768);
	inject(OP_READ_RESPONSE_LAST, 3, AETH_ACK_UNLIMITED, data + 768, 17, 0);
	expect_cqe(9, MNIC_WC_SUCCESS, MNIC_WC_RDMA_READ, 785);
	assert_memory_equal(host + DST, data, 100);
	assert_memory_equal(host + DST + 1000, data + 100, 300);
	assert_memory_equal(host + DST + 3000, data + 400, 385);
	/* Nothing around the SGEs moved. */
	assert_memory_equal(host + DST + 100, before + 100, 900);
	assert_memory_equal(host + DST + 1300, before + 1300, 1700);
	assert_memory_equal(host + DST + 3385, before + 3385, sizeof(before) - 3385);
	assert_int_equal(qp->req.rd_atomic_outstanding, 0);
	assert_int_equal(qp->comp.psn, 4);

	/* MTU 4096: one RESPONSE_ONLY. */
	{
		struct cfg c = cfg_default;
		static uint8_t big[4000];

		c.mtu = ROCEV2_MTU_4096;
		h_init(&c);
		memset(big, 0xab, sizeof(big));
		post_op(MNIC_WR_RDMA_READ, 10, DST, 4000, MNIC_SEND_SIGNALED);
		assert_int_equal(pump(), 1);
		inject(OP_READ_RESPONSE_ONLY, 0, AETH_ACK_UNLIMITED, big, 4000, 0);
		expect_cqe(10, MNIC_WC_SUCCESS, MNIC_WC_RDMA_READ, 4000);
		assert_memory_equal(host + DST, big, 4000);
	}
}

/* A response that does not fit its WQE is a bad response (IBA 9.9.2):
 * the WQE completes with BAD_RESP_ERR and the QP goes to Error. */
static void test_bad_responses(void **state)
{
	static const struct {
		const char *what;
		uint8_t wr;
		uint32_t len;
		uint8_t opcode[2];
		uint32_t paylen[2];
		unsigned n;
	} cases[] = {
		{ "ONLY longer than the READ", MNIC_WR_RDMA_READ, 100,
		  { OP_READ_RESPONSE_ONLY }, { 104 }, 1 },
		{ "FIRST shorter than the MTU", MNIC_WR_RDMA_READ, 600,
		  { OP_READ_RESPONSE_FIRST }, { 200 }, 1 },
		{ "LAST shorter than the rest", MNIC_WR_RDMA_READ, 300,
		  { OP_READ_RESPONSE_FIRST, OP_READ_RESPONSE_LAST }, { 256, 20 }, 2 },
		{ "read response to a SEND", MNIC_WR_SEND, 16,
		  { OP_READ_RESPONSE_ONLY }, { 16 }, 1 },
		{ "atomic ACK to a READ", MNIC_WR_RDMA_READ, 16,
		  { OP_ATOMIC_ACKNOWLEDGE }, { 0 }, 1 },
	};
	static uint8_t data[512];
	unsigned i, k;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		h_init(&cfg_default);
		post_op(cases[i].wr, 0x10 + i, DST, cases[i].len, 0);
		post_op(MNIC_WR_SEND, 0x20 + i, SRC, 8, 0);
		assert_int_equal(pump(), 2);
		for (k = 0; k < cases[i].n; k++)
			inject(cases[i].opcode[k], k, AETH_ACK_UNLIMITED, data, cases[i].paylen[k], 0);
		if (qp->state != ROCEV2_QPS_ERR)
			fail_msg("%s: QP not in error", cases[i].what);
		expect_cqe(0x10 + i, MNIC_WC_BAD_RESP_ERR, 0, 0);
		expect_cqe(0x20 + i, MNIC_WC_WR_FLUSH_ERR, 0, 0);
		expect_no_cqe();
		assert_int_equal(e->cnt.comp_bad_resp, 1);
	}
}

/* IBA 9.7.5.1.5: read responses in sequence at comp.psn; anything else is
 * dropped and waits for the retry. */
static void test_read_out_of_sequence(void **state)
{
	static uint8_t data[768];

	(void)state;
	h_init(&cfg_default);
	memset(data, 0x3c, sizeof(data));
	post_op(MNIC_WR_RDMA_READ, 1, DST, 768, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 1);
	inject(OP_READ_RESPONSE_MIDDLE, 1, 0, data, 256, 0);       /* ahead */
	inject(OP_READ_RESPONSE_MIDDLE, 0, 0, data, 256, 0);       /* no FIRST */
	inject(OP_READ_RESPONSE_FIRST, 0, AETH_ACK_UNLIMITED, data, 256, 0);
	inject(OP_READ_RESPONSE_LAST, 2, AETH_ACK_UNLIMITED, data, 256, 0);   /* ahead */
	inject(OP_READ_RESPONSE_FIRST, 1, AETH_ACK_UNLIMITED, data, 256, 0);  /* FIRST again */
	assert_int_equal(e->cnt.comp_out_of_seq, 4);
	assert_int_equal(qp->comp.psn, 1);
	inject(OP_READ_RESPONSE_MIDDLE, 1, 0, data, 256, 0);
	inject(OP_READ_RESPONSE_LAST, 2, AETH_ACK_UNLIMITED, data, 256, 0);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_READ, 768);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
}

/* A READ rewound after part of its data arrived asks for the rest only
 * (IBA 9.7.4.1.4): RETH va/len moved by read_offset, PSN = comp.psn. */
static void test_read_partial_retry(void **state)
{
	static uint8_t data[768];
	struct rocev2_pkt p;
	unsigned i;

	(void)state;
	h_init(&cfg_default);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i ^ 0x5au);
	post_op(MNIC_WR_RDMA_READ, 1, DST, 768, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 1);
	inject(OP_READ_RESPONSE_FIRST, 0, AETH_ACK_UNLIMITED, data, 256, 0);
	advance(T_RETRANS);
	assert_int_equal(pump(), 1);
	frame_pkt(1, &p);
	assert_int_equal(p.opcode, OP_READ_REQUEST);
	assert_int_equal(p.psn, 1);
	assert_int_equal(reth_va(pkt_reth(&p)), REMOTE_VA + 256);
	assert_int_equal(reth_len(pkt_reth(&p)), 512);
	assert_int_equal(e->cnt.req_retransmits, 1);
	assert_int_equal(e->cnt.comp_retry_timeouts, 1);
	/* The tail of the first stream is now out of sequence. */
	inject(OP_READ_RESPONSE_MIDDLE, 1, 0, data + 256, 256, 0);
	assert_int_equal(e->cnt.comp_out_of_seq, 1);
	inject(OP_READ_RESPONSE_FIRST, 1, AETH_ACK_UNLIMITED, data + 256, 256, 0);
	inject(OP_READ_RESPONSE_LAST, 2, AETH_ACK_UNLIMITED, data + 512, 256, 0);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_READ, 768);
	assert_memory_equal(host + DST, data, 768);
}

/* IBA 9.7.5.1.3: an ACK past an outstanding READ means its responses were
 * lost: retry from the READ; ACKs from the same loss start no second retry. */
static void test_ack_past_read_retries(void **state)
{
	static uint8_t data[512];
	struct rocev2_pkt p;

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_READ, 1, DST, 512, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 2, SRC, 8, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 2);
	ack(2);
	expect_no_cqe();
	assert_int_equal(pump(), 2);
	frame_pkt(2, &p);
	assert_int_equal(p.opcode, OP_READ_REQUEST);
	assert_int_equal(p.psn, 0);
	assert_int_equal(reth_len(pkt_reth(&p)), 512);
	frame_pkt(3, &p);
	assert_int_equal(p.psn, 2);
	assert_int_equal(qp->comp.retry_cnt, 2);
	ack(2);                         /* same loss: no new retry */
	assert_int_equal(pump(), 0);
	assert_int_equal(qp->comp.retry_cnt, 2);
	inject(OP_READ_RESPONSE_FIRST, 0, AETH_ACK_UNLIMITED, data, 256, 0);
	inject(OP_READ_RESPONSE_LAST, 1, AETH_ACK_UNLIMITED, data, 256, 0);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_READ, 512);
	assert_int_equal(qp->comp.retry_cnt, 3);        /* progress: retries start over */
	ack(2);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_SEND, 8);
	expect_no_cqe();
}

/* ATOMIC ACKNOWLEDGE: the original value lands little-endian in the
 * WQE's 8-byte SGE; in PSN order only. */
static void test_atomic_ack(void **state)
{
	static const uint8_t orig1[8] = { 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 };
	static const uint8_t orig2[8] = { 0x2a, 0, 0, 0, 0, 0, 0, 0x80 };

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_ATOMIC_CMP_AND_SWP, 1, DST, 8, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_ATOMIC_FETCH_AND_ADD, 2, DST + 8, 8, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 2);
	/* The FAA's response first: the CAS's was lost (IBA 9.7.5.1.3), both
	 * go again (the responder replays, it does not execute twice). */
	inject(OP_ATOMIC_ACKNOWLEDGE, 1, AETH_ACK_UNLIMITED, NULL, 0, 0x800000000000002aull);
	expect_no_cqe();
	assert_int_equal(pump(), 2);
	assert_int_equal(qp->comp.retry_cnt, 2);
	inject(OP_ATOMIC_ACKNOWLEDGE, 0, AETH_ACK_UNLIMITED, NULL, 0, 0x1122334455667788ull);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_COMP_SWAP, 8);
	assert_memory_equal(host + DST, orig1, 8);
	inject(OP_ATOMIC_ACKNOWLEDGE, 1, AETH_ACK_UNLIMITED, NULL, 0, 0x800000000000002aull);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_FETCH_ADD, 8);
	assert_memory_equal(host + DST + 8, orig2, 8);
	assert_int_equal(qp->req.rd_atomic_outstanding, 0);
}

/* A plain ACK at the PSN of a READ or an atomic (the late ACK of a RESUME
 * sent again carries comp.psn, migrate.c) does not complete it: before,
 * the atomic completed with success and no result in its buffer (seen by
 * mnic-traffic across a migration under loss).  Its own response does. */
static void test_plain_ack_does_not_complete_rd_atomic(void **state)
{
	static const uint8_t orig[8] = { 7, 0, 0, 0, 0, 0, 0, 0 };

	(void)state;
	h_init(&cfg_default);
	memset(host + DST, 0xa5, 16);
	post_op(MNIC_WR_ATOMIC_CMP_AND_SWP, 1, DST, 8, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_RDMA_READ, 2, DST + 8, 8, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 2);
	inject(OP_ACKNOWLEDGE, 0, AETH_ACK_UNLIMITED, NULL, 0, 0);
	expect_no_cqe();
	assert_int_equal(e->cnt.comp_acks, 0);
	inject(OP_ATOMIC_ACKNOWLEDGE, 0, AETH_ACK_UNLIMITED, NULL, 0, 7);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_COMP_SWAP, 8);
	assert_memory_equal(host + DST, orig, 8);
	inject(OP_ACKNOWLEDGE, 1, AETH_ACK_UNLIMITED, NULL, 0, 0);
	expect_no_cqe();
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
}

/* Local protection on the completer side: READ data or an atomic result
 * into memory without LOCAL_WRITE. */
static void test_scatter_protection(void **state)
{
	static uint8_t data[16];
	unsigned i;

	(void)state;
	for (i = 0; i < 2; i++) {
		h_init(&cfg_default);
		if (i == 0)
			post_op(MNIC_WR_RDMA_READ, 1, RO_BASE, 16, 0);
		else
			post_op(MNIC_WR_ATOMIC_FETCH_AND_ADD, 1, RO_BASE, 8, 0);
		post_op(MNIC_WR_SEND, 2, SRC, 8, 0);
		assert_int_equal(pump(), 2);
		if (i == 0)
			inject(OP_READ_RESPONSE_ONLY, 0, AETH_ACK_UNLIMITED, data, 16, 0);
		else
			inject(OP_ATOMIC_ACKNOWLEDGE, 0, AETH_ACK_UNLIMITED, NULL, 0, 5);
		expect_cqe(1, MNIC_WC_LOC_PROT_ERR, 0, 0);
		expect_cqe(2, MNIC_WC_WR_FLUSH_ERR, 0, 0);
		assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	}
}

/* PSN sequence error NAK: implicit ACK before its PSN, then everything
 * from it again (MIDDLE/LAST, payload from the right offset). */
static void test_sequence_nak(void **state)
{
	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_SEND, 1, SRC + 0x8000, 8, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 2, SRC, 5 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 6);
	inject(OP_ACKNOWLEDGE, 3, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 8);
	expect_no_cqe();
	assert_int_equal(qp->comp.psn, 3);
	assert_int_equal(e->cnt.comp_naks_seq, 1);
	assert_int_equal(qp->comp.retry_cnt, 2);
	assert_int_equal(pump(), 4);
	{
		/* Frames 6..9 are packets 2..4 of message 2 (PSN 3..5), the
		 * round's first one twice (req.c req_repeat_head). */
		static const uint8_t ops[4] = { OP_SEND_MIDDLE, OP_SEND_MIDDLE, OP_SEND_MIDDLE,
						OP_SEND_LAST };
		static const uint32_t psns[4] = { 3, 3, 4, 5 };
		unsigned i;

		for (i = 0; i < 4; i++) {
			struct rocev2_pkt p;

			frame_pkt(6 + i, &p);
			assert_int_equal(p.opcode, ops[i]);
			assert_int_equal(p.psn, psns[i]);
			assert_int_equal(p.paylen, 256);
			assert_memory_equal(p.payload, host + SRC + (psns[i] - 1) * 256, 256);
			assert_int_equal(p.ackreq, i == 3);
		}
	}
	assert_int_equal(e->cnt.req_retransmits, 3);
	assert_int_equal(e->cnt.req_head_repeats, 1);
	assert_int_equal(e->cnt.comp_nak_retries, 1);
	ack(5);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_SEND, 5 * 256);
	assert_int_equal(qp->comp.retry_cnt, 3);
}

/* Retransmit timer: retry_cnt retries, then RETRY_EXC_ERR for the oldest
 * WQE and a flush of the rest; a timeout before the deadline does nothing. */
static void test_retry_exhausted(void **state)
{
	struct cfg c = cfg_default;
	struct rocev2_event ev;

	(void)state;
	c.retry_cnt = 2;
	h_init(&c);
	post_op(MNIC_WR_SEND, 1, SRC, 8, 0);
	post_op(MNIC_WR_SEND, 2, SRC, 8, 0);
	assert_int_equal(pump(), 2);
	advance(T_RETRANS - 1);
	assert_int_equal(pump(), 0);
	advance(1);
	assert_int_equal(pump(), 2);
	assert_int_equal(e->cnt.comp_retry_timeouts, 1);
	advance(T_RETRANS);
	assert_int_equal(pump(), 2);
	assert_int_equal(e->cnt.comp_retry_timeouts, 2);
	assert_int_equal(e->cnt.req_retransmits, 4);
	expect_no_cqe();
	advance(T_RETRANS);
	assert_int_equal(pump(), 0);
	assert_int_equal(e->cnt.comp_retry_exceeded, 1);
	expect_cqe(1, MNIC_WC_RETRY_EXC_ERR, 0, 0);
	expect_cqe(2, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	expect_no_cqe();
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_false(timer_armed(&qp->comp.retrans_timer));
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
}

/* IBA 9.7.6.1.3: retry_cnt 7 is seven retries, not infinite (only
 * rnr_retry 7 is): a peer that never answers ends in RETRY_EXC_ERR after
 * the first transmission and exactly seven retransmissions, and every
 * outstanding WQE completes (the oldest with the error, the rest
 * flushed). */
static void test_retry_cnt_7_dead_peer(void **state)
{
	struct cfg c = cfg_default;
	unsigned i;

	(void)state;
	c.retry_cnt = 7;
	h_init(&c);
	post_op(MNIC_WR_SEND, 1, SRC, 8, 0);
	post_op(MNIC_WR_RDMA_WRITE, 2, SRC, 2 * 256, 0);
	assert_int_equal(pump(), 3);
	for (i = 0; i < 7; i++) {
		advance(T_RETRANS);
		assert_int_equal(pump(), 3);
		assert_int_equal(qp->comp.retry_cnt, 6 - i);
		assert_int_equal(qp->state, ROCEV2_QPS_RTS);
	}
	expect_no_cqe();
	assert_int_equal(e->cnt.req_retransmits, 7 * 3);
	advance(T_RETRANS);
	assert_int_equal(pump(), 0);
	assert_int_equal(e->cnt.comp_retry_timeouts, 7);
	assert_int_equal(e->cnt.comp_retry_exceeded, 1);
	expect_cqe(1, MNIC_WC_RETRY_EXC_ERR, 0, 0);
	expect_cqe(2, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	expect_no_cqe();
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_false(timer_armed(&qp->comp.retrans_timer));
}

/* A retry is spent per recovery round without progress: sequence NAKs
 * that each acknowledge a little more (losses spread over one long
 * message) give the retries back, and each starts its recovery at once.
 * Before, a NAK during a retry was ignored until the timer and only an
 * ACK gave retries back: with 7 finite, ten losses in one message ran
 * out of them. */
static void test_retry_cnt_7_progressing_naks(void **state)
{
	struct cfg c = cfg_default;
	struct rocev2_pkt p;
	unsigned i, n, confirmed = 0;

	(void)state;
	c.retry_cnt = 7;
	h_init(&c);
	post_op(MNIC_WR_RDMA_WRITE, 1, SRC, 64 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 64);
	for (i = 1; i <= 20; i++) {
		nframes = 0;            /* frames[] holds one round */
		inject(OP_ACKNOWLEDGE, 3 * i, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
		n = pump();
		assert_int_equal(n, 64 - 3 * i + 1);    /* at once, from the NAK's PSN, */
		frame_pkt(nframes - n, &p);             /* its packet twice */
		assert_int_equal(p.psn, 3 * i);
		frame_pkt(nframes - n + 1, &p);
		assert_int_equal(p.psn, 3 * i);
		assert_int_equal(qp->comp.retry_cnt, 6);
		if (i % 5 == 0) {
			/* A tail loss too: the timer (from the last PSN an
			 * ACK confirmed), then an ACK of a little more. */
			advance(T_RETRANS);
			assert_int_equal(pump(), 64 - confirmed + 1);
			assert_int_equal(qp->comp.retry_cnt, 5);
			ack(3 * i);
			confirmed = 3 * i + 1;
			assert_int_equal(qp->comp.retry_cnt, 7);
		}
	}
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
	assert_int_equal(e->cnt.comp_naks_seq, 20);
	assert_int_equal(e->cnt.comp_retry_exceeded, 0);
	ack(63);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 64 * 256);
}

/* IBA 9.7.5.2.2: a sequence NAK no responder could have sent is discarded
 * (comp_nak_bogus) before it acknowledges anything: its PSN at or past the
 * last request sent, or past / inside a READ or atomic whose responses
 * never came (it would complete it without its data). */
static void test_seq_nak_bogus(void **state)
{
	static uint8_t data[512];
	static const uint32_t bogus[] = {
		1, 2,           /* inside and past the READ (PSN 0..1) */
		3, 4,           /* past the READ too (the SEND at 2..3) */
		5,              /* past the atomic at PSN 4 */
		6, 7, 0x800000, /* the last request (6) and beyond */
	};
	unsigned i;

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_READ, 1, DST, 512, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 2, SRC, 2 * 256, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_ATOMIC_FETCH_AND_ADD, 3, DST + 0x1000, 8, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 4, SRC, 8, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 5);            /* PSN 0 (READ), 2, 3, 4 (FAA), 5 */
	assert_int_equal(qp->req.psn_hw, 6);
	for (i = 0; i < sizeof(bogus) / sizeof(bogus[0]); i++) {
		inject(OP_ACKNOWLEDGE, bogus[i], AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
		assert_int_equal(e->cnt.comp_nak_bogus, i + 1);
		assert_int_equal(pump(), 0);
		assert_int_equal(qp->comp.psn, 0);
		assert_int_equal(qp->comp.retry_cnt, 3);
		expect_no_cqe();
	}
	assert_int_equal(e->cnt.comp_naks_seq, 0);
	/* A real one at the READ: retried from it. */
	inject(OP_ACKNOWLEDGE, 0, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(e->cnt.comp_naks_seq, 1);
	assert_int_equal(pump(), 5);
	/* Past the READ once its responses came: acknowledges the SEND. */
	inject(OP_READ_RESPONSE_FIRST, 0, AETH_ACK_UNLIMITED, data, 256, 0);
	inject(OP_READ_RESPONSE_LAST, 1, AETH_ACK_UNLIMITED, data, 256, 0);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_READ, 512);
	inject(OP_ACKNOWLEDGE, 4, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_SEND, 2 * 256);
	assert_int_equal(e->cnt.comp_naks_seq, 2);
	assert_int_equal(e->cnt.comp_nak_bogus, i);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
}

/* A forged sequence NAK inside a message, ahead of the real loss, moves
 * comp.psn past the packet the responder waits for.  Before, the real NAK
 * was then a "duplicate" and every rewind (NAK or timer) started at the
 * forged PSN: the responder, NAK latched, stayed silent; a livelock.
 * Now the real NAK takes comp.psn back, and without one the timer rewinds
 * to the last PSN a response confirmed. */
static void test_forged_seq_nak_inside_message(void **state)
{
	struct rocev2_pkt p;

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_WRITE, 1, SRC, 32 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 32);
	inject(OP_ACKNOWLEDGE, 20, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);   /* forged */
	assert_int_equal(pump(), 13);   /* PSN 20 twice, 21..31 */
	assert_int_equal(qp->comp.psn, 20);
	assert_int_equal(qp->comp.nak_skipped, 20);
	inject(OP_ACKNOWLEDGE, 2, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);    /* the real one */
	assert_int_equal(qp->comp.psn, 2);
	assert_int_equal(pump(), 31);
	frame_pkt(nframes - 31, &p);
	assert_int_equal(p.psn, 2);
	assert_memory_equal(p.payload, host + SRC + 2 * 256, 256);
	/* Below what an ACK confirmed: a duplicate. */
	ack(5);
	inject(OP_ACKNOWLEDGE, 4, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(e->cnt.comp_dup_acks, 1);
	assert_int_equal(pump(), 0);
	ack(31);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 32 * 256);

	/* The real NAK lost: the timer goes back to PSN 4 (the ACK), not to
	 * the forged 20; an ACK confirms the NAK-only range away. */
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_WRITE, 1, SRC, 32 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 32);
	ack(3);
	inject(OP_ACKNOWLEDGE, 20, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 13);
	advance(T_RETRANS);
	assert_int_equal(pump(), 29);
	frame_pkt(nframes - 29, &p);
	assert_int_equal(p.psn, 4);
	assert_int_equal(qp->comp.nak_skipped, 0);
	inject(OP_ACKNOWLEDGE, 22, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(qp->comp.nak_skipped, 18);
	ack(25);
	assert_int_equal(qp->comp.nak_skipped, 0);
	ack(31);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 32 * 256);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
}

/* IBA 11.6.2: a send CQ that cannot take a completion (full) is a CQ error
 * (CQ_ERR from cq.c); the completion is lost, so the QP goes to Error with
 * its affiliated QP_FATAL event, as the responder does for its receive
 * CQ.  Before, the CQE was dropped and the QP ran on. */
static void test_send_cq_overflow(void **state)
{
	struct mnic_dbrec rec = { (uint32_t)-CQ_SIZE, 0 };
	struct rocev2_event ev;

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_SEND, 1, SRC, 8, 0);                    /* unsignaled: no CQE */
	post_op(MNIC_WR_SEND, 2, SRC, 8, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 3, SRC, 8, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 3);
	memcpy(host + CQ_DBREC, &rec, sizeof(rec));             /* CQ_SIZE unconsumed */
	ack(0);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
	ack(1);
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_int_equal(e->cnt.comp_cq_errors, 1);
	assert_int_equal(e->cnt.cq_overflows, 1);
	assert_int_equal(e->cnt.cq_err_drops, 1);               /* WQE 3's flush */
	assert_int_equal(qp->sq.ci, 3);
	assert_int_equal(rocev2_get_event(e, 0, &ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_CQ_ERR);
	assert_int_equal(rocev2_get_event(e, 0, &ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_QP_FATAL);
	assert_int_equal(ev.handle, qpn);
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
	assert_false(timer_armed(&qp->comp.retrans_timer));
}

/* A good ACK between timeouts gives the retries back. */
static void test_retry_counter_reset(void **state)
{
	struct cfg c = cfg_default;

	(void)state;
	c.retry_cnt = 1;
	h_init(&c);
	post_op(MNIC_WR_SEND, 1, SRC, 3 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 3);
	advance(T_RETRANS);
	assert_int_equal(pump(), 3);
	assert_int_equal(qp->comp.retry_cnt, 0);
	ack(0);
	assert_int_equal(qp->comp.retry_cnt, 1);
	advance(T_RETRANS);
	assert_int_equal(pump(), 3);    /* from comp.psn = 1 (its SEND MIDDLE twice) */
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
	ack(2);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 3 * 256);
}

/* RNR NAK (IBA 9.7.5.2.8): implicit ACK before its PSN, silence for the
 * table time, then resend from its PSN; rnr_retry exhausted ->
 * RNR_RETRY_EXC_ERR and flush. */
static void test_rnr_nak(void **state)
{
	struct cfg c = cfg_default;
	struct rocev2_pkt p;
	struct mnic_cqe cqe;

	(void)state;
	c.rnr_retry = 2;
	h_init(&c);
	post_op(MNIC_WR_SEND, 1, SRC, 8, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 2, SRC, 8, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 3, SRC, 8, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 3);
	inject(OP_ACKNOWLEDGE, 1, AETH_RNR_NAK | 14, NULL, 0, 0);     /* 1.28 ms */
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 8);
	assert_int_equal(e->cnt.comp_naks_rnr, 1);
	assert_false(timer_armed(&qp->comp.retrans_timer));
	assert_true(timer_armed(&qp->comp.rnr_timer));
	post_op(MNIC_WR_SEND, 4, SRC, 8, MNIC_SEND_SIGNALED);   /* a doorbell ends no wait */
	assert_int_equal(pump(), 0);
	advance(1280000 - 1);
	assert_int_equal(pump(), 0);
	advance(1);
	assert_int_equal(pump(), 3);
	frame_pkt(3, &p);
	assert_int_equal(p.psn, 1);
	frame_pkt(4, &p);
	assert_int_equal(p.psn, 2);
	frame_pkt(5, &p);
	assert_int_equal(p.psn, 3);
	assert_true(timer_armed(&qp->comp.retrans_timer));

	inject(OP_ACKNOWLEDGE, 1, AETH_RNR_NAK | 1, NULL, 0, 0);      /* 10 us */
	advance(10000);
	assert_int_equal(pump(), 3);
	assert_int_equal(qp->comp.rnr_retry, 0);
	inject(OP_ACKNOWLEDGE, 1, AETH_RNR_NAK | 1, NULL, 0, 0);
	assert_int_equal(e->cnt.comp_rnr_exceeded, 1);
	assert_true(cq_poll(&cqe));
	assert_int_equal(cqe.wr_id, 2);
	assert_int_equal(cqe.status, MNIC_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(cqe.vendor_err, AETH_RNR_NAK | 1);
	expect_cqe(3, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	expect_cqe(4, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	expect_no_cqe();
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_false(timer_armed(&qp->comp.rnr_timer));
	advance(1000000);
	assert_int_equal(pump(), 0);
}

/* The table: every code waits its IBA time. */
static void test_rnr_timer_table(void **state)
{
	static const uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
		163840, 245760, 327680, 491520,
	};
	struct cfg c = cfg_default;
	unsigned code;

	(void)state;
	c.rnr_retry = 7;
	h_init(&c);
	post_op(MNIC_WR_SEND, 1, SRC, 8, 0);
	assert_int_equal(pump(), 1);
	for (code = 0; code < 32; code++) {
		inject(OP_ACKNOWLEDGE, 0, (uint8_t)(AETH_RNR_NAK | code), NULL, 0, 0);
		assert_int_equal(qp->comp.rnr_timer.deadline, now + (uint64_t)us[code] * 1000u);
		advance((uint64_t)us[code] * 1000u);
		assert_int_equal(pump(), 1);
	}
	assert_int_equal(qp->comp.rnr_retry, 7);
}

/* Fatal NAKs (IBA 9.7.5.2.3 Table 44): the NAK'd WQE completes with the
 * matching status (vendor_err = syndrome), the WQEs before it
 * successfully, the rest flushed; the QP goes to Error without an event. */
static void test_fatal_naks(void **state)
{
	static const struct {
		uint8_t syndrome, status;
	} cases[] = {
		{ AETH_NAK_INVALID_REQ, MNIC_WC_REM_INV_REQ_ERR },
		{ AETH_NAK_REM_ACC_ERR, MNIC_WC_REM_ACCESS_ERR },
		{ AETH_NAK_REM_OP_ERR, MNIC_WC_REM_OP_ERR },
		{ 0x6a, MNIC_WC_REM_OP_ERR },            /* reserved code */
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rocev2_event ev;
		struct mnic_cqe cqe;

		h_init(&cfg_default);
		post_op(MNIC_WR_SEND, 1, SRC, 8, MNIC_SEND_SIGNALED);
		post_op(MNIC_WR_RDMA_WRITE, 2, SRC, 300, 0);
		post_op(MNIC_WR_SEND, 3, SRC, 8, 0);
		assert_int_equal(pump(), 4);
		inject(OP_ACKNOWLEDGE, 1, cases[i].syndrome, NULL, 0, 0);
		expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 8);
		assert_true(cq_poll(&cqe));
		assert_int_equal(cqe.wr_id, 2);
		assert_int_equal(cqe.status, cases[i].status);
		assert_int_equal(cqe.vendor_err, cases[i].syndrome);
		assert_int_equal(cqe.qp_num, qpn);
		expect_cqe(3, MNIC_WC_WR_FLUSH_ERR, 0, 0);
		expect_no_cqe();
		assert_int_equal(qp->state, ROCEV2_QPS_ERR);
		assert_int_equal(e->cnt.comp_naks_fatal, 1);
		assert_int_equal(e->cnt.flushed_wqes, 1);
		assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
		assert_false(timer_armed(&qp->comp.retrans_timer));
		/* Late responses to an Error QP are dropped by recv. */
		ack(3);
		expect_no_cqe();
	}
}

/* MigrOS NAK_STOPPED: paused, nothing retransmitted and no retries spent
 * while paused; after the RESUME the timer recovers. */
static void test_nak_stopped(void **state)
{
	static const uint8_t nak_ext[8] = { 2, 0, 3, 0, 0, 0, 0, 0 };
	struct cfg c = cfg_default;
	unsigned i;

	(void)state;
	c.retry_cnt = 1;
	h_init(&c);
	post_op(MNIC_WR_SEND, 1, SRC, 8, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 1);
	/* Without its extension (version 2, kind 3, epoch 0) or unkeyed
	 * without the operator's consent, NAK_STOPPED pauses nothing. */
	inject(OP_ACKNOWLEDGE, 0, AETH_NAK_STOPPED, NULL, 0, 0);
	inject(OP_ACKNOWLEDGE, 0, AETH_NAK_STOPPED, nak_ext, sizeof(nak_ext), 0);
	assert_int_equal(qp->paused, 0);
	assert_int_equal(e->cnt.mig_nak_stopped_forged, 1);
	assert_int_equal(e->cnt.mig_unkeyed_refused, 1);
	rocev2_set_mig_flags(e, ROCEV2_MIG_F_UNKEYED);
	inject(OP_ACKNOWLEDGE, 0, AETH_NAK_STOPPED, nak_ext, sizeof(nak_ext), 0);
	assert_int_equal(qp->paused, 1);
	assert_int_equal(e->cnt.comp_naks_stopped, 1);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
	expect_no_cqe();
	for (i = 0; i < 5; i++) {
		advance(T_RETRANS);
		assert_int_equal(pump(), 0);
		assert_true(timer_armed(&qp->comp.retrans_timer));
	}
	assert_int_equal(qp->comp.retry_cnt, 1);
	assert_int_equal(e->cnt.comp_retry_timeouts, 0);
	ack(0);                         /* dropped while paused */
	assert_int_equal(e->cnt.comp_paused_drops, 1);
	expect_no_cqe();
	post_op(MNIC_WR_SEND, 2, SRC, 8, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 0);

	qp->paused = 0;                 /* what the responder does on RESUME */
	rocev2_sched(e, qp);
	assert_int_equal(pump(), 1);    /* the WQE that waited */
	advance(T_RETRANS);
	assert_int_equal(pump(), 2);    /* retransmission of both */
	ack(1);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 8);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_SEND, 8);
}

/* Duplicate and stale ACKs change nothing. */
static void test_duplicate_ack(void **state)
{
	(void)state;
	h_init(&cfg_default);
	ack(0);                         /* nothing sent yet */
	assert_int_equal(e->cnt.comp_dup_acks, 1);
	post_op(MNIC_WR_SEND, 1, SRC, 8, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 2, SRC, 3 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 4);
	ack(0);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 8);
	ack(0);
	assert_int_equal(e->cnt.comp_dup_acks, 2);
	ack(2);
	ack(1);
	assert_int_equal(e->cnt.comp_dup_acks, 3);
	assert_int_equal(qp->comp.psn, 3);
	expect_no_cqe();
	ack(3);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_SEND, 3 * 256);
	ack(3);
	assert_int_equal(e->cnt.comp_dup_acks, 4);
	expect_no_cqe();
	assert_int_equal(e->cnt.comp_completions, 2);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
}

/* An ACK for a PSN never sent must not complete anything. */
static void test_ack_beyond_sent(void **state)
{
	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_SEND, 1, SRC, 3 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 3);
	ack(7);
	ack(0x800000);
	assert_int_equal(e->cnt.comp_bad_resp + e->cnt.comp_dup_acks, 2);
	assert_int_equal(qp->comp.psn, 0);
	expect_no_cqe();
	ack(2);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 3 * 256);
}

/* A late ACK of the first transmission overtakes the requester's
 * retransmission: the requester jumps to the completer's position. */
static void test_late_ack_after_rewind(void **state)
{
	struct rocev2_pkt p;

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_SEND, 1, SRC, 6 * 256, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_SEND, 2, SRC, 8, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 7);
	advance(T_RETRANS);
	qp->scheduled = 0;
	e->sched_head = e->sched_tail = NULL;
	assert_int_equal(rocev2_req_run(e, qp, 2), 2);  /* PSN 0, 1 again */
	ack(4);                                         /* of the first transmission */
	assert_int_equal(pump(), 2);                    /* PSN 5 and 6 only */
	frame_pkt(9, &p);
	assert_int_equal(p.psn, 5);
	assert_int_equal(p.opcode, OP_SEND_LAST);
	assert_memory_equal(p.payload, host + SRC + 5 * 256, 256);
	frame_pkt(10, &p);
	assert_int_equal(p.psn, 6);
	ack(6);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 6 * 256);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_SEND, 8);
}

/* SQD (IBA 10.3.1): responses still complete what was sent; once nothing
 * is outstanding the SQ_DRAINED event follows. */
static void test_sqd_completes(void **state)
{
	struct rocev2_event ev;

	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_SEND, 1, SRC, 8, MNIC_SEND_SIGNALED);
	post_op(MNIC_WR_RDMA_WRITE, 2, SRC, 8, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 2);
	set_state(ROCEV2_QPS_SQD);
	ack(0);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 8);
	pump();
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
	ack(1);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 8);
	pump();
	assert_int_equal(rocev2_get_event(e, 0, &ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_SQ_DRAINED);
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
}

/* ---- back to back with the real responder (resp.c) on a second engine -- */
#define PEER_MEM   (1u << 20)
#define P_RQ_RING  0x00000u
#define P_RQ_DBREC 0x10000u
#define P_CQ_DBREC 0x10008u
#define P_CQ_RING  0x11000u
#define P_BUF      0x20000u             /* MR: 0x20000 .. 0x60000 */
#define P_RECV     0x20000u
#define P_WRITE    0x30000u
#define P_ATOMIC   0x38000u
#define PEER_Q     64u

static uint8_t pmem[PEER_MEM];
static struct hal_dma pdma;
static uint8_t pq[PEER_Q][ROCEV2_TX_MAX];
static size_t pq_len[PEER_Q];
static unsigned pq_n, pq_done;
static uint32_t p_qpn, p_rkey, p_cq_ci;

static int peer_q_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	assert_true(pq_n < PEER_Q);
	memcpy(pq[pq_n], frame, len);
	pq_len[pq_n++] = len;
	return 0;
}

static void peer_up(void)
{
	struct rocev2_env env = {
		.tx = peer_q_tx, .now_ns = fake_now, .dma = &pdma,
		.ipv4 = PEER_IP,
	};
	struct rocev2_queue_attr cqa = { .ring_addr = P_CQ_RING, .dbrec_addr = P_CQ_DBREC, .size = 64 };
	struct rocev2_qp_init_attr ia = {
		.srq = ROCEV2_NO_SRQ, .rq = { P_RQ_RING, P_RQ_DBREC, 16 },
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	struct rocev2_qp_attr a = {
		.path_mtu = ROCEV2_MTU_256,
		.qp_access_flags = ROCEV2_ACCESS_REMOTE_WRITE | ROCEV2_ACCESS_REMOTE_READ |
				   ROCEV2_ACCESS_REMOTE_ATOMIC,
		.rq_psn = 0, .sq_psn = 0x777, .dest_qp_num = qpn,
		.av = { .ttl = 64, .dgid = MNIC_GID_V4(OUR_IP) }, .timeout = 10, .retry_cnt = 3,
		.rnr_retry = 3, .min_rnr_timer = 1, .max_rd_atomic = 4, .max_dest_rd_atomic = 4,
	};
	struct mnic_recv_wqe r;
	struct mnic_dbrec rec = { 2, 0 };
	uint32_t ppd, pcq, lk;
	unsigned i;

	memset(pmem, 0, sizeof(pmem));
	hal_dma_window_init(&pdma, pmem, sizeof(pmem));
	memcpy(env.mac, peer_mac, 6);
	memcpy(a.av.dmac, our_mac, 6);
	pq_n = pq_done = 0;
	p_cq_ci = 0;
	assert_int_equal(rocev2_init(&peer, &env), 0);
	assert_int_equal(rocev2_alloc_pd(&peer, &ppd), 0);
	assert_int_equal(rocev2_reg_mr(&peer, ppd, P_BUF, 0x40000,
				       ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_WRITE |
					       ROCEV2_ACCESS_REMOTE_READ |
					       ROCEV2_ACCESS_REMOTE_ATOMIC,
				       &lk, &p_rkey), 0);
	assert_int_equal(rocev2_create_cq(&peer, &cqa, &pcq), 0);
	ia.pd = ppd;
	ia.send_cq = ia.recv_cq = pcq;
	assert_int_equal(rocev2_create_qp(&peer, &ia, &p_qpn), 0);
	a.qp_state = ROCEV2_QPS_INIT;
	assert_int_equal(rocev2_modify_qp(&peer, p_qpn, &a, M(STATE) | M(PKEY_INDEX) | M(PORT) |
								    M(ACCESS_FLAGS)), 0);
	a.qp_state = ROCEV2_QPS_RTR;
	assert_int_equal(rocev2_modify_qp(&peer, p_qpn, &a,
					  M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) |
						  M(RQ_PSN) | M(MAX_DEST_RD_ATOMIC) |
						  M(MIN_RNR_TIMER)), 0);
	for (i = 0; i < 2; i++) {
		memset(&r, 0, sizeof(r));
		r.wr_id = 0x500 + i;
		r.num_sge = 1;
		r.sge[0] = (struct mnic_sge){ P_RECV + i * 0x1000, 0x1000, lk };
		memcpy(pmem + P_RQ_RING + i * MNIC_WQE_SIZE, &r, sizeof(r));
	}
	memcpy(pmem + P_RQ_DBREC, &rec, sizeof(rec));
	assert_int_equal(rocev2_rq_doorbell(&peer, p_qpn), 0);
	pmem[P_ATOMIC] = 0x10;          /* little-endian 0x10 */
	qp->attr.dest_qp_num = p_qpn;   /* our QP talks to the peer's */
}

/* Move frames both ways until both engines are quiet.  drop_ours /
 * drop_peer: frame numbers (1-based, 0 = none) lost on the wire. */
static void wire(unsigned drop_ours, unsigned drop_peer)
{
	static unsigned ours_done;
	unsigned rounds;

	if (nframes == 0)
		ours_done = 0;
	for (rounds = 0; rounds < 200; rounds++) {
		unsigned moved = 0;

		pump();
		while (ours_done < nframes) {
			if (++ours_done != drop_ours)
				rocev2_rx(&peer, frames[ours_done - 1], frame_len[ours_done - 1]);
			moved++;
		}
		while (rocev2_has_work(&peer))
			rocev2_poll(&peer, 64);
		while (pq_done < pq_n) {
			if (++pq_done != drop_peer)
				rocev2_rx(e, pq[pq_done - 1], pq_len[pq_done - 1]);
			moved++;
		}
		if (pq_n > PEER_Q / 2) {        /* recycle the peer's queue */
			pq_n = pq_done = 0;
		}
		if (!moved && !rocev2_has_work(e)) {
			if (!timer_armed(&qp->comp.retrans_timer) &&
			    !timer_armed(&qp->comp.rnr_timer))
				return;
			now = rocev2_next_deadline(e);  /* nothing on the wire: wait */
			rocev2_run_timers(e, now);
		}
	}
	fail_msg("the engines did not settle");
}

static void back_to_back(unsigned drop_ours, unsigned drop_peer)
{
	struct mnic_send_wqe w;
	struct mnic_cqe c;
	uint8_t expect[8];
	unsigned i;

	h_init(&cfg_default);
	peer_up();
	post_op(MNIC_WR_SEND, 1, SRC, 3 * 256 + 17, MNIC_SEND_SIGNALED);
	w = wqe(MNIC_WR_RDMA_WRITE, 2, SRC + 0x1000, 1000, MNIC_SEND_SIGNALED);
	w.remote_addr = P_WRITE;
	w.rkey = p_rkey;
	post(&w);
	w = wqe(MNIC_WR_RDMA_READ, 3, DST, 1000, MNIC_SEND_SIGNALED);
	w.remote_addr = P_WRITE;
	w.rkey = p_rkey;
	post(&w);
	w = wqe(MNIC_WR_ATOMIC_FETCH_AND_ADD, 4, DST + 0x1000, 8, MNIC_SEND_SIGNALED);
	w.remote_addr = P_ATOMIC;
	w.rkey = p_rkey;
	w.compare_add = 5;
	post(&w);
	w = wqe(MNIC_WR_ATOMIC_CMP_AND_SWP, 5, DST + 0x1008, 8, MNIC_SEND_SIGNALED);
	w.remote_addr = P_ATOMIC + 8;
	w.rkey = p_rkey;
	w.compare_add = 0;
	w.swap = 99;
	post(&w);
	w = wqe(MNIC_WR_SEND_WITH_IMM, 6, SRC, 0, MNIC_SEND_SIGNALED);
	post(&w);
	wire(drop_ours, drop_peer);

	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_SEND, 3 * 256 + 17);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 1000);
	expect_cqe(3, MNIC_WC_SUCCESS, MNIC_WC_RDMA_READ, 1000);
	expect_cqe(4, MNIC_WC_SUCCESS, MNIC_WC_FETCH_ADD, 8);
	expect_cqe(5, MNIC_WC_SUCCESS, MNIC_WC_COMP_SWAP, 8);
	expect_cqe(6, MNIC_WC_SUCCESS, MNIC_WC_SEND, 0);
	expect_no_cqe();
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
	assert_false(timer_armed(&qp->comp.retrans_timer));
	/* What the peer holds, and what came back. */
	assert_memory_equal(pmem + P_RECV, host + SRC, 3 * 256 + 17);
	assert_memory_equal(pmem + P_WRITE, host + SRC + 0x1000, 1000);
	assert_memory_equal(host + DST, host + SRC + 0x1000, 1000);
	memset(expect, 0, 8);
	expect[0] = 0x10;
	assert_memory_equal(host + DST + 0x1000, expect, 8);    /* FAA: value before */
	expect[0] = 0x15;
	assert_memory_equal(pmem + P_ATOMIC, expect, 8);
	memset(expect, 0, 8);
	assert_memory_equal(host + DST + 0x1008, expect, 8);    /* CAS: was 0 */
	expect[0] = 99;
	assert_memory_equal(pmem + P_ATOMIC + 8, expect, 8);
	/* The peer's receive completions. */
	for (i = 0; i < 2; i++) {
		memcpy(&c, pmem + P_CQ_RING + p_cq_ci * MNIC_CQE_SIZE, sizeof(c));
		assert_int_equal(c.owner, MNIC_CQE_OWNER(p_cq_ci, 64));
		p_cq_ci++;
		assert_int_equal(c.status, MNIC_WC_SUCCESS);
		assert_int_equal(c.wr_id, 0x500 + i);
		assert_int_equal(c.byte_len, i == 0 ? 3 * 256 + 17 : 0);
	}
}

static void test_back_to_back(void **state)
{
	(void)state;
	back_to_back(0, 0);
	assert_int_equal(e->cnt.req_retransmits, 0);
	assert_int_equal(e->cnt.comp_naks_seq + e->cnt.comp_retry_timeouts, 0);
}

/* Losses on the wire, recovered by the real peer's NAK or our timer. */
static void test_back_to_back_losses(void **state)
{
	unsigned lost;

	(void)state;
	/* Our 2nd packet (SEND MIDDLE): the peer NAKs the sequence error. */
	back_to_back(2, 0);
	assert_int_equal(e->cnt.comp_naks_seq, 1);
	assert_true(e->cnt.req_retransmits >= 1);
	/* The READ request (frame 9): the FAA after it is out of sequence. */
	back_to_back(9, 0);
	assert_int_equal(e->cnt.comp_naks_seq, 1);
	/* Our last packet (SEND with imm, frame 12): only the timer notices. */
	back_to_back(12, 0);
	assert_int_equal(e->cnt.comp_retry_timeouts, 1);
	assert_int_equal(e->cnt.req_retransmits, 1);
	/* Each of the peer's responses in turn (ACKs, READ responses, atomic
	 * ACKs): everything still completes, exactly once, with the right
	 * data (back_to_back checks it); a lost read response or atomic ACK
	 * needs the timer, a lost ACK is covered by the next one or the
	 * timer. */
	for (lost = 1; lost <= 10; lost++) {
		back_to_back(0, lost);
		if (getenv("REQCOMP_VERBOSE"))
			printf("peer frame %u lost: %llu timeouts, %llu retransmits\n", lost,
			       (unsigned long long)e->cnt.comp_retry_timeouts,
			       (unsigned long long)e->cnt.req_retransmits);
	}
}

/* ---- loss recovery without the timer (issue 18; comp.c header) ---------- */

/* The first PSN the last round resent from (its first frame and the copy
 * req_repeat_head sends of a WRITE packet). */
static void expect_round_from(unsigned n, uint32_t psn)
{
	struct rocev2_pkt p;

	frame_pkt(nframes - n, &p);
	assert_int_equal(p.psn, psn);
	frame_pkt(nframes - n + 1, &p);
	assert_int_equal(p.psn, psn);
}

/* A sequence NAK past the PSN a round already resends from acknowledges
 * more (progress): a new round at once, from its PSN.  Before, every NAK
 * after the first waited for the retransmit timer. */
static void test_nak_while_retrying(void **state)
{
	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_WRITE, 1, SRC, 32 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 32);
	inject(OP_ACKNOWLEDGE, 4, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 29);           /* 4 twice, 5..31 */
	expect_round_from(29, 4);
	assert_true(qp->comp.started_retry);
	/* The resent 10 was lost too: the responder's next NAK. */
	inject(OP_ACKNOWLEDGE, 10, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 23);           /* 10 twice, 11..31 */
	expect_round_from(23, 10);
	assert_int_equal(qp->comp.psn, 10);
	assert_int_equal(e->cnt.comp_nak_retries, 2);
	assert_int_equal(e->cnt.comp_retry_dup_ignored, 0);
	assert_int_equal(e->cnt.comp_retry_timeouts, 0);
	assert_int_equal(qp->comp.retry_cnt, 2);        /* each round after progress */
	ack(31);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 32 * 256);
	assert_false(timer_armed(&qp->comp.retrans_timer));
}

/* A sequence NAK behind what an ACK confirmed is stale (a reordered or
 * duplicated one): nothing is resent, nothing moves back. */
static void test_nak_older_psn_ignored(void **state)
{
	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_WRITE, 1, SRC, 16 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 16);
	ack(9);
	inject(OP_ACKNOWLEDGE, 3, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 0);
	assert_int_equal(qp->comp.psn, 10);
	assert_int_equal(e->cnt.comp_dup_acks, 1);
	assert_int_equal(e->cnt.comp_nak_retries, 0);
	assert_false(qp->comp.started_retry);
	/* ... also while a round is under way (below the ACK: 11 would take
	 * back what only the NAK at 12 acknowledged, test_forged_seq_nak_*). */
	inject(OP_ACKNOWLEDGE, 12, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 5);            /* 12 twice, 13..15 */
	inject(OP_ACKNOWLEDGE, 9, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 0);
	assert_int_equal(e->cnt.comp_dup_acks, 2);
	assert_int_equal(e->cnt.comp_nak_retries, 1);
}

/* The same NAK again while its round resends (the impairment's or the
 * fabric's duplicate, or one overtaken): the responder NAKs a gap once
 * (IBA 9.7.5.2.2), so it is a copy and starts nothing. */
static void test_duplicate_nak(void **state)
{
	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_WRITE, 1, SRC, 16 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 16);
	inject(OP_ACKNOWLEDGE, 6, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 11);
	inject(OP_ACKNOWLEDGE, 6, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	inject(OP_ACKNOWLEDGE, 6, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 0);
	assert_int_equal(e->cnt.comp_naks_seq, 3);
	assert_int_equal(e->cnt.comp_nak_retries, 1);
	assert_int_equal(e->cnt.comp_retry_dup_ignored, 2);
	assert_int_equal(qp->comp.retry_cnt, 2);
	ack(15);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 16 * 256);
}

/* An ACK that advances during a round re-arms the retransmit timer and
 * ends the round: a NAK at the new comp.psn is a new loss, resent at
 * once. */
static void test_nak_after_ack_progress(void **state)
{
	(void)state;
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_WRITE, 1, SRC, 24 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 24);
	inject(OP_ACKNOWLEDGE, 3, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 22);
	advance(1000);
	ack(7);
	assert_int_equal(qp->comp.retrans_timer.deadline, now + T_RETRANS);
	assert_false(qp->comp.started_retry);
	advance(1000);
	ack(9);
	assert_int_equal(qp->comp.retrans_timer.deadline, now + T_RETRANS);
	inject(OP_ACKNOWLEDGE, 10, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
	assert_int_equal(pump(), 15);           /* 10 twice, 11..23 */
	expect_round_from(15, 10);
	assert_int_equal(e->cnt.comp_nak_retries, 2);
	assert_int_equal(e->cnt.comp_retry_dup_ignored, 0);
	ack(23);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_WRITE, 24 * 256);
}

/* Read responses past a lost one start the round at once (the READ sent
 * again for the rest); what is left of the old stream (past the gap that
 * started it) starts nothing; a gap in the new stream does, up to
 * ROCEV2_FAST_RETRIES rounds for the loss; then only the timer resends.
 * A response that confirms something gives the rounds back. */
static void test_read_gap_budget_then_timer(void **state)
{
	static uint8_t data[5 * 256];
	struct rocev2_pkt p;
	unsigned i;

	(void)state;
	_Static_assert(ROCEV2_FAST_RETRIES == 2, "the rounds below");
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7u + 3u);
	h_init(&cfg_default);
	post_op(MNIC_WR_RDMA_READ, 1, DST, 5 * 256, MNIC_SEND_SIGNALED);
	assert_int_equal(pump(), 1);            /* PSN 0..4 */
	/* 0..2 lost: MIDDLE 3 shows it. */
	inject(OP_READ_RESPONSE_MIDDLE, 3, 0, data + 3 * 256, 256, 0);
	assert_int_equal(pump(), 1);
	frame_pkt(nframes - 1, &p);
	assert_int_equal(p.opcode, OP_READ_REQUEST);
	assert_int_equal(p.psn, 0);
	assert_int_equal(e->cnt.comp_gap_retries, 1);
	/* The old stream's LAST: past that gap, nothing new. */
	inject(OP_READ_RESPONSE_LAST, 4, AETH_ACK_UNLIMITED, data + 4 * 256, 256, 0);
	assert_int_equal(pump(), 0);
	assert_int_equal(e->cnt.comp_retry_dup_ignored, 1);
	/* The new stream lost 0..1: MIDDLE 2, below the gap at 3. */
	inject(OP_READ_RESPONSE_MIDDLE, 2, 0, data + 2 * 256, 256, 0);
	assert_int_equal(pump(), 1);
	assert_int_equal(e->cnt.comp_gap_retries, 2);
	/* The third stream lost its FIRST: news, but the budget is spent. */
	inject(OP_READ_RESPONSE_MIDDLE, 1, 0, data + 256, 256, 0);
	assert_int_equal(pump(), 0);
	assert_int_equal(e->cnt.comp_fast_retry_spent, 1);
	assert_int_equal(e->cnt.comp_gap_retries, 2);
	assert_int_equal(qp->comp.retry_cnt, 1);
	/* The timer resends. */
	advance(T_RETRANS);
	assert_int_equal(pump(), 1);
	assert_int_equal(e->cnt.comp_retry_timeouts, 1);
	assert_int_equal(qp->comp.retry_cnt, 0);
	/* FIRST arrives: progress gives the retries and the rounds back ... */
	inject(OP_READ_RESPONSE_FIRST, 0, AETH_ACK_UNLIMITED, data, 256, 0);
	assert_int_equal(qp->comp.retry_cnt, 3);
	assert_int_equal(qp->comp.fast_retries, 0);
	/* ... so the next gap (1 lost) resends the rest at once. */
	inject(OP_READ_RESPONSE_MIDDLE, 2, 0, data + 2 * 256, 256, 0);
	assert_int_equal(pump(), 1);
	frame_pkt(nframes - 1, &p);
	assert_int_equal(p.psn, 1);             /* the rest: from PSN 1 */
	assert_int_equal(e->cnt.comp_gap_retries, 3);
	for (i = 1; i < 5; i++)
		inject(i == 4 ? OP_READ_RESPONSE_LAST : i == 1 ? OP_READ_RESPONSE_FIRST
							      : OP_READ_RESPONSE_MIDDLE,
		       i, AETH_ACK_UNLIMITED, data + i * 256, 256, 0);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RDMA_READ, 5 * 256);
	assert_memory_equal(host + DST, data, sizeof(data));
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
}

/* A retry round's first packet goes out twice only when a copy cannot
 * take a receive WQE or be executed twice: WRITE and SEND MIDDLE/LAST
 * yes; SEND FIRST/ONLY, immediates, READ and atomic requests no. */
static void test_head_repeat_only_harmless(void **state)
{
	static const struct {
		uint8_t wr;
		uint32_t len;
		uint32_t nak_psn;
		unsigned repeats;
	} cases[] = {
		{ MNIC_WR_RDMA_WRITE, 4 * 256, 0, 1 },          /* WRITE FIRST */
		{ MNIC_WR_RDMA_WRITE, 4 * 256, 2, 1 },          /* WRITE MIDDLE */
		{ MNIC_WR_SEND, 4 * 256, 3, 1 },                /* SEND LAST */
		{ MNIC_WR_SEND, 4 * 256, 0, 0 },                /* SEND FIRST */
		{ MNIC_WR_SEND, 8, 0, 0 },                      /* SEND ONLY */
		{ MNIC_WR_RDMA_WRITE_WITH_IMM, 4 * 256, 3, 0 }, /* WRITE LAST with immediate */
		{ MNIC_WR_RDMA_READ, 4 * 256, 0, 0 },           /* READ request */
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned sent;

		h_init(&cfg_default);
		post_op(cases[i].wr, 1, cases[i].wr == MNIC_WR_RDMA_READ ? DST : SRC, cases[i].len,
			MNIC_SEND_SIGNALED);
		post_op(MNIC_WR_SEND, 2, SRC, 8, MNIC_SEND_SIGNALED);
		sent = pump();
		if (cases[i].wr == MNIC_WR_RDMA_READ)   /* the timer: no NAK before a READ */
			advance(T_RETRANS);
		else
			inject(OP_ACKNOWLEDGE, cases[i].nak_psn, AETH_NAK_PSN_SEQ_ERROR, NULL, 0, 0);
		assert_int_equal(pump(), sent - cases[i].nak_psn + cases[i].repeats);
		assert_int_equal(e->cnt.req_head_repeats, cases[i].repeats);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ack_coalescing),
		cmocka_unit_test(test_partial_ack),
		cmocka_unit_test(test_read_scatter),
		cmocka_unit_test(test_plain_ack_does_not_complete_rd_atomic),
		cmocka_unit_test(test_bad_responses),
		cmocka_unit_test(test_read_out_of_sequence),
		cmocka_unit_test(test_read_partial_retry),
		cmocka_unit_test(test_ack_past_read_retries),
		cmocka_unit_test(test_atomic_ack),
		cmocka_unit_test(test_scatter_protection),
		cmocka_unit_test(test_sequence_nak),
		cmocka_unit_test(test_retry_exhausted),
		cmocka_unit_test(test_retry_cnt_7_dead_peer),
		cmocka_unit_test(test_retry_cnt_7_progressing_naks),
		cmocka_unit_test(test_seq_nak_bogus),
		cmocka_unit_test(test_forged_seq_nak_inside_message),
		cmocka_unit_test(test_send_cq_overflow),
		cmocka_unit_test(test_retry_counter_reset),
		cmocka_unit_test(test_rnr_nak),
		cmocka_unit_test(test_rnr_timer_table),
		cmocka_unit_test(test_fatal_naks),
		cmocka_unit_test(test_nak_stopped),
		cmocka_unit_test(test_duplicate_ack),
		cmocka_unit_test(test_ack_beyond_sent),
		cmocka_unit_test(test_late_ack_after_rewind),
		cmocka_unit_test(test_sqd_completes),
		cmocka_unit_test(test_back_to_back),
		cmocka_unit_test(test_back_to_back_losses),
		cmocka_unit_test(test_nak_while_retrying),
		cmocka_unit_test(test_nak_older_psn_ignored),
		cmocka_unit_test(test_duplicate_nak),
		cmocka_unit_test(test_nak_after_ack_progress),
		cmocka_unit_test(test_read_gap_budget_then_timer),
		cmocka_unit_test(test_head_repeat_only_harmless),
	};
	return cmocka_run_group_tests_name("rocev2/comp", tests, NULL, NULL);
}
