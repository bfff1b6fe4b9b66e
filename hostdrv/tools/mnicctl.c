/* mnicctl: the mnic command-line tool (libmnic over a BAR file or
 * /dev/mnicN).  One table of subcommands; each handler returns an exit
 * code (mnicctl.h).  Human output by default, --json for scripts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnicctl.h"
#include "mnicctl_fw.h"

static struct mnicctl_opts opt;

/* ---- output: a minimal JSON writer (objects, arrays, scalars) --------- */

static int jdepth;
static int jfirst[16];

static void jsep(const char *key)
{
	if (jdepth > 0 && !jfirst[jdepth])
		putchar(',');
	if (jdepth > 0)
		jfirst[jdepth] = 0;
	if (key)
		printf("\"%s\":", key);
}

static void jopen(const char *key, char c)
{
	jsep(key);
	putchar(c);
	if (jdepth < 15)
		jdepth++;
	jfirst[jdepth] = 1;
}

static void jclose(char c)
{
	putchar(c);
	if (jdepth > 0)
		jdepth--;
	if (jdepth == 0)
		putchar('\n');
}

static void jstr(const char *key, const char *v)
{
	jsep(key);
	putchar('"');
	for (; *v; v++) {
		unsigned char ch = (unsigned char)*v;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void jnum(const char *key, unsigned long long v)
{
	jsep(key);
	printf("%llu", v);
}

static void jdbl(const char *key, double v)
{
	jsep(key);
	printf("%.3f", v);
}

static const char *mac_str(const uint8_t m[6], char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

static const char *ip_str(uint32_t ip, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
	return buf;
}

/* A GID as its address: dotted IPv4 when IPv4-mapped (RFC 4291
 * 2.5.5.2), else IPv6 text (RFC 5952, inet_ntop). */
static const char *gid_str(const uint8_t gid[16], char buf[INET6_ADDRSTRLEN])
{
	if (mnic_gid_is_v4(gid))
		return ip_str(mnic_gid_ipv4(gid), buf);
	if (!inet_ntop(AF_INET6, gid, buf, INET6_ADDRSTRLEN))
		snprintf(buf, INET6_ADDRSTRLEN, "?");
	return buf;
}

static const char *ver_str(uint32_t v, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u", v >> 24, (v >> 16) & 255, v & 0xffff);
	return buf;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- errors -> exit codes ------------------------------------------------- */


/* A libmnic call failed on `dev`: print the whole story, pick the code. */
static int dev_fail(struct mnic_dev *dev, const char *what, int err)
{
	const struct mnic_cmd_result *r = mnic_last_error(dev);

	if (r->layer == MNIC_ERR_NONE || r->err != err)
		fprintf(stderr, "mnicctl: %s: %s: %s\n", mnic_dev_path(dev), what, strerror(-err));
	else if (r->opcode)   /* the result names the command itself */
		fprintf(stderr, "mnicctl: %s: %s\n", mnic_dev_path(dev), mnic_strerror_last(dev));
	else
		fprintf(stderr, "mnicctl: %s: %s: %s\n", mnic_dev_path(dev), what,
			mnic_strerror_last(dev));
	if (r->err == err && (r->layer == MNIC_ERR_STATUS || r->layer == MNIC_ERR_DELIVERY))
		return MNICCTL_FAILED;
	if (r->err == err && r->layer == MNIC_ERR_ARG)
		return MNICCTL_USAGE;
	return MNICCTL_DEVICE;
}

static int open_dev(const char *path, int raw, struct mnic_dev **dev)
{
	int err;

	if (!path)
		return mnicctl_usage("no device: give -d DEV (a BAR file or /dev/mnicN)");
	/* mnicctl is the operator's tool: the management handle (contexts:
	 * MNIC_CTX_MGMT; through /dev/mnicN it needs CAP_NET_ADMIN for the
	 * privileged commands) */
	err = raw ? mnic_open_raw(path, dev) : mnic_open_mgmt(path, dev);
	if (err < 0) {
		fprintf(stderr, "mnicctl: %s\n", mnic_open_error());
		return MNICCTL_DEVICE;
	}
	if (opt.timeout_ms)
		mnic_set_cmd_timeout(*dev, opt.timeout_ms);
	return MNICCTL_OK;
}

/* ---- files ------------------------------------------------------------------ */

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	struct stat st;
	FILE *f = fopen(path, "rb");

	*buf = NULL;
	if (!f) {
		fprintf(stderr, "mnicctl: %s: cannot open: %s\n", path, strerror(errno));
		return MNICCTL_DEVICE;
	}
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 30)) {
		fprintf(stderr, "mnicctl: %s: not a regular file of at most 1 GiB\n", path);
		fclose(f);
		return MNICCTL_DEVICE;
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len ? *len : 1);
	if (!*buf || fread(*buf, 1, *len, f) != *len) {
		fprintf(stderr, "mnicctl: %s: cannot read\n", path);
		free(*buf);
		*buf = NULL;
		fclose(f);
		return MNICCTL_DEVICE;
	}
	fclose(f);
	return MNICCTL_OK;
}

/* An output file written as PATH.tmp and renamed into place when whole, so
 * a failed write never leaves half an image.  Opened before the command
 * whose result it keeps, so that a path that cannot be written is refused
 * before anything on the device changed. */
struct out_file {
	const char *path;
	char tmp[4096];
	FILE *f;
};

static int out_open(struct out_file *o, const char *path)
{
	o->path = path;
	o->f = NULL;
	if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmp", path) >= (int)sizeof(o->tmp))
		return mnicctl_usage("output path too long");
	o->f = fopen(o->tmp, "wb");
	if (!o->f) {
		fprintf(stderr, "mnicctl: %s: cannot write: %s\n", o->tmp, strerror(errno));
		return MNICCTL_DEVICE;
	}
	return MNICCTL_OK;
}

static void out_discard(struct out_file *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	unlink(o->tmp);
}

static int out_commit(struct out_file *o, const uint8_t *buf, size_t len)
{
	FILE *f = o->f;

	o->f = NULL;
	if (fwrite(buf, 1, len, f) != len || fflush(f) != 0 || fclose(f) != 0) {
		fprintf(stderr, "mnicctl: %s: cannot write: %s\n", o->tmp, strerror(errno));
		unlink(o->tmp);
		return MNICCTL_DEVICE;
	}
	if (rename(o->tmp, o->path) < 0) {
		fprintf(stderr, "mnicctl: %s: cannot rename into place: %s\n", o->path,
			strerror(errno));
		unlink(o->tmp);
		return MNICCTL_DEVICE;
	}
	return MNICCTL_OK;
}

/* ---- info / health / counters ------------------------------------------------ */

static int cmd_info(struct mnic_dev *dev, int argc, const char **argv)
{
	struct mnic_dev_info di;
	struct mnic_cmd_query_device_out q;
	struct mnic_cmd_fw_query_out fw;
	const char *sig_name, *sig_text;
	char mac[18], ip[16], ver[16];
	int err;

	(void)argv;
	if (argc > 1)
		return mnicctl_usage("info takes no arguments");
	mnic_dev_info(dev, &di);
	err = mnic_query_device(dev, &q);
	if (err < 0)
		return dev_fail(dev, "QUERY_DEVICE", err);
	err = mnic_fw_query(dev, &fw);
	if (err < 0)
		return dev_fail(dev, "FW_QUERY", err);
	err = mnicctl_fw_sig_policy(dev, &sig_name, &sig_text);
	if (err < 0)
		return dev_fail(dev, "FW_QUERY", err);
	if (opt.json) {
		jopen(NULL, '{');
		jstr("device", mnic_dev_path(dev));
		jstr("backend", mnic_dev_backend(dev) == MNIC_BACKEND_KERNEL ? "kernel" : "bar");
		jstr("board", fw.board_name);
		jnum("board_id", q.board_id);
		jstr("fw_version", ver_str(q.fw_version, ver));
		jstr("build", fw.build);
		jstr("signature", sig_name);
		jnum("cmdif_rev", q.cmdif_rev);
		jstr("state", mnic_state_name(di.state));
		jstr("mac", mac_str(q.mac, mac));
		jstr("ipv4", ip_str(q.ipv4, ip));
		jnum("uptime_ns", fw.uptime_ns);
		jnum("window_size", q.window_size);
		jnum("user_area_offset", q.user_area_offset);
		jnum("user_area_size", di.user_area_size);
		jnum("image_max", q.image_max);
		jnum("pause_timeout_ms", q.pause_timeout_ms);
		jnum("resume_budget_ms", q.resume_budget_ms);
		jnum("mig_unkeyed", !!(q.mig_cfg_flags & MNIC_MIG_CFG_UNKEYED));
		jnum("stopped", !!(q.flags & MNIC_DEV_F_STOPPED));
		jnum("migration", !!(q.flags & MNIC_DEV_F_MIGRATION));
		jopen("max", '{');
		jnum("qp", q.max_qp); jnum("mr", q.max_mr); jnum("pd", q.max_pd);
		jnum("cq", q.max_cq); jnum("srq", q.max_srq); jnum("sge", q.max_sge);
		jnum("qp_wr", q.max_qp_wr); jnum("cqe", q.max_cqe);
		jnum("rd_atomic", q.max_rd_atomic); jnum("msg", q.max_msg);
		jclose('}');
		jopen("in_use", '{');
		jnum("pd", q.n_pd); jnum("mr", q.n_mr); jnum("cq", q.n_cq);
		jnum("srq", q.n_srq); jnum("qp", q.n_qp);
		jclose('}');
		jopen("mtt", '{');
		jnum("hostmem_size", q.hostmem_size); jnum("max", q.max_mtt);
		jnum("in_use", q.n_mtt); jnum("max_pages", q.max_mtt_pages);
		jnum("free_pages", q.free_mtt_pages);
		jclose('}');
		jclose('}');
		return MNICCTL_OK;
	}
	printf("device      %s (%s)\n", mnic_dev_path(dev),
	       mnic_dev_backend(dev) == MNIC_BACKEND_KERNEL ? "kernel module" : "BAR file");
	printf("board       %s (id %u)\n", fw.board_name, q.board_id);
	printf("firmware    %s  build %s  command interface rev %u\n", ver_str(q.fw_version, ver),
	       fw.build, q.cmdif_rev);
	printf("signature   %s\n", sig_text);
	printf("state       %s  uptime %.3f s%s%s\n", mnic_state_name(di.state),
	       (double)fw.uptime_ns / 1e9, q.flags & MNIC_DEV_F_STOPPED ? "  STOPPED (dumped)" : "",
	       q.flags & MNIC_DEV_F_MIGRATION ? "  migration" : "");
	printf("port        mac %s  ipv4 %s\n", mac_str(q.mac, mac), ip_str(q.ipv4, ip));
	printf("window      %llu bytes, user area at 0x%llx (%llu bytes)\n",
	       (unsigned long long)q.window_size, (unsigned long long)q.user_area_offset,
	       (unsigned long long)di.user_area_size);
	printf("limits      qp %u  mr %u  pd %u  cq %u  srq %u  sge %u  qp_wr %u  cqe %u  "
	       "rd_atomic %u  msg %u\n", q.max_qp, q.max_mr, q.max_pd, q.max_cq, q.max_srq,
	       q.max_sge, q.max_qp_wr, q.max_cqe, q.max_rd_atomic, q.max_msg);
	printf("in use      pd %u  mr %u  cq %u  srq %u  qp %u\n", q.n_pd, q.n_mr, q.n_cq,
	       q.n_srq, q.n_qp);
	printf("translation mtt %u of %u, entries %u free of %u; host memory ", q.n_mtt, q.max_mtt,
	       q.free_mtt_pages, q.max_mtt_pages);
	if (q.hostmem_size)
		printf("%llu bytes (aperture)\n", (unsigned long long)q.hostmem_size);
	else
		printf("the DMA window (physical mode)\n");
	printf("migration   image max %u bytes, pause timeout %u ms, resume budget ", q.image_max,
	       q.pause_timeout_ms);
	if (q.resume_budget_ms)
		printf("%u ms", q.resume_budget_ms);
	else
		printf("retry_cnt x timeout");
	/* Unkeyed RESUME/NAK_STOPPED are the operator's explicit choice. */
	printf(", %s\n", q.mig_cfg_flags & MNIC_MIG_CFG_UNKEYED
				 ? "UNKEYED RESUME ACCEPTED (MIG_CONFIG)" : "keyed QPs only");
	return MNICCTL_OK;
}

static int cmd_health(struct mnic_dev *dev, int argc, const char **argv)
{
	struct mnic_dev_info di;
	const struct mnic_health *h = &di.health;
	char ver[16];

	(void)argv;
	if (argc > 1)
		return mnicctl_usage("health takes no arguments");
	if (mnic_dev_info(dev, &di) < 0)
		return dev_fail(dev, "MNIC_IOC_INFO", mnic_last_error(dev)->err);
	if (opt.json) {
		jopen(NULL, '{');
		jstr("state", mnic_state_name(di.state));
		jstr("board", di.board_name);
		jstr("fw_version", ver_str(di.fw_version, ver));
		jnum("cmdq_status", di.cmdq_status);
		jnum("fatal_reason", h->fatal_reason);
		jnum("fatal_detail", h->fatal_detail);
		jnum("fatal_pc", h->fatal_pc);
		jnum("uptime_ns", h->uptime_ns);
		jnum("heartbeat", h->heartbeat);
		jnum("rx_frames", h->rx_frames);
		jnum("tx_frames", h->tx_frames);
		jnum("rx_dropped", h->rx_dropped);
		jclose('}');
	} else {
		printf("state       %s (%s, firmware %s)\n", mnic_state_name(di.state), di.board_name,
		       ver_str(di.fw_version, ver));
		if (h->fatal_reason)
			printf("fatal       reason %u detail 0x%x pc 0x%llx\n", h->fatal_reason,
			       h->fatal_detail, (unsigned long long)h->fatal_pc);
		else
			printf("fatal       none\n");
		printf("uptime      %.3f s  heartbeat %llu\n", (double)h->uptime_ns / 1e9,
		       (unsigned long long)h->heartbeat);
		printf("port        rx %llu  tx %llu  rx dropped %llu\n",
		       (unsigned long long)h->rx_frames, (unsigned long long)h->tx_frames,
		       (unsigned long long)h->rx_dropped);
	}
	return di.state == MNIC_STATE_READY ? MNICCTL_OK : MNICCTL_FAILED;
}

static const struct {
	const char *flag, *name;
	uint32_t group;
} counter_groups[] = {
	{"--engine", "engine", MNIC_COUNTERS_ENGINE},
	{"--mgmt", "mgmt", MNIC_COUNTERS_MGMT},
	{"--port", "port", MNIC_COUNTERS_PORT},
};
#define N_GROUPS (sizeof(counter_groups) / sizeof(counter_groups[0]))

static int cmd_counters(struct mnic_dev *dev, int argc, const char **argv)
{
	int want[N_GROUPS] = {0}, any = 0, rc = MNICCTL_OK;
	struct mnic_counter *c;

	for (int i = 1; i < argc; i++) {
		size_t g;

		for (g = 0; g < N_GROUPS; g++)
			if (!strcmp(argv[i], counter_groups[g].flag))
				break;
		if (g == N_GROUPS)
			return mnicctl_usage("counters: unknown option %s (--engine, --mgmt, --port)",
					 argv[i]);
		want[g] = any = 1;
	}
	c = calloc(4096, sizeof(*c));
	if (!c)
		return MNICCTL_DEVICE;
	if (opt.json)
		jopen(NULL, '{');
	for (size_t g = 0; g < N_GROUPS; g++) {
		uint32_t total = 0;
		int n;

		if (any && !want[g])
			continue;
		n = mnic_query_counters(dev, counter_groups[g].group, c, 4096, &total);
		if (n < 0) {
			rc = dev_fail(dev, "QUERY_COUNTERS", n);
			break;
		}
		if (opt.json)
			jopen(counter_groups[g].name, '{');
		else
			printf("%s counters (%d of %u)\n", counter_groups[g].name, n, total);
		for (int i = 0; i < n; i++) {
			if (opt.json)
				jnum(c[i].name, c[i].value);
			else
				printf("  %-24s %llu\n", c[i].name, (unsigned long long)c[i].value);
		}
		if (opt.json)
			jclose('}');
	}
	if (opt.json)
		jclose('}');
	free(c);
	return rc;
}

/* ---- qp list / show ---------------------------------------------------------------- */

static void print_qp(uint32_t qpn, const struct mnic_cmd_query_qp_out *q)
{
	const struct mnic_qp_attr *a = &q->attr;
	char mac[18], ip[INET6_ADDRSTRLEN];

	if (opt.json) {
		jopen(NULL, '{');
		jnum("qpn", qpn);
		jstr("state", mnic_qp_state_name(a->qp_state));
		jnum("path_mtu", a->path_mtu);
		jnum("dest_qp_num", a->dest_qp_num);
		jstr("dgid", gid_str(a->dgid, ip));
		jnum("sgid_index", a->sgid_index);
		jstr("dmac", mac_str(a->dmac, mac));
		jnum("sq_psn", a->sq_psn);
		jnum("rq_psn", a->rq_psn);
		jnum("access", a->qp_access_flags);
		jnum("timeout", a->timeout);
		jnum("retry_cnt", a->retry_cnt);
		jnum("rnr_retry", a->rnr_retry);
		jnum("min_rnr_timer", a->min_rnr_timer);
		jnum("max_rd_atomic", a->max_rd_atomic);
		jnum("max_dest_rd_atomic", a->max_dest_rd_atomic);
		jnum("stopped", !!(q->mig_flags & MNIC_QP_F_STOPPED));
		jnum("paused", !!(q->mig_flags & MNIC_QP_F_PAUSED));
		jnum("has_mig_key", !!(q->mig_flags & MNIC_QP_F_HAS_KEY));
		jclose('}');
		return;
	}
	printf("qp 0x%06x  %-5s  mtu %u  peer qp 0x%06x at %s (%s)  sq_psn 0x%06x  rq_psn 0x%06x"
	       "%s%s%s\n", qpn, mnic_qp_state_name(a->qp_state), a->path_mtu, a->dest_qp_num,
	       gid_str(a->dgid, ip), mac_str(a->dmac, mac), a->sq_psn, a->rq_psn,
	       q->mig_flags & MNIC_QP_F_STOPPED ? "  STOPPED" : "",
	       q->mig_flags & MNIC_QP_F_PAUSED ? "  PAUSED" : "",
	       q->mig_flags & MNIC_QP_F_HAS_KEY ? "  mig-key" : "");
}

static int cmd_qp(struct mnic_dev *dev, int argc, const char **argv)
{
	struct mnic_cmd_query_qp_out q;
	uint32_t qpn;
	int err;

	if (argc >= 2 && !strcmp(argv[1], "show")) {
		if (argc != 3 || mnicctl_parse_u32(argv[2], &qpn) || qpn > 0xffffff)
			return mnicctl_usage("qp show QPN (a 24-bit number, e.g. 0x001001)");
		err = mnic_query_qp(dev, qpn, &q);
		if (err < 0)
			return dev_fail(dev, "QUERY_QP", err);
		print_qp(qpn, &q);
		return MNICCTL_OK;
	}
	if (argc == 2 && !strcmp(argv[1], "list")) {
		/* QUERY_QP op_mod MNIC_QUERY_QP_NEXT: the first live QP at or
		 * after the slot of `handle` (mnic/cmd.h) */
		struct mnic_cmd_handle_in in;
		int n = 0;

		if (opt.json)
			jopen(NULL, '[');
		for (uint32_t next = 0;;) {
			memset(&in, 0, sizeof(in));
			in.hdr.opcode = MNIC_CMD_QUERY_QP;
			in.hdr.op_mod = MNIC_QUERY_QP_NEXT;
			in.handle = next;
			err = mnic_cmd(dev, &in, sizeof(in), &q, sizeof(q), NULL);
			if (err == -ENXIO)
				break;   /* no QP at or after `next` */
			if (err < 0) {
				if (opt.json)
					jclose(']');
				return dev_fail(dev, "QUERY_QP (next)", err);
			}
			if (q.reserved > 0xffffff || (n > 0 && (q.reserved & 0xfffu) < (next & 0xfffu))) {
				fprintf(stderr, "mnicctl: QUERY_QP (next) went backwards\n");
				return MNICCTL_DEVICE;
			}
			print_qp(q.reserved, &q);
			n++;
			next = (q.reserved & 0xfffu) + 1;
			if (next > 0xfffu || n > 4096)
				break;
		}
		if (opt.json)
			jclose(']');
		else
			printf("%d QPs\n", n);
		return MNICCTL_OK;
	}
	return mnicctl_usage("qp list | qp show QPN");
}

/* ---- migration ----------------------------------------------------------------------- */

static const char *const type_long[] = {"PD", "MR", "CQ", "SRQ", "QP", "QP(SRQ)"};

static void print_dump_stats(const struct mnic_cmd_dump_out *s, uint32_t len)
{
	if (opt.json) {
		jnum("image_bytes", len);
		jopen("objects", '{');
		for (int t = 0; t < 6; t++) {
			jopen(type_long[t], '{');
			jnum("count", s->objects[t]);
			jnum("bytes", s->bytes[t]);
			jclose('}');
		}
		jclose('}');
		return;
	}
	printf("image       %u bytes\n", len);
	for (int t = 0; t < 6; t++)
		if (s->objects[t])
			printf("  %-8s %5u objects %8u bytes\n", type_long[t], s->objects[t],
			       s->bytes[t]);
}

/* ---- contexts (mnic/cmd.h "contexts") ---------------------------------------- */

/* `--ctx ID` or `--pid PID` at argv[*i]: act as that context (its commands,
 * its user-area range).  Returns 1 when consumed (and *i moved past it), 0
 * when argv[*i] is not one of them, or an MNICCTL_* error code < 0. */
static int take_ctx_opt(struct mnic_dev *dev, int *i, int argc, const char **argv)
{
	struct mnic_ctx_info ci;
	uint32_t v;
	int err;

	if (strcmp(argv[*i], "--ctx") && strcmp(argv[*i], "--pid"))
		return 0;
	if (*i + 1 >= argc || mnicctl_parse_u32(argv[*i + 1], &v) || v == 0)
		return -mnicctl_usage("%s needs a number > 0", argv[*i]);
	if (!strcmp(argv[*i], "--pid")) {
		err = mnic_find_context(dev, v, &ci);
		if (err == -ESRCH) {
			fprintf(stderr, "mnicctl: %s: no context belongs to pid %u (`mnicctl ctx "
				"list` shows the owners)\n", mnic_dev_path(dev), v);
			return -MNICCTL_FAILED;
		}
		if (err < 0)
			return -dev_fail(dev, "QUERY_CONTEXT", err);
		v = ci.ctx;
	}
	err = mnic_adopt_context(dev, v);
	if (err == -EPERM) {
		fprintf(stderr, "mnicctl: %s: acting for a context needs the BAR backend (through "
			"/dev/mnicN the process checkpoints itself)\n", mnic_dev_path(dev));
		return -MNICCTL_USAGE;
	}
	if (err < 0)
		return -dev_fail(dev, "QUERY_CONTEXT", err);
	*i += 1;
	return 1;
}

static void print_ctx(const struct mnic_ctx_info *c)
{
	int gone = c->owner_tag > 1 && kill((pid_t)c->owner_tag, 0) < 0 && errno == ESRCH;

	if (opt.json) {
		jopen(NULL, '{');
		jnum("ctx", c->ctx);
		jnum("owner", c->owner_tag);
		jstr("owner_state", c->owner_tag ? (gone ? "gone" : "alive") : "none");
		jnum("ua_offset", c->ua_offset);
		jnum("ua_size", c->ua_size);
		jnum("pd", c->n_pd);
		jnum("mr", c->n_mr);
		jnum("cq", c->n_cq);
		jnum("srq", c->n_srq);
		jnum("qp", c->n_qp);
		jstr("state", c->flags & MNIC_CTX_F_STOPPED ? "stopped" : "running");
		jclose('}');
	} else {
		printf("ctx %-3u owner %-8u%-6s ua 0x%08llx+0x%llx  pd %u mr %u cq %u srq %u qp %u%s\n",
		       c->ctx, c->owner_tag, c->owner_tag ? (gone ? " gone" : "") : "",
		       (unsigned long long)c->ua_offset, (unsigned long long)c->ua_size, c->n_pd,
		       c->n_mr, c->n_cq, c->n_srq, c->n_qp,
		       c->flags & MNIC_CTX_F_STOPPED ? "  stopped" : "");
	}
}

static int cmd_ctx(struct mnic_dev *dev, int argc, const char **argv)
{
	static const char use[] = "ctx list | ctx show ID | ctx alloc --size BYTES [--at OFFSET] "
				  "[--owner TAG] | ctx free ID | ctx reap";
	struct mnic_ctx_info ci;
	uint32_t id;
	int err, n = 0;

	if (argc == 2 && !strcmp(argv[1], "list")) {
		if (opt.json)
			jopen(NULL, '[');
		for (uint32_t next = 1; next <= MNIC_CTX_MAX; next = ci.ctx + 1) {
			err = mnic_query_context(dev, next, 1, &ci);
			if (err == -ENXIO)
				break;
			if (err < 0)
				return dev_fail(dev, "QUERY_CONTEXT", err);
			print_ctx(&ci);
			n++;
		}
		if (opt.json)
			jclose(']');
		else if (n == 0)
			printf("no contexts\n");
		return MNICCTL_OK;
	}
	if (argc == 3 && !strcmp(argv[1], "show")) {
		if (mnicctl_parse_u32(argv[2], &id) || id == 0 || id > MNIC_CTX_MAX)
			return mnicctl_usage("ctx show ID (1..%u)", MNIC_CTX_MAX);
		err = mnic_query_context(dev, id, 0, &ci);
		if (err < 0)
			return dev_fail(dev, "QUERY_CONTEXT", err);
		print_ctx(&ci);
		return MNICCTL_OK;
	}
	if (argc == 3 && !strcmp(argv[1], "free")) {
		if (mnicctl_parse_u32(argv[2], &id) || id == 0 || id > MNIC_CTX_MAX)
			return mnicctl_usage("ctx free ID (1..%u)", MNIC_CTX_MAX);
		err = mnic_dealloc_context(dev, id);
		if (err < 0)
			return dev_fail(dev, "DEALLOC_CONTEXT", err);
		printf("ctx %u freed\n", id);
		return MNICCTL_OK;
	}
	if (argc == 2 && !strcmp(argv[1], "reap")) {
		err = mnic_reap_contexts(dev);
		if (err < 0)
			return dev_fail(dev, "reap contexts", err);
		printf("reaped %d context%s of processes that are gone\n", err, err == 1 ? "" : "s");
		return MNICCTL_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "alloc")) {
		uint64_t at = 0, size = 0;
		uint32_t owner = 0;

		for (int i = 2; i < argc; i++) {
			char *end;

			if (i + 1 >= argc)
				return mnicctl_usage("%s", use);
			if (!strcmp(argv[i], "--size") || !strcmp(argv[i], "--at")) {
				unsigned long long v = strtoull(argv[i + 1], &end, 0);

				if (*end || !*argv[i + 1])
					return mnicctl_usage("%s needs a number", argv[i]);
				*(!strcmp(argv[i], "--size") ? &size : &at) = v;
			} else if (!strcmp(argv[i], "--owner")) {
				if (mnicctl_parse_u32(argv[i + 1], &owner))
					return mnicctl_usage("--owner needs a number");
			} else {
				return mnicctl_usage("%s", use);
			}
			i++;
		}
		if (!size)
			return mnicctl_usage("ctx alloc needs --size BYTES (a multiple of 0x%x)",
					     MNIC_CTX_UA_ALIGN);
		err = mnic_alloc_context(dev, at, size, owner, &ci);
		if (err < 0)
			return dev_fail(dev, "ALLOC_CONTEXT", err);
		print_ctx(&ci);
		return MNICCTL_OK;
	}
	return mnicctl_usage("%s", use);
}

