/* The port's RoCEv2 engine instance (firmware/engine.c). */
#ifndef FW_ENGINE_H
#define FW_ENGINE_H

#include <stdint.h>

#include "modes.h"
#include "rocev2/rocev2.h"

/* The port's IPv4 address by convention: 10.mac[3].mac[4].mac[5]. */
uint32_t fw_port_ipv4(const uint8_t mac[6]);
/* Open the engine on port 0 of c's platform, with the loop's clock and
 * c's host memory (c->host_dma), and make its timers a timer source of the loop.  0 and *e
 * set, or the engine's error (logged). */
int fw_engine_start(struct fw_ctx *c, struct rocev2 **e);

#endif
