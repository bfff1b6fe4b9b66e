#include "opcode.h"

#include "wire.h"

/* Offsets of extension headers from the start of the BTH (IBA 9.2 Table
 * 36: extension headers follow in a fixed order). */
#define B BTH_LEN
#define SEND_REQ (OPM_VALID | OPM_REQ | OPM_SEND | OPM_PAYLOAD)
#define WRITE_REQ (OPM_VALID | OPM_REQ | OPM_WRITE | OPM_PAYLOAD)
#define RD_RESP (OPM_VALID | OPM_RESP | OPM_READ)

const struct rocev2_opcode_info rocev2_opcodes[256] = {
	[OP_SEND_FIRST] = { "SEND_FIRST", SEND_REQ | OPM_START, B },
	[OP_SEND_MIDDLE] = { "SEND_MIDDLE", SEND_REQ | OPM_MIDDLE, B },
	[OP_SEND_LAST] = { "SEND_LAST", SEND_REQ | OPM_END, B },
	[OP_SEND_LAST_IMM] = { "SEND_LAST_WITH_IMMEDIATE", SEND_REQ | OPM_END | OPM_IMMDT,
			       B + IMMDT_LEN, .immdt = B },
	[OP_SEND_ONLY] = { "SEND_ONLY", SEND_REQ | OPM_START | OPM_END, B },
	[OP_SEND_ONLY_IMM] = { "SEND_ONLY_WITH_IMMEDIATE",
			       SEND_REQ | OPM_START | OPM_END | OPM_IMMDT, B + IMMDT_LEN,
			       .immdt = B },
	[OP_SEND_LAST_INV] = { "SEND_LAST_WITH_INVALIDATE", SEND_REQ | OPM_END | OPM_IETH,
			       B + IETH_LEN, .ieth = B },
	[OP_SEND_ONLY_INV] = { "SEND_ONLY_WITH_INVALIDATE",
			       SEND_REQ | OPM_START | OPM_END | OPM_IETH, B + IETH_LEN,
			       .ieth = B },
	[OP_WRITE_FIRST] = { "RDMA_WRITE_FIRST", WRITE_REQ | OPM_START | OPM_RETH, B + RETH_LEN,
			     .reth = B },
	[OP_WRITE_MIDDLE] = { "RDMA_WRITE_MIDDLE", WRITE_REQ | OPM_MIDDLE, B },
	[OP_WRITE_LAST] = { "RDMA_WRITE_LAST", WRITE_REQ | OPM_END, B },
	[OP_WRITE_LAST_IMM] = { "RDMA_WRITE_LAST_WITH_IMMEDIATE", WRITE_REQ | OPM_END | OPM_IMMDT,
				B + IMMDT_LEN, .immdt = B },
	[OP_WRITE_ONLY] = { "RDMA_WRITE_ONLY", WRITE_REQ | OPM_START | OPM_END | OPM_RETH,
			    B + RETH_LEN, .reth = B },
	[OP_WRITE_ONLY_IMM] = { "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
				WRITE_REQ | OPM_START | OPM_END | OPM_RETH | OPM_IMMDT,
				B + RETH_LEN + IMMDT_LEN, .reth = B, .immdt = B + RETH_LEN },
	[OP_READ_REQUEST] = { "RDMA_READ_REQUEST",
			      OPM_VALID | OPM_REQ | OPM_READ | OPM_START | OPM_END | OPM_RETH,
			      B + RETH_LEN, .reth = B },
	[OP_READ_RESPONSE_FIRST] = { "RDMA_READ_RESPONSE_FIRST",
				     RD_RESP | OPM_PAYLOAD | OPM_START | OPM_AETH, B + AETH_LEN,
				     .aeth = B },
	[OP_READ_RESPONSE_MIDDLE] = { "RDMA_READ_RESPONSE_MIDDLE",
				      RD_RESP | OPM_PAYLOAD | OPM_MIDDLE, B },
	[OP_READ_RESPONSE_LAST] = { "RDMA_READ_RESPONSE_LAST",
				    RD_RESP | OPM_PAYLOAD | OPM_END | OPM_AETH, B + AETH_LEN,
				    .aeth = B },
	[OP_READ_RESPONSE_ONLY] = { "RDMA_READ_RESPONSE_ONLY",
				    RD_RESP | OPM_PAYLOAD | OPM_START | OPM_END | OPM_AETH,
				    B + AETH_LEN, .aeth = B },
	/* Payload: only the migration extension of NAK_STOPPED and of the
	 * RESUME's ACK (migrate.c); the completer drops it on any other. */
	[OP_ACKNOWLEDGE] = { "ACKNOWLEDGE",
			     OPM_VALID | OPM_RESP | OPM_PAYLOAD | OPM_START | OPM_END | OPM_AETH,
			     B + AETH_LEN, .aeth = B },
	[OP_ATOMIC_ACKNOWLEDGE] = { "ATOMIC_ACKNOWLEDGE",
				    OPM_VALID | OPM_RESP | OPM_ATOMIC | OPM_START | OPM_END |
					    OPM_AETH | OPM_ATMACK,
				    B + AETH_LEN + ATMACK_LEN, .aeth = B, .atmack = B + AETH_LEN },
	[OP_COMPARE_SWAP] = { "COMPARE_SWAP",
			      OPM_VALID | OPM_REQ | OPM_ATOMIC | OPM_START | OPM_END | OPM_ATMETH,
			      B + ATMETH_LEN, .atmeth = B },
	[OP_FETCH_ADD] = { "FETCH_ADD",
			   OPM_VALID | OPM_REQ | OPM_ATOMIC | OPM_START | OPM_END | OPM_ATMETH,
			   B + ATMETH_LEN, .atmeth = B },
	/* MigrOS RESUME: BTH + AETH (sent as zero), handled by the responder;
	 * payload: the version-1 RESUME (epoch, new address, MAC of a keyed
	 * connection), which migrate.c checks for its exact length. */
	[OP_RESUME] = { "RESUME",
			OPM_VALID | OPM_REQ | OPM_RESUME | OPM_PAYLOAD | OPM_START | OPM_END |
				OPM_AETH,
			B + AETH_LEN, .aeth = B },
	/* RoCEv2 CNP (IBA A17.9.2): BTH (BECN set, DestQP = the QP whose
	 * packets were marked) and 16 reserved bytes, no payload; neither a
	 * request nor a response, cc.c takes it. */
	[OP_CNP] = { "CNP", OPM_VALID | OPM_CNP, B + CNP_RSVD_LEN },
};
