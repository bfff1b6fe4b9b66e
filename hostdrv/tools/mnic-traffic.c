/* mnic-traffic: verified RC traffic on libmnic between two hosts/NICs,
 * built to survive (and to judge) a live migration of either end.
 *
 *   server:  mnic-traffic -d A.bar -p PORT [options]
 *   client:  mnic-traffic -d B.bar -p PORT [options] 127.0.0.1
 *
 * Both sides run the same mix on every QP, in both directions:
 *   SEND            message in the peer's receive buffer
 *   WRITE_WITH_IMM  message in the peer's write area (slot = seq % WSLOTS),
 *                   the immediate carries seq (IBA 9.4.3: consumes a RECV)
 *   RDMA READ       a random range of the peer's read area, whose content is
 *                   a known pattern: every byte checked
 *   FETCH_ADD       on the peer's word 0 of this QP: the value returned must
 *                   be the sum of every earlier add (IBA 9.4.5: executed
 *                   exactly once, duplicates answered from the responder's
 *                   resources), the final word equals the sum of all adds
 *   CMP_SWAP        on word 1: compare = the value we expect, swap = +1;
 *                   the value returned must equal the compare value
 * Every SEND / WRITE_WITH_IMM message carries a 32-byte header (magic, QP,
 * direction, kind, seq, length, CRC32C of the whole message) and a payload
 * regenerated from (direction, QP, seq) by the receiver: per QP the
 * receiver wants seq 0, 1, 2, ... with no gap, no duplicate, no reorder.
 * At the end the sides exchange over TCP what they sent and the final
 * atomic words, and each judges the other's.
 *
 * Live migration (docs/migration-howto.md): `mnicctl migrate --pid` freezes
 * this process (SIGSTOP), moves its NIC context and user area to another
 * NIC, writes that NIC's BAR path to the --notify file and sends SIGUSR1
 * before SIGCONT.  The handler maps the new BAR over the old one in place
 * (mnic_reopen_inplace, async-signal-safe) before the interrupted code runs
 * again, so every pointer into the user area stays valid, and the process
 * carries on with all its state, as after a CRIU restore.
 *
 * Out-of-band setup and the final exchange: TCP on 127.0.0.1 only.
 * Exit: 0 all verified; 1 a verification failed (loss, duplicate, reorder,
 * corrupt data, wrong atomic, error completion, stuck); 2 usage; 3 device. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/crc32.h"
#include "mnic/libmnic.h"

#define SQ_DEPTH 32u            /* send WQEs per QP (all signaled) */
#define RQ_DEPTH 32u            /* receive WQEs per QP */
#define WSLOTS (2u * RQ_DEPTH)  /* write-area slots: > RQ_DEPTH unverified + 1 */
#define RD_LEN 16384u           /* read area per QP */
#define HDR_LEN 32u
#define MAX_QPS 64u
#define MSG_MAGIC 0x4652544du   /* "MTRF" */
#define OOB_MAGIC 0x42424f4du   /* "MOBB" */

enum { EXIT_VERIFY = 1, EXIT_USAGE = 2, EXIT_DEVICE = 3 };
enum op { OP_SEND, OP_WIMM, OP_READ, OP_FADD, OP_CSWAP, OP_NUM };
static const char *const op_name[OP_NUM] = {"SEND", "WRITE_IMM", "READ", "FETCH_ADD", "CMP_SWAP"};
/* The mix, in percent (table over branches). */
static const unsigned op_weight[OP_NUM] = {35, 35, 14, 8, 8};

struct cfg {
	const char *dev, *server, *timeline, *notify, *gaps;
	int port, qps, mtu, expect_flush, has_key, verbose;   /* has_key: enum key_mode */
	int idle_qps;              /* --idle-qps: QPs of our context that carry nothing */
	int ack_timeout;           /* --ack-timeout: local ACK timeout exponent */
	uint32_t max_size, pause_timeout_ms, interval_ms;
	uint64_t msgs;
	double duration, timeout;
	uint8_t key[16];
	uint64_t seed;
};
/* ACK timeout 16 (268 ms per try, ~2.1 s of silence with retry_cnt 7): the
 * emulated NICs of the tests and the demo share a loaded 2-core machine,
 * where libmnic's 14 (67 ms, ~0.5 s) ends connections on scheduling
 * stalls alone. */
static struct cfg cfg = {.ack_timeout = 16, .port = 18600, .qps = 8, .mtu = 3, .max_size = 2048, .interval_ms = 100,
			 .timeout = 120, .seed = 1};

/* Per-QP bookkeeping (process memory: it moves with the process). */
struct slot {                  /* one posted send WQE */
	uint8_t op;
	uint32_t len;
	uint32_t roff;             /* READ: offset in the peer's read area */
	uint64_t expect;           /* atomics: the value the responder must return */
	uint64_t seq;              /* SEND / WRITE_IMM */
};

struct qpst {
	struct mnic_qp *qp;
	uint64_t sbuf, rbuf, warea, rarea, atom;      /* window addresses */
	/* peer's */
	uint32_t peer_qpn, peer_psn;
	uint64_t peer_warea, peer_rarea, peer_atom;
	/* send side */
	struct slot sl[SQ_DEPTH];
	uint32_t posted, completed;                    /* WQEs (slot = index % SQ_DEPTH) */
	uint64_t tx_seq, tx_done;                      /* messages posted / completed */
	uint64_t fa_sum, cas_cur, n_ops[OP_NUM];
	/* receive side */
	uint32_t rq_posted, rq_done;
	uint64_t rx_expect;
	int errored;                                   /* saw an error completion */
	int ok_after_err;
};

static struct {
	struct mnic_dev *dev;
	struct mnic_pd *pd;
	struct mnic_mr *mr;
	uint32_t peer_rkey;        /* the peer's MR (kept across a migration: same key) */
	struct mnic_cq *scq, *rcq;
	struct qpst q[MAX_QPS];
	int role;                  /* 0 server, 1 client: the direction a message belongs to */
	uint64_t rng;
	/* totals */
	uint64_t sent, sent_bytes, received, rx_bytes, lost, dup, ooo, bad, errors, flushed;
	uint64_t reads, read_bad, atomics, atomic_bad, rnr_full;
	/* time */
	double t_start, last_comp, max_gap, max_gap_at;
	/* timeline */
	FILE *tl;
	FILE *gaps;                /* --gaps: every completion gap >= GAP_MIN_S */
	double next_sample;
	uint64_t s_tx, s_txb, s_rx, s_rxb, s_ops;
} g;

/* ---- migration: the SIGUSR1 handler ------------------------------------ */

static volatile sig_atomic_t mig_count, mig_err;
static char mig_path[256];

static void on_migrate(int sig)
{
	int saved = errno, fd, err;
	ssize_t n = 0;

	(void)sig;
	fd = open(cfg.notify, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, mig_path, sizeof(mig_path) - 1);
		close(fd);
	}
	if (n <= 0) {
		mig_err = ENOENT;
		errno = saved;
		return;
	}
	while (n > 0 && (mig_path[n - 1] == '\n' || mig_path[n - 1] == '\r'))
		n--;
	mig_path[n] = '\0';
	err = mnic_reopen_inplace(g.dev, mig_path);
	if (err < 0)
		mig_err = -err;
	else
		mig_count++;
	errno = saved;
}

