// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - pool of sockets created inside the target's network namespace
 *
 * A socket belongs to the network namespace it was created in, whatever
 * process uses it later. The spliced forward path needs sockets in the
 * target's namespace, but tapir itself stays in the host's, so a helper
 * process joins the target's user and network namespaces once, at start,
 * and from then on answers each request with a batch of unconnected
 * sockets, sent back over SCM_RIGHTS. It joins before tapir sandboxes
 * itself, which then could neither open /proc/PID/ns/ files nor setns(); once
 * in, it keeps no capability and no file of tapir's. The pool is refilled
 * in the background when it runs low, and nobody ever waits for the helper:
 * with the pool empty a caller is told so at once (and serves its client
 * another way), and a late reply is taken whenever it comes. A helper that
 * died or answered garbage is stopped; once tapir is isolated no other can
 * start, and the pool stays empty for good.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <event2/event.h>

#include "driver/core/clock.h"
#include "ipc/channel.h"
#include "driver/sandbox/isolation.h"
#include "driver/core/log.h"
#include "driver/host/nshelper.h"
#include "driver/host/nssock.h"
#include "driver/sandbox/seccomp.h"

/* Syscalls of the pool's side, once running: requests to the helper,
 * sockets received, a helper reaped.
 */
const char *const nssock_syscalls[] = {
        "sendto",     "sendmsg", "recvmsg", "fcntl", "getsockopt",
        "setsockopt", "kill",    "wait4",   "close", NULL,
};

/* Rows: TCP over IPv4 and IPv6, then UDP likewise (row_of()). */
#define NSSOCK_ROWS 4
#define NSSOCK_FDS_MAX (2 * NSSOCK_POOL + 2 * NSSOCK_UDP_POOL)

_Static_assert(NSSOCK_FDS_MAX <= 253, "one reply must carry every row");

/* After a helper delivered nothing, no new one for this long. */
#define NSSOCK_BACKOFF_NS 1000000000LL
/* Body of a successful reply; anything else is the helper's error text. */
#define NSSOCK_OK "sockets"

/**
 * struct nssock_pool - sockets ready for use, and the helper that makes them
 * @c:		context (options name the target; the loop runs the refill)
 * @fds:	sockets per row (row_of()); UDP rows use NSSOCK_UDP_POOL
 * @n:		sockets in each row of @fds
 * @udp:	a user wants UDP sockets: the UDP rows are filled too
 * @pid:	the helper, or 0
 * @zombie:	a helper that died while tapir was filtered, left unreaped
 *		until exit, or 0
 * @sock:	our end of its socketpair (non-blocking), or -1
 * @ev:		persistent read event on @sock while the helper runs
 * @pending:	a request is out
 * @closing:	the helper closed its end: no more requests; what it sent
 *		last (its reason) and its EOF are still to be read
 * @started:	a helper was started (or tried) at least once
 * @refills:	requests sent so far
 * @asked_ns:	CLOCK_MONOTONIC time the pending request was sent, or
 *		@closing was seen
 * @fail_ns:	CLOCK_MONOTONIC time of the last failed refill, or 0
 * @warned:	the current run of failures was logged already
 * @notify:	called when the helper answered or failed, or NULL
 * @notify_arg:	its argument
 */
struct nssock_pool {
	struct ctx *c;
	int fds[NSSOCK_ROWS][NSSOCK_POOL];
	unsigned int n[NSSOCK_ROWS];
	bool udp;
	pid_t pid;
	pid_t zombie;
	int sock;
	struct event *ev;
	bool pending;
	bool closing;
	bool started;
	uint64_t refills;
	long long asked_ns;
	long long fail_ns;
	bool warned;
	void (*notify)(void *arg);
	void *notify_arg;
};

/**
 * row_of() - row of the pool that holds sockets of @family and @type
 * @family:	AF_INET or AF_INET6
 * @type:	SOCK_STREAM or SOCK_DGRAM
 *
 * Return: 0, 1 for TCP over IPv4, IPv6; 2, 3 for UDP
 */
static int row_of(int family, int type)
{
	return (type == SOCK_DGRAM) * 2 + (family == AF_INET6);
}

/**
 * row_size() - sockets a row holds when full
 * @row:	row
 *
 * Return: NSSOCK_POOL or NSSOCK_UDP_POOL
 */
