// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - host port forwards: listeners, the forward table, -p at start-up
 *
 * Each forward is a listening socket on the host. TCP connections take one
 * of two paths (--forward-mode): "tap" hands the accepted socket to the TCP
 * module, which opens a connection to the guest through the tap with the
 * client's address as source (loopback clients appear as the gateway);
 * "splice" connects a socket from inside the namespace and splices the two
 * (splice.c). UDP datagrams always go to the UDP module, through the tap.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "seccomp.h"
#include "fdlimit.h"
#include "fwd.h"
#include "hostfwd.h"
#include "pasta_cli.h"
#include "inany.h"
#include "log.h"
#include "nssock.h"
#include "cond.h"
#include "splice.h"
#include "splicewait.h"
#include "tcp.h"
#include "thread.h"
#include "udp.h"

/* Syscalls the forwards make once running: listeners added through the
 * API, accepted connections, datagrams on UDP forwards.
 */
const char *const hostfwd_syscalls[] = {
        "socket", "setsockopt", "getsockopt",  "bind",
        "listen", "accept4",    "getsockname", "recvmmsg",
        "sendto", "sendmsg",    "close",       NULL,
};

/* Connections or datagrams taken per wakeup, so one busy port cannot
 * starve the rest of the loop; the listener stays readable for the rest.
 */
#define HOSTFWD_BATCH 32

/**
 * struct fwd - one forward and its listening socket
 * @s:		what the API reports
 * @hs:		owner
 * @fd:		listening TCP or bound UDP socket
 * @ev:		read event on @fd
 * @pause:	timer that re-arms @ev after a pause (fdlimit_pause())
 * @rxq_ovfl:	UDP: its socket's drop count as last seen (SO_RXQ_OVFL)
 */
struct fwd {
	struct hostfwd_spec s;
	struct hostfwd_state *hs;
	int fd;
	struct event *ev;
	struct event *pause;
	uint32_t rxq_ovfl;
};

/**
 * struct hostfwd_state - the forward table
 * @c:		context
 * @fwds:	forwards in the order they were added
 * @n:		entries in @fwds
 * @next_id:	id of the next forward added
 * @pool:	sockets inside the namespace, for the splice path
 * @splice:	spliced connections
 * @wait:	connections waiting for a namespace socket
 * @fallbacks:	connections of spliced forwards served through the tap
 * @refused:	connections of spliced forwards reset for want of a socket
 */
struct hostfwd_state {
	struct ctx *c;
	struct fwd *fwds[HOSTFWD_MAX];
	size_t n;
	unsigned int next_id;
	struct nssock_pool *pool;
	struct splice_state *splice;
	struct splice_wait *wait;
	uint64_t fallbacks;
	uint64_t refused;
};

/**
 * hostfwd_spec_str() - "tcp 127.0.0.1:8080 -> 10.0.2.100:80" for messages
 * @s:		forward
 * @buf:	output
 * @len:	size of @buf
 */
void hostfwd_spec_str(const struct hostfwd_spec *s, char *buf, size_t len)
{
	char h[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN];
	struct in_addr v4;
	bool h6 = !inany_is_v4(&s->host_addr);

	if (h6) {
		inet_ntop(AF_INET6, &s->host_addr, h, sizeof(h));
	} else {
		v4 = inany_v4(&s->host_addr);
		inet_ntop(AF_INET, &v4, h, sizeof(h));
	}
	v4 = inany_v4(&s->guest_addr);
	inet_ntop(AF_INET, &v4, g, sizeof(g));
	snprintf(buf, len, "%s %s%s%s:%u -> %s:%u", s->udp ? "udp" : "tcp",
	         h6 ? "[" : "", h, h6 ? "]" : "", s->host_port, g,
	         s->guest_port);
}

/**
 * open_listener() - the host socket of a forward
 * @s:		forward
 * @freebind:	bind an address the host does not have (pasta's --freebind)
 * @why:	on failure, the step and the errno text
 * @whylen:	size of @why
 *
 * TCP listeners get SO_REUSEADDR, so that a port whose last connections
 * linger in TIME_WAIT can be forwarded again; UDP sockets do not, because
 * for UDP it would let two sockets share the port. IPv6 sockets are
 * IPV6_V6ONLY, so that "::" and "0.0.0.0" are separate forwards.
 *
 * Return: the socket, or -1
 */
