/* libmnic without firmware: the mailbox chain builder and output
 * collector (mnic/cmd.h layouts), the offline image parser
 * (docs/migration-image.md), the user-area allocator, CQ polling by owner
 * phase against a hand-written ring (mnic/queues.h), error mapping and
 * names, the library's own refusals with their reasons (mnic_reg_mr of a
 * buffer outside the handle's memory without a module to pin it), and
 * mnicctl's argument parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/crc32.h"
#include "libmnic_int.h"
#include "mnicctl.h"

/* ---- mailbox chains ------------------------------------------------------ */

#define DRV_SIZE MNIC_DRIVER_AREA_SIZE

static uint8_t *drv_area(void)
{
	uint8_t *d = malloc(DRV_SIZE);

	assert_non_null(d);
	memset(d, 0xee, DRV_SIZE);   /* a builder that forgets a field shows */
	return d;
}

static const struct mnic_cmd_mailbox *mbox(const uint8_t *drv, uint64_t addr)
{
	assert_true(addr >= MNIC_CMD_MBOX_AREA && addr + MNIC_CMD_MBOX_SIZE <= DRV_SIZE);
	assert_int_equal((addr - MNIC_CMD_MBOX_AREA) % MNIC_CMD_MBOX_SIZE, 0);
	return (const struct mnic_cmd_mailbox *)(drv + addr);
}

/* Walk a chain as the firmware would, gather its data, check framing. */
static void walk_chain(const uint8_t *drv, uint64_t first, uint32_t blocks, uint8_t token,
		       uint8_t *data)
{
	uint64_t addr = first;

	for (uint32_t i = 0; i < blocks; i++) {
		const struct mnic_cmd_mailbox *mb;

		assert_true(addr != 0);
		mb = mbox(drv, addr);
		assert_int_equal(mb->block_num, i);
		assert_int_equal(mb->token, token);
		assert_int_equal(mb->ctrl_signature, 0);
		assert_int_equal(mb->signature, 0);
		if (data)
			memcpy(data + i * MNIC_CMD_MBOX_DATA, mb->data, MNIC_CMD_MBOX_DATA);
		addr = mb->next;
	}
	assert_true(addr == 0);   /* exactly `blocks` blocks */
}

static void check_build(uint32_t in_len, uint32_t out_len)
{
	uint8_t *drv = drv_area();
	uint8_t *in = malloc(in_len), *got = calloc(1, in_len + MNIC_CMD_MBOX_DATA);
	struct mnic_cmdq_entry e;
	uint32_t in_blocks = mnic_cmdq_blocks(in_len), out_blocks = mnic_cmdq_blocks(out_len);

	for (uint32_t i = 0; i < in_len; i++)
		in[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(mnic_cmdq_build(drv, DRV_SIZE, &e, in, in_len, out_len, 0x5a), 0);
	assert_int_equal(e.type, MNIC_CMD_TYPE_PCIE);
	assert_int_equal(e.in_len, in_len);
	assert_int_equal(e.out_len, out_len);
	assert_int_equal(e.token, 0x5a);
	assert_int_equal(e.status_own, 0);   /* the caller hands it over */
	assert_memory_equal(e.in_inline, in, in_len < 16 ? in_len : 16);
	if (in_blocks) {
		walk_chain(drv, e.in_mbox, in_blocks, 0x5a, got);
		assert_memory_equal(got, in + 16, in_len - 16);
	} else {
		assert_true(e.in_mbox == 0);
	}
	if (out_blocks) {
		walk_chain(drv, e.out_mbox, out_blocks, 0x5a, NULL);
		/* the output chain does not overlap the input chain */
		assert_true(e.out_mbox >= MNIC_CMD_MBOX_AREA + (uint64_t)in_blocks * MNIC_CMD_MBOX_SIZE);
	} else {
		assert_true(e.out_mbox == 0);
	}
	free(in);
	free(got);
	free(drv);
}

static void test_chain_sizes(void **state)
{
	static const uint32_t lens[] = {8, 15, 16, 17, 528, 529, 1040, 4096, 65536,
					MNIC_CMD_MAX_LEN};

	(void)state;
	assert_int_equal(mnic_cmdq_blocks(16), 0);
	assert_int_equal(mnic_cmdq_blocks(17), 1);
	assert_int_equal(mnic_cmdq_blocks(528), 1);
	assert_int_equal(mnic_cmdq_blocks(529), 2);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		check_build(lens[i], 8);
		check_build(8, lens[i]);
	}
	check_build(4096, 65536);
}

