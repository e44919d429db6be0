// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - out of file descriptors: refuse clearly, pause, never spin
 *
 * When accept() fails with EMFILE, the pending connection stays queued and
 * the listener stays readable: a loop that just retries spins, and the
 * client waits forever. tapir keeps one spare fd for this moment: it is
 * closed to accept the connection, which then gets a clear refusal (an API
 * error reply, or a TCP reset), and is opened again. Where even that
 * fails, the listener pauses instead of spinning. The spare is an eventfd:
 * it needs no path, which a sandboxed tapir's empty root would lack.
 *
 * At start the soft RLIMIT_NOFILE is raised to the hard one. Forwards'
 * listeners (one socket a port) may take fds up to a ceiling below it: the
 * fds above are kept for the connections they bring, and for the rest of
 * tapir. fds are handed out lowest first, so a listener whose fd is at the
 * ceiling or above proves every fd under it taken.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/host/fdlimit.h"
#include "driver/core/log.h"

/* Syscalls of the spare fd's refusals, once running. */
const char *const fdlimit_syscalls[] = {
        "eventfd2",
        "close",
        "accept4",
        NULL,
};

/**
 * open_spare() - open the spare fd, if it is not open
 * @c:		context
 *
 * Return: 0, or -1 if no fd was free
 */
static int open_spare(struct ctx *c)
{
	if (c->spare_fd < 0)
		c->spare_fd = eventfd(0, EFD_CLOEXEC);
	return c->spare_fd < 0 ? -1 : 0;
}

/* The soft RLIMIT_NOFILE as raised at start (a process's own, read once:
 * the filter allows no getrlimit() later), or 0 if unknown; and the fds
 * kept above the listeners' ceiling.
 */
static int nofile;
static int kept;

/**
 * read_nofile() - the soft RLIMIT_NOFILE, at most INT_MAX
 *
 * Return: the limit, or 0 if it can't be read
 */
static int read_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	return rl.rlim_cur > INT_MAX ? INT_MAX : (int)rl.rlim_cur;
}

/**
 * raise_nofile() - lift the soft RLIMIT_NOFILE to the hard limit
 *
 * Every forwarded port costs an fd, every forwarded connection more (six
 * when spliced): the usual soft limit of 1024 would cap a busy forward at
 * about 170 connections. The loop uses epoll, so high fd numbers are
 * harmless.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		debug_msg("raise RLIMIT_NOFILE: %s", strerror(errno));
}

/**
 * fdlimit_init() - raise the fd limit, set the listeners' ceiling, and
 *		    reserve the spare fd
 * @c:		context
 *
 * Return: 0 on success, -1 after printing one error line
 */
int fdlimit_init(struct ctx *c)
{
	raise_nofile();
	nofile = read_nofile();
	kept = nofile / 16 < FDLIMIT_KEEP_MAX ? nofile / 16 : FDLIMIT_KEEP_MAX;
	if (open_spare(c)) {
		err_errno(errno, "reserve a spare fd (eventfd)");
		return -1;
	}
	return 0;
}

/**
 * fdlimit_cleanup() - release the spare fd
 * @c:		context
 */
void fdlimit_cleanup(struct ctx *c)
{
	if (c->spare_fd >= 0)
		close(c->spare_fd);
	c->spare_fd = -1;
}

/**
 * fdlimit_listener_room() - whether a new listener's fd is below the
 *			     ceiling
 * @fd:		the listener's fd, just opened
 *
 * Return: true if it may stay; false if the caller is to close it (every
 *	   fd below the ceiling is taken); true before fdlimit_init()
 */
bool fdlimit_listener_room(int fd)
{
	return !nofile || fd < nofile - kept;
}

/**
 * fdlimit_nofile() - the soft RLIMIT_NOFILE as raised at start
 *
 * Return: the limit, or 0 before fdlimit_init() or if it can't be read
 */
int fdlimit_nofile(void)
{
	return nofile;
}

/**
 * fdlimit_describe() - "RLIMIT_NOFILE is 20000 (1024 kept for connections)"
 * @buf:	output
 * @len:	size of @buf
 */
void fdlimit_describe(char *buf, size_t len)
{
	snprintf(buf, len, "RLIMIT_NOFILE is %d (%d kept for connections)",
	         nofile, kept);
}

/**
 * fdlimit_exhausted() - whether an errno means "out of fds or memory"
 * @err:	errno of socket(), accept() or the like
 *
 * Return: true for EMFILE, ENFILE, ENOBUFS and ENOMEM
 */
bool fdlimit_exhausted(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOBUFS ||
	       err == ENOMEM;
}

/**
 * fdlimit_accept_spare() - accept one pending connection using the spare fd
 * @c:		context
 * @lfd:	listener whose accept() just failed with fdlimit_exhausted()
 *
 * The caller refuses the connection, closes it at once and calls
 * fdlimit_restore(), which takes the spare again.
 *
 * Return: the accepted, non-blocking socket, or -1 (the caller pauses)
 */
int fdlimit_accept_spare(struct ctx *c, int lfd)
{
	int fd;

	if (c->spare_fd < 0 && open_spare(c))
		return -1;
	close(c->spare_fd);
	c->spare_fd = -1;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		fdlimit_restore(c);
	return fd;
}

/**
 * fdlimit_restore() - take the spare fd again after a refusal
 * @c:		context
 *
 * If another fd took the slot meanwhile, the next fdlimit_accept_spare()
 * tries again; until then, listeners pause.
 */
void fdlimit_restore(struct ctx *c)
{
	open_spare(c);
}

/**
 * fdlimit_pause() - stop accepting on a listener for FDLIMIT_PAUSE_MS
 * @listen_ev:	the listener's read event
 * @timer:	a timer whose callback adds @listen_ev again
 *
 * The pending connection keeps the listener readable: without a pause the
 * loop would spin on accept() failing.
 */
void fdlimit_pause(struct event *listen_ev, struct event *timer)
{
	static struct log_limit limit;
	const struct timeval tv = {0, FDLIMIT_PAUSE_MS * 1000};

	event_del(listen_ev);
	/* Deaf rather than spinning, should even a timer fail. */
	if (evtimer_add(timer, &tv))
		err_limited(&limit, 0, "pause a listener: libevent failed");
}
