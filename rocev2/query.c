/* What the engine tells the firmware around it: device information, the
 * live objects (liveness by the engine's own lookups, an iterator), QP
 * migration flags, counters.  mgmt/ and firmware/ see the engine only
 * through rocev2.h; these are the reads they need. */
#include <string.h>

#include "internal.h"
#include "pool.h"

void rocev2_query_device(const struct rocev2 *e, struct rocev2_device_info *info)
{
	unsigned i;

	memset(info, 0, sizeof(*info));
	memcpy(info->mac, e->env.mac, sizeof(info->mac));
	info->ipv4 = e->env.ipv4;
	info->pause_timeout_ns = e->pause_timeout_ns;
	info->resume_budget_ns = e->resume_budget_ns;
	info->mig_flags = e->mig_flags;
	info->objects[ROCEV2_OBJ_PD] = e->n_pd;
	info->objects[ROCEV2_OBJ_MR] = e->n_mr;
	info->objects[ROCEV2_OBJ_CQ] = e->n_cq;
	info->objects[ROCEV2_OBJ_SRQ] = e->n_srq;
	info->objects[ROCEV2_OBJ_QP] = e->n_qp;
	info->objects[ROCEV2_OBJ_MTT] = e->n_mtt;
	info->mtt_pages_free = ROCEV2_MTT_PAGES;
	for (i = 0; i < ROCEV2_MAX_MTT; i++)
		if (e->mtts[i].in_use)
			info->mtt_pages_free -= e->mtts[i].npages;
	info->migration = ROCEV2_MIGRATION;
}

int rocev2_context_stopped(const struct rocev2 *e, uint32_t owner)
{
	unsigned i;

	if (owner >= ROCEV2_MAX_OWNERS)
		return 0;
	if (e->owner_stopped[owner])
		return 1;
	for (i = 0; i < ROCEV2_MAX_QP; i++)
		if (e->qps[i].in_use && e->qps[i].owner == owner && e->qps[i].stopped)
			return 1;
	return 0;
}

void rocev2_owner_objects(const struct rocev2 *e, uint32_t owner,
			  uint32_t objects[ROCEV2_OBJ_LIVE_NUM])
{
	unsigned i;

	for (i = 0; i < ROCEV2_OBJ_LIVE_NUM; i++)
		objects[i] = 0;
	for (i = 0; i < ROCEV2_MAX_PD; i++)
		objects[ROCEV2_OBJ_PD] += e->pds[i].in_use && e->pds[i].owner == owner;
	for (i = 0; i < ROCEV2_MAX_MR; i++)
		objects[ROCEV2_OBJ_MR] += e->mrs[i].in_use && e->mrs[i].owner == owner;
	for (i = 0; i < ROCEV2_MAX_CQ; i++)
		objects[ROCEV2_OBJ_CQ] += e->cqs[i].in_use && e->cqs[i].owner == owner;
	for (i = 0; i < ROCEV2_MAX_SRQ; i++)
		objects[ROCEV2_OBJ_SRQ] += e->srqs[i].in_use && e->srqs[i].owner == owner;
	for (i = 0; i < ROCEV2_MAX_QP; i++)
		objects[ROCEV2_OBJ_QP] += e->qps[i].in_use && e->qps[i].owner == owner;
	for (i = 0; i < ROCEV2_MAX_MTT; i++)
		objects[ROCEV2_OBJ_MTT] += e->mtts[i].in_use && e->mtts[i].owner == owner;
}

uint64_t rocev2_clock_ns(const struct rocev2 *e)
{
	return rocev2_now(e);
}

int rocev2_obj_live(struct rocev2 *e, enum rocev2_obj_type type, uint32_t handle)
{
	switch (type) {
	case ROCEV2_OBJ_PD:
		return rocev2_pd_get(e, handle) != NULL;
	case ROCEV2_OBJ_MR:
		return rocev2_mr_lookup(e, handle) != NULL;
	case ROCEV2_OBJ_CQ:
		return rocev2_cq_get(e, handle) != NULL;
	case ROCEV2_OBJ_SRQ:
		return rocev2_srq_get(e, handle) != NULL;
	case ROCEV2_OBJ_QP:
		return rocev2_qp_lookup(e, handle) != NULL;
	case ROCEV2_OBJ_MTT:
		return rocev2_mtt_get(e, handle) != NULL;
	case ROCEV2_OBJ_EQ: {
		uint32_t owner;

		return rocev2_eq_owner(e, handle, &owner) == 0;
	}
	default:
		return 0;
	}
}

