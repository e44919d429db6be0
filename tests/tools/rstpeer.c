// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test tool: one TCP connection that one side resets mid-transfer
 *
 *   rstpeer server PORT ROLE [BYTES]
 *	listen on 0.0.0.0:PORT, serve one connection in ROLE, exit
 *   rstpeer client ADDR PORT ROLE [BYTES]
 *	connect to ADDR:PORT (IPv4) and play ROLE
 *
 * ROLE is one of:
 *   send-rst	write BYTES, and more until the kernel holds UNSENT_MIN it
 *		has not sent, for STUCK_MS (a peer that reads as fast as we
 *		write would otherwise get the whole stream before the
 *		reset), then
 *		close with SO_LINGER {1, 0}: the kernel drops what is still
 *		queued and sends an RST, in the middle of the stream as the
 *		peer sees it
 *   recv-rst	read BYTES, then reset the same way while the peer writes
 *   sink	read until EOF or an error; with BYTES, stop reading for
 *		PAUSE_MS once that many are in, then go on: the sender's
 *		kernel is left holding bytes the window has no room for
 *   source	write until an error (at most SOURCE_MAX bytes)
 *
 * Prints one line, "ROLE end=HOW bytes=N" (send-rst adds " unsent=U",
 * the bytes not sent yet when last measured, just before the close: the
 * peer gets fewer than N). HOW is done (the transfer ended as the role
 * says: BYTES moved, then the reset sent for send-rst and recv-rst), eof,
 * reset (ECONNRESET or EPIPE), timeout (nothing ended it within
 * DEADLINE_S), setsockopt-failed or ioctl-failed (the reset could not be
 * armed or the unsent bytes not counted), limit (source wrote SOURCE_MAX)
 * or the errno text. Exits 0 once that line is out, 1 on a set-up error.
 * socat and bash cannot send an RST on purpose.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Every run ends by then, whatever the peer does. */
#define DEADLINE_S 60
#define SOURCE_MAX (4ULL << 30)
/* Unsent bytes send-rst waits for: far more than a tail Nagle holds back
 * or one window update lets out between the last look and close(), so
 * that the reset drops some (a sink that pauses leaves megabytes).
 */
#define UNSENT_MIN (256 * 1024)
/* How long a sink given BYTES stops reading, in ms. */
#define PAUSE_MS 2000
/* How long UNSENT_MIN must stay unsent: a writer faster than its TCP
 * (pacing, the congestion window) sees a backlog that goes out at once
 * while the window is open; one that lasts this long waits for a window
 * that has shut.
 */
#define STUCK_MS 50

static volatile sig_atomic_t timed_out;

/**
 * on_alarm() - the deadline passed: the blocked call returns EINTR
 * @sig:	unused
 */
static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
	/* Again each second: a call that blocks after the flag was last
	 * looked at is interrupted too.
	 */
	alarm(1);
}

/**
 * arm_reset() - make the close of @fd send an RST rather than a FIN
 * @fd:		connected socket
 *
 * Set before the transfer, so that after top_up()'s last measure nothing
 * but close() runs.
 *
 * Return: 0, or -1 if the linger option could not be set
 */
static int arm_reset(int fd)
{
	struct linger l = {.l_onoff = 1, .l_linger = 0};

	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l))) {
		perror("rstpeer: setsockopt(SO_LINGER)");
		return -1;
	}
	return 0;
}

/**
 * top_up() - write to @fd until the kernel holds UNSENT_MIN bytes it has
 *	      not sent, still STUCK_MS later
 * @fd:		connected TCP socket
 * @buf:	bytes to write
 * @len:	their length
 * @done:	bytes written so far, updated
 * @n:		the last send() result, updated
 *
 * Return: the unsent count (>= UNSENT_MIN), 0 if a send failed or the
 * deadline passed first (@n tells which), or -1 after a message
 */
static long top_up(int fd, const char *buf, size_t len,
                   unsigned long long *done, ssize_t *n)
{
	const struct timespec stuck = {0, STUCK_MS * 1000000L};
	bool seen = false;
	int left;

	while (!timed_out) {
		if (ioctl(fd, SIOCOUTQNSD, &left)) {
			perror("rstpeer: ioctl(SIOCOUTQNSD)");
			return -1;
		}
		if (left >= UNSENT_MIN && seen)
			return left;
		seen = left >= UNSENT_MIN;
		if (seen) {
			nanosleep(&stuck, NULL);
			continue;
		}
		*n = send(fd, buf, len, MSG_NOSIGNAL);
		if (*n <= 0)
			return 0;
		*done += (unsigned long long)*n;
	}
	return 0;
}

/**
 * how() - name the way a transfer ended
 * @n:		the last read() or write() result
 * @err:	its errno, if @n < 0
 *
 * Return: a static string
 */
static const char *how(ssize_t n, int err)
{
	if (n == 0)
		return "eof";
	if (timed_out)
		return "timeout";
	if (err == ECONNRESET || err == EPIPE)
		return "reset";
	return strerror(err);
}