static int open_listener(const struct hostfwd_spec *s, bool freebind, char *why,
                         size_t whylen)
{
	const int one = 1;
	union sockaddr_inany sa;
	socklen_t salen;
	char what[128];
	int fd, err;

	sockaddr_from_inany(&sa, &salen, &s->host_addr, s->host_port);
	fd = socket(sa.sa.sa_family,
	            (s->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK |
	                    SOCK_CLOEXEC,
	            0);
	if (fd < 0) {
		err = errno;
		snprintf(what, sizeof(what), "socket");
		goto fail;
	}
	if (s->udp)
		udp_sock_tune(fd);
	if ((!s->udp &&
	     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) ||
	    (sa.sa.sa_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    (freebind &&
	     setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)))) {
		err = errno;
		snprintf(what, sizeof(what), "setsockopt");
		goto fail;
	}
	if (bind(fd, &sa.sa, salen)) {
		err = errno;
		snprintf(what, sizeof(what), "bind");
		goto fail;
	}
	if (!s->udp && listen(fd, HOSTFWD_BACKLOG)) {
		err = errno;
		snprintf(what, sizeof(what), "listen");
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	hostfwd_spec_str(s, why, whylen);
	snprintf(why + strlen(why), whylen - strlen(why), ": %s: %s", what,
	         strerror(err));
	return -1;
}

/**
 * to_tap() - hand an accepted connection to the TCP module
 * @c:		context
 * @fd:		accepted socket
 * @peer:	the client's address
 * @dst:	the forward's guest_addr
 * @dport:	the forward's guest_port
 *
 * The guest sees the client's address (loopback as the gateway). The guest
 * address is IPv4, so an IPv6 client on an IPv6 forward appears as the
 * IPv4 gateway: its address has no IPv4 form.
 */
static void to_tap(struct ctx *c, int fd, const union sockaddr_inany *peer,
                   const struct in6_addr *dst, uint16_t dport)
{
	struct in6_addr src;
	uint16_t sport;

	fwd_guest_source(c, peer, &src, &sport);
	if (inany_is_v4(dst) && !inany_is_v4(&src))
		inany_from_v4(&src, c->gw4);
	thread_accept(c, fd, &src, sport, dst, dport);
}

/**
 * tap_reaches() - whether the tap path can serve a forward to @addr
 * @c:		context
 * @addr:	the forward's guest_addr
 *
 * Only the guest's own address is sure to be answered on the tap; a
 * spliced forward may name one that only the namespace has (127.0.0.1).
 *
 * Return: true if @addr is the guest's address
 */
static bool tap_reaches(const struct ctx *c, const struct in6_addr *addr)
{
	return inany_is_v4(addr) && inany_v4(addr).s_addr == c->guest4.s_addr;
}

/**
 * unspliced() - serve a client of a spliced forward through the tap, when
 *		 no namespace socket can be had in time
 * @c:		context
 * @fd:		accepted socket, consumed
 * @peer:	the client's address
 * @dst:	the forward's guest_addr
 * @dport:	the forward's guest_port
 *
 * The pool's helper is late (or, once tapir is isolated, gone for good):
 * the client is served the way --forward-mode=tap does it, without
 * waiting any longer, rather than reset, unless the tap can't reach the
 * forward's address.
 */
static void unspliced(struct ctx *c, int fd, const union sockaddr_inany *peer,
                      const struct in6_addr *dst, uint16_t dport)
{
	static struct log_limit limit;
	struct hostfwd_state *hs = c->hostfwd;

	if (tap_reaches(c, dst)) {
		debug_msg("splice: no namespace socket for a connection to "
		          "port %u: through the tap",
		          dport);
		hs->fallbacks++;
		to_tap(c, fd, peer, dst, dport);
		return;
	}
	err_limited(&limit, 0,
	            "splice: no namespace socket for a connection to port %u, "
	            "and the tap does not reach its guest address: resetting "
	            "the client",
	            dport);
	hs->refused++;
	fwd_reset_close(fd);
}

/**
 * resume_cb() - accept again after fdlimit_pause()
 * @fd:		unused
 * @what:	unused
 * @arg:	struct fwd
 *
 * If the listener can't be watched again, it would stay deaf: the pause
 * is taken once more, and the next one retries.
 */
static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	static struct log_limit limit;
	struct fwd *f = arg;
	char name[128];

	(void)fd;
	(void)what;
	if (!event_add(f->ev, NULL))
		return;
	hostfwd_spec_str(&f->s, name, sizeof(name));
	err_limited(&limit, 0, "forward %s: resume listening: libevent failed",
	            name);
	fdlimit_pause(f->ev, f->pause);
}

