/* Data-path ABI: the work queue and completion queue formats that live in
 * host memory (the DMA window of the BAR), written by the host library and
 * read/written by the firmware through hal_dma.  Little-endian by
 * definition; fixed-width fields; sizes pinned.
 *
 * Rings: an SQ/RQ/SRQ is `size` (power of two) entries of MNIC_WQE_SIZE
 * bytes at `ring_addr`; a CQ is `size` entries of MNIC_CQE_SIZE bytes.
 * Each queue has a doorbell record (struct mnic_dbrec, 8-byte aligned)
 * in host memory: the host writes its producer index (SQ/RQ/SRQ) or
 * consumer index (CQ) there, then rings the doorbell.  Indices are free
 * running 32-bit counters; the slot is index & (size - 1).
 *
 * CQE ownership (mlx5-style phase bit): the firmware writes a CQE's owner
 * byte last, after a write barrier, as MNIC_CQE_OWNER(producer_index, size)
 * = 1 on the first pass through the ring, 0 on the second, and so on (the
 * body goes first with the owner byte of the pass before, what the slot
 * already holds).  A
 * host that zeroed the ring knows the CQE at consumer_index is new when its
 * owner equals MNIC_CQE_OWNER(consumer_index, size).  The firmware never
 * overwrites a CQE the host has not consumed (it reads the consumer index
 * from the CQ's doorbell record); a full CQ is an overflow error event.
 *
 * Completion events (IBA 11.4.2.2 Request Completion Notification, as
 * ibv_req_notify_cq; docs/host-interface.md "Completion events").  A CQ
 * bound to an event queue (EQ: MODIFY_CQ) is armed through the `arm` word
 * of its doorbell record, mlx5-style (arm_sn + cmd):
 *
 *   arm = MNIC_CQ_ARM(sn, cmd)   bits 7:0 cmd (enum mnic_cq_arm_cmd),
 *                                15:8 the arm sequence number, 31:16 zero
 *
 * The host writes the consumer index first, then the arm word, then rings
 * the data-path doorbell (db_seq, mnic/abi.h); the firmware also reads the
 * word every time it writes a CQE.  The firmware acts on a change of the
 * word:
 *   - NEXT: the next CQE fires an event; SOLICITED: the next solicited CQE
 *     does (a receive completion whose message carried the BTH SE bit,
 *     IBA 9.2.3, flagged MNIC_CQE_SOLICITED, or any error completion).  A
 *     NEXT arm upgrades a SOLICITED one of the same sn; never the reverse.
 *   - CQEs past the consumer index at arm time (they landed between the
 *     host's last poll and its arm) qualify too: the event fires at once,
 *     so "poll empty, arm, sleep" loses no wakeup.
 *   - One event per arm: firing writes one EQE and disarms the CQ.  The
 *     sn that fired is spent: the host increments sn once per event it
 *     takes (mnic_get_cq_event) and arms with the new one.  After a fire
 *     only sn + 1 arms again; before one only the same sn (a repeat, or an
 *     upgrade).  Any other sn is stale (counted cq_arm_stale, ignored),
 *     so a late or repeated write never fires twice.
 *   - a word with bits 31:16 set or an unknown cmd is refused
 *     (cq_arm_refused); an arm of a CQ without an EQ is counted
 *     (cq_arm_no_eq).  cmd NONE (0) asks nothing.
 * SQ, RQ, SRQ and EQ doorbell records keep the word 0.
 *
 * Event queue (EQ): `size` (power of two) entries of MNIC_EQE_SIZE bytes
 * in host memory, laid out and checked as a CQ ring, with a doorbell record
 * whose index is the host's consumer index.  The firmware writes each EQE
 * body, a write barrier, then its owner byte, MNIC_CQE_OWNER(producer,
 * size) as for CQEs, and then raises the EQ's vector (>= 1; 0 is the
 * command queue's) on the doorbell channel (mnic/dbch.h).  A full EQ
 * writes nothing (eq_overflows) and leaves the CQ armed, so its next
 * qualifying CQE tries again; a host sizes its EQ to at least the number
 * of CQs bound to it.  Without a doorbell channel the host finds the
 * events by polling the EQ's owner bytes.
 */
