/* Per-QP state of the responder (resp.c).  Owned by that stage; the rest
 * of the engine only resets it (rocev2_resp_reset) and, for migration,
 * dumps it. */
#ifndef ROCEV2_RESP_H
#define ROCEV2_RESP_H

#include <stdint.h>

#include "mnic/queues.h"
#include "rocev2.h"

/* A read or atomic the responder accepted (IBA 9.7.5.1.4 responder
 * resources): kept until the requester has moved past it, so that a
 * duplicate request is replayed, never re-executed. */
struct rocev2_resp_res {
	uint8_t type;                   /* 0 free, OP_READ_REQUEST, OP_COMPARE_SWAP, OP_FETCH_ADD */
	uint8_t replay;                 /* sending again after a duplicate */
	uint16_t reserved;
	uint32_t first_psn, last_psn;   /* PSNs of the response(s) */
	uint32_t cur_psn;               /* next response PSN to send (reads) */
	uint64_t va;                    /* read: next byte; atomic: target */
	uint32_t rkey;
	uint32_t resid;                 /* read bytes still to send */
	uint64_t orig;                  /* atomic: value before the operation */
	uint32_t msn;                   /* MSN to report in responses */
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
};

#endif
