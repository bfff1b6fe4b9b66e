/* mnic_criu_plugin.so: CRIU (3.17, Debian 12) checkpoints and restores a
 * process's RDMA contexts on an mnic NIC (issue 17; docs/migration-howto.md
 * "CRIU", docs/kernel-driver.md "Migration").
 *
 * CRIU calls it for the files it cannot dump itself and for device
 * mappings (facts in ../shared/reference/rdma-device-notes.md and the
 * howto):
 *
 *   HANDLE_DEVICE_VMA   an mnic uverbs mapping (the doorbell page, the
 *                       Doorbell register page) is accepted: no pages saved.
 *   DUMP_EXT_FILE       a uverbs fd of an mnic device: the DUMP method stops
 *                       the context (its QPs Stopped, peers paused) before
 *                       CRIU reads any page, and returns the image and the
 *                       object table, written to mnic-<id>.img; an
 *                       anon_inode:[infinibandevent] fd of such a context
 *                       (its async fd or a completion channel): which one.
 *   RESTORE_EXT_FILE    in the restored task, before its memory is in
 *                       place: opens the device, GET_CONTEXT, RESTORE of the
 *                       image, and recreates every object with its uverbs
 *                       handle, user handle, QPN and keys (handles are
 *                       allocated lowest-free: every number up to the
 *                       largest is first taken by a filler PD, then each
 *                       object's filler is freed just before the object is
 *                       made, so it gets exactly that number); returns
 *                       the fd the id names (uverbs, async or channel).
 *   UPDATE_VMA_MAP      each mapping onto the restored uverbs file, at the
 *                       new context's mmap offset.
 *   RESUME_DEVICES_LATE in criu, the task still stopped, its memory in
 *                       place: RESUME method on the task's fd
 *                       (pidfd_getfd): pages pinned, MTTs written,
 *                       RESUME_CONTEXT.  CRIU ignores this hook's result,
 *                       so a task whose context could not resume is killed
 *                       (it could never make progress) and the reason
 *                       printed.
 *   exit (dump failed)  the dumped contexts resume in place (ABORT).
 *
 * Environment (restore): MNIC_CRIU_DEVICE=mnicN picks the device (default:
 * the first mnic one); MNIC_CRIU_OVERRIDE=OLD_IP,NEW_IP,NEW_MAC gives the
 * firmware a peer-address override (the peer moved too).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/kcmp.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

#include <criu/criu-plugin.h>

#include "mnic/ib_abi.h"
#include "mnic/ib_mig.h"
#include "mnic_criu.h"

#define UVERBS_MAJOR 231
#define EVENT_LINK   "anon_inode:[infinibandevent]"

/* One line to stderr and to mnic-criu.log in the image directory (a
 * restored task's stderr is not CRIU's while its files are restored). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, fd;

	n = snprintf(line, sizeof(line), "mnic-criu: [%d] ", getpid());
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
	fd = openat(criu_get_image_dir(), "mnic-criu.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		    0600);
	if (fd >= 0) {
		size_t l = strlen(line);

		line[l] = '\n';
		(void)mnic_criu_write_all(fd, line, l + 1);
		close(fd);
	}
}

/* ---- which files are ours ------------------------------------------------ */

/* The ib_device name of /sys/class/infiniband_verbs/<uverbs>: 0 or -1. */
static int uverbs_ibdev(const char *uverbs, char *ibdev, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/ibdev", uverbs);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(ibdev, (int)len, f)) {
		ibdev[strcspn(ibdev, "\n")] = '\0';
		ret = 0;
	}
	fclose(f);
	return ret;
}

