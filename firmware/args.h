/* Firmware command line: "<mode> key=value ...".  Each mode declares the
 * keys it accepts; anything else is an error naming the key. */
#ifndef FW_ARGS_H
#define FW_ARGS_H

#include <stdint.h>

struct fw_args {
	int argc;
	char **argv;     /* key=value words after the mode */
};

/* Returns 0 if every word is key=value with a key in allowed (NULL-ended);
 * otherwise logs what is wrong and returns -HAL_EINVAL. */
int fw_args_check(const struct fw_args *a, const char *const *allowed);
const char *fw_args_get(const struct fw_args *a, const char *key);
/* Parse an unsigned decimal (or 0x hex) value of key, default def. */
int fw_args_u64(const struct fw_args *a, const char *key, uint64_t def, uint64_t max, uint64_t *out);
int fw_parse_mac(const char *s, uint8_t mac[6]);
/* Parse a comma-separated list of MACs; returns the count or -HAL_EINVAL. */
int fw_parse_mac_list(const char *s, uint8_t (*macs)[6], unsigned max);

#endif
