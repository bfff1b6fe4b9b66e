/* Context commands: ALLOC_CONTEXT, DEALLOC_CONTEXT, QUERY_CONTEXT
 * (mnic/cmd.h "contexts", docs/host-interface.md "Contexts").
 *
 * A context is a tenant, as mlx5's uid: the kernel driver allocates one per
 * open file, libmnic's BAR backend one per mnic_open.  Its id is the
 * engine owner of every object it creates (rocev2_create_as); it holds one
 * range of the user area, where its rings, doorbell records and MRs must
 * lie.  The table is m->ctx[]: [MNIC_CTX_MGMT] always in use with the
 * whole user area; the others' ranges are disjoint, MNIC_CTX_UA_ALIGN
 * aligned and sized, inside the user area.  Who may issue what is the
 * dispatcher's (cmd.c priv_ok): ALLOC only MGMT, DEALLOC and QUERY BY_ID
 * a context for itself, anything else MGMT.
 */
#include <string.h>

#include "cmd_priv.h"
#include "hal/errno.h"

uint32_t mnic_ctx_count(const struct mnic_mgmt *m)
{
	uint32_t i, n = 0;

	for (i = 1; i <= MNIC_CTX_MAX; i++)
		n += m->ctx[i].in_use;
	return n;
}

/* The first allocated context other than MGMT whose range meets
 * [off, off + size); 0 when none does. */
static uint32_t ctx_overlap(const struct mnic_mgmt *m, uint64_t off, uint64_t size)
{
	uint32_t i;

	for (i = 1; i <= MNIC_CTX_MAX; i++) {
		const struct mnic_ctx *x = &m->ctx[i];

		if (x->in_use && off < x->ua_offset + x->ua_size && x->ua_offset < off + size)
			return i;
	}
	return 0;
}

/* UA_ANY: the lowest aligned range of size bytes that meets no context's
 * (first fit).  0 and *off, or -HAL_ENOSPC. */
static int ctx_first_fit(const struct mnic_mgmt *m, uint64_t size, uint64_t *off)
{
	const struct mnic_ctx *all = &m->ctx[MNIC_CTX_MGMT];
	uint64_t end = all->ua_offset + all->ua_size;
	uint64_t at = (all->ua_offset + MNIC_CTX_UA_ALIGN - 1u) & ~(uint64_t)(MNIC_CTX_UA_ALIGN - 1u);
	uint32_t j;

	/* Each step moves past one context's range, so at most MNIC_CTX_MAX. */
	while (at <= end && size <= end - at) {
		j = ctx_overlap(m, at, size);
		if (!j) {
			*off = at;
			return 0;
		}
		at = m->ctx[j].ua_offset + m->ctx[j].ua_size;   /* aligned: ALLOC placed it */
	}
	return -HAL_ENOSPC;
}

int h_alloc_context(struct mnic_mgmt *m, struct cmd_call *c)
{
	const struct mnic_ctx *all = &m->ctx[MNIC_CTX_MGMT];
	struct mnic_cmd_alloc_context_in in;
	struct mnic_cmd_alloc_context_out o;
	uint64_t off;
	uint32_t id;

	memcpy(&in, c->buf, sizeof(in));
	if (in.ua_size == 0 || in.ua_size % MNIC_CTX_UA_ALIGN ||
	    (c->op_mod == MNIC_CTX_UA_ANY && in.ua_offset) ||
	    (c->op_mod == MNIC_CTX_UA_AT && in.ua_offset % MNIC_CTX_UA_ALIGN)) {
		m->cnt.refused_ctx_range++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_CTX_UA);
	}
	for (id = 1; id <= MNIC_CTX_MAX && m->ctx[id].in_use; id++)
		;
	if (id > MNIC_CTX_MAX) {
		m->cnt.refused_ctx_id++;
		return fail(c, MNIC_CMD_STAT_NO_RESOURCES, HAL_ENOMEM, MNIC_SITE_CTX_ID);
	}
	if (c->op_mod == MNIC_CTX_UA_AT) {
		/* A restore: exactly the range the image was dumped from. */
		off = in.ua_offset;
		if (!mnic_ctx_range_ok(m, MNIC_CTX_MGMT, off, in.ua_size)) {
			m->cnt.refused_ctx_range++;
			return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_CTX_UA);
		}
		if (ctx_overlap(m, off, in.ua_size)) {
			m->cnt.refused_ctx_range++;
			return fail(c, MNIC_CMD_STAT_BAD_RES, HAL_EEXIST, MNIC_SITE_CTX_UA);
		}
	} else if (in.ua_size > all->ua_size || ctx_first_fit(m, in.ua_size, &off)) {
		m->cnt.refused_ctx_id++;
		return fail(c, MNIC_CMD_STAT_NO_RESOURCES, HAL_ENOSPC, MNIC_SITE_CTX_UA);
	}
	m->ctx[id] = (struct mnic_ctx){ 1, in.owner_tag, off, in.ua_size };
	memset(&o, 0, sizeof(o));
	o.ctx = id;
	o.ua_offset = off;
	o.ua_size = in.ua_size;
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
	return 0;
}

int h_dealloc_context(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_handle_in in;
	uint32_t id;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	id = ctx_target(c, in.handle);      /* allocated: the dispatcher checked */
	if (id == MNIC_CTX_MGMT) {
		m->cnt.refused_ctx_id++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_CTX_ID);
	}
	/* Every object goes, and its dump with it: the peers its NAK_STOPPED
	 * paused get no RESUME and error out after their pause bound. */
	rc = rocev2_destroy_owned(m->cfg.engine, id);
	mtt_forget_ctx(m, id);
	memset(&m->ctx[id], 0, sizeof(m->ctx[id]));
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

int h_query_context(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_handle_in in;
	struct mnic_cmd_query_context_out o;
	uint32_t n[ROCEV2_OBJ_LIVE_NUM];
	uint32_t id;

	memcpy(&in, c->buf, sizeof(in));
	if (c->op_mod == MNIC_QUERY_CTX_NEXT) {
		/* As QUERY_QP NEXT: the first allocated id >= handle, MGMT's 0
		 * included. */
		for (id = in.handle; id <= MNIC_CTX_MAX && !m->ctx[id].in_use; id++)
			;
		if (id > MNIC_CTX_MAX)
			return fail(c, MNIC_CMD_STAT_BAD_RES, HAL_ENXIO, MNIC_SITE_CTX_HANDLE);
	} else {
		id = ctx_target(c, in.handle);  /* allocated: the dispatcher checked */
	}
	rocev2_owner_objects(m->cfg.engine, id, n);
	memset(&o, 0, sizeof(o));
	o.ctx = id;
	o.owner_tag = m->ctx[id].owner_tag;
	o.ua_offset = m->ctx[id].ua_offset;
	o.ua_size = m->ctx[id].ua_size;
	o.n_pd = n[ROCEV2_OBJ_PD];
	o.n_mr = n[ROCEV2_OBJ_MR];
	o.n_cq = n[ROCEV2_OBJ_CQ];
	o.n_srq = n[ROCEV2_OBJ_SRQ];
	o.n_qp = n[ROCEV2_OBJ_QP];
	o.flags = rocev2_context_stopped(m->cfg.engine, id) ? MNIC_CTX_F_STOPPED : 0u;
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
	return 0;
}
