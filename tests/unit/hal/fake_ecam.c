#include "fake_ecam.h"

#include <string.h>

#include "hal/mmio.h"

#define CMD_IO          0x0001u
#define CMD_MEM         0x0002u
#define CMD_WRITABLE    0x0547u  /* I/O, MEM, MASTER, parity, SERR, INTx disable */
#define STATUS_RW1C     0xf900u

static struct fake_fn fns[FAKE_ECAM_MAX_FNS];
static unsigned n_fns;
static uintptr_t stuck_addr;
static uint8_t stuck_mask;

struct fake_ecam_stats fake_ecam_stats;
static struct {
	uintptr_t base;
	uint32_t *regs;
	unsigned n;
} regions[FAKE_MMIO_REGIONS];
static unsigned n_regions;
struct fake_mmio_write fake_mmio_log[FAKE_MMIO_LOG];
unsigned fake_mmio_writes;

void fake_mmio_region(uintptr_t base, uint32_t *regs, unsigned n_dwords)
{
	if (n_regions < FAKE_MMIO_REGIONS) {
		regions[n_regions].base = base;
		regions[n_regions].regs = regs;
		regions[n_regions].n = n_dwords;
		n_regions++;
	}
}

static uint32_t *region_reg(uintptr_t addr)
{
	for (unsigned i = 0; i < n_regions; i++)
		if (addr >= regions[i].base && (addr & 3) == 0 &&
		    (addr - regions[i].base) / 4 < regions[i].n)
			return &regions[i].regs[(addr - regions[i].base) / 4];
	return NULL;
}

void fake_ecam_reset(void)
{
	memset(fns, 0, sizeof(fns));
	n_fns = 0;
	stuck_addr = 0;
	stuck_mask = 0;
	memset(&fake_ecam_stats, 0, sizeof(fake_ecam_stats));
	n_regions = 0;
	fake_mmio_writes = 0;
}

struct fake_fn *fake_ecam_add(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t vendor,
			      uint16_t device, uint32_t class_rev, uint8_t header_type)
{
	struct fake_fn *f;

	if (n_fns >= FAKE_ECAM_MAX_FNS)
		return NULL;
	f = &fns[n_fns++];
	memset(f, 0, sizeof(*f));
	f->bus = bus;
	f->dev = dev;
	f->fn = fn;
	f->id = (uint32_t)device << 16 | vendor;
	f->class_rev = class_rev;
	f->header_type = header_type;
	return f;
}

void fake_bar_raw(struct fake_fn *f, unsigned i, uint32_t rw, uint32_t ro)
{
	f->bar_rw[i] = rw;
	f->bar_ro[i] = ro;
	f->bar[i] = 0;
}

void fake_bar_mem32(struct fake_fn *f, unsigned i, uint32_t size, int prefetch)
{
	fake_bar_raw(f, i, ~(size - 1) & 0xfffffff0u, prefetch ? 0x8u : 0x0u);
}

void fake_bar_mem64(struct fake_fn *f, unsigned i, uint64_t size, int prefetch)
{
	uint64_t mask = ~(size - 1);

	fake_bar_raw(f, i, (uint32_t)mask & 0xfffffff0u, 0x4u | (prefetch ? 0x8u : 0x0u));
	fake_bar_raw(f, i + 1, (uint32_t)(mask >> 32), 0);
}

void fake_bar_io(struct fake_fn *f, unsigned i, uint32_t size, int decode16)
{
	uint32_t rw = ~(size - 1) & 0xfffffffcu;

	fake_bar_raw(f, i, decode16 ? rw & 0xffffu : rw, 0x1u);
}

void fake_ecam_default(void)
{
	struct fake_fn *f;

	fake_ecam_reset();
	fake_ecam_add(0, 0, 0, 0x1b36, 0x0008, 0x06000000, 0x00);

	f = fake_ecam_add(0, 1, 0, 0x1af4, 0x1110, 0x05000001, 0x00);
	f->status = 0x2010;
	fake_bar_mem32(f, 0, 256, 0);
	fake_bar_mem64(f, 2, 16u << 20, 1);

	f = fake_ecam_add(0, 2, 0, 0x1234, 0x1000, 0x02000000, 0x80);
	fake_bar_mem32(f, 0, 4096, 0);
	f = fake_ecam_add(0, 2, 1, 0x1234, 0x1001, 0x02000000, 0x80);
	fake_bar_mem64(f, 0, 64u << 10, 0);
	f = fake_ecam_add(0, 2, 3, 0x1234, 0x1003, 0x02800000, 0x80);
	fake_bar_mem32(f, 1, 1u << 20, 1);

	f = fake_ecam_add(0, 3, 0, 0x1234, 0x2000, 0x07000000, 0x00);
	fake_bar_io(f, 0, 32, 1);
	fake_bar_mem32(f, 1, 4096, 0);

	f = fake_ecam_add(0, 4, 0, 0x1234, 0x3000, 0xff000000, 0x00);
	fake_bar_raw(f, 0, 0xfff0f000u, 0);
	fake_bar_mem32(f, 1, 4096, 0);

	f = fake_ecam_add(0, 5, 0, 0x1234, 0x4000, 0x01060100, 0x00);
	f->alias_fns = 1;
	f->command = 0x0007;
	fake_bar_mem32(f, 0, 8192, 0);

	f = fake_ecam_add(0, 31, 0, 0x1234, 0x5000, 0x08800000, 0x00);
	fake_bar_mem32(f, 5, 4096, 0);
}

