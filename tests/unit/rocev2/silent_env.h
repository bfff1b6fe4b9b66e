/* An engine environment for object and queue tests that send nothing on
 * purpose: transmit accepts and drops, the clock is `now` (the test moves
 * it); host vectors the engine raises are counted (count_raise).  Shared
 * by test_objects.c, test_qp.c, test_queue.c, test_cq_event.c and
 * test_ethq.c. */
#ifndef SILENT_ENV_H
#define SILENT_ENV_H

#include "internal.h"

static uint64_t now;

static int fake_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	(void)frame;
	(void)len;
	return 0;
}

static uint64_t fake_now(void *ctx)
{
	(void)ctx;
	return now;
}

/* env.raise: how many host vectors were raised, and the last one */
static unsigned raised, last_vector;

static inline void count_raise(void *ctx, unsigned vector)
{
	(void)ctx;
	raised++;
	last_vector = vector;
}

static inline struct rocev2_env silent_env(struct hal_dma *dma)
{
	struct rocev2_env env = {
		.tx = fake_tx, .now_ns = fake_now, .dma = dma,
		.mac = { 2, 0, 0, 0, 0, 1 }, .ipv4 = 0x0a000001,
	};

	return env;
}

#endif
