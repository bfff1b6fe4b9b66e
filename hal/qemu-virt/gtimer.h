/* Arm generic timer, virtual timer (CNTV_*), driven by absolute compare
 * values (CVAL) so re-arming never accumulates drift. */
#ifndef GTIMER_H
#define GTIMER_H

#include <stdint.h>

#include "hal/timer.h"

extern const struct hal_timer_ops gtimer_ops;
void gtimer_init(void);
uint64_t gtimer_count(void);
uint64_t gtimer_ticks_to_ns(uint64_t ticks, uint64_t freq);
uint64_t gtimer_ns_to_ticks(uint64_t ns, uint64_t freq);

#endif
