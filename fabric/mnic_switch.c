/* mnic-switch: the test fabric's learning switch, with its limits explicit
 * (docs/ARCHITECTURE.md "Test fabric").
 *
 *   mnic-switch --dir DIR [--queue FRAMES] [--age-s SECONDS] [--stats FILE]
 *               [--max-ports N] [--impair PORTSPEC:SPEC]...
 *
 * Unmodified VDE clients join it at DIR: QEMU's -netdev vde,sock=DIR and
 * libvdeplug's vde_open("DIR") (its default module, libvdeplug_vde, speaks
 * the classic vde_switch protocol).  The facts this file relies on, read in
 * vdeplug4's libvdeplug_vde.c (client) and libvdeplug_netnode.c (its
 * switch):
 *
 *  - DIR is a directory; the switch listens on the SOCK_STREAM unix socket
 *    DIR/ctl.  (A client given "DIR[port]" first tries DIR/port, then
 *    DIR/ctl.)
 *  - The client binds a SOCK_DGRAM unix socket of its own (DIR/.PID-NNNNN,
 *    or under /var/run, /var/tmp, /tmp when DIR is not writable), connects
 *    to DIR/ctl and sends one request, packed, host byte order:
 *        u32 magic 0xfeedface | u32 version 3 | u32 type |
 *        struct sockaddr_un (110 bytes: its data socket) |
 *        description, at most 128 bytes, not NUL-terminated
 *    type 0 is REQ_NEW_CONTROL; a requested port number rides in type >> 8
 *    (REQ_NEW_PORT0 = 1 asks for port 0).  Sent in one send(); the length
 *    is what the stream delivers.
 *  - The switch answers with a struct sockaddr_un (110 bytes): the address
 *    of a datagram socket it bound for this port and connected to the
 *    client's.  The client connects its socket there, then unlinks its own
 *    path, so the switch must connect before it answers.  Both sockets being
 *    connected, Linux delivers only between the two of them: a port is a
 *    socket pair, and its data socket identifies it.
 *  - From then on one datagram is one Ethernet frame without FCS, both ways.
 *    The stream stays open for the port's lifetime; its EOF closes the port.
 *    No other message travels on it.
 *
 * What this switch adds to vdeplug4's (which write()s each frame on a
 * non-blocking socket and loses it silently when the receiver's queue is
 * full):
 *  - a bounded queue per egress port (--queue frames, default 256): a frame
 *    the port's socket refuses (EAGAIN: our socket's send budget, SO_SNDBUF,
 *    is used up by datagrams the client has not read yet; Linux does not
 *    apply net.unix.max_dgram_qlen between two sockets connected to each
 *    other, as a port's are) waits there and is retried when the socket
 *    polls writable; only a full queue drops, counted;
 *  - counters per port, printed one line per port on SIGUSR1 and at exit
 *    (SIGTERM, SIGINT), and written as JSON to --stats FILE (atomically, by
 *    rename) at the same moments;
 *  - per-port impairment and ECN marking for any port (fabric/switch_core.h).
 *
 * Counters of a port (the conservation rules tests check):
 *   ingress: rx = malformed + frames offered to the ingress impairment;
 *            what leaves it (in_frames - in_dropped + in_duplicated -
 *            in_held) = forwarded + flooded + filtered
 *            (filtered: the destination was learned on the ingress port
 *            itself, e.g. the POSIX NIC's announce frame);
 *            flood_copies: egress offers made by this port's floods;
 *   egress:  offered (unicast forwards and flood copies towards this port)
 *            - out_dropped + out_duplicated - out_held
 *            = tx + dropped_queue_full + dropped_send_error + dropped_closed
 *              + queued.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* ppoll, accept4 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "switch_core.h"

/* ---- the VDE request (see the header comment) -------------------------- */
#define VDE_SWITCH_MAGIC 0xfeedfaceu
#define VDE_VERSION 3u
#define VDE_REQ_NEW_CONTROL 0u
#define VDE_REQ_OFF_MAGIC 0u
#define VDE_REQ_OFF_VERSION 4u
#define VDE_REQ_OFF_TYPE 8u
#define VDE_REQ_OFF_SOCK 12u
#define VDE_REQ_HEADER_LEN (VDE_REQ_OFF_SOCK + sizeof(struct sockaddr_un))
#define VDE_MAXDESCR 128u
_Static_assert(sizeof(struct sockaddr_un) == 110, "the request carries Linux's sockaddr_un");
_Static_assert(VDE_REQ_HEADER_LEN == 122, "request header: 3 x u32 + sockaddr_un");

