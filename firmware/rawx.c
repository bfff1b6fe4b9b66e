/* rawx: verified raw-frame exchange between NICs on one switch.
 *
 * Each NIC sends `count` data frames to every peer and receives `count`
 * from each, with go-back-N recovery so a lossy fabric still delivers every
 * frame exactly once, in order, byte-for-byte.  It proves the drivers, the
 * switch and the event loop end to end before any RoCEv2 is involved, and
 * it measures the raw frame rate (make bench).
 *
 * Frame (after the 14-byte Ethernet header, EtherType 0x88B5, IEEE local
 * experimental):
 *   +------+---------+-------------+----------------+----------------+
 *   | kind | version | payload_len |      seq       |      crc       |
 *   |  u8  |   u8    |   be16      |      be32      |      be32      |
 *   +------+---------+-------------+----------------+----------------+
 *   followed by payload_len bytes derived from (src MAC, dst MAC, seq).
 * kind DATA carries seq; kind ACK carries the next seq the sender expects.
 * crc is CRC-32 over kind..seq and the payload: a corrupted ACK must not
 * acknowledge frames the peer never received.
 */
#include <string.h>

#include "hal/errno.h"
#include "log.h"
#include "modes.h"
#include "lib/crc32.h"

#define RAWX_ETHERTYPE  0x88b5u
#define RAWX_VERSION    1u
#define RAWX_DATA       1u
#define RAWX_ACK        2u
#define RAWX_MAX_PEERS  8u
#define RAWX_WINDOW     16u
#define RAWX_HDR_LEN    (14u + 12u)
#define RAWX_MIN_PAYLOAD 34u
#define RAWX_PAYLOAD_SPAN 1400u

struct rawx_peer {
	uint8_t mac[6];
	uint32_t una, next;          /* sender: oldest unacked, next to send */
	uint32_t high;               /* sender: highest seq ever sent + 1 */
	uint32_t expected;           /* receiver: next in-order seq */
	uint64_t retransmits, dup_rx, ooo_rx, bad_rx;
	struct timer rto;
	struct rawx *x;
};

struct rawx_stats {
	uint64_t data_tx, ack_tx, data_rx, ack_rx, foreign_rx, tx_busy;
};

struct rawx {
	struct fw_ctx *c;
	struct rawx_peer peers[RAWX_MAX_PEERS];
	unsigned n_peers;
	uint32_t count;
	uint64_t rto_ns, linger_ns;
	uint64_t start_ns, done_ns, last_data_rx_ns;
	int done;
	struct rawx_stats stats;
	struct timer pump, tick, linger, timeout;
	uint8_t buf[RAWX_HDR_LEN + RAWX_MIN_PAYLOAD + RAWX_PAYLOAD_SPAN];
	uint8_t expect[RAWX_MIN_PAYLOAD + RAWX_PAYLOAD_SPAN];
};

static struct rawx rx_state;

static void put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static uint16_t get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static struct hal_eth *port(struct rawx *x)
{
	return x->c->plat->eth[0];
}

/* Payload for (src, dst, seq): length and bytes both depend on all three,
 * so a frame delivered to the wrong peer or with the wrong seq fails. */
static size_t make_payload(const uint8_t *src, const uint8_t *dst, uint32_t seq, uint8_t *out)
{
	uint32_t s = seq * 2654435761u ^ crc32_ieee(0, src, 6) ^ (crc32_ieee(0, dst, 6) << 1);
	size_t len = RAWX_MIN_PAYLOAD + (seq * 37u + src[5]) % RAWX_PAYLOAD_SPAN, i;

	for (i = 0; i < len; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		out[i] = (uint8_t)s;
	}
	return len;
}

static uint32_t frame_crc(const uint8_t *f, size_t plen)
{
	uint32_t st = crc32_ieee_raw(0xffffffffu, f + 14, 8);

	return ~crc32_ieee_raw(st, f + RAWX_HDR_LEN, plen);
}

