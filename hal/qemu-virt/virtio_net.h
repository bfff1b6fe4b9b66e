/* virtio-net over virtio-mmio (modern, Version 2), polled by the event loop.
 *
 * One RX queue (0) and one TX queue (1), split virtqueues (virtio 1.1 2.6),
 * features VIRTIO_F_VERSION_1 and, when offered, VIRTIO_NET_F_MAC; nothing
 * else.  Every frame carries a 12-byte virtio_net_hdr that the driver adds
 * (zeroed) on TX and strips on RX.  All memory is inside struct
 * virtio_net_dev: place it in static storage (it is large and 4096-aligned).
 *
 * The device reads rings and buffers by physical address; the driver passes
 * CPU addresses, which is only right while the MMU is off or identity-maps
 * RAM.
 */
#ifndef VIRTIO_NET_H
#define VIRTIO_NET_H

#include <stddef.h>
#include <stdint.h>

#include "hal/eth.h"

/* Ring sizes: powers of two (2.6: split queue size).  The device may allow
 * fewer (QueueNumMax); the driver then uses the largest power of two it
 * allows. */
#define VIRTIO_NET_RXQ_SIZE 32u
#define VIRTIO_NET_TXQ_SIZE 32u

/* One buffer per descriptor: virtio_net_hdr (12 bytes) + the largest frame.
 * Buffers are spaced on 64-byte boundaries. */
#define VIRTIO_NET_BUF_SIZE   (12u + HAL_ETH_MAX_FRAME)
#define VIRTIO_NET_BUF_STRIDE ((VIRTIO_NET_BUF_SIZE + 63u) & ~63u)

#define VIRTIO_NET_VQ_MAX \
	(VIRTIO_NET_RXQ_SIZE > VIRTIO_NET_TXQ_SIZE ? VIRTIO_NET_RXQ_SIZE : VIRTIO_NET_TXQ_SIZE)

/* Split virtqueue layouts (virtio 1.1 2.6.5, 2.6.6, 2.6.8), little-endian.
 * avail/used are sized for the larger queue; a device given QueueNum = n
 * only looks at ring[0..n-1].  used_event/avail_event are unused (no
 * VIRTIO_F_EVENT_IDX). */
struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct virtq_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[VIRTIO_NET_VQ_MAX];
	uint16_t used_event;
};

struct virtq_used_elem {
	uint32_t id;
	uint32_t len;
};

struct virtq_used {
	uint16_t flags;
	uint16_t idx;
	struct virtq_used_elem ring[VIRTIO_NET_VQ_MAX];
	uint16_t avail_event;
};

/* Driver view of one split virtqueue.  avail_idx and last_used are
 * free-running 16-bit counters; slot = counter & mask. */
struct virtio_net_vq {
	struct virtq_desc *desc;
	struct virtq_avail *avail;
	volatile struct virtq_used *used;   /* written by the device */
	uint16_t index;                     /* queue number */
	uint16_t num;                       /* negotiated size, power of two */
	uint16_t mask;
	uint16_t avail_idx;
	uint16_t last_used;
	uint64_t kicks;
	uint64_t kicks_suppressed;          /* VIRTQ_USED_F_NO_NOTIFY honoured */
};

/* Everything the device reaches by DMA except the packet buffers.  Aligning
 * the block to 4096 covers the descriptor (16), avail (2) and used (4)
 * alignment of table 2.2 with room to spare. */
struct virtio_net_rings {
	_Alignas(16) struct virtq_desc rx_desc[VIRTIO_NET_RXQ_SIZE];
	_Alignas(16) struct virtq_desc tx_desc[VIRTIO_NET_TXQ_SIZE];
	struct virtq_avail rx_avail;
	struct virtq_avail tx_avail;
	struct virtq_used rx_used;
	struct virtq_used tx_used;
};

enum virtio_net_state {
	VIRTIO_NET_DOWN,      /* not probed, or probe failed */
	VIRTIO_NET_RUNNING,
	VIRTIO_NET_BROKEN,    /* device broke the ring protocol or needs reset */
};

/* Driver-private discard and event counters (hal_eth_stats has the rest). */
struct virtio_net_counters {
	uint64_t bad_used;        /* used element with id/len out of range, or
	                             completing a descriptor not in flight */
	uint64_t bad_used_idx;    /* used->idx ran ahead of what was posted */
	uint64_t rx_runt;         /* frame shorter than an Ethernet header */
	uint64_t irqs;            /* virtio_net_irq calls with a status bit set */
	uint64_t config_changes;
	uint64_t needs_reset;
};

/* Board description of one device: which virtio-mmio slot. */
struct virtio_net_hw {
	uintptr_t base;
	unsigned irq;             /* GIC INTID; stored for the board, unused here */
};

struct virtio_net_dev {
	struct virtio_net_hw hw;
	struct hal_eth eth;

	enum virtio_net_state state;
	uint64_t features;        /* negotiated */
	struct virtio_net_vq rxq;
	struct virtio_net_vq txq;
	uint16_t tx_free[VIRTIO_NET_TXQ_SIZE];   /* stack of free TX descriptor ids */
	uint16_t tx_free_count;
	uint8_t tx_in_flight[VIRTIO_NET_TXQ_SIZE];
	struct virtio_net_counters counters;

	_Alignas(4096) struct virtio_net_rings rings;
	/* Packet buffers last: probe does not need to clear them. */
	_Alignas(64) uint8_t rx_buf[VIRTIO_NET_RXQ_SIZE][VIRTIO_NET_BUF_STRIDE];
	_Alignas(64) uint8_t tx_buf[VIRTIO_NET_TXQ_SIZE][VIRTIO_NET_BUF_STRIDE];
};

/* Probe the virtio-mmio slot at base and bring the device up.  Returns 0,
 * -HAL_ENODEV (empty slot, not virtio, legacy Version 1, not a net device, a
 * queue the device does not have), -HAL_EIO (feature negotiation failed or
 * the device did not reset) or -HAL_EINVAL (bad arguments).  name must
 * outlive the device. */
int virtio_net_probe(struct virtio_net_dev *d, uintptr_t base, unsigned irq,
		     const char *name);

/* Acknowledge the interrupt (InterruptStatus -> InterruptACK) and reclaim
 * finished transmits.  Call from the event loop, not interrupt context;
 * the same work as d->eth.ops->poll. */
void virtio_net_irq(struct virtio_net_dev *d);

struct hal_eth *virtio_net_eth(struct virtio_net_dev *d);

#endif
