/* mnic-tenancy-check: tenancy and privilege through mnic.ko's /dev/mnicN
 * (issue 13; docs/kernel-driver.md "Contexts and privilege"), run as root
 * in the test VM (tests/system/kmod_vm.sh).  Tenants are child processes
 * that drop to nobody (uid/gid 65534: setresuid from root clears every
 * capability) before they open the device; root checks from its own file,
 * which never gets a context of its own (it issues only commands that go
 * as MNIC_CTX_MGMT).  Raw ioctls on the ABI alone (mnic/ioctl.h, cmd.h).
 *
 *   mnic-tenancy-check priv DEV      the privileged set: EPERM for nobody,
 *                                    served for root; ALLOC/DEALLOC_CONTEXT
 *                                    refused to both; a self-dump allowed
 *   mnic-tenancy-check isolate DEV   tenants A and B: B cannot see, query,
 *                                    modify, destroy, key or dump A's QP
 *                                    (not even by writing hdr.ctx), nor map
 *                                    A's memory; a later tenant of A's range
 *                                    finds it zeroed
 *   mnic-tenancy-check sigkill DEV   a tenant killed with SIGKILL leaves no
 *                                    context and no object
 *   mnic-tenancy-check empty DEV     no context and no object on the NIC
 *   mnic-tenancy-check selfdump DEV IMG  nobody checkpoints itself
 *                                    (DUMP_CONTEXT SELF) into IMG, aborts
 * Prints "ok NAME" or "FAIL NAME: why" per check, then "TENANCY-CHECK PASS
 * n" or "TENANCY-CHECK FAIL failed/n"; exit 0 only on PASS. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_counter.h"
#include "mnic/abi.h"
#include "mnic/cmd.h"
#include "mnic/ioctl.h"

#define NOBODY 65534u
#define PATTERN 0x5a17e4a7u   /* tenant A's words in its MR */

/* Tenant layout inside its own user-area range (offsets from ua_offset). */
#define T_DBREC   0x1000u      /* CQ, SQ, RQ doorbell records, 64 bytes apart */
#define T_CQ_RING 0x2000u      /* 64 CQEs */
#define T_SQ_RING 0x4000u      /* 16 WQEs */
#define T_RQ_RING 0x8000u
#define T_MR      0x10000u     /* 64 KiB of PATTERN */
#define T_MR_LEN  0x10000u
#define T_NEED    (T_MR + T_MR_LEN)

static const char *dev_path;
static char sysdir[128];
static unsigned int checks, failures;

static void result(const char *name, int ok, const char *why)
{
	checks++;
	if (ok) {
		printf("ok %s\n", name);
	} else {
		failures++;
		printf("FAIL %s: %s\n", name, why);
	}
}

static long counter(const char *name)
{
	return mnic_check_counter(sysdir, name);
}

/* One command: -errno if the ioctl failed, 1000 + delivery on a delivery
 * error, else the command status (0 = OK). */
static int cmd(int fd, void *in, uint32_t in_len, void *out, uint32_t out_len)
{
	struct mnic_ioc_cmd c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.version = MNIC_IOC_VERSION;
	c.in_ptr = (uint64_t)(uintptr_t)in;
	c.out_ptr = (uint64_t)(uintptr_t)out;
	c.in_len = in_len;
	c.out_len = out_len;
	memset(out, 0xa5, out_len);
	if (ioctl(fd, MNIC_IOC_CMD, &c) < 0)
		return -errno;
	if (c.delivery != MNIC_CMD_DELIV_OK)
		return 1000 + c.delivery;
	return ((struct mnic_cmd_out_hdr *)out)->status;
}

/* A command with a handle_in input (QUERY_QP, DESTROY_QP, DUMP_CONTEXT...);
 * hdr.ctx is what the caller claims (the module must overwrite it). */
static int cmd_handle(int fd, uint16_t opcode, uint16_t op_mod, uint16_t claim_ctx, uint32_t handle,
		      void *out, uint32_t out_len)
{
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = opcode, .op_mod = op_mod, .ctx = claim_ctx }, .handle = handle };

	return cmd(fd, &in, sizeof(in), out, out_len);
}

static void describe(char *why, size_t len, const char *want, int rc)
{
	if (rc < 0)
		snprintf(why, len, "want %s, got errno %s", want, strerror(-rc));
	else
		snprintf(why, len, "want %s, got status 0x%x", want, rc);
}