static size_t build(struct rawx *x, struct rawx_peer *p, unsigned kind, uint32_t seq)
{
	uint8_t *f = x->buf;
	size_t plen = 0;

	memcpy(f, p->mac, 6);
	memcpy(f + 6, port(x)->mac, 6);
	put_be16(f + 12, RAWX_ETHERTYPE);
	f[14] = (uint8_t)kind;
	f[15] = RAWX_VERSION;
	if (kind == RAWX_DATA)
		plen = make_payload(port(x)->mac, p->mac, seq, f + RAWX_HDR_LEN);
	put_be16(f + 16, (uint16_t)plen);
	put_be32(f + 18, seq);
	put_be32(f + 22, frame_crc(f, plen));
	return RAWX_HDR_LEN + plen;
}

static int send_frame(struct rawx *x, size_t len)
{
	int rc = hal_eth_tx(port(x), x->buf, len);

	if (rc == -HAL_EAGAIN)
		x->stats.tx_busy++;
	return rc;
}

static void check_done(struct rawx *x)
{
	unsigned i;

	if (x->done)
		return;
	for (i = 0; i < x->n_peers; i++)
		if (x->peers[i].una < x->count || x->peers[i].expected < x->count)
			return;
	x->done = 1;
	x->done_ns = fw_loop_now(x->c->loop);
	fw_loop_timer_arm(x->c->loop, &x->linger, x->last_data_rx_ns + x->linger_ns);
}

/* Send as much of every peer's window as the TX ring takes. */
static void pump(struct rawx *x)
{
	unsigned i;

	for (i = 0; i < x->n_peers; i++) {
		struct rawx_peer *p = &x->peers[i];

		while (p->next < x->count && p->next - p->una < RAWX_WINDOW) {
			if (send_frame(x, build(x, p, RAWX_DATA, p->next)) != 0) {
				/* Ring full: come back when it drains. */
				fw_loop_timer_arm(x->c->loop, &x->pump, fw_loop_now(x->c->loop) + 100000u);
				return;
			}
			x->stats.data_tx++;
			p->next++;
			if (p->next > p->high)
				p->high = p->next;
			if (!timer_armed(&p->rto))
				fw_loop_timer_arm(x->c->loop, &p->rto, fw_loop_now(x->c->loop) + x->rto_ns);
		}
	}
}

static void on_pump(struct timer *t, void *arg)
{
	(void)t;
	pump(arg);
}

/* Go-back-N: resend everything from the oldest unacked frame. */
static void on_rto(struct timer *t, void *arg)
{
	struct rawx_peer *p = arg;
	struct rawx *x = p->x;

	(void)t;
	if (p->una >= p->next)
		return;
	p->retransmits += p->next - p->una;
	p->next = p->una;
	fw_loop_timer_arm(x->c->loop, &p->rto, fw_loop_now(x->c->loop) + x->rto_ns);
	pump(x);
}

static struct rawx_peer *find_peer(struct rawx *x, const uint8_t *mac)
{
	unsigned i;

	for (i = 0; i < x->n_peers; i++)
		if (memcmp(x->peers[i].mac, mac, 6) == 0)
			return &x->peers[i];
	return NULL;
}

static void on_data(struct rawx *x, struct rawx_peer *p, const uint8_t *f, size_t len)
{
	uint32_t seq = get_be32(f + 18);
	size_t plen = get_be16(f + 16), want;

	(void)len;
	x->stats.data_rx++;
	x->last_data_rx_ns = fw_loop_now(x->c->loop);
	if (seq == p->expected && seq < x->count) {
		want = make_payload(p->mac, port(x)->mac, seq, x->expect);
		if (want != plen || memcmp(f + RAWX_HDR_LEN, x->expect, plen) != 0) {
			p->bad_rx++;   /* corrupted: not accepted, the sender resends */
			return;
		}
		p->expected++;
	} else if (seq < p->expected) {
		p->dup_rx++;
	} else {
		p->ooo_rx++;
	}
	/* Cumulative ACK for every data frame, so a lost ACK costs nothing. */
	if (send_frame(x, build(x, p, RAWX_ACK, p->expected)) == 0)
		x->stats.ack_tx++;
	if (x->done)
		fw_loop_timer_arm(x->c->loop, &x->linger, x->last_data_rx_ns + x->linger_ns);
	check_done(x);
}

