/* The command interface ABI: command queue entries, mailbox blocks, opcodes,
 * statuses and the input/output layout of every command.  Shared by the
 * firmware (mgmt/), the Linux kernel module (hostdrv/kernel) and libmnic.
 * Modelled on the mlx5 command interface (PRM "Command Interface";
 * drivers/net/ethernet/mellanox/mlx5/core/cmd.c); documented in
 * docs/host-interface.md.  Little-endian, fixed-width, explicit padding,
 * every size pinned.
 *
 * ---- Transport ----------------------------------------------------------
 * The ring: 1 << init_seg.cmdq_log_size entries of 64 bytes at
 * init_seg.cmdq_addr (host DMA window).  To issue a command the host
 *   1. fills entry pi & (size - 1): type, token, in_len/out_len, the first
 *      16 bytes of input inline, mailbox chains for the rest of the input
 *      and for the output beyond 16 bytes;
 *   2. write barrier, sets status_own = MNIC_CMD_OWNER_HW;
 *   3. write barrier, increments init_seg.cmdq_pi.
 * The firmware serves entries in ring order from its consumer index while
 * cmdq_pi differs from it and the entry is hardware-owned, writes the output
 * (inline + output mailboxes), then, after a write barrier, writes
 * status_own = delivery_status << 1 (ownership back to software) and
 * increments init_seg.cmdq_ci.  The host polls status_own.
 *
 * Logical input/output: a command's input is in_len bytes: bytes [0, 16)
 * are in_inline, bytes [16, in_len) are the data of the input mailbox
 * chain, 512 bytes per block, in block order.  Output likewise with
 * out_inline and the output chain.  Both start with an 8-byte header
 * (struct mnic_cmd_in_hdr / mnic_cmd_out_hdr); the command's fields follow.
 *
 * Mailbox chain: blocks of 576 bytes, 8-byte aligned, in the host window;
 * block i has block_num == i and token == the entry's token; next is the
 * window address of block i + 1 (0 ends the chain).  A chain must hold
 * exactly ceil((len - 16) / 512) blocks; a short chain, a wrong number, a
 * wrong token or an address outside the driver area is a delivery error
 * (this also ends any loop in a chain).
 *
 * Two error layers:
 *   delivery status (status_own bits 7:1, enum mnic_cmd_delivery): the
 *     entry itself could not be read or answered; the command did not run.
 *   command status (out header, enum mnic_cmd_status) + syndrome: the
 *     command ran and was refused or failed; the syndrome names the check
 *     (MNIC_SYND(errno, site)).  Engine state is unchanged on any error.
 */
#ifndef MNIC_CMD_H
#define MNIC_CMD_H

#ifdef __KERNEL__
#include <linux/types.h>   /* uint*_t for the kernel module */
#else
#include <stdint.h>
#endif

#define MNIC_CMDQ_ENTRY_SIZE   64u
#define MNIC_CMDQ_MAX_LOG_SIZE 6u              /* 64 entries */
#define MNIC_CMDQ_MAX_ENTRIES  (1u << MNIC_CMDQ_MAX_LOG_SIZE)
#define MNIC_CMD_INLINE_LEN    16u
#define MNIC_CMD_MBOX_DATA     512u
#define MNIC_CMD_MBOX_SIZE     576u
#define MNIC_CMD_TYPE_PCIE     0x7u            /* entry type (mlx5 value) */
#define MNIC_CMD_OWNER_HW      0x1u            /* status_own bit 0 */
/* Where mailboxes may live: the driver area after the ring. */
#define MNIC_CMD_MBOX_AREA     (MNIC_CMDQ_MAX_ENTRIES * MNIC_CMDQ_ENTRY_SIZE)
/* Largest logical input or output of one command (a context image). */
#define MNIC_CMD_MAX_LEN       (1u << 20)

struct mnic_cmdq_entry {
	uint8_t type;              /* MNIC_CMD_TYPE_PCIE */
	uint8_t reserved0[3];
	uint32_t in_len;           /* logical input bytes, >= 8 */
	uint64_t in_mbox;          /* first input block, 0 if in_len <= 16 */
	uint8_t in_inline[MNIC_CMD_INLINE_LEN];
	uint8_t out_inline[MNIC_CMD_INLINE_LEN];
	uint64_t out_mbox;         /* first output block, 0 if out_len <= 16 */
	uint32_t out_len;          /* logical output bytes the host can take, >= 8 */
	uint8_t token;             /* host's choice; must match every mailbox */
	uint8_t signature;         /* 0 (not checked in this revision) */
	uint8_t reserved1;
	uint8_t status_own;        /* delivery status << 1 | owner */
};
_Static_assert(sizeof(struct mnic_cmdq_entry) == MNIC_CMDQ_ENTRY_SIZE, "cmdq entry layout");

struct mnic_cmd_mailbox {
	uint8_t data[MNIC_CMD_MBOX_DATA];
	uint8_t reserved0[48];
	uint64_t next;             /* window address of the next block, 0 = last */
	uint32_t block_num;        /* 0, 1, 2, ... */
	uint8_t reserved1;
	uint8_t token;
	uint8_t ctrl_signature;    /* 0 */
	uint8_t signature;         /* 0 */
};
_Static_assert(sizeof(struct mnic_cmd_mailbox) == MNIC_CMD_MBOX_SIZE, "mailbox layout");

