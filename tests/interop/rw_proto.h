/* The out-of-band exchange and data patterns shared by rdma_rw (libibverbs,
 * inside the rxe VM) and mnic-rw (libmnic, on the host, driving our NIC).
 *
 * TCP, mnic-rw connects (through the VM's 127.0.0.1 hostfwd):
 *   mnic-rw -> rdma_rw   RW_MSG_PEER bytes: "LID:QPN:PSN:GID" exactly as
 *                        rdma-core's ibv_rc_pingpong writes it
 *                        ("%04x:%06x:%06x:%s", GID = 32 hex digits of the
 *                        16 GID bytes in wire order, NUL-terminated)
 *   rdma_rw -> mnic-rw   RW_MSG_MR bytes: the same, then ":ADDR:RKEY:LEN"
 *                        ("%016" PRIx64 ":%08x:%08x") of the rxe MR
 *   mnic-rw: RDMA WRITE rw_write_byte(i) into [ADDR + LEN, ADDR + 2 LEN),
 *            RDMA READ [ADDR, ADDR + LEN) and check rw_read_byte(i)
 *   mnic-rw -> rdma_rw   RW_TOKEN_LEN bytes "rw-done" (or "rw-fail")
 *   rdma_rw -> mnic-rw   "rw-ok" or "rw-bad" after checking both halves
 * With mnic-rw --atomic (peers that know it: mnic-rw-kmod), between the
 * READ and the token: ATOMIC FETCH_AND_ADD of RW_ATOMIC_ADD to the 8
 * bytes at ADDR + LEN - 8 (the read half's last 8 bytes: a page's last 8
 * when LEN is a page multiple), the fetched value checked as the pattern,
 * and the token "rw-atom" instead of "rw-done".
 */
#ifndef INTEROP_RW_PROTO_H
#define INTEROP_RW_PROTO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#define RW_MSG_PEER (sizeof "0000:000000:000000:00000000000000000000000000000000")
#define RW_MSG_MR (RW_MSG_PEER + sizeof ":0000000000000000:00000000:00000000" - 1)
#define RW_TOKEN_LEN 8u
#define RW_MAX_LEN (1u << 24)
#define RW_ATOMIC_ADD 0x0123456789abcdefull

/* Patterns that repeat at no power of two below 64 KiB, so a misplaced
 * packet (wrong offset, wrong PSN) cannot pass the check. */
static inline uint8_t rw_read_byte(uint32_t i)
{
	return (uint8_t)(i * 131u + 7u + (i >> 8) * 17u + (i >> 16));
}

static inline uint8_t rw_write_byte(uint32_t i)
{
	return (uint8_t)(i * 37u + 0x5au + (i >> 9) * 29u + (i >> 16) * 3u);
}

/* The 8 pattern bytes at i.. as the little-endian 64-bit value an atomic
 * reads there (the hosts here are little-endian). */
static inline uint64_t rw_read_u64(uint32_t i)
{
	uint64_t v = 0;

	for (unsigned b = 0; b < 8; b++)
		v |= (uint64_t)rw_read_byte(i + b) << (8 * b);
	return v;
}

/* Read or write exactly len bytes of the exchange (0), or -1. */
static inline int io_full(int fd, void *buf, size_t len, int wr)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif
