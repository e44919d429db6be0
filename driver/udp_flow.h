/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - UDP flow table: hash lookup, LRU order, idle expiry
 */
#ifndef TAPIR_UDP_FLOW_H
#define TAPIR_UDP_FLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "ctx.h"
#include "fwd.h"

/* Flows at once; beyond that the least recently used idle one goes. */
#define UDP_FLOW_MAX 4096
#define UDP_HASH_BUCKETS 8192
/* Idle timeouts in seconds, as conntrack's udp_timeout{,_stream}. */
#define UDP_TIMEOUT 30
#define UDP_TIMEOUT_STREAM 120
#define UDP_TIMEOUT_DNS 10
/* IPv4 header with options, or IPv6 header, and the UDP header. */
#define UDP_QUOTE_MAX 128
/* Far ports for a host peer that would look like another to the guest:
 * a few, from a sequence per peer, in the IANA ephemeral range. */
#define UDP_REMAP_BASE 49152
#define UDP_REMAP_PORTS 16384
#define UDP_REMAP_TRIES 16

/**
 * struct udp_flow_key - a flow as the guest sees it
 * @gaddr:	guest address
 * @faddr:	far address the guest talks to (its destination), which is
 *		the source of every datagram of the flow to the guest
 * @gport:	guest port, host order
 * @fport:	far port, host order; for an inbound flow, the port the
 *		guest sees, which udp_flow_add_inbound() may have changed
 */
struct udp_flow_key {
	struct in6_addr gaddr;
	struct in6_addr faddr;
	uint16_t gport;
	uint16_t fport;
};

/**
 * struct udp_flow - one UDP flow and its host socket
 * @key:	lookup key
 * @c:		context, for the socket callback
 * @fd:		connected socket of an outbound flow, or the port-forward
 *		listener of an inbound one
 * @own_fd:	@fd belongs to the flow (outbound): close it at the end
 * @inbound:	started by a host peer on a port forward; also hashed by
 *		listener and @peer
 * @peer:	inbound: the host peer that guest replies are sent to
 * @peerlen:	inbound: length of @peer
 * @ev:		read event on an owned @fd, or NULL
 * @dns:	to the DNS forwarder: shorter timeout, counted as DNS
 * @from_guest:	the guest sent on it
 * @from_host:	the host side sent on it
 * @last:	monotonic second of the last datagram
 * @quote:	IP and UDP header of the guest's last datagram, to quote in
 *		ICMP errors
 * @quote_l3len: IP header bytes in @quote, 0 if nothing to quote
 * @hnext:	next in the hash bucket
 * @pnext:	inbound: next in the hash bucket by listener and peer
 * @lprev:	less recently used neighbour
 * @lnext:	more recently used neighbour
 */
struct udp_flow {
	struct udp_flow_key key;
	struct ctx *c;
	int fd;
	bool own_fd;
	bool inbound;
	union sockaddr_inany peer;
	socklen_t peerlen;
	struct event *ev;
	bool dns;
	bool from_guest;
	bool from_host;
	uint64_t last;
	uint8_t quote[UDP_QUOTE_MAX];
	size_t quote_l3len;
	struct udp_flow *hnext;
	struct udp_flow *pnext;
	struct udp_flow *lprev;
	struct udp_flow *lnext;
};

/**
 * struct udp_state - all UDP flows
 * @bucket:	hash chains by key
 * @peer_bucket: hash chains of inbound flows by listener and host peer
 * @lru_head:	least recently used flow
 * @lru_tail:	most recently used flow
 * @n:		flows in the table
 * @seed:	random hash seed, so the guest cannot aim at one chain
 * @timer:	1 s expiry sweep, pending while flows exist
 */
struct udp_state {
	struct udp_flow *bucket[UDP_HASH_BUCKETS];
	struct udp_flow *peer_bucket[UDP_HASH_BUCKETS];
	struct udp_flow *lru_head;
	struct udp_flow *lru_tail;
	unsigned int n;
	uint64_t seed;
	struct event *timer;
};

uint64_t udp_now(void);
int udp_flow_table_init(struct ctx *c);
void udp_flow_table_cleanup(struct ctx *c);
struct udp_flow *udp_flow_lookup(struct udp_state *s,
                                 const struct udp_flow_key *k);
struct udp_flow *udp_flow_add(struct ctx *c, const struct udp_flow_key *k,
                              bool dns);
struct udp_flow *udp_flow_lookup_peer(struct udp_state *s, int lfd,
                                      const union sockaddr_inany *peer);
struct udp_flow *udp_flow_add_inbound(struct ctx *c, struct udp_flow_key *k,
                                      int lfd,
                                      const union sockaddr_inany *peer);
void udp_flow_touch(struct udp_state *s, struct udp_flow *f, bool from_guest);
void udp_flow_free(struct ctx *c, struct udp_flow *f);
void udp_flow_expire(struct ctx *c, uint64_t now);

#endif /* TAPIR_UDP_FLOW_H */
