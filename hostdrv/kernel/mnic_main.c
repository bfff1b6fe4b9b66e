// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: host driver of the mnic SmartNIC firmware's host interface
 * (abi/include/mnic/abi.h), for the NIC's BAR exposed to a Linux guest as
 * an ivshmem-plain PCI function (1af4:1110; BAR0 registers, BAR2 the
 * shared memory = the NIC's BAR).
 *
 * probe: enable, request and map BAR2, check the init-segment magic (not
 * ours: -ENODEV without a word, other ivshmem users keep their device),
 * check cmdif_rev, wait for READY, latch the command queue (mnic_cmd.c),
 * register the devlink instance (mnic_devlink.c), create /dev/mnicN with
 * sysfs health and counters (mnic_sysfs.c), register the RDMA device
 * (mnic_ib.c).
 * /dev/mnicN: MNIC_IOC_INFO, MNIC_IOC_CTX, MNIC_IOC_CMD (mnic/ioctl.h),
 * mmap of the file's user-area range, of the init-segment page (read-only)
 * and of the doorbell page.  Each open file is a firmware context
 * (mnic_ctx.c).
 *
 * Mapping: BAR2 is prefetchable and, for ivshmem, ordinary host RAM shared
 * with the NIC (another QEMU or a POSIX process), with no side effects on
 * read.  The kernel maps it write-combining (pci_iomap_wc), not uncached:
 * entries and mailbox blocks are written as bursts instead of one bus
 * transaction per store, while reads stay uncached, so polling status_own
 * and the init segment always sees the NIC's latest writes.  The price is
 * weak store ordering, paid with the wmb()s in mnic_cmd.c.  User mappings
 * use the same type (pgprot_writecombine): one memory type per physical
 * range, as x86 PAT requires.
 *
 * Lifetime: the device struct is refcounted (kref): probe holds one
 * reference, every open file one.  remove marks the device dead under
 * remove_lock (ioctl, mmap and release's DEALLOC_CONTEXT hold it for
 * reading), then frees the contexts of the files still open, so after
 * remove every call on a still-open file returns -ENODEV, nothing touches
 * the BAR, and release has nothing left to free.
 */
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/version.h>

#include "mnic.h"

#define MNIC_PCI_DEVICE_IVSHMEM 0x1110   /* QEMU ivshmem (docs/specs/ivshmem-spec) */

static unsigned int ready_timeout_ms = 10000;
module_param(ready_timeout_ms, uint, 0444);
MODULE_PARM_DESC(ready_timeout_ms, "how long probe waits for the firmware's READY state (ms)");

static DEFINE_IDA(mnic_ida);

static void mnic_free(struct kref *ref)
{
	struct mnic_kdev *d = container_of(ref, struct mnic_kdev, ref);

	kfree(d);
}

static struct mnic_file *file_of(struct file *f)
{
	return f->private_data;
}

/* ---- /dev/mnicN -------------------------------------------------------- */

static int mnic_open(struct inode *inode, struct file *f)
{
	/* misc_open set private_data to our miscdevice and holds misc_mtx, so
	 * remove (misc_deregister first) cannot run between lookup and get. */
	struct mnic_kdev *d = container_of(f->private_data, struct mnic_kdev, misc);
	struct mnic_file *mf = kzalloc(sizeof(*mf), GFP_KERNEL);

	if (!mf)
		return -ENOMEM;
	kref_get(&d->ref);
	mf->d = d;
	mf->mapping = f->f_mapping;
	mutex_init(&mf->ctx_lock);
	mutex_init(&mf->mem_lock);
	INIT_LIST_HEAD(&mf->mems);
	mutex_lock(&d->files_lock);
	list_add(&mf->node, &d->files);
	mutex_unlock(&d->files_lock);
	f->private_data = mf;
	return 0;
}

/* The last reference to the file: the process closed it or died (SIGKILL
 * included: the module's commands ignore the pending signal).  Its
 * context goes, and with it every object it created.  Once remove has
 * marked the device dead it freed the context itself. */
static int mnic_release(struct inode *inode, struct file *f)
{
	struct mnic_file *mf = file_of(f);
	struct mnic_kdev *d = mf->d;

	down_read(&d->remove_lock);
	if (!d->dead)
		mnic_file_ctx_free(mf, 0);
	up_read(&d->remove_lock);
	mutex_lock(&d->files_lock);
	list_del(&mf->node);
	mutex_unlock(&d->files_lock);
	mutex_destroy(&mf->ctx_lock);
	mutex_destroy(&mf->mem_lock);
	kfree(mf);
	kref_put(&d->ref, mnic_free);
	return 0;
}

static long mnic_ioctl_info(struct mnic_kdev *d, struct mnic_ioc_info __user *uarg)
{
	struct mnic_ioc_info info;
	u32 size, version;

	if (get_user(size, &uarg->size) || get_user(version, &uarg->version))
		return -EFAULT;
	if (size != sizeof(info) || version == 0 || version > MNIC_IOC_VERSION) {
		mnic_count(d, MNIC_KCNT_refused_struct);
		return -EINVAL;
	}
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.version = MNIC_IOC_VERSION;
	info.fw_version = ioread32(&d->seg->fw_version);
	info.cmdif_rev = ioread32(&d->seg->cmdif_rev);
	info.board_id = ioread32(&d->seg->board_id);
	info.state = ioread32(&d->seg->state);
	memcpy_fromio(info.mac, d->seg->mac, sizeof(info.mac));
	memcpy_fromio(info.board_name, d->seg->board_name, sizeof(info.board_name));
	info.board_name[sizeof(info.board_name) - 1] = '\0';
	info.bar_size = d->bar_len;
	info.window_offset = MNIC_DMA_WINDOW_OFFSET;
	info.user_area_offset = MNIC_USER_AREA_OFFSET;
	info.user_area_size = d->bar_len - MNIC_DMA_WINDOW_OFFSET - MNIC_USER_AREA_OFFSET;
	info.minor = d->id;
	info.flags = READ_ONCE(d->irq_ok) ? MNIC_INFO_F_RING : 0;
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long mnic_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct mnic_file *mf = file_of(f);
	struct mnic_kdev *d = mf->d;
	void __user *uarg = (void __user *)arg;
	long ret;

	down_read(&d->remove_lock);
	if (d->dead) {
		ret = -ENODEV;
		goto out;
	}
	switch (cmd) {
	case MNIC_IOC_INFO:
		ret = mnic_ioctl_info(d, uarg);
		break;
	case MNIC_IOC_CTX:
		ret = mnic_ioctl_ctx(mf, uarg);
		break;
	case MNIC_IOC_CMD:
		ret = mnic_ioctl_cmd(mf, uarg);
		break;
	case MNIC_IOC_REG_MEM:
		ret = mnic_ioctl_reg_mem(mf, uarg);
		break;
	case MNIC_IOC_DEREG_MEM:
		ret = mnic_ioctl_dereg_mem(mf, uarg);
		break;
	case MNIC_IOC_RING:
		/* no argument; any caller with the file open may ring: a ring
		 * only makes the firmware look at the BAR */
		ret = arg ? -EINVAL : mnic_irq_ring_data(d);
		break;
	default:
		ret = -ENOTTY;
	}
out:
	up_read(&d->remove_lock);
	return ret;
}

/* mmap offsets (mnic/ioctl.h):
 *   [MNIC_MMAP_USER, +ua_size)  the file's own user-area range (its
 *                               context's, allocated here if need be),
 *                               from that offset on; never another's
 *   MNIC_MMAP_INITSEG           the init segment's page, read-only: only
 *                               the command-queue owner (this module) may
 *                               write cmdq_ctrl, cmdq_addr and cmdq_pi
 *   MNIC_MMAP_DOORBELL          the doorbell page (struct mnic_db_page)
 * Shared mappings only (a private copy-on-write view of device memory
 * means nothing). */
static int mnic_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct mnic_file *mf = file_of(f);
	struct mnic_kdev *d = mf->d;
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	phys_addr_t phys;
	int ret = -EINVAL;

	/* One page each, and neither reaches into the other. */
	BUILD_BUG_ON(PAGE_SIZE > MNIC_DB_PAGE_OFFSET || PAGE_SIZE > MNIC_DB_PAGE_SIZE);

	down_read(&d->remove_lock);
	if (d->dead) {
		ret = -ENODEV;
		goto out;
	}
	if (!(vma->vm_flags & VM_SHARED))
		goto refuse;
	if (off == MNIC_MMAP_INITSEG) {
		if (len > PAGE_SIZE)
			goto refuse;
		if (vma->vm_flags & VM_WRITE) {
			mnic_count(d, MNIC_KCNT_mmap_refused_write);
			ret = -EACCES;
			goto out;
		}
		/* Without VM_MAYWRITE mprotect(PROT_WRITE) fails with EACCES. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
		vm_flags_clear(vma, VM_MAYWRITE);
#else
		vma->vm_flags &= ~VM_MAYWRITE;
#endif
		phys = d->bar_phys;
	} else if (off == MNIC_MMAP_DOORBELL) {
		if (len > PAGE_SIZE)
			goto refuse;
		phys = d->bar_phys + MNIC_DB_PAGE_OFFSET;
	} else {
		ret = mnic_file_ctx(mf, 0, 0);
		if (ret)
			goto out;
		ret = -EINVAL;
		/* The context's range cannot change while the file is open. */
		if (off >= mf->ua_size || len > mf->ua_size - off)
			goto refuse;
		phys = d->bar_phys + MNIC_DMA_WINDOW_OFFSET + mf->ua_offset + off;
	}
	vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	/* io_remap_pfn_range marks the VMA VM_IO | VM_PFNMAP | VM_DONTEXPAND |
	 * VM_DONTDUMP: no struct pages, never expanded by mremap, not dumped. */
	ret = io_remap_pfn_range(vma, vma->vm_start, phys >> PAGE_SHIFT, len, vma->vm_page_prot);
	goto out;
refuse:
	mnic_count(d, MNIC_KCNT_mmap_refused);
out:
	up_read(&d->remove_lock);
	return ret;
}

