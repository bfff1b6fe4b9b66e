/* mnic-switch's pure parts (see switch_core.h). */
#include <stdio.h>
#include <string.h>

#include "switch_core.h"
#include "lib/mac.h"

/* ---- MAC table ------------------------------------------------------------ */

void sw_mac_init(struct sw_mac_table *t, uint64_t age_ms)
{
	memset(t, 0, sizeof(*t));
	t->age_ms = age_ms;
}

static int entry_live(const struct sw_mac_table *t, const struct sw_mac_entry *e, uint64_t now_ms)
{
	return e->port != 0 && now_ms - e->seen_ms < t->age_ms;
}

int sw_mac_learn(struct sw_mac_table *t, const uint8_t mac[SW_ALEN], int port, uint64_t now_ms)
{
	struct sw_mac_entry *slot = NULL, *stalest = NULL;
	int moved;

	if (sw_mac_is_group(mac) || port <= 0)
		return 0;
	for (unsigned i = 0; i < SW_MAC_TABLE_SIZE; i++) {
		struct sw_mac_entry *e = &t->e[i];

		if (e->port != 0 && !memcmp(e->mac, mac, SW_ALEN)) {
			/* An aged-out entry coming back counts as new. */
			moved = e->port != port || !entry_live(t, e, now_ms);
			t->moved += e->port != port;
			e->port = port;
			e->seen_ms = now_ms;
			return moved;
		}
		if (e->port == 0 || !entry_live(t, e, now_ms)) {
			if (!slot)
				slot = e;
		} else if (!stalest || e->seen_ms < stalest->seen_ms) {
			stalest = e;
		}
	}
	if (!slot) {
		slot = stalest;
		t->evicted++;
	}
	memcpy(slot->mac, mac, SW_ALEN);
	slot->port = port;
	slot->seen_ms = now_ms;
	t->learned++;
	return 1;
}

int sw_mac_lookup(const struct sw_mac_table *t, const uint8_t mac[SW_ALEN], uint64_t now_ms)
{
	if (sw_mac_is_group(mac))
		return 0;
	for (unsigned i = 0; i < SW_MAC_TABLE_SIZE; i++) {
		const struct sw_mac_entry *e = &t->e[i];

		if (e->port != 0 && !memcmp(e->mac, mac, SW_ALEN))
			return entry_live(t, e, now_ms) ? e->port : 0;
	}
	return 0;
}

void sw_mac_forget_port(struct sw_mac_table *t, int port)
{
	for (unsigned i = 0; i < SW_MAC_TABLE_SIZE; i++)
		if (t->e[i].port == port)
			t->e[i].port = 0;
}

/* ---- egress queue ---------------------------------------------------------- */

void sw_queue_init(struct sw_queue *q, struct sw_slot *slots, uint32_t depth)
{
	q->slots = slots;
	q->depth = depth;
	q->head = q->count = q->max_count = 0;
}

int sw_queue_push(struct sw_queue *q, const void *frame, size_t len)
{
	struct sw_slot *s;

	if (q->count >= q->depth || len > SW_MAX_FRAME)
		return -1;
	s = &q->slots[(q->head + q->count) % q->depth];
	memcpy(s->data, frame, len);
	s->len = len;
	q->count++;
	if (q->count > q->max_count)
		q->max_count = q->count;
	return 0;
}

const struct sw_slot *sw_queue_peek(const struct sw_queue *q)
{
	return q->count ? &q->slots[q->head] : NULL;
}

void sw_queue_pop(struct sw_queue *q)
{
	if (!q->count)
		return;
	q->head = (q->head + 1) % q->depth;
	q->count--;
}

/* ---- ECN marking ------------------------------------------------------------ */

#define ETHERTYPE_IPV4 0x0800u
#define ETHERTYPE_VLAN 0x8100u   /* IEEE 802.1Q C-tag */
#define VLAN_TAG_LEN 4u
#define IPV4_MIN_HLEN 20u
#define IPV4_TOS 1u              /* RFC 791 3.1 */
#define IPV4_CSUM 10u
#define ECN_MASK 0x03u           /* RFC 3168 5: the ECN field */
#define ECN_NOT_ECT 0x00u
#define ECN_CE 0x03u

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int sw_ecn_mark_ce(uint8_t *frame, size_t len)
{
	size_t ip = SW_ETH_HEADER_LEN;
	uint16_t type, old_word, new_word;
	uint32_t sum;
	uint8_t *h;

	if (len < SW_ETH_HEADER_LEN)
		return 0;
	type = get_be16(frame + 12);
	if (type == ETHERTYPE_VLAN) {
		if (len < SW_ETH_HEADER_LEN + VLAN_TAG_LEN)
			return 0;
		type = get_be16(frame + 16);
		ip += VLAN_TAG_LEN;
	}
	if (type != ETHERTYPE_IPV4 || len < ip + IPV4_MIN_HLEN)
		return 0;
	h = frame + ip;
	if (h[0] >> 4 != 4 || (h[0] & 0x0f) < 5 || len < ip + (size_t)(h[0] & 0x0f) * 4)
		return 0;
	if ((h[IPV4_TOS] & ECN_MASK) == ECN_NOT_ECT || (h[IPV4_TOS] & ECN_MASK) == ECN_CE)
		return 0;
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') over the 16-bit word m that
	 * holds the TOS byte (version/IHL, TOS), in one's-complement sums. */
	old_word = get_be16(h);
	h[IPV4_TOS] |= ECN_CE;
	new_word = get_be16(h);
	sum = (uint16_t)~get_be16(h + IPV4_CSUM);
	sum += (uint16_t)~old_word;
	sum += new_word;
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	put_be16(h + IPV4_CSUM, (uint16_t)~sum);
	return 1;
}

