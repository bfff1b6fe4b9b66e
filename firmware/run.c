/* Default mode: publish READY on the host BAR, keep the health buffer
 * fresh on every doorbell poll and serve the wire.  (The RoCEv2 engine and
 * the command queue plug into the frame and doorbell handlers.) */
#include "hal/errno.h"
#include "initseg.h"
#include "log.h"
#include "modes.h"

/* Doorbell polling bounds (see firmware/loop.h): 0.5 ms while the host is
 * active, backing off to 10 ms when idle. */
#define RUN_DOORBELL_MIN_NS 500000u
#define RUN_DOORBELL_MAX_NS 10000000u

struct run_state {
	struct fw_ctx *c;
	uint64_t rx_frames;
	uint64_t boot_ns;
	struct fw_timer stop;
};

static struct run_state run;

static void on_frame(void *arg, unsigned port, const uint8_t *frame, size_t len)
{
	struct run_state *r = arg;

	(void)port;
	(void)frame;
	(void)len;
	r->rx_frames++;
}

static int on_doorbell(void *arg)
{
	struct run_state *r = arg;
	struct hal_platform *p = r->c->plat;
	uint64_t tx = 0, drop = 0;
	unsigned i;

	for (i = 0; i < p->n_eth; i++) {
		tx += p->eth[i]->stats.tx_frames;
		drop += p->eth[i]->stats.rx_dropped;
	}
	mnic_initseg_heartbeat(&p->hostif, fw_loop_now(r->c->loop) - r->boot_ns,
			       r->rx_frames, tx, drop);
	return 0;   /* no command queue yet: never host work */
}

static void on_stop(struct fw_timer *t, void *arg)
{
	struct run_state *r = arg;

	(void)t;
	LOG_INFO("run: exit_after_ms reached, %llu frames received",
		 (unsigned long long)r->rx_frames);
	fw_loop_exit(r->c->loop, FW_EXIT_OK);
}

int fw_mode_run(struct fw_ctx *c, const struct fw_args *a)
{
	static const char *const keys[] = { "log", "exit_after_ms", NULL };
	uint64_t exit_after_ms;

	if (fw_args_check(a, keys) != 0 ||
	    fw_args_u64(a, "exit_after_ms", 0, 86400000u, &exit_after_ms) != 0)
		return FW_EXIT_USAGE;
	run.c = c;
	run.rx_frames = 0;
	run.boot_ns = fw_loop_now(c->loop);
	fw_loop_set_frame_handler(c->loop, on_frame, &run);
	if (c->plat->hostif.bar) {
		fw_loop_set_doorbell_handler(c->loop, on_doorbell, &run, RUN_DOORBELL_MIN_NS,
					     RUN_DOORBELL_MAX_NS);
		mnic_initseg_set_state(&c->plat->hostif, MNIC_STATE_READY);
	}
	if (exit_after_ms) {
		fw_timer_setup(&run.stop, on_stop, &run);
		fw_loop_timer_arm(c->loop, &run.stop, run.boot_ns + exit_after_ms * 1000000u);
	}
	fw_print("MNIC READY board=%s", c->plat->board);
	return fw_loop_run(c->loop);
}
