/* Ethernet port over libvdeplug: one datagram on the data socket is one
 * Ethernet frame without FCS, the same framing QEMU's -netdev vde uses, so a
 * POSIX NIC and a QEMU NIC on one switch see each other's frames unchanged.
 *
 * Impairment sits on both sides of the socket, independently seeded:
 *
 *   firmware --tx--> [tx_impair] --vde_send--> switch
 *   firmware <--rx-- rxq <-- [rx_impair] <--vde_recv-- switch
 *
 * Counters are the firmware's view: tx_* count frames accepted by ->tx
 * (before impairment), rx_* count frames handed out by ->rx (after it); the
 * impairment's own counters are in tx_impair.stats and rx_impair.stats.
 *
 * A frame held for reordering is released by the next frame in its direction
 * or, failing that, when the burst ends: on receive once the socket is empty,
 * on transmit when the platform goes idle (hal_platform_wait() calls
 * eth_vde_flush()).  So frames swap within bursts, and a held frame is
 * delayed, never lost.
 *
 * Backpressure: ->tx returns -HAL_EAGAIN while our socket's send buffer is
 * filling.  The switch (vdeplug4 netnode) forwards with non-blocking writes
 * and drops a frame when the receiving port's socket is full, so a receiver
 * that does not drain its port loses frames, as on a wire.
 *
 * No MAC filter: like the boards' virtio-net without VIRTIO_NET_F_CTRL_RX,
 * the port hands up whatever the switch delivers (floods included) and the
 * firmware's receive path checks the destination.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <libvdeplug.h>

#include "hal/errno.h"
#include "pcap.h"
#include "posix.h"

#define ETH_HEADER_LEN 14u
#define RX_BUDGET 64u  /* wire frames read per ->rx call at most */
#define ETHERTYPE_LOCAL_EXPERIMENTAL 0x88b5u   /* IEEE Std 802, for private use */

static void rxq_push(void *ctx, const void *frame, size_t len)
{
	struct eth_vde *v = ctx;
	struct eth_vde_frame *slot;

	/* ->rx only feeds the impairment while the queue is empty and one wire
	 * frame yields at most ETH_VDE_RXQ_SLOTS frames, so this cannot fill;
	 * counted rather than trusted. */
	if (v->rxq_count == ETH_VDE_RXQ_SLOTS) {
		v->eth.stats.rx_dropped++;
		return;
	}
	slot = &v->rxq[(v->rxq_head + v->rxq_count) % ETH_VDE_RXQ_SLOTS];
	memcpy(slot->data, frame, len);
	slot->len = len;
	v->rxq_count++;
}

static void wire_send(void *ctx, const void *frame, size_t len)
{
	struct eth_vde *v = ctx;

	if (vde_send(v->conn, frame, len, 0) == (ssize_t)len)
		return;
	v->tx_send_errors++;
	if (!v->send_errno_logged) {
		int e = errno;

		v->send_errno_logged = 1;
		fprintf(stderr, "posix: %s: vde_send failed: %s%s (counted in tx_send_errors, "
			"logged once)\n", v->eth.name, strerror(e),
			e == ECONNREFUSED || e == ENOTCONN ? "; has the switch exited?" : "");
	}
}

/* Capture timestamps: wall clock, as pcap readers expect. */
static uint64_t eth_vde_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int vde_tx(struct hal_eth *eth, const void *frame, size_t len)
{
	struct eth_vde *v = eth->priv;
	struct pollfd pfd = { .fd = v->fd, .events = POLLOUT };

	if (len > HAL_ETH_MAX_FRAME) {
		eth->stats.tx_too_long++;
		return -HAL_E2BIG;
	}
	if (len < ETH_HEADER_LEN)
		return -HAL_EINVAL;
	/* Backpressure is checked before the impairment draws, so a frame the
	 * caller retries consumes its random decisions once: the decision
	 * sequence stays a function of the frames sent, not of timing.  Linux
	 * reports a unix datagram socket writable while at most a quarter of
	 * its send buffer is in use, which leaves room for the up to four sends
	 * one call can make (a duplicated frame and a duplicated held one).  An
	 * error condition falls through to vde_send(), which reports it. */
	if (poll(&pfd, 1, 0) == 0) {
		eth->stats.tx_busy++;
		v->tx_blocked = 1;   /* hal_platform_wait() also wakes on POLLOUT */
		return -HAL_EAGAIN;
	}
	v->tx_blocked = 0;
	if (len < HAL_ETH_MIN_FRAME) {
		memcpy(v->tx_pad, frame, len);
		memset(v->tx_pad + len, 0, HAL_ETH_MIN_FRAME - len);
		frame = v->tx_pad;
		len = HAL_ETH_MIN_FRAME;
	}
	eth->stats.tx_frames++;
	eth->stats.tx_bytes += len;
	/* The capture shows the NIC's own view: frames as the firmware sent
	 * them (before TX impairment) and as it received them (after RX
	 * impairment). */
	if (v->pcap)
		pcap_write(v->pcap, frame, len, eth_vde_clock_ns());
	impair_apply(&v->tx_impair, frame, len, wire_send, v);
	return 0;
}

