/* Behavioural model of PCIe ECAM configuration space (PCIe Base 4.0
 * 7.2.2) behind the HAL_MMIO_HOOKS accessors, for test_pcie_ecam.c.
 *
 * Per function: read-only ID/class/header, a COMMAND register with
 * writable bits and an RW1C STATUS half (PCI LB 3.0 6.2.2-6.2.3), and BARs
 * that keep only their writable address bits, so writing all-ones reads
 * back the size mask with the read-only type bits (PCI LB 3.0 6.2.5.1).
 * Absent functions read all-ones.  Addresses outside the ECAM region are
 * plain host memory for 8-bit accesses (ivshmem BAR tests), with an
 * optional stuck-at-zero fault. */
#ifndef FAKE_ECAM_H
#define FAKE_ECAM_H

#include <stdint.h>

#define FAKE_ECAM_BASE    ((uintptr_t)0x3f000000u)
#define FAKE_ECAM_NBUSES  16u
#define FAKE_ECAM_MAX_FNS 64

struct fake_fn {
	uint8_t bus, dev, fn;
	uint32_t id;              /* device << 16 | vendor */
	uint32_t class_rev;       /* class << 24 | subclass << 16 | prog-if << 8 | rev */
	uint8_t header_type;
	int alias_fns;            /* also answers as functions 1..7 */
	uint16_t command;
	uint16_t status;
	uint32_t bar[6];          /* writable bits currently held */
	uint32_t bar_rw[6];       /* writable address bits */
	uint32_t bar_ro[6];       /* read-only type bits */
	uint32_t bar_stuck1[6];   /* address bits stuck at one (faulty part) */
	unsigned bar_writes;
	uint8_t cap_ptr;          /* config 0x34 (set STATUS bit 4 too) */
	uint32_t ext[48];         /* config dwords 0x40..0xfc: capabilities, plain RW */
};

/* 32-bit device registers outside ECAM (an ivshmem BAR0, an MSI-X table):
 * reads return regs[], writes store into it and are logged in order. */
#define FAKE_MMIO_REGIONS 4
#define FAKE_MMIO_LOG 64
struct fake_mmio_write {
	uintptr_t addr;
	uint32_t val;
};
void fake_mmio_region(uintptr_t base, uint32_t *regs, unsigned n_dwords);
extern struct fake_mmio_write fake_mmio_log[FAKE_MMIO_LOG];
extern unsigned fake_mmio_writes;

struct fake_ecam_stats {
	unsigned cfg_reads, cfg_writes;
	unsigned bar_write_while_decoding; /* BAR written with I/O or MEM decode on */
	unsigned misaligned;               /* config access not 32-bit aligned */
	unsigned narrow;                   /* 8/16-bit config access */
	unsigned stray;                    /* 32-bit access outside ECAM */
	uintptr_t mem_write_lo, mem_write_hi; /* span of 8-bit memory writes */
	unsigned mem_writes;
};

extern struct fake_ecam_stats fake_ecam_stats;

/* No functions, counters cleared. */
void fake_ecam_reset(void);
/* Reset, then the topology used by most tests:
 *   00:00.0 1b36:0008 host bridge, no BARs
 *   00:01.0 1af4:1110 ivshmem-plain: BAR0 256 B mem32, BAR2 16 MiB mem64 pref;
 *           STATUS has capabilities-list and received-master-abort set
 *   00:02.0 1234:1000 multifunction: BAR0 4 KiB mem32
 *   00:02.1 1234:1001 BAR0 64 KiB mem64
 *   00:02.3 1234:1003 BAR1 1 MiB mem32 pref (fn 2 absent)
 *   00:03.0 1234:2000 BAR0 32 B I/O (16-bit decoder), BAR1 4 KiB mem32
 *   00:04.0 1234:3000 BAR0 bogus mask 0xfff0f000, BAR1 4 KiB mem32
 *   00:05.0 1234:4000 single-function, aliases fns 1-7; BAR0 8 KiB mem32;
 *           found with COMMAND = I/O|MEM|MASTER (an earlier stage left it on)
 *   00:1f.0 1234:5000 BAR5 4 KiB mem32 */
#define FAKE_ECAM_DEFAULT_FNS 9
void fake_ecam_default(void);

struct fake_fn *fake_ecam_add(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t vendor,
			      uint16_t device, uint32_t class_rev, uint8_t header_type);
struct fake_fn *fake_ecam_get(uint8_t bus, uint8_t dev, uint8_t fn);
void fake_bar_mem32(struct fake_fn *f, unsigned i, uint32_t size, int prefetch);
void fake_bar_mem64(struct fake_fn *f, unsigned i, uint64_t size, int prefetch);
void fake_bar_io(struct fake_fn *f, unsigned i, uint32_t size, int decode16);
void fake_bar_raw(struct fake_fn *f, unsigned i, uint32_t rw, uint32_t ro);

/* Bits of the byte at addr that read and store as zero. */
void fake_mem_stuck_zero(uintptr_t addr, uint8_t mask);

#endif
