/* Host Ethernet queues (rocev2/ethq.c; mnic/queues.h "Host Ethernet
 * queues"): RX dispatch (RoCEv2 for us stays in the engine, everything
 * else for our MAC, broadcast or multicast goes to the host ring), full
 * ring, buffers too small, owner bits over two passes, one raise per
 * batch; TX of posted frames, bad lengths, buffers outside the MTT, a
 * full wire ring; hostile queue descriptors and producer indices.  The
 * engine runs on a fake host window; the host side is plain memory. */
#include "cmocka_main.h"

#include <string.h>

#include "internal.h"
#include "silent_env.h"
#include "wire.h"

#define HOST_SIZE  (256u << 10)
#define TX_RING    0x01000u
#define RX_RING    0x02000u
#define TX_DBREC   0x00100u
#define RX_DBREC   0x00108u
#define TX_SIZE    8u
#define RX_SIZE    4u
#define BUF_HPA    0x20000u          /* the buffer MTT's pages */
#define BUF_IOVA   0x7f0000000000ull
#define BUF_LEN    (128u << 10)
#define BUF_STRIDE 9216u
#define VECTOR     1u
#define MY_IP      0x0a000701u

static const uint8_t my_mac[6] = { 0x52, 0x54, 0x00, 0x00, 0x07, 0x01 };
static uint8_t host[HOST_SIZE];
static struct hal_dma dma;
static struct rocev2 eng;
static struct rocev2 *const e = &eng;
static uint32_t mtt;
static uint8_t sent[4][HAL_ETH_MAX_FRAME];
static size_t sent_len[4];
static unsigned n_sent;
static int tx_full;                  /* the wire's ring is full */

static int cap_tx(void *ctx, const void *frame, size_t len)
{
	(void)ctx;
	if (tx_full)
		return -HAL_EAGAIN;
	if (n_sent < 4) {
		memcpy(sent[n_sent], frame, len);
		sent_len[n_sent] = len;
	}
	n_sent++;
	return 0;
}


static struct mnic_eth_desc *desc(uint64_t ring, uint32_t size, uint32_t index)
{
	return (struct mnic_eth_desc *)(host + ring) + (index & (size - 1u));
}

static struct mnic_dbrec *rec(uint64_t addr)
{
	return (struct mnic_dbrec *)(host + addr);
}

/* Buffer i's IOVA, and where the host sees it (the MTT is contiguous). */
static uint64_t buf_iova(unsigned i)
{
	return BUF_IOVA + (uint64_t)i * BUF_STRIDE;
}

static uint8_t *buf_host(unsigned i)
{
	return host + BUF_HPA + (size_t)i * BUF_STRIDE;
}

static struct rocev2_ethq_attr attr(void)
{
	struct rocev2_ethq_attr a = {
		.tx = { .ring_addr = TX_RING, .dbrec_addr = TX_DBREC, .size = TX_SIZE },
		.rx = { .ring_addr = RX_RING, .dbrec_addr = RX_DBREC, .size = RX_SIZE },
		.buf_mtt = mtt, .vector = VECTOR,
	};
	return a;
}

