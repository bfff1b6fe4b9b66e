/* boot/bootrec.c: the boot record, slot selection, test -> confirmed,
 * test -> reverted, refusal of a corrupt slot, and power loss after every
 * single erase or program of an update and of the boots that follow it.
 *
 * The flash is simulated with NOR semantics (erase = 0xff, program ANDs);
 * a power cut tears the operation it hits (half a program, half an erase)
 * and fails every later one until "power comes back". */
#include "cmocka_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/bootrec.h"
#include "hal/errno.h"

#define FLASH_BYTES MNIC_FLASH_USED
#define PAYLOAD 300000u          /* two sectors: erase-on-demand crosses one */
#define CHUNK 4096u

struct sim {
	uint8_t *mem;
	long budget;             /* operations left before the cut; < 0: no cut */
	int dead;
	unsigned ops, erases, programs;
};

static int sim_erase(struct hal_flash *f, uint32_t off)
{
	struct sim *s = f->priv;

	assert_int_equal(off % MNIC_FLASH_SECTOR, 0);
	assert_true(off < FLASH_BYTES);
	if (s->dead)
		return -HAL_EIO;
	s->ops++;
	s->erases++;
	if (s->budget == 0) {
		memset(s->mem + off, 0xff, MNIC_FLASH_SECTOR / 2);   /* torn */
		s->dead = 1;
		return -HAL_EIO;
	}
	if (s->budget > 0)
		s->budget--;
	memset(s->mem + off, 0xff, MNIC_FLASH_SECTOR);
	return 0;
}

static int sim_write(struct hal_flash *f, uint32_t off, const void *src, uint32_t len)
{
	struct sim *s = f->priv;
	const uint8_t *p = src;
	uint32_t n = len, i;

	assert_int_equal(off % 4, 0);
	assert_int_equal(len % 4, 0);
	assert_true(off + len <= FLASH_BYTES);
	if (s->dead)
		return -HAL_EIO;
	s->ops++;
	s->programs++;
	if (s->budget == 0) {
		n = len / 2;     /* torn */
		s->dead = 1;
	} else if (s->budget > 0) {
		s->budget--;
	}
	for (i = 0; i < n; i++)
		s->mem[off + i] &= p[i];      /* NOR: program only clears bits */
	return s->dead ? -HAL_EIO : 0;
}

/* Reads work after a cut too: "power comes back" is a reboot. */
static int sim_read(struct hal_flash *f, uint32_t off, void *dst, uint32_t len)
{
	struct sim *s = f->priv;

	assert_true(off < FLASH_BYTES && len <= FLASH_BYTES - off);
	memcpy(dst, s->mem + off, len);
	return 0;
}

static const uint8_t *sim_map(struct hal_flash *f, uint32_t off, uint32_t len)
{
	struct sim *s = f->priv;

	assert_true(off < FLASH_BYTES && len <= FLASH_BYTES - off);
	return s->mem + off;
}

static const struct hal_flash_ops sim_ops = {
	.read = sim_read, .write = sim_write, .erase = sim_erase, .map = sim_map,
};
static const struct hal_flash_info sim_info = { FLASH_BYTES, MNIC_FLASH_SECTOR, 4 };
static struct sim sim;
static struct hal_flash flash_dev = { &sim_ops, &sim_info, { 0, 0 }, &sim };
static struct hal_flash *const flash = &flash_dev;
static const struct fwimg_limits lim = {
	.board_id = 1, .ram_base = 0x40000000, .ram_end = 0x48000000,
};
static uint8_t *img_v1, *img_v2, *img_v3, *pristine;
static size_t img_len;

static uint8_t *make_img(uint8_t minor)
{
	uint8_t *b = malloc(MNIC_FWIMG_HDR_SIZE + PAYLOAD);
	struct mnic_fwimg_hdr h;

	assert_non_null(b);
	memset(&h, 0, sizeof(h));
	h.magic = MNIC_FWIMG_MAGIC;
	h.hdr_version = MNIC_FWIMG_HDR_VERSION;
	h.hdr_size = MNIC_FWIMG_HDR_SIZE;
	h.board_id = 1;
	h.version = (struct mnic_fw_version){ 1, minor, 0, 7 };
	h.load_addr = h.entry = 0x40200000;
	h.payload_size = PAYLOAD;
	for (uint32_t i = 0; i < PAYLOAD; i++)
		b[MNIC_FWIMG_HDR_SIZE + i] = (uint8_t)(i * 31 + minor);
	fwimg_digest(&h, b + MNIC_FWIMG_HDR_SIZE, h.digest);
	memcpy(b, &h, sizeof(h));
	img_len = MNIC_FWIMG_HDR_SIZE + PAYLOAD;
	return b;
}

