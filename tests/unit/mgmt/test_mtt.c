/* Memory translation tables through the whole transport (mgmt/cmd_mtt.c,
 * the dispatcher's MTT handles, docs/host-interface.md "Host memory and
 * translation"): two tenants A and B on one engine.
 *
 * The hostile page-list table: every WRITE_MTT that must be refused
 * (unaligned page, page outside the aperture, in the driver area, in
 * another context's range; count 0 or past what a command carries, in_len
 * not 32 + 8 x count, first + count past npages; unknown, stale and
 * foreign handles), each with its status, syndrome site and counter, and
 * nothing written: the MTT stays unusable (REG_MR over it is refused),
 * while the same write with good pages makes it usable.  Then WRITE and
 * DESTROY of an MTT in use, CREATE_MTT shapes, objects' ranges inside
 * their MTT (REG_MR, CQ, QP), QUERY_DEVICE's MTT fields, DEALLOC_CONTEXT,
 * a NIC with a separate host-memory aperture, where pages are checked
 * against the aperture instead of the window's user area, and MTTs a
 * restore recreated (no shape in mgmt): refilled under an aperture,
 * refused without one. */
/* User area 4 MiB: room for the contexts below. */
#define HOST_WINDOW (6u << 20)
#include <stddef.h>

#include "fake_host.h"

static struct host H, T;   /* T: a migration's target */

#define CTX_A_UA (HOST_USER + 0x100000u)
#define CTX_B_UA (HOST_USER + 0x200000u)
#define CTX_UA_SIZE 0x80000u
#define OUT_MAX 4096u
#define PAGE 0x1000u
/* B's MTT: 0x3000 bytes from an IOVA in the middle of a page: 4 pages. */
#define B_IOVA 0x7f0000003800ull
#define B_LEN 0x3000u
#define B_NPAGES 4u
#define MAX_LIST 8u

static uint16_t ctx_a, ctx_b;

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
	if (site && MNIC_SYND_SITE(r->syndrome) != site)
		fail_msg("site %s, want %s", mnic_cmd_site_name(MNIC_SYND_SITE(r->syndrome)),
			 mnic_cmd_site_name(site));
}

static uint32_t handle_of(const struct reply *r)
{
	struct mnic_cmd_handle_out o;

	memcpy(&o, r->out, sizeof(o));
	return o.handle;
}

static uint16_t new_ctx(struct host *h, uint64_t off)
{
	struct mnic_cmd_alloc_context_in in = { in_hdr(MNIC_CMD_ALLOC_CONTEXT, MNIC_CTX_UA_AT), off,
						CTX_UA_SIZE, 0x7a, 0 };
	struct reply r = issue_as(h, MNIC_CTX_MGMT, &in, sizeof(in),
				  sizeof(struct mnic_cmd_alloc_context_out));
	struct mnic_cmd_alloc_context_out o;

	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&o, r.out, sizeof(o));
	return (uint16_t)o.ctx;
}

static struct mnic_cmd_query_device_out query_device_as(struct host *h, uint16_t ctx)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_QUERY_DEVICE, 0) };
	struct reply r = issue_as(h, ctx, &in, sizeof(in), sizeof(struct mnic_cmd_query_device_out));
	struct mnic_cmd_query_device_out o;

	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&o, r.out, sizeof(o));
	return o;
}

static struct reply create_mtt(struct host *h, uint16_t ctx, uint64_t iova, uint64_t len,
			       uint32_t shift)
{
	struct mnic_cmd_create_mtt_in in = { in_hdr(MNIC_CMD_CREATE_MTT, 0), iova, len, shift, 0 };

	return issue_as(h, ctx, &in, sizeof(in), sizeof(struct mnic_cmd_create_mtt_out));
}

static uint32_t new_mtt(struct host *h, uint16_t ctx, uint64_t iova, uint64_t len,
			uint32_t shift, uint32_t npages)
{
	struct reply r = create_mtt(h, ctx, iova, len, shift);
	struct mnic_cmd_create_mtt_out o;

	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&o, r.out, sizeof(o));
	assert_int_not_equal(o.mtt, MNIC_MTT_NONE);
	assert_int_equal(o.npages, npages);
	return o.mtt;
}

/* WRITE_MTT of count pages at first; in_len is 32 + 8 x n_sent. */
static struct reply write_mtt(struct host *h, uint16_t ctx, uint32_t mtt, uint32_t first,
			      uint32_t count, const uint64_t *pages, uint32_t n_sent)
{
	uint8_t in[sizeof(struct mnic_cmd_write_mtt_in) + MAX_LIST * 8u];
	struct mnic_cmd_write_mtt_in hd = { in_hdr(MNIC_CMD_WRITE_MTT, 0), mtt, first, count, 0, 0 };

	assert_true(n_sent <= MAX_LIST);
	memcpy(in, &hd, sizeof(hd));
	memcpy(in + sizeof(hd), pages, n_sent * 8u);
	return issue_as(h, ctx, in, (uint32_t)sizeof(hd) + n_sent * 8u, 8);
}

