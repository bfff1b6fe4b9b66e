#include "mgmt/initseg.h"

#include <string.h>

#include "hal/errno.h"
#include "hal/mmio.h"

volatile struct mnic_init_seg *mnic_initseg(struct hal_hostif *h)
{
	return (volatile struct mnic_init_seg *)h->bar;
}

volatile struct mnic_db_page *mnic_db_page(struct hal_hostif *h)
{
	return (volatile struct mnic_db_page *)(h->bar + MNIC_DB_PAGE_OFFSET);
}

int mnic_initseg_boot(struct hal_hostif *h, const char *board_name, uint32_t board_id,
		      const uint8_t mac[6])
{
	volatile struct mnic_init_seg *s;
	size_t i;

	if (!h->bar || h->bar_size < MNIC_DMA_WINDOW_OFFSET)
		return -HAL_ENOSPC;
	s = mnic_initseg(h);
	/* The magic goes last: a host that sees it may trust the rest. */
	s->magic = 0;
	hal_wmb();
	s->fw_version = MNIC_FW_VERSION_CUR;
	s->cmdif_rev = MNIC_CMDIF_REV;
	s->board_id = board_id;
	s->state = MNIC_STATE_BOOTING;
	for (i = 0; i < 6; i++)
		s->mac[i] = mac ? mac[i] : 0;
	for (i = 0; i + 1 < sizeof(s->board_name) && board_name[i]; i++)
		s->board_name[i] = board_name[i];
	for (; i < sizeof(s->board_name); i++)
		s->board_name[i] = '\0';
	s->irq_nic_id = 0;   /* published again at READY (mnic_initseg_set_irq_id) */
	s->health.fatal_reason = 0;
	s->health.heartbeat = 0;
	hal_wmb();
	s->magic = MNIC_INIT_MAGIC;
	return 0;
}

void mnic_initseg_set_irq_id(struct hal_hostif *h, uint32_t id)
{
	if (!h->bar)
		return;
	mnic_initseg(h)->irq_nic_id = id > MNIC_IRQ_ID_MASK ? 0u : (MNIC_IRQ_ID_VALID | id);
}

void mnic_initseg_irq_hosts(struct hal_hostif *h, uint32_t ids[HAL_DOORBELL_MAX_HOSTS])
{
	unsigned i;

	_Static_assert(HAL_DOORBELL_MAX_HOSTS == MNIC_IRQ_MAX_HOSTS, "host slots");
	for (i = 0; i < HAL_DOORBELL_MAX_HOSTS; i++) {
		uint32_t v = h->bar ? mnic_initseg(h)->irq_host_ids[i] : 0u;

		ids[i] = (v & MNIC_IRQ_ID_VALID) ? (v & MNIC_IRQ_ID_MASK) : HAL_DOORBELL_NO_ID;
	}
}

void mnic_initseg_set_state(struct hal_hostif *h, enum mnic_dev_state state)
{
	if (!h->bar)
		return;
	/* Everything the state promises (e.g. READY: queues set up) is
	 * written before the state word. */
	hal_wmb();
	mnic_initseg(h)->state = (uint32_t)state;
}

void mnic_initseg_heartbeat(struct hal_hostif *h, uint64_t uptime_ns, uint64_t rx_frames,
			    uint64_t tx_frames, uint64_t rx_dropped)
{
	volatile struct mnic_init_seg *s;

	if (!h->bar)
		return;
	s = mnic_initseg(h);
	s->health.uptime_ns = uptime_ns;
	s->health.rx_frames = rx_frames;
	s->health.tx_frames = tx_frames;
	s->health.rx_dropped = rx_dropped;
	hal_wmb();
	s->health.heartbeat = s->health.heartbeat + 1;
}
