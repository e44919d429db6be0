// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - pasta's -T and -U: host ports answer on the namespace's loopback
 *
 * pasta's default, which rootlesskit and Docker rely on: a port bound on
 * the host (on its loopback or on every address) is reachable from the
 * namespace at 127.0.0.1, and with IPv6 at ::1 too. With "auto", at each
 * scan (pasta_fwd.c's timer) the host's /proc/net tables, opened before
 * the sandbox, say which ports are bound; with a list, its ports are
 * wanted whatever the host has. For each, sockets made in the namespace
 * (the pool of hostfwd.c) are bound to the namespace's 127.0.0.1 and ::1:
 * TCP connections they accept are spliced to the host's loopback of the
 * same family (splice_outward()), UDP datagrams they receive are relayed
 * there (udpsplice.c), as pasta keeps the family. Ports tapir itself listens on, its -t and
 * -u forwards, are left out of "auto": a connection would come straight
 * back. The first scan's ports are bound before tapir says it is ready
 * (nsfwd_settle()), so that a command or container started then finds
 * them. Listeners are allocated as they come, any number of them, up to
 * fdlimit.c's ceiling.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/host/fdlimit.h"
#include "driver/host/netlink.h"
#include "driver/fwd/hostfwd.h"
#include "driver/core/inany.h"
#include "driver/core/log.h"
#include "driver/fwd/nsfwd.h"
#include "driver/host/nssock.h"
#include "driver/fwd/pasta_fwd.h"
#include "driver/core/opts.h"
#include "driver/fwd/portscan.h"
#include "driver/fwd/splice.h"
#include "driver/fwd/udpsplice.h"

/* Connections accepted per callback before yielding to the loop. */
#define NSFWD_ACCEPT_BATCH 16
/* The pool was empty: try again this soon, not at the next scan... */
#define NSFWD_RETRY_MS 50
/* ...that many times between two scans at most. */
#define NSFWD_RETRIES 10
/* At start, how long the first scan's ports may wait for the pool. */
#define NSFWD_SETTLE_MS 2000

/**
 * struct ns_listener - one port of the host, bound in the namespace
 * @st:		owner
 * @udp:	UDP (-U) rather than TCP (-T)
 * @port:	the port in the namespace
 * @dport:	the host's port it reaches (@port, unless a list maps it)
 * @fams:	the families it was made for: NS_V4 and NS_V6 bits
 * @starved:	those of @fams the pool had no socket for yet
 * @fd:		per family (NS_V4's 127.0.0.1, NS_V6's ::1), listening TCP
 *		or bound UDP socket in the namespace, or -1 if not bound
 * @ev:		per family, its read event, or NULL
 * @paused:	accept() ran out of fds: not watched until the next scan
 */
struct ns_listener {
	struct nsfwd_state *st;
	bool udp;
	uint16_t port;
	uint16_t dport;
	unsigned int fams;
	unsigned int starved;
	int fd[2];
	struct event *ev[2];
	bool paused;
};

/* Bits of a family mask, and indexes of ns_listener's fd and ev. */
#define NS_V4 1U
#define NS_V6 2U

/**
 * struct nsfwd_state - what -T and -U keep between scans
 * @c:		context
 * @ports:	per protocol (0 TCP, 1 UDP): the option, or NULL if "none"
 * @mode:	per protocol: PASTA_PORTS_AUTO (also for pasta's default,
 *		unset) or PASTA_PORTS_LIST
 * @target:	per protocol and namespace port: the host port a list maps
 *		it to, or 0 if it is not listed
 * @spare:	per protocol and family, a pool socket whose bind failed,
 *		unbound still: the next port takes it before the pool, or -1
 * @v6:		the namespace's ::1 answers too: IPv6 is on, and the kernel
 *		has IPv6 sockets (not one booted with ipv6.disable=1,
 *		whose pool would never fill for it)
 * @retry:	one-shot timer: the pool had no socket for a port
 * @starved:	this sync found the pool empty
 * @retries:	retries since the last scan
 * @scans:	scans so far
 * @tables:	per protocol, the host's /proc/net tables (IPv4, IPv6 or -1)
 * @diag:	the host's NETLINK_SOCK_DIAG socket, or -1: read first
 *		(portscan_read_side())
 * @seen:	scratch: the host's bound ports at the last scan
 * @ours:	scratch: ports tapir forwards from the host
 * @failed:	ports that could not be bound in the namespace (taken
 *		there): tried again every PASTA_FWD_RETRY_SCANS scans
 * @on:		ports in @l
 * @full:	this sync ran out of fds or memory: no more listeners
 * @n:		entries in @l
 * @cap:	entries allocated in @l
 * @l:		listeners, by pointer so that events keep their argument
 */
struct nsfwd_state {
	struct ctx *c;
	const struct pasta_ports *ports[2];
	enum pasta_ports_mode mode[2];
	uint16_t target[2][65536];
	int spare[2][2];
	bool v6;
	struct event *retry;
	bool starved;
	unsigned int retries;
	unsigned int scans;
	int tables[2][2];
	int diag;
	struct portscan seen[2];
	struct port_set ours[2];
	struct port_set failed[2];
	struct port_set on[2];
	bool full;
	unsigned int n;
	unsigned int cap;
	struct ns_listener **l;
};

/**
 * host_lo() - the host's loopback of the family a listener's socket has
 * @l:		listener
 * @fd:		one of its sockets
 *
 * Return: 127.0.0.1 (as inany) or ::1
 */
static struct in6_addr host_lo(const struct ns_listener *l, int fd)
{
	struct in6_addr lo = in6addr_loopback;

	if (fd != l->fd[1])
		inany_from_v4(&lo, (struct in_addr){htonl(INADDR_LOOPBACK)});
	return lo;
}

/**
 * accept_cb() - connections to a port of the host, made in the namespace
 * @fd:		listening socket
 * @what:	unused
 * @arg:	struct ns_listener
 *
 * Out of fds, the listener is left alone until the next scan, rather than
 * read ready again at once (a spin).
 */
static void accept_cb(evutil_socket_t fd, short what, void *arg)
{
	static struct log_limit lim;
	struct ns_listener *l = arg;
	struct in6_addr lo = host_lo(l, (int)fd);
	int conn;

	(void)what;
	for (int i = 0; i < NSFWD_ACCEPT_BATCH; i++) {
		conn = accept4((int)fd, NULL, NULL,
		               SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (conn >= 0) {
			splice_outward(hostfwd_splicer(l->st->c), conn, &lo,
			               l->dport);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			err_limited(&lim, errno,
			            "-T: accept on the namespace's port %u",
			            l->port);
			event_del(l->ev[fd == l->fd[1]]);
			l->paused = true;
		}
		return;
	}
}

/**
 * recv_cb() - datagrams to a port of the host, sent in the namespace
 * @fd:		bound socket
 * @what:	unused
 * @arg:	struct ns_listener
 */
static void recv_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ns_listener *l = arg;
	struct in6_addr lo = host_lo(l, (int)fd);

	(void)what;
	usplice_listener_read(l->st->c, (int)fd, false, &lo, l->dport);
}

/**
 * bound() - whether a socket has a local port
 * @fd:		socket
 *
 * Return: true if bound, or if that can't be told
 */
static bool bound(int fd)
{
	union sockaddr_inany sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, &sa.sa, &len))
		return true;
	return sa.sa.sa_family == AF_INET6 ? sa.sa6.sin6_port : sa.sa4.sin_port;
}

