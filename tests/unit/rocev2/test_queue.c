/* rocev2 queue.c: doorbell records and hostile producer indices, send WQE
 * reads, receive WQE takes from an RQ or an SRQ (limit event), scatter/
 * gather through MRs, and host memory access. */
#include "cmocka_main.h"

#include <string.h>

#include "internal.h"
#include "silent_env.h"
#include "pool.h"

#define WIN (1u << 20)
static uint8_t mem[WIN];
static struct hal_dma dma;
static struct rocev2 eng;
static struct rocev2 *const e = &eng;

static uint32_t pd, pd2, cq, srq, qpn, sqpn;
static uint32_t lk_a, lk_ro, lk_b;
static struct rocev2_qp *qp, *sqp;

#define SQ_RING 0x20000u
#define SQ_DB 0x200u
#define RQ_RING 0x24000u
#define RQ_DB 0x208u
#define SRQ_RING 0x28000u
#define SRQ_DB 0x210u
#define MR_A 0x10000u        /* PD, LOCAL_WRITE | REMOTE_READ */
#define MR_RO 0x12000u       /* PD, no access flag: local read only */
#define MR_B 0x14000u        /* PD2, LOCAL_WRITE */
#define MR_LEN 0x1000u

static int setup(void **state)
{
	struct rocev2_env env = silent_env(&dma);
	struct rocev2_queue_attr cqa = { .ring_addr = 0x1000, .dbrec_addr = 0x100, .size = 64 };
	struct rocev2_srq_attr sa = { .q = { SRQ_RING, SRQ_DB, 16 }, .max_sge = 2, .srq_limit = 3 };
	struct rocev2_qp_init_attr qa = {
		.send_cq = 0, .recv_cq = 0, .srq = ROCEV2_NO_SRQ,
		.sq = { SQ_RING, SQ_DB, 8 }, .rq = { RQ_RING, RQ_DB, 4 },
		.max_send_sge = 4, .max_recv_sge = 3,
	};
	uint32_t rk;
	unsigned i;

	(void)state;
	memset(mem, 0, sizeof(mem));
	for (i = 0; i < 3 * MR_LEN; i++)
		mem[MR_A + i] = (uint8_t)(i * 7u + 1u);
	hal_dma_window_init(&dma, mem, WIN);
	now = 0;
	assert_int_equal(rocev2_init(e, &env), 0);
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	assert_int_equal(rocev2_alloc_pd(e, &pd2), 0);
	assert_int_equal(rocev2_create_cq(e, &cqa, &cq), 0);
	assert_int_equal(rocev2_create_srq(e, pd, &sa, &srq), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, MR_A, MR_LEN,
				       ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_READ,
				       &lk_a, &rk), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, MR_RO, MR_LEN, 0, &lk_ro, &rk), 0);
	assert_int_equal(rocev2_reg_mr(e, pd2, MR_B, MR_LEN, ROCEV2_ACCESS_LOCAL_WRITE, &lk_b,
				       &rk), 0);
	qa.pd = pd;
	qa.send_cq = qa.recv_cq = cq;
	assert_int_equal(rocev2_create_qp(e, &qa, &qpn), 0);
	qa.srq = srq;
	qa.rq = (struct rocev2_queue_attr){ 0 };
	qa.sq = (struct rocev2_queue_attr){ .ring_addr = SQ_RING + 0x2000u,
					    .dbrec_addr = SQ_DB + 0x20u, .size = 4 };
	assert_int_equal(rocev2_create_qp(e, &qa, &sqpn), 0);
	qp = rocev2_qp_lookup(e, qpn);
	sqp = rocev2_qp_lookup(e, sqpn);
	assert_non_null(qp);
	assert_non_null(sqp);
	return 0;
}

static void set_dbrec(uint64_t addr, uint32_t index)
{
	memcpy(mem + addr, &index, sizeof(index));
}

static void put_recv(uint64_t ring, uint32_t size, uint32_t index, uint64_t wr_id,
		     uint8_t num_sge)
{
	struct mnic_recv_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.num_sge = num_sge;
	w.sge[0] = (struct mnic_sge){ MR_A, 16, lk_a };
	memcpy(mem + ring + (index & (size - 1)) * MNIC_WQE_SIZE, &w, sizeof(w));
}

/* ---- doorbell records ---------------------------------------------------- */

