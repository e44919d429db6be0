// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - host port forwards: listeners, the forward table, -p at start-up
 *
 * Each forward is a listening socket on the host. TCP connections take one
 * of two paths (--forward-mode): "tap" hands the accepted socket to the TCP
 * module, which opens a connection to the guest through the tap with the
 * client's address as source (loopback clients appear as the gateway);
 * "splice" connects a socket from inside the namespace and splices the two
 * (splice.c). UDP datagrams always go to the UDP module, through the tap.
 *
 * The table holds any number of forwards (pasta's -t 1-65535 is 65535 of
 * them per protocol), each allocated as it is added: a list in the order
 * of addition, and two hash indexes (by id; by protocol, port and
 * address) that grow with it. Listeners take fds up to fdlimit.c's
 * ceiling: past it a forward is refused with a line that says so.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/host/fdlimit.h"
#include "driver/flow/fwd.h"
#include "driver/fwd/hostfwd.h"
#include "driver/core/opts.h"
#include "driver/core/inany.h"
#include "driver/core/log.h"
#include "driver/host/nssock.h"
#include "driver/cond/cond.h"
#include "driver/fwd/splice.h"
#include "driver/fwd/splicewait.h"
#include "driver/tcp/tcp.h"
#include "driver/thread/thread.h"
#include "driver/udp/udp.h"

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

/* Buckets of each index at first; doubled whenever forwards outnumber
 * them.
 */
#define HOSTFWD_BUCKETS_MIN 64

/**
 * struct fwd - one forward and its listening socket
 * @s:		what the API reports
 * @hs:		owner
 * @fd:		listening TCP or bound UDP socket
 * @ev:		read event on @fd
 * @pause:	timer that re-arms @ev after a pause (fdlimit_pause())
 * @rxq_ovfl:	UDP: its socket's drop count as last seen (SO_RXQ_OVFL)
 * @prev:	the forward added before it, or NULL
 * @next:	the forward added after it, or NULL
 * @id_next:	next in its chain of the id index
 * @key_next:	next in its chain of the protocol, port and address index
 */
struct fwd {
	struct hostfwd_spec s;
	struct hostfwd_state *hs;
	int fd;
	struct event *ev;
	struct event *pause;
	uint32_t rxq_ovfl;
	struct fwd *prev;
	struct fwd *next;
	struct fwd *id_next;
	struct fwd *key_next;
};

/**
 * struct hostfwd_state - the forward table
 * @c:		context
 * @first:	the forward added first, or NULL
 * @last:	the forward added last, or NULL
 * @n:		forwards in the table
 * @by_id:	index by id: @nbuckets chains
 * @by_key:	index by protocol, port and address: @nbuckets chains
 * @nbuckets:	a power of two, at least @n
 * @cursor:	the forward hostfwd_entry() returned last, or NULL
 * @cursor_i:	its position
 * @next_id:	id of the next forward added
 * @pool:	sockets inside the namespace, for the splice path
 * @splice:	spliced connections
 * @wait:	connections waiting for a namespace socket
 * @fallbacks:	connections of spliced forwards served through the tap
 * @refused:	connections of spliced forwards reset for want of a socket
 */
struct hostfwd_state {
	struct ctx *c;
	struct fwd *first;
	struct fwd *last;
	size_t n;
	struct fwd **by_id;
	struct fwd **by_key;
	size_t nbuckets;
	struct fwd *cursor;
	size_t cursor_i;
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
	bool h6 = !inany_is_v4(&s->host_addr);

