/* mnic-ivshmem-server: the project's server for QEMU's ivshmem-doorbell
 * device (docs/host-interface.md "Doorbells and interrupts": QEMU NICs).
 * Debian 12 packages QEMU without contrib/ivshmem-server, so this is our
 * own, written from the protocol as QEMU's docs/specs/ivshmem-spec.rst
 * describes it (never from QEMU's server):
 *
 *   A unix stream socket.  The connection is one-way, server to client.
 *   Every message is one 8-byte little-endian signed number, optionally
 *   with one file descriptor (SCM_RIGHTS).  On connect the server sends
 *     1. the protocol version, 0;
 *     2. the client's ID (0..65535; the Doorbell register has 16 bits);
 *     3. -1 with the shared memory's fd;
 *     4. for every other connected client: its ID N times, each with one
 *        eventfd, for interrupting it on vectors 0..N-1 in order;
 *     5. its own ID N times, each with one eventfd: the ones it is
 *        interrupted on, vectors 0..N-1.
 *   Afterwards: a peer's ID with an fd (N of them) announces a new peer,
 *   an ID without one tells that the peer went away.  A client interrupts
 *   a peer by writing an 8-byte 1 to that peer's eventfd of the vector; a
 *   QEMU device does it on a write of (peer << 16 | vector) to its
 *   Doorbell register, and raises MSI-X vector v when its own eventfd v
 *   becomes readable.  A device with fewer vectors closes the extra fds.
 *
 * Our clients: the NIC's QEMU (the first to connect, qemu-board/nic.sh),
 * the host VM's QEMU (tests/vm/vm.sh) and libmnic BAR-file processes
 * (hostdrv/lib/ivsh.c); at most --max-peers at once.
 *
 * IDs are never reused while the server runs (the next one after the
 * last given; after 65535 clients, refused): QEMU 7.2's ivshmem frees a
 * peer's eventfd array when that peer disconnects and writes a later
 * peer with the same ID into the freed array, which corrupted the NIC
 * QEMU's heap here ("malloc_consolidate(): unaligned fastbin chunk") when
 * a client took the ID of one that had gone.
 *
 * Lifetime: the server exits by itself, unlinking its socket, when the
 * last client has gone (the NIC's QEMU exits, then the host's), or when no
 * client came within --linger seconds of starting, or at once when the
 * process --owner names exits (nic.sh names itself: it execs the NIC's
 * QEMU, so a QEMU that dies before it connects takes the server with it;
 * a pidfd in the poll set, Linux 5.3); SIGTERM/SIGINT also stop it.  Refusals are counted and logged on stderr; a client that sends
 * anything (the protocol is one-way) or cannot take a message is dropped.
 *
 * Usage: mnic-ivshmem-server --socket PATH --shm FILE [--vectors N]
 *                            [--max-peers N] [--linger S] [--owner PID]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define IVSH_PROTOCOL_VERSION 0
#define IVSH_MAX_VECTORS 64
#define IVSH_MAX_PEERS 32
#define IVSH_MAX_ID 65535

struct peer {
	int sock;                    /* -1: slot free */
	unsigned id;
	int efd[IVSH_MAX_VECTORS];
};

static struct peer peers[IVSH_MAX_PEERS];
static unsigned n_vectors = 4, max_peers = IVSH_MAX_PEERS, next_id;
static int shm_fd = -1, listen_fd = -1;
static const char *sock_path;
static volatile sig_atomic_t stop;
static struct {
	unsigned long connected, disconnected, refused_full, refused_ids, dropped_send,
		dropped_talk, eventfd_failed;
} st;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int die(const char *msg)
{
	fprintf(stderr, "mnic-ivshmem-server: %s\n", msg);
	exit(2);
}

/* One message: value as 8 bytes little-endian, fd attached if >= 0.  The
 * client sockets are non-blocking: a client that cannot take a message
 * now is not waited for (-1). */
