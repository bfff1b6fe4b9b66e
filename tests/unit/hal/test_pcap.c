/* hal/posix/pcap.c: a capture of a few frames, checked byte for byte, and
 * read back by tshark when it is installed (skipped cleanly otherwise). */
#include "cmocka_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hal/errno.h"
#include "pcap.h"

static char dir[64], path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_pcap.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/cap.pcap", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

static uint8_t *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Three frames: a minimum-size one, a full 1514-byte one, and one longer
 * than the snap length (truncated, original length kept). */
#define BIG_LEN (PCAP_SNAPLEN + 100u)
static const uint64_t stamps[3] = { 0, 1700000000123456789ull, 1700000001000000001ull };
static const size_t lens[3] = { 60, 1514, BIG_LEN };

static void make_frame(uint8_t *f, size_t len, unsigned n)
{
	size_t i;

	for (i = 0; i < len; i++)
		f[i] = (uint8_t)(i * 13u + n);
	/* A plausible Ethernet II header, so a dissector is happy. */
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x88\xb5", 14);
}

static void write_capture(void)
{
	static uint8_t frame[BIG_LEN];
	struct pcap_writer w;
	unsigned n;

	assert_int_equal(pcap_open(&w, path), 0);
	for (n = 0; n < 3; n++) {
		make_frame(frame, lens[n], n);
		pcap_write(&w, frame, lens[n], stamps[n]);
	}
	assert_int_equal(w.frames, 3);
	assert_int_equal(w.error, 0);
	assert_int_equal(pcap_flush(&w), 0);
	pcap_close(&w);
	pcap_close(&w);                         /* repeat: harmless */
	assert_null(w.f);
}

static void test_bytes(void **state)
{
	static const uint8_t file_hdr[24] = {
		0x4d, 0x3c, 0xb2, 0xa1,         /* 0xa1b23c4d: nanosecond timestamps */
		0x02, 0x00, 0x04, 0x00,         /* version 2.4 */
		0x00, 0x00, 0x00, 0x00,         /* thiszone */
		0x00, 0x00, 0x00, 0x00,         /* sigfigs */
		0xff, 0xff, 0x00, 0x00,         /* snaplen 65535 */
		0x01, 0x00, 0x00, 0x00,         /* LINKTYPE_ETHERNET */
	};
	static uint8_t frame[BIG_LEN];
	uint8_t *buf;
	size_t len, off, expect = 24;
	unsigned n;

	(void)state;
	write_capture();
	buf = slurp(path, &len);
	for (n = 0; n < 3; n++)
		expect += 16 + (lens[n] < PCAP_SNAPLEN ? lens[n] : PCAP_SNAPLEN);
	assert_int_equal(len, expect);
	assert_memory_equal(buf, file_hdr, sizeof(file_hdr));
	off = 24;
	for (n = 0; n < 3; n++) {
		size_t incl = lens[n] < PCAP_SNAPLEN ? lens[n] : PCAP_SNAPLEN;

		assert_int_equal(rd32(buf + off), (uint32_t)(stamps[n] / 1000000000u));
		assert_int_equal(rd32(buf + off + 4), (uint32_t)(stamps[n] % 1000000000u));
		assert_int_equal(rd32(buf + off + 8), incl);
		assert_int_equal(rd32(buf + off + 12), lens[n]);
		make_frame(frame, lens[n], n);
		assert_memory_equal(buf + off + 16, frame, incl);
		off += 16 + incl;
	}
	/* The second stamp split exactly: 1700000000 s + 123456789 ns. */
	assert_int_equal(rd32(buf + 24 + 16 + 60), 1700000000u);
	assert_int_equal(rd32(buf + 24 + 16 + 60 + 4), 123456789u);
	free(buf);
}

/* tshark reads the file back: 3 frames with the right lengths. */
static void test_tshark_reads_it(void **state)
{
	char cmd[256], line[64];
	unsigned n = 0;
	FILE *p;

	(void)state;
	if (system("command -v tshark >/dev/null 2>&1") != 0)
		skip();
	write_capture();
	snprintf(cmd, sizeof(cmd), "tshark -r '%s' -T fields -e frame.len -e frame.cap_len 2>/dev/null",
		 path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long flen, cap;

		assert_true(n < 3);
		assert_int_equal(sscanf(line, "%lu %lu", &flen, &cap), 2);
		assert_int_equal(flen, lens[n]);
		assert_int_equal(cap, lens[n] < PCAP_SNAPLEN ? lens[n] : PCAP_SNAPLEN);
		n++;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(n, 3);
}

/* Not capturing: a failed open, a zeroed writer; writes are ignored. */
static void test_not_open(void **state)
{
	struct pcap_writer w;
	uint8_t f[60] = { 0 };

	(void)state;
	assert_int_equal(pcap_open(&w, "/nonexistent-dir/x.pcap"), -HAL_EIO);
	assert_null(w.f);
	pcap_write(&w, f, sizeof(f), 1);
	assert_int_equal(w.frames, 0);
	assert_int_equal(pcap_flush(&w), 0);
	pcap_close(&w);
	memset(&w, 0, sizeof(w));
	pcap_write(&w, f, sizeof(f), 1);
	pcap_close(&w);
	assert_int_equal(w.frames, 0);
}

/* An empty capture is a valid file: just the header. */
static void test_empty_capture(void **state)
{
	struct pcap_writer w;
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_int_equal(pcap_open(&w, path), 0);
	pcap_close(&w);
	buf = slurp(path, &len);
	assert_int_equal(len, 24);
	assert_int_equal(rd32(buf), PCAP_MAGIC_NS);
	free(buf);
}

/* A write error (full disk) stops the capture once, without crashing. */
static void test_write_error(void **state)
{
	struct pcap_writer w;
	static uint8_t f[4096];

	(void)state;
	if (access("/dev/full", W_OK) != 0)
		skip();
	assert_int_equal(pcap_open(&w, "/dev/full"), 0);   /* buffered: fails later */
	for (unsigned i = 0; i < 64 && !w.error; i++) {
		pcap_write(&w, f, sizeof(f), i);
		if (!w.error)
			pcap_flush(&w);
	}
	assert_int_equal(w.error, 1);
	pcap_write(&w, f, sizeof(f), 99);              /* ignored */
	assert_int_equal(pcap_flush(&w), -HAL_EIO);
	pcap_close(&w);
	assert_null(w.f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tshark_reads_it, setup, teardown),
		cmocka_unit_test(test_not_open),
		cmocka_unit_test_setup_teardown(test_empty_capture, setup, teardown),
		cmocka_unit_test(test_write_error),
	};
	return cmocka_run_group_tests_name("hal/pcap", tests, NULL, NULL);
}
