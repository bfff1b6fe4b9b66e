/* libmnic: the host library of the mnic SmartNIC, a small verbs-like API.
 *
 * Two backends behind one handle (docs/libmnic.md):
 *   "/dev/mnicN"   the kernel module (hostdrv/kernel, mnic/ioctl.h): commands
 *                  through MNIC_IOC_CMD, the user area and the init-segment
 *                  page (db_seq) through mmap.
 *   any other path a BAR file (a POSIX NIC's --bar file, or the file behind a
 *                  QEMU NIC's ivshmem BAR): the library maps it and drives
 *                  the command queue itself (mnic/cmd.h), serialising every
 *                  command across processes with flock() on the file, and
 *                  enables the command queue on first use.
 *
 * Addresses.  Everything the NIC is given (rings, doorbell records, MR
 * memory, SGEs) is a *window address*: an offset in the host DMA window of
 * the BAR (mnic/abi.h; physical mode), or, when the NIC has a host-memory
 * aperture, an IOVA = the process's VA, translated by the NIC through the
 * MTTs libmnic registers (host-memory mode, below).  Applications get memory in the user area with
 * mnic_alloc(), which returns both the window address and a host pointer
 * (over /dev/mnicN on a NIC with host memory an MR may also be any buffer
 * of the process: mnic_reg_mr);
 * mnic_window_ptr() turns any window address of the user area back into a
 * pointer.  The allocator's state lives in the user area itself (struct
 * mnic_user_hdr at MNIC_USER_AREA_OFFSET), so copying the user area to
 * another NIC carries the application's memory layout, as CRIU carries a
 * process's memory.
 *
 * Objects are small structs owned by the library (create/destroy); their
 * public fields are plain data (handles, window addresses, sizes) and the
 * device they belong to.  After a live migration, mnic_reopen() points the
 * same device handle at the target NIC and every object follows.
 *
 * Errors: every function returns 0 (or a count, where said) or a negative
 * errno and never crashes on a bad reply.  A command the device refused
 * returns the errno its syndrome carries (MNIC_SYND_ERRNO), or one derived
 * from its status; mnic_last_error() gives the whole story (which layer,
 * opcode, delivery status, command status, syndrome) and mnic_strerror_last()
 * prints it.  Thread safety: one mnic_dev may be used by several threads
 * for commands (serialised inside); posting to one queue or polling one CQ
 * from several threads needs the caller's lock, as in verbs.
 */
#ifndef MNIC_LIBMNIC_H
#define MNIC_LIBMNIC_H

#include <stddef.h>
#include <stdint.h>

#include "mnic/abi.h"
#include "mnic/cmd.h"
#include "mnic/gid.h"
#include "mnic/queues.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LIBMNIC_VERSION 1u

/* ---- device ----------------------------------------------------------- */

struct mnic_dev;   /* opaque */

enum mnic_backend {
	MNIC_BACKEND_BAR = 1,      /* BAR file mapped directly */
	MNIC_BACKEND_KERNEL = 2,   /* /dev/mnicN */
};

/* Contexts (mnic/cmd.h "contexts", docs/libmnic.md "Contexts").  A handle
 * from mnic_open is a *tenant*: on first use it gets a firmware context of
 * its own (a range of the user area and every object it creates; the BAR
 * backend allocates it, owner tag = the process id, and frees it at
 * mnic_close; the kernel driver does the same per open file).  A handle
 * from mnic_open_mgmt is the *management* handle: it issues as
 * MNIC_CTX_MGMT (the privileged context; through /dev/mnicN only for a
 * CAP_NET_ADMIN caller), sees the whole user area and may act for another
 * context (mnic_adopt_context). */
enum mnic_role {
	MNIC_ROLE_TENANT = 0,
	MNIC_ROLE_MGMT = 1,
};
/* The management handle's memory (the rings and MRs of MNIC_CTX_MGMT's own
 * objects, e.g. `mnicctl create`) is a range of its own, a context of this
 * owner tag that holds no objects: so its allocator never shares memory
 * with a tenant's.  Made on the first allocation, kept across processes,
 * never reaped (tenants' tags are process ids > 1). */
#define MNIC_OWNER_MGMT_MEM 1u

/* Open a device: "/dev/mnic..." (kernel) or the path of a BAR file.
 * Checks the init-segment magic, the command-interface revision (a
 * mismatch is -EPROTO, with a message from mnic_open_error()) and that the
 * firmware is READY (-EAGAIN while BOOTING, -EIO when FAILED). */
int mnic_open(const char *dev, struct mnic_dev **out);
/* Like mnic_open, but does not require state READY (for `health` of a
 * failed or booting NIC: identity and health only; commands still need a
 * READY device). */
int mnic_open_raw(const char *dev, struct mnic_dev **out);
/* A management handle (see "Contexts"): for tools such as mnicctl. */
int mnic_open_mgmt(const char *dev, struct mnic_dev **out);
void mnic_close(struct mnic_dev *dev);
/* Point an open handle at another device (live migration: the
 * application's objects and memory now live on `path`).  On failure the
 * handle is unchanged. */
int mnic_reopen(struct mnic_dev *dev, const char *path);
/* Live migration of a frozen process (BAR backend, same BAR size): map
 * `path` over the old BAR at the same address, so every host pointer the
 * application holds stays valid and now reaches the target's copy of the
 * user area.  Async-signal-safe (system calls and plain stores only: call
 * it from the handler of the signal the migration tool sends before it
 * thaws the process); no command may be in progress on `dev`.  -EXDEV
 * another BAR size, -ENODEV/-EPROTO/-EIO not a READY mnic of this
 * revision, -EINVAL kernel backend. */
int mnic_reopen_inplace(struct mnic_dev *dev, const char *path);
/* Human-readable reason for the last mnic_open/mnic_reopen failure in this
 * thread ("" if none). */
const char *mnic_open_error(void);

enum mnic_backend mnic_dev_backend(const struct mnic_dev *dev);
const char *mnic_dev_path(const struct mnic_dev *dev);
/* Command timeout (default 10000 ms; DUMP/RESTORE may take longer on big
 * contexts: the tools raise it). */
void mnic_set_cmd_timeout(struct mnic_dev *dev, uint32_t timeout_ms);

