/* rcx: verified RDMA traffic between two NICs, with the firmware playing
 * the host as well.
 *
 * The firmware lays out host memory in what the engine reaches (its DMA
 * window, or the platform's host-memory aperture) exactly as a
 * host application would (rings, doorbell records, buffers, MRs), posts
 * WQEs, rings doorbells and polls CQEs through the same engine API the
 * host interface uses, so every packet on the wire is real RoCEv2 RC
 * traffic, while the NIC needs no host.  It is the engine's end-to-end
 * test (tests/integration/rc_*.sh) and its benchmark (make bench).
 *
 * Verification, per QP, with no shared state between the two NICs: a
 * pure generator g(seed, sender MAC, qp, seq) gives every operation's
 * opcode and length, so the receiver replays its peer's generator and
 * knows exactly which receive completion must come next and what its
 * payload must be.
 *   SEND / SEND_IMM  receiver checks order, length, immediate, every byte
 *   WRITE_IMM        receiver checks order, length, immediate
 *   WRITE            the writer's later READ of the same area checks it
 *   READ             reads back the last WRITE(_IMM) area: every byte
 *   FETCH_ADD / CMP_SWAP on a per-QP word only this side touches: the
 *                    returned original value must be the tracked one
 * Any error completion, mismatch or timeout fails the run.
 *
 * Start: the two NICs boot at different times (two emulated boards on a
 * loaded machine can be seconds apart), and a requester that starts at
 * READY would spend its retry budget (IBA 9.7.6.1.3: retry_cnt x the
 * timeout) on a peer that is not there yet.  So each side first says
 * hello: a raw frame (EtherType 0x88B5, IEEE 802 local experimental, kind
 * RCX_HELLO, so rawx and the POSIX NIC's announce frame never take it for
 * theirs) every RCX_HELLO_NS until it starts, flagged HEARD once it has
 * heard the peer and STARTED once it has started.  A side starts posting
 * work when a hello says the peer heard it (both QP sets are in RTS by
 * then: setup() precedes the hellos on each side), and answers at once
 * every hello from a side that has not started, so the exchange ends
 * with the side that starts last, whichever hellos were lost.  The run's
 * clock (elapsed_us, rates) starts there too.
 */
#include <string.h>

#include "hal/errno.h"
#include "hal/mmio.h"
#include "log.h"
#include "modes.h"
#include "engine.h"

#define RCX_MAX_QPS   64u
#define RCX_DEPTH     2u          /* send operations in flight per QP */
#define RCX_RECVS     2u          /* receives posted per QP */
#define RCX_SQ_SIZE   16u
#define RCX_RQ_SIZE   16u
#define RCX_CQ_SIZE   1024u

/* The start handshake's frame: Ethernet header, then kind, version, flags
 * and the magic, padded to the 60-byte minimum frame. */
#define RCX_ETHERTYPE   0x88b5u
#define RCX_HELLO       0x52u       /* 'R': not a rawx kind (1, 2) */
#define RCX_HELLO_VER   1u
#define RCX_HELLO_HEARD 0x01u       /* the sender has heard our hello */
#define RCX_HELLO_STARTED 0x02u     /* the sender has started: no answer */
#define RCX_HELLO_MAGIC 0x52435848u /* "RCXH" */
#define RCX_HELLO_LEN   60u
#define RCX_HELLO_NS    20000000u   /* 20 ms */

enum rcx_op { RCX_SEND, RCX_SEND_IMM, RCX_WRITE, RCX_WRITE_IMM, RCX_READ, RCX_FADD, RCX_CSWAP,
	      RCX_NUM_OPS };

static const struct {
	const char *name;
	uint8_t wr_opcode;
	uint8_t consumes_recv;    /* produces a receive completion at the peer */
	uint8_t has_payload;
} rcx_ops[RCX_NUM_OPS] = {
	[RCX_SEND] = { "send", MNIC_WR_SEND, 1, 1 },
	[RCX_SEND_IMM] = { "send_imm", MNIC_WR_SEND_WITH_IMM, 1, 1 },
	[RCX_WRITE] = { "write", MNIC_WR_RDMA_WRITE, 0, 1 },
	[RCX_WRITE_IMM] = { "write_imm", MNIC_WR_RDMA_WRITE_WITH_IMM, 1, 1 },
	[RCX_READ] = { "read", MNIC_WR_RDMA_READ, 0, 1 },
	[RCX_FADD] = { "fetch_add", MNIC_WR_ATOMIC_FETCH_AND_ADD, 0, 0 },
	[RCX_CSWAP] = { "cmp_swap", MNIC_WR_ATOMIC_CMP_AND_SWP, 0, 0 },
};

struct rcx_slot {                 /* one send operation in flight */
	uint8_t busy;
	uint8_t op;
	uint32_t seq, len;
	uint64_t expect_orig;         /* atomics */
	uint64_t buf;                 /* host address of its buffer */
};

