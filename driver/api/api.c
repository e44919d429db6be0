// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - the API socket: non-blocking connections, one request each
 *
 * slirp4netns served its API inline in the packet loop with a blocking
 * accept() and read(), so one silent client stopped all traffic. Here each
 * connection is a non-blocking socket with its own events: bytes are
 * collected as they come (at most API_MAX_REQUEST), the request is
 * answered with one write of compact JSON without a newline, and the
 * connection is closed. A client silent for API_TIMEOUT_S gets an error,
 * and at most API_MAX_CONNS are open: a new one evicts the oldest idle one.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <event2/event.h>

#include "driver/api/api.h"
#include "driver/host/fdlimit.h"
#include "driver/sandbox/janitor.h"
#include "driver/core/log.h"
#include "driver/thread/thread.h"

/* What the API socket calls once running (seccomp.c allows exactly the
 * union of these lists): connections, get_info's pid and kernel release.
 * The socket file is removed at exit by the janitor (janitor.c).
 */
const char *const api_syscalls[] = {
        "accept4", "recvfrom", "read",  "sendto", "write",
        "close",   "getpid",   "uname", NULL,
};

/* Pending connections the kernel queues before we accept them. */
#define API_BACKLOG 16
/* After the reply, bytes of the client's we read and drop at most. */
#define API_DRAIN_MAX (1 << 20)

/**
 * struct api_conn - one client connection
 * @st:		owner
 * @prev:	previous in @st->conns
 * @next:	next in @st->conns
 * @fd:		the connection
 * @ev:		read event (with the idle timeout), then write event
 * @len:	bytes in @buf
 * @buf:	request bytes; one more than allowed, to notice too many
 * @reply:	reply text being written, malloc'd, or NULL
 * @rlen:	its length
 * @roff:	bytes of it written
 * @drained:	bytes dropped after the reply
 * @waiting:	a get_stats waits for the datapath threads' counters
 *		(threads_stats_ask()); nothing is read meanwhile
 */
struct api_conn {
	struct api_state *st;
	struct api_conn *prev;
	struct api_conn *next;
	int fd;
	struct event *ev;
	size_t len;
	char buf[API_MAX_REQUEST + 1];
	char *reply;
	size_t rlen;
	size_t roff;
	size_t drained;
	bool waiting;
};

/**
 * struct api_state - the listening socket and its connections
 * @c:		context
 * @fd:		listening socket
 * @ev:		accept event
 * @pause:	timer that re-arms @ev after a pause (fdlimit_pause())
 * @conns:	open connections
 * @nconns:	entries in @conns
 */
struct api_state {
	struct ctx *c;
	int fd;
	struct event *ev;
	struct event *pause;
	struct api_conn *conns;
	unsigned int nconns;
};

/**
 * conn_free() - close a connection and free it
 * @ac:		connection
 */
static void conn_free(struct api_conn *ac)
{
	struct api_state *st = ac->st;

	if (ac->waiting)
		threads_stats_forget(st->c, ac);
	if (ac->ev)
		event_free(ac->ev);
	close(ac->fd);
	free(ac->reply);
	if (ac->prev)
		ac->prev->next = ac->next;
	else
		st->conns = ac->next;
	if (ac->next)
		ac->next->prev = ac->prev;
	st->nconns--;
	free(ac);
}

/**
 * watch_failed() - report a client connection closed for want of an event
 * @st:		API state
 */
static void watch_failed(const struct api_state *st)
{
	static struct log_limit limit;

	err_limited(&limit, 0,
	            "API socket %s: watch a client: libevent failed, "
	            "closing it",
	            st->c->o->api_socket);
}

/**
 * switch_event() - replace the connection's event
 * @ac:		connection
 * @what:	EV_READ or EV_WRITE
 * @cb:		callback
 *
 * On failure the connection is freed.
 */
static void switch_event(struct api_conn *ac, short what, event_callback_fn cb)
{
	const struct timeval tv = {API_TIMEOUT_S, 0};

	event_free(ac->ev);
	ac->ev = event_new(ac->st->c->base, ac->fd, what | EV_PERSIST, cb, ac);
	if (!ac->ev || event_add(ac->ev, &tv)) {
		watch_failed(ac->st);
		conn_free(ac);
	}
}

/**
 * drain_cb() - drop what the client still sends, until it closes
 * @fd:		the connection
 * @what:	EV_READ, or EV_TIMEOUT
 * @arg:	struct api_conn
 *
 * Closing a unix socket with unread bytes resets the peer: its pending
 * write fails with EPIPE, and a read may fail with ECONNRESET before the
 * reply is seen. Waiting for the client's EOF lets a client that sent more
 * than it should (a too large request) still read its reply.
 */
