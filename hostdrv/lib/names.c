/* Printable names of everything the device reports, and the errors of the
 * last command.  Built from the X-macro lists of mnic/cmd.h, so a new
 * opcode or status is named the moment it is added there. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libmnic_int.h"
#include "mnic/cmd_names.h"

struct name {
	uint32_t value;
	const char *name;
};

static const char *lookup(const struct name *t, size_t n, uint32_t v, size_t skip)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].value == v)
			return t[i].name + skip;
	return "?";
}

/* The command interface's names are the firmware's own (abi/cmd_names.c,
 * compiled into libmnic as is): one list, one spelling on both sides. */
const char *mnic_opcode_name(uint32_t opcode)
{
	return mnic_cmd_opcode_name(opcode);
}

const char *mnic_status_name(uint32_t status)
{
	return mnic_cmd_status_name(status);
}

const char *mnic_delivery_name(uint32_t delivery)
{
	return mnic_cmd_delivery_name(delivery);
}

const char *mnic_wc_status_name(uint32_t status)
{
	static const struct name t[] = {
		{MNIC_WC_SUCCESS, "SUCCESS"},
		{MNIC_WC_LOC_LEN_ERR, "LOC_LEN_ERR"},
		{MNIC_WC_LOC_QP_OP_ERR, "LOC_QP_OP_ERR"},
		{MNIC_WC_LOC_PROT_ERR, "LOC_PROT_ERR"},
		{MNIC_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR"},
		{MNIC_WC_BAD_RESP_ERR, "BAD_RESP_ERR"},
		{MNIC_WC_LOC_ACCESS_ERR, "LOC_ACCESS_ERR"},
		{MNIC_WC_REM_INV_REQ_ERR, "REM_INV_REQ_ERR"},
		{MNIC_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR"},
		{MNIC_WC_REM_OP_ERR, "REM_OP_ERR"},
		{MNIC_WC_RETRY_EXC_ERR, "RETRY_EXC_ERR"},
		{MNIC_WC_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR"},
		{MNIC_WC_FATAL_ERR, "FATAL_ERR"},
		{MNIC_WC_GENERAL_ERR, "GENERAL_ERR"},
	};
	return lookup(t, sizeof(t) / sizeof(t[0]), status, 0);
}

const char *mnic_state_name(uint32_t state)
{
	static const struct name t[] = {
		{MNIC_STATE_BOOTING, "BOOTING"},
		{MNIC_STATE_READY, "READY"},
		{MNIC_STATE_FAILED, "FAILED"},
	};
	return lookup(t, sizeof(t) / sizeof(t[0]), state, 0);
}

const char *mnic_qp_state_name(uint32_t state)
{
	static const char *const t[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
	return state < sizeof(t) / sizeof(t[0]) ? t[state] : "?";
}

/* Status -> errno when the syndrome carries none (mlx5 cmd.c does the
 * same mapping for its statuses). */
int mnic_errno_of_status(uint8_t status, uint32_t syndrome)
{
	static const struct {
		uint8_t status;
		int err;
	} t[] = {
		{MNIC_CMD_STAT_INT_ERR, EIO},        {MNIC_CMD_STAT_BAD_OP, EOPNOTSUPP},
		{MNIC_CMD_STAT_BAD_PARAM, EINVAL},   {MNIC_CMD_STAT_BAD_SYS_STATE, EIO},
		{MNIC_CMD_STAT_BAD_RES, EINVAL},     {MNIC_CMD_STAT_RES_BUSY, EBUSY},
		{MNIC_CMD_STAT_EXCEED_LIM, ENOMEM},  {MNIC_CMD_STAT_BAD_RES_STATE, EINVAL},
		{MNIC_CMD_STAT_BAD_INDEX, EINVAL},   {MNIC_CMD_STAT_NO_RESOURCES, EAGAIN},
		{MNIC_CMD_STAT_BAD_INPUT_LEN, EIO},  {MNIC_CMD_STAT_BAD_OUTPUT_LEN, ENOSPC},
	};
	uint32_t e = MNIC_SYND_ERRNO(syndrome);

	if (status == MNIC_CMD_STAT_OK)
		return 0;
	/* BAD_OUTPUT_LEN keeps its own meaning: the caller grows the buffer */
	if (status != MNIC_CMD_STAT_BAD_OUTPUT_LEN && e > 0 && e < 4096)
		return -(int)e;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].status == status)
			return -t[i].err;
	return -EIO;
}

static const char *const layer_names[] = {
	[MNIC_ERR_NONE] = "ok",
	[MNIC_ERR_TRANSPORT] = "transport",
	[MNIC_ERR_DELIVERY] = "delivery status",
	[MNIC_ERR_STATUS] = "command status",
	[MNIC_ERR_REPLY] = "invalid reply",
	[MNIC_ERR_ARG] = "bad argument",
};

char *mnic_strerror_result(const struct mnic_cmd_result *r, char *buf, size_t len)
{
	const char *op = r->opcode ? mnic_opcode_name(r->opcode) : "libmnic";
	const char *layer = r->layer < sizeof(layer_names) / sizeof(layer_names[0]) ?
				    layer_names[r->layer] : "?";
	uint32_t se = MNIC_SYND_ERRNO(r->syndrome);

	if (!buf || len == 0)
		return buf;
	switch (r->layer) {
	case MNIC_ERR_NONE:
		snprintf(buf, len, "%s: ok", op);
		break;
	case MNIC_ERR_DELIVERY:
		snprintf(buf, len, "%s: %s %s (0x%02x): the device could not read the command", op,
			 layer, mnic_delivery_name(r->delivery), r->delivery);
		break;
	case MNIC_ERR_STATUS:
		snprintf(buf, len, "%s: %s %s (0x%02x), syndrome 0x%08x (%s at check %s)", op,
			 layer, mnic_status_name(r->status), r->status, r->syndrome,
			 se ? mnic_cmd_errno_name(se) : "no errno",
			 mnic_cmd_site_name(MNIC_SYND_SITE(r->syndrome)));
		break;
	default:
		snprintf(buf, len, "%s: %s: %s", op, layer, strerror(r->err < 0 ? -r->err : r->err));
		break;
	}
	return buf;
}

const char *mnic_strerror_last(const struct mnic_dev *dev)
{
	static _Thread_local char buf[512];   /* the result, then the detail */
	size_t n;

	if (!dev)
		return "no device";
	mnic_strerror_result(&dev->last, buf, sizeof(buf));
	n = strlen(buf);
	if (dev->detail[0] && n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, ": %s", dev->detail);
	return buf;
}

const struct mnic_cmd_result *mnic_last_error(const struct mnic_dev *dev)
{
	return &dev->last;
}