static struct reply by_handle_as(struct host *h, uint16_t ctx, uint16_t opcode, uint32_t handle)
{
	struct mnic_cmd_handle_in in = { in_hdr(opcode, 0), handle, 0 };

	return issue_as(h, ctx, &in, sizeof(in), 8);
}

static uint32_t alloc_pd_as(struct host *h, uint16_t ctx)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_ALLOC_PD, 0) };
	struct reply r = issue_as(h, ctx, &in, sizeof(in), 16);

	expect(&r, MNIC_CMD_STAT_OK, 0);
	return handle_of(&r);
}

static struct reply reg_mr_as(struct host *h, uint16_t ctx, uint32_t pd, uint32_t mtt,
			      uint64_t addr, uint64_t len)
{
	struct mnic_cmd_reg_mr_in in = { in_hdr(MNIC_CMD_REG_MR, 0), pd, ROCEV2_ACCESS_LOCAL_WRITE,
					 addr, len, mtt, 0 };

	return issue_as(h, ctx, &in, sizeof(in), 16);
}

/* B's pages: every other page of B's range, so that the list is not
 * contiguous. */
static void good_pages(uint64_t p[B_NPAGES])
{
	for (unsigned i = 0; i < B_NPAGES; i++)
		p[i] = CTX_B_UA + 0x10000u + 2u * i * PAGE;
}

/* ---- the hostile page-list table ------------------------------------------ */

enum mtt_target { T_B, T_A, T_UNKNOWN, T_NONE, T_STALE };

struct hostile {
	const char *what;
	enum mtt_target target;
	uint32_t first, count;
	uint32_t n_sent;               /* pages in the list: in_len = 32 + 8 x n_sent */
	int bad_index;                 /* -1: all pages good */
	uint64_t bad_page;
	uint8_t status;
	uint32_t site;
	size_t counter;                /* offsetof(struct mnic_mgmt_counters, ...) */
};

#define CNT(f) offsetof(struct mnic_mgmt_counters, f)

static const struct hostile hostile[] = {
	{ "unaligned page", T_B, 0, B_NPAGES, B_NPAGES, 2, CTX_B_UA + 0x30800u,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE, CNT(refused_mtt_page) },
	{ "page one byte off", T_B, 0, B_NPAGES, B_NPAGES, 3, CTX_B_UA + 0x30001u,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE, CNT(refused_mtt_page) },
	{ "page at the window's end", T_B, 0, B_NPAGES, B_NPAGES, 1, HOST_WINDOW,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE, CNT(refused_mtt_page) },
	{ "page past every aperture", T_B, 0, B_NPAGES, B_NPAGES, 0, 0xfffffffffffff000ull,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE, CNT(refused_mtt_page) },
	{ "page over the command ring", T_B, 0, B_NPAGES, B_NPAGES, 0, 0,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE, CNT(refused_mtt_page) },
	{ "page over the mailboxes", T_B, 0, B_NPAGES, B_NPAGES, 3, MNIC_CMD_MBOX_AREA,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE, CNT(refused_mtt_page) },
	{ "last driver-area page", T_B, 0, B_NPAGES, B_NPAGES, 1, HOST_USER - PAGE,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE, CNT(refused_mtt_page) },
	{ "page in A's range", T_B, 0, B_NPAGES, B_NPAGES, 2, CTX_A_UA + 0x4000u,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE, CNT(refused_mtt_page) },
	{ "page just past B's range", T_B, 0, B_NPAGES, B_NPAGES, 0, CTX_B_UA + CTX_UA_SIZE,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE, CNT(refused_mtt_page) },
	{ "page just before B's range", T_B, 0, B_NPAGES, B_NPAGES, 0, CTX_B_UA - PAGE,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE, CNT(refused_mtt_page) },
	{ "count 0", T_B, 0, 0, 0, -1, 0,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_RANGE, CNT(refused_mtt_range) },
	/* 32 + 8 x 0x20000001 wraps to 40 in 32 bits: one page sent */
	{ "count overflows in_len", T_B, 0, 0x20000001u, 1, -1, 0,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_RANGE, CNT(refused_mtt_range) },
	{ "count past one command", T_B, 0, 0xffffffffu, 1, -1, 0,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_RANGE, CNT(refused_mtt_range) },
	{ "in_len one page short", T_B, 0, B_NPAGES, B_NPAGES - 1u, -1, 0,
	  MNIC_CMD_STAT_BAD_INPUT_LEN, MNIC_SITE_IN_LEN, CNT(refused_mtt_len) },
	{ "in_len one page long", T_B, 0, B_NPAGES - 1u, B_NPAGES, -1, 0,
	  MNIC_CMD_STAT_BAD_INPUT_LEN, MNIC_SITE_IN_LEN, CNT(refused_mtt_len) },
	{ "first + count past npages", T_B, 1, B_NPAGES, B_NPAGES, -1, 0,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_RANGE, CNT(refused_mtt_range) },
	{ "first at npages", T_B, B_NPAGES, 1, 1, -1, 0,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_RANGE, CNT(refused_mtt_range) },
	{ "first + count wraps", T_B, 0xffffffffu, 2, 2, -1, 0,
	  MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_RANGE, CNT(refused_mtt_range) },
	{ "unknown handle", T_UNKNOWN, 0, B_NPAGES, B_NPAGES, -1, 0,
	  MNIC_CMD_STAT_BAD_RES, MNIC_SITE_MTT, CNT(refused_handle) },
	{ "handle 0", T_NONE, 0, B_NPAGES, B_NPAGES, -1, 0,
	  MNIC_CMD_STAT_BAD_RES, MNIC_SITE_MTT, CNT(refused_handle) },
	{ "destroyed handle", T_STALE, 0, B_NPAGES, B_NPAGES, -1, 0,
	  MNIC_CMD_STAT_BAD_RES, MNIC_SITE_MTT, CNT(refused_handle) },
	{ "A's MTT", T_A, 0, B_NPAGES, B_NPAGES, -1, 0,
	  MNIC_CMD_STAT_BAD_RES, MNIC_SITE_MTT, CNT(refused_foreign) },
};

