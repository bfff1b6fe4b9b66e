/* hal/posix: eth_vde over a real vdeplug4 switch, and the platform (options,
 * wait, exit).  The switch is a child process started by the group setup
 * and killed by pid in the group teardown; PR_SET_PDEATHSIG also takes it
 * down if this process dies before the teardown can run. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hal/errno.h"
#include "hal/platform.h"
#include "posix.h"

#define VDE_PLUG "/usr/bin/vde_plug"
#define TRAFFIC_FRAMES 1000u
/* The switch (libvdeplug_netnode) forwards with non-blocking writes and drops
 * a frame when the receiving port's socket is full, so a lossless stream
 * keeps only this many frames in flight per direction. */
#define WINDOW 16u
#define ETHERTYPE_TEST 0x88b5u   /* IEEE 802 local experimental */
/* Long enough for the switch process to forward a few frames even on a
 * loaded machine; only used where frames must queue up before a read. */
#define SETTLE_MS 200u

static char tmpdir[64];
static char swdir[96];
static char barpath[96];
static char errpath[96];
static pid_t switch_pid = -1;
static pid_t switch_owner;   /* forked children inherit the exit handler */

static struct eth_vde port_a, port_b, port_c;
static const uint8_t mac_a[6] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x0a };
static const uint8_t mac_b[6] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x0b };
#define MAC_P "52:54:00:00:00:21"
static const uint8_t mac_p[6] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x21 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- the switch ---------------------------------------------------------- */

static void stop_switch(void)
{
	int status;

	if (switch_pid <= 0 || getpid() != switch_owner)
		return;
	kill(switch_pid, SIGTERM);   /* vde_plug removes its ctl socket and directory */
	for (unsigned i = 0; i < 200; i++) {
		if (waitpid(switch_pid, &status, WNOHANG) == switch_pid) {
			switch_pid = -1;
			return;
		}
		sleep_ms(10);
	}
	kill(switch_pid, SIGKILL);
	waitpid(switch_pid, &status, 0);
	switch_pid = -1;
}

static void remove_tree(const char *dir)
{
	char path[512];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (unlink(path) < 0 && (errno == EISDIR || errno == EPERM))
			remove_tree(path);
	}
	closedir(d);
	rmdir(dir);
}

static int start_switch(void)
{
	char ctl[128], url[128];
	pid_t parent = getpid();
	struct stat st;
	int status;

	snprintf(ctl, sizeof(ctl), "%s/ctl", swdir);
	snprintf(url, sizeof(url), "switch://%s", swdir);
	switch_owner = parent;
	switch_pid = fork();
	if (switch_pid < 0)
		return -1;
	if (switch_pid == 0) {
		int null = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(126);   /* the parent died before the line above */
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
		}
		execl(VDE_PLUG, "vde_plug", "null://", url, (char *)NULL);
		_exit(127);
	}
	/* vde_plug creates the directory and its ctl socket shortly after it
	 * starts; bounded wait, and give up early if it died. */
	for (unsigned i = 0; i < 500; i++) {
		if (stat(ctl, &st) == 0 && S_ISSOCK(st.st_mode))
			return 0;
		if (waitpid(switch_pid, &status, WNOHANG) == switch_pid) {
			switch_pid = -1;
			return -1;
		}
		sleep_ms(10);
	}
	stop_switch();
	return -1;
}

static int group_setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/mnic-test-eth-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(swdir, sizeof(swdir), "%s/sw", tmpdir);
	snprintf(barpath, sizeof(barpath), "%s/bar", tmpdir);
	snprintf(errpath, sizeof(errpath), "%s/stderr", tmpdir);
	atexit(stop_switch);   /* a test that exits early still stops the switch */
	if (access(VDE_PLUG, X_OK) < 0 || start_switch() < 0) {
		fprintf(stderr, "cannot start %s null:// switch://%s\n", VDE_PLUG, swdir);
		remove_tree(tmpdir);
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	stop_switch();
	remove_tree(tmpdir);
	return 0;
}

static int open_ports(const struct impair_cfg *imp_a)
{
	if (eth_vde_open(&port_a, swdir, "a", mac_a, imp_a) < 0)
		return -1;
	if (eth_vde_open(&port_b, swdir, "b", mac_b, NULL) < 0) {
		eth_vde_close(&port_a);
		return -1;
	}
	return 0;
}

static int ports_setup(void **state)
{
	(void)state;
	return open_ports(NULL);
}

static struct hal_platform plat;

/* Also undoes a platform a failed test left up, so the next test starts
 * clean. */
static int teardown(void **state)
{
	(void)state;
	eth_vde_close(&port_a);
	eth_vde_close(&port_b);
	eth_vde_close(&port_c);
	posix_platform_fini(&plat);
	return 0;
}

/* ---- frames -------------------------------------------------------------- */

static const size_t sizes[] = { 20, 59, 60, 61, 64, 128, 1000, 1514, 4000, 9018 };

/*  0      6      12     14   15        19
 *  | dst  | src  | type | dir | seq (BE) | pattern ... | */
static size_t build(uint8_t *f, const uint8_t *dst, const uint8_t *src, uint8_t dir, uint32_t seq)
{
	size_t len = sizes[seq % (sizeof(sizes) / sizeof(sizes[0]))];

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = ETHERTYPE_TEST >> 8;
	f[13] = ETHERTYPE_TEST & 0xff;
	f[14] = dir;
	f[15] = (uint8_t)(seq >> 24);
	f[16] = (uint8_t)(seq >> 16);
	f[17] = (uint8_t)(seq >> 8);
	f[18] = (uint8_t)seq;
	for (size_t i = 19; i < len; i++)
		f[i] = (uint8_t)(seq * 7u + i * 13u + dir);
	return len;
}

