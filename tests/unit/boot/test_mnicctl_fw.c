/* mnicctl_fw.c: the X.Y.Z[+N] version parser, and keygen | sign |
 * keyslot | verify agreeing with the device's own check (boot/fwsig.c) on
 * files in a temporary directory. */
#include "cmocka_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/fwimage.h"
#include "boot/fwsig.h"
#include "mnicctl_fw.h"

static void test_versions(void **state)
{
	static const struct {
		const char *s;
		int ok;
		unsigned maj, min, patch, build;
	} t[] = {
		{ "1.2.3", 1, 1, 2, 3, 0 },
		{ "1.2.3+4", 1, 1, 2, 3, 4 },
		{ "255.255.65535+4294967295", 1, 255, 255, 65535, 4294967295u },
		{ "0.0.0+0", 1, 0, 0, 0, 0 },
		{ "256.0.0", 0, 0, 0, 0, 0 },
		{ "1.256.0", 0, 0, 0, 0, 0 },
		{ "1.2.65536", 0, 0, 0, 0, 0 },
		{ "1.2.3+4294967296", 0, 0, 0, 0, 0 },
		{ "1.2", 0, 0, 0, 0, 0 },
		{ "1.2.3+", 0, 0, 0, 0, 0 },
		{ "1.2.3-rc1", 0, 0, 0, 0, 0 },
		{ "-1.2.3", 0, 0, 0, 0, 0 },
		{ "1..3", 0, 0, 0, 0, 0 },
		{ "", 0, 0, 0, 0, 0 },
		{ "1.2.3+4 ", 0, 0, 0, 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t maj = 9, min = 9;
		uint16_t patch = 9;
		uint32_t build = 9;
		int rc = mnicctl_fw_parse_version(t[i].s, &maj, &min, &patch, &build);

		if (!t[i].ok) {
			if (rc != -1)
				fail_msg("'%s' accepted", t[i].s);
			continue;
		}
		if (rc != 0 || maj != t[i].maj || min != t[i].min || patch != t[i].patch ||
		    build != t[i].build)
			fail_msg("'%s' -> %d %u.%u.%u+%u", t[i].s, rc, maj, min, patch, build);
	}
}

static char dir[64];

static const char *path(const char *name)
{
	static char p[4][128];
	static unsigned i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static int image(int argc, const char **argv)
{
	struct mnicctl_opts o;

	memset(&o, 0, sizeof(o));
	return mnicctl_fw_image(&o, argc, argv);
}

static uint8_t *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	uint8_t *b;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc(*len);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

static void spit(const char *p, const void *b, size_t len)
{
	FILE *f = fopen(p, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
}

/* An image for board 1, signed by k1; k1 provisioned (version 3) in a
 * zeroed flash0 file: the device's check of the key slot it reads back
 * agrees with `image verify --pubkey`, for the good image and after one
 * signature bit flips; keys of another signer are refused by both. */
static void test_signed_keygen_sign_keyslot_verify(void **state)
{
	uint8_t raw[MNIC_FWIMG_HDR_SIZE + 512], *b, *f0;
	struct mnic_fwimg_hdr h;
	struct fwimg_info info;
	struct fwsig_keys keys;
	struct fwimg_limits lim = { .keys = &keys };
	size_t len, f0len;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.magic = MNIC_FWIMG_MAGIC;
	h.hdr_version = MNIC_FWIMG_HDR_VERSION;
	h.hdr_size = MNIC_FWIMG_HDR_SIZE;
	h.board_id = 1;
	h.load_addr = h.entry = 0x40200000;
	h.payload_size = 512;
	for (unsigned i = 0; i < 512; i++)
		raw[sizeof(h) + i] = (uint8_t)i;
	fwimg_digest(&h, raw + sizeof(h), h.digest);
	memcpy(raw, &h, sizeof(h));
	spit(path("fw.img"), raw, sizeof(raw));
	f0 = calloc(1, MNIC_BOOTROM_KEYSLOT + 4096);
	assert_non_null(f0);
	spit(path("flash0.bin"), f0, MNIC_BOOTROM_KEYSLOT + 4096);
	free(f0);

	assert_int_equal(image(4, (const char *[]){ "image", "keygen", "-o", path("k1") }), 0);
	assert_int_equal(image(4, (const char *[]){ "image", "keygen", "-o", path("k2") }), 0);
	assert_int_equal(image(5, (const char *[]){ "image", "sign", "--key", path("k1"),
						   path("fw.img") }), 0);
	assert_int_equal(image(5, (const char *[]){ "image", "keyslot", path("flash0.bin"),
						   "--pubkey", path("k1.pub:3") }), 0);
	/* every key revoked: refused, the file unchanged */
	assert_int_equal(image(7, (const char *[]){ "image", "keyslot", path("flash0.bin"),
						   "--pubkey", path("k2.pub:1"), "--revoke-below",
						   "2" }), 1);
	f0 = slurp(path("flash0.bin"), &f0len);
	assert_int_equal(fwsig_keys_load(&keys, f0 + MNIC_BOOTROM_KEYSLOT), FWSIG_ENFORCED);
	assert_int_equal(keys.slot.key[0].key_version, 3);
	free(f0);

	b = slurp(path("fw.img"), &len);
	assert_int_equal(fwimg_verify(b, len, &lim, &info), FWIMG_OK);
	assert_int_equal(image(5, (const char *[]){ "image", "verify", "--pubkey", path("k1.pub"),
						   path("fw.img") }), 0);
	assert_int_equal(image(5, (const char *[]){ "image", "verify", "--pubkey", path("k2.pub"),
						   path("fw.img") }), 1);
	b[len - 3] ^= 0x20;                       /* a signature bit */
	spit(path("bad.img"), b, len);
	assert_int_equal(fwimg_verify(b, len, &lim, NULL), FWIMG_E_SIG_BAD);
	assert_int_equal(image(5, (const char *[]){ "image", "verify", "--pubkey", path("k1.pub"),
						   path("bad.img") }), 1);
	free(b);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_mnicctl_fw.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	static const char *const names[] = { "fw.img", "bad.img", "flash0.bin", "k1", "k1.pub",
					      "k2", "k2.pub" };

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(path(names[i]));
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
		cmocka_unit_test_setup_teardown(test_signed_keygen_sign_keyslot_verify, setup,
						teardown),
	};
	return cmocka_run_group_tests_name("hostdrv/mnicctl_fw", tests, NULL, NULL);
}