/**
 * refuse_exhausted() - out of fds: reset one pending client, or pause
 * @f:		forward whose accept() failed
 * @err:	its errno, one of fdlimit_exhausted()
 *
 * Return: true if a client was refused (the listener may have more)
 */
static bool refuse_exhausted(struct fwd *f, int err)
{
	static struct log_limit limit;
	struct ctx *c = f->hs->c;
	int fd;

	err_limited(&limit, err, "accept on port %u: refusing connections",
	            f->s.host_port);
	fd = fdlimit_accept_spare(c, f->fd);
	if (fd < 0) {
		fdlimit_pause(f->ev, f->pause);
		return false;
	}
	fwd_reset_close(fd);
	fdlimit_restore(c);
	return true;
}

/**
 * tcp_accept_cb() - accept connections on a TCP forward
 * @lfd:	listening socket
 * @what:	unused
 * @arg:	struct fwd
 *
 * With pasta's --host-lo-to-ns-lo, a client on the host's loopback is
 * spliced to the namespace's loopback, where a server bound there only
 * (Docker's proxy for -p 127.0.0.1:P:Q) answers it. While network
 * conditions are in force, spliced forwards take the tap instead, where
 * the conditions apply (cond.c).
 */
static void tcp_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct fwd *f = arg;
	struct ctx *c = f->hs->c;

	(void)what;
	for (int i = 0; i < HOSTFWD_BATCH; i++) {
		union sockaddr_inany peer;
		socklen_t len = sizeof(peer);
		struct in6_addr lo;
		int fd = accept4((int)lfd, &peer.sa, &len,
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (fdlimit_exhausted(errno) &&
			    refuse_exhausted(f, errno))
				continue;
			return;
		}
		if (c->o->host_lo_to_ns_lo && fwd_ns_loopback(&peer, &lo))
			splice_wait_accept(f->hs->wait, fd, &peer, &lo,
			                   f->s.guest_port);
		else if (c->o->forward_mode == FORWARD_SPLICE && !cond_active())
			splice_wait_accept(f->hs->wait, fd, &peer,
			                   &f->s.guest_addr, f->s.guest_port);
		else
			to_tap(c, fd, &peer, &f->s.guest_addr, f->s.guest_port);
	}
}

/**
 * udp_recv_cb() - pass datagrams on a UDP forward to the UDP module
 * @lfd:	bound socket
 * @what:	unused
 * @arg:	struct fwd
 */
static void udp_recv_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct fwd *f = arg;

	(void)what;
	udp_listener_read(f->hs->c, (int)lfd, &f->s.guest_addr, f->s.guest_port,
	                  &f->rxq_ovfl);
}

/**
 * fwd_free() - close a forward's socket and free it
 * @f:		forward
 *
 * UDP flows answer through the listener: they must go before its fd
 * number can be reused.
 */
static void fwd_free(struct fwd *f)
{
	if (f->ev)
		event_free(f->ev);
	if (f->pause)
		event_free(f->pause);
	if (f->fd >= 0 && f->s.udp)
		udp_listener_closed(f->hs->c, f->fd);
	if (f->fd >= 0)
		close(f->fd);
	free(f);
}

