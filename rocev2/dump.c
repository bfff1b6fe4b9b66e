/* The migration image: dump and restore of a whole RoCEv2 context (MigrOS
 * dump/restore, moved into the NIC).  docs/migration-image.md defines the
 * format; this file is its only writer and reader.
 *
 * Dump (source): rocev2_dump_context() stops every QP in one step (the
 *   engine runs to completion, so nothing interleaves), sizes the image,
 *   and only when it fits writes it: PDs, MRs, CQs, SRQs, QPs, each kind
 *   in slot order, so that every record comes after the ones it refers to.
 *
 * Restore (target): rocev2_restore_image() checks the whole image first
 *   (header, CRC32C, every record's length, type, version and values,
 *   handle ranges, no object twice, every reference resolved inside the
 *   image), then recreates the objects kind by kind with their original
 *   handles, keys and QPNs, each QP created and then refilled.  A failure
 *   while applying (a slot already taken, memory outside this NIC's
 *   window) destroys what was made, in reverse dependency order, and puts
 *   the slots' generation counters back: the engine is as before.
 *
 *   image --validate--> [PDs] -> [MRs] -> [CQs] -> [SRQs] -> [QP create+refill]
 *                          <------------ rollback on failure ------------
 *
 * Byte order: fields are written little-endian by out_le() and read by
 * in_le(), one scalar at a time; no host struct is ever copied whole.
 *
 * What the image holds per object, and what it leaves out, is spelled out
 * member by member in the *_MEMBERS lists below.  Each list mirrors its
 * struct: a struct built from the list must have the same size, every
 * member the same offset and size, and the real struct exactly as many
 * members as the list (one that fits in existing padding included), so a
 * member added, removed, resized or moved breaks the build here ("update
 * dump.c") instead of being silently lost.  The stage structs' members
 * marked DUMP are serialised by table, in declaration order: the list is
 * the record layout.
 *
 * Not reentrant: the validation and rollback scratch below is static
 * (control path, one caller at a time; one engine per port).
 */
#include <stddef.h>
#include <string.h>

#include "dump.h"
#include "lib/crc32.h"
#include "pool.h"

/* ---- member lists --------------------------------------------------------- *
 * Every member of each struct, in declaration order: M(struct, member,
 * type, how) for a scalar, A(struct, member, type, array suffix, how) for
 * a struct or an array; how being:
 *   DUMP    in the record, written and read by table (stage structs)
 *   CODE    in the record, written and read by the code of this file
 *   DERIVE  not in the record: recomputed on restore from what is
 *   SKIP    not in the record: restore sets it as creation does (the
 *           comment says why that is right)
 */
#define PD_MEMBERS(M, A, S)                                                                \
	M(S, gen, uint16_t, CODE)               /* in the handle */                        \
	M(S, in_use, uint8_t, SKIP)                                                        \
	M(S, refcnt, uint32_t, DERIVE)          /* MRs, SRQs, QPs restored on it */

#define MR_MEMBERS(M, A, S)                                                                \
	M(S, in_use, uint8_t, SKIP)                                                        \
	M(S, key, uint8_t, CODE)                /* low byte of lkey */                     \
	M(S, pd, uint16_t, CODE)                /* as the PD's handle */                   \
	M(S, access, uint32_t, CODE)                                                       \
	M(S, addr, uint64_t, CODE)                                                         \
	M(S, length, uint64_t, CODE)                                                       \
	M(S, lkey, uint32_t, CODE)                                                         \
	M(S, rkey, uint32_t, DERIVE)            /* = lkey (mr.c) */

#define QUEUE_ATTR_MEMBERS(M, A, S)                                                        \
	M(S, ring_addr, uint64_t, CODE)                                                    \
	M(S, dbrec_addr, uint64_t, CODE)                                                   \
	M(S, size, uint32_t, CODE)

#define CQ_MEMBERS(M, A, S)                                                                \
	M(S, gen, uint16_t, CODE)               /* in the handle */                        \
	M(S, in_use, uint8_t, SKIP)                                                        \
	M(S, error, uint8_t, CODE)                                                         \
	A(S, q, struct rocev2_queue_attr, , CODE)                                          \
	M(S, pi, uint32_t, CODE)                                                           \
	M(S, refcnt, uint32_t, DERIVE)          /* QPs restored on it */

#define WQ_MEMBERS(M, A, S)                                                                \
	A(S, q, struct rocev2_queue_attr, , CODE)                                          \
	M(S, ci, uint32_t, CODE)                                                           \
	M(S, pi, uint32_t, CODE)                /* SRQ: DERIVE = ci, re-read before use */

#define SRQ_MEMBERS(M, A, S)                                                               \
	M(S, gen, uint16_t, CODE)               /* in the handle */                        \
	M(S, in_use, uint8_t, SKIP)                                                        \
	M(S, limit_armed, uint8_t, CODE)                                                   \
	M(S, pd, uint16_t, CODE)                /* as the PD's handle */                   \
	M(S, max_sge, uint32_t, CODE)                                                      \
	M(S, limit, uint32_t, CODE)                                                        \
	A(S, wq, struct rocev2_wq, , CODE)                                                 \
	M(S, refcnt, uint32_t, DERIVE)          /* QPs restored on it */

#define AV_MEMBERS(M, A, S)                                                                \
	A(S, dmac, uint8_t, [6], CODE)                                                     \
	M(S, ttl, uint8_t, CODE)                                                           \
	M(S, tos, uint8_t, CODE)                                                           \
	M(S, dip, uint32_t, CODE)

#define QP_ATTR_MEMBERS(M, A, S)                                                           \
	M(S, qp_state, uint32_t, DERIVE)        /* = qp->state (qp.c keeps them equal) */  \
	M(S, cur_qp_state, uint32_t, SKIP)      /* query output only */                    \
	M(S, path_mtu, uint32_t, CODE)                                                     \
	M(S, qp_access_flags, uint32_t, CODE)                                              \
	M(S, rq_psn, uint32_t, CODE)                                                       \
	M(S, sq_psn, uint32_t, CODE)                                                       \
	M(S, dest_qp_num, uint32_t, CODE)                                                  \
	A(S, av, struct rocev2_av, , CODE)                                                 \
	M(S, timeout, uint8_t, CODE)                                                       \
	M(S, retry_cnt, uint8_t, CODE)                                                     \
	M(S, rnr_retry, uint8_t, CODE)                                                     \
	M(S, min_rnr_timer, uint8_t, CODE)                                                 \
	M(S, max_rd_atomic, uint8_t, CODE)                                                 \
	M(S, max_dest_rd_atomic, uint8_t, CODE)                                            \
	M(S, pkey_index, uint16_t, CODE)

#define QP_MEMBERS(M, A, S)                                                                \
	M(S, gen, uint16_t, CODE)               /* in the QPN */                           \
	M(S, in_use, uint8_t, SKIP)                                                        \
	M(S, state, uint8_t, CODE)                                                         \
	M(S, qpn, uint32_t, CODE)                                                          \
	A(S, attr, struct rocev2_qp_attr, , CODE)                                          \
	M(S, pd, uint16_t, CODE)                /* PD/CQ/SRQ: as handles */                \
	M(S, scq, uint16_t, CODE)                                                          \
	M(S, rcq, uint16_t, CODE)                                                          \
	M(S, srq, uint32_t, CODE)                                                          \
	A(S, sq, struct rocev2_wq, , CODE)                                                 \
	A(S, rq, struct rocev2_wq, , CODE)                                                 \
	M(S, max_send_sge, uint32_t, CODE)                                                 \
	M(S, max_recv_sge, uint32_t, CODE)                                                 \
	M(S, sq_sig_all, uint8_t, CODE)                                                    \
	M(S, stopped, uint8_t, SKIP)            /* restored QPs are stopped (1) */         \
	M(S, paused, uint8_t, CODE)             /* resume re-arms the pause timer */       \
	M(S, scheduled, uint8_t, SKIP)          /* resume schedules */                     \
	M(S, sport, uint16_t, DERIVE)           /* from the QPN */                         \
	M(S, mtu, uint32_t, DERIVE)             /* from attr.path_mtu */                   \
	M(S, sched_next, struct rocev2_qp *, SKIP)                                         \
	A(S, req, struct rocev2_req, , CODE)                                               \
	A(S, comp, struct rocev2_comp, , CODE)                                             \
	A(S, resp, struct rocev2_resp, , CODE)                                             \
	A(S, mig, struct rocev2_mig, , CODE)

/* Requester.  Of track[], the entries of the WQEs between the completer
 * and the first WQE never sent, [comp.wqe_index, next_new): those the
 * completer retires and a rewind sends again (checked against them). */
#define REQ_MEMBERS(M, A, S)                                                               \
	M(S, state, uint8_t, DUMP)                                                         \
	M(S, opcode, uint8_t, DUMP)                                                        \
	M(S, wqe_loaded, uint8_t, SKIP)         /* 0: wqe is re-read from the SQ */        \
	M(S, need_retry, uint8_t, DUMP)                                                    \
	M(S, psn, uint32_t, DUMP)                                                          \
	M(S, wqe_index, uint32_t, DUMP)                                                    \
	M(S, sq_pi, uint32_t, DERIVE)           /* = sq.pi (written, never read) */        \
	M(S, offset, uint64_t, DUMP)                                                       \
	M(S, noack_pkts, uint32_t, DUMP)                                                   \
	M(S, rd_atomic_outstanding, uint32_t, DUMP)                                        \
	A(S, track, struct rocev2_wqe_track, [ROCEV2_MAX_INFLIGHT_WQE], CODE)              \
	A(S, wqe, struct mnic_send_wqe, , SKIP) /* host memory has it */                   \
	M(S, started, uint8_t, DUMP)                                                       \
	M(S, err_pending, uint8_t, DUMP)                                                   \
	M(S, err_status, uint8_t, DUMP)                                                    \
	M(S, reserved1, uint8_t, SKIP)                                                     \
	M(S, err_index, uint32_t, DUMP)                                                    \
	M(S, err_vendor, uint32_t, DUMP)                                                   \
	M(S, next_new, uint32_t, DUMP)                                                     \
	M(S, psn_hw, uint32_t, DUMP)