/* Factory state: v1 in slot A, confirmed. */
static void factory(void)
{
	struct mnic_bootrec r;
	uint32_t padded = (uint32_t)((img_len + 3) & ~3u);

	memset(sim.mem, 0xff, FLASH_BYTES);
	memcpy(sim.mem + MNIC_FLASH_SLOT_A, img_v1, img_len);
	(void)padded;
	sim.budget = -1;
	sim.dead = 0;
	bootrec_default(&r);
	r.state[MNIC_SLOT_A] = MNIC_SLOT_VALID;
	r.ver[MNIC_SLOT_A] = ((struct mnic_fwimg_hdr *)img_v1)->version;
	assert_int_equal(bootrec_store(flash, &r), 0);
}

static int setup(void **state)
{
	(void)state;
	sim.mem = malloc(FLASH_BYTES);
	pristine = malloc(FLASH_BYTES);
	img_v1 = make_img(1);
	img_v2 = make_img(2);
	img_v3 = make_img(3);
	assert_non_null(sim.mem);
	factory();
	memcpy(pristine, sim.mem, FLASH_BYTES);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(sim.mem);
	free(pristine);
	free(img_v1);
	free(img_v2);
	free(img_v3);
	return 0;
}

static void reset_flash(long budget)
{
	memcpy(sim.mem, pristine, FLASH_BYTES);
	sim.budget = budget;
	sim.dead = 0;
	sim.ops = sim.erases = sim.programs = 0;
}

static uint8_t minor_of(const struct boot_choice *c)
{
	return c->info.hdr.version.minor;
}

/* The update as the firmware does it: begin, chunks, end, activate. */
static int update(const uint8_t *img, unsigned running)
{
	struct fwupd u;
	int rc;

	if ((rc = fwupd_begin(&u, flash, &lim, running, (const struct mnic_fwimg_hdr *)img,
			      (uint32_t)img_len)) != 0)
		return rc;
	for (uint32_t off = 0; off < img_len; off += CHUNK) {
		uint32_t n = img_len - off < CHUNK ? (uint32_t)(img_len - off) : CHUNK;

		if ((rc = fwupd_data(&u, off, img + off, n)) != 0)
			return rc;
	}
	if ((rc = fwupd_end(&u)) != 0)
		return rc;
	return fwupd_activate(flash, u.slot, 3);
}

/* One boot: the loader selects; the firmware confirms if it is healthy. */
static int boot(int healthy, struct boot_choice *c)
{
	int rc = boot_select(flash, &lim, c);

	if (rc)
		return rc;
	if (healthy)
		return boot_confirm(flash, (unsigned)c->slot) < 0 ? -HAL_EIO : 0;
	return 0;
}

