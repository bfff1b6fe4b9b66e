/* mnic-pingpong: ibv_rc_pingpong (rdma-core libibverbs/examples/rc_pingpong.c)
 * on libmnic.  Same message pattern (N iterations of one SEND of S bytes
 * each way, strictly alternating), same out-of-band exchange over TCP
 * ("%04x:%06x:%06x:%s" LID:QPN:PSN:GID, the GID as 32 hex digits, here
 * always the IPv4-mapped ::ffff:a.b.c.d of the NIC; the client sends
 * first, the server answers after connecting its QP, the client ends with
 * "done"), same result lines, so it can face the real ibv_rc_pingpong.
 *
 *   server:  mnic-pingpong -d BAR_A [options]
 *   client:  mnic-pingpong -d BAR_B [options] 127.0.0.1
 *
 * Data: -c checks what ibv_rc_pingpong -c checks (the first byte of every
 * page is 0); --verify checks every byte of every message against a
 * pattern of (sender, iteration, offset) -- both ends must be mnic-pingpong.
 * The peer's MAC follows the mnic convention (IP 10.a.b.c <-> MAC
 * 52:54:00:a:b:c) unless --dmac gives it.
 * Memory: the message buffer is mnic_alloc'd (default), or with --mr-mem
 * heap|stack|file=PATH a buffer libmnic did not allocate, registered as it
 * is (/dev/mnicN on a NIC with host memory; docs/libmnic.md "Host memory").
 * Events: -e waits for completions as ibv_rc_pingpong -e does (a
 * completion channel: arm the CQ, sleep in mnic_get_cq_event, poll, re-arm)
 * and prints what the wait did ("events: ..."); without it the CQ is
 * busy-polled.  -L prints the median half round trip ("latency: ...").
 * Exit: 0 ok, 1 failure (completion error, data mismatch, timeout),
 * 2 usage, 3 device or socket error. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "mnic/libmnic.h"

enum { RECV_WRID = 1, SEND_WRID = 2 };
#define PAGE 4096u
/* --mr-mem stack: both halves of the buffer in an array on main's stack */
#define STACK_BUF_LEN (256u << 10)

/* Where the message buffer lives (--mr-mem) */
enum mr_mem { MR_MEM_ALLOC, MR_MEM_HEAP, MR_MEM_STACK, MR_MEM_FILE };
static const char *const mr_mem_names[] = {
	[MR_MEM_ALLOC] = "mnic_alloc", [MR_MEM_HEAP] = "heap", [MR_MEM_STACK] = "stack",
	[MR_MEM_FILE] = "file",
};

struct dest {
	uint32_t lid, qpn, psn;
	uint8_t gid[16];
};

struct ctx {
	struct mnic_dev *dev;
	struct mnic_pd *pd;
	struct mnic_mr *mr;
	struct mnic_cq *cq;
	struct mnic_comp_channel *ch;   /* -e */
	struct mnic_qp *qp;
	struct mnic_buf buf;       /* [0, size) receive, [size, 2 size) send */
	int file_fd;               /* --mr-mem file: the mapped file */
	uint32_t size;
	uint32_t rx_depth;
	int pending;
};

static struct {
	const char *dev;
	const char *server;
	int port;
	uint32_t size, iters, rx_depth, mtu;
	int chk, verify, timeout_s, have_dmac, ack_timeout, events, latency;
	uint8_t dmac[6];
	enum mr_mem mr_mem;
	const char *mr_file;
} cfg = {.port = 18515, .size = 4096, .iters = 1000, .rx_depth = 500, .mtu = 1024,
	 .timeout_s = 60};

static uint8_t pattern(int side, uint32_t iter, uint32_t off)
{
	if (off % PAGE == 0)
		return 0;   /* ibv_rc_pingpong -c compatible */
	return (uint8_t)(off * 31u + iter * 7u + (uint32_t)side * 101u + (off >> 8));
}

static int mtu_enum(uint32_t mtu)
{
	static const uint32_t t[] = {256, 512, 1024, 2048, 4096};

	for (int i = 0; i < 5; i++)
		if (t[i] == mtu)
			return i + 1;
	return 0;
}

