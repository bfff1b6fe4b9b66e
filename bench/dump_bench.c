/* make bench: migration image figures (issue #4).
 *   dump_bytes_{pd,mr,cq,srq,qp,qp_srq}  record bytes per object type
 *   dump_restore_1000qp_ms   dump of a context with 1,000 RTS QPs plus
 *                            restore into a fresh engine, wall clock,
 *                            median of 5
 *   mig_resume_bytes         one RESUME as it leaves the port (keyed, as the
 *                            tools connect; Ethernet header to ICRC, no
 *                            FCS): the restored context's resume sends one
 *                            per QP
 * Engines at the default pool sizes (1,024 QPs). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rocev2/internal.h"

#define WIN (64u << 20)
#define NQP 1000u

static struct rocev2 src, dst;
static struct hal_dma dsrc, ddst;
static uint8_t *msrc, *mdst;
static uint8_t image[8u << 20];

static size_t resume_bytes;        /* largest RESUME frame sent */

static int tx(void *ctx, const void *f, size_t n)
{
	(void)ctx;
	if (n > ROCEV2_HDR_OFFSET && ((const uint8_t *)f)[ROCEV2_HDR_OFFSET] == OP_RESUME &&
	    n > resume_bytes)
		resume_bytes = n;
	return 0;
}
static uint64_t now(void *ctx) { (void)ctx; return 1; }

static double ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void init(struct rocev2 *e, struct hal_dma *d, uint8_t *m)
{
	struct rocev2_env env = { NULL, tx, now, d, { 2, 0, 0, 0, 0, 1 }, 0x0a000001u };

	hal_dma_window_init(d, m, WIN);
	if (rocev2_init(e, &env)) {
		fprintf(stderr, "dump_bench: init failed\n");
		exit(1);
	}
}

static void must(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "dump_bench: %s failed: %d\n", what, rc);
		exit(1);
	}
}

static void build_context(void)
{
	struct rocev2_queue_attr cq = { .ring_addr = 0, .dbrec_addr = 0x100000, .size = 4096 };
	struct rocev2_srq_attr sa = { { .ring_addr = 0x200000,
					.dbrec_addr = 0x100040, .size = 64 }, 4, 0 };
	uint32_t pd, lkey, rkey, c, srq, i;

	init(&src, &dsrc, msrc);
	must(rocev2_alloc_pd(&src, &pd), "pd");
	must(rocev2_reg_mr(&src, pd, 0, WIN, 15, &lkey, &rkey), "mr");
	must(rocev2_create_cq(&src, &cq, &c), "cq");
	must(rocev2_create_srq(&src, pd, &sa, &srq), "srq");
	for (i = 0; i < NQP; i++) {
		uint64_t base = 0x400000u + (uint64_t)i * 0x4000u;
		struct rocev2_qp_init_attr ia = {
			.pd = pd, .send_cq = c, .recv_cq = c,
			.srq = i == 0 ? srq : ROCEV2_NO_SRQ,
			.sq = { base, 0x110000u + i * 16u, 16 },
			.rq = { i == 0 ? 0 : base + 0x2000u, i == 0 ? 0 : 0x110008u + i * 16u, i == 0 ? 0 : 16 },
			.max_send_sge = 4, .max_recv_sge = 4,
		};
		struct rocev2_qp_attr a;
		uint32_t qpn;

		must(rocev2_create_qp(&src, &ia, &qpn), "create_qp");
		memset(&a, 0, sizeof(a));
		a.qp_state = ROCEV2_QPS_INIT;
		a.qp_access_flags = 14;
		must(rocev2_modify_qp(&src, qpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_PKEY_INDEX |
						     ROCEV2_QP_PORT | ROCEV2_QP_ACCESS_FLAGS), "init");
		a.qp_state = ROCEV2_QPS_RTR;
		a.path_mtu = ROCEV2_MTU_4096;
		a.dest_qp_num = qpn;
		a.rq_psn = i;
		a.max_dest_rd_atomic = 4;
		a.av.dmac[0] = 2;
		rocev2_av_set_ipv4(&a.av, 0x0a000002u);
		must(rocev2_modify_qp(&src, qpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_AV | ROCEV2_QP_PATH_MTU |
						     ROCEV2_QP_DEST_QPN | ROCEV2_QP_RQ_PSN |
						     ROCEV2_QP_MAX_DEST_RD_ATOMIC | ROCEV2_QP_MIN_RNR_TIMER),
		     "rtr");
		a.qp_state = ROCEV2_QPS_RTS;
		a.sq_psn = i;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		must(rocev2_modify_qp(&src, qpn, &a, ROCEV2_QP_STATE | ROCEV2_QP_SQ_PSN | ROCEV2_QP_TIMEOUT |
						     ROCEV2_QP_RETRY_CNT | ROCEV2_QP_RNR_RETRY |
						     ROCEV2_QP_MAX_QP_RD_ATOMIC), "rts");
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	static const char *const names[6] = { "pd", "mr", "cq", "srq", "qp", "qp_srq" };
	struct rocev2_dump_stats st;
	double t[5];
	size_t len = 0;
	unsigned r, k;

	msrc = calloc(1, WIN);
	mdst = calloc(1, WIN);
	for (r = 0; r < 5; r++) {
		double t0;

		build_context();
		init(&dst, &ddst, mdst);
		t0 = ms();
		must(rocev2_dump_context(&src, NULL, image, sizeof(image), &len, &st), "dump");
		must(rocev2_restore_image(&dst, image, len, NULL), "restore");
		t[r] = ms() - t0;
		if (dst.n_qp != NQP) {
			fprintf(stderr, "dump_bench: %u QPs restored, want %u\n", dst.n_qp, NQP);
			return 1;
		}
	}
	qsort(t, 5, sizeof(t[0]), cmp);
	for (k = 0; k < 6; k++)
		if (st.objects[k])
			printf("dump_bytes_%s: %u bytes\n", names[k], st.bytes[k] / st.objects[k]);
	printf("dump_restore_1000qp_ms: %.2f ms\n", t[2]);
	printf("dump_image_1000qp_bytes: %zu bytes\n", len);
	/* The restored copy resumes: one RESUME per QP, keyed. */
	for (k = 0; k < ROCEV2_MAX_QP; k++) {
		static const uint8_t key[16] = { 1 };

		if (dst.qps[k].in_use)
			must(rocev2_set_mig_key(&dst, dst.qps[k].qpn, key), "mig key");
	}
	must(rocev2_resume_context(&dst, 0), "resume");
	if (!resume_bytes) {
		fprintf(stderr, "dump_bench: resume sent no RESUME\n");
		return 1;
	}
	printf("mig_resume_bytes: %zu bytes\n", resume_bytes);
	/* Firmware RAM (issue 14): one MTT entry per page of an MR or ring;
	 * a QP's slot, with its share of the engine's timer heap (its four
	 * timers live in the slot, the heap holds a pointer to each).  The
	 * pages of its rings are MTT entries, counted per page. */
	printf("fw_ram_bytes_per_mr_page: %zu bytes\n", sizeof(src.mtt_pages[0]));
	printf("fw_ram_bytes_per_qp: %zu bytes\n",
	       sizeof(struct rocev2_qp) + ROCEV2_TIMERS_PER_QP * sizeof(src.timer_slots[0]));
	return 0;
}
