/* mgmt/fwflash.c: the FW_* command handlers on a simulated slot flash, as
 * the dispatcher calls them: a whole update, then hostile inputs (each a
 * specific status and syndrome, nothing changed), and activation. */
#include "cmocka_main.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "boot/bootrec.h"
#include "boot/fwsig.h"
#include "lib/sha256.h"
#include "mgmt/fwflash.h"
#include "hal/errno.h"
#include "mgmt/mgmt.h"
#include "ram_flash.h"

#define FLASH_BYTES MNIC_FLASH_USED
#define PAYLOAD 70000u
#define SIG_TLV_LEN (8u + 4u + 32u + 4u + 64u)

static uint8_t *mem, *img;
static size_t img_len;

static struct ram_flash rf;
static struct hal_flash *flash;
static const struct fwimg_limits lim = {
	.board_id = 1, .ram_base = 0x40000000, .ram_end = 0x48000000,
};
static struct mnic_mgmt mgmt;
static uint8_t buf[16 + MNIC_FW_FLASH_CHUNK_MAX + 64];

struct res {
	int rc;
	uint8_t status;
	uint32_t syndrome, produced;
};

static struct res call(uint16_t op, uint16_t op_mod, uint32_t in_len, uint32_t out_len)
{
	struct res r = { 0, 0, 0, 0 };
	struct mnic_cmd_in_hdr h = { op, op_mod, 0, 0 };

	memcpy(buf, &h, sizeof(h));
	r.rc = mnic_fwflash_cmd(&mgmt, op, op_mod, buf, in_len, out_len, &r.produced, &r.status,
				&r.syndrome);
	return r;
}

static struct res begin(const uint8_t *image, uint32_t total)
{
	struct mnic_cmd_fw_flash_begin_in in;

	memset(&in, 0, sizeof(in));
	in.total = total;
	memcpy(in.image_hdr, image, sizeof(in.image_hdr));
	memcpy(buf, &in, sizeof(in));
	return call(MNIC_CMD_FW_FLASH_BEGIN, 0, sizeof(in), 8);
}

static struct res data(uint32_t off, const uint8_t *p, uint32_t len, uint32_t in_len)
{
	struct mnic_cmd_fw_flash_data_in in;

	memset(&in, 0, sizeof(in));
	in.offset = off;
	in.len = len;
	memcpy(buf, &in, sizeof(in));
	if (len <= MNIC_FW_FLASH_CHUNK_MAX)
		memcpy(buf + sizeof(in), p, len);
	return call(MNIC_CMD_FW_FLASH_DATA, 0, in_len, 8);
}

static struct mnic_cmd_fw_slots_out query(void)
{
	struct mnic_cmd_fw_slots_out o;
	struct res r = call(MNIC_CMD_FW_QUERY, MNIC_FW_QUERY_SLOTS, 8, sizeof(o));

	assert_int_equal(r.rc, 0);
	assert_int_equal(r.produced, sizeof(o));
	memcpy(&o, buf, sizeof(o));
	return o;
}

static void expect(struct res r, uint8_t status, int err, uint32_t site)
{
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.status, status);
	assert_int_equal(MNIC_SYND_ERRNO(r.syndrome), err);
	assert_int_equal(MNIC_SYND_SITE(r.syndrome), site);
}

static void make_image(uint8_t minor, uint32_t board)
{
	struct mnic_fwimg_hdr h;

	memset(&h, 0, sizeof(h));
	h.magic = MNIC_FWIMG_MAGIC;
	h.hdr_version = MNIC_FWIMG_HDR_VERSION;
	h.hdr_size = MNIC_FWIMG_HDR_SIZE;
	h.board_id = board;
	h.version = (struct mnic_fw_version){ 1, minor, 0, 1 };
	h.load_addr = h.entry = 0x40200000;
	h.payload_size = PAYLOAD;
	for (uint32_t i = 0; i < PAYLOAD; i++)
		img[sizeof(h) + i] = (uint8_t)(i * 13 + minor);
	fwimg_digest(&h, img + sizeof(h), h.digest);
	memcpy(img, &h, sizeof(h));
	img_len = sizeof(h) + PAYLOAD;
}

