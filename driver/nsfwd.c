// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - pasta's -T auto: host TCP ports answer on the namespace's loopback
 *
 * pasta's default, which rootlesskit and Docker rely on: a TCP port bound
 * on the host (on its loopback or on every address) is reachable from the
 * namespace at 127.0.0.1. At each scan (pasta_fwd.c's timer) the host's
 * /proc/net/tcp and tcp6, opened before the sandbox, say which ports are
 * bound; for each, a socket made in the namespace (the pool of hostfwd.c)
 * listens on the namespace's 127.0.0.1, and what it accepts is spliced to
 * the host's 127.0.0.1 (splice_outward()). Ports tapir itself listens on,
 * its -t forwards, are left out: a connection would come straight back.
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

#include "hostfwd.h"
#include "inany.h"
#include "log.h"
#include "nsfwd.h"
#include "nssock.h"
#include "pasta_fwd.h"
#include "portscan.h"
#include "splice.h"

/* Connections accepted per callback before yielding to the loop. */
#define NSFWD_ACCEPT_BATCH 16
/* The pool was empty: try again this soon, not at the next scan... */
#define NSFWD_RETRY_MS 50
/* ...that many times between two scans at most. */
#define NSFWD_RETRIES 10

/**
 * struct ns_listener - one port of the host, listening in the namespace
 * @st:		owner
 * @port:	the port, on both sides
 * @fd:		listening socket, in the namespace
 * @ev:		its read event
 * @paused:	accept() ran out of fds: not watched until the next scan
 */
struct ns_listener {
	struct nsfwd_state *st;
	uint16_t port;
	int fd;
	struct event *ev;
	bool paused;
};

/**
 * struct nsfwd_state - what -T auto keeps between scans
 * @c:		context
 * @retry:	one-shot timer: the pool had no socket for a port
 * @starved:	this sync found the pool empty
 * @retries:	retries since the last scan
 * @scans:	scans so far
 * @tables:	the host's /proc/net/tcp and tcp6 (or -1: no IPv6)
 * @seen:	scratch: the host's bound ports at the last scan
 * @ours:	scratch: ports tapir forwards from the host
 * @failed:	ports that could not listen in the namespace (taken there):
 *		tried again every PASTA_FWD_RETRY_SCANS scans
 * @on:		ports in @l
 * @n:		entries in @l
 * @l:		listeners, by pointer so that events keep their argument
 */
struct nsfwd_state {
	struct ctx *c;
	struct event *retry;
	bool starved;
	unsigned int retries;
	unsigned int scans;
	int tables[2];
	struct portscan seen;
	struct port_set ours;
	struct port_set failed;
	struct port_set on;
	unsigned int n;
	struct ns_listener *l[NSFWD_MAX];
};

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
	struct in6_addr lo;
	int conn;

	(void)what;
	inany_from_v4(&lo, (struct in_addr){htonl(INADDR_LOOPBACK)});
	for (int i = 0; i < NSFWD_ACCEPT_BATCH; i++) {
		conn = accept4((int)fd, NULL, NULL,
		               SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (conn >= 0) {
			splice_outward(hostfwd_splicer(l->st->c), conn, &lo,
			               l->port);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			err_limited(&lim, errno,
			            "-T: accept on the namespace's port %u",
			            l->port);
			event_del(l->ev);
			l->paused = true;
		}
		return;
	}
}

/**
 * listen_in_ns() - a namespace socket listening on 127.0.0.1:@port there
 * @st:		state
 * @port:	port
 *
 * Return: the socket, -EAGAIN if the pool has none now, or -errno
 */
static int listen_in_ns(struct nsfwd_state *st, uint16_t port)
{
	struct sockaddr_in sa = {
	        .sin_family = AF_INET,
	        .sin_port = htons(port),
	        .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	const int one = 1;
	int fd = nssock_get(hostfwd_pool(st->c), AF_INET), err;

	if (fd < 0)
		return -EAGAIN;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, HOSTFWD_BACKLOG)) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/**
 * add_listener() - make a host port answer on the namespace's loopback
 * @st:		state
 * @port:	port
 */
static void add_listener(struct nsfwd_state *st, unsigned int port)
{
	struct ns_listener *l;
	int fd;

	if (st->n == NSFWD_MAX)
		return;
	fd = listen_in_ns(st, (uint16_t)port);
	if (fd == -EAGAIN) {
		st->starved = true; /* the pool refills: retry soon */
		return;
	}
	if (fd < 0) {
		debug_msg("-T: port %u in the namespace: %s", port,
		          strerror(-fd));
		port_set_add(&st->failed, port);
		return;
	}
	l = calloc(1, sizeof(*l));
	if (l)
		l->ev = event_new(st->c->base, fd, EV_READ | EV_PERSIST,
		                  accept_cb, l);
	if (!l || !l->ev || event_add(l->ev, NULL)) {
		err_msg("-T: port %u: out of memory, or libevent failed", port);
		if (l && l->ev)
			event_free(l->ev);
		free(l);
		close(fd);
		port_set_add(&st->failed, port);
		return;
	}
	l->st = st;
	l->port = (uint16_t)port;
	l->fd = fd;
	st->l[st->n++] = l;
	port_set_add(&st->on, port);
}

/**
 * remove_listener() - the host let the port go: stop listening for it
 * @st:		state
 * @i:		its index
 *
 * Connections already spliced stay up.
 */
static void remove_listener(struct nsfwd_state *st, unsigned int i)
{
	struct ns_listener *l = st->l[i];

	port_set_del(&st->on, l->port);
	event_free(l->ev);
	close(l->fd);
	free(l);
	st->l[i] = st->l[--st->n];
}

/**
 * read_host() - which TCP ports the host has bound, and which are tapir's
 * @st:		state; @seen and @ours filled
 *
 * Return: 0, or -errno if a table could not be read
 */
static int read_host(struct nsfwd_state *st)
{
	const struct hostfwd_spec *s;
	int ret;

	memset(&st->ours, 0, sizeof(st->ours));
	ret = portscan_read_pair(st->tables[0], st->tables[1], PORTSCAN_TCP,
	                         &st->seen);
	for (size_t i = 0; (s = hostfwd_entry(st->c, i)); i++)
		if (!s->udp)
			port_set_add(&st->ours, s->host_port);
	return ret;
}

/**
 * wanted() - should the namespace's loopback answer for this host port
 * @st:		state, after read_host()
 * @port:	port
 *
 * Only where a connection to 127.0.0.1 reaches the port: bound to it, or
 * to every address (0.0.0.0, or :: which takes IPv4 too unless
 * IPV6_V6ONLY, which /proc does not show). Not 127.0.0.53 (systemd-
 * resolved's), say: the namespace's 127.0.0.1:53 would only reset.
 *
 * Return: true if so, and not one of tapir's own
 */
static bool wanted(const struct nsfwd_state *st, unsigned int port)
{
	return (port_set_has(&st->seen.any, port) ||
	        port_set_has(&st->seen.lo1, port)) &&
	       !port_set_has(&st->ours, port);
}

static void sync_listeners(struct nsfwd_state *st);

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
}

