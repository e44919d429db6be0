// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - where guest traffic goes on the host: loopback mapping, DNS, policy */

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/ip_icmp.h>

#include "driver/host/dns.h"
#include "driver/flow/fwd.h"
#include "driver/stack/icmp.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/core/log.h"

/**
 * forbidden_destination() - addresses no guest packet may reach directly
 * @a:		destination as the guest sent it
 *
 * Host loopback is reachable only through the gateway mapping, so that
 * --disable-host-loopback closes every route to it; unspecified, multicast
 * and broadcast destinations have no meaning for a host socket.
 *
 * Return: true if forbidden
 */
static bool forbidden_destination(const struct in6_addr *a)
{
	if (inany_is_loopback(a))
		return true;
	if (inany_is_v4(a)) {
		uint32_t v = ntohl(inany_v4(a).s_addr);

		return (v >> 24) == 0 || v >= 0xe0000000;
	}
	return IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_MULTICAST(a) ||
	       IN6_IS_ADDR_LINKLOCAL(a);
}

/**
 * in_virtual_net() - whether @a is in the guest's own virtual network
 * @c:		context
 * @a:		address
 *
 * Those addresses (net+N, its broadcast, fd00::/64) exist only on the tap:
 * none of them may turn into a destination on the host's network.
 *
 * Return: true if inside 10.0.2.0/24 (or --cidr) or fd00::/64; in pasta's
 *	   addressing, for the guest's own IPv4 address only
 */
static bool in_virtual_net(const struct ctx *c, const struct in6_addr *a)
{
	/* pasta's subnet stands for the host's network: only the guest's
	 * own address is its.
	 */
	if (inany_is_v4(a) && c->o->pasta_net)
		return inany_v4(a).s_addr == c->guest4.s_addr;
	if (!inany_is_v4(a) && c->o->copy6)
		return inany_equal(a, &c->o->guest6);
	if (inany_is_v4(a))
		return (inany_v4(a).s_addr & c->mask4.s_addr) ==
		       (c->gw4.s_addr & c->mask4.s_addr);
	return !memcmp(a, &c->gw6, 8);
}

/**
 * gateway_dns() - whether DNS to the gateway goes to the host's resolver
 *		   rather than to the host's loopback
 * @c:		context
 * @dst:	the gateway, as the guest sent to it
 * @dport:	destination port, host order
 *
 * pasta's exception, without --dns-forward of the gateway's IP version:
 * its gateway is the host's own, which is often the host's resolver too,
 * and the mapping to the host's loopback would shadow it. So when the
 * host's resolv.conf names the gateway, or a loopback resolver (which
 * 127.0.0.1 may not be), DNS to the gateway is forwarded as the DNS
 * address's is.
 *
 * Return: true if so
 */
static bool gateway_dns(const struct ctx *c, const struct in6_addr *dst,
                        uint16_t dport)
{
	bool forwarder = inany_is_v4(dst) ? c->dns4.s_addr
	                                  : !IN6_IS_ADDR_UNSPECIFIED(&c->dns6);

	return c->o->pasta_net && (c->o->disable_dns || !forwarder) &&
	       dport == 53 && dns_host_resolves_at((struct ctx *)c, dst);
}

/**
 * host_loopback() - loopback of one IP version
 * @v4:		127.0.0.1 (v4-mapped), else ::1
 * @lo:		filled
 */
static void host_loopback(bool v4, struct in6_addr *lo)
{
	if (v4)
		inany_from_v4(lo, (struct in_addr){htonl(INADDR_LOOPBACK)});
	else
		*lo = in6addr_loopback;
}

/**
 * fwd_outbound() - decide where a guest flow to @dst:@dport goes on the host
 * @c:		context
 * @proto:	IPPROTO_TCP or IPPROTO_UDP
 * @dst:	destination as the guest sent it
 * @dport:	destination port, host order
 * @sa:		on FWD_OK, the host address to connect or send to
 * @salen:	on FWD_OK, its length
 *
 * The gateway stands for host loopback unless --disable-host-loopback (then
 * net-unreachable, as slirp4netns answers), or pasta's gateway for DNS
 * (gateway_dns()); the DNS address on port 53 stands for the host's first
 * resolver unless --disable-dns (then packets to it vanish: the guest sees
 * a timeout, and nothing is sent on its behalf).
 *
 * Return: the verdict
 */
