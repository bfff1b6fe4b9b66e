/* Commands through the whole transport (mgmt/cmd.c): every opcode's
 * validation (short input/output, reserved fields, op_mod, bad handles),
 * addresses outside the user area, a full object lifecycle, DUMP_CONTEXT
 * -> RESTORE_OBJECT(IMAGE) into a second engine, the per-object
 * CREATE / MR_KEYS / REFILL path, commands while objects are Stopped, the
 * counters, and the data-path doorbell.  After every refusal the firmware
 * still answers (QUERY_DEVICE) and the object counts are unchanged. */
#include "fake_host.h"
#include "lib/crc32.h"
#include "rocev2/dump.h"

static struct host H, T;   /* T: migration target */

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

/* ---- helpers ----------------------------------------------------------------- */

#define CMD_OUT_MAX 8192u

struct reply {
	uint8_t status;
	uint32_t syndrome;
	uint8_t out[CMD_OUT_MAX];
};

static struct reply issue(struct host *h, const void *in, uint32_t in_len, uint32_t out_len)
{
	struct reply r;

	memset(&r, 0, sizeof(r));
	assert_true(out_len <= CMD_OUT_MAX);
	r.status = host_cmd(h, in, in_len, r.out, out_len);
	r.syndrome = out_syndrome(r.out);
	return r;
}

static uint32_t handle_of(const struct reply *r)
{
	struct mnic_cmd_handle_out o;

	memcpy(&o, r->out, sizeof(o));
	return o.handle;
}

static void expect_status(const struct reply *r, uint8_t status, uint32_t site)
{
	if (r->status != status)
		fail_msg("status %s (0x%x), want %s; syndrome %s/%s", mnic_cmd_status_name(r->status),
			 r->status, mnic_cmd_status_name(status),
			 mnic_cmd_errno_name(MNIC_SYND_ERRNO(r->syndrome)),
			 mnic_cmd_site_name(MNIC_SYND_SITE(r->syndrome)));
	if (site)
		assert_int_equal(MNIC_SYND_SITE(r->syndrome), site);
}

static uint32_t alloc_pd(struct host *h)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_ALLOC_PD, 0) };
	struct reply r = issue(h, &in, sizeof(in), 16);

	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	return handle_of(&r);
}

static struct reply reg_mr(struct host *h, uint32_t pd, uint64_t addr, uint64_t len, uint32_t access)
{
	struct mnic_cmd_reg_mr_in in = { in_hdr(MNIC_CMD_REG_MR, 0), pd, access, addr, len, 0, 0 };

	return issue(h, &in, sizeof(in), 16);
}

static struct reply create_cq(struct host *h, uint64_t ring, uint64_t dbrec, uint32_t size)
{
	struct mnic_cmd_create_cq_in in;

	memset(&in, 0, sizeof(in));
	in.hdr = in_hdr(MNIC_CMD_CREATE_CQ, 0);
	in.q = (struct mnic_queue_desc){ ring, dbrec, size, 0, 0, 0 };
	return issue(h, &in, sizeof(in), 16);
}

static struct reply create_srq(struct host *h, uint32_t pd, uint64_t ring, uint64_t dbrec,
			       uint32_t size)
{
	struct mnic_cmd_create_srq_in in;

	memset(&in, 0, sizeof(in));
	in.hdr = in_hdr(MNIC_CMD_CREATE_SRQ, 0);
	in.pd = pd;
	in.max_sge = 2;
	in.q = (struct mnic_queue_desc){ ring, dbrec, size, 0, 0, 0 };
	return issue(h, &in, sizeof(in), 16);
}

static struct mnic_cmd_create_qp_in qp_in(uint32_t pd, uint32_t cq, uint32_t srq, uint64_t base)
{
	struct mnic_cmd_create_qp_in in;

	memset(&in, 0, sizeof(in));
	in.hdr = in_hdr(MNIC_CMD_CREATE_QP, 0);
	in.pd = pd;
	in.send_cq = cq;
	in.recv_cq = cq;
	in.srq = srq;
	in.max_send_sge = 2;
	in.max_recv_sge = 2;
	in.sq = (struct mnic_queue_desc){ base, base + 0x2000, 8, 0, 0, 0 };
	if (srq == MNIC_NO_SRQ)
		in.rq = (struct mnic_queue_desc){ base + 0x1000, base + 0x2008, 8, 0, 0, 0 };
	return in;
}

static struct reply modify_qp(struct host *h, uint32_t qpn, uint32_t mask, const struct mnic_qp_attr *a)
{
	struct mnic_cmd_modify_qp_in in;

	memset(&in, 0, sizeof(in));
	in.hdr = in_hdr(MNIC_CMD_MODIFY_QP, 0);
	in.qpn = qpn;
	in.attr_mask = mask;
	in.attr = *a;
	return issue(h, &in, sizeof(in), 8);
}

static struct mnic_cmd_query_qp_out query_qp(struct host *h, uint32_t qpn)
{
	struct mnic_cmd_handle_in in = { in_hdr(MNIC_CMD_QUERY_QP, 0), qpn, 0 };
	struct mnic_cmd_query_qp_out o;
	struct reply r = issue(h, &in, sizeof(in), sizeof(o));

	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&o, r.out, sizeof(o));
	return o;
}

static struct reply simple(struct host *h, uint16_t opcode, uint16_t op_mod)
{
	struct mnic_cmd_simple_in in = { in_hdr(opcode, op_mod) };

	return issue(h, &in, sizeof(in), 16);
}

static struct reply by_handle(struct host *h, uint16_t opcode, uint32_t handle)
{
	struct mnic_cmd_handle_in in = { in_hdr(opcode, 0), handle, 0 };

	return issue(h, &in, sizeof(in), sizeof(struct mnic_cmd_query_qp_out));
}

/* RESET -> INIT -> RTR -> RTS, as a verbs application would. */
#define M(x) ROCEV2_QP_##x
static void qp_to_rts(struct host *h, uint32_t qpn, uint32_t peer_qpn)
{
	struct mnic_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = ROCEV2_QPS_INIT;
	a.qp_access_flags = ROCEV2_ACCESS_REMOTE_WRITE | ROCEV2_ACCESS_REMOTE_READ;
	{
		struct reply r = modify_qp(h, qpn, M(STATE) | M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS), &a);
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
	}
	a.qp_state = ROCEV2_QPS_RTR;
	a.path_mtu = ROCEV2_MTU_1024;
	a.dest_qp_num = peer_qpn;
	a.rq_psn = 0x1234;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	memcpy(a.dgid, (uint8_t[16])MNIC_GID_V4(0x0a000002u), 16);
	a.ttl = 64;
	memcpy(a.dmac, (uint8_t[6]){ 2, 0, 0, 0, 0, 2 }, 6);
	{
		struct reply r = modify_qp(h, qpn,
					   M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) |
						   M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER),
					   &a);
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
	}
	a.qp_state = ROCEV2_QPS_RTS;
	a.sq_psn = 0x777;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	{
		struct reply r = modify_qp(h, qpn,
					   M(STATE) | M(SQ_PSN) | M(TIMEOUT) | M(RETRY_CNT) |
						   M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC),
					   &a);
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
	}
}

/* A populated engine: PD, MR, CQ, SRQ, a QP on the SRQ and one with its
 * own RQ, both in RTS.  Handles go to o[]: pd lkey cq srq qp1 qp2. */