static int setup(void **state)
{
	struct rocev2_env env = silent_env(&dma);
	struct rocev2_mtt_attr ma = { .iova = BUF_IOVA, .length = BUF_LEN, .page_shift = 12 };
	uint64_t pages[BUF_LEN >> 12];
	uint32_t npages, i;

	(void)state;
	env.tx = cap_tx;
	env.raise = count_raise;
	env.ipv4 = MY_IP;
	memcpy(env.mac, my_mac, 6);
	memset(host, 0, sizeof(host));
	hal_dma_window_init(&dma, host, sizeof(host));
	raised = last_vector = n_sent = 0;
	tx_full = 0;
	assert_int_equal(rocev2_init(e, &env), 0);
	assert_int_equal(rocev2_create_mtt(e, &ma, &mtt, &npages), 0);
	assert_int_equal(npages, BUF_LEN >> 12);
	for (i = 0; i < npages; i++)
		pages[i] = BUF_HPA + (uint64_t)i * 4096u;
	assert_int_equal(rocev2_write_mtt(e, mtt, 0, pages, npages), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return 0;
}

/* Post RX buffer i at the ring's producer index. */
static void post_rx(uint32_t *pi, unsigned i, uint16_t size)
{
	struct mnic_eth_desc *d = desc(RX_RING, RX_SIZE, *pi);

	d->addr = buf_iova(i);
	d->size = size;
	rec(RX_DBREC)->index = ++*pi;
}

static void post_tx(uint32_t *pi, uint64_t addr, uint16_t size)
{
	struct mnic_eth_desc *d = desc(TX_RING, TX_SIZE, *pi);

	d->addr = addr;
	d->size = size;
	rec(TX_DBREC)->index = ++*pi;
}

/* A frame: dst, our MAC as source, ethertype, then payload bytes. */
static size_t frame(uint8_t *f, const uint8_t dst[6], uint16_t type, size_t len)
{
	size_t i;

	memcpy(f, dst, 6);
	memcpy(f + 6, "\x52\x54\x00\x00\x07\x09", 6);
	f[12] = (uint8_t)(type >> 8);
	f[13] = (uint8_t)type;
	for (i = 14; i < len; i++)
		f[i] = (uint8_t)(i * 7u + 3u);
	return len;
}

/* An IPv4/UDP packet to daddr:dport (a RoCE frame when it is ours:4791). */
static size_t udp_frame(uint8_t *f, uint32_t daddr, uint16_t dport, size_t len)
{
	uint8_t *ip = f + ETH_HLEN;

	frame(f, my_mac, ETHERTYPE_IPV4, len);
	memset(ip, 0, IPV4_HLEN + UDP_HLEN);
	ip[0] = IPV4_VER_IHL;
	ip[2] = (uint8_t)((len - ETH_HLEN) >> 8);
	ip[3] = (uint8_t)(len - ETH_HLEN);
	ip[8] = 64;
	ip[9] = IPV4_PROTO_UDP;
	put_be32(ip + 16, daddr);
	put_be16(ip + IPV4_HLEN + 2, dport);
	return len;
}

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t mcast[6] = { 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t other[6] = { 0x52, 0x54, 0x00, 0x00, 0x07, 0x02 };

static void test_netdev_ethq_create_hostile(void **state)
{
	struct rocev2_ethq_attr a;
	struct rocev2_mtt_attr ma = { .iova = 0x1000000, .length = 8192, .page_shift = 12 };
	uint32_t unwritten, np;

	(void)state;
	a = attr(); a.vector = 0;
	assert_int_equal(rocev2_create_ethq(e, &a), -HAL_EINVAL);
	a = attr(); a.vector = MNIC_EQ_VECTOR_MAX + 1u;
	assert_int_equal(rocev2_create_ethq(e, &a), -HAL_EINVAL);
	a = attr(); a.tx.size = 3;
	assert_int_equal(rocev2_create_ethq(e, &a), -HAL_EINVAL);
	a = attr(); a.rx.size = 0;
	assert_int_equal(rocev2_create_ethq(e, &a), -HAL_EINVAL);
	a = attr(); a.rx.ring_addr = HOST_SIZE - 16u;         /* the ring past the window */
	assert_int_equal(rocev2_create_ethq(e, &a), -HAL_EFAULT);
	a = attr(); a.tx.dbrec_addr = TX_DBREC + 4u;          /* misaligned record */
	assert_int_equal(rocev2_create_ethq(e, &a), -HAL_EINVAL);
	a = attr(); a.buf_mtt = ROCEV2_NO_MTT;                /* buffers need an MTT */
	assert_int_equal(rocev2_create_ethq(e, &a), -HAL_EINVAL);
	a = attr(); a.buf_mtt = mtt + (1u << ROCEV2_HANDLE_IDX_BITS);   /* stale generation */
	assert_int_equal(rocev2_create_ethq(e, &a), -HAL_EINVAL);
	assert_int_equal(rocev2_create_mtt(e, &ma, &unwritten, &np), 0);
	a = attr(); a.buf_mtt = unwritten;
	assert_int_equal(rocev2_create_ethq(e, &a), -HAL_EAGAIN);
	assert_false(e->ethq.live);
	a = attr();
	assert_int_equal(rocev2_create_ethq(e, &a), 0);
	assert_int_equal(rocev2_create_ethq(e, &a), -HAL_EBUSY);   /* one per port */
	assert_int_equal(rocev2_destroy_mtt(e, mtt), -HAL_EBUSY);  /* in use */
	assert_int_equal(rocev2_destroy_ethq(e), 0);
	assert_int_equal(rocev2_destroy_ethq(e), -HAL_EINVAL);
	assert_int_equal(rocev2_destroy_mtt(e, mtt), 0);
}

static void test_netdev_ethq_rx_dispatch(void **state)
{
	struct rocev2_ethq_attr a = attr();
	uint8_t f[HAL_ETH_MAX_FRAME];
	uint32_t pi = 0, i;
	uint64_t not_roce;
	size_t n;

	(void)state;
	/* No host queue: a non-RoCE frame is the engine's to count. */
	n = frame(f, bcast, 0x0806, 60);
	not_roce = e->cnt.rx_not_roce;
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.rx_not_roce, not_roce + 1u);
	assert_int_equal(rocev2_create_ethq(e, &a), 0);
	/* Nothing posted yet: dropped, counted. */
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.rx_ethq_full, 1);
	for (i = 0; i < RX_SIZE; i++)
		post_rx(&pi, i, BUF_STRIDE);
	/* ARP broadcast: to the host, bytes, length, status, owner of pass 1. */
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.rx_ethq_frames, 1);
	assert_memory_equal(buf_host(0), f, n);
	assert_int_equal(desc(RX_RING, RX_SIZE, 0)->len, n);
	assert_int_equal(desc(RX_RING, RX_SIZE, 0)->status, MNIC_ETH_OK);
	assert_int_equal(desc(RX_RING, RX_SIZE, 0)->owner, 1);
	assert_int_equal(desc(RX_RING, RX_SIZE, 1)->owner, 0);
	/* The raise comes once per batch, from rocev2_poll. */
	assert_int_equal(raised, 0);
	assert_true(rocev2_has_work(e));
	/* Multicast (IPv6 all-nodes), and a TCP-ish IPv4 frame to our MAC. */
	n = frame(f, mcast, 0x86dd, 90);
	rocev2_rx(e, f, n);
	n = frame(f, my_mac, ETHERTYPE_IPV4, 74);
	rocev2_rx(e, f, n);
	/* UDP 4791 to another address of ours' subnet: not RoCE for us. */
	n = udp_frame(f, MY_IP + 1u, ROCEV2_UDP_DPORT, 80);
	rocev2_rx(e, f, n);
	assert_memory_equal(buf_host(3), f, n);
	assert_int_equal(e->cnt.rx_ethq_frames, 4);
	rocev2_poll(e, 64);
	assert_int_equal(raised, 1);
	assert_int_equal(last_vector, VECTOR);
	assert_false(rocev2_has_work(e));
	/* RoCE for us stays in the engine (recv.c refuses this one: short). */
	n = udp_frame(f, MY_IP, ROCEV2_UDP_DPORT, 60);
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.rx_ethq_frames, 4);
	assert_int_equal(e->cnt.rx_short + e->cnt.rx_bad_ip + e->cnt.rx_bad_udp, 1);
	/* Unicast to another station (the switch floods): dropped. */
	n = frame(f, other, ETHERTYPE_IPV4, 60);
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.rx_ethq_not_ours, 1);
	/* Ring full (4 posted, 4 used): dropped, counted, nothing written. */
	n = frame(f, bcast, 0x0806, 60);
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.rx_ethq_full, 2);
	/* The host consumed them and posts again: owner of pass 2 is 0; a
	 * buffer smaller than the frame keeps its descriptor for the next. */
	post_rx(&pi, 0, 64);
	post_rx(&pi, 1, BUF_STRIDE);
	desc(RX_RING, RX_SIZE, 4)->len = 0xffff;
	n = frame(f, bcast, 0x0806, 100);
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.rx_ethq_too_long, 1);
	assert_int_equal(desc(RX_RING, RX_SIZE, 4)->owner, 1);   /* still pass 1: not done */
	n = frame(f, bcast, 0x0806, 64);
	rocev2_rx(e, f, n);
	assert_int_equal(desc(RX_RING, RX_SIZE, 4)->owner, 0);
	assert_int_equal(desc(RX_RING, RX_SIZE, 4)->len, 64);
	/* Shorter than an Ethernet header: the engine's (rx_short). */
	rocev2_rx(e, f, 13);
	assert_int_equal(e->cnt.rx_ethq_frames, 5);
	/* A hostile producer far ahead: clamped to the ring when the NIC
	 * reads it (the posted descriptor first, then a re-read). */
	rec(RX_DBREC)->index = pi + 1000u;
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.wq_bad_producer, 0);
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.wq_bad_producer, 1);
	assert_int_equal(e->cnt.rx_ethq_frames, 7);
	/* Gone: frames are the engine's again. */
	assert_int_equal(rocev2_destroy_ethq(e), 0);
	not_roce = e->cnt.rx_not_roce;
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.rx_not_roce, not_roce + 1u);
	assert_int_equal(e->cnt.rx_ethq_frames, 7);
}

