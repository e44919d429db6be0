// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - benchmark helper: many concurrent TCP connections, or UDP flows,
 * through one driver
 */

/*
 * conns tcp -H ADDR -p PORT -n N [-w WINDOW] [-k INFLIGHT] [-s SIZE]
 *           [-d OPEN_S] [-D ROUNDTRIP_S] [-g]
 * conns udp -H ADDR -p PORT -n N [-k INFLIGHT] [-s SIZE] [-d SECONDS]
 *           [-T TIMEOUT_MS] [-g]
 *
 * tcp: opens N connections to ADDR:PORT, an echo server (tests/tools/
 * manyconn server), with at most WINDOW connects pending at once (default
 * 256), for at most OPEN_S seconds (default 120): connects still pending
 * then are given up. Then one SIZE-byte round trip (default 64) on every
 * connection that opened, INFLIGHT at once (default 64), for at most
 * ROUNDTRIP_S seconds (default 30), each echo checked byte for byte.
 * Every connection stays open until the end.
 *
 * udp: N sockets, each connected to ADDR:PORT (a UDP echo, tests/tools/
 * udpecho) from a port of its own, each sends one SIZE-byte datagram and
 * waits for it to come back, INFLIGHT at once, for at most SECONDS in all;
 * a datagram not back within TIMEOUT_MS (default 1000) is lost, not sent
 * again (its socket stays open, a late echo is not counted). Every socket
 * stays open until the end.
 *
 * The soft RLIMIT_NOFILE is raised to the hard one first; a client that
 * runs out of fds stops there and says so ("client_fd_limit").
 *
 * Output: one JSON object a phase on stdout, {"phase":"open",...} then
 * {"phase":"roundtrip",...} for tcp, {"phase":"udp",...} for udp. With -g
 * (gated) the client waits after each line for a line on stdin, or its
 * end, before it goes on, and after the last one for the end of stdin
 * before it closes its sockets (each wait at most GATE_MAX_S): the caller
 * measures the driver between the phases and while every connection is
 * held. Exit status 0 when it ran (whatever opened), 1 on a set-up error,
 * 2 on a usage error.
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CONNS_MAX 1000000
#define CONNS_MAX_SIZE 4096
#define CONNS_MAX_INFLIGHT 4096
#define GATE_MAX_S 600
#define EPOLL_BATCH 1024
#define ERRNO_SLOTS 256

/* What a connection or flow is doing. */
enum conn_state {
	ST_IDLE,    /* no socket yet, or not sent yet (udp) */
	ST_PENDING, /* connect in progress */
	ST_OPEN,    /* connected, nothing in flight */
	ST_WAIT,    /* a message is out, its echo not all back */
	ST_DONE,    /* the echo came back whole */
	ST_FAILED,  /* closed: error, early end or a wrong echo */
};

/**
 * struct conn - one connection (tcp) or flow (udp)
 * @fd:		socket, -1 when none
 * @state:	enum conn_state
 * @rcvd:	echo bytes read so far
 * @t0:		when its connect, or its message, started (ns)
 */
struct conn {
	int fd;
	uint8_t state;
	uint16_t rcvd;
	uint64_t t0;
};

/**
 * struct opts - the command line
 * @udp:	udp mode, else tcp
 * @gated:	-g
 * @host:	-H
 * @port:	-p
 * @n:		-n
 * @window:	-w
 * @inflight:	-k
 * @size:	-s
 * @open_s:	-d
 * @rt_s:	-D
 * @timeout_ms:	-T
 */
struct opts {
	bool udp;
	bool gated;
	const char *host;
	int port;
	int n;
	int window;
	int inflight;
	int size;
	double open_s;
	double rt_s;
	int timeout_ms;
};

/**
 * struct run - the client's state
 * @o:		options
 * @sa:		server address
 * @conns:	one per connection or flow, @o->n
 * @lat:	latencies (ns) of the phase being run
 * @nlat:	entries in @lat
 * @ep:		epoll instance
 * @errs:	failures counted by errno
 * @fd_limit:	a socket() failed with EMFILE or ENFILE
 * @nofile:	the soft RLIMIT_NOFILE after raising it
 */