static void test_wq_refresh_clamps_hostile_producer(void **state)
{
	struct rocev2_wq *wq = &qp->rq;    /* size 4 */

	(void)state;
	assert_int_equal(rocev2_wq_refresh(e, wq), 0);
	set_dbrec(RQ_DB, 3);
	assert_int_equal(rocev2_wq_refresh(e, wq), 3);
	assert_int_equal(wq->pi, 3);
	set_dbrec(RQ_DB, 4);
	assert_int_equal(rocev2_wq_refresh(e, wq), 4);        /* exactly full: fine */
	assert_int_equal(e->cnt.wq_bad_producer, 0);
	set_dbrec(RQ_DB, 5);
	assert_int_equal(rocev2_wq_refresh(e, wq), 4);
	assert_int_equal(wq->pi, 4);
	assert_int_equal(e->cnt.wq_bad_producer, 1);
	wq->ci = 2;
	set_dbrec(RQ_DB, 0x7fffffffu);
	assert_int_equal(rocev2_wq_refresh(e, wq), 4);
	assert_int_equal(wq->pi, 6);
	assert_int_equal(e->cnt.wq_bad_producer, 2);
	set_dbrec(RQ_DB, 1);                                  /* behind ci */
	assert_int_equal(rocev2_wq_refresh(e, wq), 4);
	assert_int_equal(wq->pi, 6);
	assert_int_equal(e->cnt.wq_bad_producer, 3);
	set_dbrec(RQ_DB, 2);                                  /* == ci: empty */
	assert_int_equal(rocev2_wq_refresh(e, wq), 0);
	/* Free-running indices across 2^32. */
	wq->ci = 0xfffffffeu;
	set_dbrec(RQ_DB, 2);
	assert_int_equal(rocev2_wq_refresh(e, wq), 4);
	assert_int_equal(wq->pi, 2);
	set_dbrec(RQ_DB, 3);
	assert_int_equal(rocev2_wq_refresh(e, wq), 4);
	assert_int_equal(e->cnt.wq_bad_producer, 4);
	assert_int_equal(e->cnt.dma_errors, 0);
}

static void test_wq_refresh_dma_error_and_no_queue(void **state)
{
	struct rocev2_wq none = { .q = { UINT64_MAX, UINT64_MAX, 0 } };

	(void)state;
	assert_int_equal(rocev2_wq_refresh(e, &none), 0);
	assert_int_equal(e->cnt.dma_errors, 0);
	set_dbrec(RQ_DB, 3);
	assert_int_equal(rocev2_wq_refresh(e, &qp->rq), 3);
	dma.window_size = RQ_DB;                     /* host memory gone */
	set_dbrec(RQ_DB, 4);
	assert_int_equal(rocev2_wq_refresh(e, &qp->rq), 3);   /* last known */
	assert_int_equal(e->cnt.dma_errors, 1);
}

/* ---- send WQEs ------------------------------------------------------------ */

static void put_send(uint32_t index, uint8_t opcode, uint8_t num_sge, uint64_t wr_id)
{
	struct mnic_send_wqe w;
	unsigned i;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.opcode = opcode;
	w.send_flags = MNIC_SEND_SIGNALED;
	w.num_sge = num_sge;
	w.imm_data = 0x11223344;
	w.remote_addr = 0x123456789abcull;
	w.rkey = 0x4321;
	w.compare_add = 5;
	w.swap = 6;
	for (i = 0; i < MNIC_MAX_SGE; i++)
		w.sge[i] = (struct mnic_sge){ MR_A + i, i + 1, lk_a };
	memcpy(mem + SQ_RING + (index & 7u) * MNIC_WQE_SIZE, &w, sizeof(w));
}

