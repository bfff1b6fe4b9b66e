/* rocev2 qp.c: QP creation and its references, QPNs, the verbs state
 * machine (every (from, to) pair, required/optional masks, attribute
 * values), query, the error and reset transitions with their stage hooks
 * and timers, destruction and the scheduler. */
#include "cmocka_main.h"

#include <string.h>

#include "internal.h"
#include "silent_env.h"
#include "pool.h"

/* objects_doubles.c records the stage hook calls.  The same test also
 * links against the real req.c/comp.c/resp.c (no doubles): then these weak
 * symbols are absent and only the checks that count hook calls are
 * skipped (DBL_*). */
#define WEAK __attribute__((weak))
extern unsigned dbl_req_reset WEAK, dbl_comp_reset WEAK, dbl_resp_reset WEAK;
extern unsigned dbl_req_flush WEAK, dbl_resp_flush WEAK, dbl_req_run WEAK, dbl_resp_run WEAK;
extern unsigned dbl_flush_state WEAK;

static int have_doubles(void)
{
	return &dbl_req_reset != NULL;
}
#define DBL_EQ(a, b)                                   \
	do {                                           \
		if (have_doubles())                    \
			assert_int_equal((a), (b));    \
	} while (0)
#define DBL_SET(stmt)                                  \
	do {                                           \
		if (have_doubles())                    \
			stmt;                          \
	} while (0)
static unsigned dbl_hook_calls(void)
{
	if (!have_doubles())
		return 0;
	return dbl_req_reset + dbl_comp_reset + dbl_resp_reset + dbl_req_flush + dbl_resp_flush;
}

#define WIN (1u << 20)
static uint8_t mem[WIN];
static struct hal_dma dma;
static struct rocev2 eng;
static struct rocev2 *const e = &eng;
static uint32_t pd, cq, srq;

static int setup(void **state)
{
	struct rocev2_env env = silent_env(&dma);
	struct rocev2_queue_attr cqa = { .ring_addr = 0x1000, .dbrec_addr = 0x100, .size = 64 };
	struct rocev2_srq_attr sa = { .q = { 0x40000, 0x140, 16 }, .max_sge = 4 };

	(void)state;
	memset(mem, 0, sizeof(mem));
	hal_dma_window_init(&dma, mem, WIN);
	now = 0;
	assert_int_equal(rocev2_init(e, &env), 0);
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	assert_int_equal(rocev2_create_cq(e, &cqa, &cq), 0);
	assert_int_equal(rocev2_create_srq(e, pd, &sa, &srq), 0);
	DBL_SET(dbl_req_reset = dbl_comp_reset = dbl_resp_reset = 0);
	DBL_SET(dbl_req_flush = dbl_resp_flush = dbl_req_run = dbl_resp_run = 0);
	DBL_SET(dbl_flush_state = 0xff);
	return 0;
}

/* Every QP gets its own rings so that none overlaps another's. */
static struct rocev2_qp_init_attr init_attr(unsigned n)
{
	struct rocev2_qp_init_attr a = {
		.pd = pd, .send_cq = cq, .recv_cq = cq, .srq = ROCEV2_NO_SRQ,
		.sq = { 0x80000 + n * 0x4000u, 0x200 + n * 16u, 8 },
		.rq = { 0x80000 + n * 0x4000u + 0x2000u, 0x208 + n * 16u, 8 },
		.max_send_sge = 4, .max_recv_sge = 4,
	};
	return a;
}

static uint32_t make_qp(void)
{
	static unsigned n;
	struct rocev2_qp_init_attr a = init_attr(n++ % 32);
	uint32_t qpn;

	assert_int_equal(rocev2_create_qp(e, &a, &qpn), 0);
	return qpn;
}

static struct rocev2_qp *qp_of(uint32_t qpn)
{
	struct rocev2_qp *qp = rocev2_qp_lookup(e, qpn);

	assert_non_null(qp);
	return qp;
}

#define M(a) ROCEV2_QP_##a
#define REQ_INIT (M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS))
#define REQ_RTR (M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) | M(MAX_DEST_RD_ATOMIC) | \
		 M(MIN_RNR_TIMER))
#define REQ_RTS (M(SQ_PSN) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC))
#define ALL_ATTRS (M(ACCESS_FLAGS) | M(PKEY_INDEX) | M(PORT) | M(AV) | M(PATH_MTU) |   \
		   M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(RQ_PSN) |                \
		   M(MAX_QP_RD_ATOMIC) | M(MIN_RNR_TIMER) | M(SQ_PSN) |                   \
		   M(MAX_DEST_RD_ATOMIC) | M(DEST_QPN))

static struct rocev2_qp_attr good_attr(uint32_t state)
{
	struct rocev2_qp_attr a = {
		.qp_state = state, .path_mtu = ROCEV2_MTU_1024,
		.qp_access_flags = ROCEV2_ACCESS_REMOTE_WRITE | ROCEV2_ACCESS_REMOTE_READ,
		.rq_psn = 0x100, .sq_psn = 0x200, .dest_qp_num = 0x4242,
		.av = { .dmac = { 2, 0, 0, 0, 0, 2 }, .ttl = 64, .tos = 0, .dgid = MNIC_GID_V4(0x0a000002) },
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 12,
		.max_rd_atomic = 4, .max_dest_rd_atomic = 4, .pkey_index = 0,
	};
	return a;
}

static int modify(uint32_t qpn, uint32_t state, uint32_t mask)
{
	struct rocev2_qp_attr a = good_attr(state);

	return rocev2_modify_qp(e, qpn, &a, mask);
}

/* Bring a fresh QP to state s along the verbs path (SQE, which RC never
 * enters by itself, is set directly). */
