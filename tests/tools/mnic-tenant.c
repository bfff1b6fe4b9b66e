/* mnic-tenant: two tenants of one NIC, for the tenancy tests
 * (tests/integration/tenancy_posix.sh; mnic/cmd.h "contexts").
 *
 *   mnic-tenant hold DEV FILE    a tenant: PD, CQ, QP (INIT), MR in its own
 *                                context; writes "ctx qpn cq pd lkey
 *                                ua_offset ua_size" to FILE, then waits for a
 *                                signal (the test kills it, SIGKILL included)
 *   mnic-tenant probe DEV FILE   another tenant: every command naming the
 *                                objects in FILE must be answered exactly as
 *                                a handle that does not exist, every
 *                                privileged command (and any naming the
 *                                other context) NOT_PRIV; its own context
 *                                dumps and aborts.  One line per check;
 *                                exit 0 only if every check holds.
 *
 *   mnic-tenant churn DEV N      a tenant makes and destroys N objects (rounds
 *                                of PD, CQ, MR, QP, SRQ, plus refused creates)
 *                                and checks after every round that the
 *                                host-memory figure (mnic_mem_usage) is back
 *                                where it started; one line at the end
 *   mnic-tenant bigmr DEV BYTES  host-memory mode: registers one MR of BYTES
 *                                (its page list longer than one WRITE_MTT
 *                                carries) and prints how many commands the
 *                                NIC answered for it (QUERY_COUNTERS
 *                                cmds_delivered through a management
 *                                handle, the counting's own commands
 *                                subtracted)
 *   mnic-tenant badmr DEV        /dev/mnicN on a NIC with host memory:
 *                                mnic_reg_mr of buffers the module cannot
 *                                pin (a PROT_READ mapping for LOCAL_WRITE,
 *                                a range with a hole) refused, each with
 *                                the module's reason, nothing left pinned
 *                                (VmPin); a heap buffer still registers
 *
 * "Exactly as a handle that does not exist": the probe makes an object of
 * the same type, destroys it, and names that handle; the firmware's answer
 * to the other tenant's live handle must carry the same status and
 * syndrome, so a tenant cannot even learn that the handle is in use. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mnic/libmnic.h"

#define QP_OUT ((uint32_t)sizeof(struct mnic_cmd_query_qp_out))

struct held {
	unsigned ctx, qpn, cq, pd, lkey;
	unsigned long long ua_offset, ua_size;
};

static int failures;

static void check(int ok, const char *what, const struct mnic_dev *dev)
{
	char buf[256];

	if (ok) {
		printf("ok: %s\n", what);
		return;
	}
	failures++;
	printf("FAIL: %s (%s)\n", what,
	       dev ? mnic_strerror_result(mnic_last_error(dev), buf, sizeof(buf)) : "");
}

static int die(const char *what, struct mnic_dev *dev)
{
	fprintf(stderr, "mnic-tenant: %s: %s\n", what, dev ? mnic_strerror_last(dev) : "");
	return 1;
}

static int make_objects(struct mnic_dev *dev, struct mnic_pd **pd, struct mnic_cq **cq,
			struct mnic_qp **qp, struct mnic_mr **mr)
{
	struct mnic_qp_init_attr a;
	struct mnic_qp_attr qa;
	struct mnic_buf buf;

	if (mnic_alloc_pd(dev, pd) || mnic_create_cq(dev, 16, cq) ||
	    mnic_alloc(dev, 65536, 4096, &buf) ||
	    mnic_reg_mr(*pd, buf.addr, buf.len, MNIC_ACCESS_LOCAL_WRITE | MNIC_ACCESS_REMOTE_WRITE, mr))
		return -1;
	memset(&a, 0, sizeof(a));
	a.pd = *pd;
	a.send_cq = *cq;
	a.recv_cq = *cq;
	a.max_send_wr = 8;
	a.max_recv_wr = 8;
	a.max_send_sge = 1;
	a.max_recv_sge = 1;
	if (mnic_create_qp(&a, qp))
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = MNIC_QPS_INIT;
	qa.qp_access_flags = MNIC_ACCESS_REMOTE_WRITE;
	return mnic_modify_qp(*qp, &qa, MNIC_QP_STATE | MNIC_QP_ACCESS_FLAGS | MNIC_QP_PKEY_INDEX |
						 MNIC_QP_PORT);
}

static int hold(const char *path, const char *file)
{
	struct mnic_dev *dev;
	struct mnic_pd *pd;
	struct mnic_cq *cq;
	struct mnic_qp *qp;
	struct mnic_mr *mr;
	struct mnic_ctx_info ci;
	FILE *f;

	if (mnic_open(path, &dev) < 0) {
		fprintf(stderr, "mnic-tenant: %s\n", mnic_open_error());
		return 1;
	}
	if (make_objects(dev, &pd, &cq, &qp, &mr) < 0)
		return die("making objects", dev);
	if (mnic_context(dev, &ci) < 0)
		return die("QUERY_CONTEXT", dev);
	f = fopen(file, "w");
	if (!f) {
		perror(file);
		return 1;
	}
	fprintf(f, "%u %u %u %u %u %llu %llu\n", ci.ctx, qp->qp_num, cq->handle, pd->handle,
		mr->lkey, (unsigned long long)ci.ua_offset, (unsigned long long)ci.ua_size);
	fclose(f);
	printf("holding ctx %u qpn 0x%x (pid %ld)\n", ci.ctx, qp->qp_num, (long)getpid());
	fflush(stdout);
	pause();
	mnic_close(dev);   /* not reached after SIGTERM's default action: the test checks both */
	return 0;
}

