// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test tool: host clients that look alike to the guest
 *
 *   collide N BASE A_SRC A_DST A_PORT B_SRC B_DST B_PORT
 *
 * For each of N source ports P = BASE..BASE+N-1: client A connects from
 * A_SRC:P to A_DST:A_PORT and checks an echo through it; client B then
 * connects from B_SRC:P to B_DST:B_PORT, which the guest would see as the
 * same connection (every loopback or IPv6 client of a forward appears as
 * the gateway, with its own port), and must be refused (reset or closed,
 * never echoed); then A must still echo. At the end every A echoes once
 * more. Prints "pairs N, established E, refused R, intact I" and exits 0
 * only if all four are N. Stops early after 5 failed pairs.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_PAIRS 1000
/* How long one connect, echo or refusal may take. */
#define WAIT_S 3
#define MAX_FAILED 5

/**
 * struct end - an address and port to bind or connect to
 * @sa:		the address
 * @len:	its length
 */
struct end {
	struct sockaddr_storage sa;
	socklen_t len;
};

/**
 * parse_end() - an IPv4 or IPv6 literal and a port
 * @addr:	literal
 * @port:	port, 0 to fill in later
 * @e:		filled
 *
 * Return: 0, or -1 if @addr is neither
 */
static int parse_end(const char *addr, int port, struct end *e)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)&e->sa;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&e->sa;

	memset(e, 0, sizeof(*e));
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		e->len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		e->len = sizeof(*s6);
		return 0;
	}
	return -1;
}

/**
 * set_port() - the port of an end
 * @e:		end
 * @port:	port
 */
static void set_port(struct end *e, int port)
{
	if (e->sa.ss_family == AF_INET)
		((struct sockaddr_in *)&e->sa)->sin_port =
		        htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)&e->sa)->sin6_port =
		        htons((uint16_t)port);
}

/**
 * dial() - connect from @src to @dst, with WAIT_S timeouts on the socket
 * @src:	source address and port
 * @dst:	destination
 *
 * Return: the socket, or -1 (after saying why)
 */
static int dial(const struct end *src, const struct end *dst)
{
	const struct timeval tv = {WAIT_S, 0};
	int fd = socket(src->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	const int one = 1;

	if (fd < 0) {
		perror("collide: socket");
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (const struct sockaddr *)&src->sa, src->len) ||
	    connect(fd, (const struct sockaddr *)&dst->sa, dst->len)) {
		perror("collide: bind or connect");
		close(fd);
		return -1;
	}
	return fd;
}

/**
 * echo_ok() - send a tag and read it back
 * @fd:		connected socket
 * @tag:	what to send
 *
 * Return: 1 if the same bytes came back, 0 if not (reset, EOF, timeout)
 */
static int echo_ok(int fd, const char *tag)
{
	size_t len = strlen(tag), got = 0;
	char buf[64];

	if (send(fd, tag, len, MSG_NOSIGNAL) != (ssize_t)len)
		return 0;
	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, 0);

		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	return !memcmp(buf, tag, len);
}

/**
 * refused() - whether a connection is reset or closed without an echo
 * @fd:		connected socket
 *
 * Return: 1 if refused, 0 if it echoed or stayed silent for WAIT_S
 */
static int refused(int fd)
{
	char buf[16];
	ssize_t n;

	if (send(fd, "B", 1, MSG_NOSIGNAL) < 0)
		return errno == ECONNRESET || errno == EPIPE;
	n = recv(fd, buf, sizeof(buf), 0);
	return n == 0 || (n < 0 && errno == ECONNRESET);
}

int main(int argc, char **argv)
{
	static int afd[MAX_PAIRS];
	struct end asrc, adst, bsrc, bdst;
	int n, base, est = 0, ref = 0, intact = 0, failed = 0, i;
	char tag[32];

	if (argc != 9 || (n = atoi(argv[1])) < 1 || n > MAX_PAIRS ||
	    (base = atoi(argv[2])) < 1 || base + n > 65536 ||
	    parse_end(argv[3], 0, &asrc) ||
	    parse_end(argv[4], atoi(argv[5]), &adst) ||
	    parse_end(argv[6], 0, &bsrc) ||
	    parse_end(argv[7], atoi(argv[8]), &bdst)) {
		fprintf(stderr, "usage: collide N BASE A_SRC A_DST A_PORT "
		                "B_SRC B_DST B_PORT\n");
		return 2;
	}
	for (i = 0; i < n && failed < MAX_FAILED; i++) {
		int bfd, ok = 1;

		set_port(&asrc, base + i);
		set_port(&bsrc, base + i);
		snprintf(tag, sizeof(tag), "A%d", i);
		afd[i] = dial(&asrc, &adst);
		if (afd[i] < 0 || !echo_ok(afd[i], tag)) {
			failed++;
			continue;
		}
		est++;
		bfd = dial(&bsrc, &bdst);
		if (bfd < 0 || refused(bfd))
			ref++;
		else
			ok = 0;
		if (bfd >= 0)
			close(bfd);
		if (!echo_ok(afd[i], tag)) {
			fprintf(stderr, "collide: pair %d: A broken by B\n", i);
			ok = 0;
		}
		failed += !ok;
	}
	for (int j = 0; j < i; j++) {
		snprintf(tag, sizeof(tag), "end%d", j);
		if (afd[j] >= 0 && echo_ok(afd[j], tag))
			intact++;
		if (afd[j] >= 0)
			close(afd[j]);
	}
	printf("pairs %d, established %d, refused %d, intact %d\n", n, est, ref,
	       intact);
	return est == n && ref == n && intact == n ? 0 : 1;
}