static const struct file_operations mnic_fops = {
	.owner = THIS_MODULE,
	.open = mnic_open,
	.release = mnic_release,
	.unlocked_ioctl = mnic_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = mnic_mmap,
	.llseek = noop_llseek,
};

/* ---- probe / remove ----------------------------------------------------- */

/* The NIC's host-memory aperture (QUERY_DEVICE as MNIC_CTX_MGMT): what
 * decides whether tenants register memory (mnic_mem.c) or use physical
 * mode in the BAR window.  A NIC that cannot say has none. */
static void query_hostmem(struct mnic_kdev *d)
{
	struct mnic_cmd_simple_in in = { .hdr = { .opcode = MNIC_CMD_QUERY_DEVICE,
						  .ctx = MNIC_CTX_MGMT } };
	struct mnic_cmd_query_device_out *out = kzalloc(sizeof(*out), GFP_KERNEL);
	int ret;

	if (!out)
		return;
	ret = mnic_module_cmd(d, &in, sizeof(in), out, sizeof(*out), 5000);
	if (ret)
		dev_warn(&d->pdev->dev, "QUERY_DEVICE failed (%d): no host-memory aperture assumed\n",
			 ret);
	else {
		d->hostmem_size = out->hostmem_size;
		d->max_frame = out->max_frame;
	}
	kfree(out);
}

