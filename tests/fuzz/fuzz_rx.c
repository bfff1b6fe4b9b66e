/* libFuzzer: the receive path (rocev2_parse, rocev2_rx) with hostile frames.
 *
 * The first input byte picks a mode; the rest is the material:
 *
 *   0  raw: the bytes are the whole Ethernet frame
 *   1  wrapped: a valid Ethernet/IPv4/UDP 4791 header to our MAC and
 *      address is put in front (lengths and IP checksum right), so the
 *      bytes are BTH .. ICRC and meet the transport checks
 *   2  wrapped, and DestQP forced to our QP and the ICRC recomputed, so
 *      whatever passes the header checks reaches the QP and its stage
 *   3  a sequence: [len][bytes] chunks, each sent as in mode 2, with the
 *      scheduler and the timers run between them (multi-packet messages,
 *      retransmit and RNR timers)
 *
 * The engine is the real rocev2_init() with a dummy env, re-initialised for
 * every input so that a crash reproduces from its input alone.  Two builds:
 *
 *   default, with tests/fuzz/fuzz_rx_doubles.c: recv.c, net.c, icrc.c,
 *     opcode.c and rocev2.c only; one QP poked into the table, the stages
 *     are doubles that read every byte parse says is theirs
 *   -DFUZZ_RX_FULL, with all of rocev2/ (no doubles): a real PD/CQ/MR/QP
 *     made through the verbs calls, receive WQEs posted and four send WQEs
 *     sent, so requests reach the real responder and responses the real
 *     completer; and the host Ethernet queues (ethq.c) with four RX
 *     buffers of 4 KiB behind an MTT, so whatever is not RoCE for us
 *     meets the host ring (full after four frames, too small past 4 KiB)
 *
 * Invariants checked beyond the sanitizers: every frame rocev2_rx takes is
 * either counted by exactly one discard counter or delivered to exactly
 * one stage; a packet rocev2_parse accepts lies inside the frame and its
 * lengths add up.
 */
#include <stdint.h>
#include <string.h>

#include "rocev2/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OUR_IP   0x0a000002u
#define PEER_IP  0x0a000001u
#define PEER_QPN 0x11u
static const uint8_t our_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t peer_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };

static struct rocev2 eng;
static struct hal_dma dma;
static uint8_t host[128 * 1024];
static uint64_t now_ns;
static uint32_t our_qpn;

static int dummy_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	(void)frame;
	if (len > ROCEV2_TX_MAX)
		__builtin_trap();
	return 0;
}

static uint64_t dummy_now(void *ctx)
{
	(void)ctx;
	return now_ns;
}

#ifndef FUZZ_RX_FULL
/* fuzz_rx_doubles.c: one QP in the table, doubles for the stages. */
uint32_t fuzz_rx_setup_qp(struct rocev2 *e, uint32_t peer_ip, uint32_t peer_qpn);
#else
/* Host memory layout (offsets in the DMA window). */
#define CQ_RING   0x0000u   /* 64 CQEs */
#define CQ_DBREC  0x0800u
#define SQ_DBREC  0x0808u
#define RQ_DBREC  0x0810u
#define SQ_RING   0x1000u   /* 8 WQEs */
#define RQ_RING   0x2000u   /* 8 WQEs */
#define DATA      0x4000u   /* 48 KiB, one MR with every access */
#define DATA_LEN  0xc000u
#define ETH_TX    0x10000u  /* host Ethernet queues: 4 descriptors each */
#define ETH_RX    0x10100u
#define ETH_TXREC 0x10200u
#define ETH_RXREC 0x10208u
#define ETH_BUF   0x18000u  /* 4 RX buffers of 4 KiB, behind an MTT */
#define ETH_IOVA  0x40000000u

static void put_dbrec(uint64_t addr, uint32_t index)
{
	struct mnic_dbrec r = { index, 0 };

	memcpy(host + addr, &r, sizeof(r));
}