static void test_record_copies(void **state)
{
	struct mnic_bootrec r, r2;
	int i;

	(void)state;
	reset_flash(-1);
	i = bootrec_load(flash, &r);
	assert_true(i == 0 || i == 1);
	r.reverts = 77;
	assert_int_equal(bootrec_store(flash, &r), 0);
	assert_int_equal(bootrec_load(flash, &r2), !i);   /* the other copy, newer */
	assert_int_equal(r2.reverts, 77);
	assert_int_equal(r2.seq, r.seq);
	/* tear the newest copy: the older one is used */
	sim.mem[(!i ? MNIC_FLASH_BOOTREC1 : MNIC_FLASH_BOOTREC0) + 20] ^= 0x10;
	assert_int_equal(bootrec_load(flash, &r2), i);
	assert_int_not_equal(r2.reverts, 77);
	/* both bad: the default record, -1 */
	sim.mem[(i ? MNIC_FLASH_BOOTREC1 : MNIC_FLASH_BOOTREC0) + 8] ^= 0x01;
	assert_int_equal(bootrec_load(flash, &r2), -1);
	assert_int_equal(r2.active, MNIC_SLOT_A);
	assert_int_equal(r2.test, MNIC_SLOT_NONE);
	/* sequence numbers wrap: 0 is newer than 0xffffffff */
	reset_flash(-1);
	bootrec_load(flash, &r);
	r.seq = 0xfffffffeu;   /* store makes it cur+1; force by writing twice */
	memset(sim.mem, 0xff, 2 * MNIC_FLASH_SECTOR);
	r.reverts = 1;
	r.seq = 0xfffffffeu;
	assert_int_equal(bootrec_store(flash, &r), 0);   /* no valid copy: seq+1 = 0xffffffff */
	r.reverts = 2;
	assert_int_equal(bootrec_store(flash, &r), 0);   /* 0 */
	assert_int_equal(r.seq, 0);
	bootrec_load(flash, &r2);
	assert_int_equal(r2.reverts, 2);
}

static void test_update_confirm(void **state)
{
	struct boot_choice c;
	struct mnic_bootrec r;

	(void)state;
	reset_flash(-1);
	assert_int_equal(boot(1, &c), 0);
	assert_int_equal(c.slot, MNIC_SLOT_A);
	assert_int_equal(update(img_v2, MNIC_SLOT_A), 0);
	bootrec_load(flash, &r);
	assert_int_equal(r.test, MNIC_SLOT_B);
	assert_int_equal(r.state[MNIC_SLOT_B], MNIC_SLOT_VALID);
	assert_int_equal(r.ver[MNIC_SLOT_B].minor, 2);
	assert_int_equal(boot(1, &c), 0);
	assert_int_equal(c.slot, MNIC_SLOT_B);
	assert_int_equal(c.event, MNIC_BOOT_EV_TEST);
	assert_int_equal(c.boot_count, 1);
	assert_int_equal(minor_of(&c), 2);
	bootrec_load(flash, &r);
	assert_int_equal(r.active, MNIC_SLOT_B);
	assert_int_equal(r.test, MNIC_SLOT_NONE);
	assert_int_equal(r.last_event, MNIC_BOOT_EV_CONFIRMED);
	/* stays on B */
	assert_int_equal(boot(1, &c), 0);
	assert_int_equal(c.slot, MNIC_SLOT_B);
	/* and the next update goes to A, the now inactive slot */
	assert_int_equal(update(img_v3, MNIC_SLOT_B), 0);
	bootrec_load(flash, &r);
	assert_int_equal(r.test, MNIC_SLOT_A);
}

static void test_revert_after_n_boots(void **state)
{
	struct boot_choice c;
	struct mnic_bootrec r;

	(void)state;
	reset_flash(-1);
	assert_int_equal(update(img_v2, MNIC_SLOT_A), 0);
	for (int i = 1; i <= 3; i++) {            /* the self-test fails: no confirm */
		assert_int_equal(boot(0, &c), 0);
		assert_int_equal(c.slot, MNIC_SLOT_B);
		assert_int_equal(c.boot_count, i);
	}
	assert_int_equal(boot(0, &c), 0);         /* 4th boot: reverted */
	assert_int_equal(c.slot, MNIC_SLOT_A);
	assert_int_equal(c.reverted, MNIC_SLOT_B);
	assert_int_equal(c.event, MNIC_BOOT_EV_REVERTED);
	assert_int_equal(minor_of(&c), 1);
	bootrec_load(flash, &r);
	assert_int_equal(r.test, MNIC_SLOT_NONE);
	assert_int_equal(r.state[MNIC_SLOT_B], MNIC_SLOT_BAD);
	assert_int_equal(r.reverts, 1);
	assert_int_equal(r.last_event, MNIC_BOOT_EV_REVERTED);
	/* activating the bad slot again is refused */
	assert_int_equal(fwupd_activate(flash, MNIC_SLOT_B, 3), -HAL_EINVAL);
}

