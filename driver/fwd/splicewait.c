// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - connections of spliced forwards waiting for a namespace socket
 *
 * A burst of connections can empty the namespace socket pool faster than
 * its helper refills it. A client that finds the pool empty just after the
 * helper was asked for more waits here, in a queue, while the loop goes on:
 * the helper's reply splices it, in arrival order. One that has waited
 * NSSOCK_LATE_MS, or finds the helper late already, failed or gone, is
 * served without splicing (through the tap, by the caller's function)
 * rather than made to wait: nothing ever blocks on the helper, and a
 * stalled helper costs new clients nothing.
 */

#define _GNU_SOURCE
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/core/log.h"
#include "driver/host/nssock.h"
#include "driver/fwd/splice.h"
#include "driver/fwd/splicewait.h"

/**
 * struct waiter - a client waiting for a namespace socket
 * @fd:		its accepted socket
 * @peer:	its address
 * @dst:	the forward's guest_addr
 * @dport:	the forward's guest_port
 * @deadline:	CLOCK_MONOTONIC ns after which it is served unspliced
 */
struct waiter {
	int fd;
	union sockaddr_inany peer;
	struct in6_addr dst;
	uint16_t dport;
	long long deadline;
};

/**
 * struct splice_wait - the queue of waiting clients
 * @c:		context
 * @st:		spliced connections
 * @pool:	namespace socket pool
 * @unspliced:	serves a client that can't wait any more
 * @timer:	fires at the deadline of the first waiter
 * @q:		ring of waiters, oldest at @head
 * @head:	index of the oldest waiter in @q
 * @n:		waiters in @q
 */
struct splice_wait {
	struct ctx *c;
	struct splice_state *st;
	struct nssock_pool *pool;
	splice_unspliced_fn unspliced;
	struct event *timer;
	struct waiter q[SPLICE_WAIT_MAX];
	size_t head;
	size_t n;
};

/**
 * pop() - take the oldest waiter off the queue
 * @w:		queue, not empty
 *
 * Return: the waiter (a copy)
 */
static struct waiter pop(struct splice_wait *w)
{
	struct waiter wt = w->q[w->head];

	w->head = (w->head + 1) % SPLICE_WAIT_MAX;
	w->n--;
	return wt;
}

/**
 * serve_unspliced() - serve the oldest waiter without splicing
 * @w:		queue, not empty
 */
static void serve_unspliced(struct splice_wait *w)
{
	struct waiter wt = pop(w);

	w->unspliced(w->c, wt.fd, &wt.peer, &wt.dst, wt.dport);
}

/**
 * arm() - set the timer to the first waiter's deadline
 * @w:		queue, not empty
 *
 * Return: 0, or -1 if libevent failed (no waiter may stay then)
 */
static int arm(struct splice_wait *w)
{
	long long left = w->q[w->head].deadline - (long long)clock_ns();
	struct timeval tv = {0, 1000};

	if (left > 1000) {
		tv.tv_sec = (time_t)(left / 1000000000);
		tv.tv_usec = (suseconds_t)(left % 1000000000 / 1000);
	}
	return evtimer_add(w->timer, &tv) ? -1 : 0;
}

/**
 * drain() - splice waiters while sockets last; serve the rest unspliced
 *	     once they have waited long enough or no reply is coming
 * @w:		queue
 */
static void drain(struct splice_wait *w)
{
	static struct log_limit limit;

	while (w->n) {
		struct waiter *wt = &w->q[w->head];

		if ((long long)clock_ns() >= wt->deadline) {
			serve_unspliced(w);
			continue;
		}
		/* An empty pool asks the helper for more in there. */
		if (!splice_accept(w->st, wt->fd, &wt->dst, wt->dport)) {
			pop(w);
			continue;
		}
		if (nssock_expect_ms(w->pool) < 0) {
			serve_unspliced(w);
			continue;
		}
		break;
	}
	if (!w->n) {
		evtimer_del(w->timer);
		return;
	}
	if (!arm(w))
		return;
	err_limited(&limit, 0,
	            "splice: connections waiting for a namespace socket: "
	            "libevent failed, serving them unspliced");
	while (w->n)
		serve_unspliced(w);
}

/**
 * timer_cb() - the first waiter's deadline
 * @fd:		unused
 * @what:	unused
 * @arg:	struct splice_wait
 */
static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	drain(arg);
}

/**
 * pool_cb() - the helper answered (or failed): waiters may go on
 * @arg:	struct splice_wait
 */
static void pool_cb(void *arg)
{
	drain(arg);
}

/**
 * splice_wait_accept() - splice an accepted connection now, later, or not
 * @w:		queue
 * @fd:		accepted socket, consumed
 * @peer:	the client's address
 * @dst:	the forward's guest_addr
 * @dport:	the forward's guest_port
 *
 * Spliced at once if a namespace socket is ready and nobody waits before
 * it; made to wait if the helper was just asked for sockets; else served
 * unspliced at once.
 */
void splice_wait_accept(struct splice_wait *w, int fd,
                        const union sockaddr_inany *peer,
                        const struct in6_addr *dst, uint16_t dport)
{
	struct waiter *wt;

	if (!w->n && !splice_accept(w->st, fd, dst, dport))
		return;
	if (w->n == SPLICE_WAIT_MAX || nssock_expect_ms(w->pool) < 0) {
		w->unspliced(w->c, fd, peer, dst, dport);
		return;
	}
	wt = &w->q[(w->head + w->n++) % SPLICE_WAIT_MAX];
	wt->fd = fd;
	wt->peer = *peer;
	wt->dst = *dst;
	wt->dport = dport;
	wt->deadline = (long long)clock_ns() + NSSOCK_LATE_MS * 1000000LL;
	drain(w);
}

/**
 * splice_wait_new() - an empty queue, told by @pool when sockets come
 * @c:		context
 * @st:		spliced connections
 * @pool:	namespace socket pool
 * @unspliced:	serves a client that can't wait any more
 *
 * Return: the queue, or NULL on ENOMEM
 */
struct splice_wait *splice_wait_new(struct ctx *c, struct splice_state *st,
                                    struct nssock_pool *pool,
                                    splice_unspliced_fn unspliced)
{
	struct splice_wait *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->c = c;
	w->st = st;
	w->pool = pool;
	w->unspliced = unspliced;
	w->timer = evtimer_new(c->base, timer_cb, w);
	if (!w->timer) {
		free(w);
		return NULL;
	}
	nssock_set_notify(pool, pool_cb, w);
	return w;
}

/**
 * splice_wait_free() - reset the waiting clients and free @w
 * @w:		queue, or NULL
 */
void splice_wait_free(struct splice_wait *w)
{
	if (!w)
		return;
	nssock_set_notify(w->pool, NULL, NULL);
	while (w->n)
		fwd_reset_close(pop(w).fd);
	event_free(w->timer);
	free(w);
}

/**
 * splice_wait_count() - clients waiting now
 * @w:		queue
 *
 * Return: count
 */
size_t splice_wait_count(const struct splice_wait *w)
{
	return w->n;
}
