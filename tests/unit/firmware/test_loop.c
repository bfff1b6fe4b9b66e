/* firmware/loop.c against a fake platform: a clock the test moves, ports
 * with queued frames, and a wait() that records what the loop asked for. */
#include "cmocka_main.h"

#include <string.h>

#include "hal/errno.h"
#include "loop.h"

/* ---- fake platform ---------------------------------------------------- */
static uint64_t now;
static uint64_t hw_deadline = HAL_TIMER_NEVER;
static unsigned waits, polls;
static uint64_t last_wait_deadline;
static int deadline_set_before_wait;

static uint64_t fake_now(void) { return now; }
static void fake_set_deadline(uint64_t d) { hw_deadline = d; }
static int fake_expired(void) { return now >= hw_deadline; }
static const struct hal_timer_ops fake_timer = { fake_now, fake_set_deadline, fake_expired };

struct fake_port {
	struct hal_eth eth;
	int queue[256];   /* >0 frame length, <0 error */
	unsigned head, tail;
};
static struct fake_port ports[2];

static int fake_tx(struct hal_eth *e, const void *f, size_t n) { (void)e; (void)f; (void)n; return 0; }
static int fake_rx(struct hal_eth *e, void *buf, size_t cap)
{
	struct fake_port *p = e->priv;
	int n;

	if (p->head == p->tail)
		return 0;
	n = p->queue[p->head++ % 256];
	if (n > 0) {
		assert_true((size_t)n <= cap);
		memset(buf, (int)(p - ports), (size_t)n);
	}
	return n;
}
static void fake_poll(struct hal_eth *e) { (void)e; }
static int fake_pending(struct hal_eth *e) { struct fake_port *p = e->priv; return p->head != p->tail; }
static const struct hal_eth_ops fake_eth_ops = { fake_tx, fake_rx, fake_poll, fake_pending };

static struct hal_platform plat;

void hal_platform_poll(struct hal_platform *p) { (void)p; polls++; }
void hal_platform_wait(struct hal_platform *p, uint64_t deadline_ns)
{
	(void)p;
	waits++;
	last_wait_deadline = deadline_ns;
	deadline_set_before_wait = hw_deadline == deadline_ns;
	/* Sleeping means time passes until the programmed deadline. */
	if (hw_deadline != HAL_TIMER_NEVER && hw_deadline > now)
		now = hw_deadline;
}

static void queue_frames(unsigned port, unsigned n, int len)
{
	while (n--)
		ports[port].queue[ports[port].tail++ % 256] = len;
}

/* ---- recorders -------------------------------------------------------- */
static struct fw_loop loop;
static unsigned frames[2];
static size_t last_len;
static unsigned doorbells;
static uint64_t doorbell_times[16];

static void on_frame(void *ctx, unsigned port, const uint8_t *f, size_t len)
{
	(void)ctx;
	assert_int_equal(f[0], port);
	frames[port]++;
	last_len = len;
}

static int doorbell_busy_until;

static int on_doorbell(void *ctx)
{
	(void)ctx;
	if (doorbells < 16)
		doorbell_times[doorbells] = now;
	doorbells++;
	return (int)doorbells <= doorbell_busy_until;
}

static int setup(void **state)
{
	unsigned i;

	(void)state;
	now = 1000;
	hw_deadline = HAL_TIMER_NEVER;
	waits = polls = 0;
	doorbells = 0;
	memset(frames, 0, sizeof(frames));
	memset(ports, 0, sizeof(ports));
	memset(&plat, 0, sizeof(plat));
	plat.timer = &fake_timer;
	for (i = 0; i < 2; i++) {
		ports[i].eth.ops = &fake_eth_ops;
		ports[i].eth.priv = &ports[i];
		plat.eth[i] = &ports[i].eth;
	}
	plat.n_eth = 2;
	fw_loop_init(&loop, &plat);
	fw_loop_set_frame_handler(&loop, on_frame, NULL);
	return 0;
}

static void test_rx_budget_per_port(void **state)
{
	(void)state;
	queue_frames(0, 100, 60);
	queue_frames(1, 10, 1514);
	assert_int_equal(fw_loop_once(&loop), 1);
	assert_int_equal(frames[0], FW_LOOP_RX_BUDGET);
	assert_int_equal(frames[1], 10);
	assert_int_equal(last_len, 1514);
	assert_int_equal(polls, 1);
	fw_loop_once(&loop);
	assert_int_equal(frames[0], 100);
	assert_int_equal(fw_loop_once(&loop), 0);
}

