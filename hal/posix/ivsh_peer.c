/* The POSIX NIC as a peer of an mnic-ivshmem-server (hal/doorbell.h; the
 * protocol: qemu-board/ivshmem_server.c, from QEMU's ivshmem-spec.rst), so
 * that a host VM's ivshmem-doorbell device rings this NIC and takes its
 * interrupts as it does a QEMU board's (mnic-fw --ivshmem PATH;
 * qemu-board/nic.sh --board posix --bar-kind doorbell starts the server).
 *
 *   setup: the protocol version, our ID, the shared memory (ours is the
 *   BAR file mapping already: closed), every other peer's eventfds, ours.
 *   rang:  one of our own eventfds was written (a host VM's QEMU does it on
 *          a Doorbell register write of (our ID << 16 | vector); libmnic's
 *          BAR backend writes our vector 0 directly, hostdrv/lib/ivsh.c).
 *   raise: for every host ID the init segment names (db.hosts, copied by
 *          firmware/run.c), write that peer's eventfd of the vector; its
 *          QEMU turns that into MSI-X vector v.
 *   later: a peer's ID with an fd announces one of its vectors (in order),
 *          without one says it went away (its eventfds closed).
 *
 * The server is trusted no further than any input: an ID out of range, a
 * peer beyond POSIX_IVSH_MAX_PEERS, a vector beyond POSIX_DB_VECTORS, an
 * fd that is not an eventfd, a short message: each refused and counted
 * (bad_messages, bad_fds, bad_vectors, hosts_refused), and the NIC serves
 * on.  Nothing blocks after the setup: the socket and every eventfd are
 * non-blocking, and a server that closes the connection leaves the NIC
 * with the peers it knew (hosts_disconnected) and the BAR poll.
 *
 * The message reader is written again here rather than shared with
 * hostdrv/lib/ivsh.c: the firmware's HAL and the host library are
 * separate layers (Makefile layer_of), and the reader is twenty lines.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* MSG_CMSG_CLOEXEC */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hal/errno.h"
#include "posix.h"

#define IVSH_PROTOCOL_VERSION 0
#define IVSH_MAX_ID 0xffff
#define IVSH_SETUP_TIMEOUT_MS 2000
/* Messages taken per serve: a server that floods cannot hold the loop. */
#define IVSH_MSGS_PER_SERVE 32u

_Static_assert(POSIX_DB_VECTORS <= 64, "vectors a peer announces");

static void peer_reset(struct posix_ivsh_peer *pp)
{
	pp->id = -1;
	pp->n = 0;
	for (unsigned v = 0; v < POSIX_DB_VECTORS; v++)
		pp->fd[v] = -1;
}

static void peer_close(struct posix_ivsh_peer *pp)
{
	for (unsigned v = 0; v < POSIX_DB_VECTORS; v++)
		if (pp->fd[v] >= 0)
			close(pp->fd[v]);
	peer_reset(pp);
}

/* One 8-byte little-endian number and at most one fd (others closed).
 * 1: a message; 0: none waiting (or the wait timed out); -1: the server
 * closed or broke the stream. */
static int ivsh_recv(struct posix_ivsh *pi, int timeout_ms, int64_t *value, int *fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	uint8_t b[8];
	struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	struct pollfd pfd = { .fd = pi->sock, .events = POLLIN };
	uint64_t u = 0;
	ssize_t n;

	*fd = -1;
	if (timeout_ms && poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	/* A stream: the 8 bytes of one number may come in two reads, but the
	 * server sends each message whole, so a short read is a broken one. */
	n = recvmsg(pi->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t len;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		len = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < len; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0) {
				*fd = f;
			} else {
				pi->db.stats.bad_fds++;
				close(f);
			}
		}
	}
	if (n == 0)
		return -1;
	if (n != (ssize_t)sizeof(b) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		pi->db.stats.bad_messages++;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -1;
	}
	for (unsigned i = 0; i < 8; i++)
		u |= (uint64_t)b[i] << (8 * i);
	*value = (int64_t)u;
	return 1;
}

static struct posix_ivsh_peer *peer_find(struct posix_ivsh *pi, int64_t id)
{
	for (unsigned i = 0; i < POSIX_IVSH_MAX_PEERS; i++)
		if (pi->peers[i].id == id)
			return &pi->peers[i];
	return NULL;
}

/* One message after the first three: a vector of a peer (ours, or another
 * one's, a new slot on its first), or a peer gone. */
