// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test tool: an API server that ends each exchange one set way
 *
 *   apipeer PATH MODE [REPLY]
 *	listen on the unix stream socket PATH (mode 0777: clients may run
 *	as another user) and serve clients one after another until killed:
 *	mute	read the request to EOF, close without a reply
 *	answer	read the request to EOF, write REPLY, close
 *	unread	wait until the request has arrived, write REPLY and close
 *		with it unread: the client reads REPLY, then ECONNRESET
 *
 * PATH appears only once it listens (bound under another name, renamed),
 * so a test may wait for the file. Unlike socat's SYSTEM, nothing here
 * depends on timing: no child process races the request, and no timeout
 * ends an exchange before the reply; each wait is bounded by WAIT_MS
 * only so that a client that never sends can't hold the tool.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define WAIT_MS 10000

/**
 * enum mode - how the exchange ends
 * @MUTE:	request read to EOF, no reply
 * @ANSWER:	request read to EOF, then the reply
 * @UNREAD:	the reply once the request is there, the request unread
 */
enum mode { MUTE, ANSWER, UNREAD };

/**
 * readable() - wait until @fd has something to read, WAIT_MS at most
 * @fd:		accepted socket
 *
 * Return: true if it has
 */
static bool readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n;

	do
		n = poll(&p, 1, WAIT_MS);
	while (n < 0 && errno == EINTR);
	return n == 1;
}

/**
 * read_to_eof() - read and drop the request, up to the client's EOF
 * @fd:		accepted socket
 *
 * Return: true at EOF, false on an error or a silent client
 */
static bool read_to_eof(int fd)
{
	char buf[4096];
	ssize_t n;

	while (readable(fd)) {
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			return true;
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return false;
	}
	return false;
}

/**
 * serve() - end one exchange as @mode says
 * @fd:		accepted non-blocking socket; closed here
 * @mode:	how
 * @reply:	what to reply, for ANSWER and UNREAD
 */
static void serve(int fd, enum mode mode, const char *reply)
{
	size_t len = strlen(reply);
	bool go = mode == UNREAD ? readable(fd) : read_to_eof(fd);

	if (!go)
		fprintf(stderr, "apipeer: the client sent no request\n");
	else if (mode != MUTE && write(fd, reply, len) != (ssize_t)len)
		perror("apipeer: write reply");
	close(fd);
}

/**
 * listen_at() - listen on @path, which appears only once listening
 * @path:	socket path
 *
 * Return: the listening socket, or -1 after saying why
 */
static int listen_at(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.tmp", path) >=
	    (int)sizeof(sa.sun_path)) {
		fprintf(stderr, "apipeer: path too long: %s\n", path);
		return -1;
	}
	/* A stale one, from a run that was killed. */
	if (unlink(sa.sun_path) && errno != ENOENT) {
		perror("apipeer: unlink");
		return -1;
	}
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(sa.sun_path, 0777) || listen(fd, 16) ||
	    rename(sa.sun_path, path)) {
		perror("apipeer: listen");
		return -1;
	}
	return fd;
}

/**
 * main() - apipeer PATH MODE [REPLY]
 * @argc:	argument count
 * @argv:	arguments
 *
 * Return: 1 on a usage, set-up or accept() error; otherwise runs until
 *	   killed
 */
int main(int argc, char **argv)
{
	static const char *const names[] = {"mute", "answer", "unread"};
	int mode = -1, lfd;

	for (int i = 0; argc >= 3 && i < 3; i++)
		if (!strcmp(argv[2], names[i]))
			mode = i;
	if (mode < 0 || argc != (mode == MUTE ? 3 : 4)) {
		fprintf(stderr, "usage: apipeer PATH mute|answer REPLY|unread "
		                "REPLY\n");
		return 1;
	}
	lfd = listen_at(argv[1]);
	if (lfd < 0)
		return 1;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0)
			serve(fd, (enum mode)mode, mode == MUTE ? "" : argv[3]);
		else if (errno != EINTR && errno != ECONNABORTED) {
			perror("apipeer: accept");
			return 1;
		}
	}
}