static int cmd_dump(struct mnic_dev *dev, int argc, const char **argv)
{
	struct mnic_cmd_query_device_out q;
	struct mnic_cmd_dump_out st;
	const char *out = NULL;
	struct out_file of;
	uint8_t *img;
	uint32_t len;
	double t0;
	int err, rc;

	for (int i = 1; i < argc; i++) {
		if ((rc = take_ctx_opt(dev, &i, argc, argv)) < 0)
			return -rc;
		if (rc)
			continue;
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else
			return mnicctl_usage("dump -o IMG [--ctx ID | --pid PID]");
	}
	if (!out)
		return mnicctl_usage("dump needs -o IMG");
	/* Whether the context runs now: a dump that cannot be kept is undone
	 * only if this dump is what stopped it. */
	err = mnic_query_device(dev, &q);
	if (err < 0)
		return dev_fail(dev, "QUERY_DEVICE", err);
	if ((rc = out_open(&of, out)) != MNICCTL_OK)
		return rc;   /* nothing stopped */
	if (!opt.json)
		fprintf(stderr, "dump: stopping the QPs of the context and dumping it (%s) ...\n",
			mnic_dev_path(dev));
	t0 = now_ms();
	err = mnic_dump_context(dev, 0, &img, &len, &st);
	if (err < 0) {
		out_discard(&of);
		return dev_fail(dev, "DUMP_CONTEXT", err);
	}
	rc = out_commit(&of, img, len);
	free(img);
	if (rc) {
		/* The image is lost: a stopped context without it would only
		 * wait for its peers' pause timeout.  Resume it in place. */
		if (q.flags & MNIC_DEV_F_STOPPED)
			fprintf(stderr, "mnicctl: %s: no image written; the context was stopped "
				"before this dump and stays stopped\n", mnic_dev_path(dev));
		else if ((err = mnic_abort_dump(dev)) < 0)
			fprintf(stderr, "mnicctl: %s: no image written, and ABORT_DUMP failed (%s): "
				"the context stays stopped; run `mnicctl -d %s abort`\n",
				mnic_dev_path(dev), strerror(-err), mnic_dev_path(dev));
		else
			fprintf(stderr, "mnicctl: %s: no image written; dump aborted, the context "
				"runs on here\n", mnic_dev_path(dev));
		return rc;
	}
	if (opt.json) {
		jopen(NULL, '{');
		jstr("file", out);
		jdbl("dump_ms", now_ms() - t0);
		print_dump_stats(&st, len);
		jclose('}');
	} else {
		printf("dumped      %s in %.3f ms (the context stays stopped: `resume` on the "
		       "target, or `abort` here)\n", out, now_ms() - t0);
		print_dump_stats(&st, len);
	}
	return MNICCTL_OK;
}

