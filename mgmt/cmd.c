/* Command dispatcher (mnic/cmd.h, docs/host-interface.md), independent of
 * the transport (cmdq.c hands it one logical command).
 *
 * One table row per opcode (cmd_priv.h struct cmd_desc: input and output
 * size, op_mod limit, reserved byte ranges, handle fields, handler); the
 * handlers live by object in cmd_device.c, cmd_objects.c, cmd_migrate.c
 * and, for firmware update, fwflash.c.  Before a handler runs, the dispatcher has checked, in this order (each refusal a status,
 * a syndrome MNIC_SYND(errno, site) and a counter):
 *   opcode known                  BAD_OP
 *   in_len  >= the input struct   BAD_INPUT_LEN
 *   out_len >= the output struct  BAD_OUTPUT_LEN
 *   reserved fields zero          BAD_PARAM
 *   op_mod defined                BAD_PARAM
 *   handles name live objects     BAD_RES
 * Handlers check addresses (user area), call the engine, and map its
 * -HAL_E* error through err_status[].  The engine changes nothing when it
 * refuses, so no handler has anything to undo except DUMP_CONTEXT.
 */
#include <stddef.h>
#include <string.h>

#include "cmd_priv.h"
#include "hal/errno.h"

/* ---- errors ------------------------------------------------------------------ */

static const struct {
	int err;
	uint8_t status;
} err_status[] = {
	{ HAL_EINVAL, MNIC_CMD_STAT_BAD_PARAM },     /* bad value, state transition */
	{ HAL_ERANGE, MNIC_CMD_STAT_BAD_PARAM },     /* record/image version */
	{ HAL_EFAULT, MNIC_CMD_STAT_BAD_PARAM },     /* memory outside the window */
	{ HAL_EIO, MNIC_CMD_STAT_BAD_PARAM },        /* image CRC mismatch */
	{ HAL_EACCES, MNIC_CMD_STAT_BAD_PARAM },
	{ HAL_EEXIST, MNIC_CMD_STAT_BAD_INDEX },     /* restore: handle/MRN/QPN taken */
	{ HAL_EBUSY, MNIC_CMD_STAT_RES_BUSY },       /* still referenced; refill twice */
	{ HAL_ENOMEM, MNIC_CMD_STAT_NO_RESOURCES },  /* pool exhausted */
	{ HAL_EAGAIN, MNIC_CMD_STAT_NO_RESOURCES },
	{ HAL_ENOSPC, MNIC_CMD_STAT_EXCEED_LIM },
	{ HAL_E2BIG, MNIC_CMD_STAT_EXCEED_LIM },
};

int fail(struct cmd_call *c, uint8_t status, int err, uint32_t site)
{
	c->status = status;
	c->syndrome = MNIC_SYND(err, site);
	return -1;
}

int engine_fail(struct mnic_mgmt *m, struct cmd_call *c, int rc)
{
	uint8_t status = MNIC_CMD_STAT_INT_ERR;
	int err = rc < 0 ? -rc : rc;
	size_t i;

	for (i = 0; i < sizeof(err_status) / sizeof(err_status[0]); i++)
		if (err_status[i].err == err)
			status = err_status[i].status;
	m->cnt.engine_errors++;
	return fail(c, status, err, MNIC_SITE_ENGINE);
}

/* ---- address checks ----------------------------------------------------------------- */

int mnic_user_range_ok(const struct mnic_mgmt *m, uint64_t addr, uint64_t len)
{
	uint64_t size = m->cfg.dma->window_size;

	return addr >= MNIC_USER_AREA_OFFSET && addr <= size && len <= size - addr;
}

int queue_ok(struct mnic_mgmt *m, struct cmd_call *c, uint64_t ring, uint64_t dbrec,
	     uint32_t size, uint32_t entry_size)
{
	if (size == 0)
		return 0;               /* no queue: the engine decides if that is allowed */
	if (!mnic_user_range_ok(m, ring, (uint64_t)size * entry_size)) {
		m->cnt.refused_address++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_RING_ADDR);
	}
	if (!mnic_user_range_ok(m, dbrec, sizeof(struct mnic_dbrec))) {
		m->cnt.refused_address++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_DBREC_ADDR);
	}
	return 0;
}

int mr_range_ok(struct mnic_mgmt *m, struct cmd_call *c, uint64_t addr, uint64_t len)
{
	if (mnic_user_range_ok(m, addr, len))
		return 0;
	m->cnt.refused_address++;
	return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, MNIC_SITE_MR_ADDR);
}

/* ---- the table ------------------------------------------------------------------ */

