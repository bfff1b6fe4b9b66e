/* Migration image of the RoCEv2 engine (MigrOS dump/restore, in the NIC).
 *
 * The image format is defined in docs/migration-image.md; dump.c is its
 * only writer and reader.  rocev2.h declares the context-wide entry points
 * (rocev2_dump_context, rocev2_restore_image); this header adds what the
 * image is made of and the per-object restore commands, MigrOS's
 * ibv_restore_object: each takes the payload of one version-1 record
 * (the bytes after its 8-byte record header) and recreates that object
 * with its original handle, key or QPN.
 *
 * Errors (negative HAL_E*), the same for every function here:
 *   -HAL_EINVAL  malformed: bad magic, lengths, unknown record type,
 *                a value out of range, a reference to an object that is
 *                not there (in the image, or in the engine for the
 *                per-object commands), a refill that does not match its QP
 *   -HAL_ERANGE  image or record version this firmware does not read
 *   -HAL_EIO     CRC32C mismatch; (dump) a QP whose state contradicts
 *                itself (in-flight count > 64, an SGE count > 28): never,
 *                short of corrupt memory
 *   -HAL_EEXIST  the handle / MRN / QPN slot is already in use here
 *   -HAL_EFAULT  a ring, doorbell record or MR lies outside this NIC's
 *                DMA window
 *   -HAL_EBUSY   refill of a QP that is not freshly restore-created
 *   -HAL_ENOSPC  (dump) the buffer is too small
 */
#ifndef ROCEV2_DUMP_H
#define ROCEV2_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "rocev2.h"

/* ---- image header (24 bytes, little-endian) ------------------------------ */
#define ROCEV2_DUMP_MAGIC "MNICDUMP"
#define ROCEV2_DUMP_MAGIC_LEN 8u
#define ROCEV2_DUMP_VERSION 1u
#define ROCEV2_DUMP_HDR_LEN 24u
#define ROCEV2_DUMP_OFF_VERSION 8u      /* u16 */
#define ROCEV2_DUMP_OFF_FLAGS 10u       /* u16, 0 in version 1 */
#define ROCEV2_DUMP_OFF_COUNT 12u       /* u32 records */
#define ROCEV2_DUMP_OFF_TOTAL 16u       /* u32 image bytes, header included */
#define ROCEV2_DUMP_OFF_CRC 20u         /* u32 CRC32C of bytes [24, total) */

/* ---- records: u16 type (enum rocev2_obj_type), u16 version, u32 length
 * (header included), payload ------------------------------------------------ */
#define ROCEV2_DUMP_REC_HDR_LEN 8u
#define ROCEV2_DUMP_REC_VERSION 1u

/* Payload bytes of version-1 records.  A QP record is QP_MIN bytes plus
 * the optional parts its own fields announce. */
#define ROCEV2_DUMP_PD_LEN 4u
#define ROCEV2_DUMP_MR_LEN 28u
#define ROCEV2_DUMP_CQ_LEN 29u
#define ROCEV2_DUMP_SRQ_LEN 41u
#define ROCEV2_DUMP_QP_MIN_LEN 251u
#define ROCEV2_DUMP_QP_KEY_LEN 16u      /* when flags.has_key */
#define ROCEV2_DUMP_TRACK_LEN 15u       /* per in-flight send WQE */
#define ROCEV2_DUMP_RES_LEN 60u         /* per responder resource in use */
#define ROCEV2_DUMP_RWQE_LEN 9u         /* receive WQE in progress, + SGEs */
#define ROCEV2_DUMP_SGE_LEN 16u

/* QP record flags (payload byte 80). */
#define ROCEV2_DUMP_QPF_PAUSED 0x01u    /* its peer was stopped (NAK_STOPPED seen) */
#define ROCEV2_DUMP_QPF_HAS_KEY 0x02u   /* a migration key follows the fixed part */

/* Every check rocev2_restore_image makes before it touches an engine:
 * header, CRC, every record (length, type, version, values, handle
 * ranges), no object twice, every reference resolved inside the image. */
int rocev2_validate_image(const void *img, size_t len);

/* Per-object restore (payload of one version-1 record).  Dependencies
 * first: the PD of an MR/SRQ/QP, the CQs and SRQ of a QP must exist.
 * rocev2_restore_qp_create makes the QP (original QPN, queues, PD/CQ/SRQ
 * references) in RESET; rocev2_restore_qp_refill, given the same record,
 * loads its attributes and internal state and leaves it in its dumped
 * state with qp->stopped set: nothing is sent and no timer runs until
 * rocev2_resume_context(). */
int rocev2_restore_pd(struct rocev2 *e, const void *payload, size_t len);
int rocev2_restore_mr(struct rocev2 *e, const void *payload, size_t len);
int rocev2_restore_cq(struct rocev2 *e, const void *payload, size_t len);
int rocev2_restore_srq(struct rocev2 *e, const void *payload, size_t len);
int rocev2_restore_qp_create(struct rocev2 *e, const void *payload, size_t len);
int rocev2_restore_qp_refill(struct rocev2 *e, const void *payload, size_t len);

#endif
