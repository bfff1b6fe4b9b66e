/* libmnic internals: the device handle and the pieces the backends share.
 * Not installed; tests include it to reach the pure helpers. */
#ifndef LIBMNIC_INT_H
#define LIBMNIC_INT_H

#include <pthread.h>
#include <stdint.h>

#include "mnic/libmnic.h"

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
	} kinfo;                          /* kernel backend: MNIC_IOC_INFO at open */
	pthread_mutex_t lock;             /* commands of this handle */
	uint32_t timeout_ms;
	uint8_t token;
	int cmdq_ready;                   /* BAR backend: cmdq checked/enabled */
	struct mnic_cmd_result last;
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

/* ---- datapath.c ------------------------------------------------------------ */
/* Poll a CQ ring directly (pure core of mnic_poll_cq, used by unit tests):
 * ring of `size` CQEs, consumer index *ci.  Returns CQEs copied. */
int mnic_cq_ring_poll(const volatile struct mnic_cqe *ring, uint32_t size, uint32_t *ci, int n,
		      struct mnic_cqe *out);

#endif
