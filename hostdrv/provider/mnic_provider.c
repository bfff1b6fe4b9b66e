/* libmnic-rdmav34.so: the rdma-core provider of the mnic RDMA device
 * (issue 16 item 3; docs/kernel-driver.md "Provider").  libibverbs 44
 * loads it through /etc/libibverbs.d/mnic.driver (or RDMAV_DRIVERS) and
 * matches it to a uverbs device whose parent is the NIC's PCI function
 * (1af4:1110, the modalias; driver ABI MNIC_IB_UVERBS_ABI_VERSION).
 *
 * Control path: ibv_cmd_* (hostdrv/provider/verbs_private.h), with the
 * driver-private udata of mnic/ib_abi.h: the rings of every CQ and QP are
 * a page-aligned anonymous buffer of this process that mnic.ko pins and
 * hands to the firmware as one MTT.  Data path: entirely here, no system
 * call: WQEs into the rings and CQ polling by owner phase with libmnic's
 * ring code (hostdrv/lib/wqe.c, compiled into this library), producer and
 * consumer indices in the doorbell records, then db_seq in the doorbell
 * page the ucontext mapped (mnic/abi.h: the firmware rescans the records
 * on a change and polls db_seq anyway), then, where mnic.ko maps it
 * (MNIC_IB_CTX_F_DB_RING), one write to the NIC's Doorbell register, so
 * the firmware serves it at once rather than on its poll: a hardware
 * NIC's UAR doorbell.
 *
 * Completion events: req_notify_cq writes the CQ's arm word (mnic/queues.h),
 * mnic.ko polls the firmware's EQ and wakes the completion channel.
 * Inline data (IBV_SEND_INLINE, up to MNIC_MAX_INLINE bytes) is copied
 * into the WQE (wqe.c).  Not served (yet): SRQs, UD.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mnic/abi.h"
#include "mnic/ib_abi.h"
#include "mnic/ib_mig.h"
#include "mnic/queues.h"
#include "verbs_private.h"
#include "wqe.h"

#define MNIC_PV_PAGE 4096u
#define MNIC_PCI_VENDOR 0x1af4   /* Red Hat / Qumranet: the ivshmem function */
#define MNIC_PCI_DEVICE 0x1110

/* The WQE's scatter list is libibverbs' (same layout: no copy). */
_Static_assert(sizeof(struct ibv_sge) == sizeof(struct mnic_sge), "sge layout");
_Static_assert(offsetof(struct ibv_sge, lkey) == offsetof(struct mnic_sge, lkey), "sge lkey");
/* Opcodes, flags, statuses: mnic/queues.h takes verbs' values */
_Static_assert((int)IBV_WR_SEND_WITH_INV == (int)MNIC_WR_SEND_WITH_INV, "wr opcode values");
_Static_assert((int)IBV_WR_ATOMIC_FETCH_AND_ADD == (int)MNIC_WR_ATOMIC_FETCH_AND_ADD, "wr opcode values");
_Static_assert((int)IBV_SEND_SOLICITED == (int)MNIC_SEND_SOLICITED, "send flags");
_Static_assert((int)IBV_SEND_INLINE == (int)MNIC_SEND_INLINE, "send flags");
_Static_assert((int)IBV_WC_GENERAL_ERR == (int)MNIC_WC_GENERAL_ERR, "wc status values");
_Static_assert((int)IBV_WC_RECV_RDMA_WITH_IMM == (int)MNIC_WC_RECV_RDMA_WITH_IMM, "wc opcode values");
_Static_assert((int)IBV_WC_WITH_IMM == (int)MNIC_CQE_WITH_IMM && (int)IBV_WC_WITH_INV == (int)MNIC_CQE_WITH_INV,
	       "wc flags");

struct mnic_pv_device {
	struct verbs_device vdev;
};

struct mnic_pv_qp;

struct mnic_pv_context {
	struct verbs_context vctx;
	struct mnic_ib_alloc_ucontext_resp info;
	volatile struct mnic_db_page *db;
	/* the register page (MNIC_IB_CTX_F_DB_RING) or NULL; uar_reg in it */
	void *uar;
	volatile uint32_t *uar_reg;
	/* QPs by QPN, so that a poll retires their ring slots */
	pthread_mutex_t qp_lock;
	struct mnic_pv_qp **qps;
	uint32_t n_qps, cap_qps;
	int noted_async;             /* the async fd told to mnic.ko (NOTE_FD) */
};

