/* libmnic's migration sequence (hostdrv/lib/migration.c) without
 * firmware: the order of calls it refuses, the two-pair peer-override
 * derivation, the user-area transfer step over hand-made device handles
 * (no command), failure reporting (step, pair, device, what to do) and
 * the retry/abort rules past the point of no return, and the host-memory
 * page move over two aperture files (mnic_hostmem_move; the refill's
 * bounds, before any command).  The command steps
 * themselves run against firmware in tests/integration/migrate_posix.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/crc32.h"
#include "libmnic_int.h"

#define AREA 8192u

/* A handle with a user area and nothing else: enough for the transfer
 * step, which is memory, not a command. */
static struct mnic_dev *fake_dev(const char *path, uint64_t user_size, uint8_t fill)
{
	struct mnic_dev *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	strcpy(d->path, path);
	d->backend = MNIC_BACKEND_BAR;
	d->user_off = MNIC_USER_AREA_OFFSET;
	d->user_size = user_size;
	d->user = malloc(user_size);
	assert_non_null(d->user);
	memset(d->user, fill, user_size);
	d->hm_checked = 1;   /* a NIC without host memory (QUERY_DEVICE: hostmem_size 0) */
	d->hm_fd = -1;
	d->db_sock = d->db_ring_fd = d->db_irq_fd = -1;   /* no doorbell channel */
	return d;
}

static void free_dev(struct mnic_dev *d)
{
	free(d->user);
	free(d);
}

/* ---- order of calls ---------------------------------------------------------- */

static void test_order(void **state)
{
	struct mnic_peer_override bad = {.old_dip = 0x0a000002u, .new_dip = 0};
	struct mnic_mig_opts o = {.override = &bad};
	struct mnic_mig m;
	struct mnic_dev *a = fake_dev("a.bar", AREA, 1), *b = fake_dev("b.bar", AREA, 0);

	(void)state;
	assert_int_equal(mnic_mig_begin(NULL, NULL), -EINVAL);
	assert_int_equal(mnic_mig_begin(&m, &o), -EINVAL);   /* old address, no new one */
	assert_int_equal(mnic_mig_begin(&m, NULL), 0);
	assert_int_equal(m.state, MNIC_MIG_SETUP);
	assert_int_equal(m.err.action, MNIC_MIG_ACT_NONE);

	assert_int_equal(mnic_mig_add_pair(&m, NULL, a), -EINVAL);
	assert_int_equal(mnic_mig_add_pair(&m, a, a), -EINVAL);   /* a device onto itself */
	/* nothing added: no step may run, and a refusal changes nothing */
	assert_int_equal(mnic_mig_dump(&m), -EPROTO);
	assert_int_equal(mnic_mig_transfer(&m), -EPROTO);
	assert_int_equal(mnic_mig_restore(&m), -EPROTO);
	assert_int_equal(mnic_mig_resume(&m), -EPROTO);
	assert_int_equal(m.state, MNIC_MIG_SETUP);
	assert_int_equal(m.err.action, MNIC_MIG_ACT_NONE);
	assert_int_equal(m.err.pair, -1);

	/* steps out of order from each state */
	m.n_pairs = 1;
	m.pair[0].src = a;
	m.state = MNIC_MIG_DUMPED;
	assert_int_equal(mnic_mig_dump(&m), -EPROTO);
	assert_int_equal(mnic_mig_restore(&m), -EPROTO);   /* transfer first */
	assert_int_equal(mnic_mig_resume(&m), -EPROTO);
	assert_int_equal(mnic_mig_add_pair(&m, a, b), -EPROTO);
	m.state = MNIC_MIG_TRANSFERRED;
	assert_int_equal(mnic_mig_transfer(&m), -EPROTO);
	assert_int_equal(mnic_mig_resume(&m), -EPROTO);    /* restore first */
	m.state = MNIC_MIG_RESTORED;
	assert_int_equal(mnic_mig_restore(&m), -EPROTO);
	assert_int_equal(m.state, MNIC_MIG_RESTORED);

	/* abort before any resume: nothing dumped here, so nothing to send */
	assert_int_equal(mnic_mig_abort(&m), 0);
	assert_int_equal(m.state, MNIC_MIG_ABORTED);
	assert_int_equal(mnic_mig_abort(&m), 0);           /* nothing left */
	assert_int_equal(mnic_mig_dump(&m), -EPROTO);
	assert_int_equal(mnic_mig_resume(&m), -EPROTO);
	mnic_mig_end(&m);
	free_dev(a);
	free_dev(b);
}

