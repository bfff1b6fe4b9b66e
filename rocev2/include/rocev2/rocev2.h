/* The RoCEv2 RC engine: public interface.
 *
 * Portable C11, no OS: everything the engine needs from its host comes in
 * struct rocev2_env (transmit a frame, the clock, DMA to host memory, the
 * port's MAC and IPv4 address).  Run to completion: rocev2_rx() handles one
 * received frame entirely (responder or completer), rocev2_poll() lets
 * requesters send; neither blocks.  The engine owns its timeouts
 * (retransmit, RNR, pause, RESUME), as lwIP's stack owns sys_timeout: the
 * loop only asks when the next one is due (rocev2_next_deadline) and runs
 * what is due (rocev2_run_timers).
 *
 * This header is the whole engine API: struct rocev2 is opaque outside
 * rocev2/ (its layout is in internal.h, for the engine and its tests).
 * Objects live in static pools sized at compile time (ROCEV2_MAX_*).
 * Handles carry a generation so stale handles are refused:
 *   PD/CQ/SRQ handle = generation << 16 | index
 *   QPN              = generation << 12 | index   (24 bits, never 0 or 1)
 *   lkey = rkey      = index << 8 | key byte      (as rxe; index = MRN)
 * Every object has an owner, a context (0 .. ROCEV2_MAX_OWNERS - 1; the
 * firmware's command contexts, docs/host-interface.md "Contexts"): the one
 * rocev2_create_as named when it was created.  An object refers only to
 * objects of its own context; dump, resume, abort and events are per
 * context.  The engine checks no handle against an owner otherwise: the
 * caller decides who may name what (rocev2_obj_owner).
 * Errors are negative HAL_E* codes.
 */
#ifndef ROCEV2_H
#define ROCEV2_H

#include <stddef.h>
#include <stdint.h>
#include "counters.h"
#include "hal/dma.h"
#include "mnic/gid.h"
#include "mnic/queues.h"

#ifndef ROCEV2_MAX_QP
#define ROCEV2_MAX_QP 1024u
#endif
#ifndef ROCEV2_MAX_MR
#define ROCEV2_MAX_MR 4096u
#endif
#ifndef ROCEV2_MAX_PD
#define ROCEV2_MAX_PD 1024u
#endif
#ifndef ROCEV2_MAX_CQ
#define ROCEV2_MAX_CQ 1024u
#endif
#ifndef ROCEV2_MAX_SRQ
#define ROCEV2_MAX_SRQ 256u
#endif
/* Event queues of completion events (rocev2/eq.c): one or more per context. */
#ifndef ROCEV2_MAX_EQ
#define ROCEV2_MAX_EQ 128u
#endif
/* Memory translation tables (rocev2/mtt.c): MTT objects, and the entries
 * of all of them together, each a 4-byte page frame number (HPA >> 12) in
 * firmware RAM: 2^20 entries are 4 MiB and map 4 GiB of 4 KiB pages. */
#ifndef ROCEV2_MAX_MTT
#define ROCEV2_MAX_MTT 4096u
#endif
#ifndef ROCEV2_MTT_PAGES
#define ROCEV2_MTT_PAGES (1u << 20)
#endif
#define ROCEV2_NO_MTT 0u               /* physical mode: addresses are HPAs */
#define ROCEV2_PAGE_SHIFT_MIN 12u
#define ROCEV2_PAGE_SHIFT_MAX 30u
#define ROCEV2_MAX_RD_ATOMIC 16u       /* max_rd_atomic / max_dest_rd_atomic limit */
#define ROCEV2_MAX_INFLIGHT_WQE 64u    /* send WQEs between comp and req per QP */
#define ROCEV2_MAX_UNACKED_PSNS 128u   /* requester PSN window (as rxe) */
#define ROCEV2_MAX_PKT_PER_ACK 64u     /* AckReq at least this often */
#define ROCEV2_MAX_MSG (1u << 30)      /* 1 GiB */
#define ROCEV2_MAX_QUEUE_SIZE 65536u   /* entries of a CQ or work queue */
/* Engine instances (rocev2_open): one per Ethernet port. */
#ifndef ROCEV2_MAX_ENGINES
#define ROCEV2_MAX_ENGINES 1u
#endif
/* Owners (contexts): 0 and the firmware's MNIC_CTX_MAX others. */
#ifndef ROCEV2_MAX_OWNERS
#define ROCEV2_MAX_OWNERS 65u
#endif
#define ROCEV2_PSN_MASK 0xffffffu       /* PSNs are 24 bits (IBA 9.7.1) */
#define ROCEV2_QPN_IDX_BITS 12u
#define ROCEV2_HANDLE_IDX_BITS 16u
_Static_assert(ROCEV2_MAX_QP <= (1u << ROCEV2_QPN_IDX_BITS), "QPN index field");
_Static_assert(ROCEV2_MAX_MR <= (1u << 24), "MR index field");

