/* ibv-traffic: verified RC traffic on the standard libibverbs API only (no
 * libmnic, no mnic header): the same binary runs on rxe, on mnic and on
 * any RoCE device.  Modelled on hostdrv/tools/mnic-traffic.c.
 *
 *   server:  ibv-traffic -d DEV -g GIDX [options]
 *   client:  ibv-traffic -d DEV -g GIDX [options] SERVER
 *
 * One RC QP; the two ends exchange their QP information over TCP (as
 * ibv_rc_pingpong does) and run each a mix of -n operations:
 *   SEND            a message into the peer's receive buffer
 *   WRITE_WITH_IMM  a message into the peer's write area (slot seq %
 *                   WSLOTS), the immediate its seq (IBA 9.4.3: consumes a
 *                   receive WQE and completes there)
 *   RDMA READ       a slot of the peer's read area, each slot a message
 *                   of known content: every byte checked
 *   FETCH_ADD       on the peer's word 0: the value returned must be the
 *                   sum of every earlier add (IBA 9.4.5: executed once)
 *   CMP_SWAP        on the peer's word 1: compare = the value it must hold,
 *                   swap = +1; the value returned must equal the compare
 * Messages: tests/tools/ibv_traffic_msg.h (seq + CRC32C + a payload the
 * receiver regenerates).  Each end computes the other's plan from the
 * seed and count it was told, so it knows how many messages to wait for.
 * At the end each end tells the other what it sent and what its atomic
 * words must hold; each judges its own receive side and memory, and the
 * two verdicts are exchanged.  One line:
 *   ibv-traffic: PASS|FAIL ops N msgs_rx M lost L dup D ooo O bad B reads R bad_read X atomics A bad_atomic Y
 *                errors E peer PASS|FAIL (T s) max_gap_ms G
 * (G: the longest time between two completions of this end, the downtime
 * it saw, e.g. while its peer was migrated).  -r paces the posts (a run
 * that lasts at least N/RATE seconds, for a migration to happen in: the
 * pacer banks no more than PACE_BURST_S of unused time).
 * Exit: 0 both ends verified; 1 a check failed here or at the peer; 2
 * usage; 3 device or connection. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "ibv_traffic_msg.h"

#define SQ_DEPTH 32u
#define RQ_DEPTH 32u
/* Write-area slots: the receiver verifies a WRITE_WITH_IMM's slot before
 * it reposts the receive WQE it consumed; at most RQ_DEPTH messages sit
 * unverified and the sender has at most SQ_DEPTH more in flight, so a
 * slot is written again only after its message was checked. */
#define WSLOTS (2u * (SQ_DEPTH + RQ_DEPTH))
#define RSLOTS 16u
#define OOB_LEN 256u           /* every TCP message: one fixed-size text line */
#define RD_ATOM_MAX 16u

enum { EXIT_VERIFY = 1, EXIT_USAGE = 2, EXIT_DEVICE = 3 };

static struct {
	const char *dev, *server;
	int port, gidx, ib_port;
	enum ibv_mtu mtu;
	uint64_t n, seed;
	uint32_t max_len;
	double timeout;
	double rate;            /* -r: operations per second, 0 unpaced */
	const char *timeline;   /* -T: a sample every 100 ms */
	uint32_t xqps;          /* -Q: more QPs, connected to the peer's, idle */
	uint32_t xctx;          /* -C: contexts in all (the extra QPs spread over them) */
} cfg = {.port = 18520, .gidx = 0, .ib_port = 1, .mtu = IBV_MTU_1024, .n = 1000, .max_len = 4096,
	 .timeout = 60, .xctx = 1};

struct peer {                   /* what the other end tells over TCP */
	uint32_t qpn, psn, rkey, rd_atom, max_len;
	uint64_t warea, rarea, atom, seed, n;
	union ibv_gid gid;
};

struct sslot {                  /* one posted send WQE (all signaled) */
	enum ibvt_op op;
	uint32_t len, rslot;
	uint64_t expect;            /* atomics: the value the responder returns */
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem;
	uint32_t stride;            /* per-buffer size: max_len rounded to 64 */
	uint8_t *rbuf, *warea, *rarea, *sbuf;
	uint64_t *atom;
	struct peer peer;
	uint8_t dir, peer_dir;
	struct sslot sl[SQ_DEPTH];
	uint64_t posted, completed, tx_seq;
	uint64_t fa_sum, cas_cur, n_fadd;
	struct ibvt_rx rx;
	uint64_t rx_want;           /* messages the peer's plan carries */
	uint64_t reads, bad_read, atomics, bad_atomic, errors;
	uint64_t tx_bytes, rx_bytes;  /* message bytes sent, received (-T) */
} g;

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "ibv-traffic: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(code);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- out of band: TCP ------------------------------------------------------------ */

