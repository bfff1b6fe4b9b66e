/* ivshmem-plain (QEMU docs/specs/ivshmem-spec.rst): PCI 1af4:1110 whose
 * BAR2 is the shared memory backend.  The first such function on the bus
 * is the host interface BAR, a second one (qemu-board/nic.sh --hostmem)
 * the host-memory aperture.
 * BAR0 (registers) is unused: ivshmem-plain has no doorbell. */
#ifndef IVSHMEM_H
#define IVSHMEM_H

#include <stdint.h>

#include "hal/hostif.h"
#include "pcie_ecam.h"

#define IVSHMEM_VENDOR       0x1af4u
#define IVSHMEM_PLAIN_DEVICE 0x1110u
#define IVSHMEM_SHM_BAR      2
#define IVSHMEM_MIN_SIZE     4096u
#define IVSHMEM_SELFTEST_LEN 256u

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