static void on_ack(struct rawx *x, struct rawx_peer *p, const uint8_t *f)
{
	uint32_t ack = get_be32(f + 18);

	x->stats.ack_rx++;
	/* An ACK beyond what was ever sent is bogus; one below una is stale.
	 * After a go-back-N rewind next < high, and an ACK up to high is
	 * still good news. */
	if (ack > p->high || ack <= p->una)
		return;
	p->una = ack;
	if (p->next < p->una)
		p->next = p->una;
	if (p->una == p->next)
		fw_loop_timer_cancel(x->c->loop, &p->rto);
	else
		fw_loop_timer_arm(x->c->loop, &p->rto, fw_loop_now(x->c->loop) + x->rto_ns);
	pump(x);
	check_done(x);
}

static void on_frame(void *arg, unsigned port_no, const uint8_t *f, size_t len)
{
	struct rawx *x = arg;
	struct rawx_peer *p;

	(void)port_no;
	if (len < RAWX_HDR_LEN || get_be16(f + 12) != RAWX_ETHERTYPE || f[15] != RAWX_VERSION ||
	    memcmp(f, port(x)->mac, 6) != 0 || !(p = find_peer(x, f + 6))) {
		x->stats.foreign_rx++;
		return;
	}
	/* Padding may follow a short frame; anything else is damage. */
	if (get_be16(f + 16) > len - RAWX_HDR_LEN ||
	    (len > HAL_ETH_MIN_FRAME && get_be16(f + 16) != len - RAWX_HDR_LEN) ||
	    frame_crc(f, get_be16(f + 16)) != get_be32(f + 22)) {
		p->bad_rx++;
		return;
	}
	if (f[14] == RAWX_DATA)
		on_data(x, p, f, len);
	else if (f[14] == RAWX_ACK)
		on_ack(x, p, f);
	else
		p->bad_rx++;
}

static uint64_t delivered(const struct rawx *x)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < x->n_peers; i++)
		n += x->peers[i].una + x->peers[i].expected;
	return n;
}

static void on_tick(struct timer *t, void *arg)
{
	struct rawx *x = arg;

	LOG_INFO("rawx: %llu/%llu frames delivered, %llu data tx, %llu data rx",
		 (unsigned long long)delivered(x), (unsigned long long)2u * x->count * x->n_peers,
		 (unsigned long long)x->stats.data_tx, (unsigned long long)x->stats.data_rx);
	fw_loop_timer_arm(x->c->loop, t, fw_loop_now(x->c->loop) + 1000000000u);
}

static void on_linger(struct timer *t, void *arg)
{
	struct rawx *x = arg;

	(void)t;
	fw_loop_exit(x->c->loop, FW_EXIT_OK);
}

static void on_timeout(struct timer *t, void *arg)
{
	struct rawx *x = arg;

	(void)t;
	fw_loop_exit(x->c->loop, FW_EXIT_FAIL);
}

