/* Command dispatcher (mnic/cmd.h, docs/host-interface.md), independent of
 * the transport (cmdq.c hands it one logical command).
 *
 * One table row per opcode (cmd_priv.h struct cmd_desc: input and output
 * size, op_mod limit, who may issue it, reserved byte ranges, handle
 * fields, handler); the handlers live by object in cmd_device.c,
 * cmd_objects.c, cmd_mtt.c, cmd_migrate.c, cmd_context.c and, for firmware update,
 * fwflash.c.  Before a handler runs, the dispatcher has checked, in this
 * order (each refusal a status, a syndrome MNIC_SYND(errno, site) and a
 * counter):
 *   opcode known                  BAD_OP
 *   in_len  >= the input struct   BAD_INPUT_LEN
 *   out_len >= the output struct  BAD_OUTPUT_LEN
 *   reserved fields zero          BAD_PARAM
 *   op_mod defined                BAD_PARAM
 *   issuing context allocated     BAD_PARAM      (refused_ctx)
 *   privilege (the row's priv)    NOT_PRIV       (refused_priv)
 *   handles name live objects     BAD_RES        (refused_handle)
 *   ... of the issuer's context   BAD_RES, the same syndrome (refused_foreign)
 * The issuer is hdr.ctx (docs/host-interface.md "Contexts"); MNIC_CTX_MGMT
 * may name any object.  The engine then creates on the issuer's behalf
 * (rocev2_create_as).  Handlers check addresses (physical mode: the
 * issuer's user-area range; with an MTT the engine checks the IOVA, and
 * WRITE_MTT each page, cmd_mtt.c), call the engine, and map its -HAL_E*
 * error through err_status[].
 * The engine changes nothing when it refuses, so no handler has anything
 * to undo except DUMP_CONTEXT.
 */
#include <stddef.h>
#include <string.h>

#include "cmd_priv.h"
#include "hal/errno.h"

/* ---- errors ------------------------------------------------------------------ */

/* Two bytes a row: every HAL errno is below 256 (hal/errno.h). */
static const struct {
	uint8_t err;
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

int mnic_ctx_range_ok(const struct mnic_mgmt *m, uint32_t ctx, uint64_t addr, uint64_t len)
{
	const struct mnic_ctx *x;
	uint64_t end;

	if (ctx > MNIC_CTX_MAX || !m->ctx[ctx].in_use)
		return 0;
	x = &m->ctx[ctx];
	end = x->ua_offset + x->ua_size;   /* no wrap: ALLOC_CONTEXT placed it in the window */
	return addr >= x->ua_offset && addr <= end && len <= end - addr;
}

int mem_ok(struct mnic_mgmt *m, struct cmd_call *c, uint32_t mtt, uint64_t addr, uint64_t len,
	   uint32_t site)
{
	/* With an MTT the address is the application's IOVA: the engine
	 * checks it against the MTT, whose pages WRITE_MTT checked. */
	if (mtt != MNIC_MTT_NONE)
		return 0;
	if (mnic_ctx_range_ok(m, c->ctx, addr, len))
		return 0;
	m->cnt.refused_address++;
	return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EFAULT, site);
}

int queue_ok(struct mnic_mgmt *m, struct cmd_call *c, const struct mnic_queue_desc *q,
	     uint32_t entry_size)
{
	if (q->size == 0)
		return 0;               /* no queue: the engine decides if that is allowed */
	if (mem_ok(m, c, q->ring_mtt, q->ring_addr, (uint64_t)q->size * entry_size,
		   MNIC_SITE_RING_ADDR))
		return -1;
	return mem_ok(m, c, q->dbrec_mtt, q->dbrec_addr, sizeof(struct mnic_dbrec),
		      MNIC_SITE_DBREC_ADDR);
}

