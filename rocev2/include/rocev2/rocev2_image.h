/* The RoCEv2 engine API, continued: the migration image seen from outside
 * (included by rocev2.h; format: docs/migration-image.md).
 *
 * Whoever carries an image between the host and the engine (mgmt's
 * RESTORE_OBJECT) needs three things without knowing the layout: walk
 * the records of an image, learn which host memory a record refers to
 * (to check it against what that host may name), and restore one record
 * the way MigrOS's ibv_restore_object does.  The image codec answers all
 * three; nobody else reads offsets.
 *
 * Errors are those of rocev2_restore_image (negative HAL_E*):
 *   -HAL_EINVAL  malformed: lengths, unknown record type or op, a value
 *                out of range, a reference to an object that is not there
 *   -HAL_ERANGE  image or record version this firmware does not read
 *   -HAL_EIO     CRC32C mismatch
 *   -HAL_EEXIST  the handle / MRN / QPN slot is already in use here
 *   -HAL_EFAULT  a ring, doorbell record or MR outside this NIC's window
 *   -HAL_EBUSY   refill of a QP that is not freshly restore-created
 */
#ifndef ROCEV2_IMAGE_H
#define ROCEV2_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "rocev2.h"

/* Every check rocev2_restore_image makes before it touches an engine:
 * header, CRC, every record (length, type, version, values, handle
 * ranges), no object twice, every reference resolved inside the image. */
int rocev2_image_validate(const void *img, size_t len);

/* The user-area range the image header records (the dumped context's;
 * 0, 0: none recorded).  0, or rocev2_image_validate's header errors. */
int rocev2_image_ua_range(const void *img, size_t len, uint64_t *ua_offset, uint64_t *ua_size);

/* One record: its header read, the payload where it lies. */
struct rocev2_record {
	uint32_t type;                  /* enum rocev2_obj_type (< ROCEV2_OBJ_LIVE_NUM) */
	uint32_t version;
	const uint8_t *payload;         /* the bytes after the record header */
	size_t len;                     /* payload bytes */
};

/* Records of an image in image order:
 *   struct rocev2_image_iter it;
 *   struct rocev2_record r;
 *   rocev2_image_iter_init(&it, img, len);
 *   while ((rc = rocev2_image_next(&it, &r)) > 0) ...
 * next: 1 with the record in *r, 0 after the last one, -HAL_EINVAL when
 * a record header does not fit the image (never once the image passed
 * rocev2_image_validate).  The members are the iterator's own. */
struct rocev2_image_iter {
	const uint8_t *img;
	size_t len;
	size_t pos;                     /* image offset of the next record */
};
void rocev2_image_iter_init(struct rocev2_image_iter *it, const void *img, size_t len);
int rocev2_image_next(struct rocev2_image_iter *it, struct rocev2_record *r);

/* One record on its own (the per-object commands): its header must
 * describe exactly len bytes (-HAL_EINVAL) and carry a version this
 * firmware reads (-HAL_ERANGE).  The type is not checked here:
 * rocev2_restore_op_takes says whether an op takes it. */
int rocev2_record_parse(const void *rec, size_t len, struct rocev2_record *r);

/* Host memory a record refers to: rings (entries * entry size), doorbell
 * records, MR ranges, as the record states them (addr + len may even
 * wrap: the caller's range check must refuse that, as the engine's
 * window check does). */
enum rocev2_host_range_kind {
	ROCEV2_RANGE_RING = 0,
	ROCEV2_RANGE_DBREC = 1,
	ROCEV2_RANGE_MR = 2,
};
struct rocev2_host_range {
	uint64_t addr;
	uint64_t len;
	uint32_t kind;                  /* enum rocev2_host_range_kind */
};
#define ROCEV2_RECORD_MAX_RANGES 4u     /* a QP: SQ and RQ, ring and doorbell record each */

/* The ranges of one record payload of this type, in the order the
 * objects' create commands check them (ring before its doorbell record,
 * SQ before RQ; a queue of size 0 has none): how many were written to
 * out[], or -HAL_EINVAL (unknown type, a payload its decoder refuses),
 * -HAL_ENOSPC (more than cap). */
int rocev2_record_host_ranges(uint32_t type, const void *payload, size_t len,
			      struct rocev2_host_range out[], unsigned cap);

/* Per-object restore (MigrOS's ibv_restore_object), dependencies first:
 * the PD of an MR/SRQ/QP, the CQs and SRQ of a QP must exist.
 *   CREATE   a PD, CQ, SRQ, MTT or QP record: the object with its original
 *            handle / QPN (a QP in RESET, Stopped)
 *   REFILL   a QP record, after CREATE of the same record: attributes and
 *            internal state, the QP left in its dumped state and Stopped
 *            until rocev2_resume_context()
 *   MR_KEYS  an MR record: the MR with its MRN, lkey and rkey */
enum rocev2_restore_op {
	ROCEV2_RESTORE_CREATE = 0,
	ROCEV2_RESTORE_REFILL = 1,
	ROCEV2_RESTORE_MR_KEYS = 2,
	ROCEV2_RESTORE_OPS = 3,
};
/* Non-zero when op applies to records of this type. */
int rocev2_restore_op_takes(enum rocev2_restore_op op, uint32_t type);
/* Restore one record payload; -HAL_EINVAL for a type the op does not take. */
int rocev2_restore_record(struct rocev2 *e, enum rocev2_restore_op op, uint32_t type,
			  const void *payload, size_t len);

#endif
