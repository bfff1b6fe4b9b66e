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
 *   - the GID table is pushed to the firmware (SET_GID): an IPv4 GID
 *     (::ffff:a.b.c.d, IBA A17.8) at its index, so that the engine sends
 *     from the address the host's GID names; IPv6 GIDs stay in the host
 *     (the engine is IPv4 only), counted in gid_ipv6.
 *
 * Lifetime: registered before the RDMA device (which binds it) and
 * unregistered after it, so ib_core never sees a freed netdev.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>

#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "mnic.h"

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
};

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

static int mnic_net_open(struct net_device *ndev)
{
	netif_start_queue(ndev);
	return 0;
}

static int mnic_net_stop(struct net_device *ndev)
{
	netif_stop_queue(ndev);
	return 0;
}

/* No host Ethernet queue in the firmware yet: every frame is dropped and
 * counted (net_tx_no_queue). */
static netdev_tx_t mnic_net_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct mnic_netdev *nd = netdev_priv(ndev);

	mnic_count(nd->d, MNIC_KCNT_net_tx_no_queue);
	ndev->stats.tx_dropped++;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops mnic_netdev_ops = {
	.ndo_open = mnic_net_open,
	.ndo_stop = mnic_net_stop,
	.ndo_start_xmit = mnic_net_xmit,
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
	unregister_netdev(ndev);
	d->net = NULL;
	free_netdev(ndev);
}

struct net_device *mnic_netdev_of(struct mnic_kdev *d)
{
	return d->net ? d->net->ndev : NULL;
}

/* ---- the RoCEv2 GID table (ib_device_ops add_gid/del_gid) --------------- */

static int push_gid(struct mnic_kdev *d, u32 index, u32 flags, u32 ipv4)
{
	struct mnic_cmd_set_gid_in in = {
		.hdr = { .opcode = MNIC_CMD_SET_GID, .ctx = MNIC_CTX_MGMT },
		.index = index, .flags = flags, .ipv4 = ipv4,
	};
	struct mnic_cmd_simple_out out;

	return mnic_module_cmd(d, &in, sizeof(in), &out, sizeof(out), MNIC_GID_CMD_TIMEOUT_MS);
}

/* A RoCEv2 GID is an IPv6 address; an IPv4 one is IPv4-mapped (IBA
 * A17.8): 0 and its address, or -1. */
static int gid_ipv4(const struct ib_gid_attr *attr, u32 *ipv4)
{
	const struct in6_addr *a = (const struct in6_addr *)attr->gid.raw;

	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP || !ipv6_addr_v4mapped(a))
		return -1;
	*ipv4 = be32_to_cpu(a->s6_addr32[3]);
	return 0;
}

/* The core calls these under its table lock, in process context. */
int mnic_netdev_add_gid(struct mnic_kdev *d, const struct ib_gid_attr *attr)
{
	struct mnic_netdev *nd = d->net;
	u32 ipv4;
	int ret;

	if (!nd || attr->index >= MNIC_GID_TBL_LEN) {
		mnic_count(d, MNIC_KCNT_gid_failed);
		return -EINVAL;
	}
	if (gid_ipv4(attr, &ipv4)) {
		mnic_count(d, MNIC_KCNT_gid_ipv6);
		return 0;
	}
	mutex_lock(&nd->gid_lock);
	ret = push_gid(d, attr->index, MNIC_GID_F_VALID, ipv4);
	if (ret) {
		mnic_count(d, MNIC_KCNT_gid_failed);
		dev_warn_ratelimited(&d->pdev->dev, "SET_GID %u (%pI4h) failed: %d\n", attr->index,
				     &ipv4, ret);
	} else {
		__set_bit(attr->index, &nd->gid_pushed);
		mnic_count(d, MNIC_KCNT_gid_add);
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
		if (push_gid(d, attr->index, 0, 0))
			mnic_count(d, MNIC_KCNT_gid_failed);
		else
			mnic_count(d, MNIC_KCNT_gid_del);
	}
	mutex_unlock(&nd->gid_lock);
	return 0;
}