/* ---- small helpers -------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64* (Vigna 2016) */
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t s = (a * 0x9e3779b97f4a7c15ull) ^ (b + 0x632be59bd9b4e019ull) ^ (c << 17) ^ 1;

	for (int i = 0; i < 3; i++)
		rnd(&s);
	return s ? s : 1;
}

__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mnic-traffic[%s]: ", g.role ? "client" : "server");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *wptr(uint64_t addr, uint64_t len)
{
	return mnic_window_ptr(g.dev, addr, len);
}

/* Byte `pos` of the read area of QP q of side `role` (both sides compute it). */
static uint8_t rd_pattern(int role, uint32_t q, uint32_t pos)
{
	return (uint8_t)((pos * 131u + q * 7u + (uint32_t)role * 13u) ^ (pos >> 8));
}

/* Message bytes after the header, regenerated from (direction, QP, seq). */
static void fill_payload(uint8_t *p, uint32_t n, int dir, uint32_t q, uint64_t seq)
{
	uint64_t s = mix((uint64_t)dir, q, seq);

	for (uint32_t i = 0; i < n; i += 8) {
		uint64_t v = rnd(&s);
		uint32_t k = n - i < 8 ? n - i : 8;

		memcpy(p + i, &v, k);
	}
}

struct msg_hdr {
	uint32_t magic;
	uint16_t qp;
	uint8_t dir;
	uint8_t kind;
	uint64_t seq;
	uint32_t len;
	uint32_t crc;             /* CRC32C of the message with this field 0 */
	uint32_t wslot;
	uint32_t reserved;
};
_Static_assert(sizeof(struct msg_hdr) == HDR_LEN, "message header");

static uint32_t msg_crc(const uint8_t *m, uint32_t len)
{
	uint8_t h[HDR_LEN];

	memcpy(h, m, HDR_LEN);
	memset(h + offsetof(struct msg_hdr, crc), 0, 4);
	return crc32c(crc32c(0, h, HDR_LEN), m + HDR_LEN, len - HDR_LEN);
}

static uint32_t msg_len(uint32_t q, uint64_t seq, int dir)
{
	uint64_t s = mix((uint64_t)dir + 7, q, seq);

	return HDR_LEN + (uint32_t)(rnd(&s) % (cfg.max_size - HDR_LEN + 1));
}

static void build_msg(uint8_t *m, uint32_t q, uint64_t seq, uint8_t kind)
{
	struct msg_hdr h;
	uint32_t len = msg_len(q, seq, g.role);

	memset(&h, 0, sizeof(h));
	h.magic = MSG_MAGIC;
	h.qp = (uint16_t)q;
	h.dir = (uint8_t)g.role;
	h.kind = kind;
	h.seq = seq;
	h.len = len;
	h.wslot = (uint32_t)(seq % WSLOTS);
	memcpy(m, &h, sizeof(h));
	fill_payload(m + HDR_LEN, len - HDR_LEN, g.role, q, seq);
	h.crc = msg_crc(m, len);
	memcpy(m, &h, sizeof(h));
}

/* A message from the peer: check it whole, then its place in the sequence. */
static void check_msg(uint32_t q, const uint8_t *m, uint32_t avail, uint8_t kind, uint64_t imm_seq,
		      int have_imm)
{
	struct qpst *s = &g.q[q];
	struct msg_hdr h;
	uint8_t *want;
	int peer = !g.role;

	memcpy(&h, m, sizeof(h));
	if (h.magic != MSG_MAGIC || h.qp != q || h.dir != peer || h.kind != kind ||
	    h.len < HDR_LEN || h.len > avail || (have_imm && (h.seq & 0xffffffffu) != imm_seq) ||
	    msg_crc(m, h.len) != h.crc || h.len != msg_len(q, h.seq, peer)) {
		if (g.bad++ < 10)
			fail("qp %u: corrupt %s message (magic 0x%08x qp %u dir %u kind %u seq %llu len "
			     "%u of %u, crc 0x%08x)", q, op_name[kind], h.magic, h.qp, h.dir, h.kind,
			     (unsigned long long)h.seq, h.len, avail, h.crc);
		s->rx_expect++;   /* count it as the next one: loss is judged at the end */
		return;
	}
	want = malloc(h.len - HDR_LEN + 8);
	if (want) {
		fill_payload(want, h.len - HDR_LEN, peer, q, h.seq);
		if (memcmp(want, m + HDR_LEN, h.len - HDR_LEN)) {
			if (g.bad++ < 10)
				fail("qp %u seq %llu: payload differs from the regenerated one", q,
				     (unsigned long long)h.seq);
		}
		free(want);
	}
	if (h.seq == s->rx_expect) {
		s->rx_expect++;
	} else if (h.seq < s->rx_expect) {
		if (g.dup++ < 10)
			fail("qp %u: duplicate seq %llu (want %llu)", q, (unsigned long long)h.seq,
			     (unsigned long long)s->rx_expect);
		return;
	} else {
		if (g.ooo++ < 10)
			fail("qp %u: seq %llu out of order (want %llu)", q,
			     (unsigned long long)h.seq, (unsigned long long)s->rx_expect);
		s->rx_expect = h.seq + 1;
	}
	g.received++;
	g.rx_bytes += h.len;
	g.s_rx++;
	g.s_rxb += h.len;
}

/* ---- posting ---------------------------------------------------------------- */

static int post_recv(uint32_t q)
{
	struct qpst *s = &g.q[q];
	uint32_t slot = s->rq_posted % RQ_DEPTH;
	struct mnic_sge sge = {.addr = s->rbuf + (uint64_t)slot * cfg.max_size,
			       .length = cfg.max_size, .lkey = g.mr->lkey};
	struct mnic_recv_wr wr = {.wr_id = ((uint64_t)q << 32) | slot, .sg_list = &sge,
				  .num_sge = 1};
	int err = mnic_post_recv(s->qp, &wr, NULL);

	if (err < 0) {
		fail("qp %u: post_recv: %s", q, strerror(-err));
		return err;
	}
	s->rq_posted++;
	return 0;
}

static enum op pick_op(void)
{
	unsigned r = (unsigned)(rnd(&g.rng) % 100), acc = 0;

	for (int i = 0; i < OP_NUM; i++) {
		acc += op_weight[i];
		if (r < acc)
			return (enum op)i;
	}
	return OP_SEND;
}

