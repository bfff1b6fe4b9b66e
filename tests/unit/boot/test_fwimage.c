/* boot/fwimage.c against good and hostile images: each refusal is its own
 * error. (SHA-256 itself: tests/unit/lib/test_sha256.c.) */
#include "cmocka_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/fwimage.h"
#include "lib/sha256.h"

#define PAYLOAD 1000u
#define RAM_BASE 0x40000000ull
#define RAM_END 0x48000000ull

static const struct fwimg_limits lim_a15 = {
	.board_id = 1, .max_image = 0x200000, .ram_base = RAM_BASE, .ram_end = RAM_END,
};

/* A valid image for board 1 with a TLV area (KEYHASH + a fake 64-byte
 * ED25519 value: the parser checks bounds, not signatures). */
static size_t make_img(uint8_t *buf, uint32_t board, int with_tlv)
{
	struct mnic_fwimg_hdr h;
	struct mnic_fwimg_tlv_info info = { MNIC_FWIMG_TLV_MAGIC, 0, 8 + 4 + 32 + 4 + 64 };
	struct mnic_fwimg_tlv t;
	size_t n;

	memset(&h, 0, sizeof(h));
	h.magic = MNIC_FWIMG_MAGIC;
	h.hdr_version = MNIC_FWIMG_HDR_VERSION;
	h.hdr_size = MNIC_FWIMG_HDR_SIZE;
	h.board_id = board;
	h.version = (struct mnic_fw_version){ 1, 2, 3, 45 };
	h.load_addr = 0x40200000;
	h.entry = 0x40200000;
	h.payload_size = PAYLOAD;
	strcpy(h.name, "test");
	for (uint32_t i = 0; i < PAYLOAD; i++)
		buf[sizeof(h) + i] = (uint8_t)(i ^ 0x5a);
	fwimg_digest(&h, buf + sizeof(h), h.digest);
	memcpy(buf, &h, sizeof(h));
	n = sizeof(h) + PAYLOAD;
	if (!with_tlv)
		return n;
	memcpy(buf + n, &info, sizeof(info));
	n += sizeof(info);
	t = (struct mnic_fwimg_tlv){ MNIC_FWIMG_TLV_KEYHASH, 32 };
	memcpy(buf + n, &t, 4);
	memset(buf + n + 4, 0x11, 32);
	n += 36;
	t = (struct mnic_fwimg_tlv){ MNIC_FWIMG_TLV_ED25519, 64 };
	memcpy(buf + n, &t, 4);
	memset(buf + n + 4, 0x22, 64);
	return n + 68;
}

static uint8_t img[4096];

static void test_good_image(void **state)
{
	struct fwimg_info info;
	size_t n;

	(void)state;
	n = make_img(img, 1, 0);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, &info), FWIMG_OK);
	assert_int_equal(info.image_len, n);
	assert_int_equal(info.tlv_off, 0);
	assert_int_equal(info.hdr.version.build, 45);
	n = make_img(img, 1, 1);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, &info), FWIMG_OK);
	assert_int_equal(info.image_len, n);
	assert_int_equal(info.tlv_off, sizeof(struct mnic_fwimg_hdr) + PAYLOAD);
	/* in a slot: erased flash after the image is not part of it */
	memset(img + n, 0xff, 200);
	assert_int_equal(fwimg_verify(img, n + 200, &lim_a15, &info), FWIMG_OK);
	assert_int_equal(info.image_len, n);
}

static void test_truncated(void **state)
{
	size_t n, cut;

	(void)state;
	n = make_img(img, 1, 0);
	for (cut = 0; cut < n; cut += 37)
		assert_int_equal(fwimg_verify(img, cut, &lim_a15, NULL), FWIMG_E_TRUNCATED);
	assert_int_equal(fwimg_verify(img, n - 1, &lim_a15, NULL), FWIMG_E_TRUNCATED);
}

static void set_hdr(size_t off, const void *v, size_t len)
{
	memcpy(img + off, v, len);
}

static void test_header_errors(void **state)
{
	struct fwimg_limits small = lim_a15, any = lim_a15;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;
	size_t n;

	(void)state;
	n = make_img(img, 2, 0);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_BOARD);
	any.board_id = 0;
	assert_int_equal(fwimg_verify(img, n, &any, NULL), FWIMG_OK);

	n = make_img(img, 1, 0);
	small.max_image = MNIC_FWIMG_HDR_SIZE + PAYLOAD - 1;
	assert_int_equal(fwimg_verify(img, n, &small, NULL), FWIMG_E_OVERSIZED);

	v16 = 2;
	set_hdr(offsetof(struct mnic_fwimg_hdr, hdr_version), &v16, 2);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_HDR_VERSION);

	n = make_img(img, 1, 0);
	v16 = 64;
	set_hdr(offsetof(struct mnic_fwimg_hdr, hdr_size), &v16, 2);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_HDR_SIZE);

	n = make_img(img, 1, 0);
	img[0] ^= 1;
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_MAGIC);

	n = make_img(img, 1, 0);
	img[offsetof(struct mnic_fwimg_hdr, reserved1) + 3] = 1;
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_RESERVED);

	n = make_img(img, 1, 0);
	v32 = 1;
	set_hdr(offsetof(struct mnic_fwimg_hdr, flags), &v32, 4);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_RESERVED);

	n = make_img(img, 1, 0);
	v64 = RAM_END - 10;   /* payload would run past RAM */
	set_hdr(offsetof(struct mnic_fwimg_hdr, load_addr), &v64, 8);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_LOAD);

	n = make_img(img, 1, 0);
	v64 = 0x40200000 + PAYLOAD;   /* entry one past the payload */
	set_hdr(offsetof(struct mnic_fwimg_hdr, entry), &v64, 8);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_LOAD);

	n = make_img(img, 1, 0);
	v64 = 0xfffffffffffffff0ull;   /* wraps */
	set_hdr(offsetof(struct mnic_fwimg_hdr, load_addr), &v64, 8);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_LOAD);

	n = make_img(img, 1, 0);
	v32 = 0;
	set_hdr(offsetof(struct mnic_fwimg_hdr, payload_size), &v32, 4);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_EMPTY);

	n = make_img(img, 1, 0);
	v32 = 0xffffffffu;   /* oversized beats truncated: the limit is checked first */
	set_hdr(offsetof(struct mnic_fwimg_hdr, payload_size), &v32, 4);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_OVERSIZED);
	any.max_image = 0;
	any.ram_end = 0;   /* no limits at all: the length check still holds */
	assert_int_equal(fwimg_verify(img, n, &any, NULL), FWIMG_E_TRUNCATED);
}

static void test_digest(void **state)
{
	size_t n;

	(void)state;
	n = make_img(img, 1, 0);
	img[MNIC_FWIMG_HDR_SIZE + 500] ^= 0x80;          /* payload bit */
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_DIGEST);
	n = make_img(img, 1, 0);
	img[offsetof(struct mnic_fwimg_hdr, name)] ^= 1;  /* header is covered too */
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_DIGEST);
	n = make_img(img, 1, 0);
	img[offsetof(struct mnic_fwimg_hdr, version)] ^= 1;
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_DIGEST);
	n = make_img(img, 1, 0);
	img[offsetof(struct mnic_fwimg_hdr, digest) + 31] ^= 1;
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_DIGEST);
}

static int count_tlv(void *ctx, uint16_t type, const uint8_t *v, uint16_t len)
{
	int *n = ctx;

	(void)v;
	assert_true((type == MNIC_FWIMG_TLV_KEYHASH && len == 32) ||
		    (type == MNIC_FWIMG_TLV_ED25519 && len == 64));
	(*n)++;
	return 0;
}

static void test_tlv(void **state)
{
	size_t n, t = MNIC_FWIMG_HDR_SIZE + PAYLOAD;
	uint32_t total;
	uint16_t len;
	int count = 0;

	(void)state;
	n = make_img(img, 1, 1);
	assert_int_equal(fwimg_tlv_walk(img + t, (uint32_t)(n - t), count_tlv, &count), FWIMG_OK);
	assert_int_equal(count, 2);
	/* a TLV longer than the area */
	len = 200;
	memcpy(img + t + 8 + 2, &len, 2);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_TLV);
	/* total beyond the bytes present */
	n = make_img(img, 1, 1);
	total = 4000;
	memcpy(img + t + 4, &total, 4);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_TLV);
	/* total smaller than the info itself */
	total = 4;
	memcpy(img + t + 4, &total, 4);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_TLV);
	/* a TLV header cut by total */
	n = make_img(img, 1, 1);
	total = 8 + 36 + 2 + 2;
	memcpy(img + t + 4, &total, 4);
	assert_int_equal(fwimg_verify(img, n, &lim_a15, NULL), FWIMG_E_TLV);
}

static void test_strerror_and_cmp(void **state)
{
	struct mnic_fw_version a = { 1, 2, 3, 4 }, b = { 1, 2, 10, 0 };

	(void)state;
	for (int e = 0; e < FWIMG_NUM_ERRS; e++)
		assert_non_null(fwimg_strerror(e));
	assert_string_equal(fwimg_strerror(-FWIMG_E_BOARD), "image is for another board");
	assert_string_equal(fwimg_strerror(999), "unknown image error");
	assert_true(fwimg_version_cmp(&a, &b) < 0);
	assert_true(fwimg_version_cmp(&b, &a) > 0);
	assert_int_equal(fwimg_version_cmp(&a, &a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_image),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_tlv),
		cmocka_unit_test(test_strerror_and_cmp),
	};
	return cmocka_run_group_tests_name("boot/fwimage", tests, NULL, NULL);
}
