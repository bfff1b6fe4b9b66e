/* Device-wide commands: NOP, QUERY_DEVICE, FW_QUERY (the FW_FLASH_* and
 * FW_ACTIVATE commands and FW_QUERY op_mod SLOTS go to mgmt/fwflash.c),
 * QUERY_COUNTERS and GET_EVENTS (mnic/cmd.h, docs/host-interface.md). */
#include <string.h>

#include "cmd_priv.h"
#include "mgmt/fwflash.h"
#include "hal/errno.h"

int h_nop(struct mnic_mgmt *m, struct cmd_call *c)
{
	(void)m;
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

int h_query_device(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct rocev2_device_info info;
	struct mnic_cmd_query_device_out o;

	rocev2_query_device(m->cfg.engine, &info);
	memset(&o, 0, sizeof(o));
	o.fw_version = MNIC_FW_VERSION_CUR;
	o.cmdif_rev = MNIC_CMDIF_REV;
	o.board_id = m->cfg.board_id;
	o.max_qp = ROCEV2_MAX_QP;
	o.max_mr = ROCEV2_MAX_MR;
	o.max_pd = ROCEV2_MAX_PD;
	o.max_cq = ROCEV2_MAX_CQ;
	o.max_srq = ROCEV2_MAX_SRQ;
	o.max_sge = MNIC_MAX_SGE;
	o.max_qp_wr = ROCEV2_MAX_QUEUE_SIZE;
	o.max_cqe = ROCEV2_MAX_QUEUE_SIZE;
	o.max_rd_atomic = ROCEV2_MAX_RD_ATOMIC;
	o.max_msg = ROCEV2_MAX_MSG;
	o.ipv4 = info.ipv4;
	memcpy(o.mac, info.mac, sizeof(o.mac));
	o.max_frame = HAL_ETH_MAX_FRAME;
	o.window_size = m->cfg.dma->window_size;
	o.user_area_offset = MNIC_USER_AREA_OFFSET;
	o.image_max = MNIC_CMD_MAX_LEN - (uint32_t)sizeof(struct mnic_cmd_dump_out);
	o.pause_timeout_ms = (uint32_t)(info.pause_timeout_ns / 1000000u);
	o.resume_budget_ms = (uint32_t)(info.resume_budget_ns / 1000000u);
	o.mig_cfg_flags = info.mig_flags & ROCEV2_MIG_F_UNKEYED ? MNIC_MIG_CFG_UNKEYED : 0u;
	/* Objects: the issuer's own; MNIC_CTX_MGMT sees every context's. */
	if (c->ctx != MNIC_CTX_MGMT)
		rocev2_owner_objects(m->cfg.engine, c->ctx, info.objects);
	o.n_pd = info.objects[ROCEV2_OBJ_PD];
	o.n_mr = info.objects[ROCEV2_OBJ_MR];
	o.n_cq = info.objects[ROCEV2_OBJ_CQ];
	o.n_srq = info.objects[ROCEV2_OBJ_SRQ];
	o.n_qp = info.objects[ROCEV2_OBJ_QP];
	o.flags = (rocev2_context_stopped(m->cfg.engine, c->ctx) ? MNIC_DEV_F_STOPPED : 0u) |
		  (info.migration ? MNIC_DEV_F_MIGRATION : 0u);
	o.ctx = c->ctx;
	o.n_ctx = mnic_ctx_count(m);
	o.ctx_ua_offset = m->ctx[c->ctx].ua_offset;
	o.ctx_ua_size = m->ctx[c->ctx].ua_size;
	/* host memory and translation: MTTs counted as the objects above */
	o.hostmem_size = m->cfg.hostmem ? m->cfg.hostmem->window_size : 0;
	o.max_mtt = ROCEV2_MAX_MTT;
	o.max_mtt_pages = ROCEV2_MTT_PAGES;
	o.n_mtt = info.objects[ROCEV2_OBJ_MTT];
	o.free_mtt_pages = info.mtt_pages_free;
	o.page_shift_min = MNIC_PAGE_SHIFT_MIN;
	o.page_shift_max = MNIC_PAGE_SHIFT_MAX;
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
	return 0;
}

/* Firmware update commands live in mgmt/fwflash.c (issue #8). */
int h_fw(struct mnic_mgmt *m, struct cmd_call *c)
{
	return mnic_fwflash_cmd(m, c->opcode, c->op_mod, c->buf, c->in_len, c->out_len,
				&c->produced, &c->status, &c->syndrome);
}

int h_fw_query(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_fw_query_out o;

	if (c->op_mod == MNIC_FW_QUERY_SLOTS)
		return h_fw(m, c);
	memset(&o, 0, sizeof(o));
	o.fw_version = MNIC_FW_VERSION_CUR;
	o.board_id = m->cfg.board_id;
	copy_str(o.board_name, sizeof(o.board_name), m->cfg.board_name);
#ifdef __VERSION__
	copy_str(o.build, sizeof(o.build), "cc " __VERSION__);
#else
	copy_str(o.build, sizeof(o.build), "cc unknown");
#endif
	o.uptime_ns = rocev2_clock_ns(m->cfg.engine) - m->cfg.boot_ns;
	memcpy(c->buf, &o, sizeof(o));
	c->produced = sizeof(o);
	return 0;
}

/* QUERY_COUNTERS: every counter comes from an X-macro list (the engine's
 * rocev2/counters.h, mgmt/counters.h, the HAL's HAL_ETH_STATS and
 * HAL_DMA_STATS), which gives a struct of uint64_t values and, in the same
 * order, their names.  An op_mod returns groups of such lists; a group
 * prefixes its names (PORT: "eth<port>_" per Ethernet port, then "dma_",
 * then "hostmem_" when the engine has a host-memory aperture, then "dbch_"
 * when the platform has a doorbell channel). */
#define STAT_NAME_(name) #name,
static const char *const eth_stat_names[] = { HAL_ETH_STATS(STAT_NAME_) };
static const char *const dma_stat_names[] = { HAL_DMA_STATS(STAT_NAME_) };
static const char *const doorbell_stat_names[] = { HAL_DOORBELL_STATS(STAT_NAME_) };
#undef STAT_NAME_
#define N_ETH_STATS (sizeof(eth_stat_names) / sizeof(eth_stat_names[0]))
#define N_DMA_STATS (sizeof(dma_stat_names) / sizeof(dma_stat_names[0]))
#define N_DOORBELL_STATS (sizeof(doorbell_stat_names) / sizeof(doorbell_stat_names[0]))
_Static_assert(sizeof(struct hal_eth_stats) == N_ETH_STATS * sizeof(uint64_t), "eth stats");
_Static_assert(sizeof(struct hal_dma_stats) == N_DMA_STATS * sizeof(uint64_t), "dma stats");
_Static_assert(sizeof(struct hal_doorbell_stats) == N_DOORBELL_STATS * sizeof(uint64_t),
	       "doorbell stats");

static const char *const eth_prefix[] = { "eth0_", "eth1_", "eth2_", "eth3_" };
_Static_assert(sizeof(eth_prefix) / sizeof(eth_prefix[0]) == MNIC_MGMT_MAX_PORTS, "eth prefixes");

struct counter_group {
	const char *prefix;
	const char *const *names;
	uint32_t n;
	const uint64_t *values;        /* n values; NULL reads as zeros */
};
#define MAX_COUNTER_GROUPS (MNIC_MGMT_MAX_PORTS + 3u)

/* The groups of op_mod, in the order the host sees them; returns how many. */
static unsigned counter_groups(const struct mnic_mgmt *m, uint16_t op_mod,
			       struct counter_group g[MAX_COUNTER_GROUPS])
{
	unsigned i;

	switch (op_mod) {
	case MNIC_COUNTERS_ENGINE:
		g[0] = (struct counter_group){ "", rocev2_counter_names, ROCEV2_NUM_COUNTERS,
					       (const uint64_t *)rocev2_counters(m->cfg.engine) };
		return 1;
	case MNIC_COUNTERS_MGMT:
		g[0] = (struct counter_group){ "", mnic_mgmt_counter_names, MNIC_MGMT_NUM_COUNTERS,
					       (const uint64_t *)&m->cnt };
		return 1;
	default:
		for (i = 0; i < m->cfg.n_eth; i++) {
			const struct hal_eth *eth = m->cfg.eth[i];

			g[i] = (struct counter_group){ eth_prefix[i], eth_stat_names, N_ETH_STATS,
						       eth ? (const uint64_t *)&eth->stats : NULL };
		}
		g[i++] = (struct counter_group){ "dma_", dma_stat_names, N_DMA_STATS,
						 (const uint64_t *)&m->cfg.dma->stats };
		/* the engine's host-memory aperture, when it is not the window */
		if (m->cfg.hostmem)
			g[i++] = (struct counter_group){ "hostmem_", dma_stat_names, N_DMA_STATS,
							 (const uint64_t *)&m->cfg.hostmem->stats };
		if (m->cfg.doorbell)
			g[i++] = (struct counter_group){ "dbch_", doorbell_stat_names, N_DOORBELL_STATS,
							 (const uint64_t *)&m->cfg.doorbell->stats };
		return i;
	}
}

static uint32_t counters_total(const struct counter_group *g, unsigned n_groups)
{
	uint32_t total = 0;
	unsigned i;

	for (i = 0; i < n_groups; i++)
		total += g[i].n;
	return total;
}

/* Counter i (< counters_total) of the groups: prefix + name, value. */
static void counter_at(const struct counter_group *g, uint32_t i, struct mnic_counter *k)
{
	size_t plen = 0;

	while (i >= g->n) {
		i -= g->n;
		g++;
	}
	memset(k, 0, sizeof(*k));
	while (g->prefix[plen])
		plen++;
	copy_str(k->name, sizeof(k->name), g->prefix);
	copy_str(k->name + plen, sizeof(k->name) - plen, g->names[i]);
	k->value = g->values ? g->values[i] : 0;
}

int h_query_counters(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_query_counters_out o;
	struct counter_group g[MAX_COUNTER_GROUPS];
	unsigned n_groups = counter_groups(m, c->op_mod, g);
	uint32_t i, room = (c->out_len - (uint32_t)sizeof(o)) / (uint32_t)sizeof(struct mnic_counter);

	memset(&o, 0, sizeof(o));
	o.total = counters_total(g, n_groups);
	o.count = o.total < room ? o.total : room;
	for (i = 0; i < o.count; i++) {
		struct mnic_counter k;

		counter_at(g, i, &k);
		memcpy(c->buf + sizeof(o) + (size_t)i * sizeof(k), &k, sizeof(k));
	}
	memcpy(c->buf, &o, sizeof(o));
	c->produced = (uint32_t)(sizeof(o) + (size_t)o.count * sizeof(struct mnic_counter));
	return 0;
}

int h_get_events(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_get_events_out o;
	uint32_t room = (c->out_len - (uint32_t)sizeof(o)) / (uint32_t)sizeof(struct mnic_event);
	struct rocev2_event ev;

	memset(&o, 0, sizeof(o));
	while (o.count < room && rocev2_get_event(m->cfg.engine, c->ctx, &ev) == 0) {
		struct mnic_event w = { ev.type, ev.handle };

		memcpy(c->buf + sizeof(o) + (size_t)o.count * sizeof(w), &w, sizeof(w));
		o.count++;
	}
	memcpy(c->buf, &o, sizeof(o));
	c->produced = (uint32_t)(sizeof(o) + (size_t)o.count * sizeof(struct mnic_event));
	return 0;
}

/* DCQCN parameters: the ABI's layout field by field into the engine's
 * (mnic/cmd.h and rocev2.h list them in the same order; the engine
 * validates, its field index names the syndrome's site). */
#define DCQCN_FIELDS(X)                                                         \
	X(flags) X(g) X(alpha_us) X(rate_timer_us) X(byte_counter) X(fast_recovery) \
	X(rai_mbps) X(rhai_mbps) X(min_rate_mbps) X(line_rate_mbps) X(cnp_interval_us)
_Static_assert(MNIC_DCQCN_F_ENABLE == ROCEV2_DCQCN_F_ENABLE &&
		       MNIC_DCQCN_F_ECT == ROCEV2_DCQCN_F_ECT, "DCQCN flags");

int h_query_dcqcn(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_dcqcn_out out;
	struct rocev2_dcqcn_params p;

	rocev2_get_dcqcn(m->cfg.engine, &p);
	memset(&out, 0, sizeof(out));
#define DCQCN_OUT(f) out.p.f = p.f;
	DCQCN_FIELDS(DCQCN_OUT)
#undef DCQCN_OUT
	memcpy(c->buf, &out, sizeof(out));
	c->produced = sizeof(out);
	return 0;
}

int h_set_dcqcn(struct mnic_mgmt *m, struct cmd_call *c)
{
	struct mnic_cmd_dcqcn_in in;
	struct rocev2_dcqcn_params p;
	unsigned field = 0;

	memcpy(&in, c->buf, sizeof(in));
#define DCQCN_IN(f) p.f = in.p.f;
	DCQCN_FIELDS(DCQCN_IN)
#undef DCQCN_IN
	if (rocev2_set_dcqcn(m->cfg.engine, &p, &field) < 0) {
		m->cnt.refused_dcqcn++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, MNIC_SITE_DCQCN_FLAGS + field);
	}
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}

