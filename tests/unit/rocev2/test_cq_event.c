/* Completion events (rocev2/eq.c; mnic/queues.h "Completion events"): the
 * CQ arm word of the doorbell record, one EQE per arm, the re-arm race,
 * stale sequence numbers, EQ overflow and hostile values.  The engine runs
 * on a fake host window; CQEs go in through rocev2_cq_post, as the stages
 * write them, and the host side is plain memory. */
#include "cmocka_main.h"

#include <string.h>

#include "internal.h"
#include "silent_env.h"

#define HOST_SIZE (256u << 10)
#define CQ_RING   0x01000u
#define CQ2_RING  0x02000u
#define CQ_SIZE   8u
#define CQ_DBREC  0x00100u
#define CQ2_DBREC 0x00108u
#define EQ_DBREC  0x00110u
#define EQ_RING   0x04000u
#define EQ_SIZE   4u
#define VECTOR    3u

static uint8_t host[HOST_SIZE];
static struct hal_dma dma;
static struct rocev2 eng;
static struct rocev2 *const e = &eng;
static uint32_t cq, cq2, eq;

static struct mnic_dbrec *rec_at(uint64_t addr)
{
	return (struct mnic_dbrec *)(host + addr);
}

static void arm(uint64_t dbrec, uint32_t sn, uint32_t cmd)
{
	rec_at(dbrec)->arm = MNIC_CQ_ARM(sn, cmd);
}

static int setup(void **state)
{
	struct rocev2_env env = silent_env(&dma);
	struct rocev2_queue_attr cqa = { .ring_addr = CQ_RING, .dbrec_addr = CQ_DBREC, .size = CQ_SIZE };
	struct rocev2_queue_attr cqb = { .ring_addr = CQ2_RING, .dbrec_addr = CQ2_DBREC,
					 .size = CQ_SIZE };
	struct rocev2_queue_attr eqa = { .ring_addr = EQ_RING, .dbrec_addr = EQ_DBREC, .size = EQ_SIZE };

	(void)state;
	env.raise = count_raise;
	memset(host, 0, sizeof(host));
	hal_dma_window_init(&dma, host, sizeof(host));
	raised = last_vector = 0;
	assert_int_equal(rocev2_init(e, &env), 0);
	assert_int_equal(rocev2_create_cq(e, &cqa, &cq), 0);
	assert_int_equal(rocev2_create_cq(e, &cqb, &cq2), 0);
	assert_int_equal(rocev2_create_eq(e, &eqa, VECTOR, &eq), 0);
	assert_int_equal(rocev2_cq_set_eq(e, cq, eq), 0);
	assert_int_equal(rocev2_cq_set_eq(e, cq2, eq), 0);
	return 0;
}

/* One CQE on cq (its pool index), status and flags as given. */
static void complete(uint32_t handle, uint8_t status, uint8_t flags)
{
	struct mnic_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = 0x77;
	c.status = status;
	c.opcode = MNIC_WC_RECV;
	c.flags = flags;
	assert_int_equal(rocev2_cq_post(e, (uint16_t)(handle & 0xffffu), &c), 0);
}

static const struct mnic_eqe *eqe_at(uint32_t index)
{
	return (const struct mnic_eqe *)(host + EQ_RING + (index % EQ_SIZE) * MNIC_EQE_SIZE);
}

/* The EQE at index is new (owner phase of index) and names cq with sn. */
static void expect_eqe(uint32_t index, uint32_t cq_handle, uint8_t sn)
{
	const struct mnic_eqe *q = eqe_at(index);

	assert_int_equal(q->owner, MNIC_CQE_OWNER(index, EQ_SIZE));
	assert_int_equal(q->cq, cq_handle);
	assert_int_equal(q->type, MNIC_EQE_COMPLETION);
	assert_int_equal(q->arm_sn, sn);
}

static void expect_no_eqe(uint32_t index)
{
	assert_int_not_equal(eqe_at(index)->owner, MNIC_CQE_OWNER(index, EQ_SIZE));
}

static void test_cq_event_arm_next(void **state)
{
	(void)state;
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_NEXT);
	rocev2_doorbells_changed(e);
	assert_int_equal(e->cnt.cq_arms, 1);
	expect_no_eqe(0);               /* nothing completed yet */
	assert_int_equal(raised, 0);
	complete(cq, MNIC_WC_SUCCESS, 0);
	expect_eqe(0, cq, 0);
	assert_int_equal(raised, 1);
	assert_int_equal(last_vector, VECTOR);
	assert_int_equal(e->cnt.cq_events, 1);
	assert_int_equal(e->cnt.eq_raises, 1);
	/* one event per arm: the next CQE fires nothing */
	complete(cq, MNIC_WC_SUCCESS, 0);
	rocev2_doorbells_changed(e);
	expect_no_eqe(1);
	assert_int_equal(raised, 1);
	/* re-armed with the next sn: fires again, into the next EQE */
	rec_at(CQ_DBREC)->index = 2;    /* the host polled both */
	arm(CQ_DBREC, 1, MNIC_CQ_ARM_NEXT);
	rocev2_doorbells_changed(e);
	expect_no_eqe(1);
	complete(cq, MNIC_WC_SUCCESS, 0);
	expect_eqe(1, cq, 1);
	assert_int_equal(e->cnt.cq_events, 2);
	assert_int_equal(e->cnt.cq_arms, 2);
}