#define DEFAULT_QUEUE 256u
#define DEFAULT_AGE_S 300u          /* IEEE 802.1D-2004 Table 7-5 */
#define DEFAULT_MAX_PORTS 32u
#define RX_BUDGET 64u               /* frames read from one port per round */
#define JOIN_TIMEOUT_MS 5000u       /* a connection that sends no request */
#define RECV_BUF 65536u             /* larger than any datagram we accept */

struct port_record {                /* kept after the port closes */
	int num;
	int closed;
	char mac[18];
	char descr[VDE_MAXDESCR + 1];
	uint64_t rx, rx_bytes, malformed, forwarded, flooded, flood_copies, filtered;
	uint64_t offered, tx, tx_bytes, waited, dropped_queue_full,
		 dropped_send_error, dropped_closed, ecn_marked;
	uint32_t queue_max, queued;
	struct impair_stats in, out;
	unsigned in_held, out_held;
};

enum port_state { PORT_FREE, PORT_JOINING, PORT_LIVE };

struct port {
	enum port_state state;
	int ctl_fd, data_fd;
	uint64_t since_ms;
	size_t rec;                      /* index into records */
	char data_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int mac_known;
	struct sw_queue q;
	struct sw_rule *rule;            /* bound impairment rule or NULL */
	struct sw_shaper shaper;         /* the rule's rate_mbps (0: not shaped) */
	struct impair *in_imp, *out_imp;
	int send_error_logged;
};

struct rule_slot {
	struct sw_rule r;
	int bound_port;                  /* port number, 0 = unbound */
};

static struct {
	const char *dir, *stats_path;
	char ctl_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint32_t queue_depth, max_ports;
	int listen_fd;
	struct port *ports;
	struct port_record *records;
	size_t nrecords, cap_records;
	int next_num;
	struct rule_slot rules[SW_MAX_RULES];
	unsigned nrules;
	struct sw_mac_table macs;
	uint64_t joins, refused_joins, seq;
	uint8_t rxbuf[RECV_BUF];
	uint8_t ecn_scratch[SW_MAX_FRAME];
} sw;

static volatile sig_atomic_t want_dump, want_exit;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		want_dump = 1;
	else
		want_exit = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void)
{
	return now_ns() / 1000000u;
}

static struct port_record *rec_of(const struct port *p)
{
	return &sw.records[p->rec];
}

/* ---- statistics ------------------------------------------------------------ */

static void refresh_record(struct port *p)
{
	struct port_record *r = rec_of(p);

	r->queue_max = p->q.max_count;
	r->queued = p->q.count;
	r->in = p->in_imp->stats;
	r->in_held = p->in_imp->held ? p->in_imp->held_copies : 0;
	r->out = p->out_imp->stats;
	r->out_held = p->out_imp->held ? p->out_imp->held_copies : 0;
}

