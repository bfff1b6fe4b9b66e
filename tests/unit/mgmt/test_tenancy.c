/* Contexts through the whole transport (mgmt/cmd_context.c, the
 * dispatcher's ownership and privilege checks, docs/host-interface.md
 * "Contexts"): two tenants A and B on one engine.  B cannot see, query,
 * modify, destroy, re-key or dump A's objects, nor build on them: each
 * answer equals the one for a handle that does not exist, and is counted
 * in refused_foreign.  The privileged set is NOT_PRIV from a tenant
 * (refused_priv); an unallocated issuer is refused (refused_ctx); rings
 * and MRs must lie in the issuer's range; DEALLOC_CONTEXT leaves nothing;
 * a dump of A stops A's QPs only, its image records A's range and
 * restores only into a context that holds it. */
/* User area 4 MiB: room for MNIC_CTX_MAX contexts of MNIC_CTX_UA_ALIGN. */
#define HOST_WINDOW (6u << 20)
#include "fake_host.h"
#include "rocev2/dump.h"

static struct host H, T;   /* T: migration target */

#define CTX_A_UA (HOST_USER + 0x100000u)
#define CTX_UA_SIZE 0x80000u
#define OUT_MAX 4096u

static int setup(void **state)
{
	(void)state;
	host_init(&H);
	host_enable(&H);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	host_free(&H);
	return 0;
}

/* ---- issuing as a context ------------------------------------------------- */

struct reply {
	uint8_t status;
	uint32_t syndrome;
	uint8_t out[OUT_MAX];
};

/* Issue in (its header's ctx set to ctx). */
static struct reply issue_as(struct host *h, uint16_t ctx, void *in, uint32_t in_len,
			     uint32_t out_len)
{
	struct reply r;
	struct mnic_cmd_in_hdr hd;

	memcpy(&hd, in, sizeof(hd));
	hd.ctx = ctx;
	memcpy(in, &hd, sizeof(hd));
	memset(&r, 0, sizeof(r));
	r.status = host_cmd(h, in, in_len, r.out, out_len);
	r.syndrome = out_syndrome(r.out);
	return r;
}

static void expect(const struct reply *r, uint8_t status, uint32_t site)
{
	if (r->status != status)
		fail_msg("status %s, want %s; syndrome %s/%s", mnic_cmd_status_name(r->status),
			 mnic_cmd_status_name(status),
			 mnic_cmd_errno_name(MNIC_SYND_ERRNO(r->syndrome)),
			 mnic_cmd_site_name(MNIC_SYND_SITE(r->syndrome)));
	if (site)
		assert_int_equal(MNIC_SYND_SITE(r->syndrome), site);
}

static uint32_t handle_of(const struct reply *r)
{
	struct mnic_cmd_handle_out o;

	memcpy(&o, r->out, sizeof(o));
	return o.handle;
}

static struct reply by_handle_as(struct host *h, uint16_t ctx, uint16_t opcode, uint16_t op_mod,
				 uint32_t handle, uint32_t out_len)
{
	struct mnic_cmd_handle_in in = { in_hdr(opcode, op_mod), handle, 0 };

	return issue_as(h, ctx, &in, sizeof(in), out_len);
}

static struct reply simple_as(struct host *h, uint16_t ctx, uint16_t opcode, uint16_t op_mod,
			      uint32_t out_len)
{
	struct mnic_cmd_simple_in in = { in_hdr(opcode, op_mod) };

	return issue_as(h, ctx, &in, sizeof(in), out_len);
}

static struct reply alloc_ctx(struct host *h, uint16_t op_mod, uint64_t off, uint64_t size,
			      uint32_t tag)
{
	struct mnic_cmd_alloc_context_in in = { in_hdr(MNIC_CMD_ALLOC_CONTEXT, op_mod), off, size,
						tag, 0 };

	return issue_as(h, MNIC_CTX_MGMT, &in, sizeof(in), sizeof(struct mnic_cmd_alloc_context_out));
}

static uint16_t new_ctx(struct host *h, uint16_t op_mod, uint64_t off, uint64_t size)
{
	struct reply r = alloc_ctx(h, op_mod, off, size, 0x7a);
	struct mnic_cmd_alloc_context_out o;

	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&o, r.out, sizeof(o));
	assert_true(o.ctx >= 1 && o.ctx <= MNIC_CTX_MAX);
	return (uint16_t)o.ctx;
}

static struct mnic_cmd_query_device_out query_device_as(struct host *h, uint16_t ctx)
{
	struct reply r = simple_as(h, ctx, MNIC_CMD_QUERY_DEVICE, 0,
				   sizeof(struct mnic_cmd_query_device_out));
	struct mnic_cmd_query_device_out o;

	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&o, r.out, sizeof(o));
	return o;
}

