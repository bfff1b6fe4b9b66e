/* Harness shared by test_req.c and test_comp.c: a requester engine with a
 * real SQ/CQ in a fake host window, a second engine playing the peer's
 * address to parse what it sends, a fake clock and the real timer heap.
 * Static functions: each test binary includes this once. */
#ifndef REQCOMP_HARNESS_H
#define REQCOMP_HARNESS_H

#include "cmocka_main.h"

#include <stdio.h>
#include <string.h>

#include "internal.h"

#define HOST_SIZE   (1u << 20)
#define SQ_RING     0x00000u
#define SQ_SIZE     128u                /* 64 KiB of WQEs */
#define SQ_DBREC    0x10000u
#define CQ_DBREC    0x10008u
#define CQ_RING     0x11000u
#define CQ_SIZE     512u                /* 16 KiB of CQEs */
#define SRC         0x20000u            /* MR rw: 0x20000 .. 0x80000 */
#define DST         0x50000u
#define MR_BASE     0x20000u
#define MR_LEN      0x60000u
#define RO_BASE     0x80000u            /* MR without LOCAL_WRITE */
#define RO_LEN      0x10000u
#define REMOTE_VA   0x123456789abcd000ull
#define REMOTE_RKEY 0x00c0ffeeu
#define DEST_QPN    0x000456u
#define MAX_FRAMES  600u

static const uint8_t our_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
#define OUR_IP  0x0a000001u
#define PEER_IP 0x0a000002u

static uint8_t host[HOST_SIZE];
static struct hal_dma dma, peer_dma;
static uint8_t peer_host[64];
static struct rocev2 eng, peer;
static struct rocev2 *const e = &eng;
static struct rocev2_qp peer_qp;        /* only an address vector for peer frames */
static uint64_t now;
static uint8_t frames[MAX_FRAMES][ROCEV2_TX_MAX];
static size_t frame_len[MAX_FRAMES];
static unsigned nframes;
static int tx_rc;                       /* what our port returns */
static uint8_t peer_frame[ROCEV2_TX_MAX];
static size_t peer_len;
static uint32_t pd, cq, qpn, lkey, ro_lkey;
static struct rocev2_qp *qp;
static uint32_t sq_pi, cq_ci;

struct cfg {
	unsigned mtu;                   /* enum rocev2_mtu */
	uint32_t sq_psn;
	uint8_t timeout, retry_cnt, rnr_retry, max_rd_atomic;
	int sig_all;
	uint32_t max_send_sge;
};
static const struct cfg cfg_default = { ROCEV2_MTU_256, 0, 10, 3, 3, 4, 0, MNIC_MAX_SGE };

static int our_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	if (tx_rc)
		return tx_rc;
	assert_true(nframes < MAX_FRAMES);
	assert_true(len <= ROCEV2_TX_MAX);
	memcpy(frames[nframes], frame, len);
	frame_len[nframes++] = len;
	return 0;
}

static int peer_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	memcpy(peer_frame, frame, len);
	peer_len = len;
	return 0;
}

static uint64_t fake_now(void *ctx)
{
	(void)ctx;
	return now;
}

#define M(a) ROCEV2_QP_##a

