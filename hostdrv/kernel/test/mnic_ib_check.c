/* mnic-ib-check: the RDMA device of mnic.ko (hostdrv/kernel/mnic_ib.c;
 * docs/kernel-driver.md "RDMA device"), run as root in the test VM
 * (tests/system/kmod_vm.sh) on the raw uverbs write ABI
 * (<rdma/ib_user_verbs.h> from linux-libc-dev: struct ib_uverbs_cmd_hdr
 * and the command structs; no libibverbs, no provider yet).
 *
 *   mnic-ib-check verbs IBDEV MNICDEV    GET_CONTEXT (a firmware context),
 *        QUERY_DEVICE and QUERY_PORT answer what the firmware's QUERY_DEVICE
 *        (on MNICDEV, as root: the whole NIC) and the init segment say,
 *        ALLOC_PD/DEALLOC_PD reach the firmware in that context, refusals
 *        (driver data, a second context, port 2, a freed PD, CREATE_CQ
 *        without its request, an mmap offset not handed out), and closing the file frees the context and the
 *        PD left in it
 *   mnic-ib-check objects IBDEV MNICDEV  the doorbell page's mmap (and its
 *        refusals), REG_MR (heap memory; a hole: -EFAULT), CREATE_CQ and
 *        CREATE_QP with the driver requests of mnic/ib_abi.h and each
 *        hostile variant (cut or padded udata, bad sizes, overlaps,
 *        unmapped rings, UD), RESIZE_CQ refused, a CQ in use, MODIFY_QP to
 *        INIT and QUERY_QP, destroys; closing the file with objects left
 *        frees all of them in the firmware and unpins every page
 *   mnic-ib-check mig IBDEV MNICDEV      the migration methods (mnic/ib_mig.h,
 *        mnic_ib_mig.c): DUMP's image and object table (handles, keys,
 *        QPN, buffers), a dump that does not fit undone, ABORT; RESTORE of
 *        hostile images refused, into a context with objects refused; the
 *        restore shells (filler PDs, PD/MR/CQ/QP claims checked against the
 *        image, wrong ones refused), RESUME refused while an object is
 *        missing, then pinning and resuming; every page unpinned on close
 *   mnic-ib-check unbind IBDEV MNICDEV   a file with a context and a PD
 *        while the PCI function is unbound: the core disassociates it
 *        (commands then fail), the firmware keeps nothing; rebound after
 * IBDEV is the ib_device's name (mnic0): its uverbs node is found in
 * /sys/class/infiniband_verbs/ by its ibdev file.  Prints "ok NAME" or
 * "FAIL NAME: why" per check, then "IB-CHECK PASS n" or "IB-CHECK FAIL
 * failed/n"; exit 0 only on PASS. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "check_counter.h"
#include "mnic/abi.h"
#include "mnic/cmd.h"
#include "mnic/ib_abi.h"
#include "mnic/ib_mig.h"
#include "mnic/ioctl.h"
#include "mnic/queues.h"

/* The write ABI's layouts this program relies on (ib_user_verbs.h). */
_Static_assert(sizeof(struct ib_uverbs_cmd_hdr) == 8, "cmd hdr");
_Static_assert(sizeof(struct ib_uverbs_get_context_resp) == 8, "get_context resp");
_Static_assert(sizeof(struct ib_uverbs_query_device_resp) == 176, "query_device resp");
_Static_assert(sizeof(struct ib_uverbs_query_port) == 16, "query_port");
_Static_assert(sizeof(struct ib_uverbs_query_port_resp) == 40, "query_port resp");
_Static_assert(sizeof(struct ib_uverbs_alloc_pd_resp) == 4, "alloc_pd resp");
_Static_assert(sizeof(struct ib_uverbs_dealloc_pd) == 4, "dealloc_pd");
_Static_assert(sizeof(struct ib_uverbs_reg_mr) == 40, "reg_mr");
_Static_assert(sizeof(struct ib_uverbs_reg_mr_resp) == 12, "reg_mr resp");
_Static_assert(sizeof(struct ib_uverbs_create_cq) == 32, "create_cq");
_Static_assert(sizeof(struct ib_uverbs_create_cq_resp) == 8, "create_cq resp");
_Static_assert(sizeof(struct ib_uverbs_create_qp) == 56, "create_qp");
_Static_assert(sizeof(struct ib_uverbs_create_qp_resp) == 32, "create_qp resp");
_Static_assert(sizeof(struct ib_uverbs_modify_qp) == 112, "modify_qp");
_Static_assert(sizeof(struct ib_uverbs_query_qp_resp) == 128, "query_qp resp");

#define PORT_ACTIVE     4      /* enum ib_port_state */
#define MTU_1024        3      /* enum ib_mtu */
#define MTU_4096        5
#define LINK_ETHERNET   2      /* IB_LINK_LAYER_ETHERNET */
#define ATOMIC_HCA      1      /* IB_ATOMIC_HCA */

static const char *ibdev, *mnicdev;
static char sysdir[128];
#include "check_result.h"

static long counter(const char *name)
{
	return mnic_check_counter(sysdir, name);
}

/* /dev/infiniband/uverbsN of ibdev, from sysfs. */
static int uverbs_path(char *out, size_t len)
{
	DIR *dir = opendir("/sys/class/infiniband_verbs");
	struct dirent *e;
	int found = 0;

	if (!dir)
		return 0;
	while (!found && (e = readdir(dir))) {
		char p[512], name[64] = "";
		FILE *f;

		if (strncmp(e->d_name, "uverbs", 6))
			continue;
		snprintf(p, sizeof(p), "/sys/class/infiniband_verbs/%s/ibdev", e->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fscanf(f, "%63s", name) == 1 && !strcmp(name, ibdev)) {
			snprintf(out, len, "/dev/infiniband/%s", e->d_name);
			found = 1;
		}
		fclose(f);
	}
	closedir(dir);
	return found;
}

/* One write-ABI command: hdr + cmd (+ extra driver bytes); 0 or -errno.
 * resp_len counts the response and its driver part (out_words). */
static int uverbs_cmd(int fd, uint32_t command, const void *cmd, size_t cmd_len,
		      size_t resp_len, const void *extra, size_t extra_len)
{
	uint8_t buf[512];
	struct ib_uverbs_cmd_hdr hdr = {
		.command = command,
		.in_words = (uint16_t)((sizeof(hdr) + cmd_len + extra_len) / 4),
		.out_words = (uint16_t)(resp_len / 4),
	};
	size_t n = sizeof(hdr) + cmd_len + extra_len;

	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), cmd, cmd_len);
	if (n > sizeof(buf))
		return -E2BIG;
	if (extra_len)
		memcpy(buf + sizeof(hdr) + cmd_len, extra, extra_len);
	if (write(fd, buf, n) != (ssize_t)n)
		return -errno;
	return 0;
}

static int get_context(int fd, struct ib_uverbs_get_context_resp *r)
{
	struct ib_uverbs_get_context c = { .response = (uintptr_t)r };

	memset(r, 0, sizeof(*r));
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &c, sizeof(c), sizeof(*r), NULL, 0);
}

static int query_device(int fd, struct ib_uverbs_query_device_resp *r)
{
	struct ib_uverbs_query_device c = { .response = (uintptr_t)r };

	memset(r, 0, sizeof(*r));
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_QUERY_DEVICE, &c, sizeof(c), sizeof(*r), NULL, 0);
}

static int query_port(int fd, uint8_t port, struct ib_uverbs_query_port_resp *r)
{
	struct ib_uverbs_query_port c = { .response = (uintptr_t)r, .port_num = port };

	memset(r, 0, sizeof(*r));
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_QUERY_PORT, &c, sizeof(c), sizeof(*r), NULL, 0);
}

static int alloc_pd(int fd, uint32_t *handle, const void *extra, size_t extra_len)
{
	struct ib_uverbs_alloc_pd_resp r;
	/* response padded to 8 bytes: out_words counts 4-byte words */
	uint8_t resp[8];
	struct ib_uverbs_alloc_pd c = { .response = (uintptr_t)resp };
	int ret;

	memset(resp, 0xa5, sizeof(resp));
	ret = uverbs_cmd(fd, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c), sizeof(r), extra, extra_len);
	memcpy(&r, resp, sizeof(r));
	*handle = r.pd_handle;
	return ret;
}

static int dealloc_pd(int fd, uint32_t handle)
{
	struct ib_uverbs_dealloc_pd c = { .pd_handle = handle };

	return uverbs_cmd(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &c, sizeof(c), 0, NULL, 0);
}

