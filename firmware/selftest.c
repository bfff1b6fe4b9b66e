/* Self-test mode: exercise every driver on the real (emulated) hardware.
 * Generic checks here go through the HAL ops exactly as the engine will;
 * board checks (hal_platform_selftest) poke the devices directly.  Each
 * check prints one line; the run ends with a fixed marker line and exit
 * code 0 only if every check passed. */
#include <string.h>

#include "hal/errno.h"
#include "mgmt/initseg.h"
#include "log.h"
#include "modes.h"

#define LOOPBACK_FRAMES 24u
#define ETHERTYPE_SELFTEST 0x88b6u

struct selftest {
	struct fw_ctx *c;
	unsigned run, failed;
	/* loopback */
	unsigned rx_ok[HAL_MAX_ETH], rx_bad;
	volatile int rx_done;
	volatile int timer_fired;
	uint64_t timer_fired_at;
	struct timer timer;
};

static struct selftest st;
/* Separate buffers: the receive handler runs inside the transmit retry
 * loop (fw_loop_once), so it must not rebuild into the frame being sent. */
static uint8_t frame[HAL_ETH_MAX_FRAME];
static uint8_t expect[HAL_ETH_MAX_FRAME];

static void report(void *ctx, const char *check, int rc, const char *detail)
{
	struct selftest *s = ctx;

	s->run++;
	if (rc)
		s->failed++;
	fw_print("SELFTEST %-18s %s rc=%d (%s)", check, rc ? "FAIL" : "PASS", rc, detail);
}

static int check_timer_monotonic(struct fw_ctx *c)
{
	uint64_t a = c->plat->timer->now_ns(), b;
	unsigned i;

	for (i = 0; i < 1000; i++) {
		b = c->plat->timer->now_ns();
		if (b < a)
			return -HAL_EIO;
		a = b;
	}
	return 0;
}

static void on_timer(struct timer *t, void *arg)
{
	struct selftest *s = arg;

	(void)t;
	s->timer_fired_at = fw_loop_now(s->c->loop);
	s->timer_fired = 1;
}

/* A software timer through the loop: the loop must sleep (not spin) and
 * wake no earlier than the deadline. */
static int check_timer_sleep(struct fw_ctx *c)
{
	uint64_t start = fw_loop_now(c->loop), deadline = start + 5000000u;
	uint64_t sleeps = c->loop->stats.sleeps;
	int rc;

	st.timer_fired = 0;
	timer_setup(&st.timer, on_timer, &st);
	fw_loop_timer_arm(c->loop, &st.timer, deadline);
	rc = fw_loop_run_until(c->loop, &st.timer_fired, start + 2000000000u);
	if (rc)
		return rc;
	if (st.timer_fired_at < deadline)
		return -HAL_EIO;
	if (c->loop->stats.sleeps == sleeps)
		return -HAL_EBUSY;   /* spun instead of sleeping */
	return 0;
}

/* Frame i: dst = other port, src = this port, type, port, index, then a
 * pattern; sizes sweep from the minimum to a jumbo frame. */
static size_t loop_frame(struct hal_platform *p, unsigned from, unsigned i, uint8_t *f)
{
	static const size_t sizes[] = { 60, 61, 64, 127, 128, 512, 1024, 1514, 2048, 4096, 9000, 9018 };
	size_t len = sizes[i % (sizeof(sizes) / sizeof(sizes[0]))], k;

	memcpy(f, p->eth[1 - from]->mac, 6);
	memcpy(f + 6, p->eth[from]->mac, 6);
	f[12] = ETHERTYPE_SELFTEST >> 8;
	f[13] = ETHERTYPE_SELFTEST & 0xff;
	f[14] = (uint8_t)from;
	f[15] = (uint8_t)i;
	for (k = 16; k < len; k++)
		f[k] = (uint8_t)(k * 7u + i * 13u + from);
	return len;
}

static void on_loop_frame(void *arg, unsigned port, const uint8_t *f, size_t len)
{
	struct selftest *s = arg;
	struct hal_platform *p = s->c->plat;
	unsigned from, i;
	size_t want;

	if (len < 16 || f[12] != (ETHERTYPE_SELFTEST >> 8) || f[13] != (ETHERTYPE_SELFTEST & 0xff))
		return;   /* other traffic on the wire is not ours to judge */
	from = f[14];
	i = f[15];
	if (from >= 2 || port != 1 - from || i >= LOOPBACK_FRAMES) {
		s->rx_bad++;
		return;
	}
	want = loop_frame(p, from, i, expect);
	if (len != want || memcmp(f, expect, len) != 0) {
		s->rx_bad++;
		return;
	}
	s->rx_ok[port]++;
	if (s->rx_ok[0] == LOOPBACK_FRAMES && s->rx_ok[1] == LOOPBACK_FRAMES)
		s->rx_done = 1;
}

