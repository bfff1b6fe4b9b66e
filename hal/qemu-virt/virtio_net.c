/* virtio-net driver over the virtio-mmio transport, modern interface only.
 *
 * Ring protocol (virtio 1.1 2.6): the driver fills descriptors, writes their
 * ids into avail->ring, then publishes them by advancing avail->idx and
 * notifies the queue; the device returns them through used->ring/used->idx.
 *
 *   RX (queue 0): descriptor i always points at rx_buf[i], device-writable.
 *                 All of them are posted at probe; each consumed used element
 *                 is re-posted by rx(), so exactly num buffers stay posted.
 *   TX (queue 1): descriptor i always points at tx_buf[i]; free ids live on
 *                 a stack and come back when the device returns them.
 *
 *   buffer:  | virtio_net_hdr (12) | Ethernet frame (<= 9018, no FCS) |
 *
 * The device is not trusted: used ids, lengths and used->idx are checked
 * before they index anything, and every discard has a counter.
 */
#include "virtio_net.h"

#include <string.h>

#include "hal/errno.h"
#include "hal/mmio.h"
#include "virtio_mmio_regs.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "virtio 1.x rings and config are little-endian (virtio 1.1 1.4): add byte swaps"
#endif

/* virtio 1.1 5.1.6: the header the driver zeroes on TX and skips on RX. */
struct virtio_net_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t num_buffers;
};

_Static_assert(sizeof(struct virtio_net_hdr) == VIRTIO_NET_HDR_LEN, "virtio_net_hdr is 12 bytes");
_Static_assert(VIRTIO_NET_BUF_SIZE == VIRTIO_NET_HDR_LEN + HAL_ETH_MAX_FRAME, "buffer = hdr + max frame");
_Static_assert(sizeof(struct virtq_desc) == 16, "virtq_desc is 16 bytes (2.6.5)");
_Static_assert(sizeof(struct virtq_used_elem) == 8, "virtq_used_elem is 8 bytes (2.6.8)");
_Static_assert(offsetof(struct virtq_avail, ring) == 4, "avail ring after flags, idx");
_Static_assert(offsetof(struct virtq_used, ring) == 4, "used ring after flags, idx");
_Static_assert((VIRTIO_NET_RXQ_SIZE & (VIRTIO_NET_RXQ_SIZE - 1)) == 0 && VIRTIO_NET_RXQ_SIZE <= 32768,
	       "RX ring size: power of two, at most 32768 (2.6)");
_Static_assert((VIRTIO_NET_TXQ_SIZE & (VIRTIO_NET_TXQ_SIZE - 1)) == 0 && VIRTIO_NET_TXQ_SIZE <= 32768,
	       "TX ring size: power of two, at most 32768 (2.6)");
_Static_assert(offsetof(struct virtio_net_rings, rx_desc) % VIRTQ_DESC_ALIGN == 0, "desc align");
_Static_assert(offsetof(struct virtio_net_rings, tx_desc) % VIRTQ_DESC_ALIGN == 0, "desc align");
_Static_assert(offsetof(struct virtio_net_rings, rx_avail) % VIRTQ_AVAIL_ALIGN == 0, "avail align");
_Static_assert(offsetof(struct virtio_net_rings, tx_avail) % VIRTQ_AVAIL_ALIGN == 0, "avail align");
_Static_assert(offsetof(struct virtio_net_rings, rx_used) % VIRTQ_USED_ALIGN == 0, "used align");
_Static_assert(offsetof(struct virtio_net_rings, tx_used) % VIRTQ_USED_ALIGN == 0, "used align");

/* Bounded waits on the device: QEMU answers at once; real hardware may not. */
#define VIRTIO_NET_RESET_POLLS      100000u
#define VIRTIO_NET_CONFIG_RETRIES   16u

static inline uint32_t reg_read(const struct virtio_net_dev *d, uint32_t off)
{
	return mmio_read32(d->hw.base + off);
}

static inline void reg_write(const struct virtio_net_dev *d, uint32_t off, uint32_t val)
{
	mmio_write32(d->hw.base + off, val);
}

