// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: devlink, the kernel's interface for NIC firmware
 * (Documentation/networking/devlink/: devlink-info, devlink-flash,
 * devlink-health), one instance per PCI function:
 *
 *   info_get      driver, serial number (the MAC), board id, the running
 *                 firmware and command-interface revision, the stored
 *                 version of each valid slot and of the next boot
 *                 (FW_QUERY op_mod SLOTS)
 *   flash_update  the image the core loaded with request_firmware (from
 *                 /lib/firmware), checked here as `mnicctl flash` checks a
 *                 file (docs/firmware-images.md "Image"), then streamed into
 *                 the inactive slot with FW_FLASH_BEGIN, DATA (one chunk of
 *                 MNIC_FW_FLASH_CHUNK_MAX per command) and END, progress as
 *                 status notifications; a refusal by the NIC is reported
 *                 with its status and syndrome, whatever check made it.
 *                 No activation: `mnicctl fw activate` does that.
 *   health "fw"   fed by the init segment's health buffer (mnic/abi.h): a
 *                 poller reports state FAILED, a state other than READY, a
 *                 command queue no longer RUNNING, or a heartbeat that stops
 *                 moving; diagnose reads the buffer live, dump is the
 *                 snapshot taken when the error was reported.
 *
 * Lifetime: devlink_register is probe's last step and devlink_unregister
 * remove's first after `removing` is set.  The core holds a reference on
 * the instance around every op and devlink_unregister waits for it, so the
 * ops always run with the BAR mapped and the command queue latched, and
 * need no remove_lock; a flash in progress sees `removing` (its commands
 * give up, the loop stops) and returns.
 */
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/version.h>
#include <asm/unaligned.h>
#include <crypto/sha2.h>
#include <net/devlink.h>

#include "mnic.h"
#include "mnic/fwimage.h"

static unsigned int health_poll_ms = 1000;
module_param(health_poll_ms, uint, 0444);
MODULE_PARM_DESC(health_poll_ms, "how often the devlink health reporter reads the health buffer (ms; 0: never)");

static unsigned int health_stall_ms = 5000;
module_param(health_stall_ms, uint, 0644);
MODULE_PARM_DESC(health_stall_ms, "a heartbeat that does not move for this long is a firmware error (ms; 0: not judged)");

struct mnic_dl_priv {
	struct mnic_kdev *d;
};

static struct mnic_kdev *dl_dev(struct devlink *dl)
{
	return ((struct mnic_dl_priv *)devlink_priv(dl))->d;
}

/* One command as MNIC_CTX_MGMT from a devlink op: interruptible by a fatal
 * signal and by removal (not a MNIC_KCMD_F_MODULE command).  0 with the
 * answer's header in out (status may be an error), or -errno when the
 * command did not complete or was not delivered. */
static int dl_cmd(struct mnic_kdev *d, void *in, u32 in_len, void *out, u32 out_len)
{
	struct mnic_kcmd k = { .in = in, .in_len = in_len, .out = out, .out_len = out_len };
	int ret;

	((struct mnic_cmd_in_hdr *)in)->ctx = MNIC_CTX_MGMT;
	ret = mnic_cmd_run(d, &k);
	if (ret)
		return ret;
	return k.delivery == MNIC_CMD_DELIV_OK ? 0 : -EIO;
}

static void ver_str(const u8 raw[8], char *buf, size_t len)
{
	struct mnic_fw_version v;

	memcpy(&v, raw, sizeof(v));
	snprintf(buf, len, "%u.%u.%u+%u", v.major, v.minor, v.patch, v.build);
}

/* ---- info ---------------------------------------------------------------- */

static const char *const slot_version_names[2] = { "fw.slot_a", "fw.slot_b" };

