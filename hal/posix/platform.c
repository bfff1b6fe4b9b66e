/* platform.h for the firmware as a Linux process.
 *
 *   mnic-fw [--vde DIR --mac MAC]... [--bar FILE [--bar-size BYTES]]
 *           [--hostmem FILE [--hostmem-size BYTES]]
 *           [--doorbell PATH|off | --ivshmem PATH] [--impair SPEC] [--name NAME]
 *           [-- FIRMWARE ARGS...]
 *
 * Each --vde/--mac pair (in order, up to HAL_MAX_ETH) is one port, eth0 and
 * eth1 as on the boards, so the firmware self-test can loop frames between
 * two ports on one switch.  Impairment (--impair, else $MNIC_IMPAIR) applies
 * to every port: port i uses seed + 2i on transmit and seed + 2i + 1 on
 * receive, so port 0 has seed and seed + 1.
 *
 * --hostmem FILE is the host's "physical memory" (docs/host-interface.md
 * "Host memory and translation"): a second shared file, mapped and guarded
 * as the BAR, whose offsets are host-physical addresses; the engine's DMA
 * goes there (hal_platform.hostmem) while the command queue stays in the
 * BAR.  Its size is the file's, or --hostmem-size (the file grown to it).
 *
 * --doorbell PATH is the doorbell channel (hal/doorbell.h, doorbell.c;
 * the protocol: mnic/dbch.h), a unix socket where host processes fetch the
 * eventfd they ring and give the eventfds the NIC raises their vectors on.
 * With a BAR it is on by default at "<BAR file>.db"; "off" leaves the NIC
 * without one (the firmware then polls the BAR on its adaptive timer, as
 * the boards' ivshmem-plain needs).
 *
 * --ivshmem PATH joins the mnic-ivshmem-server listening at PATH as a peer
 * instead (ivsh_peer.c), as a QEMU board's ivshmem-doorbell does: a host
 * VM's ivshmem-doorbell device (tests/vm/vm.sh on "<BAR file>.ivsh") then
 * rings this NIC with its Doorbell register and takes its interrupts as
 * MSI-X; libmnic's BAR backend joins the same server (hostdrv/lib/ivsh.c).
 * The server maps the BAR file for the VM: the same pages as ours.
 *
 * Events: hal_platform_wait() sleeps on the switch data sockets and, with
 * a channel, on its ring eventfd (a host rang: the loop serves it in the
 * iteration that follows), its listening socket and every host's socket
 * (a host arrives, sends a message or goes away).  The firmware's own
 * timers (the fallback doorbell poll among them) reach this wait as its
 * deadline.  The process sleeps until one of these or a deadline (and, with
 * no deadline and no descriptor, until a signal).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* ppoll(): a nanosecond timeout, so deadlines neither fire late nor spin */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <libvdeplug.h>

#include "board.h"
#include "hal/errno.h"
#include "hal/platform.h"
#include "mnic/dbch.h"
#include "pcap.h"
#include "lib/mac.h"
#include "posix.h"

#define NS_PER_S 1000000000ull
#define POSIX_PATH_MAX 4096
#define POSIX_SUN_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)

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

enum opt_id { OPT_VDE, OPT_MAC, OPT_BAR, OPT_BAR_SIZE, OPT_HOSTMEM, OPT_HOSTMEM_SIZE, OPT_DOORBELL,
	      OPT_IVSHMEM, OPT_IMPAIR, OPT_NAME, OPT_COUNT };

static const struct {
	const char *name;
	const char *value;   /* what the value is, for messages */
	unsigned max;        /* times it may be given */
} opt_table[OPT_COUNT] = {
	[OPT_VDE] = { "--vde", "DIR (the switch directory)", HAL_MAX_ETH },
	[OPT_MAC] = { "--mac", "MAC (e.g. 52:54:00:12:34:56)", HAL_MAX_ETH },
	[OPT_BAR] = { "--bar", "FILE (the shared BAR file)", 1 },
	[OPT_BAR_SIZE] = { "--bar-size", "BYTES (e.g. 16M)", 1 },
	[OPT_HOSTMEM] = { "--hostmem", "FILE (the host-memory file)", 1 },
	[OPT_HOSTMEM_SIZE] = { "--hostmem-size", "BYTES (e.g. 64M)", 1 },
	[OPT_DOORBELL] = { "--doorbell", "PATH (the doorbell socket) or off", 1 },
	[OPT_IVSHMEM] = { "--ivshmem", "PATH (an mnic-ivshmem-server socket)", 1 },
	[OPT_IMPAIR] = { "--impair", "SPEC (e.g. drop=0.01,seed=42)", 1 },
	[OPT_NAME] = { "--name", "NAME", 1 },
};