static void drain_cb(evutil_socket_t fd, short what, void *arg)
{
	static char scratch[4096];
	struct api_conn *ac = arg;
	ssize_t n;

	if (what & EV_TIMEOUT) {
		conn_free(ac);
		return;
	}
	n = recv((int)fd, scratch, sizeof(scratch), 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_free(ac);
		return;
	}
	ac->drained += (size_t)n;
	if (ac->drained > API_DRAIN_MAX)
		conn_free(ac);
}

static void write_cb(evutil_socket_t fd, short what, void *arg);

/**
 * send_reply() - write as much of the reply as the socket takes
 * @ac:		connection with @ac->reply set
 *
 * A reply normally fits the socket buffer and goes out in one write; a
 * long list may not, and the rest waits for the socket to drain. Once all
 * is written our side is shut down, so that the client sees EOF, and the
 * connection waits for the client's own EOF (drain_cb()).
 */
static void send_reply(struct api_conn *ac)
{
	while (ac->roff < ac->rlen) {
		ssize_t n = send(ac->fd, ac->reply + ac->roff,
		                 ac->rlen - ac->roff, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			conn_free(ac);
			return;
		}
		ac->roff += (size_t)n;
	}
	if (ac->roff < ac->rlen) {
		switch_event(ac, EV_WRITE, write_cb);
		return;
	}
	if (shutdown(ac->fd, SHUT_WR)) {
		conn_free(ac);
		return;
	}
	switch_event(ac, EV_READ, drain_cb);
}

/**
 * write_cb() - the socket has room for the rest of the reply
 * @fd:		the connection
 * @what:	EV_WRITE, or EV_TIMEOUT if the client stopped reading
 * @arg:	struct api_conn
 */
static void write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct api_conn *ac = arg;

	(void)fd;
	if (what & EV_TIMEOUT) {
		conn_free(ac);
		return;
	}
	send_reply(ac);
}

/**
 * reply_with() - stop reading and send @reply
 * @ac:		connection
 * @reply:	malloc'd reply text, or NULL (ENOMEM: just close)
 *
 * Reading stops because send_reply() replaces the read event (with
 * switch_event()) or frees the connection, whatever happens.
 */
static void reply_with(struct api_conn *ac, char *reply)
{
	if (!reply) {
		conn_free(ac);
		return;
	}
	ac->reply = reply;
	ac->rlen = strlen(reply);
	send_reply(ac);
}

/**
 * stats_ready() - the counters a get_stats waited for are in: reply
 * @arg:	struct api_conn
 * @sum:	every thread's counters, added up
 */
static void stats_ready(void *arg, const struct stats *sum)
{
	struct api_conn *ac = arg;

	ac->waiting = false;
	reply_with(ac, api_stats_reply(ac->st->c, sum));
}

/**
 * answer() - run the request in the buffer and reply
 * @ac:		connection with a complete request
 */
static void answer(struct api_conn *ac)
{
	struct ctx *c = ac->st->c;
	bool later = false;
	char *reply;

	debug_msg("api: request: %.*s", (int)ac->len, ac->buf);
	reply = api_answer(c, &api_hostfwd_ops, ac->buf, ac->len, &later);
	if (!later) {
		reply_with(ac, reply);
		return;
	}
	/* The reply comes from stats_ready(), maybe before this returns;
	 * until then the loop goes on, and the client is not read.
	 */
	event_del(ac->ev);
	ac->waiting = true;
	if (threads_stats_ask(c, stats_ready, ac)) {
		ac->waiting = false;
		reply_with(ac, api_error_reply("tapir: too many get_stats "
		                               "requests waiting; try again"));
	}
}

/**
 * read_cb() - request bytes arrived, or the client was silent too long
 * @fd:		the connection
 * @what:	EV_READ or EV_TIMEOUT
 * @arg:	struct api_conn
 */
static void read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct api_conn *ac = arg;
	bool eof = false;
	ssize_t n;

	if (what & EV_TIMEOUT) {
		reply_with(ac, api_error_reply("bad request: timed out "
		                               "waiting for the request"));
		return;
	}
	n = recv((int)fd, ac->buf + ac->len, sizeof(ac->buf) - ac->len, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		conn_free(ac);
		return;
	}
	if (n == 0)
		eof = true;
	ac->len += (size_t)n;
	switch (api_request_scan(ac->buf, ac->len, eof)) {
	case API_COMPLETE:
		answer(ac);
		break;
	case API_TOO_LARGE:
		reply_with(ac,
		           api_error_reply("bad request: too large message"));
		break;
	case API_MORE:
		break;
	}
}

/**
 * conn_new() - start serving an accepted connection
 * @st:		API state
 * @fd:		accepted, non-blocking
 */
