/* Fake virtio-mmio net device: state, spec checks, register read/write
 * switches, the queue engine (TX drain, RX inject), then the mmio hooks. */
#include "fake_virtio_mmio.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hal/mmio.h"
#include "virtio_mmio_regs.h"

#define HDR_LEN  VIRTIO_NET_HDR_LEN
#define BUF_MAX  (HDR_LEN + FAKE_VNET_FRAME_MAX)

struct fake_queue {
	uint32_t num, ready;
	uint64_t desc, driver, device;
	uint16_t last_avail;
	uint16_t used_idx;
};

struct tx_record {
	uint8_t hdr[HDR_LEN];
	uint8_t frame[FAKE_VNET_FRAME_MAX];
	size_t len;
};

static struct {
	struct fake_vnet_params p;
	uint32_t status;
	uint32_t isr;
	uint32_t dev_features_sel, drv_features_sel;
	uint32_t drv_features[2];
	uint32_t queue_sel;
	struct fake_queue q[FAKE_VNET_NQUEUES];
	uint32_t config_generation;
	unsigned config_reads;

	uint32_t status_log[FAKE_VNET_LOG_MAX];
	unsigned n_status;
	struct fake_vnet_notify notify_log[FAKE_VNET_LOG_MAX];
	unsigned n_notify, notify_per_queue[FAKE_VNET_NQUEUES];
	unsigned n_ack;
	uint32_t last_ack;
	unsigned accesses;
	unsigned violations;
	char last_violation[160];

	int rx_corrupt_id, rx_corrupt_len;
	uint32_t rx_corrupt_id_val, rx_corrupt_len_val;
} m;

static struct tx_record tx_log[FAKE_VNET_TX_MAX];
static unsigned n_tx;

static void violation(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m.last_violation, sizeof m.last_violation, fmt, ap);
	va_end(ap);
	m.violations++;
}

/* ---- guest memory, little-endian, by spec offsets ----------------------- */

static uint8_t *mem(uint64_t addr)
{
	return (uint8_t *)(uintptr_t)addr;
}

