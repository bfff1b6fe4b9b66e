/* Host interface: the BAR the host maps (ops table + window).
 *
 * The BAR is one shared region: device-owned pages at the start (init
 * segment, command queue, doorbells, health; laid out by mgmt/) and a host
 * DMA window after them that holds rings and MR memory.  On the boards it is
 * an ivshmem-plain BAR2, on POSIX an mmap'd shared file; both are the same
 * bytes a host process or VM sees.
 */
#ifndef HAL_HOSTIF_H
#define HAL_HOSTIF_H

#include <stddef.h>
#include <stdint.h>

struct hal_hostif {
	volatile uint8_t *bar;  /* CPU address of the BAR */
	size_t bar_size;        /* bytes */
	uint64_t bar_bus_addr;  /* address the BAR was assigned (boards) */
	const char *backing;    /* description for logs */
};

#endif
