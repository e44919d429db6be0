// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for messages: no datapath thread ever waits on stderr
 *
 * The case that hung a thread: stderr a pipe nobody drains, with room for
 * a line or two, and several threads that each see it writable before any
 * of them writes. This binary is linked with -Wl,--wrap=poll (Makefile):
 * while a case gathers them, a caller of log.c's poll() is held after it
 * returns until every thread has polled, the way the threads can meet
 * there by chance. Each case runs in a child of unit_netns_run() (whose
 * alarm ends a hang) and joins its threads with a time limit, so a thread
 * stuck in write() fails the case instead of the suite.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "driver/core/clock.h"
#include "driver/core/log.h"
#include "tests/unit/unit.h"

/* Threads logging at once: more than a pipe's free slot holds (four of
 * these lines fit in a page).
 */
#define THREADS 8
/* Length of each message: close to the longest log.c keeps (1023). */
#define MSG_LEN 1000
/* How long a caller of poll() waits for the others to get there. */
#define MEET_MS 1000
/* How long the threads may take in all: a write that blocks never ends. */
#define JOIN_MS 5000

/* Callers of poll() to hold together; 0: poll() is left alone. */
static int meet_want;
static int meet_arrived;
/* Set once a caller gave up waiting: the others must not wait again. */
static int meet_over;

int __real_poll(struct pollfd *fds, nfds_t nfds, int timeout);

/**
 * meet() - hold the caller until @meet_want callers got here, or MEET_MS
 */
static void meet(void)
{
	uint64_t deadline = clock_ms() + MEET_MS;
	const struct timespec tick = {0, 1000000};

	__atomic_add_fetch(&meet_arrived, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&meet_arrived, __ATOMIC_SEQ_CST) < meet_want &&
	       !__atomic_load_n(&meet_over, __ATOMIC_SEQ_CST)) {
		if (clock_ms() >= deadline) {
			__atomic_store_n(&meet_over, 1, __ATOMIC_SEQ_CST);
			break;
		}
		nanosleep(&tick, NULL);
	}
}

/**
 * __wrap_poll() - poll(), then meet the other threads if a case asks
 * @fds:	as poll()
 * @nfds:	as poll()
 * @timeout:	as poll()
 *
 * Return: what poll() returned, errno kept
 */
int __wrap_poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	int ret = __real_poll(fds, nfds, timeout), err = errno;

	if (__atomic_load_n(&meet_want, __ATOMIC_SEQ_CST))
		meet();
	errno = err;
	return ret;
}

/**
 * struct writer - one thread's message
 * @tid:	the thread
 * @msg:	its text, distinct per thread
 * @done:	set when err_msg() returned
 */
struct writer {
	pthread_t tid;
	char msg[MSG_LEN + 1];
	int done;
};

static struct writer writers[THREADS];

/**
 * writer_main() - log one line, as a datapath thread reports an error
 * @arg:	its struct writer
 *
 * Return: NULL
 */