static int post_one(uint32_t q)
{
	struct qpst *s = &g.q[q];
	uint32_t idx = s->posted % SQ_DEPTH;
	struct slot *sl = &s->sl[idx];
	uint64_t lbuf = s->sbuf + (uint64_t)idx * cfg.max_size;
	uint8_t *lp = wptr(lbuf, cfg.max_size);
	struct mnic_sge sge = {.addr = lbuf, .lkey = g.mr->lkey};
	struct mnic_send_wr wr;
	enum op op = pick_op();
	int err;

	if (!lp)
		return -EFAULT;
	memset(&wr, 0, sizeof(wr));
	memset(sl, 0, sizeof(*sl));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = MNIC_SEND_SIGNALED;
	switch (op) {
	case OP_SEND:
	case OP_WIMM:
		sl->seq = s->tx_seq;
		build_msg(lp, q, sl->seq, (uint8_t)op);
		sge.length = msg_len(q, sl->seq, g.role);
		if (op == OP_SEND) {
			wr.opcode = MNIC_WR_SEND;
		} else {
			wr.opcode = MNIC_WR_RDMA_WRITE_WITH_IMM;
			wr.imm_data = (uint32_t)sl->seq;
			wr.remote_addr = s->peer_warea + (sl->seq % WSLOTS) * cfg.max_size;
			wr.rkey = g.peer_rkey;
		}
		break;
	case OP_READ: {
		uint32_t len = 1 + (uint32_t)(rnd(&g.rng) % (cfg.max_size < RD_LEN ? cfg.max_size : RD_LEN));
		uint32_t off = (uint32_t)(rnd(&g.rng) % (RD_LEN - len + 1));

		memset(lp, 0xa5, len);
		sl->roff = off;
		sge.length = len;
		wr.opcode = MNIC_WR_RDMA_READ;
		wr.remote_addr = s->peer_rarea + off;
		wr.rkey = g.peer_rkey;
		break;
	}
	case OP_FADD: {
		uint64_t add = 1 + rnd(&g.rng) % 1000;

		memset(lp, 0xa5, 8);
		sge.length = 8;
		wr.opcode = MNIC_WR_ATOMIC_FETCH_AND_ADD;
		wr.remote_addr = s->peer_atom;
		wr.rkey = g.peer_rkey;
		wr.compare_add = add;
		sl->expect = s->fa_sum;
		break;
	}
	case OP_CSWAP:
		memset(lp, 0xa5, 8);
		sge.length = 8;
		wr.opcode = MNIC_WR_ATOMIC_CMP_AND_SWP;
		wr.remote_addr = s->peer_atom + 8;
		wr.rkey = g.peer_rkey;
		wr.compare_add = s->cas_cur;
		wr.swap = s->cas_cur + 1;
		sl->expect = s->cas_cur;
		break;
	default:
		return -EINVAL;
	}
	sl->op = (uint8_t)op;
	sl->len = sge.length;
	wr.wr_id = ((uint64_t)q << 32) | ((uint64_t)op << 24) | idx;
	err = mnic_post_send(s->qp, &wr, NULL);
	if (err == -ENOMEM) {
		g.rnr_full++;
		return 0;   /* the library's view of the ring is full: later */
	}
	if (err < 0) {
		fail("qp %u: post_send %s: %s", q, op_name[op], strerror(-err));
		return err;
	}
	/* the op is in the ring: only now does its effect count */
	if (op == OP_SEND || op == OP_WIMM)
		s->tx_seq++;
	else if (op == OP_FADD)
		s->fa_sum += wr.compare_add;
	else if (op == OP_CSWAP)
		s->cas_cur++;
	s->posted++;
	s->n_ops[op]++;
	return 1;
}

/* ---- completions ------------------------------------------------------------ */

/* Gaps worth listing: the downtime of a migration is the gap that spans
 * its freeze..resume window (mnicctl migrate prints the window in epoch ms),
 * which need not be the run's largest (start-up, loss recovery). */
#define GAP_MIN_S 0.001

static void note_completion(void)
{
	double t = now_s();

	if (g.gaps && g.last_comp > 0 && t - g.last_comp >= GAP_MIN_S)
		fprintf(g.gaps, "%.3f,%.3f\n", epoch_ms() - (t - g.last_comp) * 1e3,
			(t - g.last_comp) * 1e3);

	if (g.last_comp > 0 && t - g.last_comp > g.max_gap) {
		g.max_gap = t - g.last_comp;
		g.max_gap_at = epoch_ms() - g.max_gap * 1e3;
	}
	g.last_comp = t;
	g.s_ops++;
}

static void wc_error(struct qpst *s, uint32_t q, const struct mnic_wc *wc, const char *side)
{
	g.errors++;
	if (wc->status == MNIC_WC_WR_FLUSH_ERR)
		g.flushed++;
	if (!s->errored || g.errors <= 5)
		fail("qp %u: %s error completion: %s (%u), vendor_err 0x%x%s", q, side,
		     mnic_wc_status_name(wc->status), wc->status, wc->vendor_err,
		     cfg.expect_flush ? " (expected: --expect-flush)" : "");
	s->errored = 1;
}

static int poll_send(void)
{
	struct mnic_wc wc[32];
	int n = mnic_poll_cq(g.scq, 32, wc);

	if (n < 0) {
		fail("poll send CQ: %s", strerror(-n));
		return n;
	}
	for (int i = 0; i < n; i++) {
		uint32_t q = (uint32_t)(wc[i].wr_id >> 32), idx = (uint32_t)wc[i].wr_id & 0xffffffu;
		struct qpst *s;
		struct slot *sl;
		const uint8_t *lp;

		note_completion();
		if (q >= (uint32_t)cfg.qps || idx >= SQ_DEPTH) {
			g.bad++;
			fail("send CQE with a wr_id we never posted: 0x%llx",
			     (unsigned long long)wc[i].wr_id);
			continue;
		}
		s = &g.q[q];
		/* RC completes in order (IBA 9.7.5.2.1): the oldest WQE */
		if (idx != s->completed % SQ_DEPTH || s->completed == s->posted) {
			if (g.ooo++ < 10)
				fail("qp %u: send completion for slot %u, want slot %u", q, idx,
				     s->completed % SQ_DEPTH);
		}
		s->completed++;
		sl = &s->sl[idx];
		if (wc[i].status != MNIC_WC_SUCCESS) {
			wc_error(s, q, &wc[i], op_name[sl->op]);
			continue;
		}
		if (s->errored)
			s->ok_after_err++;
		lp = wptr(s->sbuf + (uint64_t)idx * cfg.max_size, cfg.max_size);
		switch (sl->op) {
		case OP_SEND:
		case OP_WIMM:
			s->tx_done++;
			g.sent++;
			g.sent_bytes += sl->len;
			g.s_tx++;
			g.s_txb += sl->len;
			break;
		case OP_READ:
			g.reads++;
			g.s_rxb += sl->len;
			for (uint32_t k = 0; lp && k < sl->len; k++)
				if (lp[k] != rd_pattern(!g.role, q, sl->roff + k)) {
					if (g.read_bad++ < 10)
						fail("qp %u: READ of %u bytes at %u: byte %u is 0x%02x, "
						     "want 0x%02x", q, sl->len, sl->roff, k, lp[k],
						     rd_pattern(!g.role, q, sl->roff + k));
					break;
				}
			break;
		case OP_FADD:
		case OP_CSWAP: {
			uint64_t v = 0;

			g.atomics++;
			if (lp)
				memcpy(&v, lp, 8);
			if (v != sl->expect && g.atomic_bad++ < 10)
				fail("qp %u: %s returned %llu, want %llu (executed twice or lost?)", q,
				     op_name[sl->op], (unsigned long long)v,
				     (unsigned long long)sl->expect);
			break;
		}
		default:
			break;
		}
	}
	return n;
}

