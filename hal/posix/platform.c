/* platform.h for the firmware as a Linux process.
 *
 *   mnic-posix [--vde DIR --mac MAC] [--bar FILE [--bar-size BYTES]]
 *              [--impair SPEC] [--name NAME] [-- FIRMWARE ARGS...]
 *
 * Events: the only descriptor hal_platform_wait() sleeps on is the switch's
 * data socket.  The host rings doorbells by writing into the BAR, which
 * raises nothing on POSIX (there is no doorbell interrupt, unlike an
 * ivshmem-doorbell setup), so while a BAR is attached the wait is capped at
 * POSIX_DOORBELL_POLL_NS and the firmware polls its doorbells each loop.
 * Without a BAR the process sleeps until a frame or a timer deadline.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* ppoll(): a nanosecond timeout, so deadlines neither fire late nor spin */
#endif
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hal/errno.h"
#include "hal/platform.h"
#include "posix.h"

#define NS_PER_S 1000000000ull

/* ---- console: stdout, flushed per line so interleaved NIC logs stay whole */

static void console_putc(char c)
{
	fputc(c, stdout);
	if (c == '\n')
		fflush(stdout);
}

/* Non-blocking without touching O_NONBLOCK on stdin, whose file description
 * is usually shared with the shell.  hal_platform_wait() does not wake on
 * console input: it is read at the next wakeup. */
static int console_getc(void)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	unsigned char c;

	if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLIN))
		return -1;
	return read(STDIN_FILENO, &c, 1) == 1 ? c : -1;
}

static const struct hal_console_ops console_ops = {
	.putc = console_putc,
	.getc = console_getc,
};

/* ---- timer: CLOCK_MONOTONIC and one stored deadline --------------------- */

static uint64_t timer_deadline = HAL_TIMER_NEVER;

static uint64_t timer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void timer_set_deadline(uint64_t deadline_ns)
{
	timer_deadline = deadline_ns;
}

/* Acknowledging disarms, as masking the compare interrupt does on the
 * boards: an expiry is reported once, and hal_platform_wait() does not keep
 * returning at once for a deadline the firmware has already handled. */
static int timer_expired(void)
{
	if (timer_deadline == HAL_TIMER_NEVER || timer_now_ns() < timer_deadline)
		return 0;
	timer_deadline = HAL_TIMER_NEVER;
	return 1;
}

static const struct hal_timer_ops timer_ops = {
	.now_ns = timer_now_ns,
	.set_deadline = timer_set_deadline,
	.expired = timer_expired,
};

/* ---- options ------------------------------------------------------------ */

enum opt_id { OPT_VDE, OPT_MAC, OPT_BAR, OPT_BAR_SIZE, OPT_IMPAIR, OPT_NAME, OPT_COUNT };

static const struct {
	const char *name;
	const char *value;   /* what the value is, for messages */
} opt_table[OPT_COUNT] = {
	[OPT_VDE] = { "--vde", "DIR (the switch directory)" },
	[OPT_MAC] = { "--mac", "MAC (e.g. 52:54:00:12:34:56)" },
	[OPT_BAR] = { "--bar", "FILE (the shared BAR file)" },
	[OPT_BAR_SIZE] = { "--bar-size", "BYTES (e.g. 16M)" },
	[OPT_IMPAIR] = { "--impair", "SPEC (e.g. drop=0.01,seed=42)" },
	[OPT_NAME] = { "--name", "NAME" },
};

#define USAGE_HINT "platform options are --vde DIR --mac MAC --bar FILE --bar-size BYTES " \
	"--impair SPEC --name NAME; firmware arguments go after --"

struct posix_opts {
	const char *val[OPT_COUNT];
	int fw_first;   /* argv index of the first firmware argument */
	uint8_t mac[HAL_ETH_ALEN];
	size_t bar_size;
	struct impair_cfg impair;
};

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_mac(const char *s, uint8_t mac[HAL_ETH_ALEN])
{
	for (unsigned i = 0; i < HAL_ETH_ALEN; i++) {
		int hi, lo;

		if ((hi = hex_digit(s[0])) < 0 || (lo = hex_digit(s[1])) < 0)
			return -1;
		mac[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (i + 1 < HAL_ETH_ALEN && *s++ != ':')
			return -1;
	}
	return *s ? -1 : 0;
}

/* Decimal or 0x hex with an optional K, M or G (binary) suffix. */
static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16;
	if (hex_digit(s[base == 16 ? 2 : 0]) < 0)   /* strtoull would accept "-1" */
		return -1;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno)
		return -1;
	switch (*end) {
	case '\0': break;
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	default: return -1;
	}
	if (*end || v > (SIZE_MAX >> shift))
		return -1;
	*out = (size_t)v << shift;
	return 0;
}