/* Access flags (values as ibv_access_flags). */
enum rocev2_access {
	ROCEV2_ACCESS_LOCAL_WRITE = 1u << 0,
	ROCEV2_ACCESS_REMOTE_WRITE = 1u << 1,
	ROCEV2_ACCESS_REMOTE_READ = 1u << 2,
	ROCEV2_ACCESS_REMOTE_ATOMIC = 1u << 3,
};

/* QP states (values as ibv_qp_state). */
enum rocev2_qp_state {
	ROCEV2_QPS_RESET = 0,
	ROCEV2_QPS_INIT = 1,
	ROCEV2_QPS_RTR = 2,
	ROCEV2_QPS_RTS = 3,
	ROCEV2_QPS_SQD = 4,
	ROCEV2_QPS_SQE = 5,
	ROCEV2_QPS_ERR = 6,
	ROCEV2_QPS_NUM = 7,
};

/* Path MTU (values as ibv_mtu): 1 = 256 ... 5 = 4096. */
enum rocev2_mtu {
	ROCEV2_MTU_256 = 1, ROCEV2_MTU_512 = 2, ROCEV2_MTU_1024 = 3,
	ROCEV2_MTU_2048 = 4, ROCEV2_MTU_4096 = 5,
};
static inline uint32_t rocev2_mtu_bytes(unsigned mtu) { return 128u << mtu; }

/* Modify-QP attribute mask (values as ibv_qp_attr_mask). */
enum rocev2_qp_attr_mask {
	ROCEV2_QP_STATE = 1u << 0,
	ROCEV2_QP_ACCESS_FLAGS = 1u << 3,
	ROCEV2_QP_PKEY_INDEX = 1u << 4,
	ROCEV2_QP_PORT = 1u << 5,
	ROCEV2_QP_AV = 1u << 7,
	ROCEV2_QP_PATH_MTU = 1u << 8,
	ROCEV2_QP_TIMEOUT = 1u << 9,
	ROCEV2_QP_RETRY_CNT = 1u << 10,
	ROCEV2_QP_RNR_RETRY = 1u << 11,
	ROCEV2_QP_RQ_PSN = 1u << 12,
	ROCEV2_QP_MAX_QP_RD_ATOMIC = 1u << 13,
	ROCEV2_QP_MIN_RNR_TIMER = 1u << 15,
	ROCEV2_QP_SQ_PSN = 1u << 16,
	ROCEV2_QP_MAX_DEST_RD_ATOMIC = 1u << 17,
	ROCEV2_QP_DEST_QPN = 1u << 20,
};

/* GIDs: mnic/gid.h (IPv4-mapped for RoCEv2 over IPv4); the port's table
 * has ROCEV2_GID_TBL_LEN entries (rocev2_set_gid). */
#define ROCEV2_GID_LEN     MNIC_GID_LEN
#define ROCEV2_GID_TBL_LEN 16u

/* Address vector: where this QP's packets go (IBA 11.2.4.1 ah_attr with a
 * GRH, as RoCEv2 always has): the destination GID picks IPv4 or IPv6;
 * the host resolves the destination MAC (as the kernel does for verbs). */
struct rocev2_av {
	uint8_t dmac[6];
	uint8_t ttl;           /* IPv4 TTL / IPv6 hop limit (GRH HopLmt) */
	uint8_t tos;           /* IPv4 TOS / IPv6 traffic class (GRH TClass) */
	uint8_t dgid[ROCEV2_GID_LEN];
	uint32_t flow_label;   /* IPv6 only, 20 bits (GRH FlowLabel) */
	uint8_t sgid_index;    /* the port's GID the packets come from (rocev2_set_gid) */
	uint8_t reserved[3];
};
#define ROCEV2_FLOW_LABEL_MASK 0xfffffu
/* The IPv4 destination of a v4 address vector (host order); 0 for IPv6. */
static inline uint32_t rocev2_av_ipv4(const struct rocev2_av *av)
{
	return mnic_gid_is_v4(av->dgid) ? mnic_gid_ipv4(av->dgid) : 0u;
}
static inline void rocev2_av_set_ipv4(struct rocev2_av *av, uint32_t ipv4)
{
	mnic_gid_from_ipv4(av->dgid, ipv4);
}