/**
 * bind_in_ns() - a namespace socket bound to 127.0.0.1:@port or ::1:@port
 *		  there
 * @st:		state
 * @udp:	a UDP socket, else a listening TCP one
 * @v6:		::1 (IPv6 only), else 127.0.0.1
 * @port:	port
 *
 * Return: the socket, -EAGAIN if the pool has none now, or -errno
 */
static int bind_in_ns(struct nsfwd_state *st, bool udp, bool v6, uint16_t port)
{
	const int one = 1;
	int fd = st->spare[udp][v6], err;
	union sockaddr_inany sa;
	struct in6_addr lo = in6addr_loopback;
	socklen_t salen;

	if (!v6)
		inany_from_v4(&lo, (struct in_addr){htonl(INADDR_LOOPBACK)});
	sockaddr_from_inany(&sa, &salen, &lo, port);
	st->spare[udp][v6] = -1;
	if (fd < 0)
		fd = nssock_get(hostfwd_pool(st->c), v6 ? AF_INET6 : AF_INET,
		                udp ? SOCK_DGRAM : SOCK_STREAM);
	if (fd < 0)
		return -EAGAIN;
	if (!fdlimit_listener_room(fd)) {
		close(fd);
		return -EMFILE;
	}
	/* Not for UDP, where it would share the port with the container's
	 * own sockets.
	 */
	if ((!udp &&
	     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) ||
	    (v6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(fd, &sa.sa, salen) || (!udp && listen(fd, HOSTFWD_BACKLOG))) {
		err = errno;
		/* Unbound still (the bind failed): worth keeping, as a
		 * container holding the host's ports could otherwise drain
		 * the pool, a socket per port every few scans.
		 */
		if (err != 0 && !bound(fd))
			st->spare[udp][v6] = fd;
		else
			close(fd);
		return -err;
	}
	return fd;
}

/**
 * no_room() - say, rate-limited, that a sync stops adding listeners
 * @st:		state
 * @udp:	the protocol of the port that found no room
 * @port:	that port
 * @err:	EMFILE (the fd ceiling) or ENOMEM
 */
static void no_room(struct nsfwd_state *st, bool udp, unsigned int port,
                    int err)
{
	static struct log_limit lim;
	char what[128] = "memory", lim_text[96];

	if (err == EMFILE) {
		fdlimit_describe(lim_text, sizeof(lim_text));
		snprintf(what, sizeof(what), "files: %s", lim_text);
	}
	err_limited(&lim, 0,
	            "-%c: port %u and more not bound in the namespace: %u "
	            "ports bound there, then no more %s",
	            udp ? 'U' : 'T', port, st->n, what);
	st->full = true;
}

/**
 * listener_bind() - bind the sockets a listener still lacks, of @which
 *		     families
 * @st:		state
 * @l:		listener
 * @which:	NS_V4 and NS_V6 bits
 *
 * A family the pool had no socket for stays in @l->starved, for the next
 * sync; one whose bind failed (the port taken in the namespace) is left
 * out until the listener is made again. Out of fds or memory, it stops
 * and sets @st->full, which ends the sync.
 */
static void listener_bind(struct nsfwd_state *st, struct ns_listener *l,
                          unsigned int which)
{
	const char opt = l->udp ? 'U' : 'T';

	for (int v6 = 0; v6 < 2; v6++) {
		int fd;

		if (!(which & (1U << v6)) || l->fd[v6] >= 0)
			continue;
		fd = bind_in_ns(st, l->udp, v6, l->port);
		l->starved &= ~(1U << v6);
		if (fd == -EAGAIN) {
			st->starved = true; /* the pool refills: retry soon */
			l->starved |= 1U << v6;
			continue;
		}
		if (fd == -EMFILE || fd == -ENOMEM) {
			no_room(st, l->udp, l->port, -fd);
			return;
		}
		if (fd < 0) {
			debug_msg("-%c: port %u on the namespace's %s: %s", opt,
			          l->port, v6 ? "::1" : "127.0.0.1",
			          strerror(-fd));
			continue;
		}
		l->ev[v6] = event_new(st->c->base, fd, EV_READ | EV_PERSIST,
		                      l->udp ? recv_cb : accept_cb, l);
		if (!l->ev[v6] || event_add(l->ev[v6], NULL)) {
			err_msg("-%c: port %u: out of memory, or libevent "
			        "failed",
			        opt, l->port);
			if (l->ev[v6])
				event_free(l->ev[v6]);
			l->ev[v6] = NULL;
			close(fd);
			continue;
		}
		l->fd[v6] = fd;
	}
}

/**
 * listener_unbind() - close a listener's socket of one family, if any
 * @st:		state
 * @l:		listener
 * @v6:		which: ::1, else 127.0.0.1
 *
 * Connections already spliced stay up; UDP flows through it go with it.
 */
static void listener_unbind(struct nsfwd_state *st, struct ns_listener *l,
                            int v6)
{
	if (l->fd[v6] < 0)
		return;
	event_free(l->ev[v6]);
	l->ev[v6] = NULL;
	if (l->udp)
		usplice_listener_closed(st->c, l->fd[v6]);
	close(l->fd[v6]);
	l->fd[v6] = -1;
}

/**
 * listener_close() - close a listener's sockets and free it
 * @st:		state
 * @l:		listener, out of @st->l
 */
static void listener_close(struct nsfwd_state *st, struct ns_listener *l)
{
	listener_unbind(st, l, 0);
	listener_unbind(st, l, 1);
	free(l);
}

/**
 * listener_refamily() - the families the host's port is reached from
 *			 changed: bind or close only those that did
 * @st:		state
 * @l:		listener
 * @fams:	the families wanted now, not 0
 *
 * The family that stays keeps its socket and its UDP flows, so that a
 * server the host starts on ::1 next to 127.0.0.1 cuts nobody off.
 */
static void listener_refamily(struct nsfwd_state *st, struct ns_listener *l,
                              unsigned int fams)
{
	for (int v6 = 0; v6 < 2; v6++)
		if (!(fams & (1U << v6)))
			listener_unbind(st, l, v6);
	l->fams = fams;
	l->starved &= fams;
	listener_bind(st, l, fams);
}

/**
 * add_listener() - make a host port answer on the namespace's loopback
 * @st:		state
 * @udp:	protocol
 * @port:	port in the namespace
 * @fams:	on which of the namespace's 127.0.0.1 (NS_V4) and ::1 (NS_V6)
 */
static void add_listener(struct nsfwd_state *st, bool udp, unsigned int port,
                         unsigned int fams)
{
	struct ns_listener *l;

	if (st->n == st->cap) {
		unsigned int cap = st->cap ? st->cap * 2 : 64;
		struct ns_listener **n = realloc(st->l, cap * sizeof(*n));

		if (!n) {
			no_room(st, udp, port, ENOMEM);
			return;
		}
		st->l = n;
		st->cap = cap;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		no_room(st, udp, port, ENOMEM);
		return;
	}
	l->st = st;
	l->udp = udp;
	l->port = (uint16_t)port;
	l->dport = st->mode[udp] == PASTA_PORTS_LIST ? st->target[udp][port]
	                                             : (uint16_t)port;
	l->fams = fams;
	l->fd[0] = l->fd[1] = -1;
	listener_bind(st, l, fams);
	if (st->full || (l->fd[0] < 0 && l->fd[1] < 0)) {
		/* Bound nowhere: tried again later, unless the pool only
		 * had no socket, which the retries wait for.
		 */
		if (!st->full && !l->starved)
			port_set_add(&st->failed[udp], port);
		listener_close(st, l);
		return;
	}
	st->l[st->n++] = l;
	port_set_add(&st->on[udp], port);
}

/**
 * remove_listener() - the host let the port go: stop listening for it
 * @st:		state
 * @i:		its index
 */
static void remove_listener(struct nsfwd_state *st, unsigned int i)
{
	struct ns_listener *l = st->l[i];

	port_set_del(&st->on[l->udp], l->port);
	listener_close(st, l);
	st->l[i] = st->l[--st->n];
}

/**
 * read_host() - which ports the host has bound, and which are tapir's
 * @st:		state; @seen and @ours filled for "auto" protocols
 *
 * Return: 0, or -errno if a table could not be read
 */
static int read_host(struct nsfwd_state *st)
{
	const struct hostfwd_spec *s;
	int ret = 0;

	for (int udp = 0; udp < 2; udp++) {
		memset(&st->ours[udp], 0, sizeof(st->ours[udp]));
		if (!st->ports[udp] || st->mode[udp] != PASTA_PORTS_AUTO)
			continue;
		if (!ret)
			ret = portscan_read_side(&st->diag, st->tables[udp][0],
			                         st->tables[udp][1],
			                         udp ? PORTSCAN_UDP
			                             : PORTSCAN_TCP,
			                         &st->seen[udp]);
	}
	for (size_t i = 0; (s = hostfwd_entry(st->c, i)); i++)
		port_set_add(&st->ours[s->udp], s->host_port);
	return ret;
}

/**
 * wanted() - on which of its loopback addresses the namespace should
 *	      answer for this port
 * @st:		state, after read_host()
 * @udp:	protocol
 * @port:	port
 *
 * With a list, its ports, on 127.0.0.1 and, with IPv6, on ::1. With
 * "auto", only where a connection to the host's loopback of that family
 * reaches the port: 127.0.0.1 where it is bound to 127.0.0.1 or to every
 * address (0.0.0.0, or :: which takes IPv4 too unless IPV6_V6ONLY, which
 * /proc does not show), ::1 where it is bound to ::1 or ::. Not
 * 127.0.0.53 (systemd-resolved's), say: the namespace's 127.0.0.1:53
 * would only reset. Never to one of tapir's own forwards: with
 * --host-lo-to-ns-lo it would bring the client straight back here, a
 * loop.
 *
 * Return: NS_V4 and NS_V6 bits, 0 for none
 */
static unsigned int wanted(const struct nsfwd_state *st, bool udp,
                           unsigned int port)
{
	const struct portscan *seen = &st->seen[udp];
	unsigned int v6 = st->v6 ? NS_V6 : 0, m = 0;
	uint16_t to;

	if (!st->ports[udp])
		return 0;
	if (st->mode[udp] == PASTA_PORTS_LIST) {
		to = st->target[udp][port];
		return to && !port_set_has(&st->ours[udp], to) ? NS_V4 | v6 : 0;
	}
	if (port_set_has(&st->ours[udp], port))
		return 0;
	if (port_set_has(&seen->any, port) || port_set_has(&seen->lo1, port))
		m |= NS_V4;
	if (port_set_has(&seen->lo6, port))
		m |= v6;
	return m;
}

static void sync_listeners(struct nsfwd_state *st);
static void retry_if_starved(struct nsfwd_state *st);

/**
 * retry_cb() - timer: the pool may have sockets again
 * @fd:		unused
 * @what:	unused
 * @arg:	struct ctx
 */
static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctx *c = arg;

	(void)fd;
	(void)what;
	c->nsfwd->retries++;
	sync_listeners(c->nsfwd);
	retry_if_starved(c->nsfwd);
}

