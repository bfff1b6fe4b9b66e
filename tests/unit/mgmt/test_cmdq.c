/* Command queue transport (mgmt/cmdq.c), register-transcript style: the
 * fake host writes init-segment registers, entries and mailboxes, the test
 * runs the service where the loop would, then checks what the device wrote
 * back: cmdq_status/syndrome, status_own, token, cmdq_ci, the output. */
#include "fake_host.h"

static struct host H;

static int setup(void **state)
{
	(void)state;
	host_init(&H);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	host_free(&H);
	return 0;
}

/* ---- configuration ---------------------------------------------------------- */

static void expect_bad_config(uint64_t addr, uint32_t log_size, uint32_t ctrl, uint32_t site)
{
	uint64_t before = H.m.cnt.cmdq_bad_config;

	H.seg->cmdq_ctrl = 0;
	mnic_cmdq_service(&H.m);
	assert_int_equal(H.seg->cmdq_status, MNIC_CMDQ_OFF);
	H.seg->cmdq_addr = addr;
	H.seg->cmdq_log_size = log_size;
	H.seg->cmdq_ctrl = ctrl;
	mnic_cmdq_service(&H.m);
	assert_int_equal(H.seg->cmdq_status, MNIC_CMDQ_BAD_CONFIG);
	assert_int_equal(MNIC_SYND_SITE(H.seg->cmdq_syndrome), site);
	assert_int_equal(MNIC_SYND_ERRNO(H.seg->cmdq_syndrome), HAL_EINVAL);
	assert_int_equal(H.m.cnt.cmdq_bad_config, before + 1);
	/* Stays refused (and counted once) until the host disables. */
	mnic_cmdq_service(&H.m);
	assert_int_equal(H.m.cnt.cmdq_bad_config, before + 1);
}

static void test_config(void **state)
{
	(void)state;
	assert_int_equal(H.seg->cmdq_status, MNIC_CMDQ_OFF);
	expect_bad_config(0x800, 3, 1, MNIC_SITE_CMDQ_ALIGN);
	expect_bad_config(0, 7, 1, MNIC_SITE_CMDQ_LOG_SIZE);
	expect_bad_config(MNIC_DRIVER_AREA_SIZE, 0, 1, MNIC_SITE_CMDQ_RANGE);
	expect_bad_config(UINT64_MAX & ~0xfffull, 6, 1, MNIC_SITE_CMDQ_RANGE);
	expect_bad_config(0, 3, 5, MNIC_SITE_CMDQ_CTRL);
	/* The last 4 KiB of the driver area hold a 64-entry ring exactly. */
	H.seg->cmdq_ctrl = 0;
	mnic_cmdq_service(&H.m);
	H.seg->cmdq_addr = MNIC_DRIVER_AREA_SIZE - 4096u;
	H.seg->cmdq_log_size = 6;
	H.seg->cmdq_ctrl = 1;
	mnic_cmdq_service(&H.m);
	assert_int_equal(H.seg->cmdq_status, MNIC_CMDQ_RUNNING);
	assert_int_equal(H.seg->cmdq_syndrome, 0);
	/* Latched: the host moving cmdq_addr while RUNNING changes nothing. */
	H.seg->cmdq_addr = 0x1000;
	assert_int_equal(mnic_cmdq_service(&H.m), 0);
	assert_int_equal(H.m.ring_addr, MNIC_DRIVER_AREA_SIZE - 4096u);
	H.seg->cmdq_ctrl = 0;
	mnic_cmdq_service(&H.m);
	host_enable(&H);
	host_query_device(&H);
	assert_int_equal(H.m.cnt.cmdq_enables, 2);
}

static void test_window_too_small(void **state)
{
	struct hal_dma small;

	(void)state;
	hal_dma_window_init(&small, H.win, MNIC_DRIVER_AREA_SIZE - 1u);
	H.m.cfg.dma = &small;
	H.seg->cmdq_ctrl = 1;
	mnic_cmdq_service(&H.m);
	assert_int_equal(MNIC_SYND_SITE(H.seg->cmdq_syndrome), MNIC_SITE_CMDQ_WINDOW);
	H.m.cfg.dma = &H.dma;
}

