// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - benchmark helper: TCP request/response latency (RR and CRR) */

/*
 * rr server -p PORT [-b ADDR] [-s SIZE]
 * rr client -H ADDR -p PORT [-m rr|crr] [-n MAX] [-d SECONDS] [-s SIZE]
 *           [-c CONNECTIONS]
 *
 * The server answers every SIZE-byte request with SIZE bytes, each
 * connection in a process of its own. The client runs transactions until
 * MAX are done or SECONDS have passed: "rr" sends them all over one
 * connection (the latency of a packet through the driver and back), "crr"
 * opens a new connection for each (adding the handshake and flow set-up in
 * the driver). With -c, CONNECTIONS processes do so side by side, MAX
 * split between them, and their latencies are merged. It prints one JSON
 * object:
 *
 *   {"mode":"rr","size":1,"connections":C,"transactions":N,"seconds":S,
 *    "tps":T,"p50_us":A,"p99_us":B,"bytes":PAYLOAD_BYTES_BOTH_WAYS}
 *
 * Every socket operation has a 5 s timeout, so a stalled peer makes the
 * client fail (exit 1, a message on stderr) instead of hanging.
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RR_IO_TIMEOUT_S 5
#define RR_MAX_SIZE 65536
#define RR_MAX_TRANSACTIONS 10000000L
#define RR_MAX_CONNECTIONS 256

struct rr_opts {
	const char *mode;
	const char *host;
	const char *bind;
	int port;
	size_t size;
	long max;
	double seconds;
	int conns;
};

static char rr_buf[RR_MAX_SIZE];

/**
 * now_ns() - monotonic clock
 *
 * Return: nanoseconds since an arbitrary start
 */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/**
 * set_timeouts() - bound every blocking call on a socket
 * @s:		socket
 *
 * SO_SNDTIMEO also bounds connect() on Linux.
 *
 * Return: 0 on success, -1 with errno set
 */