static unsigned int row_size(int row)
{
	return row < 2 ? NSSOCK_POOL : NSSOCK_UDP_POOL;
}

/**
 * row_low() - below this many sockets, a row is refilled
 * @row:	row
 *
 * Return: NSSOCK_LOW or NSSOCK_UDP_LOW
 */
static unsigned int row_low(int row)
{
	return row < 2 ? NSSOCK_LOW : NSSOCK_UDP_LOW;
}

/**
 * make_sockets() - create unconnected non-blocking sockets
 * @row:	what of: row_of()
 * @want:	how many, at most row_size()
 * @fds:	array to append to
 * @n:		entries used in @fds, updated
 *
 * A namespace without IPv6 makes AF_INET6 fail: that row stays short.
 * TCP_NODELAY is set by the parent (pool_put()), where its failure can be
 * rate-limited across helpers.
 */
static void make_sockets(int row, unsigned int want, int *fds, unsigned int *n)
{
	int family = row & 1 ? AF_INET6 : AF_INET;
	int type = row < 2 ? SOCK_STREAM : SOCK_DGRAM;

	if (want > row_size(row))
		want = row_size(row);
	for (unsigned int i = 0; i < want; i++) {
		int fd = socket(family, type | SOCK_NONBLOCK, 0);

		if (fd < 0)
			return;
		fds[(*n)++] = fd;
	}
}

/**
 * helper_fail() - send the helper's error text to the parent and exit
 * @sock:	our end of the socketpair
 * @op:		the step that failed
 * @err:	its errno
 */
static void __attribute__((noreturn))
helper_fail(int sock, const char *op, int err)
{
	char body[256];

	snprintf(body, sizeof(body), "%s: %s", op, strerror(err));
	ipc_send(sock, body, strlen(body), NULL, 0);
	_exit(1);
}

/**
 * serve() - answer requests for sockets until tapir closes its end
 * @sock:	our end of the socketpair
 *
 * A request is a byte per row: how many sockets of each. Each reply
 * passes the sockets on and closes our copies.
 */
static void __attribute__((noreturn)) serve(int sock)
{
	uint8_t want[NSSOCK_ROWS];
	ssize_t r;

	while ((r = read(sock, want, sizeof(want))) == sizeof(want)) {
		int fds[NSSOCK_FDS_MAX];
		unsigned int n = 0;

		for (int row = 0; row < NSSOCK_ROWS; row++)
			make_sockets(row, want[row], fds, &n);
		if (!n)
			helper_fail(sock, "create sockets", errno);
		if (ipc_send(sock, NSSOCK_OK, strlen(NSSOCK_OK), fds, n))
			_exit(1);
		for (unsigned int i = 0; i < n; i++)
			close(fds[i]);
	}
	_exit(r ? 1 : 0);
}

/**
 * drop_stdio() - put /dev/null over the helper's stdin, stdout and stderr
 *
 * The helper lives as long as tapir, and says what fails over its socket:
 * holding the caller's stdout would keep `x=$(pasta ...)` waiting after
 * the daemon let go of it (pasta's background mode). Without /dev/null
 * (never so before the sandbox) they stay.
 *
 * @sock:	the helper's socket, which a caller that closed its stdio
 *		may have had land on one of them: left alone
 *
 * Return: 0, or -errno of a dup2() that failed
 */
static int drop_stdio(int sock)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return 0;
	for (int i = 0; i <= STDERR_FILENO && !ret; i++)
		if (fd != i && sock != i && dup2(fd, i) < 0)
			ret = -errno;
	if (fd > STDERR_FILENO)
		close(fd);
	return ret;
}

/**
 * helper_main() - body of the forked helper; never returns
 * @o:		options naming the target
 * @sock:	our end of the socketpair
 */