static uint32_t seq_of(const uint8_t *f)
{
	return (uint32_t)f[15] << 24 | (uint32_t)f[16] << 16 | (uint32_t)f[17] << 8 | f[18];
}

/* A received frame is the sent one, zero-padded to the 60-byte minimum. */
static void assert_intact(const uint8_t *got, int n, const uint8_t *dst, const uint8_t *src,
			  uint8_t dir, uint32_t seq)
{
	static uint8_t want[HAL_ETH_MAX_FRAME];
	size_t len = build(want, dst, src, dir, seq);
	size_t padded = len < HAL_ETH_MIN_FRAME ? HAL_ETH_MIN_FRAME : len;

	assert_int_equal(n, padded);
	assert_memory_equal(got, want, len);
	for (size_t i = len; i < padded; i++)
		assert_int_equal(got[i], 0);
}

static void wait_readable(int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = eth_vde_fd(&port_a), .events = POLLIN },
		{ .fd = eth_vde_fd(&port_b), .events = POLLIN },
	};

	poll(pfd, 2, timeout_ms);
}

/* One direction of a windowed stream.  expect[] lists the sequence numbers
 * that must arrive, in order (all of them without impairment). */
struct stream {
	struct eth_vde *from, *to;
	const uint8_t *src, *dst;
	uint8_t dir;
	uint32_t sent, received;
	const uint32_t *expect;
	uint32_t n_expect;
	uint64_t (*lost)(const struct stream *s);   /* frames that will never arrive */
};

static uint64_t lost_none(const struct stream *s)
{
	(void)s;
	return 0;
}

static void stream_send(struct stream *s)
{
	static uint8_t f[HAL_ETH_MAX_FRAME];

	while (s->sent < TRAFFIC_FRAMES && s->sent - s->received - s->lost(s) < WINDOW) {
		size_t len = build(f, s->dst, s->src, s->dir, s->sent);
		int rc = hal_eth_tx(&s->from->eth, f, len);

		if (rc == -HAL_EAGAIN)
			return;
		assert_int_equal(rc, 0);
		s->sent++;
	}
}

static void stream_receive(struct stream *s)
{
	static uint8_t buf[HAL_ETH_MAX_FRAME];
	int n;

	while ((n = hal_eth_rx(&s->to->eth, buf, sizeof(buf))) != 0) {
		assert_true(n > 0);
		assert_int_equal((buf[12] << 8) | buf[13], ETHERTYPE_TEST);
		assert_int_equal(buf[14], s->dir);
		if (s->received >= s->n_expect || seq_of(buf) != s->expect[s->received])
			fail_msg("dir %u: frame %u arrived as number %u, expected %d", s->dir,
				 seq_of(buf), s->received,
				 s->received < s->n_expect ? (int)s->expect[s->received] : -1);
		assert_intact(buf, n, s->dst, s->src, s->dir, seq_of(buf));
		s->received++;
	}
}

static void run_streams(struct stream *ab, struct stream *ba)
{
	uint64_t deadline = now_ns() + 30ull * 1000000000ull;

	while (ab->received < ab->n_expect || ba->received < ba->n_expect ||
	       ab->sent < TRAFFIC_FRAMES || ba->sent < TRAFFIC_FRAMES) {
		if (now_ns() > deadline)
			fail_msg("stalled: a->b sent %u received %u of %u, b->a sent %u received %u of %u",
				 ab->sent, ab->received, ab->n_expect, ba->sent, ba->received,
				 ba->n_expect);
		stream_send(ab);
		stream_send(ba);
		wait_readable(100);
		stream_receive(ab);
		stream_receive(ba);
	}
	/* Nothing more may come: a late duplicate would show up here. */
	sleep_ms(50);
	stream_receive(ab);
	stream_receive(ba);
	assert_int_equal(ab->received, ab->n_expect);
	assert_int_equal(ba->received, ba->n_expect);
}

static uint32_t all_seqs[TRAFFIC_FRAMES];

/* ---- eth tests ----------------------------------------------------------- */

static void test_traffic_both_ways_in_order_intact(void **state)
{
	struct stream ab = { &port_a, &port_b, mac_a, mac_b, 1, 0, 0, all_seqs, TRAFFIC_FRAMES, lost_none };
	struct stream ba = { &port_b, &port_a, mac_b, mac_a, 2, 0, 0, all_seqs, TRAFFIC_FRAMES, lost_none };

	(void)state;
	for (uint32_t i = 0; i < TRAFFIC_FRAMES; i++)
		all_seqs[i] = i;
	run_streams(&ab, &ba);

	assert_int_equal(port_a.eth.stats.tx_frames, TRAFFIC_FRAMES);
	assert_int_equal(port_b.eth.stats.tx_frames, TRAFFIC_FRAMES);
	assert_int_equal(port_a.eth.stats.rx_frames, TRAFFIC_FRAMES);
	assert_int_equal(port_b.eth.stats.rx_frames, TRAFFIC_FRAMES);
	assert_int_equal(port_a.eth.stats.tx_bytes, port_b.eth.stats.rx_bytes);
	assert_int_equal(port_b.eth.stats.tx_bytes, port_a.eth.stats.rx_bytes);
	assert_int_equal(port_a.eth.stats.rx_too_long + port_a.eth.stats.rx_dropped, 0);
	assert_int_equal(port_b.eth.stats.rx_too_long + port_b.eth.stats.rx_dropped, 0);
	assert_int_equal(port_a.tx_send_errors + port_b.tx_send_errors, 0);
	assert_int_equal(port_a.tx_impair.stats.frames, TRAFFIC_FRAMES);
	assert_int_equal(port_a.tx_impair.stats.dropped, 0);
}

