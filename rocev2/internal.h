/* Engine internals shared by the pipeline stages.  Dataflow:
 *
 *   rocev2_rx -> recv.c (parse, ICRC, header checks, QP lookup)
 *                  |-- OPM_REQ  --> resp.c (responder) --> ACK/NAK/read+atomic responses
 *                  `-- OPM_RESP --> comp.c (completer) --> CQEs, retransmit/RNR timers
 *   doorbell   -> rocev2.c scheduler -> req.c (requester) --> request packets
 *                                    -> resp.c (read replies in progress)
 *   net.c builds and sends every frame (headers, pad, ICRC); icrc.c; queue.c
 *   reads WQEs/writes CQEs in host memory; pd/mr/cq/srq/qp.c own the objects.
 */
#ifndef ROCEV2_INTERNAL_H
#define ROCEV2_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "rocev2/counters.h"
#include "hal/errno.h"
#include "hal/eth.h"
#include "lib/crc32.h"
#include "lib/timer.h"
#include "opcode.h"
#include "req.h"
#include "resp.h"
#include "rocev2/rocev2.h"
#include "wire.h"

/* A control-path function in a per-packet file (Makefile HOT_SRCS, built
 * at -O2 for speed): GCC optimizes a cold function for size and places it
 * in .text.unlikely, away from the packet path, so the object creation and
 * teardown beside it cost the image (text budget, issue 18 item 6) what
 * they would in a -Os file. */
#define ROCEV2_CTL __attribute__((cold))

#define ROCEV2_EVENT_RING 64u
/* One ring for every context, each event tagged with its object's owner
 * (rocev2_get_event takes the owner's oldest). */
struct rocev2_owned_event {
	struct rocev2_event ev;
	uint16_t owner;
};
/* Timers a QP owns: retransmit and RNR (comp), pause and RESUME (mig),
 * DCQCN's rate/alpha timer and the pacer (cc). */
#define ROCEV2_TIMERS_PER_QP 6u
#define ROCEV2_MAX_TIMERS (ROCEV2_TIMERS_PER_QP * ROCEV2_MAX_QP)
/* The frame buffer e->tx (net.c): the BTH always starts at ROCEV2_TX_BTH,
 * so a frame over IPv4 starts ROCEV2_HDR_OFFSET before it (at 24) and one
 * over IPv6 ROCEV2_HDR_OFFSET6 before it (at 4); the stages address the
 * extension headers and payload from the BTH and never see the family.
 * 66: the first word after the BTH and two more bytes is 8-aligned (net.c
 * zeroes the extension headers as words from there). */
#define ROCEV2_TX_BTH 66u
#define ROCEV2_TX_MAX (ROCEV2_TX_BTH + ROCEV2_MAX_HDR + 4096u + 3u + ICRC_LEN)

/* ---- objects ------------------------------------------------------------ */
/* Every object records the context that owns it (rocev2_create_as); an
 * object refers only to objects of its own context. */
struct rocev2_pd {
	uint16_t gen;
	uint8_t in_use;
	uint16_t owner;                 /* context (rocev2_create_as) */
	uint32_t refcnt;                /* MRs, SRQs and QPs using it */
};

struct rocev2_mr {
	uint8_t in_use;
	uint8_t key;                    /* low byte of lkey/rkey */
	uint16_t owner;
	uint16_t pd;                    /* PD index */
	uint32_t access;                /* enum rocev2_access */
	uint64_t addr, length;          /* IOVA range (physical mode: HPAs) */
	uint32_t lkey, rkey;
	uint32_t mtt;                   /* handle, or ROCEV2_NO_MTT */
};

/* A memory translation table (mtt.c): entries [first, first + npages) of
 * struct rocev2's mtt_pages. */
struct rocev2_mtt {
	uint16_t gen;
	uint8_t in_use;
	uint8_t page_shift;
	uint16_t owner;
	uint64_t iova, length;
	uint32_t first, npages;
	uint32_t written;               /* entries holding a page (== npages: usable) */
	uint32_t refcnt;                /* MRs and queues using it */
};
#define ROCEV2_MTT_UNWRITTEN UINT32_MAX   /* an entry no WRITE_MTT has filled */

struct rocev2_cq {
	uint16_t gen;
	uint8_t in_use;
	uint16_t owner;
	uint8_t error;                  /* overflowed: no more CQEs */
	struct rocev2_queue_attr q;
	uint32_t pi;                    /* next CQE index the firmware writes */
	uint32_t refcnt;
	/* completion events (eq.c; mnic/queues.h "Completion events") */
	uint32_t eq;                    /* EQ index, or ROCEV2_NO_EQ */
	uint32_t arm_seen;              /* the doorbell record's arm word last acted on */
	uint8_t armed;                  /* enum mnic_cq_arm_cmd in force (NONE: disarmed) */
	uint8_t arm_sn;                 /* sn of the arm in force, or of the one that fired */
	uint8_t fired;                  /* the arm of arm_sn fired: its sn is spent */
	uint8_t has_solicited;          /* sol_end is valid */
	uint32_t sol_end;               /* index + 1 of the newest solicited CQE */
};

