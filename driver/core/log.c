// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - error and debug messages on stderr
 *
 * Messages must never stall the datapath: each is one write of a whole
 * line, dropped (never waited for) when stderr is a pipe, socket or
 * terminal nobody drains, and errors a guest or a peer can repeat at will
 * go through a rate limit.
 *
 * Not blocking takes more than a poll() before the write: any number of
 * datapath threads, and any process sharing the pipe (the command of
 * `tapir run`, rootlesskit, podman's other children), can each see the
 * pipe writable and then fill it. So log_init() picks, once at start, a
 * way to write that cannot block whatever the others do, without ever
 * setting O_NONBLOCK on stderr's own open file description (the other
 * processes would get EAGAIN from their writes):
 * - a pipe, FIFO or terminal: a second open file description of it, our
 *   own, opened non-blocking through /proc/self/fd/2 (which the sandbox
 *   removes later: hence at start). A line of at most PIPE_BUF bytes then
 *   goes into a pipe whole or not at all, so lines never mix;
 * - a socket (journald's stream): send() with MSG_DONTWAIT;
 * - anything else (a regular file, or a pipe we may not reopen): poll(),
 *   then write(), both under one lock, so that of our threads only one
 *   uses the room that poll() saw. A line fits in a pipe's one free slot.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "driver/core/clock.h"
#include "driver/core/log.h"

/* Syscalls of a message, once running (the lock's futex is every
 * program's).
 */
const char *const log_syscalls[] = {
        "poll", "ppoll", "write", "sendto", "dup3", "ftruncate", NULL,
};

bool log_debug_enabled;
/* Fuzzers: format every line, so format bugs still show, but write none. */
bool log_silent;

/* Longest line, newline included. A pipe takes a write of up to PIPE_BUF
 * bytes whole, into one free slot (a page) if need be.
 */
#define LOG_LINE_MAX 1200
_Static_assert(LOG_LINE_MAX <= PIPE_BUF, "a line must be one atomic write");

/* Our own non-blocking open file description of stderr, or -1. */
static int log_fd = -1;
/* stderr is a socket: send() it each line without waiting. */
static bool log_to_socket;
/* Makes poll() and write() on a shared, blocking stderr one step. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
/* pasta's -l: every line goes to this file too (under log_lock), which
 * starts over when a line would take it past log_file_max bytes.
 */
static int log_file = -1;
static unsigned long log_file_max;
static unsigned long log_file_len;

/**
 * log_lock_take() - pthread_atfork() prepare handler: no line half-written
 *		     while the process forks
 */
static void log_lock_take(void)
{
	pthread_mutex_lock(&log_lock);
}

/**
 * log_lock_drop() - pthread_atfork() parent and child handler
 *
 * A child forked while a datapath thread held the lock would otherwise
 * wait for it forever at its first line.
 */
static void log_lock_drop(void)
{
	pthread_mutex_unlock(&log_lock);
}

/**
 * reopen_nonblocking() - open stderr again as a new, non-blocking open
 *			  file description
 *
 * Return: an fd above stdio, or -1 (not a file we may open again: then
 *	   the locked poll() and write() serve)
 */
static int reopen_nonblocking(void)
{
	int fd = open("/proc/self/fd/2",
	              O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int high;

	/* With stdin or stdout closed, open() returns their number, which
	 * later code could take for the real thing: keep clear of stdio.
	 */
	if (fd < 0 || fd > STDERR_FILENO)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	close(fd);
	return high;
}

/**
 * log_init() - choose how lines reach stderr without ever blocking
 *
 * Call once at start, before any thread and while /proc is mounted (the
 * sandbox hides it); again only if fd 2 was replaced. Without it (the
 * fuzzers, most unit tests) every line takes the locked poll() and write().
 */
void log_init(void)
{
	static bool atfork_set;
	struct stat st;

	if (!atfork_set &&
	    !pthread_atfork(log_lock_take, log_lock_drop, log_lock_drop))
		atfork_set = true;
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
	log_to_socket = false;
	/* A closed stderr: poll() reports POLLNVAL, and lines are dropped. */
	if (fstat(STDERR_FILENO, &st))
		return;
	if (S_ISSOCK(st.st_mode))
		log_to_socket = true;
	else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
		log_fd = reopen_nonblocking();
}

/**
 * log_own_fds() - the fds the log opened, kept by fds_close_except()
 *		   callers: log_init()'s copy of stderr, log_to_file()'s file
 * @fds:	filled with both, -1 for one that is not open
 */
void log_own_fds(int fds[2])
{
	fds[0] = log_fd;
	fds[1] = log_file;
}

/**
 * log_redirect() - send every later line to @fd instead of stderr
 * @fd:		an open file, /dev/null for a daemon
 *
 * The fds that held stderr are overwritten in place (dup3), never closed:
 * a thread writing a line at that moment reaches @fd or the old file, not
 * an fd number some socket took meanwhile.
 *
 * Return: 0, or the errno of the first fd that could not be replaced
 */
int log_redirect(int fd)
{
	int err = 0;

	pthread_mutex_lock(&log_lock);
	if (log_fd >= 0 && log_fd != fd && dup3(fd, log_fd, O_CLOEXEC) < 0)
		err = errno;
	if (fd != STDERR_FILENO && dup3(fd, STDERR_FILENO, 0) < 0 && !err)
		err = errno;
	log_to_socket = false;
	pthread_mutex_unlock(&log_lock);
	return err;
}

/**
 * log_to_file() - write every later line to a file as well (pasta's -l)
 * @path:	the file, created or truncated, mode 0600
 * @max:	bytes it may hold (pasta's --log-size): past them, it starts
 *		over, which keeps the latest lines and bounds the disk used
 *
 * Return: 0, or the errno of the open
 */
int log_to_file(const char *path, unsigned long max)
{
	int fd = open(path,
	              O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC |
	                      O_NOCTTY,
	              0600);

	if (fd < 0)
		return errno;
	pthread_mutex_lock(&log_lock);
	if (log_file >= 0)
		close(log_file);
	log_file = fd;
	log_file_max = max;
	log_file_len = 0;
	pthread_mutex_unlock(&log_lock);
	return 0;
}

/**
 * emit_file() - append one line to the log file, if there is one
 * @line:	text ending in a newline
 * @len:	its length
 *
 * A regular file takes the write whole, without waiting on a reader.
 */
static void emit_file(const char *line, size_t len)
{
	pthread_mutex_lock(&log_lock);
	if (log_file >= 0 && log_file_len + len > log_file_max &&
	    !ftruncate(log_file, 0))
		log_file_len = 0;
	if (log_file >= 0 && write(log_file, line, len) == (ssize_t)len)
		log_file_len += len;
	pthread_mutex_unlock(&log_lock);
}

/**
 * emit_shared() - write one line to a blocking stderr if that cannot block
 * @line:	text ending in a newline
 * @len:	its length
 *
 * Only a process's other writers (not its threads) can fill the room
 * between the poll() and the write().
 */
static void emit_shared(const char *line, size_t len)
{
	struct pollfd p = {.fd = STDERR_FILENO, .events = POLLOUT};
	ssize_t n = -1;

	pthread_mutex_lock(&log_lock);
	/* A full pipe (or a closed stderr) drops the line instead. */
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT))
		n = write(STDERR_FILENO, line, len);
	pthread_mutex_unlock(&log_lock);
	if (n < 0)
		return; /* dropped, or nowhere left to report it */
}