struct kept_log {
	uint32_t *seqs;
	uint32_t n;
};

static void record(void *ctx, const void *frame, size_t len)
{
	struct kept_log *k = ctx;

	(void)len;
	k->seqs[k->n++] = seq_of(frame);
}

/* What a fresh impairment with this config keeps of TRAFFIC_FRAMES frames,
 * in emission order: the backend must make exactly the same decisions. */
static uint32_t reference_kept(const struct impair_cfg *c, uint32_t *kept)
{
	static struct impair ref;
	static uint8_t f[HAL_ETH_MAX_FRAME];
	struct kept_log k = { kept, 0 };

	impair_init(&ref, c);
	for (uint32_t i = 0; i < TRAFFIC_FRAMES; i++) {
		size_t len = build(f, mac_b, mac_a, 0, i);

		/* ->tx pads before impairing */
		if (len < HAL_ETH_MIN_FRAME) {
			memset(f + len, 0, HAL_ETH_MIN_FRAME - len);
			len = HAL_ETH_MIN_FRAME;
		}
		impair_apply(&ref, f, len, record, &k);
	}
	impair_flush(&ref, record, &k);
	return k.n;
}

static uint64_t lost_tx_a(const struct stream *s)
{
	return s->from->tx_impair.stats.dropped;
}

static uint64_t lost_rx_a(const struct stream *s)
{
	return s->to->rx_impair.stats.dropped;
}

static void test_drop_counters_add_up(void **state)
{
	static uint32_t kept_tx[TRAFFIC_FRAMES], kept_rx[TRAFFIC_FRAMES];
	struct impair_cfg c;
	char err[128];
	uint32_t n_tx, n_rx;

	(void)state;
	assert_int_equal(impair_parse(&c, "drop=0.1,seed=7", err, sizeof(err)), 0);
	assert_int_equal(open_ports(&c), 0);
	n_tx = reference_kept(&c, kept_tx);      /* a's transmit: seed 7 */
	c.seed++;
	n_rx = reference_kept(&c, kept_rx);      /* a's receive: seed 8 */

	{
		struct stream ab = { &port_a, &port_b, mac_a, mac_b, 0, 0, 0, kept_tx, n_tx, lost_tx_a };
		struct stream ba = { &port_b, &port_a, mac_b, mac_a, 0, 0, 0, kept_rx, n_rx, lost_rx_a };

		run_streams(&ab, &ba);
	}
	/* received + dropped == sent, on each side of a */
	assert_int_equal(port_b.eth.stats.rx_frames + port_a.tx_impair.stats.dropped,
			 port_a.eth.stats.tx_frames);
	assert_int_equal(port_a.eth.stats.rx_frames + port_a.rx_impair.stats.dropped,
			 port_b.eth.stats.tx_frames);
	assert_int_equal(port_a.eth.stats.tx_frames, TRAFFIC_FRAMES);
	assert_int_equal(port_b.eth.stats.tx_frames, TRAFFIC_FRAMES);
	assert_int_equal(port_a.tx_impair.stats.dropped, TRAFFIC_FRAMES - n_tx);
	assert_int_equal(port_a.rx_impair.stats.dropped, TRAFFIC_FRAMES - n_rx);
	/* 10 % of 1000, well inside five standard deviations (about 47) */
	assert_in_range(TRAFFIC_FRAMES - n_tx, 53, 147);
	assert_in_range(TRAFFIC_FRAMES - n_rx, 53, 147);
	assert_int_equal(port_b.rx_impair.stats.dropped + port_b.tx_impair.stats.dropped, 0);
}

static int drain(struct eth_vde *v, uint32_t *seqs, unsigned max)
{
	static uint8_t buf[HAL_ETH_MAX_FRAME];
	unsigned n = 0;
	int len;

	while ((len = hal_eth_rx(&v->eth, buf, sizeof(buf))) > 0)
		if (n < max)
			seqs[n++] = seq_of(buf);
	assert_int_equal(len, 0);
	return (int)n;
}

/* The next frame, waiting up to timeout_ms for one; 0 on timeout. */
static int rx_wait(struct eth_vde *v, void *buf, size_t cap, int timeout_ms)
{
	struct pollfd pfd = { .fd = eth_vde_fd(v), .events = POLLIN };
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000u;
	int n;

	while ((n = hal_eth_rx(&v->eth, buf, cap)) == 0 && now_ns() < deadline)
		poll(&pfd, 1, (int)((deadline - now_ns()) / 1000000u) + 1);
	return n;
}

static void send_seq(struct eth_vde *from, const uint8_t *dst, const uint8_t *src, uint32_t seq)
{
	static uint8_t f[HAL_ETH_MAX_FRAME];
	size_t len = build(f, dst, src, 3, seq);

	assert_int_equal(hal_eth_tx(&from->eth, f, len), 0);
}

/* A held transmit frame is released by eth_vde_flush() (the platform calls
 * it before sleeping); a held receive frame is released once the socket is
 * empty, and frames already queued on the socket swap pairwise. */
