/* Test doubles for the stage entry points that the object and queue code
 * (and rocev2.c, linked for the event ring and the scheduler) calls, while
 * the real requester/completer/responder are being written.  They only
 * record the calls, so that the tests can check that qp.c invokes each
 * hook at the right transition.  Replace by the real req.c/comp.c/resp.c
 * once those exist. */
#include "internal.h"

unsigned dbl_req_reset, dbl_comp_reset, dbl_resp_reset;
unsigned dbl_req_flush, dbl_resp_flush, dbl_req_run, dbl_resp_run;
const struct rocev2_qp *dbl_last_qp;
/* State the QP was in when the flush hooks ran (qp_to_error must set ERR
 * first, so that a flushing stage sees the QP in error). */
unsigned dbl_flush_state;

void rocev2_req_reset(struct rocev2_qp *qp)
{
	dbl_req_reset++;
	dbl_last_qp = qp;
}

void rocev2_comp_reset(struct rocev2 *e, struct rocev2_qp *qp)
{
	(void)e;
	dbl_comp_reset++;
	dbl_last_qp = qp;
}

void rocev2_resp_reset(struct rocev2_qp *qp)
{
	dbl_resp_reset++;
	dbl_last_qp = qp;
}

void rocev2_req_flush(struct rocev2 *e, struct rocev2_qp *qp)
{
	(void)e;
	dbl_req_flush++;
	dbl_flush_state = qp->state;
	dbl_last_qp = qp;
}

void rocev2_resp_flush(struct rocev2 *e, struct rocev2_qp *qp)
{
	(void)e;
	dbl_resp_flush++;
	dbl_flush_state = qp->state;
	dbl_last_qp = qp;
}

unsigned rocev2_req_run(struct rocev2 *e, struct rocev2_qp *qp, unsigned budget)
{
	(void)e;
	(void)qp;
	(void)budget;
	dbl_req_run++;
	return 0;
}

unsigned rocev2_resp_run(struct rocev2 *e, struct rocev2_qp *qp, unsigned budget)
{
	(void)e;
	(void)qp;
	(void)budget;
	dbl_resp_run++;
	return 0;
}