/* ---- ownership, tokens, ci --------------------------------------------------- */

static void test_nop_ownership_and_ring_wrap(void **state)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_NOP, 0) };
	uint8_t out[16];
	unsigned i;

	(void)state;
	host_enable(&H);
	/* Three times around the 8-entry ring. */
	for (i = 0; i < 24; i++) {
		memset(out, 0xee, sizeof(out));
		assert_int_equal(host_cmd(&H, &in, sizeof(in), out, 8), MNIC_CMD_STAT_OK);
		assert_int_equal(out_syndrome(out), 0);
	}
	assert_int_equal(H.seg->cmdq_ci, 24);
	assert_int_equal(H.m.cnt.cmds_delivered, 24);
	assert_int_equal(H.m.cnt.cmds_ok, 24);
}

static void test_not_owned_waits(void **state)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_ALLOC_PD, 0) };
	struct host_xfer x = { .no_ring = 1 };
	struct mnic_cmdq_entry *e;

	(void)state;
	host_enable(&H);
	host_xfer(&H, &in, sizeof(in), NULL, 16, &x);
	/* pi rang but the entry is still software's: nothing served. */
	assert_int_equal(H.seg->cmdq_ci, 0);
	assert_int_equal(H.e->n_pd, 0);
	assert_int_equal(H.m.cnt.cmdq_not_owned, 1);
	e = host_entry(&H, 0);
	e->status_own = MNIC_CMD_OWNER_HW;
	assert_int_equal(mnic_cmdq_service(&H.m), 1);
	assert_int_equal(H.seg->cmdq_ci, 1);
	assert_int_equal(e->status_own, 0);
	assert_int_equal(H.e->n_pd, 1);
}

static void test_disable_resets_ci(void **state)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_NOP, 0) };
	uint8_t out[8];

	(void)state;
	host_enable(&H);
	host_cmd(&H, &in, sizeof(in), out, 8);
	/* A host that rang 5 more entries and gave up: disable. */
	H.seg->cmdq_pi = 6;
	H.seg->cmdq_ctrl = 0;
	mnic_cmdq_service(&H.m);
	assert_int_equal(H.seg->cmdq_status, MNIC_CMDQ_OFF);
	assert_int_equal(H.seg->cmdq_ci, 6);
	host_enable(&H);
	assert_int_equal(H.pi, 6);
	assert_int_equal(host_cmd(&H, &in, sizeof(in), out, 8), MNIC_CMD_STAT_OK);
	assert_int_equal(H.seg->cmdq_ci, 7);
}

/* The firmware half of the reset handshake libmnic resynchronises with
 * (docs/host-interface.md, "Resynchronisation"): a doorbell moved past an
 * entry the host never handed over stalls the queue (nothing served, the
 * entry waits for its owner bit); ctrl = 0 publishes OFF with ci = pi,
 * counted once as a resync; the re-enabled queue serves at that index. */
static void test_reset_handshake_realigns_ci(void **state)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_NOP, 0) };
	uint8_t out[8];
	unsigned i;

	(void)state;
	host_enable(&H);
	assert_int_equal(host_cmd(&H, &in, sizeof(in), out, 8), MNIC_CMD_STAT_OK);
	for (i = 0; i < 1u << HOST_LOG_SIZE; i++)
		host_entry(&H, i)->status_own = 0;
	H.seg->cmdq_pi = 1 + 5;   /* five entries nobody wrote */
	for (i = 0; i < 3; i++)
		assert_int_equal(mnic_cmdq_service(&H.m), 0);
	assert_int_equal(H.seg->cmdq_ci, 1);
	assert_int_equal(H.m.cnt.cmdq_not_owned, 3);
	assert_int_equal(H.m.cnt.cmdq_resyncs, 0);
	/* reset: ctrl = 0 -> OFF with ci = pi, counted */
	H.seg->cmdq_ctrl = 0;
	mnic_cmdq_service(&H.m);
	assert_int_equal(H.seg->cmdq_status, MNIC_CMDQ_OFF);
	assert_int_equal(H.seg->cmdq_ci, 6);
	assert_int_equal(H.m.cnt.cmdq_resyncs, 1);
	host_enable(&H);
	assert_int_equal(H.m.cnt.cmdq_resyncs, 1);   /* pi == ci: nothing more dropped */
	assert_int_equal(H.pi, 6);
	assert_int_equal(host_cmd(&H, &in, sizeof(in), out, 8), MNIC_CMD_STAT_OK);
	assert_int_equal(H.seg->cmdq_ci, 7);
	/* a disable with nothing in flight drops nothing */
	H.seg->cmdq_ctrl = 0;
	mnic_cmdq_service(&H.m);
	assert_int_equal(H.m.cnt.cmdq_resyncs, 1);
	assert_int_equal(H.m.cnt.cmdq_disables, 2);
}