/* Opcodes are sparse (class << 8 | index, as mlx5), so the table is dense:
 * one row per entry of MNIC_CMD_OPCODE_LIST, in its order, and cmd_row()
 * maps an opcode to its row.  Both come from the list, so a row is named
 * by its opcode: [ROW(MNIC_CMD_X)] = { ... }. */
#define ROW(opcode) opcode##_ROW
#define CMD_ROW_ENUM_(name, value) ROW(name),
enum cmd_row { MNIC_CMD_OPCODE_LIST(CMD_ROW_ENUM_) CMD_NUM_ROWS };
#undef CMD_ROW_ENUM_

#define IN(t) sizeof(struct t)
#define RSVD(t, f) { offsetof(struct t, f), sizeof(((struct t *)0)->f) }
#define RSVD_Q(t, q) { offsetof(struct t, q) + offsetof(struct mnic_queue_desc, reserved), 4 }
#define HANDLE(t, f, k) { offsetof(struct t, f), k }
#define HANDLE_IN(k) { HANDLE(mnic_cmd_handle_in, handle, k) }

static const struct cmd_desc cmd_table[CMD_NUM_ROWS] = {
	/* device (cmd_device.c) */
	[ROW(MNIC_CMD_QUERY_DEVICE)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_query_device_out),
		.fn = h_query_device,
	},
	[ROW(MNIC_CMD_FW_QUERY)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_fw_query_out),
		.max_op_mod = MNIC_FW_QUERY_SLOTS,
		.fn = h_fw_query,
	},
	[ROW(MNIC_CMD_QUERY_COUNTERS)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_query_counters_out),
		.max_op_mod = MNIC_COUNTERS_PORT,
		.fn = h_query_counters,
	},
	[ROW(MNIC_CMD_GET_EVENTS)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_get_events_out),
		.fn = h_get_events,
	},
	[ROW(MNIC_CMD_NOP)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_simple_out),
		.fn = h_nop,
	},
	/* objects (cmd_objects.c) */
	[ROW(MNIC_CMD_CREATE_CQ)] = {
		.in_len = IN(mnic_cmd_create_cq_in), .out_len = IN(mnic_cmd_handle_out),
		.rsvd = { RSVD_Q(mnic_cmd_create_cq_in, q) },
		.fn = h_create_cq,
	},
	[ROW(MNIC_CMD_DESTROY_CQ)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_CQ),
		.fn = h_handle, .obj_fn = rocev2_destroy_cq,
	},
	[ROW(MNIC_CMD_CREATE_QP)] = {
		.in_len = IN(mnic_cmd_create_qp_in), .out_len = IN(mnic_cmd_handle_out),
		.rsvd = { RSVD(mnic_cmd_create_qp_in, reserved), RSVD_Q(mnic_cmd_create_qp_in, sq),
			  RSVD_Q(mnic_cmd_create_qp_in, rq) },
		.handles = { HANDLE(mnic_cmd_create_qp_in, pd, H_PD),
			     HANDLE(mnic_cmd_create_qp_in, send_cq, H_CQ),
			     HANDLE(mnic_cmd_create_qp_in, recv_cq, H_CQ),
			     HANDLE(mnic_cmd_create_qp_in, srq, H_SRQ_OPT) },
		.fn = h_create_qp,
	},
	[ROW(MNIC_CMD_MODIFY_QP)] = {
		.in_len = IN(mnic_cmd_modify_qp_in), .out_len = IN(mnic_cmd_simple_out),
		.handles = { HANDLE(mnic_cmd_modify_qp_in, qpn, H_QP) },
		.fn = h_modify_qp,
	},
	[ROW(MNIC_CMD_QUERY_QP)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_query_qp_out),
		.max_op_mod = MNIC_QUERY_QP_NEXT,
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_QP_BY_QPN),
		.fn = h_query_qp,
	},
	[ROW(MNIC_CMD_DESTROY_QP)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_QP),
		.fn = h_handle, .obj_fn = rocev2_destroy_qp,
	},
	[ROW(MNIC_CMD_SET_QP_MIG_KEY)] = {
		.in_len = IN(mnic_cmd_set_qp_mig_key_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_set_qp_mig_key_in, reserved) },
		.handles = { HANDLE(mnic_cmd_set_qp_mig_key_in, qpn, H_QP) },
		.fn = h_set_qp_mig_key,
	},
	[ROW(MNIC_CMD_CREATE_SRQ)] = {
		.in_len = IN(mnic_cmd_create_srq_in), .out_len = IN(mnic_cmd_handle_out),
		.rsvd = { RSVD(mnic_cmd_create_srq_in, reserved), RSVD_Q(mnic_cmd_create_srq_in, q) },
		.handles = { HANDLE(mnic_cmd_create_srq_in, pd, H_PD) },
		.fn = h_create_srq,
	},
	[ROW(MNIC_CMD_DESTROY_SRQ)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_SRQ),
		.fn = h_handle, .obj_fn = rocev2_destroy_srq,
	},
	[ROW(MNIC_CMD_MODIFY_SRQ)] = {
		.in_len = IN(mnic_cmd_modify_srq_in), .out_len = IN(mnic_cmd_simple_out),
		.handles = { HANDLE(mnic_cmd_modify_srq_in, srq, H_SRQ) },
		.fn = h_modify_srq,
	},
	[ROW(MNIC_CMD_ALLOC_PD)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_handle_out),
		.fn = h_alloc_pd,
	},
	[ROW(MNIC_CMD_DEALLOC_PD)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_PD),
		.fn = h_handle, .obj_fn = rocev2_dealloc_pd,
	},
	[ROW(MNIC_CMD_REG_MR)] = {
		.in_len = IN(mnic_cmd_reg_mr_in), .out_len = IN(mnic_cmd_reg_mr_out),
		.handles = { HANDLE(mnic_cmd_reg_mr_in, pd, H_PD) },
		.fn = h_reg_mr,
	},
	[ROW(MNIC_CMD_DEREG_MR)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_MR),
		.fn = h_handle, .obj_fn = rocev2_dereg_mr,
	},
	/* migration (cmd_migrate.c) */
	[ROW(MNIC_CMD_DUMP_CONTEXT)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_dump_out),
		.fn = h_dump_context,
	},
	[ROW(MNIC_CMD_RESTORE_OBJECT)] = {
		.in_len = IN(mnic_cmd_restore_in), .out_len = IN(mnic_cmd_simple_out),
		.max_op_mod = MNIC_RESTORE_IMAGE,
		.rsvd = { RSVD(mnic_cmd_restore_in, reserved) },
		.fn = h_restore_object,
	},
	[ROW(MNIC_CMD_RESUME_CONTEXT)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_simple_out),
		.fn = h_resume_context,
	},
	[ROW(MNIC_CMD_ABORT_DUMP)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_simple_out),
		.fn = h_abort_dump,
	},
	[ROW(MNIC_CMD_MIG_CONFIG)] = {
		.in_len = IN(mnic_cmd_mig_config_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_mig_config_in, reserved) },
		.fn = h_mig_config,
	},
	/* firmware update (mgmt/fwflash.c) */
	[ROW(MNIC_CMD_FW_FLASH_BEGIN)] = {
		.in_len = IN(mnic_cmd_fw_flash_begin_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_fw_flash_begin_in, reserved) },
		.fn = h_fw,
	},
	[ROW(MNIC_CMD_FW_FLASH_DATA)] = {
		.in_len = IN(mnic_cmd_fw_flash_data_in), .out_len = IN(mnic_cmd_simple_out),
		.fn = h_fw,
	},
	[ROW(MNIC_CMD_FW_FLASH_END)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_fw_flash_end_out),
		.fn = h_fw,
	},
	[ROW(MNIC_CMD_FW_ACTIVATE)] = {
		.in_len = IN(mnic_cmd_fw_activate_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_fw_activate_in, reserved) },
		.fn = h_fw,
	},
};

