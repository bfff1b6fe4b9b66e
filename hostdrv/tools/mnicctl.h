/* mnicctl internals shared by mnicctl.c and its unit tests: argument
 * parsing and the small parsers it uses. */
#ifndef MNICCTL_H
#define MNICCTL_H

#include <stdint.h>

#include "mnic/libmnic.h"

/* Exit codes (mnicctl --help) */
enum {
	MNICCTL_OK = 0,
	MNICCTL_FAILED = 1,    /* the device refused a command, or an image is corrupt */
	MNICCTL_USAGE = 2,     /* bad arguments */
	MNICCTL_DEVICE = 3,    /* cannot open/map the device, timeout, invalid reply, file I/O */
};

#define MNICCTL_MAX_ARGS 32

struct mnicctl_opts {
	const char *dev;
	int json;
	uint32_t timeout_ms;
	int help;
	/* everything else, in order: the subcommand words and their options */
	int argc;
	const char *argv[MNICCTL_MAX_ARGS];
};

/* Split global options (-d DEV, --json, --timeout MS, -h/--help) from the
 * rest.  Returns 0 or -1 with a message in err. */
int mnicctl_parse(int argc, char *const argv[], struct mnicctl_opts *o, char *err, size_t errlen);
/* "a.b.c.d" -> host-order IPv4; returns 0 or -1 */
int mnicctl_parse_ipv4(const char *s, uint32_t *ip);
/* "aa:bb:cc:dd:ee:ff" */
int mnicctl_parse_mac(const char *s, uint8_t mac[6]);
/* "OLDIP=NEWIP,MAC" */
int mnicctl_parse_override(const char *s, struct mnic_peer_override *ov);
/* Print "mnicctl: <message> (see mnicctl --help)" to stderr; returns
 * MNICCTL_USAGE (every subcommand's bad-argument exit). */
int mnicctl_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* unsigned decimal or 0x hex QPN/number, whole string */
int mnicctl_parse_u32(const char *s, uint32_t *v);

#endif