struct rocev2_qp_attr {
	uint32_t qp_state;             /* enum rocev2_qp_state */
	uint32_t cur_qp_state;         /* query only */
	uint32_t path_mtu;             /* enum rocev2_mtu */
	uint32_t qp_access_flags;      /* remote access the responder allows */
	uint32_t rq_psn, sq_psn;
	uint32_t dest_qp_num;
	struct rocev2_av av;
	uint8_t timeout;               /* 4.096 us * 2^timeout; 0 = no retransmit timer */
	uint8_t retry_cnt;             /* 0..7, 7 = infinite */
	uint8_t rnr_retry;             /* 0..7, 7 = infinite */
	uint8_t min_rnr_timer;         /* RNR NAK timer code we send, 0..31 */
	uint8_t max_rd_atomic;         /* outstanding reads/atomics we initiate */
	uint8_t max_dest_rd_atomic;    /* outstanding reads/atomics we accept */
	uint16_t pkey_index;
};

/* Addresses are IOVAs in the range of their MTT, or host-physical
 * addresses (offsets into env.dma, the host-memory aperture) when the MTT
 * is ROCEV2_NO_MTT: zero-initialised attributes are physical mode. */
struct rocev2_queue_attr {
	uint64_t ring_addr;            /* entry 0 */
	uint64_t dbrec_addr;           /* struct mnic_dbrec */
	uint32_t size;                 /* entries, power of two, 0 = none */
	uint32_t ring_mtt, dbrec_mtt;  /* ROCEV2_NO_MTT: physical */
};

/* An MTT: [iova, iova + length) onto pages of 2^page_shift bytes; entry i
 * maps the page at (iova & ~(page - 1)) + i * page (mnic/cmd.h). */
struct rocev2_mtt_attr {
	uint64_t iova, length;
	uint32_t page_shift;           /* ROCEV2_PAGE_SHIFT_MIN..MAX */
};

struct rocev2_qp_init_attr {
	uint32_t pd, send_cq, recv_cq;
	uint32_t srq;                  /* ROCEV2_NO_SRQ when the QP has its own RQ */
	struct rocev2_queue_attr sq, rq;
	uint32_t max_send_sge, max_recv_sge;
	int sq_sig_all;
};
#define ROCEV2_NO_SRQ UINT32_MAX
#define ROCEV2_NO_EQ UINT32_MAX         /* rocev2_cq_set_eq: unbind */

struct rocev2_srq_attr {
	struct rocev2_queue_attr q;
	uint32_t max_sge;
	uint32_t srq_limit;            /* limit event when fewer WQEs remain; 0 = disarmed */
};

/* Asynchronous events (values as ibv_event_type). */
enum rocev2_event_type {
	ROCEV2_EVENT_CQ_ERR = 0,
	ROCEV2_EVENT_QP_FATAL = 1,
	ROCEV2_EVENT_QP_REQ_ERR = 2,
	ROCEV2_EVENT_QP_ACCESS_ERR = 3,
	ROCEV2_EVENT_SQ_DRAINED = 6,
	ROCEV2_EVENT_SRQ_LIMIT_REACHED = 15,
};
struct rocev2_event {
	uint32_t type;                 /* enum rocev2_event_type */
	uint32_t handle;               /* QPN, CQ or SRQ handle */
};

/* What the engine needs from the firmware around it. */
struct rocev2_env {
	void *ctx;
	/* Transmit one complete frame; 0, -HAL_EAGAIN (ring full), or error. */
	int (*tx)(void *ctx, const void *frame, size_t len);
	uint64_t (*now_ns)(void *ctx);
	struct hal_dma *dma;           /* host memory */
	uint8_t mac[6];
	uint32_t ipv4;                 /* host order */
	/* Optional (NULL: the host polls its EQs): interrupt the host on
	 * vector (an EQ's, >= 1) after an EQE is written; never blocks. */
	void (*raise)(void *ctx, unsigned vector);
};

struct rocev2;    /* opaque: defined in rocev2/internal.h */

/* Take the next engine instance and initialise it for env.  The engine
 * owns the instances (a static pool of ROCEV2_MAX_ENGINES): its object
 * pools are most of the firmware's memory and must not come from a heap
 * (there is none), and owning the storage is what keeps struct rocev2
 * opaque, so no caller can reach its internals.  0 and *e set, -HAL_EINVAL
 * for an incomplete env, -HAL_ENOMEM when every instance is taken. */