static void gid_to_wire(const uint8_t gid[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", gid[i]);
}

static int wire_to_gid(const char *s, uint8_t gid[16])
{
	for (int i = 0; i < 16; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		gid[i] = (uint8_t)v;
	}
	return 0;
}

static void print_dest(const char *who, const struct dest *d)
{
	/* rc_pingpong aligns "local address:  LID" and "remote address: LID" */
	printf("  %s address:%s LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID ::ffff:%u.%u.%u.%u\n", who,
	       strcmp(who, "local") ? "" : " ", d->lid, d->qpn, d->psn, d->gid[12], d->gid[13], d->gid[14], d->gid[15]);
}

/* "0000:000000:000000:" + 32 hex digits + NUL, exactly as rc_pingpong */
#define MSG_LEN (sizeof("0000:000000:000000:00000000000000000000000000000000"))

static int fmt_dest(const struct dest *d, char msg[MSG_LEN])
{
	char g[33];

	gid_to_wire(d->gid, g);
	memset(msg, 0, MSG_LEN);
	return snprintf(msg, MSG_LEN, "%04x:%06x:%06x:%s", d->lid, d->qpn, d->psn, g) ==
			       (int)MSG_LEN - 1 ? 0 : -1;
}

static int parse_dest(const char *msg, struct dest *d)
{
	char g[33];

	if (memchr(msg, '\0', MSG_LEN) == NULL ||
	    sscanf(msg, "%x:%x:%x:%32s", &d->lid, &d->qpn, &d->psn, g) != 4 || strlen(g) != 32 ||
	    wire_to_gid(g, d->gid) || d->qpn > 0xffffff || d->psn > 0xffffff)
		return -1;
	return 0;
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static int connect_qp(struct ctx *c, const struct dest *my, const struct dest *rem)
{
	struct mnic_rc_connect rc;
	int err;

	/* Without a host netdev there is no neighbour table: the lab's MACs
	 * follow the IPv4 address (52:54:00 and its last three bytes). */
	if (!mnic_gid_is_v4(rem->gid)) {
		fprintf(stderr, "mnic-pingpong: the peer's GID is not IPv4-mapped (this lab tool "
				"derives MACs from IPv4 addresses; use ibv_rc_pingpong for IPv6)\n");
		return -1;
	}
	memset(&rc, 0, sizeof(rc));
	rc.dest_qp_num = rem->qpn;
	memcpy(rc.dgid, rem->gid, sizeof(rc.dgid));
	if (cfg.have_dmac) {
		memcpy(rc.dmac, cfg.dmac, 6);
	} else {
		rc.dmac[0] = 0x52;
		rc.dmac[1] = 0x54;
		rc.dmac[2] = 0x00;
		rc.dmac[3] = rem->gid[13];
		rc.dmac[4] = rem->gid[14];
		rc.dmac[5] = rem->gid[15];
	}
	rc.rq_psn = rem->psn;
	rc.sq_psn = my->psn;
	rc.path_mtu = (uint32_t)mtu_enum(cfg.mtu);
	rc.access = MNIC_ACCESS_LOCAL_WRITE;
	rc.timeout = (uint8_t)cfg.ack_timeout;
	err = mnic_connect_rc(c->qp, &rc);
	if (err < 0) {
		fprintf(stderr, "mnic-pingpong: failed to modify QP to RTS: %s\n",
			mnic_strerror_last(c->dev));
		return -1;
	}
	return 0;
}

static int exch_client(struct ctx *c, const struct dest *my, struct dest *rem)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res, *t;
	char service[16], msg[MSG_LEN];
	int fd = -1, rc = -1;

	snprintf(service, sizeof(service), "%d", cfg.port);
	if (getaddrinfo(cfg.server, service, &hints, &res) != 0) {
		fprintf(stderr, "mnic-pingpong: cannot resolve %s\n", cfg.server);
		return -1;
	}
	/* the server may still be setting up: retry for a few seconds */
	for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
		for (t = res; t; t = t->ai_next) {
			fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
			if (fd >= 0 && connect(fd, t->ai_addr, t->ai_addrlen) == 0)
				break;
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
		if (fd < 0)
			usleep(100000);
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "mnic-pingpong: couldn't connect to %s:%d\n", cfg.server, cfg.port);
		return -1;
	}
	if (fmt_dest(my, msg) || write_full(fd, msg, MSG_LEN)) {
		fprintf(stderr, "mnic-pingpong: couldn't send local address\n");
		goto out;
	}
	if (read_full(fd, msg, MSG_LEN) || write_full(fd, "done", sizeof("done"))) {
		fprintf(stderr, "mnic-pingpong: couldn't read/write remote address\n");
		goto out;
	}
	if (parse_dest(msg, rem)) {
		fprintf(stderr, "mnic-pingpong: malformed remote address\n");
		goto out;
	}
	rc = connect_qp(c, my, rem);
out:
	close(fd);
	return rc;
}

