/* rocev2 mtt.c: memory translation (issue 14).  The translation itself
 * (page boundaries, an unaligned IOVA start, a 1 GiB MR of 4 KiB pages),
 * the hostile page-list table (each refusal with its counter, nothing
 * written), and traffic between engines whose rings, CQs, doorbell
 * records and MRs all live in MTT-mapped pages that are not contiguous in
 * host memory: a WRITE over 3 pages, a READ response scattered across
 * pages, atomics at a page's last 8 bytes; then a migration onto a host
 * whose pages differ from the source's (the pages copied to another
 * layout, REFILL with rocev2_write_mtt, resume refused before it). */
#include "cmocka_main.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "dump.h"
#include "pool.h"

#define PAGE       4096u
#define WIN        (4u << 20)          /* each node's host memory */
#define HOST_PAGES (WIN / PAGE)
#define INBOX      64u

/* The application's IOVA layout (the same on every host: the process's
 * virtual addresses), one MTT of APP_PAGES pages over it. */
#define IOVA       0x7f3a12340000ull
#define APP_PAGES  64u
#define DBREC(k)   (IOVA + 8u * (k))   /* 0 SQ, 1 RQ, 2 CQ */
#define CQ_RING    (IOVA + 2u * PAGE)  /* 256 CQEs: 2 pages */
#define CQ_SIZE    256u
#define SQ_RING    (IOVA + 4u * PAGE)  /* 16 WQEs: 2 pages */
#define RQ_RING    (IOVA + 6u * PAGE)
#define WQ_SIZE    16u
#define BUF        (IOVA + 16u * PAGE) /* the MR: 48 pages */
#define BUF_LEN    (48u * PAGE)

struct node {
	struct rocev2 e;
	struct hal_dma dma;
	uint8_t mem[WIN];
	uint8_t mac[6];
	uint32_t ip;
	int alive;
	uint8_t inbox[INBOX][ROCEV2_TX_MAX];
	uint32_t inbox_len[INBOX], in_head, in_tail;
	uint32_t perm[APP_PAGES];       /* host page of each application page */
	uint32_t mtt, pd, cq, qpn, lkey;
	uint32_t sq_pi, rq_pi, cq_ci;
};

static struct node A, B, C;
static struct node *const nodes[] = { &A, &B, &C };
#define NNODES 3u
static uint64_t now = 1000000;
static uint8_t img[1u << 16];

static const uint8_t mig_key[16] = { 0x14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

static uint64_t t_now(void *ctx)
{
	(void)ctx;
	return now;
}

/* Frames go to the inbox of the node with the destination MAC (run()
 * delivers them, never from inside an engine's transmit). */
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
		memcpy(n->inbox[n->in_head % INBOX], frame, len);
		n->inbox_len[n->in_head % INBOX] = (uint32_t)len;
		n->in_head++;
	}
	return 0;
}

/* ---- the application's view: IOVAs through the node's own page layout ---- */
static uint64_t hpa(const struct node *n, uint64_t iova)
{
	uint64_t page = (iova - IOVA) / PAGE;

	assert_true(iova >= IOVA && page < APP_PAGES);
	return (uint64_t)n->perm[page] * PAGE + (iova % PAGE);
}

static void app_write(struct node *n, uint64_t iova, const void *src, size_t len)
{
	const uint8_t *s = src;

	while (len) {
		size_t chunk = PAGE - iova % PAGE;

		chunk = chunk < len ? chunk : len;
		memcpy(n->mem + hpa(n, iova), s, chunk);
		s += chunk;
		iova += chunk;
		len -= chunk;
	}
}

static void app_read(const struct node *n, uint64_t iova, void *dst, size_t len)
{
	uint8_t *d = dst;

	while (len) {
		size_t chunk = PAGE - iova % PAGE;

		chunk = chunk < len ? chunk : len;
		memcpy(d, n->mem + hpa(n, iova), chunk);
		d += chunk;
		iova += chunk;
		len -= chunk;
	}
}

static void app_put32(struct node *n, uint64_t iova, uint32_t v)
{
	app_write(n, iova, &v, sizeof(v));
}

/* Host page of application page i: a step coprime with HOST_PAGES, so
 * neighbours are never adjacent in host memory. */
static void set_layout(struct node *n, uint32_t step, uint32_t offset)
{
	uint32_t i;

	for (i = 0; i < APP_PAGES; i++)
		n->perm[i] = (i * step + offset) % HOST_PAGES;
}

static void write_layout(struct node *n)
{
	uint64_t pages[APP_PAGES];
	uint32_t i;

	for (i = 0; i < APP_PAGES; i++)
		pages[i] = (uint64_t)n->perm[i] * PAGE;
	/* In two chunks, as WRITE_MTT carries a list in several commands. */
	assert_int_equal(rocev2_write_mtt(&n->e, n->mtt, 0, pages, 40), 0);
	assert_int_equal(rocev2_write_mtt(&n->e, n->mtt, 40, pages + 40, APP_PAGES - 40), 0);
}

static void node_init(struct node *n, uint8_t last)
{
	struct rocev2_env env;

	memset(n->mem, 0, sizeof(n->mem));
	n->in_head = n->in_tail = 0;
	hal_dma_window_init(&n->dma, n->mem, WIN);
	memset(&env, 0, sizeof(env));
	env.tx = t_tx;
	env.now_ns = t_now;
	env.dma = &n->dma;
	n->mac[0] = 0x52; n->mac[1] = 0x54; n->mac[5] = last;
	n->ip = 0x0a000000u | last;
	memcpy(env.mac, n->mac, 6);
	env.ipv4 = n->ip;
	assert_int_equal(rocev2_init(&n->e, &env), 0);
	n->alive = 1;
	n->sq_pi = n->rq_pi = n->cq_ci = 0;
}