/* A tenant's objects, all at base (inside its range): PD, MR, CQ, SRQ,
 * a QP with its own RQ.  o[]: pd lkey cq srq qp. */
static void populate(struct host *h, uint16_t ctx, uint64_t base, uint32_t o[5])
{
	struct mnic_cmd_simple_in pd = { in_hdr(MNIC_CMD_ALLOC_PD, 0) };
	struct mnic_cmd_reg_mr_in mr;
	struct mnic_cmd_create_cq_in cq;
	struct mnic_cmd_create_srq_in srq;
	struct mnic_cmd_create_qp_in qp;
	struct reply r;

	r = issue_as(h, ctx, &pd, sizeof(pd), 16);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	o[0] = handle_of(&r);
	mr = (struct mnic_cmd_reg_mr_in){ in_hdr(MNIC_CMD_REG_MR, 0), o[0],
					  ROCEV2_ACCESS_LOCAL_WRITE, base + 0x40000, 0x1000, 0, 0 };
	r = issue_as(h, ctx, &mr, sizeof(mr), 16);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	o[1] = handle_of(&r);
	memset(&cq, 0, sizeof(cq));
	cq.hdr = in_hdr(MNIC_CMD_CREATE_CQ, 0);
	cq.q = (struct mnic_queue_desc){ base, base + 0x4000, 64, 0, 0, 0 };
	r = issue_as(h, ctx, &cq, sizeof(cq), 16);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	o[2] = handle_of(&r);
	memset(&srq, 0, sizeof(srq));
	srq.hdr = in_hdr(MNIC_CMD_CREATE_SRQ, 0);
	srq.pd = o[0];
	srq.max_sge = 2;
	srq.q = (struct mnic_queue_desc){ base + 0x8000, base + 0x4008, 16, 0, 0, 0 };
	r = issue_as(h, ctx, &srq, sizeof(srq), 16);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	o[3] = handle_of(&r);
	memset(&qp, 0, sizeof(qp));
	qp.hdr = in_hdr(MNIC_CMD_CREATE_QP, 0);
	qp.pd = o[0];
	qp.send_cq = o[2];
	qp.recv_cq = o[2];
	qp.srq = MNIC_NO_SRQ;
	qp.max_send_sge = 2;
	qp.max_recv_sge = 2;
	qp.sq = (struct mnic_queue_desc){ base + 0x10000, base + 0x4010, 8, 0, 0, 0 };
	qp.rq = (struct mnic_queue_desc){ base + 0x11000, base + 0x4018, 8, 0, 0, 0 };
	r = issue_as(h, ctx, &qp, sizeof(qp), 16);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	o[4] = handle_of(&r);
}

static uint32_t qp_flags_as(struct host *h, uint16_t ctx, uint32_t qpn)
{
	struct reply r = by_handle_as(h, ctx, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_BY_QPN, qpn,
				      sizeof(struct mnic_cmd_query_qp_out));
	struct mnic_cmd_query_qp_out o;

	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&o, r.out, sizeof(o));
	return o.mig_flags;
}

/* ---- tests -------------------------------------------------------------------- */

/* ALLOC_CONTEXT: first fit for UA_ANY, exact for UA_AT, every refusal
 * named; QUERY_CONTEXT BY_ID / NEXT; QUERY_DEVICE's context fields. */
