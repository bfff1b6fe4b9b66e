/* QEMU `virt` board: bring-up, interrupt dispatch, sleep, the slot flash
 * and reset, exit and the board self-tests.  Every address comes from the
 * generated board.h (qemu-board/boards/<board>.board). */
#include <string.h>

#include "board.h"
#include "gic.h"
#include "gtimer.h"
#include "hal/errno.h"
#include "hal/mmio.h"
#include "hal/platform.h"
#include "ivshmem.h"
#include "pcie_ecam.h"
#include "pflash.h"
#include "pl011.h"
#include "psci.h"
#include "semihost.h"
#include "virtio_net.h"

#define BOARD_MAX_ARGS 32
#define BOARD_CMDLINE_MAX 1024
#define FAULT_EXIT_BASE 100
/* Vectors hosts are interrupted on: 0 commands, 1.. event queues; the
 * server hands out as many eventfds per peer (qemu-board/nic.sh). */

static const struct pflash_config flash1_cfg = PFLASH_CONFIG(BOARD_FLASH1_BASE,
							     BOARD_FLASH_BANK_SIZE);
static struct pflash flash1;
static struct gic gic;
static struct pcie_ecam ecam;
static struct virtio_net_dev vnet[HAL_MAX_ETH];
static unsigned vnet_irq[HAL_MAX_ETH];
static unsigned n_vnet;
static int ivshmem_rc = -HAL_ENODEV;
/* The host BAR's doorbell channel (an ivshmem-doorbell; ENODEV: the BAR
 * is an ivshmem-plain, polled only) and its GICv2m SPI. */
static struct ivshmem_doorbell host_db;
static int host_db_rc = -HAL_ENODEV;
static unsigned host_db_spi;
static int hostmem_rc = -HAL_ENODEV;   /* ENODEV: no second ivshmem (optional) */
static uint32_t irq_unknown;
static volatile uint32_t timer_irqs;
static char cmdline[BOARD_CMDLINE_MAX];
static char *args[BOARD_MAX_ARGS + 1];

static void con_putc(char c)
{
	pl011_putc((uintptr_t)BOARD_UART0_BASE, c);
}

static int con_getc(void)
{
	return pl011_getc((uintptr_t)BOARD_UART0_BASE);
}

static const struct hal_console_ops pl011_console = {
	.putc = con_putc,
	.getc = con_getc,
};

static void con_puts(const char *s)
{
	for (; *s; s++)
		con_putc(*s);
}

static void con_hex(uint64_t v)
{
	int i;

	con_puts("0x");
	for (i = 60; i >= 0; i -= 4)
		con_putc("0123456789abcdef"[(v >> i) & 0xfu]);
}

/* Faults end the run with a distinct exit code; no allocation, no
 * formatter, the console is the only thing trusted here. */
static void __attribute__((noreturn)) fault(unsigned kind, uint64_t pc, uint64_t syndrome,
					    uint64_t addr)
{
	con_puts("\r\nFATAL: exception kind=");
	con_hex(kind);
	con_puts(" pc=");
	con_hex(pc);
	con_puts(" syndrome=");
	con_hex(syndrome);
	con_puts(" addr=");
	con_hex(addr);
	con_puts("\r\n");
	semihost_exit(FAULT_EXIT_BASE + (int)(kind & 0x1fu));
}

void board_fault(unsigned kind, uintptr_t pc);
void board_fault(unsigned kind, uintptr_t pc)
{
	uint32_t dfsr = 0, dfar = 0;

#if defined(__arm__)
	__asm__ volatile("mrc p15, 0, %0, c5, c0, 0" : "=r"(dfsr));
	__asm__ volatile("mrc p15, 0, %0, c6, c0, 0" : "=r"(dfar));
#endif
	fault(kind, pc, dfsr, dfar);
}

void board_fault64(unsigned idx, uint64_t elr, uint64_t esr, uint64_t far);
void board_fault64(unsigned idx, uint64_t elr, uint64_t esr, uint64_t far)
{
	fault(idx, elr, esr, far);
}

