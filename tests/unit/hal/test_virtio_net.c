/* Unit tests for hal/qemu-virt/virtio_net.c against the fake virtio-mmio
 * net device (fake_virtio_mmio.c).  Every test ends by asserting that the
 * model saw no spec violation from the driver. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "fake_virtio_mmio.h"
#include "hal/errno.h"
#include "virtio_mmio_regs.h"
#include "virtio_net.h"

#define RXQ VIRTIO_NET_RXQ_SIZE
#define TXQ VIRTIO_NET_TXQ_SIZE
#define MAX_FRAME HAL_ETH_MAX_FRAME
#define TEST_IRQ 79u   /* INTID 48 + slot 31 */

static struct virtio_net_dev dev;
static struct hal_eth *eth;
static uint8_t frame[MAX_FRAME + 64];
static uint8_t rxbuf[MAX_FRAME + 64];

static const uint64_t F_V1 = VIRTIO_FEATURE(VIRTIO_F_VERSION_1);
static const uint64_t F_MAC = VIRTIO_FEATURE(VIRTIO_NET_F_MAC);

/* ---- helpers ---------------------------------------------------------- */

static void assert_no_violations(void)
{
	if (fake_vnet_violations() != 0)
		fail_msg("device model saw %u spec violations, last: %s", fake_vnet_violations(),
			 fake_vnet_last_violation());
}

static int setup(void **state)
{
	(void)state;
	fake_vnet_reset();
	eth = NULL;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fake_vnet_violations() == 0 ? 0 : -1;
}

static int probe(void)
{
	int r = virtio_net_probe(&dev, FAKE_VNET_BASE, TEST_IRQ, "vnet0");

	eth = virtio_net_eth(&dev);
	return r;
}

static void probe_ok(void)
{
	assert_int_equal(probe(), 0);
}

/* Ethernet II frame, ethertype 0x88b5, big-endian sequence number at 14,
 * then a pattern that depends on seq and position. */
static void make_frame(uint8_t *f, size_t len, uint32_t seq)
{
	static const uint8_t hdr[14] = { 0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc,
					 0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0x88, 0xb5 };

	for (size_t i = 0; i < len; i++)
		f[i] = (uint8_t)(seq * 131u + i * 7u + 1u);
	memcpy(f, hdr, len < sizeof hdr ? len : sizeof hdr);
	for (size_t i = 0; i < 4 && 14 + i < len; i++)
		f[14 + i] = (uint8_t)(seq >> (24 - 8 * i));
}

static size_t seq_len(uint32_t seq)
{
	if (seq % 13 == 5)
		return MAX_FRAME;
	return 20 + (seq * 97u) % 1500u;   /* some below 60, so padding is exercised */
}

/* Device saw frame number i equal to make_frame(len, seq), padded to 60. */
static void expect_tx(unsigned i, size_t len, uint32_t seq)
{
	static uint8_t want[MAX_FRAME];
	size_t got_len, wire = len < HAL_ETH_MIN_FRAME ? HAL_ETH_MIN_FRAME : len;
	const uint8_t *hdr;
	const uint8_t *got = fake_vnet_tx_frame(i, &got_len, &hdr);
	static const uint8_t zero_hdr[VIRTIO_NET_HDR_LEN];

	assert_non_null(got);
	assert_int_equal(got_len, wire);
	memset(want, 0, wire);
	make_frame(want, len, seq);
	assert_memory_equal(got, want, wire);
	assert_memory_equal(hdr, zero_hdr, sizeof zero_hdr);
}

static void send_ok(size_t len, uint32_t seq)
{
	make_frame(frame, len, seq);
	assert_int_equal(eth->ops->tx(eth, frame, len), 0);
}

static void inject_ok(size_t len, uint32_t seq)
{
	make_frame(frame, len, seq);
	assert_int_equal(fake_vnet_inject_rx(frame, len), 0);
}

static void receive_expect(size_t len, uint32_t seq)
{
	make_frame(frame, len, seq);
	memset(rxbuf, 0xee, sizeof rxbuf);
	assert_int_equal(eth->ops->rx(eth, rxbuf, sizeof rxbuf), (int)len);
	assert_memory_equal(rxbuf, frame, len);
}

static int status_log_has(uint32_t bit)
{
	const uint32_t *log;
	unsigned n = fake_vnet_status_log(&log);

	for (unsigned i = 0; i < n; i++)
		if (log[i] & bit)
			return 1;
	return 0;
}