static int oob_connect(void)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
	char port[16];
	int fd, one = 1;

	snprintf(port, sizeof(port), "%d", cfg.port);
	if (cfg.server) {
		double end = now_s() + 10;

		if (getaddrinfo(cfg.server, port, &hints, &res) != 0)
			die(EXIT_DEVICE, "cannot resolve %s", cfg.server);
		for (;;) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (fd < 0)
				die(EXIT_DEVICE, "socket: %s", strerror(errno));
			if (connect(fd, res->ai_addr, res->ai_addrlen) == 0)
				break;
			close(fd);
			if (now_s() > end)
				die(EXIT_DEVICE, "cannot connect to %s:%d: %s", cfg.server, cfg.port, strerror(errno));
			usleep(100000);
		}
		freeaddrinfo(res);
	} else {
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg.port)};
		int l = socket(AF_INET, SOCK_STREAM, 0);

		if (l < 0)
			die(EXIT_DEVICE, "socket: %s", strerror(errno));
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0)
			die(EXIT_DEVICE, "cannot listen on port %d: %s", cfg.port, strerror(errno));
		fd = accept(l, NULL, NULL);
		if (fd < 0)
			die(EXIT_DEVICE, "accept: %s", strerror(errno));
		close(l);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void oob_send(int fd, const char *line)
{
	char buf[OOB_LEN] = {0};
	size_t off = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	while (off < sizeof(buf)) {
		ssize_t n = write(fd, buf + off, sizeof(buf) - off);

		if (n <= 0)
			die(EXIT_DEVICE, "TCP to the peer: %s", n ? strerror(errno) : "closed");
		off += (size_t)n;
	}
}

static void oob_recv(int fd, char *buf)
{
	size_t off = 0;

	while (off < OOB_LEN) {
		ssize_t n = read(fd, buf + off, OOB_LEN - off);

		if (n <= 0)
			die(EXIT_DEVICE, "TCP from the peer: %s", n ? strerror(errno) : "closed");
		off += (size_t)n;
	}
	buf[OOB_LEN - 1] = '\0';
}

static void exchange(int fd, const struct peer *me)
{
	char line[OOB_LEN], gid[33];
	struct peer *p = &g.peer;
	unsigned i;

	for (i = 0; i < 16; i++)
		snprintf(gid + 2 * i, 3, "%02x", me->gid.raw[i]);
	snprintf(line, sizeof(line), "IBVT1 %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIx64
		 " %" PRIx64 " %" PRIx64 " %" PRIu64 " %" PRIu64 " %s",
		 me->qpn, me->psn, me->rkey, me->rd_atom, me->max_len, me->warea, me->rarea, me->atom, me->seed,
		 me->n, gid);
	oob_send(fd, line);
	oob_recv(fd, line);
	if (sscanf(line, "IBVT1 %" SCNu32 " %" SCNu32 " %" SCNu32 " %" SCNu32 " %" SCNu32 " %" SCNx64 " %" SCNx64
		   " %" SCNx64 " %" SCNu64 " %" SCNu64 " %32s",
		   &p->qpn, &p->psn, &p->rkey, &p->rd_atom, &p->max_len, &p->warea, &p->rarea, &p->atom, &p->seed,
		   &p->n, gid) != 11 || strlen(gid) != 32)
		die(EXIT_DEVICE, "the peer's QP information is malformed: '%.80s'", line);
	for (i = 0; i < 16; i++) {
		unsigned b;

		sscanf(gid + 2 * i, "%2x", &b);
		p->gid.raw[i] = (uint8_t)b;
	}
	if (p->max_len != me->max_len)
		die(EXIT_USAGE, "message size differs: -s %u here, %u at the peer", me->max_len, p->max_len);
	if (p->rd_atom == 0 || p->rd_atom > RD_ATOM_MAX)
		die(EXIT_DEVICE, "the peer offers %u outstanding reads/atomics (1..%u)", p->rd_atom, RD_ATOM_MAX);
}

/* ---- the extra QPs (-Q, -C): connected RC QPs that carry nothing, over
 * -C contexts (the first is the traffic's), for a migration to move more
 * than one QP and context; each context of its own has a PD, a CQ and an MR. */
#define MAX_XQPS 1024u
#define MAX_XCTX 16u
static struct {
	struct ibv_context *ctx[MAX_XCTX];
	struct ibv_pd *pd[MAX_XCTX];
	struct ibv_cq *cq[MAX_XCTX];
	struct ibv_mr *mr[MAX_XCTX];
	struct ibv_qp *qp[MAX_XQPS];
	uint32_t psn[MAX_XQPS];
	uint32_t peer_qpn[MAX_XQPS], peer_psn[MAX_XQPS];
	uint8_t page[MAX_XCTX][4096];
} x;