/**
 * retry_if_starved() - after a sync that found the pool empty, another soon
 * @st:		state
 *
 * A burst of new host ports can drain the pool: the rest should answer
 * within milliseconds, not at the next scan. The retries use the last scan's
 * ports, at most NSFWD_RETRIES of them until the next scan; a helper
 * that is gone for good leaves it to the scans.
 */
static void retry_if_starved(struct nsfwd_state *st)
{
	const struct timeval tv = {0, NSFWD_RETRY_MS * 1000};
	uint64_t wait;

	if (!st->starved || st->retries >= NSFWD_RETRIES ||
	    nssock_helper(hostfwd_pool(st->c), &wait) == NSSOCK_HELPER_GONE)
		return;
	if (evtimer_add(st->retry, &tv))
		debug_msg("-T/-U: libevent failed: retry at the next scan");
}

/**
 * nsfwd_sync() - make the namespace's loopback listeners match the host
 * @c:		context; nothing happens unless nsfwd_start() ran
 */
void nsfwd_sync(struct ctx *c)
{
	static struct log_limit lim;
	struct nsfwd_state *st = c->nsfwd;
	int ret;

	if (!st)
		return;
	ret = read_host(st);
	if (ret) {
		err_limited(&lim, -ret, "-T/-U: read the host's sockets");
		return;
	}
	st->retries = 0;
	if (!(++st->scans % PASTA_FWD_RETRY_SCANS))
		memset(&st->failed, 0, sizeof(st->failed));
	sync_listeners(st);
	retry_if_starved(st);
}

