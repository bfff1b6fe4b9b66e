/* fabric/switch_core.c: MAC learning and ageing, the egress queue, ECN
 * marking with its checksum, and the --impair rules (port, keys, seeded
 * decisions reproducible per rule). */
#include "cmocka_main.h"

#include <stdlib.h>
#include <string.h>

#include "switch_core.h"

static const uint8_t mac_a[SW_ALEN] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t mac_b[SW_ALEN] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t bcast[SW_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t mcast[SW_ALEN] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };

static struct sw_mac_table table;

/* ---- MAC table --------------------------------------------------------------- */

static void test_mac_learn_lookup(void **state)
{
	(void)state;
	sw_mac_init(&table, 1000);
	assert_int_equal(sw_mac_lookup(&table, mac_a, 0), 0);          /* unknown: flood */
	assert_int_equal(sw_mac_learn(&table, mac_a, 1, 0), 1);
	assert_int_equal(sw_mac_learn(&table, mac_b, 2, 0), 1);
	assert_int_equal(sw_mac_lookup(&table, mac_a, 10), 1);
	assert_int_equal(sw_mac_lookup(&table, mac_b, 10), 2);
	assert_int_equal(sw_mac_learn(&table, mac_a, 1, 20), 0);       /* refresh only */
	assert_int_equal(sw_mac_learn(&table, mac_a, 3, 30), 1);       /* the station moved */
	assert_int_equal(sw_mac_lookup(&table, mac_a, 30), 3);
	assert_int_equal(table.learned, 2);
	assert_int_equal(table.moved, 1);
}

static void test_mac_group_never_learned(void **state)
{
	(void)state;
	sw_mac_init(&table, 1000);
	assert_int_equal(sw_mac_learn(&table, bcast, 1, 0), 0);
	assert_int_equal(sw_mac_learn(&table, mcast, 1, 0), 0);
	assert_int_equal(sw_mac_lookup(&table, bcast, 0), 0);
	assert_int_equal(sw_mac_lookup(&table, mcast, 0), 0);
	assert_int_equal(table.learned, 0);
}

static void test_mac_ageing(void **state)
{
	(void)state;
	sw_mac_init(&table, 300);
	sw_mac_learn(&table, mac_a, 1, 1000);
	assert_int_equal(sw_mac_lookup(&table, mac_a, 1299), 1);
	assert_int_equal(sw_mac_lookup(&table, mac_a, 1300), 0);       /* aged out: flood */
	assert_int_equal(sw_mac_learn(&table, mac_a, 1, 1400), 1);     /* back: new again */
	assert_int_equal(sw_mac_lookup(&table, mac_a, 1500), 1);
}

static void test_mac_forget_port_and_evict(void **state)
{
	uint8_t m[SW_ALEN] = { 0x02, 0, 0, 0, 0, 0 };

	(void)state;
	sw_mac_init(&table, 1000000);
	sw_mac_learn(&table, mac_a, 1, 0);
	sw_mac_learn(&table, mac_b, 2, 0);
	sw_mac_forget_port(&table, 1);
	assert_int_equal(sw_mac_lookup(&table, mac_a, 1), 0);
	assert_int_equal(sw_mac_lookup(&table, mac_b, 1), 2);
	/* Fill the table; the stalest entry (mac_b, seen at 0) makes room. */
	for (unsigned i = 0; i < SW_MAC_TABLE_SIZE; i++) {
		m[4] = (uint8_t)(i >> 8);
		m[5] = (uint8_t)i;
		sw_mac_learn(&table, m, 3, 10 + i);
	}
	assert_int_equal(table.evicted, 1);
	assert_int_equal(sw_mac_lookup(&table, mac_b, 500), 0);
	m[4] = 0;
	m[5] = 1;
	assert_int_equal(sw_mac_lookup(&table, m, 500), 3);
}

/* ---- egress queue --------------------------------------------------------------- */

