// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - datapath threads: which thread opens a new TCP connection
 *
 * New TCP connections are placed, not left to tun's hash (which puts 3 or
 * 4 of 4 flows on one of 2 queues half the time): a guest SYN and a
 * connection accepted on a forward go to the thread with the fewest TCP
 * connections, ties in turn. The placement takes the connection's key in
 * the owner table for that thread before handing it over (flow_owner.c),
 * so a retransmitted SYN follows its first copy, and a host client whose
 * connection would look to the guest like one that exists (every loopback
 * client appears as the gateway) is refused, whichever thread has the
 * other one. Once the owner wrote a frame of the flow, tun steers the
 * guest's next ones to its queue.
 */

#include <limits.h>

#include "driver/flow/flow_owner.h"
#include "driver/flow/fwd.h"
#include "driver/tcp/tcp.h"
#include "driver/thread/thread_internal.h"

/**
 * pick_thread() - the thread a new TCP connection goes to: the one with
 *		   the fewest, ties in turn
 * @set:	threads
 *
 * The pick counts at once in the thread's load, so that a burst of
 * placements spreads before the first is opened; the thread takes it
 * over with place_begin() and place_end(). It looks at each thread, at
 * most TAPIR_MAX_QUEUES, whatever the connections they hold: their loads
 * are counters, kept as connections come and go (thread_count_tcp()).
 *
 * Return: the thread's index
 */
static unsigned int pick_thread(struct thread_set *set)
{
	unsigned int best = 0, min = UINT_MAX;

	pthread_mutex_lock(&set->place_lock);
	for (unsigned int i = 1; i <= set->n; i++) {
		unsigned int t = (set->last_pick + i) % set->n;
		unsigned int load =
		        __atomic_load_n(&set->t[t].load, __ATOMIC_RELAXED);

		if (load < min) {
			min = load;
			best = t;
		}
	}
	set->last_pick = best;
	__atomic_add_fetch(&set->t[best].load, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&set->place_lock);
	return best;
}

/**
 * unpick() - a connection counted on thread @i by pick_thread() goes
 *	      nowhere, or is opened at once by a thread that counts it then
 * @set:	threads
 * @i:		thread it was counted on
 */
static void unpick(struct thread_set *set, unsigned int i)
{
	__atomic_sub_fetch(&set->t[i].load, 1, __ATOMIC_RELAXED);
}

/**
 * load_move() - a connection counted on thread @from by pick_thread()
 *		 opens on @to instead
 * @set:	threads
 * @from:	thread it was counted on
 * @to:		thread that opens it
 */
static void load_move(struct thread_set *set, unsigned int from,
                      unsigned int to)
{
	unpick(set, from);
	__atomic_add_fetch(&set->t[to].load, 1, __ATOMIC_RELAXED);
}

/**
 * place_begin() - @c handles a connection placed on it: the next TCP
 *		   connection it opens is already in its load
 * @c:		context, threaded
 */
void place_begin(struct ctx *c)
{
	c->threads->t[c->thread].placing = true;
}

/**
 * place_done() - the SYN of a connection placed on @c was handled: if no
 *		  connection opened (the SYN met its connection, or was
 *		  refused), take its count back
 * @c:		context
 */
static void place_done(struct ctx *c)
{
	struct thread *t = &c->threads->t[c->thread];

	if (t->placing)
		unpick(c->threads, c->thread);
	t->placing = false;
}

/**
 * thread_place_done() - a guest SYN without a connection was handled here:
 *			 settle the count of a placement on this thread
 * @c:		context
 *
 * Called after the open was tried, whatever came of it, so that the pick's
 * count stays in the load until the connection counts itself: another
 * thread placing meanwhile sees it.
 */
void thread_place_done(struct ctx *c)
{
	if (c->threads)
		place_done(c);
}

/**
 * place_end() - done with a connection placed on @c by another thread:
 *		 its count, and its key if no connection opened with it
 * @c:		context, threaded
 * @k:		the connection's key
 */
void place_end(struct ctx *c, const struct flow_key *k)
{
	place_done(c);
	flow_owner_unplace(c->owners, k, c->thread);
}

/**
 * thread_count_tcp() - the TCP connections of @c changed: update the load
 *			placement sees
 * @c:		context
 * @n:		its TCP flows now
 *
 * One atomic add per change, and none for the placed connection being
 * opened, which pick_thread() counted: the load never shows it twice.
 */
void thread_count_tcp(struct ctx *c, unsigned int n)
{
	unsigned int old, delta;
	struct thread *t;

	if (!c->threads)
		return;
	t = &c->threads->t[c->thread];
	old = t->counted;
	t->counted = n;
	delta = n - old; /* modulo 2^32: a decrease adds its negative */
	if (t->placing && n > old) {
		delta--;
		t->placing = false;
	}
	if (delta)
		__atomic_add_fetch(&t->load, delta, __ATOMIC_RELAXED);
}

