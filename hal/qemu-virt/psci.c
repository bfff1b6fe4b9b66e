/* PSCI SYSTEM_RESET through HVC (psci.h).  Function ID 0x84000009 (SMC32
 * calling convention, DEN0022 5.1.10); the same ID from AArch64.  QEMU
 * resets every device and restarts the CPU at the reset address (flash0
 * when no -kernel was given: the loader); RAM keeps its contents. */
#include "psci.h"

#define PSCI_SYSTEM_RESET 0x84000009u

void psci_system_reset(void)
{
#if defined(__aarch64__)
	register unsigned long x0 __asm__("x0") = PSCI_SYSTEM_RESET;
	__asm__ volatile("hvc #0" : "+r"(x0) : : "memory");
#elif defined(__arm__)
	register unsigned long r0 __asm__("r0") = PSCI_SYSTEM_RESET;
	/* hvc is an ARMv7 virtualization-extension instruction (cortex-a15) */
	__asm__ volatile(".arch_extension virt\n\thvc #0" : "+r"(r0) : : "memory");
#endif
}
