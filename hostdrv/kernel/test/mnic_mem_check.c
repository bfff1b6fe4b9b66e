/* mnic-mem-check: host-physical DMA checks of mnic.ko run in the test VM
 * (tests/system/kmod_vm.sh; docs/kernel-driver.md "Host memory").
 *
 *   mnic-mem-check gpa            a page's guest-physical address
 *                                 (/proc/self/pagemap, root) and a pattern
 *                                 in it; the host reads the VM's RAM file
 *                                 at that offset and answers in the page
 *   mnic-mem-check hostile DEV    MNIC_IOC_REG_MEM/DEREG_MEM refusals, and
 *                                 the tenant's MTT commands refused
 *   mnic-mem-check reg DEV        (a NIC with host memory) a malloc'ed
 *                                 64 MiB buffer and an mmap'ed file
 *                                 registered as MRs, a CQ on registered
 *                                 rings; pins counted in VmPin and given
 *                                 back on dereg and on close
 * Prints "ok NAME" or "FAIL NAME: why" per check, then "MEM-CHECK PASS n"
 * or "MEM-CHECK FAIL failed/n"; exit 0 only on PASS. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_counter.h"
#include "mnic/abi.h"
#include "mnic/cmd.h"
#include "mnic/ioctl.h"

#define NOBODY 65534u
#define BIG_LEN (64u << 20)
#define FILE_LEN (4u << 20)
#define GPA_WAIT_S 120

static char sysdir[128];
static unsigned int checks, failures;

static void result(const char *name, int ok, const char *why)
{
	checks++;
	if (ok) {
		printf("ok %s\n", name);
	} else {
		failures++;
		printf("FAIL %s: %s\n", name, why);
	}
	fflush(stdout);
}

static int finish(void)
{
	if (failures)
		printf("MEM-CHECK FAIL %u/%u\n", failures, checks);
	else
		printf("MEM-CHECK PASS %u\n", checks);
	return failures ? 1 : 0;
}

static long counter(const char *name)
{
	return mnic_check_counter(sysdir, name);
}

/* VmPin of this process (pages the module charged to it), in KiB. */
static long vm_pin_kib(void)
{
	char line[128];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void expect_eq(const char *name, long got, long want)
{
	char why[96];

	snprintf(why, sizeof(why), "want %ld, got %ld", want, got);
	result(name, got == want, why);
}

static void expect_errno(const char *name, int rc, int err)
{
	char why[96];

	snprintf(why, sizeof(why), "want %s, got %s", err ? strerror(err) : "success",
		 rc ? strerror(-rc) : "success");
	result(name, rc == -err, why);
}

static int cmd(int fd, void *in, uint32_t in_len, void *out, uint32_t out_len)
{
	struct mnic_ioc_cmd c = { .size = sizeof(c), .version = MNIC_IOC_VERSION,
				  .in_ptr = (uint64_t)(uintptr_t)in,
				  .out_ptr = (uint64_t)(uintptr_t)out,
				  .in_len = in_len, .out_len = out_len };

	if (ioctl(fd, MNIC_IOC_CMD, &c) < 0)
		return -errno;
	if (c.delivery != MNIC_CMD_DELIV_OK)
		return 1000 + c.delivery;
	return ((struct mnic_cmd_out_hdr *)out)->status;
}

static struct mnic_ioc_reg_mem reg_req(const void *addr, uint64_t len, uint32_t flags, uint32_t pd)
{
	struct mnic_ioc_reg_mem r = { .size = sizeof(r), .version = MNIC_IOC_VERSION,
				      .addr = (uint64_t)(uintptr_t)addr, .length = len,
				      .flags = flags, .pd = pd };

	if (flags & MNIC_REG_MEM_MR)
		r.access = 0xf;   /* local write, remote write/read/atomic */
	return r;
}

static int reg(int fd, struct mnic_ioc_reg_mem *r)
{
	return ioctl(fd, MNIC_IOC_REG_MEM, r) < 0 ? -errno : 0;
}

static int dereg(int fd, uint32_t mtt)
{
	struct mnic_ioc_dereg_mem d = { .size = sizeof(d), .version = MNIC_IOC_VERSION, .mtt = mtt };

	return ioctl(fd, MNIC_IOC_DEREG_MEM, &d) < 0 ? -errno : 0;
}

static int open_dev(const char *dev)
{
	int fd = open(dev, O_RDWR);

	if (fd < 0) {
		printf("FAIL open %s: %s\n", dev, strerror(errno));
		exit(1);
	}
	snprintf(sysdir, sizeof(sysdir), "/sys/class/misc/%s", strrchr(dev, '/') + 1);
	return fd;
}

/* ---- gpa --------------------------------------------------------------- */

static uint64_t word_of(uint64_t pattern, unsigned i)
{
	return pattern ^ (i * 0x9e3779b97f4a7c15ull);
}

/* A page with a pattern; its physical address from pagemap (bit 63
 * present, bits 0-54 the frame; root sees frames); the host checks the
 * pattern at that offset of the RAM file and writes ~pattern into word 1,
 * which this process must then see. */
static int check_gpa(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	volatile uint64_t *page;
	uint64_t pattern, entry;
	unsigned i;
	int fd, s;

	page = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0);
	if (page == MAP_FAILED) {
		result("gpa_page", 0, strerror(errno));
		return finish();
	}
	pattern = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ 0x6d6e6963a5c3e1f0ull;
	for (i = 0; i < psz / 8; i++)
		page[i] = word_of(pattern, i);
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0 || pread(fd, &entry, 8, ((uintptr_t)page / psz) * 8) != 8) {
		result("gpa_pagemap", 0, strerror(errno));
		return finish();
	}
	close(fd);
	result("gpa_present", (entry >> 63) & 1, "page not present");
	result("gpa_frame_visible", (entry & ((1ull << 55) - 1)) != 0, "frame 0: not root?");
	/* The host-side half: tests/system/kmod_vm.sh reads this line. */
	printf("MEM-GPA gpa=0x%llx pattern=0x%016llx words=%ld\n",
	       (unsigned long long)((entry & ((1ull << 55) - 1)) * psz),
	       (unsigned long long)pattern, psz / 8);
	fflush(stdout);
	for (s = 0; s < GPA_WAIT_S * 10 && page[1] != ~pattern; s++)
		usleep(100000);
	result("gpa_host_answer_seen", page[1] == ~pattern,
	       "the host did not write ~pattern at the page's file offset");
	return finish();
}

