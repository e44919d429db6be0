// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - IPv6 neighbour discovery and router adverts (SLAAC for fd00::/64) */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/icmp6.h>
#include <netinet/ip6.h>
#include <event2/event.h>

#include "driver/stack/csum.h"
#include "driver/stack/eth.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/core/log.h"
#include "driver/stack/ndp.h"
#include "driver/core/opts.h"

/* Router lifetime and RDNSS lifetime in adverts, as libslirp: 30 min. */
#define NDP_ROUTER_LIFETIME 1800
#define NDP_VALID_LIFETIME 86400
#define NDP_PREFERRED_LIFETIME 14400
/* Unsolicited adverts: one right after start, then this often. */
#define NDP_RA_FIRST_MS 5
#define NDP_RA_INTERVAL_SEC 60
/* Largest advert: header, source link-layer, MTU, prefix and RDNSS. */
#define NDP_RA_MAX (16 + 8 + 8 + 32 + 24)
#define NDP_NA_LEN (24 + 8)
#define NDP_OPT_RDNSS 25

/* ndp_parse() results other than 0. */
#define NDP_MALFORMED -1 /* length, code or options wrong */
#define NDP_OFF_LINK -2  /* hop limit below 255: not from this link */

const struct in6_addr ndp_router_ll = {
        .s6_addr = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}};
