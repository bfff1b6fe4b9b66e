/* The provider ABI of Debian 12's libibverbs 44 (symbol version
 * IBVERBS_PRIVATE_34), as far as libmnic-rdmav34.so uses it.  Debian does
 * not ship rdma-core's <infiniband/driver.h> (the team's reference notes,
 * ../shared/reference/rdma-device-notes.md), so these are the project's own declarations of
 * the documented layout: the structs libibverbs reads from a provider
 * (device ops and match table, the device and MR wrappers, the context
 * ops table) and the prototypes of the ibv_cmd_* helpers with the command
 * buffers they take (struct ib_uverbs_cmd_hdr + the kernel's command
 * struct of <rdma/ib_user_verbs.h>, the provider's udata right after).
 *
 * The private ABI is versioned as a whole: libibverbs refuses a provider
 * built for another one (the registration symbol carries the number:
 * verbs_register_driver_34), so these layouts hold for exactly that
 * version.  The sizes are pinned below, and mnic-verbs-check
 * (tests/tools/, run in the kmod test VM) loads the built provider through
 * unmodified libibverbs and checks what it can observe at run time: the
 * device matched and opened, every op reached in its slot, the fields
 * libibverbs wrote into the provider's objects read back as set. */
#ifndef MNIC_PROVIDER_VERBS_PRIVATE_H
#define MNIC_PROVIDER_VERBS_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#define MNIC_PV_PABI_VERSION 34

/* ---- device matching --------------------------------------------------- */

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;              /* VERBS_MATCH_* */
};
_Static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent layout");

struct verbs_sysfs_dev;        /* libibverbs' own: only passed through */
struct verbs_device;
struct verbs_context;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device, int cmd_fd,
					       void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device, int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};
_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops layout");

/* A list node of libibverbs' ccan list (two pointers). */
struct mnic_pv_list_node {
	struct mnic_pv_list_node *next, *prev;
};

/* The provider allocates it (alloc_device), with its own fields after. */
struct verbs_device {
	struct ibv_device device;  /* first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct mnic_pv_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};
_Static_assert(offsetof(struct verbs_device, ops) == sizeof(struct ibv_device),
	       "verbs_device layout");
_Static_assert(sizeof(struct verbs_device) == sizeof(struct ibv_device) + 48,
	       "verbs_device layout");

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

/* The provider allocates it (reg_mr); libibverbs fills it. */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};
_Static_assert(sizeof(struct verbs_mr) == sizeof(struct ibv_mr) + 8, "verbs_mr layout");

/* ---- the context's ops (libibverbs copies the non-NULL ones) ----------- */

/* An op this provider does not set: only its slot matters. */
typedef void (*mnic_pv_op_unused)(void);

struct verbs_context_ops {
	mnic_pv_op_unused advise_mr, alloc_dm, alloc_mw, alloc_null_mr, alloc_parent_domain;
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	mnic_pv_op_unused alloc_td, async_event, attach_counters_point_flow, attach_mcast,
		bind_mw, close_xrcd;
	void (*cq_event)(struct ibv_cq *cq);   /* ibv_get_cq_event took one */
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	mnic_pv_op_unused create_counters;
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel, int comp_vector);
	mnic_pv_op_unused create_cq_ex, create_flow, create_flow_action_esp;
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	mnic_pv_op_unused create_qp_ex, create_rwq_ind_table, create_srq, create_srq_ex,
		create_wq, dealloc_mw;
	int (*dealloc_pd)(struct ibv_pd *pd);
	mnic_pv_op_unused dealloc_td;
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	mnic_pv_op_unused destroy_counters;
	int (*destroy_cq)(struct ibv_cq *cq);
	mnic_pv_op_unused destroy_flow, destroy_flow_action;
	int (*destroy_qp)(struct ibv_qp *qp);
	mnic_pv_op_unused destroy_rwq_ind_table, destroy_srq, destroy_wq, detach_mcast;
	void (*free_context)(struct ibv_context *context);
	mnic_pv_op_unused free_dm, get_srq_num, import_dm, import_mr, import_pd, modify_cq,
		modify_flow_action_esp;
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	mnic_pv_op_unused modify_qp_rate_limit, modify_srq, modify_wq, open_qp, open_xrcd;
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	mnic_pv_op_unused post_srq_ops, post_srq_recv;
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	mnic_pv_op_unused query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			struct ibv_qp_init_attr *init_attr);
	mnic_pv_op_unused query_qp_data_in_order, query_rt_values, query_srq, read_counters,
		reg_dm_mr, reg_dmabuf_mr;
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
				 int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	mnic_pv_op_unused rereg_mr;
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	mnic_pv_op_unused set_ece, unimport_dm, unimport_mr, unimport_pd;
};
/* 76 ops, in rdma-core 44's (sorted) order */
_Static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *), "verbs_context_ops");
_Static_assert(offsetof(struct verbs_context_ops, alloc_pd) == 5 * sizeof(void *), "alloc_pd");
_Static_assert(offsetof(struct verbs_context_ops, cq_event) == 12 * sizeof(void *), "cq_event");
_Static_assert(offsetof(struct verbs_context_ops, create_cq) == 15 * sizeof(void *), "create_cq");
_Static_assert(offsetof(struct verbs_context_ops, create_qp) == 19 * sizeof(void *), "create_qp");
_Static_assert(offsetof(struct verbs_context_ops, dereg_mr) == 28 * sizeof(void *), "dereg_mr");
_Static_assert(offsetof(struct verbs_context_ops, free_context) == 39 * sizeof(void *),
	       "free_context");
