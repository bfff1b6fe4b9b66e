/* Receiving a message with a file descriptor on a unix socket (SCM_RIGHTS),
 * shared by the two doorbell transports of the BAR backend: the POSIX
 * NIC's channel (dbch.c) and a QEMU NIC's ivshmem server (ivsh.c).
 * Async-signal-safe (recvmsg, close, memcpy). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libmnic_int.h"

ssize_t mnic_recv_with_fd(int sock, void *buf, size_t len, int flags, int *fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);

	*fd = -1;
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = f;
			else
				close(f);   /* one fd per message: the rest is junk */
		}
	}
	if (mh.msg_flags & MSG_CTRUNC) {
		/* more fds than we made room for: the kernel closed some, and
		 * the sender broke the protocol */
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EPROTO;
	}
	return n;
}
