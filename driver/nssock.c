// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - pool of TCP sockets created inside the target's network namespace
 *
 * A socket belongs to the network namespace it was created in, whatever
 * process uses it later. The spliced forward path needs sockets in the
 * target's namespace, but tapir itself stays in the host's, so a helper
 * process joins the target's user and network namespaces once, at start,
 * and from then on answers each request with a batch of unconnected
 * sockets, sent back over SCM_RIGHTS. It joins before tapir sandboxes
 * itself, which then could neither open /proc/PID/ns/ files nor setns(); once
 * in, it keeps no capability and no file of tapir's. The pool is refilled
 * in the background when it runs low; only when it is empty does a caller
 * wait for the helper's answer.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "clock.h"
#include "ipc/channel.h"
#include "isolation.h"
#include "log.h"
#include "nshelper.h"
#include "nssock.h"
#include "seccomp.h"

/* Syscalls of the pool's side, once running: requests to the helper,
 * sockets received, a helper reaped.
 */
const char *const nssock_syscalls[] = {
        "sendto",     "sendmsg", "recvmsg", "fcntl", "getsockopt",
        "setsockopt", "kill",    "wait4",   "close", NULL,
};

_Static_assert(2 * NSSOCK_POOL <= 253, "one reply must carry both rows");

/* How long a caller with an empty pool waits for the helper's reply. */
#define NSSOCK_WAIT_S 2
/* After a helper delivered nothing, no new one for this long. */
#define NSSOCK_BACKOFF_NS 1000000000LL
/* Body of a successful reply; anything else is the helper's error text. */
#define NSSOCK_OK "sockets"

/**
 * struct nssock_pool - sockets ready for use, and the helper that makes them
 * @c:		context (options name the target; the loop runs the refill)
 * @fds:	sockets per family: [0] AF_INET, [1] AF_INET6
 * @n:		sockets in each row of @fds
 * @pid:	the helper, or 0
 * @sock:	our end of its socketpair, or -1
 * @ev:		read event on @sock while a request is out, or NULL
 * @pending:	a request is out
 * @refills:	requests sent so far
 * @fail_ns:	CLOCK_MONOTONIC time of the last failed refill, or 0
 * @warned:	the current run of failures was logged already
 */
struct nssock_pool {
	struct ctx *c;
	int fds[2][NSSOCK_POOL];
	unsigned int n[2];
	pid_t pid;
	int sock;
	struct event *ev;
	bool pending;
	uint64_t refills;
	long long fail_ns;
	bool warned;
};

/**
 * family_row() - row of the pool that holds @family
 * @family:	AF_INET or AF_INET6
 *
 * Return: 0 for AF_INET, 1 for AF_INET6
 */
static int family_row(int family)
{
	return family == AF_INET6;
}

/**
 * make_sockets() - create unconnected non-blocking TCP sockets
 * @family:	AF_INET or AF_INET6
 * @want:	how many
 * @fds:	array to append to
 * @n:		entries used in @fds, updated
 *
 * A namespace without IPv6 makes AF_INET6 fail: that row stays short.
 * TCP_NODELAY is set by the parent (pool_put()), where its failure can be
 * rate-limited across helpers.
 */
