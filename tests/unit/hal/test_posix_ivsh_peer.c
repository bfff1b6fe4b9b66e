/* The POSIX NIC as a peer of an ivshmem server (hal/posix/ivsh_peer.c),
 * against a server played by this test over a real unix socket with real
 * eventfds: the setup (version, ID, memory, peers' and own vectors); a
 * ring on vector 0 and on a later vector; raise() to the hosts the init
 * segment names, refused for an unknown ID or a vector the host lacks;
 * hostile messages (an ID out of range, a pipe for an eventfd, too many
 * peers, too many vectors, a short message) refused and counted; a peer
 * leaving; the server going; setups that fail say why. */
#include "cmocka_main.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "hal/errno.h"
#include "posix.h"

static char dir[64], path[96];
static int listen_fd = -1;
static struct posix_ivsh pi;

struct opener {
	pthread_t t;
	int ret;
};

static void *open_main(void *arg)
{
	struct opener *o = arg;

	o->ret = posix_ivsh_open(&pi, path);
	return NULL;
}

static void start_open(struct opener *o)
{
	assert_int_equal(pthread_create(&o->t, NULL, open_main, o), 0);
}

static int finish_open(struct opener *o)
{
	assert_int_equal(pthread_join(o->t, NULL), 0);
	return o->ret;
}