/* ---- peer overrides ---------------------------------------------------------- */

static void set_addr(struct mnic_cmd_query_device_out *q, uint32_t ip, uint8_t mac5)
{
	const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x73, 0x00, mac5};

	q->ipv4 = ip;
	memcpy(q->mac, mac, 6);
}

static void test_overrides(void **state)
{
	struct mnic_peer_override given = {.old_dip = 0x0a000002u, .new_dip = 0x0a000004u,
					   .new_dmac = {0x52, 0x54, 0x00, 0, 0, 4}};
	struct mnic_mig_opts o = {.override = &given};
	struct mnic_peer_override ov;
	const struct mnic_peer_override *r;
	struct mnic_mig m;
	struct mnic_dev *a = fake_dev("a.bar", AREA, 0), *b = fake_dev("b.bar", AREA, 0);

	(void)state;
	/* one pair, no override given: none */
	assert_int_equal(mnic_mig_begin(&m, NULL), 0);
	m.n_pairs = 1;
	assert_null(mnic_mig_override(&m, 0, &ov));
	assert_null(mnic_mig_override(&m, 1, &ov));        /* no such pair */

	/* one pair with the caller's override: a copy of it, kept by begin */
	assert_int_equal(mnic_mig_begin(&m, &o), 0);
	given.new_dip = 0x0a0000ffu;                         /* the caller's copy may change */
	m.n_pairs = 1;
	r = mnic_mig_override(&m, 0, &ov);
	assert_ptr_equal(r, &ov);
	assert_int_equal(ov.old_dip, 0x0a000002u);
	assert_int_equal(ov.new_dip, 0x0a000004u);
	assert_int_equal(ov.new_dmac[5], 4);
	/* and a second pair is refused: two pairs derive their overrides */
	m.n_pairs = 1;
	m.pair[0].src = a;
	m.pair[0].dst = b;
	assert_int_equal(mnic_mig_add_pair(&m, b, a), -EINVAL);
	assert_int_equal(m.n_pairs, 1);
	assert_int_equal(m.state, MNIC_MIG_SETUP);

	/* both ends: A -> D and B -> C.  D's QPs addressed B: they are told C;
	 * C's QPs addressed A: they are told D */
	assert_int_equal(mnic_mig_begin(&m, NULL), 0);
	m.n_pairs = 2;
	set_addr(&m.pair[0].src_info, 0x0a000001u, 1);   /* A */
	set_addr(&m.pair[0].dst_info, 0x0a000004u, 4);   /* D */
	set_addr(&m.pair[1].src_info, 0x0a000002u, 2);   /* B */
	set_addr(&m.pair[1].dst_info, 0x0a000003u, 3);   /* C */
	r = mnic_mig_override(&m, 0, &ov);
	assert_non_null(r);
	assert_int_equal(ov.old_dip, 0x0a000002u);
	assert_int_equal(ov.new_dip, 0x0a000003u);
	assert_int_equal(ov.new_dmac[5], 3);
	assert_int_equal(ov.new_dmac[3], 0x73);
	r = mnic_mig_override(&m, 1, &ov);
	assert_non_null(r);
	assert_int_equal(ov.old_dip, 0x0a000001u);
	assert_int_equal(ov.new_dip, 0x0a000004u);
	assert_int_equal(ov.new_dmac[5], 4);
	assert_null(mnic_mig_override(&m, 2, &ov));
	assert_null(mnic_mig_override(NULL, 0, &ov));
	mnic_mig_end(&m);
	free_dev(a);
	free_dev(b);
}

/* ---- the transfer step, its failure, and what the caller is told --------------------- */

struct seen {
	int calls;
	uint32_t pair;
	enum mnic_mig_step step;
};

static void on_progress(void *arg, const struct mnic_mig *m, uint32_t pair,
			enum mnic_mig_step step)
{
	struct seen *s = arg;

	(void)m;
	s->calls++;
	s->pair = pair;
	s->step = step;
}