static void __attribute__((noreturn))
helper_main(const struct opts *o, int sock)
{
	struct ipc_error e = {0};
	char body[sizeof(e.op) + sizeof(e.text) + 4];
	int r;

	/* Neither may be missing once we are inside the container: without
	 * the first the helper could outlive tapir, without the second it
	 * could be ptraced from inside the container.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		helper_fail(sock, "prctl(PR_SET_PDEATHSIG)", errno);
	if (prctl(PR_SET_DUMPABLE, 0))
		helper_fail(sock, "prctl(PR_SET_DUMPABLE)", errno);
	nshelper_close_other_fds(sock);
	if ((r = drop_stdio(sock)))
		helper_fail(sock, "put /dev/null over stdio", -r);
	if (nshelper_join(o, &e)) {
		snprintf(body, sizeof(body), "%s: %s", e.op, e.text);
		ipc_send(sock, body, strlen(body), NULL, 0);
		_exit(1);
	}
	/* In, it needs neither privileges nor more syscalls than sockets. */
	if (isolation_drop_all())
		helper_fail(sock, "drop privileges", errno);
	if (o->seccomp && seccomp_apply_nssock())
		helper_fail(sock, "seccomp filter", errno);
	serve(sock);
}

/**
 * socket_row() - check that @fd is a TCP or UDP socket of a family we keep
 * @fd:		received fd
 *
 * Return: its row (row_of()), or -1 for anything else
 */
static int socket_row(int fd)
{
	int domain = -1, type = -1, proto = -1;
	socklen_t len = sizeof(domain);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
		return -1;
	len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len))
		return -1;
	len = sizeof(proto);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len))
		return -1;
	/* Not SCTP's streams, nor ping or UDP-Lite datagrams. */
	if ((domain != AF_INET && domain != AF_INET6) ||
	    !((type == SOCK_STREAM && proto == IPPROTO_TCP) ||
	      (type == SOCK_DGRAM && proto == IPPROTO_UDP)))
		return -1;
	return row_of(domain, type);
}

/**
 * pool_put() - validate a socket from the helper and keep it
 * @p:		pool
 * @fd:		received fd (close-on-exec already)
 *
 * The helper ran inside the container's namespaces, so its fds are checked
 * like any untrusted input: a TCP or UDP socket of a family we keep, made
 * non-blocking here whatever it claims; TCP ones are given TCP_NODELAY.
 */
static void pool_put(struct nssock_pool *p, int fd)
{
	int row = socket_row(fd), fl;
	static struct log_limit limit;
	const int one = 1;

	fl = row < 0 ? -1 : fcntl(fd, F_GETFL);
	if (fl < 0 ||
	    (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK))) {
		close(fd);
		return;
	}
	/* Request/response traffic must not wait for Nagle; without it the
	 * spliced connection is slower, not wrong.
	 */
	if (row < 2 &&
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		err_limited(&limit, errno,
		            "namespace socket pool: TCP_NODELAY on a socket");
	if (p->n[row] >= row_size(row)) {
		close(fd);
		return;
	}
	p->fds[row][p->n[row]++] = fd;
}

/**
 * log_failure() - report a helper's failure once per run of failures
 * @p:		pool
 * @body:	the helper's error text (untrusted), or NULL
 * @err:	errno of our own side, if @body is NULL
 */
static void log_failure(struct nssock_pool *p, const char *body, int err)
{
	char text[256];
	size_t i;

	p->fail_ns = (long long)clock_ns();
	if (p->warned)
		return;
	p->warned = true;
	if (!body) {
		err_errno(err, "namespace socket helper");
		return;
	}
	/* Printable ASCII only: the text came from inside the container. */
	for (i = 0; i < sizeof(text) - 1 && body[i]; i++)
		text[i] = body[i] >= 0x20 && body[i] < 0x7f ? body[i] : '?';
	text[i] = '\0';
	err_msg("namespace socket helper: %s", text);
}

/**
 * helper_stop() - close the helper's socket, kill it and reap it
 * @p:		pool
 * @reap:	wait for it; else it is left a zombie until nssock_free()
 *
 * Only for a helper that is dead already, answered garbage, or at exit:
 * one that is merely late is left alone. SIGKILL ends even a stopped
 * helper at once, so the wait is short. Filtered, tapir may kill() the
 * helper's pid (seccomp_allow_kill()) until it exits: a zombie keeps the
 * pid, which reaped would go to some other process of the user.
 */