static void test_sq_read_slots_and_validation(void **state)
{
	static const uint8_t good[] = {
		MNIC_WR_RDMA_WRITE, MNIC_WR_RDMA_WRITE_WITH_IMM, MNIC_WR_SEND,
		MNIC_WR_SEND_WITH_IMM, MNIC_WR_RDMA_READ, MNIC_WR_ATOMIC_CMP_AND_SWP,
		MNIC_WR_ATOMIC_FETCH_AND_ADD, MNIC_WR_SEND_WITH_INV,
	};
	static const uint8_t bad[] = { 7, 8, MNIC_WR_NUM, 11, 0x7f, 0xff };
	struct mnic_send_wqe w;
	unsigned i;

	(void)state;
	/* Index is free running: 9 is slot 1 of the 8-entry ring. */
	put_send(1, MNIC_WR_SEND, 2, 0xabc);
	memset(&w, 0xa5, sizeof(w));
	assert_int_equal(rocev2_sq_read(e, qp, 9, &w), 0);
	/* The header and the two SGEs it uses are read, nothing past them
	 * (the first read takes one SGE whatever num_sge says). */
	assert_memory_equal(&w, mem + SQ_RING + 1 * MNIC_WQE_SIZE,
			    offsetof(struct mnic_send_wqe, sge) + 2 * sizeof(struct mnic_sge));
	for (i = offsetof(struct mnic_send_wqe, sge) + 2 * sizeof(struct mnic_sge); i < sizeof(w); i++)
		assert_int_equal(((const uint8_t *)&w)[i], 0xa5);
	assert_int_equal(w.wr_id, 0xabc);
	assert_int_equal(rocev2_sq_read(e, qp, 0xfffffff9u, &w), 0);
	assert_int_equal(w.wr_id, 0xabc);

	for (i = 0; i < sizeof(good); i++) {
		put_send(2, good[i], 1, 100 + i);
		assert_int_equal(rocev2_sq_read(e, qp, 2, &w), 0);
		assert_int_equal(w.opcode, good[i]);
	}
	for (i = 0; i < sizeof(bad); i++) {
		put_send(3, bad[i], 1, 200 + i);
		assert_int_equal(rocev2_sq_read(e, qp, 3, &w), -HAL_EINVAL);
		assert_int_equal(w.wr_id, 200 + i);          /* for the error CQE */
	}
	/* num_sge against the QP's max_send_sge (4). */
	put_send(4, MNIC_WR_RDMA_WRITE, 4, 1);
	assert_int_equal(rocev2_sq_read(e, qp, 4, &w), 0);
	put_send(4, MNIC_WR_RDMA_WRITE, 5, 1);
	assert_int_equal(rocev2_sq_read(e, qp, 4, &w), -HAL_EINVAL);
	put_send(4, MNIC_WR_RDMA_WRITE, 0xff, 1);
	assert_int_equal(rocev2_sq_read(e, qp, 4, &w), -HAL_EINVAL);
	put_send(4, MNIC_WR_RDMA_WRITE, 0, 1);
	assert_int_equal(rocev2_sq_read(e, qp, 4, &w), 0);

	/* Inline: inline_len bytes of data (at most MNIC_MAX_INLINE), no SGEs. */
	put_send(5, MNIC_WR_SEND, 0, 7);
	((struct mnic_send_wqe *)(mem + SQ_RING + 5 * MNIC_WQE_SIZE))->send_flags = MNIC_SEND_INLINE;
	((struct mnic_send_wqe *)(mem + SQ_RING + 5 * MNIC_WQE_SIZE))->inline_len = 21;
	memset(&w, 0xa5, sizeof(w));
	assert_int_equal(rocev2_sq_read(e, qp, 5, &w), 0);
	assert_memory_equal(&w, mem + SQ_RING + 5 * MNIC_WQE_SIZE, offsetof(struct mnic_send_wqe, sge) + 21);
	assert_int_equal(w.inline_data[21], 0xa5);
	/* A short inline payload comes with the header, in one read. */
	((struct mnic_send_wqe *)(mem + SQ_RING + 5 * MNIC_WQE_SIZE))->inline_len = 9;
	assert_int_equal(rocev2_sq_read(e, qp, 5, &w), 0);
	assert_memory_equal(&w, mem + SQ_RING + 5 * MNIC_WQE_SIZE, offsetof(struct mnic_send_wqe, sge) + 9);
	((struct mnic_send_wqe *)(mem + SQ_RING + 5 * MNIC_WQE_SIZE))->inline_len = 21;
	((struct mnic_send_wqe *)(mem + SQ_RING + 5 * MNIC_WQE_SIZE))->inline_len = 0xffffffffu;
	assert_int_equal(rocev2_sq_read(e, qp, 5, &w), 0);      /* req_wqe_check refuses it */
	assert_memory_equal(&w, mem + SQ_RING + 5 * MNIC_WQE_SIZE, sizeof(w));

	dma.window_size = SQ_RING + 4 * MNIC_WQE_SIZE;
	assert_int_equal(rocev2_sq_read(e, qp, 4, &w), -HAL_EFAULT);
	assert_int_equal(e->cnt.dma_errors, 1);
	/* The header readable, its SGEs not: a fault too. */
	put_send(3, MNIC_WR_SEND, 4, 9);
	dma.window_size = SQ_RING + 3 * MNIC_WQE_SIZE + 64 + 32;
	assert_int_equal(rocev2_sq_read(e, qp, 3, &w), -HAL_EFAULT);
	assert_int_equal(e->cnt.dma_errors, 2);
}

/* ---- receive WQEs ---------------------------------------------------------- */