/* Split the semihosting command line ("<image> <-append text>") in place. */
static int build_args(void)
{
	int argc = 0;
	char *p = cmdline;

	if (semihost_cmdline(cmdline, sizeof(cmdline)) != 0)
		cmdline[0] = '\0';
	while (*p && argc < BOARD_MAX_ARGS) {
		while (*p == ' ')
			*p++ = '\0';
		if (!*p)
			break;
		args[argc++] = p;
		while (*p && *p != ' ')
			p++;
	}
	if (argc == 0)
		args[argc++] = (char *)BOARD_NAME;
	args[argc] = NULL;
	return argc;
}

void board_start(void);
void board_start(void)
{
	int argc = build_args();

	semihost_exit(fw_main(argc, args));
}

static int probe_virtio(struct hal_platform *p)
{
	int slot;

	/* QEMU fills virtio-mmio slots from the top: the first -device on the
	 * command line is slot 31, so scanning downwards keeps port order equal
	 * to command-line order. */
	for (slot = (int)BOARD_VIRTIO_SLOTS - 1; slot >= 0 && n_vnet < HAL_MAX_ETH; slot--) {
		uintptr_t base = (uintptr_t)(BOARD_VIRTIO_BASE + (uint64_t)slot * BOARD_VIRTIO_STRIDE);
		unsigned irq = (unsigned)BOARD_VIRTIO_IRQ0 + (unsigned)slot;
		static const char *const names[HAL_MAX_ETH] = { "eth0", "eth1" };
		struct virtio_net_dev *d = &vnet[n_vnet];

		if (virtio_net_probe(d, base, irq, names[n_vnet]) != 0)
			continue;
		if (gic_enable(&gic, irq) != 0)
			return -HAL_EINVAL;
		vnet_irq[n_vnet] = irq;
		p->eth[n_vnet] = virtio_net_eth(d);
		n_vnet++;
	}
	p->n_eth = n_vnet;
	return 0;
}

/* Host doorbells through MSI-X: vector 0 of the host BAR's ivshmem-doorbell
 * writes the first GICv2m SPI's INTID to MSI_SETSPI_NS, an edge SPI that
 * wakes the loop's WFI like any other interrupt.  An ivshmem-plain (no
 * MSI-X) leaves the NIC polled, as before. */
static int attach_doorbell(struct hal_platform *p, const struct pci_fn *fn)
{
	unsigned first, count;
	int rc;

	rc = gicv2m_probe((uintptr_t)BOARD_GICV2M_BASE, &first, &count);
	if (rc != 0)
		return rc;
	rc = gic_set_edge(&gic, first);
	if (rc == 0)
		rc = gic_enable(&gic, first);
	if (rc == 0)
		rc = ivshmem_doorbell_attach(&ecam, fn, BOARD_GICV2M_BASE + GICV2M_MSI_SETSPI_NS,
					     first, (unsigned)BOARD_HOST_VECTORS, &host_db);
	if (rc != 0)
		return rc;
	host_db_spi = first;
	p->doorbell = &host_db.db;
	p->hostif.backing = "ivshmem-doorbell BAR2 (MSI-X -> GICv2m)";
	return 0;
}

static int probe_pci(struct hal_platform *p)
{
	const struct pci_fn *fn;
	int n;

	memset(&ecam, 0, sizeof(ecam));
	ecam.base = (uintptr_t)BOARD_ECAM_BASE;
	ecam.nbuses = (unsigned)BOARD_ECAM_BUSES;
	ecam.mmio.base = BOARD_PCI_MMIO_BASE;
	ecam.mmio.size = BOARD_PCI_MMIO_SIZE;
	ecam.mmio.next = BOARD_PCI_MMIO_BASE;
	n = pcie_ecam_enumerate(&ecam);
	if (n < 0)
		return n;
	fn = pcie_ecam_find(&ecam, 0x1af4, 0x1110, 0);
	ivshmem_rc = fn ? ivshmem_attach(fn, &p->hostif) : -HAL_ENODEV;
	if (ivshmem_rc == 0)
		host_db_rc = attach_doorbell(p, fn);
	/* Host memory: the second ivshmem-plain function, optional.  One
	 * that is there but cannot be used (its BAR did not fit the 32-bit
	 * window: ecam.stats.no_space) leaves the NIC without an aperture
	 * (the firmware's start line says "host memory the DMA window"; the
	 * self-test fails ivshmem_hostmem). */
	fn = pcie_ecam_find(&ecam, 0x1af4, 0x1110, 1);
	hostmem_rc = fn ? ivshmem_attach_hostmem(fn, &p->hostmem) : -HAL_ENODEV;
	if (hostmem_rc != 0)
		memset(&p->hostmem, 0, sizeof(p->hostmem));
	return 0;
}

