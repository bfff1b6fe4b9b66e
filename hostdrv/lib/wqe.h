/* The pure core of the data path (mnic/queues.h): a WQE from a work
 * request, a CQ ring polled by owner phase, and the send-queue slots a
 * completion retires.  No device handle, no system call, no allocation:
 * libmnic's datapath.c and the rdma-core provider (hostdrv/provider/,
 * which compiles wqe.c into libmnic-rdmav34.so) share it, so the ring
 * format is written in one place. */
#ifndef LIBMNIC_WQE_H
#define LIBMNIC_WQE_H

#include <stdint.h>

#include "mnic/libmnic.h"
#include "mnic/queues.h"

/* The caller's buffer behind an SGE of an inline work request (NULL: not
 * mapped): libmnic's user area, or the provider's process address. */
typedef const void *(*mnic_inline_map_fn)(void *arg, uint64_t addr, uint32_t len);

/* Validate wr (opcode, flags, num_sge <= max_sge) and write its WQE into
 * slot (one MNIC_WQE_SIZE store of a zeroed WQE).  With MNIC_SEND_INLINE
 * the SGEs' bytes (at most MNIC_MAX_INLINE in all, found through map) are
 * copied into the WQE: the buffers are free when this returns.  0,
 * -EINVAL or -EFAULT (an SGE map does not resolve). */
int mnic_wqe_send_fill(void *slot, const struct mnic_send_wr *wr, uint32_t max_sge,
		       mnic_inline_map_fn map, void *arg);
int mnic_wqe_recv_fill(void *slot, const struct mnic_recv_wr *wr, uint32_t max_sge);

/* Poll a ring of `size` CQEs at consumer index *ci: up to n new CQEs
 * copied out (owner byte first, then the rest after an acquire fence);
 * *ci advanced.  Returns the count, or -EINVAL. */
int mnic_cq_ring_poll(const volatile struct mnic_cqe *ring, uint32_t size, uint32_t *ci, int n,
		      struct mnic_cqe *out);

/* A send queue's host-side accounting: WQEs posted (pi) and known
 * completed (ci), and the indices of the signaled ones in posting order
 * (sig_fifo: size entries, head/tail free running). */
struct mnic_sq_track {
	uint32_t pi, ci, size;
	uint32_t *sig_fifo;
	uint32_t sig_head, sig_tail;
};
/* After a WQE at index idx was written: remember it if signaled. */
void mnic_sq_posted(struct mnic_sq_track *t, uint32_t idx, int signaled);
/* A send completion c: free the SQ slots it retires.  ring: the SQ's
 * WQEs (to match an error CQE by wr_id). */
void mnic_sq_retire(struct mnic_sq_track *t, const void *ring, const struct mnic_cqe *c);

#endif