#define USAGE_HINT "platform options are --vde DIR --mac MAC (once per port), --bar FILE, " \
	"--bar-size BYTES, --hostmem FILE, --hostmem-size BYTES, --doorbell PATH|off, --ivshmem PATH, " \
	"--impair SPEC, --name NAME; " \
	"firmware arguments go after --"

static const char *const port_names[HAL_MAX_ETH] = { "eth0", "eth1" };

struct posix_opts {
	const char *val[OPT_COUNT][HAL_MAX_ETH];
	unsigned n[OPT_COUNT];
	int fw_first;   /* argv index of the first firmware argument */
	uint8_t mac[HAL_MAX_ETH][HAL_ETH_ALEN];
	size_t bar_size;
	size_t hostmem_size;   /* 0: the file's */
	struct impair_cfg impair;
	const char *name;
};

static int parse_mac(const char *s, uint8_t mac[HAL_ETH_ALEN])
{
	return lib_mac_parse(s, mac) == 0 && s[LIB_MAC_TEXT_LEN] == '\0' ? 0 : -1;
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
	if (lib_hex_digit(s[base == 16 ? 2 : 0]) < 0)   /* strtoull would take " -1" */
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

static int check_macs(struct posix_opts *o)
{
	for (unsigned i = 0; i < o->n[OPT_MAC]; i++) {
		const char *s = o->val[OPT_MAC][i];
		uint8_t *m = o->mac[i];

		if (parse_mac(s, m) < 0)
			return opt_error("--mac %s: not a MAC address; write six hex octets "
					 "separated by ':', e.g. 52:54:00:12:34:56", s);
		if (m[0] & 1)
			return opt_error("--mac %s: a multicast address (low bit of the first octet "
					 "set); use a unicast MAC such as 52:54:00:12:34:56", s);
		if (!(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]))
			return opt_error("--mac %s: the all-zero address is not a port address", s);
		for (unsigned j = 0; j < i; j++)
			if (!memcmp(o->mac[j], m, HAL_ETH_ALEN))
				return opt_error("--mac %s: given to two ports; each port needs its own", s);
	}
	return 0;
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
		size_t n = 0;

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
		if (o->n[id] == opt_table[id].max)
			return opt_error(opt_table[id].max == 1 ? "%s given twice" :
					 "%s given more than %u times (one per port)",
					 opt_table[id].name, opt_table[id].max);
		o->val[id][o->n[id]++] = value;
	}

	/* --vde and --mac pair up in order: the i-th MAC is the i-th port's. */
	if (o->n[OPT_VDE] > o->n[OPT_MAC])
		return opt_error("--vde %s needs its --mac (e.g. --mac 52:54:00:12:34:56)",
				 o->val[OPT_VDE][o->n[OPT_MAC]]);
	if (o->n[OPT_MAC] > o->n[OPT_VDE])
		return opt_error("--mac %s names a port: give its --vde DIR too",
				 o->val[OPT_MAC][o->n[OPT_VDE]]);
	if (check_macs(o))
		return -HAL_EINVAL;

	o->bar_size = BOARD_BAR_SIZE;
	if (o->n[OPT_BAR_SIZE]) {
		const char *s = o->val[OPT_BAR_SIZE][0];

		if (!o->n[OPT_BAR])
			return opt_error("--bar-size %s sizes a BAR: give --bar FILE too", s);
		/* Power of two: the same kind of file is QEMU's ivshmem BAR2 on the
		 * boards, and a PCI BAR is a power of two. */
		if (parse_size(s, &o->bar_size) < 0 || o->bar_size < POSIX_BAR_SIZE_MIN ||
		    (o->bar_size & (o->bar_size - 1)))
			return opt_error("--bar-size %s: give a power of two of at least 4096 "
					 "bytes, e.g. 65536, 0x10000 or 16M", s);
	}

	if (o->n[OPT_HOSTMEM_SIZE]) {
		const char *s = o->val[OPT_HOSTMEM_SIZE][0];

		if (!o->n[OPT_HOSTMEM])
			return opt_error("--hostmem-size %s sizes host memory: give --hostmem FILE too",
					 s);
		/* Whole pages: the smallest MTT page is 4 KiB (mnic/cmd.h). */
		if (parse_size(s, &o->hostmem_size) < 0 || o->hostmem_size == 0 ||
		    (o->hostmem_size & 4095u))
			return opt_error("--hostmem-size %s: give a non-zero multiple of 4096 bytes, "
					 "e.g. 65536, 0x100000 or 64M", s);
	}

	env = getenv("MNIC_IMPAIR");
	if (o->n[OPT_IMPAIR]) {
		const char *s = o->val[OPT_IMPAIR][0];

		if (!o->n[OPT_VDE])
			return opt_error("--impair %s impairs ports: give --vde DIR too", s);
		if (impair_parse(&o->impair, s, err, sizeof(err)) < 0)
			return opt_error("--impair %s: %s", s, err);
	} else if (env && *env && o->n[OPT_VDE]) {
		/* The environment reaches every NIC of a test run, so without a
		 * port it is not an error, just irrelevant. */
		if (impair_parse(&o->impair, env, err, sizeof(err)) < 0)
			return opt_error("MNIC_IMPAIR=%s: %s", env, err);
	}
	if (o->n[OPT_DOORBELL] && !o->n[OPT_BAR])
		return opt_error("--doorbell %s rings a host BAR: give --bar FILE too",
				 o->val[OPT_DOORBELL][0]);
	if (o->n[OPT_IVSHMEM] && !o->n[OPT_BAR])
		return opt_error("--ivshmem %s serves a host BAR: give --bar FILE too",
				 o->val[OPT_IVSHMEM][0]);
	if (o->n[OPT_IVSHMEM] && o->n[OPT_DOORBELL])
		return opt_error("--ivshmem %s and --doorbell %s are two doorbell channels: "
				 "give one", o->val[OPT_IVSHMEM][0], o->val[OPT_DOORBELL][0]);
	o->name = o->n[OPT_NAME] ? o->val[OPT_NAME][0] : "mnic";
	return 0;
}

