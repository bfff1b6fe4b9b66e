#include "loop.h"

#include "hal/errno.h"

static void doorbell_tick(struct timer *t, void *arg)
{
	struct fw_loop *l = arg;

	l->stats.doorbell_polls++;
	if (l->on_doorbell && l->on_doorbell(l->doorbell_ctx))
		l->doorbell_period_ns = l->doorbell_min_ns;
	else if (l->doorbell_period_ns < l->doorbell_max_ns / 2)
		l->doorbell_period_ns *= 2;
	else
		l->doorbell_period_ns = l->doorbell_max_ns;
	if (l->doorbell_period_ns)
		timer_arm(&l->timers, t, fw_loop_now(l) + l->doorbell_period_ns);
}

void fw_loop_init(struct fw_loop *l, struct hal_platform *p)
{
	l->plat = p;
	timer_heap_init(&l->timers, l->timer_slots, FW_LOOP_MAX_TIMERS);
	l->source_next = NULL;
	l->source_run = NULL;
	l->source_ctx = NULL;
	l->on_frame = NULL;
	l->frame_ctx = NULL;
	l->on_doorbell = NULL;
	l->doorbell_ctx = NULL;
	l->doorbell_min_ns = l->doorbell_max_ns = l->doorbell_period_ns = 0;
	l->doorbell_again = 0;
	l->on_work = NULL;
	l->work_ctx = NULL;
	l->work_pending = 0;
	l->tx_stalled = 0;
	timer_setup(&l->doorbell_timer, doorbell_tick, l);
	l->exit_requested = 0;
	l->exit_code = 0;
	l->stats = (struct fw_loop_stats){ 0 };
}

void fw_loop_set_frame_handler(struct fw_loop *l, fw_frame_fn fn, void *ctx)
{
	l->on_frame = fn;
	l->frame_ctx = ctx;
}

void fw_loop_set_work_handler(struct fw_loop *l, fw_work_fn fn, void *ctx)
{
	l->on_work = fn;
	l->work_ctx = ctx;
	l->work_pending = fn != NULL;
}

void fw_loop_set_timer_source(struct fw_loop *l, fw_timer_next_fn next, fw_timer_run_fn run,
			      void *ctx)
{
	l->source_next = next;
	l->source_run = run;
	l->source_ctx = ctx;
}

void fw_loop_set_doorbell_handler(struct fw_loop *l, fw_doorbell_fn fn, void *ctx,
				  uint64_t min_ns, uint64_t max_ns)
{
	l->on_doorbell = fn;
	l->doorbell_ctx = ctx;
	l->doorbell_max_ns = max_ns < min_ns ? min_ns : max_ns;
	/* With a doorbell channel a ring is served at once (serve_rang); where
	 * every host store rings (hal/doorbell.h every_store_rings) the poll
	 * is only the fallback for hosts that never ring, at the slow end
	 * alone, so an idle NIC wakes no more often than without a channel. */
	l->doorbell_min_ns = min_ns && l->plat->doorbell && l->plat->doorbell->every_store_rings ?
			     l->doorbell_max_ns : min_ns;
	min_ns = l->doorbell_min_ns;
	l->doorbell_period_ns = min_ns;
	if (min_ns)
		timer_arm(&l->timers, &l->doorbell_timer, fw_loop_now(l) + min_ns);
	else
		timer_cancel(&l->timers, &l->doorbell_timer);
}

uint64_t fw_loop_now(const struct fw_loop *l)
{
	return l->plat->timer->now_ns();
}

int fw_loop_timer_arm(struct fw_loop *l, struct timer *t, uint64_t deadline_ns)
{
	return timer_arm(&l->timers, t, deadline_ns);
}

void fw_loop_timer_cancel(struct fw_loop *l, struct timer *t)
{
	timer_cancel(&l->timers, t);
}

void fw_loop_exit(struct fw_loop *l, int code)
{
	l->exit_code = code;
	l->exit_requested = 1;
}

/* A host rang (hal/doorbell.h): serve its doorbells in this iteration.  A
 * pass that found work is followed by one more in the next iteration (the
 * loop does not sleep in between): what the host queued may take a second
 * look (a command ring served one ring-full at a time, a state the command
 * queue moves through), and the host rang only once for it.  The ring is
 * consumed even without a handler, or the wait would keep waking on it. */