static void *writer_main(void *arg)
{
	struct writer *w = arg;

	err_msg("%s", w->msg);
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/**
 * drain() - read and discard what @rfd holds now
 * @rfd:	non-blocking read end
 */
static void drain(int rfd)
{
	char buf[65536];

	while (read(rfd, buf, sizeof(buf)) > 0)
		;
}

/**
 * run_writers() - THREADS threads log one line each; wait JOIN_MS at most
 * @rfd:	non-blocking read end of stderr, drained if a thread is stuck
 *		so that it can be joined
 * @gather:	hold the callers of poll() together
 *
 * Return: how many threads returned within JOIN_MS
 */
static int run_writers(int rfd, bool gather)
{
	uint64_t deadline = clock_ms() + JOIN_MS;
	const struct timespec tick = {0, 10000000};
	int started = 0, returned = 0;

	meet_arrived = 0;
	meet_over = 0;
	meet_want = gather ? THREADS : 0;
	for (int i = 0; i < THREADS; i++) {
		struct writer *w = &writers[i];

		snprintf(w->msg, sizeof(w->msg), "thread %d: ", i);
		memset(w->msg + strlen(w->msg), 'a' + i,
		       MSG_LEN - strlen(w->msg));
		w->msg[MSG_LEN] = '\0';
		w->done = 0;
		if (pthread_create(&w->tid, NULL, writer_main, w))
			break;
		started++;
	}
	CHECK(started == THREADS);
	/* Bounded by the clock, in 10 ms steps. */
	while (clock_ms() < deadline) {
		returned = 0;
		for (int i = 0; i < started; i++)
			returned += __atomic_load_n(&writers[i].done,
			                            __ATOMIC_SEQ_CST);
		if (returned == started)
			break;
		nanosleep(&tick, NULL);
	}
	if (returned < started) {
		printf("#   %d of %d err_msg() calls still blocked after %d "
		       "ms\n",
		       started - returned, started, JOIN_MS);
		/* Read stderr until they return, to join them. */
		deadline = clock_ms() + JOIN_MS;
		for (int i = 0; i < started; i++)
			while (!__atomic_load_n(&writers[i].done,
			                        __ATOMIC_SEQ_CST)) {
				if (clock_ms() >= deadline) {
					printf("#   still blocked: giving "
					       "up\n");
					fflush(stdout);
					_exit(1);
				}
				drain(rfd);
				nanosleep(&tick, NULL);
			}
	}
	for (int i = 0; i < started; i++)
		pthread_join(writers[i].tid, NULL);
	meet_want = 0;
	return returned;
}

/**
 * whole_lines() - check what reached stderr: whole lines, one per writer
 *		   at most, none mixed with another
 * @rfd:	non-blocking read end
 *
 * Filler the case put there first is empty lines, skipped.
 *
 * Return: how many of the writers' lines arrived
 */
static int whole_lines(int rfd)
{
	static char buf[1 << 20];
	bool seen[THREADS] = {false};
	char *line, *end;
	size_t len = 0;
	int lines = 0;
	ssize_t n;

	while (len < sizeof(buf) - 1 &&
	       (n = read(rfd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	for (line = buf; (end = strchr(line, '\n')); line = end + 1) {
		int i;

		*end = '\0';
		if (!*line)
			continue;
		if (sscanf(line, "tapir: thread %d: ", &i) != 1 || i < 0 ||
		    i >= THREADS || strcmp(line + 7, writers[i].msg) ||
		    seen[i]) {
			printf("#   not a whole line of its own: %.60s...\n",
			       line);
			CHECK(!"whole lines");
			continue;
		}
		seen[i] = true;
		lines++;
	}
	/* Nothing after the last newline: no line was cut. */
	CHECK(!*line);
	printf("#   %d of %d lines arrived\n", lines, THREADS);
	return lines;
}

/**
 * pipe_with_one_slot() - make stderr a pipe nobody drains, with room for
 *			  one page: full pages in all its other slots
 * @rfd:	set to the read end, non-blocking
 *
 * The write end, now fd 2, blocks, as a pipe rootlesskit or podman gives.
 *
 * Return: 0, or -1
 */
static int pipe_with_one_slot(int *rfd)
{
	char page[4096];
	int p[2];

	memset(page, '\n', sizeof(page));
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC))
		return -1;
	/* Page-sized writes never merge: each takes a slot of its own. */
	while (write(p[1], page, sizeof(page)) == (ssize_t)sizeof(page))
		;
	if (errno != EAGAIN ||
	    read(p[0], page, sizeof(page)) != (ssize_t)sizeof(page) ||
	    fcntl(p[1], F_SETFL, 0) || dup2(p[1], STDERR_FILENO) < 0)
		return -1;
	close(p[1]);
	*rfd = p[0];
	return 0;
}

/**
 * pipe_with_room() - make stderr a blocking pipe with room for every line
 *		      (16 pages: a slot each would do)
 * @rfd:	set to the read end, non-blocking
 *
 * Return: 0, or -1
 */
static int pipe_with_room(int *rfd)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) || fcntl(p[0], F_SETFL, O_NONBLOCK) ||
	    dup2(p[1], STDERR_FILENO) < 0)
		return -1;
	close(p[1]);
	*rfd = p[0];
	return 0;
}

/**
 * socket_with_little_room() - make stderr a stream socket nobody reads,
 *			       with the smallest send buffer
 * @rfd:	set to the peer, non-blocking
 *
 * It polls writable while a quarter of the buffer is used, and a send()
 * waits once all of it is: two or three of the lines.
 *
 * Return: 0, or -1
 */
static int socket_with_little_room(int *rfd)
{
	int s[2], one = 1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) ||
	    setsockopt(s[1], SOL_SOCKET, SO_SNDBUF, &one, sizeof(one)) ||
	    fcntl(s[0], F_SETFL, O_NONBLOCK) || dup2(s[1], STDERR_FILENO) < 0)
		return -1;
	close(s[1]);
	*rfd = s[0];
	return 0;
}