/* ---- bring-up and teardown ---------------------------------------------- */

/* The platform's resources live here, not in the caller's struct, so that
 * the exit handler never follows a pointer into a returned stack frame. */
static struct eth_vde ports[HAL_MAX_ETH];
static unsigned n_ports;
static struct hal_hostif bar_map;
static struct hal_hostmem hostmem_map;
static struct posix_doorbell doorbell;
static char doorbell_path[POSIX_PATH_MAX];
static int doorbell_up;
static struct posix_ivsh ivsh;
static int ivsh_up;
static int doorbell_pending;         /* the last wait saw a channel socket ready */
static uint64_t doorbell_next_serve;
static int platform_up;

static int impair_active;
static struct pcap_writer capture;   /* MNIC_PCAP=<path>: every port's frames */

static void print_impair(const char *port, const char *dir, const struct impair_stats *st)
{
	fprintf(stderr, "posix: %s impair %s: frames=%llu dropped=%llu duplicated=%llu "
		"reordered=%llu corrupted=%llu\n", port, dir, (unsigned long long)st->frames,
		(unsigned long long)st->dropped, (unsigned long long)st->duplicated,
		(unsigned long long)st->reordered, (unsigned long long)st->corrupted);
}

static void release_resources(void)
{
	/* What the impairment did, so a run's recovery can be checked against
	 * it (tests/integration/posix_impaired_rawx.sh). */
	for (unsigned i = 0; impair_active && i < n_ports; i++) {
		print_impair(port_names[i], "tx", &ports[i].tx_impair.stats);
		print_impair(port_names[i], "rx", &ports[i].rx_impair.stats);
	}
	impair_active = 0;
	pcap_close(&capture);
	if (doorbell_up)
		posix_doorbell_close(&doorbell);
	doorbell_up = 0;
	if (ivsh_up)
		posix_ivsh_close(&ivsh);
	ivsh_up = 0;
	while (n_ports)
		eth_vde_close(&ports[--n_ports]);
	hostmem_shm_close(&hostmem_map);
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
		memset(&p->hostmem, 0, sizeof(p->hostmem));
		p->doorbell = NULL;
	}
}