/* Everything of the application in its MTT: the MR, the CQ, the SQ and
 * RQ, the doorbell records. */
static void app_setup(struct node *n, uint32_t step, uint32_t offset)
{
	struct rocev2_mtt_attr ma = { .iova = IOVA, .length = APP_PAGES * PAGE, .page_shift = 12 };
	struct rocev2_queue_attr cq = { .ring_addr = CQ_RING, .dbrec_addr = DBREC(2), .size = CQ_SIZE };
	struct rocev2_qp_init_attr ia = {
		.srq = ROCEV2_NO_SRQ, .max_send_sge = 2, .max_recv_sge = 2,
		.sq = { .ring_addr = SQ_RING, .dbrec_addr = DBREC(0), .size = WQ_SIZE },
		.rq = { .ring_addr = RQ_RING, .dbrec_addr = DBREC(1), .size = WQ_SIZE },
	};
	uint32_t npages, rkey;

	set_layout(n, step, offset);
	assert_int_equal(rocev2_create_mtt(&n->e, &ma, &n->mtt, &npages), 0);
	assert_int_equal(npages, APP_PAGES);
	write_layout(n);
	cq.ring_mtt = cq.dbrec_mtt = n->mtt;
	ia.sq.ring_mtt = ia.sq.dbrec_mtt = ia.rq.ring_mtt = ia.rq.dbrec_mtt = n->mtt;
	assert_int_equal(rocev2_alloc_pd(&n->e, &n->pd), 0);
	assert_int_equal(rocev2_reg_mr_mtt(&n->e, n->pd, n->mtt, BUF, BUF_LEN, 15, &n->lkey, &rkey),
			 0);
	assert_int_equal(rocev2_create_cq(&n->e, &cq, &n->cq), 0);
	ia.pd = n->pd;
	ia.send_cq = ia.recv_cq = n->cq;
	assert_int_equal(rocev2_create_qp(&n->e, &ia, &n->qpn), 0);
}

static void qp_connect(struct node *n, const struct node *peer)
{
	struct rocev2_qp_attr at;

	memset(&at, 0, sizeof(at));
	at.qp_state = ROCEV2_QPS_INIT;
	at.qp_access_flags = 14;
	assert_int_equal(rocev2_modify_qp(&n->e, n->qpn, &at,
					  ROCEV2_QP_STATE | ROCEV2_QP_PKEY_INDEX | ROCEV2_QP_PORT |
						  ROCEV2_QP_ACCESS_FLAGS), 0);
	at.qp_state = ROCEV2_QPS_RTR;
	at.path_mtu = ROCEV2_MTU_1024;
	at.dest_qp_num = peer->qpn;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 1;
	memcpy(at.av.dmac, peer->mac, 6);
	rocev2_av_set_ipv4(&at.av, peer->ip);
	at.av.ttl = 64;
	assert_int_equal(rocev2_modify_qp(&n->e, n->qpn, &at,
					  ROCEV2_QP_STATE | ROCEV2_QP_AV | ROCEV2_QP_PATH_MTU |
						  ROCEV2_QP_DEST_QPN | ROCEV2_QP_RQ_PSN |
						  ROCEV2_QP_MAX_DEST_RD_ATOMIC | ROCEV2_QP_MIN_RNR_TIMER), 0);
	at.qp_state = ROCEV2_QPS_RTS;
	at.timeout = 8;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 4;
	assert_int_equal(rocev2_modify_qp(&n->e, n->qpn, &at,
					  ROCEV2_QP_STATE | ROCEV2_QP_SQ_PSN | ROCEV2_QP_TIMEOUT |
						  ROCEV2_QP_RETRY_CNT | ROCEV2_QP_RNR_RETRY |
						  ROCEV2_QP_MAX_QP_RD_ATOMIC), 0);
	assert_int_equal(rocev2_set_mig_key(&n->e, n->qpn, mig_key), 0);
}

static void post_send(struct node *n, const struct mnic_send_wqe *w)
{
	app_write(n, SQ_RING + (n->sq_pi % WQ_SIZE) * MNIC_WQE_SIZE, w, sizeof(*w));
	n->sq_pi++;
	app_put32(n, DBREC(0), n->sq_pi);
	assert_int_equal(rocev2_sq_doorbell(&n->e, n->qpn), 0);
}

static void post_recv(struct node *n, uint64_t addr, uint32_t len)
{
	struct mnic_recv_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = n->rq_pi;
	w.num_sge = 1;
	w.sge[0] = (struct mnic_sge){ addr, len, n->lkey };
	app_write(n, RQ_RING + (n->rq_pi % WQ_SIZE) * MNIC_WQE_SIZE, &w, sizeof(w));
	n->rq_pi++;
	app_put32(n, DBREC(1), n->rq_pi);
	assert_int_equal(rocev2_rq_doorbell(&n->e, n->qpn), 0);
}

static int poll_cq(struct node *n, struct mnic_cqe *c)
{
	app_read(n, CQ_RING + (n->cq_ci % CQ_SIZE) * MNIC_CQE_SIZE, c, sizeof(*c));
	if (c->owner != MNIC_CQE_OWNER(n->cq_ci, CQ_SIZE))
		return 0;
	n->cq_ci++;
	app_put32(n, DBREC(2), n->cq_ci);
	return 1;
}

static void run_round(void)
{
	unsigned i;

	for (i = 0; i < NNODES; i++)
		if (nodes[i]->alive)
			while (rocev2_poll(&nodes[i]->e, 64))
				;
	for (i = 0; i < NNODES; i++) {
		struct node *n = nodes[i];

		while (n->in_tail != n->in_head) {
			uint32_t k = n->in_tail++ % INBOX;

			if (n->alive)
				rocev2_rx(&n->e, n->inbox[k], n->inbox_len[k]);
		}
	}
	for (i = 0; i < NNODES; i++)
		if (nodes[i]->alive)
			rocev2_run_timers(&nodes[i]->e, now);
	now += 20000;
}

