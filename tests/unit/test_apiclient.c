// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for `tapir api`: a reply that came is printed, in
 * whatever order it came with the errors of sending the request
 *
 * A server thread plays each way a server can end an exchange, against the
 * real apiclient_main(). The orders that timing alone would decide are
 * forced: this binary is linked with -Wl,--wrap=connect (Makefile), and
 * where a case asks, the client's connect() returns only once the server
 * has hung up, so the request is sent after the server answered and
 * closed. Each case runs in a child of unit_netns_run(), whose alarm ends
 * a hang; every wait of the server is bounded.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "driver/front/apiclient.h"
#include "driver/core/clock.h"
#include "tests/unit/unit.h"

/* How long the server waits for the client to do its part. */
#define SERVER_WAIT_MS 15000
/* A request larger than a unix socket's send buffer (208 KiB here). */
#define BIG_REQUEST (1 << 20)

/**
 * enum peer - how the server ends the exchange
 * @ANSWER:		reads the request to EOF, replies, closes
 * @REPLY_AT_ONCE:	replies and closes before reading anything
 * @REPLY_UNREAD:	waits for the request, replies, closes with it unread
 *			(the client reads the reply, then ECONNRESET)
 * @REPLY_HALF_CLOSE:	replies and shuts down its side, never reads, and
 *			closes only once the client has
 * @CLOSE_AT_ONCE:	closes before reading anything, without a reply
 * @CLOSE_UNREAD:	waits for the request, closes with it unread, without
 *			a reply
 */
enum peer {
	ANSWER,
	REPLY_AT_ONCE,
	REPLY_UNREAD,
	REPLY_HALF_CLOSE,
	CLOSE_AT_ONCE,
	CLOSE_UNREAD,
};

/* The client's connect() waits until the server has hung up. */
static int hold_after_connect;

int __real_connect(int fd, const struct sockaddr *sa, socklen_t len);

/**
 * __wrap_connect() - connect(), then, if a case asks, wait for the server
 *		      to hang up
 * @fd:		as connect()
 * @sa:		as connect()
 * @len:	as connect()
 *
 * Return: what connect() returned, errno kept
 */
int __wrap_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	int ret = __real_connect(fd, sa, len), err = errno;

	if (!ret && hold_after_connect) {
		/* POLLHUP is always reported: both directions are shut. */
		struct pollfd p = {.fd = fd, .events = 0};

		CHECK(poll(&p, 1, SERVER_WAIT_MS) == 1 &&
		      (p.revents & POLLHUP));
	}
	errno = err;
	return ret;
}

/**
 * struct server - the server thread's part
 * @tid:	the thread
 * @listener:	listening socket
 * @peer:	how it ends the exchange
 * @reply:	what it replies, if it does
 */
struct server {
	pthread_t tid;
	int listener;
	enum peer peer;
	const char *reply;
};

/**
 * wait_for() - wait until @fd has @events (POLLHUP: the client closed)
 * @fd:		accepted socket
 * @events:	poll() events
 */
static void wait_for(int fd, short events)
{
	struct pollfd p = {.fd = fd, .events = events};

	CHECK(poll(&p, 1, SERVER_WAIT_MS) == 1);
}

/**
 * read_to_eof() - read and drop what the client sends, to its EOF
 * @fd:		accepted socket
 */
static void read_to_eof(int fd)
{
	uint64_t deadline = clock_ms() + SERVER_WAIT_MS;
	char buf[4096];
	ssize_t n;

	do {
		wait_for(fd, POLLIN);
		n = read(fd, buf, sizeof(buf));
	} while (n > 0 && clock_ms() < deadline);
	CHECK(n == 0);
}

/**
 * server_main() - accept one client and end the exchange as told
 * @arg:	struct server
 *
 * Return: NULL
 */