static int setup(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	(void)state;
	strcpy(dir, "/tmp/ivshpeer-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/n.bar.ivsh", dir);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(listen_fd >= 0);
	assert_int_equal(bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(listen_fd, 4), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	posix_ivsh_close(&pi);
	close(listen_fd);
	unlink(path);
	rmdir(dir);
	return 0;
}

/* One protocol message: an 8-byte little-endian number, maybe an fd. */
static void send_msg(int s, int64_t value, int fd)
{
	uint8_t b[8];
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	for (unsigned i = 0; i < 8; i++)
		b[i] = (uint8_t)((uint64_t)value >> (8 * i));
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
	assert_int_equal(sendmsg(s, &mh, MSG_NOSIGNAL), (ssize_t)sizeof(b));
}

static int efd(void)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static uint64_t efd_take(int fd)
{
	uint64_t v = 0;

	return read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? v : 0;
}

static void efd_ring(int fd)
{
	uint64_t one = 1;

	assert_int_equal(write(fd, &one, sizeof(one)), (ssize_t)sizeof(one));
}

/* Serve until the socket has nothing more (the messages are in flight in
 * one process: a few passes take them all). */
static void serve_all(void)
{
	for (int i = 0; i < 4; i++)
		posix_ivsh_serve(&pi);
}

#define SELF 3
#define HOST 5
#define OWN_VECTORS 4
#define HOST_VECTORS 2

/* The server's side of one good setup: our ID SELF, host HOST with
 * HOST_VECTORS vectors already connected, our OWN_VECTORS vectors. */
static int good_setup(int own[OWN_VECTORS], int host[HOST_VECTORS])
{
	struct opener o;
	int s, mem = efd();

	start_open(&o);
	s = accept(listen_fd, NULL, NULL);
	assert_true(s >= 0);
	send_msg(s, 0, -1);
	send_msg(s, SELF, -1);
	send_msg(s, -1, mem);
	for (int v = 0; v < HOST_VECTORS; v++) {
		host[v] = efd();
		send_msg(s, HOST, host[v]);
	}
	for (int v = 0; v < OWN_VECTORS; v++) {
		own[v] = efd();
		send_msg(s, SELF, own[v]);
	}
	assert_int_equal(finish_open(&o), 0);
	/* the open returns once one of our vectors is in and nothing else
	 * waits at that instant; the rest (still being sent by this thread)
	 * come through posix_ivsh_serve, as a late server's would */
	serve_all();
	close(mem);
	return s;
}

static void test_setup_ring_raise(void **state)
{
	int own[OWN_VECTORS], host[HOST_VECTORS], s;
	struct hal_doorbell *d = &pi.db;

	(void)state;
	s = good_setup(own, host);
	assert_int_equal(d->self_id, SELF);
	assert_int_equal(pi.n_own, OWN_VECTORS);
	assert_int_equal(d->stats.hosts_connected, 1);
	assert_int_equal(d->every_store_rings, 0);

	/* nothing rang yet; vector 0 rings at once, once */
	assert_int_equal(hal_doorbell_rang(d), 0);
	efd_ring(own[0]);
	efd_ring(own[0]);
	assert_int_equal(hal_doorbell_rang(d), 1);
	assert_int_equal(hal_doorbell_rang(d), 0);
	/* a later vector (any a VM's Doorbell write names) through serve */
	efd_ring(own[2]);
	serve_all();
	assert_int_equal(hal_doorbell_rang(d), 1);
	assert_int_equal(hal_doorbell_rang(d), 0);
	assert_int_equal(d->stats.rings, 2);

	/* raise: only the hosts the init segment names */
	assert_int_equal(hal_doorbell_raise(d, 1), 0);
	assert_int_equal(efd_take(host[1]), 0);
	d->hosts[0] = HOST;
	d->hosts[1] = 9;      /* never announced */
	d->hosts[2] = SELF;   /* the NIC itself: skipped */
	assert_int_equal(hal_doorbell_raise(d, 1), 0);
	assert_int_equal(efd_take(host[1]), 1);
	assert_int_equal(efd_take(host[0]), 0);
	assert_int_equal(d->stats.raises, 1);
	assert_int_equal(d->stats.raise_failed, 1);   /* ID 9 */
	/* a vector the host has not (it gave 2) */
	assert_int_equal(hal_doorbell_raise(d, 3), 0);
	assert_int_equal(d->stats.raise_failed, 3);
	/* a vector beyond the channel's */
	assert_int_equal(hal_doorbell_raise(d, POSIX_DB_VECTORS), -HAL_EINVAL);
	assert_int_equal(d->stats.bad_vectors, 1);

	/* a host that comes later, then goes */
	{
		int late = efd();

		send_msg(s, 7, late);
		serve_all();
		d->hosts[3] = 7;
		assert_int_equal(hal_doorbell_raise(d, 0), 0);
		assert_int_equal(efd_take(late), 1);
		send_msg(s, 7, -1);
		serve_all();
		assert_int_equal(d->stats.hosts_disconnected, 1);
		assert_int_equal(hal_doorbell_raise(d, 0), 0);
		assert_int_equal(efd_take(late), 0);
		close(late);
	}

	for (int v = 0; v < OWN_VECTORS; v++)
		close(own[v]);
	for (int v = 0; v < HOST_VECTORS; v++)
		close(host[v]);
	close(s);
	serve_all();
	/* the server went: counted, the socket closed, rings still work */
	assert_int_equal(pi.sock, -1);
	assert_int_equal(d->stats.hosts_disconnected, 2);
}

static void test_hostile_server(void **state)
{
	int own[OWN_VECTORS], host[HOST_VECTORS], s, p[2], fds[POSIX_IVSH_MAX_PEERS + 2];
	struct hal_doorbell *d = &pi.db;
	uint64_t bad_msgs, refused;

	(void)state;
	s = good_setup(own, host);
	/* an ID beyond 16 bits, with and without an fd */
	send_msg(s, 70000, efd());
	send_msg(s, -5, -1);
	/* our own ID "gone": we are here */
	send_msg(s, SELF, -1);
	serve_all();
	assert_int_equal(d->stats.bad_messages, 3);
	/* a pipe where an eventfd must be (raise would block on it) */
	assert_int_equal(pipe(p), 0);
	send_msg(s, 6, p[1]);
	serve_all();
	assert_int_equal(d->stats.bad_fds, 1);
	close(p[0]);
	close(p[1]);
	/* more vectors for the host than we raise: the extra ones closed */
	for (unsigned v = HOST_VECTORS; v < POSIX_DB_VECTORS + 2; v++)
		send_msg(s, HOST, efd());
	serve_all();
	assert_int_equal(d->stats.bad_vectors, 2);
	/* more peers than slots */
	refused = d->stats.hosts_refused;
	for (unsigned i = 0; i < POSIX_IVSH_MAX_PEERS + 2; i++) {
		fds[i] = efd();
		send_msg(s, 100 + i, fds[i]);
	}
	serve_all();
	serve_all();
	assert_true(d->stats.hosts_refused >= refused + 3);   /* 16 slots, HOST holds one */
	/* a short message breaks the stream: the connection is dropped */
	bad_msgs = d->stats.bad_messages;
	assert_int_equal(send(s, "abc", 3, MSG_NOSIGNAL), 3);
	serve_all();
	assert_int_equal(d->stats.bad_messages, bad_msgs + 1);
	assert_int_equal(pi.sock, -1);
	/* what we knew still serves */
	efd_ring(own[0]);
	assert_int_equal(hal_doorbell_rang(d), 1);
	d->hosts[0] = HOST;
	assert_int_equal(hal_doorbell_raise(d, 0), 0);
	assert_int_equal(efd_take(host[0]), 1);

	for (unsigned i = 0; i < POSIX_IVSH_MAX_PEERS + 2; i++)
		close(fds[i]);
	for (int v = 0; v < OWN_VECTORS; v++)
		close(own[v]);
	for (int v = 0; v < HOST_VECTORS; v++)
		close(host[v]);
	close(s);
}

/* Setups that fail: each closes what it took and returns -HAL_EIO. */
static void test_bad_setups(void **state)
{
	struct opener o;
	int s, mem;

	(void)state;
	/* version 1 */
	start_open(&o);
	s = accept(listen_fd, NULL, NULL);
	send_msg(s, 1, -1);
	assert_int_equal(finish_open(&o), -HAL_EIO);
	assert_int_equal(pi.sock, -1);
	close(s);
	/* an ID with an fd */
	start_open(&o);
	s = accept(listen_fd, NULL, NULL);
	send_msg(s, 0, -1);
	mem = efd();
	send_msg(s, 2, mem);
	assert_int_equal(finish_open(&o), -HAL_EIO);
	close(s);
	/* no vector of our own: nothing to be rung on */
	start_open(&o);
	s = accept(listen_fd, NULL, NULL);
	send_msg(s, 0, -1);
	send_msg(s, 2, -1);
	send_msg(s, -1, mem);
	send_msg(s, 4, mem);   /* another peer's only */
	assert_int_equal(finish_open(&o), -HAL_EIO);
	assert_int_equal(pi.n_own, 0);
	close(s);
	close(mem);
	/* no server at all */
	unlink(path);
	assert_int_equal(posix_ivsh_open(&pi, path), -HAL_EIO);
	/* a path too long for a unix socket */
	{
		char longp[200];

		memset(longp, 'a', sizeof(longp) - 1);
		longp[sizeof(longp) - 1] = 0;
		assert_int_equal(posix_ivsh_open(&pi, longp), -HAL_EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_setup_ring_raise, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_server, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_setups, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
