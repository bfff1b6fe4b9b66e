/* Two RoCEv2 engines wired back to back in one process, for instruction
 * counts under callgrind (make bench):
 *
 *   engine_pair send64 N    N x 64 B SEND_ONLY from A to B
 *   engine_pair write4k N   N x 4 KiB RDMA WRITE packets (MTU 4096) A -> B
 *   engine_pair crc MiB     ICRC vs zlib crc32 throughput (wall clock)
 *
 * A third argument, tx or rx, makes only that phase collected under
 * `valgrind --tool=callgrind --collect-atstart=no`: "tx" is A's requester
 * building and sending packets, "rx" is B's receive path taking them
 * (including the ACKs it sends back: the engines coalesce them as the
 * firmware's do, rocev2_set_ack_coalesce, so B's rocev2_poll after each
 * burst is part of the phase; ENGINE_PAIR_COALESCE=0 in the environment
 * turns that off, one ACK per request).  bench/bench.sh divides the collected
 * instructions by the packets and subtracts the ICRC, the payload copies
 * (rocev2_icrc, rocev2_sge_gather/scatter, rocev2_mem_read/write) and this
 * pair's port (tx below), which the figures exclude.  A fourth argument, mtt, puts every
 * ring, doorbell record and MR of both engines behind a memory
 * translation table (4 KiB pages at IOVA_BASE; rocev2/mtt.c) instead of
 * physical addresses: the difference is the translation's cost.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <valgrind/callgrind.h>
#include <zlib.h>

#include "rocev2/internal.h"

#define WIN (8u << 20)
#define INBOX 4096u
#define FRAME_MAX 4200u

struct side {
	struct rocev2 e;
	struct hal_dma dma;
	uint8_t mem[WIN];
	uint32_t pd, lkey, cq, qpn;
	struct side *peer;
	uint8_t (*inbox)[FRAME_MAX];
	uint32_t inbox_len[INBOX];
	uint32_t in_head, in_tail;
};

static struct side A, B;
static uint64_t now_ns;
/* Engine addresses: va0 + host offset (0 in physical mode). */
#define IOVA_BASE 0x7f5500000000ull
static uint64_t va0;

static int tx(void *ctx, const void *frame, size_t len)
{
	struct side *s = ((struct side *)ctx)->peer;

	if (s->in_head - s->in_tail >= INBOX || len > FRAME_MAX)
		return -HAL_EAGAIN;
	memcpy(s->inbox[s->in_head % INBOX], frame, len);
	s->inbox_len[s->in_head % INBOX] = (uint32_t)len;
	s->in_head++;
	return 0;
}

static uint64_t clock_now(void *ctx)
{
	(void)ctx;
	return now_ns;
}

static void deliver(struct side *s)
{
	while (s->in_tail != s->in_head) {
		uint32_t i = s->in_tail % INBOX;

		rocev2_rx(&s->e, s->inbox[i], s->inbox_len[i]);
		s->in_tail++;
	}
}

#define RING 1024u
#define SQ_RING 0x000000u
#define RQ_RING 0x080000u
#define CQ_RING 0x100000u
#define DB_SQ 0x110000u
#define DB_RQ 0x110008u
#define DB_CQ 0x110010u
#define BUF 0x200000u

static uint32_t side_mtt[2];
static uint32_t mtt_of(const struct side *s)
{
	return va0 ? side_mtt[s == &B] : ROCEV2_NO_MTT;
}

/* The whole window behind one MTT, page i at host page i. */
static int setup_mtt(struct side *s)
{
	struct rocev2_mtt_attr a = { .iova = va0, .length = WIN, .page_shift = 12 };
	static uint64_t pages[512];
	uint32_t n, first, i, *m = &side_mtt[s == &B];

	if (rocev2_create_mtt(&s->e, &a, m, &n))
		return -1;
	for (first = 0; first < n; first += 512) {
		for (i = 0; i < 512; i++)
			pages[i] = (uint64_t)(first + i) << 12;
		if (rocev2_write_mtt(&s->e, *m, first, pages, 512))
			return -1;
	}
	return 0;
}