static int vde_rx(struct hal_eth *eth, void *buf, size_t cap)
{
	struct eth_vde *v = eth->priv;
	struct eth_vde_frame *slot;

	/* Bounded so that a flood the RX impairment drops cannot hold the event
	 * loop here; the data fd stays readable, so the loop comes back. */
	for (unsigned budget = RX_BUDGET; v->rxq_count == 0 && budget; budget--) {
		ssize_t n = vde_recv(v->conn, v->wire, sizeof(v->wire), 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* Socket drained: the burst is over, so a held frame has no
			 * later frame to swap with and is released now. */
			impair_flush(&v->rx_impair, rxq_push, v);
			break;
		}
		if ((size_t)n > HAL_ETH_MAX_FRAME) {
			eth->stats.rx_too_long++;
			continue;
		}
		if ((size_t)n < ETH_HEADER_LEN) {
			eth->stats.rx_dropped++;
			continue;
		}
		impair_apply(&v->rx_impair, v->wire, (size_t)n, rxq_push, v);
	}
	if (v->rxq_count == 0)
		return 0;

	slot = &v->rxq[v->rxq_head];
	v->rxq_head = (v->rxq_head + 1) % ETH_VDE_RXQ_SLOTS;
	v->rxq_count--;
	if (slot->len > cap) {
		eth->stats.rx_too_long++;
		return -HAL_E2BIG;
	}
	memcpy(buf, slot->data, slot->len);
	if (v->pcap)
		pcap_write(v->pcap, slot->data, slot->len, eth_vde_clock_ns());
	eth->stats.rx_frames++;
	eth->stats.rx_bytes += slot->len;
	return (int)slot->len;
}

/* Transmits complete inside vde_send() and there is no interrupt to
 * acknowledge: the data fd is level-triggered. */
static void vde_poll(struct hal_eth *eth)
{
	(void)eth;
}

int eth_vde_rx_buffered(const struct eth_vde *v)
{
	return v->rxq_count > 0 || impair_holding(&v->rx_impair);
}

static int vde_rx_pending(struct hal_eth *eth)
{
	struct eth_vde *v = eth->priv;
	struct pollfd pfd = { .fd = v->fd, .events = POLLIN };

	return eth_vde_rx_buffered(v) || poll(&pfd, 1, 0) > 0;
}

static const struct hal_eth_ops vde_ops = {
	.tx = vde_tx,
	.rx = vde_rx,
	.poll = vde_poll,
	.rx_pending = vde_rx_pending,
};

/* A learning switch finds a MAC's port only from frames that MAC sends.  A
 * port that takes over a MAC still attached elsewhere (a NIC restarted or
 * migrated while its predecessor's port is open) would not receive frames
 * addressed to it until it first transmitted.  So a port announces itself
 * on open, like QEMU's announce-self after migration, but with a frame from
 * our MAC to our MAC: the switch learns the new port and delivers the frame
 * nowhere, since it never sends a frame back out of its ingress port.  Not
 * counted: the firmware did not send it. */
static void announce(struct eth_vde *v)
{
	uint8_t f[HAL_ETH_MIN_FRAME] = { 0 };

	memcpy(f, v->eth.mac, HAL_ETH_ALEN);
	memcpy(f + HAL_ETH_ALEN, v->eth.mac, HAL_ETH_ALEN);
	f[12] = ETHERTYPE_LOCAL_EXPERIMENTAL >> 8;
	f[13] = ETHERTYPE_LOCAL_EXPERIMENTAL & 0xff;
	memcpy(f + 14, "mnic announce", 13);
	wire_send(v, f, sizeof(f));
}

