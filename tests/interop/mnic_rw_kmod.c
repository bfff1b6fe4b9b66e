/* mnic-rw-kmod: the passive side of the RDMA WRITE / RDMA READ check
 * (rw_proto.h) on mnic.ko's /dev/mnicN with a host-memory aperture, run in
 * the kmod test VM against mnic-rw on the host (tests/system/kmod_vm.sh).
 *
 * Its MR is a malloc'ed 64 MiB buffer registered with MNIC_IOC_REG_MEM
 * (pinned pages of the VM's RAM, in whatever physical order the kernel
 * gave them): [0, LEN) holds rw_read_byte(i) for the peer to RDMA READ,
 * [LEN, 2 LEN) is zero for the peer to RDMA WRITE.  The CQ and QP rings
 * and their doorbell records are registered memory too.  The NIC is the
 * responder for both, so no WQE is posted here: it translates every
 * packet's IOVA through the MTT (rocev2/mtt.c).  After the peer's
 * "rw-done" ("rw-atom" after its FETCH_AND_ADD on the read half's last 8
 * bytes, a page's last 8): both halves checked, the added word too, the
 * QP still in RTS (IBA 10.3.1).
 *
 *   mnic-rw-kmod DEV PORT LEN PEER_MAC
 * Exit 0 and "KMOD-RW PASS ..." only if everything checked out. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "mnic/cmd.h"
#include "mnic/gid.h"
#include "mnic/ioctl.h"
#include "mnic/queues.h"
#include "rw_proto.h"

#define MR_LEN (64u << 20)
#define RING_LEN 0x10000u           /* doorbell records, CQ, SQ, RQ */
#define R_DBREC 0x1000u             /* CQ, SQ, RQ records 64 bytes apart */
#define R_CQ    0x2000u             /* 64 CQEs */
#define R_SQ    0x4000u             /* 16 WQEs */
#define R_RQ    0x8000u
#define TIMEOUT_S 120

/* ibv_qp_state, ibv_qp_attr_mask and ibv_access_flags values (verbs.h),
 * which the command interface carries as they are (mnic/cmd.h). */
enum { QPS_INIT = 1, QPS_RTR = 2, QPS_RTS = 3 };
enum {
	QP_STATE = 1 << 0, QP_ACCESS_FLAGS = 1 << 3, QP_PKEY_INDEX = 1 << 4, QP_PORT = 1 << 5,
	QP_AV = 1 << 7, QP_PATH_MTU = 1 << 8, QP_TIMEOUT = 1 << 9, QP_RETRY_CNT = 1 << 10,
	QP_RNR_RETRY = 1 << 11, QP_RQ_PSN = 1 << 12, QP_MAX_QP_RD_ATOMIC = 1 << 13,
	QP_MIN_RNR_TIMER = 1 << 15, QP_SQ_PSN = 1 << 16, QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	QP_DEST_QPN = 1 << 20,
};
enum { ACCESS_LOCAL_WRITE = 1, ACCESS_REMOTE_WRITE = 2, ACCESS_REMOTE_READ = 4, ACCESS_REMOTE_ATOMIC = 8 };

static int fd;

static int fail(const char *what, int err)
{
	printf("KMOD-RW FAIL %s%s%s\n", what, err ? ": " : "", err ? strerror(err < 0 ? -err : err) : "");
	return 1;
}

/* One command: -errno, 1000 + delivery, or the command status (0 OK). */
static int cmd(void *in, uint32_t in_len, void *out, uint32_t out_len)
{
	struct mnic_ioc_cmd c = { .size = sizeof(c), .version = MNIC_IOC_VERSION,
				  .in_ptr = (uint64_t)(uintptr_t)in,
				  .out_ptr = (uint64_t)(uintptr_t)out,
				  .in_len = in_len, .out_len = out_len };

	if (ioctl(fd, MNIC_IOC_CMD, &c) < 0)
		return -errno;
	return c.delivery ? 1000 + c.delivery : ((struct mnic_cmd_out_hdr *)out)->status;
}

static int reg_mem(void *addr, uint64_t len, uint32_t flags, uint32_t pd, uint32_t access,
		   struct mnic_ioc_reg_mem *r)
{
	*r = (struct mnic_ioc_reg_mem){ .size = sizeof(*r), .version = MNIC_IOC_VERSION,
					.addr = (uint64_t)(uintptr_t)addr, .length = len,
					.flags = flags, .pd = pd, .access = access };
	return ioctl(fd, MNIC_IOC_REG_MEM, r) < 0 ? -errno : 0;
}

static int modify(uint32_t qpn, uint32_t mask, const struct mnic_qp_attr *a)
{
	struct mnic_cmd_modify_qp_in in = { .hdr = { .opcode = MNIC_CMD_MODIFY_QP },
					    .qpn = qpn, .attr_mask = mask, .attr = *a };
	struct mnic_cmd_simple_out out;

	return cmd(&in, sizeof(in), &out, sizeof(out));
}

