/* rocev2/rocev2_image.h, the migration image seen from outside the engine
 * (what mgmt's RESTORE_OBJECT uses instead of reading offsets):
 *
 *   - the iterator walks a real dump record by record (types in
 *     dependency order, version, payloads tiling the image) and refuses a
 *     frame that leaves the image;
 *   - rocev2_record_parse takes exactly one record, refuses short, long
 *     and foreign-version ones;
 *   - the host ranges of every record are the addresses the objects were
 *     created with (ring = entries * entry size, doorbell record, MR);
 *     hostile payloads (short, too long, unknown type) are refused, and
 *     ranges that wrap around 2^64 come out as stated, refused by the
 *     engine's window check on restore;
 *   - restoring record by record with rocev2_restore_record rebuilds an
 *     engine that dumps to the same bytes; wrong type or op: -HAL_EINVAL,
 *     the engine untouched. */
#include "cmocka_main.h"

#include <string.h>

#include "dump.h"
#include "internal.h"
#include "silent_env.h"

#define WIN (1u << 20)
#define IMG_MAX 16384u

struct node {
	struct rocev2 e;
	uint8_t mem[WIN];
	struct hal_dma dma;
};

static struct node na, nb;
static uint8_t img[IMG_MAX], img2[IMG_MAX], rec[IMG_MAX];
static size_t img_len;

static void node_init(struct node *n)
{
	struct rocev2_env env = silent_env(&n->dma);

	env.ctx = n;
	memset(n->mem, 0, sizeof(n->mem));
	hal_dma_window_init(&n->dma, n->mem, WIN);
	assert_int_equal(rocev2_init(&n->e, &env), 0);
}

/* The objects of engine A, with the host memory each was given. */
#define MR_ADDR 0x3000u
#define MR_LEN 0x1000u
static const struct rocev2_queue_attr cq_q = { .ring_addr = 0x1000,
					       .dbrec_addr = 0x100, .size = 64 };
static const struct rocev2_queue_attr srq_q = { .ring_addr = 0x40000,
						.dbrec_addr = 0x140, .size = 16 };
static const struct rocev2_queue_attr qp1_sq = { .ring_addr = 0x80000,
						 .dbrec_addr = 0x200, .size = 8 };
static const struct rocev2_queue_attr qp1_rq = { .ring_addr = 0x82000,
						 .dbrec_addr = 0x208, .size = 16 };
static const struct rocev2_queue_attr qp2_sq = { .ring_addr = 0x88000,
						 .dbrec_addr = 0x210, .size = 4 };

static int setup(void **state)
{
	struct rocev2_srq_attr sa = { .q = srq_q, .max_sge = 4 };
	struct rocev2_qp_init_attr ia;
	uint32_t pd, lkey, rkey, cq, srq, qpn;

	(void)state;
	node_init(&na);
	node_init(&nb);
	assert_int_equal(rocev2_alloc_pd(&na.e, &pd), 0);
	assert_int_equal(rocev2_reg_mr(&na.e, pd, MR_ADDR, MR_LEN, ROCEV2_ACCESS_LOCAL_WRITE,
				       &lkey, &rkey), 0);
	assert_int_equal(rocev2_create_cq(&na.e, &cq_q, &cq), 0);
	assert_int_equal(rocev2_create_srq(&na.e, pd, &sa, &srq), 0);
	memset(&ia, 0, sizeof(ia));
	ia = (struct rocev2_qp_init_attr){ .pd = pd, .send_cq = cq, .recv_cq = cq,
					   .srq = ROCEV2_NO_SRQ, .sq = qp1_sq, .rq = qp1_rq,
					   .max_send_sge = 2, .max_recv_sge = 2 };
	assert_int_equal(rocev2_create_qp(&na.e, &ia, &qpn), 0);
	ia = (struct rocev2_qp_init_attr){ .pd = pd, .send_cq = cq, .recv_cq = cq, .srq = srq,
					   .sq = qp2_sq, .max_send_sge = 1 };
	assert_int_equal(rocev2_create_qp(&na.e, &ia, &qpn), 0);
	assert_int_equal(rocev2_dump_context(&na.e, NULL, img, sizeof(img), &img_len, NULL), 0);
	assert_int_equal(rocev2_image_validate(img, img_len), 0);
	return 0;
}

/* The nth record of the image (asserted to exist). */
static struct rocev2_record nth(unsigned n)
{
	struct rocev2_image_iter it;
	struct rocev2_record r;

