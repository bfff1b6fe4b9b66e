/* The BAR backend's doorbell channel (mnic/dbch.h; docs/libmnic.md
 * "Doorbells"): connect to "<BAR file>.db" if the NIC offers it, take its
 * ring eventfd, give it ours for vector 0; ring after every BAR store the
 * NIC must act on; sleep on our eventfd while a command is in service.  No
 * channel (none there, refused, or MNIC_DOORBELL_CHANNEL=off): every call
 * here is a no-op and the caller polls the BAR, as without one.
 *
 * Everything after mnic_dbch_open's eventfd is async-signal-safe (socket,
 * connect, setsockopt, sendmsg, recvmsg, poll, read, write, close and plain
 * stores): mnic_reopen_inplace calls mnic_dbch_connect from a signal
 * handler.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "libmnic_int.h"
#include "mnic/dbch.h"

/* How long connecting waits for the NIC's WELCOME and REPLY: a NIC serves
 * its channel within a millisecond even when busy (hal/posix/platform.c). */
#define DBCH_REPLY_TIMEOUT_MS 1000

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int send_vector(int sock, uint16_t vector, int fd)
{
	struct mnic_dbch_msg m = { .magic = MNIC_DBCH_MAGIC, .version = MNIC_DBCH_VERSION,
				   .type = MNIC_DBCH_VECTOR, .vector = vector };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	struct cmsghdr *c;

	memset(cbuf.buf, 0, sizeof(cbuf.buf));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -EPROTO;
}

/* One message of `type`; its fd (if any) into *fd (else -1; extra fds are
 * closed).  -EPROTO for anything else. */
static int recv_msg(int sock, uint16_t type, struct mnic_dbch_msg *m, int *fd)
{
	ssize_t n = mnic_recv_with_fd(sock, m, sizeof(*m), 0, fd);

	if (n < 0)
		return (int)n;
	if (n != (ssize_t)sizeof(*m) || m->magic != MNIC_DBCH_MAGIC ||
	    m->version != MNIC_DBCH_VERSION || m->type != type) {
		close_fd(fd);
		return -EPROTO;
	}
	return 0;
}

/* VECTOR: give the POSIX NIC on sock fd (an eventfd) for vector, and take
 * its REPLY: -EPROTO when it refused. */
static int add_vector(int sock, uint16_t vector, int fd)
{
	struct mnic_dbch_msg m;
	int rfd, err;

	err = send_vector(sock, vector, fd);
	if (err == 0)
		err = recv_msg(sock, MNIC_DBCH_REPLY, &m, &rfd);
	if (err < 0)
		return err;
	close_fd(&rfd);
	return m.vector == vector && m.status == MNIC_DBCH_OK ? 0 : -EPROTO;
}