static int poll_recv(int repost)
{
	struct mnic_wc wc[32];
	int n = mnic_poll_cq(g.rcq, 32, wc);

	if (n < 0) {
		fail("poll receive CQ: %s", strerror(-n));
		return n;
	}
	for (int i = 0; i < n; i++) {
		uint32_t q = (uint32_t)(wc[i].wr_id >> 32), slot = (uint32_t)wc[i].wr_id;
		struct qpst *s;

		note_completion();
		if (q >= (uint32_t)cfg.qps || slot >= RQ_DEPTH) {
			g.bad++;
			fail("receive CQE with a wr_id we never posted: 0x%llx",
			     (unsigned long long)wc[i].wr_id);
			continue;
		}
		s = &g.q[q];
		if (slot != s->rq_done % RQ_DEPTH && g.ooo++ < 10)
			fail("qp %u: receive completion for slot %u, want %u", q, slot,
			     s->rq_done % RQ_DEPTH);
		s->rq_done++;
		if (wc[i].status != MNIC_WC_SUCCESS) {
			wc_error(s, q, &wc[i], "RECV");
			continue;
		}
		if (s->errored)
			s->ok_after_err++;
		if (wc[i].opcode == MNIC_WC_RECV) {
			const uint8_t *m = wptr(s->rbuf + (uint64_t)slot * cfg.max_size, cfg.max_size);

			if (m && wc[i].byte_len >= HDR_LEN && wc[i].byte_len <= cfg.max_size)
				check_msg(q, m, wc[i].byte_len, OP_SEND, 0, 0);
			else if (g.bad++ < 10)
				fail("qp %u: RECV of %u bytes", q, wc[i].byte_len);
		} else if (wc[i].opcode == MNIC_WC_RECV_RDMA_WITH_IMM) {
			uint32_t ws = wc[i].imm_data % WSLOTS;
			const uint8_t *m = wptr(s->warea + (uint64_t)ws * cfg.max_size, cfg.max_size);

			if (m)
				check_msg(q, m, cfg.max_size, OP_WIMM, wc[i].imm_data, 1);
		} else if (g.bad++ < 10) {
			fail("qp %u: receive completion with opcode %u", q, wc[i].opcode);
		}
		if (repost && !s->errored && post_recv(q) < 0)
			return -EIO;
	}
	return n;
}

/* ---- timeline ------------------------------------------------------------- */

static void sample(double t)
{
	double iv = cfg.interval_ms / 1e3;

	while (t >= g.next_sample) {
		if (g.tl)
			fprintf(g.tl, "%.3f,%.3f,%.1f,%.1f,%.1f,%.1f,%.1f\n",
				g.next_sample - g.t_start, epoch_ms() - (t - g.next_sample) * 1e3,
				g.s_tx / iv, g.s_txb / iv, g.s_rx / iv, g.s_rxb / iv, g.s_ops / iv);
		g.s_tx = g.s_txb = g.s_rx = g.s_rxb = g.s_ops = 0;
		g.next_sample += iv;
	}
}

/* ---- out of band (TCP, 127.0.0.1) ----------------------------------------------- */

struct oob_qp {
	uint32_t qpn, psn;
	uint64_t warea, rarea, atom;
};
/* Migration keys (issue 13: the tools default to a key): KEY_OFFER, the
 * default, has the server draw a fresh random key and hand it to the
 * client over this channel (the application's own control plane, as a
 * real one would exchange it); KEY_GIVEN both sides got -k (the CRC32C of
 * the key is compared, the key itself never sent); KEY_NONE (--no-mig-key)
 * unkeyed migration, which a NIC accepts only where its operator allowed
 * it (MIG_CONFIG MNIC_MIG_CFG_UNKEYED). */
enum key_mode { KEY_OFFER = 0, KEY_GIVEN = 1, KEY_NONE = 2 };
struct oob_setup {
	uint32_t magic, qps, ipv4, rkey, max_size, mtu;
	uint8_t mac[6], has_key, reserved;   /* has_key: enum key_mode */
	uint8_t key_check[8];
	uint8_t key[16];                     /* KEY_OFFER from the server */
	struct oob_qp q[MAX_QPS];
};
struct oob_done {          /* phase 1: what I sent; phase 2: the peer's words */
	uint32_t magic, phase;
	uint64_t sent[MAX_QPS];
	uint64_t word[MAX_QPS][2];
};