struct rcx_qp {
	uint32_t qpn;
	uint32_t next_seq;            /* next own operation to post */
	uint32_t done_seq;            /* own operations completed */
	uint32_t peer_seq;            /* peer generator position (receives) */
	uint32_t recvs_expected, recvs_done;
	uint32_t sq_pi, rq_pi;
	uint32_t last_write_seq, last_write_len;
	int have_write;
	uint64_t atomic_value;        /* tracked value of our word at the peer */
	struct rcx_slot slot[RCX_DEPTH];
	uint64_t sq_ring, rq_ring, sq_db, rq_db;
	uint64_t recv_buf[RCX_RECVS];
	uint64_t area;                /* the area the peer writes and reads */
	uint64_t word;                /* the 8-byte word the peer's atomics hit */
};

struct rcx {
	struct fw_ctx *c;
	struct rocev2 *e;
	uint8_t peer_mac[6];
	uint32_t nqps, msgs, max_size, ops_mask;
	int fixed_size;               /* every payload is max_size bytes (benchmarks) */
	uint64_t seed;
	unsigned mtu;
	uint32_t pd, lkey, cq;
	uint64_t cq_ring, cq_db;
	uint32_t cq_ci;
	struct rcx_qp qp[RCX_MAX_QPS];
	uint64_t bytes_tx, bytes_rx, ops_done, recvs_done;
	uint64_t op_count[RCX_NUM_OPS];
	uint64_t start_ns, done_ns, last_rx_ns;
	int done, failed;
	uint32_t leaked;              /* objects still in the pools after teardown */
	struct timer tick, linger, timeout, hello;
	int heard_peer, started;      /* the start handshake */
	uint64_t hellos_tx, hellos_rx, hellos_bad;
	uint8_t buf[4096];
};

static struct rcx rcx;

/* ---- the generator --------------------------------------------------- */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t mac_u64(const uint8_t *m)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < 6; i++)
		v = v << 8 | m[i];
	return v;
}

/* Operation seq of the sender with MAC `from` on QP index q. */
static void gen(const struct rcx *x, uint64_t from, uint32_t q, uint32_t seq, uint8_t *op,
		uint32_t *len)
{
	uint64_t h = mix64(x->seed ^ mix64(from ^ ((uint64_t)q << 48) ^ seq));
	unsigned n = 0, pick, i;
	uint32_t bits;

	for (i = 0; i < RCX_NUM_OPS; i++)
		n += !!(x->ops_mask & (1u << i));
	pick = (unsigned)(h % n);
	for (i = 0; i < RCX_NUM_OPS; i++) {
		if (!(x->ops_mask & (1u << i)))
			continue;
		if (pick-- == 0)
			break;
	}
	*op = (uint8_t)i;
	if (!rcx_ops[i].has_payload) {
		*len = 8;
		return;
	}
	if (x->fixed_size) {
		*len = x->max_size;
		return;
	}
	/* Log-uniform sizes from 0 to max_size: mostly small, some huge. */
	h = mix64(h);
	bits = (uint32_t)(h % 64u);
	bits = bits * (32u - (uint32_t)__builtin_clz(x->max_size)) / 64u;
	*len = (uint32_t)((h >> 8) & ((1ull << bits) - 1u));
	if ((h >> 60) == 0)
		*len = x->max_size;   /* the maximum shows up too */
	if (*len > x->max_size)
		*len = x->max_size;
}

static uint8_t pattern_byte(uint64_t key, uint32_t i)
{
	return (uint8_t)(mix64(key + (i >> 3)) >> ((i & 7u) * 8u));
}

static uint64_t pattern_key(uint64_t from, uint32_t q, uint32_t seq)
{
	return mix64(from * 31u + ((uint64_t)q << 40) + seq);
}

/* ---- host memory helpers (the firmware is the host here) ------------- */
static int host_fill(struct rcx *x, uint64_t addr, uint64_t key, uint32_t len)
{
	uint32_t off = 0;

	while (off < len) {
		uint32_t n = len - off < sizeof(x->buf) ? len - off : (uint32_t)sizeof(x->buf), i;

		for (i = 0; i < n; i++)
			x->buf[i] = pattern_byte(key, off + i);
		if (hal_dma_write(x->c->host_dma, addr + off, x->buf, n))
			return -HAL_EFAULT;
		off += n;
	}
	return 0;
}

static int host_check(struct rcx *x, uint64_t addr, uint64_t key, uint32_t len)
{
	uint32_t off = 0;

	while (off < len) {
		uint32_t n = len - off < sizeof(x->buf) ? len - off : (uint32_t)sizeof(x->buf), i;

		if (hal_dma_read(x->c->host_dma, addr + off, x->buf, n))
			return -HAL_EFAULT;
		for (i = 0; i < n; i++) {
			if (x->buf[i] != pattern_byte(key, off + i)) {
				LOG_ERR("rcx: byte %u of %u differs (0x%02x, want 0x%02x)", (unsigned)(off + i),
					(unsigned)len,
					x->buf[i], pattern_byte(key, off + i));
				return -HAL_EIO;
			}
		}
		off += n;
	}
	return 0;
}

static int host_put32(struct rcx *x, uint64_t addr, uint32_t v)
{
	return hal_dma_write(x->c->host_dma, addr, &v, sizeof(v));
}

static void fail(struct rcx *x, const char *why)
{
	if (!x->failed)
		LOG_ERR("rcx: %s", why);
	x->failed = 1;
	fw_loop_exit(x->c->loop, FW_EXIT_FAIL);
}