static void helper_stop(struct nssock_pool *p, bool reap)
{
	int status;

	if (p->ev)
		event_free(p->ev);
	p->ev = NULL;
	p->pending = false;
	p->closing = false;
	if (p->sock >= 0)
		close(p->sock);
	p->sock = -1;
	if (!p->pid)
		return;
	/* EPERM: tapir, started as root, serves as nobody now (runas.c),
	 * and the helper is root's; it ends at the EOF of its socket,
	 * closed above.
	 */
	if (kill(p->pid, SIGKILL) && errno != ESRCH && errno != EPERM)
		err_errno(errno, "namespace socket helper: kill pid %d",
		          (int)p->pid);
	if (reap)
		while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
			;
	else
		p->zombie = p->pid;
	p->pid = 0;
}

/**
 * helper_failed() - stop a helper that died or sent garbage
 * @p:		pool
 *
 * Isolated, no other can start: the pool stays empty for good, which
 * is said once, after the helper's own reason.
 */
static void helper_failed(struct nssock_pool *p)
{
	helper_stop(p, !p->c->isolated);
	if (p->c->isolated)
		err_msg("namespace socket helper: gone, and none can start in "
		        "the sandbox: no more sockets in the namespace");
}

/**
 * nothing_to_read() - whether @sock has nothing queued (a wakeup for
 *		       nothing), without taking anything from it
 * @sock:	our end of the socketpair
 *
 * Return: true if a read would block
 */
static bool nothing_to_read(int sock)
{
	struct msghdr msg = {0};
	struct iovec iov;
	char byte;

	iov.iov_base = &byte;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	/* No room for fds: peeked ones are not installed. */
	return recvmsg(sock, &msg, MSG_PEEK | MSG_DONTWAIT) < 0 &&
	       (errno == EAGAIN || errno == EINTR);
}

/**
 * read_reply() - take what the helper sent: its reply, or its last words
 * @p:		pool whose helper's socket is readable
 *
 * The helper sends each message with one sendmsg(), which the kernel
 * queues whole, so a message is read without waiting: one that is not all
 * there (-EAGAIN halfway) is garbage, like one that comes unasked. A
 * helper that failed, died or sent garbage is stopped.
 */
static void read_reply(struct nssock_pool *p)
{
	int fds[NSSOCK_FDS_MAX];
	bool asked = p->pending;
	unsigned int nfds = 0;
	char *body = NULL;
	size_t len;
	int ret;

	p->pending = false;
	ret = ipc_recv(p->sock, &body, &len, fds, NSSOCK_FDS_MAX, &nfds);
	if (ret == -ENODATA)
		log_failure(p, asked ? "exited without a reply" : "exited", 0);
	else if (ret == -EAGAIN)
		log_failure(p, "sent part of a message", 0);
	else if (ret)
		log_failure(p, NULL, -ret);
	else if (!nfds || strcmp(body, NSSOCK_OK))
		log_failure(p, body, 0);
	else if (!asked)
		log_failure(p, "sent sockets unasked", 0);
	if (!ret && asked && nfds && !strcmp(body, NSSOCK_OK)) {
		for (unsigned int i = 0; i < nfds; i++)
			pool_put(p, fds[i]);
		p->fail_ns = 0;
		p->warned = false;
	} else {
		for (unsigned int i = 0; i < nfds; i++)
			close(fds[i]);
		helper_failed(p);
	}
	free(body);
	/* Last: it may take sockets and ask for more. */
	if (p->notify)
		p->notify(p->notify_arg);
}

/**
 * helper_cb() - the helper's socket is readable: a reply, or its end
 * @fd:		its socket
 * @what:	unused
 * @arg:	struct nssock_pool
 */
static void helper_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	if (!nothing_to_read((int)fd))
		read_reply(arg);
}

/**
 * helper_start() - fork the helper into the target's namespaces
 * @p:		pool without a helper
 *
 * Return: 0 if it runs, -1 (logged) if not
 */
static int helper_start(struct nssock_pool *p)
{
	char why[128];
	int sv[2];
	pid_t pid;

	p->started = true;
	/* Only our end is non-blocking: the helper waits for requests. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		log_failure(p, NULL, errno);
		return -1;
	}
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK)) {
		snprintf(why, sizeof(why), "make its socket non-blocking: %s",
		         strerror(errno));
		log_failure(p, why, 0);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		log_failure(p, NULL, errno);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0)
		helper_main(p->c->o, sv[1]);
	close(sv[1]);
	p->pid = pid;
	p->sock = sv[0];
	if (seccomp_allow_kill(pid))
		debug_msg("namespace socket helper: no room to allow kill");
	/* Without it no reply, nor the helper's end, would ever be seen. */
	p->ev = event_new(p->c->base, p->sock, EV_READ | EV_PERSIST, helper_cb,
	                  p);
	if (!p->ev || event_add(p->ev, NULL)) {
		log_failure(p, "watch its socket: libevent failed", 0);
		helper_stop(p, true);
		return -1;
	}
	return 0;
}

