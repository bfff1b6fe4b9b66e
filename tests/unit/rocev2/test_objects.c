/* rocev2 pd.c mr.c cq.c srq.c: static pools, handles with generations,
 * reference counts, MR protection checks, CQE writing and CQ overflow.
 * Pool exhaustion is -HAL_ENOMEM. */
#include "cmocka_main.h"

#include <string.h>

#include "internal.h"
#include "silent_env.h"
#include "pool.h"

#define WIN (4u << 20)
static uint8_t mem[WIN];
static struct hal_dma dma;
static struct rocev2 eng;
static struct rocev2 *const e = &eng;

/* DMA writes are logged so that the order of the CQE stores is visible. */
#define LOG_MAX 64
struct wlog_entry {
	uint64_t addr;
	size_t len;
	uint8_t first[MNIC_CQE_SIZE];   /* the bytes written (the first 32) */
};
static struct wlog_entry wlog[LOG_MAX];
static unsigned nwlog;
static const struct hal_dma_ops *window_ops;

static int log_read(struct hal_dma *d, uint64_t a, void *dst, size_t n)
{
	return window_ops->read(d, a, dst, n);
}

static int log_write(struct hal_dma *d, uint64_t a, const void *src, size_t n)
{
	if (nwlog < LOG_MAX) {
		wlog[nwlog] = (struct wlog_entry){ a, n, { 0 } };
		memcpy(wlog[nwlog].first, src, n < MNIC_CQE_SIZE ? n : MNIC_CQE_SIZE);
		nwlog++;
	}
	return window_ops->write(d, a, src, n);
}

static const struct hal_dma_ops log_ops = { log_read, log_write };

static int setup(void **state)
{
	struct rocev2_env env = silent_env(&dma);

	(void)state;
	memset(mem, 0, sizeof(mem));
	hal_dma_window_init(&dma, mem, WIN);
	window_ops = dma.ops;
	dma.ops = &log_ops;
	nwlog = 0;
	now = 0;
	assert_int_equal(rocev2_init(e, &env), 0);
	return 0;
}

static int next_event(struct rocev2_event *ev)
{
	return rocev2_get_event(e, 0, ev);
}

static void set_dbrec(uint64_t addr, uint32_t index)
{
	memcpy(mem + addr, &index, sizeof(index));
}

/* ---- PD ---------------------------------------------------------------- */

static void test_pd_pool_exhaust_and_generations(void **state)
{
	uint32_t h[ROCEV2_MAX_PD], extra, again;
	unsigned i, j;

	(void)state;
	for (i = 0; i < ROCEV2_MAX_PD; i++) {
		assert_int_equal(rocev2_alloc_pd(e, &h[i]), 0);
		assert_int_not_equal(h[i], 0);
		assert_int_equal(rocev2_handle_index(h[i]), i);
		assert_int_equal(rocev2_handle_gen(h[i]), 1);
		for (j = 0; j < i; j++)
			assert_int_not_equal(h[i], h[j]);
	}
	assert_int_equal(e->n_pd, ROCEV2_MAX_PD);
	assert_int_equal(rocev2_alloc_pd(e, &extra), -HAL_ENOMEM);
	assert_int_equal(e->n_pd, ROCEV2_MAX_PD);

	/* Free and reallocate: same slot, new generation, old handle dead. */
	assert_int_equal(rocev2_dealloc_pd(e, h[5]), 0);
	assert_int_equal(e->n_pd, ROCEV2_MAX_PD - 1);
	assert_int_equal(rocev2_dealloc_pd(e, h[5]), -HAL_EINVAL);
	assert_int_equal(rocev2_alloc_pd(e, &again), 0);
	assert_int_equal(rocev2_handle_index(again), 5);
	assert_int_not_equal(again, h[5]);
	assert_null(rocev2_pd_get(e, h[5]));
	assert_non_null(rocev2_pd_get(e, again));
	assert_int_equal(rocev2_dealloc_pd(e, h[5]), -HAL_EINVAL);
	h[5] = again;

	/* Out-of-range index, generation 0, garbage. */
	assert_int_equal(rocev2_dealloc_pd(e, rocev2_handle(1, ROCEV2_MAX_PD)), -HAL_EINVAL);
	assert_int_equal(rocev2_dealloc_pd(e, 0xffffffffu), -HAL_EINVAL);
	assert_int_equal(rocev2_dealloc_pd(e, rocev2_handle(0, 0)), -HAL_EINVAL);
	assert_int_equal(rocev2_alloc_pd(e, NULL), -HAL_EINVAL);

	for (i = 0; i < ROCEV2_MAX_PD; i++)
		assert_int_equal(rocev2_dealloc_pd(e, h[i]), 0);
	assert_int_equal(e->n_pd, 0);
}

static void test_pd_generation_wraps_past_zero(void **state)
{
	uint32_t h;

	(void)state;
	e->pds[0].gen = ROCEV2_HANDLE_GEN_MAX;
	assert_int_equal(rocev2_alloc_pd(e, &h), 0);
	assert_int_equal(rocev2_handle_index(h), 0);
	assert_int_equal(rocev2_handle_gen(h), 1);
	assert_int_equal(rocev2_dealloc_pd(e, h), 0);
	assert_int_equal(rocev2_alloc_pd(e, &h), 0);
	assert_int_equal(rocev2_handle_gen(h), 2);
}

/* ---- MR ---------------------------------------------------------------- */

#define LW ROCEV2_ACCESS_LOCAL_WRITE
#define RW ROCEV2_ACCESS_REMOTE_WRITE
#define RR ROCEV2_ACCESS_REMOTE_READ
#define RA ROCEV2_ACCESS_REMOTE_ATOMIC