static uint32_t fuzz_rx_setup_qp(struct rocev2 *e, uint32_t peer_ip, uint32_t peer_qpn)
{
	struct rocev2_queue_attr cq = { CQ_RING, CQ_DBREC, 64 };
	struct rocev2_qp_init_attr qa;
	struct rocev2_qp_attr at;
	uint32_t pd, cqh, lkey, rkey, qpn, i;
	struct mnic_recv_wqe rw;
	struct mnic_send_wqe sw;
	static const uint8_t wr[4] = { MNIC_WR_SEND, MNIC_WR_RDMA_READ,
				       MNIC_WR_ATOMIC_FETCH_AND_ADD, MNIC_WR_RDMA_WRITE_WITH_IMM };

	if (rocev2_alloc_pd(e, &pd) || rocev2_create_cq(e, &cq, &cqh) ||
	    rocev2_reg_mr(e, pd, DATA, DATA_LEN, 0xf, &lkey, &rkey))
		__builtin_trap();
	memset(&qa, 0, sizeof(qa));
	qa.pd = pd;
	qa.send_cq = qa.recv_cq = cqh;
	qa.srq = ROCEV2_NO_SRQ;
	qa.sq = (struct rocev2_queue_attr){ SQ_RING, SQ_DBREC, 8 };
	qa.rq = (struct rocev2_queue_attr){ RQ_RING, RQ_DBREC, 8 };
	qa.max_send_sge = qa.max_recv_sge = 2;
	if (rocev2_create_qp(e, &qa, &qpn))
		__builtin_trap();

	memset(&at, 0, sizeof(at));
	at.qp_state = ROCEV2_QPS_INIT;
	at.qp_access_flags = 0xf;
	if (rocev2_modify_qp(e, qpn, &at, ROCEV2_QP_STATE | ROCEV2_QP_PKEY_INDEX |
			     ROCEV2_QP_PORT | ROCEV2_QP_ACCESS_FLAGS))
		__builtin_trap();
	at.qp_state = ROCEV2_QPS_RTR;
	memcpy(at.av.dmac, peer_mac, 6);
	rocev2_av_set_ipv4(&at.av, peer_ip);
	at.av.ttl = 64;
	at.path_mtu = ROCEV2_MTU_256;           /* small MTU: multi-packet messages */
	at.dest_qp_num = peer_qpn;
	at.rq_psn = 0;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 1;
	if (rocev2_modify_qp(e, qpn, &at, ROCEV2_QP_STATE | ROCEV2_QP_AV | ROCEV2_QP_PATH_MTU |
			     ROCEV2_QP_DEST_QPN | ROCEV2_QP_RQ_PSN |
			     ROCEV2_QP_MAX_DEST_RD_ATOMIC | ROCEV2_QP_MIN_RNR_TIMER))
		__builtin_trap();
	at.qp_state = ROCEV2_QPS_RTS;
	at.sq_psn = 0;
	at.timeout = 10;
	at.retry_cnt = 3;
	at.rnr_retry = 3;
	at.max_rd_atomic = 4;
	if (rocev2_modify_qp(e, qpn, &at, ROCEV2_QP_STATE | ROCEV2_QP_SQ_PSN | ROCEV2_QP_TIMEOUT |
			     ROCEV2_QP_RETRY_CNT | ROCEV2_QP_RNR_RETRY |
			     ROCEV2_QP_MAX_QP_RD_ATOMIC))
		__builtin_trap();

	/* Eight receive WQEs of 2 KiB each in the first half of the MR. */
	for (i = 0; i < 8; i++) {
		memset(&rw, 0, sizeof(rw));
		rw.wr_id = 100 + i;
		rw.num_sge = 1;
		rw.sge[0] = (struct mnic_sge){ DATA + i * 2048u, 2048, lkey };
		memcpy(host + RQ_RING + i * MNIC_WQE_SIZE, &rw, sizeof(rw));
	}
	put_dbrec(RQ_DBREC, 8);
	rocev2_rq_doorbell(e, qpn);
	/* Four requests outstanding (PSNs 0 ..), so responses have something
	 * to acknowledge: SEND 300 B, READ 600 B, FETCH_ADD, WRITE_IMM 100 B. */
	for (i = 0; i < 4; i++) {
		memset(&sw, 0, sizeof(sw));
		sw.wr_id = 200 + i;
		sw.opcode = wr[i];
		sw.send_flags = MNIC_SEND_SIGNALED;
		sw.num_sge = 1;
		sw.sge[0] = (struct mnic_sge){ DATA + 0x8000u + i * 1024u,
					       i == 1 ? 600u : i == 2 ? 8u : 300u, lkey };
		sw.remote_addr = 0x100000u + i * 4096u;
		sw.rkey = 0x1234;
		sw.compare_add = 1;
		sw.imm_data = 0xabcd;
		memcpy(host + SQ_RING + i * MNIC_WQE_SIZE, &sw, sizeof(sw));
	}
	put_dbrec(SQ_DBREC, 4);
	rocev2_sq_doorbell(e, qpn);
	rocev2_poll(e, 64);
	{
		struct rocev2_mtt_attr ma = { ETH_IOVA, 4u * 4096u, 12 };
		struct rocev2_ethq_attr ea = {
			.tx = { ETH_TX, ETH_TXREC, 4, 0, 0 }, .rx = { ETH_RX, ETH_RXREC, 4, 0, 0 },
			.vector = 1,
		};
		uint64_t pages[4];
		uint32_t np;

		for (i = 0; i < 4; i++) {
			struct mnic_eth_desc d = { .addr = ETH_IOVA + i * 4096u, .size = 4096 };

			pages[i] = ETH_BUF + i * 4096u;
			memcpy(host + ETH_RX + i * sizeof(d), &d, sizeof(d));
		}
		put_dbrec(ETH_RXREC, 4);
		if (rocev2_create_mtt(e, &ma, &ea.buf_mtt, &np) ||
		    rocev2_write_mtt(e, ea.buf_mtt, 0, pages, 4) || rocev2_create_ethq(e, &ea))
			__builtin_trap();
	}
	return qpn;
}
#endif

