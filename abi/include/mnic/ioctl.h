/* /dev/mnicN ioctl ABI between the kernel module (hostdrv/kernel) and
 * libmnic.  Every argument struct starts with size + version: the module
 * refuses (-EINVAL) a size it does not know and a version newer than its
 * own, so old binaries keep working and new ones fail clearly.
 *
 *   MNIC_IOC_INFO    copy of the init segment identity + BAR geometry
 *   MNIC_IOC_CTX     the open file's firmware context (mnic/cmd.h
 *                    "contexts"): allocated by the first MNIC_IOC_CTX, CMD
 *                    or mmap (ANY range, the module's default size) unless
 *                    MNIC_IOC_CTX asked first for a size or an exact range
 *                    (a restore); answers with the context's id and range.
 *                    Freed (DEALLOC_CONTEXT: every object destroyed) when
 *                    the file is released, the process dying included.
 *   MNIC_IOC_CMD     execute one command (mnic/cmd.h): the module checks
 *                    the opcode against its list and the lengths, copies
 *                    the input from user memory into mailboxes, rings the
 *                    doorbell, waits for completion and copies the output
 *                    back.  Delivery errors come back in `delivery`; the
 *                    command status is in the output header.  The module
 *                    writes hdr.ctx itself (the file's context, or
 *                    MNIC_CTX_MGMT for a privileged command of a
 *                    CAP_NET_ADMIN caller); opcodes of the privileged set
 *                    from other callers are refused with -EPERM.
 *   MNIC_IOC_REG_MEM register user memory (docs/kernel-driver.md "Host
 *                    memory"): the module pins [addr, addr + length) of
 *                    the calling process (FOLL_LONGTERM), builds its page
 *                    list of host-physical addresses, CREATE_MTT +
 *                    WRITE_MTT in the file's context and, with
 *                    MNIC_REG_MEM_MR, REG_MR over it; answers the MTT
 *                    handle (for REG_MR / queue descriptors: rings) and
 *                    the keys.  Tenants never write page lists themselves:
 *                    MNIC_IOC_CMD refuses CREATE/WRITE/DESTROY_MTT, and an
 *                    mtt the module did not make for this file.
 *   MNIC_IOC_DEREG_MEM  deregister one: DEREG_MR, DESTROY_MTT, unpin.
 *                    Whatever is still registered goes when the file is
 *                    released (after its context, so no DMA is left).
 *   MNIC_IOC_RING    ring the NIC after data-path stores (db_seq): the
 *                    module writes the ivshmem-doorbell's Doorbell
 *                    register, which the doorbell page an application
 *                    maps does not hold; without one (ivshmem-plain,
 *                    info.flags lacks MNIC_INFO_F_RING) -EOPNOTSUPP, and
 *                    the firmware's poll serves db_seq.
 *   mmap             offset MNIC_MMAP_USER maps the file's own user-area
 *                    range (MNIC_IOC_CTX ua_offset/ua_size), never another
 *                    context's: rings, doorbell records and MR memory.
 *                    MNIC_MMAP_INITSEG maps the init segment page read-only
 *                    (VM_WRITE and VM_MAYWRITE cleared); MNIC_MMAP_DOORBELL
 *                    maps the doorbell page (struct mnic_db_page) writable.
 */
#ifndef MNIC_IOCTL_H
#define MNIC_IOCTL_H

#ifdef __KERNEL__
#include <linux/ioctl.h>
#include <linux/types.h>
#else
#include <stdint.h>
#include <sys/ioctl.h>
#endif

#define MNIC_IOC_VERSION 1u
#define MNIC_IOC_MAGIC 'M'

#define MNIC_MMAP_USER     0x0ull          /* user area of the DMA window */
#define MNIC_MMAP_INITSEG  0x80000000ull   /* the init-segment page, read-only */
#define MNIC_MMAP_DOORBELL 0x80010000ull   /* the doorbell page (MNIC_DB_PAGE_OFFSET) */

struct mnic_ioc_info {
	uint32_t size;                 /* sizeof(struct mnic_ioc_info) */
	uint32_t version;              /* MNIC_IOC_VERSION */
	uint32_t fw_version;
	uint32_t cmdif_rev;
	uint32_t board_id;
	uint32_t state;                /* enum mnic_dev_state */
	uint8_t mac[6];
	uint8_t reserved0[2];
	char board_name[32];
	uint64_t bar_size;
	uint64_t window_offset;        /* MNIC_DMA_WINDOW_OFFSET */
	uint64_t user_area_offset;     /* window address of mmap offset 0 */
	uint64_t user_area_size;
	uint32_t minor;                /* N of /dev/mnicN */
	uint32_t flags;                /* MNIC_INFO_F_* */
};
#define MNIC_INFO_F_RING 1u            /* MNIC_IOC_RING reaches a doorbell register */
_Static_assert(sizeof(struct mnic_ioc_info) == 104, "ioc info layout");

