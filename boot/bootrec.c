/* Boot record and A/B slot state machine (bootrec.h).
 *
 * Slot states:  EMPTY --fwupd_end ok--> VALID --boot fails verify--> BAD
 *                  \--fwupd_end bad--> BAD        (BAD/VALID --fwupd_begin--> EMPTY)
 * Record:       test = NONE --fwupd_activate--> test = S, boot_count 0
 *               each boot of S: boot_count + 1 (stored before the jump)
 *               S confirms itself: active = S, test = NONE
 *               boot_count reached max_boots: S is BAD, test = NONE (revert)
 *
 * Power loss: the record lives twice; a store rewrites the older copy only,
 * and every step that makes a slot unbootable (EMPTY before its erase) is
 * stored before the step, every step that makes it bootable (VALID, test)
 * after the data it vouches for is on flash.  The active slot is never
 * written by an update.  tests/unit/boot/test_bootrec.c cuts power after
 * every single erase and program of an update and of the boots after it.
 */
#include <string.h>

#include "boot/bootrec.h"
#include "hal/errno.h"
#include "lib/crc32.h"

#define REC_CRC_LEN offsetof(struct mnic_bootrec, crc)

/* CRC-32 (IEEE, as zlib's crc32) of everything before the crc field. */
uint32_t bootrec_crc(const struct mnic_bootrec *r)
{
	return crc32_ieee(0, r, REC_CRC_LEN);
}

void bootrec_default(struct mnic_bootrec *r)
{
	memset(r, 0, sizeof(*r));
	r->magic = MNIC_BOOTREC_MAGIC;
	r->version = MNIC_BOOTREC_VERSION;
	r->size = sizeof(*r);
	r->active = MNIC_SLOT_A;
	r->test = MNIC_SLOT_NONE;
	r->max_boots = MNIC_BOOT_MAX_BOOTS;
	r->last_slot = MNIC_SLOT_NONE;
}

int bootrec_valid(const struct mnic_bootrec *r)
{
	return r->magic == MNIC_BOOTREC_MAGIC && r->version == MNIC_BOOTREC_VERSION &&
	       r->size == sizeof(*r) && r->crc == bootrec_crc(r) && r->active <= MNIC_SLOT_B &&
	       (r->test <= MNIC_SLOT_B || r->test == MNIC_SLOT_NONE) && r->max_boots > 0 &&
	       r->state[0] <= MNIC_SLOT_BAD && r->state[1] <= MNIC_SLOT_BAD;
}

static const uint32_t rec_off[2] = { MNIC_FLASH_BOOTREC0, MNIC_FLASH_BOOTREC1 };

static int read_rec(struct hal_flash *f, unsigned i, struct mnic_bootrec *r)
{
	if (hal_flash_read(f, rec_off[i], r, sizeof(*r)) != 0)
		return 0;
	return bootrec_valid(r);
}

int bootrec_load(struct hal_flash *f, struct mnic_bootrec *r)
{
	struct mnic_bootrec c[2];
	int ok0 = read_rec(f, 0, &c[0]), ok1 = read_rec(f, 1, &c[1]), i;

	if (!ok0 && !ok1) {
		bootrec_default(r);
		return -1;
	}
	/* serial-number order (RFC 1982 style): survives seq wrapping */
	if (ok0 && ok1)
		i = (int32_t)(c[1].seq - c[0].seq) > 0 ? 1 : 0;
	else
		i = ok1;
	*r = c[i];
	return i;
}

int bootrec_store(struct hal_flash *f, struct mnic_bootrec *r)
{
	struct mnic_bootrec cur;
	int newest = bootrec_load(f, &cur), target, rc;

	target = newest == 0 ? 1 : 0;
	if (newest >= 0) {
		r->seq = cur.seq + 1;
		/* anti-rollback: the minimum only ever rises, whoever writes */
		if (fwimg_version_cmp(&r->min_version, &cur.min_version) < 0)
			r->min_version = cur.min_version;
	} else {
		r->seq++;
	}
	r->magic = MNIC_BOOTREC_MAGIC;
	r->version = MNIC_BOOTREC_VERSION;
	r->size = sizeof(*r);
	r->crc = bootrec_crc(r);
	if ((rc = hal_flash_erase(f, rec_off[target])) != 0)
		return rc;
	return hal_flash_write(f, rec_off[target], r, sizeof(*r));
}

uint32_t boot_slot_off(unsigned slot)
{
	return slot == MNIC_SLOT_B ? MNIC_FLASH_SLOT_B : MNIC_FLASH_SLOT_A;
}

/* lim with the slot size and the record's anti-rollback minimum (the
 * higher of the caller's and the record's) */
static void slot_limits(struct hal_flash *f, const struct fwimg_limits *lim,
			struct fwimg_limits *l)
{
	struct mnic_bootrec r;