static void test_queue_fifo_bounded(void **state)
{
	struct sw_slot *slots = calloc(3, sizeof(*slots));
	struct sw_queue q;
	uint8_t f[64];

	(void)state;
	assert_non_null(slots);
	sw_queue_init(&q, slots, 3);
	assert_null(sw_queue_peek(&q));
	for (uint8_t i = 0; i < 3; i++) {
		memset(f, i, sizeof(f));
		assert_int_equal(sw_queue_push(&q, f, 60u + i), 0);
	}
	assert_int_equal(sw_queue_push(&q, f, 60), -1);                 /* full */
	assert_int_equal(q.max_count, 3);
	for (uint8_t i = 0; i < 2; i++) {
		const struct sw_slot *s = sw_queue_peek(&q);

		assert_non_null(s);
		assert_int_equal(s->len, 60u + i);
		assert_int_equal(s->data[0], i);
		sw_queue_pop(&q);
	}
	memset(f, 7, sizeof(f));
	assert_int_equal(sw_queue_push(&q, f, 61), 0);                  /* wraps around */
	assert_int_equal(sw_queue_peek(&q)->data[0], 2);
	sw_queue_pop(&q);
	assert_int_equal(sw_queue_peek(&q)->data[0], 7);
	sw_queue_pop(&q);
	assert_null(sw_queue_peek(&q));
	sw_queue_pop(&q);                                              /* empty: no-op */
	assert_int_equal(q.count, 0);
	assert_int_equal(sw_queue_push(&q, f, SW_MAX_FRAME + 1), -1);   /* too long */
	free(slots);
}

/* ---- ECN ----------------------------------------------------------------------- */

static uint16_t ipv4_checksum(const uint8_t *h, size_t hlen)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < hlen; i += 2)
		if (i != 10)
			sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* An Ethernet + IPv4 (+ UDP 4791) frame with the given TOS. */
static size_t make_ipv4(uint8_t *f, uint8_t tos, int vlan)
{
	size_t ip = 14 + (vlan ? 4 : 0);
	uint16_t c;

	memset(f, 0, 80);
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	if (vlan) {
		f[12] = 0x81; f[13] = 0x00; f[14] = 0x00; f[15] = 0x05;
		f[16] = 0x08; f[17] = 0x00;
	} else {
		f[12] = 0x08; f[13] = 0x00;
	}
	f[ip] = 0x45; f[ip + 1] = tos; f[ip + 3] = 48; f[ip + 4] = 0x12; f[ip + 5] = 0x34;
	f[ip + 6] = 0x40; f[ip + 8] = 64; f[ip + 9] = 17;
	f[ip + 12] = 10; f[ip + 15] = 1; f[ip + 16] = 10; f[ip + 19] = 2;
	f[ip + 22] = 0x12; f[ip + 23] = 0xb7;                            /* dport 4791 */
	c = ipv4_checksum(f + ip, 20);
	f[ip + 10] = (uint8_t)(c >> 8);
	f[ip + 11] = (uint8_t)c;
	return ip + 48;
}

static void check_marked(uint8_t tos, int vlan)
{
	uint8_t f[80];
	size_t len = make_ipv4(f, tos, vlan), ip = 14 + (vlan ? 4 : 0);

	assert_int_equal(sw_ecn_mark_ce(f, len), 1);
	assert_int_equal(f[ip + 1], tos | 0x03);
	/* the incremental update equals a checksum computed afresh */
	assert_int_equal(f[ip + 10] << 8 | f[ip + 11], ipv4_checksum(f + ip, 20));
}

static void test_ecn_marks_ect(void **state)
{
	(void)state;
	check_marked(0x02, 0);          /* ECT(0) */
	check_marked(0x01, 0);          /* ECT(1) */
	check_marked(0xba, 0);          /* DSCP 46 + ECT(0): DSCP kept */
	check_marked(0x02, 1);          /* behind an 802.1Q tag */
	/* every TOS with ECT, so the one's-complement carry paths are covered */
	for (unsigned t = 0; t < 256; t++)
		if ((t & 3) == 1 || (t & 3) == 2)
			check_marked((uint8_t)t, (int)(t & 4));
}

static void test_ecn_leaves_others(void **state)
{
	uint8_t f[80], before[80];
	size_t len;

	(void)state;
	len = make_ipv4(f, 0x00, 0);                                   /* Not-ECT */
	memcpy(before, f, sizeof(f));
	assert_int_equal(sw_ecn_mark_ce(f, len), 0);
	assert_memory_equal(f, before, sizeof(f));
	len = make_ipv4(f, 0x03, 0);                                   /* already CE */
	memcpy(before, f, sizeof(f));
	assert_int_equal(sw_ecn_mark_ce(f, len), 0);
	assert_memory_equal(f, before, sizeof(f));
	len = make_ipv4(f, 0x02, 0);
	f[12] = 0x86; f[13] = 0xdd;                                   /* IPv6 ethertype */
	assert_int_equal(sw_ecn_mark_ce(f, len), 0);
	len = make_ipv4(f, 0x02, 0);
	assert_int_equal(sw_ecn_mark_ce(f, 14 + 19), 0);               /* truncated header */
	f[14] = 0x46;                                                  /* IHL 6: 24 bytes */
	assert_int_equal(sw_ecn_mark_ce(f, 14 + 23), 0);
	f[14] = 0x44;                                                  /* IHL 4: invalid */
	assert_int_equal(sw_ecn_mark_ce(f, len), 0);
	assert_int_equal(sw_ecn_mark_ce(f, 10), 0);                    /* runt */
}