/**
 * transfer() - move the bytes of @role on @fd
 * @fd:		connected socket
 * @role:	see the top of this file
 * @bytes:	BYTES
 * @done:	bytes moved, set
 * @left:	send-rst: bytes unsent at the end, set
 *
 * Return: how it ended, for the printed line
 */
static const char *transfer(int fd, const char *role, unsigned long long bytes,
                            unsigned long long *done, long *left)
{
	static char buf[65536];
	bool sending = !strcmp(role, "send-rst") || !strcmp(role, "source");
	unsigned long long limit = !strcmp(role, "source") ? SOURCE_MAX : bytes;
	ssize_t n = 1;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7);
	/* A send() that copied some bytes before SIGALRM returns that count,
	 * not EINTR: the flag, not the error, ends the loop at the deadline.
	 */
	while (!timed_out && (!strcmp(role, "sink") || *done < limit)) {
		size_t want = sizeof(buf);

		if (!strcmp(role, "sink") && limit && *done >= limit) {
			struct timespec t = {PAUSE_MS / 1000,
			                     PAUSE_MS % 1000 * 1000000L};

			nanosleep(&t, NULL);
			limit = 0;
			if (timed_out)
				break;
		}

		if (strcmp(role, "sink") && limit - *done < want)
			want = (size_t)(limit - *done);
		n = sending ? send(fd, buf, want, MSG_NOSIGNAL)
		            : recv(fd, buf, want, 0);
		if (n <= 0)
			return how(n, errno);
		*done += (unsigned long long)n;
	}
	if (!timed_out && !strcmp(role, "send-rst")) {
		*left = top_up(fd, buf, sizeof(buf), done, &n);
		if (*left < 0)
			return "ioctl-failed";
		if (n <= 0)
			return how(n, errno);
	}
	if (timed_out)
		return "timeout";
	/* A sink ends only on EOF, an error or the deadline. */
	return strcmp(role, "source") ? "done" : "limit";
}

/**
 * play() - run @role on the connected socket @fd and print the result
 * @fd:		connected socket, closed here (with an RST for send-rst and
 *		recv-rst)
 * @role:	see the top of this file
 * @bytes:	BYTES
 *
 * Return: 0 once the line is printed, 1 for an unknown role
 */
static int play(int fd, const char *role, unsigned long long bytes)
{
	bool resetting = !strcmp(role, "send-rst") || !strcmp(role, "recv-rst");
	unsigned long long done = 0;
	const char *end;
	long left = 0;

	if (strcmp(role, "send-rst") && strcmp(role, "source") &&
	    strcmp(role, "recv-rst") && strcmp(role, "sink")) {
		fprintf(stderr, "rstpeer: unknown role %s\n", role);
		close(fd);
		return 1;
	}
	if (resetting && arm_reset(fd))
		end = "setsockopt-failed";
	else
		end = transfer(fd, role, bytes, &done, &left);
	close(fd);
	if (!strcmp(role, "send-rst"))
		printf("%s end=%s bytes=%llu unsent=%ld\n", role, end, done,
		       left);
	else
		printf("%s end=%s bytes=%llu\n", role, end, done);
	return 0;
}

/**
 * serve() - accept one connection on 0.0.0.0:@port
 * @port:	TCP port
 *
 * Return: the connection, or -1 after a message
 */
static int serve(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)port)};
	int lfd, fd, one = 1;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1)) {
		perror("rstpeer: listen");
		if (lfd >= 0)
			close(lfd);
		return -1;
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		perror("rstpeer: accept");
	close(lfd);
	return fd;
}

/**
 * dial() - connect to @addr:@port
 * @addr:	IPv4 address
 * @port:	TCP port
 *
 * Return: the connection, or -1 after a message
 */
static int dial(const char *addr, int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons((uint16_t)port)};
	int fd;

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "rstpeer: bad address %s\n", addr);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "rstpeer: connect %s:%d: %s\n", addr, port,
		        strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
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
	struct sigaction sa = {.sa_handler = on_alarm};
	const char *role;
	int fd;

	/* No SA_RESTART: the alarm interrupts a blocked read or write. */
	sigaction(SIGALRM, &sa, NULL);
	alarm(DEADLINE_S);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "server")) {
		role = argv[3];
		fd = serve(atoi(argv[2]));
		argv += 3;
		argc -= 3;
	} else if ((argc == 5 || argc == 6) && !strcmp(argv[1], "client")) {
		role = argv[4];
		fd = dial(argv[2], atoi(argv[3]));
		argv += 4;
		argc -= 4;
	} else {
		fprintf(stderr, "usage: rstpeer server PORT ROLE [BYTES] | "
		                "rstpeer client ADDR PORT ROLE [BYTES]\n");
		return 1;
	}
	if (fd < 0)
		return 1;
	return play(fd, role, argc == 2 ? strtoull(argv[1], NULL, 0) : 0);
}
