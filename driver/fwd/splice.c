// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - spliced TCP forwards: host socket to namespace socket via pipes
 *
 * The fast path of a TCP port forward (--forward-mode=splice), after
 * pasta's tcp_splice.c: the accepted host socket is joined to a socket
 * connected from inside the namespace, and bytes move between them with
 * splice() through one pipe per direction, never entering user space and
 * never crossing the tap. The namespace side sees a local peer, so the
 * client's address is lost.
 *
 * Per direction d (from side d to the other side), the pipe is drained
 * before the next read, which keeps the readiness logic unambiguous: an
 * EAGAIN from a read into an empty pipe means the socket is empty, and an
 * EAGAIN from a write means the receiver is full. FIN travels as
 * shutdown(SHUT_WR) once the pipe is empty; an error on either socket
 * resets both.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/flow/fwd.h"
#include "driver/fwd/hostfwd.h"
#include "driver/core/log.h"
#include "driver/host/nssock.h"
#include "driver/fwd/splice.h"

/* Syscalls of spliced connections, once running. */
const char *const splice_syscalls[] = {
        "splice",     "pipe2",      "fcntl", "connect", "shutdown",
        "getsockopt", "setsockopt", "close", NULL,
};

/* Pipe size asked for; the kernel may refuse (pipe-user-pages-soft). */
#define SPLICE_PIPE_SIZE (256 * 1024)
/* A local connect either completes at once or the server is stuck. */
#define SPLICE_CONNECT_TIMEOUT_S 10
/* Pipe fills per callback before yielding to other connections. */
#define SPLICE_ROUNDS 8

enum side {
	SIDE_HOST, /* on the host: a client (forwards), or a server (-T) */
	SIDE_NS,   /* in the namespace: a server, or a client (-T) */
};

/**
 * struct splice_conn - one spliced connection
 * @st:		owner
 * @prev:	previous in @st->conns
 * @next:	next in @st->conns
 * @fd:		sockets by side
 * @pipe:	pipe[d] carries data from side d: [0] read end, [1] write end
 * @cap:	capacity of pipe[d] in bytes
 * @queued:	bytes waiting in pipe[d]
 * @rev:	rev[s]: side s readable (feeds direction s)
 * @wev:	wev[s]: side s writable (drains direction !s; the connect)
 * @connecting:	the side tapir connects (the other was accepted)
 * @connected:	that side's connect() completed
 * @eof:	side d sent FIN
 * @shut:	FIN from side d was passed on (direction d is over)
 * @port:	destination port inside the namespace, for messages
 */
struct splice_conn {
	struct splice_state *st;
	struct splice_conn *prev;
	struct splice_conn *next;
	int fd[2];
	int pipe[2][2];
	size_t cap[2];
	size_t queued[2];
	struct event *rev[2];
	struct event *wev[2];
	enum side connecting;
	bool connected;
	bool eof[2];
	bool shut[2];
	uint16_t port;
};

/**
 * struct splice_state - all spliced connections
 * @c:		context
 * @pool:	source of namespace sockets
 * @conns:	open connections
 * @nconns:	entries in @conns
 * @noutward:	of those, accepted in the namespace (splice_outward())
 * @total:	connections accepted since start
 * @warned:	the connection limit was reported
 */
struct splice_state {
	struct ctx *c;
	struct nssock_pool *pool;
	struct splice_conn *conns;
	size_t nconns;
	size_t noutward;
	uint64_t total;
	bool warned;
};

/**
 * conn_close() - tear a connection down and free it
 * @sc:		connection
 * @reset:	abort both sockets (error) rather than close them
 */
