/* libFuzzer: the signature TLV parser and the key slot parser
 * (boot/fwsig.c), which the loader and FW_FLASH_END run on bytes the host
 * wrote.  Input: [0, 32) the image digest, [32] which key slot, then the
 * TLV area.  Key slot 0 is provisioned with RFC 8032 7.1's TEST 1 and 2
 * public keys (the second revoked when bit 0 of byte 32 is set); key slot
 * 1 is the first 128 bytes of the TLV area read as a key slot (corrupt
 * slots, revocation, small-order keys).  Seeds in
 * tests/fuzz/corpus/fuzz_fwsig (README). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/fwimage.h"
#include "boot/fwsig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t rfc_keys[2][32] = {
	{ 0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07,
	  0x3a, 0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07,
	  0x51, 0x1a },
	{ 0x3d, 0x40, 0x17, 0xc3, 0xe8, 0x43, 0x89, 0x5a, 0x92, 0xb7, 0x0a, 0xa7, 0x4d, 0x1b, 0x7e,
	  0xbc, 0x9c, 0x98, 0x2c, 0xcf, 0x2e, 0xc4, 0x96, 0x8c, 0xc0, 0xcd, 0x55, 0xf1, 0x2a, 0xf4,
	  0x66, 0x0c },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t versions[2] = { 2, 1 };
	struct mnic_keyslot slot;
	struct fwsig_keys keys;
	uint8_t *tlv;
	uint32_t len;

	if (size < 33)
		return 0;
	len = (uint32_t)(size - 33 < MNIC_FWIMG_TLV_MAX ? size - 33 : MNIC_FWIMG_TLV_MAX);
	tlv = malloc(len ? len : 1);   /* exactly len bytes: ASan sees any over-read */
	if (!tlv)
		return 0;
	memcpy(tlv, data + 33, len);
	if (data[32] & 2) {
		fwsig_keys_load(&keys, len >= sizeof(slot) ? (const void *)tlv : NULL);
	} else {
		fwsig_keyslot_build(&slot, rfc_keys, versions, 2, data[32] & 1 ? 2 : 0);
		fwsig_keys_load(&keys, &slot);
	}
	fwsig_check(&keys, data, len ? tlv : NULL, len);
	free(tlv);
	return 0;
}
