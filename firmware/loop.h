/* The event loop: the only thread of control in the firmware.
 *
 * Event sources, in the order each iteration serves them:
 *   1. device interrupts: acknowledged by the platform (hal_platform_poll),
 *      which only lets drivers reap their rings (interrupts only flag);
 *      then host doorbells, when the platform has a doorbell channel
 *      (hal/doorbell.h) and a host rang: served at once, in this iteration;
 *   2. received frames: up to FW_LOOP_RX_BUDGET per port per iteration,
 *      handed to the frame handler (the RoCEv2 receive path);
 *   3. timers: software timers due by now, earliest first: the loop's own
 *      (its heap) and those of a timer source (the protocol engine owns
 *      its timeouts, as lwIP's stack does; the loop only asks it for the
 *      next deadline and to run what is due).  The doorbell poll is one of
 *      the loop's own.  Without a doorbell channel (the boards'
 *      ivshmem-plain raises no doorbell interrupt) it is the only way the
 *      firmware hears the host, and adaptive: every doorbell_min_ns while
 *      the host is ringing, backing off by doubling to doorbell_max_ns
 *      while it is quiet (an idle NIC wakes ~100 times a second instead of
 *      1,000).  With a channel it is the fallback for hosts that never
 *      ring (a raw BAR writer, a libmnic with the channel disabled): every
 *      doorbell_max_ns, no faster, so idle costs what it did;
 *   4. work: the protocol engine's scheduled senders (requesters, read
 *      replies), a bounded slice per iteration so receive stays served.
 *      Last, because frames and timers (retransmissions) queue work.
 * When none has work the loop programs the earliest deadline and sleeps
 * (WFI on the boards, poll() on POSIX); it never spins.  Queued work whose
 * transmits all met a full TX ring (nothing sent, tx_busy counted) sleeps
 * too, until the ring drains (the TX completion interrupt on the boards,
 * the switch socket writable on POSIX), a frame or a deadline: retrying at
 * once would rebuild the same packet (payload gather, ICRC) to no avail.
 */
#ifndef FW_LOOP_H
#define FW_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "hal/platform.h"
#include "lib/timer.h"

#define FW_LOOP_RX_BUDGET 64u
#define FW_LOOP_FRAME_MAX HAL_ETH_MAX_FRAME
/* The firmware's own timers: doorbell poll, a mode's few (rawx: one per
 * peer and four more; run, rcx, selftest: fewer). */
#define FW_LOOP_MAX_TIMERS 32u

typedef void (*fw_frame_fn)(void *ctx, unsigned port, const uint8_t *frame, size_t len);
/* Runs a bounded slice of queued work; returns non-zero while more is
 * queued (the loop then does not sleep). */
typedef int (*fw_work_fn)(void *ctx);
/* Returns non-zero when it found host work (keeps polling fast). */
typedef int (*fw_doorbell_fn)(void *ctx);
/* A timer source outside the loop (the engine): its earliest deadline
 * (TIMER_NEVER for none), and run what is due by now (returns how many
 * fired). */
typedef uint64_t (*fw_timer_next_fn)(void *ctx);
typedef unsigned (*fw_timer_run_fn)(void *ctx, uint64_t now);

struct fw_loop_stats {
	uint64_t iterations, sleeps, frames, rx_errors, doorbell_polls, work_slices;
	uint64_t doorbell_rings;    /* doorbells served because a host rang */
	uint64_t tx_stall_sleeps;   /* sleeps with work queued, every port's TX full */
};

struct fw_loop {
	struct hal_platform *plat;
	struct timer_heap timers;
	struct timer *timer_slots[FW_LOOP_MAX_TIMERS];
	fw_timer_next_fn source_next;
	fw_timer_run_fn source_run;
	void *source_ctx;
	fw_frame_fn on_frame;
	void *frame_ctx;
	fw_doorbell_fn on_doorbell;
	void *doorbell_ctx;
	fw_work_fn on_work;
	void *work_ctx;
	int work_pending;
	int tx_stalled;             /* last iteration: TX refused, nothing sent */
	uint64_t doorbell_min_ns, doorbell_max_ns, doorbell_period_ns;
	int doorbell_again;         /* a rung pass found work: one more pass */
	struct timer doorbell_timer;
	volatile int exit_requested;
	int exit_code;
	struct fw_loop_stats stats;
	uint8_t frame[FW_LOOP_FRAME_MAX];
};

void fw_loop_init(struct fw_loop *l, struct hal_platform *p);
void fw_loop_set_frame_handler(struct fw_loop *l, fw_frame_fn fn, void *ctx);
void fw_loop_set_work_handler(struct fw_loop *l, fw_work_fn fn, void *ctx);
/* Serve a timer source's deadlines with the loop's own (NULLs remove it). */
void fw_loop_set_timer_source(struct fw_loop *l, fw_timer_next_fn next, fw_timer_run_fn run,
			      void *ctx);
/* Serve host doorbells: when a host rings (platforms with a doorbell
 * channel), and on a poll every min_ns..max_ns (adaptive; with a channel
 * every max_ns only; min_ns 0 stops the poll). */
void fw_loop_set_doorbell_handler(struct fw_loop *l, fw_doorbell_fn fn, void *ctx,
				  uint64_t min_ns, uint64_t max_ns);
uint64_t fw_loop_now(const struct fw_loop *l);
int fw_loop_timer_arm(struct fw_loop *l, struct timer *t, uint64_t deadline_ns);
void fw_loop_timer_cancel(struct fw_loop *l, struct timer *t);
void fw_loop_exit(struct fw_loop *l, int code);
/* One pass over all event sources; returns non-zero if any had work. */
int fw_loop_once(struct fw_loop *l);
/* Run until *flag becomes non-zero, fw_loop_exit is called, or deadline_ns
 * passes.  Returns 0 when the flag was set, 1 on exit request, -HAL_ETIMEDOUT. */
int fw_loop_run_until(struct fw_loop *l, volatile int *flag, uint64_t deadline_ns);
/* Run until fw_loop_exit; returns the exit code. */
int fw_loop_run(struct fw_loop *l);

#endif