static void test_chain_refusals(void **state)
{
	uint8_t *drv = drv_area();
	uint8_t in[64] = {0};
	uint8_t *big = calloc(1, MNIC_CMD_MAX_LEN);
	struct mnic_cmdq_entry e;

	(void)state;
	assert_int_equal(mnic_cmdq_build(drv, DRV_SIZE, &e, in, 7, 8, 1), -EINVAL);
	assert_int_equal(mnic_cmdq_build(drv, DRV_SIZE, &e, in, 8, 7, 1), -EINVAL);
	assert_int_equal(mnic_cmdq_build(drv, DRV_SIZE, &e, in, 8, MNIC_CMD_MAX_LEN + 1, 1), -EINVAL);
	assert_int_equal(mnic_cmdq_build(drv, DRV_SIZE, &e, NULL, 8, 8, 1), -EINVAL);
	/* 1 MiB in + 1 MiB out needs 4096 blocks; the driver area holds fewer */
	assert_int_equal(mnic_cmdq_build(drv, DRV_SIZE, &e, big, MNIC_CMD_MAX_LEN, MNIC_CMD_MAX_LEN, 1),
			 -E2BIG);
	/* a driver area too small for one block */
	assert_int_equal(mnic_cmdq_build(drv, MNIC_CMD_MBOX_AREA + 100, &e, in, 64, 8, 1), -E2BIG);
	free(big);
	free(drv);
}

static void test_collect(void **state)
{
	uint8_t *drv = drv_area();
	uint8_t in[40] = {1, 2, 3};
	const uint32_t out_len = 16 + 512 + 100;
	uint8_t want[16 + 512 + 100], got[sizeof(want)];
	struct mnic_cmdq_entry e;
	struct mnic_cmd_mailbox *mb;

	(void)state;
	for (uint32_t i = 0; i < out_len; i++)
		want[i] = (uint8_t)(i ^ 0x3c);
	assert_int_equal(mnic_cmdq_build(drv, DRV_SIZE, &e, in, sizeof(in), out_len, 9), 0);
	/* play the device: output inline + two output blocks */
	memcpy(e.out_inline, want, 16);
	mb = (struct mnic_cmd_mailbox *)(drv + e.out_mbox);
	memcpy(mb->data, want + 16, 512);
	mb = (struct mnic_cmd_mailbox *)(drv + mb->next);
	memcpy(mb->data, want + 16 + 512, 100);
	/* a hostile device rewrites next: the collector reads its own blocks */
	((struct mnic_cmd_mailbox *)(drv + e.out_mbox))->next = 0xdeadbeef;
	memset(got, 0, sizeof(got));
	assert_int_equal(mnic_cmdq_collect(drv, DRV_SIZE, &e, sizeof(in), got, out_len), 0);
	assert_memory_equal(got, want, out_len);
	free(drv);
}

/* ---- image parser ---------------------------------------------------------- */

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

/* A valid image (version 3): MTT, PD, MR, CQ, QP (record version 4) with
 * a migration key and 2 track entries. */
static size_t make_image(uint8_t *img)
{
	size_t off = MNIC_IMG_HDR_LEN;
	uint32_t count = 0;
	const struct { uint16_t type; uint32_t payload; uint32_t handle; } recs[] = {
		{6, 21, 0x10000}, {0, 4, 0x10000}, {1, 32, 0x101}, {2, 37, 0x10001},
		{4, 292 + 32 + 2 * 15, 0x1000},
	};

	memset(img, 0, 4096);
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		uint8_t *r = img + off;

		put16(r, recs[i].type);
		put16(r + 2, recs[i].type == 4 ? 4 : 2);    /* QP records: version 4 */
		put32(r + 4, 8 + recs[i].payload);
		put32(r + 8, recs[i].handle);
		if (recs[i].type == 4) {
			r[8 + 96] = 2;     /* has a migration key */
			r[8 + 148] = 2;    /* two in-flight send WQEs */
		}
		off += 8 + recs[i].payload;
		count++;
	}
	memcpy(img, MNIC_IMG_MAGIC, 8);
	put16(img + 8, MNIC_IMG_VERSION);
	put16(img + 10, 0);
	put32(img + 12, count);
	put32(img + 16, (uint32_t)off);
	put32(img + 20, crc32c(0, img + 24, off - 24));
	return off;
}

static int count_cb(const struct mnic_img_rec *r, const uint8_t *payload, void *arg)
{
	uint32_t *n = arg;

	(void)payload;
	n[r->type]++;
	return 0;
}

static void test_image_valid(void **state)
{
	uint8_t img[4096];
	size_t len = make_image(img);
	struct mnic_img_hdr h;
	uint32_t n[MNIC_IMG_TYPES] = {0};
	char err[128];

	(void)state;
	assert_int_equal(mnic_img_parse(img, len, &h, count_cb, n, err, sizeof(err)), 0);
	assert_int_equal(h.count, 5);
	assert_int_equal(h.total, len);
	assert_int_equal(h.crc, h.crc_computed);
	assert_int_equal(n[0], 1);
	assert_int_equal(n[1], 1);
	assert_int_equal(n[2], 1);
	assert_int_equal(n[4], 1);
	assert_int_equal(n[6], 1);
	assert_string_equal(mnic_img_type_name(4), "QP");
	assert_string_equal(mnic_img_type_name(6), "MTT");
	assert_string_equal(mnic_img_type_name(5), "?");   /* no record has type 5 */
}