/**
 * nsfwd_settle() - at start, bind every port of the first scan before
 *		    tapir says it is ready
 * @c:		context, after the first nsfwd_sync(), before the sandbox
 *
 * The pool has few sockets, or none yet, when the first scan asks for
 * them: rather than retry on a timer while the command or container
 * already runs (and finds the host's 127.0.0.1 services refused), wait
 * for the helper's replies, up to NSFWD_SETTLE_MS in all. A helper that
 * fails leaves the ports to the rescans, as later.
 */
void nsfwd_settle(struct ctx *c)
{
	struct nsfwd_state *st = c->nsfwd;
	long long deadline =
	        (long long)clock_ns() + NSFWD_SETTLE_MS * 1000000LL;
	long long left;

	if (!st)
		return;
	while (st->starved && (left = deadline - (long long)clock_ns()) > 0 &&
	       !nssock_wait(hostfwd_pool(c), (int)(left / 1000000) + 1))
		sync_listeners(st);
	if (st->starved)
		debug_msg("-T/-U: the namespace's sockets came late: the "
		          "rest of the first scan's ports follow");
}

/**
 * resume_listener() - watch a listener's sockets again after a pause
 * @l:		listener, paused
 *
 * A socket that can't be watched again stays paused until the next sync.
 */
static void resume_listener(struct ns_listener *l)
{
	l->paused = false;
	for (int v6 = 0; v6 < 2; v6++)
		if (l->ev[v6] && event_add(l->ev[v6], NULL))
			l->paused = true;
}