/* A uverbs char device of an mnic ib_device: "uverbsN" in *name. */
static bool mnic_uverbs(const struct stat *st, char *name, size_t len)
{
	char path[PATH_MAX], ibdev[64] = "";
	DIR *d;
	struct dirent *de;
	bool ok = false;

	if (!S_ISCHR(st->st_mode) || major(st->st_rdev) != UVERBS_MAJOR)
		return false;
	d = opendir("/sys/class/infiniband_verbs");
	if (!d)
		return false;
	while (!ok && (de = readdir(d))) {
		char dev[32];
		unsigned int ma, mi;
		FILE *f;

		if (strncmp(de->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/dev", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(dev, sizeof(dev), f) && sscanf(dev, "%u:%u", &ma, &mi) == 2 &&
		    ma == major(st->st_rdev) && mi == minor(st->st_rdev) &&
		    !uverbs_ibdev(de->d_name, ibdev, sizeof(ibdev)) && !strncmp(ibdev, "mnic", 4) &&
		    strlen(de->d_name) < len) {
			memcpy(name, de->d_name, strlen(de->d_name) + 1);
			ok = true;
		}
		fclose(f);
	}
	closedir(d);
	return ok;
}

/* The task and fd number holding our copy lfd of a file (kcmp: the same
 * struct file), and the task's highest fd number. */
static int find_holder(int lfd, const char *link, int *pid, int *fd, int *max_fd)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;
	int self = getpid();

	if (!proc)
		return -errno;
	while ((p = readdir(proc))) {
		char path[64], target[PATH_MAX];
		struct dirent *f;
		int tp = atoi(p->d_name), best = -1, mx = -1;
		DIR *fds;

		if (tp <= 0 || tp == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", tp);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((f = readdir(fds))) {
			int n = atoi(f->d_name);
			ssize_t l;

			if (f->d_name[0] < '0' || f->d_name[0] > '9')
				continue;
			if (n > mx)
				mx = n;
			if (best >= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fd/%d", tp, n);
			l = readlink(path, target, sizeof(target) - 1);
			if (l <= 0)
				continue;
			target[l] = '\0';
			if (strcmp(target, link))
				continue;
			if (syscall(SYS_kcmp, self, tp, KCMP_FILE, lfd, n) == 0)
				best = n;
		}
		closedir(fds);
		if (best >= 0) {
			*pid = tp;
			*fd = best;
			*max_fd = mx;
			closedir(proc);
			return 0;
		}
	}
	closedir(proc);
	return -ENOENT;
}

/* ---- images ------------------------------------------------------------- */

static int img_write(int id, const struct mnic_criu_img *h, const void *a, size_t alen,
		     const void *b, size_t blen)
{
	char name[64];
	int fd, ret = 0;

	snprintf(name, sizeof(name), MNIC_CRIU_IMG_FMT, id);
	fd = openat(criu_get_image_dir(), name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (mnic_criu_write_all(fd, h, sizeof(*h)) || mnic_criu_write_all(fd, a, alen) ||
	    mnic_criu_write_all(fd, b, blen))
		ret = -EIO;
	if (close(fd) && !ret)
		ret = -EIO;
	return ret;
}

/* ---- dump ----------------------------------------------------------------- */

#define MAX_CTX 64
/* dumped contexts (criu's dumper process): resumed in place if the dump fails */
static int dumped_fd[MAX_CTX];
static int n_dumped;
/* their tables, to tell what an event fd is */
static struct {
	int pid;
	int async_fd;
	uint32_t n;
	struct mnic_ib_mig_obj *obj;
} dumped[MAX_CTX];

static int dump_uverbs(int fd, int id, const char *dev)
{
	struct mnic_criu_img h = { .magic = MNIC_CRIU_MAGIC, .version = MNIC_CRIU_VERSION,
				   .kind = MNIC_CRIU_CTX };
	struct mnic_ib_mig_req req = { .version = MNIC_IB_MIG_VERSION };
	struct mnic_ib_mig_resp resp;
	struct mnic_ib_mig_obj *table = NULL;
	uint8_t *image = NULL;
	char link[PATH_MAX];
	ssize_t l;
	int ret;

	if (n_dumped >= MAX_CTX) {
		say("more than %d RDMA contexts in one dump", MAX_CTX);
		return -E2BIG;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	l = readlink(link, h.path, sizeof(h.path) - 1);
	if (l <= 0)
		return -errno;
	h.path[l] = '\0';
	ret = find_holder(fd, h.path, &h.pid, &h.fd, &h.max_fd);
	if (ret) {
		say("%s: no process holds this file (%s)", h.path, strerror(-ret));
		return ret;
	}
	snprintf(h.dev, sizeof(h.dev), "%s", dev);
	req.image_len = MNIC_CRIU_IMAGE_MAX;
	req.table_len = MNIC_CRIU_TABLE_MAX * sizeof(*table);
	image = malloc(req.image_len);
	table = calloc(MNIC_CRIU_TABLE_MAX, sizeof(*table));
	if (!image || !table) {
		ret = -ENOMEM;
		goto out;
	}
	req.image_addr = (uintptr_t)image;
	req.table_addr = (uintptr_t)table;
	ret = mnic_ib_method(fd, MNIC_IB_METHOD_DUMP, &req, &resp);
	if (ret) {
		say("pid %d fd %d (%s): DUMP failed: %s%s", h.pid, h.fd, h.path, strerror(-ret),
		    ret == -EOPNOTSUPP ? " (an object this driver cannot migrate)" : "");
		goto out;
	}
	h.resp = resp;
	ret = img_write(id, &h, image, resp.image_len, table, resp.n_objects * sizeof(*table));
	if (ret) {
		struct mnic_ib_mig_req ab = { .version = MNIC_IB_MIG_VERSION };

		say("pid %d fd %d: writing the image failed: %s", h.pid, h.fd, strerror(-ret));
		mnic_ib_method(fd, MNIC_IB_METHOD_ABORT, &ab, NULL);
		goto out;
	}
	dumped_fd[n_dumped] = dup(fd);
	dumped[n_dumped].pid = h.pid;
	dumped[n_dumped].async_fd = resp.async_fd;
	dumped[n_dumped].n = resp.n_objects;
	dumped[n_dumped].obj = table;
	table = NULL;
	n_dumped++;
	say("pid %d fd %d: context %u dumped, %u objects, image %u bytes (PD %u/%u MR %u/%u "
	    "CQ %u/%u QP %u/%u: count/bytes), async fd %d", h.pid, h.fd, resp.ctx, resp.n_objects,
	    resp.image_len, resp.objects[0], resp.bytes[0], resp.objects[1], resp.bytes[1],
	    resp.objects[2], resp.bytes[2], resp.objects[4], resp.bytes[4], resp.async_fd);
out:
	free(image);
	free(table);
	return ret;
}

/* An event fd of a dumped context of the same task: its async fd or a
 * CQ's completion channel (as the provider noted them). */
static bool event_is_ours(int pid, int fd)
{
	int i;
	uint32_t k;

	bool task = false;

	for (i = 0; i < n_dumped; i++) {
		if (dumped[i].pid != pid)
			continue;
		task = true;
		if (dumped[i].async_fd == fd)
			return true;
		for (k = 0; k < dumped[i].n; k++)
			if (dumped[i].obj[k].kind == MNIC_IB_OBJ_CQ && dumped[i].obj[k].comp_fd == fd)
				return true;
	}
	if (task)
		/* a completion channel no CQ uses (yet): restored as a channel of
		 * one of the task's contexts */
		say("pid %d fd %d: an event file no context names: taken as an unused completion channel",
		    pid, fd);
	return task;
}

static int dump_event(int fd, int id)
{
	struct mnic_criu_img h = { .magic = MNIC_CRIU_MAGIC, .version = MNIC_CRIU_VERSION,
				   .kind = MNIC_CRIU_EVENT };
	int ret;

	snprintf(h.path, sizeof(h.path), "%s", EVENT_LINK);
	ret = find_holder(fd, EVENT_LINK, &h.pid, &h.fd, &h.max_fd);
	if (ret)
		return -ENOTSUP;
	if (!event_is_ours(h.pid, h.fd)) {
		/* another device's (its uverbs fd comes first) */
		say("pid %d fd %d: an event file no mnic context of the task names", h.pid, h.fd);
		return -ENOTSUP;
	}
	return img_write(id, &h, NULL, 0, NULL, 0);
}

static int mnic_dump_file(int fd, int id)
{
	char link[64], target[PATH_MAX], dev[32];
	struct stat st;
	ssize_t l;

	if (fstat(fd, &st))
		return -errno;
	if (mnic_uverbs(&st, dev, sizeof(dev)))
		return dump_uverbs(fd, id, dev);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	l = readlink(link, target, sizeof(target) - 1);
	if (l > 0) {
		target[l] = '\0';
		if (!strcmp(target, EVENT_LINK))
			return dump_event(fd, id);
	}
	return -ENOTSUP;
}

static int mnic_handle_vma(int fd, const struct stat *st)
{
	char dev[32];

	(void)fd;
	return mnic_uverbs(st, dev, sizeof(dev)) ? 0 : -ENOTSUP;
}

/* ---- restore (in the restored task) --------------------------------------- */

struct rctx {
	int id;                     /* the ext file id of its uverbs fd */
	struct mnic_criu_img h;
	int uverbs;                 /* parked fds, -1 once handed to CRIU */
	int async;
	struct {
		int old, fd;
	} chan[MNIC_CRIU_MAX_CHAN];
	int n_chan;
	struct mnic_ib_alloc_ucontext_resp ctx;
};
static struct rctx rctx[MAX_CTX];
static int n_rctx;

static int park(int fd, int base)
{
	int p = fcntl(fd, F_DUPFD, base);

	close(fd);
	return p;
}

/* A legacy uverbs write command: hdr, cmd (core + driver bytes), response. */
static int uv_cmd(int fd, uint32_t command, void *cmd, size_t cmd_len, size_t resp_len)
{
	uint8_t buf[512];
	struct ib_uverbs_cmd_hdr *hdr = (struct ib_uverbs_cmd_hdr *)buf;

	if (sizeof(*hdr) + cmd_len > sizeof(buf) || (cmd_len | resp_len) % 4)
		return -EINVAL;
	hdr->command = command;
	hdr->in_words = (uint16_t)((sizeof(*hdr) + cmd_len) / 4);
	hdr->out_words = (uint16_t)(resp_len / 4);
	memcpy(buf + sizeof(*hdr), cmd, cmd_len);
	if (write(fd, buf, sizeof(*hdr) + cmd_len) != (ssize_t)(sizeof(*hdr) + cmd_len))
		return -errno;
	return 0;
}

static const struct mnic_criu_img *img_read(int id, uint8_t **body, size_t *body_len)
{
	static struct mnic_criu_img h;
	char name[64];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), MNIC_CRIU_IMG_FMT, id);
	fd = openat(criu_get_image_dir(), name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(h) ||
	    mnic_criu_read_all(fd, &h, sizeof(h)) || mnic_criu_img_check(&h, (size_t)st.st_size)) {
		close(fd);
		return NULL;
	}
	*body_len = (size_t)st.st_size - sizeof(h);
	*body = malloc(*body_len ? *body_len : 1);
	if (!*body || mnic_criu_read_all(fd, *body, *body_len)) {
		free(*body);
		close(fd);
		return NULL;
	}
	close(fd);
	return &h;
}

static int open_device(char *path, size_t len)
{
	const char *want = getenv("MNIC_CRIU_DEVICE");
	DIR *d = opendir("/sys/class/infiniband_verbs");
	struct dirent *de;
	int fd = -1;

	if (!d)
		return -ENODEV;
	while (fd < 0 && (de = readdir(d))) {
		char ibdev[64] = "";

		if (strncmp(de->d_name, "uverbs", 6) || uverbs_ibdev(de->d_name, ibdev, sizeof(ibdev)))
			continue;
		if (want ? strcmp(ibdev, want) : strncmp(ibdev, "mnic", 4))
			continue;
		snprintf(path, len, "/dev/infiniband/%s", de->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	closedir(d);
	return fd >= 0 ? fd : -ENODEV;
}

static int override_from_env(struct mnic_ib_mig_req *req)
{
	const char *s = getenv("MNIC_CRIU_OVERRIDE");
	char a[32], b[32];
	unsigned int m[6];
	struct in_addr x, y;

	if (!s || !*s)
		return 0;
	if (sscanf(s, "%31[^,],%31[^,],%x:%x:%x:%x:%x:%x", a, b, &m[0], &m[1], &m[2], &m[3],
		   &m[4], &m[5]) != 8 ||
	    !inet_aton(a, &x) || !inet_aton(b, &y)) {
		say("MNIC_CRIU_OVERRIDE=%s: expected OLD_IP,NEW_IP,NEW_MAC", s);
		return -EINVAL;
	}
	req->old_dip = ntohl(x.s_addr);
	req->new_dip = ntohl(y.s_addr);
	for (int i = 0; i < 6; i++)
		req->new_dmac[i] = (uint8_t)m[i];
	return 0;
}

static int filler(int fd, uint32_t *handle)
{
	struct {
		struct ib_uverbs_alloc_pd c;
		struct mnic_ib_create_tail t;
	} cmd = { .t = { .magic = MNIC_IB_TAIL_MAGIC, .handle = MNIC_IB_RESTORE_FILLER } };
	struct ib_uverbs_alloc_pd_resp resp = { 0 };
	int ret;

	cmd.c.response = (uintptr_t)&resp;
	ret = uv_cmd(fd, IB_USER_VERBS_CMD_ALLOC_PD, &cmd, sizeof(cmd), sizeof(resp));
	*handle = resp.pd_handle;
	return ret;
}

static int dealloc_pd(int fd, uint32_t handle)
{
	struct ib_uverbs_dealloc_pd c = { .pd_handle = handle };

	return uv_cmd(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &c, sizeof(c), 0);
}

static int chan_of(struct rctx *r, int old)
{
	for (int i = 0; i < r->n_chan; i++)
		if (r->chan[i].old == old)
			return r->chan[i].fd;
	return -1;
}

/* One object at exactly its dumped handle (its filler freed first). */
static int make_obj(struct rctx *r, int fd, const struct mnic_ib_mig_obj *o)
{
	struct mnic_ib_create_tail tail = { .magic = MNIC_IB_TAIL_MAGIC, .handle = o->fw,
					    .comp_fd = -1 };
	uint32_t got = UINT32_MAX;
	int ret;

	ret = dealloc_pd(fd, o->handle);
	if (ret)
		return ret;
	switch (o->kind) {
	case MNIC_IB_OBJ_PD: {
		struct {
			struct ib_uverbs_alloc_pd c;
			struct mnic_ib_create_tail t;
		} cmd = { .t = tail };
		struct ib_uverbs_alloc_pd_resp resp = { 0 };

		cmd.c.response = (uintptr_t)&resp;
		ret = uv_cmd(fd, IB_USER_VERBS_CMD_ALLOC_PD, &cmd, sizeof(cmd), sizeof(resp));
		got = resp.pd_handle;
		break;
	}
	case MNIC_IB_OBJ_MR: {
		struct {
			struct ib_uverbs_reg_mr c;
			struct mnic_ib_create_tail t;
		} cmd = { .c = { .start = o->addr, .length = o->len, .hca_va = o->iova,
				 .pd_handle = o->pd, .access_flags = o->access },
			  .t = tail };
		struct ib_uverbs_reg_mr_resp resp = { 0 };

		cmd.c.response = (uintptr_t)&resp;
		ret = uv_cmd(fd, IB_USER_VERBS_CMD_REG_MR, &cmd, sizeof(cmd), sizeof(resp));
		got = resp.mr_handle;
		if (!ret && resp.lkey != o->fw)
			ret = -EPROTO;
		break;
	}
	case MNIC_IB_OBJ_CQ: {
		struct {
			struct ib_uverbs_create_cq c;
			struct mnic_ib_create_cq_req d;
			struct mnic_ib_create_tail t;
		} cmd = { .c = { .user_handle = o->user_handle, .cqe = o->cqe, .comp_channel = -1 },
			  .d = { .buf_addr = o->addr, .buf_len = o->len, .entries = o->entries,
				 .dbrec_off = o->dbrec_off },
			  .t = tail };
		struct {
			struct ib_uverbs_create_cq_resp c;
			struct mnic_ib_create_cq_resp d;
		} resp = { 0 };

		if (o->has_channel) {
			cmd.c.comp_channel = chan_of(r, o->comp_fd);
			if (cmd.c.comp_channel < 0)
				return -ENOENT;
		}
		cmd.t.comp_fd = o->comp_fd;
		cmd.c.response = (uintptr_t)&resp;
		ret = uv_cmd(fd, IB_USER_VERBS_CMD_CREATE_CQ, &cmd, sizeof(cmd), sizeof(resp));
		got = resp.c.cq_handle;
		break;
	}
	case MNIC_IB_OBJ_QP: {
		struct {
			struct ib_uverbs_create_qp c;
			struct mnic_ib_create_qp_req d;
			struct mnic_ib_create_tail t;
		} cmd = { .c = { .user_handle = o->user_handle, .pd_handle = o->pd,
				 .send_cq_handle = o->send_cq, .recv_cq_handle = o->recv_cq,
				 .max_send_wr = o->entries, .max_recv_wr = o->rq_entries,
				 .max_send_sge = o->max_send_sge, .max_recv_sge = o->max_recv_sge,
				 .max_inline_data = 0, .sq_sig_all = (uint8_t)o->sig_all,
				 .qp_type = IB_UVERBS_QPT_RC },
			  .d = { .buf_addr = o->addr, .buf_len = o->len, .sq_entries = o->entries,
				 .rq_entries = o->rq_entries, .rq_off = o->rq_off,
				 .sq_dbrec_off = o->dbrec_off, .rq_dbrec_off = o->rq_dbrec_off },
			  .t = tail };
		struct {
			struct ib_uverbs_create_qp_resp c;
			struct mnic_ib_create_qp_resp d;
		} resp = { 0 };

		cmd.c.response = (uintptr_t)&resp;
		ret = uv_cmd(fd, IB_USER_VERBS_CMD_CREATE_QP, &cmd, sizeof(cmd), sizeof(resp));
		got = resp.c.qp_handle;
		if (!ret && resp.c.qpn != o->fw)
			ret = -EPROTO;
		break;
	}
	default:
		return -EINVAL;
	}
	if (!ret && got != o->handle)
		ret = -EPROTO;
	return ret;
}

static const char *kind_name(uint32_t k)
{
	static const char *const n[] = { "?", "PD", "MR", "CQ", "QP" };

	return k < 5 ? n[k] : "?";
}

/* The completion channels the context's CQs name (as the provider noted
 * their fds): one new channel each. */
static int scan_channels(struct rctx *r, const struct mnic_ib_mig_obj *obj, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (obj[i].kind != MNIC_IB_OBJ_CQ || !obj[i].has_channel)
			continue;
		if (obj[i].comp_fd < 0) {
			say("CQ %u has a completion channel whose fd the provider did not note", obj[i].fw);
			return -ENOENT;
		}
		if (chan_of(r, obj[i].comp_fd) >= 0 || r->n_chan >= MNIC_CRIU_MAX_CHAN) {
			if (chan_of(r, obj[i].comp_fd) >= 0)
				continue;
			say("more than %d completion channels in one context", MNIC_CRIU_MAX_CHAN);
			return -E2BIG;
		}
		r->chan[r->n_chan].old = obj[i].comp_fd;
		r->chan[r->n_chan].fd = -1;
		r->n_chan++;
	}
	return 0;
}

static int restore_ctx(int id, const struct mnic_criu_img *h, const uint8_t *body, size_t len)
{
	struct rctx *r;
	char path[PATH_MAX];
	const struct mnic_ib_mig_obj *obj;
	struct mnic_ib_mig_req req = { .version = MNIC_IB_MIG_VERSION };
	uint32_t n, i, max_handle = 0, *fill = NULL, kind;
	int fd, ret, base;

	if (n_rctx >= MAX_CTX)
		return -E2BIG;
	r = &rctx[n_rctx];
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->h = *h;
	r->uverbs = r->async = -1;
	n = h->resp.n_objects;
	if ((uint64_t)h->resp.image_len + (uint64_t)n * sizeof(*obj) != len) {
		say("image %d: sizes do not add up", id);
		return -EINVAL;
	}
	obj = (const struct mnic_ib_mig_obj *)(body + h->resp.image_len);
	fd = open_device(path, sizeof(path));
	if (fd < 0) {
		say("no mnic RDMA device here (MNIC_CRIU_DEVICE=%s)",
		    getenv("MNIC_CRIU_DEVICE") ? getenv("MNIC_CRIU_DEVICE") : "any");
		return fd;
	}
	{
		struct ib_uverbs_get_context c;
		struct {
			struct ib_uverbs_get_context_resp c;
			struct mnic_ib_alloc_ucontext_resp d;
		} resp;

		memset(&resp, 0, sizeof(resp));
		c.response = (uintptr_t)&resp;
		ret = uv_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &c, sizeof(c), sizeof(resp));
		if (ret) {
			say("%s: GET_CONTEXT failed: %s", path, strerror(-ret));
			goto fail;
		}
		r->async = (int)resp.c.async_fd;
		r->ctx = resp.d;
	}
	if ((h->resp.uar_addr && !(r->ctx.flags & MNIC_IB_CTX_F_DB_RING))) {
		say("%s: the process mapped the Doorbell register page, this NIC gives none "
		    "(mnic.ko user_doorbell=0, or BAR0 not page-aligned)", path);
		ret = -EOPNOTSUPP;
		goto fail;
	}
	{
		struct mnic_ib_mig_req note = { .version = MNIC_IB_MIG_VERSION,
						.async_fd = h->resp.async_fd };

		mnic_ib_method(fd, MNIC_IB_METHOD_NOTE_FD, &note, NULL);
	}
	ret = override_from_env(&req);
	if (ret)
		goto fail;
	req.image_addr = (uintptr_t)body;
	req.image_len = h->resp.image_len;
	ret = mnic_ib_method(fd, MNIC_IB_METHOD_RESTORE, &req, NULL);
	if (ret) {
		say("%s: RESTORE of the image (%u bytes) failed: %s", path, h->resp.image_len,
		    strerror(-ret));
		goto fail;
	}
	/* completion channels: those its CQs use */
	ret = scan_channels(r, obj, n);
	if (ret)
		goto fail;
	for (i = 0; i < (uint32_t)r->n_chan; i++) {
		struct ib_uverbs_create_comp_channel c;
		struct ib_uverbs_create_comp_channel_resp resp = { 0 };

		c.response = (uintptr_t)&resp;
		ret = uv_cmd(fd, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &c, sizeof(c), sizeof(resp));
		if (ret) {
			say("CREATE_COMP_CHANNEL failed: %s", strerror(-ret));
			goto fail;
		}
		r->chan[i].fd = (int)resp.fd;
	}
	/* every handle number up to the largest taken by a filler */
	for (i = 0; i < n; i++)
		if (obj[i].handle > max_handle)
			max_handle = obj[i].handle;
	if (n && max_handle >= MNIC_CRIU_TABLE_MAX * 4) {
		say("handle %u: too sparse to refill", max_handle);
		ret = -E2BIG;
		goto fail;
	}
	fill = calloc(max_handle + 1, sizeof(*fill));
	if (!fill) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; n && i <= max_handle; i++) {
		ret = filler(fd, &fill[i]);
		if (ret || fill[i] != i) {
			say("filler PD %u: %s (got %u): the file already has objects", i,
			    strerror(ret ? -ret : EPROTO), fill[i]);
			ret = ret ? ret : -EPROTO;
			goto fail;
		}
	}
	/* dependency order: PDs, MRs, CQs, QPs */
	for (kind = MNIC_IB_OBJ_PD; kind <= MNIC_IB_OBJ_QP; kind++)
		for (i = 0; i < n; i++) {
			if (obj[i].kind != kind)
				continue;
			ret = make_obj(r, fd, &obj[i]);
			if (ret) {
				say("%s %u (handle %u): recreating it failed: %s", kind_name(kind),
				    obj[i].fw, obj[i].handle, strerror(-ret));
				goto fail;
			}
			fill[obj[i].handle] = UINT32_MAX;
		}
	for (i = 0; n && i <= max_handle; i++)
		if (fill[i] != UINT32_MAX)
			dealloc_pd(fd, fill[i]);
	free(fill);
	fill = NULL;
	/* park every fd above the task's numbers: CRIU moves each to its place */
	base = h->max_fd + 1;
	for (i = 0; i < (uint32_t)r->n_chan; i++)
		if (r->chan[i].fd >= 0)
			base = base > r->chan[i].old + 1 ? base : r->chan[i].old + 1;
	base += 16 * (n_rctx + 1);
	r->uverbs = park(fd, base);
	r->async = park(r->async, base);
	for (i = 0; i < (uint32_t)r->n_chan; i++)
		r->chan[i].fd = park(r->chan[i].fd, base);
	n_rctx++;
	say("pid %d fd %d: context restored on %s: %u objects at their handles, image %u bytes",
	    h->pid, h->fd, path, n, h->resp.image_len);
	return 0;
fail:
	free(fill);
	for (i = 0; i < (uint32_t)r->n_chan; i++)
		if (r->chan[i].fd >= 0)
			close(r->chan[i].fd);
	if (r->async >= 0)
		close(r->async);
	close(fd);
	return ret;
}

