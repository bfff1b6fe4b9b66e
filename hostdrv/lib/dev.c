/* Opening a device (BAR file or /dev/mnicN), its identity, and mnic_cmd:
 * the one place every command goes through, whatever the backend, and
 * where the two error layers (delivery, command status) are told apart. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libmnic_int.h"
#include "mnic/dbch.h"
#include "mnic/ioctl.h"

static _Thread_local char open_err[512];

const char *mnic_open_error(void)
{
	return open_err;
}

__attribute__((format(printf, 1, 2))) static void set_open_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(open_err, sizeof(open_err), fmt, ap);
	va_end(ap);
}

int mnic_set_err(struct mnic_dev *dev, enum mnic_err_layer layer, int err)
{
	memset(&dev->last, 0, sizeof(dev->last));
	dev->last.layer = (uint8_t)layer;
	dev->last.err = err;
	dev->detail[0] = '\0';
	return err;
}

int mnic_set_err_detail(struct mnic_dev *dev, enum mnic_err_layer layer, int err,
			const char *fmt, ...)
{
	va_list ap;

	mnic_set_err(dev, layer, err);
	va_start(ap, fmt);
	vsnprintf(dev->detail, sizeof(dev->detail), fmt, ap);
	va_end(ap);
	return err;
}

/* Identity checks shared by both backends. */
static int check_identity(const char *path, uint32_t magic, uint32_t rev, uint32_t state,
			  int need_ready)
{
	if (magic != MNIC_INIT_MAGIC) {
		set_open_err("%s: no mnic init segment (magic 0x%08x, want 0x%08x): not an mnic "
			     "BAR, or the firmware has not started",
			     path, magic, MNIC_INIT_MAGIC);
		return -ENODEV;
	}
	if (rev != MNIC_CMDIF_REV) {
		set_open_err("%s: command interface revision %u, this libmnic speaks %u: "
			     "update the firmware or the tools so they match",
			     path, rev, MNIC_CMDIF_REV);
		return -EPROTO;
	}
	if (need_ready && state == MNIC_STATE_BOOTING) {
		set_open_err("%s: the firmware is still booting; wait for MNIC READY", path);
		return -EAGAIN;
	}
	if (need_ready && state != MNIC_STATE_READY) {
		set_open_err("%s: the firmware is in state %s (%u); see `mnicctl health`", path,
			     mnic_state_name(state), state);
		return -EIO;
	}
	return 0;
}

static int open_bar(struct mnic_dev *dev, const char *path, int need_ready)
{
	struct stat st;
	void *map;
	int err;

	dev->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		err = -errno;
		set_open_err("%s: cannot open: %s", path, strerror(errno));
		return err;
	}
	if (fstat(dev->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		set_open_err("%s: not a regular file (a BAR file, or /dev/mnicN)", path);
		return -ENODEV;
	}
	if ((uint64_t)st.st_size < (uint64_t)MNIC_DMA_WINDOW_OFFSET + MNIC_USER_AREA_OFFSET +
					   MNIC_USER_HDR_SIZE) {
		set_open_err("%s: %lld bytes, too small for an mnic BAR (need more than %u)", path,
			     (long long)st.st_size, MNIC_DMA_WINDOW_OFFSET + MNIC_USER_AREA_OFFSET);
		return -ENODEV;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		set_open_err("%s: cannot map %lld bytes: %s", path, (long long)st.st_size,
			     strerror(errno));
		return err;
	}
	dev->bar = map;
	dev->bar_size = (uint64_t)st.st_size;
	dev->iseg = (volatile struct mnic_init_seg *)dev->bar;
	dev->db = (volatile struct mnic_db_page *)(dev->bar + MNIC_DB_PAGE_OFFSET);
	dev->window_size = dev->bar_size - MNIC_DMA_WINDOW_OFFSET;
	dev->user_off = MNIC_USER_AREA_OFFSET;
	dev->user_size = dev->window_size - MNIC_USER_AREA_OFFSET;
	dev->user = dev->bar + MNIC_DMA_WINDOW_OFFSET + MNIC_USER_AREA_OFFSET;
	dev->area = dev->user;
	dev->area_off = dev->user_off;
	dev->area_size = dev->user_size;
	dev->ua_base = dev->user_off;
	err = check_identity(path, dev->iseg->magic, dev->iseg->cmdif_rev, dev->iseg->state,
			     need_ready);
	if (err < 0)
		return err;
	/* A channel that is there but fails its exchange is said, not fatal:
	 * the BAR is polled as on a NIC without one. */
	err = mnic_dbch_open(dev, path);
	if (err < 0)
		fprintf(stderr, "libmnic: %s%s: the doorbell channel failed (%s); the NIC will see "
				"this process's doorbells on its fallback poll only\n",
			path, MNIC_DBCH_SUFFIX, strerror(-err));
	return 0;
}