/* Run until n has a completion: it is returned, successful. */
static void wait_cqe(struct node *n, struct mnic_cqe *c)
{
	unsigned r;

	for (r = 0; r < 20000; r++) {
		if (poll_cq(n, c)) {
			assert_int_equal(c->status, MNIC_WC_SUCCESS);
			return;
		}
		run_round();
	}
	fail_msg("no completion");
}

static uint8_t pat(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 29u + i * 7u + (i >> 9));
}

static int setup(void **state)
{
	(void)state;
	node_init(&A, 1);
	node_init(&B, 2);
	node_init(&C, 3);
	C.alive = 0;
	app_setup(&A, 5, 11);
	app_setup(&B, 7, 3);
	qp_connect(&A, &B);
	qp_connect(&B, &A);
	return 0;
}

/* ---- translation ---------------------------------------------------------- */

/* An IOVA range that starts and ends inside pages: chunks stop at every
 * page end, the first at the first page's, the range's ends are exact. */
static void test_page_boundaries(void **state)
{
	struct rocev2 *e = &A.e;
	const uint64_t iova = 0x10000800u, len = 3u * PAGE;
	struct rocev2_mtt_attr ma = { .iova = iova, .length = len, .page_shift = 12 };
	const uint64_t pages[4] = { 0x3000, 0x0000, 0x7000, 0x2000 };
	uint64_t h, chunk, faults;
	uint32_t m, n;
	uint8_t buf[PAGE + 16], back[PAGE + 16];
	unsigned i;

	(void)state;
	assert_int_equal(rocev2_create_mtt(e, &ma, &m, &n), 0);
	assert_int_equal(n, 4);         /* 0x800 .. 0x37ff: four pages touched */
	assert_int_equal(rocev2_write_mtt(e, m, 0, pages, 4), 0);
	assert_int_equal(rocev2_mtt_xlate(e, m, iova, len, &h, &chunk), 0);
	assert_int_equal(h, 0x3800);
	assert_int_equal(chunk, 0x800);
	assert_int_equal(rocev2_mtt_xlate(e, m, iova + 0x7ff, 2, &h, &chunk), 0);
	assert_int_equal(h, 0x3fff);
	assert_int_equal(chunk, 1);     /* the last byte of the page, then translate again */
	assert_int_equal(rocev2_mtt_xlate(e, m, iova + 0x800, len - 0x800, &h, &chunk), 0);
	assert_int_equal(h, 0x0000);
	assert_int_equal(chunk, PAGE);
	assert_int_equal(rocev2_mtt_xlate(e, m, iova + len - 1, 1, &h, &chunk), 0);
	assert_int_equal(h, 0x27ff);
	assert_int_equal(chunk, 1);
	faults = e->cnt.xlate_faults;
	assert_int_equal(rocev2_mtt_xlate(e, m, iova + len, 1, &h, &chunk), -HAL_EFAULT);
	assert_int_equal(rocev2_mtt_xlate(e, m, iova - 1, 1, &h, &chunk), -HAL_EFAULT);
	assert_int_equal(rocev2_mtt_xlate(e, m, iova + 1, len, &h, &chunk), -HAL_EFAULT);
	assert_int_equal(rocev2_mtt_xlate(e, m, UINT64_MAX, 2, &h, &chunk), -HAL_EFAULT);
	assert_int_equal(e->cnt.xlate_faults, faults + 4);

	/* A copy over a page boundary lands on two unrelated host pages. */
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = pat(1, i);
	assert_int_equal(rocev2_host_write(e, m, iova + 0x7f8, buf, sizeof(buf)), 0);
	assert_memory_equal(A.mem + 0x3ff8, buf, 8);
	assert_memory_equal(A.mem + 0x0000, buf + 8, PAGE);
	assert_memory_equal(A.mem + 0x7000, buf + 8 + PAGE, 8);
	assert_int_equal(rocev2_host_read(e, m, iova + 0x7f8, back, sizeof(back)), 0);
	assert_memory_equal(back, buf, sizeof(back));
}

/* 1 GiB of 4 KiB pages: 262144 entries, written in 512-entry chunks
 * (aliasing 64 host pages, backwards); the last byte and a write over
 * the boundary of two far-apart pages translate. */
static void test_1gib_mr(void **state)
{
	struct rocev2 *e = &A.e;
	const uint64_t iova = 0x7e0000000000ull, len = 1ull << 30;
	struct rocev2_mtt_attr ma = { .iova = iova, .length = len, .page_shift = 12 };
	static uint64_t chunk_pages[512];
	uint32_t m, n, first, i, lkey, rkey;
	uint64_t h, c, va;
	uint8_t b[16];

	(void)state;
	assert_int_equal(rocev2_create_mtt(e, &ma, &m, &n), 0);
	assert_int_equal(n, 262144);
	for (first = 0; first < n; first += 512) {
		for (i = 0; i < 512; i++)
			chunk_pages[i] = (uint64_t)(512u + 63u - (first + i) % 64u) * PAGE;
		/* Not yet fully written: no MR on it. */
		assert_int_equal(rocev2_reg_mr_mtt(e, A.pd, m, iova, len, 1, &lkey, &rkey),
				 -HAL_EAGAIN);
		assert_int_equal(rocev2_write_mtt(e, m, first, chunk_pages, 512), 0);
	}
	assert_int_equal(rocev2_reg_mr_mtt(e, A.pd, m, iova, len, 1, &lkey, &rkey), 0);
	assert_int_equal(rocev2_mtt_xlate(e, m, iova + len - 1, 1, &h, &c), 0);
	assert_int_equal(h, (512u + 63u - (262143u % 64u)) * PAGE + PAGE - 1);
	va = iova + 100000ull * PAGE - 8;          /* pages 99999 | 100000 */
	memset(b, 0x5c, sizeof(b));
	assert_int_equal(rocev2_mem_write(e, rkey, va, b, sizeof(b)), 0);
	assert_memory_equal(A.mem + (512u + 63u - 99999u % 64u) * PAGE + PAGE - 8, b, 8);
	assert_memory_equal(A.mem + (512u + 63u - 100000u % 64u) * PAGE, b + 8, 8);
	assert_int_equal(rocev2_dereg_mr(e, lkey), 0);
	assert_int_equal(rocev2_destroy_mtt(e, m), 0);
}