/* The ioctl refused with err before the firmware saw the command. */
static void expect_errno(const char *name, int rc, int err)
{
	char why[96];

	describe(why, sizeof(why), strerror(err), rc);
	result(name, rc == -err, why);
}

/* The firmware served the command (status OK). */
static void expect_ok(const char *name, int rc)
{
	char why[96];

	describe(why, sizeof(why), "status OK", rc);
	result(name, rc == 0, why);
}

/* The firmware answered, and not with OK: as for a handle that does not
 * exist. */
static void expect_refused(const char *name, int rc)
{
	char why[96];

	describe(why, sizeof(why), "a firmware status other than OK", rc);
	result(name, rc > 0 && rc < 1000, why);
}

static int drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		printf("FAIL drop_to_nobody: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- a tenant: its file, context, mapping and objects ------------------- */

struct tenant {
	int fd;
	struct mnic_ioc_ctx ctx;
	volatile uint32_t *map;        /* the whole range, ctx.ua_size bytes */
	volatile uint32_t *mem;        /* what its objects use: the range, or (a NIC
					  with host memory) T_NEED bytes of its own
					  memory registered as one MTT */
	uint64_t mem_addr;             /* mem's address for the NIC (window or IOVA) */
	uint32_t mtt;                  /* MNIC_MTT_NONE: physical mode in the range */
	uint32_t pd, cq, qpn, lkey;
};

static int ioc_ctx(int fd, struct mnic_ioc_ctx *c, uint64_t ua_offset, uint64_t ua_size)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->version = MNIC_IOC_VERSION;
	c->ua_offset = ua_offset;
	c->ua_size = ua_size;
	return ioctl(fd, MNIC_IOC_CTX, c) < 0 ? -errno : 0;
}

static int tenant_open(struct tenant *t, const char *who)
{
	char name[64], why[128];
	void *p;
	int rc;

	memset(t, 0, sizeof(*t));
	t->fd = open(dev_path, O_RDWR | O_CLOEXEC);
	snprintf(name, sizeof(name), "tenancy_%s_open", who);
	result(name, t->fd >= 0, strerror(errno));
	if (t->fd < 0)
		return -1;
	rc = ioc_ctx(t->fd, &t->ctx, 0, 0);
	snprintf(name, sizeof(name), "tenancy_%s_context", who);
	snprintf(why, sizeof(why), "MNIC_IOC_CTX: %s, ctx %u range 0x%llx+0x%llx",
		 strerror(rc < 0 ? -rc : 0), t->ctx.ctx, (unsigned long long)t->ctx.ua_offset,
		 (unsigned long long)t->ctx.ua_size);
	result(name, rc == 0 && t->ctx.ctx != MNIC_CTX_MGMT && t->ctx.ctx <= MNIC_CTX_MAX &&
			     t->ctx.ua_offset >= MNIC_USER_AREA_OFFSET &&
			     t->ctx.ua_offset % MNIC_CTX_UA_ALIGN == 0 && t->ctx.ua_size >= T_NEED,
	       why);
	if (rc)
		return -1;
	printf("  %s: ctx %u range 0x%llx+0x%llx\n", who, t->ctx.ctx,
	       (unsigned long long)t->ctx.ua_offset, (unsigned long long)t->ctx.ua_size);
	p = mmap(NULL, (size_t)t->ctx.ua_size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd,
		 MNIC_MMAP_USER);
	snprintf(name, sizeof(name), "tenancy_%s_map_own_range", who);
	result(name, p != MAP_FAILED, strerror(errno));
	if (p == MAP_FAILED)
		return -1;
	t->map = p;
	t->mem = p;
	t->mem_addr = t->ctx.ua_offset;
	return 0;
}

/* A NIC with host memory (QUERY_DEVICE hostmem_size) takes no physical
 * mode from a tenant: its objects live in its own memory, registered
 * (MNIC_IOC_REG_MEM), at their virtual addresses. */