static void test_tenancy_alloc_context(void **state)
{
	struct mnic_cmd_alloc_context_out ao;
	struct mnic_cmd_query_context_out q;
	struct mnic_cmd_query_device_out d;
	struct reply r;
	uint16_t a, b, c;
	uint64_t before;

	(void)state;
	a = new_ctx(&H, MNIC_CTX_UA_AT, CTX_A_UA, CTX_UA_SIZE);
	/* UA_ANY: the lowest free aligned range, then the next one after A. */
	r = alloc_ctx(&H, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE, 1);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&ao, r.out, sizeof(ao));
	b = (uint16_t)ao.ctx;
	assert_int_equal(ao.ua_offset, HOST_USER);
	assert_int_equal(ao.ua_size, CTX_UA_SIZE);
	r = alloc_ctx(&H, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE, 2);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&ao, r.out, sizeof(ao));
	c = (uint16_t)ao.ctx;
	assert_int_equal(ao.ua_offset, HOST_USER + CTX_UA_SIZE);   /* the gap before A */
	r = alloc_ctx(&H, MNIC_CTX_UA_ANY, 0, 2 * CTX_UA_SIZE, 3);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&ao, r.out, sizeof(ao));
	assert_int_equal(ao.ua_offset, CTX_A_UA + CTX_UA_SIZE);    /* too big for it: after A */
	assert_true(a != b && b != c && a != c);
	/* Refusals: overlap (EEXIST), alignment, size, outside the user area. */
	before = H.m.cnt.refused_ctx_range;
	r = alloc_ctx(&H, MNIC_CTX_UA_AT, CTX_A_UA + CTX_UA_SIZE - MNIC_CTX_UA_ALIGN, CTX_UA_SIZE, 0);
	expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_CTX_UA);
	assert_int_equal(MNIC_SYND_ERRNO(r.syndrome), HAL_EEXIST);
	r = alloc_ctx(&H, MNIC_CTX_UA_AT, CTX_A_UA + 0x1000, CTX_UA_SIZE, 0);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_CTX_UA);
	r = alloc_ctx(&H, MNIC_CTX_UA_ANY, 0, 0x1000, 0);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_CTX_UA);
	r = alloc_ctx(&H, MNIC_CTX_UA_ANY, 0, 0, 0);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_CTX_UA);
	r = alloc_ctx(&H, MNIC_CTX_UA_AT, 0, CTX_UA_SIZE, 0);     /* the driver area */
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_CTX_UA);
	r = alloc_ctx(&H, MNIC_CTX_UA_AT, HOST_WINDOW, CTX_UA_SIZE, 0);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_CTX_UA);
	r = alloc_ctx(&H, MNIC_CTX_UA_AT, 0xffffffffffff0000ull, 0x20000, 0);   /* wraps */
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_CTX_UA);
	assert_int_equal(H.m.cnt.refused_ctx_range, before + 7);
	/* Free: [A + 1.5 MiB, end of the 4 MiB user area) = 1.5 MiB. */
	r = alloc_ctx(&H, MNIC_CTX_UA_ANY, 0, 0x180000u + MNIC_CTX_UA_ALIGN, 0);
	expect(&r, MNIC_CMD_STAT_NO_RESOURCES, MNIC_SITE_CTX_UA);
	/* QUERY_CONTEXT: by id, and the walk (MGMT's 0 first). */
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_BY_ID, b,
			 sizeof(q));
	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&q, r.out, sizeof(q));
	assert_int_equal(q.ctx, b);
	assert_int_equal(q.owner_tag, 1);
	assert_int_equal(q.ua_offset, HOST_USER);
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_NEXT, 0, sizeof(q));
	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&q, r.out, sizeof(q));
	assert_int_equal(q.ctx, MNIC_CTX_MGMT);
	assert_int_equal(q.ua_size, HOST_WINDOW - HOST_USER);
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_NEXT, 5, sizeof(q));
	expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_CTX_HANDLE);
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_BY_ID, 9, sizeof(q));
	expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_CTX_HANDLE);
	/* QUERY_DEVICE as B: its own id and range; the count excludes MGMT. */
	d = query_device_as(&H, b);
	assert_int_equal(d.ctx, b);
	assert_int_equal(d.n_ctx, 4);
	assert_int_equal(d.ctx_ua_offset, HOST_USER);
	assert_int_equal(d.ctx_ua_size, CTX_UA_SIZE);
	/* Freed, its range is first fit again; MGMT itself cannot be freed. */
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_DEALLOC_CONTEXT, 0, b, 8);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = alloc_ctx(&H, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE, 0);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&ao, r.out, sizeof(ao));
	assert_int_equal(ao.ua_offset, HOST_USER);
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_DEALLOC_CONTEXT, 0, MNIC_CTX_SELF, 8);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_CTX_ID);
}

/* Every context id taken: NO_RESOURCES. */
static void test_tenancy_context_ids_run_out(void **state)
{
	struct reply r;
	unsigned i;

	(void)state;
	for (i = 0; i + 1 < MNIC_CTX_MAX; i++)
		(void)new_ctx(&H, MNIC_CTX_UA_ANY, 0, MNIC_CTX_UA_ALIGN);
	/* One id left, the user area still has room for two: ids run out. */
	(void)new_ctx(&H, MNIC_CTX_UA_ANY, 0, MNIC_CTX_UA_ALIGN);
	r = alloc_ctx(&H, MNIC_CTX_UA_ANY, 0, MNIC_CTX_UA_ALIGN, 0);
	expect(&r, MNIC_CMD_STAT_NO_RESOURCES, MNIC_SITE_CTX_ID);
	assert_int_equal(query_device_as(&H, MNIC_CTX_MGMT).n_ctx, MNIC_CTX_MAX);
}

