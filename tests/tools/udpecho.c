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
 * main() - udpecho PORT: send every datagram to 0.0.0.0:PORT back
 * @argc:	argument count
 * @argv:	arguments
 *
 * Blocks in recvfrom(); runs until killed (the container's end).
 *
 * Return: 1 on a bad argument or a socket error
 */
int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct sockaddr_storage peer;
	static char buf[65536];
	socklen_t plen;
	ssize_t n;
	long port;
	int fd;

	port = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	if (port < 1 || port > 65535) {
		fprintf(stderr, "usage: udpecho PORT\n");
		return 1;
	}
	sa.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
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