static void expect_refusal(uint8_t *img, size_t len, int code, const char *needle)
{
	char err[160];

	assert_int_equal(mnic_img_parse(img, len, NULL, NULL, NULL, err, sizeof(err)), code);
	assert_non_null(strstr(err, needle));
}

static void refresh_crc(uint8_t *img, size_t len)
{
	put32(img + 20, crc32c(0, img + 24, len - 24));
}

static void test_image_corrupt(void **state)
{
	uint8_t img[4096];
	size_t len;

	(void)state;
	len = make_image(img);
	expect_refusal(img, 10, -EINVAL, "truncated");
	expect_refusal(img, len - 1, -EINVAL, "truncated");
	img[0] = 'X';
	expect_refusal(img, len, -EILSEQ, "magic");
	len = make_image(img);
	put16(img + 8, 1);
	expect_refusal(img, len, -ERANGE, "version 1");
	len = make_image(img);
	put16(img + 10, 1);
	expect_refusal(img, len, -EINVAL, "flags");
	/* every single flipped payload bit is caught by the CRC */
	len = make_image(img);
	for (size_t bit = 24 * 8; bit < len * 8; bit += 37) {
		img[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		expect_refusal(img, len, -EBADMSG, "CRC32C");
		img[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	/* framing errors under a correct CRC */
	len = make_image(img);
	put32(img + 12, 6);
	expect_refusal(img, len, -EINVAL, "count 6");
	len = make_image(img);
	put16(img + MNIC_IMG_HDR_LEN, 5);   /* QP_SRQ: a statistic, never a record */
	refresh_crc(img, len);
	expect_refusal(img, len, -EINVAL, "unknown type 5");
	len = make_image(img);
	put16(img + MNIC_IMG_HDR_LEN + 2, 1);   /* an MTT record of version 1 */
	refresh_crc(img, len);
	expect_refusal(img, len, -ERANGE, "version 1");
	len = make_image(img);
	put16(img + MNIC_IMG_HDR_LEN, 9);   /* first record: unknown type */
	refresh_crc(img, len);
	expect_refusal(img, len, -EINVAL, "unknown type 9");
	len = make_image(img);
	put32(img + MNIC_IMG_HDR_LEN + 4, 13);   /* MTT record 13 bytes long */
	refresh_crc(img, len);
	expect_refusal(img, len, -EINVAL, "length 13");
	len = make_image(img);
	put32(img + MNIC_IMG_HDR_LEN + 4, 0xfffffff0u);   /* past the end */
	refresh_crc(img, len);
	expect_refusal(img, len, -EINVAL, "outside the image");
	/* QP: key flag cleared but the key bytes still there */
	len = make_image(img);
	img[MNIC_IMG_HDR_LEN + 29 + 12 + 40 + 45 + 8 + 96] = 0;
	refresh_crc(img, len);
	expect_refusal(img, len, -EINVAL, "payload needs");
	/* trailing garbage after total */
	len = make_image(img);
	expect_refusal(img, len + 5, -EINVAL, "trailing");
}

/* ---- allocator -------------------------------------------------------------- */

#define UA_OFF MNIC_USER_AREA_OFFSET
#define UA_SIZE (256u * 1024u)

static void test_alloc(void **state)
{
	uint8_t *ua = calloc(1, UA_SIZE), *copy = malloc(UA_SIZE);
	const struct mnic_user_hdr *h = (const void *)ua;
	uint64_t a, b, c, d;

	(void)state;
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 100, 0, &a), 0);
	assert_int_equal(h->magic, MNIC_USER_HDR_MAGIC);
	assert_int_equal(h->version, MNIC_USER_HDR_VERSION);
	assert_true(a >= UA_OFF + MNIC_USER_HDR_SIZE + MNIC_UMEM_BLK_SIZE);   /* never over the header */
	assert_int_equal(a % 64, 0);
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 10, 4096, &b), 0);
	assert_int_equal(b % 4096, 0);
	assert_true(b >= a + 100);
	memset(ua + (b - UA_OFF), 0x77, 10);
	/* bad sizes and alignments */
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 0, 0, &c), -EINVAL);
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 8, 24, &c), -EINVAL);
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 8, 4, &c), -EINVAL);
	/* exhaustion, including a size that would wrap */
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, UA_SIZE, 8, &c), -ENOMEM);
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, UINT64_MAX - 4, 8, &c), -ENOMEM);
	/* the state lives in the area: a copy continues where the original was */
	memcpy(copy, ua, UA_SIZE);
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 64, 64, &c), 0);
	assert_int_equal(mnic_umem_alloc(copy, UA_OFF, UA_SIZE, 64, 64, &d), 0);
	assert_true(c == d);
	assert_int_equal(copy[b - UA_OFF], 0x77);
	/* a copy from an area of another geometry is refused, not trusted */
	assert_int_equal(mnic_umem_alloc(copy, UA_OFF, UA_SIZE / 2, 64, 64, &d), -EUCLEAN);
	/* a corrupt header is refused */
	((struct mnic_user_hdr *)copy)->in_use = UA_SIZE + 1;
	assert_int_equal(mnic_umem_alloc(copy, UA_OFF, UA_SIZE, 64, 64, &d), -EUCLEAN);
	/* reset starts over */
	assert_int_equal(mnic_umem_reset(ua, UA_OFF, UA_SIZE), 0);
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 100, 0, &c), 0);
	assert_true(c == a);
	free(ua);
	free(copy);
}

