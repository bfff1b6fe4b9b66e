/* The POSIX NIC's doorbell channel (hal/posix/doorbell.c) with libmnic's
 * end of it (hostdrv/lib/dbch.c), over real sockets and eventfds in a
 * temporary folder: a host connects, rings and is raised; hostile messages,
 * fds and connection floods are refused, counted, and the channel serves
 * on; a host's leaving frees its slot; a reconnect (mnic_reopen_inplace)
 * keeps the host's eventfd. */
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
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "hal/errno.h"
#include "libmnic_int.h"
#include "mnic/dbch.h"
#include "posix.h"

static char dir[64], bar[96], sock_path[112];
static struct posix_doorbell pd;

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/dbirq-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(bar, sizeof(bar), "%s/n.bar", dir);
	snprintf(sock_path, sizeof(sock_path), "%s%s", bar, MNIC_DBCH_SUFFIX);
	assert_int_equal(posix_doorbell_open(&pd, sock_path), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	posix_doorbell_close(&pd);
	unlink(sock_path);
	rmdir(dir);
	return 0;
}

/* ---- libmnic's end, connecting while this thread plays the NIC ---------- */

struct client {
	struct mnic_dev dev;
	const char *bar;
	int err;
	volatile int done;
};

static void *client_main(void *arg)
{
	struct client *c = arg;

	c->err = mnic_dbch_open(&c->dev, c->bar);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *client_reconnect(void *arg)
{
	struct client *c = arg;

	c->err = mnic_dbch_connect(&c->dev, c->bar, strlen(c->bar));
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Run fn in a thread while serving ch until it is done. */
static void serve_while(struct posix_doorbell *ch, struct client *c, void *(*fn)(void *))
{
	pthread_t t;

	c->done = 0;
	assert_int_equal(pthread_create(&t, NULL, fn, c), 0);
	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
		posix_doorbell_serve(ch);
		usleep(100);
	}
	pthread_join(t, NULL);
}

static void connect_client(struct client *c, const char *path)
{
	memset(c, 0, sizeof(*c));
	c->bar = path;
	serve_while(&pd, c, client_main);
	assert_int_equal(c->err, 0);
	assert_true(c->dev.db_sock >= 0);
	assert_true(c->dev.db_ring_fd >= 0);
	assert_true(c->dev.db_irq_fd >= 0);
}

static void test_host_rings_and_is_raised(void **state)
{
	struct client c;

	(void)state;
	connect_client(&c, bar);
	assert_int_equal(pd.db.stats.hosts_connected, 1);
	assert_int_equal(pd.n_hosts, 1);
	assert_true(pd.hosts[0].vec_fd[MNIC_DBCH_VEC_CMD] >= 0);

	assert_int_equal(hal_doorbell_rang(&pd.db), 0);
	mnic_dbch_ring(&c.dev);
	mnic_dbch_ring(&c.dev);
	/* two rings before a look are one: consumed */
	assert_int_equal(hal_doorbell_rang(&pd.db), 1);
	assert_int_equal(hal_doorbell_rang(&pd.db), 0);
	assert_int_equal(pd.db.stats.rings, 1);

	assert_int_equal(mnic_dbch_wait(&c.dev, 0), 0);
	assert_int_equal(hal_doorbell_raise(&pd.db, MNIC_DBCH_VEC_CMD), 0);
	assert_int_equal(pd.db.stats.raises, 1);
	assert_int_equal(mnic_dbch_wait(&c.dev, 1000), 1);
	/* the wakeup was drained */
	assert_int_equal(mnic_dbch_wait(&c.dev, 0), 0);
	assert_int_equal(hal_doorbell_raise(&pd.db, POSIX_DB_VECTORS), -HAL_EINVAL);

	/* the host leaves: its slot and eventfd are released */
	mnic_dbch_close(&c.dev);
	posix_doorbell_serve(&pd);
	assert_int_equal(pd.db.stats.hosts_disconnected, 1);
	assert_int_equal(pd.n_hosts, 0);
	assert_int_equal(hal_doorbell_raise(&pd.db, MNIC_DBCH_VEC_CMD), 0);
	assert_int_equal(pd.db.stats.raises, 1);
}

static void test_no_channel_or_disabled(void **state)
{
	struct mnic_dev d;
	char other[128];

	(void)state;
	snprintf(other, sizeof(other), "%s/none.bar", dir);
	memset(&d, 0, sizeof(d));
	assert_int_equal(mnic_dbch_open(&d, other), 0);
	assert_int_equal(d.db_sock, -1);
	assert_int_equal(d.db_ring_fd, -1);
	assert_int_equal(mnic_dbch_wait(&d, 0), -ENOTCONN);
	mnic_dbch_ring(&d);   /* a no-op */
	mnic_dbch_close(&d);

	setenv("MNIC_DOORBELL_CHANNEL", "off", 1);
	memset(&d, 0, sizeof(d));
	assert_int_equal(mnic_dbch_open(&d, bar), 0);
	unsetenv("MNIC_DOORBELL_CHANNEL");
	assert_int_equal(d.db_sock, -1);
	assert_int_equal(d.db_irq_fd, -1);
	posix_doorbell_serve(&pd);
	assert_int_equal(pd.db.stats.hosts_connected, 0);
	mnic_dbch_close(&d);
}

/* ---- hostile hosts, by hand ---------------------------------------------- */

static int raw_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	strcpy(sa.sun_path, sock_path);
	assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return s;
}