	snprintf(buf, len, "%s %s%s%s%s%s:%u -> %s:%u", s->udp ? "udp" : "tcp",
	         h6 ? "[" : "", inany_ntop(&s->host_addr, h),
	         s->ifname[0] ? "%" : "", s->ifname, h6 ? "]" : "",
	         s->host_port, inany_ntop(&s->guest_addr, g), s->guest_port);
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
 * IPV6_V6ONLY, so that "::" and "0.0.0.0" are separate forwards, unless
 * the forward is @s->dual: then one socket takes both families, as pasta's
 * forwards on every address do (one fd a port, not two). A forward bound
 * to an interface too takes SO_BINDTODEVICE, which needs no privilege
 * since Linux 5.7. A socket past fdlimit.c's ceiling is closed: -EMFILE,
 * as if socket() had failed.
 *
 * Return: the socket, or -errno
 */
static int open_listener(const struct hostfwd_spec *s, bool freebind, char *why,
                         size_t whylen)
{
	const int one = 1, v6only = !s->dual;
	union sockaddr_inany sa;
	socklen_t salen;
	const char *what;
	int fd, err;

	sockaddr_from_inany(&sa, &salen, &s->host_addr, s->host_port);
	fd = socket(sa.sa.sa_family,
	            (s->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK |
	                    SOCK_CLOEXEC,
	            0);
	if (fd < 0 || !fdlimit_listener_room(fd)) {
		err = fd < 0 ? errno : EMFILE;
		what = "socket";
		goto fail;
	}
	if (s->udp)
		udp_sock_tune(fd);
	if ((!s->udp &&
	     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) ||
	    (sa.sa.sa_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
	                sizeof(v6only))) ||
	    (freebind &&
	     setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)))) {
		err = errno;
		what = "setsockopt";
		goto fail;
	}
	if (s->ifname[0] &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, s->ifname,
	               (socklen_t)strlen(s->ifname) + 1)) {
		err = errno;
		what = "bind to the interface";
		goto fail;
	}
	if (bind(fd, &sa.sa, salen)) {
		err = errno;
		what = "bind";
		goto fail;
	}
	if (!s->udp && listen(fd, HOSTFWD_BACKLOG)) {
		err = errno;
		what = "listen";
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	hostfwd_spec_str(s, why, whylen);
	if (err == EMFILE || err == ENFILE) {
		char lim[96];

		fdlimit_describe(lim, sizeof(lim));
		snprintf(why + strlen(why), whylen - strlen(why),
		         ": no more files for listeners: %s", lim);
		return -EMFILE;
	}
	snprintf(why + strlen(why), whylen - strlen(why), ": %s: %s%s", what,
	         strerror(err),
	         err == EACCES && s->host_port < 1024
	                 ? " (ports below the sysctl "
	                   "net.ipv4.ip_unprivileged_port_start, 1024 by "
	                   "default, need privilege: use a higher port, or "
	                   "lower it)"
	                 : "");
	return -err;
}

/**
 * to_tap() - hand an accepted connection to the TCP module
 * @c:		context
 * @fd:		accepted socket
 * @peer:	the client's address
 * @gaddr:	the forward's guest_addr
 * @dport:	the forward's guest_port
 *
 * The guest sees the client and its own address as fwd_inbound_key()
 * says: the client's family kept where the guest has an address of it.
 */