static void print_stats(FILE *f)
{
	for (size_t i = 0; i < sw.nrecords; i++) {
		const struct port_record *r = &sw.records[i];

		fprintf(f, "mnic-switch: port %d %s%s rx=%" PRIu64 " tx=%" PRIu64 " forwarded=%" PRIu64
			" flooded=%" PRIu64 " flood_copies=%" PRIu64 " filtered=%" PRIu64
			" malformed=%" PRIu64 " offered=%" PRIu64 " waited=%" PRIu64
			" dropped_queue_full=%" PRIu64 " dropped_send_error=%" PRIu64
			" dropped_closed=%" PRIu64 " queue_max=%" PRIu32 " queued=%" PRIu32
			" impaired_drop=%" PRIu64 " impaired_dup=%" PRIu64 " impaired_reorder=%" PRIu64
			" impaired_corrupt=%" PRIu64 " ecn_marked=%" PRIu64 "\n",
			r->num, r->mac[0] ? r->mac : "-", r->closed ? " (closed)" : "", r->rx, r->tx,
			r->forwarded, r->flooded, r->flood_copies, r->filtered, r->malformed, r->offered,
			r->waited, r->dropped_queue_full, r->dropped_send_error, r->dropped_closed,
			r->queue_max, r->queued, r->in.dropped + r->out.dropped,
			r->in.duplicated + r->out.duplicated, r->in.reordered + r->out.reordered,
			r->in.corrupted + r->out.corrupted, r->ecn_marked);
	}
	fflush(f);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_impair(FILE *f, const char *pfx, const struct impair_stats *s, unsigned held)
{
	fprintf(f, ", \"%s_frames\": %" PRIu64 ", \"%s_dropped\": %" PRIu64
		", \"%s_duplicated\": %" PRIu64 ", \"%s_reordered\": %" PRIu64
		", \"%s_corrupted\": %" PRIu64 ", \"%s_held\": %u",
		pfx, s->frames, pfx, s->dropped, pfx, s->duplicated, pfx, s->reordered,
		pfx, s->corrupted, pfx, held);
}

static int write_json(void)
{
	char tmp[PATH_MAX];
	FILE *f;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", sw.stats_path) >= sizeof(tmp))
		return -1;
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "{\"seq\": %" PRIu64 ", \"queue_depth\": %" PRIu32 ", \"joins\": %" PRIu64
		", \"refused_joins\": %" PRIu64 ", \"mac_learned\": %" PRIu64
		", \"mac_moved\": %" PRIu64 ", \"mac_evicted\": %" PRIu64 ", \"ports\": [",
		sw.seq, sw.queue_depth, sw.joins, sw.refused_joins, sw.macs.learned,
		sw.macs.moved, sw.macs.evicted);
	for (size_t i = 0; i < sw.nrecords; i++) {
		const struct port_record *r = &sw.records[i];

		fprintf(f, "%s\n {\"port\": %d, \"closed\": %s, \"mac\": ", i ? "," : "", r->num,
			r->closed ? "true" : "false");
		json_string(f, r->mac);
		fputs(", \"descr\": ", f);
		json_string(f, r->descr);
		fprintf(f, ", \"rx\": %" PRIu64 ", \"rx_bytes\": %" PRIu64 ", \"malformed\": %" PRIu64
			", \"forwarded\": %" PRIu64 ", \"flooded\": %" PRIu64
			", \"flood_copies\": %" PRIu64 ", \"filtered\": %" PRIu64
			", \"offered\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"tx_bytes\": %" PRIu64
			", \"waited\": %" PRIu64 ", \"dropped_queue_full\": %" PRIu64
			", \"dropped_send_error\": %" PRIu64 ", \"dropped_closed\": %" PRIu64
			", \"queue_max\": %" PRIu32 ", \"queued\": %" PRIu32
			", \"ecn_marked\": %" PRIu64 ", \"impaired_drop\": %" PRIu64
			", \"impaired_dup\": %" PRIu64 ", \"impaired_reorder\": %" PRIu64
			", \"impaired_corrupt\": %" PRIu64,
			r->rx, r->rx_bytes, r->malformed, r->forwarded, r->flooded, r->flood_copies,
			r->filtered, r->offered, r->tx, r->tx_bytes, r->waited,
			r->dropped_queue_full, r->dropped_send_error, r->dropped_closed, r->queue_max,
			r->queued, r->ecn_marked, r->in.dropped + r->out.dropped,
			r->in.duplicated + r->out.duplicated, r->in.reordered + r->out.reordered,
			r->in.corrupted + r->out.corrupted);
		json_impair(f, "in", &r->in, r->in_held);
		json_impair(f, "out", &r->out, r->out_held);
		fputc('}', f);
	}
	fputs("\n]}\n", f);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, sw.stats_path);
}

static void dump(void)
{
	for (uint32_t i = 0; i < sw.max_ports; i++)
		if (sw.ports[i].state == PORT_LIVE)
			refresh_record(&sw.ports[i]);
	sw.seq++;
	print_stats(stderr);
	if (sw.stats_path && write_json() < 0)
		fprintf(stderr, "mnic-switch: cannot write the stats to %s: %s\n", sw.stats_path,
			strerror(errno));
}

/* ---- egress ------------------------------------------------------------------ */

static void note_send_error(struct port *p, int e)
{
	rec_of(p)->dropped_send_error++;
	if (!p->send_error_logged) {
		p->send_error_logged = 1;
		fprintf(stderr, "mnic-switch: port %d: send failed: %s (counted in "
			"dropped_send_error, logged once)\n", rec_of(p)->num, strerror(e));
	}
}

static int would_block(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS;
}

