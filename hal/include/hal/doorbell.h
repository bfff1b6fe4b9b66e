/* A doorbell channel between the host and the NIC (ops table): the host's
 * doorbell reaches the firmware as an event, and the firmware interrupts
 * the host on a vector, as a PCIe NIC's doorbell register and MSI-X do.
 *
 * A platform that has one sets hal_platform.doorbell; the event loop then
 * serves a rung doorbell in the iteration that sees it (firmware/loop.h),
 * and polls the BAR only as a fallback, every db_max_us, for hosts that
 * never ring.  Without one (doorbell NULL: a QEMU board whose host BAR
 * is an ivshmem-plain) the loop polls the BAR on its adaptive timer alone.
 *   POSIX: hal/posix/doorbell.c, a unix socket next to the BAR file that
 *   hands out eventfds (the protocol: mnic/dbch.h).
 *   QEMU boards: hal/qemu-virt/ivshmem.c, the ivshmem-doorbell device:
 *   hosts ring its MSI-X vector 0 (a GICv2m SPI), the NIC interrupts a
 *   host by writing its Doorbell register (peer ID << 16 | vector); the
 *   peers' eventfds come from qemu-board's mnic-ivshmem-server.
 */
#ifndef HAL_DOORBELL_H
#define HAL_DOORBELL_H

#include <stdint.h>

/* Host vectors.  0: the command queue (an entry completed, or its status
 * changed); 1..: the event queues of completion events (an EQE written,
 * rocev2/eq.c through the engine's env.raise, firmware/engine.c). */
#define HAL_DOORBELL_VEC_CMD 0u

/* Channel counters, an X-macro list as HAL_ETH_STATS (QUERY_COUNTERS
 * op_mod PORT: dbch_<name>).  Every refusal has its own. */
#define HAL_DOORBELL_STATS(X)                                                  \
	X(rings)              /* rang() reported a ring */                     \
	X(raises)             /* host vectors written */                       \
	X(raise_failed)       /* a host vector that could not be written */    \
	X(hosts_connected)                                                     \
	X(hosts_disconnected) /* went away (EOF) */                            \
	X(hosts_refused)      /* no room, or the welcome could not be sent */  \
	X(hosts_dropped)      /* a reply could not be sent: disconnected */    \
	X(bad_messages)       /* wrong size, magic, version or type */         \
	X(bad_fds)            /* not exactly one eventfd with a VECTOR */      \
	X(bad_vectors)        /* a vector the channel does not raise */

struct hal_doorbell_stats {
#define HAL_DOORBELL_STAT_FIELD_(name) uint64_t name;
	HAL_DOORBELL_STATS(HAL_DOORBELL_STAT_FIELD_)
#undef HAL_DOORBELL_STAT_FIELD_
};

struct hal_doorbell;

struct hal_doorbell_ops {
	/* Non-zero when a host rang since the last call; the ring is consumed.
	 * Called once per loop iteration, so it must be cheap.  Ordering: the
	 * host stores into the BAR before it rings, and the firmware reads the
	 * BAR after rang() returned, so every store the ring announces is seen
	 * (a ring that lands after rang() is reported by the next call). */
	int (*rang)(struct hal_doorbell *d);
	/* Interrupt every host that asked for vector (< n_vectors).  Never
	 * blocks; 0, or -HAL_EINVAL for a vector out of range. */
	int (*raise)(struct hal_doorbell *d, unsigned vector);
};

#define HAL_DOORBELL_NO_ID 0xffffffffu
#define HAL_DOORBELL_MAX_HOSTS 8u

struct hal_doorbell {
	const struct hal_doorbell_ops *ops;
	unsigned n_vectors;             /* vectors 0 .. n_vectors - 1 */
	/* This NIC's ID among the channel's peers, for hosts that must name
	 * it to ring it (ivshmem: IVPosition; the firmware publishes it in the
	 * init segment, mnic/abi.h irq_nic_id); HAL_DOORBELL_NO_ID: hosts need
	 * none (POSIX: the socket is the NIC's). */
	uint32_t self_id;
	/* Where the channel cannot tell which peers are hosts (ivshmem: every
	 * peer is just an ID), raise() interrupts the IDs in hosts
	 * (HAL_DOORBELL_NO_ID: an empty slot), which the firmware copies from
	 * the init segment (irq_host_ids) before it raises.  Unused on POSIX
	 * (hosts register their eventfds). */
	uint32_t hosts[HAL_DOORBELL_MAX_HOSTS];
	/* 1: every host store the NIC must act on is followed by a ring (the
	 * POSIX channel, libmnic's BAR backend), so the BAR poll is only the
	 * slow fallback (db_max_us).  0: some hosts store without ringing (a
	 * host VM's applications write db_seq through their mapping of the
	 * doorbell page, which holds no Doorbell register): the loop keeps
	 * its adaptive poll and serves rings at once as well. */
	uint8_t every_store_rings;
	struct hal_doorbell_stats stats;
	void *priv;
};

static inline int hal_doorbell_rang(struct hal_doorbell *d)
{
	return d->ops->rang(d);
}

static inline int hal_doorbell_raise(struct hal_doorbell *d, unsigned vector)
{
	return d->ops->raise(d, vector);
}

#endif
