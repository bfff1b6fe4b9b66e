/* Completion channels (libmnic.h "completion events", docs/libmnic.md):
 * an event queue in the handle's memory on a host vector of its own, the
 * CQ arm in the doorbell record (mnic/queues.h "Completion events"), and
 * the wait: look at the EQ, sleep on the vector's eventfd, look again.
 *
 * The wait never trusts a wakeup (a raise is a hint, mnic/dbch.h) and
 * never sleeps without having looked: the NIC writes the EQE's owner byte
 * before it raises, and the eventfd is drained before the next look, so a
 * raise either lands before the look (the EQE is seen) or after the drain
 * (the fd stays readable and the next poll returns at once).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "libmnic_int.h"

/* A free vector of dev in [MNIC_EQ_VECTOR_MIN, end), 0 when all are taken. */
static uint16_t free_vector(const struct mnic_dev *dev, unsigned end)
{
	if (end > MNIC_EQ_VECTOR_MAX + 1u)
		end = MNIC_EQ_VECTOR_MAX + 1u;
	for (unsigned v = MNIC_EQ_VECTOR_MIN; v < end; v++)
		if (!(dev->eq_vectors & (1ull << v)))
			return (uint16_t)v;
	return 0;
}

int mnic_create_comp_channel(struct mnic_dev *dev, struct mnic_comp_channel **out)
{
	struct mnic_cmd_create_eq_in in;
	struct mnic_comp_channel *ch;
	int err;

	if (!dev || !out)
		return dev ? mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL) : -EINVAL;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	ch->dev = dev;
	ch->fd = -1;
	/* A vector the doorbell channel raises; when it has none left (or
	 * there is no channel) one nothing raises: that channel is polled. */
	ch->vector = dev->db_sock >= 0 ? free_vector(dev, dev->db_n_vectors) : 0;
	if (ch->vector) {
		ch->fd = mnic_dbch_vector_fd(dev, ch->vector);
		if (ch->fd < 0) {
			err = ch->fd;
			ch->fd = -1;
			mnic_set_err_detail(dev, MNIC_ERR_TRANSPORT, err,
					 "the NIC's doorbell channel refused the vector");
			goto fail;
		}
	}
	if (!ch->vector)
		ch->vector = free_vector(dev, MNIC_EQ_VECTOR_MAX + 1u);
	if (!ch->vector) {
		err = mnic_set_err_detail(dev, MNIC_ERR_ARG, -ENOSPC,
				       "every host vector of this handle has a channel");
		goto fail;
	}
	err = mnic_queue_alloc(dev, MNIC_COMP_CHANNEL_EQES, MNIC_EQE_SIZE, &ch->q);
	if (err < 0)
		goto fail;
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_CREATE_EQ;
	in.q = ch->q;
	in.vector = ch->vector;
	err = mnic_create_cmd(dev, &in, sizeof(in), &ch->eq);
	if (err < 0) {
		mnic_queue_free(dev, &ch->q);
		goto fail;
	}
	mnic_queue_bind(dev, &ch->q, MNIC_OBJ_EQ, ch->eq);
	dev->eq_vectors |= 1ull << ch->vector;
	*out = ch;
	return 0;
fail:
	/* the NIC keeps raising a closed eventfd's vector into nothing: its
	 * copy of the fd goes when this handle's channel connection does */
	if (ch->fd >= 0)
		close(ch->fd);
	free(ch);
	return err;
}

int mnic_destroy_comp_channel(struct mnic_comp_channel *ch)
{
	struct mnic_dev *dev;
	int err;

	if (!ch)
		return -EINVAL;
	dev = ch->dev;
	if (ch->cqs)
		return mnic_set_err_detail(dev, MNIC_ERR_ARG, -EBUSY, "CQs still use the channel");
	err = mnic_handle_cmd(dev, MNIC_CMD_DESTROY_EQ, ch->eq);
	if (err < 0)
		return err;
	mnic_mem_release(dev, MNIC_OBJ_EQ, ch->eq);
	dev->eq_vectors &= ~(1ull << ch->vector);
	if (ch->fd >= 0)
		close(ch->fd);
	free(ch);
	return 0;
}

void mnic_comp_channel_unlink(struct mnic_cq *cq)
{
	struct mnic_comp_channel *ch = cq->channel;

	if (!ch)
		return;
	for (struct mnic_cq **p = &ch->cqs; *p; p = &(*p)->ch_next)
		if (*p == cq) {
			*p = cq->ch_next;
			ch->n_cqs--;
			break;
		}
	cq->channel = NULL;
}

