// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: sysfs view of the device (/sys/class/misc/mnicN/):
 *   health/   init segment identity, state and health buffer, read live
 *             from the BAR (the firmware keeps it valid after a fault)
 *   counters/ the driver's counters (mnic.h MNIC_KCOUNTERS)
 * One file per value, tables instead of one function per attribute. */
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>

#include "mnic.h"

static struct mnic_kdev *attr_dev(struct device *dev)
{
	struct miscdevice *misc = dev_get_drvdata(dev);

	return container_of(misc, struct mnic_kdev, misc);
}

static const char *const state_names[] = {
	[MNIC_STATE_BOOTING] = "booting",
	[MNIC_STATE_READY] = "ready",
	[MNIC_STATE_FAILED] = "failed",
};

const char *mnic_state_name(u32 state)
{
	if (state < ARRAY_SIZE(state_names) && state_names[state])
		return state_names[state];
	return "unknown";
}

static const char *const cmdq_status_names[] = {
	[MNIC_CMDQ_OFF] = "off",
	[MNIC_CMDQ_RUNNING] = "running",
	[MNIC_CMDQ_BAD_CONFIG] = "bad_config",
};

/* ---- health/: numeric fields of the init segment and the doorbell page,
 * by BAR offset and width */

struct mnic_seg_attr {
	struct device_attribute attr;
	u32 offset;
	u8 width;       /* 4 or 8 bytes */
	bool hex;
};

#define SEG_ATTR(name, field, is_hex)                                                   \
	static struct mnic_seg_attr seg_attr_##name = {                                \
		__ATTR(name, 0444, seg_show, NULL), offsetof(struct mnic_init_seg, field), \
		sizeof_field(struct mnic_init_seg, field), is_hex }
#define DB_ATTR(name, field)                                                             \
	static struct mnic_seg_attr seg_attr_##name = {                                \
		__ATTR(name, 0444, seg_show, NULL),                                    \
		MNIC_DB_PAGE_OFFSET + offsetof(struct mnic_db_page, field),            \
		sizeof_field(struct mnic_db_page, field), false }

static ssize_t seg_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	const struct mnic_seg_attr *a = container_of(attr, struct mnic_seg_attr, attr);
	void __iomem *p = (void __iomem *)attr_dev(dev)->seg + a->offset;
	u64 v = a->width == 8 ? readq(p) : ioread32(p);

	return sysfs_emit(buf, a->hex ? "0x%llx\n" : "%llu\n", (unsigned long long)v);
}

SEG_ATTR(fw_version, fw_version, true);
SEG_ATTR(cmdif_rev, cmdif_rev, false);
SEG_ATTR(board_id, board_id, false);
SEG_ATTR(fatal_reason, health.fatal_reason, false);
SEG_ATTR(fatal_detail, health.fatal_detail, true);
SEG_ATTR(fatal_pc, health.fatal_pc, true);
SEG_ATTR(uptime_ns, health.uptime_ns, false);
SEG_ATTR(heartbeat, health.heartbeat, false);
SEG_ATTR(rx_frames, health.rx_frames, false);
SEG_ATTR(tx_frames, health.tx_frames, false);
SEG_ATTR(rx_dropped, health.rx_dropped, false);
SEG_ATTR(cmdq_pi, cmdq_pi, false);
SEG_ATTR(cmdq_ci, cmdq_ci, false);
SEG_ATTR(cmdq_syndrome, cmdq_syndrome, true);
DB_ATTR(db_seq, db_seq);
SEG_ATTR(db_seen, db_seen, false);

static ssize_t state_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", mnic_state_name(ioread32(&attr_dev(dev)->seg->state)));
}
static DEVICE_ATTR_RO(state);

static ssize_t cmdq_status_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	u32 st = ioread32(&attr_dev(dev)->seg->cmdq_status);

	return sysfs_emit(buf, "%s\n", st < ARRAY_SIZE(cmdq_status_names) ?
				       cmdq_status_names[st] : "unknown");
}
static DEVICE_ATTR_RO(cmdq_status);

static ssize_t board_name_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	char name[sizeof_field(struct mnic_init_seg, board_name) + 1];

	memcpy_fromio(name, attr_dev(dev)->seg->board_name, sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	return sysfs_emit(buf, "%s\n", name);
}
static DEVICE_ATTR_RO(board_name);

static ssize_t mac_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	u8 mac[6];

	memcpy_fromio(mac, attr_dev(dev)->seg->mac, sizeof(mac));
	return sysfs_emit(buf, "%pM\n", mac);
}
static DEVICE_ATTR_RO(mac);

static struct attribute *health_attrs[] = {
	&dev_attr_state.attr,
	&dev_attr_board_name.attr,
	&dev_attr_mac.attr,
	&dev_attr_cmdq_status.attr,
	&seg_attr_fw_version.attr.attr,
	&seg_attr_cmdif_rev.attr.attr,
	&seg_attr_board_id.attr.attr,
	&seg_attr_fatal_reason.attr.attr,
	&seg_attr_fatal_detail.attr.attr,
	&seg_attr_fatal_pc.attr.attr,
	&seg_attr_uptime_ns.attr.attr,
	&seg_attr_heartbeat.attr.attr,
	&seg_attr_rx_frames.attr.attr,
	&seg_attr_tx_frames.attr.attr,
	&seg_attr_rx_dropped.attr.attr,
	&seg_attr_cmdq_pi.attr.attr,
	&seg_attr_cmdq_ci.attr.attr,
	&seg_attr_cmdq_syndrome.attr.attr,
	&seg_attr_db_seq.attr.attr,
	&seg_attr_db_seen.attr.attr,
	NULL,
};

static const struct attribute_group health_group = {
	.name = "health",
	.attrs = health_attrs,
};

/* ---- counters/ ------------------------------------------------------------ */

#define MNIC_KCNT_NAME_(name) #name,
const char *const mnic_kcounter_names[MNIC_KCNT_NUM] = { MNIC_KCOUNTERS(MNIC_KCNT_NAME_) };
#undef MNIC_KCNT_NAME_

static ssize_t counter_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute, attr);
	uintptr_t idx = (uintptr_t)ea->var;

	return sysfs_emit(buf, "%lld\n", (long long)atomic64_read(&attr_dev(dev)->cnt[idx]));
}

#define MNIC_KCNT_ATTR_(name)                                                 \
	static struct dev_ext_attribute cnt_attr_##name = {                   \
		__ATTR(name, 0444, counter_show, NULL), (void *)MNIC_KCNT_##name };
MNIC_KCOUNTERS(MNIC_KCNT_ATTR_)
#undef MNIC_KCNT_ATTR_

#define MNIC_KCNT_PTR_(name) &cnt_attr_##name.attr.attr,
static struct attribute *counter_attrs[] = { MNIC_KCOUNTERS(MNIC_KCNT_PTR_) NULL };
#undef MNIC_KCNT_PTR_

static const struct attribute_group counter_group = {
	.name = "counters",
	.attrs = counter_attrs,
};

const struct attribute_group *mnic_attr_groups[] = { &health_group, &counter_group, NULL };