/* ---- probe ------------------------------------------------------------ */

static void test_probe_success(void **state)
{
	static const uint32_t want_status[] = {
		0,
		VIRTIO_STATUS_ACKNOWLEDGE,
		VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER,
		VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK,
		VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
			VIRTIO_STATUS_DRIVER_OK,
	};
	const uint32_t *log;
	const struct fake_vnet_notify *notes;
	const struct fake_vnet_queue_view *q;
	(void)state;

	probe_ok();
	assert_ptr_equal(eth, &dev.eth);
	assert_memory_equal(eth->mac, fake_vnet_params()->mac, HAL_ETH_ALEN);
	assert_int_equal(fake_vnet_driver_features(), F_V1 | F_MAC);
	assert_int_equal(dev.features, F_V1 | F_MAC);

	assert_int_equal(fake_vnet_status_log(&log), 5);
	assert_memory_equal(log, want_status, sizeof want_status);
	assert_int_equal(fake_vnet_status(), want_status[4]);

	q = fake_vnet_queue(VIRTIO_NET_QUEUE_RX);
	assert_int_equal(q->ready, 1);
	assert_int_equal(q->num, RXQ);
	assert_int_equal(q->desc, (uint64_t)(uintptr_t)dev.rings.rx_desc);
	assert_int_equal(q->driver, (uint64_t)(uintptr_t)&dev.rings.rx_avail);
	assert_int_equal(q->device, (uint64_t)(uintptr_t)&dev.rings.rx_used);
	q = fake_vnet_queue(VIRTIO_NET_QUEUE_TX);
	assert_int_equal(q->ready, 1);
	assert_int_equal(q->num, TXQ);
	assert_int_equal(q->desc, (uint64_t)(uintptr_t)dev.rings.tx_desc);
	assert_int_equal(q->driver, (uint64_t)(uintptr_t)&dev.rings.tx_avail);
	assert_int_equal(q->device, (uint64_t)(uintptr_t)&dev.rings.tx_used);
	assert_int_equal((uintptr_t)&dev.rings % 4096, 0);

	assert_int_equal(fake_vnet_rx_posted(VIRTIO_NET_HDR_LEN + MAX_FRAME), RXQ);
	assert_int_equal(fake_vnet_notify_log(&notes), 1);
	assert_int_equal(notes[0].queue, VIRTIO_NET_QUEUE_RX);
	assert_true(notes[0].status & VIRTIO_STATUS_DRIVER_OK);

	assert_non_null(eth->ops);
	assert_non_null(eth->ops->tx);
	assert_non_null(eth->ops->rx);
	assert_non_null(eth->ops->poll);
	assert_non_null(eth->ops->rx_pending);
	assert_string_equal(eth->name, "vnet0");
	assert_int_equal(dev.hw.irq, TEST_IRQ);
	assert_int_equal(eth->ops->rx_pending(eth), 0);
	assert_int_equal(eth->ops->rx(eth, rxbuf, sizeof rxbuf), 0);
	assert_no_violations();
}

/* Identity failures: refused before the driver writes anything. */
static void expect_untouched_enodev(void)
{
	const uint32_t *log;

	assert_int_equal(probe(), -HAL_ENODEV);
	assert_int_equal(fake_vnet_status_log(&log), 0);
	assert_no_violations();
}

static void test_probe_bad_magic(void **state)
{
	(void)state;
	fake_vnet_params()->magic = 0x12345678u;
	expect_untouched_enodev();
}

static void test_probe_empty_slot(void **state)
{
	(void)state;
	fake_vnet_params()->device_id = VIRTIO_ID_NONE;
	expect_untouched_enodev();
}

static void test_probe_not_net(void **state)
{
	(void)state;
	fake_vnet_params()->device_id = 2;   /* block */
	expect_untouched_enodev();
}

static void test_probe_legacy(void **state)
{
	(void)state;
	fake_vnet_params()->version = VIRTIO_MMIO_VERSION_LEGACY;
	expect_untouched_enodev();
}

