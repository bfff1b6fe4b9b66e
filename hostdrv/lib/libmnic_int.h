/* libmnic internals: the device handle and the pieces the backends share.
 * Not installed; tests include it to reach the pure helpers. */
#ifndef LIBMNIC_INT_H
#define LIBMNIC_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "mnic/libmnic.h"
#include "wqe.h"   /* the pure data-path core (mnic_cq_ring_poll, ...) */

#define MNIC_IVSH_MAX_VECTORS 8       /* a QEMU NIC's vectors we keep (nic.sh: 4) */

#define MNIC_DEFAULT_TIMEOUT_MS 10000u

struct mnic_dev {
	enum mnic_backend backend;
	char path[256];
	int fd;                           /* BAR file (flock) or /dev/mnicN */
	/* BAR backend: the whole BAR */
	uint8_t *bar;
	uint64_t bar_size;
	/* both: the init segment (BAR backend: bar; kernel: mmap'd page) */
	volatile struct mnic_init_seg *iseg;
	void *iseg_map;
	uint64_t iseg_map_len;
	/* both: the doorbell page (BAR backend: bar + MNIC_DB_PAGE_OFFSET;
	 * kernel: mmap MNIC_MMAP_DOORBELL) */
	volatile struct mnic_db_page *db;
	void *db_map;
	/* BAR backend: the NIC's doorbell channel (dbch.c), -1 when absent:
	 * the socket, the NIC's ring eventfd, ours it raises vector 0 on */
	int db_sock, db_ring_fd, db_irq_fd;
	int ivsh_id, ivsh_slot;       /* our ID on a QEMU NIC's ivshmem server and
	                               * our irq_host_ids slot, or -1 */
	int ivsh_vec_fd[MNIC_IVSH_MAX_VECTORS]; /* our own eventfds of vectors
	                               * 1.. from the server (0 is db_irq_fd), or -1 */
	uint16_t db_n_vectors;            /* the NIC's WELCOME: vectors it raises */
	uint64_t eq_vectors;              /* vectors (bit v) a completion channel holds */
	/* the user area this handle works in: host pointer of window address
	 * user_off.  A tenant handle: its context's range; a management
	 * handle: the whole user area (area_*), or an adopted context's. */
	uint8_t *user;
	uint64_t user_off;
	uint64_t user_size;
	uint8_t *area;                    /* the whole user area (BAR backend) */
	uint64_t area_off, area_size;
	uint64_t ua_base;                 /* window address of the whole user area */
	/* contexts (ctx.c, docs/libmnic.md "Contexts") */
	enum mnic_role role;
	uint16_t ctx;                     /* issuing context; MNIC_CTX_MGMT = 0 */
	uint8_t ctx_owned;                /* ours: DEALLOC_CONTEXT on close */
	volatile int ctx_lost;            /* rebound to another NIC: find it again */
	uint64_t ctx_size;                /* tenant: range size to ask for (0: default) */
	uint8_t mem_ready;                /* management: its memory range is set up */
	void *user_map;                   /* kernel backend: the mmap */
	uint64_t window_size;
	struct mnic_ioc_info_copy {
		uint32_t fw_version, cmdif_rev, board_id, state;
		uint8_t mac[6];
		char board_name[32];
		uint64_t bar_size;
		uint32_t flags;               /* MNIC_INFO_F_* */
	} kinfo;                          /* kernel backend: MNIC_IOC_INFO at open */
	pthread_mutex_t lock;             /* commands of this handle */
	uint32_t timeout_ms;
	uint8_t token;
	int cmdq_ready;                   /* BAR backend: cmdq checked/enabled */
	struct mnic_cmd_result last;
	/* why, in words, when the library refused (mnic_set_err_detail):
	 * mnic_strerror_last appends it; "" otherwise */
	char detail[256];
	/* host-memory mode (hostmem.c): the aperture file, its page table, and
	 * this handle's pages mapped at hm_va (the user view then is that VA
	 * range: IOVA = VA) */
	uint8_t hm_checked;               /* QUERY_DEVICE asked */
	char hm_path[280];                /* "" : no host-memory file open */
	int hm_fd;
	struct mnic_hm_hdr *hm_table;
	size_t hm_table_len;
	uint64_t hm_size;                 /* aperture bytes */
	void *hm_va;
	uint32_t *hm_pfn;                 /* page frame of each virtual page */
	/* kernel backend on a NIC with a host-memory aperture: the user view
	 * is this process's own anonymous memory (IOVA = VA), each ring, record
	 * and MR pinned by the module (MNIC_IOC_REG_MEM); hostmem.c */
	uint8_t kmem;
	uint32_t hm_npages;
	/* QPs and SRQs of this handle, so poll_cq can retire their WQEs */
	struct mnic_qp **qps;
	uint32_t n_qps, cap_qps;
};

