/* The migration image codec, private to rocev2/ (and its unit tests):
 * what image.c, image_records.c, dump.c and restore.c share.
 *
 *   image.c          the format: member lists of every struct the image
 *                    reads from, field tables, byte cursor
 *   image_records.c  one codec per record type (encode, decode and check)
 *   dump.c           stop the context and write the image
 *   restore.c        validate, apply object by object, roll back
 *
 * The layout constants are in dump.h; docs/migration-image.md is the
 * format.  Not reentrant: qp_scratch (the QP record being decoded) and
 * restore.c's slot table are static (control path, one caller at a time).
 */
#ifndef ROCEV2_IMAGE_CODEC_H
#define ROCEV2_IMAGE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "dump.h"
#include "pool.h"

/* ---- field tables (image.c): the DUMP members of a stage struct ---------- */
struct dump_field {
	uint16_t off;
	uint8_t size;                   /* 1, 2, 4 or 8 */
};

extern const struct dump_field req_fields[], track_fields[], comp_fields[], resp_fields[],
	res_fields[];
extern const size_t req_fields_count, track_fields_count, comp_fields_count,
	resp_fields_count, res_fields_count;
#define NFIELDS(t) (t##_count)

/* Output cursor.  buf NULL: only count (the sizing pass). */
struct dump_out {
	uint8_t *buf;
	size_t cap, pos;
};


/* Input cursor over one record payload; any read past its end sets bad
 * (checked once at the end of the record) and yields 0. */
struct dump_in {
	const uint8_t *p;
	size_t len, pos;
	int bad;
};


void img_out_le(struct dump_out *o, uint64_t v, unsigned n);
void img_out_bytes(struct dump_out *o, const uint8_t *src, size_t n);
uint64_t img_in_le(struct dump_in *in, unsigned n);
static inline uint8_t img_in_u8(struct dump_in *in) { return (uint8_t)img_in_le(in, 1); }
static inline uint16_t img_in_u16(struct dump_in *in) { return (uint16_t)img_in_le(in, 2); }
static inline uint32_t img_in_u32(struct dump_in *in) { return (uint32_t)img_in_le(in, 4); }
static inline uint64_t img_in_u64(struct dump_in *in) { return img_in_le(in, 8); }
void img_in_bytes(struct dump_in *in, uint8_t *dst, size_t n);
/* The whole payload and nothing more was read: 0, else -HAL_EINVAL. */
int img_in_done(const struct dump_in *in);
void img_out_fields(struct dump_out *o, const void *obj, const struct dump_field *t, size_t n);
void img_in_fields(struct dump_in *in, void *obj, const struct dump_field *t, size_t n);
void img_copy_fields(void *dst, const void *src, const struct dump_field *t, size_t n);

/* ---- header and record framing (image.c) ---------------------------------- */
/* The image header of the total bytes at b, records already in place. */
void image_header_write(uint8_t *b, uint32_t count, size_t total, uint64_t ua_offset,
			uint64_t ua_size);
/* Magic, versions, flags, length and CRC32C; *count: the records it
 * announces. */
int image_header_check(const uint8_t *b, size_t len, uint32_t *count);
/* A record header at o->pos (its length left for image_rec_end); the
 * record's start. */
size_t image_rec_begin(struct dump_out *o, uint16_t type);
/* The length of the record at start, now that its payload is written:
 * the record's bytes. */
size_t image_rec_end(struct dump_out *o, size_t start);

/* ---- decoded records ---------------------------------------------------------- */
struct pd_rec {
	uint32_t handle;
};

struct mtt_rec {
	uint32_t handle;
	struct rocev2_mtt_attr a;
};

struct mr_rec {
	uint32_t lkey, pd;
	uint64_t addr, length;
	uint32_t access;
	uint32_t mtt;                   /* ROCEV2_NO_MTT: physical mode */
};

struct cq_rec {
	uint32_t handle;
	struct rocev2_queue_attr q;
	uint32_t pi;
	uint8_t error;
};

struct srq_rec {
	uint32_t handle, pd;
	struct rocev2_queue_attr q;
	uint32_t ci, max_sge, limit;
	uint8_t limit_armed;
};

/* A QP record, decoded into the engine's own structs so that the field
 * tables apply to both. */
struct qp_rec {
	uint32_t qpn, pd, scq, rcq, srq;
	struct rocev2_wq sq, rq;
	uint8_t max_send_sge, max_recv_sge, sq_sig_all, state, flags;
	uint8_t ntrack, nres;
	struct rocev2_qp_attr attr;
	struct rocev2_req req;
	struct rocev2_comp comp;
	struct rocev2_resp resp;
	uint32_t tx_epoch, rx_epoch;
	uint8_t tx_key[16], rx_key[16];
};

extern struct qp_rec qp_scratch;

/* ---- record codecs (image_records.c) --------------------------------------
 * Encoders write one payload of object idx (QP: -HAL_EIO when its state
 * contradicts itself); decoders read and check one payload: -HAL_EINVAL
 * for anything this engine could not hold. */
void img_pd_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx);
void img_mtt_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx);
void img_mr_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx);
void img_cq_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx);
void img_srq_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx);
int img_qp_encode(struct dump_out *o, const struct rocev2 *e, const struct rocev2_qp *qp);
int img_pd_decode(const void *p, size_t len, struct pd_rec *r);
int img_mtt_decode(const void *p, size_t len, struct mtt_rec *r);
int img_mr_decode(const void *p, size_t len, struct mr_rec *r);
int img_cq_decode(const void *p, size_t len, struct cq_rec *r);
int img_srq_decode(const void *p, size_t len, struct srq_rec *r);
int img_qp_decode(const void *payload, size_t len, struct qp_rec *r);

#endif
