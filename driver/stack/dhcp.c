// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - DHCP server for guests that ask (leases from net+15) */

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "driver/core/clock.h"
#include "driver/stack/csum.h"
#include "driver/stack/dhcp.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/core/log.h"
#include "driver/core/opts.h"

#define DHCP_SERVER_PORT 67
#define DHCP_CLIENT_PORT 68
/* op .. file of the BOOTP header, then the magic cookie (RFC 2131 2). */
#define BOOTP_HDR_LEN 236
#define DHCP_OPTS_OFF 240
#define DHCP_MAGIC 0x63825363U
/* Replies are padded to the BOOTP minimum some old clients insist on. */
#define DHCP_REPLY_MIN 300
/* Room for pasta's -S, -H and --fqdn, one option each, at their longest. */
#define DHCP_REPLY_MAX 1200
/* As slirp4netns: 16 leases from net+15, handed out for a day. */
#define DHCP_LEASES 16
#define DHCP_FIRST_HOST 15
#define DHCP_LEASE_SEC 86400

enum dhcp_type {
	DHCPDISCOVER = 1,
	DHCPOFFER = 2,
	DHCPREQUEST = 3,
	DHCPDECLINE = 4,
	DHCPACK = 5,
	DHCPNAK = 6,
	DHCPRELEASE = 7,
	DHCPINFORM = 8,
};

enum dhcp_option {
	OPT_PAD = 0,
	OPT_SUBNET_MASK = 1,
	OPT_ROUTER = 3,
	OPT_DNS = 6,
	OPT_HOSTNAME = 12,
	OPT_MTU = 26,
	OPT_REQUESTED_ADDR = 50,
	OPT_LEASE_TIME = 51,
	OPT_MSG_TYPE = 53,
	OPT_SERVER_ID = 54,
	OPT_CLIENT_FQDN = 81,
	OPT_DOMAIN_SEARCH = 119,
	OPT_END = 255,
};

/**
 * struct dhcp_req - what a client's message says, validated
 * @type:		DHCP message type (option 53)
 * @xid:		transaction id, copied into the reply
 * @flags:		BOOTP flags as sent (network order)
 * @broadcast:		the client asked for broadcast replies
 * @ciaddr:		client address, 0 until it has one
 * @giaddr:		relay agent address
 * @chaddr:		client MAC
 * @has_req_addr:	option 50 was present
 * @req_addr:		requested address
 * @has_server_id:	option 54 was present
 * @server_id:		the server the client chose
 */
struct dhcp_req {
	uint8_t type;
	uint32_t xid;
	uint16_t flags;
	bool broadcast;
	struct in_addr ciaddr;
	struct in_addr giaddr;
	uint8_t chaddr[6];
	bool has_req_addr;
	struct in_addr req_addr;
	bool has_server_id;
	struct in_addr server_id;
};

/**
 * struct dhcp_lease - one of the addresses net+15 .. net+30
 * @used:	handed out (possibly expired since)
 * @mac:	the client holding it
 * @expires:	CLOCK_MONOTONIC seconds when it may go to another client
 */
struct dhcp_lease {
	bool used;
	uint8_t mac[6];
	time_t expires;
};

/**
 * struct dhcp_state - the lease table
 * @lease:	lease i is address net + DHCP_FIRST_HOST + i
 */
struct dhcp_state {
	struct dhcp_lease lease[DHCP_LEASES];
};

/**
 * dhcp_option_addr() - read a 4-byte address option
 * @val:	option value
 * @len:	its length
 * @has:	set on success
 * @addr:	filled on success
 *
 * Return: 0 on success, -1 if the length is not 4
 */
static int dhcp_option_addr(const uint8_t *val, size_t len, bool *has,
                            struct in_addr *addr)
{
	if (len != 4)
		return -1;
	memcpy(addr, val, 4);
	*has = true;
	return 0;
}

