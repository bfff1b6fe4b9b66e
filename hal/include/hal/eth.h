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

/* Port counters, an X-macro list as rocev2/counters.h: one line adds the
 * field and its name (QUERY_COUNTERS op_mod PORT: eth<port>_<name>). */
#define HAL_ETH_STATS(X)                                                        \
	X(tx_frames) X(tx_bytes) X(tx_busy) X(tx_too_long)                      \
	X(rx_frames) X(rx_bytes) X(rx_too_long) X(rx_dropped)

struct hal_eth_stats {
#define HAL_ETH_STAT_FIELD_(name) uint64_t name;
	HAL_ETH_STATS(HAL_ETH_STAT_FIELD_)
#undef HAL_ETH_STAT_FIELD_
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
