/* The migration image format (MigrOS dump/restore, moved into the NIC):
 * docs/migration-image.md defines it; dump.c writes it, restore.c reads
 * it, image_records.c holds one codec per record type.  This file is what
 * they share: the member lists, the field tables and the byte cursor.
 *
 * Byte order: fields are written little-endian by img_out_le() and read by
 * img_in_le(), one scalar at a time; no host struct is ever copied whole.
 *
 * What the image holds per object, and what it leaves out, is spelled out
 * member by member in the *_MEMBERS lists below.  Each list mirrors its
 * struct: a struct built from the list must have the same size, every
 * member the same offset and size, and the real struct exactly as many
 * members as the list (one that fits in existing padding included), so a
 * member added, removed, resized or moved breaks the build here ("update
 * image.c") instead of being silently lost.  The stage structs' members
 * marked DUMP are serialised by table, in declaration order: the list is
 * the record layout.
 */
#include <stddef.h>
#include <string.h>

#include "image_codec.h"
#include "lib/crc32.h"

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
	M(S, owner, uint16_t, SKIP)             /* the restoring context (create_as) */    \
	M(S, refcnt, uint32_t, DERIVE)          /* MRs, SRQs, QPs restored on it */

#define MR_MEMBERS(M, A, S)                                                                \
	M(S, in_use, uint8_t, SKIP)                                                        \
	M(S, key, uint8_t, CODE)                /* low byte of lkey */                     \
	M(S, owner, uint16_t, SKIP)             /* the restoring context (create_as) */    \
	M(S, pd, uint16_t, CODE)                /* as the PD's handle */                   \
	M(S, access, uint32_t, CODE)                                                       \
	M(S, addr, uint64_t, CODE)                                                         \
	M(S, length, uint64_t, CODE)                                                       \
	M(S, lkey, uint32_t, CODE)                                                         \
	M(S, rkey, uint32_t, DERIVE)            /* = lkey (mr.c) */                        \
	M(S, mtt, uint32_t, CODE)

#define QUEUE_ATTR_MEMBERS(M, A, S)                                                        \
	M(S, ring_addr, uint64_t, CODE)                                                    \
	M(S, dbrec_addr, uint64_t, CODE)                                                   \
	M(S, size, uint32_t, CODE)                                                         \
	M(S, ring_mtt, uint32_t, CODE)                                                     \
	M(S, dbrec_mtt, uint32_t, CODE)

#define CQ_MEMBERS(M, A, S)                                                                \
	M(S, gen, uint16_t, CODE)               /* in the handle */                        \
	M(S, in_use, uint8_t, SKIP)                                                        \
	M(S, owner, uint16_t, SKIP)             /* the restoring context (create_as) */    \
	M(S, error, uint8_t, CODE)                                                         \
	A(S, q, struct rocev2_queue_attr, , CODE)                                          \
	M(S, pi, uint32_t, CODE)                                                           \
	M(S, refcnt, uint32_t, DERIVE)          /* QPs restored on it */                 \
	/* completion events: not in the image; the restore leaves the CQ bound \
	 * to no EQ, disarmed (rocev2_cq_events_reset) */                          \
	M(S, eq, uint32_t, SKIP)                                                           \
	M(S, arm_seen, uint32_t, SKIP)                                                     \
	M(S, armed, uint8_t, SKIP)                                                         \
	M(S, arm_sn, uint8_t, SKIP)                                                        \
	M(S, fired, uint8_t, SKIP)                                                         \
	M(S, has_solicited, uint8_t, SKIP)                                                 \
	M(S, sol_end, uint32_t, SKIP)

#define WQ_MEMBERS(M, A, S)                                                                \
	A(S, q, struct rocev2_queue_attr, , CODE)                                          \
	M(S, ci, uint32_t, CODE)                                                           \
	M(S, pi, uint32_t, CODE)                /* SRQ: DERIVE = ci, re-read before use */