/* ---- posting ------------------------------------------------------------ */
static void post_recv(struct rcx *x, struct rcx_qp *q, unsigned i)
{
	struct mnic_recv_wqe w;
	uint64_t at = q->rq_ring + (uint64_t)(q->rq_pi % RCX_RQ_SIZE) * MNIC_WQE_SIZE;

	memset(&w, 0, sizeof(w));
	w.wr_id = i;
	w.num_sge = 1;
	w.sge[0] = (struct mnic_sge){ q->recv_buf[i], x->max_size, x->lkey };
	hal_dma_write(x->c->host_dma, at, &w, sizeof(w));
	q->rq_pi++;
	/* The WQE is in host memory before the producer index says so. */
	hal_wmb();
	host_put32(x, q->rq_db, q->rq_pi);
	rocev2_rq_doorbell(x->e, q->qpn);
}

static int post_send(struct rcx *x, struct rcx_qp *q, uint32_t qi, unsigned si)
{
	struct rcx_slot *s = &q->slot[si];
	struct mnic_send_wqe w;
	uint64_t self = mac_u64(x->c->plat->eth[0]->mac);
	uint64_t at = q->sq_ring + (uint64_t)(q->sq_pi % RCX_SQ_SIZE) * MNIC_WQE_SIZE;
	uint8_t op;
	uint32_t len;

	gen(x, self, qi, q->next_seq, &op, &len);
	if (op == RCX_READ && !q->have_write)
		len = 0;   /* nothing written yet: read nothing */
	if (op == RCX_READ && q->have_write)
		len = q->last_write_len;
	memset(&w, 0, sizeof(w));
	w.wr_id = (uint64_t)qi << 32 | si;
	w.opcode = rcx_ops[op].wr_opcode;
	w.send_flags = MNIC_SEND_SIGNALED;
	w.imm_data = q->next_seq;
	w.num_sge = 1;
	w.sge[0] = (struct mnic_sge){ s->buf, len, x->lkey };
	w.remote_addr = q->area;      /* the peer's area has the same offset */
	w.rkey = x->lkey;             /* and, by construction, the same key */
	switch (op) {
	case RCX_SEND:
	case RCX_SEND_IMM:
	case RCX_WRITE:
	case RCX_WRITE_IMM:
		if (host_fill(x, s->buf, pattern_key(self, qi, q->next_seq), len))
			return -HAL_EFAULT;
		if (op == RCX_WRITE || op == RCX_WRITE_IMM) {
			/* IBA 10.8.3.3: a READ still outstanding may be re-executed
			 * by the responder if its response is lost; a WRITE to the
			 * same area must not overtake it, so fence it. */
			w.send_flags |= MNIC_SEND_FENCE;
			q->have_write = 1;
			q->last_write_seq = q->next_seq;
			q->last_write_len = len;
		}
		break;
	case RCX_READ:
		s->expect_orig = q->last_write_seq;
		break;
	case RCX_FADD:
		w.remote_addr = q->word;
		w.compare_add = q->next_seq | 1u;
		s->expect_orig = q->atomic_value;
		q->atomic_value += w.compare_add;
		break;
	case RCX_CSWAP:
		w.remote_addr = q->word;
		/* Every fourth compare is wrong on purpose: no swap may happen. */
		w.compare_add = q->atomic_value + ((q->next_seq & 3u) == 0);
		w.swap = mix64(q->next_seq);
		s->expect_orig = q->atomic_value;
		if (w.compare_add == q->atomic_value)
			q->atomic_value = w.swap;
		break;
	default:
		break;
	}
	s->busy = 1;
	s->op = op;
	s->seq = q->next_seq;
	s->len = len;
	hal_dma_write(x->c->host_dma, at, &w, sizeof(w));
	q->sq_pi++;
	q->next_seq++;
	x->op_count[op]++;
	hal_wmb();   /* WQE visible before the producer index moves */
	host_put32(x, q->sq_db, q->sq_pi);
	return rocev2_sq_doorbell(x->e, q->qpn);
}

static void fill_window(struct rcx *x)
{
	uint32_t i;
	unsigned s;

	for (i = 0; i < x->nqps; i++) {
		struct rcx_qp *q = &x->qp[i];

		for (s = 0; s < RCX_DEPTH && q->next_seq < x->msgs; s++)
			if (!q->slot[s].busy && post_send(x, q, i, s) != 0)
				fail(x, "posting a send WQE failed");
	}
}

/* ---- completions --------------------------------------------------------- */
static void on_send_cqe(struct rcx *x, const struct mnic_cqe *c)
{
	uint32_t qi = (uint32_t)(c->wr_id >> 32), si = (uint32_t)(c->wr_id & 0xffffffffu);
	struct rcx_qp *q;
	struct rcx_slot *s;
	uint64_t orig;

	if (qi >= x->nqps || si >= RCX_DEPTH || !x->qp[qi].slot[si].busy) {
		fail(x, "send completion for an unknown work request");
		return;
	}
	q = &x->qp[qi];
	s = &q->slot[si];
	if (s->seq != q->done_seq) {
		fail(x, "send completions out of order");
		return;
	}
	switch (s->op) {
	case RCX_READ:
		if (q->have_write && s->len &&
		    host_check(x, s->buf, pattern_key(mac_u64(x->c->plat->eth[0]->mac), qi,
						    (uint32_t)s->expect_orig), s->len)) {
			fail(x, "READ returned other bytes than the last WRITE put there");
			return;
		}
		x->bytes_rx += s->len;
		break;
	case RCX_FADD:
	case RCX_CSWAP:
		if (hal_dma_read(x->c->host_dma, s->buf, &orig, sizeof(orig)) || orig != s->expect_orig) {
			LOG_ERR("rcx: qp %u seq %u %s returned 0x%llx, want 0x%llx", (unsigned)qi,
				(unsigned)s->seq,
				rcx_ops[s->op].name, (unsigned long long)orig,
				(unsigned long long)s->expect_orig);
			fail(x, "atomic returned the wrong original value");
			return;
		}
		break;
	default:
		x->bytes_tx += s->len;
		break;
	}
	s->busy = 0;
	q->done_seq++;
	x->ops_done++;
}

