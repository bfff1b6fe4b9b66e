/* Boot-time half of mgmt/fwflash.h: take the slot flash and the loader's
 * hand-off from the platform (hal/platform.h, struct hal_boot), run the
 * firmware's self-test, confirm the slot, and the reset that FW_ACTIVATE
 * (or a failed test boot) asks for.
 *
 * The self-test is what "this firmware works on this board" means before
 * it may become the confirmed slot: SHA-256 answers its FIPS 180-4 vector,
 * Ed25519 verification accepts RFC 8032's TEST 1 and refuses it with a bit
 * flipped (its time is printed: `make bench`, sig_verify_ms_*), the image
 * it was loaded from still verifies in its slot (signature and
 * anti-rollback minimum included), and the host interface and Ethernet
 * port are up.
 *
 * Built with FW_SELFTEST_FAIL=1 it fails on purpose (the rollback system
 * test).
 *
 * Keys: the key slot in the boot flash (p->boot.rom_*, the loader's bank;
 * mnic/fwimage.h MNIC_BOOTROM_KEYSLOT), read once here and handed (copied)
 * to mgmt/fwflash.c, whose FW_FLASH_END and FW_ACTIVATE check with it.
 *
 * Reset: hal_platform_reset (qemu-virt: PSCI SYSTEM_RESET): QEMU restarts
 * the CPU at flash0, the loader runs again with the record as FW_ACTIVATE
 * left it.  Chosen over a semihosting exit + relaunch by the harness
 * because it is what a board does (watchdog/PSCI), keeps the QEMU process,
 * its BAR file and its switch port, and needs nothing from the test.  A
 * platform without a reset (POSIX: -HAL_ENOTSUP) only prints the marker. */
#include <string.h>

#include "boot/fwsig.h"
#include "lib/ed25519.h"
#include "lib/sha256.h"
#include "mgmt/fwflash.h"
#include "hal/errno.h"
#include "log.h"

#define RESET_DELAY_NS 100000000ull   /* let the host read FW_ACTIVATE's reply */

void mnic_fwflash_set_confirmed(int yes, int record_changed);
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

/* RFC 8032 7.1 TEST 1 (empty message): accepted as is, refused with one
 * bit of S flipped.  *us: the time of one verification. */
static int ed25519_kat(const struct hal_platform *p, uint64_t *us)
{
	static const uint8_t pub[32] = {
		0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64,
		0x07, 0x3a, 0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68,
		0xf7, 0x07, 0x51, 0x1a,
	};
	static const uint8_t sig[64] = {
		0xe5, 0x56, 0x43, 0x00, 0xc3, 0x60, 0xac, 0x72, 0x90, 0x86, 0xe2, 0xcc, 0x80, 0x6e,
		0x82, 0x8a, 0x84, 0x87, 0x7f, 0x1e, 0xb8, 0xe5, 0xd9, 0x74, 0xd8, 0x73, 0xe0, 0x65,
		0x22, 0x49, 0x01, 0x55, 0x5f, 0xb8, 0x82, 0x15, 0x90, 0xa3, 0x3b, 0xac, 0xc6, 0x1e,
		0x39, 0x70, 0x1c, 0xf9, 0xb4, 0x6b, 0xd2, 0x5b, 0xf5, 0xf0, 0x59, 0x5b, 0xbe, 0x24,
		0x65, 0x51, 0x41, 0x43, 0x8e, 0x7a, 0x10, 0x0b,
	};
	uint8_t bad[64];
	uint64_t t0 = p->timer->now_ns();
	int ok = ed25519_verify(sig, "", 0, pub) == 0;

	*us = (p->timer->now_ns() - t0) / 1000u;
	memcpy(bad, sig, sizeof(bad));
	bad[40] ^= 0x04;
	return ok && ed25519_verify(bad, "", 0, pub) != 0;
}

static const char *const policy_names[] = {
	[FWSIG_OPEN] = "open: no key provisioned, images checked by digest only",
	[FWSIG_ENFORCED] = "enforced: images signed by a provisioned key",
	[FWSIG_LOCKED] = "locked: key slot corrupt or every key revoked, every image refused",
};

int mnic_fwflash_boot(const struct hal_platform *p, uint64_t now_ns, int host_up, int eth_up)
{
	struct fwsig_keys keys;        /* mnic_fwflash_attach keeps a copy */
	const struct fwimg_limits lim = {
		.board_id = p->board_id, .max_image = MNIC_FLASH_SLOT_SIZE,
		.ram_base = p->boot.image_ram_base, .ram_end = p->boot.image_ram_end, .keys = &keys,
	};
	const struct mnic_boot_handoff *h = p->boot.handoff;
	struct hal_flash *f = p->boot.flash;
	int ok = 1, test_boot = 0, rc;
	struct {
		const char *name;
		int pass;
	} checks[6];
	unsigned n = 0, i;
	uint64_t verify_us;

	if (h && h->magic != MNIC_HANDOFF_MAGIC)
		h = NULL;   /* started with -kernel: no loader, no slot */
	fwsig_keys_load(&keys, p->boot.rom_size >= MNIC_BOOTROM_KEYSLOT + sizeof(struct mnic_keyslot)
				       ? (const void *)(p->boot.rom_base + MNIC_BOOTROM_KEYSLOT)
				       : NULL);
	mnic_fwflash_attach(f, h, &lim);
	checks[n].name = "sha256";
	checks[n++].pass = sha256_kat();
	checks[n].name = "ed25519";
	checks[n++].pass = ed25519_kat(p, &verify_us);
	fw_print("FW SIG policy %s; ed25519 verify %u us", policy_names[keys.policy],
		 (unsigned)verify_us);
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
		mnic_fwflash_set_confirmed(ok, 0);
		return ok ? 0 : -1;
	}
	if (ok) {
		rc = boot_confirm(f, h->slot);
		mnic_fwflash_set_confirmed(rc >= 0, rc == 1);
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
