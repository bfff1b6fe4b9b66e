/* mnic-switch's pure parts: the MAC table, the per-port egress queue, ECN
 * marking and the per-port impairment rules (fabric/mnic_switch.c holds the
 * sockets and the VDE protocol).  No I/O here, so each part is unit-tested
 * on its own (tests/unit/fabric/test_switch_core.c).
 */
#ifndef FABRIC_SWITCH_CORE_H
#define FABRIC_SWITCH_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "hal/eth.h"
#include "impair.h"

#define SW_ALEN 6u
#define SW_ETH_HEADER_LEN 14u
/* The longest frame the switch carries: the boards' jumbo frame, which is
 * also the longest the impairment can copy (corrupt, reorder). */
#define SW_MAX_FRAME HAL_ETH_MAX_FRAME

/* ---- MAC table -----------------------------------------------------------
 * IEEE 802.1D-2004 7.8/7.9: the filtering database learns a source address
 * on the port it arrived on; an entry not refreshed within the ageing time
 * (default 300 s, 802.1D Table 7-5) no longer forwards.  A test fabric
 * holds a handful of stations, so the table is a small array searched in
 * full; when it is full the stalest entry makes room. */
#define SW_MAC_TABLE_SIZE 256u

struct sw_mac_entry {
	uint8_t mac[SW_ALEN];
	int port;            /* 0 = free */
	uint64_t seen_ms;
};

struct sw_mac_table {
	struct sw_mac_entry e[SW_MAC_TABLE_SIZE];
	uint64_t age_ms;
	uint64_t learned, moved, evicted;   /* new entries, port changes, evictions */
};

void sw_mac_init(struct sw_mac_table *t, uint64_t age_ms);
/* Learn (or refresh) mac on port at now_ms.  Group addresses are never
 * learned (802.1D 7.8: only individual source addresses).  Returns 1 when
 * the entry is new or moved to another port, 0 when refreshed or ignored. */
int sw_mac_learn(struct sw_mac_table *t, const uint8_t mac[SW_ALEN], int port, uint64_t now_ms);
/* The port mac was learned on, or 0 when unknown, aged out or a group
 * address (the caller floods). */
int sw_mac_lookup(const struct sw_mac_table *t, const uint8_t mac[SW_ALEN], uint64_t now_ms);
/* Forget every entry on port (it closed). */
void sw_mac_forget_port(struct sw_mac_table *t, int port);

static inline int sw_mac_is_group(const uint8_t mac[SW_ALEN])
{
	return mac[0] & 1u;   /* I/G bit, IEEE 802-2014 8.2 */
}

/* ---- egress queue ---------------------------------------------------------
 * A ring of whole frames waiting for a port's socket to accept them.  The
 * caller gives the slots (depth of them). */
struct sw_slot {
	size_t len;
	uint8_t data[SW_MAX_FRAME];
};

struct sw_queue {
	struct sw_slot *slots;
	uint32_t depth, head, count;
	uint32_t max_count;   /* high-water mark */
};

void sw_queue_init(struct sw_queue *q, struct sw_slot *slots, uint32_t depth);
/* Copy a frame in at the tail.  -1 when full or len > SW_MAX_FRAME. */
int sw_queue_push(struct sw_queue *q, const void *frame, size_t len);
/* The head frame, or NULL when empty. */
const struct sw_slot *sw_queue_peek(const struct sw_queue *q);
void sw_queue_pop(struct sw_queue *q);

/* ---- ECN marking ----------------------------------------------------------
 * RFC 3168 5: an ECN-capable packet (ECT(0) = 10 or ECT(1) = 01 in the low
 * two bits of the IPv4 TOS byte) that meets congestion is marked CE (11);
 * Not-ECT (00) is never marked and CE stays CE.  The header checksum is
 * updated incrementally (RFC 1624 3, eqn. 3).  RoCEv2's ICRC does not cover
 * the field (IBA A17.3.3: TOS, TTL and the checksum are masked), so
 * the mark keeps the packet valid.  One 802.1Q tag is looked through.
 * Returns 1 when the frame was marked, 0 otherwise (not IPv4, not ECN
 * capable, already CE, or too short for its header). */
int sw_ecn_mark_ce(uint8_t *frame, size_t len);

/* ---- egress shaper --------------------------------------------------------
 * A port's line rate: a frame of len bytes (without FCS) holds an Ethernet
 * link for (len + 24) * 8 / rate bits' time: FCS 4, preamble and SFD 8,
 * the minimum inter-packet gap 12 (IEEE 802.3-2018 3.1.1, 4.4.2).  The
 * shaper keeps the time the link is next free.  The switch wakes for it
 * a little late (timer and scheduling latency), so the link may lag the
 * clock by up to SW_SHAPER_SLACK_NS and catch up: the average rate holds,
 * and an idle link saves no more credit than that (a burst of at most
 * slack x rate: 1.25 KB at 20 Mbit/s). */
#define SW_SHAPER_SLACK_NS 500000u
struct sw_shaper {
	uint32_t rate_mbps;         /* 0 = not shaped */
	uint64_t free_ns;           /* the link is busy until then */
};

/* Nanoseconds until a frame of len bytes may start at now_ns (0: now).
 * Charges nothing: sw_shaper_charge once the frame has gone. */
uint64_t sw_shaper_wait_ns(const struct sw_shaper *s, uint64_t now_ns);
void sw_shaper_charge(struct sw_shaper *s, uint64_t now_ns, size_t len);

/* ---- impairment rules -----------------------------------------------------
 *   --impair PORTSPEC:KEY=VALUE,...
 * PORTSPEC is a MAC (xx:xx:xx:xx:xx:xx: the port the switch learns that
 * source address on) or a port number (1, 2, ...: in the order ports join).
 * Keys: those of hal/posix/impair.h (drop, dup, reorder, corrupt, seed),
 * applied to frames in both directions of the port (from it with seed, to it
 * with seed + 1, as the POSIX NIC does), ecn_queue=K: frames to the port
 * are marked CE while its egress queue holds >= K frames, and rate_mbps=R:
 * the port's egress is a link of R Mbit/s (sw_shaper), so a sender faster
 * than that fills the port's queue, a real bottleneck for ECN to mark. */
#define SW_MAX_RULES 16u

struct sw_rule {
	int by_mac;                 /* 1: match mac, 0: match port */
	uint8_t mac[SW_ALEN];
	int port;
	struct impair_cfg impair;
	uint32_t ecn_queue;         /* 0 = no marking */
	uint32_t rate_mbps;         /* 0 = the socket's pace */
};

/* Parse one --impair argument.  Returns 0, or -1 with a message naming what
 * to fix in err. */
int sw_rule_parse(struct sw_rule *r, const char *arg, char *err, size_t errlen);
/* Parse "xx:xx:xx:xx:xx:xx" (exactly 17 characters of s). Returns 0 or -1. */
int sw_mac_parse(uint8_t mac[SW_ALEN], const char *s);

#endif