/* Failures after ACKNOWLEDGE: FAILED set, DRIVER_OK never. */
static void expect_failed(int err)
{
	assert_int_equal(probe(), err);
	assert_true(fake_vnet_status() & VIRTIO_STATUS_FAILED);
	assert_false(status_log_has(VIRTIO_STATUS_DRIVER_OK));
	assert_int_equal(fake_vnet_notify_count(0) + fake_vnet_notify_count(1), 0);
	assert_no_violations();
}

static void test_probe_no_version_1(void **state)
{
	(void)state;
	fake_vnet_params()->features = F_MAC;
	expect_failed(-HAL_EIO);
	assert_false(status_log_has(VIRTIO_STATUS_FEATURES_OK));
	assert_int_equal(fake_vnet_queue(0)->ready, 0);
}

static void test_probe_features_ok_refused(void **state)
{
	(void)state;
	fake_vnet_params()->refuse_features_ok = 1;
	expect_failed(-HAL_EIO);
	assert_false(fake_vnet_status() & VIRTIO_STATUS_FEATURES_OK);
	assert_int_equal(fake_vnet_queue(0)->ready, 0);
	assert_int_equal(fake_vnet_queue(1)->ready, 0);
}

static void test_probe_rx_queue_num_max_zero(void **state)
{
	(void)state;
	fake_vnet_params()->queue_num_max[VIRTIO_NET_QUEUE_RX] = 0;
	expect_failed(-HAL_ENODEV);
	assert_int_equal(fake_vnet_queue(0)->ready, 0);
}

static void test_probe_tx_queue_num_max_zero(void **state)
{
	(void)state;
	fake_vnet_params()->queue_num_max[VIRTIO_NET_QUEUE_TX] = 0;
	expect_failed(-HAL_ENODEV);
	assert_int_equal(fake_vnet_queue(1)->ready, 0);
}

static void test_probe_bad_args(void **state)
{
	(void)state;
	assert_int_equal(virtio_net_probe(NULL, FAKE_VNET_BASE, 0, "x"), -HAL_EINVAL);
	assert_int_equal(virtio_net_probe(&dev, 0, 0, "x"), -HAL_EINVAL);
	assert_int_equal(fake_vnet_access_count(), 0);
}

static void test_probe_no_mac_feature(void **state)
{
	(void)state;
	fake_vnet_params()->features = F_V1 | VIRTIO_FEATURE(VIRTIO_NET_F_STATUS);
	probe_ok();
	assert_int_equal(fake_vnet_driver_features(), F_V1);
	assert_memory_not_equal(eth->mac, fake_vnet_params()->mac, HAL_ETH_ALEN);
	assert_int_equal(eth->mac[0] & 0x01, 0);      /* unicast */
	assert_int_equal(eth->mac[0] & 0x02, 0x02);   /* locally administered */
	assert_no_violations();
}

static void test_probe_mac_changes_during_read(void **state)
{
	static const uint8_t new_mac[6] = { 0x02, 0xde, 0xad, 0xbe, 0xef, 0x01 };
	(void)state;

	fake_vnet_params()->mac_change_at_read = 4;
	memcpy(fake_vnet_params()->new_mac, new_mac, sizeof new_mac);
	probe_ok();
	assert_memory_equal(eth->mac, new_mac, sizeof new_mac);
	assert_no_violations();
}

/* QueueNumMax below the ring size: largest power of two that fits, and the
 * smaller rings work through several wrap-arounds. */
static void test_probe_queue_num_max_small(void **state)
{
	(void)state;
	fake_vnet_params()->queue_num_max[VIRTIO_NET_QUEUE_RX] = 24;
	fake_vnet_params()->queue_num_max[VIRTIO_NET_QUEUE_TX] = 5;
	probe_ok();
	assert_int_equal(fake_vnet_queue(0)->num, 16);
	assert_int_equal(fake_vnet_queue(1)->num, 4);
	assert_int_equal(fake_vnet_rx_posted(VIRTIO_NET_HDR_LEN + MAX_FRAME), 16);

	fake_vnet_params()->tx_hold = 1;
	for (uint32_t s = 0; s < 4; s++)
		send_ok(64, s);
	make_frame(frame, 64, 4);
	assert_int_equal(eth->ops->tx(eth, frame, 64), -HAL_EAGAIN);
	assert_int_equal(fake_vnet_process_tx(), 4);
	fake_vnet_params()->tx_hold = 0;
	for (uint32_t s = 4; s < 3 * 16 + 3; s++) {
		send_ok(seq_len(s), s);
		eth->ops->poll(eth);
	}
	for (uint32_t s = 0; s < 3 * 16 + 3; s++)
		expect_tx(s, s < 4 ? 64 : seq_len(s), s);

	for (uint32_t s = 0; s < 16; s++)
		inject_ok(100, s);
	make_frame(frame, 100, 99);
	assert_int_equal(fake_vnet_inject_rx(frame, 100), -1);   /* only 16 posted */
	for (uint32_t s = 0; s < 16; s++)
		receive_expect(100, s);
	for (uint32_t s = 16; s < 3 * 16 + 3; s++) {
		inject_ok(seq_len(s), s);
		receive_expect(seq_len(s), s);
	}
	assert_no_violations();
}