static void test_transfer(void **state)
{
	struct seen seen = {0};
	struct mnic_mig_opts o = {.copy_user_area = 1, .progress = on_progress, .arg = &seen};
	struct mnic_mig m;
	struct mnic_dev *a = fake_dev("/x/a.bar", AREA, 0x5a), *b = fake_dev("/x/b.bar", AREA, 0);
	struct mnic_dev *small = fake_dev("/x/small.bar", AREA / 2, 0);
	char msg[512];

	(void)state;
	assert_int_equal(mnic_mig_begin(&m, &o), 0);
	assert_string_equal(mnic_mig_strerror(&m, msg, sizeof(msg)), "");
	m.n_pairs = 1;
	m.pair[0].src = a;
	m.pair[0].dst = b;
	m.state = MNIC_MIG_DUMPED;
	assert_int_equal(mnic_mig_transfer(&m), 0);
	assert_int_equal(m.state, MNIC_MIG_TRANSFERRED);
	assert_int_equal(m.pair[0].user_area_bytes, AREA);
	assert_int_equal(m.pair[0].transferred, 1);
	assert_true(m.pair[0].transfer_ms >= 0);
	assert_memory_equal(b->user, a->user, AREA);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.step, MNIC_MIG_STEP_TRANSFER);

	/* without copy_user_area the step still runs (and reports), copying nothing */
	o.copy_user_area = 0;
	assert_int_equal(mnic_mig_begin(&m, &o), 0);
	m.n_pairs = 1;
	m.pair[0].src = a;
	m.pair[0].dst = small;
	m.state = MNIC_MIG_DUMPED;
	assert_int_equal(mnic_mig_transfer(&m), 0);
	assert_int_equal(m.pair[0].user_area_bytes, 0);
	assert_int_equal(seen.calls, 2);

	/* a target of another geometry: the step fails on pair 1's target */
	o.copy_user_area = 1;
	assert_int_equal(mnic_mig_begin(&m, &o), 0);
	m.n_pairs = 2;
	m.pair[0].src = a;
	m.pair[0].dst = b;
	m.pair[1].src = b;
	m.pair[1].dst = small;
	m.state = MNIC_MIG_DUMPED;
	assert_int_equal(mnic_mig_transfer(&m), -EXDEV);
	assert_int_equal(seen.pair, 1);
	assert_int_equal(m.state, MNIC_MIG_FAILED);
	assert_int_equal(m.err.step, MNIC_MIG_STEP_TRANSFER);
	assert_int_equal(m.err.pair, 1);
	assert_ptr_equal(m.err.dev, small);
	assert_int_equal(m.err.err, -EXDEV);
	assert_int_equal(m.err.action, MNIC_MIG_ACT_ABORT);
	assert_int_equal(m.pair[0].transferred, 1);
	assert_int_equal(m.pair[1].transferred, 0);
	mnic_mig_strerror(&m, msg, sizeof(msg));
	assert_non_null(strstr(msg, "transfer of pair 1 on /x/small.bar failed"));
	assert_non_null(strstr(msg, "mnic_mig_abort resumes them in place"));
	/* a failed step is not continued: only abort */
	assert_int_equal(mnic_mig_transfer(&m), -EPROTO);
	assert_int_equal(mnic_mig_restore(&m), -EPROTO);
	assert_int_equal(mnic_mig_resume(&m), -EPROTO);
	assert_int_equal(m.err.step, MNIC_MIG_STEP_TRANSFER);   /* the refusals kept it */
	assert_int_equal(mnic_mig_abort(&m), 0);
	assert_int_equal(m.state, MNIC_MIG_ABORTED);
	mnic_mig_end(&m);
	free_dev(a);
	free_dev(b);
	free_dev(small);
}

/* ---- past the point of no return ----------------------------------------------------- */