#ifndef MNIC_QUEUES_H
#define MNIC_QUEUES_H

#ifdef __KERNEL__
#include <linux/types.h>   /* uint*_t for the kernel module */
#else
#include <stdint.h>
#endif

#define MNIC_MAX_SGE   28u
#define MNIC_WQE_SIZE  512u
#define MNIC_CQE_SIZE  32u
/* Inline data (IBA 10.8.2.1 "inline data": the WQE carries the payload
 * itself, the gather list's buffers are free again as soon as the post
 * returns).  A send WQE with MNIC_SEND_INLINE has num_sge 0 and its
 * inline_len bytes in place of the gather list; only SEND, SEND_WITH_IMM,
 * SEND_WITH_INV, RDMA_WRITE and RDMA_WRITE_WITH_IMM may carry it.  The
 * firmware reads the payload from the SQ slot for the first transmission
 * and for every retransmission: the slot belongs to the WQE until its
 * completion retires it, as for any WQE. */
#define MNIC_MAX_INLINE (MNIC_MAX_SGE * 16u)   /* 448: the gather list's bytes */

/* Work request opcodes (values as ibv_wr_opcode). */
enum mnic_wr_opcode {
	MNIC_WR_RDMA_WRITE = 0,
	MNIC_WR_RDMA_WRITE_WITH_IMM = 1,
	MNIC_WR_SEND = 2,
	MNIC_WR_SEND_WITH_IMM = 3,
	MNIC_WR_RDMA_READ = 4,
	MNIC_WR_ATOMIC_CMP_AND_SWP = 5,
	MNIC_WR_ATOMIC_FETCH_AND_ADD = 6,
	MNIC_WR_SEND_WITH_INV = 9,
	MNIC_WR_NUM = 10,
};

/* Send flags (values as ibv_send_flags). */
enum mnic_send_flags {
	MNIC_SEND_FENCE = 1u << 0,
	MNIC_SEND_SIGNALED = 1u << 1,
	MNIC_SEND_SOLICITED = 1u << 2,
	MNIC_SEND_INLINE = 1u << 3,     /* the payload is in the WQE (MNIC_MAX_INLINE) */
};

/* Completion status (values as ibv_wc_status). */
enum mnic_wc_status {
	MNIC_WC_SUCCESS = 0,
	MNIC_WC_LOC_LEN_ERR = 1,
	MNIC_WC_LOC_QP_OP_ERR = 2,
	MNIC_WC_LOC_PROT_ERR = 4,
	MNIC_WC_WR_FLUSH_ERR = 5,
	MNIC_WC_BAD_RESP_ERR = 7,
	MNIC_WC_LOC_ACCESS_ERR = 8,
	MNIC_WC_REM_INV_REQ_ERR = 9,
	MNIC_WC_REM_ACCESS_ERR = 10,
	MNIC_WC_REM_OP_ERR = 11,
	MNIC_WC_RETRY_EXC_ERR = 12,
	MNIC_WC_RNR_RETRY_EXC_ERR = 13,
	MNIC_WC_FATAL_ERR = 19,
	MNIC_WC_GENERAL_ERR = 21,
};

/* Completion opcode (values as ibv_wc_opcode). */
enum mnic_wc_opcode {
	MNIC_WC_SEND = 0,
	MNIC_WC_RDMA_WRITE = 1,
	MNIC_WC_RDMA_READ = 2,
	MNIC_WC_COMP_SWAP = 3,
	MNIC_WC_FETCH_ADD = 4,
	MNIC_WC_RECV = 128,
	MNIC_WC_RECV_RDMA_WITH_IMM = 129,
};

