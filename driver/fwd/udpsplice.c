// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - UDP between the host's and the namespace's loopback, socket to
 * socket: pasta's -U and --host-lo-to-ns-lo
 *
 * Loopback on one side can't reach loopback on the other through the tap:
 * a datagram that comes to a listening socket (the namespace's
 * 127.0.0.1:P for -U, a -u forward's host socket for a host-loopback
 * client) is sent on a socket made on the other side (on the host, or in
 * the namespace through hostfwd.c's pool) and connected to the target.
 * What that socket receives goes back to the client through the
 * listener. Each client address is a flow of the one flow table (flow.c),
 * keyed by the listener's fd, the client and the target; idle flows close
 * after USPLICE_TIMEOUT.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/core/list.h"
#include "driver/core/clock.h"
#include "driver/flow/flow.h"
#include "driver/fwd/hostfwd.h"
#include "driver/core/inany.h"
#include "driver/core/log.h"
#include "driver/host/nssock.h"
#include "driver/core/stats.h"
#include "driver/fwd/udpsplice.h"

/* Syscalls of the spliced UDP flows: host sockets made and connected,
 * datagrams both ways.
 */
const char *const usplice_syscalls[] = {
        "socket", "connect", "recvfrom", "sendto", "close", NULL,
};

/* Datagrams relayed per wakeup in each direction, so one busy client
 * cannot starve the loop; the socket stays readable for the rest.
 */
#define USPLICE_BATCH 32
/* How often idle flows are looked for. */
#define USPLICE_SWEEP_S 10

/**
 * struct usplice_flow - one client of a listener, and our socket for it
 * @flow:	common part: the key (listener fd as @flow.key.disc)
 * @lfd:	the listener: answers go out through it (not ours)
 * @peer:	the client's address
 * @in_ns:	@fd is in the namespace (a host client), else on the host
 * @fd:		our socket on the other side, connected to the target
 * @ev:		read event on @fd
 * @last_s:	clock_s() of the last datagram either way
 * @lru:	its links in its direction's recency list
 */
struct usplice_flow {
	struct flow_common flow;
	int lfd;
	union sockaddr_inany peer;
	bool in_ns;
	int fd;
	struct event *ev;
	uint64_t last_s;
	struct list_node lru;
};

_Static_assert(sizeof(struct usplice_flow) <= FLOW_ENTRY_SIZE,
               "a spliced UDP flow fits a flow entry");

/**
 * struct usplice_state - what the spliced UDP flows share
 * @sweep:	persistent timer closing idle flows
 * @flows:	flows per direction: [0] of namespace clients (-U), [1] of
 *		host clients (--host-lo-to-ns-lo); each has half the
 *		table, so that the container's clients can't crowd out the
 *		host's, nor the other way round; within a half, a new
 *		client takes the place of the least recently used
 * @lru:	per direction, the flows, least recently used first
 * @buf:	one datagram, either way
 */
struct usplice_state {
	struct event *sweep;
	unsigned int flows[2];
	struct list lru[2];
	uint8_t buf[65536];
};

/**
 * peer_len() - length of a client's address
 * @sa:		address
 *
 * Return: its family's sockaddr size
 */
static socklen_t peer_len(const union sockaddr_inany *sa)
{
	return sa->sa.sa_family == AF_INET6 ? sizeof(sa->sa6) : sizeof(sa->sa4);
}

/**
 * oldest() - the least recently used flow of a direction
 * @s:		state
 * @in_ns:	the direction: clients in the namespace, or on the host
 *
 * Return: the flow, or NULL if there is none
 */
static struct usplice_flow *oldest(const struct usplice_state *s, bool in_ns)
{
	struct list_node *n = s->lru[in_ns].head;

	return n ? (struct usplice_flow *)((char *)n -
	                                   offsetof(struct usplice_flow, lru))
	         : NULL;
}

/**
 * flow_used() - a datagram went either way: the flow is the most recent
 * @s:		state
 * @f:		flow, in the list or not yet
 * @linked:	@f is in the list
 */
static void flow_used(struct usplice_state *s, struct usplice_flow *f,
                      bool linked)
{
	f->last_s = clock_s();
	if (linked)
		list_unlink(&s->lru[f->in_ns], &f->lru);
	list_append(&s->lru[f->in_ns], &f->lru);
}

/**
 * flow_free() - close a flow's socket and release its entry
 * @c:		context
 * @f:		flow; its entry is gone after this
 */
static void flow_free(struct ctx *c, struct usplice_flow *f)
{
	struct flow_common *fc = &f->flow;

	if (f->ev)
		event_free(f->ev);
	if (f->fd >= 0)
		close(f->fd);
	if (f->flow.hashed)
		list_unlink(&c->usplice->lru[f->in_ns], &f->lru);
	c->usplice->flows[f->in_ns]--;
	flow_release(c->flows, &fc);
}

/**
 * reply_cb() - the target answered: back to the client, via the listener
 * @fd:		our socket
 * @what:	unused
 * @arg:	struct usplice_flow
 *
 * A refusal (ICMP port unreachable) is dropped, as the client would not
 * see it through a NAT either; any other error ends the flow, which would
 * report it again and again.
 */
static void reply_cb(evutil_socket_t fd, short what, void *arg)
{
	static struct log_limit lim;
	struct usplice_flow *f = arg;
	struct ctx *c = f->flow.c;
	uint8_t *buf = c->usplice->buf;

	(void)what;
	for (int i = 0; i < USPLICE_BATCH; i++) {
		ssize_t n = recv((int)fd, buf, sizeof(c->usplice->buf),
		                 MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0 && errno == ECONNREFUSED) {
			c->stats.drops[DROP_SOCKET]++;
			continue;
		}
		if (n < 0) {
			err_limited(&lim, errno, "spliced UDP flow to port %u",
			            f->flow.key.fport);
			flow_free(c, f);
			return;
		}
		flow_used(c->usplice, f, true);
		if (sendto(f->lfd, buf, (size_t)n, MSG_DONTWAIT, &f->peer.sa,
		           peer_len(&f->peer)) < 0)
			c->stats.drops[DROP_SOCKET]++;
	}
}

/**
 * usplice_sweep() - close the flows idle for USPLICE_TIMEOUT
 * @c:		context
 * @now:	clock_s()
 *
 * Each direction's list goes from its least recently used flow up to the
 * first that is not idle that long: every later one is younger. A sweep
 * looks at the flows it closes and at most one more per direction,
 * however many are open.
 *
 * Return: flows looked at, for tests
 */
unsigned int usplice_sweep(struct ctx *c, uint64_t now)
{
	unsigned int looked = 0;

	for (int in_ns = 0; c->usplice && in_ns < 2; in_ns++) {
		struct usplice_flow *f;

		while ((f = oldest(c->usplice, in_ns))) {
			looked++;
			if (now - f->last_s < USPLICE_TIMEOUT)
				break;
			flow_free(c, f);
		}
	}
	return looked;
}

/**
 * sweep_cb() - timer: close idle flows
 * @fd:		unused
 * @what:	unused
 * @arg:	struct ctx
 */
static void sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	usplice_sweep(arg, clock_s());
}

