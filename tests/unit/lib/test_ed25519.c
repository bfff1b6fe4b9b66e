/* lib/sha512.c and lib/ed25519.c (the device's signature verifier)
 * against independent answers: the FIPS 180-4 SHA-512 examples, RFC 8032
 * 7.1's Ed25519 vectors, and libsodium (Debian's libsodium-dev, the
 * library `mnicctl image sign` uses) for hashes of every length and
 * signatures of random keys and messages, valid and corrupted. */
#include "cmocka_main.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ed25519.h"
#include "lib/sha512.h"

static void unhex(const char *h, uint8_t *out, size_t n)
{
	size_t i;

	assert_int_equal(strlen(h), 2 * n);
	for (i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(h + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static void check_sha(const void *msg, size_t len, const char *want)
{
	uint8_t d[64], w[64];

	unhex(want, w, sizeof(w));
	sha512(msg, len, d);
	assert_memory_equal(d, w, sizeof(d));
}

/* FIPS 180-4 / NIST CSRC examples: "abc", the 896-bit two-block message,
 * the empty message, one million 'a'. */
static void test_sha512_vectors(void **state)
{
	static const char m896[] = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
				   "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	char *million = malloc(1000000);

	(void)state;
	check_sha("abc", 3, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
			    "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
	check_sha(m896, strlen(m896),
		  "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
		  "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909");
	check_sha("", 0, "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
			 "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e");
	assert_non_null(million);
	memset(million, 'a', 1000000);
	check_sha(million, 1000000,
		  "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
		  "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b");
	free(million);
}

/* Every length 0..300 (each padding case: fill past 112, exactly 128...),
 * in one shot and split at every third point, against libsodium. */
static void test_sha512_vs_libsodium(void **state)
{
	uint8_t msg[300], want[64], got[64];
	struct sha512 s;
	size_t len, cut;

	(void)state;
	randombytes_buf(msg, sizeof(msg));
	for (len = 0; len <= sizeof(msg); len++) {
		crypto_hash_sha512(want, msg, len);
		sha512(msg, len, got);
		assert_memory_equal(got, want, 64);
		for (cut = 0; cut <= len; cut += 3) {
			sha512_init(&s);
			sha512_update(&s, msg, cut);
			sha512_update(&s, msg + cut, len - cut);
			sha512_final(&s, got);
			assert_memory_equal(got, want, 64);
		}
	}
}

/* RFC 8032 7.1, TEST 1-3: secret seed, public key, message, signature. */
static const struct {
	const char *seed, *pub, *msg, *sig;
} rfc8032[] = {
	{ "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
	  "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
	  "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39"
	  "701cf9b46bd25bf5f0595bbe24655141438e7a100b" },
	{ "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
	  "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
	  "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f36"
	  "13d0f11d8c387b2eaeb4302aeeb00d291612bb0c00" },
	{ "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
	  "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
	  "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f7"
	  "60984dc6594a7c15e9716ed28dc027beceea1ec40a" },
};

static void test_ed25519_rfc8032(void **state)
{
	uint8_t seed[32], pub[32], sk[64], pk[32], msg[2], sig[64], ssig[64];
	size_t i, mlen;

	(void)state;
	for (i = 0; i < sizeof(rfc8032) / sizeof(rfc8032[0]); i++) {
		unhex(rfc8032[i].seed, seed, 32);
		unhex(rfc8032[i].pub, pub, 32);
		mlen = strlen(rfc8032[i].msg) / 2;
		unhex(rfc8032[i].msg, msg, mlen);
		unhex(rfc8032[i].sig, sig, 64);
		/* the transcription agrees with libsodium (deterministic signing) */
		crypto_sign_seed_keypair(pk, sk, seed);
		assert_memory_equal(pk, pub, 32);
		crypto_sign_detached(ssig, NULL, msg, mlen, sk);
		assert_memory_equal(ssig, sig, 64);
		assert_int_equal(ed25519_pubkey_check(pub), 0);
		assert_int_equal(ed25519_verify(sig, msg, mlen, pub), 0);
		sig[63] ^= 0x01;
		assert_int_equal(ed25519_verify(sig, msg, mlen, pub), -1);
	}
}

/* Random keys and messages signed by libsodium: ours accepts exactly
 * what libsodium accepts, including after a one-bit flip anywhere in the
 * signature, the message or the key. */
static void test_ed25519_vs_libsodium(void **state)
{
	uint8_t pk[32], sk[64], sig[64], msg[97];
	unsigned n, bit;
	size_t len;

	(void)state;
	for (n = 0; n < 64; n++) {
		len = n % sizeof(msg);
		crypto_sign_keypair(pk, sk);
		randombytes_buf(msg, sizeof(msg));
		crypto_sign_detached(sig, NULL, msg, len, sk);
		assert_int_equal(ed25519_verify(sig, msg, len, pk), 0);
		bit = randombytes_uniform(64 * 8);
		sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(ed25519_verify(sig, msg, len, pk),
				 crypto_sign_verify_detached(sig, msg, len, pk));
		assert_int_equal(ed25519_verify(sig, msg, len, pk), -1);
		sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (len) {
			bit = randombytes_uniform((uint32_t)len * 8);
			msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			assert_int_equal(ed25519_verify(sig, msg, len, pk), -1);
			msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		bit = randombytes_uniform(32 * 8);
		pk[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(ed25519_verify(sig, msg, len, pk), -1);
		pk[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(ed25519_verify(sig, msg, len, pk), 0);
	}
}

/* RFC 8032 5.1.7 step 1: S must be below L.  S + L verifies the same
 * equation; both libsodium and ours refuse it. */
static void test_ed25519_s_not_reduced(void **state)
{
	static const uint8_t L[32] = {
		0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9,
		0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
	};
	uint8_t pk[32], sk[64], sig[64];
	unsigned i, c;

	(void)state;
	crypto_sign_keypair(pk, sk);
	crypto_sign_detached(sig, NULL, (const uint8_t *)"m", 1, sk);
	/* S < L < 2^253, so S + L < 2^254 still fits the 32 bytes */
	for (i = 0, c = 0; i < 32; i++) {
		c += sig[32 + i] + L[i];
		sig[32 + i] = (uint8_t)c;
		c >>= 8;
	}
	assert_int_equal(c, 0);
	assert_int_equal(ed25519_verify(sig, "m", 1, pk), -1);
	assert_int_not_equal(crypto_sign_verify_detached(sig, (const uint8_t *)"m", 1, pk), 0);
}

/* Keys that are not usable: a y >= p (non-canonical), a y with no x on
 * the curve, the identity and the other small-order point encodings. */
static void test_ed25519_bad_keys(void **state)
{
	uint8_t k[32], pk[32], sk[64], sig[64];

	(void)state;
	crypto_sign_keypair(pk, sk);
	crypto_sign_detached(sig, NULL, (const uint8_t *)"m", 1, sk);
	memset(k, 0xff, sizeof(k));             /* y = 2^255 - 1 >= p */
	k[31] = 0x7f;
	assert_int_equal(ed25519_pubkey_check(k), -1);
	k[0] = 0xed;                            /* y = p */
	assert_int_equal(ed25519_pubkey_check(k), -1);
	memset(k, 0, sizeof(k));
	k[0] = 1;                               /* identity (0, 1): small order */
	assert_int_equal(ed25519_pubkey_check(k), -1);
	assert_int_equal(ed25519_verify(sig, "m", 1, k), -1);
	k[0] = 0xec;                            /* y = -1 = (0, -1): order 2 */
	memset(k + 1, 0xff, 30);
	k[31] = 0x7f;
	assert_int_equal(ed25519_pubkey_check(k), -1);
	memset(k, 0, sizeof(k));
	k[0] = 2;                               /* y = 2: x^2 = 3 / (4d + 1), no root */
	assert_int_equal(ed25519_pubkey_check(k), crypto_core_ed25519_is_valid_point(k) ? 0 : -1);
	assert_int_equal(ed25519_pubkey_check(pk), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha512_vectors),
		cmocka_unit_test(test_sha512_vs_libsodium),
		cmocka_unit_test(test_ed25519_rfc8032),
		cmocka_unit_test(test_ed25519_vs_libsodium),
		cmocka_unit_test(test_ed25519_s_not_reduced),
		cmocka_unit_test(test_ed25519_bad_keys),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