static void ivsh_message(struct posix_ivsh *pi, int64_t id, int fd)
{
	struct posix_ivsh_peer *pp;
	int fl;

	if (id < 0 || id > IVSH_MAX_ID) {
		pi->db.stats.bad_messages++;
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fd < 0) {
		if (id == pi->self_id) {
			pi->db.stats.bad_messages++;   /* we are here */
			return;
		}
		pp = peer_find(pi, id);
		if (pp) {
			peer_close(pp);
			pi->db.stats.hosts_disconnected++;
		}
		return;
	}
	if (!posix_is_eventfd(fd) || (fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		pi->db.stats.bad_fds++;   /* raise() and rang() must never block */
		close(fd);
		return;
	}
	if (id == pi->self_id) {
		if (pi->n_own >= POSIX_DB_VECTORS) {
			pi->db.stats.bad_vectors++;
			close(fd);
			return;
		}
		pi->own_fd[pi->n_own++] = fd;
		return;
	}
	pp = peer_find(pi, id);
	if (pp == NULL) {
		pp = peer_find(pi, -1);
		if (pp == NULL) {
			pi->db.stats.hosts_refused++;
			close(fd);
			return;
		}
		pp->id = (int32_t)id;
		pi->db.stats.hosts_connected++;
	}
	if (pp->n >= POSIX_DB_VECTORS) {
		pi->db.stats.bad_vectors++;   /* beyond what we raise: not kept */
		close(fd);
		return;
	}
	pp->fd[pp->n++] = fd;
}

void posix_ivsh_serve(struct posix_ivsh *pi)
{
	int64_t v;
	int fd;

	for (unsigned k = 0; pi->sock >= 0 && k < IVSH_MSGS_PER_SERVE; k++) {
		int r = ivsh_recv(pi, 0, &v, &fd);

		if (r == 0)
			break;
		if (r < 0) {
			/* the server went (or broke the stream): keep the
			 * peers we know; new ones cannot come */
			pi->db.stats.hosts_disconnected++;
			close(pi->sock);
			pi->sock = -1;
			break;
		}
		ivsh_message(pi, v, fd);
	}
	/* Our vectors beyond 0 are only for the Doorbell register a host VM
	 * may write with any vector: consumed here, so a host ringing them
	 * cannot keep the wait awake; a ring all the same. */
	for (unsigned i = 1; i < pi->n_own; i++) {
		uint64_t c;

		if (read(pi->own_fd[i], &c, sizeof(c)) == (ssize_t)sizeof(c))
			pi->extra_rang = 1;
	}
}

unsigned posix_ivsh_pollfds(const struct posix_ivsh *pi, struct pollfd *pfd)
{
	unsigned n = 0;

	for (unsigned i = 0; i < pi->n_own; i++)
		pfd[n++] = (struct pollfd){ .fd = pi->own_fd[i], .events = POLLIN };
	if (pi->sock >= 0)
		pfd[n++] = (struct pollfd){ .fd = pi->sock, .events = POLLIN };
	return n;
}

/* ---- hal_doorbell ops --------------------------------------------------- */

static int ivsh_rang(struct hal_doorbell *d)
{
	struct posix_ivsh *pi = d->priv;
	uint64_t v;
	int rang = pi->extra_rang;

	pi->extra_rang = 0;
	/* Reading resets vector 0's counter: every ring before it is
	 * consumed; one after it makes the fd readable again. */
	if (pi->n_own && read(pi->own_fd[0], &v, sizeof(v)) == (ssize_t)sizeof(v))
		rang = 1;
	if (rang)
		d->stats.rings++;
	return rang;
}

static int ivsh_raise(struct hal_doorbell *d, unsigned vector)
{
	struct posix_ivsh *pi = d->priv;

	if (vector >= d->n_vectors) {
		d->stats.bad_vectors++;
		return -HAL_EINVAL;
	}
	for (unsigned i = 0; i < HAL_DOORBELL_MAX_HOSTS; i++) {
		struct posix_ivsh_peer *pp;

		if (d->hosts[i] > IVSH_MAX_ID || d->hosts[i] == d->self_id)
			continue;   /* an empty slot, or a host naming the NIC */
		pp = peer_find(pi, d->hosts[i]);
		/* A host that named an ID the server never announced (or one
		 * that went) is not interrupted, as QEMU ignores such a write. */
		if (pp == NULL || vector >= pp->n) {
			d->stats.raise_failed++;
			continue;
		}
		posix_efd_raise(d, pp->fd[vector]);
	}
	return 0;
}

static const struct hal_doorbell_ops ivsh_ops = {
	.rang = ivsh_rang,
	.raise = ivsh_raise,
};

/* ---- open and close ----------------------------------------------------- */

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int posix_ivsh_open(struct posix_ivsh *pi, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	const char *why = NULL;
	int64_t v, id;
	uint64_t until;
	int fd, fl;

	memset(pi, 0, sizeof(*pi));
	pi->sock = -1;
	pi->self_id = HAL_DOORBELL_NO_ID;
	for (unsigned i = 0; i < POSIX_DB_VECTORS; i++)
		pi->own_fd[i] = -1;
	for (unsigned i = 0; i < POSIX_IVSH_MAX_PEERS; i++)
		peer_reset(&pi->peers[i]);
	if (len >= sizeof(sa.sun_path)) {
		fprintf(stderr, "posix: --ivshmem %s: longer than the %zu bytes a unix socket path "
			"may have; give a shorter path\n", path, sizeof(sa.sun_path) - 1);
		return -HAL_EINVAL;
	}
	memcpy(sa.sun_path, path, len + 1);
	pi->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (pi->sock < 0 || connect(pi->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (fl = fcntl(pi->sock, F_GETFL)) < 0 || fcntl(pi->sock, F_SETFL, fl | O_NONBLOCK) < 0) {
		fprintf(stderr, "posix: --ivshmem %s: %s (start mnic-ivshmem-server there first: "
			"qemu-board/nic.sh --board posix --bar-kind doorbell does)\n", path,
			strerror(errno));
		posix_ivsh_close(pi);
		return -HAL_EIO;
	}
	/* 1. the version, 2. our ID, 3. -1 with the shared memory */
	if (ivsh_recv(pi, IVSH_SETUP_TIMEOUT_MS, &v, &fd) != 1 || v != IVSH_PROTOCOL_VERSION ||
	    fd >= 0)
		why = "no protocol version 0";
	else if (ivsh_recv(pi, IVSH_SETUP_TIMEOUT_MS, &id, &fd) != 1 || id < 0 ||
		 id > IVSH_MAX_ID || fd >= 0)
		why = "no peer ID";
	else if (ivsh_recv(pi, IVSH_SETUP_TIMEOUT_MS, &v, &fd) != 1 || v != -1 || fd < 0)
		why = "no shared memory";
	if (fd >= 0)
		close(fd);   /* the memory: ours is the BAR file's mapping */
	if (why) {
		fprintf(stderr, "posix: --ivshmem %s: the server sent %s; is it an "
			"mnic-ivshmem-server?\n", path, why);
		posix_ivsh_close(pi);
		return -HAL_EIO;
	}
	pi->self_id = (uint32_t)id;
	/* 4. the other peers' vectors, 5. ours: sent at once by the server;
	 * read until ours are in and nothing more waits (later ones, and a
	 * peer that comes, are served by posix_ivsh_serve) */
	until = mono_ms() + IVSH_SETUP_TIMEOUT_MS;
	for (;;) {
		uint64_t now = mono_ms();
		int r = ivsh_recv(pi, pi->n_own ? 0 : (int)(until > now ? until - now : 1), &v, &fd);

		if (r == 0 && (pi->n_own || now >= until))
			break;
		if (r < 0)
			break;
		if (r > 0)
			ivsh_message(pi, v, fd);
	}
	if (pi->n_own == 0) {
		fprintf(stderr, "posix: --ivshmem %s: the server gave this NIC (peer %lld) no "
			"vector to be rung on\n", path, (long long)id);
		posix_ivsh_close(pi);
		return -HAL_EIO;
	}
	pi->db.ops = &ivsh_ops;
	pi->db.n_vectors = POSIX_DB_VECTORS;
	pi->db.self_id = pi->self_id;
	for (unsigned i = 0; i < HAL_DOORBELL_MAX_HOSTS; i++)
		pi->db.hosts[i] = HAL_DOORBELL_NO_ID;
	/* a host VM's applications may write db_seq without ringing (a
	 * provider on a BAR0 it cannot map): the adaptive poll stays */
	pi->db.every_store_rings = 0;
	pi->db.priv = pi;
	return 0;
}

void posix_ivsh_close(struct posix_ivsh *pi)
{
	for (unsigned i = 0; i < POSIX_IVSH_MAX_PEERS; i++)
		peer_close(&pi->peers[i]);
	for (unsigned i = 0; i < POSIX_DB_VECTORS; i++) {
		if (pi->own_fd[i] >= 0)
			close(pi->own_fd[i]);
		pi->own_fd[i] = -1;
	}
	pi->n_own = 0;
	if (pi->sock >= 0)
		close(pi->sock);
	pi->sock = -1;
}