/**
 * dhcp_parse_option() - record one option the server cares about
 * @tag:	option code
 * @val:	its value
 * @len:	its length, already checked to lie within the message
 * @out:	request being filled
 *
 * Return: 0 if the option is well-formed or ignored, -1 if malformed
 */
static int dhcp_parse_option(uint8_t tag, const uint8_t *val, size_t len,
                             struct dhcp_req *out)
{
	switch (tag) {
	case OPT_MSG_TYPE:
		if (len != 1 || !val[0])
			return -1;
		out->type = val[0];
		return 0;
	case OPT_REQUESTED_ADDR:
		return dhcp_option_addr(val, len, &out->has_req_addr,
		                        &out->req_addr);
	case OPT_SERVER_ID:
		return dhcp_option_addr(val, len, &out->has_server_id,
		                        &out->server_id);
	default:
		return 0;
	}
}

/**
 * dhcp_parse() - validate a BOOTP/DHCP request from a client
 * @msg:	UDP payload
 * @len:	its length
 * @out:	filled on success
 *
 * Options may end at the end of the message without an END option, as
 * some clients send them; bytes after END are ignored. Options in the
 * sname and file fields (option overload) are not looked at.
 *
 * Return: 0 if @msg is a well-formed DHCP request with a message type,
 *	   -1 otherwise
 */
static int dhcp_parse(const uint8_t *msg, size_t len, struct dhcp_req *out)
{
	size_t off = DHCP_OPTS_OFF;
	uint32_t magic;

	memset(out, 0, sizeof(*out));
	if (len < DHCP_OPTS_OFF)
		return -1;
	/* BOOTREQUEST over Ethernet, with 6-byte hardware addresses. */
	if (msg[0] != 1 || msg[1] != 1 || msg[2] != 6)
		return -1;
	memcpy(&magic, msg + BOOTP_HDR_LEN, 4);
	if (ntohl(magic) != DHCP_MAGIC)
		return -1;
	memcpy(&out->xid, msg + 4, 4);
	memcpy(&out->flags, msg + 10, 2);
	out->broadcast = msg[10] & 0x80;
	memcpy(&out->ciaddr, msg + 12, 4);
	memcpy(&out->giaddr, msg + 24, 4);
	memcpy(out->chaddr, msg + 28, 6);
	while (off < len && msg[off] != OPT_END) {
		size_t olen;

		if (msg[off] == OPT_PAD) {
			off++;
			continue;
		}
		if (len - off < 2)
			return -1;
		olen = msg[off + 1];
		if (olen > len - off - 2)
			return -1;
		if (dhcp_parse_option(msg[off], msg + off + 2, olen, out))
			return -1;
		off += 2 + olen;
	}
	return out->type ? 0 : -1;
}

/**
 * lease_addr() - the address of lease @i
 * @c:		context, for the network
 * @i:		lease index
 *
 * Return: net + DHCP_FIRST_HOST + @i; in pasta's addressing, the guest's
 *	   address
 */
static struct in_addr lease_addr(const struct ctx *c, int i)
{
	struct in_addr a = {
	        htonl(ntohl(c->o->net.s_addr) + DHCP_FIRST_HOST + (uint32_t)i)};

	return c->o->pasta_net ? c->guest4 : a;
}

/**
 * pool_size() - how many leases there are
 * @c:		context
 *
 * Return: DHCP_LEASES; in pasta's addressing 1, the guest's own address
 *	   (-a, or the host's), which pasta offers and -t forwards reach
 */
static int pool_size(const struct ctx *c)
{
	return c->o->pasta_net ? 1 : DHCP_LEASES;
}

/**
 * lease_index() - which lease @addr is
 * @c:		context
 * @addr:	address
 *
 * Return: the index, or -1 if @addr is not one of ours
 */
