/* mnic-rw: the active side of the RDMA WRITE / RDMA READ interop check, on
 * libmnic: our NIC writes into and reads from an MR of rdma_rw (an
 * unmodified libibverbs program on Linux SoftRoCE, tests/interop/rdma_rw.c).
 * The exchange and the data patterns are in rw_proto.h.
 *
 *   mnic-rw --dev BAR|/dev/mnicN --connect HOST:PORT --dmac MAC
 *           [--mtu 256..4096] [--timeout S] [--atomic]
 *
 * Our address goes out in ibv_rc_pingpong's "LID:QPN:PSN:GID" format with
 * GID ::ffff:<our IPv4> (RoCEv2, IPv4-mapped: IBA A17.4.5.1).  --dmac is
 * the peer's MAC: our NIC does not resolve addresses (no ARP), the host
 * hands it the next hop as verbs' ib_resolve_eth_dmac would.
 * Prints "MNIC-RW PASS ..." and exits 0 only if both completions succeeded,
 * the bytes read back match and the peer confirmed the bytes written.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "mnic/libmnic.h"
#include "rw_proto.h"

static int die(const char *what, int err)
{
	if (err)
		fprintf(stderr, "mnic-rw: %s: %s (%d)\n", what, strerror(-err), err);
	else
		fprintf(stderr, "mnic-rw: %s\n", what);
	return 1;
}

/* Connect to HOST:PORT, retrying until `timeout_s`: the peer may still be
 * starting (a VM's hostfwd accepts and drops until the guest listens). */
static int connect_to(const char *hostport, int timeout_s)
{
	char host[256];
	const char *colon = strrchr(hostport, ':');
	if (!colon || (size_t)(colon - hostport) >= sizeof host)
		return -1;
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = 0;
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	if (getaddrinfo(host, colon + 1, &hints, &ai))
		return -1;
	struct timeval tv = { .tv_sec = timeout_s };
	time_t end = time(NULL) + timeout_s;
	int fd = -1;
	while (time(NULL) < end) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
			break;
		}
		if (fd >= 0)
			close(fd);
		fd = -1;
		struct timespec pause = { .tv_nsec = 200 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
	freeaddrinfo(ai);
	return fd;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned m[6];
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	return 0;
}

static int mtu_enum(int mtu)
{
	static const int sizes[] = { 256, 512, 1024, 2048, 4096 };   /* ibv_mtu 1..5 */
	for (int i = 0; i < 5; i++)
		if (sizes[i] == mtu)
			return i + 1;
	return 0;
}

