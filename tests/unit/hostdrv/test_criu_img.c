/* hostdrv/criu/mnic_criu.h: the CRIU plugin's image header is read on the
 * restore host from files anyone with the image directory could have
 * written: every size it announces must add up to the file's, every
 * field be in range, before the plugin believes any of it
 * (mnic_criu_img_check); a header that passes restores. */
#include <string.h>

#include "cmocka_main.h"

#include "mnic_criu.h"

static struct mnic_criu_img ctx_img(uint32_t image_len, uint32_t n)
{
	struct mnic_criu_img h;

	memset(&h, 0, sizeof(h));
	h.magic = MNIC_CRIU_MAGIC;
	h.version = MNIC_CRIU_VERSION;
	h.kind = MNIC_CRIU_CTX;
	h.pid = 155;
	h.fd = 3;
	h.max_fd = 6;
	h.resp.image_len = image_len;
	h.resp.n_objects = n;
	return h;
}

static size_t file_len(uint32_t image_len, uint32_t n)
{
	return sizeof(struct mnic_criu_img) + image_len + (size_t)n * sizeof(struct mnic_ib_mig_obj);
}

static void test_valid_headers(void **state)
{
	struct mnic_criu_img h = ctx_img(1541, 5), e;

	(void)state;
	assert_int_equal(mnic_criu_img_check(&h, file_len(1541, 5)), 0);
	memset(&e, 0, sizeof(e));
	e.magic = MNIC_CRIU_MAGIC;
	e.version = MNIC_CRIU_VERSION;
	e.kind = MNIC_CRIU_EVENT;
	e.pid = 155;
	e.fd = 4;
	e.max_fd = 6;
	assert_int_equal(mnic_criu_img_check(&e, sizeof(e)), 0);
	/* an event image carries no body */
	assert_int_equal(mnic_criu_img_check(&e, sizeof(e) + 1), -EINVAL);
}

/* Sizes that do not add up to the file's: one byte short or long, a
 * count that overflows 32 bits when multiplied, limits exceeded. */
static void test_sizes_must_add_up(void **state)
{
	struct mnic_criu_img h = ctx_img(1541, 5);

	(void)state;
	assert_int_equal(mnic_criu_img_check(&h, file_len(1541, 5) - 1), -EINVAL);
	assert_int_equal(mnic_criu_img_check(&h, file_len(1541, 5) + 1), -EINVAL);
	h = ctx_img(1541, 0x02000000);   /* n x 112 wraps 32 bits */
	assert_int_equal(mnic_criu_img_check(&h, file_len(1541, 5)), -EINVAL);
	h = ctx_img(MNIC_CRIU_IMAGE_MAX + 1, 0);
	assert_int_equal(mnic_criu_img_check(&h, file_len(MNIC_CRIU_IMAGE_MAX + 1, 0)), -EINVAL);
	h = ctx_img(100, MNIC_CRIU_TABLE_MAX + 1);
	assert_int_equal(mnic_criu_img_check(&h, file_len(100, MNIC_CRIU_TABLE_MAX + 1)), -EINVAL);
	h = ctx_img(MNIC_CRIU_IMAGE_MAX, MNIC_CRIU_TABLE_MAX);
	assert_int_equal(mnic_criu_img_check(&h, file_len(MNIC_CRIU_IMAGE_MAX, MNIC_CRIU_TABLE_MAX)), 0);
}

static void test_fields_in_range(void **state)
{
	struct mnic_criu_img h;
	size_t len = file_len(64, 1);

	(void)state;
	h = ctx_img(64, 1);
	h.magic ^= 1;
	assert_int_equal(mnic_criu_img_check(&h, len), -EINVAL);
	h = ctx_img(64, 1);
	h.version = MNIC_CRIU_VERSION + 1;
	assert_int_equal(mnic_criu_img_check(&h, len), -EINVAL);
	h = ctx_img(64, 1);
	h.kind = 3;
	assert_int_equal(mnic_criu_img_check(&h, len), -EINVAL);
	h = ctx_img(64, 1);
	h.fd = -1;
	assert_int_equal(mnic_criu_img_check(&h, len), -EINVAL);
	h = ctx_img(64, 1);
	h.pid = 0;
	assert_int_equal(mnic_criu_img_check(&h, len), -EINVAL);
	h = ctx_img(64, 1);
	h.max_fd = h.fd - 1;
	assert_int_equal(mnic_criu_img_check(&h, len), -EINVAL);
	h = ctx_img(64, 1);
	h.max_fd = (1 << 20) + 1;
	assert_int_equal(mnic_criu_img_check(&h, len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_headers),
		cmocka_unit_test(test_sizes_must_add_up),
		cmocka_unit_test(test_fields_in_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