/**
 * place_syn() - a guest SYN that no thread has a connection for: pick the
 *		 thread that opens it
 * @c:		the reader's context
 * @k:		the connection's key, guest side
 *
 * If the pick's inbox is full, or FLOW_OWNER_PLACED_MAX connections wait
 * for it already, the connection opens at the reader rather than be
 * dropped (and that thread picked again, as the least busy).
 *
 * Return: true if the SYN was passed on (or dropped): stop handling it;
 *	   false: open the connection here
 */
bool place_syn(struct ctx *c, const struct flow_key *k)
{
	struct thread_set *set = c->threads;
	unsigned int to = pick_thread(set), holder;

	/* Opened here at once: the count stays until the connection counts
	 * itself (thread_place_done()).
	 */
	if (to == c->thread) {
		place_begin(c);
		return false;
	}
	switch (flow_owner_take(c->owners, k, to, true, &holder)) {
	case OWNER_TAKEN:
		if (handoff_try(c, to, HANDOFF_PLACED, k))
			return true;
		flow_owner_unplace(c->owners, k, to);
		load_move(set, to, c->thread);
		place_begin(c);
		return false;
	case OWNER_BUSY:
		/* As many wait for that thread as it may have: here. */
		load_move(set, to, c->thread);
		place_begin(c);
		return false;
	case OWNER_HELD:
		/* Another reader placed the same SYN just now. */
		unpick(set, to);
		if (holder == c->thread)
			return false;
		if (!handoff_try(c, holder, HANDOFF_OWNER, NULL))
			c->stats.drops[DROP_HANDOFF]++;
		return true;
	case OWNER_FULL:
		break;
	}
	unpick(set, to);
	c->stats.drops[DROP_FLOW_LIMIT]++;
	return true;
}

/**
 * accept_here() - open a forwarded connection to the guest on @c's thread
 * @c:		context
 * @fd:		accepted socket, TCP's or reset and closed here
 * @k:		the connection as the guest sees it: client address and
 *		port far, guest address and port
 */
static void accept_here(struct ctx *c, int fd, const struct flow_key *k)
{
	c->queue = c->thread;
	if (tcp_accept_inbound(c, fd, &k->faddr, k->fport, &k->gaddr,
	                       k->gport) < 0)
		fwd_reset_close(fd);
}

/**
 * place_accepted() - open a connection accepted on a forward and placed
 *		      on this thread
 * @c:		receiving context
 * @m:		MSG_ACCEPT; its fd is taken
 */
void place_accepted(struct ctx *c, struct msg *m)
{
	place_begin(c);
	accept_here(c, m->fd, &m->key);
	m->fd = -1;
	place_end(c, &m->key);
}

/**
 * thread_accept() - open a connection accepted on a forward to the guest,
 *		     on the thread placement picks
 * @c:		main context
 * @fd:		accepted socket, owned from here on
 * @src:	client as the guest will see it
 * @sport:	client port
 * @dst:	guest address
 * @dport:	guest port
 *
 * A client that would look to the guest like a connection it has already,
 * on any thread, is refused with a reset: that one is not touched.
 */
void thread_accept(struct ctx *c, int fd, const struct in6_addr *src,
                   uint16_t sport, const struct in6_addr *dst, uint16_t dport)
{
	struct thread_set *set = c->threads;
	unsigned int to, holder;
	enum owner_take take;
	struct flow_key k;
	struct msg *m;

	flow_key_guest(&k, FLOW_TCP, dst, dport, src, sport);
	if (!set) {
		accept_here(c, fd, &k);
		return;
	}
	to = pick_thread(set);
	take = flow_owner_take(c->owners, &k, to, true, &holder);
	if (take == OWNER_BUSY && to != c->thread) {
		/* As many wait for that thread as it may have: here. */
		load_move(set, to, c->thread);
		to = c->thread;
		take = flow_owner_take(c->owners, &k, to, true, &holder);
	}
	if (take != OWNER_TAKEN) {
		unpick(set, to);
		c->stats.drops[DROP_FLOW_LIMIT]++;
		fwd_reset_close(fd);
		return;
	}
	if (to != c->thread) {
		m = msg_new(MSG_ACCEPT, 0);
		if (m) {
			m->fd = fd;
			m->key = k;
			if (!inbox_post(&set->t[to], m))
				return;
		}
		/* Its inbox is full: here, rather than reset the client
		 * (and pick that thread again, as the least busy).
		 */
		flow_owner_unplace(c->owners, &k, to);
		load_move(set, to, c->thread);
		if (flow_owner_take(c->owners, &k, c->thread, true, &holder) !=
		    OWNER_TAKEN) {
			unpick(set, c->thread);
			c->stats.drops[DROP_FLOW_LIMIT]++;
			fwd_reset_close(fd);
			return;
		}
	}
	place_begin(c);
	accept_here(c, fd, &k);
	place_end(c, &k);
}
