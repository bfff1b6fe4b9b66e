/* mnic-db-bench: how soon a POSIX NIC acts on a host's doorbell (make
 * bench, bench/doorbell.sh; issue 15), and what a command round trip costs.
 *
 *   mnic-db-bench [-n N] [-g GAP_US] [-t TAG] A_BAR B_BAR A_PCAP
 *
 * Two NICs on one switch, an RC QP on each connected to the other, one
 * tenant handle per NIC in this process.  N times: sleep GAP_US (the NIC
 * goes idle and sleeps, as between a real application's messages), read
 * CLOCK_REALTIME, post one 64-byte SEND on A (libmnic writes the WQE, the
 * doorbell record and db_seq, and rings A's doorbell channel when it has
 * one), wait for its completion (B's ACK) and B's receive.  A runs with
 * MNIC_PCAP=A_PCAP, which stamps each frame with CLOCK_REALTIME as A hands
 * it to the wire (hal/posix/eth_vde.c, before the switch): the doorbell's
 * delay is that stamp of the SEND with PSN i minus the time read before
 * posting it.  Then N QUERY_DEVICE commands on A, timed one by one
 * (CLOCK_MONOTONIC).  stdout, one "name: value unit" line each:
 *
 *   doorbell_to_wire_us_<TAG>   median doorbell -> first frame on the wire
 *   cmd_rtt_us_<TAG>            median command round trip (mnic_query_device)
 *
 * stderr: "db_bench: <TAG>: doorbell_to_wire max X us, cmd_rtt max Y us,
 * N samples" (what the doorbell_irq test checks).  Every sample must be
 * found in the capture, once, in order; anything else exits 1 with what
 * went wrong.  Defaults: N 50, GAP_US 3000, TAG posix.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mnic/libmnic.h"

#define MAX_SAMPLES 1000u
#define MSG 64u
#define RECVS 32u
#define ROCE_PORT 4791u
#define BTH_SEND_ONLY 0x04u           /* RC SEND Only (IBA 9.2, Table 38) */

struct side {
	const char *path;
	struct mnic_dev *dev;
	struct mnic_pd *pd;
	struct mnic_buf buf;
	struct mnic_mr *mr;
	struct mnic_cq *cq;
	struct mnic_qp *qp;
	uint32_t ipv4;
	uint8_t mac[6];
};

