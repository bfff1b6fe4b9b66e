/* mnic-verbs-check: the rdma-core provider libmnic-rdmav34.so through
 * unmodified libibverbs (Debian 12's, in the kmod test VM:
 * tests/system/kmod_vm.sh, checks ib_verbs_provider_*).
 *
 *   mnic-verbs-check IBDEV FW_VER
 *
 * It proves at run time what verbs_private.h declares: libibverbs found
 * and matched the provider (the device is listed and opens), its context
 * ops sit in the slots libibverbs calls (every verb below reaches the
 * provider's function and answers what the kernel said), and the objects
 * the provider allocates have the layout libibverbs writes into (the MR's,
 * CQ's and QP's fields read back as set).  Then the provider's own
 * checks: ring sizes, the RQ full at its depth, an empty poll, refusals.
 * "rtr" mode: an RC QP through INIT, RTR (the destination MAC resolved by
 * the kernel) and RTS towards a peer's IPv4 address.
 * Prints "ok NAME" / "FAIL NAME: why", then "VERBS-CHECK PASS n" or
 * "VERBS-CHECK FAIL failed/n"; exit 0 only on PASS. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../../hostdrv/kernel/test/check_result.h"

/* The provider's inline limit (mnic/queues.h MNIC_MAX_INLINE: the WQE's
 * gather-list bytes); this tool includes libibverbs only. */
#define MAX_INLINE 448u

/* Poll cq into wc (room for max) until at least want completions came or
 * 5 s passed; how many came (a poll error ends it). */
static int poll_some(struct ibv_cq *cq, struct ibv_wc *wc, int want, int max)
{
	int got = 0;

	for (int tries = 0; got < want && tries < 500; tries++) {
		int m = ibv_poll_cq(cq, max - got, wc + got);

		if (m < 0)
			break;
		got += m;
		if (got < want)
			usleep(10000);
	}
	return got;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 6, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 2 },
	};

	return ibv_create_qp(pd, &a);
}

/* mnic-verbs-check rtr IBDEV GID_INDEX PEER_IPV4: one RC QP to RTR towards
 * the peer's IPv4-mapped GID (the kernel resolves its MAC through the
 * netdev), then RTS; the errno of each step. */