static uint64_t counter(const struct host *h, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)&h->m.cnt + off, sizeof(v));
	return v;
}

static const size_t mtt_counters[] = { CNT(refused_mtt_shape), CNT(refused_mtt_len),
				       CNT(refused_mtt_range), CNT(refused_mtt_page),
				       CNT(refused_mtt_cover), CNT(refused_mtt_busy),
				       CNT(refused_handle), CNT(refused_foreign),
				       CNT(engine_errors) };
#define N_MTT_COUNTERS (sizeof(mtt_counters) / sizeof(mtt_counters[0]))

static void test_hostile_page_lists(void **state)
{
	uint32_t mtt_b, mtt_a, stale, pd;
	uint64_t good[B_NPAGES];
	struct mnic_cmd_query_device_out before, now;
	struct reply r;
	size_t i, j;

	(void)state;
	ctx_a = new_ctx(&H, CTX_A_UA);
	ctx_b = new_ctx(&H, CTX_B_UA);
	mtt_b = new_mtt(&H, ctx_b, B_IOVA, B_LEN, 12, B_NPAGES);
	mtt_a = new_mtt(&H, ctx_a, B_IOVA, B_LEN, 12, B_NPAGES);
	stale = new_mtt(&H, ctx_b, 0x1000, PAGE, 12, 1);
	r = by_handle_as(&H, ctx_b, MNIC_CMD_DESTROY_MTT, stale);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	pd = alloc_pd_as(&H, ctx_b);
	good_pages(good);
	before = query_device_as(&H, ctx_b);
	assert_int_equal(before.n_mtt, 1);

	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		const struct hostile *c = &hostile[i];
		uint64_t pages[MAX_LIST], was[N_MTT_COUNTERS];
		uint32_t target;

		for (j = 0; j < MAX_LIST; j++)
			pages[j] = good[j % B_NPAGES];
		if (c->bad_index >= 0)
			pages[c->bad_index] = c->bad_page;
		target = c->target == T_B ? mtt_b : c->target == T_A ? mtt_a :
			 c->target == T_STALE ? stale : c->target == T_NONE ? MNIC_MTT_NONE :
			 0x00ff1234u;
		for (j = 0; j < N_MTT_COUNTERS; j++)
			was[j] = counter(&H, mtt_counters[j]);
		r = write_mtt(&H, ctx_b, target, c->first, c->count, pages, c->n_sent);
		if (r.status != c->status ||
		    MNIC_SYND_SITE(r.syndrome) != c->site)
			fail_msg("case %zu (%s): %s/%s, want %s/%s", i, c->what,
				 mnic_cmd_status_name(r.status),
				 mnic_cmd_site_name(MNIC_SYND_SITE(r.syndrome)),
				 mnic_cmd_status_name(c->status), mnic_cmd_site_name(c->site));
		/* exactly its counter moved, by one */
		for (j = 0; j < N_MTT_COUNTERS; j++)
			if (counter(&H, mtt_counters[j]) != was[j] + (mtt_counters[j] == c->counter))
				fail_msg("case %zu (%s): counter %zu moved wrongly", i, c->what, j);
		/* nothing written: B's MTT is still not usable */
		r = reg_mr_as(&H, ctx_b, pd, mtt_b, B_IOVA, B_LEN);
		if (r.status != MNIC_CMD_STAT_BAD_RES_STATE ||
		    MNIC_SYND_SITE(r.syndrome) != MNIC_SITE_MTT_COVER)
			fail_msg("case %zu (%s): the MTT became usable", i, c->what);
		now = query_device_as(&H, ctx_b);
		assert_int_equal(now.n_mr, before.n_mr);
		assert_int_equal(now.n_mtt, before.n_mtt);
		assert_int_equal(now.free_mtt_pages, before.free_mtt_pages);
	}
	/* The MGMT context may name any MTT but not the driver area either. */
	{
		uint64_t pages[B_NPAGES];

		good_pages(pages);
		pages[1] = MNIC_CMD_MBOX_AREA + PAGE;
		r = write_mtt(&H, MNIC_CTX_MGMT, mtt_b, 0, B_NPAGES, pages, B_NPAGES);
		expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE);
	}
	/* The control: the same command with B's own pages makes it usable. */
	r = write_mtt(&H, ctx_b, mtt_b, 0, B_NPAGES, good, B_NPAGES);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = reg_mr_as(&H, ctx_b, pd, mtt_b, B_IOVA, B_LEN);
	expect(&r, MNIC_CMD_STAT_OK, 0);
}

