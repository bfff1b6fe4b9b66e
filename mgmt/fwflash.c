/* FW_QUERY(SLOTS), FW_FLASH_BEGIN/DATA/END, FW_ACTIVATE (mgmt/fwflash.h,
 * mnic/cmd.h, docs/firmware-images.md).
 *
 * The update streams into the slot that is not active (boot/bootrec.c,
 * fwupd_*): BEGIN marks it EMPTY before anything is erased; each DATA
 * command erases at most the sector(s) its chunk (<= 4 KiB) reaches and
 * programs it, so one command is a bounded slice of the event loop and
 * the NIC keeps serving traffic between them; END verifies the slot in
 * place (board, size, anti-rollback minimum, SHA-256, the signature by a
 * key of the board's key slot: boot/fwsig.c) and only then marks it
 * VALID; ACTIVATE re-verifies it, makes it the test slot and asks for a reset, done by
 * mnic_fwflash_poll() once the reply has been delivered.
 *
 * Every input is hostile: the header is checked by the same code as the
 * loader's (boot/fwimage.c), offsets must be in order, lengths are
 * bounded by the chunk limit and by in_len.  Refusals are counted. */
#include <stddef.h>
#include <string.h>

#include "mgmt/fwflash.h"
#include "hal/errno.h"
#include "mgmt/mgmt.h"

struct fwflash {
	struct hal_flash *flash;
	int have_handoff;
	struct mnic_boot_handoff handoff;
	struct fwimg_limits lim;
	struct fwsig_keys keys;        /* lim.keys points here */
	struct fwupd upd;
	uint8_t image_err[2];          /* cached in-place check per slot */
	int confirmed;
	int reset_pending;
	struct mnic_fwflash_counters cnt;
};

static struct fwflash fw;

_Static_assert(FWSIG_OPEN == MNIC_FW_SIG_OPEN && FWSIG_ENFORCED == MNIC_FW_SIG_ENFORCED &&
	       FWSIG_LOCKED == MNIC_FW_SIG_LOCKED, "signature policy on the wire");

/* Exposed to fwflash_boot.c through these two (no header: private pair). */
void mnic_fwflash_set_confirmed(int yes, int record_changed);
void mnic_fwflash_clear_reset(void);

static void check_slots(void)
{
	unsigned s;
	int rc;

	for (s = 0; s < 2; s++) {
		rc = boot_slot_verify(fw.flash, s, &fw.lim, NULL);
		fw.image_err[s] = rc > 0 ? (uint8_t)rc : 0;
	}
}

void mnic_fwflash_attach(struct hal_flash *f, const struct mnic_boot_handoff *h,
			 const struct fwimg_limits *lim)
{
	memset(&fw, 0, sizeof(fw));
	fw.flash = f;
	if (h && h->magic == MNIC_HANDOFF_MAGIC && h->slot <= MNIC_SLOT_B) {
		fw.have_handoff = 1;
		fw.handoff = *h;
	}
	if (lim)
		fw.lim = *lim;
	if (lim && lim->keys)
		fw.keys = *lim->keys;
	else
		fwsig_keys_load(&fw.keys, NULL);
	fw.lim.keys = &fw.keys;
	if (!fw.lim.max_image || fw.lim.max_image > MNIC_FLASH_SLOT_SIZE)
		fw.lim.max_image = MNIC_FLASH_SLOT_SIZE;
	if (f)
		check_slots();
}

/* record_changed: the confirm raised the anti-rollback minimum, so the
 * cached in-place checks (the other slot may now be too old) are redone. */
void mnic_fwflash_set_confirmed(int yes, int record_changed)
{
	fw.confirmed = yes;
	if (yes)
		fw.cnt.confirms++;
	if (record_changed && fw.flash)
		check_slots();
}

void mnic_fwflash_clear_reset(void)
{
	fw.reset_pending = 0;
	fw.cnt.resets++;
}

int mnic_fwflash_reset_pending(void)
{
	return fw.reset_pending;
}

const struct mnic_fwflash_counters *mnic_fwflash_counters(void)
{
	return &fw.cnt;
}

/* ---- refusals -------------------------------------------------------------------- */

struct call {
	uint8_t *status;
	uint32_t *syndrome;
};

/* Where each refusal comes from, for the syndrome's site. */
enum {
	SITE_NO_FLASH = 1, SITE_UPD_STATE, SITE_OFFSET, SITE_LEN, SITE_FLASH_IO, SITE_BUSY,
	SITE_ACT_SLOT, SITE_RESET,
};

static int refuse(struct call *c, uint64_t *counter, uint8_t status, int err, uint32_t site)
{
	(*counter)++;
	*c->status = status;
	*c->syndrome = MNIC_SYND(err, site);
	return -1;
}