static int check_image(const uint8_t *img, size_t len, const char *name)
{
	char err[256];
	int rc = mnic_img_parse(img, len, NULL, NULL, NULL, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "mnicctl: %s: %s\n", name, err);
		return MNICCTL_FAILED;
	}
	return MNICCTL_OK;
}

static int cmd_restore(struct mnic_dev *dev, int argc, const char **argv)
{
	struct mnic_peer_override ov;
	const char *in = NULL;
	int have_ov = 0, rc, err;
	uint8_t *img;
	size_t len;
	double t0;

	memset(&ov, 0, sizeof(ov));
	for (int i = 1; i < argc; i++) {
		if ((rc = take_ctx_opt(dev, &i, argc, argv)) < 0)
			return -rc;
		if (rc)
			continue;
		if (!strcmp(argv[i], "-i") && i + 1 < argc)
			in = argv[++i];
		else if (!strcmp(argv[i], "--peer-override") && i + 1 < argc) {
			if (mnicctl_parse_override(argv[++i], &ov))
				return mnicctl_usage("--peer-override OLDIP=NEWIP,MAC (e.g. "
						 "10.0.0.2=10.0.0.4,52:54:00:00:00:04)");
			have_ov = 1;
		} else
			return mnicctl_usage("restore -i IMG [--peer-override OLDIP=NEWIP,MAC] "
					     "[--ctx ID]");
	}
	if (!in)
		return mnicctl_usage("restore needs -i IMG");
	rc = read_file(in, &img, &len);
	if (rc)
		return rc;
	rc = check_image(img, len, in);
	if (rc) {
		free(img);
		return rc;
	}
	t0 = now_ms();
	err = mnic_restore_image(dev, img, (uint32_t)len, have_ov ? &ov : NULL);
	free(img);
	if (err < 0)
		return dev_fail(dev, "RESTORE_OBJECT(IMAGE)", err);
	if (opt.json) {
		jopen(NULL, '{');
		jstr("file", in);
		jnum("image_bytes", len);
		jdbl("restore_ms", now_ms() - t0);
		jclose('}');
	} else {
		printf("restored    %s (%zu bytes) in %.3f ms; QPs stay stopped until `resume`\n",
		       in, len, now_ms() - t0);
	}
	return MNICCTL_OK;
}