/* ---- cmdq.c: the command transport of the BAR backend ------------------- */

/* Lay out one command in the driver area `drv` (host pointer of window
 * address 0, `drv_size` bytes): entry fields, the input inline part and
 * input mailbox chain (blocks from MNIC_CMD_MBOX_AREA), then the output
 * chain right after.  The entry is written with status_own = 0 (software
 * owned); the caller hands it over.  Returns 0 or -E2BIG (the chains do
 * not fit the driver area), -EINVAL (lengths). */
int mnic_cmdq_build(uint8_t *drv, uint64_t drv_size, struct mnic_cmdq_entry *e,
		    const void *in, uint32_t in_len, uint32_t out_len, uint8_t token);
/* Read the logical output of a command built by mnic_cmdq_build (from the
 * addresses it chose, never from pointers the device could have changed). */
int mnic_cmdq_collect(const uint8_t *drv, uint64_t drv_size, const struct mnic_cmdq_entry *e,
		      uint32_t in_len, void *out, uint32_t out_len);
uint32_t mnic_cmdq_blocks(uint32_t len);
/* Execute on the BAR backend (caller holds dev->lock), as context
 * `issuer` (written into the entry's inline header: the queue's owner sets
 * it, never the caller's input). */
int mnic_cmdq_exec(struct mnic_dev *dev, uint16_t issuer, const void *in, uint32_t in_len,
		   void *out, uint32_t out_len, uint8_t *delivery);

/* ---- dbch.c: the doorbell channel of the BAR backend ------------------------ */
/* At open: unless MNIC_DOORBELL_CHANNEL=off, make our eventfd and connect
 * to "<bar>.db".  0 also when the NIC offers no channel (the fds stay -1);
 * a negative errno when one is there but the exchange failed (the handle
 * then works without it). */
int mnic_dbch_open(struct mnic_dev *dev, const char *bar);
/* (Re)connect to "<bar>.db" (bar_len bytes, no NUL needed) with the
 * eventfd we have: async-signal-safe (mnic_reopen_inplace). */
int mnic_dbch_connect(struct mnic_dev *dev, const char *bar, size_t bar_len);
void mnic_dbch_close(struct mnic_dev *dev);
/* An fd to sleep on for vector (>= 1), which this handle's channel now
 * raises for us: POSIX, a new eventfd registered with VECTOR; a QEMU NIC's
 * server, a dup of the eventfd it gave us.  -ENOTCONN without a channel,
 * -ENOSPC past its vectors. */
int mnic_dbch_vector_fd(struct mnic_dev *dev, uint16_t vector);
/* Tell the NIC to look at the BAR (after the stores it must see). */
void mnic_dbch_ring(struct mnic_dev *dev);
/* Sleep until the NIC raises vector 0 for us or timeout_ms: 1 woken (the
 * raise consumed), 0 timed out, -ENOTCONN no channel (poll the BAR).  A
 * wakeup proves nothing: the caller re-reads what it waits for. */
int mnic_dbch_wait(struct mnic_dev *dev, int timeout_ms);