/**
 * sync_listeners() - listeners to match the last read of the host
 * @st:		state, @seen and @ours as read_host() left them
 *
 * Sets @starved if the pool ran out on the way; the caller retries.
 */
static void sync_listeners(struct nsfwd_state *st)
{
	st->full = false;
	st->starved = false;
	for (unsigned int i = st->n; i-- > 0;) {
		struct ns_listener *l = st->l[i];

		unsigned int fams = wanted(st, l->udp, l->port);

		if (fams != l->fams && fams)
			listener_refamily(st, l, fams);
		else if (fams && l->starved)
			listener_bind(st, l, l->starved);
		/* Bound nowhere now: made again below, if wanted. */
		if (!fams || (l->fd[0] < 0 && l->fd[1] < 0)) {
			remove_listener(st, i);
			continue;
		}
		if (l->paused)
			resume_listener(l);
	}
	for (int udp = 0; udp < 2 && !st->full; udp++) {
		if (!st->ports[udp])
			continue;
		for (unsigned int p = 1; p < 65536 && !st->full; p++) {
			unsigned int fams = wanted(st, udp, p);

			if (!fams) {
				port_set_del(&st->failed[udp], p);
				continue;
			}
			if (port_set_has(&st->failed[udp], p) ||
			    port_set_has(&st->on[udp], p))
				continue;
			add_listener(st, udp, p, fams);
		}
	}
}

