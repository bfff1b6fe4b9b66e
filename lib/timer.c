#include "lib/timer.h"

#include "hal/errno.h"

static int before(const struct timer *a, const struct timer *b)
{
	if (a->deadline != b->deadline)
		return a->deadline < b->deadline;
	return a->seq < b->seq;
}

static void place(struct timer_heap *h, uint32_t i, struct timer *t)
{
	h->slots[i] = t;
	t->heap_idx = i;
}

static void sift_up(struct timer_heap *h, uint32_t i)
{
	struct timer *t = h->slots[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!before(t, h->slots[parent]))
			break;
		place(h, i, h->slots[parent]);
		i = parent;
	}
	place(h, i, t);
}

static void sift_down(struct timer_heap *h, uint32_t i)
{
	struct timer *t = h->slots[i];

	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		struct timer *best = t;

		if (l < h->n && before(h->slots[l], best)) {
			m = l;
			best = h->slots[l];
		}
		if (r < h->n && before(h->slots[r], best))
			m = r;
		if (m == i)
			break;
		place(h, i, h->slots[m]);
		i = m;
	}
	place(h, i, t);
}

static void heap_remove(struct timer_heap *h, struct timer *t)
{
	uint32_t i = t->heap_idx;
	struct timer *last;

	t->heap_idx = TIMER_IDLE;
	h->n--;
	if (i == h->n)
		return;
	last = h->slots[h->n];
	place(h, i, last);
	if (i > 0 && before(last, h->slots[(i - 1) / 2]))
		sift_up(h, i);
	else
		sift_down(h, i);
}

void timer_heap_init(struct timer_heap *h, struct timer **slots, uint32_t cap)
{
	h->slots = slots;
	h->cap = cap;
	h->n = 0;
	h->next_seq = 0;
	h->stats = (struct timer_stats){ 0 };
}

void timer_setup(struct timer *t, timer_fn fn, void *arg)
{
	t->deadline = TIMER_NEVER;
	t->seq = 0;
	t->fn = fn;
	t->arg = arg;
	t->heap_idx = TIMER_IDLE;
}

int timer_arm(struct timer_heap *h, struct timer *t, uint64_t deadline)
{
	if (timer_armed(t))
		heap_remove(h, t);
	if (h->n >= h->cap) {
		h->stats.full++;
		return -HAL_ENOSPC;
	}
	t->deadline = deadline;
	t->seq = h->next_seq++;
	place(h, h->n++, t);
	sift_up(h, t->heap_idx);
	h->stats.armed++;
	return 0;
}

void timer_cancel(struct timer_heap *h, struct timer *t)
{
	if (!timer_armed(t))
		return;
	heap_remove(h, t);
	h->stats.cancelled++;
}

uint64_t timer_heap_next(const struct timer_heap *h)
{
	return h->n ? h->slots[0]->deadline : TIMER_NEVER;
}

unsigned timer_heap_run(struct timer_heap *h, uint64_t now)
{
	/* Timers armed during this call get seq >= limit and wait for the
	 * next call. */
	uint64_t limit = h->next_seq;
	unsigned fired = 0;

	while (h->n && h->slots[0]->deadline <= now && h->slots[0]->seq < limit) {
		struct timer *t = h->slots[0];

		heap_remove(h, t);
		h->stats.fired++;
		fired++;
		t->fn(t, t->arg);
	}
	return fired;
}
