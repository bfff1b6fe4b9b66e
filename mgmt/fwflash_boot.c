/* Boot-time half of mgmt/fwflash.h: find the slot flash and the loader's
 * hand-off (board.h), run the firmware's self-test, confirm the slot, and
 * the reset that FW_ACTIVATE (or a failed test boot) asks for.
 *
 * The self-test is what "this firmware works on this board" means before
 * it may become the confirmed slot: SHA-256 answers its FIPS 180-4 vector,
 * the image it was loaded from still verifies in its slot, and the host
 * interface and Ethernet port are up.  Built with FW_SELFTEST_FAIL=1 it
 * fails on purpose (the rollback system test).
 *
 * Reset: PSCI SYSTEM_RESET (psci.h): QEMU restarts the CPU at flash0, the
 * loader runs again with the record as FW_ACTIVATE left it.  Chosen over
 * a semihosting exit + relaunch by the harness because it is what a board
 * does (watchdog/PSCI), keeps the QEMU process, its BAR file and its
 * switch port, and needs nothing from the test. */
#include <string.h>

#include "board.h"
#include "boot/sha256.h"
#include "fwflash.h"
#include "log.h"
#ifdef BOARD_FLASH1_BASE
#include "pflash.h"
#include "psci.h"
#endif

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

#ifdef BOARD_FLASH1_BASE
static const struct pflash_config flash1_cfg = PFLASH_CONFIG(BOARD_FLASH1_BASE,
							     BOARD_FLASH_BANK_SIZE);
static struct pflash flash1;
#endif

int mnic_fwflash_boot(uint64_t now_ns, int host_up, int eth_up)
{
	const struct fwimg_limits lim = {
		BOARD_ID, MNIC_FLASH_SLOT_SIZE,
#ifdef BOARD_FLASH1_BASE
		BOARD_LOAD_ADDR, BOARD_LOADER_RAM,
#else
		0, 0,
#endif
	};
	const struct mnic_boot_handoff *h = NULL;
	struct hal_flash *f = NULL;
	int ok = 1, test_boot = 0, rc;
	struct {
		const char *name;
		int pass;
	} checks[5];
	unsigned n = 0, i;

#ifdef BOARD_FLASH1_BASE
	f = pflash_init(&flash1, &flash1_cfg);
	h = (const struct mnic_boot_handoff *)(uintptr_t)BOARD_HANDOFF_ADDR;
	if (h->magic != MNIC_HANDOFF_MAGIC)
		h = NULL;   /* started with -kernel: no loader, no slot */
#endif
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

void mnic_fwflash_poll(uint64_t now_ns)
{
	if (mnic_fwflash_reset_pending() && !reset_armed) {
		reset_armed = 1;
		reset_at_ns = now_ns + RESET_DELAY_NS;
	}
	if (!reset_armed || now_ns < reset_at_ns)
		return;
	reset_armed = 0;
	mnic_fwflash_clear_reset();
	fw_print("FW RESET");
#ifdef BOARD_FLASH1_BASE
	psci_system_reset();
	LOG_ERR("fw: PSCI SYSTEM_RESET returned");
#endif
}