/* Poll until `want` completions or the deadline; each must be SUCCESS. */
static int poll_n(struct mnic_cq *cq, int want, int timeout_s, struct mnic_wc *wc)
{
	struct timespec now, end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_s;
	int got = 0;
	while (got < want) {
		int n = mnic_poll_cq(cq, want - got, wc + got);
		if (n < 0)
			return n;
		got += n;
		if (n == 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > end.tv_sec ||
			    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
				return -ETIMEDOUT;
			struct timespec pause = { .tv_nsec = 100 * 1000 };
			nanosleep(&pause, NULL);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *devpath = NULL, *peer = NULL, *dmac_s = NULL;
	int mtu = 1024, timeout_s = 60, atomic = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--dev") && v) devpath = v;
		else if (!strcmp(argv[i], "--connect") && v) peer = v;
		else if (!strcmp(argv[i], "--dmac") && v) dmac_s = v;
		else if (!strcmp(argv[i], "--mtu") && v) mtu = atoi(v);
		else if (!strcmp(argv[i], "--timeout") && v) timeout_s = atoi(v);
		else if (!strcmp(argv[i], "--atomic")) { atomic = 1; continue; }
		else {
			fprintf(stderr, "usage: mnic-rw --dev BAR --connect HOST:PORT --dmac MAC "
					"[--mtu 256..4096] [--timeout S] [--atomic]\n");
			return 2;
		}
		i++;
	}
	uint8_t dmac[6];
	if (!devpath || !peer || !dmac_s || parse_mac(dmac_s, dmac) || !mtu_enum(mtu) || timeout_s <= 0)
		return die("need --dev, --connect HOST:PORT, --dmac xx:xx:xx:xx:xx:xx, --mtu 256|512|1024|2048|4096", 0);

	struct mnic_dev *dev;
	int err = mnic_open(devpath, &dev);
	if (err)
		return die(mnic_open_error(), err);
	struct mnic_cmd_query_device_out qd;
	struct mnic_pd *pd;
	struct mnic_cq *cq;
	struct mnic_qp *qp;
	if ((err = mnic_query_device(dev, &qd)) || (err = mnic_alloc_pd(dev, &pd)) ||
	    (err = mnic_create_cq(dev, 8, &cq)))
		return die(mnic_strerror_last(dev), err);
	struct mnic_qp_init_attr qia = { .pd = pd, .send_cq = cq, .recv_cq = cq, .max_send_wr = 4,
					 .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 };
	if ((err = mnic_create_qp(&qia, &qp)))
		return die(mnic_strerror_last(dev), err);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint32_t psn = (uint32_t)(ts.tv_nsec ^ getpid()) & 0xffffffu;

	char mine[RW_MSG_PEER], theirs[RW_MSG_MR + 1];
	snprintf(mine, sizeof mine, "%04x:%06x:%06x:00000000000000000000ffff%08x", 0u, qp->qp_num, psn,
		 qd.ipv4);
	/* A hostfwd port accepts before the guest listens, then closes: a
	 * connection closed before a single byte came back is tried again. */
	int fd = -1;
	for (time_t end = time(NULL) + timeout_s; fd < 0 && time(NULL) < end;) {
		fd = connect_to(peer, timeout_s);
		if (fd < 0)
			return die("cannot connect to the peer's exchange port", 0);
		if (io_full(fd, mine, sizeof mine, 1) || io_full(fd, theirs, RW_MSG_MR, 0)) {
			close(fd);
			fd = -1;
			struct timespec pause = { .tv_nsec = 200 * 1000 * 1000 };
			nanosleep(&pause, NULL);
		}
	}
	if (fd < 0)
		return die("address exchange failed: the peer never answered", 0);
	theirs[RW_MSG_MR] = 0;
	unsigned lid, dqpn, dpsn, rkey, len;
	uint64_t raddr;
	char gid[33];
	if (sscanf(theirs, "%4x:%6x:%6x:%32[0-9a-f]:%16" SCNx64 ":%8x:%8x", &lid, &dqpn, &dpsn, gid, &raddr,
		   &rkey, &len) != 7 || strlen(gid) != 32)
		return die("bad address message from the peer", 0);
	if (strncmp(gid, "00000000000000000000ffff", 24))
		return die("peer GID is not IPv4-mapped (use GID index 1 on rxe: ::ffff:a.b.c.d)", 0);
	if (len == 0 || len > RW_MAX_LEN)
		return die("peer MR length out of range", 0);
	uint32_t dip = (uint32_t)strtoul(gid + 24, NULL, 16);
	printf("mnic-rw: our QPN 0x%06x PSN 0x%06x IPv4 %u.%u.%u.%u; peer QPN 0x%06x PSN 0x%06x "
	       "IPv4 %u.%u.%u.%u MR 0x%" PRIx64 " rkey 0x%08x len %u\n",
	       qp->qp_num, psn, qd.ipv4 >> 24, qd.ipv4 >> 16 & 255, qd.ipv4 >> 8 & 255, qd.ipv4 & 255,
	       dqpn, dpsn, dip >> 24, dip >> 16 & 255, dip >> 8 & 255, dip & 255, raddr, rkey, len);

	struct mnic_rc_connect c = { .dest_qp_num = dqpn, .rq_psn = dpsn, .sq_psn = psn,
				     .path_mtu = (uint32_t)mtu_enum(mtu), .access = MNIC_ACCESS_LOCAL_WRITE };
	mnic_gid_from_ipv4(c.dgid, dip);
	memcpy(c.dmac, dmac, 6);
	struct mnic_buf buf;
	struct mnic_mr *mr;
	if ((err = mnic_connect_rc(qp, &c)) || (err = mnic_alloc(dev, 2 * (uint64_t)len, 64, &buf)) ||
	    (err = mnic_reg_mr(pd, buf.addr, 2 * (uint64_t)len, MNIC_ACCESS_LOCAL_WRITE, &mr)))
		return die(mnic_strerror_last(dev), err);
	uint8_t *p = buf.ptr;
	for (uint32_t i = 0; i < len; i++)
		p[i] = rw_write_byte(i);

	/* WRITE [0, len) to the peer's second half; READ its first half into
	 * our [len, 2 len).  RC executes them in order (IBA 9.5). */
	struct mnic_sge wsge = { .addr = buf.addr, .length = len, .lkey = mr->lkey };
	struct mnic_sge rsge = { .addr = buf.addr + len, .length = len, .lkey = mr->lkey };
	struct mnic_send_wr rd = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1, .opcode = MNIC_WR_RDMA_READ,
				   .send_flags = MNIC_SEND_SIGNALED, .remote_addr = raddr, .rkey = rkey };
	struct mnic_send_wr wr = { .wr_id = 1, .next = &rd, .sg_list = &wsge, .num_sge = 1,
				   .opcode = MNIC_WR_RDMA_WRITE, .send_flags = MNIC_SEND_SIGNALED,
				   .remote_addr = raddr + len, .rkey = rkey };
	struct mnic_wc wc[2];
	memset(wc, 0, sizeof wc);
	if ((err = mnic_post_send(qp, &wr, NULL)))
		return die(mnic_strerror_last(dev), err);
	err = poll_n(cq, 2, timeout_s, wc);
	int ok = !err;
	for (int i = 0; i < 2 && ok; i++)
		if (wc[i].status != MNIC_WC_SUCCESS || wc[i].wr_id != (uint64_t)(i + 1))
			ok = 0;
	uint32_t bad = 0, first = UINT32_MAX;
	for (uint32_t i = 0; ok && i < len; i++)
		if (p[len + i] != rw_read_byte(i) && bad++ == 0)
			first = i;
	ok = ok && bad == 0;
	/* --atomic (rw_proto.h): FETCH_AND_ADD on the read half's last 8
	 * bytes; the old value lands in our first 8 (the WRITE is done). */
	struct mnic_wc awc = { .status = MNIC_WC_GENERAL_ERR };
	uint64_t fetched = 0;
	if (ok && atomic) {
		struct mnic_sge asge = { .addr = buf.addr, .length = 8, .lkey = mr->lkey };
		struct mnic_send_wr at = { .wr_id = 3, .sg_list = &asge, .num_sge = 1,
					   .opcode = MNIC_WR_ATOMIC_FETCH_AND_ADD,
					   .send_flags = MNIC_SEND_SIGNALED, .remote_addr = raddr + len - 8,
					   .rkey = rkey, .compare_add = RW_ATOMIC_ADD };
		if (len < 8 || mnic_post_send(qp, &at, NULL) || poll_n(cq, 1, timeout_s, &awc))
			ok = 0;
		memcpy(&fetched, p, 8);
		ok = ok && awc.status == MNIC_WC_SUCCESS && fetched == rw_read_u64(len - 8);
	}
	char tok[RW_TOKEN_LEN] = { 0 }, reply[RW_TOKEN_LEN + 1] = { 0 };
	snprintf(tok, sizeof tok, "%s", !ok ? "rw-fail" : atomic ? "rw-atom" : "rw-done");
	if (io_full(fd, tok, sizeof tok, 1) || io_full(fd, reply, RW_TOKEN_LEN, 0))
		snprintf(reply, sizeof reply, "(none)");
	close(fd);
	int peer_ok = !strcmp(reply, "rw-ok");
	printf("MNIC-RW %s len=%u mtu=%d write=%s read=%s read_bad=%u (first at %d) peer=%s%s%s\n",
	       ok && peer_ok ? "PASS" : "FAIL", len, mtu,
	       err ? "timeout" : mnic_wc_status_name(wc[0].status),
	       err ? "timeout" : mnic_wc_status_name(wc[1].status), bad,
	       first == UINT32_MAX ? -1 : (int)first, reply, atomic ? " atomic=" : "",
	       atomic ? (fetched == rw_read_u64(len - 8) ? mnic_wc_status_name(awc.status) : "bad-value") : "");
	mnic_destroy_qp(qp);
	mnic_dereg_mr(mr);
	mnic_destroy_cq(cq);
	mnic_dealloc_pd(pd);
	mnic_close(dev);
	return ok && peer_ok ? 0 : 1;
}
