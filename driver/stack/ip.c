// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - IP layer shared by IPv4 and IPv6: L4 dispatch and output */

#include <string.h>
#include <arpa/inet.h>

#include "driver/stack/csum.h"
#include "driver/stack/eth.h"
#include "driver/stack/icmp.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/stack/ip4.h"
#include "driver/stack/ip6.h"
#include "driver/stack/ndp.h"
#include "driver/core/opts.h"
#include "driver/stack/frag.h"
#include "driver/stack/tap_write.h"
#include "driver/tcp/tcp.h"
#include "driver/udp/udp.h"

/**
 * ip_host_map() - pasta's mappings to the host of @a's IP version
 * @c:		context
 * @a:		address of the version wanted
 *
 * Return: the options' map4 or map6 (all unset outside pasta mode)
 */
const struct host_map *ip_host_map(const struct ctx *c,
                                   const struct in6_addr *a)
{
	return inany_is_v4(a) ? &c->o->map4 : &c->o->map6;
}

/**
 * ip_gateway() - the gateway of one IP version
 * @c:		context
 * @v4:		IPv4's, else IPv6's
 * @gw:		filled (IPv4 as v4-mapped)
 */
void ip_gateway(const struct ctx *c, bool v4, struct in6_addr *gw)
{
	if (v4)
		inany_from_v4(gw, c->gw4);
	else
		*gw = c->gw6;
}

/**
 * ip_host_lo() - the address of one IP version that stands for the host's
 *		  loopback
 * @c:		context
 * @v4:		IPv4's, else IPv6's
 * @lo:		filled: pasta's --map-host-loopback of that version, else
 *		the gateway
 */
void ip_host_lo(const struct ctx *c, bool v4, struct in6_addr *lo)
{
	const struct host_map *m = v4 ? &c->o->map4 : &c->o->map6;

	if (IN6_IS_ADDR_UNSPECIFIED(&m->lo))
		ip_gateway(c, v4, lo);
	else
		*lo = m->lo;
}

/**
 * ip_is_gateway() - whether @a is the gateway tapir stands in for (net+2,
 *		     fd00::2 or pasta's IPv6 gateway, and the router's
 *		     link-local fe80::2), or what pasta's --map-host-loopback
 *		     put in its place: the address that reaches host loopback
 * @c:		context
 * @a:		address
 *
 * fe80::2 is the default route the guest learns from our adverts, so it
 * is the gateway as much as fd00::2 is (slirp4netns answers it too). In
 * pasta's addressing with --no-map-gw there is none: the gateway is a
 * host outside like any other, for TCP, UDP and ICMP echo alike; so it is
 * with --map-host-loopback, where only that address is one.
 *
 * Return: true if so
 */
bool ip_is_gateway(const struct ctx *c, const struct in6_addr *a)
{
	bool v4 = inany_is_v4(a);
	struct in6_addr lo;

	if (c->o->pasta_net && c->o->disable_host_loopback)
		return false;
	ip_host_lo(c, v4, &lo);
	return inany_equal(a, &lo) ||
	       (!v4 && IN6_IS_ADDR_UNSPECIFIED(&c->o->map6.lo) &&
	        inany_equal(a, &ndp_router_ll));
}

/**
 * ip_is_dns() - whether @a is the DNS forwarder (net+3 or fd00::3, or
 *		 pasta's --dns-forward)
 * @c:		context
 * @a:		address
 *
 * Return: true if so
 */
bool ip_is_dns(const struct ctx *c, const struct in6_addr *a)
{
	if (inany_is_v4(a))
		return c->dns4.s_addr && inany_v4(a).s_addr == c->dns4.s_addr;
	/* None when pasta mode has no IPv6 --dns-forward (::). */
	return inany_matches(&c->dns6, a);
}

/**
 * ip_pseudo_csum() - running sum of the pseudo-header for either family
 * @src:	source
 * @dst:	destination
 * @proto:	L4 protocol
 * @len:	L4 length
 *
 * Return: running sum for csum_add()/csum_fold()
 */
uint32_t ip_pseudo_csum(const struct in6_addr *src, const struct in6_addr *dst,
                        uint8_t proto, size_t len)
{
	if (inany_is_v4(src))
		return csum_pseudo4(inany_v4(src), inany_v4(dst), proto,
		                    (uint32_t)len);
	return csum_pseudo6(src, dst, proto, (uint32_t)len);
}

/**
 * ip_finish_csum() - complete a checksum the guest left to the tap inside
 *		      what tapir passes on
 * @c:		context
 * @f:		the frame, its vnet header writable
 * @p:		its packet, validated
 * @fragment:	@p is an IP fragment
 *
 * A guest kernel leaves a checksum partial (NEEDS_CSUM) for the device to
 * finish. When that checksum is the packet's own L4 header's, nothing is
 * owed: tapir terminates TCP and sends no UDP or ICMP header on (host
 * sockets make their own). When it lies in the payload, as the inner TCP
 * or UDP checksum of a VXLAN or GENEVE datagram does, the bytes go on as
 * they are, so it is finished here, as skb_checksum_help() would, and the
 * header says so (a thread this frame is handed to must not finish it
 * twice). Refused, counted: one inside the L4 header or before it, one in
 * a TCP payload (the stream goes on without it), one of a fragment (it
 * would cover this fragment only), and one of a GSO frame (each segment
 * would need its own). Linux sends none of these.
 *
 * Return: true to go on; false if the frame was dropped, counted
 */
