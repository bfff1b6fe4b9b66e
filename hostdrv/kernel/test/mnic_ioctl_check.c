/* mnic-ioctl-check: hostile-caller checks of mnic.ko's /dev/mnicN, run in
 * the test VM (tests/system/kmod_vm.sh).  Every malformed ioctl and mmap
 * must be refused with its errno and counted in sysfs counters/; valid
 * commands (NOP, QUERY_DEVICE, multi-block QUERY_COUNTERS) must work
 * before, between and after the refusals and from several threads; the
 * file's context (MNIC_IOC_CTX) and the mappings it allows: its own
 * user-area range, the init segment read-only, the doorbell page.
 *
 *   mnic-ioctl-check /dev/mnicN
 *   mnic-ioctl-check --unbind /dev/mnicN   remove under an open, mapped file
 * Prints "ok NAME" or "FAIL NAME: why" per check, then
 * "IOCTL-CHECK PASS n" or "IOCTL-CHECK FAIL failed/n"; exit 0 only on PASS. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check_counter.h"
#include "mnic/abi.h"
#include "mnic/cmd.h"
#include "mnic/ioctl.h"

static int fd;
static const char *sysdir;
static unsigned int checks, failures;
static struct mnic_ioc_info info;

static void result(const char *name, int ok, const char *why)
{
	checks++;
	if (ok) {
		printf("ok %s\n", name);
	} else {
		failures++;
		printf("FAIL %s: %s\n", name, why);
	}
}

/* ioctl expected to fail with err (0: succeed). */
static void expect(const char *name, unsigned long req, void *arg, int err)
{
	char why[96];
	int rc = ioctl(fd, req, arg);
	int got = rc < 0 ? errno : 0;

	snprintf(why, sizeof(why), "want %s, got %s", err ? strerror(err) : "success",
		 got ? strerror(got) : "success");
	result(name, got == err, why);
}

static long counter(const char *name)
{
	return mnic_check_counter(sysdir, name);
}

static void cmd_init(struct mnic_ioc_cmd *c, const void *in, uint32_t in_len, void *out,
		     uint32_t out_len)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->version = MNIC_IOC_VERSION;
	c->in_ptr = (uint64_t)(uintptr_t)in;
	c->out_ptr = (uint64_t)(uintptr_t)out;
	c->in_len = in_len;
	c->out_len = out_len;
}

/* One command; 0 if the ioctl worked, delivery was OK and status OK. */
static int run_cmd(uint16_t opcode, uint16_t op_mod, void *out, uint32_t out_len)
{
	struct mnic_cmd_simple_in in = {.hdr = {.opcode = opcode, .op_mod = op_mod}};
	struct mnic_ioc_cmd c;

	cmd_init(&c, &in, sizeof(in), out, out_len);
	memset(out, 0xa5, out_len);
	if (ioctl(fd, MNIC_IOC_CMD, &c) < 0)
		return -errno;
	if (c.delivery != MNIC_CMD_DELIV_OK)
		return 1000 + c.delivery;
	return ((struct mnic_cmd_out_hdr *)out)->status;
}

static void check_info(void)
{
	struct mnic_ioc_info i;

	memset(&i, 0, sizeof(i));
	i.size = sizeof(i) - 8;
	i.version = MNIC_IOC_VERSION;
	expect("info_bad_size", MNIC_IOC_INFO, &i, EINVAL);
	i.size = sizeof(i);
	i.version = 0;
	expect("info_version_0", MNIC_IOC_INFO, &i, EINVAL);
	i.version = MNIC_IOC_VERSION + 1;
	expect("info_version_newer", MNIC_IOC_INFO, &i, EINVAL);
	expect("info_null", MNIC_IOC_INFO, NULL, EFAULT);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.version = MNIC_IOC_VERSION;
	expect("info_ok", MNIC_IOC_INFO, &info, 0);
	result("info_geometry",
	       info.cmdif_rev == MNIC_CMDIF_REV && info.state == MNIC_STATE_READY &&
		       info.window_offset == MNIC_DMA_WINDOW_OFFSET &&
		       info.user_area_offset == MNIC_USER_AREA_OFFSET &&
		       info.user_area_size == info.bar_size - MNIC_DMA_WINDOW_OFFSET -
						      MNIC_USER_AREA_OFFSET,
	       "rev/state/window/user area inconsistent");
	expect("unknown_ioctl", _IO(MNIC_IOC_MAGIC, 99), NULL, ENOTTY);
}

