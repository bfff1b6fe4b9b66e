// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: completion events of the RDMA device (IBA 11.4.2.2 Request
 * Completion Notification; mnic/queues.h "Completion events").
 *
 * Each ucontext gets one event queue (EQ) of the firmware in kernel memory
 * (two zeroed pages: the ring of MNIC_IB_EQ_ENTRIES EQEs and its doorbell
 * record, one MTT the module writes), and every CQ created with a
 * completion channel is bound to it (MODIFY_CQ).  The application arms a
 * CQ itself (the provider writes the arm word of the CQ's record and rings
 * db_seq); the firmware then writes one EQE when the arm fires and
 * raises the EQ's vector, MNIC_IRQ_VEC_EQ (rocev2/eq.c, after the owner
 * byte).  On an ivshmem-doorbell function that is MSI-X vector 2: its
 * handler queues eq_work at once, which reads every EQ of the device (one
 * vector for all ucontexts: num_comp_vectors is 1).  Where the function
 * has no such vector (an ivshmem-plain BAR raises nothing, or fewer
 * vectors were granted), eq_work polls instead, every jiffy while any
 * ucontext has an EQ (counter ib_eq_polls).  eq_work hands each EQE to its
 * CQ's comp_handler: ib_uverbs queues the event on the CQ's completion
 * channel, ibv_get_cq_event returns it.
 *
 * No event is lost between an interrupt and the work: queueing work that
 * is already running queues it again (its pending bit is cleared before
 * it runs), and the firmware raises the vector only after the EQE's owner
 * byte is written, so a pass that starts after the raise sees the EQE.
 *
 * Ownership of the EQE (as of a CQE): the firmware writes the body, a
 * write barrier, the owner byte (MNIC_CQE_OWNER of its producer index);
 * the module reads the owner, then the body after a read barrier, and
 * writes its consumer index into the record after the body is read (the
 * firmware reads that index before it reuses a slot).
 *
 * Lifetime: a CQ is found by its firmware handle in the ucontext's xarray
 * under eq_lock, which destroy_cq takes to unlink it, so the work never
 * calls into a CQ the core is freeing.  The EQ goes with DEALLOC_CONTEXT;
 * its pages are freed only if that succeeded (else leaked, ib_pages_leaked).
 */
#include <linux/gfp.h>
#include <linux/interrupt.h>
#include <linux/mm.h>
#include <linux/workqueue.h>

#include "mnic_ib.h"

/* One page of EQEs: at least the CQs with a channel a ucontext has (a full
 * EQ writes nothing and leaves the CQ armed: its next CQE tries again). */
#define MNIC_IB_EQ_ENTRIES (PAGE_SIZE / MNIC_EQE_SIZE)
#define MNIC_IB_EQ_PAGES   2u          /* the ring, then the record */
#define MNIC_IB_EQ_IOVA    0x10000ull  /* any page-aligned IOVA: the MTT is the EQ's own */
/* A vector of its own, after the netdev's; raised also where it reaches
 * no handler (ivshmem-plain: nothing is delivered, the EQs are polled) */
#define MNIC_IB_EQ_VECTOR  MNIC_IRQ_VEC_EQ

struct eq_walk {
	struct page *page;
	u32 next;
};

static u64 next_eq_page(void *it)
{
	struct eq_walk *w = it;

	return page_to_phys(w->page + w->next++);
}