static uint32_t qp_in_state(unsigned s)
{
	uint32_t qpn = make_qp();

	if (s == ROCEV2_QPS_RESET)
		return qpn;
	if (s == ROCEV2_QPS_ERR) {
		assert_int_equal(modify(qpn, ROCEV2_QPS_INIT, M(STATE) | REQ_INIT), 0);
		assert_int_equal(modify(qpn, ROCEV2_QPS_ERR, M(STATE)), 0);
		return qpn;
	}
	assert_int_equal(modify(qpn, ROCEV2_QPS_INIT, M(STATE) | REQ_INIT), 0);
	if (s == ROCEV2_QPS_INIT)
		return qpn;
	assert_int_equal(modify(qpn, ROCEV2_QPS_RTR, M(STATE) | REQ_RTR), 0);
	if (s == ROCEV2_QPS_RTR)
		return qpn;
	assert_int_equal(modify(qpn, ROCEV2_QPS_RTS, M(STATE) | REQ_RTS), 0);
	if (s == ROCEV2_QPS_RTS)
		return qpn;
	if (s == ROCEV2_QPS_SQD) {
		assert_int_equal(modify(qpn, ROCEV2_QPS_SQD, M(STATE)), 0);
		return qpn;
	}
	qp_of(qpn)->state = ROCEV2_QPS_SQE;
	qp_of(qpn)->attr.qp_state = ROCEV2_QPS_SQE;
	return qpn;
}

static uint32_t state_of(uint32_t qpn)
{
	struct rocev2_qp_attr a;

	assert_int_equal(rocev2_query_qp(e, qpn, &a), 0);
	assert_int_equal(a.cur_qp_state, a.qp_state);
	return a.qp_state;
}

/* A refused modify must leave every byte of the QP as it was. */
static void assert_modify_refused(uint32_t qpn, const struct rocev2_qp_attr *a, uint32_t mask)
{
	static struct rocev2_qp before;
	struct rocev2_qp *qp = qp_of(qpn);
	unsigned hooks = dbl_hook_calls();
	struct rocev2_event ev;

	memcpy(&before, qp, sizeof(before));
	assert_int_equal(rocev2_modify_qp(e, qpn, a, mask), -HAL_EINVAL);
	assert_memory_equal(&before, qp, sizeof(before));
	DBL_EQ(dbl_hook_calls(), hooks);
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
}

/* ---- create / QPN / pool ------------------------------------------------ */

static void test_create_validation(void **state)
{
	struct rocev2_qp_init_attr a = init_attr(0), b;
	uint32_t qpn;

	(void)state;
	assert_int_equal(rocev2_create_qp(e, NULL, &qpn), -HAL_EINVAL);
	assert_int_equal(rocev2_create_qp(e, &a, NULL), -HAL_EINVAL);
	b = a; b.pd = pd + (1u << 16);
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	b = a; b.pd = ROCEV2_MAX_PD;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	b = a; b.send_cq = cq + (1u << 16);
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	b = a; b.recv_cq = cq + 1;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	b = a; b.srq = srq + (1u << 16); b.rq.size = 0;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	b = a; b.srq = srq;                         /* an SRQ and an RQ */
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	b = a; b.max_send_sge = MNIC_MAX_SGE + 1;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	b = a; b.max_recv_sge = MNIC_MAX_SGE + 1;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	b = a; b.sq.size = 6;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	b = a; b.rq.size = 1u << 17;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	b = a; b.sq.dbrec_addr += 4;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EINVAL);
	/* Rings and doorbell records outside the DMA window. */
	b = a; b.sq.ring_addr = WIN - 7 * MNIC_WQE_SIZE;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EFAULT);
	b = a; b.rq.ring_addr = UINT64_MAX - MNIC_WQE_SIZE;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EFAULT);
	b = a; b.sq.dbrec_addr = WIN;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EFAULT);
	b = a; b.rq.dbrec_addr = UINT64_MAX & ~7ull;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), -HAL_EFAULT);
	assert_int_equal(e->n_qp, 0);
	assert_int_equal(e->pds[rocev2_handle_index(pd)].refcnt, 1);    /* the SRQ */
	assert_int_equal(e->cqs[rocev2_handle_index(cq)].refcnt, 0);

	/* Valid corner cases: no SQ, no RQ, the SRQ instead, max SGEs. */
	b = a; b.sq.size = 0; b.sq.ring_addr = UINT64_MAX;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), 0);
	b = a; b.srq = srq; b.rq = (struct rocev2_queue_attr){ 0 };
	b.max_send_sge = b.max_recv_sge = MNIC_MAX_SGE;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), 0);
	assert_int_equal(qp_of(qpn)->srq, rocev2_handle_index(srq));
	b = a; b.sq.ring_addr = WIN - 8 * MNIC_WQE_SIZE; b.sq.dbrec_addr = WIN - 8;
	assert_int_equal(rocev2_create_qp(e, &b, &qpn), 0);
	assert_int_equal(e->n_qp, 3);
}

static void test_create_sets_qpn_sport_state(void **state)
{
	uint32_t qpn = make_qp();
	struct rocev2_qp *qp = qp_of(qpn);

	(void)state;
	assert_true(qpn > 1);
	assert_true(qpn <= 0xffffff);
	assert_int_equal(qpn & 0xfff, (uint32_t)(qp - e->qps));
	assert_int_equal(qpn >> 12, qp->gen);
	assert_true(qp->gen >= 1);
	assert_int_equal(qp->qpn, qpn);
	assert_int_equal(qp->sport, rocev2_udp_sport(qpn));
	assert_int_equal(qp->state, ROCEV2_QPS_RESET);
	assert_int_equal(state_of(qpn), ROCEV2_QPS_RESET);
	assert_false(timer_armed(&qp->comp.retrans_timer));
	assert_false(timer_armed(&qp->comp.rnr_timer));
	DBL_EQ(dbl_req_reset, 1);
	DBL_EQ(dbl_comp_reset, 1);
	DBL_EQ(dbl_resp_reset, 1);
	assert_int_equal(e->pds[rocev2_handle_index(pd)].refcnt, 2);     /* SRQ + QP */
	assert_int_equal(e->cqs[rocev2_handle_index(cq)].refcnt, 2);     /* send + recv */
}