static void test_reorder_holds_and_releases(void **state)
{
	const struct impair_cfg reorder = { .reorder_ppm = IMPAIR_PPM_ONE, .seed = 1 };
	static uint8_t buf[HAL_ETH_MAX_FRAME];
	uint32_t got[8];

	(void)state;
	assert_int_equal(open_ports(&reorder), 0);

	send_seq(&port_a, mac_b, mac_a, 100);
	assert_true(impair_holding(&port_a.tx_impair));
	assert_int_equal(rx_wait(&port_b, buf, sizeof(buf), 30), 0);
	eth_vde_flush(&port_a);
	assert_int_equal(rx_wait(&port_b, buf, sizeof(buf), 2000), 60);
	assert_int_equal(seq_of(buf), 100);
	assert_int_equal(drain(&port_b, got, 8), 0);

	/* b -> a: four frames wait on a's socket, then a reads them */
	for (uint32_t i = 0; i < 4; i++)
		send_seq(&port_b, mac_a, mac_b, i);
	sleep_ms(SETTLE_MS);
	assert_int_equal(drain(&port_a, got, 8), 4);
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 0);
	assert_int_equal(got[2], 3);
	assert_int_equal(got[3], 2);
	assert_int_equal(port_a.rx_impair.stats.reordered, 2);

	/* a lone frame is held, then released when the socket turns out empty */
	send_seq(&port_b, mac_a, mac_b, 9);
	assert_int_equal(rx_wait(&port_a, buf, sizeof(buf), 2000), HAL_ETH_MAX_FRAME);
	assert_int_equal(seq_of(buf), 9);
	assert_false(eth_vde_rx_buffered(&port_a));
	assert_int_equal(drain(&port_a, got, 8), 0);
}

static void test_limits_and_counters(void **state)
{
	static uint8_t f[HAL_ETH_MAX_FRAME + 1], buf[HAL_ETH_MAX_FRAME];
	struct pollfd pfd = { .fd = eth_vde_fd(&port_b), .events = POLLIN };
	size_t len;

	(void)state;
	build(f, mac_b, mac_a, 4, 0);
	assert_int_equal(hal_eth_tx(&port_a.eth, f, HAL_ETH_MAX_FRAME + 1), -HAL_E2BIG);
	assert_int_equal(port_a.eth.stats.tx_too_long, 1);
	assert_int_equal(hal_eth_tx(&port_a.eth, f, 13), -HAL_EINVAL);
	assert_int_equal(port_a.eth.stats.tx_frames, 0);

	/* rx_pending follows the socket */
	assert_false(port_b.eth.ops->rx_pending(&port_b.eth));
	len = build(f, mac_b, mac_a, 4, 3);   /* 61 bytes */
	assert_int_equal(hal_eth_tx(&port_a.eth, f, len), 0);
	assert_int_equal(poll(&pfd, 1, 2000), 1);
	assert_true(port_b.eth.ops->rx_pending(&port_b.eth));

	/* larger than the caller's buffer: dropped and counted */
	assert_int_equal(hal_eth_rx(&port_b.eth, buf, 60), -HAL_E2BIG);
	assert_int_equal(port_b.eth.stats.rx_too_long, 1);
	assert_int_equal(port_b.eth.stats.rx_frames, 0);

	/* exactly the caller's buffer: delivered */
	len = build(f, mac_b, mac_a, 4, 2);   /* 60 bytes */
	assert_int_equal(hal_eth_tx(&port_a.eth, f, len), 0);
	assert_int_equal(poll(&pfd, 1, 2000), 1);
	assert_int_equal(hal_eth_rx(&port_b.eth, buf, 60), 60);
	assert_intact(buf, 60, mac_b, mac_a, 4, 2);
	assert_int_equal(hal_eth_rx(&port_b.eth, buf, sizeof(buf)), 0);
	assert_false(port_b.eth.ops->rx_pending(&port_b.eth));
	assert_int_equal(port_b.eth.stats.rx_frames, 1);
	assert_int_equal(port_b.eth.stats.rx_bytes, 60);
	assert_int_equal(port_a.eth.stats.tx_frames, 2);
	assert_int_equal(port_a.eth.stats.tx_bytes, 61 + 60);
}

/* Oversized frames on the wire (> HAL_ETH_MAX_FRAME) are dropped and counted
 * by the receiver.  ->tx refuses to make one, so the bytes go through the
 * sender's descriptor directly. */
static void test_oversized_wire_frame_counted(void **state)
{
	static uint8_t f[HAL_ETH_MAX_FRAME + 100], buf[HAL_ETH_MAX_FRAME];
	size_t len;

	(void)state;
	build(f, mac_b, mac_a, 5, 0);
	assert_int_equal(send(eth_vde_fd(&port_a), f, sizeof(f), 0), (ssize_t)sizeof(f));
	len = build(f, mac_b, mac_a, 5, 7);
	assert_int_equal(hal_eth_tx(&port_a.eth, f, len), 0);
	assert_int_equal(rx_wait(&port_b, buf, sizeof(buf), 2000), len);
	assert_int_equal(seq_of(buf), 7);
	assert_int_equal(port_b.eth.stats.rx_too_long, 1);
	assert_int_equal(hal_eth_rx(&port_b.eth, buf, sizeof(buf)), 0);
}

/* A port that opens with a MAC the switch has seen on another, still open
 * port receives the frames for that MAC at once: it announced itself.  The
 * announcement itself reaches nobody and is not counted. */