/* ---- verbs set-up --------------------------------------------------------------- */

static struct ibv_context *open_device(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL), *dev = NULL;
	struct ibv_context *ctx;

	if (!list || !list[0])
		die(EXIT_DEVICE, "no RDMA device (is the driver loaded, the provider installed?)");
	for (int i = 0; list[i]; i++)
		if (!cfg.dev || strcmp(ibv_get_device_name(list[i]), cfg.dev) == 0)
			dev = list[i];
	if (!dev)
		die(EXIT_DEVICE, "no RDMA device %s", cfg.dev);
	ctx = ibv_open_device(dev);
	if (!ctx)
		die(EXIT_DEVICE, "ibv_open_device %s: %s", ibv_get_device_name(dev), strerror(errno));
	ibv_free_device_list(list);
	return ctx;
}

static void setup(struct peer *me)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	size_t size;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC;

	g.ctx = open_device();
	if (ibv_query_device(g.ctx, &da) || ibv_query_port(g.ctx, (uint8_t)cfg.ib_port, &pa))
		die(EXIT_DEVICE, "ibv_query_device/port: %s", strerror(errno));
	if (da.atomic_cap == IBV_ATOMIC_NONE)
		die(EXIT_DEVICE, "%s reports no atomics (atomic_cap NONE)", cfg.dev ? cfg.dev : "the device");
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		die(EXIT_DEVICE, "port %d is not RoCE (link layer %u)", cfg.ib_port, pa.link_layer);
	if (cfg.mtu > pa.active_mtu)
		die(EXIT_USAGE, "-m %d exceeds the port's active MTU %d", 128 << cfg.mtu, 128 << pa.active_mtu);
	if (ibv_query_gid(g.ctx, (uint8_t)cfg.ib_port, cfg.gidx, &me->gid))
		die(EXIT_DEVICE, "ibv_query_gid %d: %s", cfg.gidx, strerror(errno));
	me->rd_atom = (uint32_t)(da.max_qp_rd_atom < (int)RD_ATOM_MAX ? da.max_qp_rd_atom : (int)RD_ATOM_MAX);
	if (me->rd_atom == 0)
		die(EXIT_DEVICE, "the device allows no outstanding RDMA READ/atomic (max_qp_rd_atom 0)");

	g.stride = (cfg.max_len + 63u) & ~63u;
	size = (size_t)g.stride * (RQ_DEPTH + WSLOTS + RSLOTS + SQ_DEPTH) + 64;
	if (posix_memalign((void **)&g.mem, 4096, size))
		die(EXIT_DEVICE, "out of memory (%zu bytes)", size);
	memset(g.mem, 0, size);
	g.rbuf = g.mem;
	g.warea = g.rbuf + (size_t)g.stride * RQ_DEPTH;
	g.rarea = g.warea + (size_t)g.stride * WSLOTS;
	g.atom = (uint64_t *)(void *)(g.rarea + (size_t)g.stride * RSLOTS);   /* 64-aligned */
	g.sbuf = (uint8_t *)g.atom + 64;
	for (uint32_t k = 0; k < RSLOTS; k++)
		ibvt_msg_fill(g.rarea + (size_t)g.stride * k, ibvt_rslot_len(k, cfg.max_len), IBVT_RSLOT, g.dir, k);

	g.pd = ibv_alloc_pd(g.ctx);
	g.mr = g.pd ? ibv_reg_mr(g.pd, g.mem, size, acc) : NULL;
	g.scq = ibv_create_cq(g.ctx, (int)SQ_DEPTH, NULL, NULL, 0);
	g.rcq = ibv_create_cq(g.ctx, (int)RQ_DEPTH, NULL, NULL, 0);
	if (!g.pd || !g.mr || !g.scq || !g.rcq)
		die(EXIT_DEVICE, "PD/MR/CQ: %s", strerror(errno));
	struct ibv_qp_init_attr qa = {
		.send_cq = g.scq, .recv_cq = g.rcq, .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = {.max_send_wr = SQ_DEPTH, .max_recv_wr = RQ_DEPTH, .max_send_sge = 1, .max_recv_sge = 1},
	};
	g.qp = ibv_create_qp(g.pd, &qa);
	if (!g.qp)
		die(EXIT_DEVICE, "ibv_create_qp: %s", strerror(errno));
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = (uint8_t)cfg.ib_port,
				.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						   IBV_ACCESS_REMOTE_ATOMIC};
	if (ibv_modify_qp(g.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die(EXIT_DEVICE, "QP to INIT: %s", strerror(errno));
	me->qpn = g.qp->qp_num;
	me->psn = (uint32_t)(now_s() * 1e6) & 0xffffff;
	me->rkey = g.mr->rkey;
	me->max_len = cfg.max_len;
	me->warea = (uintptr_t)g.warea;
	me->rarea = (uintptr_t)g.rarea;
	me->atom = (uintptr_t)g.atom;
	me->seed = cfg.seed;
	me->n = cfg.n;
	for (uint32_t c = 1; c < cfg.xctx; c++) {
		x.ctx[c] = open_device();
		x.pd[c] = ibv_alloc_pd(x.ctx[c]);
		x.cq[c] = x.pd[c] ? ibv_create_cq(x.ctx[c], 4, NULL, NULL, 0) : NULL;
		x.mr[c] = x.cq[c] ? ibv_reg_mr(x.pd[c], x.page[c], sizeof(x.page[c]), acc) : NULL;
		if (!x.mr[c])
			die(EXIT_DEVICE, "context %u: PD/CQ/MR: %s", c, strerror(errno));
	}
	x.pd[0] = g.pd;
	x.cq[0] = g.scq;
	for (uint32_t i = 0; i < cfg.xqps; i++) {
		uint32_t c = i % cfg.xctx;
		struct ibv_qp_init_attr xa = {
			.send_cq = x.cq[c], .recv_cq = x.cq[c], .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
			.cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
		};

		x.qp[i] = ibv_create_qp(x.pd[c], &xa);
		if (!x.qp[i] || ibv_modify_qp(x.qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
							   IBV_QP_ACCESS_FLAGS))
			die(EXIT_DEVICE, "extra QP %u (context %u): %s", i, c, strerror(errno));
		x.psn[i] = (me->psn + 1000u * (i + 1)) & 0xffffff;
	}
}

/* Both ends' extra QPs, in order: "IBVT-XQP qpn psn" lines. */
static void exchange_xqps(int fd)
{
	char line[OOB_LEN];

	for (uint32_t i = 0; i < cfg.xqps; i++) {
		snprintf(line, sizeof(line), "IBVT-XQP %" PRIu32 " %" PRIu32, x.qp[i]->qp_num, x.psn[i]);
		oob_send(fd, line);
	}
	for (uint32_t i = 0; i < cfg.xqps; i++) {
		oob_recv(fd, line);
		if (sscanf(line, "IBVT-XQP %" SCNu32 " %" SCNu32, &x.peer_qpn[i], &x.peer_psn[i]) != 2)
			die(EXIT_DEVICE, "the peer's extra QP %u is malformed (same -Q both ends?): '%.40s'", i,
			    line);
	}
}

static void post_recv(uint32_t i)
{
	struct ibv_sge s = {.addr = (uintptr_t)(g.rbuf + (size_t)g.stride * i), .length = cfg.max_len,
			    .lkey = g.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &s, .num_sge = 1}, *bad;

	if (ibv_post_recv(g.qp, &wr, &bad))
		die(EXIT_DEVICE, "ibv_post_recv: %s", strerror(errno));
}

/* INIT -> RTR -> RTS (IBA 11.2.5 Modify QP; the attributes RC needs) */
static void connect_one(struct ibv_qp *qp, const struct peer *me, uint32_t dest_qpn, uint32_t rq_psn,
			uint32_t sq_psn)
{
	const struct peer *p = &g.peer;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = cfg.mtu, .dest_qp_num = dest_qpn, .rq_psn = rq_psn,
		.max_dest_rd_atomic = (uint8_t)me->rd_atom, .min_rnr_timer = 12,
		.ah_attr = {.is_global = 1, .port_num = (uint8_t)cfg.ib_port,
			    .grh = {.dgid = p->gid, .sgid_index = (uint8_t)cfg.gidx, .hop_limit = 64}},
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die(EXIT_DEVICE, "QP %u to RTR: %s", qp->qp_num, strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 16;          /* 268 ms per try: emulated NICs on a loaded machine */
	a.retry_cnt = 7;
	a.rnr_retry = 7;         /* IBA 9.7.5.2.8: retry RNR NAKs forever */
	a.max_rd_atomic = (uint8_t)(p->rd_atom < me->rd_atom ? p->rd_atom : me->rd_atom);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die(EXIT_DEVICE, "QP %u to RTS: %s", qp->qp_num, strerror(errno));
}

static void connect_qp(const struct peer *me)
{
	for (uint32_t i = 0; i < RQ_DEPTH; i++)
		post_recv(i);
	connect_one(g.qp, me, g.peer.qpn, g.peer.psn, me->psn);
	for (uint32_t i = 0; i < cfg.xqps; i++)
		connect_one(x.qp[i], me, x.peer_qpn[i], x.peer_psn[i], x.psn[i]);
}

/* ---- the traffic --------------------------------------------------------------- */

static void post_one(void)
{
	uint64_t i = g.posted;
	uint32_t k = (uint32_t)(i % SQ_DEPTH);
	struct sslot *sl = &g.sl[k];
	uint8_t *buf = g.sbuf + (size_t)g.stride * k;
	struct ibv_sge s = {.addr = (uintptr_t)buf, .lkey = g.mr->lkey};
	struct ibv_send_wr wr = {.wr_id = k, .sg_list = &s, .num_sge = 1}, *bad;
	const struct peer *p = &g.peer;

	sl->op = ibvt_plan_op(cfg.seed, i);
	switch (sl->op) {
	case IBVT_OP_SEND:
	case IBVT_OP_WIMM:
		sl->len = ibvt_plan_len(cfg.seed, i, cfg.max_len);
		ibvt_msg_fill(buf, sl->len, sl->op == IBVT_OP_SEND ? IBVT_SEND : IBVT_WIMM, g.dir, g.tx_seq);
		s.length = sl->len;
		if (sl->op == IBVT_OP_SEND) {
			wr.opcode = IBV_WR_SEND;
		} else {
			wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			wr.imm_data = htonl((uint32_t)g.tx_seq);
			wr.wr.rdma.remote_addr = p->warea + (uint64_t)g.stride * (g.tx_seq % WSLOTS);
			wr.wr.rdma.rkey = p->rkey;
		}
		g.tx_seq++;
		g.tx_bytes += sl->len;
		break;
	case IBVT_OP_READ:
		sl->rslot = (uint32_t)(ibvt_plan_len(cfg.seed ^ 0x5eed, i, 0xffff) % RSLOTS);
		sl->len = ibvt_rslot_len(sl->rslot, cfg.max_len);
		memset(buf, 0xa5, sl->len);    /* what a READ that placed nothing leaves */
		s.length = sl->len;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = p->rarea + (uint64_t)g.stride * sl->rslot;
		wr.wr.rdma.rkey = p->rkey;
		break;
	case IBVT_OP_FADD:
		sl->expect = g.fa_sum;
		s.length = 8;
		memset(buf, 0xa5, 8);
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = p->atom;
		wr.wr.atomic.compare_add = ibvt_plan_add(cfg.seed, g.n_fadd++);
		wr.wr.atomic.rkey = p->rkey;
		g.fa_sum += wr.wr.atomic.compare_add;
		break;
	case IBVT_OP_CSWAP:
	default:
		sl->expect = g.cas_cur;
		s.length = 8;
		memset(buf, 0xa5, 8);
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = p->atom + 8;
		wr.wr.atomic.compare_add = g.cas_cur;
		wr.wr.atomic.swap = g.cas_cur + 1;
		wr.wr.atomic.rkey = p->rkey;
		g.cas_cur++;
		break;
	}
	if (ibv_post_send(g.qp, &wr, &bad))
		die(EXIT_DEVICE, "ibv_post_send (%s): %s", ibvt_op_name[sl->op], strerror(errno));
	g.posted++;
}

static void send_done(const struct ibv_wc *wc)
{
	uint32_t k = (uint32_t)(g.completed % SQ_DEPTH);
	struct sslot *sl = &g.sl[k];
	const uint8_t *buf = g.sbuf + (size_t)g.stride * k;
	const char *why;
	uint64_t v;

	if (wc->wr_id != k) {
		fprintf(stderr, "ibv-traffic: send completion for WQE %" PRIu64 ", expected %u (out of order)\n",
			(uint64_t)wc->wr_id, k);
		g.errors++;
	}
	g.completed++;
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "ibv-traffic: %s completed with %s\n", ibvt_op_name[sl->op],
			ibv_wc_status_str(wc->status));
		g.errors++;
		return;
	}
	switch (sl->op) {
	case IBVT_OP_READ:
		g.reads++;
		if (ibvt_msg_check(buf, sl->len, IBVT_RSLOT, g.peer_dir, sl->rslot, NULL, &why) != 0) {
			fprintf(stderr, "ibv-traffic: READ of slot %u: %s\n", sl->rslot, why);
			g.bad_read++;
		}
		break;
	case IBVT_OP_FADD:
	case IBVT_OP_CSWAP:
		g.atomics++;
		memcpy(&v, buf, 8);   /* the original value, host order (IBA 9.4.5; verbs return it so) */
		if (v != sl->expect) {
			fprintf(stderr, "ibv-traffic: %s returned %" PRIu64 ", expected %" PRIu64 "\n",
				ibvt_op_name[sl->op], v, sl->expect);
			g.bad_atomic++;
		}
		break;
	default:
		break;
	}
}

