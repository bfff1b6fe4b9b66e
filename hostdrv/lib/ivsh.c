/* The BAR backend as a peer of a QEMU NIC's ivshmem-doorbell
 * (docs/host-interface.md "Doorbells and interrupts"; the protocol:
 * qemu-board/ivshmem_server.c).  A QEMU NIC's BAR file has no ".db"
 * channel; its mnic-ivshmem-server listens at "<BAR file>.ivsh" instead,
 * and this process joins it like the NIC's and a host VM's QEMU do:
 *
 *   the server gives us an ID, the shared memory (which we have mapped
 *   already: closed), every peer's eventfds and our own.  We ring the NIC
 *   by writing its vector-0 eventfd (the NIC's QEMU turns that into MSI-X
 *   vector 0, a GICv2m SPI); the NIC interrupts us by writing its Doorbell
 *   register with our ID, which its QEMU turns into a write to our own
 *   eventfd of that vector.  The NIC learns our ID from the init segment's
 *   irq_host_ids, where we claim a free slot (compare-and-swap 0 -> ours;
 *   freed at close).  A slot naming an ID the server did not list as
 *   connected belongs to a host that went without freeing it (killed): we
 *   reclaim it when no slot is free.  We learn the NIC's ID from irq_nic_id.
 *
 * After connecting, dev->db_ring_fd is the NIC's vector-0 eventfd and our
 * own vector-0 eventfd is dup2()ed onto dev->db_irq_fd, so mnic_dbch_ring
 * and mnic_dbch_wait work unchanged.  The connection stays open: the
 * server keeps our ID while it is.  Async-signal-safe as dbch.c (socket,
 * connect, recvmsg, poll, dup2, close, atomics on the BAR).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "libmnic_int.h"
#include "mnic/abi.h"

#define IVSH_SUFFIX ".ivsh"
#define IVSH_PROTOCOL_VERSION 0
#define IVSH_SETUP_TIMEOUT_MS 1000
#define IVSH_MAX_ID 0xffff
#define IVSH_MAX_SEEN 64      /* connected peers we remember from the setup */

/* One 8-byte little-endian message and its fd (-1: none; extra fds are
 * closed).  0, or -EPROTO / -ETIMEDOUT / -errno. */
