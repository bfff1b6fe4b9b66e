/* Monotonic time and the single hardware deadline (ops table).
 *
 * The firmware keeps its own deadline-ordered list of software timers
 * (lib/timer.c); the hardware only ever holds the earliest deadline,
 * programmed as an absolute compare value (CNTV_CVAL on the boards) so
 * that re-arming never accumulates drift.
 */
#ifndef HAL_TIMER_H
#define HAL_TIMER_H

#include <stdint.h>

#define HAL_TIMER_NEVER UINT64_MAX

struct hal_timer_ops {
	uint64_t (*now_ns)(void);
	/* Program the hardware to signal at absolute time deadline_ns
	 * (HAL_TIMER_NEVER disarms).  A deadline in the past fires at once. */
	void (*set_deadline)(uint64_t deadline_ns);
	/* Acknowledge an expiry; returns non-zero if the deadline passed. */
	int (*expired)(void);
};

#endif