#define TRACK_MEMBERS(M, A, S)                                                             \
	M(S, first_psn, uint32_t, DUMP)                                                    \
	M(S, last_psn, uint32_t, DUMP)                                                     \
	M(S, length, uint32_t, DUMP)                                                       \
	M(S, wr_opcode, uint8_t, DUMP)                                                     \
	M(S, send_flags, uint8_t, DUMP)                                                    \
	M(S, state, uint8_t, DUMP)                                                         \
	M(S, reserved, uint8_t, SKIP)

#define COMP_MEMBERS(M, A, S)                                                              \
	M(S, psn, uint32_t, DUMP)                                                          \
	M(S, wqe_index, uint32_t, DUMP)                                                    \
	M(S, opcode, uint8_t, DUMP)                                                        \
	M(S, retry_cnt, uint8_t, DUMP)                                                     \
	M(S, rnr_retry, uint8_t, DUMP)                                                     \
	M(S, wqe_loaded, uint8_t, SKIP)         /* 0: wqe is re-read from the SQ */        \
	M(S, read_offset, uint64_t, DUMP)                                                  \
	A(S, retrans_timer, struct timer, , SKIP) /* resume re-arms */                  \
	A(S, rnr_timer, struct timer, , SKIP)                                           \
	A(S, wqe, struct mnic_send_wqe, , SKIP) /* host memory has it */                   \
	M(S, started_retry, uint8_t, DUMP)                                                 \
	M(S, rnr_wait, uint8_t, DUMP)           /* resume must end the wait (no timer) */  \
	M(S, drained, uint8_t, DUMP)                                                       \
	M(S, last_state, uint8_t, SKIP)         /* diagnostics: where the last run ended */

/* Responder.  rwqe only while rwqe_valid (the SEND being received); res[]
 * only the slots in use (type != 0), each with its slot number. */
#define RESP_MEMBERS(M, A, S)                                                              \
	M(S, psn, uint32_t, DUMP)                                                          \
	M(S, msn, uint32_t, DUMP)                                                          \
	M(S, opcode, uint8_t, DUMP)                                                        \
	M(S, sent_psn_nak, uint8_t, DUMP)                                                  \
	M(S, rwqe_valid, uint8_t, DUMP)                                                    \
	M(S, reserved, uint8_t, SKIP)                                                      \
	M(S, rwqe_offset, uint64_t, DUMP)                                                  \
	A(S, rwqe, struct mnic_recv_wqe, , CODE)                                           \
	M(S, write_va, uint64_t, DUMP)                                                     \
	M(S, write_rkey, uint32_t, DUMP)                                                   \
	M(S, write_resid, uint64_t, DUMP)                                                  \
	A(S, res, struct rocev2_resp_res, [ROCEV2_MAX_RD_ATOMIC], CODE)                    \
	M(S, res_head, uint32_t, DUMP)                                                     \
	M(S, res_pending, uint32_t, DUMP)                                                  \
	M(S, ack_psn, uint32_t, DUMP)                                                      \
	M(S, ack_psn_valid, uint8_t, DUMP)                                                 \
	M(S, last_state, uint8_t, SKIP)         /* diagnostics */                          \
	M(S, last_error, uint8_t, SKIP)         /* diagnostics */                          \
	M(S, reserved3, uint8_t, SKIP)                                                     \
	M(S, rwqe_length, uint64_t, DERIVE)     /* sum of rwqe's SGE lengths */            \
	M(S, write_length, uint32_t, DUMP)                                                 \
	M(S, ack_deferred, uint8_t, DUMP)                                                  \
	M(S, ack_syndrome, uint8_t, DUMP)                                                  \
	A(S, reserved4, uint8_t, [2], SKIP)                                                \
	M(S, ack_deferred_psn, uint32_t, DUMP)                                             \
	M(S, ack_deferred_msn, uint32_t, DUMP)

#define RES_MEMBERS(M, A, S)                                                               \
	M(S, type, uint8_t, DUMP)                                                          \
	M(S, replay, uint8_t, DUMP)                                                        \
	M(S, reserved, uint16_t, SKIP)                                                     \
	M(S, first_psn, uint32_t, DUMP)                                                    \
	M(S, last_psn, uint32_t, DUMP)                                                     \
	M(S, cur_psn, uint32_t, DUMP)                                                      \
	M(S, va, uint64_t, DUMP)                                                           \
	M(S, rkey, uint32_t, DUMP)                                                         \
	M(S, resid, uint32_t, DUMP)                                                        \
	M(S, orig, uint64_t, DUMP)                                                         \
	M(S, msn, uint32_t, DUMP)                                                          \
	M(S, va_org, uint64_t, DUMP)                                                       \
	M(S, length, uint32_t, DUMP)                                                       \
	M(S, sending, uint8_t, DUMP)                                                       \
	A(S, reserved2, uint8_t, [3], SKIP)                                                \
	M(S, start_psn, uint32_t, DUMP)

/* Migration extension (migrate.c).  Its state machine and timers start
 * over with rocev2_resume_context on the target. */
#define MIG_MEMBERS(M, A, S)                                                               \
	M(S, resume_pending, uint8_t, SKIP)     /* resume sets it */                       \
	M(S, has_key, uint8_t, CODE)            /* QP flags bit 1 */                       \
	M(S, resume_at_rts, uint8_t, SKIP)      /* resume sets it (a QP in RTR) */         \
	A(S, reserved, uint8_t, [1], SKIP)                                                 \
	M(S, resume_psn, uint32_t, SKIP)        /* resume sets it */                       \
	A(S, key, uint8_t, [16], CODE)          /* only when has_key */                    \
	A(S, pause_timer, struct timer, , SKIP)                                         \
	A(S, resume_timer, struct timer, , SKIP)                                        \
	M(S, resume_retries, uint32_t, SKIP)

#define SGE_MEMBERS(M, A, S)                                                               \
	M(S, addr, uint64_t, CODE)                                                         \
	M(S, length, uint32_t, CODE)                                                       \
	M(S, lkey, uint32_t, CODE)

#define RECV_WQE_MEMBERS(M, A, S)                                                          \
	M(S, wr_id, uint64_t, CODE)                                                        \
	M(S, num_sge, uint8_t, CODE)                                                       \
	A(S, reserved, uint8_t, [55], SKIP)     /* unused by the firmware */               \
	A(S, sge, struct mnic_sge, [MNIC_MAX_SGE], CODE) /* the first num_sge */

/* The mirror of each struct, and the checks that it is the same: every
 * member at the same offset with the same size, the same size overall,
 * and as many members (a positional initializer with one value per list
 * entry: a member the list lacks, even one hidden in padding, is a
 * "missing initializer" error, forced on whatever the warning flags). */