/* ---- in use ---------------------------------------------------------------- */

static void test_write_and_destroy_while_used(void **state)
{
	uint32_t mtt, pd, lkey;
	uint64_t good[B_NPAGES];
	uint64_t busy;
	struct reply r;

	(void)state;
	ctx_b = new_ctx(&H, CTX_B_UA);
	mtt = new_mtt(&H, ctx_b, B_IOVA, B_LEN, 12, B_NPAGES);
	good_pages(good);
	/* in two chunks, as a long list goes */
	r = write_mtt(&H, ctx_b, mtt, 0, 2, good, 2);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = write_mtt(&H, ctx_b, mtt, 2, 2, good + 2, 2);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	pd = alloc_pd_as(&H, ctx_b);
	r = reg_mr_as(&H, ctx_b, pd, mtt, B_IOVA + 0x100u, B_LEN - 0x100u);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	{
		struct mnic_cmd_reg_mr_out mo;

		memcpy(&mo, r.out, sizeof(mo));
		lkey = mo.lkey;
	}

	busy = H.m.cnt.refused_mtt_busy;
	r = write_mtt(&H, ctx_b, mtt, 1, 1, good, 1);
	expect(&r, MNIC_CMD_STAT_BAD_RES_STATE, MNIC_SITE_MTT_BUSY);
	r = by_handle_as(&H, ctx_b, MNIC_CMD_DESTROY_MTT, mtt);
	expect(&r, MNIC_CMD_STAT_BAD_RES_STATE, MNIC_SITE_MTT_BUSY);
	assert_int_equal(H.m.cnt.refused_mtt_busy, busy + 2);
	assert_int_equal(query_device_as(&H, ctx_b).n_mtt, 1);

	/* unused again: rewritten, then destroyed; the handle is gone */
	r = by_handle_as(&H, ctx_b, MNIC_CMD_DEREG_MR, lkey);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = write_mtt(&H, ctx_b, mtt, 1, 1, good, 1);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = by_handle_as(&H, ctx_b, MNIC_CMD_DESTROY_MTT, mtt);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = by_handle_as(&H, ctx_b, MNIC_CMD_DESTROY_MTT, mtt);
	expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_MTT);
	assert_int_equal(query_device_as(&H, ctx_b).n_mtt, 0);
	assert_int_equal(query_device_as(&H, ctx_b).free_mtt_pages, ROCEV2_MTT_PAGES);
}

/* ---- CREATE_MTT shapes ------------------------------------------------------ */

static void test_create_shapes(void **state)
{
	static const struct {
		uint64_t iova, len;
		uint32_t shift;
	} bad[] = {
		{ 0x1000, 0x1000, 11 },                          /* page below 4 KiB */
		{ 0x1000, 0x1000, 31 },                          /* above 1 GiB */
		{ 0x1000, 0, 12 },                               /* empty */
		{ 0xfffffffffffff000ull, 0x2000, 12 },           /* wraps */
		{ 0xfffffffffffff000ull, 0x1000, 12 },           /* iova + length is 2^64 */
		{ 0, 1ull << 40, 12 },                           /* 2^28 entries: more than the pool */
	};
	struct mnic_cmd_query_device_out o;
	uint64_t shape = H.m.cnt.refused_mtt_shape;
	struct reply r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = create_mtt(&H, MNIC_CTX_MGMT, bad[i].iova, bad[i].len, bad[i].shift);
		expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_SHAPE);
	}
	assert_int_equal(H.m.cnt.refused_mtt_shape, shape + i);
	/* npages counts the pages the range touches; up to 2^64 - 1 exclusive */
	new_mtt(&H, MNIC_CTX_MGMT, 0x1fff, 2, 12, 2);
	new_mtt(&H, MNIC_CTX_MGMT, 0xffffffffffffe000ull, 0x1fff, 12, 2);
	new_mtt(&H, MNIC_CTX_MGMT, 0x40000000, 1ull << 31, 30, 2);
	o = query_device_as(&H, MNIC_CTX_MGMT);
	assert_int_equal(o.n_mtt, 3);
	assert_int_equal(o.max_mtt, ROCEV2_MAX_MTT);
	assert_int_equal(o.max_mtt_pages, ROCEV2_MTT_PAGES);
	assert_int_equal(o.free_mtt_pages, ROCEV2_MTT_PAGES - 6u);
	assert_int_equal(o.page_shift_min, MNIC_PAGE_SHIFT_MIN);
	assert_int_equal(o.page_shift_max, MNIC_PAGE_SHIFT_MAX);
	assert_int_equal(o.hostmem_size, 0);   /* the window is the aperture */
}

/* ---- objects' ranges in their MTT ------------------------------------------ */