/**
 * nsfwd_held() - the ports tapir's own listeners hold on the namespace's
 *		  127.0.0.1, for the namespace's scan to leave out
 * @c:		context
 * @udp:	protocol
 *
 * Return: the set, or NULL if there are none of that protocol
 */
const struct port_set *nsfwd_held(const struct ctx *c, bool udp)
{
	const struct nsfwd_state *st = c->nsfwd;

	return st && st->ports[udp] ? &st->on[udp] : NULL;
}

/**
 * open_tables() - the host's socket tables of the protocols "auto" scans,
 *		   and its sock_diag socket, which spares reading them
 * @st:		state, @ports set
 *
 * Return: 0, or -1 after one error line
 */
static int open_tables(struct nsfwd_state *st)
{
	static const char *const paths[2][2] = {
	        {"/proc/self/net/tcp", "/proc/self/net/tcp6"},
	        {"/proc/self/net/udp", "/proc/self/net/udp6"},
	};

	for (int udp = 0; udp < 2; udp++) {
		if (!st->ports[udp] || st->mode[udp] != PASTA_PORTS_AUTO)
			continue;
		if (st->diag < 0)
			st->diag = netlink_diag_open();
		for (int i = 0; i < 2; i++) {
			st->tables[udp][i] =
			        open(paths[udp][i], O_RDONLY | O_CLOEXEC);
			if (st->tables[udp][i] < 0 &&
			    (i == 0 || errno != ENOENT)) {
				err_errno(errno, "-%c: open %s",
				          udp ? 'U' : 'T', paths[udp][i]);
				return -1;
			}
		}
	}
	return 0;
}