static void test_new_port_takes_over_its_mac(void **state)
{
	static uint8_t f[HAL_ETH_MAX_FRAME], buf[HAL_ETH_MAX_FRAME];
	size_t len;

	(void)state;
	len = build(f, mac_b, mac_a, 8, 1);   /* the switch learns mac_a on a */
	assert_int_equal(hal_eth_tx(&port_a.eth, f, len), 0);
	assert_int_equal(rx_wait(&port_b, buf, sizeof(buf), 2000), 60);

	assert_int_equal(eth_vde_open(&port_c, swdir, "c", mac_a, NULL), 0);
	assert_int_equal(port_c.eth.stats.tx_frames, 0);
	len = build(f, mac_a, mac_b, 8, 2);
	assert_int_equal(hal_eth_tx(&port_b.eth, f, len), 0);
	assert_int_equal(rx_wait(&port_c, buf, sizeof(buf), 2000), len);
	assert_int_equal(seq_of(buf), 2);
	assert_int_equal(rx_wait(&port_a, buf, sizeof(buf), 50), 0);
	assert_int_equal(rx_wait(&port_b, buf, sizeof(buf), 50), 0);
}

/* ---- platform ------------------------------------------------------------ */

/* Run hal_platform_init() with stderr sent to a file; returns its result
 * and leaves what it printed in out. */
static int init_captured(int *argc, char ***argv, char *out, size_t outlen)
{
	int saved, fd, rc;
	ssize_t n;

	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, STDERR_FILENO);
	rc = hal_platform_init(&plat, argc, argv);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, out, outlen - 1, 0);
	close(fd);
	out[n > 0 ? n : 0] = '\0';
	return rc;
}

#define ARGV(...) ((const char *[]){ "mnic-fw", __VA_ARGS__, NULL })

static void test_platform_rejects_bad_options(void **state)
{
	static const char *const sw = "/nonexistent/sw", *const bar = "/nonexistent/bar";
	const struct {
		const char **argv;
		const char *says;
	} bad[] = {
		{ ARGV("--vde", sw, "--mac", "52:54:00:12:34"), "not a MAC address" },
		{ ARGV("--vde", sw, "--mac", "52:54:00:12:34:5g"), "not a MAC address" },
		{ ARGV("--vde", sw, "--mac", "52-54-00-12-34-56"), "not a MAC address" },
		{ ARGV("--vde", sw, "--mac", "52:54:00:12:34:567"), "not a MAC address" },
		{ ARGV("--vde", sw, "--mac", "01:00:5e:00:00:01"), "multicast" },
		{ ARGV("--vde", sw, "--mac", "00:00:00:00:00:00"), "all-zero" },
		{ ARGV("--vde"), "--vde needs a value" },
		{ ARGV("--vde", "--mac", "52:54:00:12:34:56"), "--vde needs a value" },
		{ ARGV("--vde", sw, "--mac"), "--mac needs a value" },
		{ ARGV("--bar="), "--bar needs a value" },
		{ ARGV("--frobnicate"), "unknown platform option '--frobnicate'" },
		{ ARGV("--vdex", sw), "unknown platform option '--vdex'" },
		{ ARGV("selftest"), "firmware arguments go after --" },
		{ ARGV("--vde", sw), "needs its --mac" },
		{ ARGV("--mac", "52:54:00:12:34:56"), "give its --vde" },
		{ ARGV("--bar-size", "64K"), "give --bar FILE" },
		{ ARGV("--bar", bar, "--bar-size", "1000"), "power of two" },
		{ ARGV("--bar", bar, "--bar-size", "-4096"), "power of two" },
		{ ARGV("--bar", bar, "--bar-size", "2048"), "at least 4096" },
		{ ARGV("--bar", bar, "--bar-size", "4Q"), "power of two" },
		{ ARGV("--hostmem-size", "64K"), "give --hostmem FILE" },
		{ ARGV("--hostmem", bar, "--hostmem-size", "1000"), "multiple of 4096" },
		{ ARGV("--hostmem", bar, "--hostmem-size", "0"), "multiple of 4096" },
		{ ARGV("--hostmem", bar, "--hostmem-size", "6K"), "multiple of 4096" },
		{ ARGV("--hostmem", "--bar", bar), "--hostmem needs a value" },
		{ ARGV("--impair", "drop=0.1"), "give --vde" },
		{ ARGV("--vde", sw, "--mac", MAC_P, "--impair", "drop=2"), "above 1" },
		{ ARGV("--vde", sw, "--mac", MAC_P, "--impair", "lose=1"), "unknown key 'lose'" },
		{ ARGV("--name", "a", "--name", "b"), "--name given twice" },
		{ ARGV("--vde", sw, "--mac", MAC_P, "--vde", sw, "--mac", MAC_P), "two ports" },
		{ ARGV("--vde", sw, "--vde", sw, "--vde", sw), "more than 2 times" },
	};
	char err[512];

	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[32];
		int argc = 0;
		char **av = argv;

		for (; bad[i].argv[argc]; argc++)
			argv[argc] = (char *)(uintptr_t)bad[i].argv[argc];
		argv[argc] = NULL;
		if (init_captured(&argc, &av, err, sizeof(err)) != -HAL_EINVAL)
			fail_msg("case %u (%s ...) was accepted", i, argv[1]);
		/* one line, saying what to fix; the command line left alone */
		if (!strstr(err, bad[i].says))
			fail_msg("case %u: message '%s' does not say '%s'", i, err, bad[i].says);
		assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
		assert_ptr_equal(av, argv);
		assert_string_equal(argv[1], bad[i].argv[1]);
		/* the console is up even so, for the firmware's own error line */
		assert_non_null(plat.console);
		assert_int_equal(plat.n_eth, 0);
	}

	/* a bad $MNIC_IMPAIR is reported as such (and ignored without a port) */
	setenv("MNIC_IMPAIR", "drop=x", 1);
	{
		char *argv[] = { "fw", "--vde", (char *)(uintptr_t)sw, "--mac", MAC_P, NULL }, **av = argv;
		int argc = 5;

		assert_int_equal(init_captured(&argc, &av, err, sizeof(err)), -HAL_EINVAL);
		assert_non_null(strstr(err, "MNIC_IMPAIR=drop=x: drop=x is not a rate"));
	}
	{
		char *argv[] = { "fw", NULL }, **av = argv;
		int argc = 1;

		assert_int_equal(init_captured(&argc, &av, err, sizeof(err)), 0);
		posix_platform_fini(&plat);
	}
	unsetenv("MNIC_IMPAIR");
}