static int open_kernel(struct mnic_dev *dev, const char *path, int need_ready)
{
	struct mnic_ioc_info info;
	struct mnic_ioc_ctx ctx;
	long page = sysconf(_SC_PAGESIZE);
	void *map;
	int err;

	dev->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		err = -errno;
		set_open_err("%s: cannot open: %s%s", path, strerror(errno),
			     errno == ENOENT ? " (is the mnic module loaded?)" : "");
		return err;
	}
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.version = MNIC_IOC_VERSION;
	if (ioctl(dev->fd, MNIC_IOC_INFO, &info) < 0) {
		err = -errno;
		set_open_err("%s: MNIC_IOC_INFO: %s", path, strerror(errno));
		return err;
	}
	err = check_identity(path, MNIC_INIT_MAGIC, info.cmdif_rev, info.state, need_ready);
	if (err < 0)
		return err;
	if (info.user_area_size < MNIC_USER_HDR_SIZE || info.user_area_size > (1ull << 40) ||
	    info.bar_size <= info.window_offset ||
	    info.user_area_offset + info.user_area_size > info.bar_size - info.window_offset) {
		set_open_err("%s: the module reports an impossible geometry (user area 0x%llx+0x%llx, "
			     "BAR 0x%llx)", path, (unsigned long long)info.user_area_offset,
			     (unsigned long long)info.user_area_size,
			     (unsigned long long)info.bar_size);
		return -EPROTO;
	}
	dev->kinfo.fw_version = info.fw_version;
	dev->kinfo.cmdif_rev = info.cmdif_rev;
	dev->kinfo.board_id = info.board_id;
	dev->kinfo.state = info.state;
	memcpy(dev->kinfo.mac, info.mac, 6);
	memcpy(dev->kinfo.board_name, info.board_name, sizeof(dev->kinfo.board_name));
	dev->kinfo.board_name[sizeof(dev->kinfo.board_name) - 1] = '\0';
	dev->kinfo.bar_size = info.bar_size;
	dev->kinfo.flags = info.flags;   /* 0 from a module before MNIC_IOC_RING */
	dev->bar_size = info.bar_size;
	dev->window_size = info.bar_size - info.window_offset;
	/* The file's firmware context and its own part of the user area: the
	 * module maps that range and no other (docs/kernel-driver.md). */
	memset(&ctx, 0, sizeof(ctx));
	ctx.size = sizeof(ctx);
	ctx.version = MNIC_IOC_VERSION;
	if (ioctl(dev->fd, MNIC_IOC_CTX, &ctx) < 0) {
		err = -errno;
		set_open_err("%s: MNIC_IOC_CTX (the file's firmware context): %s", path,
			     strerror(errno));
		return err;
	}
	if (ctx.ua_size < MNIC_USER_HDR_SIZE || ctx.ua_offset < info.user_area_offset ||
	    ctx.ua_size > info.user_area_size ||
	    ctx.ua_offset - info.user_area_offset > info.user_area_size - ctx.ua_size) {
		set_open_err("%s: the module reports a context range outside the user area "
			     "(0x%llx+0x%llx)", path, (unsigned long long)ctx.ua_offset,
			     (unsigned long long)ctx.ua_size);
		return -EPROTO;
	}
	dev->user_off = ctx.ua_offset;
	dev->user_size = ctx.ua_size;
	dev->ctx = (uint16_t)ctx.ctx;   /* for QUERY_CONTEXT of itself; the module stamps */

	map = mmap(NULL, (size_t)dev->user_size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd,
		   (off_t)MNIC_MMAP_USER);
	if (map == MAP_FAILED) {
		err = -errno;
		set_open_err("%s: cannot map the user area (%llu bytes): %s", path,
			     (unsigned long long)dev->user_size, strerror(errno));
		return err;
	}
	dev->user_map = map;
	dev->user = map;
	/* the module maps the file's range only: that is all this handle sees */
	dev->area = map;
	dev->area_off = dev->user_off;
	dev->area_size = dev->user_size;
	dev->ua_base = info.user_area_offset;
	/* Read-only: the module refuses a writable mapping of the init segment. */
	map = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, dev->fd, (off_t)MNIC_MMAP_INITSEG);
	if (map == MAP_FAILED) {
		err = -errno;
		set_open_err("%s: cannot map the init segment page: %s", path, strerror(errno));
		return err;
	}
	dev->iseg_map = map;
	dev->iseg_map_len = (uint64_t)page;
	dev->iseg = map;
	map = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd,
		   (off_t)MNIC_MMAP_DOORBELL);
	if (map == MAP_FAILED) {
		err = -errno;
		set_open_err("%s: cannot map the doorbell page: %s", path, strerror(errno));
		return err;
	}
	dev->db_map = map;
	dev->db = map;
	return 0;
}

