/* Migration of an RDMA ucontext (issue 17, docs/migration-howto.md "CRIU"):
 * the driver methods mnic.ko adds to the uverbs DEVICE object, and the
 * object table a dump returns, between mnic.ko (hostdrv/kernel/mnic_ib_mig.c),
 * the provider (which notes its event fds) and the CRIU plugin
 * (hostdrv/criu/).
 *
 * A method is one RDMA_VERBS_IOCTL on the uverbs fd (object
 * UVERBS_OBJECT_DEVICE, method MNIC_IB_METHOD_*, two attributes: the
 * request struct in, the response struct out).  Buffers larger than an
 * attribute carries (its length is 16 bits) are named by address and
 * length inside the request; the module copies them itself.
 *
 *   NOTE_FD     the provider, after GET_CONTEXT: the process's number of
 *               the context's async event fd (informational: it only
 *               names files in the dump's table).
 *   DUMP        DUMP_CONTEXT of the ucontext's firmware context (its QPs
 *               Stopped, peers get NAK_STOPPED) -> the image and the
 *               object table.
 *   ABORT       ABORT_DUMP: the Stopped QPs resume in place.
 *   RESTORE     on a fresh ucontext: RESTORE_OBJECT of the image (with a
 *               peer-address override); the objects then get their uverbs
 *               handles by ordinary create verbs whose udata ends with a
 *               struct mnic_ib_restore_tail naming the restored object
 *               (and filler PDs, MNIC_IB_RESTORE_FILLER, to reach the
 *               dumped handle numbers); their memory is pinned later.
 *   RESUME      pins every restored object's memory from the address space
 *               of the process that issued RESTORE (CRIU calls it once the
 *               process's memory is in place), refills the MTTs and issues
 *               RESUME_CONTEXT.
 *
 * Little-endian, fixed-width; every size pinned.
 */
#ifndef MNIC_IB_MIG_H
#define MNIC_IB_MIG_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

/* uverbs driver namespace (ib_user_ioctl_cmds.h UVERBS_ID_DRIVER_NS) */
#define MNIC_IB_NS                  (1u << 12)
enum mnic_ib_methods {
	MNIC_IB_METHOD_NOTE_FD = MNIC_IB_NS,
	MNIC_IB_METHOD_DUMP,
	MNIC_IB_METHOD_ABORT,
	MNIC_IB_METHOD_RESTORE,
	MNIC_IB_METHOD_RESUME,
};
enum mnic_ib_method_attrs {
	MNIC_IB_ATTR_REQ = MNIC_IB_NS,
	MNIC_IB_ATTR_RESP,
};

#define MNIC_IB_MIG_VERSION         1u

struct mnic_ib_mig_req {
	uint32_t version;           /* MNIC_IB_MIG_VERSION */
	int32_t async_fd;           /* NOTE_FD */
	uint64_t image_addr;        /* DUMP: room for the image; RESTORE: the image */
	uint32_t image_len;
	uint32_t table_len;         /* DUMP: room (bytes); RESTORE: unused (0) */
	uint64_t table_addr;        /* DUMP: room for the object table */
	uint32_t old_dip;           /* RESTORE: peer-address override (0: none) */
	uint32_t new_dip;
	uint8_t new_dmac[6];
	uint8_t reserved[10];
};
_Static_assert(sizeof(struct mnic_ib_mig_req) == 56, "mig req");

struct mnic_ib_mig_resp {
	uint32_t image_len;         /* DUMP: bytes of image (or needed, -ENOSPC) */
	uint32_t n_objects;         /* DUMP: table entries written */
	uint32_t ctx;               /* the firmware context */
	int32_t async_fd;           /* DUMP: as noted, -1 never */
	uint64_t db_addr;           /* DUMP: where the doorbell page was last mapped (0: never) */
	uint64_t db_mmap_offset;    /* its mmap offset */
	uint64_t uar_addr;          /* the register page's, 0: never mapped */
	uint64_t uar_mmap_offset;
	uint32_t pages;             /* RESUME: pages pinned */
	uint32_t reserved;
	uint32_t objects[6];        /* DUMP: per record type PD MR CQ SRQ QP QP_SRQ */
	uint32_t bytes[6];          /* ... and their image bytes (mnic/cmd.h dump_out) */
};
_Static_assert(sizeof(struct mnic_ib_mig_resp) == 104, "mig resp");

