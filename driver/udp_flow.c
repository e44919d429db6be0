// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - UDP flow table: hash lookup, LRU order, idle expiry */

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>

#include "clock.h"
#include "seed.h"
#include "inany.h"
#include "log.h"
#include "udp_flow.h"

/**
 * udp_now() - coarse monotonic clock for idle timeouts
 *
 * Return: seconds since an arbitrary point
 */
uint64_t udp_now(void)
{
	return clock_s();
}

/**
 * mix() - fold 32 bits into a running hash
 * @h:		hash so far
 * @w:		word
 *
 * Return: the new hash
 */
static uint64_t mix(uint64_t h, uint32_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/**
 * flow_hash() - bucket of a key
 * @s:		table, for the seed
 * @k:		key
 *
 * Return: bucket index
 */
static unsigned int flow_hash(const struct udp_state *s,
                              const struct udp_flow_key *k)
{
	uint32_t w[9];
	uint64_t h = s->seed;

	memcpy(w, &k->gaddr, 16);
	memcpy(w + 4, &k->faddr, 16);
	w[8] = (uint32_t)k->gport << 16 | k->fport;
	for (int i = 0; i < 9; i++)
		h = mix(h, w[i]);
	return (unsigned int)(h % UDP_HASH_BUCKETS);
}

/**
 * peer_hash() - hash of a host peer on a listener
 * @s:		table, for the seed
 * @lfd:	listener
 * @peer:	host peer
 *
 * Return: the hash, for a bucket and for the peer's far ports
 */
static uint64_t peer_hash(const struct udp_state *s, int lfd,
                          const union sockaddr_inany *peer)
{
	uint32_t w[6] = {0};
	uint64_t h = mix(s->seed, (uint32_t)lfd);

	if (peer->sa.sa_family == AF_INET) {
		w[0] = peer->sa4.sin_port;
		memcpy(w + 1, &peer->sa4.sin_addr, 4);
	} else {
		w[0] = 1U << 16 | peer->sa6.sin6_port;
		memcpy(w + 1, &peer->sa6.sin6_addr, 16);
		w[5] = peer->sa6.sin6_scope_id;
	}
	for (int i = 0; i < 6; i++)
		h = mix(h, w[i]);
	return h;
}

/**
 * peer_equal() - compare two host peers
 * @a:		one
 * @b:		other
 *
 * Return: true on equal family, address, port (and IPv6 scope)
 */
static bool peer_equal(const union sockaddr_inany *a,
                       const union sockaddr_inany *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET)
		return a->sa4.sin_port == b->sa4.sin_port &&
		       a->sa4.sin_addr.s_addr == b->sa4.sin_addr.s_addr;
	return a->sa6.sin6_port == b->sa6.sin6_port &&
	       a->sa6.sin6_scope_id == b->sa6.sin6_scope_id &&
	       inany_equal(&a->sa6.sin6_addr, &b->sa6.sin6_addr);
}

/**
 * key_equal() - compare two keys
 * @a:		one
 * @b:		other
 *
 * Return: true if equal
 */
static bool key_equal(const struct udp_flow_key *a,
                      const struct udp_flow_key *b)
{
	return a->gport == b->gport && a->fport == b->fport &&
	       !memcmp(&a->gaddr, &b->gaddr, 16) &&
	       !memcmp(&a->faddr, &b->faddr, 16);
}

/**
 * flow_timeout() - idle seconds after which a flow ends
 * @f:		flow
 *
 * Return: the timeout
 */
static uint64_t flow_timeout(const struct udp_flow *f)
{
	if (f->dns)
		return UDP_TIMEOUT_DNS;
	return f->from_guest && f->from_host ? UDP_TIMEOUT_STREAM : UDP_TIMEOUT;
}

/**
 * lru_unlink() - take a flow out of the LRU list
 * @s:		table
 * @f:		flow
 */
static void lru_unlink(struct udp_state *s, struct udp_flow *f)
{
	if (f->lprev)
		f->lprev->lnext = f->lnext;
	else
		s->lru_head = f->lnext;
	if (f->lnext)
		f->lnext->lprev = f->lprev;
	else
		s->lru_tail = f->lprev;
	f->lprev = f->lnext = NULL;
}