static int ivsh_recv(int sock, int timeout_ms, int64_t *value, int *fd)
{
	uint8_t b[8];
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	uint64_t u = 0;
	ssize_t n;

	*fd = -1;
	if (poll(&pfd, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	/* Exactly one message per call, so each fd stays with its number. */
	n = mnic_recv_with_fd(sock, b, sizeof(b), MSG_WAITALL, fd);
	if (n < 0)
		return (int)n;
	if (n != (ssize_t)sizeof(b)) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EPROTO;
	}
	for (unsigned i = 0; i < 8; i++)
		u |= (uint64_t)b[i] << (8 * i);
	*value = (int64_t)u;
	return 0;
}

/* The ID the NIC published, or -ENODEV (not an ivshmem-doorbell NIC, or
 * one still booting). */
static int nic_id(const struct mnic_dev *dev)
{
	uint32_t v;

	if (dev->iseg == NULL)
		return -ENODEV;   /* no BAR mapped: nothing to read the ID from */
	v = __atomic_load_n(&dev->iseg->irq_nic_id, __ATOMIC_ACQUIRE);

	return (v & MNIC_IRQ_ID_VALID) ? (int)(v & MNIC_IRQ_ID_MASK) : -ENODEV;
}

static int seen_has(const int64_t *seen, unsigned n, int64_t id)
{
	for (unsigned i = 0; i < n; i++)
		if (seen[i] == id)
			return 1;
	return 0;
}

/* Claim an irq_host_ids slot for id: a free one, else one whose ID is not
 * a connected peer (seen: the server's list; unknown beyond IVSH_MAX_SEEN
 * peers, then nothing is reclaimed).  The slot index, or -ENOSPC. */
static int claim_slot(struct mnic_dev *dev, uint32_t id, const int64_t *seen, unsigned n_seen,
		      int complete)
{
	volatile uint32_t *slots = dev->iseg->irq_host_ids;
	uint32_t mine = MNIC_IRQ_ID_VALID | id;

	for (unsigned i = 0; i < MNIC_IRQ_MAX_HOSTS; i++) {
		uint32_t free_slot = 0;

		if (__atomic_compare_exchange_n(&slots[i], &free_slot, mine, 0, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return (int)i;
	}
	for (unsigned i = 0; complete && i < MNIC_IRQ_MAX_HOSTS; i++) {
		uint32_t old = __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);

		if ((old & MNIC_IRQ_ID_VALID) && seen_has(seen, n_seen, old & MNIC_IRQ_ID_MASK))
			continue;   /* a live host's */
		if (__atomic_compare_exchange_n(&slots[i], &old, mine, 0, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return (int)i;
	}
	return -ENOSPC;
}

int mnic_ivsh_connect(struct mnic_dev *dev, const char *bar, size_t bar_len)
{
	struct sockaddr_un sa;
	int sock, err, nic, ring = -1, fd, own_vectors = 0, slot;
	int64_t v, id, seen[IVSH_MAX_SEEN];
	unsigned n_seen = 0, seen_all = 1;

	mnic_ivsh_forget(dev);   /* a previous server's vectors */
	nic = nic_id(dev);
	if (nic < 0)
		return nic;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (bar_len + sizeof(IVSH_SUFFIX) > sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, bar, bar_len);
	memcpy(sa.sun_path + bar_len, IVSH_SUFFIX, sizeof(IVSH_SUFFIX));
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto fail;
	}
	/* 1. version, 2. our ID, 3. -1 with the shared memory */
	err = ivsh_recv(sock, IVSH_SETUP_TIMEOUT_MS, &v, &fd);
	if (err == 0 && (v != IVSH_PROTOCOL_VERSION || fd >= 0))
		err = -EPROTO;
	if (err == 0)
		err = ivsh_recv(sock, IVSH_SETUP_TIMEOUT_MS, &id, &fd);
	if (err == 0 && (id < 0 || id > IVSH_MAX_ID || fd >= 0))
		err = -EPROTO;
	if (err == 0)
		err = ivsh_recv(sock, IVSH_SETUP_TIMEOUT_MS, &v, &fd);
	if (err == 0 && (v != -1 || fd < 0))
		err = -EPROTO;
	if (fd >= 0)
		close(fd);   /* the memory: ours is the BAR file mapping */
	if (err < 0)
		goto fail;
	if (id == nic) {
		err = -EPROTO;   /* the server gave us the NIC's own ID */
		goto fail;
	}
	/* 4. every other peer's vectors, 5. ours.  The server sent the whole
	 * setup at once: read until ours are in and nothing more is waiting. */
	for (;;) {
		err = ivsh_recv(sock, own_vectors ? 0 : IVSH_SETUP_TIMEOUT_MS, &v, &fd);
		if (err == -ETIMEDOUT && own_vectors) {
			err = 0;
			break;
		}
		if (err < 0)
			goto fail;
		if (v == id && fd >= 0) {
			/* own vector own_vectors: vector 0 at db_irq_fd, the
			 * next ones kept for completion channels */
			if (own_vectors == 0) {
				if (dup2(fd, dev->db_irq_fd) < 0)
					err = -errno;
				close(fd);
			} else if (own_vectors < MNIC_IVSH_MAX_VECTORS) {
				dev->ivsh_vec_fd[own_vectors] = fd;
			} else {
				close(fd);
			}
			own_vectors++;
		} else if (v == nic && fd >= 0 && ring < 0) {
			ring = fd;   /* the NIC's vector 0: its doorbell */
		} else if (v == nic && fd < 0) {
			err = -ENODEV;   /* the NIC left the server */
		} else if (fd >= 0) {
			close(fd);   /* another peer's (a host VM) or a later vector */
			if (!seen_has(seen, n_seen, v)) {
				if (n_seen < IVSH_MAX_SEEN)
					seen[n_seen++] = v;
				else
					seen_all = 0;
			}
		} else if (v < 0 || v > IVSH_MAX_ID) {
			err = -EPROTO;
		}
		if (err < 0)
			goto fail;
	}
	if (ring < 0) {
		err = -ENODEV;   /* the NIC is not a peer of this server */
		goto fail;
	}
	if (n_seen < IVSH_MAX_SEEN)
		seen[n_seen++] = nic;
	/* Publish our ID last: the NIC raises us from here on. */
	slot = claim_slot(dev, (uint32_t)id, seen, n_seen, seen_all);
	if (slot < 0) {
		err = slot;   /* every slot a live host's: polled, as without a channel */
		goto fail;
	}
	dev->db_sock = sock;
	dev->db_ring_fd = ring;
	dev->ivsh_id = (int)id;
	dev->ivsh_slot = slot;
	dev->db_n_vectors = (uint16_t)(own_vectors < MNIC_IVSH_MAX_VECTORS ? own_vectors :
				       MNIC_IVSH_MAX_VECTORS);
	return 0;
fail:
	if (ring >= 0)
		close(ring);
	mnic_ivsh_forget(dev);
	close(sock);
	return err;
}

void mnic_ivsh_init(struct mnic_dev *dev)
{
	dev->ivsh_id = dev->ivsh_slot = -1;
	for (unsigned k = 0; k < MNIC_IVSH_MAX_VECTORS; k++)
		dev->ivsh_vec_fd[k] = -1;
}

void mnic_ivsh_forget(struct mnic_dev *dev)
{
	for (unsigned k = 0; k < MNIC_IVSH_MAX_VECTORS; k++) {
		if (dev->ivsh_vec_fd[k] >= 0)
			close(dev->ivsh_vec_fd[k]);
		dev->ivsh_vec_fd[k] = -1;
	}
	dev->ivsh_id = dev->ivsh_slot = -1;
}

int mnic_ivsh_vector_fd(struct mnic_dev *dev, uint16_t vector)
{
	int fd;

	if (vector == 0 || vector >= MNIC_IVSH_MAX_VECTORS || dev->ivsh_vec_fd[vector] < 0)
		return -ENOSPC;
	fd = fcntl(dev->ivsh_vec_fd[vector], F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

void mnic_ivsh_close(struct mnic_dev *dev)
{
	uint32_t mine = MNIC_IRQ_ID_VALID | (uint32_t)dev->ivsh_id;
	int slot = dev->ivsh_slot;

	if (dev->ivsh_id < 0 || slot < 0 || slot >= (int)MNIC_IRQ_MAX_HOSTS) {
		mnic_ivsh_forget(dev);
		return;
	}
	/* only if still ours (a later host may have reclaimed it) */
	(void)__atomic_compare_exchange_n(&dev->iseg->irq_host_ids[slot], &mine, 0u, 0,
					  __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	mnic_ivsh_forget(dev);
}