struct mnic_pv_cq {
	struct ibv_cq ibcq;
	pthread_spinlock_t lock;
	uint8_t *buf;
	size_t buf_len;
	uint32_t entries;
	uint32_t ci;
	uint8_t arm_sn;                /* the arm sequence number (queues.h) */
	volatile struct mnic_dbrec *rec;
};

struct mnic_pv_qp {
	struct ibv_qp ibqp;
	pthread_spinlock_t sq_lock, rq_lock;
	uint8_t *buf;
	size_t buf_len;
	uint8_t *sq_ring, *rq_ring;
	volatile struct mnic_dbrec *sq_rec, *rq_rec;
	struct mnic_sq_track sq;
	uint32_t rq_entries, rq_pi, rq_ci;
	uint32_t max_send_sge, max_recv_sge;
	int sig_all;
};

static struct mnic_pv_context *to_ctx(struct ibv_context *c)
{
	return (struct mnic_pv_context *)((uint8_t *)c - offsetof(struct mnic_pv_context, vctx.context));
}

static struct mnic_pv_cq *to_cq(struct ibv_cq *c)
{
	return (struct mnic_pv_cq *)c;
}

static struct mnic_pv_qp *to_qp(struct ibv_qp *q)
{
	return (struct mnic_pv_qp *)q;
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 31))
		p <<= 1;
	return p;
}

static size_t page_round(size_t v)
{
	return (v + MNIC_PV_PAGE - 1) & ~(size_t)(MNIC_PV_PAGE - 1);
}

/* A zeroed ring buffer the module pins (page aligned, its own pages:
 * nothing else of the process shares them). */
static void *ring_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* A fork must not give the parent's pinned ring pages to the child. */
	(void)madvise(p, len, MADV_DONTFORK);
	return p;
}

/* ---- the doorbell ------------------------------------------------------ */

/* After a record changed: db_seq, which makes the firmware rescan the
 * records (mnic/abi.h), then the Doorbell register where we have it.
 * Several threads or processes may ring, so the increment is atomic; the
 * full fence drains the write-combining buffer of the doorbell mapping
 * (and orders the record and db_seq before the register write, an
 * uncached store the NIC acts on at once: it must find them). */
static void ring(struct mnic_pv_context *ctx, int kick)
{
	__atomic_fetch_add((uint32_t *)(uintptr_t)&ctx->db->db_seq, 1u, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (kick && ctx->uar_reg)
		*ctx->uar_reg = ctx->info.uar_ring;
}

/* After the stores a record publishes: the record, then the ring.  kick:
 * the NIC has work to start (WQEs posted); a CQ's consumer index is not
 * (the firmware reads it before each CQE it writes), so it waits for the
 * NIC's next look instead of waking it. */
static void publish(struct mnic_pv_context *ctx, volatile struct mnic_dbrec *rec, uint32_t index,
		    int kick)
{
	/* the WQEs (or the CQEs read) before the index that publishes them */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	rec->index = index;
	ring(ctx, kick);
}

/* ---- device, port ------------------------------------------------------ */

static int mpv_query_device_ex(struct ibv_context *context,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp, &resp_size);
	if (ret)
		return ret;
	/* the kernel's number as mnic.ko's get_dev_fw_str prints it */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%u",
		 (unsigned int)(fw >> 24) & 0xff, (unsigned int)(fw >> 16) & 0xff,
		 (unsigned int)fw & 0xffff);
	return 0;
}