struct run {
	const struct opts *o;
	struct sockaddr_in sa;
	struct conn *conns;
	uint64_t *lat;
	int nlat;
	int ep;
	int errs[ERRNO_SLOTS];
	bool fd_limit;
	long nofile;
};

/**
 * now_ns() - monotonic clock
 *
 * Return: nanoseconds since an arbitrary start
 */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/**
 * wait_ms() - how long epoll_wait() may block
 * @deadline:	ns, now_ns() clock
 * @cap_ms:	at most this
 *
 * Return: milliseconds until @deadline, at most @cap_ms, at least 0
 */
static int wait_ms(uint64_t deadline, int cap_ms)
{
	uint64_t now = now_ns();
	uint64_t ms;

	if (now >= deadline)
		return 0;
	ms = (deadline - now + 999999) / 1000000;
	return ms < (uint64_t)cap_ms ? (int)ms : cap_ms;
}

/**
 * raise_nofile() - lift the soft RLIMIT_NOFILE to the hard one
 *
 * Return: the soft limit afterwards, or -1 if it cannot be read
 */
static long raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			fprintf(stderr, "conns: raise RLIMIT_NOFILE: %s\n",
			        strerror(errno));
		if (getrlimit(RLIMIT_NOFILE, &rl))
			return -1;
	}
	return rl.rlim_cur > (rlim_t)INT32_MAX ? INT32_MAX : (long)rl.rlim_cur;
}

/**
 * byte_at() - the byte connection @i sends at offset @off
 * @i:		connection index
 * @off:	offset in its message
 *
 * Return: the byte; different per connection, so that crossed echoes show
 */
static uint8_t byte_at(int i, int off)
{
	return (uint8_t)(i * 131 + off * 7 + (i >> 8));
}

/**
 * count_err() - count one failure by its errno
 * @r:		run
 * @err:	errno value
 */
static void count_err(struct run *r, int err)
{
	if (err < 0 || err >= ERRNO_SLOTS)
		err = 0;
	r->errs[err]++;
}

/**
 * cmp_u64() - qsort() comparator for uint64_t
 * @a:		first element
 * @b:		second element
 *
 * Return: <0, 0 or >0 as *a is below, equal to or above *b
 */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/**
 * print_pct() - print "NAME":MS with the nearest-rank percentile of the
 *		 phase's sorted latencies, or null when there is none
 * @r:		run, @r->lat sorted
 * @name:	JSON key
 * @pct:	percentile, 0..100
 */
static void print_pct(const struct run *r, const char *name, double pct)
{
	long rank = (long)(pct / 100.0 * r->nlat + 0.999999);

	if (!r->nlat) {
		printf("\"%s\":null", name);
		return;
	}
	if (rank < 1)
		rank = 1;
	if (rank > r->nlat)
		rank = r->nlat;
	printf("\"%s\":%.3f", name, (double)r->lat[rank - 1] / 1e6);
}

/**
 * print_errs() - print "NAME":{"ECONNREFUSED":N,...} and reset the counts
 * @r:		run
 * @name:	JSON key
 *
 * "EOF" is an end where none was due; EMSGSIZE and EBADMSG an echo of
 * the wrong size or content.
 */
static void print_errs(struct run *r, const char *name)
{
	const char *sep = "";

	printf("\"%s\":{", name);
	for (int e = 0; e < ERRNO_SLOTS; e++) {
		const char *ename = e ? strerrorname_np(e) : "EOF";

		if (!r->errs[e])
			continue;
		if (ename)
			printf("%s\"%s\":%d", sep, ename, r->errs[e]);
		else
			printf("%s\"errno %d\":%d", sep, e, r->errs[e]);
		sep = ",";
		r->errs[e] = 0;
	}
	printf("}");
}

