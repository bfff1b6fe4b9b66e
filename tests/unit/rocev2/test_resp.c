/* rocev2/resp.c, the responder: request frames crafted here go in through
 * rocev2_rx; the ACK/NAK/response frames it sends are captured and checked
 * byte by byte where it matters, with the CQEs and the host memory it
 * wrote.  No doubles: the real recv.c, qp.c, pd/mr/cq/srq.c, queue.c,
 * net.c, icrc.c, rocev2.c, and, for the loopback test at the end, the
 * real req.c and comp.c as the peer's requester. */
#include "cmocka_main.h"

#include <string.h>

#include "internal.h"

/* ---- host memory layout ------------------------------------------------ */
#define WIN (1u << 20)
#define RCQ_RING 0x00000u       /* 64 CQEs */
#define RCQ_DB 0x00800u
#define SCQ_RING 0x01000u
#define SCQ_DB 0x01800u
#define RQ_RING 0x02000u        /* 16 WQEs of 512 B */
#define RQ_DB 0x04000u
#define SQ_RING 0x06000u
#define SQ_DB 0x08000u
#define SRQ_RING 0x0a000u
#define SRQ_DB 0x0c000u
#define RECV_BUF 0x10000u       /* MR: LOCAL_WRITE, receive buffers */
#define RECV_LEN 0x10000u
#define RMEM 0x20000u           /* MR: remote write/read/atomic */
#define RMEM_LEN 0x10000u
#define ROMEM 0x30000u          /* MR: remote read only */
#define ROMEM_LEN 0x1000u
#define CQ_SIZE 64u
#define RQ_SIZE 16u

static uint8_t mem[WIN];
static struct hal_dma dma;
static struct rocev2 eng;
static struct rocev2 *const e = &eng;
static uint64_t now;

static const uint8_t our_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
#define OUR_IP 0x0a000001u
#define PEER_IP 0x0a000002u
#define PEER_QPN 0x000123u
#define RQ_PSN 1000u
#define MTU 256u
#define RNR_TIMER 12u

static uint32_t pd, rcq, scq, qpn, lkey_recv, rkey_rmem, rkey_ro, dut_dest_qpn;
static struct rocev2_qp *qp;
static uint32_t rq_pi, rcq_ci;

/* ---- transmit capture ----------------------------------------------------- */
#define MAX_FRAMES 64
#define FRAME_MAX 4200
static uint8_t frames[MAX_FRAMES][FRAME_MAX];
static size_t frame_len[MAX_FRAMES];
static unsigned nframes, tx_fail;

static int fake_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	if (tx_fail) {
		tx_fail--;
		return -HAL_EAGAIN;
	}
	assert_true(nframes < MAX_FRAMES && len <= FRAME_MAX);
	memcpy(frames[nframes], frame, len);
	frame_len[nframes++] = len;
	return 0;
}

static uint64_t fake_now(void *ctx)
{
	(void)ctx;
	return now;
}

/* Captured frame i: every field the responder chose. */
struct out {
	uint8_t opcode, syndrome, ackreq;
	uint32_t psn, dqpn, msn, paylen;
	uint64_t orig;
	const uint8_t *payload;
	const uint8_t *f;
};

static struct out frame(unsigned i)
{
	struct out o;
	const uint8_t *f = frames[i], *bth = f + ROCEV2_HDR_OFFSET;
	const struct rocev2_opcode_info *info;
	uint32_t ip_len, pad;

	assert_true(i < nframes);
	memset(&o, 0, sizeof(o));
	o.f = f;
	o.opcode = bth[0];
	info = rocev2_opcode(o.opcode);
	assert_true(info->mask & OPM_RESP);
	/* Addressing: our MAC/IP to the QP's address vector, UDP 4791. */
	assert_memory_equal(f + 6, our_mac, 6);
	assert_int_equal(get_be16(f + 12), ETHERTYPE_IPV4);
	assert_int_equal(get_be32(f + ETH_HLEN + 12), OUR_IP);
	assert_int_equal(get_be16(f + ETH_HLEN + IPV4_HLEN + 2), ROCEV2_UDP_DPORT);
	ip_len = get_be16(f + ETH_HLEN + 2);
	assert_int_equal(frame_len[i], ETH_HLEN + ip_len);
	/* ICRC over IPv4 .. pad, least significant byte first. */
	assert_int_equal(get_le32(f + ETH_HLEN + ip_len - ICRC_LEN),
			 rocev2_icrc(f + ETH_HLEN, ip_len - ICRC_LEN));
	pad = bth_pad((const struct bth *)bth);
	o.dqpn = get_be24(bth + 5);
	o.ackreq = !!(bth[8] & BTH_ACKREQ);
	o.psn = get_be24(bth + 9);
	if (info->mask & OPM_AETH) {
		o.syndrome = bth[info->aeth];
		o.msn = get_be24(bth + info->aeth + 1);
	}
	if (info->mask & OPM_ATMACK)
		o.orig = get_be64(bth + info->atmack);
	o.paylen = ip_len - IPV4_HLEN - UDP_HLEN - info->hdr_len - pad - ICRC_LEN;
	o.payload = bth + info->hdr_len;
	assert_int_equal(o.dqpn, dut_dest_qpn);
	return o;
}

static void expect_ack(unsigned i, uint8_t syndrome, uint32_t psn, uint32_t msn)
{
	struct out o = frame(i);

	assert_int_equal(o.opcode, OP_ACKNOWLEDGE);
	assert_int_equal(o.syndrome, syndrome);
	assert_int_equal(o.psn, psn);
	assert_int_equal(o.msn, msn);
	/* NAK_STOPPED carries the migration extension (here unkeyed: 8
	 * bytes, version 2, kind 3, epoch 0; rocev2/migrate.c). */
	if (syndrome == AETH_NAK_STOPPED) {
		static const uint8_t ext[8] = { 2, 0, 3, 0, 0, 0, 0, 0 };

		assert_int_equal(o.paylen, 8);
		assert_memory_equal(o.payload, ext, 8);
		return;
	}
	assert_int_equal(o.paylen, 0);
}

/* ---- request frames ---------------------------------------------------------- */
struct req {
	uint8_t opcode;
	uint32_t psn;
	int ackreq;
	uint64_t va;                    /* RETH / AtomicETH */
	uint32_t rkey, len;
	uint64_t swap_add, compare;
	uint32_t imm;                   /* ImmDt or IETH */
	const void *payload;
	uint32_t paylen;
	uint32_t src_ip;                /* 0: PEER_IP */
	const uint8_t *src_mac;         /* NULL: peer_mac */
	uint32_t qpn;                   /* 0: the QP under test */
	int se;                         /* BTH Solicited Event */
};

static uint8_t rxf[FRAME_MAX];

static size_t build(const struct req *r)
{
	const struct rocev2_opcode_info *info = rocev2_opcode(r->opcode);
	uint8_t *f = rxf, *ip = f + ETH_HLEN, *udp = ip + IPV4_HLEN, *bth = udp + UDP_HLEN;
	unsigned pad = (unsigned)(-r->paylen & 3u);
	uint32_t ip_len = IPV4_HLEN + UDP_HLEN + info->hdr_len + r->paylen + pad + ICRC_LEN;
	uint32_t sum = 0;
	unsigned i;

	assert_true(info->mask & OPM_REQ);
	memset(f, 0, sizeof(rxf));
	memcpy(f, our_mac, 6);
	memcpy(f + 6, r->src_mac ? r->src_mac : peer_mac, 6);
	put_be16(f + 12, ETHERTYPE_IPV4);
	ip[0] = IPV4_VER_IHL;
	put_be16(ip + 2, (uint16_t)ip_len);
	put_be16(ip + 6, IPV4_FLAG_DF);
	ip[8] = 64;
	ip[9] = IPV4_PROTO_UDP;
	put_be32(ip + 12, r->src_ip ? r->src_ip : PEER_IP);
	put_be32(ip + 16, OUR_IP);
	for (i = 0; i < IPV4_HLEN; i += 2)
		sum += get_be16(ip + i);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	put_be16(ip + 10, (uint16_t)~sum);
	put_be16(udp, 0xc123);
	put_be16(udp + 2, ROCEV2_UDP_DPORT);
	put_be16(udp + 4, (uint16_t)(ip_len - IPV4_HLEN));
	bth_init((struct bth *)bth, r->opcode, r->se, pad, BTH_DEF_PKEY, r->qpn ? r->qpn : qpn,
		 r->ackreq, r->psn);
	if (info->mask & OPM_RETH)
		reth_init((struct reth *)(bth + info->reth), r->va, r->rkey, r->len);
	if (info->mask & OPM_ATMETH)
		atmeth_init((struct atmeth *)(bth + info->atmeth), r->va, r->rkey, r->swap_add,
			    r->compare);
	if (info->mask & OPM_IMMDT)
		immdt_init((struct immdt *)(bth + info->immdt), r->imm);
	if (info->mask & OPM_IETH)
		ieth_init((struct ieth *)(bth + info->ieth), r->imm);
	if (r->paylen)
		memcpy(bth + info->hdr_len, r->payload, r->paylen);
	put_le32(ip + ip_len - ICRC_LEN, rocev2_icrc(ip, ip_len - ICRC_LEN));
	return ETH_HLEN + ip_len;
}

static void inject_raw(const struct req *r)
{
	rocev2_rx(e, rxf, build(r));
}

static void inject(const struct req *r)
{
	uint64_t before = e->cnt.rx_req_packets;

	rocev2_rx(e, rxf, build(r));
	/* The frame must have passed recv.c: we test the responder. */
	assert_int_equal(e->cnt.rx_req_packets, before + 1);
}

#define REQ(...) inject(&(struct req){ __VA_ARGS__ })

/* ---- host queues ------------------------------------------------------------- */
static void post_recv(uint64_t wr_id, const struct mnic_sge *sge, unsigned n)
{
	struct mnic_recv_wqe w;
	struct mnic_dbrec db = { 0, 0 };

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.num_sge = (uint8_t)n;
	memcpy(w.sge, sge, n * sizeof(*sge));
	memcpy(mem + RQ_RING + (rq_pi & (RQ_SIZE - 1u)) * MNIC_WQE_SIZE, &w, sizeof(w));
	db.index = ++rq_pi;
	memcpy(mem + RQ_DB, &db, sizeof(db));
	assert_int_equal(rocev2_rq_doorbell(e, qpn), 0);
}

static void post_recv1(uint64_t wr_id, uint64_t addr, uint32_t len)
{
	struct mnic_sge s = { addr, len, lkey_recv };

	post_recv(wr_id, &s, 1);
}

/* Next CQE of the receive CQ, or 0 if none. */
static int poll_cq(struct mnic_cqe *c)
{
	struct mnic_dbrec db = { 0, 0 };

	memcpy(c, mem + RCQ_RING + (rcq_ci & (CQ_SIZE - 1u)) * MNIC_CQE_SIZE, sizeof(*c));
	if (c->owner != MNIC_CQE_OWNER(rcq_ci, CQ_SIZE))
		return 0;
	db.index = ++rcq_ci;
	memcpy(mem + RCQ_DB, &db, sizeof(db));
	return 1;
}

static struct mnic_cqe expect_cqe(uint64_t wr_id, uint8_t status, uint8_t opcode, uint32_t byte_len)
{
	struct mnic_cqe c;

	assert_true(poll_cq(&c));
	assert_int_equal(c.wr_id, wr_id);
	assert_int_equal(c.status, status);
	if (status == MNIC_WC_SUCCESS) {
		assert_int_equal(c.opcode, opcode);
		assert_int_equal(c.byte_len, byte_len);
	}
	assert_int_equal(c.qp_num, qpn);
	assert_int_equal(c.src_qp, dut_dest_qpn);
	return c;
}

