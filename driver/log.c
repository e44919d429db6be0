// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - error and debug messages on stderr
 *
 * Messages must never stall the datapath: each is one write() of a whole
 * line, skipped (not blocked on) when stderr is a pipe nobody drains, and
 * errors a guest or a peer can repeat at will go through a rate limit.
 */

#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "seccomp.h"
#include "clock.h"
#include "log.h"

/* Syscalls of a message, once running. */
const char *const log_syscalls[] = {
        "poll",
        "ppoll",
        "write",
        NULL,
};

bool log_debug_enabled;
/* Fuzzers: format every line, so format bugs still show, but write none. */
bool log_silent;

/**
 * emit() - write one line to stderr if that cannot block
 * @line:	text ending in a newline
 * @len:	its length
 */
static void emit(const char *line, size_t len)
{
	struct pollfd p = {.fd = STDERR_FILENO, .events = POLLOUT};

	if (log_silent)
		return;
	/* A full pipe (or a closed stderr) drops the line instead. */
	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT))
		return;
	if (write(STDERR_FILENO, line, len) < 0)
		return; /* nowhere left to report it */
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
	char msg[1024], line[1200];
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