int eth_vde_open(struct eth_vde *v, const char *url, const char *name,
		 const uint8_t mac[HAL_ETH_ALEN], const struct impair_cfg *imp)
{
	/* vde_open() takes a mutable string: the module parsers split
	 * "path[options]" in place. */
	char urlbuf[PATH_MAX];
	struct impair_cfg none = { 0 }, rx_cfg;
	int flags;

	memset(v, 0, sizeof(*v));
	v->fd = -1;
	if (strlen(url) >= sizeof(urlbuf)) {
		fprintf(stderr, "posix: %s: switch path is longer than %d bytes\n", name, PATH_MAX - 1);
		return -HAL_EINVAL;
	}
	/* A switch that was just started may have bound its control socket
	 * but not yet be listening (ECONNREFUSED, seen under load): retry for
	 * up to a second before giving up.  vde_open() parses the URL in
	 * place, so each attempt gets a fresh copy. */
	for (int tries = 0; tries < 20; tries++) {
		strcpy(urlbuf, url);
		v->conn = vde_open(urlbuf, "mnic", NULL);
		if (v->conn || errno != ECONNREFUSED)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 50000000 }, NULL);
	}
	if (!v->conn) {
		fprintf(stderr, "posix: %s: cannot join the switch at %s: %s "
			"(is `vde_plug null:// switch://%s` running?)\n",
			name, url, strerror(errno), url);
		return -HAL_ENODEV;
	}
	v->fd = vde_datafd(v->conn);
	/* libvdeplug_vde ignores the flags argument of vde_recv()/vde_send()
	 * (it passes 0 to recv/send), so non-blocking I/O has to be a property
	 * of the descriptor itself. */
	flags = fcntl(v->fd, F_GETFL);
	if (flags < 0 || fcntl(v->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		fprintf(stderr, "posix: %s: cannot make the switch socket non-blocking: %s\n",
			name, strerror(errno));
		vde_close(v->conn);
		v->conn = NULL;
		v->fd = -1;
		return -HAL_EIO;
	}

	if (!imp)
		imp = &none;
	rx_cfg = *imp;
	rx_cfg.seed = imp->seed + 1;
	impair_init(&v->tx_impair, imp);
	impair_init(&v->rx_impair, &rx_cfg);

	v->eth.ops = &vde_ops;
	v->eth.name = name;
	memcpy(v->eth.mac, mac, HAL_ETH_ALEN);
	v->eth.priv = v;
	announce(v);
	return 0;
}

void eth_vde_flush(struct eth_vde *v)
{
	if (v->conn)
		impair_flush(&v->tx_impair, wire_send, v);
}

void eth_vde_close(struct eth_vde *v)
{
	if (!v->conn)
		return;
	eth_vde_flush(v);
	vde_close(v->conn);
	v->conn = NULL;
	v->fd = -1;
}

/* ---- sanitizer builds ----------------------------------------------------
 * libvdeplug 4.0.1 (Debian 12) loads its modules with
 * dlopen(RTLD_NOW | RTLD_DEEPBIND), which AddressSanitizer refuses with a
 * fatal error (google/sanitizers#611).  In ASan builds only, this definition
 * interposes on dlopen() for the whole process and drops RTLD_DEEPBIND; the
 * modules then look symbols up in the global scope first, which could only
 * matter for a name the firmware shared with a module (it shares none). */
#if defined(__SANITIZE_ADDRESS__)
#define ETH_VDE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ETH_VDE_ASAN 1
#endif
#endif

#ifdef ETH_VDE_ASAN
#include <dlfcn.h>

void *dlopen(const char *file, int mode)
{
	void *(*next)(const char *, int);
	void *sym = dlsym(RTLD_NEXT, "dlopen");

	if (!sym)
		return NULL;
	memcpy(&next, &sym, sizeof(next));   /* object to function pointer, as POSIX allows */
	return next(file, mode & ~RTLD_DEEPBIND);
}
#endif