static void expect_no_cqe(void)
{
	struct mnic_cqe c;

	assert_false(poll_cq(&c));
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7u);
}

static void put_mem64(uint64_t a, uint64_t v)
{
	put_le32(mem + a, (uint32_t)v);
	put_le32(mem + a + 4, (uint32_t)(v >> 32));
}

static uint64_t get_mem64(uint64_t a)
{
	return (uint64_t)get_le32(mem + a) | (uint64_t)get_le32(mem + a + 4) << 32;
}

static int next_event(struct rocev2_event *ev)
{
	return rocev2_get_event(e, 0, ev);
}

/* ---- fixture --------------------------------------------------------------- */
static void qp_to_rts(uint32_t rq_psn, uint32_t access, uint8_t max_dest_rd_atomic)
{
	struct rocev2_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = ROCEV2_QPS_INIT;
	a.qp_access_flags = access;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_ACCESS_FLAGS |
						       ROCEV2_QP_PKEY_INDEX | ROCEV2_QP_PORT), 0);
	a.qp_state = ROCEV2_QPS_RTR;
	memcpy(a.av.dmac, peer_mac, 6);
	rocev2_av_set_ipv4(&a.av, PEER_IP);
	a.av.ttl = 64;
	a.path_mtu = ROCEV2_MTU_256;
	a.dest_qp_num = dut_dest_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = max_dest_rd_atomic;
	a.min_rnr_timer = RNR_TIMER;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_AV |
						       ROCEV2_QP_PATH_MTU | ROCEV2_QP_DEST_QPN |
						       ROCEV2_QP_RQ_PSN |
						       ROCEV2_QP_MAX_DEST_RD_ATOMIC |
						       ROCEV2_QP_MIN_RNR_TIMER), 0);
	a.qp_state = ROCEV2_QPS_RTS;
	a.sq_psn = 5000;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_SQ_PSN |
						       ROCEV2_QP_TIMEOUT | ROCEV2_QP_RETRY_CNT |
						       ROCEV2_QP_RNR_RETRY | ROCEV2_QP_MAX_QP_RD_ATOMIC), 0);
}

#define ACCESS_ALL (ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_WRITE | \
		    ROCEV2_ACCESS_REMOTE_READ | ROCEV2_ACCESS_REMOTE_ATOMIC)

static void make_qp(uint32_t srq, uint32_t rq_psn, uint32_t access, uint8_t max_dest_rd_atomic)
{
	struct rocev2_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.pd = pd;
	ia.send_cq = scq;
	ia.recv_cq = rcq;
	ia.srq = srq;
	ia.sq = (struct rocev2_queue_attr){ .ring_addr = SQ_RING, .dbrec_addr = SQ_DB, .size = RQ_SIZE };
	if (srq == ROCEV2_NO_SRQ)
		ia.rq = (struct rocev2_queue_attr){ .ring_addr = RQ_RING, .dbrec_addr = RQ_DB, .size = RQ_SIZE };
	ia.max_send_sge = 4;
	/* The host hands over zeroed queues (a QP made again reuses them). */
	memset(mem + RQ_DB, 0, sizeof(struct mnic_dbrec));
	rq_pi = 0;
	ia.max_recv_sge = 4;
	assert_int_equal(rocev2_create_qp(e, &ia, &qpn), 0);
	qp = rocev2_qp_lookup(e, qpn);
	assert_non_null(qp);
	qp_to_rts(rq_psn, access, max_dest_rd_atomic);
	nframes = 0;
}

static int setup(void **state)
{
	struct rocev2_env env = {
		.tx = fake_tx, .now_ns = fake_now, .dma = &dma,
		.ipv4 = OUR_IP,
	};
	struct rocev2_queue_attr q;
	uint32_t lk;

	(void)state;
	memcpy(env.mac, our_mac, 6);
	memset(mem, 0, sizeof(mem));
	hal_dma_window_init(&dma, mem, WIN);
	now = 0;
	nframes = tx_fail = 0;
	rq_pi = rcq_ci = 0;
	dut_dest_qpn = PEER_QPN;
	assert_int_equal(rocev2_init(e, &env), 0);
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	q = (struct rocev2_queue_attr){ .ring_addr = RCQ_RING, .dbrec_addr = RCQ_DB, .size = CQ_SIZE };
	assert_int_equal(rocev2_create_cq(e, &q, &rcq), 0);
	q = (struct rocev2_queue_attr){ .ring_addr = SCQ_RING, .dbrec_addr = SCQ_DB, .size = CQ_SIZE };
	assert_int_equal(rocev2_create_cq(e, &q, &scq), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, RECV_BUF, RECV_LEN, ROCEV2_ACCESS_LOCAL_WRITE,
				       &lkey_recv, &lk), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, RMEM, RMEM_LEN, ACCESS_ALL, &lk, &rkey_rmem), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, ROMEM, ROMEM_LEN, ROCEV2_ACCESS_REMOTE_READ, &lk,
				       &rkey_ro), 0);
	make_qp(ROCEV2_NO_SRQ, RQ_PSN, ACCESS_ALL, 4);
	return 0;
}

/* ---- SEND ------------------------------------------------------------------- */

/* One packet into three SGEs with gaps between them: the bytes land at
 * each SGE's address in order, nothing outside them is written. */
/* IBA 9.2.3 / 11.4.2.2: a message with SE completes solicited
 * (MNIC_CQE_SOLICITED, what a solicited-only CQ arm fires on); without SE
 * it does not (completion events, rocev2/eq.c). */
static void test_resp_cq_event_solicited_flag(void **state)
{
	const struct mnic_sge sge = { RECV_BUF, 64, lkey_recv };
	struct mnic_cqe c;

	(void)state;
	post_recv(1, &sge, 1);
	post_recv(2, &sge, 1);
	post_recv(3, &sge, 1);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = "x", .paylen = 1,
	    .se = 1);
	c = expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RECV, 1);
	assert_true(c.flags & MNIC_CQE_SOLICITED);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN + 1, .ackreq = 1, .payload = "y", .paylen = 1);
	c = expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_RECV, 1);
	assert_false(c.flags & MNIC_CQE_SOLICITED);
	REQ(.opcode = OP_SEND_ONLY_IMM, .psn = RQ_PSN + 2, .ackreq = 1, .imm = 7, .se = 1);
	c = expect_cqe(3, MNIC_WC_SUCCESS, MNIC_WC_RECV, 0);
	assert_int_equal(c.flags, MNIC_CQE_SOLICITED | MNIC_CQE_WITH_IMM);
}

static void test_send_only_scatter(void **state)
{
	const struct mnic_sge sge[3] = {
		{ RECV_BUF + 0x10, 10, lkey_recv },
		{ RECV_BUF + 0x100, 50, lkey_recv },
		{ RECV_BUF + 0x300, 300, lkey_recv },
	};
	uint8_t data[100], guard[0x400];

	(void)state;
	fill(data, sizeof(data), 1);
	post_recv(0xabc, sge, 3);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = data, .paylen = 100);

	assert_int_equal(nframes, 1);
	expect_ack(0, AETH_ACK_UNLIMITED, RQ_PSN, 1);
	assert_int_equal(frame(0).ackreq, 0);
	expect_cqe(0xabc, MNIC_WC_SUCCESS, MNIC_WC_RECV, 100);
	assert_memory_equal(mem + RECV_BUF + 0x10, data, 10);
	assert_memory_equal(mem + RECV_BUF + 0x100, data + 10, 50);
	assert_memory_equal(mem + RECV_BUF + 0x300, data + 60, 40);
	memset(guard, 0, sizeof(guard));
	assert_memory_equal(mem + RECV_BUF, guard, 0x10);
	assert_memory_equal(mem + RECV_BUF + 0x1a, guard, 0x100 - 0x1a);
	assert_memory_equal(mem + RECV_BUF + 0x132, guard, 0x300 - 0x132);
	assert_int_equal(mem[RECV_BUF + 0x300 + 40], 0);
	assert_int_equal(qp->resp.psn, RQ_PSN + 1);
	assert_int_equal(e->cnt.resp_packets, 1);
	assert_int_equal(e->cnt.resp_acks_sent, 1);
	assert_string_equal(rocev2_resp_state_name(qp->resp.last_state), "ACKNOWLEDGE");
}

/* FIRST/MIDDLE/LAST across SGE boundaries; only the AckReq'd LAST is
 * acknowledged, the MSN counts the message once. */
static void test_send_multi_packet(void **state)
{
	const struct mnic_sge sge[3] = {
		{ RECV_BUF + 0x1000, 200, lkey_recv },
		{ RECV_BUF + 0x2000 + 3, 300, lkey_recv },
		{ RECV_BUF + 0x3000, 200, lkey_recv },
	};
	uint8_t data[612];

	(void)state;
	fill(data, sizeof(data), 9);
	post_recv(77, sge, 3);
	REQ(.opcode = OP_SEND_FIRST, .psn = RQ_PSN, .payload = data, .paylen = MTU);
	REQ(.opcode = OP_SEND_MIDDLE, .psn = RQ_PSN + 1, .payload = data + MTU, .paylen = MTU);
	assert_int_equal(nframes, 0);
	expect_no_cqe();
	REQ(.opcode = OP_SEND_LAST, .psn = RQ_PSN + 2, .ackreq = 1, .payload = data + 2 * MTU,
	    .paylen = 100);
	assert_int_equal(nframes, 1);
	expect_ack(0, AETH_ACK_UNLIMITED, RQ_PSN + 2, 1);
	expect_cqe(77, MNIC_WC_SUCCESS, MNIC_WC_RECV, 612);
	assert_memory_equal(mem + RECV_BUF + 0x1000, data, 200);
	assert_memory_equal(mem + RECV_BUF + 0x2003, data + 200, 300);
	assert_memory_equal(mem + RECV_BUF + 0x3000, data + 500, 112);
	assert_int_equal(mem[RECV_BUF + 0x3000 + 112], 0);
	assert_int_equal(qp->resp.msn, 1);
	assert_int_equal(qp->resp.rwqe_valid, 0);
}

/* SEND with immediate and SEND with invalidate: the CQE carries them. */
static void test_send_imm_and_inv(void **state)
{
	struct mnic_cqe c;
	uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	(void)state;
	post_recv1(1, RECV_BUF, 64);
	post_recv1(2, RECV_BUF + 64, 64);
	REQ(.opcode = OP_SEND_ONLY_IMM, .psn = RQ_PSN, .ackreq = 1, .imm = 0x12345678,
	    .payload = data, .paylen = 8);
	REQ(.opcode = OP_SEND_ONLY_INV, .psn = RQ_PSN + 1, .ackreq = 1, .imm = 0xcafe01,
	    .payload = data, .paylen = 5);
	c = expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RECV, 8);
	assert_int_equal(c.flags, MNIC_CQE_WITH_IMM);
	assert_int_equal(c.imm_data, 0x12345678);
	c = expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_RECV, 5);
	assert_int_equal(c.flags, MNIC_CQE_WITH_INV);
	assert_int_equal(c.imm_data, 0xcafe01);
	assert_int_equal(nframes, 2);
	expect_ack(0, AETH_ACK_UNLIMITED, RQ_PSN, 1);
	expect_ack(1, AETH_ACK_UNLIMITED, RQ_PSN + 1, 2);
	/* Zero-length SEND: a CQE with byte_len 0. */
	post_recv1(3, RECV_BUF, 64);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN + 2, .ackreq = 1);
	expect_cqe(3, MNIC_WC_SUCCESS, MNIC_WC_RECV, 0);
}

