/* The migration image codec (rocev2/image.c, image_records.c, dump.c,
 * restore.c; docs/migration-image.md):
 *
 *   - CRC32C against its check value;
 *   - every object kind dumped from engine A and restored into a fresh
 *     engine B equals the original, member by member, with its original
 *     handle, key or QPN; B dumps to the same bytes; everything restored
 *     can be destroyed again down to no object at all;
 *   - QPs whose every dumped member holds a random (valid) value survive
 *     the round trip;
 *   - two engines (A and its peer P) exchange SENDs, WRITEs, READs and
 *     atomics on two QPs (one on an SRQ); A is dumped in the middle of the
 *     traffic, after every single delivered frame in turn (and at chosen
 *     moments: a reply, a SEND, a READ, a WRITE in progress, an RNR wait),
 *     restored into a third engine C with A's host memory, compared with
 *     A, and C finishes the traffic with P (resumed by hand, by the real
 *     rocev2_resume_context, or after P was paused by NAK_STOPPED): every
 *     completion and every byte as without the migration, every atomic
 *     executed once;
 *   - the parser refuses truncated images, any flipped bit, bad magic,
 *     version, flags, count, record length, type, record version, values,
 *     duplicates and dangling references, each with its own error and the
 *     engine untouched;
 *   - collisions (PD/CQ/SRQ handle, MRN, QPN) give -HAL_EEXIST and roll
 *     everything back (generations included);
 *   - the peer address override; ENOSPC; the statistics. */
#include "cmocka_main.h"

#include <stdio.h>
#include <string.h>

#include "dump.h"
#include "lib/crc32.h"
#include "internal.h"
#include "mnic/libmnic.h"
#include "pool.h"

/* ---- nodes: an engine, its host memory, its wire ----------------------- */
#define WIN (1u << 20)
#define NFRAMES 256u
#define FRAME_MAX 640u                  /* MTU 256 frames */

struct node {
	struct rocev2 e;
	uint8_t mem[WIN];
	struct hal_dma dma;
	uint8_t mac[6];
	uint32_t ip;
	uint32_t out_head, out_tail;    /* frames sent, not yet delivered */
	uint8_t out[NFRAMES][FRAME_MAX];
	size_t out_len[NFRAMES];
};

static struct node na, nb, nc, np;
static uint64_t now;

static int node_tx(void *ctx, const void *frame, size_t len)
{
	struct node *n = ctx;
	uint32_t slot;

	if (n->out_tail - n->out_head >= NFRAMES)
		return -HAL_EAGAIN;     /* the ring is full: the sender retries */
	assert_true(len <= FRAME_MAX);
	slot = n->out_tail++ % NFRAMES;
	memcpy(n->out[slot], frame, len);
	n->out_len[slot] = len;
	return 0;
}

static uint64_t node_now(void *ctx)
{
	(void)ctx;
	return now;
}

static void node_init(struct node *n, uint32_t ip, uint8_t id, uint64_t window)
{
	struct rocev2_env env = {
		.ctx = n, .tx = node_tx, .now_ns = node_now, 
		.dma = &n->dma, .ipv4 = ip,
	};
	const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, id };

	memcpy(n->mac, mac, 6);
	memcpy(env.mac, mac, 6);
	n->ip = ip;
	memset(n->mem, 0, sizeof(n->mem));
	hal_dma_window_init(&n->dma, n->mem, window);
	n->out_head = n->out_tail = 0;
	assert_int_equal(rocev2_init(&n->e, &env), 0);
}

static int setup(void **state)
{
	(void)state;
	now = 0;
	node_init(&na, 0x0a000001u, 1, WIN);
	node_init(&nb, 0x0a000001u, 1, WIN);
	return 0;
}

/* ---- image buffers ---------------------------------------------------- */
#define IMG_MAX 65536u
static uint8_t img[IMG_MAX], img2[IMG_MAX], bad[IMG_MAX];
static size_t img_len;
static struct rocev2 snap;              /* an engine before a refused restore */

static uint32_t le32(const uint8_t *p)
{
	return get_le32(p);
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Header fields after an edit: count, total = len, CRC. */
static void seal(uint8_t *b, size_t len, uint32_t count)
{
	put_le32(b + ROCEV2_DUMP_OFF_COUNT, count);
	put_le32(b + ROCEV2_DUMP_OFF_TOTAL, (uint32_t)len);
	put_le32(b + ROCEV2_DUMP_OFF_CRC,
		 crc32c(0, b + ROCEV2_DUMP_CRC_START, len - ROCEV2_DUMP_CRC_START));
}

static void reseal(uint8_t *b, size_t len)
{
	seal(b, len, le32(b + ROCEV2_DUMP_OFF_COUNT));
}

/* Offset of the nth record of this type (-1: none). */
static long find_rec(const uint8_t *b, size_t len, uint16_t type, unsigned nth)
{
	size_t pos = ROCEV2_DUMP_HDR_LEN;

	while (pos + ROCEV2_DUMP_REC_HDR_LEN <= len) {
		if (le16(b + pos) == type && nth-- == 0)
			return (long)pos;
		pos += le32(b + pos + 4);
	}
	return -1;
}

static void dump(struct node *n, uint8_t *buf, size_t *len, struct rocev2_dump_stats *st)
{
	assert_int_equal(rocev2_dump_context(&n->e, NULL, buf, IMG_MAX, len, st), 0);
	assert_true(*len >= ROCEV2_DUMP_HDR_LEN);
}

/* libmnic's own image parser (hostdrv/lib/image.c: mnicctl, the migration
 * sequence) reads what the engine writes: every record, with the type and
 * length the engine's iterator sees (a layout change on one side only is
 * caught here, not on a host). */
struct host_seen {
	uint32_t n, type[8];
	uint32_t off[64], len[64];
};

static int host_rec(const struct mnic_img_rec *r, const uint8_t *payload, void *arg)
{
	struct host_seen *h = arg;

	(void)payload;
	if (h->n < 64) {
		h->off[h->n] = r->offset;
		h->len[h->n] = r->len;
	}
	h->n++;
	if (r->type < 8)
		h->type[r->type]++;
	return 0;
}

static void host_parser_agrees(const uint8_t *buf, size_t len)
{
	struct rocev2_image_iter it;
	struct rocev2_record r;
	struct host_seen h;
	struct mnic_img_hdr hdr;
	char err[160] = "";
	uint32_t i = 0;

	memset(&h, 0, sizeof(h));
	if (mnic_img_parse(buf, len, &hdr, host_rec, &h, err, sizeof(err)) != 0)
		fail_msg("libmnic's image parser refuses the engine's image: %s", err);
	rocev2_image_iter_init(&it, buf, len);
	while (rocev2_image_next(&it, &r) > 0) {
		assert_true(i < h.n && i < 64);
		assert_int_equal(h.off[i] + ROCEV2_DUMP_REC_HDR_LEN, (uint32_t)(r.payload - buf));
		assert_int_equal(h.len[i], r.len + ROCEV2_DUMP_REC_HDR_LEN);
		i++;
	}
	assert_int_equal(i, h.n);
	assert_int_equal(hdr.total, len);
}

/* ---- comparing engines --------------------------------------------------- */
#define SAME(x, y, f)                                                                       \
	do {                                                                                \
		if ((uint64_t)(x)->f != (uint64_t)(y)->f)                                   \
			fail_msg("%s: 0x%llx != 0x%llx", #f, (unsigned long long)(x)->f,     \
				 (unsigned long long)(y)->f);                               \
	} while (0)

static uint32_t pd_h(const struct rocev2 *e, uint32_t i) { return rocev2_handle(e->pds[i].gen, i); }
static uint32_t cq_h(const struct rocev2 *e, uint32_t i) { return rocev2_handle(e->cqs[i].gen, i); }
static uint32_t srq_h(const struct rocev2 *e, uint32_t i)
{
	return i == ROCEV2_NO_SRQ ? ROCEV2_NO_SRQ : rocev2_handle(e->srqs[i].gen, i);
}

static void same_queue(const struct rocev2_queue_attr *a, const struct rocev2_queue_attr *b)
{
	SAME(a, b, ring_addr);
	SAME(a, b, dbrec_addr);
	SAME(a, b, size);
}

/* Every member the image carries, and what restore promises for the rest
 * (b is the restored QP). */
static void same_qp(const struct rocev2 *ea, const struct rocev2_qp *a, const struct rocev2 *eb,
		    const struct rocev2_qp *b)
{
	const struct rocev2_qp_attr *x = &a->attr, *y = &b->attr;
	const struct rocev2_resp *r = &a->resp, *s = &b->resp;
	uint32_t i, n;

	SAME(a, b, gen);
	SAME(a, b, qpn);
	SAME(a, b, state);
	assert_int_equal(pd_h(ea, a->pd), pd_h(eb, b->pd));
	assert_int_equal(cq_h(ea, a->scq), cq_h(eb, b->scq));
	assert_int_equal(cq_h(ea, a->rcq), cq_h(eb, b->rcq));
	assert_int_equal(srq_h(ea, a->srq), srq_h(eb, b->srq));
	same_queue(&a->sq.q, &b->sq.q);
	same_queue(&a->rq.q, &b->rq.q);
	SAME(a, b, sq.ci);
	SAME(a, b, sq.pi);
	SAME(a, b, rq.ci);
	SAME(a, b, rq.pi);
	SAME(a, b, max_send_sge);
	SAME(a, b, max_recv_sge);
	SAME(a, b, sq_sig_all);
	SAME(a, b, paused);
	SAME(a, b, sport);
	SAME(a, b, mtu);
	SAME(x, y, qp_state);
	SAME(x, y, path_mtu);
	SAME(x, y, qp_access_flags);
	SAME(x, y, rq_psn);
	SAME(x, y, sq_psn);
	SAME(x, y, dest_qp_num);
	assert_memory_equal(x->av.dmac, y->av.dmac, 6);
	SAME(x, y, av.ttl);
	SAME(x, y, av.tos);
	assert_memory_equal(x->av.dgid, y->av.dgid, 16);
	SAME(x, y, av.flow_label);
	SAME(x, y, av.sgid_index);
	SAME(x, y, timeout);
	SAME(x, y, retry_cnt);
	SAME(x, y, rnr_retry);
	SAME(x, y, min_rnr_timer);
	SAME(x, y, max_rd_atomic);
	SAME(x, y, max_dest_rd_atomic);
	SAME(x, y, pkey_index);

	SAME(a, b, req.state);
	SAME(a, b, req.opcode);
	SAME(a, b, req.need_retry);
	SAME(a, b, req.psn);
	SAME(a, b, req.wqe_index);
	SAME(a, b, req.offset);
	SAME(a, b, req.noack_pkts);
	SAME(a, b, req.rd_atomic_outstanding);
	SAME(a, b, req.started);
	SAME(a, b, req.err_pending);
	SAME(a, b, req.err_status);
	SAME(a, b, req.err_index);
	SAME(a, b, req.err_vendor);
	SAME(a, b, req.next_new);
	SAME(a, b, req.psn_hw);
	n = a->req.next_new - a->comp.wqe_index;
	assert_true(n <= ROCEV2_MAX_INFLIGHT_WQE);
	for (i = 0; i < n; i++) {
		uint32_t t = (a->comp.wqe_index + i) % ROCEV2_MAX_INFLIGHT_WQE;

		SAME(a, b, req.track[t].first_psn);
		SAME(a, b, req.track[t].last_psn);
		SAME(a, b, req.track[t].length);
		SAME(a, b, req.track[t].wr_opcode);
		SAME(a, b, req.track[t].send_flags);
		SAME(a, b, req.track[t].state);
	}

	SAME(a, b, comp.psn);
	SAME(a, b, comp.wqe_index);
	SAME(a, b, comp.opcode);
	SAME(a, b, comp.retry_cnt);
	SAME(a, b, comp.rnr_retry);
	SAME(a, b, comp.read_offset);
	SAME(a, b, comp.started_retry);
	SAME(a, b, comp.rnr_wait);
	SAME(a, b, comp.drained);

	SAME(r, s, psn);
	SAME(r, s, msn);
	SAME(r, s, opcode);
	SAME(r, s, sent_psn_nak);
	SAME(r, s, rwqe_valid);
	SAME(r, s, rwqe_offset);
	SAME(r, s, write_va);
	SAME(r, s, write_rkey);
	SAME(r, s, write_resid);
	SAME(r, s, write_length);
	SAME(r, s, res_head);
	SAME(r, s, res_pending);
	SAME(r, s, ack_psn);
	SAME(r, s, ack_psn_valid);
	SAME(r, s, ack_deferred);
	SAME(r, s, ack_syndrome);
	SAME(r, s, ack_deferred_psn);
	SAME(r, s, ack_deferred_msn);
	if (r->rwqe_valid) {
		SAME(r, s, rwqe.wr_id);
		SAME(r, s, rwqe.num_sge);
		SAME(r, s, rwqe_length);
		for (i = 0; i < r->rwqe.num_sge; i++) {
			SAME(r, s, rwqe.sge[i].addr);
			SAME(r, s, rwqe.sge[i].length);
			SAME(r, s, rwqe.sge[i].lkey);
		}
	}
	for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++) {
		SAME(r, s, res[i].type);
		if (!r->res[i].type)
			continue;
		SAME(r, s, res[i].replay);
		SAME(r, s, res[i].first_psn);
		SAME(r, s, res[i].last_psn);
		SAME(r, s, res[i].cur_psn);
		SAME(r, s, res[i].start_psn);
		SAME(r, s, res[i].va);
		SAME(r, s, res[i].va_org);
		SAME(r, s, res[i].rkey);
		SAME(r, s, res[i].resid);
		SAME(r, s, res[i].length);
		SAME(r, s, res[i].orig);
		SAME(r, s, res[i].msn);
		SAME(r, s, res[i].sending);
	}
	SAME(a, b, mig.has_key);
	SAME(a, b, mig.tx_epoch);
	SAME(a, b, mig.rx_epoch);
	if (a->mig.has_key) {
		assert_memory_equal(a->mig.tx_key, b->mig.tx_key, 16);
		assert_memory_equal(a->mig.rx_key, b->mig.rx_key, 16);
	}

	/* Restored: stopped, nothing loaded, armed or scheduled, timers set
	 * up as on a QP made by rocev2_create_qp. */
	assert_ptr_equal(b->comp.retrans_timer.fn, a->comp.retrans_timer.fn);
	assert_ptr_equal(b->comp.rnr_timer.fn, a->comp.rnr_timer.fn);
	assert_ptr_equal(b->mig.pause_timer.fn, a->mig.pause_timer.fn);
	assert_ptr_equal(b->mig.resume_timer.fn, a->mig.resume_timer.fn);
	assert_non_null(b->mig.resume_timer.fn);
	assert_ptr_equal(b->comp.retrans_timer.arg, eb);
	assert_int_equal(b->stopped, 1);
	assert_int_equal(b->req.wqe_loaded, 0);
	assert_int_equal(b->comp.wqe_loaded, 0);
	assert_int_equal(b->req.sq_pi, b->sq.pi);
	assert_false(timer_armed(&b->comp.retrans_timer));
	assert_false(timer_armed(&b->comp.rnr_timer));
	assert_false(timer_armed(&b->mig.pause_timer));
	assert_false(timer_armed(&b->mig.resume_timer));
	assert_int_equal(b->scheduled, 0);
	assert_int_equal(b->mig.resume_pending, 0);
}