/**
 * print_tail() - end a phase's JSON line: the percentiles of its
 *		  latencies (sorted here), its errors, and the newline, flushed
 * @r:		run
 * @what:	the percentiles' key prefix, "connect" or "rtt"
 * @errs:	the errors' key
 */
static void print_tail(struct run *r, const char *what, const char *errs)
{
	char key[32];

	qsort(r->lat, (size_t)r->nlat, sizeof(*r->lat), cmp_u64);
	snprintf(key, sizeof(key), "%s_p50_ms", what);
	print_pct(r, key, 50);
	printf(",");
	snprintf(key, sizeof(key), "%s_p99_ms", what);
	print_pct(r, key, 99);
	printf(",");
	print_errs(r, errs);
	printf("}\n");
	fflush(stdout);
}

/**
 * gate() - with -g, wait for a line on stdin or its end
 * @r:		run
 * @to_end:	wait for the end of stdin, not just a line
 *
 * Bounded by GATE_MAX_S in all, so a caller that died never leaves the
 * client holding its sockets for long.
 */
static void gate(const struct run *r, bool to_end)
{
	uint64_t deadline = now_ns() + GATE_MAX_S * 1000000000ULL;
	struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
	char c;

	if (!r->o->gated)
		return;
	while (now_ns() < deadline) {
		ssize_t n;

		if (poll(&pfd, 1, wait_ms(deadline, 1000)) <= 0)
			continue;
		n = read(STDIN_FILENO, &c, 1);
		if (n <= 0 && !(n < 0 && errno == EINTR))
			return;
		if (n == 1 && c == '\n' && !to_end)
			return;
	}
	fprintf(stderr, "conns: no word on stdin for %d s; going on\n",
	        GATE_MAX_S);
}

/**
 * sock_err() - the pending error of a socket, as getsockopt(SO_ERROR)
 *		reports it (and clears it)
 * @fd:		socket
 *
 * Return: the errno value, 0 for none (an end, for a socket that woke up
 *	   with nothing due)
 */
static int sock_err(int fd)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	return err;
}

/**
 * drop() - close a connection that failed and count why
 * @r:		run
 * @c:		connection
 * @err:	errno, 0 for an early end
 */
static void drop(struct run *r, struct conn *c, int err)
{
	count_err(r, err);
	close(c->fd);
	c->fd = -1;
	c->state = ST_FAILED;
}

/**
 * start_connect() - open connection @i, non-blocking
 * @r:		run
 * @i:		index
 *
 * Return: 0 if started (or done at once), -1 if it failed (counted)
 */
static int start_connect(struct run *r, int i)
{
	struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = (uint32_t)i};
	struct conn *c = &r->conns[i];
	int one = 1;

	c->t0 = now_ns();
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c->fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			r->fd_limit = true;
		count_err(r, errno);
		c->state = ST_FAILED;
		return -1;
	}
	/* The round trips measure the path, not Nagle's wait. */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&r->sa, sizeof(r->sa)) &&
	    errno != EINPROGRESS) {
		drop(r, c, errno);
		return -1;
	}
	c->state = ST_PENDING;
	if (epoll_ctl(r->ep, EPOLL_CTL_ADD, c->fd, &ev)) {
		drop(r, c, errno);
		return -1;
	}
	return 0;
}

/**
 * connect_done() - a pending connect's socket became writable: settle it
 * @r:		run
 * @i:		index
 *
 * Return: 1 if it opened, 0 if it failed (counted)
 */
static int connect_done(struct run *r, int i)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
	struct conn *c = &r->conns[i];
	int err = sock_err(c->fd);

	/* From now on only an end or an error would wake it. */
	if (!err && epoll_ctl(r->ep, EPOLL_CTL_MOD, c->fd, &ev))
		err = errno;
	if (err) {
		drop(r, c, err);
		return 0;
	}
	c->state = ST_OPEN;
	r->lat[r->nlat++] = now_ns() - c->t0;
	return 1;
}

