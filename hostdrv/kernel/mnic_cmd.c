// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: the command queue, host side (mnic/cmd.h; modelled on the mlx5
 * command interface, PRM "Command Interface").
 *
 * The ring has 64 entries at window address 0 but one command is in
 * flight at a time (cmd_lock): the ioctl is synchronous, and one entry
 * lets every command use the whole mailbox area.  Mailboxes: the input
 * chain from MNIC_CMD_MBOX_AREA on, the output chain right after it.
 *
 * Ordering.  The BAR is mapped write-combining (mnic_main.c): stores to it
 * may be merged and reach the memory out of program order.  wmb() (SFENCE
 * on x86) drains the write-combining buffers, so:
 *   entry body + mailboxes  -> wmb -> status_own = HW  (the firmware reads
 *   the entry only after it sees the owner bit)
 *   status_own              -> wmb -> cmdq_pi          (the firmware reads
 *   the owner bit only after it sees the doorbell)
 * and on completion status_own (SW) -> rmb -> output: the firmware writes
 * the output before it flips ownership (its own wmb), we read it after.
 */
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "mnic.h"

/* Opcode allowlist: exactly the opcodes of mnic/cmd.h. */
#define MNIC_OPCODE_ENTRY_(name, value) { value, #name + sizeof("MNIC_CMD_") - 1 },
static const struct {
	u16 opcode;
	const char *name;
} mnic_opcodes[] = { MNIC_CMD_OPCODE_LIST(MNIC_OPCODE_ENTRY_) };
#undef MNIC_OPCODE_ENTRY_

const char *mnic_opcode_name(u16 opcode)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mnic_opcodes); i++)
		if (mnic_opcodes[i].opcode == opcode)
			return mnic_opcodes[i].name;
	return NULL;
}

static u32 chain_blocks(u32 len)
{
	return len <= MNIC_CMD_INLINE_LEN ? 0 :
		DIV_ROUND_UP(len - MNIC_CMD_INLINE_LEN, MNIC_CMD_MBOX_DATA);
}

static u64 mbox_addr(u32 block)
{
	return MNIC_CMD_MBOX_AREA + (u64)block * MNIC_CMD_MBOX_SIZE;
}

static struct mnic_cmdq_entry __iomem *cmdq_entry(struct mnic_kdev *d, u32 slot)
{
	return d->window + MNIC_CMDQ_ADDR + slot * MNIC_CMDQ_ENTRY_SIZE;
}

/* Poll a device-written u32 of the init segment until it leaves `from`
 * (bounded).  Returns the last value read. */
static u32 wait_status_change(struct mnic_kdev *d, u32 __iomem *reg, u32 from, unsigned int ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(ms);
	u32 v;

	for (;;) {
		v = ioread32(reg);
		if (v != from || time_after(jiffies, deadline))
			return v;
		msleep(5);
	}
}

/* Latch the ring: disable (the firmware re-latches only from OFF), write
 * address and size, enable, wait for RUNNING.  Bounded: a firmware that
 * polls its doorbell at most every 10 ms answers in well under a second
 * even under TCG. */
int mnic_cmdq_enable(struct mnic_kdev *d)
{
	struct mnic_init_seg __iomem *s = d->seg;
	u32 st;

	iowrite32(0, &s->cmdq_ctrl);
	wmb();  /* the disable reaches the BAR before we poll for its effect */
	mnic_irq_ring(d);
	st = ioread32(&s->cmdq_status);
	if (st != MNIC_CMDQ_OFF)
		st = wait_status_change(d, &s->cmdq_status, st, 5000);
	if (st != MNIC_CMDQ_OFF) {
		dev_err(&d->pdev->dev, "firmware did not stop its command queue (cmdq_status %u)\n", st);
		return -ETIMEDOUT;
	}
	writeq(MNIC_CMDQ_ADDR, &s->cmdq_addr);
	iowrite32(MNIC_CMDQ_LOG_SIZE, &s->cmdq_log_size);
	wmb();  /* address and size are latched when ENABLE is seen: they go first */
	iowrite32(MNIC_CMDQ_CTRL_ENABLE, &s->cmdq_ctrl);
	wmb();
	mnic_irq_ring(d);
	st = wait_status_change(d, &s->cmdq_status, MNIC_CMDQ_OFF, 5000);
	if (st == MNIC_CMDQ_BAD_CONFIG) {
		dev_err(&d->pdev->dev, "firmware refused the command queue: syndrome 0x%08x\n",
			ioread32(&s->cmdq_syndrome));
		return -EIO;
	}
	if (st != MNIC_CMDQ_RUNNING) {
		dev_err(&d->pdev->dev, "firmware did not start the command queue in 5 s (cmdq_status %u)\n",
			st);
		return -ETIMEDOUT;
	}
	rmb();  /* cmdq_ci is valid once RUNNING is seen */
	d->pi = ioread32(&s->cmdq_ci);
	iowrite32(d->pi, &s->cmdq_pi);
	return 0;
}