static void unmap_dev(struct mnic_dev *dev)
{
	mnic_dbch_close(dev);   /* first: it frees our irq_host_ids slot in the BAR */
	if (dev->bar)
		munmap(dev->bar, (size_t)dev->bar_size);
	if (dev->user_map)
		munmap(dev->user_map, (size_t)dev->user_size);
	if (dev->iseg_map)
		munmap(dev->iseg_map, (size_t)dev->iseg_map_len);
	if (dev->db_map)
		munmap(dev->db_map, (size_t)dev->iseg_map_len);
	if (dev->fd >= 0)
		close(dev->fd);
	dev->bar = NULL;
	dev->user_map = NULL;
	dev->iseg_map = NULL;
	dev->db_map = NULL;
	dev->fd = -1;
}

static int is_char_dev(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

static int open_into(struct mnic_dev *dev, const char *path, int need_ready)
{
	int err;

	dev->fd = -1;
	dev->db_sock = dev->db_ring_fd = dev->db_irq_fd = -1;
	mnic_ivsh_init(dev);
	open_err[0] = '\0';
	if (!path || !*path) {
		set_open_err("no device given (a BAR file or /dev/mnicN)");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(dev->path)) {
		set_open_err("device path too long");
		return -ENAMETOOLONG;
	}
	snprintf(dev->path, sizeof(dev->path), "%s", path);
	if (is_char_dev(path) || strncmp(path, "/dev/mnic", 9) == 0) {
		dev->backend = MNIC_BACKEND_KERNEL;
		err = open_kernel(dev, path, need_ready);
	} else {
		dev->backend = MNIC_BACKEND_BAR;
		err = open_bar(dev, path, need_ready);
	}
	if (err < 0)
		unmap_dev(dev);
	return err;
}

static int open_common(const char *path, struct mnic_dev **out, int need_ready,
		       enum mnic_role role)
{
	struct mnic_dev *dev;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		set_open_err("out of memory");
		return -ENOMEM;
	}
	err = open_into(dev, path, need_ready);
	if (err < 0) {
		free(dev);
		return err;
	}
	pthread_mutex_init(&dev->lock, NULL);
	dev->timeout_ms = MNIC_DEFAULT_TIMEOUT_MS;
	dev->role = role;
	if (need_ready && (err = mnic_kmem_setup(dev)) < 0) {
		set_open_err("%s: QUERY_DEVICE (host memory): %s", path, strerror(-err));
		mnic_close(dev);
		return err;
	}
	*out = dev;
	return 0;
}

