/* ibv-traffic's message format and checks (layout: ibv_traffic_msg.h). */
#include "ibv_traffic_msg.h"

#include <string.h>

#include "lib/crc32.h"

const char *const ibvt_op_name[IBVT_OP_NUM] = {
	[IBVT_OP_SEND] = "SEND",
	[IBVT_OP_WIMM] = "WRITE_WITH_IMM",
	[IBVT_OP_READ] = "READ",
	[IBVT_OP_FADD] = "FETCH_ADD",
	[IBVT_OP_CSWAP] = "CMP_SWAP",
};

/* The mix in percent (table over branches); the sum is 100. */
static const unsigned op_weight[IBVT_OP_NUM] = {
	[IBVT_OP_SEND] = 35, [IBVT_OP_WIMM] = 35, [IBVT_OP_READ] = 14, [IBVT_OP_FADD] = 8, [IBVT_OP_CSWAP] = 8,
};

/* Header field offsets (ibv_traffic_msg.h draws them). */
enum { OFF_MAGIC = 0, OFF_KIND = 4, OFF_DIR = 5, OFF_RSVD0 = 6, OFF_SEQ = 8, OFF_LEN = 16, OFF_CRC = 20, OFF_RSVD1 = 24 };
_Static_assert(OFF_RSVD1 + 8 == IBVT_HDR_LEN, "the header is 32 bytes");