/* Init segment snapshot (no command: works on a device that is not READY). */
struct mnic_dev_info {
	uint32_t fw_version;
	uint32_t cmdif_rev;
	uint32_t board_id;
	uint32_t state;              /* enum mnic_dev_state */
	uint8_t mac[6];
	char board_name[32];
	uint64_t bar_size;
	uint64_t window_size;        /* bytes of the host DMA window */
	uint64_t user_area_offset;   /* window address of the user area */
	uint64_t user_area_size;
	uint32_t cmdq_status;        /* enum mnic_cmdq_status (BAR backend; 0 kernel) */
	struct mnic_health health;   /* BAR backend; zero from the kernel backend */
};
int mnic_dev_info(struct mnic_dev *dev, struct mnic_dev_info *info);

/* QUERY_DEVICE: the reply as mnic/cmd.h defines it (header included). */
int mnic_query_device(struct mnic_dev *dev, struct mnic_cmd_query_device_out *out);
int mnic_fw_query(struct mnic_dev *dev, struct mnic_cmd_fw_query_out *out);

/* ---- errors ------------------------------------------------------------- */

enum mnic_err_layer {
	MNIC_ERR_NONE = 0,
	MNIC_ERR_TRANSPORT = 1,      /* timeout, mapping, ioctl failure: device/IO */
	MNIC_ERR_DELIVERY = 2,       /* the entry was refused (delivery status) */
	MNIC_ERR_STATUS = 3,         /* the command ran and failed (status + syndrome) */
	MNIC_ERR_REPLY = 4,          /* the reply broke the ABI (lengths, counts) */
	MNIC_ERR_ARG = 5,            /* refused by the library before sending */
};

struct mnic_cmd_result {
	uint16_t opcode;
	uint16_t op_mod;
	uint8_t delivery;            /* enum mnic_cmd_delivery */
	uint8_t status;              /* enum mnic_cmd_status */
	uint8_t layer;               /* enum mnic_err_layer */
	uint8_t reserved;
	uint32_t syndrome;
	int err;                     /* the negative errno returned */
};
/* The result of the last command or library call on `dev` in this thread
 * (layer NONE after a success). */
const struct mnic_cmd_result *mnic_last_error(const struct mnic_dev *dev);
/* "CREATE_QP: command status BAD_PARAM (0x03), syndrome 0x00160004 (EINVAL, site 4)"
 * into buf; returns buf. */
char *mnic_strerror_result(const struct mnic_cmd_result *r, char *buf, size_t len);
const char *mnic_strerror_last(const struct mnic_dev *dev);   /* thread-local buffer */
/* Printable names ("QUERY_DEVICE", "BAD_PARAM", "TOKEN_ERR"); "?" if unknown. */
const char *mnic_opcode_name(uint32_t opcode);
const char *mnic_status_name(uint32_t status);
const char *mnic_delivery_name(uint32_t delivery);
const char *mnic_wc_status_name(uint32_t status);
const char *mnic_state_name(uint32_t state);      /* enum mnic_dev_state */
const char *mnic_qp_state_name(uint32_t state);   /* ibv_qp_state values */

/* ---- raw command -------------------------------------------------------- */

/* Execute one command: `in` is the whole logical input (starting with
 * struct mnic_cmd_in_hdr), `out` receives the whole logical output
 * (starting with struct mnic_cmd_out_hdr).  8 <= in_len, out_len <=
 * MNIC_CMD_MAX_LEN.  Returns 0 if delivered with status OK; otherwise a
 * negative errno and *res (if not NULL) / mnic_last_error() tell why.  The
 * output buffer is written even when the command failed (its header). */
int mnic_cmd(struct mnic_dev *dev, const void *in, uint32_t in_len, void *out, uint32_t out_len,
	     struct mnic_cmd_result *res);

/* ---- memory in the user area -------------------------------------------- */

/* The allocator (docs/libmnic.md "Memory"): a first-fit free list with
 * coalescing whose whole state lives in the memory it manages, so a copy
 * of the area carries it (what a checkpoint carries of a process).  The
 * header below sits in the first MNIC_USER_HDR_SIZE bytes; after it the
 * area is tiled by blocks, each a 64-byte struct mnic_umem_blk followed by
 * its payload (boundary tags: a block knows its own size and the size of
 * the block before it, so a free merges with both neighbours in O(1)).
 * Processes sharing the area take `lock` (the holder's process id; a
 * holder that died is taken over). */
#define MNIC_USER_HDR_MAGIC 0x4d454d55u   /* "UMEM" little-endian */
#define MNIC_USER_HDR_VERSION 2u          /* 2: free list (1 was a bump allocator) */
#define MNIC_USER_HDR_SIZE 4096u          /* the first block starts here */
struct mnic_user_hdr {
	uint32_t magic;              /* MNIC_USER_HDR_MAGIC once initialised */
	uint32_t version;            /* MNIC_USER_HDR_VERSION */
	uint64_t base;               /* window address (or IOVA) of this header */
	uint64_t size;               /* bytes the allocator manages */
	uint64_t root;               /* application's anchor (mnic_mem_set_root) */
	uint64_t allocs;             /* live allocations */
	uint64_t in_use;             /* bytes of live blocks (headers included) */
	uint32_t lock;               /* process id of the holder, 0 free */
	uint32_t reserved0;
	uint64_t reserved1;
};
_Static_assert(sizeof(struct mnic_user_hdr) == 64, "mnic_user_hdr layout");

#define MNIC_UMEM_BLK_FREE 0x45455246u   /* "FREE" */
#define MNIC_UMEM_BLK_USED 0x44455355u   /* "USED" */
#define MNIC_UMEM_BLK_SIZE 64u
struct mnic_umem_blk {
	uint32_t magic;              /* MNIC_UMEM_BLK_FREE / _USED */
	uint32_t kind;               /* enum mnic_obj_kind of the owning object, 0 none */
	uint64_t size;               /* block bytes, this header included; multiple of 64 */
	uint64_t prev_size;          /* the block before (0: the first block) */
	uint32_t handle;             /* the owning object's handle (lkey, QPN, ...) */
	uint32_t mtt;                /* the MTT this block is registered with, 0 none */
	uint64_t len;                /* bytes asked for */
	uint8_t reserved[24];
};
_Static_assert(sizeof(struct mnic_umem_blk) == MNIC_UMEM_BLK_SIZE, "mnic_umem_blk layout");

/* Objects memory can be bound to (mnic_mem_bind), so a destroy by handle
 * from another process (mnicctl destroy) returns it. */
