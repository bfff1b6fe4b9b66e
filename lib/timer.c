#include "timer.h"

#include "hal/errno.h"

static int before(const struct fw_timer *a, const struct fw_timer *b)
{
	if (a->deadline != b->deadline)
		return a->deadline < b->deadline;
	return a->seq < b->seq;
}

static void place(struct fw_timers *ts, uint32_t i, struct fw_timer *t)
{
	ts->heap[i] = t;
	t->heap_idx = i;
}

static void sift_up(struct fw_timers *ts, uint32_t i)
{
	struct fw_timer *t = ts->heap[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!before(t, ts->heap[parent]))
			break;
		place(ts, i, ts->heap[parent]);
		i = parent;
	}
	place(ts, i, t);
}

static void sift_down(struct fw_timers *ts, uint32_t i)
{
	struct fw_timer *t = ts->heap[i];

	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		struct fw_timer *best = t;

		if (l < ts->n && before(ts->heap[l], best)) {
			m = l;
			best = ts->heap[l];
		}
		if (r < ts->n && before(ts->heap[r], best))
			m = r;
		if (m == i)
			break;
		place(ts, i, ts->heap[m]);
		i = m;
	}
	place(ts, i, t);
}

static void heap_remove(struct fw_timers *ts, struct fw_timer *t)
{
	uint32_t i = t->heap_idx;
	struct fw_timer *last;

	t->heap_idx = FW_TIMER_IDLE;
	ts->n--;
	if (i == ts->n)
		return;
	last = ts->heap[ts->n];
	place(ts, i, last);
	if (i > 0 && before(last, ts->heap[(i - 1) / 2]))
		sift_up(ts, i);
	else
		sift_down(ts, i);
}

void fw_timers_init(struct fw_timers *ts)
{
	ts->n = 0;
	ts->next_seq = 0;
	ts->stats = (struct fw_timer_stats){ 0 };
}

void fw_timer_setup(struct fw_timer *t, fw_timer_fn fn, void *arg)
{
	t->deadline = FW_TIMER_NEVER;
	t->seq = 0;
	t->fn = fn;
	t->arg = arg;
	t->heap_idx = FW_TIMER_IDLE;
}

int fw_timer_arm(struct fw_timers *ts, struct fw_timer *t, uint64_t deadline)
{
	if (fw_timer_armed(t))
		heap_remove(ts, t);
	if (ts->n >= FW_MAX_TIMERS) {
		ts->stats.full++;
		return -HAL_ENOSPC;
	}
	t->deadline = deadline;
	t->seq = ts->next_seq++;
	place(ts, ts->n++, t);
	sift_up(ts, t->heap_idx);
	ts->stats.armed++;
	return 0;
}

void fw_timer_cancel(struct fw_timers *ts, struct fw_timer *t)
{
	if (!fw_timer_armed(t))
		return;
	heap_remove(ts, t);
	ts->stats.cancelled++;
}

uint64_t fw_timers_next(const struct fw_timers *ts)
{
	return ts->n ? ts->heap[0]->deadline : FW_TIMER_NEVER;
}

unsigned fw_timers_run(struct fw_timers *ts, uint64_t now)
{
	/* Timers armed during this call get seq >= limit and wait for the
	 * next call. */
	uint64_t limit = ts->next_seq;
	unsigned fired = 0;

	while (ts->n && ts->heap[0]->deadline <= now && ts->heap[0]->seq < limit) {
		struct fw_timer *t = ts->heap[0];

		heap_remove(ts, t);
		ts->stats.fired++;
		fired++;
		t->fn(t, t->arg);
	}
	return fired;
}
