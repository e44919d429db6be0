// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - IPv4: validate packets from the guest, build headers to it */

#include <string.h>
#include <arpa/inet.h>

#include "driver/stack/csum.h"
#include "driver/stack/eth.h"
#include "driver/stack/frag.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/stack/ip4.h"
#include "driver/stack/tap_write.h"

/**
 * ip4_input() - validate an IPv4 packet from the guest and pass it on
 * @c:		context
 * @f:		frame whose ethertype is IPv4
 *
 * Fragments go to frag4_input(), which reassembles them within fixed
 * bounds and passes whole datagrams on.
 */
void ip4_input(struct ctx *c, struct frame *f)
{
	size_t avail = f->len - 14, hlen, tot;
	struct pkt p = {0};
	bool fragment;
	struct iphdr ih;

	if (avail < sizeof(ih)) {
		c->stats.drops[DROP_SHORT_FRAME]++;
		return;
	}
	memcpy(&ih, f->data + 14, sizeof(ih));
	hlen = (size_t)ih.ihl * 4;
	tot = ntohs(ih.tot_len);
	if (ih.version != 4 || hlen < sizeof(ih) || hlen > avail ||
	    tot < hlen || tot > avail) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return;
	}
	if (csum_ip4_header(f->data + 14, hlen)) {
		c->stats.drops[DROP_BAD_CHECKSUM]++;
		return;
	}
	eth_learn_guest(c, f);
	inany_from_v4(&p.src, (struct in_addr){ih.saddr});
	inany_from_v4(&p.dst, (struct in_addr){ih.daddr});
	p.proto = ih.protocol;
	p.l3 = f->data + 14;
	p.l3len = hlen;
	p.l4 = p.l3 + hlen;
	p.l4len = tot - hlen;
	p.vh = f->vh;
	fragment = ntohs(ih.frag_off) & (IP_MF | IP_OFFMASK);
	if (!ip_finish_csum(c, f, &p, fragment))
		return;
	if (fragment && frag4_input(c, &p))
		return;
	ip_l4_input(c, &p);
}

/**
 * ip4_build_header() - fill an IPv4 header for a packet to the guest
 * @c:		context, whose counter gives the identification
 * @ih:		header to fill (20 bytes, no options)
 * @src:	source address
 * @dst:	destination address
 * @proto:	L4 protocol
 * @l4len:	L4 length; with GSO, the length of the whole super-packet
 */
void ip4_build_header(struct ctx *c, struct iphdr *ih, struct in_addr src,
                      struct in_addr dst, uint8_t proto, size_t l4len)
{
	memset(ih, 0, sizeof(*ih));
	ih->version = 4;
	ih->ihl = 5;
	ih->tot_len = htons((uint16_t)(sizeof(*ih) + l4len));
	ih->id = htons(c->ip4_id++);
	ih->frag_off = htons(IP_DF);
	ih->ttl = 64;
	ih->protocol = proto;
	ih->saddr = src.s_addr;
	ih->daddr = dst.s_addr;
	ih->check = csum_ip4_header(ih, sizeof(*ih));
}
