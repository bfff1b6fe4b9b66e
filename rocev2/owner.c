/* Object ownership (contexts, mnic/cmd.h "contexts"): the owner the
 * objects created next belong to, and the end of an owner: every object it
 * holds destroyed.  Apart from the engine's lifecycle (rocev2.c) so that a
 * harness of the receive path alone links without the object pools'
 * destroy functions (scripts/fuzz.sh fuzz_rx_isolated). */
#include "internal.h"
#include "pool.h"

int rocev2_create_as(struct rocev2 *e, uint32_t owner)
{
	if (owner >= ROCEV2_MAX_OWNERS)
		return -HAL_EINVAL;
	e->creator = (uint16_t)owner;
	return 0;
}

/* Dependents first, so that no destroy finds its object still referenced
 * (IBA 11.2.1.5): QPs, then SRQs, CQs, EQs, MRs, MTTs and PDs.  References never
 * cross contexts (every create checks), so each one succeeds. */
int rocev2_destroy_owned(struct rocev2 *e, uint32_t owner)
{
	uint32_t i;
	int rc = 0;

	if (owner >= ROCEV2_MAX_OWNERS)
		return -HAL_EINVAL;
	for (i = 0; i < ROCEV2_MAX_QP; i++)
		if (e->qps[i].in_use && e->qps[i].owner == owner)
			rc |= rocev2_destroy_qp(e, e->qps[i].qpn);
	for (i = 0; i < ROCEV2_MAX_SRQ; i++)
		if (e->srqs[i].in_use && e->srqs[i].owner == owner)
			rc |= rocev2_destroy_srq(e, rocev2_handle(e->srqs[i].gen, i));
	for (i = 0; i < ROCEV2_MAX_CQ; i++)
		if (e->cqs[i].in_use && e->cqs[i].owner == owner)
			rc |= rocev2_destroy_cq(e, rocev2_handle(e->cqs[i].gen, i));
	for (i = 0; i < ROCEV2_MAX_EQ; i++)
		if (e->eqs[i].in_use && e->eqs[i].owner == owner)
			rc |= rocev2_destroy_eq(e, rocev2_handle(e->eqs[i].gen, i));
	for (i = 0; i < ROCEV2_MAX_MR; i++)
		if (e->mrs[i].in_use && e->mrs[i].owner == owner)
			rc |= rocev2_dereg_mr(e, e->mrs[i].lkey);
	for (i = 0; i < ROCEV2_MAX_MTT; i++)
		if (e->mtts[i].in_use && e->mtts[i].owner == owner)
			rc |= rocev2_destroy_mtt(e, rocev2_handle(e->mtts[i].gen, i));
	for (i = 0; i < ROCEV2_MAX_PD; i++)
		if (e->pds[i].in_use && e->pds[i].owner == owner)
			rc |= rocev2_dealloc_pd(e, rocev2_handle(e->pds[i].gen, i));
	e->owner_stopped[owner] = 0;    /* its dump, if any, ends with it */
	return rc ? -HAL_EBUSY : 0;
}