enum mnic_obj_kind {
	MNIC_OBJ_NONE = 0,
	MNIC_OBJ_MR = 1,             /* handle: the lkey */
	MNIC_OBJ_CQ = 2,
	MNIC_OBJ_SRQ = 3,
	MNIC_OBJ_QP = 4,             /* handle: the QPN */
	MNIC_OBJ_EQ = 5,             /* a completion channel's event queue */
};

struct mnic_buf {
	void *ptr;                   /* host pointer */
	uint64_t addr;               /* window address */
	uint64_t len;
};
/* Allocate `size` bytes aligned to `align` (a power of two, >= 8; 0 means
 * 64), zeroed.  -ENOMEM when no free block is large enough. */
int mnic_alloc(struct mnic_dev *dev, uint64_t size, uint64_t align, struct mnic_buf *buf);
/* Return an allocation (buf.addr of mnic_alloc): it merges with free
 * neighbours.  -EINVAL an address that is not an allocation's,
 * -EUCLEAN a corrupt allocator state. */
int mnic_free(struct mnic_dev *dev, uint64_t addr);
/* Bind the allocation at addr to an object (kind, handle), so that
 * mnic_destroy_object frees it with the object, from any process. */
int mnic_mem_bind(struct mnic_dev *dev, uint64_t addr, enum mnic_obj_kind kind, uint32_t handle);
/* Destroy an object by handle (DEREG_MR, DESTROY_CQ/SRQ/QP), then free
 * every allocation bound to it and the MTTs they were registered with
 * (mnicctl destroy).  Only when the device agreed. */
int mnic_destroy_object(struct mnic_dev *dev, enum mnic_obj_kind kind, uint32_t handle);
/* Host pointer of [addr, addr + len) in the user area, NULL if any of it
 * lies outside. */
void *mnic_window_ptr(struct mnic_dev *dev, uint64_t addr, uint64_t len);
/* Reset the allocator (everything allocated is forgotten; objects on the
 * NIC are not touched). */
int mnic_mem_reset(struct mnic_dev *dev);
/* The host-memory figure: bytes held by live allocations (block headers
 * included; 0 when everything is free) and the bytes managed. */
int mnic_mem_usage(struct mnic_dev *dev, uint64_t *used, uint64_t *size);
struct mnic_mem_stats {
	uint64_t size;               /* bytes managed (the header's page included) */
	uint64_t in_use;             /* as mnic_mem_usage's used */
	uint64_t allocs;             /* live allocations */
	uint64_t free_blocks;        /* fragments of free space */
	uint64_t largest_free;       /* payload bytes of the largest free block */
};
int mnic_mem_stats(struct mnic_dev *dev, struct mnic_mem_stats *st);
/* An application may record one window address (e.g. of its own state
 * block) that survives a copy of the user area. */
int mnic_mem_set_root(struct mnic_dev *dev, uint64_t addr);
int mnic_mem_get_root(struct mnic_dev *dev, uint64_t *addr);
/* Copy the user area of `from` to `to` (what a checkpoint tool does with
 * process memory): each handle's view, i.e. a context's range for tenant
 * and adopted handles.  Both views must be the same window range.
 * Returns bytes copied or a negative errno. */
int64_t mnic_copy_user_area(struct mnic_dev *from, struct mnic_dev *to);

/* Host-memory mode (docs/libmnic.md "Host memory"): with a NIC that has a
 * host-memory aperture, a BAR-backend handle's memory is pages of that
 * file mapped at a VA range of the process (buf.addr = IOVA = VA), and
 * every ring, doorbell record and MR is registered with an MTT.  The file
 * is $MNIC_HOSTMEM, else "<BAR path>.hostmem"; MNIC_HOSTMEM_SHUFFLE=1
 * takes the pages in a random order (tests of translation).  All zero in
 * physical mode. */
struct mnic_hostmem_info {
	uint64_t aperture;           /* bytes of the host-memory file */
	uint32_t free_pages;         /* 4 KiB pages nobody holds */
	uint32_t pages;              /* this handle's pages */
	uint32_t discontiguities;    /* virtually adjacent pages not physically so */
};
int mnic_hostmem_info(struct mnic_dev *dev, struct mnic_hostmem_info *info);

/* ---- memory translation tables (mnic/cmd.h, docs/libmnic.md "MTTs") ---- */

/* WRITE_MTT entries per command: mnic_write_mtt splits longer lists. */
#define MNIC_MTT_WRITE_CHUNK 4096u
/* CREATE_MTT of [iova, iova + length) with pages of 2^page_shift bytes;
 * *npages (may be NULL) is the entries WRITE_MTT must fill. */
int mnic_create_mtt(struct mnic_dev *dev, uint64_t iova, uint64_t length, uint32_t page_shift,
		    uint32_t *mtt, uint32_t *npages);
/* Entries [first, first + count) from pages[] (host-physical addresses),
 * in as many WRITE_MTT commands as it takes; stops at the first refusal. */
int mnic_write_mtt(struct mnic_dev *dev, uint32_t mtt, uint32_t first, const uint64_t *pages,
		   uint32_t count);
int mnic_destroy_mtt(struct mnic_dev *dev, uint32_t mtt);
/* in_len of a WRITE_MTT of count entries. */
uint32_t mnic_mtt_write_len(uint32_t count);
/* CREATE_MTT + WRITE_MTT of all npages entries (the MTT is destroyed again
 * if a write fails). */
int mnic_reg_mtt(struct mnic_dev *dev, uint64_t iova, uint64_t length, uint32_t page_shift,
		 const uint64_t *pages, uint32_t npages, uint32_t *mtt);

/* ---- contexts ------------------------------------------------------------ */

/* Tenant handle, before its context exists: the size of user area to ask
 * for (rounded up to MNIC_CTX_UA_ALIGN).  Default: $MNIC_CTX_MEM bytes if
 * set, else half the user area.  -EBUSY once the context exists. */
int mnic_set_context_size(struct mnic_dev *dev, uint64_t bytes);
/* The handle's context (allocated now if it has none yet): id and range. */
struct mnic_ctx_info {
	uint32_t ctx;
	uint32_t owner_tag;            /* BAR backend: the owner's process id */
	uint64_t ua_offset, ua_size;
	uint32_t n_pd, n_mr, n_cq, n_srq, n_qp;
	uint32_t flags;                /* MNIC_CTX_F_* */
};
int mnic_context(struct mnic_dev *dev, struct mnic_ctx_info *info);
/* QUERY_CONTEXT: `ctx` itself (next = 0) or the first context >= ctx
 * (next = 1; -ENXIO when none is left).  Management handle. */