/**
 * tcp_open() - the open phase, and its JSON line
 * @r:		run
 *
 */
static void tcp_open(struct run *r)
{
	const struct opts *o = r->o;
	uint64_t start = now_ns(), end = start;
	uint64_t deadline = start + (uint64_t)(o->open_s * 1e9);
	int next = 0, pending = 0, opened = 0, failed = 0, lost = 0;
	int given_up = 0;
	struct epoll_event evs[EPOLL_BATCH];

	while (next < o->n || pending) {
		int nev;

		while (pending < o->window && next < o->n && !r->fd_limit) {
			if (start_connect(r, next++))
				failed++;
			else
				pending++;
		}
		if (r->fd_limit && !pending)
			break;
		if (now_ns() >= deadline)
			break;
		nev = epoll_wait(r->ep, evs, EPOLL_BATCH,
		                 wait_ms(deadline, 100));
		for (int k = 0; k < nev; k++) {
			int i = (int)evs[k].data.u32;
			struct conn *c = &r->conns[i];

			if (c->state == ST_PENDING) {
				pending--;
				if (connect_done(r, i))
					opened++;
				else
					failed++;
				end = now_ns();
			} else if (c->state == ST_OPEN) {
				/* The server never speaks first: an end. */
				drop(r, c, sock_err(c->fd));
				opened--;
				lost++;
			}
		}
	}
	for (int i = 0; i < next; i++) {
		if (r->conns[i].state != ST_PENDING)
			continue;
		close(r->conns[i].fd);
		r->conns[i].fd = -1;
		r->conns[i].state = ST_IDLE;
		given_up++;
	}
	if (given_up || next < o->n)
		end = now_ns();
	printf("{\"phase\":\"open\",\"proto\":\"tcp\",\"connections\":%d,"
	       "\"window\":%d,\"opened\":%d,\"failed\":%d,"
	       "\"pending_at_deadline\":%d,\"not_attempted\":%d,"
	       "\"closed_after_open\":%d,\"open_deadline_hit\":%s,"
	       "\"client_fd_limit\":%s,\"nofile\":%ld,\"open_seconds\":%.3f,"
	       "\"opens_per_s\":%.1f,",
	       o->n, o->window, opened, failed, given_up, o->n - next, lost,
	       given_up ? "true" : "false", r->fd_limit ? "true" : "false",
	       r->nofile, (double)(end - start) / 1e9,
	       end > start ? opened / ((double)(end - start) / 1e9) : 0.0);
	print_tail(r, "connect", "connect_errors");
}

/**
 * send_msg() - send connection or flow @i its message
 * @r:		run
 * @i:		index
 *
 * Return: 0 on success, -1 if it failed (counted)
 */
static int send_msg(struct run *r, int i)
{
	struct conn *c = &r->conns[i];
	uint8_t buf[CONNS_MAX_SIZE];
	ssize_t n;

	for (int k = 0; k < r->o->size; k++)
		buf[k] = byte_at(i, k);
	c->t0 = now_ns();
	c->rcvd = 0;
	n = send(c->fd, buf, (size_t)r->o->size, MSG_NOSIGNAL);
	if (n != r->o->size) {
		drop(r, c, n < 0 ? errno : EMSGSIZE);
		return -1;
	}
	c->state = ST_WAIT;
	return 0;
}

/**
 * recv_echo() - read what came back on connection or flow @i
 * @r:		run
 * @i:		index
 *
 * Return: 1 once the whole echo is back and right, 0 while it is not all
 * there, -1 if it failed (counted)
 */