/* Factory flash: v1 in A, confirmed; the firmware booted A via the loader. */
static int setup(void **state)
{
	struct mnic_boot_handoff ho;
	struct mnic_bootrec r;

	(void)state;
	mem = malloc(FLASH_BYTES);
	img = malloc(MNIC_FWIMG_HDR_SIZE + PAYLOAD + SIG_TLV_LEN);
	memset(mem, 0xff, FLASH_BYTES);
	flash = ram_flash_init(&rf, mem, FLASH_BYTES, MNIC_FLASH_SECTOR, 4);
	make_image(0, 1);
	memcpy(mem + MNIC_FLASH_SLOT_A, img, img_len);
	bootrec_default(&r);
	r.state[0] = MNIC_SLOT_VALID;
	assert_int_equal(bootrec_store(flash, &r), 0);
	memset(&ho, 0, sizeof(ho));
	ho.magic = MNIC_HANDOFF_MAGIC;
	ho.slot = MNIC_SLOT_A;
	memcpy(&ho.hdr, img, sizeof(ho.hdr));
	mnic_fwflash_attach(flash, &ho, &lim);
	memset(&mgmt, 0, sizeof(mgmt));
	mgmt.cfg.board_id = 1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(mem);
	free(img);
	return 0;
}

static void test_update_and_refusals(void **state)
{
	struct mnic_cmd_fw_slots_out o;
	struct mnic_cmd_fw_flash_end_out e;
	struct mnic_cmd_fw_activate_in act;
	uint32_t off, n;
	struct res r;

	(void)state;
	o = query();
	assert_int_equal(o.running_slot, MNIC_SLOT_A);
	assert_true(o.flags & MNIC_FW_F_FLASH);
	assert_int_equal(o.slot[0].state, MNIC_SLOT_VALID);
	assert_int_equal(o.slot[1].state, MNIC_SLOT_EMPTY);
	/* a slots query with room for the build answer only */
	expect(call(MNIC_CMD_FW_QUERY, MNIC_FW_QUERY_SLOTS, 8, 88), MNIC_CMD_STAT_BAD_OUTPUT_LEN,
	       HAL_EINVAL, 4);
	/* DATA and END before BEGIN */
	expect(data(0, img, 64, 16 + 64), MNIC_CMD_STAT_BAD_SYS_STATE, HAL_EINVAL, 2);
	expect(call(MNIC_CMD_FW_FLASH_END, 0, 8, 16), MNIC_CMD_STAT_BAD_SYS_STATE, HAL_EINVAL, 2);

	/* wrong board, then a good image */
	make_image(1, 2);
	expect(begin(img, (uint32_t)img_len), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL,
	       MNIC_FW_SITE_IMAGE + FWIMG_E_BOARD);
	make_image(1, 1);
	expect(begin(img, 100), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL,
	       MNIC_FW_SITE_IMAGE + FWIMG_E_TRUNCATED);
	r = begin(img, (uint32_t)img_len);
	assert_int_equal(r.rc, 0);
	/* hostile DATA: zero length, over the chunk limit, in_len shorter
	 * than len, an offset out of order, more than announced */
	expect(data(0, img, 0, 16), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, 4);
	expect(data(0, img, MNIC_FW_FLASH_CHUNK_MAX + 4, 16), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, 4);
	expect(data(0, img, 64, 16 + 63), MNIC_CMD_STAT_BAD_INPUT_LEN, HAL_EINVAL, 4);
	expect(data(8, img + 8, 64, 16 + 64), MNIC_CMD_STAT_BAD_PARAM, HAL_ERANGE, 3);
	for (off = 0; off < img_len; off += n) {
		n = img_len - off < MNIC_FW_FLASH_CHUNK_MAX ? (uint32_t)(img_len - off)
							     : MNIC_FW_FLASH_CHUNK_MAX;
		r = data(off, img + off, n, 16 + n);
		assert_int_equal(r.rc, 0);
		if (off == 0) {
			o = query();
			assert_int_equal(o.update_state, FWUPD_WRITING);
			assert_int_equal(o.update_written, n);
			/* activation while writing is refused */
			memset(&act, 0, sizeof(act));
			memcpy(buf, &act, sizeof(act));
			expect(call(MNIC_CMD_FW_ACTIVATE, 0, 16, 8), MNIC_CMD_STAT_BAD_SYS_STATE,
			       HAL_EBUSY, 2);
		}
	}
	expect(data(off, img, 4, 20), MNIC_CMD_STAT_EXCEED_LIM, HAL_E2BIG, 4);
	r = call(MNIC_CMD_FW_FLASH_END, 0, 8, 16);
	assert_int_equal(r.rc, 0);
	memcpy(&e, buf, sizeof(e));
	assert_int_equal(e.slot, MNIC_SLOT_B);
	assert_int_equal(e.image_err, 0);
	o = query();
	assert_int_equal(o.slot[1].state, MNIC_SLOT_VALID);
	assert_int_equal(o.slot[1].version[1], 1);   /* minor */

	/* corrupt B after END: ACTIVATE re-verifies and refuses */
	mem[MNIC_FLASH_SLOT_B + MNIC_FWIMG_HDR_SIZE + 5] &= 0x00;
	memset(&act, 0, sizeof(act));
	memcpy(buf, &act, sizeof(act));
	expect(call(MNIC_CMD_FW_ACTIVATE, 0, 16, 8), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL,
	       MNIC_FW_SITE_IMAGE + FWIMG_E_DIGEST);
	assert_false(mnic_fwflash_reset_pending());
	o = query();
	assert_int_equal(o.slot[1].image_err, FWIMG_E_DIGEST);

	/* stream it again, flipping a byte on the way: END refuses, slot BAD */
	assert_int_equal(begin(img, (uint32_t)img_len).rc, 0);
	for (off = 0; off < img_len; off += n) {
		uint8_t chunk[MNIC_FW_FLASH_CHUNK_MAX];

		n = img_len - off < sizeof(chunk) ? (uint32_t)(img_len - off) : sizeof(chunk);
		memcpy(chunk, img + off, n);
		if (off == 8192)
			chunk[100] ^= 0x40;
		assert_int_equal(data(off, chunk, n, 16 + n).rc, 0);
	}
	r = call(MNIC_CMD_FW_FLASH_END, 0, 8, 16);
	expect(r, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_FW_SITE_IMAGE + FWIMG_E_DIGEST);
	assert_int_equal(r.produced, 16);
	memcpy(&e, buf, sizeof(e));
	assert_int_equal(e.image_err, FWIMG_E_DIGEST);
	assert_int_equal(query().slot[1].state, MNIC_SLOT_BAD);

	/* and a clean one: activate makes B the test slot and asks for a reset */
	assert_int_equal(begin(img, (uint32_t)img_len).rc, 0);
	for (off = 0; off < img_len; off += n) {
		n = img_len - off < MNIC_FW_FLASH_CHUNK_MAX ? (uint32_t)(img_len - off)
							     : MNIC_FW_FLASH_CHUNK_MAX;
		assert_int_equal(data(off, img + off, n, 16 + n).rc, 0);
	}
	assert_int_equal(call(MNIC_CMD_FW_FLASH_END, 0, 8, 16).rc, 0);
	act.max_boots = 300;
	memcpy(buf, &act, sizeof(act));
	expect(call(MNIC_CMD_FW_ACTIVATE, 0, 16, 8), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, 7);
	act.max_boots = 2;
	memcpy(buf, &act, sizeof(act));
	assert_int_equal(call(MNIC_CMD_FW_ACTIVATE, 0, 16, 8).rc, 0);
	assert_true(mnic_fwflash_reset_pending());
	o = query();
	assert_true(o.flags & MNIC_FW_F_RESET_PENDING);
	assert_true(o.slot[1].flags & MNIC_FW_SLOT_F_TEST);
	assert_int_equal(o.bootrec[15], 2);   /* max_boots */
	/* no new update once a reset is pending */
	expect(begin(img, (uint32_t)img_len), MNIC_CMD_STAT_BAD_SYS_STATE, HAL_EBUSY, 8);
	assert_true(mnic_fwflash_counters()->refused_image >= 4);
	/* hostile commands were refused by the policy, never by the flash */
	assert_int_equal(flash->stats.out_of_range + flash->stats.misaligned, 0);
	assert_int_equal(rf.bad_calls, 0);
}