static void test_lookup_hostile_qpns(void **state)
{
	uint32_t qpn = make_qp();

	(void)state;
	assert_null(rocev2_qp_lookup(e, 0));
	assert_null(rocev2_qp_lookup(e, 1));
	assert_null(rocev2_qp_lookup(e, qpn & 0xfff));                 /* generation 0 */
	assert_null(rocev2_qp_lookup(e, qpn + (1u << 12)));            /* next generation */
	assert_null(rocev2_qp_lookup(e, qpn | 1u << 24));              /* beyond 24 bits */
	assert_null(rocev2_qp_lookup(e, 0xffffffffu));
	assert_null(rocev2_qp_lookup(e, (qpn & ~0xfffu) | ROCEV2_MAX_QP));
	assert_null(rocev2_qp_lookup(e, (qpn & ~0xfffu) | 0xfff));
	assert_null(rocev2_qp_lookup(e, qpn + 1));                     /* free slot */
	assert_non_null(rocev2_qp_lookup(e, qpn));
	/* None of these was ever issued, so none is stale (recv.c counts
	 * them as rx_no_qp). */
	assert_false(rocev2_qpn_stale(e, qpn));                        /* live */
	assert_false(rocev2_qpn_stale(e, 0));
	assert_false(rocev2_qpn_stale(e, qpn & 0xfff));
	assert_false(rocev2_qpn_stale(e, qpn + (1u << 12)));
	assert_false(rocev2_qpn_stale(e, qpn | 1u << 24));
	assert_false(rocev2_qpn_stale(e, 0xffffffffu));
	assert_false(rocev2_qpn_stale(e, (qpn & ~0xfffu) | ROCEV2_MAX_QP));
	assert_false(rocev2_qpn_stale(e, qpn + 1));
	assert_int_equal(rocev2_destroy_qp(e, 1), -HAL_EINVAL);
	assert_int_equal(rocev2_modify_qp(e, 0xffffff, &(struct rocev2_qp_attr){ 0 }, 0),
			 -HAL_EINVAL);
}

static void test_pool_exhaust_stale_and_teardown(void **state)
{
	uint32_t q[ROCEV2_MAX_QP], extra, again, cq2;
	struct rocev2_qp_init_attr a = init_attr(20);
	struct rocev2_queue_attr cqa = { .ring_addr = 0x3000, .dbrec_addr = 0x180, .size = 4 };
	unsigned i, j;

	(void)state;
	assert_int_equal(rocev2_create_cq(e, &cqa, &cq2), 0);
	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		struct rocev2_qp_init_attr b = init_attr(i);

		b.recv_cq = cq2;
		if (i % 2) {
			b.srq = srq;
			b.rq.size = 0;
		}
		assert_int_equal(rocev2_create_qp(e, &b, &q[i]), 0);
		assert_true(q[i] > 1);
		for (j = 0; j < i; j++)
			assert_int_not_equal(q[i], q[j]);
	}
	assert_int_equal(e->n_qp, ROCEV2_MAX_QP);
	assert_int_equal(rocev2_create_qp(e, &a, &extra), -HAL_ENOMEM);
	assert_int_equal(e->n_qp, ROCEV2_MAX_QP);

	/* Everything a QP uses is busy. */
	assert_int_equal(rocev2_dealloc_pd(e, pd), -HAL_EBUSY);
	assert_int_equal(rocev2_destroy_cq(e, cq), -HAL_EBUSY);
	assert_int_equal(rocev2_destroy_cq(e, cq2), -HAL_EBUSY);
	assert_int_equal(rocev2_destroy_srq(e, srq), -HAL_EBUSY);

	/* A destroyed QPN is dead for every verb, also once the slot is
	 * reused. */
	assert_int_equal(rocev2_destroy_qp(e, q[3]), 0);
	assert_int_equal(rocev2_destroy_qp(e, q[3]), -HAL_EINVAL);
	assert_null(rocev2_qp_lookup(e, q[3]));
	/* Stale (a late packet for it is rx_stale_qp), not never-issued;
	 * the next generation of its free slot was never issued. */
	assert_true(rocev2_qpn_stale(e, q[3]));
	assert_false(rocev2_qpn_stale(e, q[3] + (1u << 12)));
	assert_int_equal(rocev2_create_qp(e, &a, &again), 0);
	assert_int_equal(again & 0xfff, q[3] & 0xfff);
	assert_int_not_equal(again, q[3]);
	assert_null(rocev2_qp_lookup(e, q[3]));
	assert_true(rocev2_qpn_stale(e, q[3]));          /* the slot's next owner is live */
	assert_false(rocev2_qpn_stale(e, again));
	assert_false(rocev2_qpn_stale(e, again + (1u << 12)));
	assert_int_equal(modify(q[3], ROCEV2_QPS_INIT, M(STATE) | REQ_INIT), -HAL_EINVAL);
	assert_int_equal(rocev2_query_qp(e, q[3], &(struct rocev2_qp_attr){ 0 }), -HAL_EINVAL);
	assert_int_equal(rocev2_destroy_qp(e, q[3]), -HAL_EINVAL);
	assert_int_equal(state_of(again), ROCEV2_QPS_RESET);
	q[3] = again;

	for (i = 0; i < ROCEV2_MAX_QP; i++)
		assert_int_equal(rocev2_destroy_qp(e, q[i]), 0);
	assert_int_equal(e->n_qp, 0);
	assert_int_equal(rocev2_destroy_srq(e, srq), 0);
	assert_int_equal(rocev2_destroy_cq(e, cq2), 0);
	assert_int_equal(rocev2_destroy_cq(e, cq), 0);
	assert_int_equal(rocev2_dealloc_pd(e, pd), 0);
	assert_int_equal(e->n_pd + e->n_mr + e->n_cq + e->n_srq + e->n_qp, 0);
}

static void test_qpn_generation_wraps_past_zero(void **state)
{
	uint32_t qpn;

	(void)state;
	e->qps[0].gen = ROCEV2_QPN_GEN_MAX;
	qpn = make_qp();
	assert_int_equal(qpn & 0xfff, 0);
	assert_int_equal(qpn >> 12, 1);       /* not 0: QPN 0 (and 1) stay reserved */
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	qpn = make_qp();
	assert_int_equal(qpn, 2u << 12);
}

/* ---- the transition table ----------------------------------------------- */

struct expect {
	uint8_t ok;
	uint32_t req, opt;
};

#define OK(r, o) { 1, (r), (o) }
/* IBA 10.3.1 / ib_modify_qp_is_ok(), RC column, as this engine supports it
 * (any state -> ERR includes RESET -> ERR). */