static void die(const char *what, int err)
{
	fprintf(stderr, "mnic-db-bench: %s: %s\n", what, err ? strerror(-err) : "failed");
	exit(1);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void setup_side(struct side *s)
{
	struct mnic_cmd_query_device_out q;
	struct mnic_dev_info info;
	struct mnic_qp_init_attr qa;
	int err;

	if ((err = mnic_open(s->path, &s->dev)) < 0) {
		fprintf(stderr, "mnic-db-bench: %s\n", mnic_open_error());
		exit(1);
	}
	if ((err = mnic_query_device(s->dev, &q)) < 0)
		die("QUERY_DEVICE", err);
	if ((err = mnic_dev_info(s->dev, &info)) < 0)
		die("device info", err);
	s->ipv4 = q.ipv4;
	memcpy(s->mac, info.mac, 6);
	if ((err = mnic_alloc_pd(s->dev, &s->pd)) < 0 ||
	    (err = mnic_alloc(s->dev, 2u * RECVS * MSG, 4096, &s->buf)) < 0 ||
	    (err = mnic_reg_mr(s->pd, s->buf.addr, 2u * RECVS * MSG, MNIC_ACCESS_LOCAL_WRITE,
			       &s->mr)) < 0 ||
	    (err = mnic_create_cq(s->dev, 2u * RECVS, &s->cq)) < 0)
		die("PD, buffer, MR or CQ", err);
	memset(&qa, 0, sizeof(qa));
	qa.pd = s->pd;
	qa.send_cq = qa.recv_cq = s->cq;
	qa.max_send_wr = 16;
	qa.max_recv_wr = RECVS;
	qa.max_send_sge = qa.max_recv_sge = 1;
	if ((err = mnic_create_qp(&qa, &s->qp)) < 0)
		die("create QP", err);
}

static void teardown_side(struct side *s)
{
	if (mnic_destroy_qp(s->qp) < 0 || mnic_destroy_cq(s->cq) < 0 || mnic_dereg_mr(s->mr) < 0 ||
	    mnic_dealloc_pd(s->pd) < 0 || mnic_free(s->dev, s->buf.addr) < 0)
		die("tearing down", 0);
	mnic_close(s->dev);
}

static void connect_to(struct side *s, const struct side *peer)
{
	struct mnic_rc_connect c;
	int err;

	memset(&c, 0, sizeof(c));
	c.dest_qp_num = peer->qp->qp_num;
	mnic_gid_from_ipv4(c.dgid, peer->ipv4);
	memcpy(c.dmac, peer->mac, 6);
	c.path_mtu = 3;
	c.access = MNIC_ACCESS_LOCAL_WRITE;
	if ((err = mnic_connect_rc(s->qp, &c)) < 0)
		die("connect RC", err);
}

static void post_recv(struct side *s, uint32_t slot)
{
	struct mnic_sge sg = { s->buf.addr + (uint64_t)(RECVS + slot % RECVS) * MSG, MSG,
			       s->mr->lkey };
	struct mnic_recv_wr wr = { .wr_id = slot, .sg_list = &sg, .num_sge = 1 };
	int err = mnic_post_recv(s->qp, &wr, NULL);

	if (err < 0)
		die("post recv", err);
}

static void wait_one(struct side *s, const char *what)
{
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + 5000000000ull;
	struct mnic_wc wc;
	int n;

	while ((n = mnic_poll_cq(s->cq, 1, &wc)) == 0)
		if (clock_ns(CLOCK_MONOTONIC) > deadline) {
			fprintf(stderr, "mnic-db-bench: no %s completion within 5 s\n", what);
			exit(1);
		}
	if (n < 0)
		die("poll CQ", n);
	if (wc.status != MNIC_WC_SUCCESS) {
		fprintf(stderr, "mnic-db-bench: %s completed with status %u\n", what, wc.status);
		exit(1);
	}
}

static uint32_t rd32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The capture time (CLOCK_REALTIME ns) of the first SEND Only from mac to
 * dqpn with each PSN < n; -1 if absent. */
static void scan_pcap(const char *path, const uint8_t mac[6], uint32_t dqpn, unsigned n,
		      int64_t *ts)
{
	FILE *f = fopen(path, "rb");
	uint8_t h[24], r[16], frame[2048];

	for (unsigned i = 0; i < n; i++)
		ts[i] = -1;
	if (!f || fread(h, sizeof(h), 1, f) != 1 || rd32le(h) != 0xa1b23c4du) {
		fprintf(stderr, "mnic-db-bench: %s: not a nanosecond pcap from the NIC (MNIC_PCAP)\n",
			path);
		exit(1);
	}
	while (fread(r, sizeof(r), 1, f) == 1) {
		uint32_t incl = rd32le(r + 8), ihl, psn, qpn;
		const uint8_t *ip = frame + 14, *udp, *bth;

		if (incl > sizeof(frame) || fread(frame, incl, 1, f) != 1)
			break;
		if (incl < 14 + 20 + 8 + 12 || memcmp(frame + 6, mac, 6) ||
		    frame[12] != 0x08 || frame[13] != 0x00 || ip[9] != 17)
			continue;
		ihl = (ip[0] & 15u) * 4u;
		if (14 + ihl + 8 + 12 > incl)
			continue;
		udp = ip + ihl;
		bth = udp + 8;
		if (((uint32_t)udp[2] << 8 | udp[3]) != ROCE_PORT || bth[0] != BTH_SEND_ONLY)
			continue;
		qpn = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];
		psn = (uint32_t)bth[9] << 16 | (uint32_t)bth[10] << 8 | bth[11];
		if (qpn == dqpn && psn < n && ts[psn] < 0)
			ts[psn] = (int64_t)rd32le(r) * 1000000000ll + rd32le(r + 4);
	}
	fclose(f);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median and max of v[0..n) in microseconds (v is sorted). */
static double median_us(uint64_t *v, unsigned n, double *max)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	*max = (double)v[n - 1] / 1000.0;
	return (n & 1 ? (double)v[n / 2] : (double)(v[n / 2 - 1] + v[n / 2]) / 2.0) / 1000.0;
}

