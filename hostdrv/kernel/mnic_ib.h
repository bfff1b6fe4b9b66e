/* mnic.ko private: the RDMA device's objects, shared by mnic_ib.c (device,
 * port, ucontext, PD, mmap), mnic_ib_mr.c (user memory pinned into MTTs,
 * MRs), mnic_ib_cq.c (CQs) and mnic_ib_qp.c (QPs, AHs).  The
 * driver-private udata is mnic/ib_abi.h (shared with the provider). */
#ifndef MNIC_KMOD_IB_H
#define MNIC_KMOD_IB_H

#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "mnic.h"
#include "mnic/ib_abi.h"
#include "mnic/ib_mig.h"
#include "mnic/queues.h"

#define MNIC_IB_PORT               1
/* The module's commands for a uverbs call: bounded, so that a firmware
 * that stopped answering fails the call instead of holding it. */
#define MNIC_IB_CMD_TIMEOUT_MS     10000u

struct mnic_ib_dev {
	struct ib_device ibdev;            /* first: ib_alloc_device */
	struct mnic_kdev *d;
	/* QUERY_DEVICE at registration: the limits udata is checked against */
	u32 max_msg;
	u32 max_qp_wr;
	u32 max_cqe;
	u32 max_sge;
	/* Unregistration destroys the objects of the files still open: after
	 * the first of its commands that fails the firmware is taken as gone
	 * and the rest are only counted (as remove does for open files). */
	bool unregistering;
	bool fw_gone;
	/* completion events (mnic_ib_eq.c): the ucontexts with an EQ, read
	 * by eq_work on the EQ vector's MSI-X (eq_irq >= 0), else polled */
	struct mutex eq_list_lock;
	struct list_head eq_list;
	struct delayed_work eq_work;
	bool eq_stop;
	int eq_irq;
	char eq_irq_name[32];
};

/* The doorbell page mapping handed to a ucontext (rdma_user_mmap_entry). */
struct mnic_ib_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	phys_addr_t phys;
	bool uncached;                     /* a register page, not memory */
	u64 mapped_at;                     /* the last mmap's address (a dump names it) */
};

/* Every PD, MR, CQ and QP is on its ucontext's list (a dump walks it). */
struct mnic_ib_obj {
	struct list_head node;             /* in mnic_ib_ucontext.objs */
	u32 kind;                          /* enum mnic_ib_obj_kind */
};

/* User memory pinned by ib_umem and given to the firmware as one MTT of
 * the ucontext's firmware context (IOVA = iova). */
struct mnic_ib_umem {
	struct ib_umem *umem;
	u32 mtt;                           /* MNIC_MTT_NONE: none (yet) */
	struct list_head orphan;           /* in mnic_ib_ucontext.orphans */
	/* A restored object's memory (mnic_ib_mig.c): the MTT is the
	 * image's, pinned and written only by RESUME. */
	bool deferred;
	u64 addr, len;
	int access;
};

struct mnic_ib_ucontext {
	struct ib_ucontext ibuc;
	struct mnic_fwctx fw;              /* its firmware context and range */
	struct mnic_ib_mmap_entry *db;     /* the doorbell page */
	struct mnic_ib_mmap_entry *uar;    /* the Doorbell register's, or NULL */
	/* Pinned memory of objects whose destroy the firmware failed: the NIC
	 * may still reach it, so it is released only once DEALLOC_CONTEXT
	 * succeeded (else it stays pinned for good, ib_pages_leaked). */
	struct mutex orphan_lock;
	struct list_head orphans;
	/* its event queue (mnic_ib_eq.c): kernel pages, one MTT; the CQs
	 * bound to it by handle, under eq_lock */
	bool has_eq;
	struct page *eq_page;
	u32 eq_mtt, eq, eq_ci;
	struct mutex eq_lock;
	struct xarray cqs;
	struct list_head eq_node;          /* in mnic_ib_dev.eq_list */
	/* migration (mnic_ib_mig.c) */
	struct mutex objs_lock;
	struct list_head objs;             /* struct mnic_ib_obj */
	int async_fd;                      /* as the provider noted it, -1 */
	atomic_t n_ah;                     /* its AHs: not migratable yet */
	struct mnic_ib_mig *mig;           /* a restore in progress, or NULL */
};

struct mnic_ib_pd {
	struct ib_pd ibpd;
	struct mnic_ib_obj obj;
	struct mnic_ib_ucontext *uc;
	u16 ctx;                           /* the context it was allocated in */
	u32 pdn;
	bool filler;                       /* a restore's: no firmware object */
};

struct mnic_ib_mr {
	struct ib_mr ibmr;
	struct mnic_ib_obj obj;
	struct mnic_ib_umem mem;
	struct mnic_ib_ucontext *uc;       /* its ucontext (outlives it) */
	u64 start, length, virt;
	int access;
};

struct mnic_ib_cq {
	struct ib_cq ibcq;
	struct mnic_ib_obj obj;
	struct mnic_ib_umem mem;
	struct mnic_ib_ucontext *uc;
	u32 handle;
	u32 entries;
	bool bound;                        /* to its ucontext's EQ */
	struct mutex resize_lock;          /* one resize at a time */
	struct mnic_ib_create_cq_req req;  /* its buffer (resize_cq changes it) */
	u32 cqe;                           /* entries asked */
	int comp_fd;                       /* noted by the provider, -1 */
};

struct mnic_ib_qp {
	struct ib_qp ibqp;
	struct mnic_ib_obj obj;
	struct mnic_ib_umem mem;
	struct mnic_ib_ucontext *uc;
	u32 qpn;
	u32 sq_entries, rq_entries;
	u32 max_send_sge, max_recv_sge;
	bool sig_all;
	struct mnic_ib_create_qp_req req;  /* its buffer */
};

