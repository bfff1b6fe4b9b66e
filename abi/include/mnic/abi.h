/* The host interface ABI: BAR layout shared by the firmware, the kernel
 * driver and libmnic.  Little-endian by definition (every supported host
 * and NIC core is little-endian; the accessors are where a big-endian port
 * would swap).  Fixed-width fields, explicit padding, sizes pinned.
 *
 * BAR layout (offsets from the start of the BAR):
 *   0x0000  init segment (struct mnic_init_seg): device-written identity,
 *           state and health; host-written command-queue configuration
 *           and command doorbell.  Only the command-queue owner (kernel
 *           driver, or libmnic's BAR backend) writes it; applications of
 *           the kernel driver map it read-only.
 *   MNIC_DB_PAGE_OFFSET  the data-path doorbell page (struct mnic_db_page),
 *           alone in its page so that it can be mapped writable to
 *           applications without the init segment
 *   ..      device-owned, reserved
 *   MNIC_DMA_WINDOW_OFFSET .. end: host DMA window ("host memory").  All
 *           addresses the host hands the NIC are offsets into this window.
 *
 * Host DMA window layout (a convention between the host driver and the
 * firmware; the firmware enforces it on every address it is given):
 *   [0, MNIC_DRIVER_AREA_SIZE)   driver area: the command queue ring at 0
 *                                (MNIC_CMDQ_MAX_ENTRIES x 64 B), mailbox
 *                                blocks after it.  Owned by whoever drives
 *                                the command queue (kernel module, or
 *                                libmnic's direct backend under flock).
 *   [MNIC_USER_AREA_OFFSET, end) user area: rings, doorbell records and MR
 *                                memory of applications.  Rings, doorbell
 *                                records and MRs outside it are refused.
 *                                A live migration copies this area.
 *
 * Doorbells.  The BAR itself raises nothing; where a doorbell channel
 * exists (POSIX: mnic/dbch.h; QEMU NICs: the ivshmem-doorbell's register
 * and MSI-X, irq_nic_id / irq_host_ids below) the host rings after these
 * stores and the NIC interrupts it back; everywhere the firmware also
 * polls the init segment (docs/host-interface.md "Doorbells and
 * interrupts"):
 *   command queue: the host writes an entry, gives it to the device
 *     (ownership bit), then increments cmdq_pi; see mnic/cmd.h.
 *   data path: the host updates a queue's doorbell record (mnic/queues.h)
 *     in the user area, then increments db_page.db_seq (atomically: several
 *     host threads may ring).  A change of db_seq makes the firmware re-read the
 *     doorbell records of every live queue.
 */
#ifndef MNIC_ABI_H
#define MNIC_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>   /* uint*_t for the kernel module */
#else
#include <stdint.h>
#endif

#define MNIC_INIT_MAGIC        0x43494e4du   /* "MNIC" read as little-endian u32 */
#define MNIC_CMDIF_REV         4u   /* 2: command queue, mnic/cmd.h; 3: MTTs; 4: GIDs (IPv6) */
#define MNIC_FW_VERSION(maj, min, patch) (((maj) << 24) | ((min) << 16) | (patch))
#define MNIC_FW_VERSION_CUR    MNIC_FW_VERSION(0u, 1u, 0u)
#define MNIC_DMA_WINDOW_OFFSET 0x00100000u   /* 1 MiB of device-owned pages */
#define MNIC_DRIVER_AREA_SIZE  0x00200000u   /* window bytes owned by the cmdq driver */
#define MNIC_USER_AREA_OFFSET  MNIC_DRIVER_AREA_SIZE

/* init_seg.irq_nic_id */
#define MNIC_IRQ_ID_VALID      0x80000000u
#define MNIC_IRQ_ID_MASK       0x0000ffffu
#define MNIC_IRQ_MAX_HOSTS     8u          /* slots of irq_host_ids */

/* init_seg.cmdq_ctrl (host-written) */
#define MNIC_CMDQ_CTRL_ENABLE  1u
/* init_seg.cmdq_status (device-written) */
enum mnic_cmdq_status {
	MNIC_CMDQ_OFF = 0,          /* not configured / disabled */
	MNIC_CMDQ_RUNNING = 1,      /* configuration latched, entries served */
	MNIC_CMDQ_BAD_CONFIG = 2,   /* address/size refused: see cmdq_syndrome */
};