/* B names A's objects: each answer is the answer for no such object. */
static void test_tenancy_foreign_handles_look_absent(void **state)
{
	static const struct {
		uint16_t opcode;
		unsigned obj;           /* index into o[] */
	} cmds[] = {
		{ MNIC_CMD_DEALLOC_PD, 0 }, { MNIC_CMD_DEREG_MR, 1 }, { MNIC_CMD_DESTROY_CQ, 2 },
		{ MNIC_CMD_DESTROY_SRQ, 3 }, { MNIC_CMD_DESTROY_QP, 4 }, { MNIC_CMD_QUERY_QP, 4 },
	};
	uint32_t a_o[5], b_o[5];
	uint16_t a, b;
	uint64_t foreign;
	size_t i;

	(void)state;
	a = new_ctx(&H, MNIC_CTX_UA_AT, CTX_A_UA, CTX_UA_SIZE);
	b = new_ctx(&H, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE);
	populate(&H, a, CTX_A_UA, a_o);
	populate(&H, b, HOST_USER, b_o);
	foreign = H.m.cnt.refused_foreign;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		/* The same handle with its generation moved on names nothing. */
		uint32_t h = a_o[cmds[i].obj], gone = cmds[i].obj == 1 ? h ^ 0x80u
					: cmds[i].obj == 4 ? h ^ 0x800000u : h ^ 0x80000000u;
		const uint32_t ol = sizeof(struct mnic_cmd_query_qp_out);   /* the largest out */
		struct reply absent = by_handle_as(&H, b, cmds[i].opcode, 0, gone, ol);
		struct reply theirs = by_handle_as(&H, b, cmds[i].opcode, 0, h, ol);

		expect(&absent, MNIC_CMD_STAT_BAD_RES, 0);
		assert_int_equal(theirs.status, absent.status);
		assert_int_equal(theirs.syndrome, absent.syndrome);
	}
	assert_int_equal(H.m.cnt.refused_foreign, foreign + 6);
	/* MODIFY_QP, SET_QP_MIG_KEY, MODIFY_SRQ on A's objects. */
	{
		struct mnic_cmd_modify_qp_in mq;
		struct mnic_cmd_set_qp_mig_key_in mk;
		struct mnic_cmd_modify_srq_in ms;
		struct reply r;

		memset(&mq, 0, sizeof(mq));
		mq.hdr = in_hdr(MNIC_CMD_MODIFY_QP, 0);
		mq.qpn = a_o[4];
		mq.attr_mask = ROCEV2_QP_STATE;
		mq.attr.qp_state = ROCEV2_QPS_ERR;
		r = issue_as(&H, b, &mq, sizeof(mq), 8);
		expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_QP);
		memset(&mk, 0, sizeof(mk));
		mk.hdr = in_hdr(MNIC_CMD_SET_QP_MIG_KEY, 0);
		mk.qpn = a_o[4];
		r = issue_as(&H, b, &mk, sizeof(mk), 8);
		expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_QP);
		memset(&ms, 0, sizeof(ms));
		ms.hdr = in_hdr(MNIC_CMD_MODIFY_SRQ, 0);
		ms.srq = a_o[3];
		r = issue_as(&H, b, &ms, sizeof(ms), 8);
		expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_SRQ);
	}
	/* Building on A's PD / CQ / SRQ from B: refused as absent. */
	{
		struct mnic_cmd_reg_mr_in mr = { in_hdr(MNIC_CMD_REG_MR, 0), a_o[0],
						 ROCEV2_ACCESS_LOCAL_WRITE, HOST_USER + 0x40000, 0x1000, 0, 0 };
		struct mnic_cmd_create_qp_in qp;
		struct reply r;

		r = issue_as(&H, b, &mr, sizeof(mr), 16);
		expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_PD);
		memset(&qp, 0, sizeof(qp));
		qp.hdr = in_hdr(MNIC_CMD_CREATE_QP, 0);
		qp.pd = b_o[0];
		qp.send_cq = b_o[2];
		qp.recv_cq = a_o[2];
		qp.srq = MNIC_NO_SRQ;
		qp.sq = (struct mnic_queue_desc){ HOST_USER + 0x20000, HOST_USER + 0x4020, 8, 0, 0, 0 };
		r = issue_as(&H, b, &qp, sizeof(qp), 16);
		expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_CQ);
		qp.recv_cq = b_o[2];
		qp.srq = a_o[3];
		r = issue_as(&H, b, &qp, sizeof(qp), 16);
		expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_SRQ);
	}
	assert_int_equal(H.m.cnt.refused_foreign, foreign + 12);
	/* A's objects are all there, untouched; A and MGMT still reach them. */
	assert_int_equal(query_device_as(&H, a).n_qp, 1);
	assert_int_equal(query_device_as(&H, a).n_pd, 1);
	assert_int_equal(qp_flags_as(&H, a, a_o[4]), 0);
	assert_int_equal(qp_flags_as(&H, MNIC_CTX_MGMT, a_o[4]), 0);
	/* QUERY_QP NEXT walks the issuer's QPs only (MGMT: all). */
	{
		struct mnic_cmd_query_qp_out o;
		struct reply r = by_handle_as(&H, b, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_NEXT, 0,
					      sizeof(o));

		expect(&r, MNIC_CMD_STAT_OK, 0);
		memcpy(&o, r.out, sizeof(o));
		assert_int_equal(o.reserved, b_o[4]);
		r = by_handle_as(&H, b, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_NEXT, b_o[4] + 1, sizeof(o));
		expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_QP);
		r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_NEXT, 0,
				 sizeof(o));
		expect(&r, MNIC_CMD_STAT_OK, 0);
		memcpy(&o, r.out, sizeof(o));
		assert_int_equal(o.reserved, a_o[4]);     /* A's QP took the first slot */
	}
	/* QUERY_DEVICE: each tenant counts its own, MGMT all. */
	assert_int_equal(query_device_as(&H, b).n_mr, 1);
	assert_int_equal(query_device_as(&H, MNIC_CTX_MGMT).n_mr, 2);
}

