/* Firmware update over the host interface and the boot self-test
 * (docs/firmware-images.md).  One instance per firmware: the slot flash,
 * what the loader handed over, the update in progress.
 *
 *   boot      mnic_fwflash_attach(), then mnic_fwflash_boot(): self-test;
 *             pass -> confirm a test slot; fail on a test boot -> reset
 *             (the loader counts it and reverts after max_boots)
 *   commands  FW_QUERY op_mod SLOTS, FW_FLASH_BEGIN/DATA/END, FW_ACTIVATE
 *             through mnic_fwflash_cmd() (rows in mgmt/cmd.c's table)
 *   loop      mnic_fwflash_poll(): the reset after FW_ACTIVATE's reply
 */
#ifndef MGMT_FWFLASH_H
#define MGMT_FWFLASH_H

#include <stdint.h>

#include "boot/bootrec.h"
#include "boot/fwsig.h"
#include "hal/platform.h"
#include "mnic/fwimage.h"

struct mnic_mgmt;

struct mnic_fwflash_counters {
	uint64_t cmds, refused_state, refused_image, refused_args, flash_errors, chunks, bytes,
		confirms, resets;
};

/* Use flash f (NULL: the board has none) and the loader's hand-off (NULL:
 * started without the loader); lim->keys (copied; NULL: no key slot, the
 * open policy) is the board's key slot.  mnic_fwflash_boot calls it with what the
 * platform has; unit tests with a simulated flash. */
void mnic_fwflash_attach(struct hal_flash *f, const struct mnic_boot_handoff *h,
			 const struct fwimg_limits *lim);
/* Bring-up: take the flash, hand-off and load range from p->boot, attach,
 * run the self-test, confirm or schedule a reset.  Returns 0 if the
 * self-test passed. */
int mnic_fwflash_boot(const struct hal_platform *p, uint64_t now_ns, int host_up, int eth_up);
/* Reset p (hal_platform_reset) once the pending reset's time has come
 * (after the reply). */
void mnic_fwflash_poll(struct hal_platform *p, uint64_t now_ns);
/* The FW_* commands: 0, or -1 with the status and syndrome set. */
int mnic_fwflash_cmd(struct mnic_mgmt *m, uint16_t opcode, uint16_t op_mod, uint8_t *buf,
		     uint32_t in_len, uint32_t out_len, uint32_t *produced, uint8_t *status,
		     uint32_t *syndrome);
const struct mnic_fwflash_counters *mnic_fwflash_counters(void);
/* Reset requested and not yet done (tests). */
int mnic_fwflash_reset_pending(void);

#endif
