/* Boot record, slot selection and the update procedure over a NOR flash
 * (mnic/fwimage.h: layout and record; docs/firmware-images.md: the state
 * machine).  Pure C on the HAL flash contract (hal/flash.h), shared by the
 * loader (select), the firmware (confirm, update), mnicctl (a slot-flash
 * file) and the unit tests (a simulated flash that loses power after any
 * single erase or program).  The flash must be memory-mapped (images are
 * verified in place through hal_flash_map), its erase block a divisor of
 * the layout's MNIC_FLASH_SECTOR and its write unit a divisor of 4.
 *
 * Returns: 0 ok; > 0 an enum fwimg_err (the image was refused); < 0
 * -HAL_E* (state or flash error). */
#ifndef BOOT_BOOTREC_H
#define BOOT_BOOTREC_H

#include <stdint.h>

#include "boot/fwimage.h"
#include "hal/flash.h"
#include "mnic/fwimage.h"

uint32_t bootrec_crc(const struct mnic_bootrec *r);
void bootrec_default(struct mnic_bootrec *r);
int bootrec_valid(const struct mnic_bootrec *r);
/* Newest valid copy into *r: returns its index (0/1), or -1 with *r the
 * default record (fresh flash). */
int bootrec_load(struct hal_flash *f, struct mnic_bootrec *r);
/* seq + 1, CRC, erase the older copy's sector and program it there. */
int bootrec_store(struct hal_flash *f, struct mnic_bootrec *r);

uint32_t boot_slot_off(unsigned slot);
/* Verify the image in a slot in place (header, size, board, digest). */
int boot_slot_verify(struct hal_flash *f, unsigned slot, const struct fwimg_limits *lim,
		     struct fwimg_info *info);

/* ---- loader ------------------------------------------------------------ */
struct boot_choice {
	int slot;                      /* MNIC_SLOT_A/B, or -1: nothing bootable */
	uint8_t event;                 /* enum mnic_boot_event */
	uint8_t boot_count;
	struct fwimg_info info;        /* of the chosen slot */
	int refused[2];                /* fwimg error per slot refused this boot */
	int reverted;                  /* slot reverted this boot, or -1 */
};
/* Pick the slot to boot, updating and storing the record: a test slot
 * counts one more boot, or is reverted once it had max_boots; a slot that
 * fails verification is marked BAD; with no slot left the record's view,
 * any slot that verifies is taken (rescue). */
int boot_select(struct hal_flash *f, const struct fwimg_limits *lim, struct boot_choice *c);

/* ---- firmware ------------------------------------------------------------- */
/* The running firmware passed its self-test: a test slot becomes active.
 * Returns 1 if the record changed, 0 if nothing to confirm, < 0 error. */
int boot_confirm(struct hal_flash *f, unsigned running_slot);

enum fwupd_state { FWUPD_IDLE, FWUPD_WRITING, FWUPD_VERIFIED, FWUPD_FAILED };

struct fwupd {
	struct hal_flash *f;
	struct fwimg_limits lim;
	uint8_t state;                 /* enum fwupd_state */
	uint8_t slot;                  /* target slot */
	uint32_t total, written, erased;
	struct mnic_fwimg_hdr hdr;
	int last_err;
};

/* Start writing an image of total bytes whose header is hdr into the slot
 * that is not active.  running_slot (MNIC_SLOT_NONE if unknown) must be the
 * active one: an unconfirmed test image does not get to overwrite the only
 * confirmed slot.  Marks the target EMPTY in the record first. */
int fwupd_begin(struct fwupd *u, struct hal_flash *f, const struct fwimg_limits *lim,
		unsigned running_slot, const struct mnic_fwimg_hdr *hdr, uint32_t total);
/* Append len bytes at off (== bytes written so far): erases the sectors it
 * reaches (at most len / sector + 1), programs.  len is a multiple of 4
 * except for the last chunk. */
int fwupd_data(struct fwupd *u, uint32_t off, const uint8_t *data, uint32_t len);
/* Verify the written slot in place; only then mark it VALID. */
int fwupd_end(struct fwupd *u);
/* Boot the verified slot next, as a test (boot_count 0, max_boots). */
int fwupd_activate(struct hal_flash *f, unsigned slot, uint8_t max_boots);

#endif
