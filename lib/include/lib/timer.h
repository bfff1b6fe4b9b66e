/* Software timers, deadline ordered.
 *
 * A binary min-heap keyed by (deadline, arm sequence): O(log n) arm and
 * cancel, O(1) next deadline, and timers with equal deadlines fire in the
 * order they were armed.  Timer storage belongs to the caller (static
 * objects, e.g. one retransmit timer per QP); the heap holds pointers.
 * Only the earliest deadline is ever given to the hardware.
 */
#ifndef FW_TIMER_H
#define FW_TIMER_H

#include <stdint.h>

/* Four per QP (retransmit, RNR, pause, RESUME) at 1,024 QPs, plus the
 * firmware's own. */
#ifndef FW_MAX_TIMERS
#define FW_MAX_TIMERS 8192u
#endif

#define FW_TIMER_IDLE UINT32_MAX
#define FW_TIMER_NEVER UINT64_MAX

struct fw_timer;
typedef void (*fw_timer_fn)(struct fw_timer *t, void *arg);

struct fw_timer {
	uint64_t deadline;
	uint64_t seq;
	fw_timer_fn fn;
	void *arg;
	uint32_t heap_idx;     /* FW_TIMER_IDLE when not armed */
};

struct fw_timer_stats {
	uint64_t armed, fired, cancelled, full;
};

struct fw_timers {
	struct fw_timer *heap[FW_MAX_TIMERS];
	uint32_t n;
	uint64_t next_seq;
	struct fw_timer_stats stats;
};

void fw_timers_init(struct fw_timers *ts);
void fw_timer_setup(struct fw_timer *t, fw_timer_fn fn, void *arg);
/* Arm (or move) t to fire at deadline.  -HAL_ENOSPC when the heap is full
 * (counted in stats.full). */
int fw_timer_arm(struct fw_timers *ts, struct fw_timer *t, uint64_t deadline);
void fw_timer_cancel(struct fw_timers *ts, struct fw_timer *t);
static inline int fw_timer_armed(const struct fw_timer *t)
{
	return t->heap_idx != FW_TIMER_IDLE;
}
uint64_t fw_timers_next(const struct fw_timers *ts);
/* Fire every timer whose deadline <= now, earliest first.  A callback may
 * re-arm its own or other timers; one re-armed at or before now fires on
 * the next call, not this one, so a zero-period timer cannot starve the
 * loop.  Returns the number fired. */
unsigned fw_timers_run(struct fw_timers *ts, uint64_t now);

#endif
