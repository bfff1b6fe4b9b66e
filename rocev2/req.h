/* Per-QP state of the requester (req.c) and the completer (comp.c).
 * Owned by those two stages; the rest of the engine only resets it
 * (rocev2_req_reset / rocev2_comp_reset) and, for migration, dumps it. */
#ifndef ROCEV2_REQ_H
#define ROCEV2_REQ_H

#include <stdint.h>

#include "mnic/queues.h"
#include "rocev2.h"

/* What the requester remembers about each send WQE between sending it and
 * its completion (IBA 9.7.4: the PSN range a WQE occupies). Indexed by SQ
 * index % ROCEV2_MAX_INFLIGHT_WQE. */
struct rocev2_wqe_track {
	uint32_t first_psn, last_psn;
	uint32_t length;                /* total message length */
	uint8_t wr_opcode;              /* enum mnic_wr_opcode */
	uint8_t send_flags;
	uint8_t state;                  /* enum rocev2_wqe_state (req.c) */
	uint8_t reserved;
};

enum rocev2_req_state {
	REQ_STATE_IDLE,                 /* nothing posted */
	REQ_STATE_SENDING,              /* packetising wqe_index */
	REQ_STATE_WAIT,                 /* window, rd/atomic limit or fence */
	REQ_STATE_ERROR,                /* QP in error: nothing more sent */
};

struct rocev2_req {
	uint8_t state;                  /* enum rocev2_req_state */
	uint8_t opcode;                 /* last BTH opcode sent; 0xff = none */
	uint8_t wqe_loaded;             /* wqe below is a valid copy of wqe_index */
	uint8_t need_retry;             /* rewind to comp.psn before sending */
	uint32_t psn;                   /* next PSN to send (sq_psn) */
	uint32_t wqe_index;             /* SQ index being sent (free running) */
	uint32_t sq_pi;                 /* host producer index last read */
	uint64_t offset;                /* bytes of the current WQE already sent */
	uint32_t noack_pkts;            /* packets since the last AckReq */
	uint32_t rd_atomic_outstanding; /* reads/atomics in flight (<= max_rd_atomic) */
	struct rocev2_wqe_track track[ROCEV2_MAX_INFLIGHT_WQE];
	struct mnic_send_wqe wqe;
};

struct rocev2_comp {
	uint32_t psn;                   /* oldest unacknowledged PSN */
	uint32_t wqe_index;             /* oldest uncompleted send WQE */
	uint8_t opcode;                 /* last read response opcode; 0xff = none */
	uint8_t retry_cnt;              /* remaining; 7 = infinite */
	uint8_t rnr_retry;              /* remaining; 7 = infinite */
	uint8_t wqe_loaded;
	uint64_t read_offset;           /* bytes of the current READ placed */
	struct fw_timer retrans_timer;
	struct fw_timer rnr_timer;
	struct mnic_send_wqe wqe;       /* copy of wqe_index (READ scatter list) */
};

#endif