int rocev2_open(const struct rocev2_env *env, struct rocev2 **e);
/* Initialise the engine in storage the caller owns: the engine's own unit
 * tests and bench/, which see internal.h and declare struct rocev2. */
int rocev2_init(struct rocev2 *e, const struct rocev2_env *env);
/* Handle one received Ethernet frame (any EtherType: non-RoCE goes to the
 * host Ethernet queue when there is one, else is counted and ignored). */
void rocev2_rx(struct rocev2 *e, const uint8_t *frame, size_t len);
/* Let requesters with pending work send up to budget packets in total.
 * Returns non-zero if work remains (the loop must not sleep). */
int rocev2_poll(struct rocev2 *e, unsigned budget);
int rocev2_has_work(const struct rocev2 *e);
/* The engine's earliest timer deadline (ns, env clock), UINT64_MAX when
 * none is armed. */
uint64_t rocev2_next_deadline(const struct rocev2 *e);
/* Fire the engine's timers due by now; returns how many fired. */
unsigned rocev2_run_timers(struct rocev2 *e, uint64_t now);

/* Object types: live objects (handles), image records, dump statistics. */
enum rocev2_obj_type {
	ROCEV2_OBJ_PD = 0,
	ROCEV2_OBJ_MR = 1,
	ROCEV2_OBJ_CQ = 2,
	ROCEV2_OBJ_SRQ = 3,
	ROCEV2_OBJ_QP = 4,
	ROCEV2_OBJ_QP_SRQ = 5,          /* stats only: QPs attached to an SRQ */
	ROCEV2_OBJ_NUM = 6,             /* entries of the dump statistics (PD..QP_SRQ:
					 * mnic_cmd_dump_out; MTT records count in total) */
	ROCEV2_OBJ_MTT = 6,             /* memory translation table (rocev2_create_mtt) */
	ROCEV2_OBJ_LIVE_NUM = 7,        /* arrays of live objects and image records by
					 * type (QP_SRQ's entry always 0) */
	ROCEV2_OBJ_EQ = 7,              /* event queue: rocev2_obj_live/owner only (not in
					 * images or the per-type arrays) */
};

/* Coalesced acknowledgements (an ACK acknowledges its PSN and every
 * request before it, IBA 9.7.5.1; hfi1 coalesces the same way): with on
 * set, the responder does not answer each request that asks for an ACK at
 * once, but leaves one ACK per QP for the next rocev2_poll, which sends it for the newest request; the
 * ROCEV2_ACK_COALESCE_MAXth request since the last ACK is answered at
 * once (one ACK per at most that many).  NAKs, read and atomic
 * responses are not delayed (a NAK joins the waiting ACK, later PSN wins,
 * as behind replies).  Only for a caller that polls after every burst of
 * received frames (firmware/loop.c does); off after init. */
#define ROCEV2_ACK_COALESCE_MAX 16u
void rocev2_set_ack_coalesce(struct rocev2 *e, int on);

/* The port's GID table (the host's, SET_GID): entry index is gid from now
 * on, or none when gid is NULL.  0; -HAL_EINVAL for an index out of range
 * or an address no packet may come from (the unspecified address,
 * loopback, multicast; IPv4 0/8, 127/8 and 224/3).  Received packets are
 * accepted for any valid entry of their family (and for env.ipv4 while no
 * IPv4 entry is valid: the address the env gave at init, for ports whose
 * host keeps no table).  A QP sends from the entry its av.sgid_index
 * names when that entry is valid and of its destination's family, else
 * from the port's first address of that family (for IPv4: the lowest
 * valid v4 entry, else env.ipv4; for IPv6: the lowest valid v6 entry of
 * the destination's scope, link-local or not), so a QP restored onto a
 * port whose table differs keeps sending (its RESUME says from where).  A
 * QP with no such address sends nothing (tx_no_gid) until one is set. */
int rocev2_set_gid(struct rocev2 *e, unsigned index, const uint8_t *gid);
/* 1 when a GID names an address packets may come from (rocev2_set_gid). */
int rocev2_gid_unicast(const uint8_t *gid);

