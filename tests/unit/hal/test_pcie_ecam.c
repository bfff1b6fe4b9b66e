#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fake_ecam.h"
#include "hal/errno.h"
#include "ivshmem.h"
#include "pcie_ecam.h"

#define WIN_BASE 0x10000000ull   /* QEMU virt, highmem=off */
#define WIN_SIZE 0x2eff0000ull

static struct pcie_ecam ecam;

static void ecam_prepare(uint64_t win_base, uint64_t win_size)
{
	memset(&ecam, 0xa5, sizeof(ecam));    /* enumerate must not trust it */
	ecam.base = FAKE_ECAM_BASE;
	ecam.nbuses = FAKE_ECAM_NBUSES;
	ecam.mmio.base = win_base;
	ecam.mmio.size = win_size;
}

static int setup_default(void **state)
{
	(void)state;
	fake_ecam_default();
	ecam_prepare(WIN_BASE, WIN_SIZE);
	return 0;
}

static const struct pci_fn *fn_at(uint8_t dev, uint8_t fn)
{
	unsigned i;

	for (i = 0; i < ecam.n_fns; i++) {
		if (ecam.fns[i].bus == 0 && ecam.fns[i].dev == dev && ecam.fns[i].fn == fn)
			return &ecam.fns[i];
	}
	return NULL;
}

static uint16_t fake_command(uint8_t dev, uint8_t fn)
{
	return fake_ecam_get(0, dev, fn)->command;
}

/* Properties every enumeration must have, whatever the window. */
static void check_invariants(void)
{
	uint64_t win_end = ecam.mmio.base + ecam.mmio.size;
	unsigned i, j, k, l;

	assert_int_equal(fake_ecam_stats.bar_write_while_decoding, 0);
	assert_int_equal(fake_ecam_stats.misaligned, 0);
	assert_int_equal(fake_ecam_stats.narrow, 0);
	assert_int_equal(fake_ecam_stats.stray, 0);

	for (i = 0; i < ecam.n_fns; i++) {
		const struct pci_fn *f = &ecam.fns[i];
		const struct fake_fn *ff = fake_ecam_get(f->bus, f->dev, f->fn);
		int has_bars = 0;

		assert_non_null(ff);
		for (j = 0; j < 6; j++) {
			const struct pci_bar *b = &f->bar[j];

			if (b->present || ff->bar_rw[j])
				has_bars = 1;
			if (!b->assigned)
				continue;
			assert_true(b->present);
			assert_false(b->io);
			assert_true(b->size != 0 && (b->size & (b->size - 1)) == 0);
			assert_int_equal(b->addr & (b->size - 1), 0);
			assert_true(b->addr >= ecam.mmio.base);
			assert_true(b->addr <= win_end && b->size <= win_end - b->addr);
			if (!b->is64)
				assert_true(b->addr + b->size <= 0x100000000ull);
			/* the device decodes what the table says */
			assert_int_equal(ff->bar[j], (uint32_t)b->addr);
			if (b->is64) {
				assert_true(j < 5);
				assert_int_equal(ff->bar[j + 1], (uint32_t)(b->addr >> 32));
				assert_false(f->bar[j + 1].present);
			}
			for (k = 0; k < ecam.n_fns; k++) {
				for (l = 0; l < 6; l++) {
					const struct pci_bar *o = &ecam.fns[k].bar[l];

					if ((k == i && l == j) || !o->assigned)
						continue;
					assert_true(o->addr >= b->addr + b->size ||
						    b->addr >= o->addr + o->size);
				}
			}
		}
		if (f->enabled) {
			assert_int_equal(ff->command & 0x7, 0x6);
		} else if (has_bars) {
			assert_int_equal(ff->command & 0x7, 0);
		}
	}
}

static void test_enumerate_finds_modelled_functions(void **state)
{
	static const struct {
		uint8_t dev, fn;
		uint16_t vendor, device;
		uint8_t class_code, subclass, prog_if;
	} want[FAKE_ECAM_DEFAULT_FNS] = {
		{ 0, 0, 0x1b36, 0x0008, 0x06, 0x00, 0x00 },
		{ 1, 0, 0x1af4, 0x1110, 0x05, 0x00, 0x00 },
		{ 2, 0, 0x1234, 0x1000, 0x02, 0x00, 0x00 },
		{ 2, 1, 0x1234, 0x1001, 0x02, 0x00, 0x00 },
		{ 2, 3, 0x1234, 0x1003, 0x02, 0x80, 0x00 },
		{ 3, 0, 0x1234, 0x2000, 0x07, 0x00, 0x00 },
		{ 4, 0, 0x1234, 0x3000, 0xff, 0x00, 0x00 },
		{ 5, 0, 0x1234, 0x4000, 0x01, 0x06, 0x01 },
		{ 31, 0, 0x1234, 0x5000, 0x08, 0x80, 0x00 },
	};
	unsigned i;

	(void)state;
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);
	assert_int_equal(ecam.n_fns, FAKE_ECAM_DEFAULT_FNS);
	for (i = 0; i < FAKE_ECAM_DEFAULT_FNS; i++) {
		const struct pci_fn *f = &ecam.fns[i];

		assert_int_equal(f->bus, 0);
		assert_int_equal(f->dev, want[i].dev);
		assert_int_equal(f->fn, want[i].fn);
		assert_int_equal(f->vendor, want[i].vendor);
		assert_int_equal(f->device, want[i].device);
		assert_int_equal(f->class_code, want[i].class_code);
		assert_int_equal(f->subclass, want[i].subclass);
		assert_int_equal(f->prog_if, want[i].prog_if);
	}
	assert_int_equal(fn_at(2, 0)->header_type, 0x80);
	assert_int_equal(fn_at(5, 0)->header_type, 0x00);
	assert_int_equal(ecam.stats.too_many_fns, 0);
	assert_int_equal(ecam.stats.no_space, 0);
	check_invariants();
}