static void recv_done(const struct ibv_wc *wc)
{
	uint32_t i = (uint32_t)wc->wr_id;
	const char *why = NULL;
	enum ibvt_verdict v;

	if (i >= RQ_DEPTH) {
		fprintf(stderr, "ibv-traffic: receive completion for unknown WQE %u\n", i);
		g.errors++;
		return;
	}
	if (wc->status == IBV_WC_SUCCESS)
		g.rx_bytes += wc->byte_len;
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "ibv-traffic: receive completed with %s\n", ibv_wc_status_str(wc->status));
		g.errors++;
		return;
	}
	if (wc->opcode == IBV_WC_RECV) {
		v = ibvt_rx_take(&g.rx, g.rbuf + (size_t)g.stride * i, wc->byte_len, IBVT_SEND, g.peer_dir, 0, &why);
	} else if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		uint32_t imm = ntohl(wc->imm_data);
		const uint8_t *m = g.warea + (size_t)g.stride * (imm % WSLOTS);
		uint32_t len = (uint32_t)m[16] | (uint32_t)m[17] << 8 | (uint32_t)m[18] << 16 | (uint32_t)m[19] << 24;

		/* the length from the header (byte_len of a WRITE_WITH_IMM is
		 * not the same on every device), bounded by the slot */
		if (len > cfg.max_len)
			len = cfg.max_len;
		v = ibvt_rx_take(&g.rx, m, len, IBVT_WIMM, g.peer_dir, imm, &why);
	} else {
		fprintf(stderr, "ibv-traffic: unexpected receive opcode %d\n", wc->opcode);
		g.errors++;
		post_recv(i);
		return;
	}
	if (v != IBVT_OK)
		fprintf(stderr, "ibv-traffic: message %" PRIu64 ": %s\n", g.rx.expect, why);
	post_recv(i);
}