int mnic_open(const char *path, struct mnic_dev **out)
{
	return open_common(path, out, 1, MNIC_ROLE_TENANT);
}

int mnic_open_raw(const char *path, struct mnic_dev **out)
{
	return open_common(path, out, 0, MNIC_ROLE_MGMT);
}

int mnic_open_mgmt(const char *path, struct mnic_dev **out)
{
	return open_common(path, out, 1, MNIC_ROLE_MGMT);
}

void mnic_close(struct mnic_dev *dev)
{
	if (!dev)
		return;
	mnic_ctx_release(dev);
	mnic_hostmem_detach(dev);
	unmap_dev(dev);
	pthread_mutex_destroy(&dev->lock);
	free(dev->qps);
	free(dev);
}

int mnic_reopen(struct mnic_dev *dev, const char *path)
{
	struct mnic_dev tmp;
	int err;

	if (!dev)
		return -EINVAL;
	memset(&tmp, 0, sizeof(tmp));
	err = open_into(&tmp, path, 1);
	if (err < 0)
		return err;
	pthread_mutex_lock(&dev->lock);
	unmap_dev(dev);
	dev->backend = tmp.backend;
	memcpy(dev->path, tmp.path, sizeof(dev->path));
	dev->fd = tmp.fd;
	dev->db_sock = tmp.db_sock;
	dev->db_ring_fd = tmp.db_ring_fd;
	dev->db_irq_fd = tmp.db_irq_fd;
	dev->ivsh_id = tmp.ivsh_id;
	dev->ivsh_slot = tmp.ivsh_slot;
	memcpy(dev->ivsh_vec_fd, tmp.ivsh_vec_fd, sizeof(dev->ivsh_vec_fd));
	dev->db_n_vectors = tmp.db_n_vectors;
	dev->bar = tmp.bar;
	dev->bar_size = tmp.bar_size;
	dev->iseg = tmp.iseg;
	dev->iseg_map = tmp.iseg_map;
	dev->iseg_map_len = tmp.iseg_map_len;
	dev->db = tmp.db;
	dev->db_map = tmp.db_map;
	dev->user = tmp.user;
	dev->user_off = tmp.user_off;
	dev->user_size = tmp.user_size;
	dev->area = tmp.area;
	dev->area_off = tmp.area_off;
	dev->area_size = tmp.area_size;
	dev->ua_base = tmp.ua_base;
	dev->user_map = tmp.user_map;
	dev->window_size = tmp.window_size;
	dev->kinfo = tmp.kinfo;
	dev->cmdq_ready = 0;
	/* A tenant's context moved with it (a migration): the next command
	 * finds it on this device by its owner tag.  A management handle goes
	 * back to MNIC_CTX_MGMT. */
	if (dev->ctx && dev->role == MNIC_ROLE_TENANT)
		dev->ctx_lost = 1;
	else
		dev->ctx = MNIC_CTX_MGMT;
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

/* Live migration of a frozen process (docs/migration-howto.md): the new
 * BAR is mapped over the old one at the same address (MAP_FIXED replaces
 * the mapping in one step), so every host pointer the application holds
 * (rings, buffers, mr->ptr) now reaches the target NIC's copy of its user
 * area, as CRIU restores memory at its old addresses.  In host-memory mode
 * the memory is the handle's pages, which the migration copied into the
 * target's aperture ("<path>.hostmem"): mapped at the same VAs, at new
 * page frames, and the source's pages released.  The doorbell channel
 * is the target's afterwards (dbch.c).  Only system calls
 * and plain stores: callable from a signal handler that runs before the
 * interrupted code touches its memory again.  No lock is taken: the caller
 * guarantees no command is in progress on this handle. */
int mnic_reopen_inplace(struct mnic_dev *dev, const char *path)
{
	struct mnic_init_seg seg;
	struct stat st;
	size_t n = 0;
	void *map;
	int fd, err;

	if (!dev || !path || dev->backend != MNIC_BACKEND_BAR || !dev->bar)
		return -EINVAL;
	while (path[n])
		n++;
	if (n == 0 || n >= sizeof(dev->path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		err = -ENODEV;
	else if ((uint64_t)st.st_size != dev->bar_size)
		err = -EXDEV;   /* another geometry: the user area would move */
	else if (pread(fd, &seg, sizeof(seg), 0) != (ssize_t)sizeof(seg))
		err = -EIO;
	else if (seg.magic != MNIC_INIT_MAGIC)
		err = -ENODEV;
	else if (seg.cmdif_rev != MNIC_CMDIF_REV)
		err = -EPROTO;
	else if (seg.state != MNIC_STATE_READY)
		err = -EIO;
	/* host-memory mode: the pages the migration put in the target's
	 * aperture take the old ones' place at the same VAs */
	if (!err)
		err = mnic_hostmem_reopen_inplace(dev, path, n);
	if (err) {
		close(fd);
		return err;
	}
	map = mmap(dev->bar, (size_t)dev->bar_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		   fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	close(dev->fd);
	dev->fd = fd;
	for (size_t i = 0; i <= n; i++)
		dev->path[i] = path[i];
	dev->cmdq_ready = 0;
	/* the target NIC's doorbell channel, with the eventfd we have (none
	 * there, or it fails: its fallback poll serves this process) */
	(void)mnic_dbch_connect(dev, path, n);
	/* same BAR address, same user-area offsets: the host pointers hold;
	 * the context id on this device is found by the next command */
	if (dev->ctx && dev->role == MNIC_ROLE_TENANT)
		dev->ctx_lost = 1;
	return 0;
}

enum mnic_backend mnic_dev_backend(const struct mnic_dev *dev)
{
	return dev->backend;
}

const char *mnic_dev_path(const struct mnic_dev *dev)
{
	return dev->path;
}

void mnic_set_cmd_timeout(struct mnic_dev *dev, uint32_t timeout_ms)
{
	dev->timeout_ms = timeout_ms ? timeout_ms : MNIC_DEFAULT_TIMEOUT_MS;
}

int mnic_dev_info(struct mnic_dev *dev, struct mnic_dev_info *info)
{
	volatile struct mnic_init_seg *s = dev->iseg;

	memset(info, 0, sizeof(*info));
	if (dev->backend == MNIC_BACKEND_KERNEL) {
		struct mnic_ioc_info k;

		memset(&k, 0, sizeof(k));
		k.size = sizeof(k);
		k.version = MNIC_IOC_VERSION;
		if (ioctl(dev->fd, MNIC_IOC_INFO, &k) < 0)
			return mnic_set_err(dev, MNIC_ERR_TRANSPORT, -errno);
		info->fw_version = k.fw_version;
		info->cmdif_rev = k.cmdif_rev;
		info->board_id = k.board_id;
		info->state = k.state;
		memcpy(info->mac, k.mac, 6);
		memcpy(info->board_name, k.board_name, sizeof(info->board_name));
		/* The health buffer is in the init-segment page the kernel
		 * backend maps too (for db_seq): read it there. */
		if (s) {
			info->cmdq_status = s->cmdq_status;
			memcpy(&info->health, (const void *)(uintptr_t)&s->health,
			       sizeof(info->health));
		}
	} else {
		info->fw_version = s->fw_version;
		info->cmdif_rev = s->cmdif_rev;
		info->board_id = s->board_id;
		info->state = s->state;
		for (int i = 0; i < 6; i++)
			info->mac[i] = s->mac[i];
		for (size_t i = 0; i < sizeof(info->board_name); i++)
			info->board_name[i] = s->board_name[i];
		info->cmdq_status = s->cmdq_status;
		memcpy(&info->health, (const void *)(uintptr_t)&s->health, sizeof(info->health));
	}
	info->board_name[sizeof(info->board_name) - 1] = '\0';
	info->bar_size = dev->bar_size;
	info->window_size = dev->window_size;
	info->user_area_offset = dev->user_off;
	info->user_area_size = dev->user_size;
	return mnic_set_err(dev, MNIC_ERR_NONE, 0);
}

static int exec_kernel(struct mnic_dev *dev, const void *in, uint32_t in_len, void *out,
		       uint32_t out_len, uint8_t *delivery)
{
	struct mnic_ioc_cmd c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.version = MNIC_IOC_VERSION;
	c.in_ptr = (uint64_t)(uintptr_t)in;
	c.out_ptr = (uint64_t)(uintptr_t)out;
	c.in_len = in_len;
	c.out_len = out_len;
	c.timeout_ms = dev->timeout_ms;
	if (ioctl(dev->fd, MNIC_IOC_CMD, &c) < 0)
		return -errno;
	*delivery = c.delivery;
	return 0;
}

int mnic_cmd(struct mnic_dev *dev, const void *in, uint32_t in_len, void *out, uint32_t out_len,
	     struct mnic_cmd_result *res)
{
	int err;

	if (!dev)
		return -EINVAL;
	err = mnic_ctx_ensure(dev);
	if (err < 0) {
		if (res)
			*res = dev->last;
		return err;
	}
	return mnic_cmd_as(dev, dev->ctx, in, in_len, out, out_len, res);
}

int mnic_cmd_as(struct mnic_dev *dev, uint16_t issuer, const void *in, uint32_t in_len,
		void *out, uint32_t out_len, struct mnic_cmd_result *res)
{
	struct mnic_cmd_in_hdr ih;
	struct mnic_cmd_out_hdr oh;
	struct mnic_cmd_result r;
	uint8_t delivery = 0;
	int err;

	if (!dev)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	if (!in || !out || in_len < sizeof(ih) || out_len < sizeof(oh) ||
	    in_len > MNIC_CMD_MAX_LEN || out_len > MNIC_CMD_MAX_LEN) {
		r.layer = MNIC_ERR_ARG;
		r.err = -EINVAL;
		goto done;
	}
	memcpy(&ih, in, sizeof(ih));
	r.opcode = ih.opcode;
	r.op_mod = ih.op_mod;
	memset(out, 0, sizeof(oh));
	pthread_mutex_lock(&dev->lock);
	if (dev->backend == MNIC_BACKEND_KERNEL)
		err = exec_kernel(dev, in, in_len, out, out_len, &delivery);
	else
		err = mnic_cmdq_exec(dev, issuer, in, in_len, out, out_len, &delivery);
	pthread_mutex_unlock(&dev->lock);
	if (err < 0) {
		r.layer = MNIC_ERR_TRANSPORT;
		r.err = err;
		goto done;
	}
	if (delivery != MNIC_CMD_DELIV_OK) {
		r.layer = MNIC_ERR_DELIVERY;
		r.delivery = delivery;
		r.err = -EIO;
		goto done;
	}
	memcpy(&oh, out, sizeof(oh));
	r.status = oh.status;
	r.syndrome = oh.syndrome;
	if (oh.status != MNIC_CMD_STAT_OK) {
		r.layer = MNIC_ERR_STATUS;
		r.err = mnic_errno_of_status(oh.status, oh.syndrome);
	}
done:
	dev->last = r;
	dev->detail[0] = '\0';
	if (res)
		*res = r;
	return r.err;
}

/* A reply that passed the transport but breaks the ABI (a count past the
 * buffer, a length that cannot be): the firmware is the judge of commands,
 * the library of replies. */
int mnic_reply_err(struct mnic_dev *dev)
{
	dev->last.layer = MNIC_ERR_REPLY;
	dev->last.err = -EBADMSG;
	dev->detail[0] = '\0';
	return -EBADMSG;
}

int mnic_query_device(struct mnic_dev *dev, struct mnic_cmd_query_device_out *out)
{
	struct mnic_cmd_simple_in in = {.hdr = {.opcode = MNIC_CMD_QUERY_DEVICE}};
	int err = mnic_cmd(dev, &in, sizeof(in), out, sizeof(*out), NULL);

	if (err < 0)
		return err;
	if (out->user_area_offset != dev->ua_base || out->window_size < dev->ua_base ||
	    out->window_size > dev->window_size)
		return mnic_reply_err(dev);
	return 0;
}

int mnic_fw_query(struct mnic_dev *dev, struct mnic_cmd_fw_query_out *out)
{
	struct mnic_cmd_simple_in in = {.hdr = {.opcode = MNIC_CMD_FW_QUERY}};
	int err = mnic_cmd(dev, &in, sizeof(in), out, sizeof(*out), NULL);

	if (err < 0)
		return err;
	out->board_name[sizeof(out->board_name) - 1] = '\0';
	out->build[sizeof(out->build) - 1] = '\0';
	return 0;
}

int mnic_query_counters(struct mnic_dev *dev, uint32_t group, struct mnic_counter *c,
			uint32_t max, uint32_t *total)
{
	struct mnic_cmd_simple_in in = {.hdr = {.opcode = MNIC_CMD_QUERY_COUNTERS,
						.op_mod = (uint16_t)group}};
	struct mnic_cmd_query_counters_out hdr;
	uint32_t cap = max, out_len;
	uint8_t *buf;
	int err;

	if (group > 0xffffu || (max && !c))
		return mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL);
	if ((uint64_t)cap * sizeof(struct mnic_counter) + sizeof(hdr) > MNIC_CMD_MAX_LEN)
		cap = (MNIC_CMD_MAX_LEN - sizeof(hdr)) / sizeof(struct mnic_counter);
	out_len = (uint32_t)(sizeof(hdr) + cap * sizeof(struct mnic_counter));
	buf = calloc(1, out_len);
	if (!buf)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	err = mnic_cmd(dev, &in, sizeof(in), buf, out_len, NULL);
	if (err < 0)
		goto out;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.count > cap || hdr.count > hdr.total) {
		err = mnic_reply_err(dev);
		goto out;
	}
	for (uint32_t i = 0; i < hdr.count; i++) {
		memcpy(&c[i], buf + sizeof(hdr) + i * sizeof(*c), sizeof(*c));
		c[i].name[sizeof(c[i].name) - 1] = '\0';
	}
	if (total)
		*total = hdr.total;
	err = (int)hdr.count;
out:
	free(buf);
	return err;
}

int mnic_counter(struct mnic_dev *dev, uint32_t group, const char *name, uint64_t *value)
{
	struct mnic_counter *c;
	uint32_t total = 0;
	int n;

	if (!dev || !name || !value)
		return -EINVAL;
	c = calloc(MNIC_MAX_COUNTERS, sizeof(*c));
	if (!c)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	n = mnic_query_counters(dev, group, c, MNIC_MAX_COUNTERS, &total);
	for (int i = 0; i < n; i++)
		if (!strcmp(c[i].name, name)) {
			*value = c[i].value;
			free(c);
			return 0;
		}
	free(c);
	if (n < 0)
		return n;
	return mnic_set_err(dev, MNIC_ERR_ARG, -ENOENT);
}