/* ---- TX --------------------------------------------------------------- */

static void test_tx_short_frame_padded(void **state)
{
	(void)state;
	probe_ok();
	memset(dev.tx_buf, 0xa5, sizeof dev.tx_buf);   /* stale bytes must not leak */

	send_ok(42, 1);
	assert_int_equal(fake_vnet_tx_count(), 1);
	expect_tx(0, 42, 1);
	assert_int_equal(eth->stats.tx_frames, 1);
	assert_int_equal(eth->stats.tx_bytes, 60);
	assert_int_equal(fake_vnet_notify_count(VIRTIO_NET_QUEUE_TX), 1);

	send_ok(0, 2);
	send_ok(59, 3);
	send_ok(60, 4);
	send_ok(61, 5);
	assert_int_equal(fake_vnet_tx_count(), 5);
	expect_tx(1, 0, 2);
	expect_tx(2, 59, 3);
	expect_tx(3, 60, 4);
	expect_tx(4, 61, 5);
	assert_no_violations();
}

static void test_tx_jumbo(void **state)
{
	(void)state;
	probe_ok();
	send_ok(MAX_FRAME, 7);
	assert_int_equal(fake_vnet_tx_count(), 1);
	expect_tx(0, MAX_FRAME, 7);
	assert_int_equal(eth->stats.tx_bytes, MAX_FRAME);
	assert_no_violations();
}

static void test_tx_too_long(void **state)
{
	(void)state;
	probe_ok();
	make_frame(frame, MAX_FRAME + 1, 1);
	assert_int_equal(eth->ops->tx(eth, frame, MAX_FRAME + 1), -HAL_E2BIG);
	assert_int_equal(eth->stats.tx_too_long, 1);
	assert_int_equal(eth->stats.tx_frames, 0);
	assert_int_equal(fake_vnet_tx_count(), 0);
	assert_int_equal(fake_vnet_notify_count(VIRTIO_NET_QUEUE_TX), 0);
	send_ok(100, 2);
	expect_tx(0, 100, 2);
	assert_no_violations();
}

/* Fill the ring while the device holds TX, check EAGAIN, complete, reclaim
 * with `reclaim` (NULL: tx() reclaims by itself), then the ring is full-size
 * again. */
static void tx_full_and_recover(void (*reclaim)(void))
{
	uint32_t seq = 0;

	probe_ok();
	fake_vnet_params()->tx_hold = 1;
	for (unsigned i = 0; i < TXQ; i++)
		send_ok(seq_len(seq), seq), seq++;
	make_frame(frame, 80, seq);
	assert_int_equal(eth->ops->tx(eth, frame, 80), -HAL_EAGAIN);
	assert_int_equal(eth->stats.tx_busy, 1);
	assert_int_equal(eth->stats.tx_frames, TXQ);
	assert_int_equal(fake_vnet_tx_count(), 0);

	assert_int_equal(fake_vnet_process_tx(), TXQ);
	if (reclaim)
		reclaim();
	for (unsigned i = 0; i < TXQ; i++)
		send_ok(seq_len(seq), seq), seq++;
	assert_int_equal(eth->ops->tx(eth, frame, 80), -HAL_EAGAIN);
	assert_int_equal(eth->stats.tx_busy, 2);
	assert_int_equal(fake_vnet_process_tx(), TXQ);

	assert_int_equal(fake_vnet_tx_count(), 2 * TXQ);
	for (uint32_t s = 0; s < 2 * TXQ; s++)
		expect_tx(s, seq_len(s), s);
	assert_no_violations();
}