static int serve_rang(struct fw_loop *l)
{
	int rang;

	if (!l->plat->doorbell)
		return 0;
	rang = hal_doorbell_rang(l->plat->doorbell);
	if (!l->on_doorbell || (!rang && !l->doorbell_again))
		return 0;
	l->stats.doorbell_rings += (uint64_t)rang;
	l->doorbell_again = l->on_doorbell(l->doorbell_ctx) != 0 && rang;
	return 1;
}

static int serve_rx(struct fw_loop *l)
{
	struct hal_platform *p = l->plat;
	int work = 0;
	unsigned port;

	for (port = 0; port < p->n_eth; port++) {
		struct hal_eth *e = p->eth[port];
		unsigned budget;

		for (budget = 0; budget < FW_LOOP_RX_BUDGET; budget++) {
			int n = hal_eth_rx(e, l->frame, sizeof(l->frame));

			if (n == 0)
				break;
			work = 1;
			if (n < 0) {
				l->stats.rx_errors++;
				continue;
			}
			l->stats.frames++;
			if (l->on_frame)
				l->on_frame(l->frame_ctx, port, l->frame, (size_t)n);
		}
	}
	return work;
}

static int rx_pending(const struct fw_loop *l)
{
	unsigned port;

	for (port = 0; port < l->plat->n_eth; port++)
		if (l->plat->eth[port]->ops->rx_pending(l->plat->eth[port]))
			return 1;
	return 0;
}

/* Sums of every port's transmitted and refused (ring full) frames. */
static void tx_counts(const struct fw_loop *l, uint64_t *frames, uint64_t *busy)
{
	unsigned port;

	*frames = *busy = 0;
	for (port = 0; port < l->plat->n_eth; port++) {
		*frames += l->plat->eth[port]->stats.tx_frames;
		*busy += l->plat->eth[port]->stats.tx_busy;
	}
}

int fw_loop_once(struct fw_loop *l)
{
	uint64_t frames0, busy0, frames1, busy1;
	int work;

	l->stats.iterations++;
	tx_counts(l, &frames0, &busy0);
	hal_platform_poll(l->plat);
	work = serve_rang(l);
	work |= serve_rx(l);
	if (timer_heap_run(&l->timers, fw_loop_now(l)))
		work = 1;
	if (l->source_run && l->source_run(l->source_ctx, fw_loop_now(l)))
		work = 1;
	/* Work last: received packets and expired timers (retransmissions)
	 * queue senders, and work_pending must describe the queue as it is
	 * when the loop decides whether to sleep. */
	if (l->on_work) {
		l->stats.work_slices++;
		l->work_pending = l->on_work(l->work_ctx);
		work |= l->work_pending;
	}
	tx_counts(l, &frames1, &busy1);
	l->tx_stalled = busy1 != busy0 && frames1 == frames0;
	return work;
}

int fw_loop_run_until(struct fw_loop *l, volatile int *flag, uint64_t deadline_ns)
{
	const struct hal_timer_ops *hw = l->plat->timer;

	for (;;) {
		uint64_t next;

		fw_loop_once(l);
		if (flag && *flag)
			return 0;
		if (l->exit_requested)
			return 1;
		if (fw_loop_now(l) >= deadline_ns)
			return -HAL_ETIMEDOUT;
		if (rx_pending(l) || (l->work_pending && !l->tx_stalled) || l->doorbell_again)
			continue;
		next = timer_heap_next(&l->timers);
		if (l->source_next) {
			uint64_t source = l->source_next(l->source_ctx);

			if (source < next)
				next = source;
		}
		if (deadline_ns < next)
			next = deadline_ns;
		if (next <= fw_loop_now(l))
			continue;
		/* Program the hardware before sleeping: an event that arrives
		 * between the checks above and the wait stays pending in the
		 * interrupt controller (or fd) and ends the wait at once. */
		hw->set_deadline(next);
		l->stats.sleeps++;
		l->stats.tx_stall_sleeps += l->work_pending;
		hal_platform_wait(l->plat, next);
	}
}

int fw_loop_run(struct fw_loop *l)
{
	fw_loop_run_until(l, NULL, TIMER_NEVER);
	return l->exit_code;
}
