/* The POSIX NIC's doorbell channel (hal/doorbell.h; the protocol and its
 * messages: mnic/dbch.h, docs/host-interface.md "Doorbells and
 * interrupts").
 *
 * One listening SOCK_SEQPACKET socket, one ring eventfd that every host
 * shares (as QEMU's ivshmem-doorbell gives a peer one eventfd per vector,
 * written by whoever rings it), and per connected host its socket and the
 * eventfds it gave for its vectors.  Nothing here blocks: every socket is
 * non-blocking and every send MSG_DONTWAIT, so a host that stops reading
 * costs the NIC a dropped connection, never a stall.  The host is hostile:
 * a message of the wrong size, magic, version or type, a VECTOR without
 * exactly one eventfd, a vector out of range, a connection beyond
 * POSIX_DB_MAX_HOSTS: each refused, counted, and the channel serves on.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* accept4, MSG_CMSG_CLOEXEC */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "hal/errno.h"
#include "mnic/dbch.h"
#include "posix.h"

_Static_assert(POSIX_DB_VECTORS <= MNIC_DBCH_MAX_VECTORS, "vectors the protocol can name");

/* Messages taken from one host per serve: a host that floods the socket
 * cannot hold the loop. */
#define DB_MSGS_PER_SERVE 8u
/* fds a hostile message may carry that we still take in (and close):
 * beyond it the kernel truncates and closes them itself (MSG_CTRUNC). */
#define DB_MAX_RX_FDS 8u

static void host_reset(struct posix_db_host *h)
{
	h->sock = -1;
	for (unsigned v = 0; v < POSIX_DB_VECTORS; v++)
		h->vec_fd[v] = -1;
}

static void host_close(struct posix_doorbell *pd, struct posix_db_host *h)
{
	if (h->sock >= 0)
		close(h->sock);
	for (unsigned v = 0; v < POSIX_DB_VECTORS; v++)
		if (h->vec_fd[v] >= 0)
			close(h->vec_fd[v]);
	host_reset(h);
	pd->n_hosts--;
}

static int send_msg(int sock, const struct mnic_dbch_msg *m, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)(uintptr_t)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ? 0 : -1;
}

/* Only an eventfd may become a vector: a pipe or a regular file would let
 * a host make the NIC block or fill a disk (also ivsh_peer.c). */
int posix_is_eventfd(int fd)
{
	char link[64], want[] = "anon_inode:[eventfd]";
	char path[48];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link));
	return n == (ssize_t)(sizeof(want) - 1) && !memcmp(link, want, sizeof(want) - 1);
}

