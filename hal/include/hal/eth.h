/* Ethernet port interface (ops table).
 *
 * Frames are plain Ethernet II frames without FCS.  A port is
 * interrupt-driven on the boards (the event loop calls ->poll when the
 * port's interrupt fired) and descriptor-driven on POSIX; in both cases
 * the loop asks ->rx for one frame at a time until it returns 0.
 */
#ifndef HAL_ETH_H
#define HAL_ETH_H

#include <stddef.h>
#include <stdint.h>

#define HAL_ETH_ALEN 6
#define HAL_ETH_MIN_FRAME 60u    /* without FCS; shorter frames are padded */
#define HAL_ETH_MAX_FRAME 9018u  /* jumbo: 9000 MTU + 14 header + 4 VLAN */

struct hal_eth_stats {
	uint64_t tx_frames, tx_bytes, tx_busy, tx_too_long;
	uint64_t rx_frames, rx_bytes, rx_too_long, rx_dropped;
};

struct hal_eth;

struct hal_eth_ops {
	/* Queue one frame for transmit.  Returns 0, -HAL_EAGAIN when the ring is
	 * full (caller keeps the frame) or another negative error. */
	int (*tx)(struct hal_eth *eth, const void *frame, size_t len);
	/* Copy the next received frame into buf.  Returns its length, 0 if
	 * none is pending, or a negative error (frame dropped and counted). */
	int (*rx)(struct hal_eth *eth, void *buf, size_t cap);
	/* Reclaim completed transmits, acknowledge the interrupt, re-arm. */
	void (*poll)(struct hal_eth *eth);
	/* Non-zero when ->rx would return a frame (used to decide to sleep). */
	int (*rx_pending)(struct hal_eth *eth);
};

struct hal_eth {
	const struct hal_eth_ops *ops;
	const char *name;
	uint8_t mac[HAL_ETH_ALEN];
	struct hal_eth_stats stats;
	void *priv;
};

static inline int hal_eth_tx(struct hal_eth *e, const void *f, size_t n)
{
	return e->ops->tx(e, f, n);
}
static inline int hal_eth_rx(struct hal_eth *e, void *b, size_t cap)
{
	return e->ops->rx(e, b, cap);
}

#endif
