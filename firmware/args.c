#include "args.h"

#include <string.h>

#include "hal/errno.h"
#include "lib/mac.h"
#include "log.h"

static size_t key_len(const char *word)
{
	const char *eq = strchr(word, '=');

	return eq ? (size_t)(eq - word) : 0;
}

int fw_args_check(const struct fw_args *a, const char *const *allowed)
{
	int i;

	for (i = 0; i < a->argc; i++) {
		size_t n = key_len(a->argv[i]);
		const char *const *k;

		if (n == 0) {
			LOG_ERR("argument '%s' is not key=value", a->argv[i]);
			return -HAL_EINVAL;
		}
		for (k = allowed; *k; k++)
			if (strlen(*k) == n && strncmp(*k, a->argv[i], n) == 0)
				break;
		if (!*k) {
			LOG_ERR("unknown argument '%s' for this mode", a->argv[i]);
			return -HAL_EINVAL;
		}
	}
	return 0;
}

const char *fw_args_get(const struct fw_args *a, const char *key)
{
	size_t n = strlen(key);
	int i;

	/* The last occurrence wins, as on most command lines. */
	for (i = a->argc - 1; i >= 0; i--)
		if (key_len(a->argv[i]) == n && strncmp(a->argv[i], key, n) == 0)
			return a->argv[i] + n + 1;
	return NULL;
}

int fw_args_u64(const struct fw_args *a, const char *key, uint64_t def, uint64_t max, uint64_t *out)
{
	const char *s = fw_args_get(a, key);
	unsigned base = 10;
	uint64_t v = 0;

	if (!s) {
		*out = def;
		return 0;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		goto bad;
	for (; *s; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			goto bad;
		if (v > (max - d) / base)
			goto bad;
		v = v * base + d;
	}
	*out = v;
	return 0;
bad:
	LOG_ERR("%s= wants a number from 0 to %llu", key, (unsigned long long)max);
	return -HAL_EINVAL;
}

/* Exactly "xx:xx:xx:xx:xx:xx"; stops at ',' or NUL. */
int fw_parse_mac(const char *s, uint8_t mac[6])
{
	if (lib_mac_parse(s, mac) != 0)
		return -HAL_EINVAL;
	s += LIB_MAC_TEXT_LEN;
	return (*s == '\0' || *s == ',') ? 0 : -HAL_EINVAL;
}

int fw_parse_mac_list(const char *s, uint8_t (*macs)[6], unsigned max)
{
	unsigned n = 0;

	while (*s) {
		if (n >= max || fw_parse_mac(s, macs[n]) != 0)
			return -HAL_EINVAL;
		n++;
		s += 17;
		if (*s == ',')
			s++;
		else if (*s)
			return -HAL_EINVAL;
	}
	return (int)n;
}