static struct rctx *rctx_of_pid_fd(int pid, int fd, int *which)
{
	for (int i = 0; i < n_rctx; i++) {
		if (rctx[i].h.pid != pid)
			continue;
		if (rctx[i].h.resp.async_fd == fd) {
			*which = -1;
			return &rctx[i];
		}
		for (int k = 0; k < rctx[i].n_chan; k++)
			if (rctx[i].chan[k].old == fd) {
				*which = k;
				return &rctx[i];
			}
	}
	return NULL;
}

/* The context image of this task that names event fd `fd`. */
static int restore_ctx_for_event(int pid, int fd)
{
	DIR *d = fdopendir(dup(criu_get_image_dir()));
	struct dirent *de;
	int ret = -ENOENT;

	if (!d)
		return -errno;
	rewinddir(d);   /* the dup shares the image directory's offset */
	while (ret == -ENOENT && (de = readdir(d))) {
		int id;
		uint8_t *body;
		size_t len;
		const struct mnic_criu_img *h;
		bool restored = false;

		if (sscanf(de->d_name, MNIC_CRIU_IMG_FMT, &id) != 1)
			continue;
		h = img_read(id, &body, &len);
		if (!h)
			continue;
		for (int i = 0; i < n_rctx; i++)
			restored |= rctx[i].id == id;
		if (h->kind == MNIC_CRIU_CTX && h->pid == pid && !restored) {
			const struct mnic_ib_mig_obj *o =
				(const struct mnic_ib_mig_obj *)(body + h->resp.image_len);
			bool names = fd < 0 || h->resp.async_fd == fd;

			for (uint32_t k = 0; k < h->resp.n_objects; k++)
				names |= o[k].kind == MNIC_IB_OBJ_CQ && o[k].comp_fd == fd;
			if (names)
				ret = restore_ctx(id, h, body, len);
		}
		free(body);
	}
	closedir(d);
	return ret;
}

