// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: doorbells and interrupts through an ivshmem-doorbell
 * (docs/host-interface.md "Doorbells and interrupts", docs/kernel-driver.md).
 *
 * A QEMU NIC's host BAR is an ivshmem-doorbell (qemu-board/nic.sh): the
 * same PCI IDs as ivshmem-plain, plus BAR0 registers (IVPosition: our
 * peer ID; Doorbell: write peer << 16 | vector to interrupt that peer on
 * that vector) and MSI-X (BAR1).  The NIC's firmware publishes its peer ID
 * in the init segment (irq_nic_id); we publish ours in a free
 * irq_host_ids slot, and then
 *   ring:  after every command (cmdq_pi), Doorbell = nic << 16 | 0: the
 *          NIC's QEMU turns it into its MSI-X vector 0, a GICv2m SPI that
 *          wakes the firmware at once;
 *   irq:   the firmware raises our vector 0 when it answered a command
 *          (or moved cmdq_status): wait_completion sleeps on cmd_wq until
 *          then, instead of polling; vector 1 after it wrote host
 *          Ethernet completions (mnic_netdev.c takes it: NAPI).
 *   user:  an RDMA application rings through its own mapping of the
 *          register page (mnic_ib.c), when BAR0 is alone in its page
 *          (uar_ok below) and user_doorbell is set.
 * A wakeup is a hint: the waiter re-reads the owner bit, and sleeps at
 * most MNIC_IRQ_RECHECK_MS between looks, so a lost or never-sent
 * interrupt (a firmware that does not raise, a slot not seen yet) costs
 * that much, never the command.  An ivshmem-plain (no MSI-X capability:
 * the decoys of the VM test, a NIC started with --bar-kind plain) is
 * polled as before.
 */
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/pci.h>

#include "mnic.h"

#define MNIC_IRQ_VEC_CMD       0
#define MNIC_IRQ_VECTORS       (MNIC_IRQ_VEC_EQ + 1)

/* Whether applications may map BAR0's page to ring the NIC themselves, as
 * a hardware NIC's UAR page lets them.  The ivshmem register page is not
 * a UAR: besides the Doorbell register it holds IntrMask/IntrStatus
 * (INTx only, unused with MSI-X) and IVPosition (read-only), and its
 * Doorbell takes any peer and vector, so a process holding it can also
 * raise interrupts on this VM's own vectors (spurious ones: every
 * handler re-reads its queue) or on another peer of the NIC's server.  It
 * reaches no memory and no other tenant's objects; set 0 where even that
 * is too much (the NIC then finds applications' doorbells on its poll). */
static bool user_doorbell = true;
module_param(user_doorbell, bool, 0444);
MODULE_PARM_DESC(user_doorbell, "map the ivshmem Doorbell register page to RDMA applications (default 1)");

static irqreturn_t mnic_irq_cmd(int irq, void *arg)
{
	struct mnic_kdev *d = arg;

	mnic_count(d, MNIC_KCNT_irq_cmd);
	wake_up(&d->cmd_wq);
	return IRQ_HANDLED;
}

/* A free irq_host_ids slot, or the one a previous load of this module left
 * with our ID; -ENOSPC if every slot names another host.  The BAR is
 * shared with host processes that claim slots by compare-and-swap (libmnic,
 * hostdrv/lib/ivsh.c); a locked instruction on this write-combining
 * mapping is not atomic across them, so we write and read back, and give
 * the slot up if someone else's value is there. */
static int claim_slot(struct mnic_kdev *d, u32 mine)
{
	int i;

	for (i = 0; i < MNIC_IRQ_MAX_HOSTS; i++)
		if (ioread32(&d->seg->irq_host_ids[i]) == mine)
			return i;
	for (i = 0; i < MNIC_IRQ_MAX_HOSTS; i++) {
		if (ioread32(&d->seg->irq_host_ids[i]) != 0)
			continue;
		iowrite32(mine, &d->seg->irq_host_ids[i]);
		wmb();  /* drain the write-combining buffer before the read back */
		if (ioread32(&d->seg->irq_host_ids[i]) == mine)
			return i;
	}
	return -ENOSPC;
}