static void check_cmd_refusals(void)
{
	struct mnic_cmd_simple_in nop = {.hdr = {.opcode = MNIC_CMD_NOP}};
	struct mnic_cmd_simple_in bad = {.hdr = {.opcode = 0x999}};
	static uint8_t out[4096];
	struct mnic_ioc_cmd c;
	long before = counter("refused_struct") + counter("refused_len") +
		      counter("refused_opcode");
	void *ro;

	cmd_init(&c, &nop, sizeof(nop), out, sizeof(out));
	c.size = sizeof(c) + 8;
	expect("cmd_bad_size", MNIC_IOC_CMD, &c, EINVAL);
	cmd_init(&c, &nop, sizeof(nop), out, sizeof(out));
	c.version = MNIC_IOC_VERSION + 1;
	expect("cmd_version_newer", MNIC_IOC_CMD, &c, EINVAL);
	cmd_init(&c, &nop, sizeof(nop), out, sizeof(out));
	c.reserved[1] = 1;
	expect("cmd_reserved", MNIC_IOC_CMD, &c, EINVAL);
	cmd_init(&c, &nop, 4, out, sizeof(out));
	expect("cmd_in_len_short", MNIC_IOC_CMD, &c, EINVAL);
	cmd_init(&c, &nop, sizeof(nop), out, 4);
	expect("cmd_out_len_short", MNIC_IOC_CMD, &c, EINVAL);
	cmd_init(&c, &nop, MNIC_CMD_MAX_LEN + 1, out, sizeof(out));
	expect("cmd_in_len_huge", MNIC_IOC_CMD, &c, EINVAL);
	cmd_init(&c, &nop, sizeof(nop), out, 0xffffffffu);
	expect("cmd_out_len_huge", MNIC_IOC_CMD, &c, EINVAL);
	cmd_init(&c, &nop, MNIC_CMD_MAX_LEN, out, MNIC_CMD_MAX_LEN);
	expect("cmd_chains_exceed_driver_area", MNIC_IOC_CMD, &c, E2BIG);
	cmd_init(&c, &bad, sizeof(bad), out, sizeof(out));
	expect("cmd_unknown_opcode", MNIC_IOC_CMD, &c, EOPNOTSUPP);
	cmd_init(&c, NULL, sizeof(nop), out, sizeof(out));
	expect("cmd_in_null", MNIC_IOC_CMD, &c, EFAULT);
	/* Input longer than the caller's memory: the mailbox copy faults. */
	ro = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED) {
		result("mmap_scratch", 0, strerror(errno));
		return;
	}
	memcpy(ro, &nop, sizeof(nop));
	mprotect((char *)ro + 4096, 4096, PROT_NONE);   /* a guaranteed hole after it */
	cmd_init(&c, ro, 64 * 1024, out, sizeof(out));
	expect("cmd_in_past_user_memory", MNIC_IOC_CMD, &c, EFAULT);
	/* Output into read-only memory: the command runs, the copy-out faults. */
	mprotect(ro, 4096, PROT_READ);
	cmd_init(&c, &nop, sizeof(nop), ro, 64);
	expect("cmd_out_readonly", MNIC_IOC_CMD, &c, EFAULT);
	munmap(ro, 8192);
	result("refusals_counted",
	       counter("refused_struct") + counter("refused_len") + counter("refused_opcode") ==
		       before + 9,
	       "counters/refused_{struct,len,opcode} did not grow by 9");
}

