// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - Ethernet: validate frames from the tap, dispatch by ethertype */

#include <string.h>
#include <arpa/inet.h>

#include "driver/stack/arp.h"
#include "driver/stack/eth.h"
#include "driver/stack/ip4.h"
#include "driver/stack/ip6.h"
#include "driver/core/opts.h"
#include "driver/stack/tap_write.h"

const uint8_t eth_router6_mac[6] = {0x52, 0x56, 0, 0, 0, 2};

/**
 * pasta_mac() - pasta's -M: the one MAC tapir uses toward the guest
 * @c:		context
 *
 * Return: it, or NULL if not given
 */
static const uint8_t *pasta_mac(const struct ctx *c)
{
	return c->o->pasta && c->o->pasta->mac_set ? c->o->pasta->mac : NULL;
}

/**
 * eth_router6() - the MAC of every IPv6 frame tapir sends to the guest
 * @c:		context
 *
 * Return: pasta's -M, or eth_router6_mac
 */
const uint8_t *eth_router6(const struct ctx *c)
{
	const uint8_t *m = pasta_mac(c);

	return m ? m : eth_router6_mac;
}

/**
 * eth_special_mac() - MAC of one of our virtual addresses, as slirp4netns
 * @c:		context, for pasta's -M, which stands for every address
 * @mac:	filled with 52:55 followed by the four bytes of @ip
 * @ip:		gateway, DNS or other address in the virtual network
 */
void eth_special_mac(const struct ctx *c, uint8_t mac[6], struct in_addr ip)
{
	if (pasta_mac(c)) {
		memcpy(mac, pasta_mac(c), 6);
		return;
	}
	mac[0] = 0x52;
	mac[1] = 0x55;
	memcpy(mac + 2, &ip, 4);
}

/**
 * eth_share_guest_mac() - the guest's MAC changed: tell every thread
 * @c:		context that learnt it, @c->guest_mac set
 *
 * Any thread may see the guest's frames first; each sends with the MAC
 * any of them learnt last.
 */
void eth_share_guest_mac(struct ctx *c)
{
	uint64_t v = 0;

	if (!c->guest_mac_shared)
		return;
	memcpy(&v, c->guest_mac, 6);
	__atomic_store_n(c->guest_mac_shared, v, __ATOMIC_RELAXED);
}

/**
 * eth_guest_mac() - the guest's MAC, as any thread last learnt it
 * @c:		context
 * @mac:	filled, 6 bytes
 */
void eth_guest_mac(const struct ctx *c, uint8_t *mac)
{
	uint64_t v;

	if (!c->guest_mac_shared) {
		memcpy(mac, c->guest_mac, 6);
		return;
	}
	v = __atomic_load_n(c->guest_mac_shared, __ATOMIC_RELAXED);
	memcpy(mac, &v, 6);
}

/**
 * eth_header_to_guest() - fill an Ethernet header for a frame to the guest
 * @c:		context, for the guest's MAC and our addresses
 * @eh:		header to fill
 * @src:	IPv4 source of the packet; anything outside the virtual
 *		network comes from the gateway's MAC, as it is routed
 * @ethertype:	ETHERTYPE_* in host order
 */
void eth_header_to_guest(const struct ctx *c, struct ether_header *eh,
                         struct in_addr src, uint16_t ethertype)
{
	if ((src.s_addr & c->mask4.s_addr) != (c->gw4.s_addr & c->mask4.s_addr))
		src = c->gw4;
	eth_guest_mac(c, eh->ether_dhost);
	eth_special_mac(c, eh->ether_shost, src);
	eh->ether_type = htons(ethertype);
}

/**
 * gso_offered() - whether tapir offered the tap the offload a frame uses
 * @c:		context, its tap's TUNSETOFFLOAD flags in @c->tap.offloads
 * @vh:		the frame's header
 * @ethertype:	the frame's, host order
 *
 * A guest kernel only uses what the device offered, so anything else is
 * a frame tapir can't be sure to complete: TSO or USO of the other
 * family, ECN (TUN_F_TSO_ECN is never offered), a type tapir never asked
 * for (UFO, UDP tunnels), a partial checksum without TUN_F_CSUM.
 *
 * Return: true if so
 */
static bool gso_offered(const struct ctx *c, const struct virtio_net_hdr *vh,
                        uint16_t ethertype)
{
	bool v4 = ethertype == ETHERTYPE_IP, v6 = ethertype == ETHERTYPE_IPV6;
	unsigned int off = c->tap.offloads;

	if ((vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && !(off & TUN_F_CSUM))
		return false;
	switch (vh->gso_type) {
	case VIRTIO_NET_HDR_GSO_NONE:
		return true;
	case VIRTIO_NET_HDR_GSO_TCPV4:
		return v4 && (off & TUN_F_TSO4);
	case VIRTIO_NET_HDR_GSO_TCPV6:
		return v6 && (off & TUN_F_TSO6);
	case VIRTIO_NET_HDR_GSO_UDP_L4:
		return (v4 && (off & TUN_F_USO4)) || (v6 && (off & TUN_F_USO6));
	default:
		return false;
	}
}

/**
 * vnet_hdr_valid() - check the metadata the guest kernel put before a frame
 * @c:		context
 * @f:		the frame, at least 14 bytes, with its header
 *
 * Return: true if we can honour it
 */
static bool vnet_hdr_valid(const struct ctx *c, const struct frame *f)
{
	const struct virtio_net_hdr *vh = f->vh;
	const struct ether_header *eh = (const void *)f->data;
	size_t len = f->len;

	if (!gso_offered(c, vh, ntohs(eh->ether_type)))
		return false;
	if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE && !vh->gso_size)
		return false;
	if ((vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
	    (size_t)vh->csum_start + vh->csum_offset + 2 > len)
		return false;
	return true;
}

/**
 * eth_learn_guest() - take the frame's source MAC as the guest's
 * @c:		context
 * @f:		a frame whose network header passed validation
 *
 * Replies go to whoever the guest is now, as a switch would learn; but only
 * frames that parsed may teach it, so junk can't cut the guest off.
 */
void eth_learn_guest(struct ctx *c, const struct frame *f)
{
	const struct ether_header *eh = (const void *)f->data;

	if (!(eh->ether_shost[0] & 1) &&
	    memcmp(c->guest_mac, eh->ether_shost, 6)) {
		memcpy(c->guest_mac, eh->ether_shost, 6);
		eth_share_guest_mac(c);
	}
}

/**
 * eth_input() - handle one frame from the guest
 * @c:		context
 * @f:		the frame, at least 14 bytes
 */
void eth_input(struct ctx *c, struct frame *f)
{
	const struct ether_header *eh = (const void *)f->data;

	if (f->vh && !vnet_hdr_valid(c, f)) {
		c->stats.drops[DROP_BAD_VNET_HDR]++;
		return;
	}
	switch (ntohs(eh->ether_type)) {
	case ETHERTYPE_ARP:
		arp_input(c, f);
		break;
	case ETHERTYPE_IP:
		ip4_input(c, f);
		break;
	case ETHERTYPE_IPV6:
		ip6_input(c, f);
		break;
	default:
		c->stats.drops[DROP_UNKNOWN_ETHERTYPE]++;
	}
}