static void setup(struct side *s, struct side *peer, const uint8_t mac[6], unsigned mtu)
{
	struct rocev2_env env = { s, tx, clock_now, &s->dma, { 0 }, 0 };
	struct rocev2_queue_attr cq = { .ring_addr = va0 + CQ_RING, .dbrec_addr = va0 + DB_CQ,
					.size = RING };
	struct rocev2_qp_init_attr ia = { 0 };
	uint32_t rkey;

	s->peer = peer;
	s->inbox = calloc(INBOX, FRAME_MAX);
	hal_dma_window_init(&s->dma, s->mem, WIN);
	memcpy(env.mac, mac, 6);
	env.ipv4 = 0x0a000000u | mac[5];
	if (rocev2_init(&s->e, &env) || (va0 && setup_mtt(s)) || rocev2_alloc_pd(&s->e, &s->pd) ||
	    rocev2_reg_mr_mtt(&s->e, s->pd, mtt_of(s), va0, WIN, 15, &s->lkey, &rkey) ||
	    (cq.ring_mtt = cq.dbrec_mtt = mtt_of(s), rocev2_create_cq(&s->e, &cq, &s->cq))) {
		fprintf(stderr, "engine_pair: setup failed\n");
		exit(1);
	}
	ia.pd = s->pd;
	ia.send_cq = ia.recv_cq = s->cq;
	ia.srq = ROCEV2_NO_SRQ;
	ia.sq = (struct rocev2_queue_attr){ .ring_addr = va0 + SQ_RING, .dbrec_addr = va0 + DB_SQ,
					    .size = RING, .ring_mtt = mtt_of(s),
					    .dbrec_mtt = mtt_of(s) };
	ia.rq = (struct rocev2_queue_attr){ .ring_addr = va0 + RQ_RING, .dbrec_addr = va0 + DB_RQ,
					    .size = RING, .ring_mtt = mtt_of(s),
					    .dbrec_mtt = mtt_of(s) };
	ia.max_send_sge = ia.max_recv_sge = 1;
	if (rocev2_create_qp(&s->e, &ia, &s->qpn)) {
		fprintf(stderr, "engine_pair: create_qp failed\n");
		exit(1);
	}
	(void)mtu;
}

static void connect_qp(struct side *s, const uint8_t peer_mac[6], unsigned mtu)
{
	struct rocev2_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = ROCEV2_QPS_INIT;
	a.qp_access_flags = 14;
	if (rocev2_modify_qp(&s->e, s->qpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_PKEY_INDEX |
						ROCEV2_QP_PORT | ROCEV2_QP_ACCESS_FLAGS))
		goto bad;
	a.qp_state = ROCEV2_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = s->peer->qpn;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	memcpy(a.av.dmac, peer_mac, 6);
	rocev2_av_set_ipv4(&a.av, 0x0a000000u | peer_mac[5]);
	a.av.ttl = 64;
	if (rocev2_modify_qp(&s->e, s->qpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_AV | ROCEV2_QP_PATH_MTU |
						ROCEV2_QP_DEST_QPN | ROCEV2_QP_RQ_PSN |
						ROCEV2_QP_MAX_DEST_RD_ATOMIC | ROCEV2_QP_MIN_RNR_TIMER))
		goto bad;
	a.qp_state = ROCEV2_QPS_RTS;
	a.sq_psn = 100;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (rocev2_modify_qp(&s->e, s->qpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_SQ_PSN | ROCEV2_QP_TIMEOUT |
						ROCEV2_QP_RETRY_CNT | ROCEV2_QP_RNR_RETRY |
						ROCEV2_QP_MAX_QP_RD_ATOMIC))
		goto bad;
	return;
bad:
	fprintf(stderr, "engine_pair: connect failed\n");
	exit(1);
}

static void post_send(struct side *s, uint32_t i, uint8_t op, uint32_t len)
{
	struct mnic_send_wqe *w = (struct mnic_send_wqe *)(s->mem + SQ_RING + (i % RING) * MNIC_WQE_SIZE);

	memset(w, 0, sizeof(*w));
	w->wr_id = i;
	w->opcode = op;
	w->num_sge = 1;
	w->sge[0] = (struct mnic_sge){ va0 + BUF, len, s->lkey };
	w->remote_addr = va0 + BUF;
	w->rkey = s->peer->lkey;
}

static void post_recv(struct side *s, uint32_t i, uint32_t len)
{
	struct mnic_recv_wqe *w = (struct mnic_recv_wqe *)(s->mem + RQ_RING + (i % RING) * MNIC_WQE_SIZE);

	memset(w, 0, sizeof(*w));
	w->wr_id = i;
	w->num_sge = 1;
	w->sge[0] = (struct mnic_sge){ va0 + BUF, len, s->lkey };
}