/* Any context image of the task not restored yet. */
static int restore_first_ctx(int pid)
{
	return restore_ctx_for_event(pid, -1);
}

/* An event fd no context names: a completion channel no CQ used when the
 * task was dumped; a new one on a context of the task (restored now if
 * none is yet). */
static int orphan_channel(int pid, int fd)
{
	struct ib_uverbs_create_comp_channel c;
	struct ib_uverbs_create_comp_channel_resp resp = { 0 };
	struct rctx *r = NULL;
	int ufd, ret;

	for (int i = 0; i < n_rctx && !r; i++)
		if (rctx[i].h.pid == pid)
			r = &rctx[i];
	if (!r) {
		ret = restore_first_ctx(pid);
		if (ret) {
			say("event fd %d of pid %d: no context of the task to make it on", fd, pid);
			return ret;
		}
		r = &rctx[n_rctx - 1];
	}
	/* the uverbs fd: still parked, or already where CRIU put it */
	ufd = r->uverbs >= 0 ? r->uverbs : r->h.fd;
	c.response = (uintptr_t)&resp;
	ret = uv_cmd(ufd, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &c, sizeof(c), sizeof(resp));
	if (ret) {
		say("pid %d fd %d: CREATE_COMP_CHANNEL failed: %s", pid, fd, strerror(-ret));
		return ret;
	}
	say("pid %d fd %d: an unused completion channel, made anew", pid, fd);
	return (int)resp.fd;
}

