// SPDX-License-Identifier: GPL-2.0
/* mnic.ko: the Ethernet netdev mnicN of the NIC's port (issue 16 item 2;
 * docs/kernel-driver.md "Ethernet netdev").
 *
 * RoCE in ib_core needs a netdev: the RoCE GID table follows its IPv4
 * and IPv6 addresses (roce_gid_mgmt, through ib_device_set_netdev in
 * mnic_ib.c), and a user modify_qp to RTR resolves the destination MAC
 * through the route and neighbour of the sgid's netdev.  So every bound
 * function is also an Ethernet device:
 *   - MAC: the init segment's (the port's station address);
 *   - MTU: 1500, up to the port's largest frame less the Ethernet header
 *     (QUERY_DEVICE max_frame);
 *   - carrier: on while the firmware is READY, serves its command queue
 *     and its heartbeat moves (a firmware whose loop stopped forwards
 *     nothing), off otherwise: a poll every MNIC_LINK_POLL_MS;
 *   - the GID table is pushed to the firmware (SET_GID): every RoCEv2
 *     GID, IPv4 (::ffff:a.b.c.d, IBA A17.8) or IPv6 (link-local, as the
 *     core's default GID at index 0, and global), at its index, so that
 *     a QP sends from the address its sgid_index names and the engine
 *     accepts RoCE packets to each (IPv6 ones also counted in gid_ipv6);
 *   - the data path: the firmware's host Ethernet queues (mnic/queues.h,
 *     CREATE_ETHQ at open, DESTROY_ETHQ at stop): every frame of the port
 *     that is not RoCEv2 for the NIC.  TX copies the skb into its slot's
 *     buffer, writes the producer and rings the NIC; the NIC completes
 *     descriptors in place (owner byte last) and raises MSI-X vector 1,
 *     whose handler schedules NAPI: TX reaped, RX frames copied into
 *     fresh skbs, their buffers posted again.  Every value the NIC writes
 *     (owner, length, status) is checked before use.
 *
 * Lifetime: registered before the RDMA device (which binds it) and
 * unregistered after it, so ib_core never sees a freed netdev.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>

#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "mnic.h"
#include "mnic/queues.h"

#define MNIC_LINK_POLL_MS  500u
/* The heartbeat moves on every doorbell poll, at least every 10 ms: still
 * for this long, the firmware's loop is not running. */
#define MNIC_LINK_STALL_MS 3000u
#define MNIC_GID_CMD_TIMEOUT_MS 2000u

struct mnic_netdev {
	struct net_device *ndev;
	struct mnic_kdev *d;
	struct delayed_work link_work;
	u64 hb_last;                       /* the heartbeat link_poll saw last */
	unsigned long hb_moved;            /* jiffies when it moved */
	/* the GID entries pushed to the firmware (a bit per index) */
	unsigned long gid_pushed;
	struct mutex gid_lock;

	/* The host Ethernet queues (while the interface is up, on a NIC
	 * with a host-memory aperture): one vmalloc area registered in one
	 * MTT, [TX ring | RX ring | TX dbrec, RX dbrec | TX buffers | RX
	 * buffers]; slot i of a ring always uses buffer i. */
	bool q_live;
	void *area;
	size_t area_len;
	u32 mtt;
	u32 stride;                        /* bytes per buffer */
	struct mnic_eth_desc *tx_ring, *rx_ring;
	struct mnic_dbrec *tx_rec, *rx_rec;
	u8 *tx_buf, *rx_buf;
	u32 tx_pi;                         /* posted (xmit) */
	u32 tx_clean;                      /* completions reaped (NAPI) */
	u32 rx_ci;                         /* completions taken (NAPI) */
	struct napi_struct napi;
	int irq;                           /* MSI-X vector 1, or -1: polled */
	struct timer_list poll_timer;      /* polled: NAPI every jiffy */
	char irq_name[32];
	/* statistics (ndo_get_stats64); NAPI and xmit write, one writer each */
	u64 rx_packets, rx_bytes, rx_errors, rx_dropped;
	u64 tx_packets, tx_bytes, tx_errors, tx_dropped;
};

