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
void gic_eoi(struct gic *g, uint32_t iar);
/* Software-generated interrupt to this CPU (self-test of the GIC path). */
void gic_sgi_self(struct gic *g, unsigned sgi);

#endif
