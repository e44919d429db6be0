/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - UDP flows in the flow table: two keys, LRU order, idle expiry
 */
#ifndef TAPIR_UDP_FLOW_H
#define TAPIR_UDP_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "driver/core/list.h"
#include "driver/core/ctx.h"
#include "driver/flow/flow.h"
#include "driver/flow/fwd.h"

/* Flows at once where the fd limit does not set more (flow_caps()); past
 * the ceiling the least recently used idle one goes.
 */
#define UDP_FLOW_MAX FLOW_UDP_MAX
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
 * struct udp_flow - one UDP flow and its host socket
 * @flow:	flow table part; its key is the flow as the guest sees it:
 *		guest address and port, and the far address and port the
 *		guest talks to, the source of every datagram to the guest.
 *		For an inbound flow, the far port is the one the guest sees,
 *		which udp_flow_add_inbound() may have changed, and the host
 *		key (listener, peer) finds it from the host side
 * @fd:		connected socket of an outbound flow, or the port-forward
 *		listener of an inbound one
 * @own_fd:	@fd belongs to the flow (outbound): close it at the end
 * @errqueue:	its owned @fd queues the host's errors (udp_err.c)
 * @inbound:	started by a host peer on a port forward; also hashed by
 *		listener and @peer
 * @peer:	inbound: the host peer that guest replies are sent to
 * @peerlen:	inbound: length of @peer
 * @ev:		read event on an owned @fd, or NULL
 * @dns:	to the DNS forwarder: shorter timeout, counted as DNS
 * @from_guest:	the guest sent on it
 * @from_host:	the host side sent on it
 * @last:	monotonic second of the last datagram
 * @rxq_ovfl:	its socket's drop count as last seen (SO_RXQ_OVFL)
 * @quote:	IP and UDP header of the guest's last datagram, to quote in
 *		ICMP errors (udp_err.c)
 * @quote_l3len: IP header bytes in @quote, 0 if nothing to quote
 * @lru:	its links in its class's recency list (@cls), least
 *		recently used first
 * @cls:	the list it is on: enum udp_class
 */
struct udp_flow {
	struct flow_common flow;
	int fd;
	bool own_fd;
	bool errqueue;
	bool inbound;
	union sockaddr_inany peer;
	socklen_t peerlen;
	struct event *ev;
	bool dns;
	bool from_guest;
	bool from_host;
	uint64_t last;
	uint32_t rxq_ovfl;
	uint8_t quote[UDP_QUOTE_MAX];
	size_t quote_l3len;
	struct list_node lru;
	uint8_t cls;
};

_Static_assert(sizeof(struct udp_flow) <= FLOW_ENTRY_SIZE,
               "a UDP flow fits a flow table entry");

/**
 * enum udp_class - flows by idle timeout, one recency list each, so that
 *		    the sweep stops at the first flow of each that is not
 *		    idle long enough
 * @UDP_CLASS_DNS:	to the DNS forwarder, UDP_TIMEOUT_DNS
 * @UDP_CLASS_ONE_WAY:	datagrams one way so far, UDP_TIMEOUT
 * @UDP_CLASS_STREAM:	datagrams both ways, UDP_TIMEOUT_STREAM
 * @UDP_CLASSES:	how many
 */
enum udp_class {
	UDP_CLASS_DNS,
	UDP_CLASS_ONE_WAY,
	UDP_CLASS_STREAM,
	UDP_CLASSES,
};

/**
 * struct udp_state - UDP state besides the flows in the flow table
 * @lru:	the flows of each class, least recently used first
 * @timer:	1 s expiry sweep, pending while flows exist
 * @bufs:	receive and send buffers (udp.c)
 */
struct udp_state {
	struct list lru[UDP_CLASSES];
	struct event *timer;
	struct udp_bufs *bufs;
};

/**
 * udp_flow_of() - the flow a recency-list node is inside
 * @n:		node, or NULL
 *
 * Return: the flow, or NULL for NULL
 */
static inline struct udp_flow *udp_flow_of(const struct list_node *n)
{
	return n ? (struct udp_flow *)((char *)n -
	                               offsetof(struct udp_flow, lru))
	         : NULL;
}

int udp_flow_table_init(struct ctx *c);
void udp_flow_table_cleanup(struct ctx *c);
struct udp_flow *udp_flow_lookup(const struct flow_table *t,
                                 const struct flow_key *k);
struct udp_flow *udp_flow_add(struct ctx *c, const struct flow_key *k,
                              bool dns);
struct udp_flow *udp_flow_lookup_peer(const struct flow_table *t, int lfd,
                                      const union sockaddr_inany *peer);
struct udp_flow *udp_flow_add_inbound(struct ctx *c, struct flow_key *k,
                                      int lfd,
                                      const union sockaddr_inany *peer);
void udp_flow_touch(struct udp_state *s, struct udp_flow *f, bool from_guest);
void udp_flow_free(struct ctx *c, struct udp_flow **fp);
struct udp_flow *udp_flow_next(const struct udp_state *s,
                               const struct udp_flow *f);
unsigned int udp_flow_expire(struct ctx *c, uint64_t now);

#endif /* TAPIR_UDP_FLOW_H */