/* ---- WRITE ------------------------------------------------------------------ */

static void test_write_multi_packet(void **state)
{
	uint8_t data[600];

	(void)state;
	fill(data, sizeof(data), 3);
	REQ(.opcode = OP_WRITE_FIRST, .psn = RQ_PSN, .va = RMEM + 0x100, .rkey = rkey_rmem,
	    .len = 600, .payload = data, .paylen = MTU);
	REQ(.opcode = OP_WRITE_MIDDLE, .psn = RQ_PSN + 1, .payload = data + MTU, .paylen = MTU);
	REQ(.opcode = OP_WRITE_LAST, .psn = RQ_PSN + 2, .ackreq = 1, .payload = data + 2 * MTU,
	    .paylen = 600 - 2 * MTU);
	assert_memory_equal(mem + RMEM + 0x100, data, 600);
	assert_int_equal(mem[RMEM + 0xff], 0);
	assert_int_equal(mem[RMEM + 0x100 + 600], 0);
	assert_int_equal(nframes, 1);
	expect_ack(0, AETH_ACK_UNLIMITED, RQ_PSN + 2, 1);
	expect_no_cqe();
	assert_int_equal(qp->rq.ci, 0);     /* no receive WQE consumed */
}

/* WRITE with immediate consumes a receive WQE at its last packet only,
 * and reports the whole write length. */
static void test_write_imm(void **state)
{
	struct mnic_cqe c;
	uint8_t data[300];

	(void)state;
	fill(data, sizeof(data), 5);
	post_recv1(10, RECV_BUF, 16);
	post_recv1(11, RECV_BUF, 16);
	REQ(.opcode = OP_WRITE_ONLY_IMM, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 64, .imm = 0xdeadbeef, .payload = data, .paylen = 64);
	c = expect_cqe(10, MNIC_WC_SUCCESS, MNIC_WC_RECV_RDMA_WITH_IMM, 64);
	assert_int_equal(c.flags, MNIC_CQE_WITH_IMM);
	assert_int_equal(c.imm_data, 0xdeadbeef);
	assert_memory_equal(mem + RMEM, data, 64);

	REQ(.opcode = OP_WRITE_FIRST, .psn = RQ_PSN + 1, .va = RMEM + 0x1000, .rkey = rkey_rmem,
	    .len = 300, .payload = data, .paylen = MTU);
	assert_int_equal(qp->rq.ci, 1);     /* not yet */
	expect_no_cqe();
	REQ(.opcode = OP_WRITE_LAST_IMM, .psn = RQ_PSN + 2, .ackreq = 1, .imm = 7,
	    .payload = data + MTU, .paylen = 300 - MTU);
	c = expect_cqe(11, MNIC_WC_SUCCESS, MNIC_WC_RECV_RDMA_WITH_IMM, 300);
	assert_int_equal(c.imm_data, 7);
	assert_memory_equal(mem + RMEM + 0x1000, data, 300);
	assert_int_equal(nframes, 2);
	expect_ack(1, AETH_ACK_UNLIMITED, RQ_PSN + 2, 2);
	/* The receive buffer itself is untouched by a WRITE_IMM. */
	assert_int_equal(mem[RECV_BUF], 0);
}

/* No receive WQE for a WRITE_LAST_IMM: RNR NAK for that packet only; the
 * data of the earlier packets stays, and the retried LAST completes. */
static void test_write_imm_rnr(void **state)
{
	uint8_t data[300];

	(void)state;
	fill(data, sizeof(data), 8);
	REQ(.opcode = OP_WRITE_FIRST, .psn = RQ_PSN, .va = RMEM, .rkey = rkey_rmem, .len = 300,
	    .payload = data, .paylen = MTU);
	REQ(.opcode = OP_WRITE_LAST_IMM, .psn = RQ_PSN + 1, .ackreq = 1, .imm = 1,
	    .payload = data + MTU, .paylen = 300 - MTU);
	assert_int_equal(nframes, 1);
	expect_ack(0, AETH_RNR_NAK | RNR_TIMER, RQ_PSN + 1, 0);
	assert_int_equal(mem[RMEM + MTU], 0);      /* the LAST was not executed */
	post_recv1(9, RECV_BUF, 16);
	REQ(.opcode = OP_WRITE_LAST_IMM, .psn = RQ_PSN + 1, .ackreq = 1, .imm = 1,
	    .payload = data + MTU, .paylen = 300 - MTU);
	expect_ack(1, AETH_ACK_UNLIMITED, RQ_PSN + 1, 1);
	expect_cqe(9, MNIC_WC_SUCCESS, MNIC_WC_RECV_RDMA_WITH_IMM, 300);
	assert_memory_equal(mem + RMEM, data, 300);
}

/* ---- READ ------------------------------------------------------------------- */

static void test_read_single(void **state)
{
	struct out o;

	(void)state;
	fill(mem + RMEM + 0x40, 100, 11);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM + 0x40,
	    .rkey = rkey_rmem, .len = 100);
	assert_int_equal(nframes, 1);
	o = frame(0);
	assert_int_equal(o.opcode, OP_READ_RESPONSE_ONLY);
	assert_int_equal(o.psn, RQ_PSN);
	assert_int_equal(o.syndrome, AETH_ACK_UNLIMITED);
	assert_int_equal(o.msn, 1);
	assert_int_equal(o.paylen, 100);
	assert_int_equal(bth_pad((const struct bth *)(o.f + ROCEV2_HDR_OFFSET)), 0);
	assert_memory_equal(o.payload, mem + RMEM + 0x40, 100);
	assert_int_equal(qp->resp.psn, RQ_PSN + 1);
	assert_int_equal(qp->resp.res_pending, 0);
	/* Zero-length read: one RDMA READ Response Only, no payload, no
	 * R_Key check (IBA 9.4.4). */
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN + 1, .ackreq = 1, .va = 0, .rkey = 0, .len = 0);
	o = frame(1);
	assert_int_equal(o.opcode, OP_READ_RESPONSE_ONLY);
	assert_int_equal(o.paylen, 0);
	assert_int_equal(o.msn, 2);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
}

/* 7 packets: 4 leave from rocev2_resp_rx, a full TX ring stops
 * rocev2_resp_run without losing the position, the next run sends the
 * rest; a SEND's ACK decided meanwhile follows the read responses. */
static void test_read_multi_packet_eagain(void **state)
{
	const uint32_t len = 6 * MTU + 10;
	struct out o;
	unsigned i;

	(void)state;
	fill(mem + RMEM, len, 21);
	rocev2_poll(e, 64);                 /* RTS queued the QP: start from an idle scheduler */
	assert_false(qp->scheduled);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = len);
	assert_int_equal(nframes, 4);
	assert_int_equal(qp->resp.psn, RQ_PSN + 7);
	assert_int_not_equal(qp->resp.res_pending, 0);
	assert_true(qp->scheduled);

	/* A SEND accepted while the reply is still going out. */
	post_recv1(5, RECV_BUF, 64);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN + 7, .ackreq = 1, .payload = "hi", .paylen = 2);
	expect_cqe(5, MNIC_WC_SUCCESS, MNIC_WC_RECV, 2);
	assert_int_equal(nframes, 4);       /* its ACK waits */

	tx_fail = 1;
	assert_int_equal(rocev2_resp_run(e, qp, 16), 0);
	assert_int_equal(nframes, 4);
	assert_int_equal(e->cnt.tx_busy, 1);
	assert_true(qp->scheduled);
	assert_int_equal(rocev2_resp_run(e, qp, 2), 2);
	assert_int_equal(rocev2_resp_run(e, qp, 16), 2);   /* LAST + the ACK */
	assert_int_equal(nframes, 8);
	assert_int_equal(qp->resp.res_pending, 0);
	assert_int_equal(rocev2_resp_run(e, qp, 16), 0);

	for (i = 0; i < 7; i++) {
		static const uint8_t ops[7] = {
			OP_READ_RESPONSE_FIRST, OP_READ_RESPONSE_MIDDLE, OP_READ_RESPONSE_MIDDLE,
			OP_READ_RESPONSE_MIDDLE, OP_READ_RESPONSE_MIDDLE, OP_READ_RESPONSE_MIDDLE,
			OP_READ_RESPONSE_LAST,
		};

		o = frame(i);
		assert_int_equal(o.opcode, ops[i]);
		assert_int_equal(o.psn, RQ_PSN + i);
		assert_int_equal(o.paylen, i < 6 ? MTU : 10);
		assert_memory_equal(o.payload, mem + RMEM + i * MTU, o.paylen);
		if (i == 0 || i == 6) {
			assert_int_equal(o.syndrome, AETH_ACK_UNLIMITED);
			assert_int_equal(o.msn, 1);
		}
	}
	expect_ack(7, AETH_ACK_UNLIMITED, RQ_PSN + 7, 2);
	assert_int_equal(e->cnt.resp_read_packets, 7);
}

/* The scheduler drives the reply: rocev2_poll runs resp_run one slice
 * (16 packets) at a time, and the QP stays queued until the end. */
static void test_read_through_poll(void **state)
{
	const uint32_t len = 40 * MTU;
	unsigned polls = 0;

	(void)state;
	fill(mem + RMEM, len, 33);
	rocev2_poll(e, 64);
	assert_false(rocev2_has_work(e));
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = len);
	assert_int_equal(nframes, 4);
	while (rocev2_has_work(e) && polls < 10) {
		rocev2_poll(e, 64);
		polls++;
	}
	assert_int_equal(polls, 3);         /* 16 + 16 + 4 */
	assert_int_equal(nframes, 40);
	assert_int_equal(frame(39).opcode, OP_READ_RESPONSE_LAST);
	assert_int_equal(frame(39).psn, RQ_PSN + 39);
	assert_memory_equal(frame(22).payload, mem + RMEM + 22 * MTU, MTU);
	assert_int_equal(qp->resp.res_pending, 0);
}

/* ---- ATOMIC ----------------------------------------------------------------- */

static void test_compare_swap(void **state)
{
	struct out o;

	(void)state;
	put_mem64(RMEM + 8, 5);
	REQ(.opcode = OP_COMPARE_SWAP, .psn = RQ_PSN, .ackreq = 1, .va = RMEM + 8,
	    .rkey = rkey_rmem, .compare = 5, .swap_add = 9);
	assert_int_equal(get_mem64(RMEM + 8), 9);
	o = frame(0);
	assert_int_equal(o.opcode, OP_ATOMIC_ACKNOWLEDGE);
	assert_int_equal(o.psn, RQ_PSN);
	assert_int_equal(o.syndrome, AETH_ACK_UNLIMITED);
	assert_int_equal(o.msn, 1);
	assert_int_equal(o.orig, 5);
	/* Not equal: no swap, the original value comes back. */
	REQ(.opcode = OP_COMPARE_SWAP, .psn = RQ_PSN + 1, .ackreq = 1, .va = RMEM + 8,
	    .rkey = rkey_rmem, .compare = 5, .swap_add = 11);
	assert_int_equal(get_mem64(RMEM + 8), 9);
	assert_int_equal(frame(1).orig, 9);
	assert_int_equal(frame(1).msn, 2);
	assert_int_equal(mem[RMEM + 16], 0);
}

