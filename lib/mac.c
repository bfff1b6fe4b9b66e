/* MAC address text (lib/mac.h). */
#include "lib/mac.h"

int lib_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int lib_mac_parse(const char *s, uint8_t mac[6])
{
	for (unsigned i = 0; i < 6; i++) {
		int hi = lib_hex_digit(s[3 * i]), lo = hi < 0 ? -1 : lib_hex_digit(s[3 * i + 1]);

		/* each check before the next read: a short string ends the walk */
		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return -1;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
