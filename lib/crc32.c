#include "crc32.h"

static uint32_t table[256];
static int table_ready;

void rocev2_crc32_init(void)
{
	uint32_t i, j;

	for (i = 0; i < 256; i++) {
		uint32_t c = i;

		for (j = 0; j < 8; j++)
			c = (c & 1u) ? (c >> 1) ^ 0xedb88320u : c >> 1;
		table[i] = c;
	}
	table_ready = 1;
}

uint32_t rocev2_crc32_update(uint32_t state, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!table_ready)
		rocev2_crc32_init();
	while (len--)
		state = table[(state ^ *p++) & 0xffu] ^ (state >> 8);
	return state;
}

uint32_t rocev2_crc32(const void *buf, size_t len)
{
	return ~rocev2_crc32_update(0xffffffffu, buf, len);
}