static void test_rq_take_order_wrap_and_empty(void **state)
{
	struct mnic_recv_wqe w;
	uint32_t posted = 0, taken = 0;
	unsigned round;

	(void)state;
	assert_int_equal(rocev2_rq_take(e, qp, &w), -HAL_EAGAIN);
	/* Ten WQEs through a 4-entry ring, in bursts of up to three. */
	for (round = 0; round < 4; round++) {
		unsigned n = round % 3 + 1, i;

		for (i = 0; i < n; i++, posted++)
			put_recv(RQ_RING, 4, posted, 0x5000 + posted, 1);
		set_dbrec(RQ_DB, posted);
		while (taken < posted) {
			assert_int_equal(rocev2_rq_take(e, qp, &w), 0);
			assert_int_equal(w.wr_id, 0x5000 + taken);
			assert_int_equal(w.num_sge, 1);
			assert_int_equal(w.sge[0].lkey, lk_a);
			taken++;
		}
		assert_int_equal(rocev2_rq_take(e, qp, &w), -HAL_EAGAIN);
		assert_int_equal(qp->rq.ci, taken);
	}
	assert_true(taken >= 7);
	assert_int_equal(e->cnt.rq_bad_wqe, 0);
	assert_int_equal(e->cnt.wq_bad_producer, 0);
}

static void test_rq_take_bad_wqe_is_consumed(void **state)
{
	struct mnic_recv_wqe w;

	(void)state;
	put_recv(RQ_RING, 4, 0, 1, 4);          /* max_recv_sge is 3 */
	put_recv(RQ_RING, 4, 1, 2, 3);
	set_dbrec(RQ_DB, 2);
	assert_int_equal(rocev2_rq_take(e, qp, &w), -HAL_EINVAL);
	assert_int_equal(w.wr_id, 1);
	assert_int_equal(w.num_sge, 0);         /* its SGEs are not read: none to use */
	assert_int_equal(e->cnt.rq_bad_wqe, 1);
	assert_int_equal(qp->rq.ci, 1);
	assert_int_equal(rocev2_rq_take(e, qp, &w), 0);
	assert_int_equal(w.wr_id, 2);
	assert_int_equal(rocev2_rq_take(e, qp, &w), -HAL_EAGAIN);

	/* DMA failure: nothing consumed. */
	put_recv(RQ_RING, 4, 2, 3, 1);
	set_dbrec(RQ_DB, 3);
	dma.window_size = RQ_RING + 2 * MNIC_WQE_SIZE;
	assert_int_equal(rocev2_rq_take(e, qp, &w), -HAL_EFAULT);
	assert_int_equal(qp->rq.ci, 2);
	assert_int_equal(e->cnt.dma_errors, 1);
	/* The header readable, its SGEs not: nothing consumed either, and
	 * no wr_id or SGE count left to use. */
	put_recv(RQ_RING, 4, 2, 3, 2);
	dma.window_size = RQ_RING + 2 * MNIC_WQE_SIZE + 64 + 16 + 8;
	assert_int_equal(rocev2_rq_take(e, qp, &w), -HAL_EFAULT);
	assert_int_equal(qp->rq.ci, 2);
	assert_int_equal(w.wr_id, 0);
	assert_int_equal(w.num_sge, 0);
	dma.window_size = WIN;
	memset(&w, 0xa5, sizeof(w));
	assert_int_equal(rocev2_rq_take(e, qp, &w), 0);
	assert_int_equal(w.wr_id, 3);
	/* The header and its two SGEs, nothing past them. */
	assert_memory_equal(&w, mem + RQ_RING + 2 * MNIC_WQE_SIZE, 64 + 32);
	assert_int_equal(((const uint8_t *)&w)[64 + 32], 0xa5);
}

static void test_rq_take_hostile_producer_bounded(void **state)
{
	struct mnic_recv_wqe w;
	unsigned i;

	(void)state;
	for (i = 0; i < 4; i++)
		put_recv(RQ_RING, 4, i, 0x700 + i, 1);
	set_dbrec(RQ_DB, 1000);
	/* Every refresh admits at most one ring's worth beyond ci; the RQ's
	 * producer is read again once that is used up. */
	for (i = 0; i < 4; i++) {
		assert_int_equal(rocev2_rq_take(e, qp, &w), 0);
		assert_int_equal(w.wr_id, 0x700 + i);
		assert_true(qp->rq.pi - qp->rq.ci <= 4);
	}
	assert_int_equal(e->cnt.wq_bad_producer, 1);
	assert_int_equal(rocev2_rq_take(e, qp, &w), 0);
	assert_int_equal(w.wr_id, 0x700);               /* slot 0 again: the ring wrapped */
	assert_int_equal(e->cnt.wq_bad_producer, 2);
}