static void make_sockets(int family, unsigned int want, int *fds,
                         unsigned int *n)
{
	for (unsigned int i = 0; i < want; i++) {
		int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK, 0);

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
 * A request is two bytes: how many IPv4 and IPv6 sockets. Each reply
 * passes the sockets on and closes our copies.
 */
static void __attribute__((noreturn)) serve(int sock)
{
	uint8_t want[2];
	ssize_t r;

	while ((r = read(sock, want, sizeof(want))) == sizeof(want)) {
		int fds[2 * NSSOCK_POOL];
		unsigned int n = 0;

		make_sockets(AF_INET,
		             want[0] < NSSOCK_POOL ? want[0] : NSSOCK_POOL, fds,
		             &n);
		make_sockets(AF_INET6,
		             want[1] < NSSOCK_POOL ? want[1] : NSSOCK_POOL, fds,
		             &n);
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
 * helper_main() - body of the forked helper; never returns
 * @o:		options naming the target
 * @sock:	our end of the socketpair
 */
static void __attribute__((noreturn))
helper_main(const struct opts *o, int sock)
{
	struct ipc_error e = {0};
	char body[sizeof(e.op) + sizeof(e.text) + 4];

	/* Neither may be missing once we are inside the container: without
	 * the first the helper could outlive tapir, without the second it
	 * could be ptraced from inside the container.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		helper_fail(sock, "prctl(PR_SET_PDEATHSIG)", errno);
	if (prctl(PR_SET_DUMPABLE, 0))
		helper_fail(sock, "prctl(PR_SET_DUMPABLE)", errno);
	nshelper_close_other_fds(sock);
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
 * tcp_socket_family() - check that @fd is a TCP socket of a family we keep
 * @fd:		received fd
 *
 * Return: AF_INET or AF_INET6, or -1 for anything else
 */
static int tcp_socket_family(int fd)
{
	int domain = -1, type = -1;
	socklen_t len = sizeof(domain);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
		return -1;
	len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len))
		return -1;
	if ((domain != AF_INET && domain != AF_INET6) || type != SOCK_STREAM)
		return -1;
	return domain;
}

/**
 * pool_put() - validate a socket from the helper and keep it
 * @p:		pool
 * @fd:		received fd (close-on-exec already)
 *
 * The helper ran inside the container's namespaces, so its fds are checked
 * like any untrusted input: a TCP socket of a family we keep, made
 * non-blocking here whatever it claims, and given TCP_NODELAY.
 */
static void pool_put(struct nssock_pool *p, int fd)
{
	int family = tcp_socket_family(fd), fl, row;
	static struct log_limit limit;
	const int one = 1;

	fl = family < 0 ? -1 : fcntl(fd, F_GETFL);
	if (fl < 0 ||
	    (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK))) {
		close(fd);
		return;
	}
	/* Request/response traffic must not wait for Nagle; without it the
	 * spliced connection is slower, not wrong.
	 */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		err_limited(&limit, errno,
		            "namespace socket pool: TCP_NODELAY on a socket");
	row = family_row(family);
	if (p->n[row] == NSSOCK_POOL) {
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
 * helper_stop() - close the helper's socket and reap it
 * @p:		pool
 */
static void helper_stop(struct nssock_pool *p)
{
	int status;

	if (p->ev)
		event_free(p->ev);
	p->ev = NULL;
	p->pending = false;
	if (p->sock >= 0)
		close(p->sock);
	p->sock = -1;
	if (!p->pid)
		return;
	/* It exits on EOF; a stalled one must not stall us. */
	kill(p->pid, SIGKILL);
	while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
		;
	p->pid = 0;
}

/**
 * helper_start() - fork the helper into the target's namespaces
 * @p:		pool without a helper
 *
 * Return: 0 if it runs, -1 (logged) if not
 */
static int helper_start(struct nssock_pool *p)
{
	const struct timeval tv = {NSSOCK_WAIT_S, 0};
	char why[128];
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		log_failure(p, NULL, errno);
		return -1;
	}
	/* Without the timeout, a stalled helper could block the whole loop
	 * in nssock_get(): no helper then, and no sockets.
	 */
	if (setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		snprintf(why, sizeof(why), "set SO_RCVTIMEO on its socket: %s",
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
	return 0;
}

/**
 * refill_finish() - take the helper's reply
 * @p:		pool with a request out
 *
 * Blocks until the reply arrives or SO_RCVTIMEO expires; from the event
 * loop it is only called once @p->sock is readable. A helper that fails
 * to answer is stopped.
 */
static void refill_finish(struct nssock_pool *p)
{
	int fds[2 * NSSOCK_POOL];
	unsigned int nfds = 0;
	char *body = NULL;
	size_t len;
	int ret;

	if (p->ev)
		event_free(p->ev);
	p->ev = NULL;
	p->pending = false;
	ret = ipc_recv(p->sock, &body, &len, fds, 2 * NSSOCK_POOL, &nfds);
	if (ret == -ENODATA)
		log_failure(p, "exited without a reply", 0);
	else if (ret)
		log_failure(p, NULL, -ret);
	else if (!nfds || strcmp(body, NSSOCK_OK))
		log_failure(p, body, 0);
	for (unsigned int i = 0; i < nfds; i++)
		pool_put(p, fds[i]);
	if (!ret && nfds && !strcmp(body, NSSOCK_OK)) {
		p->fail_ns = 0;
		p->warned = false;
	} else {
		helper_stop(p);
	}
	free(body);
}

/**
 * refill_cb() - the helper's reply is readable
 * @fd:		its socket
 * @what:	unused
 * @arg:	struct nssock_pool
 */
static void refill_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	refill_finish(arg);
}

/**
 * refill_start() - ask the helper to top up the pool, unless asked already
 * @p:		pool
 *
 * A helper that died is started again, unless tapir is sandboxed or
 * filtered by now: then it can neither fork into the namespaces nor join
 * them, and the pool stays empty.
 *
 * Return: 0 if a request is out now, -1 if none could be sent
 */
static int refill_start(struct nssock_pool *p)
{
	uint8_t want[2];

	if (p->pending)
		return 0;
	if (p->fail_ns &&
	    (long long)clock_ns() - p->fail_ns < NSSOCK_BACKOFF_NS)
		return -1;
	if (!p->pid && (p->c->isolated || helper_start(p)))
		return -1;
	for (int r = 0; r < 2; r++)
		want[r] = (uint8_t)(NSSOCK_POOL - p->n[r]);
	if (send(p->sock, want, sizeof(want), MSG_NOSIGNAL) != sizeof(want)) {
		/* A helper that failed at once sent why and exited before our
		 * request: its reason, not our EPIPE, is what to report.
		 */
		if (errno == EPIPE || errno == ECONNRESET) {
			refill_finish(p);
			return -1;
		}
		log_failure(p, NULL, errno);
		helper_stop(p);
		return -1;
	}
	p->pending = true;
	p->refills++;
	p->ev = event_new(p->c->base, p->sock, EV_READ, refill_cb, p);
	if (!p->ev || event_add(p->ev, NULL)) {
		/* Without the event, the next nssock_get() waits for it. */
		if (p->ev)
			event_free(p->ev);
		p->ev = NULL;
	}
	return 0;
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
	if (!p)
		return;
	for (int r = 0; r < 2; r++)
		for (unsigned int i = 0; i < p->n[r]; i++)
			close(p->fds[r][i]);
	helper_stop(p);
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
 * nssock_get() - take an unconnected TCP socket of the namespace
 * @p:		pool
 * @family:	AF_INET or AF_INET6
 *
 * Return: a non-blocking socket the caller owns, or -EAGAIN if none could
 *	   be had (the namespace is gone, or the helper failed recently)
 */
int nssock_get(struct nssock_pool *p, int family)
{
	int row = family_row(family);

	if (!p->n[row] && !refill_start(p)) {
		debug_msg("namespace socket pool empty: waiting for helper");
		refill_finish(p);
	}
	if (!p->n[row])
		return -EAGAIN;
	p->n[row]--;
	if (p->n[row] < NSSOCK_LOW)
		refill_start(p);
	return p->fds[row][p->n[row]];
}

/**
 * nssock_count() - sockets ready in the pool
 * @p:		pool
 * @family:	AF_INET or AF_INET6
 *
 * Return: count
 */
unsigned int nssock_count(const struct nssock_pool *p, int family)
{
	return p->n[family_row(family)];
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
