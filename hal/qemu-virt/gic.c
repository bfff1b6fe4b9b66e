#include "gic.h"

#include "hal/errno.h"
#include "hal/mmio.h"

/* Distributor (IHI 0048B 4.3) */
#define GICD_CTLR        0x000
#define GICD_TYPER       0x004
#define GICD_ISENABLER   0x100
#define GICD_ICENABLER   0x180
#define GICD_ICPENDR     0x280
#define GICD_IPRIORITYR  0x400
#define GICD_ITARGETSR   0x800
#define GICD_ICFGR       0xc00
#define GICD_SGIR        0xf00
/* CPU interface (IHI 0048B 4.4) */
#define GICC_CTLR        0x000
#define GICC_PMR         0x004
#define GICC_IAR         0x00c
#define GICC_EOIR        0x010

#define GIC_PRIO_DEFAULT 0xa0u
#define GIC_PMR_ALL      0xf0u

int gic_init(struct gic *g, uintptr_t gicd, uintptr_t gicc)
{
	unsigned i;

	g->gicd = gicd;
	g->gicc = gicc;
	g->spurious = 0;
	g->nlines = 32u * ((mmio_read32(gicd + GICD_TYPER) & 0x1fu) + 1u);

	mmio_write32(gicd + GICD_CTLR, 0);
	for (i = 0; i < g->nlines; i += 32) {
		mmio_write32(gicd + GICD_ICENABLER + i / 8, 0xffffffffu);
		mmio_write32(gicd + GICD_ICPENDR + i / 8, 0xffffffffu);
	}
	for (i = 0; i < g->nlines; i += 4)
		mmio_write32(gicd + GICD_IPRIORITYR + i, GIC_PRIO_DEFAULT * 0x01010101u);
	/* SPIs to CPU0; SGI/PPI target registers are read-only. */
	for (i = 32; i < g->nlines; i += 4)
		mmio_write32(gicd + GICD_ITARGETSR + i, 0x01010101u);
	/* SPIs level-sensitive (virtio-mmio and ivshmem lines are levels). */
	for (i = 32; i < g->nlines; i += 16)
		mmio_write32(gicd + GICD_ICFGR + i / 4, 0);
	mmio_write32(gicd + GICD_CTLR, 1);

	mmio_write32(gicc + GICC_PMR, GIC_PMR_ALL);
	mmio_write32(gicc + GICC_CTLR, 1);
	return 0;
}

int gic_enable(struct gic *g, unsigned intid)
{
	if (intid >= g->nlines)
		return -HAL_EINVAL;
	mmio_write32(g->gicd + GICD_ISENABLER + 4u * (intid / 32u), 1u << (intid % 32u));
	return 0;
}

int gic_set_edge(struct gic *g, unsigned intid)
{
	uintptr_t r;

	if (intid < 32u || intid >= g->nlines)
		return -HAL_EINVAL;   /* SGI/PPI configuration is not ours to set */
	r = g->gicd + GICD_ICFGR + 4u * (intid / 16u);
	/* Int_config[1] of the two bits per interrupt: 1 = edge-triggered */
	mmio_write32(r, mmio_read32(r) | (2u << (2u * (intid % 16u))));
	return 0;
}

int gicv2m_probe(uintptr_t frame, unsigned *first, unsigned *count)
{
	uint32_t typer = mmio_read32(frame + GICV2M_MSI_TYPER);
	unsigned base = (typer >> 16) & 0x3ffu, n = typer & 0x3ffu;

	if (n == 0 || base < 32u || base + n > 1020u)
		return -HAL_ENODEV;
	*first = base;
	*count = n;
	return 0;
}

uint32_t gic_ack(struct gic *g)
{
	uint32_t iar = mmio_read32(g->gicc + GICC_IAR);

	if ((iar & 0x3ffu) == GIC_SPURIOUS)
		return GIC_SPURIOUS;
	return iar;
}

void gic_eoi(struct gic *g, uint32_t iar)
{
	mmio_write32(g->gicc + GICC_EOIR, iar);
}

void gic_sgi_self(struct gic *g, unsigned sgi)
{
	/* TargetListFilter = 0b10: only the requesting CPU (IHI 0048B 4.3.15). */
	mmio_write32(g->gicd + GICD_SGIR, (2u << 24) | (sgi & 0xfu));
}