struct selftest_log {
	unsigned checks, failed;
	char names[256];
};

static void selftest_report(void *ctx, const char *check, int rc, const char *detail)
{
	struct selftest_log *l = ctx;

	(void)detail;
	l->checks++;
	l->failed += rc != 0;
	strncat(l->names, check, sizeof(l->names) - strlen(l->names) - 2);
	strcat(l->names, " ");
}

static void test_platform_init_consumes_options(void **state)
{
	char *argv[] = { "mnic-fw", "--name", "t", "--vde", swdir, "--mac", MAC_P,
			 "--bar", barpath, "--bar-size=64K", "--impair", "dup=0.5%,seed=3", "--",
			 "selftest", "log=debug", NULL };
	char **av = argv, err[512];
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
	struct selftest_log log = { 0 };
	struct eth_vde *v;
	struct stat st;
	uint8_t back[4];
	int fd;

	(void)state;
	setenv("MNIC_IMPAIR", "drop=1", 1);   /* the option wins over the environment */
	assert_int_equal(init_captured(&argc, &av, err, sizeof(err)), 0);
	unsetenv("MNIC_IMPAIR");
	assert_non_null(strstr(err, "posix: t: impairment"));
	assert_non_null(strstr(err, "seed=3"));

	assert_int_equal(argc, 3);
	assert_ptr_equal(av, argv);
	assert_string_equal(argv[0], "mnic-fw");
	assert_string_equal(argv[1], "selftest");
	assert_string_equal(argv[2], "log=debug");
	assert_null(argv[3]);

	assert_string_equal(plat.board, "posix");
	assert_non_null(plat.console);
	assert_non_null(plat.timer);
	assert_int_equal(plat.n_eth, 1);
	assert_null(plat.eth[1]);
	assert_memory_equal(plat.eth[0]->mac, mac_p, 6);
	assert_string_equal(plat.eth[0]->name, "eth0");
	v = eth_vde_of(plat.eth[0]);
	assert_int_equal(v->tx_impair.cfg.dup_ppm, 5000);
	assert_int_equal(v->tx_impair.cfg.drop_ppm, 0);
	assert_int_equal(v->tx_impair.cfg.seed, 3);
	assert_int_equal(v->rx_impair.cfg.seed, 4);

	/* the BAR is the file itself, grown to the size asked for */
	assert_non_null(plat.hostif.bar);
	assert_int_equal(plat.hostif.bar_size, 65536);
	assert_string_equal(plat.hostif.backing, barpath);
	assert_int_equal(stat(barpath, &st), 0);
	assert_int_equal(st.st_size, 65536);
	assert_int_equal(st.st_mode & 0777, 0600);
	plat.hostif.bar[65532] = 0xde;
	plat.hostif.bar[65535] = 0xef;
	fd = open(barpath, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, back, 4, 65532), 4);
	close(fd);
	assert_int_equal(back[0], 0xde);
	assert_int_equal(back[3], 0xef);

	assert_int_equal(hal_platform_selftest(&plat, selftest_report, &log), 0);
	assert_int_equal(log.checks, 3);
	assert_non_null(strstr(log.names, "posix_vde_eth0"));
	assert_non_null(strstr(log.names, "posix_bar_file"));

	{
		char *again[] = { "x", NULL }, **aa = again;
		int ac = 1;

		assert_int_equal(init_captured(&ac, &aa, err, sizeof(err)), -HAL_EBUSY);
	}
	posix_platform_fini(&plat);
	assert_int_equal(plat.n_eth, 0);
	assert_null(plat.hostif.bar);

	/* a second bring-up reuses the file as it is; no "--" means no
	 * firmware arguments */
	{
		char *two[] = { "fw", "--bar", barpath, "--vde", swdir, "--mac", MAC_P,
				"--vde", swdir, "--mac", "52:54:00:00:00:22", NULL }, **a2 = two;
		int ac = 11;

		assert_int_equal(init_captured(&ac, &a2, err, sizeof(err)), 0);
		assert_int_equal(ac, 1);
		assert_null(two[1]);
		assert_int_equal(plat.n_eth, 2);
		assert_string_equal(plat.eth[1]->name, "eth1");
		assert_int_equal(eth_vde_of(plat.eth[1])->tx_impair.cfg.seed, 2);
		assert_int_equal(plat.hostif.bar_size, 16u << 20);   /* posix.board */
		assert_int_equal(plat.hostif.bar[65535], 0xef);
		posix_platform_fini(&plat);
	}
}