static int lease_index(const struct ctx *c, struct in_addr addr)
{
	uint32_t off = ntohl(addr.s_addr) - ntohl(c->o->net.s_addr);

	if (c->o->pasta_net)
		return addr.s_addr == c->guest4.s_addr ? 0 : -1;
	if (off < DHCP_FIRST_HOST || off >= DHCP_FIRST_HOST + DHCP_LEASES)
		return -1;
	return (int)(off - DHCP_FIRST_HOST);
}

/**
 * lease_free_for() - whether lease @i may go to @mac
 * @s:		state
 * @i:		lease index
 * @mac:	client
 * @now:	current time
 *
 * Return: true if it is unused, expired or already @mac's
 */
static bool lease_free_for(const struct dhcp_state *s, int i,
                           const uint8_t *mac, time_t now)
{
	const struct dhcp_lease *l = &s->lease[i];

	return !l->used || l->expires <= now || !memcmp(l->mac, mac, 6);
}

/**
 * lease_of() - the lease a client holds
 * @s:		state
 * @mac:	client
 * @now:	current time
 *
 * Return: its index, or -1
 */
static int lease_of(const struct dhcp_state *s, const uint8_t *mac, time_t now)
{
	for (int i = 0; i < DHCP_LEASES; i++)
		if (s->lease[i].used && s->lease[i].expires > now &&
		    !memcmp(s->lease[i].mac, mac, 6))
			return i;
	return -1;
}

/**
 * lease_pick() - choose the lease to offer a client
 * @c:		context
 * @req:	its DISCOVER
 * @now:	current time
 *
 * Return: the client's current lease, else the address it asked for if
 *	   free, else the first free lease; -1 if all are taken
 */
static int lease_pick(const struct ctx *c, const struct dhcp_req *req,
                      time_t now)
{
	const struct dhcp_state *s = c->dhcp;
	int i = lease_of(s, req->chaddr, now);

	if (i >= 0)
		return i;
	if (req->has_req_addr) {
		i = lease_index(c, req->req_addr);
		if (i >= 0 && lease_free_for(s, i, req->chaddr, now))
			return i;
	}
	for (i = 0; i < pool_size(c); i++)
		if (lease_free_for(s, i, req->chaddr, now))
			return i;
	return -1;
}

/**
 * lease_bind() - give lease @i to @mac for DHCP_LEASE_SEC
 * @s:		state
 * @i:		lease index
 * @mac:	client
 * @now:	current time
 */
static void lease_bind(struct dhcp_state *s, int i, const uint8_t *mac,
                       time_t now)
{
	for (int j = 0; j < DHCP_LEASES; j++)
		if (j != i && s->lease[j].used &&
		    !memcmp(s->lease[j].mac, mac, 6))
			s->lease[j].used = false;
	s->lease[i].used = true;
	memcpy(s->lease[i].mac, mac, 6);
	s->lease[i].expires = now + DHCP_LEASE_SEC;
}

/**
 * put_opt() - append one option to a reply
 * @buf:	reply
 * @off:	offset of the option; advanced past it
 * @tag:	option code
 * @val:	value
 * @len:	value length
 */
static void put_opt(uint8_t *buf, size_t *off, uint8_t tag, const void *val,
                    uint8_t len)
{
	buf[(*off)++] = tag;
	buf[(*off)++] = len;
	memcpy(buf + *off, val, len);
	*off += len;
}

/**
 * put_pasta_opts() - what pasta's -D, -S, -H and --fqdn add to a reply
 * @c:		context in pasta mode
 * @buf:	reply
 * @off:	offset of the next option; advanced past what is added
 *
 * pasta names DNS servers (its -D ones, else the --dns-forward address)
 * only with --dhcp-dns, and search domains only with --dhcp-search.
 */