static int mnic_dl_info_get(struct devlink *dl, struct devlink_info_req *req,
			    struct netlink_ext_ack *extack)
{
	struct mnic_kdev *d = dl_dev(dl);
	struct mnic_cmd_simple_in in = {
		.hdr = { .opcode = MNIC_CMD_FW_QUERY, .op_mod = MNIC_FW_QUERY_SLOTS },
	};
	char board[sizeof_field(struct mnic_init_seg, board_name) + 1];
	struct mnic_cmd_fw_slots_out s;
	char buf[40];
	u32 fw;
	u8 mac[6];
	int ret, i, next;

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
	/* From 6.2 on the core puts the driver name itself. */
	ret = devlink_info_driver_name_put(req, KBUILD_MODNAME);
	if (ret)
		return ret;
#endif
	/* The MAC is the NIC's factory identity: its serial number. */
	memcpy_fromio(mac, d->seg->mac, sizeof(mac));
	snprintf(buf, sizeof(buf), "%pm", mac);
	ret = devlink_info_serial_number_put(req, buf);
	if (ret)
		return ret;
	snprintf(buf, sizeof(buf), "%u", ioread32(&d->seg->board_id));
	ret = devlink_info_version_fixed_put(req, DEVLINK_INFO_VERSION_GENERIC_BOARD_ID, buf);
	if (ret)
		return ret;
	memcpy_fromio(board, d->seg->board_name, sizeof(board) - 1);
	board[sizeof(board) - 1] = '\0';
	ret = devlink_info_version_fixed_put(req, "board.name", board);
	if (ret)
		return ret;
	snprintf(buf, sizeof(buf), "%u", ioread32(&d->seg->cmdif_rev));
	ret = devlink_info_version_running_put(req, DEVLINK_INFO_VERSION_GENERIC_FW_MGMT_API, buf);
	if (ret)
		return ret;

	ret = dl_cmd(d, &in, sizeof(in), &s, sizeof(s));
	if (ret || s.hdr.status != MNIC_CMD_STAT_OK) {
		NL_SET_ERR_MSG_MOD(extack, "the NIC did not answer FW_QUERY (slots): see dmesg");
		dev_err(&d->pdev->dev, "devlink info: FW_QUERY slots: error %d, status 0x%x, syndrome 0x%08x\n",
			ret, s.hdr.status, s.hdr.syndrome);
		return ret ? ret : -EIO;
	}
	if (s.flags & MNIC_FW_F_LOADER) {
		ver_str(s.running_version, buf, sizeof(buf));
	} else {
		/* Not booted from a slot: the build's own version. */
		fw = ioread32(&d->seg->fw_version);
		snprintf(buf, sizeof(buf), "%u.%u.%u", fw >> 24, (fw >> 16) & 0xff, fw & 0xffff);
	}
	ret = devlink_info_version_running_put(req, DEVLINK_INFO_VERSION_GENERIC_FW, buf);
	if (ret || !(s.flags & MNIC_FW_F_FLASH))
		return ret;
	/* Stored: every slot that holds a verified image, and "fw" for the
	 * one the loader boots next: the test slot while one is on trial,
	 * else the active (confirmed) slot. */
	next = -1;
	for (i = 0; i < 2; i++) {
		if (s.slot[i].state != MNIC_SLOT_VALID)
			continue;
		if (s.slot[i].flags & MNIC_FW_SLOT_F_TEST ||
		    (next < 0 && s.slot[i].flags & MNIC_FW_SLOT_F_ACTIVE))
			next = i;
		ver_str(s.slot[i].version, buf, sizeof(buf));
		ret = devlink_info_version_stored_put(req, slot_version_names[i], buf);
		if (ret)
			return ret;
	}
	if (next < 0)
		return 0;
	ver_str(s.slot[next].version, buf, sizeof(buf));
	return devlink_info_version_stored_put(req, DEVLINK_INFO_VERSION_GENERIC_FW, buf);
}

/* ---- image checks before anything is sent ----------------------------------
 * The checks `mnicctl flash` makes on a file (docs/firmware-images.md
 * "Image"; the device and the host tools share boot/fwimage.c, which this
 * module may not include): header fields, a payload inside the file, the
 * digest, a well-formed TLV area, nothing after the image.  Board and load
 * range are the NIC's to check (it knows them): its refusal comes back as
 * a status.  Every image is hostile: lengths are compared on the side that
 * cannot wrap. */
