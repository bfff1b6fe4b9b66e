/* Firmware side of the init segment and health buffer (mnic/abi.h). */
#ifndef MGMT_INITSEG_H
#define MGMT_INITSEG_H

#include <stdint.h>

#include "hal/doorbell.h"
#include "hal/hostif.h"
#include "mnic/abi.h"

/* Claim the BAR: fill the init segment and publish state BOOTING.
 * Returns -HAL_ENOSPC if the BAR cannot hold the device pages. */
int mnic_initseg_boot(struct hal_hostif *h, const char *board_name, uint32_t board_id,
		      const uint8_t mac[6]);
void mnic_initseg_set_state(struct hal_hostif *h, enum mnic_dev_state state);
/* irq_nic_id: this NIC's doorbell-channel peer ID (hal_doorbell.self_id;
 * HAL_DOORBELL_NO_ID or any ID above MNIC_IRQ_ID_MASK publishes none). */
void mnic_initseg_set_irq_id(struct hal_hostif *h, uint32_t id);
/* irq_host_ids as the hosts last wrote them: a peer ID per slot, or
 * HAL_DOORBELL_NO_ID (free, not valid, or no BAR). */
void mnic_initseg_irq_hosts(struct hal_hostif *h, uint32_t ids[HAL_DOORBELL_MAX_HOSTS]);
void mnic_initseg_heartbeat(struct hal_hostif *h, uint64_t uptime_ns, uint64_t rx_frames,
			    uint64_t tx_frames, uint64_t rx_dropped);
volatile struct mnic_init_seg *mnic_initseg(struct hal_hostif *h);
/* The data-path doorbell page (MNIC_DB_PAGE_OFFSET of the BAR). */
volatile struct mnic_db_page *mnic_db_page(struct hal_hostif *h);

#endif