	*l = *lim;
	if (!l->max_image || l->max_image > MNIC_FLASH_SLOT_SIZE)
		l->max_image = MNIC_FLASH_SLOT_SIZE;
	bootrec_load(f, &r);
	if (fwimg_version_cmp(&l->min_version, &r.min_version) < 0)
		l->min_version = r.min_version;
}

int boot_slot_verify(struct hal_flash *f, unsigned slot, const struct fwimg_limits *lim,
		     struct fwimg_info *info)
{
	struct fwimg_limits l;
	const uint8_t *p;

	if (slot > MNIC_SLOT_B)
		return -HAL_EINVAL;
	slot_limits(f, lim, &l);
	p = hal_flash_map(f, boot_slot_off(slot), MNIC_FLASH_SLOT_SIZE);
	if (!p)
		return -HAL_EIO;
	return fwimg_verify(p, MNIC_FLASH_SLOT_SIZE, &l, info);
}

/* ---- loader ------------------------------------------------------------------ */

static void note(struct mnic_bootrec *r, uint8_t ev, unsigned slot)
{
	r->last_event = ev;
	r->last_slot = (uint8_t)slot;
}

int boot_select(struct hal_flash *f, const struct fwimg_limits *lim, struct boot_choice *c)
{
	struct mnic_bootrec r;
	uint8_t ev = MNIC_BOOT_EV_NONE;   /* what this boot did, for the hand-off */
	int dirty = 0, rc, attempt;
	unsigned slot, s;

	memset(c, 0, sizeof(*c));
	c->slot = -1;
	c->reverted = -1;
	if (bootrec_load(f, &r) < 0)
		dirty = 1;             /* fresh flash: rescue below finds the image */
	for (attempt = 0; attempt < 3; attempt++) {
		if (r.test != MNIC_SLOT_NONE) {
			if (r.boot_count >= r.max_boots) {
				r.state[r.test] = MNIC_SLOT_BAD;
				note(&r, MNIC_BOOT_EV_REVERTED, r.test);
				c->reverted = r.test;
				ev = MNIC_BOOT_EV_REVERTED;
				r.reverts++;
				r.test = MNIC_SLOT_NONE;
				r.boot_count = 0;
				dirty = 1;
				continue;
			}
			slot = r.test;
			r.boot_count++;
			note(&r, MNIC_BOOT_EV_TEST, slot);
			ev = MNIC_BOOT_EV_TEST;
			dirty = 1;
		} else {
			slot = r.active;
		}
		rc = r.state[slot] == MNIC_SLOT_VALID ? boot_slot_verify(f, slot, lim, &c->info)
						       : -HAL_ENODEV;
		if (rc == 0) {
			c->slot = (int)slot;
			/* this boot's event: a test boot, else what happened on the way */
			c->event = ev;
			c->boot_count = r.test == slot ? r.boot_count : 0;
			if (dirty && (rc = bootrec_store(f, &r)) != 0)
				return rc;
			return 0;
		}
		c->refused[slot] = rc;
		if (r.state[slot] == MNIC_SLOT_VALID)
			r.state[slot] = MNIC_SLOT_BAD;
		note(&r, MNIC_BOOT_EV_REFUSED, slot);
		dirty = 1;
		ev = MNIC_BOOT_EV_REFUSED;
		if (slot == r.test) {
			r.test = MNIC_SLOT_NONE;
			r.boot_count = 0;
			continue;
		}
		if (r.state[slot ^ 1u] == MNIC_SLOT_VALID && r.test == MNIC_SLOT_NONE)
			r.active = (uint8_t)(slot ^ 1u);
		else
			break;
	}
	/* Rescue: the record names nothing bootable; trust only the digest. */
	for (s = MNIC_SLOT_A; s <= MNIC_SLOT_B; s++) {
		if (boot_slot_verify(f, s, lim, &c->info) != 0)
			continue;
		r.active = (uint8_t)s;
		r.state[s] = MNIC_SLOT_VALID;
		r.ver[s] = c->info.hdr.version;
		r.test = MNIC_SLOT_NONE;
		r.boot_count = 0;
		note(&r, MNIC_BOOT_EV_RESCUE, s);
		c->slot = (int)s;
		c->event = MNIC_BOOT_EV_RESCUE;
		return bootrec_store(f, &r);
	}
	memset(&c->info, 0, sizeof(c->info));
	return -HAL_ENODEV;
}

/* ---- firmware --------------------------------------------------------------------- */