static int take(int *fd)
{
	int f = *fd;

	*fd = -1;
	return f >= 0 ? f : -EBADF;
}

static int mnic_restore_file(int id)
{
	uint8_t *body;
	size_t len;
	const struct mnic_criu_img *h = img_read(id, &body, &len);
	struct mnic_criu_img hh;
	struct rctx *r;
	int which, ret;

	if (!h)
		return -ENOTSUP;   /* not one of ours */
	hh = *h;
	if (hh.kind == MNIC_CRIU_CTX) {
		for (int i = 0; i < n_rctx; i++)
			if (rctx[i].id == id) {
				free(body);
				return take(&rctx[i].uverbs);
			}
		ret = restore_ctx(id, &hh, body, len);
		free(body);
		return ret ? ret : take(&rctx[n_rctx - 1].uverbs);
	}
	free(body);
	r = rctx_of_pid_fd(hh.pid, hh.fd, &which);
	if (!r) {
		ret = restore_ctx_for_event(hh.pid, hh.fd);
		if (ret == -ENOENT)
			return orphan_channel(hh.pid, hh.fd);
		if (ret)
			return ret;
		r = rctx_of_pid_fd(hh.pid, hh.fd, &which);
		if (!r)
			return -ENOENT;
	}
	return take(which < 0 ? &r->async : &r->chan[which].fd);
}