static int mpv_query_port(struct ibv_context *context, uint8_t port, struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

/* ---- PD, MR, AH -------------------------------------------------------- */

/* The async event fd's number, for a checkpoint tool's table (mnic/ib_mig.h
 * NOTE_FD).  libibverbs makes that fd only after alloc_context (it asks
 * for it when GET_CONTEXT went through the ioctl, which gives none): the
 * first PD or CQ tells it.  An older module without the method only loses
 * the entry. */
static void note_async_fd(struct mnic_pv_context *ctx)
{
	struct mnic_ib_mig_req note = { .version = MNIC_IB_MIG_VERSION };
	int fd = ctx->vctx.context.async_fd;

	if (fd < 0 || ctx->noted_async == fd + 1)
		return;
	note.async_fd = fd;
	if (!mnic_ib_method(ctx->vctx.context.cmd_fd, MNIC_IB_METHOD_NOTE_FD, &note, NULL))
		ctx->noted_async = fd + 1;
}

static struct ibv_pd *mpv_alloc_pd(struct ibv_context *context)
{
	struct ibv_alloc_pd cmd;
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return NULL;
	note_async_fd(to_ctx(context));
	if (ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return pd;
}

static int mpv_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

static struct ibv_mr *mpv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
				  int access)
{
	struct ibv_reg_mr cmd;
	struct ib_uverbs_reg_mr_resp resp;
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int ret;

	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd, sizeof(cmd), &resp,
			     sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int mpv_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

static struct ibv_ah *mpv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ib_uverbs_create_ah_resp resp;
	struct ibv_ah *ah = calloc(1, sizeof(*ah));
	int ret;

	if (!ah)
		return NULL;
	ret = ibv_cmd_create_ah(pd, ah, attr, &resp, sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	return ah;
}

static int mpv_destroy_ah(struct ibv_ah *ah)
{
	int ret = ibv_cmd_destroy_ah(ah);

	if (!ret)
		free(ah);
	return ret;
}

/* ---- CQ ---------------------------------------------------------------- */

/* A CQ buffer for cqe entries or more (create and resize): the ring, then
 * its record, in one page-aligned buffer of this process (mnic/ib_abi.h),
 * and the request that names it.  0, or EINVAL (cqe out of range) /
 * ENOMEM. */
static int cq_buf_new(const struct mnic_pv_context *ctx, int cqe,
		      struct mnic_ib_create_cq_req *req, uint8_t **buf)
{
	uint32_t entries;
	size_t len;

	if (cqe < 1 || (uint32_t)cqe > ctx->info.max_cqe)
		return EINVAL;
	entries = pow2_at_least((uint32_t)cqe);
	if (entries > ctx->info.max_cqe)
		return EINVAL;
	len = page_round((size_t)entries * MNIC_CQE_SIZE + sizeof(struct mnic_dbrec));
	*buf = ring_buf(len);
	if (!*buf)
		return ENOMEM;
	*req = (struct mnic_ib_create_cq_req){
		.buf_addr = (uintptr_t)*buf, .buf_len = len, .entries = entries,
		.dbrec_off = entries * MNIC_CQE_SIZE,
	};
	return 0;
}

static struct ibv_cq *mpv_create_cq(struct ibv_context *context, int cqe,
				     struct ibv_comp_channel *channel, int comp_vector)
{
	struct mnic_pv_context *ctx = to_ctx(context);
	struct {
		struct ibv_create_cq ibv;
		struct mnic_ib_create_cq_req drv;
		struct mnic_ib_create_tail tail;   /* the channel's fd (a dump's table names it) */
	} cmd;
	struct {
		struct ib_uverbs_create_cq_resp ibv;
		struct mnic_ib_create_cq_resp drv;
	} resp;
	struct mnic_pv_cq *cq;
	int ret;

	_Static_assert(sizeof(cmd) == sizeof(struct ibv_create_cq) +
		       sizeof(struct mnic_ib_create_cq_req) + sizeof(struct mnic_ib_create_tail),
		       "create_cq command: no padding");
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = cq_buf_new(ctx, cqe, &cmd.drv, &cq->buf);
	if (ret) {
		errno = ret;
		goto err_free;
	}
	cq->entries = cmd.drv.entries;
	cq->buf_len = cmd.drv.buf_len;
	cq->rec = (volatile struct mnic_dbrec *)(cq->buf + cmd.drv.dbrec_off);
	note_async_fd(ctx);
	cmd.tail = (struct mnic_ib_create_tail){
		.magic = MNIC_IB_TAIL_MAGIC, .comp_fd = channel ? channel->fd : -1,
	};
	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector, &cq->ibcq, &cmd.ibv,
				sizeof(cmd), &resp.ibv, sizeof(resp));
	if (ret) {
		errno = ret;
		goto err_buf;
	}
	return &cq->ibcq;

err_buf:
	munmap(cq->buf, cq->buf_len);
err_free:
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return NULL;
}

static int mpv_destroy_cq(struct ibv_cq *ibcq)
{
	struct mnic_pv_cq *cq = to_cq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (ret)
		return ret;
	munmap(cq->buf, cq->buf_len);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

/* ibv_resize_cq (IBA 11.2.8.3): a new buffer laid out as at creation;
 * mnic.ko pins it and the firmware moves the CQ there with the CQEs not
 * polled yet (slots 0.. of the new ring), so polling restarts at 0.  The
 * CQ's lock is held throughout: no poll or arm runs between the command
 * and the switch of rings.  The new record carries the old arm word, so
 * an arm in force is neither lost nor taken twice (rocev2/cq_resize.c).
 * A refusal (fewer entries than CQEs outstanding, the kernel's ENOSPC)
 * leaves the CQ on its old ring. */
static int mpv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct mnic_pv_context *ctx = to_ctx(ibcq->context);
	struct mnic_pv_cq *cq = to_cq(ibcq);
	struct {
		struct ibv_resize_cq ibv;
		struct mnic_ib_create_cq_req drv;
	} cmd;
	struct {
		struct ib_uverbs_resize_cq_resp ibv;
		struct mnic_ib_resize_cq_resp drv;
	} resp;
	volatile struct mnic_dbrec *rec;
	uint32_t entries;
	size_t len;
	uint8_t *buf;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = cq_buf_new(ctx, cqe, &cmd.drv, &buf);
	if (ret)
		return ret;
	entries = cmd.drv.entries;
	len = cmd.drv.buf_len;
	rec = (volatile struct mnic_dbrec *)(buf + cmd.drv.dbrec_off);
	pthread_spin_lock(&cq->lock);
	rec->index = 0;
	rec->arm = cq->rec->arm;
	ret = ibv_cmd_resize_cq(ibcq, (int)entries, &cmd.ibv, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (ret == 0 && resp.drv.entries != entries)
		ret = EPROTO;   /* a module that sized the ring otherwise: cannot poll it */
	if (ret) {
		pthread_spin_unlock(&cq->lock);
		munmap(buf, len);
		return ret;
	}
	munmap(cq->buf, cq->buf_len);
	cq->buf = buf;
	cq->buf_len = len;
	cq->entries = entries;
	cq->rec = rec;
	cq->ci = 0;
	ibcq->cqe = (int)entries;
	pthread_spin_unlock(&cq->lock);
	return 0;
}

/* Completion events (mnic/queues.h "Completion events"): the arm word of
 * the CQ's record, after the consumer index poll_cq wrote, then db_seq;
 * the firmware writes one EQE when the arm fires, mnic.ko hands it to the
 * CQ's completion channel.  Only a CQ created with a channel has an EQ. */
static int mpv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct mnic_pv_cq *cq = to_cq(ibcq);
	uint32_t arm;

	if (!ibcq->channel)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	arm = MNIC_CQ_ARM(cq->arm_sn, solicited_only ? MNIC_CQ_ARM_SOLICITED : MNIC_CQ_ARM_NEXT);
	/* the consumer index before the arm: the firmware fires at once for
	 * CQEs past the index it reads with the arm */
	__atomic_store_n((uint32_t *)(uintptr_t)&cq->rec->arm, arm, __ATOMIC_RELEASE);
	ring(to_ctx(ibcq->context), 1);
	pthread_spin_unlock(&cq->lock);
	return 0;
}

/* ibv_get_cq_event returned an event of this CQ: the arm that fired is
 * spent, the next one takes sn + 1 (one event per arm). */
static void mpv_cq_event(struct ibv_cq *ibcq)
{
	struct mnic_pv_cq *cq = to_cq(ibcq);

	pthread_spin_lock(&cq->lock);
	cq->arm_sn++;
	pthread_spin_unlock(&cq->lock);
}

static struct mnic_pv_qp *find_qp(struct mnic_pv_context *ctx, uint32_t qpn)
{
	for (uint32_t i = 0; i < ctx->n_qps; i++)
		if (ctx->qps[i]->ibqp.qp_num == qpn)
			return ctx->qps[i];
	return NULL;
}

/* The ring slots a completion frees. */
static void retire(struct mnic_pv_context *ctx, const struct mnic_cqe *c)
{
	struct mnic_pv_qp *qp;

	pthread_mutex_lock(&ctx->qp_lock);
	qp = find_qp(ctx, c->qp_num);
	if (qp && c->opcode >= MNIC_WC_RECV) {
		pthread_spin_lock(&qp->rq_lock);
		if (qp->rq_pi != qp->rq_ci)
			qp->rq_ci++;
		pthread_spin_unlock(&qp->rq_lock);
	} else if (qp) {
		pthread_spin_lock(&qp->sq_lock);
		mnic_sq_retire(&qp->sq, qp->sq_ring, c);
		pthread_spin_unlock(&qp->sq_lock);
	}
	pthread_mutex_unlock(&ctx->qp_lock);
}

static void wc_of_cqe(struct ibv_wc *w, const struct mnic_cqe *c)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = c->wr_id;
	w->status = (enum ibv_wc_status)c->status;
	w->opcode = (enum ibv_wc_opcode)c->opcode;
	w->vendor_err = c->vendor_err;
	w->byte_len = c->byte_len;
	w->qp_num = c->qp_num;
	w->src_qp = c->src_qp;
	w->wc_flags = c->flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV);
	/* verbs carries immediate data in network order, the CQE in host
	 * order; an invalidated rkey is host order in both */
	if (c->flags & MNIC_CQE_WITH_INV)
		w->invalidated_rkey = c->imm_data;
	else
		w->imm_data = htobe32(c->imm_data);
}