	rocev2_image_iter_init(&it, img, img_len);
	do
		assert_int_equal(rocev2_image_next(&it, &r), 1);
	while (n--);
	return r;
}

static const uint32_t types[] = {
	ROCEV2_OBJ_PD, ROCEV2_OBJ_MR, ROCEV2_OBJ_CQ, ROCEV2_OBJ_SRQ, ROCEV2_OBJ_QP, ROCEV2_OBJ_QP,
};
#define NREC (sizeof(types) / sizeof(types[0]))

static void test_iterate(void **state)
{
	struct rocev2_image_iter it;
	struct rocev2_record r;
	const uint8_t *next = img + ROCEV2_DUMP_HDR_LEN;
	unsigned n = 0;
	int rc;

	(void)state;
	rocev2_image_iter_init(&it, img, img_len);
	while ((rc = rocev2_image_next(&it, &r)) > 0) {
		assert_true(n < NREC);
		assert_int_equal(r.type, types[n]);
		/* QP records are version 4 (epochs, two keys, MTTs, GIDs), the rest 2. */
		assert_int_equal(r.version, r.type == ROCEV2_OBJ_QP ? 4 : 2);
		assert_ptr_equal(r.payload, next + ROCEV2_DUMP_REC_HDR_LEN);
		next = r.payload + r.len;
		n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, NREC);
	assert_ptr_equal(next, img + img_len);      /* the records tile the image */
	assert_int_equal(rocev2_image_next(&it, &r), 0);   /* and stay at the end */
	assert_int_equal(nth(1).len, ROCEV2_DUMP_MR_LEN);

	/* Just a header: no record.  Shorter than a header: refused. */
	rocev2_image_iter_init(&it, img, ROCEV2_DUMP_HDR_LEN);
	assert_int_equal(rocev2_image_next(&it, &r), 0);
	rocev2_image_iter_init(&it, img, ROCEV2_DUMP_HDR_LEN - 1);
	assert_int_equal(rocev2_image_next(&it, &r), -HAL_EINVAL);
	rocev2_image_iter_init(&it, NULL, 0);
	assert_int_equal(rocev2_image_next(&it, &r), -HAL_EINVAL);

	/* Frames that leave the image (not validated): cut inside a record
	 * header, a record cut short, a length below the header's own. */
	rocev2_image_iter_init(&it, img, ROCEV2_DUMP_HDR_LEN + 4);
	assert_int_equal(rocev2_image_next(&it, &r), -HAL_EINVAL);
	rocev2_image_iter_init(&it, img, img_len - 1);
	for (n = 0; n + 1 < NREC; n++)
		assert_int_equal(rocev2_image_next(&it, &r), 1);
	assert_int_equal(rocev2_image_next(&it, &r), -HAL_EINVAL);
	memcpy(img2, img, img_len);
	put_le32(img2 + ROCEV2_DUMP_HDR_LEN + 4, ROCEV2_DUMP_REC_HDR_LEN - 1);
	rocev2_image_iter_init(&it, img2, img_len);
	assert_int_equal(rocev2_image_next(&it, &r), -HAL_EINVAL);
	put_le32(img2 + ROCEV2_DUMP_HDR_LEN + 4, (uint32_t)img_len);
	rocev2_image_iter_init(&it, img2, img_len);
	assert_int_equal(rocev2_image_next(&it, &r), -HAL_EINVAL);
}

/* The record r as its own buffer (header + payload), len bytes of it. */
static size_t record_copy(const struct rocev2_record *r)
{
	size_t len = ROCEV2_DUMP_REC_HDR_LEN + r->len;

	memcpy(rec, r->payload - ROCEV2_DUMP_REC_HDR_LEN, len);
	return len;
}