/* MIG_CONFIG: every field set (pause bound 0: each QP's retry_cnt x timeout). */
static int cmd_mig_config(struct mnic_dev *dev, int argc, const char **argv)
{
	uint32_t pause = 0, budget = 0, flags = 0;
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pause-ms") && i + 1 < argc &&
		    !mnicctl_parse_u32(argv[i + 1], &pause))
			i++;
		else if (!strcmp(argv[i], "--resume-budget-ms") && i + 1 < argc &&
			 !mnicctl_parse_u32(argv[i + 1], &budget))
			i++;
		else if (!strcmp(argv[i], "--unkeyed"))
			flags |= MNIC_MIG_CFG_UNKEYED;
		else
			return mnicctl_usage("mig-config [--pause-ms MS] [--resume-budget-ms MS] [--unkeyed]");
	}
	err = mnic_mig_config_flags(dev, pause, budget, flags);
	if (err < 0)
		return dev_fail(dev, "MIG_CONFIG", err);
	if (opt.json) {
		jopen(NULL, '{');
		jnum("pause_timeout_ms", pause);
		jnum("resume_budget_ms", budget);
		jnum("mig_unkeyed", !!flags);
		jclose('}');
	} else {
		printf("MIG_CONFIG: pause bound %u ms, RESUME budget %u ms (0: per QP, retry_cnt x "
		       "timeout), %s\n", pause, budget,
		       flags ? "unkeyed RESUME accepted" : "keyed QPs only");
	}
	return MNICCTL_OK;
}

static int cmd_simple(struct mnic_dev *dev, int argc, const char **argv)
{
	int err, rc;

	for (int i = 1; i < argc; i++) {
		if ((rc = take_ctx_opt(dev, &i, argc, argv)) < 0)
			return -rc;
		if (!rc)
			return mnicctl_usage("%s [--ctx ID | --pid PID]", argv[0]);
	}
	err = !strcmp(argv[0], "resume") ? mnic_resume_context(dev) : mnic_abort_dump(dev);
	if (err < 0)
		return dev_fail(dev, !strcmp(argv[0], "resume") ? "RESUME_CONTEXT" : "ABORT_DUMP",
				err);
	if (opt.json) {
		jopen(NULL, '{');
		jstr("done", argv[0]);
		jclose('}');
	} else {
		printf("%s: ok\n", argv[0]);
	}
	return MNICCTL_OK;
}

/* migrate: live migration of one or two contexts, as a checkpoint tool
 * (CRIU) would do it with the NIC's help (docs/migration-howto.md):
 *
 *   --from A --to B [--pid P] [--notify F]   one pair; repeat the group for
 *                                            both ends of a connection at once
 *   1. freeze   SIGSTOP every --pid, wait until the kernel shows it stopped
 *   2. checkpoint  DUMP_CONTEXT on every source (its QPs stop, peers pause)
 *      [--after-dump CMD: run CMD through sh; non-zero cancels everything]
 *   3. transfer    copy every source's user area (the process's NIC memory:
 *                  rings, buffers, allocator) to its target
 *   4. restore     the image on the target; with two pairs each target gets
 *                  the other pair's move as peer-address override
 *   5. resume      RESUME_CONTEXT on every target (RESUME to the peers)
 *   6. thaw        write the target's path to --notify F, SIGUSR1 (the
 *                  process maps the target BAR in place: mnic_reopen_inplace),
 *                  SIGCONT
 * Steps 2-5 are libmnic's migration sequence (mnic_mig_*); mnicctl is the
 * caller: devices, freeze and thaw, --after-dump, the report.  A failure
 * before 5 aborts every dump (sources resume in place) and thaws the
 * processes without a notify.  The sources keep their stopped objects (the
 * caller tears them down). */

/* The caller's side of one pair: its arguments, devices and process. */
struct mig_proc {
	const char *from, *to, *notify;
	long pid;
	uint32_t ctx;                  /* --ctx, or the context --pid owns on `from` */
	struct mnic_dev *a, *b;
	int frozen;
};

static double epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* SIGSTOP is asynchronous: wait until /proc shows the process stopped
 * (state T), so that no store of it can land after the copy. */
static int freeze_pid(long pid)
{
	char path[64], buf[512];

	if (kill((pid_t)pid, SIGSTOP) < 0) {
		fprintf(stderr, "mnicctl: cannot stop pid %ld: %s\n", pid, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "r");
		char *p = NULL;
		size_t n = 0;

		if (f) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = '\0';
		p = strrchr(buf, ')');   /* the command name may hold spaces */
		if (p && p[1] == ' ' && (p[2] == 'T' || p[2] == 't'))
			return 0;
		usleep(200);
	}
	fprintf(stderr, "mnicctl: pid %ld did not stop within 1 s\n", pid);
	return -1;
}

static int write_notify(const char *file, const char *dev)
{
	char tmp[512];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", file) >= (int)sizeof(tmp))
		return -1;
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s\n", dev) < 0 || fclose(f) != 0 || rename(tmp, file) != 0) {
		fprintf(stderr, "mnicctl: cannot write notify file %s: %s\n", file, strerror(errno));
		return -1;
	}
	return 0;
}