/* Delivery status (mlx5 values). */
#define MNIC_CMD_DELIVERY_LIST(X)                 \
	X(MNIC_CMD_DELIV_OK, 0x00)                \
	X(MNIC_CMD_DELIV_SIGNATURE_ERR, 0x01)     \
	X(MNIC_CMD_DELIV_TOKEN_ERR, 0x02)         \
	X(MNIC_CMD_DELIV_BAD_BLOCK_NUMBER, 0x03)  \
	X(MNIC_CMD_DELIV_BAD_OUTPUT_POINTER, 0x04) \
	X(MNIC_CMD_DELIV_BAD_INPUT_POINTER, 0x05) \
	X(MNIC_CMD_DELIV_INTERNAL_ERR, 0x06)      \
	X(MNIC_CMD_DELIV_INPUT_LEN_ERR, 0x07)     \
	X(MNIC_CMD_DELIV_OUTPUT_LEN_ERR, 0x08)    \
	X(MNIC_CMD_DELIV_RES_NOT_ZERO, 0x09)      \
	X(MNIC_CMD_DELIV_BAD_CMD_TYPE, 0x10)

/* Command status (out header byte 0; mlx5 values, except NOT_PRIV: ours,
 * a context other than MNIC_CTX_MGMT issued a privileged command). */
#define MNIC_CMD_STATUS_LIST(X)                   \
	X(MNIC_CMD_STAT_OK, 0x00)                 \
	X(MNIC_CMD_STAT_INT_ERR, 0x01)            \
	X(MNIC_CMD_STAT_BAD_OP, 0x02)             \
	X(MNIC_CMD_STAT_BAD_PARAM, 0x03)          \
	X(MNIC_CMD_STAT_BAD_SYS_STATE, 0x04)      \
	X(MNIC_CMD_STAT_BAD_RES, 0x05)            \
	X(MNIC_CMD_STAT_RES_BUSY, 0x06)           \
	X(MNIC_CMD_STAT_EXCEED_LIM, 0x08)         \
	X(MNIC_CMD_STAT_BAD_RES_STATE, 0x09)      \
	X(MNIC_CMD_STAT_BAD_INDEX, 0x0a)          \
	X(MNIC_CMD_STAT_NOT_PRIV, 0x0b)           \
	X(MNIC_CMD_STAT_NO_RESOURCES, 0x0f)       \
	X(MNIC_CMD_STAT_BAD_INPUT_LEN, 0x50)      \
	X(MNIC_CMD_STAT_BAD_OUTPUT_LEN, 0x51)

/* Opcodes (mlx5 values where mlx5 has the command; 0xb00.. migration;
 * 0x104..0x106 contexts, our own values). */
#define MNIC_CMD_OPCODE_LIST(X)                   \
	X(MNIC_CMD_QUERY_DEVICE, 0x100)           \
	X(MNIC_CMD_FW_QUERY, 0x101)               \
	X(MNIC_CMD_QUERY_COUNTERS, 0x102)         \
	X(MNIC_CMD_GET_EVENTS, 0x103)             \
	X(MNIC_CMD_ALLOC_CONTEXT, 0x104)          \
	X(MNIC_CMD_DEALLOC_CONTEXT, 0x105)        \
	X(MNIC_CMD_QUERY_CONTEXT, 0x106)          \
	X(MNIC_CMD_QUERY_DCQCN, 0x107)            \
	X(MNIC_CMD_SET_DCQCN, 0x108)              \
	X(MNIC_CMD_SET_GID, 0x109)                \
	X(MNIC_CMD_NOP, 0x10d)                    \
	X(MNIC_CMD_CREATE_EQ, 0x301)              \
	X(MNIC_CMD_DESTROY_EQ, 0x302)             \
	X(MNIC_CMD_CREATE_CQ, 0x400)              \
	X(MNIC_CMD_DESTROY_CQ, 0x401)             \
	X(MNIC_CMD_RESIZE_CQ, 0x402)              \
	X(MNIC_CMD_MODIFY_CQ, 0x403)              \
	X(MNIC_CMD_CREATE_QP, 0x500)              \
	X(MNIC_CMD_MODIFY_QP, 0x501)              \
	X(MNIC_CMD_QUERY_QP, 0x502)               \
	X(MNIC_CMD_DESTROY_QP, 0x503)             \
	X(MNIC_CMD_SET_QP_MIG_KEY, 0x504)         \
	X(MNIC_CMD_CREATE_SRQ, 0x700)             \
	X(MNIC_CMD_DESTROY_SRQ, 0x701)            \
	X(MNIC_CMD_MODIFY_SRQ, 0x702)             \
	X(MNIC_CMD_ALLOC_PD, 0x800)               \
	X(MNIC_CMD_DEALLOC_PD, 0x801)             \
	X(MNIC_CMD_REG_MR, 0x802)                 \
	X(MNIC_CMD_DEREG_MR, 0x803)               \
	X(MNIC_CMD_CREATE_MTT, 0x804)             \
	X(MNIC_CMD_WRITE_MTT, 0x805)              \
	X(MNIC_CMD_DESTROY_MTT, 0x806)            \
	X(MNIC_CMD_CREATE_ETHQ, 0x904)            \
	X(MNIC_CMD_DESTROY_ETHQ, 0x906)           \
	X(MNIC_CMD_DUMP_CONTEXT, 0xb00)           \
	X(MNIC_CMD_RESTORE_OBJECT, 0xb01)         \
	X(MNIC_CMD_RESUME_CONTEXT, 0xb02)         \
	X(MNIC_CMD_ABORT_DUMP, 0xb03)             \
	X(MNIC_CMD_MIG_CONFIG, 0xb04)             \
	X(MNIC_CMD_FW_FLASH_BEGIN, 0xc00)         \
	X(MNIC_CMD_FW_FLASH_DATA, 0xc01)          \
	X(MNIC_CMD_FW_FLASH_END, 0xc02)           \
	X(MNIC_CMD_FW_ACTIVATE, 0xc03)