static void conn_close(struct splice_conn *sc, bool reset)
{
	struct splice_state *st = sc->st;

	for (int s = 0; s < 2; s++) {
		if (sc->rev[s])
			event_free(sc->rev[s]);
		if (sc->wev[s])
			event_free(sc->wev[s]);
		if (reset)
			fwd_reset_close(sc->fd[s]);
		else if (sc->fd[s] >= 0)
			close(sc->fd[s]);
		for (int e = 0; e < 2; e++)
			if (sc->pipe[s][e] >= 0)
				close(sc->pipe[s][e]);
	}
	if (sc->prev)
		sc->prev->next = sc->next;
	else
		st->conns = sc->next;
	if (sc->next)
		sc->next->prev = sc->prev;
	st->nconns--;
	if (sc->connecting == SIDE_HOST)
		st->noutward--;
	free(sc);
}

/**
 * libevent_failed() - report that a connection's events could not be set
 * @sc:		connection, which the caller resets
 */
static void libevent_failed(const struct splice_conn *sc)
{
	static struct log_limit limit;

	err_limited(&limit, 0,
	            "splice: events of a connection to port %u: libevent "
	            "failed, resetting it",
	            sc->port);
}

/**
 * watch() - make @ev pending or not
 * @sc:		connection of @ev
 * @ev:		event without timeout
 * @on:		whether it should be
 *
 * libevent ignores adding an added event and deleting a deleted one, so
 * this costs nothing when the state does not change. A failure would
 * stall a direction, or spin on a level-triggered event left on: the
 * caller resets the connection.
 *
 * Return: 0, or -1 after a rate-limited line
 */
static int watch(const struct splice_conn *sc, struct event *ev, bool on)
{
	if (!(on ? event_add(ev, NULL) : event_del(ev)))
		return 0;
	libevent_failed(sc);
	return -1;
}

/**
 * drain() - move the bytes queued for direction @d into the receiver
 * @sc:		connection
 * @d:		direction (sending side)
 *
 * Return: 0 when the pipe is empty or the receiver is full, -errno on error
 */