/* The firmware's QUERY_DEVICE through /dev/mnicN (root: as MNIC_CTX_MGMT). */
static int fw_query(struct mnic_cmd_query_device_out *q)
{
	struct mnic_cmd_simple_in in = { .hdr = { .opcode = MNIC_CMD_QUERY_DEVICE } };
	struct mnic_ioc_cmd c;
	int fd = open(mnicdev, O_RDWR), ret = -1;

	if (fd < 0)
		return -1;
	memset(&c, 0, sizeof(c));
	memset(q, 0, sizeof(*q));
	c.size = sizeof(c);
	c.version = MNIC_IOC_VERSION;
	c.in_ptr = (uintptr_t)&in;
	c.out_ptr = (uintptr_t)q;
	c.in_len = sizeof(in);
	c.out_len = sizeof(*q);
	if (ioctl(fd, MNIC_IOC_CMD, &c) == 0 && c.delivery == MNIC_CMD_DELIV_OK &&
	    q->hdr.status == MNIC_CMD_STAT_OK)
		ret = 0;
	close(fd);
	return ret;
}

static int fw_info(struct mnic_ioc_info *info)
{
	int fd = open(mnicdev, O_RDWR), ret;

	if (fd < 0)
		return -1;
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->version = MNIC_IOC_VERSION;
	ret = ioctl(fd, MNIC_IOC_INFO, info);
	close(fd);
	return ret;
}

static int clamp_int(uint32_t v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

static void check_device(const struct ib_uverbs_query_device_resp *r,
			 const struct mnic_cmd_query_device_out *q, const struct mnic_ioc_info *info)
{
	uint8_t g[8] = { info->mac[0] ^ 2, info->mac[1], info->mac[2], 0xff, 0xfe,
			 info->mac[3], info->mac[4], info->mac[5] };
	uint64_t guid, mr_size = q->hostmem_size ? q->hostmem_size : q->window_size;

	memcpy(&guid, g, sizeof(guid));
	result("ib_device_query_max_qp", r->max_qp == (uint32_t)clamp_int(q->max_qp),
	       "max_qp %u, firmware %u", r->max_qp, q->max_qp);
	result("ib_device_query_max_cq", r->max_cq == (uint32_t)clamp_int(q->max_cq),
	       "max_cq %u, firmware %u", r->max_cq, q->max_cq);
	result("ib_device_query_max_mr", r->max_mr == (uint32_t)clamp_int(q->max_mr),
	       "max_mr %u, firmware %u", r->max_mr, q->max_mr);
	result("ib_device_query_max_pd", r->max_pd == (uint32_t)clamp_int(q->max_pd),
	       "max_pd %u, firmware %u", r->max_pd, q->max_pd);
	result("ib_device_query_max_qp_wr", r->max_qp_wr == (uint32_t)clamp_int(q->max_qp_wr),
	       "max_qp_wr %u, firmware %u", r->max_qp_wr, q->max_qp_wr);
	result("ib_device_query_max_sge", r->max_sge == (uint32_t)clamp_int(q->max_sge),
	       "max_sge %u, firmware %u", r->max_sge, q->max_sge);
	result("ib_device_query_max_cqe", r->max_cqe == (uint32_t)clamp_int(q->max_cqe),
	       "max_cqe %u, firmware %u", r->max_cqe, q->max_cqe);
	result("ib_device_query_max_rd_atom", r->max_qp_rd_atom == q->max_rd_atomic &&
	       r->max_qp_init_rd_atom == q->max_rd_atomic,
	       "max_qp_rd_atom %u, init %u, firmware %u", r->max_qp_rd_atom, r->max_qp_init_rd_atom,
	       q->max_rd_atomic);
	result("ib_device_query_max_mr_size", r->max_mr_size == mr_size && mr_size > 0,
	       "max_mr_size %llu, want %llu", (unsigned long long)r->max_mr_size,
	       (unsigned long long)mr_size);
	result("ib_device_query_page_size_cap", (r->page_size_cap & 4096) != 0,
	       "page_size_cap 0x%llx", (unsigned long long)r->page_size_cap);
	result("ib_device_query_atomic_cap", r->atomic_cap == ATOMIC_HCA, "atomic_cap %u",
	       r->atomic_cap);
	result("ib_device_query_vendor", r->vendor_id == 0x1af4 && r->vendor_part_id == 0x1110,
	       "vendor 0x%x part 0x%x", r->vendor_id, r->vendor_part_id);
	result("ib_device_query_fw_ver", r->fw_ver == info->fw_version && r->fw_ver != 0,
	       "fw_ver 0x%llx, init segment 0x%x", (unsigned long long)r->fw_ver, info->fw_version);
	result("ib_device_query_hw_ver", r->hw_ver == info->board_id, "hw_ver %u, board_id %u",
	       r->hw_ver, info->board_id);
	result("ib_device_query_node_guid", r->node_guid == guid && r->sys_image_guid == guid,
	       "node_guid 0x%016llx, want 0x%016llx (the MAC's EUI-64)",
	       (unsigned long long)r->node_guid, (unsigned long long)guid);
	result("ib_device_query_ports", r->phys_port_cnt == 1 && r->max_pkeys == 1,
	       "phys_port_cnt %u max_pkeys %u", r->phys_port_cnt, r->max_pkeys);
}

static void check_port(const struct ib_uverbs_query_port_resp *p,
		       const struct mnic_cmd_query_device_out *q)
{
	result("ib_device_port_active", p->state == PORT_ACTIVE, "state %u", p->state);
	result("ib_device_port_ethernet", p->link_layer == LINK_ETHERNET, "link_layer %u",
	       p->link_layer);
	result("ib_device_port_mtu", p->max_mtu == MTU_4096 && p->active_mtu == MTU_1024,
	       "max_mtu %u active_mtu %u", p->max_mtu, p->active_mtu);
	result("ib_device_port_tables", p->gid_tbl_len == 16 && p->pkey_tbl_len == 1,
	       "gid_tbl_len %u pkey_tbl_len %u", p->gid_tbl_len, p->pkey_tbl_len);
	result("ib_device_port_max_msg", p->max_msg_sz == q->max_msg && q->max_msg > 0,
	       "max_msg_sz %u, firmware %u", p->max_msg_sz, q->max_msg);
	result("ib_device_port_roce_caps", (p->port_cap_flags & (1u << 26)) != 0 && p->lid == 0,
	       "port_cap_flags 0x%x lid %u", p->port_cap_flags, p->lid);
}

static int open_uverbs(void)
{
	char path[300];
	int fd;

	if (!uverbs_path(path, sizeof(path))) {
		result("ib_device_uverbs_node", 0, "no uverbs device of %s in /sys/class/infiniband_verbs",
		       ibdev);
		return -1;
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	result("ib_device_uverbs_open", fd >= 0, "%s: %s", path, strerror(errno));
	return fd;
}

static void run_verbs(void)
{
	struct mnic_cmd_query_device_out q0, q1, q2;
	struct ib_uverbs_get_context_resp gc, gc2;
	struct ib_uverbs_query_device_resp dev;
	struct ib_uverbs_query_port_resp port;
	struct mnic_ioc_info info;
	long ctx_alloc0 = counter("ctx_alloc"), ctx_dealloc0 = counter("ctx_dealloc");
	long udata0 = counter("ib_refused_udata"), mmap0 = counter("ib_refused_mmap");
	uint64_t nonzero = 1;
	uint32_t pd, pd2, bad;
	int fd, ret;
	void *m;

	if (fw_query(&q0) || fw_info(&info)) {
		result("ib_device_fw_query", 0, "QUERY_DEVICE / MNIC_IOC_INFO on %s failed", mnicdev);
		return;
	}
	fd = open_uverbs();
	if (fd < 0)
		return;
	{
		/* Driver data this driver does not read: refused before any
		 * context is allocated. */
		struct ib_uverbs_get_context c = { .response = (uintptr_t)&gc };

		ret = uverbs_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &c, sizeof(c), sizeof(gc),
				 &nonzero, sizeof(nonzero));
		result("ib_device_get_context_udata_refused",
		       ret == -EINVAL && counter("ctx_alloc") == ctx_alloc0 &&
		       counter("ib_refused_udata") == udata0 + 1,
		       "GET_CONTEXT with driver data: %s, ctx_alloc %ld -> %ld",
		       ret ? strerror(-ret) : "served", ctx_alloc0, counter("ctx_alloc"));
		udata0 = counter("ib_refused_udata");
	}
	ret = get_context(fd, &gc);
	result("ib_device_get_context", ret == 0 && gc.num_comp_vectors == 1,
	       "GET_CONTEXT: %s, num_comp_vectors %u", strerror(-ret), gc.num_comp_vectors);
	if (ret)
		goto out;
	result("ib_device_ucontext_is_fw_context",
	       counter("ctx_alloc") == ctx_alloc0 + 1 && fw_query(&q1) == 0 && q1.n_ctx == q0.n_ctx + 1,
	       "ctx_alloc %ld -> %ld, firmware contexts %u -> %u", ctx_alloc0, counter("ctx_alloc"),
	       q0.n_ctx, q1.n_ctx);
	ret = get_context(fd, &gc2);
	result("ib_device_second_context_refused", ret == -EINVAL && counter("ctx_alloc") == ctx_alloc0 + 1,
	       "second GET_CONTEXT: %s", ret ? strerror(-ret) : "served");

	ret = query_device(fd, &dev);
	result("ib_device_query_device", ret == 0, "QUERY_DEVICE: %s", strerror(-ret));
	if (!ret)
		check_device(&dev, &q0, &info);
	ret = query_port(fd, 1, &port);
	result("ib_device_query_port", ret == 0, "QUERY_PORT 1: %s", strerror(-ret));
	if (!ret)
		check_port(&port, &q0);
	ret = query_port(fd, 2, &port);
	result("ib_device_port2_refused", ret == -EINVAL, "QUERY_PORT 2: %s",
	       ret ? strerror(-ret) : "served");

	ret = alloc_pd(fd, &pd, NULL, 0);
	result("ib_device_alloc_pd", ret == 0 && fw_query(&q1) == 0 && q1.n_pd == q0.n_pd + 1,
	       "ALLOC_PD: %s, firmware PDs %u -> %u", strerror(-ret), q0.n_pd, q1.n_pd);
	ret = alloc_pd(fd, &bad, &nonzero, sizeof(nonzero));
	result("ib_device_alloc_pd_udata_refused",
	       ret == -EINVAL && counter("ib_refused_udata") == udata0 + 1,
	       "ALLOC_PD with driver data: %s, ib_refused_udata %ld -> %ld",
	       ret ? strerror(-ret) : "served", udata0, counter("ib_refused_udata"));
	ret = alloc_pd(fd, &pd2, NULL, 0);
	result("ib_device_alloc_pd_second", ret == 0 && pd2 != pd, "ALLOC_PD: %s, handles %u %u",
	       strerror(-ret), pd, pd2);
	ret = dealloc_pd(fd, pd);
	result("ib_device_dealloc_pd", ret == 0 && fw_query(&q2) == 0 && q2.n_pd == q0.n_pd + 1,
	       "DEALLOC_PD: %s, firmware PDs %u", strerror(-ret), q2.n_pd);
	ret = dealloc_pd(fd, pd);
	/* The core's handle lookup refuses it before the driver sees it. */
	result("ib_device_dealloc_pd_twice_refused", ret == -ENOENT, "DEALLOC_PD again: %s",
	       ret ? strerror(-ret) : "served");
	{
		/* Without its driver request (the ring buffer) a CQ is refused. */
		struct ib_uverbs_create_cq c;
		struct ib_uverbs_create_cq_resp r;

		memset(&c, 0, sizeof(c));
		c.response = (uintptr_t)&r;
		c.cqe = 16;
		c.comp_vector = 0;
		c.comp_channel = -1;
		ret = uverbs_cmd(fd, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c), sizeof(r), NULL, 0);
		result("ib_device_create_cq_without_udata_refused", ret == -EINVAL,
		       "CREATE_CQ without driver data: %s", ret ? strerror(-ret) : "served");
	}
	/* An offset no entry was handed out for */
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096L * 4096);
	result("ib_device_mmap_refused", m == MAP_FAILED && errno == EINVAL &&
	       counter("ib_refused_mmap") == mmap0 + 1, "mmap: %s",
	       m == MAP_FAILED ? strerror(errno) : "mapped");
	if (m != MAP_FAILED)
		munmap(m, 4096);

	/* Close with pd2 still allocated: the context and the PD go. */
	close((int)gc.async_fd);
	close(fd);
	fd = -1;
	result("ib_device_close_frees_context",
	       counter("ctx_dealloc") == ctx_dealloc0 + 1 && fw_query(&q2) == 0 &&
	       q2.n_ctx == q0.n_ctx && q2.n_pd == q0.n_pd,
	       "ctx_dealloc %ld -> %ld, firmware contexts %u -> %u, PDs %u -> %u", ctx_dealloc0,
	       counter("ctx_dealloc"), q0.n_ctx, q2.n_ctx, q0.n_pd, q2.n_pd);