/* A frame leaves towards port p (after its egress impairment). */
static void egress_emit(void *ctx, const void *frame, size_t len)
{
	struct port *p = ctx;
	struct port_record *r = rec_of(p);

	if (p->q.count >= p->q.depth) {
		r->dropped_queue_full++;
		return;
	}
	/* Marking looks at the queue the frame joins (RFC 3168 5: the router
	 * marks instead of dropping when its queue builds up); a frame the
	 * full queue drops above is not marked. */
	if (p->rule && p->rule->ecn_queue && p->q.count >= p->rule->ecn_queue) {
		memcpy(sw.ecn_scratch, frame, len);
		if (sw_ecn_mark_ce(sw.ecn_scratch, len)) {
			r->ecn_marked++;
			frame = sw.ecn_scratch;
		}
	}
	uint64_t t = now_ns();

	if (p->q.count == 0 && sw_shaper_wait_ns(&p->shaper, t) == 0) {
		ssize_t n = send(p->data_fd, frame, len, MSG_DONTWAIT);

		if (n == (ssize_t)len) {
			r->tx++;
			r->tx_bytes += len;
			sw_shaper_charge(&p->shaper, t, len);
			return;
		}
		if (n >= 0 || !would_block(errno)) {
			note_send_error(p, n >= 0 ? EMSGSIZE : errno);
			return;
		}
	}
	if (sw_queue_push(&p->q, frame, len) < 0)
		r->dropped_queue_full++;
	else
		r->waited++;
}

static void egress_offer(struct port *p, const void *frame, size_t len)
{
	rec_of(p)->offered++;
	impair_apply(p->out_imp, frame, len, egress_emit, p);
}

static void drain(struct port *p)
{
	struct port_record *r = rec_of(p);
	const struct sw_slot *s;

	while ((s = sw_queue_peek(&p->q)) != NULL) {
		uint64_t t = now_ns();
		ssize_t n;

		/* a shaped port's link is busy: the main loop wakes at free_ns */
		if (sw_shaper_wait_ns(&p->shaper, t))
			return;
		n = send(p->data_fd, s->data, s->len, MSG_DONTWAIT);
		if (n < 0 && would_block(errno))
			return;
		if (n == (ssize_t)s->len) {
			r->tx++;
			r->tx_bytes += s->len;
			sw_shaper_charge(&p->shaper, t, s->len);
		} else {
			note_send_error(p, n >= 0 ? EMSGSIZE : errno);
		}
		sw_queue_pop(&p->q);
	}
}

/* ---- forwarding ---------------------------------------------------------------- */

static struct port *port_by_num(int num)
{
	for (uint32_t i = 0; i < sw.max_ports; i++)
		if (sw.ports[i].state == PORT_LIVE && rec_of(&sw.ports[i])->num == num)
			return &sw.ports[i];
	return NULL;
}

/* A frame arrives from port p (after its ingress impairment). */
static void ingress_emit(void *ctx, const void *frame, size_t len)
{
	struct port *p = ctx;
	struct port_record *r = rec_of(p);
	const uint8_t *f = frame;
	uint64_t now = now_ms();
	int dst;

	sw_mac_learn(&sw.macs, f + SW_ALEN, r->num, now);
	dst = sw_mac_lookup(&sw.macs, f, now);
	if (dst == r->num) {
		r->filtered++;
	} else if (dst > 0 && port_by_num(dst)) {
		r->forwarded++;
		egress_offer(port_by_num(dst), frame, len);
	} else {
		r->flooded++;
		for (uint32_t i = 0; i < sw.max_ports; i++) {
			struct port *q = &sw.ports[i];

			if (q->state != PORT_LIVE || q == p)
				continue;
			r->flood_copies++;
			egress_offer(q, frame, len);
		}
	}
}

/* Every port has both impairment stages from its join, inactive (all
 * rates 0) until a rule binds, so in_frames/out_frames count every frame and
 * the conservation rules hold whatever was bound when. */
static void impair_setup(struct port *p, const struct impair_cfg *c)
{
	struct impair_cfg out_cfg = *c;
	struct impair_stats in = p->in_imp->stats, out = p->out_imp->stats;

	out_cfg.seed = c->seed + 1;
	impair_flush(p->in_imp, ingress_emit, p);
	impair_flush(p->out_imp, egress_emit, p);
	impair_init(p->in_imp, c);
	impair_init(p->out_imp, &out_cfg);
	p->in_imp->stats = in;
	p->out_imp->stats = out;
}