int mnic_irq_init(struct mnic_kdev *d)
{
	struct pci_dev *pdev = d->pdev;
	u32 nic, id;
	int ret, nvec;

	init_waitqueue_head(&d->cmd_wq);
	d->irq_slot = -1;
	if (!pci_find_capability(pdev, PCI_CAP_ID_MSIX)) {
		dev_info(&pdev->dev, "ivshmem-plain BAR (no MSI-X): commands are polled\n");
		return 0;
	}
	if (pci_resource_len(pdev, MNIC_IRQ_REG_BAR) < MNIC_IRQ_REG_LEN ||
	    !(pci_resource_flags(pdev, MNIC_IRQ_REG_BAR) & IORESOURCE_MEM)) {
		dev_warn(&pdev->dev, "ivshmem-doorbell without a register BAR: commands are polled\n");
		return 0;
	}
	nic = ioread32(&d->seg->irq_nic_id);
	if (!(nic & MNIC_IRQ_ID_VALID)) {
		dev_info(&pdev->dev, "the firmware names no doorbell peer ID: commands are polled\n");
		return 0;
	}
	ret = pci_request_region(pdev, MNIC_IRQ_REG_BAR, KBUILD_MODNAME);
	if (ret)
		return ret;
	d->regs = pci_iomap(pdev, MNIC_IRQ_REG_BAR, MNIC_IRQ_REG_LEN);
	if (!d->regs) {
		ret = -ENOMEM;
		goto err_region;
	}
	id = ioread32(d->regs + MNIC_IRQ_REG_IVPOSITION);
	if (id > MNIC_IRQ_ID_MASK || id == (nic & MNIC_IRQ_ID_MASK)) {
		dev_warn(&pdev->dev, "IVPosition %u is not a peer ID we can use (the NIC is %u): polled\n",
			 id, nic & MNIC_IRQ_ID_MASK);
		ret = 0;
		goto err_unmap;
	}
	/* Bus mastering: an MSI-X message is a DMA write */
	pci_set_master(pdev);
	/* vector 0: commands; 1: the netdev; 2: the RDMA device's event
	 * queues (each when the function has it) */
	nvec = pci_alloc_irq_vectors(pdev, 1, MNIC_IRQ_VECTORS, PCI_IRQ_MSIX);
	if (nvec < 0) {
		ret = nvec;
		goto err_unmap;
	}
	d->irq_nvec = nvec;
	snprintf(d->irq_name, sizeof(d->irq_name), "mnic-cmd@%s", pci_name(pdev));
	ret = request_irq(pci_irq_vector(pdev, MNIC_IRQ_VEC_CMD), mnic_irq_cmd, 0, d->irq_name, d);
	if (ret)
		goto err_vectors;
	ret = claim_slot(d, MNIC_IRQ_ID_VALID | id);
	if (ret < 0) {
		dev_warn(&pdev->dev, "every irq_host_ids slot is taken: commands are polled\n");
		ret = 0;
		goto err_irq;
	}
	d->irq_slot = ret;
	d->irq_own = MNIC_IRQ_ID_VALID | id;
	d->irq_ring = (nic & MNIC_IRQ_ID_MASK) << 16 | MNIC_IRQ_VEC_CMD;
	WRITE_ONCE(d->irq_ok, true);
	dev_info(&pdev->dev, "doorbells through ivshmem-doorbell: peer %u, NIC peer %u, MSI-X vector 0 = irq %d\n",
		 id, nic & MNIC_IRQ_ID_MASK, pci_irq_vector(pdev, MNIC_IRQ_VEC_CMD));
	/* A user mapping is a whole page: only a BAR that owns its page (a
	 * resource of at least a page, page aligned, so nothing else was
	 * assigned there; QEMU's 256-byte BAR0 does with the kernel's
	 * pci=resource_alignment=12@pci:1af4:1110, tests/vm/vm.sh) is given
	 * to applications. */
	d->uar_phys = pci_resource_start(pdev, MNIC_IRQ_REG_BAR);
	d->uar_ok = user_doorbell && PAGE_ALIGNED(d->uar_phys) &&
		    pci_resource_len(pdev, MNIC_IRQ_REG_BAR) >= PAGE_SIZE;
	if (user_doorbell && !d->uar_ok)
		dev_info(&pdev->dev, "BAR0 %pR shares its page: RDMA applications' doorbells are polled (boot with pci=resource_alignment=12@pci:1af4:1110 to give it a page)\n",
			 &pdev->resource[MNIC_IRQ_REG_BAR]);
	return 0;

err_irq:
	free_irq(pci_irq_vector(pdev, MNIC_IRQ_VEC_CMD), d);
err_vectors:
	pci_free_irq_vectors(pdev);
err_unmap:
	pci_iounmap(pdev, d->regs);
	d->regs = NULL;
err_region:
	pci_release_region(pdev, MNIC_IRQ_REG_BAR);
	return ret;
}

