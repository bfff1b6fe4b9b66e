/* Migration commands: MigrOS's ibv_dump_context / ibv_restore_object
 * (the team notes shared/reference/rocev2-and-migros.md, next to this repository) as device
 * commands (mnic/cmd.h DUMP_CONTEXT, RESTORE_OBJECT, RESUME_CONTEXT,
 * ABORT_DUMP, MIG_CONFIG). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libmnic_int.h"

int mnic_dump_context(struct mnic_dev *dev, uint32_t hint, uint8_t **img, uint32_t *len,
		      struct mnic_cmd_dump_out *stats)
{
	struct mnic_cmd_handle_in in = {.hdr = {.opcode = MNIC_CMD_DUMP_CONTEXT},
					.handle = MNIC_CTX_SELF};
	const uint32_t fixed = sizeof(struct mnic_cmd_dump_out);
	uint32_t cap = hint ? hint : 65536u;
	struct mnic_cmd_dump_out o;
	uint8_t *buf = NULL;
	int err;

	if (!dev || !img || !len)
		return -EINVAL;
	*img = NULL;
	*len = 0;
	/* Two tries: the first may be too small, the device then names the
	 * size; a third would mean the context grew while stopped. */
	for (int attempt = 0; attempt < 3; attempt++) {
		uint32_t out_len;

		if (cap > MNIC_CMD_MAX_LEN - fixed)
			cap = MNIC_CMD_MAX_LEN - fixed;
		out_len = fixed + cap;
		free(buf);
		buf = malloc(out_len);
		if (!buf)
			return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
		err = mnic_cmd(dev, &in, sizeof(in), buf, out_len, NULL);
		memcpy(&o, buf, sizeof(o));
		if (err == -ENOSPC && dev->last.layer == MNIC_ERR_STATUS &&
		    o.hdr.status == MNIC_CMD_STAT_BAD_OUTPUT_LEN) {
			if (o.image_len <= cap || o.image_len > MNIC_CMD_MAX_LEN - fixed) {
				/* says too small, yet it would have fitted; or more than
				 * any command can carry */
				err = o.image_len > MNIC_CMD_MAX_LEN - fixed ? -E2BIG : mnic_reply_err(dev);
				goto fail;
			}
			cap = o.image_len;
			continue;
		}
		if (err < 0)
			goto fail;
		if (o.image_len > cap || o.image_len < MNIC_IMG_HDR_LEN) {
			err = mnic_reply_err(dev);
			goto fail;
		}
		memmove(buf, buf + fixed, o.image_len);
		*img = buf;
		*len = o.image_len;
		if (stats)
			*stats = o;
		return 0;
	}
	err = mnic_reply_err(dev);
fail:
	free(buf);
	return err;
}

static int restore_cmd(struct mnic_dev *dev, uint16_t op_mod, const void *data, uint32_t len,
		       const struct mnic_peer_override *ov)
{
	struct mnic_cmd_restore_in in;
	struct mnic_cmd_simple_out out;
	uint8_t *buf;
	int err;

	if (!dev || !data || len == 0 || len > MNIC_CMD_MAX_LEN - sizeof(in))
		return dev ? mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL) : -EINVAL;
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_RESTORE_OBJECT;
	in.hdr.op_mod = op_mod;
	in.data_len = len;
	if (ov && ov->old_dip) {
		in.old_dip = ov->old_dip;
		in.new_dip = ov->new_dip;
		memcpy(in.new_dmac, ov->new_dmac, 6);
	}
	buf = malloc(sizeof(in) + len);
	if (!buf)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	memcpy(buf, &in, sizeof(in));
	memcpy(buf + sizeof(in), data, len);
	err = mnic_cmd(dev, buf, (uint32_t)(sizeof(in) + len), &out, sizeof(out), NULL);
	free(buf);
	return err;
}

int mnic_restore_object(struct mnic_dev *dev, uint32_t op_mod, const void *record, uint32_t len)
{
	if (op_mod > MNIC_RESTORE_MR_KEYS || len < MNIC_IMG_REC_HDR_LEN)
		return dev ? mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL) : -EINVAL;
	return restore_cmd(dev, (uint16_t)op_mod, record, len, NULL);
}

int mnic_restore_image(struct mnic_dev *dev, const void *img, uint32_t len,
		       const struct mnic_peer_override *override)
{
	if (override && override->old_dip && !override->new_dip)
		return dev ? mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL) : -EINVAL;
	return restore_cmd(dev, MNIC_RESTORE_IMAGE, img, len, override);
}

/* RESUME_CONTEXT / ABORT_DUMP of the issuing context. */
static int self_cmd(struct mnic_dev *dev, uint16_t opcode)
{
	struct mnic_cmd_handle_in in = {.hdr = {.opcode = opcode}, .handle = MNIC_CTX_SELF};
	struct mnic_cmd_simple_out out;

	if (!dev)
		return -EINVAL;
	return mnic_cmd(dev, &in, sizeof(in), &out, sizeof(out), NULL);
}

int mnic_resume_context(struct mnic_dev *dev)
{
	int err = self_cmd(dev, MNIC_CMD_RESUME_CONTEXT);

	/* restored QPs may have WQEs posted before the migration: have the NIC
	 * read every doorbell record again */
	if (err == 0)
		mnic_ring_doorbell(dev);
	return err;
}

int mnic_abort_dump(struct mnic_dev *dev)
{
	int err = self_cmd(dev, MNIC_CMD_ABORT_DUMP);

	if (err == 0)
		mnic_ring_doorbell(dev);
	return err;
}

int mnic_mig_config_flags(struct mnic_dev *dev, uint32_t pause_timeout_ms,
			  uint32_t resume_budget_ms, uint32_t flags)
{
	struct mnic_cmd_mig_config_in in;
	struct mnic_cmd_simple_out out;

	if (!dev)
		return -EINVAL;
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_MIG_CONFIG;
	in.pause_timeout_ms = pause_timeout_ms;
	in.resume_budget_ms = resume_budget_ms;
	in.flags = flags;
	return mnic_cmd(dev, &in, sizeof(in), &out, sizeof(out), NULL);
}

int mnic_mig_config(struct mnic_dev *dev, uint32_t pause_timeout_ms)
{
	return mnic_mig_config_flags(dev, pause_timeout_ms, 0, 0);
}