static void bind_rule(struct port *p, struct rule_slot *rs)
{
	impair_setup(p, &rs->r.impair);
	p->rule = &rs->r;
	p->shaper = (struct sw_shaper){ .rate_mbps = rs->r.rate_mbps };
	rs->bound_port = rec_of(p)->num;
	fprintf(stderr, "mnic-switch: port %d (%s): impairment bound%s\n", rec_of(p)->num,
		rec_of(p)->mac[0] ? rec_of(p)->mac : "by number",
		rs->r.rate_mbps ? " (egress shaped)" : "");
}

static void ingress(struct port *p, const uint8_t *f, size_t len)
{
	struct port_record *r = rec_of(p);

	r->rx++;
	r->rx_bytes += len;
	if (len < SW_ETH_HEADER_LEN || len > SW_MAX_FRAME) {
		r->malformed++;
		return;
	}
	if (!p->mac_known && !sw_mac_is_group(f + SW_ALEN)) {
		const uint8_t *m = f + SW_ALEN;

		p->mac_known = 1;
		snprintf(r->mac, sizeof(r->mac), "%02x:%02x:%02x:%02x:%02x:%02x",
			 m[0], m[1], m[2], m[3], m[4], m[5]);
	}
	if (!p->rule)
		for (unsigned i = 0; i < sw.nrules; i++) {
			struct rule_slot *rs = &sw.rules[i];

			if (rs->r.by_mac && !rs->bound_port && !memcmp(rs->r.mac, f + SW_ALEN, SW_ALEN)) {
				bind_rule(p, rs);
				break;
			}
		}
	impair_apply(p->in_imp, f, len, ingress_emit, p);
}

/* ---- ports ------------------------------------------------------------------------ */

static struct port_record *new_record(void)
{
	if (sw.nrecords == sw.cap_records) {
		size_t cap = sw.cap_records ? 2 * sw.cap_records : 16;
		struct port_record *n = realloc(sw.records, cap * sizeof(*n));

		if (!n)
			return NULL;
		sw.records = n;
		sw.cap_records = cap;
	}
	memset(&sw.records[sw.nrecords], 0, sizeof(sw.records[0]));
	return &sw.records[sw.nrecords++];
}

static void close_port(struct port *p)
{
	if (p->state == PORT_LIVE) {
		struct port_record *r = rec_of(p);

		refresh_record(p);
		r->dropped_closed += p->q.count;
		r->queued = 0;
		r->closed = 1;
		sw_mac_forget_port(&sw.macs, r->num);
		for (unsigned i = 0; i < sw.nrules; i++)
			if (sw.rules[i].bound_port == r->num)
				sw.rules[i].bound_port = 0;
		free(p->q.slots);
		free(p->in_imp);
		free(p->out_imp);
		close(p->data_fd);
		unlink(p->data_path);
		fprintf(stderr, "mnic-switch: port %d closed\n", r->num);
	}
	close(p->ctl_fd);
	memset(p, 0, sizeof(*p));
	p->state = PORT_FREE;
	p->ctl_fd = p->data_fd = -1;
}

static void refuse(struct port *p, const char *why)
{
	sw.refused_joins++;
	fprintf(stderr, "mnic-switch: join refused: %s (counted in refused_joins)\n", why);
	close_port(p);
}

static uint32_t get_u32(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, sizeof(v));   /* host byte order: a local socket */
	return v;
}

