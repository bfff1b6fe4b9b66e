/* mnicctl_fw.c's pure parts: the X.Y.Z[+N] version parser. */
#include "cmocka_main.h"

#include "mnicctl_fw.h"

static void test_versions(void **state)
{
	static const struct {
		const char *s;
		int ok;
		unsigned maj, min, patch, build;
	} t[] = {
		{ "1.2.3", 1, 1, 2, 3, 0 },
		{ "1.2.3+4", 1, 1, 2, 3, 4 },
		{ "255.255.65535+4294967295", 1, 255, 255, 65535, 4294967295u },
		{ "0.0.0+0", 1, 0, 0, 0, 0 },
		{ "256.0.0", 0, 0, 0, 0, 0 },
		{ "1.256.0", 0, 0, 0, 0, 0 },
		{ "1.2.65536", 0, 0, 0, 0, 0 },
		{ "1.2.3+4294967296", 0, 0, 0, 0, 0 },
		{ "1.2", 0, 0, 0, 0, 0 },
		{ "1.2.3+", 0, 0, 0, 0, 0 },
		{ "1.2.3-rc1", 0, 0, 0, 0, 0 },
		{ "-1.2.3", 0, 0, 0, 0, 0 },
		{ "1..3", 0, 0, 0, 0, 0 },
		{ "", 0, 0, 0, 0, 0 },
		{ "1.2.3+4 ", 0, 0, 0, 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t maj = 9, min = 9;
		uint16_t patch = 9;
		uint32_t build = 9;
		int rc = mnicctl_fw_parse_version(t[i].s, &maj, &min, &patch, &build);

		if (!t[i].ok) {
			if (rc != -1)
				fail_msg("'%s' accepted", t[i].s);
			continue;
		}
		if (rc != 0 || maj != t[i].maj || min != t[i].min || patch != t[i].patch ||
		    build != t[i].build)
			fail_msg("'%s' -> %d %u.%u.%u+%u", t[i].s, rc, maj, min, patch, build);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
	};
	return cmocka_run_group_tests_name("hostdrv/mnicctl_fw", tests, NULL, NULL);
}
