/* The host BAR, and the host-memory aperture, as shared files.  A QEMU NIC's ivshmem-plain BAR2 is backed
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
 * Both name the file and both sizes and exit with BAR_SHM_EXIT.
 *
 * The host-memory aperture (--hostmem, docs/host-interface.md "Host memory
 * and translation") is a second such file, guarded the same way: the
 * host's "physical memory", whose offsets are host-physical addresses. */
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

/* The guarded mappings of this process: one BAR and one host-memory
 * aperture (the platform maps at most one of each).  The SIGBUS handler is
 * installed with the first and the previous action restored with the last. */
enum shm_kind { SHM_BAR, SHM_HOSTMEM, SHM_KINDS };

static struct shm_guard {
	int fd;                    /* the file, kept open for fstat */
	const char *path;
	volatile uint8_t *base;
	size_t size;
} guards[SHM_KINDS] = { { .fd = -1 }, { .fd = -1 } };

static const char *const shm_what[SHM_KINDS] = { "BAR", "host memory" };
static struct sigaction previous;
static unsigned n_guarded;

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

static void shm_sigbus(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t at = (uintptr_t)si->si_addr, base = 0;
	struct sig_msg m = { .len = 0 };
	const struct shm_guard *g = NULL;
	struct stat st;
	unsigned k;

	(void)uctx;
	for (k = 0; k < SHM_KINDS && !g; k++) {
		base = (uintptr_t)guards[k].base;
		if (guards[k].base && at >= base && at - base < guards[k].size)
			g = &guards[k];
	}
	if (!g) {
		/* not a guarded file's: the default action, as without this handler */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	msg_str(&m, "posix: ");
	msg_str(&m, shm_what[g - guards]);
	msg_str(&m, " ");
	msg_str(&m, g->path);
	msg_str(&m, ": an access at offset ");
	msg_u64(&m, at - base);
	msg_str(&m, " faulted (SIGBUS): the file shrank under the NIC's mapping of ");
	msg_u64(&m, g->size);
	msg_str(&m, " bytes");
	if (fstat(g->fd, &st) == 0) {
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

/* Map path shared into guards[k]: size bytes (the file grown to them if
 * smaller), or with size 0 the file's own size, which must then be a
 * non-zero multiple of the 4 KiB page. */
static int shm_map(enum shm_kind k, const char *path, size_t size)
{
	struct shm_guard *g = &guards[k];
	const char *what = shm_what[k];
	struct sigaction sa;
	struct stat st;
	void *base;
	int fd, err;

	if (g->base) {
		fprintf(stderr, "posix: %s %s: %s is mapped already (one per process)\n", what,
			path, g->path);
		return -HAL_EBUSY;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "posix: %s %s: cannot open: %s\n", what, path, strerror(errno));
		return -HAL_ENODEV;
	}
	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "posix: %s %s: cannot stat: %s\n", what, path, strerror(errno));
		err = -HAL_EIO;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "posix: %s %s: not a regular file\n", what, path);
		err = -HAL_EINVAL;
		goto out_close;
	}
	if (size == 0) {
		if (st.st_size <= 0 || (st.st_size & 4095) || (uint64_t)st.st_size > SIZE_MAX) {
			fprintf(stderr, "posix: %s %s: the file's size (%llu bytes) is the size: make "
				"it a non-zero multiple of 4096 bytes (truncate -s), or give the size\n",
				what, path, (unsigned long long)st.st_size);
			err = -HAL_EINVAL;
			goto out_close;
		}
		size = (size_t)st.st_size;
	}
	/* Only ever grown: a larger file may have been sized by the host side,
	 * and shrinking it under another mapping would fault that process. */
	if ((uint64_t)st.st_size < size && ftruncate(fd, (off_t)size) < 0) {
		fprintf(stderr, "posix: %s %s: cannot grow to %zu bytes: %s\n", what, path, size,
			strerror(errno));
		err = -HAL_EIO;
		goto out_close;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		fprintf(stderr, "posix: %s %s: cannot map %zu bytes: %s\n", what, path, size,
			strerror(errno));
		err = -HAL_ENOMEM;
		goto out_close;
	}
	if (n_guarded == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = shm_sigbus;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, &previous) < 0) {
			fprintf(stderr, "posix: %s %s: cannot install the SIGBUS handler: %s\n", what,
				path, strerror(errno));
			munmap(base, size);
			err = -HAL_EIO;
			goto out_close;
		}
	}
	n_guarded++;
	g->fd = fd;   /* kept: shm_check() and the handler fstat it */
	g->path = path;
	g->size = size;
	g->base = base;
	return 0;

out_close:
	close(fd);
	return err;
}

static int shm_check(enum shm_kind k, const volatile uint8_t *base)
{
	const struct shm_guard *g = &guards[k];
	struct stat st;

	if (!base || base != g->base)
		return 0;
	if (fstat(g->fd, &st) < 0) {
		fprintf(stderr, "posix: %s %s: cannot stat: %s\n", shm_what[k], g->path,
			strerror(errno));
		return -HAL_EIO;
	}
	if ((uint64_t)st.st_size >= g->size)
		return 0;
	fprintf(stderr, "posix: %s %s: the file shrank to %llu bytes under the NIC's mapping of "
		"%zu bytes; the host memory is gone, stopping without touching the file again\n",
		shm_what[k], g->path, (unsigned long long)st.st_size, g->size);
	return -HAL_EIO;
}

static void shm_unmap(enum shm_kind k, volatile uint8_t *base, size_t size)
{
	struct shm_guard *g = &guards[k];

	if (base && base == g->base) {
		if (--n_guarded == 0)
			sigaction(SIGBUS, &previous, NULL);
		close(g->fd);
		g->fd = -1;
		g->base = NULL;
	}
	if (base)
		munmap((void *)(uintptr_t)base, size);
}

/* ---- the BAR ----------------------------------------------------------------- */

int bar_shm_open(struct hal_hostif *h, const char *path, size_t size)
{
	int err;

	memset(h, 0, sizeof(*h));
	if (size == 0) {
		fprintf(stderr, "posix: BAR %s: size must not be 0\n", path);
		return -HAL_EINVAL;
	}
	err = shm_map(SHM_BAR, path, size);
	if (err)
		return err;
	h->bar = guards[SHM_BAR].base;
	h->bar_size = size;
	h->bar_bus_addr = 0;   /* no bus: host addresses are BAR offsets */
	h->backing = path;
	return 0;
}

int bar_shm_check(const struct hal_hostif *h)
{
	return shm_check(SHM_BAR, h->bar);
}

void bar_shm_close(struct hal_hostif *h)
{
	shm_unmap(SHM_BAR, h->bar, h->bar_size);
	memset(h, 0, sizeof(*h));
}

/* ---- host memory ------------------------------------------------------------- */

int hostmem_shm_open(struct hal_hostmem *hm, const char *path, size_t size)
{
	int err;

	memset(hm, 0, sizeof(*hm));
	err = shm_map(SHM_HOSTMEM, path, size);
	if (err)
		return err;
	hm->base = guards[SHM_HOSTMEM].base;
	hm->size = guards[SHM_HOSTMEM].size;
	hm->backing = path;
	return 0;
}

int hostmem_shm_check(const struct hal_hostmem *hm)
{
	return shm_check(SHM_HOSTMEM, hm->base);
}

void hostmem_shm_close(struct hal_hostmem *hm)
{
	shm_unmap(SHM_HOSTMEM, hm->base, (size_t)hm->size);
	memset(hm, 0, sizeof(*hm));
}
