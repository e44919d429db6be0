// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test tool: UDP round trips against an echo server, for loss and
 * delay: how many came back, and how long they took
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define PROBE_MAX 100000
/* After the last datagram, how long echoes are waited for. */
#define PROBE_LINGER_NS 2000000000LL

/**
 * struct probe - one datagram's fate
 * @sent:	when it left, ns
 * @rtt:	its first echo's round trip, ns, or -1 if none came
 * @echoes:	echoes received (more than one: duplicated)
 */
struct probe {
	int64_t sent;
	int64_t rtt;
	unsigned int echoes;
};

static struct probe probes[PROBE_MAX];

/**
 * now_ns() - monotonic clock
 *
 * Return: nanoseconds
 */
static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/**
 * take_echoes() - read every echo waiting, wait up to @wait_ms for one
 * @fd:		socket
 * @wait_ms:	poll timeout
 * @n:		datagrams sent so far
 * @order:	count of echoes that came after a later one
 */
static void take_echoes(int fd, int wait_ms, unsigned int n,
                        unsigned int *order)
{
	static uint32_t last;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char buf[2048];
	uint32_t seq;
	ssize_t r;

	if (poll(&p, 1, wait_ms) <= 0)
		return;
	while ((r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 4) {
		memcpy(&seq, buf, 4);
		if (seq >= n)
			continue;
		if (!probes[seq].echoes++)
			probes[seq].rtt = now_ns() - probes[seq].sent;
		if (seq < last)
			(*order)++;
		last = seq;
	}
}

/**
 * cmp_rtt() - qsort order of round trips
 * @a:		one
 * @b:		another
 *
 * Return: <0, 0 or >0
 */
static int cmp_rtt(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/**
 * report() - print the JSON summary line
 * @n:		datagrams sent
 * @order:	echoes out of order
 */
static void report(unsigned int n, unsigned int order)
{
	static int64_t rtts[PROBE_MAX];
	unsigned int got = 0, dups = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (probes[i].echoes)
			rtts[got++] = probes[i].rtt;
		if (probes[i].echoes > 1)
			dups += probes[i].echoes - 1;
	}
	qsort(rtts, got, sizeof(rtts[0]), cmp_rtt);
	printf("{\"sent\":%u,\"received\":%u,\"duplicates\":%u,"
	       "\"reordered\":%u,\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
	       n, got, dups, order, got ? rtts[got / 2] / 1e3 : -1.0,
	       got ? rtts[got * 99 / 100] / 1e3 : -1.0);
}

/**
 * main() - udpprobe ADDR PORT COUNT [INTERVAL_US [SIZE]]
 * @argc:	argument count
 * @argv:	arguments
 *
 * Sends COUNT datagrams of SIZE bytes (default 64), one every
 * INTERVAL_US (default 1000), each carrying its sequence number, to an
 * echo server at ADDR:PORT (IPv4); then waits 2 s for the last echoes.
 * Prints {"sent","received","duplicates","reordered","p50_us","p99_us"}.
 *
 * Return: 0, or 1 on bad arguments or a socket error
 */
int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	unsigned int n, order = 0;
	long interval = 1000, size = 64;
	char buf[2048] = {0};
	int64_t next, end;
	int fd;

	if (argc < 4 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: udpprobe ADDR PORT COUNT "
		                "[INTERVAL_US [SIZE]]\n");
		return 1;
	}
	sa.sin_port = htons((uint16_t)atoi(argv[2]));
	n = (unsigned int)atoi(argv[3]);
	if (argc > 4)
		interval = atol(argv[4]);
	if (argc > 5)
		size = atol(argv[5]);
	if (!n || n > PROBE_MAX || interval < 0 || size < 4 ||
	    size > (long)sizeof(buf)) {
		fprintf(stderr, "udpprobe: COUNT 1..%d, SIZE 4..%zu\n",
		        PROBE_MAX, sizeof(buf));
		return 1;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("udpprobe: socket");
		return 1;
	}
	next = now_ns();
	for (unsigned int i = 0; i < n; i++) {
		int64_t wait = next - now_ns();

		while (wait > 0) {
			take_echoes(fd, (int)(wait / 1000000) + 1, i, &order);
			wait = next - now_ns();
		}
		memcpy(buf, &i, 4);
		probes[i].sent = now_ns();
		if (send(fd, buf, (size_t)size, 0) < 0 && errno != ECONNREFUSED)
			perror("udpprobe: send");
		next += interval * 1000;
	}
	end = now_ns() + PROBE_LINGER_NS;
	while (now_ns() < end)
		take_echoes(fd, 100, n, &order);
	report(n, order);
	return 0;
}
