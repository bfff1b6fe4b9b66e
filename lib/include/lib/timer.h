/* Software timers, deadline ordered.
 *
 * A binary min-heap keyed by (deadline, arm sequence): O(log n) arm and
 * cancel, O(1) next deadline, and timers with equal deadlines fire in the
 * order they were armed.  Timer storage belongs to the caller (static
 * objects, e.g. one retransmit timer per QP); the heap holds pointers in
 * a slot array its owner sizes and passes at init (the engine: four per
 * QP; the firmware loop: its own few).  Only the earliest deadline is ever
 * given to the hardware.
 */
#ifndef LIB_TIMER_H
#define LIB_TIMER_H

#include <stdint.h>

#define TIMER_IDLE UINT32_MAX
#define TIMER_NEVER UINT64_MAX

struct timer;
typedef void (*timer_fn)(struct timer *t, void *arg);

struct timer {
	uint64_t deadline;
	uint64_t seq;
	timer_fn fn;
	void *arg;
	uint32_t heap_idx;     /* TIMER_IDLE when not armed */
};

struct timer_stats {
	uint64_t armed, fired, cancelled, full;
};

struct timer_heap {
	struct timer **slots;  /* the owner's array of cap pointers */
	uint32_t cap;
	uint32_t n;
	uint64_t next_seq;
	struct timer_stats stats;
};

/* An empty heap over slots[0..cap). */
void timer_heap_init(struct timer_heap *h, struct timer **slots, uint32_t cap);
void timer_setup(struct timer *t, timer_fn fn, void *arg);
/* Arm (or move) t to fire at deadline.  -HAL_ENOSPC when the heap is full
 * (counted in stats.full). */
int timer_arm(struct timer_heap *h, struct timer *t, uint64_t deadline);
void timer_cancel(struct timer_heap *h, struct timer *t);
static inline int timer_armed(const struct timer *t)
{
	return t->heap_idx != TIMER_IDLE;
}
/* The earliest deadline, TIMER_NEVER when nothing is armed. */
uint64_t timer_heap_next(const struct timer_heap *h);
/* Fire every timer whose deadline <= now, earliest first.  A callback may
 * re-arm its own or other timers; one re-armed at or before now fires on
 * the next call, not this one, so a zero-period timer cannot starve the
 * loop.  Returns the number fired. */
unsigned timer_heap_run(struct timer_heap *h, uint64_t now);

#endif
