/* Shared receive queues (IBA 10.2.9): one ring of receive WQEs that several
 * QPs' responders take from (rocev2_rq_take in queue.c).  The host arms a
 * limit; when a take leaves fewer WQEs than that, one
 * ROCEV2_EVENT_SRQ_LIMIT_REACHED is posted and the limit disarms until the
 * host arms it again (ibv_modify_srq semantics). */
#include "pool.h"

struct rocev2_srq *rocev2_srq_get(struct rocev2 *e, uint32_t handle)
{
	uint32_t idx = rocev2_handle_index(handle);
	struct rocev2_srq *srq;

	if (idx >= ROCEV2_MAX_SRQ)
		return NULL;
	srq = &e->srqs[idx];
	if (!srq->in_use || srq->gen != rocev2_handle_gen(handle))
		return NULL;
	return srq;
}

ROCEV2_CTL int rocev2_create_srq(struct rocev2 *e, uint32_t pd_handle, const struct rocev2_srq_attr *a,
		      uint32_t *handle)
{
	struct rocev2_pd *pd = rocev2_pd_get(e, pd_handle);
	struct rocev2_srq *srq;
	uint32_t idx;
	int err;

	if (!pd || pd->owner != e->creator || !a || !handle)
		return -HAL_EINVAL;
	err = rocev2_queue_attr_check(e, &a->q, MNIC_WQE_SIZE, 1);
	if (err)
		return err;
	if (a->max_sge > MNIC_MAX_SGE || a->srq_limit >= a->q.size)
		return -HAL_EINVAL;
	ROCEV2_POOL_FIND_FREE(e->srqs, ROCEV2_MAX_SRQ, idx);
	if (idx >= ROCEV2_MAX_SRQ)
		return -HAL_ENOMEM;
	srq = &e->srqs[idx];
	srq->gen = rocev2_pool_next_gen(srq->gen, ROCEV2_HANDLE_GEN_MAX);
	srq->pd = (uint16_t)(pd - e->pds);
	srq->max_sge = a->max_sge;
	srq->limit = a->srq_limit;
	srq->limit_armed = a->srq_limit != 0;
	srq->wq = (struct rocev2_wq){ .q = a->q };   /* ci = pi = 0: zeroed ring */
	srq->refcnt = 0;
	srq->owner = e->creator;
	srq->in_use = 1;
	pd->refcnt++;
	rocev2_queue_mtt_ref(e, &a->q, 1);
	e->n_srq++;
	*handle = rocev2_handle(srq->gen, idx);
	return 0;
}

ROCEV2_CTL int rocev2_modify_srq_limit(struct rocev2 *e, uint32_t handle, uint32_t limit)
{
	struct rocev2_srq *srq = rocev2_srq_get(e, handle);

	if (!srq || limit >= srq->wq.q.size)
		return -HAL_EINVAL;
	srq->limit = limit;
	srq->limit_armed = limit != 0;
	return 0;
}

ROCEV2_CTL int rocev2_destroy_srq(struct rocev2 *e, uint32_t handle)
{
	struct rocev2_srq *srq = rocev2_srq_get(e, handle);

	if (!srq)
		return -HAL_EINVAL;
	if (srq->refcnt)
		return -HAL_EBUSY;      /* QPs still take receive WQEs from it */
	e->pds[srq->pd].refcnt--;
	rocev2_queue_mtt_ref(e, &srq->wq.q, -1);
	srq->in_use = 0;
	e->n_srq--;
	return 0;
}

/* The responders take WQEs on demand (rocev2_rq_take re-reads the
 * producer), so a doorbell only refreshes the cached producer index. */
int rocev2_srq_doorbell(struct rocev2 *e, uint32_t handle)
{
	struct rocev2_srq *srq = rocev2_srq_get(e, handle);

	if (!srq)
		return -HAL_EINVAL;
	rocev2_wq_refresh(e, &srq->wq);
	return 0;
}