static inline uint64_t dma_addr(const volatile void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* ---- queue helpers --------------------------------------------------- */

static void vq_notify(struct virtio_net_dev *d, struct virtio_net_vq *q)
{
	/* Full barrier: the avail->idx store must be visible before we read
	 * used->flags (a store->load order, 2.6.13.4), and before the QueueNotify
	 * write that makes the device look at it. */
	hal_mb();
	if (q->used->flags & VIRTQ_USED_F_NO_NOTIFY) {
		q->kicks_suppressed++;
		return;
	}
	reg_write(d, VIRTIO_MMIO_QUEUE_NOTIFY, q->index);
	q->kicks++;
}

/* Publish one descriptor id in the next avail slot (2.6.13.2, 2.6.13.3). */
static void vq_publish(struct virtio_net_vq *q, uint16_t id)
{
	q->avail->ring[q->avail_idx & q->mask] = id;
	/* Full barrier: the descriptor, the buffer contents and the ring slot
	 * must be visible before avail->idx hands them to the device (2.6.13.3),
	 * and on RX our loads from the buffer being re-posted must complete
	 * before the device can overwrite it; a store-only barrier (dmb st)
	 * would not order those loads. */
	hal_mb();
	q->avail_idx++;
	q->avail->idx = q->avail_idx;
}

/* Number of used elements waiting, or -1 if used->idx claims more than
 * were ever outstanding (the device broke the ring protocol). */
static int vq_used_pending(struct virtio_net_dev *d, struct virtio_net_vq *q)
{
	uint16_t pending = (uint16_t)(q->used->idx - q->last_used);

	if (pending > q->num) {
		d->counters.bad_used_idx++;
		d->state = VIRTIO_NET_BROKEN;
		return -1;
	}
	return pending;
}

static uint16_t pow2_floor(uint32_t x)
{
	uint16_t p = 1;

	while ((uint32_t)p * 2u <= x && p < 32768u)
		p = (uint16_t)(p * 2u);
	return p;
}

/* virtio 1.1 4.2.3.2: select, check unused, size, addresses, ready. */
static int vq_setup(struct virtio_net_dev *d, struct virtio_net_vq *q, uint16_t index,
		    uint16_t ring_size, struct virtq_desc *desc, struct virtq_avail *avail,
		    struct virtq_used *used)
{
	uint32_t max;

	reg_write(d, VIRTIO_MMIO_QUEUE_SEL, index);
	if (reg_read(d, VIRTIO_MMIO_QUEUE_READY) != 0)
		return -HAL_EIO;
	max = reg_read(d, VIRTIO_MMIO_QUEUE_NUM_MAX);
	if (max == 0)
		return -HAL_ENODEV;

	q->index = index;
	q->num = max >= ring_size ? ring_size : pow2_floor(max);
	q->mask = (uint16_t)(q->num - 1u);
	q->desc = desc;
	q->avail = avail;
	q->used = used;
	q->avail_idx = 0;
	q->last_used = 0;

	reg_write(d, VIRTIO_MMIO_QUEUE_NUM, q->num);
	reg_write(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)dma_addr(desc));
	reg_write(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(dma_addr(desc) >> 32));
	reg_write(d, VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)dma_addr(avail));
	reg_write(d, VIRTIO_MMIO_QUEUE_DRIVER_HIGH, (uint32_t)(dma_addr(avail) >> 32));
	reg_write(d, VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)dma_addr(used));
	reg_write(d, VIRTIO_MMIO_QUEUE_DEVICE_HIGH, (uint32_t)(dma_addr(used) >> 32));
	/* Write barrier: the zeroed rings must be in memory before QueueReady
	 * lets the device use the addresses above. */
	hal_wmb();
	reg_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
	return 0;
}

/* ---- TX ------------------------------------------------------------- */

static void tx_reclaim(struct virtio_net_dev *d)
{
	struct virtio_net_vq *q = &d->txq;
	int pending = vq_used_pending(d, q);

	if (pending <= 0)
		return;
	/* Read barrier: used->idx (read above) before the used elements it
	 * covers (2.6.8). */
	hal_rmb();
	while (pending-- > 0) {
		uint32_t id = q->used->ring[q->last_used & q->mask].id;

		q->last_used++;
		if (id >= q->num || !d->tx_in_flight[id]) {
			d->counters.bad_used++;
			continue;
		}
		d->tx_in_flight[id] = 0;
		d->tx_free[d->tx_free_count++] = (uint16_t)id;
	}
}

