/* The host interface ABI: BAR layout shared by the firmware, the kernel
 * driver and libmnic.  Little-endian by definition (every supported host
 * and NIC core is little-endian; the accessors are where a big-endian port
 * would swap).  Fixed-width fields, explicit padding, sizes pinned.
 *
 * BAR layout (offsets from the start of the BAR):
 *   0x0000  init segment (struct mnic_init_seg), device-owned
 *   0x1000  reserved for the command queue, mailboxes and doorbells (mgmt/)
 *   MNIC_DMA_WINDOW_OFFSET ..  end: host DMA window (rings, MR memory)
 */
#ifndef MNIC_ABI_H
#define MNIC_ABI_H

#include <stdint.h>

#define MNIC_INIT_MAGIC        0x43494e4du   /* "MNIC" read as little-endian u32 */
#define MNIC_CMDIF_REV         1u
#define MNIC_FW_VERSION(maj, min, patch) (((maj) << 24) | ((min) << 16) | (patch))
#define MNIC_FW_VERSION_CUR    MNIC_FW_VERSION(0u, 1u, 0u)
#define MNIC_DMA_WINDOW_OFFSET 0x00100000u   /* 1 MiB of device-owned pages */

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
	uint8_t reserved2[136];
};
_Static_assert(sizeof(struct mnic_init_seg) == 272, "mnic_init_seg layout");

#endif