/* First fit: a freed run is reused from its start. */
static void test_pool_first_fit(void **state)
{
	struct rocev2 *e = &A.e;
	struct rocev2_mtt_attr ma = { .iova = 0, .length = 10u * PAGE, .page_shift = 12 };
	struct rocev2_device_info info;
	uint32_t m1, m2, m3, n, free0;

	(void)state;
	rocev2_query_device(e, &info);
	free0 = info.mtt_pages_free;
	assert_int_equal(free0, ROCEV2_MTT_PAGES - APP_PAGES);
	assert_int_equal(rocev2_create_mtt(e, &ma, &m1, &n), 0);
	assert_int_equal(rocev2_create_mtt(e, &ma, &m2, &n), 0);
	assert_int_equal(e->mtts[rocev2_handle_index(m2)].first, APP_PAGES + 10u);
	assert_int_equal(rocev2_destroy_mtt(e, m1), 0);
	ma.length = 5u * PAGE;
	assert_int_equal(rocev2_create_mtt(e, &ma, &m3, &n), 0);
	assert_int_equal(e->mtts[rocev2_handle_index(m3)].first, APP_PAGES);
	assert_true(m3 != m1);                  /* the slot's generation moved on */
	assert_int_equal(rocev2_destroy_mtt(e, m1), -HAL_EINVAL);
	rocev2_query_device(e, &info);
	assert_int_equal(info.mtt_pages_free, free0 - 15u);
	assert_int_equal(info.objects[ROCEV2_OBJ_MTT], 3);
}

/* ---- hostile page lists ---------------------------------------------------- */

#define CNT(name) offsetof(struct rocev2_counters, name)
static uint64_t cnt_at(const struct rocev2 *e, size_t off)
{
	return *(const uint64_t *)(const void *)((const uint8_t *)&e->cnt + off);
}

/* rc as wanted, the counter one up, no other counter of mtt.c moved. */
static void refused_with(struct rocev2 *e, int rc, int want, size_t counter,
			 const struct rocev2_counters *before)
{
	static const size_t mtt_counters[] = {
		CNT(mtt_refused_shape), CNT(mtt_refused_nomem), CNT(mtt_refused_range),
		CNT(mtt_refused_align), CNT(mtt_refused_page), CNT(mtt_refused_busy),
		CNT(mtt_refused_cover), CNT(mtt_refused_unwritten), CNT(mtt_resume_unwritten),
	};
	unsigned i;

	assert_int_equal(rc, want);
	for (i = 0; i < sizeof(mtt_counters) / sizeof(mtt_counters[0]); i++) {
		size_t o = mtt_counters[i];
		uint64_t was = *(const uint64_t *)(const void *)((const uint8_t *)before + o);

		assert_int_equal(cnt_at(e, o), was + (o == counter));
	}
}

struct page_list_case {
	const char *what;
	uint32_t page_shift, first, count;
	uint64_t pages[4];
	int rc;
	size_t counter;
};

static const struct page_list_case page_cases[] = {
	{ "unaligned", 12, 0, 4, { 0x1000, 0x2000, 0x3001, 0x4000 }, -HAL_EINVAL,
	  CNT(mtt_refused_align) },
	{ "unaligned to 2 MiB", 21, 0, 1, { 0x1000 }, -HAL_EINVAL, CNT(mtt_refused_align) },
	{ "page at the aperture's end", 12, 0, 4, { 0, 0x1000, WIN, 0x2000 }, -HAL_EINVAL,
	  CNT(mtt_refused_page) },
	{ "4 MiB page past the end", 22, 0, 2, { 0, WIN }, -HAL_EINVAL, CNT(mtt_refused_page) },
	{ "page bigger than the aperture", 30, 0, 1, { 0 }, -HAL_EINVAL, CNT(mtt_refused_page) },
	{ "address that would wrap", 12, 0, 2, { 0, UINT64_MAX & ~0xfffull }, -HAL_EINVAL,
	  CNT(mtt_refused_page) },
	{ "far past the aperture", 12, 0, 1, { 1ull << 44 }, -HAL_EINVAL, CNT(mtt_refused_page) },
	{ "first past npages", 12, 4, 1, { 0 }, -HAL_ERANGE, CNT(mtt_refused_range) },
	{ "first + count past npages", 12, 2, 3, { 0, 0, 0 }, -HAL_ERANGE,
	  CNT(mtt_refused_range) },
	{ "count overflow", 12, 1, UINT32_MAX, { 0 }, -HAL_ERANGE, CNT(mtt_refused_range) },
};

/* Each list refused with its counter, and nothing of it written: the MTT
 * stays unwritten (no entry translates). */