static void *server_main(void *arg)
{
	struct server *s = arg;
	int fd;

	wait_for(s->listener, POLLIN);
	fd = accept4(s->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	CHECK(fd >= 0);
	if (fd < 0)
		return NULL;
	if (s->peer == ANSWER)
		read_to_eof(fd);
	if (s->peer == REPLY_UNREAD || s->peer == CLOSE_UNREAD)
		wait_for(fd, POLLIN);
	if (s->peer != CLOSE_AT_ONCE && s->peer != CLOSE_UNREAD)
		CHECK(write(fd, s->reply, strlen(s->reply)) ==
		      (ssize_t)strlen(s->reply));
	if (s->peer == REPLY_HALF_CLOSE) {
		CHECK(!shutdown(fd, SHUT_WR));
		wait_for(fd, POLLHUP);
	}
	close(fd);
	return NULL;
}

/**
 * struct outcome - what `tapir api` did
 * @path:	the socket it was given
 * @status:	its exit status
 * @out:	what it printed on stdout
 * @err:	what it printed on stderr
 * @ms:		how long it took
 */
struct outcome {
	char path[108];
	int status;
	char out[4096];
	char err[4096];
	uint64_t ms;
};

/**
 * slurp() - read what a non-blocking pipe holds into @buf
 * @fd:		read end
 * @buf:	NUL-terminated on return
 * @size:	its size
 */
static void slurp(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);

	buf[n > 0 ? n : 0] = '\0';
}

/**
 * exchange() - run `tapir api SOCKET REQUEST` against a server playing @peer
 * @peer:	how the server ends the exchange
 * @reply:	what it replies
 * @request:	what the client sends
 * @hold:	the client sends only once the server has hung up
 * @o:		filled with what the client did
 *
 * Return: 0, or -1 if the set-up failed
 */
static int exchange(enum peer peer, const char *reply, const char *request,
                    bool hold, struct outcome *o)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[] = "/tmp/tapir-apiclient.XXXXXX";
	struct server s = {.peer = peer, .reply = reply};
	int out[2], err[2], saved[2];
	char *argv[4] = {"api", sa.sun_path, (char *)request, NULL};
	uint64_t start;

	if (!mkdtemp(dir))
		return -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/api.sock", dir);
	s.listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s.listener < 0 || bind(s.listener, (void *)&sa, sizeof(sa)) ||
	    listen(s.listener, 1) || pipe2(out, O_NONBLOCK | O_CLOEXEC) ||
	    pipe2(err, O_NONBLOCK | O_CLOEXEC))
		return -1;
	if (pthread_create(&s.tid, NULL, server_main, &s))
		return -1;
	fflush(stdout);
	saved[0] = dup(STDOUT_FILENO);
	saved[1] = dup(STDERR_FILENO);
	dup2(out[1], STDOUT_FILENO);
	dup2(err[1], STDERR_FILENO);
	hold_after_connect = hold;
	start = clock_ms();
	o->status = apiclient_main(3, argv);
	o->ms = clock_ms() - start;
	hold_after_connect = 0;
	fflush(stdout);
	dup2(saved[0], STDOUT_FILENO);
	dup2(saved[1], STDERR_FILENO);
	pthread_join(s.tid, NULL);
	slurp(out[0], o->out, sizeof(o->out));
	slurp(err[0], o->err, sizeof(o->err));
	snprintf(o->path, sizeof(o->path), "%s", sa.sun_path);
	printf("#   status %d after %llu ms; stdout: %.*s; stderr: %.*s\n",
	       o->status, (unsigned long long)o->ms, (int)strcspn(o->out, "\n"),
	       o->out, (int)strcspn(o->err, "\n"), o->err);
	unlink(sa.sun_path);
	rmdir(dir);
	return 0;
}

/**
 * check_replied() - the reply was printed, with its status, in good time
 * @o:		outcome
 * @reply:	the server's reply
 * @status:	the exit status it calls for
 */
static void check_replied(const struct outcome *o, const char *reply,
                          int status)
{
	char want[256];

	snprintf(want, sizeof(want), "%s\n", reply);
	CHECK(o->status == status);
	CHECK(!strcmp(o->out, want));
	CHECK(!o->err[0]);
	CHECK(o->ms < 3000);
}

/**
 * check_no_reply() - exit status 2 and the one line that says why
 * @o:		outcome
 */
