/* The port's RoCEv2 engine, shared by the modes that run one (run, rcx):
 * the one place that wires it to the platform.  The engine owns the
 * instance (rocev2_open: a static pool, the type stays opaque). */
#include <string.h>

#include "engine.h"
#include "hal/doorbell.h"
#include "hal/errno.h"
#include "log.h"

uint32_t fw_port_ipv4(const uint8_t mac[6])
{
	return 10u << 24 | (uint32_t)mac[3] << 16 | (uint32_t)mac[4] << 8 | mac[5];
}

static int env_tx(void *ctx, const void *frame, size_t len)
{
	struct fw_ctx *c = ctx;

	if (c->plat->n_eth < 1)
		return -HAL_ENODEV;
	return hal_eth_tx(c->plat->eth[0], frame, len);
}

static uint64_t env_now(void *ctx)
{
	struct fw_ctx *c = ctx;

	return fw_loop_now(c->loop);
}

/* Completion events (rocev2/eq.c): the EQ's vector on the platform's
 * doorbell channel (hal/doorbell.h).  Without a channel, or for a vector
 * the channel does not have (-HAL_EINVAL), nothing is raised: the host
 * finds the EQE by polling its EQ. */
static void env_raise(void *ctx, unsigned vector)
{
	struct fw_ctx *c = ctx;

	if (c->plat->doorbell)
		(void)hal_doorbell_raise(c->plat->doorbell, vector);
}

/* The loop's timer source: the engine's own timeouts. */
static uint64_t engine_next(void *ctx)
{
	return rocev2_next_deadline(ctx);
}

static unsigned engine_run(void *ctx, uint64_t now)
{
	return rocev2_run_timers(ctx, now);
}

int fw_engine_start(struct fw_ctx *c, struct rocev2 **e)
{
	struct rocev2_env env;
	int rc;

	memset(&env, 0, sizeof(env));
	env.ctx = c;
	env.tx = env_tx;
	env.now_ns = env_now;
	env.dma = c->host_dma;        /* the host-memory aperture (modes.h) */
	env.raise = env_raise;
	if (c->plat->n_eth)
		memcpy(env.mac, c->plat->eth[0]->mac, 6);
	env.ipv4 = fw_port_ipv4(env.mac);
	if ((rc = rocev2_open(&env, e)) != 0) {
		LOG_ERR("engine init failed: %d", rc);
		return rc;
	}
	/* The loop runs the engine's work (rocev2_poll) after every burst of
	 * received frames (loop.c fw_loop_once): ACKs may wait for it. */
	rocev2_set_ack_coalesce(*e, 1);
	fw_loop_set_timer_source(c->loop, engine_next, engine_run, *e);
	return 0;
}