int mnic_query_context(struct mnic_dev *dev, uint32_t ctx, int next, struct mnic_ctx_info *info);
/* Management handle: allocate a context with [ua_offset, +ua_size) (ua_offset
 * 0: the firmware picks) for owner `owner_tag`; DEALLOC_CONTEXT one
 * (destroys every object in it). */
int mnic_alloc_context(struct mnic_dev *dev, uint64_t ua_offset, uint64_t ua_size,
		       uint32_t owner_tag, struct mnic_ctx_info *info);
int mnic_dealloc_context(struct mnic_dev *dev, uint32_t ctx);
/* Management handle, BAR backend: act as context `ctx` from now on (its
 * commands, its user-area range), e.g. to dump or restore it.  ctx 0 goes
 * back to MNIC_CTX_MGMT and the whole user area. */
int mnic_adopt_context(struct mnic_dev *dev, uint32_t ctx);
/* The context whose owner tag is `owner_tag` (a process id), or -ESRCH. */
int mnic_find_context(struct mnic_dev *dev, uint32_t owner_tag, struct mnic_ctx_info *info);
/* BAR backend: free the contexts whose owner process is gone (a tenant
 * killed before mnic_close).  Returns how many were freed.  Run by every
 * tenant before it allocates its own context. */
int mnic_reap_contexts(struct mnic_dev *dev);
enum mnic_role mnic_dev_role(const struct mnic_dev *dev);

/* ---- objects ------------------------------------------------------------ */

/* Access flags (values as ibv_access_flags). */
enum mnic_access {
	MNIC_ACCESS_LOCAL_WRITE = 1u << 0,
	MNIC_ACCESS_REMOTE_WRITE = 1u << 1,
	MNIC_ACCESS_REMOTE_READ = 1u << 2,
	MNIC_ACCESS_REMOTE_ATOMIC = 1u << 3,
};

struct mnic_pd {
	struct mnic_dev *dev;
	uint32_t handle;
};

struct mnic_mr {
	struct mnic_dev *dev;
	struct mnic_pd *pd;
	uint32_t lkey, rkey;
	uint64_t addr;               /* window address (host memory: IOVA = VA) */
	uint64_t length;
	uint32_t access;
	void *ptr;                   /* host pointer of addr (kmem mode: may be any buffer) */
	uint32_t mtt;                /* its translation (host-memory mode), 0 none */
};

struct mnic_comp_channel;

struct mnic_cq {
	struct mnic_dev *dev;
	uint32_t handle;
	struct mnic_queue_desc q;    /* ring + doorbell record in the user area */
	uint32_t ci;                 /* consumer index (also in the dbrec) */
	/* completion events (mnic_create_cq_ch, mnic_req_notify_cq) */
	struct mnic_comp_channel *channel;   /* NULL: none */
	void *cq_context;            /* the application's, returned with its events */
	uint8_t arm_sn;              /* events taken, mod 256 (mnic/queues.h) */
	uint32_t events_got;         /* mnic_get_cq_event returned this CQ */
	uint32_t events_acked;       /* mnic_ack_cq_events */
	struct mnic_cq *ch_next;     /* the channel's list of CQs */
};

struct mnic_srq {
	struct mnic_dev *dev;
	struct mnic_pd *pd;
	uint32_t handle;
	uint32_t max_sge;
	uint32_t srq_limit;
	struct mnic_queue_desc q;
	uint32_t pi;                 /* producer index (also in the dbrec) */
	uint32_t ci;                 /* receive WQEs consumed (counted from CQEs) */
};

struct mnic_qp_init_attr {
	struct mnic_pd *pd;
	struct mnic_cq *send_cq;
	struct mnic_cq *recv_cq;
	struct mnic_srq *srq;        /* NULL: the QP has its own RQ */
	uint32_t max_send_wr;        /* SQ entries (rounded up to a power of two) */
	uint32_t max_recv_wr;        /* RQ entries (0 with an SRQ) */
	uint32_t max_send_sge;       /* <= MNIC_MAX_SGE */
	uint32_t max_recv_sge;
	int sq_sig_all;
};

struct mnic_qp {
	struct mnic_dev *dev;
	uint32_t qp_num;
	struct mnic_pd *pd;
	struct mnic_cq *send_cq, *recv_cq;
	struct mnic_srq *srq;
	uint32_t max_send_sge, max_recv_sge;
	int sq_sig_all;
	struct mnic_queue_desc sq, rq;
	uint32_t sq_pi, sq_ci;       /* host view: posted / completed */
	uint32_t rq_pi, rq_ci;
	/* signaled send WQE indices in posting order: a send CQE retires the
	 * oldest (RC completes in order, IBA 9.7.5.2.1), freeing its slot and
	 * every unsignaled one before it */
	uint32_t *sig_fifo;          /* sq.size entries */
	uint32_t sig_head, sig_tail;
};

int mnic_alloc_pd(struct mnic_dev *dev, struct mnic_pd **pd);
int mnic_dealloc_pd(struct mnic_pd *pd);

/* Register [addr, addr + length) as an MR.  Physical mode: a window
 * address of the handle's memory; BAR backend in host-memory mode: an IOVA
 * of mnic_alloc'd memory, through an MTT.  Outside the handle's memory
 * both are -EFAULT (mnic_strerror_last says why): nothing could pin the
 * buffer where the NIC reaches it.  /dev/mnicN on a NIC with host memory
 * (kmem mode, docs/libmnic.md "Host memory"): ANY buffer of the process
 * (heap, stack, a mapped file; IOVA = its VA, mr->ptr = the buffer),
 * pinned by the module until mnic_dereg_mr or mnic_close; a range that is
 * not mapped read-write (the NIC may write it), or over RLIMIT_MEMLOCK, is
 * refused with the module's reason. */
int mnic_reg_mr(struct mnic_pd *pd, uint64_t addr, uint64_t length, uint32_t access,
		struct mnic_mr **mr);
int mnic_dereg_mr(struct mnic_mr *mr);

/* cqe entries rounded up to a power of two; ring and dbrec allocated in
 * the user area with mnic_alloc. */
int mnic_create_cq(struct mnic_dev *dev, uint32_t cqe, struct mnic_cq **cq);
int mnic_destroy_cq(struct mnic_cq *cq);

