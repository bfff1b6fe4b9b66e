/* mnicctl argument parsing (no device, no output: unit-tested). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mac.h"
#include "mnicctl.h"

int mnicctl_parse_u32(const char *s, uint32_t *v)
{
	unsigned long long x;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end || x > 0xffffffffull)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int mnicctl_parse_ipv4(const char *s, uint32_t *ip)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		unsigned n = 0;
		int digits = 0;

		while (*s >= '0' && *s <= '9' && digits < 4) {
			n = n * 10 + (unsigned)(*s++ - '0');
			digits++;
		}
		if (digits == 0 || digits > 3 || n > 255)
			return -1;
		v = v << 8 | n;
		if (i < 3 && *s++ != '.')
			return -1;
	}
	if (*s)
		return -1;
	*ip = v;
	return 0;
}

int mnicctl_parse_mac(const char *s, uint8_t mac[6])
{
	return lib_mac_parse(s, mac) == 0 && s[LIB_MAC_TEXT_LEN] == '\0' ? 0 : -1;
}

int mnicctl_parse_override(const char *s, struct mnic_peer_override *ov)
{
	char buf[64], *eq, *comma;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	eq = strchr(buf, '=');
	if (!eq)
		return -1;
	*eq++ = '\0';
	comma = strchr(eq, ',');
	if (!comma)
		return -1;
	*comma++ = '\0';
	memset(ov, 0, sizeof(*ov));
	if (mnicctl_parse_ipv4(buf, &ov->old_dip) || mnicctl_parse_ipv4(eq, &ov->new_dip) ||
	    mnicctl_parse_mac(comma, ov->new_dmac) || ov->old_dip == 0 || ov->new_dip == 0)
		return -1;
	return 0;
}

int mnicctl_parse(int argc, char *const argv[], struct mnicctl_opts *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-d") || !strcmp(a, "--device")) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s needs a device (a BAR file or /dev/mnicN)", a);
				return -1;
			}
			o->dev = argv[++i];
		} else if (!strncmp(a, "--device=", 9)) {
			o->dev = a + 9;
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--timeout")) {
			if (i + 1 >= argc || mnicctl_parse_u32(argv[i + 1], &o->timeout_ms) ||
			    o->timeout_ms == 0) {
				snprintf(err, errlen, "--timeout needs milliseconds > 0");
				return -1;
			}
			i++;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			o->help = 1;
		} else {
			if (o->argc >= MNICCTL_MAX_ARGS) {
				snprintf(err, errlen, "too many arguments");
				return -1;
			}
			o->argv[o->argc++] = a;
		}
	}
	return 0;
}

int mnicctl_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mnicctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see mnicctl --help)\n");
	return MNICCTL_USAGE;
}