static void test_objects_inside_their_mtt(void **state)
{
	uint32_t mtt_b, mtt_a, pd;
	uint64_t good[B_NPAGES], cover, foreign;
	struct mnic_cmd_create_cq_in cq;
	struct reply r;

	(void)state;
	ctx_a = new_ctx(&H, CTX_A_UA);
	ctx_b = new_ctx(&H, CTX_B_UA);
	mtt_b = new_mtt(&H, ctx_b, B_IOVA, B_LEN, 12, B_NPAGES);
	mtt_a = new_mtt(&H, ctx_a, 0x10000, 0x10000, 12, 16);
	good_pages(good);
	r = write_mtt(&H, ctx_b, mtt_b, 0, B_NPAGES, good, B_NPAGES);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	pd = alloc_pd_as(&H, ctx_b);
	cover = H.m.cnt.refused_mtt_cover;
	foreign = H.m.cnt.refused_foreign;

	/* MR: one byte before, one byte past, wholly outside */
	r = reg_mr_as(&H, ctx_b, pd, mtt_b, B_IOVA - 1u, 0x10);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_COVER);
	r = reg_mr_as(&H, ctx_b, pd, mtt_b, B_IOVA, B_LEN + 1u);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_COVER);
	r = reg_mr_as(&H, ctx_b, pd, mtt_b, 0xffffffffffffff00ull, 0x1000);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_COVER);
	/* an IOVA is not range-checked against the window with an MTT: B's
	 * IOVAs lie far outside it, and the MR is fine */
	r = reg_mr_as(&H, ctx_b, pd, mtt_b, B_IOVA + B_LEN - 8u, 8);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	/* another context's MTT is no MTT */
	r = reg_mr_as(&H, ctx_b, pd, mtt_a, 0x10000, 0x1000);
	expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_MTT);
	/* physical mode keeps the user-area rule */
	r = reg_mr_as(&H, ctx_b, pd, MNIC_MTT_NONE, B_IOVA, B_LEN);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MR_ADDR);

	/* CQ: 64 entries of 32 bytes = 0x800 from the ring's IOVA */
	memset(&cq, 0, sizeof(cq));
	cq.hdr = in_hdr(MNIC_CMD_CREATE_CQ, 0);
	cq.q = (struct mnic_queue_desc){ B_IOVA + B_LEN - 0x7ff, CTX_B_UA + 0x100, 64, mtt_b, 0, 0 };
	r = issue_as(&H, ctx_b, &cq, sizeof(cq), 16);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_COVER);
	cq.q = (struct mnic_queue_desc){ B_IOVA, B_IOVA + B_LEN, 64, mtt_b, mtt_b, 0 };
	r = issue_as(&H, ctx_b, &cq, sizeof(cq), 16);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_COVER);
	cq.q = (struct mnic_queue_desc){ B_IOVA, CTX_B_UA + 0x100, 64, mtt_a, 0, 0 };
	r = issue_as(&H, ctx_b, &cq, sizeof(cq), 16);
	expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_MTT);
	/* ring through the MTT, doorbell record physical (B's range) */
	cq.q = (struct mnic_queue_desc){ B_IOVA + B_LEN - 0x800, CTX_B_UA + 0x100, 64, mtt_b, 0,
					 0 };
	r = issue_as(&H, ctx_b, &cq, sizeof(cq), 16);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	/* a physical doorbell record still obeys the user-area rule */
	cq.q = (struct mnic_queue_desc){ B_IOVA, CTX_A_UA + 0x100, 64, mtt_b, 0, 0 };
	r = issue_as(&H, ctx_b, &cq, sizeof(cq), 16);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_DBREC_ADDR);

	/* QP: A's MTT named by the RQ's doorbell record */
	{
		struct mnic_cmd_create_qp_in qp;
		uint32_t cqh;

		cq.q = (struct mnic_queue_desc){ CTX_B_UA + 0x1000, CTX_B_UA + 0x108, 64, 0, 0, 0 };
		r = issue_as(&H, ctx_b, &cq, sizeof(cq), 16);
		expect(&r, MNIC_CMD_STAT_OK, 0);
		cqh = handle_of(&r);
		memset(&qp, 0, sizeof(qp));
		qp.hdr = in_hdr(MNIC_CMD_CREATE_QP, 0);
		qp.pd = pd;
		qp.send_cq = cqh;
		qp.recv_cq = cqh;
		qp.srq = MNIC_NO_SRQ;
		qp.max_send_sge = 2;
		qp.max_recv_sge = 2;
		qp.sq = (struct mnic_queue_desc){ CTX_B_UA + 0x8000, CTX_B_UA + 0x110, 8, 0, 0, 0 };
		qp.rq = (struct mnic_queue_desc){ CTX_B_UA + 0x9000, 0x10000, 8, 0, mtt_a, 0 };
		r = issue_as(&H, ctx_b, &qp, sizeof(qp), 16);
		expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_MTT);
		/* its own MTT for the RQ ring: 8 WQEs of 512 bytes = 0x1000 */
		qp.rq = (struct mnic_queue_desc){ B_IOVA + 0x800, CTX_B_UA + 0x118, 8, mtt_b, 0, 0 };
		r = issue_as(&H, ctx_b, &qp, sizeof(qp), 16);
		expect(&r, MNIC_CMD_STAT_OK, 0);
	}
	assert_int_equal(H.m.cnt.refused_mtt_cover, cover + 5);
	assert_int_equal(H.m.cnt.refused_foreign, foreign + 3);
}