/* ---- completion events (docs/libmnic.md "Completion events") -------------
 * As ibv_create_comp_channel / ibv_req_notify_cq / ibv_get_cq_event /
 * ibv_ack_cq_events (IBA 11.4.2.2 Request Completion Notification).
 *
 * A channel is an event queue in the handle's memory (MNIC_COMP_CHANNEL_EQES
 * entries, CREATE_EQ) on a host vector of its own (1.., one per channel of
 * a handle) and, where the NIC has a doorbell channel (BAR backend on a
 * POSIX NIC), `fd`: the eventfd the NIC raises that vector on, readable
 * when an event may be waiting, for poll()/epoll (never read it: use
 * mnic_get_cq_event).  Without a doorbell channel (MNIC_DOORBELL_CHANNEL=
 * off, a NIC without one, /dev/mnicN today) fd is -1 and mnic_get_cq_event
 * polls the EQ every MNIC_COMP_POLL_US instead.  At most
 * MNIC_COMP_CHANNEL_CQS CQs per channel (the EQ never overflows then).
 *
 * The cycle (as ibv_rc_pingpong -e): mnic_req_notify_cq, then poll the CQ
 * empty, then mnic_get_cq_event (sleeps), mnic_ack_cq_events,
 * mnic_req_notify_cq again, poll.  A CQE that lands between the last poll
 * and the arm fires the event at once, so the sleep never misses one; an
 * event may find the CQ already drained (spurious, harmless).  One event
 * per arm.  Events do not survive a migration (mnic_reopen): the CQ is
 * restored bound to no EQ. */
#define MNIC_COMP_CHANNEL_EQES 256u
#define MNIC_COMP_CHANNEL_CQS MNIC_COMP_CHANNEL_EQES
#define MNIC_COMP_POLL_US 1000u
struct mnic_comp_channel {
	struct mnic_dev *dev;
	int fd;                      /* the vector's eventfd; -1: no doorbell channel */
	uint32_t eq;                 /* EQ handle */
	uint16_t vector;
	struct mnic_queue_desc q;    /* EQ ring + doorbell record */
	uint32_t ci;                 /* EQ consumer index (also in the dbrec) */
	struct mnic_cq *cqs;         /* bound CQs (cq->ch_next) */
	uint32_t n_cqs;
	/* what mnic_get_cq_event did (tests, mnic-pingpong -e) */
	uint64_t events;             /* EQEs taken */
	uint64_t sleeps;             /* waits on fd (or EQ poll intervals) */
	uint64_t wakeups;            /* ... that ended with fd readable */
	uint64_t eq_checks;          /* looks at the EQ */
	uint64_t bad_events;         /* EQEs naming no CQ of this channel: skipped */
};
int mnic_create_comp_channel(struct mnic_dev *dev, struct mnic_comp_channel **ch);
/* -EBUSY while CQs are bound to it. */
int mnic_destroy_comp_channel(struct mnic_comp_channel *ch);
/* mnic_create_cq with its events on ch (NULL: as mnic_create_cq) and
 * cq_context returned with them (ibv_create_cq's channel and cq_context).
 * mnic_destroy_cq of such a CQ: -EBUSY while events are unacknowledged. */
int mnic_create_cq_ch(struct mnic_dev *dev, uint32_t cqe, struct mnic_comp_channel *ch,
		      void *cq_context, struct mnic_cq **cq);
/* Arm cq for its next completion (solicited_only 0) or its next solicited
 * one (a receive of a message sent with MNIC_SEND_SOLICITED, or any error
 * completion): the doorbell record's arm word, then the doorbell.
 * -EINVAL for a CQ without a channel. */
int mnic_req_notify_cq(struct mnic_cq *cq, int solicited_only);
/* Wait up to timeout_ms (< 0: forever) for the next event of ch: 0 and
 * *cq, *cq_context (if not NULL); -ETIMEDOUT; -EIO for a broken EQ. */
int mnic_get_cq_event(struct mnic_comp_channel *ch, struct mnic_cq **cq, void **cq_context,
		      int timeout_ms);
/* Acknowledge nevents events of cq taken with mnic_get_cq_event. */
void mnic_ack_cq_events(struct mnic_cq *cq, unsigned int nevents);

int mnic_create_srq(struct mnic_pd *pd, uint32_t max_wr, uint32_t max_sge, uint32_t srq_limit,
		    struct mnic_srq **srq);
int mnic_modify_srq(struct mnic_srq *srq, uint32_t srq_limit);
int mnic_destroy_srq(struct mnic_srq *srq);

/* QP attribute mask (values as ibv_qp_attr_mask). */
enum mnic_qp_attr_mask {
	MNIC_QP_STATE = 1u << 0,
	MNIC_QP_CUR_STATE = 1u << 1,
	MNIC_QP_ACCESS_FLAGS = 1u << 3,
	MNIC_QP_PKEY_INDEX = 1u << 4,
	MNIC_QP_PORT = 1u << 5,
	MNIC_QP_AV = 1u << 7,
	MNIC_QP_PATH_MTU = 1u << 8,
	MNIC_QP_TIMEOUT = 1u << 9,
	MNIC_QP_RETRY_CNT = 1u << 10,
	MNIC_QP_RNR_RETRY = 1u << 11,
	MNIC_QP_RQ_PSN = 1u << 12,
	MNIC_QP_MAX_QP_RD_ATOMIC = 1u << 13,
	MNIC_QP_MIN_RNR_TIMER = 1u << 15,
	MNIC_QP_SQ_PSN = 1u << 16,
	MNIC_QP_MAX_DEST_RD_ATOMIC = 1u << 17,
	MNIC_QP_DEST_QPN = 1u << 20,
};
/* QP states (values as ibv_qp_state). */
enum mnic_qp_state {
	MNIC_QPS_RESET = 0,
	MNIC_QPS_INIT = 1,
	MNIC_QPS_RTR = 2,
	MNIC_QPS_RTS = 3,
	MNIC_QPS_SQD = 4,
	MNIC_QPS_SQE = 5,
	MNIC_QPS_ERR = 6,
};

int mnic_create_qp(struct mnic_qp_init_attr *attr, struct mnic_qp **qp);
/* attr as mnic/cmd.h struct mnic_qp_attr (peer address: dip + dmac). */
int mnic_modify_qp(struct mnic_qp *qp, const struct mnic_qp_attr *attr, uint32_t attr_mask);
/* Query by QPN (any QP of the device, e.g. from mnicctl). */
int mnic_query_qp(struct mnic_dev *dev, uint32_t qpn, struct mnic_cmd_query_qp_out *out);
int mnic_destroy_qp(struct mnic_qp *qp);
/* Free the library's struct of a QP without destroying the QP on the NIC
 * (a setup tool that leaves it to another process). */
