/* Dump of one context (the objects one owner holds, rocev2_create_as)
 * into a migration image (source side; format: docs/migration-image.md,
 * codecs: image_records.c).
 *
 * rocev2_dump_context() stops that context's QPs in one step (the engine
 * runs to completion, so nothing interleaves), sizes the image, and only
 * when it fits writes it: MTTs, PDs, MRs, CQs, SRQs, QPs, each kind in
 * slot order, so that every record comes after the ones it refers to.  Objects
 * of other contexts are neither stopped nor exported; they cannot be
 * referred to (an object refers only to objects of its own context).
 */
#include <stddef.h>
#include <string.h>

#include "image_codec.h"

/* One record written: its length in place, counted. */
static void rec_end(struct dump_out *o, size_t start, unsigned stat_type,
		    struct rocev2_dump_stats *st, uint32_t *count)
{
	size_t bytes = image_rec_end(o, start);

	/* MTT records are in the total only: the statistics are those of
	 * DUMP_CONTEXT's output (mnic_cmd_dump_out), PD .. QP_SRQ. */
	if (stat_type < ROCEV2_OBJ_NUM) {
		st->objects[stat_type]++;
		st->bytes[stat_type] += (uint32_t)bytes;
	}
	(*count)++;
}

/* An MTT of one of the owner's event queues: the host driver's own (its
 * EQ is made by the target's driver for the new context, with an MTT of
 * its own), so not part of the context's image. */
static int mtt_of_eq(const struct rocev2 *e, uint16_t owner, uint32_t i)
{
	uint32_t k;

	for (k = 0; k < ROCEV2_MAX_EQ; k++) {
		const struct rocev2_eq *eq = &e->eqs[k];

		if (eq->in_use && eq->owner == owner &&
		    ((eq->q.ring_mtt != ROCEV2_NO_MTT && rocev2_handle_index(eq->q.ring_mtt) == i) ||
		     (eq->q.dbrec_mtt != ROCEV2_NO_MTT &&
		      rocev2_handle_index(eq->q.dbrec_mtt) == i)))
			return 1;
	}
	return 0;
}

/* Every record, in dependency order, from o->pos on; counts them. */
static int dump_records(const struct rocev2 *e, uint16_t owner, struct dump_out *o,
			struct rocev2_dump_stats *st, uint32_t *count)
{
	size_t start;
	uint32_t i;
	int rc;

	*count = 0;
	for (i = 0; i < ROCEV2_MAX_MTT; i++) {
		if (!e->mtts[i].in_use || e->mtts[i].owner != owner || mtt_of_eq(e, owner, i))
			continue;
		start = image_rec_begin(o, ROCEV2_OBJ_MTT);
		img_mtt_encode(o, e, i);
		rec_end(o, start, ROCEV2_OBJ_MTT, st, count);
	}
	for (i = 0; i < ROCEV2_MAX_PD; i++) {
		if (!e->pds[i].in_use || e->pds[i].owner != owner)
			continue;
		start = image_rec_begin(o, ROCEV2_OBJ_PD);
		img_pd_encode(o, e, i);
		rec_end(o, start, ROCEV2_OBJ_PD, st, count);
	}
	for (i = 0; i < ROCEV2_MAX_MR; i++) {
		if (!e->mrs[i].in_use || e->mrs[i].owner != owner)
			continue;
		start = image_rec_begin(o, ROCEV2_OBJ_MR);
		img_mr_encode(o, e, i);
		rec_end(o, start, ROCEV2_OBJ_MR, st, count);
	}
	for (i = 0; i < ROCEV2_MAX_CQ; i++) {
		if (!e->cqs[i].in_use || e->cqs[i].owner != owner)
			continue;
		start = image_rec_begin(o, ROCEV2_OBJ_CQ);
		img_cq_encode(o, e, i);
		rec_end(o, start, ROCEV2_OBJ_CQ, st, count);
	}
	for (i = 0; i < ROCEV2_MAX_SRQ; i++) {
		if (!e->srqs[i].in_use || e->srqs[i].owner != owner)
			continue;
		start = image_rec_begin(o, ROCEV2_OBJ_SRQ);
		img_srq_encode(o, e, i);
		rec_end(o, start, ROCEV2_OBJ_SRQ, st, count);
	}
	for (i = 0; i < ROCEV2_MAX_QP; i++) {
		const struct rocev2_qp *qp = &e->qps[i];

		if (!qp->in_use || qp->owner != owner)
			continue;
		start = image_rec_begin(o, ROCEV2_OBJ_QP);
		rc = img_qp_encode(o, e, qp);
		if (rc)
			return rc;
		/* Statistics only: MigrOS's Table 2 lists a QP with an SRQ
		 * apart; the record type is QP either way. */
		rec_end(o, start, qp->srq == ROCEV2_NO_SRQ ? ROCEV2_OBJ_QP : ROCEV2_OBJ_QP_SRQ, st,
			count);
	}
	return 0;
}

