// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test tool: a UDP echo server, linked statically so that it runs
 * in the busybox image of the engine tests (busybox has no UDP server)
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/**
 * bind_any() - a UDP socket on every address of both families
 * @port:	port
 *
 * One socket on :: that takes IPv4 too, as servers in containers have;
 * 0.0.0.0 where there is no IPv6.
 *
 * Return: the socket, or -1
 */
static int bind_any(uint16_t port)
{
	struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6,
	                           .sin6_port = htons(port)};
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons(port)};
	const int off = 0;
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);

	if (fd >= 0 &&
	    !setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) &&
	    !bind(fd, (struct sockaddr *)&sa6, sizeof(sa6)))
		return fd;
	if (fd >= 0)
		close(fd);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/**
 * bind_addr() - a UDP socket on one address
 * @text:	IPv4 or IPv6 address, as text
 * @port:	port
 *
 * For a test whose server must be on loopback only, as socat's bind= has
 * it, without socat's process per client.
 *
 * Return: the socket, or -1
 */
static int bind_addr(const char *text, uint16_t port)
{
	struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6,
	                           .sin6_port = htons(port)};
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons(port)};
	struct sockaddr *sa_any = (struct sockaddr *)&sa;
	socklen_t len = sizeof(sa);
	int fd;

	if (inet_pton(AF_INET6, text, &sa6.sin6_addr) == 1) {
		sa_any = (struct sockaddr *)&sa6;
		len = sizeof(sa6);
	} else if (inet_pton(AF_INET, text, &sa.sin_addr) != 1) {
		fprintf(stderr, "udpecho: %s: not an IP address\n", text);
		return -1;
	}
	fd = socket(sa_any->sa_family, SOCK_DGRAM, 0);
	if (fd >= 0 && bind(fd, sa_any, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/**
 * main() - udpecho PORT [ADDR]: send every datagram to [::]:PORT, or to
 *	    ADDR:PORT, back
 * @argc:	argument count
 * @argv:	arguments
 *
 * Blocks in recvfrom(); runs until killed (the container's end).
 *
 * Return: 1 on a bad argument or a socket error
 */
int main(int argc, char **argv)
{
	struct sockaddr_storage peer;
	static char buf[65536];
	socklen_t plen;
	ssize_t n;
	long port;
	int fd;

	port = argc == 2 || argc == 3 ? strtol(argv[1], NULL, 10) : 0;
	if (port < 1 || port > 65535) {
		fprintf(stderr, "usage: udpecho PORT [ADDR]\n");
		return 1;
	}
	if (argc == 3)
		fd = bind_addr(argv[2], (uint16_t)port);
	else
		fd = bind_any((uint16_t)port);
	if (fd < 0) {
		perror("udpecho: socket or bind");
		return 1;
	}
	for (;;) {
		plen = sizeof(peer);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer,
		             &plen);
		if (n < 0) {
			perror("udpecho: recvfrom");
			return 1;
		}
		if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&peer,
		           plen) < 0)
			perror("udpecho: sendto");
	}
}