/* Wait for the firmware to leave BOOTING (bounded).  0 when READY. */
static int wait_ready(struct mnic_kdev *d)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(ready_timeout_ms);
	u32 state;

	for (;;) {
		state = ioread32(&d->seg->state);
		if (state == MNIC_STATE_READY)
			return 0;
		if (state == MNIC_STATE_FAILED) {
			dev_err(&d->pdev->dev, "firmware is in state FAILED (fatal reason %u, detail 0x%x)\n",
				ioread32(&d->seg->health.fatal_reason),
				ioread32(&d->seg->health.fatal_detail));
			return -EIO;
		}
		if (time_after(jiffies, deadline)) {
			dev_err(&d->pdev->dev, "firmware not READY after %u ms (state %s)\n",
				ready_timeout_ms, mnic_state_name(state));
			return -ETIMEDOUT;
		}
		msleep(10);
	}
}

static int mnic_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	char board[sizeof_field(struct mnic_init_seg, board_name) + 1];
	struct mnic_kdev *d;
	u8 mac[6];
	u32 magic, rev, fw;
	int ret, i;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	kref_init(&d->ref);
	d->pdev = pdev;
	init_rwsem(&d->remove_lock);
	mutex_init(&d->cmd_lock);
	mutex_init(&d->files_lock);
	INIT_LIST_HEAD(&d->files);
	for (i = 0; i < MNIC_KCNT_NUM; i++)
		atomic64_set(&d->cnt[i], 0);

	ret = pci_enable_device_mem(pdev);
	if (ret)
		goto err_free;
	d->bar_phys = pci_resource_start(pdev, MNIC_BAR);
	d->bar_len = pci_resource_len(pdev, MNIC_BAR);
	if (!(pci_resource_flags(pdev, MNIC_BAR) & IORESOURCE_MEM) ||
	    d->bar_len < MNIC_DMA_WINDOW_OFFSET + MNIC_USER_AREA_OFFSET + PAGE_SIZE) {
		/* Too small for the window: some other ivshmem user. */
		dev_dbg(&pdev->dev, "BAR2 (%pa bytes) cannot hold an mnic window\n", &d->bar_len);
		ret = -ENODEV;
		goto err_disable;
	}
	ret = pci_request_region(pdev, MNIC_BAR, KBUILD_MODNAME);
	if (ret)
		goto err_disable;
	d->bar = pci_iomap_wc(pdev, MNIC_BAR, 0);
	if (!d->bar) {
		ret = -ENOMEM;
		goto err_release;
	}
	d->seg = d->bar;
	d->window = d->bar + MNIC_DMA_WINDOW_OFFSET;

	magic = ioread32(&d->seg->magic);
	if (magic != MNIC_INIT_MAGIC) {
		dev_dbg(&pdev->dev, "no mnic init segment (magic 0x%08x): not ours\n", magic);
		ret = -ENODEV;
		goto err_unmap;
	}
	rmb();  /* the firmware writes the magic last: the rest is valid now */
	rev = ioread32(&d->seg->cmdif_rev);
	if (rev != MNIC_CMDIF_REV) {
		dev_err(&pdev->dev,
			"firmware command interface revision %u, this driver speaks %u: load a matching mnic.ko or firmware\n",
			rev, MNIC_CMDIF_REV);
		ret = -ENODEV;
		goto err_unmap;
	}
	ret = wait_ready(d);
	if (ret)
		goto err_unmap;
	ret = mnic_irq_init(d);
	if (ret)
		goto err_unmap;
	ret = mnic_cmdq_enable(d);
	if (ret)
		goto err_irq;
	query_hostmem(d);

	ret = ida_alloc(&mnic_ida, GFP_KERNEL);
	if (ret < 0)
		goto err_cmdq;
	d->id = ret;
	snprintf(d->name, sizeof(d->name), "mnic%d", d->id);
	d->misc.minor = MISC_DYNAMIC_MINOR;
	d->misc.name = d->name;
	d->misc.fops = &mnic_fops;
	d->misc.parent = &pdev->dev;
	d->misc.groups = mnic_attr_groups;
	d->misc.mode = 0600;
	pci_set_drvdata(pdev, d);
	ret = mnic_devlink_register(d);
	if (ret)
		goto err_ida;
	ret = misc_register(&d->misc);
	if (ret)
		goto err_devlink;
	ret = mnic_netdev_register(d);
	if (ret)
		goto err_misc;
	ret = mnic_ib_register(d);
	if (ret)
		goto err_netdev;

	fw = ioread32(&d->seg->fw_version);
	memcpy_fromio(board, d->seg->board_name, sizeof(board) - 1);
	board[sizeof(board) - 1] = '\0';
	memcpy_fromio(mac, d->seg->mac, sizeof(mac));
	dev_info(&pdev->dev, "%s: board %s fw %u.%u.%u cmdif %u mac %pM, window %llu MiB, host memory %llu MiB\n",
		 d->name, board, fw >> 24, (fw >> 16) & 0xff, fw & 0xffff, rev, mac,
		 (unsigned long long)(d->bar_len - MNIC_DMA_WINDOW_OFFSET) >> 20,
		 (unsigned long long)d->hostmem_size >> 20);
	return 0;