/* The arm rides in the record the CQE write reads: no doorbell needed. */
static void test_cq_event_arm_seen_with_cqe(void **state)
{
	(void)state;
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_NEXT);
	complete(cq, MNIC_WC_SUCCESS, 0);
	expect_eqe(0, cq, 0);
	assert_int_equal(e->cnt.cq_events_at_arm, 0);
}

static void test_cq_event_solicited(void **state)
{
	(void)state;
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_SOLICITED);
	rocev2_doorbells_changed(e);
	complete(cq, MNIC_WC_SUCCESS, 0);               /* a SEND without SE */
	complete(cq, MNIC_WC_SUCCESS, MNIC_CQE_WITH_IMM);
	expect_no_eqe(0);
	assert_int_equal(raised, 0);
	complete(cq, MNIC_WC_SUCCESS, MNIC_CQE_SOLICITED);   /* SE set */
	expect_eqe(0, cq, 0);
	assert_int_equal(raised, 1);
}

/* IBA 11.4.2.2: an error completion is solicited. */
static void test_cq_event_error_fires_solicited(void **state)
{
	(void)state;
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_SOLICITED);
	rocev2_doorbells_changed(e);
	complete(cq, MNIC_WC_WR_FLUSH_ERR, 0);
	expect_eqe(0, cq, 0);
}

/* A NEXT request upgrades a SOLICITED one of the same sn, never the
 * reverse. */
static void test_cq_event_upgrade(void **state)
{
	(void)state;
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_SOLICITED);
	rocev2_doorbells_changed(e);
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_NEXT);
	rocev2_doorbells_changed(e);
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_SOLICITED);        /* stays NEXT */
	rocev2_doorbells_changed(e);
	complete(cq, MNIC_WC_SUCCESS, 0);
	expect_eqe(0, cq, 0);
	assert_int_equal(e->cnt.cq_arm_stale, 0);
}

/* Poll empty, CQE lands, arm: the arm fires at once (the host sleeps right
 * after it); a CQE the host already consumed fires nothing. */
static void test_cq_event_rearm_race(void **state)
{
	(void)state;
	complete(cq, MNIC_WC_SUCCESS, 0);
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_NEXT);             /* consumer index still 0 */
	rocev2_doorbells_changed(e);
	expect_eqe(0, cq, 0);
	assert_int_equal(e->cnt.cq_events_at_arm, 1);
	/* consumed: an arm finds nothing pending */
	rec_at(CQ_DBREC)->index = 1;
	arm(CQ_DBREC, 1, MNIC_CQ_ARM_NEXT);
	rocev2_doorbells_changed(e);
	expect_no_eqe(1);
	/* SOLICITED: an unconsumed plain CQE does not fire it, a solicited one does */
	complete(cq2, MNIC_WC_SUCCESS, 0);
	arm(CQ2_DBREC, 0, MNIC_CQ_ARM_SOLICITED);
	rocev2_doorbells_changed(e);
	assert_int_equal(e->cnt.cq_events, 1);
	complete(cq2, MNIC_WC_SUCCESS, MNIC_CQE_SOLICITED);  /* fires with the CQE */
	expect_eqe(1, cq2, 0);
	rec_at(CQ2_DBREC)->index = 1;                   /* the solicited one is unconsumed */
	complete(cq2, MNIC_WC_SUCCESS, 0);
	arm(CQ2_DBREC, 1, MNIC_CQ_ARM_SOLICITED);
	rocev2_doorbells_changed(e);
	expect_eqe(2, cq2, 1);
	assert_int_equal(e->cnt.cq_events_at_arm, 2);
	/* ... and once the host consumed it, nothing fires */
	rec_at(CQ2_DBREC)->index = 3;
	complete(cq2, MNIC_WC_SUCCESS, 0);
	arm(CQ2_DBREC, 2, MNIC_CQ_ARM_SOLICITED);
	rocev2_doorbells_changed(e);
	assert_int_equal(e->cnt.cq_events, 3);
}

/* The sn that fired is spent; only sn + 1 arms again.  Repeating the word
 * is no new arm at all. */
