/* Host Ethernet queues (mnic/queues.h "Host Ethernet queues"): the port's
 * frames that are not RoCEv2 for the NIC, between the wire and the host's
 * netdev (ARP, ICMP, TCP: what the host's IP stack needs, RoCE address
 * resolution included).  One TX and one RX ring per engine (the port's).
 *
 *   rocev2_rx -> ethq_rx:  RoCEv2 for us (our MAC, IPv4, our address, UDP
 *                          4791) stays in the engine (recv.c); any other
 *                          frame to our MAC, broadcast or multicast is
 *                          written into the next RX buffer the host posted
 *   doorbell  -> ethq_tx:  descriptors the host posted are sent, in order,
 *                          from rocev2_poll (bounded, as the requesters)
 * Completions are written in place (len, status, barrier, owner byte), and
 * the queues' vector is raised once per batch (rocev2_poll), not per frame.
 *
 * Everything read from host memory is hostile: producer indices are
 * clamped to the ring (wq_bad_producer), lengths bounded with >= before a
 * byte moves (a TX frame 14 .. HAL_ETH_MAX_FRAME, an RX frame no longer
 * than its buffer), and every buffer goes through the queue's MTT. */
#include <stddef.h>
#include <string.h>

#include "hal/eth.h"
#include "hal/mmio.h"
#include "pool.h"
#include "wire.h"

#define ETHQ_LEN_OFF offsetof(struct mnic_eth_desc, len)
#define ETHQ_OWNER_OFF offsetof(struct mnic_eth_desc, owner)

static uint64_t desc_slot(const struct rocev2_wq *wq, uint32_t index)
{
	return wq->q.ring_addr + (uint64_t)(index & (wq->q.size - 1u)) * MNIC_ETH_DESC_SIZE;
}

int rocev2_create_ethq(struct rocev2 *e, const struct rocev2_ethq_attr *a)
{
	struct rocev2_ethq *q = &e->ethq;
	const struct rocev2_mtt *m;
	int rc;

	if (q->live)
		return -HAL_EBUSY;
	if (a->vector < MNIC_EQ_VECTOR_MIN || a->vector > MNIC_EQ_VECTOR_MAX)
		return -HAL_EINVAL;
	if ((rc = rocev2_queue_attr_check(e, &a->tx, MNIC_ETH_DESC_SIZE, 1)) != 0 ||
	    (rc = rocev2_queue_attr_check(e, &a->rx, MNIC_ETH_DESC_SIZE, 1)) != 0)
		return rc;
	/* The buffers: through an MTT of the creator's, fully written (every
	 * descriptor's buffer is translated by it, frame by frame). */
	m = a->buf_mtt == ROCEV2_NO_MTT ? NULL : rocev2_mtt_get(e, a->buf_mtt);
	if (!m)
		return -HAL_EINVAL;
	if ((rc = rocev2_mtt_check(e, a->buf_mtt, m->iova, 1, 1)) != 0)
		return rc;
	memset(q, 0, sizeof(*q));
	q->tx.q = a->tx;
	q->rx.q = a->rx;
	q->buf_mtt = a->buf_mtt;
	q->vector = a->vector;
	rocev2_queue_mtt_ref(e, &q->tx.q, 1);
	rocev2_queue_mtt_ref(e, &q->rx.q, 1);
	rocev2_mtt_ref(e, q->buf_mtt, 1);
	q->live = 1;
	return 0;
}

int rocev2_destroy_ethq(struct rocev2 *e)
{
	struct rocev2_ethq *q = &e->ethq;

	if (!q->live)
		return -HAL_EINVAL;
	rocev2_queue_mtt_ref(e, &q->tx.q, -1);
	rocev2_queue_mtt_ref(e, &q->rx.q, -1);
	rocev2_mtt_ref(e, q->buf_mtt, -1);
	q->live = 0;
	return 0;
}

/* Write back len and status, then (after a write barrier: the host reads
 * the rest once the owner byte flips) the owner byte. */
static int desc_complete(struct rocev2 *e, struct rocev2_wq *wq, uint16_t len, uint8_t status)
{
	uint64_t slot = desc_slot(wq, wq->ci);
	uint8_t wb[ETHQ_OWNER_OFF - ETHQ_LEN_OFF] = { (uint8_t)len, (uint8_t)(len >> 8), status };
	uint8_t owner = MNIC_CQE_OWNER(wq->ci, wq->q.size);

	if (rocev2_host_write(e, wq->q.ring_mtt, slot + ETHQ_LEN_OFF, wb, sizeof(wb)) < 0)
		return -HAL_EFAULT;
	hal_wmb();
	if (rocev2_host_write(e, wq->q.ring_mtt, slot + ETHQ_OWNER_OFF, &owner, 1) < 0)
		return -HAL_EFAULT;
	wq->ci++;
	e->ethq.raise = 1;
	return 0;
}

/* RoCEv2 for this NIC: the engine's (recv.c checks the rest and counts).
 * Over IPv4 or IPv6 (no extension headers), to our MAC, UDP 4791, to one
 * of the port's addresses. */