static void on_recv_cqe(struct rcx *x, const struct mnic_cqe *c)
{
	uint64_t peer = mac_u64(x->peer_mac);
	uint32_t qi, i = (uint32_t)c->wr_id;
	struct rcx_qp *q = NULL;
	uint8_t op;
	uint32_t len;

	for (qi = 0; qi < x->nqps && !q; qi++)
		if (x->qp[qi].qpn == c->qp_num)
			q = &x->qp[qi];
	qi--;
	if (!q || i >= RCX_RECVS) {
		fail(x, "receive completion for an unknown QP or buffer");
		return;
	}
	/* The next receive-consuming operation in the peer's sequence. */
	do {
		gen(x, peer, qi, q->peer_seq++, &op, &len);
	} while (!rcx_ops[op].consumes_recv && q->peer_seq <= x->msgs);
	if (!rcx_ops[op].consumes_recv || c->byte_len != len ||
	    ((op == RCX_SEND_IMM || op == RCX_WRITE_IMM) &&
	     (!(c->flags & MNIC_CQE_WITH_IMM) || c->imm_data != q->peer_seq - 1))) {
		LOG_ERR("rcx: qp %u receive: opcode %u len %u imm %u; want %s len %u seq %u",
			(unsigned)qi, c->opcode, (unsigned)c->byte_len, (unsigned)c->imm_data,
			rcx_ops[op].name, (unsigned)len, (unsigned)(q->peer_seq - 1));
		fail(x, "receive completion does not match the peer's sequence");
		return;
	}
	if (op != RCX_WRITE_IMM &&
	    host_check(x, q->recv_buf[i], pattern_key(peer, qi, q->peer_seq - 1), len)) {
		fail(x, "received SEND payload differs");
		return;
	}
	x->bytes_rx += len;
	q->recvs_done++;
	x->recvs_done++;
	post_recv(x, q, i);
}

static void poll_cq(struct rcx *x)
{
	struct mnic_cqe c;
	unsigned n;

	for (n = 0; n < 64; n++) {
		uint64_t at = x->cq_ring + (uint64_t)(x->cq_ci % RCX_CQ_SIZE) * MNIC_CQE_SIZE;

		if (hal_dma_read(x->c->host_dma, at, &c, sizeof(c)))
			return;
		if (c.owner != MNIC_CQE_OWNER(x->cq_ci, RCX_CQ_SIZE))
			break;
		hal_rmb();   /* owner seen before the rest is trusted */
		hal_dma_read(x->c->host_dma, at, &c, sizeof(c));
		x->cq_ci++;
		if (c.status != MNIC_WC_SUCCESS) {
			LOG_ERR("rcx: completion error: qp 0x%x wr_id 0x%llx status %u opcode %u "
				"vendor_err 0x%x", (unsigned)c.qp_num, (unsigned long long)c.wr_id, c.status,
				c.opcode, (unsigned)c.vendor_err);
			fail(x, "error completion");
			return;
		}
		if (c.opcode >= MNIC_WC_RECV)
			on_recv_cqe(x, &c);
		else
			on_send_cqe(x, &c);
		if (x->failed)
			return;
	}
	if (n)
		host_put32(x, x->cq_db, x->cq_ci);
}

static int all_done(const struct rcx *x)
{
	uint32_t i;

	for (i = 0; i < x->nqps; i++)
		if (x->qp[i].done_seq < x->msgs || x->qp[i].recvs_done < x->qp[i].recvs_expected)
			return 0;
	return 1;
}

/* ---- the start handshake ----------------------------------------------------- */
static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void hello_send(struct rcx *x)
{
	struct hal_eth *eth = x->c->plat->eth[0];
	uint8_t f[RCX_HELLO_LEN] = { 0 };

	memcpy(f, x->peer_mac, 6);
	memcpy(f + 6, eth->mac, 6);
	f[12] = (uint8_t)(RCX_ETHERTYPE >> 8);
	f[13] = (uint8_t)RCX_ETHERTYPE;
	f[14] = RCX_HELLO;
	f[15] = RCX_HELLO_VER;
	f[16] = (uint8_t)((x->heard_peer ? RCX_HELLO_HEARD : 0u) |
			  (x->started ? RCX_HELLO_STARTED : 0u));
	f[18] = (uint8_t)(RCX_HELLO_MAGIC >> 24);
	f[19] = (uint8_t)(RCX_HELLO_MAGIC >> 16);
	f[20] = (uint8_t)(RCX_HELLO_MAGIC >> 8);
	f[21] = (uint8_t)RCX_HELLO_MAGIC;
	/* a full TX ring loses this one: the next tick or answer sends again */
	if (hal_eth_tx(eth, f, sizeof(f)) == 0)
		x->hellos_tx++;
}