/**
 * retry_if_starved() - after a sync that found the pool empty, another soon
 * @st:		state
 *
 * At start the pool's first sockets are on their way, and rootlesskit
 * does not wait for us: the host's ports should answer within
 * milliseconds, not at the next scan. The retries use the last scan's
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
	st->starved = false;
	if (evtimer_add(st->retry, &tv))
		debug_msg("-T: libevent failed: retry at the next scan");
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
		err_limited(&lim, -ret, "-T: read the host's sockets");
		return;
	}
	st->retries = 0;
	if (!(++st->scans % PASTA_FWD_RETRY_SCANS))
		memset(&st->failed, 0, sizeof(st->failed));
	sync_listeners(st);
}

/**
 * sync_listeners() - listeners to match the last read of the host
 * @st:		state, @seen and @ours as read_host() left them
 */
static void sync_listeners(struct nsfwd_state *st)
{
	for (unsigned int i = st->n; i-- > 0;) {
		struct ns_listener *l = st->l[i];

		if (!wanted(st, l->port))
			remove_listener(st, i);
		else if (l->paused && !event_add(l->ev, NULL))
			l->paused = false;
	}
	for (unsigned int p = 1; p < 65536; p++) {
		if (!wanted(st, p)) {
			port_set_del(&st->failed, p);
			continue;
		}
		if (!port_set_has(&st->failed, p) && !port_set_has(&st->on, p))
			add_listener(st, p);
	}
	retry_if_starved(st);
}

/**
 * nsfwd_start() - open the host's tables and keep the pool's helper ready
 * @c:		context, after hostfwd_init(), before the sandbox
 *
 * Return: 0, or -1 after one error line
 */
int nsfwd_start(struct ctx *c)
{
	static const char *const paths[2] = {"/proc/self/net/tcp",
	                                     "/proc/self/net/tcp6"};
	struct nsfwd_state *st = calloc(1, sizeof(*st));

	if (!st) {
		err_errno(ENOMEM, "-T: allocate state");
		return -1;
	}
	st->c = c;
	st->tables[0] = st->tables[1] = -1;
	c->nsfwd = st;
	st->retry = evtimer_new(c->base, retry_cb, c);
	if (!st->retry) {
		err_msg("-T: create the retry timer: libevent failed");
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		st->tables[i] = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (st->tables[i] < 0 && (i == 0 || errno != ENOENT)) {
			err_errno(errno, "-T: open %s", paths[i]);
			return -1;
		}
	}
	/* Sandboxed, tapir could not start the socket helper later. */
	nssock_prime(hostfwd_pool(c));
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
	if (st->retry)
		event_free(st->retry);
	for (int i = 0; i < 2; i++)
		if (st->tables[i] >= 0)
			close(st->tables[i]);
	free(st);
	c->nsfwd = NULL;
}