/* The privileged set from a tenant: NOT_PRIV before any other check of
 * the command's content; the same commands for itself are allowed. */
static void test_tenancy_privileged_commands(void **state)
{
	static uint8_t in[160];
	static const struct {
		uint16_t opcode, op_mod;
		uint32_t in_len, out_len;
		uint32_t handle;        /* at offset 8 (handle_in) */
	} cmds[] = {
		{ MNIC_CMD_ALLOC_CONTEXT, 0, 32, 32, 0 },
		{ MNIC_CMD_DEALLOC_CONTEXT, 0, 16, 8, 0 },          /* filled: A */
		{ MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_BY_ID, 16, 56, 0 },
		{ MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_NEXT, 16, 56, 0 },
		{ MNIC_CMD_MIG_CONFIG, 0, 24, 8, 0 },
		{ MNIC_CMD_SET_GID, 0, 32, 8, 0 },
		{ MNIC_CMD_CREATE_ETHQ, 0, 80, 8, 0 },
		{ MNIC_CMD_DESTROY_ETHQ, 0, 8, 8, 0 },
		{ MNIC_CMD_QUERY_COUNTERS, 0, 8, 16, 0 },
		{ MNIC_CMD_FW_FLASH_BEGIN, 0, 144, 8, 0 },
		{ MNIC_CMD_FW_FLASH_DATA, 0, 16, 8, 0 },
		{ MNIC_CMD_FW_FLASH_END, 0, 8, 16, 0 },
		{ MNIC_CMD_FW_ACTIVATE, 0, 16, 8, 0 },
		{ MNIC_CMD_DUMP_CONTEXT, 0, 16, 64, 0 },
		{ MNIC_CMD_RESUME_CONTEXT, 0, 16, 8, 0 },
		{ MNIC_CMD_ABORT_DUMP, 0, 16, 8, 0 },
		{ MNIC_CMD_DUMP_CONTEXT, 0, 16, 64, MNIC_CTX_MGMT },
	};
	uint32_t a_o[5];
	uint16_t a, b;
	uint64_t priv;
	size_t i;

	(void)state;
	a = new_ctx(&H, MNIC_CTX_UA_AT, CTX_A_UA, CTX_UA_SIZE);
	b = new_ctx(&H, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE);
	populate(&H, a, CTX_A_UA, a_o);
	priv = H.m.cnt.refused_priv;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct mnic_cmd_in_hdr hd = in_hdr(cmds[i].opcode, cmds[i].op_mod);
		uint32_t h = cmds[i].handle ? cmds[i].handle : a;
		struct reply r;

		memset(in, 0, sizeof(in));
		memcpy(in, &hd, sizeof(hd));
		if (cmds[i].opcode == MNIC_CMD_DUMP_CONTEXT && cmds[i].handle == MNIC_CTX_MGMT)
			h = MNIC_CTX_MGMT;
		memcpy(in + 8, &h, 4);
		r = issue_as(&H, b, in, cmds[i].in_len, cmds[i].out_len);
		if (r.status != MNIC_CMD_STAT_NOT_PRIV)
			fail_msg("%s from a tenant: %s", mnic_cmd_opcode_name(cmds[i].opcode),
				 mnic_cmd_status_name(r.status));
		assert_int_equal(MNIC_SYND_SITE(r.syndrome), MNIC_SITE_PRIV);
	}
	assert_int_equal(H.m.cnt.refused_priv, priv + sizeof(cmds) / sizeof(cmds[0]));
	/* A's QP was never stopped by B's DUMP of A. */
	assert_int_equal(qp_flags_as(&H, a, a_o[4]), 0);
	/* For itself (its id or MNIC_CTX_SELF) a tenant may. */
	{
		struct reply r = by_handle_as(&H, b, MNIC_CMD_QUERY_CONTEXT, MNIC_QUERY_CTX_BY_ID,
					      MNIC_CTX_SELF, 56);
		struct mnic_cmd_query_context_out q;

		expect(&r, MNIC_CMD_STAT_OK, 0);
		memcpy(&q, r.out, sizeof(q));
		assert_int_equal(q.ctx, b);
		r = by_handle_as(&H, a, MNIC_CMD_DUMP_CONTEXT, 0, a, 4096);
		expect(&r, MNIC_CMD_STAT_OK, 0);
		assert_int_equal(qp_flags_as(&H, a, a_o[4]), MNIC_QP_F_STOPPED);
		r = by_handle_as(&H, a, MNIC_CMD_ABORT_DUMP, 0, MNIC_CTX_SELF, 8);
		expect(&r, MNIC_CMD_STAT_OK, 0);
		assert_int_equal(qp_flags_as(&H, a, a_o[4]), 0);
	}
	/* MGMT may do all of it. */
	{
		struct reply r = simple_as(&H, MNIC_CTX_MGMT, MNIC_CMD_QUERY_COUNTERS, 0, 4096);

		expect(&r, MNIC_CMD_STAT_OK, 0);
	}
}