/* Engine b holds exactly a's objects (QPs compared with same_qp). */
static void same_engine(const struct rocev2 *a, const struct rocev2 *b)
{
	uint32_t i;

	SAME(a, b, n_pd);
	SAME(a, b, n_mr);
	SAME(a, b, n_cq);
	SAME(a, b, n_srq);
	SAME(a, b, n_qp);
	for (i = 0; i < ROCEV2_MAX_PD; i++) {
		SAME(a, b, pds[i].in_use);
		if (!a->pds[i].in_use)
			continue;
		SAME(a, b, pds[i].gen);
		SAME(a, b, pds[i].refcnt);
	}
	for (i = 0; i < ROCEV2_MAX_MR; i++) {
		SAME(a, b, mrs[i].in_use);
		if (!a->mrs[i].in_use)
			continue;
		SAME(a, b, mrs[i].key);
		SAME(a, b, mrs[i].pd);
		SAME(a, b, mrs[i].access);
		SAME(a, b, mrs[i].addr);
		SAME(a, b, mrs[i].length);
		SAME(a, b, mrs[i].lkey);
		SAME(a, b, mrs[i].rkey);
	}
	for (i = 0; i < ROCEV2_MAX_CQ; i++) {
		SAME(a, b, cqs[i].in_use);
		if (!a->cqs[i].in_use)
			continue;
		SAME(a, b, cqs[i].gen);
		SAME(a, b, cqs[i].error);
		same_queue(&a->cqs[i].q, &b->cqs[i].q);
		SAME(a, b, cqs[i].pi);
		SAME(a, b, cqs[i].refcnt);
	}
	for (i = 0; i < ROCEV2_MAX_SRQ; i++) {
		SAME(a, b, srqs[i].in_use);
		if (!a->srqs[i].in_use)
			continue;
		SAME(a, b, srqs[i].gen);
		SAME(a, b, srqs[i].limit_armed);
		SAME(a, b, srqs[i].pd);
		SAME(a, b, srqs[i].max_sge);
		SAME(a, b, srqs[i].limit);
		same_queue(&a->srqs[i].wq.q, &b->srqs[i].wq.q);
		SAME(a, b, srqs[i].wq.ci);
		SAME(a, b, srqs[i].refcnt);
	}
	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		SAME(a, b, qps[i].in_use);
		if (a->qps[i].in_use)
			same_qp(a, &a->qps[i], b, &b->qps[i]);
	}
}

/* What a refused or rolled-back restore must leave as it was: which slots
 * are used, their generations (next handles), reference counts. */
static void same_pools(const struct rocev2 *a, const struct rocev2 *b)
{
	uint32_t i;

	SAME(a, b, n_pd);
	SAME(a, b, n_mr);
	SAME(a, b, n_cq);
	SAME(a, b, n_srq);
	SAME(a, b, n_qp);
	for (i = 0; i < ROCEV2_MAX_PD; i++) {
		SAME(a, b, pds[i].in_use);
		SAME(a, b, pds[i].gen);
		SAME(a, b, pds[i].refcnt);
	}
	for (i = 0; i < ROCEV2_MAX_MR; i++) {
		SAME(a, b, mrs[i].in_use);
		SAME(a, b, mrs[i].key);
	}
	for (i = 0; i < ROCEV2_MAX_CQ; i++) {
		SAME(a, b, cqs[i].in_use);
		SAME(a, b, cqs[i].gen);
		SAME(a, b, cqs[i].refcnt);
	}
	for (i = 0; i < ROCEV2_MAX_SRQ; i++) {
		SAME(a, b, srqs[i].in_use);
		SAME(a, b, srqs[i].gen);
		SAME(a, b, srqs[i].refcnt);
	}
	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		SAME(a, b, qps[i].in_use);
		SAME(a, b, qps[i].gen);
	}
	assert_int_equal(b->timers.n, a->timers.n);
	assert_null(b->sched_head);
}

/* Destroy everything: must work without -HAL_EBUSY and leave no object
 * (reference counts as if made by the verbs). */
static void destroy_all(struct rocev2 *e)
{
	uint32_t i;

	for (i = 0; i < ROCEV2_MAX_QP; i++)
		if (e->qps[i].in_use)
			assert_int_equal(rocev2_destroy_qp(e, e->qps[i].qpn), 0);
	for (i = 0; i < ROCEV2_MAX_SRQ; i++)
		if (e->srqs[i].in_use)
			assert_int_equal(rocev2_destroy_srq(e, srq_h(e, i)), 0);
	for (i = 0; i < ROCEV2_MAX_CQ; i++)
		if (e->cqs[i].in_use)
			assert_int_equal(rocev2_destroy_cq(e, cq_h(e, i)), 0);
	for (i = 0; i < ROCEV2_MAX_MR; i++)
		if (e->mrs[i].in_use)
			assert_int_equal(rocev2_dereg_mr(e, e->mrs[i].lkey), 0);
	for (i = 0; i < ROCEV2_MAX_PD; i++)
		if (e->pds[i].in_use)
			assert_int_equal(rocev2_dealloc_pd(e, pd_h(e, i)), 0);
	assert_int_equal(e->n_pd + e->n_mr + e->n_cq + e->n_srq + e->n_qp, 0);
}

/* ---- a context with every kind of object in every state ------------------- */
#define ACC_ALL (ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_WRITE | \
		 ROCEV2_ACCESS_REMOTE_READ | ROCEV2_ACCESS_REMOTE_ATOMIC)
#define M(a) ROCEV2_QP_##a

static void qp_modify(struct rocev2 *e, uint32_t qpn, unsigned to, uint32_t dip, uint32_t dqpn)
{
	struct rocev2_qp_attr a;
	const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, (uint8_t)dip };

	memset(&a, 0, sizeof(a));
	a.qp_state = ROCEV2_QPS_INIT;
	a.qp_access_flags = ACC_ALL;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | M(ACCESS_FLAGS) | M(PKEY_INDEX) |
							  M(PORT)), 0);
	if (to == ROCEV2_QPS_INIT)
		return;
	a.qp_state = ROCEV2_QPS_RTR;
	memcpy(a.av.dmac, dmac, 6);
	rocev2_av_set_ipv4(&a.av, dip);
	a.av.ttl = 64;
	a.av.tos = 0x28;
	a.path_mtu = ROCEV2_MTU_256;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0x100u + dqpn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) |
							  M(RQ_PSN) | M(MAX_DEST_RD_ATOMIC) |
							  M(MIN_RNR_TIMER)), 0);
	if (to == ROCEV2_QPS_RTR)
		return;
	a.qp_state = ROCEV2_QPS_RTS;
	a.sq_psn = 0xfffff0u;           /* wraps soon */
	a.timeout = 10;                 /* 4.2 ms */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | M(SQ_PSN) | M(TIMEOUT) |
							  M(RETRY_CNT) | M(RNR_RETRY) |
							  M(MAX_QP_RD_ATOMIC)), 0);
	if (to == ROCEV2_QPS_RTS)
		return;
	a.qp_state = (uint32_t)to;      /* SQD or ERR */
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE)), 0);
}

struct objs {
	uint32_t pd[3], lkey[4], cq[3], srq[2], qpn[8];
};

/* Generations above 1, slots left free in between, every QP state, QPs
 * on an SRQ, a migration key, a paused QP. */
static void make_objects(struct rocev2 *e, struct objs *o)
{
	struct rocev2_queue_attr q;
	struct rocev2_srq_attr sa;
	struct rocev2_qp_init_attr ia;
	uint32_t h, rk, i;
	static const uint8_t states[8] = {
		ROCEV2_QPS_RESET, ROCEV2_QPS_INIT, ROCEV2_QPS_RTR, ROCEV2_QPS_RTS,
		ROCEV2_QPS_SQD, ROCEV2_QPS_ERR, ROCEV2_QPS_RTS, ROCEV2_QPS_INIT,
	};

	for (i = 0; i < 4; i++) {       /* PD slot 0: generation 5 */
		assert_int_equal(rocev2_alloc_pd(e, &h), 0);
		assert_int_equal(rocev2_dealloc_pd(e, h), 0);
	}
	assert_int_equal(rocev2_alloc_pd(e, &o->pd[0]), 0);
	assert_int_equal(rocev2_alloc_pd(e, &h), 0);            /* slot 1, freed: a gap */
	assert_int_equal(rocev2_alloc_pd(e, &o->pd[1]), 0);
	assert_int_equal(rocev2_alloc_pd(e, &o->pd[2]), 0);
	assert_int_equal(rocev2_dealloc_pd(e, h), 0);

	assert_int_equal(rocev2_reg_mr(e, o->pd[0], 0, WIN, ACC_ALL, &o->lkey[0], &rk), 0);
	assert_int_equal(rocev2_reg_mr(e, o->pd[0], 0x1000, 0x2000, ROCEV2_ACCESS_LOCAL_WRITE,
				       &h, &rk), 0);
	assert_int_equal(rocev2_dereg_mr(e, h), 0);             /* slot 1 again: key 2 */
	assert_int_equal(rocev2_reg_mr(e, o->pd[1], 0x3000, 0x100, ROCEV2_ACCESS_REMOTE_READ,
				       &o->lkey[1], &rk), 0);
	assert_int_equal(rocev2_reg_mr(e, o->pd[2], 0x12345, 0xabcd, 0, &h, &rk), 0);
	assert_int_equal(rocev2_reg_mr(e, o->pd[2], WIN - 8, 8,
				       ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_ATOMIC,
				       &o->lkey[2], &rk), 0);
	assert_int_equal(rocev2_dereg_mr(e, h), 0);             /* slot 2 free */
	assert_int_equal(rocev2_reg_mr(e, o->pd[1], 0, 0, 0, &o->lkey[3], &rk), 0);
	assert_int_equal(o->lkey[1] & 0xff, 2);

	q = (struct rocev2_queue_attr){ .ring_addr = 0x1000, .dbrec_addr = 0x100, .size = 64 };
	assert_int_equal(rocev2_create_cq(e, &q, &h), 0);
	assert_int_equal(rocev2_destroy_cq(e, h), 0);
	assert_int_equal(rocev2_create_cq(e, &q, &o->cq[0]), 0);
	q = (struct rocev2_queue_attr){ .ring_addr = 0x2000, .dbrec_addr = 0x108, .size = 16 };
	assert_int_equal(rocev2_create_cq(e, &q, &o->cq[1]), 0);
	q = (struct rocev2_queue_attr){ .ring_addr = 0x3000, .dbrec_addr = 0x110, .size = 8 };
	assert_int_equal(rocev2_create_cq(e, &q, &o->cq[2]), 0);
	e->cqs[rocev2_handle_index(o->cq[1])].pi = 0x12345678u;
	e->cqs[rocev2_handle_index(o->cq[2])].error = 1;

	sa = (struct rocev2_srq_attr){ .q = { 0x40000, 0x140, 16 }, .max_sge = 4, .srq_limit = 4 };
	assert_int_equal(rocev2_create_srq(e, o->pd[0], &sa, &o->srq[0]), 0);
	sa = (struct rocev2_srq_attr){ .q = { 0x44000, 0x148, 8 }, .max_sge = 28 };
	assert_int_equal(rocev2_create_srq(e, o->pd[2], &sa, &o->srq[1]), 0);
	e->srqs[rocev2_handle_index(o->srq[1])].wq.ci = 0xfffffff0u;
	assert_int_equal(rocev2_modify_srq_limit(e, o->srq[1], 3), 0);
	e->srqs[rocev2_handle_index(o->srq[1])].limit_armed = 0;   /* fired */

	for (i = 0; i < 8; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.pd = o->pd[i % 3];
		ia.send_cq = o->cq[i % 3];
		ia.recv_cq = o->cq[(i + 1) % 3];
		ia.srq = i >= 6 ? o->srq[i - 6] : ROCEV2_NO_SRQ;
		ia.sq = (struct rocev2_queue_attr){ .ring_addr = 0x80000 + i * 0x4000u,
						    .dbrec_addr = 0x200 + i * 16u, .size = 8 };
		if (i < 6)
			ia.rq = (struct rocev2_queue_attr){ .ring_addr = 0x82000 + i * 0x4000u,
							    .dbrec_addr = 0x208 + i * 16u,
							    .size = 8 };
		ia.max_send_sge = i;
		ia.max_recv_sge = 28 - i;
		ia.sq_sig_all = i & 1;
		if (i == 2) {           /* QP slot 2: generation 3 */
			assert_int_equal(rocev2_create_qp(e, &ia, &h), 0);
			assert_int_equal(rocev2_destroy_qp(e, h), 0);
			assert_int_equal(rocev2_create_qp(e, &ia, &h), 0);
			assert_int_equal(rocev2_destroy_qp(e, h), 0);
		}
		assert_int_equal(rocev2_create_qp(e, &ia, &o->qpn[i]), 0);
		if (states[i] != ROCEV2_QPS_RESET)
			qp_modify(e, o->qpn[i], states[i], 0x0a000010u + i, 0x100u + i);
	}
	/* A migration key on one QP, a paused QP. */
	{
		struct rocev2_qp *qp = rocev2_qp_lookup(e, o->qpn[3]);

		qp->mig.has_key = 1;
		qp->mig.tx_epoch = 3;
		qp->mig.rx_epoch = 0xfffffffeu;
		for (i = 0; i < 16; i++) {
			qp->mig.tx_key[i] = (uint8_t)(0xa0 + i);
			qp->mig.rx_key[i] = (uint8_t)(0x50 + i);
		}
		rocev2_qp_lookup(e, o->qpn[6])->paused = 1;
	}
}

/* ---- tests: empty image --------------------------------------------- */
static void test_empty_context(void **state)
{
	struct rocev2_dump_stats st;
	size_t len;

	(void)state;
	dump(&na, img, &len, &st);
	assert_int_equal(len, ROCEV2_DUMP_HDR_LEN);
	assert_memory_equal(img, "MNICDUMP", 8);
	assert_int_equal(le16(img + ROCEV2_DUMP_OFF_VERSION), 3);
	assert_int_equal(le16(img + ROCEV2_DUMP_OFF_FLAGS), 0);
	assert_int_equal(le32(img + ROCEV2_DUMP_OFF_COUNT), 0);
	assert_int_equal(le32(img + ROCEV2_DUMP_OFF_TOTAL), 40);
	/* No range recorded (a NULL scope): 16 zero bytes, the CRC's only input. */
	assert_int_equal(le32(img + ROCEV2_DUMP_OFF_UA_OFFSET), 0);
	assert_int_equal(le32(img + ROCEV2_DUMP_OFF_UA_SIZE), 0);
	assert_int_equal(le32(img + ROCEV2_DUMP_OFF_CRC), crc32c(0, img + ROCEV2_DUMP_CRC_START, 16));
	assert_int_equal(st.total, 40);
	assert_int_equal(na.e.owner_stopped[0], 1);
	assert_int_equal(rocev2_restore_image(&nb.e, img, len, NULL), 0);
	assert_int_equal(nb.e.n_pd + nb.e.n_qp, 0);
	assert_int_equal(rocev2_dump_context(NULL, NULL, img, IMG_MAX, &len, NULL), -HAL_EINVAL);
	assert_int_equal(rocev2_dump_context(&na.e, NULL, img, IMG_MAX, NULL, NULL), -HAL_EINVAL);
	assert_int_equal(rocev2_dump_context(&na.e, NULL, NULL, 100, &len, NULL), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_image(NULL, img, len, NULL), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_image(&nb.e, NULL, len, NULL), -HAL_EINVAL);
}