/**
 * find_duplicate() - a forward of the same protocol, address and port
 * @hs:		forward table
 * @s:		candidate
 *
 * Return: the existing forward, or NULL
 */
static const struct fwd *find_duplicate(const struct hostfwd_state *hs,
                                        const struct hostfwd_spec *s)
{
	for (size_t i = 0; i < hs->n; i++) {
		const struct hostfwd_spec *o = &hs->fwds[i]->s;

		if (o->udp == s->udp && o->host_port == s->host_port &&
		    inany_equal(&o->host_addr, &s->host_addr))
			return hs->fwds[i];
	}
	return NULL;
}

/**
 * hostfwd_add() - listen for a new forward
 * @c:		context
 * @s:		forward to add; @s->id is set on success
 * @why:	on failure, the reason (names the forward and the errno text)
 * @whylen:	size of @why
 *
 * Return: 0 on success, -errno on failure
 */
int hostfwd_add(struct ctx *c, struct hostfwd_spec *s, char *why, size_t whylen)
{
	struct hostfwd_state *hs = c->hostfwd;
	const struct fwd *dup = find_duplicate(hs, s);
	struct fwd *f;
	char name[128];

	hostfwd_spec_str(s, name, sizeof(name));
	if (dup) {
		snprintf(why, whylen, "%s: port already forwarded (id %u)",
		         name, dup->s.id);
		return -EADDRINUSE;
	}
	if (hs->n == HOSTFWD_MAX) {
		snprintf(why, whylen, "%s: %d forwards already", name,
		         HOSTFWD_MAX);
		return -ENOSPC;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(why, whylen, "%s: %s", name, strerror(ENOMEM));
		return -ENOMEM;
	}
	f->hs = hs;
	f->s = *s;
	f->fd = open_listener(s, c->o->pasta && c->o->pasta->freebind, why,
	                      whylen);
	if (f->fd < 0) {
		free(f);
		return -EADDRNOTAVAIL;
	}
	f->ev = event_new(c->base, f->fd, EV_READ | EV_PERSIST,
	                  s->udp ? udp_recv_cb : tcp_accept_cb, f);
	f->pause = evtimer_new(c->base, resume_cb, f);
	if (!f->ev || !f->pause || event_add(f->ev, NULL)) {
		snprintf(why, whylen, "%s: libevent failed", name);
		fwd_free(f);
		return -ENOMEM;
	}
	f->s.id = s->id = hs->next_id++;
	hs->fwds[hs->n++] = f;
	if (!s->udp && c->o->forward_mode == FORWARD_SPLICE)
		nssock_prime(hs->pool);
	debug_msg("forward %u added: %s", s->id, name);
	return 0;
}

/**
 * hostfwd_remove() - stop listening for a forward
 * @c:		context
 * @id:		its id
 *
 * Connections already made through it stay up.
 *
 * Return: 0 on success, -ENOENT if there is no forward @id
 */
int hostfwd_remove(struct ctx *c, unsigned int id)
{
	struct hostfwd_state *hs = c->hostfwd;

	for (size_t i = 0; i < hs->n; i++) {
		if (hs->fwds[i]->s.id != id)
			continue;
		fwd_free(hs->fwds[i]);
		memmove(&hs->fwds[i], &hs->fwds[i + 1],
		        (hs->n - i - 1) * sizeof(hs->fwds[0]));
		hs->n--;
		debug_msg("forward %u removed", id);
		return 0;
	}
	return -ENOENT;
}

/**
 * hostfwd_entry() - the forward at position @i, in the order of addition
 * @c:		context
 * @i:		position, from 0
 *
 * Return: the forward, or NULL past the end
 */
const struct hostfwd_spec *hostfwd_entry(const struct ctx *c, size_t i)
{
	return i < c->hostfwd->n ? &c->hostfwd->fwds[i]->s : NULL;
}

/**
 * hostfwd_pool() - the namespace socket pool, for other users of the
 *		    namespace's sockets (pasta's -T)
 * @c:		context, after hostfwd_init()
 *
 * Return: the pool
 */
struct nssock_pool *hostfwd_pool(const struct ctx *c)
{
	return c->hostfwd->pool;
}

