/* The command transport of the BAR backend: libmnic drives the command
 * queue (mnic/cmd.h) itself, as the mlx5 core driver does
 * (drivers/net/ethernet/mellanox/mlx5/core/cmd.c: cmd_work_handler,
 * mlx5_alloc_cmd_msg), with one command in flight per NIC: every command
 * holds flock(LOCK_EX) on the BAR file, so processes sharing a NIC take
 * turns and the driver area (ring + mailboxes) is never shared.
 *
 * A queue whose indices disagree with what libmnic issued (cmdq_pi moved
 * past an entry nobody handed over, cmdq_ci overwritten, the doorbell moved
 * under a command in flight) is resynchronised by the reset handshake with
 * the firmware (docs/host-interface.md, "Resynchronisation"): cmdq_ctrl = 0,
 * OFF with ci = pi, enable again; a command the reset found unserved is
 * issued once more.  Every step is bounded by the command timeout.
 *
 * Driver-area layout used here (window addresses):
 *   [0, 64 * 64)                   the ring (log size MNIC_CMDQ_MAX_LOG_SIZE)
 *   [MNIC_CMD_MBOX_AREA, ...)      input mailbox chain, then output chain
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>

#include "libmnic_int.h"

uint32_t mnic_cmdq_blocks(uint32_t len)
{
	return len > MNIC_CMD_INLINE_LEN ?
		       (len - MNIC_CMD_INLINE_LEN + MNIC_CMD_MBOX_DATA - 1) / MNIC_CMD_MBOX_DATA :
		       0;
}

static uint64_t mbox_addr(uint32_t i)
{
	return MNIC_CMD_MBOX_AREA + (uint64_t)i * MNIC_CMD_MBOX_SIZE;
}

/* Fill `n` blocks starting at block slot `first` as one chain. */
static void build_chain(uint8_t *drv, uint32_t first, uint32_t n, uint8_t token,
			const uint8_t *data, uint32_t data_len)
{
	for (uint32_t i = 0; i < n; i++) {
		struct mnic_cmd_mailbox *mb = (struct mnic_cmd_mailbox *)(drv + mbox_addr(first + i));
		uint32_t off = i * MNIC_CMD_MBOX_DATA;
		uint32_t chunk = 0;

		memset(mb, 0, sizeof(*mb));
		if (data && off < data_len) {
			chunk = data_len - off;
			if (chunk > MNIC_CMD_MBOX_DATA)
				chunk = MNIC_CMD_MBOX_DATA;
			memcpy(mb->data, data + off, chunk);
		}
		mb->next = i + 1 < n ? mbox_addr(first + i + 1) : 0;
		mb->block_num = i;
		mb->token = token;
	}
}

int mnic_cmdq_build(uint8_t *drv, uint64_t drv_size, struct mnic_cmdq_entry *e,
		    const void *in, uint32_t in_len, uint32_t out_len, uint8_t token)
{
	uint32_t in_blocks, out_blocks;
	const uint8_t *src = in;

	if (in_len < sizeof(struct mnic_cmd_in_hdr) || out_len < sizeof(struct mnic_cmd_out_hdr) ||
	    in_len > MNIC_CMD_MAX_LEN || out_len > MNIC_CMD_MAX_LEN || !in)
		return -EINVAL;
	in_blocks = mnic_cmdq_blocks(in_len);
	out_blocks = mnic_cmdq_blocks(out_len);
	if (drv_size < MNIC_CMD_MBOX_AREA ||
	    (uint64_t)(in_blocks + out_blocks) > (drv_size - MNIC_CMD_MBOX_AREA) / MNIC_CMD_MBOX_SIZE)
		return -E2BIG;

	memset(e, 0, sizeof(*e));
	e->type = MNIC_CMD_TYPE_PCIE;
	e->in_len = in_len;
	e->out_len = out_len;
	e->token = token;
	memcpy(e->in_inline, src, in_len < MNIC_CMD_INLINE_LEN ? in_len : MNIC_CMD_INLINE_LEN);
	if (in_blocks) {
		build_chain(drv, 0, in_blocks, token, src + MNIC_CMD_INLINE_LEN,
			    in_len - MNIC_CMD_INLINE_LEN);
		e->in_mbox = mbox_addr(0);
	}
	if (out_blocks) {
		build_chain(drv, in_blocks, out_blocks, token, NULL, 0);
		e->out_mbox = mbox_addr(in_blocks);
	}
	return 0;
}