static void start(struct rcx *x)
{
	x->started = 1;
	x->start_ns = x->last_rx_ns = fw_loop_now(x->c->loop);
	fw_loop_timer_cancel(x->c->loop, &x->hello);
	LOG_INFO("rcx: the peer answered: starting");
}

/* 1: f was a hello (taken), 0: not one (the engine's). */
static int hello_rx(struct rcx *x, const uint8_t *f, size_t len)
{
	if (len < 22u || (((unsigned)f[12] << 8) | f[13]) != RCX_ETHERTYPE || f[14] != RCX_HELLO)
		return 0;
	if (len < RCX_HELLO_LEN || f[15] != RCX_HELLO_VER || be32_at(f + 18) != RCX_HELLO_MAGIC ||
	    memcmp(f + 6, x->peer_mac, 6) != 0) {
		x->hellos_bad++;
		return 1;
	}
	x->hellos_rx++;
	x->heard_peer = 1;
	if (!x->started && (f[16] & RCX_HELLO_HEARD))
		start(x);
	/* a peer still waiting: our answer says we heard it (and started) */
	if (!(f[16] & RCX_HELLO_STARTED))
		hello_send(x);
	return 1;
}

static void on_hello(struct timer *t, void *arg)
{
	struct rcx *x = arg;

	hello_send(x);
	fw_loop_timer_arm(x->c->loop, t, fw_loop_now(x->c->loop) + RCX_HELLO_NS);
}

/* ---- the loop's hooks ------------------------------------------------------ */
static void on_frame(void *arg, unsigned port, const uint8_t *f, size_t len)
{
	struct rcx *x = arg;

	(void)port;
	if (hello_rx(x, f, len))
		return;
	rocev2_rx(x->e, f, len);
	x->last_rx_ns = fw_loop_now(x->c->loop);
}

static int on_work(void *arg)
{
	struct rcx *x = arg;
	int more = rocev2_poll(x->e, 64);

	poll_cq(x);
	if (x->started && !x->failed && !x->done) {
		fill_window(x);
		if (all_done(x)) {
			x->done = 1;
			x->done_ns = fw_loop_now(x->c->loop);
			fw_loop_timer_arm(x->c->loop, &x->linger, x->done_ns + 1500000000u);
		}
	}
	return more || rocev2_has_work(x->e);
}

static void on_tick(struct timer *t, void *arg)
{
	struct rcx *x = arg;
	const struct rocev2_counters *k = rocev2_counters(x->e);
	uint64_t now = fw_loop_now(x->c->loop);

	LOG_INFO("rcx: %llu ops done, %llu receives, %llu tx packets, %llu retransmits",
		 (unsigned long long)x->ops_done, (unsigned long long)x->recvs_done,
		 (unsigned long long)k->tx_packets, (unsigned long long)k->req_retransmits);
	for (uint32_t i = 0; i < x->nqps; i++) {
		struct rocev2_qp_attr a;

		if (rocev2_query_qp(x->e, x->qp[i].qpn, &a) == 0)
			LOG_DEBUG("rcx: qp %u state %u sq_psn %u rq_psn %u | engine next timer %lld ms",
				  (unsigned)i, (unsigned)a.qp_state, (unsigned)a.sq_psn,
				  (unsigned)a.rq_psn,
				  (long long)(rocev2_next_deadline(x->e) - now) / 1000000);
	}
	fw_loop_timer_arm(x->c->loop, t, fw_loop_now(x->c->loop) + 1000000000u);
}

static void on_linger(struct timer *t, void *arg)
{
	struct rcx *x = arg;
	uint64_t quiet = fw_loop_now(x->c->loop) - x->last_rx_ns;

	/* Keep answering the peer until it has been quiet for a while: it may
	 * still need our ACKs and read responses. */
	if (quiet < 1000000000u) {
		fw_loop_timer_arm(x->c->loop, t, x->last_rx_ns + 1000000000u);
		return;
	}
	fw_loop_exit(x->c->loop, FW_EXIT_OK);
}

static void on_timeout(struct timer *t, void *arg)
{
	(void)t;
	fail(arg, "timeout");
}

/* ---- setup ------------------------------------------------------------------ */
static uint32_t start_psn(const uint8_t *mac, uint32_t q)
{
	return (uint32_t)mix64(mac_u64(mac) + q) & ROCEV2_PSN_MASK;
}