void mnic_track_qp_forget(struct mnic_dev *dev, struct mnic_qp *qp);
/* The SipHash key RESUME packets of this QP are authenticated with
 * (both ends must agree; MigrOS) */
int mnic_set_qp_mig_key(struct mnic_qp *qp, const uint8_t key[16]);

/* Convenience: RESET -> INIT -> RTR -> RTS for an RC QP to (dqpn, dip,
 * dmac) with IBV-like defaults (timeout 14, retry_cnt 7 = seven retries,
 * so a dead peer ends in RETRY_EXC_ERR after ~0.5 s; rnr_retry 7 =
 * infinite; max_rd 1..16 from the device). */
struct mnic_rc_connect {
	uint32_t dest_qp_num;
	uint8_t dgid[16];            /* the peer's GID: IPv4-mapped (mnic/gid.h mnic_gid_from_ipv4) or IPv6 */
	uint8_t sgid_index;          /* ours (the port's GID table; not of the peer's family:
					the port's first address of it) */
	uint8_t dmac[6];
	uint32_t rq_psn;             /* our receive PSN = the peer's sq_psn */
	uint32_t sq_psn;
	uint32_t path_mtu;           /* ibv_mtu 1..5 */
	uint32_t access;             /* mnic_access */
	uint8_t max_rd_atomic;       /* 0: 1 */
	uint8_t timeout;             /* local ACK timeout, 4.096 us x 2^timeout (IBA
					9.7.6.1.3); 0: 14 (67 ms; with retry_cnt 7 a
					silent peer is given up after ~0.5 s) */
};
int mnic_connect_rc(struct mnic_qp *qp, const struct mnic_rc_connect *c);

/* ---- data path ------------------------------------------------------------ */

struct mnic_send_wr {
	uint64_t wr_id;
	struct mnic_send_wr *next;
	const struct mnic_sge *sg_list;   /* window addresses (IOVAs) + lkeys: the NIC checks
					   * each against its MR's range */
	uint32_t num_sge;
	uint32_t opcode;             /* enum mnic_wr_opcode */
	uint32_t send_flags;         /* enum mnic_send_flags */
	uint32_t imm_data;           /* host order */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add;
	uint64_t swap;
};

struct mnic_recv_wr {
	uint64_t wr_id;
	struct mnic_recv_wr *next;
	const struct mnic_sge *sg_list;
	uint32_t num_sge;
};

struct mnic_wc {
	uint64_t wr_id;
	uint32_t status;             /* enum mnic_wc_status */
	uint32_t opcode;             /* enum mnic_wc_opcode */
	uint32_t flags;              /* enum mnic_cqe_flags */
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t imm_data;
	uint32_t src_qp;
	uint32_t vendor_err;
};

/* Post a chain of work requests: each becomes one 512-byte WQE in the
 * ring; then the doorbell record and db_seq.  On error *bad_wr (if not
 * NULL) is the first WR not posted: -ENOMEM queue full, -EINVAL bad WR. */
int mnic_post_send(struct mnic_qp *qp, struct mnic_send_wr *wr, struct mnic_send_wr **bad_wr);
int mnic_post_recv(struct mnic_qp *qp, struct mnic_recv_wr *wr, struct mnic_recv_wr **bad_wr);
int mnic_post_srq_recv(struct mnic_srq *srq, struct mnic_recv_wr *wr,
		       struct mnic_recv_wr **bad_wr);
/* Poll up to n completions; returns how many (0..n) or a negative errno.
 * Retires the send/receive WQEs of the QPs of this device it knows. */
int mnic_poll_cq(struct mnic_cq *cq, int n, struct mnic_wc *wc);
/* Ring the data-path doorbell (db_seq) without posting (after a restore). */
void mnic_ring_doorbell(struct mnic_dev *dev);

/* ---- counters ------------------------------------------------------------ */

/* QUERY_COUNTERS op_mod group (MNIC_COUNTERS_ENGINE/MGMT/PORT): fills up
 * to max counters, returns how many or a negative errno; *total (if not
 * NULL) is how many the firmware has. */
int mnic_query_counters(struct mnic_dev *dev, uint32_t group, struct mnic_counter *c,
			uint32_t max, uint32_t *total);
/* One counter of a group by name (as QUERY_COUNTERS names it): 0 and
 * *value, -ENOENT if the group has none of that name. */
#define MNIC_MAX_COUNTERS 1024u
int mnic_counter(struct mnic_dev *dev, uint32_t group, const char *name, uint64_t *value);

/* ---- migration (MigrOS: ibv_dump_context / ibv_restore_object) ---------- */

/* DUMP_CONTEXT of the handle's context (a tenant's own, a management
 * handle's adopted one, or MNIC_CTX_MGMT's objects): stops its QPs, and
 * only those, returns the image in a malloc'd buffer
 * (*img, *len; free() it) and the per-type statistics (may be NULL).  The
 * buffer starts at `hint` bytes (0: 64 KiB) and grows on BAD_OUTPUT_LEN
 * (the device rolled the dump back and told the size). */
int mnic_dump_context(struct mnic_dev *dev, uint32_t hint, uint8_t **img, uint32_t *len,
		      struct mnic_cmd_dump_out *stats);
/* RESTORE_OBJECT with op_mod CREATE / REFILL / MR_KEYS: one record (8-byte
 * record header + payload). */
int mnic_restore_object(struct mnic_dev *dev, uint32_t op_mod, const void *record, uint32_t len);
/* Peer-address override for a whole-image restore (both ends moved). */
struct mnic_peer_override {
	uint32_t old_dip;            /* 0 = none */
	uint32_t new_dip;
	uint8_t new_dmac[6];
};
int mnic_restore_image(struct mnic_dev *dev, const void *img, uint32_t len,
		       const struct mnic_peer_override *override);