#define MIRROR_M(S, m, type, how) type m;
#define MIRROR_A(S, m, type, arr, how) type m arr;
#define MIRROR_CHECK(S, m)                                                                  \
	_Static_assert(offsetof(struct S, m) == offsetof(struct dump_mirror_##S, m) &&      \
			       sizeof(((struct S *)0)->m) ==                                \
				       sizeof(((struct dump_mirror_##S *)0)->m),            \
		       "struct " #S "." #m " moved or changed: update dump.c");
#define CHECK_M(S, m, type, how) MIRROR_CHECK(S, m)
#define CHECK_A(S, m, type, arr, how) MIRROR_CHECK(S, m) AGGREGATE_##how(S, m)
#define AGGREGATE_DUMP(S, m) _Static_assert(0, "the field tables take scalars: " #S "." #m);
#define AGGREGATE_CODE(S, m)
#define AGGREGATE_DERIVE(S, m)
#define AGGREGATE_SKIP(S, m)
#define INIT_M(S, m, type, how) 0,
#define INIT_A(S, m, type, arr, how) { 0 },
#define MIRROR(LIST, S)                                                                     \
	struct dump_mirror_##S {                                                            \
		LIST(MIRROR_M, MIRROR_A, S)                                                 \
	};                                                                                  \
	LIST(CHECK_M, CHECK_A, S)                                                           \
	_Static_assert(sizeof(struct S) == sizeof(struct dump_mirror_##S),                   \
		       "struct " #S " changed: update dump.c");                              \
	_Static_assert(sizeof((struct S){ LIST(INIT_M, INIT_A, S) }) == sizeof(struct S),    \
		       "struct " #S ": a member is not in its list: update dump.c");

#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wmissing-braces"       /* { 0 } for nested aggregates */
MIRROR(PD_MEMBERS, rocev2_pd)
MIRROR(MR_MEMBERS, rocev2_mr)
MIRROR(QUEUE_ATTR_MEMBERS, rocev2_queue_attr)
MIRROR(CQ_MEMBERS, rocev2_cq)
MIRROR(WQ_MEMBERS, rocev2_wq)
MIRROR(SRQ_MEMBERS, rocev2_srq)
MIRROR(AV_MEMBERS, rocev2_av)
MIRROR(QP_ATTR_MEMBERS, rocev2_qp_attr)
MIRROR(QP_MEMBERS, rocev2_qp)
MIRROR(REQ_MEMBERS, rocev2_req)
MIRROR(TRACK_MEMBERS, rocev2_wqe_track)
MIRROR(COMP_MEMBERS, rocev2_comp)
MIRROR(RESP_MEMBERS, rocev2_resp)
MIRROR(RES_MEMBERS, rocev2_resp_res)
MIRROR(MIG_MEMBERS, rocev2_mig)
MIRROR(SGE_MEMBERS, mnic_sge)
MIRROR(RECV_WQE_MEMBERS, mnic_recv_wqe)
#pragma GCC diagnostic pop

/* ---- field tables: the DUMP members, in declaration order ----------------- */
struct dump_field {
	uint16_t off;
	uint8_t size;                   /* 1, 2, 4 or 8 */
};

#define FIELD_M(S, m, type, how) FIELD_##how(S, m)
#define FIELD_A(S, m, type, arr, how)
#define FIELD_DUMP(S, m) { offsetof(struct S, m), sizeof(((struct S *)0)->m) },
#define FIELD_CODE(S, m)
#define FIELD_DERIVE(S, m)
#define FIELD_SKIP(S, m)
#define SCALAR_M(S, m, type, how) SCALAR_##how(S, m)
#define SCALAR_A(S, m, type, arr, how)
#define SCALAR_DUMP(S, m)                                                                   \
	_Static_assert(sizeof(((struct S *)0)->m) == 1 || sizeof(((struct S *)0)->m) == 2 || \
			       sizeof(((struct S *)0)->m) == 4 ||                           \
			       sizeof(((struct S *)0)->m) == 8,                             \
		       "table-driven members are 1, 2, 4 or 8 bytes: " #S "." #m);
#define SCALAR_CODE(S, m)
#define SCALAR_DERIVE(S, m)
#define SCALAR_SKIP(S, m)
#define BYTES_M(S, m, type, how) +BYTES_##how(S, m)
#define BYTES_A(S, m, type, arr, how)
#define BYTES_DUMP(S, m) sizeof(((struct S *)0)->m)
#define BYTES_CODE(S, m) 0u
#define BYTES_DERIVE(S, m) 0u
#define BYTES_SKIP(S, m) 0u

#define FIELD_TABLE(LIST, S, name)                                                          \
	LIST(SCALAR_M, SCALAR_A, S)                                                         \
	static const struct dump_field name[] = { LIST(FIELD_M, FIELD_A, S) };

FIELD_TABLE(REQ_MEMBERS, rocev2_req, req_fields)
FIELD_TABLE(TRACK_MEMBERS, rocev2_wqe_track, track_fields)
FIELD_TABLE(COMP_MEMBERS, rocev2_comp, comp_fields)
FIELD_TABLE(RESP_MEMBERS, rocev2_resp, resp_fields)
FIELD_TABLE(RES_MEMBERS, rocev2_resp_res, res_fields)

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

/* The record layout of docs/migration-image.md, pinned: a DUMP member
 * added or removed changes these, and then the QP record version and the
 * document must change with them. */
#define REQ_BYTES (0u REQ_MEMBERS(BYTES_M, BYTES_A, rocev2_req))
#define COMP_BYTES (0u COMP_MEMBERS(BYTES_M, BYTES_A, rocev2_comp))
#define RESP_BYTES (0u RESP_MEMBERS(BYTES_M, BYTES_A, rocev2_resp))
#define TRACK_BYTES (0u TRACK_MEMBERS(BYTES_M, BYTES_A, rocev2_wqe_track))
#define RES_BYTES (0u RES_MEMBERS(BYTES_M, BYTES_A, rocev2_resp_res))
#define QP_TOP_BYTES 117u               /* QP record bytes before the requester */
_Static_assert(REQ_BYTES == 46u && COMP_BYTES == 22u && RESP_BYTES == 66u,
	       "QP record layout changed: bump its version, update docs/migration-image.md");
_Static_assert(QP_TOP_BYTES + REQ_BYTES + COMP_BYTES + RESP_BYTES == ROCEV2_DUMP_QP_MIN_LEN,
	       "QP record layout changed: update dump.h");
_Static_assert(TRACK_BYTES == ROCEV2_DUMP_TRACK_LEN && RES_BYTES + 1u == ROCEV2_DUMP_RES_LEN,
	       "QP record layout changed: update dump.h");

/* ---- byte order ------------------------------------------------------------- */

/* Output cursor.  buf NULL: only count (the sizing pass). */
struct dump_out {
	uint8_t *buf;
	size_t cap, pos;
};

/* Not inlined: one call per field, and every call inlined and unrolled
 * tripled this file's code. */
static __attribute__((noinline)) void out_le(struct dump_out *o, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++, o->pos++)
		if (o->buf && o->pos < o->cap)
			o->buf[o->pos] = (uint8_t)(v >> (8u * i));
}

/* Byte strings (MAC address, key) have no byte order. */
static void out_bytes(struct dump_out *o, const uint8_t *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out_le(o, src[i], 1);
}

/* Input cursor over one record payload; any read past its end sets bad
 * (checked once at the end of the record) and yields 0. */
struct dump_in {
	const uint8_t *p;
	size_t len, pos;
	int bad;
};

static __attribute__((noinline)) uint64_t in_le(struct dump_in *in, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if (in->len - in->pos < n) {
		in->bad = 1;
		in->pos = in->len;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)in->p[in->pos + i] << (8u * i);
	in->pos += n;
	return v;
}

static uint8_t in_u8(struct dump_in *in) { return (uint8_t)in_le(in, 1); }
static uint16_t in_u16(struct dump_in *in) { return (uint16_t)in_le(in, 2); }
static uint32_t in_u32(struct dump_in *in) { return (uint32_t)in_le(in, 4); }
static uint64_t in_u64(struct dump_in *in) { return in_le(in, 8); }

static void in_bytes(struct dump_in *in, uint8_t *dst, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = in_u8(in);
}

/* The whole payload and nothing more was read. */
static int in_done(const struct dump_in *in)
{
	return !in->bad && in->pos == in->len ? 0 : -HAL_EINVAL;
}

/* Table-driven members: the host value of a scalar of f->size bytes. */
static uint64_t field_get(const void *obj, const struct dump_field *f)
{
	const uint8_t *p = (const uint8_t *)obj + f->off;
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

static void field_set(void *obj, const struct dump_field *f, uint64_t v)
{
	uint8_t *p = (uint8_t *)obj + f->off;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (f->size) {
	case 1:
		memcpy(p, &v8, 1);
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	case 4:
		memcpy(p, &v32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

static void out_fields(struct dump_out *o, const void *obj, const struct dump_field *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out_le(o, field_get(obj, &t[i]), t[i].size);
}

static void in_fields(struct dump_in *in, void *obj, const struct dump_field *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		field_set(obj, &t[i], in_le(in, t[i].size));
}

static void copy_fields(void *dst, const void *src, const struct dump_field *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		field_set(dst, &t[i], field_get(src, &t[i]));
}

/* ---- decoded records ---------------------------------------------------------- */
struct pd_rec {
	uint32_t handle;
};

struct mr_rec {
	uint32_t lkey, pd;
	uint64_t addr, length;
	uint32_t access;
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
	uint8_t key[16];
};

#define MR_ACCESS_ALL (ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_WRITE | \
		       ROCEV2_ACCESS_REMOTE_READ | ROCEV2_ACCESS_REMOTE_ATOMIC)
#define QP_FLAGS_ALL (ROCEV2_DUMP_QPF_PAUSED | ROCEV2_DUMP_QPF_HAS_KEY)
#define PSN_OK(v) ((v) <= BTH_PSN_MASK)
#define FLAG_OK(v) ((v) <= 1u)

/* Static scratch (see the header comment).  qp_scratch: the QP record
 * being checked or applied.  slot_*: while an image is validated, the
 * generation (MR: key byte) of the image's object at each index, 0 if
 * none; while it is applied, the slot's generation before the restore,
 * which a rollback puts back. */
static struct qp_rec qp_scratch;
static struct {
	uint16_t pd[ROCEV2_MAX_PD];
	uint16_t cq[ROCEV2_MAX_CQ];
	uint16_t srq[ROCEV2_MAX_SRQ];
	uint16_t qp[ROCEV2_MAX_QP];
	uint8_t mr[ROCEV2_MAX_MR];
} slot;

/* ---- handles ------------------------------------------------------------------ */

/* A PD/CQ/SRQ handle that can name a slot: index in range, generation
 * not 0 (pool.h). */
static int handle_ok(uint32_t h, uint32_t max)
{
	return rocev2_handle_index(h) < max && rocev2_handle_gen(h) != 0;
}

static int qpn_ok(uint32_t qpn)
{
	return qpn <= BTH_QPN_MASK && (qpn & ROCEV2_QPN_IDX_MASK) < ROCEV2_MAX_QP &&
	       (qpn >> ROCEV2_QPN_IDX_BITS) != 0;
}

static int lkey_ok(uint32_t lkey)
{
	return (lkey >> ROCEV2_MR_KEY_BITS) < ROCEV2_MAX_MR && (lkey & ROCEV2_MR_KEY_MAX) != 0;
}

/* A queue's shape (queue.c's rocev2_queue_attr_check without the window,
 * which is this NIC's and checked when the object is made). */
static int queue_shape_ok(const struct rocev2_queue_attr *q, int may_be_none)
{
	if (q->size == 0)
		return may_be_none;
	return q->size <= ROCEV2_MAX_QUEUE_SIZE && !(q->size & (q->size - 1u)) &&
	       !(q->dbrec_addr & (sizeof(struct mnic_dbrec) - 1u));
}

static void out_queue(struct dump_out *o, const struct rocev2_queue_attr *q)
{
	out_le(o, q->ring_addr, 8);
	out_le(o, q->dbrec_addr, 8);
	out_le(o, q->size, 4);
}

static void in_queue(struct dump_in *in, struct rocev2_queue_attr *q)
{
	q->ring_addr = in_u64(in);
	q->dbrec_addr = in_u64(in);
	q->size = in_u32(in);
}

/* ---- PD ------------------------------------------------------------------------- */
static void pd_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx)
{
	out_le(o, rocev2_handle(e->pds[idx].gen, idx), 4);
}

static int pd_decode(const void *p, size_t len, struct pd_rec *r)
{
	struct dump_in in = { p, len, 0, 0 };

	r->handle = in_u32(&in);
	if (in_done(&in) || !handle_ok(r->handle, ROCEV2_MAX_PD))
		return -HAL_EINVAL;
	return 0;
}

/* Slot helpers: make the object at exactly this index and generation,
 * as pd.c/mr.c/cq.c/srq.c/qp.c make one at the first free slot. */
static int pd_apply(struct rocev2 *e, const struct pd_rec *r)
{
	uint32_t idx = rocev2_handle_index(r->handle);
	struct rocev2_pd *pd = &e->pds[idx];

	if (pd->in_use)
		return -HAL_EEXIST;
	pd->gen = (uint16_t)rocev2_handle_gen(r->handle);
	pd->refcnt = 0;
	pd->in_use = 1;
	e->n_pd++;
	return 0;
}

int rocev2_restore_pd(struct rocev2 *e, const void *payload, size_t len)
{
	struct pd_rec r;
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = pd_decode(payload, len, &r);
	return rc ? rc : pd_apply(e, &r);
}

/* ---- MR ------------------------------------------------------------------------- */
static void mr_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx)
{
	const struct rocev2_mr *mr = &e->mrs[idx];

	out_le(o, mr->lkey, 4);
	out_le(o, rocev2_handle(e->pds[mr->pd].gen, mr->pd), 4);
	out_le(o, mr->addr, 8);
	out_le(o, mr->length, 8);
	out_le(o, mr->access, 4);
}

static int mr_decode(const void *p, size_t len, struct mr_rec *r)
{
	struct dump_in in = { p, len, 0, 0 };

	r->lkey = in_u32(&in);
	r->pd = in_u32(&in);
	r->addr = in_u64(&in);
	r->length = in_u64(&in);
	r->access = in_u32(&in);
	if (in_done(&in) || !lkey_ok(r->lkey) || !handle_ok(r->pd, ROCEV2_MAX_PD))
		return -HAL_EINVAL;
	/* mr.c's rules: known bits; remote write or atomic needs local write
	 * (IBA 10.6.3.1). */
	if ((r->access & ~(uint32_t)MR_ACCESS_ALL) ||
	    ((r->access & (ROCEV2_ACCESS_REMOTE_WRITE | ROCEV2_ACCESS_REMOTE_ATOMIC)) &&
	     !(r->access & ROCEV2_ACCESS_LOCAL_WRITE)))
		return -HAL_EINVAL;
	return 0;
}

/* MigrOS forces the MRN (a sysctl) and then sets the keys
 * (IBV_RESTORE_MR_KEYS); here both in one step.  A taken MRN is an error,
 * never a renumbering: the peer holds the rkey. */
static int mr_apply(struct rocev2 *e, const struct mr_rec *r)
{
	uint32_t idx = r->lkey >> ROCEV2_MR_KEY_BITS;
	struct rocev2_mr *mr = &e->mrs[idx];
	struct rocev2_pd *pd;

	if (mr->in_use)
		return -HAL_EEXIST;
	pd = rocev2_pd_get(e, r->pd);
	if (!pd)
		return -HAL_EINVAL;
	if (!rocev2_in_window(e, r->addr, r->length))
		return -HAL_EFAULT;
	mr->key = (uint8_t)(r->lkey & ROCEV2_MR_KEY_MAX);
	mr->pd = (uint16_t)(pd - e->pds);
	mr->access = r->access;
	mr->addr = r->addr;
	mr->length = r->length;
	mr->lkey = r->lkey;
	mr->rkey = r->lkey;
	mr->in_use = 1;
	pd->refcnt++;
	e->n_mr++;
	return 0;
}

int rocev2_restore_mr(struct rocev2 *e, const void *payload, size_t len)
{
	struct mr_rec r;
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = mr_decode(payload, len, &r);
	return rc ? rc : mr_apply(e, &r);
}

/* ---- CQ ------------------------------------------------------------------------- */
static void cq_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx)
{
	const struct rocev2_cq *cq = &e->cqs[idx];

	out_le(o, rocev2_handle(cq->gen, idx), 4);
	out_queue(o, &cq->q);
	out_le(o, cq->pi, 4);
	out_le(o, cq->error, 1);
}

static int cq_decode(const void *p, size_t len, struct cq_rec *r)
{
	struct dump_in in = { p, len, 0, 0 };

	r->handle = in_u32(&in);
	in_queue(&in, &r->q);
	r->pi = in_u32(&in);
	r->error = in_u8(&in);
	if (in_done(&in) || !handle_ok(r->handle, ROCEV2_MAX_CQ) || !queue_shape_ok(&r->q, 0) ||
	    !FLAG_OK(r->error))
		return -HAL_EINVAL;
	return 0;
}

static int cq_apply(struct rocev2 *e, const struct cq_rec *r)
{
	struct rocev2_cq *cq = &e->cqs[rocev2_handle_index(r->handle)];
	int rc;

	if (cq->in_use)
		return -HAL_EEXIST;
	rc = rocev2_queue_attr_check(e, &r->q, MNIC_CQE_SIZE);
	if (rc)
		return rc;
	cq->gen = (uint16_t)rocev2_handle_gen(r->handle);
	cq->error = r->error;
	cq->q = r->q;
	cq->pi = r->pi;
	cq->refcnt = 0;
	cq->in_use = 1;
	e->n_cq++;
	return 0;
}

int rocev2_restore_cq(struct rocev2 *e, const void *payload, size_t len)
{
	struct cq_rec r;
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = cq_decode(payload, len, &r);
	return rc ? rc : cq_apply(e, &r);
}

/* ---- SRQ ------------------------------------------------------------------------ */
static void srq_encode(struct dump_out *o, const struct rocev2 *e, uint32_t idx)
{
	const struct rocev2_srq *srq = &e->srqs[idx];

	out_le(o, rocev2_handle(srq->gen, idx), 4);
	out_le(o, rocev2_handle(e->pds[srq->pd].gen, srq->pd), 4);
	out_queue(o, &srq->wq.q);
	out_le(o, srq->wq.ci, 4);
	out_le(o, srq->max_sge, 4);
	out_le(o, srq->limit, 4);
	out_le(o, srq->limit_armed, 1);
}

static int srq_decode(const void *p, size_t len, struct srq_rec *r)
{
	struct dump_in in = { p, len, 0, 0 };

	r->handle = in_u32(&in);
	r->pd = in_u32(&in);
	in_queue(&in, &r->q);
	r->ci = in_u32(&in);
	r->max_sge = in_u32(&in);
	r->limit = in_u32(&in);
	r->limit_armed = in_u8(&in);
	if (in_done(&in) || !handle_ok(r->handle, ROCEV2_MAX_SRQ) ||
	    !handle_ok(r->pd, ROCEV2_MAX_PD) || !queue_shape_ok(&r->q, 0))
		return -HAL_EINVAL;
	/* srq.c's rules; armed only with a limit (modify_srq_limit). */
	if (r->max_sge > MNIC_MAX_SGE || r->limit >= r->q.size || !FLAG_OK(r->limit_armed) ||
	    (r->limit_armed && r->limit == 0))
		return -HAL_EINVAL;
	return 0;
}

static int srq_apply(struct rocev2 *e, const struct srq_rec *r)
{
	struct rocev2_srq *srq = &e->srqs[rocev2_handle_index(r->handle)];
	struct rocev2_pd *pd;
	int rc;

	if (srq->in_use)
		return -HAL_EEXIST;
	pd = rocev2_pd_get(e, r->pd);
	if (!pd)
		return -HAL_EINVAL;
	rc = rocev2_queue_attr_check(e, &r->q, MNIC_WQE_SIZE);
	if (rc)
		return rc;
	srq->gen = (uint16_t)rocev2_handle_gen(r->handle);
	srq->pd = (uint16_t)(pd - e->pds);
	srq->max_sge = r->max_sge;
	srq->limit = r->limit;
	srq->limit_armed = r->limit_armed;
	/* The producer index is a cache: rocev2_rq_take re-reads the
	 * doorbell record before every take. */
	srq->wq = (struct rocev2_wq){ .q = r->q, .ci = r->ci, .pi = r->ci };
	srq->refcnt = 0;
	srq->in_use = 1;
	pd->refcnt++;
	e->n_srq++;
	return 0;
}

int rocev2_restore_srq(struct rocev2 *e, const void *payload, size_t len)
{
	struct srq_rec r;
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = srq_decode(payload, len, &r);
	return rc ? rc : srq_apply(e, &r);
}

/* ---- QP ------------------------------------------------------------------------- */

/* Send WQEs whose track[] entry is live: [comp.wqe_index, next_new). */
static uint32_t qp_ntrack(const struct rocev2_qp *qp)
{
	return qp->req.next_new - qp->comp.wqe_index;
}

static void out_wq(struct dump_out *o, const struct rocev2_wq *wq)
{
	out_queue(o, &wq->q);
	out_le(o, wq->ci, 4);
	out_le(o, wq->pi, 4);
}

static void in_wq(struct dump_in *in, struct rocev2_wq *wq)
{
	in_queue(in, &wq->q);
	wq->ci = in_u32(in);
	wq->pi = in_u32(in);
}

/* -HAL_EIO: the QP's own state contradicts itself (never, unless memory
 * is corrupt); nothing of it can be written. */
static int qp_encode(struct dump_out *o, const struct rocev2 *e, const struct rocev2_qp *qp)
{
	const struct rocev2_qp_attr *a = &qp->attr;
	const struct rocev2_resp *r = &qp->resp;
	uint32_t ntrack = qp_ntrack(qp), nres = 0, i;
	uint8_t flags = 0;

	if (ntrack > ROCEV2_MAX_INFLIGHT_WQE || (r->rwqe_valid && r->rwqe.num_sge > MNIC_MAX_SGE))
		return -HAL_EIO;
	for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++)
		nres += r->res[i].type != 0;
	if (qp->paused)
		flags |= ROCEV2_DUMP_QPF_PAUSED;
	if (qp->mig.has_key)
		flags |= ROCEV2_DUMP_QPF_HAS_KEY;

	out_le(o, qp->qpn, 4);
	out_le(o, rocev2_handle(e->pds[qp->pd].gen, qp->pd), 4);
	out_le(o, rocev2_handle(e->cqs[qp->scq].gen, qp->scq), 4);
	out_le(o, rocev2_handle(e->cqs[qp->rcq].gen, qp->rcq), 4);
	out_le(o, qp->srq == ROCEV2_NO_SRQ ? ROCEV2_NO_SRQ
					   : rocev2_handle(e->srqs[qp->srq].gen, qp->srq), 4);
	out_wq(o, &qp->sq);
	out_wq(o, &qp->rq);
	out_le(o, qp->max_send_sge, 1);
	out_le(o, qp->max_recv_sge, 1);
	out_le(o, qp->sq_sig_all, 1);
	out_le(o, qp->state, 1);
	out_le(o, flags, 1);
	out_le(o, a->path_mtu, 1);
	out_le(o, a->qp_access_flags, 1);
	out_le(o, a->timeout, 1);
	out_le(o, a->retry_cnt, 1);
	out_le(o, a->rnr_retry, 1);
	out_le(o, a->min_rnr_timer, 1);
	out_le(o, a->max_rd_atomic, 1);
	out_le(o, a->max_dest_rd_atomic, 1);
	out_le(o, a->av.ttl, 1);
	out_le(o, a->av.tos, 1);
	out_bytes(o, a->av.dmac, sizeof(a->av.dmac));
	out_le(o, a->av.dip, 4);
	out_le(o, a->pkey_index, 2);
	out_le(o, a->dest_qp_num, 4);
	out_le(o, a->rq_psn, 4);
	out_le(o, a->sq_psn, 4);
	out_le(o, ntrack, 1);
	out_le(o, nres, 1);
	out_fields(o, &qp->req, req_fields, NFIELDS(req_fields));
	out_fields(o, &qp->comp, comp_fields, NFIELDS(comp_fields));
	out_fields(o, r, resp_fields, NFIELDS(resp_fields));
	if (qp->mig.has_key)
		out_bytes(o, qp->mig.key, sizeof(qp->mig.key));
	for (i = 0; i < ntrack; i++)
		out_fields(o, &qp->req.track[(qp->comp.wqe_index + i) % ROCEV2_MAX_INFLIGHT_WQE],
			   track_fields, NFIELDS(track_fields));
	for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++) {
		if (!r->res[i].type)
			continue;
		out_le(o, i, 1);
		out_fields(o, &r->res[i], res_fields, NFIELDS(res_fields));
	}
	if (r->rwqe_valid) {
		out_le(o, r->rwqe.wr_id, 8);
		out_le(o, r->rwqe.num_sge, 1);
		for (i = 0; i < r->rwqe.num_sge; i++) {
			out_le(o, r->rwqe.sge[i].addr, 8);
			out_le(o, r->rwqe.sge[i].length, 4);
			out_le(o, r->rwqe.sge[i].lkey, 4);
		}
	}
	return 0;
}

static int opcode_ok(uint8_t op)
{
	return op == 0xffu || (rocev2_opcode(op)->mask & OPM_VALID);
}

/* Values a QP of this engine can hold (qp.c's attribute checks, the
 * stages' invariants that index arrays or bound lengths). */
static int qp_values_ok(const struct qp_rec *r)
{
	const struct rocev2_qp_attr *a = &r->attr;
	const struct rocev2_req *q = &r->req;
	const struct rocev2_comp *c = &r->comp;
	const struct rocev2_resp *p = &r->resp;
	uint32_t i, idx;

	if (!qpn_ok(r->qpn) || !handle_ok(r->pd, ROCEV2_MAX_PD) ||
	    !handle_ok(r->scq, ROCEV2_MAX_CQ) || !handle_ok(r->rcq, ROCEV2_MAX_CQ) ||
	    (r->srq != ROCEV2_NO_SRQ && !handle_ok(r->srq, ROCEV2_MAX_SRQ)))
		return 0;
	if (!queue_shape_ok(&r->sq.q, 1) || !queue_shape_ok(&r->rq.q, 1) ||
	    (r->srq != ROCEV2_NO_SRQ && r->rq.q.size != 0))
		return 0;
	if (r->max_send_sge > MNIC_MAX_SGE || r->max_recv_sge > MNIC_MAX_SGE ||
	    !FLAG_OK(r->sq_sig_all) || r->state >= ROCEV2_QPS_NUM || (r->flags & ~QP_FLAGS_ALL))
		return 0;
	if (a->path_mtu < ROCEV2_MTU_256 || a->path_mtu > ROCEV2_MTU_4096 ||
	    (a->qp_access_flags & ~(uint32_t)MR_ACCESS_ALL) || a->timeout > 31u ||
	    a->retry_cnt > 7u || a->rnr_retry > 7u || a->min_rnr_timer > 31u ||
	    a->max_rd_atomic > ROCEV2_MAX_RD_ATOMIC ||
	    a->max_dest_rd_atomic > ROCEV2_MAX_RD_ATOMIC ||
	    a->pkey_index != 0 || a->dest_qp_num > BTH_QPN_MASK || !PSN_OK(a->rq_psn) ||
	    !PSN_OK(a->sq_psn))
		return 0;
	/* Requester and completer. */
	if (q->state > REQ_STATE_ERROR || !opcode_ok(q->opcode) || !FLAG_OK(q->need_retry) ||
	    !PSN_OK(q->psn) || !PSN_OK(q->psn_hw) || q->offset > ROCEV2_MAX_MSG ||
	    q->rd_atomic_outstanding > ROCEV2_MAX_INFLIGHT_WQE || !FLAG_OK(q->started) ||
	    !FLAG_OK(q->err_pending))
		return 0;
	if (r->ntrack > ROCEV2_MAX_INFLIGHT_WQE || q->next_new - c->wqe_index != r->ntrack)
		return 0;
	for (i = 0; i < r->ntrack; i++) {
		const struct rocev2_wqe_track *t =
			&q->track[(c->wqe_index + i) % ROCEV2_MAX_INFLIGHT_WQE];

		if (!PSN_OK(t->first_psn) || !PSN_OK(t->last_psn) || t->length > ROCEV2_MAX_MSG ||
		    t->wr_opcode >= MNIC_WR_NUM || !FLAG_OK(t->state))
			return 0;
	}
	if (!PSN_OK(c->psn) || !opcode_ok(c->opcode) || c->retry_cnt > 7u || c->rnr_retry > 7u ||
	    c->read_offset > ROCEV2_MAX_MSG || !FLAG_OK(c->started_retry) ||
	    !FLAG_OK(c->rnr_wait) || !FLAG_OK(c->drained))
		return 0;
	/* Responder. */
	if (!PSN_OK(p->psn) || !PSN_OK(p->msn) || !opcode_ok(p->opcode) ||
	    !FLAG_OK(p->sent_psn_nak) || !FLAG_OK(p->rwqe_valid) ||
	    p->rwqe_offset > ROCEV2_MAX_MSG || p->write_resid > ROCEV2_MAX_MSG ||
	    p->write_length > ROCEV2_MAX_MSG || p->res_head >= ROCEV2_MAX_RD_ATOMIC ||
	    p->res_pending > ROCEV2_MAX_RD_ATOMIC || !PSN_OK(p->ack_psn) ||
	    !FLAG_OK(p->ack_psn_valid) || !FLAG_OK(p->ack_deferred) ||
	    !PSN_OK(p->ack_deferred_psn) || !PSN_OK(p->ack_deferred_msn))
		return 0;
	for (idx = 0; idx < ROCEV2_MAX_RD_ATOMIC; idx++) {
		const struct rocev2_resp_res *s = &p->res[idx];

		if (!s->type)
			continue;
		if ((s->type != OP_READ_REQUEST && s->type != OP_COMPARE_SWAP &&
		     s->type != OP_FETCH_ADD) ||
		    !PSN_OK(s->first_psn) || !PSN_OK(s->last_psn) || !PSN_OK(s->cur_psn) ||
		    !PSN_OK(s->start_psn) || !PSN_OK(s->msn) || !FLAG_OK(s->replay) ||
		    !FLAG_OK(s->sending) || s->length > ROCEV2_MAX_MSG || s->resid > s->length)
			return 0;
	}
	if (p->rwqe_valid && (p->rwqe.num_sge > MNIC_MAX_SGE || p->rwqe_offset > p->rwqe_length))
		return 0;
	return 1;
}

/* Decode and check one QP record payload into r. */
static int qp_decode(const void *payload, size_t len, struct qp_rec *r)
{
	struct dump_in in = { payload, len, 0, 0 };
	struct rocev2_qp_attr *a = &r->attr;
	struct rocev2_resp *p = &r->resp;
	uint32_t i, slot_no;

	memset(r, 0, sizeof(*r));
	r->qpn = in_u32(&in);
	r->pd = in_u32(&in);
	r->scq = in_u32(&in);
	r->rcq = in_u32(&in);
	r->srq = in_u32(&in);
	in_wq(&in, &r->sq);
	in_wq(&in, &r->rq);
	r->max_send_sge = in_u8(&in);
	r->max_recv_sge = in_u8(&in);
	r->sq_sig_all = in_u8(&in);
	r->state = in_u8(&in);
	r->flags = in_u8(&in);
	a->path_mtu = in_u8(&in);
	a->qp_access_flags = in_u8(&in);
	a->timeout = in_u8(&in);
	a->retry_cnt = in_u8(&in);
	a->rnr_retry = in_u8(&in);
	a->min_rnr_timer = in_u8(&in);
	a->max_rd_atomic = in_u8(&in);
	a->max_dest_rd_atomic = in_u8(&in);
	a->av.ttl = in_u8(&in);
	a->av.tos = in_u8(&in);
	in_bytes(&in, a->av.dmac, sizeof(a->av.dmac));
	a->av.dip = in_u32(&in);
	a->pkey_index = in_u16(&in);
	a->dest_qp_num = in_u32(&in);
	a->rq_psn = in_u32(&in);
	a->sq_psn = in_u32(&in);
	a->qp_state = r->state;
	r->ntrack = in_u8(&in);
	r->nres = in_u8(&in);
	in_fields(&in, &r->req, req_fields, NFIELDS(req_fields));
	in_fields(&in, &r->comp, comp_fields, NFIELDS(comp_fields));
	in_fields(&in, p, resp_fields, NFIELDS(resp_fields));
	if (in.bad)
		return -HAL_EINVAL;
	if (r->flags & ROCEV2_DUMP_QPF_HAS_KEY)
		in_bytes(&in, r->key, sizeof(r->key));
	if (r->ntrack > ROCEV2_MAX_INFLIGHT_WQE || r->nres > ROCEV2_MAX_RD_ATOMIC)
		return -HAL_EINVAL;
	for (i = 0; i < r->ntrack; i++)
		in_fields(&in, &r->req.track[(r->comp.wqe_index + i) % ROCEV2_MAX_INFLIGHT_WQE],
			  track_fields, NFIELDS(track_fields));
	for (i = 0; i < r->nres; i++) {
		struct rocev2_resp_res *s;

		slot_no = in_u8(&in);
		if (in.bad || slot_no >= ROCEV2_MAX_RD_ATOMIC || p->res[slot_no].type)
			return -HAL_EINVAL;     /* out of range or twice */
		s = &p->res[slot_no];
		in_fields(&in, s, res_fields, NFIELDS(res_fields));
		if (!s->type)
			return -HAL_EINVAL;     /* only slots in use are listed */
	}
	if (p->rwqe_valid) {
		p->rwqe.wr_id = in_u64(&in);
		p->rwqe.num_sge = in_u8(&in);
		if (p->rwqe.num_sge > MNIC_MAX_SGE)
			return -HAL_EINVAL;
		for (i = 0; i < p->rwqe.num_sge; i++) {
			p->rwqe.sge[i].addr = in_u64(&in);
			p->rwqe.sge[i].length = in_u32(&in);
			p->rwqe.sge[i].lkey = in_u32(&in);
		}
		if (rocev2_sge_total(p->rwqe.sge, p->rwqe.num_sge, &p->rwqe_length) < 0)
			return -HAL_EINVAL;
	}
	if (in_done(&in) || !qp_values_ok(r))
		return -HAL_EINVAL;
	return 0;
}

/* qp.c's constructor, at the QPN's slot and generation; the QP stays
 * Stopped until rocev2_resume_context. */
static int qp_create_apply(struct rocev2 *e, const struct qp_rec *r)
{
	struct rocev2_qp_init_attr a = {
		.pd = r->pd, .send_cq = r->scq, .recv_cq = r->rcq, .srq = r->srq,
		.sq = r->sq.q, .rq = r->rq.q,
		.max_send_sge = r->max_send_sge, .max_recv_sge = r->max_recv_sge,
		.sq_sig_all = r->sq_sig_all,
	};
	int rc;

	if (e->qps[r->qpn & ROCEV2_QPN_IDX_MASK].in_use)
		return -HAL_EEXIST;
	if ((rc = rocev2_qp_install(e, r->qpn, &a)) != 0)
		return rc;
	e->qps[r->qpn & ROCEV2_QPN_IDX_MASK].stopped = 1;
	return 0;
}

/* The QP that rocev2_restore_qp_create made from this record. */
static int qp_matches(const struct rocev2 *e, const struct rocev2_qp *qp, const struct qp_rec *r)
{
	uint32_t srq = qp->srq == ROCEV2_NO_SRQ ? ROCEV2_NO_SRQ
						 : rocev2_handle(e->srqs[qp->srq].gen, qp->srq);

	return rocev2_handle(e->pds[qp->pd].gen, qp->pd) == r->pd &&
	       rocev2_handle(e->cqs[qp->scq].gen, qp->scq) == r->scq &&
	       rocev2_handle(e->cqs[qp->rcq].gen, qp->rcq) == r->rcq && srq == r->srq &&
	       !memcmp(&qp->sq.q, &r->sq.q, sizeof(qp->sq.q)) &&
	       !memcmp(&qp->rq.q, &r->rq.q, sizeof(qp->rq.q)) &&
	       qp->max_send_sge == r->max_send_sge && qp->max_recv_sge == r->max_recv_sge &&
	       qp->sq_sig_all == r->sq_sig_all;
}

/* MigrOS's IBV_RESTORE_QP_REFILL: attributes and stage state onto the
 * QP made by qp_create_apply; nothing armed, nothing scheduled. */
static int qp_refill_apply(struct rocev2 *e, const struct qp_rec *r)
{
	struct rocev2_qp *qp = rocev2_qp_lookup(e, r->qpn);
	const struct rocev2_resp *p = &r->resp;
	uint32_t i;

	if (!qp || !qp_matches(e, qp, r))
		return -HAL_EINVAL;
	if (qp->state != ROCEV2_QPS_RESET || qp->req.started)
		return -HAL_EBUSY;
	qp->attr = r->attr;
	qp->state = r->state;
	qp->mtu = rocev2_mtu_bytes(r->attr.path_mtu);
	qp->paused = (r->flags & ROCEV2_DUMP_QPF_PAUSED) != 0;
	qp->stopped = 1;
	qp->sq.ci = r->sq.ci;
	qp->sq.pi = r->sq.pi;
	qp->rq.ci = r->rq.ci;
	qp->rq.pi = r->rq.pi;

	copy_fields(&qp->req, &r->req, req_fields, NFIELDS(req_fields));
	for (i = 0; i < r->ntrack; i++) {
		uint32_t t = (r->comp.wqe_index + i) % ROCEV2_MAX_INFLIGHT_WQE;

		copy_fields(&qp->req.track[t], &r->req.track[t], track_fields,
			    NFIELDS(track_fields));
	}
	qp->req.wqe_loaded = 0;
	qp->req.sq_pi = qp->sq.pi;

	copy_fields(&qp->comp, &r->comp, comp_fields, NFIELDS(comp_fields));
	qp->comp.wqe_loaded = 0;

	copy_fields(&qp->resp, p, resp_fields, NFIELDS(resp_fields));
	for (i = 0; i < ROCEV2_MAX_RD_ATOMIC; i++) {
		memset(&qp->resp.res[i], 0, sizeof(qp->resp.res[i]));
		if (p->res[i].type)
			copy_fields(&qp->resp.res[i], &p->res[i], res_fields, NFIELDS(res_fields));
	}
	memset(&qp->resp.rwqe, 0, sizeof(qp->resp.rwqe));
	qp->resp.rwqe_length = 0;
	if (p->rwqe_valid) {
		qp->resp.rwqe.wr_id = p->rwqe.wr_id;
		qp->resp.rwqe.num_sge = p->rwqe.num_sge;
		for (i = 0; i < p->rwqe.num_sge; i++)
			qp->resp.rwqe.sge[i] = p->rwqe.sge[i];
		qp->resp.rwqe_length = p->rwqe_length;
	}

	/* rocev2_mig_reset (create) forgot any key: the image's, if any. */
	qp->mig.has_key = (r->flags & ROCEV2_DUMP_QPF_HAS_KEY) != 0;
	memcpy(qp->mig.key, r->key, sizeof(qp->mig.key));
	return 0;
}

int rocev2_restore_qp_create(struct rocev2 *e, const void *payload, size_t len)
{
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = qp_decode(payload, len, &qp_scratch);
	return rc ? rc : qp_create_apply(e, &qp_scratch);
}

int rocev2_restore_qp_refill(struct rocev2 *e, const void *payload, size_t len)
{
	int rc;

	if (!e || !payload)
		return -HAL_EINVAL;
	rc = qp_decode(payload, len, &qp_scratch);
	return rc ? rc : qp_refill_apply(e, &qp_scratch);
}

/* ---- dump ------------------------------------------------------------------------ */

static void rec_begin(struct dump_out *o, uint16_t type, size_t *start)
{
	*start = o->pos;
	out_le(o, type, 2);
	out_le(o, ROCEV2_DUMP_REC_VERSION, 2);
	out_le(o, 0, 4);                /* length: rec_end */
}

static void rec_end(struct dump_out *o, size_t start, unsigned stat_type,
		    struct rocev2_dump_stats *st, uint32_t *count)
{
	size_t end = o->pos;

	o->pos = start + 4u;
	out_le(o, end - start, 4);
	o->pos = end;
	st->objects[stat_type]++;
	st->bytes[stat_type] += (uint32_t)(end - start);
	(*count)++;
}

/* Every record, in dependency order, from o->pos on; counts them. */
static int dump_records(const struct rocev2 *e, struct dump_out *o, struct rocev2_dump_stats *st,
			uint32_t *count)
{
	size_t start;
	uint32_t i;
	int rc;

	*count = 0;
	for (i = 0; i < ROCEV2_MAX_PD; i++) {
		if (!e->pds[i].in_use)
			continue;
		rec_begin(o, ROCEV2_OBJ_PD, &start);
		pd_encode(o, e, i);
		rec_end(o, start, ROCEV2_OBJ_PD, st, count);
	}
	for (i = 0; i < ROCEV2_MAX_MR; i++) {
		if (!e->mrs[i].in_use)
			continue;
		rec_begin(o, ROCEV2_OBJ_MR, &start);
		mr_encode(o, e, i);
		rec_end(o, start, ROCEV2_OBJ_MR, st, count);
	}
	for (i = 0; i < ROCEV2_MAX_CQ; i++) {
		if (!e->cqs[i].in_use)
			continue;
		rec_begin(o, ROCEV2_OBJ_CQ, &start);
		cq_encode(o, e, i);
		rec_end(o, start, ROCEV2_OBJ_CQ, st, count);
	}
	for (i = 0; i < ROCEV2_MAX_SRQ; i++) {
		if (!e->srqs[i].in_use)
			continue;
		rec_begin(o, ROCEV2_OBJ_SRQ, &start);
		srq_encode(o, e, i);
		rec_end(o, start, ROCEV2_OBJ_SRQ, st, count);
	}
	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		const struct rocev2_qp *qp = &e->qps[i];

		if (!qp->in_use)
			continue;
		rec_begin(o, ROCEV2_OBJ_QP, &start);
		rc = qp_encode(o, e, qp);
		if (rc)
			return rc;
		/* Statistics only: MigrOS's Table 2 lists a QP with an SRQ
		 * apart; the record type is QP either way. */
		rec_end(o, start, qp->srq == ROCEV2_NO_SRQ ? ROCEV2_OBJ_QP : ROCEV2_OBJ_QP_SRQ, st,
			count);
	}
	return 0;
}

/* MigrOS's ib_pause_qp on every QP, in one step: the engine runs to
 * completion, so no packet is handled between this and the image.
 * Timers keep running; a stopped QP's requester sends nothing (req.c),
 * its completer takes nothing (comp.c), its responder NAKs new requests
 * (resp.c).  rocev2_resume_context / rocev2_abort_dump undo it. */
static void dump_stop(struct rocev2 *e)
{
	uint32_t i;

	for (i = 0; i < ROCEV2_MAX_QP; i++)
		if (e->qps[i].in_use)
			e->qps[i].stopped = 1;
	e->ctx_stopped = 1;
}

int rocev2_dump_context(struct rocev2 *e, void *buf, size_t cap, size_t *len,
			struct rocev2_dump_stats *stats)
{
	struct rocev2_dump_stats st;
	struct dump_out o = { NULL, 0, ROCEV2_DUMP_HDR_LEN };
	uint32_t count;
	uint8_t *b = buf;
	size_t total;
	int rc;

	if (!e || !len || (!buf && cap))
		return -HAL_EINVAL;
	*len = 0;
	dump_stop(e);
	/* Size first: a buffer too small gets nothing written to it. */
	memset(&st, 0, sizeof(st));
	rc = dump_records(e, &o, &st, &count);
	if (rc)
		return rc;
	total = o.pos;
	if (total > UINT32_MAX)
		return -HAL_E2BIG;      /* cannot happen with the pool sizes */
	st.total = (uint32_t)total;
	if (stats)
		*stats = st;
	if (total > cap)
		return -HAL_ENOSPC;

	o = (struct dump_out){ b, cap, ROCEV2_DUMP_HDR_LEN };
	memset(&st, 0, sizeof(st));
	rc = dump_records(e, &o, &st, &count);
	if (rc)
		return rc;
	o.pos = 0;
	out_bytes(&o, (const uint8_t *)ROCEV2_DUMP_MAGIC, ROCEV2_DUMP_MAGIC_LEN);
	out_le(&o, ROCEV2_DUMP_VERSION, 2);
	out_le(&o, 0, 2);               /* flags */
	out_le(&o, count, 4);
	out_le(&o, total, 4);
	out_le(&o, crc32c(0, b + ROCEV2_DUMP_HDR_LEN, total - ROCEV2_DUMP_HDR_LEN), 4);
	*len = total;
	return 0;
}

/* ---- restore ---------------------------------------------------------------------- */

struct dump_rec {
	uint16_t type, version;
	const uint8_t *payload;
	size_t len;                     /* payload bytes */
};

/* The record at *pos of a validated image; advances *pos. */
static void rec_at(const uint8_t *img, size_t *pos, struct dump_rec *r)
{
	struct dump_in in = { img + *pos, ROCEV2_DUMP_REC_HDR_LEN, 0, 0 };
	uint32_t len;

	r->type = in_u16(&in);
	r->version = in_u16(&in);
	len = in_u32(&in);
	r->payload = img + *pos + ROCEV2_DUMP_REC_HDR_LEN;
	r->len = len - ROCEV2_DUMP_REC_HDR_LEN;
	*pos += len;
}

/* Payload bytes of a record of this type at least (unknown type: 0). */
static size_t rec_min_len(uint16_t type)
{
	switch (type) {
	case ROCEV2_OBJ_PD:
		return ROCEV2_DUMP_PD_LEN;
	case ROCEV2_OBJ_MR:
		return ROCEV2_DUMP_MR_LEN;
	case ROCEV2_OBJ_CQ:
		return ROCEV2_DUMP_CQ_LEN;
	case ROCEV2_OBJ_SRQ:
		return ROCEV2_DUMP_SRQ_LEN;
	case ROCEV2_OBJ_QP:
		return ROCEV2_DUMP_QP_MIN_LEN;
	default:
		return 0;
	}
}

/* One record on its own: decoded and its values checked; the object's
 * index recorded so that the second pass can resolve references. */
static int rec_check(const struct dump_rec *r)
{
	struct pd_rec pd;
	struct mr_rec mr;
	struct cq_rec cq;
	struct srq_rec srq;
	uint32_t idx;
	int rc;

	switch (r->type) {
	case ROCEV2_OBJ_PD:
		rc = pd_decode(r->payload, r->len, &pd);
		if (rc)
			return rc;
		idx = rocev2_handle_index(pd.handle);
		if (slot.pd[idx])
			return -HAL_EINVAL;
		slot.pd[idx] = (uint16_t)rocev2_handle_gen(pd.handle);
		return 0;
	case ROCEV2_OBJ_MR:
		rc = mr_decode(r->payload, r->len, &mr);
		if (rc)
			return rc;
		idx = mr.lkey >> ROCEV2_MR_KEY_BITS;
		if (slot.mr[idx])
			return -HAL_EINVAL;
		slot.mr[idx] = (uint8_t)(mr.lkey & ROCEV2_MR_KEY_MAX);
		return 0;
	case ROCEV2_OBJ_CQ:
		rc = cq_decode(r->payload, r->len, &cq);
		if (rc)
			return rc;
		idx = rocev2_handle_index(cq.handle);
		if (slot.cq[idx])
			return -HAL_EINVAL;
		slot.cq[idx] = (uint16_t)rocev2_handle_gen(cq.handle);
		return 0;
	case ROCEV2_OBJ_SRQ:
		rc = srq_decode(r->payload, r->len, &srq);
		if (rc)
			return rc;
		idx = rocev2_handle_index(srq.handle);
		if (slot.srq[idx])
			return -HAL_EINVAL;
		slot.srq[idx] = (uint16_t)rocev2_handle_gen(srq.handle);
		return 0;
	default:
		rc = qp_decode(r->payload, r->len, &qp_scratch);
		if (rc)
			return rc;
		idx = qp_scratch.qpn & ROCEV2_QPN_IDX_MASK;
		if (slot.qp[idx])
			return -HAL_EINVAL;
		slot.qp[idx] = (uint16_t)(qp_scratch.qpn >> ROCEV2_QPN_IDX_BITS);
		return 0;
	}
}

/* The image's object with this handle (its index and generation). */
static int in_image(const uint16_t *gens, uint32_t h)
{
	return gens[rocev2_handle_index(h)] == rocev2_handle_gen(h);
}

/* Second pass: every reference names an object of the image (an image
 * is a whole context; the per-object commands are for anything else). */
static int rec_refs_ok(const struct dump_rec *r)
{
	struct mr_rec mr;
	struct srq_rec srq;
	const struct qp_rec *q = &qp_scratch;

	switch (r->type) {
	case ROCEV2_OBJ_MR:
		(void)mr_decode(r->payload, r->len, &mr);
		return in_image(slot.pd, mr.pd);
	case ROCEV2_OBJ_SRQ:
		(void)srq_decode(r->payload, r->len, &srq);
		return in_image(slot.pd, srq.pd);
	case ROCEV2_OBJ_QP:
		(void)qp_decode(r->payload, r->len, &qp_scratch);
		return in_image(slot.pd, q->pd) && in_image(slot.cq, q->scq) &&
		       in_image(slot.cq, q->rcq) &&
		       (q->srq == ROCEV2_NO_SRQ || in_image(slot.srq, q->srq));
	default:
		return 1;
	}
}

int rocev2_validate_image(const void *img, size_t len)
{
	const uint8_t *b = img;
	struct dump_in in = { b, len, 0, 0 };
	uint8_t magic[ROCEV2_DUMP_MAGIC_LEN];
	uint32_t count, total, crc, i;
	struct dump_rec r;
	size_t pos;
	int rc;

	if (!img || len < ROCEV2_DUMP_HDR_LEN)
		return -HAL_EINVAL;
	in_bytes(&in, magic, sizeof(magic));
	if (memcmp(magic, ROCEV2_DUMP_MAGIC, ROCEV2_DUMP_MAGIC_LEN))
		return -HAL_EINVAL;
	if (in_u16(&in) != ROCEV2_DUMP_VERSION)
		return -HAL_ERANGE;
	if (in_u16(&in) != 0)
		return -HAL_EINVAL;     /* no flags are defined in version 1 */
	count = in_u32(&in);
	total = in_u32(&in);
	crc = in_u32(&in);
	if (total != len)
		return -HAL_EINVAL;     /* truncated, or trailing bytes */
	if (crc32c(0, b + ROCEV2_DUMP_HDR_LEN, len - ROCEV2_DUMP_HDR_LEN) != crc)
		return -HAL_EIO;

	/* Pass 1: every record's frame and contents.  Each record takes at
	 * least its header, so the walk is bounded by len whatever count
	 * says. */
	memset(&slot, 0, sizeof(slot));
	pos = ROCEV2_DUMP_HDR_LEN;
	for (i = 0; i < count; i++) {
		struct dump_in h = { b + pos, len - pos, 0, 0 };
		uint32_t rlen;

		r.type = in_u16(&h);
		r.version = in_u16(&h);
		rlen = in_u32(&h);
		if (h.bad || rlen < ROCEV2_DUMP_REC_HDR_LEN || rlen > len - pos)
			return -HAL_EINVAL;
		if (!rec_min_len(r.type))
			return -HAL_EINVAL;     /* unknown type */
		if (r.version != ROCEV2_DUMP_REC_VERSION)
			return -HAL_ERANGE;
		if (rlen - ROCEV2_DUMP_REC_HDR_LEN < rec_min_len(r.type))
			return -HAL_EINVAL;
		r.payload = b + pos + ROCEV2_DUMP_REC_HDR_LEN;
		r.len = rlen - ROCEV2_DUMP_REC_HDR_LEN;
		rc = rec_check(&r);
		if (rc)
			return rc;
		pos += rlen;
	}
	if (pos != len)
		return -HAL_EINVAL;     /* count says fewer records than there are */

	/* Pass 2: references, whatever order the records came in. */
	pos = ROCEV2_DUMP_HDR_LEN;
	for (i = 0; i < count; i++) {
		rec_at(b, &pos, &r);
		if (!rec_refs_ok(&r))
			return -HAL_EINVAL;
	}
	return 0;
}

/* The order objects are made in: a kind after the kinds it refers to. */
static const uint16_t restore_order[] = {
	ROCEV2_OBJ_PD, ROCEV2_OBJ_MR, ROCEV2_OBJ_CQ, ROCEV2_OBJ_SRQ, ROCEV2_OBJ_QP,
};
#define NKINDS (sizeof(restore_order) / sizeof(restore_order[0]))

/* Remember the generation of the slot r will take (for a rollback). */
static void save_slot(const struct rocev2 *e, const struct dump_rec *r)
{
	uint32_t h = get_le32(r->payload);     /* every payload starts with it */

	switch (r->type) {
	case ROCEV2_OBJ_PD:
		slot.pd[rocev2_handle_index(h)] = e->pds[rocev2_handle_index(h)].gen;
		break;
	case ROCEV2_OBJ_MR:
		slot.mr[h >> ROCEV2_MR_KEY_BITS] = e->mrs[h >> ROCEV2_MR_KEY_BITS].key;
		break;
	case ROCEV2_OBJ_CQ:
		slot.cq[rocev2_handle_index(h)] = e->cqs[rocev2_handle_index(h)].gen;
		break;
	case ROCEV2_OBJ_SRQ:
		slot.srq[rocev2_handle_index(h)] = e->srqs[rocev2_handle_index(h)].gen;
		break;
	default:
		slot.qp[h & ROCEV2_QPN_IDX_MASK] = e->qps[h & ROCEV2_QPN_IDX_MASK].gen;
		break;
	}
}

static int rec_apply(struct rocev2 *e, const struct dump_rec *r,
		     const struct rocev2_restore_opts *opts)
{
	struct rocev2_qp *qp;
	int rc;

	switch (r->type) {
	case ROCEV2_OBJ_PD:
		return rocev2_restore_pd(e, r->payload, r->len);
	case ROCEV2_OBJ_MR:
		return rocev2_restore_mr(e, r->payload, r->len);
	case ROCEV2_OBJ_CQ:
		return rocev2_restore_cq(e, r->payload, r->len);
	case ROCEV2_OBJ_SRQ:
		return rocev2_restore_srq(e, r->payload, r->len);
	default:
		rc = rocev2_restore_qp_create(e, r->payload, r->len);
		if (rc)
			return rc;
		rc = rocev2_restore_qp_refill(e, r->payload, r->len);
		qp = rocev2_qp_lookup(e, qp_scratch.qpn);
		if (rc) {
			(void)rocev2_destroy_qp(e, qp_scratch.qpn);
			e->qps[qp_scratch.qpn & ROCEV2_QPN_IDX_MASK].gen =
				slot.qp[qp_scratch.qpn & ROCEV2_QPN_IDX_MASK];
			return rc;
		}
		/* Both ends migrated at once: the peer is elsewhere now. */
		if (opts && opts->old_dip && qp->attr.av.dip == opts->old_dip) {
			qp->attr.av.dip = opts->new_dip;
			memcpy(qp->attr.av.dmac, opts->new_dmac, sizeof(qp->attr.av.dmac));
		}
		return 0;
	}
}

/* Destroy what the image made and give every slot its generation back. */
static void rec_undo(struct rocev2 *e, const struct dump_rec *r)
{
	uint32_t h = get_le32(r->payload), idx;

	switch (r->type) {
	case ROCEV2_OBJ_PD:
		idx = rocev2_handle_index(h);
		(void)rocev2_dealloc_pd(e, h);
		e->pds[idx].gen = slot.pd[idx];
		break;
	case ROCEV2_OBJ_MR:
		idx = h >> ROCEV2_MR_KEY_BITS;
		(void)rocev2_dereg_mr(e, h);
		e->mrs[idx].key = slot.mr[idx];
		break;
	case ROCEV2_OBJ_CQ:
		idx = rocev2_handle_index(h);
		(void)rocev2_destroy_cq(e, h);
		e->cqs[idx].gen = slot.cq[idx];
		break;
	case ROCEV2_OBJ_SRQ:
		idx = rocev2_handle_index(h);
		(void)rocev2_destroy_srq(e, h);
		e->srqs[idx].gen = slot.srq[idx];
		break;
	default:
		idx = h & ROCEV2_QPN_IDX_MASK;
		(void)rocev2_destroy_qp(e, h);
		e->qps[idx].gen = slot.qp[idx];
		break;
	}
}

/* Undo the kinds before kind k in full and, of kind k, the records before
 * byte offset stop: reverse dependency order, so that nothing is still
 * referenced when it is destroyed. */
static void restore_rollback(struct rocev2 *e, const uint8_t *img, size_t len, size_t k,
			     size_t stop)
{
	struct dump_rec r;
	size_t pos;

	for (;;) {
		for (pos = ROCEV2_DUMP_HDR_LEN; pos < len && pos < stop;) {
			rec_at(img, &pos, &r);
			if (r.type == restore_order[k])
				rec_undo(e, &r);
		}
		if (k == 0)
			break;
		k--;
		stop = len;
	}
}

int rocev2_restore_image(struct rocev2 *e, const void *img, size_t len,
			 const struct rocev2_restore_opts *opts)
{
	const uint8_t *b = img;
	struct dump_rec r;
	size_t k, pos, at;
	int rc;

	if (!e || !img)
		return -HAL_EINVAL;
	if (opts && opts->old_dip && !opts->new_dip)
		return -HAL_EINVAL;
	rc = rocev2_validate_image(img, len);
	if (rc)
		return rc;
	/* From here on slot[] holds the generations to give back. */
	for (k = 0; k < NKINDS; k++) {
		for (pos = ROCEV2_DUMP_HDR_LEN; pos < len;) {
			at = pos;
			rec_at(b, &pos, &r);
			if (r.type != restore_order[k])
				continue;
			save_slot(e, &r);
			rc = rec_apply(e, &r, opts);
			if (rc) {
				restore_rollback(e, b, len, k, at);
				return rc;
			}
		}
	}
	return 0;
}