/* An issuer that is not an allocated context is refused before anything. */
static void test_tenancy_unknown_issuer(void **state)
{
	static const uint16_t ids[] = { 1, 5, MNIC_CTX_MAX, MNIC_CTX_MAX + 1u, MNIC_CTX_SELF };
	uint64_t before = H.m.cnt.refused_ctx;
	uint16_t a;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct reply r = simple_as(&H, ids[i], MNIC_CMD_ALLOC_PD, 0, 16);

		expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_CTX);
	}
	assert_int_equal(H.m.cnt.refused_ctx, before + 5);
	assert_int_equal(query_device_as(&H, MNIC_CTX_MGMT).n_pd, 0);
	/* Freed, an id stops being an issuer. */
	a = new_ctx(&H, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE);
	{
		struct reply r = by_handle_as(&H, a, MNIC_CMD_DEALLOC_CONTEXT, 0, MNIC_CTX_SELF, 8);

		expect(&r, MNIC_CMD_STAT_OK, 0);
		r = simple_as(&H, a, MNIC_CMD_NOP, 0, 8);
		expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_CTX);
	}
}

/* Rings, doorbell records and MRs must lie in the issuer's own range. */
static void test_tenancy_user_area_range(void **state)
{
	struct mnic_cmd_create_cq_in cq;
	struct mnic_cmd_reg_mr_in mr;
	uint32_t b_o[5];
	uint16_t a, b;
	uint64_t before;
	struct reply r;

	(void)state;
	a = new_ctx(&H, MNIC_CTX_UA_AT, CTX_A_UA, CTX_UA_SIZE);
	b = new_ctx(&H, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE);
	(void)a;
	populate(&H, b, HOST_USER, b_o);
	before = H.m.cnt.refused_address;
	memset(&cq, 0, sizeof(cq));
	cq.hdr = in_hdr(MNIC_CMD_CREATE_CQ, 0);
	cq.q = (struct mnic_queue_desc){ CTX_A_UA, HOST_USER + 0x4100, 64, 0, 0, 0 };   /* A's ring */
	r = issue_as(&H, b, &cq, sizeof(cq), 16);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
	/* The last entry crosses the end of B's range. */
	cq.q = (struct mnic_queue_desc){ HOST_USER + CTX_UA_SIZE - 32u * MNIC_CQE_SIZE,
					 HOST_USER + 0x4100, 64, 0, 0, 0 };
	r = issue_as(&H, b, &cq, sizeof(cq), 16);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
	cq.q = (struct mnic_queue_desc){ HOST_USER + 0x1000, CTX_A_UA + 0x4100, 64, 0, 0, 0 };
	r = issue_as(&H, b, &cq, sizeof(cq), 16);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_DBREC_ADDR);
	mr = (struct mnic_cmd_reg_mr_in){ in_hdr(MNIC_CMD_REG_MR, 0), b_o[0],
					  ROCEV2_ACCESS_LOCAL_WRITE, HOST_USER + 0x1000, CTX_UA_SIZE, 0, 0 };
	r = issue_as(&H, b, &mr, sizeof(mr), 16);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MR_ADDR);
	assert_int_equal(H.m.cnt.refused_address, before + 4);
	/* MGMT's range is the whole user area: A's addresses are fine for it. */
	cq.q = (struct mnic_queue_desc){ CTX_A_UA + 0x70000, CTX_A_UA + 0x7f000, 64, 0, 0, 0 };
	r = issue_as(&H, MNIC_CTX_MGMT, &cq, sizeof(cq), 16);
	expect(&r, MNIC_CMD_STAT_OK, 0);
}

