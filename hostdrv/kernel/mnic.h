/* mnic.ko private header: the device, its counters, the parts shared by
 * mnic_main.c (PCI, /dev/mnicN, ioctl, mmap), mnic_ctx.c (a firmware
 * context per open file, the privilege policy), mnic_cmd.c (command queue),
 * mnic_mem.c (user memory pinned into MTTs),
 * mnic_sysfs.c (health and counters), mnic_devlink.c (devlink info,
 * flash and the firmware health reporter) and mnic_ib.c (the RDMA
 * device). */
#ifndef MNIC_KMOD_H
#define MNIC_KMOD_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/workqueue.h>

#include "mnic/abi.h"
#include "mnic/cmd.h"
#include "mnic/ioctl.h"

#define MNIC_BAR                2      /* ivshmem-plain: BAR0 registers, BAR2 shared memory */
#define MNIC_CMDQ_LOG_SIZE      MNIC_CMDQ_MAX_LOG_SIZE
#define MNIC_CMDQ_ADDR          0u     /* window address of the ring (driver area) */
/* Mailbox blocks that fit after the ring in the driver area: input chain
 * first, output chain after it (one command in flight). */
#define MNIC_MBOX_MAX ((MNIC_DRIVER_AREA_SIZE - MNIC_CMD_MBOX_AREA) / MNIC_CMD_MBOX_SIZE)
#define MNIC_IRQ_RECHECK_MS     10u    /* interrupt-driven waits re-read this often */
#define MNIC_CMD_TIMEOUT_DEFAULT_MS 60000u
#define MNIC_CMD_TIMEOUT_MAX_MS     600000u
/* DEALLOC_CONTEXT from release and remove: bounded, remove's shorter (a
 * firmware that stopped answering must not hold remove for long). */
#define MNIC_CTX_RELEASE_TIMEOUT_MS 10000u
#define MNIC_CTX_REMOVE_TIMEOUT_MS  2000u

