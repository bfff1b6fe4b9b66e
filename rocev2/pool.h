/* Static object pools of the engine (pd.c mr.c cq.c srq.c qp.c, queue.c).
 *
 * Every object lives in a fixed array of struct rocev2 (ROCEV2_MAX_*).  A
 * free slot is found by a linear scan: allocation is a control-path
 * operation (a mgmt command), bounded by the pool size, and a scan needs
 * no free-list storage in struct rocev2.  Exhaustion is -HAL_ENOMEM.
 *
 * Handles carry a generation so that a stale handle held by the host (or
 * carried across a migration) is refused instead of naming whatever object
 * now occupies the slot:
 *
 *   PD/CQ/SRQ/MTT    = gen << 16 | index      gen 1..0xffff
 *   QPN              = gen << 12 | index      gen 1..0xfff (24-bit QPN)
 *   lkey = rkey      = index << 8 | key       key 1..0xff, per registration
 *
 * A slot's generation (key byte for MRs) advances on every allocation and
 * never takes the value 0, so a zeroed handle, QPN 0/1 (IBA 3.5.2: QP0 and
 * QP1 are special) and lkey 0 never name an object.  After the counter
 * wraps, a handle that old becomes valid again; 2^16 - 1 (QPs: 2^12 - 1,
 * MRs: 255) reallocations of one slot are needed for that.
 *
 * Decoding never indexes with an unchecked value: the index is compared
 * with the pool size first, then in_use and the generation are checked.
 */
#ifndef ROCEV2_POOL_H
#define ROCEV2_POOL_H

#include <stdint.h>

#include "internal.h"

#define ROCEV2_HANDLE_IDX_MASK ((1u << ROCEV2_HANDLE_IDX_BITS) - 1u)
#define ROCEV2_HANDLE_GEN_MAX 0xffffu
#define ROCEV2_QPN_IDX_MASK ((1u << ROCEV2_QPN_IDX_BITS) - 1u)
#define ROCEV2_QPN_GEN_MAX ((1u << (24u - ROCEV2_QPN_IDX_BITS)) - 1u)
#define ROCEV2_MR_KEY_BITS 8u
#define ROCEV2_MR_KEY_MAX 0xffu

_Static_assert(ROCEV2_MAX_PD <= (1u << ROCEV2_HANDLE_IDX_BITS), "PD index field");
_Static_assert(ROCEV2_MAX_CQ <= (1u << ROCEV2_HANDLE_IDX_BITS), "CQ index field");
_Static_assert(ROCEV2_MAX_SRQ <= (1u << ROCEV2_HANDLE_IDX_BITS), "SRQ index field");
_Static_assert(ROCEV2_MAX_MTT <= (1u << ROCEV2_HANDLE_IDX_BITS), "MTT index field");
/* struct rocev2_qp stores PD and CQ indices in uint16_t. */
_Static_assert(ROCEV2_MAX_PD <= 65536u && ROCEV2_MAX_CQ <= 65536u, "uint16_t indices");

/* Next generation of a slot: 1, 2, ... max, 1, ... (never 0). */
static inline uint16_t rocev2_pool_next_gen(uint16_t gen, uint32_t max)
{
	uint32_t g = (uint32_t)gen + 1u;

	return (uint16_t)(g > max ? 1u : g);
}

static inline uint32_t rocev2_handle(uint16_t gen, uint32_t index)
{
	return (uint32_t)gen << ROCEV2_HANDLE_IDX_BITS | index;
}
static inline uint32_t rocev2_handle_index(uint32_t handle)
{
	return handle & ROCEV2_HANDLE_IDX_MASK;
}
static inline uint32_t rocev2_handle_gen(uint32_t handle)
{
	return handle >> ROCEV2_HANDLE_IDX_BITS;
}

/* First free slot of pool (an array of objects with .in_use) of n entries;
 * n when full. */
#define ROCEV2_POOL_FIND_FREE(pool, n, idx)                                     \
	do {                                                                    \
		for ((idx) = 0; (idx) < (n) && (pool)[(idx)].in_use; (idx)++)   \
			;                                                       \
	} while (0)

/* True when [addr, addr + len) lies inside the host DMA window; written
 * without a sum that could wrap.  An empty range may sit at the very end. */
static inline int rocev2_in_window(const struct rocev2 *e, uint64_t addr, uint64_t len)
{
	uint64_t size = e->env.dma->window_size;

	return len <= size && addr <= size - len;
}

/* A host ring of size entries of entry_size bytes and its doorbell record
 * (8-byte aligned), each inside its MTT's range (ROCEV2_NO_MTT: the
 * window; rocev2_mtt_check, need_written as there).  size must be a power
 * of two in [1, ROCEV2_MAX_QUEUE_SIZE].  -HAL_EINVAL for a bad size or
 * alignment, else rocev2_mtt_check's errors. */
int rocev2_queue_attr_check(struct rocev2 *e, const struct rocev2_queue_attr *q,
			    uint32_t entry_size, int need_written);

/* Handle lookups shared by the object files: NULL for a stale, free or
 * out-of-range handle. */
struct rocev2_pd *rocev2_pd_get(struct rocev2 *e, uint32_t pd);
struct rocev2_cq *rocev2_cq_get(struct rocev2 *e, uint32_t cq);
struct rocev2_srq *rocev2_srq_get(struct rocev2 *e, uint32_t srq);

/* Printable QP state names (qp.c), indexed by enum rocev2_qp_state. */
extern const char *const rocev2_qp_state_names[ROCEV2_QPS_NUM];

#endif