/* An event queue in host memory (eq.c): the firmware produces EQEs. */
struct rocev2_eq {
	uint16_t gen;
	uint8_t in_use;
	uint16_t owner;
	uint16_t vector;                /* host vector raised after an EQE */
	struct rocev2_queue_attr q;
	uint32_t pi;                    /* next EQE index the firmware writes */
	uint32_t refcnt;                /* CQs bound to it */
};

/* A receive or send work queue in host memory. */
struct rocev2_wq {
	struct rocev2_queue_attr q;
	uint32_t ci;                    /* firmware consumer index (free running) */
	uint32_t pi;                    /* host producer index last read */
};

/* The host Ethernet queues (ethq.c): one TX and one RX ring per engine. */
struct rocev2_ethq {
	uint8_t live;
	uint8_t raise;                  /* completions written: raise vector */
	uint32_t vector;
	uint32_t buf_mtt;
	struct rocev2_wq tx, rx;
};

struct rocev2_srq {
	uint16_t gen;
	uint8_t in_use;
	uint16_t owner;
	uint8_t limit_armed;
	uint16_t pd;
	uint32_t max_sge;
	uint32_t limit;
	struct rocev2_wq wq;
	uint32_t refcnt;
};

/* Per-QP state of the migration extension (MigrOS, moved into the NIC).
 * Owned by migrate.c; the image codec (image_records.c) serialises it. */
struct rocev2_mig {
	uint8_t resume_pending;         /* restored: RESUME to send / not yet ACKed */
	uint8_t has_key;                /* RESUME and NAK_STOPPED carry and require a MAC */
	uint8_t resume_at_rts;          /* resumed in RTR: RESUME when it reaches RTS */
	uint8_t reserved[1];
	uint32_t resume_psn;            /* PSN the RESUME carries (comp.psn - 1 at send) */
	/* One epoch and key per direction (migrate.c header comment): tx for
	 * this end's migrations (the RESUMEs and NAK_STOPPEDs it sends), rx
	 * for the peer's (the ones it checks).  Both start at (0, the key set
	 * by rocev2_set_mig_key); each completed migration ratchets one. */
	uint32_t tx_epoch, rx_epoch;
	uint8_t tx_key[16], rx_key[16]; /* SipHash-2-4 keys */
	uint64_t resume_deadline;       /* RESUME resends give up here (engine clock) */
	struct timer pause_timer;    /* Paused for too long -> ERR */
	struct timer resume_timer;   /* RESUME retransmission */
	uint32_t resume_retries;
};

/* Per-QP DCQCN state (cc.c).  Idle (active 0) until a CNP cuts the rate:
 * then the requester paces at rc and the timer runs, until recovery
 * brings rc back to line rate.  Rates in kbit/s, alpha in 1/65536. */
struct rocev2_cc {
	uint8_t active;                 /* reaction point: the rate is cut */
	uint8_t cnp_sent;               /* notification point: last_cnp_ns is valid */
	uint8_t t_events, b_events;     /* rate timer / byte counter events since the cut */
	uint32_t rc, rt;                /* current and target rate, kbit/s */
	uint32_t alpha;                 /* 1/65536 */
	uint32_t bytes;                 /* sent since the last byte counter event */
	int32_t tokens;                 /* pacer bucket, bytes (negative: in debt) */
	uint64_t tokens_ns;             /* last refill */
	uint64_t alpha_due, rate_due;   /* next alpha decay / rate timer event */
	uint64_t last_cnp_ns;           /* notification point: last CNP sent */
	struct timer timer;             /* alpha decay and rate timer (both due times) */
	struct timer pacer;             /* the requester waits for tokens */
};

/* Transmit header template (net.c): Ethernet II, IPv4, UDP and the BTH's
 * first 8 bytes (P_Key, DestQP) as every packet of the QP carries them,
 * built once and copied per packet, which then patches only what differs
 * per packet (lengths, checksum, opcode, SE/PadCnt, AckReq, PSN).  Valid
 * while gen == e->tmpl_gen + 1: rocev2_tx_tmpl_stale() (this QP's address
 * vector, destination QP) and rocev2_tx_tmpl_stale_all() (the port's
 * address, the ECN bits) make it be rebuilt before the next packet; a
 * zeroed QP (create, restore) has none. */
#define ROCEV2_TMPL_LEN 80u   /* e->tx's first 80 bytes: the BTH's first 8 end at 74 */
_Static_assert(ROCEV2_TMPL_LEN >= ROCEV2_TX_BTH + 8u && ROCEV2_TMPL_LEN % 8u == 0, "template words");
struct rocev2_tx_tmpl {
	uint8_t b[ROCEV2_TMPL_LEN] __attribute__((aligned(8)));   /* laid out as e->tx, copied as words */
	uint16_t ip_sum;                /* RFC 1071 sum of b's IPv4 header, length and checksum 0;
					 * IPv6: the UDP pseudo-header's addresses and next header */
	uint8_t flags;                  /* TX_F_*: IPv6; no source address (tx_send refuses: tx_no_gid) */
	uint8_t start;                  /* where the frame starts in b (and e->tx): 4 or 24 */
	uint32_t gen;
};

