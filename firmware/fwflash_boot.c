/* Boot-time half of mgmt/fwflash.h: take the slot flash and the loader's
 * hand-off from the platform (hal/platform.h, struct hal_boot), run the
 * firmware's self-test, confirm the slot, and the reset that FW_ACTIVATE
 * (or a failed test boot) asks for.
 *
 * The self-test is what "this firmware works on this board" means before
 * it may become the confirmed slot: SHA-256 answers its FIPS 180-4 vector,
 * the image it was loaded from still verifies in its slot, and the host
 * interface and Ethernet port are up.  Built with FW_SELFTEST_FAIL=1 it
 * fails on purpose (the rollback system test).
 *
 * Reset: hal_platform_reset (qemu-virt: PSCI SYSTEM_RESET): QEMU restarts
 * the CPU at flash0, the loader runs again with the record as FW_ACTIVATE
 * left it.  Chosen over a semihosting exit + relaunch by the harness
 * because it is what a board does (watchdog/PSCI), keeps the QEMU process,
 * its BAR file and its switch port, and needs nothing from the test.  A
 * platform without a reset (POSIX: -HAL_ENOTSUP) only prints the marker. */
#include <string.h>

#include "lib/sha256.h"
#include "mgmt/fwflash.h"
#include "hal/errno.h"
#include "log.h"

#define RESET_DELAY_NS 100000000ull   /* let the host read FW_ACTIVATE's reply */

void mnic_fwflash_set_confirmed(int yes);
void mnic_fwflash_clear_reset(void);

static uint64_t reset_at_ns;
static int reset_armed;

static int sha256_kat(void)
{
	static const uint8_t abc_digest[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae,
		0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61,
		0xf2, 0x00, 0x15, 0xad,
	};
	uint8_t d[32];

	sha256("abc", 3, d);
	return memcmp(d, abc_digest, sizeof(d)) == 0;
}

int mnic_fwflash_boot(const struct hal_platform *p, uint64_t now_ns, int host_up, int eth_up)
{
	const struct fwimg_limits lim = {
		p->board_id, MNIC_FLASH_SLOT_SIZE, p->boot.image_ram_base, p->boot.image_ram_end,
	};
	const struct mnic_boot_handoff *h = p->boot.handoff;
	struct hal_flash *f = p->boot.flash;
	int ok = 1, test_boot = 0, rc;
	struct {
		const char *name;
		int pass;
	} checks[5];
	unsigned n = 0, i;

	if (h && h->magic != MNIC_HANDOFF_MAGIC)
		h = NULL;   /* started with -kernel: no loader, no slot */
	mnic_fwflash_attach(f, h, &lim);
	checks[n].name = "sha256";
	checks[n++].pass = sha256_kat();
	checks[n].name = "host_interface";
	checks[n++].pass = host_up;
	checks[n].name = "eth_port";
	checks[n++].pass = eth_up;
	if (h && f) {
		test_boot = h->event == MNIC_BOOT_EV_TEST;
		checks[n].name = "own_slot";
		checks[n++].pass = boot_slot_verify(f, h->slot, &lim, NULL) == 0;
	}
#ifdef FW_SELFTEST_FAIL
	checks[n].name = "injected_failure";   /* FW_SELFTEST_FAIL=1 build */
	checks[n++].pass = 0;
#endif
	for (i = 0; i < n; i++) {
		if (!checks[i].pass)
			LOG_ERR("fw selftest: %s failed", checks[i].name);
		ok &= checks[i].pass;
	}
	if (!h) {
		mnic_fwflash_set_confirmed(ok);
		return ok ? 0 : -1;
	}
	if (ok) {
		rc = boot_confirm(f, h->slot);
		mnic_fwflash_set_confirmed(rc >= 0);
		fw_print("FW SELFTEST PASS slot %c version %u.%u.%u+%u%s", 'A' + h->slot,
			 h->hdr.version.major, h->hdr.version.minor, h->hdr.version.patch,
			 (unsigned)h->hdr.version.build, rc == 1 ? " confirmed" : "");
		return rc >= 0 ? 0 : -1;
	}
	fw_print("FW SELFTEST FAIL slot %c version %u.%u.%u+%u%s", 'A' + h->slot,
		 h->hdr.version.major, h->hdr.version.minor, h->hdr.version.patch,
		 (unsigned)h->hdr.version.build, test_boot ? ": not confirmed, resetting" : "");
	if (test_boot) {
		/* The loader counts this boot; after max_boots it reverts. */
		reset_armed = 1;
		reset_at_ns = now_ns + RESET_DELAY_NS;
	}
	return -1;
}

void mnic_fwflash_poll(struct hal_platform *p, uint64_t now_ns)
{
	int rc;

	if (mnic_fwflash_reset_pending() && !reset_armed) {
		reset_armed = 1;
		reset_at_ns = now_ns + RESET_DELAY_NS;
	}
	if (!reset_armed || now_ns < reset_at_ns)
		return;
	reset_armed = 0;
	mnic_fwflash_clear_reset();
	fw_print("FW RESET");
	rc = hal_platform_reset(p);
	if (rc != -HAL_ENOTSUP)
		LOG_ERR("fw: platform reset returned %d", rc);
}
