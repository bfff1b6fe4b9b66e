/* Boot -> platform init -> mode.  The same file runs on every board. */
#include <string.h>

#include "fmt.h"
#include "hal/platform.h"
#include "mgmt/initseg.h"
#include "log.h"
#include "modes.h"

static struct hal_platform platform;
static struct fw_loop loop;
static struct fw_ctx ctx;

static const struct fw_mode modes[] = {
	{ "run", fw_mode_run, "serve the host interface and the wire (default)" },
};
#define N_MODES (sizeof(modes) / sizeof(modes[0]))

/* The i-th mode: the product's, then the lab image's (modes.h). */
static const struct fw_mode *mode_at(unsigned i)
{
	if (i < N_MODES)
		return &modes[i];
	return i - N_MODES < fw_lab_n_modes ? &fw_lab_modes[i - N_MODES] : NULL;
}

static void mac_str(const uint8_t *m, char *out, size_t n)
{
	fw_snprintf(out, n, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

int fw_main(int argc, char **argv)
{
	const struct fw_mode *mode = &modes[0];
	struct fw_args args = { 0, NULL };
	char mac[18] = "none";
	const char *lvl;
	enum fw_log_level level;
	unsigned i;
	int rc;

	rc = hal_platform_init(&platform, &argc, &argv);
	if (platform.console)
		fw_log_init(platform.console, platform.timer);
	if (rc != 0) {
		LOG_ERR("platform init failed: %d", rc);
		return FW_EXIT_PLATFORM;
	}
	if (argc >= 2) {
		for (i = 0; mode_at(i) && strcmp(argv[1], mode_at(i)->name) != 0; i++)
			;
		if (!mode_at(i)) {
			LOG_ERR("unknown mode '%s'; modes are:", argv[1]);
			for (i = 0; mode_at(i); i++)
				LOG_ERR("  %-9s %s", mode_at(i)->name, mode_at(i)->help);
			if (!fw_lab_n_modes)
				LOG_ERR("(rawx, rcx and selftest are in the lab image, mnic-fw-lab.elf)");
			return FW_EXIT_USAGE;
		}
		mode = mode_at(i);
		args.argc = argc - 2;
		args.argv = argv + 2;
	}
	lvl = fw_args_get(&args, "log");
	if (lvl) {
		if (fw_log_parse_level(lvl, &level) != 0) {
			LOG_ERR("log= wants err, warn, info or debug");
			return FW_EXIT_USAGE;
		}
		fw_log_set_level(level);
	}

	if (platform.n_eth)
		mac_str(platform.eth[0]->mac, mac, sizeof(mac));
	if (platform.hostif.bar) {
		rc = mnic_initseg_boot(&platform.hostif, platform.board, platform.board_id,
				       platform.n_eth ? platform.eth[0]->mac : NULL);
		if (rc != 0) {
			LOG_ERR("host BAR of %zu bytes is too small (need >= %u)",
				platform.hostif.bar_size, MNIC_DMA_WINDOW_OFFSET);
			return FW_EXIT_PLATFORM;
		}
		hal_dma_window_init(&ctx.dma, platform.hostif.bar + MNIC_DMA_WINDOW_OFFSET,
				    platform.hostif.bar_size - MNIC_DMA_WINDOW_OFFSET);
	}
	/* Host memory (docs/host-interface.md "Host memory and translation"):
	 * the platform's aperture when it has one, else the window. */
	ctx.host_dma = &ctx.dma;
	if (platform.hostmem.base) {
		hal_dma_window_init(&ctx.hostmem, platform.hostmem.base, platform.hostmem.size);
		ctx.host_dma = &ctx.hostmem;
	}
	fw_loop_init(&loop, &platform);
	ctx.plat = &platform;
	ctx.loop = &loop;
	LOG_INFO("board %s, %u eth port(s), mac %s, host BAR %s (%zu bytes), mode %s",
		 platform.board, platform.n_eth, mac,
		 platform.hostif.bar ? platform.hostif.backing : "absent",
		 platform.hostif.bar_size, mode->name);
	if (platform.hostmem.base)
		LOG_INFO("host memory %s (%llu bytes)", platform.hostmem.backing,
			 (unsigned long long)platform.hostmem.size);
	rc = mode->run(&ctx, &args);
	if (platform.hostif.bar && rc != FW_EXIT_OK && mode->run == fw_mode_run)
		mnic_initseg_set_state(&platform.hostif, MNIC_STATE_FAILED);
	return rc;
}
