/* Data-path doorbells (mnic/abi.h "Doorbells", mnic/queues.h).
 *
 * ivshmem-plain and the POSIX BAR file raise no interrupt, so the host
 * announces work in two steps: it writes the queue's doorbell record (a
 * producer index in the user area), then increments db_page.db_seq.  A
 * change of db_seq makes the firmware re-read the doorbell record of every
 * live queue: an SQ schedules its requester, an RQ in error flushes, an
 * SRQ refreshes its producer index.  The host never names the queue, so a
 * hostile host can only make the firmware look at its own queues.
 * The engine walks its own queues (rocev2_doorbells_changed).  Cost: one
 * pass over the QP and SRQ pools per db_seq change.
 *
 * The host Ethernet TX ring is the kernel driver's alone: its producer is
 * re-read on every pass (one 8-byte read), with or without a db_seq
 * change, so the driver only writes the record and rings (a shared
 * db_seq incremented from the kernel and from applications' mappings
 * could lose an increment: no atomic crosses them).
 */
#include "hal/mmio.h"
#include "mgmt/mgmt.h"
#include "rocev2/rocev2.h"

int mnic_db_service(struct mnic_mgmt *m)
{
	uint32_t seq = m->cfg.db->db_seq;
	int tx = rocev2_ethq_tx_doorbell(m->cfg.engine);

	if (seq == m->db_seen)
		return tx;
	/* db_seq first, then the doorbell records it announces (the host
	 * wrote the record, then, after a barrier, db_seq). */
	hal_rmb();
	m->db_seen = seq;
	m->cnt.db_rings++;
	m->cnt.db_refreshes += rocev2_doorbells_changed(m->cfg.engine);
	m->cfg.seg->db_seen = seq;
	return 1;
}