/* A doorbell written while the queue is off (a host that lost track before
 * it enabled, or a BAR file an earlier run left behind) is where the queue
 * starts: the enable publishes ci = pi, and no stale entry is served. */
static void test_enable_starts_at_pi(void **state)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_NOP, 0) };
	uint8_t out[8];

	(void)state;
	assert_int_equal(H.seg->cmdq_status, MNIC_CMDQ_OFF);
	host_entry(&H, 0)->status_own = MNIC_CMD_OWNER_HW;   /* stale, never to be served */
	H.seg->cmdq_pi = 0x41;
	host_enable(&H);
	assert_int_equal(H.seg->cmdq_ci, 0x41);
	assert_int_equal(H.pi, 0x41);
	assert_int_equal(H.m.cnt.cmdq_resyncs, 1);
	assert_int_equal(H.m.cnt.cmds_delivered, 0);
	assert_int_equal(host_cmd(&H, &in, sizeof(in), out, 8), MNIC_CMD_STAT_OK);
	assert_int_equal(H.seg->cmdq_ci, 0x42);
	assert_int_equal(H.m.cnt.cmds_delivered, 1);
}

static void test_pi_far_ahead(void **state)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_NOP, 0) };
	unsigned i;

	(void)state;
	host_enable(&H);
	/* Every entry HW-owned, and pi claims 1000 entries: one ring per poll,
	 * each entry once, then the owner bits stop it. */
	for (i = 0; i < 8; i++) {
		struct mnic_cmdq_entry *e = host_entry(&H, i);

		memset(e, 0, sizeof(*e));
		e->type = MNIC_CMD_TYPE_PCIE;
		e->in_len = 8;
		e->out_len = 8;
		memcpy(e->in_inline, &in, sizeof(in));
		e->status_own = 1;
	}
	H.seg->cmdq_pi = 1000;
	assert_int_equal(mnic_cmdq_service(&H.m), 8);
	assert_int_equal(mnic_cmdq_service(&H.m), 0);
	assert_int_equal(H.seg->cmdq_ci, 8);
	assert_true(H.m.cnt.cmdq_pi_ahead >= 1);
	H.seg->cmdq_ctrl = 0;
	mnic_cmdq_service(&H.m);
	host_enable(&H);
	host_query_device(&H);
}

/* ---- mailbox chains ------------------------------------------------------------- */

/* Input chains: NOP with in_len bytes (the bytes after the header are
 * ignored by NOP, but the whole chain is walked and checked). */
static void test_input_chain_lengths(void **state)
{
	static const uint32_t lens[] = { 8, 15, 16, 17, 527, 528, 529, 1040, 4096, 65536,
					  300 * 1024, MNIC_CMD_MAX_LEN };
	uint8_t *in = calloc(1, MNIC_CMD_MAX_LEN);
	uint8_t out[8];
	size_t i;

	(void)state;
	host_enable(&H);
	struct mnic_cmd_in_hdr hd = in_hdr(MNIC_CMD_NOP, 0);
	memcpy(in, &hd, sizeof(hd));
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		assert_int_equal(host_cmd(&H, in, lens[i], out, 8), MNIC_CMD_STAT_OK);
	}
	free(in);
}

/* Output chains: QUERY_COUNTERS MGMT with out_len from 16 B to 300 KiB:
 * count is what fits, every counter lands where the layout says. */