_Static_assert(MNIC_CTX_MAX < ROCEV2_MAX_OWNERS, "every context is an engine owner");

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
#define HANDLE_Q(t, q, f) { offsetof(struct t, q) + offsetof(struct mnic_queue_desc, f), H_MTT_OPT }

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
		.max_op_mod = MNIC_COUNTERS_PORT, .priv = P_MGMT,
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
	/* contexts (cmd_context.c) */
	[ROW(MNIC_CMD_ALLOC_CONTEXT)] = {
		.in_len = IN(mnic_cmd_alloc_context_in), .out_len = IN(mnic_cmd_alloc_context_out),
		.max_op_mod = MNIC_CTX_UA_AT, .priv = P_MGMT,
		.rsvd = { RSVD(mnic_cmd_alloc_context_in, reserved) },
		.fn = h_alloc_context,
	},
	[ROW(MNIC_CMD_DEALLOC_CONTEXT)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_SELF,
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_CTX),
		.fn = h_dealloc_context,
	},
	[ROW(MNIC_CMD_QUERY_CONTEXT)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_query_context_out),
		.max_op_mod = MNIC_QUERY_CTX_NEXT, .priv = P_SELF,
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_CTX_BY_ID),
		.fn = h_query_context,
	},
	/* DCQCN congestion control (cmd_device.c) */
	[ROW(MNIC_CMD_QUERY_DCQCN)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_dcqcn_out),
		.fn = h_query_dcqcn,
	},
	[ROW(MNIC_CMD_SET_DCQCN)] = {
		.in_len = IN(mnic_cmd_dcqcn_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_MGMT,
		.rsvd = { RSVD(mnic_cmd_dcqcn_in, p.reserved) },
		.fn = h_set_dcqcn,
	},
	/* host Ethernet queues (cmd_objects.c): the kernel driver's netdev */
	[ROW(MNIC_CMD_CREATE_ETHQ)] = {
		.in_len = IN(mnic_cmd_create_ethq_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_MGMT,
		.rsvd = { RSVD_Q(mnic_cmd_create_ethq_in, tx), RSVD_Q(mnic_cmd_create_ethq_in, rx) },
		.handles = { HANDLE(mnic_cmd_create_ethq_in, buf_mtt, H_MTT),
			     HANDLE_Q(mnic_cmd_create_ethq_in, tx, ring_mtt),
			     HANDLE_Q(mnic_cmd_create_ethq_in, tx, dbrec_mtt),
			     HANDLE_Q(mnic_cmd_create_ethq_in, rx, ring_mtt),
			     HANDLE_Q(mnic_cmd_create_ethq_in, rx, dbrec_mtt) },
		.fn = h_create_ethq,
	},
	[ROW(MNIC_CMD_DESTROY_ETHQ)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_MGMT,
		.fn = h_destroy_ethq,
	},
	/* the RoCEv2 GID table (cmd_device.c) */
	[ROW(MNIC_CMD_SET_GID)] = {
		.in_len = IN(mnic_cmd_set_gid_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_MGMT,
		.fn = h_set_gid,
	},
	/* objects (cmd_objects.c) */
	[ROW(MNIC_CMD_CREATE_CQ)] = {
		.in_len = IN(mnic_cmd_create_cq_in), .out_len = IN(mnic_cmd_handle_out),
		.rsvd = { RSVD_Q(mnic_cmd_create_cq_in, q) },
		.handles = { HANDLE_Q(mnic_cmd_create_cq_in, q, ring_mtt),
			     HANDLE_Q(mnic_cmd_create_cq_in, q, dbrec_mtt) },
		.fn = h_create_cq,
	},
	[ROW(MNIC_CMD_DESTROY_CQ)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_CQ),
		.fn = h_handle, .obj_fn = rocev2_destroy_cq,
	},
	[ROW(MNIC_CMD_RESIZE_CQ)] = {
		.in_len = IN(mnic_cmd_resize_cq_in), .out_len = IN(mnic_cmd_handle_out),
		.rsvd = { RSVD(mnic_cmd_resize_cq_in, reserved), RSVD_Q(mnic_cmd_resize_cq_in, q) },
		.handles = { HANDLE(mnic_cmd_resize_cq_in, cq, H_CQ),
			     HANDLE_Q(mnic_cmd_resize_cq_in, q, ring_mtt),
			     HANDLE_Q(mnic_cmd_resize_cq_in, q, dbrec_mtt) },
		.fn = h_resize_cq,
	},
	[ROW(MNIC_CMD_MODIFY_CQ)] = {
		.in_len = IN(mnic_cmd_modify_cq_in), .out_len = IN(mnic_cmd_simple_out),
		.max_op_mod = MNIC_MODIFY_CQ_EQ,
		.handles = { HANDLE(mnic_cmd_modify_cq_in, cq, H_CQ),
			     HANDLE(mnic_cmd_modify_cq_in, eq, H_EQ_OPT) },
		.fn = h_modify_cq,
	},
	/* completion events: event queues (cmd_objects.c) */
	[ROW(MNIC_CMD_CREATE_EQ)] = {
		.in_len = IN(mnic_cmd_create_eq_in), .out_len = IN(mnic_cmd_handle_out),
		.rsvd = { RSVD(mnic_cmd_create_eq_in, reserved), RSVD_Q(mnic_cmd_create_eq_in, q) },
		.handles = { HANDLE_Q(mnic_cmd_create_eq_in, q, ring_mtt),
			     HANDLE_Q(mnic_cmd_create_eq_in, q, dbrec_mtt) },
		.fn = h_create_eq,
	},
	[ROW(MNIC_CMD_DESTROY_EQ)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_EQ),
		.fn = h_handle, .obj_fn = rocev2_destroy_eq,
	},
	[ROW(MNIC_CMD_CREATE_QP)] = {
		.in_len = IN(mnic_cmd_create_qp_in), .out_len = IN(mnic_cmd_handle_out),
		.rsvd = { RSVD(mnic_cmd_create_qp_in, reserved), RSVD_Q(mnic_cmd_create_qp_in, sq),
			  RSVD_Q(mnic_cmd_create_qp_in, rq) },
		.handles = { HANDLE(mnic_cmd_create_qp_in, pd, H_PD),
			     HANDLE(mnic_cmd_create_qp_in, send_cq, H_CQ),
			     HANDLE(mnic_cmd_create_qp_in, recv_cq, H_CQ),
			     HANDLE(mnic_cmd_create_qp_in, srq, H_SRQ_OPT),
			     HANDLE_Q(mnic_cmd_create_qp_in, sq, ring_mtt),
			     HANDLE_Q(mnic_cmd_create_qp_in, sq, dbrec_mtt),
			     HANDLE_Q(mnic_cmd_create_qp_in, rq, ring_mtt),
			     HANDLE_Q(mnic_cmd_create_qp_in, rq, dbrec_mtt) },
		.fn = h_create_qp,
	},
	[ROW(MNIC_CMD_MODIFY_QP)] = {
		.in_len = IN(mnic_cmd_modify_qp_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_modify_qp_in, attr.reserved) },
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
		.handles = { HANDLE(mnic_cmd_create_srq_in, pd, H_PD),
			     HANDLE_Q(mnic_cmd_create_srq_in, q, ring_mtt),
			     HANDLE_Q(mnic_cmd_create_srq_in, q, dbrec_mtt) },
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
		.rsvd = { RSVD(mnic_cmd_reg_mr_in, reserved) },
		.handles = { HANDLE(mnic_cmd_reg_mr_in, pd, H_PD),
			     HANDLE(mnic_cmd_reg_mr_in, mtt, H_MTT_OPT) },
		.fn = h_reg_mr,
	},
	[ROW(MNIC_CMD_DEREG_MR)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_MR),
		.fn = h_handle, .obj_fn = rocev2_dereg_mr,
	},
	/* memory translation (cmd_mtt.c); WRITE_MTT's in_len is exactly its
	 * header and page list, which the handler checks against count */
	[ROW(MNIC_CMD_CREATE_MTT)] = {
		.in_len = IN(mnic_cmd_create_mtt_in), .out_len = IN(mnic_cmd_create_mtt_out),
		.rsvd = { RSVD(mnic_cmd_create_mtt_in, reserved) },
		.fn = h_create_mtt,
	},
	[ROW(MNIC_CMD_WRITE_MTT)] = {
		.in_len = IN(mnic_cmd_write_mtt_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_write_mtt_in, reserved),
			  RSVD(mnic_cmd_write_mtt_in, reserved1) },
		.handles = { HANDLE(mnic_cmd_write_mtt_in, mtt, H_MTT) },
		.fn = h_write_mtt,
	},
	[ROW(MNIC_CMD_DESTROY_MTT)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_MTT),
		.fn = h_destroy_mtt,
	},
	/* migration (cmd_migrate.c) */
	[ROW(MNIC_CMD_DUMP_CONTEXT)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_dump_out),
		.priv = P_SELF,
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_CTX),
		.fn = h_dump_context,
	},
	[ROW(MNIC_CMD_RESTORE_OBJECT)] = {
		.in_len = IN(mnic_cmd_restore_in), .out_len = IN(mnic_cmd_simple_out),
		.max_op_mod = MNIC_RESTORE_IMAGE,
		.rsvd = { RSVD(mnic_cmd_restore_in, reserved) },
		.fn = h_restore_object,
	},
	[ROW(MNIC_CMD_RESUME_CONTEXT)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_SELF,
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_CTX),
		.fn = h_resume_context,
	},
	[ROW(MNIC_CMD_ABORT_DUMP)] = {
		.in_len = IN(mnic_cmd_handle_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_SELF,
		.rsvd = { RSVD(mnic_cmd_handle_in, reserved) },
		.handles = HANDLE_IN(H_CTX),
		.fn = h_abort_dump,
	},
	[ROW(MNIC_CMD_MIG_CONFIG)] = {
		.in_len = IN(mnic_cmd_mig_config_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_MGMT,
		.rsvd = { RSVD(mnic_cmd_mig_config_in, reserved) },
		.fn = h_mig_config,
	},
	/* firmware update (mgmt/fwflash.c) */
	[ROW(MNIC_CMD_FW_FLASH_BEGIN)] = {
		.in_len = IN(mnic_cmd_fw_flash_begin_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_MGMT,
		.rsvd = { RSVD(mnic_cmd_fw_flash_begin_in, reserved) },
		.fn = h_fw,
	},
	[ROW(MNIC_CMD_FW_FLASH_DATA)] = {
		.in_len = IN(mnic_cmd_fw_flash_data_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_MGMT,
		.fn = h_fw,
	},
	[ROW(MNIC_CMD_FW_FLASH_END)] = {
		.in_len = IN(mnic_cmd_simple_in), .out_len = IN(mnic_cmd_fw_flash_end_out),
		.priv = P_MGMT,
		.fn = h_fw,
	},
	[ROW(MNIC_CMD_FW_ACTIVATE)] = {
		.in_len = IN(mnic_cmd_fw_activate_in), .out_len = IN(mnic_cmd_simple_out),
		.priv = P_MGMT,
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

/* What a handle field names, for the issuer. */
enum handle_check { HC_OK, HC_NONE, HC_FOREIGN };

/* A cursor (QUERY_QP / QUERY_CONTEXT NEXT), MNIC_NO_SRQ or MNIC_MTT_NONE
 * names nothing. */
static int handle_is_cursor(uint8_t k, uint32_t h, uint16_t op_mod)
{
	return (k == H_QP_BY_QPN && op_mod != MNIC_QUERY_QP_BY_QPN) ||
	       (k == H_CTX_BY_ID && op_mod != MNIC_QUERY_CTX_BY_ID) ||
	       (k == H_SRQ_OPT && h == MNIC_NO_SRQ) || (k == H_MTT_OPT && h == MNIC_MTT_NONE) ||
	       (k == H_EQ_OPT && h == MNIC_EQ_NONE);
}

static const uint8_t handle_type[] = {
	[H_PD] = ROCEV2_OBJ_PD, [H_CQ] = ROCEV2_OBJ_CQ, [H_SRQ] = ROCEV2_OBJ_SRQ,
	[H_SRQ_OPT] = ROCEV2_OBJ_SRQ, [H_QP] = ROCEV2_OBJ_QP, [H_MR] = ROCEV2_OBJ_MR,
	[H_QP_BY_QPN] = ROCEV2_OBJ_QP, [H_MTT] = ROCEV2_OBJ_MTT, [H_MTT_OPT] = ROCEV2_OBJ_MTT,
	[H_EQ] = ROCEV2_OBJ_EQ, [H_EQ_OPT] = ROCEV2_OBJ_EQ,
};

/* HC_OK when the handle names a live object of kind k (the engine's own
 * lookup, rocev2_obj_owner) that the issuer may name: its own, any for
 * MNIC_CTX_MGMT; or, for H_CTX, an allocated context. */
static enum handle_check handle_check(const struct mnic_mgmt *m, const struct cmd_call *c,
				      uint8_t k, uint32_t h)
{
	uint32_t owner;

	if (handle_is_cursor(k, h, c->op_mod))
		return HC_OK;
	if (k == H_CTX || k == H_CTX_BY_ID) {
		h = ctx_target(c, h);
		return h <= MNIC_CTX_MAX && m->ctx[h].in_use ? HC_OK : HC_NONE;
	}
	if (rocev2_obj_owner(m->cfg.engine, (enum rocev2_obj_type)handle_type[k], h, &owner))
		return HC_NONE;
	return c->ctx == MNIC_CTX_MGMT || owner == c->ctx ? HC_OK : HC_FOREIGN;
}

static const uint16_t handle_site[] = {
	[H_PD] = MNIC_SITE_PD, [H_CQ] = MNIC_SITE_CQ, [H_SRQ] = MNIC_SITE_SRQ,
	[H_SRQ_OPT] = MNIC_SITE_SRQ, [H_QP] = MNIC_SITE_QP, [H_MR] = MNIC_SITE_MR,
	[H_QP_BY_QPN] = MNIC_SITE_QP, [H_CTX] = MNIC_SITE_CTX_HANDLE,
	[H_CTX_BY_ID] = MNIC_SITE_CTX_HANDLE, [H_MTT] = MNIC_SITE_MTT, [H_MTT_OPT] = MNIC_SITE_MTT,
	[H_EQ] = MNIC_SITE_EQ, [H_EQ_OPT] = MNIC_SITE_EQ,
};

/* 1 when the issuer may issue this command (enum cmd_priv). */
static int priv_ok(const struct cmd_desc *d, const struct cmd_call *c)
{
	size_t i;

	if (c->ctx == MNIC_CTX_MGMT || d->priv == P_ANY)
		return 1;
	if (d->priv == P_MGMT)
		return 0;
	for (i = 0; i < sizeof(d->handles) / sizeof(d->handles[0]); i++) {
		const struct cmd_handle *h = &d->handles[i];
		uint32_t v = get32(c->buf + h->off);

		if (h->kind != H_CTX && h->kind != H_CTX_BY_ID)
			continue;
		if (handle_is_cursor(h->kind, v, c->op_mod) || ctx_target(c, v) != c->ctx)
			return 0;       /* another context, or a walk over all of them */
	}
	return 1;
}

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
	if (c->ctx > MNIC_CTX_MAX || !m->ctx[c->ctx].in_use) {
		m->cnt.refused_ctx++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_ENXIO, MNIC_SITE_CTX);
	}
	if (!priv_ok(d, c)) {
		m->cnt.refused_priv++;
		return fail(c, MNIC_CMD_STAT_NOT_PRIV, HAL_EACCES, MNIC_SITE_PRIV);
	}
	for (i = 0; i < sizeof(d->handles) / sizeof(d->handles[0]); i++) {
		const struct cmd_handle *h = &d->handles[i];
		enum handle_check r;

		if (h->kind == H_NONE)
			continue;
		r = handle_check(m, c, h->kind, get32(c->buf + h->off));
		if (r == HC_OK)
			continue;
		/* Another context's object is answered as no object at all. */
		if (r == HC_FOREIGN)
			m->cnt.refused_foreign++;
		else
			m->cnt.refused_handle++;
		return fail(c, MNIC_CMD_STAT_BAD_RES, HAL_EINVAL, handle_site[h->kind]);
	}
	return 0;
}

uint32_t mnic_cmd_dispatch(struct mnic_mgmt *m, uint8_t *buf, uint32_t in_len, uint32_t out_len)
{
	struct cmd_call c = { buf, in_len, out_len, sizeof(struct mnic_cmd_out_hdr), 0, 0, 0,
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
	c.ctx = hdr.ctx;
	d = cmd_lookup(hdr.opcode);
	if (!d || !d->fn) {
		m->cnt.refused_opcode++;
		rc = fail(&c, MNIC_CMD_STAT_BAD_OP, HAL_EINVAL, MNIC_SITE_OPCODE);
	} else {
		c.desc = d;
		rc = dispatch_checks(m, d, &c, &hdr);
		/* What the command creates (or restores) is the issuer's. */
		if (!rc)
			rc = rocev2_create_as(m->cfg.engine, c.ctx);
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