static double max_gap_s;

/* -T FILE: every 100 ms one row "t_s,epoch_ms,tx_msgs_s,tx_bytes_s,
 * rx_msgs_s,rx_bytes_s,completions_s" (rates over the interval ending at
 * epoch_ms, the wall clock: rows of two hosts compare), as mnic-traffic
 * writes them. */
static struct {
	FILE *f;
	double t0, last;
	uint64_t tx, txb, rx, rxb, comp;
} tl;

static double wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void timeline_sample(double t)
{
	uint64_t rx = g.rx.ok + g.rx.dup + g.rx.ooo + g.rx.bad, comp = g.completed + rx;
	double iv = t - tl.last;

	if (!tl.f || iv < 0.1)
		return;
	fprintf(tl.f, "%.3f,%.0f,%.1f,%.1f,%.1f,%.1f,%.1f\n", t - tl.t0, wall_ms(),
		(double)(g.tx_seq - tl.tx) / iv, (double)(g.tx_bytes - tl.txb) / iv,
		(double)(rx - tl.rx) / iv, (double)(g.rx_bytes - tl.rxb) / iv,
		(double)(comp - tl.comp) / iv);
	fflush(tl.f);
	tl.last = t;
	tl.tx = g.tx_seq;
	tl.txb = g.tx_bytes;
	tl.rx = rx;
	tl.rxb = g.rx_bytes;
	tl.comp = comp;
}

