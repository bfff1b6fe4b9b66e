/* One check's verdict, as the VM's check programs print it (mnic-ib-check,
 * mnic-verbs-check): "ok NAME" or "FAIL NAME: why", counted in checks and
 * failures, which the program's exit status and summary line report. */
#ifndef MNIC_CHECK_RESULT_H
#define MNIC_CHECK_RESULT_H

#include <stdarg.h>
#include <stdio.h>

static unsigned int checks, failures;

static void result(const char *name, int ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void result(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (ok) {
		printf("ok %s\n", name);
		return;
	}
	failures++;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#endif