static void test_hostile_page_lists(void **state)
{
	struct rocev2 *e = &A.e;
	struct rocev2_counters before;
	uint64_t h, c;
	uint32_t m, n;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(page_cases) / sizeof(page_cases[0]); i++) {
		const struct page_list_case *t = &page_cases[i];
		struct rocev2_mtt_attr ma = { .iova = 1ull << 30, .page_shift = t->page_shift };

		ma.length = 4ull << t->page_shift;
		assert_int_equal(rocev2_create_mtt(e, &ma, &m, &n), 0);
		assert_int_equal(n, 4);
		before = e->cnt;
		print_message("%s\n", t->what);
		refused_with(e, rocev2_write_mtt(e, m, t->first, t->pages, t->count), t->rc,
			     t->counter, &before);
		assert_int_equal(e->mtts[rocev2_handle_index(m)].written, 0);
		assert_int_equal(rocev2_mtt_xlate(e, m, 1ull << 30, 1, &h, &c), -HAL_EFAULT);
		assert_int_equal(rocev2_destroy_mtt(e, m), 0);
	}
	/* The last page that fits, exactly, is accepted. */
	{
		struct rocev2_mtt_attr ma = { .iova = 0, .length = PAGE, .page_shift = 12 };
		const uint64_t last = WIN - PAGE;

		assert_int_equal(rocev2_create_mtt(e, &ma, &m, &n), 0);
		assert_int_equal(rocev2_write_mtt(e, m, 0, &last, 1), 0);
		assert_int_equal(rocev2_destroy_mtt(e, m), 0);
	}
}

static void test_hostile_shapes(void **state)
{
	struct rocev2 *e = &A.e;
	struct rocev2_counters before;
	struct rocev2_mtt_attr ma = { .iova = 0, .length = PAGE, .page_shift = 11 };
	uint32_t m, n, objects = e->n_mtt;

	(void)state;
	before = e->cnt;
	refused_with(e, rocev2_create_mtt(e, &ma, &m, &n), -HAL_EINVAL, CNT(mtt_refused_shape),
		     &before);
	ma.page_shift = 31;
	before = e->cnt;
	refused_with(e, rocev2_create_mtt(e, &ma, &m, &n), -HAL_EINVAL, CNT(mtt_refused_shape),
		     &before);
	ma = (struct rocev2_mtt_attr){ .iova = 0x1000, .length = 0, .page_shift = 12 };
	before = e->cnt;
	refused_with(e, rocev2_create_mtt(e, &ma, &m, &n), -HAL_EINVAL, CNT(mtt_refused_shape),
		     &before);
	ma = (struct rocev2_mtt_attr){ .iova = UINT64_MAX - 10, .length = 100, .page_shift = 12 };
	before = e->cnt;
	refused_with(e, rocev2_create_mtt(e, &ma, &m, &n), -HAL_EINVAL, CNT(mtt_refused_shape),
		     &before);
	/* More pages than the pool (the count computed without overflow). */
	ma = (struct rocev2_mtt_attr){ .iova = 0, .length = UINT64_MAX, .page_shift = 12 };
	before = e->cnt;
	refused_with(e, rocev2_create_mtt(e, &ma, &m, &n), -HAL_ENOMEM, CNT(mtt_refused_nomem),
		     &before);
	ma.length = (uint64_t)(ROCEV2_MTT_PAGES - APP_PAGES + 1u) * PAGE;
	before = e->cnt;
	refused_with(e, rocev2_create_mtt(e, &ma, &m, &n), -HAL_ENOMEM, CNT(mtt_refused_nomem),
		     &before);
	assert_int_equal(e->n_mtt, objects);
}

/* Objects on an MTT: inside its range, fully written, same owner; it
 * cannot go away or change under them unless the context is Stopped. */