/* ---- DEALLOC_CONTEXT ---------------------------------------------------------- */

static void test_dealloc_context_frees_mtts(void **state)
{
	struct mnic_cmd_query_device_out o;
	uint32_t mtt;
	struct reply r;

	(void)state;
	ctx_b = new_ctx(&H, CTX_B_UA);
	mtt = new_mtt(&H, ctx_b, B_IOVA, B_LEN, 12, B_NPAGES);
	new_mtt(&H, ctx_b, 0, 1u << 20, 12, 256);
	new_mtt(&H, MNIC_CTX_MGMT, 0, 0x1000, 12, 1);
	o = query_device_as(&H, MNIC_CTX_MGMT);
	assert_int_equal(o.n_mtt, 3);
	assert_int_equal(o.free_mtt_pages, ROCEV2_MTT_PAGES - 261u);
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_DEALLOC_CONTEXT, ctx_b);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	o = query_device_as(&H, MNIC_CTX_MGMT);
	assert_int_equal(o.n_mtt, 1);
	assert_int_equal(o.free_mtt_pages, ROCEV2_MTT_PAGES - 1u);
	/* B's handle names nothing now, for MGMT too */
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_DESTROY_MTT, mtt);
	expect(&r, MNIC_CMD_STAT_BAD_RES, MNIC_SITE_MTT);
}

/* ---- a separate host-memory aperture ----------------------------------------- */

#define HOSTMEM (1u << 20)

static int setup_hostmem(void **state)
{
	(void)state;
	host_init_hostmem(&H, HOSTMEM);
	host_enable(&H);
	return 0;
}

static void test_hostmem_aperture(void **state)
{
	uint64_t pages[B_NPAGES];
	struct mnic_cmd_query_device_out o;
	uint32_t mtt, big;
	struct reply r;

	(void)state;
	ctx_b = new_ctx(&H, CTX_B_UA);
	o = query_device_as(&H, ctx_b);
	assert_int_equal(o.hostmem_size, HOSTMEM);
	mtt = new_mtt(&H, ctx_b, B_IOVA, B_LEN, 12, B_NPAGES);
	/* host-physical addresses are the aperture's: page 0 and pages that
	 * would be the window's driver area are ordinary host memory here */
	pages[0] = 0;
	pages[1] = 0x5000;
	pages[2] = HOSTMEM;              /* but not one past its end */
	pages[3] = HOSTMEM - PAGE;
	r = write_mtt(&H, ctx_b, mtt, 0, B_NPAGES, pages, B_NPAGES);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE);
	big = new_mtt(&H, ctx_b, 0, 0x4000, 13, 2);       /* 8 KiB pages */
	{
		uint64_t two[2] = { 0, HOSTMEM - 0x1000u };

		/* 4 KiB-aligned but not 8: its second half would lie past the end */
		r = write_mtt(&H, ctx_b, big, 0, 2, two, 2);
		expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE);
		two[1] = HOSTMEM - 0x2000u;
		r = write_mtt(&H, ctx_b, big, 0, 2, two, 2);
		expect(&r, MNIC_CMD_STAT_OK, 0);
	}
	pages[2] = 0x3000;
	r = write_mtt(&H, ctx_b, mtt, 0, B_NPAGES, pages, B_NPAGES);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = reg_mr_as(&H, ctx_b, alloc_pd_as(&H, ctx_b), mtt, B_IOVA, B_LEN);
	expect(&r, MNIC_CMD_STAT_OK, 0);
}

/* ---- MTTs a restore recreated ----------------------------------------------- */

/* B's context with a written MTT and an MR over it, dumped; returns the
 * image's length in img, and the MTT's handle. */
static uint32_t dump_b(uint8_t *img, uint32_t cap, uint32_t *len)
{
	struct mnic_cmd_handle_in in = { in_hdr(MNIC_CMD_DUMP_CONTEXT, 0), MNIC_CTX_SELF, 0 };
	struct mnic_cmd_dump_out d;
	uint64_t good[B_NPAGES];
	uint32_t mtt;
	struct reply r;

	ctx_b = new_ctx(&H, CTX_B_UA);
	mtt = new_mtt(&H, ctx_b, B_IOVA, B_LEN, 12, B_NPAGES);
	good_pages(good);
	r = write_mtt(&H, ctx_b, mtt, 0, B_NPAGES, good, B_NPAGES);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = reg_mr_as(&H, ctx_b, alloc_pd_as(&H, ctx_b), mtt, B_IOVA, B_LEN);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = issue_as(&H, ctx_b, &in, sizeof(in), OUT_MAX);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	memcpy(&d, r.out, sizeof(d));
	assert_true(d.image_len <= cap && d.image_len <= OUT_MAX - sizeof(d));
	memcpy(img, r.out + sizeof(d), d.image_len);
	*len = d.image_len;
	return mtt;
}