static int set_timeouts(int s)
{
	struct timeval tv = {.tv_sec = RR_IO_TIMEOUT_S};

	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -1;
	return setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/**
 * io_full() - read or write exactly @len bytes
 * @fd:		socket or pipe
 * @buf:	buffer
 * @len:	bytes to transfer
 * @wr:		true to write, false to read
 *
 * read() and write() serve both; SIGPIPE is ignored (main()), so a write
 * to a reset socket fails with EPIPE instead of killing the process.
 *
 * Return: 0 on success, -1 with errno set (ECONNRESET on early EOF)
 */
static int io_full(int fd, void *buf, size_t len, int wr)
{
	char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = wr ? write(fd, p + done, len - done)
		               : read(fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = ECONNRESET;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

/**
 * make_addr() - fill an IPv4 socket address
 * @sa:		filled
 * @host:	dotted quad, or NULL for INADDR_ANY
 * @port:	port
 *
 * Return: 0 on success, -1 if @host is not an IPv4 address
 */
static int make_addr(struct sockaddr_in *sa, const char *host, int port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (!host)
		return 0;
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

/**
 * serve_conn() - answer requests on one connection until EOF or error
 * @s:		connected socket
 * @size:	request and response size
 */
static void serve_conn(int s, size_t size)
{
	int one = 1;

	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (set_timeouts(s) < 0)
		return;
	while (io_full(s, rr_buf, size, 0) == 0) {
		if (io_full(s, rr_buf, size, 1) < 0)
			break;
	}
}

/**
 * run_server() - listen and serve connections one after another, forever
 * @o:		options (bind, port, size)
 *
 * Return: 1 on set-up failure (it never returns otherwise)
 */
static int run_server(const struct rr_opts *o)
{
	struct sockaddr_in sa;
	int one = 1, l;

	if (make_addr(&sa, o->bind, o->port) < 0) {
		fprintf(stderr, "rr: bad bind address %s\n", o->bind);
		return 1;
	}
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 ||
	    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(l, 128) < 0) {
		fprintf(stderr, "rr: listen on port %d: %s\n", o->port,
		        strerror(errno));
		return 1;
	}
	/* Children are reaped by the kernel. */
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		int s = accept(l, NULL, NULL);
		pid_t pid;

		if (s < 0)
			continue;
		pid = fork();
		if (pid == 0) {
			close(l);
			serve_conn(s, o->size);
			_exit(0);
		}
		if (pid < 0)
			fprintf(stderr, "rr: fork for a connection: %s\n",
			        strerror(errno));
		close(s);
	}
}

/**
 * dial() - open a connection with timeouts and TCP_NODELAY set
 * @sa:		server address
 *
 * Return: the socket, or -1 with errno set
 */
static int dial(const struct sockaddr_in *sa)
{
	int one = 1, s, e;

	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return -1;
	if (set_timeouts(s) < 0 ||
	    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
	    connect(s, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		e = errno;
		close(s);
		errno = e;
		return -1;
	}
	return s;
}

/**
 * transact() - one request and its response on a connected socket
 * @s:		socket
 * @size:	request and response size
 *
 * Return: 0 on success, -1 with errno set
 */
static int transact(int s, size_t size)
{
	if (io_full(s, rr_buf, size, 1) < 0)
		return -1;
	return io_full(s, rr_buf, size, 0);
}

/**
 * cmp_u64() - qsort() comparator for uint64_t
 * @a:		first element
 * @b:		second element
 *
 * Return: <0, 0 or >0 as *a is below, equal to or above *b
 */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/**
 * percentile_us() - nearest-rank percentile of sorted latencies
 * @lat:	latencies in ns, sorted ascending
 * @n:		count, at least 1
 * @pct:	percentile, 0..100
 *
 * Return: the percentile in microseconds
 */
static double percentile_us(const uint64_t *lat, long n, double pct)
{
	long rank = (long)(pct / 100.0 * (double)n + 0.999999);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return (double)lat[rank - 1] / 1000.0;
}

/**
 * run_transactions() - the client loop, recording each latency
 * @o:		options
 * @sa:		server address
 * @lat:	filled with one latency (ns) per transaction, @o->max entries
 * @elapsed:	filled with the run's duration in ns
 *
 * Return: the number of transactions done, or -1 on failure (reported)
 */
static long run_transactions(const struct rr_opts *o,
                             const struct sockaddr_in *sa, uint64_t *lat,
                             uint64_t *elapsed)
{
	int crr = strcmp(o->mode, "crr") == 0, s = -1;
	uint64_t start = now_ns(), t0;
	uint64_t end = start + (uint64_t)(o->seconds * 1e9);
	long n;

	if (!crr && (s = dial(sa)) < 0) {
		fprintf(stderr, "rr: connect to %s:%d: %s\n", o->host, o->port,
		        strerror(errno));
		return -1;
	}
	for (n = 0; n < o->max && (t0 = now_ns()) < end; n++) {
		if (crr && (s = dial(sa)) < 0) {
			fprintf(stderr, "rr: connect %ld to %s:%d: %s\n", n,
			        o->host, o->port, strerror(errno));
			return -1;
		}
		if (transact(s, o->size) < 0) {
			fprintf(stderr, "rr: transaction %ld with %s:%d: %s\n",
			        n, o->host, o->port, strerror(errno));
			close(s);
			return -1;
		}
		if (crr)
			close(s);
		lat[n] = now_ns() - t0;
	}
	if (!crr)
		close(s);
	*elapsed = now_ns() - start;
	return n;
}

/**
 * run_child() - one connection's transactions, in a child: its count, run
 *		 time and latencies go to @fd
 * @o:		options, max already this child's share
 * @sa:		server address
 * @fd:		write end of this child's pipe
 *
 * Return: the child's exit status
 */
static int run_child(const struct rr_opts *o, const struct sockaddr_in *sa,
                     int fd)
{
	uint64_t *lat = calloc((size_t)o->max, sizeof(*lat)), elapsed = 0;
	long n = lat ? run_transactions(o, sa, lat, &elapsed) : -1;

	if (n < 0)
		n = 0;
	if (io_full(fd, &n, sizeof(n), 1) ||
	    io_full(fd, &elapsed, sizeof(elapsed), 1) ||
	    io_full(fd, lat, (size_t)n * sizeof(*lat), 1))
		return 1;
	return n > 0 ? 0 : 1;
}

/**
 * run_parallel() - -c connections: each in a child, results merged
 * @o:		options
 * @sa:		server address
 * @lat:	filled with every latency, @o->max entries
 * @elapsed:	filled with the longest child's run time
 *
 * Return: transactions done in all, or -1 if any child failed
 */
static long run_parallel(const struct rr_opts *o, const struct sockaddr_in *sa,
                         uint64_t *lat, uint64_t *elapsed)
{
	struct rr_opts co = *o;
	int fds[RR_MAX_CONNECTIONS], failed = 0, status;
	long total = 0;

	co.max = o->max / o->conns;
	for (int i = 0; i < o->conns; i++) {
		int p[2];
		pid_t pid;

		if (pipe(p) < 0 || (pid = fork()) < 0) {
			fprintf(stderr, "rr: start connection %d: %s\n", i,
			        strerror(errno));
			return -1;
		}
		if (pid == 0) {
			close(p[0]);
			_exit(run_child(&co, sa, p[1]));
		}
		close(p[1]);
		fds[i] = p[0];
	}
	*elapsed = 0;
	for (int i = 0; i < o->conns; i++) {
		uint64_t e = 0;
		long n = 0;

		if (io_full(fds[i], &n, sizeof(n), 0) ||
		    io_full(fds[i], &e, sizeof(e), 0) || n < 0 || n > co.max ||
		    io_full(fds[i], lat + total, (size_t)n * sizeof(*lat), 0))
			failed = 1;
		else
			total += n;
		if (e > *elapsed)
			*elapsed = e;
		close(fds[i]);
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	return failed ? -1 : total;
}

/**
 * run_client() - run the transactions and print the JSON summary
 * @o:		options
 *
 * Return: 0 on success, 1 on failure
 */
static int run_client(const struct rr_opts *o)
{
	struct sockaddr_in sa;
	uint64_t *lat, elapsed = 0;
	double secs;
	long n;

	if (!o->host || make_addr(&sa, o->host, o->port) < 0) {
		fprintf(stderr, "rr: client needs -H IPV4ADDR\n");
		return 1;
	}
	lat = calloc((size_t)o->max, sizeof(*lat));
	if (!lat) {
		fprintf(stderr, "rr: no memory for %ld latencies\n", o->max);
		return 1;
	}
	if (o->conns > 1)
		n = run_parallel(o, &sa, lat, &elapsed);
	else
		n = run_transactions(o, &sa, lat, &elapsed);
	if (n <= 0) {
		if (n == 0)
			fprintf(stderr, "rr: no transaction completed\n");
		free(lat);
		return 1;
	}
	qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
	secs = (double)elapsed / 1e9;
	printf("{\"mode\":\"%s\",\"size\":%zu,\"connections\":%d,"
	       "\"transactions\":%ld,\"seconds\":%.3f,\"tps\":%.1f,"
	       "\"p50_us\":%.1f,\"p99_us\":%.1f,\"bytes\":%ld}\n",
	       o->mode, o->size, o->conns, n, secs, (double)n / secs,
	       percentile_us(lat, n, 50), percentile_us(lat, n, 99),
	       n * 2 * (long)o->size);
	free(lat);
	return 0;
}

/**
 * usage() - print the synopsis
 *
 * Return: 2, the exit status for usage errors
 */
static int usage(void)
{
	fprintf(stderr, "usage: rr server -p PORT [-b ADDR] [-s SIZE]\n"
	                "       rr client -H ADDR -p PORT [-m rr|crr] [-n MAX] "
	                "[-d SECONDS] [-s SIZE] [-c CONNECTIONS]\n");
	return 2;
}

/**
 * parse_opts() - parse the options after the mode word
 * @argc:	argument count
 * @argv:	arguments
 * @o:		filled
 *
 * Return: 0 on success, -1 on a usage error
 */
static int parse_opts(int argc, char **argv, struct rr_opts *o)
{
	int opt;

	while ((opt = getopt(argc, argv, "H:b:p:m:n:d:s:c:")) != -1) {
		switch (opt) {
		case 'H':
			o->host = optarg;
			break;
		case 'b':
			o->bind = optarg;
			break;
		case 'p':
			o->port = atoi(optarg);
			break;
		case 'm':
			o->mode = optarg;
			break;
		case 'n':
			o->max = atol(optarg);
			break;
		case 'd':
			o->seconds = atof(optarg);
			break;
		case 's':
			o->size = (size_t)atol(optarg);
			break;
		case 'c':
			o->conns = atoi(optarg);
			break;
		default:
			return -1;
		}
	}
	if (optind != argc || o->port < 1 || o->port > 65535 || o->size < 1 ||
	    o->size > RR_MAX_SIZE || o->max < 1 ||
	    o->max > RR_MAX_TRANSACTIONS || o->seconds <= 0 || o->conns < 1 ||
	    o->conns > RR_MAX_CONNECTIONS || o->max < o->conns ||
	    (strcmp(o->mode, "rr") && strcmp(o->mode, "crr")))
		return -1;
	return 0;
}

/**
 * main() - dispatch to server or client mode
 * @argc:	argument count
 * @argv:	server|client and options
 *
 * Return: 0 on success, 1 on failure, 2 on usage errors
 */
int main(int argc, char **argv)
{
	struct rr_opts o = {
	        .mode = "rr",
	        .size = 1,
	        .max = 100000,
	        .seconds = 10,
	        .conns = 1,
	};

	if (argc < 2 || parse_opts(argc - 1, argv + 1, &o) < 0)
		return usage();
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[1], "server"))
		return run_server(&o);
	if (!strcmp(argv[1], "client"))
		return run_client(&o);
	return usage();
}