bool ip_finish_csum(struct ctx *c, struct frame *f, const struct pkt *p,
                    bool fragment)
{
	struct virtio_net_hdr *vh = f->vh;
	size_t l4off, end, at;
	uint16_t sum;

	if (!vh || !(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return true;
	l4off = (size_t)(p->l4 - f->data);
	if (vh->csum_start == l4off)
		return true;
	end = l4off + p->l4len;
	at = (size_t)vh->csum_start + vh->csum_offset;
	/* UDP's and ICMP's headers are 8 bytes. */
	if (vh->csum_start < l4off + 8 || at + 2 > end || fragment ||
	    p->proto == IPPROTO_TCP ||
	    (vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) !=
	            VIRTIO_NET_HDR_GSO_NONE) {
		c->stats.drops[DROP_BAD_VNET_HDR]++;
		return false;
	}
	sum = csum_fold(
	        csum_add(0, f->data + vh->csum_start, end - vh->csum_start));
	/* 0 means "no checksum" to UDP; 0xffff is the same sum. */
	if (!sum)
		sum = 0xffff;
	memcpy(f->data + at, &sum, sizeof(sum));
	vh->flags &= (uint8_t)~VIRTIO_NET_HDR_F_NEEDS_CSUM;
	return true;
}

/**
 * ip_l4_input() - hand a validated IP packet to its protocol
 * @c:		context
 * @p:		packet
 */
void ip_l4_input(struct ctx *c, struct pkt *p)
{
	switch (p->proto) {
	case IPPROTO_TCP:
		/* pasta's --no-tcp: silently dropped, as in pasta. */
		if (c->o->pasta && c->o->pasta->no_tcp)
			c->stats.drops[DROP_NO_ROUTE]++;
		else
			tcp_input(c, p);
		break;
	case IPPROTO_UDP:
		udp_input(c, p);
		break;
	case IPPROTO_ICMP:
		if (!p->v6)
			icmp_input(c, p);
		else
			c->stats.drops[DROP_UNKNOWN_PROTO]++;
		break;
	case IPPROTO_ICMPV6:
		if (p->v6)
			icmp_input(c, p);
		else
			c->stats.drops[DROP_UNKNOWN_PROTO]++;
		break;
	default:
		c->stats.drops[DROP_UNKNOWN_PROTO]++;
	}
}

/**
 * ip_output() - send an L4 payload to the guest in an IP packet
 * @c:		context
 * @src:	source address (IPv4-mapped for IPv4)
 * @dst:	destination address, same family
 * @proto:	L4 protocol
 * @l4:		L4 header and payload
 * @l4cnt:	entries in @l4, at most 12
 * @vh:		GSO/checksum metadata whose csum_start and hdr_len are
 *		relative to the L4 header (this function adds the L2 and
 *		L3 lengths), or NULL for a complete packet
 *
 * Return: 0 on success, -1 if the frame was dropped
 */
int ip_output(struct ctx *c, const struct in6_addr *src,
              const struct in6_addr *dst, uint8_t proto, const struct iovec *l4,
              int l4cnt, const struct virtio_net_hdr *vh)
{
	struct virtio_net_hdr h;
	struct ether_header eh;
	struct iovec iov[14];
	struct ip6_hdr ih6;
	struct iphdr ih4;
	size_t l4len = 0, l3len;

	if (l4cnt > 12)
		return -1;
	for (int i = 0; i < l4cnt; i++)
		l4len += l4[i].iov_len;
	if (inany_is_v4(src)) {
		eth_header_to_guest(c, &eh, inany_v4(src), ETHERTYPE_IP);
		ip4_build_header(c, &ih4, inany_v4(src), inany_v4(dst), proto,
		                 l4len);
		iov[1] = (struct iovec){&ih4, sizeof(ih4)};
	} else {
		eth_guest_mac(c, eh.ether_dhost);
		memcpy(eh.ether_shost, eth_router6(c), 6);
		eh.ether_type = htons(ETHERTYPE_IPV6);
		ip6_build_header(&ih6, src, dst, proto, l4len);
		iov[1] = (struct iovec){&ih6, sizeof(ih6)};
	}
	l3len = iov[1].iov_len;
	/* Datagrams above the MTU (large UDP, ICMP) leave as fragments. */
	if (!vh && l3len + l4len > c->tap.mtu)
		return frag_output(c, src, dst, proto, l4, l4cnt, l4len);
	if (l3len + l4len > 65535 + (inany_is_v4(src) ? 0 : sizeof(ih6)))
		return -1;
	iov[0] = (struct iovec){&eh, sizeof(eh)};
	memcpy(&iov[2], l4, sizeof(*l4) * (size_t)l4cnt);
	if (vh) {
		h = *vh;
		h.csum_start += (uint16_t)(sizeof(eh) + l3len);
		if (h.hdr_len)
			h.hdr_len += (uint16_t)(sizeof(eh) + l3len);
		vh = &h;
	}
	return tap_send(c, vh, iov, l4cnt + 2);
}