static void test_fetch_add(void **state)
{
	(void)state;
	put_mem64(RMEM + 0x80, 0xfffffffffffffff0ull);
	REQ(.opcode = OP_FETCH_ADD, .psn = RQ_PSN, .ackreq = 1, .va = RMEM + 0x80,
	    .rkey = rkey_rmem, .swap_add = 0x20);
	assert_int_equal(get_mem64(RMEM + 0x80), 0x10);        /* wraps mod 2^64 */
	assert_int_equal(frame(0).opcode, OP_ATOMIC_ACKNOWLEDGE);
	assert_int_equal(frame(0).orig, 0xfffffffffffffff0ull);
	assert_int_equal(qp->resp.psn, RQ_PSN + 1);
}

/* ---- duplicates ----------------------------------------------------------------- */

static void test_dup_send_reacked(void **state)
{
	uint8_t data[4] = { 9, 9, 9, 9 };

	(void)state;
	post_recv1(1, RECV_BUF, 64);
	post_recv1(2, RECV_BUF + 64, 64);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = data, .paylen = 4);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = data, .paylen = 4);
	assert_int_equal(nframes, 2);
	expect_ack(1, AETH_ACK_UNLIMITED, RQ_PSN, 1);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RECV, 4);
	expect_no_cqe();
	assert_int_equal(qp->rq.ci, 1);
	assert_int_equal(e->cnt.resp_dup_requests, 1);
	/* A duplicate WRITE, even without AckReq, is acknowledged again with
	 * the newest PSN and is not written twice. */
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN + 1, .va = RMEM, .rkey = rkey_rmem, .len = 4,
	    .payload = data, .paylen = 4);
	assert_int_equal(nframes, 2);
	mem[RMEM] = 0;
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN + 1, .va = RMEM, .rkey = rkey_rmem, .len = 4,
	    .payload = data, .paylen = 4);
	assert_int_equal(mem[RMEM], 0);
	expect_ack(2, AETH_ACK_UNLIMITED, RQ_PSN + 1, 2);
	/* An older duplicate: the ACK still names the newest PSN. */
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = data, .paylen = 4);
	expect_ack(3, AETH_ACK_UNLIMITED, RQ_PSN + 1, 2);
}

/* A duplicate READ restarts the response at its PSN, reading from the
 * offset its RETH names, as a new response message (FIRST .. LAST). */
static void test_dup_read_replayed(void **state)
{
	const uint32_t len = 2 * MTU + 40;
	struct out o;

	(void)state;
	fill(mem + RMEM + 0x200, len, 44);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM + 0x200,
	    .rkey = rkey_rmem, .len = len);
	assert_int_equal(nframes, 3);
	post_recv1(1, RECV_BUF, 64);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN + 3, .ackreq = 1, .payload = "x", .paylen = 1);
	assert_int_equal(nframes, 4);

	/* The requester lost packets 1 and 2: asks again from PSN +1. */
	nframes = 0;
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN + 1, .ackreq = 1, .va = RMEM + 0x200 + MTU,
	    .rkey = rkey_rmem, .len = len - MTU);
	assert_int_equal(nframes, 2);
	o = frame(0);
	assert_int_equal(o.opcode, OP_READ_RESPONSE_FIRST);
	assert_int_equal(o.psn, RQ_PSN + 1);
	assert_int_equal(o.syndrome, AETH_ACK_UNLIMITED);
	assert_int_equal(o.msn, 1);
	assert_memory_equal(o.payload, mem + RMEM + 0x200 + MTU, MTU);
	o = frame(1);
	assert_int_equal(o.opcode, OP_READ_RESPONSE_LAST);
	assert_int_equal(o.psn, RQ_PSN + 2);
	assert_int_equal(o.msn, 1);          /* the READ's own MSN */
	assert_int_equal(o.paylen, 40);
	assert_memory_equal(o.payload, mem + RMEM + 0x200 + 2 * MTU, 40);

	/* Whole request again: FIRST .. LAST. */
	nframes = 0;
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM + 0x200,
	    .rkey = rkey_rmem, .len = len);
	assert_int_equal(nframes, 3);
	assert_int_equal(frame(0).opcode, OP_READ_RESPONSE_FIRST);
	assert_int_equal(frame(0).psn, RQ_PSN);
	assert_int_equal(e->cnt.resp_read_replays, 2);
	/* Nothing re-executed: the expected PSN and MSN did not move. */
	assert_int_equal(qp->resp.psn, RQ_PSN + 4);
	assert_int_equal(qp->resp.msn, 2);

	/* A duplicate that does not ask for exactly the tail its PSN stands
	 * for, or with another R_Key, is dropped. */
	nframes = 0;
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN + 1, .ackreq = 1, .va = RMEM + 0x200 + MTU,
	    .rkey = rkey_rmem, .len = len);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN + 1, .ackreq = 1, .va = RMEM + 0x200,
	    .rkey = rkey_rmem, .len = len - MTU);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN + 1, .ackreq = 1, .va = RMEM + 0x200 + MTU,
	    .rkey = rkey_rmem, .len = 8);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM + 0x200,
	    .rkey = rkey_ro, .len = len);
	assert_int_equal(nframes, 0);
	assert_int_equal(e->cnt.resp_dup_dropped, 4);
}

/* A duplicate atomic gets the saved original value; memory is not touched
 * a second time. */
static void test_dup_atomic_replayed(void **state)
{
	(void)state;
	put_mem64(RMEM, 100);
	REQ(.opcode = OP_FETCH_ADD, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .swap_add = 23);
	assert_int_equal(get_mem64(RMEM), 123);
	REQ(.opcode = OP_FETCH_ADD, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .swap_add = 23);
	assert_int_equal(get_mem64(RMEM), 123);
	assert_int_equal(nframes, 2);
	assert_int_equal(frame(1).opcode, OP_ATOMIC_ACKNOWLEDGE);
	assert_int_equal(frame(1).psn, RQ_PSN);
	assert_int_equal(frame(1).orig, 100);
	assert_int_equal(frame(1).msn, 1);
	assert_memory_equal(frames[0] + ROCEV2_HDR_OFFSET, frames[1] + ROCEV2_HDR_OFFSET,
			    BTH_LEN + AETH_LEN + ATMACK_LEN);
	assert_int_equal(e->cnt.resp_atomic_replays, 1);
	assert_int_equal(qp->resp.msn, 1);
	/* A compare-swap duplicate likewise, even if its compare now matches. */
	REQ(.opcode = OP_COMPARE_SWAP, .psn = RQ_PSN + 1, .ackreq = 1, .va = RMEM,
	    .rkey = rkey_rmem, .compare = 123, .swap_add = 1);
	assert_int_equal(get_mem64(RMEM), 1);
	REQ(.opcode = OP_COMPARE_SWAP, .psn = RQ_PSN + 1, .ackreq = 1, .va = RMEM,
	    .rkey = rkey_rmem, .compare = 1, .swap_add = 2);
	assert_int_equal(get_mem64(RMEM), 1);
	assert_int_equal(frame(3).orig, 123);
}

static void test_dup_without_resource_dropped(void **state)
{
	(void)state;
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN - 5, .ackreq = 1, .va = RMEM,
	    .rkey = rkey_rmem, .len = 8);
	REQ(.opcode = OP_FETCH_ADD, .psn = RQ_PSN - 4, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .swap_add = 1);
	assert_int_equal(nframes, 0);
	assert_int_equal(e->cnt.resp_dup_dropped, 2);
	assert_int_equal(get_mem64(RMEM), 0);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
}

/* ---- sequence errors, RNR ---------------------------------------------------- */

/* IBA 9.7.5.1.1: one NAK per gap, then silence until the expected PSN
 * arrives; then it executes and the next gap is NAK'd again. */
static void test_out_of_sequence(void **state)
{
	(void)state;
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN + 2, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 1);
	expect_ack(0, AETH_NAK_PSN_SEQ_ERROR, RQ_PSN, 0);
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN + 3, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 1);
	assert_int_equal(e->cnt.resp_out_of_seq, 1);
	assert_int_equal(e->cnt.resp_seq_nak_silent, 1);
	assert_int_equal(mem[RMEM], 0);
	assert_int_equal(qp->resp.sent_psn_nak, 1);

	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	expect_ack(1, AETH_ACK_UNLIMITED, RQ_PSN, 1);
	assert_int_equal(qp->resp.sent_psn_nak, 0);
	assert_memory_equal(mem + RMEM, "abcd", 4);
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN + 3, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "efgh", .paylen = 4);
	expect_ack(2, AETH_NAK_PSN_SEQ_ERROR, RQ_PSN + 1, 1);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
}

static void test_rnr_then_success(void **state)
{
	(void)state;
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = "rnr", .paylen = 3);
	assert_int_equal(nframes, 1);
	expect_ack(0, AETH_RNR_NAK | RNR_TIMER, RQ_PSN, 0);
	assert_int_equal(qp->resp.psn, RQ_PSN);
	assert_int_equal(e->cnt.resp_rnr_naks, 1);
	expect_no_cqe();
	/* A multi-packet SEND stopped at its FIRST packet likewise. */
	REQ(.opcode = OP_SEND_FIRST, .psn = RQ_PSN, .payload = mem, .paylen = MTU);
	expect_ack(1, AETH_RNR_NAK | RNR_TIMER, RQ_PSN, 0);

	post_recv1(42, RECV_BUF, 64);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = "rnr", .paylen = 3);
	expect_ack(2, AETH_ACK_UNLIMITED, RQ_PSN, 1);
	expect_cqe(42, MNIC_WC_SUCCESS, MNIC_WC_RECV, 3);
	assert_memory_equal(mem + RECV_BUF, "rnr", 3);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
}

/* ---- fatal errors ------------------------------------------------------------------ */

/* NAK, QP in ERR with the async event, posted receive WQEs flushed. */
static void expect_fatal(uint8_t syndrome, uint32_t psn, uint32_t event, unsigned flushed)
{
	struct rocev2_event ev;
	struct mnic_cqe c;
	unsigned i;

	assert_int_equal(nframes, 1);
	expect_ack(0, syndrome, psn, qp->resp.msn);
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_int_equal(next_event(&ev), 0);
	assert_int_equal(ev.type, event);
	assert_int_equal(ev.handle, qpn);
	for (i = 0; i < flushed; i++) {
		assert_true(poll_cq(&c));
		assert_int_equal(c.status, MNIC_WC_WR_FLUSH_ERR);
		assert_int_equal(c.wr_id, 100 + i);
		assert_int_equal(c.qp_num, qpn);
	}
	expect_no_cqe();
	assert_int_equal(e->cnt.flushed_wqes, flushed);
	/* Nothing more from a QP in error (recv.c drops it, and the
	 * responder would too). */
	inject_raw(&(struct req){ .opcode = OP_SEND_ONLY, .psn = psn, .ackreq = 1 });
	assert_int_equal(nframes, 1);
	rocev2_resp_rx(e, qp, &(struct rocev2_pkt){ .bth = (const struct bth *)rxf,
						    .info = rocev2_opcode(OP_SEND_ONLY),
						    .opcode = OP_SEND_ONLY, .psn = psn });
	assert_int_equal(nframes, 1);
	assert_int_equal(e->cnt.resp_bad_state, 1);
}

static void test_rkey_bad_key(void **state)
{
	(void)state;
	post_recv1(100, RECV_BUF, 64);
	post_recv1(101, RECV_BUF, 64);
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN, .ackreq = 1, .va = RMEM,
	    .rkey = rkey_rmem ^ 0x01, .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(mem[RMEM], 0);
	assert_int_equal(e->cnt.resp_rem_acc_naks, 1);
	expect_fatal(AETH_NAK_REM_ACC_ERR, RQ_PSN, ROCEV2_EVENT_QP_ACCESS_ERR, 2);
}