static void engine_init(void)
{
	struct rocev2_env env;

	memset(host, 0, sizeof(host));
	hal_dma_window_init(&dma, host, sizeof(host));
	now_ns = 1000000;
	memset(&env, 0, sizeof(env));
	env.tx = dummy_tx;
	env.now_ns = dummy_now;
	env.dma = &dma;
	memcpy(env.mac, our_mac, 6);
	env.ipv4 = OUR_IP;
	if (rocev2_init(&eng, &env))
		__builtin_trap();
	/* an IPv6 GID too (fd00::2), so that IPv6 frames reach the BTH checks */
	{
		static const uint8_t gid6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };

		if (rocev2_set_gid(&eng, 2, gid6))
			__builtin_trap();
	}
	our_qpn = fuzz_rx_setup_qp(&eng, PEER_IP, PEER_QPN);
}

static uint64_t rx_outcomes(const struct rocev2_counters *c)
{
	return c->rx_not_roce + c->rx_short + c->rx_bad_ip + c->rx_bad_dst + c->rx_bad_udp +
	       c->rx_bad_icrc + c->rx_bad_tver + c->rx_bad_opcode + c->rx_bad_pkey +
	       c->rx_bad_pad + c->rx_no_qp + c->rx_stale_qp + c->rx_bad_state + c->rx_bad_src +
	       c->rx_req_packets + c->rx_resp_packets +
	       /* CNPs (DCQCN, cc.c): delivered, malformed, for no QP */
	       c->cnp_received + c->cnp_malformed + c->cnp_no_qp +
	       /* taken by the host Ethernet queue (ethq.c), each once */
	       c->rx_ethq_frames + c->rx_ethq_full + c->rx_ethq_too_long + c->rx_ethq_not_ours +
	       c->ethq_dma_errors;
}

