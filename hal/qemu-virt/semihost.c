#include "semihost.h"

static uintptr_t semihost_call(uintptr_t op, uintptr_t arg)
{
#if defined(__aarch64__)
	register uintptr_t x0 __asm__("x0") = op;
	register uintptr_t x1 __asm__("x1") = arg;
	__asm__ volatile("hlt #0xf000" : "+r"(x0) : "r"(x1) : "memory");
	return x0;
#elif defined(__arm__)
	register uintptr_t r0 __asm__("r0") = op;
	register uintptr_t r1 __asm__("r1") = arg;
	/* A32 state: the semihosting SVC immediate is 0x123456. */
	__asm__ volatile("svc 0x123456" : "+r"(r0) : "r"(r1) : "memory");
	return r0;
#else
#error "semihosting needs an Arm target"
#endif
}

int semihost_cmdline(char *buf, size_t len)
{
	uintptr_t block[2] = { (uintptr_t)buf, len };

	if (len == 0)
		return -1;
	if (semihost_call(SYS_GET_CMDLINE, (uintptr_t)block) != 0)
		return -1;
	if (block[1] >= len)
		block[1] = len - 1;
	buf[block[1]] = '\0';
	return 0;
}

void semihost_exit(int code)
{
	/* A32: SYS_EXIT takes only a reason, so the exit code needs
	 * SYS_EXIT_EXTENDED.  A64: SYS_EXIT takes the same two-word block. */
	uintptr_t block[2] = { ADP_STOPPED_APPLICATION_EXIT, (uintptr_t)(unsigned)code };
#if defined(__aarch64__)
	semihost_call(SYS_EXIT, (uintptr_t)block);
#else
	semihost_call(SYS_EXIT_EXTENDED, (uintptr_t)block);
#endif
	for (;;)
		__asm__ volatile("wfi");
}