#define MNIC_CMD_ENUM_(name, value) name = value,
enum mnic_cmd_delivery { MNIC_CMD_DELIVERY_LIST(MNIC_CMD_ENUM_) };
enum mnic_cmd_status { MNIC_CMD_STATUS_LIST(MNIC_CMD_ENUM_) };
enum mnic_cmd_opcode { MNIC_CMD_OPCODE_LIST(MNIC_CMD_ENUM_) };
#undef MNIC_CMD_ENUM_

/* Syndrome: which check refused the command.  errno is the positive
 * HAL_E* value behind it (hal/errno.h), site a number unique within the
 * handler (docs/host-interface.md lists them). */
#define MNIC_SYND(err, site) (((uint32_t)(err) << 16) | ((uint32_t)(site) & 0xffffu))
#define MNIC_SYND_ERRNO(s)   ((s) >> 16)
#define MNIC_SYND_SITE(s)    ((s) & 0xffffu)

/* ctx: the issuing context (docs/host-interface.md "Contexts").  Written
 * by whoever drives the command queue -- the kernel driver from the open
 * file's context, libmnic's BAR backend from its mnic_open -- and never
 * taken from an application: the kernel driver overwrites it.  The
 * firmware serves the command as that context: objects it creates belong
 * to it, handles it names must belong to it.  MNIC_CTX_MGMT (0) is the
 * privileged management context. */
struct mnic_cmd_in_hdr {
	uint16_t opcode;           /* enum mnic_cmd_opcode */
	uint16_t op_mod;
	uint16_t ctx;              /* issuing context; MNIC_CTX_MGMT = privileged */
	uint16_t reserved;         /* 0 */
};
_Static_assert(sizeof(struct mnic_cmd_in_hdr) == 8, "in header");

struct mnic_cmd_out_hdr {
	uint8_t status;            /* enum mnic_cmd_status */
	uint8_t reserved[3];
	uint32_t syndrome;
};
_Static_assert(sizeof(struct mnic_cmd_out_hdr) == 8, "out header");

/* ---- command layouts: *_in is the whole logical input, *_out the whole
 * logical output (headers included).  A command's in_len must be at least
 * sizeof(its _in) and its out_len at least sizeof(its _out), except where a
 * variable part is described.  Reserved fields must be zero. */

struct mnic_cmd_simple_in {           /* NOP, QUERY_DEVICE, FW_QUERY, ALLOC_PD,
					 QUERY_COUNTERS */
	struct mnic_cmd_in_hdr hdr;
};
_Static_assert(sizeof(struct mnic_cmd_simple_in) == 8, "simple in");

struct mnic_cmd_handle_in {           /* DEALLOC_PD, DEREG_MR (lkey), DESTROY_CQ,
					 DESTROY_SRQ, DESTROY_QP, QUERY_QP (qpn);
					 DUMP_CONTEXT, RESUME_CONTEXT, ABORT_DUMP,
					 DEALLOC_CONTEXT, QUERY_CONTEXT (ctx) */
	struct mnic_cmd_in_hdr hdr;
	uint32_t handle;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_cmd_handle_in) == 16, "handle in");

struct mnic_cmd_simple_out {
	struct mnic_cmd_out_hdr hdr;
};
_Static_assert(sizeof(struct mnic_cmd_simple_out) == 8, "simple out");

struct mnic_cmd_handle_out {          /* ALLOC_PD, CREATE_CQ/SRQ/QP, RESIZE_CQ */
	struct mnic_cmd_out_hdr hdr;
	uint32_t handle;               /* PD/CQ/SRQ handle, or QPN */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_cmd_handle_out) == 16, "handle out");

struct mnic_cmd_query_device_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t fw_version;
	uint32_t cmdif_rev;
	uint32_t board_id;
	uint32_t max_qp, max_mr, max_pd, max_cq, max_srq;
	uint32_t max_sge, max_qp_wr, max_cqe, max_rd_atomic;
	uint32_t max_msg;
	uint32_t ipv4;                 /* the port's address (host order) */
	uint8_t mac[6];
	uint16_t max_frame;            /* largest Ethernet frame the port takes (no FCS) */
	uint64_t window_size;          /* host DMA window bytes */
	uint64_t user_area_offset;     /* MNIC_USER_AREA_OFFSET */
	uint32_t image_max;            /* largest context image the firmware holds */
	uint32_t pause_timeout_ms;
	uint32_t n_pd, n_mr, n_cq, n_srq, n_qp;   /* objects in use (issuer's context
						     unless MNIC_CTX_MGMT: all) */
	uint32_t flags;                /* MNIC_DEV_F_* */
	uint32_t resume_budget_ms;     /* MIG_CONFIG; 0 = each QP's retry_cnt x timeout */
	uint32_t mig_cfg_flags;        /* MNIC_MIG_CFG_* in force */
	uint32_t ctx;                  /* the issuing context */
	uint32_t n_ctx;                /* contexts allocated (MNIC_CTX_MGMT not counted) */
	uint64_t ctx_ua_offset;        /* the issuer's user-area range (window) */
	uint64_t ctx_ua_size;
	/* host memory and translation (docs/host-interface.md) */
	uint64_t hostmem_size;         /* aperture bytes; 0: the DMA window is the aperture */
	uint32_t max_mtt;              /* MTT objects */
	uint32_t max_mtt_pages;        /* entries of all MTTs together */
	uint32_t n_mtt;                /* MTTs in use (as n_qp) */
	uint32_t free_mtt_pages;       /* entries not held by any MTT */
	uint32_t page_shift_min, page_shift_max;
};
_Static_assert(sizeof(struct mnic_cmd_query_device_out) == 184, "query device out");
#define MNIC_DEV_F_STOPPED  1u        /* a dump stopped the context */
#define MNIC_DEV_F_MIGRATION 2u       /* built with the migration extension */

