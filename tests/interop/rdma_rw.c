/* rdma_rw: the passive side of the RDMA WRITE / RDMA READ interop check,
 * run inside the rxe peer VM on unmodified rdma-core libibverbs.
 *
 * Registers an MR of 2 x LEN bytes: [0, LEN) holds rw_read_byte(i) for the
 * peer to RDMA READ, [LEN, 2 LEN) is zero for the peer to RDMA WRITE.
 * Listens on a TCP port, exchanges addresses (rw_proto.h), brings its RC
 * QP to RTS, waits for the peer's "rw-done", then checks both halves
 * (written bytes as rw_write_byte(i), read bytes untouched) and that the QP
 * is still in RTS (an error would have moved it to ERR, IBA 10.3.1).
 *
 *   rdma_rw [-d DEV] [-g GIDX] [-p PORT] [-m MTU] [-s LEN] [-t TIMEOUT_S]
 * Exit 0 and "RDMA-RW PASS ..." only if everything checked out.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rw_proto.h"

static int fail(const char *what)
{
	fprintf(stderr, "rdma_rw: %s\n", what);
	return 1;
}

static int parse_peer(const char *msg, uint32_t *qpn, uint32_t *psn, union ibv_gid *gid)
{
	unsigned lid, q, p;
	char hex[33];
	if (sscanf(msg, "%4x:%6x:%6x:%32[0-9a-fA-F]", &lid, &q, &p, hex) != 4 || strlen(hex) != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		unsigned b;
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		gid->raw[i] = (uint8_t)b;
	}
	*qpn = q;
	*psn = p;
	return 0;
}

static int listen_once(int port, int timeout_s)
{
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0), c;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct timeval tv = { .tv_sec = timeout_s };
	if (s < 0)
		return -1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 1) < 0) {
		close(s);
		return -1;
	}
	/* SO_RCVTIMEO bounds accept() and every later read. */
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	c = accept(s, NULL, NULL);
	close(s);
	if (c >= 0)
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return c;
}