out:
	if (fd >= 0)
		close(fd);
}

/* ---- objects: MR, CQ, QP, the doorbell mapping (issue 16 step 2) ------- */

static int get_context_drv(int fd, struct ib_uverbs_get_context_resp *r,
			   struct mnic_ib_alloc_ucontext_resp *drv)
{
	uint8_t resp[sizeof(*r) + sizeof(*drv)];
	struct ib_uverbs_get_context c = { .response = (uintptr_t)resp };
	int ret;

	memset(resp, 0, sizeof(resp));
	ret = uverbs_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &c, sizeof(c), sizeof(resp), NULL, 0);
	memcpy(r, resp, sizeof(*r));
	memcpy(drv, resp + sizeof(*r), sizeof(*drv));
	return ret;
}

static int reg_mr(int fd, uint32_t pd, void *addr, uint64_t len, uint32_t access,
		  struct ib_uverbs_reg_mr_resp *r)
{
	struct ib_uverbs_reg_mr c = {
		.start = (uintptr_t)addr, .length = len, .hca_va = (uintptr_t)addr,
		.pd_handle = pd, .access_flags = access,
	};
	uint8_t resp[16];
	int ret;

	c.response = (uintptr_t)resp;
	memset(resp, 0, sizeof(resp));
	ret = uverbs_cmd(fd, IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), sizeof(resp), NULL, 0);
	memcpy(r, resp, sizeof(*r));
	return ret;
}

static int dereg_mr(int fd, uint32_t handle)
{
	struct ib_uverbs_dereg_mr c = { .mr_handle = handle };

	return uverbs_cmd(fd, IB_USER_VERBS_CMD_DEREG_MR, &c, sizeof(c), 0, NULL, 0);
}

/* CREATE_CQ with a driver request of req_len bytes (the struct, cut or
 * padded with zeros). */
static int create_cq(int fd, uint32_t cqe, const struct mnic_ib_create_cq_req *req, size_t req_len,
		     uint32_t *handle, struct mnic_ib_create_cq_resp *drv)
{
	struct ib_uverbs_create_cq c;
	uint8_t resp[sizeof(struct ib_uverbs_create_cq_resp) + sizeof(*drv)];
	uint8_t extra[64] = { 0 };
	struct ib_uverbs_create_cq_resp r;
	int ret;

	memset(&c, 0, sizeof(c));
	memset(resp, 0, sizeof(resp));
	c.response = (uintptr_t)resp;
	c.cqe = cqe;
	c.comp_channel = -1;
	if (req_len > sizeof(extra))
		return -E2BIG;
	memcpy(extra, req, req_len);
	ret = uverbs_cmd(fd, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c), sizeof(resp), extra, req_len);
	memcpy(&r, resp, sizeof(r));
	if (drv)
		memcpy(drv, resp + sizeof(r), sizeof(*drv));
	*handle = r.cq_handle;
	return ret;
}

static int destroy_cq(int fd, uint32_t handle)
{
	struct ib_uverbs_destroy_cq_resp r;
	struct ib_uverbs_destroy_cq c = { .response = (uintptr_t)&r, .cq_handle = handle };

	return uverbs_cmd(fd, IB_USER_VERBS_CMD_DESTROY_CQ, &c, sizeof(c), sizeof(r), NULL, 0);
}

/* CREATE_QP on one CQ, wr send and receive WRs, the driver bytes given
 * (a create_qp_req, and a restore's tail after it). */
static int create_qp_udata(int fd, uint32_t pd, uint32_t cq, uint8_t type, uint32_t wr,
			   const void *udata, size_t udata_len, uint32_t *handle,
			   struct ib_uverbs_create_qp_resp *r, struct mnic_ib_create_qp_resp *drv)
{
	struct ib_uverbs_create_qp c;
	uint8_t resp[sizeof(*r) + sizeof(*drv)];
	int ret;