#define SRQ_MEMBERS(M, A, S)                                                               \
	M(S, gen, uint16_t, CODE)               /* in the handle */                        \
	M(S, in_use, uint8_t, SKIP)                                                        \
	M(S, owner, uint16_t, SKIP)             /* the restoring context (create_as) */    \
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
	A(S, dgid, uint8_t, [ROCEV2_GID_LEN], CODE)                                        \
	M(S, flow_label, uint32_t, CODE)                                                   \
	M(S, sgid_index, uint8_t, CODE)                                                    \
	A(S, reserved, uint8_t, [3], SKIP)      /* zero */

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
	M(S, owner, uint16_t, SKIP)             /* the restoring context (create_as) */    \
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
	A(S, tmpl, struct rocev2_tx_tmpl, , SKIP) /* net.c rebuilds it (gen 0) */          \
	M(S, sched_next, struct rocev2_qp *, SKIP)                                         \
	A(S, req, struct rocev2_req, , CODE)                                               \
	A(S, comp, struct rocev2_comp, , CODE)                                             \
	A(S, resp, struct rocev2_resp, , CODE)                                             \
	A(S, mig, struct rocev2_mig, , CODE)                                               \
	A(S, cc, struct rocev2_cc, , SKIP)      /* DCQCN restarts at line rate: a new path */

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
	M(S, repeat_head, uint8_t, SKIP)        /* 0: a restored rewind sends its head once */ \
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
	M(S, last_state, uint8_t, SKIP)         /* diagnostics: where the last run ended */ \
	M(S, nak_skipped, uint32_t, SKIP)       /* 0: a restored QP trusts its comp.psn */ \
	M(S, gap_psn, uint32_t, SKIP)           /* set when a round starts */              \
	M(S, fast_retries, uint8_t, SKIP)       /* 0: a restored QP's next loss starts over */ \
	A(S, reserved, uint8_t, [3], SKIP)

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
	M(S, ack_coalesced, uint8_t, SKIP)      /* a restored deferred ACK is sent as one */ \
	M(S, reserved4, uint8_t, SKIP)                                                     \
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
	M(S, tx_epoch, uint32_t, CODE)          /* QP record v2 */                         \
	M(S, rx_epoch, uint32_t, CODE)                                                     \
	A(S, tx_key, uint8_t, [16], CODE)       /* only when has_key */                    \
	A(S, rx_key, uint8_t, [16], CODE)                                                  \
	M(S, resume_deadline, uint64_t, SKIP)   /* resume sets it */                       \
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
		       "struct " #S "." #m " moved or changed: update image.c");
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
		       "struct " #S " changed: update image.c");                              \
	_Static_assert(sizeof((struct S){ LIST(INIT_M, INIT_A, S) }) == sizeof(struct S),    \
		       "struct " #S ": a member is not in its list: update image.c");

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
	const struct dump_field name[] = { LIST(FIELD_M, FIELD_A, S) };                     \
	const size_t name##_count = sizeof(name) / sizeof(name[0]);

FIELD_TABLE(REQ_MEMBERS, rocev2_req, req_fields)
FIELD_TABLE(TRACK_MEMBERS, rocev2_wqe_track, track_fields)
FIELD_TABLE(COMP_MEMBERS, rocev2_comp, comp_fields)
FIELD_TABLE(RESP_MEMBERS, rocev2_resp, resp_fields)
FIELD_TABLE(RES_MEMBERS, rocev2_resp_res, res_fields)

/* The record layout of docs/migration-image.md, pinned: a DUMP member
 * added or removed changes these, and then the QP record version and the
 * document must change with them. */
#define REQ_BYTES (0u REQ_MEMBERS(BYTES_M, BYTES_A, rocev2_req))
#define COMP_BYTES (0u COMP_MEMBERS(BYTES_M, BYTES_A, rocev2_comp))
#define RESP_BYTES (0u RESP_MEMBERS(BYTES_M, BYTES_A, rocev2_resp))
#define TRACK_BYTES (0u TRACK_MEMBERS(BYTES_M, BYTES_A, rocev2_wqe_track))
#define RES_BYTES (0u RES_MEMBERS(BYTES_M, BYTES_A, rocev2_resp_res))
#define QP_TOP_BYTES 150u               /* QP record bytes before the requester */
_Static_assert(REQ_BYTES == 46u && COMP_BYTES == 22u && RESP_BYTES == 66u,
	       "QP record layout changed: bump its version, update docs/migration-image.md");
_Static_assert(QP_TOP_BYTES + REQ_BYTES + COMP_BYTES + RESP_BYTES + ROCEV2_DUMP_QP_MIG_LEN ==
		       ROCEV2_DUMP_QP_MIN_LEN,
	       "QP record layout changed: update dump.h");
_Static_assert(TRACK_BYTES == ROCEV2_DUMP_TRACK_LEN && RES_BYTES + 1u == ROCEV2_DUMP_RES_LEN,
	       "QP record layout changed: update dump.h");

/* ---- byte order ------------------------------------------------------------- */

/* Not inlined: one call per field, and every call inlined and unrolled
 * tripled this file's code. */
__attribute__((noinline)) void img_out_le(struct dump_out *o, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++, o->pos++)
		if (o->buf && o->pos < o->cap)
			o->buf[o->pos] = (uint8_t)(v >> (8u * i));
}

