/* The lab image's modes (modes.h): verified traffic generators and the
 * driver self-test. */
#include "modes.h"

const struct fw_mode fw_lab_modes[] = {
	{ "rawx", fw_mode_rawx, "exchange verified raw frames with peers=MAC,..." },
	{ "rcx", fw_mode_rcx, "verified RDMA traffic with peer=MAC (firmware plays the host)" },
	{ "selftest", fw_mode_selftest, "exercise every driver, exit 0 if all pass" },
};
const unsigned fw_lab_n_modes = sizeof(fw_lab_modes) / sizeof(fw_lab_modes[0]);
