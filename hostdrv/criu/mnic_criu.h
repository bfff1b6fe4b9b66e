/* The CRIU plugin's own image files (hostdrv/criu/): one per file CRIU
 * hands it, mnic-<id>.img in the image directory, written on the dump host
 * and read on the restore host (both x86-64: host byte order, fixed-width
 * fields, every size pinned).
 *
 *   MNIC_CRIU_CTX    a uverbs fd: struct mnic_criu_img, the firmware image
 *                    (resp.image_len bytes, docs/migration-image.md), then
 *                    resp.n_objects struct mnic_ib_mig_obj (mnic/ib_mig.h)
 *   MNIC_CRIU_EVENT  an infinibandevent fd of such a context: the header only
 */
#ifndef MNIC_CRIU_H
#define MNIC_CRIU_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "mnic/ib_mig.h"

#define MNIC_CRIU_MAGIC      0x5543434952434e4dull   /* "MNCRICCU" */
#define MNIC_CRIU_VERSION    1u
#define MNIC_CRIU_IMG_FMT    "mnic-%d.img"
#define MNIC_CRIU_IMAGE_MAX  (1u << 20)               /* mnic/cmd.h MNIC_CMD_MAX_LEN */
#define MNIC_CRIU_TABLE_MAX  4096u                    /* objects per context */
#define MNIC_CRIU_MAX_CHAN   16                       /* completion channels per context */

enum { MNIC_CRIU_CTX = 1, MNIC_CRIU_EVENT = 2 };

struct mnic_criu_img {
	uint64_t magic;
	uint32_t version;
	uint32_t kind;
	int32_t pid;                 /* the dumped task, and its fd number */
	int32_t fd;
	int32_t max_fd;              /* the task's highest fd number */
	uint32_t reserved;
	char path[128];              /* /dev/infiniband/uverbsN, or the event link */
	char dev[32];                /* uverbsN */
	struct mnic_ib_mig_resp resp; /* CTX: what DUMP answered */
};
_Static_assert(sizeof(struct mnic_criu_img) == 296, "criu image header");

/* A header as read: the sizes it announces within the file's. */
static inline int mnic_criu_img_check(const struct mnic_criu_img *h, size_t file_len)
{
	uint64_t body = file_len - sizeof(*h);

	if (h->magic != MNIC_CRIU_MAGIC || h->version != MNIC_CRIU_VERSION)
		return -EINVAL;
	if (h->kind == MNIC_CRIU_EVENT)
		return body == 0 ? 0 : -EINVAL;
	if (h->kind != MNIC_CRIU_CTX || h->resp.image_len > MNIC_CRIU_IMAGE_MAX ||
	    h->resp.n_objects > MNIC_CRIU_TABLE_MAX ||
	    (uint64_t)h->resp.image_len + (uint64_t)h->resp.n_objects * sizeof(struct mnic_ib_mig_obj) !=
		    body)
		return -EINVAL;
	if (h->fd < 0 || h->pid <= 0 || h->max_fd < h->fd || h->max_fd > 1 << 20)
		return -EINVAL;
	return 0;
}

static inline int mnic_criu_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static inline int mnic_criu_read_all(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = read(fd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

#endif
