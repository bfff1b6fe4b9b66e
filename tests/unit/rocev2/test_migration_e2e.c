/* Live migration end to end, in one process: engines A and B stream SENDs
 * (sequence-numbered, pattern-checked) and FETCH_ADDs (A on a word in B's
 * memory) both ways on several QPs through an in-process switch that
 * drops frames at a fixed rate.  Mid-stream B's context is dumped, its host
 * memory copied to C (as CRIU moves a container's memory), the image
 * restored on C, which has another MAC and IPv4 address, and resumed.  B
 * disappears from the wire.  The traffic must finish with nothing lost,
 * duplicated or reordered, no error completion anywhere, and every atomic
 * executed exactly once (the final counter equals the sum of the adds).
 *
 * Variants: both ends at once (A -> D and B -> C, with peer-address
 * overrides), abort instead of migrate (B continues in place), a
 * restore that never happens (A's QPs must error out after the pause
 * timeout), and tenancy: an unrelated application pair X (on B) <-> Y (on
 * C) in other contexts keeps its traffic through B's dump and the restore
 * onto C, its QPs never Stopped, Paused or resuming. */
#include "cmocka_main.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NQP       4u
#define MSGS      400u         /* per QP per direction */
#define APPWIN    (2u << 20)  /* host memory of one application */
#define WIN       (2u * APPWIN)  /* two applications per node (tenancy) */
#define SSLOTS    16u          /* send buffers per QP (< 8 in flight) */
#define RSLOTS    32u          /* receive buffers per QP (RING / 2 posted) */
#define RING      64u
#define MAXLEN    3000u
#define DROP_PPM  20000u       /* 2 % */

/* Host memory layout of an application from its base (the same on every
 * engine; C inherits B's by copy). */
#define CQ_RING(a)   ((a)->base + 0x00000u)
#define CQ_DB(a)     ((a)->base + 0x08000u)
#define SQ_RING(a, q) ((a)->base + 0x10000u + (q) * 0x10000u)
#define RQ_RING(a, q) ((a)->base + 0x10000u + (q) * 0x10000u + 0x8000u)
#define SQ_DB(a, q)  ((a)->base + 0x08100u + (q) * 16u)
#define RQ_DB(a, q)  ((a)->base + 0x08108u + (q) * 16u)
#define BUF(a, q, i) ((a)->base + 0x60000u + ((q) * SSLOTS + (i) % SSLOTS) * 4096u)
#define RBUF(a, q, i) ((a)->base + 0xa0000u + ((q) * RSLOTS + (i) % RSLOTS) * 4096u)
#define WORD(a, q)   ((a)->base + 0x08200u + (q) * 8u)

#define INBOX 512u

struct node {
	struct rocev2 e;
	uint8_t (*inbox)[ROCEV2_TX_MAX];
	uint32_t inbox_len[INBOX], in_head, in_tail;
	struct hal_dma dma;
	uint8_t mem[WIN];
	uint8_t mac[6];
	uint32_t ip;
	int alive;
};

/* The "application" of each side: it moves with the host memory, so it
 * is kept per side (A, or B-then-C), not per engine. */
struct app {
	struct node *n;
	uint32_t base;                  /* of its host memory in the node's window */
	uint32_t pd, cq, lkey, qpn[NQP];
	uint32_t sq_pi[NQP], rq_pi[NQP], cq_ci;
	uint32_t sent[NQP], done[NQP], recvd[NQP];
	uint64_t fadd_expect[NQP], fadd_total[NQP];
	uint32_t errors, errs[NQP];
};

static struct node A, B, C, D;
static struct app appA, appB;
static struct app appX, appY;   /* tenancy: the unrelated pair, when with_xy */
static int with_xy;
static uint32_t xy_disturbed;   /* rounds where a QP of X or Y was not running freely */
static uint64_t now = 1000000;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static struct node *const nodes[] = { &A, &B, &C, &D };
#define NNODES 4u

static uint64_t t_now(void *ctx)
{
	(void)ctx;
	return now;
}