/* Restore the image into a context of t at B's range; the MTT comes back
 * with its handle, unwritten, its context Stopped. */
static uint16_t restore_b(struct host *t, const uint8_t *img, uint32_t len)
{
	uint8_t in[sizeof(struct mnic_cmd_restore_in) + OUT_MAX];
	struct mnic_cmd_restore_in hd;
	uint16_t ctx = new_ctx(t, CTX_B_UA);
	struct reply r;

	memset(&hd, 0, sizeof(hd));
	hd.hdr = in_hdr(MNIC_CMD_RESTORE_OBJECT, MNIC_RESTORE_IMAGE);
	hd.data_len = len;
	memcpy(in, &hd, sizeof(hd));
	memcpy(in + sizeof(hd), img, len);
	r = issue_as(t, ctx, in, (uint32_t)sizeof(hd) + len, 8);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	assert_int_equal(query_device_as(t, ctx).n_mtt, 1);
	return ctx;
}

static void test_restored_mtt_refill(void **state)
{
	static uint8_t img[OUT_MAX];
	uint64_t pages[B_NPAGES] = { 0x8000, 0x2000, 0x1000, 0x7000 };   /* the target's own */
	uint32_t len, mtt = dump_b(img, sizeof(img), &len);
	uint16_t ctx;
	struct reply r;

	(void)state;
	/* Under a host-memory aperture the engine checks the target's pages
	 * against it, which is the rule: the refill goes in, while the
	 * context is Stopped, and a page past the aperture does not. */
	host_init_hostmem(&T, HOSTMEM);
	host_enable(&T);
	ctx = restore_b(&T, img, len);
	pages[3] = HOSTMEM;
	r = write_mtt(&T, ctx, mtt, 0, B_NPAGES, pages, B_NPAGES);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE);
	pages[3] = 0x7000;
	r = write_mtt(&T, ctx, mtt, 0, B_NPAGES, pages, B_NPAGES);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	host_free(&T);
	/* Without one the issuer's range is the rule, and mgmt has no page
	 * size for a restored MTT: refused, nothing written. */
	host_init(&T);
	host_enable(&T);
	ctx = restore_b(&T, img, len);
	good_pages(pages);
	r = write_mtt(&T, ctx, mtt, 0, B_NPAGES, pages, B_NPAGES);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_MTT_PAGE);
	assert_int_equal(MNIC_SYND_ERRNO(r.syndrome), HAL_ENOTSUP);
	host_free(&T);
}

/* An image whose MR translates through an MTT names no window place: it
 * restores into a context whose range is elsewhere (the target put it
 * where it had room), its IOVA, key and MTT handle kept.  (A physical-mode
 * image at another range is refused: test_tenancy's dump_one_context.) */
static void test_mtt_image_restores_at_any_range(void **state)
{
	static uint8_t img[OUT_MAX];
	uint8_t in[sizeof(struct mnic_cmd_restore_in) + OUT_MAX];
	uint64_t pages[B_NPAGES] = { 0x8000, 0x2000, 0x1000, 0x7000 };
	struct mnic_cmd_restore_in hd;
	uint32_t len, mtt = dump_b(img, sizeof(img), &len);
	uint64_t ua_off, ua_size;
	uint16_t other, ctx;
	struct reply r;

	(void)state;
	assert_int_equal(rocev2_image_ua_range(img, len, &ua_off, &ua_size), 0);
	assert_int_equal(ua_off, CTX_B_UA);
	host_init_hostmem(&T, HOSTMEM);
	host_enable(&T);
	other = new_ctx(&T, CTX_B_UA);   /* B's range is taken on the target */
	ctx = new_ctx(&T, CTX_A_UA);
	memset(&hd, 0, sizeof(hd));
	hd.hdr = in_hdr(MNIC_CMD_RESTORE_OBJECT, MNIC_RESTORE_IMAGE);
	hd.data_len = len;
	memcpy(in, &hd, sizeof(hd));
	memcpy(in + sizeof(hd), img, len);
	r = issue_as(&T, ctx, in, (uint32_t)sizeof(hd) + len, 8);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	assert_int_equal(query_device_as(&T, ctx).n_mtt, 1);
	assert_int_equal(query_device_as(&T, ctx).n_mr, 1);
	assert_int_equal(query_device_as(&T, other).n_mr, 0);
	r = write_mtt(&T, ctx, mtt, 0, B_NPAGES, pages, B_NPAGES);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = by_handle_as(&T, ctx, MNIC_CMD_RESUME_CONTEXT, MNIC_CTX_SELF);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	host_free(&T);
}

/* ---- host Ethernet queues (CREATE/DESTROY_ETHQ) -------------------------- */

static struct reply create_ethq_as(uint16_t ctx, uint32_t buf_mtt, uint32_t ring_mtt, uint64_t ring)
{
	struct mnic_cmd_create_ethq_in in;

