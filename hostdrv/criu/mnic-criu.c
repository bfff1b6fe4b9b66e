/* mnic-criu: the operator's side of a CRIU migration that must be undone
 * (docs/migration-howto.md "With CRIU").
 *
 *   mnic-criu abort PID    every mnic uverbs context of PID (a process that
 *                          `criu dump -R` left running on this host, its
 *                          contexts Stopped by the plugin's dump) resumes
 *                          in place: ABORT (ABORT_DUMP), its QPs send again
 *                          and their peers' paused QPs resume (after a
 *                          restore elsewhere that failed; after one that
 *                          succeeded, kill the source instead).
 *   mnic-criu show DIR     the plugin's images in a CRIU image directory
 *
 * Reaches the process's files with pidfd_getfd (ptrace access: root).
 * Exit: 0 done, 1 a context refused or failed, 2 usage, 3 no such process
 * or no mnic context in it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mnic/ib_mig.h"
#include "mnic_criu.h"

static int usage(void)
{
	fprintf(stderr, "usage: mnic-criu abort PID | mnic-criu show DIR\n");
	return 2;
}

static int cmd_abort(const char *arg)
{
	char path[64], link[256];
	struct dirent *de;
	int pid, pidfd, n = 0, bad = 0;
	DIR *d;

	pid = atoi(arg);
	if (pid <= 0)
		return usage();
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (!d || pidfd < 0) {
		fprintf(stderr, "mnic-criu: pid %d: %s\n", pid, strerror(errno));
		if (d)
			closedir(d);
		return 3;
	}
	while ((de = readdir(d))) {
		struct mnic_ib_mig_req req = { .version = MNIC_IB_MIG_VERSION };
		char fdpath[128];
		ssize_t l;
		int tfd = atoi(de->d_name), fd, ret;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%d", path, tfd);
		l = readlink(fdpath, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (strncmp(link, "/dev/infiniband/uverbs", 22))
			continue;
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, tfd, 0);
		if (fd < 0) {
			fprintf(stderr, "mnic-criu: pid %d fd %d: %s\n", pid, tfd, strerror(errno));
			bad = 1;
			continue;
		}
		ret = mnic_ib_method(fd, MNIC_IB_METHOD_ABORT, &req, NULL);
		close(fd);
		n++;
		if (ret) {
			fprintf(stderr, "mnic-criu: pid %d fd %d (%s): ABORT failed: %s%s\n", pid, tfd, link,
				strerror(-ret),
				ret == -EOPNOTSUPP || ret == -ENOENT ? " (not an mnic device?)" : "");
			bad = 1;
		} else {
			printf("mnic-criu: pid %d fd %d: context resumed in place\n", pid, tfd);
		}
	}
	closedir(d);
	close(pidfd);
	if (!n) {
		fprintf(stderr, "mnic-criu: pid %d holds no uverbs file\n", pid);
		return 3;
	}
	return bad;
}

static int cmd_show(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d) {
		fprintf(stderr, "mnic-criu: %s: %s\n", dir, strerror(errno));
		return 3;
	}
	while ((de = readdir(d))) {
		struct mnic_criu_img h;
		char path[PATH_MAX];
		struct stat st;
		int id, fd;

		if (sscanf(de->d_name, MNIC_CRIU_IMG_FMT, &id) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size < sizeof(h) ||
		    mnic_criu_read_all(fd, &h, sizeof(h)) || mnic_criu_img_check(&h, (size_t)st.st_size)) {
			fprintf(stderr, "mnic-criu: %s: not a valid plugin image\n", path);
			if (fd >= 0)
				close(fd);
			closedir(d);
			return 1;
		}
		close(fd);
		n++;
		if (h.kind == MNIC_CRIU_EVENT)
			printf("%s: pid %d fd %d: event file\n", de->d_name, h.pid, h.fd);
		else
			printf("%s: pid %d fd %d: %s context %u, %u objects, image %u bytes "
			       "(PD %u, MR %u, CQ %u, QP %u), async fd %d\n",
			       de->d_name, h.pid, h.fd, h.path, h.resp.ctx, h.resp.n_objects,
			       h.resp.image_len, h.resp.objects[0], h.resp.objects[1], h.resp.objects[2],
			       h.resp.objects[4], h.resp.async_fd);
	}
	closedir(d);
	if (!n)
		printf("%s: no mnic plugin image\n", dir);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "abort"))
		return cmd_abort(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "show"))
		return cmd_show(argv[2]);
	return usage();
}
