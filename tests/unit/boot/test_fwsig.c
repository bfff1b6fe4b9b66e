/* boot/fwsig.c: the key slot's policy and the signature check, on images
 * signed by libsodium exactly as `mnicctl image sign` signs them (KEYHASH
 * = SHA-256 of the public key, ED25519 = signature of the digest), through
 * fwimg_verify as the loader, FW_FLASH_END and FW_ACTIVATE call it. */
#include "cmocka_main.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "boot/fwimage.h"
#include "boot/fwsig.h"
#include "lib/crc32.h"
#include "lib/sha256.h"

#define PAYLOAD 3000u
#define TLV_LEN (8u + 4u + 32u + 4u + 64u)

static uint8_t pk[2][32], sk[2][64], img[MNIC_FWIMG_HDR_SIZE + PAYLOAD + TLV_LEN + 64];

static size_t make_unsigned(void)
{
	struct mnic_fwimg_hdr h;

	memset(&h, 0, sizeof(h));
	h.magic = MNIC_FWIMG_MAGIC;
	h.hdr_version = MNIC_FWIMG_HDR_VERSION;
	h.hdr_size = MNIC_FWIMG_HDR_SIZE;
	h.board_id = 1;
	h.version = (struct mnic_fw_version){ 1, 2, 3, 4 };
	h.load_addr = h.entry = 0x40200000;
	h.payload_size = PAYLOAD;
	for (uint32_t i = 0; i < PAYLOAD; i++)
		img[sizeof(h) + i] = (uint8_t)(i * 7);
	fwimg_digest(&h, img + sizeof(h), h.digest);
	memcpy(img, &h, sizeof(h));
	return sizeof(h) + PAYLOAD;
}

/* the TLV area of `mnicctl image sign` with key k */
static size_t make_signed(unsigned k)
{
	size_t n = make_unsigned();
	struct mnic_fwimg_tlv_info ti = { MNIC_FWIMG_TLV_MAGIC, 0, TLV_LEN };
	struct mnic_fwimg_tlv t;

	memcpy(img + n, &ti, sizeof(ti));
	t = (struct mnic_fwimg_tlv){ MNIC_FWIMG_TLV_KEYHASH, 32 };
	memcpy(img + n + 8, &t, 4);
	sha256(pk[k], 32, img + n + 12);
	t = (struct mnic_fwimg_tlv){ MNIC_FWIMG_TLV_ED25519, 64 };
	memcpy(img + n + 44, &t, 4);
	crypto_sign_detached(img + n + 48, NULL, ((struct mnic_fwimg_hdr *)img)->digest, 32,
			     sk[k]);
	return n + TLV_LEN;
}

static struct fwsig_keys keys;
static struct mnic_keyslot slot;

/* key 0 provisioned at version 1 */
static void provision(uint32_t revoked_below)
{
	const uint32_t ver[1] = { 1 };

	fwsig_keyslot_build(&slot, (const uint8_t (*)[32])pk, ver, 1, revoked_below);
	fwsig_keys_load(&keys, &slot);
}

static int verify(size_t len)
{
	struct fwimg_limits lim = { .board_id = 1, .keys = &keys };

	return fwimg_verify(img, len, &lim, NULL);
}

static void test_signed_accepted(void **state)
{
	(void)state;
	provision(0);
	assert_int_equal(keys.policy, FWSIG_ENFORCED);
	assert_int_equal(verify(make_signed(0)), FWIMG_OK);
}

static void test_signed_unsigned_refused(void **state)
{
	size_t n;

	(void)state;
	provision(0);
	assert_int_equal(verify(make_unsigned()), FWIMG_E_UNSIGNED);
	/* a TLV area with a KEYHASH only, or an ED25519 only: still unsigned */
	n = make_signed(0);
	((struct mnic_fwimg_tlv *)(img + n - 68))->type = 0;   /* ED25519 -> unknown */
	assert_int_equal(verify(n), FWIMG_E_UNSIGNED);
	n = make_signed(0);
	((struct mnic_fwimg_tlv *)(img + n - TLV_LEN + 8))->type = 0x7f;
	assert_int_equal(verify(n), FWIMG_E_UNSIGNED);
}

static void test_signed_wrong_key(void **state)
{
	(void)state;
	provision(0);
	assert_int_equal(verify(make_signed(1)), FWIMG_E_SIG_KEY);
	/* key 1's signature under key 0's KEYHASH: the hash only selects */
	{
		size_t n = make_signed(1);

		sha256(pk[0], 32, img + n - TLV_LEN + 12);
		assert_int_equal(verify(n), FWIMG_E_SIG_BAD);
	}
}

/* one-bit flips: a header or payload bit breaks the digest (refused
 * before the signature is looked at), a signature or KEYHASH bit the
 * signature check */
