/* lib/timer.c: deadline order, FIFO on ties, cancel/re-arm anywhere in
 * the heap, re-arm from a callback, capacity (64 slots here). */
#include "cmocka_main.h"

#include <stdlib.h>

#include "hal/errno.h"
#include "lib/timer.h"

#define SLOTS 64u

static struct timer *slots[SLOTS];
static struct timer_heap ts;
static int order[256];
static int n_order;

static void record(struct timer *t, void *arg)
{
	(void)t;
	order[n_order++] = (int)(intptr_t)arg;
}

static int setup(void **state)
{
	(void)state;
	timer_heap_init(&ts, slots, SLOTS);
	n_order = 0;
	return 0;
}

static void test_fires_in_deadline_order(void **state)
{
	static struct timer t[8];
	static const uint64_t dl[8] = { 50, 10, 40, 20, 70, 30, 60, 0 };
	int i;

	(void)state;
	for (i = 0; i < 8; i++) {
		timer_setup(&t[i], record, (void *)(intptr_t)i);
		assert_int_equal(timer_arm(&ts, &t[i], dl[i]), 0);
	}
	assert_int_equal(timer_heap_next(&ts), 0);
	assert_int_equal(timer_heap_run(&ts, 35), 4);
	assert_int_equal(order[0], 7);
	assert_int_equal(order[1], 1);
	assert_int_equal(order[2], 3);
	assert_int_equal(order[3], 5);
	assert_int_equal(timer_heap_next(&ts), 40);
	assert_int_equal(timer_heap_run(&ts, 1000), 4);
	assert_int_equal(order[4], 2);
	assert_int_equal(order[5], 0);
	assert_int_equal(order[6], 6);
	assert_int_equal(order[7], 4);
	assert_int_equal(timer_heap_next(&ts), TIMER_NEVER);
}

static void test_ties_fire_in_arm_order(void **state)
{
	static struct timer t[10];
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		timer_setup(&t[i], record, (void *)(intptr_t)i);
		timer_arm(&ts, &t[i], 100);
	}
	assert_int_equal(timer_heap_run(&ts, 100), 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(order[i], i);
}

static void test_cancel_and_rearm_keep_heap_valid(void **state)
{
	static struct timer t[64];
	uint64_t dl[64], last = 0;
	int i, fired = 0;

	(void)state;
	srand(1234);
	for (i = 0; i < 64; i++) {
		dl[i] = (uint64_t)(rand() % 1000);
		timer_setup(&t[i], record, (void *)(intptr_t)i);
		assert_int_equal(timer_arm(&ts, &t[i], dl[i]), 0);
	}
	/* Cancel every third, move every fifth. */
	for (i = 0; i < 64; i += 3)
		timer_cancel(&ts, &t[i]);
	for (i = 1; i < 64; i += 5) {
		if (!timer_armed(&t[i]))
			continue;
		dl[i] = (uint64_t)(rand() % 1000);
		timer_arm(&ts, &t[i], dl[i]);
	}
	timer_cancel(&ts, &t[0]);  /* cancelling twice is harmless */
	while (timer_heap_next(&ts) != TIMER_NEVER) {
		int before = n_order;

		timer_heap_run(&ts, timer_heap_next(&ts));
		for (i = before; i < n_order; i++) {
			assert_true(dl[order[i]] >= last);
			last = dl[order[i]];
			assert_int_not_equal(order[i] % 3, 0);
			fired++;
		}
	}
	assert_int_equal(fired, 64 - 22);
	assert_int_equal(ts.n, 0);
}

static struct timer periodic;
static int periodic_runs;

static void rearm_self(struct timer *t, void *arg)
{
	(void)arg;
	periodic_runs++;
	/* Re-arming at a deadline already due must not fire in the same run. */
	timer_arm(&ts, t, t->deadline);
}

static void test_rearm_from_callback_waits_for_next_run(void **state)
{
	(void)state;
	periodic_runs = 0;
	timer_setup(&periodic, rearm_self, NULL);
	timer_arm(&ts, &periodic, 5);
	assert_int_equal(timer_heap_run(&ts, 10), 1);
	assert_int_equal(periodic_runs, 1);
	assert_true(timer_armed(&periodic));
	assert_int_equal(timer_heap_run(&ts, 10), 1);
	assert_int_equal(periodic_runs, 2);
}

static void test_capacity_is_enforced_and_counted(void **state)
{
	static struct timer t[65];
	int i;

	(void)state;
	for (i = 0; i < 64; i++) {
		timer_setup(&t[i], record, NULL);
		assert_int_equal(timer_arm(&ts, &t[i], (uint64_t)i), 0);
	}
	timer_setup(&t[64], record, NULL);
	assert_int_equal(timer_arm(&ts, &t[64], 1), -HAL_ENOSPC);
	assert_int_equal(ts.stats.full, 1);
	assert_false(timer_armed(&t[64]));
	/* Re-arming an armed timer in a full heap still works (it moves). */
	assert_int_equal(timer_arm(&ts, &t[10], 500), 0);
	assert_int_equal(timer_heap_run(&ts, 499), 63);
	assert_int_equal(timer_heap_next(&ts), 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_fires_in_deadline_order, setup),
		cmocka_unit_test_setup(test_ties_fire_in_arm_order, setup),
		cmocka_unit_test_setup(test_cancel_and_rearm_keep_heap_valid, setup),
		cmocka_unit_test_setup(test_rearm_from_callback_waits_for_next_run, setup),
		cmocka_unit_test_setup(test_capacity_is_enforced_and_counted, setup),
	};
	return cmocka_run_group_tests_name("lib/timer", tests, NULL, NULL);
}