/* Host Ethernet queues (ethq.c, mnic/queues.h "Host Ethernet queues"):
 * one TX and one RX ring of MNIC_ETH_DESC_SIZE descriptors per engine, the
 * port's netdev's.  Rings checked as a CQ's; buf_mtt an MTT of the
 * creating owner, fully written; vector MNIC_EQ_VECTOR_MIN..MAX.
 * create: -HAL_EBUSY while one exists; destroy: -HAL_EINVAL if none.
 * While they exist every frame that is not RoCEv2 for us goes to the RX
 * ring (or is dropped and counted), and rocev2_poll sends what the host
 * posted on the TX ring. */
struct rocev2_ethq_attr {
	struct rocev2_queue_attr tx, rx;
	uint32_t buf_mtt;
	uint32_t vector;
};
int rocev2_create_ethq(struct rocev2 *e, const struct rocev2_ethq_attr *a);
int rocev2_destroy_ethq(struct rocev2 *e);
/* Re-read the TX ring's producer (mgmt/doorbell.c, every doorbell pass):
 * 1 when it moved (frames to send), 0 otherwise or without queues. */
int rocev2_ethq_tx_doorbell(struct rocev2 *e);

/* ---- queries (mgmt/ and firmware/ read the engine only through these) -- */
struct rocev2_device_info {
	uint8_t mac[6];
	uint32_t ipv4;                  /* host order */
	uint64_t pause_timeout_ns;      /* Paused -> ERR after this (0 = never) */
	uint64_t resume_budget_ns;      /* RESUME resends give up (0 = per QP) */
	uint32_t mig_flags;             /* ROCEV2_MIG_F_* */
	uint32_t objects[ROCEV2_OBJ_LIVE_NUM];   /* live objects per type, every owner */
	uint32_t mtt_pages_free;        /* MTT pool entries no MTT holds */
	uint8_t migration;              /* built with the migration extension */
};
void rocev2_query_device(const struct rocev2 *e, struct rocev2_device_info *info);
/* A dump stopped owner's context, or a restore left QPs of it Stopped. */
int rocev2_context_stopped(const struct rocev2 *e, uint32_t owner);
/* Live objects of owner, per type. */
void rocev2_owner_objects(const struct rocev2 *e, uint32_t owner,
			  uint32_t objects[ROCEV2_OBJ_LIVE_NUM]);
/* The engine's clock (env->now_ns), ns. */
uint64_t rocev2_clock_ns(const struct rocev2 *e);
/* 1 when handle names a live object of type (a stale, free or out-of-range
 * handle: 0): the engine's own lookup, so a handle the mgmt dispatcher let
 * through is one the engine accepts.  PD/CQ/SRQ/MTT handle, MR lkey, QPN. */
int rocev2_obj_live(struct rocev2 *e, enum rocev2_obj_type type, uint32_t handle);
/* 0 and *owner: the context that owns the live object handle names;
 * -HAL_EINVAL when it names none (as rocev2_obj_live). */
int rocev2_obj_owner(struct rocev2 *e, enum rocev2_obj_type type, uint32_t handle,
		     uint32_t *owner);
/* The first live object of type whose pool slot is at or after cursor's
 * (the slot bits of a handle: handle + 1 continues after that object).
 * 0 and *handle set, -HAL_ENXIO when there is none, -HAL_EINVAL for a
 * type that has no live objects. */
int rocev2_obj_next(const struct rocev2 *e, enum rocev2_obj_type type, uint32_t cursor,
		    uint32_t *handle);
/* The engine's counters (counters.h: the X-macro list; their printable
 * names are rocev2_counter_names[], ROCEV2_NUM_COUNTERS of them). */
const struct rocev2_counters *rocev2_counters(const struct rocev2 *e);

/* Objects created (alloc, reg, create, restore) from now on belong to
 * owner (0 after rocev2_init); -HAL_EINVAL for owner >= ROCEV2_MAX_OWNERS.
 * The mgmt dispatcher sets it to the issuing context before every command. */
int rocev2_create_as(struct rocev2 *e, uint32_t owner);
/* Destroy every object of owner, dependents first (QPs, SRQs, CQs, MRs,
 * MTTs, PDs), and end its dump: the context is gone (DEALLOC_CONTEXT). */
int rocev2_destroy_owned(struct rocev2 *e, uint32_t owner);

/* Verbs-like object management (the mgmt/ command handlers call these).
 * A PD, CQ or SRQ a new object refers to must belong to the creating
 * owner (rocev2_create_as): -HAL_EINVAL otherwise, as for no such object. */