static int setup(struct rcx *x)
{
	uint64_t next = 0, win = x->c->host_dma->window_size, need;
	struct rocev2_queue_attr cq = { .ring_addr = 0, .dbrec_addr = 0, .size = RCX_CQ_SIZE };
	uint32_t i;
	unsigned k;
	int rc;

#define ALLOC(sz) (next = (next + 63u) & ~63ull, next += (sz), next - (sz))
	cq.ring_addr = ALLOC(RCX_CQ_SIZE * MNIC_CQE_SIZE);
	cq.dbrec_addr = ALLOC(8);
	x->cq_ring = cq.ring_addr;
	x->cq_db = cq.dbrec_addr;
	for (i = 0; i < x->nqps; i++) {
		struct rcx_qp *q = &x->qp[i];

		q->sq_ring = ALLOC(RCX_SQ_SIZE * MNIC_WQE_SIZE);
		q->rq_ring = ALLOC(RCX_RQ_SIZE * MNIC_WQE_SIZE);
		q->sq_db = ALLOC(8);
		q->rq_db = ALLOC(8);
	}
	/* Buffers: same offsets on both NICs, so a remote address is simply
	 * the local offset of the same QP's area. */
	for (i = 0; i < x->nqps; i++) {
		struct rcx_qp *q = &x->qp[i];

		q->area = ALLOC(x->max_size);
		q->word = ALLOC(8);   /* 64-byte aligned, as atomics need 8 */
		for (k = 0; k < RCX_DEPTH; k++)
			q->slot[k].buf = ALLOC(x->max_size < 8u ? 8u : x->max_size);
		for (k = 0; k < RCX_RECVS; k++)
			q->recv_buf[k] = ALLOC(x->max_size);
	}
#undef ALLOC
	need = next;
	if (need > win) {
		LOG_ERR("rcx: %u QPs x %u bytes need %llu bytes of host memory, the window has %llu;"
			" lower qps= or max_size=", (unsigned)x->nqps, (unsigned)x->max_size, (unsigned long long)need,
			(unsigned long long)win);
		return FW_EXIT_USAGE;
	}
	/* Zero everything we use: rings, doorbell records, areas. */
	memset(x->buf, 0, sizeof(x->buf));
	for (next = 0; next < need; next += sizeof(x->buf))
		hal_dma_write(x->c->host_dma, next, x->buf,
			      need - next < sizeof(x->buf) ? (size_t)(need - next) : sizeof(x->buf));

	if ((rc = rocev2_alloc_pd(x->e, &x->pd)) ||
	    (rc = rocev2_reg_mr(x->e, x->pd, 0, need,
				ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_WRITE |
					ROCEV2_ACCESS_REMOTE_READ | ROCEV2_ACCESS_REMOTE_ATOMIC,
				&x->lkey, &i)) ||
	    (rc = rocev2_create_cq(x->e, &cq, &x->cq))) {
		LOG_ERR("rcx: object setup failed: %d", rc);
		return FW_EXIT_FAIL;
	}
	for (i = 0; i < x->nqps; i++) {
		struct rcx_qp *q = &x->qp[i];
		const uint8_t *self = x->c->plat->eth[0]->mac;
		struct rocev2_qp_init_attr ia = {
			.pd = x->pd, .send_cq = x->cq, .recv_cq = x->cq, .srq = ROCEV2_NO_SRQ,
			.sq = { q->sq_ring, q->sq_db, RCX_SQ_SIZE },
			.rq = { q->rq_ring, q->rq_db, RCX_RQ_SIZE },
			.max_send_sge = 1, .max_recv_sge = 1, .sq_sig_all = 0,
		};
		struct rocev2_qp_attr a;

		if ((rc = rocev2_create_qp(x->e, &ia, &q->qpn)) != 0) {
			LOG_ERR("rcx: create QP %u failed: %d", (unsigned)i, rc);
			return FW_EXIT_FAIL;
		}
		memset(&a, 0, sizeof(a));
		a.qp_state = ROCEV2_QPS_INIT;
		a.qp_access_flags = ROCEV2_ACCESS_REMOTE_WRITE | ROCEV2_ACCESS_REMOTE_READ |
				    ROCEV2_ACCESS_REMOTE_ATOMIC;
		rc = rocev2_modify_qp(x->e, q->qpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_PKEY_INDEX |
						       ROCEV2_QP_PORT | ROCEV2_QP_ACCESS_FLAGS);
		/* Both NICs allocate the same QPNs in the same order, so QP i
		 * talks to the peer's QP with our own number. */
		a.qp_state = ROCEV2_QPS_RTR;
		a.path_mtu = x->mtu;
		a.dest_qp_num = q->qpn;
		a.rq_psn = start_psn(x->peer_mac, i);
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;   /* 10 us */
		memcpy(a.av.dmac, x->peer_mac, 6);
		rocev2_av_set_ipv4(&a.av, fw_port_ipv4(x->peer_mac));
		a.av.ttl = 64;
		if (!rc)
			rc = rocev2_modify_qp(x->e, q->qpn, &a,
					      ROCEV2_QP_STATE | ROCEV2_QP_AV | ROCEV2_QP_PATH_MTU |
						      ROCEV2_QP_DEST_QPN | ROCEV2_QP_RQ_PSN |
						      ROCEV2_QP_MAX_DEST_RD_ATOMIC |
						      ROCEV2_QP_MIN_RNR_TIMER);
		a.qp_state = ROCEV2_QPS_RTS;
		a.sq_psn = start_psn(self, i);
		a.timeout = 14;        /* 4.096 us * 2^14 = 67 ms */
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		if (!rc)
			rc = rocev2_modify_qp(x->e, q->qpn, &a,
					      ROCEV2_QP_STATE | ROCEV2_QP_SQ_PSN | ROCEV2_QP_TIMEOUT |
						      ROCEV2_QP_RETRY_CNT | ROCEV2_QP_RNR_RETRY |
						      ROCEV2_QP_MAX_QP_RD_ATOMIC);
		if (rc) {
			LOG_ERR("rcx: connecting QP %u failed: %d", (unsigned)i, rc);
			return FW_EXIT_FAIL;
		}
		/* How many receive completions the peer's sequence will make. */
		for (k = 0; k < x->msgs; k++) {
			uint8_t op;
			uint32_t len;

			gen(x, mac_u64(x->peer_mac), i, k, &op, &len);
			q->recvs_expected += rcx_ops[op].consumes_recv;
		}
		for (k = 0; k < RCX_RECVS; k++)
			post_recv(x, q, k);
	}
	return FW_EXIT_OK;
}