static const struct expect table[ROCEV2_QPS_NUM][ROCEV2_QPS_NUM] = {
	[ROCEV2_QPS_RESET] = {
		[ROCEV2_QPS_RESET] = OK(0, 0),
		[ROCEV2_QPS_INIT] = OK(REQ_INIT, 0),
		[ROCEV2_QPS_ERR] = OK(0, 0),
	},
	[ROCEV2_QPS_INIT] = {
		[ROCEV2_QPS_RESET] = OK(0, 0),
		[ROCEV2_QPS_INIT] = OK(0, REQ_INIT),
		[ROCEV2_QPS_RTR] = OK(REQ_RTR, M(ACCESS_FLAGS) | M(PKEY_INDEX)),
		[ROCEV2_QPS_ERR] = OK(0, 0),
	},
	[ROCEV2_QPS_RTR] = {
		[ROCEV2_QPS_RESET] = OK(0, 0),
		[ROCEV2_QPS_RTS] = OK(REQ_RTS, M(ACCESS_FLAGS) | M(MIN_RNR_TIMER)),
		[ROCEV2_QPS_ERR] = OK(0, 0),
	},
	[ROCEV2_QPS_RTS] = {
		[ROCEV2_QPS_RESET] = OK(0, 0),
		[ROCEV2_QPS_RTS] = OK(0, M(ACCESS_FLAGS) | M(MIN_RNR_TIMER)),
		[ROCEV2_QPS_SQD] = OK(0, 0),
		[ROCEV2_QPS_ERR] = OK(0, 0),
	},
	[ROCEV2_QPS_SQD] = {
		[ROCEV2_QPS_RESET] = OK(0, 0),
		[ROCEV2_QPS_RTS] = OK(0, M(ACCESS_FLAGS) | M(MIN_RNR_TIMER)),
		[ROCEV2_QPS_SQD] = OK(0, M(PORT) | M(AV) | M(TIMEOUT) | M(RETRY_CNT) |
				      M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC) |
				      M(MAX_DEST_RD_ATOMIC) | M(ACCESS_FLAGS) |
				      M(PKEY_INDEX) | M(MIN_RNR_TIMER)),
		[ROCEV2_QPS_ERR] = OK(0, 0),
	},
	[ROCEV2_QPS_SQE] = {
		[ROCEV2_QPS_RESET] = OK(0, 0),
		[ROCEV2_QPS_RTS] = OK(0, 0),
		[ROCEV2_QPS_ERR] = OK(0, 0),
	},
	[ROCEV2_QPS_ERR] = {
		[ROCEV2_QPS_RESET] = OK(0, 0),
		[ROCEV2_QPS_ERR] = OK(0, 0),
	},
};

static void finish(uint32_t qpn)
{
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
}

static void test_every_transition_pair(void **state)
{
	unsigned from, to, bit, tried_ok = 0, tried_bad = 0;

	(void)state;
	for (from = 0; from < ROCEV2_QPS_NUM; from++) {
		for (to = 0; to < ROCEV2_QPS_NUM; to++) {
			const struct expect *x = &table[from][to];
			struct rocev2_qp_attr a = good_attr(to);
			uint32_t qpn = qp_in_state(from);

			if (!x->ok) {
				/* Refused with no attribute, the "right" ones, or all. */
				assert_modify_refused(qpn, &a, M(STATE));
				assert_modify_refused(qpn, &a, M(STATE) | REQ_INIT);
				assert_modify_refused(qpn, &a, M(STATE) | REQ_RTR);
				assert_modify_refused(qpn, &a, M(STATE) | REQ_RTS);
				assert_modify_refused(qpn, &a, M(STATE) | ALL_ATTRS);
				assert_int_equal(state_of(qpn), from);
				finish(qpn);
				tried_bad++;
				continue;
			}
			/* Each required attribute missing: refused. */
			for (bit = 0; bit < 32; bit++)
				if (x->req & (1u << bit))
					assert_modify_refused(qpn, &a,
							      (M(STATE) | x->req) & ~(1u << bit));
			/* Any attribute neither required nor optional: refused. */
			for (bit = 0; bit < 32; bit++)
				if ((ALL_ATTRS & ~(x->req | x->opt)) & (1u << bit))
					assert_modify_refused(qpn, &a,
							      M(STATE) | x->req | 1u << bit);
			assert_int_equal(state_of(qpn), from);
			/* The minimal mask succeeds. */
			assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | x->req), 0);
			assert_int_equal(state_of(qpn), to);
			assert_int_equal(qp_of(qpn)->state, to);
			finish(qpn);
			/* So does the full optional set, on a fresh QP. */
			qpn = qp_in_state(from);
			assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | x->req | x->opt),
					 0);
			assert_int_equal(state_of(qpn), to);
			finish(qpn);
			tried_ok++;
		}
	}
	assert_int_equal(tried_ok, 23);
	assert_int_equal(tried_bad, 26);
	assert_int_equal(e->n_qp, 0);
}

/* Without IBV_QP_STATE the QP stays where it is: only the modify-in-place
 * rows accept that. */
static void test_modify_without_state_bit(void **state)
{
	struct rocev2_qp_attr a = good_attr(ROCEV2_QPS_ERR);  /* ignored: no STATE bit */
	uint32_t qpn;

	(void)state;
	qpn = qp_in_state(ROCEV2_QPS_RTS);
	a.min_rnr_timer = 3;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(MIN_RNR_TIMER)), 0);
	assert_int_equal(state_of(qpn), ROCEV2_QPS_RTS);
	assert_int_equal(qp_of(qpn)->attr.min_rnr_timer, 3);
	assert_modify_refused(qpn, &a, M(PATH_MTU));
	assert_modify_refused(qpn, &a, M(SQ_PSN));

	qpn = qp_in_state(ROCEV2_QPS_RTR);
	assert_modify_refused(qpn, &a, M(MIN_RNR_TIMER));
	assert_modify_refused(qpn, &a, 0);

	qpn = qp_in_state(ROCEV2_QPS_INIT);
	a.qp_access_flags = ROCEV2_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(ACCESS_FLAGS)), 0);
	assert_int_equal(qp_of(qpn)->attr.qp_access_flags, ROCEV2_ACCESS_REMOTE_ATOMIC);
	assert_int_equal(state_of(qpn), ROCEV2_QPS_INIT);

	qpn = qp_in_state(ROCEV2_QPS_RESET);
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, 0), 0);     /* RESET -> RESET */
	assert_modify_refused(qpn, &a, M(PKEY_INDEX));
}

struct bad_value {
	unsigned from, to;
	uint32_t mask;
	void (*spoil)(struct rocev2_qp_attr *a);
};