__attribute__((format(printf, 1, 2)))
static int opt_error(const char *fmt, ...)
{
	va_list ap;

	fputs("posix: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -HAL_EINVAL;
}

static int parse_opts(struct posix_opts *o, int argc, char **argv)
{
	char err[160];
	const char *env;
	int i;

	memset(o, 0, sizeof(*o));
	o->fw_first = argc;
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i], *value = NULL;
		unsigned id;
		size_t n;

		if (!strcmp(arg, "--")) {
			o->fw_first = i + 1;
			break;
		}
		for (id = 0; id < OPT_COUNT; id++) {
			n = strlen(opt_table[id].name);
			if (!strncmp(arg, opt_table[id].name, n) && (arg[n] == '\0' || arg[n] == '='))
				break;
		}
		if (id == OPT_COUNT)
			return opt_error("unknown platform option '%s' (%s)", arg, USAGE_HINT);
		if (arg[n] == '=')
			value = arg + n + 1;
		else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2))
			value = argv[++i];
		if (!value || !*value)
			return opt_error("%s needs a value: %s", opt_table[id].name, opt_table[id].value);
		if (o->val[id])
			return opt_error("%s given twice", opt_table[id].name);
		o->val[id] = value;
	}

	if (o->val[OPT_VDE] && !o->val[OPT_MAC])
		return opt_error("--vde needs --mac %s too", opt_table[OPT_MAC].value);
	if (o->val[OPT_MAC] && !o->val[OPT_VDE])
		return opt_error("--mac %s names a port: give --vde DIR too", o->val[OPT_MAC]);
	if (o->val[OPT_MAC]) {
		if (parse_mac(o->val[OPT_MAC], o->mac) < 0)
			return opt_error("--mac %s: not a MAC address; write six hex octets "
					 "separated by ':', e.g. 52:54:00:12:34:56", o->val[OPT_MAC]);
		if (o->mac[0] & 1)
			return opt_error("--mac %s: a multicast address (low bit of the first octet "
					 "set); use a unicast MAC such as 52:54:00:12:34:56",
					 o->val[OPT_MAC]);
		if (!(o->mac[0] | o->mac[1] | o->mac[2] | o->mac[3] | o->mac[4] | o->mac[5]))
			return opt_error("--mac %s: the all-zero address is not a port address",
					 o->val[OPT_MAC]);
	}

	o->bar_size = POSIX_BAR_SIZE_DEFAULT;
	if (o->val[OPT_BAR_SIZE]) {
		if (!o->val[OPT_BAR])
			return opt_error("--bar-size %s sizes a BAR: give --bar FILE too",
					 o->val[OPT_BAR_SIZE]);
		/* Power of two: the same file is QEMU's ivshmem BAR2 on the boards,
		 * and a PCI BAR is a power of two. */
		if (parse_size(o->val[OPT_BAR_SIZE], &o->bar_size) < 0 ||
		    o->bar_size < POSIX_BAR_SIZE_MIN || (o->bar_size & (o->bar_size - 1)))
			return opt_error("--bar-size %s: give a power of two of at least 4096 "
					 "bytes, e.g. 65536, 0x10000 or 16M", o->val[OPT_BAR_SIZE]);
	}

	env = getenv("MNIC_IMPAIR");
	if (o->val[OPT_IMPAIR]) {
		if (!o->val[OPT_VDE])
			return opt_error("--impair %s impairs a port: give --vde DIR too",
					 o->val[OPT_IMPAIR]);
		if (impair_parse(&o->impair, o->val[OPT_IMPAIR], err, sizeof(err)) < 0)
			return opt_error("--impair %s: %s", o->val[OPT_IMPAIR], err);
	} else if (env && *env && o->val[OPT_VDE]) {
		/* The environment reaches every NIC of a test run, so without a
		 * port it is not an error, just irrelevant. */
		if (impair_parse(&o->impair, env, err, sizeof(err)) < 0)
			return opt_error("MNIC_IMPAIR=%s: %s", env, err);
	}
	if (!o->val[OPT_NAME])
		o->val[OPT_NAME] = "mnic";
	return 0;
}

/* ---- bring-up and teardown ---------------------------------------------- */

/* The platform's resources live here, not in the caller's struct, so that
 * the exit handler never follows a pointer into a returned stack frame. */