/* DEALLOC_CONTEXT, even in the middle of its dump, leaves 0 objects. */
static void test_tenancy_dealloc_leaves_nothing(void **state)
{
	uint32_t a_o[5], b_o[5];
	uint16_t a, b;
	struct reply r;
	struct mnic_cmd_query_device_out d;

	(void)state;
	a = new_ctx(&H, MNIC_CTX_UA_AT, CTX_A_UA, CTX_UA_SIZE);
	b = new_ctx(&H, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE);
	populate(&H, a, CTX_A_UA, a_o);
	populate(&H, b, HOST_USER, b_o);
	r = by_handle_as(&H, a, MNIC_CMD_DUMP_CONTEXT, 0, MNIC_CTX_SELF, 4096);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = by_handle_as(&H, a, MNIC_CMD_DEALLOC_CONTEXT, 0, MNIC_CTX_SELF, 8);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	d = query_device_as(&H, MNIC_CTX_MGMT);
	assert_int_equal(d.n_pd + d.n_mr + d.n_cq + d.n_srq + d.n_qp, 5);   /* B's */
	assert_int_equal(d.flags & MNIC_DEV_F_STOPPED, 0);
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_DEALLOC_CONTEXT, 0, b, 8);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	d = query_device_as(&H, MNIC_CTX_MGMT);
	assert_int_equal(d.n_pd + d.n_mr + d.n_cq + d.n_srq + d.n_qp, 0);
	assert_int_equal(d.n_ctx, 0);
	/* Handles of a freed context name nothing now, for MGMT too. */
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_QUERY_QP, 0, a_o[4], sizeof(struct mnic_cmd_query_qp_out));
	expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_QP);
}

/* A dump of A stops A's QPs only; its image holds A's objects only and
 * A's range; it restores into a context holding that range, not into one
 * elsewhere; RESUME of the restored context touches no other QP. */
static void test_tenancy_dump_one_context(void **state)
{
	static uint8_t out[MNIC_CMD_MAX_LEN], in[MNIC_CMD_MAX_LEN];
	struct mnic_cmd_handle_in dump_in = { in_hdr(MNIC_CMD_DUMP_CONTEXT, 0), 0, 0 };
	struct mnic_cmd_restore_in ri;
	struct mnic_cmd_dump_out d;
	uint32_t a_o[5], b_o[5], t_o[5];
	uint64_t ua_off, ua_size;
	uint16_t a, b, ta, tb;
	uint8_t st;

	(void)state;
	a = new_ctx(&H, MNIC_CTX_UA_AT, CTX_A_UA, CTX_UA_SIZE);
	b = new_ctx(&H, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE);
	/* B first: A's objects take the second slots, free on the target,
	 * whose own tenant holds the first (a restore keeps handles). */
	populate(&H, b, HOST_USER, b_o);
	populate(&H, a, CTX_A_UA, a_o);
	/* MGMT dumps A by id. */
	dump_in.handle = a;
	st = host_cmd(&H, &dump_in, sizeof(dump_in), out, sizeof(out));
	assert_int_equal(st, MNIC_CMD_STAT_OK);
	memcpy(&d, out, sizeof(d));
	assert_int_equal(d.objects[ROCEV2_OBJ_QP], 1);
	assert_int_equal(d.objects[ROCEV2_OBJ_PD], 1);
	assert_int_equal(d.objects[ROCEV2_OBJ_MR], 1);
	assert_int_equal(rocev2_image_ua_range(out + sizeof(d), d.image_len, &ua_off, &ua_size), 0);
	assert_int_equal(ua_off, CTX_A_UA);
	assert_int_equal(ua_size, CTX_UA_SIZE);
	assert_int_equal(qp_flags_as(&H, a, a_o[4]), MNIC_QP_F_STOPPED);
	assert_int_equal(qp_flags_as(&H, b, b_o[4]), 0);
	assert_int_equal(query_device_as(&H, a).flags & MNIC_DEV_F_STOPPED, MNIC_DEV_F_STOPPED);
	assert_int_equal(query_device_as(&H, b).flags & MNIC_DEV_F_STOPPED, 0);
	/* B is not frozen: it can still change its QP. */
	{
		struct mnic_cmd_modify_qp_in mq;
		struct mnic_cmd_simple_out so;

		memset(&mq, 0, sizeof(mq));
		mq.hdr = in_hdr(MNIC_CMD_MODIFY_QP, 0);
		mq.hdr.ctx = b;
		mq.qpn = b_o[4];
		mq.attr_mask = ROCEV2_QP_STATE | ROCEV2_QP_PKEY_INDEX | ROCEV2_QP_PORT |
			       ROCEV2_QP_ACCESS_FLAGS;
		mq.attr.qp_state = ROCEV2_QPS_INIT;
		assert_int_equal(host_cmd(&H, &mq, sizeof(mq), &so, sizeof(so)), MNIC_CMD_STAT_OK);
	}
	/* Target: a context elsewhere refuses the image; one at A's range
	 * takes it and owns what it creates. */
	host_init(&T);
	host_enable(&T);
	tb = new_ctx(&T, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE);
	populate(&T, tb, HOST_USER, t_o);   /* a live tenant on the target */
	ta = new_ctx(&T, MNIC_CTX_UA_AT, CTX_A_UA, CTX_UA_SIZE);
	memset(&ri, 0, sizeof(ri));
	ri.hdr = in_hdr(MNIC_CMD_RESTORE_OBJECT, MNIC_RESTORE_IMAGE);
	ri.data_len = d.image_len;
	memcpy(in + sizeof(ri), out + sizeof(d), d.image_len);
	{
		struct reply r;

		memcpy(in, &ri, sizeof(ri));
		r = issue_as(&T, tb, in, (uint32_t)sizeof(ri) + d.image_len, 8);
		expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_IMAGE_RANGE);
		memcpy(in, &ri, sizeof(ri));
		r = issue_as(&T, ta, in, (uint32_t)sizeof(ri) + d.image_len, 8);
		expect(&r, MNIC_CMD_STAT_OK, 0);
		assert_int_equal(query_device_as(&T, ta).n_qp, 1);
		assert_int_equal(query_device_as(&T, tb).n_qp, 1);
		assert_int_equal(qp_flags_as(&T, ta, a_o[4]), MNIC_QP_F_STOPPED);
		/* The restored QP is the target context's: the other tenant
		 * cannot name it. */
		r = by_handle_as(&T, tb, MNIC_CMD_QUERY_QP, 0, a_o[4], sizeof(struct mnic_cmd_query_qp_out));
		expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_QP);
		r = by_handle_as(&T, ta, MNIC_CMD_RESUME_CONTEXT, 0, MNIC_CTX_SELF, 8);
		expect(&r, MNIC_CMD_STAT_OK, 0);
		assert_int_equal(qp_flags_as(&T, ta, a_o[4]), 0);
		assert_int_equal(qp_flags_as(&T, tb, t_o[4]), 0);
	}
	host_free(&T);
	/* The source aborts A: B was never touched. */
	{
		struct reply r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_ABORT_DUMP, 0, a, 8);

		expect(&r, MNIC_CMD_STAT_OK, 0);
		assert_int_equal(qp_flags_as(&H, a, a_o[4]), 0);
	}
}