static void bad_pkey(struct rocev2_qp_attr *a) { a->pkey_index = 1; }
static void bad_access(struct rocev2_qp_attr *a) { a->qp_access_flags = 1u << 4; }
static void bad_mtu0(struct rocev2_qp_attr *a) { a->path_mtu = 0; }
static void bad_mtu6(struct rocev2_qp_attr *a) { a->path_mtu = 6; }
static void bad_mtu_big(struct rocev2_qp_attr *a) { a->path_mtu = 0x80000001u; }
static void bad_rnr_timer(struct rocev2_qp_attr *a) { a->min_rnr_timer = 32; }
static void bad_dest_rd(struct rocev2_qp_attr *a) { a->max_dest_rd_atomic = ROCEV2_MAX_RD_ATOMIC + 1; }
static void bad_dest_qpn(struct rocev2_qp_attr *a) { a->dest_qp_num = 1u << 24; }
static void bad_timeout(struct rocev2_qp_attr *a) { a->timeout = 32; }
static void bad_retry(struct rocev2_qp_attr *a) { a->retry_cnt = 8; }
static void bad_rnr_retry(struct rocev2_qp_attr *a) { a->rnr_retry = 8; }
static void bad_rd(struct rocev2_qp_attr *a) { a->max_rd_atomic = ROCEV2_MAX_RD_ATOMIC + 1; }
static void bad_state(struct rocev2_qp_attr *a) { a->qp_state = ROCEV2_QPS_NUM; }
static void bad_state_big(struct rocev2_qp_attr *a) { a->qp_state = 0xffffffffu; }

static void test_invalid_values_leave_qp_unchanged(void **state)
{
	static const struct bad_value bad[] = {
		{ ROCEV2_QPS_RESET, ROCEV2_QPS_INIT, M(STATE) | REQ_INIT, bad_pkey },
		{ ROCEV2_QPS_RESET, ROCEV2_QPS_INIT, M(STATE) | REQ_INIT, bad_access },
		{ ROCEV2_QPS_INIT, ROCEV2_QPS_INIT, M(PKEY_INDEX), bad_pkey },
		{ ROCEV2_QPS_INIT, ROCEV2_QPS_RTR, M(STATE) | REQ_RTR, bad_mtu0 },
		{ ROCEV2_QPS_INIT, ROCEV2_QPS_RTR, M(STATE) | REQ_RTR, bad_mtu6 },
		{ ROCEV2_QPS_INIT, ROCEV2_QPS_RTR, M(STATE) | REQ_RTR, bad_mtu_big },
		{ ROCEV2_QPS_INIT, ROCEV2_QPS_RTR, M(STATE) | REQ_RTR, bad_rnr_timer },
		{ ROCEV2_QPS_INIT, ROCEV2_QPS_RTR, M(STATE) | REQ_RTR, bad_dest_rd },
		{ ROCEV2_QPS_INIT, ROCEV2_QPS_RTR, M(STATE) | REQ_RTR, bad_dest_qpn },
		{ ROCEV2_QPS_INIT, ROCEV2_QPS_RTR, M(STATE) | REQ_RTR | M(ACCESS_FLAGS), bad_access },
		{ ROCEV2_QPS_RTR, ROCEV2_QPS_RTS, M(STATE) | REQ_RTS, bad_timeout },
		{ ROCEV2_QPS_RTR, ROCEV2_QPS_RTS, M(STATE) | REQ_RTS, bad_retry },
		{ ROCEV2_QPS_RTR, ROCEV2_QPS_RTS, M(STATE) | REQ_RTS, bad_rnr_retry },
		{ ROCEV2_QPS_RTR, ROCEV2_QPS_RTS, M(STATE) | REQ_RTS, bad_rd },
		{ ROCEV2_QPS_RTR, ROCEV2_QPS_RTS, M(STATE) | REQ_RTS | M(MIN_RNR_TIMER), bad_rnr_timer },
		{ ROCEV2_QPS_RTS, ROCEV2_QPS_RTS, M(MIN_RNR_TIMER), bad_rnr_timer },
		{ ROCEV2_QPS_SQD, ROCEV2_QPS_SQD, M(STATE) | M(TIMEOUT), bad_timeout },
		{ ROCEV2_QPS_SQD, ROCEV2_QPS_SQD, M(STATE) | M(RETRY_CNT), bad_retry },
		{ ROCEV2_QPS_SQD, ROCEV2_QPS_SQD, M(STATE) | M(MAX_DEST_RD_ATOMIC), bad_dest_rd },
		{ ROCEV2_QPS_RTS, ROCEV2_QPS_ERR, M(STATE), bad_state },
		{ ROCEV2_QPS_RTS, ROCEV2_QPS_ERR, M(STATE), bad_state_big },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t qpn = qp_in_state(bad[i].from);
		struct rocev2_qp_attr a = good_attr(bad[i].to);

		/* The same modify with good values succeeds ... */
		if (bad[i].spoil != bad_state && bad[i].spoil != bad_state_big) {
			uint32_t twin = qp_in_state(bad[i].from);

			assert_int_equal(rocev2_modify_qp(e, twin, &a, bad[i].mask), 0);
			finish(twin);
		}
		/* ... and fails with one bad value, changing nothing. */
		bad[i].spoil(&a);
		assert_modify_refused(qpn, &a, bad[i].mask);
		assert_int_equal(state_of(qpn), bad[i].from);
		finish(qpn);
	}
	assert_int_equal(e->n_qp, 0);
}

static void test_unknown_mask_bits_refused(void **state)
{
	static const uint32_t unknown[] = { 1u << 1, 1u << 2, 1u << 6, 1u << 14, 1u << 18,
					    1u << 19, 1u << 21, 1u << 31 };
	uint32_t qpn = qp_in_state(ROCEV2_QPS_RTS);
	struct rocev2_qp_attr a = good_attr(ROCEV2_QPS_RTS);
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		assert_modify_refused(qpn, &a, M(STATE) | unknown[i]);
		assert_modify_refused(qpn, &a, unknown[i]);
	}
	assert_int_equal(rocev2_modify_qp(e, qpn, NULL, M(STATE)), -HAL_EINVAL);
}