/* ---- round trip of every object kind --------------------------------------- */
static void test_round_trip_objects(void **state)
{
	struct rocev2_dump_stats st, st2;
	struct objs o;
	size_t len2;
	uint32_t i;

	(void)state;
	make_objects(&na.e, &o);
	dump(&na, img, &img_len, &st);
	host_parser_agrees(img, img_len);
	for (i = 0; i < ROCEV2_MAX_QP; i++)
		if (na.e.qps[i].in_use)
			assert_int_equal(na.e.qps[i].stopped, 1);
	assert_int_equal(na.e.owner_stopped[0], 1);
	assert_int_equal(rocev2_image_validate(img, img_len), 0);

	assert_int_equal(rocev2_restore_image(&nb.e, img, img_len, NULL), 0);
	same_engine(&na.e, &nb.e);
	assert_int_equal(nb.e.owner_stopped[0], 0);                  /* only a dump stops a context */
	/* The restored context dumps to the same bytes. */
	dump(&nb, img2, &len2, &st2);
	assert_int_equal(len2, img_len);
	assert_memory_equal(img, img2, img_len);
	assert_memory_equal(&st, &st2, sizeof(st));

	/* Statistics: every kind, record sizes as docs/migration-image.md. */
	assert_int_equal(st.objects[ROCEV2_OBJ_PD], 3);
	assert_int_equal(st.bytes[ROCEV2_OBJ_PD], 3 * 12);
	assert_int_equal(st.objects[ROCEV2_OBJ_MR], 4);
	assert_int_equal(st.bytes[ROCEV2_OBJ_MR], 4 * 40);
	assert_int_equal(st.objects[ROCEV2_OBJ_CQ], 3);
	assert_int_equal(st.bytes[ROCEV2_OBJ_CQ], 3 * 45);
	assert_int_equal(st.objects[ROCEV2_OBJ_SRQ], 2);
	assert_int_equal(st.bytes[ROCEV2_OBJ_SRQ], 2 * 57);
	assert_int_equal(st.objects[ROCEV2_OBJ_QP], 6);
	assert_int_equal(st.bytes[ROCEV2_OBJ_QP], 6 * 300 + 32);   /* one with keys */
	assert_int_equal(st.objects[ROCEV2_OBJ_QP_SRQ], 2);
	assert_int_equal(st.bytes[ROCEV2_OBJ_QP_SRQ], 2 * 300);
	assert_int_equal(st.total, img_len);
	assert_int_equal(le32(img + ROCEV2_DUMP_OFF_COUNT), 3 + 4 + 3 + 2 + 8);
	print_message("record bytes: PD %u, MR %u, CQ %u, SRQ %u, QP %u (+16 with key), "
		      "QP on SRQ %u; image %u\n",
		      st.bytes[ROCEV2_OBJ_PD] / 3, st.bytes[ROCEV2_OBJ_MR] / 4,
		      st.bytes[ROCEV2_OBJ_CQ] / 3, st.bytes[ROCEV2_OBJ_SRQ] / 2,
		      (st.bytes[ROCEV2_OBJ_QP] - 16) / 6, st.bytes[ROCEV2_OBJ_QP_SRQ] / 2,
		      st.total);

	/* The restored objects work as verbs objects: handles name them,
	 * references count them. */
	assert_non_null(rocev2_pd_get(&nb.e, o.pd[0]));
	assert_ptr_equal(rocev2_mr_lookup(&nb.e, o.lkey[1]), &nb.e.mrs[o.lkey[1] >> 8]);
	assert_int_equal(rocev2_dealloc_pd(&nb.e, o.pd[0]), -HAL_EBUSY);
	assert_int_equal(rocev2_destroy_cq(&nb.e, o.cq[0]), -HAL_EBUSY);
	assert_int_equal(rocev2_destroy_srq(&nb.e, o.srq[0]), -HAL_EBUSY);
	destroy_all(&nb.e);
	/* The next objects get the next generations, as on the source. */
	assert_int_equal(rocev2_alloc_pd(&nb.e, &i), 0);
	assert_int_equal(i, rocev2_handle(6, 0));
}

/* The per-object commands one by one, as MigrOS's ibv_restore_object. */
static void test_restore_commands(void **state)
{
	struct objs o;
	long pd, mr, cq, srq, qp, qp2;
	const uint8_t *p;

	(void)state;
	make_objects(&na.e, &o);
	dump(&na, img, &img_len, NULL);
	pd = find_rec(img, img_len, ROCEV2_OBJ_PD, 0);
	mr = find_rec(img, img_len, ROCEV2_OBJ_MR, 0);
	cq = find_rec(img, img_len, ROCEV2_OBJ_CQ, 0);
	srq = find_rec(img, img_len, ROCEV2_OBJ_SRQ, 0);
	qp = find_rec(img, img_len, ROCEV2_OBJ_QP, 3);           /* RTS, keyed, PD 0 CQ 0/1 */
	qp2 = find_rec(img, img_len, ROCEV2_OBJ_QP, 6);          /* on SRQ 0 */
	assert_true(pd > 0 && mr > 0 && cq > 0 && srq > 0 && qp > 0 && qp2 > 0);
#define PAY(off) (img + (off) + 8), (le32(img + (off) + 4) - 8u)

	/* Dependencies first: without its PD an MR is refused. */
	assert_int_equal(rocev2_restore_mr(&nb.e, PAY(mr)), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_pd(&nb.e, PAY(pd)), 0);
	assert_int_equal(rocev2_restore_pd(&nb.e, PAY(pd)), -HAL_EEXIST);
	assert_int_equal(rocev2_restore_mr(&nb.e, PAY(mr)), 0);
	assert_int_equal(rocev2_restore_mr(&nb.e, PAY(mr)), -HAL_EEXIST);
	assert_int_equal(nb.e.pds[rocev2_handle_index(o.pd[0])].refcnt, 1);
	/* Short payloads. */
	p = img + pd + 8;
	assert_int_equal(rocev2_restore_pd(&nb.e, p, 3), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_pd(&nb.e, p, 5), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_cq(&nb.e, img + cq + 8, ROCEV2_DUMP_CQ_LEN - 1),
			 -HAL_EINVAL);
	assert_int_equal(rocev2_restore_pd(NULL, p, 4), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_pd(&nb.e, NULL, 4), -HAL_EINVAL);
	/* A payload one byte short at the very end of its buffer: refused
	 * without a read past it (ASan watches the end of `tail`). */
	{
		static uint8_t tail_pd[ROCEV2_DUMP_PD_LEN - 1], tail_mr[ROCEV2_DUMP_MR_LEN - 1],
			tail_cq[ROCEV2_DUMP_CQ_LEN - 1], tail_srq[ROCEV2_DUMP_SRQ_LEN - 1],
			tail_qp[ROCEV2_DUMP_QP_MIN_LEN - 1];

		memcpy(tail_pd, img + pd + 8, sizeof(tail_pd));
		memcpy(tail_mr, img + mr + 8, sizeof(tail_mr));
		memcpy(tail_cq, img + cq + 8, sizeof(tail_cq));
		memcpy(tail_srq, img + srq + 8, sizeof(tail_srq));
		memcpy(tail_qp, img + qp + 8, sizeof(tail_qp));
		assert_int_equal(rocev2_restore_pd(&nb.e, tail_pd, sizeof(tail_pd)), -HAL_EINVAL);
		assert_int_equal(rocev2_restore_mr(&nb.e, tail_mr, sizeof(tail_mr)), -HAL_EINVAL);
		assert_int_equal(rocev2_restore_cq(&nb.e, tail_cq, sizeof(tail_cq)), -HAL_EINVAL);
		assert_int_equal(rocev2_restore_srq(&nb.e, tail_srq, sizeof(tail_srq)),
				 -HAL_EINVAL);
		assert_int_equal(rocev2_restore_qp_create(&nb.e, tail_qp, sizeof(tail_qp)),
				 -HAL_EINVAL);
		assert_int_equal(rocev2_restore_qp_refill(&nb.e, tail_qp, sizeof(tail_qp)),
				 -HAL_EINVAL);
	}
	/* A QP needs its CQs; refill needs its QP. */
	assert_int_equal(rocev2_restore_qp_create(&nb.e, PAY(qp)), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_qp_refill(&nb.e, PAY(qp)), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_cq(&nb.e, PAY(cq)), 0);
	cq = find_rec(img, img_len, ROCEV2_OBJ_CQ, 1);
	assert_int_equal(rocev2_restore_cq(&nb.e, PAY(cq)), 0);
	assert_int_equal(rocev2_restore_qp_create(&nb.e, PAY(qp)), 0);
	assert_int_equal(rocev2_restore_qp_create(&nb.e, PAY(qp)), -HAL_EEXIST);
	{
		struct rocev2_qp *q = rocev2_qp_lookup(&nb.e, o.qpn[3]);

		assert_non_null(q);
		assert_int_equal(q->state, ROCEV2_QPS_RESET);
		assert_int_equal(q->stopped, 1);
		assert_int_equal(nb.e.n_qp, 1);
		q->stopped = 0;         /* refill stops it whatever happened since */
		assert_int_equal(rocev2_restore_qp_refill(&nb.e, PAY(qp)), 0);
		assert_int_equal(q->state, ROCEV2_QPS_RTS);
		assert_int_equal(q->stopped, 1);
		same_qp(&na.e, rocev2_qp_lookup(&na.e, o.qpn[3]), &nb.e, q);
		assert_int_equal(rocev2_restore_qp_refill(&nb.e, PAY(qp)), -HAL_EBUSY);
	}
	/* SRQ after its PD, its QP after it. */
	assert_int_equal(rocev2_restore_qp_create(&nb.e, PAY(qp2)), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_srq(&nb.e, PAY(srq)), 0);
	assert_int_equal(rocev2_restore_srq(&nb.e, PAY(srq)), -HAL_EEXIST);
	assert_int_equal(rocev2_restore_qp_create(&nb.e, PAY(qp2)), 0);
	/* Refill with another QP's record: refused. */
	memcpy(bad, img + qp + 8, le32(img + qp + 4) - 8u);
	put_le32(bad, o.qpn[6]);
	assert_int_equal(rocev2_restore_qp_refill(&nb.e, bad, le32(img + qp + 4) - 8u),
			 -HAL_EINVAL);
	/* ... and with its own record but another SRQ (the only difference). */
	assert_int_equal(rocev2_restore_srq(&nb.e, PAY(find_rec(img, img_len, ROCEV2_OBJ_SRQ, 1))),
			 -HAL_EINVAL);          /* its PD is not there yet */
	pd = find_rec(img, img_len, ROCEV2_OBJ_PD, 2);
	assert_int_equal(rocev2_restore_pd(&nb.e, PAY(pd)), 0);
	srq = find_rec(img, img_len, ROCEV2_OBJ_SRQ, 1);
	assert_int_equal(rocev2_restore_srq(&nb.e, PAY(srq)), 0);
	memcpy(bad, img + qp2 + 8, le32(img + qp2 + 4) - 8u);
	put_le32(bad + 16, o.srq[1]);
	assert_int_equal(rocev2_restore_qp_refill(&nb.e, bad, le32(img + qp2 + 4) - 8u),
			 -HAL_EINVAL);
	assert_int_equal(rocev2_restore_qp_refill(&nb.e, PAY(qp2)), 0);
	assert_int_equal(nb.e.srqs[rocev2_handle_index(o.srq[0])].refcnt, 1);
	destroy_all(&nb.e);
#undef PAY
}

/* ---- random stage state ------------------------------------------------------ */
static uint32_t rng = 0x12345678u;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static uint64_t rnd64(void)
{
	return (uint64_t)rnd() << 32 | rnd();
}

static uint8_t rnd_opcode(void)
{
	static const uint8_t ops[] = { 0xff, OP_SEND_FIRST, OP_SEND_ONLY_IMM, OP_WRITE_MIDDLE,
				       OP_READ_REQUEST, OP_READ_RESPONSE_FIRST, OP_FETCH_ADD,
				       OP_SEND_LAST_INV, OP_ACKNOWLEDGE };

	return ops[rnd() % sizeof(ops)];
}

#define PSN() (rnd() & BTH_PSN_MASK)
#define BIT() ((uint8_t)(rnd() & 1u))
#define LEN() (rnd() & (ROCEV2_MAX_MSG - 1u))

/* Every member the image carries set to a random value the engine could
 * hold; the members it leaves out set to junk that must not matter. */