static void conn_new(struct api_state *st, int fd)
{
	const struct timeval tv = {API_TIMEOUT_S, 0};
	struct api_conn *ac = calloc(1, sizeof(*ac));

	if (!ac) {
		close(fd);
		return;
	}
	ac->st = st;
	ac->fd = fd;
	ac->next = st->conns;
	if (st->conns)
		st->conns->prev = ac;
	st->conns = ac;
	st->nconns++;
	/* With EV_PERSIST the timeout restarts whenever bytes arrive. */
	ac->ev = event_new(st->c->base, fd, EV_READ | EV_PERSIST, read_cb, ac);
	if (!ac->ev || event_add(ac->ev, &tv)) {
		watch_failed(st);
		conn_free(ac);
	}
}

/**
 * refuse() - answer a connection that can't be served at once and close it
 * @fd:		accepted connection
 * @why:	the error description
 *
 * The reply is tiny and the socket buffer empty, so the write cannot
 * block; a client that reads gets a reason rather than a bare close.
 */
static void refuse(int fd, const char *why)
{
	char *reply = api_error_reply(why);

	if (reply && send(fd, reply, strlen(reply), MSG_NOSIGNAL) < 0)
		debug_msg("api: refuse connection: %s", strerror(errno));
	free(reply);
	close(fd);
}

/**
 * refuse_exhausted() - out of fds: answer one pending client, or pause
 * @st:		API state whose accept() failed
 * @err:	its errno, one of fdlimit_exhausted()
 *
 * Return: true if a client was refused (the listener may have more)
 */
static bool refuse_exhausted(struct api_state *st, int err)
{
	static struct log_limit limit;
	int fd;

	err_limited(&limit, err, "API socket %s: accept: refusing clients",
	            st->c->o->api_socket);
	fd = fdlimit_accept_spare(st->c, st->fd);
	if (fd < 0) {
		fdlimit_pause(st->ev, st->pause);
		return false;
	}
	refuse(fd, "tapir: too many open files; try again later");
	fdlimit_restore(st->c);
	return true;
}

/**
 * evict_oldest() - make room for a new client by closing an old one that
 *		    is not in the middle of receiving its reply
 * @st:		API state at API_MAX_CONNS
 *
 * Refusing new clients while the table is full would let API_MAX_CONNS
 * silent clients (a bug, or a local user) lock rootlesskit and podman out
 * of the API for API_TIMEOUT_S at a time, again and again. In the order
 * that costs least: the oldest one that has sent nothing (a real client
 * sends its request as soon as it connects, and is not the oldest for
 * long); else the oldest one that has its whole reply and only waits for
 * the client's EOF (closed early, it could reset a client that sent more
 * than its request, see api_conn); else the oldest one still reading a
 * request. An evicted reader gets an error, as a timed out one does.
 *
 * Return: true if a connection was closed, false if every one is still
 *	   being sent a reply (the new client is refused then)
 */
static bool evict_oldest(struct api_state *st)
{
	struct api_conn *silent = NULL, *reading = NULL, *draining = NULL;
	struct api_conn *victim;
	char *reply;

	/* New connections go to the head: the last match is the oldest. */
	for (struct api_conn *ac = st->conns; ac; ac = ac->next) {
		if (ac->reply && ac->roff == ac->rlen)
			draining = ac;
		else if (!ac->reply && !ac->len)
			silent = ac;
		else if (!ac->reply && !ac->waiting)
			reading = ac;
	}
	if (!silent && draining) {
		conn_free(draining);
		return true;
	}
	victim = silent ? silent : reading;
	if (!victim)
		return false;
	reply = api_error_reply("bad request: too many connections; "
	                        "closed this idle one");
	if (reply && send(victim->fd, reply, strlen(reply),
	                  MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		debug_msg("api: evict idle client: %s", strerror(errno));
	free(reply);
	conn_free(victim);
	return true;
}

/**
 * resume_cb() - accept again after fdlimit_pause()
 * @fd:		unused
 * @what:	unused
 * @arg:	struct api_state
 *
 * If the listener can't be watched again, it would stay deaf: the pause
 * is taken once more, and the next one retries.
 */
static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	static struct log_limit limit;
	struct api_state *st = arg;

	(void)fd;
	(void)what;
	if (!event_add(st->ev, NULL))
		return;
	err_limited(&limit, 0,
	            "API socket %s: resume listening: libevent "
	            "failed",
	            st->c->o->api_socket);
	fdlimit_pause(st->ev, st->pause);
}

/**
 * accept_cb() - accept new API connections
 * @lfd:	listening socket
 * @what:	unused
 * @arg:	struct api_state
 */
static void accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct api_state *st = arg;

	(void)what;
	for (int i = 0; i < API_BACKLOG; i++) {
		int fd = accept4((int)lfd, NULL, NULL,
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (fdlimit_exhausted(errno) &&
			    refuse_exhausted(st, errno))
				continue;
			return;
		}
		if (st->nconns >= API_MAX_CONNS && !evict_oldest(st))
			refuse(fd, "bad request: too many connections");
		else
			conn_new(st, fd);
	}
}