/* ---- hostile ----------------------------------------------------------- */

static void check_hostile(const char *dev)
{
	int fd = open_dev(dev);
	long refused_struct = counter("refused_struct"), range = counter("reg_refused_range");
	long mtt_refusals = counter("refused_mtt");
	long psz = sysconf(_SC_PAGESIZE);
	char *buf = aligned_alloc(psz, 4 * psz);
	struct mnic_ioc_reg_mem r;
	struct mnic_ioc_dereg_mem dr = { .size = sizeof(dr), .version = MNIC_IOC_VERSION };
	union {
		struct mnic_cmd_create_mtt_in create;
		struct mnic_cmd_write_mtt_in write;
		struct mnic_cmd_handle_in handle;
		struct mnic_cmd_reg_mr_in mr;
		struct mnic_cmd_create_cq_in cq;
		uint8_t raw[64];
	} in;
	uint8_t out[64];
	FILE *f;
	unsigned int max_mib = 0;

	memset(buf, 0, 4 * psz);
	r = reg_req(buf, psz, 0, 0);
	r.size = sizeof(r) - 8;
	expect_errno("reg_bad_size", reg(fd, &r), EINVAL);
	r = reg_req(buf, psz, 0, 0);
	r.version = MNIC_IOC_VERSION + 1;
	expect_errno("reg_bad_version", reg(fd, &r), EINVAL);
	r = reg_req(buf, psz, 0x80, 0);
	expect_errno("reg_unknown_flag", reg(fd, &r), EINVAL);
	r = reg_req(buf, psz, 0, 0);
	r.mtt = 7;
	expect_errno("reg_output_not_zero", reg(fd, &r), EINVAL);
	r = reg_req(buf, psz, 0, 3);
	expect_errno("reg_pd_without_mr", reg(fd, &r), EINVAL);
	expect_eq("reg_struct_counted", counter("refused_struct") - refused_struct, 5);
	r = reg_req(buf, 0, 0, 0);
	expect_errno("reg_length_0", reg(fd, &r), EINVAL);
	r = reg_req((void *)(uintptr_t)0xfffffffffffff000ull, 0x2000, 0, 0);
	expect_errno("reg_wraps", reg(fd, &r), EINVAL);
	r = reg_req((void *)(uintptr_t)0xffff888000000000ull, 0x1000, 0, 0);   /* kernel half */
	expect_errno("reg_past_user_space", reg(fd, &r), EINVAL);
	r = reg_req(buf, 1ull << 40, 0, 0);
	expect_errno("reg_huge", reg(fd, &r), E2BIG);
	f = fopen("/sys/module/mnic/parameters/max_reg_mib", "r");
	if (f) {
		if (fscanf(f, "%u", &max_mib) != 1)
			max_mib = 0;
		fclose(f);
	}
	r = reg_req(buf, ((uint64_t)max_mib << 20) + 1, 0, 0);
	expect_errno("reg_past_max_reg_mib", reg(fd, &r), E2BIG);
	expect_eq("reg_range_counted", counter("reg_refused_range") - range, 5);
	dr.reserved = 1;
	expect_errno("dereg_reserved", ioctl(fd, MNIC_IOC_DEREG_MEM, &dr) < 0 ? -errno : 0, EINVAL);
	expect_errno("dereg_unknown", dereg(fd, 12345), ENOENT);

	/* The tenant never writes page lists, nor names an MTT of its own
	 * choosing (whatever the firmware would say). */
	memset(&in, 0, sizeof(in));
	in.create.hdr.opcode = MNIC_CMD_CREATE_MTT;
	in.create.length = psz;
	in.create.page_shift = 12;
	expect_errno("cmd_create_mtt_refused", cmd(fd, &in, sizeof(in.create), out, 16), EPERM);
	memset(&in, 0, sizeof(in));
	in.write.hdr.opcode = MNIC_CMD_WRITE_MTT;
	in.write.mtt = 1;
	in.write.count = 1;
	expect_errno("cmd_write_mtt_refused", cmd(fd, &in, sizeof(in.write) + 8, out, 16), EPERM);
	memset(&in, 0, sizeof(in));
	in.handle.hdr.opcode = MNIC_CMD_DESTROY_MTT;
	in.handle.handle = 1;
	expect_errno("cmd_destroy_mtt_refused", cmd(fd, &in, sizeof(in.handle), out, 16), EPERM);
	memset(&in, 0, sizeof(in));
	in.mr.hdr.opcode = MNIC_CMD_REG_MR;
	in.mr.mtt = 12345;
	in.mr.length = psz;
	expect_errno("cmd_reg_mr_foreign_mtt", cmd(fd, &in, sizeof(in.mr), out, 16), EPERM);
	memset(&in, 0, sizeof(in));
	in.cq.hdr.opcode = MNIC_CMD_CREATE_CQ;
	in.cq.q.size = 64;
	in.cq.q.ring_mtt = 12345;
	in.cq.q.dbrec_mtt = 12346;
	expect_errno("cmd_create_cq_foreign_mtt", cmd(fd, &in, sizeof(in.cq), out, 16), EPERM);
	expect_eq("cmd_mtt_refusals_counted", counter("refused_mtt") - mtt_refusals, 5);
	close(fd);
	free(buf);
}