static void test_bar_sizes_and_types(void **state)
{
	const struct pci_fn *f;

	(void)state;
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);

	f = fn_at(1, 0);
	assert_true(f->bar[0].present && f->bar[0].assigned);
	assert_int_equal(f->bar[0].size, 256);
	assert_false(f->bar[0].is64 || f->bar[0].prefetch || f->bar[0].io);
	assert_false(f->bar[1].present);
	assert_true(f->bar[2].present && f->bar[2].assigned);
	assert_int_equal(f->bar[2].size, 16u << 20);
	assert_true(f->bar[2].is64 && f->bar[2].prefetch);
	assert_false(f->bar[2].io);
	assert_false(f->bar[3].present || f->bar[4].present || f->bar[5].present);

	f = fn_at(2, 1);
	assert_int_equal(f->bar[0].size, 64u << 10);
	assert_true(f->bar[0].is64);
	assert_false(f->bar[0].prefetch);

	f = fn_at(2, 3);
	assert_false(f->bar[0].present);
	assert_int_equal(f->bar[1].size, 1u << 20);
	assert_true(f->bar[1].prefetch);
	assert_false(f->bar[1].is64);

	f = fn_at(3, 0);
	assert_true(f->bar[0].present && f->bar[0].io);
	assert_int_equal(f->bar[0].size, 32);
	assert_false(f->bar[0].assigned);
	assert_true(f->bar[1].assigned);
	assert_int_equal(f->bar[1].size, 4096);

	f = fn_at(31, 0);
	assert_true(f->bar[5].present && f->bar[5].assigned);
	assert_int_equal(f->bar[5].size, 4096);
	check_invariants();
}

static void test_command_register_outcome(void **state)
{
	(void)state;
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);

	/* no BARs: left as found */
	assert_false(fn_at(0, 0)->enabled);
	assert_int_equal(fake_command(0, 0), 0);
	assert_true(fn_at(1, 0)->enabled);
	assert_int_equal(fake_command(1, 0), 0x6);
	/* I/O BAR unassigned: memory on, I/O decode off */
	assert_true(fn_at(3, 0)->enabled);
	assert_int_equal(fake_command(3, 0), 0x6);
	/* found with I/O|MEM|MASTER on: sized with decode off, I/O dropped */
	assert_true(fn_at(5, 0)->enabled);
	assert_int_equal(fake_command(5, 0), 0x6);
	/* STATUS RW1C bits survive COMMAND writes */
	assert_int_equal(fake_ecam_get(0, 1, 0)->status, 0x2010);
	check_invariants();
}

static void test_bogus_bar_counted_and_fn_disabled(void **state)
{
	const struct pci_fn *f;

	(void)state;
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);
	assert_int_equal(ecam.stats.bad_bar, 1);
	f = fn_at(4, 0);
	assert_false(f->bar[0].present || f->bar[0].assigned);
	assert_true(f->bar[1].present);
	assert_false(f->enabled);
	assert_int_equal(fake_command(4, 0), 0);
	check_invariants();
}

static void test_window_exhaustion(void **state)
{
	struct hal_hostif h;

	(void)state;
	ecam_prepare(WIN_BASE, 1u << 20);
	fake_ecam_get(0, 1, 0)->bar[2] = 0x20000000u;   /* stale, from an earlier stage */
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);
	/* ivshmem BAR2 (16 MiB) and 00:02.3 BAR1 (1 MiB after smaller ones) */
	assert_int_equal(ecam.stats.no_space, 2);
	assert_true(fn_at(1, 0)->bar[0].assigned);
	assert_false(fn_at(1, 0)->bar[2].assigned);
	assert_true(fn_at(1, 0)->bar[2].present);
	assert_int_equal(fn_at(1, 0)->bar[2].addr, 0);
	assert_false(fn_at(1, 0)->enabled);
	assert_int_equal(fake_command(1, 0), 0);
	assert_false(fn_at(2, 3)->enabled);
	assert_int_equal(fake_command(2, 3), 0);
	assert_true(fn_at(2, 0)->enabled);
	assert_true(fn_at(2, 1)->enabled);
	assert_true(fn_at(31, 0)->enabled);
	assert_int_equal(ivshmem_attach(fn_at(1, 0), &h), -HAL_ENXIO);
	check_invariants();
}