static void reclaim_by_irq(void)
{
	virtio_net_irq(&dev);
	assert_int_equal(fake_vnet_last_ack(), VIRTIO_MMIO_INT_USED_BUFFER);
	assert_int_equal(dev.tx_free_count, TXQ);
}

static void reclaim_by_poll(void)
{
	eth->ops->poll(eth);
	assert_int_equal(fake_vnet_isr(), 0);
	assert_int_equal(dev.tx_free_count, TXQ);
}

static void test_tx_ring_full_irq(void **state)
{
	(void)state;
	tx_full_and_recover(reclaim_by_irq);
}

static void test_tx_ring_full_poll(void **state)
{
	(void)state;
	tx_full_and_recover(reclaim_by_poll);
}

static void test_tx_ring_full_tx_reclaims(void **state)
{
	(void)state;
	tx_full_and_recover(NULL);
}

/* The device may return TX buffers in any order (2.6.8). */
static void test_tx_out_of_order_completion(void **state)
{
	uint32_t seq = 0;
	(void)state;

	probe_ok();
	fake_vnet_params()->tx_hold = 1;
	fake_vnet_params()->tx_complete_reverse = 1;
	for (unsigned i = 0; i < 8; i++)
		send_ok(seq_len(seq), seq), seq++;
	assert_int_equal(fake_vnet_process_tx(), 8);
	virtio_net_irq(&dev);
	for (unsigned i = 0; i < TXQ; i++)
		send_ok(seq_len(seq), seq), seq++;
	make_frame(frame, 80, seq);
	assert_int_equal(eth->ops->tx(eth, frame, 80), -HAL_EAGAIN);
	assert_int_equal(fake_vnet_process_tx(), TXQ);
	for (uint32_t s = 0; s < seq; s++)
		expect_tx(s, seq_len(s), s);
	assert_int_equal(dev.counters.bad_used, 0);
	assert_no_violations();
}

static void test_tx_honours_no_notify(void **state)
{
	(void)state;
	probe_ok();
	fake_vnet_set_used_flags(VIRTIO_NET_QUEUE_TX, VIRTQ_USED_F_NO_NOTIFY);
	send_ok(60, 1);
	assert_int_equal(fake_vnet_notify_count(VIRTIO_NET_QUEUE_TX), 0);
	assert_int_equal(dev.txq.kicks_suppressed, 1);
	assert_int_equal(fake_vnet_process_tx(), 1);
	expect_tx(0, 60, 1);

	fake_vnet_set_used_flags(VIRTIO_NET_QUEUE_TX, 0);
	send_ok(60, 2);
	assert_int_equal(fake_vnet_notify_count(VIRTIO_NET_QUEUE_TX), 1);
	expect_tx(1, 60, 2);
	assert_no_violations();
}

/* ---- wrap-around ------------------------------------------------------ */

/* > 3 ring lengths each way, every frame checked byte for byte. */
static void test_wraparound(void **state)
{
	const uint32_t n = 3 * (RXQ > TXQ ? RXQ : TXQ) + 17;
	(void)state;

	probe_ok();
	for (uint32_t s = 0; s < n; s++) {
		send_ok(seq_len(s), s);
		if (s % 3 == 0)
			eth->ops->poll(eth);
		assert_int_equal(fake_vnet_tx_count(), s + 1);
		expect_tx(s, seq_len(s), s);

		inject_ok(seq_len(s + 1000), s + 1000);
		assert_int_equal(eth->ops->rx_pending(eth), 1);
		receive_expect(seq_len(s + 1000), s + 1000);
	}
	/* Whole RX ring filled, then drained in order. */
	for (uint32_t s = 0; s < RXQ; s++)
		inject_ok(seq_len(s), s);
	make_frame(frame, 64, 0);
	assert_int_equal(fake_vnet_inject_rx(frame, 64), -1);
	for (uint32_t s = 0; s < RXQ; s++)
		receive_expect(seq_len(s), s);
	assert_int_equal(eth->ops->rx(eth, rxbuf, sizeof rxbuf), 0);

	assert_int_equal(eth->stats.tx_frames, n);
	assert_int_equal(eth->stats.rx_frames, n + RXQ);
	assert_int_equal(eth->stats.rx_dropped + eth->stats.rx_too_long, 0);
	assert_int_equal(fake_vnet_rx_posted(VIRTIO_NET_HDR_LEN + MAX_FRAME), RXQ);
	assert_no_violations();
}