/* Append the TLV area `mnicctl image sign` writes (KEYHASH, ED25519). */
static void sign_image(const uint8_t pk[32], const uint8_t sk[64])
{
	struct mnic_fwimg_tlv_info ti = { MNIC_FWIMG_TLV_MAGIC, 0, SIG_TLV_LEN };
	struct mnic_fwimg_tlv t;
	uint8_t *a = img + img_len;

	memcpy(a, &ti, sizeof(ti));
	t = (struct mnic_fwimg_tlv){ MNIC_FWIMG_TLV_KEYHASH, 32 };
	memcpy(a + 8, &t, 4);
	sha256(pk, 32, a + 12);
	t = (struct mnic_fwimg_tlv){ MNIC_FWIMG_TLV_ED25519, 64 };
	memcpy(a + 44, &t, 4);
	crypto_sign_detached(a + 48, NULL, ((struct mnic_fwimg_hdr *)img)->digest, 32, sk);
	img_len += SIG_TLV_LEN;
}

static struct res stream_and_end(void)
{
	struct res r = begin(img, (uint32_t)img_len);
	uint32_t off, n;

	assert_int_equal(r.rc, 0);
	for (off = 0; off < img_len; off += n) {
		n = img_len - off < MNIC_FW_FLASH_CHUNK_MAX ? (uint32_t)(img_len - off)
							    : MNIC_FW_FLASH_CHUNK_MAX;
		assert_int_equal(data(off, img + off, n, 16 + n).rc, 0);
	}
	return call(MNIC_CMD_FW_FLASH_END, 0, 8, 16);
}