static int tenant_memory(struct tenant *t, const char *who)
{
	struct mnic_cmd_simple_in in = { .hdr = { .opcode = MNIC_CMD_QUERY_DEVICE } };
	struct mnic_cmd_query_device_out q;
	struct mnic_ioc_reg_mem r;
	char name[64];
	void *p;
	int rc;

	if (cmd(t->fd, &in, sizeof(in), &q, sizeof(q)) != 0 || q.hostmem_size == 0)
		return 0;
	p = mmap(NULL, T_NEED, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	memset(p, 0, T_NEED);
	r = (struct mnic_ioc_reg_mem){ .size = sizeof(r), .version = MNIC_IOC_VERSION,
				       .addr = (uint64_t)(uintptr_t)p, .length = T_NEED };
	rc = ioctl(t->fd, MNIC_IOC_REG_MEM, &r) < 0 ? -errno : 0;
	snprintf(name, sizeof(name), "tenancy_%s_reg_mem", who);
	expect_ok(name, rc);
	if (rc)
		return -1;
	t->mem = p;
	t->mem_addr = (uint64_t)(uintptr_t)p;
	t->mtt = r.mtt;
	return 0;
}

static int tenant_objects(struct tenant *t, const char *who)
{
	struct mnic_cmd_simple_in pd_in = { .hdr = { .opcode = MNIC_CMD_ALLOC_PD } };
	struct mnic_cmd_create_cq_in cq_in;
	struct mnic_cmd_create_qp_in qp_in;
	struct mnic_cmd_reg_mr_in mr_in;
	struct mnic_cmd_reg_mr_out mr_out;
	struct mnic_cmd_handle_out ho;
	uint64_t base = t->mem_addr;
	char name[64];
	int rc;

	if (tenant_memory(t, who))
		return -1;
	base = t->mem_addr;
	for (uint32_t i = 0; i < T_MR_LEN / 4; i++)
		t->mem[(T_MR + i * 4) / 4] = PATTERN;
	rc = cmd(t->fd, &pd_in, sizeof(pd_in), &ho, sizeof(ho));
	t->pd = ho.handle;
	if (rc == 0) {
		memset(&cq_in, 0, sizeof(cq_in));
		cq_in.hdr.opcode = MNIC_CMD_CREATE_CQ;
		cq_in.q = (struct mnic_queue_desc){ .ring_addr = base + T_CQ_RING, .dbrec_addr = base + T_DBREC,
						    .size = 64, .ring_mtt = t->mtt, .dbrec_mtt = t->mtt };
		rc = cmd(t->fd, &cq_in, sizeof(cq_in), &ho, sizeof(ho));
		t->cq = ho.handle;
	}
	if (rc == 0) {
		memset(&qp_in, 0, sizeof(qp_in));
		qp_in.hdr.opcode = MNIC_CMD_CREATE_QP;
		qp_in.pd = t->pd;
		qp_in.send_cq = qp_in.recv_cq = t->cq;
		qp_in.srq = MNIC_NO_SRQ;
		qp_in.max_send_sge = qp_in.max_recv_sge = 1;
		qp_in.sq = (struct mnic_queue_desc){ .ring_addr = base + T_SQ_RING,
						     .dbrec_addr = base + T_DBREC + 64, .size = 16,
						     .ring_mtt = t->mtt, .dbrec_mtt = t->mtt };
		qp_in.rq = (struct mnic_queue_desc){ .ring_addr = base + T_RQ_RING,
						     .dbrec_addr = base + T_DBREC + 128, .size = 16,
						     .ring_mtt = t->mtt, .dbrec_mtt = t->mtt };
		rc = cmd(t->fd, &qp_in, sizeof(qp_in), &ho, sizeof(ho));
		t->qpn = ho.handle;
	}
	if (rc == 0) {
		memset(&mr_in, 0, sizeof(mr_in));
		mr_in.hdr.opcode = MNIC_CMD_REG_MR;
		mr_in.pd = t->pd;
		mr_in.access = 1;   /* IBV_ACCESS_LOCAL_WRITE */
		mr_in.addr = base + T_MR;
		mr_in.length = T_MR_LEN;
		mr_in.mtt = t->mtt;
		rc = cmd(t->fd, &mr_in, sizeof(mr_in), &mr_out, sizeof(mr_out));
		t->lkey = mr_out.lkey;
	}
	snprintf(name, sizeof(name), "tenancy_%s_objects", who);
	expect_ok(name, rc);
	return rc ? -1 : 0;
}

/* QUERY_DEVICE as root (MNIC_CTX_MGMT: the whole NIC). */
static int query_device(int fd, struct mnic_cmd_query_device_out *q)
{
	struct mnic_cmd_simple_in in = { .hdr = { .opcode = MNIC_CMD_QUERY_DEVICE } };

	return cmd(fd, &in, sizeof(in), q, sizeof(*q));
}

static int root_fd(void)
{
	int fd = open(dev_path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		printf("FAIL root_open: %s\n", strerror(errno));
	return fd;
}

/* A child process running fn as nobody; its failures come back as its
 * exit status. */
static pid_t spawn(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		failures = 0;
		if (drop_to_nobody() || fn(arg) < 0)
			failures++;
		fflush(stdout);
		_exit(failures > 100 ? 100 : (int)failures);
	}
	return pid;
}

static void reap(pid_t pid, const char *name)
{
	int st = 0;

	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		result(name, 0, "fork/wait failed");
		return;
	}
	checks++;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		failures++;
		printf("FAIL %s: child %s %d\n", name, WIFEXITED(st) ? "exited" : "killed by signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	} else {
		printf("ok %s\n", name);
	}
}