int rocev2_obj_owner(struct rocev2 *e, enum rocev2_obj_type type, uint32_t handle,
		     uint32_t *owner)
{
	const struct rocev2_pd *pd;
	const struct rocev2_mr *mr;
	const struct rocev2_cq *cq;
	const struct rocev2_srq *srq;
	const struct rocev2_qp *qp;
	const struct rocev2_mtt *mtt;

	switch (type) {
	case ROCEV2_OBJ_PD:
		if (!(pd = rocev2_pd_get(e, handle)))
			return -HAL_EINVAL;
		*owner = pd->owner;
		return 0;
	case ROCEV2_OBJ_MR:
		if (!(mr = rocev2_mr_lookup(e, handle)))
			return -HAL_EINVAL;
		*owner = mr->owner;
		return 0;
	case ROCEV2_OBJ_CQ:
		if (!(cq = rocev2_cq_get(e, handle)))
			return -HAL_EINVAL;
		*owner = cq->owner;
		return 0;
	case ROCEV2_OBJ_SRQ:
		if (!(srq = rocev2_srq_get(e, handle)))
			return -HAL_EINVAL;
		*owner = srq->owner;
		return 0;
	case ROCEV2_OBJ_QP:
		if (!(qp = rocev2_qp_lookup(e, handle)))
			return -HAL_EINVAL;
		*owner = qp->owner;
		return 0;
	case ROCEV2_OBJ_MTT:
		if (!(mtt = rocev2_mtt_get(e, handle)))
			return -HAL_EINVAL;
		*owner = mtt->owner;
		return 0;
	case ROCEV2_OBJ_EQ:
		return rocev2_eq_owner(e, handle, owner);
	default:
		return -HAL_EINVAL;
	}
}

int rocev2_obj_next(const struct rocev2 *e, enum rocev2_obj_type type, uint32_t cursor,
		    uint32_t *handle)
{
	uint32_t i;

	switch (type) {
	case ROCEV2_OBJ_PD:
		for (i = rocev2_handle_index(cursor); i < ROCEV2_MAX_PD; i++)
			if (e->pds[i].in_use) {
				*handle = rocev2_handle(e->pds[i].gen, i);
				return 0;
			}
		return -HAL_ENXIO;
	case ROCEV2_OBJ_MR:
		for (i = cursor >> ROCEV2_MR_KEY_BITS; i < ROCEV2_MAX_MR; i++)
			if (e->mrs[i].in_use) {
				*handle = e->mrs[i].lkey;
				return 0;
			}
		return -HAL_ENXIO;
	case ROCEV2_OBJ_CQ:
		for (i = rocev2_handle_index(cursor); i < ROCEV2_MAX_CQ; i++)
			if (e->cqs[i].in_use) {
				*handle = rocev2_handle(e->cqs[i].gen, i);
				return 0;
			}
		return -HAL_ENXIO;
	case ROCEV2_OBJ_SRQ:
		for (i = rocev2_handle_index(cursor); i < ROCEV2_MAX_SRQ; i++)
			if (e->srqs[i].in_use) {
				*handle = rocev2_handle(e->srqs[i].gen, i);
				return 0;
			}
		return -HAL_ENXIO;
	case ROCEV2_OBJ_QP:
		for (i = cursor & ROCEV2_QPN_IDX_MASK; i < ROCEV2_MAX_QP; i++)
			if (e->qps[i].in_use) {
				*handle = e->qps[i].qpn;
				return 0;
			}
		return -HAL_ENXIO;
	case ROCEV2_OBJ_MTT:
		for (i = rocev2_handle_index(cursor); i < ROCEV2_MAX_MTT; i++)
			if (e->mtts[i].in_use) {
				*handle = rocev2_handle(e->mtts[i].gen, i);
				return 0;
			}
		return -HAL_ENXIO;
	default:
		return -HAL_EINVAL;
	}
}

int rocev2_qp_mig_flags(struct rocev2 *e, uint32_t qpn, uint32_t *flags)
{
	const struct rocev2_qp *qp = rocev2_qp_lookup(e, qpn);

	if (!qp || !flags)
		return -HAL_EINVAL;
	*flags = (qp->stopped ? ROCEV2_QP_MIG_STOPPED : 0u) |
		 (qp->paused ? ROCEV2_QP_MIG_PAUSED : 0u) |
		 (qp->mig.has_key ? ROCEV2_QP_MIG_HAS_KEY : 0u);
	return 0;
}

const struct rocev2_counters *rocev2_counters(const struct rocev2 *e)
{
	return &e->cnt;
}