int hal_platform_init(struct hal_platform *p, int *argc, char ***argv)
{
	int rc;

	(void)argc;
	(void)argv;
	memset(p, 0, sizeof(*p));
	p->board = BOARD_NAME;
	p->board_id = BOARD_ID;
	pl011_init((uintptr_t)BOARD_UART0_BASE);
	p->console = &pl011_console;
	/* Slots in flash1; the loader (flash0) leaves its hand-off below the
	 * load address and its own RAM above any image. */
	p->boot.flash = pflash_init(&flash1, &flash1_cfg);
	p->boot.handoff = (const void *)(uintptr_t)BOARD_HANDOFF_ADDR;
	p->boot.image_ram_base = BOARD_LOAD_ADDR;
	p->boot.image_ram_end = BOARD_LOADER_RAM;
	p->boot.rom_base = (uintptr_t)BOARD_FLASH0_BASE;   /* the loader's bank: its key slot */
	p->boot.rom_size = (uint32_t)BOARD_FLASH_BANK_SIZE;
	gtimer_init();
	p->timer = &gtimer_ops;
	rc = gic_init(&gic, (uintptr_t)BOARD_GICD_BASE, (uintptr_t)BOARD_GICC_BASE);
	if (rc == 0)
		rc = gic_enable(&gic, (unsigned)BOARD_TIMER_IRQ);
	if (rc == 0)
		rc = probe_pci(p);
	if (rc == 0)
		rc = probe_virtio(p);
	return rc;
}

void hal_platform_poll(struct hal_platform *p)
{
	uint32_t iar;
	unsigned guard;

	(void)p;
	/* Drain the CPU interface.  Bounded so that a stuck level cannot hold
	 * the loop here forever. */
	for (guard = 0; guard < 64 && (iar = gic_ack(&gic)) != GIC_SPURIOUS; guard++) {
		unsigned intid = iar & 0x3ffu, i;

		if (intid == (unsigned)BOARD_TIMER_IRQ) {
			/* The timer output is a level; disarm it so it drops.
			 * The loop programs the next deadline before sleeping. */
			gtimer_ops.set_deadline(HAL_TIMER_NEVER);
			timer_irqs++;
		} else if (host_db_rc == 0 && intid == host_db_spi) {
			ivshmem_doorbell_irq(&host_db);
		} else {
			for (i = 0; i < n_vnet; i++)
				if (vnet_irq[i] == intid)
					break;
			if (i < n_vnet)
				virtio_net_irq(&vnet[i]);
			else
				irq_unknown++;
		}
		gic_eoi(&gic, iar);
	}
}

void hal_platform_wait(struct hal_platform *p, uint64_t deadline_ns)
{
	(void)p;
	(void)deadline_ns;
	/* DSB: finish outstanding writes (doorbells, descriptors) before the
	 * core stops.  WFI returns on any pending interrupt even though CPSR.I /
	 * DAIF.I stays set (ARM ARM B1.8.12, D1.16.2). */
	__asm__ volatile("dsb sy; wfi" ::: "memory");
}

int hal_platform_reset(struct hal_platform *p)
{
	(void)p;
	psci_system_reset();
	return -HAL_EIO;   /* PSCI SYSTEM_RESET returned */
}

void hal_platform_exit(int code)
{
	semihost_exit(code);
}

/* --- board self-tests -------------------------------------------------- */