static int xfer(int fd, void *buf, size_t len, int wr)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int oob_connect(void)
{
	struct sockaddr_in sa;
	int fd, one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)cfg.port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (cfg.server) {
		for (int tries = 0; tries < 200; tries++) {
			fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd < 0)
				return -1;
			if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				return fd;
			}
			close(fd);
			usleep(50000);
		}
		fail("cannot connect to 127.0.0.1:%d", cfg.port);
		return -1;
	}
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (lfd < 0)
		return -1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0) {
		fail("cannot listen on 127.0.0.1:%d: %s", cfg.port, strerror(errno));
		close(lfd);
		return -1;
	}
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* ---- setup ------------------------------------------------------------------ */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int setup(int fd)
{
	struct mnic_cmd_query_device_out qd;
	struct oob_setup me, peer;
	struct mnic_buf buf;
	uint64_t per_qp, base;
	uint32_t nq = (uint32_t)cfg.qps, cqe;
	int err;

	/* one region, one MR: per QP the send slots, receive slots, the write
	 * area, the read area and two atomic words (8-aligned, IBA 9.4.5) */
	per_qp = align_up((uint64_t)SQ_DEPTH * cfg.max_size + (uint64_t)RQ_DEPTH * cfg.max_size +
				  (uint64_t)WSLOTS * cfg.max_size + RD_LEN + 64, 4096);
	/* our context's share of the user area: the region, plus per QP its SQ
	 * and RQ rings and its share of the two CQs (each ring 4 KiB-aligned,
	 * a doorbell record of its own), and the allocator header */
	mnic_set_context_size(g.dev, per_qp * nq +
				     (uint64_t)nq * ((SQ_DEPTH + RQ_DEPTH) * MNIC_WQE_SIZE +
						     2u * SQ_DEPTH * MNIC_CQE_SIZE + 4u * 8192u) +
				     (uint64_t)cfg.idle_qps * 4u * 8192u + 65536u);
	if ((err = mnic_query_device(g.dev, &qd)) < 0) {
		fail("QUERY_DEVICE: %s", mnic_strerror_last(g.dev));
		return err;
	}
	if (cfg.pause_timeout_ms) {
		/* an operator's setting: the management handle (MNIC_CTX_MGMT) */
		struct mnic_dev *mg;

		if ((err = mnic_open_mgmt(cfg.dev, &mg)) < 0) {
			fail("MIG_CONFIG: %s", mnic_open_error());
			return err;
		}
		err = mnic_mig_config(mg, cfg.pause_timeout_ms);
		if (err < 0)
			fail("MIG_CONFIG pause timeout %u ms: %s", cfg.pause_timeout_ms,
			     mnic_strerror_last(mg));
		mnic_close(mg);
		if (err < 0)
			return err;
	}
	if ((err = mnic_alloc(g.dev, per_qp * nq, 4096, &buf)) < 0) {
		fail("mnic_alloc of %llu bytes: %s (a bigger BAR, fewer --qps or a smaller "
		     "--size)", (unsigned long long)(per_qp * nq), strerror(-err));
		return err;
	}
	base = buf.addr;
	if ((err = mnic_alloc_pd(g.dev, &g.pd)) < 0 ||
	    (err = mnic_reg_mr(g.pd, base, per_qp * nq,
			       MNIC_ACCESS_LOCAL_WRITE | MNIC_ACCESS_REMOTE_WRITE |
				       MNIC_ACCESS_REMOTE_READ | MNIC_ACCESS_REMOTE_ATOMIC,
			       &g.mr)) < 0) {
		fail("PD/MR: %s", mnic_strerror_last(g.dev));
		return err;
	}
	cqe = nq * SQ_DEPTH;
	if ((err = mnic_create_cq(g.dev, cqe, &g.scq)) < 0 ||
	    (err = mnic_create_cq(g.dev, nq * RQ_DEPTH, &g.rcq)) < 0) {
		fail("CQ: %s", mnic_strerror_last(g.dev));
		return err;
	}
	/* QPs that stay in RESET: a context as large as a real application's,
	 * of which only some connections are busy (the migration bench) */
	for (int i = 0; i < cfg.idle_qps; i++) {
		struct mnic_qp_init_attr qa;
		struct mnic_qp *idle;

		memset(&qa, 0, sizeof(qa));
		qa.pd = g.pd;
		qa.send_cq = g.scq;
		qa.recv_cq = g.rcq;
		qa.max_send_wr = qa.max_recv_wr = 1;
		qa.max_send_sge = qa.max_recv_sge = 1;
		if ((err = mnic_create_qp(&qa, &idle)) < 0) {
			fail("CREATE_QP (idle %d): %s", i, mnic_strerror_last(g.dev));
			return err;
		}
	}
	{
		/* host-memory mode (libmnic.h): the addresses we hand the peer are
		 * IOVAs (our VAs), translated by the NIC through MTTs */
		struct mnic_hostmem_info hm;

		if (mnic_hostmem_info(g.dev, &hm) == 0 && hm.aperture)
			printf("host memory: %u pages of a %llu-byte aperture, %u discontiguities, "
			       "region at IOVA 0x%llx\n", hm.pages, (unsigned long long)hm.aperture,
			       hm.discontiguities, (unsigned long long)base);
	}
	memset(&me, 0, sizeof(me));
	me.magic = OOB_MAGIC;
	me.qps = nq;
	me.ipv4 = qd.ipv4;
	me.rkey = g.mr->rkey;
	me.max_size = cfg.max_size;
	me.mtu = (uint32_t)cfg.mtu;
	memcpy(me.mac, qd.mac, 6);
	me.has_key = (uint8_t)cfg.has_key;
	if (cfg.has_key == KEY_GIVEN) {
		uint32_t c = crc32c(0, cfg.key, 16);

		memcpy(me.key_check, &c, 4);
	} else if (cfg.has_key == KEY_OFFER && cfg.server) {
		if (getrandom(cfg.key, sizeof(cfg.key), 0) != (ssize_t)sizeof(cfg.key)) {
			fail("getrandom for the migration key: %s", strerror(errno));
			return -EIO;
		}
		memcpy(me.key, cfg.key, sizeof(me.key));
	}
	for (uint32_t q = 0; q < nq; q++) {
		struct qpst *s = &g.q[q];
		struct mnic_qp_init_attr qa;
		uint64_t a = base + q * per_qp;
		uint8_t *rd, *at;

		s->sbuf = a;
		s->rbuf = a + (uint64_t)SQ_DEPTH * cfg.max_size;
		s->warea = s->rbuf + (uint64_t)RQ_DEPTH * cfg.max_size;
		s->rarea = s->warea + (uint64_t)WSLOTS * cfg.max_size;
		s->atom = s->rarea + RD_LEN;
		rd = wptr(s->rarea, RD_LEN);
		at = wptr(s->atom, 16);
		if (!rd || !at)
			return -EFAULT;
		for (uint32_t k = 0; k < RD_LEN; k++)
			rd[k] = rd_pattern(g.role, q, k);
		memset(at, 0, 16);
		memset(&qa, 0, sizeof(qa));
		qa.pd = g.pd;
		qa.send_cq = g.scq;
		qa.recv_cq = g.rcq;
		qa.max_send_wr = SQ_DEPTH;
		qa.max_recv_wr = RQ_DEPTH;
		qa.max_send_sge = qa.max_recv_sge = 1;
		qa.sq_sig_all = 1;
		if ((err = mnic_create_qp(&qa, &s->qp)) < 0) {
			fail("CREATE_QP %u: %s", q, mnic_strerror_last(g.dev));
			return err;
		}
		me.q[q].qpn = s->qp->qp_num;
		me.q[q].psn = (uint32_t)(rnd(&g.rng) & 0xffffff);
		me.q[q].warea = s->warea;
		me.q[q].rarea = s->rarea;
		me.q[q].atom = s->atom;
	}
	if (xfer(fd, &me, sizeof(me), 1) || xfer(fd, &peer, sizeof(peer), 0)) {
		fail("setup exchange with the peer failed");
		return -EIO;
	}
	if (peer.magic != OOB_MAGIC || peer.qps != nq || peer.max_size != cfg.max_size ||
	    peer.mtu != (uint32_t)cfg.mtu || peer.has_key != me.has_key ||
	    memcmp(peer.key_check, me.key_check, 8)) {
		fail("the peer runs another configuration (qps %u/%u, size %u/%u, mtu %u/%u, key "
		     "%s): give both the same --qps --size --mtu --mig-key", peer.qps, nq,
		     peer.max_size, cfg.max_size, peer.mtu, cfg.mtu,
		     peer.has_key == me.has_key ? "differs" : "given, offered or off: not alike");
		return -EINVAL;
	}
	/* the peer's NIC may hold other tenants' MRs: its key, not ours */
	g.peer_rkey = peer.rkey;
	if (cfg.has_key == KEY_OFFER && !cfg.server)
		memcpy(cfg.key, peer.key, sizeof(cfg.key));
	for (uint32_t q = 0; cfg.has_key != KEY_NONE && q < nq; q++) {
		if ((err = mnic_set_qp_mig_key(g.q[q].qp, cfg.key)) < 0) {
			fail("SET_QP_MIG_KEY %u: %s", q, mnic_strerror_last(g.dev));
			return err;
		}
	}
	for (uint32_t q = 0; q < nq; q++) {
		struct qpst *s = &g.q[q];
		struct mnic_rc_connect c;

		s->peer_qpn = peer.q[q].qpn;
		s->peer_psn = peer.q[q].psn;
		s->peer_warea = peer.q[q].warea;
		s->peer_rarea = peer.q[q].rarea;
		s->peer_atom = peer.q[q].atom;
		memset(&c, 0, sizeof(c));
		c.dest_qp_num = s->peer_qpn;
		mnic_gid_from_ipv4(c.dgid, peer.ipv4);
		memcpy(c.dmac, peer.mac, 6);
		c.rq_psn = s->peer_psn;
		c.sq_psn = me.q[q].psn;
		c.path_mtu = (uint32_t)cfg.mtu;
		c.access = MNIC_ACCESS_REMOTE_WRITE | MNIC_ACCESS_REMOTE_READ |
			   MNIC_ACCESS_REMOTE_ATOMIC | MNIC_ACCESS_LOCAL_WRITE;
		c.max_rd_atomic = (uint8_t)(qd.max_rd_atomic < 4 ? (qd.max_rd_atomic ? qd.max_rd_atomic : 1) : 4);
		c.timeout = (uint8_t)cfg.ack_timeout;
		for (uint32_t k = 0; k < RQ_DEPTH; k++)
			if ((err = post_recv(q)) < 0)
				return err;
		if ((err = mnic_connect_rc(s->qp, &c)) < 0) {
			fail("connect QP %u: %s", q, mnic_strerror_last(g.dev));
			return err;
		}
	}
	/* both sides ready before anyone sends (no RNR storm at start) */
	{
		uint32_t tok = OOB_MAGIC, ptok = 0;

		if (xfer(fd, &tok, 4, 1) || xfer(fd, &ptok, 4, 0) || ptok != OOB_MAGIC) {
			fail("ready barrier with the peer failed");
			return -EIO;
		}
	}
	return 0;
}