static int frame_is_roce(const struct rocev2 *e, const uint8_t *f, size_t len)
{
	const struct eth_hdr *eth = (const struct eth_hdr *)f;

	if (len < ETH_HLEN || memcmp(eth_dst(eth), e->env.mac, 6) != 0)
		return 0;
	if (eth_type(eth) == ETHERTYPE_IPV6) {
		const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)(f + ETH_HLEN);
		const struct udp_hdr *udp = (const struct udp_hdr *)(f + ETH_HLEN + IPV6_HLEN);

		return len >= ETH_HLEN + IPV6_HLEN + UDP_HLEN && ipv6_version(ip6) == 6 &&
		       ipv6_next(ip6) == IPV6_NEXT_UDP && udp_dport(udp) == ROCEV2_UDP_DPORT &&
		       rocev2_gid_ours6(e, ipv6_daddr(ip6));
	}
	if (eth_type(eth) == ETHERTYPE_IPV4) {
		const struct ipv4_hdr *ip = (const struct ipv4_hdr *)(f + ETH_HLEN);
		const struct udp_hdr *udp = (const struct udp_hdr *)(f + ETH_HLEN + IPV4_HLEN);

		return len >= ETH_HLEN + IPV4_HLEN + UDP_HLEN && ipv4_ver_ihl(ip) == IPV4_VER_IHL &&
		       ipv4_proto(ip) == IPV4_PROTO_UDP && udp_dport(udp) == ROCEV2_UDP_DPORT &&
		       rocev2_gid_ours4(e, ipv4_daddr(ip));
	}
	return 0;
}

int rocev2_ethq_rx(struct rocev2 *e, const uint8_t *frame, size_t len)
{
	struct rocev2_wq *wq = &e->ethq.rx;
	struct mnic_eth_desc d;

	if (!e->ethq.live || len < ETH_HLEN || frame_is_roce(e, frame, len))
		return 0;
	/* Ours, broadcast or multicast (the I/G bit, IEEE 802 5.2.2.1); a
	 * unicast frame for another station (the switch floods them) is not. */
	if (!(frame[0] & 1u) && memcmp(frame, e->env.mac, 6) != 0) {
		e->cnt.rx_ethq_not_ours++;
		return 1;
	}
	if (wq->pi == wq->ci && rocev2_wq_refresh(e, wq) == 0) {
		e->cnt.rx_ethq_full++;
		return 1;
	}
	if (rocev2_host_read(e, wq->q.ring_mtt, desc_slot(wq, wq->ci), &d, sizeof(d)) < 0) {
		e->cnt.ethq_dma_errors++;
		return 1;
	}
	if (len > d.size) {
		e->cnt.rx_ethq_too_long++;
		return 1;
	}
	if (rocev2_host_write(e, e->ethq.buf_mtt, d.addr, frame, len) < 0) {
		e->cnt.ethq_dma_errors++;
		return 1;
	}
	if (desc_complete(e, wq, (uint16_t)len, MNIC_ETH_OK) < 0) {
		e->cnt.ethq_dma_errors++;
		return 1;
	}
	e->cnt.rx_ethq_frames++;
	return 1;
}

/* Send up to budget posted frames; returns how many descriptors moved. */
unsigned rocev2_ethq_tx(struct rocev2 *e, unsigned budget)
{
	static uint8_t frame[HAL_ETH_MAX_FRAME];
	struct rocev2_wq *wq = &e->ethq.tx;
	unsigned done = 0;

	while (e->ethq.live && done < budget && wq->pi != wq->ci) {
		struct mnic_eth_desc d;
		uint8_t status = MNIC_ETH_OK;
		int rc;

		if (rocev2_host_read(e, wq->q.ring_mtt, desc_slot(wq, wq->ci), &d, sizeof(d)) < 0) {
			e->cnt.ethq_dma_errors++;
			break;
		}
		if (d.size < ETH_HLEN || d.size > HAL_ETH_MAX_FRAME) {
			e->cnt.tx_ethq_bad_len++;
			status = MNIC_ETH_BAD_LEN;
		} else if (rocev2_host_read(e, e->ethq.buf_mtt, d.addr, frame, d.size) < 0) {
			e->cnt.ethq_dma_errors++;
			status = MNIC_ETH_DMA_ERR;
		} else {
			rc = e->env.tx(e->env.ctx, frame, d.size);
			if (rc == -HAL_EAGAIN) {
				e->cnt.tx_ethq_busy++;   /* the wire's ring is full: next pass */
				break;
			}
			if (rc < 0)
				e->cnt.tx_errors++;
			else
				e->cnt.tx_ethq_frames++;
		}
		if (desc_complete(e, wq, status == MNIC_ETH_OK ? d.size : 0, status) < 0) {
			e->cnt.ethq_dma_errors++;
			break;
		}
		done++;
	}
	return done;
}

int rocev2_ethq_tx_doorbell(struct rocev2 *e)
{
	uint32_t before = e->ethq.tx.pi;

	if (!e->ethq.live)
		return 0;
	(void)rocev2_wq_refresh(e, &e->ethq.tx);
	return e->ethq.tx.pi != before;
}

int rocev2_ethq_pending(const struct rocev2 *e)
{
	return e->ethq.live && (e->ethq.tx.pi != e->ethq.tx.ci || e->ethq.raise);
}

void rocev2_ethq_raise(struct rocev2 *e)
{
	if (!e->ethq.raise)
		return;
	e->ethq.raise = 0;
	if (e->env.raise)
		e->env.raise(e->env.ctx, e->ethq.vector);
}