struct mnic_cmd_fw_query_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t fw_version;
	uint32_t board_id;
	char board_name[32];
	char build[32];                /* build description, NUL-terminated */
	uint64_t uptime_ns;
};
_Static_assert(sizeof(struct mnic_cmd_fw_query_out) == 88, "fw query out");

/* QUERY_COUNTERS: self-describing list, so tools print names without
 * sharing the firmware's list. */
struct mnic_counter {
	char name[24];                 /* NUL-terminated */
	uint64_t value;
};
_Static_assert(sizeof(struct mnic_counter) == 32, "counter");
struct mnic_cmd_query_counters_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t count;                /* counters that follow (fit in out_len) */
	uint32_t total;                /* counters the firmware has */
	/* struct mnic_counter counter[count]; */
};
_Static_assert(sizeof(struct mnic_cmd_query_counters_out) == 16, "counters out");
/* op_mod of QUERY_COUNTERS */
#define MNIC_COUNTERS_ENGINE 0u       /* RoCEv2 engine counters */
#define MNIC_COUNTERS_MGMT   1u       /* command interface counters */
#define MNIC_COUNTERS_PORT   2u       /* Ethernet port and DMA counters */

struct mnic_event {
	uint32_t type;                 /* ibv_event_type values */
	uint32_t handle;
};
struct mnic_cmd_get_events_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t count;
	uint32_t reserved;
	/* struct mnic_event event[count]; as many as out_len holds */
};
_Static_assert(sizeof(struct mnic_cmd_get_events_out) == 16, "events out");

/* Memory translation (docs/host-interface.md "Host memory and
 * translation").  An MTT translates one I/O virtual address range
 * [iova, iova + length) (the application's virtual addresses, as verbs
 * has them) onto host-physical pages of 2^page_shift bytes: entry i maps
 * the page at (iova & ~(page - 1)) + i * page.  Host-physical addresses
 * (HPA) are offsets into the host-memory aperture (QUERY_DEVICE
 * hostmem_size; the DMA window when the NIC has no separate aperture).
 * Handle 0 is never an MTT: an object whose mtt field is 0 gives
 * host-physical addresses directly ("physical mode"). */
#define MNIC_MTT_NONE 0u
#define MNIC_PAGE_SHIFT_MIN 12u        /* 4 KiB */
#define MNIC_PAGE_SHIFT_MAX 30u        /* 1 GiB */
struct mnic_cmd_create_mtt_in {
	struct mnic_cmd_in_hdr hdr;
	uint64_t iova;
	uint64_t length;               /* > 0; iova + length must not wrap */
	uint32_t page_shift;           /* MNIC_PAGE_SHIFT_MIN..MAX */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_cmd_create_mtt_in) == 32, "create mtt in");
struct mnic_cmd_create_mtt_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t mtt;                  /* handle, never MNIC_MTT_NONE */
	uint32_t npages;               /* entries WRITE_MTT must fill */
};
_Static_assert(sizeof(struct mnic_cmd_create_mtt_out) == 16, "create mtt out");
/* Entries [first, first + count) from the page addresses that follow
 * (count x uint64_t HPA, each aligned to the page size, the whole page in
 * the aperture and outside the driver area; in_len = 32 + 8 x count).
 * Large lists go in several commands (MNIC_CMD_MAX_LEN).  An MTT that
 * objects use is written only while its context is Stopped (a restore's
 * REFILL: new pages, same IOVAs); an object may use an MTT only once every
 * entry is written. */
struct mnic_cmd_write_mtt_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t mtt;
	uint32_t first;
	uint32_t count;
	uint32_t reserved;
	uint64_t reserved1;
	/* uint64_t pages[count] */
};
_Static_assert(sizeof(struct mnic_cmd_write_mtt_in) == 32, "write mtt in");
/* DESTROY_MTT: handle_in (BAD_STATE while an object uses it). */

struct mnic_cmd_reg_mr_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t pd;
	uint32_t access;               /* ibv_access_flags values */
	uint64_t addr;                 /* IOVA in mtt's range; mtt 0: HPA */
	uint64_t length;
	uint32_t mtt;                  /* MNIC_MTT_NONE: physical mode */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_cmd_reg_mr_in) == 40, "reg mr in");
struct mnic_cmd_reg_mr_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t lkey, rkey;
};
_Static_assert(sizeof(struct mnic_cmd_reg_mr_out) == 16, "reg mr out");

struct mnic_queue_desc {
	uint64_t ring_addr;            /* entry 0: IOVA in ring_mtt's range; mtt 0: HPA */
	uint64_t dbrec_addr;           /* struct mnic_dbrec: IOVA in dbrec_mtt's; 0: HPA */
	uint32_t size;                 /* entries, power of two; 0 = no queue */
	uint32_t ring_mtt;             /* MNIC_MTT_NONE: physical mode */
	uint32_t dbrec_mtt;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_queue_desc) == 32, "queue desc");

struct mnic_cmd_create_cq_in {
	struct mnic_cmd_in_hdr hdr;
	struct mnic_queue_desc q;
};
_Static_assert(sizeof(struct mnic_cmd_create_cq_in) == 40, "create cq in");

/* RESIZE_CQ (IBA 11.2.8.3 Resize CQ): the CQ moves to the ring q (checked
 * as CREATE_CQ's; zeroed, its record's index 0).  The CQEs the host has
 * not consumed (the old record's index up to the firmware's producer
 * index) are copied to the new ring's slots 0.. in order, with the new
 * ring's owner phase; the CQ then produces after them, and the host
 * consumes from 0 of the new ring.  The old ring is never written, so a
 * refusal leaves the CQ as it was: more unconsumed CQEs than q holds
 * (EXCEED_LIM), a new record whose index is not 0, a CQ in error
 * (BAD_PARAM).  The host stops polling the CQ until the reply (it owns
 * both rings meanwhile).  Out: handle_out, whose handle is the number
 * of CQEs moved. */