static void test_hostile_uses(void **state)
{
	struct rocev2 *e = &A.e;
	struct rocev2_counters before;
	struct rocev2_mtt_attr ma = { .iova = 0x40000, .length = 4u * PAGE, .page_shift = 12 };
	const uint64_t pages[4] = { 0x9000, 0x5000, 0x8000, 0x6000 };
	struct rocev2_queue_attr q = { .ring_addr = 0x40000, .dbrec_addr = 0x43ff8, .size = 256 };
	uint32_t m, n, lk, rk, cq, mrs = e->n_mr, cqs = e->n_cq;
	size_t len;

	(void)state;
	assert_int_equal(rocev2_create_mtt(e, &ma, &m, &n), 0);
	/* Not fully written. */
	assert_int_equal(rocev2_write_mtt(e, m, 0, pages, 3), 0);
	before = e->cnt;
	refused_with(e, rocev2_reg_mr_mtt(e, A.pd, m, 0x40000, PAGE, 1, &lk, &rk), -HAL_EAGAIN,
		     CNT(mtt_refused_unwritten), &before);
	q.ring_mtt = q.dbrec_mtt = m;
	before = e->cnt;
	refused_with(e, rocev2_create_cq(e, &q, &cq), -HAL_EAGAIN, CNT(mtt_refused_unwritten),
		     &before);
	assert_int_equal(rocev2_write_mtt(e, m, 3, pages + 3, 1), 0);
	/* Length not covered: before, after, past the end by one byte. */
	before = e->cnt;
	refused_with(e, rocev2_reg_mr_mtt(e, A.pd, m, 0x3ffff, 2, 1, &lk, &rk), -HAL_EFAULT,
		     CNT(mtt_refused_cover), &before);
	before = e->cnt;
	refused_with(e, rocev2_reg_mr_mtt(e, A.pd, m, 0x40001, 4u * PAGE, 1, &lk, &rk),
		     -HAL_EFAULT, CNT(mtt_refused_cover), &before);
	before = e->cnt;
	refused_with(e, rocev2_reg_mr_mtt(e, A.pd, m, 0x40000, UINT64_MAX, 1, &lk, &rk),
		     -HAL_EFAULT, CNT(mtt_refused_cover), &before);
	q.dbrec_addr = 0x44000;         /* the doorbell record just past it */
	before = e->cnt;
	refused_with(e, rocev2_create_cq(e, &q, &cq), -HAL_EFAULT, CNT(mtt_refused_cover), &before);
	q.dbrec_addr = 0x43ff8;
	q.size = 1024;                  /* a 32 KiB ring: past the end */
	before = e->cnt;
	refused_with(e, rocev2_create_cq(e, &q, &cq), -HAL_EFAULT, CNT(mtt_refused_cover), &before);
	q.size = 256;
	/* No such MTT, and another owner's. */
	before = e->cnt;
	refused_with(e, rocev2_reg_mr_mtt(e, A.pd, m + 0x10000u, 0x40000, PAGE, 1, &lk, &rk),
		     -HAL_EINVAL, CNT(mtt_refused_cover), &before);
	assert_int_equal(rocev2_create_as(e, 3), 0);
	before = e->cnt;
	refused_with(e, rocev2_create_cq(e, &q, &cq), -HAL_EINVAL, CNT(mtt_refused_cover), &before);
	assert_int_equal(rocev2_create_as(e, 0), 0);
	assert_int_equal(e->n_mr, mrs);
	assert_int_equal(e->n_cq, cqs);

	/* In use: no destroy, no rewrite while the context runs. */
	assert_int_equal(rocev2_reg_mr_mtt(e, A.pd, m, 0x40000, PAGE, 1, &lk, &rk), 0);
	assert_int_equal(rocev2_create_cq(e, &q, &cq), 0);
	before = e->cnt;
	refused_with(e, rocev2_destroy_mtt(e, m), -HAL_EBUSY, CNT(mtt_refused_busy), &before);
	before = e->cnt;
	refused_with(e, rocev2_write_mtt(e, m, 0, pages + 1, 1), -HAL_EBUSY, CNT(mtt_refused_busy),
		     &before);
	assert_int_equal(e->mtt_pages[e->mtts[rocev2_handle_index(m)].first], 0x9u);
	/* Stopped (a dump): the REFILL is allowed. */
	assert_int_equal(rocev2_dump_context(e, NULL, img, sizeof(img), &len, NULL), 0);
	assert_int_equal(rocev2_write_mtt(e, m, 0, pages + 1, 1), 0);
	assert_int_equal(e->mtt_pages[e->mtts[rocev2_handle_index(m)].first], 0x5u);
	assert_int_equal(rocev2_abort_dump(e, 0), 0);
	assert_int_equal(rocev2_destroy_cq(e, cq), 0);
	before = e->cnt;
	refused_with(e, rocev2_destroy_mtt(e, m), -HAL_EBUSY, CNT(mtt_refused_busy), &before);
	assert_int_equal(rocev2_dereg_mr(e, lk), 0);
	assert_int_equal(rocev2_destroy_mtt(e, m), 0);
}

/* The end of a context takes its MTTs and their entries with it. */
static void test_destroy_owned(void **state)
{
	struct rocev2_device_info info;
	uint32_t o[ROCEV2_OBJ_LIVE_NUM], owner;

	(void)state;
	rocev2_owner_objects(&B.e, 0, o);
	assert_int_equal(o[ROCEV2_OBJ_MTT], 1);
	assert_int_equal(rocev2_obj_owner(&B.e, ROCEV2_OBJ_MTT, B.mtt, &owner), 0);
	assert_int_equal(owner, 0);
	assert_int_equal(rocev2_obj_live(&B.e, ROCEV2_OBJ_MTT, B.mtt), 1);
	assert_int_equal(rocev2_destroy_owned(&B.e, 0), 0);
	rocev2_query_device(&B.e, &info);
	assert_int_equal(info.objects[ROCEV2_OBJ_MTT], 0);
	assert_int_equal(info.mtt_pages_free, ROCEV2_MTT_PAGES);
	assert_int_equal(rocev2_obj_live(&B.e, ROCEV2_OBJ_MTT, B.mtt), 0);
}

/* ---- traffic through translation --------------------------------------------- */

/* The rings themselves span non-contiguous host pages. */
static void test_rings_span_pages(void **state)
{
	(void)state;
	assert_int_not_equal(hpa(&A, SQ_RING + PAGE), hpa(&A, SQ_RING) + PAGE);
	assert_int_not_equal(hpa(&B, CQ_RING + PAGE), hpa(&B, CQ_RING) + PAGE);
	/* 20 SENDs wrap B's RQ and A's SQ (16 entries: both pages of each). */
	for (uint32_t i = 0; i < 20; i++) {
		struct mnic_send_wqe w;
		struct mnic_cqe c;
		uint8_t m[300], got[300];
		uint32_t k;

		for (k = 0; k < sizeof(m); k++)
			m[k] = pat(i, k);
		app_write(&A, BUF + i * 300u, m, sizeof(m));
		post_recv(&B, BUF + PAGE - 100u + i * 8u, sizeof(m));
		memset(&w, 0, sizeof(w));
		w.wr_id = i;
		w.opcode = MNIC_WR_SEND;
		w.send_flags = MNIC_SEND_SIGNALED;
		w.num_sge = 1;
		w.sge[0] = (struct mnic_sge){ BUF + i * 300u, sizeof(m), A.lkey };
		post_send(&A, &w);
		wait_cqe(&B, &c);
		assert_int_equal(c.opcode, MNIC_WC_RECV);
		assert_int_equal(c.byte_len, sizeof(m));
		app_read(&B, BUF + PAGE - 100u + i * 8u, got, sizeof(got));
		assert_memory_equal(got, m, sizeof(m));
		wait_cqe(&A, &c);
		assert_int_equal(c.wr_id, i);
	}
}