static const struct in6_addr ndp_prefix = {.s6_addr = {0xfd, 0}};
static const struct in6_addr ndp_all_nodes = {
        .s6_addr = {0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};

/**
 * struct ndp_state - router advert schedule
 * @timer:	sends the next unsolicited advert
 */
struct ndp_state {
	struct event *timer;
};

/**
 * struct ndp_msg - a Router or Neighbor Solicitation that passed validation
 * @type:	ND_ROUTER_SOLICIT or ND_NEIGHBOR_SOLICIT
 * @target:	for a Neighbor Solicitation, the address asked about
 * @has_sll:	a source link-layer address option was present
 * @sll:	its address
 */
struct ndp_msg {
	uint8_t type;
	struct in6_addr target;
	bool has_sll;
	uint8_t sll[6];
};

/**
 * put16() - store a 16-bit value in network order
 * @p:		destination
 * @v:		value
 */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/**
 * put32() - store a 32-bit value in network order
 * @p:		destination
 * @v:		value
 */
static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/**
 * is_solicited_node() - whether @a is a solicited-node multicast address
 * @a:		address
 *
 * Return: true for ff02::1:ffXX:XXXX
 */
static bool is_solicited_node(const struct in6_addr *a)
{
	static const uint8_t pfx[13] = {0xff, 2, 0, 0, 0, 0,   0,
	                                0,    0, 0, 0, 1, 0xff};

	return !memcmp(a->s6_addr, pfx, sizeof(pfx));
}

/**
 * ndp_parse_options() - walk the options of an NDP message
 * @opt:	first option
 * @len:	bytes of options
 * @out:	gets the source link-layer address, if any
 *
 * Return: 0 if every option fits and none has length 0, else NDP_MALFORMED
 */
static int ndp_parse_options(const uint8_t *opt, size_t len,
                             struct ndp_msg *out)
{
	size_t off = 0;

	while (off < len) {
		size_t olen;

		if (len - off < 2)
			return NDP_MALFORMED;
		olen = (size_t)opt[off + 1] * 8;
		/* RFC 4861 4.6: length 0 must be dropped, or we'd loop. */
		if (!olen || olen > len - off)
			return NDP_MALFORMED;
		if (opt[off] == ND_OPT_SOURCE_LINKADDR) {
			out->has_sll = true;
			memcpy(out->sll, opt + off + 2, 6);
		}
		off += olen;
	}
	return 0;
}

/**
 * ndp_parse() - validate a Router or Neighbor Solicitation (RFC 4861 6.1.1,
 *		 7.1.1)
 * @p:		ICMPv6 packet from the guest; @p->l3 is its IPv6 header
 * @out:	filled on success
 *
 * Return: 0 if valid, NDP_OFF_LINK if the hop limit is not 255,
 *	   NDP_MALFORMED for anything else wrong or another message type
 */
static int ndp_parse(const struct pkt *p, struct ndp_msg *out)
{
	size_t hdr;

	memset(out, 0, sizeof(*out));
	if (p->l3len < sizeof(struct ip6_hdr) || p->l4len < 8)
		return NDP_MALFORMED;
	/* Only a neighbour on the link can send with 255 left. */
	if (p->l3[offsetof(struct ip6_hdr, ip6_hlim)] != 255)
		return NDP_OFF_LINK;
	out->type = p->l4[0];
	if (p->l4[1] != 0)
		return NDP_MALFORMED;
	if (out->type == ND_ROUTER_SOLICIT) {
		hdr = 8;
	} else if (out->type == ND_NEIGHBOR_SOLICIT) {
		hdr = 24;
		if (p->l4len < hdr)
			return NDP_MALFORMED;
		memcpy(&out->target, p->l4 + 8, 16);
		if (IN6_IS_ADDR_MULTICAST(&out->target))
			return NDP_MALFORMED;
		/* DAD probes go to the target's solicited-node group. */
		if (IN6_IS_ADDR_UNSPECIFIED(&p->src) &&
		    !is_solicited_node(&p->dst))
			return NDP_MALFORMED;
	} else {
		return NDP_MALFORMED;
	}
	if (ndp_parse_options(p->l4 + hdr, p->l4len - hdr, out))
		return NDP_MALFORMED;
	/* Without a source address there is nothing to bind a MAC to. */
	if (IN6_IS_ADDR_UNSPECIFIED(&p->src) && out->has_sll)
		return NDP_MALFORMED;
	return 0;
}

/**
 * ndp_build_na() - build a Neighbor Advertisement for one of our addresses
 * @buf:	at least NDP_NA_LEN bytes
 * @target:	the address advertised
 * @router:	set the router flag
 * @solicited:	set the solicited flag (answer to a unicast-sourced NS)
 * @mac:	our MAC, the target's link-layer address
 *
 * The checksum field is left zero for the sender to fill.
 *
 * Return: message length, NDP_NA_LEN
 */
static size_t ndp_build_na(uint8_t *buf, const struct in6_addr *target,
                           bool router, bool solicited, const uint8_t *mac)
{
	memset(buf, 0, NDP_NA_LEN);
	buf[0] = ND_NEIGHBOR_ADVERT;
	/* Override: we are the only owner of these addresses. */
	buf[4] = 0x20 | (router ? 0x80 : 0) | (solicited ? 0x40 : 0);
	memcpy(buf + 8, target, 16);
	buf[24] = ND_OPT_TARGET_LINKADDR;
	buf[25] = 1;
	memcpy(buf + 26, mac, 6);
	return NDP_NA_LEN;
}

/**
 * ndp_build_ra() - build our Router Advertisement
 * @buf:	at least NDP_RA_MAX bytes
 * @mtu:	link MTU to announce; below the IPv6 minimum it is left out
 * @rdnss:	DNS server to announce (RFC 8106), or NULL for none
 * @copy6:	pasta's copy of the host's IPv6 (guest6/prefix6), or NULL
 * @mac:	our MAC, the source link-layer address
 *
 * The advert makes us the default router and lets the guest form an
 * address in fd00::/64 by SLAAC. With pasta's copy it announces the
 * copied prefix as on-link only, and no default router: the guest has
 * its address and its route via the host's gateway already. The checksum
 * field is left zero.
 *
 * Return: message length
 */
static size_t ndp_build_ra(uint8_t *buf, unsigned int mtu,
                           const struct in6_addr *rdnss,
                           const struct opts *copy6, const uint8_t *mac)
{
	struct in6_addr prefix = ndp_prefix;
	unsigned int plen = 64;
	size_t n = 16;

	memset(buf, 0, NDP_RA_MAX);
	buf[0] = ND_ROUTER_ADVERT;
	buf[4] = 64; /* current hop limit for the guest's own packets */
	put16(buf + 6, copy6 ? 0 : NDP_ROUTER_LIFETIME);
	buf[n] = ND_OPT_SOURCE_LINKADDR;
	buf[n + 1] = 1;
	memcpy(buf + n + 2, mac, 6);
	n += 8;
	if (mtu >= 1280) {
		buf[n] = ND_OPT_MTU;
		buf[n + 1] = 1;
		put32(buf + n + 4, mtu);
		n += 8;
	}
	if (copy6) {
		plen = copy6->prefix6;
		prefix = copy6->guest6;
		for (unsigned int b = plen; b < 128; b++)
			prefix.s6_addr[b / 8] &= (uint8_t) ~(0x80U >> (b % 8));
	}
	buf[n] = ND_OPT_PREFIX_INFORMATION;
	buf[n + 1] = 4;
	buf[n + 2] = (uint8_t)plen;
	buf[n + 3] = copy6 ? ND_OPT_PI_FLAG_ONLINK
	                   : ND_OPT_PI_FLAG_ONLINK | ND_OPT_PI_FLAG_AUTO;
	put32(buf + n + 4, NDP_VALID_LIFETIME);
	put32(buf + n + 8, NDP_PREFERRED_LIFETIME);
	memcpy(buf + n + 16, &prefix, 16);
	n += 32;
	if (rdnss) {
		buf[n] = NDP_OPT_RDNSS;
		buf[n + 1] = 3;
		put32(buf + n + 4, NDP_ROUTER_LIFETIME);
		memcpy(buf + n + 8, rdnss, 16);
		n += 24;
	}
	return n;
}

/**
 * ndp_send() - checksum an NDP message and send it to the guest
 * @c:		context
 * @src:	source address
 * @dst:	destination address
 * @msg:	message with a zero checksum field; filled in place
 * @len:	message length
 */
static void ndp_send(struct ctx *c, const struct in6_addr *src,
                     const struct in6_addr *dst, uint8_t *msg, size_t len)
{
	uint32_t sum = ip_pseudo_csum(src, dst, IPPROTO_ICMPV6, len);
	struct iovec iov = {msg, len};
	uint16_t ck = csum_fold(csum_add(sum, msg, len));

	memcpy(msg + 2, &ck, 2);
	/* ip_output() sets hop limit 255 for ICMPv6, as NDP requires. */
	if (ip_output(c, src, dst, IPPROTO_ICMPV6, &iov, 1, NULL))
		return;
	c->stats.to_guest[PROTO_ICMP].packets++;
	c->stats.to_guest[PROTO_ICMP].bytes += len;
}

/**
 * ra_rdnss() - the DNS server our adverts name
 * @c:		context
 *
 * The forwarder (fd00::3), unless --disable-dns. pasta names one only
 * with --dhcp-dns: the first IPv6 -D, else the forwarder, if any.
 *
 * Return: the address, or NULL for none
 */
static const struct in6_addr *ra_rdnss(const struct ctx *c)
{
	const struct pasta_opts *po = c->o->pasta;

	if (po && (!po->dhcp_dns || po->dns_none))
		return NULL;
	if (po && po->n_dns6)
		return &po->dns6[0];
	if (c->o->disable_dns || IN6_IS_ADDR_UNSPECIFIED(&c->dns6))
		return NULL;
	return &c->dns6;
}

/**
 * ndp_send_ra() - send our Router Advertisement
 * @c:		context
 * @dst:	the soliciting guest, or all-nodes for an unsolicited one
 */
static void ndp_send_ra(struct ctx *c, const struct in6_addr *dst)
{
	uint8_t ra[NDP_RA_MAX];
	size_t len = ndp_build_ra(ra, c->tap.mtu, ra_rdnss(c),
	                          c->o->copy6 ? c->o : NULL, eth_router6(c));

	ndp_send(c, &ndp_router_ll, dst, ra, len);
}

/**
 * copied_neighbour() - whether a solicited address is a neighbour tapir
 *			stands for in pasta's copy of the host's network
 * @c:		context
 * @target:	the address asked about
 * @dad:	the solicitation is a duplicate address probe
 *
 * The copied prefix stands for the host's network, as ARP does for IPv4:
 * every other address in it is reached through tapir (the gateway is
 * answered as the router). Never a probe's: the guest's new addresses
 * (SLAAC, privacy) would fail.
 *
 * Return: true if so
 */
static bool copied_neighbour(const struct ctx *c, const struct in6_addr *target,
                             bool dad)
{
	return c->o->copy6 && !dad &&
	       in6_same_prefix(target, &c->o->guest6, c->o->prefix6) &&
	       !inany_equal(target, &c->o->guest6);
}

/**
 * ndp_answer_ns() - answer a Neighbor Solicitation for one of our addresses
 * @c:		context
 * @p:		the solicitation
 * @m:		its parsed content
 */
static void ndp_answer_ns(struct ctx *c, const struct pkt *p,
                          const struct ndp_msg *m)
{
	bool router = inany_equal(&m->target, &ndp_router_ll) ||
	              inany_equal(&m->target, &c->gw6);
	bool dad = IN6_IS_ADDR_UNSPECIFIED(&p->src);
	uint8_t na[NDP_NA_LEN];

	/* Never for ::, which the copy makes c->dns6. */
	if (IN6_IS_ADDR_UNSPECIFIED(&m->target) ||
	    (!router && !inany_equal(&m->target, &c->dns6) &&
	     !copied_neighbour(c, &m->target, dad))) {
		/* The guest's own addresses (DAD) and other neighbours. */
		c->stats.drops[DROP_NOT_FOR_US]++;
		return;
	}
	/* RFC 4861 7.2.4: a DAD probe gets an unsolicited all-nodes NA. */
	ndp_build_na(na, &m->target, router, !dad, eth_router6(c));
	ndp_send(c, &m->target, dad ? &ndp_all_nodes : &p->src, na, sizeof(na));
}

/**
 * ndp_input() - handle an ICMPv6 message from the guest if it is NDP
 * @c:		context
 * @p:		ICMPv6 packet, checksum verified, at least 8 bytes
 *
 * Return: true if the message was NDP and is dealt with, false to let the
 *	   caller handle it (echo requests and everything else)
 */
bool ndp_input(struct ctx *c, const struct pkt *p)
{
	struct ndp_msg m;
	int ret;

	if (!c->ndp || p->l4len < 1)
		return false;
	switch (p->l4[0]) {
	case ND_ROUTER_SOLICIT:
	case ND_NEIGHBOR_SOLICIT:
		break;
	case ND_ROUTER_ADVERT:
	case ND_NEIGHBOR_ADVERT:
	case ND_REDIRECT:
		/* The guest's own adverts tell us nothing we act on. */
		c->stats.drops[DROP_NOT_FOR_US]++;
		return true;
	default:
		return false;
	}
	if (c->o->no_ndp || (p->l4[0] == ND_ROUTER_SOLICIT && c->o->no_ra)) {
		/* pasta's --no-ndp and --no-ra: the guest is configured. */
		c->stats.drops[DROP_NOT_FOR_US]++;
		return true;
	}
	ret = ndp_parse(p, &m);
	if (ret) {
		c->stats.drops[ret == NDP_OFF_LINK ? DROP_NOT_FOR_US
		                                   : DROP_BAD_LENGTH]++;
		return true;
	}
	if (m.type == ND_ROUTER_SOLICIT)
		ndp_send_ra(c, IN6_IS_ADDR_UNSPECIFIED(&p->src) ? &ndp_all_nodes
		                                                : &p->src);
	else
		ndp_answer_ns(c, p, &m);
	return true;
}

/**
 * ndp_timer() - timer callback: send an unsolicited advert, schedule the next
 * @fd:		unused
 * @what:	unused
 * @arg:	context
 *
 * A guest that sent its Router Solicitation before the tap was read would
 * otherwise wait for its next retry, seconds later or never. If the next
 * advert can't be scheduled, none follows (the guest's default route
 * then lapses with the router lifetime): that is said once.
 */
static void ndp_timer(evutil_socket_t fd, short what, void *arg)
{
	struct timeval tv = {NDP_RA_INTERVAL_SEC, 0};
	struct ctx *c = arg;

	(void)fd;
	(void)what;
	ndp_send_ra(c, &ndp_all_nodes);
	if (evtimer_add(c->ndp->timer, &tv))
		err_msg("ndp: schedule the next router advert: libevent "
		        "failed, no more unsolicited adverts");
}

/**
 * ndp_init() - start router adverts, with --enable-ipv6 only
 * @c:		context with an event base
 *
 * Return: 0 on success, -1 after printing one error line
 */
int ndp_init(struct ctx *c)
{
	struct timeval tv = {0, NDP_RA_FIRST_MS * 1000};
	struct ndp_state *s;

	if (!c->o->ipv6)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s) {
		err_errno(ENOMEM, "ndp: allocate state");
		return -1;
	}
	/* The loop starts reading the tap right after init, so a few ms on. */
	s->timer = evtimer_new(c->base, ndp_timer, c);
	if (!s->timer ||
	    (!c->o->no_ra && !c->o->no_ndp && evtimer_add(s->timer, &tv))) {
		err_msg("ndp: create router advert timer: libevent failed");
		if (s->timer)
			event_free(s->timer);
		free(s);
		return -1;
	}
	c->ndp = s;
	return 0;
}

/**
 * ndp_cleanup() - stop router adverts
 * @c:		context; ndp_init() may not have run
 */
void ndp_cleanup(struct ctx *c)
{
	if (!c->ndp)
		return;
	event_free(c->ndp->timer);
	free(c->ndp);
	c->ndp = NULL;
}