struct mnic_cmd_resize_cq_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t cq;
	uint32_t reserved;
	struct mnic_queue_desc q;
};
_Static_assert(sizeof(struct mnic_cmd_resize_cq_in) == 48, "resize cq in");

/* Completion events (mnic/queues.h "Completion events").  CREATE_EQ: an
 * event queue of q.size MNIC_EQE_SIZE entries (ring and doorbell record
 * checked as a CQ's), raising vector (MNIC_EQ_VECTOR_MIN..MAX) after each
 * EQE; out: handle_out.  DESTROY_EQ: handle_in (RES_BUSY while a CQ is
 * bound to it).  MODIFY_CQ op_mod MNIC_MODIFY_CQ_EQ: bind cq to eq
 * (MNIC_EQ_NONE unbinds); both the issuer's. */
struct mnic_cmd_create_eq_in {
	struct mnic_cmd_in_hdr hdr;
	struct mnic_queue_desc q;
	uint32_t vector;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_cmd_create_eq_in) == 48, "create eq in");

#define MNIC_EQ_NONE 0xffffffffu
#define MNIC_MODIFY_CQ_EQ 0u            /* op_mod: the CQ's event queue */
struct mnic_cmd_modify_cq_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t cq;
	uint32_t eq;                    /* MNIC_EQ_NONE: no EQ (events off) */
};
_Static_assert(sizeof(struct mnic_cmd_modify_cq_in) == 16, "modify cq in");

struct mnic_cmd_create_srq_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t pd;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint32_t reserved;
	struct mnic_queue_desc q;
};
_Static_assert(sizeof(struct mnic_cmd_create_srq_in) == 56, "create srq in");

struct mnic_cmd_modify_srq_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t srq;
	uint32_t srq_limit;
};
_Static_assert(sizeof(struct mnic_cmd_modify_srq_in) == 16, "modify srq in");

#define MNIC_NO_SRQ 0xffffffffu
struct mnic_cmd_create_qp_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t pd, send_cq, recv_cq;
	uint32_t srq;                  /* MNIC_NO_SRQ: the QP has its own RQ */
	uint32_t max_send_sge, max_recv_sge;
	uint32_t sq_sig_all;
	uint32_t reserved;
	struct mnic_queue_desc sq, rq;
};
_Static_assert(sizeof(struct mnic_cmd_create_qp_in) == 104, "create qp in");

/* QP attributes on the wire of the command interface (values as verbs).
 * The address vector is ibv_ah_attr's with its GRH (RoCEv2 always has
 * one): dgid is the peer's GID, network order, IPv4-mapped
 * (::ffff:a.b.c.d) for RoCEv2 over IPv4 or an IPv6 address; sgid_index
 * names the port's GID (SET_GID) the QP sends from; ttl and tos are the
 * GRH hop limit and traffic class (IPv4 TTL and TOS); flow_label is
 * IPv6's (20 bits).  MODIFY_QP with the AV: a unicast dgid, flow_label <
 * 2^20, sgid_index < MNIC_GID_TBL_LEN, reserved zero. */
struct mnic_qp_attr {
	uint32_t qp_state;             /* ibv_qp_state */
	uint32_t cur_qp_state;         /* query only */
	uint32_t path_mtu;             /* ibv_mtu */
	uint32_t qp_access_flags;
	uint32_t rq_psn, sq_psn;
	uint32_t dest_qp_num;
	uint32_t flow_label;
	uint8_t dgid[16];
	uint8_t dmac[6];               /* peer MAC (the host resolved it) */
	uint8_t ttl, tos;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
	uint16_t pkey_index;
	uint8_t sgid_index;
	uint8_t reserved[7];
};
_Static_assert(sizeof(struct mnic_qp_attr) == 72, "qp attr");

struct mnic_cmd_modify_qp_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t qpn;
	uint32_t attr_mask;            /* ibv_qp_attr_mask values */
	struct mnic_qp_attr attr;
};
_Static_assert(sizeof(struct mnic_cmd_modify_qp_in) == 88, "modify qp in");

struct mnic_cmd_query_qp_out {
	struct mnic_cmd_out_hdr hdr;
	struct mnic_qp_attr attr;
	uint32_t mig_flags;            /* MNIC_QP_F_* */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_cmd_query_qp_out) == 88, "query qp out");
#define MNIC_QP_F_STOPPED 1u
#define MNIC_QP_F_PAUSED  2u
#define MNIC_QP_F_HAS_KEY 4u

struct mnic_cmd_set_qp_mig_key_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t qpn;
	uint32_t reserved;
	uint8_t key[16];
};
_Static_assert(sizeof(struct mnic_cmd_set_qp_mig_key_in) == 32, "mig key in");

/* ---- contexts (docs/host-interface.md "Contexts") ------------------------
 * A context is a tenant: the kernel driver allocates one per open file of
 * /dev/mnicN, libmnic's BAR backend one per mnic_open.  Each owns a range
 * of the user area (its rings, doorbell records and MRs must lie in it) and
 * every object it creates.  A handle of another context's object is
 * answered exactly as a handle that does not exist (BAD_RES, the same
 * syndrome); the firmware counts it (mgmt counter refused_foreign).
 *
 * Only MNIC_CTX_MGMT may issue ALLOC_CONTEXT, DEALLOC_CONTEXT of another
 * context, QUERY_CONTEXT of another context, MIG_CONFIG, QUERY_COUNTERS,
 * FW_FLASH_*, FW_ACTIVATE, and DUMP_CONTEXT / RESUME_CONTEXT / ABORT_DUMP
 * naming a context other than the issuer's; anything else from another
 * context is NOT_PRIV (counter refused_priv).  A context may dump, resume
 * and abort itself (handle = its own id, or MNIC_CTX_SELF).
 *
 * DEALLOC_CONTEXT destroys every object of the context (QPs first, then
 * SRQs, CQs, MRs, PDs), ends a dump in progress (the peers it paused get
 * no RESUME: they error out after their pause bound) and frees its id and
 * user-area range. */