static void test_mr_pool_exhaust_and_stale_keys(void **state)
{
	uint32_t pd, lk[ROCEV2_MAX_MR], rk, extra, old;
	unsigned i;

	(void)state;
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	for (i = 0; i < ROCEV2_MAX_MR; i++) {
		assert_int_equal(rocev2_reg_mr(e, pd, 0x1000 * i, 0x1000, LW, &lk[i], &rk), 0);
		assert_int_equal(lk[i], rk);
		assert_int_equal(lk[i] >> 8, i);
		assert_int_not_equal(lk[i] & 0xff, 0);
		assert_ptr_equal(rocev2_mr_lookup(e, lk[i]), &e->mrs[i]);
	}
	assert_int_equal(e->n_mr, ROCEV2_MAX_MR);
	assert_int_equal(e->pds[rocev2_handle_index(pd)].refcnt, ROCEV2_MAX_MR);
	assert_int_equal(rocev2_reg_mr(e, pd, 0, 0x1000, LW, &extra, &rk), -HAL_ENOMEM);
	assert_int_equal(rocev2_dealloc_pd(e, pd), -HAL_EBUSY);

	/* Re-registration of a slot changes the key byte: the old key is
	 * refused for lookup and for dereg. */
	old = lk[7];
	assert_int_equal(rocev2_dereg_mr(e, old), 0);
	assert_null(rocev2_mr_lookup(e, old));
	assert_int_equal(rocev2_dereg_mr(e, old), -HAL_EINVAL);
	assert_int_equal(rocev2_reg_mr(e, pd, 0, 16, LW, &lk[7], &rk), 0);
	assert_int_equal(lk[7] >> 8, 7);
	assert_int_not_equal(lk[7], old);
	assert_null(rocev2_mr_lookup(e, old));
	assert_int_equal(rocev2_dereg_mr(e, old), -HAL_EINVAL);
	assert_non_null(rocev2_mr_lookup(e, lk[7]));

	for (i = 0; i < ROCEV2_MAX_MR; i++)
		assert_int_equal(rocev2_dereg_mr(e, lk[i]), 0);
	assert_int_equal(e->n_mr, 0);
	assert_int_equal(rocev2_dealloc_pd(e, pd), 0);
	assert_int_equal(e->n_pd, 0);
}

static void test_mr_key_byte_cycles_without_zero(void **state)
{
	uint32_t pd, lk, rk, prev = 0;
	unsigned i, seen[256] = { 0 };

	(void)state;
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	for (i = 0; i < 600; i++) {
		assert_int_equal(rocev2_reg_mr(e, pd, 0, 8, 0, &lk, &rk), 0);
		assert_int_equal(lk >> 8, 0);
		assert_int_not_equal(lk & 0xff, 0);
		assert_int_not_equal(lk, prev);
		seen[lk & 0xff]++;
		prev = lk;
		assert_int_equal(rocev2_dereg_mr(e, lk), 0);
	}
	for (i = 1; i < 256; i++)
		assert_true(seen[i] >= 2);
	/* lkey 0 is never valid: slot 0 with key 0. */
	assert_null(rocev2_mr_lookup(e, 0));
}

static void test_mr_lookup_hostile_keys(void **state)
{
	uint32_t pd, lk, rk;

	(void)state;
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, 0, 8, 0, &lk, &rk), 0);
	assert_null(rocev2_mr_lookup(e, 0xffffffffu));
	assert_null(rocev2_mr_lookup(e, ROCEV2_MAX_MR << 8 | (lk & 0xff)));
	assert_null(rocev2_mr_lookup(e, lk ^ 0x01));
	assert_null(rocev2_mr_lookup(e, lk ^ 0x80));
	assert_null(rocev2_mr_lookup(e, 1u << 8 | (lk & 0xff)));    /* free slot */
	assert_non_null(rocev2_mr_lookup(e, lk));
}

static void test_mr_reg_validation(void **state)
{
	uint32_t pd, lk, rk, bad;

	(void)state;
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	bad = pd + (1u << 16);
	assert_int_equal(rocev2_reg_mr(e, bad, 0, 8, 0, &lk, &rk), -HAL_EINVAL);
	/* IBA 10.6.3.1: remote write / atomic need local write. */
	assert_int_equal(rocev2_reg_mr(e, pd, 0, 8, RW, &lk, &rk), -HAL_EINVAL);
	assert_int_equal(rocev2_reg_mr(e, pd, 0, 8, RA, &lk, &rk), -HAL_EINVAL);
	assert_int_equal(rocev2_reg_mr(e, pd, 0, 8, RW | RR | RA, &lk, &rk), -HAL_EINVAL);
	assert_int_equal(rocev2_reg_mr(e, pd, 0, 8, 1u << 4, &lk, &rk), -HAL_EINVAL);
	assert_int_equal(rocev2_reg_mr(e, pd, 0, 8, LW | 1u << 31, &lk, &rk), -HAL_EINVAL);
	assert_int_equal(rocev2_reg_mr(e, pd, 0, 8, LW, NULL, &rk), -HAL_EINVAL);
	assert_int_equal(e->n_mr, 0);
	assert_int_equal(e->pds[rocev2_handle_index(pd)].refcnt, 0);

	/* Window bounds. */
	assert_int_equal(rocev2_reg_mr(e, pd, WIN - 8, 9, LW, &lk, &rk), -HAL_EFAULT);
	assert_int_equal(rocev2_reg_mr(e, pd, WIN, 1, LW, &lk, &rk), -HAL_EFAULT);
	assert_int_equal(rocev2_reg_mr(e, pd, UINT64_MAX - 3, 8, LW, &lk, &rk), -HAL_EFAULT);
	assert_int_equal(rocev2_reg_mr(e, pd, 8, UINT64_MAX, LW, &lk, &rk), -HAL_EFAULT);
	assert_int_equal(rocev2_reg_mr(e, pd, 0, (uint64_t)WIN + 1, LW, &lk, &rk), -HAL_EFAULT);
	assert_int_equal(e->n_mr, 0);

	assert_int_equal(rocev2_reg_mr(e, pd, 0, WIN, LW | RW | RR | RA, &lk, &rk), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, WIN - 8, 8, RR, &lk, &rk), 0);
	assert_int_equal(rocev2_reg_mr(e, pd, 0x100, 0, 0, &lk, &rk), 0);   /* length 0 */
	assert_int_equal(rocev2_reg_mr(e, pd, WIN, 0, 0, &lk, &rk), 0);
	assert_int_equal(e->n_mr, 4);
	assert_int_equal(e->pds[rocev2_handle_index(pd)].refcnt, 4);
}

