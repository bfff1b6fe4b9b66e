/* PCI Express configuration through ECAM (PCIe Base Spec 4.0 7.2.2), bus
 * enumeration and memory BAR assignment for a firmware that owns the host
 * bridge (QEMU virt "gpex": no firmware has configured anything).
 *
 * Scope: only bus 0 is scanned.  Reaching other buses needs PCI-PCI bridges
 * programmed with bus numbers and windows, which QEMU virt does not need
 * (every -device lands on bus 0 unless a root port is added).  Bridges found
 * on bus 0 are recorded (header_type & 0x7f == 1) with their BARs, but are
 * never given memory decode or bus mastering and nothing behind them is
 * enumerated.  CardBus and unknown header layouts are recorded and not
 * touched.  I/O BARs are recorded, never assigned; expansion ROM BARs are
 * ignored.  Memory BARs are placed in discovery order by a bump allocator,
 * each naturally aligned; nothing is ever freed.
 */
#ifndef PCIE_ECAM_H
#define PCIE_ECAM_H

#include <stdint.h>

#define PCI_MAX_FNS 32

/* Type 0/1 configuration header (PCI Local Bus Spec 3.0 6.1) */
#define PCI_CFG_ID            0x00   /* [15:0] vendor, [31:16] device */
#define PCI_CFG_COMMAND       0x04   /* [15:0] command, [31:16] status */
#define PCI_CFG_CLASS         0x08   /* [7:0] rev, prog-if, subclass, [31:24] class */
#define PCI_CFG_HEADER        0x0c   /* [23:16] header type */
#define PCI_CFG_BAR0          0x10
#define PCI_COMMAND_IO        (1u << 0)
#define PCI_COMMAND_MEMORY    (1u << 1)
#define PCI_COMMAND_MASTER    (1u << 2)
#define PCI_HEADER_MULTIFN    0x80u
#define PCI_HEADER_LAYOUT     0x7fu
#define PCI_HEADER_ENDPOINT   0x00u
#define PCI_HEADER_BRIDGE     0x01u
#define PCI_ANY_ID            0xffffu  /* pcie_ecam_find wildcard; no real vendor */

struct pci_bar {
	uint64_t addr;      /* memory: bus address (== CPU address) once assigned,
	                       else 0; I/O: as found */
	uint64_t size;      /* bytes, a power of two */
	uint8_t is64;       /* memory BAR spanning this slot and the next */
	uint8_t prefetch;
	uint8_t io;         /* I/O BAR: addr is as found, never assigned */
	uint8_t present;    /* implemented and sized correctly */
	uint8_t assigned;   /* memory BAR placed in the window at addr */
};

struct pci_fn {
	uint8_t bus, dev, fn;
	uint16_t vendor, device;
	uint8_t class_code, subclass, prog_if;
	uint8_t header_type;        /* raw, including PCI_HEADER_MULTIFN */
	uint8_t enabled;            /* memory decode + bus master were turned on */
	struct pci_bar bar[6];      /* upper slot of a 64-bit BAR is not present */
};

/* [base, base + size): the board's PCI memory window.  next is the
 * allocation cursor, reset to base by pcie_ecam_enumerate(). */
struct pci_window {
	uint64_t base, size, next;
};

struct pcie_ecam {
	uintptr_t base;             /* ECAM region, bus 0 */
	unsigned nbuses;            /* 1..256, buses the region covers */
	struct pci_window mmio;     /* CPU address == bus address */
	struct pci_fn fns[PCI_MAX_FNS];
	unsigned n_fns;
	struct {
		uint32_t no_space;      /* memory BARs that did not fit the window */
		uint32_t too_many_fns;  /* functions beyond PCI_MAX_FNS, left untouched */
		uint32_t bad_bar;       /* BARs with an impossible size mask/type/readback */
	} stats;
};

/* Caller sets base, nbuses and mmio.base/size; everything else is (re)set.
 * Each function gets memory decode and bus mastering (PCI_COMMAND_MEMORY |
 * PCI_COMMAND_MASTER, I/O decode off) only when it is an endpoint with at
 * least one memory BAR, every memory BAR was assigned and none was bad.
 * A function with a BAR that was bad or did not fit is left with I/O,
 * memory decode and bus mastering off.  A function with no BARs keeps its
 * COMMAND register as found.  Returns the number of functions recorded
 * (see stats.too_many_fns for any beyond PCI_MAX_FNS) or -HAL_EINVAL. */
int pcie_ecam_enumerate(struct pcie_ecam *e);

/* index-th recorded function matching vendor/device (PCI_ANY_ID matches
 * any), in bus/dev/fn order; NULL if there is none. */
const struct pci_fn *pcie_ecam_find(const struct pcie_ecam *e, uint16_t vendor,
				    uint16_t device, unsigned index);

/* Capability list (PCI LB 3.0 6.7): Status bit 4 says there is one, the
 * pointer at 0x34 and each capability's next byte link them.  Returns the
 * configuration offset of f's first capability with this ID, or 0 (none,
 * no list, or a list that loops or points outside 0x40..0xfc: at most 48
 * hops, every pointer dword-aligned). */
#define PCI_CFG_CAP_PTR       0x34
#define PCI_STATUS_CAP_LIST   (1u << 20)   /* in the COMMAND/STATUS dword */
#define PCI_CAP_ID_MSIX       0x11u
uint16_t pcie_ecam_find_cap(const struct pcie_ecam *e, const struct pci_fn *f, uint8_t id);

/* 32-bit configuration access; off must be 4-byte aligned and < 4096.
 * Out-of-range coordinates read as all-ones (like an absent function) and
 * are not written. */
uint32_t pcie_cfg_read32(const struct pcie_ecam *e, uint8_t bus, uint8_t dev,
			 uint8_t fn, uint16_t off);
void pcie_cfg_write32(const struct pcie_ecam *e, uint8_t bus, uint8_t dev,
		      uint8_t fn, uint16_t off, uint32_t v);

#endif