/* ---- rules --------------------------------------------------------------------- */

static void test_rule_by_mac(void **state)
{
	struct sw_rule r;
	char err[200];

	(void)state;
	assert_int_equal(sw_rule_parse(&r, "52:54:00:00:00:01:drop=0.02,ecn_queue=8,seed=7",
				       err, sizeof(err)), 0);
	assert_int_equal(r.by_mac, 1);
	assert_memory_equal(r.mac, mac_a, SW_ALEN);
	assert_int_equal(r.impair.drop_ppm, 20000);
	assert_int_equal(r.impair.seed, 7);
	assert_int_equal(r.ecn_queue, 8);
	assert_int_equal(sw_rule_parse(&r, "52:54:00:00:00:02:ecn_queue=4", err, sizeof(err)), 0);
	assert_int_equal(r.ecn_queue, 4);
	assert_int_equal(impair_cfg_active(&r.impair), 0);
}

static void test_rule_by_port(void **state)
{
	struct sw_rule r;
	char err[200];

	(void)state;
	assert_int_equal(sw_rule_parse(&r, "2:dup=1%,reorder=0.5,corrupt=0.001", err, sizeof(err)), 0);
	assert_int_equal(r.by_mac, 0);
	assert_int_equal(r.port, 2);
	assert_int_equal(r.impair.dup_ppm, 10000);
	assert_int_equal(r.impair.reorder_ppm, 500000);
	assert_int_equal(r.impair.corrupt_ppm, 1000);
	assert_int_equal(r.ecn_queue, 0);
}

static void test_rule_errors(void **state)
{
	static const char *const bad[] = {
		"drop=0.1",                         /* no port */
		"0:drop=0.1",                       /* ports count from 1 */
		"x:drop=0.1",
		":drop=0.1",
		"1:drop=2",                         /* impair_parse refuses */
		"1:bogus=1",
		"1:ecn_queue=0",
		"1:ecn_queue=abc",
		"1:ecn_queue=4,ecn_queue=5",
		"1:rate_mbps=0",
		"1:rate_mbps=100001",
		"1:rate_mbps=99999999999999999999",
		"1:rate_mbps=10x",
		"1:rate_mbps=",
		"1:rate_mbps=10,rate_mbps=20",
		"1:drop=0.1,",
		"52:54:00:00:00:01:drop=0.1,nope=2",
	};
	struct sw_rule r = { .port = 99 };
	char err[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(sw_rule_parse(&r, bad[i], err, sizeof(err)), -1);
		assert_true(strlen(err) > 10);      /* says what to fix */
		assert_int_equal(r.port, 99);       /* untouched on failure */
	}
}

/* rate_mbps: parsed with its bounds, beside the impairment keys */
static void test_rule_rate(void **state)
{
	struct sw_rule r;
	char err[200];

	(void)state;
	assert_int_equal(sw_rule_parse(&r, "2:rate_mbps=50,ecn_queue=4,drop=0.01", err, sizeof(err)), 0);
	assert_int_equal(r.rate_mbps, 50);
	assert_int_equal(r.ecn_queue, 4);
	assert_int_equal(r.impair.drop_ppm, 10000);
	assert_int_equal(sw_rule_parse(&r, "1:rate_mbps=100000", err, sizeof(err)), 0);
	assert_int_equal(r.rate_mbps, 100000);
	assert_int_equal(sw_rule_parse(&r, "1:drop=0.01", err, sizeof(err)), 0);
	assert_int_equal(r.rate_mbps, 0);
}

/* The shaper holds a link of R Mbit/s: a 1000-byte frame takes
 * (1000 + 24) * 8 bits = 819.2 us at 10 Mbit/s; back-to-back frames go one
 * wire time apart, a sender that comes late catches up by at most the
 * slack, an idle link saves no more, and unshaped never waits. */