static void test_after_resume(void **state)
{
	struct mnic_mig m;
	struct mnic_dev *c = fake_dev("/x/c.bar", AREA, 0);
	char msg[512];

	(void)state;
	/* pair 0 resumed, then RESUME_CONTEXT failed on pair 1: no abort, retry resume */
	assert_int_equal(mnic_mig_begin(&m, NULL), 0);
	m.n_pairs = 2;
	m.pair[0].resumed = 1;
	m.pair[1].resumed = 1;   /* (the retry below then has nothing to send) */
	m.state = MNIC_MIG_FAILED;
	m.err.step = MNIC_MIG_STEP_RESUME;
	m.err.pair = 1;
	m.err.dev = c;
	m.err.what = "RESUME_CONTEXT";
	m.err.err = -ETIMEDOUT;
	m.err.action = MNIC_MIG_ACT_TARGET;
	mnic_mig_strerror(&m, msg, sizeof(msg));
	assert_non_null(strstr(msg, "resume of pair 1 on /x/c.bar failed: RESUME_CONTEXT: "));
	assert_non_null(strstr(msg, "mnic_mig_resume again"));
	assert_int_equal(mnic_mig_abort(&m), -EBUSY);
	assert_int_equal(m.state, MNIC_MIG_FAILED);
	assert_int_equal(mnic_mig_restore(&m), -EPROTO);
	assert_int_equal(mnic_mig_resume(&m), 0);   /* resumes only what is left */
	assert_int_equal(m.state, MNIC_MIG_RESUMED);
	assert_int_equal(m.err.action, MNIC_MIG_ACT_NONE);
	assert_int_equal(mnic_mig_abort(&m), -EBUSY);
	assert_int_equal(mnic_mig_resume(&m), -EPROTO);
	mnic_mig_end(&m);
	free_dev(c);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(mnic_mig_step_name(MNIC_MIG_STEP_DUMP), "checkpoint");
	assert_string_equal(mnic_mig_step_name(MNIC_MIG_STEP_TRANSFER), "transfer");
	assert_string_equal(mnic_mig_step_name(MNIC_MIG_STEP_RESTORE), "restore");
	assert_string_equal(mnic_mig_step_name(MNIC_MIG_STEP_RESUME), "resume");
	assert_string_equal(mnic_mig_step_name((enum mnic_mig_step)99), "?");
	assert_string_equal(mnic_mig_state_name(MNIC_MIG_TRANSFERRED), "TRANSFERRED");
	assert_string_equal(mnic_mig_state_name(MNIC_MIG_ABORTED), "ABORTED");
	assert_string_equal(mnic_mig_state_name((enum mnic_mig_state)99), "?");
}

/* ---- host memory: an owner's pages onto the target's aperture ------------------ */

#define HM_SIZE (1u << 20)   /* 256 pages */
#define HM_PAGES 20u
#define HM_BASE 0x7f1234560000ull

/* A handle over a host-memory file of HM_SIZE (its page table initialised). */
static struct mnic_dev *hm_dev(char *tmpl)
{
	struct mnic_dev *d = fake_dev("/x/hm.bar", AREA, 0);
	int fd = mkstemp(tmpl);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, HM_SIZE), 0);
	d->hm_fd = fd;
	d->hm_size = HM_SIZE;
	d->hm_table_len = (size_t)mnic_hm_table_pages(HM_SIZE) * 4096u;
	d->hm_table = mmap(NULL, d->hm_table_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(d->hm_table != MAP_FAILED);
	assert_int_equal(mnic_hm_init(d->hm_table, HM_SIZE), 0);
	return d;
}

static void hm_free(struct mnic_dev *d, const char *path)
{
	munmap(d->hm_table, d->hm_table_len);
	close(d->hm_fd);
	unlink(path);
	free_dev(d);
}

/* An image of one MTT record [iova, iova + len) of 4 KiB pages. */
static uint32_t mtt_image(uint8_t *img, uint64_t iova, uint64_t len)
{
	const uint32_t total = MNIC_IMG_HDR_LEN + MNIC_IMG_REC_HDR_LEN + 21u;
	uint8_t *r = img + MNIC_IMG_HDR_LEN;
	uint32_t crc;

	memset(img, 0, total);
	memcpy(img, MNIC_IMG_MAGIC, 8);
	img[8] = MNIC_IMG_VERSION;
	img[12] = 1;                       /* count */
	img[16] = (uint8_t)total;
	r[0] = MNIC_IMG_TYPE_MTT;
	r[2] = 2;                          /* record version */
	r[4] = MNIC_IMG_REC_HDR_LEN + 21u;
	r[8] = 0x01;                       /* handle 0x00010001 */
	r[10] = 0x01;
	for (int i = 0; i < 8; i++) {
		r[12 + i] = (uint8_t)(iova >> (8 * i));
		r[20 + i] = (uint8_t)(len >> (8 * i));
	}
	r[28] = 12;
	crc = crc32c(0, img + MNIC_IMG_CRC_START, total - MNIC_IMG_CRC_START);
	for (int i = 0; i < 4; i++)
		img[20 + i] = (uint8_t)(crc >> (8 * i));
	return total;
}