/* Driver counters (sysfs counters/<name>): every refusal has one. */
#define MNIC_KCOUNTERS(X)                                                     \
	X(cmds)                 /* commands handed to the firmware */         \
	X(cmd_ok)               /* ... answered with delivery OK */           \
	X(cmd_delivery_err)     /* ... answered with a delivery error */      \
	X(cmd_timeout)          /* ... not answered in time */                \
	X(cmd_interrupted)      /* ... caller killed while waiting */         \
	X(cmd_fw_failed)        /* ... firmware went FAILED while waiting */  \
	X(cmd_busy)             /* refused: an earlier command still owned */ \
	X(refused_struct)       /* ioctl size/version/reserved wrong */       \
	X(refused_len)          /* in_len/out_len out of range */             \
	X(refused_opcode)       /* opcode not in mnic/cmd.h */                \
	X(refused_state)        /* device not READY or queue not RUNNING */   \
	X(copy_fault)           /* copy_from_user/copy_to_user failed */      \
	X(mmap_refused)         /* mmap offset/length/flags wrong */          \
	X(mmap_refused_write)   /* init segment mapped writable */            \
	X(refused_priv)         /* privileged opcode without CAP_NET_ADMIN */ \
	X(refused_ctx_opcode)   /* ALLOC/DEALLOC_CONTEXT from user space */   \
	X(ctx_alloc)            /* contexts allocated (ALLOC_CONTEXT OK) */   \
	X(ctx_alloc_failed)     /* ALLOC_CONTEXT failed */                    \
	X(ctx_bad_reply)        /* ALLOC_CONTEXT answer outside the window */ \
	X(ctx_dealloc)          /* contexts freed (DEALLOC_CONTEXT OK) */     \
	X(ctx_dealloc_failed)   /* DEALLOC_CONTEXT failed: context leaked */ \
	X(flash_ok)             /* devlink flash: written and verified */     \
	X(flash_refused_image)  /* ... image refused by the driver's checks */ \
	X(flash_refused_fw)     /* ... refused by the NIC (status != OK) */   \
	X(flash_aborted)        /* ... command lost, signal or removal */     \
	X(flash_busy)           /* ... another flash in progress */           \
	X(health_reports)       /* firmware errors reported to devlink */     \
	X(health_recovered)     /* ... and back to healthy */                 \
	X(refused_mtt)          /* MTT opcode, or an mtt not the file's */    \
	X(refused_phys)         /* physical mode on a NIC with host memory */ \
	X(reg_ok)               /* MNIC_IOC_REG_MEM registered */             \
	X(reg_failed)           /* ... failed after its checks */             \
	X(reg_refused_range)    /* ... length 0, wraps, > max_reg_mib */      \
	X(reg_refused_memlock)  /* ... past RLIMIT_MEMLOCK */                 \
	X(reg_refused_pin)      /* ... pages not pinnable (not writable...) */\
	X(reg_no_aperture)      /* ... the NIC has no host-memory aperture */ \
	X(reg_bad_reply)        /* ... CREATE_MTT answered the wrong shape */ \
	X(dereg_ok)             /* MNIC_IOC_DEREG_MEM done */                 \
	X(dereg_refused)        /* ... not the file's, or the MTT in use */   \
	X(mem_pages_pinned)     /* pages pinned, in total */                  \
	X(mem_pages_unpinned)   /* ... unpinned again */                      \
	X(mem_pages_leaked)     /* ... left pinned: the NIC may still use them */ \
	X(irq_cmd)              /* MSI-X vector 0: the NIC answered a command */ \
	X(irq_rings)            /* Doorbell register writes to the NIC */ \
	X(ring_data)            /* MNIC_IOC_RING: an application's data-path ring */ \
	X(ring_refused)         /* ... refused: no doorbell register (polled) */ \
	X(ib_ucontext)          /* RDMA ucontexts allocated (mnic_ib.c) */     \
	X(ib_uar)               /* ... given the Doorbell register page too */ \
	X(ib_mig_dump)          /* ucontexts dumped (MNIC_IB_METHOD_DUMP) */   \
	X(ib_mig_dump_failed)   /* ... dumps refused or failed */             \
	X(ib_mig_abort)         /* ... dumps aborted (resumed in place) */    \
	X(ib_mig_restore)       /* ucontexts restored from an image */        \
	X(ib_mig_restore_failed) /* ... restores refused or failed */         \
	X(ib_mig_resume)        /* restored ucontexts resumed (pages pinned) */ \
	X(ib_mig_resume_failed) /* ... resumes refused or failed */           \
	X(ib_mig_refused)       /* restore shells refused (not in the image) */ \
	X(ib_pd)                /* ... PDs allocated (ALLOC_PD OK) */          \
	X(ib_pd_failed)         /* ... ALLOC_PD failed */                     \
	X(ib_pd_dealloc_failed) /* ... DEALLOC_PD failed: left to the context */ \
	X(ib_refused_udata)     /* ... driver udata given where none is read */ \
	X(ib_refused_kernel)    /* ... a kernel (udata-less) PD asked for */   \
	X(ib_refused_mmap)      /* ... mmap of an offset/length not handed out */ \
	X(ib_refused_port)      /* ... a port or pkey index that is not there */ \
	X(ib_query_failed)      /* ... QUERY_DEVICE for the ib_device failed */ \
	X(ib_mr)                /* ... user MRs registered (reg_user_mr) */    \
	X(ib_mr_failed)         /* ... reg_user_mr failed after its checks */  \
	X(ib_cq)                /* ... CQs created */                         \
	X(ib_cq_failed)         /* ... create_cq failed after its checks */   \
	X(ib_cq_resize)         /* ... resize_cq done (RESIZE_CQ) */          \
	X(ib_cq_resize_failed)  /* ... resize_cq refused or failed */         \
	X(ib_qp)                /* ... QPs created */                         \
	X(ib_qp_failed)         /* ... create_qp failed after its checks */   \
	X(ib_refused_qp_attr)   /* ... a QP type, cap or attribute not served */ \
	X(ib_ah)                /* ... AHs created */                         \
	X(ib_refused_ah)        /* ... an AH without a RoCEv2 IPv4 GID */     \
	X(ib_destroy_failed)    /* ... a destroy the firmware failed: pages kept */ \
	X(ib_pages_orphaned)    /* ... pinned pages held until the context goes */ \
	X(ib_pages_leaked)      /* ... left pinned: the context did not go */ \
	X(ib_events)            /* ... completion events handed to a CQ's channel */ \
	X(ib_event_dropped)     /* ... an EQE naming no CQ with a channel */ \
	X(ib_eq_irqs)           /* ... MSI-X interrupts of the EQ vector */   \
	X(ib_eq_polls)          /* ... EQ polls without one (ivshmem-plain) */ \
	X(net_carrier_on)       /* netdev mnicN: carrier on (firmware READY) */ \
	X(net_carrier_off)      /* ... carrier off (firmware not serving) */  \
	X(net_tx_no_queue)      /* ... frame dropped: no host Ethernet queue */ \
	X(net_tx_bad_len)       /* ... frame dropped: longer than a buffer */ \
	X(net_tx_refused)       /* ... the NIC completed a frame with an error */ \
	X(net_rx_bad_len)       /* ... RX completion with an impossible length */ \
	X(net_rx_nomem)         /* ... no skb for a received frame: dropped */ \
	X(net_irq)              /* ... MSI-X vector 1: completions written */ \
	X(net_queue_create)     /* ... CREATE_ETHQ done (interface up) */     \
	X(net_queue_failed)     /* ... CREATE/DESTROY_ETHQ or its MTT failed */ \
	X(net_queue_leaked)     /* ... buffers kept: the NIC may still write them */ \
	X(gid_add)              /* RoCE GID table: GID pushed (SET_GID) */    \
	X(gid_del)              /* ... cleared in the firmware */             \
	X(gid_ipv6)             /* ... of them IPv6 GIDs (the others IPv4-mapped) */ \
	X(gid_failed)           /* ... SET_GID failed or index out of range */