/* ---- main loop -------------------------------------------------------------------- */

static int want_more(uint32_t q, double t)
{
	if (cfg.msgs)
		return g.q[q].tx_seq < cfg.msgs;
	return t - g.t_start < cfg.duration;
}

static uint32_t outstanding_sends(void)
{
	uint32_t n = 0;

	for (int q = 0; q < cfg.qps; q++)
		n += g.q[q].posted - g.q[q].completed;
	return n;
}

static uint32_t outstanding_recvs(void)
{
	uint32_t n = 0;

	for (int q = 0; q < cfg.qps; q++)
		n += g.q[q].rq_posted - g.q[q].rq_done;
	return n;
}

static int all_errored(void)
{
	for (int q = 0; q < cfg.qps; q++)
		if (!g.q[q].errored)
			return 0;
	return 1;
}

static int seen_migrations;

static void check_migration(void)
{
	if (mig_err) {
		fail("migration notify: cannot rebind to '%s': %s", mig_path, strerror(mig_err));
		mig_err = 0;
	}
	if (mig_count != seen_migrations) {
		seen_migrations = mig_count;
		fprintf(stderr, "mnic-traffic[%s]: rebound to %s (migration %d) at epoch %.3f ms\n",
			g.role ? "client" : "server", mig_path, seen_migrations, epoch_ms());
		/* anything posted before the freeze that the source never took:
		 * the target re-reads every doorbell record on a new db_seq */
		mnic_ring_doorbell(g.dev);
	}
}

static void report(const char *verdict, double elapsed)
{
	uint64_t n_ops[OP_NUM] = {0};

	for (int q = 0; q < cfg.qps; q++)
		for (int k = 0; k < OP_NUM; k++)
			n_ops[k] += g.q[q].n_ops[k];
	printf("TRAFFIC %s role=%s qps=%d sent=%llu received=%llu lost=%llu dup=%llu ooo=%llu "
	       "bad=%llu errors=%llu flushed=%llu reads=%llu read_bad=%llu atomics=%llu "
	       "atomic_bad=%llu max_gap_ms=%.3f max_gap_epoch_ms=%.3f migrations=%d elapsed_s=%.3f "
	       "tx_bytes=%llu rx_bytes=%llu device=%s\n",
	       verdict, g.role ? "client" : "server", cfg.qps, (unsigned long long)g.sent,
	       (unsigned long long)g.received, (unsigned long long)g.lost,
	       (unsigned long long)g.dup, (unsigned long long)g.ooo, (unsigned long long)g.bad,
	       (unsigned long long)g.errors, (unsigned long long)g.flushed,
	       (unsigned long long)g.reads, (unsigned long long)g.read_bad,
	       (unsigned long long)g.atomics, (unsigned long long)g.atomic_bad, g.max_gap * 1e3,
	       g.max_gap_at, seen_migrations, elapsed, (unsigned long long)g.sent_bytes,
	       (unsigned long long)g.rx_bytes, mnic_dev_path(g.dev));
	printf("ops posted: SEND %llu WRITE_IMM %llu READ %llu FETCH_ADD %llu CMP_SWAP %llu\n",
	       (unsigned long long)n_ops[OP_SEND], (unsigned long long)n_ops[OP_WIMM],
	       (unsigned long long)n_ops[OP_READ], (unsigned long long)n_ops[OP_FADD],
	       (unsigned long long)n_ops[OP_CSWAP]);
	fflush(stdout);
}