static void randomize_qp(struct rocev2_qp *qp)
{
	struct rocev2_qp_attr *a = &qp->attr;
	struct rocev2_req *q = &qp->req;
	struct rocev2_comp *c = &qp->comp;
	struct rocev2_resp *r = &qp->resp;
	uint32_t i, n;
	uint64_t total = 0;

	qp->state = (uint8_t)(rnd() % ROCEV2_QPS_NUM);
	a->qp_state = qp->state;
	a->path_mtu = 1 + rnd() % 5;
	qp->mtu = rocev2_mtu_bytes(a->path_mtu);
	a->qp_access_flags = rnd() & 15u;
	a->rq_psn = PSN();
	a->sq_psn = PSN();
	a->dest_qp_num = rnd() & BTH_QPN_MASK;
	for (i = 0; i < 6; i++)
		a->av.dmac[i] = (uint8_t)rnd();
	a->av.ttl = (uint8_t)rnd();
	a->av.tos = (uint8_t)rnd();
	rocev2_av_set_ipv4(&a->av, rnd());
	a->timeout = rnd() % 32;
	a->retry_cnt = rnd() % 8;
	a->rnr_retry = rnd() % 8;
	a->min_rnr_timer = rnd() % 32;
	a->max_rd_atomic = rnd() % 17;
	a->max_dest_rd_atomic = rnd() % 17;
	qp->sq.ci = rnd();
	qp->sq.pi = rnd();
	qp->rq.ci = rnd();
	qp->rq.pi = rnd();
	qp->paused = BIT();
	qp->mig.has_key = BIT();
	qp->mig.tx_epoch = rnd();
	qp->mig.rx_epoch = rnd();
	for (i = 0; i < 16; i++) {
		qp->mig.tx_key[i] = qp->mig.has_key ? (uint8_t)rnd() : 0;
		qp->mig.rx_key[i] = qp->mig.has_key ? (uint8_t)rnd() : 0;
	}
	qp->mig.resume_pending = 0;

	q->state = rnd() % 4;
	q->opcode = rnd_opcode();
	q->wqe_loaded = 1;              /* junk: restored as 0 */
	q->need_retry = BIT();
	q->psn = PSN();
	q->wqe_index = rnd();
	q->sq_pi = rnd();               /* junk: restored as sq.pi */
	q->offset = LEN();
	q->noack_pkts = rnd();
	q->rd_atomic_outstanding = rnd() % 65;
	q->started = BIT();
	q->err_pending = BIT();
	q->err_status = (uint8_t)rnd();
	q->repeat_head = BIT();         /* junk: restored as 0 */
	q->err_index = rnd();
	q->err_vendor = rnd();
	q->psn_hw = PSN();
	memset(&q->wqe, 0x5a, sizeof(q->wqe));
	c->wqe_index = rnd();
	n = rnd() % (ROCEV2_MAX_INFLIGHT_WQE + 1);
	q->next_new = c->wqe_index + n;
	for (i = 0; i < ROCEV2_MAX_INFLIGHT_WQE; i++) {
		struct rocev2_wqe_track *t = &q->track[i];

		t->first_psn = PSN();
		t->last_psn = PSN();
		t->length = LEN();
		t->wr_opcode = (uint8_t)(rnd() % MNIC_WR_NUM);
		t->send_flags = (uint8_t)rnd();
		t->state = BIT();
		t->reserved = (uint8_t)rnd();
	}

	c->psn = PSN();
	c->opcode = rnd_opcode();
	c->retry_cnt = rnd() % 8;
	c->rnr_retry = rnd() % 8;
	c->wqe_loaded = 1;
	c->read_offset = LEN();
	memset(&c->wqe, 0xa5, sizeof(c->wqe));
	c->started_retry = BIT();
	c->rnr_wait = BIT();
	c->drained = BIT();
	c->last_state = (uint8_t)rnd();

	r->psn = PSN();
	r->msn = PSN();
	r->opcode = rnd_opcode();
	r->sent_psn_nak = BIT();
	r->rwqe_valid = BIT();
	memset(&r->rwqe, 0x77, sizeof(r->rwqe));
	r->rwqe.wr_id = rnd64();
	r->rwqe.num_sge = (uint8_t)(rnd() % (MNIC_MAX_SGE + 1));
	for (i = 0; i < r->rwqe.num_sge; i++) {
		r->rwqe.sge[i].addr = rnd64();
		r->rwqe.sge[i].length = rnd() & 0x1ffffffu;
		r->rwqe.sge[i].lkey = rnd();
		total += r->rwqe.sge[i].length;
	}
	r->rwqe_length = r->rwqe_valid ? total : rnd();
	r->rwqe_offset = r->rwqe_valid ? (total ? rnd64() % (total + 1) : 0) : LEN();
	r->write_va = rnd64();
	r->write_rkey = rnd();
	r->write_resid = LEN();
	r->write_length = LEN();
	for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++) {
		struct rocev2_resp_res *s = &r->res[i];
		static const uint8_t types[] = { 0, OP_READ_REQUEST, OP_COMPARE_SWAP,
						 OP_FETCH_ADD };

		memset(s, 0, sizeof(*s));
		s->type = types[rnd() % 4];
		if (!s->type)
			continue;
		s->replay = BIT();
		s->first_psn = PSN();
		s->last_psn = PSN();
		s->cur_psn = PSN();
		s->start_psn = PSN();
		s->va = rnd64();
		s->va_org = rnd64();
		s->rkey = rnd();
		s->length = LEN();
		s->resid = s->length ? rnd() % s->length : 0;
		s->orig = rnd64();
		s->msn = PSN();
		s->sending = BIT();
	}
	r->res_head = rnd() % ROCEV2_MAX_RD_ATOMIC;
	r->res_pending = rnd() % (ROCEV2_MAX_RD_ATOMIC + 1);
	r->ack_psn = PSN();
	r->ack_psn_valid = BIT();
	r->last_state = (uint8_t)rnd();
	r->last_error = (uint8_t)rnd();
	r->ack_deferred = BIT();
	r->ack_syndrome = (uint8_t)rnd();
	r->ack_deferred_psn = PSN();
	r->ack_deferred_msn = PSN();
}

static void test_round_trip_random_state(void **state)
{
	struct objs o;
	size_t len2;
	unsigned iter, i;

	(void)state;
	make_objects(&na.e, &o);
	for (iter = 0; iter < 300; iter++) {
		for (i = 0; i < 8; i++)
			randomize_qp(rocev2_qp_lookup(&na.e, o.qpn[i]));
		dump(&na, img, &img_len, NULL);
		node_init(&nb, na.ip, 1, WIN);
		assert_int_equal(rocev2_restore_image(&nb.e, img, img_len, NULL), 0);
		same_engine(&na.e, &nb.e);
		dump(&nb, img2, &len2, NULL);
		assert_int_equal(len2, img_len);
		assert_memory_equal(img, img2, img_len);
	}
}

/* ---- the byte layout of docs/migration-image.md --------------------------------- */
static uint64_t at_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

#define AT(rec, off, n, want) assert_int_equal(at_le(img + (rec) + 8 + (off), (n)), (want))

static void test_layout(void **state)
{
	struct objs o;
	struct rocev2_qp *qp;
	long pd, mr, cq, srq, q;
	unsigned i;

	(void)state;
	make_objects(&na.e, &o);
	qp = rocev2_qp_lookup(&na.e, o.qpn[3]);          /* RTS, keyed */
	qp->sq.ci = 0x11111111u;
	qp->sq.pi = 0x22222222u;
	qp->rq.ci = 0x33333333u;
	qp->rq.pi = 0x44444444u;
	qp->req.psn = 0x123456u;
	qp->req.offset = 0x0102030405ull;
	qp->req.err_vendor = 0xdeadbeefu;
	qp->req.psn_hw = 0x654321u;
	qp->comp.wqe_index = 0xfffffffeu;
	qp->req.next_new = 1;                           /* 3 WQEs in flight, index wraps */
	qp->req.track[0x3e].first_psn = 0xaaaaaau;
	qp->req.track[0x3f].length = 0x1234u;
	qp->req.track[0].state = 1;
	qp->comp.psn = 0x0a0b0cu;
	qp->comp.read_offset = 0x777u;
	qp->comp.drained = 1;
	qp->resp.msn = 0x00abcdu;
	qp->resp.write_va = 0x8877665544332211ull;
	qp->resp.ack_deferred_msn = 0x00fedcu;
	qp->resp.res[5] = (struct rocev2_resp_res){ .type = OP_COMPARE_SWAP, .first_psn = 0x55,
						    .orig = 0x99, .length = 8, .start_psn = 0x66 };
	qp->resp.rwqe_valid = 1;
	qp->resp.rwqe.wr_id = 0xfeedu;
	qp->resp.rwqe.num_sge = 1;
	qp->resp.rwqe.sge[0] = (struct mnic_sge){ 0x4000, 0x100, 0x0201 };
	qp->resp.rwqe_offset = 0x80;
	dump(&na, img, &img_len, NULL);
	host_parser_agrees(img, img_len);

	pd = find_rec(img, img_len, ROCEV2_OBJ_PD, 0);
	assert_int_equal(at_le(img + pd, 2), ROCEV2_OBJ_PD);
	assert_int_equal(at_le(img + pd + 2, 2), 2);
	assert_int_equal(at_le(img + pd + 4, 4), 12);
	AT(pd, 0, 4, o.pd[0]);
	mr = find_rec(img, img_len, ROCEV2_OBJ_MR, 3);
	assert_int_equal(at_le(img + mr + 4, 4), 40);
	AT(mr, 0, 4, o.lkey[2]);
	AT(mr, 4, 4, o.pd[2]);
	AT(mr, 8, 8, WIN - 8);
	AT(mr, 16, 8, 8);
	AT(mr, 24, 4, ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_ATOMIC);
	AT(mr, 28, 4, ROCEV2_NO_MTT);
	cq = find_rec(img, img_len, ROCEV2_OBJ_CQ, 1);
	assert_int_equal(at_le(img + cq + 4, 4), 45);
	AT(cq, 0, 4, o.cq[1]);
	AT(cq, 4, 8, 0x2000);
	AT(cq, 12, 8, 0x108);
	AT(cq, 20, 4, 16);
	AT(cq, 24, 4, ROCEV2_NO_MTT);
	AT(cq, 28, 4, ROCEV2_NO_MTT);
	AT(cq, 32, 4, 0x12345678u);
	AT(cq, 36, 1, 0);
	srq = find_rec(img, img_len, ROCEV2_OBJ_SRQ, 1);
	assert_int_equal(at_le(img + srq + 4, 4), 57);
	AT(srq, 0, 4, o.srq[1]);
	AT(srq, 4, 4, o.pd[2]);
	AT(srq, 8, 8, 0x44000);
	AT(srq, 16, 8, 0x148);
	AT(srq, 24, 4, 8);
	AT(srq, 28, 4, ROCEV2_NO_MTT);
	AT(srq, 32, 4, ROCEV2_NO_MTT);
	AT(srq, 36, 4, 0xfffffff0u);
	AT(srq, 40, 4, 28);
	AT(srq, 44, 4, 3);
	AT(srq, 48, 1, 0);

	q = find_rec(img, img_len, ROCEV2_OBJ_QP, 3);
	assert_int_equal(at_le(img + q + 4, 4), 8 + 292 + 32 + 3 * 15 + 60 + 9 + 16);
	AT(q, 0, 4, o.qpn[3]);
	AT(q, 4, 4, o.pd[0]);
	AT(q, 8, 4, o.cq[0]);
	AT(q, 12, 4, o.cq[1]);
	AT(q, 16, 4, ROCEV2_NO_SRQ);
	AT(q, 20, 8, 0x8c000);
	AT(q, 28, 8, 0x230);
	AT(q, 36, 4, 8);
	AT(q, 40, 4, ROCEV2_NO_MTT);                   /* SQ ring_mtt, dbrec_mtt */
	AT(q, 44, 4, ROCEV2_NO_MTT);
	AT(q, 48, 4, 0x11111111u);
	AT(q, 52, 4, 0x22222222u);
	AT(q, 56, 8, 0x8e000);
	AT(q, 84, 4, 0x33333333u);
	AT(q, 88, 4, 0x44444444u);
	AT(q, 92, 1, 3);                                /* max_send_sge */
	AT(q, 93, 1, 25);
	AT(q, 94, 1, 1);                                /* sq_sig_all */
	AT(q, 95, 1, ROCEV2_QPS_RTS);
	AT(q, 96, 1, ROCEV2_DUMP_QPF_HAS_KEY);
	AT(q, 97, 1, ROCEV2_MTU_256);
	AT(q, 98, 1, ACC_ALL);
	AT(q, 99, 1, 10);                               /* timeout */
	AT(q, 100, 1, 7);
	AT(q, 101, 1, 7);
	AT(q, 102, 1, 1);                                /* min_rnr_timer */
	AT(q, 103, 1, 4);
	AT(q, 104, 1, 4);
	AT(q, 105, 1, 64);                               /* ttl */
	AT(q, 106, 1, 0x28);
	AT(q, 107, 6, 0x130000000002ull);                /* dmac 02 00 00 00 00 13 */
	{
		static const uint8_t gid[16] = MNIC_GID_V4(0x0a000013u);

		assert_memory_equal(img + q + 8 + 113, gid, 16);  /* dgid, IPv4-mapped */
	}
	AT(q, 129, 4, 0);                               /* flow_label */
	AT(q, 133, 1, 0);                               /* sgid_index */
	AT(q, 134, 2, 0);
	AT(q, 136, 4, 0x103);
	AT(q, 140, 4, 0x203);
	AT(q, 144, 4, 0xfffff0u);
	AT(q, 148, 1, 3);                               /* n_track */
	AT(q, 149, 1, 1);                               /* n_res */
	AT(q, 153, 4, 0x123456u);                       /* req.psn */
	AT(q, 161, 8, 0x0102030405ull);
	AT(q, 184, 4, 0xdeadbeefu);
	AT(q, 188, 4, 1);                               /* req.next_new */
	AT(q, 192, 4, 0x654321u);
	AT(q, 196, 4, 0x0a0b0cu);                       /* comp.psn */
	AT(q, 200, 4, 0xfffffffeu);
	AT(q, 207, 8, 0x777u);
	AT(q, 217, 1, 1);                               /* comp.drained */
	AT(q, 222, 4, 0x00abcdu);                       /* resp.msn */
	AT(q, 228, 1, 1);                               /* rwqe_valid */
	AT(q, 229, 8, 0x80);
	AT(q, 237, 8, 0x8877665544332211ull);
	AT(q, 280, 4, 0x00fedcu);
	AT(q, 284, 4, 3);                               /* tx_epoch */
	AT(q, 288, 4, 0xfffffffeu);                     /* rx_epoch */
	for (i = 0; i < 16; i++) {
		AT(q, 292 + i, 1, 0xa0 + i);            /* tx key */
		AT(q, 308 + i, 1, 0x50 + i);            /* rx key */
	}
	AT(q, 324, 4, 0xaaaaaau);                       /* track[0x3e].first_psn */
	AT(q, 324 + 15 + 8, 4, 0x1234u);                /* track[0x3f].length */
	AT(q, 324 + 30 + 14, 1, 1);                     /* track[0].state */
	AT(q, 369, 1, 5);                               /* resource: slot */
	AT(q, 370, 1, OP_COMPARE_SWAP);
	AT(q, 372, 4, 0x55);                            /* first_psn */
	AT(q, 369 + 31, 8, 0x99);                       /* orig */
	AT(q, 369 + 51, 4, 8);                          /* length */
	AT(q, 369 + 56, 4, 0x66);                       /* start_psn */
	AT(q, 429, 8, 0xfeedu);                         /* rwqe.wr_id */
	AT(q, 437, 1, 1);
	AT(q, 438, 8, 0x4000);
	AT(q, 446, 4, 0x100);
	AT(q, 450, 4, 0x0201);
}

