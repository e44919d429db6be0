// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - ICMP and ICMPv6 from the guest: local echo, NDP, ping sockets */

#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/icmp6.h>
#include <netinet/ip_icmp.h>

#include "driver/core/clock.h"
#include "driver/stack/csum.h"
#include "driver/stack/icmp.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/stack/ndp.h"
#include "driver/core/opts.h"
#include "driver/udp/ping.h"
#include "driver/thread/thread.h"

/* Most bytes of the offending packet an ICMPv6 error quotes: the whole
 * error fits the minimum IPv6 MTU (RFC 4443 2.4 (c)). An ICMP error quotes
 * less: the IPv4 header and 8 bytes.
 */
#define ICMP_QUOTE_MAX (1280 - 40 - 8)
/* ICMP errors to the guest, per context: up to ICMP_ERR_BURST at once,
 * then ICMP_ERR_RATE a second, as Linux's icmp_msgs_burst and
 * icmp_msgs_per_sec. A host that refuses every datagram of a flood costs
 * the guest no flood of errors, and tapir no more work than reading them.
 */
#define ICMP_ERR_BURST 50
#define ICMP_ERR_RATE 1000

/**
 * icmp_csum() - checksum of an ICMP (no pseudo-header) or ICMPv6 message
 * @v6:		ICMPv6, whose checksum covers the pseudo-header
 * @src:	source, for ICMPv6
 * @dst:	destination, for ICMPv6
 * @msg:	message, checksum field included as it should be summed
 * @len:	message length
 *
 * Return: the folded checksum; 0 over a message with a correct checksum
 */
static uint16_t icmp_csum(bool v6, const struct in6_addr *src,
                          const struct in6_addr *dst, const void *msg,
                          size_t len)
{
	uint32_t sum = v6 ? ip_pseudo_csum(src, dst, IPPROTO_ICMPV6, len) : 0;

	return csum_fold(csum_add(sum, msg, len));
}

/**
 * icmp_send() - send an ICMP/ICMPv6 message to the guest, checksummed here
 * @c:		context
 * @src:	source address
 * @dst:	destination (the guest)
 * @msg:	message with a zero checksum field; written in place
 * @len:	message length, at least 4
 *
 * Return: 0 on success, -1 if dropped
 */
static int icmp_send(struct ctx *c, const struct in6_addr *src,
                     const struct in6_addr *dst, uint8_t *msg, size_t len)
{
	bool v6 = !inany_is_v4(src);
	uint16_t ck = icmp_csum(v6, src, dst, msg, len);
	struct iovec iov = {msg, len};

	memcpy(msg + 2, &ck, 2);
	if (ip_output(c, src, dst, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP, &iov, 1,
	              NULL))
		return -1;
	c->stats.to_guest[PROTO_ICMP].packets++;
	c->stats.to_guest[PROTO_ICMP].bytes += len;
	return 0;
}

/**
 * icmp_echo_local() - answer an echo request to the gateway or DNS address
 * @c:		context
 * @p:		the request, consumed: it becomes the reply in place, which
 *		needs neither a copy nor a buffer of 64 KiB
 */
static void icmp_echo_local(struct ctx *c, struct pkt *p)
{
	p->l4[0] = p->v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY;
	p->l4[2] = p->l4[3] = 0;
	icmp_send(c, &p->dst, &p->src, p->l4, p->l4len);
}

/**
 * icmp_may_answer() - whether an error (ICMP, or a TCP RST) may answer @p
 * @c:		context
 * @p:		the offending packet
 *
 * RFC 1122 3.2.2 and 4.2.3.10: never about packets to a broadcast or
 * multicast address, whose reply would carry that address as its source.
 *
 * Return: true if an answer is allowed
 */
bool icmp_may_answer(const struct ctx *c, const struct pkt *p)
{
	uint32_t d, m = c->mask4.s_addr;

	if (p->v6)
		return !IN6_IS_ADDR_MULTICAST(&p->dst);
	d = inany_v4(&p->dst).s_addr;
	if (d == INADDR_BROADCAST || IN_MULTICAST(ntohl(d)))
		return false;
	/* The virtual network's own broadcast address; a /31 or /32 has
	 * none (RFC 3021), and pasta's gateway may be outside it.
	 */
	return c->o->prefix >= 31 || (d & m) != (c->guest4.s_addr & m) ||
	       (d | m) != INADDR_BROADCAST;
}

/**
 * icmp_err_allowed() - take a token of the context's error bucket
 * @c:		context
 *
 * Return: true if an error may go to the guest now
 */
static bool icmp_err_allowed(struct ctx *c)
{
	uint64_t now = clock_ms();
	uint64_t refill = (now - c->icmp_err_ms) * ICMP_ERR_RATE / 1000;

	if (refill) {
		c->icmp_err_spent =
		        refill >= c->icmp_err_spent
		                ? 0
		                : c->icmp_err_spent - (unsigned int)refill;
		c->icmp_err_ms = now;
	}
	if (c->icmp_err_spent >= ICMP_ERR_BURST)
		return false;
	c->icmp_err_spent++;
	return true;
}

/**
 * unreach6_code() - the ICMPv6 destination-unreachable code of an ICMP one
 * @code:	ICMP_*_UNREACH code
 *
 * Return: ICMP6_DST_UNREACH_* code
 */
static uint8_t unreach6_code(uint8_t code)
{
	switch (code) {
	case ICMP_PORT_UNREACH:
		return ICMP6_DST_UNREACH_NOPORT;
	case ICMP_NET_UNREACH:
	case ICMP_NET_UNKNOWN:
	case ICMP_NET_UNR_TOS:
		return ICMP6_DST_UNREACH_NOROUTE;
	case ICMP_NET_ANO:
	case ICMP_HOST_ANO:
	case ICMP_PKT_FILTERED:
		return ICMP6_DST_UNREACH_ADMIN;
	default:
		return ICMP6_DST_UNREACH_ADDR;
	}
}