static void test_record_parse(void **state)
{
	struct rocev2_record in = nth(2), r;
	size_t len = record_copy(&in);

	(void)state;
	assert_int_equal(rocev2_record_parse(rec, len, &r), 0);
	assert_int_equal(r.type, ROCEV2_OBJ_CQ);
	assert_int_equal(r.version, ROCEV2_DUMP_REC_VERSION);
	assert_ptr_equal(r.payload, rec + ROCEV2_DUMP_REC_HDR_LEN);
	assert_int_equal(r.len, ROCEV2_DUMP_CQ_LEN);
	/* The header must describe exactly the bytes given. */
	assert_int_equal(rocev2_record_parse(rec, len - 1, &r), -HAL_EINVAL);
	assert_int_equal(rocev2_record_parse(rec, len + 1, &r), -HAL_EINVAL);
	assert_int_equal(rocev2_record_parse(rec, ROCEV2_DUMP_REC_HDR_LEN - 1, &r), -HAL_EINVAL);
	assert_int_equal(rocev2_record_parse(rec, 0, &r), -HAL_EINVAL);
	assert_int_equal(rocev2_record_parse(NULL, len, &r), -HAL_EINVAL);
	put_le32(rec + 4, ROCEV2_DUMP_REC_HDR_LEN - 1);
	assert_int_equal(rocev2_record_parse(rec, ROCEV2_DUMP_REC_HDR_LEN - 1, &r), -HAL_EINVAL);
	put_le32(rec + 4, UINT32_MAX);
	assert_int_equal(rocev2_record_parse(rec, len, &r), -HAL_EINVAL);
	put_le32(rec + 4, (uint32_t)len);
	rec[2] = 1;                     /* record version 1: before MTTs */
	assert_int_equal(rocev2_record_parse(rec, len, &r), -HAL_ERANGE);
	rec[2] = 3;
	assert_int_equal(rocev2_record_parse(rec, len, &r), -HAL_ERANGE);
	/* The type is the op's business (rocev2_restore_op_takes). */
	rec[2] = 2;
	rec[0] = 0xff;
	assert_int_equal(rocev2_record_parse(rec, len, &r), 0);
	assert_int_equal(r.type, 0xffu);
}

static void same_range(const struct rocev2_host_range *g, uint64_t addr, uint64_t len,
		       uint32_t kind)
{
	assert_int_equal(g->addr, addr);
	assert_int_equal(g->len, len);
	assert_int_equal(g->kind, kind);
}

/* Ring and doorbell record of q, as the create commands check them. */
static void same_queue(const struct rocev2_host_range *g, const struct rocev2_queue_attr *q,
		       uint32_t entry_size)
{
	same_range(&g[0], q->ring_addr, (uint64_t)q->size * entry_size, ROCEV2_RANGE_RING);
	same_range(&g[1], q->dbrec_addr, sizeof(struct mnic_dbrec), ROCEV2_RANGE_DBREC);
}

static int ranges(const struct rocev2_record *r, struct rocev2_host_range *g)
{
	return rocev2_record_host_ranges(r->type, r->payload, r->len, g,
					 ROCEV2_RECORD_MAX_RANGES);
}

static void test_host_ranges(void **state)
{
	struct rocev2_host_range g[ROCEV2_RECORD_MAX_RANGES];
	struct rocev2_record r;

	(void)state;
	r = nth(0);
	assert_int_equal(ranges(&r, g), 0);                 /* a PD names no memory */
	assert_int_equal(rocev2_record_host_ranges(r.type, r.payload, r.len, NULL, 0), 0);
	r = nth(1);
	assert_int_equal(ranges(&r, g), 1);
	same_range(&g[0], MR_ADDR, MR_LEN, ROCEV2_RANGE_MR);
	r = nth(2);
	assert_int_equal(ranges(&r, g), 2);
	same_queue(g, &cq_q, MNIC_CQE_SIZE);
	r = nth(3);
	assert_int_equal(ranges(&r, g), 2);
	same_queue(g, &srq_q, MNIC_WQE_SIZE);
	r = nth(4);
	assert_int_equal(ranges(&r, g), 4);
	same_queue(&g[0], &qp1_sq, MNIC_WQE_SIZE);
	same_queue(&g[2], &qp1_rq, MNIC_WQE_SIZE);
	r = nth(5);                     /* on the SRQ: no RQ of its own */
	assert_int_equal(ranges(&r, g), 2);
	same_queue(g, &qp2_sq, MNIC_WQE_SIZE);
	/* Not enough room: nothing written. */
	memset(g, 0xee, sizeof(g));
	assert_int_equal(rocev2_record_host_ranges(r.type, r.payload, r.len, g, 1), -HAL_ENOSPC);
	assert_int_equal(g[0].addr, 0xeeeeeeeeeeeeeeeeull);
	assert_int_equal(rocev2_record_host_ranges(r.type, r.payload, r.len, NULL, 4),
			 -HAL_EINVAL);
}

