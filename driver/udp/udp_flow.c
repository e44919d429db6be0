// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - UDP flows in the flow table: two keys, LRU order, idle expiry */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/core/inany.h"
#include "driver/core/log.h"
#include "driver/flow/flow_owner.h"
#include "driver/udp/udp_flow.h"

/**
 * peer_key() - the flow table key of a host peer on a listener
 * @k:		filled
 * @lfd:	listener
 * @peer:	host peer
 *
 * The guest port field holds the peer's family, so that peers equal in
 * address and port but not in family stay apart.
 */
static void peer_key(struct flow_key *k, int lfd,
                     const union sockaddr_inany *peer)
{
	memset(k, 0, sizeof(*k));
	k->gport = peer->sa.sa_family;
	if (peer->sa.sa_family == AF_INET) {
		inany_from_v4(&k->faddr, peer->sa4.sin_addr);
		k->fport = ntohs(peer->sa4.sin_port);
	} else {
		k->faddr = peer->sa6.sin6_addr;
		k->fport = ntohs(peer->sa6.sin6_port);
		k->scope = peer->sa6.sin6_scope_id;
	}
	k->type = FLOW_UDP;
	k->side = FLOW_SIDE_HOST;
	k->disc = lfd;
}

/* Idle seconds after which a flow of each class ends. */
static const uint64_t class_timeout[UDP_CLASSES] = {
        [UDP_CLASS_DNS] = UDP_TIMEOUT_DNS,
        [UDP_CLASS_ONE_WAY] = UDP_TIMEOUT,
        [UDP_CLASS_STREAM] = UDP_TIMEOUT_STREAM,
};

/**
 * class_of() - the class a flow belongs to now, by its idle timeout
 * @f:		flow
 *
 * Return: enum udp_class
 */
static uint8_t class_of(const struct udp_flow *f)
{
	if (f->dns)
		return UDP_CLASS_DNS;
	return f->from_guest && f->from_host ? UDP_CLASS_STREAM
	                                     : UDP_CLASS_ONE_WAY;
}

/**
 * udp_flow_lookup() - find a flow
 * @t:		flow table
 * @k:		guest and far addresses and ports; the rest is ignored
 *
 * Return: the flow, or NULL
 */
struct udp_flow *udp_flow_lookup(const struct flow_table *t,
                                 const struct flow_key *k)
{
	struct flow_key key;

	flow_key_guest(&key, FLOW_UDP, &k->gaddr, k->gport, &k->faddr,
	               k->fport);
	/* The flow part is first: a UDP flow table entry is a udp_flow. */
	return (struct udp_flow *)flow_lookup(t, &key);
}

/**
 * udp_flow_lookup_peer() - find the inbound flow of a host peer
 * @t:		flow table
 * @lfd:	port-forward listener the peer sent to
 * @peer:	host peer
 *
 * The guest-visible key can't tell host peers apart (see
 * udp_flow_add_inbound()): the host side looks its flows up by this.
 *
 * Return: the flow, or NULL
 */
struct udp_flow *udp_flow_lookup_peer(const struct flow_table *t, int lfd,
                                      const union sockaddr_inany *peer)
{
	struct flow_key key;

	peer_key(&key, lfd, peer);
	return (struct udp_flow *)flow_lookup(t, &key);
}

/**
 * udp_flow_touch() - note a datagram on a flow
 * @s:		table
 * @f:		flow
 * @from_guest:	sent by the guest, rather than by the host side
 */
void udp_flow_touch(struct udp_state *s, struct udp_flow *f, bool from_guest)
{
	if (from_guest)
		f->from_guest = true;
	else
		f->from_host = true;
	f->last = clock_s();
	if (s->lru[f->cls].tail != &f->lru || f->cls != class_of(f)) {
		list_unlink(&s->lru[f->cls], &f->lru);
		f->cls = class_of(f);
		list_append(&s->lru[f->cls], &f->lru);
	}
}

/**
 * udp_flow_next() - walk every flow, class by class, for the few callers
 *		     that must see them all (a closed listener, cleanup)
 * @s:		table
 * @f:		the flow before, NULL for the first
 *
 * Return: the next flow, NULL after the last
 */
struct udp_flow *udp_flow_next(const struct udp_state *s,
                               const struct udp_flow *f)
{
	unsigned int k = f ? f->cls : 0;

	if (f && f->lru.next)
		return udp_flow_of(f->lru.next);
	for (k = f ? k + 1 : 0; k < UDP_CLASSES; k++)
		if (s->lru[k].head)
			return udp_flow_of(s->lru[k].head);
	return NULL;
}