#define MNIC_IMG_CHECKS(X)                                                        \
	X(IMG_OK, "ok")                                                           \
	X(IMG_TRUNCATED, "image truncated: shorter than its header says")         \
	X(IMG_MAGIC, "not a firmware image (bad magic)")                          \
	X(IMG_HDR_VERSION, "unsupported image header version")                    \
	X(IMG_HDR_SIZE, "bad image header size")                                  \
	X(IMG_RESERVED, "image header: reserved field or flags not zero")         \
	X(IMG_EMPTY, "image payload is empty")                                    \
	X(IMG_OVERSIZED, "image larger than a firmware slot")                     \
	X(IMG_ENTRY, "image entry point outside its payload")                     \
	X(IMG_DIGEST, "image SHA-256 digest mismatch (corrupt image)")             \
	X(IMG_TLV, "image TLV area malformed")                                    \
	X(IMG_TRAILING, "bytes after the image")

#define MNIC_IMG_ENUM_(name, text) name,
enum mnic_img_check { MNIC_IMG_CHECKS(MNIC_IMG_ENUM_) };
#undef MNIC_IMG_ENUM_
#define MNIC_IMG_TEXT_(name, text) [name] = text,
static const char *const img_check_text[] = { MNIC_IMG_CHECKS(MNIC_IMG_TEXT_) };
#undef MNIC_IMG_TEXT_

static bool all_zero(const u8 *p, size_t n)
{
	return !memchr_inv(p, 0, n);
}

/* The TLV area at a (len bytes available): its info, then TLVs of
 * {type, len, value padded to 4}, ending exactly at info.total. */
static bool tlv_area_ok(const u8 *a, size_t len, u32 *total)
{
	struct mnic_fwimg_tlv_info info;
	struct mnic_fwimg_tlv t;
	u32 off, step;

	if (len < sizeof(info))
		return false;
	memcpy(&info, a, sizeof(info));
	if (info.magic != MNIC_FWIMG_TLV_MAGIC || info.reserved || info.total < sizeof(info) ||
	    info.total > len || info.total > MNIC_FWIMG_TLV_MAX || info.total % 4)
		return false;
	for (off = sizeof(info); off < info.total; off += step) {
		if (info.total - off < sizeof(t))
			return false;
		memcpy(&t, a + off, sizeof(t));
		step = sizeof(t) + ALIGN((u32)t.len, 4u);
		if (step > info.total - off)
			return false;
	}
	*total = info.total;
	return true;
}

static enum mnic_img_check image_check(const u8 *img, size_t len)
{
	struct mnic_fwimg_hdr h, z;
	struct sha256_state sha;
	u8 digest[SHA256_DIGEST_SIZE];
	size_t end;
	u32 tlv;

	BUILD_BUG_ON(sizeof(digest) != MNIC_FWIMG_DIGEST_LEN);
	if (len >= sizeof(h.magic) && get_unaligned_le32(img) != MNIC_FWIMG_MAGIC)
		return IMG_MAGIC;
	if (len < sizeof(h))
		return IMG_TRUNCATED;
	memcpy(&h, img, sizeof(h));
	if (h.hdr_version != MNIC_FWIMG_HDR_VERSION)
		return IMG_HDR_VERSION;
	if (h.hdr_size != MNIC_FWIMG_HDR_SIZE)
		return IMG_HDR_SIZE;
	if (h.flags || h.reserved0 || !all_zero(h.reserved1, sizeof(h.reserved1)))
		return IMG_RESERVED;
	if (!h.payload_size)
		return IMG_EMPTY;
	if (h.payload_size > MNIC_FLASH_SLOT_SIZE - MNIC_FWIMG_HDR_SIZE)
		return IMG_OVERSIZED;
	if (h.entry < h.load_addr || h.entry - h.load_addr >= h.payload_size)
		return IMG_ENTRY;
	if (h.payload_size > len - MNIC_FWIMG_HDR_SIZE)
		return IMG_TRUNCATED;
	/* digest = SHA-256 of the header with its digest zeroed, then the payload */
	z = h;
	memset(z.digest, 0, sizeof(z.digest));
	sha256_init(&sha);
	sha256_update(&sha, (const u8 *)&z, sizeof(z));
	sha256_update(&sha, img + MNIC_FWIMG_HDR_SIZE, h.payload_size);
	sha256_final(&sha, digest);
	if (memcmp(digest, h.digest, sizeof(digest)))
		return IMG_DIGEST;
	end = MNIC_FWIMG_HDR_SIZE + h.payload_size;
	if (len - end >= 2 && get_unaligned_le16(img + end) == MNIC_FWIMG_TLV_MAGIC) {
		if (!tlv_area_ok(img + end, len - end, &tlv))
			return IMG_TLV;
		if (tlv > MNIC_FLASH_SLOT_SIZE - end)
			return IMG_OVERSIZED;
		end += tlv;
	}
	return end == len ? IMG_OK : IMG_TRAILING;
}