static void test_host_ranges_hostile(void **state)
{
	struct rocev2_host_range g[ROCEV2_RECORD_MAX_RANGES];
	struct rocev2_record r;
	unsigned i;

	(void)state;
	for (i = 0; i < NREC; i++) {
		r = nth(i);
		/* Short and too long payloads, as their decoders refuse them. */
		assert_int_equal(rocev2_record_host_ranges(r.type, r.payload, r.len - 1, g, 4),
				 -HAL_EINVAL);
		memcpy(rec, r.payload, r.len);
		rec[r.len] = 0;
		assert_int_equal(rocev2_record_host_ranges(r.type, rec, r.len + 1, g, 4),
				 -HAL_EINVAL);
		assert_int_equal(rocev2_record_host_ranges(r.type, NULL, r.len, g, 4), -HAL_EINVAL);
		assert_int_equal(rocev2_record_host_ranges(r.type, rec, 0, g, 4), -HAL_EINVAL);
	}
	/* Unknown types, the statistics-only one included. */
	r = nth(1);
	assert_int_equal(rocev2_record_host_ranges(ROCEV2_OBJ_LIVE_NUM, r.payload, r.len, g, 4),
			 -HAL_EINVAL);
	assert_int_equal(rocev2_record_host_ranges(ROCEV2_OBJ_QP_SRQ, r.payload, r.len, g, 4),
			 -HAL_EINVAL);
	assert_int_equal(rocev2_record_host_ranges(UINT32_MAX, r.payload, r.len, g, 4),
			 -HAL_EINVAL);
	/* A payload of another type: the MR record read as a CQ is too long. */
	assert_int_equal(rocev2_record_host_ranges(ROCEV2_OBJ_CQ, r.payload, r.len, g, 4),
			 -HAL_EINVAL);
}

/* Ranges that wrap around 2^64 come out as the record states them (the
 * caller's bounds check sees them whole) and the engine refuses them. */
static void test_host_ranges_wrap(void **state)
{
	struct rocev2_host_range g[ROCEV2_RECORD_MAX_RANGES];
	struct rocev2_record r;
	uint32_t pd;

	(void)state;
	assert_int_equal(rocev2_alloc_pd(&nb.e, &pd), 0);
	assert_int_equal(pd, get_le32(nth(0).payload));    /* the image's PD, in B */

	r = nth(1);
	memcpy(rec, r.payload, r.len);
	put_le32(rec + 8, 0xfffff000u);                     /* addr 2^64 - 4096 */
	put_le32(rec + 12, UINT32_MAX);
	put_le32(rec + 16, 0x2000u);                        /* length 8192 */
	assert_int_equal(rocev2_record_host_ranges(r.type, rec, r.len, g, 4), 1);
	same_range(&g[0], UINT64_MAX - 0xfffu, 0x2000u, ROCEV2_RANGE_MR);
	assert_true(g[0].addr + g[0].len < g[0].addr);     /* it wraps */
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_MR_KEYS, r.type, rec, r.len),
			 -HAL_EFAULT);
	put_le32(rec + 8, 0x1000u);                         /* length 2^64 - 1 from 4096 */
	put_le32(rec + 12, 0);
	put_le32(rec + 16, UINT32_MAX);
	put_le32(rec + 20, UINT32_MAX);
	assert_int_equal(rocev2_record_host_ranges(r.type, rec, r.len, g, 4), 1);
	same_range(&g[0], 0x1000u, UINT64_MAX, ROCEV2_RANGE_MR);
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_MR_KEYS, r.type, rec, r.len),
			 -HAL_EFAULT);

	r = nth(2);                     /* a CQ ring ending past 2^64 */
	memcpy(rec, r.payload, r.len);
	put_le32(rec + 4, (uint32_t)(UINT64_MAX - 63u));
	put_le32(rec + 8, UINT32_MAX);
	assert_int_equal(rocev2_record_host_ranges(r.type, rec, r.len, g, 4), 2);
	same_range(&g[0], UINT64_MAX - 63u, 64u * MNIC_CQE_SIZE, ROCEV2_RANGE_RING);
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_CREATE, r.type, rec, r.len),
			 -HAL_EFAULT);
	assert_int_equal(rocev2_record_host_ranges(r.type, r.payload, r.len, g, 4), 2);
	assert_int_equal(nb.e.n_mr, 0);
	assert_int_equal(nb.e.n_cq, 0);
}