static void h_init(const struct cfg *c)
{
	struct rocev2_env env = {
		.tx = our_tx, .now_ns = fake_now, .dma = &dma, .ipv4 = OUR_IP,
	};
	struct rocev2_env penv = {
		.tx = peer_tx, .now_ns = fake_now, .dma = &peer_dma,
		.ipv4 = PEER_IP,
	};
	struct rocev2_queue_attr cqa = { .ring_addr = CQ_RING, .dbrec_addr = CQ_DBREC, .size = CQ_SIZE };
	struct rocev2_qp_init_attr ia = {
		.srq = ROCEV2_NO_SRQ, .sq = { SQ_RING, SQ_DBREC, SQ_SIZE },
		.max_send_sge = c->max_send_sge, .max_recv_sge = 4, .sq_sig_all = c->sig_all,
	};
	struct rocev2_qp_attr a = {
		.path_mtu = c->mtu, .qp_access_flags = 0, .rq_psn = 0x777, .sq_psn = c->sq_psn,
		.dest_qp_num = DEST_QPN,
		.av = { .dmac = { 0x02, 0, 0, 0, 0, 0x02 }, .ttl = 64, .tos = 0, .dgid = MNIC_GID_V4(PEER_IP) },
		.timeout = c->timeout, .retry_cnt = c->retry_cnt, .rnr_retry = c->rnr_retry,
		.min_rnr_timer = 1, .max_rd_atomic = c->max_rd_atomic, .max_dest_rd_atomic = 4,
	};
	uint32_t rkey;
	unsigned i;

	memset(host, 0, sizeof(host));
	for (i = 0; i < MR_LEN; i++)
		host[MR_BASE + i] = (uint8_t)(i * 7u + 3u + (i >> 8));
	hal_dma_window_init(&dma, host, sizeof(host));
	hal_dma_window_init(&peer_dma, peer_host, sizeof(peer_host));
	now = 1000000;
	nframes = 0;
	tx_rc = 0;
	sq_pi = cq_ci = 0;
	memcpy(env.mac, our_mac, 6);
	memcpy(penv.mac, peer_mac, 6);
	assert_int_equal(rocev2_init(e, &env), 0);
	assert_int_equal(rocev2_init(&peer, &penv), 0);
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, MR_BASE, MR_LEN,
				       ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_READ, &lkey,
				       &rkey), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, RO_BASE, RO_LEN, 0, &ro_lkey, &rkey), 0);
	assert_int_equal(rocev2_create_cq(e, &cqa, &cq), 0);
	ia.pd = pd;
	ia.send_cq = ia.recv_cq = cq;
	assert_int_equal(rocev2_create_qp(e, &ia, &qpn), 0);
	a.qp_state = ROCEV2_QPS_INIT;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | M(PKEY_INDEX) | M(PORT) |
							       M(ACCESS_FLAGS)), 0);
	a.qp_state = ROCEV2_QPS_RTR;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | M(AV) | M(PATH_MTU) |
							       M(DEST_QPN) | M(RQ_PSN) |
							       M(MAX_DEST_RD_ATOMIC) |
							       M(MIN_RNR_TIMER)), 0);
	a.qp_state = ROCEV2_QPS_RTS;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE) | M(SQ_PSN) | M(TIMEOUT) |
							       M(RETRY_CNT) | M(RNR_RETRY) |
							       M(MAX_QP_RD_ATOMIC)), 0);
	qp = rocev2_qp_lookup(e, qpn);
	assert_non_null(qp);

	memset(&peer_qp, 0, sizeof(peer_qp));
	memcpy(peer_qp.attr.av.dmac, our_mac, 6);
	rocev2_av_set_ipv4(&peer_qp.attr.av, OUR_IP);
	peer_qp.attr.av.ttl = 64;
	peer_qp.attr.dest_qp_num = qpn;
	peer_qp.sport = 0xd000;
	peer_qp.mtu = 4096;
}

static void set_state(uint32_t state)
{
	struct rocev2_qp_attr a = { .qp_state = state };

	assert_int_equal(rocev2_modify_qp(e, qpn, &a, M(STATE)), 0);
}

static struct mnic_send_wqe wqe(uint8_t opcode, uint64_t wr_id, uint64_t addr, uint32_t len,
				uint8_t flags)
{
	struct mnic_send_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.opcode = opcode;
	w.send_flags = flags;
	w.num_sge = 1;
	w.imm_data = 0xa1b2c3d4u;
	w.remote_addr = REMOTE_VA;
	w.rkey = REMOTE_RKEY;
	w.sge[0].addr = addr;
	w.sge[0].length = len;
	w.sge[0].lkey = addr >= RO_BASE ? ro_lkey : lkey;
	return w;
}

