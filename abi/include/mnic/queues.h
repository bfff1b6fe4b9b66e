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
 * = 1 on the first pass through the ring, 0 on the second, and so on.  A
 * host that zeroed the ring knows the CQE at consumer_index is new when its
 * owner equals MNIC_CQE_OWNER(consumer_index, size).  The firmware never
 * overwrites a CQE the host has not consumed (it reads the consumer index
 * from the CQ's doorbell record); a full CQ is an overflow error event.
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
#define MNIC_MAX_INLINE 0u     /* no inline data in this revision */

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
	uint32_t reserved1;
	uint64_t compare_add;    /* CMP_AND_SWP: compare; FETCH_AND_ADD: add */
	uint64_t swap;           /* CMP_AND_SWP: swap */
	uint8_t reserved2[16];
	struct mnic_sge sge[MNIC_MAX_SGE];
};
_Static_assert(sizeof(struct mnic_send_wqe) == MNIC_WQE_SIZE, "mnic_send_wqe layout");

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
	uint32_t index;          /* SQ/RQ/SRQ: producer; CQ: consumer */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_dbrec) == 8, "mnic_dbrec layout");

#endif