void mnic_cmdq_disable(struct mnic_kdev *d)
{
	u32 st;

	iowrite32(0, &d->seg->cmdq_ctrl);
	wmb();
	mnic_irq_ring(d);
	/* Best effort: a dead firmware must not block remove for long. */
	st = wait_status_change(d, &d->seg->cmdq_status, MNIC_CMDQ_RUNNING, 1000);
	if (st == MNIC_CMDQ_RUNNING)
		dev_warn(&d->pdev->dev, "firmware did not acknowledge the command queue disable\n");
}

/* Lay out a chain of n blocks from block index first: trailers (next,
 * block_num, token); with src, the data too; without, zeroed data (output
 * chains: no stale bytes of an earlier command reach this caller). */
static void build_chain(struct mnic_kdev *d, u32 first, u32 n, u8 token, const u8 *src, u32 len)
{
	struct mnic_cmd_mailbox trailer_src;
	const size_t toff = offsetof(struct mnic_cmd_mailbox, reserved0);
	u32 i;

	for (i = 0; i < n; i++) {
		void __iomem *blk = d->window + mbox_addr(first + i);
		u32 off = i * MNIC_CMD_MBOX_DATA;
		u32 chunk = min_t(u32, len - off, MNIC_CMD_MBOX_DATA);

		if (src)
			memcpy_toio(blk, src + off, chunk);
		else
			memset_io(blk, 0, MNIC_CMD_MBOX_DATA);
		memset(&trailer_src, 0, sizeof(trailer_src));
		trailer_src.next = i + 1 < n ? mbox_addr(first + i + 1) : 0;
		trailer_src.block_num = i;
		trailer_src.token = token;
		memcpy_toio(blk + toff, (u8 *)&trailer_src + toff, sizeof(trailer_src) - toff);
	}
}

static void copy_output(struct mnic_kdev *d, const struct mnic_cmdq_entry __iomem *e, u32 n_in,
			u8 *out, u32 out_len)
{
	u32 n_out = chain_blocks(out_len), i;

	memcpy_fromio(out, e->out_inline, min_t(u32, out_len, MNIC_CMD_INLINE_LEN));
	for (i = 0; i < n_out; i++) {
		u32 off = i * MNIC_CMD_MBOX_DATA;
		u32 chunk = min_t(u32, out_len - MNIC_CMD_INLINE_LEN - off, MNIC_CMD_MBOX_DATA);

		memcpy_fromio(out + MNIC_CMD_INLINE_LEN + off, d->window + mbox_addr(n_in + i),
			      chunk);
	}
}

/* Wait for the firmware to hand the entry back.  With interrupts
 * (mnic_irq.c) sleep until MSI-X vector 0, re-reading at least every
 * MNIC_IRQ_RECHECK_MS.  Polling: the first ~100 polls sleep 20-50 us (a
 * firmware polling fast answers a small command in tens of microseconds),
 * then 1 ms.  The module's own commands
 * (MNIC_KCMD_F_MODULE) run from release, where the dying process has
 * SIGKILL pending, and from remove: neither ends their wait. */