static void check_cmds(void)
{
	static uint8_t big[64 * 1024];
	struct mnic_cmd_query_device_out qd;
	struct mnic_cmd_query_counters_out *qc = (void *)big;
	struct mnic_cmd_simple_out so;
	int rc;

	rc = run_cmd(MNIC_CMD_NOP, 0, &so, sizeof(so));
	result("nop", rc == 0, "NOP failed");
	rc = run_cmd(MNIC_CMD_QUERY_DEVICE, 0, &qd, sizeof(qd));
	result("query_device_mailbox", rc == 0 && qd.fw_version == info.fw_version &&
					       qd.cmdif_rev == MNIC_CMDIF_REV &&
					       !memcmp(qd.mac, info.mac, 6),
	       "QUERY_DEVICE (output through one mailbox) wrong");
	/* 64 KiB of output: a chain of 128 blocks. */
	rc = run_cmd(MNIC_CMD_QUERY_COUNTERS, MNIC_COUNTERS_MGMT, big, sizeof(big));
	result("query_counters_chain", rc == 0 && qc->count > 0 && qc->count <= qc->total &&
					       big[sizeof(*qc) + 23] == 0,
	       "QUERY_COUNTERS through a 128-block chain wrong");
	/* A command the firmware refuses (REG_MR without its fields) comes
	 * back as a status, and the firmware still answers. */
	rc = run_cmd(MNIC_CMD_REG_MR, 0, &so, sizeof(so));
	result("firmware_refusal_is_status", rc > 0 && rc < 1000, "REG_MR with in_len 8 not refused");
	rc = run_cmd(MNIC_CMD_NOP, 0, &so, sizeof(so));
	result("nop_after_refusal", rc == 0, "NOP failed");
}

static void *nop_thread(void *arg)
{
	struct mnic_cmd_simple_out so;
	long bad = 0;

	(void)arg;
	for (int i = 0; i < 100; i++)
		if (run_cmd(MNIC_CMD_NOP, 0, &so, sizeof(so)) != 0)
			bad++;
	return (void *)bad;
}

static void check_threads(void)
{
	pthread_t t[4];
	long bad = 0;
	void *r;

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, nop_thread, NULL);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	result("threads_4x100_nop", bad == 0, "some NOPs failed");
}

/* MNIC_IOC_CTX: the file's context; asked again, the same answer. */
static struct mnic_ioc_ctx ctx;

static void ctx_init(struct mnic_ioc_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->version = MNIC_IOC_VERSION;
}

static void check_ctx(void)
{
	struct mnic_ioc_ctx c;
	long before = counter("refused_struct");

	ctx_init(&c);
	c.size = sizeof(c) - 8;
	expect("ctx_bad_size", MNIC_IOC_CTX, &c, EINVAL);
	ctx_init(&c);
	c.version = 0;
	expect("ctx_version_0", MNIC_IOC_CTX, &c, EINVAL);
	ctx_init(&c);
	c.reserved = 1;
	expect("ctx_reserved", MNIC_IOC_CTX, &c, EINVAL);
	ctx_init(&c);
	c.ua_size = MNIC_CTX_UA_ALIGN + 1;
	expect("ctx_size_unaligned", MNIC_IOC_CTX, &c, EINVAL);
	ctx_init(&c);
	c.ua_offset = MNIC_CTX_UA_ALIGN;    /* inside the driver area */
	c.ua_size = MNIC_CTX_UA_ALIGN;
	expect("ctx_range_in_driver_area", MNIC_IOC_CTX, &c, EINVAL);
	result("ctx_refusals_counted", counter("refused_struct") == before + 5,
	       "counters/refused_struct did not grow by 5");
	ctx_init(&ctx);
	expect("ctx_ok", MNIC_IOC_CTX, &ctx, 0);
	result("ctx_range", ctx.ctx != MNIC_CTX_MGMT && ctx.ctx <= MNIC_CTX_MAX &&
				    ctx.ua_offset >= info.user_area_offset &&
				    ctx.ua_offset % MNIC_CTX_UA_ALIGN == 0 && ctx.ua_size > 0 &&
				    ctx.ua_size % MNIC_CTX_UA_ALIGN == 0 &&
				    ctx.ua_offset - info.user_area_offset + ctx.ua_size <=
					    info.user_area_size,
	       "context id or range impossible");
	ctx_init(&c);
	expect("ctx_again", MNIC_IOC_CTX, &c, 0);
	result("ctx_same", c.ctx == ctx.ctx && c.ua_offset == ctx.ua_offset &&
				   c.ua_size == ctx.ua_size,
	       "a second MNIC_IOC_CTX answered another context");
	ctx_init(&c);
	c.ua_size = ctx.ua_size + MNIC_CTX_UA_ALIGN;
	expect("ctx_other_size_busy", MNIC_IOC_CTX, &c, EBUSY);
}