int rocev2_alloc_pd(struct rocev2 *e, uint32_t *pd);
int rocev2_dealloc_pd(struct rocev2 *e, uint32_t pd);
/* Physical mode: [addr, addr + length) are host-physical addresses. */
int rocev2_reg_mr(struct rocev2 *e, uint32_t pd, uint64_t addr, uint64_t length,
		  uint32_t access, uint32_t *lkey, uint32_t *rkey);
/* [iova, iova + length) inside mtt's range, mtt fully written and the
 * creating owner's (mtt ROCEV2_NO_MTT: as rocev2_reg_mr): -HAL_EINVAL for
 * no such MTT or another owner's, -HAL_EFAULT for a range it does not
 * cover, -HAL_EAGAIN while an entry is unwritten.  Queues (CQ, SRQ, QP)
 * check their ring and doorbell record against ring_mtt / dbrec_mtt the
 * same way.  Every refusal is counted (counters.h, mtt_refused_*). */
int rocev2_reg_mr_mtt(struct rocev2 *e, uint32_t pd, uint32_t mtt, uint64_t iova,
		      uint64_t length, uint32_t access, uint32_t *lkey, uint32_t *rkey);
/* Memory translation (rocev2/mtt.c).  create: -HAL_EINVAL for a bad
 * shape (page_shift out of range, length 0, iova + length wraps),
 * -HAL_ENOMEM when the pool has no run of npages entries or no MTT is
 * free.  write: entries [first, first + count) from HPAs, each aligned
 * to the page and the whole page inside env.dma's aperture (-HAL_EINVAL,
 * nothing written, on any bad one; -HAL_ERANGE past npages); -HAL_EBUSY
 * while objects use the MTT and its owner is not stopped.  destroy:
 * -HAL_EBUSY while objects use it.  An MTT belongs to its creator
 * (rocev2_create_as); rocev2_destroy_owned frees it too. */
int rocev2_create_mtt(struct rocev2 *e, const struct rocev2_mtt_attr *a, uint32_t *mtt,
		      uint32_t *npages);
int rocev2_write_mtt(struct rocev2 *e, uint32_t mtt, uint32_t first, const uint64_t *pages,
		     uint32_t count);
int rocev2_destroy_mtt(struct rocev2 *e, uint32_t mtt);
int rocev2_dereg_mr(struct rocev2 *e, uint32_t lkey);
int rocev2_create_cq(struct rocev2 *e, const struct rocev2_queue_attr *q, uint32_t *cq);
int rocev2_destroy_cq(struct rocev2 *e, uint32_t cq);
/* Move cq to the ring q with its unconsumed CQEs (mnic/cmd.h RESIZE_CQ);
 * *moved: how many.  -HAL_EINVAL: no such CQ of the creator, a CQ in error
 * or a new record index other than 0; -HAL_ENOSPC: q too small for them;
 * -HAL_EFAULT: a ring or record the NIC cannot reach (the CQ unchanged). */
int rocev2_resize_cq(struct rocev2 *e, uint32_t cq, const struct rocev2_queue_attr *q,
		     uint32_t *moved);
/* Completion events (rocev2/eq.c, mnic/queues.h "Completion events").  An
 * EQ: a ring of MNIC_EQE_SIZE entries checked as a CQ's, and the host
 * vector raised after each EQE (MNIC_EQ_VECTOR_MIN..MAX, else
 * -HAL_EINVAL).  destroy: -HAL_EBUSY while CQs are bound to it.
 * rocev2_cq_set_eq binds cq to eq (ROCEV2_NO_EQ: unbinds; both the
 * creating owner's, else -HAL_EINVAL); the CQ keeps its arm state. */
int rocev2_create_eq(struct rocev2 *e, const struct rocev2_queue_attr *q, uint32_t vector,
		     uint32_t *eq);
int rocev2_destroy_eq(struct rocev2 *e, uint32_t eq);
int rocev2_cq_set_eq(struct rocev2 *e, uint32_t cq, uint32_t eq);
int rocev2_create_srq(struct rocev2 *e, uint32_t pd, const struct rocev2_srq_attr *a,
		      uint32_t *srq);
int rocev2_modify_srq_limit(struct rocev2 *e, uint32_t srq, uint32_t limit);
int rocev2_destroy_srq(struct rocev2 *e, uint32_t srq);
int rocev2_create_qp(struct rocev2 *e, const struct rocev2_qp_init_attr *a, uint32_t *qpn);
int rocev2_modify_qp(struct rocev2 *e, uint32_t qpn, const struct rocev2_qp_attr *attr,
		     uint32_t mask);