struct rocev2_qp {
	uint16_t gen;
	uint8_t in_use;
	uint8_t state;                  /* enum rocev2_qp_state */
	uint16_t owner;
	uint32_t qpn;
	struct rocev2_qp_attr attr;     /* current attributes (sq/rq_psn: as set) */
	uint16_t pd, scq, rcq;          /* indices */
	uint32_t srq;                   /* index or ROCEV2_NO_SRQ */
	struct rocev2_wq sq, rq;
	uint32_t max_send_sge, max_recv_sge;
	uint8_t sq_sig_all;
	uint8_t stopped, paused;        /* migration flags (MigrOS), not verbs states */
	uint8_t scheduled;
	uint16_t sport;                 /* UDP source port */
	uint32_t mtu;                   /* bytes, from attr.path_mtu */
	struct rocev2_tx_tmpl tmpl;     /* net.c: the headers every packet of it starts with */
	struct rocev2_qp *sched_next;
	struct rocev2_req req;
	struct rocev2_comp comp;
	struct rocev2_resp resp;
	struct rocev2_mig mig;          /* migration extension (migrate.c) */
	struct rocev2_cc cc;            /* congestion control (cc.c) */
};

struct rocev2 {
	struct rocev2_env env;          /* env.ipv4: the port's IPv4 address in force */
	uint32_t boot_ipv4;             /* env.ipv4 at init (while no v4 GID is valid) */
	uint8_t gid[ROCEV2_GID_TBL_LEN][ROCEV2_GID_LEN];   /* rocev2_set_gid */
	uint16_t gid_valid;             /* a bit per entry */
	uint16_t gid_v6;                /* the valid IPv6 entries */
	struct rocev2_counters cnt;
	struct timer_heap timers;       /* every QP's timeouts (rocev2_run_timers) */
	struct timer *timer_slots[ROCEV2_MAX_TIMERS];
	struct rocev2_pd pds[ROCEV2_MAX_PD];
	struct rocev2_mr mrs[ROCEV2_MAX_MR];
	struct rocev2_cq cqs[ROCEV2_MAX_CQ];
	struct rocev2_srq srqs[ROCEV2_MAX_SRQ];
	struct rocev2_qp qps[ROCEV2_MAX_QP];
	struct rocev2_mtt mtts[ROCEV2_MAX_MTT];
	struct rocev2_eq eqs[ROCEV2_MAX_EQ];
	uint32_t n_eq;
	struct rocev2_ethq ethq;
	uint32_t mtt_pages[ROCEV2_MTT_PAGES];     /* every MTT's entries: PFNs */
	uint32_t n_pd, n_mr, n_cq, n_srq, n_qp, n_mtt;   /* objects in use (tests: leaks) */
	uint64_t pause_timeout_ns;      /* Paused -> ERR after this (0 = never) */
	uint64_t resume_budget_ns;      /* RESUME resends end (0 = retry_cnt x timeout) */
	uint32_t mig_flags;             /* ROCEV2_MIG_F_* (rocev2_set_mig_config) */
	struct rocev2_dcqcn_params dcqcn;   /* cc.c; rocev2_set_dcqcn */
	uint8_t tos_keep, tos_ecn;      /* net.c: TOS = av.tos & tos_keep | tos_ecn (ECT(0)) */
	uint32_t tmpl_gen;              /* net.c: QP header templates built for it + 1 are valid */
	uint8_t ack_coalesce;           /* resp.c: rocev2_set_ack_coalesce */
	uint16_t creator;               /* owner of the objects created next */
	uint8_t owner_stopped[ROCEV2_MAX_OWNERS];   /* a dump stopped that context */
	struct rocev2_owned_event events[ROCEV2_EVENT_RING];
	uint32_t ev_head, ev_tail;
	struct rocev2_qp *sched_head, *sched_tail;
	uint8_t tx[ROCEV2_TX_MAX] __attribute__((aligned(8)));   /* net.c copies templates as words */
};

/* ---- received packet (recv.c fills it; stages read it) ------------------ */
struct rocev2_pkt {
	const uint8_t *frame;
	size_t len;
	const uint8_t *l3;              /* the IPv4 or IPv6 header */
	uint8_t v6;                     /* RoCEv2 over IPv6 */
	const struct udp_hdr *udp;
	const struct bth *bth;
	const struct rocev2_opcode_info *info;
	uint8_t opcode;
	uint8_t ackreq;
	uint32_t psn;
	uint32_t qpn;
	const uint8_t *payload;
	uint32_t paylen;                /* payload bytes, without pad and ICRC */
};

/* Extension headers follow the BTH in the frame; address them from the
 * frame bytes (not from the 12-byte BTH array, which they lie beyond). */