static int check_gic_sgi(void)
{
	const unsigned sgi = 5;
	unsigned spins;

	gic_sgi_self(&gic, sgi);
	__asm__ volatile("dsb sy; wfi" ::: "memory");
	for (spins = 0; spins < 1000; spins++) {
		uint32_t iar = gic_ack(&gic);

		if (iar == GIC_SPURIOUS)
			continue;
		gic_eoi(&gic, iar);
		return (iar & 0x3ffu) == sgi ? 0 : -HAL_EIO;
	}
	return -HAL_ETIMEDOUT;
}

static int check_timer_irq(void)
{
	uint32_t before = timer_irqs;
	uint64_t deadline = gtimer_ops.now_ns() + 2000000u;
	unsigned wakeups;

	gtimer_ops.set_deadline(deadline);
	for (wakeups = 0; wakeups < 10000 && timer_irqs == before; wakeups++) {
		__asm__ volatile("dsb sy; wfi" ::: "memory");
		hal_platform_poll(NULL);
	}
	if (timer_irqs == before)
		return -HAL_ETIMEDOUT;
	return gtimer_ops.now_ns() >= deadline ? 0 : -HAL_EIO;
}

/* The doorbell path end to end without a host: a Doorbell write naming
 * this device's own ID (its eventfd of vector 0, from the server) comes
 * back as MSI-X vector 0 -> GICv2m -> the SPI, and wakes WFI. */
static int check_doorbell_loopback(void)
{
	uint32_t before = host_db.irqs;
	uint64_t deadline = gtimer_ops.now_ns() + 200000000ull;
	unsigned wakeups;

	if (host_db_rc != 0)
		return host_db_rc;
	mmio_write32(host_db.regs + IVSHMEM_DOORBELL, host_db.db.self_id << 16 | 0u);
	gtimer_ops.set_deadline(deadline);
	for (wakeups = 0; wakeups < 10000 && host_db.irqs == before &&
	     gtimer_ops.now_ns() < deadline; wakeups++) {
		__asm__ volatile("dsb sy; wfi" ::: "memory");
		hal_platform_poll(NULL);
	}
	gtimer_ops.set_deadline(HAL_TIMER_NEVER);
	if (host_db.irqs == before)
		return -HAL_ETIMEDOUT;
	/* consumed here: the firmware's loop must not see a ring nobody made */
	host_db.pending = 0;
	return 0;
}

int hal_platform_selftest(struct hal_platform *p, hal_selftest_report_fn report, void *ctx)
{
	int failed = 0, rc;
	const struct pci_fn *fn;

#define CHECK(name, expr, detail)                                  \
	do {                                                       \
		rc = (expr);                                       \
		report(ctx, name, rc, detail);                     \
		failed += rc != 0;                                 \
	} while (0)

	CHECK("pl011_ids", pl011_selftest((uintptr_t)BOARD_UART0_BASE), "PrimeCell/Periph IDs");
	CHECK("gic_sgi", check_gic_sgi(), "SGI to self wakes WFI and is acknowledged");
	CHECK("gtimer_irq", check_timer_irq(), "CVAL deadline raises PPI 27 through the GIC");
	fn = pcie_ecam_find(&ecam, 0x1af4, 0x1110, 0);
	CHECK("pcie_ecam", (ecam.n_fns > 0 && fn && fn->bar[2].present && fn->bar[2].addr) ? 0 : -HAL_ENODEV,
	      "enumerated, ivshmem BAR2 assigned");
	CHECK("ivshmem_attach", ivshmem_rc, "ivshmem BAR2 is the host BAR");
	CHECK("ivshmem_rw", p->hostif.bar ? ivshmem_selftest(&p->hostif) : -HAL_ENODEV,
	      "pattern through BAR2");
	if (fn && pcie_ecam_find_cap(&ecam, fn, PCI_CAP_ID_MSIX))
		CHECK("ivshmem_doorbell", check_doorbell_loopback(),
		      "Doorbell to itself returns as MSI-X vector 0 -> GICv2m SPI");
	if (pcie_ecam_find(&ecam, 0x1af4, 0x1110, 1))
		CHECK("ivshmem_hostmem", hostmem_rc, "second ivshmem-plain BAR2 is the host-memory aperture");
	CHECK("virtio_net_probe", n_vnet >= 1 ? 0 : -HAL_ENODEV, "virtio-net (modern) found");
#undef CHECK
	return failed;
}
