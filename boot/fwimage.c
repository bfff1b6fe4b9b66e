/* Firmware image checks (mnic/fwimage.h, docs/firmware-images.md).  The
 * image is hostile: every length is bounded before use, with subtraction
 * on the known-good side so nothing wraps. */
#include <string.h>

#include "boot/fwimage.h"
#include "boot/fwsig.h"
#include "lib/sha256.h"

#define FWIMG_TEXT_(name, text) text,
static const char *const fwimg_err_text[] = { FWIMG_ERR_LIST(FWIMG_TEXT_) };
#undef FWIMG_TEXT_

const char *fwimg_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= FWIMG_NUM_ERRS)
		return "unknown image error";
	return fwimg_err_text[err];
}

static int all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

int fwimg_check_hdr(const struct mnic_fwimg_hdr *h, const struct fwimg_limits *lim)
{
	uint64_t end;

	if (h->magic != MNIC_FWIMG_MAGIC)
		return FWIMG_E_MAGIC;
	if (h->hdr_version != MNIC_FWIMG_HDR_VERSION)
		return FWIMG_E_HDR_VERSION;
	if (h->hdr_size != MNIC_FWIMG_HDR_SIZE)
		return FWIMG_E_HDR_SIZE;
	if (h->flags || h->reserved0 || !all_zero(h->reserved1, sizeof(h->reserved1)))
		return FWIMG_E_RESERVED;
	if (lim->board_id && h->board_id != lim->board_id)
		return FWIMG_E_BOARD;
	if (h->payload_size == 0)
		return FWIMG_E_EMPTY;
	if (lim->max_image && (lim->max_image < MNIC_FWIMG_HDR_SIZE ||
			       h->payload_size > lim->max_image - MNIC_FWIMG_HDR_SIZE))
		return FWIMG_E_OVERSIZED;
	if (lim->ram_end) {
		end = h->load_addr + h->payload_size;
		if (h->load_addr < lim->ram_base || h->load_addr >= lim->ram_end ||
		    h->payload_size > lim->ram_end - h->load_addr || end > lim->ram_end)
			return FWIMG_E_LOAD;
	}
	if (h->entry < h->load_addr || h->entry - h->load_addr >= h->payload_size)
		return FWIMG_E_LOAD;
	if (fwimg_version_cmp(&h->version, &lim->min_version) < 0)
		return FWIMG_E_ROLLBACK;
	return FWIMG_OK;
}

void fwimg_digest(const struct mnic_fwimg_hdr *h, const uint8_t *payload, uint8_t out[32])
{
	struct mnic_fwimg_hdr z;
	struct sha256 s;

	memcpy(&z, h, sizeof(z));
	memset(z.digest, 0, sizeof(z.digest));
	sha256_init(&s);
	sha256_update(&s, &z, sizeof(z));
	sha256_update(&s, payload, h->payload_size);
	sha256_final(&s, out);
}

int fwimg_tlv_walk(const uint8_t *area, uint32_t len, fwimg_tlv_fn fn, void *ctx)
{
	struct mnic_fwimg_tlv_info info;
	struct mnic_fwimg_tlv t;
	uint32_t off, adv;
	int rc;

	if (len < sizeof(info))
		return FWIMG_E_TLV;
	memcpy(&info, area, sizeof(info));
	if (info.magic != MNIC_FWIMG_TLV_MAGIC || info.reserved || info.total < sizeof(info) ||
	    info.total > len || info.total > MNIC_FWIMG_TLV_MAX || (info.total & 3))
		return FWIMG_E_TLV;
	for (off = sizeof(info); off < info.total; off += adv) {
		if (info.total - off < sizeof(t))
			return FWIMG_E_TLV;
		memcpy(&t, area + off, sizeof(t));
		if (t.len > info.total - off - sizeof(t))
			return FWIMG_E_TLV;
		if (fn && (rc = fn(ctx, t.type, area + off + sizeof(t), t.len)) != 0)
			return rc;
		adv = (uint32_t)sizeof(t) + ((t.len + 3u) & ~3u);
		if (adv > info.total - off)
			return FWIMG_E_TLV;
	}
	return FWIMG_OK;
}

int fwimg_verify(const uint8_t *img, size_t len, const struct fwimg_limits *lim,
		 struct fwimg_info *info)
{
	struct fwimg_info in;
	uint8_t d[32];
	size_t rest;
	int rc;

	memset(&in, 0, sizeof(in));
	if (info)
		memset(info, 0, sizeof(*info));
	if (len >= 4 && (img[0] | img[1] << 8 | img[2] << 16 | (uint32_t)img[3] << 24) !=
	    MNIC_FWIMG_MAGIC)
		return FWIMG_E_MAGIC;
	if (len < sizeof(in.hdr))
		return FWIMG_E_TRUNCATED;
	memcpy(&in.hdr, img, sizeof(in.hdr));
	if (info)
		info->hdr = in.hdr;
	if ((rc = fwimg_check_hdr(&in.hdr, lim)) != FWIMG_OK)
		return rc;
	if (in.hdr.payload_size > len - MNIC_FWIMG_HDR_SIZE)
		return FWIMG_E_TRUNCATED;
	in.image_len = MNIC_FWIMG_HDR_SIZE + in.hdr.payload_size;
	fwimg_digest(&in.hdr, img + MNIC_FWIMG_HDR_SIZE, d);
	if (memcmp(d, in.hdr.digest, sizeof(d)) != 0)
		return FWIMG_E_DIGEST;
	rest = len - in.image_len;
	if (rest >= 2 && (img[in.image_len] | img[in.image_len + 1] << 8) == MNIC_FWIMG_TLV_MAGIC) {
		if (rest > MNIC_FWIMG_TLV_MAX)
			rest = MNIC_FWIMG_TLV_MAX;
		if ((rc = fwimg_tlv_walk(img + in.image_len, (uint32_t)rest, NULL, NULL)) != FWIMG_OK)
			return rc;
		in.tlv_off = in.image_len;
		memcpy(&in.tlv_len, img + in.image_len + 4, 4);
		if (lim->max_image && in.tlv_len > lim->max_image - in.image_len)
			return FWIMG_E_OVERSIZED;
		in.image_len += in.tlv_len;
	}
	/* digest checked above: the signature covers header and payload */
	if (lim->keys && (rc = fwsig_check(lim->keys, in.hdr.digest,
					   in.tlv_off ? img + in.tlv_off : NULL, in.tlv_len)) != FWIMG_OK)
		return rc;
	if (info)
		*info = in;
	return FWIMG_OK;
}

int fwimg_version_cmp(const struct mnic_fw_version *a, const struct mnic_fw_version *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	if (a->build != b->build)
		return a->build < b->build ? -1 : 1;
	return 0;
}