static inline const struct reth *pkt_reth(const struct rocev2_pkt *p)
{
	return (const struct reth *)((const uint8_t *)p->bth + p->info->reth);
}
static inline const struct aeth *pkt_aeth(const struct rocev2_pkt *p)
{
	return (const struct aeth *)((const uint8_t *)p->bth + p->info->aeth);
}
static inline const struct atmeth *pkt_atmeth(const struct rocev2_pkt *p)
{
	return (const struct atmeth *)((const uint8_t *)p->bth + p->info->atmeth);
}
static inline const struct atmack *pkt_atmack(const struct rocev2_pkt *p)
{
	return (const struct atmack *)((const uint8_t *)p->bth + p->info->atmack);
}
static inline const struct immdt *pkt_immdt(const struct rocev2_pkt *p)
{
	return (const struct immdt *)((const uint8_t *)p->bth + p->info->immdt);
}
static inline const struct ieth *pkt_ieth(const struct rocev2_pkt *p)
{
	return (const struct ieth *)((const uint8_t *)p->bth + p->info->ieth);
}

/* ---- transmit (net.c) -------------------------------------------------- */
struct rocev2_tx {
	uint8_t *frame;                 /* in e->tx: e->tx + ROCEV2_TX_BTH - the family's header offset */
	uint8_t *bth;                   /* extension headers at bth + info->reth ... */
	uint8_t *payload;               /* caller copies paylen bytes here */
	uint32_t paylen;
	uint16_t ip_sum;                /* the QP template's, for the checksum */
	uint8_t opcode;
	uint8_t flags;                  /* the template's TX_F_* */
};
#define TX_F_V6     1u              /* RoCEv2 over IPv6 */
#define TX_F_NO_SRC 2u              /* no source address of the family */

/* Lay out Ethernet/IPv4/UDP/BTH for qp's address vector into e->tx (from
 * the QP's template, built first if stale).  The caller then fills the
 * extension headers and payload and calls rocev2_tx_send.  paylen <=
 * qp->mtu. */
void rocev2_tx_prepare(struct rocev2 *e, struct rocev2_qp *qp, struct rocev2_tx *t,
		       uint8_t opcode, uint32_t psn, int ackreq, int se, uint32_t paylen);
/* The TOS byte (IPv4) or traffic class (IPv6) of a prepared frame. */
static inline uint8_t rocev2_tx_tos(const struct rocev2_tx *t)
{
	const uint8_t *ip = t->frame + ETH_HLEN;

	return (t->flags & TX_F_V6) ? ipv6_tclass((const struct ipv6_hdr *)ip) : ip[1];
}
/* Rewrite it; over IPv4 t->ip_sum follows (RFC 1624: one's-complement
 * subtraction of the old 16-bit word, addition of the new), so tx_send's
 * checksum stays right; IPv6 has no header checksum. */
static inline void rocev2_tx_set_tos(struct rocev2_tx *t, uint8_t tos)
{
	uint8_t *ip = t->frame + ETH_HLEN;
	uint16_t old = (uint16_t)(ip[0] << 8 | ip[1]);

	if (t->flags & TX_F_V6) {
		ip[0] = (uint8_t)((ip[0] & 0xf0u) | tos >> 4);
		ip[1] = (uint8_t)((ip[1] & 0x0fu) | (uint8_t)(tos << 4));
		return;
	}
	ip[1] = tos;
	t->ip_sum = csum16_add(csum16_add(t->ip_sum, (uint16_t)~old), (uint16_t)(ip[0] << 8 | tos));
}
static inline void rocev2_tx_tmpl_stale(struct rocev2_qp *qp)
{
	qp->tmpl.gen = 0;
}
static inline void rocev2_tx_tmpl_stale_all(struct rocev2 *e)
{
	/* gen 0 is "none": tmpl_gen + 1 never wraps to it. */
	e->tmpl_gen = e->tmpl_gen + 2u == 0u ? 0u : e->tmpl_gen + 1u;
}
/* Pad, IPv4 checksum, ICRC, transmit.  0, -HAL_EAGAIN (ring full: nothing
 * sent, counted in tx_busy) or another error. */
int rocev2_tx_send(struct rocev2 *e, struct rocev2_tx *t);

/* ---- the port's addresses (rocev2.c; rocev2.h rocev2_set_gid) ---------- */
/* The GID qp sends from (its av.sgid_index's entry, else the port's first
 * address of the destination's family and scope): 0 and src set, or
 * -HAL_ENXIO when the port has none. */
int rocev2_qp_sgid(const struct rocev2 *e, const struct rocev2_qp *qp, uint8_t *src);
/* 1 when addr (16 bytes, the IPv6 daddr of a frame) is one of the port's
 * valid IPv6 entries; an IPv4 daddr (host order) one of its v4 ones. */
int rocev2_gid_ours6(const struct rocev2 *e, const uint8_t *addr);
int rocev2_gid_ours4(const struct rocev2 *e, uint32_t daddr);

/* ---- ICRC (icrc.c) ------------------------------------------------------ */
/* ICRC of an IPv4 RoCEv2 packet: ip points at the IPv4 header, len covers
 * IPv4 header .. end of pad (ICRC excluded).  Masks TOS, TTL, IP checksum,
 * UDP checksum and BTH byte 4 (IBA A17.3.3). */