/* --hostmem: the aperture is the file, its size the file's or the one
 * asked for (the file grown to it); a file that is not whole pages is
 * refused with a message that says so. */
static void test_platform_hostmem_file(void **state)
{
	char hostpath[128], err[512];
	uint8_t back[2];
	struct stat st;
	int fd;

	(void)state;
	snprintf(hostpath, sizeof(hostpath), "%s/hostmem", tmpdir);
	fd = open(hostpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1u << 20), 0);
	close(fd);
	{
		char *argv[] = { "fw", "--bar", barpath, "--bar-size", "64K", "--hostmem", hostpath,
				 NULL }, **av = argv;
		int argc = 7;

		assert_int_equal(init_captured(&argc, &av, err, sizeof(err)), 0);
		assert_non_null(plat.hostif.bar);
		assert_non_null(plat.hostmem.base);
		assert_int_equal(plat.hostmem.size, 1u << 20);   /* the file's */
		assert_string_equal(plat.hostmem.backing, hostpath);
		assert_true(plat.hostmem.base != plat.hostif.bar);
		plat.hostmem.base[(1u << 20) - 2] = 0x5a;
		plat.hostmem.base[(1u << 20) - 1] = 0xa5;
		posix_platform_fini(&plat);
		assert_null(plat.hostmem.base);
	}
	fd = open(hostpath, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, back, 2, (1u << 20) - 2), 2);
	close(fd);
	assert_int_equal(back[0], 0x5a);
	assert_int_equal(back[1], 0xa5);
	{
		char *argv[] = { "fw", "--hostmem", hostpath, "--hostmem-size=2M", NULL }, **av = argv;
		int argc = 4;

		assert_int_equal(init_captured(&argc, &av, err, sizeof(err)), 0);
		assert_null(plat.hostif.bar);
		assert_int_equal(plat.hostmem.size, 2u << 20);
		assert_int_equal(plat.hostmem.base[(1u << 20) - 1], 0xa5);   /* kept */
		posix_platform_fini(&plat);
		assert_int_equal(stat(hostpath, &st), 0);
		assert_int_equal(st.st_size, 2u << 20);
	}
	/* not whole pages, or empty: the size must be given or the file fixed */
	assert_int_equal(truncate(hostpath, (2u << 20) + 100u), 0);
	{
		char *argv[] = { "fw", "--hostmem", hostpath, NULL }, **av = argv;
		int argc = 3;

		assert_int_equal(init_captured(&argc, &av, err, sizeof(err)), -HAL_EINVAL);
		assert_non_null(strstr(err, "non-zero multiple of 4096"));
		assert_null(plat.hostmem.base);
	}
	unlink(hostpath);
}

static void init_platform(char **argv, int argc)
{
	char err[512];

	if (init_captured(&argc, &argv, err, sizeof(err)) != 0)
		fail_msg("hal_platform_init: %s", err);
}

static void test_platform_wait_sleeps_until_deadline(void **state)
{
	char *argv[] = { "fw", "--vde", swdir, "--mac", MAC_P, NULL };
	const struct hal_timer_ops *t;
	uint64_t start, deadline;
	unsigned calls = 0;

	(void)state;
	init_platform(argv, 5);
	t = plat.timer;

	/* the stored timer deadline ends the wait, once, without spinning */
	start = t->now_ns();
	deadline = start + 20000000u;
	t->set_deadline(deadline);
	assert_false(t->expired());
	while (!t->expired()) {
		hal_platform_wait(&plat, HAL_TIMER_NEVER);
		assert_true(++calls < 10);
	}
	assert_true(t->now_ns() >= deadline);
	assert_false(t->expired());   /* acknowledged: disarmed */

	/* the caller's deadline too; the earlier of the two counts */
	start = t->now_ns();
	t->set_deadline(start + 5000000000ull);
	hal_platform_wait(&plat, start + 15000000u);
	assert_true(t->now_ns() - start >= 15000000u);
	assert_true(t->now_ns() - start < 1000000000u);
	t->set_deadline(HAL_TIMER_NEVER);

	/* a deadline in the past returns at once */
	start = t->now_ns();
	hal_platform_wait(&plat, start - 1);
	assert_true(t->now_ns() - start < 100000000u);
	posix_platform_fini(&plat);
}

/* Without a BAR the only wakeups are frames and deadlines: a frame sent
 * 50 ms later (by a child process, on b's socket) ends an open-ended wait. */
static void test_platform_wait_wakes_on_frame(void **state)
{
	char *argv[] = { "fw", "--vde", swdir, "--mac", MAC_P, NULL };
	static uint8_t f[HAL_ETH_MAX_FRAME], buf[HAL_ETH_MAX_FRAME];
	uint64_t start, took;
	pid_t child;
	int status;

	(void)state;
	init_platform(argv, 5);
	start = now_ns();
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		size_t len = build(f, mac_p, mac_b, 6, 42);

		sleep_ms(50);
		_exit(hal_eth_tx(&port_b.eth, f, len) == 0 ? 0 : 1);
	}
	hal_platform_wait(&plat, start + 5000000000ull);
	took = now_ns() - start;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(took >= 40000000u);
	assert_true(took < 2000000000u);
	assert_true(plat.eth[0]->ops->rx_pending(plat.eth[0]));
	assert_int_equal(hal_eth_rx(plat.eth[0], buf, sizeof(buf)), 60);
	assert_int_equal(seq_of(buf), 42);
	posix_platform_fini(&plat);
}