static void test_srq_take_shared_and_empty(void **state)
{
	struct mnic_recv_wqe w;
	unsigned i;

	(void)state;
	assert_int_equal(rocev2_rq_take(e, sqp, &w), -HAL_EAGAIN);
	assert_int_equal(rocev2_modify_srq_limit(e, srq, 0), 0);
	for (i = 0; i < 6; i++)
		put_recv(SRQ_RING, 16, i, 0x900 + i, 2);
	set_dbrec(SRQ_DB, 6);
	assert_int_equal(rocev2_srq_doorbell(e, srq), 0);
	/* A second QP on the same SRQ takes from the same ring, in order. */
	{
		struct rocev2_qp_init_attr qa = {
			.pd = pd, .send_cq = cq, .recv_cq = cq, .srq = srq,
			.sq = { SQ_RING + 0x3000u, SQ_DB + 0x40u, 4 }, .max_send_sge = 1,
		};
		uint32_t other;

		assert_int_equal(rocev2_create_qp(e, &qa, &other), 0);
		for (i = 0; i < 6; i++) {
			struct rocev2_qp *q = i % 2 ? rocev2_qp_lookup(e, other) : sqp;

			assert_int_equal(rocev2_rq_take(e, q, &w), 0);
			assert_int_equal(w.wr_id, 0x900 + i);
		}
		assert_int_equal(rocev2_rq_take(e, rocev2_qp_lookup(e, other), &w), -HAL_EAGAIN);
	}
	assert_int_equal(rocev2_rq_take(e, sqp, &w), -HAL_EAGAIN);
	/* num_sge against the SRQ's max_sge (2), not the QP's. */
	put_recv(SRQ_RING, 16, 6, 0x999, 3);
	set_dbrec(SRQ_DB, 7);
	assert_int_equal(rocev2_rq_take(e, sqp, &w), -HAL_EINVAL);
	assert_int_equal(e->cnt.rq_bad_wqe, 1);
	assert_int_equal(e->srqs[rocev2_handle_index(srq)].wq.ci, 7);
	assert_int_equal(e->cnt.srq_limit_events, 0);

	/* A corrupt SRQ index in the QP is refused, never used as an index. */
	sqp->srq = ROCEV2_MAX_SRQ;
	assert_int_equal(rocev2_rq_take(e, sqp, &w), -HAL_EINVAL);
	sqp->srq = 0xffffu;
	assert_int_equal(rocev2_rq_take(e, sqp, &w), -HAL_EINVAL);
	sqp->srq = rocev2_handle_index(srq) + 1;     /* a free slot */
	assert_int_equal(rocev2_rq_take(e, sqp, &w), -HAL_EINVAL);
	sqp->srq = rocev2_handle_index(srq);
}

static unsigned count_srq_events(void)
{
	struct rocev2_event ev;
	unsigned n = 0;

	while (rocev2_get_event(e, 0, &ev) == 0) {
		assert_int_equal(ev.type, ROCEV2_EVENT_SRQ_LIMIT_REACHED);
		assert_int_equal(ev.handle, srq);
		n++;
	}
	return n;
}

static void test_srq_limit_event_exactly_once(void **state)
{
	struct mnic_recv_wqe w;
	unsigned i, posted = 0;

	(void)state;
	/* limit 3 (setup), 6 posted: 5, 4, 3 left -> nothing; 2 left -> event. */
	for (; posted < 6; posted++)
		put_recv(SRQ_RING, 16, posted, posted, 1);
	set_dbrec(SRQ_DB, posted);
	for (i = 0; i < 3; i++) {
		assert_int_equal(rocev2_rq_take(e, sqp, &w), 0);
		assert_int_equal(count_srq_events(), 0);
	}
	assert_int_equal(rocev2_rq_take(e, sqp, &w), 0);
	assert_int_equal(count_srq_events(), 1);
	assert_int_equal(e->cnt.srq_limit_events, 1);
	assert_int_equal(e->srqs[rocev2_handle_index(srq)].limit_armed, 0);
	/* Disarmed: draining further raises nothing. */
	for (i = 0; i < 2; i++)
		assert_int_equal(rocev2_rq_take(e, sqp, &w), 0);
	assert_int_equal(rocev2_rq_take(e, sqp, &w), -HAL_EAGAIN);
	assert_int_equal(count_srq_events(), 0);
	assert_int_equal(e->cnt.srq_limit_events, 1);

	/* Re-armed at 5 with 10 posted: the host keeps posting one WQE per
	 * take at first (no crossing), then stops. */
	for (i = 0; i < 10; i++, posted++)
		put_recv(SRQ_RING, 16, posted, posted, 1);
	set_dbrec(SRQ_DB, posted);
	assert_int_equal(rocev2_modify_srq_limit(e, srq, 5), 0);
	for (i = 0; i < 6; i++) {
		assert_int_equal(rocev2_rq_take(e, sqp, &w), 0);
		put_recv(SRQ_RING, 16, posted, posted, 1);
		posted++;
		set_dbrec(SRQ_DB, posted);
	}
	assert_int_equal(count_srq_events(), 0);                 /* 10 left */
	for (i = 0; i < 5; i++) {
		assert_int_equal(rocev2_rq_take(e, sqp, &w), 0);
		assert_int_equal(count_srq_events(), 0);         /* 9 .. 5 left */
	}
	assert_int_equal(rocev2_rq_take(e, sqp, &w), 0);         /* 4 left */
	assert_int_equal(count_srq_events(), 1);
	assert_int_equal(e->cnt.srq_limit_events, 2);
	while (rocev2_rq_take(e, sqp, &w) == 0)
		;
	assert_int_equal(count_srq_events(), 0);
}

