/* The RDMA device's driver-private uverbs data (udata) between mnic.ko
 * (hostdrv/kernel/mnic_ib*.c) and the rdma-core provider
 * libmnic-rdmav34.so (hostdrv/provider/): what ibv_cmd_* carry after the
 * core's own command and response structs (docs/kernel-driver.md "RDMA
 * device", "udata ABI").
 *
 * The rings of a CQ or QP live in the application's memory: the provider
 * allocates one page-aligned buffer per queue object, zeroed, and names it
 * here; the module pins it (ib_umem), gives it to the firmware as one MTT
 * (IOVA = the buffer's virtual address) and builds the queue descriptors
 * (mnic/cmd.h struct mnic_queue_desc) itself, so the provider never names
 * an MTT or a host-physical address.  Layout inside a buffer, every offset
 * checked by the module (inside the buffer, aligned, no overlap):
 *
 *   CQ:  [0, entries x MNIC_CQE_SIZE)  the CQE ring
 *        dbrec_off                      struct mnic_dbrec (consumer index, arm word)
 *   QP:  [0, sq_entries x MNIC_WQE_SIZE)          the SQ ring
 *        [rq_off, rq_off + rq_entries x MNIC_WQE_SIZE)  the RQ ring
 *        sq_dbrec_off, rq_dbrec_off    struct mnic_dbrec each (producer indices)
 *
 * Requests are exact: a request shorter than its struct, or longer with a
 * non-zero byte past it, is -EINVAL (counter ib_refused_udata); reserved
 * fields must be 0.  Responses are written up to the length the caller
 * gave (the core's udata rule), so an older, shorter response still works.
 * Little-endian, fixed-width; every size pinned.
 */
#ifndef MNIC_IB_ABI_H
#define MNIC_IB_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

/* The driver's uverbs ABI version (ib_device_ops.uverbs_abi_ver): the
 * provider checks it against /sys/class/infiniband_verbs/uverbsN/abi_version
 * through its match table. */
#define MNIC_IB_UVERBS_ABI_VERSION 1

/* ---- GET_CONTEXT (alloc_ucontext): no request ---------------------------- */
/* A doorbell register is mapped (uar_*): after db_seq the provider writes
 * uar_ring at uar_offset of that page, which interrupts the NIC at once
 * (an ivshmem-doorbell's Doorbell register, docs/kernel-driver.md
 * "Mapping"); without it the NIC finds db_seq on its poll. */
#define MNIC_IB_CTX_F_DB_RING 1u
struct mnic_ib_alloc_ucontext_resp {
	uint64_t db_mmap_offset;     /* mmap offset of the doorbell page (struct
	                              * mnic_db_page: db_seq), one page, shared */
	uint32_t db_mmap_len;        /* its length (PAGE_SIZE) */
	uint32_t flags;              /* MNIC_IB_CTX_F_* */
	uint32_t wqe_size;           /* MNIC_WQE_SIZE */
	uint32_t cqe_size;           /* MNIC_CQE_SIZE */
	uint32_t max_sge;            /* per WQE (MNIC_MAX_SGE, or the firmware's) */
	uint32_t max_inline;         /* MNIC_MAX_INLINE */
	uint32_t max_qp_wr;          /* ring entries, at most */
	uint32_t max_cqe;
	uint32_t ctx;                /* the firmware context (for logs) */
	uint32_t reserved;
	uint64_t uar_mmap_offset;    /* MNIC_IB_CTX_F_DB_RING: the register page */
	uint32_t uar_offset;         /* the 32-bit register in it */
	uint32_t uar_ring;           /* the value that rings the NIC */
};
_Static_assert(sizeof(struct mnic_ib_alloc_ucontext_resp) == 64, "alloc_ucontext resp");

/* ---- CREATE_CQ ----------------------------------------------------------- */
struct mnic_ib_create_cq_req {
	uint64_t buf_addr;           /* page aligned */
	uint64_t buf_len;            /* page multiple */
	uint32_t entries;            /* power of two, >= the cqe asked, <= max_cqe */
	uint32_t dbrec_off;          /* 8-byte aligned, after the ring */
};
_Static_assert(sizeof(struct mnic_ib_create_cq_req) == 24, "create_cq req");
struct mnic_ib_create_cq_resp {
	uint32_t cq_handle;          /* the firmware's CQ handle (CQE qp_num is a QPN) */
	uint32_t entries;
};
_Static_assert(sizeof(struct mnic_ib_create_cq_resp) == 8, "create_cq resp");

/* ---- RESIZE_CQ: the request is a create_cq_req (a new buffer) ------------ */
struct mnic_ib_resize_cq_resp {
	uint32_t entries;            /* the new ring's */
	uint32_t moved;              /* unconsumed CQEs now at slots 0.. of it */
};
_Static_assert(sizeof(struct mnic_ib_resize_cq_resp) == 8, "resize_cq resp");

/* ---- CREATE_QP (RC only) ------------------------------------------------- */
struct mnic_ib_create_qp_req {
	uint64_t buf_addr;           /* page aligned */
	uint64_t buf_len;            /* page multiple */
	uint32_t sq_entries;         /* powers of two, >= max_send_wr / max_recv_wr */
	uint32_t rq_entries;
	uint32_t rq_off;             /* WQE aligned, after the SQ ring */
	uint32_t sq_dbrec_off;       /* 8-byte aligned, after both rings */
	uint32_t rq_dbrec_off;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_ib_create_qp_req) == 40, "create_qp req");
struct mnic_ib_create_qp_resp {
	uint32_t qpn;
	uint32_t sq_entries;
	uint32_t rq_entries;
	uint32_t max_sge;
};
_Static_assert(sizeof(struct mnic_ib_create_qp_resp) == 16, "create_qp resp");

#endif
