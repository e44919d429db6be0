// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - ready fd, exit fd, signals and the target's lifetime */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <event2/event.h>

#include "seccomp.h"
#include "lifecycle.h"
#include "log.h"

/* Syscalls of the exit fd, signals and the target's exit, once running. */
const char *const lifecycle_syscalls[] = {
        "poll",   "ppoll",  "kill",         "wait4",
        "waitid", "getpid", "rt_sigaction", NULL,
};

/* How often the exit fd is polled: slirp4netns reacts within ~30 ms. */
#define EXIT_FD_POLL_MS 25

static struct event *exitfd_ev, *sigterm_ev, *sigint_ev, *target_ev;
/* The watched target, for the line that says why tapir stops. */
static pid_t target;

/**
 * stop_loop() - end the event loop with exit status 0
 * @c:		context
 * @why:	reason, logged with --debug
 */
static void stop_loop(struct ctx *c, const char *why)
{
	debug_msg("exiting: %s", why);
	c->exit_status = 0;
	event_base_loopbreak(c->base);
}

/**
 * lifecycle_fail() - end the event loop because the datapath cannot go on
 * @c:		context
 *
 * The caller printed why. The status is 1, as for any failure, or 125 under
 * `tapir run`, where the command's own statuses are the others.
 */
void lifecycle_fail(struct ctx *c)
{
	c->exit_status = c->run_child > 0 ? 125 : 1;
	event_base_loopbreak(c->base);
}

/**
 * exitfd_check_cb() - exit once the exit fd hangs up, errors, or is invalid
 * @fd:		unused
 * @what:	unused
 * @arg:	struct ctx
 *
 * poll() with only POLLHUP requested still reports POLLERR and POLLNVAL,
 * and data written to the fd is ignored: the slirp4netns semantics.
 */
static void exitfd_check_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctx *c = arg;
	struct pollfd pfd = {.fd = c->o->exit_fd, .events = POLLHUP};

	(void)fd;
	(void)what;
	if (poll(&pfd, 1, 0) > 0 && pfd.revents)
		stop_loop(c, "exit fd event");
}

/**
 * signal_cb() - SIGTERM or SIGINT: clean exit
 * @sig:	signal number
 * @what:	unused
 * @arg:	struct ctx
 */
static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct ctx *c = arg;

	(void)what;
	/* Under `tapir run` the command decides; its exit ends the loop. */
	if (c->run_child > 0)
		kill(c->run_child, (int)sig);
	else
		stop_loop(c, strsignal((int)sig));
}

/**
 * target_gone_cb() - the target process exited: its namespace is going away
 * @fd:		pidfd
 * @what:	unused
 * @arg:	struct ctx
 */
static void target_gone_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctx *c = arg;
	int status;

	(void)fd;
	(void)what;
	stop_loop(c, "target process exited");
	/* Not under `tapir run`: the command's status says it there. In
	 * attach mode the exit is the only trace that the container went
	 * away (killed, even with SIGKILL, or ended), as slirp4netns's
	 * "exitfd event" is for its exit fd.
	 */
	if (c->run_child <= 0) {
		info_msg("target PID %d exited: stopping", (int)target);
		return;
	}
	while (waitpid(c->run_child, &status, 0) < 0 && errno == EINTR)
		;
	c->exit_status = WIFEXITED(status) ? WEXITSTATUS(status)
	                                   : 128 + WTERMSIG(status);
	c->run_child = 0;
}

/**
 * lifecycle_watch_target() - open a pidfd on the target before attaching
 * @c:		context; c->target_pidfd is set
 * @pid:	target process
 *
 * Opened before the helper runs, so an exit during set-up is not missed.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int lifecycle_watch_target(struct ctx *c, pid_t pid)
{
	target = pid;
	c->target_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (c->target_pidfd < 0) {
		err_errno(errno, "watch target PID %d", pid);
		return -1;
	}
	return 0;
}

/**
 * lifecycle_start() - install signal, exit-fd and target watchers
 * @c:		context with its event base
 *
 * Return: 0 on success, -1 after printing one error line
 */
int lifecycle_start(struct ctx *c)
{
	struct timeval tv = {0, EXIT_FD_POLL_MS * 1000};

	/* A splice() into a socket the peer reset raises SIGPIPE. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		err_errno(errno, "ignore SIGPIPE");
		return -1;
	}
	sigterm_ev = evsignal_new(c->base, SIGTERM, signal_cb, c);
	sigint_ev = evsignal_new(c->base, SIGINT, signal_cb, c);
	if (!sigterm_ev || !sigint_ev || evsignal_add(sigterm_ev, NULL) ||
	    evsignal_add(sigint_ev, NULL))
		goto fail;
	if (c->o->exit_fd >= 0) {
		exitfd_ev =
		        event_new(c->base, -1, EV_PERSIST, exitfd_check_cb, c);
		if (!exitfd_ev || event_add(exitfd_ev, &tv))
			goto fail;
	}
	if (c->target_pidfd >= 0) {
		target_ev = event_new(c->base, c->target_pidfd, EV_READ,
		                      target_gone_cb, c);
		if (!target_ev || event_add(target_ev, NULL))
			goto fail;
	}
	return 0;
fail:
	err_msg("install signal and exit watchers: libevent failed");
	return -1;
}

/**
 * lifecycle_signal_ready() - write "1" to the ready fd and close it
 * @c:		context
 *
 * Called last in set-up: rootlesskit and podman treat any byte as "tap
 * attached, API listening".
 */
void lifecycle_signal_ready(struct ctx *c)
{
	int fd = c->o->ready_fd;
	ssize_t n;

	if (fd < 0)
		return;
	do
		n = write(fd, "1", 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		err_errno(errno, "write to ready fd %d", fd);
	close(fd);
}

/**
 * lifecycle_stop() - remove the watchers
 * @c:		context
 */
void lifecycle_stop(struct ctx *c)
{
	struct event **evs[] = {&exitfd_ev, &sigterm_ev, &sigint_ev,
	                        &target_ev};

	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		if (*evs[i])
			event_free(*evs[i]);
		*evs[i] = NULL;
	}
	if (c->target_pidfd >= 0)
		close(c->target_pidfd);
	c->target_pidfd = -1;
}
