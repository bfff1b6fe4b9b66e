/* Signed firmware images: the board's key slot (mnic/fwimage.h, struct
 * mnic_keyslot, in the boot flash beside the loader) and the check of an
 * image's signature TLVs against it.  Pure C on lib/ed25519.c and
 * lib/sha256.c: the loader, the firmware (FW_FLASH_END, FW_ACTIVATE, the
 * self-test) and mnicctl (`image verify --pubkey`) run this same code.
 * docs/firmware-images.md, "Signed images". */
#ifndef BOOT_FWSIG_H
#define BOOT_FWSIG_H

#include <stdint.h>

#include "mnic/fwimage.h"

/* What the board does with an image's signature, decided by its key slot. */
enum fwsig_policy {
	FWSIG_OPEN = 0,                /* no key slot: digest only (documented policy) */
	FWSIG_ENFORCED = 1,            /* a key slot: a valid signature by one of its keys */
	FWSIG_LOCKED = 2,              /* a corrupt slot, or every key revoked: refuse all */
};

struct fwsig_keys {
	uint8_t policy;                /* enum fwsig_policy */
	struct mnic_keyslot slot;      /* as read from flash (ENFORCED, LOCKED) */
	uint8_t keyhash[MNIC_KEYSLOT_KEYS][32];   /* SHA-256 of each key in use */
};

/* Classify the 128 bytes of a key slot as read from flash (NULL: the
 * board has no boot flash): fills *k, returns its policy. */
int fwsig_keys_load(struct fwsig_keys *k, const void *slot);

/* The TLV area's signature of digest under k: FWIMG_OK, or
 * FWIMG_E_KEYSLOT (LOCKED), FWIMG_E_TLV (a KEYHASH or ED25519 TLV of the
 * wrong length, or twice), FWIMG_E_UNSIGNED, FWIMG_E_SIG_KEY,
 * FWIMG_E_SIG_REVOKED, FWIMG_E_SIG_BAD.  OPEN accepts anything (the
 * digest was checked by the caller).  tlv NULL / tlv_len 0: no area. */
int fwsig_check(const struct fwsig_keys *k, const uint8_t digest[32], const uint8_t *tlv,
		uint32_t tlv_len);

/* Fill a key slot (CRC included) for provisioning: n keys of the given
 * versions (mnicctl image keyslot, the tests). */
void fwsig_keyslot_build(struct mnic_keyslot *s, const uint8_t (*pubkeys)[32],
			 const uint32_t *versions, unsigned n, uint32_t revoked_below);

#endif