static void test_window_empty(void **state)
{
	unsigned i;

	(void)state;
	ecam_prepare(WIN_BASE, 0);
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);
	assert_int_equal(ecam.stats.no_space, 9);
	for (i = 0; i < ecam.n_fns; i++)
		assert_false(ecam.fns[i].enabled);
	check_invariants();
}

static void test_window_at_top_of_address_space(void **state)
{
	const struct pci_fn *f;

	(void)state;
	/* ends at 2^64 - 1: alignment of the 16 MiB BAR would pass the end */
	ecam_prepare(0xfffffffffe000100ull, 0x1fffeffull);
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);
	f = fn_at(2, 1);
	assert_true(f->bar[0].assigned);
	assert_int_equal(f->bar[0].addr, 0xfffffffffe010000ull);
	assert_false(fn_at(1, 0)->bar[2].assigned);
	/* 32-bit BARs cannot live up there: all 7, plus ivshmem BAR2 */
	assert_int_equal(ecam.stats.no_space, 8);
	check_invariants();

	/* base + size wraps past 2^64 */
	fake_ecam_default();
	ecam_prepare(0xffffffffff000000ull, 0x1000000ull);
	assert_int_equal(pcie_ecam_enumerate(&ecam), -HAL_EINVAL);
	assert_int_equal(fake_ecam_stats.cfg_reads, 0);
}

static void test_window_above_4g(void **state)
{
	const struct pci_fn *f;

	(void)state;
	ecam_prepare(0x100000000ull, 0x100000000ull);
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);
	f = fn_at(1, 0);
	assert_true(f->bar[2].assigned);
	assert_true(f->bar[2].addr >= 0x100000000ull);
	assert_int_equal(fake_ecam_get(0, 1, 0)->bar[3], (uint32_t)(f->bar[2].addr >> 32));
	assert_false(f->bar[0].assigned);   /* 32-bit BAR */
	assert_int_equal(ecam.stats.no_space, 7);
	check_invariants();
}

static void test_invalid_arguments(void **state)
{
	(void)state;
	assert_int_equal(pcie_ecam_enumerate(NULL), -HAL_EINVAL);
	ecam.nbuses = 0;
	assert_int_equal(pcie_ecam_enumerate(&ecam), -HAL_EINVAL);
	ecam.nbuses = 257;
	assert_int_equal(pcie_ecam_enumerate(&ecam), -HAL_EINVAL);
	ecam.nbuses = 1;
	ecam.base = 0;
	assert_int_equal(pcie_ecam_enumerate(&ecam), -HAL_EINVAL);
	ecam.base = UINTPTR_MAX & ~(uintptr_t)0xfffff;
	ecam.nbuses = 2;
	assert_int_equal(pcie_ecam_enumerate(&ecam), -HAL_EINVAL);
	assert_int_equal(fake_ecam_stats.cfg_reads + fake_ecam_stats.stray, 0);
}

static void test_too_many_functions(void **state)
{
	unsigned dev, fn;

	(void)state;
	for (dev = 8; dev < 12; dev++) {
		for (fn = 0; fn < 8; fn++) {
			struct fake_fn *f = fake_ecam_add(0, (uint8_t)dev, (uint8_t)fn, 0x1234,
							  (uint16_t)(0x6000 + dev * 8 + fn),
							  0x02000000, 0x80);
			fake_bar_mem32(f, 0, 4096, 0);
		}
	}
	assert_int_equal(pcie_ecam_enumerate(&ecam), PCI_MAX_FNS);
	assert_int_equal(ecam.n_fns, PCI_MAX_FNS);
	assert_int_equal(ecam.stats.too_many_fns, FAKE_ECAM_DEFAULT_FNS + 32 - PCI_MAX_FNS);
	/* enumeration order fills up at dev 10; dev 11 and 31 are not touched */
	for (fn = 0; fn < 8; fn++) {
		const struct fake_fn *f = fake_ecam_get(0, 11, (uint8_t)fn);

		assert_int_equal(f->bar_writes, 0);
		assert_int_equal(f->command, 0);
	}
	assert_int_equal(fake_ecam_get(0, 31, 0)->bar_writes, 0);
	assert_non_null(fn_at(10, 7));
	assert_null(fn_at(11, 0));
	check_invariants();
}

