/* RoCEv2 GIDs on the host interface and in the firmware (IBA 4.1.1;
 * RoCEv2, IBA annex A17.4.5.1 and A17.8): 16 bytes in network order, an
 * IPv6 address, or an IPv4 one as IPv4-mapped IPv6 (::ffff:a.b.c.d, RFC
 * 4291 2.5.5.2), which selects RoCEv2 over IPv4.  Shared by the engine,
 * libmnic and the tools (the kernel module has ipv6_addr_v4mapped). */
#ifndef MNIC_GID_H
#define MNIC_GID_H

#ifdef __KERNEL__
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdint.h>
#include <string.h>
#endif

#define MNIC_GID_LEN 16u

/* An IPv4-mapped GID as an initializer (ip a constant expression, host
 * order). */
#define MNIC_GID_V4(ip)                                                                  \
	{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, (uint8_t)((ip) >> 24),                \
	  (uint8_t)((ip) >> 16), (uint8_t)((ip) >> 8), (uint8_t)(ip) }

/* (memcmp against a constant: one 8- and one 4-byte compare on the
 * packet path, recv.c's source check) */
static inline int mnic_gid_is_v4(const uint8_t *gid)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(gid, v4mapped, sizeof(v4mapped)) == 0;
}

/* The IPv4 address of an IPv4-mapped GID, host order. */
static inline uint32_t mnic_gid_ipv4(const uint8_t *gid)
{
	return (uint32_t)gid[12] << 24 | (uint32_t)gid[13] << 16 | (uint32_t)gid[14] << 8 | gid[15];
}

static inline void mnic_gid_from_ipv4(uint8_t *gid, uint32_t ipv4)
{
	unsigned i;

	for (i = 0; i < 10; i++)
		gid[i] = 0;
	gid[10] = 0xff;
	gid[11] = 0xff;
	gid[12] = (uint8_t)(ipv4 >> 24);
	gid[13] = (uint8_t)(ipv4 >> 16);
	gid[14] = (uint8_t)(ipv4 >> 8);
	gid[15] = (uint8_t)ipv4;
}

#endif