static void test_corrupt_slot_refused(void **state)
{
	struct boot_choice c;
	struct mnic_bootrec r;

	(void)state;
	/* corrupt after marking VALID: the loader refuses it and stays on A */
	reset_flash(-1);
	assert_int_equal(update(img_v2, MNIC_SLOT_A), 0);
	sim.mem[MNIC_FLASH_SLOT_B + MNIC_FWIMG_HDR_SIZE + 1000] &= 0x0f;
	assert_int_equal(boot(1, &c), 0);
	assert_int_equal(c.slot, MNIC_SLOT_A);
	assert_int_equal(c.refused[MNIC_SLOT_B], FWIMG_E_DIGEST);
	assert_int_equal(c.event, MNIC_BOOT_EV_REFUSED);
	assert_int_equal(boot(1, &c), 0);          /* the next boot is a plain one */
	assert_int_equal(c.event, MNIC_BOOT_EV_NONE);
	assert_int_equal(c.slot, MNIC_SLOT_A);
	bootrec_load(flash, &r);
	assert_int_equal(r.state[MNIC_SLOT_B], MNIC_SLOT_BAD);
	assert_int_equal(r.test, MNIC_SLOT_NONE);
	/* corrupt the active slot: the loader falls back to the other VALID
	 * one (not older than the confirmed version: 1.3 written to A, not
	 * activated) */
	reset_flash(-1);
	assert_int_equal(update(img_v2, MNIC_SLOT_A), 0);
	assert_int_equal(boot(1, &c), 0);          /* B confirmed */
	{
		struct fwupd u;

		assert_int_equal(fwupd_begin(&u, flash, &lim, MNIC_SLOT_B,
					     (const struct mnic_fwimg_hdr *)img_v3,
					     (uint32_t)img_len), 0);
		assert_int_equal(fwupd_data(&u, 0, img_v3, (uint32_t)img_len), 0);
		assert_int_equal(fwupd_end(&u), 0);
	}
	sim.mem[MNIC_FLASH_SLOT_B + 200] ^= 1;
	assert_int_equal(boot(1, &c), 0);
	assert_int_equal(c.slot, MNIC_SLOT_A);
	assert_int_equal(minor_of(&c), 3);
	/* both corrupt: nothing bootable, -ENODEV, never a wrong slot */
	sim.mem[MNIC_FLASH_SLOT_A + 200] ^= 1;
	assert_int_equal(boot_select(flash, &lim, &c), -HAL_ENODEV);
	assert_int_equal(c.slot, -1);
}

/* Anti-rollback: confirming 1.2 raises the record's minimum to 1.2; from
 * then on 1.1 is refused at FW_FLASH_BEGIN (header), at FW_FLASH_END (a
 * slot written before the raise) and by the loader, which no longer
 * falls back to it; the same version again and newer ones pass. */
static void test_rollback_min_raised_on_confirm(void **state)
{
	const struct mnic_fw_version v12 = { 1, 2, 0, 7 };
	struct boot_choice c;
	struct mnic_bootrec r;
	struct fwupd u;

	(void)state;
	reset_flash(-1);
	bootrec_load(flash, &r);
	assert_int_equal(fwimg_version_cmp(&r.min_version, &(struct mnic_fw_version){ 0 }), 0);
	assert_int_equal(update(img_v2, MNIC_SLOT_A), 0);
	bootrec_load(flash, &r);
	assert_int_equal(r.min_version.minor, 0);          /* not before the confirm */
	assert_int_equal(boot(0, &c), 0);                  /* test boot, no confirm yet */
	bootrec_load(flash, &r);
	assert_int_equal(r.min_version.minor, 0);
	assert_int_equal(boot_confirm(flash, (unsigned)c.slot), 1);
	bootrec_load(flash, &r);
	assert_int_equal(fwimg_version_cmp(&r.min_version, &v12), 0);
	/* 1.1 refused from its header on */
	assert_int_equal(fwupd_begin(&u, flash, &lim, MNIC_SLOT_B,
				     (const struct mnic_fwimg_hdr *)img_v1, (uint32_t)img_len),
			 FWIMG_E_ROLLBACK);
	/* slot A (1.1) no longer verifies: corrupt B and nothing boots */
	assert_int_equal(boot_slot_verify(flash, MNIC_SLOT_A, &lim, NULL), FWIMG_E_ROLLBACK);
	sim.mem[MNIC_FLASH_SLOT_B + 200] ^= 1;
	assert_int_equal(boot_select(flash, &lim, &c), -HAL_ENODEV);
	assert_int_equal(c.refused[MNIC_SLOT_A], FWIMG_E_ROLLBACK);
	sim.mem[MNIC_FLASH_SLOT_B + 200] ^= 1;
	/* the same version and a newer one are accepted */
	assert_int_equal(fwupd_begin(&u, flash, &lim, MNIC_SLOT_B,
				     (const struct mnic_fwimg_hdr *)img_v2, (uint32_t)img_len), 0);
	assert_int_equal(update(img_v3, MNIC_SLOT_B), 0);
}