static void populate(struct host *h, uint32_t o[6])
{
	struct mnic_cmd_create_qp_in q;
	struct reply r;

	o[0] = alloc_pd(h);
	r = reg_mr(h, o[0], HOST_USER + 0x100000, 0x10000,
		   ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_WRITE);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	o[1] = handle_of(&r);   /* lkey */
	r = create_cq(h, HOST_USER, HOST_USER + 0x4000, 64);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	o[2] = handle_of(&r);
	r = create_srq(h, o[0], HOST_USER + 0x8000, HOST_USER + 0x4008, 16);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	o[3] = handle_of(&r);
	q = qp_in(o[0], o[2], o[3], HOST_USER + 0x10000);
	r = issue(h, &q, sizeof(q), 16);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	o[4] = handle_of(&r);
	q = qp_in(o[0], o[2], MNIC_NO_SRQ, HOST_USER + 0x20000);
	r = issue(h, &q, sizeof(q), 16);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	o[5] = handle_of(&r);
	qp_to_rts(h, o[4], 0x100);
	qp_to_rts(h, o[5], 0x101);
}

/* ---- every opcode's validation --------------------------------------------------- */

struct op_case {
	uint16_t opcode;
	uint32_t in_len, out_len;      /* the command's own sizes */
	uint16_t max_op_mod;
	uint16_t rsvd_off;             /* one reserved byte to dirty (0: only in_hdr) */
};

static const struct op_case ops[] = {
	{ MNIC_CMD_QUERY_DEVICE, 8, 184, 0, 0 },
	{ MNIC_CMD_FW_QUERY, 8, 88, 1, 0 },          /* op_mod 1: FW_QUERY_SLOTS */
	{ MNIC_CMD_QUERY_COUNTERS, 8, 16, 2, 0 },
	{ MNIC_CMD_GET_EVENTS, 8, 16, 0, 0 },
	{ MNIC_CMD_NOP, 8, 8, 0, 0 },
	{ MNIC_CMD_ALLOC_CONTEXT, 32, 32, 1, 28 },
	{ MNIC_CMD_DEALLOC_CONTEXT, 16, 8, 0, 12 },
	{ MNIC_CMD_QUERY_CONTEXT, 16, 56, 1, 12 },
	{ MNIC_CMD_CREATE_CQ, 40, 16, 0, 36 },
	{ MNIC_CMD_DESTROY_CQ, 16, 8, 0, 12 },
	{ MNIC_CMD_RESIZE_CQ, 48, 16, 0, 12 },
	{ MNIC_CMD_MODIFY_CQ, 16, 8, 0, 0 },
	{ MNIC_CMD_CREATE_EQ, 48, 16, 0, 44 },
	{ MNIC_CMD_DESTROY_EQ, 16, 8, 0, 12 },
	{ MNIC_CMD_CREATE_QP, 104, 16, 0, 36 },
	{ MNIC_CMD_MODIFY_QP, 88, 8, 0, 87 },        /* attr.reserved[6] */
	{ MNIC_CMD_QUERY_QP, 16, 88, 1, 15 },
	{ MNIC_CMD_DESTROY_QP, 16, 8, 0, 13 },
	{ MNIC_CMD_SET_QP_MIG_KEY, 32, 8, 0, 12 },
	{ MNIC_CMD_CREATE_SRQ, 56, 16, 0, 52 },
	{ MNIC_CMD_DESTROY_SRQ, 16, 8, 0, 14 },
	{ MNIC_CMD_MODIFY_SRQ, 16, 8, 0, 0 },
	{ MNIC_CMD_ALLOC_PD, 8, 16, 0, 0 },
	{ MNIC_CMD_DEALLOC_PD, 16, 8, 0, 12 },
	{ MNIC_CMD_REG_MR, 40, 16, 0, 36 },
	{ MNIC_CMD_DEREG_MR, 16, 8, 0, 12 },
	{ MNIC_CMD_CREATE_MTT, 32, 16, 0, 28 },
	{ MNIC_CMD_WRITE_MTT, 32, 8, 0, 20 },
	{ MNIC_CMD_DESTROY_MTT, 16, 8, 0, 12 },
	{ MNIC_CMD_DUMP_CONTEXT, 16, 64, 0, 12 },
	{ MNIC_CMD_RESTORE_OBJECT, 32, 8, 3, 31 },
	{ MNIC_CMD_RESUME_CONTEXT, 16, 8, 0, 12 },
	{ MNIC_CMD_ABORT_DUMP, 16, 8, 0, 12 },
	{ MNIC_CMD_MIG_CONFIG, 24, 8, 0, 20 },
	{ MNIC_CMD_QUERY_DCQCN, 8, 56, 0, 0 },
	{ MNIC_CMD_SET_DCQCN, 56, 8, 0, 52 },
	{ MNIC_CMD_SET_GID, 32, 8, 0, 0 },
	{ MNIC_CMD_CREATE_ETHQ, 80, 8, 0, 44 },
	{ MNIC_CMD_DESTROY_ETHQ, 8, 8, 0, 0 },
	{ MNIC_CMD_FW_FLASH_BEGIN, 144, 8, 0, 12 },
	{ MNIC_CMD_FW_FLASH_DATA, 16, 8, 0, 0 },
	{ MNIC_CMD_FW_FLASH_END, 8, 16, 0, 0 },
	{ MNIC_CMD_FW_ACTIVATE, 16, 8, 0, 12 },
};

static void check_unchanged(struct host *h, const struct mnic_cmd_query_device_out *before)
{
	struct mnic_cmd_query_device_out now = host_query_device(h);

	assert_int_equal(now.n_pd, before->n_pd);
	assert_int_equal(now.n_mr, before->n_mr);
	assert_int_equal(now.n_cq, before->n_cq);
	assert_int_equal(now.n_srq, before->n_srq);
	assert_int_equal(now.n_qp, before->n_qp);
	assert_int_equal(now.flags, before->flags);
}

static void test_every_opcode_validation(void **state)
{
	uint8_t in[160];
	uint32_t o[6];
	struct mnic_cmd_query_device_out before;
	size_t i;

	(void)state;
	/* Every opcode of the list has its case here. */
	{
		static const uint16_t all[] = {
#define OPCODE_VALUE_(name, value) value,
			MNIC_CMD_OPCODE_LIST(OPCODE_VALUE_)
#undef OPCODE_VALUE_
		};
		size_t j;

		for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
			for (j = 0; j < sizeof(ops) / sizeof(ops[0]) && ops[j].opcode != all[i]; j++)
				;
			if (j == sizeof(ops) / sizeof(ops[0]))
				fail_msg("opcode %s (0x%x) has no case in ops[]",
					 mnic_cmd_opcode_name(all[i]), all[i]);
		}
	}
	populate(&H, o);
	before = host_query_device(&H);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const struct op_case *c = &ops[i];
		struct mnic_cmd_in_hdr hd = in_hdr(c->opcode, 0);
		struct reply r;

		assert_string_not_equal(mnic_cmd_opcode_name(c->opcode), "UNKNOWN");
		memset(in, 0, sizeof(in));
		memcpy(in, &hd, sizeof(hd));
		/* input one byte short */
		if (c->in_len > 8) {
			r = issue(&H, in, c->in_len - 1u, c->out_len);
			expect_status(&r, MNIC_CMD_STAT_BAD_INPUT_LEN, MNIC_SITE_IN_LEN);
		}
		/* output one byte short */
		if (c->out_len > 8) {
			r = issue(&H, in, c->in_len, c->out_len - 1u);
			expect_status(&r, MNIC_CMD_STAT_BAD_OUTPUT_LEN, MNIC_SITE_OUT_LEN);
		}
		/* in_hdr.reserved */
		in[7] = 1;
		r = issue(&H, in, c->in_len, c->out_len);
		expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RESERVED);
		in[7] = 0;
		/* the command's own reserved field */
		if (c->rsvd_off) {
			in[c->rsvd_off] = 0x10;
			r = issue(&H, in, c->in_len, c->out_len);
			expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RESERVED);
			in[c->rsvd_off] = 0;
		}
		/* op_mod past the defined ones */
		hd.op_mod = (uint16_t)(c->max_op_mod + 1u);
		memcpy(in, &hd, sizeof(hd));
		r = issue(&H, in, c->in_len, c->out_len);
		expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_OP_MOD);
		hd.op_mod = 0xffff;
		memcpy(in, &hd, sizeof(hd));
		r = issue(&H, in, c->in_len, c->out_len);
		expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_OP_MOD);
		check_unchanged(&H, &before);
	}
	/* Unknown opcodes. */
	{
		static const uint16_t bad[] = { 0, 0x0ff, 0x10a, 0x505, 0xb05, 0xffff };
		struct reply r;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct mnic_cmd_simple_in s = { in_hdr(bad[i], 0) };

			r = issue(&H, &s, sizeof(s), 8);
			expect_status(&r, MNIC_CMD_STAT_BAD_OP, MNIC_SITE_OPCODE);
		}
	}
	assert_true(H.m.cnt.refused_in_len > 0 && H.m.cnt.refused_out_len > 0 &&
		    H.m.cnt.refused_reserved > 0 && H.m.cnt.refused_op_mod > 0 &&
		    H.m.cnt.refused_opcode == 6);
}