uint32_t rocev2_icrc(const uint8_t *ip, size_t len);
/* The same with a given engine on the bare register (lib/crc32.h):
 * rocev2_icrc is rocev2_icrc_by(the fastest engine of this build); tests
 * and bench/ run the others through it to cross-check and time them. */
uint32_t rocev2_icrc_by(crc32_raw_fn *engine, const uint8_t *ip, size_t len);
/* The same over IPv6: ip points at the IPv6 header; masks traffic class,
 * flow label, hop limit, UDP checksum and BTH byte 4 (IBA A17.3.3). */
uint32_t rocev2_icrc6(const uint8_t *ip, size_t len);
uint32_t rocev2_icrc6_by(crc32_raw_fn *engine, const uint8_t *ip, size_t len);

/* ---- receive demux (recv.c) ---------------------------------------------- */
/* Parse and check one frame; 0 and *pkt filled, or a negative error with
 * the discard counted. */
int rocev2_parse(struct rocev2 *e, const uint8_t *frame, size_t len, struct rocev2_pkt *pkt);
/* ethq.c: 1 when the frame was the host's (written to its RX ring or
 * dropped and counted), 0 when it is RoCEv2 for the engine (or no host
 * queue exists).  tx: send up to budget posted frames (how many moved);
 * pending: TX posted or a raise due;
 * raise: the queues' vector once for the completions written. */
int rocev2_ethq_rx(struct rocev2 *e, const uint8_t *frame, size_t len);
unsigned rocev2_ethq_tx(struct rocev2 *e, unsigned budget);
int rocev2_ethq_pending(const struct rocev2 *e);
void rocev2_ethq_raise(struct rocev2 *e);

/* ---- objects (pd.c mr.c cq.c srq.c qp.c) ---------------------------------- */
struct rocev2_qp *rocev2_qp_lookup(struct rocev2 *e, uint32_t qpn);
int rocev2_qpn_stale(const struct rocev2 *e, uint32_t qpn);
/* Build QP `qpn` in its (free) slot from `a`, in RESET: create and restore
 * (restore.c, need_written 0: its MTTs are refilled before the resume)
 * share it.  0, or -HAL_EINVAL for a bad reference or queue. */
int rocev2_qp_install(struct rocev2 *e, uint32_t qpn, const struct rocev2_qp_init_attr *a,
		      int need_written);
struct rocev2_mr *rocev2_mr_lookup(struct rocev2 *e, uint32_t key);   /* lkey or rkey */
/* 0 if [va, va+len) is inside mr, mr belongs to pd and grants access. */
int rocev2_mr_check(const struct rocev2_mr *mr, uint16_t pd, uint64_t va, uint64_t len,
		    uint32_t access);
/* Move qp to ERR (IBA 10.3.1): flush both queues, post the event. */
void rocev2_qp_to_error(struct rocev2 *e, struct rocev2_qp *qp, int event);
/* Queue an event for owner, the context of the object it names. */
void rocev2_post_event(struct rocev2 *e, uint16_t owner, uint32_t type, uint32_t handle);

/* ---- memory translation (mtt.c) ------------------------------------------ */
/* The live MTT handle names; NULL for ROCEV2_NO_MTT, stale, free, out of range. */
struct rocev2_mtt *rocev2_mtt_get(struct rocev2 *e, uint32_t mtt);
/* May an object of the creating owner use [addr, addr + len) through mtt?
 * ROCEV2_NO_MTT: the range inside env.dma's window (-HAL_EFAULT).  Else
 * -HAL_EINVAL (no such MTT, or another owner's), -HAL_EFAULT (not inside
 * its IOVA range), -HAL_EAGAIN (need_written and not every entry written:
 * a restore attaches to unwritten MTTs, resume waits for them); each
 * refusal counted. */
int rocev2_mtt_check(struct rocev2 *e, uint32_t mtt, uint64_t addr, uint64_t len,
		     int need_written);
/* The MTT at slot idx (free) with generation gen and shape a, unwritten:
 * rocev2_create_mtt and the restore (restore.c) share it. */
int rocev2_mtt_install(struct rocev2 *e, uint32_t idx, uint16_t gen,
		       const struct rocev2_mtt_attr *a);
/* An object takes (delta 1) or drops (-1) its reference; no-op for
 * ROCEV2_NO_MTT. */
void rocev2_mtt_ref(struct rocev2 *e, uint32_t mtt, int delta);
static inline void rocev2_queue_mtt_ref(struct rocev2 *e, const struct rocev2_queue_attr *q,
					int delta)
{
	rocev2_mtt_ref(e, q->ring_mtt, delta);
	rocev2_mtt_ref(e, q->dbrec_mtt, delta);
}
/* 1 when every MTT of owner has all its entries written. */
int rocev2_owner_mtts_written(const struct rocev2 *e, uint32_t owner);
/* The first chunk of [addr, addr + len) through mtt (not ROCEV2_NO_MTT):
 * its HPA and its bytes, never past the end of its page.  -HAL_EFAULT
 * (counted in xlate_faults) outside the MTT's range or on an unwritten
 * entry. */