static void test_boundary_values_accepted(void **state)
{
	uint32_t qpn = qp_in_state(ROCEV2_QPS_INIT);
	struct rocev2_qp_attr a = good_attr(ROCEV2_QPS_RTR);
	struct rocev2_qp *qp = qp_of(qpn);

	(void)state;
	a.path_mtu = ROCEV2_MTU_4096;
	a.min_rnr_timer = 31;
	a.max_dest_rd_atomic = ROCEV2_MAX_RD_ATOMIC;
	a.dest_qp_num = 0xffffff;
	a.rq_psn = 0xffffffffu;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | REQ_RTR), 0);
	assert_int_equal(qp->mtu, 4096);
	assert_int_equal(qp->resp.psn, 0xffffff);
	a = good_attr(ROCEV2_QPS_RTS);
	a.timeout = 31;
	a.retry_cnt = 0;
	a.rnr_retry = 0;
	a.max_rd_atomic = ROCEV2_MAX_RD_ATOMIC;
	a.sq_psn = 0xff000001u;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | REQ_RTS), 0);
	assert_int_equal(qp->req.psn, 1);
	assert_int_equal(qp->comp.psn, 1);

	qpn = qp_in_state(ROCEV2_QPS_INIT);
	a = good_attr(ROCEV2_QPS_RTR);
	a.path_mtu = ROCEV2_MTU_256;
	a.max_dest_rd_atomic = 0;
	a.min_rnr_timer = 0;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | REQ_RTR), 0);
	assert_int_equal(qp_of(qpn)->mtu, 256);
}

/* ---- query and the stage state each transition sets up ------------------- */

static void test_query_returns_what_was_set(void **state)
{
	uint32_t qpn = make_qp();
	struct rocev2_qp *qp = qp_of(qpn);
	struct rocev2_qp_attr a = good_attr(ROCEV2_QPS_INIT), q;
	const struct rocev2_av av = { .dmac = { 1, 2, 3, 4, 5, 6 }, .ttl = 9, .tos = 0x20,
				      .dgid = MNIC_GID_V4(0xc0a80102) };

	(void)state;
	a.qp_access_flags = ROCEV2_ACCESS_REMOTE_READ | ROCEV2_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | REQ_INIT), 0);
	a = good_attr(ROCEV2_QPS_RTR);
	a.path_mtu = ROCEV2_MTU_2048;
	a.dest_qp_num = 0xabcdef;
	a.rq_psn = 0x12345678;                  /* 24 bits kept */
	a.min_rnr_timer = 17;
	a.max_dest_rd_atomic = 9;
	a.av = av;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | REQ_RTR), 0);
	assert_int_equal(qp->resp.psn, 0x345678);
	assert_int_equal(qp->mtu, 2048);
	a = good_attr(ROCEV2_QPS_RTS);
	a.sq_psn = 0xfedcba98;
	a.timeout = 19;
	a.retry_cnt = 5;
	a.rnr_retry = 3;
	a.max_rd_atomic = 11;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | REQ_RTS), 0);
	assert_int_equal(qp->req.psn, 0xdcba98);
	assert_int_equal(qp->comp.psn, 0xdcba98);
	assert_int_equal(qp->comp.retry_cnt, 5);
	assert_int_equal(qp->comp.rnr_retry, 3);

	memset(&q, 0xcc, sizeof(q));
	assert_int_equal(rocev2_query_qp(e, qpn, &q), 0);
	assert_int_equal(q.qp_state, ROCEV2_QPS_RTS);
	assert_int_equal(q.cur_qp_state, ROCEV2_QPS_RTS);
	assert_int_equal(q.qp_access_flags, ROCEV2_ACCESS_REMOTE_READ | ROCEV2_ACCESS_REMOTE_ATOMIC);
	assert_int_equal(q.pkey_index, 0);
	assert_int_equal(q.path_mtu, ROCEV2_MTU_2048);
	assert_int_equal(q.dest_qp_num, 0xabcdef);
	assert_int_equal(q.rq_psn, 0x345678);
	assert_int_equal(q.sq_psn, 0xdcba98);
	assert_int_equal(q.min_rnr_timer, 17);
	assert_int_equal(q.max_dest_rd_atomic, 9);
	assert_int_equal(q.timeout, 19);
	assert_int_equal(q.retry_cnt, 5);
	assert_int_equal(q.rnr_retry, 3);
	assert_int_equal(q.max_rd_atomic, 11);
	assert_memory_equal(&q.av, &av, sizeof(av));

	/* sq_psn / rq_psn report where the engine is, not the value set. */
	qp->req.psn = 0x000777;
	qp->resp.psn = 0x000555;
	assert_int_equal(rocev2_query_qp(e, qpn, &q), 0);
	assert_int_equal(q.sq_psn, 0x777);
	assert_int_equal(q.rq_psn, 0x555);
	assert_int_equal(rocev2_query_qp(e, qpn, NULL), -HAL_EINVAL);
}

static void test_reset_to_init_resets_stages_and_queues(void **state)
{
	uint32_t qpn = make_qp();
	struct rocev2_qp *qp = qp_of(qpn);

	(void)state;
	qp->sq.ci = 5; qp->sq.pi = 9; qp->rq.ci = 3; qp->rq.pi = 4;
	DBL_SET(dbl_req_reset = dbl_comp_reset = dbl_resp_reset = 0);
	assert_int_equal(modify(qpn, ROCEV2_QPS_INIT, M(STATE) | REQ_INIT), 0);
	DBL_EQ(dbl_req_reset, 1);
	DBL_EQ(dbl_comp_reset, 1);
	DBL_EQ(dbl_resp_reset, 1);
	assert_int_equal(qp->sq.ci, 0);
	assert_int_equal(qp->sq.pi, 0);
	assert_int_equal(qp->rq.ci, 0);
	assert_int_equal(qp->rq.pi, 0);
	/* INIT -> INIT does not reset the stages again. */
	assert_int_equal(modify(qpn, ROCEV2_QPS_INIT, M(STATE) | M(ACCESS_FLAGS)), 0);
	DBL_EQ(dbl_req_reset + dbl_comp_reset + dbl_resp_reset, 3);
}

static unsigned timer_fired;
static void timer_cb(struct timer *t, void *arg)
{
	(void)t;
	(void)arg;
	timer_fired++;
}

static void arm_comp_timers(struct rocev2_qp *qp)
{
	timer_setup(&qp->comp.retrans_timer, timer_cb, qp);
	timer_setup(&qp->comp.rnr_timer, timer_cb, qp);
	assert_int_equal(timer_arm(&e->timers, &qp->comp.retrans_timer, 1000), 0);
	assert_int_equal(timer_arm(&e->timers, &qp->comp.rnr_timer, 2000), 0);
}