static uint16_t rd16(uint64_t a)
{
	const uint8_t *p = mem(a);
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(uint64_t a)
{
	const uint8_t *p = mem(a);
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(uint64_t a)
{
	return rd32(a) | (uint64_t)rd32(a + 4) << 32;
}

static void wr16(uint64_t a, uint16_t v)
{
	uint8_t *p = mem(a);
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void wr32(uint64_t a, uint32_t v)
{
	wr16(a, (uint16_t)v);
	wr16(a + 2, (uint16_t)(v >> 16));
}

/* virtio 1.1 2.6.5 desc: addr 0, len 8, flags 12, next 14 (16 bytes).
 * 2.6.6 avail: flags 0, idx 2, ring 4 + 2i.  2.6.8 used: flags 0, idx 2,
 * ring 4 + 8i {id, len}. */
struct desc { uint64_t addr; uint32_t len; uint16_t flags, next; };

static struct desc rd_desc(const struct fake_queue *q, uint32_t i)
{
	uint64_t a = q->desc + 16u * i;
	struct desc d = { rd64(a), rd32(a + 8), rd16(a + 12), rd16(a + 14) };
	return d;
}

static uint16_t avail_idx(const struct fake_queue *q)
{
	return rd16(q->driver + 2);
}

static uint16_t avail_ring(const struct fake_queue *q, uint16_t n)
{
	return rd16(q->driver + 4 + 2u * (n % q->num));
}

static void put_used(struct fake_queue *q, uint32_t id, uint32_t len)
{
	uint64_t e = q->device + 4 + 8u * (q->used_idx % q->num);

	wr32(e, id);
	wr32(e + 4, len);
	q->used_idx++;
	wr16(q->device + 2, q->used_idx);
}

static void interrupt(const struct fake_queue *q)
{
	if (!(rd16(q->driver) & VIRTQ_AVAIL_F_NO_INTERRUPT))
		m.isr |= VIRTIO_MMIO_INT_USED_BUFFER;
}

/* Buffers made available and not yet taken; a driver that publishes more
 * than num at once broke 2.6.13. */
static int avail_pending(struct fake_queue *q)
{
	uint16_t n = (uint16_t)(avail_idx(q) - q->last_avail);

	if (n > q->num) {
		violation("queue: %u buffers available, queue size %u", n, q->num);
		return -1;
	}
	return n;
}

static int queue_live(unsigned qi)
{
	return m.q[qi].ready && (m.status & VIRTIO_STATUS_DRIVER_OK);
}

/* ---- public: setup and observations ------------------------------------ */

static void device_reset(void)
{
	m.status = 0;
	m.isr = 0;
	m.dev_features_sel = m.drv_features_sel = 0;
	m.drv_features[0] = m.drv_features[1] = 0;
	m.queue_sel = 0;
	memset(m.q, 0, sizeof m.q);
}

void fake_vnet_reset(void)
{
	static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

	memset(&m, 0, sizeof m);
	m.p.magic = VIRTIO_MMIO_MAGIC;
	m.p.version = VIRTIO_MMIO_VERSION_MODERN;
	m.p.device_id = VIRTIO_ID_NET;
	m.p.vendor_id = 0x554d4551u;   /* "QEMU" */
	m.p.features = VIRTIO_FEATURE(VIRTIO_F_VERSION_1) | VIRTIO_FEATURE(VIRTIO_NET_F_MAC) |
		       VIRTIO_FEATURE(VIRTIO_NET_F_STATUS) | VIRTIO_FEATURE(VIRTIO_NET_F_CSUM) |
		       VIRTIO_FEATURE(VIRTIO_NET_F_MRG_RXBUF) | VIRTIO_FEATURE(VIRTIO_NET_F_CTRL_VQ);
	m.p.queue_num_max[0] = m.p.queue_num_max[1] = 256;
	memcpy(m.p.mac, mac, sizeof mac);
	device_reset();
	n_tx = 0;
}

struct fake_vnet_params *fake_vnet_params(void) { return &m.p; }
uint32_t fake_vnet_status(void) { return m.status; }
uint64_t fake_vnet_driver_features(void) { return (uint64_t)m.drv_features[1] << 32 | m.drv_features[0]; }
unsigned fake_vnet_ack_count(void) { return m.n_ack; }
uint32_t fake_vnet_last_ack(void) { return m.last_ack; }
uint32_t fake_vnet_isr(void) { return m.isr; }
unsigned fake_vnet_access_count(void) { return m.accesses; }
unsigned fake_vnet_violations(void) { return m.violations; }
const char *fake_vnet_last_violation(void) { return m.last_violation; }

unsigned fake_vnet_status_log(const uint32_t **log)
{
	*log = m.status_log;
	return m.n_status;
}

const struct fake_vnet_queue_view *fake_vnet_queue(unsigned qi)
{
	static struct fake_vnet_queue_view v;
	const struct fake_queue *q = &m.q[qi];

	v.num = q->num;
	v.ready = q->ready;
	v.desc = q->desc;
	v.driver = q->driver;
	v.device = q->device;
	v.last_avail = q->last_avail;
	v.used_idx = q->used_idx;
	return &v;
}

unsigned fake_vnet_notify_log(const struct fake_vnet_notify **log)
{
	*log = m.notify_log;
	return m.n_notify;
}

unsigned fake_vnet_notify_count(unsigned qi)
{
	return qi < FAKE_VNET_NQUEUES ? m.notify_per_queue[qi] : 0;
}

unsigned fake_vnet_tx_count(void) { return n_tx; }
void fake_vnet_tx_clear(void) { n_tx = 0; }

const uint8_t *fake_vnet_tx_frame(unsigned i, size_t *len, const uint8_t **hdr)
{
	if (i >= n_tx)
		return NULL;
	*len = tx_log[i].len;
	if (hdr)
		*hdr = tx_log[i].hdr;
	return tx_log[i].frame;
}

/* ---- queue engine ----------------------------------------------------- */

/* Gather one device-readable chain into a TX record. */
static int tx_gather(struct fake_queue *q, uint16_t head, struct tx_record *r)
{
	uint8_t buf[BUF_MAX];
	size_t total = 0;
	uint32_t i = head;

	for (uint32_t links = 0;; links++) {
		struct desc d;

		if (i >= q->num || links >= q->num) {
			violation("tx: chain from %u leaves the table or loops", head);
			return -1;
		}
		d = rd_desc(q, i);
		if (d.flags & (VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_INDIRECT)) {
			violation("tx: descriptor %u flags 0x%x", i, d.flags);
			return -1;
		}
		if (d.addr == 0 || total + d.len > sizeof buf) {
			violation("tx: descriptor %u addr 0x%llx len %u", i,
				  (unsigned long long)d.addr, d.len);
			return -1;
		}
		memcpy(buf + total, mem(d.addr), d.len);
		total += d.len;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			break;
		i = d.next;
	}
	if (total < HDR_LEN) {
		violation("tx: %zu bytes, shorter than virtio_net_hdr", total);
		return -1;
	}
	memcpy(r->hdr, buf, HDR_LEN);
	r->len = total - HDR_LEN;
	memcpy(r->frame, buf + HDR_LEN, r->len);
	return 0;
}

unsigned fake_vnet_process_tx(void)
{
	struct fake_queue *q = &m.q[VIRTIO_NET_QUEUE_TX];
	uint16_t heads[256];
	int n;
	unsigned done = 0;

	if (!queue_live(VIRTIO_NET_QUEUE_TX) || (n = avail_pending(q)) <= 0)
		return 0;
	while (n-- > 0) {
		uint16_t head = avail_ring(q, q->last_avail);

		q->last_avail++;
		if (n_tx >= FAKE_VNET_TX_MAX) {
			violation("tx: test did not drain the frame log");
			return done;
		}
		if (tx_gather(q, head, &tx_log[n_tx]) == 0)
			n_tx++;
		heads[done++] = head;
	}
	for (unsigned k = 0; k < done; k++)
		put_used(q, m.p.tx_complete_reverse ? heads[done - 1 - k] : heads[k], 0);
	interrupt(q);
	return done;
}

void fake_vnet_tx_complete_bogus(uint32_t id)
{
	struct fake_queue *q = &m.q[VIRTIO_NET_QUEUE_TX];

	put_used(q, id, 0);
	interrupt(q);
}

void fake_vnet_corrupt_next_rx(int set_id, uint32_t id, int set_len, uint32_t len)
{
	m.rx_corrupt_id = set_id;
	m.rx_corrupt_id_val = id;
	m.rx_corrupt_len = set_len;
	m.rx_corrupt_len_val = len;
}

int fake_vnet_inject_rx(const void *frame, size_t len)
{
	struct fake_queue *q = &m.q[VIRTIO_NET_QUEUE_RX];
	uint8_t buf[BUF_MAX];
	size_t total = HDR_LEN + len, done = 0, room = 0;
	uint32_t id, used_len;
	uint16_t head;

	if (!queue_live(VIRTIO_NET_QUEUE_RX) || avail_pending(q) <= 0)
		return -1;
	if (len > FAKE_VNET_FRAME_MAX)
		return -2;
	/* 5.1.6.4: without MRG_RXBUF, num_buffers (offset 10) is 1. */
	memset(buf, 0, HDR_LEN);
	buf[10] = 1;
	memcpy(buf + HDR_LEN, frame, len);

	head = avail_ring(q, q->last_avail);
	for (uint32_t i = head, links = 0;; links++) {
		struct desc d;
		size_t n;

		if (i >= q->num || links >= q->num) {
			violation("rx: chain from %u leaves the table or loops", head);
			return -1;
		}
		d = rd_desc(q, i);
		if (!(d.flags & VIRTQ_DESC_F_WRITE) || d.addr == 0) {
			violation("rx: descriptor %u not device-writable", i);
			return -1;
		}
		room += d.len;
		n = total - done < d.len ? total - done : d.len;
		memcpy(mem(d.addr), buf + done, n);
		done += n;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			break;
		i = d.next;
	}
	if (room < total && !m.rx_corrupt_len)
		return -2;   /* buffer left posted, as a real device would */

	q->last_avail++;
	id = m.rx_corrupt_id ? m.rx_corrupt_id_val : head;
	used_len = m.rx_corrupt_len ? m.rx_corrupt_len_val : (uint32_t)total;
	m.rx_corrupt_id = m.rx_corrupt_len = 0;
	put_used(q, id, used_len);
	interrupt(q);
	return 0;
}

int fake_vnet_rx_posted(size_t min_len)
{
	struct fake_queue *q = &m.q[VIRTIO_NET_QUEUE_RX];
	uint8_t seen[256] = { 0 };
	int n;

	if (!q->ready || (n = avail_pending(q)) < 0)
		return -1;
	for (int k = 0; k < n; k++) {
		uint16_t head = avail_ring(q, (uint16_t)(q->last_avail + k));
		struct desc d;

		if (head >= q->num || seen[head]) {
			violation("rx: id %u out of range or posted twice", head);
			return -1;
		}
		seen[head] = 1;
		d = rd_desc(q, head);
		if (d.flags != VIRTQ_DESC_F_WRITE || d.len < min_len || d.addr == 0) {
			violation("rx: posted descriptor %u flags 0x%x len %u", head, d.flags, d.len);
			return -1;
		}
	}
	return n;
}

void fake_vnet_raise_isr(uint32_t bits) { m.isr |= bits; }

void fake_vnet_set_used_flags(unsigned qi, uint16_t flags)
{
	wr16(m.q[qi].device, flags);
}

void fake_vnet_bump_used_idx(unsigned qi, uint16_t delta)
{
	m.q[qi].used_idx = (uint16_t)(m.q[qi].used_idx + delta);
	wr16(m.q[qi].device + 2, m.q[qi].used_idx);
	m.isr |= VIRTIO_MMIO_INT_USED_BUFFER;
}

void fake_vnet_set_needs_reset(void)
{
	m.status |= VIRTIO_STATUS_DEVICE_NEEDS_RESET;
	m.isr |= VIRTIO_MMIO_INT_CONFIG_CHANGE;
}

/* ---- registers -------------------------------------------------------- */

static int is_pow2(uint32_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

static void status_write(uint32_t v)
{
	uint32_t set = v & ~m.status;

	if (m.n_status < FAKE_VNET_LOG_MAX)
		m.status_log[m.n_status++] = v;
	if (v == 0) {
		device_reset();
		return;
	}
	/* 2.1.2: the driver never clears a status bit except by reset. */
	if (m.status & ~v & 0xffu & ~VIRTIO_STATUS_DEVICE_NEEDS_RESET)
		violation("status: 0x%x -> 0x%x clears bits", m.status, v);
	if ((set & VIRTIO_STATUS_DRIVER) && !(v & VIRTIO_STATUS_ACKNOWLEDGE))
		violation("status: DRIVER before ACKNOWLEDGE");
	if ((set & VIRTIO_STATUS_FEATURES_OK) && !(v & VIRTIO_STATUS_DRIVER))
		violation("status: FEATURES_OK before DRIVER");
	if ((set & VIRTIO_STATUS_DRIVER_OK) && !(v & VIRTIO_STATUS_FEATURES_OK))
		violation("status: DRIVER_OK without FEATURES_OK");
	if (set & VIRTIO_STATUS_FEATURES_OK) {
		/* 3.1.1 step 6: the device keeps FEATURES_OK only if it can
		 * run with what was accepted; 6.1: a modern device may refuse a
		 * driver that did not accept VERSION_1. */
		uint64_t accepted = fake_vnet_driver_features();
		uint64_t v1 = VIRTIO_FEATURE(VIRTIO_F_VERSION_1);

		if ((accepted & ~m.p.features) || m.p.refuse_features_ok ||
		    ((m.p.features & v1) && !(accepted & v1)))
			v &= ~VIRTIO_STATUS_FEATURES_OK;
	}
	m.status = v | (m.status & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
}

static struct fake_queue *selected_queue(const char *what)
{
	if (m.queue_sel >= FAKE_VNET_NQUEUES) {
		violation("%s on queue %u that does not exist", what, m.queue_sel);
		return NULL;
	}
	return &m.q[m.queue_sel];
}

/* 4.2.2.2: queue registers are written only while QueueReady is 0. */
static struct fake_queue *queue_for_write(const char *what)
{
	struct fake_queue *q = selected_queue(what);

	if (q && q->ready) {
		violation("%s while queue %u is ready", what, m.queue_sel);
		return NULL;
	}
	return q;
}

static void queue_ready_write(uint32_t v)
{
	struct fake_queue *q = selected_queue("QueueReady");

	if (!q)
		return;
	if (v == 0) {
		q->ready = 0;
		return;
	}
	if (!(m.status & VIRTIO_STATUS_FEATURES_OK))
		violation("queue %u ready before FEATURES_OK", m.queue_sel);
	if (!is_pow2(q->num) || q->num > m.p.queue_num_max[m.queue_sel])
		violation("queue %u: QueueNum %u (max %u)", m.queue_sel, q->num,
			  m.p.queue_num_max[m.queue_sel]);
	if (q->desc == 0 || q->desc % VIRTQ_DESC_ALIGN || q->driver == 0 ||
	    q->driver % VIRTQ_AVAIL_ALIGN || q->device == 0 || q->device % VIRTQ_USED_ALIGN)
		violation("queue %u: bad ring addresses", m.queue_sel);
	q->ready = 1;
	q->last_avail = 0;
	q->used_idx = 0;
}

static void set_low(uint64_t *a, uint32_t v) { *a = (*a & ~0xffffffffull) | v; }
static void set_high(uint64_t *a, uint32_t v) { *a = (*a & 0xffffffffull) | (uint64_t)v << 32; }

static uint32_t config_read(uint32_t off)
{
	uint8_t cfg[8];

	m.config_reads++;
	if (m.p.mac_change_at_read && m.config_reads == m.p.mac_change_at_read) {
		memcpy(m.p.mac, m.p.new_mac, 6);
		m.config_generation++;
	}
	memcpy(cfg, m.p.mac, 6);
	cfg[6] = 1;   /* VIRTIO_NET_S_LINK_UP */
	cfg[7] = 0;
	return off < sizeof cfg ? cfg[off] : 0;
}

static uint32_t reg_read(uint32_t off)
{
	struct fake_queue *q;

	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE: return m.p.magic;
	case VIRTIO_MMIO_VERSION: return m.p.version;
	case VIRTIO_MMIO_DEVICE_ID: return m.p.device_id;
	case VIRTIO_MMIO_VENDOR_ID: return m.p.vendor_id;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		return m.dev_features_sel < 2 ? (uint32_t)(m.p.features >> (32 * m.dev_features_sel)) : 0;
	case VIRTIO_MMIO_QUEUE_NUM_MAX:
		return m.queue_sel < FAKE_VNET_NQUEUES ? m.p.queue_num_max[m.queue_sel] : 0;
	case VIRTIO_MMIO_QUEUE_READY:
		q = selected_queue("QueueReady read");
		return q ? q->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS: return m.isr;
	case VIRTIO_MMIO_STATUS: return m.status;
	case VIRTIO_MMIO_CONFIG_GENERATION: return m.config_generation;
	default:
		violation("read of register 0x%03x", off);
		return 0;
	}
}

static void reg_write(uint32_t off, uint32_t v)
{
	struct fake_queue *q;

	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL: m.dev_features_sel = v; return;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL: m.drv_features_sel = v; return;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		if (!(m.status & VIRTIO_STATUS_DRIVER) || (m.status & VIRTIO_STATUS_FEATURES_OK))
			violation("DriverFeatures written in status 0x%x", m.status);
		if (m.drv_features_sel < 2)
			m.drv_features[m.drv_features_sel] = v;
		return;
	case VIRTIO_MMIO_QUEUE_SEL: m.queue_sel = v; return;
	case VIRTIO_MMIO_QUEUE_NUM:
		if ((q = queue_for_write("QueueNum")))
			q->num = v;
		return;
	case VIRTIO_MMIO_QUEUE_READY: queue_ready_write(v); return;
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
		if ((q = queue_for_write("QueueDescLow"))) set_low(&q->desc, v);
		return;
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		if ((q = queue_for_write("QueueDescHigh"))) set_high(&q->desc, v);
		return;
	case VIRTIO_MMIO_QUEUE_DRIVER_LOW:
		if ((q = queue_for_write("QueueDriverLow"))) set_low(&q->driver, v);
		return;
	case VIRTIO_MMIO_QUEUE_DRIVER_HIGH:
		if ((q = queue_for_write("QueueDriverHigh"))) set_high(&q->driver, v);
		return;
	case VIRTIO_MMIO_QUEUE_DEVICE_LOW:
		if ((q = queue_for_write("QueueDeviceLow"))) set_low(&q->device, v);
		return;
	case VIRTIO_MMIO_QUEUE_DEVICE_HIGH:
		if ((q = queue_for_write("QueueDeviceHigh"))) set_high(&q->device, v);
		return;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		if (!(m.status & VIRTIO_STATUS_DRIVER_OK))
			violation("notify of queue %u before DRIVER_OK (3.1.1)", v);
		if (v >= FAKE_VNET_NQUEUES || !m.q[v].ready) {
			violation("notify of queue %u that is not ready", v);
			return;
		}
		if (m.n_notify < FAKE_VNET_LOG_MAX)
			m.notify_log[m.n_notify++] = (struct fake_vnet_notify){ v, m.status };
		m.notify_per_queue[v]++;
		if (v == VIRTIO_NET_QUEUE_TX && !m.p.tx_hold)
			fake_vnet_process_tx();
		return;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		m.n_ack++;
		m.last_ack = v;
		m.isr &= ~v;
		return;
	case VIRTIO_MMIO_STATUS: status_write(v); return;
	default:
		violation("write of 0x%x to register 0x%03x", v, off);
		return;
	}
}

/* ---- mmio hooks ------------------------------------------------------- */

static int in_window(uintptr_t addr, unsigned width, uint32_t *off)
{
	if (addr < FAKE_VNET_BASE || addr - FAKE_VNET_BASE + width > FAKE_VNET_WINDOW) {
		violation("access to 0x%lx outside the device", (unsigned long)addr);
		return 0;
	}
	m.accesses++;
	*off = (uint32_t)(addr - FAKE_VNET_BASE);
	if (*off % width) {
		violation("unaligned %u-byte access at 0x%03x", width, *off);
		return 0;
	}
	return 1;
}

/* 4.2.2.2: control registers 32-bit only; in the net config, mac (u8[6])
 * byte-wide and status (le16) 16-bit. */
static int width_ok(uint32_t off, unsigned width)
{
	uint32_t cfg = off - VIRTIO_MMIO_CONFIG;

	if (off < VIRTIO_MMIO_CONFIG)
		return width == 4;
	if (cfg < VIRTIO_NET_CFG_STATUS)
		return width == 1;
	return width == 2;
}

uint32_t mmio_read32(uintptr_t addr)
{
	uint32_t off;

	if (!in_window(addr, 4, &off))
		return 0;
	if (!width_ok(off, 4)) {
		violation("32-bit read of config 0x%03x", off);
		return 0;
	}
	return reg_read(off);
}

void mmio_write32(uintptr_t addr, uint32_t val)
{
	uint32_t off;

	if (!in_window(addr, 4, &off))
		return;
	if (off >= VIRTIO_MMIO_CONFIG) {
		violation("write to read-only net config 0x%03x", off);
		return;
	}
	reg_write(off, val);
}

uint16_t mmio_read16(uintptr_t addr)
{
	uint32_t off;

	if (!in_window(addr, 2, &off))
		return 0;
	if (!width_ok(off, 2)) {
		violation("16-bit read at 0x%03x", off);
		return 0;
	}
	return (uint16_t)(config_read(off - VIRTIO_MMIO_CONFIG) |
			  config_read(off - VIRTIO_MMIO_CONFIG + 1) << 8);
}

void mmio_write16(uintptr_t addr, uint16_t val)
{
	violation("16-bit write of 0x%x at 0x%lx", val, (unsigned long)addr);
}

uint8_t mmio_read8(uintptr_t addr)
{
	uint32_t off;

	if (!in_window(addr, 1, &off))
		return 0;
	if (!width_ok(off, 1)) {
		violation("8-bit read at 0x%03x", off);
		return 0;
	}
	return (uint8_t)config_read(off - VIRTIO_MMIO_CONFIG);
}

void mmio_write8(uintptr_t addr, uint8_t val)
{
	violation("8-bit write of 0x%x at 0x%lx", val, (unsigned long)addr);
}