/* SET_GID: one entry of the host's RoCEv2 GID table (mnic/cmd.h): an
 * address packets may come from (rocev2_gid_unicast: IPv4-mapped or
 * IPv6), or all zero to clear.  The engine keeps the table. */
int h_set_gid(struct mnic_mgmt *m, struct cmd_call *c)
{
	static const uint8_t zero[sizeof(((struct mnic_cmd_set_gid_in *)0)->gid)];
	struct mnic_cmd_set_gid_in in;
	uint32_t site = 0;
	int valid;

	memcpy(&in, c->buf, sizeof(in));
	valid = (in.flags & MNIC_GID_F_VALID) != 0;
	if (in.index >= MNIC_GID_TBL_LEN)
		site = MNIC_SITE_GID_INDEX;
	else if (in.flags & ~MNIC_GID_F_VALID)
		site = MNIC_SITE_GID_FLAGS;
	else if (valid ? !rocev2_gid_unicast(in.gid) : memcmp(in.gid, zero, sizeof(zero)) != 0)
		site = MNIC_SITE_GID_ADDR;
	if (site) {
		m->cnt.refused_gid++;
		return fail(c, MNIC_CMD_STAT_BAD_PARAM, HAL_EINVAL, site);
	}
	(void)rocev2_set_gid(m->cfg.engine, in.index, valid ? in.gid : NULL);   /* checked above */
	if (valid)
		m->cnt.gid_set++;
	else
		m->cnt.gid_cleared++;
	c->produced = sizeof(struct mnic_cmd_simple_out);
	return 0;
}
