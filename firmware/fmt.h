/* A small, allocation-free formatter for the console and logs (no stdio on
 * the boards).  Supports %% %c %s %d %i %u %x %X %p with the l, ll, z length
 * modifiers, '-' and '0' flags and a field width.  Always NUL-terminates
 * (when n > 0) and returns the length it would have written, like C's
 * vsnprintf. */
#ifndef FW_FMT_H
#define FW_FMT_H

#include <stdarg.h>
#include <stddef.h>

int fw_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int fw_snprintf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