enum mnic_cqe_flags {
	MNIC_CQE_WITH_IMM = 1u << 1,    /* as IBV_WC_WITH_IMM */
	MNIC_CQE_WITH_INV = 1u << 3,    /* as IBV_WC_WITH_INV */
	MNIC_CQE_SOLICITED = 1u << 4,   /* the message carried the BTH SE bit */
};

struct mnic_sge {
	uint64_t addr;       /* host address (offset in the DMA window) */
	uint32_t length;
	uint32_t lkey;
};
_Static_assert(sizeof(struct mnic_sge) == 16, "mnic_sge layout");

struct mnic_send_wqe {
	uint64_t wr_id;
	uint8_t opcode;          /* enum mnic_wr_opcode */
	uint8_t send_flags;      /* enum mnic_send_flags */
	uint8_t num_sge;         /* <= MNIC_MAX_SGE */
	uint8_t reserved0;
	uint32_t imm_data;       /* immediate data (host order; big-endian on the wire) or invalidate rkey */
	uint64_t remote_addr;    /* RDMA and atomics */
	uint32_t rkey;
	uint32_t inline_len;     /* MNIC_SEND_INLINE: payload bytes in inline_data */
	uint64_t compare_add;    /* CMP_AND_SWP: compare; FETCH_AND_ADD: add */
	uint64_t swap;           /* CMP_AND_SWP: swap */
	uint8_t reserved2[16];
	union {
		struct mnic_sge sge[MNIC_MAX_SGE];
		uint8_t inline_data[MNIC_MAX_INLINE];   /* MNIC_SEND_INLINE */
	};
};
_Static_assert(sizeof(struct mnic_send_wqe) == MNIC_WQE_SIZE, "mnic_send_wqe layout");
_Static_assert(sizeof(((struct mnic_send_wqe *)0)->inline_data) == MNIC_MAX_INLINE,
	       "inline data fills the gather list");

struct mnic_recv_wqe {
	uint64_t wr_id;
	uint8_t num_sge;
	uint8_t reserved[55];
	struct mnic_sge sge[MNIC_MAX_SGE];
};
_Static_assert(sizeof(struct mnic_recv_wqe) == MNIC_WQE_SIZE, "mnic_recv_wqe layout");

struct mnic_cqe {
	uint64_t wr_id;
	uint8_t status;          /* enum mnic_wc_status */
	uint8_t opcode;          /* enum mnic_wc_opcode */
	uint8_t flags;           /* enum mnic_cqe_flags */
	uint8_t owner;           /* phase bit, written last */
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t imm_data;       /* or invalidated rkey */
	uint32_t src_qp;
	uint32_t vendor_err;     /* NAK syndrome or firmware reason on error */
};
_Static_assert(sizeof(struct mnic_cqe) == MNIC_CQE_SIZE, "mnic_cqe layout");

#define MNIC_CQE_OWNER(index, size) ((uint8_t)((((index) / (size)) & 1u) ^ 1u))

struct mnic_dbrec {
	uint32_t index;          /* SQ/RQ/SRQ: producer; CQ, EQ: consumer */
	uint32_t arm;            /* CQ: MNIC_CQ_ARM(sn, cmd); others 0 */
};
_Static_assert(sizeof(struct mnic_dbrec) == 8, "mnic_dbrec layout");

/* The arm word of a CQ's doorbell record (completion events, above). */
enum mnic_cq_arm_cmd {
	MNIC_CQ_ARM_NONE = 0,
	MNIC_CQ_ARM_NEXT = 1,           /* ibv_req_notify_cq(cq, 0) */
	MNIC_CQ_ARM_SOLICITED = 2,      /* ibv_req_notify_cq(cq, 1) */
};
#define MNIC_CQ_ARM_CMD_MASK  0xffu
#define MNIC_CQ_ARM_SN_SHIFT  8u
#define MNIC_CQ_ARM_SN_MASK   0xffu
#define MNIC_CQ_ARM_RSVD_MASK 0xffff0000u
#define MNIC_CQ_ARM(sn, cmd) \
	((((uint32_t)(sn) & MNIC_CQ_ARM_SN_MASK) << MNIC_CQ_ARM_SN_SHIFT) | \
	 ((uint32_t)(cmd) & MNIC_CQ_ARM_CMD_MASK))
