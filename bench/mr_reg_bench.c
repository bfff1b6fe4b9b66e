/* mnic-mr-bench: what registering an MR costs, by size (make bench,
 * bench/mr_reg.sh; MigrOS Fig. 10 plots the same for its NIC).
 *
 *   mnic-mr-bench [-q] DEV
 *
 * On the NIC behind DEV (a POSIX NIC's BAR file), one tenant context with
 * three buffers from mnic_alloc (4 KiB, 1 MiB, 64 MiB).  Per size, many
 * times: mnic_reg_mr (timed), mnic_dereg_mr (timed); the median of each in
 * microseconds.  A NIC with a host-memory aperture runs libmnic in
 * host-memory mode, where a registration teaches the NIC the buffer's
 * mapping (CREATE_MTT, the page list in WRITE_MTT chunks of
 * MNIC_MTT_WRITE_CHUNK entries, REG_MR); without one (physical mode) it is
 * REG_MR alone, and the figures carry the suffix _phys.  stdout, one
 * "name: value unit" line each:
 *
 *   mr_reg_us_<size>[_phys]     median mnic_reg_mr, microseconds
 *   mr_dereg_us_<size>[_phys]   median mnic_dereg_mr (DEREG_MR, DESTROY_MTT)
 *   mr_reg_cmds_<size>[_phys]   commands the NIC answered for one
 *                               mnic_reg_mr (QUERY_COUNTERS cmds_delivered
 *                               through a management handle, the
 *                               counting's own commands subtracted)
 *
 * One untimed registration per size is also checked against the NIC
 * (QUERY_DEVICE): while it lives the NIC holds one more MR, and in
 * host-memory mode one more MTT and exactly the buffer's pages of MTT
 * entries; after the deregistration all of it is back.  A failed check or
 * command exits 1 with what went wrong on stderr; the check's figures go
 * to stderr as "mr_reg_bench: <size>: ..." lines.
 *
 * -q: few repetitions (the correctness test); the figures keep their form.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mnic/libmnic.h"

#define PAGE 4096u

struct size_row {
	const char *name;            /* figure suffix */
	uint64_t bytes;
	unsigned reps, quick_reps;
};

/* Small sizes cost little each: more repetitions for a steady median. */
static const struct size_row sizes[] = {
	{ .name = "4k", .bytes = 4096, .reps = 1000, .quick_reps = 20 },
	{ .name = "1m", .bytes = 1u << 20, .reps = 300, .quick_reps = 10 },
	{ .name = "64m", .bytes = 64u << 20, .reps = 30, .quick_reps = 3 },
};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAX_REPS 1000u