static int send_msg(int sock, int64_t value, int fd)
{
	uint8_t b[8];
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	uint64_t u = (uint64_t)value;
	unsigned i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(u >> (8 * i));
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(cbuf.buf, 0, sizeof(cbuf.buf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof(b) ? 0 : -1;
}

static unsigned n_peers(void)
{
	unsigned i, n = 0;

	for (i = 0; i < max_peers; i++)
		n += peers[i].sock >= 0;
	return n;
}

static void peer_free(unsigned id)
{
	unsigned v;

	close(peers[id].sock);
	peers[id].sock = -1;
	for (v = 0; v < n_vectors; v++) {
		if (peers[id].efd[v] >= 0)
			close(peers[id].efd[v]);
		peers[id].efd[v] = -1;
	}
}

/* Peer id is gone (EOF, a protocol violation or a failed send): tell the
 * others (step 6, an ID without an fd).  A failed notification drops that
 * peer too, so this runs until no send fails. */
static void peer_gone(unsigned slot, const char *why)
{
	unsigned other, id = peers[slot].id;

	peer_free(slot);
	st.disconnected++;
	fprintf(stderr, "mnic-ivshmem-server: peer %u %s (%u left)\n", id, why, n_peers());
	for (other = 0; other < max_peers; other++) {
		if (peers[other].sock < 0)
			continue;
		if (send_msg(peers[other].sock, (int64_t)id, -1) < 0) {
			st.dropped_send++;
			peer_gone(other, "dropped: could not take a disconnect notification");
			return;   /* the recursion told everyone left about both */
		}
	}
}

/* Steps 4 and 5 for the new peer id, and step 6 (connect) to the others. */
static int welcome(unsigned slot)
{
	struct peer *p = &peers[slot];
	unsigned other, v;

	if (send_msg(p->sock, IVSH_PROTOCOL_VERSION, -1) < 0 || send_msg(p->sock, p->id, -1) < 0 ||
	    send_msg(p->sock, -1, shm_fd) < 0)
		return -1;
	for (other = 0; other < max_peers; other++) {
		if (other == slot || peers[other].sock < 0)
			continue;
		for (v = 0; v < n_vectors; v++)
			if (send_msg(p->sock, peers[other].id, peers[other].efd[v]) < 0)
				return -1;
	}
	for (v = 0; v < n_vectors; v++)
		if (send_msg(p->sock, p->id, p->efd[v]) < 0)
			return -1;
	return 0;
}

static void accept_one(void)
{
	int sock = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	unsigned id, other, v;

	if (sock < 0)
		return;
	for (id = 0; id < max_peers && peers[id].sock >= 0; id++)
		;
	if (id >= max_peers) {
		st.refused_full++;
		fprintf(stderr, "mnic-ivshmem-server: refused a client: all %u peers connected\n",
			max_peers);
		close(sock);
		return;
	}
	if (next_id > IVSH_MAX_ID) {
		st.refused_ids++;
		fprintf(stderr, "mnic-ivshmem-server: refused a client: all %u IDs given out "
			"(never reused; restart the NIC)\n", IVSH_MAX_ID + 1);
		close(sock);
		return;
	}
	/* id is the slot from here on; the peer's ID is its own */
	peers[id].sock = sock;
	peers[id].id = next_id++;
	for (v = 0; v < n_vectors; v++) {
		/* Non-blocking: QEMU drains an eventfd by reading until EAGAIN. */
		peers[id].efd[v] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (peers[id].efd[v] < 0) {
			st.eventfd_failed++;
			fprintf(stderr, "mnic-ivshmem-server: eventfd: %s; client refused\n",
				strerror(errno));
			peer_free(id);
			return;
		}
	}
	if (welcome(id) < 0) {
		st.dropped_send++;
		fprintf(stderr, "mnic-ivshmem-server: client %u did not take its setup; dropped\n",
			peers[id].id);
		peer_free(id);
		return;
	}
	st.connected++;
	fprintf(stderr, "mnic-ivshmem-server: peer %u connected (%u peers)\n", peers[id].id, n_peers());
	for (other = 0; other < max_peers; other++) {
		if (other == id || peers[other].sock < 0)
			continue;
		for (v = 0; v < n_vectors; v++) {
			if (send_msg(peers[other].sock, peers[id].id, peers[id].efd[v]) < 0) {
				st.dropped_send++;
				peer_gone(other, "dropped: could not take a connect notification");
				break;
			}
		}
	}
}

static unsigned parse_uint(const char *s, const char *opt, unsigned lo, unsigned hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "mnic-ivshmem-server: %s wants a number in %u..%u, not '%s'\n",
			opt, lo, hi, s);
		exit(2);
	}
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	const char *shm_path = NULL;
	unsigned linger_s = 30, i, v;
	int owner_fd = -1;
	struct sockaddr_un sa;
	struct sigaction sig;
	struct stat sb;
	int served = 0;
	time_t started = time(NULL);

	for (i = 1; i < (unsigned)argc; i++) {
		const char *a = argv[i], *val = i + 1 < (unsigned)argc ? argv[i + 1] : NULL;

		if (!val)
			die("every option takes a value; usage: --socket PATH --shm FILE "
			    "[--vectors N] [--max-peers N] [--linger S] [--owner PID]");
		if (!strcmp(a, "--socket"))
			sock_path = val;
		else if (!strcmp(a, "--shm"))
			shm_path = val;
		else if (!strcmp(a, "--vectors"))
			n_vectors = parse_uint(val, a, 1, IVSH_MAX_VECTORS);
		else if (!strcmp(a, "--max-peers"))
			max_peers = parse_uint(val, a, 2, IVSH_MAX_PEERS);
		else if (!strcmp(a, "--linger"))
			linger_s = parse_uint(val, a, 1, 3600);
		else if (!strcmp(a, "--owner")) {
			pid_t pid = (pid_t)parse_uint(val, a, 1, 0x3fffffff);

			owner_fd = (int)syscall(SYS_pidfd_open, pid, 0);
			if (owner_fd < 0) {
				fprintf(stderr, "mnic-ivshmem-server: --owner %d: %s\n", (int)pid,
					errno == ESRCH ? "no such process" : strerror(errno));
				return 2;
			}
		}
		else {
			fprintf(stderr, "mnic-ivshmem-server: unknown option '%s'\n", a);
			return 2;
		}
		i++;
	}
	if (!sock_path || !shm_path)
		die("--socket PATH and --shm FILE are required");
	shm_fd = open(shm_path, O_RDWR | O_CLOEXEC);
	if (shm_fd < 0) {
		fprintf(stderr, "mnic-ivshmem-server: %s: %s\n", shm_path, strerror(errno));
		return 2;
	}
	/* QEMU maps the whole file as BAR2, and a PCI BAR is a power of two. */
	if (fstat(shm_fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    ((uint64_t)sb.st_size & ((uint64_t)sb.st_size - 1)) != 0) {
		fprintf(stderr, "mnic-ivshmem-server: %s must be a regular file whose size is a "
			"power of two (a PCI BAR)\n", shm_path);
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(sock_path) >= sizeof(sa.sun_path))
		die("--socket: path too long for a unix socket");
	strcpy(sa.sun_path, sock_path);
	/* A stale socket of a server that is gone (never a file of another
	 * kind: refuse to remove that). */
	if (lstat(sock_path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode))
			die("--socket: the path exists and is not a socket");
		unlink(sock_path);
	}
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(listen_fd, 8) < 0) {
		fprintf(stderr, "mnic-ivshmem-server: %s: %s\n", sock_path, strerror(errno));
		return 2;
	}
	for (i = 0; i < IVSH_MAX_PEERS; i++) {
		peers[i].sock = -1;
		for (v = 0; v < IVSH_MAX_VECTORS; v++)
			peers[i].efd[v] = -1;
	}
	memset(&sig, 0, sizeof(sig));
	sig.sa_handler = on_signal;
	sigaction(SIGTERM, &sig, NULL);
	sigaction(SIGINT, &sig, NULL);
	fprintf(stderr, "mnic-ivshmem-server: listening at %s, shm %s (%lld bytes), %u vectors\n",
		sock_path, shm_path, (long long)sb.st_size, n_vectors);

	while (!stop) {
		struct pollfd pfd[2 + IVSH_MAX_PEERS];
		unsigned ids[IVSH_MAX_PEERS], n = 0, k;
		int rc;

		pfd[0].fd = listen_fd;
		pfd[0].events = POLLIN;
		for (i = 0; i < max_peers; i++) {
			if (peers[i].sock < 0)
				continue;
			pfd[1 + n].fd = peers[i].sock;
			pfd[1 + n].events = POLLIN;
			ids[n++] = i;
		}
		if (n > 0)
			served = 1;
		else if (served || time(NULL) - started >= (time_t)linger_s)
			break;   /* the last client went, or none ever came */
		/* the owner last: readable once it has exited */
		pfd[1 + n].fd = owner_fd;
		pfd[1 + n].events = POLLIN;
		pfd[1 + n].revents = 0;
		rc = poll(pfd, 2 + n, 1000);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		if (pfd[1 + n].revents) {
			fprintf(stderr, "mnic-ivshmem-server: the owner process exited\n");
			break;
		}
		for (k = 0; k < n; k++) {
			char junk[64];
			ssize_t r;

			if (!pfd[1 + k].revents || peers[ids[k]].sock != pfd[1 + k].fd)
				continue;
			r = recv(pfd[1 + k].fd, junk, sizeof(junk), MSG_DONTWAIT);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
				peer_gone(ids[k], "disconnected");
			} else if (r > 0) {
				st.dropped_talk++;
				peer_gone(ids[k], "dropped: sent data on a one-way protocol");
			}
		}
		if (pfd[0].revents & POLLIN)
			accept_one();
	}
	for (i = 0; i < max_peers; i++)
		if (peers[i].sock >= 0)
			peer_free(i);
	unlink(sock_path);
	fprintf(stderr, "mnic-ivshmem-server: exit: connected %lu disconnected %lu refused_full %lu "
		"refused_ids %lu dropped_send %lu dropped_talk %lu eventfd_failed %lu\n", st.connected,
		st.disconnected, st.refused_full, st.refused_ids, st.dropped_send, st.dropped_talk,
		st.eventfd_failed);
	return 0;
}