static void test_rx_errors_counted_not_delivered(void **state)
{
	(void)state;
	queue_frames(0, 3, -HAL_E2BIG);
	queue_frames(0, 2, 64);
	fw_loop_once(&loop);
	assert_int_equal(loop.stats.rx_errors, 3);
	assert_int_equal(frames[0], 2);
	assert_int_equal(loop.stats.frames, 2);
}

static void test_sleeps_until_deadline_instead_of_spinning(void **state)
{
	int rc;

	(void)state;
	rc = fw_loop_run_until(&loop, NULL, now + 5000000);
	assert_int_equal(rc, -HAL_ETIMEDOUT);
	/* Nothing to do: one sleep straight to the deadline. */
	assert_int_equal(waits, 1);
	assert_int_equal(last_wait_deadline, 1000 + 5000000);
	assert_true(deadline_set_before_wait);
	assert_true(loop.stats.iterations <= 3);
}

static volatile int flag;
static struct timer t_flag, t_later;

static void set_flag(struct timer *t, void *arg) { (void)t; (void)arg; flag = 1; }

static void test_wakes_for_earliest_timer(void **state)
{
	(void)state;
	flag = 0;
	timer_setup(&t_flag, set_flag, NULL);
	timer_setup(&t_later, set_flag, NULL);
	fw_loop_timer_arm(&loop, &t_later, now + 900);
	fw_loop_timer_arm(&loop, &t_flag, now + 300);
	assert_int_equal(fw_loop_run_until(&loop, &flag, now + 1000000), 0);
	assert_int_equal(now, 1300);
	assert_int_equal(waits, 1);
	assert_true(timer_armed(&t_later));
}

static void test_pending_frames_prevent_sleep(void **state)
{
	(void)state;
	queue_frames(1, 200, 100);
	fw_loop_run_until(&loop, NULL, now + 10);
	assert_int_equal(frames[1], 200);
	/* It served all 200 frames before sleeping once. */
	assert_true(waits <= 1);
}

