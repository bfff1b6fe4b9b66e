/* Protection domains (IBA 10.6.3.1 and 11.2.1.5): a PD is only a tag that
 * MRs, SRQs and QPs carry; an access through an lkey/rkey is allowed only
 * when the MR and the QP carry the same one.  The PD cannot go away while
 * anything carries it (refcnt). */
#include "pool.h"

struct rocev2_pd *rocev2_pd_get(struct rocev2 *e, uint32_t handle)
{
	uint32_t idx = rocev2_handle_index(handle);
	struct rocev2_pd *pd;

	if (idx >= ROCEV2_MAX_PD)
		return NULL;
	pd = &e->pds[idx];
	if (!pd->in_use || pd->gen != rocev2_handle_gen(handle))
		return NULL;
	return pd;
}

int rocev2_alloc_pd(struct rocev2 *e, uint32_t *handle)
{
	struct rocev2_pd *pd;
	uint32_t idx;

	if (!handle)
		return -HAL_EINVAL;
	ROCEV2_POOL_FIND_FREE(e->pds, ROCEV2_MAX_PD, idx);
	if (idx >= ROCEV2_MAX_PD)
		return -HAL_ENOMEM;
	pd = &e->pds[idx];
	pd->gen = rocev2_pool_next_gen(pd->gen, ROCEV2_HANDLE_GEN_MAX);
	pd->refcnt = 0;
	pd->owner = e->creator;
	pd->in_use = 1;
	e->n_pd++;
	*handle = rocev2_handle(pd->gen, idx);
	return 0;
}

int rocev2_dealloc_pd(struct rocev2 *e, uint32_t handle)
{
	struct rocev2_pd *pd = rocev2_pd_get(e, handle);

	if (!pd)
		return -HAL_EINVAL;
	if (pd->refcnt)
		return -HAL_EBUSY;      /* IBA 11.2.1.5: resources still associated */
	pd->in_use = 0;             /* gen is kept: the next owner moves it on */
	e->n_pd--;
	return 0;
}