#define MNIC_CTX_MGMT      0u
#define MNIC_CTX_SELF      0xffffu     /* handle of DUMP/RESUME/ABORT/QUERY_CONTEXT: the issuer */
#define MNIC_CTX_MAX       64u         /* contexts besides MNIC_CTX_MGMT */
#define MNIC_CTX_UA_ALIGN  0x10000u    /* user-area ranges: 64 KiB aligned and sized */

/* ALLOC_CONTEXT op_mod */
#define MNIC_CTX_UA_ANY 0u            /* the firmware picks the range (first fit) */
#define MNIC_CTX_UA_AT  1u            /* exactly ua_offset (a restore); taken: BAD_RES/EEXIST */
struct mnic_cmd_alloc_context_in {
	struct mnic_cmd_in_hdr hdr;
	uint64_t ua_offset;            /* UA_AT: window address, MNIC_CTX_UA_ALIGN aligned */
	uint64_t ua_size;              /* bytes, a multiple of MNIC_CTX_UA_ALIGN, > 0 */
	uint32_t owner_tag;            /* opaque to the firmware (libmnic: its lease slot) */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_cmd_alloc_context_in) == 32, "alloc context in");
struct mnic_cmd_alloc_context_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t ctx;                  /* 1 .. MNIC_CTX_MAX */
	uint32_t reserved;
	uint64_t ua_offset;
	uint64_t ua_size;
};
_Static_assert(sizeof(struct mnic_cmd_alloc_context_out) == 32, "alloc context out");

/* QUERY_CONTEXT op_mod: BY_ID answers for handle; NEXT for the first
 * allocated context whose id is >= handle (none left: BAD_RES, HAL_ENXIO),
 * as QUERY_QP NEXT. */
#define MNIC_QUERY_CTX_BY_ID 0u
#define MNIC_QUERY_CTX_NEXT  1u
struct mnic_cmd_query_context_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t ctx;
	uint32_t owner_tag;
	uint64_t ua_offset;
	uint64_t ua_size;
	uint32_t n_pd, n_mr, n_cq, n_srq, n_qp;
	uint32_t flags;                /* MNIC_CTX_F_* */
};
_Static_assert(sizeof(struct mnic_cmd_query_context_out) == 56, "query context out");
#define MNIC_CTX_F_STOPPED 1u         /* a dump stopped this context */

/* DUMP_CONTEXT (handle_in, handle = the context): stop that context's QPs,
 * and only those, and return its image (docs/migration-image.md) after the
 * fixed part.  If out_len cannot hold the image the dump is rolled back
 * (QPs resume in place), status is BAD_OUTPUT_LEN and image_len tells the
 * size needed.  RESUME_CONTEXT and ABORT_DUMP (handle = the context) act on
 * that context's Stopped QPs only; QPs of other contexts, and QPs that
 * were never stopped, are untouched.  RESTORE_OBJECT creates its objects
 * in the issuing context (a fresh one on the target), whose user-area
 * range must hold every address of the image. */
struct mnic_cmd_dump_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t image_len;
	uint32_t reserved;
	uint32_t objects[6];           /* per rocev2_obj_type: PD MR CQ SRQ QP QP_SRQ */
	uint32_t bytes[6];
	/* uint8_t image[image_len]; */
};
_Static_assert(sizeof(struct mnic_cmd_dump_out) == 64, "dump out");

/* RESTORE_OBJECT op_mod */
#define MNIC_RESTORE_CREATE  0u    /* one record: PD, CQ, SRQ or QP (QP left in RESET) */
#define MNIC_RESTORE_REFILL  1u    /* one QP record: attributes and internal state */
#define MNIC_RESTORE_MR_KEYS 2u    /* one MR record: MR with its MRN, lkey, rkey */
#define MNIC_RESTORE_IMAGE   3u    /* a whole image, records in dependency order */
struct mnic_cmd_restore_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t data_len;             /* bytes of record/image after this struct */
	uint32_t old_dip;              /* IMAGE: peer-address override (0 = none) */
	uint32_t new_dip;
	uint8_t new_dmac[6];
	uint8_t reserved[6];
	/* uint8_t data[data_len]; one record (8-byte record header + payload)
	 * or a whole image */
};
_Static_assert(sizeof(struct mnic_cmd_restore_in) == 32, "restore in");

/* MIG_CONFIG (MNIC_CTX_MGMT only): sets every field.
 *   pause_timeout_ms  bound on the total time a QP spends Paused across
 *                     NAK_STOPPED/RESUME cycles until a migration completes
 *                     (0 = never time out)
 *   resume_budget_ms  RESUME resends give up after this long: the QP goes to
 *                     ERR, its WQEs complete with RETRY_EXC_ERR (0 = the
 *                     QP's retry_cnt x its retransmit timeout)
 *   flags             MNIC_MIG_CFG_UNKEYED: accept RESUME and NAK_STOPPED
 *                     without a MAC on QPs that have no migration key (the
 *                     operator's explicit choice; default off) */
#define MNIC_MIG_CFG_UNKEYED 1u
struct mnic_cmd_mig_config_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t pause_timeout_ms;
	uint32_t resume_budget_ms;
	uint32_t flags;                /* MNIC_MIG_CFG_* */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_cmd_mig_config_in) == 24, "mig config in");