int mnic_ib_eq_create(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc)
{
	struct mnic_kdev *d = ib->d;
	struct mnic_cmd_create_eq_in in = { .hdr = { .opcode = MNIC_CMD_CREATE_EQ,
						     .ctx = uc->fw.ctx } };
	struct mnic_cmd_handle_out out;
	struct eq_walk walk;
	int ret;

	mutex_init(&uc->eq_lock);
	xa_init(&uc->cqs);
	INIT_LIST_HEAD(&uc->eq_node);
	if (!READ_ONCE(d->hostmem_size))
		return 0;   /* no host memory: no EQ, no events (CQs work without) */
	BUILD_BUG_ON(MNIC_IB_EQ_ENTRIES & (MNIC_IB_EQ_ENTRIES - 1));
	uc->eq_page = alloc_pages(GFP_KERNEL | __GFP_ZERO, get_order(MNIC_IB_EQ_PAGES * PAGE_SIZE));
	if (!uc->eq_page)
		return -ENOMEM;
	walk = (struct eq_walk){ .page = uc->eq_page };
	ret = mnic_mtt_create(d, uc->fw.ctx, MNIC_IB_EQ_IOVA, MNIC_IB_EQ_PAGES * PAGE_SIZE,
			      MNIC_IB_EQ_PAGES, next_eq_page, &walk, MNIC_IB_CMD_TIMEOUT_MS,
			      &uc->eq_mtt);
	if (ret)
		goto err_pages;
	in.q = (struct mnic_queue_desc){
		.ring_addr = MNIC_IB_EQ_IOVA, .dbrec_addr = MNIC_IB_EQ_IOVA + PAGE_SIZE,
		.size = MNIC_IB_EQ_ENTRIES, .ring_mtt = uc->eq_mtt, .dbrec_mtt = uc->eq_mtt,
	};
	in.vector = MNIC_IB_EQ_VECTOR;
	ret = mnic_ib_cmd(ib, &in, sizeof(in), &out, sizeof(out));
	if (ret)
		goto err_mtt;
	uc->eq = out.handle;
	uc->eq_ci = 0;
	uc->has_eq = true;
	mutex_lock(&ib->eq_list_lock);
	list_add(&uc->eq_node, &ib->eq_list);
	mutex_unlock(&ib->eq_list_lock);
	/* polled: start the poll; on MSI-X a first pass finds nothing */
	mod_delayed_work(system_wq, &ib->eq_work, ib->eq_irq >= 0 ? 0 : 1);
	return 0;

err_mtt:
	if (mnic_mtt_destroy(d, uc->fw.ctx, uc->eq_mtt, MNIC_IB_CMD_TIMEOUT_MS))
		ret = -EREMOTEIO;
err_pages:
	/* a failed MTT create that could not be undone (-EREMOTEIO) may
	 * still name the pages: keep them */
	if (ret != -EREMOTEIO)
		__free_pages(uc->eq_page, get_order(MNIC_IB_EQ_PAGES * PAGE_SIZE));
	uc->eq_page = NULL;
	return ret;
}

/* The ucontext's end, after DEALLOC_CONTEXT (dma_stopped: it succeeded,
 * the firmware's EQ is gone with the context). */
void mnic_ib_eq_destroy(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc, bool dma_stopped)
{
	if (!uc->has_eq)
		return;
	mutex_lock(&ib->eq_list_lock);
	list_del_init(&uc->eq_node);
	mutex_unlock(&ib->eq_list_lock);
	/* the work no longer looks at it (eq_list_lock) */
	if (dma_stopped)
		__free_pages(uc->eq_page, get_order(MNIC_IB_EQ_PAGES * PAGE_SIZE));
	else
		atomic64_add(MNIC_IB_EQ_PAGES, &ib->d->cnt[MNIC_KCNT_ib_pages_leaked]);
	uc->eq_page = NULL;
	uc->has_eq = false;
	xa_destroy(&uc->cqs);
}

/* A CQ with a completion channel (the core set cq_context): bound to the
 * ucontext's EQ, and findable by its handle. */
int mnic_ib_eq_bind(struct mnic_ib_dev *ib, struct mnic_ib_cq *cq)
{
	struct mnic_ib_ucontext *uc = cq->uc;
	struct mnic_cmd_modify_cq_in in = {
		.hdr = { .opcode = MNIC_CMD_MODIFY_CQ, .op_mod = MNIC_MODIFY_CQ_EQ,
			 .ctx = uc->fw.ctx },
		.cq = cq->handle,
	};
	struct mnic_cmd_simple_out out;
	int ret;

	if (!uc->has_eq || !cq->ibcq.cq_context)
		return 0;
	in.eq = uc->eq;
	mutex_lock(&uc->eq_lock);
	ret = xa_insert(&uc->cqs, cq->handle, cq, GFP_KERNEL);
	mutex_unlock(&uc->eq_lock);
	if (ret)
		return ret;
	ret = mnic_ib_cmd(ib, &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		mnic_ib_eq_unbind(cq);
		return ret;
	}
	cq->bound = true;
	return 0;
}

void mnic_ib_eq_unbind(struct mnic_ib_cq *cq)
{
	struct mnic_ib_ucontext *uc = cq->uc;

	mutex_lock(&uc->eq_lock);
	xa_erase(&uc->cqs, cq->handle);
	mutex_unlock(&uc->eq_lock);
	cq->bound = false;
}

