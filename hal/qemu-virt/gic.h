/* GICv2 distributor + CPU interface (Arm IHI 0048B). */
#ifndef GIC_H
#define GIC_H

#include <stdint.h>

#define GIC_SPURIOUS 1023u

struct gic {
	uintptr_t gicd, gicc;
	unsigned nlines;          /* from GICD_TYPER.ITLinesNumber */
	uint32_t spurious;        /* IAR reads of 1023 while draining */
};

int gic_init(struct gic *g, uintptr_t gicd, uintptr_t gicc);
int gic_enable(struct gic *g, unsigned intid);
/* Acknowledge the highest-priority pending interrupt: returns the raw IAR
 * value (pass it to gic_eoi) or GIC_SPURIOUS. */
uint32_t gic_ack(struct gic *g);
/* An SPI edge-triggered (ICFGR, IHI 0048B 4.3.13): a GICv2m MSI is a pulse,
 * which a level-sensitive configuration would not latch. */
int gic_set_edge(struct gic *g, unsigned intid);

/* GICv2m MSI frame (Arm Server Base System Architecture, GICv2m): a write
 * of an SPI's INTID to MSI_SETSPI_NS makes that SPI pending.  Reads
 * MSI_TYPER: the frame's SPIs are [*first, *first + *count).  -HAL_ENODEV
 * if the frame reads as none (count 0, or SPIs outside 32..1019). */
#define GICV2M_MSI_TYPER     0x008
#define GICV2M_MSI_SETSPI_NS 0x040
int gicv2m_probe(uintptr_t frame, unsigned *first, unsigned *count);
void gic_eoi(struct gic *g, uint32_t iar);
/* Software-generated interrupt to this CPU (self-test of the GIC path). */
void gic_sgi_self(struct gic *g, unsigned sgi);

#endif