#define MNIC_ETHQ_SIZE   64u               /* descriptors per ring */
#define MNIC_ETHQ_RINGS  (2u * MNIC_ETHQ_SIZE * MNIC_ETH_DESC_SIZE)
#define MNIC_ETHQ_BUFS   PAGE_SIZE         /* buffers start on the second page */
_Static_assert(MNIC_ETHQ_RINGS + 2 * sizeof(struct mnic_dbrec) <= PAGE_SIZE, "rings in a page");

/* READY, the command queue RUNNING and the loop alive: the port works. */
static bool fw_up(struct mnic_netdev *nd)
{
	struct mnic_kdev *d = nd->d;
	/* one 64-bit load: the firmware writes it as one */
	u64 hb = readq(&d->seg->health.heartbeat);

	if (hb != nd->hb_last) {
		nd->hb_last = hb;
		nd->hb_moved = jiffies;
	}
	return ioread32(&d->seg->state) == MNIC_STATE_READY &&
	       ioread32(&d->seg->cmdq_status) == MNIC_CMDQ_RUNNING &&
	       time_before(jiffies, nd->hb_moved + msecs_to_jiffies(MNIC_LINK_STALL_MS));
}

static void link_poll(struct work_struct *w)
{
	struct mnic_netdev *nd = container_of(to_delayed_work(w), struct mnic_netdev, link_work);
	bool up = fw_up(nd);

	if (up && !netif_carrier_ok(nd->ndev)) {
		netif_carrier_on(nd->ndev);
		mnic_count(nd->d, MNIC_KCNT_net_carrier_on);
	} else if (!up && netif_carrier_ok(nd->ndev)) {
		netif_carrier_off(nd->ndev);
		mnic_count(nd->d, MNIC_KCNT_net_carrier_off);
	}
	schedule_delayed_work(&nd->link_work, msecs_to_jiffies(MNIC_LINK_POLL_MS));
}

/* ---- the queues' MTT ----------------------------------------------------- */

static int mtt_cmd(struct mnic_kdev *d, void *in, u32 in_len, void *out, u32 out_len)
{
	return mnic_module_cmd(d, in, in_len, out, out_len, MNIC_GID_CMD_TIMEOUT_MS);
}

static int destroy_mtt(struct mnic_netdev *nd)
{
	struct mnic_cmd_handle_in in = {
		.hdr = { .opcode = MNIC_CMD_DESTROY_MTT, .ctx = MNIC_CTX_MGMT }, .handle = nd->mtt,
	};
	struct mnic_cmd_simple_out out;

	return mtt_cmd(nd->d, &in, sizeof(in), &out, sizeof(out));
}

/* CREATE_MTT over the area (IOVA = its kernel address), WRITE_MTT of its
 * pages (HPA = this host's physical address, as mnic_mem.c). */
static int make_mtt(struct mnic_netdev *nd)
{
	struct mnic_cmd_create_mtt_in cin = {
		.hdr = { .opcode = MNIC_CMD_CREATE_MTT, .ctx = MNIC_CTX_MGMT },
		.iova = (u64)(uintptr_t)nd->area, .length = nd->area_len, .page_shift = PAGE_SHIFT,
	};
	struct mnic_cmd_create_mtt_out cout;
	struct mnic_cmd_write_mtt_in *w;
	struct mnic_cmd_simple_out out;
	u32 i, n = nd->area_len >> PAGE_SHIFT;
	u64 *pages;
	int ret;

	ret = mtt_cmd(nd->d, &cin, sizeof(cin), &cout, sizeof(cout));
	if (ret)
		return ret;
	nd->mtt = cout.mtt;
	if (cout.npages != n) {
		ret = -EPROTO;
		goto err;
	}
	w = kvzalloc(sizeof(*w) + n * sizeof(u64), GFP_KERNEL);
	if (!w) {
		ret = -ENOMEM;
		goto err;
	}
	*w = (struct mnic_cmd_write_mtt_in){
		.hdr = { .opcode = MNIC_CMD_WRITE_MTT, .ctx = MNIC_CTX_MGMT },
		.mtt = nd->mtt, .first = 0, .count = n,
	};
	pages = (u64 *)(w + 1);
	for (i = 0; i < n; i++)
		pages[i] = page_to_phys(vmalloc_to_page((u8 *)nd->area + ((size_t)i << PAGE_SHIFT)));
	ret = mtt_cmd(nd->d, w, sizeof(*w) + n * sizeof(u64), &out, sizeof(out));
	kvfree(w);
	if (!ret)
		return 0;
err:
	if (destroy_mtt(nd))
		mnic_count(nd->d, MNIC_KCNT_net_queue_leaked);
	return ret;
}