static void test_bad_handles(void **state)
{
	uint32_t o[6], stale_pd;
	struct mnic_cmd_query_device_out before;
	static const uint16_t by_handle_ops[] = { MNIC_CMD_DESTROY_CQ, MNIC_CMD_QUERY_QP,
						  MNIC_CMD_DESTROY_QP, MNIC_CMD_DESTROY_SRQ,
						  MNIC_CMD_DEALLOC_PD, MNIC_CMD_DEREG_MR };
	static const uint16_t sites[] = { MNIC_SITE_CQ, MNIC_SITE_QP, MNIC_SITE_QP, MNIC_SITE_SRQ,
					  MNIC_SITE_PD, MNIC_SITE_MR };
	const uint32_t bad[] = { 0, 2, 0xffffffffu, 0x00ff0000u, 0x0000ffffu, 0x12345678u };
	size_t i, j;
	struct reply r;

	(void)state;
	populate(&H, o);
	stale_pd = alloc_pd(&H);
	r = by_handle(&H, MNIC_CMD_DEALLOC_PD, stale_pd);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	before = host_query_device(&H);
	for (i = 0; i < sizeof(by_handle_ops) / sizeof(by_handle_ops[0]); i++)
		for (j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			r = by_handle(&H, by_handle_ops[i], bad[j]);
			expect_status(&r, MNIC_CMD_STAT_BAD_RES, sites[i]);
		}
	/* A stale PD handle (freed slot, then the same slot again: new gen). */
	r = by_handle(&H, MNIC_CMD_DEALLOC_PD, stale_pd);
	expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_PD);
	/* Handles inside other commands. */
	{
		struct mnic_cmd_create_qp_in q = qp_in(o[0], o[2], 0x77, HOST_USER + 0x30000);

		r = issue(&H, &q, sizeof(q), 16);
		expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_SRQ);
		q = qp_in(stale_pd, o[2], MNIC_NO_SRQ, HOST_USER + 0x30000);
		r = issue(&H, &q, sizeof(q), 16);
		expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_PD);
		q = qp_in(o[0], o[2] + 5u, MNIC_NO_SRQ, HOST_USER + 0x30000);   /* free CQ slot */
		r = issue(&H, &q, sizeof(q), 16);
		expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_CQ);
	}
	r = reg_mr(&H, 0xdead, HOST_USER, 4096, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_PD);
	r = create_srq(&H, stale_pd, HOST_USER + 0x8000, HOST_USER + 0x4008, 16);
	expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_PD);
	{
		struct mnic_qp_attr a;

		memset(&a, 0, sizeof(a));
		r = modify_qp(&H, o[4] + 0x1000u, M(STATE), &a);   /* next generation */
		expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_QP);
	}
	{
		struct mnic_cmd_modify_srq_in ms = { in_hdr(MNIC_CMD_MODIFY_SRQ, 0), o[3] + 3u, 1 };

		r = issue(&H, &ms, sizeof(ms), 8);   /* a free SRQ slot */
		expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_SRQ);
	}
	{
		struct mnic_cmd_set_qp_mig_key_in k;

		memset(&k, 0, sizeof(k));
		k.hdr = in_hdr(MNIC_CMD_SET_QP_MIG_KEY, 0);
		k.qpn = 0xffffff;
		r = issue(&H, &k, sizeof(k), 8);
		expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_QP);
	}
	check_unchanged(&H, &before);
	assert_true(H.m.cnt.refused_handle >= 36);
}

/* Rings, doorbell records and MRs must lie in the user area. */
static void test_addresses_outside_user_area(void **state)
{
	const uint64_t win = HOST_WINDOW;
	uint32_t pd, cq;
	struct mnic_cmd_query_device_out before;
	struct reply r;

	(void)state;
	pd = alloc_pd(&H);
	r = create_cq(&H, HOST_USER, HOST_USER + 0x4000, 64);
	cq = handle_of(&r);
	before = host_query_device(&H);
	/* CQ ring: in the driver area (over the command ring), straddling the
	 * boundary, past the window, wrapping around 2^64. */
	r = create_cq(&H, 0, HOST_USER + 0x4000, 64);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
	r = create_cq(&H, HOST_USER - 64, HOST_USER + 0x4000, 64);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
	r = create_cq(&H, win - 32 * 63, HOST_USER + 0x4000, 64);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
	r = create_cq(&H, UINT64_MAX - 31, HOST_USER + 0x4000, 64);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
	r = create_cq(&H, HOST_USER, 0x1000, 64);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_DBREC_ADDR);
	r = create_cq(&H, HOST_USER, win - 4, 64);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_DBREC_ADDR);
	/* Size the engine refuses (not a power of two) after the address check. */
	r = create_cq(&H, HOST_USER, HOST_USER + 0x4000, 48);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_ENGINE);
	assert_int_equal(MNIC_SYND_ERRNO(r.syndrome), HAL_EINVAL);
	/* A 2^31-entry ring cannot fit anywhere. */
	r = create_cq(&H, HOST_USER, HOST_USER + 0x4000, 1u << 31);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
	/* SRQ and QP rings. */
	r = create_srq(&H, pd, 0x10000, HOST_USER + 0x4008, 16);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
	{
		struct mnic_cmd_create_qp_in q = qp_in(pd, cq, MNIC_NO_SRQ, HOST_USER + 0x10000);

		q.rq.ring_addr = win;   /* one past the end */
		r = issue(&H, &q, sizeof(q), 16);
		expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
		q = qp_in(pd, cq, MNIC_NO_SRQ, HOST_USER + 0x10000);
		q.sq.dbrec_addr = MNIC_CMD_MBOX_AREA;
		r = issue(&H, &q, sizeof(q), 16);
		expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_DBREC_ADDR);
	}
	/* MRs: over the mailboxes, past the window, wrapping. */
	r = reg_mr(&H, pd, 0, 4096, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MR_ADDR);
	r = reg_mr(&H, pd, HOST_USER - 1, 2, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MR_ADDR);
	r = reg_mr(&H, pd, HOST_USER, win, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MR_ADDR);
	r = reg_mr(&H, pd, UINT64_MAX, 2, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MR_ADDR);
	/* The whole user area is fine. */
	r = reg_mr(&H, pd, HOST_USER, win - HOST_USER, ROCEV2_ACCESS_LOCAL_WRITE);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	before.n_mr++;
	check_unchanged(&H, &before);
	assert_int_equal(H.m.cnt.refused_address, 14);
}

/* ---- lifecycle --------------------------------------------------------------------- */