/* Every new EQE of uc: its CQ's comp_handler. */
static void eq_poll(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc)
{
	const struct mnic_eqe *ring = page_address(uc->eq_page);
	struct mnic_dbrec *rec = page_address(uc->eq_page + 1);
	struct mnic_eqe e;
	struct mnic_ib_cq *cq;
	u32 got = 0;

	mutex_lock(&uc->eq_lock);
	for (;;) {
		const struct mnic_eqe *slot = &ring[uc->eq_ci & (MNIC_IB_EQ_ENTRIES - 1)];

		if (READ_ONCE(slot->owner) != MNIC_CQE_OWNER(uc->eq_ci, MNIC_IB_EQ_ENTRIES))
			break;
		/* the owner byte is written last: the body after it */
		rmb();
		memcpy(&e, slot, sizeof(e));
		uc->eq_ci++;
		got++;
		cq = e.type == MNIC_EQE_COMPLETION ? xa_load(&uc->cqs, e.cq) : NULL;
		if (!cq) {
			/* a CQ destroyed since, or not one of ours */
			mnic_count(ib->d, MNIC_KCNT_ib_event_dropped);
			continue;
		}
		mnic_count(ib->d, MNIC_KCNT_ib_events);
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	}
	if (got) {
		/* the EQEs are read before the NIC may reuse their slots */
		mb();
		WRITE_ONCE(rec->index, uc->eq_ci);
	}
	mutex_unlock(&uc->eq_lock);
}

static void eq_work(struct work_struct *w)
{
	struct mnic_ib_dev *ib = container_of(to_delayed_work(w), struct mnic_ib_dev, eq_work);
	struct mnic_ib_ucontext *uc;
	bool any;

	mutex_lock(&ib->eq_list_lock);
	list_for_each_entry(uc, &ib->eq_list, eq_node)
		eq_poll(ib, uc);
	any = !list_empty(&ib->eq_list);
	mutex_unlock(&ib->eq_list_lock);
	if (ib->eq_irq >= 0 || !any || READ_ONCE(ib->eq_stop))
		return;
	mnic_count(ib->d, MNIC_KCNT_ib_eq_polls);
	schedule_delayed_work(&ib->eq_work, 1);
}

/* MSI-X vector 2: an EQE was written (or an EQ is full and has EQEs to
 * take).  Hard-irq context: the EQs are read in eq_work, which sleeps on
 * the lists' mutexes; mod_delayed_work is safe here (irqsave inside). */
static irqreturn_t eq_irq(int irq, void *data)
{
	struct mnic_ib_dev *ib = data;

	mnic_count(ib->d, MNIC_KCNT_ib_eq_irqs);
	if (!READ_ONCE(ib->eq_stop))
		mod_delayed_work(system_wq, &ib->eq_work, 0);
	return IRQ_HANDLED;
}

/* Before ib_register_device (no ucontext yet): the EQ vector's handler if
 * the function has that vector, else the EQs will be polled. */
void mnic_ib_eq_init(struct mnic_ib_dev *ib)
{
	struct mnic_kdev *d = ib->d;
	int irq = mnic_irq_eq_vector(d);

	mutex_init(&ib->eq_list_lock);
	INIT_LIST_HEAD(&ib->eq_list);
	INIT_DELAYED_WORK(&ib->eq_work, eq_work);
	ib->eq_irq = -1;
	if (irq < 0) {
		dev_info(&d->pdev->dev, "completion events: no event-queue vector, polled\n");
		return;
	}
	snprintf(ib->eq_irq_name, sizeof(ib->eq_irq_name), "mnic-eq@%s", pci_name(d->pdev));
	if (request_irq(irq, eq_irq, 0, ib->eq_irq_name, ib)) {
		dev_warn(&d->pdev->dev, "completion events: irq %d refused, polled\n", irq);
		return;
	}
	ib->eq_irq = irq;
	dev_info(&d->pdev->dev, "completion events on MSI-X vector %d = irq %d\n",
		 MNIC_IRQ_VEC_EQ, irq);
}

/* After ib_unregister_device: every ucontext is gone.  The handler first
 * (it queues the work), then the work. */
void mnic_ib_eq_exit(struct mnic_ib_dev *ib)
{
	WRITE_ONCE(ib->eq_stop, true);
	if (ib->eq_irq >= 0)
		free_irq(ib->eq_irq, ib);
	ib->eq_irq = -1;
	cancel_delayed_work_sync(&ib->eq_work);
}