static int wait_completion(struct mnic_kdev *d, struct mnic_cmdq_entry __iomem *e, u32 timeout_ms,
			   u32 flags, u8 *status_own)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	bool module = flags & MNIC_KCMD_F_MODULE;
	unsigned int polls = 0;
	u8 so;

	for (;;) {
		so = ioread8(&e->status_own);
		if (!(so & MNIC_CMD_OWNER_HW)) {
			*status_own = so;
			return 0;
		}
		if (ioread32(&d->seg->state) == MNIC_STATE_FAILED) {
			mnic_count(d, MNIC_KCNT_cmd_fw_failed);
			return -EIO;
		}
		if (time_after(jiffies, deadline) || (!module && READ_ONCE(d->removing))) {
			mnic_count(d, MNIC_KCNT_cmd_timeout);
			return -ETIMEDOUT;
		}
		if (!module && fatal_signal_pending(current)) {
			mnic_count(d, MNIC_KCNT_cmd_interrupted);
			return -EINTR;
		}
		if (READ_ONCE(d->irq_ok)) {
			/* Vector 0 wakes us when the NIC answers; the recheck
			 * bounds what a lost interrupt costs. */
			wait_event_timeout(d->cmd_wq,
					   !(ioread8(&e->status_own) & MNIC_CMD_OWNER_HW) ||
					   READ_ONCE(d->removing),
					   msecs_to_jiffies(MNIC_IRQ_RECHECK_MS));
		} else if (polls++ < 100) {
			usleep_range(20, 50);
		} else {
			msleep(1);
		}
	}
}

/* Run one command; cmd_lock held.  0 with c->delivery set, or -errno. */
static int cmd_exec(struct mnic_kdev *d, struct mnic_kcmd *c)
{
	u32 n_in = chain_blocks(c->in_len), n_out = chain_blocks(c->out_len);
	u32 timeout_ms = c->timeout_ms ? min(c->timeout_ms, MNIC_CMD_TIMEOUT_MAX_MS) :
					 MNIC_CMD_TIMEOUT_DEFAULT_MS;
	u32 in_inline = min_t(u32, c->in_len, MNIC_CMD_INLINE_LEN);
	u32 out_inline = min_t(u32, c->out_len, MNIC_CMD_INLINE_LEN);
	struct mnic_cmdq_entry __iomem *e;
	struct mnic_cmdq_entry entry;
	struct mnic_cmd_in_hdr hdr;
	const char *name;
	u8 so = 0;
	u32 slot;
	int ret;

	if (d->stuck) {
		/* A timed-out command may still be served: its mailboxes are
		 * ours again only once the firmware has handed it back.  The
		 * module's own commands (a dying process's DEALLOC_CONTEXT)
		 * wait for that, within their timeout. */
		e = cmdq_entry(d, d->stuck_slot);
		if (ioread8(&e->status_own) & MNIC_CMD_OWNER_HW &&
		    (!(c->flags & MNIC_KCMD_F_MODULE) ||
		     wait_completion(d, e, timeout_ms, c->flags, &so))) {
			mnic_count(d, MNIC_KCNT_cmd_busy);
			return -EBUSY;
		}
		d->stuck = false;
	}
	if (ioread32(&d->seg->state) != MNIC_STATE_READY ||
	    ioread32(&d->seg->cmdq_status) != MNIC_CMDQ_RUNNING) {
		mnic_count(d, MNIC_KCNT_refused_state);
		return -EIO;
	}

	memset(&entry, 0, sizeof(entry));
	memcpy(entry.in_inline, c->in, in_inline);
	memcpy(&hdr, entry.in_inline, sizeof(hdr));
	name = mnic_opcode_name(hdr.opcode);

	d->token = d->token == 0xff ? 1 : d->token + 1;
	entry.type = MNIC_CMD_TYPE_PCIE;
	entry.in_len = c->in_len;
	entry.out_len = c->out_len;
	entry.token = d->token;
	entry.in_mbox = n_in ? mbox_addr(0) : 0;
	entry.out_mbox = n_out ? mbox_addr(n_in) : 0;
	entry.status_own = 0;    /* software-owned until everything is written */

	build_chain(d, 0, n_in, d->token, (const u8 *)c->in + in_inline, c->in_len - in_inline);
	build_chain(d, n_in, n_out, d->token, NULL, c->out_len - out_inline);
	slot = d->pi & ((1u << MNIC_CMDQ_LOG_SIZE) - 1);
	e = cmdq_entry(d, slot);
	memcpy_toio(e, &entry, sizeof(entry));
	wmb();  /* entry + mailboxes visible before the owner bit */
	iowrite8(MNIC_CMD_OWNER_HW, &e->status_own);
	wmb();  /* owner bit visible before the doorbell */
	d->pi++;
	iowrite32(d->pi, &d->seg->cmdq_pi);
	mnic_irq_ring(d);
	mnic_count(d, MNIC_KCNT_cmds);
	dev_dbg(&d->pdev->dev, "cmd %s ctx %u token %u in %u out %u slot %u\n", name, hdr.ctx,
		entry.token, c->in_len, c->out_len, slot);

	ret = wait_completion(d, e, timeout_ms, c->flags, &so);
	if (ret) {
		d->stuck = true;
		d->stuck_slot = slot;
		dev_warn_ratelimited(&d->pdev->dev, "command %s (token %u) not completed: %d\n",
				     name, entry.token, ret);
		return ret;
	}
	rmb();  /* output only after the ownership flip that publishes it */
	c->delivery = so >> 1;
	if (c->delivery != MNIC_CMD_DELIV_OK) {
		mnic_count(d, MNIC_KCNT_cmd_delivery_err);
		dev_dbg(&d->pdev->dev, "cmd %s: delivery status 0x%x\n", name, c->delivery);
		return 0;
	}
	mnic_count(d, MNIC_KCNT_cmd_ok);
	copy_output(d, e, n_in, c->out, c->out_len);
	return 0;
}

