/* POSIX entry: the firmware brings the platform up itself (fw_main calls
 * hal_platform_init() with this argv). */
#include "hal/platform.h"

int main(int argc, char **argv)
{
	return fw_main(argc, argv);
}