/**
 * lru_append() - make a flow the most recently used
 * @s:		table
 * @f:		flow, not in the list
 */
static void lru_append(struct udp_state *s, struct udp_flow *f)
{
	f->lprev = s->lru_tail;
	f->lnext = NULL;
	if (s->lru_tail)
		s->lru_tail->lnext = f;
	else
		s->lru_head = f;
	s->lru_tail = f;
}

/**
 * udp_flow_lookup() - find a flow
 * @s:		table
 * @k:		key
 *
 * Return: the flow, or NULL
 */
struct udp_flow *udp_flow_lookup(struct udp_state *s,
                                 const struct udp_flow_key *k)
{
	struct udp_flow *f = s->bucket[flow_hash(s, k)];

	while (f && !key_equal(&f->key, k))
		f = f->hnext;
	return f;
}

/**
 * udp_flow_lookup_peer() - find the inbound flow of a host peer
 * @s:		table
 * @lfd:	port-forward listener the peer sent to
 * @peer:	host peer
 *
 * The guest-visible key can't tell host peers apart (see
 * udp_flow_add_inbound()): the host side looks its flows up by this.
 *
 * Return: the flow, or NULL
 */
struct udp_flow *udp_flow_lookup_peer(struct udp_state *s, int lfd,
                                      const union sockaddr_inany *peer)
{
	uint64_t h = peer_hash(s, lfd, peer);
	struct udp_flow *f = s->peer_bucket[h % UDP_HASH_BUCKETS];

	while (f && (f->fd != lfd || !peer_equal(&f->peer, peer)))
		f = f->pnext;
	return f;
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
	f->last = udp_now();
	if (s->lru_tail != f) {
		lru_unlink(s, f);
		lru_append(s, f);
	}
}

/**
 * udp_flow_free() - remove a flow, closing its socket if it owns one
 * @c:		context
 * @f:		flow
 */
void udp_flow_free(struct ctx *c, struct udp_flow *f)
{
	struct udp_state *s = c->udp;
	struct udp_flow **pp = &s->bucket[flow_hash(s, &f->key)];

	while (*pp && *pp != f)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = f->hnext;
	if (f->inbound) {
		pp = &s->peer_bucket[peer_hash(s, f->fd, &f->peer) %
		                     UDP_HASH_BUCKETS];
		while (*pp && *pp != f)
			pp = &(*pp)->pnext;
		if (*pp)
			*pp = f->pnext;
	}
	lru_unlink(s, f);
	if (f->ev)
		event_free(f->ev);
	if (f->own_fd && f->fd >= 0)
		close(f->fd);
	c->stats.flows[f->dns ? PROTO_DNS : PROTO_UDP]--;
	s->n--;
	/* Left running, the sweep only wakes up once a second for nothing. */
	if (!s->n && s->timer && evtimer_del(s->timer))
		debug_msg("udp: stop the expiry timer: libevent failed");
	free(f);
}

/**
 * make_room() - evict the least recently used flow if the table is full
 * @c:		context
 *
 * A flow used within the last second is kept: a guest opening flows that
 * fast gets DROP_FLOW_LIMIT rather than churning live ones.
 *
 * Return: true if a new flow fits
 */