/* The channel at --doorbell PATH, or by default at "<BAR file>.db".  A
 * default path too long for a unix socket leaves the NIC without one (said:
 * hosts then find none there either); a PATH given is used or fails. */
static int open_doorbell(struct hal_platform *p, const struct posix_opts *o)
{
	const char *given = o->n[OPT_DOORBELL] ? o->val[OPT_DOORBELL][0] : NULL;
	int n, err;

	if (o->n[OPT_IVSHMEM]) {
		err = posix_ivsh_open(&ivsh, o->val[OPT_IVSHMEM][0]);
		if (err)
			return err;
		ivsh_up = 1;
		goto up;
	}
	if (given && !strcmp(given, "off"))
		return 0;
	n = snprintf(doorbell_path, sizeof(doorbell_path), "%s%s", given ? given : o->val[OPT_BAR][0],
		     given ? "" : MNIC_DBCH_SUFFIX);
	if (n < 0 || (size_t)n >= sizeof(doorbell_path))
		return opt_error("--doorbell: the socket path is too long");
	if (!given && (size_t)n >= POSIX_SUN_PATH_MAX) {
		fprintf(stderr, "posix: %s: no doorbell channel (the path %s is too long for a unix "
			"socket): the firmware polls the BAR; give --doorbell PATH to have one\n",
			o->name, doorbell_path);
		return 0;
	}
	err = posix_doorbell_open(&doorbell, doorbell_path);
	if (err)
		return err;
	doorbell_up = 1;
up:
	doorbell_pending = 0;
	doorbell_next_serve = 0;
	p->doorbell = ivsh_up ? &ivsh.db : &doorbell.db;
	return 0;
}

static int open_ports(struct hal_platform *p, const struct posix_opts *o)
{
	char spec[160];

	for (unsigned i = 0; i < o->n[OPT_VDE]; i++) {
		struct impair_cfg c = o->impair;
		int err;

		/* eth_vde_open() seeds receive with seed + 1 */
		c.seed = o->impair.seed + 2u * i;
		err = eth_vde_open(&ports[i], o->val[OPT_VDE][i], port_names[i], o->mac[i], &c);
		if (err)
			return err;
		n_ports = i + 1;
		p->eth[i] = &ports[i].eth;
		p->n_eth = i + 1;
	}
	if (n_ports && getenv("MNIC_PCAP") && *getenv("MNIC_PCAP")) {
		if (pcap_open(&capture, getenv("MNIC_PCAP")) < 0) {
			fprintf(stderr, "posix: MNIC_PCAP=%s: cannot create the capture file\n",
				getenv("MNIC_PCAP"));
			return -HAL_EIO;
		}
		for (unsigned i = 0; i < n_ports; i++)
			ports[i].pcap = &capture;
	}
	if (n_ports && impair_cfg_active(&o->impair)) {
		impair_active = 1;
		/* Logged so that a failing run can be replayed exactly. */
		impair_format(&o->impair, spec, sizeof(spec));
		fprintf(stderr, "posix: %s: impairment %s on %u port(s) (eth0 tx seed %llu, "
			"rx seed %llu)\n", o->name, spec, n_ports,
			(unsigned long long)o->impair.seed, (unsigned long long)(o->impair.seed + 1));
	}
	return 0;
}