/**
 * refill_start() - ask the helper to top up the pool, unless asked already
 * @p:		pool
 *
 * Never waits: the reply is read by helper_cb() whenever it comes. A
 * helper that died is started again, unless tapir is sandboxed or filtered
 * by now: then it can neither fork into the namespaces nor join them, and
 * the pool stays empty.
 */
static void refill_start(struct nssock_pool *p)
{
	uint8_t want[NSSOCK_ROWS];
	unsigned int total = 0;

	for (int r = 0; r < NSSOCK_ROWS; r++) {
		want[r] =
		        r < 2 || p->udp ? (uint8_t)(row_size(r) - p->n[r]) : 0;
		total += want[r];
	}
	/* Nothing to ask for (a UDP socket before nssock_prime_udp()):
	 * the helper would fail to make none.
	 */
	if (!total || p->pending || p->closing)
		return;
	if (p->fail_ns &&
	    (long long)clock_ns() - p->fail_ns < NSSOCK_BACKOFF_NS)
		return;
	if (!p->pid && (p->c->isolated || helper_start(p)))
		return;
	if (send(p->sock, want, sizeof(want), MSG_NOSIGNAL) != sizeof(want)) {
		/* A helper that failed at once sends why and exits, maybe
		 * before our request: its reason, not our EPIPE, is what to
		 * report, and helper_cb() reads it.
		 */
		if (errno == EPIPE || errno == ECONNRESET) {
			p->closing = true;
			p->asked_ns = (long long)clock_ns();
			return;
		}
		/* One request out at a time: 4 bytes can't fill the buffer. */
		log_failure(p, NULL, errno);
		helper_failed(p);
		return;
	}
	p->pending = true;
	p->asked_ns = (long long)clock_ns();
	p->refills++;
}

/**
 * nssock_new() - create an empty pool
 * @c:		context
 *
 * Return: the pool, or NULL on ENOMEM
 */
struct nssock_pool *nssock_new(struct ctx *c)
{
	struct nssock_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->c = c;
	p->sock = -1;
	return p;
}

/**
 * nssock_free() - close pooled sockets, stop the helper, free @p
 * @p:		pool, or NULL
 */
void nssock_free(struct nssock_pool *p)
{
	int status;

	if (!p)
		return;
	for (int r = 0; r < NSSOCK_ROWS; r++)
		for (unsigned int i = 0; i < p->n[r]; i++)
			close(p->fds[r][i]);
	helper_stop(p, true);
	while (p->zombie && waitpid(p->zombie, &status, 0) < 0 &&
	       errno == EINTR)
		;
	free(p);
}

/**
 * nssock_prime() - start the helper and fill the pool in the background
 * @p:		pool
 *
 * Called at start in splice mode, before tapir sandboxes itself, and when
 * a spliced forward is added: the first connection does not wait.
 */
void nssock_prime(struct nssock_pool *p)
{
	if (p->n[0] < NSSOCK_POOL || p->n[1] < NSSOCK_POOL)
		refill_start(p);
}

/**
 * nssock_prime_udp() - keep UDP sockets in the pool too, from now on
 * @p:		pool
 *
 * Only users of namespace UDP sockets (pasta's -U, --host-lo-to-ns-lo)
 * ask: the others' pools hold no UDP socket. Before the sandbox, as
 * nssock_prime().
 */
void nssock_prime_udp(struct nssock_pool *p)
{
	p->udp = true;
	refill_start(p);
}

/**
 * nssock_get() - take an unconnected socket of the namespace, if one is
 *		  ready
 * @p:		pool
 * @family:	AF_INET or AF_INET6
 * @type:	SOCK_STREAM, or SOCK_DGRAM once nssock_prime_udp() ran
 *
 * Never waits for the helper: with the pool empty, a refill is asked for
 * (if none is out yet) and the caller serves its client another way.
 *
 * Return: a non-blocking socket the caller owns, or -EAGAIN if none is
 *	   ready (the helper is busy, late, failed recently or gone)
 */
