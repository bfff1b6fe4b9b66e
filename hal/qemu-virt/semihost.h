/* Arm semihosting (Arm "Semihosting for AArch32 and AArch64", v2.0).
 * QEMU must be started with -semihosting-config enable=on, otherwise the
 * trap is a real exception (the fault vectors report it). */
#ifndef SEMIHOST_H
#define SEMIHOST_H

#include <stddef.h>
#include <stdint.h>

#define SYS_GET_CMDLINE    0x15
#define SYS_EXIT           0x18
#define SYS_EXIT_EXTENDED  0x20
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

/* Fills buf with "<image path> <-append text>", NUL-terminated.
 * Returns 0 or -1. */
int semihost_cmdline(char *buf, size_t len);
void semihost_exit(int code) __attribute__((noreturn));

#endif
