/* The doorbell channel of a POSIX NIC (docs/host-interface.md "Doorbells
 * and interrupts"): how a host process on the same machine rings the NIC
 * and how the NIC interrupts it, where a PCIe NIC has a doorbell register
 * and MSI-X.  Shared by the POSIX NIC (hal/posix/doorbell.c) and libmnic's
 * BAR backend (hostdrv/lib/dbch.c).
 *
 * Transport: a unix SOCK_SEQPACKET socket at "<BAR file>.db" (POSIX NIC
 * option --doorbell PATH|off).  Sequenced packets keep message boundaries
 * and tell the NIC when a host goes away (its process exits: EOF).  Every
 * message is one struct mnic_dbch_msg, native byte order (both ends run on
 * one machine), with at most one file descriptor in SCM_RIGHTS:
 *
 *   NIC  -> host  WELCOME  on accept; fd: the NIC's ring eventfd.  The host
 *                          rings by writing an 8-byte 1 to it after every
 *                          store into the BAR the NIC must act on (cmdq_pi,
 *                          cmdq_ctrl, db_seq).  n_vectors: the vectors the
 *                          NIC raises (0 .. n_vectors - 1).
 *   host -> NIC   VECTOR   fd: an eventfd of the host's; vector: which.  The
 *                          NIC adds 1 to it whenever it raises that vector
 *                          for this host (a second VECTOR for the same
 *                          vector replaces the first).
 *   NIC  -> host  REPLY    to each VECTOR: status MNIC_DBCH_OK or why not
 *                          (the fd is then closed by the NIC).
 *
 * A wakeup is a hint: the host always re-reads the BAR (the completion it
 * waits for) after one, and waits with a timeout.  The NIC counts every
 * refusal (QUERY_COUNTERS PORT: dbch_*) and keeps serving.
 */
#ifndef MNIC_DBCH_H
#define MNIC_DBCH_H

#include <stdint.h>

#define MNIC_DBCH_SUFFIX ".db"
#define MNIC_DBCH_MAGIC 0x4843424du     /* "MBCH" */
#define MNIC_DBCH_VERSION 1u

enum mnic_dbch_type {
	MNIC_DBCH_WELCOME = 1,
	MNIC_DBCH_VECTOR = 2,
	MNIC_DBCH_REPLY = 3,
};

/* Vectors: 0 is the command queue's (an entry completed, or cmdq_status
 * changed); the event queues of completion events take the next ones. */
#define MNIC_DBCH_VEC_CMD 0u
#define MNIC_DBCH_MAX_VECTORS 64u       /* what the protocol can name */

enum mnic_dbch_status {
	MNIC_DBCH_OK = 0,
	MNIC_DBCH_BAD_VECTOR = 1,       /* vector >= the WELCOME's n_vectors */
	MNIC_DBCH_BAD_FD = 2,           /* not exactly one eventfd */
};

struct mnic_dbch_msg {
	uint32_t magic;                 /* MNIC_DBCH_MAGIC */
	uint16_t version;               /* MNIC_DBCH_VERSION */
	uint16_t type;                  /* enum mnic_dbch_type */
	uint16_t vector;                /* VECTOR, REPLY */
	uint16_t n_vectors;             /* WELCOME */
	uint32_t status;                /* REPLY: enum mnic_dbch_status */
};
_Static_assert(sizeof(struct mnic_dbch_msg) == 16, "doorbell channel message");

#endif