static void report(struct rawx *x, int ok)
{
	uint64_t elapsed = (x->done ? x->done_ns : fw_loop_now(x->c->loop)) - x->start_ns;
	uint64_t retrans = 0, dup = 0, ooo = 0, bad = 0, n = delivered(x);
	unsigned i;

	for (i = 0; i < x->n_peers; i++) {
		struct rawx_peer *p = &x->peers[i];

		retrans += p->retransmits;
		dup += p->dup_rx;
		ooo += p->ooo_rx;
		bad += p->bad_rx;
		if (!ok)
			LOG_ERR("rawx: peer %02x:%02x:%02x:%02x:%02x:%02x sent %u/%u acked, received %u/%u",
				p->mac[0], p->mac[1], p->mac[2], p->mac[3], p->mac[4], p->mac[5],
				(unsigned)p->una, (unsigned)x->count, (unsigned)p->expected,
				(unsigned)x->count);
	}
	fw_print("RAWX %s peers=%u count=%u delivered=%llu elapsed_us=%llu rate_fps=%llu "
		 "retransmits=%llu dup=%llu ooo=%llu bad=%llu foreign=%llu tx_busy=%llu",
		 ok ? "PASS" : "FAIL", x->n_peers, (unsigned)x->count, (unsigned long long)n,
		 (unsigned long long)(elapsed / 1000u),
		 (unsigned long long)(elapsed ? n * 1000000000u / elapsed : 0),
		 (unsigned long long)retrans, (unsigned long long)dup, (unsigned long long)ooo,
		 (unsigned long long)bad, (unsigned long long)x->stats.foreign_rx,
		 (unsigned long long)x->stats.tx_busy);
}

int fw_mode_rawx(struct fw_ctx *c, const struct fw_args *a)
{
	static const char *const keys[] = { "log", "peers", "count", "rto_ms", "linger_ms",
					    "timeout_ms", NULL };
	static uint8_t macs[RAWX_MAX_PEERS][6];
	struct rawx *x = &rx_state;
	uint64_t count, rto_ms, linger_ms, timeout_ms;
	const char *peers;
	unsigned i;
	int n, rc;

	if (fw_args_check(a, keys) != 0 ||
	    fw_args_u64(a, "count", 1000, 1000000000u, &count) != 0 ||
	    fw_args_u64(a, "rto_ms", 100, 60000, &rto_ms) != 0 ||
	    fw_args_u64(a, "linger_ms", 1500, 60000, &linger_ms) != 0 ||
	    fw_args_u64(a, "timeout_ms", 120000, 86400000u, &timeout_ms) != 0)
		return FW_EXIT_USAGE;
	peers = fw_args_get(a, "peers");
	if (!peers || (n = fw_parse_mac_list(peers, macs, RAWX_MAX_PEERS)) <= 0) {
		LOG_ERR("rawx needs peers=MAC[,MAC...] (at most %u, as xx:xx:xx:xx:xx:xx)",
			RAWX_MAX_PEERS);
		return FW_EXIT_USAGE;
	}
	if (c->plat->n_eth < 1) {
		LOG_ERR("rawx needs an Ethernet port");
		return FW_EXIT_PLATFORM;
	}
	if (rto_ms == 0 || count == 0) {
		LOG_ERR("rawx: count and rto_ms must be positive");
		return FW_EXIT_USAGE;
	}
	memset(x, 0, sizeof(*x));
	x->c = c;
	x->count = (uint32_t)count;
	x->rto_ns = rto_ms * 1000000u;
	x->linger_ns = linger_ms * 1000000u;
	x->n_peers = (unsigned)n;
	for (i = 0; i < x->n_peers; i++) {
		memcpy(x->peers[i].mac, macs[i], 6);
		x->peers[i].x = x;
		timer_setup(&x->peers[i].rto, on_rto, &x->peers[i]);
	}
	timer_setup(&x->pump, on_pump, x);
	timer_setup(&x->tick, on_tick, x);
	timer_setup(&x->linger, on_linger, x);
	timer_setup(&x->timeout, on_timeout, x);
	fw_loop_set_frame_handler(c->loop, on_frame, x);
	x->start_ns = fw_loop_now(c->loop);
	x->last_data_rx_ns = x->start_ns;
	fw_loop_timer_arm(c->loop, &x->tick, x->start_ns + 1000000000u);
	fw_loop_timer_arm(c->loop, &x->timeout, x->start_ns + timeout_ms * 1000000u);
	fw_print("MNIC READY board=%s rawx peers=%u count=%u", c->plat->board, x->n_peers,
		 (unsigned)x->count);
	pump(x);
	rc = fw_loop_run(c->loop);
	report(x, rc == FW_EXIT_OK);
	return rc;
}