/* The request of a joining port (see the header comment). */
static void handle_request(struct port *p)
{
	uint8_t req[VDE_REQ_HEADER_LEN + VDE_MAXDESCR + 1];
	struct sockaddr_un client, mine = { .sun_family = AF_UNIX };
	ssize_t n = recv(p->ctl_fd, req, sizeof(req), MSG_DONTWAIT);
	struct port_record *r;
	size_t dlen;
	uint32_t type;

	if (n < 0 && would_block(errno))
		return;
	if (n < (ssize_t)VDE_REQ_HEADER_LEN)
		return refuse(p, "short or no request");
	if (get_u32(req + VDE_REQ_OFF_MAGIC) != VDE_SWITCH_MAGIC ||
	    get_u32(req + VDE_REQ_OFF_VERSION) != VDE_VERSION)
		return refuse(p, "not a VDE version 3 request (magic 0xfeedface)");
	type = get_u32(req + VDE_REQ_OFF_TYPE);
	if (type != VDE_REQ_NEW_CONTROL)
		return refuse(p, "a fixed port number was requested; mnic-switch numbers ports "
			      "itself (drop the port option)");
	memcpy(&client, req + VDE_REQ_OFF_SOCK, sizeof(client));
	if (client.sun_family != AF_UNIX ||
	    !memchr(client.sun_path, '\0', sizeof(client.sun_path)) || client.sun_path[0] == '\0')
		return refuse(p, "the request's data socket is not a unix socket path");

	r = new_record();
	if (!r)
		return refuse(p, "out of memory");
	p->rec = (size_t)(r - sw.records);
	r->num = ++sw.next_num;
	dlen = (size_t)n - VDE_REQ_HEADER_LEN;
	if (dlen > VDE_MAXDESCR)
		dlen = VDE_MAXDESCR;
	memcpy(r->descr, req + VDE_REQ_HEADER_LEN, dlen);
	r->descr[dlen] = '\0';

	snprintf(p->data_path, sizeof(p->data_path), "%s/port-%d", sw.dir, r->num);
	memcpy(mine.sun_path, p->data_path, sizeof(p->data_path));
	p->q.slots = malloc(sw.queue_depth * sizeof(struct sw_slot));
	p->in_imp = calloc(1, sizeof(*p->in_imp));
	p->out_imp = calloc(1, sizeof(*p->out_imp));
	p->data_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	unlink(p->data_path);
	if (!p->q.slots || !p->in_imp || !p->out_imp || p->data_fd < 0 ||
	    bind(p->data_fd, (struct sockaddr *)&mine, sizeof(mine)) < 0 ||
	    connect(p->data_fd, (struct sockaddr *)&client, sizeof(client)) < 0 ||
	    write(p->ctl_fd, &mine, sizeof(mine)) != (ssize_t)sizeof(mine)) {
		int e = errno;

		free(p->q.slots);
		free(p->in_imp);
		free(p->out_imp);
		if (p->data_fd >= 0)
			close(p->data_fd);
		unlink(p->data_path);
		r->closed = 1;
		p->q.slots = NULL;
		sw.refused_joins++;
		fprintf(stderr, "mnic-switch: port %d: cannot set up its data socket %s: %s "
			"(counted in refused_joins)\n", r->num, p->data_path, strerror(e));
		close(p->ctl_fd);
		memset(p, 0, sizeof(*p));
		p->ctl_fd = p->data_fd = -1;
		return;
	}
	sw_queue_init(&p->q, p->q.slots, sw.queue_depth);
	impair_init(p->in_imp, &(struct impair_cfg){ 0 });
	impair_init(p->out_imp, &(struct impair_cfg){ 0 });
	p->state = PORT_LIVE;
	sw.joins++;
	fprintf(stderr, "mnic-switch: port %d joined (%s)\n", r->num, r->descr);
	for (unsigned i = 0; i < sw.nrules; i++)
		if (!sw.rules[i].r.by_mac && sw.rules[i].r.port == r->num && !sw.rules[i].bound_port)
			bind_rule(p, &sw.rules[i]);
}

static void accept_ports(void)
{
	for (;;) {
		int fd = accept4(sw.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		uint32_t i;

		if (fd < 0)
			return;
		for (i = 0; i < sw.max_ports && sw.ports[i].state != PORT_FREE; i++)
			;
		if (i == sw.max_ports) {
			sw.refused_joins++;
			fprintf(stderr, "mnic-switch: join refused: all %" PRIu32 " ports in use "
				"(raise --max-ports; counted in refused_joins)\n", sw.max_ports);
			close(fd);
			continue;
		}
		sw.ports[i].state = PORT_JOINING;
		sw.ports[i].ctl_fd = fd;
		sw.ports[i].data_fd = -1;
		sw.ports[i].since_ms = now_ms();
	}
}

static void read_port(struct port *p)
{
	for (unsigned budget = RX_BUDGET; budget && p->state == PORT_LIVE; budget--) {
		ssize_t n = recv(p->data_fd, sw.rxbuf, sizeof(sw.rxbuf), MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0)
			return;
		ingress(p, sw.rxbuf, (size_t)n);
	}
}

/* The control stream carries nothing after the request: EOF (or an error)
 * closes the port; stray bytes are read and ignored. */
static void read_ctl(struct port *p)
{
	char junk[256];
	ssize_t n = recv(p->ctl_fd, junk, sizeof(junk), MSG_DONTWAIT);

	if (n == 0 || (n < 0 && !would_block(errno)))
		close_port(p);
}

/* ---- main ------------------------------------------------------------------------- */

static void usage_exit(const char *msg)
{
	fprintf(stderr, "mnic-switch: %s\n"
		"usage: mnic-switch --dir DIR [--queue FRAMES] [--age-s SECONDS] [--stats FILE]\n"
		"                   [--max-ports N] [--impair PORTSPEC:SPEC]...\n"
		"  PORTSPEC: a MAC (52:54:00:00:00:01) or a port number (1, 2, ... in join order)\n"
		"  SPEC: drop=R,dup=R,reorder=R,corrupt=R,seed=N,ecn_queue=K,rate_mbps=M\n"
		"        (R a fraction or N%%; M the port's egress line rate in Mbit/s)\n",
		msg);
	exit(2);
}

static unsigned long parse_num(const char *opt, const char *s, unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max || s[0] == '-') {
		fprintf(stderr, "mnic-switch: %s %s: give a number from %lu to %lu\n", opt, s, min, max);
		exit(2);
	}
	return v;
}