int hal_platform_init(struct hal_platform *p, int *argc, char ***argv)
{
	static int exit_hook;
	struct posix_opts o;
	char **av = *argv;
	int err;

	if (platform_up) {
		fprintf(stderr, "posix: platform already initialised\n");
		return -HAL_EBUSY;
	}
	/* Console and timer first, as on the boards: they cannot fail, and the
	 * firmware can log whatever goes wrong after them. */
	memset(p, 0, sizeof(*p));
	p->board = BOARD_NAME;
	p->board_id = BOARD_ID;
	p->console = &console_ops;
	p->timer = &timer_ops;
	timer_deadline = HAL_TIMER_NEVER;

	err = parse_opts(&o, *argc, av);
	if (err)
		return err;
	err = open_ports(p, &o);
	if (err)
		goto out_ports;
	if (o.n[OPT_BAR]) {
		err = bar_shm_open(&bar_map, o.val[OPT_BAR][0], o.bar_size);
		if (err)
			goto out_ports;
		p->hostif = bar_map;
		err = open_doorbell(p, &o);
		if (err)
			goto out_ports;
	}
	if (o.n[OPT_HOSTMEM]) {
		err = hostmem_shm_open(&hostmem_map, o.val[OPT_HOSTMEM][0], o.hostmem_size);
		if (err)
			goto out_ports;
		p->hostmem = hostmem_map;
	}

	if (*argc >= 1) {
		int out = 1;

		for (int i = o.fw_first; i < *argc; i++)
			av[out++] = av[i];
		av[out] = NULL;
		*argc = out;
	}
	platform_up = 1;
	if (!exit_hook && atexit(release_resources) == 0)
		exit_hook = 1;
	return 0;

out_ports:
	posix_platform_fini(p);
	return err;
}

/* A BAR or host-memory file that shrank ends the NIC here, before an
 * access faults (bar_shm.c: why it cannot go on). */
static void check_bar(void)
{
	static uint64_t next_check;
	uint64_t now = timer_now_ns();

	if ((!bar_map.bar && !hostmem_map.base) || now < next_check)
		return;
	next_check = now + BAR_SHM_CHECK_NS;
	if (bar_shm_check(&bar_map) < 0 || hostmem_shm_check(&hostmem_map) < 0)
		hal_platform_exit(BAR_SHM_EXIT);
}

/* The channel's sockets (hosts arriving, their messages, their leaving):
 * at once after a wait that saw one ready, else once per
 * DOORBELL_SERVE_NS while the loop is too busy to wait.  The ring itself
 * is the loop's (hal_doorbell_rang, every iteration). */
#define DOORBELL_SERVE_NS 1000000ull

static void serve_doorbell(void)
{
	uint64_t now;

	if (!doorbell_up && !ivsh_up)
		return;
	now = timer_now_ns();
	if (!doorbell_pending && now < doorbell_next_serve)
		return;
	doorbell_pending = 0;
	doorbell_next_serve = now + DOORBELL_SERVE_NS;
	if (ivsh_up)
		posix_ivsh_serve(&ivsh);
	else
		posix_doorbell_serve(&doorbell);
}

void hal_platform_poll(struct hal_platform *p)
{
	check_bar();
	serve_doorbell();
	for (unsigned i = 0; i < p->n_eth; i++)
		p->eth[i]->ops->poll(p->eth[i]);
}

void hal_platform_wait(struct hal_platform *p, uint64_t deadline_ns)
{
	struct pollfd pfd[HAL_MAX_ETH + (POSIX_DB_POLLFDS > POSIX_IVSH_POLLFDS ? POSIX_DB_POLLFDS :
								 POSIX_IVSH_POLLFDS)];
	unsigned n_db = 0;
	struct timespec ts, *timeout = NULL;
	uint64_t until = deadline_ns < timer_deadline ? deadline_ns : timer_deadline;
	uint64_t now = timer_now_ns();

	(void)p;   /* the ports are the platform's own (ports[]), fakes in p are not ours */
	for (unsigned i = 0; i < n_ports; i++) {
		/* Going idle ends the burst: a frame held for reordering leaves
		 * now, delayed but never lost. */
		eth_vde_flush(&ports[i]);
		/* Frames already off the socket do not make the fd readable. */
		if (eth_vde_rx_buffered(&ports[i]))
			until = 0;
		/* A port whose last transmit found the socket full also wakes
		 * when it drains (the firmware loop sleeps on a full TX ring). */
		pfd[i] = (struct pollfd){ .fd = eth_vde_fd(&ports[i]),
					  .events = (short)(POLLIN | (ports[i].tx_blocked ? POLLOUT : 0)) };
	}
	if (until != HAL_TIMER_NEVER) {
		uint64_t left = until > now ? until - now : 0;

		ts.tv_sec = (time_t)(left / NS_PER_S);
		ts.tv_nsec = (long)(left % NS_PER_S);
		timeout = &ts;
	}
	/* Going idle also writes the capture out: a NIC killed by its test
	 * while idle leaves a complete pcap (stdio buffers die with it). */
	pcap_flush(&capture);
	if (doorbell_up)
		n_db = posix_doorbell_pollfds(&doorbell, pfd + n_ports);
	else if (ivsh_up)
		n_db = posix_ivsh_pollfds(&ivsh, pfd + n_ports);
	/* EINTR is a wakeup like any other: the caller re-checks its work.  A
	 * ready ring (pfd[n_ports]) is left for hal_doorbell_rang(); a ready
	 * channel socket is served by the next hal_platform_poll(). */
	if (ppoll(pfd, n_ports + n_db, timeout, NULL) > 0)
		for (unsigned i = n_ports + 1; i < n_ports + n_db; i++)
			if (pfd[i].revents)
				doorbell_pending = 1;
}