#define MNIC_CQ_ARM_GET_CMD(arm) ((arm) & MNIC_CQ_ARM_CMD_MASK)
#define MNIC_CQ_ARM_GET_SN(arm)  (((arm) >> MNIC_CQ_ARM_SN_SHIFT) & MNIC_CQ_ARM_SN_MASK)

/* Event queue entries. */
#define MNIC_EQE_SIZE 16u
#define MNIC_EQ_VECTOR_MIN 1u           /* 0: the command queue's vector */
#define MNIC_EQ_VECTOR_MAX 63u          /* what a doorbell channel can name */
enum mnic_eqe_type {
	MNIC_EQE_COMPLETION = 0,        /* an armed CQ got a qualifying CQE */
};
struct mnic_eqe {
	uint32_t cq;             /* the CQ's handle */
	uint8_t type;            /* enum mnic_eqe_type */
	uint8_t arm_sn;          /* the sn of the arm that fired */
	uint8_t reserved0;
	uint8_t owner;           /* phase bit, written last (MNIC_CQE_OWNER) */
	uint32_t reserved1[2];
};
_Static_assert(sizeof(struct mnic_eqe) == MNIC_EQE_SIZE, "mnic_eqe layout");

/* Host Ethernet queues (docs/host-interface.md "Host Ethernet queues"):
 * the frames of the port that are not RoCE for the NIC, between the wire
 * and the host's netdev.  A TX ring and an RX ring of MNIC_ETH_DESC_SIZE
 * descriptors, each with a doorbell record whose index is the host's
 * producer index (descriptors posted), as an SQ's.  A descriptor names a
 * buffer in the host's memory (an IOVA in the queue's buffer MTT):
 *   TX: the host writes addr and size (the frame's bytes, 14 ..
 *       QUERY_DEVICE max_frame), then the producer index, then rings the
 *       data-path doorbell (db_seq, mnic/abi.h); the NIC sends the frame.
 *   RX: the host writes addr and size (the buffer's bytes); the NIC writes
 *       a received frame there.
 * Completion in place: the NIC writes len and status, a write barrier,
 * then owner = MNIC_CQE_OWNER(index, ring size), as a CQE's owner byte
 * (1 on the first pass, 0 on the second...); it completes descriptors in
 * ring order and then raises the queues' vector.  The host never writes
 * the owner byte (a zeroed ring, then only addr/size/len/status), so a
 * slot it posts again still shows the old pass.  A TX descriptor the NIC
 * refuses completes with a status; an RX frame the ring cannot take (no
 * descriptor posted, or a buffer too small) is dropped and counted, and
 * the descriptor stays for the next frame. */
#define MNIC_ETH_DESC_SIZE 16u
enum mnic_eth_status {
	MNIC_ETH_OK = 0,
	MNIC_ETH_BAD_LEN = 1,          /* TX: size < 14 or > max_frame */
	MNIC_ETH_DMA_ERR = 2,          /* TX: the buffer is not in the MTT */
};
struct mnic_eth_desc {
	uint64_t addr;           /* host: buffer IOVA (the queue's buf_mtt) */
	uint16_t size;           /* host: TX frame bytes / RX buffer bytes */
	uint16_t len;            /* NIC: RX frame bytes written; TX: size */
	uint8_t status;          /* NIC: enum mnic_eth_status */
	uint8_t reserved[2];
	uint8_t owner;           /* NIC, written last: MNIC_CQE_OWNER */
};
_Static_assert(sizeof(struct mnic_eth_desc) == MNIC_ETH_DESC_SIZE, "mnic_eth_desc layout");

#endif
