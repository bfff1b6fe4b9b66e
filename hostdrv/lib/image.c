/* The migration image read offline (docs/migration-image.md): header,
 * CRC32C and the framing of every record, for `mnicctl image show` and
 * for checking a dump before it is sent.  It does not replace the
 * firmware's validation (values, references): the firmware is the judge
 * on restore.  Every integer is read byte by byte, little-endian. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/crc32.h"
#include "libmnic_int.h"

static uint32_t le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static const char *const type_names[] = {"PD", "MR", "CQ", "SRQ", "QP", NULL, "MTT"};

const char *mnic_img_type_name(uint32_t type)
{
	return type < MNIC_IMG_TYPES && type_names[type] ? type_names[type] : "?";
}

/* Payload bytes of the records (docs/migration-image.md "Records"):
 * image version 3, MTT, PD, MR, CQ, SRQ records version 2 (MTT handles of
 * MRs and queues), QP version 4 (migration epochs and keys, MTT handles,
 * the address vector's GID, flow label and source GID index). */
enum {
	PD_LEN = 4, MR_LEN = 32, CQ_LEN = 37, SRQ_LEN = 49, MTT_LEN = 21, QP_MIN = 292,
	QP_OFF_FLAGS = 96, QP_OFF_NTRACK = 148, QP_OFF_NRES = 149, QP_OFF_RWQE_VALID = 228,
	QP_KEY = 32, QP_TRACK = 15, QP_RES = 60, QP_RWQE = 9, SGE = 16, MAX_SGE = 28,
	REC_VERSION = 2, QP_REC_VERSION = 4, TYPE_QP = 4, TYPE_QP_SRQ = 5,
};

/* Expected payload length of a QP record from its own counts, or 0 if
 * they are impossible. */
static uint32_t qp_payload_len(const uint8_t *p, uint32_t have)
{
	uint32_t n, num_sge;

	if (have < QP_MIN)
		return 0;
	n = QP_MIN;
	if (p[QP_OFF_FLAGS] & 2u)
		n += QP_KEY;
	if (p[QP_OFF_NTRACK] > 64 || p[QP_OFF_NRES] > 16)
		return 0;
	n += p[QP_OFF_NTRACK] * QP_TRACK + p[QP_OFF_NRES] * QP_RES;
	if (p[QP_OFF_RWQE_VALID]) {
		if (have < n + QP_RWQE)
			return 0;
		num_sge = p[n + 8];
		if (num_sge > MAX_SGE)
			return 0;
		n += QP_RWQE + num_sge * SGE;
	}
	return n;
}

int mnic_img_parse(const uint8_t *img, size_t len, struct mnic_img_hdr *hdr,
		   int (*cb)(const struct mnic_img_rec *rec, const uint8_t *payload, void *arg),
		   void *arg, char *err, size_t errlen)
{
	static const uint32_t fixed[] = {PD_LEN, MR_LEN, CQ_LEN, SRQ_LEN, 0, 0, MTT_LEN};
	struct mnic_img_hdr h;
	uint32_t off, n = 0;

#define FAIL(code, ...)                                   \
	do {                                              \
		if (err && errlen)                        \
			snprintf(err, errlen, __VA_ARGS__); \
		return (code);                            \
	} while (0)

	if (err && errlen)
		err[0] = '\0';
	if (!img || len < MNIC_IMG_HDR_LEN)
		FAIL(-EINVAL, "truncated: %zu bytes, an image header is %u", len, MNIC_IMG_HDR_LEN);
	if (memcmp(img, MNIC_IMG_MAGIC, 8) != 0)
		FAIL(-EILSEQ, "not a migration image (no MNICDUMP magic)");
	memset(&h, 0, sizeof(h));
	h.version = (uint16_t)le16(img + 8);
	h.flags = (uint16_t)le16(img + 10);
	h.count = le32(img + 12);
	h.total = le32(img + 16);
	h.crc = le32(img + 20);
	h.ua_offset = le64(img + 24);
	h.ua_size = le64(img + 32);
	if (hdr)
		*hdr = h;
	if (h.version != MNIC_IMG_VERSION)
		FAIL(-ERANGE, "image version %u; this tool reads version %u", h.version,
		     MNIC_IMG_VERSION);
	if (h.flags != 0)
		FAIL(-EINVAL, "header flags 0x%04x; version %u defines none", h.flags,
		     MNIC_IMG_VERSION);
	if (h.total < MNIC_IMG_HDR_LEN)
		FAIL(-EINVAL, "header total %u is smaller than the header", h.total);
	if (h.total > len)
		FAIL(-EINVAL, "truncated: header says %u bytes, the file has %zu", h.total, len);
	if (h.total < len)
		FAIL(-EINVAL, "%zu trailing bytes after the image's %u", len - h.total, h.total);
	h.crc_computed = crc32c(0, img + MNIC_IMG_CRC_START, h.total - MNIC_IMG_CRC_START);
	if (hdr)
		*hdr = h;
	if (h.crc_computed != h.crc)
		FAIL(-EBADMSG, "CRC32C mismatch: header 0x%08x, computed 0x%08x (corrupt image)",
		     h.crc, h.crc_computed);

	for (off = MNIC_IMG_HDR_LEN; off < h.total; n++) {
		struct mnic_img_rec r;
		uint32_t want;
		int rc;

		if (h.total - off < MNIC_IMG_REC_HDR_LEN)
			FAIL(-EINVAL, "record %u at offset %u: truncated header", n, off);
		r.offset = off;
		r.type = (uint16_t)le16(img + off);
		r.version = (uint16_t)le16(img + off + 2);
		r.len = le32(img + off + 4);
		if (r.type >= MNIC_IMG_TYPES || r.type == TYPE_QP_SRQ)
			FAIL(-EINVAL, "record %u at offset %u: unknown type %u", n, off, r.type);
		if (r.version != (r.type == TYPE_QP ? QP_REC_VERSION : REC_VERSION))
			FAIL(-ERANGE, "record %u at offset %u: version %u", n, off, r.version);
		if (r.len < MNIC_IMG_REC_HDR_LEN + 4 || r.len > h.total - off)
			FAIL(-EINVAL, "record %u (%s) at offset %u: length %u outside the image", n,
			     mnic_img_type_name(r.type), off, r.len);
		if (r.type == TYPE_QP)
			want = qp_payload_len(img + off + MNIC_IMG_REC_HDR_LEN,
					      r.len - MNIC_IMG_REC_HDR_LEN);
		else
			want = fixed[r.type];
		if (want == 0 || r.len - MNIC_IMG_REC_HDR_LEN != want)
			FAIL(-EINVAL, "record %u (%s) at offset %u: length %u, its payload needs %u",
			     n, mnic_img_type_name(r.type), off, r.len, want + MNIC_IMG_REC_HDR_LEN);
		r.handle = le32(img + off + MNIC_IMG_REC_HDR_LEN);
		if (cb) {
			rc = cb(&r, img + off + MNIC_IMG_REC_HDR_LEN, arg);
			if (rc)
				return rc;
		}
		off += r.len;
	}
	if (n != h.count)
		FAIL(-EINVAL, "header count %u, the image holds %u records", h.count, n);
	return 0;
#undef FAIL
}