/* The pacer's bucket: at most this many seconds of posts at once.  Time
 * the sender could not use (a migration's pause, or the monotonic clock
 * of the host it was restored on running ahead of the old one's) is not
 * banked beyond it, so a paced run never ends before OPS/RATE seconds
 * after its start. */
#define PACE_BURST_S 0.25

static int run(void)
{
	double t0 = now_s(), end = t0 + cfg.timeout, last = t0, pace_t0 = t0;
	struct ibv_wc wc[16];

	tl.t0 = tl.last = t0;

	while (g.completed < cfg.n || g.rx.ok + g.rx.dup + g.rx.ooo + g.rx.bad < g.rx_want) {
		uint64_t done = g.completed + g.rx.ok + g.rx.dup + g.rx.ooo + g.rx.bad;
		double t;
		int n;

		if (cfg.rate > 0) {
			double behind = (now_s() - pace_t0) * cfg.rate - (double)g.posted;

			if (behind > cfg.rate * PACE_BURST_S)
				pace_t0 += (behind - cfg.rate * PACE_BURST_S) / cfg.rate;
		}
		while (g.posted < cfg.n && g.posted - g.completed < SQ_DEPTH &&
		       (cfg.rate <= 0 || (double)g.posted < (now_s() - pace_t0) * cfg.rate + 1))
			post_one();
		n = ibv_poll_cq(g.scq, 16, wc);
		if (n < 0)
			die(EXIT_DEVICE, "ibv_poll_cq (send): %d", n);
		for (int j = 0; j < n; j++)
			send_done(&wc[j]);
		n = ibv_poll_cq(g.rcq, 16, wc);
		if (n < 0)
			die(EXIT_DEVICE, "ibv_poll_cq (recv): %d", n);
		for (int j = 0; j < n; j++)
			recv_done(&wc[j]);
		if (g.errors)
			return -1;
		t = now_s();
		if (t < last || t < tl.last) {
			/* the monotonic clock stepped back: the process was restored
			 * on another host (CRIU), whose clock started later */
			double back = (t < last ? last : tl.last) - t;

			t0 -= back;
			pace_t0 -= back;
			end -= back;
			last -= back;
			tl.t0 -= back;
			tl.last -= back;
		}
		timeline_sample(t);
		if (g.completed + g.rx.ok + g.rx.dup + g.rx.ooo + g.rx.bad != done) {
			if (t - last > max_gap_s)
				max_gap_s = t - last;
			last = t;
		}
		if (t > end) {
			fprintf(stderr, "ibv-traffic: stuck after %.0f s: %" PRIu64 "/%" PRIu64 " operations completed, %"
				PRIu64 "/%" PRIu64 " messages received\n", cfg.timeout, g.completed, cfg.n,
				g.rx.ok + g.rx.dup + g.rx.ooo + g.rx.bad, g.rx_want);
			return -1;
		}
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ibv-traffic [-d DEV] [-g GIDX] [-i PORT] [-m MTU] [-n OPS] [-s SIZE] [-p TCPPORT]\n"
		"                   [-S SEED] [-t TIMEOUT_S] [-r OPS_PER_S] [-T FILE] [-Q N] [-C K] [SERVER]\n"
		"  -d RDMA device (default: the first)   -g GID index of a RoCEv2 GID (0)\n"
		"  -i device port (1)                    -m path MTU 256..4096 (1024)\n"
		"  -n operations per end (1000)          -s largest message, 32..1048576 bytes (4096)\n"
		"  -p TCP port of the exchange (18520)   -S seed of this end's mix (pid)\n"
		"  -t seconds the run may take before FAIL (60)\n"
		"  -r operations per second, paced (unpaced)\n"
		"  -T FILE  timeline: a CSV row every 100 ms\n"
		"  -Q N     N more QPs, connected to the peer's (same -Q there), idle\n"
		"  -C K     K contexts in all, the extra QPs spread over them (1)\n");
	exit(EXIT_USAGE);
}