static void test_bad_bar_kinds(void **state)
{
	struct fake_fn *f;

	(void)state;
	fake_ecam_reset();
	f = fake_ecam_add(0, 0, 0, 0x1234, 0x7000, 0, 0);
	fake_bar_raw(f, 5, 0xfffff000u, 0x4);         /* 64-bit in the last slot */
	f = fake_ecam_add(0, 1, 0, 0x1234, 0x7001, 0, 0);
	fake_bar_raw(f, 0, 0xfffff000u, 0x2);         /* "below 1 MiB": reserved */
	f = fake_ecam_add(0, 2, 0, 0x1234, 0x7002, 0, 0);
	fake_bar_raw(f, 0, 0xfffff000u, 0x6);         /* reserved type */
	f = fake_ecam_add(0, 3, 0, 0x1234, 0x7003, 0, 0);
	fake_bar_raw(f, 0, 0, 0x8);                   /* type bits, no address bits */
	f = fake_ecam_add(0, 4, 0, 0x1234, 0x7004, 0, 0);
	fake_bar_raw(f, 0, 0xff000000u, 0x4);         /* 64-bit, upper dword read-only */
	fake_bar_raw(f, 1, 0, 0);
	f = fake_ecam_add(0, 5, 0, 0x1234, 0x7005, 0, 0);
	fake_bar_mem32(f, 0, 4096, 0);
	f->bar_stuck1[0] = 0x00800000u;              /* address bit stuck at one */
	f = fake_ecam_add(0, 6, 0, 0x1234, 0x7006, 0, 0);
	fake_bar_io(f, 0, 32, 0);
	f->bar_rw[0] = 0xffff0fe0u;                   /* non-contiguous I/O mask */
	f = fake_ecam_add(0, 7, 0, 0x1234, 0x7007, 0, 0);
	fake_bar_mem64(f, 0, 8ull << 30, 1);          /* 8 GiB: fine, does not fit */
	f = fake_ecam_add(0, 8, 0, 0x1b36, 0x000c, 0x06040000, 0x01);  /* bridge */
	fake_bar_mem32(f, 0, 4096, 0);

	assert_int_equal(pcie_ecam_enumerate(&ecam), 9);
	assert_int_equal(ecam.stats.bad_bar, 7);
	assert_int_equal(ecam.stats.no_space, 1);
	assert_int_equal(fn_at(7, 0)->bar[0].size, 8ull << 30);
	assert_true(fn_at(7, 0)->bar[0].is64);
	assert_true(fn_at(8, 0)->bar[0].assigned);
	assert_false(fn_at(8, 0)->enabled);   /* bridges never get decode */
	for (unsigned i = 0; i < ecam.n_fns; i++)
		assert_false(ecam.fns[i].enabled);
	check_invariants();
}

static void test_find(void **state)
{
	static const uint16_t devices[] = { 0x1000, 0x1001, 0x1003, 0x2000, 0x3000,
					    0x4000, 0x5000 };
	const struct pci_fn *f;
	unsigned i;

	(void)state;
	assert_null(pcie_ecam_find(&ecam, 0x1af4, 0x1110, 0));  /* nothing yet */
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);
	f = pcie_ecam_find(&ecam, 0x1af4, 0x1110, 0);
	assert_non_null(f);
	assert_int_equal(f->dev, 1);
	assert_null(pcie_ecam_find(&ecam, 0x1af4, 0x1110, 1));
	assert_null(pcie_ecam_find(&ecam, 0x1af4, 0x1000, 0));
	for (i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
		f = pcie_ecam_find(&ecam, 0x1234, PCI_ANY_ID, i);
		assert_non_null(f);
		assert_int_equal(f->device, devices[i]);
	}
	assert_null(pcie_ecam_find(&ecam, 0x1234, PCI_ANY_ID, i));
	assert_int_equal(pcie_ecam_find(&ecam, PCI_ANY_ID, PCI_ANY_ID, 0)->device, 0x0008);
	assert_null(pcie_ecam_find(NULL, 0x1af4, 0x1110, 0));
}

static void test_cfg_access_bounds(void **state)
{
	unsigned reads;

	(void)state;
	ecam.n_fns = 0;
	assert_int_equal(pcie_cfg_read32(&ecam, 0, 1, 0, 0), 0x11101af4u);
	assert_int_equal(pcie_cfg_read32(&ecam, 0, 6, 0, 0), 0xffffffffu);
	reads = fake_ecam_stats.cfg_reads;
	assert_int_equal(pcie_cfg_read32(&ecam, FAKE_ECAM_NBUSES, 0, 0, 0), 0xffffffffu);
	assert_int_equal(pcie_cfg_read32(&ecam, 0, 32, 0, 0), 0xffffffffu);
	assert_int_equal(pcie_cfg_read32(&ecam, 0, 1, 8, 0), 0xffffffffu);
	assert_int_equal(pcie_cfg_read32(&ecam, 0, 1, 0, 0x1000), 0xffffffffu);
	assert_int_equal(pcie_cfg_read32(&ecam, 0, 1, 0, 0x2), 0xffffffffu);
	pcie_cfg_write32(&ecam, 0, 1, 0, 0x6, 0xffffffffu);
	pcie_cfg_write32(&ecam, 0, 1, 8, 0x4, 0xffffffffu);
	assert_int_equal(fake_ecam_stats.cfg_reads, reads);
	assert_int_equal(fake_ecam_stats.cfg_writes, 0);
	pcie_cfg_write32(&ecam, 0, 1, 0, 0x4, 0x2);
	assert_int_equal(fake_command(1, 0), 0x2);
	assert_int_equal(fake_ecam_stats.misaligned + fake_ecam_stats.stray, 0);
}