/* ---- ENOSPC, stop ------------------------------------------------------------ */
static void test_enospc(void **state)
{
	struct rocev2_dump_stats st;
	struct objs o;
	size_t cap, len = 1;
	uint32_t i;

	(void)state;
	make_objects(&na.e, &o);
	randomize_qp(rocev2_qp_lookup(&na.e, o.qpn[3]));
	rocev2_qp_lookup(&na.e, o.qpn[3])->state = ROCEV2_QPS_RTS;
	dump(&na, img, &img_len, NULL);
	/* A running context: ENOSPC changes nothing, it stays running (the
	 * caller asks again with the size; test_migrate's
	 * test_dump_too_small_changes_nothing for why). */
	for (i = 0; i < ROCEV2_MAX_QP; i++)
		na.e.qps[i].stopped = 0;
	na.e.owner_stopped[0] = 0;
	for (cap = 0; cap < img_len; cap++) {
		memset(img2, 0xa5, IMG_MAX);
		memset(&st, 0, sizeof(st));
		len = 1;
		assert_int_equal(rocev2_dump_context(&na.e, NULL, cap ? img2 : NULL, cap, &len, &st),
				 -HAL_ENOSPC);
		assert_int_equal(len, 0);
		assert_int_equal(st.total, img_len);            /* what it needs */
		for (i = 0; i < IMG_MAX; i++)
			if (img2[i] != 0xa5)
				fail_msg("cap %zu: byte %u written", cap, i);
		for (i = 0; i < ROCEV2_MAX_QP; i++)
			if (na.e.qps[i].in_use)
				assert_int_equal(na.e.qps[i].stopped, 0);
		assert_int_equal(na.e.owner_stopped[0], 0);
	}
	assert_int_equal(rocev2_dump_context(&na.e, NULL, img2, img_len, &len, NULL), 0);
	assert_int_equal(len, img_len);
	assert_memory_equal(img, img2, img_len);
}

/* A stopped QP sends nothing; a new request gets NAK_STOPPED. */
static void test_dump_stops_everything(void **state)
{
	struct objs o;
	struct rocev2_qp *qp;
	struct mnic_send_wqe w;
	uint32_t one = 1;

	(void)state;
	make_objects(&na.e, &o);
	qp = rocev2_qp_lookup(&na.e, o.qpn[3]);
	memset(&w, 0, sizeof(w));
	w.opcode = MNIC_WR_SEND;
	memcpy(na.mem + qp->sq.q.ring_addr, &w, sizeof(w));
	memcpy(na.mem + qp->sq.q.dbrec_addr, &one, 4);
	dump(&na, img, &img_len, NULL);
	assert_int_equal(rocev2_sq_doorbell(&na.e, o.qpn[3]), 0);
	rocev2_poll(&na.e, 64);
	assert_int_equal(na.out_tail, 0);
	assert_int_equal(qp->req.psn, qp->attr.sq_psn);
}

/* ---- the parser's refusals --------------------------------------------------- */

/* A rich image: every kind, random stage state, traffic-like extras. */
static void rich_image(void)
{
	struct objs o;
	uint32_t i;

	make_objects(&na.e, &o);
	for (i = 3; i < 7; i++)
		randomize_qp(rocev2_qp_lookup(&na.e, o.qpn[i]));
	dump(&na, img, &img_len, NULL);
}

/* b refused with err, and the engine not touched at all. */
static void refused(const uint8_t *b, size_t len, int err)
{
	memcpy(&snap, &nb.e, sizeof(snap));
	assert_int_equal(rocev2_image_validate(b, len), err);
	assert_int_equal(rocev2_restore_image(&nb.e, b, len, NULL), err);
	if (memcmp(&snap, &nb.e, sizeof(snap)))
		fail_msg("a refused image changed the engine");
}

static void test_refuse_truncated(void **state)
{
	size_t len;

	(void)state;
	rich_image();
	for (len = 0; len < img_len; len++)
		refused(img, len, -HAL_EINVAL);
	/* ... and with the header claiming the shorter length (CRC right):
	 * the records do not fit. */
	for (len = ROCEV2_DUMP_HDR_LEN + 1; len < img_len; len++) {
		memcpy(bad, img, len);
		reseal(bad, len);
		refused(bad, len, -HAL_EINVAL);
	}
	/* A byte too many. */
	memcpy(bad, img, img_len);
	bad[img_len] = 0;
	refused(bad, img_len + 1, -HAL_EINVAL);
	assert_int_equal(rocev2_restore_image(&nb.e, img, img_len, NULL), 0);
}

/* Every single flipped bit is caught; in the body by the CRC. */
static void test_refuse_bit_flips(void **state)
{
	size_t bit;

	(void)state;
	rich_image();
	memcpy(&snap, &nb.e, sizeof(snap));
	for (bit = 0; bit < img_len * 8; bit++) {
		size_t byte = bit / 8;
		int want, rc;

		memcpy(bad, img, img_len);
		bad[byte] ^= (uint8_t)(1u << (bit % 8));
		if (byte < ROCEV2_DUMP_OFF_VERSION)
			want = -HAL_EINVAL;             /* magic */
		else if (byte < ROCEV2_DUMP_OFF_FLAGS)
			want = -HAL_ERANGE;             /* version */
		else if (byte < ROCEV2_DUMP_OFF_CRC)
			want = -HAL_EINVAL;             /* flags, count, total */
		else
			want = -HAL_EIO;                /* CRC field or body */
		rc = rocev2_restore_image(&nb.e, bad, img_len, NULL);
		if (rc != want)
			fail_msg("bit %zu: %d, want %d", bit, rc, want);
	}
	if (memcmp(&snap, &nb.e, sizeof(snap)))
		fail_msg("a refused image changed the engine");
}

static void test_refuse_header(void **state)
{
	(void)state;
	rich_image();
	memcpy(bad, img, img_len);
	memcpy(bad, "MNICDUMQ", 8);
	refused(bad, img_len, -HAL_EINVAL);
	memcpy(bad, img, img_len);
	put16(bad + ROCEV2_DUMP_OFF_VERSION, 1);        /* no user-area range: too old */
	refused(bad, img_len, -HAL_ERANGE);
	put16(bad + ROCEV2_DUMP_OFF_VERSION, 2);        /* no MTTs: too old */
	refused(bad, img_len, -HAL_ERANGE);
	put16(bad + ROCEV2_DUMP_OFF_VERSION, 4);
	refused(bad, img_len, -HAL_ERANGE);
	put16(bad + ROCEV2_DUMP_OFF_VERSION, 0);
	refused(bad, img_len, -HAL_ERANGE);
	memcpy(bad, img, img_len);
	put16(bad + ROCEV2_DUMP_OFF_FLAGS, 1);
	refused(bad, img_len, -HAL_EINVAL);
	/* Count: too few, too many (CRC is over the body only). */
	memcpy(bad, img, img_len);
	put_le32(bad + ROCEV2_DUMP_OFF_COUNT, le32(img + ROCEV2_DUMP_OFF_COUNT) - 1);
	refused(bad, img_len, -HAL_EINVAL);
	put_le32(bad + ROCEV2_DUMP_OFF_COUNT, le32(img + ROCEV2_DUMP_OFF_COUNT) + 1);
	refused(bad, img_len, -HAL_EINVAL);
	put_le32(bad + ROCEV2_DUMP_OFF_COUNT, 0xffffffffu);
	refused(bad, img_len, -HAL_EINVAL);
	memcpy(bad, img, img_len);
	put_le32(bad + ROCEV2_DUMP_OFF_TOTAL, (uint32_t)img_len + 1);
	refused(bad, img_len, -HAL_EINVAL);
	memcpy(bad, img, img_len);
	put_le32(bad + ROCEV2_DUMP_OFF_CRC, le32(img + ROCEV2_DUMP_OFF_CRC) ^ 0x80000000u);
	refused(bad, img_len, -HAL_EIO);
	/* The user-area range, resealed: one that wraps, an offset without a size. */
	memcpy(bad, img, img_len);
	put_le32(bad + ROCEV2_DUMP_OFF_UA_OFFSET + 4, 0xffffffffu);
	put_le32(bad + ROCEV2_DUMP_OFF_UA_SIZE + 4, 0x80000000u);
	reseal(bad, img_len);
	refused(bad, img_len, -HAL_EINVAL);
	memcpy(bad, img, img_len);
	put_le32(bad + ROCEV2_DUMP_OFF_UA_OFFSET, 0x10000u);
	reseal(bad, img_len);
	refused(bad, img_len, -HAL_EINVAL);
}

/* Edit the record at off of a copy of img, reseal, expect err. */
static void refused_edit(long off, unsigned at, const void *bytes, size_t n, int err)
{
	int rc;

	assert_true(off > 0);
	memcpy(bad, img, img_len);
	memcpy(bad + off + at, bytes, n);
	reseal(bad, img_len);
	rc = rocev2_image_validate(bad, img_len);
	if (rc != err)
		fail_msg("record at %ld, byte %u: %d, want %d", off, at, rc, err);
	refused(bad, img_len, err);
}

static void refused_u32(long off, unsigned at, uint32_t v, int err)
{
	uint8_t b[4];

	put_le32(b, v);
	refused_edit(off, at, b, 4, err);
}

static void refused_u8(long off, unsigned at, uint8_t v, int err)
{
	refused_edit(off, at, &v, 1, err);
}

static void test_refuse_records(void **state)
{
	long pd, mr, cq, srq, qp, qps;
	uint32_t rlen;

	(void)state;
	rich_image();
	pd = find_rec(img, img_len, ROCEV2_OBJ_PD, 0);
	mr = find_rec(img, img_len, ROCEV2_OBJ_MR, 1);
	cq = find_rec(img, img_len, ROCEV2_OBJ_CQ, 0);
	srq = find_rec(img, img_len, ROCEV2_OBJ_SRQ, 0);
	qp = find_rec(img, img_len, ROCEV2_OBJ_QP, 3);
	qps = find_rec(img, img_len, ROCEV2_OBJ_QP, 6);
	rlen = le32(img + qp + 4);

	/* Record frame: length beyond the image, below the header, below the
	 * type's minimum, not what its contents say; unknown type; record
	 * version. */
	refused_u32(qp, 4, (uint32_t)(img_len - (size_t)qp) + 1, -HAL_EINVAL);
	refused_u32(pd, 4, 0xffffffffu, -HAL_EINVAL);
	refused_u32(pd, 4, 7, -HAL_EINVAL);
	refused_u32(pd, 4, 0, -HAL_EINVAL);
	refused_u32(cq, 4, 8 + ROCEV2_DUMP_CQ_LEN - 1, -HAL_EINVAL);
	refused_u32(qp, 4, rlen - 1, -HAL_EINVAL);
	refused_u32(qp, 4, rlen + 1, -HAL_EINVAL);
	refused_u32(qp, 4, 8 + ROCEV2_DUMP_QP_MIN_LEN - 1, -HAL_EINVAL);
	refused_u8(pd, 0, 5, -HAL_EINVAL);         /* QP_SRQ: statistics only */
	refused_u8(pd, 0, 6, -HAL_EINVAL);         /* MTT: shorter than its payload */
	refused_u8(pd, 0, 7, -HAL_EINVAL);
	refused_u8(pd, 1, 1, -HAL_EINVAL);         /* type 0x100 */
	refused_u8(mr, 2, 1, -HAL_ERANGE);         /* version 1: no MTT handle */
	refused_u8(mr, 2, 3, -HAL_ERANGE);
	refused_u8(qp, 2, 2, -HAL_ERANGE);         /* version 2: no MTT handles */
	refused_u8(qp, 2, 0, -HAL_ERANGE);
	refused_u8(qp, 3, 1, -HAL_ERANGE);

	/* Handles out of range or generation 0. */
	refused_u32(pd, 8, rocev2_handle(1, ROCEV2_MAX_PD), -HAL_EINVAL);
	refused_u32(pd, 8, rocev2_handle(0, 0), -HAL_EINVAL);
	refused_u32(mr, 8, ROCEV2_MAX_MR << 8 | 1u, -HAL_EINVAL);
	refused_u32(mr, 8, 3u << 8, -HAL_EINVAL);                  /* key byte 0 */
	refused_u32(cq, 8, rocev2_handle(1, ROCEV2_MAX_CQ), -HAL_EINVAL);
	refused_u32(srq, 8, rocev2_handle(1, ROCEV2_MAX_SRQ), -HAL_EINVAL);
	refused_u32(qp, 8, ROCEV2_MAX_QP | 1u << 12, -HAL_EINVAL);
	refused_u32(qp, 8, 5, -HAL_EINVAL);                        /* QPN generation 0 */
	refused_u32(qp, 8, 0x1000005u, -HAL_EINVAL);               /* > 24 bits */
	/* Values. */
	refused_u32(mr, 8 + 24, ROCEV2_ACCESS_REMOTE_WRITE, -HAL_EINVAL);   /* no LOCAL_WRITE */
	refused_u32(mr, 8 + 24, 16, -HAL_EINVAL);
	refused_u32(cq, 8 + 20, 48, -HAL_EINVAL);                  /* size not a power of 2 */
	refused_u32(cq, 8 + 12, 0x104, -HAL_EINVAL);               /* dbrec not aligned */
	refused_u8(cq, 8 + 36, 2, -HAL_EINVAL);                    /* error flag */
	refused_u32(srq, 8 + 44, 16, -HAL_EINVAL);                 /* limit >= size */
	refused_u32(srq, 8 + 40, 29, -HAL_EINVAL);                 /* max_sge */
	refused_u8(qp, 8 + 95, ROCEV2_QPS_NUM, -HAL_EINVAL);       /* state */
	refused_u8(qp, 8 + 96, 4, -HAL_EINVAL);                    /* flags */
	refused_u8(qp, 8 + 97, 0, -HAL_EINVAL);                    /* path_mtu */
	refused_u8(qp, 8 + 97, 6, -HAL_EINVAL);
	refused_u8(qp, 8 + 98, 16, -HAL_EINVAL);                   /* access */
	refused_u8(qp, 8 + 100, 8, -HAL_EINVAL);                    /* retry_cnt */
	refused_u8(qp, 8 + 104, 17, -HAL_EINVAL);                   /* max_dest_rd_atomic */
	refused_u8(qp, 8 + 92, 29, -HAL_EINVAL);                   /* max_send_sge */
	refused_u32(qp, 8 + 140, 0x1000000u, -HAL_EINVAL);         /* rq_psn */
	refused_u8(qp, 8 + 134, 1, -HAL_EINVAL);                   /* pkey_index */
	refused_u32(qp, 8 + 129, 0x100000u, -HAL_EINVAL);          /* flow_label: 20 bits */
	refused_u8(qp, 8 + 133, ROCEV2_GID_TBL_LEN, -HAL_EINVAL);  /* sgid_index */
	refused_u32(qp, 8 + 188, le32(img + qp + 8 + 188) + 1, -HAL_EINVAL);   /* next_new */
	{
		const uint8_t armed_no_limit[5] = { 0, 0, 0, 0, 1 };

		refused_edit(srq, 8 + 44, armed_no_limit, 5, -HAL_EINVAL);
	}
	refused_u8(qp, 8 + 150, 4, -HAL_EINVAL);                   /* req.state */
	refused_u8(qp, 8 + 151, 0x15, -HAL_EINVAL);                /* req.opcode */
	refused_u8(qp, 8 + 148, (uint8_t)(img[qp + 8 + 148] + 1), -HAL_EINVAL);  /* n_track */
	refused_u8(qp, 8 + 218 + 39, 16, -HAL_EINVAL);             /* resp.res_head */
	refused_u8(qp, 8 + 218 + 43, 17, -HAL_EINVAL);             /* resp.res_pending */
	refused_u8(qp, 8 + 218 + 10, 2, -HAL_EINVAL);              /* resp.rwqe_valid */
	refused_u32(qps, 8 + 16, rocev2_handle(9, 0), -HAL_EINVAL);        /* SRQ not in image */
	refused_u32(qps, 8 + 72, 8, -HAL_EINVAL);                  /* RQ with an SRQ */
	/* Dangling references and duplicates. */
	refused_u32(mr, 8 + 4, rocev2_handle(1, 5), -HAL_EINVAL);  /* PD not in the image */
	refused_u32(qp, 8 + 8, rocev2_handle(3, 0), -HAL_EINVAL);  /* CQ 0 is gen 2 */
	{
		long pd1 = find_rec(img, img_len, ROCEV2_OBJ_PD, 1);

		refused_edit(pd1, 8, img + pd + 8, 4, -HAL_EINVAL);
	}
}