/* DCQCN congestion control (issue 18; docs/host-interface.md "DCQCN"):
 * QUERY_DCQCN (simple_in -> dcqcn_out, any context) reads the parameters
 * in force, SET_DCQCN (dcqcn_in -> simple_out, MNIC_CTX_MGMT only) sets
 * every field at once; a field out of range is refused (BAD_PARAM,
 * syndrome MNIC_SYND(HAL_EINVAL, MNIC_SITE_DCQCN_FLAGS + its index
 * below)) and nothing changes.  A SET restarts every QP at line rate.
 *   field            range                      default
 *   flags            MNIC_DCQCN_F_*             ENABLE | ECT
 *   g                1..65536 (1/65536 units)   256 (1/256)
 *   alpha_us         1..1,000,000               55
 *   rate_timer_us    1..1,000,000               55
 *   byte_counter     1024..2^30 bytes           10 MiB
 *   fast_recovery    1..32 stages               5
 *   rai_mbps         1..line_rate_mbps          40
 *   rhai_mbps        1..line_rate_mbps          200
 *   min_rate_mbps    1..line_rate_mbps          10
 *   line_rate_mbps   1..400,000                 10,000
 *   cnp_interval_us  1..1,000,000               50 */
#define MNIC_DCQCN_F_ENABLE 1u        /* CE -> CNP, CNP -> rate cut, pacer */
#define MNIC_DCQCN_F_ECT    2u        /* every packet sent ECT(0) (RFC 3168) */
struct mnic_dcqcn_params {
	uint32_t flags;
	uint32_t g;
	uint32_t alpha_us;
	uint32_t rate_timer_us;
	uint32_t byte_counter;
	uint32_t fast_recovery;
	uint32_t rai_mbps;
	uint32_t rhai_mbps;
	uint32_t min_rate_mbps;
	uint32_t line_rate_mbps;
	uint32_t cnp_interval_us;
	uint32_t reserved;             /* 0 */
};
_Static_assert(sizeof(struct mnic_dcqcn_params) == 48, "dcqcn params");
struct mnic_cmd_dcqcn_in {
	struct mnic_cmd_in_hdr hdr;
	struct mnic_dcqcn_params p;
};
_Static_assert(sizeof(struct mnic_cmd_dcqcn_in) == 56, "dcqcn in");
struct mnic_cmd_dcqcn_out {
	struct mnic_cmd_out_hdr hdr;
	struct mnic_dcqcn_params p;
};
_Static_assert(sizeof(struct mnic_cmd_dcqcn_out) == 56, "dcqcn out");

/* SET_GID (MNIC_CTX_MGMT only; docs/host-interface.md "RoCE addresses and
 * GIDs"): the RoCEv2 GID table of the port, as the host's ib_core keeps
 * it from the netdev's IPv4 and IPv6 addresses (IBA A17.8: a RoCEv2 GID
 * is the IPv6 address, or the IPv4 one as IPv4-mapped IPv6).  Entry
 * index is set (flags MNIC_GID_F_VALID, gid one packets may come from:
 * not ::, ::1 or ff00::/8; IPv4-mapped not 0/8, 127/8, class D or E) or
 * cleared (flags 0, gid all zero).  A QP sends from the entry its
 * sgid_index names (or, when that one is not of its peer's family, the
 * lowest valid entry of it); the engine accepts RoCE packets to every
 * valid entry, and with no IPv4 entry to its boot address (QUERY_DEVICE
 * ipv4, 10.mac[3].mac[4].mac[5]). */
#define MNIC_GID_TBL_LEN  16u
#define MNIC_GID_F_VALID  1u
struct mnic_cmd_set_gid_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t index;                /* < MNIC_GID_TBL_LEN */
	uint32_t flags;                /* MNIC_GID_F_* */
	uint8_t gid[16];               /* network order */
};
_Static_assert(sizeof(struct mnic_cmd_set_gid_in) == 32, "set gid in");

/* Host Ethernet queues (mnic/queues.h "Host Ethernet queues";
 * docs/host-interface.md): one TX and one RX ring per NIC, the port's
 * netdev's, so MNIC_CTX_MGMT only (the kernel driver).  CREATE_ETHQ: the
 * rings and doorbell records checked as a CQ's (tx.size, rx.size powers
 * of two), buf_mtt (an MTT of MNIC_CTX_MGMT, fully written) where every
 * descriptor's buffer lies, vector (MNIC_EQ_VECTOR_MIN..MAX) raised after
 * completions; a second CREATE while one exists: RES_BUSY.  Out:
 * simple_out.  DESTROY_ETHQ (simple_in): none: BAD_PARAM.  While they
 * exist every frame of the port that is not RoCEv2 for the NIC (UDP
 * 4791 to its address) and is addressed to its MAC, broadcast or
 * multicast goes to the RX ring. */
struct mnic_cmd_create_ethq_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t vector;
	uint32_t buf_mtt;
	struct mnic_queue_desc tx;
	struct mnic_queue_desc rx;
};
_Static_assert(sizeof(struct mnic_cmd_create_ethq_in) == 80, "create ethq in");

/* QUERY_QP op_mod (appended for `mnicctl qp list`): NEXT takes handle =
 * a QPN (or 0) and answers for the first live QP whose slot index
 * (QPN & 0xfff) is >= that of handle, with that QP's QPN in
 * mnic_cmd_query_qp_out.reserved; none left: status BAD_RES, syndrome
 * errno HAL_ENXIO. */
#define MNIC_QUERY_QP_BY_QPN 0u
#define MNIC_QUERY_QP_NEXT   1u