static int listen_once(int port)
{
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0), c;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct timeval tv = { .tv_sec = TIMEOUT_S };

	if (s < 0)
		return -1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 1) < 0) {
		close(s);
		return -1;
	}
	printf("KMOD-RW-READY port %d\n", port);
	fflush(stdout);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));   /* bounds accept and reads */
	c = accept(s, NULL, NULL);
	close(s);
	if (c >= 0)
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return c;
}

int main(int argc, char **argv)
{
	struct mnic_cmd_simple_in simple = { .hdr = { .opcode = MNIC_CMD_ALLOC_PD } };
	struct mnic_cmd_query_device_out qd;
	struct mnic_cmd_create_cq_in cq_in;
	struct mnic_cmd_create_qp_in qp_in;
	struct mnic_cmd_handle_in qq = { .hdr = { .opcode = MNIC_CMD_QUERY_QP,
						  .op_mod = MNIC_QUERY_QP_BY_QPN } };
	struct mnic_cmd_query_qp_out qo;
	struct mnic_cmd_handle_out ho;
	struct mnic_ioc_reg_mem mr, rings;
	struct mnic_qp_attr a;
	char peer[RW_MSG_PEER], mine[RW_MSG_MR + 1], tok[RW_TOKEN_LEN] = { 0 }, reply[RW_TOKEN_LEN] = { 0 };
	unsigned lid, dqpn, dpsn, m[6];
	uint32_t len, pd, cq, qpn, psn, dip, bad_w = 0, bad_r = 0, first_w = UINT32_MAX, first_r = UINT32_MAX;
	uint8_t *buf, *ring;
	char gid[33];
	int port, s, rc, ok, atom = 0, atom_ok = 0;
	uint64_t word = 0;

	if (argc != 5 || (port = atoi(argv[2])) <= 0 || port > 65535 ||
	    (len = (uint32_t)strtoul(argv[3], NULL, 0)) == 0 || len > RW_MAX_LEN ||
	    2 * (uint64_t)len > MR_LEN ||
	    sscanf(argv[4], "%2x:%2x:%2x:%2x:%2x:%2x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6) {
		fprintf(stderr, "usage: mnic-rw-kmod DEV PORT LEN(1..16 MiB) PEER_MAC\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		return fail("open", errno);
	simple.hdr.opcode = MNIC_CMD_QUERY_DEVICE;
	if ((rc = cmd(&simple, sizeof(simple), &qd, sizeof(qd))) != 0)
		return fail("QUERY_DEVICE", rc < 0 ? rc : EIO);
	if (qd.hostmem_size == 0)
		return fail("the NIC has no host-memory aperture", 0);
	simple.hdr.opcode = MNIC_CMD_ALLOC_PD;
	if ((rc = cmd(&simple, sizeof(simple), &ho, sizeof(ho))) != 0)
		return fail("ALLOC_PD", rc < 0 ? rc : EIO);
	pd = ho.handle;

	buf = malloc(MR_LEN);
	ring = mmap(NULL, RING_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!buf || ring == MAP_FAILED)
		return fail("malloc / mmap", errno);
	memset(buf, 0, MR_LEN);
	memset(ring, 0, RING_LEN);
	for (uint32_t i = 0; i < len; i++)
		buf[i] = rw_read_byte(i);
	if ((rc = reg_mem(buf, MR_LEN, MNIC_REG_MEM_MR, pd,
			  ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ |
				  ACCESS_REMOTE_ATOMIC, &mr)) ||
	    (rc = reg_mem(ring, RING_LEN, 0, 0, 0, &rings)))
		return fail("MNIC_IOC_REG_MEM", rc);

	memset(&cq_in, 0, sizeof(cq_in));
	cq_in.hdr.opcode = MNIC_CMD_CREATE_CQ;
	cq_in.q = (struct mnic_queue_desc){ .ring_addr = (uintptr_t)ring + R_CQ,
					    .dbrec_addr = (uintptr_t)ring + R_DBREC, .size = 64,
					    .ring_mtt = rings.mtt, .dbrec_mtt = rings.mtt };
	if ((rc = cmd(&cq_in, sizeof(cq_in), &ho, sizeof(ho))) != 0)
		return fail("CREATE_CQ", rc < 0 ? rc : EIO);
	cq = ho.handle;
	memset(&qp_in, 0, sizeof(qp_in));
	qp_in.hdr.opcode = MNIC_CMD_CREATE_QP;
	qp_in.pd = pd;
	qp_in.send_cq = qp_in.recv_cq = cq;
	qp_in.srq = MNIC_NO_SRQ;
	qp_in.max_send_sge = qp_in.max_recv_sge = 1;
	qp_in.sq = (struct mnic_queue_desc){ .ring_addr = (uintptr_t)ring + R_SQ,
					     .dbrec_addr = (uintptr_t)ring + R_DBREC + 64, .size = 16,
					     .ring_mtt = rings.mtt, .dbrec_mtt = rings.mtt };
	qp_in.rq = (struct mnic_queue_desc){ .ring_addr = (uintptr_t)ring + R_RQ,
					     .dbrec_addr = (uintptr_t)ring + R_DBREC + 128, .size = 16,
					     .ring_mtt = rings.mtt, .dbrec_mtt = rings.mtt };
	if ((rc = cmd(&qp_in, sizeof(qp_in), &ho, sizeof(ho))) != 0)
		return fail("CREATE_QP", rc < 0 ? rc : EIO);
	qpn = ho.handle;
	psn = (uint32_t)(getpid() * 2654435761u) & 0xffffffu;
	printf("mnic-rw-kmod: QPN 0x%06x PSN 0x%06x MR 0x%" PRIxPTR " rkey 0x%08x (%u pages) len %u\n",
	       qpn, psn, (uintptr_t)buf, mr.rkey, mr.npages, len);

	s = listen_once(port);
	if (s < 0)
		return fail("no peer connected", errno);
	if (io_full(s, peer, sizeof(peer), 0))
		return fail("peer closed before its address message", 0);
	peer[sizeof(peer) - 1] = 0;
	if (sscanf(peer, "%4x:%6x:%6x:%32[0-9a-f]", &lid, &dqpn, &dpsn, gid) != 4 || strlen(gid) != 32 ||
	    strncmp(gid, "00000000000000000000ffff", 24))
		return fail("bad peer address message (want LID:QPN:PSN:IPv4-mapped GID)", 0);
	dip = (uint32_t)strtoul(gid + 24, NULL, 16);

	/* RESET -> INIT -> RTR -> RTS (IBA 10.3.1), as libmnic's mnic_connect_rc. */
	memset(&a, 0, sizeof(a));
	a.qp_state = QPS_INIT;
	a.qp_access_flags = ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
	if ((rc = modify(qpn, QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS, &a)))
		return fail("MODIFY_QP INIT", rc < 0 ? rc : EIO);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPS_RTR;
	a.path_mtu = 3;   /* IBV_MTU_1024 */
	a.dest_qp_num = dqpn;
	a.rq_psn = dpsn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	mnic_gid_from_ipv4(a.dgid, dip);
	for (int i = 0; i < 6; i++)
		a.dmac[i] = (uint8_t)m[i];
	a.ttl = 64;
	if ((rc = modify(qpn, QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN |
				      QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER, &a)))
		return fail("MODIFY_QP RTR", rc < 0 ? rc : EIO);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = psn;
	a.max_rd_atomic = 1;
	if ((rc = modify(qpn, QP_STATE | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_SQ_PSN |
				      QP_MAX_QP_RD_ATOMIC, &a)))
		return fail("MODIFY_QP RTS", rc < 0 ? rc : EIO);

	snprintf(mine, sizeof(mine), "%04x:%06x:%06x:00000000000000000000ffff%08x:%016" PRIx64 ":%08x:%08x",
		 0u, qpn, psn, qd.ipv4, (uint64_t)(uintptr_t)buf, mr.rkey, len);
	if (io_full(s, mine, RW_MSG_MR, 1))
		return fail("sending our address message", 0);
	if (io_full(s, tok, sizeof(tok), 0))
		return fail("peer closed before rw-done", 0);
	tok[sizeof(tok) - 1] = 0;
	/* "rw-atom": the peer's FETCH_AND_ADD hit the read half's last 8
	 * bytes (rw_proto.h); they must hold the pattern plus the addend. */
	atom = !strcmp(tok, "rw-atom") && len >= 8;
	if (atom) {
		memcpy(&word, buf + len - 8, 8);
		atom_ok = word == rw_read_u64(len - 8) + RW_ATOMIC_ADD;
	}
	for (uint32_t i = 0; i < len; i++) {
		if (buf[len + i] != rw_write_byte(i) && bad_w++ == 0)
			first_w = i;
		if (buf[i] != rw_read_byte(i) && !(atom && i >= len - 8) && bad_r++ == 0)
			first_r = i;
	}
	qq.handle = qpn;
	rc = cmd(&qq, sizeof(qq), &qo, sizeof(qo));
	ok = (!strcmp(tok, "rw-done") || (atom && atom_ok)) && bad_w == 0 && bad_r == 0 && rc == 0 && qo.attr.qp_state == QPS_RTS;
	snprintf(reply, sizeof(reply), "%s", ok ? "rw-ok" : "rw-bad");
	(void)io_full(s, reply, sizeof(reply), 1);
	close(s);
	printf("KMOD-RW %s len=%u peer_says=%s written_bad=%u (first at %d) read_region_changed=%u (first at %d) atomic=%s qp_state=%d\n",
	       ok ? "PASS" : "FAIL", len, tok, bad_w, first_w == UINT32_MAX ? -1 : (int)first_w, bad_r,
	       first_r == UINT32_MAX ? -1 : (int)first_r, !atom ? "none" : atom_ok ? "added" : "wrong",
	       rc ? -1 : (int)qo.attr.qp_state);
	close(fd);   /* the context, its objects, then the pins */
	return ok ? 0 : 1;
}