/* ---- scatter/gather ------------------------------------------------------- */

/* 64 bytes in seven SGEs: an empty one, one-byte ones, mixed MRs. */
static const struct mnic_sge gather_list_proto[] = {
	{ MR_A + 0x000, 5, 0 }, { MR_A + 0x100, 0, 0 }, { MR_A + 0x200, 17, 0 },
	{ MR_RO + 0x000, 1, 1 }, { MR_A + 0x400, 30, 0 }, { MR_RO + 0x100, 8, 1 },
	{ MR_A + 0x800, 3, 0 },
};
#define NSGE 7u
#define TOTAL 64u

static void make_list(struct mnic_sge *l, int all_writable)
{
	unsigned i;

	for (i = 0; i < NSGE; i++) {
		l[i] = gather_list_proto[i];
		if (all_writable && l[i].lkey == 1)
			l[i].addr = l[i].addr - MR_RO + MR_A + 0xc00;
		l[i].lkey = (all_writable || l[i].lkey == 0) ? lk_a : lk_ro;
	}
}

/* The message as the SGE list lays it out. */
static void flatten(const struct mnic_sge *l, uint8_t *out)
{
	unsigned i, n = 0;

	for (i = 0; i < NSGE; i++) {
		memcpy(out + n, mem + l[i].addr, l[i].length);
		n += l[i].length;
	}
	assert_int_equal(n, TOTAL);
}

static void test_gather_every_offset_and_length(void **state)
{
	struct mnic_sge l[NSGE];
	uint8_t ref[TOTAL], dst[TOTAL + 8];
	unsigned off, len;

	(void)state;
	make_list(l, 0);
	flatten(l, ref);
	for (off = 0; off <= TOTAL; off++) {
		for (len = 0; off + len <= TOTAL; len++) {
			memset(dst, 0xee, sizeof(dst));
			assert_int_equal(rocev2_sge_gather(e, qp, l, NSGE, off, dst, len), 0);
			assert_memory_equal(dst, ref + off, len);
			assert_int_equal(dst[len], 0xee);
		}
	}
	assert_int_equal(e->cnt.sge_prot_errors, 0);
}

static void test_scatter_every_offset_and_length(void **state)
{
	static uint8_t before[3 * MR_LEN];
	struct mnic_sge l[NSGE];
	uint8_t ref[TOTAL], src[TOTAL], got[TOTAL];
	unsigned off, len, i;

	(void)state;
	make_list(l, 1);
	for (i = 0; i < TOTAL; i++)
		src[i] = (uint8_t)(0x80 + i);
	memcpy(before, mem + MR_A, sizeof(before));
	for (off = 0; off <= TOTAL; off++) {
		for (len = 0; off + len <= TOTAL; len++) {
			memcpy(mem + MR_A, before, sizeof(before));
			flatten(l, ref);
			memcpy(ref + off, src, len);
			assert_int_equal(rocev2_sge_scatter(e, qp, l, NSGE, off, src, len), 0);
			flatten(l, got);
			assert_memory_equal(got, ref, TOTAL);
			/* Nothing outside the SGEs moved: put the SGE bytes back
			 * and compare the whole area. */
			for (i = 0; i < NSGE; i++)
				memcpy(mem + l[i].addr, before + (l[i].addr - MR_A), l[i].length);
			assert_memory_equal(mem + MR_A, before, sizeof(before));
		}
	}
}