err_netdev:
	mnic_netdev_unregister(d);
err_misc:
	misc_deregister(&d->misc);
err_devlink:
	mnic_devlink_unregister(d);
err_ida:
	pci_set_drvdata(pdev, NULL);
	ida_free(&mnic_ida, d->id);
err_cmdq:
	mnic_cmdq_disable(d);
err_irq:
	mnic_irq_exit(d);
err_unmap:
	pci_iounmap(pdev, d->bar);
err_release:
	pci_release_region(pdev, MNIC_BAR);
err_disable:
	pci_disable_device(pdev);
err_free:
	kref_put(&d->ref, mnic_free);
	return ret;
}

static void mnic_remove(struct pci_dev *pdev)
{
	struct mnic_kdev *d = pci_get_drvdata(pdev);

	/* The RDMA device first: unregistering destroys the objects of the
	 * ucontexts still open, through the firmware, so the command queue
	 * must still run. */
	mnic_ib_unregister(d);
	/* Then its netdev (the core has let it go). */
	mnic_netdev_unregister(d);
	/* No new opens; then wait out ioctls and mmaps in progress (a waiting
	 * command sees `removing` and gives up). */
	misc_deregister(&d->misc);
	WRITE_ONCE(d->removing, true);
	/* devlink ops in progress end (a flash stops at its next command);
	 * the health poller stops. */
	mnic_devlink_unregister(d);
	down_write(&d->remove_lock);
	d->dead = true;
	/* Files still open keep no context in the firmware: a rebind starts
	 * with none.  Under the lock: a release waiting for it finds the
	 * context freed, one that ran before freed it itself. */
	mnic_files_ctx_free(d);
	up_write(&d->remove_lock);

	mnic_cmdq_disable(d);
	mnic_irq_exit(d);
	pci_iounmap(pdev, d->bar);
	pci_release_region(pdev, MNIC_BAR);
	pci_disable_device(pdev);
	pci_set_drvdata(pdev, NULL);
	ida_free(&mnic_ida, d->id);
	dev_info(&pdev->dev, "%s removed\n", d->name);
	kref_put(&d->ref, mnic_free);
}

static const struct pci_device_id mnic_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, MNIC_PCI_DEVICE_IVSHMEM) },
	{ }
};
MODULE_DEVICE_TABLE(pci, mnic_pci_ids);

static struct pci_driver mnic_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = mnic_pci_ids,
	.probe = mnic_probe,
	.remove = mnic_remove,
};
module_pci_driver(mnic_pci_driver);

MODULE_DESCRIPTION("mnic SmartNIC host interface (ivshmem BAR): /dev/mnicN, command queue, health, RDMA device");
MODULE_LICENSE("GPL");