static int virtio_net_tx(struct hal_eth *eth, const void *frame, size_t len)
{
	struct virtio_net_dev *d = eth->priv;
	struct virtio_net_vq *q = &d->txq;
	size_t wire_len = len < HAL_ETH_MIN_FRAME ? HAL_ETH_MIN_FRAME : len;
	uint16_t id;
	uint8_t *buf;

	if (d->state != VIRTIO_NET_RUNNING)
		return -HAL_EIO;
	if (len > HAL_ETH_MAX_FRAME) {
		eth->stats.tx_too_long++;
		return -HAL_E2BIG;
	}
	if (d->tx_free_count == 0) {
		tx_reclaim(d);
		if (d->state != VIRTIO_NET_RUNNING)
			return -HAL_EIO;
	}
	if (d->tx_free_count == 0) {
		eth->stats.tx_busy++;
		return -HAL_EAGAIN;
	}

	id = d->tx_free[--d->tx_free_count];
	d->tx_in_flight[id] = 1;
	buf = d->tx_buf[id];
	memset(buf, 0, VIRTIO_NET_HDR_LEN);
	if (len > 0)
		memcpy(buf + VIRTIO_NET_HDR_LEN, frame, len);
	if (wire_len > len)
		memset(buf + VIRTIO_NET_HDR_LEN + len, 0, wire_len - len);

	q->desc[id].addr = dma_addr(buf);
	q->desc[id].len = (uint32_t)(VIRTIO_NET_HDR_LEN + wire_len);
	q->desc[id].flags = 0;
	q->desc[id].next = 0;
	vq_publish(q, id);
	vq_notify(d, q);

	eth->stats.tx_frames++;
	eth->stats.tx_bytes += wire_len;
	return 0;
}

/* ---- RX ------------------------------------------------------------- */

static int virtio_net_rx(struct hal_eth *eth, void *out, size_t cap)
{
	struct virtio_net_dev *d = eth->priv;
	struct virtio_net_vq *q = &d->rxq;
	uint16_t slot;
	uint32_t id, len;
	int ret;

	if (d->state != VIRTIO_NET_RUNNING || vq_used_pending(d, q) <= 0)
		return 0;
	/* Read barrier: used->idx (read in vq_used_pending) before the used
	 * element and the buffer contents it publishes (2.6.8). */
	hal_rmb();
	slot = q->last_used & q->mask;
	id = q->used->ring[slot].id;
	len = q->used->ring[slot].len;
	q->last_used++;

	if (id >= q->num) {
		/* The buffer the device consumed cannot be named.  Every used
		 * element must give one buffer back or the ring shrinks, so
		 * re-post the one an in-order device (QEMU's net RX is) took
		 * for this slot: the id we published there. */
		d->counters.bad_used++;
		eth->stats.rx_dropped++;
		id = q->avail->ring[slot] & q->mask;
		ret = -HAL_EIO;
	} else if (len < VIRTIO_NET_HDR_LEN || len > VIRTIO_NET_BUF_SIZE) {
		d->counters.bad_used++;
		eth->stats.rx_dropped++;
		ret = -HAL_EIO;
	} else if (len - VIRTIO_NET_HDR_LEN < 2u * HAL_ETH_ALEN + 2u) {
		d->counters.rx_runt++;
		eth->stats.rx_dropped++;
		ret = -HAL_EINVAL;
	} else if (len - VIRTIO_NET_HDR_LEN > cap) {
		eth->stats.rx_too_long++;
		ret = -HAL_E2BIG;
	} else {
		len -= VIRTIO_NET_HDR_LEN;
		memcpy(out, d->rx_buf[id] + VIRTIO_NET_HDR_LEN, len);
		eth->stats.rx_frames++;
		eth->stats.rx_bytes += len;
		ret = (int)len;
	}

	vq_publish(q, (uint16_t)id);
	vq_notify(d, q);
	return ret;
}

static int virtio_net_rx_pending(struct hal_eth *eth)
{
	struct virtio_net_dev *d = eth->priv;

	return d->state == VIRTIO_NET_RUNNING && d->rxq.used->idx != d->rxq.last_used;
}

static void virtio_net_poll(struct hal_eth *eth)
{
	virtio_net_irq(eth->priv);
}