static void test_sge_length_errors(void **state)
{
	static uint8_t before[MR_LEN];
	struct mnic_sge l[NSGE];
	uint8_t buf[TOTAL + 1];

	(void)state;
	make_list(l, 1);
	memset(buf, 0x42, sizeof(buf));
	memcpy(before, mem + MR_A, sizeof(before));
	assert_int_equal(rocev2_sge_scatter(e, qp, l, NSGE, 0, buf, TOTAL + 1), -HAL_E2BIG);
	assert_int_equal(rocev2_sge_scatter(e, qp, l, NSGE, 60, buf, 5), -HAL_E2BIG);
	assert_int_equal(rocev2_sge_scatter(e, qp, l, NSGE, TOTAL, buf, 1), -HAL_E2BIG);
	assert_int_equal(rocev2_sge_scatter(e, qp, l, NSGE, TOTAL + 1, buf, 0), -HAL_E2BIG);
	assert_int_equal(rocev2_sge_scatter(e, qp, l, NSGE, UINT64_MAX, buf, 2), -HAL_E2BIG);
	assert_int_equal(rocev2_sge_scatter(e, qp, l, NSGE, 1, buf, UINT32_MAX), -HAL_E2BIG);
	assert_memory_equal(mem + MR_A, before, sizeof(before));      /* nothing written */
	assert_int_equal(rocev2_sge_gather(e, qp, l, NSGE, 63, buf, 2), -HAL_E2BIG);
	assert_int_equal(rocev2_sge_gather(e, qp, l, 0, 0, buf, 1), -HAL_E2BIG);
	assert_int_equal(rocev2_sge_gather(e, qp, l, 0, 0, buf, 0), 0);
	assert_int_equal(rocev2_sge_gather(e, qp, l, NSGE, TOTAL, buf, 0), 0);
	assert_int_equal(rocev2_sge_gather(e, qp, l, MNIC_MAX_SGE + 1, 0, buf, 1), -HAL_E2BIG);
	assert_int_equal(e->cnt.sge_prot_errors, 0);
}

static void expect_prot_error(const struct mnic_sge *l, unsigned n, int scatter, uint64_t off,
			      uint32_t len)
{
	uint8_t buf[256];
	uint64_t before = e->cnt.sge_prot_errors;

	memset(buf, 0x33, sizeof(buf));
	if (scatter)
		assert_int_equal(rocev2_sge_scatter(e, qp, l, n, off, buf, len), -HAL_EFAULT);
	else
		assert_int_equal(rocev2_sge_gather(e, qp, l, n, off, buf, len), -HAL_EFAULT);
	assert_int_equal(e->cnt.sge_prot_errors, before + 1);
}

static void test_sge_protection_errors(void **state)
{
	struct mnic_sge l[3];
	uint32_t stale, rk;

	(void)state;
	/* Bad lkey, in the SGE where the offset lands. */
	l[0] = (struct mnic_sge){ MR_A, 8, lk_a };
	l[1] = (struct mnic_sge){ MR_A + 8, 8, lk_a ^ 0x01 };
	l[2] = (struct mnic_sge){ MR_A + 16, 8, lk_a };
	expect_prot_error(l, 3, 0, 10, 2);
	expect_prot_error(l, 3, 1, 4, 8);
	/* An SGE outside [off, off + len) is not touched, so not checked. */
	{
		uint8_t buf[8];

		assert_int_equal(rocev2_sge_gather(e, qp, l, 3, 16, buf, 8), 0);
		assert_int_equal(rocev2_sge_gather(e, qp, l, 3, 0, buf, 8), 0);
	}
	/* Unknown MR index, free slot. */
	l[1].lkey = 0xffffff00u | (lk_a & 0xff);
	expect_prot_error(l, 3, 0, 8, 1);
	l[1].lkey = (20u << 8) | 1u;
	expect_prot_error(l, 3, 0, 8, 1);
	/* Another PD's MR. */
	l[1] = (struct mnic_sge){ MR_B, 8, lk_b };
	expect_prot_error(l, 3, 0, 8, 1);
	expect_prot_error(l, 3, 1, 8, 1);
	/* Outside the MR: the SGE as a whole, even if only its start is used. */
	l[1] = (struct mnic_sge){ MR_A + MR_LEN - 4, 8, lk_a };
	expect_prot_error(l, 3, 0, 8, 1);
	l[1] = (struct mnic_sge){ MR_A - 1, 8, lk_a };
	expect_prot_error(l, 3, 0, 8, 8);
	l[1] = (struct mnic_sge){ UINT64_MAX - 3, 8, lk_a };
	expect_prot_error(l, 3, 0, 8, 8);
	l[1] = (struct mnic_sge){ MR_A + 1, UINT32_MAX, lk_a };
	expect_prot_error(l, 3, 0, 8, 8);
	/* Scatter needs LOCAL_WRITE; gather does not. */
	l[1] = (struct mnic_sge){ MR_RO, 8, lk_ro };
	expect_prot_error(l, 3, 1, 8, 4);
	{
		uint8_t buf[8];

		assert_int_equal(rocev2_sge_gather(e, qp, l, 3, 8, buf, 8), 0);
		assert_memory_equal(buf, mem + MR_RO, 8);
	}
	/* A deregistered MR's key. */
	assert_int_equal(rocev2_reg_mr(e, pd, MR_A, 64, ROCEV2_ACCESS_LOCAL_WRITE, &stale, &rk), 0);
	l[1] = (struct mnic_sge){ MR_A, 8, stale };
	{
		uint8_t buf[8];

		assert_int_equal(rocev2_sge_scatter(e, qp, l, 3, 8, buf, 8), 0);
	}
	assert_int_equal(rocev2_dereg_mr(e, stale), 0);
	expect_prot_error(l, 3, 1, 8, 8);
	assert_int_equal(e->cnt.dma_errors, 0);
}

