/* Migration commands: DUMP_CONTEXT, RESTORE_OBJECT, RESUME_CONTEXT,
 * ABORT_DUMP and MIG_CONFIG (docs/migration.md, docs/host-interface.md).
 * Addresses inside restored records must lie in the user area, as for the
 * commands that create the objects. */
#include <string.h>

#include "cmd_priv.h"
#include "hal/errno.h"
#include "rocev2/dump.h"

int h_dump_context(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct rocev2 *e = m->cfg.engine;
	struct mnic_cmd_dump_out o;
	struct rocev2_dump_stats st;
	size_t len = 0;
	int was_stopped = rocev2_context_stopped(e), rc;
	unsigned i;

	memset(&st, 0, sizeof(st));
	rc = rocev2_dump_context(e, c->buf + sizeof(o), c->out_len - sizeof(o), &len, &st);
	if (rc && !was_stopped)
		(void)rocev2_abort_dump(e);   /* roll back: QPs resume in place */
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

/* Addresses inside a record (offsets: docs/migration-image.md) must lie in
 * the user area, as for the commands that create the objects. */
static int record_addrs_ok(struct mnic_mgmt *m, struct cmd_call *c, uint32_t type,
			   const uint8_t *p, size_t len)
{
	switch (type) {
	case ROCEV2_OBJ_MR:
		if (len >= ROCEV2_DUMP_MR_LEN)
			return mr_range_ok(m, c, get64(p + 8), get64(p + 16));
		return 0;
	case ROCEV2_OBJ_CQ:
		if (len >= ROCEV2_DUMP_CQ_LEN)
			return queue_ok(m, c, get64(p + 4), get64(p + 12), get32(p + 20), MNIC_CQE_SIZE);
		return 0;
	case ROCEV2_OBJ_SRQ:
		if (len >= ROCEV2_DUMP_SRQ_LEN)
			return queue_ok(m, c, get64(p + 8), get64(p + 16), get32(p + 24), MNIC_WQE_SIZE);
		return 0;
	case ROCEV2_OBJ_QP:
		if (len >= ROCEV2_DUMP_QP_MIN_LEN)
			return queue_ok(m, c, get64(p + 20), get64(p + 28), get32(p + 36), MNIC_WQE_SIZE) ||
			       queue_ok(m, c, get64(p + 48), get64(p + 56), get32(p + 64), MNIC_WQE_SIZE);
		return 0;
	default:
		return 0;
	}
}

typedef int (*restore_fn)(struct rocev2 *e, const void *payload, size_t len);

/* Which record types each op_mod takes, and the call for each. */
static const restore_fn restore_calls[MNIC_RESTORE_IMAGE][ROCEV2_OBJ_LIVE_NUM] = {
	[MNIC_RESTORE_CREATE] = {
		[ROCEV2_OBJ_PD] = rocev2_restore_pd,
		[ROCEV2_OBJ_CQ] = rocev2_restore_cq,
		[ROCEV2_OBJ_SRQ] = rocev2_restore_srq,
		[ROCEV2_OBJ_QP] = rocev2_restore_qp_create,
	},
	[MNIC_RESTORE_REFILL] = { [ROCEV2_OBJ_QP] = rocev2_restore_qp_refill },
	[MNIC_RESTORE_MR_KEYS] = { [ROCEV2_OBJ_MR] = rocev2_restore_mr },
};

static int restore_image(struct mnic_mgmt *m, struct cmd_call *c,
			 const struct mnic_cmd_restore_in *in, const uint8_t *img)
{
	struct rocev2_restore_opts opts;
	size_t pos;
	int rc;

	if (in->old_dip && !in->new_dip) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_OVERRIDE);
	}
	rc = rocev2_validate_image(img, in->data_len);
	if (rc)
		return engine_fail(m, c, rc);
	/* Validated: every record header is sound and inside the image. */
	for (pos = ROCEV2_DUMP_HDR_LEN; pos + ROCEV2_DUMP_REC_HDR_LEN <= in->data_len;) {
		uint32_t type = (uint32_t)img[pos] | (uint32_t)img[pos + 1] << 8;
		uint32_t rlen = get32(img + pos + 4);

		if (rlen < ROCEV2_DUMP_REC_HDR_LEN || rlen > in->data_len - pos)
			break;
		if (record_addrs_ok(m, c, type, img + pos + ROCEV2_DUMP_REC_HDR_LEN,
				    rlen - ROCEV2_DUMP_REC_HDR_LEN))
			return -1;
		pos += rlen;
	}
	memset(&opts, 0, sizeof(opts));
	opts.old_dip = in->old_dip;
	opts.new_dip = in->new_dip;
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
	uint32_t type, version, rlen;
	restore_fn fn;
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
	if (in.data_len < ROCEV2_DUMP_REC_HDR_LEN) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RECORD);
	}
	type = (uint32_t)data[0] | (uint32_t)data[1] << 8;
	version = (uint32_t)data[2] | (uint32_t)data[3] << 8;
	rlen = get32(data + 4);
	if (rlen != in.data_len) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RECORD);
	}
	if (version != ROCEV2_DUMP_REC_VERSION) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_ERANGE, MNIC_SITE_RECORD);
	}
	fn = type < ROCEV2_OBJ_LIVE_NUM ? restore_calls[c->op_mod][type] : NULL;
	if (!fn) {
		m->cnt.refused_record++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RECORD_TYPE);
	}
	if (record_addrs_ok(m, c, type, data + ROCEV2_DUMP_REC_HDR_LEN,
			    rlen - ROCEV2_DUMP_REC_HDR_LEN))
		return -1;
	rc = fn(m->cfg.engine, data + ROCEV2_DUMP_REC_HDR_LEN, rlen - ROCEV2_DUMP_REC_HDR_LEN);
	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

int h_resume_context(struct mnic_mgmt *m, struct cmd_call *c)
{
	int rc = rocev2_resume_context(m->cfg.engine);

	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

int h_abort_dump(struct mnic_mgmt *m, struct cmd_call *c)
{
	int rc = rocev2_abort_dump(m->cfg.engine);

	if (rc)
		return engine_fail(m, c, rc);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

int h_mig_config(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_mig_config_in in;

	memcpy(&in, c->buf, sizeof(in));
	rocev2_set_pause_timeout(m->cfg.engine, (uint64_t)in.pause_timeout_ms * 1000000u);
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}