static void set_db(struct side *s, uint32_t off, uint32_t v)
{
	memcpy(s->mem + off, &v, 4);
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int crc_bench(unsigned mib)
{
	static uint8_t buf[4096 + 64];
	uint64_t bytes = (uint64_t)mib << 20, done;
	volatile uint32_t sink = 0;
	double t0, t1, t2;

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7);
	/* A 4 KiB RoCEv2 packet from its IPv4 header on: what the ICRC covers. */
	buf[0] = 0x45;
	t0 = seconds();
	for (done = 0; done < bytes; done += 4096)
		sink ^= rocev2_icrc(buf, 4096);
	t1 = seconds();
	for (done = 0; done < bytes; done += 4096)
		sink ^= (uint32_t)crc32(0, buf, 4096);
	t2 = seconds();
	printf("icrc_gbps: %.2f Gbit/s\n", bytes * 8 / (t1 - t0) / 1e9);
	printf("zlib_crc32_gbps: %.2f Gbit/s\n", bytes * 8 / (t2 - t1) / 1e9);
	return sink == 0xdeadbeef;
}

int main(int argc, char **argv)
{
	static const uint8_t ma[6] = { 0x52, 0x54, 0, 0x70, 0, 1 }, mb[6] = { 0x52, 0x54, 0, 0x70, 0, 2 };
	unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 1000, mtu, i, rounds = 0;
	const char *phase = argc > 3 ? argv[3] : "none", *coalesce_env = getenv("ENGINE_PAIR_COALESCE");
	int write4k, col_tx, col_rx, coalesce;

	if (argc < 2 || n == 0) {
		fprintf(stderr, "usage: engine_pair send64|write4k N [tx|rx|none [mtt]] | crc MiB\n");
		return 2;
	}
	if (strcmp(argv[1], "crc") == 0)
		return crc_bench(n);
	write4k = strcmp(argv[1], "write4k") == 0;
	if ((!write4k && strcmp(argv[1], "send64") != 0) || n > RING) {
		fprintf(stderr, "engine_pair: unknown workload %s or N > %u\n", argv[1], RING);
		return 2;
	}
	if (argc > 4 && strcmp(argv[4], "mtt") == 0)
		va0 = IOVA_BASE;
	col_tx = strcmp(phase, "tx") == 0;
	col_rx = strcmp(phase, "rx") == 0;
	mtu = write4k ? ROCEV2_MTU_4096 : ROCEV2_MTU_1024;
	setup(&A, &B, ma, mtu);
	setup(&B, &A, mb, mtu);
	coalesce = !coalesce_env || strcmp(coalesce_env, "0") != 0;
	rocev2_set_ack_coalesce(&A.e, coalesce);
	rocev2_set_ack_coalesce(&B.e, coalesce);
	connect_qp(&A, mb, mtu);
	connect_qp(&B, ma, mtu);
	for (i = 0; i < n; i++) {
		if (write4k) {
			post_send(&A, i, MNIC_WR_RDMA_WRITE, 4096);
		} else {
			post_send(&A, i, MNIC_WR_SEND, 64);
			post_recv(&B, i, 64);
		}
	}
	set_db(&B, DB_RQ, write4k ? 0 : n);
	set_db(&A, DB_SQ, n);
	rocev2_rq_doorbell(&B.e, B.qpn);
	rocev2_sq_doorbell(&A.e, A.qpn);
	/* A's requester sends what its window allows, B receives and ACKs, A
	 * completes; only the phase named on the command line is collected
	 * (valgrind --collect-atstart=no). */
	while (B.e.cnt.rx_req_packets < n && rounds++ < 100000) {
		if (col_tx)
			CALLGRIND_TOGGLE_COLLECT;
		rocev2_poll(&A.e, 1u << 30);
		if (col_tx)
			CALLGRIND_TOGGLE_COLLECT;
		if (col_rx)
			CALLGRIND_TOGGLE_COLLECT;
		deliver(&B);
		rocev2_poll(&B.e, 1u << 30);    /* coalesced ACKs (and nothing else: B sends no requests) */
		if (col_rx)
			CALLGRIND_TOGGLE_COLLECT;
		deliver(&A);
	}
	printf("packets %u a_tx %llu b_rx_req %llu b_tx %llu a_rx_resp %llu\n", n,
	       (unsigned long long)A.e.cnt.tx_packets, (unsigned long long)B.e.cnt.rx_req_packets,
	       (unsigned long long)B.e.cnt.tx_packets, (unsigned long long)A.e.cnt.rx_resp_packets);
	return A.e.cnt.tx_packets == n && B.e.cnt.rx_req_packets == n ? 0 : 1;
}