int mnic_create_cq_ch(struct mnic_dev *dev, uint32_t cqe, struct mnic_comp_channel *ch,
		      void *cq_context, struct mnic_cq **out)
{
	struct mnic_cmd_modify_cq_in in;
	struct mnic_cmd_simple_out o;
	struct mnic_cq *cq;
	int err;

	if (!dev || !out || (ch && ch->dev != dev))
		return dev ? mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL) : -EINVAL;
	if (ch && ch->n_cqs >= MNIC_COMP_CHANNEL_CQS)
		return mnic_set_err_detail(dev, MNIC_ERR_ARG, -ENOSPC,
					"the channel has MNIC_COMP_CHANNEL_CQS CQs");
	err = mnic_create_cq(dev, cqe, &cq);
	if (err < 0)
		return err;
	cq->cq_context = cq_context;
	if (ch) {
		memset(&in, 0, sizeof(in));
		in.hdr.opcode = MNIC_CMD_MODIFY_CQ;
		in.hdr.op_mod = MNIC_MODIFY_CQ_EQ;
		in.cq = cq->handle;
		in.eq = ch->eq;
		err = mnic_cmd(dev, &in, sizeof(in), &o, sizeof(o), NULL);
		if (err < 0) {
			struct mnic_cmd_result keep = dev->last;

			mnic_destroy_cq(cq);
			dev->last = keep;
			return err;
		}
		cq->channel = ch;
		cq->ch_next = ch->cqs;
		ch->cqs = cq;
		ch->n_cqs++;
	}
	*out = cq;
	return 0;
}

int mnic_req_notify_cq(struct mnic_cq *cq, int solicited_only)
{
	volatile struct mnic_dbrec *rec;
	uint32_t arm;

	if (!cq)
		return -EINVAL;
	if (!cq->channel)
		return mnic_set_err_detail(cq->dev, MNIC_ERR_ARG, -EINVAL, "the CQ has no channel");
	rec = mnic_window_ptr(cq->dev, cq->q.dbrec_addr, sizeof(*rec));
	if (!rec)
		return mnic_set_err(cq->dev, MNIC_ERR_ARG, -EFAULT);
	arm = MNIC_CQ_ARM(cq->arm_sn, solicited_only ? MNIC_CQ_ARM_SOLICITED : MNIC_CQ_ARM_NEXT);
	/* After the consumer index (mnic_poll_cq wrote it): the NIC fires at
	 * once for CQEs past the index it reads with the arm. */
	__atomic_store_n((uint32_t *)(uintptr_t)&rec->arm, arm, __ATOMIC_RELEASE);
	/* The NIC also reads the word with its next CQE; the doorbell makes it
	 * look now, for a CQE that landed before the arm. */
	mnic_ring_doorbell(cq->dev);
	return 0;
}

static struct mnic_cq *channel_cq(const struct mnic_comp_channel *ch, uint32_t handle)
{
	for (struct mnic_cq *cq = ch->cqs; cq; cq = cq->ch_next)
		if (cq->handle == handle)
			return cq;
	return NULL;
}

/* The next EQE if there is one: 1 and *eqe, 0 none, < 0 broken ring. */
static int eq_take(struct mnic_comp_channel *ch, struct mnic_eqe *eqe)
{
	const volatile struct mnic_eqe *ring, *e;
	volatile struct mnic_dbrec *rec;

	ring = mnic_window_ptr(ch->dev, ch->q.ring_addr, (uint64_t)ch->q.size * MNIC_EQE_SIZE);
	rec = mnic_window_ptr(ch->dev, ch->q.dbrec_addr, sizeof(*rec));
	if (!ring || !rec)
		return -EIO;
	ch->eq_checks++;
	e = &ring[ch->ci & (ch->q.size - 1u)];
	if (e->owner != MNIC_CQE_OWNER(ch->ci, ch->q.size))
		return 0;
	/* the owner byte is written last: the body after it */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(eqe, (const void *)(uintptr_t)e, sizeof(*eqe));
	ch->ci++;
	/* the EQE is read before the NIC may reuse its slot */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	rec->index = ch->ci;
	return 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int mnic_get_cq_event(struct mnic_comp_channel *ch, struct mnic_cq **cq, void **cq_context,
		      int timeout_ms)
{
	const int64_t deadline = timeout_ms < 0 ? INT64_MAX : now_ms() + timeout_ms;

	if (!ch || !cq)
		return -EINVAL;
	for (;;) {
		struct mnic_eqe eqe;
		struct mnic_cq *c;
		int64_t left;
		int r = eq_take(ch, &eqe);

		if (r < 0)
			return r;
		if (r > 0) {
			c = eqe.type == MNIC_EQE_COMPLETION ? channel_cq(ch, eqe.cq) : NULL;
			if (!c) {
				ch->bad_events++;   /* a CQ destroyed since, or a broken EQE */
				continue;
			}
			/* the arm that fired is spent: the next one takes sn + 1 */
			c->arm_sn = (uint8_t)(eqe.arm_sn + 1u);
			c->events_got++;
			ch->events++;
			*cq = c;
			if (cq_context)
				*cq_context = c->cq_context;
			return 0;
		}
		left = deadline == INT64_MAX ? -1 : deadline - now_ms();
		if (deadline != INT64_MAX && left <= 0)
			return -ETIMEDOUT;
		ch->sleeps++;
		if (ch->fd >= 0) {
			struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
			uint64_t v;

			if (poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int)left) > 0) {
				ch->wakeups++;
				/* drained before the next look (the header comment) */
				(void)!read(ch->fd, &v, sizeof(v));
			}
		} else {
			/* no doorbell channel: nothing raises; poll the EQ */
			usleep(left >= 0 && left * 1000 < MNIC_COMP_POLL_US ? (useconds_t)(left * 1000)
								      : MNIC_COMP_POLL_US);
		}
	}
}

void mnic_ack_cq_events(struct mnic_cq *cq, unsigned int nevents)
{
	if (cq)
		cq->events_acked += nevents;
}