	memset(&c, 0, sizeof(c));
	memset(resp, 0, sizeof(resp));
	c.response = (uintptr_t)resp;
	c.pd_handle = pd;
	c.send_cq_handle = cq;
	c.recv_cq_handle = cq;
	c.max_send_wr = wr;
	c.max_recv_wr = wr;
	c.max_send_sge = 1;
	c.max_recv_sge = 1;
	c.qp_type = type;
	ret = uverbs_cmd(fd, IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), sizeof(resp), udata,
			 udata_len);
	memcpy(r, resp, sizeof(*r));
	memcpy(drv, resp + sizeof(*r), sizeof(*drv));
	*handle = r->qp_handle;
	return ret;
}

static int create_qp(int fd, uint32_t pd, uint32_t cq, uint8_t type, uint32_t wr,
		     const struct mnic_ib_create_qp_req *req, uint32_t *handle,
		     struct ib_uverbs_create_qp_resp *r, struct mnic_ib_create_qp_resp *drv)
{
	return create_qp_udata(fd, pd, cq, type, wr, req, sizeof(*req), handle, r, drv);
}

/* ibv_access_flags / ib_access_flags values */
#define ACCESS_LOCAL_WRITE  (1u << 0)
#define ACCESS_REMOTE_WRITE (1u << 1)
#define ACCESS_REMOTE_READ  (1u << 2)
#define QPS_INIT 1
#define QP_STATE_MASK (1u << 0)
#define QP_ACCESS_MASK (1u << 3)
#define QP_PKEY_MASK (1u << 4)
#define QP_PORT_MASK (1u << 5)
#define QP_QKEY_MASK (1u << 6)
#define QPT_RC 2
#define QPT_UD 4

static int modify_qp(int fd, uint32_t qp, uint32_t mask, uint8_t state, uint8_t port)
{
	struct ib_uverbs_modify_qp c;

	memset(&c, 0, sizeof(c));
	c.qp_handle = qp;
	c.attr_mask = mask;
	c.qp_state = state;
	c.port_num = port;
	c.qp_access_flags = ACCESS_REMOTE_WRITE | ACCESS_LOCAL_WRITE;
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_MODIFY_QP, &c, sizeof(c), 0, NULL, 0);
}

static int query_qp(int fd, uint32_t qp, struct ib_uverbs_query_qp_resp *r)
{
	struct ib_uverbs_query_qp c = { .response = (uintptr_t)r, .qp_handle = qp,
					.attr_mask = 0x1fffff };

	memset(r, 0, sizeof(*r));
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_QUERY_QP, &c, sizeof(c), sizeof(*r), NULL, 0);
}

static int destroy_qp(int fd, uint32_t handle)
{
	struct ib_uverbs_destroy_qp_resp r;
	struct ib_uverbs_destroy_qp c = { .response = (uintptr_t)&r, .qp_handle = handle };

	return uverbs_cmd(fd, IB_USER_VERBS_CMD_DESTROY_QP, &c, sizeof(c), sizeof(r), NULL, 0);
}

static void *page_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* mnic-ib-check objects: the objects through the raw write ABI with the
 * driver-private udata of mnic/ib_abi.h, the hostile variants, and a
 * close with everything left standing. */