/* ---- firmware update (issue #8, docs/firmware-images.md) ----------------
 * Appended: FW_QUERY op_mod FW_QUERY_SLOTS answers with the firmware
 * storage view (struct mnic_cmd_fw_slots_out) instead of the running build.
 * An update: FW_FLASH_BEGIN (the image header and total size) -> the slot
 * that is not active is marked EMPTY; FW_FLASH_DATA in order, offset =
 * bytes sent so far, at most MNIC_FW_FLASH_CHUNK_MAX per command (each
 * command erases at most one sector and programs its chunk: bounded work
 * per event-loop turn, traffic keeps flowing); FW_FLASH_END verifies the
 * slot in place (board, size, anti-rollback minimum, SHA-256, signature by
 * the board's key slot) and only then marks it VALID; FW_ACTIVATE checks it
 * again, makes it the test slot and resets the NIC after the reply.
 * Image refusals: status BAD_PARAM, syndrome MNIC_SYND(HAL_EINVAL, 0x100 +
 * enum fwimg_err) (boot/fwimage.h). */
#define MNIC_FW_QUERY_BUILD  0u       /* FW_QUERY op_mod: struct mnic_cmd_fw_query_out */
#define MNIC_FW_QUERY_SLOTS  1u       /* FW_QUERY op_mod: struct mnic_cmd_fw_slots_out */
#define MNIC_FW_FLASH_CHUNK_MAX 4096u
#define MNIC_FW_SITE_IMAGE   0x100u   /* + enum fwimg_err */

struct mnic_fw_slot_info {
	uint8_t version[8];            /* struct mnic_fw_version (mnic/fwimage.h) */
	uint8_t state;                 /* enum mnic_slot_state */
	uint8_t flags;                 /* MNIC_FW_SLOT_F_* */
	uint8_t image_err;             /* enum fwimg_err of an in-place check, 0 = ok */
	uint8_t reserved;
	uint32_t payload_size;
};
_Static_assert(sizeof(struct mnic_fw_slot_info) == 16, "fw slot info");
#define MNIC_FW_SLOT_F_RUNNING 1u
#define MNIC_FW_SLOT_F_ACTIVE  2u
#define MNIC_FW_SLOT_F_TEST    4u

struct mnic_cmd_fw_slots_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t board_id;
	uint32_t flags;                /* MNIC_FW_F_* */
	uint8_t running_version[8];    /* struct mnic_fw_version; 0 without a loader */
	uint8_t running_slot;          /* MNIC_SLOT_A/B, 0xff: not booted from a slot */
	uint8_t boot_event;            /* enum mnic_boot_event of this boot */
	uint8_t boot_count;
	uint8_t update_state;          /* enum fwupd_state */
	uint32_t update_written;
	uint32_t update_total;
	uint32_t chunk_max;            /* MNIC_FW_FLASH_CHUNK_MAX */
	uint32_t refused;              /* FW_* commands refused since boot */
	uint32_t flash_errors;         /* erase/program failures since boot */
	struct mnic_fw_slot_info slot[2];
	uint8_t bootrec[64];           /* struct mnic_bootrec, as on flash (newest copy;
					  min_version: the anti-rollback minimum) */
	uint8_t sig_policy;            /* MNIC_FW_SIG_*: what the board does with signatures */
	uint8_t reserved2[3];
	uint32_t revoked_below;        /* the key slot's revocation counter */
	uint32_t key_version[2];       /* per key slot entry; 0: unused */
};
_Static_assert(sizeof(struct mnic_cmd_fw_slots_out) == 160, "fw slots out");
/* Signature policy, from the key slot in the boot flash (mnic/fwimage.h):
 * no key provisioned -> OPEN, images are checked by digest only (the
 * documented policy of an unprovisioned board, docs/firmware-images.md);
 * a key slot -> ENFORCED; a corrupt slot or every key revoked -> LOCKED,
 * every image refused. */
#define MNIC_FW_SIG_OPEN      0u
#define MNIC_FW_SIG_ENFORCED  1u
#define MNIC_FW_SIG_LOCKED    2u
#define MNIC_FW_F_FLASH       1u      /* the board has slot flash */
#define MNIC_FW_F_LOADER      2u      /* booted by the first-stage loader */
#define MNIC_FW_F_CONFIRMED   4u      /* this boot's self-test passed */
#define MNIC_FW_F_RESET_PENDING 8u    /* FW_ACTIVATE accepted, reset follows */

struct mnic_cmd_fw_flash_begin_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t total;                /* image bytes that FW_FLASH_DATA will send */
	uint32_t reserved;
	uint8_t image_hdr[128];        /* struct mnic_fwimg_hdr */
};
_Static_assert(sizeof(struct mnic_cmd_fw_flash_begin_in) == 144, "fw flash begin in");

struct mnic_cmd_fw_flash_data_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t offset;               /* == bytes accepted so far */
	uint32_t len;                  /* <= MNIC_FW_FLASH_CHUNK_MAX; in_len >= 16 + len */
	/* uint8_t data[len]; */
};
_Static_assert(sizeof(struct mnic_cmd_fw_flash_data_in) == 16, "fw flash data in");

struct mnic_cmd_fw_flash_end_out {
	struct mnic_cmd_out_hdr hdr;
	uint32_t slot;                 /* the slot written */
	uint32_t image_err;            /* enum fwimg_err; 0: verified, VALID */
};
_Static_assert(sizeof(struct mnic_cmd_fw_flash_end_out) == 16, "fw flash end out");

struct mnic_cmd_fw_activate_in {
	struct mnic_cmd_in_hdr hdr;
	uint32_t max_boots;            /* test boots before revert; 0 = default (3) */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_cmd_fw_activate_in) == 16, "fw activate in");

#endif