static void to_tap(struct ctx *c, int fd, const union sockaddr_inany *peer,
                   const struct in6_addr *gaddr, uint16_t dport)
{
	struct flow_key k;

	fwd_inbound_key(c, peer, gaddr, dport, &k);
	thread_accept(c, fd, &k.faddr, k.fport, &k.gaddr, k.gport);
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
 * key_bucket() - the bucket of the key index for a protocol, port and
 *		  address
 * @hs:		forward table
 * @s:		forward
 *
 * Return: bucket index
 */
static size_t key_bucket(const struct hostfwd_state *hs,
                         const struct hostfwd_spec *s)
{
	uint64_t h = (uint64_t)s->host_port << 1 | s->udp;
	uint32_t w;

	for (int i = 0; i < 4; i++) {
		memcpy(&w, &s->host_addr.s6_addr[i * 4], 4);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	}
	return (size_t)(h >> 32) & (hs->nbuckets - 1);
}

/**
 * id_bucket() - the bucket of the id index for @id
 * @hs:		forward table
 * @id:		forward id
 *
 * Return: bucket index (ids are consecutive: no hash needed)
 */
static size_t id_bucket(const struct hostfwd_state *hs, unsigned int id)
{
	return id & (hs->nbuckets - 1);
}

/**
 * index_add() - put @f into both indexes
 * @hs:		forward table, with a bucket to spare
 * @f:		forward
 */
static void index_add(struct hostfwd_state *hs, struct fwd *f)
{
	size_t k = key_bucket(hs, &f->s), i = id_bucket(hs, f->s.id);

	f->key_next = hs->by_key[k];
	hs->by_key[k] = f;
	f->id_next = hs->by_id[i];
	hs->by_id[i] = f;
}

/**
 * index_del() - take @f out of both indexes
 * @hs:		forward table
 * @f:		forward, indexed
 */
static void index_del(struct hostfwd_state *hs, struct fwd *f)
{
	struct fwd **pp;

	for (pp = &hs->by_key[key_bucket(hs, &f->s)]; *pp != f;
	     pp = &(*pp)->key_next)
		;
	*pp = f->key_next;
	for (pp = &hs->by_id[id_bucket(hs, f->s.id)]; *pp != f;
	     pp = &(*pp)->id_next)
		;
	*pp = f->id_next;
}

/**
 * index_grow() - make room in the indexes for one more forward
 * @hs:		forward table
 *
 * Return: 0, or -ENOMEM (the indexes are as they were)
 */
static int index_grow(struct hostfwd_state *hs)
{
	size_t n = hs->nbuckets ? hs->nbuckets * 2 : HOSTFWD_BUCKETS_MIN;
	struct fwd **by_id, **by_key;

	if (hs->n < hs->nbuckets)
		return 0;
	by_id = calloc(n, sizeof(*by_id));
	by_key = calloc(n, sizeof(*by_key));
	if (!by_id || !by_key) {
		free(by_id);
		free(by_key);
		return -ENOMEM;
	}
	free(hs->by_id);
	free(hs->by_key);
	hs->by_id = by_id;
	hs->by_key = by_key;
	hs->nbuckets = n;
	for (struct fwd *f = hs->first; f; f = f->next)
		index_add(hs, f);
	return 0;
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
	if (!hs->nbuckets)
		return NULL;
	for (const struct fwd *f = hs->by_key[key_bucket(hs, s)]; f;
	     f = f->key_next)
		if (f->s.udp == s->udp && f->s.host_port == s->host_port &&
		    inany_equal(&f->s.host_addr, &s->host_addr))
			return f;
	return NULL;
}

/**
 * hostfwd_add() - listen for a new forward
 * @c:		context
 * @s:		forward to add; @s->id is set on success
 * @why:	on failure, the reason (names the forward and the errno text)
 * @whylen:	size of @why
 *
 * Return: 0 on success, -errno on failure: -EADDRINUSE for a duplicate,
 *	   -EMFILE past the fd ceiling (fdlimit.c), -ENOMEM, or the errno of
 *	   the step that failed (-EADDRINUSE, -EACCES...)
 */
int hostfwd_add(struct ctx *c, struct hostfwd_spec *s, char *why, size_t whylen)
{
	struct hostfwd_state *hs = c->hostfwd;
	const struct fwd *dup = find_duplicate(hs, s);
	struct fwd *f;
	char name[128];
	int ret;

	hostfwd_spec_str(s, name, sizeof(name));
	if (dup) {
		snprintf(why, whylen, "%s: port already forwarded (id %u)",
		         name, dup->s.id);
		return -EADDRINUSE;
	}
	f = calloc(1, sizeof(*f));
	if (!f || index_grow(hs)) {
		free(f);
		snprintf(why, whylen, "%s: %s", name, strerror(ENOMEM));
		return -ENOMEM;
	}
	f->hs = hs;
	f->s = *s;
	f->fd = ret = open_listener(s, c->o->pasta && c->o->pasta->freebind,
	                            why, whylen);
	if (ret < 0) {
		free(f);
		return ret;
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
	f->prev = hs->last;
	if (hs->last)
		hs->last->next = f;
	else
		hs->first = f;
	hs->last = f;
	hs->n++;
	index_add(hs, f);
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
	struct fwd *f = NULL;

	if (hs->nbuckets)
		for (f = hs->by_id[id_bucket(hs, id)]; f && f->s.id != id;
		     f = f->id_next)
			;
	if (!f)
		return -ENOENT;
	index_del(hs, f);
	if (f->prev)
		f->prev->next = f->next;
	else
		hs->first = f->next;
	if (f->next)
		f->next->prev = f->prev;
	else
		hs->last = f->prev;
	hs->n--;
	hs->cursor = NULL;
	fwd_free(f);
	debug_msg("forward %u removed", id);
	return 0;
}

/**
 * hostfwd_entry() - the forward at position @i, in the order of addition
 * @c:		context
 * @i:		position, from 0
 *
 * Callers walk the table with @i = 0, 1, 2...: the last position is
 * remembered, so that each step is one link, not a walk from the start.
 *
 * Return: the forward, or NULL past the end
 */
const struct hostfwd_spec *hostfwd_entry(const struct ctx *c, size_t i)
{
	struct hostfwd_state *hs = c->hostfwd;
	struct fwd *f = hs->first;
	size_t k = 0;

	if (i >= hs->n)
		return NULL;
	if (hs->cursor && hs->cursor_i <= i) {
		f = hs->cursor;
		k = hs->cursor_i;
	}
	for (; k < i; k++)
		f = f->next;
	hs->cursor = f;
	hs->cursor_i = i;
	return &f->s;
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
		        .host_addr = p->dual ? in6addr_any : p->host_addr,
		        .host_port = p->host_port,
		        .guest_port = p->guest_port,
		        .dual = p->dual,
		};
		int ret;

		inany_from_v4(&s.guest_addr, c->guest4);
		ret = hostfwd_add(c, &s, why, sizeof(why));
		/* A kernel without IPv6 (ipv6.disable=1): IPv4 alone. */
		if (ret == -EAFNOSUPPORT && p->dual) {
			inany_from_v4(&s.host_addr, (struct in_addr){0});
			s.dual = false;
			ret = hostfwd_add(c, &s, why, sizeof(why));
		}
		if (ret) {
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
	while (hs->first) {
		struct fwd *f = hs->first;

		hs->first = f->next;
		fwd_free(f);
	}
	free(hs->by_id);
	free(hs->by_key);
	splice_wait_free(hs->wait);
	splice_free(hs->splice);
	nssock_free(hs->pool);
	free(hs);
	c->hostfwd = NULL;
}
