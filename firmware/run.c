/* Default mode: the NIC.  Publish READY on the host BAR and serve:
 *   frames        -> rocev2_rx (responder / completer)
 *   work          -> rocev2_poll (requesters, read replies)
 *   doorbell tick -> command queue (mgmt/cmdq.c), data-path doorbells
 *                    (mgmt/doorbell.c) and the health heartbeat
 * The doorbell tick returns non-zero when the host had work, which keeps
 * the loop polling at db_min_us; idle, the period doubles to db_max_us.
 * On a platform with a doorbell channel (hal/doorbell.h: POSIX, the QEMU
 * boards' ivshmem-doorbell) the same handler runs as soon as a host rings
 * (the poll stays as the fallback: POSIX only every db_max_us, the boards
 * adaptive, hal_doorbell.every_store_rings), and a pass that answered
 * commands or moved the command queue's state raises host vector 0.
 *
 * Keys: log, exit_after_ms, db_min_us (default 500), db_max_us (10000).
 * Without a host BAR there is no host to serve: frames are only counted.
 */
#include <string.h>

#include "mgmt/fwflash.h"
#include "hal/errno.h"
#include "mgmt/initseg.h"
#include "log.h"
#include "mgmt/mgmt.h"
#include "modes.h"
#include "engine.h"

#define RUN_WORK_BUDGET 64u

struct run_state {
	struct fw_ctx *c;
	struct rocev2 *e;             /* NULL without a host BAR */
	struct mnic_mgmt mgmt;
	uint64_t rx_frames;
	uint64_t boot_ns;
	struct timer stop;
};

static struct run_state run;

static void on_frame(void *arg, unsigned port, const uint8_t *frame, size_t len)
{
	struct run_state *r = arg;

	r->rx_frames++;
	if (r->e && port == 0)
		rocev2_rx(r->e, frame, len);
}

static int on_work(void *arg)
{
	struct run_state *r = arg;

	return rocev2_poll(r->e, RUN_WORK_BUDGET);
}

static int on_doorbell(void *arg)
{
	struct run_state *r = arg;
	struct hal_platform *p = r->c->plat;
	uint64_t tx = 0, drop = 0;
	unsigned i, served;
	uint32_t cmdq_state = r->mgmt.cmdq_state;
	int rang;

	for (i = 0; i < p->n_eth; i++) {
		tx += p->eth[i]->stats.tx_frames;
		drop += p->eth[i]->stats.rx_dropped;
	}
	mnic_initseg_heartbeat(&p->hostif, fw_loop_now(r->c->loop) - r->boot_ns,
			       r->rx_frames, tx, drop);
	/* The hosts a raise interrupts, where the channel cannot tell them
	 * (ivshmem-doorbell): as they registered in the init segment, read
	 * every pass, so a raise between passes uses the last pass's set. */
	if (p->doorbell)
		mnic_initseg_irq_hosts(&p->hostif, p->doorbell->hosts);
	served = mnic_cmdq_service(&r->mgmt);
	/* after the owner bits and cmdq_status are written (cmdq.c orders
	 * them): a host woken here reads its completion */
	if (p->doorbell && (served || r->mgmt.cmdq_state != cmdq_state))
		hal_doorbell_raise(p->doorbell, HAL_DOORBELL_VEC_CMD);
	rang = mnic_db_service(&r->mgmt);
	mnic_fwflash_poll(p, fw_loop_now(r->c->loop));   /* FW_ACTIVATE's reset, after its reply */
	return served != 0 || rang;
}

static void on_stop(struct timer *t, void *arg)
{
	struct run_state *r = arg;

	(void)t;
	LOG_INFO("run: exit_after_ms reached, %llu frames received",
		 (unsigned long long)r->rx_frames);
	fw_loop_exit(r->c->loop, FW_EXIT_OK);
}

static int start_engine(struct run_state *r)
{
	struct fw_ctx *c = r->c;
	struct mnic_mgmt_cfg cfg;
	unsigned i;
	int rc;

	if ((rc = fw_engine_start(c, &r->e)) != 0)
		return rc;
	memset(&cfg, 0, sizeof(cfg));
	cfg.seg = mnic_initseg(&c->plat->hostif);
	cfg.db = mnic_db_page(&c->plat->hostif);
	cfg.dma = &c->dma;
	cfg.hostmem = c->host_dma != &c->dma ? c->host_dma : NULL;
	cfg.engine = r->e;
	cfg.board_id = c->plat->board_id;
	cfg.board_name = c->plat->board;
	cfg.boot_ns = r->boot_ns;
	for (i = 0; i < c->plat->n_eth && i < MNIC_MGMT_MAX_PORTS; i++)
		cfg.eth[i] = c->plat->eth[i];
	cfg.n_eth = i;
	cfg.doorbell = c->plat->doorbell;
	mnic_mgmt_init(&r->mgmt, &cfg);
	return 0;
}

int fw_mode_run(struct fw_ctx *c, const struct fw_args *a)
{
	static const char *const keys[] = { "log", "exit_after_ms", "db_min_us", "db_max_us", NULL };
	uint64_t exit_after_ms, db_min_us, db_max_us;

	if (fw_args_check(a, keys) != 0 ||
	    fw_args_u64(a, "exit_after_ms", 0, 86400000u, &exit_after_ms) != 0 ||
	    fw_args_u64(a, "db_min_us", 500, 1000000u, &db_min_us) != 0 ||
	    fw_args_u64(a, "db_max_us", 10000, 10000000u, &db_max_us) != 0)
		return FW_EXIT_USAGE;
	if (db_min_us == 0 || db_max_us < db_min_us) {
		LOG_ERR("run: want 1 <= db_min_us <= db_max_us");
		return FW_EXIT_USAGE;
	}
	memset(&run, 0, sizeof(run));
	run.c = c;
	run.boot_ns = fw_loop_now(c->loop);
	fw_loop_set_frame_handler(c->loop, on_frame, &run);
	if (c->plat->hostif.bar) {
		if (start_engine(&run) != 0)
			return FW_EXIT_FAIL;
		fw_loop_set_work_handler(c->loop, on_work, &run);
		fw_loop_set_doorbell_handler(c->loop, on_doorbell, &run, db_min_us * 1000u,
					     db_max_us * 1000u);
		if (c->plat->doorbell)
			mnic_initseg_set_irq_id(&c->plat->hostif, c->plat->doorbell->self_id);
		mnic_initseg_set_state(&c->plat->hostif, MNIC_STATE_READY);
	}
	if (exit_after_ms) {
		timer_setup(&run.stop, on_stop, &run);
		fw_loop_timer_arm(c->loop, &run.stop, run.boot_ns + exit_after_ms * 1000000u);
	}
	/* Boot self-test; passing confirms a test slot (docs/firmware-images.md). */
	mnic_fwflash_boot(c->plat, run.boot_ns, c->plat->hostif.bar != NULL, c->plat->n_eth > 0);
	fw_print("MNIC READY board=%s", c->plat->board);
	return fw_loop_run(c->loop);
}