/* Byte strings (MAC address, key) have no byte order. */
void img_out_bytes(struct dump_out *o, const uint8_t *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		img_out_le(o, src[i], 1);
}

__attribute__((noinline)) uint64_t img_in_le(struct dump_in *in, unsigned n)
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

void img_in_bytes(struct dump_in *in, uint8_t *dst, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = img_in_u8(in);
}

/* The whole payload and nothing more was read. */
int img_in_done(const struct dump_in *in)
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

void img_out_fields(struct dump_out *o, const void *obj, const struct dump_field *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		img_out_le(o, field_get(obj, &t[i]), t[i].size);
}

void img_in_fields(struct dump_in *in, void *obj, const struct dump_field *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		field_set(obj, &t[i], img_in_le(in, t[i].size));
}

void img_copy_fields(void *dst, const void *src, const struct dump_field *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		field_set(dst, &t[i], field_get(src, &t[i]));
}

/* ---- header and record framing ------------------------------------------------- */

void image_header_write(uint8_t *b, uint32_t count, size_t total, uint64_t ua_offset,
			uint64_t ua_size)
{
	struct dump_out o = { b, total, ROCEV2_DUMP_OFF_UA_OFFSET };

	/* The range first: the CRC covers it. */
	img_out_le(&o, ua_offset, 8);
	img_out_le(&o, ua_size, 8);
	o.pos = 0;
	img_out_bytes(&o, (const uint8_t *)ROCEV2_DUMP_MAGIC, ROCEV2_DUMP_MAGIC_LEN);
	img_out_le(&o, ROCEV2_DUMP_VERSION, 2);
	img_out_le(&o, 0, 2);               /* flags */
	img_out_le(&o, count, 4);
	img_out_le(&o, total, 4);
	img_out_le(&o, crc32c(0, b + ROCEV2_DUMP_CRC_START, total - ROCEV2_DUMP_CRC_START), 4);
}