static u64 iova_of(struct mnic_netdev *nd, const void *p)
{
	return (u64)(uintptr_t)p;
}

static int create_ethq(struct mnic_netdev *nd)
{
	struct mnic_cmd_create_ethq_in in = {
		.hdr = { .opcode = MNIC_CMD_CREATE_ETHQ, .ctx = MNIC_CTX_MGMT },
		.vector = MNIC_IRQ_VEC_NET, .buf_mtt = nd->mtt,
		.tx = { .ring_addr = iova_of(nd, nd->tx_ring), .dbrec_addr = iova_of(nd, nd->tx_rec),
			.size = MNIC_ETHQ_SIZE, .ring_mtt = nd->mtt, .dbrec_mtt = nd->mtt },
		.rx = { .ring_addr = iova_of(nd, nd->rx_ring), .dbrec_addr = iova_of(nd, nd->rx_rec),
			.size = MNIC_ETHQ_SIZE, .ring_mtt = nd->mtt, .dbrec_mtt = nd->mtt },
	};
	struct mnic_cmd_simple_in din = { .hdr = { .opcode = MNIC_CMD_DESTROY_ETHQ,
						   .ctx = MNIC_CTX_MGMT } };
	struct mnic_cmd_simple_out out;
	int ret = mtt_cmd(nd->d, &in, sizeof(in), &out, sizeof(out));

	/* A queue left by an earlier driver (unbound without its stop):
	 * taken back, then ours. */
	if (ret == -EBUSY && !mtt_cmd(nd->d, &din, sizeof(din), &out, sizeof(out)))
		ret = mtt_cmd(nd->d, &in, sizeof(in), &out, sizeof(out));
	return ret;
}

static int destroy_ethq(struct mnic_netdev *nd)
{
	struct mnic_cmd_simple_in in = { .hdr = { .opcode = MNIC_CMD_DESTROY_ETHQ,
						  .ctx = MNIC_CTX_MGMT } };
	struct mnic_cmd_simple_out out;

	return mtt_cmd(nd->d, &in, sizeof(in), &out, sizeof(out));
}

/* ---- data path ------------------------------------------------------------- */

/* The NIC completed descriptor index: its owner byte shows this pass. */
static bool desc_done(const struct mnic_eth_desc *ring, u32 index)
{
	return READ_ONCE(ring[index & (MNIC_ETHQ_SIZE - 1)].owner) ==
	       MNIC_CQE_OWNER(index, MNIC_ETHQ_SIZE);
}

static void tx_reap(struct mnic_netdev *nd)
{
	u32 clean = nd->tx_clean;

	while (clean != READ_ONCE(nd->tx_pi) && desc_done(nd->tx_ring, clean)) {
		/* the owner byte first, then the status it covers */
		dma_rmb();
		if (READ_ONCE(nd->tx_ring[clean & (MNIC_ETHQ_SIZE - 1)].status) != MNIC_ETH_OK) {
			nd->tx_errors++;
			mnic_count(nd->d, MNIC_KCNT_net_tx_refused);
		}
		clean++;
	}
	/* The slots are free before the queue may be woken (xmit reads
	 * tx_clean after it stopped the queue: the pair of barriers). */
	smp_store_release(&nd->tx_clean, clean);
	smp_mb();
	if (netif_queue_stopped(nd->ndev) && nd->tx_pi - clean < MNIC_ETHQ_SIZE)
		netif_wake_queue(nd->ndev);
}