static struct mnic_mem_stats stats_of(uint8_t *ua)
{
	struct mnic_mem_stats st;

	assert_int_equal(mnic_umem_stats(ua, UA_OFF, UA_SIZE, &st), 0);
	return st;
}

/* Frees merge with both neighbours: the area ends as one free block, and
 * the space a freed block leaves is reused (first fit). */
static void test_alloc_free_coalesce(void **state)
{
	uint8_t *ua = calloc(1, UA_SIZE);
	uint64_t x[4], y, whole;
	struct mnic_mem_stats st;

	(void)state;
	assert_int_equal(mnic_umem_reset(ua, UA_OFF, UA_SIZE), 0);
	st = stats_of(ua);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.free_blocks, 1);
	whole = st.largest_free;
	assert_int_equal(whole, UA_SIZE - MNIC_USER_HDR_SIZE - MNIC_UMEM_BLK_SIZE);
	for (int i = 0; i < 4; i++)
		assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 1000, 64, &x[i]), 0);
	st = stats_of(ua);
	assert_int_equal(st.allocs, 4);
	assert_int_equal(st.in_use, 4 * (1024 + MNIC_UMEM_BLK_SIZE));
	/* free 1 then 3: two holes; 2 then merges 1, 2, 3 into one */
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, x[1]), 0);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, x[3]), 0);   /* merges with the tail */
	assert_int_equal(stats_of(ua).free_blocks, 2);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, x[2]), 0);
	assert_int_equal(stats_of(ua).free_blocks, 1);
	/* a hole is reused: the first fit is where x[1] was */
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 500, 64, &y), 0);
	assert_true(y == x[1]);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, y), 0);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, x[0]), 0);
	st = stats_of(ua);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.allocs, 0);
	assert_int_equal(st.free_blocks, 1);
	assert_true(st.largest_free == whole);
	/* the whole area in one allocation once everything came back */
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, whole, 64, &y), 0);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, y), 0);
	free(ua);
}

/* Frees that are not of an allocation are refused and change nothing:
 * twice, inside a payload, a forged header in application data. */
static void test_alloc_free_refusals(void **state)
{
	uint8_t *ua = calloc(1, UA_SIZE);
	uint64_t a, b;
	struct mnic_umem_blk *forged;

	(void)state;
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 4096, 64, &a), 0);
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 64, 64, &b), 0);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, a + 64), -EINVAL);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, a + 3), -EINVAL);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, UA_OFF), -EINVAL);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, UA_OFF + UA_SIZE), -EINVAL);
	/* a header written by the application inside a's payload */
	forged = (struct mnic_umem_blk *)(ua + (a - UA_OFF) + 1024);
	forged->magic = MNIC_UMEM_BLK_USED;
	forged->size = 128;
	forged->prev_size = 64;
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, a + 1024 + 64), -EUCLEAN);
	assert_int_equal(stats_of(ua).allocs, 2);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, b), 0);
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, b), -EINVAL);   /* double free */
	assert_int_equal(mnic_umem_free(ua, UA_OFF, UA_SIZE, a), 0);
	assert_int_equal(stats_of(ua).in_use, 0);
	/* a corrupt block is found by the walk */
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 64, 64, &a), 0);
	((struct mnic_umem_blk *)(ua + (a - UA_OFF) - MNIC_UMEM_BLK_SIZE))->size = 3;
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 64, 64, &b), -EUCLEAN);
	free(ua);
}

/* 10,000 objects' memory made and returned in a shuffled order, sizes
 * and alignments as rings (4 KiB aligned), doorbell records (64) and MRs:
 * the figure returns to where it started and the area to one block. */
static void test_alloc_churn(void **state)
{
	enum { N = 10000, LIVE = 64 };
	const uint64_t size = 16u << 20;
	uint8_t *ua = calloc(1, size);
	uint64_t live[LIVE] = {0}, seed = 12345;
	struct mnic_mem_stats st0, st;
	int made = 0;

	(void)state;
	assert_int_equal(mnic_umem_stats(ua, UA_OFF, size, &st0), 0);
	while (made < N) {
		uint32_t slot, r;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		r = (uint32_t)(seed >> 33);
		slot = r % LIVE;
		if (live[slot]) {
			assert_int_equal(mnic_umem_free(ua, UA_OFF, size, live[slot]), 0);
			live[slot] = 0;
			continue;
		}
		uint64_t len = (r >> 8) % 3 == 0 ? 64 : (r >> 8) % 3 == 1 ? 512u << (r % 6) : 1 + r % 100000;
		uint64_t align = (r >> 8) % 3 == 1 ? 4096 : 64;

		assert_int_equal(mnic_umem_alloc(ua, UA_OFF, size, len, align, &live[slot]), 0);
		assert_int_equal(live[slot] % align, 0);
		memset(ua + (live[slot] - UA_OFF), 0xa5, len);   /* never over a neighbour's tag */
		made++;
	}
	for (int i = 0; i < LIVE; i++)
		if (live[i])
			assert_int_equal(mnic_umem_free(ua, UA_OFF, size, live[i]), 0);
	assert_int_equal(mnic_umem_stats(ua, UA_OFF, size, &st), 0);
	assert_true(st.in_use == st0.in_use);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.allocs, 0);
	assert_int_equal(st.free_blocks, 1);
	assert_true(st.largest_free == st0.largest_free);
	free(ua);
}