static void thaw_pid(struct mig_proc *p, int moved)
{
	if (!p->frozen)
		return;
	if (moved && p->notify && write_notify(p->notify, p->to) == 0)
		kill((pid_t)p->pid, SIGUSR1);   /* pending until SIGCONT: runs first */
	kill((pid_t)p->pid, SIGCONT);
	p->frozen = 0;
}

/* The [n/4] progress line of each pair's step (stderr, human mode). */
static void mig_progress(void *arg, const struct mnic_mig *m, uint32_t i, enum mnic_mig_step step)
{
	const struct mig_proc *pr = arg;

	if (opt.json)
		return;
	switch (step) {
	case MNIC_MIG_STEP_DUMP:
		fprintf(stderr, "[1/4] checkpoint: dump on %s ...\n", pr[i].from);
		break;
	case MNIC_MIG_STEP_TRANSFER:
		fprintf(stderr, "[2/4] transfer: image %u bytes%s ...\n", m->pair[i].img_len,
			m->opts.copy_user_area ? " + user area" : "");
		break;
	case MNIC_MIG_STEP_RESTORE:
		fprintf(stderr, "[3/4] restore on %s ...\n", pr[i].to);
		break;
	case MNIC_MIG_STEP_RESUME:
		fprintf(stderr, "[4/4] resume on %s ...\n", pr[i].to);
		break;
	default:
		break;
	}
}

/* A step of the sequence returned err: report it as any libmnic failure,
 * except the user-area copy, which is not a command. */
static int mig_fail(const struct mnic_mig *m, const struct mig_proc *pr, int err)
{
	const struct mnic_mig_error *e = &m->err;

	if (m->state != MNIC_MIG_FAILED) {   /* the call itself was refused */
		fprintf(stderr, "mnicctl: migrate: %s\n", strerror(-err));
		return MNICCTL_USAGE;
	}
	if (e->step == MNIC_MIG_STEP_TRANSFER && e->err == -EXDEV) {
		fprintf(stderr, "mnicctl: %s -> %s: %s (the user areas must be the same size, and "
				"either both NICs have host memory or neither)\n",
			pr[e->pair].from, pr[e->pair].to, e->what);
		return MNICCTL_DEVICE;
	}
	return dev_fail(e->dev, e->what, e->err);
}

/* One pair's step times and image, as JSON members. */
static void jpair_steps(const struct mnic_mig_pair *mp)
{
	jdbl("checkpoint_ms", mp->checkpoint_ms);
	jdbl("transfer_ms", mp->transfer_ms);
	jdbl("restore_ms", mp->restore_ms);
	jdbl("resume_ms", mp->resume_ms);
	jnum("user_area_bytes", (unsigned long long)mp->user_area_bytes);
	jnum("hostmem_pages", mp->hm.npages);
	jnum("hostmem_same_frames", mp->hm.same_frames);
	jnum("mtts_refilled", mp->hm.mtts);
	print_dump_stats(&mp->stats, mp->img_len);
}

static void print_pair(const struct mig_proc *p, const struct mnic_mig_pair *mp)
{
	if (opt.json) {
		jopen(NULL, '{');
		jstr("from", p->from);
		jstr("to", p->to);
		if (p->pid)
			jnum("pid", (unsigned long long)p->pid);
		jpair_steps(mp);
		jclose('}');
		return;
	}
	printf("migrated    %s -> %s%s\n", p->from, p->to, p->pid ? " (process frozen)" : "");
	printf("checkpoint  %.3f ms\ntransfer    %.3f ms (user area %lld bytes)\n"
	       "restore     %.3f ms\nresume      %.3f ms\n",
	       mp->checkpoint_ms, mp->transfer_ms, (long long)mp->user_area_bytes, mp->restore_ms,
	       mp->resume_ms);
	if (mp->hm.npages)
		printf("host memory %u pages onto the target's (%u at the frame they had), "
		       "%u MTTs refilled\n", mp->hm.npages, mp->hm.same_frames, mp->hm.mtts);
	print_dump_stats(&mp->stats, mp->img_len);
}

/* The caller's clock: freeze to thaw (ms) and the epoch of each phase. */
struct mig_times {
	double frozen, freeze, dumped, restored, resumed, thawed;
};

static void print_migration(const struct mig_proc *pr, const struct mnic_mig *m,
			    const struct mig_times *t)
{
	if (opt.json) {
		jopen(NULL, '{');
		jopen("pairs", '[');
		for (uint32_t i = 0; i < m->n_pairs; i++)
			print_pair(&pr[i], &m->pair[i]);
		jclose(']');
		jdbl("frozen_ms", t->frozen);
		jdbl("epoch_freeze_ms", t->freeze);
		jdbl("epoch_dumped_ms", t->dumped);
		jdbl("epoch_restored_ms", t->restored);
		jdbl("epoch_resumed_ms", t->resumed);
		jdbl("epoch_thawed_ms", t->thawed);
		if (m->n_pairs == 1)   /* the one-pair keys at top level, as before */
			jpair_steps(&m->pair[0]);
		jclose('}');
		return;
	}
	for (uint32_t i = 0; i < m->n_pairs; i++)
		print_pair(&pr[i], &m->pair[i]);
	printf("frozen      %.3f ms (freeze to thaw)\n", t->frozen);
	printf("timeline    freeze %.3f dumped %.3f restored %.3f resumed %.3f thawed %.3f "
	       "(epoch ms)\n", t->freeze, t->dumped, t->restored, t->resumed, t->thawed);
}

/* The context a pair moves: --ctx, else the one --pid owns on the source
 * (its owner tag), else the management context's objects. */
static int mig_select_ctx(struct mig_proc *p)
{
	struct mnic_ctx_info ci;
	int err;

	if (!p->ctx && p->pid) {
		err = mnic_find_context(p->a, (uint32_t)p->pid, &ci);
		if (err == -ESRCH) {
			fprintf(stderr, "mnicctl: %s: pid %ld has no context there (`mnicctl -d %s "
				"ctx list` shows the owners)\n", p->from, p->pid, p->from);
			return MNICCTL_FAILED;
		}
		if (err < 0)
			return dev_fail(p->a, "QUERY_CONTEXT", err);
		p->ctx = ci.ctx;
	}
	if (p->notify) {
		/* host memory: the process maps its moved pages from the file next
		 * to the target's BAR (mnic_reopen_inplace) */
		struct mnic_hostmem_info hm;
		char path[512];

		err = mnic_hostmem_info(p->b, &hm);
		if (err < 0)
			return dev_fail(p->b, "QUERY_DEVICE", err);
		snprintf(path, sizeof(path), "%s.hostmem", p->to);
		if (hm.aperture && access(path, R_OK | W_OK) != 0) {
			fprintf(stderr, "mnicctl: %s has host memory: the process finds it as %s "
				"(give that NIC --hostmem %s)\n", p->to, path, path);
			return MNICCTL_USAGE;
		}
	}
	if (!p->ctx)
		return MNICCTL_OK;
	err = mnic_adopt_context(p->a, p->ctx);
	if (err < 0)
		return dev_fail(p->a, "QUERY_CONTEXT", err);
	return MNICCTL_OK;
}