/* A 1.1 written (and verified) while 1.2 is on trial is refused at END
 * once 1.2 confirms in between; and the minimum never goes down, even
 * when a record with a lower one is stored (bootrec_store keeps the max). */
static void test_rollback_end_and_monotonic(void **state)
{
	struct boot_choice c;
	struct mnic_bootrec r;
	struct fwupd u;

	(void)state;
	reset_flash(-1);
	assert_int_equal(fwupd_begin(&u, flash, &lim, MNIC_SLOT_A,
				     (const struct mnic_fwimg_hdr *)img_v1, (uint32_t)img_len), 0);
	assert_int_equal(fwupd_data(&u, 0, img_v1, (uint32_t)img_len), 0);
	/* the minimum rises while the write is in progress */
	bootrec_load(flash, &r);
	r.min_version = (struct mnic_fw_version){ 1, 2, 0, 0 };
	assert_int_equal(bootrec_store(flash, &r), 0);
	assert_int_equal(fwupd_end(&u), FWIMG_E_ROLLBACK);
	bootrec_load(flash, &r);
	assert_int_equal(r.state[MNIC_SLOT_B], MNIC_SLOT_BAD);
	/* a store carrying a lower minimum keeps the higher one */
	r.min_version = (struct mnic_fw_version){ 0, 0, 0, 0 };
	assert_int_equal(bootrec_store(flash, &r), 0);
	bootrec_load(flash, &r);
	assert_int_equal(r.min_version.minor, 2);
	/* the factory image (1.1) is now below it: nothing bootable */
	assert_int_equal(boot_select(flash, &lim, &c), -HAL_ENODEV);
	assert_int_equal(c.refused[MNIC_SLOT_A], FWIMG_E_ROLLBACK);
}

static void test_update_refusals(void **state)
{
	struct fwupd u;
	struct mnic_fwimg_hdr h;
	struct fwimg_limits other = lim;

	(void)state;
	reset_flash(-1);
	memcpy(&h, img_v2, sizeof(h));
	other.board_id = 2;
	assert_int_equal(fwupd_begin(&u, flash, &other, MNIC_SLOT_A, &h, (uint32_t)img_len),
			 FWIMG_E_BOARD);
	assert_int_equal(fwupd_begin(&u, flash, &lim, MNIC_SLOT_A, &h, 100), FWIMG_E_TRUNCATED);
	assert_int_equal(fwupd_begin(&u, flash, &lim, MNIC_SLOT_A, &h, MNIC_FLASH_SLOT_SIZE + 4),
			 FWIMG_E_OVERSIZED);
	assert_int_equal(fwupd_begin(&u, flash, &lim, MNIC_SLOT_B, &h, (uint32_t)img_len),
			 -HAL_EBUSY);
	assert_int_equal(fwupd_begin(&u, flash, &lim, MNIC_SLOT_A, &h, (uint32_t)img_len), 0);
	assert_int_equal(u.slot, MNIC_SLOT_B);
	assert_int_equal(fwupd_data(&u, 4, img_v2, 4), -HAL_ERANGE);
	assert_int_equal(fwupd_data(&u, 0, img_v2, 6), -HAL_EINVAL);   /* odd, not last */
	assert_int_equal(fwupd_end(&u), -HAL_EAGAIN);
	assert_int_equal(fwupd_data(&u, 0, img_v2, CHUNK), 0);
	assert_int_equal(fwupd_data(&u, CHUNK, img_v2 + CHUNK, (uint32_t)img_len), -HAL_E2BIG);
	/* the rest with one flipped byte: verified after writing, refused, BAD */
	{
		uint8_t *bad = malloc(img_len);
		struct mnic_bootrec r;

		memcpy(bad, img_v2, img_len);
		bad[img_len - 1] ^= 0xff;
		assert_int_equal(fwupd_data(&u, CHUNK, bad + CHUNK, (uint32_t)img_len - CHUNK), 0);
		free(bad);
		assert_int_equal(fwupd_end(&u), FWIMG_E_DIGEST);
		bootrec_load(flash, &r);
		assert_int_equal(r.state[MNIC_SLOT_B], MNIC_SLOT_BAD);
		assert_int_equal(fwupd_activate(flash, MNIC_SLOT_B, 3), -HAL_EINVAL);
		assert_int_equal(fwupd_activate(flash, MNIC_SLOT_A, 3), -HAL_EINVAL);  /* active */
	}
}