static void test_object_lifecycle(void **state)
{
	uint32_t o[6];
	struct mnic_cmd_query_qp_out q;
	struct mnic_cmd_query_device_out d;
	struct reply r;

	(void)state;
	populate(&H, o);
	d = host_query_device(&H);
	assert_int_equal(d.n_pd, 1);
	assert_int_equal(d.n_mr, 1);
	assert_int_equal(d.n_cq, 1);
	assert_int_equal(d.n_srq, 1);
	assert_int_equal(d.n_qp, 2);
	assert_int_equal(d.ipv4, 0x0a000001);
	assert_int_equal(d.max_qp, ROCEV2_MAX_QP);
	q = query_qp(&H, o[4]);
	assert_int_equal(q.attr.qp_state, ROCEV2_QPS_RTS);
	assert_int_equal(q.attr.sq_psn, 0x777);
	assert_int_equal(q.attr.rq_psn, 0x1234);
	assert_int_equal(q.attr.dest_qp_num, 0x100);
	assert_memory_equal(q.attr.dgid, (uint8_t[16])MNIC_GID_V4(0x0a000002u), 16);
	assert_int_equal(q.attr.path_mtu, ROCEV2_MTU_1024);
	assert_int_equal(q.mig_flags, 0);
	/* QUERY_QP op_mod NEXT walks the live QPs by slot (mnicctl qp list). */
	{
		struct mnic_cmd_handle_in in = { in_hdr(MNIC_CMD_QUERY_QP, MNIC_QUERY_QP_NEXT), 0, 0 };
		struct mnic_cmd_query_qp_out n;

		r = issue(&H, &in, sizeof(in), sizeof(n));
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
		memcpy(&n, r.out, sizeof(n));
		assert_int_equal(n.reserved, o[4]);
		assert_int_equal(n.attr.sq_psn, 0x777);
		in.handle = (o[4] & 0xfffu) + 1u;
		r = issue(&H, &in, sizeof(in), sizeof(n));
		memcpy(&n, r.out, sizeof(n));
		assert_int_equal(n.reserved, o[5]);
		in.handle = (o[5] & 0xfffu) + 1u;
		r = issue(&H, &in, sizeof(in), sizeof(n));
		expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_QP);
		assert_int_equal(MNIC_SYND_ERRNO(r.syndrome), HAL_ENXIO);
		in.handle = 0xffffffffu;
		r = issue(&H, &in, sizeof(in), sizeof(n));
		expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_QP);
	}
	/* An illegal transition (RTS -> INIT) is the engine's refusal. */
	{
		struct mnic_qp_attr a;

		memset(&a, 0, sizeof(a));
		a.qp_state = ROCEV2_QPS_INIT;
		r = modify_qp(&H, o[4], M(STATE), &a);
		expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_ENGINE);
	}
	/* Migration key and MIG_CONFIG. */
	{
		struct mnic_cmd_set_qp_mig_key_in k;
		struct mnic_cmd_mig_config_in mc = { in_hdr(MNIC_CMD_MIG_CONFIG, 0), 2500, 0, 0, 0 };

		memset(&k, 0, sizeof(k));
		k.hdr = in_hdr(MNIC_CMD_SET_QP_MIG_KEY, 0);
		k.qpn = o[4];
		memset(k.key, 0x5a, sizeof(k.key));
		r = issue(&H, &k, sizeof(k), 8);
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
		assert_int_equal(query_qp(&H, o[4]).mig_flags, MNIC_QP_F_HAS_KEY);
		r = issue(&H, &mc, sizeof(mc), 8);
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
		assert_int_equal(host_query_device(&H).pause_timeout_ms, 2500);
		assert_int_equal(host_query_device(&H).resume_budget_ms, 0);
		assert_int_equal(host_query_device(&H).mig_cfg_flags, 0);
		/* The resume budget and the unkeyed flag, reported back. */
		mc.resume_budget_ms = 750;
		mc.flags = MNIC_MIG_CFG_UNKEYED;
		r = issue(&H, &mc, sizeof(mc), 8);
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
		assert_int_equal(host_query_device(&H).resume_budget_ms, 750);
		assert_int_equal(host_query_device(&H).mig_cfg_flags, MNIC_MIG_CFG_UNKEYED);
		{
			struct rocev2_device_info info;

			rocev2_query_device(H.m.cfg.engine, &info);
			assert_int_equal(info.resume_budget_ns, 750000000ull);
			assert_int_equal(info.mig_flags, ROCEV2_MIG_F_UNKEYED);
		}
		/* A flag this firmware does not define: refused, nothing changes. */
		{
			uint64_t refused = H.m.cnt.refused_reserved;

			mc.pause_timeout_ms = 1;
			mc.flags = 2;
			r = issue(&H, &mc, sizeof(mc), 8);
			expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RESERVED);
			assert_int_equal(H.m.cnt.refused_reserved, refused + 1);
			assert_int_equal(host_query_device(&H).pause_timeout_ms, 2500);
			assert_int_equal(host_query_device(&H).mig_cfg_flags, MNIC_MIG_CFG_UNKEYED);
		}
	}
	/* MODIFY_SRQ limit (must stay below the size). */
	{
		struct mnic_cmd_modify_srq_in ms = { in_hdr(MNIC_CMD_MODIFY_SRQ, 0), o[3], 4 };

		r = issue(&H, &ms, sizeof(ms), 8);
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
		ms.srq_limit = 16;
		r = issue(&H, &ms, sizeof(ms), 8);
		expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_ENGINE);
	}
	/* Still referenced: the engine says busy. */
	r = by_handle(&H, MNIC_CMD_DEALLOC_PD, o[0]);
	expect_status(&r, MNIC_CMD_STAT_RES_BUSY, MNIC_SITE_ENGINE);
	r = by_handle(&H, MNIC_CMD_DESTROY_CQ, o[2]);
	expect_status(&r, MNIC_CMD_STAT_RES_BUSY, MNIC_SITE_ENGINE);
	/* GET_EVENTS and FW_QUERY answer. */
	r = simple(&H, MNIC_CMD_GET_EVENTS, 0);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	{
		struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_FW_QUERY, 0) };
		struct mnic_cmd_fw_query_out f;

		r = issue(&H, &in, sizeof(in), sizeof(f));
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
		memcpy(&f, r.out, sizeof(f));
		assert_string_equal(f.board_name, "test");
		assert_int_equal(f.fw_version, MNIC_FW_VERSION_CUR);
		assert_int_equal(f.build[sizeof(f.build) - 1], 0);
	}
	/* Destroy in reverse order; the pools are empty again. */
	expect_status((r = by_handle(&H, MNIC_CMD_DESTROY_QP, o[5]), &r), MNIC_CMD_STAT_OK, 0);
	expect_status((r = by_handle(&H, MNIC_CMD_DESTROY_QP, o[4]), &r), MNIC_CMD_STAT_OK, 0);
	expect_status((r = by_handle(&H, MNIC_CMD_DESTROY_SRQ, o[3]), &r), MNIC_CMD_STAT_OK, 0);
	expect_status((r = by_handle(&H, MNIC_CMD_DESTROY_CQ, o[2]), &r), MNIC_CMD_STAT_OK, 0);
	expect_status((r = by_handle(&H, MNIC_CMD_DEREG_MR, o[1]), &r), MNIC_CMD_STAT_OK, 0);
	expect_status((r = by_handle(&H, MNIC_CMD_DEALLOC_PD, o[0]), &r), MNIC_CMD_STAT_OK, 0);
	d = host_query_device(&H);
	assert_int_equal(d.n_pd + d.n_mr + d.n_cq + d.n_srq + d.n_qp, 0);
	/* Destroying again: the handles are stale now. */
	r = by_handle(&H, MNIC_CMD_DESTROY_QP, o[4]);
	expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_QP);
}

static void test_pool_exhaustion(void **state)
{
	unsigned i;
	struct reply r;

	(void)state;
	for (i = 0; i < ROCEV2_MAX_PD; i++)
		alloc_pd(&H);
	r = simple(&H, MNIC_CMD_ALLOC_PD, 0);
	expect_status(&r, MNIC_CMD_STAT_NO_RESOURCES, MNIC_SITE_ENGINE);
	assert_int_equal(MNIC_SYND_ERRNO(r.syndrome), HAL_ENOMEM);
	host_query_device(&H);
}