static void test_restore_op_takes(void **state)
{
	uint32_t type;
	unsigned op;

	(void)state;
	for (op = 0; op < ROCEV2_RESTORE_OPS + 2; op++)
		for (type = 0; type < ROCEV2_OBJ_LIVE_NUM + 2; type++) {
			int want = (op == ROCEV2_RESTORE_CREATE &&
				    (type == ROCEV2_OBJ_PD || type == ROCEV2_OBJ_CQ ||
				     type == ROCEV2_OBJ_SRQ || type == ROCEV2_OBJ_QP ||
				     type == ROCEV2_OBJ_MTT)) ||
				   (op == ROCEV2_RESTORE_REFILL && type == ROCEV2_OBJ_QP) ||
				   (op == ROCEV2_RESTORE_MR_KEYS && type == ROCEV2_OBJ_MR);

			assert_int_equal(rocev2_restore_op_takes((enum rocev2_restore_op)op, type) != 0,
					 want);
		}
	assert_false(rocev2_restore_op_takes((enum rocev2_restore_op)0xffff, ROCEV2_OBJ_QP));
	assert_false(rocev2_restore_op_takes(ROCEV2_RESTORE_CREATE, UINT32_MAX));
}

/* The per-object path: every record with its op, in image order (the
 * dependency order); the QPs created, then refilled.  B dumps to A's
 * bytes.  Refused before any of that: wrong type/op, hostile lengths. */
static void test_restore_record(void **state)
{
	struct rocev2_image_iter it;
	struct rocev2_record r, pd = nth(0), mr = nth(1), qp = nth(4);
	size_t len;

	(void)state;
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_MR_KEYS, pd.type, pd.payload,
					       pd.len), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_REFILL, pd.type, pd.payload,
					       pd.len), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_OPS, pd.type, pd.payload,
					       pd.len), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_record(&nb.e, (enum rocev2_restore_op)0xffff, pd.type,
					       pd.payload, pd.len), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_CREATE, ROCEV2_OBJ_QP_SRQ,
					       qp.payload, qp.len), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_CREATE, ROCEV2_OBJ_MR,
					       mr.payload, mr.len), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_CREATE, ROCEV2_OBJ_PD,
					       pd.payload, pd.len - 1), -HAL_EINVAL);
	memcpy(rec, pd.payload, pd.len);
	rec[pd.len] = 0;
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_CREATE, ROCEV2_OBJ_PD, rec,
					       pd.len + 1), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_CREATE, ROCEV2_OBJ_PD,
					       pd.payload, 0), -HAL_EINVAL);
	assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_CREATE, ROCEV2_OBJ_QP,
					       qp.payload, qp.len - 1), -HAL_EINVAL);
	assert_int_equal(nb.e.n_pd + nb.e.n_mr + nb.e.n_cq + nb.e.n_srq + nb.e.n_qp, 0);

	rocev2_image_iter_init(&it, img, img_len);
	while (rocev2_image_next(&it, &r) > 0) {
		enum rocev2_restore_op op = r.type == ROCEV2_OBJ_MR ? ROCEV2_RESTORE_MR_KEYS
								     : ROCEV2_RESTORE_CREATE;

		assert_int_equal(rocev2_restore_record(&nb.e, op, r.type, r.payload, r.len), 0);
		assert_int_equal(rocev2_restore_record(&nb.e, op, r.type, r.payload, r.len),
				 -HAL_EEXIST);
	}
	rocev2_image_iter_init(&it, img, img_len);
	while (rocev2_image_next(&it, &r) > 0)
		if (rocev2_restore_op_takes(ROCEV2_RESTORE_REFILL, r.type))
			assert_int_equal(rocev2_restore_record(&nb.e, ROCEV2_RESTORE_REFILL, r.type,
							       r.payload, r.len), 0);
	assert_int_equal(rocev2_dump_context(&nb.e, NULL, img2, sizeof(img2), &len, NULL), 0);
	assert_int_equal(len, img_len);
	assert_memory_equal(img2, img, img_len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_iterate, setup),
		cmocka_unit_test_setup(test_record_parse, setup),
		cmocka_unit_test_setup(test_host_ranges, setup),
		cmocka_unit_test_setup(test_host_ranges_hostile, setup),
		cmocka_unit_test_setup(test_host_ranges_wrap, setup),
		cmocka_unit_test_setup(test_restore_op_takes, setup),
		cmocka_unit_test_setup(test_restore_record, setup),
	};
	return cmocka_run_group_tests_name("rocev2/image", tests, NULL, NULL);
}