/**
 * api_path_error() - print one line for a failed step on the socket path
 * @path:	socket path
 * @err:	errno
 * @step:	what failed
 *
 * Return: -1
 */
static int api_path_error(const char *path, int err, const char *step)
{
	err_errno(err, "API socket %s: %s", path, step);
	return -1;
}

/**
 * take_stale() - remove the socket file at @path if no server answers it
 * @path:	socket path bind() found taken
 * @sa:		its address
 *
 * A live socket stays: a second instance on the same path must not take
 * the first one's API away (and remove the path at its exit). A socket a
 * killed run left is replaced, as slirp4netns does. Anything else at the
 * path, a file or a directory, is the user's and is never removed. Left:
 * an instance between its bind() and listen() looks stale, which
 * listen_at() makes a window of two system calls for tapir's own.
 *
 * Return: 0 if the path is free now, -1 after printing one error line
 */
static int take_stale(const char *path, const struct sockaddr_un *sa)
{
	struct stat st, again;
	int fd, err;

	if (lstat(path, &st))
		return errno == ENOENT ? 0
		                       : api_path_error(path, errno, "stat");
	if (!S_ISSOCK(st.st_mode)) {
		err_msg("API socket %s: %s is in the way; give a path where "
		        "tapir may create a socket",
		        path, S_ISDIR(st.st_mode) ? "a directory" : "a file");
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return api_path_error(path, errno, "socket");
	err = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) ? errno : 0;
	close(fd);
	/* The same socket still, not one a new instance put there since. */
	if (err == ECONNREFUSED && !lstat(path, &again) &&
	    (again.st_dev != st.st_dev || again.st_ino != st.st_ino))
		err = EAGAIN;
	if (err == ECONNREFUSED) {
		if (unlink(path) && errno != ENOENT)
			return api_path_error(path, errno,
			                      "remove stale socket");
		return 0;
	}
	/* EAGAIN: it listens, with its queue full. */
	if (!err || err == EAGAIN) {
		err_msg("API socket %s: another instance serves it; stop it or "
		        "choose another path",
		        path);
		return -1;
	}
	return api_path_error(path, err, "probe the socket in the way");
}

/**
 * listen_at() - bind and listen on @path, replacing a stale socket file
 * @st:		API state; fd is set
 * @path:	socket path, shorter than sun_path (checked by cli.c)
 *
 * The file is removed at exit (janitor.c), if it is still the one bound
 * here: another instance may have replaced it meanwhile.
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int listen_at(struct api_state *st, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int ret;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	st->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (st->fd < 0)
		return api_path_error(path, errno, "socket");
	ret = bind(st->fd, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	if (ret == EADDRINUSE) {
		if (take_stale(path, &sa))
			return -1;
		ret = bind(st->fd, (struct sockaddr *)&sa, sizeof(sa)) ? errno
		                                                       : 0;
	}
	if (ret)
		return api_path_error(path, ret, "bind");
	/* At once: until then, another instance's probe takes it for stale. */
	if (listen(st->fd, API_BACKLOG))
		return api_path_error(path, errno, "listen");
	if ((ret = janitor_remove_at_exit(path, false)))
		debug_msg("API socket %s: can't be removed at exit: %s", path,
		          strerror(-ret));
	return 0;
}

/**
 * api_init() - listen on --api-socket, if given
 * @c:		context, after hostfwd_init()
 *
 * Called before the ready fd is written: clients may connect as soon as
 * rootlesskit or podman see the ready byte.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int api_init(struct ctx *c)
{
	struct api_state *st;

	if (!c->o->api_socket[0])
		return 0;
	st = calloc(1, sizeof(*st));
	if (!st) {
		err_errno(ENOMEM, "API socket");
		return -1;
	}
	st->c = c;
	st->fd = -1;
	c->api = st;
	if (listen_at(st, c->o->api_socket))
		return -1;
	st->ev =
	        event_new(c->base, st->fd, EV_READ | EV_PERSIST, accept_cb, st);
	st->pause = evtimer_new(c->base, resume_cb, st);
	if (!st->ev || !st->pause || event_add(st->ev, NULL)) {
		err_msg("API socket %s: libevent failed", c->o->api_socket);
		return -1;
	}
	return 0;
}

/**
 * api_cleanup() - close the API socket (janitor_finish() removes its file)
 * @c:		context
 */
void api_cleanup(struct ctx *c)
{
	struct api_state *st = c->api;

	if (!st)
		return;
	while (st->conns)
		conn_free(st->conns);
	if (st->ev)
		event_free(st->ev);
	if (st->pause)
		event_free(st->pause);
	if (st->fd >= 0)
		close(st->fd);
	free(st);
	c->api = NULL;
}