static void test_doorbell_polled_every_period(void **state)
{
	unsigned i;

	(void)state;
	doorbell_busy_until = 1000;   /* host always busy: fixed minimum period */
	fw_loop_set_doorbell_handler(&loop, on_doorbell, NULL, 1000000, 8000000);
	fw_loop_run_until(&loop, NULL, 1000 + 5500000);
	assert_int_equal(doorbells, 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(doorbell_times[i], 1000 + (i + 1) * 1000000ull);
	assert_int_equal(loop.stats.doorbell_polls, 5);
	fw_loop_set_doorbell_handler(&loop, NULL, NULL, 0, 0);
	fw_loop_run_until(&loop, NULL, now + 5000000);
	assert_int_equal(doorbells, 5);
}

static void test_doorbell_backs_off_when_idle_and_snaps_back(void **state)
{
	static const uint64_t gaps[] = { 0, 1, 1, 1, 2, 4, 8, 8, 1 };
	unsigned i;

	(void)state;
	/* Polls 1-3 find work (1 ms gaps), 4-8 find none (gaps double to the
	 * 8 ms cap), then work again: straight back to 1 ms. */
	doorbell_busy_until = 3;
	fw_loop_set_doorbell_handler(&loop, on_doorbell, NULL, 1000000, 8000000);
	fw_loop_run_until(&loop, NULL, 1000 + 25000000);
	assert_int_equal(doorbells, 7);
	for (i = 1; i < 7; i++)
		assert_int_equal(doorbell_times[i] - doorbell_times[i - 1], gaps[i] * 1000000ull);
	fw_loop_run_until(&loop, NULL, 1000 + 26000000);
	assert_int_equal(doorbells, 8);
	assert_int_equal(doorbell_times[7] - doorbell_times[6], gaps[7] * 1000000ull);
	doorbell_busy_until = 1000;
	fw_loop_run_until(&loop, NULL, 1000 + 35000000);
	assert_int_equal(doorbells, 10);
	assert_int_equal(doorbell_times[8] - doorbell_times[7], 8000000ull);
	assert_int_equal(doorbell_times[9] - doorbell_times[8], gaps[8] * 1000000ull);
}

/* ---- a doorbell channel (hal/doorbell.h) ------------------------------ */
static int rings_pending;
static unsigned rang_calls;

static int fake_rang(struct hal_doorbell *d)
{
	(void)d;
	rang_calls++;
	if (!rings_pending)
		return 0;
	rings_pending = 0;
	return 1;
}
static int fake_raise(struct hal_doorbell *d, unsigned v) { (void)d; (void)v; return 0; }
static const struct hal_doorbell_ops fake_db_ops = { fake_rang, fake_raise };
static struct hal_doorbell fake_db = { .ops = &fake_db_ops, .n_vectors = 1,
				       .every_store_rings = 1 };

static void test_doorbell_rung_is_served_in_the_same_iteration(void **state)
{
	(void)state;
	plat.doorbell = &fake_db;
	rings_pending = 0;
	doorbell_busy_until = 0;
	/* a 1 s poll: only the ring can explain a serve before it */
	fw_loop_set_doorbell_handler(&loop, on_doorbell, NULL, 1000000000ull, 1000000000ull);
	fw_loop_once(&loop);
	assert_int_equal(doorbells, 0);
	rings_pending = 1;
	assert_int_equal(fw_loop_once(&loop), 1);
	assert_int_equal(doorbells, 1);
	assert_int_equal(doorbell_times[0], 1000);   /* no time passed: no tick */
	assert_int_equal(loop.stats.doorbell_rings, 1);
	assert_int_equal(loop.stats.doorbell_polls, 0);
	/* consumed: the next iteration serves nothing */
	fw_loop_once(&loop);
	assert_int_equal(doorbells, 1);
}

static void test_doorbell_ring_that_found_work_gets_one_more_pass(void **state)
{
	(void)state;
	plat.doorbell = &fake_db;
	doorbell_busy_until = 1000;   /* every pass finds work */
	fw_loop_set_doorbell_handler(&loop, on_doorbell, NULL, 1000000000ull, 1000000000ull);
	rings_pending = 1;
	/* the ring's pass, then one more without sleeping, then sleep until
	 * the fallback tick */
	fw_loop_run_until(&loop, NULL, 1000 + 999000000ull);
	assert_int_equal(doorbells, 2);
	assert_int_equal(doorbell_times[1], 1000);
	assert_int_equal(loop.stats.doorbell_rings, 1);
}

static void test_doorbell_with_channel_polls_only_at_max(void **state)
{
	(void)state;
	plat.doorbell = &fake_db;
	doorbell_busy_until = 1000;   /* a host that never rings, always busy */
	fw_loop_set_doorbell_handler(&loop, on_doorbell, NULL, 1000000, 8000000);
	fw_loop_run_until(&loop, NULL, 1000 + 25000000);
	/* served all the same (fallback), every 8 ms, never faster */
	assert_int_equal(doorbells, 3);
	assert_int_equal(doorbell_times[1] - doorbell_times[0], 8000000ull);
	assert_int_equal(doorbell_times[2] - doorbell_times[1], 8000000ull);
	assert_int_equal(loop.stats.doorbell_rings, 0);
}

/* ivshmem-doorbell: some host stores come without a ring (every_store_rings
 * 0), so the adaptive poll stays, and a ring is still served at once. */
static void test_doorbell_irq_channel_without_every_ring_keeps_adaptive_poll(void **state)
{
	(void)state;
	fake_db.every_store_rings = 0;
	plat.doorbell = &fake_db;
	doorbell_busy_until = 1000;   /* busy: the poll stays at its minimum */
	fw_loop_set_doorbell_handler(&loop, on_doorbell, NULL, 1000000, 8000000);
	fw_loop_run_until(&loop, NULL, 1000 + 3500000);
	assert_int_equal(doorbells, 3);   /* at 1, 2, 3 ms: every 1 ms, not 8 */
	assert_int_equal(doorbell_times[1] - doorbell_times[0], 1000000ull);
	rings_pending = 1;
	assert_int_equal(fw_loop_once(&loop), 1);
	assert_int_equal(doorbells, 4);   /* the ring, before the next tick */
	assert_int_equal(loop.stats.doorbell_rings, 1);
	fake_db.every_store_rings = 1;
}

static void test_doorbell_ring_consumed_without_a_handler(void **state)
{
	(void)state;
	plat.doorbell = &fake_db;
	rings_pending = 1;
	rang_calls = 0;
	assert_int_equal(fw_loop_once(&loop), 0);
	assert_int_equal(rang_calls, 1);
	assert_int_equal(rings_pending, 0);
	assert_int_equal(doorbells, 0);
}

static unsigned work_left, work_calls;
static uint64_t work_done_at;

static int do_work(void *ctx)
{
	(void)ctx;
	work_calls++;
	if (work_left && --work_left == 0)
		work_done_at = now;
	return work_left != 0;
}

static void test_pending_work_runs_in_slices_without_sleeping(void **state)
{
	(void)state;
	work_left = 10;
	work_calls = 0;
	fw_loop_set_work_handler(&loop, do_work, NULL);
	fw_loop_run_until(&loop, NULL, now + 1000);
	/* Ten slices back to back, then nothing queued: one sleep. */
	assert_int_equal(work_left, 0);
	assert_true(work_calls >= 10);
	assert_int_equal(waits, 1);
}

/* A timer that queues work (a retransmission): the work must run before
 * the loop sleeps again, not at the next unrelated wakeup.  The
 * retransmission timer belongs to a timer source (as the engine's do),
 * not to the loop's heap: its deadline must wake the loop all the same. */
static struct timer t_queue, t_far;
static struct timer *source_slots[4];
static struct timer_heap source;
static void queue_work(struct timer *t, void *arg) { (void)t; (void)arg; work_left = 1; }
static uint64_t source_next(void *ctx) { return timer_heap_next(ctx); }
static unsigned source_run(void *ctx, uint64_t t) { return timer_heap_run(ctx, t); }

static void test_work_queued_by_a_timer_runs_before_sleeping(void **state)
{
	(void)state;
	work_left = 0;
	work_calls = 0;
	fw_loop_set_work_handler(&loop, do_work, NULL);
	timer_heap_init(&source, source_slots, 4);
	fw_loop_set_timer_source(&loop, source_next, source_run, &source);
	timer_setup(&t_queue, queue_work, NULL);
	timer_setup(&t_far, queue_work, NULL);
	assert_int_equal(timer_arm(&source, &t_queue, now + 100), 0);
	fw_loop_timer_arm(&loop, &t_far, now + 1000000);
	fw_loop_run_until(&loop, NULL, now + 500);
	assert_int_equal(work_left, 0);
	/* Slept to the timer, ran the work it queued at once, slept to the
	 * deadline. */
	assert_int_equal(work_done_at, 1000 + 100);
	assert_int_equal(waits, 2);
	assert_int_equal(last_wait_deadline, 1000 + 500);
	assert_int_equal(now, 1000 + 500);
	assert_int_equal(source.stats.fired, 1);
}

static struct timer t_exit;
static void do_exit(struct timer *t, void *arg) { (void)t; fw_loop_exit(arg, 42); }

static void test_run_returns_exit_code(void **state)
{
	(void)state;
	timer_setup(&t_exit, do_exit, &loop);
	fw_loop_timer_arm(&loop, &t_exit, now + 12345);
	assert_int_equal(fw_loop_run(&loop), 42);
	assert_int_equal(now, 1000 + 12345);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_rx_budget_per_port, setup),
		cmocka_unit_test_setup(test_rx_errors_counted_not_delivered, setup),
		cmocka_unit_test_setup(test_sleeps_until_deadline_instead_of_spinning, setup),
		cmocka_unit_test_setup(test_wakes_for_earliest_timer, setup),
		cmocka_unit_test_setup(test_pending_frames_prevent_sleep, setup),
		cmocka_unit_test_setup(test_doorbell_polled_every_period, setup),
		cmocka_unit_test_setup(test_doorbell_backs_off_when_idle_and_snaps_back, setup),
		cmocka_unit_test_setup(test_doorbell_rung_is_served_in_the_same_iteration, setup),
		cmocka_unit_test_setup(test_doorbell_ring_that_found_work_gets_one_more_pass, setup),
		cmocka_unit_test_setup(test_doorbell_with_channel_polls_only_at_max, setup),
		cmocka_unit_test_setup(test_doorbell_irq_channel_without_every_ring_keeps_adaptive_poll, setup),
		cmocka_unit_test_setup(test_doorbell_ring_consumed_without_a_handler, setup),
		cmocka_unit_test_setup(test_pending_work_runs_in_slices_without_sleeping, setup),
		cmocka_unit_test_setup(test_work_queued_by_a_timer_runs_before_sleeping, setup),
		cmocka_unit_test_setup(test_run_returns_exit_code, setup),
	};
	return cmocka_run_group_tests_name("firmware/loop", tests, NULL, NULL);
}