static void test_ivshmem_attach(void **state)
{
	struct hal_hostif h;
	const struct pci_fn *f;

	(void)state;
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);
	f = pcie_ecam_find(&ecam, IVSHMEM_VENDOR, IVSHMEM_PLAIN_DEVICE, 0);
	assert_non_null(f);
	memset(&h, 0, sizeof(h));
	assert_int_equal(ivshmem_attach(f, &h), 0);
	assert_int_equal(h.bar_bus_addr, f->bar[2].addr);
	assert_true((uintptr_t)h.bar == (uintptr_t)f->bar[2].addr);
	assert_int_equal(h.bar_size, 16u << 20);
	assert_string_equal(h.backing, "ivshmem-plain BAR2");

	assert_int_equal(ivshmem_attach(fn_at(2, 0), &h), -HAL_ENODEV);
	assert_int_equal(ivshmem_attach(fn_at(0, 0), &h), -HAL_ENODEV);
	assert_int_equal(ivshmem_attach(NULL, &h), -HAL_EINVAL);
	assert_int_equal(ivshmem_attach(f, NULL), -HAL_EINVAL);
}

/* ---- ivshmem-doorbell: MSI-X to GICv2m, Doorbell to the hosts ---------- */
#define DB_MSI_ADDR 0x08020040ull
#define DB_MSI_DATA 80u
static uint32_t db_regs[64], db_table[1024];

/* 00:03.0 1af4:1110 ivshmem-doorbell: BAR0 256 B, BAR1 4 KiB (MSI-X table
 * at table_off, BIR 1), BAR2 16 MiB; MSI-X capability at 0x48 behind a
 * vendor capability at 0x40; IVPosition 5. */
static struct fake_fn *add_doorbell_fn(uint32_t table_off)
{
	struct fake_fn *f = fake_ecam_add(0, 3, 0, 0x1af4, 0x1110, 0x05000001u, 0);

	fake_bar_mem32(f, 0, 256, 0);
	fake_bar_mem32(f, 1, 4096, 0);
	fake_bar_mem64(f, 2, 16u << 20, 1);
	f->status |= 0x10;                 /* capabilities list */
	f->cap_ptr = 0x40;
	f->ext[0] = 0x09u | 0x48u << 8;    /* vendor-specific, next 0x48 */
	f->ext[2] = 0x11u | 3u << 16;      /* MSI-X, last; table size 4 */
	f->ext[3] = table_off | 1u;        /* table: BAR1 + table_off */
	f->ext[4] = 0x800u | 1u;           /* PBA */
	return f;
}

static const struct pci_fn *enumerate_doorbell(uint32_t table_off, uint32_t ivposition)
{
	const struct pci_fn *fn;

	fake_ecam_reset();
	add_doorbell_fn(table_off);
	ecam_prepare(WIN_BASE, WIN_SIZE);
	assert_int_equal(pcie_ecam_enumerate(&ecam), 1);
	fn = fn_at(3, 0);
	assert_non_null(fn);
	memset(db_regs, 0, sizeof(db_regs));
	memset(db_table, 0xff, sizeof(db_table));   /* entries reset masked, garbage */
	db_regs[IVSHMEM_IVPOSITION / 4] = ivposition;
	fake_mmio_region((uintptr_t)fn->bar[0].addr, db_regs, 64);
	fake_mmio_region((uintptr_t)fn->bar[1].addr, db_table, 1024);
	return fn;
}

static void test_doorbell_irq_attach_programs_msix(void **state)
{
	struct ivshmem_doorbell d;
	const struct pci_fn *fn;
	uint32_t ctrl;

	(void)state;
	fn = enumerate_doorbell(0, 5);
	assert_int_equal(pcie_ecam_find_cap(&ecam, fn, PCI_CAP_ID_MSIX), 0x48);
	assert_int_equal(pcie_ecam_find_cap(&ecam, fn, 0x05), 0);   /* no MSI */
	assert_int_equal(ivshmem_doorbell_attach(&ecam, fn, DB_MSI_ADDR, DB_MSI_DATA, 4, &d), 0);
	assert_int_equal(db_table[0], (uint32_t)DB_MSI_ADDR);
	assert_int_equal(db_table[1], 0);
	assert_int_equal(db_table[2], DB_MSI_DATA);
	assert_int_equal(db_table[3], 0);                  /* entry 0 unmasked */
	assert_int_equal(db_table[7], 0xffffffffu);        /* entry 1 untouched */
	ctrl = fake_ecam_get(0, 3, 0)->ext[2];
	assert_true(ctrl & MSIX_CTRL_ENABLE);
	assert_false(ctrl & MSIX_CTRL_FN_MASK);
	assert_int_equal(ctrl & 0xffffu, 0);               /* the cap header is read-only: wrote 0 */
	assert_int_equal(d.db.self_id, 5);
	assert_int_equal(d.db.n_vectors, 4);
	assert_int_equal(d.db.every_store_rings, 0);
	for (unsigned i = 0; i < HAL_DOORBELL_MAX_HOSTS; i++)
		assert_int_equal(d.db.hosts[i], HAL_DOORBELL_NO_ID);
	assert_int_equal(fake_ecam_stats.stray, 0);
}