static void test_cq_event_stale_sn(void **state)
{
	(void)state;
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_NEXT);
	complete(cq, MNIC_WC_SUCCESS, 0);
	expect_eqe(0, cq, 0);
	rec_at(CQ_DBREC)->index = 1;
	rocev2_doorbells_changed(e);                    /* the same word again */
	assert_int_equal(e->cnt.cq_arm_stale, 0);
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_SOLICITED);        /* the spent sn, another cmd */
	rocev2_doorbells_changed(e);
	arm(CQ_DBREC, 5, MNIC_CQ_ARM_NEXT);             /* out of sequence */
	rocev2_doorbells_changed(e);
	assert_int_equal(e->cnt.cq_arm_stale, 2);
	complete(cq, MNIC_WC_SUCCESS, MNIC_CQE_SOLICITED);
	expect_no_eqe(1);
	assert_int_equal(e->cnt.cq_events, 1);
	/* before a fire only the sn in force: a host may not skip ahead */
	rec_at(CQ_DBREC)->index = 2;
	arm(CQ_DBREC, 1, MNIC_CQ_ARM_NEXT);
	rocev2_doorbells_changed(e);
	arm(CQ_DBREC, 2, MNIC_CQ_ARM_NEXT);
	rocev2_doorbells_changed(e);
	assert_int_equal(e->cnt.cq_arm_stale, 3);
	complete(cq, MNIC_WC_SUCCESS, 0);
	expect_eqe(1, cq, 1);
	/* the sn wraps at 256 */
	e->cqs[cq & 0xffffu].arm_sn = 255;
	rec_at(CQ_DBREC)->index = 3;
	arm(CQ_DBREC, 0, MNIC_CQ_ARM_NEXT);
	rocev2_doorbells_changed(e);
	complete(cq, MNIC_WC_SUCCESS, 0);
	expect_eqe(2, cq, 0);
}

/* A full EQ: nothing overwritten, counted, the CQ stays armed and fires
 * once the host made room. */
static void test_cq_event_eq_overflow(void **state)
{
	struct mnic_eqe before[EQ_SIZE];
	uint32_t i;

	(void)state;
	for (i = 0; i < EQ_SIZE; i++) {                 /* fill it: cq fires EQ_SIZE times */
		rec_at(CQ_DBREC)->index = i;
		arm(CQ_DBREC, i, MNIC_CQ_ARM_NEXT);
		complete(cq, MNIC_WC_SUCCESS, 0);
		expect_eqe(i, cq, (uint8_t)i);
	}
	memcpy(before, host + EQ_RING, sizeof(before));
	arm(CQ2_DBREC, 0, MNIC_CQ_ARM_NEXT);
	complete(cq2, MNIC_WC_SUCCESS, 0);
	assert_int_equal(e->cnt.eq_overflows, 1);
	assert_memory_equal(host + EQ_RING, before, sizeof(before));
	assert_int_equal(e->cnt.cq_events, EQ_SIZE);
	/* a hostile consumer index ahead of the producer is full as well */
	rec_at(EQ_DBREC)->index = EQ_SIZE + 3;
	complete(cq2, MNIC_WC_SUCCESS, 0);
	assert_int_equal(e->cnt.eq_overflows, 2);
	assert_memory_equal(host + EQ_RING, before, sizeof(before));
	/* room for one: cq2's arm, still in force, fires into slot 0's second pass */
	rec_at(EQ_DBREC)->index = 1;
	complete(cq2, MNIC_WC_SUCCESS, 0);
	expect_eqe(EQ_SIZE, cq2, 0);
	assert_int_equal(eqe_at(EQ_SIZE)->owner, 0);
	assert_int_equal(e->cnt.cq_events, EQ_SIZE + 1);
	assert_memory_equal(host + EQ_RING + MNIC_EQE_SIZE, &before[1],
			    sizeof(before) - sizeof(before[0]));
}