enum mnic_dev_state {
	MNIC_STATE_BOOTING = 1,
	MNIC_STATE_READY = 2,
	MNIC_STATE_FAILED = 3,
};

/* Health buffer: readable by the host even after a firmware fault. */
struct mnic_health {
	uint32_t fatal_reason;     /* 0 = none; board fault kind otherwise */
	uint32_t fatal_detail;
	uint64_t fatal_pc;
	uint64_t uptime_ns;
	uint64_t heartbeat;        /* incremented on every doorbell poll */
	uint64_t rx_frames;
	uint64_t tx_frames;
	uint64_t rx_dropped;
	uint64_t reserved[2];
};
_Static_assert(sizeof(struct mnic_health) == 72, "mnic_health layout");

struct mnic_init_seg {
	uint32_t magic;            /* MNIC_INIT_MAGIC once the firmware owns the BAR */
	uint32_t fw_version;       /* MNIC_FW_VERSION(major, minor, patch) */
	uint32_t cmdif_rev;        /* host refuses a mismatch */
	uint32_t board_id;         /* qemu-board descriptor board_id */
	uint32_t state;            /* enum mnic_dev_state */
	uint32_t reserved0;
	uint8_t mac[6];
	uint8_t reserved1[2];
	char board_name[32];       /* NUL-terminated */
	struct mnic_health health;
	/* ---- command queue (mlx5: cmdq_phy_addr, log_cmdq_size, cmd_dbell) */
	uint64_t cmdq_addr;        /* host: window address of the ring, 4 KiB aligned */
	uint32_t cmdq_log_size;    /* host: ring entries = 1 << log_size, <= 6 */
	uint32_t cmdq_ctrl;        /* host: MNIC_CMDQ_CTRL_ENABLE (0 disables) */
	uint32_t cmdq_pi;          /* host: command doorbell, free-running producer index */
	uint32_t cmdq_ci;          /* device: entries completed, free-running */
	uint32_t cmdq_status;      /* device: enum mnic_cmdq_status */
	uint32_t cmdq_syndrome;    /* device: why BAD_CONFIG */
	/* ---- data-path doorbell (the sequence itself: struct mnic_db_page) */
	uint32_t reserved3;        /* formerly db_seq; 0 */
	uint32_t db_seen;          /* device: last db_page.db_seq acted on */
	/* ---- interrupts between peers that name each other by ID (QEMU's
	 * ivshmem-doorbell; docs/host-interface.md "Doorbells and interrupts") */
	uint32_t irq_nic_id;       /* device: MNIC_IRQ_ID_VALID | the NIC's peer ID
	                            * (ring it: Doorbell = id << 16 | 0); 0: none */
	uint32_t irq_host_ids[MNIC_IRQ_MAX_HOSTS];
	                           /* hosts: MNIC_IRQ_ID_VALID | a peer ID that
	                            * takes the NIC's vectors, 0 = free slot; a
	                            * host claims a free one (compare-and-swap
	                            * 0 -> its ID) and frees it at close; a slot
	                            * naming a peer the server no longer has is
	                            * stale and may be reclaimed */
	uint8_t reserved2[60];
};
_Static_assert(sizeof(struct mnic_init_seg) == 272, "mnic_init_seg layout");

/* The data-path doorbell page, BAR offset MNIC_DB_PAGE_OFFSET: host-written
 * only, one 64 KiB page (the largest page size a host maps) of its own. */
#define MNIC_DB_PAGE_OFFSET 0x00010000u
#define MNIC_DB_PAGE_SIZE   0x00010000u
struct mnic_db_page {
	uint32_t db_seq;           /* host: incremented after any doorbell-record update */
	uint32_t reserved[15];
};
_Static_assert(sizeof(struct mnic_db_page) == 64, "mnic_db_page layout");
_Static_assert(MNIC_DB_PAGE_OFFSET + MNIC_DB_PAGE_SIZE <= MNIC_DMA_WINDOW_OFFSET,
	       "doorbell page inside the device-owned pages");

#endif