/**
 * state_get() - the shared state, made on first use
 * @c:		context
 *
 * Return: the state, or NULL after one error line
 */
static struct usplice_state *state_get(struct ctx *c)
{
	const struct timeval tv = {USPLICE_SWEEP_S, 0};
	struct usplice_state *s = c->usplice;

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (s)
		s->sweep = event_new(c->base, -1, EV_PERSIST, sweep_cb, c);
	if (!s || !s->sweep || event_add(s->sweep, &tv)) {
		err_msg("spliced UDP: out of memory, or libevent failed");
		if (s && s->sweep)
			event_free(s->sweep);
		free(s);
		return NULL;
	}
	c->usplice = s;
	return s;
}

/**
 * target_socket() - a socket on the target's side, connected to it
 * @c:		context
 * @in_ns:	the target is in the namespace: take the socket from the pool
 * @dst:	target address (inany)
 * @dport:	target port
 *
 * Return: the socket, or -errno (-EAGAIN: the pool has none now)
 */
static int target_socket(struct ctx *c, bool in_ns, const struct in6_addr *dst,
                         uint16_t dport)
{
	int family = inany_is_v4(dst) ? AF_INET : AF_INET6, fd, err;
	union sockaddr_inany sa;
	socklen_t len;

	if (in_ns)
		fd = nssock_get(hostfwd_pool(c), family, SOCK_DGRAM);
	else
		fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		            0);
	if (fd < 0)
		return in_ns ? fd : -errno;
	sockaddr_from_inany(&sa, &len, dst, dport);
	if (connect(fd, &sa.sa, len)) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/**
 * flow_new() - a flow for a new client
 * @c:		context
 * @k:		its key
 * @lfd:	the listener
 * @peer:	the client
 * @in_ns:	the target is in the namespace
 * @dst:	target address
 * @dport:	target port
 *
 * Return: the flow, or NULL: the datagram is dropped, counted, and logged
 *	   (rate-limited) unless the pool merely had no socket yet
 */