/* An IPv6 packet to daddr (16 bytes), next header nh, UDP port dport. */
static size_t udp6_frame(uint8_t *f, const uint8_t *daddr, uint8_t nh, uint16_t dport, size_t len)
{
	uint8_t *ip = f + ETH_HLEN;

	frame(f, my_mac, ETHERTYPE_IPV6, len);
	memset(ip, 0, IPV6_HLEN + UDP_HLEN);
	ip[0] = 0x60;
	put_be16(ip + 4, (uint16_t)(len - ETH_HLEN - IPV6_HLEN));
	ip[6] = nh;
	ip[7] = 64;
	memcpy(ip + 24, daddr, 16);
	put_be16(ip + IPV6_HLEN + 2, dport);
	return len;
}

/* RoCEv2 over IPv6 to one of the port's GIDs stays in the engine; UDP
 * 4791 to another IPv6 address, other IPv6 to ours (TCP, ICMPv6) and
 * neighbour discovery's multicast go to the host (issue 19). */
static void test_ipv6_ethq_dispatch(void **state)
{
	static const uint8_t ours[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9 };
	static const uint8_t theirs[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8 };
	struct rocev2_ethq_attr a = attr();
	uint8_t f[HAL_ETH_MAX_FRAME];
	uint32_t pi = 0, i;
	size_t n;

	(void)state;
	assert_int_equal(rocev2_set_gid(e, 2, ours), 0);
	assert_int_equal(rocev2_create_ethq(e, &a), 0);
	for (i = 0; i < RX_SIZE; i++)
		post_rx(&pi, i, BUF_STRIDE);
	n = udp6_frame(f, ours, IPV6_NEXT_UDP, ROCEV2_UDP_DPORT, 100);
	rocev2_rx(e, f, n);                     /* the engine's: its ICRC is wrong */
	assert_int_equal(e->cnt.rx_ethq_frames, 0);
	assert_int_equal(e->cnt.rx_bad_icrc + e->cnt.rx_short + e->cnt.rx_bad_udp + e->cnt.rx_bad_opcode, 1);
	n = udp6_frame(f, theirs, IPV6_NEXT_UDP, ROCEV2_UDP_DPORT, 100);
	rocev2_rx(e, f, n);
	n = udp6_frame(f, ours, 6, ROCEV2_UDP_DPORT, 100);      /* TCP */
	rocev2_rx(e, f, n);
	n = frame(f, mcast, ETHERTYPE_IPV6, 86);                /* ND to the all-nodes group */
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.rx_ethq_frames, 3);
	/* the GID gone: RoCE to it is the host's too */
	assert_int_equal(rocev2_set_gid(e, 2, NULL), 0);
	n = udp6_frame(f, ours, IPV6_NEXT_UDP, ROCEV2_UDP_DPORT, 100);
	rocev2_rx(e, f, n);
	assert_int_equal(e->cnt.rx_ethq_frames, 4);
}