static void test_mr_check_bounds(void **state)
{
	uint32_t pd, lk, rk;
	const struct rocev2_mr *mr;
	uint16_t p;

	(void)state;
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	p = (uint16_t)rocev2_handle_index(pd);
	assert_int_equal(rocev2_reg_mr(e, pd, 0x1000, 0x1000, LW | RR, &lk, &rk), 0);
	mr = rocev2_mr_lookup(e, rk);
	assert_non_null(mr);

	assert_int_equal(rocev2_mr_check(mr, p, 0x1000, 0x1000, 0), 0);
	assert_int_equal(rocev2_mr_check(mr, p, 0x1000, 0, 0), 0);
	assert_int_equal(rocev2_mr_check(mr, p, 0x2000, 0, 0), 0);          /* empty at end */
	assert_int_equal(rocev2_mr_check(mr, p, 0x1fff, 1, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x1000, 0x1001, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x1fff, 2, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x0fff, 1, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x0fff, 0, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x2001, 0, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x2000, 1, 0), 0);
	/* Sums that wrap: a naive va + len <= addr + length accepts these. */
	assert_int_not_equal(rocev2_mr_check(mr, p, UINT64_MAX, 1, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, UINT64_MAX - 0x10, 0x20, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x1800, UINT64_MAX, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x1800, UINT64_MAX - 0x17ff, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x1000, UINT64_MAX, 0), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, UINT64_MAX, 0, 0), 0);

	/* PD. */
	assert_int_not_equal(rocev2_mr_check(mr, (uint16_t)(p + 1), 0x1000, 8, 0), 0);
	/* Access bits: every requested bit must be granted. */
	assert_int_equal(rocev2_mr_check(mr, p, 0x1000, 8, RR), 0);
	assert_int_equal(rocev2_mr_check(mr, p, 0x1000, 8, LW), 0);
	assert_int_equal(rocev2_mr_check(mr, p, 0x1000, 8, LW | RR), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x1000, 8, RW), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x1000, 8, RA), 0);
	assert_int_not_equal(rocev2_mr_check(mr, p, 0x1000, 8, RR | RW), 0);
	assert_int_not_equal(rocev2_mr_check(NULL, p, 0x1000, 8, 0), 0);
}

static void test_mr_check_at_top_of_address_space(void **state)
{
	struct rocev2_mr mr = { .in_use = 1, .pd = 3, .access = RR,
				.addr = UINT64_MAX - 0xff, .length = 0x100 };

	(void)state;
	/* A region ending exactly at 2^64 (not reachable through reg_mr, but
	 * the check must not depend on that). */
	assert_int_equal(rocev2_mr_check(&mr, 3, UINT64_MAX - 0xff, 0x100, RR), 0);
	assert_int_equal(rocev2_mr_check(&mr, 3, UINT64_MAX, 1, RR), 0);
	assert_int_not_equal(rocev2_mr_check(&mr, 3, UINT64_MAX, 2, RR), 0);
	assert_int_not_equal(rocev2_mr_check(&mr, 3, UINT64_MAX - 0x100, 1, RR), 0);
	assert_int_not_equal(rocev2_mr_check(&mr, 3, 0, 1, RR), 0);
	mr.in_use = 0;
	assert_int_not_equal(rocev2_mr_check(&mr, 3, UINT64_MAX, 1, RR), 0);
}

/* ---- CQ ---------------------------------------------------------------- */

#define CQ_RING 0x10000u
#define CQ_DB 0x100u

static uint32_t make_cq(uint32_t size)
{
	struct rocev2_queue_attr q = { .ring_addr = CQ_RING, .dbrec_addr = CQ_DB, .size = size };
	uint32_t cq;

	assert_int_equal(rocev2_create_cq(e, &q, &cq), 0);
	return cq;
}

static void test_cq_create_validation(void **state)
{
	struct rocev2_queue_attr q = { .ring_addr = CQ_RING, .dbrec_addr = CQ_DB, .size = 4 };
	struct rocev2_queue_attr b;
	uint32_t cq;

	(void)state;
	assert_int_equal(rocev2_create_cq(e, NULL, &cq), -HAL_EINVAL);
	assert_int_equal(rocev2_create_cq(e, &q, NULL), -HAL_EINVAL);
	b = q; b.size = 0;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EINVAL);
	b = q; b.size = 3;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EINVAL);
	b = q; b.size = 65537;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EINVAL);
	b = q; b.size = 131072;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EINVAL);
	b = q; b.size = 0x80000000u;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EINVAL);
	b = q; b.dbrec_addr = CQ_DB + 4;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EINVAL);
	/* Outside the window. */
	b = q; b.dbrec_addr = WIN;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EFAULT);
	b = q; b.dbrec_addr = UINT64_MAX - 7;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EFAULT);
	b = q; b.ring_addr = WIN - 4 * MNIC_CQE_SIZE + 1;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EFAULT);
	b = q; b.ring_addr = UINT64_MAX - 64;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EFAULT);
	b = q; b.size = 65536; b.ring_addr = WIN - 65536u * MNIC_CQE_SIZE + 32;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EFAULT);
	/* A window whose size is not a multiple of 8: an aligned doorbell
	 * record must still fit entirely. */
	dma.window_size = WIN - 4;
	b = q; b.dbrec_addr = WIN - 8;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), -HAL_EFAULT);
	dma.window_size = WIN;
	assert_int_equal(e->n_cq, 0);

	b = q; b.ring_addr = WIN - 4 * MNIC_CQE_SIZE; b.dbrec_addr = WIN - 8;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), 0);
	b = q; b.size = 65536; b.ring_addr = WIN - 65536u * MNIC_CQE_SIZE;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), 0);
	b = q; b.size = 1;
	assert_int_equal(rocev2_create_cq(e, &b, &cq), 0);
	assert_int_equal(e->n_cq, 3);
}