/* The free-running 16-bit avail/used indices wrap at 65536. */
static void test_index_wrap_16bit(void **state)
{
	(void)state;
	probe_ok();
	for (uint32_t s = 0; s < 70000; s++) {
		send_ok(60 + s % 8, s);
		expect_tx(0, 60 + s % 8, s);
		fake_vnet_tx_clear();
		if (s % 8 == 7)
			eth->ops->poll(eth);
		inject_ok(60 + s % 5, s);
		receive_expect(60 + s % 5, s);
	}
	assert_true(fake_vnet_queue(VIRTIO_NET_QUEUE_TX)->used_idx < 70000 - 65536 + 1);
	assert_no_violations();
}

/* ---- RX --------------------------------------------------------------- */

static void test_rx_cap_too_small(void **state)
{
	unsigned kicks;
	(void)state;

	probe_ok();
	inject_ok(100, 1);
	kicks = fake_vnet_notify_count(VIRTIO_NET_QUEUE_RX);
	assert_int_equal(eth->ops->rx(eth, rxbuf, 99), -HAL_E2BIG);
	assert_int_equal(eth->stats.rx_too_long, 1);
	assert_int_equal(eth->stats.rx_frames, 0);
	assert_int_equal(eth->ops->rx_pending(eth), 0);
	assert_int_equal(fake_vnet_rx_posted(VIRTIO_NET_HDR_LEN + MAX_FRAME), RXQ);
	assert_int_equal(fake_vnet_notify_count(VIRTIO_NET_QUEUE_RX), kicks + 1);

	inject_ok(100, 2);
	make_frame(frame, 100, 2);
	assert_int_equal(eth->ops->rx(eth, rxbuf, 100), 100);
	assert_memory_equal(rxbuf, frame, 100);
	for (uint32_t s = 3; s < 3 + 2 * RXQ; s++) {
		inject_ok(seq_len(s), s);
		receive_expect(seq_len(s), s);
	}
	assert_no_violations();
}

/* A bad used element is dropped and counted, its buffer goes back, and the
 * ring keeps its full size (the next 2 * RXQ frames all arrive). */
static void rx_bad_used(int set_id, uint32_t id, int set_len, uint32_t len, int err,
			uint64_t bad_used, uint64_t runt)
{
	probe_ok();
	inject_ok(200, 1);
	receive_expect(200, 1);

	fake_vnet_corrupt_next_rx(set_id, id, set_len, len);
	inject_ok(300, 2);
	assert_int_equal(eth->ops->rx_pending(eth), 1);
	assert_int_equal(eth->ops->rx(eth, rxbuf, sizeof rxbuf), err);
	assert_int_equal(dev.counters.bad_used, bad_used);
	assert_int_equal(dev.counters.rx_runt, runt);
	assert_int_equal(eth->stats.rx_dropped, 1);
	assert_int_equal(eth->stats.rx_frames, 1);
	assert_int_equal(eth->ops->rx_pending(eth), 0);
	assert_int_equal(fake_vnet_rx_posted(VIRTIO_NET_HDR_LEN + MAX_FRAME), RXQ);

	for (uint32_t s = 3; s < 3 + 2 * RXQ; s++) {
		inject_ok(seq_len(s), s);
		receive_expect(seq_len(s), s);
	}
	assert_int_equal(eth->stats.rx_dropped, 1);
	assert_no_violations();
}

static void test_rx_used_id_out_of_range(void **state)
{
	(void)state;
	rx_bad_used(1, RXQ, 0, 0, -HAL_EIO, 1, 0);
}

static void test_rx_used_id_huge(void **state)
{
	(void)state;
	rx_bad_used(1, 0xffffffffu, 0, 0, -HAL_EIO, 1, 0);
}

static void test_rx_used_len_too_big(void **state)
{
	(void)state;
	rx_bad_used(0, 0, 1, VIRTIO_NET_HDR_LEN + MAX_FRAME + 1, -HAL_EIO, 1, 0);
}

static void test_rx_used_len_huge(void **state)
{
	(void)state;
	rx_bad_used(0, 0, 1, 0xffffffffu, -HAL_EIO, 1, 0);
}

static void test_rx_used_len_below_header(void **state)
{
	(void)state;
	rx_bad_used(0, 0, 1, VIRTIO_NET_HDR_LEN - 1, -HAL_EIO, 1, 0);
}

