/* Data-path doorbells (mnic/abi.h "Doorbells", mnic/queues.h).
 *
 * ivshmem-plain and the POSIX BAR file raise no interrupt, so the host
 * announces work in two steps: it writes the queue's doorbell record (a
 * producer index in the user area), then increments init_seg.db_seq.  A
 * change of db_seq makes the firmware re-read the doorbell record of every
 * live queue: an SQ schedules its requester, an RQ in error flushes, an
 * SRQ refreshes its producer index.  The host never names the queue, so a
 * hostile host can only make the firmware look at its own queues.
 * Cost: one pass over the QP and SRQ pools per db_seq change.
 */
#include "hal/mmio.h"
#include "mgmt.h"
#include "rocev2/internal.h"
#include "rocev2/pool.h"

int mnic_db_service(struct mnic_mgmt *m)
{
	struct rocev2 *e = m->cfg.engine;
	uint32_t seq = m->cfg.seg->db_seq;
	unsigned i;

	if (seq == m->db_seen)
		return 0;
	/* db_seq first, then the doorbell records it announces (the host
	 * wrote the record, then, after a barrier, db_seq). */
	hal_rmb();
	m->db_seen = seq;
	m->cnt.db_rings++;
	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		const struct rocev2_qp *qp = &e->qps[i];

		/* A QP in RESET has no queues to look at (the engine refuses). */
		if (!qp->in_use || qp->state == ROCEV2_QPS_RESET)
			continue;
		if (qp->sq.q.size) {
			(void)rocev2_sq_doorbell(e, qp->qpn);
			m->cnt.db_refreshes++;
		}
		if (qp->rq.q.size && qp->srq == ROCEV2_NO_SRQ) {
			(void)rocev2_rq_doorbell(e, qp->qpn);
			m->cnt.db_refreshes++;
		}
	}
	for (i = 0; i < ROCEV2_MAX_SRQ; i++) {
		const struct rocev2_srq *srq = &e->srqs[i];

		if (!srq->in_use)
			continue;
		(void)rocev2_srq_doorbell(e, rocev2_handle(srq->gen, i));
		m->cnt.db_refreshes++;
	}
	m->cfg.seg->db_seen = seq;
	return 1;
}