/* ---- migration --------------------------------------------------------------------- */

static uint8_t big_out[MNIC_CMD_MAX_LEN];
static uint8_t big_in[MNIC_CMD_MAX_LEN];

/* DUMP_CONTEXT with out_len bytes of output room; returns the status and
 * leaves the output in big_out. */
static uint8_t dump(struct host *h, uint32_t out_len, struct mnic_cmd_dump_out *o)
{
	struct mnic_cmd_handle_in in = { in_hdr(MNIC_CMD_DUMP_CONTEXT, 0), MNIC_CTX_SELF, 0 };
	uint8_t st = host_cmd(h, &in, sizeof(in), big_out, out_len);

	memcpy(o, big_out, sizeof(*o));
	return st;
}

static struct reply restore(struct host *h, uint16_t op_mod, const void *data, uint32_t len,
			    uint32_t in_len_extra)
{
	struct mnic_cmd_restore_in in;
	struct reply r;

	memset(&in, 0, sizeof(in));
	in.hdr = in_hdr(MNIC_CMD_RESTORE_OBJECT, op_mod);
	in.data_len = len;
	memcpy(big_in, &in, sizeof(in));
	memcpy(big_in + sizeof(in), data, len);
	memset(&r, 0, sizeof(r));
	r.status = host_cmd(h, big_in, (uint32_t)sizeof(in) + len + in_len_extra, r.out, 8);
	r.syndrome = out_syndrome(r.out);
	return r;
}

/* The QPN of a QP record (payload offset 0). */
static uint32_t rec_qpn(const uint8_t *rec)
{
	uint32_t v;

	memcpy(&v, rec + ROCEV2_DUMP_REC_HDR_LEN, 4);
	return v;
}

static void assert_same_qp(struct host *a, struct host *b, uint32_t qpn)
{
	struct mnic_cmd_query_qp_out x = query_qp(a, qpn), y = query_qp(b, qpn);

	assert_memory_equal(&x.attr, &y.attr, sizeof(x.attr));
}

static void test_dump_restore_image(void **state)
{
	uint32_t o[6];
	struct mnic_cmd_dump_out d;
	struct reply r;
	uint32_t need;

	(void)state;
	populate(&H, o);
	/* Too small: rolled back, the size needed is reported. */
	assert_int_equal(dump(&H, 64 + 100, &d), MNIC_CMD_STAT_BAD_OUTPUT_LEN);
	assert_int_equal(MNIC_SYND_SITE(d.hdr.syndrome), MNIC_SITE_DUMP_SPACE);
	need = d.image_len;
	assert_true(need > 100);
	assert_int_equal(d.objects[ROCEV2_OBJ_QP] + d.objects[ROCEV2_OBJ_QP_SRQ], 2);
	assert_int_equal(query_qp(&H, o[4]).mig_flags, 0);   /* resumed in place */
	assert_int_equal(host_query_device(&H).flags & MNIC_DEV_F_STOPPED, 0);
	assert_int_equal(H.m.cnt.dump_too_small, 1);
	/* Exactly enough. */
	assert_int_equal(dump(&H, 64 + need, &d), MNIC_CMD_STAT_OK);
	assert_int_equal(d.image_len, need);
	assert_int_equal(d.objects[ROCEV2_OBJ_PD], 1);
	assert_int_equal(d.objects[ROCEV2_OBJ_MR], 1);
	assert_int_equal(d.objects[ROCEV2_OBJ_QP_SRQ], 1);
	assert_memory_equal(big_out + 64, ROCEV2_DUMP_MAGIC, 8);
	assert_int_equal(rocev2_image_validate(big_out + 64, need), 0);
	assert_int_equal(query_qp(&H, o[4]).mig_flags, MNIC_QP_F_STOPPED);
	assert_true(host_query_device(&H).flags & MNIC_DEV_F_STOPPED);
	/* Stopped: MODIFY_QP refused, queries and a second dump work. */
	{
		struct mnic_qp_attr a;

		memset(&a, 0, sizeof(a));
		a.qp_state = ROCEV2_QPS_ERR;
		r = modify_qp(&H, o[4], M(STATE), &a);
		expect_status(&r, MNIC_CMD_STAT_BAD_RES_STATE, MNIC_SITE_QP_STOPPED);
	}
	/* A too-small dump while already stopped leaves it stopped. */
	assert_int_equal(dump(&H, 64 + 10, &d), MNIC_CMD_STAT_BAD_OUTPUT_LEN);
	assert_int_equal(query_qp(&H, o[4]).mig_flags, MNIC_QP_F_STOPPED);
	assert_int_equal(dump(&H, MNIC_CMD_MAX_LEN - 4096, &d), MNIC_CMD_STAT_OK);
	assert_int_equal(d.image_len, need);

	/* Into a second engine, 15 blocks of input. */
	host_init(&T);
	host_enable(&T);
	{
		static uint8_t img[MNIC_CMD_MAX_LEN];

		memcpy(img, big_out + 64, need);
		r = restore(&T, MNIC_RESTORE_IMAGE, img, need, 0);
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
		assert_same_qp(&H, &T, o[4]);
		assert_same_qp(&H, &T, o[5]);
		assert_int_equal(query_qp(&T, o[5]).mig_flags, MNIC_QP_F_STOPPED);
		/* Again: every handle is taken now (nothing changes). */
		r = restore(&T, MNIC_RESTORE_IMAGE, img, need, 0);
		expect_status(&r, MNIC_CMD_STAT_BAD_INDEX, MNIC_SITE_ENGINE);
		assert_int_equal(MNIC_SYND_ERRNO(r.syndrome), HAL_EEXIST);
		/* One flipped bit: CRC. */
		img[need / 2] ^= 4;
		r = restore(&T, MNIC_RESTORE_IMAGE, img, need, 0);
		expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_ENGINE);
		img[need / 2] ^= 4;
		/* data_len past in_len (big_in still holds the last command). */
		{
			struct mnic_cmd_restore_in *ri = (struct mnic_cmd_restore_in *)big_in;
			uint8_t out[8];

			ri->data_len = need + 1;
			assert_int_equal(host_cmd(&T, big_in, 32 + need, out, 8),
					 MNIC_CMD_STAT_BAD_INPUT_LEN);
			assert_int_equal(MNIC_SYND_SITE(out_syndrome(out)), MNIC_SITE_DATA_LEN);
		}
		/* Incomplete peer override. */
		{
			struct mnic_cmd_restore_in *ri = (struct mnic_cmd_restore_in *)big_in;
			uint8_t out[8];

			ri->data_len = need;
			ri->old_dip = 0x0a000002;
			assert_int_equal(host_cmd(&T, big_in, 32 + need, out, 8),
					 MNIC_CMD_STAT_BAD_PARAM);
			assert_int_equal(MNIC_SYND_SITE(out_syndrome(out)), MNIC_SITE_OVERRIDE);
		}
	}
	/* Target resumes; MODIFY works again. */
	r = by_handle(&T, MNIC_CMD_RESUME_CONTEXT, MNIC_CTX_SELF);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	assert_int_equal(query_qp(&T, o[4]).mig_flags, 0);
	{
		struct mnic_qp_attr a;

		memset(&a, 0, sizeof(a));
		a.qp_state = ROCEV2_QPS_ERR;
		r = modify_qp(&T, o[4], M(STATE), &a);
		expect_status(&r, MNIC_CMD_STAT_OK, 0);
	}
	/* Source aborts: resumes in place. */
	r = by_handle(&H, MNIC_CMD_ABORT_DUMP, MNIC_CTX_MGMT);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	assert_int_equal(query_qp(&H, o[4]).mig_flags, 0);
	host_free(&T);
}