int main(int argc, char **argv)
{
	const char *devname = NULL;
	int gidx = 1, port = 18516, mtu = 1024, timeout_s = 60, opt;
	uint32_t len = 65536;
	while ((opt = getopt(argc, argv, "d:g:p:m:s:t:")) != -1) {
		switch (opt) {
		case 'd': devname = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 'm': mtu = atoi(optarg); break;
		case 's': len = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 't': timeout_s = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: rdma_rw [-d DEV] [-g GIDX] [-p PORT] [-m MTU] [-s LEN] [-t S]\n");
			return 2;
		}
	}
	enum ibv_mtu path_mtu = mtu == 256 ? IBV_MTU_256 : mtu == 512 ? IBV_MTU_512 :
				mtu == 1024 ? IBV_MTU_1024 : mtu == 2048 ? IBV_MTU_2048 :
				mtu == 4096 ? IBV_MTU_4096 : 0;
	if (path_mtu == 0 || len == 0 || len > RW_MAX_LEN || port <= 0 || port > 65535)
		return fail("bad -m (256..4096), -s (1..16 MiB) or -p");

	int ndev = 0;
	struct ibv_device **list = ibv_get_device_list(&ndev), *dev = NULL;
	for (int i = 0; list && i < ndev; i++)
		if (!devname || !strcmp(ibv_get_device_name(list[i]), devname))
			dev = dev ? dev : list[i];
	if (!dev)
		return fail("no RDMA device (is rxe0 up? rdma link)");
	struct ibv_context *ctx = ibv_open_device(dev);
	if (!ctx)
		return fail("ibv_open_device");
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	uint8_t *buf = calloc(2, len);
	if (!cq || !buf)
		return fail("ibv_alloc_pd / ibv_create_cq / calloc");
	for (uint32_t i = 0; i < len; i++)
		buf[i] = rw_read_byte(i);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 2 * (size_t)len,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	struct ibv_qp_init_attr qia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 1, .max_recv_wr = 1,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = mr ? ibv_create_qp(pd, &qia) : NULL;
	union ibv_gid gid;
	if (!qp || ibv_query_gid(ctx, 1, gidx, &gid))
		return fail("ibv_reg_mr / ibv_create_qp / ibv_query_gid");
	uint32_t psn = (uint32_t)(getpid() * 2654435761u) & 0xffffffu;

	printf("rdma_rw: %s QPN 0x%06x PSN 0x%06x MR addr 0x%" PRIx64 " rkey 0x%08x len %u, port %d\n",
	       ibv_get_device_name(dev), qp->qp_num, psn, (uint64_t)(uintptr_t)buf, mr->rkey, len, port);
	fflush(stdout);
	int fd = listen_once(port, timeout_s);
	if (fd < 0)
		return fail("no peer connected (listen/accept)");
	char peer[RW_MSG_PEER], mine[RW_MSG_MR + 1];
	uint32_t dqpn, dpsn;
	union ibv_gid dgid;
	if (io_full(fd, peer, sizeof peer, 0))
		return fail("peer closed before its address message");
	peer[sizeof peer - 1] = 0;
	if (parse_peer(peer, &dqpn, &dpsn, &dgid))
		return fail("bad peer address message (want ibv_rc_pingpong's LID:QPN:PSN:GID)");
	printf("rdma_rw: peer %s\n", peer);

	/* RESET -> INIT -> RTR -> RTS (IBA 10.3.1), the values ibv_rc_pingpong uses. */
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail("modify QP to INIT");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = path_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = dpsn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = dgid;
	a.ah_attr.grh.sgid_index = (uint8_t)gidx;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return fail("modify QP to RTR (peer GID routable? static neighbour set?)");
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return fail("modify QP to RTS");

	char hex[33];
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", gid.raw[i]);
	snprintf(mine, sizeof mine, "%04x:%06x:%06x:%s:%016" PRIx64 ":%08x:%08x", 0u, qp->qp_num, psn,
		 hex, (uint64_t)(uintptr_t)buf, mr->rkey, len);
	if (io_full(fd, mine, RW_MSG_MR, 1))
		return fail("sending our address message");

	char tok[RW_TOKEN_LEN] = { 0 };
	if (io_full(fd, tok, sizeof tok, 0))
		return fail("peer closed before rw-done");
	tok[sizeof tok - 1] = 0;
	uint32_t bad_w = 0, bad_r = 0, first_w = UINT32_MAX, first_r = UINT32_MAX;
	for (uint32_t i = 0; i < len; i++) {
		if (buf[len + i] != rw_write_byte(i) && bad_w++ == 0)
			first_w = i;
		if (buf[i] != rw_read_byte(i) && bad_r++ == 0)
			first_r = i;
	}
	struct ibv_qp_init_attr qi;
	memset(&a, 0, sizeof a);
	int qerr = ibv_query_qp(qp, &a, IBV_QP_STATE, &qi);
	int ok = !strcmp(tok, "rw-done") && bad_w == 0 && bad_r == 0 && !qerr && a.qp_state == IBV_QPS_RTS;
	char reply[RW_TOKEN_LEN] = { 0 };
	snprintf(reply, sizeof reply, "%s", ok ? "rw-ok" : "rw-bad");
	(void)io_full(fd, reply, sizeof reply, 1);
	close(fd);
	printf("RDMA-RW %s len=%u peer_says=%s written_bad=%u (first at %d) read_region_changed=%u (first at %d) qp_state=%d\n",
	       ok ? "PASS" : "FAIL", len, tok, bad_w, first_w == UINT32_MAX ? -1 : (int)first_w, bad_r,
	       first_r == UINT32_MAX ? -1 : (int)first_r, qerr ? -1 : (int)a.qp_state);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return ok ? 0 : 1;
}