static int mpv_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct mnic_pv_cq *cq = to_cq(ibcq);
	struct mnic_pv_context *ctx = to_ctx(ibcq->context);
	struct mnic_cqe c[16];
	int total = 0;

	if (n < 0)
		return -1;
	pthread_spin_lock(&cq->lock);
	while (total < n) {
		int want = n - total < 16 ? n - total : 16;
		int got = mnic_cq_ring_poll((const volatile struct mnic_cqe *)cq->buf, cq->entries,
					    &cq->ci, want, c);

		if (got <= 0)
			break;
		for (int i = 0; i < got; i++) {
			wc_of_cqe(&wc[total + i], &c[i]);
			retire(ctx, &c[i]);
		}
		total += got;
		if (got < want)
			break;
	}
	if (total) {
		/* the CQEs are read before the NIC may reuse their slots: it
		 * reads the consumer index before it writes (rocev2/cq.c) */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		publish(ctx, cq->rec, cq->ci, 0);
	}
	pthread_spin_unlock(&cq->lock);
	return total;
}

/* ---- QP ---------------------------------------------------------------- */

static int track_qp(struct mnic_pv_context *ctx, struct mnic_pv_qp *qp, int add)
{
	int ret = 0;

	pthread_mutex_lock(&ctx->qp_lock);
	if (add) {
		if (ctx->n_qps == ctx->cap_qps) {
			uint32_t cap = ctx->cap_qps ? ctx->cap_qps * 2 : 16;
			struct mnic_pv_qp **q = realloc(ctx->qps, cap * sizeof(*q));

			if (!q) {
				ret = ENOMEM;
				goto out;
			}
			ctx->qps = q;
			ctx->cap_qps = cap;
		}
		ctx->qps[ctx->n_qps++] = qp;
	} else {
		for (uint32_t i = 0; i < ctx->n_qps; i++)
			if (ctx->qps[i] == qp) {
				ctx->qps[i] = ctx->qps[--ctx->n_qps];
				break;
			}
	}
out:
	pthread_mutex_unlock(&ctx->qp_lock);
	return ret;
}