static void test_rx_used_len_zero(void **state)
{
	(void)state;
	rx_bad_used(0, 0, 1, 0, -HAL_EIO, 1, 0);
}

/* Header only, or shorter than an Ethernet header: dropped as a runt (not
 * a ring error), and never returned as 0 ("nothing pending"). */
static void test_rx_runt(void **state)
{
	(void)state;
	rx_bad_used(0, 0, 1, VIRTIO_NET_HDR_LEN, -HAL_EINVAL, 0, 1);
}

static void test_rx_used_len_boundaries(void **state)
{
	(void)state;
	probe_ok();
	inject_ok(MAX_FRAME, 1);
	receive_expect(MAX_FRAME, 1);
	inject_ok(14, 2);
	receive_expect(14, 2);
	fake_vnet_corrupt_next_rx(0, 0, 1, VIRTIO_NET_HDR_LEN + 13);
	inject_ok(14, 3);
	assert_int_equal(eth->ops->rx(eth, rxbuf, sizeof rxbuf), -HAL_EINVAL);
	assert_int_equal(eth->stats.rx_frames, 2);
	assert_int_equal(dev.counters.bad_used, 0);
	assert_no_violations();
}

static void test_rx_pending(void **state)
{
	(void)state;
	probe_ok();
	assert_int_equal(eth->ops->rx_pending(eth), 0);
	inject_ok(70, 1);
	assert_int_equal(eth->ops->rx_pending(eth), 1);
	assert_int_equal(eth->ops->rx_pending(eth), 1);   /* asking does not consume */
	inject_ok(80, 2);
	receive_expect(70, 1);
	assert_int_equal(eth->ops->rx_pending(eth), 1);
	receive_expect(80, 2);
	assert_int_equal(eth->ops->rx_pending(eth), 0);
	assert_int_equal(eth->ops->rx(eth, rxbuf, sizeof rxbuf), 0);
	assert_int_equal(eth->stats.rx_frames, 2);
	assert_int_equal(eth->stats.rx_bytes, 150);
	assert_no_violations();
}

/* ---- hostile TX completions and indices -------------------------------- */

static void test_tx_bad_used(void **state)
{
	(void)state;
	probe_ok();
	send_ok(60, 1);                       /* descriptor completed properly */
	virtio_net_irq(&dev);
	fake_vnet_tx_complete_bogus(TXQ);
	fake_vnet_tx_complete_bogus(0xffffffffu);
	fake_vnet_tx_complete_bogus(0);       /* not in flight any more */
	virtio_net_irq(&dev);
	assert_int_equal(dev.counters.bad_used, 3);
	assert_int_equal(dev.tx_free_count, TXQ);

	/* Free list intact: exactly TXQ sends fit while the device holds TX. */
	fake_vnet_params()->tx_hold = 1;
	for (uint32_t s = 0; s < TXQ; s++)
		send_ok(seq_len(s), s + 10);
	make_frame(frame, 60, 99);
	assert_int_equal(eth->ops->tx(eth, frame, 60), -HAL_EAGAIN);
	assert_int_equal(fake_vnet_process_tx(), TXQ);
	for (uint32_t s = 0; s < TXQ; s++)
		expect_tx(1 + s, seq_len(s), s + 10);
	assert_no_violations();
}

static void test_rx_used_idx_runaway(void **state)
{
	(void)state;
	probe_ok();
	fake_vnet_bump_used_idx(VIRTIO_NET_QUEUE_RX, RXQ + 1);
	assert_int_equal(eth->ops->rx(eth, rxbuf, sizeof rxbuf), 0);
	assert_int_equal(dev.counters.bad_used_idx, 1);
	assert_int_equal(eth->ops->rx_pending(eth), 0);
	assert_int_equal(eth->ops->rx(eth, rxbuf, sizeof rxbuf), 0);
	make_frame(frame, 60, 1);
	assert_int_equal(eth->ops->tx(eth, frame, 60), -HAL_EIO);
	assert_int_equal(fake_vnet_tx_count(), 0);
	assert_no_violations();
}

