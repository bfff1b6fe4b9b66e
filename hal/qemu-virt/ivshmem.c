#include "ivshmem.h"

#include <stddef.h>
#include <string.h>

#include "hal/errno.h"
#include "hal/mmio.h"

int ivshmem_bar_cpu_check(uint64_t bus_addr, uint64_t size, uint64_t cpu_addr_max)
{
	if (size == 0 || size - 1 > (uint64_t)SIZE_MAX)
		return -HAL_ERANGE;
	if (bus_addr > cpu_addr_max || size - 1 > cpu_addr_max - bus_addr)
		return -HAL_ERANGE;
	return 0;
}

/* The shared-memory BAR of an ivshmem-plain function, checked as
 * ivshmem.h lists; NULL with *err set otherwise. */
static const struct pci_bar *shm_bar(const struct pci_fn *fn, int *err)
{
	const struct pci_bar *bar;

	*err = -HAL_ENODEV;
	if (fn->vendor != IVSHMEM_VENDOR || fn->device != IVSHMEM_PLAIN_DEVICE)
		return NULL;
	bar = &fn->bar[IVSHMEM_SHM_BAR];
	if (!bar->present || bar->io)
		return NULL;
	*err = -HAL_ENXIO;
	if (!bar->assigned || !fn->enabled)
		return NULL;
	*err = -HAL_ENOSPC;
	if (bar->size < IVSHMEM_MIN_SIZE)
		return NULL;
	*err = ivshmem_bar_cpu_check(bar->addr, bar->size, (uint64_t)UINTPTR_MAX);
	return *err == 0 ? bar : NULL;
}

int ivshmem_attach(const struct pci_fn *fn, struct hal_hostif *out)
{
	const struct pci_bar *bar;
	int err;

	if (fn == NULL || out == NULL)
		return -HAL_EINVAL;
	bar = shm_bar(fn, &err);
	if (bar == NULL)
		return err;

	out->bar = (volatile uint8_t *)(uintptr_t)bar->addr;
	out->bar_size = (size_t)bar->size;
	out->bar_bus_addr = bar->addr;
	out->backing = "ivshmem-plain BAR2";
	return 0;
}

int ivshmem_attach_hostmem(const struct pci_fn *fn, struct hal_hostmem *out)
{
	const struct pci_bar *bar;
	int err;

	if (fn == NULL || out == NULL)
		return -HAL_EINVAL;
	bar = shm_bar(fn, &err);
	if (bar == NULL)
		return err;
	out->base = (volatile uint8_t *)(uintptr_t)bar->addr;
	out->size = bar->size;
	out->backing = "ivshmem-plain BAR2 (host RAM)";
	return 0;
}

/* --- ivshmem-doorbell: the host doorbell channel --------------------- */

static int db_rang(struct hal_doorbell *hd)
{
	struct ivshmem_doorbell *d = hd->priv;

	if (!d->pending)
		return 0;
	d->pending = 0;
	hd->stats.rings++;
	/* The host wrote the BAR before it rang; the MSI that told us was
	 * acknowledged at the GIC before this read, and BAR reads after it
	 * are Device-nGnRnE accesses in program order (MMU off). */
	return 1;
}

static int db_raise(struct hal_doorbell *hd, unsigned vector)
{
	struct ivshmem_doorbell *d = hd->priv;
	unsigned i;

	if (vector >= hd->n_vectors) {
		hd->stats.bad_vectors++;
		return -HAL_EINVAL;
	}
	/* DMB ST: every completion this raise announces (CQEs, cmdq_ci) is in
	 * the shared memory before a host can be woken by the write below. */
	hal_wmb();
	for (i = 0; i < HAL_DOORBELL_MAX_HOSTS; i++) {
		uint32_t id = hd->hosts[i];

		if (id > IVSHMEM_MAX_ID || id == hd->self_id)
			continue;   /* empty slot, or a host naming the NIC itself */
		/* A peer that is not connected (or has fewer vectors) makes
		 * QEMU ignore the write (ivshmem-spec.rst "Doorbell"). */
		mmio_write32(d->regs + IVSHMEM_DOORBELL, id << 16 | vector);
		hd->stats.raises++;
	}
	return 0;
}

static const struct hal_doorbell_ops ivshmem_db_ops = {
	.rang = db_rang,
	.raise = db_raise,
};

void ivshmem_doorbell_irq(struct ivshmem_doorbell *d)
{
	d->irqs++;
	d->pending = 1;
}

static uint32_t cfg_rd(const struct pcie_ecam *e, const struct pci_fn *f, uint16_t off)
{
	return pcie_cfg_read32(e, f->bus, f->dev, f->fn, off);
}

int ivshmem_doorbell_attach(const struct pcie_ecam *e, const struct pci_fn *fn,
			    uint64_t msi_addr, uint32_t msi_data, unsigned n_vectors,
			    struct ivshmem_doorbell *out)
{
	const struct pci_bar *regs, *tbar;
	uint32_t ctrl, table, bir, toff, id;
	uint16_t cap;
	uintptr_t entry;

