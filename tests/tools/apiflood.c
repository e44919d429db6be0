// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test tool: many unix-socket clients that connect and say nothing
 *
 *   apiflood PATH N HOLD_S
 *	connect N clients to the unix stream socket PATH one after another,
 *	send nothing, print "connected C, failed F" once all were tried,
 *	keep them open HOLD_S seconds (or until a signal), then exit, which
 *	closes them all
 *
 * Each connect is bounded by SO_SNDTIMEO (a server that stops accepting
 * blocks a unix connect once its backlog is full), the whole run by
 * DEADLINE_S on top of HOLD_S. The soft fd limit is raised to what N needs
 * if the hard one allows it; otherwise the clients the limit leaves out
 * count as failed.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 100000
#define CONNECT_TIMEOUT_S 5
#define DEADLINE_S 120

/**
 * raise_nofile() - make room for @n more fds, as far as the hard limit goes
 * @n:		fds wanted besides stdio
 */
static void raise_nofile(long n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < (rlim_t)n + 16) {
		rl.rlim_cur = (rlim_t)n + 16;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/**
 * dial() - one silent client
 * @sa:		server address
 *
 * Return: the connected socket, or -1 (errno set)
 */
static int dial(const struct sockaddr_un *sa)
{
	struct timeval tv = {CONNECT_TIMEOUT_S, 0};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	/* For AF_UNIX the send timeout bounds a connect that waits for room
	 * in the listener's backlog.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/**
 * main() - apiflood PATH N HOLD_S
 * @argc:	argument count
 * @argv:	arguments
 *
 * Return: 0 if every client connected, 1 otherwise
 */
int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	long n, connected = 0, failed = 0;
	int hold, first_err = 0, *fds;
	time_t deadline;

	if (argc != 4 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: apiflood PATH N HOLD_S\n");
		return 1;
	}
	n = strtol(argv[2], NULL, 10);
	hold = atoi(argv[3]);
	if (n < 1 || n > MAX_CLIENTS || hold < 0) {
		fprintf(stderr, "apiflood: N is 1..%d, HOLD_S >= 0\n",
		        MAX_CLIENTS);
		return 1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	raise_nofile(n);
	fds = calloc((size_t)n, sizeof(*fds));
	if (!fds) {
		perror("apiflood: calloc");
		return 1;
	}
	deadline = time(NULL) + DEADLINE_S;
	for (long i = 0; i < n; i++) {
		bool late = time(NULL) >= deadline;

		fds[i] = late ? -1 : dial(&sa);
		if (fds[i] >= 0) {
			connected++;
			continue;
		}
		if (!first_err)
			first_err = late || !errno ? ETIMEDOUT : errno;
		failed++;
	}
	printf("connected %ld, failed %ld", connected, failed);
	if (failed)
		printf(" (first: %s)", strerror(first_err));
	printf("\n");
	fflush(stdout);
	sleep((unsigned int)hold);
	for (long i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return failed ? 1 : 0;
}