/* RESUME_CONTEXT / ABORT_DUMP of the handle's context (MNIC_CTX_SELF). */
int mnic_resume_context(struct mnic_dev *dev);
int mnic_abort_dump(struct mnic_dev *dev);
int mnic_mig_config(struct mnic_dev *dev, uint32_t pause_timeout_ms);
/* MIG_CONFIG with every field: the pause bound, the RESUME resend budget
 * (0: each QP's retry_cnt x timeout) and the flags (MNIC_MIG_CFG_UNKEYED:
 * accept RESUME and NAK_STOPPED of QPs without a migration key, as verbs
 * QPs are). */
int mnic_mig_config_flags(struct mnic_dev *dev, uint32_t pause_timeout_ms,
			  uint32_t resume_budget_ms, uint32_t flags);

/* ---- migration orchestration: the sequence, freeze-independent ------------ */

/* One live migration of one or two device contexts (two: both ends of a
 * connection move at once), as a checkpoint tool runs it with the NIC's
 * help (docs/migration-howto.md).  The library does the device steps; the
 * caller owns the devices (opens and closes them) and the process: it
 * freezes it before mnic_mig_dump (SIGSTOP, CRIU's freezer, ...), makes it
 * rebind to the target (mnic_reopen_inplace from the process's SIGUSR1
 * handler, or CRIU restoring it there) and thaws it.
 *
 * Order of calls and the state each leaves (m->state):
 *
 *   mnic_mig_begin      -> SETUP        options; nothing on any device
 *   mnic_mig_add_pair   -> SETUP        QUERY_DEVICE of source and target
 *                                       (their addresses); 1..MNIC_MIG_MAX_PAIRS.
 *                                       The context that moves is the one src
 *                                       acts as (mnic_adopt_context); dst is a
 *                                       management handle
 *      ... the caller freezes the process(es) ...
 *   mnic_mig_dump       -> DUMPED       DUMP_CONTEXT on every source: its QPs
 *                                       stop (peers pause); the images are
 *                                       held in m (pair[i].img) until mnic_mig_end
 *      ... the caller may inspect or save the images ...
 *   mnic_mig_transfer   -> TRANSFERRED  a context at the source's range on
 *                                       each target (ALLOC_CONTEXT UA_AT, same
 *                                       owner tag; dst adopts it), and the
 *                                       source's range copied there (if
 *                                       opts.copy_user_area)
 *   mnic_mig_restore    -> RESTORED     RESTORE_OBJECT(IMAGE) on every target
 *                                       (its objects stay stopped), with the
 *                                       peer-address overrides (mnic_mig_override)
 *   mnic_mig_resume     -> RESUMED      RESUME_CONTEXT on every target: RESUME
 *                                       to every peer QP; the point of no return.
 *                                       The source context is freed (its
 *                                       stopped objects with it)
 *      ... the caller rebinds and thaws the process(es) on the target ...
 *   mnic_mig_end                        frees the images (never closes a device)
 *
 * A call out of this order is refused with -EPROTO, and one with bad
 * arguments with -EINVAL/-E2BIG; either changes nothing (m->err included).
 * A failed step leaves state FAILED with m->err naming the step, the pair,
 * the device and what to do next (m->err.action):
 *   MNIC_MIG_ACT_ABORT    add_pair .. restore, or abort itself, failed: call
 *                         mnic_mig_abort (ABORT_DUMP: every dumped source not
 *                         yet aborted resumes in place; a target context that
 *                         transfer allocated is freed with what it restored;
 *                         MNIC_CTX_MGMT's restored objects stay, stopped: the
 *                         caller tears them down), then
 *                         thaw the process on the source;
 *   MNIC_MIG_ACT_TARGET   resume failed: the context lives on the targets;
 *                         mnic_mig_resume again resumes the targets not yet
 *                         resumed; while none has, mnic_mig_abort still
 *                         resumes the sources instead.
 * mnic_mig_abort works in every state before the first target resumed
 * (SETUP: nothing to undo; ABORTED: nothing left) and leaves ABORTED; after
 * it, -EBUSY.  m->err is the last failure (an abort that fails replaces
 * the step's: report it first).  The images stay in m whatever failed,
 * until mnic_mig_end, the last call.  A struct mnic_mig is used by one
 * thread; its fields are for reading (set only by these calls). */
#define MNIC_MIG_MAX_PAIRS 2u

enum mnic_mig_state {
	MNIC_MIG_SETUP = 0,
	MNIC_MIG_DUMPED = 1,
	MNIC_MIG_TRANSFERRED = 2,
	MNIC_MIG_RESTORED = 3,
	MNIC_MIG_RESUMED = 4,
	MNIC_MIG_FAILED = 5,
	MNIC_MIG_ABORTED = 6,
};

enum mnic_mig_step {
	MNIC_MIG_STEP_NONE = 0,
	MNIC_MIG_STEP_ADD_PAIR = 1,   /* QUERY_DEVICE */
	MNIC_MIG_STEP_DUMP = 2,       /* "checkpoint": DUMP_CONTEXT */
	MNIC_MIG_STEP_TRANSFER = 3,   /* user-area copy */
	MNIC_MIG_STEP_RESTORE = 4,    /* RESTORE_OBJECT(IMAGE) */
	MNIC_MIG_STEP_RESUME = 5,     /* RESUME_CONTEXT */
	MNIC_MIG_STEP_ABORT = 6,      /* ABORT_DUMP */
};

enum mnic_mig_action {
	MNIC_MIG_ACT_NONE = 0,        /* no failure */
	MNIC_MIG_ACT_ABORT = 1,       /* mnic_mig_abort, thaw on the source */
	MNIC_MIG_ACT_TARGET = 2,      /* retry mnic_mig_resume; the context is on the targets */
};

struct mnic_mig;

struct mnic_mig_opts {
	int copy_user_area;           /* mnic_mig_transfer copies the user areas */
	/* one pair only: the peer override its restore uses (NULL: none); with
	 * two pairs the overrides are derived (mnic_mig_override) */
	const struct mnic_peer_override *override;
	/* called before each pair's step (DUMP, TRANSFER, RESTORE, RESUME),
	 * e.g. for a progress line; may be NULL */
	void (*progress)(void *arg, const struct mnic_mig *m, uint32_t pair,
			 enum mnic_mig_step step);
	void *arg;
};

/* What transfer moved of a context's host memory (host-memory mode: both
 * NICs have an aperture; docs/libmnic.md "Migration with host memory"). */
struct mnic_hm_move {
	uint32_t owner;               /* the pages' owner tag */
	uint32_t npages;              /* 4 KiB pages copied onto the target (0: none) */
	uint32_t same_frames;         /* of them at the page frame they had on the source */
	uint32_t mtts;                /* MTTs restore refilled with the target's pages */
	uint64_t base;                /* the range's IOVA (the process's VA) */
	uint32_t *pfn;                /* the target frame of each virtual page (library's) */
};