static int cmd_migrate(struct mnic_dev *unused, int argc, const char **argv)
{
	static const char use[] =
		"migrate --from DEV_A --to DEV_B [--copy-user-area] [--ctx ID] [--pid PID [--notify FILE]] "
		"[--peer-override OLDIP=NEWIP,MAC] [--after-dump CMD] (repeat --from.. for a second "
		"pair)";
	struct mig_proc pr[MNIC_MIG_MAX_PAIRS];
	struct mnic_mig mig;
	struct mnic_mig_opts mo;
	struct mnic_peer_override ov;
	const char *after = NULL;
	int np = 0, copy = 0, have_ov = 0, rc = MNICCTL_OK, err;
	struct mig_times t = {0};
	double t_frozen0;

	(void)unused;
	memset(pr, 0, sizeof(pr));
	memset(&ov, 0, sizeof(ov));
	for (int i = 1; i < argc; i++) {
		struct mig_proc *p = np ? &pr[np - 1] : NULL;
		uint32_t v;

		if (!strcmp(argv[i], "--from") && i + 1 < argc) {
			if (np == MNIC_MIG_MAX_PAIRS)
				return mnicctl_usage("migrate: at most %u --from/--to pairs",
						 MNIC_MIG_MAX_PAIRS);
			pr[np++].from = argv[++i];
		} else if (!strcmp(argv[i], "--to") && i + 1 < argc && p && !p->to) {
			p->to = argv[++i];
		} else if (!strcmp(argv[i], "--pid") && i + 1 < argc && p && !p->pid) {
			if (mnicctl_parse_u32(argv[++i], &v) || v < 2)
				return mnicctl_usage("--pid PID (the process to freeze, > 1)");
			p->pid = (long)v;
		} else if (!strcmp(argv[i], "--ctx") && i + 1 < argc && p && !p->ctx) {
			if (mnicctl_parse_u32(argv[++i], &v) || v == 0 || v > MNIC_CTX_MAX)
				return mnicctl_usage("--ctx ID (1..%u)", MNIC_CTX_MAX);
			p->ctx = v;
		} else if (!strcmp(argv[i], "--notify") && i + 1 < argc && p && !p->notify) {
			p->notify = argv[++i];
		} else if (!strcmp(argv[i], "--copy-user-area")) {
			copy = 1;
		} else if (!strcmp(argv[i], "--after-dump") && i + 1 < argc) {
			after = argv[++i];
		} else if (!strcmp(argv[i], "--peer-override") && i + 1 < argc) {
			if (mnicctl_parse_override(argv[++i], &ov))
				return mnicctl_usage("--peer-override OLDIP=NEWIP,MAC");
			have_ov = 1;
		} else {
			return mnicctl_usage("%s", use);
		}
	}
	if (np == 0)
		return mnicctl_usage("migrate needs --from DEV_A and --to DEV_B");
	for (int i = 0; i < np; i++) {
		if (!pr[i].to)
			return mnicctl_usage("migrate: --from %s has no --to", pr[i].from);
		if (pr[i].notify && !pr[i].pid)
			return mnicctl_usage("migrate: --notify needs --pid");
		if (pr[i].pid)
			copy = 1;   /* a process's memory always moves with it */
	}
	if (have_ov && np > 1)
		return mnicctl_usage("migrate: with two pairs the peer overrides are derived; "
				 "drop --peer-override");

	memset(&mo, 0, sizeof(mo));
	mo.copy_user_area = copy;
	mo.override = have_ov ? &ov : NULL;
	mo.progress = mig_progress;
	mo.arg = pr;
	if (mnic_mig_begin(&mig, &mo) < 0)
		return mnicctl_usage("--peer-override OLDIP=NEWIP,MAC");
	for (int i = 0; i < np && rc == MNICCTL_OK; i++) {
		rc = open_dev(pr[i].from, 0, &pr[i].a);
		if (rc == MNICCTL_OK)
			rc = open_dev(pr[i].to, 0, &pr[i].b);
		if (rc == MNICCTL_OK) {
			mnic_set_cmd_timeout(pr[i].a, opt.timeout_ms ? opt.timeout_ms : 60000);
			mnic_set_cmd_timeout(pr[i].b, opt.timeout_ms ? opt.timeout_ms : 60000);
			rc = mig_select_ctx(&pr[i]);
		}
		if (rc == MNICCTL_OK) {
			err = mnic_mig_add_pair(&mig, pr[i].a, pr[i].b);
			if (err < 0)
				rc = mig_fail(&mig, pr, err);
		}
	}
	if (rc != MNICCTL_OK)
		goto out;

	/* 1. freeze */
	t.freeze = epoch_ms();
	t_frozen0 = now_ms();
	for (int i = 0; i < np; i++) {
		if (!pr[i].pid)
			continue;
		if (!opt.json)
			fprintf(stderr, "[0/4] freeze: pid %ld\n", pr[i].pid);
		pr[i].frozen = 1;
		if (freeze_pid(pr[i].pid) < 0) {
			rc = MNICCTL_FAILED;
			goto cancel;
		}
	}
	/* 2. checkpoint */
	err = mnic_mig_dump(&mig);
	if (err < 0) {
		rc = mig_fail(&mig, pr, err);
		goto cancel;
	}
	t.dumped = epoch_ms();
	if (after) {
		fflush(stdout);
		err = system(after);
		if (err != 0) {
			fprintf(stderr, "mnicctl: --after-dump command failed (status %d): "
					"migration cancelled\n", err);
			rc = MNICCTL_FAILED;
			goto cancel;
		}
	}
	/* 3. transfer, 4. restore */
	err = mnic_mig_transfer(&mig);
	if (err == 0)
		err = mnic_mig_restore(&mig);
	if (err < 0) {
		rc = mig_fail(&mig, pr, err);
		goto cancel;
	}
	t.restored = epoch_ms();
	/* 5. resume; a failure is past the point of no return: thaw onto the target */
	err = mnic_mig_resume(&mig);
	if (err < 0)
		rc = mig_fail(&mig, pr, err);
	t.resumed = epoch_ms();
	/* 6. thaw */
	for (int i = 0; i < np; i++)
		thaw_pid(&pr[i], 1);
	t.thawed = epoch_ms();
	t.frozen = now_ms() - t_frozen0;
	if (rc != MNICCTL_OK)
		goto out;
	print_migration(pr, &mig, &t);
	goto out;
cancel:
	/* nothing resumed yet: every dumped source resumes in place */
	mnic_mig_abort(&mig);
	for (int i = 0; i < np; i++)
		if (mig.pair[i].aborted)
			fprintf(stderr, "mnicctl: %s resumed in place (ABORT_DUMP)\n", pr[i].from);
	for (int i = 0; i < np; i++)
		thaw_pid(&pr[i], 0);
out:
	mnic_mig_end(&mig);
	for (int i = 0; i < np; i++) {
		mnic_close(pr[i].a);
		mnic_close(pr[i].b);
	}
	return rc;
}

/* ---- create / destroy: objects by handle (setup and teardown from
 * scripts; the objects outlive mnicctl, as any BAR-backend object does) -- */

static int print_handle(const char *what, uint32_t h, uint32_t h2)
{
	if (opt.json) {
		jopen(NULL, '{');
		jstr("object", what);
		jnum("handle", h);
		if (h2)
			jnum("rkey", h2);
		jclose('}');
	} else {
		printf("%s 0x%x", what, h);
		if (h2)
			printf(" rkey 0x%x", h2);
		printf("\n");
	}
	return MNICCTL_OK;
}

static int cmd_create(struct mnic_dev *dev, int argc, const char **argv)
{
	uint32_t a = 0, b = 0;
	int err;

	if (argc == 2 && !strcmp(argv[1], "pd")) {
		struct mnic_pd *pd;

		err = mnic_alloc_pd(dev, &pd);
		if (err < 0)
			return dev_fail(dev, "ALLOC_PD", err);
		print_handle("pd", pd->handle, 0);
		free(pd);   /* the PD stays on the NIC; only the library's struct goes */
		return MNICCTL_OK;
	}
	if (argc == 3 && !strcmp(argv[1], "cq") && !mnicctl_parse_u32(argv[2], &a)) {
		struct mnic_cq *cq;

		err = mnic_create_cq(dev, a, &cq);
		if (err < 0)
			return dev_fail(dev, "CREATE_CQ", err);
		print_handle("cq", cq->handle, 0);
		free(cq);
		return MNICCTL_OK;
	}
	if (argc == 4 && !strcmp(argv[1], "mr") && !mnicctl_parse_u32(argv[2], &a) &&
	    !mnicctl_parse_u32(argv[3], &b)) {
		struct mnic_pd pd = {.dev = dev, .handle = a};
		struct mnic_buf buf;
		struct mnic_mr *mr;

		err = mnic_alloc(dev, b, 4096, &buf);
		if (err < 0)
			return dev_fail(dev, "alloc", err);
		err = mnic_reg_mr(&pd, buf.addr, b, MNIC_ACCESS_LOCAL_WRITE |
				  MNIC_ACCESS_REMOTE_WRITE | MNIC_ACCESS_REMOTE_READ, &mr);
		if (err < 0) {
			int rc = dev_fail(dev, "REG_MR", err);

			mnic_free(dev, buf.addr);   /* a refused create leaves nothing */
			return rc;
		}
		/* the memory goes with the MR: `destroy mr LKEY` returns it */
		mnic_mem_bind(dev, buf.addr, MNIC_OBJ_MR, mr->lkey);
		print_handle("mr", mr->lkey, mr->rkey);
		free(mr);
		return MNICCTL_OK;
	}
	if (argc == 4 && !strcmp(argv[1], "qp") && !mnicctl_parse_u32(argv[2], &a) &&
	    !mnicctl_parse_u32(argv[3], &b)) {
		struct mnic_pd pd = {.dev = dev, .handle = a};
		struct mnic_cq cq = {.dev = dev, .handle = b};
		struct mnic_qp_init_attr qa = {.pd = &pd, .send_cq = &cq, .recv_cq = &cq,
					       .max_send_wr = 16, .max_recv_wr = 16,
					       .max_send_sge = 1, .max_recv_sge = 1};
		struct mnic_qp *qp;
		uint32_t qpn;

		err = mnic_create_qp(&qa, &qp);
		if (err < 0)
			return dev_fail(dev, "CREATE_QP", err);
		qpn = qp->qp_num;
		/* forget the library's struct without destroying the QP */
		mnic_track_qp_forget(dev, qp);
		return print_handle("qp", qpn, 0);
	}
	return mnicctl_usage("create pd | create cq ENTRIES | create mr PD LEN | create qp PD CQ");
}

static int cmd_destroy(struct mnic_dev *dev, int argc, const char **argv)
{
	static const struct {
		const char *name;
		enum mnic_obj_kind kind;   /* MNIC_OBJ_NONE: the PD, which holds no memory */
	} kinds[] = {
		{"pd", MNIC_OBJ_NONE}, {"mr", MNIC_OBJ_MR}, {"cq", MNIC_OBJ_CQ},
		{"srq", MNIC_OBJ_SRQ}, {"qp", MNIC_OBJ_QP},
	};
	uint32_t h;
	int err;

	for (size_t i = 0; argc == 3 && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(argv[1], kinds[i].name))
			continue;
		if (mnicctl_parse_u32(argv[2], &h))
			break;
		if (kinds[i].kind == MNIC_OBJ_NONE) {
			struct mnic_pd *pd = malloc(sizeof(*pd));

			if (!pd)
				return dev_fail(dev, "DEALLOC_PD", -ENOMEM);
			pd->dev = dev;
			pd->handle = h;
			err = mnic_dealloc_pd(pd);   /* frees pd on success */
			if (err < 0)
				free(pd);
		} else {
			/* the object, then the rings and MR memory bound to it */
			err = mnic_destroy_object(dev, kinds[i].kind, h);
		}
		if (err < 0)
			return dev_fail(dev, mnic_opcode_name(mnic_last_error(dev)->opcode), err);
		if (!opt.json)
			printf("destroyed %s 0x%x\n", kinds[i].name, h);
		return MNICCTL_OK;
	}
	return mnicctl_usage("destroy pd|mr|cq|srq|qp HANDLE (mr: the lkey, qp: the QPN)");
}