static int rx_poll(struct mnic_netdev *nd, int budget)
{
	u32 ci = nd->rx_ci;
	int done = 0;

	while (done < budget && desc_done(nd->rx_ring, ci)) {
		const struct mnic_eth_desc *dsc = &nd->rx_ring[ci & (MNIC_ETHQ_SIZE - 1)];
		const u8 *buf = nd->rx_buf + (size_t)(ci & (MNIC_ETHQ_SIZE - 1)) * nd->stride;
		struct sk_buff *skb;
		u16 len;

		dma_rmb();      /* the owner byte, then the length and the frame */
		len = READ_ONCE(dsc->len);
		if (len < ETH_HLEN || len > nd->stride) {
			nd->rx_errors++;
			mnic_count(nd->d, MNIC_KCNT_net_rx_bad_len);
		} else if (!(skb = napi_alloc_skb(&nd->napi, len))) {
			nd->rx_dropped++;
			mnic_count(nd->d, MNIC_KCNT_net_rx_nomem);
		} else {
			skb_put_data(skb, buf, len);
			skb->protocol = eth_type_trans(skb, nd->ndev);
			nd->rx_packets++;
			nd->rx_bytes += len;
			napi_gro_receive(&nd->napi, skb);
		}
		ci++;
		done++;
	}
	if (done) {
		nd->rx_ci = ci;
		/* The frames are copied out before the buffers go back: the
		 * same slot, posted again a ring later (producer = consumer +
		 * ring size; the NIC re-reads it when it runs dry). */
		wmb();
		WRITE_ONCE(nd->rx_rec->index, ci + MNIC_ETHQ_SIZE);
	}
	return done;
}

static int mnic_net_poll(struct napi_struct *napi, int budget)
{
	struct mnic_netdev *nd = container_of(napi, struct mnic_netdev, napi);
	int done;

	tx_reap(nd);
	done = rx_poll(nd, budget);
	if (done < budget)
		napi_complete_done(napi, done);
	return done;
}

static irqreturn_t mnic_net_irq(int irq, void *arg)
{
	struct mnic_netdev *nd = arg;

	mnic_count(nd->d, MNIC_KCNT_net_irq);
	napi_schedule(&nd->napi);
	return IRQ_HANDLED;
}

static void mnic_net_poll_timer(struct timer_list *t)
{
	struct mnic_netdev *nd = from_timer(nd, t, poll_timer);

	/* queues_down clears q_live before del_timer_sync: no re-arm after */
	if (!READ_ONCE(nd->q_live))
		return;
	napi_schedule(&nd->napi);
	mod_timer(&nd->poll_timer, jiffies + 1);
}

/* Copy into the slot's buffer (the NIC reaches only the registered area:
 * docs/kernel-driver.md "Ethernet netdev" says why copy, not map). */
static netdev_tx_t mnic_net_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct mnic_netdev *nd = netdev_priv(ndev);
	u32 pi = nd->tx_pi, slot = pi & (MNIC_ETHQ_SIZE - 1), len = max_t(u32, skb->len, ETH_ZLEN);
	u8 *buf;

	if (!nd->q_live) {
		mnic_count(nd->d, MNIC_KCNT_net_tx_no_queue);
		goto drop;
	}
	if (skb->len > nd->stride) {
		mnic_count(nd->d, MNIC_KCNT_net_tx_bad_len);
		goto drop;
	}
	if (pi - smp_load_acquire(&nd->tx_clean) >= MNIC_ETHQ_SIZE) {
		netif_stop_queue(ndev);     /* cannot happen: stopped when it filled */
		return NETDEV_TX_BUSY;
	}
	buf = nd->tx_buf + (size_t)slot * nd->stride;
	skb_copy_bits(skb, 0, buf, skb->len);
	if (len > skb->len)         /* short frames padded to 60 bytes (IEEE 802.3 4.2.3.3) */
		memset(buf + skb->len, 0, len - skb->len);
	nd->tx_ring[slot].size = len;
	nd->tx_packets++;
	nd->tx_bytes += skb->len;
	dev_consume_skb_any(skb);
	/* The frame and its descriptor before the producer index, the
	 * index before the ring (mnic_irq_ring's wmb orders that one). */
	wmb();
	WRITE_ONCE(nd->tx_pi, pi + 1);
	WRITE_ONCE(nd->tx_rec->index, pi + 1);
	if (pi + 1 - READ_ONCE(nd->tx_clean) >= MNIC_ETHQ_SIZE) {
		netif_stop_queue(ndev);
		/* a reap between the test and the stop wakes nothing: look again */
		smp_mb();
		if (pi + 1 - READ_ONCE(nd->tx_clean) < MNIC_ETHQ_SIZE)
			netif_wake_queue(ndev);
	}
	if (!netdev_xmit_more() || netif_queue_stopped(ndev))
		mnic_irq_ring(nd->d);
	return NETDEV_TX_OK;