int nssock_get(struct nssock_pool *p, int family, int type)
{
	int row = row_of(family, type);

	if (!p->n[row]) {
		refill_start(p);
		return -EAGAIN;
	}
	p->n[row]--;
	if (p->n[row] < row_low(row))
		refill_start(p);
	return p->fds[row][p->n[row]];
}

/**
 * nssock_wait() - at start, wait for the helper to answer the request out
 * @p:		pool
 * @timeout_ms:	at most this long
 *
 * Only before tapir is ready (nsfwd_settle()): once running, nobody waits
 * for the helper. The reply is taken as helper_cb() takes it.
 *
 * Return: 0 once the helper answered (or ended), -EAGAIN if no request is
 *	   out, -ETIMEDOUT, or -errno of poll()
 */
int nssock_wait(struct nssock_pool *p, int timeout_ms)
{
	struct pollfd pfd = {.fd = p->sock, .events = POLLIN};
	int n;

	if (!p->pid || (!p->pending && !p->closing))
		return -EAGAIN;
	do
		n = poll(&pfd, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n ? -errno : -ETIMEDOUT;
	helper_cb(p->sock, EV_READ, p);
	return 0;
}

/**
 * nssock_count() - TCP sockets ready in the pool
 * @p:		pool
 * @family:	AF_INET or AF_INET6
 *
 * Return: count
 */
unsigned int nssock_count(const struct nssock_pool *p, int family)
{
	return p->n[row_of(family, SOCK_STREAM)];
}

/**
 * nssock_refills() - refill requests sent so far
 * @p:		pool
 *
 * Return: count
 */
uint64_t nssock_refills(const struct nssock_pool *p)
{
	return p->refills;
}

/**
 * nssock_helper() - what the helper is doing, for get_info
 * @p:		pool
 * @wait_ms:	set to how long the request out has waited, or 0
 *
 * Return: the helper's state
 */
enum nssock_helper nssock_helper(const struct nssock_pool *p, uint64_t *wait_ms)
{
	long long waited = (long long)clock_ns() - p->asked_ns;

	*wait_ms = 0;
	if (p->pid && (p->pending || p->closing)) {
		*wait_ms = waited > 0 ? (uint64_t)waited / 1000000 : 0;
		return NSSOCK_HELPER_WAITING;
	}
	if (p->pid)
		return NSSOCK_HELPER_READY;
	return p->started && p->c->isolated ? NSSOCK_HELPER_GONE
	                                    : NSSOCK_HELPER_NONE;
}

/**
 * nssock_expect_ms() - whether a reply is coming soon, worth waiting for
 * @p:		pool
 *
 * Return: ms until the request out counts as late (NSSOCK_LATE_MS after it
 *	   was sent), or -1 if no reply is expected that soon: none asked,
 *	   late already, or no helper
 */
long nssock_expect_ms(const struct nssock_pool *p)
{
	long long waited;

	if (!p->pid || !p->pending)
		return -1;
	waited = ((long long)clock_ns() - p->asked_ns) / 1000000;
	return waited < NSSOCK_LATE_MS ? (long)(NSSOCK_LATE_MS - waited) : -1;
}

/**
 * nssock_set_notify() - have @fn called whenever the helper answered or
 *			 failed
 * @p:		pool
 * @fn:		function, or NULL for none
 * @arg:	its argument
 *
 * Only from the loop's callbacks, never from within nssock_get().
 */
void nssock_set_notify(struct nssock_pool *p, void (*fn)(void *arg), void *arg)
{
	p->notify = fn;
	p->notify_arg = arg;
}

/**
 * nssock_helper_name() - the API's name of a helper state
 * @h:		state
 *
 * Return: static string
 */
const char *nssock_helper_name(enum nssock_helper h)
{
	switch (h) {
	case NSSOCK_HELPER_READY:
		return "ready";
	case NSSOCK_HELPER_WAITING:
		return "waiting";
	case NSSOCK_HELPER_GONE:
		return "gone";
	case NSSOCK_HELPER_NONE:
		break;
	}
	return "none";
}