/* ---- priv ----------------------------------------------------------------- */

struct priv_cmd {
	const char *name;
	uint16_t opcode, op_mod;
	uint32_t in_len;
	uint32_t handle;           /* at the handle_in offset when in_len >= 16 */
};

/* The privileged set (mnic/cmd.h "contexts"), as nobody issues it. */
static const struct priv_cmd priv_set[] = {
	{ "tenancy_eperm_mig_config", MNIC_CMD_MIG_CONFIG, 0,
	  sizeof(struct mnic_cmd_mig_config_in), 0 },
	{ "tenancy_eperm_set_gid", MNIC_CMD_SET_GID, 0, sizeof(struct mnic_cmd_set_gid_in), 0 },
	{ "tenancy_eperm_query_counters", MNIC_CMD_QUERY_COUNTERS, MNIC_COUNTERS_MGMT,
	  sizeof(struct mnic_cmd_simple_in), 0 },
	{ "tenancy_eperm_fw_flash_begin", MNIC_CMD_FW_FLASH_BEGIN, 0,
	  sizeof(struct mnic_cmd_fw_flash_begin_in), 0 },
	{ "tenancy_eperm_fw_flash_data", MNIC_CMD_FW_FLASH_DATA, 0,
	  sizeof(struct mnic_cmd_fw_flash_data_in), 0 },
	{ "tenancy_eperm_fw_flash_end", MNIC_CMD_FW_FLASH_END, 0, sizeof(struct mnic_cmd_simple_in),
	  0 },
	{ "tenancy_eperm_fw_activate", MNIC_CMD_FW_ACTIVATE, 0,
	  sizeof(struct mnic_cmd_fw_activate_in), 0 },
	{ "tenancy_eperm_dump_mgmt", MNIC_CMD_DUMP_CONTEXT, 0, sizeof(struct mnic_cmd_handle_in),
	  MNIC_CTX_MGMT },
	{ "tenancy_eperm_dump_no_handle", MNIC_CMD_DUMP_CONTEXT, 0,
	  sizeof(struct mnic_cmd_simple_in), 0 },
	{ "tenancy_eperm_resume_other", MNIC_CMD_RESUME_CONTEXT, 0, sizeof(struct mnic_cmd_handle_in),
	  MNIC_CTX_MAX },
	{ "tenancy_eperm_abort_other", MNIC_CMD_ABORT_DUMP, 0, sizeof(struct mnic_cmd_handle_in),
	  MNIC_CTX_MAX },
	{ "tenancy_eperm_query_context_next", MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_NEXT,
	  sizeof(struct mnic_cmd_handle_in), 0 },
};

static int priv_child(void *arg)
{
	static uint8_t in[256], out[4096];
	long before = counter("refused_priv");
	int fd = open(dev_path, O_RDWR | O_CLOEXEC), rc;

	(void)arg;
	result("tenancy_nobody_open", fd >= 0, strerror(errno));
	if (fd < 0)
		return -1;
	for (size_t i = 0; i < sizeof(priv_set) / sizeof(priv_set[0]); i++) {
		const struct priv_cmd *p = &priv_set[i];
		struct mnic_cmd_handle_in *h = (void *)in;

		memset(in, 0, sizeof(in));
		h->hdr.opcode = p->opcode;
		h->hdr.op_mod = p->op_mod;
		/* Claiming the management context changes nothing. */
		h->hdr.ctx = MNIC_CTX_MGMT;
		if (p->in_len >= sizeof(*h))
			h->handle = p->handle;
		expect_errno(p->name, cmd(fd, in, p->in_len, out, sizeof(out)), EPERM);
	}
	result("tenancy_eperm_counted",
	       counter("refused_priv") == before + (long)(sizeof(priv_set) / sizeof(priv_set[0])),
	       "counters/refused_priv did not grow by one per refusal");
	/* What an application may do unprivileged: look at its own device. */
	rc = cmd_handle(fd, MNIC_CMD_QUERY_DEVICE, 0, MNIC_CTX_MGMT, 0, out, sizeof(out));
	expect_ok("tenancy_nobody_query_device", rc);
	rc = cmd_handle(fd, MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_BY_ID, 0, MNIC_CTX_SELF, out,
			sizeof(out));
	expect_ok("tenancy_nobody_query_own_context", rc);
	close(fd);
	return 0;
}