/* rc from boot/bootrec.c: > 0 image error, < 0 -HAL_E*. */
static int refuse_rc(struct call *c, int rc)
{
	if (rc > 0)
		return refuse(c, &fw.cnt.refused_image, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL,
			      MNIC_FW_SITE_IMAGE + (uint32_t)rc);
	switch (-rc) {
	case HAL_EBUSY:
		return refuse(c, &fw.cnt.refused_state, MNIC_CMD_STAT_RES_BUSY, HAL_EBUSY, SITE_BUSY);
	case HAL_ERANGE:
		return refuse(c, &fw.cnt.refused_args, MNIC_CMD_STAT_BAD_PARAM, HAL_ERANGE,
			      SITE_OFFSET);
	case HAL_E2BIG:
		return refuse(c, &fw.cnt.refused_args, MNIC_CMD_STAT_EXCEED_LIM, HAL_E2BIG, SITE_LEN);
	case HAL_EINVAL:
	case HAL_EAGAIN:
		return refuse(c, &fw.cnt.refused_state, MNIC_CMD_STAT_BAD_SYS_STATE, -rc,
			      SITE_UPD_STATE);
	default:
		return refuse(c, &fw.cnt.flash_errors, MNIC_CMD_STAT_INT_ERR, -rc, SITE_FLASH_IO);
	}
}

static uint8_t running_slot(void)
{
	return fw.have_handoff ? fw.handoff.slot : MNIC_SLOT_NONE;
}

/* ---- handlers ---------------------------------------------------------------------- */

static int fw_query_slots(const struct mnic_mgmt *m, uint8_t *buf, uint32_t out_len,
			  uint32_t *produced, struct call *c)
{
	struct mnic_cmd_fw_slots_out o;
	struct mnic_bootrec r;
	unsigned s;

	if (out_len < sizeof(o))
		return refuse(c, &fw.cnt.refused_args, MNIC_CMD_STAT_BAD_OUTPUT_LEN, HAL_EINVAL,
			      SITE_LEN);
	memset(&o, 0, sizeof(o));
	o.board_id = m->cfg.board_id;
	o.running_slot = running_slot();
	o.chunk_max = MNIC_FW_FLASH_CHUNK_MAX;
	o.update_state = fw.upd.state;
	o.update_written = fw.upd.written;
	o.update_total = fw.upd.total;
	o.refused = (uint32_t)(fw.cnt.refused_state + fw.cnt.refused_image + fw.cnt.refused_args);
	o.flash_errors = (uint32_t)fw.cnt.flash_errors;
	if (fw.confirmed)
		o.flags |= MNIC_FW_F_CONFIRMED;
	if (fw.reset_pending)
		o.flags |= MNIC_FW_F_RESET_PENDING;
	if (fw.have_handoff) {
		o.flags |= MNIC_FW_F_LOADER;
		memcpy(o.running_version, &fw.handoff.hdr.version, sizeof(o.running_version));
		o.boot_event = fw.handoff.event;
		o.boot_count = fw.handoff.boot_count;
	}
	o.sig_policy = fw.keys.policy;
	o.revoked_below = fw.keys.slot.revoked_below;
	if (fw.keys.policy == FWSIG_ENFORCED)
		for (s = 0; s < MNIC_KEYSLOT_KEYS; s++)
			o.key_version[s] = fw.keys.slot.key[s].key_version;
	if (fw.flash) {
		o.flags |= MNIC_FW_F_FLASH;
		bootrec_load(fw.flash, &r);
		memcpy(o.bootrec, &r, sizeof(o.bootrec));
		for (s = 0; s < 2; s++) {
			struct mnic_fwimg_hdr h;

			memcpy(o.slot[s].version, &r.ver[s], sizeof(o.slot[s].version));
			o.slot[s].state = r.state[s];
			o.slot[s].image_err = fw.image_err[s];
			if (hal_flash_read(fw.flash, boot_slot_off(s), &h, sizeof(h)) == 0 &&
			    h.magic == MNIC_FWIMG_MAGIC)
				o.slot[s].payload_size = h.payload_size;
			if (s == r.active)
				o.slot[s].flags |= MNIC_FW_SLOT_F_ACTIVE;
			if (s == r.test)
				o.slot[s].flags |= MNIC_FW_SLOT_F_TEST;
			if (s == o.running_slot)
				o.slot[s].flags |= MNIC_FW_SLOT_F_RUNNING;
		}
	}
	memcpy(buf, &o, sizeof(o));
	*produced = sizeof(o);
	return 0;
}