static int exch_server(struct ctx *c, const struct dest *my, struct dest *rem)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	char msg[MSG_LEN], done[sizeof("done")];
	int lfd, fd, one = 1, rc = -1;

	sa.sin_port = htons((uint16_t)cfg.port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);   /* loopback only (network hygiene) */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		return -1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0) {
		fprintf(stderr, "mnic-pingpong: couldn't listen to port %d: %s\n", cfg.port,
			strerror(errno));
		close(lfd);
		return -1;
	}
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd < 0) {
		fprintf(stderr, "mnic-pingpong: accept() failed\n");
		return -1;
	}
	if (read_full(fd, msg, MSG_LEN) || parse_dest(msg, rem)) {
		fprintf(stderr, "mnic-pingpong: couldn't read remote address\n");
		goto out;
	}
	if (connect_qp(c, my, rem))
		goto out;
	if (fmt_dest(my, msg) || write_full(fd, msg, MSG_LEN) ||
	    read_full(fd, done, sizeof(done))) {
		fprintf(stderr, "mnic-pingpong: couldn't send local address\n");
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

static int post_recv(struct ctx *c, uint32_t n)
{
	struct mnic_sge sge = {.addr = c->buf.addr, .length = c->size, .lkey = c->mr->lkey};
	struct mnic_recv_wr wr = {.wr_id = RECV_WRID, .sg_list = &sge, .num_sge = 1};
	uint32_t i;

	for (i = 0; i < n; i++)
		if (mnic_post_recv(c->qp, &wr, NULL))
			break;
	return (int)i;
}

static int post_send(struct ctx *c, int side, uint32_t iter)
{
	struct mnic_sge sge = {.addr = c->buf.addr + c->size, .length = c->size,
			       .lkey = c->mr->lkey};
	struct mnic_send_wr wr = {.wr_id = SEND_WRID, .sg_list = &sge, .num_sge = 1,
				  .opcode = MNIC_WR_SEND, .send_flags = MNIC_SEND_SIGNALED};
	uint8_t *p = (uint8_t *)c->buf.ptr + c->size;

	if (cfg.verify)
		for (uint32_t i = 0; i < c->size; i++)
			p[i] = pattern(side, iter, i);
	return mnic_post_send(c->qp, &wr, NULL);
}

static int check_recv(struct ctx *c, int peer_side, uint32_t iter, uint32_t byte_len)
{
	const uint8_t *p = c->buf.ptr;

	if (byte_len != c->size) {
		fprintf(stderr, "mnic-pingpong: receive %u: %u bytes, expected %u\n", iter, byte_len,
			c->size);
		return -1;
	}
	for (uint32_t i = 0; (cfg.chk || cfg.verify) && i < c->size;
	     i += cfg.verify ? 1 : PAGE) {
		uint8_t want = cfg.verify ? pattern(peer_side, iter, i) : 0;

		if (p[i] != want) {
			fprintf(stderr, "mnic-pingpong: receive %u: byte %u is 0x%02x, expected "
					"0x%02x\n", iter, i, p[i], want);
			return -1;
		}
	}
	return 0;
}

static void usage(const char *argv0)
{
	printf("Usage:\n"
	       "  %s -d DEV            start a server and wait for connection\n"
	       "  %s -d DEV <host>     connect to server at <host>\n\n"
	       "Options:\n"
	       "  -d, --ib-dev=<dev>     a BAR file or /dev/mnicN (required)\n"
	       "  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n"
	       "  -s, --size=<size>      size of message to exchange (default 4096)\n"
	       "  -m, --mtu=<size>       path MTU (default 1024)\n"
	       "  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n"
	       "  -n, --iters=<iters>    number of exchanges (default 1000)\n"
	       "  -c, --chk              validate received buffer (as ibv_rc_pingpong)\n"
	       "  -V, --verify           validate every byte (both ends mnic-pingpong)\n"
	       "  -M, --dmac=<mac>       the peer's MAC (default: from its IPv4 by convention)\n"
	       "  -T, --timeout=<s>      give up after <s> seconds without progress (default 60)\n"
	       "  -A, --ack-timeout=<n>  local ACK timeout 4.096 us x 2^n (default 14; seven\n"
	       "                         retries, so a peer silent for ~8 timeouts is an error)\n"
	       "      --mr-mem=<where>   the message buffer: heap (malloc), stack (main's, at\n"
	       "                         most %u-byte messages) or file=PATH (PATH created or\n"
	       "                         truncated to twice the size, mmap'ed MAP_SHARED);\n"
	       "                         default mnic_alloc.  Any buffer registers only over\n"
	       "                         /dev/mnicN on a NIC with host memory\n"
	       "  -e, --events           sleep for completion events (as ibv_rc_pingpong -e)\n"
	       "  -L, --latency          print the median half round trip\n"
	       "  -i, -g, -l, -o, -P, -t  accepted for compatibility, ignored\n",
	       argv0, argv0, STACK_BUF_LEN / 2);
}

static int parse_mr_mem(const char *arg)
{
	if (!strcmp(arg, "heap")) {
		cfg.mr_mem = MR_MEM_HEAP;
	} else if (!strcmp(arg, "stack")) {
		cfg.mr_mem = MR_MEM_STACK;
	} else if (!strncmp(arg, "file=", 5) && arg[5]) {
		cfg.mr_mem = MR_MEM_FILE;
		cfg.mr_file = arg + 5;
	} else {
		fprintf(stderr, "mnic-pingpong: --mr-mem is heap, stack or file=PATH, not '%s'\n",
			arg);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{"port", 1, NULL, 'p'},  {"ib-dev", 1, NULL, 'd'},  {"ib-port", 1, NULL, 'i'},
		{"size", 1, NULL, 's'},  {"mtu", 1, NULL, 'm'},     {"rx-depth", 1, NULL, 'r'},
		{"iters", 1, NULL, 'n'}, {"sl", 1, NULL, 'l'},      {"events", 0, NULL, 'e'},
		{"latency", 0, NULL, 'L'},
		{"gid-idx", 1, NULL, 'g'}, {"odp", 0, NULL, 'o'},   {"chk", 0, NULL, 'c'},
		{"verify", 0, NULL, 'V'}, {"dmac", 1, NULL, 'M'},   {"timeout", 1, NULL, 'T'},
		{"ack-timeout", 1, NULL, 'A'}, {"mr-mem", 1, NULL, 'R'},
		{"help", 0, NULL, 'h'},  {NULL, 0, NULL, 0},
	};
	char *end;
	int ch;

	while ((ch = getopt_long(argc, argv, "p:d:i:s:m:r:n:l:eLg:ocVM:T:A:h", lo, NULL)) != -1) {
		unsigned long v = 0;

		if (optarg && strchr("psmrnTA", ch)) {
			errno = 0;
			v = strtoul(optarg, &end, 0);
			if (errno || *end || *optarg == '-' || v == 0 || v > 0x7fffffffUL) {
				fprintf(stderr, "mnic-pingpong: bad value for -%c: %s\n", ch, optarg);
				return -1;
			}
		}
		switch (ch) {
		case 'p': cfg.port = (int)v; break;
		case 'd': cfg.dev = optarg; break;
		case 's': cfg.size = (uint32_t)v; break;
		case 'm': cfg.mtu = (uint32_t)v; break;
		case 'r': cfg.rx_depth = (uint32_t)v; break;
		case 'n': cfg.iters = (uint32_t)v; break;
		case 'T': cfg.timeout_s = (int)v; break;
		case 'A':
			if (v > 31) {
				fprintf(stderr, "mnic-pingpong: --ack-timeout is an exponent, 1..31\n");
				return -1;
			}
			cfg.ack_timeout = (int)v;
			break;
		case 'c': cfg.chk = 1; break;
		case 'V': cfg.verify = 1; break;
		case 'R':
			if (parse_mr_mem(optarg))
				return -1;
			break;
		case 'M': {
			unsigned m[6];

			if (sscanf(optarg, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
				   &m[5]) != 6) {
				fprintf(stderr, "mnic-pingpong: bad MAC %s\n", optarg);
				return -1;
			}
			for (int i = 0; i < 6; i++)
				cfg.dmac[i] = (uint8_t)m[i];
			cfg.have_dmac = 1;
			break;
		}
		case 'e': cfg.events = 1; break;
		case 'L': cfg.latency = 1; break;
		case 'i': case 'l': case 'g': case 'o':
			break;
		case 'h': usage(argv[0]); exit(0);
		default: return -1;
		}
	}
	if (optind == argc - 1)
		cfg.server = argv[optind];
	else if (optind < argc)
		return -1;
	if (!cfg.dev) {
		fprintf(stderr, "mnic-pingpong: -d DEV is required (a BAR file or /dev/mnicN)\n");
		return -1;
	}
	if (!mtu_enum(cfg.mtu)) {
		fprintf(stderr, "mnic-pingpong: MTU must be 256, 512, 1024, 2048 or 4096\n");
		return -1;
	}
	if (cfg.size > 16u << 20 || cfg.rx_depth > 4096) {
		fprintf(stderr, "mnic-pingpong: size at most 16 MiB, rx-depth at most 4096\n");
		return -1;
	}
	if (cfg.mr_mem == MR_MEM_STACK && cfg.size > STACK_BUF_LEN / 2) {
		fprintf(stderr, "mnic-pingpong: --mr-mem stack holds messages of at most %u bytes "
				"(two on main's stack), not %u: use a smaller -s or --mr-mem heap\n",
			STACK_BUF_LEN / 2, cfg.size);
		return -1;
	}
	return 0;
}

/* The message buffer where --mr-mem says: 0, a libmnic error (negative),
 * or 1 with the reason printed. */
static int buffer_setup(struct ctx *c, uint8_t *stack_buf)
{
	uint64_t len = 2ull * c->size;
	void *p = NULL;

	switch (cfg.mr_mem) {
	case MR_MEM_ALLOC:
		return mnic_alloc(c->dev, len, PAGE, &c->buf);
	case MR_MEM_HEAP:
		p = malloc(len);
		if (!p) {
			fprintf(stderr, "mnic-pingpong: malloc(%llu) failed\n", (unsigned long long)len);
			return 1;
		}
		break;
	case MR_MEM_STACK:
		p = stack_buf;
		break;
	case MR_MEM_FILE:
		c->file_fd = open(cfg.mr_file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (c->file_fd < 0 || ftruncate(c->file_fd, (off_t)len) < 0) {
			fprintf(stderr, "mnic-pingpong: --mr-mem file=%s: %s\n", cfg.mr_file,
				strerror(errno));
			return 1;
		}
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->file_fd, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "mnic-pingpong: mmap of %s: %s\n", cfg.mr_file,
				strerror(errno));
			return 1;
		}
		break;
	}
	memset(p, 0, len);
	c->buf.ptr = p;
	c->buf.addr = (uint64_t)(uintptr_t)p;   /* IOVA = VA */
	c->buf.len = len;
	printf("  MR memory: %s, %llu bytes at %p\n", mr_mem_names[cfg.mr_mem],
	       (unsigned long long)len, p);
	return 0;
}