static struct ibv_qp *mpv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct mnic_pv_context *ctx = to_ctx(pd->context);
	struct {
		struct ibv_create_qp ibv;
		struct mnic_ib_create_qp_req drv;
	} cmd;
	struct {
		struct ib_uverbs_create_qp_resp ibv;
		struct mnic_ib_create_qp_resp drv;
	} resp;
	uint32_t sq_entries, rq_entries, sq_len, rq_end;
	struct mnic_pv_qp *qp;
	int ret;

	if (attr->qp_type != IBV_QPT_RC || attr->srq) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cap.max_send_wr > ctx->info.max_qp_wr ||
	    attr->cap.max_recv_wr > ctx->info.max_qp_wr ||
	    attr->cap.max_send_sge > ctx->info.max_sge ||
	    attr->cap.max_recv_sge > ctx->info.max_sge ||
	    attr->cap.max_inline_data > ctx->info.max_inline) {
		errno = EINVAL;
		return NULL;
	}
	sq_entries = pow2_at_least(attr->cap.max_send_wr ? attr->cap.max_send_wr : 1);
	rq_entries = pow2_at_least(attr->cap.max_recv_wr ? attr->cap.max_recv_wr : 1);
	if (sq_entries > ctx->info.max_qp_wr || rq_entries > ctx->info.max_qp_wr) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->sq.sig_fifo = calloc(sq_entries, sizeof(uint32_t));
	if (!qp->sq.sig_fifo)
		goto err_free;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	/* SQ ring, RQ ring, the two records (mnic/ib_abi.h) */
	sq_len = sq_entries * MNIC_WQE_SIZE;
	rq_end = sq_len + rq_entries * MNIC_WQE_SIZE;
	qp->buf_len = page_round((size_t)rq_end + 2 * sizeof(struct mnic_dbrec));
	qp->buf = ring_buf(qp->buf_len);
	if (!qp->buf)
		goto err_locks;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.drv = (struct mnic_ib_create_qp_req){
		.buf_addr = (uintptr_t)qp->buf, .buf_len = qp->buf_len, .sq_entries = sq_entries,
		.rq_entries = rq_entries, .rq_off = sq_len, .sq_dbrec_off = rq_end,
		.rq_dbrec_off = rq_end + sizeof(struct mnic_dbrec),
	};
	qp->sq_ring = qp->buf;
	qp->rq_ring = qp->buf + sq_len;
	qp->sq_rec = (volatile struct mnic_dbrec *)(qp->buf + cmd.drv.sq_dbrec_off);
	qp->rq_rec = (volatile struct mnic_dbrec *)(qp->buf + cmd.drv.rq_dbrec_off);
	qp->sq.size = sq_entries;
	qp->rq_entries = rq_entries;
	qp->max_send_sge = attr->cap.max_send_sge ? attr->cap.max_send_sge : 1;
	qp->max_recv_sge = attr->cap.max_recv_sge ? attr->cap.max_recv_sge : 1;
	qp->sig_all = attr->sq_sig_all;
	ret = ibv_cmd_create_qp(pd, &qp->ibqp, attr, &cmd.ibv, sizeof(cmd), &resp.ibv,
				sizeof(resp));
	if (ret) {
		errno = ret;
		goto err_buf;
	}
	if (track_qp(ctx, qp, 1)) {
		ibv_cmd_destroy_qp(&qp->ibqp);
		errno = ENOMEM;
		goto err_buf;
	}
	return &qp->ibqp;

