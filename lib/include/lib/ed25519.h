/* Ed25519 signature verification (RFC 8032 5.1.7), portable C, no
 * allocation, no libc beyond memcpy/memset/memcmp: the device side of
 * `mnicctl image sign` (which signs with libsodium on the host).  Used by
 * the loader and the firmware (boot/fwsig.c) to check firmware images.
 *
 * Verify only.  Every input of a verification (public key, message,
 * signature) is public, so nothing here needs to run in constant time;
 * the code branches on data freely (docs/firmware-images.md). */
#ifndef LIB_ED25519_H
#define LIB_ED25519_H

#include <stddef.h>
#include <stdint.h>

#define ED25519_PUBKEY_LEN 32u
#define ED25519_SIG_LEN    64u

/* 0: sig (R || S) is a valid signature of msg under pub; -1: it is not,
 * or pub is not a usable key (not a point, small order), or S >= L. */
int ed25519_verify(const uint8_t sig[ED25519_SIG_LEN], const void *msg, size_t len,
		   const uint8_t pub[ED25519_PUBKEY_LEN]);
/* 0: pub decodes to a point of the curve outside the small-order
 * subgroup (what a key slot may hold); -1 otherwise. */
int ed25519_pubkey_check(const uint8_t pub[ED25519_PUBKEY_LEN]);

#endif