int boot_confirm(struct hal_flash *f, unsigned running_slot)
{
	struct mnic_bootrec r;

	bootrec_load(f, &r);
	if (r.test == MNIC_SLOT_NONE || r.test != running_slot)
		return 0;
	r.active = r.test;
	r.test = MNIC_SLOT_NONE;
	r.boot_count = 0;
	/* anti-rollback: nothing older than the confirmed image boots again */
	if (fwimg_version_cmp(&r.min_version, &r.ver[running_slot]) < 0)
		r.min_version = r.ver[running_slot];
	note(&r, MNIC_BOOT_EV_CONFIRMED, running_slot);
	return bootrec_store(f, &r) == 0 ? 1 : -HAL_EIO;
}

int fwupd_begin(struct fwupd *u, struct hal_flash *f, const struct fwimg_limits *lim,
		unsigned running_slot, const struct mnic_fwimg_hdr *hdr, uint32_t total)
{
	struct fwimg_limits l;
	struct mnic_bootrec r;
	int rc;

	memset(u, 0, sizeof(*u));
	u->f = f;
	slot_limits(f, lim, &l);
	u->lim = l;
	if ((rc = fwimg_check_hdr(hdr, &l)) != 0)
		return rc;
	if (total < MNIC_FWIMG_HDR_SIZE + hdr->payload_size)
		return FWIMG_E_TRUNCATED;
	if (total > l.max_image)
		return FWIMG_E_OVERSIZED;
	bootrec_load(f, &r);
	if (running_slot != MNIC_SLOT_NONE && running_slot != r.active)
		return -HAL_EBUSY;     /* running an unconfirmed test image */
	u->slot = (uint8_t)(r.active ^ 1u);
	u->total = total;
	u->hdr = *hdr;
	/* Unbootable first, then erase (power loss in between: EMPTY slot). */
	r.state[u->slot] = MNIC_SLOT_EMPTY;
	memset(&r.ver[u->slot], 0, sizeof(r.ver[u->slot]));
	if (r.test == u->slot) {
		r.test = MNIC_SLOT_NONE;
		r.boot_count = 0;
	}
	if ((rc = bootrec_store(f, &r)) != 0)
		return rc;
	u->state = FWUPD_WRITING;
	return 0;
}

int fwupd_data(struct fwupd *u, uint32_t off, const uint8_t *data, uint32_t len)
{
	uint32_t base = boot_slot_off(u->slot), whole, end;
	uint8_t tail[4];
	int rc;

	if (u->state != FWUPD_WRITING)
		return -HAL_EINVAL;
	if (off != u->written)
		return -HAL_ERANGE;
	if (len > u->total - u->written)
		return -HAL_E2BIG;
	end = off + len;
	if ((len & 3u) && end != u->total)
		return -HAL_EINVAL;
	while (u->erased < end) {
		if ((rc = hal_flash_erase(u->f, base + u->erased)) != 0)
			return rc;
		u->erased += u->f->info->erase_block;
	}
	whole = len & ~3u;
	if (whole && (rc = hal_flash_write(u->f, base + off, data, whole)) != 0)
		return rc;
	if (whole != len) {
		memset(tail, 0xff, sizeof(tail));
		memcpy(tail, data + whole, len - whole);
		if ((rc = hal_flash_write(u->f, base + off + whole, tail, 4)) != 0)
			return rc;
	}
	u->written = end;
	return 0;
}

int fwupd_end(struct fwupd *u)
{
	struct fwimg_info info;
	struct mnic_bootrec r;
	int rc, vrc;

	if (u->state != FWUPD_WRITING)
		return -HAL_EINVAL;
	if (u->written != u->total)
		return -HAL_EAGAIN;
	vrc = boot_slot_verify(u->f, u->slot, &u->lim, &info);
	if (vrc == 0 && (info.image_len != u->total ||
			 memcmp(&info.hdr, &u->hdr, sizeof(info.hdr)) != 0))
		vrc = FWIMG_E_TRAILING;
	bootrec_load(u->f, &r);
	r.state[u->slot] = vrc == 0 ? MNIC_SLOT_VALID : MNIC_SLOT_BAD;
	if (vrc == 0)
		r.ver[u->slot] = info.hdr.version;
	if ((rc = bootrec_store(u->f, &r)) != 0)
		return rc;
	u->state = vrc == 0 ? FWUPD_VERIFIED : FWUPD_FAILED;
	u->last_err = vrc;
	return vrc;
}

int fwupd_activate(struct hal_flash *f, unsigned slot, uint8_t max_boots)
{
	struct mnic_bootrec r;

	bootrec_load(f, &r);
	if (slot > MNIC_SLOT_B || slot == r.active || r.state[slot] != MNIC_SLOT_VALID)
		return -HAL_EINVAL;
	r.test = (uint8_t)slot;
	r.boot_count = 0;
	r.max_boots = max_boots ? max_boots : MNIC_BOOT_MAX_BOOTS;
	note(&r, MNIC_BOOT_EV_NONE, slot);
	return bootrec_store(f, &r);
}