static void test_output_chain_lengths(void **state)
{
	static const uint32_t lens[] = { 16, 47, 48, 200, 528, 529, 2000, 65536, 300 * 1024 };
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_QUERY_COUNTERS, MNIC_COUNTERS_MGMT) };
	uint8_t *out = malloc(300 * 1024);
	size_t i;

	(void)state;
	host_enable(&H);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct mnic_cmd_query_counters_out o;
		uint32_t room = (lens[i] - 16u) / 32u, k;

		memset(out, 0xee, 300 * 1024);
		assert_int_equal(host_cmd(&H, &in, sizeof(in), out, lens[i]), MNIC_CMD_STAT_OK);
		memcpy(&o, out, sizeof(o));
		assert_int_equal(o.total, MNIC_MGMT_NUM_COUNTERS);
		assert_int_equal(o.count, room < o.total ? room : o.total);
		for (k = 0; k < o.count; k++) {
			struct mnic_counter c;

			memcpy(&c, out + 16 + k * 32u, sizeof(c));
			assert_string_equal(c.name, mnic_mgmt_counter_names[k]);
		}
	}
	free(out);
}

/* ---- delivery errors -------------------------------------------------------------- */

struct damage {
	int what;
	uint32_t value;
};

enum {
	D_TYPE, D_RSVD0, D_RSVD1, D_IN_LEN, D_OUT_LEN, D_IN_PTR, D_OUT_PTR, D_IN_SHORT,
	D_IN_LONG, D_OUT_SHORT, D_IN_TOKEN, D_OUT_TOKEN, D_IN_BLOCK, D_IN_LOOP, D_OUT_LOOP,
	D_IN_NULL,
};

static void damage(struct host *h, struct mnic_cmdq_entry *e, void *arg)
{
	const struct damage *d = arg;
	struct mnic_cmd_mailbox *b0 = e->in_mbox ? host_mbox(h, e->in_mbox) : NULL;
	struct mnic_cmd_mailbox *o0 = e->out_mbox ? host_mbox(h, e->out_mbox) : NULL;

	switch (d->what) {
	case D_TYPE: e->type = (uint8_t)d->value; break;
	case D_RSVD0: e->reserved0[d->value] = 1; break;
	case D_RSVD1: e->reserved1 = 0x80; break;
	case D_IN_LEN: e->in_len = d->value; break;
	case D_OUT_LEN: e->out_len = d->value; break;
	case D_IN_PTR: e->in_mbox = d->value; break;
	case D_OUT_PTR: e->out_mbox = d->value; break;
	case D_IN_SHORT: host_mbox(h, b0->next)->next = 0; break;       /* 3 blocks -> 2 */
	case D_IN_LONG: host_mbox(h, host_mbox(h, b0->next)->next)->next = e->in_mbox; break;
	case D_OUT_SHORT: o0->next = 0; break;
	case D_IN_TOKEN: host_mbox(h, b0->next)->token ^= 1; break;
	case D_OUT_TOKEN: o0->token ^= 1; break;
	case D_IN_BLOCK: host_mbox(h, b0->next)->block_num = 7; break;
	case D_IN_LOOP: host_mbox(h, b0->next)->next = e->in_mbox; break;  /* 0 -> 1 -> 0 */
	case D_OUT_LOOP: o0->next = e->out_mbox; break;
	case D_IN_NULL: e->in_mbox = 0; break;
	}
}

static void expect_delivery(int what, uint32_t value, uint32_t status, const uint64_t *counter)
{
	/* ALLOC_PD with a 1100-byte input (3 input blocks) and a 600-byte
	 * output (2 output blocks): a delivery error must leave no PD. */
	uint8_t in[1100];
	struct mnic_cmd_in_hdr hd = in_hdr(MNIC_CMD_ALLOC_PD, 0);
	struct damage d = { what, value };
	struct host_xfer x = { .corrupt = damage, .arg = &d };
	uint32_t n_pd = H.e->n_pd;
	uint64_t before = *counter;

	memset(in, 0, sizeof(in));
	memcpy(in, &hd, sizeof(hd));
	assert_int_equal(host_xfer(&H, in, sizeof(in), NULL, 600, &x), status);
	assert_int_equal(H.e->n_pd, n_pd);
	assert_int_equal(*counter, before + 1);
	host_query_device(&H);
}