int rocev2_mtt_xlate(struct rocev2 *e, uint32_t mtt, uint64_t addr, uint64_t len,
		     uint64_t *hpa, uint64_t *chunk);
/* Every engine access to host memory: through mtt, one page at a time;
 * ROCEV2_NO_MTT: addr is an HPA (hal_dma directly).  < 0 on a
 * translation fault or a DMA error (callers count dma_errors). */
int rocev2_host_read(struct rocev2 *e, uint32_t mtt, uint64_t addr, void *dst, size_t len);
int rocev2_host_write(struct rocev2 *e, uint32_t mtt, uint64_t addr, const void *src, size_t len);
/* The same for the engine's own small structures on the packet path (a
 * WQE, a doorbell record, a CQE): inline, so that untranslated it costs a
 * bounds check and a few moves (hal_dma's window copy is inline too; issue
 * 18 item 2); translated, or another backend, the calls above.  Payloads
 * keep those calls: a call is nothing beside their copy, and the boards'
 * text stays small. */
static inline int rocev2_ctl_read(struct rocev2 *e, uint32_t mtt, uint64_t addr, void *dst, size_t len)
{
	if (mtt == ROCEV2_NO_MTT && e->env.dma->ops == &hal_dma_window_ops)
		return hal_dma_window_read(e->env.dma, addr, dst, len);
	return rocev2_host_read(e, mtt, addr, dst, len);
}
static inline int rocev2_ctl_write(struct rocev2 *e, uint32_t mtt, uint64_t addr, const void *src,
				   size_t len)
{
	if (mtt == ROCEV2_NO_MTT && e->env.dma->ops == &hal_dma_window_ops)
		return hal_dma_window_write(e->env.dma, addr, src, len);
	return rocev2_host_write(e, mtt, addr, src, len);
}

/* ---- host queues (queue.c) ------------------------------------------------ */
/* Refresh the host producer index of a WQ from its doorbell record;
 * returns how many WQEs are posted beyond ci (bounded by the ring size). */
uint32_t rocev2_wq_refresh(struct rocev2 *e, struct rocev2_wq *wq);
/* Read send WQE `index` from the SQ and validate it (opcode, num_sge <=
 * max_send_sge). -HAL_EINVAL for an invalid WQE, -HAL_EFAULT on DMA error. */
int rocev2_sq_read(struct rocev2 *e, struct rocev2_qp *qp, uint32_t index,
		   struct mnic_send_wqe *wqe);
/* Take the next receive WQE from the QP's RQ or its SRQ (limit event if
 * armed).  -HAL_EAGAIN when none is posted (-> RNR NAK). */
int rocev2_rq_take(struct rocev2 *e, struct rocev2_qp *qp, struct mnic_recv_wqe *wqe);
/* Write one CQE (owner byte last).  -HAL_ENOSPC on overflow: the CQ goes
 * to error and ROCEV2_EVENT_CQ_ERR is posted. */
int rocev2_cq_post(struct rocev2 *e, uint16_t cq, struct mnic_cqe *cqe);
/* Write cqe into slot pi of the CQ ring q with that slot's owner phase
 * (body, barrier, owner byte); 0 or -HAL_EFAULT (dma_errors).  cq_post,
 * cq_resize. */
int rocev2_cq_write(struct rocev2 *e, const struct rocev2_queue_attr *q, uint32_t pi,
		    const struct mnic_cqe *cqe);

/* ---- completion events (eq.c) --------------------------------------------- */
/* Post the CQ's event to its EQ and disarm it (one event per arm). */
void rocev2_cq_fire(struct rocev2 *e, struct rocev2_cq *cq, uint32_t idx);
/* rec's arm word differs from the one last acted on: take it, and fire at
 * once when CQEs past rec->index qualify (the re-arm race). */
void rocev2_cq_arm_new(struct rocev2 *e, struct rocev2_cq *cq, uint32_t idx,
		       const struct mnic_dbrec *rec);
/* The CQ's doorbell record was read (rec), on every CQE and db_seq: act on
 * a changed arm word.  Inline, as the one below, because a CQE's record
 * almost always carries the word already seen (issue 18 item 2). */
static inline void rocev2_cq_arm_take(struct rocev2 *e, struct rocev2_cq *cq, uint32_t idx,
				      const struct mnic_dbrec *rec)
{
	if (rec->arm != cq->arm_seen)
		rocev2_cq_arm_new(e, cq, idx, rec);
}
/* A CQE was written at cq->pi - 1 (solicited: MNIC_CQE_SOLICITED or an
 * error): fire the arm if it qualifies. */
