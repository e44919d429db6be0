// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - ARP: answer for the gateway, the DNS forwarder and, as pasta,
 * the guest's neighbours */

#include <string.h>
#include <arpa/inet.h>
#include <net/if_arp.h>
#include <netinet/if_ether.h>

#include "driver/stack/arp.h"
#include "driver/stack/eth.h"
#include "driver/stack/tap_write.h"

/**
 * arp_we_answer() - whether @ip is one of our virtual hosts
 * @c:		context
 * @ip:		target protocol address of a request
 *
 * Return: true for the gateway, and for the DNS forwarder; in pasta's
 *	   addressing, for every other host address of the guest's subnet
 */
static bool arp_we_answer(const struct ctx *c, struct in_addr ip)
{
	uint32_t m = c->mask4.s_addr;

	if (ip.s_addr == c->gw4.s_addr || ip.s_addr == c->dns4.s_addr)
		return true;
	/* pasta's addressing: the guest's neighbours are hosts outside,
	 * reached through us, as pasta answers for them.
	 */
	return c->o->pasta_net && ip.s_addr != c->guest4.s_addr &&
	       (ip.s_addr & m) == (c->guest4.s_addr & m) && (ip.s_addr & ~m) &&
	       (ip.s_addr | m) != INADDR_BROADCAST;
}

/**
 * arp_input() - answer an ARP request for one of our addresses
 * @c:		context
 * @f:		frame carrying the ARP packet
 */
void arp_input(struct ctx *c, struct frame *f)
{
	struct ether_arp req, rep;
	struct ether_header eh;
	struct in_addr tip;
	struct iovec iov[2];

	if (f->len < sizeof(eh) + sizeof(req)) {
		c->stats.drops[DROP_SHORT_FRAME]++;
		return;
	}
	memcpy(&req, f->data + sizeof(eh), sizeof(req));
	if (ntohs(req.arp_hrd) != ARPHRD_ETHER ||
	    ntohs(req.arp_pro) != ETHERTYPE_IP || req.arp_hln != 6 ||
	    req.arp_pln != 4) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return;
	}
	eth_learn_guest(c, f);
	c->stats.to_host[PROTO_ARP].packets++;
	c->stats.to_host[PROTO_ARP].bytes += f->len;
	memcpy(&tip, req.arp_tpa, 4);
	if (ntohs(req.arp_op) != ARPOP_REQUEST || !arp_we_answer(c, tip)) {
		c->stats.drops[DROP_NOT_FOR_US]++;
		return;
	}
	rep = req;
	rep.arp_op = htons(ARPOP_REPLY);
	eth_special_mac(c, rep.arp_sha, tip);
	memcpy(rep.arp_spa, req.arp_tpa, 4);
	memcpy(rep.arp_tha, req.arp_sha, 6);
	memcpy(rep.arp_tpa, req.arp_spa, 4);
	memcpy(eh.ether_dhost, req.arp_sha, 6);
	eth_special_mac(c, eh.ether_shost, tip);
	eh.ether_type = htons(ETHERTYPE_ARP);
	iov[0] = (struct iovec){&eh, sizeof(eh)};
	iov[1] = (struct iovec){&rep, sizeof(rep)};
	if (!tap_send(c, NULL, iov, 2)) {
		c->stats.to_guest[PROTO_ARP].packets++;
		c->stats.to_guest[PROTO_ARP].bytes += sizeof(eh) + sizeof(rep);
	}
}