static long num(const char *s, long lo, long hi, const char *what)
{
	char *e;
	long v;

	errno = 0;
	v = strtol(s, &e, 0);
	if (errno || *e || v < lo || v > hi)
		die(EXIT_USAGE, "%s: '%s' is not a number in %ld..%ld", what, s, lo, hi);
	return v;
}

int main(int argc, char **argv)
{
	struct peer me = {0};
	char line[OOB_LEN];
	int c, fd, ok, peer_ok = 0;
	uint64_t p_sent, p_fa, p_cas;

	cfg.seed = (uint64_t)getpid();
	while ((c = getopt(argc, argv, "d:g:i:m:n:s:p:S:t:r:T:Q:C:h")) != -1) {
		switch (c) {
		case 'd': cfg.dev = optarg; break;
		case 'g': cfg.gidx = (int)num(optarg, 0, 255, "-g"); break;
		case 'i': cfg.ib_port = (int)num(optarg, 1, 255, "-i"); break;
		case 'm':
			switch (num(optarg, 256, 4096, "-m")) {
			case 256: cfg.mtu = IBV_MTU_256; break;
			case 512: cfg.mtu = IBV_MTU_512; break;
			case 1024: cfg.mtu = IBV_MTU_1024; break;
			case 2048: cfg.mtu = IBV_MTU_2048; break;
			case 4096: cfg.mtu = IBV_MTU_4096; break;
			default: die(EXIT_USAGE, "-m: 256, 512, 1024, 2048 or 4096");
			}
			break;
		case 'n': cfg.n = (uint64_t)num(optarg, 1, 100000000, "-n"); break;
		case 's': cfg.max_len = (uint32_t)num(optarg, IBVT_HDR_LEN, 1 << 20, "-s"); break;
		case 'p': cfg.port = (int)num(optarg, 1, 65535, "-p"); break;
		case 'S': cfg.seed = (uint64_t)num(optarg, 0, 0x7fffffff, "-S"); break;
		case 't': cfg.timeout = (double)num(optarg, 1, 3600, "-t"); break;
		case 'r': cfg.rate = (double)num(optarg, 1, 10000000, "-r"); break;
		case 'T': cfg.timeline = optarg; break;
		case 'Q': cfg.xqps = (uint32_t)num(optarg, 0, MAX_XQPS, "-Q"); break;
		case 'C': cfg.xctx = (uint32_t)num(optarg, 1, MAX_XCTX, "-C"); break;
		default: usage();
		}
	}
	if (optind < argc - 1)
		usage();
	if (optind == argc - 1)
		cfg.server = argv[optind];
	g.dir = cfg.server ? 1 : 0;
	g.peer_dir = (uint8_t)!g.dir;

	if (cfg.timeline) {
		tl.f = fopen(cfg.timeline, "w");
		if (!tl.f)
			die(EXIT_USAGE, "-T %s: %s", cfg.timeline, strerror(errno));
		fprintf(tl.f, "t_s,epoch_ms,tx_msgs_s,tx_bytes_s,rx_msgs_s,rx_bytes_s,completions_s\n");
	}
	setup(&me);
	fd = oob_connect();
	exchange(fd, &me);
	exchange_xqps(fd);
	g.rx_want = ibvt_plan_msgs(g.peer.seed, g.peer.n);
	connect_qp(&me);
	/* both QPs in RTR before either sends (ibv_rc_pingpong's rule) */
	oob_send(fd, "IBVT-GO");
	oob_recv(fd, line);
	if (strcmp(line, "IBVT-GO") != 0)
		die(EXIT_DEVICE, "the peer did not get ready: '%.40s'", line);

	double t0 = now_s();
	ok = run() == 0;
	/* what we sent and what our atomics left in the peer's words */
	snprintf(line, sizeof(line), "IBVT-END %d %" PRIu64 " %" PRIu64 " %" PRIu64, ok, g.tx_seq, g.fa_sum, g.cas_cur);
	oob_send(fd, line);
	oob_recv(fd, line);
	if (sscanf(line, "IBVT-END %d %" SCNu64 " %" SCNu64 " %" SCNu64, &peer_ok, &p_sent, &p_fa, &p_cas) != 4)
		die(EXIT_DEVICE, "the peer's end report is malformed: '%.80s'", line);
	if (peer_ok) {
		/* the peer completed every atomic: its responses came from our words */
		ibvt_rx_finish(&g.rx, p_sent);
		if (p_sent != g.rx_want) {
			fprintf(stderr, "ibv-traffic: the peer sent %" PRIu64 " messages, its plan has %" PRIu64 "\n",
				p_sent, g.rx_want);
			g.errors++;
		}
		if (g.atom[0] != p_fa || g.atom[1] != p_cas) {
			fprintf(stderr, "ibv-traffic: atomic words %" PRIu64 "/%" PRIu64 ", the peer's adds and swaps make %"
				PRIu64 "/%" PRIu64 "\n", g.atom[0], g.atom[1], p_fa, p_cas);
			g.bad_atomic++;
		}
	}
	ok = ok && g.rx.lost == 0 && g.rx.dup == 0 && g.rx.ooo == 0 && g.rx.bad == 0 && g.bad_read == 0 &&
	     g.bad_atomic == 0 && g.errors == 0;
	/* the verdicts: each end's own, then the peer's */
	oob_send(fd, ok ? "IBVT-VERDICT 1" : "IBVT-VERDICT 0");
	oob_recv(fd, line);
	peer_ok = strcmp(line, "IBVT-VERDICT 1") == 0;
	printf("ibv-traffic: %s ops %" PRIu64 " msgs_tx %" PRIu64 " msgs_rx %" PRIu64 " lost %" PRIu64 " dup %" PRIu64
	       " ooo %" PRIu64 " bad %" PRIu64 " reads %" PRIu64 " bad_read %" PRIu64 " atomics %" PRIu64
	       " bad_atomic %" PRIu64 " errors %" PRIu64 " peer %s (%.2f s) max_gap_ms %.1f\n",
	       ok && peer_ok ? "PASS" : "FAIL", g.completed, g.tx_seq, g.rx.ok, g.rx.lost, g.rx.dup, g.rx.ooo,
	       g.rx.bad, g.reads, g.bad_read, g.atomics, g.bad_atomic, g.errors, peer_ok ? "PASS" : "FAIL",
	       now_s() - t0, max_gap_s * 1e3);
	close(fd);
	ibv_destroy_qp(g.qp);
	ibv_destroy_cq(g.scq);
	ibv_destroy_cq(g.rcq);
	ibv_dereg_mr(g.mr);
	ibv_dealloc_pd(g.pd);
	ibv_close_device(g.ctx);
	free(g.mem);
	return ok && peer_ok ? 0 : EXIT_VERIFY;
}