drop:
	nd->tx_dropped++;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/* Buffers, MTT, the queues, the vector.  A NIC without a host-memory
 * aperture reaches no host page: the interface comes up without queues
 * (every frame sent is dropped, net_tx_no_queue). */
static int queues_up(struct mnic_netdev *nd)
{
	struct mnic_kdev *d = nd->d;
	u32 i;
	int ret;

	if (!d->hostmem_size)
		return 0;
	nd->stride = ALIGN(nd->ndev->mtu + ETH_HLEN + VLAN_HLEN, 64);
	nd->area_len = MNIC_ETHQ_BUFS + PAGE_ALIGN(2 * MNIC_ETHQ_SIZE * nd->stride);
	nd->area = vzalloc(nd->area_len);
	if (!nd->area)
		return -ENOMEM;
	nd->tx_ring = nd->area;
	nd->rx_ring = nd->tx_ring + MNIC_ETHQ_SIZE;
	nd->tx_rec = (struct mnic_dbrec *)((u8 *)nd->area + MNIC_ETHQ_RINGS);
	nd->rx_rec = nd->tx_rec + 1;
	nd->tx_buf = (u8 *)nd->area + MNIC_ETHQ_BUFS;
	nd->rx_buf = nd->tx_buf + (size_t)MNIC_ETHQ_SIZE * nd->stride;
	for (i = 0; i < MNIC_ETHQ_SIZE; i++) {
		nd->tx_ring[i].addr = iova_of(nd, nd->tx_buf + (size_t)i * nd->stride);
		nd->rx_ring[i].addr = iova_of(nd, nd->rx_buf + (size_t)i * nd->stride);
		nd->rx_ring[i].size = nd->stride;
	}
	nd->rx_rec->index = MNIC_ETHQ_SIZE;      /* every RX buffer posted */
	nd->tx_pi = nd->tx_clean = nd->rx_ci = 0;
	ret = make_mtt(nd);
	if (ret)
		goto err_free;
	ret = create_ethq(nd);
	if (ret)
		goto err_mtt;
	nd->irq = mnic_irq_net_vector(d);
	if (nd->irq >= 0) {
		snprintf(nd->irq_name, sizeof(nd->irq_name), "mnic-net@%s", pci_name(d->pdev));
		ret = request_irq(nd->irq, mnic_net_irq, 0, nd->irq_name, nd);
		if (ret)
			goto err_ethq;
	}
	WRITE_ONCE(nd->q_live, true);
	napi_enable(&nd->napi);
	if (nd->irq < 0)
		mod_timer(&nd->poll_timer, jiffies + 1);
	mnic_count(d, MNIC_KCNT_net_queue_create);
	return 0;

err_ethq:
	if (destroy_ethq(nd)) {
		mnic_count(d, MNIC_KCNT_net_queue_leaked);
		nd->area = NULL;                 /* the NIC may still write it */
		return ret;
	}
err_mtt:
	if (destroy_mtt(nd)) {
		mnic_count(d, MNIC_KCNT_net_queue_leaked);
		nd->area = NULL;
		return ret;
	}
err_free:
	vfree(nd->area);
	nd->area = NULL;
	return ret;
}

/* The NIC stops writing the buffers once DESTROY_ETHQ answered; if it
 * did not answer they stay allocated (net_queue_leaked). */