struct mnic_ib_ah {
	struct ib_ah ibah;
	struct mnic_ib_ucontext *uc;       /* a user AH's (a dump refuses them) */
	struct mnic_qp_attr av;            /* the address vector fields (mnic_ib_qp.c av_to_fw) */
};

static inline struct mnic_ib_dev *to_mib(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mnic_ib_dev, ibdev);
}

static inline struct mnic_ib_ucontext *to_muc(struct ib_ucontext *uc)
{
	return container_of(uc, struct mnic_ib_ucontext, ibuc);
}

static inline struct mnic_ib_pd *to_mpd(struct ib_pd *pd)
{
	return container_of(pd, struct mnic_ib_pd, ibpd);
}

static inline struct mnic_ib_cq *to_mcq(struct ib_cq *cq)
{
	return container_of(cq, struct mnic_ib_cq, ibcq);
}

static inline struct mnic_ib_qp *to_mqp(struct ib_qp *qp)
{
	return container_of(qp, struct mnic_ib_qp, ibqp);
}

static inline struct mnic_ib_ucontext *udata_muc(struct ib_udata *udata)
{
	return rdma_udata_to_drv_context(udata, struct mnic_ib_ucontext, ibuc);
}

/* mnic_ib.c */
int mnic_ib_cmd(struct mnic_ib_dev *ib, void *in, u32 in_len, void *out, u32 out_len);
int mnic_ib_destroy_cmd(struct mnic_ib_dev *ib, void *in, u32 in_len, void *out, u32 out_len);
int mnic_ib_udata_none(struct mnic_kdev *d, struct ib_udata *udata);
int mnic_ib_udata_req(struct mnic_kdev *d, struct ib_udata *udata, void *req, size_t len);
int mnic_ib_udata_resp(struct ib_udata *udata, void *resp, size_t len);
int mnic_ib_udata_tail(struct mnic_kdev *d, struct ib_udata *udata, void *req, size_t len,
		       struct mnic_ib_create_tail *tail);

/* mnic_ib_mig.c: the migration methods (mnic/ib_mig.h) and the restore
 * side of the create verbs.  mnic_ib_mig_claim: the restored object of
 * that kind and firmware handle, not claimed before, whose memory [addr,
 * +len) is exactly its MTT's (MR: also at iova; rings: ring at addr),
 * for the shell being created; on success m is set up deferred. */
extern const struct uapi_definition mnic_ib_uapi_defs[];
void mnic_ib_obj_add(struct mnic_ib_ucontext *uc, struct mnic_ib_obj *o, u32 kind);
void mnic_ib_obj_del(struct mnic_ib_ucontext *uc, struct mnic_ib_obj *o);
struct mnic_ib_mig_claim {
	u32 kind, handle;
	u64 addr, len, iova;               /* the shell's memory (MR: iova = virt) */
	u32 pd;                            /* MR, QP: the PD's firmware handle */
	u32 cq_entries;                    /* CQ */
	u64 dbrec;                         /* CQ: record address */
	u32 send_cq, recv_cq;              /* QP: firmware handles */
	u64 rq_ring;                       /* QP */
	u32 sq_entries, rq_entries;
};
int mnic_ib_mig_claim(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc,
		      const struct mnic_ib_mig_claim *c, int access, struct mnic_ib_umem *m);
void mnic_ib_mig_free(struct mnic_ib_ucontext *uc);

/* mnic_ib_mr.c: pin [addr, addr + len) (ib_umem) and make its MTT in
 * uc's firmware context (IOVA iova); release it once the objects using it are gone
 * (destroyed: the firmware confirmed; else kept as an orphan of uc). */
int mnic_ib_umem_get(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc, u64 addr, u64 len,
		     u64 iova, int access, struct mnic_ib_umem *m);
void mnic_ib_umem_put(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc,
		      struct mnic_ib_umem *m, bool destroyed);
void mnic_ib_orphans_free(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc, bool dma_stopped);
int mnic_ib_umem_refill(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc,
			struct mnic_ib_umem *m, u32 *pages);
struct ib_mr *mnic_ib_reg_user_mr(struct ib_pd *pd, u64 start, u64 length, u64 virt_addr,
				  int access, struct ib_udata *udata);
int mnic_ib_dereg_mr(struct ib_mr *mr, struct ib_udata *udata);

/* mnic_ib_cq.c */
int mnic_ib_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata);
int mnic_ib_destroy_cq(struct ib_cq *cq, struct ib_udata *udata);
int mnic_ib_resize_cq(struct ib_cq *cq, int cqe, struct ib_udata *udata);

/* mnic_ib_eq.c: completion events */
void mnic_ib_eq_init(struct mnic_ib_dev *ib);
void mnic_ib_eq_exit(struct mnic_ib_dev *ib);
int mnic_ib_eq_create(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc);
void mnic_ib_eq_destroy(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc, bool dma_stopped);
int mnic_ib_eq_bind(struct mnic_ib_dev *ib, struct mnic_ib_cq *cq);
void mnic_ib_eq_unbind(struct mnic_ib_cq *cq);

/* mnic_ib_qp.c */
int mnic_ib_create_qp(struct ib_qp *qp, struct ib_qp_init_attr *init, struct ib_udata *udata);
int mnic_ib_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int mask,
		      struct ib_udata *udata);
int mnic_ib_query_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init);
int mnic_ib_destroy_qp(struct ib_qp *qp, struct ib_udata *udata);
int mnic_ib_create_ah(struct ib_ah *ah, struct rdma_ah_init_attr *init, struct ib_udata *udata);
int mnic_ib_destroy_ah(struct ib_ah *ah, u32 flags);

#endif