static void test_rkey_out_of_bounds(void **state)
{
	(void)state;
	post_recv1(100, RECV_BUF, 64);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM + RMEM_LEN - 8,
	    .rkey = rkey_rmem, .len = 9);
	expect_fatal(AETH_NAK_REM_ACC_ERR, RQ_PSN, ROCEV2_EVENT_QP_ACCESS_ERR, 1);
}

/* The MR lacks REMOTE_WRITE: remote access error.  Bounds of a later
 * packet of a multi-packet WRITE are checked too (mid-message). */
static void test_rkey_missing_mr_access(void **state)
{
	(void)state;
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN, .ackreq = 1, .va = ROMEM, .rkey = rkey_ro,
	    .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(mem[ROMEM], 0);
	expect_fatal(AETH_NAK_REM_ACC_ERR, RQ_PSN, ROCEV2_EVENT_QP_ACCESS_ERR, 0);
}

/* The MR is deregistered between two packets of one WRITE. */
static void test_rkey_dereg_mid_write(void **state)
{
	uint8_t data[MTU];

	(void)state;
	memset(data, 0x5a, sizeof(data));
	REQ(.opcode = OP_WRITE_FIRST, .psn = RQ_PSN, .va = RMEM, .rkey = rkey_rmem,
	    .len = 2 * MTU, .payload = data, .paylen = MTU);
	assert_int_equal(rocev2_dereg_mr(e, rkey_rmem), 0);
	REQ(.opcode = OP_WRITE_LAST, .psn = RQ_PSN + 1, .ackreq = 1, .payload = data, .paylen = MTU);
	assert_int_equal(mem[RMEM + MTU], 0);
	expect_fatal(AETH_NAK_REM_ACC_ERR, RQ_PSN + 1, ROCEV2_EVENT_QP_ACCESS_ERR, 0);
}

/* The QP does not allow remote atomics: invalid request (rxe). */
static void test_qp_access_flags(void **state)
{
	(void)state;
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	make_qp(ROCEV2_NO_SRQ, RQ_PSN, ROCEV2_ACCESS_REMOTE_WRITE | ROCEV2_ACCESS_REMOTE_READ, 4);
	REQ(.opcode = OP_FETCH_ADD, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .swap_add = 1);
	assert_int_equal(get_mem64(RMEM), 0);
	assert_int_equal(e->cnt.resp_inv_req_naks, 1);
	assert_string_equal(rocev2_resp_state_name(qp->resp.last_error), "ERR_UNSUPPORTED_OPCODE");
	expect_fatal(AETH_NAK_INVALID_REQ, RQ_PSN, ROCEV2_EVENT_QP_REQ_ERR, 0);
}

static void test_misaligned_atomic(void **state)
{
	(void)state;
	REQ(.opcode = OP_COMPARE_SWAP, .psn = RQ_PSN, .ackreq = 1, .va = RMEM + 4,
	    .rkey = rkey_rmem, .compare = 0, .swap_add = 1);
	assert_int_equal(get_mem64(RMEM), 0);
	expect_fatal(AETH_NAK_INVALID_REQ, RQ_PSN, ROCEV2_EVENT_QP_REQ_ERR, 0);
}

/* SEND_MIDDLE with no SEND in progress. */
static void test_op_seq_missing_first(void **state)
{
	(void)state;
	post_recv1(100, RECV_BUF, 1024);
	REQ(.opcode = OP_SEND_MIDDLE, .psn = RQ_PSN, .ackreq = 1, .payload = mem, .paylen = MTU);
	assert_string_equal(rocev2_resp_state_name(qp->resp.last_error), "ERR_MISSING_OPCODE_FIRST");
	expect_fatal(AETH_NAK_INVALID_REQ, RQ_PSN, ROCEV2_EVENT_QP_REQ_ERR, 1);
}

/* A WRITE_ONLY in the middle of a SEND: the receive WQE being filled
 * completes with the error, the rest are flushed. */
static void test_op_seq_missing_last(void **state)
{
	struct rocev2_event ev;
	struct mnic_cqe c;

	(void)state;
	post_recv1(7, RECV_BUF, 1024);
	post_recv1(100, RECV_BUF, 1024);
	REQ(.opcode = OP_SEND_FIRST, .psn = RQ_PSN, .payload = mem, .paylen = MTU);
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN + 1, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 1);
	expect_ack(0, AETH_NAK_INVALID_REQ, RQ_PSN + 1, 0);
	assert_true(poll_cq(&c));
	assert_int_equal(c.wr_id, 7);
	assert_int_equal(c.status, MNIC_WC_REM_INV_REQ_ERR);
	assert_int_equal(c.vendor_err, AETH_NAK_INVALID_REQ);
	assert_true(poll_cq(&c));
	assert_int_equal(c.wr_id, 100);
	assert_int_equal(c.status, MNIC_WC_WR_FLUSH_ERR);
	expect_no_cqe();
	assert_int_equal(next_event(&ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_QP_REQ_ERR);
	assert_int_equal(mem[RMEM], 0);
}

/* IBA 9.7.5.1.4: a FIRST shorter than the MTU, and a SEND longer than
 * the receive buffer (local length error for our WQE). */
static void test_length_errors(void **state)
{
	struct mnic_cqe c;
	uint8_t data[MTU];

	(void)state;
	memset(data, 1, sizeof(data));
	post_recv1(7, RECV_BUF, 100);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = data, .paylen = 101);
	assert_int_equal(nframes, 1);
	expect_ack(0, AETH_NAK_INVALID_REQ, RQ_PSN, 0);
	assert_true(poll_cq(&c));
	assert_int_equal(c.wr_id, 7);
	assert_int_equal(c.status, MNIC_WC_LOC_LEN_ERR);
	assert_int_equal(mem[RECV_BUF], 0);
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);

	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	make_qp(ROCEV2_NO_SRQ, RQ_PSN, ACCESS_ALL, 4);
	REQ(.opcode = OP_WRITE_FIRST, .psn = RQ_PSN, .va = RMEM, .rkey = rkey_rmem, .len = 1000,
	    .payload = data, .paylen = MTU - 4);
	expect_ack(0, AETH_NAK_INVALID_REQ, RQ_PSN, 0);
	assert_string_equal(rocev2_resp_state_name(qp->resp.last_error), "ERR_LENGTH");
	assert_int_equal(mem[RMEM], 0);

	/* WRITE total beyond its RETH length. */
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	make_qp(ROCEV2_NO_SRQ, RQ_PSN, ACCESS_ALL, 4);
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 8, .payload = data, .paylen = 12);
	expect_ack(0, AETH_NAK_INVALID_REQ, RQ_PSN, 0);
	assert_int_equal(mem[RMEM], 0);
}

/* The receive WQE names memory it may not write (no LOCAL_WRITE): local
 * protection error for it, remote operational error for the peer. */
static void test_send_local_protection(void **state)
{
	struct rocev2_event ev;
	struct mnic_cqe c;
	struct mnic_sge sge = { ROMEM, 64, 0 };
	uint32_t rk;

	(void)state;
	assert_int_equal(rocev2_reg_mr(e, pd, ROMEM, 64, 0, &sge.lkey, &rk), 0);
	post_recv(7, &sge, 1);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 1);
	expect_ack(0, AETH_NAK_REM_OP_ERR, RQ_PSN, 0);
	assert_true(poll_cq(&c));
	assert_int_equal(c.wr_id, 7);
	assert_int_equal(c.status, MNIC_WC_LOC_PROT_ERR);
	assert_int_equal(mem[ROMEM], 0);
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_int_equal(next_event(&ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_QP_ACCESS_ERR);
	assert_int_equal(e->cnt.resp_rem_op_naks, 1);
}

/* A receive WQE with more SGEs than the QP allows is consumed and
 * completed with an error (queue.c returns it with -HAL_EINVAL). */
static void test_malformed_recv_wqe(void **state)
{
	struct mnic_sge sge[5];
	struct mnic_cqe c;
	unsigned i;

	(void)state;
	for (i = 0; i < 5; i++)
		sge[i] = (struct mnic_sge){ RECV_BUF + i * 64, 64, lkey_recv };
	post_recv(7, sge, 5);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = "abcd", .paylen = 4);
	expect_ack(0, AETH_NAK_REM_OP_ERR, RQ_PSN, 0);
	assert_true(poll_cq(&c));
	assert_int_equal(c.wr_id, 7);
	assert_int_equal(c.status, MNIC_WC_LOC_QP_OP_ERR);
	expect_no_cqe();
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_int_equal(mem[RECV_BUF], 0);
}

/* The receive CQ is in error: the SEND is executed but cannot complete;
 * the QP goes to ERR (IBA class G) and nothing is sent. */
static void test_cq_overflow(void **state)
{
	struct rocev2_event ev;

	(void)state;
	post_recv1(1, RECV_BUF, 64);
	e->cqs[qp->rcq].error = 1;
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 0);
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_int_equal(next_event(&ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_QP_FATAL);
	assert_string_equal(rocev2_resp_state_name(qp->resp.last_error), "ERR_CQ_OVERFLOW");
}

/* The MR goes away while a long read reply is still being sent: the next
 * packet is a remote access NAK at its PSN and the QP fails. */
static void test_read_mr_dereg_mid_reply(void **state)
{
	(void)state;
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 10 * MTU);
	assert_int_equal(nframes, 4);
	assert_int_equal(rocev2_dereg_mr(e, rkey_rmem), 0);
	assert_int_equal(rocev2_resp_run(e, qp, 16), 0);
	assert_int_equal(nframes, 5);
	expect_ack(4, AETH_NAK_REM_ACC_ERR, RQ_PSN + 4, 1);
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	assert_int_equal(qp->resp.res_pending, 0);
}

/* max_dest_rd_atomic 0: the QP accepts no READ/ATOMIC. */
static void test_no_rd_atomic_resources(void **state)
{
	(void)state;
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	make_qp(ROCEV2_NO_SRQ, RQ_PSN, ACCESS_ALL, 0);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 8);
	assert_string_equal(rocev2_resp_state_name(qp->resp.last_error), "ERR_TOO_MANY_RD_ATOMIC");
	expect_fatal(AETH_NAK_INVALID_REQ, RQ_PSN, ROCEV2_EVENT_QP_REQ_ERR, 0);
}

/* With one resource, a second READ while the first is still being sent
 * breaks the requester's limit; once sent, the slot is reused. */
static void test_rd_atomic_slot_reuse(void **state)
{
	(void)state;
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	make_qp(ROCEV2_NO_SRQ, RQ_PSN, ACCESS_ALL, 1);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 8);
	REQ(.opcode = OP_FETCH_ADD, .psn = RQ_PSN + 1, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .swap_add = 1);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN + 2, .ackreq = 1, .va = RMEM,
	    .rkey = rkey_rmem, .len = 8 * MTU);
	assert_int_equal(nframes, 2 + 4);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN + 10, .ackreq = 1, .va = RMEM,
	    .rkey = rkey_rmem, .len = 8);
	assert_int_equal(nframes, 7);
	expect_ack(6, AETH_NAK_INVALID_REQ, RQ_PSN + 10, 3);
	assert_int_equal(qp->state, ROCEV2_QPS_ERR);
	/* The reply in progress stopped with the QP. */
	assert_int_equal(rocev2_resp_run(e, qp, 16), 0);
	assert_int_equal(nframes, 7);
}

/* A duplicate READ restarted the reply of the oldest slot; the requester
 * then got the original reply after all, completed the READ and sent a new
 * one, which needs that slot.  The replay is stale: it stops and the new
 * READ is served (before: an invalid-request NAK and both QPs in ERR, seen
 * by mnic-traffic under 2 % loss, 1 % duplication, 2 % reordering). */
