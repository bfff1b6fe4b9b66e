/* Memory regions (IBA 10.6): a registered range of host memory, its PD and
 * the access it grants.  The range is in IOVAs that the MR's MTT
 * translates (mtt.c), or host-physical addresses (offsets in env.dma's
 * aperture) for an MR in physical mode (ROCEV2_NO_MTT).  Every check
 * (rocev2_mr_check) is on the IOVAs; only the copy translates.
 *
 * lkey = rkey = MRN << 8 | key byte (as rxe).  The key byte of a slot moves
 * on at every registration, so a key of an earlier registration of the same
 * slot (a stale rkey still held by a peer) is refused (IBA 10.6.3.5). */
#include "pool.h"

#define MR_ACCESS_ALL (ROCEV2_ACCESS_LOCAL_WRITE | ROCEV2_ACCESS_REMOTE_WRITE | \
		       ROCEV2_ACCESS_REMOTE_READ | ROCEV2_ACCESS_REMOTE_ATOMIC)

struct rocev2_mr *rocev2_mr_lookup(struct rocev2 *e, uint32_t key)
{
	uint32_t idx = key >> ROCEV2_MR_KEY_BITS;
	struct rocev2_mr *mr;

	if (idx >= ROCEV2_MAX_MR)
		return NULL;
	mr = &e->mrs[idx];
	if (!mr->in_use || mr->lkey != key)
		return NULL;
	return mr;
}

/* IBA 10.6.3.1 / 9.7.5.1.3 (responder) and 10.8.3 (local): [va, va + len)
 * inside the region, same PD, every requested access bit granted.  Bounds
 * in a form that cannot wrap: va - addr is only computed once va >= addr,
 * length - len only once len <= length. */
int rocev2_mr_check(const struct rocev2_mr *mr, uint16_t pd, uint64_t va, uint64_t len,
		    uint32_t access)
{
	if (!mr || !mr->in_use)
		return -HAL_EFAULT;
	if (mr->pd != pd)
		return -HAL_EFAULT;
	if ((mr->access & access) != access)
		return -HAL_EFAULT;
	if (va < mr->addr || len > mr->length || va - mr->addr > mr->length - len)
		return -HAL_EFAULT;
	return 0;
}

int rocev2_reg_mr(struct rocev2 *e, uint32_t pd_handle, uint64_t addr, uint64_t length,
		  uint32_t access, uint32_t *lkey, uint32_t *rkey)
{
	return rocev2_reg_mr_mtt(e, pd_handle, ROCEV2_NO_MTT, addr, length, access, lkey, rkey);
}

int rocev2_reg_mr_mtt(struct rocev2 *e, uint32_t pd_handle, uint32_t mtt, uint64_t addr,
		      uint64_t length, uint32_t access, uint32_t *lkey, uint32_t *rkey)
{
	struct rocev2_pd *pd = rocev2_pd_get(e, pd_handle);
	struct rocev2_mr *mr;
	uint32_t idx;
	int rc;

	if (!pd || pd->owner != e->creator || !lkey || !rkey)
		return -HAL_EINVAL;
	if (access & ~(uint32_t)MR_ACCESS_ALL)
		return -HAL_EINVAL;
	/* IBA 10.6.3.1: remote write or atomic access requires local write. */
	if ((access & (ROCEV2_ACCESS_REMOTE_WRITE | ROCEV2_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & ROCEV2_ACCESS_LOCAL_WRITE))
		return -HAL_EINVAL;
	if ((rc = rocev2_mtt_check(e, mtt, addr, length, 1)) != 0)
		return rc;
	ROCEV2_POOL_FIND_FREE(e->mrs, ROCEV2_MAX_MR, idx);
	if (idx >= ROCEV2_MAX_MR)
		return -HAL_ENOMEM;
	mr = &e->mrs[idx];
	mr->key = (uint8_t)rocev2_pool_next_gen(mr->key, ROCEV2_MR_KEY_MAX);
	mr->pd = (uint16_t)(pd - e->pds);
	mr->access = access;
	mr->addr = addr;
	mr->length = length;
	mr->lkey = idx << ROCEV2_MR_KEY_BITS | mr->key;
	mr->rkey = mr->lkey;
	mr->mtt = mtt;
	mr->owner = e->creator;
	mr->in_use = 1;
	pd->refcnt++;
	rocev2_mtt_ref(e, mtt, 1);
	e->n_mr++;
	*lkey = mr->lkey;
	*rkey = mr->rkey;
	return 0;
}

int rocev2_dereg_mr(struct rocev2 *e, uint32_t lkey)
{
	struct rocev2_mr *mr = rocev2_mr_lookup(e, lkey);

	if (!mr)
		return -HAL_EINVAL;
	e->pds[mr->pd].refcnt--;
	rocev2_mtt_ref(e, mr->mtt, -1);
	mr->in_use = 0;             /* key is kept: the next registration moves it on */
	e->n_mr--;
	return 0;
}