struct mnic_ioc_cmd {
	uint32_t size;                 /* sizeof(struct mnic_ioc_cmd) */
	uint32_t version;              /* MNIC_IOC_VERSION */
	uint64_t in_ptr;               /* user pointer to the logical input */
	uint64_t out_ptr;              /* user pointer to the logical output */
	uint32_t in_len;               /* <= MNIC_CMD_MAX_LEN */
	uint32_t out_len;              /* <= MNIC_CMD_MAX_LEN */
	uint32_t timeout_ms;           /* 0 = the module's default (60 s) */
	uint8_t delivery;              /* out: enum mnic_cmd_delivery */
	uint8_t reserved[3];
};
_Static_assert(sizeof(struct mnic_ioc_cmd) == 40, "ioc cmd layout");

/* MNIC_IOC_CTX: in ua_offset (0 = any range) and ua_size (0 = the module's
 * default); out ctx, ua_offset, ua_size of the file's context.  Asking
 * for a range once the file has a context of another range: -EBUSY. */
struct mnic_ioc_ctx {
	uint32_t size;                 /* sizeof(struct mnic_ioc_ctx) */
	uint32_t version;              /* MNIC_IOC_VERSION */
	uint64_t ua_offset;            /* in/out: window address of mmap MNIC_MMAP_USER */
	uint64_t ua_size;              /* in/out */
	uint32_t ctx;                  /* out */
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_ioc_ctx) == 32, "ioc ctx layout");

/* MNIC_IOC_REG_MEM.  addr may have any alignment: the MTT covers the
 * pages of [addr, addr + length) and its IOVA is addr itself (verbs'
 * virtual addresses).  Refusals: length 0, a range that wraps or is not
 * the caller's writable memory (-EINVAL / -EFAULT), longer than the
 * module's max_reg_mib (-E2BIG), past RLIMIT_MEMLOCK without
 * CAP_IPC_LOCK (-ENOMEM), flags or reserved bits set (-EINVAL). */
#define MNIC_REG_MEM_MR 1u             /* also REG_MR(pd, access) over the MTT */
struct mnic_ioc_reg_mem {
	uint32_t size;                 /* sizeof(struct mnic_ioc_reg_mem) */
	uint32_t version;              /* MNIC_IOC_VERSION */
	uint64_t addr;                 /* in: user virtual address = IOVA */
	uint64_t length;               /* in: bytes, > 0 */
	uint32_t flags;                /* in: MNIC_REG_MEM_* */
	uint32_t pd;                   /* in (MR): PD of the file's context */
	uint32_t access;               /* in (MR): ibv_access_flags values */
	uint32_t mtt;                  /* out: MTT handle (never MNIC_MTT_NONE) */
	uint32_t lkey, rkey;           /* out (MR); 0 without MNIC_REG_MEM_MR */
	uint32_t npages;               /* out: pages pinned (= MTT entries) */
	uint32_t page_shift;           /* out: MTT page size, 2^page_shift */
};
_Static_assert(sizeof(struct mnic_ioc_reg_mem) == 56, "ioc reg mem layout");

/* MNIC_IOC_DEREG_MEM: mtt as MNIC_IOC_REG_MEM answered.  -ENOENT: not a
 * registration of this file; -EBUSY: a queue still uses the MTT (destroy
 * it first; the pages stay pinned). */
struct mnic_ioc_dereg_mem {
	uint32_t size;                 /* sizeof(struct mnic_ioc_dereg_mem) */
	uint32_t version;              /* MNIC_IOC_VERSION */
	uint32_t mtt;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mnic_ioc_dereg_mem) == 16, "ioc dereg mem layout");

#define MNIC_IOC_INFO _IOR(MNIC_IOC_MAGIC, 1, struct mnic_ioc_info)
#define MNIC_IOC_CTX  _IOWR(MNIC_IOC_MAGIC, 3, struct mnic_ioc_ctx)
#define MNIC_IOC_CMD  _IOWR(MNIC_IOC_MAGIC, 2, struct mnic_ioc_cmd)
#define MNIC_IOC_REG_MEM   _IOWR(MNIC_IOC_MAGIC, 4, struct mnic_ioc_reg_mem)
#define MNIC_IOC_DEREG_MEM _IOW(MNIC_IOC_MAGIC, 5, struct mnic_ioc_dereg_mem)
#define MNIC_IOC_RING      _IO(MNIC_IOC_MAGIC, 6)

#endif