/* In-process L2 switch: queue by destination MAC (delivered later by
 * run(), never re-entering an engine from its own transmit), drop
 * DROP_PPM, and a full inbox pushes back like a full TX ring. */
static int t_tx(void *ctx, const void *frame, size_t len)
{
	unsigned i;

	(void)ctx;
	for (i = 0; i < NNODES; i++) {
		struct node *n = nodes[i];

		if (!n->alive || memcmp(frame, n->mac, 6) != 0)
			continue;
		if (n->in_head - n->in_tail >= INBOX)
			return -HAL_EAGAIN;
		if (rnd() % 1000000u < DROP_PPM)
			return 0;
		assert_true(len <= ROCEV2_TX_MAX);
		memcpy(n->inbox[n->in_head % INBOX], frame, len);
		n->inbox_len[n->in_head % INBOX] = (uint32_t)len;
		n->in_head++;
	}
	return 0;
}

static void deliver(struct node *n)
{
	while (n->in_tail != n->in_head) {
		uint32_t i = n->in_tail++ % INBOX;

		if (n->alive)
			rocev2_rx(&n->e, n->inbox[i], n->inbox_len[i]);
	}
}

static void node_init(struct node *n, uint8_t last)
{
	struct rocev2_env env;

	memset(n->mem, 0, sizeof(n->mem));
	if (!n->inbox)
		n->inbox = calloc(INBOX, ROCEV2_TX_MAX);
	n->in_head = n->in_tail = 0;
	hal_dma_window_init(&n->dma, n->mem, WIN);
	memset(&env, 0, sizeof(env));
	env.ctx = n;
	env.tx = t_tx;
	env.now_ns = t_now;
	env.dma = &n->dma;
	n->mac[0] = 0x52; n->mac[1] = 0x54; n->mac[5] = last;
	n->ip = 0x0a000000u | last;
	memcpy(env.mac, n->mac, 6);
	env.ipv4 = n->ip;
	assert_int_equal(rocev2_init(&n->e, &env), 0);
	n->alive = 1;
}

static void app_setup(struct app *a, struct node *n)
{
	struct rocev2_queue_attr cq = { .ring_addr = CQ_RING(a), .dbrec_addr = CQ_DB(a), .size = 1024 };
	uint32_t rkey, q;

	a->n = n;
	assert_int_equal(rocev2_alloc_pd(&n->e, &a->pd), 0);
	assert_int_equal(rocev2_reg_mr(&n->e, a->pd, a->base, APPWIN, 15, &a->lkey, &rkey), 0);
	assert_int_equal(rocev2_create_cq(&n->e, &cq, &a->cq), 0);
	for (q = 0; q < NQP; q++) {
		struct rocev2_qp_init_attr ia = {
			.pd = a->pd, .send_cq = a->cq, .recv_cq = a->cq, .srq = ROCEV2_NO_SRQ,
			.sq = { SQ_RING(a, q), SQ_DB(a, q), RING }, .rq = { RQ_RING(a, q), RQ_DB(a, q), RING },
			.max_send_sge = 1, .max_recv_sge = 1,
		};
		assert_int_equal(rocev2_create_qp(&n->e, &ia, &a->qpn[q]), 0);
	}
}