static bool make_room(struct ctx *c)
{
	struct udp_state *s = c->udp;

	if (s->n < UDP_FLOW_MAX)
		return true;
	if (!s->lru_head || udp_now() - s->lru_head->last < 1)
		return false;
	udp_flow_free(c, s->lru_head);
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
 * Return: the flow with @fd -1, or NULL if the table is full, out of
 *	   memory or the sweep could not start
 */
struct udp_flow *udp_flow_add(struct ctx *c, const struct udp_flow_key *k,
                              bool dns)
{
	const struct timeval one = {1, 0};
	static struct log_limit limit;
	struct udp_state *s = c->udp;
	struct udp_flow *f;
	unsigned int h;

	if (!make_room(c))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (!s->n && evtimer_add(s->timer, &one)) {
		err_limited(&limit, 0,
		            "udp: start the flow expiry timer: libevent "
		            "failed, dropping the new flow");
		free(f);
		return NULL;
	}
	f->key = *k;
	f->c = c;
	f->fd = -1;
	f->dns = dns;
	f->last = udp_now();
	h = flow_hash(s, k);
	f->hnext = s->bucket[h];
	s->bucket[h] = f;
	lru_append(s, f);
	s->n++;
	c->stats.flows[dns ? PROTO_DNS : PROTO_UDP]++;
	return f;
}

/**
 * inbound_fport() - make an inbound key unique, as a NAT would
 * @s:		table
 * @k:		key with the peer's own port as far port; changed if taken
 * @h:		peer_hash() of the peer: where its sequence of ports starts
 *
 * Host peers can look alike to the guest: every loopback peer appears as
 * the gateway, and so does an IPv6 peer of an IPv4 guest. Sharing one
 * flow, the guest's replies would all reach the first of them; so a later
 * one gets another far port. The search is bounded, and the same for the
 * same peer.
 *
 * Return: 0 if no flow has @k now, -1 if every candidate was taken
 */
static int inbound_fport(struct udp_state *s, struct udp_flow_key *k,
                         uint64_t h)
{
	unsigned int start = (unsigned int)((h >> 32) % UDP_REMAP_PORTS);

	if (!udp_flow_lookup(s, k))
		return 0;
	for (unsigned int i = 0; i < UDP_REMAP_TRIES; i++) {
		k->fport = (uint16_t)(UDP_REMAP_BASE +
		                      (start + i) % UDP_REMAP_PORTS);
		if (!udp_flow_lookup(s, k))
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
struct udp_flow *udp_flow_add_inbound(struct ctx *c, struct udp_flow_key *k,
                                      int lfd, const union sockaddr_inany *peer)
{
	struct udp_state *s = c->udp;
	uint64_t h = peer_hash(s, lfd, peer);
	struct udp_flow *f;

	if (inbound_fport(s, k, h))
		return NULL;
	f = udp_flow_add(c, k, false);
	if (!f)
		return NULL;
	f->fd = lfd;
	f->inbound = true;
	f->peer = *peer;
	f->peerlen = peer->sa.sa_family == AF_INET ? sizeof(peer->sa4)
	                                           : sizeof(peer->sa6);
	f->pnext = s->peer_bucket[h % UDP_HASH_BUCKETS];
	s->peer_bucket[h % UDP_HASH_BUCKETS] = f;
	return f;
}

/**
 * udp_flow_expire() - end flows idle past their timeout
 * @c:		context
 * @now:	current udp_now()
 *
 * Walks from the least recently used flow and stops at the first one idle
 * for less than the shortest timeout: every later flow is younger.
 */
void udp_flow_expire(struct ctx *c, uint64_t now)
{
	struct udp_flow *f = c->udp->lru_head;

	while (f && now - f->last >= UDP_TIMEOUT_DNS) {
		struct udp_flow *next = f->lnext;

		if (now - f->last >= flow_timeout(f))
			udp_flow_free(c, f);
		f = next;
	}
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
	udp_flow_expire(arg, udp_now());
}

/**
 * udp_flow_table_init() - allocate the flow table and its expiry timer
 * @c:		context with its event base
 *
 * Return: 0 on success, -1 after printing one error line
 */
int udp_flow_table_init(struct ctx *c)
{
	struct udp_state *s = calloc(1, sizeof(*s));

	if (!s) {
		err_msg("udp: out of memory for the flow table");
		return -1;
	}
	s->seed = seed_u64();
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
 * udp_flow_table_cleanup() - free every flow and the table
 * @c:		context
 */
void udp_flow_table_cleanup(struct ctx *c)
{
	struct udp_state *s = c->udp;

	if (!s)
		return;
	while (s->lru_head)
		udp_flow_free(c, s->lru_head);
	event_free(s->timer);
	free(s);
	c->udp = NULL;
}