static void check_no_reply(const struct outcome *o)
{
	char want[256];

	snprintf(want, sizeof(want),
	         "tapir: api: %s closed the connection without a reply\n",
	         o->path);
	CHECK(o->status == 2);
	CHECK(!o->out[0]);
	CHECK(!strcmp(o->err, want));
	CHECK(o->ms < 3000);
}

static const char ok_reply[] = "{\"return\":{}}";
static const char busy_reply[] =
        "{\"error\":{\"desc\":\"tapir: too many open files; try again "
        "later\"}}";

/**
 * body_answer() - the usual exchange: the reply after the request, its
 *		 status from its "error" key
 */
static void body_answer(void)
{
	struct outcome o;

	CHECK(!exchange(ANSWER, ok_reply, "{}", false, &o));
	check_replied(&o, ok_reply, 0);
	CHECK(!exchange(ANSWER, busy_reply, "{}", false, &o));
	check_replied(&o, busy_reply, 1);
}

/**
 * body_reply_before_request() - the server replied and closed before the
 *			       request went out: send() fails with EPIPE
 */
static void body_reply_before_request(void)
{
	struct outcome o;

	CHECK(!exchange(REPLY_AT_ONCE, busy_reply, "{}", true, &o));
	check_replied(&o, busy_reply, 1);
}

/**
 * body_reply_then_reset() - the server replied and closed with the
 *			   request unread: recv() gives the reply, then
 *			   ECONNRESET
 */
static void body_reply_then_reset(void)
{
	struct outcome o;

	CHECK(!exchange(REPLY_UNREAD, busy_reply, "{}", false, &o));
	check_replied(&o, busy_reply, 1);
}

/**
 * body_reply_unread_big_request() - the server replied and shut down its
 *				   side while a request larger than the
 *				   socket's buffer waits unread
 */
static void body_reply_unread_big_request(void)
{
	char *big = malloc(BIG_REQUEST + 1);
	struct outcome o;

	if (!big) {
		CHECK(!"malloc");
		return;
	}
	memset(big, ' ', BIG_REQUEST);
	memcpy(big, "{}", 2);
	big[BIG_REQUEST] = '\0';
	CHECK(!exchange(REPLY_HALF_CLOSE, busy_reply, big, false, &o));
	check_replied(&o, busy_reply, 1);
	free(big);
}

/**
 * body_closed_before_request() - the server closed, saying nothing, before
 *				the request went out
 */
static void body_closed_before_request(void)
{
	struct outcome o;

	CHECK(!exchange(CLOSE_AT_ONCE, "", "{}", true, &o));
	check_no_reply(&o);
}

/**
 * body_closed_unread() - the server closed, saying nothing, with the
 *			request unread: recv() fails with ECONNRESET
 */
static void body_closed_unread(void)
{
	struct outcome o;

	CHECK(!exchange(CLOSE_UNREAD, "", "{}", false, &o));
	check_no_reply(&o);
}

static void test_answer(void)
{
	CHECK(unit_netns_run(body_answer));
}

static void test_reply_before_request(void)
{
	CHECK(unit_netns_run(body_reply_before_request));
}

static void test_reply_then_reset(void)
{
	CHECK(unit_netns_run(body_reply_then_reset));
}

static void test_reply_unread_big_request(void)
{
	CHECK(unit_netns_run(body_reply_unread_big_request));
}

static void test_closed_before_request(void)
{
	CHECK(unit_netns_run(body_closed_before_request));
}

static void test_closed_unread(void)
{
	CHECK(unit_netns_run(body_closed_unread));
}

const struct unit_case unit_cases[] = {
        {"a reply after the request: printed, status from the reply",
         test_answer},
        {"a reply, and close, before the request was sent (EPIPE): printed",
         test_reply_before_request},
        {"a reply, then close with the request unread (ECONNRESET after "
         "it): printed",
         test_reply_then_reset},
        {"a reply and EOF while a request too big for the socket waits "
         "unread: printed at once",
         test_reply_unread_big_request},
        {"closed before the request was sent, no reply: exit 2, one line",
         test_closed_before_request},
        {"closed with the request unread, no reply: exit 2, one line",
         test_closed_unread},
        {NULL, NULL},
};