/* Write the WQE into the next SQ slot, publish the producer index, ring. */
static uint32_t post(const struct mnic_send_wqe *w)
{
	struct mnic_dbrec rec = { 0, 0 };
	uint32_t index = sq_pi++;

	memcpy(host + SQ_RING + (index % SQ_SIZE) * MNIC_WQE_SIZE, w, sizeof(*w));
	rec.index = sq_pi;
	memcpy(host + SQ_DBREC, &rec, sizeof(rec));
	assert_int_equal(rocev2_sq_doorbell(e, qpn), 0);
	return index;
}

static uint32_t post_op(uint8_t opcode, uint64_t wr_id, uint64_t addr, uint32_t len,
			uint8_t flags)
{
	struct mnic_send_wqe w = wqe(opcode, wr_id, addr, len, flags);

	return post(&w);
}

/* Let the engine send; returns the frames sent. */
static unsigned pump(void)
{
	unsigned before = nframes, i;

	for (i = 0; i < 1000 && rocev2_has_work(e); i++)
		rocev2_poll(e, 64);
	return nframes - before;
}

static void advance(uint64_t ns)
{
	now += ns;
	rocev2_run_timers(e, now);
}

static void frame_pkt(unsigned i, struct rocev2_pkt *p)
{
	assert_true(i < nframes);
	assert_int_equal(rocev2_parse(&peer, frames[i], frame_len[i], p), 0);
	assert_int_equal(p->qpn, DEST_QPN);
}

/* A response from the peer: AETH syndrome/MSN where the opcode has one. */
static void inject(uint8_t opcode, uint32_t psn, uint8_t syndrome, const void *payload,
		   uint32_t paylen, uint64_t orig)
{
	const struct rocev2_opcode_info *info = rocev2_opcode(opcode);
	struct rocev2_tx t;

	rocev2_tx_prepare(&peer, &peer_qp, &t, opcode, psn & BTH_PSN_MASK, 0, 0, paylen);
	if (info->mask & OPM_AETH)
		aeth_init((struct aeth *)(t.bth + info->aeth), syndrome, 1);
	if (info->mask & OPM_ATMACK)
		atmack_init((struct atmack *)(t.bth + info->atmack), orig);
	if (paylen)
		memcpy(t.payload, payload, paylen);
	assert_int_equal(rocev2_tx_send(&peer, &t), 0);
	rocev2_rx(e, peer_frame, peer_len);
}

static void ack(uint32_t psn)
{
	inject(OP_ACKNOWLEDGE, psn, AETH_ACK_UNLIMITED, NULL, 0, 0);
}

static int cq_poll(struct mnic_cqe *c)
{
	struct mnic_dbrec rec = { 0, 0 };
	const uint8_t *slot = host + CQ_RING + (cq_ci % CQ_SIZE) * MNIC_CQE_SIZE;

	memcpy(c, slot, sizeof(*c));
	if (c->owner != MNIC_CQE_OWNER(cq_ci, CQ_SIZE))
		return 0;
	cq_ci++;
	rec.index = cq_ci;
	memcpy(host + CQ_DBREC, &rec, sizeof(rec));
	return 1;
}

static void expect_cqe(uint64_t wr_id, uint8_t status, uint8_t opcode, uint32_t byte_len)
{
	struct mnic_cqe c;

	assert_true(cq_poll(&c));
	assert_int_equal(c.wr_id, wr_id);
	assert_int_equal(c.status, status);
	if (status == MNIC_WC_SUCCESS) {
		assert_int_equal(c.opcode, opcode);
		assert_int_equal(c.byte_len, byte_len);
	}
	assert_int_equal(c.qp_num, qpn);
}

static void expect_no_cqe(void)
{
	struct mnic_cqe c;

	assert_false(cq_poll(&c));
}

#endif