static void test_rd_atomic_stale_replay(void **state)
{
	struct out o;

	(void)state;
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	make_qp(ROCEV2_NO_SRQ, RQ_PSN, ACCESS_ALL, 1);
	fill(mem + RMEM, 8 * MTU, 9);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 8 * MTU);
	while (rocev2_resp_run(e, qp, 16) > 0)
		;
	assert_int_equal(nframes, 8);
	/* the duplicate: a replay from FIRST, still going out */
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 8 * MTU);
	assert_int_equal(nframes, 12);
	assert_true(qp->resp.res[0].sending);
	assert_true(qp->resp.res[0].replay);
	/* the next READ takes the slot */
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN + 8, .ackreq = 1, .va = RMEM + 16,
	    .rkey = rkey_rmem, .len = 8);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
	assert_int_equal(e->cnt.resp_inv_req_naks, 0);
	assert_int_equal(e->cnt.resp_replays_dropped, 1);
	assert_int_equal(nframes, 13);
	o = frame(12);
	assert_int_equal(o.opcode, OP_READ_RESPONSE_ONLY);
	assert_int_equal(o.psn, RQ_PSN + 8);
	assert_int_equal(o.msn, 2);
	assert_memory_equal(o.payload, mem + RMEM + 16, 8);
	/* nothing of the stale replay follows */
	assert_int_equal(rocev2_resp_run(e, qp, 16), 0);
	assert_int_equal(nframes, 13);
	assert_int_equal(qp->resp.psn, RQ_PSN + 9);
}

/* ---- PSN wrap -------------------------------------------------------------------- */

static void test_psn_wrap(void **state)
{
	struct out o;

	(void)state;
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	make_qp(ROCEV2_NO_SRQ, 0xfffffe, ACCESS_ALL, 4);
	REQ(.opcode = OP_WRITE_ONLY, .psn = 0xfffffe, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 1, .payload = "a", .paylen = 1);
	REQ(.opcode = OP_WRITE_ONLY, .psn = 0xffffff, .ackreq = 1, .va = RMEM + 1,
	    .rkey = rkey_rmem, .len = 1, .payload = "b", .paylen = 1);
	REQ(.opcode = OP_WRITE_ONLY, .psn = 0, .ackreq = 1, .va = RMEM + 2, .rkey = rkey_rmem,
	    .len = 1, .payload = "c", .paylen = 1);
	expect_ack(0, AETH_ACK_UNLIMITED, 0xfffffe, 1);
	expect_ack(1, AETH_ACK_UNLIMITED, 0xffffff, 2);
	expect_ack(2, AETH_ACK_UNLIMITED, 0, 3);
	assert_memory_equal(mem + RMEM, "abc", 3);
	/* 0xffffff is behind 0 now: a duplicate, re-ACKed with PSN 0. */
	REQ(.opcode = OP_WRITE_ONLY, .psn = 0xffffff, .ackreq = 1, .va = RMEM + 1,
	    .rkey = rkey_rmem, .len = 1, .payload = "X", .paylen = 1);
	expect_ack(3, AETH_ACK_UNLIMITED, 0, 3);
	assert_int_equal(mem[RMEM + 1], 'b');
	assert_int_equal(qp->resp.psn, 1);

	/* A READ whose responses cross the wrap. */
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	make_qp(ROCEV2_NO_SRQ, 0xffffff, ACCESS_ALL, 4);
	REQ(.opcode = OP_READ_REQUEST, .psn = 0xffffff, .ackreq = 1, .va = RMEM,
	    .rkey = rkey_rmem, .len = 3 * MTU);
	assert_int_equal(nframes, 3);
	o = frame(0);
	assert_int_equal(o.psn, 0xffffff);
	assert_int_equal(frame(1).psn, 0);
	assert_int_equal(frame(2).psn, 1);
	assert_int_equal(frame(2).opcode, OP_READ_RESPONSE_LAST);
	assert_int_equal(qp->resp.psn, 2);
	/* Duplicate from PSN 0 (after the wrap) finds the resource. */
	nframes = 0;
	REQ(.opcode = OP_READ_REQUEST, .psn = 0, .ackreq = 1, .va = RMEM + MTU, .rkey = rkey_rmem,
	    .len = 2 * MTU);
	assert_int_equal(nframes, 2);
	assert_int_equal(frame(0).psn, 0);
	assert_int_equal(frame(0).opcode, OP_READ_RESPONSE_FIRST);
	assert_int_equal(frame(1).psn, 1);
	assert_int_equal(frame(1).opcode, OP_READ_RESPONSE_LAST);
}

/* ---- MigrOS: stopped, RESUME -------------------------------------------------------- */

static void test_stopped_naks(void **state)
{
	(void)state;
	post_recv1(1, RECV_BUF, 64);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = "one", .paylen = 3);
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RECV, 3);
	qp->stopped = 1;
	post_recv1(2, RECV_BUF + 64, 64);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN + 1, .ackreq = 1, .payload = "two", .paylen = 3);
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN + 1, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 3, .payload = "two", .paylen = 3);
	assert_int_equal(nframes, 3);
	expect_ack(1, AETH_NAK_STOPPED, RQ_PSN + 1, 1);
	expect_ack(2, AETH_NAK_STOPPED, RQ_PSN + 1, 1);
	expect_no_cqe();
	assert_int_equal(qp->rq.ci, 1);
	assert_int_equal(mem[RMEM], 0);
	assert_int_equal(qp->resp.psn, RQ_PSN + 1);
	assert_int_equal(e->cnt.resp_stopped_naks, 2);
	/* A duplicate is still acknowledged normally. */
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = "one", .paylen = 3);
	expect_ack(3, AETH_ACK_UNLIMITED, RQ_PSN, 1);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
	/* Restarted (the dump was abandoned): it executes. */
	qp->stopped = 0;
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN + 1, .ackreq = 1, .payload = "two", .paylen = 3);
	expect_ack(4, AETH_ACK_UNLIMITED, RQ_PSN + 1, 2);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_RECV, 3);
}

/* The peer was restored on another host: its RESUME (version 1, unkeyed,
 * as the operator allowed) names its new address in the payload, which
 * is what the responder takes, not the frame's headers; it must carry a
 * PSN the responder has received already, and is ACKed at that PSN with
 * the extension echoing its epoch. */
static void test_resume(void **state)
{
	static const uint8_t new_mac[6] = { 0x02, 0, 0, 0, 0, 0x77 };
	static const uint8_t ack_ext[8] = { 2, 0, 2, 0, 0, 0, 0, 1 };
	const uint32_t new_ip = 0x0a000077u;
	uint8_t pl[32] = { 2, 0, 0, 0, 0, 0, 0, 1 };   /* version 2, unkeyed, epoch 1 */
	struct out o;

	(void)state;
	mnic_gid_from_ipv4(pl + 8, new_ip);
	memcpy(pl + 24, new_mac, 6);
	rocev2_set_mig_flags(e, ROCEV2_MIG_F_UNKEYED);
	post_recv1(1, RECV_BUF, 64);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = "one", .paylen = 3);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN + 5, .ackreq = 1, .payload = "gap", .paylen = 3);
	assert_int_equal(qp->resp.sent_psn_nak, 1);
	qp->paused = 1;
	rocev2_poll(e, 64);                 /* empty the scheduler */
	assert_false(qp->scheduled);
	nframes = 0;

	/* A PSN the responder has not received: not one a restored
	 * requester can have had acknowledged. */
	REQ(.opcode = OP_RESUME, .psn = RQ_PSN + 1, .ackreq = 1, .payload = pl, .paylen = 32);
	assert_int_equal(nframes, 0);
	assert_int_equal(e->cnt.mig_resume_refused, 1);
	assert_int_equal(qp->paused, 1);

	/* From the old address, naming the new one. */
	REQ(.opcode = OP_RESUME, .psn = RQ_PSN, .ackreq = 1, .payload = pl, .paylen = 32);
	assert_int_equal(nframes, 1);
	o = frame(0);
	assert_int_equal(o.opcode, OP_ACKNOWLEDGE);
	assert_int_equal(o.syndrome, AETH_ACK_UNLIMITED);
	assert_int_equal(o.psn, RQ_PSN);
	assert_int_equal(o.paylen, 8);
	assert_memory_equal(o.payload, ack_ext, 8);
	assert_memory_equal(o.f, new_mac, 6);
	assert_int_equal(get_be32(o.f + ETH_HLEN + 16), new_ip);
	assert_memory_equal(qp->attr.av.dmac, new_mac, 6);
	assert_int_equal(rocev2_av_ipv4(&qp->attr.av), new_ip);
	assert_int_equal(qp->paused, 0);
	assert_int_equal(qp->mig.rx_epoch, 1);
	assert_int_equal(qp->resp.sent_psn_nak, 0);
	assert_true(qp->scheduled);
	assert_int_equal(e->cnt.resp_resumes, 1);
	/* Nothing else moved. */
	assert_int_equal(qp->resp.psn, RQ_PSN + 1);
	assert_int_equal(qp->resp.msn, 1);
	/* The peer now talks from its new address only. */
	post_recv1(2, RECV_BUF, 64);
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN + 1, .ackreq = 1, .payload = "two", .paylen = 3,
	    .src_ip = new_ip, .src_mac = new_mac);
	expect_ack(1, AETH_ACK_UNLIMITED, RQ_PSN + 1, 2);
	assert_memory_equal(frame(1).f, new_mac, 6);
}

/* ---- MSN -------------------------------------------------------------------------- */

/* IBA 9.7.5.1.2: SEND and WRITE count at their last packet, READ and
 * ATOMIC when accepted. */
static void test_msn_sequence(void **state)
{
	(void)state;
	post_recv1(1, RECV_BUF, 1024);
	REQ(.opcode = OP_SEND_FIRST, .psn = RQ_PSN, .ackreq = 1, .payload = mem, .paylen = MTU);
	expect_ack(0, AETH_ACK_UNLIMITED, RQ_PSN, 0);         /* AckReq mid-message: MSN 0 */
	REQ(.opcode = OP_SEND_LAST, .psn = RQ_PSN + 1, .ackreq = 1, .payload = mem, .paylen = 4);
	expect_ack(1, AETH_ACK_UNLIMITED, RQ_PSN + 1, 1);
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN + 2, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	expect_ack(2, AETH_ACK_UNLIMITED, RQ_PSN + 2, 2);
	REQ(.opcode = OP_READ_REQUEST, .psn = RQ_PSN + 3, .ackreq = 1, .va = RMEM,
	    .rkey = rkey_rmem, .len = 4);
	assert_int_equal(frame(3).msn, 3);
	REQ(.opcode = OP_COMPARE_SWAP, .psn = RQ_PSN + 4, .ackreq = 1, .va = RMEM,
	    .rkey = rkey_rmem);
	assert_int_equal(frame(4).msn, 4);
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN + 5, .va = RMEM, .rkey = rkey_rmem, .len = 0);
	assert_int_equal(nframes, 5);       /* no AckReq: no ACK */
	assert_int_equal(qp->resp.msn, 5);
}

/* ---- transmit failures ------------------------------------------------------------ */

/* An ACK that meets a full TX ring waits (resp.ack_deferred) and goes out
 * on the QP's next scheduler slice, not dropped; a duplicate arriving
 * meanwhile is covered by it.  A sequence NAK likewise (sent once per gap). */