/* An image whose MR points into the driver area is refused before the
 * engine sees it (the image is otherwise valid: CRC recomputed). */
static void test_restore_image_address_check(void **state)
{
	uint32_t o[6], need, pos;
	struct mnic_cmd_dump_out d;
	struct reply r;
	static uint8_t img[MNIC_CMD_MAX_LEN];

	(void)state;
	populate(&H, o);
	assert_int_equal(dump(&H, 64 * 1024, &d), MNIC_CMD_STAT_OK);
	need = d.image_len;
	memcpy(img, big_out + 64, need);
	/* The MR record follows the PD record (12 bytes). */
	pos = ROCEV2_DUMP_HDR_LEN + 12;
	assert_int_equal(img[pos], ROCEV2_OBJ_MR);
	memset(img + pos + 8 + 8, 0, 8);   /* address 0: the command ring */
	{
		uint32_t crc = crc32c(0, img + ROCEV2_DUMP_CRC_START, need - ROCEV2_DUMP_CRC_START);

		memcpy(img + ROCEV2_DUMP_OFF_CRC, &crc, 4);
	}
	assert_int_equal(rocev2_image_validate(img, need), 0);
	host_init(&T);
	host_enable(&T);
	r = restore(&T, MNIC_RESTORE_IMAGE, img, need, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MR_ADDR);
	assert_int_equal(host_query_device(&T).n_pd, 0);
	host_free(&T);
}

/* The per-object path (MigrOS's ibv_restore_object): each record of the
 * image, in dependency order, with the op_mod for its kind. */
static void test_restore_per_object(void **state)
{
	uint32_t o[6], need, pos, pass;
	struct mnic_cmd_dump_out d;
	struct reply r;
	static uint8_t img[MNIC_CMD_MAX_LEN];
	static const uint16_t order[] = { ROCEV2_OBJ_PD, ROCEV2_OBJ_MR, ROCEV2_OBJ_CQ, ROCEV2_OBJ_SRQ,
					  ROCEV2_OBJ_QP, ROCEV2_OBJ_QP + 100 };

	(void)state;
	populate(&H, o);
	assert_int_equal(dump(&H, 64 * 1024, &d), MNIC_CMD_STAT_OK);
	need = d.image_len;
	memcpy(img, big_out + 64, need);
	host_init(&T);
	host_enable(&T);
	/* Wrong op_mod for the record kind, bad version, wrong length. */
	pos = ROCEV2_DUMP_HDR_LEN;   /* the PD record */
	r = restore(&T, MNIC_RESTORE_MR_KEYS, img + pos, 12, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RECORD_TYPE);
	r = restore(&T, MNIC_RESTORE_REFILL, img + pos, 12, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RECORD_TYPE);
	r = restore(&T, MNIC_RESTORE_CREATE, img + pos, 11, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RECORD);
	r = restore(&T, MNIC_RESTORE_CREATE, img + pos, 4, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RECORD);
	assert_int_equal(img[pos + 2], ROCEV2_DUMP_REC_VERSION);
	img[pos + 2] = ROCEV2_DUMP_REC_VERSION + 1u;
	r = restore(&T, MNIC_RESTORE_CREATE, img + pos, 12, 0);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RECORD);
	assert_int_equal(MNIC_SYND_ERRNO(r.syndrome), HAL_ERANGE);
	img[pos + 2] = ROCEV2_DUMP_REC_VERSION;
	assert_int_equal(host_query_device(&T).n_pd, 0);

	for (pass = 0; pass < sizeof(order) / sizeof(order[0]); pass++) {
		for (pos = ROCEV2_DUMP_HDR_LEN; pos < need;) {
			uint16_t type = (uint16_t)(img[pos] | img[pos + 1] << 8);
			uint32_t len;
			uint16_t op_mod;

			memcpy(&len, img + pos + 4, 4);
			if (order[pass] == ROCEV2_OBJ_QP + 100 && type == ROCEV2_OBJ_QP)
				op_mod = MNIC_RESTORE_REFILL;
			else if (type != order[pass])
				op_mod = 0xffff;
			else
				op_mod = type == ROCEV2_OBJ_MR ? MNIC_RESTORE_MR_KEYS : MNIC_RESTORE_CREATE;
			if (op_mod != 0xffff) {
				r = restore(&T, op_mod, img + pos, len, 0);
				expect_status(&r, MNIC_CMD_STAT_OK, 0);
				if (op_mod == MNIC_RESTORE_CREATE && type == ROCEV2_OBJ_QP)
					assert_int_equal(query_qp(&T, rec_qpn(img + pos)).attr.qp_state,
							 ROCEV2_QPS_RESET);
			}
			pos += len;
		}
	}
	assert_same_qp(&H, &T, o[4]);
	assert_same_qp(&H, &T, o[5]);
	assert_int_equal(query_qp(&T, o[4]).mig_flags, MNIC_QP_F_STOPPED);
	/* Refill twice: the engine says busy. */
	pos = ROCEV2_DUMP_HDR_LEN;
	while (img[pos] != ROCEV2_OBJ_QP) {
		uint32_t len;

		memcpy(&len, img + pos + 4, 4);
		pos += len;
	}
	{
		uint32_t len;

		memcpy(&len, img + pos + 4, 4);
		r = restore(&T, MNIC_RESTORE_REFILL, img + pos, len, 0);
		expect_status(&r, MNIC_CMD_STAT_RES_BUSY, MNIC_SITE_ENGINE);
	}
	/* Commands during restore: destroy is allowed, the target can be torn
	 * down while stopped. */
	r = by_handle(&T, MNIC_CMD_DESTROY_QP, o[5]);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	host_query_device(&T);
	host_free(&T);
}

/* ---- counters and doorbells -------------------------------------------------------- */

static void test_counters(void **state)
{
	static const struct {
		uint16_t op_mod;
		uint32_t total;
		const char *first;
	} kinds[] = {
		{ MNIC_COUNTERS_ENGINE, ROCEV2_NUM_COUNTERS, "rx_frames" },
		{ MNIC_COUNTERS_MGMT, MNIC_MGMT_NUM_COUNTERS, "cmdq_enables" },
		{ MNIC_COUNTERS_PORT, 5, "dma_reads" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_QUERY_COUNTERS, kinds[i].op_mod) };
		struct mnic_cmd_query_counters_out o;
		struct mnic_counter c;
		struct reply r = issue(&H, &in, sizeof(in), CMD_OUT_MAX);

		expect_status(&r, MNIC_CMD_STAT_OK, 0);
		memcpy(&o, r.out, sizeof(o));
		assert_int_equal(o.total, kinds[i].total);
		assert_int_equal(o.count, kinds[i].total);
		memcpy(&c, r.out + 16, sizeof(c));
		assert_string_equal(c.name, kinds[i].first);
		if (kinds[i].op_mod == MNIC_COUNTERS_MGMT)
			assert_int_equal(c.value, 1);   /* cmdq_enables */
	}
}

/* PORT counters as the host sees them (mnicctl prints these names):
 * eth<port>_ per port (a port without a driver reads zeros), then dma_. */