static void test_shaper(void **state)
{
	struct sw_shaper s = { .rate_mbps = 10 }, off = { 0 };
	const uint64_t wire = (1000u + 24u) * 8u * 1000u / 10u;   /* ns */
	uint64_t t = 5000000000u;

	(void)state;
	assert_int_equal(wire, 819200);
	/* a link that was idle: the first frame goes at once and brings the
	 * slack's credit, so the second is due a slack sooner */
	assert_int_equal(sw_shaper_wait_ns(&s, t), 0);
	sw_shaper_charge(&s, t, 1000);
	assert_int_equal(sw_shaper_wait_ns(&s, t), wire - SW_SHAPER_SLACK_NS);
	t += wire - SW_SHAPER_SLACK_NS;
	sw_shaper_charge(&s, t, 1000);
	assert_int_equal(sw_shaper_wait_ns(&s, t), wire);
	assert_int_equal(sw_shaper_wait_ns(&s, t + wire - 1), 1);
	assert_int_equal(sw_shaper_wait_ns(&s, t + wire), 0);
	/* 100 more frames back to back: one wire time apart */
	for (unsigned i = 0; i < 100; i++) {
		uint64_t w = sw_shaper_wait_ns(&s, t);

		assert_int_equal(w, wire);
		t += w;
		sw_shaper_charge(&s, t, 1000);
	}
	/* woken 300 us late: the frame goes, and the next one is due 300 us
	 * sooner than a wire time from now (the link catches up) */
	t += wire + 300000u;
	assert_int_equal(sw_shaper_wait_ns(&s, t), 0);
	sw_shaper_charge(&s, t, 1000);
	assert_int_equal(sw_shaper_wait_ns(&s, t), wire - 300000u);
	/* idle for a second: credit for SW_SHAPER_SLACK_NS only */
	t += 1000000000u;
	assert_int_equal(sw_shaper_wait_ns(&s, t), 0);
	sw_shaper_charge(&s, t, 1000);
	assert_int_equal(sw_shaper_wait_ns(&s, t), wire - SW_SHAPER_SLACK_NS);
	t += wire - SW_SHAPER_SLACK_NS;
	sw_shaper_charge(&s, t, 1000);
	assert_int_equal(sw_shaper_wait_ns(&s, t), wire);
	/* not shaped: never waits, charging does nothing */
	sw_shaper_charge(&off, t, 9000);
	assert_int_equal(sw_shaper_wait_ns(&off, t), 0);
	assert_int_equal(off.free_ns, 0);
}

static void count_emit(void *ctx, const void *frame, size_t len)
{
	(void)frame;
	(void)len;
	(*(unsigned *)ctx)++;
}

static unsigned drops_of(const struct sw_rule *r, unsigned frames, uint8_t *pattern)
{
	static struct impair im;
	uint8_t f[64] = { 0 };
	unsigned dropped = 0, emitted = 0;

	impair_init(&im, &r->impair);
	for (unsigned i = 0; i < frames; i++) {
		uint64_t before = im.stats.dropped;

		impair_apply(&im, f, sizeof(f), count_emit, &emitted);
		pattern[i] = (uint8_t)(im.stats.dropped != before);
		dropped += pattern[i];
	}
	assert_int_equal(emitted + dropped, frames);
	return dropped;
}

/* The decisions a rule's seed makes are the same on every run, and a
 * rate of 2 % drops about 2 % (binomial, 10,000 frames: 200 +- 5 sigma). */
static void test_rule_decisions_reproducible(void **state)
{
	static uint8_t a[10000], b[10000], c[10000];
	struct sw_rule r, other;
	char err[200];
	unsigned n;

	(void)state;
	assert_int_equal(sw_rule_parse(&r, "1:drop=0.02,seed=5", err, sizeof(err)), 0);
	assert_int_equal(sw_rule_parse(&other, "1:drop=0.02,seed=6", err, sizeof(err)), 0);
	n = drops_of(&r, 10000, a);
	assert_int_equal(drops_of(&r, 10000, b), n);
	assert_memory_equal(a, b, sizeof(a));
	assert_in_range(n, 130, 270);
	drops_of(&other, 10000, c);
	assert_memory_not_equal(a, c, sizeof(a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mac_learn_lookup),
		cmocka_unit_test(test_mac_group_never_learned),
		cmocka_unit_test(test_mac_ageing),
		cmocka_unit_test(test_mac_forget_port_and_evict),
		cmocka_unit_test(test_queue_fifo_bounded),
		cmocka_unit_test(test_ecn_marks_ect),
		cmocka_unit_test(test_ecn_leaves_others),
		cmocka_unit_test(test_rule_by_mac),
		cmocka_unit_test(test_rule_by_port),
		cmocka_unit_test(test_rule_errors),
		cmocka_unit_test(test_rule_rate),
		cmocka_unit_test(test_shaper),
		cmocka_unit_test(test_rule_decisions_reproducible),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
