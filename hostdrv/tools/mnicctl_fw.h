/* mnicctl: firmware images and flashing (issue #8, docs/firmware-images.md).
 *   image build|verify|sign|keygen|flash-file, and `image show` of a firmware image
 *   fw [activate]      versions of the running firmware and both slots
 *   flash IMG          stream an image into the inactive slot
 * Called from mnicctl.c's subcommand table. */
#ifndef MNICCTL_FW_H
#define MNICCTL_FW_H

#include <stdint.h>

#include "mnicctl.h"

int mnicctl_fw_image(const struct mnicctl_opts *o, int argc, const char **argv);
/* 1 when path starts with the firmware image magic (for `image show`). */
int mnicctl_fw_is_image(const char *path);
int mnicctl_fw_cmd(const struct mnicctl_opts *o, struct mnic_dev *dev, int argc, const char **argv);
int mnicctl_flash_cmd(const struct mnicctl_opts *o, struct mnic_dev *dev, int argc,
		      const char **argv);

/* The board's signature policy (FW_QUERY SLOTS): short name ("open",
 * "enforced", "locked") and a sentence, for `mnicctl info`.  0 or the
 * command's negative error. */
int mnicctl_fw_sig_policy(struct mnic_dev *dev, const char **name, const char **text);

/* "X.Y.Z" or "X.Y.Z+N" -> version; 0 or -1 (exposed for the unit tests) */
int mnicctl_fw_parse_version(const char *s, uint8_t *major, uint8_t *minor, uint16_t *patch,
			     uint32_t *build);

#endif