static void test_cq_pool_exhaust_and_stale(void **state)
{
	uint32_t h[ROCEV2_MAX_CQ], extra, again;
	unsigned i;

	(void)state;
	for (i = 0; i < ROCEV2_MAX_CQ; i++) {
		h[i] = make_cq(4);
		assert_int_equal(rocev2_handle_index(h[i]), i);
	}
	assert_int_equal(e->n_cq, ROCEV2_MAX_CQ);
	{
		struct rocev2_queue_attr q = { .ring_addr = CQ_RING, .dbrec_addr = CQ_DB, .size = 4 };
		assert_int_equal(rocev2_create_cq(e, &q, &extra), -HAL_ENOMEM);
	}
	assert_int_equal(rocev2_destroy_cq(e, h[3]), 0);
	assert_int_equal(rocev2_destroy_cq(e, h[3]), -HAL_EINVAL);
	again = make_cq(4);
	assert_int_equal(rocev2_handle_index(again), 3);
	assert_int_not_equal(again, h[3]);
	assert_int_equal(rocev2_destroy_cq(e, h[3]), -HAL_EINVAL);
	assert_null(rocev2_cq_get(e, h[3]));
	h[3] = again;
	assert_int_equal(rocev2_destroy_cq(e, rocev2_handle(1, ROCEV2_MAX_CQ)), -HAL_EINVAL);
	assert_int_equal(rocev2_destroy_cq(e, 0), -HAL_EINVAL);
	for (i = 0; i < ROCEV2_MAX_CQ; i++)
		assert_int_equal(rocev2_destroy_cq(e, h[i]), 0);
	assert_int_equal(e->n_cq, 0);
}

static struct mnic_cqe cqe_for(unsigned n)
{
	struct mnic_cqe c = {
		.wr_id = 0x1000000000000000ull | n, .status = (uint8_t)(n & 0x1f),
		.opcode = (uint8_t)(n * 3), .flags = 0xa5,
		.owner = 0x5a,   /* caller garbage: the firmware writes its own */
		.byte_len = n * 1000u, .qp_num = 0x123456, .imm_data = ~n, .src_qp = n << 4,
		.vendor_err = 0xdeadbeef,
	};
	return c;
}

/* Two full wraps (and a third pass) of a 4-entry ring, with the host
 * consuming each CQE the way a polling library does. */
static void test_cq_post_owner_bit_across_wraps(void **state)
{
	uint32_t h = make_cq(4), ci = 0;
	uint16_t idx = (uint16_t)rocev2_handle_index(h);
	unsigned n;

	(void)state;
	for (n = 0; n < 12; n++) {
		struct mnic_cqe c = cqe_for(n), got;
		const uint8_t *slot = mem + CQ_RING + (n % 4) * MNIC_CQE_SIZE;
		uint8_t expect_owner = (uint8_t)(((n / 4) & 1) ^ 1);

		/* Before the post the slot reads as old to the host. */
		assert_int_not_equal(slot[offsetof(struct mnic_cqe, owner)],
				     MNIC_CQE_OWNER(ci, 4));
		assert_int_equal(rocev2_cq_post(e, idx, &c), 0);
		memcpy(&got, slot, sizeof(got));
		assert_int_equal(got.owner, expect_owner);
		assert_int_equal(got.owner, MNIC_CQE_OWNER(ci, 4));
		got.owner = c.owner;
		assert_memory_equal(&got, &c, sizeof(c));
		ci++;
		set_dbrec(CQ_DB, ci);
	}
	assert_int_equal(e->cqs[idx].pi, 12);
	assert_int_equal(e->cnt.cq_overflows, 0);
}

/* The owner byte is the last store of a post; an earlier store of the
 * same post covers it only with the phase the slot already has (the pass
 * before: the host still sees the slot empty), and covers the rest of
 * the CQE once. */
static void test_cq_post_writes_owner_last(void **state)
{
	uint32_t h = make_cq(4);
	uint16_t idx = (uint16_t)rocev2_handle_index(h);
	const uint64_t owner_at = CQ_RING + 2 * MNIC_CQE_SIZE + offsetof(struct mnic_cqe, owner);
	struct mnic_cqe c = cqe_for(7);
	unsigned i, covered[MNIC_CQE_SIZE] = { 0 };

	(void)state;
	set_dbrec(CQ_DB, 2);
	e->cqs[idx].pi = 2;
	nwlog = 0;
	assert_int_equal(rocev2_cq_post(e, idx, &c), 0);
	assert_true(nwlog >= 2);
	assert_int_equal(wlog[nwlog - 1].addr, owner_at);
	assert_int_equal(wlog[nwlog - 1].len, 1);
	for (i = 0; i + 1 < nwlog; i++) {
		uint64_t a;

		assert_true(wlog[i].addr >= CQ_RING + 2 * MNIC_CQE_SIZE);
		assert_true(wlog[i].addr + wlog[i].len <= CQ_RING + 3 * MNIC_CQE_SIZE);
		if (owner_at >= wlog[i].addr && owner_at < wlog[i].addr + wlog[i].len)
			assert_int_equal(wlog[i].first[owner_at - wlog[i].addr], MNIC_CQE_OWNER(2, 4) ^ 1u);
		for (a = wlog[i].addr; a < wlog[i].addr + wlog[i].len; a++)
			if (a != owner_at)
				covered[a - (CQ_RING + 2 * MNIC_CQE_SIZE)]++;
	}
	assert_int_equal(wlog[nwlog - 1].first[0], MNIC_CQE_OWNER(2, 4));
	for (i = 0; i < MNIC_CQE_SIZE; i++)
		assert_int_equal(covered[i], i == offsetof(struct mnic_cqe, owner) ? 0 : 1);
}