/* The ivshmem register BAR (QEMU docs/specs/ivshmem-spec.rst "Register
 * BAR0"): mnic_irq.c rings through it, mnic_ib.c maps its page to
 * applications that ring the NIC themselves. */
#define MNIC_IRQ_REG_BAR        0
#define MNIC_IRQ_REG_IVPOSITION 0x08
#define MNIC_IRQ_REG_DOORBELL   0x0c
#define MNIC_IRQ_REG_LEN        256

#define MNIC_KCNT_ENUM_(name) MNIC_KCNT_##name,
enum mnic_kcounter { MNIC_KCOUNTERS(MNIC_KCNT_ENUM_) MNIC_KCNT_NUM };
#undef MNIC_KCNT_ENUM_

struct mnic_kdev {
	struct kref ref;                   /* probe + every open file */
	struct pci_dev *pdev;
	void __iomem *bar;                 /* BAR2, write-combining (mnic_main.c) */
	resource_size_t bar_phys;
	resource_size_t bar_len;
	struct mnic_init_seg __iomem *seg; /* BAR offset 0 */
	void __iomem *window;              /* BAR + MNIC_DMA_WINDOW_OFFSET */
	int id;                            /* N of /dev/mnicN */
	char name[16];
	struct miscdevice misc;

	/* Serialises removal against ioctl and mmap: they hold it for
	 * reading, remove takes it for writing and sets dead. */
	struct rw_semaphore remove_lock;
	bool dead;
	bool removing;                     /* remove started: waiting commands give up */

	struct mutex cmd_lock;             /* one command in flight */
	u32 pi;                            /* next cmdq producer index */
	u8 token;
	bool stuck;                        /* entry stuck_slot may still be HW-owned */
	u32 stuck_slot;

	/* Open files (struct mnic_file.node), so that remove can free the
	 * contexts of files that outlive it. */
	struct mutex files_lock;
	struct list_head files;

	/* devlink (mnic_devlink.c): registered last in probe, first out in
	 * remove; the health poller reads the init segment. */
	struct devlink *devlink;
	struct devlink_health_reporter *fw_reporter;
	struct mutex flash_lock;           /* one devlink flash at a time */
	struct delayed_work health_work;
	u64 hb_last;                       /* heartbeat the poller saw last */
	unsigned long hb_moved;            /* jiffies when it last moved */
	bool health_bad;                   /* an error is reported, not yet cleared */

	/* The NIC's host-memory aperture (QUERY_DEVICE at probe): 0, it
	 * reaches only its BAR window; else it DMAs to this host's physical
	 * memory through MTTs (mnic_mem.c). */
	u64 hostmem_size;