/* The row of opcode; NULL for an opcode the list does not have. */
static const struct cmd_desc *cmd_lookup(uint16_t opcode)
{
	switch (opcode) {
#define CMD_ROW_CASE_(name, value) case value: return &cmd_table[ROW(name)];
	MNIC_CMD_OPCODE_LIST(CMD_ROW_CASE_)
#undef CMD_ROW_CASE_
	default:
		return NULL;
	}
}

/* 1 when the handle names a live object of kind k (NO_SRQ for H_SRQ_OPT):
 * the engine's own validation (rocev2_obj_live). */
static int handle_live(struct rocev2 *e, uint8_t k, uint32_t h, uint16_t op_mod)
{
	switch (k) {
	case H_QP_BY_QPN:
		if (op_mod != MNIC_QUERY_QP_BY_QPN)
			return 1;
		return rocev2_obj_live(e, ROCEV2_OBJ_QP, h);
	case H_PD:
		return rocev2_obj_live(e, ROCEV2_OBJ_PD, h);
	case H_CQ:
		return rocev2_obj_live(e, ROCEV2_OBJ_CQ, h);
	case H_SRQ_OPT:
		if (h == MNIC_NO_SRQ)
			return 1;
		return rocev2_obj_live(e, ROCEV2_OBJ_SRQ, h);
	case H_SRQ:
		return rocev2_obj_live(e, ROCEV2_OBJ_SRQ, h);
	case H_QP:
		return rocev2_obj_live(e, ROCEV2_OBJ_QP, h);
	case H_MR:
		return rocev2_obj_live(e, ROCEV2_OBJ_MR, h);
	default:
		return 1;
	}
}

