// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - `tapir api SOCKET JSON`: one request to an API socket
 *
 * Speaks like rootlesskit's client: JSON and "\n", shutdown(SHUT_WR), read
 * to EOF. Exit status: 0 for a reply without an "error" key, 1 for an
 * error reply (or one that is not JSON), 2 when no reply could be had.
 * The reply is whatever the server sent before it closed, in whichever
 * order that came with the errors of sending: a server may answer and
 * close before it reads a byte.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <jansson.h>

#include "driver/core/clock.h"
#include "driver/front/apiclient.h"
#include "driver/core/log.h"

/* send_request(): the server answered before it took the whole request. */
#define SEND_ANSWERED 1

/**
 * wait_fd() - poll @fd for @events until @deadline
 * @fd:		socket
 * @events:	POLLIN, POLLOUT or both
 * @deadline:	clock_ms() value
 *
 * Return: the events that came (POLLHUP and POLLERR included), -ETIMEDOUT,
 *	   or -errno
 */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	long long left;
	int n;

	do {
		left = deadline - (long long)clock_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, (int)left);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? pfd.revents : -ETIMEDOUT;
}

/**
 * connect_to() - connect to the API socket at @path
 * @path:	socket path
 *
 * Return: non-blocking connected socket, or -1 after printing one line
 */
static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		err_msg("api: socket path too long (>= %zu): %s",
		        sizeof(sa.sun_path), path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err_errno(errno, "api: socket");
		return -1;
	}
	/* A unix connect() completes at once or fails with EAGAIN when the
	 * server's backlog is full; a busy server is not worth waiting for.
	 */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err_errno(errno, "api: connect %s", path);
		close(fd);
		return -1;
	}
	return fd;
}

/**
 * send_all() - write @len bytes of @buf unless the server answers first
 * @fd:		connected non-blocking socket
 * @buf:	bytes
 * @len:	their count
 * @deadline:	clock_ms() value
 *
 * A server that has something to say (a reply, or EOF) before it took the
 * whole request will not take the rest: stop there, and read.
 *
 * Return: 0 when all was sent, SEND_ANSWERED, or -errno
 */
static int send_all(int fd, const char *buf, size_t len, long long deadline)
{
	size_t off = 0;
	int ret = 0;

	while (off < len && !ret) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n >= 0)
			off += (size_t)n;
		else if (errno == EAGAIN)
			ret = wait_fd(fd, POLLOUT | POLLIN, deadline);
		else if (errno != EINTR)
			ret = -errno;
		if (ret > 0)
			ret = (ret & POLLIN) ? SEND_ANSWERED : 0;
	}
	return ret;
}

/**
 * send_request() - write @json, a newline, then shut down our side
 * @fd:		connected socket
 * @json:	request text
 * @deadline:	clock_ms() value
 *
 * Return: 0 on success, SEND_ANSWERED if the server answered (or closed)
 *	   before it took the whole request, -errno on failure
 */
static int send_request(int fd, const char *json, long long deadline)
{
	int ret = send_all(fd, json, strlen(json), deadline);

	if (!ret)
		ret = send_all(fd, "\n", 1, deadline);
	if (!ret && shutdown(fd, SHUT_WR))
		ret = -errno;
	return ret;
}

/**
 * read_reply() - read until EOF
 * @fd:		connected socket
 * @deadline:	clock_ms() value
 * @out:	set to the malloc'd, NUL-terminated reply
 *
 * Return: reply length on success, -errno on failure
 */
static ssize_t read_reply(int fd, long long deadline, char **out)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap + 1);
	int ret = 0;

	while (buf && !ret) {
		ssize_t n;

		if (len == cap) {
			char *nb = cap < APICLIENT_MAX_REPLY
			                   ? realloc(buf, cap * 2 + 1)
			                   : NULL;

			if (!nb) {
				ret = cap < APICLIENT_MAX_REPLY ? -ENOMEM
				                                : -EMSGSIZE;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len, 0);
		/* A server closing with our bytes unread resets us, after
		 * what it sent (slirp4netns does so after "too large
		 * message"): an end like EOF.
		 */
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
		if (n > 0)
			len += (size_t)n;
		else if (errno == EAGAIN)
			ret = wait_fd(fd, POLLIN, deadline);
		else if (errno != EINTR)
			ret = -errno;
		if (ret > 0)
			ret = 0;
	}
	if (!buf)
		return -ENOMEM;
	if (ret) {
		free(buf);
		return ret;
	}
	buf[len] = '\0';
	*out = buf;
	return (ssize_t)len;
}

/**
 * reply_status() - exit status for a reply
 * @reply:	reply text
 *
 * Return: 0 without an "error" key, 1 with one or if it is not a JSON
 *	   object (after saying so on stderr)
 */
static int reply_status(const char *reply)
{
	json_t *root = json_loads(reply, JSON_DECODE_ANY, NULL);
	int ret = 0;

	if (!json_is_object(root)) {
		err_msg("api: the reply is not a JSON object");
		ret = 1;
	} else if (json_object_get(root, "error")) {
		ret = 1;
	}
	json_decref(root);
	return ret;
}

/**
 * apiclient_main() - tapir api SOCKET JSON
 * @argc:	argument count, argv[0] being "api"
 * @argv:	arguments
 *
 * Return: exit status: 0 success, 1 error reply, 2 no reply
 */
int apiclient_main(int argc, char **argv)
{
	long long deadline = (long long)clock_ms() + APICLIENT_TIMEOUT_MS;
	char *reply = NULL;
	int fd, sent, ret;
	ssize_t n;

	if (argc != 3) {
		err_msg("usage: tapir api SOCKET JSON");
		return 2;
	}
	fd = connect_to(argv[1]);
	if (fd < 0)
		return 2;
	sent = send_request(fd, argv[2], deadline);
	/* Whatever became of the request, a reply that came is the answer: a
	 * server that refuses at once (tapir out of fds) replies and closes
	 * before it reads, and our send then fails (EPIPE, ECONNRESET) or
	 * never ends.
	 */
	n = read_reply(fd, deadline, &reply);
	close(fd);
	if (n <= 0) {
		if (sent < 0 && sent != -EPIPE && sent != -ECONNRESET)
			err_errno(-sent, "api: send request to %s", argv[1]);
		else if (n < 0)
			err_errno((int)-n, "api: read reply from %s", argv[1]);
		else
			err_msg("api: %s closed the connection without a reply",
			        argv[1]);
		free(reply);
		return 2;
	}
	printf("%s\n", reply);
	ret = reply_status(reply);
	free(reply);
	return ret;
}