int image_header_check(const uint8_t *b, size_t len, uint32_t *count)
{
	struct dump_in in = { b, len, 0, 0 };
	uint8_t magic[ROCEV2_DUMP_MAGIC_LEN];
	uint32_t total, crc;
	uint64_t ua_offset, ua_size;

	if (!b || len < ROCEV2_DUMP_HDR_LEN)
		return -HAL_EINVAL;
	img_in_bytes(&in, magic, sizeof(magic));
	if (memcmp(magic, ROCEV2_DUMP_MAGIC, ROCEV2_DUMP_MAGIC_LEN))
		return -HAL_EINVAL;
	if (img_in_u16(&in) != ROCEV2_DUMP_VERSION)
		return -HAL_ERANGE;
	if (img_in_u16(&in) != 0)
		return -HAL_EINVAL;     /* no flags are defined in version 2 */
	*count = img_in_u32(&in);
	total = img_in_u32(&in);
	crc = img_in_u32(&in);
	ua_offset = img_in_u64(&in);
	ua_size = img_in_u64(&in);
	if (total != len)
		return -HAL_EINVAL;     /* truncated, or trailing bytes */
	if (crc32c(0, b + ROCEV2_DUMP_CRC_START, len - ROCEV2_DUMP_CRC_START) != crc)
		return -HAL_EIO;
	if (ua_offset > UINT64_MAX - ua_size || (!ua_size && ua_offset))
		return -HAL_EINVAL;     /* a range that wraps, or an offset without a size */
	return 0;
}

int rocev2_image_ua_range(const void *img, size_t len, uint64_t *ua_offset, uint64_t *ua_size)
{
	struct dump_in in = { img, len, ROCEV2_DUMP_OFF_UA_OFFSET, 0 };
	uint32_t count;
	int rc = image_header_check(img, len, &count);

	if (rc)
		return rc;
	*ua_offset = img_in_u64(&in);
	*ua_size = img_in_u64(&in);
	return 0;
}

size_t image_rec_begin(struct dump_out *o, uint16_t type)
{
	size_t start = o->pos;

	img_out_le(o, type, 2);
	img_out_le(o, rocev2_dump_rec_version(type), 2);
	img_out_le(o, 0, 4);                /* length: image_rec_end */
	return start;
}

size_t image_rec_end(struct dump_out *o, size_t start)
{
	size_t end = o->pos;

	o->pos = start + 4u;
	img_out_le(o, end - start, 4);
	o->pos = end;
	return end - start;
}

void rocev2_image_iter_init(struct rocev2_image_iter *it, const void *img, size_t len)
{
	it->img = img;
	it->len = len;
	it->pos = ROCEV2_DUMP_HDR_LEN;
}

/* The record header at *pos: u16 type, u16 version, u32 length (header
 * included), the whole record inside [pos, len). */
static int rec_frame(const uint8_t *b, size_t len, size_t pos, struct rocev2_record *r)
{
	struct dump_in h = { b + pos, len - pos, 0, 0 };
	uint32_t rlen;

	r->type = img_in_u16(&h);
	r->version = img_in_u16(&h);
	rlen = img_in_u32(&h);
	if (h.bad || rlen < ROCEV2_DUMP_REC_HDR_LEN || rlen > len - pos)
		return -HAL_EINVAL;
	r->payload = b + pos + ROCEV2_DUMP_REC_HDR_LEN;
	r->len = rlen - ROCEV2_DUMP_REC_HDR_LEN;
	return 0;
}

int rocev2_image_next(struct rocev2_image_iter *it, struct rocev2_record *r)
{
	int rc;

	if (!it->img || it->pos > it->len)
		return -HAL_EINVAL;     /* shorter than an image header */
	if (it->pos == it->len)
		return 0;
	rc = rec_frame(it->img, it->len, it->pos, r);
	if (rc)
		return rc;
	it->pos += ROCEV2_DUMP_REC_HDR_LEN + r->len;
	return 1;
}

int rocev2_record_parse(const void *rec, size_t len, struct rocev2_record *r)
{
	int rc;

	if (!rec || !r)
		return -HAL_EINVAL;
	rc = rec_frame(rec, len, 0, r);
	if (rc)
		return rc;
	if (ROCEV2_DUMP_REC_HDR_LEN + r->len != len)
		return -HAL_EINVAL;     /* the header must describe exactly len bytes */
	if (r->version != rocev2_dump_rec_version(r->type))
		return -HAL_ERANGE;
	return 0;
}