static int drain(struct splice_conn *sc, enum side d)
{
	while (sc->queued[d]) {
		ssize_t n = splice(sc->pipe[d][0], NULL, sc->fd[!d], NULL,
		                   sc->queued[d],
		                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		if (n == 0)
			return -EPIPE;
		sc->queued[d] -= (size_t)n;
	}
	return 0;
}

/**
 * fill() - read what side @d sent into its (empty) pipe
 * @sc:		connection
 * @d:		direction (sending side)
 *
 * Return: bytes read, 0 at EOF or if nothing is there, -errno on error
 */
static ssize_t fill(struct splice_conn *sc, enum side d)
{
	ssize_t n;

	do
		n = splice(sc->fd[d], NULL, sc->pipe[d][1], NULL, sc->cap[d],
		           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		sc->eof[d] = true;
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	sc->queued[d] += (size_t)n;
	return n;
}

/**
 * move() - forward direction @d as far as the sockets allow
 * @sc:		connection
 * @d:		direction (sending side)
 *
 * Return: 0 on success, -errno if the connection must be reset
 */
static int move(struct splice_conn *sc, enum side d)
{
	int ret = drain(sc, d);

	for (int i = 0; !ret && i < SPLICE_ROUNDS; i++) {
		ssize_t n;

		if (sc->queued[d] || sc->eof[d])
			break;
		n = fill(sc, d);
		if (n <= 0) {
			ret = (int)n;
			break;
		}
		ret = drain(sc, d);
	}
	if (ret)
		return ret;
	if (sc->eof[d] && !sc->queued[d] && !sc->shut[d]) {
		if (shutdown(sc->fd[!d], SHUT_WR))
			return -errno;
		sc->shut[d] = true;
	}
	/* Read again only once the pipe is empty; wait for room if not. */
	if (watch(sc, sc->rev[d], !sc->eof[d] && !sc->queued[d]) ||
	    watch(sc, sc->wev[!d], sc->queued[d] > 0))
		return -ENOMEM;
	return 0;
}

/**
 * step() - run direction @d, then close the connection if it is over
 * @sc:		connection
 * @d:		direction (sending side)
 */
static void step(struct splice_conn *sc, enum side d)
{
	int ret = move(sc, d);

	if (ret) {
		debug_msg("splice: connection reset: %s", strerror(-ret));
		conn_close(sc, true);
	} else if (sc->shut[SIDE_HOST] && sc->shut[SIDE_NS]) {
		conn_close(sc, false);
	}
}

/**
 * side_of() - which side of @sc socket @fd is
 * @sc:		connection
 * @fd:		one of its sockets
 *
 * Return: the side
 */
static enum side side_of(const struct splice_conn *sc, evutil_socket_t fd)
{
	return fd == sc->fd[SIDE_NS] ? SIDE_NS : SIDE_HOST;
}

/**
 * connected() - the side we connected is up: start both directions
 * @sc:		connection
 *
 * Return: 0, or -1 if the events could not be set (the caller resets)
 */
static int connected(struct splice_conn *sc)
{
	sc->connected = true;
	/* Level-triggered: data the client sent already shows up at once. */
	if (watch(sc, sc->wev[sc->connecting], false) ||
	    watch(sc, sc->rev[SIDE_HOST], true) ||
	    watch(sc, sc->rev[SIDE_NS], true))
		return -1;
	return 0;
}

/**
 * read_cb() - a side is readable (or failed)
 * @fd:		its socket
 * @what:	unused
 * @arg:	struct splice_conn
 */
static void read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct splice_conn *sc = arg;

	(void)what;
	step(sc, side_of(sc, fd));
}

/**
 * write_cb() - a side is writable, or our connect finished
 * @fd:		its socket
 * @what:	EV_WRITE, or EV_TIMEOUT if the connect took too long
 * @arg:	struct splice_conn
 */
static void write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct splice_conn *sc = arg;
	enum side s = side_of(sc, fd);
	socklen_t len = sizeof(int);
	int err = 0;

	if (sc->connected) {
		step(sc, !s);
		return;
	}
	if (what & EV_TIMEOUT)
		err = ETIMEDOUT;
	else if (getsockopt((int)fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (err) {
		debug_msg("splice: connect %s: %s",
		          sc->connecting == SIDE_NS ? "in namespace"
		                                    : "on the host",
		          strerror(err));
		conn_close(sc, true);
		return;
	}
	if (connected(sc))
		conn_close(sc, true);
}

/**
 * open_pipe() - one non-blocking pipe, enlarged if the kernel agrees
 * @p:		filled with the read and write ends
 * @cap:	filled with its capacity
 *
 * Return: 0 on success, -errno on failure
 */
static int open_pipe(int p[2], size_t *cap)
{
	int size;

	if (pipe2(p, O_NONBLOCK | O_CLOEXEC))
		return -errno;
	/* Over the per-user quota this fails: the default size still works. */
	size = fcntl(p[0], F_SETPIPE_SZ, SPLICE_PIPE_SIZE);
	if (size < 0)
		size = fcntl(p[0], F_GETPIPE_SZ);
	*cap = size > 0 ? (size_t)size : 65536;
	return 0;
}

/**
 * conn_new() - allocate a connection with its pipes and events
 * @st:		owner
 * @hostfd:	host socket: accepted, or unconnected (@connecting)
 * @nsfd:	namespace socket: unconnected, or accepted
 * @connecting:	the side we connect (the other was accepted)
 *
 * On failure the caller still owns both sockets.
 *
 * Return: the connection, linked into @st, or NULL with errno set
 */
static struct splice_conn *conn_new(struct splice_state *st, int hostfd,
                                    int nsfd, enum side connecting)
{
	struct splice_conn *sc = calloc(1, sizeof(*sc));
	struct event_base *base = st->c->base;
	int err = ENOMEM;

	if (!sc)
		return NULL;
	sc->st = st;
	sc->connecting = connecting;
	sc->fd[SIDE_HOST] = hostfd;
	sc->fd[SIDE_NS] = nsfd;
	memset(sc->pipe, -1, sizeof(sc->pipe));
	for (int s = 0; s < 2; s++) {
		if ((err = -open_pipe(sc->pipe[s], &sc->cap[s])))
			goto fail;
		sc->rev[s] = event_new(base, sc->fd[s], EV_READ | EV_PERSIST,
		                       read_cb, sc);
		sc->wev[s] = event_new(base, sc->fd[s], EV_WRITE | EV_PERSIST,
		                       write_cb, sc);
		if (!sc->rev[s] || !sc->wev[s])
			goto fail;
	}
	sc->next = st->conns;
	if (st->conns)
		st->conns->prev = sc;
	st->conns = sc;
	st->nconns++;
	st->noutward += connecting == SIDE_HOST;
	st->total++;
	return sc;
fail:
	for (int s = 0; s < 2; s++) {
		if (sc->rev[s])
			event_free(sc->rev[s]);
		if (sc->wev[s])
			event_free(sc->wev[s]);
		for (int e = 0; e < 2; e++)
			if (sc->pipe[s][e] >= 0)
				close(sc->pipe[s][e]);
	}
	free(sc);
	errno = err ? err : ENOMEM;
	return NULL;
}

/**
 * refuse_over_limit() - reset a new connection if there are too many
 * @st:		splice state
 * @fd:		the accepted socket; closed if refused
 * @outward:	accepted in the namespace (pasta's -T): those have a
 *		budget of their own within the whole, so that a container
 *		cannot use up the connections of the host's clients
 *
 * Return: true if @fd was refused
 */
static bool refuse_over_limit(struct splice_state *st, int fd, bool outward)
{
	if (st->nconns < SPLICE_MAX_CONNS &&
	    (!outward || st->noutward < SPLICE_MAX_OUTWARD))
		return false;
	if (!st->warned)
		err_msg("splice: %zu connections open, %zu of them from the "
		        "namespace: refusing more",
		        st->nconns, st->noutward);
	st->warned = true;
	fwd_reset_close(fd);
	return true;
}

/**
 * set_nodelay() - TCP_NODELAY on one side of a spliced connection
 * @fd:		its socket
 * @dport:	the connection's port, for the message
 *
 * Without it, small writes wait for ACKs: slower, not wrong.
 */
static void set_nodelay(int fd, uint16_t dport)
{
	static struct log_limit lim;
	const int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		err_limited(&lim, errno,
		            "splice: TCP_NODELAY on a connection to port %u",
		            dport);
}

/**
 * start_connect() - connect the side @sc->connecting, and splice once up
 * @sc:		new connection
 * @sa:		where to
 * @salen:	its length
 */
static void start_connect(struct splice_conn *sc,
                          const union sockaddr_inany *sa, socklen_t salen)
{
	const struct timeval tv = {SPLICE_CONNECT_TIMEOUT_S, 0};
	int fd = sc->fd[sc->connecting];

	if (!connect(fd, &sa->sa, salen)) {
		if (connected(sc))
			conn_close(sc, true);
	} else if (errno == EINPROGRESS) {
		if (event_add(sc->wev[sc->connecting], &tv)) {
			libevent_failed(sc);
			conn_close(sc, true);
		}
	} else {
		debug_msg("splice: connect: %s", strerror(errno));
		conn_close(sc, true);
	}
}

/**
 * splice_accept() - splice an accepted host connection into the namespace
 * @st:		splice state
 * @fd:		accepted, non-blocking host socket; consumed unless -EAGAIN
 * @dst:	destination inside the namespace (the forward's guest_addr)
 * @dport:	destination port, host order
 *
 * When no connection can be made, the client sees a reset; when no
 * namespace socket is ready, the caller decides.
 *
 * Return: 0 if @fd was taken (spliced or reset), -EAGAIN if no namespace
 *	   socket is ready right now (@fd is still the caller's)
 */
int splice_accept(struct splice_state *st, int fd, const struct in6_addr *dst,
                  uint16_t dport)
{
	static struct log_limit conn_limit;
	union sockaddr_inany sa;
	struct splice_conn *sc;
	socklen_t salen;
	int nsfd;

	if (refuse_over_limit(st, fd, false))
		return 0;
	sockaddr_from_inany(&sa, &salen, dst, dport);
	nsfd = nssock_get(st->pool, sa.sa.sa_family, SOCK_STREAM);
	if (nsfd < 0)
		return -EAGAIN;
	set_nodelay(fd, dport);
	sc = conn_new(st, fd, nsfd, SIDE_NS);
	if (!sc) {
		/* Out of fds for the pipes, say: a client can repeat it. */
		err_limited(&conn_limit, errno,
		            "splice: new connection to port %u: refusing it",
		            dport);
		fwd_reset_close(fd);
		close(nsfd);
		return 0;
	}
	sc->port = dport;
	start_connect(sc, &sa, salen);
	return 0;
}

/**
 * splice_outward() - splice a connection accepted in the namespace out to
 *		      a host address (pasta's -T)
 * @st:		splice state
 * @fd:		accepted, non-blocking namespace socket; always consumed
 * @dst:	destination on the host
 * @dport:	destination port, host order
 *
 * When no connection can be made, the client in the namespace sees a
 * reset.
 */
void splice_outward(struct splice_state *st, int fd, const struct in6_addr *dst,
                    uint16_t dport)
{
	static struct log_limit conn_limit;
	union sockaddr_inany sa;
	struct splice_conn *sc;
	socklen_t salen;
	int hostfd;

	if (refuse_over_limit(st, fd, true))
		return;
	set_nodelay(fd, dport);
	sockaddr_from_inany(&sa, &salen, dst, dport);
	hostfd = socket(sa.sa.sa_family,
	                SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	sc = hostfd < 0 ? NULL : conn_new(st, hostfd, fd, SIDE_HOST);
	if (!sc) {
		err_limited(&conn_limit, errno,
		            "splice: new connection to host port %u: refusing "
		            "it",
		            dport);
		fwd_reset_close(fd);
		if (hostfd >= 0)
			close(hostfd);
		return;
	}
	set_nodelay(hostfd, dport);
	sc->port = dport;
	start_connect(sc, &sa, salen);
}

/**
 * splice_new() - create the splice state
 * @c:		context
 * @pool:	namespace socket pool, owned by the caller
 *
 * Return: the state, or NULL on ENOMEM
 */
struct splice_state *splice_new(struct ctx *c, struct nssock_pool *pool)
{
	struct splice_state *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->c = c;
	st->pool = pool;
	return st;
}

/**
 * conn_close_at_exit() - close a connection tapir stops carrying
 * @sc:		connection
 *
 * A socket whose peer already had the other side's FIN closes as usual:
 * the kernel still delivers what it holds. The peer of any other socket
 * gets a reset, as a FIN would tell it that the other side sent all it
 * meant to.
 */
static void conn_close_at_exit(struct splice_conn *sc)
{
	for (int s = 0; s < 2; s++)
		if (!sc->shut[!s])
			fwd_reset_on_close(sc->fd[s]);
	conn_close(sc, false);
}

/**
 * splice_free() - close every connection and free @st
 * @st:		splice state, or NULL
 */
void splice_free(struct splice_state *st)
{
	if (!st)
		return;
	while (st->conns)
		conn_close_at_exit(st->conns);
	free(st);
}

/**
 * splice_conns() - spliced connections open now
 * @st:		splice state
 *
 * Return: count
 */
size_t splice_conns(const struct splice_state *st)
{
	return st->nconns;
}

/**
 * splice_total() - spliced connections accepted since start
 * @st:		splice state
 *
 * Return: count
 */
uint64_t splice_total(const struct splice_state *st)
{
	return st->total;
}
