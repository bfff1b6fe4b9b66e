/* The kernel module's sysfs counters (/sys/class/misc/mnicN/counters/NAME),
 * as the VM's check programs read them (mnic_*_check.c). */
#ifndef MNIC_CHECK_COUNTER_H
#define MNIC_CHECK_COUNTER_H

#include <stdio.h>

/* The counter's value, or -1 when it cannot be read. */
static inline long mnic_check_counter(const char *sysdir, const char *name)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/counters/%s", sysdir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

#endif
