/* The product image: no lab mode (modes.h). */
#include "modes.h"

const struct fw_mode fw_lab_modes[1] = { { NULL, NULL, NULL } };
const unsigned fw_lab_n_modes = 0;
