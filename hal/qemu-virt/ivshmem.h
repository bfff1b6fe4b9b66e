/* ivshmem (QEMU docs/specs/ivshmem-spec.rst): PCI 1af4:1110 whose BAR2 is
 * the shared memory.  The first such function on the bus is the host
 * interface BAR, a second one (qemu-board/nic.sh --hostmem) the
 * host-memory aperture.
 *
 * The host BAR may be an ivshmem-doorbell (qemu-board/nic.sh, the default):
 * the same IDs, plus BAR0 registers (IVPosition = this peer's ID, Doorbell
 * = interrupt peer ID on vector v: write ID << 16 | v) and an MSI-X
 * capability with its table in BAR1.  Its memory and the peers' eventfds
 * come from qemu-board's mnic-ivshmem-server.  ivshmem_doorbell_attach()
 * points MSI-X vector 0 at a GICv2m SPI, so a host's ring becomes a GIC
 * interrupt that wakes the loop's WFI (the board dispatches it to
 * ivshmem_doorbell_irq()), and gives the firmware a struct hal_doorbell:
 * rang() reports that interrupt, raise() writes Doorbell for every host
 * in hal_doorbell.hosts[].  An ivshmem-plain (no MSI-X) has none. */
#ifndef IVSHMEM_H
#define IVSHMEM_H

#include <stdint.h>

#include "hal/doorbell.h"
#include "hal/hostif.h"
#include "pcie_ecam.h"

#define IVSHMEM_VENDOR       0x1af4u
#define IVSHMEM_PLAIN_DEVICE 0x1110u
#define IVSHMEM_SHM_BAR      2
#define IVSHMEM_MIN_SIZE     4096u
#define IVSHMEM_SELFTEST_LEN 256u
#define IVSHMEM_REG_BAR      0
#define IVSHMEM_REG_SIZE     256u
#define IVSHMEM_IVPOSITION   0x08       /* read-only: this peer's ID */
#define IVSHMEM_DOORBELL     0x0c       /* write-only: peer << 16 | vector */
#define IVSHMEM_MAX_ID       0xffffu
#define IVSHMEM_DB_MAX_VECTORS 64u

/* MSI-X capability and table (PCI LB 3.0 6.8.2) */
#define MSIX_CTRL_ENABLE     (1u << 31)  /* Message Control bit 15, in the cap dword */
#define MSIX_CTRL_FN_MASK    (1u << 30)  /* bit 14 */
#define MSIX_CTRL_SIZE(dw)   ((((dw) >> 16) & 0x7ffu) + 1u)
#define MSIX_ENTRY_SIZE      16u
#define MSIX_ENTRY_ADDR_LO   0x0
#define MSIX_ENTRY_ADDR_HI   0x4
#define MSIX_ENTRY_DATA      0x8
#define MSIX_ENTRY_CTRL      0xc         /* bit 0: masked */

struct ivshmem_doorbell {
	struct hal_doorbell db;    /* hal_platform.doorbell points here */
	uintptr_t regs;            /* BAR0 */
	volatile uint32_t pending; /* MSI seen, not yet reported by rang() */
	uint32_t irqs;             /* MSIs taken */
};

/* Makes fn's host doorbell channel: checks it is an ivshmem with BAR0 and
 * an MSI-X table inside an assigned BAR, programs MSI-X entry 0 with the
 * message (msi_addr, msi_data) and unmasks it (entries 1.. stay masked),
 * enables MSI-X, and reads IVPosition.  n_vectors: the vectors hosts are
 * interrupted on (1..IVSHMEM_DB_MAX_VECTORS).
 *   -HAL_EINVAL  NULL, or n_vectors out of range
 *   -HAL_ENODEV  not 1af4:1110, or no MSI-X capability (ivshmem-plain)
 *   -HAL_ENXIO   BAR0 or the table's BAR not assigned, the table outside
 *                it, or IVPosition above IVSHMEM_MAX_ID */
int ivshmem_doorbell_attach(const struct pcie_ecam *e, const struct pci_fn *fn,
			    uint64_t msi_addr, uint32_t msi_data, unsigned n_vectors,
			    struct ivshmem_doorbell *out);

/* The board saw this channel's MSI (its SPI, edge): a host rang. */
void ivshmem_doorbell_irq(struct ivshmem_doorbell *d);

/* Fills *out from an enumerated function (pcie_ecam_enumerate()).
 *   -HAL_EINVAL  NULL argument
 *   -HAL_ENODEV  not 1af4:1110, or BAR2 absent / not memory
 *   -HAL_ENXIO   BAR2 not assigned (window full, see stats.no_space) or
 *                the function was not enabled
 *   -HAL_ENOSPC  BAR2 smaller than IVSHMEM_MIN_SIZE
 *   -HAL_ERANGE  BAR2 not addressable by this CPU (above 4 GiB on A32) */
int ivshmem_attach(const struct pci_fn *fn, struct hal_hostif *out);

/* The same checks for the second ivshmem-plain function: the host-memory
 * aperture (an x86 host VM's RAM file; docs/host-interface.md "Host memory
 * and translation"), whose BAR2 offsets are host-physical addresses.
 * Same errors as ivshmem_attach(). */
int ivshmem_attach_hostmem(const struct pci_fn *fn, struct hal_hostmem *out);

/* 0 if [bus_addr, bus_addr + size) is non-empty and every byte of it has a
 * CPU address <= cpu_addr_max (identity mapping, MMU off), and size fits a
 * size_t; -HAL_ERANGE otherwise.  ivshmem_attach() passes UINTPTR_MAX;
 * exposed so hosts can test the 32-bit rule. */
int ivshmem_bar_cpu_check(uint64_t bus_addr, uint64_t size, uint64_t cpu_addr_max);

/* Writes patterns over the last IVSHMEM_SELFTEST_LEN bytes of the BAR,
 * reads them back and restores the original bytes (the memory is shared
 * with the host, which must not be using that range meanwhile).
 * 0, -HAL_EIO on a mismatch, -HAL_EINVAL if the BAR is missing/too small. */
int ivshmem_selftest(struct hal_hostif *h);

#endif
