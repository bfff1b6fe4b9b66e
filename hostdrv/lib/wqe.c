/* The pure core of the data path (wqe.h; formats in mnic/queues.h). */
#include <errno.h>
#include <string.h>

#include "wqe.h"

/* The count only: an SGE's address need not be in the handle's memory
 * (an MR may be any buffer of the process); the NIC checks each SGE
 * against its lkey's MR (rocev2/queue.c). */
static int sges_ok(const struct mnic_sge *sg, uint32_t n, uint32_t max)
{
	if (n > max || (n && !sg))
		return 0;
	return 1;
}

/* Opcodes a send queue takes (IBA 9.4.1, mnic/queues.h) */
static const uint8_t wr_opcode_ok[MNIC_WR_NUM] = {
	[MNIC_WR_RDMA_WRITE] = 1, [MNIC_WR_RDMA_WRITE_WITH_IMM] = 1, [MNIC_WR_SEND] = 1,
	[MNIC_WR_SEND_WITH_IMM] = 1, [MNIC_WR_RDMA_READ] = 1, [MNIC_WR_ATOMIC_CMP_AND_SWP] = 1,
	[MNIC_WR_ATOMIC_FETCH_AND_ADD] = 1, [MNIC_WR_SEND_WITH_INV] = 1,
};

/* IBA 10.8.2.1: the operations that may carry inline data (mnic/queues.h) */
static const uint8_t wr_inline_ok[MNIC_WR_NUM] = {
	[MNIC_WR_RDMA_WRITE] = 1, [MNIC_WR_RDMA_WRITE_WITH_IMM] = 1, [MNIC_WR_SEND] = 1,
	[MNIC_WR_SEND_WITH_IMM] = 1, [MNIC_WR_SEND_WITH_INV] = 1,
};

/* Copy the gather list's bytes into the WQE: each SGE's buffer is found
 * through map (the caller's address space), the total bounded by
 * MNIC_MAX_INLINE before anything is copied. */
static int inline_fill(struct mnic_send_wqe *w, const struct mnic_send_wr *wr,
		       mnic_inline_map_fn map, void *arg)
{
	uint32_t total = 0, i;

	if (!wr_inline_ok[wr->opcode] || !map || wr->num_sge > MNIC_MAX_SGE ||
	    (wr->num_sge && !wr->sg_list))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > MNIC_MAX_INLINE - total)
			return -EINVAL;
		total += wr->sg_list[i].length;
	}
	total = 0;
	for (i = 0; i < wr->num_sge; i++) {
		const struct mnic_sge *s = &wr->sg_list[i];
		const void *p;

		if (!s->length)
			continue;
		p = map(arg, s->addr, s->length);
		if (!p)
			return -EFAULT;
		memcpy(w->inline_data + total, p, s->length);
		total += s->length;
	}
	w->inline_len = total;
	w->num_sge = 0;
	return 0;
}

int mnic_wqe_send_fill(void *slot, const struct mnic_send_wr *wr, uint32_t max_sge,
		       mnic_inline_map_fn map, void *arg)
{
	struct mnic_send_wqe w;
	int inl = (wr->send_flags & MNIC_SEND_INLINE) != 0;
	int err;

	if (wr->opcode >= MNIC_WR_NUM || !wr_opcode_ok[wr->opcode] ||
	    (!inl && !sges_ok(wr->sg_list, wr->num_sge, max_sge)) ||
	    (wr->send_flags & ~(uint32_t)(MNIC_SEND_FENCE | MNIC_SEND_SIGNALED |
					   MNIC_SEND_SOLICITED | MNIC_SEND_INLINE)))
		return -EINVAL;
	memset(&w, 0, sizeof(w));
	w.wr_id = wr->wr_id;
	w.opcode = (uint8_t)wr->opcode;
	w.send_flags = (uint8_t)wr->send_flags;
	w.imm_data = wr->imm_data;
	w.remote_addr = wr->remote_addr;
	w.rkey = wr->rkey;
	w.compare_add = wr->compare_add;
	w.swap = wr->swap;
	if (inl) {
		err = inline_fill(&w, wr, map, arg);
		if (err)
			return err;
	} else {
		w.num_sge = (uint8_t)wr->num_sge;
		if (wr->num_sge)
			memcpy(w.sge, wr->sg_list, wr->num_sge * sizeof(w.sge[0]));
	}
	memcpy(slot, &w, sizeof(w));
	return 0;
}

int mnic_wqe_recv_fill(void *slot, const struct mnic_recv_wr *wr, uint32_t max_sge)
{
	struct mnic_recv_wqe w;

	if (!sges_ok(wr->sg_list, wr->num_sge, max_sge))
		return -EINVAL;
	memset(&w, 0, sizeof(w));
	w.wr_id = wr->wr_id;
	w.num_sge = (uint8_t)wr->num_sge;
	if (wr->num_sge)
		memcpy(w.sge, wr->sg_list, wr->num_sge * sizeof(w.sge[0]));
	memcpy(slot, &w, sizeof(w));
	return 0;
}

int mnic_cq_ring_poll(const volatile struct mnic_cqe *ring, uint32_t size, uint32_t *ci, int n,
		      struct mnic_cqe *out)
{
	int got = 0;

	if (!ring || size == 0 || (size & (size - 1)) || n < 0)
		return -EINVAL;
	while (got < n) {
		const volatile struct mnic_cqe *c = &ring[*ci & (size - 1)];

		if (c->owner != MNIC_CQE_OWNER(*ci, size))
			break;
		/* the owner byte is written last (queues.h): the rest of the
		 * CQE is read after it */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(&out[got], (const void *)(uintptr_t)c, sizeof(*out));
		got++;
		(*ci)++;
	}
	return got;
}

void mnic_sq_posted(struct mnic_sq_track *t, uint32_t idx, int signaled)
{
	if (signaled)
		t->sig_fifo[t->sig_tail++ & (t->size - 1)] = idx;
}

static uint64_t sq_wr_id(const void *ring, uint32_t size, uint32_t idx)
{
	const struct mnic_send_wqe *w =
		(const void *)((const uint8_t *)ring + (uint64_t)(idx & (size - 1)) * MNIC_WQE_SIZE);

	return ring ? w->wr_id : 0;
}

/* RC completes in order (IBA 9.7.5.2.1), so a successful CQE retires the
 * oldest signaled WQE and every unsignaled one before it.  An error CQE
 * may belong to an unsignaled WQE (errors always complete): match it by
 * wr_id from the oldest outstanding WQE; if that is ambiguous the slot
 * count stays conservative (fewer free slots, never a reused live one). */
void mnic_sq_retire(struct mnic_sq_track *t, const void *ring, const struct mnic_cqe *c)
{
	uint32_t outstanding = t->pi - t->ci;

	if (c->status == MNIC_WC_SUCCESS && t->sig_head != t->sig_tail) {
		uint32_t idx = t->sig_fifo[t->sig_head++ & (t->size - 1)];

		if (idx - t->ci < outstanding)
			t->ci = idx + 1;
		return;
	}
	for (uint32_t i = 0; i < outstanding; i++) {
		uint32_t idx = t->ci + i;

		if (sq_wr_id(ring, t->size, idx) != c->wr_id)
			continue;
		t->ci = idx + 1;
		/* signaled entries now behind ci are retired too */
		while (t->sig_head != t->sig_tail &&
		       t->sig_fifo[t->sig_head & (t->size - 1)] - t->ci >= (1u << 31))
			t->sig_head++;
		return;
	}
}