static int check_eth_loopback(struct fw_ctx *c)
{
	struct hal_platform *p = c->plat;
	unsigned i, from;
	uint64_t deadline;
	int rc;

	if (p->n_eth < 2)
		return -HAL_ENODEV;
	memset(st.rx_ok, 0, sizeof(st.rx_ok));
	st.rx_bad = 0;
	st.rx_done = 0;
	fw_loop_set_frame_handler(c->loop, on_loop_frame, &st);
	for (i = 0; i < LOOPBACK_FRAMES; i++) {
		for (from = 0; from < 2; from++) {
			size_t len = loop_frame(p, from, i, frame);

			deadline = fw_loop_now(c->loop) + 1000000000u;
			while ((rc = hal_eth_tx(p->eth[from], frame, len)) == -HAL_EAGAIN) {
				fw_loop_once(c->loop);
				if (fw_loop_now(c->loop) >= deadline)
					return -HAL_ETIMEDOUT;
			}
			if (rc)
				return rc;
		}
	}
	rc = fw_loop_run_until(c->loop, &st.rx_done, fw_loop_now(c->loop) + 3000000000u);
	fw_loop_set_frame_handler(c->loop, NULL, NULL);
	if (rc)
		return rc;
	return st.rx_bad ? -HAL_EIO : 0;
}

static int check_initseg(struct fw_ctx *c)
{
	volatile struct mnic_init_seg *s;

	if (!c->plat->hostif.bar)
		return -HAL_ENODEV;
	s = mnic_initseg(&c->plat->hostif);
	return (s->magic == MNIC_INIT_MAGIC && s->cmdif_rev == MNIC_CMDIF_REV) ? 0 : -HAL_EIO;
}

static int check_dma_window(struct fw_ctx *c)
{
	struct hal_dma *d = &c->dma;
	uint8_t out[64], in[64], save[64];
	uint64_t last;
	unsigned i;

	if (!c->plat->hostif.bar || d->window_size < sizeof(out))
		return -HAL_ENODEV;
	last = d->window_size - sizeof(out);
	if (hal_dma_read(d, last, save, sizeof(save)))
		return -HAL_EIO;
	for (i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(0xa5u ^ i);
	if (hal_dma_write(d, last, out, sizeof(out)) || hal_dma_read(d, last, in, sizeof(in)))
		return -HAL_EIO;
	if (hal_dma_write(d, last, save, sizeof(save)))
		return -HAL_EIO;
	if (memcmp(in, out, sizeof(in)) != 0)
		return -HAL_EIO;
	/* Out-of-window transfers must be refused and counted. */
	if (hal_dma_read(d, last + 1, in, sizeof(in)) != -HAL_EFAULT ||
	    hal_dma_write(d, UINT64_MAX - 8, out, 16) != -HAL_EFAULT)
		return -HAL_EIO;
	return d->stats.out_of_window >= 2 ? 0 : -HAL_EIO;
}

int fw_mode_selftest(struct fw_ctx *c, const struct fw_args *a)
{
	static const char *const keys[] = { "log", NULL };
	int board_failed;

	if (fw_args_check(a, keys) != 0)
		return FW_EXIT_USAGE;
	st.c = c;
	st.run = st.failed = 0;
	fw_print("SELFTEST BEGIN board=%s", c->plat->board);
	report(&st, "timer_monotonic", check_timer_monotonic(c), "now_ns never goes back");
	report(&st, "timer_sleep", check_timer_sleep(c), "loop sleeps until a 5 ms software timer");
	report(&st, "eth_loopback", check_eth_loopback(c), "24 frames 60..9018 B each way port0<->port1");
	report(&st, "hostif_initseg", check_initseg(c), "init segment published in the host BAR");
	report(&st, "dma_window", check_dma_window(c), "bounded copies in the host DMA window");
	board_failed = hal_platform_selftest(c->plat, report, &st);
	(void)board_failed;
	fw_print("SELFTEST RESULT %s %u/%u passed", st.failed ? "FAIL" : "PASS",
		 st.run - st.failed, st.run);
	return st.failed ? FW_EXIT_FAIL : FW_EXIT_OK;
}