static void run_objects(void)
{
	struct mnic_cmd_query_device_out q0, q1, qc;
	struct ib_uverbs_get_context_resp gc;
	struct mnic_ib_alloc_ucontext_resp uc;
	struct ib_uverbs_reg_mr_resp mr, mr2;
	struct mnic_ib_create_cq_req cqr;
	struct mnic_ib_create_cq_resp cqd;
	struct mnic_ib_create_qp_req qpr;
	struct mnic_ib_create_qp_resp qpd;
	struct ib_uverbs_create_qp_resp qpresp;
	struct ib_uverbs_query_qp_resp qq;
	long udata0, mmap0, pinned0 = counter("mem_pages_pinned"), unpinned0 = counter("mem_pages_unpinned");
	long ctx_dealloc0 = counter("ctx_dealloc");
	uint32_t pd, cq, cq2, cq3, qp, qp2, bad;
	size_t cq_len = 2 * 4096, qp_len = 4 * 4096;
	uint8_t *mrbuf, *cqbuf, *cqbuf2, *qpbuf, *hole;
	volatile uint32_t *db;
	int fd, ret;
	void *m;

	if (fw_query(&q0)) {
		result("ib_objects_fw_query", 0, "QUERY_DEVICE on %s failed", mnicdev);
		return;
	}
	fd = open_uverbs();
	if (fd < 0)
		return;
	ret = get_context_drv(fd, &gc, &uc);
	result("ib_objects_get_context_resp",
	       ret == 0 && uc.wqe_size == MNIC_WQE_SIZE && uc.cqe_size == MNIC_CQE_SIZE &&
	       uc.db_mmap_len == 4096 && uc.max_inline == MNIC_MAX_INLINE && uc.max_qp_wr == q0.max_qp_wr &&
	       uc.max_cqe == q0.max_cqe && uc.ctx != 0,
	       "GET_CONTEXT: %s, wqe %u cqe %u db_len %u max_qp_wr %u max_cqe %u ctx %u",
	       strerror(-ret), uc.wqe_size, uc.cqe_size, uc.db_mmap_len, uc.max_qp_wr, uc.max_cqe,
	       uc.ctx);
	if (ret)
		goto out;
	/* The context's event queue (mnic_ib_eq.c): one MTT of the module's
	 * and one EQ in the firmware from GET_CONTEXT on. */
	ret = fw_query(&qc);
	result("ib_objects_context_eq", ret == 0 && qc.n_mtt == q0.n_mtt + 1,
	       "firmware MTTs %u -> %u after GET_CONTEXT (the EQ's)", q0.n_mtt, qc.n_mtt);

	/* The doorbell page: shared, exactly one page at its offset. */
	mmap0 = counter("ib_refused_mmap");
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)uc.db_mmap_offset);
	result("ib_objects_mmap_doorbell", m != MAP_FAILED, "mmap offset 0x%llx: %s",
	       (unsigned long long)uc.db_mmap_offset, m == MAP_FAILED ? strerror(errno) : "ok");
	if (m != MAP_FAILED) {
		uint32_t before;

		db = m;
		before = *db;
		*db = before + 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		result("ib_objects_doorbell_writable", *db == before + 1, "db_seq %u -> %u", before,
		       *db);
		munmap(m, 4096);
	}
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)uc.db_mmap_offset);
	result("ib_objects_mmap_two_pages_refused", m == MAP_FAILED && errno == EINVAL,
	       "mmap 2 pages: %s", m == MAP_FAILED ? strerror(errno) : "mapped");
	if (m != MAP_FAILED)
		munmap(m, 8192);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)uc.db_mmap_offset);
	result("ib_objects_mmap_private_refused", m == MAP_FAILED && errno == EINVAL,
	       "mmap MAP_PRIVATE: %s", m == MAP_FAILED ? strerror(errno) : "mapped");
	if (m != MAP_FAILED)
		munmap(m, 4096);
	result("ib_objects_mmap_refusals_counted", counter("ib_refused_mmap") >= mmap0 + 2,
	       "ib_refused_mmap %ld -> %ld", mmap0, counter("ib_refused_mmap"));

	/* The Doorbell register page (an ivshmem-doorbell whose BAR0 has a
	 * page of its own: this VM boots with pci=resource_alignment): the
	 * NIC's vector 0 at Doorbell (0x0c), one page, shared, uncached; a
	 * ring through it is what the provider does after db_seq. */
	result("ib_objects_uar_given",
	       (uc.flags & MNIC_IB_CTX_F_DB_RING) && uc.uar_offset == 0x0c &&
	       (uc.uar_ring & 0xffffu) == 0 && uc.uar_mmap_offset != uc.db_mmap_offset,
	       "flags 0x%x, register at 0x%x, ring 0x%x, offset 0x%llx", uc.flags, uc.uar_offset,
	       uc.uar_ring, (unsigned long long)uc.uar_mmap_offset);
	if (uc.flags & MNIC_IB_CTX_F_DB_RING) {
		m = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, fd, (off_t)uc.uar_mmap_offset);
		result("ib_objects_mmap_uar", m != MAP_FAILED, "mmap offset 0x%llx: %s",
		       (unsigned long long)uc.uar_mmap_offset, m == MAP_FAILED ? strerror(errno) : "ok");
		if (m != MAP_FAILED) {
			*(volatile uint32_t *)((uint8_t *)m + uc.uar_offset) = uc.uar_ring;
			munmap(m, 4096);
		}
		m = mmap(NULL, 4096, PROT_WRITE, MAP_PRIVATE, fd, (off_t)uc.uar_mmap_offset);
		result("ib_objects_mmap_uar_private_refused", m == MAP_FAILED && errno == EINVAL,
		       "mmap MAP_PRIVATE: %s", m == MAP_FAILED ? strerror(errno) : "mapped");
		if (m != MAP_FAILED)
			munmap(m, 4096);
	}

	ret = alloc_pd(fd, &pd, NULL, 0);
	result("ib_objects_alloc_pd", ret == 0, "ALLOC_PD: %s", strerror(-ret));

	/* MRs: a heap buffer (any alignment), then memory that is not mapped. */
	mrbuf = malloc(65536 + 100);
	memset(mrbuf, 0x5a, 65536 + 100);
	ret = reg_mr(fd, pd, mrbuf + 100, 65536, ACCESS_LOCAL_WRITE |
		     ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ, &mr);
	result("ib_objects_reg_mr",
	       ret == 0 && mr.lkey != 0 && fw_query(&q1) == 0 && q1.n_mr == q0.n_mr + 1 &&
	       q1.n_mtt == qc.n_mtt + 1,
	       "REG_MR: %s, lkey 0x%x rkey 0x%x, firmware MRs %u -> %u, MTTs %u -> %u",
	       strerror(-ret), mr.lkey, mr.rkey, q0.n_mr, q1.n_mr, q0.n_mtt, q1.n_mtt);
	hole = page_buf(3 * 4096);
	munmap(hole + 4096, 4096);
	ret = reg_mr(fd, pd, hole, 3 * 4096, ACCESS_LOCAL_WRITE, &mr2);
	result("ib_objects_reg_mr_unmapped_refused", ret == -EFAULT && fw_query(&q1) == 0 &&
	       q1.n_mr == q0.n_mr + 1, "REG_MR over a hole: %s", ret ? strerror(-ret) : "served");
	ret = reg_mr(fd, pd, mrbuf, 4096, ACCESS_LOCAL_WRITE | (1u << 5) /* ZERO_BASED */,
		     &mr2);
	result("ib_objects_reg_mr_flags_refused", ret != 0, "REG_MR ZERO_BASED: %s",
	       ret ? strerror(-ret) : "served");

	/* CQ: the ring and record in a page-aligned buffer; hostile requests. */
	cqbuf = page_buf(cq_len);
	cqr = (struct mnic_ib_create_cq_req){ .buf_addr = (uintptr_t)cqbuf, .buf_len = cq_len,
					      .entries = 64, .dbrec_off = 64 * MNIC_CQE_SIZE };
	udata0 = counter("ib_refused_udata");
	ret = create_cq(fd, 60, &cqr, sizeof(cqr) - 4, &bad, NULL);
	result("ib_objects_cq_short_udata_refused", ret == -EINVAL, "CREATE_CQ req cut: %s",
	       ret ? strerror(-ret) : "served");
	{
		uint8_t longer[sizeof(cqr) + 8] = { 0 };

		memcpy(longer, &cqr, sizeof(cqr));
		longer[sizeof(cqr) + 3] = 1;
		ret = create_cq(fd, 60, (const void *)longer, sizeof(longer), &bad, NULL);
		result("ib_objects_cq_long_udata_refused", ret == -EINVAL,
		       "CREATE_CQ req with a non-zero tail: %s", ret ? strerror(-ret) : "served");
	}
	cqr.entries = 48;
	ret = create_cq(fd, 40, &cqr, sizeof(cqr), &bad, NULL);
	result("ib_objects_cq_entries_not_pow2_refused", ret == -EINVAL, "entries 48: %s",
	       ret ? strerror(-ret) : "served");
	cqr.entries = 64;
	ret = create_cq(fd, 100, &cqr, sizeof(cqr), &bad, NULL);
	result("ib_objects_cq_too_small_refused", ret == -EINVAL, "64 entries for cqe 100: %s",
	       ret ? strerror(-ret) : "served");
	cqr.dbrec_off = 64;
	ret = create_cq(fd, 60, &cqr, sizeof(cqr), &bad, NULL);
	result("ib_objects_cq_dbrec_in_ring_refused", ret == -EINVAL, "dbrec in the ring: %s",
	       ret ? strerror(-ret) : "served");
	cqr.dbrec_off = cq_len - 4;
	ret = create_cq(fd, 60, &cqr, sizeof(cqr), &bad, NULL);
	result("ib_objects_cq_dbrec_past_end_refused", ret == -EINVAL, "dbrec past the end: %s",
	       ret ? strerror(-ret) : "served");
	cqr.dbrec_off = 64 * MNIC_CQE_SIZE;
	cqr.buf_addr += 8;
	ret = create_cq(fd, 60, &cqr, sizeof(cqr), &bad, NULL);
	result("ib_objects_cq_unaligned_refused", ret == -EINVAL, "buffer not page aligned: %s",
	       ret ? strerror(-ret) : "served");
	cqr.buf_addr = (uintptr_t)hole;
	cqr.buf_len = 3 * 4096;
	ret = create_cq(fd, 60, &cqr, sizeof(cqr), &bad, NULL);
	result("ib_objects_cq_unmapped_refused", ret == -EFAULT, "ring over a hole: %s",
	       ret ? strerror(-ret) : "served");
	result("ib_objects_cq_refusals_counted", counter("ib_refused_udata") >= udata0 + 6,
	       "ib_refused_udata %ld -> %ld", udata0, counter("ib_refused_udata"));
	cqr.buf_addr = (uintptr_t)cqbuf;
	cqr.buf_len = cq_len;
	ret = create_cq(fd, 60, &cqr, sizeof(cqr), &cq, &cqd);
	result("ib_objects_create_cq",
	       ret == 0 && cqd.entries == 64 && fw_query(&q1) == 0 && q1.n_cq == q0.n_cq + 1,
	       "CREATE_CQ: %s, entries %u, firmware CQs %u -> %u", strerror(-ret), cqd.entries,
	       q0.n_cq, q1.n_cq);
	cqbuf2 = page_buf(cq_len);
	cqr.buf_addr = (uintptr_t)cqbuf2;
	ret = create_cq(fd, 60, &cqr, sizeof(cqr), &cq2, NULL);
	result("ib_objects_create_cq_second", ret == 0 && cq2 != cq, "second CREATE_CQ: %s",
	       strerror(-ret));
	{
		struct ib_uverbs_resize_cq c = { .cq_handle = cq, .cqe = 128 };
		struct ib_uverbs_resize_cq_resp r;

		c.response = (uintptr_t)&r;
		ret = uverbs_cmd(fd, IB_USER_VERBS_CMD_RESIZE_CQ, &c, sizeof(c), sizeof(r), NULL, 0);
		/* without the new buffer (driver udata): refused, counted */
		result("ib_objects_resize_cq_no_udata_refused", ret == -EINVAL, "RESIZE_CQ: %s",
		       ret ? strerror(-ret) : "served");
	}

	/* QP: RC on both CQs' first; SQ, RQ and the two records in one buffer. */
	qpbuf = page_buf(qp_len);
	qpr = (struct mnic_ib_create_qp_req){
		.buf_addr = (uintptr_t)qpbuf, .buf_len = qp_len, .sq_entries = 8, .rq_entries = 8,
		.rq_off = 8 * MNIC_WQE_SIZE, .sq_dbrec_off = 16 * MNIC_WQE_SIZE,
		.rq_dbrec_off = 16 * MNIC_WQE_SIZE + 8,
	};
	ret = create_qp(fd, pd, cq, QPT_UD, 8, &qpr, &bad, &qpresp, &qpd);
	result("ib_objects_qp_ud_refused", ret == -EOPNOTSUPP, "CREATE_QP UD: %s",
	       ret ? strerror(-ret) : "served");
	qpr.rq_off = 4 * MNIC_WQE_SIZE;
	ret = create_qp(fd, pd, cq, QPT_RC, 8, &qpr, &bad, &qpresp, &qpd);
	result("ib_objects_qp_rings_overlap_refused", ret == -EINVAL, "RQ inside the SQ: %s",
	       ret ? strerror(-ret) : "served");
	qpr.rq_off = 8 * MNIC_WQE_SIZE;
	qpr.rq_dbrec_off = qpr.sq_dbrec_off;
	ret = create_qp(fd, pd, cq, QPT_RC, 8, &qpr, &bad, &qpresp, &qpd);
	result("ib_objects_qp_same_dbrec_refused", ret == -EINVAL, "one record for both: %s",
	       ret ? strerror(-ret) : "served");
	qpr.rq_dbrec_off = qpr.sq_dbrec_off + 8;
	ret = create_qp(fd, pd, cq, QPT_RC, 16, &qpr, &bad, &qpresp, &qpd);
	result("ib_objects_qp_ring_too_small_refused", ret == -EINVAL, "8 entries for 16 WRs: %s",
	       ret ? strerror(-ret) : "served");
	ret = create_qp(fd, pd, cq, QPT_RC, 8, &qpr, &qp, &qpresp, &qpd);
	result("ib_objects_create_qp",
	       ret == 0 && qpresp.qpn == qpd.qpn && qpd.qpn != 0 && qpd.sq_entries == 8 &&
	       qpresp.max_send_wr == 8 && qpresp.max_inline_data == MNIC_MAX_INLINE && fw_query(&q1) == 0 &&
	       q1.n_qp == q0.n_qp + 1,
	       "CREATE_QP: %s, qpn %u/%u, sq %u, max_send_wr %u, firmware QPs %u -> %u",
	       strerror(-ret), qpresp.qpn, qpd.qpn, qpd.sq_entries, qpresp.max_send_wr, q0.n_qp,
	       q1.n_qp);
	ret = destroy_cq(fd, cq);
	result("ib_objects_destroy_cq_in_use_refused", ret == -EBUSY, "DESTROY_CQ of a QP's CQ: %s",
	       ret ? strerror(-ret) : "served");
	ret = modify_qp(fd, qp, QP_STATE_MASK | QP_PKEY_MASK | QP_PORT_MASK | QP_ACCESS_MASK,
			QPS_INIT, 1);
	result("ib_objects_modify_qp_init", ret == 0, "MODIFY_QP to INIT: %s", strerror(-ret));
	ret = query_qp(fd, qp, &qq);
	result("ib_objects_query_qp", ret == 0 && qq.qp_state == QPS_INIT && qq.max_send_wr == 8 &&
	       qq.max_recv_wr == 8 && qq.port_num == 1,
	       "QUERY_QP: %s, state %u, wr %u/%u, port %u", strerror(-ret), qq.qp_state,
	       qq.max_send_wr, qq.max_recv_wr, qq.port_num);
	ret = modify_qp(fd, qp, QP_STATE_MASK | QP_QKEY_MASK, QPS_INIT, 1);
	result("ib_objects_modify_qp_qkey_refused", ret != 0, "MODIFY_QP with a Q_Key (UD): %s",
	       ret ? strerror(-ret) : "served");
	ret = create_qp(fd, pd, cq2, QPT_RC, 8, &qpr, &qp2, &qpresp, &qpd);
	result("ib_objects_create_qp_same_buffer", ret == 0, "a second QP on the same buffer: %s",
	       ret ? strerror(-ret) : "served");
	if (!ret) {
		ret = destroy_qp(fd, qp2);
		result("ib_objects_destroy_qp", ret == 0 && fw_query(&q1) == 0 && q1.n_qp == q0.n_qp + 1,
		       "DESTROY_QP: %s, firmware QPs %u", strerror(-ret), q1.n_qp);
	}
	ret = destroy_cq(fd, cq2);
	result("ib_objects_destroy_cq", ret == 0 && fw_query(&q1) == 0 && q1.n_cq == q0.n_cq + 1,
	       "DESTROY_CQ: %s, firmware CQs %u", strerror(-ret), q1.n_cq);
	cqr.buf_addr = (uintptr_t)cqbuf2;
	ret = create_cq(fd, 60, &cqr, sizeof(cqr), &cq3, NULL);
	ret = ret ? ret : dereg_mr(fd, mr.mr_handle);
	result("ib_objects_dereg_mr", ret == 0 && fw_query(&q1) == 0 && q1.n_mr == q0.n_mr,
	       "DEREG_MR: %s, firmware MRs %u", strerror(-ret), q1.n_mr);

	/* Close with a PD, two CQs and an INIT QP standing: the core
	 * destroys them (QP first), the context goes, every page pinned is
	 * unpinned. */
	close((int)gc.async_fd);
	close(fd);
	fd = -1;
	result("ib_objects_close_frees_all",
	       counter("ctx_dealloc") == ctx_dealloc0 + 1 && fw_query(&q1) == 0 &&
	       q1.n_ctx == q0.n_ctx && q1.n_qp == q0.n_qp && q1.n_cq == q0.n_cq &&
	       q1.n_mr == q0.n_mr && q1.n_pd == q0.n_pd && q1.n_mtt == q0.n_mtt,
	       "contexts %u -> %u, QPs %u -> %u, CQs %u -> %u, MRs %u -> %u, PDs %u -> %u, MTTs %u -> %u",
	       q0.n_ctx, q1.n_ctx, q0.n_qp, q1.n_qp, q0.n_cq, q1.n_cq, q0.n_mr, q1.n_mr, q0.n_pd,
	       q1.n_pd, q0.n_mtt, q1.n_mtt);
	result("ib_objects_pages_unpinned",
	       counter("mem_pages_pinned") - pinned0 == counter("mem_pages_unpinned") - unpinned0 &&
	       counter("mem_pages_pinned") > pinned0 && counter("ib_pages_orphaned") == 0 &&
	       counter("ib_pages_leaked") == 0,
	       "pinned +%ld, unpinned +%ld, orphaned %ld, leaked %ld",
	       counter("mem_pages_pinned") - pinned0, counter("mem_pages_unpinned") - unpinned0,
	       counter("ib_pages_orphaned"), counter("ib_pages_leaked"));
	free(mrbuf);