/* ---- reg --------------------------------------------------------------- */

static uint32_t alloc_pd(int fd)
{
	struct mnic_cmd_simple_in in = { .hdr = { .opcode = MNIC_CMD_ALLOC_PD } };
	struct mnic_cmd_handle_out out;
	int rc = cmd(fd, &in, sizeof(in), &out, sizeof(out));

	result("alloc_pd", rc == 0, "ALLOC_PD failed");
	return rc == 0 ? out.handle : 0;
}

static void check_reg(const char *dev)
{
	int fd = open_dev(dev), tfd, rc;   /* first: it names the sysfs directory */
	long psz = sysconf(_SC_PAGESIZE);
	long pinned0 = counter("mem_pages_pinned"), unpinned0 = counter("mem_pages_unpinned");
	long phys0 = counter("refused_phys");
	struct mnic_ioc_reg_mem big, file, ring, ro;
	struct mnic_cmd_create_cq_in cq;
	struct mnic_cmd_reg_mr_in mr;
	struct mnic_cmd_handle_out hout;
	struct mnic_cmd_handle_in hin;
	char path[] = "/tmp/mnic-mem-XXXXXX";
	long big_pages;
	char *heap, *map, *rbuf, *rom;
	struct timespec t0, t1;
	uint32_t pd;
	pid_t child;

	pd = alloc_pd(fd);
	/* malloc'ed: glibc mmaps it, 16 bytes past a page start, so the MTT
	 * covers one page more than 64 MiB. */
	heap = malloc(BIG_LEN);
	memset(heap, 0x5a, BIG_LEN);
	big_pages = ((((uintptr_t)heap + BIG_LEN + psz - 1) & ~(uintptr_t)(psz - 1)) -
		     ((uintptr_t)heap & ~(uintptr_t)(psz - 1))) / psz;
	big = reg_req(heap, BIG_LEN, MNIC_REG_MEM_MR, pd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = reg(fd, &big);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	expect_errno("reg_malloc_64m", rc, 0);
	/* Information, not a check (TCG makes it meaningless as a figure). */
	printf("  reg 64 MiB: %ld us\n",
	       (long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
	expect_eq("reg_malloc_64m_pages", big.npages, big_pages);
	result("reg_malloc_64m_keys", big.mtt != MNIC_MTT_NONE && big.lkey != 0, "no mtt or lkey");
	expect_eq("reg_malloc_64m_vmpin", vm_pin_kib(), big_pages * psz / 1024);

	tfd = mkstemp(path);
	if (tfd < 0 || ftruncate(tfd, FILE_LEN) != 0) {
		result("file", 0, strerror(errno));
		return;
	}
	map = mmap(NULL, FILE_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0);
	file = reg_req(map, FILE_LEN, MNIC_REG_MEM_MR, pd);
	expect_errno("reg_mmap_file", reg(fd, &file), 0);
	expect_eq("reg_mmap_file_pages", file.npages, FILE_LEN / psz);
	expect_eq("reg_both_vmpin", vm_pin_kib(), (big_pages * psz + FILE_LEN) / 1024);

	/* A read-only mapping cannot be pinned for the NIC to write. */
	rom = mmap(NULL, psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = reg_req(rom, psz, 0, 0);
	expect_errno("reg_read_only_refused", reg(fd, &ro), EFAULT);
	/* Physical mode: the tenant would name any page of the host. */
	memset(&mr, 0, sizeof(mr));
	mr.hdr.opcode = MNIC_CMD_REG_MR;
	mr.pd = pd;
	mr.addr = 0x100000;
	mr.length = psz;
	expect_errno("cmd_reg_mr_physical_refused", cmd(fd, &mr, sizeof(mr), &hout, sizeof(hout)), EPERM);
	/* Its own MTT, named in its own REG_MR: served. */
	mr.addr = (uint64_t)(uintptr_t)heap;
	mr.mtt = big.mtt;
	result("cmd_reg_mr_own_mtt", cmd(fd, &mr, sizeof(mr), &hout, sizeof(hout)) == 0,
	       "REG_MR over the file's own MTT refused");
	expect_eq("refused_phys_counted", counter("refused_phys") - phys0, 1);

	/* Rings: a CQ whose ring and doorbell record are registered memory;
	 * the MTT is busy while the CQ stands. */
	rbuf = aligned_alloc(psz, 2 * psz);
	memset(rbuf, 0, 2 * psz);
	ring = reg_req(rbuf, 2 * psz, 0, 0);
	expect_errno("reg_ring", reg(fd, &ring), 0);
	memset(&cq, 0, sizeof(cq));
	cq.hdr.opcode = MNIC_CMD_CREATE_CQ;
	cq.q = (struct mnic_queue_desc){ .ring_addr = (uint64_t)(uintptr_t)rbuf,
					 .dbrec_addr = (uint64_t)(uintptr_t)(rbuf + psz),
					 .size = 64, .ring_mtt = ring.mtt, .dbrec_mtt = ring.mtt };
	rc = cmd(fd, &cq, sizeof(cq), &hout, sizeof(hout));
	result("create_cq_registered_ring", rc == 0, "CREATE_CQ on the registered ring failed");
	if (rc == 0) {
		result("dereg_busy_ring", dereg(fd, ring.mtt) < 0, "an MTT in use was destroyed");
		memset(&hin, 0, sizeof(hin));
		hin.hdr.opcode = MNIC_CMD_DESTROY_CQ;
		hin.handle = hout.handle;
		result("destroy_cq", cmd(fd, &hin, sizeof(hin), &hout, sizeof(hout)) == 0, "DESTROY_CQ failed");
	}
	expect_errno("dereg_ring", dereg(fd, ring.mtt), 0);
	expect_errno("dereg_file", dereg(fd, file.mtt), 0);
	expect_eq("dereg_file_vmpin", vm_pin_kib(), big_pages * psz / 1024);
	expect_errno("dereg_twice", dereg(fd, file.mtt), ENOENT);

	/* RLIMIT_MEMLOCK: nobody (no CAP_IPC_LOCK: the file root opened
	 * carries no privilege), 1 MiB, asks for 4 MiB. */
	child = fork();
	if (child == 0) {
		struct rlimit rl = { 1u << 20, 1u << 20 };
		struct mnic_ioc_reg_mem lim;
		int cfd = open(dev, O_RDWR);

		if (cfd < 0)
			_exit(3);
		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(NOBODY) || setuid(NOBODY))
			_exit(2);
		lim = reg_req(map, FILE_LEN, 0, 0);
		_exit(reg(cfd, &lim) == -ENOMEM ? 0 : 4);
	}
	{
		int st = 0;

		waitpid(child, &st, 0);
		expect_eq("reg_memlock_refused", WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
	}

	/* Close: the context goes (every object with it), then the pages. */
	close(fd);
	expect_eq("close_vmpin", vm_pin_kib(), 0);
	expect_eq("close_all_unpinned", counter("mem_pages_unpinned") - unpinned0,
		  counter("mem_pages_pinned") - pinned0);
	expect_eq("no_pages_leaked", counter("mem_pages_leaked"), 0);
	munmap(map, FILE_LEN);
	close(tfd);
	unlink(path);
	free(heap);
	free(rbuf);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "gpa"))
		return check_gpa();
	if (argc == 3 && !strcmp(argv[1], "hostile"))
		check_hostile(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "reg"))
		check_reg(argv[2]);
	else {
		fprintf(stderr, "usage: mnic-mem-check gpa | hostile DEV | reg DEV\n");
		return 2;
	}
	return finish();
}