static void put_pasta_opts(const struct ctx *c, uint8_t *buf, size_t *off)
{
	const struct pasta_opts *po = c->o->pasta;
	uint8_t fqdn[3 + sizeof(po->fqdn)] = {0x04, 255, 255};

	if (po->dhcp_dns && !po->dns_none && po->n_dns4)
		put_opt(buf, off, OPT_DNS, po->dns4,
		        (uint8_t)(po->n_dns4 * sizeof(po->dns4[0])));
	else if (po->dhcp_dns && !po->dns_none && !c->o->disable_dns &&
	         c->dns4.s_addr)
		put_opt(buf, off, OPT_DNS, &c->dns4, 4);
	if (po->dhcp_search && po->search_len)
		put_opt(buf, off, OPT_DOMAIN_SEARCH, po->search,
		        (uint8_t)po->search_len);
	if (po->hostname[0])
		put_opt(buf, off, OPT_HOSTNAME, po->hostname,
		        (uint8_t)strlen(po->hostname));
	/* RFC 4702: the name in DNS's encoding (E), rcodes 255. */
	if (po->fqdn_len) {
		memcpy(fqdn + 3, po->fqdn, po->fqdn_len);
		put_opt(buf, off, OPT_CLIENT_FQDN, fqdn,
		        (uint8_t)(3 + po->fqdn_len));
	}
}

/**
 * dhcp_build_reply() - build an OFFER, ACK or NAK for a request
 * @c:		context, for the addresses and the MTU
 * @req:	the request
 * @type:	DHCPOFFER, DHCPACK or DHCPNAK
 * @yiaddr:	address handed out (ignored for a NAK)
 * @buf:	at least DHCP_REPLY_MAX bytes
 *
 * Return: length of the BOOTP message
 */
static size_t dhcp_build_reply(const struct ctx *c, const struct dhcp_req *req,
                               uint8_t type, struct in_addr yiaddr,
                               uint8_t *buf)
{
	uint32_t magic = htonl(DHCP_MAGIC), lease = htonl(DHCP_LEASE_SEC);
	uint16_t mtu = htons((uint16_t)c->tap.mtu);
	size_t off = DHCP_OPTS_OFF;

	memset(buf, 0, DHCP_REPLY_MAX);
	buf[0] = 2; /* BOOTREPLY */
	buf[1] = 1;
	buf[2] = 6;
	memcpy(buf + 4, &req->xid, 4);
	memcpy(buf + 10, &req->flags, 2);
	if (type != DHCPNAK) {
		memcpy(buf + 12, &req->ciaddr, 4);
		memcpy(buf + 16, &yiaddr, 4);
	}
	memcpy(buf + 24, &req->giaddr, 4);
	memcpy(buf + 28, req->chaddr, 6);
	memcpy(buf + BOOTP_HDR_LEN, &magic, 4);
	put_opt(buf, &off, OPT_MSG_TYPE, &type, 1);
	put_opt(buf, &off, OPT_SERVER_ID, &c->gw4, 4);
	if (type != DHCPNAK) {
		put_opt(buf, &off, OPT_LEASE_TIME, &lease, 4);
		put_opt(buf, &off, OPT_SUBNET_MASK, &c->mask4, 4);
		put_opt(buf, &off, OPT_ROUTER, &c->gw4, 4);
		if (c->o->pasta)
			put_pasta_opts(c, buf, &off);
		else if (!c->o->disable_dns)
			put_opt(buf, &off, OPT_DNS, &c->dns4, 4);
		put_opt(buf, &off, OPT_MTU, &mtu, 2);
	}
	buf[off++] = OPT_END;
	return off < DHCP_REPLY_MIN ? DHCP_REPLY_MIN : off;
}

/**
 * dhcp_send() - send a reply from gw4:67 to the client's port 68
 * @c:		context
 * @req:	the request answered
 * @type:	DHCPOFFER, DHCPACK or DHCPNAK
 * @yiaddr:	address handed out (ignored for a NAK)
 *
 * A client without an address (or that asked for it) can only receive
 * broadcasts; a renewing client gets its reply at its address. Either
 * way the frame goes to the client's MAC.
 */