/* What rocev2_parse claims about an accepted packet must hold. */
static void check_parse(const uint8_t *f, size_t len)
{
	struct rocev2_pkt pkt;
	uint64_t before = rx_outcomes(&eng.cnt);
	size_t hdr, end;

	if (rocev2_parse(&eng, f, len, &pkt) < 0) {
		if (rx_outcomes(&eng.cnt) != before + 1)
			__builtin_trap();       /* a refusal is counted exactly once */
		return;
	}
	if (rx_outcomes(&eng.cnt) != before)
		__builtin_trap();
	hdr = pkt.info->hdr_len;
	end = (size_t)(pkt.payload - f) + pkt.paylen + bth_pad(pkt.bth) + ICRC_LEN;
	if (pkt.frame != f || pkt.len > len || end != pkt.len ||
	    (const uint8_t *)pkt.bth != f + ROCEV2_HDR_OFFSET ||
	    pkt.payload != f + ROCEV2_HDR_OFFSET + hdr || !(pkt.info->mask & OPM_VALID) ||
	    pkt.opcode != bth_opcode(pkt.bth) || pkt.psn > BTH_PSN_MASK ||
	    (pkt.paylen && !(pkt.info->mask & OPM_PAYLOAD)))
		__builtin_trap();
}

static void deliver(const uint8_t *f, size_t len)
{
	uint64_t frames = eng.cnt.rx_frames, before = rx_outcomes(&eng.cnt);

	check_parse(f, len);
	before = rx_outcomes(&eng.cnt);
	rocev2_rx(&eng, f, len);
	if (eng.cnt.rx_frames != frames + 1 || rx_outcomes(&eng.cnt) != before + 1)
		__builtin_trap();
}

/* Ethernet/IPv4/UDP in front of n bytes of BTH onwards, as the peer sends. */
static size_t wrap(uint8_t *f, const uint8_t *roce, size_t n, int fix_qp_icrc)
{
	uint8_t *ip = f + ETH_HLEN, *udp = ip + IPV4_HLEN;
	uint32_t sum = 0;
	unsigned i;

	memcpy(f, our_mac, 6);
	memcpy(f + 6, peer_mac, 6);
	put_be16(f + 12, ETHERTYPE_IPV4);
	memset(ip, 0, IPV4_HLEN);
	ip[0] = IPV4_VER_IHL;
	put_be16(ip + 2, (uint16_t)(IPV4_HLEN + UDP_HLEN + n));
	put_be16(ip + 6, IPV4_FLAG_DF);
	ip[8] = 64;
	ip[9] = IPV4_PROTO_UDP;
	put_be32(ip + 12, PEER_IP);
	put_be32(ip + 16, OUR_IP);
	for (i = 0; i < IPV4_HLEN; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	put_be16(ip + 10, (uint16_t)~sum);
	put_be16(udp, rocev2_udp_sport(PEER_QPN));
	put_be16(udp + 2, ROCEV2_UDP_DPORT);
	put_be16(udp + 4, (uint16_t)(UDP_HLEN + n));
	put_be16(udp + 6, 0);
	memcpy(udp + UDP_HLEN, roce, n);
	if (fix_qp_icrc && n >= BTH_LEN + ICRC_LEN) {
		put_be24(udp + UDP_HLEN + 5, our_qpn);
		put_le32(ip + IPV4_HLEN + UDP_HLEN + n - ICRC_LEN,
			 rocev2_icrc(ip, IPV4_HLEN + UDP_HLEN + n - ICRC_LEN));
	}
	return ROCEV2_HDR_OFFSET + n;
}

#define MAX_ROCE 1500u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[ROCEV2_HDR_OFFSET + MAX_ROCE];
	uint8_t mode;

	if (size < 1)
		return 0;
	mode = data[0] & 3u;
	data++;
	size--;
	engine_init();
	switch (mode) {
	case 0:
		deliver(data, size);
		break;
	case 1:
	case 2:
		if (size > MAX_ROCE)
			size = MAX_ROCE;
		deliver(frame, wrap(frame, data, size, mode == 2));
		break;
	default:
		while (size > 0) {
			size_t n = data[0];

			data++;
			size--;
			if (n > size)
				n = size;
			deliver(frame, wrap(frame, data, n, 1));
			data += n;
			size -= n;
			/* Let requesters and read replies run, and time pass
			 * (by the chunk length in milliseconds: up to 255 ms,
			 * past retransmit and RNR timeouts). */
			rocev2_poll(&eng, 16);
			now_ns += (uint64_t)(n + 1) * 1000000u;
			rocev2_run_timers(&eng, now_ns);
			rocev2_poll(&eng, 16);
		}
		break;
	}
	return 0;
}