/**
 * hostfwd_splicer() - the splice state, shared likewise
 * @c:		context, after hostfwd_init()
 *
 * Return: the splice state
 */
struct splice_state *hostfwd_splicer(const struct ctx *c)
{
	return c->hostfwd->splice;
}

/**
 * hostfwd_status() - counters for get_info
 * @c:		context
 * @st:		filled
 */
void hostfwd_status(const struct ctx *c, struct hostfwd_status *st)
{
	const struct hostfwd_state *hs = c->hostfwd;

	st->forwards = hs->n;
	st->splice_conns = splice_conns(hs->splice);
	st->splice_total = splice_total(hs->splice);
	st->splice_waiting = splice_wait_count(hs->wait);
	st->splice_fallbacks = hs->fallbacks;
	st->splice_refused = hs->refused;
	st->pool_inet = nssock_count(hs->pool, AF_INET);
	st->pool_inet6 = nssock_count(hs->pool, AF_INET6);
	st->pool_refills = nssock_refills(hs->pool);
	st->pool_helper = nssock_helper(hs->pool, &st->pool_wait_ms);
}

/**
 * raise_fd_limit() - lift the soft RLIMIT_NOFILE to the hard limit
 *
 * Every forwarded connection costs fds (six when spliced), and the usual
 * soft limit of 1024 would cap a busy forward at about 170 connections.
 * The loop uses epoll, so high fd numbers are harmless.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		debug_msg("raise RLIMIT_NOFILE: %s", strerror(errno));
}

/**
 * hostfwd_init() - create the empty forward table
 * @c:		context with its event base
 *
 * Return: 0 on success, -1 after printing one error line
 */
int hostfwd_init(struct ctx *c)
{
	struct hostfwd_state *hs = calloc(1, sizeof(*hs));

	if (!hs) {
		err_errno(ENOMEM, "port forward table");
		return -1;
	}
	hs->c = c;
	hs->next_id = 1;
	c->hostfwd = hs;
	hs->pool = nssock_new(c);
	hs->splice = hs->pool ? splice_new(c, hs->pool) : NULL;
	hs->wait = hs->splice
	                   ? splice_wait_new(c, hs->splice, hs->pool, unspliced)
	                   : NULL;
	if (!hs->wait) {
		err_errno(ENOMEM, "port forward table");
		return -1;
	}
	raise_fd_limit();
	/* Later, a sandboxed or filtered tapir could not start the helper
	 * that makes the namespace's sockets: start it now.
	 */
	if (c->o->forward_mode == FORWARD_SPLICE || c->o->host_lo_to_ns_lo)
		nssock_prime(hs->pool);
	if (c->o->host_lo_to_ns_lo)
		nssock_prime_udp(hs->pool);
	return 0;
}

/**
 * hostfwd_publish() - add the forwards of -p/--publish
 * @c:		context, after hostfwd_init()
 *
 * They take ids 1..N, in command-line order, before any API request.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int hostfwd_publish(struct ctx *c)
{
	char why[256];

	for (unsigned int i = 0; i < c->o->npublish; i++) {
		const struct publish *p = &c->o->publish[i];
		struct hostfwd_spec s = {
		        .udp = p->udp,
		        .host_port = p->host_port,
		        .guest_port = p->guest_port,
		};

		inany_from_v4(&s.host_addr, p->host_addr);
		inany_from_v4(&s.guest_addr, c->guest4);
		if (hostfwd_add(c, &s, why, sizeof(why))) {
			err_msg("publish: %s", why);
			return -1;
		}
	}
	return 0;
}

/**
 * hostfwd_cleanup() - close every forward and spliced connection
 * @c:		context
 */
void hostfwd_cleanup(struct ctx *c)
{
	struct hostfwd_state *hs = c->hostfwd;

	if (!hs)
		return;
	for (size_t i = 0; i < hs->n; i++)
		fwd_free(hs->fwds[i]);
	splice_wait_free(hs->wait);
	splice_free(hs->splice);
	nssock_free(hs->pool);
	free(hs);
	c->hostfwd = NULL;
}