static void dhcp_send(struct ctx *c, const struct dhcp_req *req, uint8_t type,
                      struct in_addr yiaddr)
{
	uint8_t msg[8 + DHCP_REPLY_MAX];
	struct in_addr to = {htonl(INADDR_BROADCAST)};
	size_t len = 8 + dhcp_build_reply(c, req, type, yiaddr, msg + 8);
	struct iovec iov = {msg, len};
	struct in6_addr src, dst;
	uint16_t ck;

	if (type != DHCPNAK && !req->broadcast && req->ciaddr.s_addr)
		to = req->ciaddr;
	inany_from_v4(&src, c->gw4);
	inany_from_v4(&dst, to);
	msg[0] = 0;
	msg[1] = DHCP_SERVER_PORT;
	msg[2] = 0;
	msg[3] = DHCP_CLIENT_PORT;
	msg[4] = (uint8_t)(len >> 8);
	msg[5] = (uint8_t)len;
	msg[6] = msg[7] = 0;
	ck = csum_fold(csum_add(ip_pseudo_csum(&src, &dst, IPPROTO_UDP, len),
	                        msg, len));
	/* 0 means "no checksum" in UDP; the same sum is sent as 0xffff. */
	if (!ck)
		ck = 0xffff;
	memcpy(msg + 6, &ck, 2);
	if (ip_output(c, &src, &dst, IPPROTO_UDP, &iov, 1, NULL))
		return;
	c->stats.to_guest[PROTO_UDP].packets++;
	c->stats.to_guest[PROTO_UDP].bytes += len - 8;
}

/**
 * dhcp_discover() - answer a DISCOVER with an OFFER
 * @c:		context
 * @req:	the request
 * @now:	current time
 */
static void dhcp_discover(struct ctx *c, const struct dhcp_req *req, time_t now)
{
	int i = lease_pick(c, req, now);

	if (i < 0) {
		c->stats.drops[DROP_FLOW_LIMIT]++;
		debug_msg("dhcp: no free lease for a new client");
		return;
	}
	/* Held from the offer on, so two clients are not offered one address. */
	lease_bind(c->dhcp, i, req->chaddr, now);
	dhcp_send(c, req, DHCPOFFER, lease_addr(c, i));
}

/**
 * dhcp_request() - answer a REQUEST with an ACK, or a NAK if it can't be had
 * @c:		context
 * @req:	the request
 * @now:	current time
 */
static void dhcp_request(struct ctx *c, const struct dhcp_req *req, time_t now)
{
	struct in_addr addr = req->has_req_addr ? req->req_addr : req->ciaddr;
	int i;

	/* The client chose another server's offer: nothing to say. */
	if (req->has_server_id && req->server_id.s_addr != c->gw4.s_addr) {
		c->stats.drops[DROP_NOT_FOR_US]++;
		return;
	}
	if (!addr.s_addr) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return;
	}
	i = lease_index(c, addr);
	if (i < 0 || !lease_free_for(c->dhcp, i, req->chaddr, now)) {
		dhcp_send(c, req, DHCPNAK, addr);
		return;
	}
	lease_bind(c->dhcp, i, req->chaddr, now);
	dhcp_send(c, req, DHCPACK, addr);
}

/**
 * dhcp_release() - free the lease a client gives back
 * @c:		context
 * @req:	the RELEASE
 * @now:	current time
 */
static void dhcp_release(struct ctx *c, const struct dhcp_req *req, time_t now)
{
	int i = lease_of(c->dhcp, req->chaddr, now);

	if (i >= 0 && lease_addr(c, i).s_addr == req->ciaddr.s_addr)
		c->dhcp->lease[i].used = false;
}

/**
 * dhcp_decline() - keep an address a client found in use out of the pool
 * @c:		context
 * @req:	the DECLINE
 * @now:	current time
 *
 * Otherwise the client's next DISCOVER would be offered the same address.
 */
