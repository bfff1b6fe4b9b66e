/* The host BAR as a shared file.  A QEMU NIC's ivshmem-plain BAR2 is backed
 * by -object memory-backend-file,share=on,mem-path=FILE, so a host process
 * maps a POSIX NIC's BAR and a QEMU NIC's BAR the same way: MAP_SHARED on the
 * file.  The file is not removed on close: it belongs to the test or
 * orchestrator that named it, and may outlive this process (migration). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hal/errno.h"
#include "posix.h"

int bar_shm_open(struct hal_hostif *h, const char *path, size_t size)
{
	struct stat st;
	void *bar;
	int fd, err;

	memset(h, 0, sizeof(*h));
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
	close(fd);   /* the mapping keeps the file referenced */

	h->bar = bar;
	h->bar_size = size;
	h->bar_bus_addr = 0;   /* no bus: host addresses are BAR offsets */
	h->backing = path;
	return 0;

out_close:
	close(fd);
	return err;
}

void bar_shm_close(struct hal_hostif *h)
{
	if (h->bar)
		munmap((void *)(uintptr_t)h->bar, h->bar_size);
	memset(h, 0, sizeof(*h));
}
