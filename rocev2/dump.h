/* Migration image of the RoCEv2 engine (MigrOS dump/restore, in the NIC):
 * its layout, private to rocev2/ and its tests.
 *
 * The image format is defined in docs/migration-image.md; the codec
 * (image.c, image_records.c, dump.c, restore.c: image_codec.h) is its
 * only writer and reader.  Everything outside the engine goes through
 * rocev2.h (rocev2_dump_context, rocev2_restore_image) and rocev2_image.h
 * (walking an image, the host memory of a record, restoring one record).
 * This header adds the layout constants and the per-object restore
 * commands behind rocev2_restore_record, MigrOS's ibv_restore_object:
 * each takes the payload of one version-1 record (the bytes after its
 * 8-byte record header) and recreates that object with its original
 * handle, key or QPN.
 *
 * Errors (negative HAL_E*): as rocev2_image.h, and for the dump
 *   -HAL_EIO     a QP whose state contradicts itself (in-flight count
 *                > 64, an SGE count > 28): never, short of corrupt memory
 *   -HAL_ENOSPC  the buffer is too small
 */
#ifndef ROCEV2_DUMP_H
#define ROCEV2_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "rocev2/rocev2.h"

/* ---- image header (40 bytes, little-endian) ------------------------------ */
#define ROCEV2_DUMP_MAGIC "MNICDUMP"
#define ROCEV2_DUMP_MAGIC_LEN 8u
#define ROCEV2_DUMP_VERSION 3u          /* 2: user-area range; 3: MTTs */
#define ROCEV2_DUMP_HDR_LEN 40u
#define ROCEV2_DUMP_OFF_VERSION 8u      /* u16 */
#define ROCEV2_DUMP_OFF_FLAGS 10u       /* u16, 0 in version 2 */
#define ROCEV2_DUMP_OFF_COUNT 12u       /* u32 records */
#define ROCEV2_DUMP_OFF_TOTAL 16u       /* u32 image bytes, header included */
#define ROCEV2_DUMP_OFF_CRC 20u         /* u32 CRC32C of bytes [CRC_START, total) */
#define ROCEV2_DUMP_CRC_START 24u       /* the range is covered, the fields above not */
#define ROCEV2_DUMP_OFF_UA_OFFSET 24u   /* u64 the dumped context's user-area range */
#define ROCEV2_DUMP_OFF_UA_SIZE 32u     /* u64 (0 with offset 0: none recorded) */

/* ---- records: u16 type (enum rocev2_obj_type), u16 version, u32 length
 * (header included), payload ------------------------------------------------ */
#define ROCEV2_DUMP_REC_HDR_LEN 8u
#define ROCEV2_DUMP_REC_VERSION 2u      /* PD, MR, CQ, SRQ, MTT records: 2, MTT handles */
#define ROCEV2_DUMP_QP_REC_VERSION 4u   /* QP records: 2 + epochs, two keys; 3 + MTTs; 4 + GIDs */

/* The version this engine writes, and the only one it reads, per type. */
static inline unsigned rocev2_dump_rec_version(unsigned type)
{
	return type == ROCEV2_OBJ_QP ? ROCEV2_DUMP_QP_REC_VERSION : ROCEV2_DUMP_REC_VERSION;
}

/* Payload bytes of the records (PD..SRQ, MTT version 2, QP version 4).  A
 * QP record is QP_MIN bytes plus the optional parts its own fields
 * announce.  A queue is 28 bytes: ring, dbrec, size, ring_mtt, dbrec_mtt. */
#define ROCEV2_DUMP_PD_LEN 4u
#define ROCEV2_DUMP_MR_LEN 32u
#define ROCEV2_DUMP_CQ_LEN 37u
#define ROCEV2_DUMP_SRQ_LEN 49u
#define ROCEV2_DUMP_MTT_LEN 21u         /* handle, iova, length, page_shift */
#define ROCEV2_DUMP_QP_MIN_LEN 292u     /* ends with tx_epoch, rx_epoch (u32 each) */
#define ROCEV2_DUMP_QP_MIG_LEN 8u
#define ROCEV2_DUMP_QP_KEY_LEN 32u      /* when flags.has_key: tx key, rx key */
#define ROCEV2_DUMP_TRACK_LEN 15u       /* per in-flight send WQE */
#define ROCEV2_DUMP_RES_LEN 60u         /* per responder resource in use */
#define ROCEV2_DUMP_RWQE_LEN 9u         /* receive WQE in progress, + SGEs */
#define ROCEV2_DUMP_SGE_LEN 16u

/* QP record flags (payload byte 80). */
#define ROCEV2_DUMP_QPF_PAUSED 0x01u    /* its peer was stopped (NAK_STOPPED seen) */
#define ROCEV2_DUMP_QPF_HAS_KEY 0x02u   /* a migration key follows the fixed part */

/* mgmt/cmd.c's name for rocev2_image_validate, until its restore path
 * uses rocev2_image.h (issue 12: that change removes this line). */

/* Per-object restore (payload of one version-1 record).  Dependencies
 * first: the PD of an MR/SRQ/QP, the CQs and SRQ of a QP must exist.
 * rocev2_restore_qp_create makes the QP (original QPN, queues, PD/CQ/SRQ
 * references) in RESET; rocev2_restore_qp_refill, given the same record,
 * loads its attributes and internal state and leaves it in its dumped
 * state with qp->stopped set: nothing is sent and no timer runs until
 * rocev2_resume_context(). */
int rocev2_restore_pd(struct rocev2 *e, const void *payload, size_t len);
/* The MTT with its handle and shape, every entry unwritten; its context
 * counts as Stopped (rocev2_context_stopped) until rocev2_resume_context,
 * which refuses while an entry of it is unwritten. */
int rocev2_restore_mtt(struct rocev2 *e, const void *payload, size_t len);
int rocev2_restore_mr(struct rocev2 *e, const void *payload, size_t len);
int rocev2_restore_cq(struct rocev2 *e, const void *payload, size_t len);
int rocev2_restore_srq(struct rocev2 *e, const void *payload, size_t len);
int rocev2_restore_qp_create(struct rocev2 *e, const void *payload, size_t len);
int rocev2_restore_qp_refill(struct rocev2 *e, const void *payload, size_t len);

#endif