static void test_doorbell_irq_rang_once_per_msi(void **state)
{
	struct ivshmem_doorbell d;

	(void)state;
	assert_int_equal(ivshmem_doorbell_attach(&ecam, enumerate_doorbell(0, 1), DB_MSI_ADDR,
						 DB_MSI_DATA, 4, &d), 0);
	assert_int_equal(hal_doorbell_rang(&d.db), 0);
	ivshmem_doorbell_irq(&d);
	ivshmem_doorbell_irq(&d);            /* two MSIs before a look: one ring */
	assert_int_equal(hal_doorbell_rang(&d.db), 1);
	assert_int_equal(hal_doorbell_rang(&d.db), 0);
	assert_int_equal(d.db.stats.rings, 1);
	assert_int_equal(d.irqs, 2);
}

static void test_doorbell_irq_raise_writes_each_host(void **state)
{
	struct ivshmem_doorbell d;
	const struct pci_fn *fn;
	uintptr_t db;

	(void)state;
	fn = enumerate_doorbell(0, 5);
	db = (uintptr_t)fn->bar[0].addr + IVSHMEM_DOORBELL;
	assert_int_equal(ivshmem_doorbell_attach(&ecam, fn, DB_MSI_ADDR, DB_MSI_DATA, 4, &d), 0);
	fake_mmio_writes = 0;
	assert_int_equal(hal_doorbell_raise(&d.db, 0), 0);   /* no host yet: nothing */
	assert_int_equal(fake_mmio_writes, 0);
	d.db.hosts[1] = 7;
	d.db.hosts[2] = 5;          /* the NIC's own ID: never rung */
	d.db.hosts[3] = 0x10000;    /* not an ivshmem ID: never rung */
	d.db.hosts[6] = 65535;
	assert_int_equal(hal_doorbell_raise(&d.db, 2), 0);
	assert_int_equal(fake_mmio_writes, 2);
	assert_true(fake_mmio_log[0].addr == db);
	assert_int_equal(fake_mmio_log[0].val, 7u << 16 | 2u);
	assert_true(fake_mmio_log[1].addr == db);
	assert_int_equal(fake_mmio_log[1].val, 65535u << 16 | 2u);
	assert_int_equal(d.db.stats.raises, 2);
	assert_int_equal(hal_doorbell_raise(&d.db, 4), -HAL_EINVAL);
	assert_int_equal(d.db.stats.bad_vectors, 1);
	assert_int_equal(fake_mmio_writes, 2);
}

static void test_doorbell_irq_attach_refusals(void **state)
{
	struct ivshmem_doorbell d;
	const struct pci_fn *fn;
	struct pci_fn copy;

	(void)state;
	fn = enumerate_doorbell(0, 5);
	assert_int_equal(ivshmem_doorbell_attach(NULL, fn, 0, 0, 4, &d), -HAL_EINVAL);
	assert_int_equal(ivshmem_doorbell_attach(&ecam, fn, 0, 0, 0, &d), -HAL_EINVAL);
	assert_int_equal(ivshmem_doorbell_attach(&ecam, fn, 0, 0, IVSHMEM_DB_MAX_VECTORS + 1, &d),
			 -HAL_EINVAL);
	/* the table must lie inside its BAR: 4 KiB BAR, entry at 4088 */
	fn = enumerate_doorbell(4088, 5);
	assert_int_equal(ivshmem_doorbell_attach(&ecam, fn, 0, 0, 4, &d), -HAL_ENXIO);
	/* an IVPosition that is not a 16-bit ID */
	fn = enumerate_doorbell(0, 0x10000);
	assert_int_equal(ivshmem_doorbell_attach(&ecam, fn, 0, 0, 4, &d), -HAL_ENXIO);
	/* a table BIR naming no BAR (7) */
	fn = enumerate_doorbell(0, 5);
	fake_ecam_get(0, 3, 0)->ext[3] = 7;
	assert_int_equal(ivshmem_doorbell_attach(&ecam, fn, 0, 0, 4, &d), -HAL_ENXIO);
	/* a capability list that loops: no MSI-X found, in bounded time */
	fn = enumerate_doorbell(0, 5);
	fake_ecam_get(0, 3, 0)->ext[0] = 0x09u | 0x40u << 8;
	assert_int_equal(pcie_ecam_find_cap(&ecam, fn, PCI_CAP_ID_MSIX), 0);
	assert_int_equal(ivshmem_doorbell_attach(&ecam, fn, 0, 0, 4, &d), -HAL_ENODEV);
	/* BAR0 not assigned */
	fn = enumerate_doorbell(0, 5);
	copy = *fn;
	copy.bar[0].assigned = 0;
	assert_int_equal(ivshmem_doorbell_attach(&ecam, &copy, 0, 0, 4, &d), -HAL_ENXIO);
	/* an ivshmem-plain (the default topology's 00:01.0): no capability */
	fake_ecam_default();
	ecam_prepare(WIN_BASE, WIN_SIZE);
	assert_int_equal(pcie_ecam_enumerate(&ecam), FAKE_ECAM_DEFAULT_FNS);
	assert_int_equal(ivshmem_doorbell_attach(&ecam, fn_at(1, 0), 0, 0, 4, &d), -HAL_ENODEV);
	assert_int_equal(ivshmem_doorbell_attach(&ecam, fn_at(2, 0), 0, 0, 4, &d), -HAL_ENODEV);
}