/* MigrOS's ib_pause_qp on every QP of the context, in one step: the engine runs to
 * completion, so no packet is handled between this and the image.
 * Timers keep running; a stopped QP's requester sends nothing (req.c),
 * its completer takes nothing (comp.c), its responder NAKs new requests
 * (resp.c).  rocev2_resume_context / rocev2_abort_dump undo it. */
static void dump_stop(struct rocev2 *e, uint16_t owner)
{
	uint32_t i;

	for (i = 0; i < ROCEV2_MAX_QP; i++)
		if (e->qps[i].in_use && e->qps[i].owner == owner)
			e->qps[i].stopped = 1;
	e->owner_stopped[owner] = 1;
}

int rocev2_dump_context(struct rocev2 *e, const struct rocev2_dump_scope *scope, void *buf,
			size_t cap, size_t *len, struct rocev2_dump_stats *stats)
{
	static const struct rocev2_dump_scope mgmt_scope;   /* owner 0, no range */
	struct rocev2_dump_stats st;
	struct dump_out o = { NULL, 0, ROCEV2_DUMP_HDR_LEN };
	uint32_t count;
	uint8_t *b = buf;
	size_t total;
	int rc;

	if (!scope)
		scope = &mgmt_scope;
	if (!e || !len || (!buf && cap) || scope->owner >= ROCEV2_MAX_OWNERS ||
	    scope->ua_offset > UINT64_MAX - scope->ua_size)
		return -HAL_EINVAL;
	*len = 0;
	/* Size first, before the stop: a buffer too small gets nothing written
	 * to it and changes nothing.  It was stopped first, and the caller's
	 * roll-back (an abort: a RESUME exchange in place) moved every QP to
	 * a new epoch whose RESUME a full TX ring could hold back; the dump
	 * that followed at once stopped them again, the target's RESUME came
	 * two epochs ahead of the peer and was dropped (bench/migrate.sh, 256
	 * QPs: an image above the host's first 64 KiB guess).  The engine runs
	 * to completion, so nothing changes between this pass and the image. */
	memset(&st, 0, sizeof(st));
	rc = dump_records(e, (uint16_t)scope->owner, &o, &st, &count);
	if (rc)
		return rc;
	total = o.pos;
	if (total > UINT32_MAX)
		return -HAL_E2BIG;      /* cannot happen with the pool sizes */
	st.total = (uint32_t)total;
	if (stats)
		*stats = st;
	if (total > cap)
		return -HAL_ENOSPC;

	dump_stop(e, (uint16_t)scope->owner);
	o = (struct dump_out){ b, cap, ROCEV2_DUMP_HDR_LEN };
	memset(&st, 0, sizeof(st));
	rc = dump_records(e, (uint16_t)scope->owner, &o, &st, &count);
	if (rc)
		return rc;
	image_header_write(b, count, total, scope->ua_offset, scope->ua_size);
	*len = total;
	return 0;
}