static void queues_down(struct mnic_netdev *nd)
{
	if (!nd->q_live)
		return;
	WRITE_ONCE(nd->q_live, false);
	if (nd->irq < 0)
		del_timer_sync(&nd->poll_timer);
	napi_disable(&nd->napi);
	if (nd->irq >= 0)
		free_irq(nd->irq, nd);
	if (destroy_ethq(nd) || destroy_mtt(nd)) {
		mnic_count(nd->d, MNIC_KCNT_net_queue_failed);
		mnic_count(nd->d, MNIC_KCNT_net_queue_leaked);
	} else {
		vfree(nd->area);
	}
	nd->area = NULL;
}

static int mnic_net_open(struct net_device *ndev)
{
	struct mnic_netdev *nd = netdev_priv(ndev);
	int ret = queues_up(nd);

	if (ret) {
		mnic_count(nd->d, MNIC_KCNT_net_queue_failed);
		netdev_err(ndev, "host Ethernet queues not created: %d\n", ret);
		return ret;
	}
	netif_start_queue(ndev);
	return 0;
}

static int mnic_net_stop(struct net_device *ndev)
{
	struct mnic_netdev *nd = netdev_priv(ndev);

	netif_stop_queue(ndev);
	queues_down(nd);
	return 0;
}

/* The buffers are sized for the MTU when the queues are made. */
static int mnic_net_change_mtu(struct net_device *ndev, int mtu)
{
	if (netif_running(ndev))
		return -EBUSY;
	ndev->mtu = mtu;
	return 0;
}

static void mnic_net_get_stats64(struct net_device *ndev, struct rtnl_link_stats64 *s)
{
	struct mnic_netdev *nd = netdev_priv(ndev);

	s->rx_packets = READ_ONCE(nd->rx_packets);
	s->rx_bytes = READ_ONCE(nd->rx_bytes);
	s->rx_errors = READ_ONCE(nd->rx_errors);
	s->rx_dropped = READ_ONCE(nd->rx_dropped);
	s->tx_packets = READ_ONCE(nd->tx_packets);
	s->tx_bytes = READ_ONCE(nd->tx_bytes);
	s->tx_errors = READ_ONCE(nd->tx_errors);
	s->tx_dropped = READ_ONCE(nd->tx_dropped);
}