static void check_mmap(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t user = (size_t)ctx.ua_size;
	long refused_write = counter("mmap_refused_write");
	void *p;

	p = mmap(NULL, user, PROT_READ | PROT_WRITE, MAP_SHARED, fd, MNIC_MMAP_USER);
	result("mmap_user_area", p != MAP_FAILED, strerror(errno));
	if (p != MAP_FAILED)
		munmap(p, user);
	p = mmap(NULL, user + (size_t)page, PROT_READ, MAP_SHARED, fd, MNIC_MMAP_USER);
	result("mmap_user_too_long", p == MAP_FAILED && errno == EINVAL, "not refused");
	p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, (off_t)user);
	result("mmap_user_past_end", p == MAP_FAILED && errno == EINVAL, "not refused");
	p = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE, fd, MNIC_MMAP_USER);
	result("mmap_private", p == MAP_FAILED && errno == EINVAL, "not refused");
	p = mmap(NULL, 2 * (size_t)page, PROT_READ, MAP_SHARED, fd, MNIC_MMAP_INITSEG);
	result("mmap_initseg_two_pages", p == MAP_FAILED && errno == EINVAL, "not refused");
	p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, MNIC_MMAP_INITSEG + page);
	result("mmap_bad_offset", p == MAP_FAILED && errno == EINVAL, "not refused");
	/* The init segment is the command-queue owner's: read-only to all
	 * others, and mprotect cannot make it writable (VM_MAYWRITE clear). */
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, MNIC_MMAP_INITSEG);
	result("tenancy_mmap_initseg_writable_refused", p == MAP_FAILED && errno == EACCES,
	       "a writable init segment mapping was not refused with EACCES");
	result("tenancy_mmap_initseg_write_counted",
	       counter("mmap_refused_write") == refused_write + 1,
	       "counters/mmap_refused_write did not grow by 1");
	p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, MNIC_MMAP_INITSEG);
	result("mmap_initseg_readonly", p != MAP_FAILED &&
					       ((volatile struct mnic_init_seg *)p)->magic == MNIC_INIT_MAGIC,
	       "no init segment with the magic");
	if (p != MAP_FAILED) {
		result("tenancy_mprotect_initseg_writable_refused",
		       mprotect(p, (size_t)page, PROT_READ | PROT_WRITE) < 0 && errno == EACCES,
		       "mprotect made the init segment writable");
		munmap(p, (size_t)page);
	}
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, MNIC_MMAP_DOORBELL);
	result("mmap_doorbell", p != MAP_FAILED, strerror(errno));
	if (p != MAP_FAILED)
		munmap(p, (size_t)page);
	p = mmap(NULL, 2 * (size_t)page, PROT_READ, MAP_SHARED, fd, MNIC_MMAP_DOORBELL);
	result("mmap_doorbell_two_pages", p == MAP_FAILED && errno == EINVAL, "not refused");
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