	/* Doorbells and interrupts (mnic_irq.c): with an ivshmem-doorbell,
	 * regs is BAR0 and, once irq_ok, commands ring the NIC and wait on
	 * cmd_wq for MSI-X vector 0; otherwise polled. */
	void __iomem *regs;
	wait_queue_head_t cmd_wq;
	bool irq_ok;
	int irq_slot;                      /* our irq_host_ids slot */
	int irq_nvec;                      /* MSI-X vectors allocated (1 to 3) */
	u32 irq_own;                       /* MNIC_IRQ_ID_VALID | our peer ID */
	u32 irq_ring;                      /* Doorbell value: NIC << 16 | 0 */
	/* BAR0 alone in its page (mnic_irq.c, user_doorbell): applications
	 * may ring through their own mapping of it (mnic_ib.c) */
	bool uar_ok;
	phys_addr_t uar_phys;
	char irq_name[32];

	/* The RDMA device mnicN (mnic_ib.c): registered last in probe,
	 * unregistered first in remove. */
	struct mnic_ib_dev *ib;
	/* The Ethernet netdev mnicN (mnic_netdev.c): registered before the
	 * RDMA device, which binds it, unregistered after it. */
	struct mnic_netdev *net;
	u32 max_frame;                     /* QUERY_DEVICE: the port's largest frame */

	atomic64_t cnt[MNIC_KCNT_NUM];
};

static inline void mnic_count(struct mnic_kdev *d, enum mnic_kcounter c)
{
	atomic64_inc(&d->cnt[c]);
}

extern const char *const mnic_kcounter_names[MNIC_KCNT_NUM];

/* One open file of /dev/mnicN: its firmware context (mnic/cmd.h
 * "contexts"), allocated on first need, freed on release. */
struct mnic_file {
	struct mnic_kdev *d;               /* holds a reference */
	struct address_space *mapping;     /* of its inode: remove zaps the mappings */
	struct list_head node;             /* in d->files, under d->files_lock */
	struct mutex ctx_lock;             /* allocation and release of the context */
	bool has_ctx;
	u16 ctx;                           /* 1 .. MNIC_CTX_MAX */
	u64 ua_offset;                     /* window address of its user-area range */
	u64 ua_size;
	struct mutex mem_lock;             /* mems (taken after ctx_lock) */
	struct list_head mems;             /* registrations (mnic_mem.c) */
};

/* A command in kernel memory (mnic_cmd.c).  User input is copied in
 * whole before anything is checked, so what is checked is what the
 * firmware gets. */
#define MNIC_KCMD_F_MODULE 1u  /* the module's own: no signal ends the wait, nor
				  remove (it runs the command itself); a stuck
				  entry is waited out */
struct mnic_kcmd {
	void *in;
	u32 in_len;
	void *out;
	u32 out_len;
	u32 timeout_ms;                    /* 0: MNIC_CMD_TIMEOUT_DEFAULT_MS */
	u32 flags;                         /* MNIC_KCMD_F_* */
	u8 delivery;                       /* out: enum mnic_cmd_delivery */
};

/* mnic_cmd.c */
int mnic_cmdq_enable(struct mnic_kdev *d);
void mnic_cmdq_disable(struct mnic_kdev *d);
int mnic_cmd_run(struct mnic_kdev *d, struct mnic_kcmd *c);
long mnic_ioctl_cmd(struct mnic_file *mf, struct mnic_ioc_cmd __user *uarg);
const char *mnic_opcode_name(u16 opcode);

/* A firmware context and its user-area range (window addresses). */
struct mnic_fwctx {
	u16 ctx;                           /* 1 .. MNIC_CTX_MAX */
	u64 ua_offset;
	u64 ua_size;
};

/* mnic_ctx.c */
int mnic_ctx_alloc(struct mnic_kdev *d, u64 want_offset, u64 want_size, struct mnic_fwctx *c);
int mnic_ctx_dealloc(struct mnic_kdev *d, u16 ctx, u32 timeout_ms);
int mnic_file_ctx(struct mnic_file *mf, u64 want_offset, u64 want_size);
void mnic_file_ctx_free(struct mnic_file *mf, u32 timeout_ms);
void mnic_files_ctx_free(struct mnic_kdev *d);
long mnic_ioctl_ctx(struct mnic_file *mf, struct mnic_ioc_ctx __user *uarg);
int mnic_cmd_policy(struct mnic_file *mf, u8 *in, u32 in_len);
int mnic_module_cmd(struct mnic_kdev *d, void *in, u32 in_len, void *out, u32 out_len,
		    u32 timeout_ms);

