/* The host BAR as a shared file.  A QEMU NIC's ivshmem-plain BAR2 is backed
 * by -object memory-backend-file,share=on,mem-path=FILE, so a host process
 * maps a POSIX NIC's BAR and a QEMU NIC's BAR the same way: MAP_SHARED on the
 * file.  The file is not removed on close: it belongs to the test or
 * orchestrator that named it, and may outlive this process (migration).
 *
 * A file that shrinks under the mapping (any process may truncate it) turns
 * every access past its new end into SIGBUS.  Nothing can prevent that:
 * truncation takes the pages out of the page cache and out of every mapping,
 * locked (mlock) and prefaulted (MAP_POPULATE) ones too, and only a memfd can
 * be sealed against shrinking (F_SEAL_SHRINK), while this is a named file
 * QEMU and host processes open.  Nor can the firmware recover from it: the
 * host memory its rings, MRs and command queue live in is gone.  So the NIC
 * stops, clearly and at once, without another write to the file:
 *   - bar_shm_check(), from the platform's poll on every loop iteration
 *     (rate-limited to BAR_SHM_CHECK_NS), compares the file's size (fstat on
 *     a descriptor kept open) with the mapping: the usual way a shrink is
 *     seen, before any access faults;
 *   - a SIGBUS handler catches the access that faults before the next check:
 *     it reports (async-signal-safe writes only) and _exits.  It never
 *     returns into the firmware (no sigsetjmp): an access interrupted
 *     half-way leaves no state worth resuming.
 * Both name the file and both sizes and exit with BAR_SHM_EXIT. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hal/errno.h"
#include "posix.h"

/* The one guarded BAR of this process (the platform maps one). */
static struct {
	int fd;                    /* the BAR file, kept open for fstat */
	const char *path;
	volatile uint8_t *base;
	size_t size;
	struct sigaction previous;
} guard = { .fd = -1 };

/* ---- async-signal-safe report -------------------------------------------- */

struct sig_msg {
	char buf[512];
	size_t len;
};

static void msg_str(struct sig_msg *m, const char *s)
{
	while (*s && m->len < sizeof(m->buf))
		m->buf[m->len++] = *s++;
}

static void msg_u64(struct sig_msg *m, uint64_t v)
{
	char digits[20];
	unsigned n = 0;

	do {
		digits[n++] = (char)('0' + v % 10u);
		v /= 10u;
	} while (v);
	while (n && m->len < sizeof(m->buf))
		m->buf[m->len++] = digits[--n];
}

static void bar_sigbus(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t at = (uintptr_t)si->si_addr, base = (uintptr_t)guard.base;
	struct sig_msg m = { .len = 0 };
	struct stat st;

	(void)uctx;
	if (!guard.base || at < base || at - base >= guard.size) {
		/* not the BAR's: the default action, as without this handler */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	msg_str(&m, "posix: BAR ");
	msg_str(&m, guard.path);
	msg_str(&m, ": an access at offset ");
	msg_u64(&m, at - base);
	msg_str(&m, " faulted (SIGBUS): the file shrank under the NIC's mapping of ");
	msg_u64(&m, guard.size);
	msg_str(&m, " bytes");
	if (fstat(guard.fd, &st) == 0) {
		msg_str(&m, " to ");
		msg_u64(&m, (uint64_t)st.st_size);
		msg_str(&m, " bytes");
	}
	msg_str(&m, "; the host memory is gone, stopping without touching the file again\n");
	if (write(STDERR_FILENO, m.buf, m.len) < 0) {
		/* nothing left to report with */
	}
	_exit(BAR_SHM_EXIT);
}

int bar_shm_open(struct hal_hostif *h, const char *path, size_t size)
{
	struct sigaction sa;
	struct stat st;
	void *bar;
	int fd, err;

	memset(h, 0, sizeof(*h));
	if (guard.base) {
		fprintf(stderr, "posix: BAR %s: %s is mapped already (one BAR per process)\n",
			path, guard.path);
		return -HAL_EBUSY;
	}
	if (size == 0) {
		fprintf(stderr, "posix: BAR %s: size must not be 0\n", path);
		return -HAL_EINVAL;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "posix: BAR %s: cannot open: %s\n", path, strerror(errno));
		return -HAL_ENODEV;
	}
	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "posix: BAR %s: cannot stat: %s\n", path, strerror(errno));
		err = -HAL_EIO;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "posix: BAR %s: not a regular file\n", path);
		err = -HAL_EINVAL;
		goto out_close;
	}
	/* Only ever grown: a larger file may have been sized by the host side,
	 * and shrinking it under another mapping would fault that process. */
	if ((uint64_t)st.st_size < size && ftruncate(fd, (off_t)size) < 0) {
		fprintf(stderr, "posix: BAR %s: cannot grow to %zu bytes: %s\n", path, size,
			strerror(errno));
		err = -HAL_EIO;
		goto out_close;
	}
	bar = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (bar == MAP_FAILED) {
		fprintf(stderr, "posix: BAR %s: cannot map %zu bytes: %s\n", path, size,
			strerror(errno));
		err = -HAL_ENOMEM;
		goto out_close;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = bar_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	guard.fd = fd;   /* kept: bar_shm_check() and the handler fstat it */
	guard.path = path;
	guard.size = size;
	guard.base = bar;
	if (sigaction(SIGBUS, &sa, &guard.previous) < 0) {
		fprintf(stderr, "posix: BAR %s: cannot install the SIGBUS handler: %s\n", path,
			strerror(errno));
		guard.base = NULL;
		guard.fd = -1;
		munmap(bar, size);
		err = -HAL_EIO;
		goto out_close;
	}

	h->bar = bar;
	h->bar_size = size;
	h->bar_bus_addr = 0;   /* no bus: host addresses are BAR offsets */
	h->backing = path;
	return 0;

out_close:
	close(fd);
	return err;
}

int bar_shm_check(const struct hal_hostif *h)
{
	struct stat st;

	if (!h->bar || h->bar != guard.base)
		return 0;
	if (fstat(guard.fd, &st) < 0) {
		fprintf(stderr, "posix: BAR %s: cannot stat: %s\n", guard.path, strerror(errno));
		return -HAL_EIO;
	}
	if ((uint64_t)st.st_size >= guard.size)
		return 0;
	fprintf(stderr, "posix: BAR %s: the file shrank to %llu bytes under the NIC's mapping of "
		"%zu bytes; the host memory is gone, stopping without touching the file again\n",
		guard.path, (unsigned long long)st.st_size, guard.size);
	return -HAL_EIO;
}

void bar_shm_close(struct hal_hostif *h)
{
	if (h->bar && h->bar == guard.base) {
		sigaction(SIGBUS, &guard.previous, NULL);
		close(guard.fd);
		guard.fd = -1;
		guard.base = NULL;
	}
	if (h->bar)
		munmap((void *)(uintptr_t)h->bar, h->bar_size);
	memset(h, 0, sizeof(*h));
}