/* ---- flash ---------------------------------------------------------------- */

/* An extack message is a string literal (NL_SET_ERR_MSG; 6.1 has no
 * formatted ones): one per check and per status, from the same lists. */
static void img_check_extack(struct netlink_ext_ack *extack, enum mnic_img_check c)
{
#define MNIC_IMG_EXTACK_(name, text)            \
	case name:                              \
		NL_SET_ERR_MSG(extack, text);   \
		break;
	switch (c) {
	MNIC_IMG_CHECKS(MNIC_IMG_EXTACK_)
	}
#undef MNIC_IMG_EXTACK_
}

/* A refusal's extack names the status; the syndrome, which says which
 * check of the NIC refused, goes into the last status notification and
 * the log. */
static void refused_extack(struct netlink_ext_ack *extack, u8 status)
{
#define MNIC_REFUSED_EXTACK_(name, value)                                                   \
	case value:                                                                         \
		NL_SET_ERR_MSG(extack, "the NIC refused the image: " #name                   \
			       "; the status message and dmesg give the syndrome");          \
		break;
	switch (status) {
	MNIC_CMD_STATUS_LIST(MNIC_REFUSED_EXTACK_)
	default:
		NL_SET_ERR_MSG_MOD(extack, "the NIC refused the image with an unknown status: see dmesg");
	}
#undef MNIC_REFUSED_EXTACK_
}

/* The device's image checks (site MNIC_FW_SITE_IMAGE + N), named. */
#define MNIC_FWIMG_TEXT_(name, text) text,
static const char *const fwimg_text[] = { MNIC_FWIMG_ERR_LIST(MNIC_FWIMG_TEXT_) };
#undef MNIC_FWIMG_TEXT_

#define MNIC_STATUS_NAME_(name, value) [value] = #name + sizeof("MNIC_CMD_STAT_") - 1,
static const char *const status_names[] = { MNIC_CMD_STATUS_LIST(MNIC_STATUS_NAME_) };
#undef MNIC_STATUS_NAME_

static int refused(struct mnic_kdev *d, const char *what, const struct mnic_cmd_out_hdr *h,
		   struct netlink_ext_ack *extack)
{
	const char *name = h->status < ARRAY_SIZE(status_names) ? status_names[h->status] : NULL;
	u32 err = MNIC_SYND_ERRNO(h->syndrome), site = MNIC_SYND_SITE(h->syndrome);
	const char *check = site >= MNIC_FW_SITE_IMAGE &&
				    site - MNIC_FW_SITE_IMAGE < ARRAY_SIZE(fwimg_text)
			    ? fwimg_text[site - MNIC_FW_SITE_IMAGE] : NULL;
	char msg[224];

	mnic_count(d, MNIC_KCNT_flash_refused_fw);
	snprintf(msg, sizeof(msg),
		 "%s refused by the NIC: status %s (0x%x), syndrome 0x%08x: errno %u, site 0x%x%s%s",
		 what, name ? name : "unknown", h->status, h->syndrome, err, site,
		 check ? ": image " : "", check ? check : "");
	devlink_flash_update_status_notify(d->devlink, msg, NULL, 0, 0);
	dev_err(&d->pdev->dev, "devlink flash: %s\n", msg);
	refused_extack(extack, h->status);
	return err > 0 && err < MAX_ERRNO ? -(int)err : -EIO;
}