static void check_priv(void)
{
	struct mnic_cmd_query_device_out q;
	struct mnic_cmd_mig_config_in mc;
	struct mnic_cmd_simple_in si = { .hdr = { .opcode = MNIC_CMD_FW_FLASH_END } };
	struct mnic_cmd_alloc_context_in ac;
	static uint8_t out[4096];
	long ctx_refused = counter("refused_ctx_opcode");
	int fd, rc;

	reap(spawn(priv_child, NULL), "tenancy_nobody_privileged_set");
	fd = root_fd();
	if (fd < 0)
		return;
	/* Root: served by the firmware.  MIG_CONFIG with the values in force. */
	rc = query_device(fd, &q);
	expect_ok("tenancy_root_query_device", rc);
	memset(&mc, 0, sizeof(mc));
	mc.hdr.opcode = MNIC_CMD_MIG_CONFIG;
	mc.pause_timeout_ms = q.pause_timeout_ms;
	mc.resume_budget_ms = q.resume_budget_ms;
	mc.flags = q.mig_cfg_flags;
	expect_ok("tenancy_root_mig_config", cmd(fd, &mc, sizeof(mc), out, sizeof(out)));
	rc = cmd_handle(fd, MNIC_CMD_QUERY_COUNTERS, MNIC_COUNTERS_MGMT, 0, 0, out, sizeof(out));
	expect_ok("tenancy_root_query_counters", rc);
	/* No flash in progress: the firmware refuses it, but it was asked. */
	rc = cmd(fd, &si, sizeof(si), out, sizeof(out));
	result("tenancy_root_fw_flash_end_reaches_firmware",
	       rc > 0 && rc < 1000 && rc != MNIC_CMD_STAT_NOT_PRIV, "refused before the firmware");
	/* The module owns the context commands, even for root. */
	memset(&ac, 0, sizeof(ac));
	ac.hdr.opcode = MNIC_CMD_ALLOC_CONTEXT;
	ac.ua_size = MNIC_CTX_UA_ALIGN;
	expect_errno("tenancy_alloc_context_refused", cmd(fd, &ac, sizeof(ac), out, sizeof(out)),
		     EOPNOTSUPP);
	rc = cmd_handle(fd, MNIC_CMD_DEALLOC_CONTEXT, 0, 0, 1, out, sizeof(out));
	expect_errno("tenancy_dealloc_context_refused", rc, EOPNOTSUPP);
	result("tenancy_context_opcodes_counted", counter("refused_ctx_opcode") == ctx_refused + 2,
	       "counters/refused_ctx_opcode did not grow by 2");
	close(fd);
}

/* ---- isolate -------------------------------------------------------------- */

/* What tenant A tells the others: its identity and objects. */
struct a_report {
	uint32_t ctx, qpn, pd, cq;
	uint64_t ua_offset, ua_size;
};

struct isolate_arg {
	int to_parent, from_parent;
	struct a_report a;
};

/* Tenant A: objects, a pattern in its MR; waits until told, then checks
 * its QP is intact. */
static int tenant_a(void *arg)
{
	const struct isolate_arg *ia = arg;
	struct mnic_cmd_query_qp_out q;
	struct a_report rep;
	struct tenant t;
	char go;
	int rc;

	if (tenant_open(&t, "a") || tenant_objects(&t, "a"))
		return -1;
	rep = (struct a_report){ t.ctx.ctx, t.qpn, t.pd, t.cq, t.ctx.ua_offset, t.ctx.ua_size };
	if (write(ia->to_parent, &rep, sizeof(rep)) != sizeof(rep) ||
	    read(ia->from_parent, &go, 1) != 1)
		return -1;
	rc = cmd_handle(t.fd, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_BY_QPN, 0, t.qpn, &q, sizeof(q));
	result("tenancy_a_qp_intact", rc == 0 && q.attr.qp_state == 0 /* IBV_QPS_RESET */,
	       "A's QP gone or changed by B");
	result("tenancy_a_pattern_intact", t.mem[T_MR / 4] == PATTERN &&
						   t.mem[(T_MR + T_MR_LEN) / 4 - 1] == PATTERN,
	       "A's memory changed");
	return 0;
}