static void test_to_reset_cancels_timers_and_resets(void **state)
{
	unsigned from;

	(void)state;
	for (from = ROCEV2_QPS_INIT; from < ROCEV2_QPS_NUM; from++) {
		uint32_t other = qp_in_state(ROCEV2_QPS_RTS);
		uint32_t qpn = qp_in_state(from);
		struct rocev2_qp *qp = qp_of(qpn);

		arm_comp_timers(qp_of(other));
		arm_comp_timers(qp);
		qp->sq.ci = qp->sq.pi = 7;
		qp->stopped = qp->paused = 1;
		assert_int_equal(e->timers.n, 4);
		DBL_SET(dbl_req_reset = dbl_comp_reset = dbl_resp_reset = 0);
		assert_int_equal(modify(qpn, ROCEV2_QPS_RESET, M(STATE)), 0);
		assert_int_equal(state_of(qpn), ROCEV2_QPS_RESET);
		assert_false(timer_armed(&qp->comp.retrans_timer));
		assert_false(timer_armed(&qp->comp.rnr_timer));
		assert_int_equal(e->timers.n, 2);          /* the other QP's stay */
		DBL_EQ(dbl_req_reset, 1);
		DBL_EQ(dbl_comp_reset, 1);
		DBL_EQ(dbl_resp_reset, 1);
		assert_int_equal(qp->sq.ci, 0);
		assert_int_equal(qp->sq.pi, 0);
		assert_int_equal(qp->stopped + qp->paused, 0);
		timer_fired = 0;
		assert_int_equal(rocev2_run_timers(e, 5000), 2);
		assert_int_equal(timer_fired, 2);
		/* A reset QP starts over. */
		assert_int_equal(modify(qpn, ROCEV2_QPS_INIT, M(STATE) | REQ_INIT), 0);
		finish(qpn);
		finish(other);
	}
}

static void test_modify_to_error_flushes_without_event(void **state)
{
	unsigned from;
	struct rocev2_event ev;

	(void)state;
	for (from = 0; from < ROCEV2_QPS_NUM; from++) {
		uint32_t qpn = qp_in_state(from);
		struct rocev2_qp *qp = qp_of(qpn);

		arm_comp_timers(qp);
		DBL_SET(dbl_req_flush = dbl_resp_flush = 0);
		DBL_SET(dbl_flush_state = 0xff);
		assert_int_equal(modify(qpn, ROCEV2_QPS_ERR, M(STATE)), 0);
		assert_int_equal(state_of(qpn), ROCEV2_QPS_ERR);
		DBL_EQ(dbl_req_flush, 1);
		DBL_EQ(dbl_resp_flush, 1);
		DBL_EQ(dbl_flush_state, ROCEV2_QPS_ERR);
		assert_false(timer_armed(&qp->comp.retrans_timer));
		assert_false(timer_armed(&qp->comp.rnr_timer));
		assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
		finish(qpn);
	}
	assert_int_equal(e->timers.n, 0);
}

static void test_qp_to_error_posts_event_once(void **state)
{
	uint32_t qpn = qp_in_state(ROCEV2_QPS_RTS);
	struct rocev2_qp *qp = qp_of(qpn);
	struct rocev2_event ev;

	(void)state;
	DBL_SET(dbl_req_flush = dbl_resp_flush = 0);
	rocev2_qp_to_error(e, qp, ROCEV2_EVENT_QP_FATAL);
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_int_equal(state_of(qpn), ROCEV2_QPS_ERR);
	DBL_EQ(dbl_req_flush, 1);
	DBL_EQ(dbl_resp_flush, 1);
	assert_int_equal(rocev2_get_event(e, 0, &ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_QP_FATAL);
	assert_int_equal(ev.handle, qpn);
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);

	/* Already in error: flushed again, no second event. */
	rocev2_qp_to_error(e, qp, ROCEV2_EVENT_QP_ACCESS_ERR);
	DBL_EQ(dbl_req_flush, 2);
	DBL_EQ(dbl_resp_flush, 2);
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);

	/* event < 0: none. */
	qpn = qp_in_state(ROCEV2_QPS_RTR);
	rocev2_qp_to_error(e, qp_of(qpn), -1);
	assert_int_equal(state_of(qpn), ROCEV2_QPS_ERR);
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
	qpn = qp_in_state(ROCEV2_QPS_RTR);
	rocev2_qp_to_error(e, qp_of(qpn), ROCEV2_EVENT_QP_REQ_ERR);
	assert_int_equal(rocev2_get_event(e, 0, &ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_QP_REQ_ERR);
	assert_int_equal(ev.handle, qpn);
}

static void test_rts_entry_schedules_requester(void **state)
{
	uint32_t qpn = qp_in_state(ROCEV2_QPS_RTR);
	struct rocev2_qp *qp = qp_of(qpn);

	(void)state;
	assert_null(e->sched_head);
	assert_int_equal(modify(qpn, ROCEV2_QPS_RTS, M(STATE) | REQ_RTS), 0);
	assert_ptr_equal(e->sched_head, qp);
	assert_int_equal(rocev2_poll(e, 64), 0);
	DBL_EQ(dbl_req_run, 1);
	assert_int_equal(modify(qpn, ROCEV2_QPS_SQD, M(STATE)), 0);
	assert_null(e->sched_head);
	assert_int_equal(modify(qpn, ROCEV2_QPS_RTS, M(STATE)), 0);     /* SQD -> RTS */
	assert_ptr_equal(e->sched_head, qp);
}

static void test_sqd_modify_in_place(void **state)
{
	uint32_t qpn = qp_in_state(ROCEV2_QPS_SQD);
	struct rocev2_qp *qp = qp_of(qpn);
	struct rocev2_qp_attr a = good_attr(ROCEV2_QPS_SQD);

	(void)state;
	a.retry_cnt = 2;
	a.rnr_retry = 1;
	a.timeout = 3;
	rocev2_av_set_ipv4(&a.av, 0x0a0000fe);
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | M(RETRY_CNT) | M(RNR_RETRY) |
					  M(TIMEOUT) | M(AV)), 0);
	assert_int_equal(qp->comp.retry_cnt, 2);
	assert_int_equal(qp->comp.rnr_retry, 1);
	assert_int_equal(qp->attr.timeout, 3);
	assert_int_equal(rocev2_av_ipv4(&qp->attr.av), 0x0a0000fe);
	assert_int_equal(state_of(qpn), ROCEV2_QPS_SQD);
	/* Not changeable while only drained: PSNs, MTU, destination QP. */
	assert_modify_refused(qpn, &a, M(STATE) | M(SQ_PSN));
	assert_modify_refused(qpn, &a, M(STATE) | M(PATH_MTU));
	assert_modify_refused(qpn, &a, M(STATE) | M(DEST_QPN));
}