static void test_netdev_ethq_tx(void **state)
{
	struct rocev2_ethq_attr a = attr();
	uint32_t pi = 0;
	uint8_t *b;

	(void)state;
	assert_int_equal(rocev2_create_ethq(e, &a), 0);
	frame(buf_host(0), bcast, 0x0806, 42);
	frame(buf_host(1), other, ETHERTYPE_IPV4, HAL_ETH_MAX_FRAME);
	post_tx(&pi, buf_iova(0), 42);                     /* good */
	post_tx(&pi, buf_iova(0), 13);                     /* shorter than a header */
	post_tx(&pi, buf_iova(1), HAL_ETH_MAX_FRAME + 1u); /* past the max frame */
	post_tx(&pi, BUF_IOVA + BUF_LEN - 10u, 60);        /* runs past the MTT */
	post_tx(&pi, buf_iova(1), HAL_ETH_MAX_FRAME);      /* the largest */
	/* Nothing moves before the doorbell (db_seq: every queue re-read). */
	assert_false(rocev2_has_work(e));
	assert_int_equal(rocev2_doorbells_changed(e), 1);
	assert_true(rocev2_has_work(e));
	rocev2_poll(e, 64);
	assert_int_equal(n_sent, 2);
	assert_int_equal(sent_len[0], 42);
	assert_memory_equal(sent[0], buf_host(0), 42);
	assert_int_equal(sent_len[1], HAL_ETH_MAX_FRAME);
	assert_memory_equal(sent[1], buf_host(1), HAL_ETH_MAX_FRAME);
	assert_int_equal(e->cnt.tx_ethq_frames, 2);
	assert_int_equal(e->cnt.tx_ethq_bad_len, 2);
	assert_int_equal(e->cnt.ethq_dma_errors, 1);
	assert_int_equal(desc(TX_RING, TX_SIZE, 0)->status, MNIC_ETH_OK);
	assert_int_equal(desc(TX_RING, TX_SIZE, 0)->len, 42);
	assert_int_equal(desc(TX_RING, TX_SIZE, 1)->status, MNIC_ETH_BAD_LEN);
	assert_int_equal(desc(TX_RING, TX_SIZE, 2)->status, MNIC_ETH_BAD_LEN);
	assert_int_equal(desc(TX_RING, TX_SIZE, 3)->status, MNIC_ETH_DMA_ERR);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(desc(TX_RING, TX_SIZE, i)->owner, 1);
	assert_int_equal(raised, 1);
	/* The wire's ring full: the descriptor waits, then goes. */
	tx_full = 1;
	post_tx(&pi, buf_iova(0), 60);
	rocev2_doorbells_changed(e);
	rocev2_poll(e, 64);
	assert_int_equal(e->cnt.tx_ethq_busy, 1);
	assert_int_equal(desc(TX_RING, TX_SIZE, 5)->owner, 0);
	assert_true(rocev2_has_work(e));
	tx_full = 0;
	rocev2_poll(e, 64);
	assert_int_equal(n_sent, 3);
	assert_int_equal(desc(TX_RING, TX_SIZE, 5)->owner, 1);
	/* Second pass through the ring: owner 0; the budget bounds a pass. */
	for (unsigned i = 0; i < TX_SIZE; i++)
		post_tx(&pi, buf_iova(0), 60);
	rocev2_doorbells_changed(e);
	rocev2_poll(e, 3);
	assert_int_equal(n_sent, 6);
	rocev2_poll(e, 64);
	assert_int_equal(n_sent, 3 + TX_SIZE);
	b = (uint8_t *)desc(TX_RING, TX_SIZE, pi - 1u);
	assert_int_equal(((struct mnic_eth_desc *)b)->owner, 0);
	/* A producer far ahead: clamped, one ring's worth at most. */
	rec(TX_DBREC)->index = pi + 1000u;
	rocev2_doorbells_changed(e);
	assert_int_equal(e->cnt.wq_bad_producer, 1);
	rocev2_poll(e, 64);
	assert_int_equal(n_sent, 3 + 2u * TX_SIZE);
	assert_false(rocev2_has_work(e));
	assert_int_equal(rocev2_destroy_ethq(e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_netdev_ethq_create_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_netdev_ethq_rx_dispatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_netdev_ethq_tx, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_ethq_dispatch, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