static void buffer_free(struct ctx *c)
{
	if (cfg.mr_mem == MR_MEM_HEAP)
		free(c->buf.ptr);
	if (cfg.mr_mem == MR_MEM_FILE && c->buf.ptr)
		munmap(c->buf.ptr, (size_t)c->buf.len);
	if (c->file_fd >= 0)
		close(c->file_fd);
}

static int setup(struct ctx *c, uint8_t *stack_buf)
{
	struct mnic_qp_init_attr qa;
	int err;

	if ((err = buffer_setup(c, stack_buf)) != 0 ||
	    (err = mnic_alloc_pd(c->dev, &c->pd)) < 0 ||
	    (err = mnic_reg_mr(c->pd, c->buf.addr, 2ull * c->size, MNIC_ACCESS_LOCAL_WRITE,
			       &c->mr)) < 0 ||
	    (cfg.events && (err = mnic_create_comp_channel(c->dev, &c->ch)) < 0) ||
	    (err = mnic_create_cq_ch(c->dev, c->rx_depth + 1, c->ch, NULL, &c->cq)) < 0)
		return err;
	memset(&qa, 0, sizeof(qa));
	qa.pd = c->pd;
	qa.send_cq = qa.recv_cq = c->cq;
	qa.max_send_wr = 1;
	qa.max_recv_wr = c->rx_depth;
	qa.max_send_sge = qa.max_recv_sge = 1;
	return mnic_create_qp(&qa, &c->qp);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void teardown(struct ctx *c)
{
	if (c->qp && mnic_destroy_qp(c->qp))
		fprintf(stderr, "mnic-pingpong: destroy QP: %s\n", mnic_strerror_last(c->dev));
	if (c->mr && mnic_dereg_mr(c->mr))
		fprintf(stderr, "mnic-pingpong: dereg MR: %s\n", mnic_strerror_last(c->dev));
	if (c->cq && mnic_destroy_cq(c->cq))
		fprintf(stderr, "mnic-pingpong: destroy CQ: %s\n", mnic_strerror_last(c->dev));
	if (c->ch && mnic_destroy_comp_channel(c->ch))
		fprintf(stderr, "mnic-pingpong: destroy channel: %s\n", mnic_strerror_last(c->dev));
	if (c->pd && mnic_dealloc_pd(c->pd))
		fprintf(stderr, "mnic-pingpong: dealloc PD: %s\n", mnic_strerror_last(c->dev));
	mnic_close(c->dev);   /* every pin of the buffer gone: it may go */
	buffer_free(c);
}

int main(int argc, char **argv)
{
	struct ctx c;
	struct dest my, rem;
	struct mnic_cmd_query_device_out q;
	struct timeval start, end, last_progress;
	uint8_t stack_buf[STACK_BUF_LEN];   /* --mr-mem stack */
	uint32_t rcnt = 0, scnt = 0, routs, n_lat = 0;
	uint64_t cq_polls = 0, send_ns, *lat = NULL;
	int side, rc = 1, err;

	if (parse_args(argc, argv)) {
		usage(argv[0]);
		return 2;
	}
	side = cfg.server ? 1 : 0;
	memset(&c, 0, sizeof(c));
	c.file_fd = -1;
	c.size = cfg.size;
	c.rx_depth = cfg.rx_depth;
	if (mnic_open(cfg.dev, &c.dev) < 0) {
		fprintf(stderr, "mnic-pingpong: %s\n", mnic_open_error());
		return 3;
	}
	err = mnic_query_device(c.dev, &q);
	if (err == 0)
		err = setup(&c, stack_buf);
	if (err != 0) {
		if (err < 0)
			fprintf(stderr, "mnic-pingpong: setup: %s\n", mnic_strerror_last(c.dev));
		teardown(&c);
		return 3;
	}
	routs = (uint32_t)post_recv(&c, c.rx_depth);
	if (routs < c.rx_depth) {
		fprintf(stderr, "mnic-pingpong: couldn't post receive (%u)\n", routs);
		goto out;
	}
	srand48(getpid() * time(NULL));
	memset(&my, 0, sizeof(my));
	my.qpn = c.qp->qp_num;
	my.psn = (uint32_t)lrand48() & 0xffffff;
	mnic_gid_from_ipv4(my.gid, q.ipv4);
	print_dest("local", &my);
	if (cfg.server ? exch_client(&c, &my, &rem) : exch_server(&c, &my, &rem)) {
		rc = 3;
		goto out;
	}
	print_dest("remote", &rem);

	c.pending = RECV_WRID;
	if (cfg.server) {
		if (post_send(&c, side, scnt)) {
			fprintf(stderr, "mnic-pingpong: couldn't post send\n");
			goto out;
		}
		c.pending |= SEND_WRID;
	}
	if (cfg.events && mnic_req_notify_cq(c.cq, 0)) {
		fprintf(stderr, "mnic-pingpong: couldn't request CQ notification: %s\n",
			mnic_strerror_last(c.dev));
		goto out;
	}
	if (cfg.latency && !(lat = calloc(cfg.iters, sizeof(*lat)))) {
		fprintf(stderr, "mnic-pingpong: out of memory\n");
		goto out;
	}
	gettimeofday(&start, NULL);
	last_progress = start;
	send_ns = now_ns();
	while (rcnt < cfg.iters || scnt < cfg.iters) {
		struct mnic_wc wc[2];
		int ne;

		if (cfg.events) {
			/* as ibv_rc_pingpong -e: wait, acknowledge, re-arm, then poll,
			 * so a completion after the poll fires the next event */
			struct mnic_cq *ev_cq;

			err = mnic_get_cq_event(c.ch, &ev_cq, NULL, cfg.timeout_s * 1000);
			if (err == -ETIMEDOUT) {
				fprintf(stderr, "mnic-pingpong: no completion event for %d s (sent %u, "
						"received %u)\n", cfg.timeout_s, scnt, rcnt);
				goto out;
			}
			if (err < 0 || ev_cq != c.cq) {
				fprintf(stderr, "mnic-pingpong: failed to get cq_event (%d)\n", err);
				goto out;
			}
			mnic_ack_cq_events(ev_cq, 1);
			if (mnic_req_notify_cq(c.cq, 0)) {
				fprintf(stderr, "mnic-pingpong: couldn't request CQ notification\n");
				goto out;
			}
		}
		ne = mnic_poll_cq(c.cq, 2, wc);
		cq_polls++;
		if (ne < 0) {
			fprintf(stderr, "mnic-pingpong: poll CQ failed %d\n", ne);
			goto out;
		}
		if (ne == 0) {
			struct timeval now;

			if (cfg.events)
				continue;   /* an event for a CQE an earlier poll took */
			gettimeofday(&now, NULL);
			if (now.tv_sec - last_progress.tv_sec > cfg.timeout_s) {
				fprintf(stderr, "mnic-pingpong: no completion for %d s (sent %u, "
						"received %u)\n", cfg.timeout_s, scnt, rcnt);
				goto out;
			}
			continue;
		}
		gettimeofday(&last_progress, NULL);
		for (int i = 0; i < ne; i++) {
			if (wc[i].status != MNIC_WC_SUCCESS) {
				fprintf(stderr, "mnic-pingpong: Failed status %s (%u) for wr_id %d "
						"(vendor_err 0x%x)\n", mnic_wc_status_name(wc[i].status),
					wc[i].status, (int)wc[i].wr_id, wc[i].vendor_err);
				goto out;
			}
			switch ((int)wc[i].wr_id) {
			case SEND_WRID:
				++scnt;
				break;
			case RECV_WRID:
				if (check_recv(&c, !side, rcnt, wc[i].byte_len))
					goto out;
				if (lat && rcnt < cfg.iters)
					lat[n_lat++] = now_ns() - send_ns;
				if (--routs <= 1) {
					routs += (uint32_t)post_recv(&c, c.rx_depth - routs);
					if (routs < c.rx_depth) {
						fprintf(stderr, "mnic-pingpong: couldn't post receive "
								"(%u)\n", routs);
						goto out;
					}
				}
				++rcnt;
				break;
			default:
				fprintf(stderr, "mnic-pingpong: completion for unknown wr_id %d\n",
					(int)wc[i].wr_id);
				goto out;
			}
			c.pending &= ~(int)wc[i].wr_id;
			if (scnt < cfg.iters && !c.pending) {
				send_ns = now_ns();
				if (post_send(&c, side, scnt)) {
					fprintf(stderr, "mnic-pingpong: couldn't post send\n");
					goto out;
				}
				c.pending = RECV_WRID | SEND_WRID;
			}
		}
	}
	gettimeofday(&end, NULL);
	{
		double usec = (double)(end.tv_sec - start.tv_sec) * 1e6 +
			      (double)(end.tv_usec - start.tv_usec);
		long long bytes = (long long)cfg.size * cfg.iters * 2;

		printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1000000.,
		       bytes * 8. / usec);
		printf("%u iters in %.2f seconds = %.2f usec/iter\n", cfg.iters, usec / 1000000.,
		       usec / cfg.iters);
		if (cfg.verify || cfg.chk)
			printf("data verified: %u messages received, %s\n", rcnt,
			       cfg.verify ? "every byte" : "first byte of every page");
		if (cfg.events)
			printf("events: %llu events, %llu sleeps, %llu wakeups, %llu EQ checks, "
			       "%llu CQ polls, %u completions\n", (unsigned long long)c.ch->events,
			       (unsigned long long)c.ch->sleeps, (unsigned long long)c.ch->wakeups,
			       (unsigned long long)c.ch->eq_checks, (unsigned long long)cq_polls,
			       rcnt + scnt);
		if (lat && n_lat) {
			/* per exchange: our send posted -> the peer's answer received,
			 * a round trip; half of its median */
			qsort(lat, n_lat, sizeof(*lat), cmp_u64);
			printf("latency: median half round trip %.2f usec over %u exchanges\n",
			       (double)lat[n_lat / 2] / 2000., n_lat);
		}
	}
	rc = 0;
out:
	free(lat);
	teardown(&c);
	return rc;
}