/* An image made by hand from records of img: duplicates of objects that
 * nothing refers to, so only the duplicate check can refuse them. */
static size_t craft(uint8_t *b, const long *recs, unsigned n)
{
	size_t pos = ROCEV2_DUMP_HDR_LEN;
	unsigned i;

	memcpy(b, img, ROCEV2_DUMP_HDR_LEN);
	for (i = 0; i < n; i++) {
		uint32_t l = le32(img + recs[i] + 4);

		memcpy(b + pos, img + recs[i], l);
		pos += l;
	}
	seal(b, pos, n);
	return pos;
}

static void test_refuse_duplicates(void **state)
{
	long pd, pd2, mr, cq, srq, qp;
	size_t len;

	(void)state;
	rich_image();
	pd = find_rec(img, img_len, ROCEV2_OBJ_PD, 0);
	pd2 = find_rec(img, img_len, ROCEV2_OBJ_PD, 2);
	mr = find_rec(img, img_len, ROCEV2_OBJ_MR, 0);
	cq = find_rec(img, img_len, ROCEV2_OBJ_CQ, 0);
	srq = find_rec(img, img_len, ROCEV2_OBJ_SRQ, 0);
	qp = find_rec(img, img_len, ROCEV2_OBJ_QP, 0);      /* PD 0, CQs 0 and 1 */
	{
		const long ok[] = { pd, mr, cq, find_rec(img, img_len, ROCEV2_OBJ_CQ, 1), qp };

		len = craft(bad, ok, 5);
		assert_int_equal(rocev2_image_validate(bad, len), 0);
	}
	{
		const long r[] = { pd, pd };

		len = craft(bad, r, 2);
		refused(bad, len, -HAL_EINVAL);
	}
	{
		const long r[] = { pd, mr, mr };

		len = craft(bad, r, 3);
		refused(bad, len, -HAL_EINVAL);
	}
	{
		const long r[] = { cq, cq };

		len = craft(bad, r, 2);
		refused(bad, len, -HAL_EINVAL);
	}
	{
		const long r[] = { pd, srq, srq };

		len = craft(bad, r, 3);
		refused(bad, len, -HAL_EINVAL);
	}
	{
		const long r[] = { pd, cq, find_rec(img, img_len, ROCEV2_OBJ_CQ, 1), qp, qp };

		len = craft(bad, r, 5);
		refused(bad, len, -HAL_EINVAL);
	}
	/* Any order: references resolve across the whole image. */
	{
		const long r[] = { qp, find_rec(img, img_len, ROCEV2_OBJ_CQ, 1), mr, cq, pd, pd2 };

		len = craft(bad, r, 6);
		assert_int_equal(rocev2_restore_image(&nb.e, bad, len, NULL), 0);
		assert_int_equal(nb.e.n_qp, 1);
		assert_int_equal(nb.e.n_pd, 2);
		assert_int_equal(nb.e.pds[0].refcnt, 2);
	}
}

/* The variable parts of a QP record: responder resources, the receive
 * WQE in progress. */
static void test_refuse_qp_parts(void **state)
{
	struct objs o;
	struct rocev2_qp *qp;
	long off;
	unsigned nres, i, at;

	(void)state;
	make_objects(&na.e, &o);
	qp = rocev2_qp_lookup(&na.e, o.qpn[3]);
	randomize_qp(qp);
	qp->state = ROCEV2_QPS_RTS;
	qp->mig.has_key = 0;
	qp->comp.wqe_index = 10;
	qp->req.next_new = 12;
	memset(qp->resp.res, 0, sizeof(qp->resp.res));
	qp->resp.res[3].type = OP_READ_REQUEST;
	qp->resp.res[3].length = 100;
	qp->resp.res[9].type = OP_FETCH_ADD;
	qp->resp.rwqe_valid = 1;
	qp->resp.rwqe.num_sge = 2;
	qp->resp.rwqe.sge[0].length = 10;
	qp->resp.rwqe.sge[1].length = 20;
	qp->resp.rwqe_offset = 30;
	qp->resp.rwqe_length = 30;
	dump(&na, img, &img_len, NULL);
	off = find_rec(img, img_len, ROCEV2_OBJ_QP, 3);
	assert_int_equal(le32(img + off + 4), 8 + 292 + 2 * 15 + 2 * 60 + 9 + 2 * 16);
	nres = img[off + 8 + 149];
	assert_int_equal(nres, 2);
	at = 8 + 292 + 2 * 15;                          /* first resource: slot 3 */
	assert_int_equal(img[off + at], 3);
	refused_u8(off, at, 16, -HAL_EINVAL);           /* slot out of range */
	refused_u8(off, at, 9, -HAL_EINVAL);            /* slot twice */
	refused_u8(off, at + 1, 0, -HAL_EINVAL);        /* type 0 listed */
	refused_u8(off, at + 1, OP_SEND_ONLY, -HAL_EINVAL);
	refused_u8(off, at + 2, 2, -HAL_EINVAL);        /* replay flag */
	refused_u32(off, at + 27, 101, -HAL_EINVAL);    /* resid > length */
	at += 2 * 60;                                   /* the receive WQE */
	refused_u8(off, at + 8, 29, -HAL_EINVAL);       /* num_sge */
	refused_u32(off, at + 9 + 8, 9, -HAL_EINVAL);   /* rwqe_offset beyond the SGEs */
	/* Flag set without the key bytes, key bytes without the flag. */
	refused_u8(off, 8 + 96, (uint8_t)(img[off + 8 + 96] | ROCEV2_DUMP_QPF_HAS_KEY),
		   -HAL_EINVAL);
	for (i = 0; i < 2; i++) {                       /* n_res off by one either way */
		refused_u8(off, 8 + 149, (uint8_t)(nres + (i ? 1 : -1)), -HAL_EINVAL);
	}
}

/* ---- collisions and rollback ---------------------------------------------------- */

/* The restore fails with err; the engine is as it was (snapshot). */
static void rolled_back(int err)
{
	memcpy(&snap, &nb.e, sizeof(snap));
	assert_int_equal(rocev2_restore_image(&nb.e, img, img_len, NULL), err);
	same_pools(&snap, &nb.e);
}

static void test_collisions_roll_back(void **state)
{
	struct objs o;
	uint32_t h[8], pd7, cq3, lk, rk, i;
	struct rocev2_queue_attr q;
	struct rocev2_srq_attr sa = { .q = { 0x60000, 0x600, 8 }, .max_sge = 1 };
	struct rocev2_qp_init_attr ia;

	(void)state;
	make_objects(&na.e, &o);       /* PDs 0 2 3, MRs 0-3, CQs 0-2, SRQs 0-1, QPs 0-7 */
	dump(&na, img, &img_len, NULL);

	/* PD slot 0 taken: refused at the first record, nothing made. */
	assert_int_equal(rocev2_alloc_pd(&nb.e, &h[0]), 0);
	memcpy(&snap, &nb.e, sizeof(snap));
	assert_int_equal(rocev2_restore_image(&nb.e, img, img_len, NULL), -HAL_EEXIST);
	if (memcmp(&snap, &nb.e, sizeof(snap)))
		fail_msg("collision on the first record changed the engine");
	/* The engine's own objects go to slots the image does not use:
	 * PD 7, CQ 3. */
	for (i = 1; i < 8; i++)
		assert_int_equal(rocev2_alloc_pd(&nb.e, &h[i]), 0);
	for (i = 0; i < 7; i++)
		assert_int_equal(rocev2_dealloc_pd(&nb.e, h[i]), 0);
	pd7 = h[7];
	for (i = 0; i < 4; i++) {
		q = (struct rocev2_queue_attr){ .ring_addr = 0x9000,
						.dbrec_addr = 0x900, .size = 8 };
		assert_int_equal(rocev2_create_cq(&nb.e, &q, &h[i]), 0);
	}
	for (i = 0; i < 3; i++)
		assert_int_equal(rocev2_destroy_cq(&nb.e, h[i]), 0);
	cq3 = h[3];

	/* MRN 3 taken (another key): the image's PDs made, then undone. */
	for (i = 0; i < 4; i++)
		assert_int_equal(rocev2_reg_mr(&nb.e, pd7, 0, 8, 0, &h[i], &rk), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(rocev2_dereg_mr(&nb.e, h[i]), 0);
	rolled_back(-HAL_EEXIST);
	assert_int_equal(rocev2_dereg_mr(&nb.e, h[3]), 0);

	/* CQ 0 taken: PDs and MRs made and undone. */
	q = (struct rocev2_queue_attr){ .ring_addr = 0x9000, .dbrec_addr = 0x900, .size = 8 };
	assert_int_equal(rocev2_create_cq(&nb.e, &q, &h[0]), 0);
	assert_int_equal(rocev2_handle_index(h[0]), 0);
	rolled_back(-HAL_EEXIST);
	assert_int_equal(rocev2_destroy_cq(&nb.e, h[0]), 0);

	/* SRQ 1 taken: SRQ 0 made too (its slot at generation 3 here, 1 in
	 * the image). */
	for (i = 0; i < 2; i++) {
		assert_int_equal(rocev2_create_srq(&nb.e, pd7, &sa, &h[0]), 0);
		assert_int_equal(rocev2_destroy_srq(&nb.e, h[0]), 0);
	}
	assert_int_equal(rocev2_create_srq(&nb.e, pd7, &sa, &h[0]), 0);
	assert_int_equal(rocev2_create_srq(&nb.e, pd7, &sa, &h[1]), 0);
	assert_int_equal(rocev2_destroy_srq(&nb.e, h[0]), 0);
	rolled_back(-HAL_EEXIST);
	assert_int_equal(rocev2_destroy_srq(&nb.e, h[1]), 0);

	/* QP slot 7 taken: every PD, MR, CQ, SRQ and QPs 0..6 made and
	 * undone (QPs on SRQs included: their references dropped first). */
	for (i = 0; i < 8; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.pd = pd7;
		ia.send_cq = ia.recv_cq = cq3;
		ia.srq = ROCEV2_NO_SRQ;
		assert_int_equal(rocev2_create_qp(&nb.e, &ia, &h[i]), 0);
	}
	for (i = 0; i < 7; i++)
		assert_int_equal(rocev2_destroy_qp(&nb.e, h[i]), 0);
	rolled_back(-HAL_EEXIST);
	assert_int_equal(nb.e.n_qp, 1);
	assert_int_equal(nb.e.n_pd, 1);
	assert_int_equal(nb.e.cqs[3].refcnt, 2);
	assert_int_equal(nb.e.pds[7].refcnt, 1);

	/* Without the colliding QP the same image restores next to the
	 * engine's own objects, and generations move on from the image's. */
	assert_int_equal(rocev2_destroy_qp(&nb.e, h[7]), 0);
	assert_int_equal(rocev2_restore_image(&nb.e, img, img_len, NULL), 0);
	assert_int_equal(nb.e.n_qp, 8);
	assert_int_equal(nb.e.n_pd, 4);
	assert_int_equal(nb.e.n_cq, 4);
	for (i = 0; i < 8; i++)
		same_qp(&na.e, &na.e.qps[i], &nb.e, &nb.e.qps[i]);
	(void)lk;
}

/* A ring outside the target's (smaller) DMA window: -HAL_EFAULT after
 * PDs and MRs were made; rolled back. */
static void test_window_too_small(void **state)
{
	struct objs o;
	long off;

	(void)state;
	make_objects(&na.e, &o);
	/* Keep the MRs inside 64 KiB... */
	na.e.mrs[0].length = 0x8000;
	na.e.mrs[3].addr = 0x8000;
	na.e.mrs[3].length = 8;
	na.e.mrs[4].addr = 0;
	dump(&na, img, &img_len, NULL);
	/* ... but the SRQ rings at 0x40000 are not. */
	node_init(&nb, na.ip, 1, 0x10000);
	rolled_back(-HAL_EFAULT);
	assert_int_equal(nb.e.n_pd + nb.e.n_mr + nb.e.n_cq + nb.e.n_srq, 0);
	/* An MR beyond the window. */
	node_init(&nb, na.ip, 1, 0x8000);
	rolled_back(-HAL_EFAULT);
	off = find_rec(img, img_len, ROCEV2_OBJ_PD, 2);
	assert_int_equal(rocev2_restore_pd(&nb.e, img + off + 8, ROCEV2_DUMP_PD_LEN), 0);
	off = find_rec(img, img_len, ROCEV2_OBJ_MR, 3);                 /* 0x8000 + 8 */
	assert_int_equal(rocev2_restore_mr(&nb.e, img + off + 8, ROCEV2_DUMP_MR_LEN), -HAL_EFAULT);
	assert_int_equal(nb.e.n_mr, 0);
}

/* ---- the peer address override ---------------------------------------------------- */
static void test_peer_override(void **state)
{
	struct objs o;
	struct rocev2_restore_opts opts;
	const uint8_t newmac[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee };
	uint32_t i;

	(void)state;
	make_objects(&na.e, &o);
	/* QPs 3 and 5 talk to the peer that moves. */
	rocev2_av_set_ipv4(&rocev2_qp_lookup(&na.e, o.qpn[5])->attr.av, 0x0a000013u);
	dump(&na, img, &img_len, NULL);
	memset(&opts, 0, sizeof(opts));
	mnic_gid_from_ipv4(opts.old_dgid, 0x0a000013u);   /* new_dgid all zero: refused */
	assert_int_equal(rocev2_image_validate(img, img_len), 0);  /* the image is fine ... */
	memcpy(&snap, &nb.e, sizeof(snap));
	assert_int_equal(rocev2_restore_image(&nb.e, img, img_len, &opts), -HAL_EINVAL);
	if (memcmp(&snap, &nb.e, sizeof(snap)))
		fail_msg("refused options changed the engine");
	mnic_gid_from_ipv4(opts.new_dgid, 0xc0a80107u);
	memcpy(opts.new_dmac, newmac, 6);
	assert_int_equal(rocev2_restore_image(&nb.e, img, img_len, &opts), 0);
	for (i = 0; i < 8; i++) {
		const struct rocev2_qp *a = rocev2_qp_lookup(&na.e, o.qpn[i]);
		const struct rocev2_qp *b = rocev2_qp_lookup(&nb.e, o.qpn[i]);

		if (rocev2_av_ipv4(&a->attr.av) == 0x0a000013u) {
			assert_true(i == 3 || i == 5);
			assert_int_equal(rocev2_av_ipv4(&b->attr.av), 0xc0a80107u);
			assert_memory_equal(b->attr.av.dmac, newmac, 6);
		} else {
			assert_int_equal(rocev2_av_ipv4(&b->attr.av), rocev2_av_ipv4(&a->attr.av));
			assert_memory_equal(b->attr.av.dmac, a->attr.av.dmac, 6);
		}
	}
	/* old_dgid all zero: no override. */
	node_init(&nb, na.ip, 1, WIN);
	memset(opts.old_dgid, 0, sizeof(opts.old_dgid));
	assert_int_equal(rocev2_restore_image(&nb.e, img, img_len, &opts), 0);
	same_engine(&na.e, &nb.e);
}

/* ---- migration in the middle of real traffic ------------------------------------ *
 * A and P run two RC connections; on A, QP 0 has its own RQ, QP 1 takes
 * its receives from an SRQ.  Each side posts the same eight WQEs to the
 * other (SENDs, WRITEs, WRITE with immediate, READs, atomics), so A's
 * requester, completer and responder all have work in flight.  At the
 * cut, the frames on the wire are lost, A is dumped, C (A's address, A's
 * host memory) restores it and takes A's place; C's QPs are resumed as
 * rocev2_resume_context would after the RESUME's ACK (un-stopped, rewound
 * if anything is outstanding) and the traffic must finish exactly. */
#define NQ 2u
#define QBASE(i) (0x10000u + (i) * 0x40000u)
#define SQ_RING(i) (QBASE(i) + 0x0000u)
#define SQ_DB(i) (QBASE(i) + 0x2000u)
#define RQ_RING(i) (QBASE(i) + 0x4000u)
#define RQ_DB(i) (QBASE(i) + 0x6000u)
#define SCQ_RING(i) (QBASE(i) + 0x7000u)
#define SCQ_DB(i) (QBASE(i) + 0x7800u)
#define RCQ_RING(i) (QBASE(i) + 0x8000u)
#define RCQ_DB(i) (QBASE(i) + 0x8800u)
#define LBUF(i) (QBASE(i) + 0x10000u)
#define RMEM(i) (QBASE(i) + 0x20000u)
#define SRQ_RING 0x2000u
#define SRQ_DB 0x4000u
#define CQ_ENTRIES 64u
#define WQ_ENTRIES 16u
#define NSCRIPT 8u
#define NRECV 3u
#define IP_A 0x0a000001u
#define IP_P 0x0a000002u

static struct node *cur;                /* A, or C after the migration */
static uint32_t rkey_of[2];             /* [0]: A's (and C's), [1]: P's */

static void set_db(struct node *n, uint64_t addr, uint32_t index)
{
	memcpy(n->mem + addr, &index, 4);
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31u + i * 7u + (i >> 8));
}

