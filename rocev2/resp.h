/* Per-QP state of the responder (resp.c).  Owned by that stage; the rest
 * of the engine only resets it (rocev2_resp_reset) and, for migration,
 * dumps it. */
#ifndef ROCEV2_RESP_H
#define ROCEV2_RESP_H

#include <stdint.h>

#include "mnic/queues.h"
#include "rocev2/rocev2.h"

/* A read or atomic the responder accepted (IBA 9.7.5.1.4 responder
 * resources): kept until the requester has moved past it, so that a
 * duplicate request is replayed, never re-executed. */
struct rocev2_resp_res {
	uint8_t type;                   /* 0 free, OP_READ_REQUEST, OP_COMPARE_SWAP, OP_FETCH_ADD */
	/* The requester may have this reply already: sent again after a
	 * duplicate, or continued after a resume (rocev2_resp_resumed).  A new
	 * READ/ATOMIC that needs the slot stops it (resp_chk_resource). */
	uint8_t replay;
	uint16_t reserved;
	uint32_t first_psn, last_psn;   /* PSNs of the response(s) */
	uint32_t cur_psn;               /* next response PSN to send (reads) */
	uint64_t va;                    /* read: next byte; atomic: target */
	uint32_t rkey;
	uint32_t resid;                 /* read bytes still to send */
	uint64_t orig;                  /* atomic: value before the operation */
	uint32_t msn;                   /* MSN to report in responses */
	/* resp.c additions */
	uint64_t va_org;                /* read: first byte the request named (replay bounds) */
	uint32_t length;                /* read: bytes the request named (replay bounds) */
	uint8_t sending;                /* reply (or its replay) not completely sent yet */
	uint8_t reserved2[3];
	uint32_t start_psn;             /* read: PSN the response stream in progress began at */
};

struct rocev2_resp {
	uint32_t psn;                   /* expected PSN (rq_psn) */
	uint32_t msn;                   /* messages completed (IBA 9.7.5.1.2) */
	uint8_t opcode;                 /* last request opcode accepted; 0xff = none */
	uint8_t sent_psn_nak;           /* sequence NAK latched until the gap fills */
	uint8_t rwqe_valid;             /* rwqe holds the receive WQE being filled */
	uint8_t reserved;
	uint64_t rwqe_offset;           /* bytes of the current SEND placed */
	struct mnic_recv_wqe rwqe;
	uint64_t write_va;              /* next byte of the current RDMA WRITE */
	uint32_t write_rkey;
	uint64_t write_resid;           /* bytes the RETH announced and not yet seen */
	struct rocev2_resp_res res[ROCEV2_MAX_RD_ATOMIC];
	uint32_t res_head;              /* next slot to use (oldest is overwritten) */
	uint32_t res_pending;           /* slot index + 1 of a read reply in progress; 0 none */
	/* resp.c additions */
	uint32_t ack_psn;               /* PSN after the newest executed SEND/WRITE (re-ACKs) */
	uint8_t ack_psn_valid;          /* ack_psn set since the last reset */
	uint8_t last_state;             /* enum rocev2_resp_state: last one the last packet ran */
	uint8_t last_error;             /* enum rocev2_resp_state: last NAK state entered; 0 none */
	uint8_t reserved3;
	uint64_t rwqe_length;           /* sum of rwqe's SGE lengths */
	uint32_t write_length;          /* RETH length of the current RDMA WRITE (WRITE_IMM CQE) */
	/* An ACK/NAK that must follow replies still being sent (PSN order). */
	uint8_t ack_deferred;
	uint8_t ack_syndrome;
	uint8_t ack_coalesced;          /* plain ACKs folded into the deferred one (coalescing) */
	uint8_t reserved4;
	uint32_t ack_deferred_psn;
	uint32_t ack_deferred_msn;
};

/* Responder states (rxe_resp.c's structure, IBA 9.7.5): one request packet
 * walks GET_REQ .. DONE; each ERR_* state decides exactly one NAK. */
enum rocev2_resp_state {
	RESPST_NONE,
	RESPST_GET_REQ,
	RESPST_CHK_PSN,
	RESPST_CHK_OP_SEQ,
	RESPST_CHK_OP_VALID,
	RESPST_CHK_RESOURCE,
	RESPST_CHK_LENGTH,
	RESPST_CHK_RKEY,
	RESPST_EXECUTE,
	RESPST_COMPLETE,
	RESPST_READ_REPLY,
	RESPST_ATOMIC_REPLY,
	RESPST_ACKNOWLEDGE,
	RESPST_DUPLICATE_REQUEST,
	RESPST_RESUME,
	/* NAK states: one row each in resp.c's NAK table */
	RESPST_ERR_PSN_OUT_OF_SEQ,
	RESPST_ERR_STOPPED,
	RESPST_ERR_RNR,
	RESPST_ERR_MISSING_OPCODE_FIRST,
	RESPST_ERR_MISSING_OPCODE_LAST,
	RESPST_ERR_UNSUPPORTED_OPCODE,
	RESPST_ERR_TOO_MANY_RD_ATOMIC,
	RESPST_ERR_LENGTH,
	RESPST_ERR_RECV_TOO_LONG,
	RESPST_ERR_MISALIGNED_ATOMIC,
	RESPST_ERR_RKEY_VIOLATION,
	RESPST_ERR_MALFORMED_WQE,
	RESPST_ERR_PROTECTION,
	RESPST_ERR_MEMORY,
	RESPST_ERR_CQ_OVERFLOW,
	RESPST_DONE,
	RESPST_NUM
};

/* Printable name of an enum rocev2_resp_state ("?" if out of range). */
const char *rocev2_resp_state_name(unsigned state);

#endif