static void test_sge_total(void **state)
{
	struct mnic_sge l[MNIC_MAX_SGE + 1];
	uint64_t total = 0;
	unsigned i;

	(void)state;
	memset(l, 0, sizeof(l));
	l[0].length = 5;
	l[1].length = 0;
	l[2].length = 7;
	assert_int_equal(rocev2_sge_total(l, 3, &total), 0);
	assert_int_equal(total, 12);
	assert_int_equal(rocev2_sge_total(l, 0, &total), 0);
	assert_int_equal(total, 0);
	for (i = 0; i < MNIC_MAX_SGE + 1; i++)
		l[i].length = UINT32_MAX;
	assert_int_equal(rocev2_sge_total(l, MNIC_MAX_SGE, &total), -HAL_E2BIG);
	assert_int_equal(rocev2_sge_total(l, MNIC_MAX_SGE + 1, &total), -HAL_E2BIG);
	l[0].length = ROCEV2_MAX_MSG;
	assert_int_equal(rocev2_sge_total(l, 1, &total), 0);
	assert_int_equal(total, ROCEV2_MAX_MSG);
	l[0].length = ROCEV2_MAX_MSG / 2;
	l[1].length = ROCEV2_MAX_MSG / 2 + 1;
	assert_int_equal(rocev2_sge_total(l, 2, &total), -HAL_E2BIG);
}

/* The responder's copies by rkey (checked before against the MR): an MR
 * over the whole window reaches its last byte and no further; a key that
 * names no MR moves nothing. */
static void test_mem_read_write(void **state)
{
	uint8_t buf[16], back[16];
	uint32_t all, rk;
	unsigned i;

	(void)state;
	assert_int_equal(rocev2_reg_mr(e, pd, 0, WIN, ROCEV2_ACCESS_LOCAL_WRITE, &all, &rk), 0);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(0xa0 + i);
	assert_int_equal(rocev2_mem_write(e, rk, MR_B + 3, buf, sizeof(buf)), 0);
	assert_memory_equal(mem + MR_B + 3, buf, sizeof(buf));
	assert_int_equal(rocev2_mem_read(e, rk, MR_B + 3, back, sizeof(back)), 0);
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(rocev2_mem_write(e, rk, WIN - 8, buf, 9), -HAL_EFAULT);
	assert_int_equal(rocev2_mem_read(e, rk, UINT64_MAX - 4, back, 8), -HAL_EFAULT);
	assert_int_equal(e->cnt.dma_errors, 2);
	assert_int_equal(rocev2_mem_read(e, rk + 1u, MR_B + 3, back, 8), -HAL_EFAULT);
	assert_int_equal(e->cnt.dma_errors, 3);
	/* Zero length: nothing to move, nothing to refuse. */
	assert_int_equal(rocev2_mem_read(e, rk, WIN, back, 0), 0);
	assert_int_equal(rocev2_mem_write(e, 0, UINT64_MAX, buf, 0), 0);
	assert_int_equal(e->cnt.dma_errors, 3);
	assert_int_equal(rocev2_mem_write(e, rk, WIN - 8, buf, 8), 0);
	assert_memory_equal(mem + WIN - 8, buf, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_wq_refresh_clamps_hostile_producer, setup),
		cmocka_unit_test_setup(test_wq_refresh_dma_error_and_no_queue, setup),
		cmocka_unit_test_setup(test_sq_read_slots_and_validation, setup),
		cmocka_unit_test_setup(test_rq_take_order_wrap_and_empty, setup),
		cmocka_unit_test_setup(test_rq_take_bad_wqe_is_consumed, setup),
		cmocka_unit_test_setup(test_rq_take_hostile_producer_bounded, setup),
		cmocka_unit_test_setup(test_srq_take_shared_and_empty, setup),
		cmocka_unit_test_setup(test_srq_limit_event_exactly_once, setup),
		cmocka_unit_test_setup(test_gather_every_offset_and_length, setup),
		cmocka_unit_test_setup(test_scatter_every_offset_and_length, setup),
		cmocka_unit_test_setup(test_sge_length_errors, setup),
		cmocka_unit_test_setup(test_sge_protection_errors, setup),
		cmocka_unit_test_setup(test_sge_total, setup),
		cmocka_unit_test_setup(test_mem_read_write, setup),
	};
	return cmocka_run_group_tests_name("rocev2/queue", tests, NULL, NULL);
}