/* One object of the dumped ucontext: what the restore needs to recreate
 * it with the same uverbs handle, user handle, firmware identity and
 * memory.  Handles of other objects are uverbs handles. */
enum mnic_ib_obj_kind {
	MNIC_IB_OBJ_PD = 1,
	MNIC_IB_OBJ_MR = 2,
	MNIC_IB_OBJ_CQ = 3,
	MNIC_IB_OBJ_QP = 4,
};
struct mnic_ib_mig_obj {
	uint32_t kind;              /* enum mnic_ib_obj_kind */
	uint32_t handle;            /* uverbs handle (ib_uobject id) */
	uint64_t user_handle;       /* CQ, QP: the application's */
	uint32_t fw;                /* firmware: PD handle, lkey, CQ handle, QPN */
	uint32_t pd;                /* MR, QP: the PD's uverbs handle */
	uint64_t addr;              /* MR: start; CQ, QP: buffer (mnic/ib_abi.h) */
	uint64_t len;               /* MR: length; CQ, QP: buffer length */
	uint64_t iova;              /* MR: virt_addr */
	uint32_t access;            /* MR: IB_ACCESS_* */
	uint32_t cqe;               /* CQ: entries asked (ibv cqe) */
	uint32_t entries;           /* CQ: ring entries; QP: SQ entries */
	uint32_t rq_entries;        /* QP */
	uint32_t dbrec_off;         /* CQ; QP: SQ record */
	uint32_t rq_off;            /* QP */
	uint32_t rq_dbrec_off;      /* QP */
	int32_t comp_fd;            /* CQ: the completion channel's fd as the
	                             * provider noted it, -1 none/unknown */
	uint32_t send_cq, recv_cq;  /* QP: uverbs handles */
	uint32_t max_send_sge, max_recv_sge; /* QP */
	uint32_t max_inline;        /* QP */
	uint32_t sig_all;           /* QP: 1 = IB_SIGNAL_ALL_WR */
	uint32_t has_channel;       /* CQ: created with a completion channel */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_ib_mig_obj) == 112, "mig obj");

/* The tail after a create verb's usual driver request (alloc_pd and
 * reg_mr have none): the provider appends it to create_cq with handle 0
 * and the completion channel's fd (the dump's table names it); a restore
 * appends it to alloc_pd, reg_mr, create_cq and create_qp with handle
 * naming the restored firmware object (PD handle, lkey, CQ handle, QPN),
 * or MNIC_IB_RESTORE_FILLER: a PD with no firmware object, only to take a
 * uverbs handle number (alloc_pd only). */
#define MNIC_IB_TAIL_MAGIC          0x4d524553u   /* "SERM" */
#define MNIC_IB_RESTORE_FILLER      0xffffffffu
struct mnic_ib_create_tail {
	uint32_t magic;             /* MNIC_IB_TAIL_MAGIC */
	uint32_t handle;            /* 0: not a restore */
	int32_t comp_fd;            /* create_cq: the channel's fd, -1 none */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_ib_create_tail) == 16, "create tail");

#ifndef __KERNEL__
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <rdma/rdma_user_ioctl_cmds.h>

/* One method on the uverbs fd: 0, or -errno (resp may be NULL). */
static inline int mnic_ib_method(int fd, uint16_t method, const struct mnic_ib_mig_req *req,
				 struct mnic_ib_mig_resp *resp)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[2];
	} c;

	memset(&c, 0, sizeof(c));
	c.hdr.length = sizeof(c);
	c.hdr.object_id = 0;   /* UVERBS_OBJECT_DEVICE */
	c.hdr.method_id = method;
	c.hdr.num_attrs = resp ? 2 : 1;
	c.attr[0].attr_id = MNIC_IB_ATTR_REQ;
	c.attr[0].len = sizeof(*req);
	c.attr[0].flags = UVERBS_ATTR_F_MANDATORY;
	c.attr[0].data = (uintptr_t)req;
	if (resp) {
		memset(resp, 0, sizeof(*resp));
		c.attr[1].attr_id = MNIC_IB_ATTR_RESP;
		c.attr[1].len = sizeof(*resp);
		c.attr[1].data = (uintptr_t)resp;
	} else {
		c.hdr.length = sizeof(c.hdr) + sizeof(c.attr[0]);
	}
	return ioctl(fd, RDMA_VERBS_IOCTL, &c) ? -errno : 0;
}
#endif

#endif