static inline void rocev2_cq_completed(struct rocev2 *e, struct rocev2_cq *cq, uint32_t idx,
				       int solicited)
{
	if (solicited) {
		cq->has_solicited = 1;
		cq->sol_end = cq->pi;
	}
	if (cq->armed == MNIC_CQ_ARM_NEXT || (cq->armed == MNIC_CQ_ARM_SOLICITED && solicited))
		rocev2_cq_fire(e, cq, idx);
}
/* db_seq moved: re-read the arm word of every CQ bound to an EQ. */
unsigned rocev2_cq_arms_changed(struct rocev2 *e);
/* 0 and *owner for a live EQ handle, else -HAL_EINVAL (query.c). */
int rocev2_eq_owner(struct rocev2 *e, uint32_t handle, uint32_t *owner);
/* Reset a CQ's event state (create, restore): no EQ, disarmed, sn 0. */
void rocev2_cq_events_reset(struct rocev2_cq *cq);
/* The CQ goes: unbind it from its EQ. */
void rocev2_cq_unbind(struct rocev2 *e, struct rocev2_cq *cq);
/* Gather len bytes at message offset off from a scatter/gather list into
 * dst (transmit payload); scatter src into it (receive).  Every SGE is
 * checked against its MR (lkey, PD, bounds, LOCAL_WRITE for scatter).
 * 0, -HAL_EFAULT (protection: bad lkey/bounds/access) or -HAL_E2BIG (off+len
 * beyond the list: local length error). */
int rocev2_sge_gather(struct rocev2 *e, const struct rocev2_qp *qp, const struct mnic_sge *sge,
		      unsigned n, uint64_t off, void *dst, uint32_t len);
int rocev2_sge_scatter(struct rocev2 *e, const struct rocev2_qp *qp, const struct mnic_sge *sge,
		       unsigned n, uint64_t off, const void *src, uint32_t len);
/* Sum of SGE lengths; -HAL_E2BIG if it exceeds ROCEV2_MAX_MSG. */
static inline int rocev2_sge_total(const struct mnic_sge *sge, unsigned n, uint64_t *total)
{
	uint64_t sum = 0;
	unsigned i;

	if (n > MNIC_MAX_SGE)
		return -HAL_E2BIG;
	for (i = 0; i < n; i++)
		sum += sge[i].length;          /* <= 28 * (2^32 - 1): cannot wrap */
	*total = sum;
	return sum > ROCEV2_MAX_MSG ? -HAL_E2BIG : 0;
}
/* Host memory by remote key (responder): copy [va, va + len) of the MR
 * rkey names (its range and access checked before), through its MTT. */
int rocev2_mem_write(struct rocev2 *e, uint32_t rkey, uint64_t va, const void *src, uint32_t len);
int rocev2_mem_read(struct rocev2 *e, uint32_t rkey, uint64_t va, void *dst, uint32_t len);

/* ---- scheduler (rocev2.c) ------------------------------------------------- */
/* Queue qp so that rocev2_poll runs its responder and requester. */
void rocev2_sched(struct rocev2 *e, struct rocev2_qp *qp);

/* ---- stage entry points ---------------------------------------------------- */
void rocev2_req_reset(struct rocev2_qp *qp);
void rocev2_comp_reset(struct rocev2 *e, struct rocev2_qp *qp);
void rocev2_resp_reset(struct rocev2_qp *qp);
/* Requester: send up to budget packets; returns packets sent.  Leaves the
 * QP scheduled if it stopped for the budget or a full TX ring. */
unsigned rocev2_req_run(struct rocev2 *e, struct rocev2_qp *qp, unsigned budget);
/* Completer: one response packet (ACK/NAK/read response/atomic ACK). */
void rocev2_comp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt);
/* Responder: one request packet. */
void rocev2_resp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt);
/* Responder: continue read replies in progress; returns packets sent. */
unsigned rocev2_resp_run(struct rocev2 *e, struct rocev2_qp *qp, unsigned budget);
/* Responder: the context resumes (rocev2_resume_context): replies still
 * to be sent may be ones the requester already has. */
void rocev2_resp_resumed(struct rocev2_qp *qp);
/* Flush: complete every outstanding and posted WQE with WR_FLUSH_ERR
 * (send queue: after the WQE that failed, which comp completes itself). */
void rocev2_req_flush(struct rocev2 *e, struct rocev2_qp *qp);
void rocev2_resp_flush(struct rocev2 *e, struct rocev2_qp *qp);

/* ---- congestion control (cc.c) -------------------------------------------- */
/* Notification point: qp received a packet marked CE: a CNP to its peer
 * QP unless one went out within cnp_interval_us. */
void rocev2_cc_ce(struct rocev2 *e, struct rocev2_qp *qp);
/* Reaction point: a CNP for qp (the demux checked QP, state, source). */
void rocev2_cc_cnp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt);
/* Requester, only while qp->cc.active: 1 if the pacer has tokens for the
 * next packet, else 0 with the pacer timer armed (it schedules the QP). */
int rocev2_cc_may_send(struct rocev2 *e, struct rocev2_qp *qp);
/* Requester, only while qp->cc.active: a packet of bytes went out. */
void rocev2_cc_sent(struct rocev2 *e, struct rocev2_qp *qp, uint32_t bytes);
/* QP created or reset: idle at line rate, timers idle (setup 1: the
 * timers' storage is fresh and must be set up before anything cancels). */
void rocev2_cc_reset(struct rocev2 *e, struct rocev2_qp *qp, int setup);
/* The QP stops (destroy, ERR): its timers leave the heap. */
void rocev2_cc_stop(struct rocev2 *e, struct rocev2_qp *qp);