/* A message (len bytes of m) with nfd copies of fd. */
static void raw_send(int s, const void *m, size_t len, int fd, unsigned nfd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)m, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfd) {
		struct cmsghdr *c;

		memset(cbuf.buf, 0, sizeof(cbuf.buf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfd * sizeof(int));
		for (unsigned i = 0; i < nfd; i++)
			memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));
	}
	assert_int_equal(sendmsg(s, &mh, MSG_NOSIGNAL), (ssize_t)len);
}

/* The next message; its fd count into *nfd (fds closed). 0 on EOF. */
static ssize_t raw_recv(int s, struct mnic_dbch_msg *m, unsigned *nfd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	ssize_t n = recvmsg(s, &mh, MSG_DONTWAIT);

	*nfd = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n >= 0 && c; c = CMSG_NXTHDR(&mh, c))
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(f);
			(*nfd)++;
		}
	return n;
}

static int raw_welcomed(void)
{
	struct mnic_dbch_msg m;
	unsigned nfd;
	int s = raw_connect();

	posix_doorbell_serve(&pd);
	assert_int_equal(raw_recv(s, &m, &nfd), (ssize_t)sizeof(m));
	assert_int_equal(m.type, MNIC_DBCH_WELCOME);
	assert_int_equal(m.n_vectors, POSIX_DB_VECTORS);
	assert_int_equal(nfd, 1);
	return s;
}

static uint32_t reply_status(int s)
{
	struct mnic_dbch_msg m;
	unsigned nfd;

	assert_int_equal(raw_recv(s, &m, &nfd), (ssize_t)sizeof(m));
	assert_int_equal(m.type, MNIC_DBCH_REPLY);
	assert_int_equal(nfd, 0);
	return m.status;
}