static void test_port_counter_names_and_values(void **state)
{
	static const char *const names[] = {
		"eth0_tx_frames", "eth0_tx_bytes", "eth0_tx_busy", "eth0_tx_too_long",
		"eth0_rx_frames", "eth0_rx_bytes", "eth0_rx_too_long", "eth0_rx_dropped",
		"eth1_tx_frames", "eth1_tx_bytes", "eth1_tx_busy", "eth1_tx_too_long",
		"eth1_rx_frames", "eth1_rx_bytes", "eth1_rx_too_long", "eth1_rx_dropped",
		"dma_reads", "dma_writes", "dma_read_bytes", "dma_write_bytes", "dma_out_of_window",
	};
	static struct hal_eth eth0;
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_QUERY_COUNTERS, MNIC_COUNTERS_PORT) };
	struct mnic_cmd_query_counters_out o;
	struct reply r;
	uint32_t i;

	(void)state;
	eth0.stats = (struct hal_eth_stats){ 1, 2, 3, 4, 5, 6, 7, 8 };
	H.m.cfg.eth[0] = &eth0;
	H.m.cfg.eth[1] = NULL;
	H.m.cfg.n_eth = 2;
	r = issue(&H, &in, sizeof(in), CMD_OUT_MAX);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&o, r.out, sizeof(o));
	assert_int_equal(o.total, sizeof(names) / sizeof(names[0]));
	assert_int_equal(o.count, o.total);
	for (i = 0; i < o.count; i++) {
		struct mnic_counter c;
		char zero[sizeof(c.name)] = { 0 };
		size_t n = strlen(names[i]);

		memcpy(&c, r.out + sizeof(o) + i * sizeof(c), sizeof(c));
		assert_string_equal(c.name, names[i]);
		assert_memory_equal(c.name + n, zero, sizeof(c.name) - n);   /* NUL-padded */
		if (i < 8)
			assert_int_equal(c.value, i + 1);
		else if (i < 16)
			assert_int_equal(c.value, 0);
	}
}

/* Completion events through the dispatcher: CREATE_EQ (vector and ring
 * checked), MODIFY_CQ (both handles checked), DESTROY_EQ while bound. */
static void test_cq_event_commands(void **state)
{
	struct mnic_cmd_create_eq_in eq_in;
	struct mnic_cmd_modify_cq_in mc;
	struct reply r;
	uint32_t cq, eq;

	(void)state;
	r = create_cq(&H, HOST_USER, HOST_USER + 0x4000, 64);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	cq = handle_of(&r);
	memset(&eq_in, 0, sizeof(eq_in));
	eq_in.hdr = in_hdr(MNIC_CMD_CREATE_EQ, 0);
	eq_in.q = (struct mnic_queue_desc){ HOST_USER + 0x8000, HOST_USER + 0x4008, 16, 0, 0, 0 };
	eq_in.vector = 0;                               /* the command queue's */
	r = issue(&H, &eq_in, sizeof(eq_in), 16);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_ENGINE);
	eq_in.vector = MNIC_EQ_VECTOR_MAX + 1u;
	r = issue(&H, &eq_in, sizeof(eq_in), 16);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_ENGINE);
	eq_in.vector = 1;
	eq_in.q.ring_addr = 0x1000;                     /* the driver area */
	r = issue(&H, &eq_in, sizeof(eq_in), 16);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
	eq_in.q.ring_addr = HOST_USER + 0x8000;
	r = issue(&H, &eq_in, sizeof(eq_in), 16);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	eq = handle_of(&r);
	mc = (struct mnic_cmd_modify_cq_in){ in_hdr(MNIC_CMD_MODIFY_CQ, 0), cq, eq + 0x10000u };
	r = issue(&H, &mc, sizeof(mc), 8);
	expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_EQ);
	mc.eq = eq;
	mc.hdr.op_mod = 1;
	r = issue(&H, &mc, sizeof(mc), 8);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_OP_MOD);
	mc.hdr.op_mod = MNIC_MODIFY_CQ_EQ;
	r = issue(&H, &mc, sizeof(mc), 8);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	r = by_handle(&H, MNIC_CMD_DESTROY_EQ, eq);
	expect_status(&r, MNIC_CMD_STAT_RES_BUSY, 0);
	mc.eq = MNIC_EQ_NONE;
	r = issue(&H, &mc, sizeof(mc), 8);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	r = by_handle(&H, MNIC_CMD_DESTROY_EQ, eq);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	r = by_handle(&H, MNIC_CMD_DESTROY_EQ, eq);
	expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_EQ);
}

/* RESIZE_CQ through the dispatcher: the new ring checked as CREATE_CQ's,
 * the CQ handle checked, the CQEs moved in the reply's handle field. */
static void test_resize_cq_command(void **state)
{
	struct mnic_cmd_resize_cq_in in;
	struct reply r;
	uint32_t cq;

	(void)state;
	r = create_cq(&H, HOST_USER, HOST_USER + 0x4000, 64);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	cq = handle_of(&r);
	memset(&in, 0, sizeof(in));
	in.hdr = in_hdr(MNIC_CMD_RESIZE_CQ, 0);
	in.cq = cq;
	in.q = (struct mnic_queue_desc){ 0x1000, HOST_USER + 0x4010, 128, 0, 0, 0 };  /* driver area */
	r = issue(&H, &in, sizeof(in), 16);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RING_ADDR);
	in.q.ring_addr = HOST_USER + 0x10000;
	in.cq = cq + 0x10000u;
	r = issue(&H, &in, sizeof(in), 16);
	expect_status(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_CQ);
	in.cq = cq;
	in.q.size = 100;                                /* not a power of two */
	r = issue(&H, &in, sizeof(in), 16);
	assert_int_not_equal(r.status, MNIC_CMD_STAT_OK);
	in.q.size = 128;
	r = issue(&H, &in, sizeof(in), 16);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	assert_int_equal(handle_of(&r), 0);             /* nothing was outstanding */
	r = by_handle(&H, MNIC_CMD_DESTROY_CQ, cq);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
}

static void test_data_path_doorbell(void **state)
{
	uint32_t o[6];

	(void)state;
	populate(&H, o);
	assert_int_equal(mnic_db_service(&H.m), 0);
	((volatile struct mnic_db_page *)(H.bar + MNIC_DB_PAGE_OFFSET))->db_seq++;
	assert_int_equal(mnic_db_service(&H.m), 1);
	assert_int_equal(H.seg->db_seen,
			 ((volatile struct mnic_db_page *)(H.bar + MNIC_DB_PAGE_OFFSET))->db_seq);
	assert_int_equal(H.m.cnt.db_rings, 1);
	/* QP1: SQ (RQ from the SRQ); QP2: SQ + RQ; the SRQ. */
	assert_int_equal(H.m.cnt.db_refreshes, 4);
	assert_int_equal(mnic_db_service(&H.m), 0);
}

/* QUERY_DCQCN / SET_DCQCN (issue 18): defaults reported, a field out of
 * range refused with its own site and nothing changed, a valid set read
 * back and in force in the engine; SET is privileged. */
static void test_cmd_dcqcn(void **state)
{
	struct mnic_cmd_simple_in q = { in_hdr(MNIC_CMD_QUERY_DCQCN, 0) };
	struct mnic_cmd_dcqcn_in in;
	struct mnic_cmd_dcqcn_out out, def;
	struct rocev2_dcqcn_params p;
	struct reply r;

	(void)state;
	r = issue(&H, &q, sizeof(q), sizeof(out));
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&def, r.out, sizeof(def));
	assert_int_equal(def.p.flags, MNIC_DCQCN_F_ENABLE | MNIC_DCQCN_F_ECT);
	assert_int_equal(def.p.g, 256);
	assert_int_equal(def.p.cnp_interval_us, 50);
	assert_int_equal(def.p.line_rate_mbps, 10000);

	memset(&in, 0, sizeof(in));
	in.hdr = in_hdr(MNIC_CMD_SET_DCQCN, 0);
	in.p = def.p;
	in.p.g = 0;
	r = issue(&H, &in, sizeof(in), 8);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_DCQCN_G);
	assert_int_equal(MNIC_SYND_ERRNO(r.syndrome), HAL_EINVAL);
	in.p = def.p;
	in.p.min_rate_mbps = def.p.line_rate_mbps + 1;
	r = issue(&H, &in, sizeof(in), 8);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_DCQCN_MIN_RATE);
	in.p = def.p;
	in.p.flags = 8;
	r = issue(&H, &in, sizeof(in), 8);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_DCQCN_FLAGS);
	assert_int_equal(H.m.cnt.refused_dcqcn, 3);
	r = issue(&H, &q, sizeof(q), sizeof(out));
	assert_memory_equal(r.out + 8, &def.p, sizeof(def.p));

	in.p = def.p;
	in.p.line_rate_mbps = 1000;
	in.p.cnp_interval_us = 100;
	in.p.flags = MNIC_DCQCN_F_ENABLE;
	r = issue(&H, &in, sizeof(in), 8);
	expect_status(&r, MNIC_CMD_STAT_OK, 0);
	r = issue(&H, &q, sizeof(q), sizeof(out));
	memcpy(&out, r.out, sizeof(out));
	assert_int_equal(out.p.line_rate_mbps, 1000);
	assert_int_equal(out.p.cnp_interval_us, 100);
	assert_int_equal(out.p.flags, MNIC_DCQCN_F_ENABLE);
	rocev2_get_dcqcn(H.m.cfg.engine, &p);
	assert_int_equal(p.line_rate_mbps, 1000);
	assert_int_equal(p.flags, ROCEV2_DCQCN_F_ENABLE);
	/* The reserved word must be zero. */
	in.p.reserved = 1;
	r = issue(&H, &in, sizeof(in), 8);
	expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_RESERVED);
}