	memset(&in, 0, sizeof(in));
	in.hdr = in_hdr(MNIC_CMD_CREATE_ETHQ, 0);
	in.vector = 1;
	in.buf_mtt = buf_mtt;
	in.tx = (struct mnic_queue_desc){ ring, ring + 0x800u, 16, ring_mtt, ring_mtt, 0 };
	in.rx = (struct mnic_queue_desc){ ring + 0x400u, ring + 0x808u, 16, ring_mtt, ring_mtt, 0 };
	return issue_as(&H, ctx, &in, sizeof(in), 8);
}

/* The kernel driver's queues: MNIC_CTX_MGMT only, rings where the issuer
 * may place them, the buffer MTT named and the issuer's (a tenant's MTT,
 * which MGMT may name in general, is refused by the engine), fully
 * written; one pair per NIC; the MTT held while the queues live. */
static void test_netdev_ethq_commands(void **state)
{
	const uint64_t ring = HOST_USER + 0x40000u;
	struct mnic_cmd_simple_in d = { in_hdr(MNIC_CMD_DESTROY_ETHQ, 0) };
	uint64_t p[B_NPAGES];
	uint32_t mgmt_mtt, b_mtt, unwritten;
	struct reply r;

	(void)state;
	ctx_b = new_ctx(&H, CTX_B_UA);
	good_pages(p);
	b_mtt = new_mtt(&H, ctx_b, B_IOVA, B_LEN, 12, B_NPAGES);
	expect((r = write_mtt(&H, ctx_b, b_mtt, 0, B_NPAGES, p, B_NPAGES), &r), MNIC_CMD_STAT_OK, 0);
	mgmt_mtt = new_mtt(&H, MNIC_CTX_MGMT, B_IOVA, B_LEN, 12, B_NPAGES);
	unwritten = new_mtt(&H, MNIC_CTX_MGMT, B_IOVA, B_LEN, 12, B_NPAGES);
	expect((r = write_mtt(&H, MNIC_CTX_MGMT, mgmt_mtt, 0, B_NPAGES, p, B_NPAGES), &r),
	       MNIC_CMD_STAT_OK, 0);
	/* a tenant may not, even naming its own MTT */
	expect((r = create_ethq_as(ctx_b, b_mtt, 0, CTX_B_UA), &r), MNIC_CMD_STAT_NOT_PRIV, MNIC_SITE_PRIV);
	r = issue_as(&H, ctx_b, &d, sizeof(d), 8);
	expect(&r, MNIC_CMD_STAT_NOT_PRIV, MNIC_SITE_PRIV);
	/* no buffer MTT, a stale one, a tenant's, one not written */
	expect((r = create_ethq_as(0, MNIC_MTT_NONE, 0, ring), &r), MNIC_CMD_STAT_BAD_RES, MNIC_SITE_MTT);
	expect((r = create_ethq_as(0, mgmt_mtt + 0x10000u, 0, ring), &r), MNIC_CMD_STAT_BAD_RES,
	       MNIC_SITE_MTT);
	expect((r = create_ethq_as(0, b_mtt, 0, ring), &r), MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_ENGINE);
	expect((r = create_ethq_as(0, unwritten, 0, ring), &r), MNIC_CMD_STAT_BAD_RES_STATE,
	       MNIC_SITE_MTT_COVER);
	/* rings in the driver area (physical mode: the user area only) */
	expect((r = create_ethq_as(0, mgmt_mtt, 0, 0x1000u), &r), MNIC_CMD_STAT_BAD_PARAM,
	       MNIC_SITE_RING_ADDR);
	/* none yet */
	r = issue_as(&H, MNIC_CTX_MGMT, &d, sizeof(d), 8);
	expect(&r, MNIC_CMD_STAT_BAD_PARAM, MNIC_SITE_ENGINE);
	expect((r = create_ethq_as(0, mgmt_mtt, 0, ring), &r), MNIC_CMD_STAT_OK, 0);
	expect((r = create_ethq_as(0, mgmt_mtt, 0, ring), &r), MNIC_CMD_STAT_RES_BUSY, MNIC_SITE_ENGINE);
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_DESTROY_MTT, mgmt_mtt);
	expect(&r, MNIC_CMD_STAT_BAD_RES_STATE, MNIC_SITE_MTT_BUSY);
	r = issue_as(&H, MNIC_CTX_MGMT, &d, sizeof(d), 8);
	expect(&r, MNIC_CMD_STAT_OK, 0);
	r = by_handle_as(&H, MNIC_CTX_MGMT, MNIC_CMD_DESTROY_MTT, mgmt_mtt);
	expect(&r, MNIC_CMD_STAT_OK, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_netdev_ethq_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_page_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_and_destroy_while_used, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_shapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_objects_inside_their_mtt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dealloc_context_frees_mtts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostmem_aperture, setup_hostmem, teardown),
		cmocka_unit_test_setup_teardown(test_restored_mtt_refill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mtt_image_restores_at_any_range, setup, teardown),
	};

	return cmocka_run_group_tests_name("mgmt_mtt", tests, NULL, NULL);
}