err_buf:
	munmap(qp->buf, qp->buf_len);
err_locks:
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
err_free:
	free(qp->sq.sig_fifo);
	free(qp);
	return NULL;
}

static int mpv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct ibv_modify_qp cmd;

	return ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
}

static int mpv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			 struct ibv_qp_init_attr *init)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(qp, attr, mask, init, &cmd, sizeof(cmd));
}

static int mpv_destroy_qp(struct ibv_qp *ibqp)
{
	struct mnic_pv_qp *qp = to_qp(ibqp);
	int ret = ibv_cmd_destroy_qp(ibqp);

	if (ret)
		return ret;
	track_qp(to_ctx(ibqp->context), qp, 0);
	munmap(qp->buf, qp->buf_len);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp->sq.sig_fifo);
	free(qp);
	return 0;
}

/* Inline data (IBV_SEND_INLINE): an SGE's address is the process's own
 * pointer (IBA 10.8.2.1: the buffer need not be registered); wqe.c copies
 * it into the WQE before the post returns. */
static const void *process_map(void *arg, uint64_t addr, uint32_t len)
{
	(void)arg;
	(void)len;
	return (const void *)(uintptr_t)addr;
}

/* ibv_send_wr -> libmnic's work request (wqe.c builds the WQE). */
static int send_wr_of(struct mnic_send_wr *m, const struct ibv_send_wr *wr)
{
	memset(m, 0, sizeof(*m));
	m->wr_id = wr->wr_id;
	m->sg_list = (const struct mnic_sge *)wr->sg_list;
	m->num_sge = wr->num_sge < 0 ? UINT32_MAX : (uint32_t)wr->num_sge;
	m->opcode = wr->opcode;
	m->send_flags = wr->send_flags;
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND_WITH_IMM:
		m->imm_data = be32toh(wr->imm_data);
		break;
	case IBV_WR_SEND_WITH_INV:
		m->imm_data = wr->invalidate_rkey;
		break;
	default:
		break;
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		m->remote_addr = wr->wr.rdma.remote_addr;
		m->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		m->remote_addr = wr->wr.atomic.remote_addr;
		m->rkey = wr->wr.atomic.rkey;
		m->compare_add = wr->wr.atomic.compare_add;
		m->swap = wr->wr.atomic.swap;
		break;
	default:
		break;
	}
	return 0;
}

