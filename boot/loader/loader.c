/* First-stage loader: runs in place from flash0 at the reset address.
 *
 *   1. read the boot record in flash1 (the CFI driver behind the HAL flash
 *      contract, hal/qemu-virt/pflash.c) and pick a slot (boot/bootrec.c:
 *      a test slot counts one more boot, or is reverted after max_boots;
 *      a slot that fails verification is marked BAD and the other tried);
 *   2. the slot's image is verified in place: header, board id, size,
 *      load range (it must not overlap this loader's RAM), version not
 *      below the record's anti-rollback minimum, SHA-256, and its Ed25519
 *      signature by a key of the key slot in this flash (boot/fwsig.c;
 *      no key slot: digest only, as documented, and said on the UART);
 *   3. copy the payload to its load address, leave a hand-off (slot,
 *      event, header) at BOARD_HANDOFF_ADDR, jump to the entry.
 * Nothing bootable: say so on the UART and exit through semihosting with
 * LOADER_EXIT_NOTHING (a real board would wait for recovery here).
 *
 * One line per decision on the UART, "LOADER: ...", for the tests.
 * Everything is polled, MMU and caches off as the CPU comes out of reset. */
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "boot/bootrec.h"
#include "boot/fwimage.h"
#include "boot/fwsig.h"
#include "hal/mmio.h"
#include "pflash.h"
#include "semihost.h"

#define LOADER_EXIT_NOTHING 4
#define UART_DR 0x00u
#define UART_FR 0x18u
#define UART_FR_TXFF (1u << 5)

void loader_main(void);
void loader_fault(uintptr_t kind, uintptr_t pc);

/* GCC may emit calls to these even in freestanding code; the loader links
 * no libc.  -fno-tree-loop-distribute-patterns keeps them from calling
 * themselves. */
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

void *memcpy(void *d, const void *s, size_t n)
{
	uint8_t *dp = d;
	const uint8_t *sp = s;

	if ((((uintptr_t)dp | (uintptr_t)sp | n) & 3u) == 0) {
		for (; n; n -= 4, dp += 4, sp += 4)
			*(uint32_t *)dp = *(const uint32_t *)sp;
		return d;
	}
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memset(void *d, int c, size_t n)
{
	uint8_t *dp = d;

	while (n--)
		*dp++ = (uint8_t)c;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x < *y ? -1 : 1;
	return 0;
}

static void putc_uart(char c)
{
	while (mmio_read32(BOARD_UART0_BASE + UART_FR) & UART_FR_TXFF)
		;
	mmio_write32(BOARD_UART0_BASE + UART_DR, (uint8_t)c);
}

static void puts_uart(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			putc_uart('\r');
		putc_uart(*s);
	}
}

static void putu(uint32_t v)
{
	char b[11];
	int i = 10;

	b[i] = '\0';
	do
		b[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i);
	puts_uart(b + i);
}

static void put_version(const struct mnic_fw_version *v)
{
	putu(v->major);
	putc_uart('.');
	putu(v->minor);
	putc_uart('.');
	putu(v->patch);
	putc_uart('+');
	putu(v->build);
}

static void put_slot(unsigned s)
{
	puts_uart(s == MNIC_SLOT_B ? "slot B" : "slot A");
}

static const char *const event_text[] = {
	[MNIC_BOOT_EV_NONE] = "",
	[MNIC_BOOT_EV_TEST] = " test boot ",
	[MNIC_BOOT_EV_CONFIRMED] = "",
	[MNIC_BOOT_EV_REVERTED] = " (after a revert)",
	[MNIC_BOOT_EV_REFUSED] = " (other slot refused)",
	[MNIC_BOOT_EV_RESCUE] = " (rescue: record named nothing bootable)",
};

static const char *const policy_text[] = {
	[FWSIG_OPEN] = "LOADER: no key provisioned: images checked by digest only (open board)\n",
	[FWSIG_ENFORCED] = "LOADER: signed images only, keys from the key slot\n",
	[FWSIG_LOCKED] = "LOADER: key slot corrupt or every key revoked: refusing every image\n",
};