/* One FW_* command of a flash: 0 when the NIC answered OK. */
static int flash_cmd(struct mnic_kdev *d, const char *what, void *in, u32 in_len, void *out,
		     u32 out_len, struct netlink_ext_ack *extack)
{
	int ret = dl_cmd(d, in, in_len, out, out_len);

	if (ret) {
		mnic_count(d, MNIC_KCNT_flash_aborted);
		dev_err(&d->pdev->dev, "devlink flash: %s did not complete (%d)\n", what, ret);
		NL_SET_ERR_MSG_MOD(extack, "a flash command did not complete (NIC failed, timeout, signal or removal): see dmesg");
		return ret;
	}
	if (((struct mnic_cmd_out_hdr *)out)->status != MNIC_CMD_STAT_OK)
		return refused(d, what, out, extack);
	return 0;
}

static int flash_stream(struct mnic_kdev *d, const struct firmware *fw,
			struct netlink_ext_ack *extack)
{
	struct mnic_cmd_fw_flash_begin_in begin = { .hdr = { .opcode = MNIC_CMD_FW_FLASH_BEGIN } };
	struct mnic_cmd_simple_in end = { .hdr = { .opcode = MNIC_CMD_FW_FLASH_END } };
	struct mnic_cmd_fw_flash_data_in din;
	struct mnic_cmd_fw_flash_end_out eout;
	struct mnic_cmd_simple_out sout;
	u32 off, n, total = fw->size;
	char msg[96];
	u8 *buf;
	int ret;

	devlink_flash_update_status_notify(d->devlink, "Preparing to flash", "fw", 0, total);
	begin.total = total;
	memcpy(begin.image_hdr, fw->data, sizeof(begin.image_hdr));
	ret = flash_cmd(d, "FW_FLASH_BEGIN", &begin, sizeof(begin), &sout, sizeof(sout), extack);
	if (ret)
		return ret;
	buf = kmalloc(sizeof(din) + MNIC_FW_FLASH_CHUNK_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (off = 0; off < total; off += n) {
		if (READ_ONCE(d->removing) || fatal_signal_pending(current)) {
			mnic_count(d, MNIC_KCNT_flash_aborted);
			NL_SET_ERR_MSG_MOD(extack, "flash stopped: device removal or signal (the slot stays empty)");
			ret = -EINTR;
			goto out;
		}
		n = min_t(u32, total - off, MNIC_FW_FLASH_CHUNK_MAX);
		memset(&din, 0, sizeof(din));
		din.hdr.opcode = MNIC_CMD_FW_FLASH_DATA;
		din.offset = off;
		din.len = n;
		memcpy(buf, &din, sizeof(din));
		memcpy(buf + sizeof(din), fw->data + off, n);
		ret = flash_cmd(d, "FW_FLASH_DATA", buf, sizeof(din) + n, &sout, sizeof(sout), extack);
		if (ret)
			goto out;
		devlink_flash_update_status_notify(d->devlink, "Flashing", "fw", off + n, total);
	}
	devlink_flash_update_status_notify(d->devlink, "Verifying", "fw", 0, 0);
	ret = flash_cmd(d, "FW_FLASH_END", &end, sizeof(end), &eout, sizeof(eout), extack);
	if (ret)
		goto out;
	mnic_count(d, MNIC_KCNT_flash_ok);
	snprintf(msg, sizeof(msg), "Slot %c written and verified (activate: mnicctl fw activate)",
		 eout.slot < 2 ? 'A' + eout.slot : '?');
	devlink_flash_update_status_notify(d->devlink, msg, "fw", total, total);
	dev_info(&d->pdev->dev, "devlink flash: %u bytes into slot %c, verified\n", total,
		 eout.slot < 2 ? 'A' + eout.slot : '?');
out:
	kfree(buf);
	return ret;
}

static int mnic_dl_flash_update(struct devlink *dl, struct devlink_flash_update_params *params,
				struct netlink_ext_ack *extack)
{
	struct mnic_kdev *d = dl_dev(dl);
	enum mnic_img_check c;
	int ret;

