/* hal/posix/bar_shm.c: a BAR (or host-memory) file that shrinks under the mapping.  The
 * size check sees it before any access; an access that faults first ends
 * the process from the SIGBUS handler with a clear report and exit status
 * BAR_SHM_EXIT; a SIGBUS that is not the BAR's keeps its default action.
 * The faulting cases run in a child process (fork), its stderr in a file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hal/errno.h"
#include "posix.h"

#define BAR_SIZE 65536u

static char dir[64], bar_path[96], err_path[96], host_path[96];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_bar_shm.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(bar_path, sizeof(bar_path), "%s/bar", dir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
	snprintf(host_path, sizeof(host_path), "%s/hostmem", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(bar_path);
	unlink(err_path);
	unlink(host_path);
	rmdir(dir);
	return 0;
}

static char *slurp(const char *path)
{
	static char buf[2048];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Run fn in a child with stderr in err_path; returns its wait status. */
static int in_child(void (*fn)(void))
{
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(100);
		fn();
		_exit(101);   /* fn returned: the fault did not stop the process */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void test_check_sees_shrink(void **state)
{
	struct hal_hostif h, other;

	(void)state;
	assert_int_equal(bar_shm_open(&h, bar_path, BAR_SIZE), 0);
	assert_int_equal(bar_shm_check(&h), 0);
	/* one BAR per process: the guard cannot watch two */
	assert_int_equal(bar_shm_open(&other, bar_path, BAR_SIZE), -HAL_EBUSY);
	assert_int_equal(truncate(bar_path, BAR_SIZE + 4096), 0);   /* growing is harmless */
	assert_int_equal(bar_shm_check(&h), 0);
	assert_int_equal(truncate(bar_path, BAR_SIZE - 1), 0);
	assert_int_equal(bar_shm_check(&h), -HAL_EIO);
	bar_shm_close(&h);
	/* closed: the file may be opened (and grown back) again */
	assert_int_equal(bar_shm_open(&h, bar_path, BAR_SIZE), 0);
	assert_int_equal(bar_shm_check(&h), 0);
	bar_shm_close(&h);
}

static void shrink_then_touch(void)
{
	struct hal_hostif h;
	volatile uint8_t v;

	if (bar_shm_open(&h, bar_path, BAR_SIZE) < 0)
		_exit(102);
	h.bar[8192] = 0x5a;   /* the page is there */
	if (truncate(bar_path, 4096) < 0)
		_exit(103);
	v = h.bar[100];       /* still inside the file: no fault */
	(void)v;
	v = h.bar[8192 + 7];  /* past the new end: SIGBUS */
	(void)v;
}

static void test_sigbus_in_bar_reports_and_exits(void **state)
{
	char want[256];
	const char *err;
	int status;

	(void)state;
	status = in_child(shrink_then_touch);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), BAR_SHM_EXIT);
	err = slurp(err_path);
	snprintf(want, sizeof(want), "posix: BAR %s: an access at offset 8199 faulted (SIGBUS): "
		 "the file shrank under the NIC's mapping of 65536 bytes to 4096 bytes; ", bar_path);
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "stopping without touching the file again\n"));
	/* nothing written after the shrink: the file is what the truncation left */
	{
		struct stat st;

		assert_int_equal(stat(bar_path, &st), 0);
		assert_int_equal(st.st_size, 4096);
	}
}

static void raise_sigbus(void)
{
	struct hal_hostif h;

	if (bar_shm_open(&h, bar_path, BAR_SIZE) < 0)
		_exit(102);
	raise(SIGBUS);   /* no address in the BAR */
}

static void test_sigbus_elsewhere_keeps_default(void **state)
{
	int status;

	(void)state;
	status = in_child(raise_sigbus);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGBUS);
}

static void test_close_restores_handler(void **state)
{
	struct sigaction before, during, after;
	struct hal_hostif h;

	(void)state;
	assert_int_equal(sigaction(SIGBUS, NULL, &before), 0);
	assert_int_equal(bar_shm_open(&h, bar_path, BAR_SIZE), 0);
	assert_int_equal(sigaction(SIGBUS, NULL, &during), 0);
	assert_true(during.sa_flags & SA_SIGINFO);
	bar_shm_close(&h);
	assert_int_equal(sigaction(SIGBUS, NULL, &after), 0);
	assert_true(after.sa_handler == before.sa_handler);
	assert_int_equal(bar_shm_check(&h), 0);   /* nothing mapped: nothing to check */
}

/* Create path (if need be) with size bytes. */
static int size_file(const char *path, off_t size)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600), rc;

	if (fd < 0)
		return -1;
	rc = ftruncate(fd, size);
	close(fd);
	return rc;
}

/* The host-memory file beside the BAR: its size from the file, guarded
 * the same way, each mapping's shrink seen and reported under its own
 * name. */
static void test_hostmem_check_and_size(void **state)
{
	struct hal_hostif h;
	struct hal_hostmem hm, other;

	(void)state;
	assert_int_equal(size_file(host_path, 3 * 4096), 0);
	assert_int_equal(bar_shm_open(&h, bar_path, BAR_SIZE), 0);
	assert_int_equal(hostmem_shm_open(&hm, host_path, 0), 0);
	assert_int_equal(hm.size, 3 * 4096);
	assert_int_equal(hostmem_shm_open(&other, host_path, 0), -HAL_EBUSY);
	assert_int_equal(hostmem_shm_check(&hm), 0);
	assert_int_equal(truncate(host_path, 2 * 4096), 0);
	assert_int_equal(hostmem_shm_check(&hm), -HAL_EIO);
	assert_int_equal(bar_shm_check(&h), 0);            /* the BAR is whole */
	hostmem_shm_close(&hm);
	assert_int_equal(hostmem_shm_check(&hm), 0);
	/* a size of its own: the file grown to it */
	assert_int_equal(hostmem_shm_open(&hm, host_path, 8 * 4096), 0);
	assert_int_equal(hm.size, 8 * 4096);
	hostmem_shm_close(&hm);
	/* the file's size must be whole pages */
	assert_int_equal(truncate(host_path, 4096 + 1), 0);
	assert_int_equal(hostmem_shm_open(&hm, host_path, 0), -HAL_EINVAL);
	assert_null(hm.base);
	bar_shm_close(&h);
	unlink(host_path);
}

static void shrink_hostmem_then_touch(void)
{
	struct hal_hostif h;
	struct hal_hostmem hm;
	volatile uint8_t v;

	if (size_file(host_path, 4 * 4096) < 0 || bar_shm_open(&h, bar_path, BAR_SIZE) < 0 ||
	    hostmem_shm_open(&hm, host_path, 0) < 0)
		_exit(102);
	if (truncate(host_path, 4096) < 0)
		_exit(103);
	v = hm.base[3 * 4096 + 5];   /* past the new end: SIGBUS */
	(void)v;
}

static void test_sigbus_in_hostmem_reports_and_exits(void **state)
{
	char want[256];
	int status;

	(void)state;
	status = in_child(shrink_hostmem_then_touch);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), BAR_SHM_EXIT);
	snprintf(want, sizeof(want), "posix: host memory %s: an access at offset 12293 faulted "
		 "(SIGBUS): the file shrank under the NIC's mapping of 16384 bytes to 4096 bytes; ",
		 host_path);
	assert_non_null(strstr(slurp(err_path), want));
	unlink(host_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_check_sees_shrink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigbus_in_bar_reports_and_exits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigbus_elsewhere_keeps_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_restores_handler, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostmem_check_and_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigbus_in_hostmem_reports_and_exits, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("hal_bar_shm", tests, NULL, NULL);
}
