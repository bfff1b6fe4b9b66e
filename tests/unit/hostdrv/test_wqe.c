/* The ring code libmnic and the rdma-core provider share
 * (hostdrv/lib/wqe.c, formats in mnic/queues.h): a send WQE carries every
 * field of its work request and a bad request writes nothing; a receive
 * WQE; the send-queue accounting under in-order RC completions, with
 * unsignaled WQEs retired by the next signaled one and an error CQE of an
 * unsignaled WQE matched by wr_id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "wqe.h"

static void test_send_fill(void **state)
{
	struct mnic_sge sg[2] = { { 0x1000, 64, 7 }, { 0x2000, 32, 8 } };
	struct mnic_send_wr wr = {
		.wr_id = 0x1122334455667788ull, .sg_list = sg, .num_sge = 2,
		.opcode = MNIC_WR_ATOMIC_CMP_AND_SWP, .send_flags = MNIC_SEND_SIGNALED,
		.imm_data = 0xabcd, .remote_addr = 0x9000, .rkey = 0x42, .compare_add = 5, .swap = 6,
	};
	struct mnic_send_wqe w;

	(void)state;
	memset(&w, 0xee, sizeof(w));
	assert_int_equal(mnic_wqe_send_fill(&w, &wr, 2, NULL, NULL), 0);
	assert_int_equal(w.wr_id, wr.wr_id);
	assert_int_equal(w.opcode, MNIC_WR_ATOMIC_CMP_AND_SWP);
	assert_int_equal(w.send_flags, MNIC_SEND_SIGNALED);
	assert_int_equal(w.num_sge, 2);
	assert_int_equal(w.imm_data, 0xabcd);
	assert_int_equal(w.remote_addr, 0x9000);
	assert_int_equal(w.rkey, 0x42);
	assert_int_equal(w.compare_add, 5);
	assert_int_equal(w.swap, 6);
	assert_memory_equal(w.sge, sg, sizeof(sg));
	/* the rest of the WQE is zeroed, not left from an earlier one */
	assert_int_equal(w.sge[2].addr, 0);
	assert_int_equal(w.reserved0, 0);
}

static void test_send_fill_refusals(void **state)
{
	struct mnic_sge sg = { 0x1000, 64, 7 };
	struct mnic_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = MNIC_WR_SEND };
	uint8_t slot[MNIC_WQE_SIZE], zero[MNIC_WQE_SIZE];

	(void)state;
	memset(slot, 0, sizeof(slot));
	memset(zero, 0, sizeof(zero));
	wr.opcode = 7;                           /* not a send-queue opcode */
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 1, NULL, NULL), -EINVAL);
	wr.opcode = MNIC_WR_NUM;
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 1, NULL, NULL), -EINVAL);
	wr.opcode = MNIC_WR_SEND;
	wr.send_flags = MNIC_SEND_INLINE;        /* INLINE without a map */
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 1, NULL, NULL), -EINVAL);
	wr.send_flags = 0;
	wr.num_sge = 2;                          /* more than the QP's max */
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 1, NULL, NULL), -EINVAL);
	wr.num_sge = 1;
	wr.sg_list = NULL;
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 1, NULL, NULL), -EINVAL);
	assert_memory_equal(slot, zero, sizeof(slot));   /* nothing written */
}

/* Inline data: the test's "address space" is buf, SGE addresses are
 * offsets into it (as libmnic's user area or the provider's pointers). */
static uint8_t buf[1024];
static unsigned map_calls;

static const void *buf_map(void *arg, uint64_t addr, uint32_t len)
{
	(void)arg;
	map_calls++;
	if (addr >= sizeof(buf) || len > sizeof(buf) - addr)
		return NULL;
	return buf + addr;
}

static void test_send_fill_inline(void **state)
{
	struct mnic_sge sg[3] = { { 10, 100, 0 }, { 500, 0, 0 }, { 300, 348, 0 } };
	struct mnic_send_wr wr = {
		.wr_id = 9, .sg_list = sg, .num_sge = 3, .opcode = MNIC_WR_SEND_WITH_IMM,
		.send_flags = MNIC_SEND_INLINE | MNIC_SEND_SIGNALED, .imm_data = 0x77,
	};
	struct mnic_send_wqe w;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 13u + 1u);
	memset(&w, 0xee, sizeof(w));
	assert_int_equal(mnic_wqe_send_fill(&w, &wr, 1, buf_map, NULL), 0);
	/* more SGEs than max_send_sge: inline lists are bounded by bytes */
	assert_int_equal(w.num_sge, 0);
	assert_int_equal(w.inline_len, MNIC_MAX_INLINE);
	assert_int_equal(w.send_flags, MNIC_SEND_INLINE | MNIC_SEND_SIGNALED);
	assert_int_equal(w.imm_data, 0x77);
	assert_memory_equal(w.inline_data, buf + 10, 100);
	assert_memory_equal(w.inline_data + 100, buf + 300, 348);
	/* The caller's buffer may change now: the WQE holds its own copy. */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(w.inline_data[0], (uint8_t)(10 * 13 + 1));
}