	c = image_check(params->fw->data, params->fw->size);
	if (c != IMG_OK) {
		mnic_count(d, MNIC_KCNT_flash_refused_image);
		dev_err(&d->pdev->dev, "devlink flash: %s (%zu bytes): not sent\n", img_check_text[c],
			params->fw->size);
		img_check_extack(extack, c);
		return -EINVAL;
	}
	if (!mutex_trylock(&d->flash_lock)) {
		mnic_count(d, MNIC_KCNT_flash_busy);
		NL_SET_ERR_MSG_MOD(extack, "another firmware update of this NIC is in progress");
		return -EBUSY;
	}
	ret = flash_stream(d, params->fw, extack);
	mutex_unlock(&d->flash_lock);
	return ret;
}

static const struct devlink_ops mnic_devlink_ops = {
	.info_get = mnic_dl_info_get,
	.flash_update = mnic_dl_flash_update,
};

/* ---- health reporter "fw" --------------------------------------------------- */

struct mnic_health_snap {
	const char *cause;                 /* NULL: healthy */
	u32 state, cmdq_status, cmdq_syndrome;
	u32 hb_idle_ms;                    /* since the poller saw the heartbeat move */
	struct mnic_health h;
};

static void health_read(struct mnic_kdev *d, struct mnic_health_snap *s)
{
	s->state = ioread32(&d->seg->state);
	s->cmdq_status = ioread32(&d->seg->cmdq_status);
	s->cmdq_syndrome = ioread32(&d->seg->cmdq_syndrome);
	memcpy_fromio(&s->h, &d->seg->health, sizeof(s->h));
	/* one 64-bit load: a heartbeat read in halves could seem to move */
	s->h.heartbeat = readq(&d->seg->health.heartbeat);
	s->hb_idle_ms = jiffies_to_msecs(jiffies - READ_ONCE(d->hb_moved));
}

/* The firmware's condition, worst first. */
static const char *health_cause(const struct mnic_health_snap *s)
{
	u32 stall_ms = READ_ONCE(health_stall_ms);

	if (s->state == MNIC_STATE_FAILED)
		return "firmware FAILED (fatal_reason in the health buffer)";
	if (s->state != MNIC_STATE_READY)
		return "firmware left READY (a reset or restart: rebind the driver)";
	if (s->cmdq_status != MNIC_CMDQ_RUNNING)
		return "command queue no longer running (the NIC restarted: rebind the driver)";
	if (stall_ms && s->hb_idle_ms >= stall_ms)
		return "firmware heartbeat stalled";
	return NULL;
}

#define FMSG(call)                      \
	do {                            \
		int err_ = (call);      \
		if (err_)               \
			return err_;    \
	} while (0)

static int health_fmsg(struct devlink_fmsg *f, const struct mnic_health_snap *s)
{
	FMSG(devlink_fmsg_string_pair_put(f, "cause", s->cause ? s->cause : "none"));
	FMSG(devlink_fmsg_string_pair_put(f, "state", mnic_state_name(s->state)));
	FMSG(devlink_fmsg_u32_pair_put(f, "cmdq_status", s->cmdq_status));
	FMSG(devlink_fmsg_u32_pair_put(f, "cmdq_syndrome", s->cmdq_syndrome));
	FMSG(devlink_fmsg_u32_pair_put(f, "fatal_reason", s->h.fatal_reason));
	FMSG(devlink_fmsg_u32_pair_put(f, "fatal_detail", s->h.fatal_detail));
	FMSG(devlink_fmsg_u64_pair_put(f, "fatal_pc", s->h.fatal_pc));
	FMSG(devlink_fmsg_u64_pair_put(f, "uptime_ns", s->h.uptime_ns));
	FMSG(devlink_fmsg_u64_pair_put(f, "heartbeat", s->h.heartbeat));
	FMSG(devlink_fmsg_u32_pair_put(f, "heartbeat_idle_ms", s->hb_idle_ms));
	FMSG(devlink_fmsg_u64_pair_put(f, "rx_frames", s->h.rx_frames));
	FMSG(devlink_fmsg_u64_pair_put(f, "tx_frames", s->h.tx_frames));
	return devlink_fmsg_u64_pair_put(f, "rx_dropped", s->h.rx_dropped);
}

static int mnic_fw_diagnose(struct devlink_health_reporter *r, struct devlink_fmsg *f,
			    struct netlink_ext_ack *extack)
{
	struct mnic_kdev *d = devlink_health_reporter_priv(r);
	struct mnic_health_snap s;