static struct usplice_flow *flow_new(struct ctx *c, const struct flow_key *k,
                                     int lfd, const union sockaddr_inany *peer,
                                     bool in_ns, const struct in6_addr *dst,
                                     uint16_t dport)
{
	static struct log_limit lim;
	struct usplice_state *s = state_get(c);
	struct usplice_flow *f = NULL;
	int fd;

	if (!s)
		return NULL;
	if (s->flows[in_ns] >= FLOW_USPLICE_MAX / 2) {
		err_limited(&lim, 0,
		            "spliced UDP: %u flows of %s clients open: closing "
		            "the least recently used",
		            s->flows[in_ns], in_ns ? "host" : "namespace");
		/* Every source on the host's loopback is 127.0.0.1: no
		 * per-address limit tells a flood from the rest, but one
		 * user's sockets must not lock every other client out for
		 * USPLICE_TIMEOUT.
		 */
		if (oldest(s, in_ns))
			flow_free(c, oldest(s, in_ns));
	}
	f = (struct usplice_flow *)flow_alloc(c->flows, FLOW_USPLICE);
	if (!f) {
		c->stats.drops[DROP_FLOW_LIMIT]++;
		return NULL;
	}
	s->flows[in_ns]++;
	f->in_ns = in_ns;
	f->fd = -1;
	fd = target_socket(c, in_ns, dst, dport);
	if (fd >= 0)
		f->ev = event_new(c->base, fd, EV_READ | EV_PERSIST, reply_cb,
		                  f);
	if (fd < 0 || !f->ev || event_add(f->ev, NULL)) {
		c->stats.drops[DROP_SOCKET]++;
		if (fd != -EAGAIN)
			err_limited(&lim, fd < 0 ? -fd : 0,
			            "spliced UDP to port %u: socket%s", dport,
			            fd < 0 ? "" : ": libevent failed");
		f->fd = fd;
		flow_free(c, f);
		return NULL;
	}
	f->fd = fd;
	f->lfd = lfd;
	f->peer = *peer;
	f->flow.key = *k;
	flow_hash(c->flows, &f->flow, FLOW_SIDE_GUEST);
	flow_used(s, f, false);
	return f;
}

/**
 * usplice_datagram() - relay a client's datagram to the other side
 * @c:		context (the main loop's)
 * @lfd:	the listener it came to, which answers go out through
 * @peer:	the client
 * @in_ns:	the target is in the namespace (else on the host)
 * @dst:	target address (inany): a loopback address
 * @dport:	target port
 * @data:	payload
 * @len:	its length
 *
 * A datagram that can't be relayed (no flow entry, no socket yet, a full
 * buffer) is dropped and counted, as a congested link drops it.
 */