/**
 * icmp_unreach_code() - the ICMP unreachable code for a host socket's errno
 * @err:	errno of a connect or send, or a socket's pending error
 *
 * Return: ICMP_*_UNREACH code (IPv4 numbering), or -1 for none
 */
int icmp_unreach_code(int err)
{
	switch (err) {
	case ECONNREFUSED:
		return ICMP_PORT_UNREACH;
	case ENETUNREACH:
		return ICMP_NET_UNREACH;
	case EHOSTUNREACH:
		return ICMP_HOST_UNREACH;
	case EACCES:
	case EPERM:
		return ICMP_PKT_FILTERED;
	default:
		return -1;
	}
}

/**
 * icmp_send_error() - send the guest an ICMP error quoting its packet
 * @c:		context
 * @p:		the offending packet
 * @type:	ICMP or ICMPv6 type, of @p's family
 * @code:	its code
 * @info:	the 4 bytes after the checksum (an MTU, or 0), host order
 *
 * At most ICMP_ERR_RATE a second, after a burst of ICMP_ERR_BURST: the
 * rest are not sent.
 *
 * Return: 0 on success, -1 if dropped
 */
static int icmp_send_error(struct ctx *c, const struct pkt *p, uint8_t type,
                           uint8_t code, uint32_t info)
{
	size_t quote = p->l3len + (p->l4len < 8 ? p->l4len : 8);
	uint8_t m[8 + ICMP_QUOTE_MAX];
	uint32_t be = htonl(info);

	if (!icmp_may_answer(c, p) || !icmp_err_allowed(c))
		return -1;
	if (p->v6) /* Whole offending packet, within the minimum IPv6 MTU. */
		quote = p->l3len + p->l4len;
	if (quote > ICMP_QUOTE_MAX)
		quote = ICMP_QUOTE_MAX;
	m[0] = type;
	m[1] = code;
	m[2] = m[3] = 0;
	memcpy(m + 4, &be, 4);
	memcpy(m + 8, p->l3, quote);
	return icmp_send(c, &p->dst, &p->src, m, 8 + quote);
}

/**
 * icmp_send_unreach() - tell the guest a packet can't be delivered
 * @c:		context
 * @p:		the offending packet
 * @code:	ICMP_NET_UNREACH, ICMP_PORT_UNREACH, ... (IPv4 codes; mapped
 *		to ICMPv6 destination-unreachable codes for IPv6)
 *
 * Return: 0 on success, -1 if dropped (rate limit, or not to be answered)
 */
int icmp_send_unreach(struct ctx *c, const struct pkt *p, uint8_t code)
{
	if (p->v6)
		return icmp_send_error(c, p, ICMP6_DST_UNREACH,
		                       unreach6_code(code), 0);
	return icmp_send_error(c, p, ICMP_DEST_UNREACH, code, 0);
}

/**
 * icmp_send_too_big() - tell the guest its packet is bigger than the path
 * @c:		context
 * @p:		the offending packet
 * @mtu:	the path's MTU, as the host knows it
 *
 * ICMPv6 packet too big (RFC 4443 3.2), or for IPv4 fragmentation needed
 * with the next-hop MTU in its low 16 bits (RFC 1191): the guest lowers
 * its path MTU to the destination, and its next packets fit.
 *
 * Return: 0 on success, -1 if dropped (rate limit, or not to be answered)
 */
int icmp_send_too_big(struct ctx *c, const struct pkt *p, uint32_t mtu)
{
	if (p->v6)
		return icmp_send_error(c, p, ICMP6_PACKET_TOO_BIG, 0, mtu);
	return icmp_send_error(c, p, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED,
	                       mtu > 0xffff ? 0xffff : mtu);
}

/**
 * icmp_input() - handle an ICMP or ICMPv6 message from the guest
 * @c:		context
 * @p:		validated packet, ICMP for IPv4 or ICMPv6 for IPv6
 */
void icmp_input(struct ctx *c, struct pkt *p)
{
	uint8_t echo = p->v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;

	if (p->l4len < 8) {
		c->stats.drops[DROP_SHORT_FRAME]++;
		return;
	}
	if (icmp_csum(p->v6, &p->src, &p->dst, p->l4, p->l4len)) {
		c->stats.drops[DROP_BAD_CHECKSUM]++;
		return;
	}
	/* Neighbour discovery answers from the main thread's state. */
	if (p->v6 && p->l4[0] >= ND_ROUTER_SOLICIT && p->l4[0] <= ND_REDIRECT &&
	    thread_pass_to_main(c))
		return;
	c->stats.to_host[PROTO_ICMP].packets++;
	c->stats.to_host[PROTO_ICMP].bytes += p->l4len;
	if (p->v6 && ndp_input(c, p))
		return;
	if (p->l4[0] != echo) {
		c->stats.drops[DROP_UNKNOWN_PROTO]++;
		return;
	}
	/* pasta's --no-icmp: echo only; NDP above still answers. */
	if (c->o->pasta && c->o->pasta->no_icmp) {
		c->stats.drops[DROP_NO_ROUTE]++;
		return;
	}
	/* fe80::2 is ours in every addressing: the source of our adverts. */
	if (ip_is_gateway(c, &p->dst) || ip_is_dns(c, &p->dst) ||
	    (p->v6 && inany_equal(&p->dst, &ndp_router_ll)))
		icmp_echo_local(c, p);
	else
		ping_forward(c, p);
}
