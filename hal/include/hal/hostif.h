/* Host interface: the BAR the host maps (ops table + window), and the
 * host memory the NIC may reach besides it.
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

/* Host memory the NIC may DMA into besides the BAR's window (optional;
 * docs/host-interface.md "Host memory and translation"): offsets into it
 * are host-physical addresses, and the RoCEv2 engine reaches rings and MR
 * memory there, while the command queue and mailboxes stay in the BAR.
 * POSIX: a shared file (--hostmem); base NULL: none, the BAR's DMA window
 * is the aperture. */
struct hal_hostmem {
	volatile uint8_t *base; /* CPU address of host-physical address 0 */
	uint64_t size;          /* bytes */
	const char *backing;    /* description for logs */
};

#endif