	if (e == NULL || fn == NULL || out == NULL || n_vectors == 0 ||
	    n_vectors > IVSHMEM_DB_MAX_VECTORS)
		return -HAL_EINVAL;
	if (fn->vendor != IVSHMEM_VENDOR || fn->device != IVSHMEM_PLAIN_DEVICE)
		return -HAL_ENODEV;
	cap = pcie_ecam_find_cap(e, fn, PCI_CAP_ID_MSIX);
	if (cap == 0)
		return -HAL_ENODEV;   /* ivshmem-plain: no interrupts */
	regs = &fn->bar[IVSHMEM_REG_BAR];
	if (!fn->enabled || !regs->present || regs->io || !regs->assigned ||
	    regs->size < IVSHMEM_REG_SIZE ||
	    ivshmem_bar_cpu_check(regs->addr, regs->size, (uint64_t)UINTPTR_MAX) != 0)
		return -HAL_ENXIO;
	ctrl = cfg_rd(e, fn, cap);
	table = cfg_rd(e, fn, (uint16_t)(cap + 4u));
	bir = table & 7u;
	toff = table & ~7u;
	if (bir >= 6u)
		return -HAL_ENXIO;
	tbar = &fn->bar[bir];
	/* entry 0 must lie inside its (assigned, addressable) BAR */
	if (!tbar->present || tbar->io || !tbar->assigned || tbar->size < MSIX_ENTRY_SIZE ||
	    toff > tbar->size - MSIX_ENTRY_SIZE ||
	    ivshmem_bar_cpu_check(tbar->addr, tbar->size, (uint64_t)UINTPTR_MAX) != 0)
		return -HAL_ENXIO;
	id = mmio_read32((uintptr_t)regs->addr + IVSHMEM_IVPOSITION);
	if (id > IVSHMEM_MAX_ID)
		return -HAL_ENXIO;

	/* PCI LB 3.0 6.8.2.3: with the function masked, write entry 0, unmask
	 * it, then enable MSI-X and drop the function mask. */
	pcie_cfg_write32(e, fn->bus, fn->dev, fn->fn, cap, (ctrl | MSIX_CTRL_FN_MASK) & ~0xffffu);
	entry = (uintptr_t)tbar->addr + toff;
	mmio_write32(entry + MSIX_ENTRY_ADDR_LO, (uint32_t)msi_addr);
	mmio_write32(entry + MSIX_ENTRY_ADDR_HI, (uint32_t)(msi_addr >> 32));
	mmio_write32(entry + MSIX_ENTRY_DATA, msi_data);
	mmio_write32(entry + MSIX_ENTRY_CTRL, 0);
	pcie_cfg_write32(e, fn->bus, fn->dev, fn->fn, cap,
			 ((ctrl | MSIX_CTRL_ENABLE) & ~MSIX_CTRL_FN_MASK) & ~0xffffu);

	memset(out, 0, sizeof(*out));   /* counters start at zero */
	out->regs = (uintptr_t)regs->addr;
	out->db.ops = &ivshmem_db_ops;
	out->db.n_vectors = n_vectors;
	out->db.self_id = id;
	for (unsigned i = 0; i < HAL_DOORBELL_MAX_HOSTS; i++)
		out->db.hosts[i] = HAL_DOORBELL_NO_ID;
	out->db.every_store_rings = 0;   /* a host VM's applications do not ring */
	out->db.priv = out;
	return 0;
}

/* Address-dependent, so a stuck or aliased address line also mismatches;
 * the second pass is the complement, so every data bit sees 0 and 1. */
static uint8_t selftest_pattern(size_t i, unsigned pass)
{
	uint8_t v = (uint8_t)(0xa5u ^ (i * 0x3bu) ^ (i >> 8));

	return pass ? (uint8_t)~v : v;
}

int ivshmem_selftest(struct hal_hostif *h)
{
	uint8_t saved[IVSHMEM_SELFTEST_LEN];
	uintptr_t region;
	unsigned pass;
	size_t i;
	int err = 0;

	if (h == NULL || h->bar == NULL || h->bar_size < IVSHMEM_SELFTEST_LEN)
		return -HAL_EINVAL;
	region = (uintptr_t)(h->bar + (h->bar_size - IVSHMEM_SELFTEST_LEN));

	/* Byte accesses: with the MMU off the BAR is Device/Strongly-ordered
	 * memory, where unaligned wider accesses fault. */
	for (i = 0; i < IVSHMEM_SELFTEST_LEN; i++)
		saved[i] = mmio_read8(region + i);
	for (pass = 0; pass < 2 && err == 0; pass++) {
		for (i = 0; i < IVSHMEM_SELFTEST_LEN; i++)
			mmio_write8(region + i, selftest_pattern(i, pass));
		for (i = 0; i < IVSHMEM_SELFTEST_LEN; i++) {
			if (mmio_read8(region + i) != selftest_pattern(i, pass)) {
				err = -HAL_EIO;
				break;
			}
		}
	}
	for (i = 0; i < IVSHMEM_SELFTEST_LEN; i++)
		mmio_write8(region + i, saved[i]);
	/* The host may look at the region as soon as the caller reports the
	 * BAR up: the restoring writes must have completed by then. */
	hal_mb();
	return err;
}