/* ---- fdpass.c -------------------------------------------------------------- */
/* recvmsg of up to len bytes into buf with at most one fd into *fd (-1:
 * none; extra fds closed): the bytes read, or -errno; -EPROTO when the
 * control data was truncated (the fd then closed). */
ssize_t mnic_recv_with_fd(int sock, void *buf, size_t len, int flags, int *fd);

/* ---- ivsh.c: a QEMU NIC's ivshmem-doorbell server as the channel ---------- */
/* Join "<bar>.ivsh" (mnic_dbch_connect tries it when there is no ".db"):
 * db_ring_fd = the NIC's vector-0 eventfd, our vector 0 dup2()ed onto
 * db_irq_fd, our ID in an irq_host_ids slot.  -ENODEV: the NIC published no ID
 * or is not a peer there; -ENOENT/-ECONNREFUSED: no server. */
int mnic_ivsh_connect(struct mnic_dev *dev, const char *bar, size_t bar_len);
/* Free our irq_host_ids slot and close our vector fds (db_sock, db_ring_fd
 * and db_irq_fd are dbch.c's to close). */
void mnic_ivsh_close(struct mnic_dev *dev);
/* No server yet: IDs -1, no vector fds (a new handle). */
void mnic_ivsh_init(struct mnic_dev *dev);
/* Close our vector fds and forget our ID and slot without touching the
 * BAR (a reconnect: the old server frees the ID, a later host the slot);
 * async-signal-safe. */
void mnic_ivsh_forget(struct mnic_dev *dev);
/* A new fd (dup) that becomes readable when the NIC raises vector (>= 1)
 * for us, or -ENOSPC past the vectors the server gave. */
int mnic_ivsh_vector_fd(struct mnic_dev *dev, uint16_t vector);

/* ---- dev.c --------------------------------------------------------------- */
/* mnic_cmd as context `issuer`, without making sure the handle has its
 * context first (ctx.c uses it for the commands that make contexts). */
int mnic_cmd_as(struct mnic_dev *dev, uint16_t issuer, const void *in, uint32_t in_len,
		void *out, uint32_t out_len, struct mnic_cmd_result *res);

/* ---- ctx.c ---------------------------------------------------------------- */
/* A tenant handle without its context (first use, or rebound to another
 * NIC by a migration): allocate it, or find it again by owner tag.  0 for
 * a management handle.  Caller does not hold dev->lock. */
int mnic_ctx_ensure(struct mnic_dev *dev);
/* Before an allocation: a tenant's context, or the management handle's
 * memory range (a context of owner tag MNIC_OWNER_MGMT_MEM, so that its
 * allocator never overlaps a tenant's). */
int mnic_mem_ensure(struct mnic_dev *dev);
/* Management handle: view the management memory range [off, +size) of
 * this device, allocating it there if it is not (a migration's target). */
int mnic_mgmt_mem_at(struct mnic_dev *dev, uint64_t off, uint64_t size);
/* Point the handle's user view at [off, off + size) of the user area. */
int mnic_ctx_set_range(struct mnic_dev *dev, uint64_t off, uint64_t size);
/* mnic_close: free the handle's own context (every object in it). */
void mnic_ctx_release(struct mnic_dev *dev);
int mnic_set_err(struct mnic_dev *dev, enum mnic_err_layer layer, int err);
/* mnic_set_err with the reason in words (mnic_strerror_last appends it). */
__attribute__((format(printf, 4, 5))) int mnic_set_err_detail(struct mnic_dev *dev,
							    enum mnic_err_layer layer, int err,
							    const char *fmt, ...);
/* A reply that passed the transport but breaks the ABI: layer REPLY,
 * -EBADMSG (returned). */
int mnic_reply_err(struct mnic_dev *dev);
void mnic_track_qp(struct mnic_dev *dev, struct mnic_qp *qp, int add);
int mnic_errno_of_status(uint8_t status, uint32_t syndrome);