/* Hostile arm words and objects: each refused and counted, nothing fires. */
static void test_cq_event_hostile(void **state)
{
	struct rocev2_queue_attr eqa = { .ring_addr = 0x8000, .dbrec_addr = 0x118, .size = 4 };
	struct rocev2_queue_attr bad = eqa;
	uint32_t eq2, cqn, owner;

	(void)state;
	rec_at(CQ_DBREC)->arm = MNIC_CQ_ARM(0, MNIC_CQ_ARM_NEXT) | 0x10000u;   /* reserved bits */
	rocev2_doorbells_changed(e);
	arm(CQ_DBREC, 0, 3);                            /* unknown cmd */
	rocev2_doorbells_changed(e);
	arm(CQ_DBREC, 0, 0xff);
	rocev2_doorbells_changed(e);
	assert_int_equal(e->cnt.cq_arm_refused, 3);
	complete(cq, MNIC_WC_SUCCESS, MNIC_CQE_SOLICITED);
	assert_int_equal(e->cnt.cq_events, 0);
	/* no EQ: the arm is seen with the next CQE and counted */
	assert_int_equal(rocev2_cq_set_eq(e, cq2, ROCEV2_NO_EQ), 0);
	arm(CQ2_DBREC, 0, MNIC_CQ_ARM_NEXT);
	complete(cq2, MNIC_WC_SUCCESS, 0);
	assert_int_equal(e->cnt.cq_arm_no_eq, 1);
	assert_int_equal(e->cnt.cq_events, 0);
	assert_int_equal(raised, 0);
	/* vectors: 0 is the command queue's, past MAX the channel cannot name */
	assert_int_equal(rocev2_create_eq(e, &eqa, 0, &eq2), -HAL_EINVAL);
	assert_int_equal(rocev2_create_eq(e, &eqa, MNIC_EQ_VECTOR_MAX + 1u, &eq2), -HAL_EINVAL);
	assert_int_equal(rocev2_create_eq(e, &eqa, UINT32_MAX, &eq2), -HAL_EINVAL);
	bad.size = 3;                                   /* not a power of two */
	assert_int_equal(rocev2_create_eq(e, &bad, 1, &eq2), -HAL_EINVAL);
	bad = eqa;
	bad.ring_addr = HOST_SIZE - 16;                 /* ring past the window */
	assert_int_not_equal(rocev2_create_eq(e, &bad, 1, &eq2), 0);
	bad = eqa;
	bad.dbrec_addr = 0x119;                         /* misaligned record */
	assert_int_equal(rocev2_create_eq(e, &bad, 1, &eq2), -HAL_EINVAL);
	assert_int_equal(e->n_eq, 1);
	/* handles: stale, out of range, another owner's */
	assert_int_equal(rocev2_cq_set_eq(e, cq, eq + (1u << 16)), -HAL_EINVAL);
	assert_int_equal(rocev2_cq_set_eq(e, cq, 0xffffu), -HAL_EINVAL);
	assert_int_equal(rocev2_cq_set_eq(e, 0x7fff1234u, eq), -HAL_EINVAL);
	assert_int_equal(rocev2_obj_owner(e, ROCEV2_OBJ_EQ, eq, &owner), 0);
	assert_int_equal(rocev2_obj_live(e, ROCEV2_OBJ_EQ, eq + (1u << 16)), 0);
	assert_int_equal(rocev2_create_as(e, 3), 0);
	assert_int_equal(rocev2_create_eq(e, &eqa, 1, &eq2), 0);
	assert_int_equal(rocev2_cq_set_eq(e, cq, eq2), -HAL_EINVAL);   /* as owner 3 */
	assert_int_equal(rocev2_create_as(e, 0), 0);
	assert_int_equal(rocev2_cq_set_eq(e, cq, eq2), -HAL_EINVAL);   /* owner 3's EQ */
	/* an EQ with CQs bound stays; the CQ's destroy unbinds it */
	assert_int_equal(rocev2_destroy_eq(e, eq), -HAL_EBUSY);
	assert_int_equal(rocev2_destroy_cq(e, cq), 0);
	assert_int_equal(rocev2_destroy_eq(e, eq), 0);
	assert_int_equal(rocev2_destroy_eq(e, eq), -HAL_EINVAL);
	/* a context's end takes its EQs, after its CQs */
	assert_int_equal(rocev2_create_as(e, 3), 0);
	assert_int_equal(rocev2_create_cq(e, &(struct rocev2_queue_attr){ 0x9000, 0x120, 4, 0, 0 },
					  &cqn), 0);
	assert_int_equal(rocev2_cq_set_eq(e, cqn, eq2), 0);
	assert_int_equal(rocev2_destroy_owned(e, 3), 0);
	assert_int_equal(e->n_eq, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_cq_event_arm_next, setup),
		cmocka_unit_test_setup(test_cq_event_arm_seen_with_cqe, setup),
		cmocka_unit_test_setup(test_cq_event_solicited, setup),
		cmocka_unit_test_setup(test_cq_event_error_fires_solicited, setup),
		cmocka_unit_test_setup(test_cq_event_upgrade, setup),
		cmocka_unit_test_setup(test_cq_event_rearm_race, setup),
		cmocka_unit_test_setup(test_cq_event_stale_sn, setup),
		cmocka_unit_test_setup(test_cq_event_eq_overflow, setup),
		cmocka_unit_test_setup(test_cq_event_hostile, setup),
	};

	return cmocka_run_group_tests_name("test_cq_event", tests, NULL, NULL);
}