static void test_ack_tx_busy_deferred(void **state)
{
	(void)state;
	tx_fail = 1;
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 0);
	assert_int_equal(e->cnt.tx_busy, 1);
	assert_int_equal(e->cnt.resp_tx_dropped, 0);
	assert_int_equal(qp->resp.psn, RQ_PSN + 1);
	assert_true(qp->resp.ack_deferred);
	assert_true(qp->scheduled);
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 0);       /* behind the deferred one */
	assert_int_equal(rocev2_resp_run(e, qp, 16), 1);
	expect_ack(0, AETH_ACK_UNLIMITED, RQ_PSN, 1);
	assert_false(qp->resp.ack_deferred);
	assert_int_equal(rocev2_resp_run(e, qp, 16), 0);
	assert_int_equal(nframes, 1);

	/* PSN RQ_PSN + 2 with RQ_PSN + 1 missing: the NAK waits for the ring. */
	tx_fail = 1;
	REQ(.opcode = OP_WRITE_ONLY, .psn = RQ_PSN + 2, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 1);
	assert_true(qp->resp.sent_psn_nak);
	assert_int_equal(rocev2_resp_run(e, qp, 16), 1);
	expect_ack(1, AETH_NAK_PSN_SEQ_ERROR, RQ_PSN + 1, 1);
	assert_int_equal(e->cnt.resp_tx_dropped, 0);
}

/* ---- flush ------------------------------------------------------------------------- */

/* The host moves the QP to ERR: every posted receive WQE is flushed, and
 * WQEs posted later are flushed at their doorbell (rocev2.c). */
/* Coalesced ACKs (rocev2_set_ack_coalesce): requests that
 * ask for an ACK get one ACK at the next poll for the newest of them, or
 * at once when ROCEV2_ACK_COALESCE_MAX wait; a NAK and a READ response
 * cover a waiting ACK and keep PSN order; off, every request is answered
 * at once (every other test). */