static int mnic_update_vma(const char *path, const uint64_t addr, const uint64_t old_off,
			   uint64_t *new_off, int *plugin_fd)
{
	if (!strstr(path, "infiniband/uverbs"))
		return 0;
	for (int i = 0; i < n_rctx; i++) {
		struct rctx *r = &rctx[i];

		if (r->h.resp.db_addr == addr && r->h.resp.db_mmap_offset == old_off) {
			*new_off = r->ctx.db_mmap_offset;
			*plugin_fd = r->h.fd;
			say("pid %d: doorbell page at 0x%llx onto fd %d", r->h.pid,
			    (unsigned long long)addr, r->h.fd);
			return 1;
		}
		if (r->h.resp.uar_addr && r->h.resp.uar_addr == addr &&
		    r->h.resp.uar_mmap_offset == old_off) {
			*new_off = r->ctx.uar_mmap_offset;
			*plugin_fd = r->h.fd;
			say("pid %d: doorbell register page at 0x%llx onto fd %d", r->h.pid,
			    (unsigned long long)addr, r->h.fd);
			return 1;
		}
	}
	say("%s mapped at 0x%llx (offset 0x%llx): no restored context made it", path,
	    (unsigned long long)addr, (unsigned long long)old_off);
	return -ENOENT;
}

