/* Printable names for the command interface (mnic/cmd.h): opcodes,
 * command statuses, delivery statuses and syndrome sites.  Plain C with no
 * firmware dependency: the firmware (mgmt/cmd.c), libmnic and mnicctl
 * compile abi/cmd_names.c as is.
 *
 * Syndrome sites: MNIC_SYND(errno, site) names the check that refused a
 * command (mnic/cmd.h); the site numbers are below, one per check, listed
 * with their meaning in docs/host-interface.md.  Values are stable.
 */
#ifndef MNIC_CMD_NAMES_H
#define MNIC_CMD_NAMES_H

#include <stdint.h>

#define MNIC_CMD_SITE_LIST(X)                                                   \
	/* dispatcher (mgmt/cmd.c), before any handler runs */                    \
	X(MNIC_SITE_OPCODE, 0x01)        /* opcode unknown: BAD_OP */            \
	X(MNIC_SITE_IN_LEN, 0x02)        /* in_len < the command's input */      \
	X(MNIC_SITE_OUT_LEN, 0x03)       /* out_len < the command's output */    \
	X(MNIC_SITE_RESERVED, 0x04)      /* a reserved field is not zero */      \
	X(MNIC_SITE_OP_MOD, 0x05)        /* op_mod not defined for the opcode */ \
	X(MNIC_SITE_CTX, 0x06)           /* issuing context not allocated */     \
	X(MNIC_SITE_PRIV, 0x07)          /* only MNIC_CTX_MGMT may: NOT_PRIV */  \
	X(MNIC_SITE_PD, 0x10)            /* PD handle names no PD */             \
	X(MNIC_SITE_CQ, 0x11)            /* CQ handle names no CQ */             \
	X(MNIC_SITE_SRQ, 0x12)           /* SRQ handle names no SRQ */           \
	X(MNIC_SITE_QP, 0x13)            /* QPN names no QP */                   \
	X(MNIC_SITE_MR, 0x14)            /* lkey names no MR */                  \
	X(MNIC_SITE_CTX_HANDLE, 0x15)    /* names no allocated context */        \
	X(MNIC_SITE_MTT, 0x16)           /* MTT handle names no MTT */           \
	X(MNIC_SITE_EQ, 0x17)            /* EQ handle names no EQ */             \
	/* addresses: rings, doorbell records, MRs must lie in the user area */   \
	X(MNIC_SITE_RING_ADDR, 0x20)                                             \
	X(MNIC_SITE_DBREC_ADDR, 0x21)                                            \
	X(MNIC_SITE_MR_ADDR, 0x22)                                               \
	/* translation: MTT shape and page lists (CREATE/WRITE_MTT) */           \
	X(MNIC_SITE_MTT_SHAPE, 0x23)     /* page_shift, length, wrap, too big */ \
	X(MNIC_SITE_MTT_RANGE, 0x24)     /* first/count past the MTT's entries */\
	X(MNIC_SITE_MTT_PAGE, 0x25)      /* unaligned, outside the aperture, or  \
					    in the driver area / not the issuer's */\
	X(MNIC_SITE_MTT_COVER, 0x26)     /* object's range not inside the MTT's, \
					    or the MTT not fully written */      \
	X(MNIC_SITE_MTT_BUSY, 0x27)      /* in use: write only while Stopped;    \
					    destroy only when unused */          \
	/* handlers */                                                           \
	X(MNIC_SITE_ENGINE, 0x30)        /* the engine refused: see errno */     \
	X(MNIC_SITE_QP_STOPPED, 0x31)    /* QP is Stopped (dump/restore) */      \
	X(MNIC_SITE_DUMP_SPACE, 0x32)    /* out_len cannot hold the image */     \
	X(MNIC_SITE_RECORD, 0x33)        /* restore record header malformed */   \
	X(MNIC_SITE_DATA_LEN, 0x34)      /* restore data_len past in_len */      \
	X(MNIC_SITE_RECORD_TYPE, 0x35)   /* record type wrong for the op_mod */  \
	X(MNIC_SITE_OVERRIDE, 0x36)      /* peer-address override incomplete */  \
	X(MNIC_SITE_CTX_UA, 0x37)        /* context range: align, size, place */ \
	X(MNIC_SITE_CTX_ID, 0x38)        /* no context id left / MGMT's own */   \
	X(MNIC_SITE_IMAGE_RANGE, 0x39)   /* image range not the issuer's */      \
	/* command queue configuration (init_seg.cmdq_syndrome, BAD_CONFIG) */   \
	X(MNIC_SITE_CMDQ_CTRL, 0x40)     /* cmdq_ctrl not 0 or ENABLE */         \
	X(MNIC_SITE_CMDQ_ALIGN, 0x41)    /* cmdq_addr not 4 KiB aligned */       \
	X(MNIC_SITE_CMDQ_LOG_SIZE, 0x42) /* cmdq_log_size > 6 */                 \
	X(MNIC_SITE_CMDQ_RANGE, 0x43)    /* ring outside the driver area */      \
	X(MNIC_SITE_CMDQ_WINDOW, 0x44)   /* window smaller than the driver area */\
	/* SET_DCQCN: a field out of range, 0x50 + its index in                  \
	 * struct mnic_dcqcn_params (mnic/cmd.h gives the ranges) */              \
	X(MNIC_SITE_DCQCN_FLAGS, 0x50)                                           \
	X(MNIC_SITE_DCQCN_G, 0x51)                                               \
	X(MNIC_SITE_DCQCN_ALPHA_US, 0x52)                                        \
	X(MNIC_SITE_DCQCN_RATE_TIMER_US, 0x53)                                   \
	X(MNIC_SITE_DCQCN_BYTE_COUNTER, 0x54)                                    \
	X(MNIC_SITE_DCQCN_FAST_RECOVERY, 0x55)                                   \
	X(MNIC_SITE_DCQCN_RAI, 0x56)                                             \
	X(MNIC_SITE_DCQCN_RHAI, 0x57)                                            \
	X(MNIC_SITE_DCQCN_MIN_RATE, 0x58)                                        \
	X(MNIC_SITE_DCQCN_LINE_RATE, 0x59)                                       \
	X(MNIC_SITE_DCQCN_CNP_INTERVAL, 0x5a)                                    \
	/* SET_GID (cmd_device.c) */                                             \
	X(MNIC_SITE_GID_INDEX, 0x60)     /* index >= MNIC_GID_TBL_LEN */         \
	X(MNIC_SITE_GID_FLAGS, 0x61)     /* a flag not MNIC_GID_F_* */           \
	X(MNIC_SITE_GID_ADDR, 0x62)      /* not a unicast GID / set when clearing */

#define MNIC_CMD_SITE_ENUM_(name, value) name = value,
enum mnic_cmd_site { MNIC_CMD_SITE_LIST(MNIC_CMD_SITE_ENUM_) };
#undef MNIC_CMD_SITE_ENUM_

/* Names without their prefix ("QUERY_DEVICE", "BAD_PARAM", "TOKEN_ERR",
 * "RING_ADDR"); "UNKNOWN" for a value that has none. */
const char *mnic_cmd_opcode_name(uint32_t opcode);
const char *mnic_cmd_status_name(uint32_t status);
const char *mnic_cmd_delivery_name(uint32_t delivery);
const char *mnic_cmd_site_name(uint32_t site);
/* Name of the HAL_E* / errno value carried in a syndrome ("EINVAL"). */
const char *mnic_cmd_errno_name(uint32_t err);

#endif
