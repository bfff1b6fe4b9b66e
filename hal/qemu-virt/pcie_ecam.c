#include "pcie_ecam.h"

#include <stddef.h>

#include "hal/errno.h"
#include "hal/mmio.h"

/* ECAM address layout (PCIe Base Spec 4.0 7.2.2, table 7-1) */
#define ECAM_BUS_SHIFT      20
#define ECAM_DEV_SHIFT      15
#define ECAM_FN_SHIFT       12
#define ECAM_MAX_BUSES      256u
#define PCI_DEVS_PER_BUS    32u
#define PCI_FNS_PER_DEV     8u
#define PCI_CFG_SPACE_SIZE  4096u

#define PCI_BARS_ENDPOINT   6u
#define PCI_BARS_BRIDGE     2u

/* Base Address Register low bits (PCI Local Bus Spec 3.0 6.2.5.1) */
#define BAR_SPACE_IO        0x1u
#define BAR_IO_ADDR_MASK    0xfffffffcu
#define BAR_MEM_TYPE_MASK   0x6u
#define BAR_MEM_TYPE_32     0x0u
#define BAR_MEM_TYPE_64     0x4u
#define BAR_MEM_PREFETCH    0x8u
#define BAR_MEM_ADDR_MASK   0xfffffff0u

#define ADDR_32BIT_END      0x100000000ull

/* What the BARs of one function came to; decides its COMMAND value. */
struct bar_census {
	unsigned mem, io, bad, unassigned;
};

static int cfg_in_range(const struct pcie_ecam *e, uint8_t bus, uint8_t dev,
			uint8_t fn, uint16_t off)
{
	return bus < e->nbuses && dev < PCI_DEVS_PER_BUS && fn < PCI_FNS_PER_DEV &&
	       off < PCI_CFG_SPACE_SIZE && (off & 3u) == 0;
}

static uintptr_t cfg_addr(const struct pcie_ecam *e, uint8_t bus, uint8_t dev,
			  uint8_t fn, uint16_t off)
{
	return e->base + ((uintptr_t)bus << ECAM_BUS_SHIFT |
			  (uintptr_t)dev << ECAM_DEV_SHIFT |
			  (uintptr_t)fn << ECAM_FN_SHIFT | off);
}

uint32_t pcie_cfg_read32(const struct pcie_ecam *e, uint8_t bus, uint8_t dev,
			 uint8_t fn, uint16_t off)
{
	if (!cfg_in_range(e, bus, dev, fn, off))
		return 0xffffffffu;
	return mmio_read32(cfg_addr(e, bus, dev, fn, off));
}

void pcie_cfg_write32(const struct pcie_ecam *e, uint8_t bus, uint8_t dev,
		      uint8_t fn, uint16_t off, uint32_t v)
{
	if (!cfg_in_range(e, bus, dev, fn, off))
		return;
	mmio_write32(cfg_addr(e, bus, dev, fn, off), v);
}

static uint32_t fn_read(const struct pcie_ecam *e, const struct pci_fn *f, uint16_t off)
{
	return pcie_cfg_read32(e, f->bus, f->dev, f->fn, off);
}

static void fn_write(const struct pcie_ecam *e, const struct pci_fn *f, uint16_t off,
		     uint32_t v)
{
	pcie_cfg_write32(e, f->bus, f->dev, f->fn, off, v);
}

/* The status half of the dword holds RW1C error bits (PCI LB 3.0 6.2.3):
 * write zeros there so a COMMAND update never clears them. */
static void fn_write_command(const struct pcie_ecam *e, const struct pci_fn *f,
			     uint32_t command)
{
	fn_write(e, f, PCI_CFG_COMMAND, command & 0xffffu);
}

static int vendor_absent(uint32_t id)
{
	uint16_t vendor = (uint16_t)id;

	/* 0xffff: master abort on an empty slot; 0x0000 is never assigned. */
	return vendor == 0xffffu || vendor == 0x0000u;
}

static int is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* PCI LB 3.0 6.2.5.1: write all-ones, read back the size mask, restore. */
static uint32_t bar_size_mask(const struct pcie_ecam *e, const struct pci_fn *f,
			      uint16_t off, uint32_t *orig)
{
	uint32_t mask;

	*orig = fn_read(e, f, off);
	fn_write(e, f, off, 0xffffffffu);
	mask = fn_read(e, f, off);
	fn_write(e, f, off, *orig);
	return mask;
}

/* Sizes BAR slot i of f (decode already off) and records it.  Returns the
 * number of slots it occupies (2 for a 64-bit memory BAR). */
