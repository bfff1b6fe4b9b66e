/* BTH opcode metadata, one table row per RC opcode (IBA 9.2 Table 36 and
 * 9.4; RESUME 0x19 is MigrOS's extension).  Everything the stages need to
 * know about a packet's shape comes from here, never from a switch. */
#ifndef ROCEV2_OPCODE_H
#define ROCEV2_OPCODE_H

#include <stdint.h>

enum rocev2_opcode {
	OP_SEND_FIRST = 0x00,
	OP_SEND_MIDDLE = 0x01,
	OP_SEND_LAST = 0x02,
	OP_SEND_LAST_IMM = 0x03,
	OP_SEND_ONLY = 0x04,
	OP_SEND_ONLY_IMM = 0x05,
	OP_WRITE_FIRST = 0x06,
	OP_WRITE_MIDDLE = 0x07,
	OP_WRITE_LAST = 0x08,
	OP_WRITE_LAST_IMM = 0x09,
	OP_WRITE_ONLY = 0x0a,
	OP_WRITE_ONLY_IMM = 0x0b,
	OP_READ_REQUEST = 0x0c,
	OP_READ_RESPONSE_FIRST = 0x0d,
	OP_READ_RESPONSE_MIDDLE = 0x0e,
	OP_READ_RESPONSE_LAST = 0x0f,
	OP_READ_RESPONSE_ONLY = 0x10,
	OP_ACKNOWLEDGE = 0x11,
	OP_ATOMIC_ACKNOWLEDGE = 0x12,
	OP_COMPARE_SWAP = 0x13,
	OP_FETCH_ADD = 0x14,
	OP_SEND_LAST_INV = 0x16,
	OP_SEND_ONLY_INV = 0x17,
	OP_RESUME = 0x19,            /* MigrOS: BTH + AETH, a request */
	OP_CNP = 0x81,               /* RoCEv2 congestion notification (IBA A17.9.2) */
};

/* Mask bits: which headers follow the BTH, and what the packet is. */
enum {
	OPM_RETH = 1u << 0,
	OPM_AETH = 1u << 1,
	OPM_ATMETH = 1u << 2,
	OPM_ATMACK = 1u << 3,
	OPM_IMMDT = 1u << 4,
	OPM_IETH = 1u << 5,
	OPM_PAYLOAD = 1u << 6,     /* may carry payload */
	OPM_REQ = 1u << 7,         /* goes to the responder */
	OPM_RESP = 1u << 8,        /* goes to the completer (ACK, read response) */
	OPM_START = 1u << 9,       /* FIRST or ONLY */
	OPM_MIDDLE = 1u << 10,
	OPM_END = 1u << 11,        /* LAST or ONLY */
	OPM_SEND = 1u << 12,
	OPM_WRITE = 1u << 13,
	OPM_READ = 1u << 14,
	OPM_ATOMIC = 1u << 15,
	OPM_RESUME = 1u << 16,
	OPM_CNP = 1u << 17,        /* congestion notification: to the reaction point (cc.c) */
	OPM_VALID = 1u << 31,
};

struct rocev2_opcode_info {
	const char *name;
	uint32_t mask;
	uint8_t hdr_len;           /* BTH + extension headers */
	uint8_t reth, aeth, atmeth, atmack, immdt, ieth;   /* offsets from BTH start */
};

extern const struct rocev2_opcode_info rocev2_opcodes[256];

static inline const struct rocev2_opcode_info *rocev2_opcode(uint8_t op)
{
	return &rocev2_opcodes[op];
}

#endif