static void test_ack_coalescing(void **state)
{
	uint32_t psn = RQ_PSN;
	unsigned i;
	struct out o;

	(void)state;
	rocev2_poll(e, 64);                 /* RTS queued the QP: an idle scheduler */
	nframes = 0;
	rocev2_set_ack_coalesce(e, 1);
	for (i = 0; i < 5; i++, psn++)
		REQ(.opcode = OP_WRITE_ONLY, .psn = psn, .ackreq = 1, .va = RMEM + 4 * i,
		    .rkey = rkey_rmem, .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 0);
	assert_int_equal(qp->resp.ack_coalesced, 5);
	rocev2_poll(e, 64);
	assert_int_equal(nframes, 1);
	expect_ack(0, AETH_ACK_UNLIMITED, psn - 1, 5);
	assert_int_equal(e->cnt.resp_acks_coalesced, 4);
	assert_int_equal(qp->resp.ack_coalesced, 0);
	rocev2_poll(e, 64);
	assert_int_equal(nframes, 1);       /* sent once */

	/* At most ROCEV2_ACK_COALESCE_MAX wait: the next goes at once. */
	for (i = 0; i < ROCEV2_ACK_COALESCE_MAX; i++, psn++)
		REQ(.opcode = OP_WRITE_ONLY, .psn = psn, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
		    .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 2);
	expect_ack(1, AETH_ACK_UNLIMITED, psn - 1, 5 + ROCEV2_ACK_COALESCE_MAX);
	assert_int_equal(qp->resp.ack_deferred, 0);
	rocev2_poll(e, 64);
	assert_int_equal(nframes, 2);
	assert_int_equal(e->cnt.resp_acks_coalesced, 4 + ROCEV2_ACK_COALESCE_MAX - 1);

	/* A sequence NAK joins the waiting ACK: one NAK, later PSN wins. */
	REQ(.opcode = OP_WRITE_ONLY, .psn = psn, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	REQ(.opcode = OP_WRITE_ONLY, .psn = psn + 5, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	rocev2_poll(e, 64);
	assert_int_equal(nframes, 3);
	expect_ack(2, AETH_NAK_PSN_SEQ_ERROR, psn + 1, 6 + ROCEV2_ACK_COALESCE_MAX);
	psn++;

	/* A READ behind a waiting ACK: its response acknowledges the WRITE
	 * before it, which gets no ACK of its own. */
	REQ(.opcode = OP_WRITE_ONLY, .psn = psn, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	REQ(.opcode = OP_READ_REQUEST, .psn = psn + 1, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 8);
	rocev2_poll(e, 64);
	assert_int_equal(nframes, 4);
	o = frame(3);
	assert_int_equal(o.opcode, OP_READ_RESPONSE_ONLY);
	assert_int_equal(o.psn, psn + 1);
	assert_int_equal(o.msn, 8 + ROCEV2_ACK_COALESCE_MAX);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);

	/* Off again: at once. */
	rocev2_set_ack_coalesce(e, 0);
	REQ(.opcode = OP_WRITE_ONLY, .psn = psn + 2, .ackreq = 1, .va = RMEM, .rkey = rkey_rmem,
	    .len = 4, .payload = "abcd", .paylen = 4);
	assert_int_equal(nframes, 5);
	expect_ack(4, AETH_ACK_UNLIMITED, psn + 2, 9 + ROCEV2_ACK_COALESCE_MAX);
}

static void test_flush_on_modify_to_error(void **state)
{
	struct rocev2_qp_attr a;
	struct mnic_cqe c;

	(void)state;
	post_recv1(100, RECV_BUF, 1024);
	post_recv1(101, RECV_BUF, 64);
	post_recv1(102, RECV_BUF, 1024);
	REQ(.opcode = OP_SEND_FIRST, .psn = RQ_PSN, .payload = mem, .paylen = MTU);
	memset(&a, 0, sizeof(a));
	a.qp_state = ROCEV2_QPS_ERR;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, ROCEV2_QP_STATE), 0);
	/* The WQE being filled first, then the posted ones, in order. */
	expect_cqe(100, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	expect_cqe(101, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	expect_cqe(102, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	expect_no_cqe();
	post_recv1(103, RECV_BUF, 64);
	assert_true(poll_cq(&c));
	assert_int_equal(c.wr_id, 103);
	assert_int_equal(c.status, MNIC_WC_WR_FLUSH_ERR);
	assert_int_equal(e->cnt.flushed_wqes, 4);
	assert_int_equal(nframes, 0);
}

/* With an SRQ, only the WQE this QP was filling is flushed: the others
 * belong to the SRQ. */
static void test_flush_srq_keeps_wqes(void **state)
{
	struct rocev2_srq_attr sa;
	struct mnic_recv_wqe w;
	struct mnic_dbrec db = { 0, 0 };
	struct rocev2_qp_attr a;
	uint32_t srq, i;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.q = (struct rocev2_queue_attr){ .ring_addr = SRQ_RING, .dbrec_addr = SRQ_DB, .size = RQ_SIZE };
	sa.max_sge = 4;
	assert_int_equal(rocev2_create_srq(e, pd, &sa, &srq), 0);
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	make_qp(srq, RQ_PSN, ACCESS_ALL, 4);
	for (i = 0; i < 3; i++) {
		memset(&w, 0, sizeof(w));
		w.wr_id = 200 + i;
		w.num_sge = 1;
		w.sge[0] = (struct mnic_sge){ RECV_BUF + i * 0x400, 0x400, lkey_recv };
		memcpy(mem + SRQ_RING + i * MNIC_WQE_SIZE, &w, sizeof(w));
	}
	db.index = 3;
	memcpy(mem + SRQ_DB, &db, sizeof(db));
	REQ(.opcode = OP_SEND_ONLY, .psn = RQ_PSN, .ackreq = 1, .payload = "srq", .paylen = 3);
	expect_cqe(200, MNIC_WC_SUCCESS, MNIC_WC_RECV, 3);
	REQ(.opcode = OP_SEND_FIRST, .psn = RQ_PSN + 1, .payload = mem, .paylen = MTU);
	memset(&a, 0, sizeof(a));
	a.qp_state = ROCEV2_QPS_ERR;
	assert_int_equal(rocev2_modify_qp(e, qpn, &a, ROCEV2_QP_STATE), 0);
	expect_cqe(201, MNIC_WC_WR_FLUSH_ERR, 0, 0);
	expect_no_cqe();
	assert_int_equal(e->srqs[qp->srq].wq.ci, 2);       /* 202 still posted */
}

/* ---- loopback: the real requester and completer as the peer ------------------ *
 * A second engine (the peer) posts SEND, WRITE, READ, two atomics, a SEND
 * that finds no receive WQE (RNR until one is posted) and a long READ (our
 * scheduler sends most of it) to the QP under test through req.c; its
 * frames and ours cross a fake wire that drops the peer's first packet (a
 * gap: sequence NAK, resend, duplicates) and our first READ response
 * MIDDLE (a read replay from the middle).  Everything must complete, in
 * order, with the right data. */
static struct rocev2 peng;
static uint8_t pmem[WIN];
static struct hal_dma pdma;
static uint8_t pin[MAX_FRAMES][FRAME_MAX], wire[MAX_FRAMES][FRAME_MAX];
static size_t pin_len[MAX_FRAMES], wire_len[MAX_FRAMES];
static unsigned npin;

static int peer_tx(void *ctx, const void *f, size_t len)
{
	(void)ctx;
	assert_true(npin < MAX_FRAMES && len <= FRAME_MAX);
	memcpy(pin[npin], f, len);
	pin_len[npin++] = len;
	return 0;
}

static void peer_post_send(uint32_t i, uint8_t op, uint64_t laddr, uint32_t len, uint32_t lkey,
			   uint64_t raddr, uint64_t compare_add, uint64_t swap)
{
	struct mnic_send_wqe w;
	struct mnic_dbrec db = { i + 1, 0 };

	memset(&w, 0, sizeof(w));
	w.wr_id = i;
	w.opcode = op;
	w.send_flags = MNIC_SEND_SIGNALED;
	w.num_sge = 1;
	w.sge[0] = (struct mnic_sge){ laddr, len, lkey };
	w.remote_addr = raddr;
	w.rkey = rkey_rmem;
	w.compare_add = compare_add;
	w.swap = swap;
	memcpy(pmem + SQ_RING + (i & (RQ_SIZE - 1u)) * MNIC_WQE_SIZE, &w, sizeof(w));
	memcpy(pmem + SQ_DB, &db, sizeof(db));
}

static void test_loopback_with_losses(void **state)
{
	struct rocev2_env env = {
		.tx = peer_tx, .now_ns = fake_now, .dma = &pdma,
		.ipv4 = PEER_IP,
	};
	struct rocev2_qp_init_attr ia;
	struct rocev2_qp_attr a;
	struct rocev2_queue_attr q;
	uint32_t ppd, pscq, prcq, pqpn, plkey, prk, i, n, pscq_ci = 0, rounds;
	int dropped_req = 0, dropped_resp = 0, posted2 = 0;
	uint8_t sdata[300], wdata[600];
	struct mnic_cqe c;
	static const uint8_t wc_ops[7] = { MNIC_WC_SEND, MNIC_WC_RDMA_WRITE, MNIC_WC_RDMA_READ,
					   MNIC_WC_FETCH_ADD, MNIC_WC_COMP_SWAP, MNIC_WC_SEND,
					   MNIC_WC_RDMA_READ };

	(void)state;
	memcpy(env.mac, peer_mac, 6);
	memset(pmem, 0, sizeof(pmem));
	hal_dma_window_init(&pdma, pmem, WIN);
	npin = 0;
	assert_int_equal(rocev2_init(&peng, &env), 0);
	assert_int_equal(rocev2_alloc_pd(&peng, &ppd), 0);
	q = (struct rocev2_queue_attr){ .ring_addr = SCQ_RING, .dbrec_addr = SCQ_DB, .size = CQ_SIZE };
	assert_int_equal(rocev2_create_cq(&peng, &q, &pscq), 0);
	q = (struct rocev2_queue_attr){ .ring_addr = RCQ_RING, .dbrec_addr = RCQ_DB, .size = CQ_SIZE };
	assert_int_equal(rocev2_create_cq(&peng, &q, &prcq), 0);
	assert_int_equal(rocev2_reg_mr(&peng, ppd, RECV_BUF, RECV_LEN, ROCEV2_ACCESS_LOCAL_WRITE,
				       &plkey, &prk), 0);
	memset(&ia, 0, sizeof(ia));
	ia.pd = ppd;
	ia.send_cq = pscq;
	ia.recv_cq = prcq;
	ia.srq = ROCEV2_NO_SRQ;
	ia.sq = (struct rocev2_queue_attr){ .ring_addr = SQ_RING, .dbrec_addr = SQ_DB, .size = RQ_SIZE };
	ia.max_send_sge = 4;
	assert_int_equal(rocev2_create_qp(&peng, &ia, &pqpn), 0);

	/* Ours again, now pointing at the peer's QPN. */
	assert_int_equal(rocev2_destroy_qp(e, qpn), 0);
	dut_dest_qpn = pqpn;
	make_qp(ROCEV2_NO_SRQ, RQ_PSN, ACCESS_ALL, 4);

	memset(&a, 0, sizeof(a));
	a.qp_state = ROCEV2_QPS_INIT;
	assert_int_equal(rocev2_modify_qp(&peng, pqpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_ACCESS_FLAGS |
							   ROCEV2_QP_PKEY_INDEX | ROCEV2_QP_PORT), 0);
	a.qp_state = ROCEV2_QPS_RTR;
	memcpy(a.av.dmac, our_mac, 6);
	rocev2_av_set_ipv4(&a.av, OUR_IP);
	a.av.ttl = 64;
	a.path_mtu = ROCEV2_MTU_256;
	a.dest_qp_num = qpn;
	a.rq_psn = 5000;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	assert_int_equal(rocev2_modify_qp(&peng, pqpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_AV |
							   ROCEV2_QP_PATH_MTU | ROCEV2_QP_DEST_QPN |
							   ROCEV2_QP_RQ_PSN |
							   ROCEV2_QP_MAX_DEST_RD_ATOMIC |
							   ROCEV2_QP_MIN_RNR_TIMER), 0);
	a.qp_state = ROCEV2_QPS_RTS;
	a.sq_psn = RQ_PSN;
	a.timeout = 10;                 /* 4.2 ms */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	assert_int_equal(rocev2_modify_qp(&peng, pqpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_SQ_PSN |
							   ROCEV2_QP_TIMEOUT | ROCEV2_QP_RETRY_CNT |
							   ROCEV2_QP_RNR_RETRY |
							   ROCEV2_QP_MAX_QP_RD_ATOMIC), 0);

	fill(sdata, sizeof(sdata), 61);
	fill(wdata, sizeof(wdata), 62);
	fill(mem + RMEM + 0x2000, 700, 63);
	put_mem64(RMEM + 8, 40);
	memcpy(pmem + RECV_BUF, sdata, sizeof(sdata));
	memcpy(pmem + RECV_BUF + 0x1000, wdata, sizeof(wdata));
	post_recv1(1, RECV_BUF, 1024);
	peer_post_send(0, MNIC_WR_SEND, RECV_BUF, 300, plkey, 0, 0, 0);
	peer_post_send(1, MNIC_WR_RDMA_WRITE, RECV_BUF + 0x1000, 600, plkey, RMEM + 0x100, 0, 0);
	peer_post_send(2, MNIC_WR_RDMA_READ, RECV_BUF + 0x3000, 700, plkey, RMEM + 0x2000, 0, 0);
	peer_post_send(3, MNIC_WR_ATOMIC_FETCH_AND_ADD, RECV_BUF + 0x4000, 8, plkey, RMEM + 8, 5, 0);
	peer_post_send(4, MNIC_WR_ATOMIC_CMP_AND_SWP, RECV_BUF + 0x4008, 8, plkey, RMEM + 8, 45, 77);
	peer_post_send(5, MNIC_WR_SEND, RECV_BUF + 0x100, 100, plkey, 0, 0, 0);
	fill(mem + RMEM + 0x4000, 3000, 64);
	peer_post_send(6, MNIC_WR_RDMA_READ, RECV_BUF + 0x5000, 3000, plkey, RMEM + 0x4000, 0, 0);
	assert_int_equal(rocev2_sq_doorbell(&peng, pqpn), 0);

	for (rounds = 0; rounds < 400; rounds++) {
		int moved = 0;

		rocev2_poll(&peng, 64);
		rocev2_poll(e, 64);
		/* Peer -> us; frames we send meanwhile queue in frames[]. */
		n = npin;
		for (i = 0; i < n; i++) {
			memcpy(wire[i], pin[i], pin_len[i]);
			wire_len[i] = pin_len[i];
		}
		npin = 0;
		for (i = 0; i < n; i++) {
			moved = 1;
			if (!dropped_req) {
				dropped_req = 1;
				continue;
			}
			rocev2_rx(e, wire[i], wire_len[i]);
		}
		/* Us -> peer. */
		n = nframes;
		for (i = 0; i < n; i++) {
			memcpy(wire[i], frames[i], frame_len[i]);
			wire_len[i] = frame_len[i];
		}
		nframes = 0;
		for (i = 0; i < n; i++) {
			moved = 1;
			if (!dropped_resp && wire[i][ROCEV2_HDR_OFFSET] == OP_READ_RESPONSE_MIDDLE) {
				dropped_resp = 1;
				continue;
			}
			rocev2_rx(&peng, wire[i], wire_len[i]);
		}
		if (peng.cnt.comp_naks_rnr && !posted2) {
			post_recv1(2, RECV_BUF + 0x800, 1024);
			posted2 = 1;
		}
		if (!moved) {
			now += 1000000;     /* 1 ms: the peer's retransmit/RNR timers run */
			rocev2_run_timers(&peng, now);
			rocev2_run_timers(e, now);
		}
		memcpy(&c, pmem + SCQ_RING + 6 * MNIC_CQE_SIZE, sizeof(c));
		if (c.owner == MNIC_CQE_OWNER(6u, CQ_SIZE) && !rocev2_has_work(&peng) && !moved)
			break;
	}
	assert_true(dropped_req && dropped_resp && posted2);
	for (i = 0; i < 7; i++) {
		memcpy(&c, pmem + SCQ_RING + pscq_ci * MNIC_CQE_SIZE, sizeof(c));
		assert_int_equal(c.owner, MNIC_CQE_OWNER(pscq_ci, CQ_SIZE));
		pscq_ci++;
		assert_int_equal(c.wr_id, i);
		assert_int_equal(c.status, MNIC_WC_SUCCESS);
		assert_int_equal(c.opcode, wc_ops[i]);
	}
	expect_cqe(1, MNIC_WC_SUCCESS, MNIC_WC_RECV, 300);
	expect_cqe(2, MNIC_WC_SUCCESS, MNIC_WC_RECV, 100);
	expect_no_cqe();
	assert_memory_equal(mem + RECV_BUF, sdata, 300);
	assert_memory_equal(mem + RECV_BUF + 0x800, pmem + RECV_BUF + 0x100, 100);
	assert_memory_equal(pmem + RECV_BUF + 0x5000, mem + RMEM + 0x4000, 3000);
	assert_memory_equal(mem + RMEM + 0x100, wdata, 600);
	assert_memory_equal(pmem + RECV_BUF + 0x3000, mem + RMEM + 0x2000, 700);
	assert_int_equal(get_le32(pmem + RECV_BUF + 0x4000), 40);      /* fetch-add: before */
	assert_int_equal(get_le32(pmem + RECV_BUF + 0x4008), 45);      /* compare-swap: before */
	assert_int_equal(get_mem64(RMEM + 8), 77);
	assert_true(e->cnt.resp_out_of_seq >= 1);
	assert_true(e->cnt.resp_read_replays >= 1);
	assert_true(e->cnt.resp_rnr_naks >= 1);
	assert_int_equal(e->cnt.resp_rem_acc_naks + e->cnt.resp_inv_req_naks +
			 e->cnt.resp_rem_op_naks, 0);
	assert_int_equal(qp->state, ROCEV2_QPS_RTS);
	assert_int_equal(qp->resp.msn, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_send_only_scatter, setup),
		cmocka_unit_test_setup(test_resp_cq_event_solicited_flag, setup),
		cmocka_unit_test_setup(test_send_multi_packet, setup),
		cmocka_unit_test_setup(test_send_imm_and_inv, setup),
		cmocka_unit_test_setup(test_write_multi_packet, setup),
		cmocka_unit_test_setup(test_write_imm, setup),
		cmocka_unit_test_setup(test_write_imm_rnr, setup),
		cmocka_unit_test_setup(test_read_single, setup),
		cmocka_unit_test_setup(test_read_multi_packet_eagain, setup),
		cmocka_unit_test_setup(test_read_through_poll, setup),
		cmocka_unit_test_setup(test_compare_swap, setup),
		cmocka_unit_test_setup(test_fetch_add, setup),
		cmocka_unit_test_setup(test_dup_send_reacked, setup),
		cmocka_unit_test_setup(test_dup_read_replayed, setup),
		cmocka_unit_test_setup(test_dup_atomic_replayed, setup),
		cmocka_unit_test_setup(test_dup_without_resource_dropped, setup),
		cmocka_unit_test_setup(test_out_of_sequence, setup),
		cmocka_unit_test_setup(test_rnr_then_success, setup),
		cmocka_unit_test_setup(test_rkey_bad_key, setup),
		cmocka_unit_test_setup(test_rkey_out_of_bounds, setup),
		cmocka_unit_test_setup(test_rkey_missing_mr_access, setup),
		cmocka_unit_test_setup(test_rkey_dereg_mid_write, setup),
		cmocka_unit_test_setup(test_qp_access_flags, setup),
		cmocka_unit_test_setup(test_misaligned_atomic, setup),
		cmocka_unit_test_setup(test_op_seq_missing_first, setup),
		cmocka_unit_test_setup(test_op_seq_missing_last, setup),
		cmocka_unit_test_setup(test_length_errors, setup),
		cmocka_unit_test_setup(test_send_local_protection, setup),
		cmocka_unit_test_setup(test_malformed_recv_wqe, setup),
		cmocka_unit_test_setup(test_cq_overflow, setup),
		cmocka_unit_test_setup(test_read_mr_dereg_mid_reply, setup),
		cmocka_unit_test_setup(test_no_rd_atomic_resources, setup),
		cmocka_unit_test_setup(test_rd_atomic_slot_reuse, setup),
		cmocka_unit_test_setup(test_rd_atomic_stale_replay, setup),
		cmocka_unit_test_setup(test_psn_wrap, setup),
		cmocka_unit_test_setup(test_stopped_naks, setup),
		cmocka_unit_test_setup(test_resume, setup),
		cmocka_unit_test_setup(test_msn_sequence, setup),
		cmocka_unit_test_setup(test_ack_tx_busy_deferred, setup),
		cmocka_unit_test_setup(test_ack_coalescing, setup),
		cmocka_unit_test_setup(test_flush_on_modify_to_error, setup),
		cmocka_unit_test_setup(test_flush_srq_keeps_wqes, setup),
		cmocka_unit_test_setup(test_loopback_with_losses, setup),
	};
	return cmocka_run_group_tests_name("rocev2/resp", tests, NULL, NULL);
}