/* mnic_mem.c */
long mnic_ioctl_reg_mem(struct mnic_file *mf, struct mnic_ioc_reg_mem __user *uarg);
long mnic_ioctl_dereg_mem(struct mnic_file *mf, struct mnic_ioc_dereg_mem __user *uarg);
int mnic_mem_dereg(struct mnic_file *mf, u32 mtt);
int mnic_mem_cmd_check(struct mnic_file *mf, const u8 *in, u32 in_len);
void mnic_mem_forget(struct mnic_file *mf, bool dma_stopped);
/* The MTT and MR commands in context ctx (the RDMA device's objects use
 * them too).  mnic_mtt_create: CREATE_MTT over npages PAGE_SIZE pages
 * (next_page gives their host-physical addresses in order) and WRITE_MTT;
 * -EREMOTEIO when a failure could not be undone (the MTT may remain: keep
 * its pages pinned). */
int mnic_mtt_create(struct mnic_kdev *d, u16 ctx, u64 iova, u64 length, u32 npages,
		    u64 (*next_page)(void *it), void *it, u32 timeout_ms, u32 *mtt);
int mnic_mtt_destroy(struct mnic_kdev *d, u16 ctx, u32 mtt, u32 timeout_ms);
/* WRITE_MTT of an existing MTT's npages entries (a restored MTT's refill). */
int mnic_mtt_write(struct mnic_kdev *d, u16 ctx, u32 mtt, u32 npages,
		   u64 (*next_page)(void *it), void *it, u32 timeout_ms);
int mnic_mr_reg_cmd(struct mnic_kdev *d, u16 ctx, u32 pd, u32 access, u64 addr, u64 length,
		    u32 mtt, u32 timeout_ms, u32 *lkey, u32 *rkey);
int mnic_mr_dereg_cmd(struct mnic_kdev *d, u16 ctx, u32 lkey, u32 timeout_ms);

/* mnic_devlink.c */
int mnic_devlink_register(struct mnic_kdev *d);
void mnic_devlink_unregister(struct mnic_kdev *d);

/* mnic_ib.c: the RDMA device (ib_core, ib_uverbs) */
int mnic_ib_register(struct mnic_kdev *d);
void mnic_ib_unregister(struct mnic_kdev *d);

/* mnic_netdev.c: the Ethernet netdev, and the RoCE GID table it feeds */
struct ib_gid_attr;
int mnic_netdev_register(struct mnic_kdev *d);
void mnic_netdev_unregister(struct mnic_kdev *d);
struct net_device *mnic_netdev_of(struct mnic_kdev *d);
int mnic_netdev_add_gid(struct mnic_kdev *d, const struct ib_gid_attr *attr);
int mnic_netdev_del_gid(struct mnic_kdev *d, const struct ib_gid_attr *attr);

/* mnic_sysfs.c */
extern const struct attribute_group *mnic_attr_groups[];
const char *mnic_state_name(u32 state);

/* mnic_irq.c: MSI-X and the Doorbell register of an ivshmem-doorbell
 * (after the init segment is READY, before the first command: 0 also
 * when the BAR is an ivshmem-plain, which stays polled). */
int mnic_irq_init(struct mnic_kdev *d);
void mnic_irq_exit(struct mnic_kdev *d);
/* Ring the NIC after the stores of a command (no-op when polled). */
void mnic_irq_ring(struct mnic_kdev *d);
/* MNIC_IOC_RING: 0, or -EOPNOTSUPP without a doorbell register. */
int mnic_irq_ring_data(struct mnic_kdev *d);
/* The host Ethernet queues' vector (MNIC_IRQ_VEC_NET): its Linux irq, or
 * -ENXIO (polled, or the function has one vector). */
#define MNIC_IRQ_VEC_NET 1
int mnic_irq_net_vector(struct mnic_kdev *d);
/* The RDMA device's event queues' vector (after the netdev's): its Linux
 * irq, or -ENXIO (polled, or the function has fewer vectors). */
#define MNIC_IRQ_VEC_EQ (MNIC_IRQ_VEC_NET + 1)
int mnic_irq_eq_vector(struct mnic_kdev *d);

#endif