static int fw_flash_begin(uint8_t *buf, uint32_t *produced, struct call *c)
{
	struct mnic_cmd_fw_flash_begin_in in;
	struct mnic_fwimg_hdr h;
	int rc;

	memcpy(&in, buf, sizeof(in));
	memcpy(&h, in.image_hdr, sizeof(h));
	if (fw.reset_pending)
		return refuse(c, &fw.cnt.refused_state, MNIC_CMD_STAT_BAD_SYS_STATE, HAL_EBUSY,
			      SITE_RESET);
	rc = fwupd_begin(&fw.upd, fw.flash, &fw.lim, running_slot(), &h, in.total);
	if (rc) {
		if (rc < 0 && rc != -HAL_EBUSY)
			fw.cnt.flash_errors++;
		return refuse_rc(c, rc);
	}
	fw.image_err[fw.upd.slot] = FWIMG_E_MAGIC;   /* EMPTY until END says otherwise */
	*produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

static int fw_flash_data(uint8_t *buf, uint32_t in_len, uint32_t *produced, struct call *c)
{
	struct mnic_cmd_fw_flash_data_in in;
	int rc;

	memcpy(&in, buf, sizeof(in));
	if (in.len == 0 || in.len > MNIC_FW_FLASH_CHUNK_MAX)
		return refuse(c, &fw.cnt.refused_args, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, SITE_LEN);
	if (in_len - sizeof(in) < in.len)   /* dispatcher: in_len >= sizeof(in) */
		return refuse(c, &fw.cnt.refused_args, MNIC_CMD_STAT_BAD_INPUT_LEN, HAL_EINVAL,
			      SITE_LEN);
	rc = fwupd_data(&fw.upd, in.offset, buf + sizeof(in), in.len);
	if (rc)
		return refuse_rc(c, rc);
	fw.cnt.chunks++;
	fw.cnt.bytes += in.len;
	*produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

static int fw_flash_end(uint8_t *buf, uint32_t *produced, struct call *c)
{
	struct mnic_cmd_fw_flash_end_out o;
	int rc;

	rc = fwupd_end(&fw.upd);
	if (rc < 0)
		return refuse_rc(c, rc);
	fw.image_err[fw.upd.slot] = (uint8_t)rc;
	memset(&o, 0, sizeof(o));
	o.slot = fw.upd.slot;
	o.image_err = (uint32_t)rc;
	memcpy(buf, &o, sizeof(o));
	*produced = sizeof(o);
	return rc ? refuse_rc(c, rc) : 0;
}

static int fw_activate(uint8_t *buf, uint32_t *produced, struct call *c)
{
	struct mnic_cmd_fw_activate_in in;
	struct mnic_bootrec r;
	unsigned slot;
	int rc;

	memcpy(&in, buf, sizeof(in));
	if (in.max_boots > 255)
		return refuse(c, &fw.cnt.refused_args, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL,
			      SITE_ACT_SLOT);
	if (fw.upd.state == FWUPD_WRITING)
		return refuse(c, &fw.cnt.refused_state, MNIC_CMD_STAT_BAD_SYS_STATE, HAL_EBUSY,
			      SITE_UPD_STATE);
	bootrec_load(fw.flash, &r);
	slot = r.active ^ 1u;
	if (running_slot() != MNIC_SLOT_NONE && running_slot() != r.active)
		return refuse_rc(c, -HAL_EBUSY);
	/* The flash may have changed since END (or the slot was written by a
	 * previous boot): verify again, right before it becomes bootable. */
	rc = boot_slot_verify(fw.flash, slot, &fw.lim, NULL);
	fw.image_err[slot] = rc > 0 ? (uint8_t)rc : 0;
	if (rc)
		return refuse_rc(c, rc);
	if (r.state[slot] != MNIC_SLOT_VALID)
		return refuse(c, &fw.cnt.refused_state, MNIC_CMD_STAT_BAD_SYS_STATE, HAL_EINVAL,
			      SITE_ACT_SLOT);
	rc = fwupd_activate(fw.flash, slot, (uint8_t)in.max_boots);
	if (rc)
		return refuse_rc(c, rc);
	fw.reset_pending = 1;
	*produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

int mnic_fwflash_cmd(struct mnic_mgmt *m, uint16_t opcode, uint16_t op_mod, uint8_t *buf,
		     uint32_t in_len, uint32_t out_len, uint32_t *produced, uint8_t *status,
		     uint32_t *syndrome)
{
	struct call c = { status, syndrome };

	fw.cnt.cmds++;
	if (opcode == MNIC_CMD_FW_QUERY && op_mod == MNIC_FW_QUERY_SLOTS)
		return fw_query_slots(m, buf, out_len, produced, &c);
	if (!fw.flash)
		return refuse(&c, &fw.cnt.refused_state, MNIC_CMD_STAT_BAD_SYS_STATE, HAL_ENODEV,
			      SITE_NO_FLASH);
	switch (opcode) {
	case MNIC_CMD_FW_FLASH_BEGIN:
		return fw_flash_begin(buf, produced, &c);
	case MNIC_CMD_FW_FLASH_DATA:
		return fw_flash_data(buf, in_len, produced, &c);
	case MNIC_CMD_FW_FLASH_END:
		return fw_flash_end(buf, produced, &c);
	case MNIC_CMD_FW_ACTIVATE:
		return fw_activate(buf, produced, &c);
	default:
		return refuse(&c, &fw.cnt.refused_args, MNIC_CMD_STAT_BAD_OP, HAL_EINVAL,
			      SITE_UPD_STATE);
	}
}