static int recv_echo(struct run *r, int i)
{
	struct conn *c = &r->conns[i];
	uint8_t buf[CONNS_MAX_SIZE + 1];
	ssize_t n;

	for (;;) {
		n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n <= 0) {
			drop(r, c, n < 0 ? errno : 0);
			return -1;
		}
		if (c->rcvd + n > r->o->size ||
		    (r->o->udp && n != r->o->size)) {
			drop(r, c, EMSGSIZE);
			return -1;
		}
		for (int k = 0; k < n; k++) {
			if (buf[k] != byte_at(i, c->rcvd + k)) {
				drop(r, c, EBADMSG);
				return -1;
			}
		}
		c->rcvd += (uint16_t)n;
		if (c->rcvd == r->o->size) {
			r->lat[r->nlat++] = now_ns() - c->t0;
			c->state = ST_DONE;
			return 1;
		}
	}
}

/**
 * at_rest() - an event on a connection or flow with nothing in flight
 * @r:		run
 * @i:		index
 *
 * Return: 1 if a TCP connection ended here (closed), 0 otherwise
 */
static int at_rest(struct run *r, int i)
{
	struct conn *c = &r->conns[i];
	uint8_t buf[CONNS_MAX_SIZE + 1];

	if (c->fd < 0)
		return 0;
	if (r->o->udp) {
		/* A late echo, or a second one: not counted. */
		while (recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
			;
		return 0;
	}
	/* The server never speaks first: an end, or a stray byte. */
	drop(r, c, sock_err(c->fd));
	return 1;
}

/**
 * count_state() - connections or flows in one state
 * @r:		run
 * @state:	enum conn_state
 *
 * Return: how many
 */
static int count_state(const struct run *r, int state)
{
	int n = 0;

	for (int i = 0; i < r->o->n; i++)
		n += r->conns[i].state == state;
	return n;
}

/**
 * echo_all() - one message and its echo on every open connection or flow,
 *		at most @o->inflight at once
 * @r:		run
 * @deadline:	ns; what is not back by then is unanswered
 * @timeout:	ns after which one message is lost (udp), 0 for none
 * @res:	filled: [0] echoes back whole, [1] failed (counted in
 *		@r->errs), [2] lost after @timeout, [3] TCP connections that
 *		ended at rest
 * @end:	filled with the time the last one settled
 *
 * Messages go out in index order, so the oldest one in flight is the
 * first in that order that is still waiting. A lost flow keeps its
 * socket: the flows stay as many as there are sockets.
 */
static void echo_all(struct run *r, uint64_t deadline, uint64_t timeout,
                     int res[4], uint64_t *end)
{
	const struct opts *o = r->o;
	struct epoll_event evs[EPOLL_BATCH];
	int next = 0, oldest = 0, inflight = 0;

	memset(res, 0, 4 * sizeof(*res));
	*end = now_ns();
	while (now_ns() < deadline) {
		int nev;

		while (inflight < o->inflight && next < o->n) {
			int i = next++;

			if (r->conns[i].state != ST_OPEN)
				continue;
			if (send_msg(r, i))
				res[1]++;
			else
				inflight++;
		}
		while (oldest < next && r->conns[oldest].state != ST_WAIT)
			oldest++;
		if (timeout && oldest < next &&
		    now_ns() - r->conns[oldest].t0 >= timeout) {
			/* Counted as lost, not among the errors. */
			r->conns[oldest].state = ST_FAILED;
			inflight--;
			res[2]++;
			*end = now_ns();
			continue;
		}
		if (!inflight && next >= o->n)
			break;
		nev = epoll_wait(r->ep, evs, EPOLL_BATCH,
		                 wait_ms(deadline, 10));
		for (int k = 0; k < nev; k++) {
			int i = (int)evs[k].data.u32, rc;

			if (r->conns[i].state != ST_WAIT) {
				res[3] += at_rest(r, i);
				continue;
			}
			rc = recv_echo(r, i);
			if (!rc)
				continue;
			inflight--;
			*end = now_ns();
			res[rc > 0 ? 0 : 1]++;
		}
	}
}

/**
 * tcp_roundtrips() - the round-trip phase, and its JSON line
 * @r:		run
 */
static void tcp_roundtrips(struct run *r)
{
	const struct opts *o = r->o;
	uint64_t start = now_ns(), end;
	uint64_t deadline = start + (uint64_t)(o->rt_s * 1e9);
	int res[4], unanswered;

	r->nlat = 0;
	echo_all(r, deadline, 0, res, &end);
	/* Still waiting, or never sent for want of time: the phase ran
	 * to its deadline.
	 */
	unanswered = count_state(r, ST_WAIT) + count_state(r, ST_OPEN);
	if (unanswered)
		end = now_ns();
	printf("{\"phase\":\"roundtrip\",\"in_flight\":%d,\"size\":%d,"
	       "\"roundtrips\":%d,\"roundtrip_failed\":%d,"
	       "\"roundtrip_unanswered\":%d,\"roundtrip_deadline_hit\":%s,"
	       "\"closed_during_roundtrips\":%d,\"held\":%d,"
	       "\"roundtrip_seconds\":%.3f,\"bytes\":%ld,",
	       o->inflight, o->size, res[0], res[1], unanswered,
	       unanswered ? "true" : "false", res[3],
	       count_state(r, ST_DONE) + count_state(r, ST_WAIT) +
	               count_state(r, ST_OPEN),
	       (double)(end - start) / 1e9, 2L * o->size * res[0]);
	print_tail(r, "rtt", "roundtrip_errors");
}

/**
 * udp_sockets() - one socket a flow, connected to the server, so that
 *		   each sends from a port of its own
 * @r:		run
 *
 * Return: sockets made; fewer than @o->n at the fd limit
 */
static int udp_sockets(struct run *r)
{
	for (int i = 0; i < r->o->n; i++) {
		struct epoll_event ev = {.events = EPOLLIN,
		                         .data.u32 = (uint32_t)i};
		struct conn *c = &r->conns[i];

		c->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		if (c->fd < 0) {
			r->fd_limit = errno == EMFILE || errno == ENFILE;
			count_err(r, errno);
			c->state = ST_FAILED;
			return i;
		}
		if (connect(c->fd, (struct sockaddr *)&r->sa, sizeof(r->sa)) ||
		    epoll_ctl(r->ep, EPOLL_CTL_ADD, c->fd, &ev)) {
			drop(r, c, errno);
			return i;
		}
		c->state = ST_OPEN;
	}
	return r->o->n;
}

/**
 * udp_flows() - the udp run, and its JSON line
 * @r:		run
 */
static void udp_flows(struct run *r)
{
	const struct opts *o = r->o;
	int made = udp_sockets(r), res[4], unanswered;
	uint64_t start = now_ns(), end;
	uint64_t deadline = start + (uint64_t)(o->open_s * 1e9);

	echo_all(r, deadline, (uint64_t)o->timeout_ms * 1000000ULL, res, &end);
	unanswered = count_state(r, ST_WAIT) + count_state(r, ST_OPEN);
	if (unanswered)
		end = now_ns();
	printf("{\"phase\":\"udp\",\"proto\":\"udp\",\"flows\":%d,"
	       "\"sockets\":%d,\"in_flight\":%d,\"size\":%d,"
	       "\"timeout_ms\":%d,\"answered\":%d,\"lost\":%d,\"failed\":%d,"
	       "\"unanswered\":%d,\"deadline_hit\":%s,"
	       "\"client_fd_limit\":%s,\"nofile\":%ld,\"seconds\":%.3f,"
	       "\"flows_per_s\":%.1f,\"bytes\":%ld,",
	       o->n, made, o->inflight, o->size, o->timeout_ms, res[0], res[2],
	       res[1], unanswered, unanswered ? "true" : "false",
	       r->fd_limit ? "true" : "false", r->nofile,
	       (double)(end - start) / 1e9,
	       end > start ? res[0] / ((double)(end - start) / 1e9) : 0.0,
	       2L * o->size * res[0]);
	print_tail(r, "rtt", "errors");
}

/**
 * usage() - print the synopsis
 *
 * Return: 2, the exit status for usage errors
 */
static int usage(void)
{
	fprintf(stderr,
	        "usage: conns tcp -H ADDR -p PORT -n N [-w WINDOW] "
	        "[-k INFLIGHT] [-s SIZE] [-d OPEN_S] [-D ROUNDTRIP_S] [-g]\n"
	        "       conns udp -H ADDR -p PORT -n N [-k INFLIGHT] [-s SIZE] "
	        "[-d SECONDS] [-T TIMEOUT_MS] [-g]\n");
	return 2;
}

/**
 * parse_opts() - parse the options after the mode word
 * @argc:	argument count
 * @argv:	arguments
 * @o:		filled
 *
 * Return: 0 on success, -1 on a usage error
 */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int opt;

	while ((opt = getopt(argc, argv, "H:p:n:w:k:s:d:D:T:g")) != -1) {
		switch (opt) {
		case 'H':
			o->host = optarg;
			break;
		case 'p':
			o->port = atoi(optarg);
			break;
		case 'n':
			o->n = atoi(optarg);
			break;
		case 'w':
			o->window = atoi(optarg);
			break;
		case 'k':
			o->inflight = atoi(optarg);
			break;
		case 's':
			o->size = atoi(optarg);
			break;
		case 'd':
			o->open_s = atof(optarg);
			break;
		case 'D':
			o->rt_s = atof(optarg);
			break;
		case 'T':
			o->timeout_ms = atoi(optarg);
			break;
		case 'g':
			o->gated = true;
			break;
		default:
			return -1;
		}
	}
	if (optind != argc || !o->host || o->port < 1 || o->port > 65535 ||
	    o->n < 1 || o->n > CONNS_MAX || o->window < 1 || o->inflight < 1 ||
	    o->inflight > CONNS_MAX_INFLIGHT || o->size < 1 ||
	    o->size > CONNS_MAX_SIZE || !(o->open_s > 0) || !(o->rt_s > 0) ||
	    o->timeout_ms < 1)
		return -1;
	return 0;
}

