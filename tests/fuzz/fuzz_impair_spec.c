/* libFuzzer: the impairment spec parser (command line / MNIC_IMPAIR). */
#include <stdint.h>
#include <string.h>

#include "impair.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct impair_cfg c;
	char spec[256], err[128];

	if (size >= sizeof(spec))
		size = sizeof(spec) - 1;
	memcpy(spec, data, size);
	spec[size] = '\0';
	if (impair_parse(&c, spec, err, sizeof(err)) == 0) {
		/* Whatever parses must be a valid configuration. */
		if (c.drop_ppm > 1000000u || c.dup_ppm > 1000000u || c.reorder_ppm > 1000000u ||
		    c.corrupt_ppm > 1000000u)
			__builtin_trap();
	} else if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0') {
		__builtin_trap();   /* every refusal says why */
	}
	return 0;
}