static const uint8_t mig_key[16] = { 0xe2, 0xe0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

static void qp_connect(struct app *a, const struct node *peer, const struct app *pa)
{
	uint32_t q;

	for (q = 0; q < NQP; q++) {
		struct rocev2_qp_attr at;

		memset(&at, 0, sizeof(at));
		at.qp_state = ROCEV2_QPS_INIT;
		at.qp_access_flags = 14;
		assert_int_equal(rocev2_modify_qp(&a->n->e, a->qpn[q], &at,
						  ROCEV2_QP_STATE | ROCEV2_QP_PKEY_INDEX |
							  ROCEV2_QP_PORT | ROCEV2_QP_ACCESS_FLAGS), 0);
		at.qp_state = ROCEV2_QPS_RTR;
		at.path_mtu = ROCEV2_MTU_1024;
		at.dest_qp_num = pa->qpn[q];
		at.rq_psn = 0xfffff0u + q;          /* wraps during the run */
		at.max_dest_rd_atomic = 4;
		at.min_rnr_timer = 1;
		memcpy(at.av.dmac, peer->mac, 6);
		rocev2_av_set_ipv4(&at.av, peer->ip);
		at.av.ttl = 64;
		assert_int_equal(rocev2_modify_qp(&a->n->e, a->qpn[q], &at,
						  ROCEV2_QP_STATE | ROCEV2_QP_AV | ROCEV2_QP_PATH_MTU |
							  ROCEV2_QP_DEST_QPN | ROCEV2_QP_RQ_PSN |
							  ROCEV2_QP_MAX_DEST_RD_ATOMIC |
							  ROCEV2_QP_MIN_RNR_TIMER), 0);
		at.qp_state = ROCEV2_QPS_RTS;
		at.sq_psn = 0xfffff0u + q;
		at.timeout = 8;                     /* ~1 ms */
		at.retry_cnt = 7;
		at.rnr_retry = 7;
		at.max_rd_atomic = 4;
		assert_int_equal(rocev2_modify_qp(&a->n->e, a->qpn[q], &at,
						  ROCEV2_QP_STATE | ROCEV2_QP_SQ_PSN | ROCEV2_QP_TIMEOUT |
							  ROCEV2_QP_RETRY_CNT | ROCEV2_QP_RNR_RETRY |
							  ROCEV2_QP_MAX_QP_RD_ATOMIC), 0);
		/* Keyed alike on both ends, as the tools connect: the RESUME
		 * and NAK_STOPPED of migrate.c are then authenticated. */
		assert_int_equal(rocev2_set_mig_key(&a->n->e, a->qpn[q], mig_key), 0);
	}
}

static uint8_t pat(uint32_t side, uint32_t q, uint32_t seq, uint32_t i)
{
	return (uint8_t)(side * 131u + q * 17u + seq * 7u + i * 3u + (i >> 8));
}

static uint32_t msg_len(uint32_t side, uint32_t q, uint32_t seq)
{
	return (side * 977u + q * 131u + seq * 2654435761u) % MAXLEN;
}

static void put32(struct app *a, uint32_t off, uint32_t v)
{
	memcpy(a->n->mem + off, &v, 4);
}

/* Post receives and the next operations (SEND, every fourth a FETCH_ADD
 * from A) within the ring. */
static void app_post(struct app *a, uint32_t side, struct app *peer)
{
	uint32_t q;

	for (q = 0; q < NQP; q++) {
		while (a->rq_pi[q] - a->recvd[q] < RING / 2) {
			struct mnic_recv_wqe *w = (void *)(a->n->mem + RQ_RING(a, q) +
							   (a->rq_pi[q] % RING) * MNIC_WQE_SIZE);

			memset(w, 0, sizeof(*w));
			w->wr_id = a->rq_pi[q];
			w->num_sge = 1;
			w->sge[0] = (struct mnic_sge){ RBUF(a, q, a->rq_pi[q]), 4096, a->lkey };
			a->rq_pi[q]++;
		}
		put32(a, RQ_DB(a, q), a->rq_pi[q]);
		rocev2_rq_doorbell(&a->n->e, a->qpn[q]);
		while (a->sent[q] < MSGS && a->sent[q] - a->done[q] < 8) {
			uint32_t seq = a->sent[q], len = msg_len(side, q, seq), i;
			struct mnic_send_wqe *w = (void *)(a->n->mem + SQ_RING(a, q) +
							   (a->sq_pi[q] % RING) * MNIC_WQE_SIZE);

			memset(w, 0, sizeof(*w));
			w->wr_id = seq;
			w->send_flags = MNIC_SEND_SIGNALED;
			w->num_sge = 1;
			if (side == 0 && seq % 4 == 3) {
				w->opcode = MNIC_WR_ATOMIC_FETCH_AND_ADD;
				w->remote_addr = WORD(peer, q);
				w->rkey = peer->lkey;
				w->compare_add = seq;
				w->sge[0] = (struct mnic_sge){ BUF(a, q, seq), 8, a->lkey };
			} else {
				w->opcode = MNIC_WR_SEND;
				for (i = 0; i < len; i++)
					a->n->mem[BUF(a, q, seq) + i] = pat(side, q, seq, i);
				w->sge[0] = (struct mnic_sge){ BUF(a, q, seq), len, a->lkey };
			}
			a->sq_pi[q]++;
			a->sent[q]++;
		}
		put32(a, SQ_DB(a, q), a->sq_pi[q]);
		rocev2_sq_doorbell(&a->n->e, a->qpn[q]);
	}
}

/* The number of SENDs the peer's sequence has produced up to seq. */
static int consumes_recv(uint32_t peer_side, uint32_t seq)
{
	return !(peer_side == 0 && seq % 4 == 3);
}

static void app_poll(struct app *a, uint32_t side)
{
	for (;;) {
		struct mnic_cqe c;
		uint32_t at = CQ_RING(a) + (a->cq_ci % 1024) * MNIC_CQE_SIZE, q;

		memcpy(&c, a->n->mem + at, sizeof(c));
		if (c.owner != MNIC_CQE_OWNER(a->cq_ci, 1024))
			break;
		a->cq_ci++;
		put32(a, CQ_DB(a), a->cq_ci);
		for (q = 0; q < NQP && a->qpn[q] != c.qp_num; q++)
			;
		if (q == NQP || c.status != MNIC_WC_SUCCESS) {
			a->errors++;
			/* Send-side error completions (flushed receives say RECV). */
			if (q < NQP && c.opcode < MNIC_WC_RECV)
				a->errs[q]++;
			continue;
		}
		if (c.opcode == MNIC_WC_RECV) {
			/* The next SEND of the peer's sequence, in order, intact. */
			uint32_t seq = a->recvd[q], i, len;

			while (!consumes_recv(1 - side, seq))
				seq++;
			len = msg_len(1 - side, q, seq);
			if (c.byte_len != len)
				a->errors++;
			for (i = 0; i < len; i++)
				if (a->n->mem[RBUF(a, q, c.wr_id) + i] != pat(1 - side, q, seq, i)) {
					a->errors++;
					break;
				}
			a->recvd[q] = seq + 1;
		} else {
			if (c.wr_id != a->done[q])
				a->errors++;   /* completions out of order */
			if (c.opcode == MNIC_WC_FETCH_ADD) {
				uint64_t orig;

				memcpy(&orig, a->n->mem + BUF(a, q, c.wr_id), 8);
				if (orig != a->fadd_expect[q])
					a->errors++;
				a->fadd_expect[q] += c.wr_id;
				a->fadd_total[q] += c.wr_id;
			}
			a->done[q]++;
		}
	}
}

static int app_finished(const struct app *a, uint32_t side)
{
	uint32_t q, expect = 0, s;

	for (s = 0; s < MSGS; s++)
		expect += consumes_recv(1 - side, s);
	for (q = 0; q < NQP; q++) {
		uint32_t r = 0;

		for (s = 0; s < a->recvd[q]; s++)
			r += consumes_recv(1 - side, s);
		if (a->done[q] < MSGS || r < expect)
			return 0;
	}
	return 1;
}

static int all_finished(void)
{
	return app_finished(&appA, 0) && app_finished(&appB, 1) &&
	       (!with_xy || (app_finished(&appX, 0) && app_finished(&appY, 1)));
}

/* 1 when one of the app's QPs is Stopped, Paused or sending RESUME. */
static int app_disturbed(struct app *a)
{
	uint32_t q;

	for (q = 0; q < NQP; q++) {
		const struct rocev2_qp *qp = rocev2_qp_lookup(&a->n->e, a->qpn[q]);

		if (!qp || qp->stopped || qp->paused || qp->mig.resume_pending)
			return 1;
	}
	return 0;
}

/* Run the world until `until` or every app finishes. */
static void run(uint64_t until)
{
	while (now < until && !all_finished()) {
		unsigned i;

		app_post(&appA, 0, &appB);
		app_post(&appB, 1, &appA);
		if (with_xy) {
			app_post(&appX, 0, &appY);
			app_post(&appY, 1, &appX);
		}
		for (i = 0; i < NNODES; i++) {
			unsigned rounds;

			if (!nodes[i]->alive)
				continue;
			for (rounds = 0; rounds < 64 && rocev2_poll(&nodes[i]->e, 256); rounds++)
				;
		}
		for (i = 0; i < NNODES; i++)
			deliver(nodes[i]);
		app_poll(&appA, 0);
		app_poll(&appB, 1);
		if (with_xy) {
			app_poll(&appX, 0);
			app_poll(&appY, 1);
			xy_disturbed += app_disturbed(&appX) | app_disturbed(&appY);
		}
		for (i = 0; i < NNODES; i++)
			rocev2_run_timers(&nodes[i]->e, now);
		now += 20000;   /* 20 us per round */
	}
}

static int setup(void **state)
{
	(void)state;
	node_init(&A, 1);
	node_init(&B, 2);
	node_init(&C, 3);
	node_init(&D, 4);
	C.alive = 0;
	D.alive = 0;
	memset(&appA, 0, sizeof(appA));
	memset(&appB, 0, sizeof(appB));
	with_xy = 0;
	app_setup(&appA, &A);
	app_setup(&appB, &B);
	qp_connect(&appA, &B, &appB);
	qp_connect(&appB, &A, &appA);
	return 0;
}

static void check_all_delivered(void)
{
	uint32_t q;
	uint64_t word;

	assert_true(app_finished(&appA, 0));
	assert_true(app_finished(&appB, 1));
	assert_int_equal(appA.errors, 0);
	assert_int_equal(appB.errors, 0);
	/* Every FETCH_ADD executed exactly once: B's words hold the sums. */
	for (q = 0; q < NQP; q++) {
		memcpy(&word, appB.n->mem + WORD(&appB, q), 8);
		assert_int_equal(word, appA.fadd_total[q]);
	}
}

/* B -> C mid-stream. */
static void test_migrate_mid_stream(void **state)
{
	static uint8_t img[256 * 1024];
	size_t len = 0;
	struct rocev2_dump_stats st;

	(void)state;
	run(now + 1000000);   /* part of the traffic */
	assert_false(app_finished(&appA, 0));
	assert_int_equal(rocev2_dump_context(&B.e, NULL, img, sizeof(img), &len, &st), 0);
	assert_true(len > 0);
	run(now + 2000000);   /* A gets NAK_STOPPED and pauses; B sends nothing */
	/* Checkpoint tool: the host memory of B's application moves to C. */
	memcpy(C.mem, B.mem, WIN);
	B.alive = 0;
	C.alive = 1;
	assert_int_equal(rocev2_restore_image(&C.e, img, len, NULL), 0);
	appB.n = &C;
	assert_int_equal(rocev2_resume_context(&C.e, 0), 0);
	run(now + 400000000);
	check_all_delivered();
	/* A now talks to C's address. */
	assert_memory_equal(rocev2_qp_lookup(&A.e, appA.qpn[0])->attr.av.dmac, C.mac, 6);
	assert_int_equal(rocev2_av_ipv4(&rocev2_qp_lookup(&A.e, appA.qpn[0])->attr.av), C.ip);
}

/* Both ends at once (MigrOS forbids it): A -> D and B -> C in the same
 * window; each restore overrides the peer's address with its new home. */
static void test_both_ends_at_once(void **state)
{
	static uint8_t imgA[256 * 1024], imgB[256 * 1024];
	size_t la = 0, lb = 0;
	struct rocev2_restore_opts oa, ob;

	(void)state;
	run(now + 1000000);
	assert_false(app_finished(&appA, 0));
	assert_int_equal(rocev2_dump_context(&A.e, NULL, imgA, sizeof(imgA), &la, NULL), 0);
	assert_int_equal(rocev2_dump_context(&B.e, NULL, imgB, sizeof(imgB), &lb, NULL), 0);
	run(now + 2000000);
	memcpy(D.mem, A.mem, WIN);
	memcpy(C.mem, B.mem, WIN);
	A.alive = B.alive = 0;
	C.alive = D.alive = 1;
	memset(&oa, 0, sizeof(oa));
	mnic_gid_from_ipv4(oa.old_dgid, B.ip);
	mnic_gid_from_ipv4(oa.new_dgid, C.ip);
	memcpy(oa.new_dmac, C.mac, 6);
	memset(&ob, 0, sizeof(ob));
	mnic_gid_from_ipv4(ob.old_dgid, A.ip);
	mnic_gid_from_ipv4(ob.new_dgid, D.ip);
	memcpy(ob.new_dmac, D.mac, 6);
	assert_int_equal(rocev2_restore_image(&D.e, imgA, la, &oa), 0);
	assert_int_equal(rocev2_restore_image(&C.e, imgB, lb, &ob), 0);
	appA.n = &D;
	appB.n = &C;
	assert_int_equal(rocev2_resume_context(&D.e, 0), 0);
	assert_int_equal(rocev2_resume_context(&C.e, 0), 0);
	run(now + 400000000);
	check_all_delivered();
	assert_int_equal(rocev2_av_ipv4(&rocev2_qp_lookup(&D.e, appA.qpn[0])->attr.av), C.ip);
	assert_int_equal(rocev2_av_ipv4(&rocev2_qp_lookup(&C.e, appB.qpn[0])->attr.av), D.ip);
}

/* Dump, then abort: B continues in place. */
static void test_abort_continues_in_place(void **state)
{
	static uint8_t img[256 * 1024];
	size_t len = 0;

	(void)state;
	run(now + 1000000);
	assert_false(app_finished(&appA, 0));
	assert_int_equal(rocev2_dump_context(&B.e, NULL, img, sizeof(img), &len, NULL), 0);
	run(now + 2000000);
	assert_int_equal(rocev2_abort_dump(&B.e, 0), 0);
	run(now + 400000000);
	check_all_delivered();
}

/* Dump, and no restore ever: A's QPs must not hang. */
static void test_no_restore_pause_timeout(void **state)
{
	static uint8_t img[256 * 1024];
	size_t len = 0;
	uint32_t q;

	(void)state;
	rocev2_set_pause_timeout(&A.e, 50000000);   /* 50 ms */
	run(now + 1000000);
	assert_false(app_finished(&appA, 0));
	assert_int_equal(rocev2_dump_context(&B.e, NULL, img, sizeof(img), &len, NULL), 0);
	run(now + 200000000);
	for (q = 0; q < NQP; q++)
		assert_int_equal(rocev2_qp_lookup(&A.e, appA.qpn[q])->state, ROCEV2_QPS_ERR);
	/* Every send WQE A posted completed: successfully before the stop, with
	 * an error status after it. Nothing hangs. */
	assert_true(appA.errors > 0);
	for (q = 0; q < NQP; q++)
		assert_int_equal(appA.done[q] + appA.errs[q], appA.sent[q]);
}

/* Tenancy (issue 13): B's application is context 1 of B, X context 2 of B
 * talking to Y, context 3 of C.  Dumping context 1 stops only it; the
 * restore onto C (as context 1 there) and its RESUME leave Y alone: X and
 * Y carry traffic through the whole migration, their QPs never Stopped,
 * Paused or resuming (a resume of every QP would make Y send RESUMEs that
 * a peer without the extension never answers). */
static void test_tenancy_unrelated_pair_never_pauses(void **state)
{
	static uint8_t img[256 * 1024];
	struct app hold;
	size_t len = 0;
	uint32_t q, x_done = 0, x_done_stopped = 0;

	(void)state;
	/* setup() made A <-> B in context 0 of each; start over with B's
	 * application in context 1, and X, Y in the other half of the memory. */
	node_init(&A, 1);
	node_init(&B, 2);
	node_init(&C, 3);
	memset(&appA, 0, sizeof(appA));
	memset(&appB, 0, sizeof(appB));
	app_setup(&appA, &A);
	assert_int_equal(rocev2_create_as(&B.e, 1), 0);
	app_setup(&appB, &B);
	assert_int_equal(rocev2_create_as(&B.e, 2), 0);
	memset(&appX, 0, sizeof(appX));
	appX.base = APPWIN;
	app_setup(&appX, &B);
	/* On C, Y must not take the slots B's image names (a restore keeps
	 * handles): hold them while Y is made, then give them back. */
	memset(&hold, 0, sizeof(hold));
	app_setup(&hold, &C);
	assert_int_equal(rocev2_create_as(&C.e, 3), 0);
	memset(&appY, 0, sizeof(appY));
	appY.base = APPWIN;
	app_setup(&appY, &C);
	assert_int_equal(rocev2_destroy_owned(&C.e, 0), 0);
	qp_connect(&appA, &B, &appB);
	qp_connect(&appB, &A, &appA);
	qp_connect(&appX, &C, &appY);
	qp_connect(&appY, &B, &appX);
	with_xy = 1;
	xy_disturbed = 0;

	run(now + 1000000);
	assert_false(app_finished(&appA, 0));
	assert_int_equal(rocev2_dump_context(&B.e, &(struct rocev2_dump_scope){ 1, 0, APPWIN }, img,
					     sizeof(img), &len, NULL), 0);
	assert_false(rocev2_context_stopped(&B.e, 2));
	for (q = 0; q < NQP; q++)
		x_done += appX.done[q];
	run(now + 2000000);    /* A pauses; X keeps going on the same NIC */
	for (q = 0; q < NQP; q++)
		x_done_stopped += appX.done[q];
	assert_true(x_done_stopped > x_done);
	/* Only context 1's memory moves; Y's on C stays where it is. */
	memcpy(C.mem, B.mem, APPWIN);
	assert_int_equal(rocev2_create_as(&C.e, 1), 0);
	assert_int_equal(rocev2_restore_image(&C.e, img, len, NULL), 0);
	appB.n = &C;
	/* B keeps serving X's traffic: only its context-1 QPs go quiet.  The
	 * wire delivers by MAC, so B's old application simply stops existing
	 * there once its context is gone. */
	assert_int_equal(rocev2_destroy_owned(&B.e, 1), 0);
	assert_int_equal(rocev2_resume_context(&C.e, 1), 0);
	/* Only the restored QPs resume: Y's send no RESUME, now or later. */
	assert_int_equal(app_disturbed(&appY), 0);
	run(now + 400000000);
	assert_int_equal(C.e.cnt.mig_resumes_sent, NQP);
	assert_int_equal(B.e.cnt.mig_pauses, 0);        /* X never paused */
	assert_int_equal(C.e.cnt.mig_pauses, 0);        /* nor Y */
	check_all_delivered();
	assert_true(app_finished(&appX, 0));
	assert_true(app_finished(&appY, 1));
	assert_int_equal(appX.errors, 0);
	assert_int_equal(appY.errors, 0);
	assert_int_equal(xy_disturbed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_migrate_mid_stream, setup),
		cmocka_unit_test_setup(test_both_ends_at_once, setup),
		cmocka_unit_test_setup(test_abort_continues_in_place, setup),
		cmocka_unit_test_setup(test_no_restore_pause_timeout, setup),
		cmocka_unit_test_setup(test_tenancy_unrelated_pair_never_pauses, setup),
	};
	return cmocka_run_group_tests_name("rocev2/migration end to end", tests, NULL, NULL);
}