/* Tenant B: everything it tries on A's objects fails like a missing
 * handle; its mapping is its own range only. */
static int tenant_b(void *arg)
{
	const struct a_report *a = &((struct isolate_arg *)arg)->a;
	struct mnic_cmd_modify_qp_in mq;
	struct mnic_cmd_set_qp_mig_key_in mk;
	struct mnic_cmd_query_qp_out q;
	static uint8_t out[64 * 1024];
	long page = sysconf(_SC_PAGESIZE);
	uint64_t hits = 0;
	struct tenant t;
	void *p;
	int rc;

	if (tenant_open(&t, "b"))
		return -1;
	result("tenancy_b_own_context", t.ctx.ctx != a->ctx, "B got A's context");
	result("tenancy_b_range_disjoint",
	       t.ctx.ua_offset >= a->ua_offset + a->ua_size ||
		       a->ua_offset >= t.ctx.ua_offset + t.ctx.ua_size,
	       "B's range overlaps A's");
	/* See: QUERY_QP NEXT from 0 lists B's QPs only (it has none). */
	rc = cmd_handle(t.fd, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_NEXT, 0, 0, &q, sizeof(q));
	result("tenancy_b_qp_list_hides_a", rc != 0 || q.reserved != a->qpn,
	       "QUERY_QP NEXT showed A's QP");
	expect_refused("tenancy_b_query_a_qp",
		       cmd_handle(t.fd, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_BY_QPN, 0, a->qpn, &q,
				  sizeof(q)));
	/* The module stamps hdr.ctx: claiming A's context or the management
	 * context changes nothing. */
	expect_refused("tenancy_b_query_a_qp_claiming_a_ctx",
		       cmd_handle(t.fd, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_BY_QPN, (uint16_t)a->ctx,
				  a->qpn, &q, sizeof(q)));
	memset(&mq, 0, sizeof(mq));
	mq.hdr = (struct mnic_cmd_in_hdr){ .opcode = MNIC_CMD_MODIFY_QP, .ctx = MNIC_CTX_MGMT };
	mq.qpn = a->qpn;
	mq.attr_mask = 1;            /* IBV_QP_STATE */
	mq.attr.qp_state = 6;        /* IBV_QPS_ERR */
	expect_refused("tenancy_b_modify_a_qp", cmd(t.fd, &mq, sizeof(mq), out, 64));
	memset(&mk, 0, sizeof(mk));
	mk.hdr.opcode = MNIC_CMD_SET_QP_MIG_KEY;
	mk.qpn = a->qpn;
	expect_refused("tenancy_b_key_a_qp", cmd(t.fd, &mk, sizeof(mk), out, 64));
	expect_refused("tenancy_b_destroy_a_qp",
		       cmd_handle(t.fd, MNIC_CMD_DESTROY_QP, 0, MNIC_CTX_MGMT, a->qpn, out, 64));
	expect_refused("tenancy_b_destroy_a_cq",
		       cmd_handle(t.fd, MNIC_CMD_DESTROY_CQ, 0, (uint16_t)a->ctx, a->cq, out, 64));
	expect_refused("tenancy_b_dealloc_a_pd",
		       cmd_handle(t.fd, MNIC_CMD_DEALLOC_PD, 0, 0, a->pd, out, 64));
	expect_errno("tenancy_b_dump_a_eperm",
		     cmd_handle(t.fd, MNIC_CMD_DUMP_CONTEXT, 0, (uint16_t)a->ctx, a->ctx, out,
				sizeof(out)),
		     EPERM);
	expect_errno("tenancy_b_query_a_context_eperm",
		     cmd_handle(t.fd, MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_BY_ID, 0, a->ctx, out,
				sizeof(out)),
		     EPERM);
	/* Map: B's range holds none of A's words, and nothing past it maps. */
	for (uint64_t i = 0; i < t.ctx.ua_size / 4; i++)
		hits += t.map[i] == PATTERN;
	result("tenancy_b_map_misses_a_pattern", hits == 0, "A's pattern inside B's mapping");
	p = mmap(NULL, (size_t)t.ctx.ua_size + (size_t)page, PROT_READ, MAP_SHARED, t.fd,
		 MNIC_MMAP_USER);
	result("tenancy_b_map_past_own_range", p == MAP_FAILED && errno == EINVAL, "not refused");
	p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, t.fd, (off_t)t.ctx.ua_size);
	result("tenancy_b_map_offset_past_range", p == MAP_FAILED && errno == EINVAL,
	       "not refused");
	/* The range is the context's for the life of the file. */
	rc = ioc_ctx(t.fd, &t.ctx, a->ua_offset, a->ua_size);
	expect_errno("tenancy_b_ctx_range_change_ebusy", rc, EBUSY);
	return 0;
}