static int run(int fd)
{
	static uint64_t peer_sent[MAX_QPS];
	struct oob_done mine, theirs;
	int phase = 0, got_peer1 = 0, got_peer2 = 0, stopping = 0;
	size_t have = 0;
	double t, t_stop = 0;
	int fl = fcntl(fd, F_GETFL);

	memset(&theirs, 0, sizeof(theirs));
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	g.t_start = now_s();
	g.next_sample = g.t_start + cfg.interval_ms / 1e3;
	for (;;) {
		int progress = 0, r;

		check_migration();
		t = now_s();
		sample(t);
		if (t - g.t_start > cfg.timeout) {
			fail("no end after %.0f s: %u sends and %u receives outstanding, phase %d "
			     "(stuck?)", cfg.timeout, outstanding_sends(), outstanding_recvs(), phase);
			return -ETIMEDOUT;
		}
		/* post */
		if (!stopping && !(cfg.expect_flush && g.errors)) {
			for (int q = 0; q < cfg.qps; q++) {
				struct qpst *s = &g.q[q];

				while (want_more((uint32_t)q, t) && s->posted - s->completed < SQ_DEPTH) {
					r = post_one((uint32_t)q);
					if (r < 0)
						return r;
					if (r == 0)
						break;
					progress = 1;
				}
			}
		}
		if ((r = poll_send()) < 0)
			return r;
		progress |= r > 0;
		if ((r = poll_recv(!(cfg.expect_flush && g.errors))) < 0)
			return r;
		progress |= r > 0;

		if (cfg.expect_flush) {
			/* every outstanding WQE of every QP must come back with
			 * an error: then we are done, nothing hangs */
			if (g.errors && all_errored() && outstanding_sends() == 0 &&
			    outstanding_recvs() == 0)
				return 0;
			if (!progress)
				usleep(200);
			continue;
		}
		if (!stopping) {
			int more = 0;

			for (int q = 0; q < cfg.qps; q++)
				more |= want_more((uint32_t)q, t);
			if (!more) {
				stopping = 1;
				t_stop = t;
			}
		}
		/* the end: drain, then tell the peer what we sent (phase 1);
		 * when the peer has drained too, its atomics on our words are
		 * done: send the words (phase 2) */
		if (stopping && phase == 0 && outstanding_sends() == 0) {
			memset(&mine, 0, sizeof(mine));
			mine.magic = OOB_MAGIC;
			mine.phase = 1;
			for (int q = 0; q < cfg.qps; q++)
				mine.sent[q] = g.q[q].tx_done;
			fcntl(fd, F_SETFL, fl);
			if (xfer(fd, &mine, sizeof(mine), 1))
				return -EIO;
			fcntl(fd, F_SETFL, fl | O_NONBLOCK);
			phase = 1;
		}
		if (!got_peer2) {
			ssize_t n = recv(fd, (uint8_t *)&theirs + have, sizeof(theirs) - have, 0);

			if (n == 0) {
				fail("the peer closed the connection early");
				return -EIO;
			}
			if (n > 0)
				have += (size_t)n;
			if (have == sizeof(theirs)) {
				if (theirs.magic != OOB_MAGIC || theirs.phase != (uint32_t)(got_peer1 + 1)) {
					fail("bad end-of-run message from the peer");
					return -EIO;
				}
				have = 0;
				if (!got_peer1) {
					got_peer1 = 1;
					memcpy(peer_sent, theirs.sent, sizeof(peer_sent));
				} else {
					got_peer2 = 1;
				}
			}
		}
		if (phase == 1 && got_peer1) {
			int all_in = 1;

			for (int q = 0; q < cfg.qps; q++)
				if (g.q[q].rx_expect < peer_sent[q])
					all_in = 0;
			if (all_in || now_s() - t_stop > 10) {
				struct oob_done w;

				memset(&w, 0, sizeof(w));
				w.magic = OOB_MAGIC;
				w.phase = 2;
				for (int q = 0; q < cfg.qps; q++) {
					const uint64_t *at = wptr(g.q[q].atom, 16);

					if (at) {
						w.word[q][0] = at[0];
						w.word[q][1] = at[1];
					}
				}
				fcntl(fd, F_SETFL, fl);
				if (xfer(fd, &w, sizeof(w), 1))
					return -EIO;
				fcntl(fd, F_SETFL, fl | O_NONBLOCK);
				phase = 2;
			}
		}
		if (phase == 2 && got_peer2)
			break;
		if (!progress)
			usleep(100);
	}
	/* judgement: loss against what the peer sent, atomics against our sums */
	for (int q = 0; q < cfg.qps; q++) {
		struct qpst *s = &g.q[q];

		if (s->rx_expect < peer_sent[q]) {
			g.lost += peer_sent[q] - s->rx_expect;
			fail("qp %d: %llu of the peer's %llu messages never arrived", q,
			     (unsigned long long)(peer_sent[q] - s->rx_expect),
			     (unsigned long long)peer_sent[q]);
		} else if (s->rx_expect > peer_sent[q]) {
			g.bad++;
			fail("qp %d: received up to seq %llu but the peer sent %llu", q,
			     (unsigned long long)s->rx_expect, (unsigned long long)peer_sent[q]);
		}
		if (theirs.word[q][0] != s->fa_sum || theirs.word[q][1] != s->cas_cur) {
			g.atomic_bad++;
			fail("qp %d: the peer's atomic words are %llu/%llu, want %llu/%llu (an "
			     "atomic lost or executed twice)", q,
			     (unsigned long long)theirs.word[q][0], (unsigned long long)theirs.word[q][1],
			     (unsigned long long)s->fa_sum, (unsigned long long)s->cas_cur);
		}
	}
	return 0;
}

/* ---- options ---------------------------------------------------------------- */

static void usage(void)
{
	printf("usage: mnic-traffic -d DEV [options]              (server, on 127.0.0.1)\n"
	       "       mnic-traffic -d DEV [options] 127.0.0.1    (client)\n"
	       "  -d, --dev DEV            BAR file of this host's NIC (or /dev/mnicN)\n"
	       "  -p, --port N             TCP port for setup (default 18600)\n"
	       "  -q, --qps N              QPs (default 8, at most %u)\n"
	       "  -n, --msgs N             SEND+WRITE_IMM messages per QP and direction\n"
	       "  -D, --duration S         or run for S seconds (default 5)\n"
	       "  -s, --size N             largest message, %u..65536 (default 2048)\n"
	       "  -m, --mtu 1..5           path MTU code (ibv_mtu; default 3 = 1024)\n"
	       "  -T, --timeline CSV       samples every --interval ms: t_s,epoch_ms,tx_msgs_s,\n"
	       "                           tx_bytes_s,rx_msgs_s,rx_bytes_s,completions_s\n"
	       "  -i, --interval MS        timeline period (default 100)\n"
	       "  -g, --gaps CSV           every gap >= 1 ms between completions:\n"
	       "                           start_epoch_ms,len_ms (downtime of a migration)\n"
	       "  -k, --mig-key HEX32      migration key for RESUME authentication (both sides;\n"
	       "                           default: a fresh random key from the server)\n"
	       "      --no-mig-key         unkeyed migration (the NICs must allow it: MIG_CONFIG)\n"
	       "  -P, --pause-timeout MS   MIG_CONFIG on this NIC: paused QPs give up after MS\n"
	       "  -I, --idle-qps N         N more QPs in our context that stay in RESET (<= 1024)\n"
	       "  -A, --ack-timeout N      local ACK timeout 4.096 us x 2^N (default 16: ~2.1 s\n"
	       "                           of silence before RETRY_EXC_ERR with retry_cnt 7)\n"
	       "  -N, --notify FILE        migration: SIGUSR1 rebinds to the device named in FILE\n"
	       "  -F, --expect-flush       the peer will never come back: pass when every QP\n"
	       "                           errors out and every outstanding WQE completes\n"
	       "                           with an error (no hang)\n"
	       "  -t, --timeout S          give up after S seconds (default 120)\n"
	       "  -S, --seed N             operation mix seed (default 1)\n",
	       MAX_QPS, HDR_LEN);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-';
}