enum fwd_verdict fwd_outbound(const struct ctx *c, uint8_t proto,
                              const struct in6_addr *dst, uint16_t dport,
                              union sockaddr_inany *sa, socklen_t *salen)
{
	const struct host_map *m = ip_host_map(c, dst);
	struct in6_addr host;

	(void)proto;
	if (inany_matches(&m->guest, dst)) {
		sockaddr_from_inany(sa, salen, &m->own, dport);
		return FWD_OK;
	}
	if (ip_is_gateway(c, dst)) {
		if (c->o->disable_host_loopback)
			return FWD_NET_UNREACH;
		if (gateway_dns(c, dst, dport) &&
		    !dns_upstream((struct ctx *)c, sa, salen))
			return FWD_OK;
		host_loopback(inany_is_v4(dst), &host);
		sockaddr_from_inany(sa, salen, &host, dport);
		return FWD_OK;
	}
	if (ip_is_dns(c, dst)) {
		if (c->o->disable_dns)
			return FWD_DROP;
		if (dport != 53)
			return FWD_NET_UNREACH;
		if (dns_upstream((struct ctx *)c, sa, salen))
			return FWD_NET_UNREACH;
		return FWD_OK;
	}
	if (forbidden_destination(dst) || in_virtual_net(c, dst))
		return FWD_NET_UNREACH;
	/* pasta_net: the gateway without host loopback, the guest's
	 * neighbours: addresses outside like any other.
	 */
	sockaddr_from_inany(sa, salen, dst, dport);
	return FWD_OK;
}

/**
 * fwd_outbound_or_reject() - fwd_outbound() for a guest packet, with the
 *			      guest told when it may not go anywhere
 * @c:		context
 * @p:		the guest's packet (its protocol and destination are used)
 * @dport:	destination port, host order (0 for ICMP)
 * @sa:		on success, the host address to use
 * @salen:	on success, its length
 *
 * Return: 0 if the packet may go to @sa, -1 if it was dropped (counted,
 *	   and answered with net-unreachable where policy says so)
 */
int fwd_outbound_or_reject(struct ctx *c, const struct pkt *p, uint16_t dport,
                           union sockaddr_inany *sa, socklen_t *salen)
{
	switch (fwd_outbound(c, p->proto, &p->dst, dport, sa, salen)) {
	case FWD_OK:
		return 0;
	case FWD_NET_UNREACH:
		c->stats.drops[DROP_NO_ROUTE]++;
		icmp_send_unreach(c, p, ICMP_NET_UNREACH);
		return -1;
	case FWD_DROP:
	default:
		c->stats.drops[DROP_NO_ROUTE]++;
		return -1;
	}
}

/**
 * fwd_guest_source() - how a host peer's address appears to the guest
 * @c:		context
 * @sa:		host peer address (of an accepted or replying socket)
 * @addr:	filled with the address the guest sees
 * @port:	filled with the port, host order
 *
 * Loopback peers appear as the address that stands for host loopback
 * (the gateway: net+2, or fd00::2; or pasta's --map-host-loopback), as in
 * slirp4netns; the host's own address that pasta's addressing gave the
 * guest, which would drop a packet from its own address, appears as its
 * --map-guest-addr, else as the gateway. Everyone else keeps their
 * address. IPv4-mapped IPv6 peers (an IPv4 client of a socket that takes
 * both families) are unwrapped to IPv4.
 */
void fwd_guest_source(const struct ctx *c, const union sockaddr_inany *sa,
                      struct in6_addr *addr, uint16_t *port)
{
	const struct host_map *m;
	bool v4;

	if (sa->sa.sa_family == AF_INET) {
		*port = ntohs(sa->sa4.sin_port);
		inany_from_v4(addr, sa->sa4.sin_addr);
	} else {
		*port = ntohs(sa->sa6.sin6_port);
		*addr = sa->sa6.sin6_addr;
	}
	v4 = inany_is_v4(addr);
	m = ip_host_map(c, addr);
	if (inany_is_loopback(addr))
		ip_host_lo(c, v4, addr);
	else if (inany_matches(&m->own, addr) &&
	         !IN6_IS_ADDR_UNSPECIFIED(&m->guest))
		*addr = m->guest;
	else if (inany_matches(&m->own, addr))
		ip_gateway(c, v4, addr);
}