/* ---- mem: the host-memory figure of the management handle's memory --------------------- */

static int cmd_mem(struct mnic_dev *dev, int argc, const char **argv)
{
	struct mnic_mem_stats st;
	struct mnic_hostmem_info hm;
	struct mnic_ctx_info ci;
	int err;

	(void)argv;
	if (argc > 1)
		return mnicctl_usage("mem takes no arguments");
	memset(&st, 0, sizeof(st));
	memset(&hm, 0, sizeof(hm));
	/* a query makes nothing: no management memory yet is 0 bytes in use */
	err = mnic_find_context(dev, MNIC_OWNER_MGMT_MEM, &ci);
	if (err == 0)
		err = mnic_mem_stats(dev, &st);
	if (err == 0 || err == -ESRCH)
		err = mnic_hostmem_info(dev, &hm) < 0 ? -EIO : err;
	if (err < 0 && err != -ESRCH)
		return dev_fail(dev, "memory", err);
	if (opt.json) {
		jopen(NULL, '{');
		jnum("in_use", st.in_use);
		jnum("allocs", st.allocs);
		jnum("size", st.size);
		jnum("free_blocks", st.free_blocks);
		jnum("largest_free", st.largest_free);
		jnum("hostmem_aperture", hm.aperture);
		jnum("hostmem_free_pages", hm.free_pages);
		jnum("hostmem_pages", hm.pages);
		jclose('}');
		return MNICCTL_OK;
	}
	printf("in use      %llu bytes in %llu allocations\n", (unsigned long long)st.in_use,
	       (unsigned long long)st.allocs);
	printf("managed     %llu bytes, %llu free blocks, largest %llu bytes\n",
	       (unsigned long long)st.size, (unsigned long long)st.free_blocks,
	       (unsigned long long)st.largest_free);
	if (hm.aperture)
		printf("host memory %llu bytes, %u pages free; mnicctl's range %u pages\n",
		       (unsigned long long)hm.aperture, hm.free_pages, hm.pages);
	return MNICCTL_OK;
}

/* ---- image (offline) ------------------------------------------------------------------- */

struct show_ctx {
	uint32_t count[MNIC_IMG_TYPES];
	uint32_t bytes[MNIC_IMG_TYPES];
	int verbose;
};

static int show_rec(const struct mnic_img_rec *r, const uint8_t *payload, void *arg)
{
	struct show_ctx *c = arg;

	(void)payload;
	c->count[r->type]++;
	c->bytes[r->type] += r->len;
	if (!c->verbose)
		return 0;
	if (opt.json) {
		jopen(NULL, '{');
		jnum("offset", r->offset);
		jstr("type", mnic_img_type_name(r->type));
		jnum("len", r->len);
		jnum("handle", r->handle);
		jclose('}');
	} else {
		printf("  @%-7u %-4s len %-4u %s 0x%08x\n", r->offset, mnic_img_type_name(r->type),
		       r->len, r->type == 1 ? "lkey" : r->type == 4 ? "qpn " : "handle", r->handle);
	}
	return 0;
}

static int image_show(int argc, const char **argv)
{
	struct mnic_img_hdr h;
	struct show_ctx c;
	char err[256];
	uint8_t *img;
	size_t len;
	int rc;

	if (argc != 3)
		return mnicctl_usage("image show IMG");
	if (mnicctl_fw_is_image(argv[2]))
		return mnicctl_fw_image(&opt, argc, argv);
	rc = read_file(argv[2], &img, &len);
	if (rc)
		return rc;
	memset(&c, 0, sizeof(c));
	memset(&h, 0, sizeof(h));
	c.verbose = 1;
	if (opt.json) {
		jopen(NULL, '{');
		jstr("file", argv[2]);
		jnum("file_bytes", len);
		jopen("records", '[');
	} else {
		printf("image %s (%zu bytes)\n", argv[2], len);
	}
	rc = mnic_img_parse(img, len, &h, show_rec, &c, err, sizeof(err));
	free(img);
	if (opt.json) {
		jclose(']');
		jnum("version", h.version);
		jnum("count", h.count);
		jnum("total", h.total);
		jnum("crc", h.crc);
		jstr("crc_ok", rc == -EBADMSG ? "no" : h.crc == h.crc_computed ? "yes" : "unchecked");
		jopen("types", '{');
		for (uint32_t t = 0; t < MNIC_IMG_TYPES; t++) {
			if (!strcmp(mnic_img_type_name(t), "?"))
				continue;           /* a number no record has */
			jopen(mnic_img_type_name(t), '{');
			jnum("count", c.count[t]);
			jnum("bytes", c.bytes[t]);
			jclose('}');
		}
		jclose('}');
		jstr("error", rc < 0 ? err : "");
		jclose('}');
	} else {
		printf("header      version %u  records %u  total %u  crc32c 0x%08x %s\n", h.version,
		       h.count, h.total, h.crc,
		       rc == -EBADMSG ? "MISMATCH" : h.crc_computed == h.crc ? "ok" : "(not checked)");
		for (uint32_t t = 0; t < MNIC_IMG_TYPES; t++)
			if (c.count[t])
				printf("  %-8s %5u records %8u bytes\n", mnic_img_type_name(t),
				       c.count[t], c.bytes[t]);
	}
	if (rc < 0) {
		fprintf(stderr, "mnicctl: %s: %s\n", argv[2], err);
		return MNICCTL_FAILED;
	}
	return MNICCTL_OK;
}

/* Firmware images (mnicctl_fw.c). */
static int image_fw(int argc, const char **argv)
{
	return mnicctl_fw_image(&opt, argc, argv);
}

static int cmd_fw(struct mnic_dev *dev, int argc, const char **argv)
{
	return mnicctl_fw_cmd(&opt, dev, argc, argv);
}

static int cmd_flash(struct mnic_dev *dev, int argc, const char **argv)
{
	return mnicctl_flash_cmd(&opt, dev, argc, argv);
}

/* `image` verbs; a later `image build|verify|sign` adds rows here. */
static const struct {
	const char *name;
	int (*fn)(int argc, const char **argv);
} image_cmds[] = {
	{"show", image_show},
	{"build", image_fw},
	{"verify", image_fw},
	{"sign", image_fw},
	{"keygen", image_fw},
	{"keyslot", image_fw},
	{"flash-file", image_fw},
};

static int cmd_image(struct mnic_dev *unused, int argc, const char **argv)
{
	(void)unused;
	for (size_t i = 0; argc >= 2 && i < sizeof(image_cmds) / sizeof(image_cmds[0]); i++)
		if (!strcmp(argv[1], image_cmds[i].name))
			return image_cmds[i].fn(argc, argv);
	return mnicctl_usage("image show IMG");
}

/* ---- the subcommand table -------------------------------------------------------------- */

/* `dcqcn show | set key=value...`: QUERY_DCQCN / SET_DCQCN (mnic/cmd.h
 * gives the ranges; the device checks them and names a refused field in
 * the syndrome).  enable and ect are the two flags. */
static const struct {
	const char *key;
	size_t off;                     /* in struct mnic_dcqcn_params; flags: bit */
	uint32_t flag;
} dcqcn_keys[] = {
	{ "enable", offsetof(struct mnic_dcqcn_params, flags), MNIC_DCQCN_F_ENABLE },
	{ "ect", offsetof(struct mnic_dcqcn_params, flags), MNIC_DCQCN_F_ECT },
	{ "g", offsetof(struct mnic_dcqcn_params, g), 0 },
	{ "alpha_us", offsetof(struct mnic_dcqcn_params, alpha_us), 0 },
	{ "rate_timer_us", offsetof(struct mnic_dcqcn_params, rate_timer_us), 0 },
	{ "byte_counter", offsetof(struct mnic_dcqcn_params, byte_counter), 0 },
	{ "fast_recovery", offsetof(struct mnic_dcqcn_params, fast_recovery), 0 },
	{ "rai_mbps", offsetof(struct mnic_dcqcn_params, rai_mbps), 0 },
	{ "rhai_mbps", offsetof(struct mnic_dcqcn_params, rhai_mbps), 0 },
	{ "min_rate_mbps", offsetof(struct mnic_dcqcn_params, min_rate_mbps), 0 },
	{ "line_rate_mbps", offsetof(struct mnic_dcqcn_params, line_rate_mbps), 0 },
	{ "cnp_interval_us", offsetof(struct mnic_dcqcn_params, cnp_interval_us), 0 },
};
#define DCQCN_NKEYS (sizeof(dcqcn_keys) / sizeof(dcqcn_keys[0]))

static uint32_t dcqcn_get(const struct mnic_dcqcn_params *p, unsigned k)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)p + dcqcn_keys[k].off, sizeof(v));
	return dcqcn_keys[k].flag ? !!(v & dcqcn_keys[k].flag) : v;
}

static void dcqcn_put(struct mnic_dcqcn_params *p, unsigned k, uint32_t v)
{
	uint32_t w;

	memcpy(&w, (const uint8_t *)p + dcqcn_keys[k].off, sizeof(w));
	if (dcqcn_keys[k].flag)
		w = v ? w | dcqcn_keys[k].flag : w & ~dcqcn_keys[k].flag;
	else
		w = v;
	memcpy((uint8_t *)p + dcqcn_keys[k].off, &w, sizeof(w));
}