/**
 * main() - set up, run the mode, hold the sockets until told
 * @argc:	argument count
 * @argv:	tcp|udp and options
 *
 * Return: 0 when it ran, 1 on a set-up error, 2 on a usage error
 */
int main(int argc, char **argv)
{
	struct opts o = {.window = 256,
	                 .inflight = 64,
	                 .size = 64,
	                 .open_s = 120,
	                 .rt_s = 30,
	                 .timeout_ms = 1000};
	struct run r = {.o = &o};

	if (argc < 2 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "udp")))
		return usage();
	o.udp = !strcmp(argv[1], "udp");
	if (parse_opts(argc - 1, argv + 1, &o))
		return usage();
	r.sa.sin_family = AF_INET;
	r.sa.sin_port = htons((uint16_t)o.port);
	if (inet_pton(AF_INET, o.host, &r.sa.sin_addr) != 1) {
		fprintf(stderr, "conns: %s: not an IPv4 address\n", o.host);
		return 1;
	}
	r.nofile = raise_nofile();
	r.conns = calloc((size_t)o.n, sizeof(*r.conns));
	r.lat = calloc((size_t)o.n, sizeof(*r.lat));
	r.ep = epoll_create1(EPOLL_CLOEXEC);
	if (!r.conns || !r.lat || r.ep < 0) {
		fprintf(stderr, "conns: set-up for %d connections: %s\n", o.n,
		        strerror(errno));
		free(r.conns);
		free(r.lat);
		return 1;
	}
	for (int i = 0; i < o.n; i++)
		r.conns[i].fd = -1;
	if (o.udp) {
		udp_flows(&r);
	} else {
		tcp_open(&r);
		gate(&r, false);
		tcp_roundtrips(&r);
	}
	gate(&r, true);
	for (int i = 0; i < o.n; i++) {
		if (r.conns[i].fd >= 0)
			close(r.conns[i].fd);
	}
	free(r.conns);
	free(r.lat);
	return 0;
}