/* SET_GID (the host's RoCEv2 GID table): hostile index, flags and
 * addresses refused with their site and nothing changed; IPv4 entries:
 * the port's IPv4 address is the valid one of lowest index, clearing
 * every entry gives the boot address back; IPv6 entries (ipv6_ ones)
 * are the engine's too; QUERY_DEVICE reports the port's largest frame. */
static struct reply set_gid16(uint32_t index, uint32_t flags, const uint8_t gid[16])
{
	struct mnic_cmd_set_gid_in in;

	memset(&in, 0, sizeof(in));
	in.hdr = in_hdr(MNIC_CMD_SET_GID, 0);
	in.index = index;
	in.flags = flags;
	if (gid)
		memcpy(in.gid, gid, sizeof(in.gid));
	return issue(&H, &in, sizeof(in), 8);
}

static struct reply set_gid(uint32_t index, uint32_t flags, uint32_t ipv4)
{
	uint8_t gid[16] = { 0 };

	if (ipv4 || flags)
		mnic_gid_from_ipv4(gid, ipv4);
	return set_gid16(index, flags, gid);
}

static void test_netdev_set_gid(void **state)
{
	struct mnic_cmd_query_device_out d = host_query_device(&H);
	const uint32_t boot = d.ipv4;
	static const struct {
		uint32_t index, flags, ipv4, site;
	} bad[] = {
		{ MNIC_GID_TBL_LEN, MNIC_GID_F_VALID, 0x0a000001u, MNIC_SITE_GID_INDEX },
		{ 0xffffffffu, MNIC_GID_F_VALID, 0x0a000001u, MNIC_SITE_GID_INDEX },
		{ 1, 2, 0x0a000001u, MNIC_SITE_GID_FLAGS },
		{ 1, MNIC_GID_F_VALID, 0, MNIC_SITE_GID_ADDR },
		{ 1, MNIC_GID_F_VALID, 0x7f000001u, MNIC_SITE_GID_ADDR },   /* 127.0.0.1 */
		{ 1, MNIC_GID_F_VALID, 0xe0000001u, MNIC_SITE_GID_ADDR },   /* 224.0.0.1 */
		{ 1, MNIC_GID_F_VALID, 0xffffffffu, MNIC_SITE_GID_ADDR },   /* broadcast */
		{ 1, 0, 0x0a000001u, MNIC_SITE_GID_ADDR },                 /* clear with an address */
	};
	struct reply r;
	size_t i;

	(void)state;
	assert_int_equal(d.max_frame, HAL_ETH_MAX_FRAME);
	assert_int_not_equal(boot, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = set_gid(bad[i].index, bad[i].flags, bad[i].ipv4);
		expect_status(&r, MNIC_CMD_STAT_BAD_PARAM, bad[i].site);
		assert_int_equal(MNIC_SYND_ERRNO(r.syndrome), HAL_EINVAL);
		assert_int_equal(host_query_device(&H).ipv4, boot);
	}
	assert_int_equal(H.m.cnt.refused_gid, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(H.m.cnt.gid_set + H.m.cnt.gid_cleared, 0);
	/* index 3 first, then 1: the lowest valid index is the address */
	expect_status((r = set_gid(3, MNIC_GID_F_VALID, 0xc0a80003u), &r), MNIC_CMD_STAT_OK, 0);
	assert_int_equal(host_query_device(&H).ipv4, 0xc0a80003u);
	expect_status((r = set_gid(1, MNIC_GID_F_VALID, 0xc0a80001u), &r), MNIC_CMD_STAT_OK, 0);
	assert_int_equal(host_query_device(&H).ipv4, 0xc0a80001u);
	/* clearing 1 falls back to 3, clearing 3 to the boot address */
	expect_status((r = set_gid(1, 0, 0), &r), MNIC_CMD_STAT_OK, 0);
	assert_int_equal(host_query_device(&H).ipv4, 0xc0a80003u);
	expect_status((r = set_gid(3, 0, 0), &r), MNIC_CMD_STAT_OK, 0);
	assert_int_equal(host_query_device(&H).ipv4, boot);
	assert_int_equal(H.m.cnt.gid_set, 2);
	assert_int_equal(H.m.cnt.gid_cleared, 2);
}

/* IPv6 GIDs: link-local and global ones are taken into the engine's table
 * (and leave the IPv4 address alone); ::, ::1 and multicast are refused. */
static void test_ipv6_set_gid(void **state)
{
	static const uint8_t ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0, 0, 1 };
	static const uint8_t global[16] = { 0xfd, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };
	static const uint8_t any[16] = { 0 };
	static const uint8_t loop[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const uint8_t mcast[16] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	const uint32_t boot = host_query_device(&H).ipv4;
	struct reply r;

	(void)state;
	expect_status((r = set_gid16(1, MNIC_GID_F_VALID, any), &r), MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_GID_ADDR);
	expect_status((r = set_gid16(1, MNIC_GID_F_VALID, loop), &r), MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_GID_ADDR);
	expect_status((r = set_gid16(1, MNIC_GID_F_VALID, mcast), &r), MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_GID_ADDR);
	expect_status((r = set_gid16(1, 0, ll), &r), MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_GID_ADDR);
	assert_int_equal(H.m.cnt.refused_gid, 4);
	assert_false(rocev2_gid_ours6(H.m.cfg.engine, ll));
	expect_status((r = set_gid16(0, MNIC_GID_F_VALID, ll), &r), MNIC_CMD_STAT_OK, 0);
	expect_status((r = set_gid16(2, MNIC_GID_F_VALID, global), &r), MNIC_CMD_STAT_OK, 0);
	assert_true(rocev2_gid_ours6(H.m.cfg.engine, ll));
	assert_true(rocev2_gid_ours6(H.m.cfg.engine, global));
	assert_int_equal(host_query_device(&H).ipv4, boot);
	expect_status((r = set_gid16(0, 0, NULL), &r), MNIC_CMD_STAT_OK, 0);
	assert_false(rocev2_gid_ours6(H.m.cfg.engine, ll));
	assert_true(rocev2_gid_ours6(H.m.cfg.engine, global));
	assert_int_equal(H.m.cnt.gid_set, 2);
	assert_int_equal(H.m.cnt.gid_cleared, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_opcode_validation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_netdev_set_gid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_set_gid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cmd_dcqcn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_counter_names_and_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_handles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cq_event_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resize_cq_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_addresses_outside_user_area, setup, teardown),
		cmocka_unit_test_setup_teardown(test_object_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_exhaustion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dump_restore_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_image_address_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_per_object, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_path_doorbell, setup, teardown),
	};

	return cmocka_run_group_tests_name("mgmt_cmd", tests, NULL, NULL);
}