static int dcqcn_query(struct mnic_dev *dev, struct mnic_dcqcn_params *p)
{
	struct mnic_cmd_simple_in in;
	struct mnic_cmd_dcqcn_out out;
	int err;

	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_QUERY_DCQCN;
	err = mnic_cmd(dev, &in, sizeof(in), &out, sizeof(out), NULL);
	if (err == 0)
		*p = out.p;
	return err;
}

static int cmd_dcqcn(struct mnic_dev *dev, int argc, const char **argv)
{
	struct mnic_dcqcn_params p;
	unsigned k;
	int err, i;

	if (argc < 2 || (strcmp(argv[1], "show") && strcmp(argv[1], "set")) ||
	    (!strcmp(argv[1], "show") && argc != 2) || (!strcmp(argv[1], "set") && argc < 3))
		return mnicctl_usage("dcqcn show | dcqcn set KEY=VALUE...");
	err = dcqcn_query(dev, &p);
	if (err < 0)
		return dev_fail(dev, "QUERY_DCQCN", err);
	if (!strcmp(argv[1], "set")) {
		struct mnic_cmd_dcqcn_in in;
		struct mnic_cmd_simple_out out;

		for (i = 2; i < argc; i++) {
			const char *eq = strchr(argv[i], '=');
			uint32_t v;

			for (k = 0; eq && k < DCQCN_NKEYS; k++)
				if (strlen(dcqcn_keys[k].key) == (size_t)(eq - argv[i]) &&
				    !strncmp(dcqcn_keys[k].key, argv[i], (size_t)(eq - argv[i])))
					break;
			if (!eq || k == DCQCN_NKEYS)
				return mnicctl_usage("dcqcn set: unknown key in '%s' (keys: enable ect g "
						     "alpha_us rate_timer_us byte_counter fast_recovery "
						     "rai_mbps rhai_mbps min_rate_mbps line_rate_mbps "
						     "cnp_interval_us)", argv[i]);
			if (mnicctl_parse_u32(eq + 1, &v) || (dcqcn_keys[k].flag && v > 1))
				return mnicctl_usage("dcqcn set: '%s': a number%s", argv[i],
						     dcqcn_keys[k].flag ? " (0 or 1)" : "");
			dcqcn_put(&p, k, v);
		}
		memset(&in, 0, sizeof(in));
		in.hdr.opcode = MNIC_CMD_SET_DCQCN;
		in.p = p;
		in.p.reserved = 0;
		err = mnic_cmd(dev, &in, sizeof(in), &out, sizeof(out), NULL);
		if (err < 0)
			return dev_fail(dev, "SET_DCQCN", err);
		err = dcqcn_query(dev, &p);
		if (err < 0)
			return dev_fail(dev, "QUERY_DCQCN", err);
	}
	if (opt.json)
		jopen(NULL, '{');
	for (k = 0; k < DCQCN_NKEYS; k++) {
		if (opt.json)
			jnum(dcqcn_keys[k].key, dcqcn_get(&p, k));
		else
			printf("%-16s %u\n", dcqcn_keys[k].key, (unsigned)dcqcn_get(&p, k));
	}
	if (opt.json)
		jclose('}');
	return MNICCTL_OK;
}

enum dev_need {
	DEV_NONE,    /* offline, or opens its own devices */
	DEV_READY,   /* mnic_open: a READY firmware */
	DEV_RAW,     /* mnic_open_raw: any state (health) */
};

/* Later subcommands (fw, flash, ...) add a row. */
static const struct subcmd {
	const char *name;
	enum dev_need need;
	int (*fn)(struct mnic_dev *dev, int argc, const char **argv);
	const char *usage;
} subcmds[] = {
	{"info", DEV_READY, cmd_info, "info                       identity, limits, objects in use"},
	{"counters", DEV_READY, cmd_counters,
	 "counters [--engine|--mgmt|--port]   firmware counters (all groups by default)"},
	{"health", DEV_RAW, cmd_health,
	 "health                     state and health buffer (works on a failed NIC)"},
	{"qp", DEV_READY, cmd_qp, "qp list | qp show QPN      queue pairs"},
	{"dcqcn", DEV_READY, cmd_dcqcn,
	 "dcqcn show | set KEY=VALUE...   DCQCN congestion control parameters\n"
	 "                             (enable ect g alpha_us rate_timer_us byte_counter\n"
	 "                             fast_recovery rai_mbps rhai_mbps min_rate_mbps\n"
	 "                             line_rate_mbps cnp_interval_us)"},
	{"ctx", DEV_READY, cmd_ctx,
	 "ctx list | show ID | alloc --size B [--at OFF] [--owner TAG] | free ID | reap\n"
	 "                             firmware contexts (tenants): owners, ranges, objects"},
	{"dump", DEV_READY, cmd_dump,
	 "dump -o IMG [--ctx ID | --pid PID]   stop a context's QPs, write its image\n"
	 "                             (no --ctx/--pid: the management context's objects)"},
	{"restore", DEV_READY, cmd_restore,
	 "restore -i IMG [--peer-override OLDIP=NEWIP,MAC] [--ctx ID]   recreate a context\n"
	 "                             (stopped) in context ID (ctx alloc --at makes one)"},
	{"resume", DEV_READY, cmd_simple,
	 "resume [--ctx ID | --pid PID]   resume a restored context"},
	{"abort", DEV_READY, cmd_simple,
	 "abort [--ctx ID | --pid PID]    cancel a dump: its QPs resume in place"},
	{"mig-config", DEV_READY, cmd_mig_config,
	 "mig-config [--pause-ms MS] [--resume-budget-ms MS] [--unkeyed]   migration policy: how\n"
	 "                             long paused QPs wait for a RESUME, how long a restored QP\n"
	 "                             resends its own, whether QPs without a key may migrate"},
	{"create", DEV_READY, cmd_create,
	 "create pd | cq ENTRIES | mr PD LEN | qp PD CQ   make an object, print its handle"},
	{"destroy", DEV_READY, cmd_destroy,
	 "destroy pd|mr|cq|srq|qp HANDLE   destroy an object by handle (and its memory)"},
	{"mem", DEV_READY, cmd_mem,
	 "mem                        host memory of mnicctl's objects: bytes in use"},
	{"image", DEV_NONE, cmd_image,
	 "image show IMG             parse an image offline (header, CRC32C, records)\n"
	 "  image build --board B --version X.Y.Z[+N] -o IMG ELF   firmware image from the ELF\n"
	 "  image verify [--board B] [--pubkey KEY.pub] IMG        check (and its signature)\n"
	 "  image keygen -o KEY | image sign --key KEY [-o OUT] IMG   Ed25519 (libsodium)\n"
	 "  image keyslot FLASH0 --pubkey KEY.pub[:VER] [--pubkey KEY2.pub[:VER]] [--revoke-below N]\n"
	 "                             provision a boot flash's key slot (the device checks with it)\n"
	 "  image flash-file -o FLASH --slot-a IMG [--slot-b IMG]   slot flash for QEMU"},
	{"fw", DEV_READY, cmd_fw,
	 "fw [activate [--max-boots N]]   running firmware, both slots, boot record"},
	{"flash", DEV_READY, cmd_flash,
	 "flash IMG [--activate [--wait]] [--no-host-check]   write a firmware image into the\n"
	 "                             inactive slot (--no-host-check: send it even if mnicctl's own\n"
	 "                             check refuses it, to see the device refuse it)"},
	{"migrate", DEV_NONE, cmd_migrate,
	 "migrate --from DEV_A --to DEV_B [--copy-user-area] [--pid PID [--notify FILE]]\n"
	 "        [--peer-override ...] [--after-dump CMD] [--from DEV_C --to DEV_D ...]\n"
	 "                           freeze PID, dump on A, copy host memory, restore and\n"
	 "                           resume on B, tell PID its new device, thaw it"},
};

static void help(void)
{
	printf("usage: mnicctl [-d DEV] [--json] [--timeout MS] COMMAND ...\n\n"
	       "DEV is a NIC's BAR file (POSIX NIC --bar, QEMU NIC ivshmem file) or /dev/mnicN.\n\n"
	       "commands:\n");
	for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		printf("  %s\n", subcmds[i].usage);
	printf("\nexit codes:\n"
	       "  0  ok\n"
	       "  1  the operation failed: the device refused a command (status + syndrome\n"
	       "     printed), the NIC is not healthy (health), or an image is corrupt\n"
	       "  2  usage: bad arguments\n"
	       "  3  device or I/O error: cannot open/map the device, no completion in time,\n"
	       "     a reply that breaks the ABI, a file that cannot be read or written\n");
}

int main(int argc, char **argv)
{
	const struct subcmd *sc = NULL;
	struct mnic_dev *dev = NULL;
	char err[256];
	int rc;

	if (mnicctl_parse(argc, argv, &opt, err, sizeof(err)))
		return mnicctl_usage("%s", err);
	if (opt.help) {
		help();
		return MNICCTL_OK;
	}
	if (opt.argc == 0)
		return mnicctl_usage("no command");
	for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		if (!strcmp(opt.argv[0], subcmds[i].name))
			sc = &subcmds[i];
	if (!sc)
		return mnicctl_usage("unknown command '%s'", opt.argv[0]);
	if (sc->need != DEV_NONE) {
		rc = open_dev(opt.dev, sc->need == DEV_RAW, &dev);
		if (rc)
			return rc;
	}
	rc = sc->fn(dev, opt.argc, opt.argv);
	fflush(stdout);
	mnic_close(dev);
	return rc;
}