out:
	if (fd >= 0)
		close(fd);
}

/* ---- mig --------------------------------------------------------------- */

static int mig(int fd, uint16_t method, struct mnic_ib_mig_req *req, struct mnic_ib_mig_resp *resp)
{
	req->version = MNIC_IB_MIG_VERSION;
	return mnic_ib_method(fd, method, req, resp);
}

static struct mnic_ib_create_tail tail_of(uint32_t handle)
{
	return (struct mnic_ib_create_tail){ .magic = MNIC_IB_TAIL_MAGIC, .handle = handle,
					     .comp_fd = -1 };
}

static int reg_mr_tail(int fd, uint32_t pd, void *addr, uint64_t len, uint32_t access,
		       uint32_t key, struct ib_uverbs_reg_mr_resp *r)
{
	struct ib_uverbs_reg_mr c = {
		.start = (uintptr_t)addr, .length = len, .hca_va = (uintptr_t)addr,
		.pd_handle = pd, .access_flags = access,
	};
	struct mnic_ib_create_tail t = tail_of(key);
	uint8_t resp[16];
	int ret;

	c.response = (uintptr_t)resp;
	memset(resp, 0, sizeof(resp));
	ret = uverbs_cmd(fd, IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), sizeof(resp), &t, sizeof(t));
	memcpy(r, resp, sizeof(*r));
	return ret;
}

static int create_cq_tail(int fd, const struct mnic_ib_create_cq_req *req, uint32_t h, uint32_t *handle)
{
	struct {
		struct mnic_ib_create_cq_req r;
		struct mnic_ib_create_tail t;
	} d = { .r = *req, .t = tail_of(h) };

	return create_cq(fd, req->entries, &d.r, sizeof(d), handle, NULL);
}

static int create_qp_tail(int fd, uint32_t pd, uint32_t cq, const struct mnic_ib_create_qp_req *req,
			  uint32_t qpn, uint32_t *handle, uint32_t *got_qpn)
{
	struct {
		struct mnic_ib_create_qp_req r;
		struct mnic_ib_create_tail t;
	} d = { .r = *req, .t = tail_of(qpn) };
	struct ib_uverbs_create_qp_resp r;
	struct mnic_ib_create_qp_resp drv;
	int ret;

	/* the SQ and RQ the same size here (create_qp_udata asks wr of each) */
	ret = create_qp_udata(fd, pd, cq, QPT_RC, req->sq_entries, &d, sizeof(d), handle, &r, &drv);
	*got_qpn = r.qpn;
	return ret;
}

static const struct mnic_ib_mig_obj *table_find(const struct mnic_ib_mig_obj *t, uint32_t n,
						 uint32_t kind)
{
	for (uint32_t i = 0; i < n; i++)
		if (t[i].kind == kind)
			return &t[i];
	return NULL;
}