static struct fwsig_keys keys;
static const struct pflash_config flash1_cfg = PFLASH_CONFIG(BOARD_FLASH1_BASE,
							     BOARD_FLASH_BANK_SIZE);
static struct pflash flash1;

void loader_fault(uintptr_t kind, uintptr_t pc)
{
	puts_uart("LOADER: fault ");
	putu((uint32_t)kind);
	puts_uart(" at pc ");
	putu((uint32_t)pc);
	puts_uart("\n");
	semihost_exit(LOADER_EXIT_NOTHING + 1);
}

void loader_main(void)
{
	const struct fwimg_limits lim = {
		.board_id = BOARD_ID, .max_image = MNIC_FLASH_SLOT_SIZE,
		.ram_base = BOARD_LOAD_ADDR, .ram_end = BOARD_LOADER_RAM, .keys = &keys,
	};
	struct mnic_boot_handoff *h = (struct mnic_boot_handoff *)(uintptr_t)BOARD_HANDOFF_ADDR;
	struct hal_flash *flash;
	struct boot_choice c;
	void (*entry)(void);
	unsigned s;
	int rc;

	puts_uart("LOADER: " BOARD_NAME ", slots in flash1\n");
	/* the key slot sits in this bank, which the CPU reads as memory */
	fwsig_keys_load(&keys, (const void *)(uintptr_t)(BOARD_FLASH0_BASE + MNIC_BOOTROM_KEYSLOT));
	puts_uart(policy_text[keys.policy]);
	flash = pflash_init(&flash1, &flash1_cfg);
	rc = boot_select(flash, &lim, &c);
	for (s = MNIC_SLOT_A; s <= MNIC_SLOT_B; s++) {
		if (!c.refused[s])
			continue;
		puts_uart("LOADER: ");
		put_slot(s);
		puts_uart(" refused: ");
		puts_uart(c.refused[s] < 0 ? "not marked bootable" : fwimg_strerror(c.refused[s]));
		puts_uart("\n");
	}
	if (c.reverted >= 0) {
		puts_uart("LOADER: ");
		put_slot((unsigned)c.reverted);
		puts_uart(" reverted: its test boots never confirmed it\n");
	}
	if (c.slot < 0) {
		puts_uart("LOADER: no bootable slot\n");
		semihost_exit(LOADER_EXIT_NOTHING);
	}
	if (rc)
		puts_uart("LOADER: boot record write failed; booting anyway\n");
	puts_uart("LOADER: ");
	put_slot((unsigned)c.slot);
	puts_uart(" ");
	put_version(&c.info.hdr.version);
	if (c.event < sizeof(event_text) / sizeof(event_text[0]))
		puts_uart(event_text[c.event]);
	if (c.event == MNIC_BOOT_EV_TEST)
		putu(c.boot_count);
	puts_uart("\n");

	if (hal_flash_read(flash, boot_slot_off((unsigned)c.slot) + MNIC_FWIMG_HDR_SIZE,
			   (void *)(uintptr_t)c.info.hdr.load_addr, c.info.hdr.payload_size) != 0) {
		puts_uart("LOADER: slot read failed\n");
		semihost_exit(LOADER_EXIT_NOTHING);
	}
	memset(h, 0, sizeof(*h));
	h->slot = (uint8_t)c.slot;
	h->event = c.event;
	h->boot_count = c.boot_count;
	h->hdr = c.info.hdr;
	h->magic = MNIC_HANDOFF_MAGIC;
	/* The copied code must be what the CPU fetches: complete the stores,
	 * drop any stale instruction-cache lines, resynchronise the pipeline
	 * (ARM ARM B2.2.9 / D7.5.9: instruction memory modified by stores). */
#if defined(__aarch64__)
	__asm__ volatile("dsb sy\n\tic iallu\n\tdsb sy\n\tisb" ::: "memory");
#else
	__asm__ volatile("dsb sy\n\tmcr p15, 0, %0, c7, c5, 0\n\tdsb sy\n\tisb" ::"r"(0) : "memory");
#endif
	entry = (void (*)(void))(uintptr_t)c.info.hdr.entry;
	entry();
	semihost_exit(LOADER_EXIT_NOTHING + 2);
}