static void test_ivshmem_attach_bar_checks(void **state)
{
	struct pci_fn f;
	struct hal_hostif h;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.vendor = IVSHMEM_VENDOR;
	f.device = IVSHMEM_PLAIN_DEVICE;
	f.enabled = 1;
	f.bar[2] = (struct pci_bar){ .addr = 0x11000000, .size = 1u << 20, .is64 = 1,
				     .prefetch = 1, .present = 1, .assigned = 1 };
	assert_int_equal(ivshmem_attach(&f, &h), 0);

	f.bar[2].present = 0;
	assert_int_equal(ivshmem_attach(&f, &h), -HAL_ENODEV);
	f.bar[2].present = 1;
	f.bar[2].io = 1;
	assert_int_equal(ivshmem_attach(&f, &h), -HAL_ENODEV);
	f.bar[2].io = 0;
	f.bar[2].assigned = 0;
	assert_int_equal(ivshmem_attach(&f, &h), -HAL_ENXIO);
	f.bar[2].assigned = 1;
	f.enabled = 0;
	assert_int_equal(ivshmem_attach(&f, &h), -HAL_ENXIO);
	f.enabled = 1;
	f.bar[2].size = 2048;
	assert_int_equal(ivshmem_attach(&f, &h), -HAL_ENOSPC);
	f.bar[2].size = 16u << 20;

	/* a 64-bit BAR placed above 4 GiB: only a 64-bit CPU can reach it */
	f.bar[2].addr = 0x100000000ull;
	assert_int_equal(ivshmem_attach(&f, &h),
			 (uint64_t)UINTPTR_MAX < 0x100000000ull ? -HAL_ERANGE : 0);
	f.device = 0x1111;   /* ivshmem-doorbell */
	assert_int_equal(ivshmem_attach(&f, &h), -HAL_ENODEV);
}

/* The NIC's bus as qemu-board/nic.sh --hostmem builds it: the BAR's
 * ivshmem-plain first, the host VM's RAM second.  In the A15's 32-bit
 * window (0x10000000..0x3eff0000) a 256 MiB aperture lands naturally
 * aligned at 0x20000000; 512 MiB has no aligned place and is refused
 * (no aperture rather than part of one). */
static void nic_bus(uint64_t hostmem_size)
{
	struct fake_fn *f;

	fake_ecam_reset();
	fake_ecam_add(0, 0, 0, 0x1b36, 0x0008, 0x06000000, 0x00);
	f = fake_ecam_add(0, 1, 0, 0x1af4, 0x1110, 0x05000001, 0x00);
	fake_bar_mem32(f, 0, 256, 0);
	fake_bar_mem64(f, 2, 16u << 20, 1);
	f = fake_ecam_add(0, 2, 0, 0x1af4, 0x1110, 0x05000001, 0x00);
	fake_bar_mem32(f, 0, 256, 0);
	fake_bar_mem64(f, 2, hostmem_size, 1);
	ecam_prepare(WIN_BASE, WIN_SIZE);
	assert_int_equal(pcie_ecam_enumerate(&ecam), 3);
	check_invariants();
}

static void test_ivshmem_attach_hostmem(void **state)
{
	struct hal_hostif bar;
	struct hal_hostmem hm;

	(void)state;
	nic_bus(256u << 20);
	assert_int_equal(ivshmem_attach(pcie_ecam_find(&ecam, IVSHMEM_VENDOR, IVSHMEM_PLAIN_DEVICE, 0),
					&bar), 0);
	assert_int_equal(bar.bar_size, 16u << 20);
	memset(&hm, 0, sizeof(hm));
	assert_int_equal(ivshmem_attach_hostmem(pcie_ecam_find(&ecam, IVSHMEM_VENDOR,
							       IVSHMEM_PLAIN_DEVICE, 1), &hm), 0);
	assert_true((uintptr_t)hm.base == 0x20000000u);
	assert_int_equal(hm.size, 256u << 20);
	assert_string_equal(hm.backing, "ivshmem-plain BAR2 (host RAM)");
	assert_int_equal(ecam.stats.no_space, 0);

	nic_bus(512u << 20);
	assert_int_equal(ivshmem_attach_hostmem(pcie_ecam_find(&ecam, IVSHMEM_VENDOR,
							       IVSHMEM_PLAIN_DEVICE, 1), &hm), -HAL_ENXIO);
	assert_int_equal(ecam.stats.no_space, 1);
	assert_int_equal(ivshmem_attach_hostmem(NULL, &hm), -HAL_EINVAL);
	assert_int_equal(ivshmem_attach_hostmem(fn_at(0, 0), &hm), -HAL_ENODEV);
}