/* GET_EVENTS: each context reads its own objects' events, in order; the
 * engine tags each with the owner of the QP it names (qp.c). */
static void test_tenancy_events(void **state)
{
	struct mnic_cmd_get_events_out eo;
	struct mnic_event ev[4];
	uint32_t a_o[5], b_o[5];
	uint16_t a, b;
	struct reply r;
	const uint32_t out_len = (uint32_t)(sizeof(eo) + sizeof(ev));

	(void)state;
	a = new_ctx(&H, MNIC_CTX_UA_AT, CTX_A_UA, CTX_UA_SIZE);
	b = new_ctx(&H, MNIC_CTX_UA_ANY, 0, CTX_UA_SIZE);
	populate(&H, a, CTX_A_UA, a_o);
	populate(&H, b, HOST_USER, b_o);
	/* B's QP fails first, then A's (IBA 11.6.3 affiliated async events). */
	rocev2_qp_to_error(H.e, rocev2_qp_lookup(H.e, b_o[4]), ROCEV2_EVENT_QP_FATAL);
	rocev2_qp_to_error(H.e, rocev2_qp_lookup(H.e, a_o[4]), ROCEV2_EVENT_QP_REQ_ERR);
	r = simple_as(&H, a, MNIC_CMD_GET_EVENTS, 0, out_len);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&eo, r.out, sizeof(eo));
	memcpy(ev, r.out + sizeof(eo), sizeof(ev));
	assert_int_equal(eo.count, 1);
	assert_int_equal(ev[0].type, ROCEV2_EVENT_QP_REQ_ERR);
	assert_int_equal(ev[0].handle, a_o[4]);
	/* MGMT owns neither QP: nothing for it; B's is still there. */
	r = simple_as(&H, MNIC_CTX_MGMT, MNIC_CMD_GET_EVENTS, 0, out_len);
	memcpy(&eo, r.out, sizeof(eo));
	assert_int_equal(eo.count, 0);
	r = simple_as(&H, b, MNIC_CMD_GET_EVENTS, 0, out_len);
	memcpy(&eo, r.out, sizeof(eo));
	memcpy(ev, r.out + sizeof(eo), sizeof(ev));
	assert_int_equal(eo.count, 1);
	assert_int_equal(ev[0].type, ROCEV2_EVENT_QP_FATAL);
	assert_int_equal(ev[0].handle, b_o[4]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tenancy_alloc_context, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenancy_context_ids_run_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenancy_foreign_handles_look_absent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tenancy_privileged_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenancy_unknown_issuer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenancy_user_area_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenancy_dealloc_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenancy_dump_one_context, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenancy_events, setup, teardown),
	};
	return cmocka_run_group_tests_name("mgmt/tenancy", tests, NULL, NULL);
}