/* ---- board self-tests --------------------------------------------------- */

static int check_clock(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC, &res) < 0)
		return -HAL_ENODEV;
	return (res.tv_sec == 0 && res.tv_nsec <= 1000) ? 0 : -HAL_ERANGE;
}

/* The switch keeps the control stream open for the life of the port and
 * closes it when it exits, so EOF there means the port is dead. */
static int check_vde(const struct eth_vde *v)
{
	struct pollfd pfd = { .fd = vde_ctlfd(v->conn), .events = POLLIN };
	int fl = fcntl(v->fd, F_GETFL);
	char c;

	if (fl < 0 || !(fl & O_NONBLOCK))
		return -HAL_EIO;
	if (poll(&pfd, 1, 0) == 1 &&
	    ((pfd.revents & (POLLHUP | POLLERR)) || recv(pfd.fd, &c, 1, MSG_PEEK) == 0))
		return -HAL_ENXIO;
	return 0;
}

/* The BAR must be the named file itself (what a host process maps), not a
 * private copy: a pattern written through the mapping is read back from the
 * file with pread().  The bytes are restored, as they may be host memory. */
static int check_bar_file(const struct hal_hostif *h)
{
	uint8_t save[16], pat[16], back[16];
	size_t off = h->bar_size - sizeof(save);
	volatile uint8_t *b = h->bar;
	int fd, rc = 0;

	if (!h->bar)
		return -HAL_ENODEV;
	fd = open(h->backing, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -HAL_ENODEV;
	for (size_t i = 0; i < sizeof(save); i++) {
		save[i] = b[off + i];
		pat[i] = (uint8_t)(0x5a ^ (i * 29u));
		b[off + i] = pat[i];
	}
	if (pread(fd, back, sizeof(back), (off_t)off) != (ssize_t)sizeof(back) ||
	    memcmp(back, pat, sizeof(pat)))
		rc = -HAL_EIO;
	for (size_t i = 0; i < sizeof(save); i++)
		b[off + i] = save[i];
	close(fd);
	return rc;
}

int hal_platform_selftest(struct hal_platform *p, hal_selftest_report_fn report, void *ctx)
{
	static const char *const vde_checks[HAL_MAX_ETH] = { "posix_vde_eth0", "posix_vde_eth1" };
	int failed = 0, rc;

#define CHECK(name, expr, detail)              \
	do {                                   \
		rc = (expr);                   \
		report(ctx, name, rc, detail); \
		failed += rc != 0;             \
	} while (0)

	CHECK("posix_clock", check_clock(), "CLOCK_MONOTONIC with 1 us resolution or better");
	for (unsigned i = 0; i < n_ports; i++)
		CHECK(vde_checks[i], check_vde(&ports[i]), "switch port open, socket non-blocking");
	CHECK("posix_bar_file", p->hostif.bar ? check_bar_file(&p->hostif) : -HAL_ENODEV,
	      "BAR writes reach the shared file");
#undef CHECK
	return failed;
}

/* A process has no reset of its own: a supervisor would restart it. */
int hal_platform_reset(struct hal_platform *p)
{
	(void)p;
	return -HAL_ENOTSUP;
}

void hal_platform_exit(int code)
{
	fflush(stdout);
	fflush(stderr);
	exit(code);   /* runs release_resources(): the switch sees the ports close */
}