/* RDMA WRITE into 3 pages of B that are not neighbours in its memory. */
static void write_3_pages(struct node *dst, uint32_t seed)
{
	const uint64_t at = BUF + 3u * PAGE + 50u;      /* pages 19, 20, 21 */
	const uint32_t len = 2u * PAGE + 100u;
	static uint8_t m[2u * PAGE + 100u], got[2u * PAGE + 100u];
	struct mnic_send_wqe w;
	struct mnic_cqe c;
	uint32_t k;

	for (k = 0; k < len; k++)
		m[k] = pat(seed, k);
	app_write(&A, BUF, m, len);
	memset(&w, 0, sizeof(w));
	w.wr_id = 100;
	w.opcode = MNIC_WR_RDMA_WRITE;
	w.send_flags = MNIC_SEND_SIGNALED;
	w.num_sge = 1;
	w.remote_addr = at;
	w.rkey = dst->lkey;
	w.sge[0] = (struct mnic_sge){ BUF, len, A.lkey };
	post_send(&A, &w);
	wait_cqe(&A, &c);
	assert_int_equal(c.opcode, MNIC_WC_RDMA_WRITE);
	/* Three host pages, each with its part. */
	assert_memory_equal(dst->mem + hpa(dst, at), m, PAGE - 50u);
	assert_memory_equal(dst->mem + hpa(dst, at + PAGE - 50u), m + PAGE - 50u, PAGE);
	assert_memory_equal(dst->mem + hpa(dst, at + 2u * PAGE - 50u), m + 2u * PAGE - 50u, 150u);
	app_read(dst, at, got, len);
	assert_memory_equal(got, m, len);
}

static void test_write_spans_3_pages(void **state)
{
	(void)state;
	write_3_pages(&B, 7);
}

/* RDMA READ of 3 pages of B at an odd offset: every 1 KiB response packet
 * that crosses a page is read from two host pages, and scattered into A's
 * non-contiguous pages. */
static void read_scattered(struct node *src, uint32_t seed)
{
	const uint64_t from = BUF + 30u * PAGE + 333u, to = BUF + 8u * PAGE + 999u;
	const uint32_t len = 3u * PAGE;
	static uint8_t m[3u * PAGE], got[3u * PAGE];
	struct mnic_send_wqe w;
	struct mnic_cqe c;
	uint32_t k;

	for (k = 0; k < len; k++)
		m[k] = pat(seed, k);
	app_write(src, from, m, len);
	memset(&w, 0, sizeof(w));
	w.wr_id = 200;
	w.opcode = MNIC_WR_RDMA_READ;
	w.send_flags = MNIC_SEND_SIGNALED;
	w.num_sge = 1;
	w.remote_addr = from;
	w.rkey = src->lkey;
	w.sge[0] = (struct mnic_sge){ to, len, A.lkey };
	post_send(&A, &w);
	wait_cqe(&A, &c);
	assert_int_equal(c.opcode, MNIC_WC_RDMA_READ);
	assert_int_equal(c.byte_len, len);
	app_read(&A, to, got, len);
	assert_memory_equal(got, m, len);
}

static void test_read_response_scattered(void **state)
{
	(void)state;
	read_scattered(&B, 9);
}

/* FETCH_ADD and CMP_SWAP on the last 8 bytes of a page: the word is in
 * that host page, the next page (elsewhere) untouched. */
static void atomics_at_page_end(struct node *dst)
{
	const uint64_t word = BUF + 11u * PAGE - 8u, result = BUF + 2u * PAGE;
	uint64_t v = 0x1122334455667788ull, got;
	uint8_t next[8], next0[8];
	struct mnic_send_wqe w;
	struct mnic_cqe c;

	app_write(dst, word, &v, 8);
	app_read(dst, word + 8u, next0, 8);
	memset(&w, 0, sizeof(w));
	w.opcode = MNIC_WR_ATOMIC_FETCH_AND_ADD;
	w.send_flags = MNIC_SEND_SIGNALED;
	w.num_sge = 1;
	w.remote_addr = word;
	w.rkey = dst->lkey;
	w.compare_add = 0x10;
	w.sge[0] = (struct mnic_sge){ result, 8, A.lkey };
	post_send(&A, &w);
	wait_cqe(&A, &c);
	assert_int_equal(c.opcode, MNIC_WC_FETCH_ADD);
	app_read(&A, result, &got, 8);
	assert_int_equal(got, v);
	memcpy(&got, dst->mem + hpa(dst, word), 8);
	assert_int_equal(got, v + 0x10);
	w.opcode = MNIC_WR_ATOMIC_CMP_AND_SWP;
	w.compare_add = v + 0x10;
	w.swap = 0xcafef00dull;
	post_send(&A, &w);
	wait_cqe(&A, &c);
	assert_int_equal(c.opcode, MNIC_WC_COMP_SWAP);
	app_read(&A, result, &got, 8);
	assert_int_equal(got, v + 0x10);
	memcpy(&got, dst->mem + hpa(dst, word), 8);
	assert_int_equal(got, 0xcafef00dull);
	app_read(dst, word + 8u, next, 8);
	assert_memory_equal(next, next0, 8);
}

static void test_atomics_at_page_end(void **state)
{
	(void)state;
	atomics_at_page_end(&B);
}

/* ---- migration onto other pages ----------------------------------------------- */

/* B's context moves to C, whose host puts the application's pages
 * elsewhere: the image carries the MTT's shape only; C refills it. */