static const struct net_device_ops mnic_netdev_ops = {
	.ndo_open = mnic_net_open,
	.ndo_stop = mnic_net_stop,
	.ndo_start_xmit = mnic_net_xmit,
	.ndo_change_mtu = mnic_net_change_mtu,
	.ndo_get_stats64 = mnic_net_get_stats64,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

int mnic_netdev_register(struct mnic_kdev *d)
{
	struct net_device *ndev;
	struct mnic_netdev *nd;
	u8 mac[ETH_ALEN];
	int ret;

	ndev = alloc_etherdev(sizeof(*nd));
	if (!ndev)
		return -ENOMEM;
	nd = netdev_priv(ndev);
	nd->ndev = ndev;
	nd->d = d;
	nd->hb_moved = jiffies;
	mutex_init(&nd->gid_lock);
	INIT_DELAYED_WORK(&nd->link_work, link_poll);
	netif_napi_add(ndev, &nd->napi, mnic_net_poll);
	timer_setup(&nd->poll_timer, mnic_net_poll_timer, 0);
	nd->irq = -1;
	SET_NETDEV_DEV(ndev, &d->pdev->dev);
	strscpy(ndev->name, "mnic%d", sizeof(ndev->name));
	memcpy_fromio(mac, d->seg->mac, sizeof(mac));
	if (!is_valid_ether_addr(mac)) {
		dev_err(&d->pdev->dev, "the init segment's MAC %pM is not a station address\n", mac);
		ret = -EINVAL;
		goto err_free;
	}
	eth_hw_addr_set(ndev, mac);
	ndev->netdev_ops = &mnic_netdev_ops;
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = d->max_frame > ETH_HLEN + ETH_MIN_MTU ? d->max_frame - ETH_HLEN : ETH_DATA_LEN;
	ndev->mtu = min_t(unsigned int, ETH_DATA_LEN, ndev->max_mtu);
	netif_carrier_off(ndev);
	ret = register_netdev(ndev);
	if (ret) {
		dev_err(&d->pdev->dev, "register_netdev failed: %d\n", ret);
		goto err_free;
	}
	d->net = nd;
	link_poll(&nd->link_work.work);
	dev_info(&d->pdev->dev, "Ethernet %s: mac %pM, mtu %u (max %u)\n", ndev->name, mac,
		 ndev->mtu, ndev->max_mtu);
	return 0;

err_free:
	netif_napi_del(&nd->napi);
	free_netdev(ndev);
	return ret;
}

/* After the RDMA device is gone (ib_core dropped its reference). */
void mnic_netdev_unregister(struct mnic_kdev *d)
{
	struct mnic_netdev *nd = d->net;
	struct net_device *ndev;

	if (!nd)
		return;
	ndev = nd->ndev;
	cancel_delayed_work_sync(&nd->link_work);
	unregister_netdev(ndev);       /* stops it: queues_down */
	netif_napi_del(&nd->napi);
	d->net = NULL;
	free_netdev(ndev);
}

struct net_device *mnic_netdev_of(struct mnic_kdev *d)
{
	return d->net ? d->net->ndev : NULL;
}

/* ---- the RoCEv2 GID table (ib_device_ops add_gid/del_gid) --------------- */

/* gid NULL: clear the entry. */
static int push_gid(struct mnic_kdev *d, u32 index, const union ib_gid *gid)
{
	struct mnic_cmd_set_gid_in in = {
		.hdr = { .opcode = MNIC_CMD_SET_GID, .ctx = MNIC_CTX_MGMT },
		.index = index, .flags = gid ? MNIC_GID_F_VALID : 0,
	};
	struct mnic_cmd_simple_out out;

	BUILD_BUG_ON(sizeof(in.gid) != sizeof(gid->raw));
	if (gid)
		memcpy(in.gid, gid->raw, sizeof(in.gid));
	return mnic_module_cmd(d, &in, sizeof(in), &out, sizeof(out), MNIC_GID_CMD_TIMEOUT_MS);
}

/* The core calls these under its table lock, in process context. */
int mnic_netdev_add_gid(struct mnic_kdev *d, const struct ib_gid_attr *attr)
{
	struct mnic_netdev *nd = d->net;
	int ret;

	/* The port is RoCEv2 only (mnic_ib.c core_cap_flags): a GID of
	 * another type cannot be ours. */
	if (!nd || attr->index >= MNIC_GID_TBL_LEN || attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP) {
		mnic_count(d, MNIC_KCNT_gid_failed);
		return -EINVAL;
	}
	mutex_lock(&nd->gid_lock);
	ret = push_gid(d, attr->index, &attr->gid);
	if (ret) {
		mnic_count(d, MNIC_KCNT_gid_failed);
		dev_warn_ratelimited(&d->pdev->dev, "SET_GID %u (%pI6) failed: %d\n", attr->index,
				     attr->gid.raw, ret);
	} else {
		__set_bit(attr->index, &nd->gid_pushed);
		mnic_count(d, MNIC_KCNT_gid_add);
		if (!ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw))
			mnic_count(d, MNIC_KCNT_gid_ipv6);
	}
	mutex_unlock(&nd->gid_lock);
	return ret;
}

/* Never fails: the core cannot undo a delete.  An entry the firmware did
 * not clear is counted (gid_failed). */
int mnic_netdev_del_gid(struct mnic_kdev *d, const struct ib_gid_attr *attr)
{
	struct mnic_netdev *nd = d->net;

	if (!nd || attr->index >= MNIC_GID_TBL_LEN)
		return 0;
	mutex_lock(&nd->gid_lock);
	if (__test_and_clear_bit(attr->index, &nd->gid_pushed)) {
		if (push_gid(d, attr->index, NULL))
			mnic_count(d, MNIC_KCNT_gid_failed);
		else
			mnic_count(d, MNIC_KCNT_gid_del);
	}
	mutex_unlock(&nd->gid_lock);
	return 0;
}
