/* Printable names of the command interface (mnic/cmd_names.h).  Generated
 * from the X-macro lists of mnic/cmd.h, so a new opcode or status has its
 * name the moment it is listed.  No firmware dependency: host code links
 * this file too. */
#include "mnic/cmd_names.h"

#include "mnic/cmd.h"

#define NAME_CASE_(name, value) case value: return &(#name)[PREFIX_LEN];

const char *mnic_cmd_opcode_name(uint32_t opcode)
{
#define PREFIX_LEN (sizeof("MNIC_CMD_") - 1u)
	switch (opcode) {
	MNIC_CMD_OPCODE_LIST(NAME_CASE_)
	default:
		return "UNKNOWN";
	}
#undef PREFIX_LEN
}

const char *mnic_cmd_status_name(uint32_t status)
{
#define PREFIX_LEN (sizeof("MNIC_CMD_STAT_") - 1u)
	switch (status) {
	MNIC_CMD_STATUS_LIST(NAME_CASE_)
	default:
		return "UNKNOWN";
	}
#undef PREFIX_LEN
}

const char *mnic_cmd_delivery_name(uint32_t delivery)
{
#define PREFIX_LEN (sizeof("MNIC_CMD_DELIV_") - 1u)
	switch (delivery) {
	MNIC_CMD_DELIVERY_LIST(NAME_CASE_)
	default:
		return "UNKNOWN";
	}
#undef PREFIX_LEN
}

const char *mnic_cmd_site_name(uint32_t site)
{
#define PREFIX_LEN (sizeof("MNIC_SITE_") - 1u)
	switch (site) {
	MNIC_CMD_SITE_LIST(NAME_CASE_)
	default:
		return "UNKNOWN";
	}
#undef PREFIX_LEN
}

/* The values of hal/errno.h (Linux's), spelled out so that host code needs
 * no firmware header. */
#define MNIC_ERRNO_LIST(X)                                                      \
	X(EIO, 5) X(ENXIO, 6) X(E2BIG, 7) X(EAGAIN, 11) X(ENOMEM, 12) X(EACCES, 13) \
	X(EFAULT, 14) X(EBUSY, 16) X(EEXIST, 17) X(ENODEV, 19) X(EINVAL, 22)       \
	X(ENOSPC, 28) X(ERANGE, 34) X(ETIMEDOUT, 110)

const char *mnic_cmd_errno_name(uint32_t err)
{
#define PREFIX_LEN 0u
	switch (err) {
	case 0:
		return "0";
	MNIC_ERRNO_LIST(NAME_CASE_)
	default:
		return "UNKNOWN";
	}
#undef PREFIX_LEN
}