void usplice_datagram(struct ctx *c, int lfd, const union sockaddr_inany *peer,
                      bool in_ns, const struct in6_addr *dst, uint16_t dport,
                      const uint8_t *data, size_t len)
{
	struct usplice_flow *f;
	struct in6_addr src;
	struct flow_key k;

	if (peer->sa.sa_family == AF_INET6) {
		src = peer->sa6.sin6_addr;
		flow_key_guest(&k, FLOW_USPLICE, &src,
		               ntohs(peer->sa6.sin6_port), dst, dport);
	} else {
		inany_from_v4(&src, peer->sa4.sin_addr);
		flow_key_guest(&k, FLOW_USPLICE, &src,
		               ntohs(peer->sa4.sin_port), dst, dport);
	}
	k.disc = lfd;
	f = (struct usplice_flow *)flow_lookup(c->flows, &k);
	if (f)
		flow_used(c->usplice, f, true);
	else if (!(f = flow_new(c, &k, lfd, peer, in_ns, dst, dport)))
		return;
	if (send(f->fd, data, len, MSG_DONTWAIT) < 0)
		c->stats.drops[DROP_SOCKET]++;
}

/**
 * usplice_listener_read() - relay the datagrams waiting on a listener, a
 *			     bounded batch per wakeup
 * @c:		context (the main loop's)
 * @lfd:	bound socket
 * @in_ns:	the target is in the namespace (else on the host)
 * @dst:	target address (inany)
 * @dport:	target port
 *
 * Truncated datagrams (over 64 KiB) are dropped, not relayed cut.
 */
void usplice_listener_read(struct ctx *c, int lfd, bool in_ns,
                           const struct in6_addr *dst, uint16_t dport)
{
	struct usplice_state *s = state_get(c);

	for (int i = 0; s && i < USPLICE_BATCH; i++) {
		union sockaddr_inany peer;
		socklen_t len = sizeof(peer);
		ssize_t n = recvfrom(lfd, s->buf, sizeof(s->buf),
		                     MSG_DONTWAIT | MSG_TRUNC, &peer.sa, &len);

		if (n < 0)
			return;
		if ((size_t)n > sizeof(s->buf) ||
		    (peer.sa.sa_family != AF_INET &&
		     peer.sa.sa_family != AF_INET6)) {
			c->stats.drops[DROP_BAD_LENGTH]++;
			continue;
		}
		usplice_datagram(c, lfd, &peer, in_ns, dst, dport, s->buf,
		                 (size_t)n);
	}
}

/**
 * close_if_listener() - flow_walk(): close a flow of one listener
 * @fc:		flow
 * @arg:	the listener's fd
 */
static void close_if_listener(struct flow_common *fc, void *arg)
{
	struct usplice_flow *f = (struct usplice_flow *)fc;

	if (!arg || f->lfd == *(int *)arg)
		flow_free(fc->c, f);
}

/**
 * usplice_listener_closed() - close the flows answering through a listener
 * @c:		context
 * @lfd:	its fd, about to be closed by its owner: the number may be
 *		reused, and a flow would answer through another socket
 *
 * Once per forward removed or replaced, not per datagram: a walk over
 * the spliced flows is fine here.
 */
void usplice_listener_closed(struct ctx *c, int lfd)
{
	if (c->usplice)
		flow_walk(c->flows, FLOW_USPLICE, close_if_listener, &lfd);
}

/**
 * usplice_stop() - close every flow and the timer
 * @c:		context, before its flow table goes
 */
void usplice_stop(struct ctx *c)
{
	if (!c->usplice)
		return;
	flow_walk(c->flows, FLOW_USPLICE, close_if_listener, NULL);
	event_free(c->usplice->sweep);
	free(c->usplice);
	c->usplice = NULL;
}