static void check_isolate(void)
{
	int up[2], down[2], fd, rc;
	struct isolate_arg ia;
	static uint8_t out[256 * 1024];
	struct tenant c;
	pid_t a;
	uint64_t hits = 0;

	if (pipe(up) || pipe(down)) {
		result("tenancy_pipes", 0, strerror(errno));
		return;
	}
	memset(&ia, 0, sizeof(ia));
	ia.to_parent = up[1];
	ia.from_parent = down[0];
	a = spawn(tenant_a, &ia);
	/* Only A writes up and reads down: a dead A ends the read below. */
	close(up[1]);
	close(down[0]);
	if (read(up[0], &ia.a, sizeof(ia.a)) != sizeof(ia.a)) {
		close(down[1]);
		close(up[0]);
		reap(a, "tenancy_tenant_a");
		return;
	}
	reap(spawn(tenant_b, &ia), "tenancy_tenant_b");
	fd = root_fd();
	if (fd >= 0) {
		struct mnic_cmd_query_qp_out q;

		/* Root sees A's QP, and may checkpoint A (then resume it). */
		rc = cmd_handle(fd, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_BY_QPN, 0, ia.a.qpn, &q,
				sizeof(q));
		expect_ok("tenancy_root_queries_a_qp", rc);
		rc = cmd_handle(fd, MNIC_CMD_DUMP_CONTEXT, 0, 0, ia.a.ctx, out, sizeof(out));
		expect_ok("tenancy_root_dumps_a", rc);
		result("tenancy_root_dump_has_a_qp",
		       rc == 0 && ((struct mnic_cmd_dump_out *)out)->objects[4] == 1,
		       "the image of A does not hold its one QP");
		expect_ok("tenancy_root_aborts_a_dump",
			  cmd_handle(fd, MNIC_CMD_ABORT_DUMP, 0, 0, ia.a.ctx, out, 64));
		close(fd);
	}
	if (write(down[1], "g", 1) != 1)
		result("tenancy_signal_a", 0, strerror(errno));
	close(down[1]);
	reap(a, "tenancy_tenant_a");
	close(up[0]);
	/* A is gone: whoever gets its range next finds no byte of it. */
	if (tenant_open(&c, "next") == 0) {
		for (uint64_t i = 0; i < c.ctx.ua_size / 4; i++)
			hits += c.map[i] == PATTERN;
		printf("  next tenant range 0x%llx (A had 0x%llx)\n",
		       (unsigned long long)c.ctx.ua_offset, (unsigned long long)ia.a.ua_offset);
		result("tenancy_next_tenant_range_zeroed", hits == 0, "A's pattern survived A");
		close(c.fd);
	}
}

/* ---- sigkill, empty ------------------------------------------------------- */

/* No context and no object on the NIC (root's view). */
static void check_empty(const char *name)
{
	struct mnic_cmd_query_device_out q;
	struct mnic_cmd_query_context_out qc;
	char why[160];
	int fd = root_fd(), rc, rc_next;

	if (fd < 0)
		return;
	rc = query_device(fd, &q);
	rc_next = cmd_handle(fd, MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_NEXT, 0, 1, &qc, sizeof(qc));
	snprintf(why, sizeof(why),
		 "QUERY_DEVICE %d: pd %u mr %u cq %u srq %u qp %u contexts %u; QUERY_CONTEXT NEXT %d (ctx %u)",
		 rc, q.n_pd, q.n_mr, q.n_cq, q.n_srq, q.n_qp, q.n_ctx, rc_next, qc.ctx);
	result(name, rc == 0 && !q.n_pd && !q.n_mr && !q.n_cq && !q.n_srq && !q.n_qp && !q.n_ctx &&
			     rc_next == MNIC_CMD_STAT_BAD_RES,
	       why);
	close(fd);
}