/**
 * emit() - write one line to stderr if that cannot block
 * @line:	text ending in a newline
 * @len:	its length, at most LOG_LINE_MAX
 */
static void emit(const char *line, size_t len)
{
	ssize_t n;

	if (log_silent)
		return;
	if (log_file >= 0)
		emit_file(line, len);
	if (log_fd < 0 && !log_to_socket) {
		emit_shared(line, len);
		return;
	}
	/* EAGAIN drops the line: nobody reads stderr. A terminal may take
	 * part of it; the rest is dropped rather than waited for.
	 */
	if (log_fd >= 0)
		n = write(log_fd, line, len);
	else
		n = send(STDERR_FILENO, line, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0)
		return; /* dropped, or nowhere left to report it */
}

/**
 * vprint() - print one "tapir: ..." line on stderr
 * @fmt:	printf format
 * @ap:		arguments
 * @err:	errno to append as ": <strerror>", or 0
 * @suffix:	text to append before the newline, or ""
 */
__attribute__((format(printf, 1, 0))) static void
vprint(const char *fmt, va_list ap, int err, const char *suffix)
{
	char msg[1024], line[LOG_LINE_MAX];
	int n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err)
		n = snprintf(line, sizeof(line), "tapir: %s: %s%s\n", msg,
		             strerror(err), suffix);
	else
		n = snprintf(line, sizeof(line), "tapir: %s%s\n", msg, suffix);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	emit(line, (size_t)n);
}

/**
 * err_msg() - report an error without an errno
 * @fmt:	printf format naming the failing object
 */
void err_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(fmt, ap, 0, "");
	va_end(ap);
}

/**
 * err_errno() - report an error with the text of @err appended
 * @err:	errno value (positive)
 * @fmt:	printf format naming the failing object
 */
void err_errno(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(fmt, ap, err, "");
	va_end(ap);
}

/**
 * err_limited() - report an error that may repeat, at most once per
 *		   LOG_LIMIT_MS for its call site
 * @l:		the call site's limit state (static, zero-initialised)
 * @err:	errno value to append, or 0
 * @fmt:	printf format naming the failing object
 *
 * The first line of a burst is printed at once; the ones that follow
 * within the interval are counted, and the next printed line says how
 * many were left out.
 */
void err_limited(struct log_limit *l, int err, const char *fmt, ...)
{
	uint64_t now = clock_ms();
	uint64_t next = __atomic_load_n(&l->next_ms, __ATOMIC_RELAXED);
	unsigned long left_out;
	char suffix[64] = "";
	va_list ap;

	/* Of threads hitting the same site, the one that moves @next_ms on
	 * prints; the others count, so the site prints once per interval
	 * however many threads there are.
	 */
	if ((next && now < next) ||
	    !__atomic_compare_exchange_n(&l->next_ms, &next, now + LOG_LIMIT_MS,
	                                 false, __ATOMIC_RELAXED,
	                                 __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&l->suppressed, 1, __ATOMIC_RELAXED);
		return;
	}
	left_out = __atomic_exchange_n(&l->suppressed, 0, __ATOMIC_RELAXED);
	if (left_out)
		snprintf(suffix, sizeof(suffix), " (%lu more since the last)",
		         left_out);
	va_start(ap, fmt);
	vprint(fmt, ap, err, suffix);
	va_end(ap);
}

/**
 * info_msg() - report a notable event that is not an error
 * @fmt:	printf format
 */
void info_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(fmt, ap, 0, "");
	va_end(ap);
}

/**
 * debug_msg() - report detail, only with --debug
 * @fmt:	printf format
 */
void debug_msg(const char *fmt, ...)
{
	va_list ap;

	if (!log_debug_enabled)
		return;
	va_start(ap, fmt);
	vprint(fmt, ap, 0, "");
	va_end(ap);
}