_Static_assert(offsetof(struct verbs_context_ops, modify_qp) == 47 * sizeof(void *), "modify_qp");
_Static_assert(offsetof(struct verbs_context_ops, poll_cq) == 53 * sizeof(void *), "poll_cq");
_Static_assert(offsetof(struct verbs_context_ops, resize_cq) == 71 * sizeof(void *), "resize_cq");
_Static_assert(offsetof(struct verbs_context_ops, query_device_ex) == 58 * sizeof(void *),
	       "query_device_ex");
_Static_assert(offsetof(struct verbs_context_ops, reg_mr) == 68 * sizeof(void *), "reg_mr");
_Static_assert(offsetof(struct verbs_context_ops, req_notify_cq) == 69 * sizeof(void *),
	       "req_notify_cq");

/* ---- registration and contexts ----------------------------------------- */

void verbs_register_driver_34(const struct verbs_device_ops *ops);
/* A zeroed provider context of alloc_size bytes whose struct
 * verbs_context is at byte offset (uintptr_t)context_offset, initialised
 * on cmd_fd. */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops);

/* ---- ibv_cmd_*: command buffers = header + the kernel's struct ---------- */

#define MNIC_PV_CMD(name, kabi)                                                \
	struct name {                                                          \
		struct ib_uverbs_cmd_hdr hdr;                                  \
		struct kabi core_payload;                                      \
	}
MNIC_PV_CMD(ibv_get_context, ib_uverbs_get_context);
MNIC_PV_CMD(ibv_query_port, ib_uverbs_query_port);
MNIC_PV_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
MNIC_PV_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
MNIC_PV_CMD(ibv_create_cq, ib_uverbs_create_cq);
MNIC_PV_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
MNIC_PV_CMD(ibv_create_qp, ib_uverbs_create_qp);
MNIC_PV_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
MNIC_PV_CMD(ibv_query_qp, ib_uverbs_query_qp);
#undef MNIC_PV_CMD
_Static_assert(sizeof(struct ibv_get_context) == 16, "ibv_get_context");
_Static_assert(sizeof(struct ibv_query_port) == 24, "ibv_query_port");
_Static_assert(sizeof(struct ibv_alloc_pd) == 16, "ibv_alloc_pd");
_Static_assert(sizeof(struct ibv_reg_mr) == 48, "ibv_reg_mr");
_Static_assert(sizeof(struct ibv_create_cq) == 40, "ibv_create_cq");
_Static_assert(sizeof(struct ibv_resize_cq) == 24, "ibv_resize_cq");
_Static_assert(sizeof(struct ibv_create_qp) == 64, "ibv_create_qp");
_Static_assert(sizeof(struct ibv_modify_qp) == 120, "ibv_modify_qp");
_Static_assert(sizeof(struct ibv_query_qp) == 24, "ibv_query_qp");

int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd,
			size_t cmd_size, struct ib_uverbs_get_context_resp *resp, size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
		   struct verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		      int comp_vector, struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp, size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
/* On success cq->cqe is the kernel's answer (resp->cqe). */
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp, struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr, int attr_mask,
		     struct ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd,
		     size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

#endif