static int tenant_sleeper(void *arg)
{
	int to_parent = *(int *)arg;
	struct tenant t;

	if (tenant_open(&t, "killed") || tenant_objects(&t, "killed"))
		return -1;
	if (write(to_parent, "r", 1) != 1)
		return -1;
	for (;;)
		pause();
}

static void check_sigkill(void)
{
	struct mnic_cmd_query_device_out q;
	long freed = counter("ctx_dealloc"), failed = counter("ctx_dealloc_failed");
	int p[2], fd, st = 0;
	char ready;
	pid_t pid;

	if (pipe(p)) {
		result("tenancy_pipe", 0, strerror(errno));
		return;
	}
	pid = spawn(tenant_sleeper, &p[1]);
	close(p[1]);   /* a tenant that dies in its setup ends the read */
	if (read(p[0], &ready, 1) != 1) {
		close(p[0]);
		reap(pid, "tenancy_killed_tenant_setup");
		return;
	}
	fd = root_fd();
	if (fd >= 0) {
		result("tenancy_objects_before_kill",
		       query_device(fd, &q) == 0 && q.n_qp >= 1 && q.n_mr >= 1 && q.n_ctx >= 1,
		       "the tenant's objects are not there");
		close(fd);
	}
	kill(pid, SIGKILL);
	result("tenancy_sigkill", waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
					  WTERMSIG(st) == SIGKILL,
	       "the tenant did not die of SIGKILL");
	/* The file was released before the parent could reap the child. */
	check_empty("tenancy_sigkill_leaves_nothing");
	result("tenancy_sigkill_context_freed",
	       counter("ctx_dealloc") == freed + 1 && counter("ctx_dealloc_failed") == failed,
	       "counters/ctx_dealloc did not grow by one, or a DEALLOC failed");
	close(p[0]);
}

/* ---- selfdump ------------------------------------------------------------- */

static int self_dump(void *arg)
{
	const char *img = arg;
	static uint8_t out[1024 * 1024];
	struct mnic_cmd_dump_out *d = (void *)out;
	struct tenant t;
	FILE *f;
	int rc;

	if (tenant_open(&t, "self") || tenant_objects(&t, "self"))
		return -1;
	rc = cmd_handle(t.fd, MNIC_CMD_DUMP_CONTEXT, 0, 0, MNIC_CTX_SELF, out, sizeof(out));
	expect_ok("tenancy_self_dump", rc);
	if (rc == 0) {
		result("tenancy_self_dump_fits",
		       d->image_len > 0 && d->image_len <= sizeof(out) - sizeof(*d) &&
			       d->objects[4] == 1,
		       "image length or QP count wrong");
		f = fopen(img, "wb");
		result("tenancy_self_dump_written",
		       f && fwrite(out + sizeof(*d), 1, d->image_len, f) == d->image_len &&
			       fclose(f) == 0,
		       strerror(errno));
	}
	expect_ok("tenancy_self_abort",
		  cmd_handle(t.fd, MNIC_CMD_ABORT_DUMP, 0, 0, t.ctx.ctx, out, 64));
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	const char *name;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: mnic-tenancy-check priv|isolate|sigkill|empty DEV\n"
				"       mnic-tenancy-check selfdump DEV IMG\n");
		return 2;
	}
	dev_path = argv[2];
	name = strrchr(dev_path, '/') ? strrchr(dev_path, '/') + 1 : dev_path;
	snprintf(sysdir, sizeof(sysdir), "/sys/class/misc/%s", name);
	/* Tenants are nobody: let them open the node (udev's job on a host). */
	if (chmod(dev_path, 0666)) {
		fprintf(stderr, "mnic-tenancy-check: chmod %s: %s\n", dev_path, strerror(errno));
		return 2;
	}
	if (!strcmp(mode, "priv"))
		check_priv();
	else if (!strcmp(mode, "isolate"))
		check_isolate();
	else if (!strcmp(mode, "sigkill"))
		check_sigkill();
	else if (!strcmp(mode, "empty"))
		check_empty("tenancy_nic_empty");
	else if (!strcmp(mode, "selfdump") && argc > 3)
		reap(spawn(self_dump, argv[3]), "tenancy_nobody_checkpoints_itself");
	else
		return 2;
	if (failures) {
		printf("TENANCY-CHECK FAIL %u/%u\n", failures, checks);
		return 1;
	}
	printf("TENANCY-CHECK PASS %u\n", checks);
	return 0;
}