/**
 * body_pipe_one_slot() - threads meet after poll() on a pipe with one free
 *			  slot: none blocks, and what arrives is whole lines
 */
static void body_pipe_one_slot(void)
{
	int rfd, lines;

	if (pipe_with_one_slot(&rfd)) {
		CHECK(!"pipe set-up");
		return;
	}
	log_init();
	CHECK(run_writers(rfd, true) == THREADS);
	lines = whole_lines(rfd);
	/* The free slot took some; the rest were dropped, not waited on. */
	CHECK(lines >= 1 && lines < THREADS);
}

/**
 * body_pipe_shared() - the same when stderr can't be opened again (as when
 *			another user's process made the pipe): the locked
 *			poll() and write() on fd 2
 */
static void body_pipe_shared(void)
{
	int rfd, lines;

	if (pipe_with_one_slot(&rfd)) {
		CHECK(!"pipe set-up");
		return;
	}
	CHECK(!unit_fail_syscall(SYS_openat, -1, EACCES));
	log_init();
	CHECK(run_writers(rfd, true) == THREADS);
	lines = whole_lines(rfd);
	CHECK(lines >= 1 && lines < THREADS);
}

/**
 * body_socket() - threads meet after poll() on a socket nobody reads
 */
static void body_socket(void)
{
	int rfd, lines;

	if (socket_with_little_room(&rfd)) {
		CHECK(!"socket set-up");
		return;
	}
	log_init();
	CHECK(run_writers(rfd, true) == THREADS);
	lines = whole_lines(rfd);
	CHECK(lines >= 1 && lines < THREADS);
}

/**
 * body_room() - with room in the pipe, every thread's line arrives whole,
 *		 both through our own fd and through the shared one
 */
static void body_room(void)
{
	int rfd;

	if (pipe_with_room(&rfd)) {
		CHECK(!"pipe set-up");
		return;
	}
	log_init();
	CHECK(run_writers(rfd, false) == THREADS);
	CHECK(whole_lines(rfd) == THREADS);
	CHECK(!unit_fail_syscall(SYS_openat, -1, EACCES));
	log_init();
	CHECK(run_writers(rfd, false) == THREADS);
	CHECK(whole_lines(rfd) == THREADS);
}

static void test_pipe_one_slot(void)
{
	CHECK(unit_netns_run(body_pipe_one_slot));
}

static void test_pipe_shared(void)
{
	CHECK(unit_netns_run(body_pipe_shared));
}

static void test_socket(void)
{
	CHECK(unit_netns_run(body_socket));
}

static void test_room(void)
{
	CHECK(unit_netns_run(body_room));
}

/**
 * body_file() - unit_netns_run() body: lines into a log file of 200 bytes
 *		 at most (pasta's -l and --log-size)
 */
static void body_file(void)
{
	char dir[] = "/tmp/tapir-test-log.XXXXXX", path[64], buf[512];
	int null = open("/dev/null", O_WRONLY), fd;
	bool bounded = true;
	ssize_t n = 0;
	struct stat st;

	CHECK(mkdtemp(dir) && null >= 0 && dup2(null, STDERR_FILENO) >= 0);
	snprintf(path, sizeof(path), "%s/log", dir);
	CHECK(log_to_file(path, 200) == 0);
	for (int i = 0; i < 50; i++) {
		err_msg("line %02d of the log file test", i);
		bounded = bounded && !stat(path, &st) && st.st_size <= 200;
	}
	CHECK(bounded);
	fd = open(path, O_RDONLY);
	if (fd >= 0)
		n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	/* It started over: the latest lines are there, whole. */
	CHECK(n > 0 && strstr(buf, "tapir: line 49 of the log file test\n"));
	CHECK(!strstr(buf, "line 00 "));
	CHECK(!stat(path, &st) && (st.st_mode & 0777) == 0600);
	if (fd >= 0)
		close(fd);
	unlink(path);
	rmdir(dir);
	close(null);
}

static void test_file(void)
{
	CHECK(unit_netns_run(body_file));
}

const struct unit_case unit_cases[] = {
        {"threads logging at once into a pipe with one free slot: none "
         "blocks, lines whole",
         test_pipe_one_slot},
        {"the same through stderr's own file description (no reopen)",
         test_pipe_shared},
        {"the same into a stream socket nobody reads", test_socket},
        {"with room, every thread's line arrives whole", test_room},
        {"a log file starts over before it grows past its size", test_file},
        {NULL, NULL},
};