/* ---- destroy: references, timers, scheduler ------------------------------ */

static void test_destroy_unlinks_from_scheduler(void **state)
{
	uint32_t a = qp_in_state(ROCEV2_QPS_RTS), b = qp_in_state(ROCEV2_QPS_RTS);
	uint32_t c = qp_in_state(ROCEV2_QPS_RTS), d;
	struct rocev2_qp *qa = qp_of(a), *qc = qp_of(c), *qd;

	(void)state;
	/* All three are queued (RTS entry); take out the middle one. */
	assert_ptr_equal(e->sched_head, qa);
	assert_ptr_equal(e->sched_tail, qc);
	arm_comp_timers(qp_of(b));
	assert_int_equal(rocev2_destroy_qp(e, b), 0);
	assert_int_equal(e->timers.n, 0);
	assert_ptr_equal(e->sched_head, qa);
	assert_ptr_equal(qa->sched_next, qc);
	assert_ptr_equal(e->sched_tail, qc);
	/* The tail. */
	assert_int_equal(rocev2_destroy_qp(e, c), 0);
	assert_ptr_equal(e->sched_head, qa);
	assert_null(qa->sched_next);
	assert_ptr_equal(e->sched_tail, qa);
	/* A new QP reusing a freed slot is queued behind a. */
	d = qp_in_state(ROCEV2_QPS_RTS);
	qd = qp_of(d);
	assert_ptr_equal(qa->sched_next, qd);
	assert_ptr_equal(e->sched_tail, qd);
	/* The head. */
	assert_int_equal(rocev2_destroy_qp(e, a), 0);
	assert_ptr_equal(e->sched_head, qd);
	assert_ptr_equal(e->sched_tail, qd);
	DBL_SET(dbl_req_run = 0);
	assert_int_equal(rocev2_poll(e, 64), 0);
	DBL_EQ(dbl_req_run, 1);
	assert_int_equal(rocev2_destroy_qp(e, d), 0);
	assert_null(e->sched_head);
	assert_null(e->sched_tail);
	assert_int_equal(e->n_qp, 0);
}

static void test_references_follow_qps(void **state)
{
	struct rocev2_qp_init_attr a = init_attr(0);
	struct rocev2_queue_attr cqa = { .ring_addr = 0x3000, .dbrec_addr = 0x180, .size = 4 };
	uint32_t cq2, pd2, q1, q2;

	(void)state;
	assert_int_equal(rocev2_create_cq(e, &cqa, &cq2), 0);
	assert_int_equal(rocev2_alloc_pd(e, &pd2), 0);
	a.pd = pd2;
	a.send_cq = cq2;
	a.srq = srq;
	a.rq.size = 0;
	assert_int_equal(rocev2_create_qp(e, &a, &q1), 0);
	a = init_attr(1);
	a.pd = pd2;
	assert_int_equal(rocev2_create_qp(e, &a, &q2), 0);
	assert_int_equal(e->pds[rocev2_handle_index(pd2)].refcnt, 2);
	assert_int_equal(e->cqs[rocev2_handle_index(cq2)].refcnt, 1);
	assert_int_equal(e->cqs[rocev2_handle_index(cq)].refcnt, 3);
	assert_int_equal(e->srqs[rocev2_handle_index(srq)].refcnt, 1);

	assert_int_equal(rocev2_destroy_cq(e, cq2), -HAL_EBUSY);
	assert_int_equal(rocev2_destroy_srq(e, srq), -HAL_EBUSY);
	assert_int_equal(rocev2_dealloc_pd(e, pd2), -HAL_EBUSY);
	assert_int_equal(rocev2_destroy_qp(e, q1), 0);
	assert_int_equal(rocev2_destroy_cq(e, cq2), 0);
	assert_int_equal(rocev2_destroy_srq(e, srq), 0);
	assert_int_equal(rocev2_dealloc_pd(e, pd2), -HAL_EBUSY);
	assert_int_equal(rocev2_destroy_cq(e, cq), -HAL_EBUSY);
	assert_int_equal(rocev2_destroy_qp(e, q2), 0);
	assert_int_equal(rocev2_dealloc_pd(e, pd2), 0);
	assert_int_equal(rocev2_destroy_cq(e, cq), 0);
	assert_int_equal(rocev2_dealloc_pd(e, pd), 0);
	assert_int_equal(e->n_pd + e->n_mr + e->n_cq + e->n_srq + e->n_qp, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_create_validation, setup),
		cmocka_unit_test_setup(test_create_sets_qpn_sport_state, setup),
		cmocka_unit_test_setup(test_lookup_hostile_qpns, setup),
		cmocka_unit_test_setup(test_pool_exhaust_stale_and_teardown, setup),
		cmocka_unit_test_setup(test_qpn_generation_wraps_past_zero, setup),
		cmocka_unit_test_setup(test_every_transition_pair, setup),
		cmocka_unit_test_setup(test_modify_without_state_bit, setup),
		cmocka_unit_test_setup(test_invalid_values_leave_qp_unchanged, setup),
		cmocka_unit_test_setup(test_unknown_mask_bits_refused, setup),
		cmocka_unit_test_setup(test_boundary_values_accepted, setup),
		cmocka_unit_test_setup(test_query_returns_what_was_set, setup),
		cmocka_unit_test_setup(test_reset_to_init_resets_stages_and_queues, setup),
		cmocka_unit_test_setup(test_to_reset_cancels_timers_and_resets, setup),
		cmocka_unit_test_setup(test_modify_to_error_flushes_without_event, setup),
		cmocka_unit_test_setup(test_qp_to_error_posts_event_once, setup),
		cmocka_unit_test_setup(test_rts_entry_schedules_requester, setup),
		cmocka_unit_test_setup(test_sqd_modify_in_place, setup),
		cmocka_unit_test_setup(test_destroy_unlinks_from_scheduler, setup),
		cmocka_unit_test_setup(test_references_follow_qps, setup),
	};
	return cmocka_run_group_tests_name("rocev2/qp", tests, NULL, NULL);
}
