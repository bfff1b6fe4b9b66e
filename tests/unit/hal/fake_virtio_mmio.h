/* Behavioural model of a virtio-mmio (Version 2) network device for unit
 * tests.  It implements the HAL_MMIO_HOOKS accessors of hal/mmio.h: accesses
 * inside [FAKE_VNET_BASE, FAKE_VNET_BASE + FAKE_VNET_WINDOW) reach the model,
 * which reads and writes the driver's rings at the addresses the driver
 * programmed (physical == CPU address, as on the boards with the MMU off).
 *
 * The model parses rings from raw bytes at the offsets of virtio 1.1 2.6,
 * not through the driver's structs, so a layout mistake in the driver shows.
 * Whatever the driver does against the spec (wrong access width, notify
 * before DRIVER_OK, queue registers written while ready, too many buffers
 * made available, ...) is counted as a violation; tests assert none.
 */
#ifndef FAKE_VIRTIO_MMIO_H
#define FAKE_VIRTIO_MMIO_H

#include <stddef.h>
#include <stdint.h>

#define FAKE_VNET_BASE    ((uintptr_t)0x0a003e00u)   /* QEMU virt slot 31 */
#define FAKE_VNET_WINDOW  0x200u
#define FAKE_VNET_NQUEUES 2u
#define FAKE_VNET_TX_MAX  256u                        /* frames kept */
#define FAKE_VNET_LOG_MAX 64u
#define FAKE_VNET_FRAME_MAX 9018u

/* Identity and behaviour; fake_vnet_reset() restores the defaults (a
 * well-behaved modern net device offering VERSION_1, MAC, STATUS, CSUM,
 * MRG_RXBUF and CTRL_VQ, QueueNumMax 256). */
struct fake_vnet_params {
	uint32_t magic, version, device_id, vendor_id;
	uint64_t features;                  /* offered */
	uint32_t queue_num_max[FAKE_VNET_NQUEUES];
	int refuse_features_ok;             /* never keep FEATURES_OK */
	uint8_t mac[6];
	int tx_hold;                        /* TX notify does nothing; see fake_vnet_process_tx */
	int tx_complete_reverse;            /* return a TX batch in reverse order */
	unsigned mac_change_at_read;        /* 0 never; n: during the n-th config read the
	                                       MAC becomes new_mac and the generation bumps */
	uint8_t new_mac[6];
};

struct fake_vnet_queue_view {
	uint32_t num, ready;
	uint64_t desc, driver, device;
	uint16_t last_avail;                /* device side */
	uint16_t used_idx;                  /* device side */
};

struct fake_vnet_notify {
	uint32_t queue;
	uint32_t status;                    /* device status when it arrived */
};

void fake_vnet_reset(void);
struct fake_vnet_params *fake_vnet_params(void);

/* What the driver did. */
uint32_t fake_vnet_status(void);
unsigned fake_vnet_status_log(const uint32_t **log);
uint64_t fake_vnet_driver_features(void);
const struct fake_vnet_queue_view *fake_vnet_queue(unsigned q);
unsigned fake_vnet_notify_log(const struct fake_vnet_notify **log);
unsigned fake_vnet_notify_count(unsigned q);
unsigned fake_vnet_ack_count(void);
uint32_t fake_vnet_last_ack(void);
uint32_t fake_vnet_isr(void);
unsigned fake_vnet_access_count(void);   /* every hook call at the base */
unsigned fake_vnet_violations(void);
const char *fake_vnet_last_violation(void);

/* TX: frames the device has consumed, header stripped and kept apart. */
unsigned fake_vnet_tx_count(void);
const uint8_t *fake_vnet_tx_frame(unsigned i, size_t *len, const uint8_t **hdr);
void fake_vnet_tx_clear(void);
unsigned fake_vnet_process_tx(void);    /* the device polls TX now; returns frames done */
void fake_vnet_tx_complete_bogus(uint32_t id);   /* a used element naming id */

/* RX: returns 0, -1 if no buffer is posted, -2 if the frame does not fit. */
int fake_vnet_inject_rx(const void *frame, size_t len);
/* The next injection writes these into its used element instead of the
 * truth (the frame still goes into the real buffer as far as it fits). */
void fake_vnet_corrupt_next_rx(int set_id, uint32_t id, int set_len, uint32_t len);
/* Buffers posted and not yet used; each is checked (device-writable, one
 * descriptor, len >= min_len, no id posted twice); -1 on a bad one. */
int fake_vnet_rx_posted(size_t min_len);

/* Device events. */
void fake_vnet_raise_isr(uint32_t bits);
void fake_vnet_set_used_flags(unsigned q, uint16_t flags);
void fake_vnet_bump_used_idx(unsigned q, uint16_t delta);
void fake_vnet_set_needs_reset(void);

#endif