static int run_rtr(const char *name, int gidx, const char *peer)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_qp_attr a;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned int b[4];
	int i, ret;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx || sscanf(peer, "%u.%u.%u.%u", &b[0], &b[1], &b[2], &b[3]) != 4)
		return 2;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	qp = pd && cq ? rc_qp(pd, cq, IBV_QPT_RC) : NULL;
	if (!qp)
		return 2;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	result("ib_verbs_rtr_init", ret == 0, "INIT: %s", strerror(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x1234;
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = (uint8_t)gidx;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.dgid.raw[10] = 0xff;
	a.ah_attr.grh.dgid.raw[11] = 0xff;
	for (i = 0; i < 4; i++)
		a.ah_attr.grh.dgid.raw[12 + i] = (uint8_t)b[i];
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	result("ib_verbs_rtr", ret == 0, "RTR to %s with GID index %d: %s", peer, gidx,
	       strerror(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 1;
	a.max_rd_atomic = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	result("ib_verbs_rts", ret == 0, "RTS: %s", strerror(ret));
	ret = ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV, &(struct ibv_qp_init_attr){ 0 });
	result("ib_verbs_rts_query", ret == 0 && a.qp_state == IBV_QPS_RTS &&
	       a.ah_attr.grh.dgid.raw[15] == b[3], "QUERY_QP: %s, state %d", strerror(ret),
	       a.qp_state);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	if (failures) {
		printf("VERBS-CHECK FAIL %u/%u\n", failures, checks);
		return 1;
	}
	printf("VERBS-CHECK PASS %u\n", checks);
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_device *dev = NULL;
	struct ibv_context *ctx;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_recv_wr rwr[9], *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc[8];
	struct ibv_pd *pd;
	struct ibv_mr *mr, *mr2;
	struct ibv_cq *cq;
	struct ibv_qp *qp, *ud;
	uint8_t *buf, *hole;
	int n = 0, ret, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "rtr"))
		return run_rtr(argv[2], atoi(argv[3]), argv[4]);
	if (argc != 3) {
		fprintf(stderr, "usage: %s IBDEV FW_VER | rtr IBDEV GID_INDEX PEER_IPV4\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			dev = list[i];
	result("ib_verbs_provider_device_listed", dev != NULL,
	       "%s not among the %d devices libibverbs matched to a provider", argv[1], n);
	if (!dev)
		goto out;
	ctx = ibv_open_device(dev);
	result("ib_verbs_provider_open_device", ctx != NULL, "ibv_open_device: %s", strerror(errno));
	if (!ctx)
		goto out_list;

	ret = ibv_query_device(ctx, &da);
	result("ib_verbs_provider_query_device",
	       ret == 0 && da.vendor_id == 0x1af4 && da.vendor_part_id == 0x1110 && da.max_qp > 0 &&
	       da.max_cqe > 0 && da.phys_port_cnt == 1 && da.atomic_cap == IBV_ATOMIC_HCA &&
	       !strcmp(da.fw_ver, argv[2]),
	       "ret %d vendor 0x%x part 0x%x max_qp %d max_cqe %d ports %u atomic %d fw_ver '%s' (want '%s')",
	       ret, da.vendor_id, da.vendor_part_id, da.max_qp, da.max_cqe, da.phys_port_cnt,
	       da.atomic_cap, da.fw_ver, argv[2]);
	ret = ibv_query_port(ctx, 1, &pa);
	result("ib_verbs_provider_query_port",
	       ret == 0 && pa.state == IBV_PORT_ACTIVE && pa.link_layer == IBV_LINK_LAYER_ETHERNET &&
	       pa.max_mtu == IBV_MTU_4096 && pa.gid_tbl_len == 16,
	       "ret %d state %d link_layer %u max_mtu %d gid_tbl_len %d", ret, pa.state,
	       pa.link_layer, pa.max_mtu, pa.gid_tbl_len);

	pd = ibv_alloc_pd(ctx);
	result("ib_verbs_provider_alloc_pd", pd && pd->context == ctx, "ibv_alloc_pd: %s",
	       pd ? "wrong context" : strerror(errno));
	if (!pd)
		goto out_ctx;

	/* The MR: libibverbs fills the provider's struct verbs_mr */
	buf = malloc(65536);
	memset(buf, 0, 65536);
	mr = ibv_reg_mr(pd, buf, 65536, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	result("ib_verbs_provider_reg_mr",
	       mr && mr->addr == buf && mr->length == 65536 && mr->pd == pd && mr->context == ctx &&
	       mr->lkey != 0,
	       "ibv_reg_mr: %s", mr ? "fields not as set" : strerror(errno));
	hole = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole + 4096, 4096);
	errno = 0;
	mr2 = ibv_reg_mr(pd, hole, 3 * 4096, IBV_ACCESS_LOCAL_WRITE);
	result("ib_verbs_provider_reg_mr_unmapped_refused", !mr2 && errno == EFAULT,
	       "ibv_reg_mr over a hole: %s", mr2 ? "registered" : strerror(errno));
	if (mr2)
		ibv_dereg_mr(mr2);

	cq = ibv_create_cq(ctx, 20, NULL, NULL, 0);
	result("ib_verbs_provider_create_cq", cq && cq->context == ctx && cq->cqe == 32,
	       "ibv_create_cq(20): %s, cqe %d (want the ring's 32)", cq ? "ok" : strerror(errno),
	       cq ? cq->cqe : -1);
	if (!cq)
		goto out_mr;
	ret = ibv_poll_cq(cq, 4, wc);
	result("ib_verbs_provider_poll_empty", ret == 0, "ibv_poll_cq of an empty CQ: %d", ret);
	ret = ibv_req_notify_cq(cq, 0);
	result("ib_verbs_provider_notify_without_channel_refused", ret == EINVAL,
	       "ibv_req_notify_cq of a CQ without a channel: %d", ret);
	{
		struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
		struct ibv_cq *ecq = ch ? ibv_create_cq(ctx, 8, NULL, ch, 0) : NULL;

		ret = ecq ? ibv_req_notify_cq(ecq, 0) : -1;
		result("ib_verbs_provider_notify_armed", ecq && ret == 0,
		       "a CQ on a completion channel: %s, ibv_req_notify_cq %d",
		       ecq ? "created" : strerror(errno), ret);
		ret = ecq ? ibv_req_notify_cq(ecq, 1) : -1;
		result("ib_verbs_provider_notify_solicited", ret == 0, "solicited arm: %d", ret);
		if (ecq)
			ibv_destroy_cq(ecq);
		if (ch)
			ibv_destroy_comp_channel(ch);
	}

	ud = rc_qp(pd, cq, IBV_QPT_UD);
	result("ib_verbs_provider_ud_refused", ud == NULL, "a UD QP was created");
	if (ud)
		ibv_destroy_qp(ud);
	qp = rc_qp(pd, cq, IBV_QPT_RC);
	result("ib_verbs_provider_create_qp",
	       qp && qp->qp_num != 0 && qp->pd == pd && qp->send_cq == cq && qp->recv_cq == cq &&
	       qp->qp_type == IBV_QPT_RC && qp->context == ctx,
	       "ibv_create_qp: %s", qp ? "fields not as set" : strerror(errno));
	if (!qp)
		goto out_cq;
	memset(&qi, 0, sizeof(qi));
	ret = ibv_query_qp(qp, &qa, IBV_QP_CAP | IBV_QP_STATE, &qi);
	result("ib_verbs_provider_query_qp_caps",
	       ret == 0 && qa.qp_state == IBV_QPS_RESET && qa.cap.max_send_wr == 8 &&
	       qa.cap.max_recv_wr == 8 && qa.cap.max_inline_data == MAX_INLINE &&
	       qi.qp_type == IBV_QPT_RC,
	       "ret %d state %d send_wr %u recv_wr %u inline %u", ret, qa.qp_state,
	       qa.cap.max_send_wr, qa.cap.max_recv_wr, qa.cap.max_inline_data);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.pkey_index = 0;
	qa.port_num = 1;
	qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ret = ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	result("ib_verbs_provider_modify_qp_init", ret == 0 && qp->state == IBV_QPS_INIT,
	       "ibv_modify_qp INIT: %d, state %d", ret, qp->state);
	ret = ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi);
	result("ib_verbs_provider_query_qp_init", ret == 0 && qa.qp_state == IBV_QPS_INIT,
	       "ret %d state %d", ret, qa.qp_state);

	/* A receive with more SGEs than the QP was made for is refused at
	 * that WR; then the RQ takes its 8 WQEs (the provider's ring) and the
	 * 9th is refused at the WR that did not fit. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 4096, .lkey = mr ? mr->lkey : 0 };
	for (i = 0; i < 9; i++)
		rwr[i] = (struct ibv_recv_wr){ .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
					       .next = i < 8 ? &rwr[i + 1] : NULL };
	rwr[0].num_sge = 3;
	ret = ibv_post_recv(qp, &rwr[0], &bad);
	result("ib_verbs_provider_rq_sge_refused", ret == EINVAL && bad == &rwr[0],
	       "a receive with 3 SGEs (max 2): %d", ret);
	rwr[0].num_sge = 1;
	bad = NULL;
	ret = ibv_post_recv(qp, &rwr[0], &bad);
	result("ib_verbs_provider_rq_full", ret == ENOMEM && bad == &rwr[8],
	       "9 receives on an 8-deep RQ: %d, bad_wr #%ld", ret, bad ? (long)(bad - rwr) : -1L);

	/* Inline sends (IBV_SEND_INLINE) hostile: one byte more than the QP's
	 * max_inline_data, or on a READ (IBA 10.8.2.1: SENDs and WRITEs only),
	 * is refused at that WR before anything reaches the ring. */
	{
		struct ibv_sge isge = { .addr = (uintptr_t)buf, .length = MAX_INLINE + 1 };
		struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &isge, .num_sge = 1,
					   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE };
		struct ibv_send_wr *sbad = NULL;

		ret = ibv_post_send(qp, &swr, &sbad);
		result("ib_verbs_provider_inline_too_long_refused", ret == EINVAL && sbad == &swr,
		       "an inline SEND of %u bytes (max %u): %d", isge.length, MAX_INLINE, ret);
		isge.length = 8;
		swr.opcode = IBV_WR_RDMA_READ;
		sbad = NULL;
		ret = ibv_post_send(qp, &swr, &sbad);
		result("ib_verbs_provider_inline_read_refused", ret == EINVAL && sbad == &swr,
		       "an inline READ: %d", ret);
	}

	/* ibv_resize_cq with completions outstanding: the QP to ERR flushes
	 * its 8 receives (IBA 10.3.1 Error: WR_FLUSH_ERR); 3 are polled, then
	 * a resize below the 5 left is refused with the CQ intact, a resize
	 * to 64 moves them, and the 5 come out of the new ring in order. */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_ERR;
	ret = ibv_modify_qp(qp, &qa, IBV_QP_STATE);
	result("ib_verbs_provider_modify_qp_err", ret == 0, "ibv_modify_qp ERR: %d", ret);
	{
		int got = poll_some(cq, wc, 3, 3), ok = 1;

		result("ib_verbs_provider_flush_polled", got == 3 && wc[0].wr_id == 0 &&
		       wc[2].wr_id == 2 && wc[0].status == IBV_WC_WR_FLUSH_ERR,
		       "%d flushed receives polled (want 3), first wr_id %llu status %d", got,
		       got ? (unsigned long long)wc[0].wr_id : 0ull, got ? (int)wc[0].status : -1);
		usleep(200000);   /* the other 5 flushed too, not yet polled */
		ret = ibv_resize_cq(cq, 4);
		result("ib_verbs_provider_resize_cq_below_outstanding_refused",
		       ret != 0 && cq->cqe == 32, "ibv_resize_cq(4) with 5 outstanding: %d, cqe %d",
		       ret, cq->cqe);
		ret = ibv_resize_cq(cq, 50);
		result("ib_verbs_provider_resize_cq", ret == 0 && cq->cqe == 64,
		       "ibv_resize_cq(50): %d, cqe %d (want the ring's 64)", ret, cq->cqe);
		got = poll_some(cq, wc, 5, 8);
		for (int k = 0; k < got; k++)
			ok &= wc[k].wr_id == (uint64_t)(3 + k) && wc[k].status == IBV_WC_WR_FLUSH_ERR;
		result("ib_verbs_provider_resize_cq_kept_completions", got == 5 && ok,
		       "%d completions after the resize (want wr_id 3..7 in order, flushed)", got);
		ret = ibv_poll_cq(cq, 4, wc);
		result("ib_verbs_provider_resize_cq_then_empty", ret == 0, "a further poll: %d", ret);
	}

	ret = ibv_destroy_qp(qp);
	result("ib_verbs_provider_destroy_qp", ret == 0, "ibv_destroy_qp: %d", ret);
out_cq:
	ret = ibv_destroy_cq(cq);
	result("ib_verbs_provider_destroy_cq", ret == 0, "ibv_destroy_cq: %d", ret);
out_mr:
	if (mr) {
		ret = ibv_dereg_mr(mr);
		result("ib_verbs_provider_dereg_mr", ret == 0, "ibv_dereg_mr: %d", ret);
	}
	ret = ibv_dealloc_pd(pd);
	result("ib_verbs_provider_dealloc_pd", ret == 0, "ibv_dealloc_pd: %d", ret);
	free(buf);
out_ctx:
	ret = ibv_close_device(ctx);
	result("ib_verbs_provider_close_device", ret == 0, "ibv_close_device: %d", ret);
out_list:
	ibv_free_device_list(list);
out:
	if (failures) {
		printf("VERBS-CHECK FAIL %u/%u\n", failures, checks);
		return 1;
	}
	printf("VERBS-CHECK PASS %u\n", checks);
	return 0;
}