static void put_wqe(struct node *n, unsigned qi, unsigned k, uint8_t op, uint64_t laddr,
		    uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t cmp, uint64_t swap)
{
	struct mnic_send_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = 100u * qi + k;
	w.opcode = op;
	w.send_flags = MNIC_SEND_SIGNALED;
	w.num_sge = 1;
	w.sge[0] = (struct mnic_sge){ laddr, len, n->e.mrs[0].lkey };
	w.remote_addr = raddr;
	w.rkey = rkey;
	w.compare_add = cmp;
	w.swap = swap;
	w.imm_data = 0x1000u + k;
	memcpy(n->mem + SQ_RING(qi) + k * MNIC_WQE_SIZE, &w, sizeof(w));
}

/* The script, from n to its peer on connection qi. */
static void post_script(struct node *n, unsigned qi, uint32_t rkey)
{
	const uint64_t l = LBUF(qi), r = RMEM(qi);

	put_wqe(n, qi, 0, MNIC_WR_SEND, l + 0x0000, 1000, 0, 0, 0, 0);
	put_wqe(n, qi, 1, MNIC_WR_RDMA_WRITE, l + 0x1000, 1500, r + 0x0000, rkey, 0, 0);
	put_wqe(n, qi, 2, MNIC_WR_RDMA_READ, l + 0x2000, 3000, r + 0x4000, rkey, 0, 0);
	put_wqe(n, qi, 3, MNIC_WR_ATOMIC_FETCH_AND_ADD, l + 0x3000, 8, r + 0x8000, rkey, 5, 0);
	put_wqe(n, qi, 4, MNIC_WR_ATOMIC_CMP_AND_SWP, l + 0x3008, 8, r + 0x8000, rkey, 45, 77);
	put_wqe(n, qi, 5, MNIC_WR_SEND, l + 0x0400, 600, 0, 0, 0, 0);
	put_wqe(n, qi, 6, MNIC_WR_RDMA_WRITE_WITH_IMM, l + 0x1800, 700, r + 0xa000, rkey, 0, 0);
	put_wqe(n, qi, 7, MNIC_WR_RDMA_READ, l + 0x4000, 512, r + 0xc000, rkey, 0, 0);
	set_db(n, SQ_DB(qi), NSCRIPT);
}

static void post_recvs(struct node *n, unsigned qi, int srq, unsigned from, unsigned to)
{
	struct mnic_recv_wqe w;
	unsigned k;

	for (k = from; k < to; k++) {
		memset(&w, 0, sizeof(w));
		w.wr_id = 1000u + 100u * qi + k;
		w.num_sge = 1;
		w.sge[0] = (struct mnic_sge){ LBUF(qi) + 0x8000u + k * 0x400u, 1024,
					      n->e.mrs[0].lkey };
		memcpy(n->mem + (srq ? SRQ_RING : RQ_RING(qi)) + k * MNIC_WQE_SIZE, &w, sizeof(w));
	}
	set_db(n, srq ? SRQ_DB : RQ_DB(qi), to);
}

static uint32_t conn_qpn[2][NQ];        /* [0]: A's, [1]: P's */
static unsigned late_recvs;             /* P posts only this many receives first */

static void make_side(struct node *n, unsigned side, int with_srq)
{
	struct rocev2 *e = &n->e;
	struct rocev2_queue_attr q;
	struct rocev2_srq_attr sa;
	struct rocev2_qp_init_attr ia;
	uint32_t pd, lk, srq = ROCEV2_NO_SRQ, scq, rcq;
	unsigned qi;

	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, 0, WIN, ACC_ALL, &lk, &rkey_of[side]), 0);
	if (with_srq) {
		sa = (struct rocev2_srq_attr){ .q = { SRQ_RING, SRQ_DB, WQ_ENTRIES }, .max_sge = 4,
					       .srq_limit = 1 };
		assert_int_equal(rocev2_create_srq(e, pd, &sa, &srq), 0);
	}
	for (qi = 0; qi < NQ; qi++) {
		q = (struct rocev2_queue_attr){ .ring_addr = SCQ_RING(qi),
						.dbrec_addr = SCQ_DB(qi), .size = CQ_ENTRIES };
		assert_int_equal(rocev2_create_cq(e, &q, &scq), 0);
		q = (struct rocev2_queue_attr){ .ring_addr = RCQ_RING(qi),
						.dbrec_addr = RCQ_DB(qi), .size = CQ_ENTRIES };
		assert_int_equal(rocev2_create_cq(e, &q, &rcq), 0);
		memset(&ia, 0, sizeof(ia));
		ia.pd = pd;
		ia.send_cq = scq;
		ia.recv_cq = rcq;
		ia.srq = qi == 1 ? srq : ROCEV2_NO_SRQ;
		ia.sq = (struct rocev2_queue_attr){ .ring_addr = SQ_RING(qi),
						    .dbrec_addr = SQ_DB(qi), .size = WQ_ENTRIES };
		if (ia.srq == ROCEV2_NO_SRQ)
			ia.rq = (struct rocev2_queue_attr){ .ring_addr = RQ_RING(qi),
							    .dbrec_addr = RQ_DB(qi), .size = WQ_ENTRIES };
		ia.max_send_sge = 4;
		ia.max_recv_sge = 4;
		assert_int_equal(rocev2_create_qp(e, &ia, &conn_qpn[side][qi]), 0);
		post_recvs(n, qi, ia.srq != ROCEV2_NO_SRQ, 0,
			   side == 1 && late_recvs ? late_recvs : NRECV);
		fill(n->mem + LBUF(qi), 0x8000, 10u * side + qi);
		fill(n->mem + RMEM(qi), 0x10000, 50u + 10u * side + qi);
		put_le32(n->mem + RMEM(qi) + 0x8000, 40);
		put_le32(n->mem + RMEM(qi) + 0x8004, 0);
	}
}

static const uint8_t conn_key[16] = { 0x6b, 0x65, 0x79, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 };

static void connect_side(struct node *n, unsigned side, struct node *peer)
{
	struct rocev2_qp_attr a;
	unsigned qi;
	uint32_t qpn;

	for (qi = 0; qi < NQ; qi++) {
		qpn = conn_qpn[side][qi];
		memset(&a, 0, sizeof(a));
		a.qp_state = ROCEV2_QPS_INIT;
		a.qp_access_flags = ACC_ALL;
		assert_int_equal(rocev2_modify_qp(&n->e, qpn, &a,
						  M(STATE) | M(ACCESS_FLAGS) | M(PKEY_INDEX) |
							  M(PORT)), 0);
		a.qp_state = ROCEV2_QPS_RTR;
		memcpy(a.av.dmac, peer->mac, 6);
		rocev2_av_set_ipv4(&a.av, peer->ip);
		a.av.ttl = 64;
		a.path_mtu = ROCEV2_MTU_256;
		a.dest_qp_num = conn_qpn[!side][qi];
		a.rq_psn = side ? 0xfffff8u : 0x000100u;        /* the other side's sq_psn */
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		assert_int_equal(rocev2_modify_qp(&n->e, qpn, &a,
						  M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) |
							  M(RQ_PSN) | M(MAX_DEST_RD_ATOMIC) |
							  M(MIN_RNR_TIMER)), 0);
		a.qp_state = ROCEV2_QPS_RTS;
		a.sq_psn = side ? 0x000100u : 0xfffff8u;        /* A's PSNs wrap */
		a.timeout = 10;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		assert_int_equal(rocev2_modify_qp(&n->e, qpn, &a,
						  M(STATE) | M(SQ_PSN) | M(TIMEOUT) | M(RETRY_CNT) |
							  M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC)), 0);
		/* Keyed, as the tools connect: P may be idle while A moves
		 * (never NAK'd, not Paused), and only an authenticated RESUME
		 * moves a QP that is not Paused (rocev2/migrate.c). */
		assert_int_equal(rocev2_set_mig_key(&n->e, qpn, conn_key), 0);
	}
}

static int deliver_one(struct node *from, struct node *to)
{
	uint32_t slot;

	if (from->out_head == from->out_tail)
		return 0;
	slot = from->out_head++ % NFRAMES;
	rocev2_rx(&to->e, from->out[slot], from->out_len[slot]);
	return 1;
}

static unsigned cqes(const struct node *n, uint64_t ring)
{
	unsigned i;
	struct mnic_cqe c;

	for (i = 0; i < CQ_ENTRIES; i++) {
		memcpy(&c, n->mem + ring + i * MNIC_CQE_SIZE, sizeof(c));
		if (c.owner != MNIC_CQE_OWNER(i, CQ_ENTRIES))
			break;
	}
	return i;
}

static int traffic_done(void)
{
	unsigned qi;

	for (qi = 0; qi < NQ; qi++)
		if (cqes(cur, SCQ_RING(qi)) < NSCRIPT || cqes(&np, SCQ_RING(qi)) < NSCRIPT ||
		    cqes(cur, RCQ_RING(qi)) < NRECV || cqes(&np, RCQ_RING(qi)) < NRECV)
			return 0;
	return 1;
}

typedef int (*cut_fn)(void);
static unsigned delivered;
static unsigned cut_at;                 /* cut after this many deliveries (0: never) */
static cut_fn cut_when;
static int run_mode;                    /* how the current run migrates */

static int want_cut(void)
{
	return (cut_at && delivered == cut_at) || (cut_when && cut_when());
}

/* A requester that stopped in SENDING must be in the scheduler FIFO
 * (req.c: budget spent or TX ring full); otherwise nothing ever runs it
 * again.  rocev2_poll() loses it when the responder's replies take the
 * whole slice: it skips rocev2_req_run and does not queue the QP again. */
static void check_no_lost_wakeup(const struct node *n, const char *name)
{
	uint32_t i;

	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		const struct rocev2_qp *qp = &n->e.qps[i];

		if (qp->in_use && qp->state == ROCEV2_QPS_RTS && !qp->stopped && !qp->paused &&
		    !qp->mig.resume_pending && !qp->comp.rnr_wait &&
		    qp->req.state == REQ_STATE_SENDING && !qp->scheduled)
			fail_msg("%s QP %06x: requester left SENDING but not scheduled: "
				 "rocev2_poll lost its wakeup (cut at %u, mode %d)", name, qp->qpn,
				 cut_at, run_mode);
	}
}

/* Run until cut (1) or done (0). */
static int run_traffic(int may_cut)
{
	unsigned steps, qi;

	for (steps = 0; steps < 20000; steps++) {
		int moved = 0;

		rocev2_poll(&cur->e, 2);
		rocev2_poll(&np.e, 2);
		if (deliver_one(cur, &np)) {
			moved = 1;
			delivered++;
			if (may_cut && want_cut())
				return 1;
		}
		if (deliver_one(&np, cur)) {
			moved = 1;
			delivered++;
			if (may_cut && want_cut())
				return 1;
		}
		if (!moved && !rocev2_has_work(&cur->e) && !rocev2_has_work(&np.e)) {
			if (traffic_done())
				return 0;
			check_no_lost_wakeup(cur, cur == &na ? "A" : "C");
			check_no_lost_wakeup(&np, "P");
			now += 1000000;         /* 1 ms: retransmit timers */
			rocev2_run_timers(&cur->e, now);
			rocev2_run_timers(&np.e, now);
		}
	}
	for (qi = 0; qi < NQ; qi++) {
		const struct rocev2_qp *x = rocev2_qp_lookup(&cur->e, conn_qpn[0][qi]);
		const struct rocev2_qp *y = rocev2_qp_lookup(&np.e, conn_qpn[1][qi]);

		print_message("QP %u: A/C state %u req.psn %x comp.psn %x comp.wqe %u "
			      "next_new %u resp.psn %x; P state %u paused %u req.psn %x "
			      "comp.psn %x comp.wqe %u next_new %u resp.psn %x; "
			      "CQEs %u %u %u %u\n",
			      qi, x->state, x->req.psn, x->comp.psn, x->comp.wqe_index,
			      x->req.next_new, x->resp.psn, y->state, y->paused, y->req.psn,
			      y->comp.psn, y->comp.wqe_index, y->req.next_new, y->resp.psn,
			      cqes(cur, SCQ_RING(qi)), cqes(&np, SCQ_RING(qi)),
			      cqes(cur, RCQ_RING(qi)), cqes(&np, RCQ_RING(qi)));
	}
	fail_msg("traffic did not finish (cut at %u, mode %d)", cut_at, run_mode);
	return 0;
}