/* Read one word of p: 1 if that raised SIGBUS. */
static int read_faults(volatile uint32_t *p)
{
	struct sigaction sa, old;
	int faulted = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(bus_jmp, 1) == 0)
		(void)*p;
	else
		faulted = 1;
	sigaction(SIGBUS, &old, NULL);
	return faulted;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(text, f) >= 0;
	ok = (fclose(f) == 0) && ok;
	return ok ? 0 : -1;
}

/* Remove with the device open and mapped: unbind the PCI function under
 * an open file and a live mapping, then every call on the file must
 * return ENODEV, the mapping must be gone (SIGBUS: its range may be
 * another tenant's after a rebind), close must work, and a rebind must
 * bring the device back. */
static void check_unbind(void)
{
	char link[256], path[128];
	struct mnic_ioc_info i;
	const char *bdf;
	ssize_t n;
	void *p;

	snprintf(path, sizeof(path), "%s/device", sysdir);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0) {
		result("unbind_find_pci", 0, "no device link in sysfs");
		return;
	}
	link[n] = '\0';
	bdf = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, MNIC_MMAP_USER);
	result("unbind_map_before", p != MAP_FAILED && !read_faults(p), strerror(errno));
	result("unbind", write_file("/sys/bus/pci/drivers/mnic/unbind", bdf) == 0, strerror(errno));
	if (p != MAP_FAILED)
		result("tenancy_unbind_mapping_zapped", read_faults(p),
		       "the user-area mapping still reads after remove");
	memset(&i, 0, sizeof(i));
	i.size = sizeof(i);
	i.version = MNIC_IOC_VERSION;
	expect("unbind_info_enodev", MNIC_IOC_INFO, &i, ENODEV);
	result("unbind_mmap_enodev",
	       mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, MNIC_MMAP_USER) == MAP_FAILED &&
		       errno == ENODEV,
	       "mmap after unbind not refused with ENODEV");
	if (p != MAP_FAILED)
		munmap(p, 4096);
	result("unbind_close", close(fd) == 0, strerror(errno));
	result("rebind", write_file("/sys/bus/pci/drivers/mnic/bind", bdf) == 0, strerror(errno));
}

/* MNIC_IOC_RING: an argument is refused; on a NIC with a doorbell
 * register (MNIC_INFO_F_RING: the VM test's ivshmem-doorbell) a ring is
 * a Doorbell write the module counts, without one it is refused. */
static void check_ring(void)
{
	long before = counter("ring_data"), refused = counter("ring_refused");
	int has = (info.flags & MNIC_INFO_F_RING) != 0;

	expect("ring_with_argument", MNIC_IOC_RING, (void *)1, EINVAL);
	expect("ring", MNIC_IOC_RING, NULL, has ? 0 : EOPNOTSUPP);
	result("ring_counted", has ? counter("ring_data") == before + 1 :
				     counter("ring_refused") == refused + 1,
	       "ring_data/ring_refused did not count the ring");
	result("ring_flag_known", (info.flags & ~MNIC_INFO_F_RING) == 0, "unknown info flags");
}

int main(int argc, char **argv)
{
	static char dir[128];
	int unbind = argc > 1 && !strcmp(argv[1], "--unbind");
	const char *dev = argc > 1 + unbind ? argv[1 + unbind] : "/dev/mnic0";

	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "mnic-ioctl-check: cannot open %s: %s\n", dev, strerror(errno));
		return 2;
	}
	snprintf(dir, sizeof(dir), "/sys/class/misc/%s", strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev);
	sysdir = dir;
	if (unbind) {
		check_info();
		check_unbind();
		goto done;
	}
	check_info();
	check_ring();
	check_cmds();
	check_cmd_refusals();
	check_threads();
	check_ctx();
	check_mmap();
	check_cmds();
	close(fd);
done:
	if (failures) {
		printf("IOCTL-CHECK FAIL %u/%u\n", failures, checks);
		return 1;
	}
	printf("IOCTL-CHECK PASS %u\n", checks);
	return 0;
}