static const struct hal_eth_ops virtio_net_ops = {
	.tx = virtio_net_tx,
	.rx = virtio_net_rx,
	.poll = virtio_net_poll,
	.rx_pending = virtio_net_rx_pending,
};

/* ---- interrupt -------------------------------------------------------- */

void virtio_net_irq(struct virtio_net_dev *d)
{
	uint32_t isr;

	if (d->state == VIRTIO_NET_DOWN)
		return;
	isr = reg_read(d, VIRTIO_MMIO_INTERRUPT_STATUS);
	if (isr != 0) {
		d->counters.irqs++;
		reg_write(d, VIRTIO_MMIO_INTERRUPT_ACK, isr);
	}
	/* Full barrier: the ACK write is ordered before the used-ring loads
	 * below, so a completion that lands after our scan raises a fresh
	 * interrupt instead of being acknowledged unseen. */
	hal_mb();
	if (isr & VIRTIO_MMIO_INT_CONFIG_CHANGE) {
		d->counters.config_changes++;
		if (reg_read(d, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET) {
			d->counters.needs_reset++;
			d->state = VIRTIO_NET_BROKEN;
		}
	}
	if (d->state == VIRTIO_NET_RUNNING)
		tx_reclaim(d);
}

struct hal_eth *virtio_net_eth(struct virtio_net_dev *d)
{
	return &d->eth;
}

/* ---- probe ------------------------------------------------------------ */

static void read_mac(struct virtio_net_dev *d)
{
	uint32_t gen_before, gen_after;
	unsigned tries = 0;

	/* 2.4.1 / 4.2.2: retry while ConfigGeneration changes under us, so
	 * the six bytes come from one configuration.  u8 fields are read
	 * with 8-bit accesses (4.2.2.2). */
	do {
		gen_before = reg_read(d, VIRTIO_MMIO_CONFIG_GENERATION);
		for (unsigned i = 0; i < HAL_ETH_ALEN; i++)
			d->eth.mac[i] = mmio_read8(d->hw.base + VIRTIO_MMIO_CONFIG +
						   VIRTIO_NET_CFG_MAC + i);
		gen_after = reg_read(d, VIRTIO_MMIO_CONFIG_GENERATION);
	} while (gen_before != gen_after && ++tries < VIRTIO_NET_CONFIG_RETRIES);
}

/* Without VIRTIO_NET_F_MAC the driver picks the address (5.1.5): a locally
 * administered unicast one made from the slot address, unique per board. */
static void make_local_mac(struct virtio_net_dev *d)
{
	uintptr_t b = d->hw.base;

	d->eth.mac[0] = 0x02;
	d->eth.mac[1] = 0x00;
	d->eth.mac[2] = (uint8_t)(b >> 24);
	d->eth.mac[3] = (uint8_t)(b >> 16);
	d->eth.mac[4] = (uint8_t)(b >> 8);
	d->eth.mac[5] = (uint8_t)b;
}

static void rx_post_all(struct virtio_net_dev *d)
{
	struct virtio_net_vq *q = &d->rxq;

	for (uint16_t i = 0; i < q->num; i++) {
		q->desc[i].addr = dma_addr(d->rx_buf[i]);
		q->desc[i].len = VIRTIO_NET_BUF_SIZE;
		q->desc[i].flags = VIRTQ_DESC_F_WRITE;
		q->desc[i].next = 0;
		q->avail->ring[i] = i;
	}
	q->avail_idx = q->num;
	/* Write barrier: descriptors and avail->ring before the avail->idx
	 * that publishes them (2.6.13.3). */
	hal_wmb();
	q->avail->idx = q->avail_idx;
}

static int probe_fail(struct virtio_net_dev *d, uint32_t status, int err)
{
	/* 3.1.1: tell the device the driver gave up. */
	reg_write(d, VIRTIO_MMIO_STATUS, status | VIRTIO_STATUS_FAILED);
	d->state = VIRTIO_NET_DOWN;
	return err;
}

int virtio_net_probe(struct virtio_net_dev *d, uintptr_t base, unsigned irq, const char *name)
{
	const uint64_t wanted = VIRTIO_FEATURE(VIRTIO_F_VERSION_1) | VIRTIO_FEATURE(VIRTIO_NET_F_MAC);
	uint64_t offered;
	uint32_t status;
	unsigned polls;
	int err;

	if (d == NULL || base == 0)
		return -HAL_EINVAL;
	d->hw.base = base;
	d->hw.irq = irq;
	d->state = VIRTIO_NET_DOWN;

	/* 4.2.3.1.1: Magic, Version and DeviceID before any other register;
	 * DeviceID 0 means stop there. */
	if (reg_read(d, VIRTIO_MMIO_MAGIC_VALUE) != VIRTIO_MMIO_MAGIC)
		return -HAL_ENODEV;
	if (reg_read(d, VIRTIO_MMIO_VERSION) != VIRTIO_MMIO_VERSION_MODERN) {
		/* Version 1 is the legacy interface, which this driver does not
		 * speak.  QEMU's virtio-mmio is legacy by default: run it with
		 * `-global virtio-mmio.force-legacy=false`. */
		return -HAL_ENODEV;
	}
	if (reg_read(d, VIRTIO_MMIO_DEVICE_ID) != VIRTIO_ID_NET)
		return -HAL_ENODEV;   /* VIRTIO_ID_NONE: empty slot */

	/* 3.1.1 step 1: reset, and wait until Status reads back 0 before
	 * clearing rings the device may still be writing. */
	reg_write(d, VIRTIO_MMIO_STATUS, 0);
	for (polls = 0; reg_read(d, VIRTIO_MMIO_STATUS) != 0; polls++)
		if (polls >= VIRTIO_NET_RESET_POLLS)
			return -HAL_EIO;

	memset(d, 0, offsetof(struct virtio_net_dev, rx_buf));
	d->hw.base = base;
	d->hw.irq = irq;
	d->eth.name = name;
	d->eth.priv = d;

	status = VIRTIO_STATUS_ACKNOWLEDGE;
	reg_write(d, VIRTIO_MMIO_STATUS, status);
	status |= VIRTIO_STATUS_DRIVER;
	reg_write(d, VIRTIO_MMIO_STATUS, status);

	/* 3.1.1 steps 4-6: negotiate, then check the device kept FEATURES_OK. */
	reg_write(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	offered = (uint64_t)reg_read(d, VIRTIO_MMIO_DEVICE_FEATURES) << 32;
	reg_write(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	offered |= reg_read(d, VIRTIO_MMIO_DEVICE_FEATURES);
	if (!(offered & VIRTIO_FEATURE(VIRTIO_F_VERSION_1)))
		return probe_fail(d, status, -HAL_EIO);
	d->features = offered & wanted;
	reg_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	reg_write(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(d->features >> 32));
	reg_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	reg_write(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)d->features);
	status |= VIRTIO_STATUS_FEATURES_OK;
	reg_write(d, VIRTIO_MMIO_STATUS, status);
	if (!(reg_read(d, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK))
		return probe_fail(d, status & ~VIRTIO_STATUS_FEATURES_OK, -HAL_EIO);

	/* 3.1.1 step 7: device-specific setup. */
	if (d->features & VIRTIO_FEATURE(VIRTIO_NET_F_MAC))
		read_mac(d);
	else
		make_local_mac(d);

	err = vq_setup(d, &d->rxq, VIRTIO_NET_QUEUE_RX, VIRTIO_NET_RXQ_SIZE,
		       d->rings.rx_desc, &d->rings.rx_avail, &d->rings.rx_used);
	if (err == 0)
		err = vq_setup(d, &d->txq, VIRTIO_NET_QUEUE_TX, VIRTIO_NET_TXQ_SIZE,
			       d->rings.tx_desc, &d->rings.tx_avail, &d->rings.tx_used);
	if (err != 0)
		return probe_fail(d, status, err);

	for (uint16_t i = 0; i < d->txq.num; i++)
		d->tx_free[i] = (uint16_t)(d->txq.num - 1u - i);
	d->tx_free_count = d->txq.num;
	rx_post_all(d);

	d->eth.ops = &virtio_net_ops;
	d->state = VIRTIO_NET_RUNNING;
	status |= VIRTIO_STATUS_DRIVER_OK;
	reg_write(d, VIRTIO_MMIO_STATUS, status);

	/* The RX kick comes after DRIVER_OK: 3.1.1 forbids buffer
	 * available notifications before it. */
	vq_notify(d, &d->rxq);
	return 0;
}