static void parse_args(int argc, char **argv, uint64_t *age_ms)
{
	sw.queue_depth = DEFAULT_QUEUE;
	sw.max_ports = DEFAULT_MAX_PORTS;
	*age_ms = DEFAULT_AGE_S * 1000u;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char err[256];

		if (!strcmp(o, "-h") || !strcmp(o, "--help"))
			usage_exit("a learning switch VDE clients join at DIR");
		if (!v) {
			fprintf(stderr, "mnic-switch: %s needs a value\n", o);
			exit(2);
		}
		i++;
		if (!strcmp(o, "--dir"))
			sw.dir = v;
		else if (!strcmp(o, "--stats"))
			sw.stats_path = v;
		else if (!strcmp(o, "--queue"))
			sw.queue_depth = (uint32_t)parse_num(o, v, 1, 65536);
		else if (!strcmp(o, "--age-s"))
			*age_ms = parse_num(o, v, 1, 86400) * 1000u;
		else if (!strcmp(o, "--max-ports"))
			sw.max_ports = (uint32_t)parse_num(o, v, 2, 1024);
		else if (!strcmp(o, "--impair")) {
			if (sw.nrules == SW_MAX_RULES) {
				fprintf(stderr, "mnic-switch: at most %u --impair rules\n", SW_MAX_RULES);
				exit(2);
			}
			if (sw_rule_parse(&sw.rules[sw.nrules].r, v, err, sizeof(err)) < 0) {
				fprintf(stderr, "mnic-switch: %s\n", err);
				exit(2);
			}
			sw.nrules++;
		} else {
			fprintf(stderr, "mnic-switch: unknown option '%s'\n", o);
			usage_exit("see the usage");
		}
	}
	if (!sw.dir)
		usage_exit("--dir DIR is required");
	/* DIR/port-N must fit sun_path with room for N. */
	if (strlen(sw.dir) + sizeof("/port-1234567890") > sizeof(sw.ctl_path)) {
		fprintf(stderr, "mnic-switch: --dir %s is too long for a unix socket path "
			"(%zu bytes at most)\n", sw.dir, sizeof(sw.ctl_path) - sizeof("/port-1234567890"));
		exit(2);
	}
}