/**
 * udp_flow_free() - remove a flow, closing its socket if it owns one
 * @c:		context
 * @fp:		flow; set to NULL
 */
void udp_flow_free(struct ctx *c, struct udp_flow **fp)
{
	struct flow_common *flow = &(*fp)->flow;
	struct udp_state *s = c->udp;
	struct udp_flow *f = *fp;

	list_unlink(&s->lru[f->cls], &f->lru);
	if (f->ev)
		event_free(f->ev);
	if (f->own_fd && f->fd >= 0)
		close(f->fd);
	c->stats.flows[f->dns ? PROTO_DNS : PROTO_UDP]--;
	*fp = NULL;
	flow_release(c->flows, &flow);
	/* Left running, the sweep only wakes up once a second for nothing. */
	if (!flow_count(c->flows, FLOW_UDP) && s->timer &&
	    evtimer_del(s->timer))
		debug_msg("udp: stop the expiry timer: libevent failed");
}

/**
 * make_room() - evict the least recently used flow if the table is full
 * @c:		context
 *
 * A flow used within the last second is kept: a guest opening flows that
 * fast gets DROP_FLOW_LIMIT rather than churning live ones. The least
 * recently used is the oldest of the classes' oldest.
 *
 * Return: true if a new flow fits
 */
static bool make_room(struct ctx *c)
{
	struct udp_flow *oldest = NULL;

	for (unsigned int k = 0; k < UDP_CLASSES; k++) {
		struct udp_flow *f = udp_flow_of(c->udp->lru[k].head);

		if (f && (!oldest || f->last < oldest->last))
			oldest = f;
	}

	if (!flow_full(c->flows, FLOW_UDP))
		return true;
	if (!oldest || clock_s() - oldest->last < 1)
		return false;
	udp_flow_free(c, &oldest);
	return true;
}

/**
 * udp_flow_add() - insert a new flow without a socket yet
 * @c:		context
 * @k:		key, not in the table
 * @dns:	a flow to the DNS forwarder
 *
 * The first flow starts the expiry sweep; without it no flow would ever
 * expire, so a flow that can't start it is not added.
 *
 * Return: the flow with @fd -1, or NULL with errno ENOSPC if the table
 *	   is full, ENOMEM if the sweep could not start, EEXIST if another
 *	   datapath thread has a flow with @k
 */
struct udp_flow *udp_flow_add(struct ctx *c, const struct flow_key *k, bool dns)
{
	const struct timeval one = {1, 0};
	static struct log_limit limit;
	struct udp_state *s = c->udp;
	struct flow_common *fc;
	struct udp_flow *f;
	int err;

	if (!make_room(c) || !(fc = flow_alloc(c->flows, FLOW_UDP))) {
		errno = ENOSPC;
		return NULL;
	}
	/* The sweep runs while flows exist: the first one starts it. */
	if (flow_count(c->flows, FLOW_UDP) == 1 &&
	    evtimer_add(s->timer, &one)) {
		err_limited(&limit, 0,
		            "udp: start the flow expiry timer: libevent "
		            "failed, dropping the new flow");
		flow_release(c->flows, &fc);
		errno = ENOMEM;
		return NULL;
	}
	f = (struct udp_flow *)fc;
	flow_key_guest(&f->flow.key, FLOW_UDP, &k->gaddr, k->gport, &k->faddr,
	               k->fport);
	if (flow_hash_owned(c->flows, &f->flow)) {
		err = errno;
		flow_release(c->flows, &fc);
		errno = err;
		return NULL;
	}
	f->fd = -1;
	f->dns = dns;
	f->last = clock_s();
	f->cls = class_of(f);
	list_append(&s->lru[f->cls], &f->lru);
	c->stats.flows[dns ? PROTO_DNS : PROTO_UDP]++;
	return f;
}

/**
 * key_taken() - whether a flow of this table, or of another datapath
 *		 thread, has the guest-side key @k
 * @t:		flow table
 * @k:		key (addresses and ports)
 *
 * Return: true if so
 */
static bool key_taken(const struct flow_table *t, const struct flow_key *k)
{
	struct flow_key key;

	if (udp_flow_lookup(t, k))
		return true;
	flow_key_guest(&key, FLOW_UDP, &k->gaddr, k->gport, &k->faddr,
	               k->fport);
	return t->c && flow_owner_elsewhere(t->c, &key);
}

