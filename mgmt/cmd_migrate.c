/* Migration commands: DUMP_CONTEXT, RESTORE_OBJECT, RESUME_CONTEXT,
 * ABORT_DUMP and MIG_CONFIG (docs/ARCHITECTURE.md "Live migration",
 * docs/host-interface.md).
 * Each acts on one context (docs/host-interface.md "Contexts"): DUMP,
 * RESUME and ABORT on the one their handle names (MNIC_CTX_SELF: the
 * issuer; the dispatcher let a context name only itself), RESTORE_OBJECT
 * on the issuer, whose objects it creates.  Addresses inside restored
 * records must lie in the issuer's user-area range, as for the commands
 * that create the objects; the engine's image codec walks images and
 * names each record's host memory (rocev2_image.h). */
#include <string.h>

#include "cmd_priv.h"
#include "hal/errno.h"

/* The context a DUMP/RESUME/ABORT handle names. */
static uint32_t handle_ctx(const struct cmd_call *c)
{
	struct mnic_cmd_handle_in in;

	memcpy(&in, c->buf, sizeof(in));
	return ctx_target(c, in.handle);
}

int h_dump_context(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct rocev2 *e = m->cfg.engine;
	struct mnic_cmd_dump_out o;
	struct rocev2_dump_stats st;
	struct rocev2_dump_scope scope;
	uint32_t ctx = handle_ctx(c);
	size_t len = 0;
	int was_stopped = rocev2_context_stopped(e, ctx), rc;
	unsigned i;

	/* The image records the context's range: the target restores it
	 * into a context that holds the same addresses. */
	scope.owner = ctx;
	scope.ua_offset = m->ctx[ctx].ua_offset;
	scope.ua_size = m->ctx[ctx].ua_size;
	memset(&st, 0, sizeof(st));
	rc = rocev2_dump_context(e, &scope, c->buf + sizeof(o), c->out_len - sizeof(o), &len, &st);
	if (rc && !was_stopped)
		(void)rocev2_abort_dump(e, ctx);   /* roll back: its QPs resume in place */
	memset(&o, 0, sizeof(o));
	_Static_assert(sizeof(o.objects) / sizeof(o.objects[0]) == ROCEV2_OBJ_NUM &&
		       sizeof(o.bytes) / sizeof(o.bytes[0]) == ROCEV2_OBJ_NUM, "dump stats");
	for (i = 0; i < ROCEV2_OBJ_NUM; i++) {
		o.objects[i] = st.objects[i];
		o.bytes[i] = st.bytes[i];
	}
	o.image_len = st.total;
	memcpy(c->buf, &o, sizeof(o));
	if (rc == -HAL_ENOSPC) {
		/* The host learns the size it needs (image_len) and asks again. */
		m->cnt.dump_too_small++;
		c->produced = sizeof(o);
		return fail(c, MNIC_CMD_STAT_BAD_OUTPUT_LEN, HAL_ENOSPC, MNIC_SITE_DUMP_SPACE);
	}
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = (uint32_t)(sizeof(o) + len);
	return 0;
}

/* Addresses inside a record must lie in the issuer's range, as for the commands
 * that create the objects.  The image codec names them (rocev2_image.h):
 * mgmt knows no record layout.  A record the codec cannot read names no
 * memory here; restoring it then fails in the engine, which says why. */
static int record_addrs_ok(struct mnic_mgmt *m, struct cmd_call *c, const struct rocev2_record *r)
{
	static const uint16_t site[] = {
		[ROCEV2_RANGE_RING] = MNIC_SITE_RING_ADDR,
		[ROCEV2_RANGE_DBREC] = MNIC_SITE_DBREC_ADDR,
		[ROCEV2_RANGE_MR] = MNIC_SITE_MR_ADDR,
	};
	struct rocev2_host_range g[ROCEV2_RECORD_MAX_RANGES];
	int i, n = rocev2_record_host_ranges(r->type, r->payload, r->len, g, ROCEV2_RECORD_MAX_RANGES);

	for (i = 0; i < n; i++) {
		if (mnic_ctx_range_ok(m, c->ctx, g[i].addr, g[i].len))
			continue;
		m->cnt.refused_address++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, site[g[i].kind]);
	}
	return 0;
}

_Static_assert(MNIC_RESTORE_CREATE == (int)ROCEV2_RESTORE_CREATE &&
	       MNIC_RESTORE_REFILL == (int)ROCEV2_RESTORE_REFILL &&
	       MNIC_RESTORE_MR_KEYS == (int)ROCEV2_RESTORE_MR_KEYS &&
	       MNIC_RESTORE_IMAGE == (int)ROCEV2_RESTORE_OPS,
	       "RESTORE_OBJECT's per-record op_mods are the engine's restore ops");