/* A board with a key provisioned: FW_FLASH_END refuses an unsigned image
 * and one signed by another key (status BAD_PARAM, site 0x100 + the image
 * error, the slot BAD, ACTIVATE refused), accepts the signed one; FW_QUERY
 * reports the policy and the key versions. */
static void test_signed_end_and_activate(void **state)
{
	uint8_t pk[2][32], sk[2][64];
	const uint32_t ver[1] = { 7 };
	struct mnic_cmd_fw_activate_in act;
	struct mnic_cmd_fw_slots_out o;
	struct mnic_keyslot ks;
	struct fwsig_keys keys;
	struct fwimg_limits l = lim;
	struct mnic_boot_handoff ho;

	(void)state;
	crypto_sign_keypair(pk[0], sk[0]);
	crypto_sign_keypair(pk[1], sk[1]);
	fwsig_keyslot_build(&ks, (const uint8_t (*)[32])pk, ver, 1, 0);
	assert_int_equal(fwsig_keys_load(&keys, &ks), FWSIG_ENFORCED);
	l.keys = &keys;
	memset(mem, 0xff, FLASH_BYTES);          /* factory: signed 1.0 in slot A */
	make_image(0, 1);
	sign_image(pk[0], sk[0]);
	memcpy(mem + MNIC_FLASH_SLOT_A, img, img_len);
	{
		struct mnic_bootrec r;

		bootrec_default(&r);
		r.state[0] = MNIC_SLOT_VALID;
		assert_int_equal(bootrec_store(flash, &r), 0);
	}
	memset(&ho, 0, sizeof(ho));
	ho.magic = MNIC_HANDOFF_MAGIC;
	memcpy(&ho.hdr, img, sizeof(ho.hdr));
	mnic_fwflash_attach(flash, &ho, &l);
	o = query();
	assert_int_equal(o.sig_policy, MNIC_FW_SIG_ENFORCED);
	assert_int_equal(o.key_version[0], 7);
	assert_int_equal(o.slot[0].image_err, 0);

	make_image(2, 1);                        /* unsigned */
	expect(stream_and_end(), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL,
	       MNIC_FW_SITE_IMAGE + FWIMG_E_UNSIGNED);
	o = query();
	assert_int_equal(o.slot[1].state, MNIC_SLOT_BAD);
	assert_int_equal(o.slot[1].image_err, FWIMG_E_UNSIGNED);
	memset(&act, 0, sizeof(act));
	memcpy(buf, &act, sizeof(act));
	expect(call(MNIC_CMD_FW_ACTIVATE, 0, sizeof(act), 8), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL,
	       MNIC_FW_SITE_IMAGE + FWIMG_E_UNSIGNED);
	make_image(2, 1);
	sign_image(pk[1], sk[1]);                /* a key the board does not hold */
	expect(stream_and_end(), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL,
	       MNIC_FW_SITE_IMAGE + FWIMG_E_SIG_KEY);
	make_image(2, 1);
	sign_image(pk[0], sk[0]);
	img[img_len - 1] ^= 0x80;                /* a signature bit */
	expect(stream_and_end(), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL,
	       MNIC_FW_SITE_IMAGE + FWIMG_E_SIG_BAD);
	img[img_len - 1] ^= 0x80;
	assert_int_equal(stream_and_end().rc, 0);
	assert_int_equal(query().slot[1].state, MNIC_SLOT_VALID);
	memcpy(buf, &act, sizeof(act));
	assert_int_equal(call(MNIC_CMD_FW_ACTIVATE, 0, sizeof(act), 8).rc, 0);
	assert_true(mnic_fwflash_reset_pending());
}