/* ---- migration (migrate.c) ---------------------------------------------- */
/* Build switch: ROCEV2_MIGRATION=0 compiles the engine without the
 * migration extension (no migrate.c and no image codec: image.c,
 * image_records.c, dump.c, restore.c; the hooks below are no-ops and
 * the Stopped/Paused/RESUME tests on the packet paths are constant false),
 * so make bench can measure what migration support costs per packet
 * (mig_overhead_ratio).  Firmware and tests always build with it. */
#ifndef ROCEV2_MIGRATION
#define ROCEV2_MIGRATION 1
#endif
#define MIG_STOPPED(qp) (ROCEV2_MIGRATION && (qp)->stopped)
#define MIG_PAUSED(qp) (ROCEV2_MIGRATION && (qp)->paused)
#define MIG_RESUME_PENDING(qp) (ROCEV2_MIGRATION && (qp)->mig.resume_pending)
#if ROCEV2_MIGRATION
/* The completer got a NAK_STOPPED that rocev2_mig_check_nak_stopped
 * accepted: qp->paused is set; start the pause timer. */
void rocev2_mig_paused(struct rocev2 *e, struct rocev2_qp *qp);
/* 0 if a NAK_STOPPED (ACKNOWLEDGE, syndrome 0x65) may pause qp: its
 * extension's epoch and MAC (migrate.c header comment); < 0: dropped,
 * counted.  Checked before the NAK moves anything. */
int rocev2_mig_check_nak_stopped(struct rocev2 *e, struct rocev2_qp *qp,
				 const struct rocev2_pkt *pkt);
/* 1 if an ACKNOWLEDGE is the ACK of our pending RESUME (its extension
 * echoes the RESUME's epoch and PSN, with the MAC); 0 otherwise. */
int rocev2_mig_is_resume_ack(struct rocev2 *e, struct rocev2_qp *qp,
			     const struct rocev2_pkt *pkt);
/* The responder got a RESUME: check it, follow it (new address from its
 * authenticated payload, un-pause, rewind) and send its ACK.  1 when it
 * completed a migration, 0 when it was only acknowledged again (it
 * changes nothing), < 0 when dropped (counted). */
int rocev2_mig_rx_resume(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt);
/* Bytes of the extension an ACKNOWLEDGE with this syndrome carries, and
 * the extension itself into buf (resp.c, NAK_STOPPED). */
uint32_t rocev2_mig_ack_ext_len(const struct rocev2_qp *qp, uint8_t syndrome);
void rocev2_mig_put_ack_ext(const struct rocev2_qp *qp, uint8_t syndrome, uint32_t psn,
			    uint8_t *buf);
/* The completer saw the ACK of our RESUME (rocev2_mig_is_resume_ack). */
void rocev2_mig_resume_acked(struct rocev2 *e, struct rocev2_qp *qp);
/* modify_qp moved the QP to RTS: a QP resumed in RTR sends its RESUME now. */
void rocev2_mig_rts(struct rocev2 *e, struct rocev2_qp *qp);
void rocev2_mig_reset(struct rocev2 *e, struct rocev2_qp *qp);
#else
static inline void rocev2_mig_paused(struct rocev2 *e, struct rocev2_qp *qp) { (void)e; (void)qp; }
static inline int rocev2_mig_check_nak_stopped(struct rocev2 *e, struct rocev2_qp *qp,
					       const struct rocev2_pkt *pkt)
{
	(void)e; (void)qp; (void)pkt;
	return -HAL_EACCES;   /* no migration support: nothing pauses */
}
static inline int rocev2_mig_is_resume_ack(struct rocev2 *e, struct rocev2_qp *qp,
					   const struct rocev2_pkt *pkt)
{
	(void)e; (void)qp; (void)pkt;
	return 0;
}
static inline int rocev2_mig_rx_resume(struct rocev2 *e, struct rocev2_qp *qp,
				       const struct rocev2_pkt *pkt)
{
	(void)e; (void)qp; (void)pkt;
	return -HAL_EACCES;   /* no migration support: RESUME is refused */
}
static inline uint32_t rocev2_mig_ack_ext_len(const struct rocev2_qp *qp, uint8_t syndrome)
{
	(void)qp; (void)syndrome;
	return 0;
}
static inline void rocev2_mig_put_ack_ext(const struct rocev2_qp *qp, uint8_t syndrome,
					  uint32_t psn, uint8_t *buf)
{
	(void)qp; (void)syndrome; (void)psn; (void)buf;
}
static inline void rocev2_mig_resume_acked(struct rocev2 *e, struct rocev2_qp *qp) { (void)e; (void)qp; }
static inline void rocev2_mig_rts(struct rocev2 *e, struct rocev2_qp *qp) { (void)e; (void)qp; }
static inline void rocev2_mig_reset(struct rocev2 *e, struct rocev2_qp *qp) { (void)e; (void)qp; }
#endif

static inline uint64_t rocev2_now(const struct rocev2 *e)
{
	return e->env.now_ns(e->env.ctx);
}

#endif