static struct eth_vde port0;
static struct hal_hostif bar_map;
static int platform_up;

static void release_resources(void)
{
	eth_vde_close(&port0);
	bar_shm_close(&bar_map);
	platform_up = 0;
}

void posix_platform_fini(struct hal_platform *p)
{
	release_resources();
	if (p) {
		memset(p->eth, 0, sizeof(p->eth));
		p->n_eth = 0;
		memset(&p->hostif, 0, sizeof(p->hostif));
		hal_dma_window_init(&p->dma, NULL, 0);
	}
}

int hal_platform_init(struct hal_platform *p, int *argc, char ***argv)
{
	static int exit_hook;
	struct posix_opts o;
	char spec[160];
	char **av = *argv;
	int err, out;

	err = parse_opts(&o, *argc, av);
	if (err)
		return err;
	if (platform_up) {
		fprintf(stderr, "posix: platform already initialised\n");
		return -HAL_EBUSY;
	}

	memset(p, 0, sizeof(*p));
	p->board = POSIX_BOARD_NAME;
	p->console = &console_ops;
	p->timer = &timer_ops;
	timer_deadline = HAL_TIMER_NEVER;
	hal_dma_window_init(&p->dma, NULL, 0);

	if (o.val[OPT_VDE]) {
		err = eth_vde_open(&port0, o.val[OPT_VDE], o.val[OPT_NAME], o.mac, &o.impair);
		if (err)
			return err;
		p->eth[0] = &port0.eth;
		p->n_eth = 1;
		if (impair_cfg_active(&o.impair)) {
			/* Logged so that a failing run can be replayed exactly. */
			impair_format(&o.impair, spec, sizeof(spec));
			fprintf(stderr, "posix: %s: impairment %s (tx seed %llu, rx seed %llu)\n",
				o.val[OPT_NAME], spec, (unsigned long long)o.impair.seed,
				(unsigned long long)(o.impair.seed + 1));
		}
	}
	if (o.val[OPT_BAR]) {
		err = bar_shm_open(&bar_map, o.val[OPT_BAR], o.bar_size);
		if (err)
			goto out_eth;
		p->hostif = bar_map;
		/* The whole BAR until the firmware, which owns the layout
		 * (mgmt/include/mnic), narrows the window past its own pages. */
		hal_dma_window_init(&p->dma, bar_map.bar, bar_map.bar_size);
	}

	if (*argc >= 1) {
		out = 1;
		for (int i = o.fw_first; i < *argc; i++)
			av[out++] = av[i];
		av[out] = NULL;
		*argc = out;
	}
	platform_up = 1;
	if (!exit_hook && atexit(release_resources) == 0)
		exit_hook = 1;
	return 0;

out_eth:
	eth_vde_close(&port0);
	return err;
}

void hal_platform_poll(struct hal_platform *p)
{
	for (unsigned i = 0; i < p->n_eth; i++)
		p->eth[i]->ops->poll(p->eth[i]);
}

void hal_platform_wait(struct hal_platform *p, uint64_t deadline_ns)
{
	struct pollfd pfd = { .fd = -1, .events = POLLIN };
	struct timespec ts, *timeout = NULL;
	uint64_t until = deadline_ns < timer_deadline ? deadline_ns : timer_deadline;
	uint64_t now = timer_now_ns();
	nfds_t nfds = 0;

	(void)p;
	if (port0.conn) {
		/* Going idle ends the burst: a frame held for reordering leaves now,
		 * delayed but never lost. */
		eth_vde_flush(&port0);
		/* Frames already off the socket do not make the fd readable. */
		if (eth_vde_rx_buffered(&port0))
			until = 0;
		pfd.fd = eth_vde_fd(&port0);
		nfds = 1;
	}
	if (bar_map.bar && until > now + POSIX_DOORBELL_POLL_NS)
		until = now + POSIX_DOORBELL_POLL_NS;
	if (until != HAL_TIMER_NEVER) {
		uint64_t left = until > now ? until - now : 0;

		ts.tv_sec = (time_t)(left / NS_PER_S);
		ts.tv_nsec = (long)(left % NS_PER_S);
		timeout = &ts;
	}
	/* EINTR is a wakeup like any other: the caller re-checks its work. */
	ppoll(&pfd, nfds, timeout, NULL);
}

void hal_platform_exit(int code)
{
	fflush(stdout);
	fflush(stderr);
	exit(code);   /* runs release_resources(): the switch sees the port close */
}