static unsigned bar_probe(struct pcie_ecam *e, struct pci_fn *f, unsigned i,
			  unsigned nbars, struct bar_census *c)
{
	uint16_t off = (uint16_t)(PCI_CFG_BAR0 + 4u * i);
	struct pci_bar *bar = &f->bar[i];
	uint32_t lo, lo_mask, hi, hi_mask, type;
	uint64_t size;

	lo_mask = bar_size_mask(e, f, off, &lo);
	if (lo_mask == 0)
		return 1;  /* unimplemented: hardwired to zero */

	if (lo_mask & BAR_SPACE_IO) {
		uint32_t mask = lo_mask & BAR_IO_ADDR_MASK;

		/* A 16-bit I/O decoder reads zero in [31:16] (PCI LB 3.0 6.2.5.1) */
		if ((mask >> 16) == 0)
			mask |= 0xffff0000u;
		size = (uint32_t)(~mask + 1u);
		if (!is_pow2(size)) {
			e->stats.bad_bar++;
			c->bad++;
			return 1;
		}
		bar->addr = lo & BAR_IO_ADDR_MASK;
		bar->size = size;
		bar->io = 1;
		bar->present = 1;
		c->io++;
		return 1;
	}

	type = lo_mask & BAR_MEM_TYPE_MASK;
	if (type == BAR_MEM_TYPE_32) {
		size = (uint32_t)(~(lo_mask & BAR_MEM_ADDR_MASK) + 1u);
	} else if (type == BAR_MEM_TYPE_64 && i + 1 < nbars) {
		hi_mask = bar_size_mask(e, f, (uint16_t)(off + 4u), &hi);
		size = ~((uint64_t)hi_mask << 32 | (lo_mask & BAR_MEM_ADDR_MASK)) + 1u;
		bar->is64 = 1;
	} else {
		/* reserved type, or a 64-bit BAR in the last slot */
		e->stats.bad_bar++;
		c->bad++;
		return 1;
	}
	if (!is_pow2(size)) {
		bar->is64 = 0;
		e->stats.bad_bar++;
		c->bad++;
		return type == BAR_MEM_TYPE_64 ? 2u : 1u;
	}
	bar->size = size;
	bar->prefetch = (lo_mask & BAR_MEM_PREFETCH) != 0;
	bar->present = 1;
	c->mem++;
	return bar->is64 ? 2u : 1u;
}

/* Naturally aligned bump allocation from w (base + size checked not to
 * wrap by the caller); a 32-bit BAR must also end at or below 4 GiB. */
static int window_alloc(struct pci_window *w, uint64_t size, int below_4g,
			uint64_t *addr)
{
	uint64_t end = w->base + w->size;
	uint64_t a;

	if (w->next > UINT64_MAX - (size - 1))
		return -HAL_ENOSPC;
	a = (w->next + (size - 1)) & ~(size - 1);
	if (a < w->base || a > end || size > end - a)
		return -HAL_ENOSPC;
	if (below_4g && (a >= ADDR_32BIT_END || size > ADDR_32BIT_END - a))
		return -HAL_ENOSPC;
	w->next = a + size;
	*addr = a;
	return 0;
}

static void bar_assign(struct pcie_ecam *e, struct pci_fn *f, unsigned i,
		       struct bar_census *c)
{
	uint16_t off = (uint16_t)(PCI_CFG_BAR0 + 4u * i);
	struct pci_bar *bar = &f->bar[i];
	uint64_t addr;
	uint32_t lo;

	if (window_alloc(&e->mmio, bar->size, !bar->is64, &addr) != 0) {
		e->stats.no_space++;
		c->unassigned++;
		return;
	}
	fn_write(e, f, off, (uint32_t)addr);
	if (bar->is64)
		fn_write(e, f, (uint16_t)(off + 4u), (uint32_t)(addr >> 32));

	lo = fn_read(e, f, off);
	if ((lo & BAR_MEM_ADDR_MASK) != (uint32_t)addr ||
	    (bar->is64 && fn_read(e, f, (uint16_t)(off + 4u)) != (uint32_t)(addr >> 32))) {
		e->stats.bad_bar++;
		c->bad++;
		return;
	}
	bar->addr = addr;
	bar->assigned = 1;
}

