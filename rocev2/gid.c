/* The port's addresses: its RoCEv2 GID table (rocev2.h rocev2_set_gid,
 * the host's SET_GID), which source address a QP's packets carry
 * (rocev2_qp_sgid: net.c's templates, migrate.c's RESUME) and which
 * destinations are ours (recv.c, ethq.c).  IBA 4.1.1 GIDs; RoCEv2 (IBA
 * annex A17.4.5.1): an IPv6 address, or IPv4 as IPv4-mapped IPv6. */
#include <string.h>

#include "internal.h"

int rocev2_gid_unicast(const uint8_t *gid)
{
	static const uint8_t zero[ROCEV2_GID_LEN];
	uint32_t a;

	if (mnic_gid_is_v4(gid)) {
		/* RFC 1122 3.2.1.3: 0/8, loopback 127/8, multicast and class E
		 * (>= 224.0.0.0) are no source address. */
		a = mnic_gid_ipv4(gid);
		return (a >> 24) != 0 && (a >> 24) != 127u && a < 0xe0000000u;
	}
	/* RFC 4291 2.5.2, 2.5.3, 2.7: the unspecified address, loopback ::1
	 * (with them the rest of ::/120, the deprecated IPv4-compatible
	 * form's first addresses) and multicast ff00::/8. */
	if (memcmp(gid, zero, 15) == 0)
		return 0;
	return gid[0] != 0xffu;
}

static int gid_link_local(const uint8_t *gid)
{
	return gid[0] == 0xfeu && (gid[1] & 0xc0u) == 0x80u;   /* fe80::/10, RFC 4291 2.5.6 */
}

int rocev2_set_gid(struct rocev2 *e, unsigned index, const uint8_t *gid)
{
	uint16_t bit;
	unsigned i;

	if (index >= ROCEV2_GID_TBL_LEN || (gid && !rocev2_gid_unicast(gid)))
		return -HAL_EINVAL;
	bit = (uint16_t)(1u << index);
	if (gid) {
		memcpy(e->gid[index], gid, ROCEV2_GID_LEN);
		e->gid_valid |= bit;
		if (mnic_gid_is_v4(gid))
			e->gid_v6 &= (uint16_t)~bit;
		else
			e->gid_v6 |= bit;
	} else {
		memset(e->gid[index], 0, ROCEV2_GID_LEN);
		e->gid_valid &= (uint16_t)~bit;
		e->gid_v6 &= (uint16_t)~bit;
	}
	/* The port's IPv4 address in force: the lowest valid v4 entry, else
	 * the env's (recv.c's fast test, and the v4 QPs' fallback source). */
	e->env.ipv4 = e->boot_ipv4;
	for (i = 0; i < ROCEV2_GID_TBL_LEN; i++)
		if ((e->gid_valid & ~e->gid_v6) & (1u << i)) {
			e->env.ipv4 = mnic_gid_ipv4(e->gid[i]);
			break;
		}
	rocev2_tx_tmpl_stale_all(e);    /* the source address of every template */
	return 0;
}

int rocev2_qp_sgid(const struct rocev2 *e, const struct rocev2_qp *qp, uint8_t *src)
{
	const struct rocev2_av *av = &qp->attr.av;
	int v6 = !mnic_gid_is_v4(av->dgid);
	uint16_t family = v6 ? e->gid_v6 : (uint16_t)(e->gid_valid & ~e->gid_v6);
	unsigned i = av->sgid_index;

	if (i < ROCEV2_GID_TBL_LEN && (family & (1u << i))) {
		memcpy(src, e->gid[i], ROCEV2_GID_LEN);
		return 0;
	}
	if (!v6) {
		if (!e->env.ipv4)
			return -HAL_ENXIO;
		mnic_gid_from_ipv4(src, e->env.ipv4);
		return 0;
	}
	for (i = 0; i < ROCEV2_GID_TBL_LEN; i++)
		if ((family & (1u << i)) && gid_link_local(e->gid[i]) == gid_link_local(av->dgid)) {
			memcpy(src, e->gid[i], ROCEV2_GID_LEN);
			return 0;
		}
	return -HAL_ENXIO;
}

int rocev2_gid_ours6(const struct rocev2 *e, const uint8_t *addr)
{
	unsigned i;

	for (i = 0; i < ROCEV2_GID_TBL_LEN; i++)
		if ((e->gid_v6 & (1u << i)) && memcmp(e->gid[i], addr, ROCEV2_GID_LEN) == 0)
			return 1;
	return 0;
}

int rocev2_gid_ours4(const struct rocev2 *e, uint32_t daddr)
{
	uint16_t v4 = (uint16_t)(e->gid_valid & ~e->gid_v6);
	unsigned i;

	if (daddr == e->env.ipv4 && daddr != 0)
		return 1;
	for (i = 0; i < ROCEV2_GID_TBL_LEN; i++)
		if ((v4 & (1u << i)) && mnic_gid_ipv4(e->gid[i]) == daddr)
			return 1;
	return 0;
}