/* Memory bound to an object is freed by (kind, handle) alone, as
 * mnicctl destroy in another process does; the MTTs are handed back. */
static void test_alloc_bind_release(void **state)
{
	uint8_t *ua = calloc(1, UA_SIZE);
	uint64_t ring, db, other;
	uint32_t mtts[4], n = 9;

	(void)state;
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 8192, 4096, &ring), 0);
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 64, 64, &db), 0);
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 64, 64, &other), 0);
	assert_int_equal(mnic_umem_bind(ua, UA_OFF, UA_SIZE, ring, MNIC_OBJ_QP, 0x42, 7), 0);
	assert_int_equal(mnic_umem_bind(ua, UA_OFF, UA_SIZE, db, MNIC_OBJ_QP, 0x42, 0), 0);
	assert_int_equal(mnic_umem_bind(ua, UA_OFF, UA_SIZE, other, MNIC_OBJ_CQ, 0x42, 0), 0);
	assert_int_equal(mnic_umem_bind(ua, UA_OFF, UA_SIZE, ring + 64, MNIC_OBJ_QP, 1, 0), -EINVAL);
	/* nothing of another object, nothing of kind NONE */
	assert_int_equal(mnic_umem_release(ua, UA_OFF, UA_SIZE, MNIC_OBJ_QP, 0x43, mtts, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(mnic_umem_release(ua, UA_OFF, UA_SIZE, MNIC_OBJ_NONE, 0, mtts, 4, &n), 0);
	assert_int_equal(mnic_umem_release(ua, UA_OFF, UA_SIZE, MNIC_OBJ_QP, 0x42, mtts, 4, &n), 2);
	assert_int_equal(n, 1);
	assert_int_equal(mtts[0], 7);
	assert_int_equal(stats_of(ua).allocs, 1);   /* the CQ's stays */
	assert_int_equal(mnic_umem_release(ua, UA_OFF, UA_SIZE, MNIC_OBJ_CQ, 0x42, mtts, 4, &n), 1);
	assert_int_equal(stats_of(ua).in_use, 0);
	assert_int_equal(stats_of(ua).free_blocks, 1);
	free(ua);
}

/* The lock word of a process that died inside the allocator is taken over. */
static void test_alloc_dead_holder(void **state)
{
	uint8_t *ua = calloc(1, UA_SIZE);
	uint64_t a;
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(mnic_umem_reset(ua, UA_OFF, UA_SIZE), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	((struct mnic_user_hdr *)ua)->lock = (uint32_t)pid;   /* a holder that is gone */
	assert_int_equal(mnic_umem_alloc(ua, UA_OFF, UA_SIZE, 64, 64, &a), 0);
	assert_int_equal(((struct mnic_user_hdr *)ua)->lock, 0);
	free(ua);
}

/* ---- host-memory page table ------------------------------------------------------- */

static int every_owner_gone(uint32_t owner)
{
	return owner == 4242;
}

/* Pages of the aperture: the table's own pages are never handed out; a
 * take is all or nothing; shuffled pages are distinct and not in order;
 * the owner's pages are found again by virtual index; release and the
 * sweep of gone owners return them. */
static void test_hostmem_table(void **state)
{
	const uint64_t size = 4u << 20;   /* 1024 pages */
	struct mnic_hm_hdr *h = calloc(1, size);
	uint32_t tp = mnic_hm_table_pages(size), npages = (uint32_t)(size / 4096);
	uint32_t *pfn = calloc(npages, sizeof(*pfn)), *again = calloc(npages, sizeof(*again));
	uint8_t *seen = calloc(npages, 1);
	uint32_t jumps = 0, free0;

	(void)state;
	assert_int_equal(tp, 3);   /* 64 + 8 x 1024 bytes */
	assert_int_equal(mnic_hm_init(h, size), 0);
	assert_int_equal(mnic_hm_init(h, size), 0);   /* a second process: kept */
	assert_int_equal(mnic_hm_init(h, size / 2), -EUCLEAN);   /* another geometry */
	free0 = h->free_pages;
	assert_int_equal(free0, npages - tp);
	/* refusals */
	assert_int_equal(mnic_hm_take(h, 0, 1, 0, pfn), -EINVAL);
	assert_int_equal(mnic_hm_take(h, MNIC_HM_RESERVED, 1, 0, pfn), -EINVAL);
	assert_int_equal(mnic_hm_take(h, 7, free0 + 1, 0, pfn), -ENOMEM);
	assert_int_equal(h->free_pages, free0);   /* nothing taken */
	/* in order: the lowest free pages after the table */
	assert_int_equal(mnic_hm_take(h, 7, 10, 0, pfn), 0);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(pfn[i], tp + i);
	/* shuffled */
	assert_int_equal(mnic_hm_take(h, 4242, 500, 99, pfn), 0);
	for (uint32_t i = 0; i < 500; i++) {
		assert_true(pfn[i] >= tp + 10 && pfn[i] < npages);
		assert_int_equal(seen[pfn[i]], 0);
		seen[pfn[i]] = 1;
		if (i && pfn[i] != pfn[i - 1] + 1)
			jumps++;
	}
	assert_true(jumps > 400);
	assert_int_equal(mnic_hm_find(h, 4242, again, npages), 500);
	assert_memory_equal(again, pfn, 500 * sizeof(*pfn));
	assert_int_equal(mnic_hm_find(h, 4242, again, 499), -E2BIG);
	assert_int_equal(mnic_hm_find(h, 8, again, npages), 0);
	assert_int_equal(h->free_pages, free0 - 510);
	/* a corrupt table (two pages claim one virtual slot) is refused */
	((struct mnic_hm_page *)(h + 1))[pfn[1]].vpage = 0;
	assert_int_equal(mnic_hm_find(h, 4242, again, npages), -EUCLEAN);
	((struct mnic_hm_page *)(h + 1))[pfn[1]].vpage = 1;
	/* the sweep frees the gone owner's pages only */
	assert_int_equal(mnic_hm_release(h, 0, every_owner_gone), 500);
	assert_int_equal(h->free_pages, free0 - 10);
	assert_int_equal(mnic_hm_release(h, 7, NULL), 10);
	assert_int_equal(h->free_pages, free0);
	assert_int_equal(mnic_hm_release(h, 7, NULL), 0);
	free(h);
	free(pfn);
	free(again);
	free(seen);
}

/* ---- CQ polling ------------------------------------------------------------- */

static void produce(struct mnic_cqe *ring, uint32_t size, uint32_t pi, uint64_t wr_id)
{
	struct mnic_cqe *c = &ring[pi & (size - 1)];

	c->wr_id = wr_id;
	c->byte_len = (uint32_t)wr_id * 10;
	c->owner = MNIC_CQE_OWNER(pi, size);
}

static void test_cq_poll(void **state)
{
	struct mnic_cqe ring[4], out[8];
	uint32_t ci = 0, pi = 0;

	(void)state;
	memset(ring, 0, sizeof(ring));   /* zeroed: owner 0, first pass wants 1 */
	assert_int_equal(mnic_cq_ring_poll(ring, 4, &ci, 8, out), 0);
	produce(ring, 4, pi++, 1);
	produce(ring, 4, pi++, 2);
	produce(ring, 4, pi++, 3);
	assert_int_equal(mnic_cq_ring_poll(ring, 4, &ci, 2, out), 2);   /* n limits */
	assert_int_equal(out[0].wr_id, 1);
	assert_int_equal(out[1].wr_id, 2);
	assert_int_equal(mnic_cq_ring_poll(ring, 4, &ci, 8, out), 1);
	assert_int_equal(out[0].wr_id, 3);
	assert_int_equal(out[0].byte_len, 30);
	assert_int_equal(ci, 3);
	/* wrap: slots 3, 0, 1 on the second pass (owner 0) */
	produce(ring, 4, pi++, 4);
	produce(ring, 4, pi++, 5);
	produce(ring, 4, pi++, 6);
	assert_int_equal(mnic_cq_ring_poll(ring, 4, &ci, 8, out), 3);
	assert_int_equal(out[0].wr_id, 4);
	assert_int_equal(out[2].wr_id, 6);
	/* slot 2 still holds CQE 3 from the first pass: not new */
	assert_int_equal(mnic_cq_ring_poll(ring, 4, &ci, 8, out), 0);
	assert_int_equal(ci, 6);
	/* bad rings */
	assert_int_equal(mnic_cq_ring_poll(ring, 3, &ci, 8, out), -EINVAL);
	assert_int_equal(mnic_cq_ring_poll(NULL, 4, &ci, 8, out), -EINVAL);
}

/* ---- errors and names ----------------------------------------------------------- */

static void test_errors(void **state)
{
	struct mnic_cmd_result r;
	char buf[256];

	(void)state;
	assert_string_equal(mnic_opcode_name(MNIC_CMD_QUERY_DEVICE), "QUERY_DEVICE");
	assert_string_equal(mnic_opcode_name(0xb01), "RESTORE_OBJECT");
	assert_string_equal(mnic_opcode_name(0x999), "UNKNOWN");
	assert_string_equal(mnic_status_name(MNIC_CMD_STAT_BAD_PARAM), "BAD_PARAM");
	assert_string_equal(mnic_delivery_name(MNIC_CMD_DELIV_TOKEN_ERR), "TOKEN_ERR");
	assert_string_equal(mnic_wc_status_name(MNIC_WC_RETRY_EXC_ERR), "RETRY_EXC_ERR");
	assert_string_equal(mnic_qp_state_name(3), "RTS");
	assert_string_equal(mnic_qp_state_name(99), "?");
	/* the syndrome's errno wins; without one the status decides */
	assert_int_equal(mnic_errno_of_status(MNIC_CMD_STAT_OK, 0), 0);
	assert_int_equal(mnic_errno_of_status(MNIC_CMD_STAT_BAD_RES, MNIC_SYND(17, 3)), -EEXIST);
	assert_int_equal(mnic_errno_of_status(MNIC_CMD_STAT_BAD_PARAM, 0), -EINVAL);
	assert_int_equal(mnic_errno_of_status(MNIC_CMD_STAT_BAD_OUTPUT_LEN, MNIC_SYND(28, 1)),
			 -ENOSPC);
	assert_int_equal(mnic_errno_of_status(0x77, 0), -EIO);
	memset(&r, 0, sizeof(r));
	r.opcode = MNIC_CMD_CREATE_QP;
	r.layer = MNIC_ERR_STATUS;
	r.status = MNIC_CMD_STAT_BAD_PARAM;
	r.syndrome = MNIC_SYND(22, 4);
	mnic_strerror_result(&r, buf, sizeof(buf));
	assert_non_null(strstr(buf, "CREATE_QP"));
	assert_non_null(strstr(buf, "BAD_PARAM"));
	assert_non_null(strstr(buf, "0x00160004"));
	assert_non_null(strstr(buf, "EINVAL at check RESERVED"));   /* site 4: a reserved field */
	r.layer = MNIC_ERR_DELIVERY;
	r.delivery = MNIC_CMD_DELIV_BAD_BLOCK_NUMBER;
	mnic_strerror_result(&r, buf, sizeof(buf));
	assert_non_null(strstr(buf, "BAD_BLOCK_NUMBER"));
}

/* mnic_reg_mr of memory the handle does not own, refused by the library
 * before any command (none could be sent: the handle has no transport)
 * unless a module pins it (kmem mode); the reason follows the error. */
static void test_reg_mr_outside(void **state)
{
	struct mnic_dev *dev = calloc(1, sizeof(*dev));
	struct mnic_pd pd = {.handle = 1};
	struct mnic_mr *mr = NULL;
	uint8_t *area = calloc(1, 1u << 16), *heap = malloc(8192);
	const char *msg;

	(void)state;
	assert_non_null(dev);
	assert_non_null(area);
	assert_non_null(heap);
	dev->backend = MNIC_BACKEND_BAR;
	dev->fd = -1;
	dev->user = area;
	dev->user_off = 0x100000;
	dev->user_size = 1u << 16;
	pd.dev = dev;
	/* a heap buffer, a range that runs past the area, one that wraps, empty */
	assert_int_equal(mnic_reg_mr(&pd, (uint64_t)(uintptr_t)heap, 8192,
				     MNIC_ACCESS_LOCAL_WRITE, &mr), -EFAULT);
	assert_null(mr);
	assert_int_equal(mnic_last_error(dev)->layer, MNIC_ERR_ARG);
	msg = mnic_strerror_last(dev);
	assert_non_null(strstr(msg, "Bad address: [0x"));
	assert_non_null(strstr(msg, "+8192) is not memory of this handle (mnic_alloc)"));
	assert_non_null(strstr(msg, "only /dev/mnicN on a NIC with host memory"));
	assert_int_equal(mnic_reg_mr(&pd, 0x100000 + (1u << 16) - 4096, 8192, 0, &mr), -EFAULT);
	assert_non_null(strstr(mnic_strerror_last(dev), "not memory of this handle"));
	assert_int_equal(mnic_reg_mr(&pd, UINT64_MAX - 10, 4096, 0, &mr), -EFAULT);
	assert_int_equal(mnic_reg_mr(&pd, 0x100000, 0, 0, &mr), -EFAULT);
	/* the next error has no reason of its own: the old one is gone */
	assert_null(strstr(mnic_strerror_last(dev), "not memory"));
	mnic_set_err_detail(dev, MNIC_ERR_ARG, -EINVAL, "why %d", 7);
	assert_string_equal(mnic_strerror_last(dev), "libmnic: bad argument: Invalid argument: why 7");
	mnic_set_err(dev, MNIC_ERR_NONE, 0);
	assert_string_equal(mnic_strerror_last(dev), "libmnic: ok");
	assert_null(mr);
	/* the module's refusals of MNIC_IOC_REG_MEM, in words */
	assert_non_null(strstr(mnic_kmem_refusal(-EFAULT), "not mapped read-write"));
	assert_non_null(strstr(mnic_kmem_refusal(EFAULT), "read-only"));
	assert_non_null(strstr(mnic_kmem_refusal(-ENOMEM), "RLIMIT_MEMLOCK"));
	assert_non_null(strstr(mnic_kmem_refusal(-E2BIG), "max_reg_mib"));
	assert_non_null(strstr(mnic_kmem_refusal(-EOPNOTSUPP), "no host-memory aperture"));
	assert_null(mnic_kmem_refusal(-EIO));
	free(heap);
	free(area);
	free(dev);
}

/* ---- mnicctl arguments ------------------------------------------------------------ */

static void test_args(void **state)
{
	char *argv1[] = {"mnicctl", "-d", "x.bar", "--json", "qp", "show", "0x1001", NULL};
	char *argv2[] = {"mnicctl", "info", "-d", NULL};
	char *argv3[] = {"mnicctl", "--timeout", "0", "info", NULL};
	char *argv4[] = {"mnicctl", "--device=/dev/mnic0", "--timeout", "500", "--help", NULL};
	struct mnicctl_opts o;
	struct mnic_peer_override ov;
	char err[128];
	uint32_t v, ip;
	uint8_t mac[6];

	(void)state;
	assert_int_equal(mnicctl_parse(7, argv1, &o, err, sizeof(err)), 0);
	assert_string_equal(o.dev, "x.bar");
	assert_int_equal(o.json, 1);
	assert_int_equal(o.argc, 3);
	assert_string_equal(o.argv[0], "qp");
	assert_string_equal(o.argv[2], "0x1001");
	assert_int_equal(mnicctl_parse(3, argv2, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "-d needs"));
	assert_int_equal(mnicctl_parse(4, argv3, &o, err, sizeof(err)), -1);
	assert_int_equal(mnicctl_parse(5, argv4, &o, err, sizeof(err)), 0);
	assert_string_equal(o.dev, "/dev/mnic0");
	assert_int_equal(o.timeout_ms, 500);
	assert_int_equal(o.help, 1);

	assert_int_equal(mnicctl_parse_u32("0x1001", &v), 0);
	assert_int_equal(v, 0x1001);
	assert_int_equal(mnicctl_parse_u32("4096", &v), 0);
	assert_int_equal(mnicctl_parse_u32("-1", &v), -1);
	assert_int_equal(mnicctl_parse_u32("12x", &v), -1);
	assert_int_equal(mnicctl_parse_u32("0x100000000", &v), -1);
	assert_int_equal(mnicctl_parse_u32("", &v), -1);

	assert_int_equal(mnicctl_parse_ipv4("10.112.0.1", &ip), 0);
	assert_int_equal(ip, 0x0a700001u);
	assert_int_equal(mnicctl_parse_ipv4("10.112.0", &ip), -1);
	assert_int_equal(mnicctl_parse_ipv4("10.112.0.256", &ip), -1);
	assert_int_equal(mnicctl_parse_ipv4("10.112.0.1.", &ip), -1);
	assert_int_equal(mnicctl_parse_ipv4("1000.1.1.1", &ip), -1);
	assert_int_equal(mnicctl_parse_mac("52:54:00:aB:00:0f", mac), 0);
	assert_int_equal(mac[3], 0xab);
	assert_int_equal(mac[5], 0x0f);
	assert_int_equal(mnicctl_parse_mac("52:54:00:ab:00", mac), -1);
	assert_int_equal(mnicctl_parse_mac("52:54:00:ab:00:0g", mac), -1);
	assert_int_equal(mnicctl_parse_mac("52:54:00:ab:00:00:", mac), -1);

	assert_int_equal(mnicctl_parse_override("10.0.0.2=10.0.0.4,52:54:00:00:00:04", &ov), 0);
	assert_int_equal(ov.old_dip, 0x0a000002u);
	assert_int_equal(ov.new_dip, 0x0a000004u);
	assert_int_equal(ov.new_dmac[5], 4);
	assert_int_equal(mnicctl_parse_override("10.0.0.2=10.0.0.4", &ov), -1);
	assert_int_equal(mnicctl_parse_override("10.0.0.2,52:54:00:00:00:04", &ov), -1);
	assert_int_equal(mnicctl_parse_override("0.0.0.0=10.0.0.4,52:54:00:00:00:04", &ov), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_sizes),  cmocka_unit_test(test_chain_refusals),
		cmocka_unit_test(test_collect),      
		cmocka_unit_test(test_image_valid),  cmocka_unit_test(test_image_corrupt),
		cmocka_unit_test(test_alloc),        cmocka_unit_test(test_alloc_free_coalesce),
		cmocka_unit_test(test_alloc_free_refusals), cmocka_unit_test(test_alloc_churn),
		cmocka_unit_test(test_alloc_bind_release), cmocka_unit_test(test_alloc_dead_holder),
		cmocka_unit_test(test_hostmem_table),
		cmocka_unit_test(test_cq_poll),
		cmocka_unit_test(test_errors),       cmocka_unit_test(test_reg_mr_outside),
		cmocka_unit_test(test_args),
	};

	return cmocka_run_group_tests_name("libmnic", tests, NULL, NULL);
}