struct mnic_mig_pair {
	struct mnic_dev *src, *dst;   /* the caller's handles */
	struct mnic_cmd_query_device_out src_info, dst_info;   /* addresses (QUERY_DEVICE) */
	uint8_t *img;                 /* the image (malloc'd; freed by mnic_mig_end) */
	uint32_t img_len;
	struct mnic_cmd_dump_out stats;   /* DUMP_CONTEXT's per-type statistics */
	uint64_t user_area_bytes;     /* copied by transfer (0: not copied) */
	/* the context that moves: src's (ctx 0: MNIC_CTX_MGMT's objects), and
	 * on the target the one transfer allocated for it at the same range */
	struct mnic_ctx_info src_ctx, dst_ctx;
	/* step times, ms (CLOCK_MONOTONIC) */
	double checkpoint_ms, transfer_ms, restore_ms, resume_ms;
	uint8_t dumped, transferred, restored, resumed, aborted;
	uint8_t dst_allocated;        /* transfer allocated dst_ctx (abort frees it) */
	uint8_t src_freed;            /* resume freed the source context */
	struct mnic_hm_move hm;       /* host-memory mode: the pages transfer moved */
};

struct mnic_mig_error {
	enum mnic_mig_step step;      /* the step that failed */
	int32_t pair;                 /* its pair, -1 for the whole call */
	struct mnic_dev *dev;         /* the device it failed on (NULL: none) */
	const char *what;             /* the command ("DUMP_CONTEXT"), or the operation */
	int err;                      /* negative errno returned */
	enum mnic_mig_action action;
	struct mnic_cmd_result result;   /* mnic_last_error(dev) at the failure */
};

struct mnic_mig {
	enum mnic_mig_state state;
	struct mnic_mig_opts opts;
	struct mnic_peer_override override;   /* copy of *opts.override */
	uint32_t n_pairs;
	struct mnic_mig_pair pair[MNIC_MIG_MAX_PAIRS];
	struct mnic_mig_error err;            /* the last failure (action NONE: none) */
};

/* Start a migration in *m (any previous content is overwritten: end it
 * first).  opts may be NULL (no copy, no override, no progress).  -EINVAL
 * an override with old_dip but no new_dip. */
int mnic_mig_begin(struct mnic_mig *m, const struct mnic_mig_opts *opts);
/* Add a source -> target pair (two distinct open devices); QUERY_DEVICE of
 * both.  Returns the pair's index, or a negative errno: -E2BIG more than
 * MNIC_MIG_MAX_PAIRS, -EINVAL a second pair with opts.override, or the
 * QUERY_DEVICE's error (m->err.dev says which device). */
int mnic_mig_add_pair(struct mnic_mig *m, struct mnic_dev *src, struct mnic_dev *dst);
int mnic_mig_dump(struct mnic_mig *m);
int mnic_mig_transfer(struct mnic_mig *m);
int mnic_mig_restore(struct mnic_mig *m);
int mnic_mig_resume(struct mnic_mig *m);
/* ABORT_DUMP on every dumped source (pair[i].aborted says which resumed in
 * place); the first failure is returned (and in m->err), the others are
 * still tried. */
int mnic_mig_abort(struct mnic_mig *m);
void mnic_mig_end(struct mnic_mig *m);
/* The peer override pair `pair` is restored with: two pairs, each target's
 * QPs address the other pair's source, they are told the other pair's
 * target (its IPv4 and MAC from QUERY_DEVICE); one pair, opts.override.
 * Returns ov filled, or NULL for none. */
const struct mnic_peer_override *mnic_mig_override(const struct mnic_mig *m, uint32_t pair,
						  struct mnic_peer_override *ov);
const char *mnic_mig_step_name(enum mnic_mig_step step);   /* "checkpoint", ... */
const char *mnic_mig_state_name(enum mnic_mig_state state);
/* m->err in one line: "restore of pair 1 on c.bar failed: RESTORE_OBJECT(IMAGE):
 * command status ...; the sources are still stopped: mnic_mig_abort resumes
 * them in place"; "" when nothing failed.  Returns buf. */
char *mnic_mig_strerror(const struct mnic_mig *m, char *buf, size_t len);

/* ---- migration image, offline (no device) --------------------------------- */

/* Image/record layout (docs/migration-image.md). */
#define MNIC_IMG_MAGIC "MNICDUMP"
#define MNIC_IMG_VERSION 3u          /* 2: the dumped context's user-area range; 3: MTTs */
#define MNIC_IMG_HDR_LEN 40u
#define MNIC_IMG_CRC_START 24u       /* the CRC covers the range and the records */
#define MNIC_IMG_REC_HDR_LEN 8u
#define MNIC_IMG_TYPES 7u            /* PD MR CQ SRQ QP (5: none) MTT */
#define MNIC_IMG_TYPE_MTT 6u

struct mnic_img_hdr {
	uint16_t version;
	uint16_t flags;
	uint32_t count;
	uint32_t total;
	uint32_t crc;                /* as stored */
	uint32_t crc_computed;
	uint64_t ua_offset, ua_size; /* the dumped context's user-area range */
};
struct mnic_img_rec {
	uint32_t offset;             /* of the record header in the image */
	uint16_t type;               /* 0 PD, 1 MR, 2 CQ, 3 SRQ, 4 QP */
	uint16_t version;
	uint32_t len;                /* header included */
	uint32_t handle;             /* first payload word: handle, lkey or QPN */
};
/* Parse an image: header, CRC32C, record framing (type known, length
 * within the image and right for its type, count matches).  Calls `cb` for
 * every record (may be NULL; a non-zero return stops the walk and is
 * returned).  Returns 0 or a negative errno, with a message in err:
 *   -EINVAL truncated/corrupt framing, -EILSEQ bad magic, -ERANGE unknown
 *   version, -EBADMSG CRC mismatch. */
int mnic_img_parse(const uint8_t *img, size_t len, struct mnic_img_hdr *hdr,
		   int (*cb)(const struct mnic_img_rec *rec, const uint8_t *payload, void *arg),
		   void *arg, char *err, size_t errlen);
const char *mnic_img_type_name(uint32_t type);

#ifdef __cplusplus
}
#endif

#endif