/* With a BAR attached the wait still sleeps to the deadline it is given:
 * doorbell polling is the firmware loop's timer, not a platform cap. */
static void test_platform_wait_sleeps_to_deadline_with_bar(void **state)
{
	char *argv[] = { "fw", "--bar", barpath, "--bar-size", "64K", NULL };
	uint64_t start, took;

	(void)state;
	init_platform(argv, 5);
	start = now_ns();
	hal_platform_wait(&plat, start + 30000000u);
	took = now_ns() - start;
	assert_true(took >= 30000000u * 9 / 10);
	assert_true(took < 1000000000u);
	posix_platform_fini(&plat);
}

/* Going idle releases a transmit frame held for reordering, and frames
 * already taken off the socket keep the wait from sleeping. */
static void test_platform_wait_flushes_and_sees_buffered(void **state)
{
	char *argv[] = { "fw", "--vde", swdir, "--mac", MAC_P, "--impair", "reorder=1", NULL };
	static uint8_t f[HAL_ETH_MAX_FRAME], buf[HAL_ETH_MAX_FRAME];
	struct pollfd pfd = { .fd = eth_vde_fd(&port_b), .events = POLLIN };
	uint64_t start;
	size_t len;

	(void)state;
	init_platform(argv, 7);
	len = build(f, mac_b, mac_p, 7, 1);
	assert_int_equal(hal_eth_tx(plat.eth[0], f, len), 0);
	assert_int_equal(poll(&pfd, 1, 30), 0);   /* held */
	hal_platform_wait(&plat, 0);
	assert_int_equal(poll(&pfd, 1, 2000), 1);
	assert_int_equal(hal_eth_rx(&port_b.eth, buf, sizeof(buf)), 60);
	assert_int_equal(seq_of(buf), 1);

	/* two frames in: the first ->rx hands out one, the other waits in the
	 * port's queue where poll() cannot see it */
	for (uint32_t i = 0; i < 2; i++) {
		len = build(f, mac_p, mac_b, 7, 10 + i);
		assert_int_equal(hal_eth_tx(&port_b.eth, f, len), 0);
	}
	sleep_ms(SETTLE_MS);
	assert_true(hal_eth_rx(plat.eth[0], buf, sizeof(buf)) > 0);
	assert_true(eth_vde_rx_buffered(eth_vde_of(plat.eth[0])));
	start = now_ns();
	hal_platform_wait(&plat, start + 2000000000ull);
	assert_true(now_ns() - start < 100000000u);
	assert_true(hal_eth_rx(plat.eth[0], buf, sizeof(buf)) > 0);
	posix_platform_fini(&plat);
}

/* The console is line-flushed (a line is out before the process dies
 * without any cleanup) and hal_platform_exit() flushes and exits with the
 * code. */
static void test_platform_console_and_exit(void **state)
{
	char out[128] = "";
	int pipefd[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t child;

	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		assert_int_equal(pipe(pipefd), 0);
		child = fork();
		assert_true(child >= 0);
		if (child == 0) {
			char *argv[] = { "fw", NULL }, **av = argv;
			int argc = 1;

			dup2(pipefd[1], STDOUT_FILENO);
			close(pipefd[0]);
			if (hal_platform_init(&plat, &argc, &av) != 0)
				_exit(99);
			for (const char *s = mode ? "partial" : "line\n"; *s; s++)
				plat.console->putc(*s);
			if (mode == 0)
				kill(getpid(), SIGKILL);   /* no exit-time flush */
			hal_platform_exit(7);
		}
		close(pipefd[1]);
		got = 0;
		while ((n = read(pipefd[0], out + got, sizeof(out) - 1 - got)) > 0)
			got += (size_t)n;
		out[got] = '\0';
		close(pipefd[0]);
		assert_int_equal(waitpid(child, &status, 0), child);
		if (mode == 0) {
			assert_true(WIFSIGNALED(status));
			assert_string_equal(out, "line\n");
		} else {
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 7);
			assert_string_equal(out, "partial");
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_traffic_both_ways_in_order_intact, ports_setup,
						teardown),
		cmocka_unit_test_teardown(test_drop_counters_add_up, teardown),
		cmocka_unit_test_teardown(test_reorder_holds_and_releases, teardown),
		cmocka_unit_test_setup_teardown(test_limits_and_counters, ports_setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_wire_frame_counted, ports_setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_new_port_takes_over_its_mac, ports_setup,
						teardown),
		cmocka_unit_test_teardown(test_platform_rejects_bad_options, teardown),
		cmocka_unit_test_teardown(test_platform_init_consumes_options, teardown),
		cmocka_unit_test_teardown(test_platform_hostmem_file, teardown),
		cmocka_unit_test_teardown(test_platform_wait_sleeps_until_deadline, teardown),
		cmocka_unit_test_setup_teardown(test_platform_wait_wakes_on_frame, ports_setup,
						teardown),
		cmocka_unit_test_teardown(test_platform_wait_sleeps_to_deadline_with_bar, teardown),
		cmocka_unit_test_setup_teardown(test_platform_wait_flushes_and_sees_buffered,
						ports_setup, teardown),
		cmocka_unit_test_teardown(test_platform_console_and_exit, teardown),
	};

	return cmocka_run_group_tests_name("posix_eth", tests, group_setup, group_teardown);
}