static int mpv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct mnic_pv_qp *qp = to_qp(ibqp);
	struct mnic_send_wr m;
	uint32_t posted = 0;
	int err = 0;

	pthread_spin_lock(&qp->sq_lock);
	for (; wr; wr = wr->next) {
		uint32_t idx = qp->sq.pi;

		if (qp->sq.pi - qp->sq.ci >= qp->sq.size) {
			err = ENOMEM;
			break;
		}
		err = send_wr_of(&m, wr);
		if (!err)
			err = -mnic_wqe_send_fill(qp->sq_ring + (size_t)(idx & (qp->sq.size - 1)) *
						  MNIC_WQE_SIZE, &m, qp->max_send_sge,
						  process_map, NULL);
		if (err)
			break;
		mnic_sq_posted(&qp->sq, idx, qp->sig_all || (wr->send_flags & IBV_SEND_SIGNALED));
		qp->sq.pi++;
		posted++;
	}
	if (posted)
		publish(to_ctx(ibqp->context), qp->sq_rec, qp->sq.pi, 1);
	pthread_spin_unlock(&qp->sq_lock);
	if (err)
		*bad_wr = wr;
	return err;
}

static int mpv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct mnic_pv_qp *qp = to_qp(ibqp);
	struct mnic_recv_wr m;
	uint32_t posted = 0;
	int err = 0;

	pthread_spin_lock(&qp->rq_lock);
	for (; wr; wr = wr->next) {
		if (qp->rq_pi - qp->rq_ci >= qp->rq_entries) {
			err = ENOMEM;
			break;
		}
		m = (struct mnic_recv_wr){
			.wr_id = wr->wr_id, .sg_list = (const struct mnic_sge *)wr->sg_list,
			.num_sge = wr->num_sge < 0 ? UINT32_MAX : (uint32_t)wr->num_sge,
		};
		err = -mnic_wqe_recv_fill(qp->rq_ring + (size_t)(qp->rq_pi & (qp->rq_entries - 1)) *
					  MNIC_WQE_SIZE, &m, qp->max_recv_sge);
		if (err)
			break;
		qp->rq_pi++;
		posted++;
	}
	if (posted)
		publish(to_ctx(ibqp->context), qp->rq_rec, qp->rq_pi, 1);
	pthread_spin_unlock(&qp->rq_lock);
	if (err)
		*bad_wr = wr;
	return err;
}

/* ---- context ------------------------------------------------------------ */