static void fn_setup(struct pcie_ecam *e, struct pci_fn *f)
{
	struct bar_census c = { 0, 0, 0, 0 };
	unsigned layout = f->header_type & PCI_HEADER_LAYOUT;
	unsigned nbars, i;
	uint32_t command;

	if (layout == PCI_HEADER_ENDPOINT)
		nbars = PCI_BARS_ENDPOINT;
	else if (layout == PCI_HEADER_BRIDGE)
		nbars = PCI_BARS_BRIDGE;
	else
		return;

	/* PCI LB 3.0 6.2.5.1: decode off while BARs are sized and moved */
	command = fn_read(e, f, PCI_CFG_COMMAND) & 0xffffu;
	fn_write_command(e, f, command & ~(PCI_COMMAND_IO | PCI_COMMAND_MEMORY));

	for (i = 0; i < nbars;)
		i += bar_probe(e, f, i, nbars, &c);
	for (i = 0; i < nbars; i++) {
		if (f->bar[i].present && !f->bar[i].io)
			bar_assign(e, f, i, &c);
	}

	if (layout == PCI_HEADER_ENDPOINT && c.mem > 0 && c.bad == 0 && c.unassigned == 0) {
		command = (command & ~PCI_COMMAND_IO) | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
		f->enabled = 1;
	} else if (c.mem > 0 || c.io > 0 || c.bad > 0) {
		/* BARs moved, unplaced or undecodable: nothing may decode */
		command &= ~(PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	}
	fn_write_command(e, f, command);
}

static void fn_record(struct pcie_ecam *e, uint8_t bus, uint8_t dev, uint8_t fn,
		      uint32_t id, uint32_t header)
{
	struct pci_fn *f;
	uint32_t class;

	if (e->n_fns >= PCI_MAX_FNS) {
		e->stats.too_many_fns++;
		return;
	}
	f = &e->fns[e->n_fns++];
	*f = (struct pci_fn){ .bus = bus, .dev = dev, .fn = fn };
	f->vendor = (uint16_t)id;
	f->device = (uint16_t)(id >> 16);
	class = fn_read(e, f, PCI_CFG_CLASS);
	f->class_code = (uint8_t)(class >> 24);
	f->subclass = (uint8_t)(class >> 16);
	f->prog_if = (uint8_t)(class >> 8);
	f->header_type = (uint8_t)(header >> 16);
	fn_setup(e, f);
}

int pcie_ecam_enumerate(struct pcie_ecam *e)
{
	uintptr_t region;
	uint8_t dev, fn;

	if (e == NULL || e->base == 0 || e->nbuses == 0 || e->nbuses > ECAM_MAX_BUSES)
		return -HAL_EINVAL;
	region = (uintptr_t)e->nbuses << ECAM_BUS_SHIFT;
	if (region - 1 > UINTPTR_MAX - e->base)
		return -HAL_EINVAL;
	if (e->mmio.size > UINT64_MAX - e->mmio.base)
		return -HAL_EINVAL;

	e->mmio.next = e->mmio.base;
	e->n_fns = 0;
	e->stats.no_space = 0;
	e->stats.too_many_fns = 0;
	e->stats.bad_bar = 0;

	/* Bus 0 only: see pcie_ecam.h */
	for (dev = 0; dev < PCI_DEVS_PER_BUS; dev++) {
		uint32_t id = pcie_cfg_read32(e, 0, dev, 0, PCI_CFG_ID);
		uint32_t header;
		uint8_t nfns;

		if (vendor_absent(id))
			continue;
		header = pcie_cfg_read32(e, 0, dev, 0, PCI_CFG_HEADER);
		/* PCI LB 3.0 6.2.1: functions 1-7 exist only if function 0
		 * says so; single-function devices may alias them. */
		nfns = ((header >> 16) & PCI_HEADER_MULTIFN) ? PCI_FNS_PER_DEV : 1;
		fn_record(e, 0, dev, 0, id, header);
		for (fn = 1; fn < nfns; fn++) {
			id = pcie_cfg_read32(e, 0, dev, fn, PCI_CFG_ID);
			if (vendor_absent(id))
				continue;
			fn_record(e, 0, dev, fn, id,
				  pcie_cfg_read32(e, 0, dev, fn, PCI_CFG_HEADER));
		}
	}
	return (int)e->n_fns;
}

uint16_t pcie_ecam_find_cap(const struct pcie_ecam *e, const struct pci_fn *f, uint8_t id)
{
	uint32_t ptr, hops;

	if (e == NULL || f == NULL || !(fn_read(e, f, PCI_CFG_COMMAND) & PCI_STATUS_CAP_LIST))
		return 0;
	ptr = fn_read(e, f, PCI_CFG_CAP_PTR) & 0xfcu;
	/* 48 = (256 - 64) / 4 capabilities at most: a longer walk is a loop */
	for (hops = 0; ptr >= 0x40u && hops < 48u; hops++) {
		uint32_t hdr = fn_read(e, f, (uint16_t)ptr);

		if ((hdr & 0xffu) == id)
			return (uint16_t)ptr;
		ptr = (hdr >> 8) & 0xfcu;
	}
	return 0;
}

const struct pci_fn *pcie_ecam_find(const struct pcie_ecam *e, uint16_t vendor,
				    uint16_t device, unsigned index)
{
	unsigned i;

	if (e == NULL)
		return NULL;
	for (i = 0; i < e->n_fns && i < PCI_MAX_FNS; i++) {
		const struct pci_fn *f = &e->fns[i];

		if ((vendor != PCI_ANY_ID && f->vendor != vendor) ||
		    (device != PCI_ANY_ID && f->device != device))
			continue;
		if (index-- == 0)
			return f;
	}
	return NULL;
}