struct bench {
	struct mnic_dev *dev;        /* the tenant whose MRs are timed */
	struct mnic_dev *mg;         /* management handle: counters */
	struct mnic_pd *pd;
	struct mnic_buf buf[N_SIZES];
	int hostmem;                 /* host-memory mode (the NIC has an aperture) */
	const char *suffix;          /* "" or "_phys" */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int fail(const char *what, const struct mnic_dev *dev)
{
	fprintf(stderr, "mnic-mr-bench: %s: %s\n", what, dev ? mnic_strerror_last(dev) : "");
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_us(uint64_t *ns, unsigned n)
{
	qsort(ns, n, sizeof(*ns), cmp_u64);
	return (double)ns[(n - 1) / 2] / 1000.0;
}

static int delivered(struct mnic_dev *mg, uint64_t *v)
{
	return mnic_counter(mg, MNIC_COUNTERS_MGMT, "cmds_delivered", v);
}

/* One registration of row r, counted and checked against the NIC's own
 * view; prints mr_reg_cmds_<size>. */
static int count_and_check(struct bench *b, unsigned r)
{
	struct mnic_cmd_query_device_out d0, d1, d2;
	uint64_t c0, c1, c2, pages = sizes[r].bytes / PAGE;
	struct mnic_mr *mr;

	if (mnic_query_device(b->dev, &d0))
		return fail("QUERY_DEVICE", b->dev);
	/* c1 - c0 is what one QUERY_COUNTERS costs: taken off below */
	if (delivered(b->mg, &c0) || delivered(b->mg, &c1))
		return fail("QUERY_COUNTERS", b->mg);
	if (mnic_reg_mr(b->pd, b->buf[r].addr, sizes[r].bytes,
			MNIC_ACCESS_LOCAL_WRITE | MNIC_ACCESS_REMOTE_WRITE, &mr))
		return fail("mnic_reg_mr", b->dev);
	if (delivered(b->mg, &c2))
		return fail("QUERY_COUNTERS", b->mg);
	if (mnic_query_device(b->dev, &d1))
		return fail("QUERY_DEVICE", b->dev);
	if (mnic_dereg_mr(mr))
		return fail("mnic_dereg_mr", b->dev);
	if (mnic_query_device(b->dev, &d2))
		return fail("QUERY_DEVICE", b->dev);
	fprintf(stderr, "mr_reg_bench: %s%s: %llu pages; registered: %u MRs, %u MTTs, "
			"%u MTT entries held; after deregistration: %u, %u, %u\n",
		sizes[r].name, b->suffix, (unsigned long long)pages, d1.n_mr, d1.n_mtt,
		d0.free_mtt_pages - d1.free_mtt_pages, d2.n_mr, d2.n_mtt,
		d0.free_mtt_pages - d2.free_mtt_pages);
	if (d1.n_mr != d0.n_mr + 1 || d2.n_mr != d0.n_mr)
		return fail("the NIC's MR count did not follow the registration", NULL);
	if (b->hostmem && (d1.n_mtt != d0.n_mtt + 1 || d0.free_mtt_pages - d1.free_mtt_pages != pages))
		return fail("the NIC does not hold one MTT of the buffer's pages", NULL);
	if (!b->hostmem && (d1.n_mtt != d0.n_mtt || d1.free_mtt_pages != d0.free_mtt_pages))
		return fail("an MTT in physical mode", NULL);
	if (d2.n_mtt != d0.n_mtt || d2.free_mtt_pages != d0.free_mtt_pages)
		return fail("the MTT was not returned", NULL);
	printf("mr_reg_cmds_%s%s: %llu cmds\n", sizes[r].name, b->suffix,
	       (unsigned long long)((c2 - c1) - (c1 - c0)));
	return 0;
}

static int time_row(struct bench *b, unsigned r, unsigned reps)
{
	static uint64_t reg_ns[MAX_REPS], dereg_ns[MAX_REPS];
	struct mnic_mr *mr;

	if (reps == 0 || reps > MAX_REPS)
		return fail("repetitions out of 1..MAX_REPS", NULL);
	for (unsigned i = 0; i < reps; i++) {
		uint64_t t0 = now_ns(), t1, t2;

		if (mnic_reg_mr(b->pd, b->buf[r].addr, sizes[r].bytes,
				MNIC_ACCESS_LOCAL_WRITE | MNIC_ACCESS_REMOTE_WRITE, &mr))
			return fail("mnic_reg_mr", b->dev);
		t1 = now_ns();
		if (mnic_dereg_mr(mr))
			return fail("mnic_dereg_mr", b->dev);
		t2 = now_ns();
		reg_ns[i] = t1 - t0;
		dereg_ns[i] = t2 - t1;
	}
	printf("mr_reg_us_%s%s: %.1f us\n", sizes[r].name, b->suffix, median_us(reg_ns, reps));
	printf("mr_dereg_us_%s%s: %.1f us\n", sizes[r].name, b->suffix, median_us(dereg_ns, reps));
	return 0;
}

static int setup(struct bench *b, const char *path)
{
	struct mnic_hostmem_info hm;
	uint64_t total = 0;

	if (mnic_open(path, &b->dev) < 0 || mnic_open_mgmt(path, &b->mg) < 0) {
		fprintf(stderr, "mnic-mr-bench: %s\n", mnic_open_error());
		return 1;
	}
	for (unsigned r = 0; r < N_SIZES; r++)
		total += sizes[r].bytes;
	/* the buffers, the allocator's blocks and the PD's nothing: 1 MiB spare */
	if (mnic_set_context_size(b->dev, total + (1u << 20)))
		return fail("context size (a BAR or host-memory aperture of 128 MiB holds it)", b->dev);
	if (mnic_alloc_pd(b->dev, &b->pd))
		return fail("ALLOC_PD", b->dev);
	for (unsigned r = 0; r < N_SIZES; r++)
		if (mnic_alloc(b->dev, sizes[r].bytes, PAGE, &b->buf[r]))
			return fail("mnic_alloc of the buffers", b->dev);
	if (mnic_hostmem_info(b->dev, &hm))
		return fail("host-memory info", b->dev);
	b->hostmem = hm.aperture != 0;
	b->suffix = b->hostmem ? "" : "_phys";
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b;
	int quick = argc == 3 && !strcmp(argv[1], "-q");
	int rc = 0;

	if (argc != 2 + quick || argv[argc - 1][0] == '-') {
		fprintf(stderr, "usage: mnic-mr-bench [-q] DEV (a NIC's BAR file)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&b, 0, sizeof(b));
	rc = setup(&b, argv[argc - 1]);
	for (unsigned r = 0; r < N_SIZES && rc == 0; r++) {
		rc = count_and_check(&b, r);
		if (rc == 0)
			rc = time_row(&b, r, quick ? sizes[r].quick_reps : sizes[r].reps);
	}
	for (unsigned r = 0; r < N_SIZES; r++)
		if (b.buf[r].len && mnic_free(b.dev, b.buf[r].addr))
			rc = fail("mnic_free", b.dev);
	if (b.pd && mnic_dealloc_pd(b.pd))
		rc = fail("DEALLOC_PD", b.dev);
	mnic_close(b.mg);
	mnic_close(b.dev);
	return rc;
}