/* ---- resume (criu, the task stopped, its memory in place) --------------- */

static int mnic_resume_late(int pid)
{
	DIR *d = fdopendir(dup(criu_get_image_dir()));
	struct dirent *de;
	int pidfd, bad = 0;

	if (!d)
		return -errno;
	rewinddir(d);   /* the dup shares the image directory's offset */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	while ((de = readdir(d))) {
		struct mnic_ib_mig_req req = { .version = MNIC_IB_MIG_VERSION };
		struct mnic_ib_mig_resp resp;
		const struct mnic_criu_img *h;
		uint8_t *body;
		size_t len;
		int id, fd, ret;

		if (sscanf(de->d_name, MNIC_CRIU_IMG_FMT, &id) != 1)
			continue;
		h = img_read(id, &body, &len);
		if (!h)
			continue;
		free(body);
		if (h->kind != MNIC_CRIU_CTX || h->pid != pid)
			continue;
		fd = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, h->fd, 0) : -1;
		if (fd < 0) {
			say("pid %d fd %d: cannot reach the restored file: %s", pid, h->fd,
			    strerror(errno));
			bad = 1;
			continue;
		}
		ret = mnic_ib_method(fd, MNIC_IB_METHOD_RESUME, &req, &resp);
		if (ret) {
			say("pid %d fd %d: RESUME failed: %s", pid, h->fd, strerror(-ret));
			bad = 1;
		} else {
			say("pid %d fd %d: context %u resumed, %u pages pinned", pid, h->fd,
			    resp.ctx, resp.pages);
		}
		close(fd);
	}
	closedir(d);
	if (pidfd >= 0)
		close(pidfd);
	if (bad) {
		/* CRIU ignores this hook's result; a context that did not resume
		 * never completes anything: fail the restore visibly. */
		say("pid %d: its RDMA context could not resume: killing it", pid);
		kill(pid, SIGKILL);
		return -EIO;
	}
	return 0;
}

/* ---- registration --------------------------------------------------------- */

static int mnic_init(int stage)
{
	(void)stage;
	return 0;
}

static void mnic_fini(int stage, int ret)
{
	for (int i = 0; i < n_dumped; i++) {
		if (stage == CR_PLUGIN_STAGE__DUMP && ret) {
			struct mnic_ib_mig_req req = { .version = MNIC_IB_MIG_VERSION };
			int r = mnic_ib_method(dumped_fd[i], MNIC_IB_METHOD_ABORT, &req, NULL);

			say("dump failed: context of pid %d %s", dumped[i].pid,
			    r ? "could not resume in place" : "resumed in place");
		}
		close(dumped_fd[i]);
		free(dumped[i].obj);
	}
	n_dumped = 0;
}

CR_PLUGIN_REGISTER("mnic", mnic_init, mnic_fini)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__DUMP_EXT_FILE, mnic_dump_file)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESTORE_EXT_FILE, mnic_restore_file)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA, mnic_handle_vma)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__UPDATE_VMA_MAP, mnic_update_vma)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, mnic_resume_late)