/* Run one command held in kernel memory (the caller holds remove_lock for
 * reading, or is remove itself).  The output buffer is zeroed first: a
 * delivery error leaves no stale bytes in it. */
int mnic_cmd_run(struct mnic_kdev *d, struct mnic_kcmd *c)
{
	int ret;

	memset(c->out, 0, c->out_len);
	c->delivery = 0;
	if (c->flags & MNIC_KCMD_F_MODULE)
		mutex_lock(&d->cmd_lock);
	else if (mutex_lock_interruptible(&d->cmd_lock))
		return -EINTR;
	ret = cmd_exec(d, c);
	mutex_unlock(&d->cmd_lock);
	return ret;
}

/* MNIC_IOC_CMD.  The whole input is copied into kernel memory first, so
 * the opcode and handle the policy checks (mnic_ctx.c), the context it
 * stamps and the bytes the firmware reads are one copy; user memory is
 * touched again only after the command, for the output, with no lock held
 * (a fault under cmd_lock would order mmap_lock after it, and mmap takes
 * them the other way round when it allocates the file's context). */
long mnic_ioctl_cmd(struct mnic_file *mf, struct mnic_ioc_cmd __user *uarg)
{
	struct mnic_kdev *d = mf->d;
	struct mnic_ioc_cmd c;
	struct mnic_kcmd k;
	u8 *buf;
	u32 size;
	long ret;

	if (get_user(size, &uarg->size))
		return -EFAULT;
	if (size != sizeof(c)) {
		mnic_count(d, MNIC_KCNT_refused_struct);
		return -EINVAL;
	}
	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;
	if (c.version == 0 || c.version > MNIC_IOC_VERSION || c.reserved[0] || c.reserved[1] ||
	    c.reserved[2]) {
		mnic_count(d, MNIC_KCNT_refused_struct);
		return -EINVAL;
	}
	if (c.in_len < sizeof(struct mnic_cmd_in_hdr) || c.in_len > MNIC_CMD_MAX_LEN ||
	    c.out_len < sizeof(struct mnic_cmd_out_hdr) || c.out_len > MNIC_CMD_MAX_LEN) {
		mnic_count(d, MNIC_KCNT_refused_len);
		return -EINVAL;
	}
	/* Both chains must fit in the driver area after the ring. */
	if (chain_blocks(c.in_len) + chain_blocks(c.out_len) > MNIC_MBOX_MAX) {
		mnic_count(d, MNIC_KCNT_refused_len);
		return -E2BIG;
	}
	buf = kvmalloc(c.in_len + c.out_len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, u64_to_user_ptr(c.in_ptr), c.in_len)) {
		mnic_count(d, MNIC_KCNT_copy_fault);
		ret = -EFAULT;
		goto out;
	}
	ret = mnic_cmd_policy(mf, buf, c.in_len);
	if (ret)
		goto out;
	k = (struct mnic_kcmd){ .in = buf, .in_len = c.in_len, .out = buf + c.in_len,
				.out_len = c.out_len, .timeout_ms = c.timeout_ms };
	ret = mnic_cmd_run(d, &k);
	if (ret)
		goto out;
	if (k.delivery == MNIC_CMD_DELIV_OK &&
	    copy_to_user(u64_to_user_ptr(c.out_ptr), k.out, c.out_len)) {
		mnic_count(d, MNIC_KCNT_copy_fault);
		ret = -EFAULT;
		goto out;
	}
	if (put_user(k.delivery, &uarg->delivery))
		ret = -EFAULT;
out:
	kvfree(buf);
	return ret;
}