static void accept_hosts(struct posix_doorbell *pd)
{
	for (;;) {
		int s = accept4(pd->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct mnic_dbch_msg w = { .magic = MNIC_DBCH_MAGIC, .version = MNIC_DBCH_VERSION,
					   .type = MNIC_DBCH_WELCOME,
					   .n_vectors = (uint16_t)pd->db.n_vectors };
		unsigned i;

		if (s < 0)
			return;   /* EAGAIN: none left; anything else: next time */
		for (i = 0; i < POSIX_DB_MAX_HOSTS && pd->hosts[i].sock >= 0; i++)
			;
		if (i == POSIX_DB_MAX_HOSTS || send_msg(s, &w, pd->ring_fd) < 0) {
			pd->db.stats.hosts_refused++;
			close(s);
			continue;
		}
		pd->hosts[i].sock = s;
		pd->n_hosts++;
		pd->db.stats.hosts_connected++;
	}
}

/* One VECTOR message with its fds (nfd of them): install or refuse,
 * answer.  Returns -1 when the host must be dropped. */
static int host_vector(struct posix_doorbell *pd, struct posix_db_host *h,
		       const struct mnic_dbch_msg *m, int *fds, unsigned nfd, int ctrunc)
{
	struct mnic_dbch_msg r = { .magic = MNIC_DBCH_MAGIC, .version = MNIC_DBCH_VERSION,
				   .type = MNIC_DBCH_REPLY, .vector = m->vector,
				   .status = MNIC_DBCH_OK };
	int fl;

	if (nfd != 1 || ctrunc || !posix_is_eventfd(fds[0])) {
		pd->db.stats.bad_fds++;
		r.status = MNIC_DBCH_BAD_FD;
	} else if (m->vector >= pd->db.n_vectors) {
		pd->db.stats.bad_vectors++;
		r.status = MNIC_DBCH_BAD_VECTOR;
	} else if ((fl = fcntl(fds[0], F_GETFL)) < 0 ||
		   fcntl(fds[0], F_SETFL, fl | O_NONBLOCK) < 0) {
		/* raise() must never block on a host's counter */
		pd->db.stats.bad_fds++;
		r.status = MNIC_DBCH_BAD_FD;
	} else {
		if (h->vec_fd[m->vector] >= 0)
			close(h->vec_fd[m->vector]);
		h->vec_fd[m->vector] = fds[0];
		fds[0] = -1;
	}
	for (unsigned i = 0; i < nfd; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return send_msg(h->sock, &r, -1);
}

/* Up to DB_MSGS_PER_SERVE messages of one host; -1: drop it. */
static int serve_host(struct posix_doorbell *pd, struct posix_db_host *h)
{
	for (unsigned k = 0; k < DB_MSGS_PER_SERVE; k++) {
		union {
			char buf[CMSG_SPACE(DB_MAX_RX_FDS * sizeof(int))];
			struct cmsghdr align;
		} cbuf;
		struct mnic_dbch_msg m;
		struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
				     .msg_controllen = sizeof(cbuf.buf) };
		int fds[DB_MAX_RX_FDS];
		unsigned nfd = 0;
		ssize_t n = recvmsg(h->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
		if (n == 0) {
			pd->db.stats.hosts_disconnected++;
			return -1;
		}
		/* every fd that came is ours to close, whatever the message */
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			size_t len;

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
			    c->cmsg_len < CMSG_LEN(0))
				continue;
			len = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < len && nfd < DB_MAX_RX_FDS; i++)
				memcpy(&fds[nfd++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		}
		if (n != (ssize_t)sizeof(m) || (mh.msg_flags & MSG_TRUNC) ||
		    m.magic != MNIC_DBCH_MAGIC || m.version != MNIC_DBCH_VERSION ||
		    m.type != MNIC_DBCH_VECTOR) {
			pd->db.stats.bad_messages++;
			for (unsigned i = 0; i < nfd; i++)
				close(fds[i]);
			continue;
		}
		if (host_vector(pd, h, &m, fds, nfd, (mh.msg_flags & MSG_CTRUNC) != 0) < 0) {
			pd->db.stats.hosts_dropped++;
			return -1;
		}
	}
	return 0;
}

void posix_doorbell_serve(struct posix_doorbell *pd)
{
	struct pollfd pfd[POSIX_DB_MAX_HOSTS + 1];
	unsigned idx[POSIX_DB_MAX_HOSTS], n = 0;

	if (pd->listen_fd < 0)
		return;
	pfd[n++] = (struct pollfd){ .fd = pd->listen_fd, .events = POLLIN };
	for (unsigned i = 0; i < POSIX_DB_MAX_HOSTS; i++)
		if (pd->hosts[i].sock >= 0) {
			idx[n - 1] = i;
			pfd[n++] = (struct pollfd){ .fd = pd->hosts[i].sock, .events = POLLIN };
		}
	if (poll(pfd, n, 0) <= 0)
		return;
	for (unsigned k = 1; k < n; k++) {
		struct posix_db_host *h = &pd->hosts[idx[k - 1]];

		if (pfd[k].revents && serve_host(pd, h) < 0)
			host_close(pd, h);
	}
	if (pfd[0].revents & POLLIN)
		accept_hosts(pd);
}

unsigned posix_doorbell_pollfds(const struct posix_doorbell *pd, struct pollfd *pfd)
{
	unsigned n = 0;

	if (pd->listen_fd < 0)
		return 0;
	pfd[n++] = (struct pollfd){ .fd = pd->ring_fd, .events = POLLIN };
	pfd[n++] = (struct pollfd){ .fd = pd->listen_fd, .events = POLLIN };
	for (unsigned i = 0; i < POSIX_DB_MAX_HOSTS; i++)
		if (pd->hosts[i].sock >= 0)
			pfd[n++] = (struct pollfd){ .fd = pd->hosts[i].sock, .events = POLLIN };
	return n;
}

/* ---- hal_doorbell ops --------------------------------------------------- */

static int db_rang(struct hal_doorbell *d)
{
	struct posix_doorbell *pd = d->priv;
	uint64_t v;

	/* Reading resets the counter: every ring before it is consumed, and a
	 * ring after it makes the fd readable again (the next call, or the
	 * wait's ppoll, sees it). */
	if (read(pd->ring_fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	d->stats.rings++;
	return 1;
}

void posix_efd_raise(struct hal_doorbell *d, int fd)
{
	const uint64_t one = 1;

	/* EAGAIN: the counter is at its maximum, so the host's fd is
	 * readable already and no wakeup is lost; counted all the same */
	if (write(fd, &one, sizeof(one)) == (ssize_t)sizeof(one))
		d->stats.raises++;
	else
		d->stats.raise_failed++;
}

static int db_raise(struct hal_doorbell *d, unsigned vector)
{
	struct posix_doorbell *pd = d->priv;

	if (vector >= d->n_vectors)
		return -HAL_EINVAL;
	for (unsigned i = 0; i < POSIX_DB_MAX_HOSTS; i++)
		if (pd->hosts[i].vec_fd[vector] >= 0)
			posix_efd_raise(d, pd->hosts[i].vec_fd[vector]);
	return 0;
}

static const struct hal_doorbell_ops db_ops = {
	.rang = db_rang,
	.raise = db_raise,
};

/* ---- open and close ----------------------------------------------------- */

int posix_doorbell_open(struct posix_doorbell *pd, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	struct stat st;

	memset(pd, 0, sizeof(*pd));
	pd->listen_fd = pd->ring_fd = -1;
	for (unsigned i = 0; i < POSIX_DB_MAX_HOSTS; i++)
		host_reset(&pd->hosts[i]);
	if (len >= sizeof(sa.sun_path)) {
		fprintf(stderr, "posix: doorbell socket %s: longer than the %zu bytes a unix socket "
			"path may have; give a shorter --doorbell PATH (or --doorbell off)\n", path,
			sizeof(sa.sun_path) - 1);
		return -HAL_EINVAL;
	}
	memcpy(sa.sun_path, path, len + 1);
	/* a socket left by a NIC that died: ours now (anything else is not) */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			fprintf(stderr, "posix: doorbell socket %s: exists and is not a socket; "
				"remove it or give another --doorbell PATH\n", path);
			return -HAL_EEXIST;
		}
		unlink(path);
	}
	pd->ring_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pd->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (pd->ring_fd >= 0 && pd->listen_fd >= 0 &&
	    bind(pd->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		pd->path = path;   /* ours to unlink */
	/* only this user's processes may ring (and be handed eventfds) */
	if (!pd->path || chmod(path, 0600) < 0 || listen(pd->listen_fd, POSIX_DB_MAX_HOSTS) < 0) {
		fprintf(stderr, "posix: doorbell socket %s: %s\n", path, strerror(errno));
		posix_doorbell_close(pd);
		return -HAL_EIO;
	}
	pd->db.ops = &db_ops;
	pd->db.n_vectors = POSIX_DB_VECTORS;
	pd->db.self_id = HAL_DOORBELL_NO_ID;
	pd->db.every_store_rings = 1;
	pd->db.priv = pd;
	return 0;
}

void posix_doorbell_close(struct posix_doorbell *pd)
{
	for (unsigned i = 0; i < POSIX_DB_MAX_HOSTS; i++)
		if (pd->hosts[i].sock >= 0)
			host_close(pd, &pd->hosts[i]);
	if (pd->listen_fd >= 0) {
		close(pd->listen_fd);
		if (pd->path)
			unlink(pd->path);
	}
	if (pd->ring_fd >= 0)
		close(pd->ring_fd);
	pd->listen_fd = pd->ring_fd = -1;
	pd->path = NULL;
}