/* ---- mem.c --------------------------------------------------------------- */
/* The allocator over an area mapped at `user` (window address or IOVA
 * user_off, user_size bytes); the pure core used by mnic_alloc and the
 * unit tests.  Each call takes the area's lock word. */
int mnic_umem_alloc(uint8_t *user, uint64_t user_off, uint64_t user_size, uint64_t size,
		    uint64_t align, uint64_t *addr);
int mnic_umem_free(uint8_t *user, uint64_t user_off, uint64_t user_size, uint64_t addr);
/* Set the owner (kind, handle) of the allocation at addr; mtt != 0 also
 * records the MTT it is registered with (kind MNIC_OBJ_NONE: mtt only). */
int mnic_umem_bind(uint8_t *user, uint64_t user_off, uint64_t user_size, uint64_t addr,
		   uint32_t kind, uint32_t handle, uint32_t mtt);
/* Free every allocation owned by (kind, handle); their MTTs (up to
 * max_mtts) into mtts.  Returns how many were freed or a negative errno. */
int mnic_umem_release(uint8_t *user, uint64_t user_off, uint64_t user_size, uint32_t kind,
		      uint32_t handle, uint32_t *mtts, uint32_t max_mtts, uint32_t *n_mtts);
int mnic_umem_stats(uint8_t *user, uint64_t user_off, uint64_t user_size,
		    struct mnic_mem_stats *st);
int mnic_umem_reset(uint8_t *user, uint64_t user_off, uint64_t user_size);
int mnic_umem_root(uint8_t *user, uint64_t user_off, uint64_t user_size, uint64_t *get,
		   const uint64_t *set);
/* The handle's area: record the MTT of an allocation; free what an
 * object owns (and DESTROY_MTT its MTTs); returns how many were freed. */
int mnic_mem_set_mtt(struct mnic_dev *dev, uint64_t addr, uint32_t mtt);
int mnic_mem_release(struct mnic_dev *dev, enum mnic_obj_kind kind, uint32_t handle);

/* A lock word holding the holder's process id; a holder that is gone is
 * taken over.  Acquire / release ordering. */
int mnic_pid_lock(uint32_t *word);
void mnic_pid_unlock(uint32_t *word);

/* ---- hostmem.c: host-memory mode ------------------------------------------------ */
/* The page table at offset 0 of the host-memory file: this header, then
 * one struct mnic_hm_page per 4 KiB page of the file; the pages holding
 * the table are MNIC_HM_RESERVED. */
#define MNIC_HM_MAGIC 0x4d454d48u      /* "HMEM" */
#define MNIC_HM_RESERVED 0xffffffffu
struct mnic_hm_hdr {
	uint32_t magic;
	uint32_t version;                 /* 1 */
	uint32_t npages;                  /* pages of the aperture */
	uint32_t table_pages;             /* pages [0, table_pages) hold the table */
	uint32_t lock;                    /* mnic_pid_lock */
	uint32_t free_pages;
	uint8_t reserved[40];
};
_Static_assert(sizeof(struct mnic_hm_hdr) == 64, "hostmem table header");
struct mnic_hm_page {
	uint32_t owner;                   /* owner tag; 0 free */
	uint32_t vpage;                   /* its page index in the owner's VA range */
};
_Static_assert(sizeof(struct mnic_hm_page) == 8, "hostmem page entry");

/* Pure core over a mapped table (unit tests). */
uint32_t mnic_hm_table_pages(uint64_t size);
int mnic_hm_init(struct mnic_hm_hdr *h, uint64_t size);
/* n free pages for owner, virtual index 0..n-1 in pfn[] order; shuffled
 * when shuffle_seed != 0.  All or nothing (-ENOMEM). */
int mnic_hm_take(struct mnic_hm_hdr *h, uint32_t owner, uint32_t n, uint64_t shuffle_seed,
		 uint32_t *pfn);
/* The owner's pages by virtual index; returns how many (-E2BIG > max). */
int mnic_hm_find(struct mnic_hm_hdr *h, uint32_t owner, uint32_t *pfn, uint32_t max);
/* Free the owner's pages (owner 0: every page whose owner gone() says is
 * gone); returns how many. */