	health_read(d, &s);
	s.cause = health_cause(&s);
	return health_fmsg(f, &s);
}

/* priv_ctx: the snapshot of the report (auto-dump); NULL: a dump asked for
 * with no error stored, taken now.  Both carry the raw buffer too. */
static int mnic_fw_dump(struct devlink_health_reporter *r, struct devlink_fmsg *f, void *priv_ctx,
			struct netlink_ext_ack *extack)
{
	struct mnic_kdev *d = devlink_health_reporter_priv(r);
	struct mnic_health_snap now, *s = priv_ctx;

	if (!s) {
		health_read(d, &now);
		now.cause = health_cause(&now);
		s = &now;
	}
	FMSG(health_fmsg(f, s));
	return devlink_fmsg_binary_pair_put(f, "health_buffer", &s->h, sizeof(s->h));
}

static const struct devlink_health_reporter_ops mnic_fw_reporter_ops = {
	.name = "fw",
	.diagnose = mnic_fw_diagnose,
	.dump = mnic_fw_dump,
};

/* Every health_poll_ms: a new error is reported once (devlink counts it
 * and keeps the dump); when the firmware is well again the reporter goes
 * back to healthy.  There is no recover op: the driver cannot restart the
 * firmware, and after a restart only a rebind latches the queue again. */
static void health_poll(struct work_struct *w)
{
	struct mnic_kdev *d = container_of(to_delayed_work(w), struct mnic_kdev, health_work);
	struct mnic_health_snap s;

	health_read(d, &s);
	if (s.h.heartbeat != d->hb_last) {
		d->hb_last = s.h.heartbeat;
		WRITE_ONCE(d->hb_moved, jiffies);
		s.hb_idle_ms = 0;
	}
	s.cause = health_cause(&s);
	if (s.cause && !d->health_bad) {
		d->health_bad = true;
		mnic_count(d, MNIC_KCNT_health_reports);
		dev_err(&d->pdev->dev, "health: %s (state %s, heartbeat %llu idle %u ms)\n", s.cause,
			mnic_state_name(s.state), (unsigned long long)s.h.heartbeat, s.hb_idle_ms);
		devlink_health_report(d->fw_reporter, s.cause, &s);
	} else if (!s.cause && d->health_bad) {
		d->health_bad = false;
		mnic_count(d, MNIC_KCNT_health_recovered);
		dev_info(&d->pdev->dev, "health: firmware healthy again (heartbeat %llu)\n",
			 (unsigned long long)s.h.heartbeat);
		devlink_health_reporter_state_update(d->fw_reporter, DEVLINK_HEALTH_REPORTER_STATE_HEALTHY);
	}
	schedule_delayed_work(&d->health_work, msecs_to_jiffies(health_poll_ms));
}

/* ---- probe / remove ----------------------------------------------------------- */

int mnic_devlink_register(struct mnic_kdev *d)
{
	struct devlink *dl;

	dl = devlink_alloc(&mnic_devlink_ops, sizeof(struct mnic_dl_priv), &d->pdev->dev);
	if (!dl)
		return -ENOMEM;
	((struct mnic_dl_priv *)devlink_priv(dl))->d = d;
	d->devlink = dl;
	mutex_init(&d->flash_lock);
	d->fw_reporter = devlink_health_reporter_create(dl, &mnic_fw_reporter_ops, 0, d);
	if (IS_ERR(d->fw_reporter)) {
		int ret = PTR_ERR(d->fw_reporter);

		devlink_free(dl);
		d->devlink = NULL;
		return ret;
	}
	d->hb_last = readq(&d->seg->health.heartbeat);
	d->hb_moved = jiffies;
	INIT_DELAYED_WORK(&d->health_work, health_poll);
	devlink_register(dl);
	if (health_poll_ms)
		schedule_delayed_work(&d->health_work, msecs_to_jiffies(health_poll_ms));
	return 0;
}

/* Before the device is marked dead and the BAR unmapped (the caller set
 * `removing`, so a flash in progress ends at its next command). */
void mnic_devlink_unregister(struct mnic_kdev *d)
{
	cancel_delayed_work_sync(&d->health_work);
	devlink_unregister(d->devlink);
	devlink_health_reporter_destroy(d->fw_reporter);
	devlink_free(d->devlink);
	mutex_destroy(&d->flash_lock);
	d->devlink = NULL;
}