/**
 * inbound_fport() - make an inbound key unique, as a NAT would
 * @t:		flow table
 * @k:		key with the peer's own port as far port; changed if taken
 * @h:		flow_key_hash() of the peer's key: where its sequence of
 *		ports starts
 *
 * Host peers can look alike to the guest, and to a flow the guest opened
 * on any thread: every loopback peer appears as the gateway, and so does
 * an IPv6 peer of an IPv4 guest. Sharing one
 * flow, the guest's replies would all reach the first of them; so a later
 * one gets another far port. The search is bounded, and the same for the
 * same peer.
 *
 * Return: 0 if no flow has @k now, -1 if every candidate was taken
 */
static int inbound_fport(const struct flow_table *t, struct flow_key *k,
                         uint64_t h)
{
	unsigned int start = (unsigned int)((h >> 32) % UDP_REMAP_PORTS);

	if (!key_taken(t, k))
		return 0;
	for (unsigned int i = 0; i < UDP_REMAP_TRIES; i++) {
		k->fport = (uint16_t)(UDP_REMAP_BASE +
		                      (start + i) % UDP_REMAP_PORTS);
		if (!key_taken(t, k))
			return 0;
	}
	return -1;
}

/**
 * udp_flow_add_inbound() - insert the flow of a host peer on a port forward
 * @c:		context
 * @k:		key as the peer appears to the guest; its far port is
 *		changed if another flow has it (inbound_fport())
 * @lfd:	listener the peer sent to; guest replies leave from it
 * @peer:	host peer, without a flow on @lfd yet
 *
 * Return: the flow, or NULL if no far port is free, the table is full or
 *	   out of memory
 */
struct udp_flow *udp_flow_add_inbound(struct ctx *c, struct flow_key *k,
                                      int lfd, const union sockaddr_inany *peer)
{
	struct flow_key pk;
	struct udp_flow *f;

	peer_key(&pk, lfd, peer);
	if (inbound_fport(c->flows, k, flow_key_hash(c->flows, &pk)))
		return NULL;
	f = udp_flow_add(c, k, false);
	if (!f)
		return NULL;
	f->fd = lfd;
	f->inbound = true;
	f->peer = *peer;
	f->peerlen = peer->sa.sa_family == AF_INET ? sizeof(peer->sa4)
	                                           : sizeof(peer->sa6);
	f->flow.host_key = pk;
	flow_hash(c->flows, &f->flow, FLOW_SIDE_HOST);
	return f;
}

/**
 * udp_flow_expire() - end flows idle past their timeout
 * @c:		context
 * @now:	current clock_s()
 *
 * Each class's list walks from its least recently used flow and stops at
 * the first one idle for less than the class's timeout: every later flow
 * is younger. A sweep looks at the flows it ends and at most one more
 * per class, however many flows are held.
 *
 * Return: flows looked at, for tests
 */
unsigned int udp_flow_expire(struct ctx *c, uint64_t now)
{
	unsigned int looked = 0;

	for (unsigned int k = 0; k < UDP_CLASSES; k++) {
		struct udp_flow *f;

		while ((f = udp_flow_of(c->udp->lru[k].head))) {
			looked++;
			if (now - f->last < class_timeout[k])
				break;
			udp_flow_free(c, &f);
		}
	}
	return looked;
}

/**
 * expire_cb() - the 1 s sweep timer
 * @fd:		unused
 * @what:	unused
 * @arg:	struct ctx
 */
static void expire_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	udp_flow_expire(arg, clock_s());
}

/**
 * udp_flow_table_init() - allocate the UDP state and its expiry timer
 * @c:		context with its event base and flow table
 *
 * Return: 0 on success, -1 after printing one error line
 */
int udp_flow_table_init(struct ctx *c)
{
	struct udp_state *s = calloc(1, sizeof(*s));

	if (!s) {
		err_msg("udp: out of memory for the UDP state");
		return -1;
	}
	s->timer = event_new(c->base, -1, EV_PERSIST, expire_cb, c);
	if (!s->timer) {
		err_msg("udp: create expiry timer: libevent failed");
		free(s);
		return -1;
	}
	c->udp = s;
	return 0;
}

/**
 * udp_flow_table_cleanup() - free every UDP flow and the UDP state
 * @c:		context
 */
void udp_flow_table_cleanup(struct ctx *c)
{
	struct udp_state *s = c->udp;

	if (!s)
		return;
	for (struct udp_flow *f; (f = udp_flow_next(s, NULL));)
		udp_flow_free(c, &f);
	event_free(s->timer);
	free(s);
	c->udp = NULL;
}