void mnic_irq_exit(struct mnic_kdev *d)
{
	struct pci_dev *pdev = d->pdev;

	if (!d->regs)
		return;
	d->uar_ok = false;
	if (d->irq_ok) {
		WRITE_ONCE(d->irq_ok, false);
		/* our slot only if it is still ours */
		if (ioread32(&d->seg->irq_host_ids[d->irq_slot]) == d->irq_own)
			iowrite32(0, &d->seg->irq_host_ids[d->irq_slot]);
		free_irq(pci_irq_vector(pdev, MNIC_IRQ_VEC_CMD), d);
		pci_free_irq_vectors(pdev);
	}
	pci_iounmap(pdev, d->regs);
	d->regs = NULL;
	pci_release_region(pdev, MNIC_IRQ_REG_BAR);
}

int mnic_irq_net_vector(struct mnic_kdev *d)
{
	if (!READ_ONCE(d->irq_ok) || d->irq_nvec <= MNIC_IRQ_VEC_NET)
		return -ENXIO;
	return pci_irq_vector(d->pdev, MNIC_IRQ_VEC_NET);
}

int mnic_irq_eq_vector(struct mnic_kdev *d)
{
	if (!READ_ONCE(d->irq_ok) || d->irq_nvec <= MNIC_IRQ_VEC_EQ)
		return -ENXIO;
	return pci_irq_vector(d->pdev, MNIC_IRQ_VEC_EQ);
}

int mnic_irq_ring_data(struct mnic_kdev *d)
{
	if (!READ_ONCE(d->irq_ok)) {
		mnic_count(d, MNIC_KCNT_ring_refused);
		return -EOPNOTSUPP;
	}
	/* The application's db_seq store went through its own (write-
	 * combining) mapping of the doorbell page; its ring comes after it
	 * in program order, and the wmb in mnic_irq_ring drains this CPU's
	 * buffers: a store made on another CPU needs that CPU's own fence,
	 * which the application does before it rings (libmnic). */
	mnic_irq_ring(d);
	mnic_count(d, MNIC_KCNT_ring_data);
	return 0;
}

void mnic_irq_ring(struct mnic_kdev *d)
{
	if (!READ_ONCE(d->irq_ok))
		return;
	/* wmb (SFENCE): the write-combined stores the ring announces (entry,
	 * owner bit, cmdq_pi) reach the shared memory before the uncached
	 * Doorbell write makes the NIC look. */
	wmb();
	iowrite32(d->irq_ring, d->regs + MNIC_IRQ_REG_DOORBELL);
	mnic_count(d, MNIC_KCNT_irq_rings);
}