static void test_migrate_to_other_pages(void **state)
{
	struct rocev2_image_iter it;
	struct rocev2_record r;
	struct rocev2_host_range g[ROCEV2_RECORD_MAX_RANGES];
	struct mnic_send_wqe w;
	struct mnic_cqe c;
	uint8_t msg[700], got[700];
	uint64_t pages[APP_PAGES];
	size_t len;
	uint32_t i, mtt_records = 0, taken;

	(void)state;
	write_3_pages(&B, 1);
	post_recv(&B, BUF + 5u * PAGE - 300u, sizeof(msg));     /* taken on C */
	assert_int_equal(rocev2_dump_context(&B.e, NULL, img, sizeof(img), &len, NULL), 0);
	/* The MTT record has no page in it, and no record names host memory. */
	rocev2_image_iter_init(&it, img, len);
	while (rocev2_image_next(&it, &r) > 0) {
		mtt_records += r.type == ROCEV2_OBJ_MTT;
		if (r.type == ROCEV2_OBJ_MTT)
			assert_int_equal(r.len, ROCEV2_DUMP_MTT_LEN);
		assert_int_equal(rocev2_record_host_ranges(r.type, r.payload, r.len, g,
							   ROCEV2_RECORD_MAX_RANGES), 0);
	}
	assert_int_equal(mtt_records, 1);
	B.alive = 0;

	/* C's host: the same IOVAs on other pages (CRIU restores the
	 * process's memory at its virtual addresses, on new frames). */
	C.alive = 1;
	set_layout(&C, 13, 100);
	for (i = 0; i < APP_PAGES; i++) {
		assert_int_not_equal(C.perm[i], B.perm[i]);
		memcpy(C.mem + (size_t)C.perm[i] * PAGE, B.mem + (size_t)B.perm[i] * PAGE, PAGE);
	}
	C.mtt = B.mtt;
	C.pd = B.pd;
	C.cq = B.cq;
	C.qpn = B.qpn;
	C.lkey = B.lkey;
	C.sq_pi = B.sq_pi;
	C.rq_pi = B.rq_pi;
	C.cq_ci = B.cq_ci;
	/* A restore that fails after its MTT was made takes it back and
	 * leaves the context running, as it was. */
	assert_int_equal(rocev2_alloc_pd(&C.e, &taken), 0);
	assert_int_equal(taken, B.pd);
	assert_int_equal(rocev2_restore_image(&C.e, img, len, NULL), -HAL_EEXIST);
	assert_int_equal(C.e.n_mtt, 0);
	assert_int_equal(rocev2_context_stopped(&C.e, 0), 0);
	assert_int_equal(rocev2_dealloc_pd(&C.e, taken), 0);
	assert_int_equal(rocev2_restore_image(&C.e, img, len, NULL), 0);
	assert_int_equal(rocev2_obj_live(&C.e, ROCEV2_OBJ_MTT, C.mtt), 1);
	assert_int_equal(C.e.mtts[rocev2_handle_index(C.mtt)].written, 0);
	/* Not refilled: no resume. */
	assert_int_equal(rocev2_resume_context(&C.e, 0), -HAL_EAGAIN);
	assert_int_equal(C.e.cnt.mtt_resume_unwritten, 1);
	assert_int_equal(rocev2_qp_lookup(&C.e, C.qpn)->stopped, 1);
	for (i = 0; i < APP_PAGES; i++)
		pages[i] = (uint64_t)C.perm[i] * PAGE;
	assert_int_equal(rocev2_write_mtt(&C.e, C.mtt, 0, pages, APP_PAGES / 2), 0);
	assert_int_equal(rocev2_resume_context(&C.e, 0), -HAL_EAGAIN);
	assert_int_equal(C.e.cnt.mtt_resume_unwritten, 2);
	assert_int_equal(rocev2_write_mtt(&C.e, C.mtt, APP_PAGES / 2, pages + APP_PAGES / 2,
					  APP_PAGES / 2), 0);
	assert_int_equal(rocev2_resume_context(&C.e, 0), 0);
	/* Running again: the MTT is in use and the context not Stopped. */
	assert_int_equal(rocev2_write_mtt(&C.e, C.mtt, 0, pages, 1), -HAL_EBUSY);

	/* Traffic to C through its own pages: the data written before is
	 * there, a SEND lands in the receive posted on B, then a WRITE over
	 * 3 pages, a scattered READ and atomics at a page's end. */
	app_read(&C, BUF + 3u * PAGE + 50u, got, 100);
	for (i = 0; i < 100; i++)
		assert_int_equal(got[i], pat(1, i));
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = pat(77, i);
	app_write(&A, BUF + 40u * PAGE, msg, sizeof(msg));
	memset(&w, 0, sizeof(w));
	w.wr_id = 300;
	w.opcode = MNIC_WR_SEND;
	w.send_flags = MNIC_SEND_SIGNALED;
	w.num_sge = 1;
	w.sge[0] = (struct mnic_sge){ BUF + 40u * PAGE, sizeof(msg), A.lkey };
	post_send(&A, &w);
	wait_cqe(&A, &c);
	assert_int_equal(c.wr_id, 300);
	wait_cqe(&C, &c);
	assert_int_equal(c.opcode, MNIC_WC_RECV);
	assert_int_equal(c.byte_len, sizeof(msg));
	app_read(&C, BUF + 5u * PAGE - 300u, got, sizeof(got));
	assert_memory_equal(got, msg, sizeof(msg));
	write_3_pages(&C, 2);
	read_scattered(&C, 3);
	atomics_at_page_end(&C);
	assert_int_equal(C.e.cnt.xlate_faults, 0);
	assert_int_equal(A.e.cnt.xlate_faults, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_page_boundaries, setup),
		cmocka_unit_test_setup(test_1gib_mr, setup),
		cmocka_unit_test_setup(test_pool_first_fit, setup),
		cmocka_unit_test_setup(test_hostile_page_lists, setup),
		cmocka_unit_test_setup(test_hostile_shapes, setup),
		cmocka_unit_test_setup(test_hostile_uses, setup),
		cmocka_unit_test_setup(test_destroy_owned, setup),
		cmocka_unit_test_setup(test_rings_span_pages, setup),
		cmocka_unit_test_setup(test_write_spans_3_pages, setup),
		cmocka_unit_test_setup(test_read_response_scattered, setup),
		cmocka_unit_test_setup(test_atomics_at_page_end, setup),
		cmocka_unit_test_setup(test_migrate_to_other_pages, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