static void mpv_free_context(struct ibv_context *context)
{
	struct mnic_pv_context *ctx = to_ctx(context);

	if (ctx->uar)
		munmap(ctx->uar, ctx->info.db_mmap_len);
	if (ctx->db)
		munmap((void *)(uintptr_t)ctx->db, ctx->info.db_mmap_len);
	pthread_mutex_destroy(&ctx->qp_lock);
	free(ctx->qps);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops mnic_ctx_ops = {
	.alloc_pd = mpv_alloc_pd,
	.cq_event = mpv_cq_event,
	.create_ah = mpv_create_ah,
	.create_cq = mpv_create_cq,
	.create_qp = mpv_create_qp,
	.dealloc_pd = mpv_dealloc_pd,
	.dereg_mr = mpv_dereg_mr,
	.destroy_ah = mpv_destroy_ah,
	.destroy_cq = mpv_destroy_cq,
	.destroy_qp = mpv_destroy_qp,
	.free_context = mpv_free_context,
	.modify_qp = mpv_modify_qp,
	.poll_cq = mpv_poll_cq,
	.post_recv = mpv_post_recv,
	.post_send = mpv_post_send,
	.query_device_ex = mpv_query_device_ex,
	.query_port = mpv_query_port,
	.query_qp = mpv_query_qp,
	.reg_mr = mpv_reg_mr,
	.req_notify_cq = mpv_req_notify_cq,
	.resize_cq = mpv_resize_cq,
};

static struct verbs_context *mpv_alloc_context(struct ibv_device *ibdev, int cmd_fd,
						void *private_data)
{
	struct mnic_pv_context *ctx;
	struct ibv_get_context cmd;
	struct {
		struct ib_uverbs_get_context_resp ibv;
		struct mnic_ib_alloc_ucontext_resp drv;
	} resp;
	void *db;

	(void)private_data;
	ctx = _verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(*ctx),
		(struct verbs_context *)(uintptr_t)offsetof(struct mnic_pv_context, vctx), 0);
	if (!ctx)
		return NULL;
	pthread_mutex_init(&ctx->qp_lock, NULL);
	memset(&resp, 0, sizeof(resp));
	if (ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp)))
		goto err;
	ctx->info = resp.drv;
	/* a module that lays rings out otherwise than this library */
	if (ctx->info.wqe_size != MNIC_WQE_SIZE || ctx->info.cqe_size != MNIC_CQE_SIZE ||
	    ctx->info.db_mmap_len < sizeof(struct mnic_db_page) || !ctx->info.max_qp_wr ||
	    !ctx->info.max_cqe) {
		errno = EPROTO;
		goto err;
	}
	if (ctx->info.max_sge > MNIC_MAX_SGE)
		ctx->info.max_sge = MNIC_MAX_SGE;
	db = mmap(NULL, ctx->info.db_mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		  (off_t)ctx->info.db_mmap_offset);
	if (db == MAP_FAILED)
		goto err;
	ctx->db = db;
	if (ctx->info.flags & MNIC_IB_CTX_F_DB_RING) {
		void *uar;

		/* one page as the doorbell page (db_mmap_len, the kernel's
		 * PAGE_SIZE); a register outside it, or not 32-bit aligned */
		if (ctx->info.uar_offset > ctx->info.db_mmap_len - sizeof(uint32_t) ||
		    ctx->info.uar_offset % sizeof(uint32_t)) {
			errno = EPROTO;
			goto err_db;
		}
		uar = mmap(NULL, ctx->info.db_mmap_len, PROT_WRITE, MAP_SHARED, cmd_fd,
			   (off_t)ctx->info.uar_mmap_offset);
		if (uar == MAP_FAILED)
			goto err_db;
		ctx->uar = uar;
		ctx->uar_reg = (volatile uint32_t *)((uint8_t *)uar + ctx->info.uar_offset);
	}
	verbs_set_ops(&ctx->vctx, &mnic_ctx_ops);
	return &ctx->vctx;

err_db:
	munmap(db, ctx->info.db_mmap_len);
err:
	pthread_mutex_destroy(&ctx->qp_lock);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	return NULL;
}

static struct verbs_device *mpv_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct mnic_pv_device *dev = calloc(1, sizeof(*dev));

	(void)sysfs_dev;
	return dev ? &dev->vdev : NULL;
}

static void mpv_uninit_device(struct verbs_device *vdev)
{
	free((struct mnic_pv_device *)vdev);
}

/* The NIC's function: the parent of its uverbs device (mnic.ko binds only
 * where the init segment says mnic, so another ivshmem device has no
 * uverbs device to match). */
static const struct verbs_match_ent mnic_match_table[] = {
	{ .vendor = MNIC_PCI_VENDOR, .device = MNIC_PCI_DEVICE, .kind = VERBS_MATCH_PCI },
	{ .kind = VERBS_MATCH_SENTINEL },
};

static const struct verbs_device_ops mnic_dev_ops = {
	.name = "mnic",
	.match_min_abi_version = MNIC_IB_UVERBS_ABI_VERSION,
	.match_max_abi_version = MNIC_IB_UVERBS_ABI_VERSION,
	.match_table = mnic_match_table,
	.alloc_device = mpv_alloc_device,
	.uninit_device = mpv_uninit_device,
	.alloc_context = mpv_alloc_context,
};

/* dlopen by libibverbs: register (the symbol's number is the ABI's). */
__attribute__((constructor)) static void mpv_register(void)
{
	verbs_register_driver_34(&mnic_dev_ops);
}
