// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: migration of an RDMA ucontext (issue 17; mnic/ib_mig.h has the
 * ABI, docs/kernel-driver.md "Migration" the design).  A checkpoint tool
 * (the CRIU plugin, hostdrv/criu/) calls the uverbs driver methods below
 * on the process's uverbs file:
 *
 *   dump     DUMP_CONTEXT of the ucontext's firmware context: its QPs stop
 *            (peers that send get NAK_STOPPED, MigrOS's Stopped state), and
 *            the image (docs/migration-image.md) comes back with a table
 *            of the uverbs objects: their handles, user handles and the
 *            create parameters the restore repeats.
 *   abort    ABORT_DUMP: the QPs resume in place (a dump that failed).
 *   restore  on a fresh ucontext of the target: the image goes to the
 *            firmware (RESTORE_OBJECT, with a peer-address override); every
 *            object then exists, Stopped, its MTTs unwritten.  The tool
 *            recreates the uverbs objects with the ordinary create verbs,
 *            whose udata tail names the restored object: this file checks
 *            the claim against the image (mnic_ib_mig_claim) and the verb
 *            makes a shell that issues no create command.  The memory is
 *            not pinned then: CRIU opens files before the process's memory
 *            is in place.
 *   resume   once it is (CRIU's RESUME_DEVICES_LATE, the task still
 *            stopped): every shell's memory is pinned from the address
 *            space of the process that issued restore (a worker adopts it,
 *            kthread_use_mm, so ib_umem pins and charges that mm), the MTTs
 *            are written, RESUME_CONTEXT sends RESUME to every peer.
 *
 * Everything from user space is hostile: the image is parsed only to learn
 * which objects it holds (the firmware validates it fully), every claim
 * must match a record exactly once, resume refuses while a record is
 * unclaimed.  Refusals are counted (ib_mig_*).
 */
#include <linux/kthread.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/unaligned.h>

#include "mnic_ib.h"

#define UVERBS_MODULE_NAME mnic_ib
#include <rdma/uverbs_named_ioctl.h>

/* docs/migration-image.md: header, record header, record types */
#define IMG_HDR_LEN      40u
#define IMG_REC_HDR_LEN  8u
enum { IMG_PD = 0, IMG_MR = 1, IMG_CQ = 2, IMG_SRQ = 3, IMG_QP = 4, IMG_MTT = 6 };
#define IMG_MAX_RECS     4096u

/* One record of the image, the fields a claim is checked against. */
struct mig_rec {
	u16 type;
	bool claimed;
	u32 handle;                        /* PD/CQ handle, lkey, QPN, MTT handle */
	u32 pd, mtt, mtt2, mtt3, mtt4;     /* MR/QP: PD; the MTTs it names */
	u32 scq, rcq, size, size2;
	u64 addr, addr2, addr3;            /* MR addr/len; CQ ring/dbrec; QP SQ/RQ ring; MTT iova/len */
	u8 page_shift;
};

struct mnic_ib_mig {
	struct mm_struct *mm;              /* of the process that restored (mmgrab) */
	u32 n;
	struct mig_rec rec[];
};

static u32 le32_at(const u8 *p)
{
	return get_unaligned_le32(p);
}

static u64 le64_at(const u8 *p)
{
	return get_unaligned_le64(p);
}

/* The records' identities; the payload sizes read are checked here, the
 * rest of the image is the firmware's to validate. */
static int parse_image(const u8 *img, u32 len, struct mnic_ib_mig **out)
{
	static const u32 min_payload[] = {
		[IMG_PD] = 4, [IMG_MR] = 32, [IMG_CQ] = 37, [IMG_SRQ] = 49, [IMG_QP] = 88,
		[5] = 0, [IMG_MTT] = 21,
	};
	struct mnic_ib_mig *m;
	u32 count, total, off, i;

	if (len < IMG_HDR_LEN || memcmp(img, "MNICDUMP", 8))
		return -EINVAL;
	count = le32_at(img + 12);
	total = le32_at(img + 16);
	if (total != len || count > IMG_MAX_RECS)
		return -EINVAL;
	m = kvzalloc(struct_size(m, rec, count), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	for (i = 0, off = IMG_HDR_LEN; i < count; i++) {
		struct mig_rec *r = &m->rec[i];
		const u8 *p;
		u32 rlen;
		u16 type;

		if (off >= len || len - off < IMG_REC_HDR_LEN)
			goto bad;
		type = get_unaligned_le16(img + off);
		rlen = le32_at(img + off + 4);
		if (rlen < IMG_REC_HDR_LEN || rlen > len - off || type >= ARRAY_SIZE(min_payload) ||
		    type == IMG_SRQ || type == 5 || rlen - IMG_REC_HDR_LEN < min_payload[type])
			goto bad;   /* SRQs: this driver makes none */
		p = img + off + IMG_REC_HDR_LEN;
		r->type = type;
		r->handle = le32_at(p);
		switch (type) {
		case IMG_MTT:
			r->addr = le64_at(p + 4);
			r->addr2 = le64_at(p + 12);
			r->page_shift = p[20];
			break;
		case IMG_MR:
			r->pd = le32_at(p + 4);
			r->addr = le64_at(p + 8);
			r->addr2 = le64_at(p + 16);
			r->mtt = le32_at(p + 28);
			break;
		case IMG_CQ:
			r->addr = le64_at(p + 4);
			r->addr2 = le64_at(p + 12);
			r->size = le32_at(p + 20);
			r->mtt = le32_at(p + 24);
			r->mtt2 = le32_at(p + 28);
			break;
		case IMG_QP:
			r->pd = le32_at(p + 4);
			r->scq = le32_at(p + 8);
			r->rcq = le32_at(p + 12);
			r->addr = le64_at(p + 20);
			r->size = le32_at(p + 36);
			r->mtt = le32_at(p + 40);
			r->mtt2 = le32_at(p + 44);
			r->addr2 = le64_at(p + 56);
			r->size2 = le32_at(p + 72);
			r->mtt3 = le32_at(p + 76);
			r->mtt4 = le32_at(p + 80);
			break;
		}
		off += rlen;
	}
	if (off != len)
		goto bad;
	m->n = count;
	*out = m;
	return 0;
bad:
	kvfree(m);
	return -EINVAL;
}

static struct mig_rec *find_rec(struct mnic_ib_mig *m, u16 type, u32 handle)
{
	u32 i;

	for (i = 0; i < m->n; i++)
		if (m->rec[i].type == type && m->rec[i].handle == handle)
			return &m->rec[i];
	return NULL;
}

/* The MTT record mtt covers exactly [iova, iova + len) in PAGE_SIZE pages. */
static bool mtt_is(struct mnic_ib_mig *m, u32 mtt, u64 iova, u64 len)
{
	struct mig_rec *t = find_rec(m, IMG_MTT, mtt);

	return t && t->addr == iova && t->addr2 == len && t->page_shift == PAGE_SHIFT;
}

static const u16 kind_type[] = {
	[MNIC_IB_OBJ_PD] = IMG_PD, [MNIC_IB_OBJ_MR] = IMG_MR,
	[MNIC_IB_OBJ_CQ] = IMG_CQ, [MNIC_IB_OBJ_QP] = IMG_QP,
};

int mnic_ib_mig_claim(struct mnic_ib_dev *ib, struct mnic_ib_ucontext *uc,
		      const struct mnic_ib_mig_claim *c, int access, struct mnic_ib_umem *mem)
{
	struct mnic_ib_mig *m;
	struct mig_rec *r;
	bool ok = false;
	int ret = -EINVAL;

	mutex_lock(&uc->objs_lock);
	m = uc->mig;
	if (!m || c->kind >= ARRAY_SIZE(kind_type) || !c->kind)
		goto out;
	r = find_rec(m, kind_type[c->kind], c->handle);
	if (!r || r->claimed)
		goto out;
	switch (c->kind) {
	case MNIC_IB_OBJ_PD:
		ok = true;
		break;
	case MNIC_IB_OBJ_MR:
		ok = r->pd == c->pd && r->addr == c->iova && r->addr2 == c->len && r->mtt &&
		     mtt_is(m, r->mtt, c->iova, c->len);
		break;
	case MNIC_IB_OBJ_CQ:
		ok = r->addr == c->addr && r->addr2 == c->dbrec && r->size == c->cq_entries &&
		     r->mtt && r->mtt2 == r->mtt && mtt_is(m, r->mtt, c->addr, c->len);
		break;
	case MNIC_IB_OBJ_QP:
		ok = r->pd == c->pd && r->scq == c->send_cq && r->rcq == c->recv_cq &&
		     r->addr == c->addr && r->addr2 == c->rq_ring && r->size == c->sq_entries &&
		     r->size2 == c->rq_entries && r->mtt && r->mtt2 == r->mtt &&
		     r->mtt3 == r->mtt && r->mtt4 == r->mtt && mtt_is(m, r->mtt, c->addr, c->len);
		break;
	}
	if (!ok)
		goto out;
	r->claimed = true;
	if (c->kind != MNIC_IB_OBJ_PD) {
		struct mig_rec *t = find_rec(m, IMG_MTT, r->mtt);

		t->claimed = true;
		*mem = (struct mnic_ib_umem){
			.mtt = r->mtt, .deferred = true, .addr = c->addr, .len = c->len,
			.access = access,
		};
		INIT_LIST_HEAD(&mem->orphan);
	}
	ret = 0;
out:
	mutex_unlock(&uc->objs_lock);
	if (ret)
		mnic_count(ib->d, MNIC_KCNT_ib_mig_refused);
	return ret;
}

void mnic_ib_obj_add(struct mnic_ib_ucontext *uc, struct mnic_ib_obj *o, u32 kind)
{
	mutex_lock(&uc->objs_lock);
	o->kind = kind;
	list_add_tail(&o->node, &uc->objs);
	mutex_unlock(&uc->objs_lock);
}

void mnic_ib_obj_del(struct mnic_ib_ucontext *uc, struct mnic_ib_obj *o)
{
	mutex_lock(&uc->objs_lock);
	if (o->kind)
		list_del(&o->node);
	o->kind = 0;
	mutex_unlock(&uc->objs_lock);
}

static void mig_put(struct mnic_ib_mig *m)
{
	if (!m)
		return;
	if (m->mm)
		mmdrop(m->mm);
	kvfree(m);
}

/* The ucontext's end: no method runs on it any more. */
void mnic_ib_mig_free(struct mnic_ib_ucontext *uc)
{
	mig_put(uc->mig);
	uc->mig = NULL;
}

static struct mnic_ib_ucontext *method_uc(struct uverbs_attr_bundle *attrs,
					  struct mnic_ib_mig_req *req)
{
	struct ib_ucontext *ibuc = ib_uverbs_get_ucontext(attrs);
	int ret;

	if (IS_ERR(ibuc))
		return ERR_CAST(ibuc);
	ret = uverbs_copy_from(req, attrs, MNIC_IB_ATTR_REQ);
	if (ret)
		return ERR_PTR(ret);
	/* (not -EPROTONOSUPPORT: the uverbs core keeps that for methods it
	 * cannot call, and warns when a handler returns it) */
	if (req->version != MNIC_IB_MIG_VERSION)
		return ERR_PTR(-EINVAL);
	return to_muc(ibuc);
}

/* ---- NOTE_FD ------------------------------------------------------------ */
static int UVERBS_HANDLER(MNIC_IB_METHOD_NOTE_FD)(struct uverbs_attr_bundle *attrs)
{
	struct mnic_ib_mig_req req;
	struct mnic_ib_ucontext *uc = method_uc(attrs, &req);

	if (IS_ERR(uc))
		return PTR_ERR(uc);
	if (req.async_fd < -1)
		return -EINVAL;
	WRITE_ONCE(uc->async_fd, req.async_fd);
	return 0;
}

/* ---- DUMP --------------------------------------------------------------- */

/* The CQ's and QP's uobject: the core's ib_ucq_object / ib_uqp_object
 * begin with their struct ib_uobject (ib_uevent_object first); checked
 * against what the core set (object, context) before it is believed. */
static int uobj_id(void *uobject, void *object, struct mnic_ib_ucontext *uc, u32 *id)
{
	struct ib_uobject *u = uobject;

	if (!u || u->object != object || u->context != &uc->ibuc || u->id < 0)
		return -EOPNOTSUPP;
	*id = u->id;
	return 0;
}

static int table_entry(struct mnic_ib_ucontext *uc, struct mnic_ib_obj *o,
		       struct mnic_ib_mig_obj *e)
{
	memset(e, 0, sizeof(*e));
	e->kind = o->kind;
	e->comp_fd = -1;
	switch (o->kind) {
	case MNIC_IB_OBJ_PD: {
		struct mnic_ib_pd *pd = container_of(o, struct mnic_ib_pd, obj);

		e->fw = pd->pdn;
		return uobj_id(pd->ibpd.uobject, &pd->ibpd, uc, &e->handle);
	}
	case MNIC_IB_OBJ_MR: {
		struct mnic_ib_mr *mr = container_of(o, struct mnic_ib_mr, obj);

		e->fw = mr->ibmr.lkey;
		e->addr = mr->start;
		e->len = mr->length;
		e->iova = mr->virt;
		e->access = mr->access;
		if (!mr->ibmr.pd || !mr->ibmr.pd->uobject)
			return -EOPNOTSUPP;
		e->pd = mr->ibmr.pd->uobject->id;
		return uobj_id(mr->ibmr.uobject, &mr->ibmr, uc, &e->handle);
	}
	case MNIC_IB_OBJ_CQ: {
		struct mnic_ib_cq *cq = container_of(o, struct mnic_ib_cq, obj);
		struct ib_uobject *u = (struct ib_uobject *)cq->ibcq.uobject;

		e->fw = cq->handle;
		e->addr = cq->req.buf_addr;
		e->len = cq->req.buf_len;
		e->entries = cq->req.entries;
		e->dbrec_off = cq->req.dbrec_off;
		e->cqe = cq->cqe;
		e->comp_fd = cq->comp_fd;
		e->has_channel = cq->ibcq.cq_context != NULL;
		e->user_handle = u ? u->user_handle : 0;
		return uobj_id(u, &cq->ibcq, uc, &e->handle);
	}
	case MNIC_IB_OBJ_QP: {
		struct mnic_ib_qp *qp = container_of(o, struct mnic_ib_qp, obj);
		struct ib_uobject *u = (struct ib_uobject *)qp->ibqp.uobject;
		int ret;

		e->fw = qp->qpn;
		e->addr = qp->req.buf_addr;
		e->len = qp->req.buf_len;
		e->entries = qp->req.sq_entries;
		e->rq_entries = qp->req.rq_entries;
		e->rq_off = qp->req.rq_off;
		e->dbrec_off = qp->req.sq_dbrec_off;
		e->rq_dbrec_off = qp->req.rq_dbrec_off;
		e->max_send_sge = qp->max_send_sge;
		e->max_recv_sge = qp->max_recv_sge;
		e->max_inline = MNIC_MAX_INLINE;
		e->sig_all = qp->sig_all;
		e->user_handle = u ? u->user_handle : 0;
		if (!qp->ibqp.pd || !qp->ibqp.pd->uobject)
			return -EOPNOTSUPP;
		e->pd = qp->ibqp.pd->uobject->id;
		ret = uobj_id((void *)qp->ibqp.send_cq->uobject, qp->ibqp.send_cq, uc, &e->send_cq);
		if (!ret)
			ret = uobj_id((void *)qp->ibqp.recv_cq->uobject, qp->ibqp.recv_cq, uc,
				      &e->recv_cq);
		if (!ret)
			ret = uobj_id(u, &qp->ibqp, uc, &e->handle);
		return ret;
	}
	}
	return -EOPNOTSUPP;
}

static int UVERBS_HANDLER(MNIC_IB_METHOD_DUMP)(struct uverbs_attr_bundle *attrs)
{
	struct mnic_ib_mig_req req;
	struct mnic_ib_ucontext *uc = method_uc(attrs, &req);
	struct mnic_ib_mig_resp resp = { .async_fd = -1 };
	struct mnic_cmd_handle_in in = { .hdr = { .opcode = MNIC_CMD_DUMP_CONTEXT } };
	struct mnic_ib_mig_obj *table = NULL;
	struct mnic_cmd_dump_out *out = NULL;
	struct mnic_ib_dev *ib;
	struct mnic_ib_obj *o;
	u32 n = 0, cap;
	int ret;

	if (IS_ERR(uc))
		return PTR_ERR(uc);
	ib = to_mib(uc->ibuc.device);
	cap = req.table_len / sizeof(*table);
	ret = -ENOMEM;
	table = kvcalloc(max(cap, 1u), sizeof(*table), GFP_KERNEL);
	out = kvzalloc(MNIC_CMD_MAX_LEN, GFP_KERNEL);
	if (!table || !out)
		goto fail;
	mutex_lock(&uc->objs_lock);
	ret = uc->mig ? -EBUSY : 0;   /* a restore not resumed: nothing to dump */
	if (!ret && atomic_read(&uc->n_ah))
		ret = -EOPNOTSUPP;        /* address handles: not recreated by a restore */
	list_for_each_entry(o, &uc->objs, node) {
		if (ret)
			break;
		if (n >= cap) {
			ret = -ENOSPC;
			break;
		}
		ret = table_entry(uc, o, &table[n++]);
	}
	if (ret == -ENOSPC) {
		n = 0;   /* tell how many entries the table needs */
		list_for_each_entry(o, &uc->objs, node)
			n++;
	}
	mutex_unlock(&uc->objs_lock);
	if (ret) {
		resp.n_objects = n;
		goto fail_resp;
	}
	in.hdr.ctx = uc->fw.ctx;
	in.handle = uc->fw.ctx;
	ret = mnic_ib_cmd(ib, &in, sizeof(in), out, MNIC_CMD_MAX_LEN);
	if (ret)
		goto fail;
	resp.image_len = out->image_len;
	if (out->image_len > MNIC_CMD_MAX_LEN - sizeof(*out) || out->image_len > req.image_len) {
		/* no room: the dump is undone, the QPs run on */
		struct mnic_cmd_handle_in ab = {
			.hdr = { .opcode = MNIC_CMD_ABORT_DUMP, .ctx = uc->fw.ctx },
			.handle = uc->fw.ctx,
		};
		struct mnic_cmd_simple_out aout;

		mnic_ib_cmd(ib, &ab, sizeof(ab), &aout, sizeof(aout));
		ret = -ENOSPC;
		goto fail_resp;
	}
	if (copy_to_user(u64_to_user_ptr(req.image_addr), out + 1, out->image_len) ||
	    copy_to_user(u64_to_user_ptr(req.table_addr), table, n * sizeof(*table))) {
		ret = -EFAULT;   /* the context stays Stopped: the caller aborts */
		goto fail;
	}
	resp.n_objects = n;
	resp.ctx = uc->fw.ctx;
	BUILD_BUG_ON(sizeof(resp.objects) != sizeof(out->objects) ||
		     sizeof(resp.bytes) != sizeof(out->bytes));
	memcpy(resp.objects, out->objects, sizeof(resp.objects));
	memcpy(resp.bytes, out->bytes, sizeof(resp.bytes));
	resp.async_fd = READ_ONCE(uc->async_fd);
	resp.db_addr = READ_ONCE(uc->db->mapped_at);
	resp.db_mmap_offset = rdma_user_mmap_get_offset(&uc->db->rdma);
	if (uc->uar) {
		resp.uar_addr = READ_ONCE(uc->uar->mapped_at);
		resp.uar_mmap_offset = rdma_user_mmap_get_offset(&uc->uar->rdma);
	}
	ret = uverbs_copy_to(attrs, MNIC_IB_ATTR_RESP, &resp, sizeof(resp));
	if (!ret)
		mnic_count(ib->d, MNIC_KCNT_ib_mig_dump);
	goto done;
fail_resp:
	/* tell the sizes needed */
	uverbs_copy_to(attrs, MNIC_IB_ATTR_RESP, &resp, sizeof(resp));
fail:
	mnic_count(ib->d, MNIC_KCNT_ib_mig_dump_failed);
done:
	kvfree(out);
	kvfree(table);
	return ret;
}

/* ---- ABORT -------------------------------------------------------------- */
static int UVERBS_HANDLER(MNIC_IB_METHOD_ABORT)(struct uverbs_attr_bundle *attrs)
{
	struct mnic_ib_mig_req req;
	struct mnic_ib_ucontext *uc = method_uc(attrs, &req);
	struct mnic_cmd_handle_in in = { .hdr = { .opcode = MNIC_CMD_ABORT_DUMP } };
	struct mnic_cmd_simple_out out;
	int ret;

	if (IS_ERR(uc))
		return PTR_ERR(uc);
	in.hdr.ctx = uc->fw.ctx;
	in.handle = uc->fw.ctx;
	ret = mnic_ib_cmd(to_mib(uc->ibuc.device), &in, sizeof(in), &out, sizeof(out));
	if (!ret)
		mnic_count(to_mib(uc->ibuc.device)->d, MNIC_KCNT_ib_mig_abort);
	return ret;
}

/* ---- RESTORE ------------------------------------------------------------ */
static int UVERBS_HANDLER(MNIC_IB_METHOD_RESTORE)(struct uverbs_attr_bundle *attrs)
{
	struct mnic_ib_mig_req req;
	struct mnic_ib_ucontext *uc = method_uc(attrs, &req);
	struct mnic_cmd_restore_in *in = NULL;
	struct mnic_cmd_simple_out out;
	struct mnic_ib_mig *m = NULL;
	struct mnic_ib_dev *ib;
	int ret;

	if (IS_ERR(uc))
		return PTR_ERR(uc);
	ib = to_mib(uc->ibuc.device);
	ret = -EINVAL;
	if (req.image_len < IMG_HDR_LEN || req.image_len > MNIC_CMD_MAX_LEN - sizeof(*in) ||
	    req.table_len || memchr_inv(req.reserved, 0, sizeof(req.reserved)))
		goto fail;
	ret = -ENOMEM;
	in = kvzalloc(sizeof(*in) + req.image_len, GFP_KERNEL);
	if (!in)
		goto fail;
	ret = -EFAULT;
	if (copy_from_user(in + 1, u64_to_user_ptr(req.image_addr), req.image_len))
		goto fail;
	ret = parse_image((const u8 *)(in + 1), req.image_len, &m);
	if (ret)
		goto fail;
	in->hdr.opcode = MNIC_CMD_RESTORE_OBJECT;
	in->hdr.op_mod = MNIC_RESTORE_IMAGE;
	in->hdr.ctx = uc->fw.ctx;
	in->data_len = req.image_len;
	in->old_dip = req.old_dip;
	in->new_dip = req.new_dip;
	memcpy(in->new_dmac, req.new_dmac, sizeof(in->new_dmac));
	/* fresh, restored and marked under one hold of the lock: a second
	 * RESTORE (or a create verb) on the same file waits, then sees it */
	mutex_lock(&uc->objs_lock);
	ret = -EBUSY;
	if (!uc->mig && list_empty(&uc->objs))
		ret = mnic_ib_cmd(ib, in, sizeof(*in) + req.image_len, &out, sizeof(out));
	if (!ret) {
		mmgrab(current->mm);
		m->mm = current->mm;
		uc->mig = m;
	}
	mutex_unlock(&uc->objs_lock);
	if (ret)
		goto fail;
	kvfree(in);
	mnic_count(ib->d, MNIC_KCNT_ib_mig_restore);
	return 0;
fail:
	mig_put(m);
	kvfree(in);
	mnic_count(ib->d, MNIC_KCNT_ib_mig_restore_failed);
	return ret;
}

/* ---- RESUME ------------------------------------------------------------- */
struct pin_work {
	struct work_struct work;
	struct mnic_ib_dev *ib;
	struct mm_struct *mm;
	struct mnic_ib_umem **mems;
	u32 n;
	int ret;
};

/* In a worker (a kernel thread) that adopts the restored process's mm:
 * ib_umem_get pins and charges that address space (umem->owning_mm). */
static void pin_fn(struct work_struct *w)
{
	struct pin_work *p = container_of(w, struct pin_work, work);
	u32 i;

	kthread_use_mm(p->mm);
	for (i = 0; i < p->n && !p->ret; i++) {
		struct mnic_ib_umem *m = p->mems[i];
		struct ib_umem *u = ib_umem_get(&p->ib->ibdev, m->addr, m->len, m->access);

		if (IS_ERR(u))
			p->ret = PTR_ERR(u);
		else
			m->umem = u;
	}
	kthread_unuse_mm(p->mm);
}

static struct mnic_ib_umem *obj_mem(struct mnic_ib_obj *o)
{
	switch (o->kind) {
	case MNIC_IB_OBJ_MR:
		return &container_of(o, struct mnic_ib_mr, obj)->mem;
	case MNIC_IB_OBJ_CQ:
		return &container_of(o, struct mnic_ib_cq, obj)->mem;
	case MNIC_IB_OBJ_QP:
		return &container_of(o, struct mnic_ib_qp, obj)->mem;
	}
	return NULL;
}

static int UVERBS_HANDLER(MNIC_IB_METHOD_RESUME)(struct uverbs_attr_bundle *attrs)
{
	struct mnic_ib_mig_req req;
	struct mnic_ib_ucontext *uc = method_uc(attrs, &req);
	struct mnic_cmd_handle_in in = { .hdr = { .opcode = MNIC_CMD_RESUME_CONTEXT } };
	struct mnic_ib_mig_resp resp = { .async_fd = -1 };
	struct mnic_cmd_simple_out out;
	struct pin_work p = { .ret = 0 };
	struct mnic_ib_mig *done;
	struct mnic_ib_dev *ib;
	struct mnic_ib_obj *o;
	u32 i, cap = 0;
	int ret;

	if (IS_ERR(uc))
		return PTR_ERR(uc);
	ib = to_mib(uc->ibuc.device);
	mutex_lock(&uc->objs_lock);
	ret = -EINVAL;
	if (!uc->mig)
		goto out_unlock;
	for (i = 0; i < uc->mig->n; i++)
		if (!uc->mig->rec[i].claimed)
			goto out_unlock;   /* an object of the image was not recreated */
	list_for_each_entry(o, &uc->objs, node)
		cap++;
	ret = -ENOMEM;
	p.mems = kvcalloc(max(cap, 1u), sizeof(*p.mems), GFP_KERNEL);
	if (!p.mems)
		goto out_unlock;
	list_for_each_entry(o, &uc->objs, node) {
		struct mnic_ib_umem *m = obj_mem(o);

		if (m && m->deferred && !m->umem)
			p.mems[p.n++] = m;
	}
	ret = -ESRCH;
	if (!mmget_not_zero(uc->mig->mm))
		goto out_unlock;   /* the restored process is gone */
	p.ib = ib;
	p.mm = uc->mig->mm;
	INIT_WORK_ONSTACK(&p.work, pin_fn);
	queue_work(system_unbound_wq, &p.work);
	flush_work(&p.work);
	destroy_work_on_stack(&p.work);
	mmput(p.mm);
	ret = p.ret;
	for (i = 0; i < p.n && !ret; i++)
		ret = mnic_ib_umem_refill(ib, uc, p.mems[i], &resp.pages);
	if (ret)
		goto out_unlock;   /* pinned pages stay with their objects */
	in.hdr.ctx = uc->fw.ctx;
	in.handle = uc->fw.ctx;
	ret = mnic_ib_cmd(ib, &in, sizeof(in), &out, sizeof(out));
	if (ret)
		goto out_unlock;
	done = uc->mig;
	uc->mig = NULL;   /* detached under the lock: one RESUME frees it */
	mutex_unlock(&uc->objs_lock);
	mig_put(done);
	kvfree(p.mems);
	resp.ctx = uc->fw.ctx;
	mnic_count(ib->d, MNIC_KCNT_ib_mig_resume);
	return uverbs_copy_to(attrs, MNIC_IB_ATTR_RESP, &resp, sizeof(resp));
out_unlock:
	mutex_unlock(&uc->objs_lock);
	kvfree(p.mems);
	mnic_count(ib->d, MNIC_KCNT_ib_mig_resume_failed);
	return ret;
}

/* ---- the methods on the uverbs DEVICE object ----------------------------- */
#define MIG_ATTRS                                                                    \
	UVERBS_ATTR_PTR_IN(MNIC_IB_ATTR_REQ, UVERBS_ATTR_TYPE(struct mnic_ib_mig_req),  \
			   UA_MANDATORY),                                                  \
	UVERBS_ATTR_PTR_OUT(MNIC_IB_ATTR_RESP, UVERBS_ATTR_TYPE(struct mnic_ib_mig_resp), \
			    UA_OPTIONAL)

DECLARE_UVERBS_NAMED_METHOD(MNIC_IB_METHOD_NOTE_FD, MIG_ATTRS);
DECLARE_UVERBS_NAMED_METHOD(MNIC_IB_METHOD_DUMP, MIG_ATTRS);
DECLARE_UVERBS_NAMED_METHOD(MNIC_IB_METHOD_ABORT, MIG_ATTRS);
DECLARE_UVERBS_NAMED_METHOD(MNIC_IB_METHOD_RESTORE, MIG_ATTRS);
DECLARE_UVERBS_NAMED_METHOD(MNIC_IB_METHOD_RESUME, MIG_ATTRS);

ADD_UVERBS_METHODS(mnic_ib_device, UVERBS_OBJECT_DEVICE,
		   &UVERBS_METHOD(MNIC_IB_METHOD_NOTE_FD),
		   &UVERBS_METHOD(MNIC_IB_METHOD_DUMP),
		   &UVERBS_METHOD(MNIC_IB_METHOD_ABORT),
		   &UVERBS_METHOD(MNIC_IB_METHOD_RESTORE),
		   &UVERBS_METHOD(MNIC_IB_METHOD_RESUME));

const struct uapi_definition mnic_ib_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &mnic_ib_device),
	{},
};
