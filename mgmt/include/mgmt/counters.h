/* Command interface counters: one named counter at every delivery error,
 * every command refusal and every transport event.  X-macro as
 * rocev2/counters.h: one line adds the field and its printable name
 * (QUERY_COUNTERS op_mod MGMT returns them by name).  Names <= 23 chars. */
#ifndef MGMT_COUNTERS_H
#define MGMT_COUNTERS_H

#include <stdint.h>

#define MNIC_MGMT_COUNTERS(X)                                                   \
	/* transport (cmdq.c) */                                                \
	X(cmdq_enables)         /* configuration latched: RUNNING */            \
	X(cmdq_disables)        /* ctrl = 0: ci reset to the host's pi */       \
	X(cmdq_bad_config)      /* enable refused: BAD_CONFIG + syndrome */      \
	X(cmdq_pi_ahead)        /* pi more than a ring ahead of ci */           \
	X(cmdq_not_owned)       /* pi rang, entry not yet HW-owned: wait */     \
	X(cmdq_resyncs)         /* disable/enable moved ci to pi: dropped */    \
	X(cmds_delivered)       /* entries answered (any status) */             \
	/* delivery errors (status_own), one per enum mnic_cmd_delivery */      \
	X(deliv_token_err)                                                     \
	X(deliv_bad_block_num)                                                 \
	X(deliv_bad_out_ptr)                                                   \
	X(deliv_bad_in_ptr)                                                    \
	X(deliv_internal_err)                                                  \
	X(deliv_in_len_err)                                                    \
	X(deliv_out_len_err)                                                   \
	X(deliv_res_not_zero)                                                  \
	X(deliv_bad_cmd_type)                                                  \
	/* dispatcher and handlers (cmd.c) */                                   \
	X(cmds_ok)                                                             \
	X(cmds_failed)          /* any status but OK */                         \
	X(refused_opcode)       /* unknown opcode */                            \
	X(refused_in_len)                                                      \
	X(refused_out_len)                                                     \
	X(refused_reserved)     /* non-zero reserved field */                   \
	X(refused_op_mod)                                                      \
	X(refused_handle)       /* handle names no live object */              \
	X(refused_foreign)      /* handle names another context's object */    \
	X(refused_priv)         /* privileged command from a context: NOT_PRIV */ \
	X(refused_ctx)          /* issuing context not allocated */             \
	X(refused_ctx_range)    /* ALLOC_CONTEXT range: align, size, taken */   \
	X(refused_ctx_id)       /* no context id / range left; MGMT's own */    \
	X(refused_address)      /* ring/dbrec/MR outside the user area */       \
	X(refused_stopped)      /* object Stopped by a dump/restore */          \
	X(refused_record)       /* restore record malformed or wrong type */    \
	X(engine_errors)        /* the engine refused or failed */              \
	X(dump_too_small)       /* DUMP_CONTEXT rolled back: out_len short */   \
	/* memory translation (cmd_mtt.c) */                                    \
	X(refused_mtt_shape)    /* CREATE_MTT page_shift/length/wrap/size */    \
	X(refused_mtt_len)      /* WRITE_MTT in_len is not 32 + 8 x count */    \
	X(refused_mtt_range)    /* WRITE_MTT count 0/too many, past npages */   \
	X(refused_mtt_page)     /* page unaligned, outside aperture/range */    \
	X(refused_mtt_cover)    /* MR/ring/dbrec not inside its MTT's range */  \
	X(refused_mtt_busy)     /* WRITE/DESTROY of an MTT objects use */       \
	/* data-path doorbells (doorbell.c) */                                  \
	X(db_rings)             /* db_seq changes acted on */                   \
	X(db_refreshes)         /* queue doorbell records re-read */           \
	/* DCQCN (cmd_device.c), appended */                                   \
	X(refused_dcqcn)        /* SET_DCQCN: a parameter out of range */       \
	/* GID table (cmd_device.c), appended */                               \
	X(gid_set)              /* SET_GID: an entry written */                 \
	X(gid_cleared)          /* SET_GID: an entry cleared */                 \
	X(refused_gid)          /* SET_GID: index, flags or address refused */

struct mnic_mgmt_counters {
#define MNIC_MGMT_COUNTER_FIELD(name) uint64_t name;
	MNIC_MGMT_COUNTERS(MNIC_MGMT_COUNTER_FIELD)
#undef MNIC_MGMT_COUNTER_FIELD
};

extern const char *const mnic_mgmt_counter_names[];
#define MNIC_MGMT_NUM_COUNTERS (sizeof(struct mnic_mgmt_counters) / sizeof(uint64_t))

#endif