static void test_send_fill_inline_refusals(void **state)
{
	struct mnic_sge sg[2] = { { 0, 400, 0 }, { 400, 49, 0 } };
	struct mnic_send_wr wr = { .sg_list = sg, .num_sge = 2, .opcode = MNIC_WR_RDMA_WRITE,
				   .send_flags = MNIC_SEND_INLINE };
	uint8_t slot[MNIC_WQE_SIZE], zero[MNIC_WQE_SIZE];

	(void)state;
	memset(slot, 0, sizeof(slot));
	memset(zero, 0, sizeof(zero));
	map_calls = 0;
	/* 449 bytes: one more than MNIC_MAX_INLINE, refused before any copy */
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 2, buf_map, NULL), -EINVAL);
	assert_int_equal(map_calls, 0);
	sg[1].length = 48;
	sg[1].addr = sizeof(buf);                /* outside the address space */
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 2, buf_map, NULL), -EFAULT);
	sg[1].addr = 400;
	sg[0].length = UINT32_MAX;               /* a sum that would wrap */
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 2, buf_map, NULL), -EINVAL);
	sg[0].length = 400;
	wr.opcode = MNIC_WR_RDMA_READ;           /* IBA 10.8.2.1: not on READ */
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 2, buf_map, NULL), -EINVAL);
	wr.opcode = MNIC_WR_ATOMIC_FETCH_AND_ADD; /* nor atomics */
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 2, buf_map, NULL), -EINVAL);
	wr.opcode = MNIC_WR_SEND;
	wr.num_sge = MNIC_MAX_SGE + 1;
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 2, buf_map, NULL), -EINVAL);
	assert_memory_equal(slot, zero, sizeof(slot));   /* nothing written */
	wr.num_sge = 2;
	assert_int_equal(mnic_wqe_send_fill(slot, &wr, 2, buf_map, NULL), 0);
}

static void test_recv_fill(void **state)
{
	struct mnic_sge sg[3] = { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } };
	struct mnic_recv_wr wr = { .wr_id = 99, .sg_list = sg, .num_sge = 3 };
	struct mnic_recv_wqe w;

	(void)state;
	assert_int_equal(mnic_wqe_recv_fill(&w, &wr, 2), -EINVAL);
	assert_int_equal(mnic_wqe_recv_fill(&w, &wr, 3), 0);
	assert_int_equal(w.wr_id, 99);
	assert_int_equal(w.num_sge, 3);
	assert_memory_equal(w.sge, sg, sizeof(sg));
}

/* A send queue of 4: post WQEs i with wr_id 100 + i, signaled[i]. */
struct sq_fixture {
	uint8_t ring[4 * MNIC_WQE_SIZE];
	uint32_t fifo[4];
	struct mnic_sq_track t;
};

static void post(struct sq_fixture *f, int signaled)
{
	struct mnic_send_wr wr = { .opcode = MNIC_WR_SEND };
	uint32_t idx = f->t.pi;

	wr.wr_id = 100 + idx;
	assert_true(f->t.pi - f->t.ci < f->t.size);
	assert_int_equal(mnic_wqe_send_fill(f->ring + (idx & 3) * MNIC_WQE_SIZE, &wr, 1, NULL, NULL), 0);
	mnic_sq_posted(&f->t, idx, signaled);
	f->t.pi++;
}

static void test_sq_retire(void **state)
{
	struct sq_fixture f;
	struct mnic_cqe c;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.t.size = 4;
	f.t.sig_fifo = f.fifo;
	post(&f, 0);
	post(&f, 0);
	post(&f, 1);                             /* 0, 1 unsignaled, 2 signaled */
	post(&f, 0);
	assert_int_equal(f.t.pi - f.t.ci, 4);    /* full */
	memset(&c, 0, sizeof(c));
	c.status = MNIC_WC_SUCCESS;
	c.wr_id = 102;
	mnic_sq_retire(&f.t, f.ring, &c);        /* retires 0..2 (IBA 9.7.5.2.1) */
	assert_int_equal(f.t.ci, 3);
	/* an error CQE of the unsignaled WQE 3: found by its wr_id */
	c.status = MNIC_WC_RETRY_EXC_ERR;
	c.wr_id = 103;
	mnic_sq_retire(&f.t, f.ring, &c);
	assert_int_equal(f.t.ci, 4);
	/* a CQE naming no outstanding WQE frees nothing */
	post(&f, 0);
	c.wr_id = 555;
	mnic_sq_retire(&f.t, f.ring, &c);
	assert_int_equal(f.t.ci, 4);
	/* a flushed signaled WQE behind ci is dropped from the FIFO */
	post(&f, 1);                             /* 5 signaled */
	c.wr_id = 105;
	mnic_sq_retire(&f.t, f.ring, &c);        /* error CQE: by wr_id */
	assert_int_equal(f.t.ci, 6);
	assert_int_equal(f.t.sig_head, f.t.sig_tail);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_fill),
		cmocka_unit_test(test_send_fill_refusals),
		cmocka_unit_test(test_send_fill_inline),
		cmocka_unit_test(test_send_fill_inline_refusals),
		cmocka_unit_test(test_recv_fill),
		cmocka_unit_test(test_sq_retire),
	};

	return cmocka_run_group_tests_name("wqe", tests, NULL, NULL);
}