static void test_cq_overflow(void **state)
{
	uint32_t h = make_cq(4);
	uint16_t idx = (uint16_t)rocev2_handle_index(h);
	struct rocev2_event ev;
	struct mnic_cqe c;
	uint8_t before[4 * MNIC_CQE_SIZE];
	unsigned n;

	(void)state;
	/* The host consumes nothing: four fit, the fifth overflows. */
	for (n = 0; n < 4; n++) {
		c = cqe_for(n);
		assert_int_equal(rocev2_cq_post(e, idx, &c), 0);
	}
	assert_int_equal(next_event(&ev), -HAL_EAGAIN);
	memcpy(before, mem + CQ_RING, sizeof(before));
	c = cqe_for(4);
	assert_int_equal(rocev2_cq_post(e, idx, &c), -HAL_ENOSPC);
	assert_memory_equal(mem + CQ_RING, before, sizeof(before));   /* nothing overwritten */
	assert_int_equal(e->cnt.cq_overflows, 1);
	assert_int_equal(e->cqs[idx].error, 1);
	assert_int_equal(next_event(&ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_CQ_ERR);
	assert_int_equal(ev.handle, h);

	/* The host catches up: the CQ stays in error, no second event. */
	set_dbrec(CQ_DB, 4);
	for (n = 0; n < 3; n++)
		assert_int_equal(rocev2_cq_post(e, idx, &c), -HAL_ENOSPC);
	assert_memory_equal(mem + CQ_RING, before, sizeof(before));
	assert_int_equal(next_event(&ev), -HAL_EAGAIN);
	assert_int_equal(e->cnt.cq_overflows, 1);
	assert_int_equal(e->cnt.cq_err_drops, 3);
	assert_int_equal(e->cqs[idx].pi, 4);
}

/* RESIZE_CQ: the unconsumed CQEs move to slots 0.. of the new ring with
 * its owner phase, the old ring is never written, the CQ produces after
 * them; refusals (too small, new record not at 0, hostile consumer index,
 * a CQ in error, another owner's, a stale handle) change nothing. */
#define CQ_RING2 0x20000u
#define CQ_DB2 0x200u
static void test_cq_resize(void **state)
{
	uint32_t h = make_cq(8), moved = 99;
	uint16_t idx = (uint16_t)rocev2_handle_index(h);
	struct rocev2_queue_attr nq = { .ring_addr = CQ_RING2, .dbrec_addr = CQ_DB2, .size = 4 };
	uint8_t old[8 * MNIC_CQE_SIZE];
	struct mnic_cqe c, got;
	unsigned n;

	(void)state;
	/* 7 posted across the old ring, the host consumed 5: 2 remain */
	for (n = 0; n < 7; n++) {
		c = cqe_for(n);
		assert_int_equal(rocev2_cq_post(e, idx, &c), 0);
	}
	set_dbrec(CQ_DB, 2);
	/* too small for 5 outstanding */
	assert_int_equal(rocev2_resize_cq(e, h, &nq, &moved), -HAL_ENOSPC);
	set_dbrec(CQ_DB, 5);
	/* the new record must start at 0 */
	set_dbrec(CQ_DB2, 1);
	assert_int_equal(rocev2_resize_cq(e, h, &nq, &moved), -HAL_EINVAL);
	set_dbrec(CQ_DB2, 0);
	/* a stale handle, another owner's CQ, a bad new ring */
	assert_int_equal(rocev2_resize_cq(e, rocev2_handle((uint16_t)(e->cqs[idx].gen + 1u), idx),
					  &nq, &moved), -HAL_EINVAL);
	e->creator = 7;
	assert_int_equal(rocev2_resize_cq(e, h, &nq, &moved), -HAL_EINVAL);
	e->creator = e->cqs[idx].owner;
	nq.size = 3;
	assert_int_equal(rocev2_resize_cq(e, h, &nq, &moved), -HAL_EINVAL);
	nq.size = 4;
	assert_int_equal(e->cqs[idx].pi, 7);
	assert_int_equal(e->cqs[idx].q.ring_addr, CQ_RING);

	memcpy(old, mem + CQ_RING, sizeof(old));
	assert_int_equal(rocev2_resize_cq(e, h, &nq, &moved), 0);
	assert_int_equal(moved, 2);
	assert_memory_equal(mem + CQ_RING, old, sizeof(old));   /* the old ring only read */
	assert_int_equal(e->cqs[idx].pi, 2);
	assert_int_equal(e->cqs[idx].q.ring_addr, CQ_RING2);
	assert_int_equal(e->cnt.cq_resizes, 1);
	for (n = 0; n < 2; n++) {
		memcpy(&got, mem + CQ_RING2 + n * MNIC_CQE_SIZE, sizeof(got));
		assert_int_equal(got.owner, MNIC_CQE_OWNER(n, 4));
		c = cqe_for(5 + n);
		got.owner = c.owner;
		assert_memory_equal(&got, &c, sizeof(c));   /* in order, every byte */
	}
	/* produces after them, in the new ring, with overflow at its size */
	for (n = 2; n < 4; n++) {
		c = cqe_for(100 + n);
		assert_int_equal(rocev2_cq_post(e, idx, &c), 0);
		memcpy(&got, mem + CQ_RING2 + n * MNIC_CQE_SIZE, sizeof(got));
		assert_int_equal(got.owner, MNIC_CQE_OWNER(n, 4));
		assert_int_equal(got.wr_id, c.wr_id);
	}
	assert_memory_equal(mem + CQ_RING, old, sizeof(old));
	c = cqe_for(200);
	assert_int_equal(rocev2_cq_post(e, idx, &c), -HAL_ENOSPC);   /* 4 of 4, none consumed */
	/* a CQ in error is not resized */
	nq.ring_addr = CQ_RING;
	nq.dbrec_addr = CQ_DB;
	set_dbrec(CQ_DB, 0);
	assert_int_equal(rocev2_resize_cq(e, h, &nq, &moved), -HAL_EINVAL);
}

/* A consumer index ahead of the producer (hostile) is refused. */
static void test_cq_resize_hostile_consumer(void **state)
{
	uint32_t h = make_cq(8), moved;
	uint16_t idx = (uint16_t)rocev2_handle_index(h);
	struct rocev2_queue_attr nq = { .ring_addr = CQ_RING2, .dbrec_addr = CQ_DB2, .size = 16 };
	struct mnic_cqe c = cqe_for(1);

	(void)state;
	assert_int_equal(rocev2_cq_post(e, idx, &c), 0);
	set_dbrec(CQ_DB, 3);
	set_dbrec(CQ_DB2, 0);
	assert_int_equal(rocev2_resize_cq(e, h, &nq, &moved), -HAL_EINVAL);
	assert_int_equal(e->cqs[idx].q.ring_addr, CQ_RING);
	/* and an empty CQ moves with nothing to copy */
	set_dbrec(CQ_DB, 1);
	assert_int_equal(rocev2_resize_cq(e, h, &nq, &moved), 0);
	assert_int_equal(moved, 0);
	assert_int_equal(e->cqs[idx].pi, 0);
	assert_int_equal(e->cqs[idx].q.size, 16);
}

static void test_cq_overflow_hostile_consumer(void **state)
{
	uint32_t h = make_cq(8);
	uint16_t idx = (uint16_t)rocev2_handle_index(h);
	struct mnic_cqe c = cqe_for(1);
	struct rocev2_event ev;

	(void)state;
	assert_int_equal(rocev2_cq_post(e, idx, &c), 0);
	/* A consumer index ahead of what was produced. */
	set_dbrec(CQ_DB, 5);
	assert_int_equal(rocev2_cq_post(e, idx, &c), -HAL_ENOSPC);
	assert_int_equal(next_event(&ev), 0);
	assert_int_equal(ev.type, ROCEV2_EVENT_CQ_ERR);
	assert_int_equal(e->cnt.cq_overflows, 1);
}

static void test_cq_post_free_running_index_wrap(void **state)
{
	uint32_t h = make_cq(4);
	uint16_t idx = (uint16_t)rocev2_handle_index(h);
	struct mnic_cqe c = cqe_for(9), got;
	unsigned n;

	(void)state;
	/* Indices near 2^32: pi - ci stays right across the wrap. */
	e->cqs[idx].pi = 0xfffffffeu;
	set_dbrec(CQ_DB, 0xfffffffeu);
	for (n = 0; n < 4; n++)
		assert_int_equal(rocev2_cq_post(e, idx, &c), 0);
	assert_int_equal(e->cqs[idx].pi, 2);
	assert_int_equal(rocev2_cq_post(e, idx, &c), -HAL_ENOSPC);
	memcpy(&got, mem + CQ_RING + 1 * MNIC_CQE_SIZE, sizeof(got));   /* index 1 */
	assert_int_equal(got.owner, MNIC_CQE_OWNER(1u, 4u));
}

static void test_cq_post_bad_index_and_dma_error(void **state)
{
	uint32_t h = make_cq(4);
	uint16_t idx = (uint16_t)rocev2_handle_index(h);
	struct mnic_cqe c = cqe_for(1);

	(void)state;
	assert_int_equal(rocev2_cq_post(e, (uint16_t)(idx + 1), &c), -HAL_EINVAL);
	assert_int_equal(rocev2_cq_post(e, 0xffff, &c), -HAL_EINVAL);
	/* Host memory disappears (BAR unmapped): counted, CQ unchanged. */
	dma.window_size = CQ_DB;
	assert_int_equal(rocev2_cq_post(e, idx, &c), -HAL_EFAULT);
	assert_int_equal(e->cnt.dma_errors, 1);
	dma.window_size = CQ_RING + 1;
	assert_int_equal(rocev2_cq_post(e, idx, &c), -HAL_EFAULT);
	assert_int_equal(e->cnt.dma_errors, 2);
	assert_int_equal(e->cqs[idx].pi, 0);
	dma.window_size = WIN;
	assert_int_equal(rocev2_cq_post(e, idx, &c), 0);
	assert_int_equal(e->cqs[idx].pi, 1);
}

/* ---- SRQ --------------------------------------------------------------- */

#define SRQ_RING 0x20000u
#define SRQ_DB 0x200u

static void test_srq_create_validation(void **state)
{
	struct rocev2_srq_attr a = { .q = { SRQ_RING, SRQ_DB, 16 }, .max_sge = 4, .srq_limit = 3 };
	struct rocev2_srq_attr b;
	uint32_t pd, srq;

	(void)state;
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	assert_int_equal(rocev2_create_srq(e, pd + (1u << 16), &a, &srq), -HAL_EINVAL);
	assert_int_equal(rocev2_create_srq(e, pd, NULL, &srq), -HAL_EINVAL);
	b = a; b.max_sge = MNIC_MAX_SGE + 1;
	assert_int_equal(rocev2_create_srq(e, pd, &b, &srq), -HAL_EINVAL);
	b = a; b.srq_limit = 16;
	assert_int_equal(rocev2_create_srq(e, pd, &b, &srq), -HAL_EINVAL);
	b = a; b.q.size = 12;
	assert_int_equal(rocev2_create_srq(e, pd, &b, &srq), -HAL_EINVAL);
	b = a; b.q.size = 0;
	assert_int_equal(rocev2_create_srq(e, pd, &b, &srq), -HAL_EINVAL);
	b = a; b.q.dbrec_addr = SRQ_DB + 1;
	assert_int_equal(rocev2_create_srq(e, pd, &b, &srq), -HAL_EINVAL);
	b = a; b.q.ring_addr = WIN - 15 * MNIC_WQE_SIZE;
	assert_int_equal(rocev2_create_srq(e, pd, &b, &srq), -HAL_EFAULT);
	b = a; b.q.dbrec_addr = WIN;
	assert_int_equal(rocev2_create_srq(e, pd, &b, &srq), -HAL_EFAULT);
	assert_int_equal(e->n_srq, 0);
	assert_int_equal(e->pds[rocev2_handle_index(pd)].refcnt, 0);

	b = a; b.max_sge = MNIC_MAX_SGE; b.srq_limit = 15;
	assert_int_equal(rocev2_create_srq(e, pd, &b, &srq), 0);
	assert_int_equal(e->srqs[rocev2_handle_index(srq)].limit_armed, 1);
	b = a; b.srq_limit = 0; b.q.ring_addr = WIN - 16 * MNIC_WQE_SIZE;
	assert_int_equal(rocev2_create_srq(e, pd, &b, &srq), 0);
	assert_int_equal(e->srqs[rocev2_handle_index(srq)].limit_armed, 0);
	assert_int_equal(e->n_srq, 2);
}

static void test_srq_pool_limit_and_busy_pd(void **state)
{
	struct rocev2_srq_attr a = { .q = { SRQ_RING, SRQ_DB, 16 }, .max_sge = 4 };
	uint32_t pd, h[ROCEV2_MAX_SRQ], extra, again;
	unsigned i;

	(void)state;
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	for (i = 0; i < ROCEV2_MAX_SRQ; i++)
		assert_int_equal(rocev2_create_srq(e, pd, &a, &h[i]), 0);
	assert_int_equal(rocev2_create_srq(e, pd, &a, &extra), -HAL_ENOMEM);
	assert_int_equal(e->n_srq, ROCEV2_MAX_SRQ);
	assert_int_equal(rocev2_dealloc_pd(e, pd), -HAL_EBUSY);

	assert_int_equal(rocev2_modify_srq_limit(e, h[0], 16), -HAL_EINVAL);
	assert_int_equal(rocev2_modify_srq_limit(e, h[0], 15), 0);
	assert_int_equal(e->srqs[0].limit_armed, 1);
	assert_int_equal(rocev2_modify_srq_limit(e, h[0], 0), 0);
	assert_int_equal(e->srqs[0].limit_armed, 0);

	assert_int_equal(rocev2_destroy_srq(e, h[2]), 0);
	assert_int_equal(rocev2_destroy_srq(e, h[2]), -HAL_EINVAL);
	assert_int_equal(rocev2_modify_srq_limit(e, h[2], 1), -HAL_EINVAL);
	assert_int_equal(rocev2_srq_doorbell(e, h[2]), -HAL_EINVAL);
	assert_int_equal(rocev2_create_srq(e, pd, &a, &again), 0);
	assert_int_not_equal(again, h[2]);
	assert_int_equal(rocev2_handle_index(again), 2);
	h[2] = again;
	assert_int_equal(rocev2_destroy_srq(e, rocev2_handle(1, ROCEV2_MAX_SRQ)), -HAL_EINVAL);

	for (i = 0; i < ROCEV2_MAX_SRQ; i++)
		assert_int_equal(rocev2_destroy_srq(e, h[i]), 0);
	assert_int_equal(e->n_srq, 0);
	assert_int_equal(rocev2_dealloc_pd(e, pd), 0);
	assert_int_equal(e->n_pd, 0);
}

static void test_srq_doorbell_refreshes_producer(void **state)
{
	struct rocev2_srq_attr a = { .q = { SRQ_RING, SRQ_DB, 16 }, .max_sge = 4 };
	uint32_t pd, srq;
	struct rocev2_srq *s;

	(void)state;
	assert_int_equal(rocev2_alloc_pd(e, &pd), 0);
	assert_int_equal(rocev2_create_srq(e, pd, &a, &srq), 0);
	s = &e->srqs[rocev2_handle_index(srq)];
	set_dbrec(SRQ_DB, 5);
	assert_int_equal(rocev2_srq_doorbell(e, srq), 0);
	assert_int_equal(s->wq.pi, 5);
	set_dbrec(SRQ_DB, 100);       /* hostile: clamped to a full ring */
	assert_int_equal(rocev2_srq_doorbell(e, srq), 0);
	assert_int_equal(s->wq.pi, 16);
	assert_int_equal(e->cnt.wq_bad_producer, 1);
}

/* ---- the public queries (rocev2.h): what mgmt/ and firmware/ may read -- */

static void test_obj_live_and_next_follow_the_pools(void **state)
{
	struct rocev2_srq_attr a = { .q = { SRQ_RING, SRQ_DB, 16 }, .max_sge = 4 };
	struct rocev2_queue_attr q = { .ring_addr = 0x1000, .dbrec_addr = 0x800, .size = 16 };
	struct rocev2_device_info info;
	uint32_t pd[3], lk, rk, cq, srq, h;

	(void)state;
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(rocev2_alloc_pd(e, &pd[i]), 0);
	assert_int_equal(rocev2_dealloc_pd(e, pd[1]), 0);
	assert_int_equal(rocev2_reg_mr(e, pd[0], 0, 8, 0, &lk, &rk), 0);
	assert_int_equal(rocev2_create_cq(e, &q, &cq), 0);
	assert_int_equal(rocev2_create_srq(e, pd[2], &a, &srq), 0);
	/* Liveness is the engine's own lookup: stale, free and wrong-type
	 * handles are all refused. */
	assert_true(rocev2_obj_live(e, ROCEV2_OBJ_PD, pd[0]));
	assert_false(rocev2_obj_live(e, ROCEV2_OBJ_PD, pd[1]));
	assert_false(rocev2_obj_live(e, ROCEV2_OBJ_PD, UINT32_MAX));
	assert_true(rocev2_obj_live(e, ROCEV2_OBJ_MR, lk));
	assert_false(rocev2_obj_live(e, ROCEV2_OBJ_MR, lk + 1));
	assert_true(rocev2_obj_live(e, ROCEV2_OBJ_CQ, cq));
	assert_true(rocev2_obj_live(e, ROCEV2_OBJ_SRQ, srq));
	assert_false(rocev2_obj_live(e, ROCEV2_OBJ_QP, 0x1001));
	assert_false(rocev2_obj_live(e, ROCEV2_OBJ_QP_SRQ, pd[0]));
	/* The iterator skips free slots; handle + 1 continues after it. */
	assert_int_equal(rocev2_obj_next(e, ROCEV2_OBJ_PD, 0, &h), 0);
	assert_int_equal(h, pd[0]);
	assert_int_equal(rocev2_obj_next(e, ROCEV2_OBJ_PD, h + 1, &h), 0);
	assert_int_equal(h, pd[2]);
	assert_int_equal(rocev2_obj_next(e, ROCEV2_OBJ_PD, h + 1, &h), -HAL_ENXIO);
	assert_int_equal(rocev2_obj_next(e, ROCEV2_OBJ_MR, 0, &h), 0);
	assert_int_equal(h, lk);
	assert_int_equal(rocev2_obj_next(e, ROCEV2_OBJ_MR, lk + 0x100, &h), -HAL_ENXIO);
	assert_int_equal(rocev2_obj_next(e, ROCEV2_OBJ_QP, 0, &h), -HAL_ENXIO);
	assert_int_equal(rocev2_obj_next(e, ROCEV2_OBJ_QP, UINT32_MAX, &h), -HAL_ENXIO);
	assert_int_equal(rocev2_obj_next(e, ROCEV2_OBJ_QP_SRQ, 0, &h), -HAL_EINVAL);
	assert_int_equal(rocev2_obj_next(e, ROCEV2_OBJ_LIVE_NUM, 0, &h), -HAL_EINVAL);
	rocev2_query_device(e, &info);
	assert_int_equal(info.objects[ROCEV2_OBJ_PD], 2);
	assert_int_equal(info.objects[ROCEV2_OBJ_MR], 1);
	assert_int_equal(info.objects[ROCEV2_OBJ_CQ], 1);
	assert_int_equal(info.objects[ROCEV2_OBJ_SRQ], 1);
	assert_int_equal(info.objects[ROCEV2_OBJ_QP], 0);
	assert_int_equal(info.ipv4, 0x0a000001);
	assert_int_equal(info.pause_timeout_ns, ROCEV2_PAUSE_TIMEOUT_DEFAULT_NS);
	assert_false(rocev2_context_stopped(e, 0));
	/* A moved doorbell: the engine re-reads every live queue it has. */
	set_dbrec(SRQ_DB, 3);
	assert_int_equal(rocev2_doorbells_changed(e), 1);
	assert_int_equal(e->srqs[rocev2_handle_index(srq)].wq.pi, 3);
	assert_ptr_equal(rocev2_counters(e), &e->cnt);
}

static void test_open_hands_out_the_engine_instances(void **state)
{
	struct rocev2_env env = silent_env(&dma), bad = env;
	struct rocev2 *opened[ROCEV2_MAX_ENGINES], *more;
	unsigned i;

	(void)state;
	bad.tx = NULL;
	assert_int_equal(rocev2_open(&bad, &more), -HAL_EINVAL);
	for (i = 0; i < ROCEV2_MAX_ENGINES; i++) {
		assert_int_equal(rocev2_open(&env, &opened[i]), 0);
		assert_ptr_not_equal(opened[i], e);
		assert_int_equal(rocev2_next_deadline(opened[i]), TIMER_NEVER);
	}
	assert_int_equal(rocev2_open(&env, &more), -HAL_ENOMEM);
}

/* Tenancy: one event ring, each event tagged with its object's owner;
 * each owner reads its own in order, the others' stay, in order. */
static void test_tenancy_events_per_owner(void **state)
{
	struct rocev2_event ev;
	uint32_t i;

	(void)state;
	for (i = 0; i < 6; i++)
		rocev2_post_event(e, (uint16_t)(1u + i % 3u), ROCEV2_EVENT_QP_FATAL, 100u + i);
	assert_int_equal(rocev2_get_event(e, 2, &ev), 0);
	assert_int_equal(ev.handle, 101);
	assert_int_equal(rocev2_get_event(e, 3, &ev), 0);
	assert_int_equal(ev.handle, 102);
	assert_int_equal(rocev2_get_event(e, 2, &ev), 0);
	assert_int_equal(ev.handle, 104);
	assert_int_equal(rocev2_get_event(e, 2, &ev), -HAL_EAGAIN);
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
	assert_int_equal(rocev2_get_event(e, 1, &ev), 0);
	assert_int_equal(ev.handle, 100);
	assert_int_equal(rocev2_get_event(e, 1, &ev), 0);
	assert_int_equal(ev.handle, 103);
	assert_int_equal(rocev2_get_event(e, 3, &ev), 0);
	assert_int_equal(ev.handle, 105);
	assert_int_equal(rocev2_get_event(e, 3, &ev), -HAL_EAGAIN);
	/* Wrapped around the ring: still in order per owner. */
	for (i = 0; i < ROCEV2_EVENT_RING - 1u; i++)
		rocev2_post_event(e, (uint16_t)(i & 1u), ROCEV2_EVENT_CQ_ERR, i);
	rocev2_post_event(e, 0, ROCEV2_EVENT_CQ_ERR, 999);      /* full: lost */
	assert_int_equal(e->cnt.events_lost, 1);
	for (i = 1; i < ROCEV2_EVENT_RING - 1u; i += 2) {
		assert_int_equal(rocev2_get_event(e, 1, &ev), 0);
		assert_int_equal(ev.handle, i);
	}
	for (i = 0; i < ROCEV2_EVENT_RING - 1u; i += 2) {
		assert_int_equal(rocev2_get_event(e, 0, &ev), 0);
		assert_int_equal(ev.handle, i);
	}
	assert_int_equal(rocev2_get_event(e, 0, &ev), -HAL_EAGAIN);
	assert_int_equal(rocev2_create_as(e, ROCEV2_MAX_OWNERS), -HAL_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_pd_pool_exhaust_and_generations, setup),
		cmocka_unit_test_setup(test_cq_resize, setup),
		cmocka_unit_test_setup(test_cq_resize_hostile_consumer, setup),
		cmocka_unit_test_setup(test_tenancy_events_per_owner, setup),
		cmocka_unit_test_setup(test_pd_generation_wraps_past_zero, setup),
		cmocka_unit_test_setup(test_mr_pool_exhaust_and_stale_keys, setup),
		cmocka_unit_test_setup(test_mr_key_byte_cycles_without_zero, setup),
		cmocka_unit_test_setup(test_mr_lookup_hostile_keys, setup),
		cmocka_unit_test_setup(test_mr_reg_validation, setup),
		cmocka_unit_test_setup(test_mr_check_bounds, setup),
		cmocka_unit_test_setup(test_mr_check_at_top_of_address_space, setup),
		cmocka_unit_test_setup(test_cq_create_validation, setup),
		cmocka_unit_test_setup(test_cq_pool_exhaust_and_stale, setup),
		cmocka_unit_test_setup(test_cq_post_owner_bit_across_wraps, setup),
		cmocka_unit_test_setup(test_cq_post_writes_owner_last, setup),
		cmocka_unit_test_setup(test_cq_overflow, setup),
		cmocka_unit_test_setup(test_cq_overflow_hostile_consumer, setup),
		cmocka_unit_test_setup(test_cq_post_free_running_index_wrap, setup),
		cmocka_unit_test_setup(test_cq_post_bad_index_and_dma_error, setup),
		cmocka_unit_test_setup(test_srq_create_validation, setup),
		cmocka_unit_test_setup(test_srq_pool_limit_and_busy_pd, setup),
		cmocka_unit_test_setup(test_srq_doorbell_refreshes_producer, setup),
		cmocka_unit_test_setup(test_obj_live_and_next_follow_the_pools, setup),
		cmocka_unit_test_setup(test_open_hands_out_the_engine_instances, setup),
	};
	return cmocka_run_group_tests_name("rocev2/objects", tests, NULL, NULL);
}