int rocev2_query_qp(struct rocev2 *e, uint32_t qpn, struct rocev2_qp_attr *attr);
/* Migration flags of a QP (MigrOS), beside its verbs attributes: struct
 * rocev2_qp_attr is also a section of the image, so they are not in it. */
enum rocev2_qp_mig_flags {
	ROCEV2_QP_MIG_STOPPED = 1u << 0,   /* dumped or restored: sends nothing */
	ROCEV2_QP_MIG_PAUSED = 1u << 1,    /* its peer is Stopped */
	ROCEV2_QP_MIG_HAS_KEY = 1u << 2,   /* RESUME carries a MAC */
};
/* 0 and *flags (enum rocev2_qp_mig_flags), -HAL_EINVAL for a stale QPN. */
int rocev2_qp_mig_flags(struct rocev2 *e, uint32_t qpn, uint32_t *flags);
int rocev2_destroy_qp(struct rocev2 *e, uint32_t qpn);

/* Doorbells: the host advanced a producer index in the doorbell record. */
int rocev2_sq_doorbell(struct rocev2 *e, uint32_t qpn);
int rocev2_rq_doorbell(struct rocev2 *e, uint32_t qpn);
int rocev2_srq_doorbell(struct rocev2 *e, uint32_t srq);
/* Some doorbell record moved, the host does not say which (db_seq): re-read
 * every live queue's (SQ and own RQ of each QP not in RESET, every SRQ).
 * Returns how many queues were refreshed. */
unsigned rocev2_doorbells_changed(struct rocev2 *e);

/* ---- live migration (MigrOS in the NIC; docs/ARCHITECTURE.md, "Live migration") -----
 * Per context (owner): other owners' QPs keep running throughout.
 * Source:  rocev2_dump_context() stops the owner's QPs (Stopped: sends nothing,
 *          answers requests with NAK_STOPPED) and serialises its objects
 *          into an image; rocev2_abort_dump() undoes the stop in place.
 * Target:  rocev2_restore_image() recreates every object with its original
 *          handles/keys/QPN and internal state, owned by the creating owner
 *          (rocev2_create_as), QPs left Stopped;
 *          rocev2_resume_context() lets the owner's Stopped QPs run (and no
 *          other: a QP never stopped is never resumed): each RC QP sends RESUME
 *          (opcode 0x19, PSN = newest acknowledged, the next epoch, its new
 *          address; rocev2/migrate.c) until it is ACKed or its budget is
 *          spent (then ERR); one in RTR sends it when modify_qp moves it
 *          to RTS. */
#define ROCEV2_PAUSE_TIMEOUT_DEFAULT_NS 10000000000ull   /* 10 s */

struct rocev2_dump_stats {
	uint32_t objects[ROCEV2_OBJ_NUM];   /* per enum rocev2_obj_type */
	uint32_t bytes[ROCEV2_OBJ_NUM];     /* record bytes per type, headers included */
	uint32_t total;                 /* image bytes */
};

struct rocev2_restore_opts {
	/* Both ends migrating at once: the peer's new address, applied to every
	 * restored QP whose av.dgid equals old_dgid (all zero = no override). */
	uint8_t old_dgid[ROCEV2_GID_LEN], new_dgid[ROCEV2_GID_LEN];
	uint8_t new_dmac[6];
};

/* What a dump exports: the objects of owner; the image header records the
 * user-area range that context holds (the target must give the restoring
 * context a range that holds it).  NULL: owner 0, no range (0, 0). */
struct rocev2_dump_scope {
	uint32_t owner;
	uint64_t ua_offset, ua_size;
};

/* -HAL_ENOSPC when the image does not fit cap (stats->total names its
 * size): nothing is stopped or written then, so asking again with a bigger
 * buffer is free. */
int rocev2_dump_context(struct rocev2 *e, const struct rocev2_dump_scope *scope, void *buf,
			size_t cap, size_t *len, struct rocev2_dump_stats *stats);
/* Resume in place the Stopped QPs of owner (nothing stopped: 0, nothing done). */
int rocev2_abort_dump(struct rocev2 *e, uint32_t owner);
int rocev2_restore_image(struct rocev2 *e, const void *img, size_t len,
			 const struct rocev2_restore_opts *opts);
/* -HAL_EAGAIN (nothing resumed, mtt_resume_unwritten) while an MTT of
 * owner has an unwritten entry: a restore recreates MTTs unwritten and
 * the target host refills them (rocev2_write_mtt) before the resume. */