struct fake_fn *fake_ecam_get(uint8_t bus, uint8_t dev, uint8_t fn)
{
	unsigned i;

	for (i = 0; i < n_fns; i++) {
		struct fake_fn *f = &fns[i];

		if (f->bus == bus && f->dev == dev && (f->fn == fn || (f->alias_fns && f->fn == 0)))
			return f;
	}
	return NULL;
}

void fake_mem_stuck_zero(uintptr_t addr, uint8_t mask)
{
	stuck_addr = addr;
	stuck_mask = mask;
}

static int in_ecam(uintptr_t addr)
{
	return addr >= FAKE_ECAM_BASE &&
	       addr - FAKE_ECAM_BASE < ((uintptr_t)FAKE_ECAM_NBUSES << 20);
}

static struct fake_fn *decode(uintptr_t addr, unsigned *off)
{
	uintptr_t rel = addr - FAKE_ECAM_BASE;

	*off = (unsigned)(rel & 0xfff);
	return fake_ecam_get((uint8_t)(rel >> 20), (uint8_t)((rel >> 15) & 31),
			     (uint8_t)((rel >> 12) & 7));
}

static uint32_t bar_value(const struct fake_fn *f, unsigned i)
{
	return (f->bar[i] & f->bar_rw[i]) | f->bar_ro[i] | f->bar_stuck1[i];
}

uint32_t mmio_read32(uintptr_t addr)
{
	struct fake_fn *f;
	unsigned off;

	if (!in_ecam(addr)) {
		uint32_t *r = region_reg(addr);

		if (r)
			return *r;
		fake_ecam_stats.stray++;
		return 0xffffffffu;
	}
	fake_ecam_stats.cfg_reads++;
	if (addr & 3) {
		fake_ecam_stats.misaligned++;
		return 0xffffffffu;
	}
	f = decode(addr, &off);
	if (f == NULL)
		return 0xffffffffu;
	switch (off) {
	case 0x00:
		return f->id;
	case 0x04:
		return (uint32_t)f->status << 16 | f->command;
	case 0x08:
		return f->class_rev;
	case 0x0c:
		return (uint32_t)f->header_type << 16;
	case 0x10: case 0x14: case 0x18: case 0x1c: case 0x20: case 0x24:
		return bar_value(f, (off - 0x10) / 4);
	case 0x34:
		return f->cap_ptr;
	default:
		return off >= 0x40 && off < 0x100 ? f->ext[(off - 0x40) / 4] : 0;
	}
}

void mmio_write32(uintptr_t addr, uint32_t val)
{
	struct fake_fn *f;
	unsigned off, i;

	if (!in_ecam(addr)) {
		uint32_t *r = region_reg(addr);

		if (r) {
			*r = val;
			if (fake_mmio_writes < FAKE_MMIO_LOG)
				fake_mmio_log[fake_mmio_writes] = (struct fake_mmio_write){ addr, val };
			fake_mmio_writes++;
			return;
		}
		fake_ecam_stats.stray++;
		return;
	}
	fake_ecam_stats.cfg_writes++;
	if (addr & 3) {
		fake_ecam_stats.misaligned++;
		return;
	}
	f = decode(addr, &off);
	if (f == NULL)
		return;
	switch (off) {
	case 0x04:
		f->command = (uint16_t)(val & CMD_WRITABLE);
		f->status &= (uint16_t)~((val >> 16) & STATUS_RW1C);
		break;
	case 0x10: case 0x14: case 0x18: case 0x1c: case 0x20: case 0x24:
		i = (off - 0x10) / 4;
		if (f->command & (CMD_IO | CMD_MEM))
			fake_ecam_stats.bar_write_while_decoding++;
		f->bar[i] = val & f->bar_rw[i];
		f->bar_writes++;
		break;
	default:
		if (off >= 0x40 && off < 0x100)
			f->ext[(off - 0x40) / 4] = val;
		break;
	}
}

uint16_t mmio_read16(uintptr_t addr)
{
	(void)addr;
	fake_ecam_stats.narrow++;
	return 0xffff;
}

void mmio_write16(uintptr_t addr, uint16_t val)
{
	(void)addr;
	(void)val;
	fake_ecam_stats.narrow++;
}

uint8_t mmio_read8(uintptr_t addr)
{
	uint8_t v;

	if (in_ecam(addr)) {
		fake_ecam_stats.narrow++;
		return 0xff;
	}
	v = *(volatile uint8_t *)addr;
	return addr == stuck_addr ? (uint8_t)(v & ~stuck_mask) : v;
}

void mmio_write8(uintptr_t addr, uint8_t val)
{
	if (in_ecam(addr)) {
		fake_ecam_stats.narrow++;
		return;
	}
	if (addr == stuck_addr)
		val = (uint8_t)(val & ~stuck_mask);
	*(volatile uint8_t *)addr = val;
	if (fake_ecam_stats.mem_writes == 0 || addr < fake_ecam_stats.mem_write_lo)
		fake_ecam_stats.mem_write_lo = addr;
	if (fake_ecam_stats.mem_writes == 0 || addr > fake_ecam_stats.mem_write_hi)
		fake_ecam_stats.mem_write_hi = addr;
	fake_ecam_stats.mem_writes++;
}