static void test_signed_bit_flips(void **state)
{
	size_t n, bit;

	(void)state;
	provision(0);
	n = make_signed(0);
	for (bit = 0; bit < 8 * (MNIC_FWIMG_HDR_SIZE + PAYLOAD); bit += 97) {
		int rc;

		make_signed(0);
		img[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		rc = verify(n);
		assert_true(rc != FWIMG_OK);
	}
	for (bit = 0; bit < 8 * 64; bit++) {
		make_signed(0);
		img[n - 64 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(verify(n), FWIMG_E_SIG_BAD);
	}
	make_signed(0);
	img[n - TLV_LEN + 12 + 5] ^= 0x10;          /* KEYHASH */
	assert_int_equal(verify(n), FWIMG_E_SIG_KEY);
	/* a header bit with the digest recomputed (a forger's edit): the
	 * digest passes, the signature does not */
	make_signed(0);
	{
		struct mnic_fwimg_hdr h;

		memcpy(&h, img, sizeof(h));
		h.version.build ^= 1;
		fwimg_digest(&h, img + sizeof(h), h.digest);
		memcpy(img, &h, sizeof(h));
	}
	assert_int_equal(verify(n), FWIMG_E_SIG_BAD);
}

static void test_signed_duplicate_tlv(void **state)
{
	size_t n;

	(void)state;
	provision(0);
	n = make_signed(0);
	/* turn the KEYHASH into a second ED25519 of the wrong length */
	((struct mnic_fwimg_tlv *)(img + n - TLV_LEN + 8))->type = MNIC_FWIMG_TLV_ED25519;
	assert_int_equal(verify(n), FWIMG_E_TLV);
	n = make_signed(0);
	((struct mnic_fwimg_tlv *)(img + n - 68))->type = MNIC_FWIMG_TLV_KEYHASH;  /* len 64 */
	assert_int_equal(verify(n), FWIMG_E_TLV);
}

/* Two keys, the older revoked by the counter: its images are refused,
 * the newer key's pass. */
static void test_signed_revoked_key(void **state)
{
	const uint32_t ver[2] = { 1, 2 };

	(void)state;
	fwsig_keyslot_build(&slot, (const uint8_t (*)[32])pk, ver, 2, 2);
	assert_int_equal(fwsig_keys_load(&keys, &slot), FWSIG_ENFORCED);
	assert_int_equal(verify(make_signed(0)), FWIMG_E_SIG_REVOKED);
	assert_int_equal(verify(make_signed(1)), FWIMG_OK);
	fwsig_keyslot_build(&slot, (const uint8_t (*)[32])pk, ver, 2, 1);
	fwsig_keys_load(&keys, &slot);
	assert_int_equal(verify(make_signed(0)), FWIMG_OK);
}

/* The documented policy: no slot (erased or zero bank) = open, digest
 * only; a slot with its magic but anything wrong, or every key revoked =
 * locked, every image refused. */
static void test_signed_keyslot_policy(void **state)
{
	uint8_t erased[128];
	struct mnic_keyslot s;

	(void)state;
	assert_int_equal(fwsig_keys_load(&keys, NULL), FWSIG_OPEN);
	memset(erased, 0xff, sizeof(erased));
	assert_int_equal(fwsig_keys_load(&keys, erased), FWSIG_OPEN);
	memset(erased, 0, sizeof(erased));
	assert_int_equal(fwsig_keys_load(&keys, erased), FWSIG_OPEN);
	assert_int_equal(verify(make_unsigned()), FWIMG_OK);
	assert_int_equal(verify(make_signed(1)), FWIMG_OK);

	provision(0);
	s = slot;
	s.crc ^= 1;
	assert_int_equal(fwsig_keys_load(&keys, &s), FWSIG_LOCKED);
	assert_int_equal(verify(make_signed(0)), FWIMG_E_KEYSLOT);
	s = slot;
	s.version = 2;
	s.crc = crc32_ieee(0, &s, offsetof(struct mnic_keyslot, crc));
	assert_int_equal(fwsig_keys_load(&keys, &s), FWSIG_LOCKED);
	s = slot;
	memset(s.key[0].pubkey, 0xff, 32);          /* y >= p: never a key */
	s.key[0].pubkey[31] = 0x7f;
	s.crc = crc32_ieee(0, &s, offsetof(struct mnic_keyslot, crc));
	assert_int_equal(fwsig_keys_load(&keys, &s), FWSIG_LOCKED);
	provision(2);                               /* key version 1 < 2: all revoked */
	assert_int_equal(keys.policy, FWSIG_LOCKED);
	assert_int_equal(verify(make_signed(0)), FWIMG_E_KEYSLOT);
	assert_int_equal(verify(make_unsigned()), FWIMG_E_KEYSLOT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signed_accepted),
		cmocka_unit_test(test_signed_unsigned_refused),
		cmocka_unit_test(test_signed_wrong_key),
		cmocka_unit_test(test_signed_bit_flips),
		cmocka_unit_test(test_signed_duplicate_tlv),
		cmocka_unit_test(test_signed_revoked_key),
		cmocka_unit_test(test_signed_keyslot_policy),
	};

	if (sodium_init() < 0)
		return 1;
	crypto_sign_keypair(pk[0], sk[0]);
	crypto_sign_keypair(pk[1], sk[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