static const uint16_t handle_site[] = {
	[H_PD] = MNIC_SITE_PD, [H_CQ] = MNIC_SITE_CQ, [H_SRQ] = MNIC_SITE_SRQ,
	[H_SRQ_OPT] = MNIC_SITE_SRQ, [H_QP] = MNIC_SITE_QP, [H_MR] = MNIC_SITE_MR,
	[H_QP_BY_QPN] = MNIC_SITE_QP,
};

static int dispatch_checks(struct mnic_mgmt *m, const struct cmd_desc *d, struct cmd_call *c,
			   const struct mnic_cmd_in_hdr *hdr)
{
	size_t i, j;

	if (c->in_len < d->in_len) {
		m->cnt.refused_in_len++;
		return fail(c, MNIC_CMD_STAT_BAD_INPUT_LEN, HAL_EINVAL, MNIC_SITE_IN_LEN);
	}
	if (c->out_len < d->out_len) {
		m->cnt.refused_out_len++;
		return fail(c, MNIC_CMD_STAT_BAD_OUTPUT_LEN, HAL_EINVAL, MNIC_SITE_OUT_LEN);
	}
	if (hdr->reserved) {
		m->cnt.refused_reserved++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RESERVED);
	}
	for (i = 0; i < sizeof(d->rsvd) / sizeof(d->rsvd[0]); i++)
		for (j = 0; j < d->rsvd[i].len; j++)
			if (c->buf[d->rsvd[i].off + j]) {
				m->cnt.refused_reserved++;
				return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_RESERVED);
			}
	if (hdr->op_mod > d->max_op_mod) {
		m->cnt.refused_op_mod++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_OP_MOD);
	}
	for (i = 0; i < sizeof(d->handles) / sizeof(d->handles[0]); i++) {
		const struct cmd_handle *h = &d->handles[i];

		if (h->kind == H_NONE)
			continue;
		if (!handle_live(m->cfg.engine, h->kind, get32(c->buf + h->off), hdr->op_mod)) {
			m->cnt.refused_handle++;
			return fail(c, MNIC_CMD_STAT_BAD_RES, HAL_EINVAL, handle_site[h->kind]);
		}
	}
	return 0;
}

uint32_t mnic_cmd_dispatch(struct mnic_mgmt *m, uint8_t *buf, uint32_t in_len, uint32_t out_len)
{
	struct cmd_call c = { buf, in_len, out_len, sizeof(struct mnic_cmd_out_hdr), 0, 0,
			      MNIC_CMD_STAT_OK, 0, NULL };
	struct mnic_cmd_in_hdr hdr;
	struct mnic_cmd_out_hdr out;
	const struct cmd_desc *d;
	int rc;

	if (in_len < sizeof(hdr) || in_len > MNIC_CMD_MAX_LEN || out_len < sizeof(out) ||
	    out_len > MNIC_CMD_MAX_LEN)
		return 0;
	memcpy(&hdr, buf, sizeof(hdr));
	c.opcode = hdr.opcode;
	c.op_mod = hdr.op_mod;
	d = cmd_lookup(hdr.opcode);
	if (!d || !d->fn) {
		m->cnt.refused_opcode++;
		rc = fail(&c, MNIC_CMD_STAT_BAD_OP, HAL_EINVAL, MNIC_SITE_OPCODE);
	} else {
		c.desc = d;
		rc = dispatch_checks(m, d, &c, &hdr);
		if (!rc)
			rc = d->fn(m, &c);
	}
	if (rc) {
		m->cnt.cmds_failed++;
		if (c.status == MNIC_CMD_STAT_OK)
			c.status = MNIC_CMD_STAT_INT_ERR;
	} else {
		m->cnt.cmds_ok++;
	}
	if (c.produced < sizeof(out) || c.produced > out_len)
		c.produced = sizeof(out);
	/* The header goes last: handlers wrote their fields over the input. */
	memset(&out, 0, sizeof(out));
	out.status = c.status;
	out.syndrome = c.syndrome;
	memcpy(buf, &out, sizeof(out));
	return c.produced;
}