/* Does any record of a validated image name a physical-mode range? */
static int image_has_physical(const uint8_t *img, uint32_t len)
{
	struct rocev2_host_range g[ROCEV2_RECORD_MAX_RANGES];
	struct rocev2_image_iter it;
	struct rocev2_record r;

	rocev2_image_iter_init(&it, img, len);
	while (rocev2_image_next(&it, &r) > 0)
		if (rocev2_record_host_ranges(r.type, r.payload, r.len, g,
					      ROCEV2_RECORD_MAX_RANGES) > 0)
			return 1;
	return 0;
}

static int restore_image(struct mnic_mgmt *m, struct cmd_call *c,
			 const struct mnic_cmd_restore_in *in, const uint8_t *img)
{
	struct rocev2_restore_opts opts;
	struct rocev2_image_iter it;
	struct rocev2_record r;
	uint64_t ua_offset, ua_size;
	int rc;

	if (in->old_dip && !in->new_dip) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_OVERRIDE);
	}
	rc = rocev2_image_validate(img, in->data_len);
	if (rc)
		return engine_fail(m, c, rc);
	/* The range the image was dumped from must be the issuer's too when a
	 * record holds physical-mode addresses (absolute window places):
	 * ALLOC_CONTEXT UA_AT gives a context it.  An image whose rings and MRs
	 * all translate through MTTs names no window place (its addresses are
	 * the process's IOVAs, its pages the target host's refill): it restores
	 * into any context, wherever the target put that context's range. */
	if (rocev2_image_ua_range(img, in->data_len, &ua_offset, &ua_size) != 0 ||
	    (ua_size && image_has_physical(img, in->data_len) &&
	     !mnic_ctx_range_ok(m, c->ctx, ua_offset, ua_size))) {
		m->cnt.refused_address++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_IMAGE_RANGE);
	}
	rocev2_image_iter_init(&it, img, in->data_len);
	while (rocev2_image_next(&it, &r) > 0)
		if (record_addrs_ok(m, c, &r))
			return -1;
	memset(&opts, 0, sizeof(opts));
	/* The override names IPv4 peers (mnic/cmd.h): their GIDs are
	 * IPv4-mapped. */
	if (in->old_dip) {
		mnic_gid_from_ipv4(opts.old_dgid, in->old_dip);
		mnic_gid_from_ipv4(opts.new_dgid, in->new_dip);
	}
	memcpy(opts.new_dmac, in->new_dmac, sizeof(opts.new_dmac));
	rc = rocev2_restore_image(m->cfg.engine, img, in->data_len, &opts);
	if (rc)
		return engine_fail(m, c, rc);
	return 0;
}

int h_restore_object(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_restore_in in;
	const uint8_t *data = c->buf + sizeof(in);
	enum rocev2_restore_op op;
	struct rocev2_record r;
	int rc;

	memcpy(&in, c->buf, sizeof(in));
	if (in.data_len > c->in_len - sizeof(in)) {
		m->cnt.refused_in_len++;
		return fail(c, MNIC_CMD_STAT_BAD_INPUT_LEN, HAL_EINVAL, MNIC_SITE_DATA_LEN);
	}
	if (c->op_mod == MNIC_RESTORE_IMAGE) {
		if (restore_image(m, c, &in, data))
			return -1;
		c->produced = sizeof(struct mnic_cmd_simple_out);
		return 0;
	}
	/* One record: its header must describe exactly data_len bytes. */
	rc = rocev2_record_parse(data, in.data_len, &r);
	if (rc) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, -rc, MNIC_SITE_RECORD);
	}
	op = (enum rocev2_restore_op)c->op_mod;   /* < IMAGE: the dispatcher checked */
	if (!rocev2_restore_op_takes(op, r.type)) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RECORD_TYPE);
	}
	if (record_addrs_ok(m, c, &r))
		return -1;
	rc = rocev2_restore_record(m->cfg.engine, op, r.type, r.payload, r.len);
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

int h_resume_context(struct mnic_mgmt *m, struct cmd_call *c)
{
	int rc = rocev2_resume_context(m->cfg.engine, handle_ctx(c));

	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

int h_abort_dump(struct mnic_mgmt *m, struct cmd_call *c)
{
	int rc = rocev2_abort_dump(m->cfg.engine, handle_ctx(c));

	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

/* Every field at once (abi/include/mnic/cmd.h); a flag this firmware
 * does not define is refused like a reserved bit, and nothing changes. */
int h_mig_config(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_mig_config_in in;

	memcpy(&in, c->buf, sizeof(in));
	if (in.flags & ~(uint32_t)MNIC_MIG_CFG_UNKEYED) {
		m->cnt.refused_reserved++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RESERVED);
	}
	rocev2_set_pause_timeout(m->cfg.engine, (uint64_t)in.pause_timeout_ms * 1000000u);
	rocev2_set_resume_budget(m->cfg.engine, (uint64_t)in.resume_budget_ms * 1000000u);
	rocev2_set_mig_flags(m->cfg.engine,
			     in.flags & MNIC_MIG_CFG_UNKEYED ? ROCEV2_MIG_F_UNKEYED : 0u);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}