/* Destroy everything setup() made, in reverse order, and check the pools
 * are back where they started (a leak shows as a count). */
static int teardown(struct rcx *x)
{
	struct rocev2_device_info info;
	uint32_t i;
	int rc = 0;

	for (i = 0; i < x->nqps; i++)
		if (x->qp[i].qpn && rocev2_destroy_qp(x->e, x->qp[i].qpn) != 0)
			rc = -HAL_EBUSY;
	if ((x->cq && rocev2_destroy_cq(x->e, x->cq) != 0) ||
	    (x->lkey && rocev2_dereg_mr(x->e, x->lkey) != 0) ||
	    (x->pd && rocev2_dealloc_pd(x->e, x->pd) != 0))
		rc = -HAL_EBUSY;
	rocev2_query_device(x->e, &info);
	x->leaked = 0;
	for (i = 0; i < ROCEV2_OBJ_LIVE_NUM; i++)
		x->leaked += info.objects[i];
	return rc ? rc : (x->leaked ? -HAL_EBUSY : 0);
}

static int parse_ops(const char *s, uint32_t *mask)
{
	*mask = 0;
	while (*s) {
		unsigned i;
		size_t n = 0;

		while (s[n] && s[n] != ',')
			n++;
		for (i = 0; i < RCX_NUM_OPS; i++)
			if (strlen(rcx_ops[i].name) == n && strncmp(rcx_ops[i].name, s, n) == 0)
				break;
		if (i == RCX_NUM_OPS && n == 3 && strncmp(s, "all", 3) == 0)
			*mask = (1u << RCX_NUM_OPS) - 1u;
		else if (i == RCX_NUM_OPS)
			return -HAL_EINVAL;
		else
			*mask |= 1u << i;
		s += n + (s[n] == ',');
	}
	return *mask ? 0 : -HAL_EINVAL;
}

static void report(struct rcx *x, int ok)
{
	uint64_t el = (x->done ? x->done_ns : fw_loop_now(x->c->loop)) - x->start_ns;
	const struct rocev2_counters *k = rocev2_counters(x->e);
	uint64_t bytes = x->bytes_tx + x->bytes_rx;

	fw_print("RCX %s qps=%u msgs=%u ops=%llu recvs=%llu bytes=%llu elapsed_us=%llu "
		 "msg_rate=%llu goodput_mbps=%llu tx_packets=%llu retransmits=%llu seq_naks=%llu "
		 "rnr_naks=%llu dup_requests=%llu bad_icrc=%llu rx_frames=%llu pools_leaked=%u "
		 "timeouts=%llu hellos=%llu/%llu/%llu",
		 ok ? "PASS" : "FAIL", (unsigned)x->nqps, (unsigned)x->msgs,
		 (unsigned long long)x->ops_done,
		 (unsigned long long)x->recvs_done, (unsigned long long)bytes,
		 (unsigned long long)(el / 1000u),
		 (unsigned long long)(el ? (x->ops_done * 1000000000ull) / el : 0),
		 (unsigned long long)(el ? (bytes * 8000ull) / el : 0),
		 (unsigned long long)k->tx_packets, (unsigned long long)k->req_retransmits,
		 (unsigned long long)k->comp_naks_seq, (unsigned long long)k->comp_naks_rnr,
		 (unsigned long long)k->resp_dup_requests, (unsigned long long)k->rx_bad_icrc,
		 (unsigned long long)k->rx_frames, (unsigned)x->leaked,
		 (unsigned long long)k->comp_retry_timeouts, (unsigned long long)x->hellos_tx,
		 (unsigned long long)x->hellos_rx, (unsigned long long)x->hellos_bad);
	/* Every engine counter that moved, one per line: how the run
	 * recovered (bench/impaired.sh reads them). */
	for (size_t i = 0; i < ROCEV2_NUM_COUNTERS; i++) {
		uint64_t v = ((const uint64_t *)(const void *)k)[i];

		if (v)
			fw_print("RCX COUNTER %s %llu", rocev2_counter_names[i], (unsigned long long)v);
	}
}