/* mnic-ib-check mig: a context dumped, its image restored into another. */
static void run_mig(void)
{
	static uint8_t image[1 << 20];
	static struct mnic_ib_mig_obj table[64];
	struct ib_uverbs_get_context_resp gc;
	struct mnic_ib_alloc_ucontext_resp uc;
	struct ib_uverbs_reg_mr_resp mr, mr2;
	struct mnic_ib_create_cq_req cqr;
	struct mnic_ib_create_cq_resp cqd;
	struct mnic_ib_create_qp_req qpr;
	struct mnic_ib_create_qp_resp qpd;
	struct ib_uverbs_create_qp_resp qpresp;
	struct mnic_ib_mig_req req;
	struct mnic_ib_mig_resp resp;
	const struct mnic_ib_mig_obj *o;
	long pinned0 = counter("mem_pages_pinned"), unpinned0 = counter("mem_pages_unpinned");
	long refused0 = counter("ib_mig_refused"), abort0 = counter("ib_mig_abort");
	long resume0 = counter("ib_mig_resume");
	size_t cq_len = 2 * 4096, qp_len = 4 * 4096, mr_len = 3 * 4096;
	uint32_t pd, pd_hole, cq, qp, h, h2, qpn, fill[8], n, img_len;
	uint8_t *mrbuf = page_buf(mr_len), *cqbuf = page_buf(cq_len), *qpbuf = page_buf(qp_len);
	int fd, fd2, ret;

	fd = open_uverbs();
	if (fd < 0 || !mrbuf || !cqbuf || !qpbuf)
		return;
	ret = get_context_drv(fd, &gc, &uc);
	result("ib_mig_context", ret == 0, "GET_CONTEXT: %s", strerror(-ret));
	/* a hole in the handle numbering: PD 0 freed, the objects after it */
	ret = alloc_pd(fd, &pd_hole, NULL, 0) || alloc_pd(fd, &pd, NULL, 0) || dealloc_pd(fd, pd_hole);
	ret = ret || reg_mr(fd, pd, mrbuf, mr_len, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE, &mr);
	cqr = (struct mnic_ib_create_cq_req){ .buf_addr = (uintptr_t)cqbuf, .buf_len = cq_len,
					      .entries = 64, .dbrec_off = 64 * MNIC_CQE_SIZE };
	ret = ret || create_cq(fd, 64, &cqr, sizeof(cqr), &cq, &cqd);
	qpr = (struct mnic_ib_create_qp_req){
		.buf_addr = (uintptr_t)qpbuf, .buf_len = qp_len, .sq_entries = 8, .rq_entries = 8,
		.rq_off = 8 * MNIC_WQE_SIZE, .sq_dbrec_off = 16 * MNIC_WQE_SIZE,
		.rq_dbrec_off = 16 * MNIC_WQE_SIZE + 8,
	};
	ret = ret || create_qp(fd, pd, cq, QPT_RC, 8, &qpr, &qp, &qpresp, &qpd);
	result("ib_mig_objects_made", ret == 0, "PD/MR/CQ/QP: %s", ret < 0 ? strerror(-ret) : "failed");
	if (ret)
		goto out;

	/* DUMP that does not fit: undone, the sizes told */
	memset(&req, 0, sizeof(req));
	req.image_addr = (uintptr_t)image;
	req.image_len = 16;
	req.table_addr = (uintptr_t)table;
	req.table_len = sizeof(table);
	ret = mig(fd, MNIC_IB_METHOD_DUMP, &req, &resp);
	result("ib_mig_dump_no_room", ret == -ENOSPC && resp.image_len > 16,
	       "DUMP into 16 bytes: %s, image_len %u", strerror(-ret), resp.image_len);
	req.table_len = sizeof(table[0]);
	ret = mig(fd, MNIC_IB_METHOD_DUMP, &req, &resp);
	result("ib_mig_dump_table_no_room", ret == -ENOSPC && resp.n_objects == 4,
	       "DUMP with room for 1 object: %s, n_objects %u", strerror(-ret), resp.n_objects);
	/* version check */
	memset(&req, 0, sizeof(req));
	req.version = 99;
	ret = mnic_ib_method(fd, MNIC_IB_METHOD_DUMP, &req, &resp);
	result("ib_mig_bad_version", ret == -EINVAL, "version 99: %s", strerror(-ret));
	/* the dump, then ABORT, then the dump again */
	memset(&req, 0, sizeof(req));
	req.image_addr = (uintptr_t)image;
	req.image_len = sizeof(image);
	req.table_addr = (uintptr_t)table;
	req.table_len = sizeof(table);
	ret = mig(fd, MNIC_IB_METHOD_DUMP, &req, &resp);
	n = resp.n_objects;
	img_len = resp.image_len;
	result("ib_mig_dump", ret == 0 && n == 4 && img_len > 40 && !memcmp(image, "MNICDUMP", 8) &&
	       resp.objects[0] == 1 && resp.objects[1] == 1 && resp.objects[2] == 1 &&
	       resp.objects[4] == 1 && resp.db_mmap_offset == uc.db_mmap_offset,
	       "DUMP: %s, %u objects, image %u bytes, PD/MR/CQ/QP %u/%u/%u/%u", strerror(-ret), n, img_len,
	       resp.objects[0], resp.objects[1], resp.objects[2], resp.objects[4]);
	if (ret)
		goto out;
	o = table_find(table, n, MNIC_IB_OBJ_PD);
	result("ib_mig_table_pd", o && o->handle == pd, "PD handle %u (made %u)", o ? o->handle : 0, pd);
	o = table_find(table, n, MNIC_IB_OBJ_MR);
	result("ib_mig_table_mr", o && o->fw == mr.lkey && o->addr == (uintptr_t)mrbuf && o->len == mr_len &&
	       o->pd == pd, "MR key %#x (made %#x), addr ok %d, pd %u", o ? o->fw : 0, mr.lkey,
	       o && o->addr == (uintptr_t)mrbuf, o ? o->pd : 0);
	o = table_find(table, n, MNIC_IB_OBJ_CQ);
	result("ib_mig_table_cq", o && o->handle == cq && o->fw == cqd.cq_handle && o->entries == 64 &&
	       o->addr == cqr.buf_addr && !o->has_channel && o->comp_fd == -1,
	       "CQ handle %u fw %#x", o ? o->handle : 0, o ? o->fw : 0);
	o = table_find(table, n, MNIC_IB_OBJ_QP);
	result("ib_mig_table_qp", o && o->handle == qp && o->fw == qpresp.qpn && o->send_cq == cq &&
	       o->entries == 8 && o->rq_off == qpr.rq_off, "QP handle %u QPN %#x (made %#x)",
	       o ? o->handle : 0, o ? o->fw : 0, qpresp.qpn);
	memset(&req, 0, sizeof(req));
	ret = mig(fd, MNIC_IB_METHOD_ABORT, &req, NULL);
	result("ib_mig_abort", ret == 0 && counter("ib_mig_abort") == abort0 + 1, "ABORT: %s",
	       strerror(-ret));

	/* RESTORE: hostile images, on a second file */
	fd2 = open_uverbs();
	if (fd2 < 0)
		goto out;
	ret = get_context_drv(fd2, &gc, &uc);
	memset(&req, 0, sizeof(req));
	req.image_addr = (uintptr_t)image;
	req.image_len = img_len - 1;
	ret = mig(fd2, MNIC_IB_METHOD_RESTORE, &req, NULL);
	result("ib_mig_restore_truncated_refused", ret == -EINVAL, "image cut by a byte: %s", strerror(-ret));
	image[0] ^= 1;
	req.image_len = img_len;
	ret = mig(fd2, MNIC_IB_METHOD_RESTORE, &req, NULL);
	result("ib_mig_restore_bad_magic_refused", ret == -EINVAL, "bad magic: %s", strerror(-ret));
	image[0] ^= 1;
	image[img_len - 1] ^= 0x40;   /* the CRC no longer matches: the firmware's check */
	ret = mig(fd2, MNIC_IB_METHOD_RESTORE, &req, NULL);
	result("ib_mig_restore_bad_crc_refused", ret != 0, "a flipped bit: %s", ret ? strerror(-ret) : "restored");
	image[img_len - 1] ^= 0x40;
	/* the source's objects still hold their QPN and keys on this NIC:
	 * close the source, then the image restores */
	close(fd);
	fd = -1;
	ret = alloc_pd(fd2, &h, NULL, 0);
	if (!ret)
		ret = mig(fd2, MNIC_IB_METHOD_RESTORE, &req, NULL);
	result("ib_mig_restore_not_fresh_refused", ret == -EBUSY, "into a context with a PD: %s",
	       strerror(-ret));
	close(fd2);
	fd2 = open_uverbs();
	if (fd2 < 0)
		goto out;
	ret = get_context_drv(fd2, &gc, &uc);
	if (!ret)
		ret = mig(fd2, MNIC_IB_METHOD_RESTORE, &req, NULL);
	result("ib_mig_restore", ret == 0, "RESTORE of the image: %s", strerror(-ret));
	if (ret)
		goto out2;
	/* fillers up to the largest handle, then each object at its own */
	for (h = 0; h <= qp && h < 8; h++) {
		struct mnic_ib_create_tail t = tail_of(MNIC_IB_RESTORE_FILLER);

		ret = alloc_pd(fd2, &fill[h], &t, sizeof(t));
		if (ret || fill[h] != h)
			break;
	}
	result("ib_mig_fillers", h == qp + 1, "filler PDs 0..%u: stopped at %u (%s)", qp, h, strerror(-ret));
	{
		struct mnic_ib_create_tail bad = tail_of(0x7777);

		ret = dealloc_pd(fd2, pd);
		if (!ret)
			ret = alloc_pd(fd2, &h, &bad, sizeof(bad));
		result("ib_mig_shell_pd_wrong_refused", ret == -EINVAL, "a PD the image lacks: %s",
		       strerror(-ret));
	}
	ret = mig(fd2, MNIC_IB_METHOD_RESUME, &req, NULL);
	result("ib_mig_resume_incomplete_refused", ret == -EINVAL, "RESUME with no shell: %s", strerror(-ret));
	o = table_find(table, n, MNIC_IB_OBJ_PD);
	{
		struct mnic_ib_create_tail t = tail_of(o->fw);

		ret = alloc_pd(fd2, &h, &t, sizeof(t));
		result("ib_mig_shell_pd", ret == 0 && h == pd, "PD at handle %u: %s (got %u)", pd,
		       strerror(-ret), h);
		ret = alloc_pd(fd2, &h2, &t, sizeof(t));
		result("ib_mig_shell_pd_twice_refused", ret == -EINVAL, "the same PD again: %s", strerror(-ret));
		if (!ret)
			dealloc_pd(fd2, h2);
	}
	o = table_find(table, n, MNIC_IB_OBJ_MR);
	dealloc_pd(fd2, fill[o->handle]);
	ret = reg_mr_tail(fd2, pd, mrbuf, mr_len - 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE, o->fw, &mr2);
	result("ib_mig_shell_mr_wrong_len_refused", ret == -EINVAL, "MR shorter than its image: %s",
	       strerror(-ret));
	ret = reg_mr_tail(fd2, pd, mrbuf, mr_len, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE, o->fw, &mr2);
	result("ib_mig_shell_mr", ret == 0 && mr2.mr_handle == o->handle && mr2.lkey == mr.lkey &&
	       mr2.rkey == mr.rkey, "MR: %s, handle %u key %#x (image %#x)", strerror(-ret), mr2.mr_handle,
	       mr2.lkey, mr.lkey);
	o = table_find(table, n, MNIC_IB_OBJ_CQ);
	dealloc_pd(fd2, fill[o->handle]);
	ret = create_cq_tail(fd2, &cqr, o->fw, &h);
	result("ib_mig_shell_cq", ret == 0 && h == cq, "CQ: %s, handle %u", strerror(-ret), h);
	o = table_find(table, n, MNIC_IB_OBJ_QP);
	dealloc_pd(fd2, fill[o->handle]);
	qpr.sq_entries = 16;
	ret = create_qp_tail(fd2, pd, cq, &qpr, o->fw, &h, &qpn);
	result("ib_mig_shell_qp_wrong_ring_refused", ret == -EINVAL, "QP with another SQ size: %s",
	       strerror(-ret));
	qpr.sq_entries = 8;
	ret = create_qp_tail(fd2, pd, cq, &qpr, o->fw, &h, &qpn);
	result("ib_mig_shell_qp", ret == 0 && h == qp && qpn == qpresp.qpn, "QP: %s, handle %u QPN %#x",
	       strerror(-ret), h, qpn);
	result("ib_mig_refused_counted", counter("ib_mig_refused") >= refused0 + 3,
	       "ib_mig_refused %ld -> %ld", refused0, counter("ib_mig_refused"));
	ret = mig(fd2, MNIC_IB_METHOD_RESUME, &req, &resp);
	result("ib_mig_resume", ret == 0 && resp.pages == (mr_len + cq_len + qp_len) / 4096 &&
	       counter("ib_mig_resume") == resume0 + 1, "RESUME: %s, %u pages pinned", strerror(-ret),
	       resp.pages);
	ret = mig(fd2, MNIC_IB_METHOD_RESUME, &req, NULL);
	result("ib_mig_resume_twice_refused", ret == -EINVAL, "RESUME again: %s", strerror(-ret));
	/* the restored context dumps again (a second migration) */
	memset(&req, 0, sizeof(req));
	req.image_addr = (uintptr_t)image;
	req.image_len = sizeof(image);
	req.table_addr = (uintptr_t)table;
	req.table_len = sizeof(table);
	ret = mig(fd2, MNIC_IB_METHOD_DUMP, &req, &resp);
	result("ib_mig_restored_dumps", ret == 0 && resp.n_objects == 4, "DUMP of the restored: %s, %u objects",
	       strerror(-ret), resp.n_objects);
out2:
	close(fd2);
out:
	if (fd >= 0)
		close(fd);
	usleep(200000);
	result("ib_mig_pages_unpinned", counter("mem_pages_unpinned") - unpinned0 ==
	       counter("mem_pages_pinned") - pinned0,
	       "pinned +%ld, unpinned +%ld after both closes", counter("mem_pages_pinned") - pinned0,
	       counter("mem_pages_unpinned") - unpinned0);
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

/* PCI unbind under a file with a context and a PD: unregistering
 * disassociates the file (the core destroys its objects through the
 * driver while the command queue still runs), later commands fail, and
 * after the rebind the firmware holds no context. */
static void run_unbind(void)
{
	struct ib_uverbs_get_context_resp gc;
	struct ib_uverbs_query_port_resp port;
	struct mnic_cmd_query_device_out q0, q1;
	char link[256], path[300], bdf[256];
	const char *base;
	ssize_t n;
	uint32_t pd;
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", ibdev);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0 || fw_query(&q0)) {
		result("ib_device_unbind_setup", 0, "no %s or QUERY_DEVICE failed", path);
		return;
	}
	link[n] = '\0';
	base = strrchr(link, '/');
	snprintf(bdf, sizeof(bdf), "%s", base ? base + 1 : link);
	fd = open_uverbs();
	if (fd < 0)
		return;
	ret = get_context(fd, &gc);
	if (!ret)
		ret = alloc_pd(fd, &pd, NULL, 0);
	result("ib_device_unbind_setup", ret == 0, "GET_CONTEXT/ALLOC_PD: %s", strerror(-ret));
	result("ib_device_unbind", write_file("/sys/bus/pci/drivers/mnic/unbind", bdf) == 0,
	       "unbind %s: %s", bdf, strerror(errno));
	ret = query_port(fd, 1, &port);
	result("ib_device_disassociated", ret == -EIO, "QUERY_PORT after unbind: %s",
	       ret ? strerror(-ret) : "served");
	close((int)gc.async_fd);
	close(fd);
	result("ib_device_rebind", write_file("/sys/bus/pci/drivers/mnic/bind", bdf) == 0,
	       "bind %s: %s", bdf, strerror(errno));
	result("ib_device_unbind_left_nothing",
	       fw_query(&q1) == 0 && q1.n_ctx == q0.n_ctx && q1.n_pd == q0.n_pd,
	       "firmware contexts %u -> %u, PDs %u -> %u", q0.n_ctx, q1.n_ctx, q0.n_pd, q1.n_pd);
}

int main(int argc, char **argv)
{
	const char *base;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4 || (strcmp(argv[1], "verbs") && strcmp(argv[1], "unbind") &&
			  strcmp(argv[1], "objects") && strcmp(argv[1], "mig"))) {
		fprintf(stderr, "usage: %s verbs|objects|mig|unbind IBDEV /dev/mnicN\n", argv[0]);
		return 2;
	}
	ibdev = argv[2];
	mnicdev = argv[3];
	base = strrchr(mnicdev, '/');
	snprintf(sysdir, sizeof(sysdir), "/sys/class/misc/%s", base ? base + 1 : mnicdev);
	if (!strcmp(argv[1], "verbs"))
		run_verbs();
	else if (!strcmp(argv[1], "objects"))
		run_objects();
	else if (!strcmp(argv[1], "mig"))
		run_mig();
	else
		run_unbind();
	if (failures) {
		printf("IB-CHECK FAIL %u/%u\n", failures, checks);
		return 1;
	}
	printf("IB-CHECK PASS %u\n", checks);
	return 0;
}