static void test_delivery_errors(void **state)
{
	struct mnic_mgmt_counters *k = &H.m.cnt;
	const uint32_t area_end = MNIC_DRIVER_AREA_SIZE;

	(void)state;
	host_enable(&H);
	expect_delivery(D_TYPE, 0, MNIC_CMD_DELIV_BAD_CMD_TYPE, &k->deliv_bad_cmd_type);
	expect_delivery(D_TYPE, 0xff, MNIC_CMD_DELIV_BAD_CMD_TYPE, &k->deliv_bad_cmd_type);
	expect_delivery(D_RSVD0, 2, MNIC_CMD_DELIV_RES_NOT_ZERO, &k->deliv_res_not_zero);
	expect_delivery(D_RSVD1, 0, MNIC_CMD_DELIV_RES_NOT_ZERO, &k->deliv_res_not_zero);
	expect_delivery(D_IN_LEN, 7, MNIC_CMD_DELIV_INPUT_LEN_ERR, &k->deliv_in_len_err);
	expect_delivery(D_IN_LEN, 0, MNIC_CMD_DELIV_INPUT_LEN_ERR, &k->deliv_in_len_err);
	expect_delivery(D_IN_LEN, MNIC_CMD_MAX_LEN + 1u, MNIC_CMD_DELIV_INPUT_LEN_ERR,
			&k->deliv_in_len_err);
	expect_delivery(D_IN_LEN, UINT32_MAX, MNIC_CMD_DELIV_INPUT_LEN_ERR, &k->deliv_in_len_err);
	expect_delivery(D_OUT_LEN, 7, MNIC_CMD_DELIV_OUTPUT_LEN_ERR, &k->deliv_out_len_err);
	expect_delivery(D_OUT_LEN, UINT32_MAX, MNIC_CMD_DELIV_OUTPUT_LEN_ERR, &k->deliv_out_len_err);
	/* Lengths past the chain the host laid out: the chain is short. */
	expect_delivery(D_IN_LEN, 5000, MNIC_CMD_DELIV_BAD_INPUT_POINTER, &k->deliv_bad_in_ptr);
	expect_delivery(D_OUT_LEN, 5000, MNIC_CMD_DELIV_BAD_OUTPUT_POINTER, &k->deliv_bad_out_ptr);
	/* Mailbox addresses: the ring's page, misaligned, past the driver
	 * area, in the user area, past the window. */
	expect_delivery(D_IN_PTR, 0x40, MNIC_CMD_DELIV_BAD_INPUT_POINTER, &k->deliv_bad_in_ptr);
	expect_delivery(D_IN_PTR, MNIC_CMD_MBOX_AREA + 4u, MNIC_CMD_DELIV_BAD_INPUT_POINTER,
			&k->deliv_bad_in_ptr);
	expect_delivery(D_IN_PTR, area_end - MNIC_CMD_MBOX_SIZE + 8u,
			MNIC_CMD_DELIV_BAD_INPUT_POINTER, &k->deliv_bad_in_ptr);
	expect_delivery(D_IN_PTR, HOST_USER + 0x1000u, MNIC_CMD_DELIV_BAD_INPUT_POINTER,
			&k->deliv_bad_in_ptr);
	expect_delivery(D_IN_PTR, 0xfffffff8u, MNIC_CMD_DELIV_BAD_INPUT_POINTER, &k->deliv_bad_in_ptr);
	expect_delivery(D_IN_NULL, 0, MNIC_CMD_DELIV_BAD_INPUT_POINTER, &k->deliv_bad_in_ptr);
	expect_delivery(D_OUT_PTR, 0x80, MNIC_CMD_DELIV_BAD_OUTPUT_POINTER, &k->deliv_bad_out_ptr);
	expect_delivery(D_OUT_PTR, 0, MNIC_CMD_DELIV_BAD_OUTPUT_POINTER, &k->deliv_bad_out_ptr);
	/* Chains: short, too long, loops, tokens, block numbers. */
	expect_delivery(D_IN_SHORT, 0, MNIC_CMD_DELIV_BAD_INPUT_POINTER, &k->deliv_bad_in_ptr);
	expect_delivery(D_IN_LONG, 0, MNIC_CMD_DELIV_BAD_INPUT_POINTER, &k->deliv_bad_in_ptr);
	expect_delivery(D_OUT_SHORT, 0, MNIC_CMD_DELIV_BAD_OUTPUT_POINTER, &k->deliv_bad_out_ptr);
	expect_delivery(D_IN_LOOP, 0, MNIC_CMD_DELIV_BAD_BLOCK_NUMBER, &k->deliv_bad_block_num);
	expect_delivery(D_OUT_LOOP, 0, MNIC_CMD_DELIV_BAD_BLOCK_NUMBER, &k->deliv_bad_block_num);
	expect_delivery(D_IN_BLOCK, 0, MNIC_CMD_DELIV_BAD_BLOCK_NUMBER, &k->deliv_bad_block_num);
	expect_delivery(D_IN_TOKEN, 0, MNIC_CMD_DELIV_TOKEN_ERR, &k->deliv_token_err);
	expect_delivery(D_OUT_TOKEN, 0, MNIC_CMD_DELIV_TOKEN_ERR, &k->deliv_token_err);
	assert_int_equal(k->cmds_ok + k->cmds_failed, 28);   /* the QUERY_DEVICEs only */
}