/**
 * set_ports() - what one of -T and -U asks for
 * @st:		state
 * @udp:	which
 * @pp:		the option, unset (pasta's default: auto), auto or a list
 */
static void set_ports(struct nsfwd_state *st, bool udp,
                      const struct pasta_ports *pp)
{
	if (pp->mode == PASTA_PORTS_NONE)
		return;
	st->ports[udp] = pp;
	st->mode[udp] = pp->mode == PASTA_PORTS_LIST ? PASTA_PORTS_LIST
	                                             : PASTA_PORTS_AUTO;
	for (unsigned int i = 0; i < pp->n; i++) {
		const struct pasta_range *r = &pp->r[i];

		for (unsigned int p = r->first; p <= r->last; p++)
			st->target[udp][p] =
			        (uint16_t)(r->target + p - r->first);
	}
}

/**
 * ipv6_sockets() - whether this kernel makes IPv6 sockets at all
 *
 * Return: false only where socket(AF_INET6) says the family is missing
 */
static bool ipv6_sockets(void)
{
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno != EAFNOSUPPORT;
	close(fd);
	return true;
}

/**
 * nsfwd_start() - open the host's tables and keep the pool's helper ready
 * @c:		context, after hostfwd_init(), before the sandbox
 * @tcp:	-T, as parsed
 * @udp:	-U, as parsed
 *
 * Return: 0 (nothing to do if both are "none"), or -1 after one error line
 */
int nsfwd_start(struct ctx *c, const struct pasta_ports *tcp,
                const struct pasta_ports *udp)
{
	struct nsfwd_state *st;

	if (tcp->mode == PASTA_PORTS_NONE && udp->mode == PASTA_PORTS_NONE)
		return 0;
	st = calloc(1, sizeof(*st));
	if (!st) {
		err_errno(ENOMEM, "-T/-U: allocate state");
		return -1;
	}
	st->c = c;
	memset(st->spare, -1, sizeof(st->spare));
	st->v6 = c->o->ipv6 && ipv6_sockets();
	set_ports(st, false, tcp);
	set_ports(st, true, udp);
	memset(st->tables, -1, sizeof(st->tables));
	st->diag = -1;
	c->nsfwd = st;
	st->retry = evtimer_new(c->base, retry_cb, c);
	if (!st->retry) {
		err_msg("-T/-U: create the retry timer: libevent failed");
		return -1;
	}
	if (open_tables(st))
		return -1;
	/* Sandboxed, tapir could not start the socket helper later. */
	if (st->ports[0])
		nssock_prime(hostfwd_pool(c));
	if (st->ports[1])
		nssock_prime_udp(hostfwd_pool(c));
	return 0;
}

/**
 * nsfwd_stop() - close every listener; spliced connections are hostfwd's
 * @c:		context; nsfwd_start() may not have run
 */
void nsfwd_stop(struct ctx *c)
{
	struct nsfwd_state *st = c->nsfwd;

	if (!st)
		return;
	while (st->n)
		remove_listener(st, st->n - 1);
	free(st->l);
	if (st->retry)
		event_free(st->retry);
	if (st->diag >= 0)
		close(st->diag);
	for (int udp = 0; udp < 2; udp++) {
		for (int i = 0; i < 2; i++)
			if (st->tables[udp][i] >= 0)
				close(st->tables[udp][i]);
		for (int v6 = 0; v6 < 2; v6++)
			if (st->spare[udp][v6] >= 0)
				close(st->spare[udp][v6]);
	}
	free(st);
	c->nsfwd = NULL;
}
