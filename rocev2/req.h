/* Per-QP state of the requester (req.c) and the completer (comp.c).
 * Owned by those two stages; the rest of the engine only resets it
 * (rocev2_req_reset / rocev2_comp_reset) and, for migration, dumps it. */
#ifndef ROCEV2_REQ_H
#define ROCEV2_REQ_H

#include <stdint.h>

#include "lib/timer.h"
#include "mnic/queues.h"
#include "rocev2/rocev2.h"

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
	/* Added by req.c/comp.c (fields appended, layout above unchanged). */
	uint8_t started;                /* psn/indices taken from attr/sq.ci on the first run */
	uint8_t err_pending;            /* WQE err_index failed locally or remotely */
	uint8_t err_status;             /* enum mnic_wc_status for it */
	uint8_t repeat_head;            /* send the next packet twice (comp.c retry rounds) */
	uint32_t err_index;             /* SQ index of the failed WQE */
	uint32_t err_vendor;            /* CQE vendor_err: NAK syndrome or ROCEV2_VERR_* */
	uint32_t next_new;              /* first SQ index never sent (track[] valid below it) */
	uint32_t psn_hw;                /* one past the highest PSN ever sent */
};

struct rocev2_comp {
	uint32_t psn;                   /* oldest unacknowledged PSN */
	uint32_t wqe_index;             /* oldest uncompleted send WQE */
	uint8_t opcode;                 /* last read response opcode; 0xff = none */
	uint8_t retry_cnt;              /* remaining (comp.c: given back on progress) */
	uint8_t rnr_retry;              /* remaining; 7 = infinite */
	uint8_t wqe_loaded;
	uint64_t read_offset;           /* bytes of the current READ placed */
	struct timer retrans_timer;
	struct timer rnr_timer;
	struct mnic_send_wqe wqe;       /* copy of wqe_index (READ scatter list) */
	/* Added by comp.c (fields appended, layout above unchanged). */
	uint8_t started_retry;          /* a retry is under way: later NAKs don't start another */
	uint8_t rnr_wait;               /* RNR NAK received: requester waits for rnr_timer */
	uint8_t drained;                /* SQ_DRAINED posted for this SQD period */
	uint8_t last_state;             /* where the last completer run ended (names below) */
	uint32_t nak_skipped;           /* PSNs below psn only NAKs acknowledged (comp.c) */
	uint32_t gap_psn;               /* a response below it is news to the round under way */
	uint8_t fast_retries;           /* retries responses started since the last progress */
	uint8_t reserved[3];
};

/* Retries that responses (sequence NAKs, lost read or atomic responses)
 * may start for one loss, i.e. between two steps of progress, before only
 * the retransmit timer may (comp.c). */
#define ROCEV2_FAST_RETRIES 2u

/* AckReq at least this often on packets sent again (req.c). */
#define ROCEV2_RETRY_PKT_PER_ACK 8u

/* Timeout attribute -> retransmit timer period: 4.096 us * 2^timeout
 * (reference 2.5; 0 = no timer, handled by the callers). */
#define ROCEV2_RETRANS_NS(timeout) (4096ull << ((timeout) > 31u ? 31u : (timeout)))

/* Printable names of the requester steps and completer states (req.c,
 * comp.c), for dumps and test messages. */
extern const char *const rocev2_req_step_names[];
extern const char *const rocev2_comp_state_names[];

/* CQE vendor_err for errors the firmware finds itself (NAK errors carry
 * the AETH syndrome instead). */
enum rocev2_req_verr {
	ROCEV2_VERR_NONE = 0,
	ROCEV2_VERR_BAD_WQE = 0x100,    /* opcode, SGE count, alignment, rd_atomic 0 */
	ROCEV2_VERR_WQE_DMA = 0x101,    /* the SQ slot could not be read */
	ROCEV2_VERR_WQE_CHANGED = 0x102, /* host rewrote a WQE that was in flight */
	ROCEV2_VERR_LENGTH = 0x103,     /* message or atomic SGE length */
	ROCEV2_VERR_GATHER = 0x104,     /* local SGE protection on transmit */
	ROCEV2_VERR_SCATTER = 0x105,    /* local SGE protection on read/atomic data */
	ROCEV2_VERR_BAD_RESP = 0x106,   /* response opcode/length does not fit the WQE */
	ROCEV2_VERR_RETRY = 0x107,      /* retransmit timer: retries exhausted */
	ROCEV2_VERR_RNR = 0x108,        /* RNR NAK: rnr retries exhausted */
};

#endif