/* ---- impairment rules -------------------------------------------------------- */

int sw_mac_parse(uint8_t mac[SW_ALEN], const char *s)
{
	return lib_mac_parse(s, mac);
}

uint64_t sw_shaper_wait_ns(const struct sw_shaper *s, uint64_t now_ns)
{
	if (!s->rate_mbps || s->free_ns <= now_ns)
		return 0;
	return s->free_ns - now_ns;
}

void sw_shaper_charge(struct sw_shaper *s, uint64_t now_ns, size_t len)
{
	if (!s->rate_mbps)
		return;
	if (s->free_ns + SW_SHAPER_SLACK_NS < now_ns)
		s->free_ns = now_ns - SW_SHAPER_SLACK_NS;   /* idle: credit capped */
	/* 1 Mbit/s is one bit per 1000 ns */
	s->free_ns += ((uint64_t)len + 24u) * 8u * 1000u / s->rate_mbps;
}

#define MAC_TEXT_LEN 17u

/* The keys the switch takes itself (every other goes to impair_parse):
 * each a whole number within its bounds, given at most once. */
static const struct sw_key {
	const char *name;           /* with its '=' */
	size_t off;                 /* of its uint32_t in struct sw_rule */
	uint32_t lo, hi;
	const char *example;
} sw_keys[] = {
	{ "ecn_queue=", offsetof(struct sw_rule, ecn_queue), 1, 999999,
	  "a queue depth in frames from 1 (ecn_queue=8)" },
	{ "rate_mbps=", offsetof(struct sw_rule, rate_mbps), 1, 100000,
	  "a line rate in Mbit/s, 1..100000 (rate_mbps=100)" },
};

/* 1: p[0..n) was one of sw_keys (parsed into r), 0: not ours, -1: bad. */
static int sw_key_parse(struct sw_rule *r, const char *p, size_t n, char *err, size_t errlen)
{
	for (size_t k = 0; k < sizeof(sw_keys) / sizeof(sw_keys[0]); k++) {
		const struct sw_key *key = &sw_keys[k];
		size_t i = strlen(key->name);
		uint32_t *field = (uint32_t *)((char *)r + key->off);
		unsigned long v = 0;

		if (n <= i || strncmp(p, key->name, i))
			continue;
		for (; i < n && p[i] >= '0' && p[i] <= '9'; i++)
			if (v <= key->hi)
				v = v * 10 + (unsigned long)(p[i] - '0');
		if (i != n || v < key->lo || v > key->hi || *field) {
			snprintf(err, errlen, "--impair: %.*s: give %.*s once, %s", (int)(n > 40 ? 40 : n),
				 p, (int)strlen(key->name) - 1, key->name, key->example);
			return -1;
		}
		*field = (uint32_t)v;
		return 1;
	}
	return 0;
}

int sw_rule_parse(struct sw_rule *r, const char *arg, char *err, size_t errlen)
{
	char rest[256], *out = rest;
	const char *p, *colon;
	struct sw_rule out_rule = { 0 };

	if (strlen(arg) >= MAC_TEXT_LEN + 1 && arg[MAC_TEXT_LEN] == ':' &&
	    sw_mac_parse(out_rule.mac, arg) == 0) {
		out_rule.by_mac = 1;
		p = arg + MAC_TEXT_LEN + 1;
	} else {
		unsigned long port = 0;
		size_t digits = 0;

		colon = strchr(arg, ':');
		for (const char *c = arg; colon && c < colon && *c >= '0' && *c <= '9'; c++, digits++)
			if (port < 100000)
				port = port * 10 + (unsigned long)(*c - '0');
		if (!colon || digits == 0 || arg + digits != colon || port == 0 || port >= 100000) {
			snprintf(err, errlen, "--impair %.40s: start with the port, a MAC "
				 "(52:54:00:00:00:01:drop=0.02) or a port number from 1 (2:drop=0.02)", arg);
			return -1;
		}
		out_rule.port = (int)port;
		p = colon + 1;
	}
	if (strlen(p) >= sizeof(rest)) {
		snprintf(err, errlen, "--impair: the spec after the port is longer than %zu bytes",
			 sizeof(rest) - 1);
		return -1;
	}
	/* ecn_queue and rate_mbps are ours (sw_keys); every other key goes to
	 * impair_parse(). */
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		int ours;

		if (end && end[1] == '\0') {
			snprintf(err, errlen, "--impair: empty item at the end (stray ',')");
			return -1;
		}
		ours = sw_key_parse(&out_rule, p, n, err, errlen);
		if (ours < 0)
			return -1;
		if (!ours) {
			if (out != rest)
				*out++ = ',';
			memcpy(out, p, n);
			out += n;
		}
		p += n + (end ? 1 : 0);
	}
	*out = '\0';
	if (impair_parse(&out_rule.impair, rest, err, errlen) < 0)
		return -1;
	*r = out_rule;
	return 0;
}
