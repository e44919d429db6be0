// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - IPv6: validate packets from the guest, build headers to it */

#include <string.h>
#include <arpa/inet.h>

#include "driver/stack/eth.h"
#include "driver/stack/frag.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/stack/ip6.h"
#include "driver/stack/tap_write.h"

/* Extension headers we step over; anything else is the L4 header. */
static bool ext_header(uint8_t nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING ||
	       nh == IPPROTO_DSTOPTS;
}

/**
 * ip6_input() - validate an IPv6 packet from the guest and pass it on
 * @c:		context
 * @f:		frame whose ethertype is IPv6
 *
 * Without --enable-ipv6 the guest has no IPv6 service, as in slirp4netns.
 * IPv4-mapped addresses (RFC 4291 2.5.5.2) never appear on the wire.
 * Fragments go to frag6_input(), which reassembles them as for IPv4.
 */
void ip6_input(struct ctx *c, struct frame *f)
{
	size_t avail = f->len - 14, off = sizeof(struct ip6_hdr), plen;
	struct pkt p = {.v6 = true};
	struct ip6_hdr h;
	uint8_t nh;

	if (!c->o->ipv6) {
		c->stats.drops[DROP_NOT_FOR_US]++;
		return;
	}
	if (avail < sizeof(h)) {
		c->stats.drops[DROP_SHORT_FRAME]++;
		return;
	}
	memcpy(&h, f->data + 14, sizeof(h));
	plen = ntohs(h.ip6_plen);
	if ((h.ip6_vfc >> 4) != 6 || plen > avail - sizeof(h)) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return;
	}
	/* tapir holds IPv4 addresses as ::ffff:0:0/96 (inany.h): such an
	 * address in an IPv6 packet would be taken, and answered, as IPv4. */
	if (inany_is_v4(&h.ip6_src) || inany_is_v4(&h.ip6_dst)) {
		c->stats.drops[DROP_BAD_ADDRESS]++;
		return;
	}
	nh = h.ip6_nxt;
	while (ext_header(nh)) {
		const uint8_t *e = f->data + 14 + off;

		if (off + 8 > sizeof(h) + plen ||
		    off + 8 + (size_t)e[1] * 8 > sizeof(h) + plen) {
			c->stats.drops[DROP_BAD_LENGTH]++;
			return;
		}
		nh = e[0];
		off += 8 + (size_t)e[1] * 8;
	}
	eth_learn_guest(c, f);
	p.src = h.ip6_src;
	p.dst = h.ip6_dst;
	p.proto = nh;
	p.l3 = f->data + 14;
	p.l3len = off;
	p.l4 = p.l3 + off;
	p.l4len = sizeof(h) + plen - off;
	p.vh = f->vh;
	if (!ip_finish_csum(c, f, &p, nh == IPPROTO_FRAGMENT))
		return;
	if (nh == IPPROTO_FRAGMENT) {
		frag6_input(c, &p);
		return;
	}
	ip_l4_input(c, &p);
}

/**
 * ip6_build_header() - fill an IPv6 header for a packet to the guest
 * @h:		header to fill (40 bytes, no extension headers)
 * @src:	source address
 * @dst:	destination address
 * @proto:	L4 protocol
 * @l4len:	L4 length; with GSO, the length of the whole super-packet
 */
void ip6_build_header(struct ip6_hdr *h, const struct in6_addr *src,
                      const struct in6_addr *dst, uint8_t proto, size_t l4len)
{
	memset(h, 0, sizeof(*h));
	h->ip6_flow = htonl(6U << 28);
	h->ip6_plen = htons((uint16_t)l4len);
	h->ip6_nxt = proto;
	h->ip6_hlim = proto == IPPROTO_ICMPV6 ? 255 : 64;
	h->ip6_src = *src;
	h->ip6_dst = *dst;
}