static void test_tx_used_idx_runaway(void **state)
{
	(void)state;
	probe_ok();
	fake_vnet_bump_used_idx(VIRTIO_NET_QUEUE_TX, 1000);
	virtio_net_irq(&dev);
	assert_int_equal(dev.counters.bad_used_idx, 1);
	assert_int_equal(dev.tx_free_count, TXQ);
	make_frame(frame, 60, 1);
	assert_int_equal(eth->ops->tx(eth, frame, 60), -HAL_EIO);
	assert_int_equal(fake_vnet_tx_count(), 0);
	assert_no_violations();
}

/* ---- interrupt -------------------------------------------------------- */

static void test_irq_ack(void **state)
{
	(void)state;
	probe_ok();
	fake_vnet_raise_isr(VIRTIO_MMIO_INT_USED_BUFFER | VIRTIO_MMIO_INT_CONFIG_CHANGE);
	virtio_net_irq(&dev);
	assert_int_equal(fake_vnet_ack_count(), 1);
	assert_int_equal(fake_vnet_last_ack(),
			 VIRTIO_MMIO_INT_USED_BUFFER | VIRTIO_MMIO_INT_CONFIG_CHANGE);
	assert_int_equal(fake_vnet_isr(), 0);
	assert_int_equal(dev.counters.config_changes, 1);

	virtio_net_irq(&dev);                 /* nothing pending: no ACK write */
	assert_int_equal(fake_vnet_ack_count(), 1);

	fake_vnet_raise_isr(VIRTIO_MMIO_INT_CONFIG_CHANGE);
	virtio_net_irq(&dev);
	assert_int_equal(fake_vnet_ack_count(), 2);
	assert_int_equal(fake_vnet_last_ack(), VIRTIO_MMIO_INT_CONFIG_CHANGE);

	fake_vnet_params()->tx_hold = 1;
	send_ok(60, 1);
	assert_int_equal(dev.tx_free_count, TXQ - 1);
	fake_vnet_process_tx();
	assert_int_equal(fake_vnet_isr(), VIRTIO_MMIO_INT_USED_BUFFER);
	virtio_net_irq(&dev);
	assert_int_equal(fake_vnet_last_ack(), VIRTIO_MMIO_INT_USED_BUFFER);
	assert_int_equal(fake_vnet_isr(), 0);
	assert_int_equal(dev.tx_free_count, TXQ);
	assert_int_equal(dev.counters.irqs, 3);
	assert_no_violations();
}

static void test_device_needs_reset(void **state)
{
	(void)state;
	probe_ok();
	inject_ok(60, 1);
	fake_vnet_set_needs_reset();
	virtio_net_irq(&dev);
	assert_int_equal(dev.counters.needs_reset, 1);
	assert_int_equal(eth->ops->rx_pending(eth), 0);
	assert_int_equal(eth->ops->rx(eth, rxbuf, sizeof rxbuf), 0);
	make_frame(frame, 60, 1);
	assert_int_equal(eth->ops->tx(eth, frame, 60), -HAL_EIO);
	assert_no_violations();
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_probe_success),
		T(test_probe_bad_magic),
		T(test_probe_empty_slot),
		T(test_probe_not_net),
		T(test_probe_legacy),
		T(test_probe_no_version_1),
		T(test_probe_features_ok_refused),
		T(test_probe_rx_queue_num_max_zero),
		T(test_probe_tx_queue_num_max_zero),
		T(test_probe_bad_args),
		T(test_probe_no_mac_feature),
		T(test_probe_mac_changes_during_read),
		T(test_probe_queue_num_max_small),
		T(test_tx_short_frame_padded),
		T(test_tx_jumbo),
		T(test_tx_too_long),
		T(test_tx_ring_full_irq),
		T(test_tx_ring_full_poll),
		T(test_tx_ring_full_tx_reclaims),
		T(test_tx_out_of_order_completion),
		T(test_tx_honours_no_notify),
		T(test_wraparound),
		T(test_index_wrap_16bit),
		T(test_rx_cap_too_small),
		T(test_rx_used_id_out_of_range),
		T(test_rx_used_id_huge),
		T(test_rx_used_len_too_big),
		T(test_rx_used_len_huge),
		T(test_rx_used_len_below_header),
		T(test_rx_used_len_zero),
		T(test_rx_runt),
		T(test_rx_used_len_boundaries),
		T(test_rx_pending),
		T(test_tx_bad_used),
		T(test_rx_used_idx_runaway),
		T(test_tx_used_idx_runaway),
		T(test_irq_ack),
		T(test_device_needs_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