static void dhcp_decline(struct ctx *c, const struct dhcp_req *req, time_t now)
{
	int i = req->has_req_addr ? lease_index(c, req->req_addr) : -1;
	struct dhcp_lease *l;

	if (i < 0 || lease_of(c->dhcp, req->chaddr, now) != i)
		return;
	l = &c->dhcp->lease[i];
	memset(l->mac, 0, sizeof(l->mac));
	l->expires = now + DHCP_LEASE_SEC;
}

/**
 * dhcp_for_us() - whether a UDP datagram to port 67 is meant for our server
 * @c:		context
 * @p:		IPv4 UDP packet
 *
 * Return: true for broadcasts and for the gateway address; a DHCP server
 *	   elsewhere is ordinary traffic
 */
static bool dhcp_for_us(const struct ctx *c, const struct pkt *p)
{
	uint32_t bcast = c->gw4.s_addr | ~c->mask4.s_addr;
	struct in_addr dst;
	uint16_t dport;

	if (p->v6 || p->l4len < 8)
		return false;
	dst = inany_v4(&p->dst);
	memcpy(&dport, p->l4 + 2, 2);
	if (ntohs(dport) != DHCP_SERVER_PORT)
		return false;
	return dst.s_addr == htonl(INADDR_BROADCAST) || dst.s_addr == bcast ||
	       dst.s_addr == c->gw4.s_addr;
}

/**
 * dhcp_udp_payload() - the payload of a UDP datagram, within its length field
 * @c:		context, for drop counters
 * @p:		IPv4 UDP packet, at least 8 bytes
 * @len:	filled with the payload length
 *
 * Return: the payload, or NULL after counting the drop
 */
static const uint8_t *dhcp_udp_payload(struct ctx *c, const struct pkt *p,
                                       size_t *len)
{
	uint16_t ulen;

	memcpy(&ulen, p->l4 + 4, 2);
	ulen = ntohs(ulen);
	if (ulen < 8 || ulen > p->l4len) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return NULL;
	}
	*len = ulen - 8u;
	return p->l4 + 8;
}

/**
 * dhcp_input() - serve a DHCP request from the guest
 * @c:		context
 * @p:		UDP packet from the guest, checksum verified by the caller
 *
 * Return: true if the datagram was for our DHCP server (answered or
 *	   dropped), false if the caller should forward it as usual
 */
bool dhcp_input(struct ctx *c, const struct pkt *p)
{
	struct dhcp_req req;
	const uint8_t *msg;
	time_t now;
	size_t len;

	if (!dhcp_for_us(c, p))
		return false;
	if (c->o->no_dhcp) {
		/* pasta's --no-dhcp: the guest was configured already. */
		c->stats.drops[DROP_NOT_FOR_US]++;
		return true;
	}
	if (!(msg = dhcp_udp_payload(c, p, &len)))
		return true;
	if (dhcp_parse(msg, len, &req)) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return true;
	}
	if (!c->dhcp && !(c->dhcp = calloc(1, sizeof(*c->dhcp)))) {
		c->stats.drops[DROP_SOCKET]++;
		return true;
	}
	c->stats.to_host[PROTO_UDP].packets++;
	c->stats.to_host[PROTO_UDP].bytes += len;
	now = (time_t)clock_s();
	switch (req.type) {
	case DHCPDISCOVER:
		dhcp_discover(c, &req, now);
		break;
	case DHCPREQUEST:
		dhcp_request(c, &req, now);
		break;
	case DHCPRELEASE:
		dhcp_release(c, &req, now);
		break;
	case DHCPDECLINE:
		dhcp_decline(c, &req, now);
		break;
	default:
		/* INFORM and server-to-server messages. */
		c->stats.drops[DROP_NOT_FOR_US]++;
	}
	return true;
}

/**
 * dhcp_cleanup() - free the lease table
 * @c:		context
 */
void dhcp_cleanup(struct ctx *c)
{
	free(c->dhcp);
	c->dhcp = NULL;
}