/* A mailbox chain that covers the whole mailbox region, in reverse order
 * (last block first in memory): addresses are followed, not assumed. */
static void reverse_chain(struct host *h, struct mnic_cmdq_entry *e, void *arg)
{
	uint32_t n = host_blocks(e->out_len), i;
	uint64_t top = MNIC_DRIVER_AREA_SIZE - MNIC_CMD_MBOX_SIZE;

	(void)arg;
	for (i = 0; i < n; i++) {
		struct mnic_cmd_mailbox *b = host_mbox(h, top - (uint64_t)i * MNIC_CMD_MBOX_SIZE);

		memset(b, 0, sizeof(*b));
		b->block_num = i;
		b->token = e->token;
		b->next = i + 1 < n ? top - (uint64_t)(i + 1) * MNIC_CMD_MBOX_SIZE : 0;
	}
	e->out_mbox = top;
}

static void test_output_chain_anywhere(void **state)
{
	struct mnic_cmd_simple_in in = { in_hdr(MNIC_CMD_QUERY_DEVICE, 0) };
	struct host_xfer x = { .corrupt = reverse_chain };
	struct mnic_cmd_query_device_out o;
	uint64_t top = MNIC_DRIVER_AREA_SIZE - MNIC_CMD_MBOX_SIZE;

	(void)state;
	host_enable(&H);
	assert_int_equal(host_xfer(&H, &in, sizeof(in), NULL, sizeof(o), &x), MNIC_CMD_DELIV_OK);
	memcpy(&o, host_entry(&H, 0)->out_inline, 16);
	memcpy((uint8_t *)&o + 16, host_mbox(&H, top)->data, sizeof(o) - 16);
	assert_int_equal(o.hdr.status, MNIC_CMD_STAT_OK);
	assert_int_equal(o.board_id, 3);
	assert_int_equal(o.window_size, HOST_WINDOW);
	assert_int_equal(o.user_area_offset, MNIC_USER_AREA_OFFSET);
}

/* Random bytes in the whole ring and mailbox region, pi far ahead: every
 * served entry is answered with some status, nothing crashes, and the
 * queue still works afterwards. */
static void test_garbage_ring(void **state)
{
	uint32_t seed = 12345, i, round;

	(void)state;
	host_enable(&H);
	for (round = 0; round < 50; round++) {
		for (i = 0; i < 64 * 1024; i++) {
			seed = seed * 1103515245u + 12345u;
			H.win[i] = (uint8_t)(seed >> 16);
		}
		H.pi += 8;
		H.seg->cmdq_pi = H.pi;
		mnic_cmdq_service(&H.m);
		H.seg->cmdq_ctrl = 0;
		mnic_cmdq_service(&H.m);
		host_enable(&H);
	}
	host_query_device(&H);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window_too_small, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nop_ownership_and_ring_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_owned_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disable_resets_ci, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_handshake_realigns_ci, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enable_starts_at_pi, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pi_far_ahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_input_chain_lengths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_chain_lengths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delivery_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_chain_anywhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_ring, setup, teardown),
	};

	return cmocka_run_group_tests_name("mgmt_cmdq", tests, NULL, NULL);
}
