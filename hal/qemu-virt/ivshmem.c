#include "ivshmem.h"

#include <stddef.h>

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