/* The move copies every page of the owner, in virtual order, onto pages
 * newly taken on the target (other frames: the target's low pages are
 * someone else's); the owner may not have pages there already; a range
 * without its allocator header, or a target without host memory, is
 * refused with nothing taken; unmove hands the target's pages back; an
 * MTT of the image outside the moved range is refused before any
 * command (these handles have none to issue). */
static void test_hostmem_move(void **state)
{
	char sp[] = "/tmp/mnic-hm-src-XXXXXX", dp[] = "/tmp/mnic-hm-dst-XXXXXX";
	struct mnic_dev *src = hm_dev(sp), *dst = hm_dev(dp), *phys = fake_dev("/x/p.bar", AREA, 0);
	uint32_t pfn[HM_PAGES], other[30], free0;
	struct mnic_user_hdr uh;
	struct mnic_hm_move mv;
	uint8_t page[4096], got[4096], img[128];

	(void)state;
	assert_int_equal(mnic_hm_take(src->hm_table, 77, HM_PAGES, 5, pfn), 0);
	assert_int_equal(mnic_hm_take(dst->hm_table, 5, 30, 0, other), 0);
	for (uint32_t v = 0; v < HM_PAGES; v++) {
		memset(page, (int)(v + 1), sizeof(page));
		if (v == 0) {
			memset(&uh, 0, sizeof(uh));
			uh.magic = MNIC_USER_HDR_MAGIC;
			uh.version = MNIC_USER_HDR_VERSION;
			uh.base = HM_BASE;
			uh.size = HM_PAGES * 4096ull;
			memcpy(page, &uh, sizeof(uh));
		}
		assert_int_equal(pwrite(src->hm_fd, page, sizeof(page), (off_t)pfn[v] * 4096), 4096);
	}
	free0 = dst->hm_table->free_pages;
	assert_int_equal(mnic_hostmem_move(src, phys, 77, &mv), -EXDEV);
	assert_int_equal(mnic_hostmem_move(src, dst, 77, &mv), 0);
	assert_int_equal(mv.npages, HM_PAGES);
	assert_int_equal(mv.base, HM_BASE);
	assert_int_equal(mv.same_frames, 0);
	assert_int_equal(dst->hm_table->free_pages, free0 - HM_PAGES);
	for (uint32_t v = 0; v < HM_PAGES; v++) {
		assert_int_equal(pread(src->hm_fd, page, sizeof(page), (off_t)pfn[v] * 4096), 4096);
		assert_int_equal(pread(dst->hm_fd, got, sizeof(got), (off_t)mv.pfn[v] * 4096), 4096);
		assert_memory_equal(got, page, sizeof(page));
		assert_true(mv.pfn[v] != pfn[v]);
	}
	/* the refill's bounds: an MTT below the range, or running past it */
	assert_int_equal(mnic_hostmem_refill(dst, &mv, img, mtt_image(img, HM_BASE - 4096, 8192)),
			 -EFAULT);
	assert_int_equal(mnic_hostmem_refill(dst, &mv, img,
					     mtt_image(img, HM_BASE + 4096, HM_PAGES * 4096ull)),
			 -EFAULT);
	assert_int_equal(mv.mtts, 0);
	{
		struct mnic_hm_move again;

		assert_int_equal(mnic_hostmem_move(src, dst, 77, &again), -EEXIST);
		assert_int_equal(dst->hm_table->free_pages, free0 - HM_PAGES);
	}
	mnic_hostmem_unmove(dst, &mv);
	assert_int_equal(dst->hm_table->free_pages, free0);
	assert_null(mv.pfn);
	/* no allocator header in the range's first page: nothing taken */
	memset(page, 0, sizeof(page));
	assert_int_equal(pwrite(src->hm_fd, page, sizeof(page), (off_t)pfn[0] * 4096), 4096);
	assert_int_equal(mnic_hostmem_move(src, dst, 77, &mv), -EUCLEAN);
	assert_int_equal(dst->hm_table->free_pages, free0);
	/* an owner with no pages: nothing to move */
	assert_int_equal(mnic_hostmem_move(src, dst, 78, &mv), 0);
	assert_int_equal(mv.npages, 0);
	hm_free(src, sp);
	hm_free(dst, dp);
	free_dev(phys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),    cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_transfer), cmocka_unit_test(test_after_resume),
		cmocka_unit_test(test_names),    cmocka_unit_test(test_hostmem_move),
	};

	return cmocka_run_group_tests_name("libmnic_mig", tests, NULL, NULL);
}
