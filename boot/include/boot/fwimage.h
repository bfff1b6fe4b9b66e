/* Firmware image parser and builder helpers (mnic/fwimage.h format).
 * Pure C, no allocation: the loader runs it on memory-mapped flash, the
 * firmware on the slot it just wrote, mnicctl on a file.  Every check has
 * its own error so a refusal says what to fix. */
#ifndef BOOT_FWIMAGE_H
#define BOOT_FWIMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "mnic/fwimage.h"

/* Every check has its own error (the list is in the ABI, mnic/fwimage.h:
 * the device answers FW_FLASH_* refusals with site MNIC_FW_SITE_IMAGE + N,
 * so the host's drivers name them too). */
#define FWIMG_ERR_LIST(X) MNIC_FWIMG_ERR_LIST(X)

#define FWIMG_ENUM_(name, text) name,
enum fwimg_err { FWIMG_ERR_LIST(FWIMG_ENUM_) FWIMG_NUM_ERRS };
#undef FWIMG_ENUM_

struct fwsig_keys;

/* What the consumer accepts.  board_id 0: any board (host tools); ram_end
 * 0: no load-range check; keys NULL: no signature checked (boot/fwsig.h:
 * the board's key slot and its policy); min_version 0: no anti-rollback. */
struct fwimg_limits {
	uint32_t board_id;
	uint32_t max_image;            /* header + payload + TLV area (slot size) */
	uint64_t ram_base, ram_end;    /* payload must fit in [ram_base, ram_end) */
	const struct fwsig_keys *keys;
	struct mnic_fw_version min_version;
};

struct fwimg_info {
	struct mnic_fwimg_hdr hdr;
	uint32_t tlv_off;              /* offset of the TLV area, 0 if none */
	uint32_t tlv_len;
	uint32_t image_len;            /* header + payload + TLV area */
};

const char *fwimg_strerror(int err);   /* err: enum fwimg_err (either sign) */

/* Header checks, no digest: magic, version, size, reserved, board, size
 * limit, load range, version not below lim->min_version.  Returns
 * FWIMG_OK or an enum fwimg_err. */
int fwimg_check_hdr(const struct mnic_fwimg_hdr *h, const struct fwimg_limits *lim);

/* The whole image in [img, img + len): header checks, payload present,
 * digest, TLV area bounds, then the signature by lim->keys' policy.  Bytes after the image are allowed here (a slot
 * is larger than its image); a file's caller compares info->image_len with
 * the file size.  Fills *info (may be NULL).  FWIMG_OK or an error. */
int fwimg_verify(const uint8_t *img, size_t len, const struct fwimg_limits *lim,
		 struct fwimg_info *info);

/* The image digest: SHA-256 of the header with digest zeroed, then payload. */
void fwimg_digest(const struct mnic_fwimg_hdr *h, const uint8_t *payload, uint8_t out[32]);

/* TLV walk over a TLV area of len bytes (info included): calls fn for each
 * TLV; returns FWIMG_OK, FWIMG_E_TLV, or fn's non-zero value. */
typedef int (*fwimg_tlv_fn)(void *ctx, uint16_t type, const uint8_t *value, uint16_t len);
int fwimg_tlv_walk(const uint8_t *area, uint32_t len, fwimg_tlv_fn fn, void *ctx);

int fwimg_version_cmp(const struct mnic_fw_version *a, const struct mnic_fw_version *b);

#endif