static void check_cqes(const struct node *n, unsigned qi)
{
	static const uint8_t ops[NSCRIPT] = {
		MNIC_WC_SEND, MNIC_WC_RDMA_WRITE, MNIC_WC_RDMA_READ, MNIC_WC_FETCH_ADD,
		MNIC_WC_COMP_SWAP, MNIC_WC_SEND, MNIC_WC_RDMA_WRITE, MNIC_WC_RDMA_READ,
	};
	static const uint32_t rlen[NRECV] = { 1000, 600, 700 };
	struct mnic_cqe c;
	unsigned k;

	assert_int_equal(cqes(n, SCQ_RING(qi)), NSCRIPT);
	for (k = 0; k < NSCRIPT; k++) {
		memcpy(&c, n->mem + SCQ_RING(qi) + k * MNIC_CQE_SIZE, sizeof(c));
		assert_int_equal(c.status, MNIC_WC_SUCCESS);
		assert_int_equal(c.wr_id, 100u * qi + k);
		assert_int_equal(c.opcode, ops[k]);
	}
	assert_int_equal(cqes(n, RCQ_RING(qi)), NRECV);
	for (k = 0; k < NRECV; k++) {
		memcpy(&c, n->mem + RCQ_RING(qi) + k * MNIC_CQE_SIZE, sizeof(c));
		assert_int_equal(c.status, MNIC_WC_SUCCESS);
		assert_int_equal(c.byte_len, rlen[k]);
		assert_int_equal(c.opcode, k == 2 ? MNIC_WC_RECV_RDMA_WITH_IMM : MNIC_WC_RECV);
		if (k == 2)
			assert_int_equal(c.imm_data, 0x1006u);
	}
}

/* What x's script did to y, and what it read back. */
static void check_data(const struct node *x, unsigned xs, const struct node *y, unsigned ys)
{
	uint8_t want[0x10000];
	unsigned qi;

	for (qi = 0; qi < NQ; qi++) {
		const uint8_t *xl = x->mem + LBUF(qi), *yl = y->mem + LBUF(qi);
		const uint8_t *yr = y->mem + RMEM(qi);

		fill(want, 0x8000, 10u * xs + qi);      /* x's LBUF as it was */
		assert_memory_equal(yl + 0x8000, want + 0x0000, 1000);     /* SEND */
		assert_memory_equal(yl + 0x8400, want + 0x0400, 600);      /* SEND */
		assert_memory_equal(yr + 0x0000, want + 0x1000, 1500);     /* WRITE */
		assert_memory_equal(yr + 0xa000, want + 0x1800, 700);      /* WRITE_IMM */
		fill(want, 0x10000, 50u + 10u * ys + qi);                   /* y's RMEM as it was */
		assert_memory_equal(xl + 0x2000, want + 0x4000, 3000);     /* READ */
		assert_memory_equal(xl + 0x4000, want + 0xc000, 512);      /* READ */
		assert_int_equal(get_le32(xl + 0x3000), 40);               /* FETCH_ADD: before */
		assert_int_equal(get_le32(xl + 0x3008), 45);               /* CMP_SWAP: before */
		assert_int_equal(get_le32(yr + 0x8000), 77);               /* each exactly once */
	}
}

/* What the image of A held at the cut (over all cut points). */
static unsigned seen_track, seen_res, seen_res_pending, seen_rwqe, seen_rwqe_srq, seen_read,
	seen_write, seen_deferred;

static void note_features(const struct rocev2 *e)
{
	unsigned qi, i;

	for (qi = 0; qi < NQ; qi++) {
		const struct rocev2_qp *qp = rocev2_qp_lookup((struct rocev2 *)e, conn_qpn[0][qi]);

		seen_track += qp->req.next_new - qp->comp.wqe_index >= 2;
		for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++)
			seen_res += qp->resp.res[i].type != 0;
		seen_res_pending += qp->resp.res_pending != 0;
		seen_rwqe += qp->resp.rwqe_valid && qp->resp.rwqe_offset && qi == 0;
		seen_rwqe_srq += qp->resp.rwqe_valid && qp->resp.rwqe_offset && qi == 1;
		seen_read += qp->comp.read_offset != 0;
		seen_write += qp->resp.write_resid != 0;
		seen_deferred += qp->resp.ack_deferred;
	}
}

/* How C takes over: as rocev2_resume_context would once the RESUME is
 * ACKed (emulated: engine only), or the real thing (RESUME on the wire),
 * optionally after P was paused by the stopped A's NAK_STOPPED. */
enum { MIG_EMULATED, MIG_RESUME, MIG_RESUME_PAUSED };

/* After the cut: A stays stopped while P's timers resend to it. */
static void run_stopped_source(void)
{
	unsigned steps;

	for (steps = 0; steps < 400; steps++) {
		int moved = deliver_one(&na, &np) | deliver_one(&np, &na);

		rocev2_poll(&na.e, 8);
		rocev2_poll(&np.e, 8);
		if (!moved && !rocev2_has_work(&na.e) && !rocev2_has_work(&np.e)) {
			now += 1000000;
			rocev2_run_timers(&na.e, now);
			rocev2_run_timers(&np.e, now);
		}
	}
}

static unsigned peer_paused_runs;
static uint32_t qp_bytes_min = UINT32_MAX, qp_bytes_max, qpsrq_bytes_min = UINT32_MAX,
		qpsrq_bytes_max;

/* One run: traffic until the cut, migrate A to C, finish.  Returns 0 if
 * the traffic finished before the cut point. */
static int migrate_run(unsigned at, cut_fn when, int mode)
{
	struct rocev2_dump_stats st;
	size_t len2;
	unsigned qi, i;

	now = 0;
	run_mode = mode;
	node_init(&na, IP_A, 1, WIN);
	node_init(&np, IP_P, 2, WIN);
	make_side(&na, 0, 1);
	make_side(&np, 1, 0);
	connect_side(&na, 0, &np);
	connect_side(&np, 1, &na);
	for (qi = 0; qi < NQ; qi++) {
		post_script(&na, qi, rkey_of[1]);
		post_script(&np, qi, rkey_of[0]);
		assert_int_equal(rocev2_sq_doorbell(&na.e, conn_qpn[0][qi]), 0);
		assert_int_equal(rocev2_sq_doorbell(&np.e, conn_qpn[1][qi]), 0);
	}
	cur = &na;
	delivered = 0;
	cut_at = at;
	cut_when = when;
	if (!run_traffic(1)) {
		assert_int_equal(late_recvs, 0);
		check_cqes(&na, 0);
		check_data(&na, 0, &np, 1);
		check_data(&np, 1, &na, 0);
		return 0;
	}

	/* The cut: A is dumped (stopped in the same step). */
	dump(&na, img, &img_len, &st);
	note_features(&na.e);
	if (st.bytes[ROCEV2_OBJ_QP] < qp_bytes_min)
		qp_bytes_min = st.bytes[ROCEV2_OBJ_QP];
	if (st.bytes[ROCEV2_OBJ_QP] > qp_bytes_max)
		qp_bytes_max = st.bytes[ROCEV2_OBJ_QP];
	if (st.bytes[ROCEV2_OBJ_QP_SRQ] < qpsrq_bytes_min)
		qpsrq_bytes_min = st.bytes[ROCEV2_OBJ_QP_SRQ];
	if (st.bytes[ROCEV2_OBJ_QP_SRQ] > qpsrq_bytes_max)
		qpsrq_bytes_max = st.bytes[ROCEV2_OBJ_QP_SRQ];
	node_init(&nc, IP_A, 1, WIN);
	memcpy(nc.mem, na.mem, WIN);    /* the host's memory moves with it */
	assert_int_equal(rocev2_restore_image(&nc.e, img, img_len, NULL), 0);
	same_engine(&na.e, &nc.e);
	dump(&nc, img2, &len2, NULL);
	assert_int_equal(len2, img_len);
	assert_memory_equal(img, img2, img_len);
	assert_int_equal(st.objects[ROCEV2_OBJ_QP] + st.objects[ROCEV2_OBJ_QP_SRQ], 2);
	if (mode == MIG_RESUME_PAUSED) {
		uint32_t pauses = (uint32_t)np.e.cnt.mig_pauses;

		run_stopped_source();
		peer_paused_runs += np.e.cnt.mig_pauses != pauses;
	}
	/* What is still on the wire to or from A is lost. */
	na.out_head = na.out_tail;
	np.out_head = np.out_tail;
	if (late_recvs)
		for (qi = 0; qi < NQ; qi++)
			post_recvs(&np, qi, 0, late_recvs, NRECV);

	if (mode == MIG_EMULATED) {
		for (i = 0; i < ROCEV2_MAX_QP; i++) {
			struct rocev2_qp *qp = &nc.e.qps[i];

			if (!qp->in_use)
				continue;
			qp->stopped = 0;
			if (qp->comp.rnr_wait) {
				qp->comp.rnr_wait = 0;
				qp->req.need_retry = 1;
			}
			if (qp->req.started && qp->req.next_new != qp->comp.wqe_index)
				qp->req.need_retry = 1;
			rocev2_sched(&nc.e, qp);
		}
		nc.e.owner_stopped[0] = 0;
	} else {
		assert_int_equal(rocev2_resume_context(&nc.e, 0), 0);
	}
	cur = &nc;
	assert_int_equal(run_traffic(0), 0);
	for (qi = 0; qi < NQ; qi++) {
		check_cqes(&nc, qi);
		check_cqes(&np, qi);
	}
	check_data(&nc, 0, &np, 1);
	check_data(&np, 1, &nc, 0);
	/* Nothing went wrong on the way. */
	assert_int_equal(nc.e.cnt.resp_rem_acc_naks + nc.e.cnt.resp_inv_req_naks +
			 nc.e.cnt.resp_rem_op_naks + np.e.cnt.resp_rem_acc_naks +
			 np.e.cnt.resp_inv_req_naks + np.e.cnt.resp_rem_op_naks, 0);
	if (mode != MIG_EMULATED)
		assert_int_equal(nc.e.cnt.mig_resumes_acked, NQ);
	destroy_all(&nc.e);
	return 1;
}

static void test_migrate_sweep(void **state)
{
	unsigned at, runs = 0;

	(void)state;
	/* Without a cut, for reference. */
	assert_int_equal(migrate_run(0, NULL, MIG_EMULATED), 0);
	for (at = 1; migrate_run(at, NULL, MIG_EMULATED); at++) {
		assert_int_equal(migrate_run(at, NULL, MIG_RESUME), 1);
		assert_int_equal(migrate_run(at, NULL, MIG_RESUME_PAUSED), 1);
		runs++;
	}
	print_message("migrated at %u cut points x 3 ways (P paused by NAK_STOPPED in %u); "
		      "A's image held: >=2 WQEs in flight %u, "
		      "responder resources %u, reply in progress %u, SEND in progress %u "
		      "(SRQ %u), READ being placed %u, WRITE in progress %u, deferred ACK %u\n",
		      runs, peer_paused_runs, seen_track, seen_res, seen_res_pending, seen_rwqe,
		      seen_rwqe_srq,
		      seen_read, seen_write, seen_deferred);
	print_message("QP record in the middle of traffic: %u..%u bytes, QP on SRQ %u..%u\n",
		      qp_bytes_min, qp_bytes_max, qpsrq_bytes_min, qpsrq_bytes_max);
	assert_true(runs > 100);
	assert_true(peer_paused_runs > 10);
	assert_true(seen_track && seen_res && seen_res_pending && seen_rwqe && seen_rwqe_srq &&
		    seen_read && seen_write);
}

/* Cuts chosen by what A is doing, so that each case occurs for sure. */
static struct rocev2_qp *a_qp(unsigned qi)
{
	return rocev2_qp_lookup(&na.e, conn_qpn[0][qi]);
}
static int cut_reply(void) { return a_qp(0)->resp.res_pending != 0; }
static int cut_send_srq(void) { return a_qp(1)->resp.rwqe_valid && a_qp(1)->resp.rwqe_offset; }
static int cut_send_rq(void) { return a_qp(0)->resp.rwqe_valid && a_qp(0)->resp.rwqe_offset; }
static int cut_read(void) { return a_qp(1)->comp.read_offset != 0; }
static int cut_write(void) { return a_qp(0)->resp.write_resid != 0; }
static int cut_inflight(void) { return a_qp(0)->req.next_new - a_qp(0)->comp.wqe_index >= 4; }
static int cut_atomics(void)
{
	return a_qp(0)->resp.res[1].type == OP_FETCH_ADD && a_qp(0)->resp.res[2].type;
}

static int cut_rnr_wait(void) { return a_qp(0)->comp.rnr_wait && a_qp(1)->comp.rnr_wait; }

static void test_migrate_cases(void **state)
{
	static const cut_fn cases[] = {
		cut_reply, cut_send_srq, cut_send_rq, cut_read,
		cut_write, cut_inflight, cut_atomics,
	};
	unsigned i, mode;

	(void)state;
	for (mode = MIG_EMULATED; mode <= MIG_RESUME_PAUSED; mode++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			if (!migrate_run(0, cases[i], (int)mode))
				fail_msg("case %u never happened", i);
	/* Dumped in an RNR wait: the restore has no RNR timer, the resume
	 * ends the wait (the time asked for has passed). */
	late_recvs = 1;
	for (mode = MIG_EMULATED; mode <= MIG_RESUME_PAUSED; mode++)
		if (!migrate_run(0, cut_rnr_wait, (int)mode))
			fail_msg("no RNR wait");
	late_recvs = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_empty_context, setup),
		cmocka_unit_test_setup(test_round_trip_objects, setup),
		cmocka_unit_test_setup(test_restore_commands, setup),
		cmocka_unit_test_setup(test_round_trip_random_state, setup),
		cmocka_unit_test_setup(test_layout, setup),
		cmocka_unit_test_setup(test_enospc, setup),
		cmocka_unit_test_setup(test_dump_stops_everything, setup),
		cmocka_unit_test_setup(test_refuse_truncated, setup),
		cmocka_unit_test_setup(test_refuse_bit_flips, setup),
		cmocka_unit_test_setup(test_refuse_header, setup),
		cmocka_unit_test_setup(test_refuse_records, setup),
		cmocka_unit_test_setup(test_refuse_qp_parts, setup),
		cmocka_unit_test_setup(test_refuse_duplicates, setup),
		cmocka_unit_test_setup(test_collisions_roll_back, setup),
		cmocka_unit_test_setup(test_window_too_small, setup),
		cmocka_unit_test_setup(test_peer_override, setup),
		cmocka_unit_test_setup(test_migrate_sweep, setup),
		cmocka_unit_test_setup(test_migrate_cases, setup),
	};
	return cmocka_run_group_tests_name("rocev2/dump", tests, NULL, NULL);
}