/* One command by hand, so the probe names any handle it likes. */
static struct mnic_cmd_result raw(struct mnic_dev *dev, const void *in, uint32_t in_len,
				  uint32_t out_len)
{
	uint8_t out[256];
	struct mnic_cmd_result r;

	memset(out, 0, sizeof(out));
	if (out_len > sizeof(out))
		out_len = sizeof(out);
	mnic_cmd(dev, in, in_len, out, out_len, &r);
	return r;
}

static struct mnic_cmd_result by_handle(struct mnic_dev *dev, uint16_t opcode, uint16_t op_mod,
					uint32_t handle, uint32_t out_len)
{
	struct mnic_cmd_handle_in in;

	memset(&in, 0, sizeof(in));
	in.hdr.opcode = opcode;
	in.hdr.op_mod = op_mod;
	in.handle = handle;
	return raw(dev, &in, sizeof(in), out_len);
}

static int same(struct mnic_cmd_result a, struct mnic_cmd_result b)
{
	return a.status != MNIC_CMD_STAT_OK && a.status == b.status && a.syndrome == b.syndrome;
}

static int not_priv(struct mnic_cmd_result r)
{
	return r.status == MNIC_CMD_STAT_NOT_PRIV;
}

static int probe(const char *path, const char *file)
{
	struct mnic_dev *dev;
	struct mnic_pd *pd, *pd2;
	struct mnic_cq *cq, *cq2;
	struct mnic_qp *qp, *qp2;
	struct mnic_mr *mr, *mr2;
	struct mnic_cmd_result gone, r;
	struct mnic_ctx_info ci;
	struct held h;
	char what[160];
	uint32_t dead_qpn, dead_cq, dead_pd, dead_lkey;
	FILE *f = fopen(file, "r");

	if (!f || fscanf(f, "%u %u %u %u %u %llu %llu", &h.ctx, &h.qpn, &h.cq, &h.pd, &h.lkey,
			 &h.ua_offset, &h.ua_size) != 7) {
		fprintf(stderr, "mnic-tenant: %s: no held objects\n", file);
		return 1;
	}
	fclose(f);
	if (mnic_open(path, &dev) < 0) {
		fprintf(stderr, "mnic-tenant: %s\n", mnic_open_error());
		return 1;
	}
	/* handles that no longer exist, one per type, for the comparisons */
	if (make_objects(dev, &pd2, &cq2, &qp2, &mr2) < 0)
		return die("making objects", dev);
	dead_qpn = qp2->qp_num;
	dead_cq = cq2->handle;
	dead_pd = pd2->handle;
	dead_lkey = mr2->lkey;
	if (mnic_destroy_qp(qp2) || mnic_dereg_mr(mr2) || mnic_destroy_cq(cq2) ||
	    mnic_dealloc_pd(pd2))
		return die("destroying objects", dev);
	if (make_objects(dev, &pd, &cq, &qp, &mr) < 0)
		return die("making objects", dev);
	if (mnic_context(dev, &ci) < 0)
		return die("QUERY_CONTEXT", dev);
	check(ci.ctx != h.ctx, "the two tenants have different contexts", dev);
	check(ci.ua_offset + ci.ua_size <= h.ua_offset || h.ua_offset + h.ua_size <= ci.ua_offset,
	      "their user-area ranges do not overlap", NULL);

	/* the other tenant's objects are not there */
	gone = by_handle(dev, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_BY_QPN, dead_qpn, QP_OUT);
	r = by_handle(dev, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_BY_QPN, h.qpn, QP_OUT);
	check(same(r, gone), "QUERY_QP of the other's QP: as a QPN that does not exist", dev);
	{
		struct mnic_cmd_modify_qp_in m;

		memset(&m, 0, sizeof(m));
		m.hdr.opcode = MNIC_CMD_MODIFY_QP;
		m.attr_mask = MNIC_QP_STATE;
		m.attr.qp_state = MNIC_QPS_ERR;
		m.qpn = dead_qpn;
		gone = raw(dev, &m, sizeof(m), 8);
		m.qpn = h.qpn;
		r = raw(dev, &m, sizeof(m), 8);
		check(same(r, gone), "MODIFY_QP (to ERR) of the other's QP: refused as absent", dev);
	}
	{
		struct mnic_cmd_set_qp_mig_key_in k;

		memset(&k, 0, sizeof(k));
		k.hdr.opcode = MNIC_CMD_SET_QP_MIG_KEY;
		k.qpn = dead_qpn;
		gone = raw(dev, &k, sizeof(k), 8);
		k.qpn = h.qpn;
		r = raw(dev, &k, sizeof(k), 8);
		check(same(r, gone), "SET_QP_MIG_KEY of the other's QP: refused as absent", dev);
	}
	{
		static const struct {
			uint16_t opcode;
			const char *name;
		} destroys[] = {
			{MNIC_CMD_DESTROY_QP, "DESTROY_QP"},
			{MNIC_CMD_DEREG_MR, "DEREG_MR"},
			{MNIC_CMD_DESTROY_CQ, "DESTROY_CQ"},
			{MNIC_CMD_DEALLOC_PD, "DEALLOC_PD"},
		};
		const uint32_t dead[] = {dead_qpn, dead_lkey, dead_cq, dead_pd};
		const uint32_t live[] = {h.qpn, h.lkey, h.cq, h.pd};

		for (size_t i = 0; i < sizeof(destroys) / sizeof(destroys[0]); i++) {
			gone = by_handle(dev, destroys[i].opcode, 0, dead[i], 8);
			r = by_handle(dev, destroys[i].opcode, 0, live[i], 8);
			snprintf(what, sizeof(what), "%s of the other's object: refused as absent",
				 destroys[i].name);
			check(same(r, gone), what, dev);
		}
	}
	/* QUERY_QP NEXT walks only our own QPs */
	{
		struct mnic_cmd_handle_in in;
		struct mnic_cmd_query_qp_out o;
		uint32_t next = 0;
		int seen_other = 0, seen_own = 0;

		for (int i = 0; i < 5000; i++) {
			memset(&in, 0, sizeof(in));
			in.hdr.opcode = MNIC_CMD_QUERY_QP;
			in.hdr.op_mod = MNIC_QUERY_QP_NEXT;
			in.handle = next;
			if (mnic_cmd(dev, &in, sizeof(in), &o, sizeof(o), NULL) < 0)
				break;
			seen_other |= o.reserved == h.qpn;
			seen_own |= o.reserved == qp->qp_num;
			next = (o.reserved & 0xfffu) + 1u;
		}
		check(!seen_other && seen_own, "QUERY_QP NEXT lists our QP and not the other's",
		      NULL);
	}
	/* objects of the other context cannot be used in ours */
	{
		struct mnic_cmd_create_qp_in c;
		struct mnic_cmd_reg_mr_in m;

		memset(&c, 0, sizeof(c));
		c.hdr.opcode = MNIC_CMD_CREATE_QP;
		c.pd = h.pd;
		c.send_cq = cq->handle;
		c.recv_cq = cq->handle;
		c.srq = MNIC_NO_SRQ;
		c.max_send_sge = 1;
		c.max_recv_sge = 1;
		c.sq = qp->sq;
		c.rq = qp->rq;
		r = raw(dev, &c, sizeof(c), 16);
		check(r.status != MNIC_CMD_STAT_OK, "CREATE_QP on the other's PD: refused", dev);
		c.pd = pd->handle;
		c.send_cq = h.cq;
		r = raw(dev, &c, sizeof(c), 16);
		check(r.status != MNIC_CMD_STAT_OK, "CREATE_QP on the other's CQ: refused", dev);
		memset(&m, 0, sizeof(m));
		m.hdr.opcode = MNIC_CMD_REG_MR;
		m.pd = pd->handle;
		m.access = MNIC_ACCESS_LOCAL_WRITE;
		m.addr = h.ua_offset;
		m.length = 4096;
		r = raw(dev, &m, sizeof(m), 16);
		check(r.status != MNIC_CMD_STAT_OK, "REG_MR over the other's memory: refused", dev);
	}
	/* the privileged set, and the other context itself */
	{
		static const struct {
			uint16_t opcode;
			const char *name;
		} ctx_cmds[] = {
			{MNIC_CMD_DUMP_CONTEXT, "DUMP_CONTEXT"},
			{MNIC_CMD_RESUME_CONTEXT, "RESUME_CONTEXT"},
			{MNIC_CMD_ABORT_DUMP, "ABORT_DUMP"},
			{MNIC_CMD_DEALLOC_CONTEXT, "DEALLOC_CONTEXT"},
			{MNIC_CMD_QUERY_CONTEXT, "QUERY_CONTEXT"},
		};
		struct mnic_cmd_mig_config_in mc;
		struct mnic_cmd_simple_in s;
		struct mnic_cmd_alloc_context_in ac;

		for (size_t i = 0; i < sizeof(ctx_cmds) / sizeof(ctx_cmds[0]); i++) {
			r = by_handle(dev, ctx_cmds[i].opcode, 0, h.ctx, 128);
			snprintf(what, sizeof(what), "%s of the other context: NOT_PRIV",
				 ctx_cmds[i].name);
			check(not_priv(r), what, dev);
		}
		memset(&mc, 0, sizeof(mc));
		mc.hdr.opcode = MNIC_CMD_MIG_CONFIG;
		r = raw(dev, &mc, sizeof(mc), 8);
		check(not_priv(r), "MIG_CONFIG: NOT_PRIV", dev);
		memset(&s, 0, sizeof(s));
		s.hdr.opcode = MNIC_CMD_QUERY_COUNTERS;
		r = raw(dev, &s, sizeof(s), 128);
		check(not_priv(r), "QUERY_COUNTERS: NOT_PRIV", dev);
		s.hdr.opcode = MNIC_CMD_FW_ACTIVATE;
		{
			struct mnic_cmd_fw_activate_in fa;

			memset(&fa, 0, sizeof(fa));
			fa.hdr.opcode = MNIC_CMD_FW_ACTIVATE;
			r = raw(dev, &fa, sizeof(fa), 8);
			check(not_priv(r), "FW_ACTIVATE: NOT_PRIV", dev);
		}
		memset(&ac, 0, sizeof(ac));
		ac.hdr.opcode = MNIC_CMD_ALLOC_CONTEXT;
		ac.ua_size = MNIC_CTX_UA_ALIGN;
		r = raw(dev, &ac, sizeof(ac), sizeof(struct mnic_cmd_alloc_context_out));
		check(not_priv(r), "ALLOC_CONTEXT: NOT_PRIV", dev);
	}
	/* our own context: we may checkpoint ourselves, and only ourselves */
	{
		uint8_t *img = NULL;
		uint32_t len = 0;
		struct mnic_cmd_dump_out st;
		struct mnic_cmd_query_qp_out q;

		memset(&st, 0, sizeof(st));
		check(mnic_dump_context(dev, 0, &img, &len, &st) == 0 && st.objects[4] == 1,
		      "DUMP_CONTEXT of our own context: one QP, ours", dev);
		free(img);
		check(mnic_abort_dump(dev) == 0, "ABORT_DUMP of our own context", dev);
		check(mnic_query_qp(dev, qp->qp_num, &q) == 0 && !(q.mig_flags & MNIC_QP_F_STOPPED),
		      "our QP runs again", dev);
	}
	if (mnic_destroy_qp(qp) || mnic_dereg_mr(mr) || mnic_destroy_cq(cq) || mnic_dealloc_pd(pd))
		return die("destroying objects", dev);
	mnic_close(dev);
	printf("%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}

/* Memory must come back after every destroy and every refused create. */
static int churn(const char *path, unsigned long n)
{
	struct mnic_dev *dev;
	uint64_t start, used, size;
	unsigned long objects = 0, refused = 0;

	if (mnic_open(path, &dev) < 0) {
		fprintf(stderr, "mnic-tenant: %s\n", mnic_open_error());
		return 1;
	}
	if (mnic_mem_usage(dev, &start, &size) < 0)
		return die("memory figure", dev);
	for (unsigned long round = 0; objects < n; round++) {
		struct mnic_pd *pd;
		struct mnic_cq *cq, *gone;
		struct mnic_mr *mr;
		struct mnic_qp *qp;
		struct mnic_srq *srq;
		struct mnic_buf buf;
		struct mnic_qp_init_attr a;

		if (mnic_alloc_pd(dev, &pd) || mnic_create_cq(dev, 64, &cq) ||
		    mnic_alloc(dev, 4096u << (round % 5), 4096, &buf) ||
		    mnic_reg_mr(pd, buf.addr, buf.len, MNIC_ACCESS_LOCAL_WRITE, &mr) ||
		    mnic_create_srq(pd, 32, 1, 0, &srq))
			return die("making objects", dev);
		memset(&a, 0, sizeof(a));
		a.pd = pd;
		a.send_cq = cq;
		a.recv_cq = cq;
		a.max_send_wr = 16u << (round % 3);
		a.max_recv_wr = round % 2 ? 16 : 0;
		a.srq = round % 2 ? NULL : srq;
		a.max_send_sge = 1;
		a.max_recv_sge = 1;
		if (mnic_create_qp(&a, &qp))
			return die("CREATE_QP", dev);
		objects += 5;
		if (round % 16 == 0) {
			struct mnic_pd bad = {.dev = dev, .handle = pd->handle ^ 0x5a5a0000u};
			struct mnic_srq *no;

			/* refused by the device after the library allocated the
			 * rings: a QP on a CQ that is gone, an SRQ of a PD that
			 * does not exist */
			struct mnic_cq stale;
			struct mnic_qp *no_qp;

			if (mnic_create_cq(dev, 16, &gone))
				return die("CQ to destroy", dev);
			stale = *gone;   /* the handle outlives the struct */
			if (mnic_destroy_cq(gone))
				return die("DESTROY_CQ", dev);
			a.send_cq = a.recv_cq = &stale;
			if (mnic_create_qp(&a, &no_qp) == 0)
				return die("a QP on a destroyed CQ was made", dev);
			if (mnic_create_srq(&bad, 32, 1, 0, &no) == 0)
				return die("an SRQ of a bogus PD was made", dev);
			refused += 2;
		}
		if (mnic_destroy_qp(qp) || mnic_destroy_srq(srq) || mnic_dereg_mr(mr) ||
		    mnic_free(dev, buf.addr) || mnic_destroy_cq(cq) || mnic_dealloc_pd(pd))
			return die("destroying objects", dev);
		if (mnic_mem_usage(dev, &used, &size) < 0)
			return die("memory figure", dev);
		if (used != start) {
			fprintf(stderr, "mnic-tenant: round %lu: %llu bytes in use, %llu at the start\n",
				round, (unsigned long long)used, (unsigned long long)start);
			return 1;
		}
	}
	printf("churn: %lu objects made and destroyed, %lu creates refused, %llu bytes in use "
	       "(%llu at the start) of %llu\n", objects, refused, (unsigned long long)used,
	       (unsigned long long)start, (unsigned long long)size);
	mnic_close(dev);
	return 0;
}

static int delivered(struct mnic_dev *mg, uint64_t *v)
{
	return mnic_counter(mg, MNIC_COUNTERS_MGMT, "cmds_delivered", v);
}

static int bigmr(const char *path, uint64_t bytes)
{
	struct mnic_dev *dev, *mg;
	struct mnic_pd *pd;
	struct mnic_mr *mr;
	struct mnic_buf buf;
	struct mnic_hostmem_info hm;
	uint64_t c0, c1, c2;

	if (mnic_open(path, &dev) < 0 || mnic_open_mgmt(path, &mg) < 0) {
		fprintf(stderr, "mnic-tenant: %s\n", mnic_open_error());
		return 1;
	}
	if (mnic_set_context_size(dev, bytes + (1u << 20)) || mnic_alloc_pd(dev, &pd) ||
	    mnic_alloc(dev, bytes, 4096, &buf))
		return die("PD and memory", dev);
	if (mnic_hostmem_info(dev, &hm) || hm.aperture == 0) {
		fprintf(stderr, "mnic-tenant: %s has no host-memory aperture\n", path);
		return 1;
	}
	if (delivered(mg, &c0) || delivered(mg, &c1))
		return die("QUERY_COUNTERS", mg);
	if (mnic_reg_mr(pd, buf.addr, bytes, MNIC_ACCESS_LOCAL_WRITE, &mr))
		return die("REG_MR", dev);
	if (delivered(mg, &c2))
		return die("QUERY_COUNTERS", mg);
	printf("bigmr: %llu pages, %llu commands\n", (unsigned long long)(bytes / 4096),
	       (unsigned long long)((c2 - c1) - (c1 - c0)));
	if (mnic_dereg_mr(mr) || mnic_free(dev, buf.addr) || mnic_dealloc_pd(pd))
		return die("teardown", dev);
	mnic_close(mg);
	mnic_close(dev);
	return 0;
}

/* This process's pinned memory (/proc/self/status VmPin), KiB; -1 unknown. */
static long vm_pin_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* One registration the module must refuse with -EFAULT, libmnic naming
 * the reason. */
static void refused_mr(struct mnic_pd *pd, void *p, uint64_t len, const char *what)
{
	struct mnic_mr *mr = NULL;
	int err = mnic_reg_mr(pd, (uint64_t)(uintptr_t)p, len, MNIC_ACCESS_LOCAL_WRITE, &mr);
	const char *msg = mnic_strerror_last(pd->dev);

	printf("  %s: %d, %s\n", what, err, msg);
	check(err == -EFAULT && !mr && strstr(msg, "refused by the module: not mapped read-write"),
	      what, NULL);
}

static int badmr(const char *path)
{
	struct mnic_dev *dev;
	struct mnic_pd *pd;
	struct mnic_mr *mr;
	long psz = sysconf(_SC_PAGESIZE);
	uint8_t *ro, *holed, *heap;

	if (mnic_open(path, &dev) < 0) {
		fprintf(stderr, "mnic-tenant: %s\n", mnic_open_error());
		return 1;
	}
	if (mnic_alloc_pd(dev, &pd))
		return die("PD", dev);
	ro = mmap(NULL, (size_t)psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	holed = mmap(NULL, 3 * (size_t)psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (ro == MAP_FAILED || holed == MAP_FAILED || munmap(holed + psz, (size_t)psz))
		return die("mmap", NULL);
	holed[0] = holed[2 * psz] = 1;
	refused_mr(pd, ro, (uint64_t)psz, "reg_mr_read_only_refused");
	/* the first page pinned, the hole refused: that pin undone too */
	refused_mr(pd, holed, 3 * (uint64_t)psz, "reg_mr_hole_refused");
	check(vm_pin_kib() == 0, "reg_mr_refusals_pin_nothing", NULL);
	heap = malloc(3 * (size_t)psz);
	if (!heap)
		return die("malloc", NULL);
	memset(heap, 0, 3 * (size_t)psz);
	check(mnic_reg_mr(pd, (uint64_t)(uintptr_t)heap + 1, 2 * (uint64_t)psz,
			  MNIC_ACCESS_LOCAL_WRITE, &mr) == 0, "reg_mr_heap_after_refusals", dev);
	check(vm_pin_kib() > 0, "reg_mr_heap_pinned", NULL);
	check(mnic_dereg_mr(mr) == 0, "dereg_mr_heap", dev);
	check(vm_pin_kib() == 0, "dereg_mr_heap_unpinned", NULL);
	mnic_dealloc_pd(pd);
	mnic_close(dev);
	free(heap);
	munmap(ro, (size_t)psz);
	munmap(holed, 3 * (size_t)psz);
	printf("badmr: %d failures\n", failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);   /* every line in the log, whatever ends us */
	if (argc == 4 && !strcmp(argv[1], "hold"))
		return hold(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "probe"))
		return probe(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "churn"))
		return churn(argv[2], strtoul(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "bigmr"))
		return bigmr(argv[2], strtoull(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "badmr"))
		return badmr(argv[2]);
	fprintf(stderr, "usage: mnic-tenant hold DEV FILE | probe DEV FILE | churn DEV N | "
		"bigmr DEV BYTES | badmr DEV\n");
	return 2;
}
