/* Key slot and image signature check (boot/fwsig.h).
 *
 * The TLV area is hostile (it is outside the digest): fwimg_tlv_walk
 * bounds every TLV; here each signature TLV must have its exact length
 * and appear at most once, so an image never carries two candidate
 * signatures.  The KEYHASH only selects which provisioned key to try; the
 * ED25519 signature of the 32 digest bytes must then verify under that key
 * (RFC 8032 5.1.7), so a forged KEYHASH buys nothing. */
#include <string.h>

#include "boot/fwimage.h"
#include "boot/fwsig.h"
#include "lib/crc32.h"
#include "lib/ed25519.h"
#include "lib/sha256.h"

#define SLOT_CRC_LEN offsetof(struct mnic_keyslot, crc)

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

static int slot_usable(const struct mnic_keyslot *s)
{
	unsigned i, live = 0;

	if (s->version != MNIC_KEYSLOT_VERSION || s->size != sizeof(*s) || s->reserved0 ||
	    !all_zero(s->reserved1, sizeof(s->reserved1)) ||
	    s->crc != crc32_ieee(0, s, SLOT_CRC_LEN))
		return 0;
	for (i = 0; i < MNIC_KEYSLOT_KEYS; i++) {
		const struct mnic_keyslot_key *k = &s->key[i];

		if (k->key_version == 0)
			continue;
		if (k->reserved || ed25519_pubkey_check(k->pubkey) != 0)
			return 0;
		live += k->key_version >= s->revoked_below;
	}
	return live > 0;
}

int fwsig_keys_load(struct fwsig_keys *k, const void *slot)
{
	unsigned i;

	memset(k, 0, sizeof(*k));
	k->policy = FWSIG_OPEN;
	if (!slot)
		return k->policy;
	memcpy(&k->slot, slot, sizeof(k->slot));
	if (k->slot.magic != MNIC_KEYSLOT_MAGIC)
		return k->policy;      /* erased or never provisioned */
	if (!slot_usable(&k->slot)) {
		k->policy = FWSIG_LOCKED;
		return k->policy;
	}
	for (i = 0; i < MNIC_KEYSLOT_KEYS; i++)
		if (k->slot.key[i].key_version)
			sha256(k->slot.key[i].pubkey, 32, k->keyhash[i]);
	k->policy = FWSIG_ENFORCED;
	return k->policy;
}

struct found {
	const uint8_t *keyhash, *sig;
};

static int collect(void *ctx, uint16_t type, const uint8_t *value, uint16_t len)
{
	struct found *f = ctx;
	const uint8_t **slot;
	uint16_t want;

	if (type == MNIC_FWIMG_TLV_KEYHASH) {
		slot = &f->keyhash;
		want = 32;
	} else if (type == MNIC_FWIMG_TLV_ED25519) {
		slot = &f->sig;
		want = ED25519_SIG_LEN;
	} else {
		return 0;              /* other TLVs are not ours to judge */
	}
	if (len != want || *slot)
		return FWIMG_E_TLV;
	*slot = value;
	return 0;
}

int fwsig_check(const struct fwsig_keys *k, const uint8_t digest[32], const uint8_t *tlv,
		uint32_t tlv_len)
{
	const struct mnic_keyslot_key *key = NULL;
	struct found f = { NULL, NULL };
	unsigned i;
	int rc;

	if (k->policy == FWSIG_OPEN)
		return FWIMG_OK;
	if (k->policy != FWSIG_ENFORCED)
		return FWIMG_E_KEYSLOT;
	if (tlv && tlv_len && (rc = fwimg_tlv_walk(tlv, tlv_len, collect, &f)) != FWIMG_OK)
		return rc;
	if (!f.keyhash || !f.sig)
		return FWIMG_E_UNSIGNED;
	for (i = 0; i < MNIC_KEYSLOT_KEYS && !key; i++)
		if (k->slot.key[i].key_version && memcmp(k->keyhash[i], f.keyhash, 32) == 0)
			key = &k->slot.key[i];
	if (!key)
		return FWIMG_E_SIG_KEY;
	if (key->key_version < k->slot.revoked_below)
		return FWIMG_E_SIG_REVOKED;
	if (ed25519_verify(f.sig, digest, 32, key->pubkey) != 0)
		return FWIMG_E_SIG_BAD;
	return FWIMG_OK;
}

void fwsig_keyslot_build(struct mnic_keyslot *s, const uint8_t (*pubkeys)[32],
			 const uint32_t *versions, unsigned n, uint32_t revoked_below)
{
	unsigned i;

	memset(s, 0, sizeof(*s));
	s->magic = MNIC_KEYSLOT_MAGIC;
	s->version = MNIC_KEYSLOT_VERSION;
	s->size = sizeof(*s);
	s->revoked_below = revoked_below;
	for (i = 0; i < n && i < MNIC_KEYSLOT_KEYS; i++) {
		s->key[i].key_version = versions[i];
		memcpy(s->key[i].pubkey, pubkeys[i], 32);
	}
	s->crc = crc32_ieee(0, s, SLOT_CRC_LEN);
}