int mnic_dbch_connect(struct mnic_dev *dev, const char *bar, size_t bar_len)
{
	struct sockaddr_un sa;
	struct timeval tv = { .tv_sec = DBCH_REPLY_TIMEOUT_MS / 1000,
			      .tv_usec = (DBCH_REPLY_TIMEOUT_MS % 1000) * 1000 };
	struct mnic_dbch_msg m;
	int sock, ring = -1, err;
	uint16_t n_vectors;

	close_fd(&dev->db_sock);
	close_fd(&dev->db_ring_fd);
	/* a previous NIC's server frees our ID when its socket closes (its
	 * stale irq_host_ids slot is reclaimed by a later host: ivsh.c); this
	 * BAR is not where we claimed it */
	mnic_ivsh_forget(dev);
	if (dev->db_irq_fd < 0)
		return -ENOTCONN;   /* disabled, or the eventfd could not be made */
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (bar_len + sizeof(MNIC_DBCH_SUFFIX) > sizeof(sa.sun_path))
		return -ENAMETOOLONG;   /* the NIC cannot have listened there either */
	memcpy(sa.sun_path, bar, bar_len);
	memcpy(sa.sun_path + bar_len, MNIC_DBCH_SUFFIX, sizeof(MNIC_DBCH_SUFFIX));
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;   /* ENOENT, ECONNREFUSED: no channel here */
		close(sock);
		/* a QEMU NIC: its ivshmem-doorbell server instead (ivsh.c) */
		if (err == -ENOENT || err == -ECONNREFUSED) {
			int ierr = mnic_ivsh_connect(dev, bar, bar_len);

			if (ierr == 0 || (ierr != -ENOENT && ierr != -ECONNREFUSED && ierr != -ENODEV))
				return ierr;
		}
		return err;
	}
	if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		err = -errno;
		goto fail;
	}
	err = recv_msg(sock, MNIC_DBCH_WELCOME, &m, &ring);
	if (err == 0 && (ring < 0 || m.n_vectors <= MNIC_DBCH_VEC_CMD))
		err = -EPROTO;
	n_vectors = err == 0 ? m.n_vectors : 0;
	if (err == 0)
		err = add_vector(sock, MNIC_DBCH_VEC_CMD, dev->db_irq_fd);
	if (err < 0)
		goto fail;
	dev->db_sock = sock;
	dev->db_ring_fd = ring;
	dev->db_n_vectors = n_vectors > MNIC_DBCH_MAX_VECTORS ? MNIC_DBCH_MAX_VECTORS : n_vectors;
	return 0;
fail:
	close_fd(&ring);
	close(sock);
	return err;
}

int mnic_dbch_open(struct mnic_dev *dev, const char *bar)
{
	const char *env = getenv("MNIC_DOORBELL_CHANNEL");
	int err;

	dev->db_sock = dev->db_ring_fd = dev->db_irq_fd = -1;
	mnic_ivsh_init(dev);
	if (env && !strcmp(env, "off"))
		return 0;
	dev->db_irq_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (dev->db_irq_fd < 0)
		return 0;   /* no channel: polled, as without one */
	err = mnic_dbch_connect(dev, bar, strlen(bar));
	if (err == -ENOENT || err == -ECONNREFUSED || err == -ENAMETOOLONG)
		return 0;   /* the NIC offers none */
	return err;
}

int mnic_dbch_vector_fd(struct mnic_dev *dev, uint16_t vector)
{
	int fd, err;

	if (dev->db_sock < 0)
		return -ENOTCONN;
	if (vector >= dev->db_n_vectors)
		return -ENOSPC;
	if (dev->ivsh_id >= 0)
		return mnic_ivsh_vector_fd(dev, vector);
	fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = add_vector(dev->db_sock, vector, fd);
	if (err < 0) {
		close(fd);
		return err;
	}
	return fd;
}

void mnic_dbch_close(struct mnic_dev *dev)
{
	mnic_ivsh_close(dev);
	close_fd(&dev->db_sock);
	close_fd(&dev->db_ring_fd);
	close_fd(&dev->db_irq_fd);
}

void mnic_dbch_ring(struct mnic_dev *dev)
{
	const uint64_t one = 1;

	if (dev->db_ring_fd < 0)
		return;
	/* The BAR stores this ring announces before the write: the NIC reads
	 * the BAR after it has read the ring (hal/doorbell.h). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* EAGAIN: the NIC's counter is full, so it is readable already */
	(void)!write(dev->db_ring_fd, &one, sizeof(one));
}

int mnic_dbch_wait(struct mnic_dev *dev, int timeout_ms)
{
	struct pollfd pfd = { .fd = dev->db_irq_fd, .events = POLLIN };
	uint64_t v;

	if (dev->db_sock < 0)
		return -ENOTCONN;
	if (poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	/* Drained before the caller looks again: a raise after this read
	 * leaves the fd readable for the next wait, so none is lost. */
	(void)!read(dev->db_irq_fd, &v, sizeof(v));
	return 1;
}