static int open_listener(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	if (mkdir(sw.dir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "mnic-switch: cannot create %s: %s\n", sw.dir, strerror(errno));
		return -1;
	}
	snprintf(sw.ctl_path, sizeof(sw.ctl_path), "%s/ctl", sw.dir);
	memcpy(sun.sun_path, sw.ctl_path, sizeof(sw.ctl_path));
	sw.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	unlink(sw.ctl_path);   /* a stale socket of a switch that died */
	if (sw.listen_fd < 0 || bind(sw.listen_fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(sw.listen_fd, 16) < 0) {
		fprintf(stderr, "mnic-switch: cannot listen on %s: %s\n", sw.ctl_path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, orig;
	struct pollfd *pfd;
	int *pidx;
	uint64_t age_ms;

	parse_args(argc, argv, &age_ms);
	sw_mac_init(&sw.macs, age_ms);
	sw.ports = calloc(sw.max_ports, sizeof(*sw.ports));
	pfd = calloc(1 + 2 * (size_t)sw.max_ports, sizeof(*pfd));
	pidx = calloc(1 + 2 * (size_t)sw.max_ports, sizeof(*pidx));
	if (!sw.ports || !pfd || !pidx) {
		fprintf(stderr, "mnic-switch: out of memory\n");
		return 1;
	}
	for (uint32_t i = 0; i < sw.max_ports; i++)
		sw.ports[i].ctl_fd = sw.ports[i].data_fd = -1;
	/* Signals are blocked except inside ppoll(), so a SIGUSR1 or SIGTERM
	 * is seen right away and never lands between the flag test and the
	 * wait. */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);   /* a client gone before our answer: EPIPE */
	/* A shaped port's wake-up is a ppoll timeout of a few hundred us: the
	 * default 50 us timer slack would be a large part of it. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	if (open_listener() < 0)
		return 1;
	fprintf(stderr, "mnic-switch: listening at %s (queue %" PRIu32 " frames per port, "
		"%u impairment rule(s))\n", sw.ctl_path, sw.queue_depth, sw.nrules);

	while (!want_exit) {
		struct timespec tick = { .tv_sec = 1 };
		uint64_t now, wake = 1000000000u, t_ns = now_ns();
		nfds_t n = 0;

		pfd[n] = (struct pollfd){ .fd = sw.listen_fd, .events = POLLIN };
		pidx[n++] = -1;
		for (uint32_t i = 0; i < sw.max_ports; i++) {
			struct port *p = &sw.ports[i];

			if (p->state == PORT_FREE)
				continue;
			pfd[n] = (struct pollfd){ .fd = p->ctl_fd, .events = POLLIN };
			pidx[n++] = (int)i;
			if (p->state == PORT_LIVE) {
				/* a queue whose link is busy (shaper) waits for the
				 * timeout, not for POLLOUT, which would spin */
				uint64_t w = p->q.count ? sw_shaper_wait_ns(&p->shaper, t_ns) : 0;

				if (w && w < wake)
					wake = w;
				pfd[n] = (struct pollfd){ .fd = p->data_fd,
							  .events = POLLIN | (p->q.count && !w ? POLLOUT : 0) };
				pidx[n++] = (int)i;
			}
		}
		tick = (struct timespec){ .tv_sec = (time_t)(wake / 1000000000u),
					  .tv_nsec = (long)(wake % 1000000000u) };
		if (ppoll(pfd, n, &tick, &orig) < 0 && errno != EINTR) {
			fprintf(stderr, "mnic-switch: poll: %s\n", strerror(errno));
			break;
		}
		if (want_dump) {
			want_dump = 0;
			dump();
		}
		if (pfd[0].revents & POLLIN)
			accept_ports();
		for (nfds_t k = 1; k < n; k++) {
			struct port *p = &sw.ports[pidx[k]];

			if (!pfd[k].revents || p->state == PORT_FREE)
				continue;
			if (pfd[k].fd == p->ctl_fd) {
				if (p->state == PORT_JOINING)
					handle_request(p);
				else
					read_ctl(p);
				continue;
			}
			if (pfd[k].fd != p->data_fd)
				continue;   /* the port closed and its slot was reused this round */
			if (pfd[k].revents & POLLOUT)
				drain(p);
			if (pfd[k].revents & POLLIN)
				read_port(p);
		}
		/* The burst is over: frames held for reordering go out now (as in
		 * the POSIX NIC's impairment: frames swap within bursts). */
		for (uint32_t i = 0; i < sw.max_ports; i++) {
			struct port *p = &sw.ports[i];

			if (p->state == PORT_LIVE)
				impair_flush(p->in_imp, ingress_emit, p);
		}
		for (uint32_t i = 0; i < sw.max_ports; i++) {
			struct port *p = &sw.ports[i];

			if (p->state == PORT_LIVE)
				impair_flush(p->out_imp, egress_emit, p);
		}
		/* shaped queues whose link came free (the timeout above) */
		for (uint32_t i = 0; i < sw.max_ports; i++) {
			struct port *p = &sw.ports[i];

			if (p->state == PORT_LIVE && p->q.count && p->shaper.rate_mbps)
				drain(p);
		}
		now = now_ms();
		for (uint32_t i = 0; i < sw.max_ports; i++)
			if (sw.ports[i].state == PORT_JOINING &&
			    now - sw.ports[i].since_ms >= JOIN_TIMEOUT_MS)
				refuse(&sw.ports[i], "no request within 5 s");
	}
	dump();
	for (uint32_t i = 0; i < sw.max_ports; i++)
		if (sw.ports[i].state != PORT_FREE)
			close_port(&sw.ports[i]);
	close(sw.listen_fd);
	unlink(sw.ctl_path);
	rmdir(sw.dir);
	free(sw.records);
	free(sw.ports);
	free(pfd);
	free(pidx);
	return 0;
}