int rocev2_resume_context(struct rocev2 *e, uint32_t owner);
/* Shared migration key of a connection (both ends set the same key at
 * setup; it restarts both directions at epoch 0): RESUME and NAK_STOPPED
 * then carry SipHash-2-4 MACs under a key ratcheted once per migration
 * (rocev2/migrate.c header comment); an unauthenticated, forged or
 * replayed one is dropped and counted.  key NULL removes it. */
int rocev2_set_mig_key(struct rocev2 *e, uint32_t qpn, const uint8_t key[16]);
void rocev2_set_pause_timeout(struct rocev2 *e, uint64_t ns);
/* MIG_CONFIG's other fields: the RESUME resend budget (ns; 0 = each QP's
 * retry_cnt x its retransmit timeout) and ROCEV2_MIG_F_* flags. */
#define ROCEV2_MIG_F_UNKEYED 1u   /* accept RESUME/NAK_STOPPED without a MAC on unkeyed QPs */
void rocev2_set_resume_budget(struct rocev2 *e, uint64_t ns);
void rocev2_set_mig_flags(struct rocev2 *e, uint32_t flags);
/* Walking an image, the host memory its records name, restoring one
 * record at a time: */
#include "rocev2_image.h"

/* ---- congestion control: DCQCN (rocev2/cc.c; Zhu et al., SIGCOMM 2015) ----
 * Engine-wide parameters; every QP keeps its own rate state.  The
 * notification point (a packet marked CE -> a CNP to its sender, at most
 * one per QP per cnp_interval_us) and the reaction point (a CNP -> rate
 * cut, then recovery on the rate timer T and byte counter B, a token-bucket
 * pacer at the current rate) run when ROCEV2_DCQCN_F_ENABLE is set;
 * ROCEV2_DCQCN_F_ECT marks every packet sent ECT(0) (RFC 3168), without
 * it the AV's TOS goes out unchanged.  Rates in Mbit/s. */
#define ROCEV2_DCQCN_F_ENABLE 1u
#define ROCEV2_DCQCN_F_ECT    2u
struct rocev2_dcqcn_params {
	uint32_t flags;                 /* ROCEV2_DCQCN_F_* */
	uint32_t g;                     /* alpha gain in 1/65536 (1/256 = 256) */
	uint32_t alpha_us;              /* K: alpha decays after this long without a CNP */
	uint32_t rate_timer_us;         /* T: a rate increase event per period */
	uint32_t byte_counter;          /* B: a rate increase event per B bytes sent */
	uint32_t fast_recovery;         /* F: stages of fast recovery before additive */
	uint32_t rai_mbps, rhai_mbps;   /* additive and hyper increase steps */
	uint32_t min_rate_mbps;         /* floor of every cut */
	uint32_t line_rate_mbps;        /* the rate a QP starts at and recovers to */
	uint32_t cnp_interval_us;       /* notification point: CNPs per QP at most one per */
};
/* Defaults: the paper's values (g 1/256, K 55 us, T 55 us, B 10 MB, F 5,
 * Rai 40 Mbit/s; CNP interval 50 us); Rhai 200 Mbit/s, floor 10 Mbit/s and
 * line rate 10 Gbit/s are ours (the port has no speed to report). */
void rocev2_dcqcn_defaults(struct rocev2_dcqcn_params *p);
/* Validate and install p; every QP's rate state restarts at line rate.
 * -HAL_EINVAL with *bad_field = the index of the first out-of-range field
 * (in struct order, flags = 0), nothing changed. */
int rocev2_set_dcqcn(struct rocev2 *e, const struct rocev2_dcqcn_params *p, unsigned *bad_field);
void rocev2_get_dcqcn(const struct rocev2 *e, struct rocev2_dcqcn_params *p);
/* One QP's current rate state (tests, bench, QUERY_QP): Mbit/s, alpha in
 * 1/65536; -HAL_EINVAL for no such QP.  rate = line rate while idle. */
struct rocev2_dcqcn_state {
	uint32_t active;                /* a CNP cut the rate and it has not recovered */
	uint32_t rate_kbps, target_kbps;
	uint32_t alpha;
};
int rocev2_qp_dcqcn_state(const struct rocev2 *e, uint32_t qpn, struct rocev2_dcqcn_state *s);

/* Next asynchronous event of owner (about an object it owns), oldest
 * first; 0 when one was returned, -HAL_EAGAIN if none. */
int rocev2_get_event(struct rocev2 *e, uint32_t owner, struct rocev2_event *ev);

#endif
