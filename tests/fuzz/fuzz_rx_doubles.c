/* Doubles for the isolated fuzz_rx build (the default one): what
 * recv.c and rocev2.c call outside the files linked there (qp.c, resp.c,
 * comp.c, req.c).  The stages read every byte rocev2_parse says belongs to
 * the packet (extension headers, payload, pad, ICRC), so ASan catches a
 * parse that promises more than the frame holds. */
#include <string.h>

#include "rocev2/internal.h"

uint32_t fuzz_rx_setup_qp(struct rocev2 *e, uint32_t peer_ip, uint32_t peer_qpn);

#define FUZZ_QPN 0x001005u      /* any 24-bit value; the lookup below matches it */

uint32_t fuzz_rx_setup_qp(struct rocev2 *e, uint32_t peer_ip, uint32_t peer_qpn)
{
	struct rocev2_qp *qp = &e->qps[5 % ROCEV2_MAX_QP];

	qp->in_use = 1;
	qp->qpn = FUZZ_QPN;
	qp->state = ROCEV2_QPS_RTS;
	rocev2_av_set_ipv4(&qp->attr.av, peer_ip);
	qp->attr.dest_qp_num = peer_qpn;
	rocev2_cc_reset(e, qp, 1);   /* DCQCN timers set up, as create_qp does */
	return FUZZ_QPN;
}

struct rocev2_qp *rocev2_qp_lookup(struct rocev2 *e, uint32_t qpn)
{
	unsigned i;

	for (i = 0; i < ROCEV2_MAX_QP; i++)
		if (e->qps[i].in_use && e->qps[i].qpn == qpn)
			return &e->qps[i];
	return NULL;
}

/* Every other QPN counts as never issued. */
int rocev2_qpn_stale(const struct rocev2 *e, uint32_t qpn)
{
	(void)e;
	(void)qpn;
	return 0;
}

static volatile uint8_t sink;

static void touch_packet(const struct rocev2_pkt *pkt)
{
	const uint8_t *p = pkt->bth->b;
	size_t n = (size_t)pkt->info->hdr_len + pkt->paylen + bth_pad(pkt->bth) + ICRC_LEN, i;
	uint8_t x = 0;

	for (i = 0; i < n; i++)
		x ^= p[i];
	sink = x;
}

void rocev2_resp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	(void)e;
	if (!(pkt->info->mask & OPM_REQ) || qp->state < ROCEV2_QPS_RTR)
		__builtin_trap();
	touch_packet(pkt);
}

void rocev2_comp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	(void)e;
	if (!(pkt->info->mask & OPM_RESP) || qp->state < ROCEV2_QPS_RTS)
		__builtin_trap();
	touch_packet(pkt);
}

unsigned rocev2_resp_run(struct rocev2 *e, struct rocev2_qp *qp, unsigned budget)
{
	(void)e;
	(void)qp;
	(void)budget;
	return 0;
}

unsigned rocev2_req_run(struct rocev2 *e, struct rocev2_qp *qp, unsigned budget)
{
	(void)e;
	(void)qp;
	(void)budget;
	return 0;
}

void rocev2_req_flush(struct rocev2 *e, struct rocev2_qp *qp)
{
	(void)e;
	(void)qp;
}

void rocev2_resp_flush(struct rocev2 *e, struct rocev2_qp *qp)
{
	(void)e;
	(void)qp;
}

/* rocev2.c's doorbell scan reaches the SRQs (srq.c): this build has none. */
int rocev2_srq_doorbell(struct rocev2 *e, uint32_t srq)
{
	(void)e;
	(void)srq;
	return -HAL_EINVAL;
}

/* ... and the CQ arms (eq.c): this build has no CQs. */
unsigned rocev2_cq_arms_changed(struct rocev2 *e)
{
	(void)e;
	return 0;
}

/* ... and the host Ethernet queues (ethq.c): this build has none, so every
 * frame is the engine's. */
int rocev2_ethq_rx(struct rocev2 *e, const uint8_t *frame, size_t len)
{
	(void)e;
	(void)frame;
	(void)len;
	return 0;
}

unsigned rocev2_ethq_tx(struct rocev2 *e, unsigned budget)
{
	(void)e;
	(void)budget;
	return 0;
}

int rocev2_ethq_tx_doorbell(struct rocev2 *e)
{
	(void)e;
	return 0;
}

int rocev2_ethq_pending(const struct rocev2 *e)
{
	(void)e;
	return 0;
}

void rocev2_ethq_raise(struct rocev2 *e)
{
	(void)e;
}