static int parse_key(const char *s, uint8_t key[16])
{
	if (strlen(s) != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		key[i] = (uint8_t)v;
	}
	return 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{"dev", 1, NULL, 'd'}, {"port", 1, NULL, 'p'}, {"qps", 1, NULL, 'q'},
		{"msgs", 1, NULL, 'n'}, {"duration", 1, NULL, 'D'}, {"size", 1, NULL, 's'},
		{"mtu", 1, NULL, 'm'}, {"timeline", 1, NULL, 'T'}, {"interval", 1, NULL, 'i'},
		{"gaps", 1, NULL, 'g'},
		{"idle-qps", 1, NULL, 'I'}, {"ack-timeout", 1, NULL, 'A'},
		{"mig-key", 1, NULL, 'k'}, {"no-mig-key", 0, NULL, 'K'}, {"pause-timeout", 1, NULL, 'P'},
		{"notify", 1, NULL, 'N'}, {"expect-flush", 0, NULL, 'F'},
		{"timeout", 1, NULL, 't'}, {"seed", 1, NULL, 'S'}, {"help", 0, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	uint64_t v;
	int c;

	cfg.duration = 0;
	while ((c = getopt_long(argc, argv, "d:p:q:n:D:s:m:T:i:g:k:KP:N:Ft:S:I:A:h", lo, NULL)) != -1) {
		switch (c) {
		case 'd': cfg.dev = optarg; break;
		case 'T': cfg.timeline = optarg; break;
		case 'g': cfg.gaps = optarg; break;
		case 'N': cfg.notify = optarg; break;
		case 'F': cfg.expect_flush = 1; break;
		case 'h': usage(); exit(0);
		case 'k':
			if (parse_key(optarg, cfg.key))
				goto bad;
			cfg.has_key = KEY_GIVEN;
			break;
		case 'K':
			cfg.has_key = KEY_NONE;
			break;
		case 'D':
		case 't': {
			char *end;
			double d = strtod(optarg, &end);

			if (end == optarg || *end || !(d > 0) || d > 86400)
				goto bad;
			if (c == 'D')
				cfg.duration = d;
			else
				cfg.timeout = d;
			break;
		}
		default:
			if (c == '?' || parse_u64(optarg, &v))
				goto bad;
			if ((c == 'p' && (v == 0 || v > 65535)) ||
			    (c == 'q' && (v == 0 || v > MAX_QPS)) || (c == 'n' && v == 0) ||
			    (c == 's' && (v < HDR_LEN || v > 65536)) || (c == 'm' && (v < 1 || v > 5)) ||
			    (c == 'i' && (v < 10 || v > 60000)) || (c == 'P' && v > 3600000))
				goto bad;
			if (c == 'p') cfg.port = (int)v;
			if (c == 'q') cfg.qps = (int)v;
			if (c == 'n') cfg.msgs = v;
			if (c == 's') cfg.max_size = (uint32_t)v;
			if (c == 'm') cfg.mtu = (int)v;
			if (c == 'i') cfg.interval_ms = (uint32_t)v;
			if (c == 'P') cfg.pause_timeout_ms = (uint32_t)v;
			if (c == 'S') cfg.seed = v ? v : 1;
			if (c == 'A') {
				if (v < 1 || v > 31)
					goto bad;
				cfg.ack_timeout = (int)v;
			}
			if (c == 'I') {
				if (v > 1024)
					goto bad;
				cfg.idle_qps = (int)v;
			}
			break;
		}
	}
	if (optind < argc) {
		cfg.server = argv[optind++];
		if (strcmp(cfg.server, "127.0.0.1") && strcmp(cfg.server, "localhost")) {
			fprintf(stderr, "mnic-traffic: the peer must be 127.0.0.1 (setup is local "
					"only)\n");
			return -1;
		}
	}
	if (optind < argc || !cfg.dev) {
		fprintf(stderr, "mnic-traffic: %s (see --help)\n",
			!cfg.dev ? "-d DEV is required" : "too many arguments");
		return -1;
	}
	if (cfg.msgs && cfg.duration) {
		fprintf(stderr, "mnic-traffic: give --msgs or --duration, not both\n");
		return -1;
	}
	if (!cfg.msgs && !cfg.duration)
		cfg.duration = 5;
	return 0;
bad:
	fprintf(stderr, "mnic-traffic: bad value '%s' for -%c (see --help)\n", optarg ? optarg : "",
		c);
	return -1;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	double t0;
	int fd, err, pass;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_args(argc, argv))
		return EXIT_USAGE;
	g.role = cfg.server ? 1 : 0;
	g.rng = mix(cfg.seed, (uint64_t)g.role, 0x5eed);
	if (mnic_open(cfg.dev, &g.dev) < 0) {
		fprintf(stderr, "mnic-traffic: %s\n", mnic_open_error());
		return EXIT_DEVICE;
	}
	if (cfg.notify) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_migrate;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		sigaction(SIGUSR1, &sa, NULL);
	}
	if (cfg.timeline) {
		g.tl = fopen(cfg.timeline, "w");
		if (!g.tl) {
			fprintf(stderr, "mnic-traffic: cannot write %s: %s\n", cfg.timeline,
				strerror(errno));
			return EXIT_USAGE;
		}
		fprintf(g.tl, "t_s,epoch_ms,tx_msgs_s,tx_bytes_s,rx_msgs_s,rx_bytes_s,completions_s\n");
	}
	if (cfg.gaps) {
		g.gaps = fopen(cfg.gaps, "w");
		if (!g.gaps) {
			fprintf(stderr, "mnic-traffic: cannot write %s: %s\n", cfg.gaps,
				strerror(errno));
			return EXIT_USAGE;
		}
		fprintf(g.gaps, "start_epoch_ms,len_ms\n");
	}
	fd = oob_connect();
	if (fd < 0)
		return EXIT_DEVICE;
	err = setup(fd);
	if (err < 0)
		return err == -EINVAL ? EXIT_USAGE : EXIT_DEVICE;
	fprintf(stderr, "mnic-traffic[%s]: %d QPs connected on %s, running\n",
		g.role ? "client" : "server", cfg.qps, cfg.dev);
	t0 = now_s();
	err = run(fd);
	check_migration();
	sample(now_s());
	if (g.tl)
		fclose(g.tl);
	if (g.gaps)
		fclose(g.gaps);
	if (cfg.expect_flush) {
		/* every QP must now be in ERR (pause timeout), nothing hung */
		int in_err = 0;

		for (int q = 0; q < cfg.qps; q++) {
			struct mnic_cmd_query_qp_out qo;

			if (mnic_query_qp(g.dev, g.q[q].qp->qp_num, &qo) == 0 &&
			    qo.attr.qp_state == MNIC_QPS_ERR)
				in_err++;
			if (g.q[q].ok_after_err) {
				fail("qp %d: %d successful completions after its first error", q,
				     g.q[q].ok_after_err);
				g.bad++;
			}
		}
		pass = err == 0 && in_err == cfg.qps && g.bad == 0 && g.dup == 0 && g.ooo == 0 &&
		       g.read_bad == 0 && g.atomic_bad == 0;
		if (in_err != cfg.qps)
			fail("%d of %d QPs in ERR", in_err, cfg.qps);
		report(pass ? "PASS" : "FAIL", now_s() - t0);
		printf("flush: every QP in ERR (%d), %llu error completions (%llu flushed), no "
		       "WQE outstanding: %s\n", in_err, (unsigned long long)g.errors,
		       (unsigned long long)g.flushed, pass ? "yes" : "NO");
		close(fd);
		return pass ? 0 : EXIT_VERIFY;
	}
	pass = err == 0 && g.lost == 0 && g.dup == 0 && g.ooo == 0 && g.bad == 0 && g.errors == 0 &&
	       g.read_bad == 0 && g.atomic_bad == 0;
	report(pass ? "PASS" : "FAIL", now_s() - t0);
	close(fd);
	return pass ? 0 : EXIT_VERIFY;
}