/**
 * fwd_guest_target() - the guest address a forward's client reaches
 * @c:		context
 * @peer:	the client (of an accepted or receiving socket)
 * @gaddr:	the forward's guest address
 * @dst:	filled: @gaddr, or the guest's IPv6 address
 *
 * As pasta: a client that came over IPv6 reaches the guest's IPv6
 * address, so that a service listening on IPv6 only answers it. That
 * holds where the forward goes to the guest's own IPv4 address (not to
 * one the caller named) and tapir gave the guest an IPv6 address; a
 * service that listens on IPv4 only is then not reached over IPv6, as
 * with pasta (docs/engines.md). A guest without IPv4 (-6) is reached at
 * its IPv6 address by clients of both families.
 */
void fwd_guest_target(const struct ctx *c, const union sockaddr_inany *peer,
                      const struct in6_addr *gaddr, struct in6_addr *dst)
{
	bool v6_client = peer->sa.sa_family == AF_INET6 &&
	                 !inany_is_v4(&peer->sa6.sin6_addr);

	*dst = *gaddr;
	if ((!v6_client && !c->o->ipv6_only) ||
	    IN6_IS_ADDR_UNSPECIFIED(&c->guest6) || !inany_is_v4(gaddr) ||
	    inany_v4(gaddr).s_addr != c->guest4.s_addr)
		return;
	*dst = c->guest6;
}

/**
 * fwd_inbound_key() - how a forward's client and its guest service appear
 *		       to the guest
 * @c:		context
 * @peer:	the client (of an accepted or receiving socket)
 * @gaddr:	the forward's guest address
 * @gport:	the forward's guest port
 * @k:		filled: gaddr, gport, faddr and fport; the rest untouched
 *
 * The client as fwd_guest_source() maps it, at the guest address
 * fwd_guest_target() picks; a client the target's family can't express
 * appears as the gateway of that family (an IPv6 client of the guest's
 * IPv4 address, an IPv4 one of a guest with IPv6 only). Replies still
 * reach it, through the forward's socket.
 */
void fwd_inbound_key(const struct ctx *c, const union sockaddr_inany *peer,
                     const struct in6_addr *gaddr, uint16_t gport,
                     struct flow_key *k)
{
	fwd_guest_source(c, peer, &k->faddr, &k->fport);
	fwd_guest_target(c, peer, gaddr, &k->gaddr);
	if (inany_is_v4(&k->gaddr) && !inany_is_v4(&k->faddr))
		inany_from_v4(&k->faddr, c->gw4);
	else if (!inany_is_v4(&k->gaddr) && inany_is_v4(&k->faddr))
		k->faddr = c->gw6;
	k->gport = gport;
}

/**
 * fwd_ns_loopback() - a host loopback peer's counterpart in the namespace
 * @sa:		host peer address
 * @lo:		filled with the namespace's loopback of the peer's kind:
 *		127.0.0.1 (inany) for IPv4 and IPv4-mapped peers, else ::1
 *
 * Return: true if @sa is a loopback address (then @lo is set)
 */
bool fwd_ns_loopback(const union sockaddr_inany *sa, struct in6_addr *lo)
{
	struct in6_addr a;

	if (sa->sa.sa_family == AF_INET)
		inany_from_v4(&a, sa->sa4.sin_addr);
	else if (sa->sa.sa_family == AF_INET6)
		a = sa->sa6.sin6_addr;
	else
		return false;
	if (!inany_is_loopback(&a))
		return false;
	host_loopback(inany_is_v4(&a), lo);
	return true;
}

/**
 * fwd_reset_close() - close a TCP socket so that the peer sees a reset
 * @fd:		socket, or -1
 *
 * For a connection that cannot be forwarded or was reset by the other
 * side: the peer learns at once, rather than from a FIN that looks like a
 * complete reply.
 */
void fwd_reset_close(int fd)
{
	if (fd < 0)
		return;
	fwd_reset_on_close(fd);
	close(fd);
}

/**
 * fwd_reset_on_close() - make a TCP socket's close() reset its peer
 * @fd:		socket, or -1
 */
void fwd_reset_on_close(int fd)
{
	static struct log_limit limit;
	const struct linger l = {.l_onoff = 1, .l_linger = 0};

	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)))
		err_limited(&limit, errno,
		            "SO_LINGER for a reset: the peer "
		            "sees a FIN instead");
}