int fw_mode_rcx(struct fw_ctx *c, const struct fw_args *a)
{
	static const char *const keys[] = { "log", "peer", "qps", "msgs", "max_size", "size", "seed",
					    "mtu", "ops", "timeout_ms", "dcqcn", "line_mbps", "ack_coalesce",
					    NULL };
	struct rcx *x = &rcx;
	uint64_t qps, msgs, max_size, size, seed, mtu, timeout_ms, dcqcn, line_mbps, ack_coalesce;
	const char *peer = fw_args_get(a, "peer"), *ops = fw_args_get(a, "ops");
	int rc;

	memset(x, 0, sizeof(*x));
	if (fw_args_check(a, keys) != 0 || fw_args_u64(a, "qps", 1, RCX_MAX_QPS, &qps) != 0 ||
	    fw_args_u64(a, "msgs", 1000, 100000000u, &msgs) != 0 ||
	    fw_args_u64(a, "max_size", 65536, ROCEV2_MAX_MSG, &max_size) != 0 ||
	    fw_args_u64(a, "size", 0, ROCEV2_MAX_MSG, &size) != 0 ||
	    fw_args_u64(a, "seed", 1, UINT64_MAX, &seed) != 0 ||
	    fw_args_u64(a, "mtu", ROCEV2_MTU_1024, ROCEV2_MTU_4096, &mtu) != 0 ||
	    fw_args_u64(a, "timeout_ms", 300000, 86400000u, &timeout_ms) != 0 ||
	    fw_args_u64(a, "dcqcn", 1, 1, &dcqcn) != 0 ||
	    fw_args_u64(a, "line_mbps", 10000, 400000, &line_mbps) != 0 ||
	    fw_args_u64(a, "ack_coalesce", 1, 1, &ack_coalesce) != 0)
		return FW_EXIT_USAGE;
	if (!peer || fw_parse_mac(peer, x->peer_mac) != 0) {
		LOG_ERR("rcx needs peer=MAC (xx:xx:xx:xx:xx:xx)");
		return FW_EXIT_USAGE;
	}
	if (size) {
		/* size=N: every SEND/WRITE/READ carries exactly N bytes. */
		max_size = size < 8 ? 8 : size;
		x->fixed_size = 1;
	}
	if (qps == 0 || mtu < ROCEV2_MTU_256 || max_size < 8) {
		LOG_ERR("rcx: qps >= 1, mtu 1..5 (256..4096 bytes) and max_size >= 8");
		return FW_EXIT_USAGE;
	}
	if (parse_ops(ops ? ops : "all", &x->ops_mask) != 0) {
		LOG_ERR("rcx: ops= is a comma list of send, send_imm, write, write_imm, read, "
			"fetch_add, cmp_swap, all");
		return FW_EXIT_USAGE;
	}
	if (c->plat->n_eth < 1 || !c->plat->hostif.bar) {
		LOG_ERR("rcx needs an Ethernet port and a host BAR");
		return FW_EXIT_PLATFORM;
	}
	x->c = c;
	x->nqps = (uint32_t)qps;
	x->msgs = (uint32_t)msgs;
	x->max_size = (uint32_t)max_size;
	x->seed = seed;
	x->mtu = (unsigned)mtu;
	if (fw_engine_start(c, &x->e) != 0)
		return FW_EXIT_FAIL;
	/* ack_coalesce=0: one ACK per request (the engine's coalescing is on
	 * in the firmware; bench/fabric.sh compares both). */
	rocev2_set_ack_coalesce(x->e, ack_coalesce != 0);
	{
		/* dcqcn=0|1 (DCQCN and ECT), line_mbps=N: the rest at defaults. */
		struct rocev2_dcqcn_params p;

		rocev2_get_dcqcn(x->e, &p);
		p.flags = dcqcn ? ROCEV2_DCQCN_F_ENABLE | ROCEV2_DCQCN_F_ECT : 0u;
		p.line_rate_mbps = (uint32_t)line_mbps;
		if (p.rai_mbps > p.line_rate_mbps)
			p.rai_mbps = p.line_rate_mbps;
		if (p.rhai_mbps > p.line_rate_mbps)
			p.rhai_mbps = p.line_rate_mbps;
		if (p.min_rate_mbps > p.line_rate_mbps)
			p.min_rate_mbps = p.line_rate_mbps;
		if (rocev2_set_dcqcn(x->e, &p, NULL) != 0) {
			LOG_ERR("rcx: line_mbps=%u refused", (unsigned)line_mbps);
			return FW_EXIT_USAGE;
		}
	}
	rc = setup(x);
	if (rc != FW_EXIT_OK)
		return rc;
	timer_setup(&x->tick, on_tick, x);
	timer_setup(&x->linger, on_linger, x);
	timer_setup(&x->timeout, on_timeout, x);
	timer_setup(&x->hello, on_hello, x);
	fw_loop_set_frame_handler(c->loop, on_frame, x);
	fw_loop_set_work_handler(c->loop, on_work, x);
	x->start_ns = x->last_rx_ns = fw_loop_now(c->loop);
	fw_loop_timer_arm(c->loop, &x->tick, x->start_ns + 1000000000u);
	fw_loop_timer_arm(c->loop, &x->timeout, x->start_ns + timeout_ms * 1000000u);
	fw_loop_timer_arm(c->loop, &x->hello, x->start_ns);   /* the first hello now */
	fw_print("MNIC READY board=%s rcx qps=%u msgs=%u max_size=%u", c->plat->board,
		 (unsigned)x->nqps, (unsigned)x->msgs, (unsigned)x->max_size);
	rc = fw_loop_run(c->loop);
	if (teardown(x) != 0 && rc == FW_EXIT_OK)
		fail(x, "objects left in the pools after teardown");
	report(x, rc == FW_EXIT_OK && !x->failed);
	return x->failed ? FW_EXIT_FAIL : rc;
}