int main(int argc, char **argv)
{
	static uint64_t t0[MAX_SAMPLES], wire[MAX_SAMPLES], rtt[MAX_SAMPLES];
	static int64_t ts[MAX_SAMPLES];
	struct side a = { 0 }, b = { 0 };
	unsigned n = 50, gap_us = 3000;
	const char *tag = "posix";
	double wire_med, wire_max, rtt_med, rtt_max;
	int opt, err;

	while ((opt = getopt(argc, argv, "n:g:t:")) != -1) {
		switch (opt) {
		case 'n': n = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'g': gap_us = (unsigned)strtoul(optarg, NULL, 0); break;
		case 't': tag = optarg; break;
		default: goto usage;
		}
	}
	if (argc - optind != 3 || n == 0 || n > MAX_SAMPLES) {
usage:
		fprintf(stderr, "usage: mnic-db-bench [-n 1..%u] [-g GAP_US] [-t TAG] A_BAR B_BAR "
				"A_PCAP (A runs with MNIC_PCAP=A_PCAP)\n", MAX_SAMPLES);
		return 2;
	}
	a.path = argv[optind];
	b.path = argv[optind + 1];
	setup_side(&a);
	setup_side(&b);
	connect_to(&a, &b);   /* sq_psn 0: the SEND of sample i has PSN i */
	connect_to(&b, &a);
	for (uint32_t i = 0; i < RECVS; i++)
		post_recv(&b, i);

	for (unsigned i = 0; i < n; i++) {
		struct mnic_sge sg = { a.buf.addr, MSG, a.mr->lkey };
		struct mnic_send_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1,
					   .opcode = MNIC_WR_SEND, .send_flags = MNIC_SEND_SIGNALED };

		usleep(gap_us);
		t0[i] = clock_ns(CLOCK_REALTIME);
		if ((err = mnic_post_send(a.qp, &wr, NULL)) < 0)
			die("post send", err);
		wait_one(&a, "send");
		wait_one(&b, "receive");
		post_recv(&b, RECVS + i);
	}
	for (unsigned i = 0; i < n; i++) {
		struct mnic_cmd_query_device_out q;
		uint64_t t = clock_ns(CLOCK_MONOTONIC);

		if ((err = mnic_query_device(a.dev, &q)) < 0)
			die("QUERY_DEVICE", err);
		rtt[i] = clock_ns(CLOCK_MONOTONIC) - t;
	}
	/* A writes its capture out when it goes idle (hal/posix/platform.c) */
	usleep(200000);
	scan_pcap(argv[optind + 2], a.mac, b.qp->qp_num, n, ts);
	for (unsigned i = 0; i < n; i++) {
		if (ts[i] < 0 || (uint64_t)ts[i] < t0[i]) {
			fprintf(stderr, "mnic-db-bench: sample %u: the SEND with PSN %u is %s in %s\n", i,
				i, ts[i] < 0 ? "missing" : "stamped before its doorbell",
				argv[optind + 2]);
			return 1;
		}
		wire[i] = (uint64_t)ts[i] - t0[i];
	}
	wire_med = median_us(wire, n, &wire_max);
	rtt_med = median_us(rtt, n, &rtt_max);
	printf("doorbell_to_wire_us_%s: %.1f us\n", tag, wire_med);
	printf("cmd_rtt_us_%s: %.1f us\n", tag, rtt_med);
	fprintf(stderr, "db_bench: %s: doorbell_to_wire max %.1f us, cmd_rtt max %.1f us, %u samples\n",
		tag, wire_max, rtt_max, n);
	teardown_side(&a);
	teardown_side(&b);
	return 0;
}