int mnic_cmdq_collect(const uint8_t *drv, uint64_t drv_size, const struct mnic_cmdq_entry *e,
		      uint32_t in_len, void *out, uint32_t out_len)
{
	uint32_t in_blocks = mnic_cmdq_blocks(in_len);
	uint32_t out_blocks = mnic_cmdq_blocks(out_len);
	uint8_t *dst = out;

	if (out_len < sizeof(struct mnic_cmd_out_hdr) || out_len > MNIC_CMD_MAX_LEN ||
	    drv_size < MNIC_CMD_MBOX_AREA ||
	    (uint64_t)(in_blocks + out_blocks) > (drv_size - MNIC_CMD_MBOX_AREA) / MNIC_CMD_MBOX_SIZE)
		return -EINVAL;
	memcpy(dst, e->out_inline, out_len < MNIC_CMD_INLINE_LEN ? out_len : MNIC_CMD_INLINE_LEN);
	for (uint32_t i = 0; i < out_blocks; i++) {
		const struct mnic_cmd_mailbox *mb =
			(const struct mnic_cmd_mailbox *)(drv + mbox_addr(in_blocks + i));
		uint32_t off = MNIC_CMD_INLINE_LEN + i * MNIC_CMD_MBOX_DATA;
		uint32_t chunk = out_len - off;

		if (chunk > MNIC_CMD_MBOX_DATA)
			chunk = MNIC_CMD_MBOX_DATA;
		memcpy(dst + off, mb->data, chunk);
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Poll with backoff: spin briefly (a POSIX NIC answers in tens of us), then
 * sleep up to 1 ms between looks. */
static void backoff(uint32_t *round)
{
	struct timespec ts = {0, 0};

	if (*round < 64) {
		(*round)++;
		return;
	}
	ts.tv_nsec = *round < 200 ? 20000 : 1000000;
	if (*round < 200)
		(*round)++;
	nanosleep(&ts, NULL);
}

/* How long one wait on the doorbell channel's vector 0 lasts before the
 * BAR is looked at again anyway: a raise that never comes (a NIC that
 * lost our eventfd) costs this per look, no more. */
#define CMDQ_IRQ_WAIT_MS 5

/* Wait for the NIC to move the command queue: on its vector 0 where it has
 * a doorbell channel (dbch.c), else by polling with backoff.  Either way
 * the caller re-reads the BAR: a wakeup alone proves nothing. */
static void cmdq_wait(struct mnic_dev *dev, uint32_t *round)
{
	if (mnic_dbch_wait(dev, CMDQ_IRQ_WAIT_MS) < 0)
		backoff(round);
}

static volatile struct mnic_init_seg *iseg(struct mnic_dev *dev)
{
	return dev->iseg;
}

/* Latch a ring at window address 0 unless one is running.  A ring running
 * elsewhere belongs to another driver (the kernel module of a VM mapping
 * the same BAR): refused. */
static int cmdq_enable(struct mnic_dev *dev)
{
	volatile struct mnic_init_seg *s = iseg(dev);
	uint64_t deadline = now_ns() + (uint64_t)dev->timeout_ms * 1000000ull;
	uint32_t round = 0;

	if (s->cmdq_status == MNIC_CMDQ_RUNNING) {
		if (s->cmdq_addr != 0 || s->cmdq_log_size > MNIC_CMDQ_MAX_LOG_SIZE) {
			fprintf(stderr,
				"libmnic: %s: the command queue runs at window 0x%llx (log size %u), "
				"not libmnic's: another driver owns it\n",
				dev->path, (unsigned long long)s->cmdq_addr, s->cmdq_log_size);
			return -EBUSY;
		}
		return 0;
	}
	if (s->cmdq_status == MNIC_CMDQ_BAD_CONFIG) {
		/* a refused configuration is only re-latched after a disable */
		s->cmdq_ctrl = 0;
		mnic_dbch_ring(dev);
		while (s->cmdq_status != MNIC_CMDQ_OFF) {
			if (now_ns() > deadline) {
				fprintf(stderr, "libmnic: %s: the firmware did not disable the "
						"command queue within %u ms\n", dev->path, dev->timeout_ms);
				return -ETIMEDOUT;
			}
			cmdq_wait(dev, &round);
		}
	}
	s->cmdq_addr = 0;
	s->cmdq_log_size = MNIC_CMDQ_MAX_LOG_SIZE;
	memset(dev->bar + MNIC_DMA_WINDOW_OFFSET, 0, MNIC_CMD_MBOX_AREA);
	/* configuration and a clean ring visible before the enable bit */
	atomic_thread_fence(memory_order_seq_cst);
	s->cmdq_ctrl = MNIC_CMDQ_CTRL_ENABLE;
	mnic_dbch_ring(dev);
	while (s->cmdq_status != MNIC_CMDQ_RUNNING) {
		if (s->cmdq_status == MNIC_CMDQ_BAD_CONFIG) {
			fprintf(stderr, "libmnic: %s: the firmware refused the command queue "
					"configuration (syndrome 0x%08x)\n",
				dev->path, s->cmdq_syndrome);
			return -EIO;
		}
		if (now_ns() > deadline) {
			fprintf(stderr, "libmnic: %s: the firmware did not start the command queue "
					"within %u ms (is it in run mode?)\n",
				dev->path, dev->timeout_ms);
			return -ETIMEDOUT;
		}
		cmdq_wait(dev, &round);
	}
	atomic_thread_fence(memory_order_acquire);
	return 0;
}

/* How long ci may stay behind pi on an entry the device does not own
 * before the queue counts as out of step.  The firmware flips an entry's
 * owner bit and then, a write barrier later, advances ci: a host looking in
 * between sees that same picture for a moment, so it has to last.  A wrong
 * guess (a firmware descheduled this long right there) costs one harmless
 * reset: the entry is complete, and the reset drops nothing in flight. */
#define CMDQ_SETTLE_NS (20ull * 1000000ull)

static uint8_t slot_own(struct mnic_dev *dev, uint32_t index)
{
	const volatile struct mnic_cmdq_entry *e =
		(const volatile struct mnic_cmdq_entry *)(dev->bar + MNIC_DMA_WINDOW_OFFSET +
							   (uint64_t)(index & (MNIC_CMDQ_MAX_ENTRIES - 1u)) *
								   MNIC_CMDQ_ENTRY_SIZE);

	return e->status_own;
}

/* Wait until the device has completed every entry handed to it (a command
 * left by a process that died or timed out).  0 when idle; -ETIMEDOUT when
 * an entry the device owns is still in service at the deadline; -EPIPE
 * when the queue is out of step: ci stays, for CMDQ_SETTLE_NS, behind pi on
 * an entry the device does not own, so it will never reach pi (cmdq_pi
 * moved past entries nobody handed over, or cmdq_ci was overwritten). */
static int cmdq_wait_idle(struct mnic_dev *dev, uint64_t deadline)
{
	volatile struct mnic_init_seg *s = iseg(dev);
	uint32_t round = 0, ci, pi, stuck_ci = 0, stuck_pi = 0;
	uint64_t stuck_since = 0;
	int stuck = 0;

	for (;;) {
		ci = s->cmdq_ci;
		pi = s->cmdq_pi;
		if (ci == pi)
			break;
		/* the owner bit after ci: the firmware writes them the other way */
		atomic_thread_fence(memory_order_acquire);
		if (slot_own(dev, ci) & MNIC_CMD_OWNER_HW) {
			stuck = 0;
		} else if (!stuck || ci != stuck_ci || pi != stuck_pi) {
			stuck = 1;
			stuck_ci = ci;
			stuck_pi = pi;
			stuck_since = now_ns();
		} else if (now_ns() - stuck_since >= CMDQ_SETTLE_NS) {
			return -EPIPE;
		}
		if (now_ns() > deadline)
			return -ETIMEDOUT;
		cmdq_wait(dev, &round);
	}
	atomic_thread_fence(memory_order_acquire);
	return 0;
}

/* The reset half of the handshake (docs/host-interface.md,
 * "Resynchronisation"): cmdq_ctrl = 0, then wait for OFF.  The firmware
 * looks at cmdq_ctrl only between entries, so one it was serving is
 * answered (owner bit flipped) before it disables; it publishes ci = pi,
 * a write barrier, then OFF.  So once OFF is seen (and an acquire barrier
 * orders the reads after it) nothing is in flight, ci == pi, and every
 * owner bit in the ring is final. */
static int cmdq_reset(struct mnic_dev *dev, const char *why)
{
	volatile struct mnic_init_seg *s = iseg(dev);
	uint64_t deadline = now_ns() + (uint64_t)dev->timeout_ms * 1000000ull;
	uint32_t round = 0;

	fprintf(stderr, "libmnic: %s: the command queue is out of step (%s; ci %u, pi %u): "
			"resetting it\n", dev->path, why, s->cmdq_ci, s->cmdq_pi);
	s->cmdq_ctrl = 0;
	mnic_dbch_ring(dev);
	while (s->cmdq_status != MNIC_CMDQ_OFF) {
		if (now_ns() > deadline) {
			fprintf(stderr, "libmnic: %s: the firmware did not answer the command-queue "
					"reset within %u ms (cmdq_status %u)\n",
				dev->path, dev->timeout_ms, s->cmdq_status);
			return -ETIMEDOUT;
		}
		cmdq_wait(dev, &round);
	}
	atomic_thread_fence(memory_order_acquire);
	return 0;
}

/* Reset, re-enable, and check that the firmware realigned its indices. */
static int cmdq_resync(struct mnic_dev *dev, const char *why)
{
	volatile struct mnic_init_seg *s = iseg(dev);
	int err = cmdq_reset(dev, why);

	if (err < 0)
		return err;
	err = cmdq_enable(dev);
	if (err < 0)
		return err;
	if (s->cmdq_ci != s->cmdq_pi) {
		fprintf(stderr, "libmnic: %s: the command queue is still out of step after a reset "
				"(ci %u, pi %u)\n", dev->path, s->cmdq_ci, s->cmdq_pi);
		return -EIO;
	}
	return 0;
}

/* Hand one command to the device at cmdq_pi and wait for its answer.
 * -EPIPE: cmdq_pi moved while it was in flight (only this process writes
 * it while it holds the lock) and the reset that followed found the entry
 * never served; the caller may issue it again.  An entry the reset found
 * answered stands. */
static int cmdq_issue(struct mnic_dev *dev, uint16_t issuer, const void *in, uint32_t in_len,
		      void *out, uint32_t out_len, uint8_t *delivery)
{
	volatile struct mnic_init_seg *s = iseg(dev);
	uint8_t *drv = dev->bar + MNIC_DMA_WINDOW_OFFSET;
	uint64_t deadline = now_ns() + (uint64_t)dev->timeout_ms * 1000000ull;
	struct mnic_cmdq_entry e;
	volatile struct mnic_cmdq_entry *slot;
	uint32_t pi, round = 0;
	uint8_t so;
	int err;

	if (++dev->token == 0)
		dev->token = 1;
	err = mnic_cmdq_build(drv, MNIC_DRIVER_AREA_SIZE, &e, in, in_len, out_len, dev->token);
	if (err < 0)
		return err;
	/* the issuing context: the header is always inline (in_len >= 8) */
	e.in_inline[offsetof(struct mnic_cmd_in_hdr, ctx)] = (uint8_t)issuer;
	e.in_inline[offsetof(struct mnic_cmd_in_hdr, ctx) + 1] = (uint8_t)(issuer >> 8);
	pi = s->cmdq_pi;
	slot = (volatile struct mnic_cmdq_entry *)(drv + (uint64_t)(pi & (MNIC_CMDQ_MAX_ENTRIES - 1u)) *
							 MNIC_CMDQ_ENTRY_SIZE);
	memcpy((void *)(uintptr_t)slot, &e, sizeof(e));
	/* mailboxes and entry complete before the device may own it */
	atomic_thread_fence(memory_order_release);
	slot->status_own = MNIC_CMD_OWNER_HW;
	/* ownership visible before the doorbell (cmd.h step 3) */
	atomic_thread_fence(memory_order_seq_cst);
	s->cmdq_pi = pi + 1;
	mnic_dbch_ring(dev);
	for (;;) {
		so = slot->status_own;
		if (!(so & MNIC_CMD_OWNER_HW))
			break;
		if (s->cmdq_pi != pi + 1) {
			err = cmdq_reset(dev, "the doorbell moved under a command in flight");
			if (err < 0)
				return err;
			so = slot->status_own;
			if (so & MNIC_CMD_OWNER_HW)
				return -EPIPE;
			break;
		}
		if (s->state == MNIC_STATE_FAILED) {
			fprintf(stderr, "libmnic: %s: the firmware failed during the command "
					"(health: reason %u)\n", dev->path, s->health.fatal_reason);
			return -EIO;
		}
		if (now_ns() > deadline) {
			fprintf(stderr, "libmnic: %s: no completion within %u ms (entry %u still "
					"owned by the device)\n", dev->path, dev->timeout_ms, pi);
			return -ETIMEDOUT;
		}
		cmdq_wait(dev, &round);
	}
	/* the output was written before the ownership flip: read it after */
	atomic_thread_fence(memory_order_acquire);
	memcpy(&e, (const void *)(uintptr_t)slot, sizeof(e));
	*delivery = (uint8_t)(so >> 1);
	return mnic_cmdq_collect(drv, MNIC_DRIVER_AREA_SIZE, &e, in_len, out, out_len);
}

int mnic_cmdq_exec(struct mnic_dev *dev, uint16_t issuer, const void *in, uint32_t in_len,
		   void *out, uint32_t out_len, uint8_t *delivery)
{
	volatile struct mnic_init_seg *s = iseg(dev);
	uint64_t deadline = now_ns() + (uint64_t)dev->timeout_ms * 1000000ull;
	int err;

	if (flock(dev->fd, LOCK_EX) < 0)
		return -errno;
	if (s->magic != MNIC_INIT_MAGIC || s->state != MNIC_STATE_READY) {
		fprintf(stderr, "libmnic: %s: the firmware is not ready (state %s)\n", dev->path,
			mnic_state_name(s->state));
		err = -EIO;
		goto out;
	}
	err = cmdq_enable(dev);
	if (err < 0)
		goto out;
	err = cmdq_wait_idle(dev, deadline);
	if (err == -EPIPE) {
		err = cmdq_resync(dev, "ci stays behind pi on an entry the device does not own");
	} else if (err < 0) {
		fprintf(stderr, "libmnic: %s: the command queue is busy with an earlier command "
				"(ci %u, pi %u)\n", dev->path, s->cmdq_ci, s->cmdq_pi);
	}
	if (err < 0)
		goto out;
	err = cmdq_issue(dev, issuer, in, in_len, out, out_len, delivery);
	if (err == -EPIPE) {
		/* never served: once more on a queue realigned by the reset */
		err = cmdq_enable(dev);
		if (err == 0)
			err = cmdq_issue(dev, issuer, in, in_len, out, out_len, delivery);
		if (err == -EPIPE) {
			fprintf(stderr, "libmnic: %s: the command queue went out of step again "
					"under the retried command: giving up\n", dev->path);
			err = -EIO;
		}
	}
out:
	flock(dev->fd, LOCK_UN);
	return err;
}
