/* Private to the command dispatcher (cmd.c) and its handlers (cmd_device.c,
 * cmd_objects.c, cmd_migrate.c, cmd_context.c, cmd_mtt.c): the call being served, the table row
 * that describes it, the refusal helpers and the handlers the table names.
 *
 * A handler reads its whole input into locals before writing its output:
 * the output is written over the input in the one staging buffer (mgmt.h).
 * It returns 0 with c->produced set, or -1 with c->status and c->syndrome
 * set (fail, engine_fail) and the refusal counted.
 */
#ifndef MGMT_CMD_PRIV_H
#define MGMT_CMD_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "mgmt/mgmt.h"
#include "mnic/cmd_names.h"
#include "rocev2/rocev2.h"

struct cmd_desc;

struct cmd_call {
	uint8_t *buf;                  /* 8-byte aligned (cmdq.c's staging buffer) */
	uint32_t in_len, out_len;
	uint32_t produced;             /* output bytes, header included */
	uint16_t opcode, op_mod;
	uint16_t ctx;                  /* issuing context: allocated (the dispatcher checked) */
	uint8_t status;
	uint32_t syndrome;
	const struct cmd_desc *desc;   /* the opcode's table row */
};

typedef int (*cmd_fn)(struct mnic_mgmt *m, struct cmd_call *c);

/* H_QP_BY_QPN: a QPN when op_mod is MNIC_QUERY_QP_BY_QPN, a slot cursor
 * otherwise (QUERY_QP op_mod NEXT).  H_CTX: a context id or MNIC_CTX_SELF
 * (ctx_target); H_CTX_BY_ID: the same when op_mod is MNIC_QUERY_CTX_BY_ID,
 * a cursor otherwise (QUERY_CONTEXT NEXT).  H_MTT: an MTT; H_MTT_OPT: the
 * same or MNIC_MTT_NONE (physical mode).  H_EQ: an EQ; H_EQ_OPT: the same
 * or MNIC_EQ_NONE. */
enum handle_kind { H_NONE, H_PD, H_CQ, H_SRQ, H_SRQ_OPT, H_QP, H_MR, H_QP_BY_QPN, H_CTX,
		   H_CTX_BY_ID, H_MTT, H_MTT_OPT, H_EQ, H_EQ_OPT };

/* Who may issue a command (docs/host-interface.md "Contexts"):
 *   P_ANY   every allocated context
 *   P_MGMT  MNIC_CTX_MGMT only
 *   P_SELF  every context for itself; another context (or a cursor over
 *           them) named by the row's H_CTX / H_CTX_BY_ID handle: MGMT only
 * A refusal is NOT_PRIV (refused_priv), checked before any handle, so a
 * context learns nothing of the others from it. */
enum cmd_priv { P_ANY, P_MGMT, P_SELF };

struct cmd_range {
	uint16_t off, len;
};
struct cmd_handle {
	uint16_t off;
	uint8_t kind;                  /* enum handle_kind */
};

/* One row per opcode (cmd.c).  Names are not here: mnic/cmd_names.h
 * prints every opcode from the opcode list itself. */
struct cmd_desc {
	uint32_t in_len, out_len;      /* at least */
	uint16_t max_op_mod;
	uint8_t priv;                  /* enum cmd_priv */
	struct cmd_range rsvd[3];      /* reserved-zero bytes beyond in_hdr.reserved */
	struct cmd_handle handles[8];  /* CREATE_QP: 4 objects, 4 MTTs */
	cmd_fn fn;
	int (*obj_fn)(struct rocev2 *e, uint32_t handle);   /* destroy-style commands */
};

/* ---- refusals (cmd.c) ----------------------------------------------------- */
/* Set status and syndrome MNIC_SYND(err, site); returns -1. */
int fail(struct cmd_call *c, uint8_t status, int err, uint32_t site);
/* The engine refused with rc (-HAL_E*): its status, counted in
 * engine_errors; returns -1. */
int engine_fail(struct mnic_mgmt *m, struct cmd_call *c, int rc);
/* 0 when a queue of q->size entries (0: none) and its doorbell record lie
 * where the host may place them (mem_ok); otherwise refused and -1. */
int queue_ok(struct mnic_mgmt *m, struct cmd_call *c, const struct mnic_queue_desc *q,
	     uint32_t entry_size);
/* 0 when an object's memory [addr, addr + len) may be reached: with an MTT
 * (the dispatcher checked the handle) the address is the application's
 * IOVA, which the engine checks against the MTT (mtt_engine_fail names its
 * refusal); in physical mode it lies in the issuer's user-area range
 * (site, refused_address).  Otherwise refused and -1. */
int mem_ok(struct mnic_mgmt *m, struct cmd_call *c, uint32_t mtt, uint64_t addr, uint64_t len,
	   uint32_t site);
/* The context an H_CTX handle names: MNIC_CTX_SELF is the issuer. */
static inline uint32_t ctx_target(const struct cmd_call *c, uint32_t handle)
{
	return handle == MNIC_CTX_SELF ? c->ctx : handle;
}