static void test_ivshmem_cpu_check_32bit(void **state)
{
	const uint64_t a32_max = UINT32_MAX;

	(void)state;
	assert_int_equal(ivshmem_bar_cpu_check(0x100000000ull, 16u << 20, a32_max), -HAL_ERANGE);
	assert_int_equal(ivshmem_bar_cpu_check(0x100000000ull, 16u << 20, UINT64_MAX), 0);
	assert_int_equal(ivshmem_bar_cpu_check(0xff000000ull, 16u << 20, a32_max), 0);
	assert_int_equal(ivshmem_bar_cpu_check(0xff001000ull, 16u << 20, a32_max), -HAL_ERANGE);
	assert_int_equal(ivshmem_bar_cpu_check(0x10000000ull, 16u << 20, a32_max), 0);
	assert_int_equal(ivshmem_bar_cpu_check(0x10000000ull, 0, a32_max), -HAL_ERANGE);
	assert_int_equal(ivshmem_bar_cpu_check(UINT64_MAX, 2, UINT64_MAX), -HAL_ERANGE);
	assert_int_equal(ivshmem_bar_cpu_check(UINT64_MAX, 1, UINT64_MAX), 0);
}

static void fill_random(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static void test_ivshmem_selftest(void **state)
{
	const size_t size = 8192;
	uint8_t *bar = malloc(size), *copy = malloc(size);
	struct hal_hostif h = { .bar = bar, .bar_size = size, .bar_bus_addr = 0,
				.backing = "malloc" };

	(void)state;
	assert_non_null(bar);
	assert_non_null(copy);
	fill_random(bar, size, 1);
	memcpy(copy, bar, size);

	assert_int_equal(ivshmem_selftest(&h), 0);
	assert_memory_equal(bar, copy, size);
	assert_true(fake_ecam_stats.mem_write_lo == (uintptr_t)bar + size - 256);
	assert_true(fake_ecam_stats.mem_write_hi == (uintptr_t)bar + size - 1);

	/* bit 6 of one byte stuck at zero; original byte has it clear */
	bar[size - 100] &= (uint8_t)~0x40;
	copy[size - 100] = bar[size - 100];
	fake_mem_stuck_zero((uintptr_t)bar + size - 100, 0x40);
	assert_int_equal(ivshmem_selftest(&h), -HAL_EIO);
	assert_memory_equal(bar, copy, size);

	h.bar_size = 256;
	h.bar = bar + size - 256;
	fake_mem_stuck_zero(0, 0);
	assert_int_equal(ivshmem_selftest(&h), 0);
	h.bar_size = 255;
	assert_int_equal(ivshmem_selftest(&h), -HAL_EINVAL);
	h.bar = NULL;
	h.bar_size = size;
	assert_int_equal(ivshmem_selftest(&h), -HAL_EINVAL);
	assert_int_equal(ivshmem_selftest(NULL), -HAL_EINVAL);
	assert_memory_equal(bar, copy, size);
	free(copy);
	free(bar);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_enumerate_finds_modelled_functions, setup_default),
		cmocka_unit_test_setup(test_bar_sizes_and_types, setup_default),
		cmocka_unit_test_setup(test_command_register_outcome, setup_default),
		cmocka_unit_test_setup(test_bogus_bar_counted_and_fn_disabled, setup_default),
		cmocka_unit_test_setup(test_doorbell_irq_attach_programs_msix, setup_default),
		cmocka_unit_test_setup(test_doorbell_irq_rang_once_per_msi, setup_default),
		cmocka_unit_test_setup(test_doorbell_irq_raise_writes_each_host, setup_default),
		cmocka_unit_test_setup(test_doorbell_irq_attach_refusals, setup_default),
		cmocka_unit_test_setup(test_window_exhaustion, setup_default),
		cmocka_unit_test_setup(test_window_empty, setup_default),
		cmocka_unit_test_setup(test_window_at_top_of_address_space, setup_default),
		cmocka_unit_test_setup(test_window_above_4g, setup_default),
		cmocka_unit_test_setup(test_invalid_arguments, setup_default),
		cmocka_unit_test_setup(test_too_many_functions, setup_default),
		cmocka_unit_test_setup(test_bad_bar_kinds, setup_default),
		cmocka_unit_test_setup(test_find, setup_default),
		cmocka_unit_test_setup(test_cfg_access_bounds, setup_default),
		cmocka_unit_test_setup(test_ivshmem_attach, setup_default),
		cmocka_unit_test_setup(test_ivshmem_attach_bar_checks, setup_default),
		cmocka_unit_test_setup(test_ivshmem_attach_hostmem, setup_default),
		cmocka_unit_test_setup(test_ivshmem_cpu_check_32bit, setup_default),
		cmocka_unit_test_setup(test_ivshmem_selftest, setup_default),
	};

	return cmocka_run_group_tests_name("pcie_ecam+ivshmem", tests, NULL, NULL);
}
