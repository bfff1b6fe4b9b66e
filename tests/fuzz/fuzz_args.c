/* libFuzzer: the firmware command-line parsers (the first input a NIC
 * takes from outside): key=value checking, numbers, MAC lists. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "count", "peers", "log", NULL };
	char buf[512], *words[16];
	struct fw_args a = { 0, words };
	uint8_t macs[8][6];
	uint64_t v;
	char *p;

	if (size >= sizeof(buf))
		size = sizeof(buf) - 1;
	memcpy(buf, data, size);
	buf[size] = '\0';
	fw_parse_mac_list(buf, macs, 8);
	for (p = strtok(buf, " "); p && a.argc < 16; p = strtok(NULL, " "))
		words[a.argc++] = p;
	fw_args_check(&a, keys);
	fw_args_u64(&a, "count", 1, UINT64_MAX, &v);
	fw_args_u64(&a, "peers", 1, 1000, &v);
	return 0;
}