/* Anti-rollback through the handlers: with the record's minimum above an
 * image's version FW_FLASH_BEGIN refuses it from its header. */
static void test_rollback_begin_refused(void **state)
{
	struct mnic_boot_handoff ho;
	struct mnic_bootrec r;

	(void)state;
	memset(mem, 0xff, FLASH_BYTES);
	make_image(3, 1);
	memcpy(mem + MNIC_FLASH_SLOT_A, img, img_len);
	bootrec_default(&r);
	r.state[0] = MNIC_SLOT_VALID;
	r.min_version = (struct mnic_fw_version){ 1, 3, 0, 1 };
	assert_int_equal(bootrec_store(flash, &r), 0);
	memset(&ho, 0, sizeof(ho));
	ho.magic = MNIC_HANDOFF_MAGIC;
	memcpy(&ho.hdr, img, sizeof(ho.hdr));
	mnic_fwflash_attach(flash, &ho, &lim);
	make_image(2, 1);
	expect(begin(img, (uint32_t)img_len), MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL,
	       MNIC_FW_SITE_IMAGE + FWIMG_E_ROLLBACK);
	assert_int_equal(query().update_state, FWUPD_IDLE);
	make_image(3, 1);
	assert_int_equal(stream_and_end().rc, 0);
}

static void test_no_flash(void **state)
{
	(void)state;
	mnic_fwflash_attach(NULL, NULL, NULL);
	expect(begin(img, (uint32_t)img_len), MNIC_CMD_STAT_BAD_SYS_STATE, HAL_ENODEV, 1);
	assert_false(query().flags & MNIC_FW_F_FLASH);
	assert_int_equal(query().running_slot, MNIC_SLOT_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_update_and_refusals),
		cmocka_unit_test(test_signed_end_and_activate),
		cmocka_unit_test(test_rollback_begin_refused),
		cmocka_unit_test(test_no_flash),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("mgmt/fwflash", tests, setup, teardown);
}
