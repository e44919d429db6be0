// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test tool: many concurrent TCP connections that all carry data
 *
 *   manyconn server PORT [ADDR]
 *	echo server on 0.0.0.0:PORT, or ADDR:PORT (epoll, any number of
 *	clients)
 *   manyconn client ADDR PORT N BYTES HOLD_MS
 *	open N connections at once, then send BYTES on each and check the
 *	echo byte for byte, keep all N open for HOLD_MS more, then close;
 *	prints "connected N, verified N" and exits 0 only if all N verified
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 20000
#define DEADLINE_S 60

/**
 * struct conn - one client connection's progress
 * @fd:		socket
 * @sent:	bytes written
 * @rcvd:	bytes read back and verified
 * @bad:	the echo differed from what was sent
 */
struct conn {
	int fd;
	size_t sent;
	size_t rcvd;
	int bad;
};

/**
 * byte_at() - the byte connection @i sends at offset @off
 * @i:		connection index
 * @off:	offset
 *
 * Return: the byte; different per connection, so crossed streams show
 */
static unsigned char byte_at(int i, size_t off)
{
	return (unsigned char)(i * 131 + off * 7 + (off >> 8));
}

/**
 * raise_nofile() - allow as many fds as the hard limit permits
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/**
 * serve() - echo everything on every accepted connection
 * @port:	TCP port
 * @addr:	IPv4 address to listen on, NULL for all (a benchmark's server
 *		listens on loopback only)
 *
 * Return: 1 on a set-up error (runs until killed otherwise)
 */
static int serve(int port, const char *addr)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)port)};
	struct epoll_event ev, evs[256];
	int lfd, ep, one = 1;
	char buf[65536];

	if (addr && inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "manyconn: %s: not an IPv4 address\n", addr);
		return 1;
	}
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, 4096)) {
		perror("manyconn: bind/listen");
		return 1;
	}
	ep = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			ssize_t r;

			if (fd == lfd) {
				int cfd = accept(lfd, NULL, NULL);

				if (cfd < 0)
					continue;
				ev.events = EPOLLIN;
				ev.data.fd = cfd;
				epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev);
				continue;
			}
			r = read(fd, buf, sizeof(buf));
			if (r <= 0 || write(fd, buf, (size_t)r) != r)
				close(fd);
		}
	}
}

/**
 * pump() - make progress on one connection: write what fits, read back and
 *	    verify what came
 * @c:		connection
 * @i:		its index
 * @bytes:	bytes to exchange
 *
 * Reads in every call, not only once all is written: the echo path holds
 * less than @bytes when its buffers have not grown (a slow peer), and a
 * writer that does not read then waits on an echo server that waits on it.
 *
 * Return: 1 once all @bytes came back, 0 while in progress, -1 on error
 */
static int pump(struct conn *c, int i, size_t bytes)
{
	unsigned char buf[16384];
	ssize_t r;

	while (c->sent < bytes) {
		size_t n = bytes - c->sent < sizeof(buf) ? bytes - c->sent
		                                         : sizeof(buf);

		for (size_t k = 0; k < n; k++)
			buf[k] = byte_at(i, c->sent + k);
		r = write(c->fd, buf, n);
		if (r < 0 && errno == EAGAIN)
			break;
		if (r < 0)
			return -1;
		c->sent += (size_t)r;
	}
	while (c->rcvd < bytes) {
		r = read(c->fd, buf, sizeof(buf));
		if (r < 0)
			return errno == EAGAIN ? 0 : -1;
		if (r == 0)
			return -1;
		for (ssize_t k = 0; k < r; k++)
			c->bad |= buf[k] != byte_at(i, c->rcvd + (size_t)k);
		c->rcvd += (size_t)r;
	}
	return c->bad ? -1 : 1;
}

/**
 * connect_all() - start @n non-blocking connects
 * @conns:	array of @n
 * @n:		count
 * @sa:		destination
 *
 * Return: number of sockets created
 */
static int connect_all(struct conn *conns, int n, struct sockaddr_in *sa)
{
	for (int i = 0; i < n; i++) {
		conns[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (conns[i].fd < 0)
			return i;
		if (connect(conns[i].fd, (struct sockaddr *)sa, sizeof(*sa)) &&
		    errno != EINPROGRESS)
			return i;
	}
	return n;
}

/**
 * client() - the client mode described at the top of this file
 * @addr:	server IPv4 address
 * @port:	server port
 * @n:		connections
 * @bytes:	bytes per connection
 * @hold_ms:	time to keep all connections open after verification
 *
 * Return: 0 if every connection verified, 1 otherwise
 */
static int client(const char *addr, int port, int n, size_t bytes, int hold_ms)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)port)};
	struct conn *conns = calloc((size_t)n, sizeof(*conns));
	int *state = calloc((size_t)n, sizeof(int));
	int opened, done = 0, failed = 0;
	time_t deadline = time(NULL) + DEADLINE_S;
	struct timespec hold = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};

	if (!conns || !state || inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		free(conns);
		free(state);
		return 1;
	}
	opened = connect_all(conns, n, &sa);
	while (done + failed < opened && time(NULL) < deadline) {
		for (int i = 0; i < opened; i++) {
			int r;

			if (state[i])
				continue;
			r = pump(&conns[i], i, bytes);
			if (r) {
				state[i] = r;
				if (r > 0)
					done++;
				else
					failed++;
			}
		}
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	nanosleep(&hold, NULL);
	printf("connected %d, verified %d\n", opened, done);
	for (int i = 0; i < opened; i++)
		close(conns[i].fd);
	free(conns);
	free(state);
	return done == n ? 0 : 1;
}

/**
 * main() - dispatch on the mode
 * @argc:	argument count
 * @argv:	arguments
 *
 * Return: exit status
 */
int main(int argc, char **argv)
{
	raise_nofile();
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "server"))
		return serve(atoi(argv[2]), argc == 4 ? argv[3] : NULL);
	if (argc == 7 && !strcmp(argv[1], "client")) {
		int n = atoi(argv[4]);

		if (n < 1 || n > MAX_CONNS)
			return 1;
		return client(argv[2], atoi(argv[3]), n,
		              (size_t)strtoul(argv[5], NULL, 0), atoi(argv[6]));
	}
	fprintf(stderr, "usage: manyconn server PORT [ADDR] | "
	                "manyconn client ADDR PORT N BYTES HOLD_MS\n");
	return 1;
}