/* ---- little-endian reads and strings -------------------------------------- */
static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* src (NULL: empty) into dst[cap], truncated, NUL-padded to cap. */
static inline void copy_str(char *dst, size_t cap, const char *src)
{
	size_t i = 0;

	for (; src && i + 1 < cap && src[i]; i++)
		dst[i] = src[i];
	for (; i < cap; i++)
		dst[i] = '\0';
}

/* ---- handlers --------------------------------------------------------------- */
/* cmd_device.c: device, firmware identity, counters, events */
int h_nop(struct mnic_mgmt *m, struct cmd_call *c);
int h_query_device(struct mnic_mgmt *m, struct cmd_call *c);
int h_fw(struct mnic_mgmt *m, struct cmd_call *c);   /* firmware update: to mgmt/fwflash.c */
int h_fw_query(struct mnic_mgmt *m, struct cmd_call *c);
int h_query_counters(struct mnic_mgmt *m, struct cmd_call *c);
int h_get_events(struct mnic_mgmt *m, struct cmd_call *c);
int h_query_dcqcn(struct mnic_mgmt *m, struct cmd_call *c);
int h_set_dcqcn(struct mnic_mgmt *m, struct cmd_call *c);
int h_set_gid(struct mnic_mgmt *m, struct cmd_call *c);
/* cmd_objects.c: PD, MR, CQ, SRQ, QP */
int h_alloc_pd(struct mnic_mgmt *m, struct cmd_call *c);
int h_reg_mr(struct mnic_mgmt *m, struct cmd_call *c);
int h_create_cq(struct mnic_mgmt *m, struct cmd_call *c);
int h_create_eq(struct mnic_mgmt *m, struct cmd_call *c);
int h_modify_cq(struct mnic_mgmt *m, struct cmd_call *c);
int h_resize_cq(struct mnic_mgmt *m, struct cmd_call *c);
int h_create_srq(struct mnic_mgmt *m, struct cmd_call *c);
int h_modify_srq(struct mnic_mgmt *m, struct cmd_call *c);
int h_create_qp(struct mnic_mgmt *m, struct cmd_call *c);
int h_modify_qp(struct mnic_mgmt *m, struct cmd_call *c);
int h_query_qp(struct mnic_mgmt *m, struct cmd_call *c);
int h_set_qp_mig_key(struct mnic_mgmt *m, struct cmd_call *c);
int h_create_ethq(struct mnic_mgmt *m, struct cmd_call *c);
int h_destroy_ethq(struct mnic_mgmt *m, struct cmd_call *c);
/* DEALLOC_PD, DEREG_MR, DESTROY_CQ/EQ/SRQ/QP: the row's obj_fn is the call. */
int h_handle(struct mnic_mgmt *m, struct cmd_call *c);
/* cmd_mtt.c: memory translation tables, and mgmt's slot of each */
#define MNIC_MTT_WRITE_MAX ((MNIC_CMD_MAX_LEN - (uint32_t)sizeof(struct mnic_cmd_write_mtt_in)) / \
			    (uint32_t)sizeof(uint64_t))   /* entries one WRITE_MTT carries */
int h_create_mtt(struct mnic_mgmt *m, struct cmd_call *c);
int h_write_mtt(struct mnic_mgmt *m, struct cmd_call *c);
int h_destroy_mtt(struct mnic_mgmt *m, struct cmd_call *c);
/* The engine freed ctx's objects (rocev2_destroy_owned): drop its shapes. */
void mtt_forget_ctx(struct mnic_mgmt *m, uint32_t ctx);
/* The engine refused an object (MR, CQ, SRQ, QP) with rc: when it names
 * an MTT (uses_mtt) and rc is the engine's "not inside the MTT's range"
 * (-HAL_EFAULT) or "not every entry written" (-HAL_EAGAIN), refused as
 * MTT_COVER (refused_mtt_cover); otherwise engine_fail.  Returns -1. */
int mtt_engine_fail(struct mnic_mgmt *m, struct cmd_call *c, int rc, int uses_mtt);
/* cmd_migrate.c: dump, restore, resume, abort, migration settings */
int h_dump_context(struct mnic_mgmt *m, struct cmd_call *c);
int h_restore_object(struct mnic_mgmt *m, struct cmd_call *c);
int h_resume_context(struct mnic_mgmt *m, struct cmd_call *c);
int h_abort_dump(struct mnic_mgmt *m, struct cmd_call *c);
int h_mig_config(struct mnic_mgmt *m, struct cmd_call *c);
/* cmd_context.c: contexts */
int h_alloc_context(struct mnic_mgmt *m, struct cmd_call *c);
int h_dealloc_context(struct mnic_mgmt *m, struct cmd_call *c);
int h_query_context(struct mnic_mgmt *m, struct cmd_call *c);
/* Contexts allocated, MNIC_CTX_MGMT not counted. */
uint32_t mnic_ctx_count(const struct mnic_mgmt *m);

#endif
