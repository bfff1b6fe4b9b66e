/* Memory translation tables (mnic/cmd.h "Memory translation",
 * docs/host-interface.md "Host memory and translation"): CREATE_MTT,
 * WRITE_MTT in chunks of at most MNIC_MTT_WRITE_CHUNK entries (so one
 * command's mailbox chain stays far below MNIC_CMD_MAX_LEN and the driver
 * area), DESTROY_MTT. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libmnic_int.h"

int mnic_create_mtt(struct mnic_dev *dev, uint64_t iova, uint64_t length, uint32_t page_shift,
		    uint32_t *mtt, uint32_t *npages)
{
	struct mnic_cmd_create_mtt_in in;
	struct mnic_cmd_create_mtt_out o;
	uint64_t page, want;
	int err;

	if (!dev || !mtt)
		return -EINVAL;
	if (length == 0 || iova + length < iova || page_shift < MNIC_PAGE_SHIFT_MIN ||
	    page_shift > MNIC_PAGE_SHIFT_MAX)
		return mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL);
	page = 1ull << page_shift;
	/* entries covering [iova & ~(page - 1), iova + length) */
	want = (((iova & (page - 1)) + length + page - 1) >> page_shift);
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_CREATE_MTT;
	in.iova = iova;
	in.length = length;
	in.page_shift = page_shift;
	err = mnic_cmd(dev, &in, sizeof(in), &o, sizeof(o), NULL);
	if (err < 0)
		return err;
	if (o.mtt == MNIC_MTT_NONE || o.npages != want)
		return mnic_reply_err(dev);   /* not the table that was asked for */
	*mtt = o.mtt;
	if (npages)
		*npages = o.npages;
	return 0;
}

uint32_t mnic_mtt_write_len(uint32_t count)
{
	return (uint32_t)sizeof(struct mnic_cmd_write_mtt_in) + count * (uint32_t)sizeof(uint64_t);
}

int mnic_write_mtt(struct mnic_dev *dev, uint32_t mtt, uint32_t first, const uint64_t *pages,
		   uint32_t count)
{
	struct mnic_cmd_write_mtt_in *in;
	struct mnic_cmd_simple_out o;
	uint32_t chunk = count < MNIC_MTT_WRITE_CHUNK ? count : MNIC_MTT_WRITE_CHUNK;
	int err = 0;

	if (!dev || (!pages && count))
		return -EINVAL;
	if (mtt == MNIC_MTT_NONE || count == 0 || first + count < first)
		return mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL);
	in = malloc(mnic_mtt_write_len(chunk));
	if (!in)
		return mnic_set_err(dev, MNIC_ERR_ARG, -ENOMEM);
	for (uint32_t done = 0; done < count && err == 0; done += chunk) {
		uint32_t n = count - done < chunk ? count - done : chunk;

		memset(in, 0, sizeof(*in));
		in->hdr.opcode = MNIC_CMD_WRITE_MTT;
		in->mtt = mtt;
		in->first = first + done;
		in->count = n;
		memcpy(in + 1, pages + done, (size_t)n * sizeof(uint64_t));
		err = mnic_cmd(dev, in, mnic_mtt_write_len(n), &o, sizeof(o), NULL);
	}
	free(in);
	return err;
}

int mnic_destroy_mtt(struct mnic_dev *dev, uint32_t mtt)
{
	struct mnic_cmd_handle_in in;
	struct mnic_cmd_simple_out o;

	if (!dev || mtt == MNIC_MTT_NONE)
		return -EINVAL;
	if (dev->kmem)
		return mnic_kmem_dereg(dev, mtt);   /* the module made it: it unpins */
	memset(&in, 0, sizeof(in));
	in.hdr.opcode = MNIC_CMD_DESTROY_MTT;
	in.handle = mtt;
	return mnic_cmd(dev, &in, sizeof(in), &o, sizeof(o), NULL);
}

int mnic_reg_mtt(struct mnic_dev *dev, uint64_t iova, uint64_t length, uint32_t page_shift,
		 const uint64_t *pages, uint32_t npages, uint32_t *mtt)
{
	uint32_t h, want;
	int err = mnic_create_mtt(dev, iova, length, page_shift, &h, &want);

	if (err < 0)
		return err;
	if (want != npages) {
		mnic_destroy_mtt(dev, h);
		return mnic_set_err(dev, MNIC_ERR_ARG, -EINVAL);   /* the list does not cover it */
	}
	err = mnic_write_mtt(dev, h, 0, pages, npages);
	if (err < 0) {
		struct mnic_cmd_result keep = *mnic_last_error(dev);

		mnic_destroy_mtt(dev, h);
		dev->last = keep;   /* the WRITE_MTT's failure is the story */
		return err;
	}
	*mtt = h;
	return 0;
}