static void put32(uint8_t *p, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* splitmix64: the plan's and the payload's generator */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The payload of the message (kind, dir, seq): one generator step per 8
 * bytes, so any 8-aligned chunk regenerates on its own. */
static uint64_t payload_base(enum ibvt_kind kind, uint8_t dir, uint64_t seq)
{
	return mix64(seq ^ ((uint64_t)kind << 56) ^ ((uint64_t)dir << 48));
}

/* bytes [off, off + n) of the payload (off a multiple of 8) into p */
static void payload_chunk(uint8_t *p, uint32_t off, uint32_t n, uint64_t base)
{
	for (uint32_t o = 0; o < n; o += 8) {
		uint64_t w = mix64(base + off + o);

		for (uint32_t i = 0; i < 8 && o + i < n; i++)
			p[o + i] = (uint8_t)(w >> (8 * i));
	}
}

static uint32_t msg_crc(const uint8_t *b, uint32_t len)
{
	static const uint8_t zero[4];
	uint32_t c = crc32c(0, b, OFF_CRC);

	c = crc32c(c, zero, sizeof(zero));
	return crc32c(c, b + OFF_CRC + 4, len - OFF_CRC - 4);
}

void ibvt_msg_fill(void *buf, uint32_t len, enum ibvt_kind kind, uint8_t dir, uint64_t seq)
{
	uint8_t *b = buf;

	memset(b, 0, IBVT_HDR_LEN);
	put32(b + OFF_MAGIC, IBVT_MAGIC);
	b[OFF_KIND] = (uint8_t)kind;
	b[OFF_DIR] = dir;
	put64(b + OFF_SEQ, seq);
	put32(b + OFF_LEN, len);
	payload_chunk(b + IBVT_HDR_LEN, 0, len - IBVT_HDR_LEN, payload_base(kind, dir, seq));
	put32(b + OFF_CRC, msg_crc(b, len));
}

int ibvt_msg_check(const void *buf, uint32_t len, enum ibvt_kind kind, uint8_t dir, uint64_t want_seq,
		   uint64_t *seq_out, const char **why)
{
	const uint8_t *b = buf;
	uint8_t expect[64];
	uint64_t seq, base;
	uint32_t n;

	*why = NULL;
	if (len < IBVT_HDR_LEN) {
		*why = "shorter than the header";
		return -1;
	}
	seq = get64(b + OFF_SEQ);
	if (seq_out)
		*seq_out = seq;
	if (get32(b + OFF_MAGIC) != IBVT_MAGIC)
		*why = "bad magic";
	else if (b[OFF_KIND] != kind)
		*why = "wrong kind";
	else if (b[OFF_DIR] != dir)
		*why = "wrong direction";
	else if (get32(b + OFF_LEN) != len)
		*why = "length differs from the received length";
	else if (get32(b + OFF_CRC) != msg_crc(b, len))
		*why = "CRC32C mismatch";
	else if (want_seq != UINT64_MAX && seq != want_seq)
		*why = "wrong seq";
	if (*why)
		return -1;
	/* every payload byte against its regenerated value, 64 at a time */
	n = len - IBVT_HDR_LEN;
	base = payload_base(kind, dir, seq);
	for (uint32_t off = 0; off < n; off += sizeof(expect)) {
		uint32_t k = n - off < sizeof(expect) ? n - off : (uint32_t)sizeof(expect);

		payload_chunk(expect, off, k, base);
		if (memcmp(expect, b + IBVT_HDR_LEN + off, k) != 0) {
			*why = "payload byte wrong";
			return -1;
		}
	}
	return 0;
}

enum ibvt_verdict ibvt_rx_take(struct ibvt_rx *rx, const void *buf, uint32_t len, enum ibvt_kind kind,
			       uint8_t dir, uint32_t imm, const char **why)
{
	uint64_t seq;

	if (ibvt_msg_check(buf, len, kind, dir, UINT64_MAX, &seq, why) != 0) {
		rx->bad++;
		return IBVT_BAD;
	}
	/* a WRITE_WITH_IMM's immediate is its seq's low 32 bits (IBA 9.4.3) */
	if (kind == IBVT_WIMM && imm != (uint32_t)seq) {
		*why = "immediate differs from the message's seq";
		rx->bad++;
		return IBVT_BAD;
	}
	if (seq < rx->expect) {
		*why = "duplicate";
		rx->dup++;
		return IBVT_DUP;
	}
	if (seq > rx->expect) {
		*why = "out of order (earlier messages missing)";
		rx->ooo++;
		rx->lost += seq - rx->expect;
		rx->expect = seq + 1;
		return IBVT_OOO;
	}
	rx->ok++;
	rx->expect = seq + 1;
	return IBVT_OK;
}

void ibvt_rx_finish(struct ibvt_rx *rx, uint64_t sent)
{
	if (sent > rx->expect) {
		rx->lost += sent - rx->expect;
		rx->expect = sent;
	}
}

enum ibvt_op ibvt_plan_op(uint64_t seed, uint64_t i)
{
	unsigned r = (unsigned)(mix64(seed * 0x100000001b3ull + i) % 100u), acc = 0;

	for (unsigned op = 0; op < IBVT_OP_NUM; op++) {
		acc += op_weight[op];
		if (r < acc)
			return (enum ibvt_op)op;
	}
	return IBVT_OP_SEND;
}

uint32_t ibvt_plan_len(uint64_t seed, uint64_t i, uint32_t max_len)
{
	uint64_t r = mix64(~seed + i * 0x9e37u);

	if (max_len <= IBVT_HDR_LEN)
		return IBVT_HDR_LEN;
	/* one message in four is the largest: multi-packet at every MTU */
	if ((r & 3) == 0)
		return max_len;
	return IBVT_HDR_LEN + (uint32_t)((r >> 2) % (max_len - IBVT_HDR_LEN + 1));
}

uint64_t ibvt_plan_msgs(uint64_t seed, uint64_t n)
{
	uint64_t m = 0;

	for (uint64_t i = 0; i < n; i++) {
		enum ibvt_op op = ibvt_plan_op(seed, i);

		m += op == IBVT_OP_SEND || op == IBVT_OP_WIMM;
	}
	return m;
}

uint64_t ibvt_plan_add(uint64_t seed, uint64_t i)
{
	return 1 + (mix64(seed ^ (i << 20) ^ 0xadd) & 15);
}

uint32_t ibvt_rslot_len(uint32_t k, uint32_t max_len)
{
	if (max_len <= IBVT_HDR_LEN)
		return IBVT_HDR_LEN;
	return k == 0 ? max_len : IBVT_HDR_LEN + (uint32_t)(mix64(k) % (max_len - IBVT_HDR_LEN + 1));
}