/* Whatever happened before, the next boots must find a verified image of
 * one of the two versions, and a confirmed boot leaves a consistent record. */
static void check_recovers(long cut, int healthy, uint8_t *first_minor)
{
	struct boot_choice c;
	struct mnic_bootrec r;

	sim.budget = -1;
	sim.dead = 0;
	for (int i = 0; i < 5; i++) {
		if (boot(healthy, &c) != 0 || c.slot < 0)
			fail_msg("cut after %ld ops: boot %d found nothing bootable", cut, i);
		if (minor_of(&c) != 1 && minor_of(&c) != 2)
			fail_msg("cut after %ld ops: booted version minor %u", cut, minor_of(&c));
		if (i == 0)
			*first_minor = minor_of(&c);
		if (bootrec_load(flash, &r) < 0)
			fail_msg("cut after %ld ops: no valid boot record after boot %d", cut, i);
	}
	if (healthy && r.test != MNIC_SLOT_NONE)
		fail_msg("cut after %ld ops: test slot never confirmed", cut);
}

static void test_power_loss_every_step(void **state)
{
	unsigned total_ops, covered = 0;
	uint8_t first;
	struct boot_choice c;

	(void)state;
	/* the whole sequence without a cut: update, first (test) boot + confirm */
	reset_flash(-1);
	assert_int_equal(update(img_v2, MNIC_SLOT_A), 0);
	assert_int_equal(boot(1, &c), 0);
	total_ops = sim.ops;
	assert_true(total_ops > 80);              /* 2 erases + ~74 programs + records */
	for (long k = 0; k <= (long)total_ops; k++) {
		int rc;

		reset_flash(k);
		rc = update(img_v2, MNIC_SLOT_A);
		if (rc == 0)
			rc = boot(1, &c);
		assert_true(sim.dead || k == (long)total_ops);
		check_recovers(k, 1, &first);
		/* once activation is on flash, the new image is what boots */
		if (rc == 0 || sim.ops > total_ops - 4)
			assert_int_equal(first, 2);
		covered++;
	}
	assert_int_equal(covered, total_ops + 1);
	/* and with a firmware that never confirms: always back on v1 */
	reset_flash(-1);
	assert_int_equal(update(img_v2, MNIC_SLOT_A), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(boot(0, &c), 0);
	total_ops = sim.ops;
	for (long k = 0; k <= (long)total_ops; k++) {
		reset_flash(k);
		if (update(img_v2, MNIC_SLOT_A) == 0)
			for (int i = 0; i < 4 && !sim.dead; i++)
				boot(0, &c);
		check_recovers(k, 0, &first);
		/* five more unconfirmed boots: the test slot has been reverted */
		assert_int_equal(boot(0, &c), 0);
		assert_int_equal(minor_of(&c), 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_copies),
		cmocka_unit_test(test_update_confirm),
		cmocka_unit_test(test_revert_after_n_boots),
		cmocka_unit_test(test_corrupt_slot_refused),
		cmocka_unit_test(test_rollback_min_raised_on_confirm),
		cmocka_unit_test(test_rollback_end_and_monotonic),
		cmocka_unit_test(test_update_refusals),
		cmocka_unit_test(test_power_loss_every_step),
	};
	return cmocka_run_group_tests_name("boot/bootrec", tests, setup, teardown);
}