static void test_hostile_messages_counted(void **state)
{
	struct mnic_dbch_msg v = { .magic = MNIC_DBCH_MAGIC, .version = MNIC_DBCH_VERSION,
				   .type = MNIC_DBCH_VECTOR, .vector = MNIC_DBCH_VEC_CMD };
	struct mnic_dbch_msg bad;
	int s, efd = eventfd(0, EFD_CLOEXEC), pfd[2];
	struct client good;

	(void)state;
	assert_true(efd >= 0);
	assert_int_equal(pipe(pfd), 0);
	s = raw_welcomed();

	raw_send(s, "garbage", 7, -1, 0);                    /* short */
	bad = v;
	bad.magic ^= 1;
	raw_send(s, &bad, sizeof(bad), efd, 1);              /* magic, with an fd */
	bad = v;
	bad.version = 9;
	raw_send(s, &bad, sizeof(bad), -1, 0);
	bad = v;
	bad.type = MNIC_DBCH_WELCOME;
	raw_send(s, &bad, sizeof(bad), -1, 0);
	{
		uint8_t big[64] = { 0 };

		memcpy(big, &v, sizeof(v));
		raw_send(s, big, sizeof(big), -1, 0);        /* too long */
	}
	posix_doorbell_serve(&pd);
	assert_int_equal(pd.db.stats.bad_messages, 5);

	raw_send(s, &v, sizeof(v), -1, 0);                   /* no fd */
	raw_send(s, &v, sizeof(v), efd, 2);                  /* two */
	raw_send(s, &v, sizeof(v), pfd[1], 1);               /* not an eventfd */
	posix_doorbell_serve(&pd);
	assert_int_equal(pd.db.stats.bad_fds, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(reply_status(s), MNIC_DBCH_BAD_FD);

	bad = v;
	bad.vector = POSIX_DB_VECTORS;   /* one past the last */
	raw_send(s, &bad, sizeof(bad), efd, 1);
	posix_doorbell_serve(&pd);
	assert_int_equal(pd.db.stats.bad_vectors, 1);
	assert_int_equal(reply_status(s), MNIC_DBCH_BAD_VECTOR);
	assert_int_equal(pd.hosts[0].vec_fd[0], -1);   /* nothing taken */

	/* the same host, now right: accepted, made non-blocking, raised */
	raw_send(s, &v, sizeof(v), efd, 1);
	posix_doorbell_serve(&pd);
	assert_int_equal(reply_status(s), MNIC_DBCH_OK);
	assert_true(fcntl(efd, F_GETFL) & O_NONBLOCK);
	hal_doorbell_raise(&pd.db, 0);
	{
		uint64_t n = 0;

		assert_int_equal(read(efd, &n, sizeof(n)), (ssize_t)sizeof(n));
		assert_int_equal(n, 1);
	}
	/* and the channel still serves another host */
	connect_client(&good, bar);
	hal_doorbell_raise(&pd.db, 0);
	assert_int_equal(mnic_dbch_wait(&good.dev, 1000), 1);
	assert_int_equal(pd.db.stats.hosts_connected, 2);
	assert_int_equal(pd.db.stats.hosts_dropped, 0);
	mnic_dbch_close(&good.dev);
	close(s);
	close(efd);
	close(pfd[0]);
	close(pfd[1]);
}

static void test_connection_flood_refused(void **state)
{
	int s[POSIX_DB_MAX_HOSTS + 4];
	unsigned n = sizeof(s) / sizeof(s[0]), welcomed = 0, refused = 0;

	(void)state;
	/* in waves the listen backlog holds (a connect past it would wait) */
	for (unsigned i = 0; i < n; i++) {
		s[i] = raw_connect();
		if (i % 4 == 3)
			posix_doorbell_serve(&pd);
	}
	posix_doorbell_serve(&pd);
	assert_int_equal(pd.db.stats.hosts_connected, POSIX_DB_MAX_HOSTS);
	assert_int_equal(pd.db.stats.hosts_refused, n - POSIX_DB_MAX_HOSTS);
	for (unsigned i = 0; i < n; i++) {
		struct mnic_dbch_msg m;
		unsigned nfd;
		ssize_t got = raw_recv(s[i], &m, &nfd);

		if (got == (ssize_t)sizeof(m) && m.type == MNIC_DBCH_WELCOME)
			welcomed++;
		else if (got == 0)
			refused++;   /* closed without a word */
	}
	assert_int_equal(welcomed, POSIX_DB_MAX_HOSTS);
	assert_int_equal(refused, n - POSIX_DB_MAX_HOSTS);
	/* one leaves: its slot takes the next host */
	close(s[0]);
	posix_doorbell_serve(&pd);
	assert_int_equal(pd.db.stats.hosts_disconnected, 1);
	for (unsigned i = 1; i < n; i++)
		close(s[i]);
	posix_doorbell_serve(&pd);
	assert_int_equal(pd.n_hosts, 0);
	close(raw_welcomed());
	assert_int_equal(pd.db.stats.hosts_connected, POSIX_DB_MAX_HOSTS + 1);
}

/* mnic_reopen_inplace: the same eventfd, now the target NIC's to raise. */
static void test_reconnect_to_another_nic(void **state)
{
	struct posix_doorbell other;
	char bar2[128], sock2[136];
	struct client c;
	int irq;

	(void)state;
	snprintf(bar2, sizeof(bar2), "%s/target.bar", dir);
	snprintf(sock2, sizeof(sock2), "%s%s", bar2, MNIC_DBCH_SUFFIX);
	assert_int_equal(posix_doorbell_open(&other, sock2), 0);
	connect_client(&c, bar);
	irq = c.dev.db_irq_fd;
	c.bar = bar2;
	serve_while(&other, &c, client_reconnect);
	assert_int_equal(c.err, 0);
	assert_int_equal(c.dev.db_irq_fd, irq);
	posix_doorbell_serve(&pd);
	assert_int_equal(pd.db.stats.hosts_disconnected, 1);   /* the old link closed */
	mnic_dbch_ring(&c.dev);
	assert_int_equal(hal_doorbell_rang(&other.db), 1);
	assert_int_equal(hal_doorbell_rang(&pd.db), 0);
	hal_doorbell_raise(&other.db, 0);
	assert_int_equal(mnic_dbch_wait(&c.dev, 1000), 1);
	mnic_dbch_close(&c.dev);
	posix_doorbell_close(&other);
	assert_int_equal(access(sock2, F_OK), -1);   /* unlinked */
}

static void test_socket_path_rules(void **state)
{
	struct posix_doorbell again;
	char file[128], longp[200];
	int fd;

	(void)state;
	/* a stale socket (a NIC that died) is replaced */
	assert_int_equal(posix_doorbell_open(&again, sock_path), 0);
	posix_doorbell_close(&again);
	assert_int_equal(posix_doorbell_open(&pd, sock_path), 0);
	/* anything else is not ours to remove */
	snprintf(file, sizeof(file), "%s/plain", dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(posix_doorbell_open(&again, file), -HAL_EEXIST);
	assert_int_equal(access(file, F_OK), 0);
	unlink(file);
	memset(longp, 'x', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(posix_doorbell_open(&again, longp), -HAL_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_host_rings_and_is_raised, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_channel_or_disabled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_messages_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_flood_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reconnect_to_another_nic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_path_rules, setup, teardown),
	};
	return cmocka_run_group_tests_name("hal/posix/doorbell", tests, NULL, NULL);
}
