/* Test doubles for what rocev2_rx() calls outside recv.c: the QP table
 * lookup (qp.c) and the two stages it hands packets to (resp.c, comp.c).
 * test_recv.c checks the demultiplexer in isolation, so the stages only
 * record what they were given.  The lookup matches e->qps[].qpn of in-use
 * QPs, whatever the real QPN encoding is. */
#include <string.h>

#include "rocev2/internal.h"

/* Declared in test_recv.c. */
struct recv_delivery {
	const struct rocev2_qp *qp;
	struct rocev2_pkt pkt;
	uint8_t payload[64];            /* first bytes, copied while valid */
};
extern struct recv_delivery recv_resp_calls[8], recv_comp_calls[8];
extern unsigned recv_n_resp, recv_n_comp, recv_n_lookup;
extern uint32_t recv_stale_qpn;

struct recv_delivery recv_resp_calls[8], recv_comp_calls[8];
unsigned recv_n_resp, recv_n_comp, recv_n_lookup;

struct rocev2_qp *rocev2_qp_lookup(struct rocev2 *e, uint32_t qpn)
{
	unsigned i;

	recv_n_lookup++;
	for (i = 0; i < ROCEV2_MAX_QP; i++)
		if (e->qps[i].in_use && e->qps[i].qpn == qpn)
			return &e->qps[i];
	return NULL;
}

/* qp.c's stale-QPN test: recv_stale_qpn is the one destroyed QPN. */
uint32_t recv_stale_qpn = 0xffffffffu;

int rocev2_qpn_stale(const struct rocev2 *e, uint32_t qpn)
{
	(void)e;
	return qpn == recv_stale_qpn;
}

static void record(struct recv_delivery *d, const struct rocev2_qp *qp,
		   const struct rocev2_pkt *pkt)
{
	d->qp = qp;
	d->pkt = *pkt;
	memcpy(d->payload, pkt->payload, pkt->paylen < sizeof(d->payload) ? pkt->paylen
									     : sizeof(d->payload));
}

void rocev2_resp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	(void)e;
	if (recv_n_resp < 8)
		record(&recv_resp_calls[recv_n_resp], qp, pkt);
	recv_n_resp++;
}

void rocev2_comp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	(void)e;
	if (recv_n_comp < 8)
		record(&recv_comp_calls[recv_n_comp], qp, pkt);
	recv_n_comp++;
}

/* cc.c's two entry points: counted only (test_dcqcn drives the real ones). */
unsigned recv_n_ce, recv_n_cnp;

void rocev2_cc_ce(struct rocev2 *e, struct rocev2_qp *qp)
{
	(void)e;
	(void)qp;
	recv_n_ce++;
}

void rocev2_cc_cnp_rx(struct rocev2 *e, struct rocev2_qp *qp, const struct rocev2_pkt *pkt)
{
	(void)e;
	(void)qp;
	(void)pkt;
	recv_n_cnp++;
}

/* The host Ethernet queues (ethq.c): none here, every frame is the
 * engine's. */
int rocev2_ethq_rx(struct rocev2 *e, const uint8_t *frame, size_t len)
{
	(void)e;
	(void)frame;
	(void)len;
	return 0;
}