int mnic_hm_release(struct mnic_hm_hdr *h, uint32_t owner, int (*gone)(uint32_t owner));
/* The device: QUERY_DEVICE once, and the file when there is an aperture. */
int mnic_hostmem_attach(struct mnic_dev *dev);
void mnic_hostmem_detach(struct mnic_dev *dev);
/* Make the handle's view `bytes` of pages owned by `owner` (keep: the
 * owner's pages if it has some, at their previous VA). */
int mnic_hostmem_view(struct mnic_dev *dev, uint32_t owner, uint64_t bytes, int keep);
void mnic_hostmem_release(struct mnic_dev *dev, uint32_t owner);
int mnic_hostmem_reap(struct mnic_dev *dev);
/* An MTT for [addr, addr + len) of the view (4 KiB pages); *mtt = 0 in
 * physical mode.  kmem mode: any range of this process, pinned by the
 * module. */
int mnic_hostmem_mtt(struct mnic_dev *dev, uint64_t addr, uint64_t len, uint32_t *mtt);
/* Migration in host-memory mode (docs/libmnic.md "Migration with host
 * memory"): `owner`'s pages copied from src's aperture onto pages newly
 * taken for it in dst's (*mv; npages 0: nothing to move, or physical mode
 * on both; -EXDEV only one has an aperture, -EEXIST the owner has pages on
 * dst already, -EUCLEAN no allocator header); refill: every MTT record of
 * the image written with the target's pages (the restored context is
 * Stopped); unmove: the target's pages handed back (abort); move_done: the
 * page list freed, the pages kept. */
int mnic_hostmem_move(struct mnic_dev *src, struct mnic_dev *dst, uint32_t owner,
		      struct mnic_hm_move *mv);
int mnic_hostmem_refill(struct mnic_dev *dst, struct mnic_hm_move *mv, const uint8_t *img,
			uint32_t len);
void mnic_hostmem_unmove(struct mnic_dev *dst, struct mnic_hm_move *mv);
void mnic_hostmem_move_done(struct mnic_hm_move *mv);
/* mnic_reopen_inplace's host-memory part (async-signal-safe): the view's
 * pages from "<bar>.hostmem", the source's released. */
int mnic_hostmem_reopen_inplace(struct mnic_dev *dev, const char *bar, size_t bar_len);
/* Kernel backend: switch to kmem mode if the NIC has a host-memory
 * aperture (called once the handle can issue commands). */
int mnic_kmem_setup(struct mnic_dev *dev);
/* Why mnic.ko refuses MNIC_IOC_REG_MEM with errno err (either sign), in
 * words; NULL for an errno it has no reason for. */
const char *mnic_kmem_refusal(int err);
/* An MTT the module made (kmem mode): MNIC_IOC_DEREG_MEM. */
int mnic_kmem_dereg(struct mnic_dev *dev, uint32_t mtt);

/* ---- datapath.c ------------------------------------------------------------ */
/* verbs.c: a ring and its doorbell record in the handle's memory, freed
 * (a refused create) or bound to its object; the create and destroy
 * commands.  event.c builds its EQs with them. */
int mnic_queue_alloc(struct mnic_dev *dev, uint32_t entries, uint32_t esize,
		     struct mnic_queue_desc *q);
void mnic_queue_free(struct mnic_dev *dev, struct mnic_queue_desc *q);
void mnic_queue_bind(struct mnic_dev *dev, const struct mnic_queue_desc *q,
		     enum mnic_obj_kind kind, uint32_t handle);
int mnic_create_cmd(struct mnic_dev *dev, const void *in, uint32_t in_len, uint32_t *handle);
int mnic_handle_cmd(struct mnic_dev *dev, uint16_t opcode, uint32_t handle);
/* event.c: the CQ goes (destroyed): off its channel's list. */
void mnic_comp_channel_unlink(struct mnic_cq *cq);

#endif
