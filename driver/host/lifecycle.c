// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - ready fd, exit fd, signals and the target's lifetime (its PID,
 * or pasta's --netns file) */

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <event2/event.h>

#include "driver/sandbox/janitor.h"
#include "driver/host/lifecycle.h"
#include "driver/core/log.h"

/* Syscalls of the exit fd, signals and the target's exit, once running. */
const char *const lifecycle_syscalls[] = {
        "poll",   "ppoll",        "kill", "wait4", "waitid",
        "getpid", "rt_sigaction", "dup3", NULL,
};

/* How often the exit fd is polled: slirp4netns reacts within ~30 ms. */
#define EXIT_FD_POLL_MS 25

static struct event *exitfd_ev, *sigterm_ev, *sigint_ev, *target_ev, *watch_ev;
/* inotify fd on the directory of o->watch_path, and that path. */
static int watch_fd = -1;
static const char *watch_name = "";
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
	/* Under `tapir run` the command decides; its exit ends the loop.
	 * Root's command, tapir nobody (runas.c): the janitor passes it on.
	 */
	if (c->run_child <= 0)
		stop_loop(c, strsignal((int)sig));
	else if (janitor_signal_command((int)sig))
		kill(c->run_child, (int)sig);
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
 * lifecycle_target_exists() - check the target before forking anything
 * @o:		options
 *
 * Return: 0 if the target PID exists (or a path is used), -1 after
 *	   printing one error line
 */
int lifecycle_target_exists(const struct opts *o)
{
	char path[32];
	struct stat st;

	if (o->netns_type != NETNS_PID)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d", o->pid);
	if (stat(path, &st)) {
		err_errno(errno, "target PID %d", o->pid);
		return -1;
	}
	return 0;
}

/**
 * lifecycle_target_pid() - the process whose exit means the namespace is
 *			    going away
 * @o:		options
 *
 * In path mode the tap pins the netns, so it never disappears while we
 * run; but a path under /proc/PID/ (rootlesskit's detach mode passes
 * /proc/<child>/root/<statedir>/netns) names the process that owns it.
 * pasta's --no-netns-quit watches none.
 *
 * Return: the PID, or 0 if there is none to watch
 */
pid_t lifecycle_target_pid(const struct opts *o)
{
	int pid, n = 0;

	if (o->no_target_quit)
		return 0;
	if (o->netns_type == NETNS_PID)
		return o->pid;
	if (sscanf(o->netns_path, "/proc/%d/%n", &pid, &n) == 1 && n > 0 &&
	    pid > 0)
		return pid;
	return 0;
}

/**
 * open_pidfd() - a pidfd on @pid
 * @pid:	target process
 *
 * Return: the fd, or -1 after printing one error line
 */
static int open_pidfd(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0)
		err_errno(errno, "watch target PID %d", pid);
	return fd;
}

/**
 * lifecycle_open_target() - open a pidfd on the target, if there is one,
 *			     before a PID namespace hides it
 * @o:		options; o->target_pidfd is set
 *
 * Return: 0 on success, -1 after printing one error line
 */
int lifecycle_open_target(struct opts *o)
{
	pid_t pid = lifecycle_target_pid(o);

	if (lifecycle_target_exists(o))
		return -1;
	if (pid > 0 && o->target_pidfd < 0)
		o->target_pidfd = open_pidfd(pid);
	return pid > 0 && o->target_pidfd < 0 ? -1 : 0;
}

/**
 * lifecycle_watch_target() - watch the target for its exit
 * @c:		context; c->target_pidfd is set
 * @pid:	target process
 *
 * Its pidfd is opened before the helper runs, so an exit during set-up is
 * not missed; or earlier, by lifecycle_open_target().
 *
 * Return: 0 on success, -1 after printing one error line
 */
int lifecycle_watch_target(struct ctx *c, pid_t pid)
{
	target = pid;
	c->target_pidfd =
	        c->o->target_pidfd >= 0 ? c->o->target_pidfd : open_pidfd(pid);
	return c->target_pidfd < 0 ? -1 : 0;
}

/**
 * path_event_is_ours() - does an inotify event on the directory name our file
 * @ev:		event, whole within the buffer read
 * @name:	the watched file's name in that directory
 *
 * Return: true for our file's removal or rename, or the directory's own
 */
static bool path_event_is_ours(const struct inotify_event *ev, const char *name)
{
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
		return true;
	return ev->len && strnlen(ev->name, ev->len) < ev->len &&
	       !strcmp(ev->name, name);
}

/**
 * path_gone_cb() - inotify: exit once the watched file is removed
 * @fd:		inotify fd
 * @what:	unused
 * @arg:	struct ctx
 *
 * Other files of the directory (podman keeps every container's netns
 * file in one) come and go without effect. A read error other than
 * EAGAIN ends the loop, rather than leaving an fd that reads ready forever.
 */
static void path_gone_cb(evutil_socket_t fd, short what, void *arg)
{
	char buf[4096]
	        __attribute__((aligned(__alignof__(struct inotify_event))));
	const char *slash = strrchr(watch_name, '/');
	const char *name = slash ? slash + 1 : watch_name;
	struct inotify_event ev;
	struct ctx *c = arg;
	size_t off = 0;
	ssize_t n;

	(void)what;
	n = read(fd, buf, sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	while (n > 0 && off + sizeof(ev) <= (size_t)n) {
		memcpy(&ev, buf + off, sizeof(ev));
		if (ev.len > (size_t)n - off - sizeof(ev))
			break;
		if (path_event_is_ours(
		            (const struct inotify_event *)(buf + off), name))
			goto gone;
		off += sizeof(ev) + ev.len;
	}
	if (n > 0)
		return;
	/* An fd that errors would read ready forever: stop rather than spin. */
	err_errno(n < 0 ? errno : EIO, "watch %s: stopping", watch_name);
	stop_loop(c, "watch failed");
	return;
gone:
	info_msg("%s was removed: stopping", watch_name);
	stop_loop(c, "watched path removed");
}

/**
 * lifecycle_watch_path() - watch o->watch_path (pasta's --netns file)
 *			    before attaching, so its removal during set-up
 *			    is not missed
 * @c:		context
 *
 * podman removes a container's netns file and sends no signal: that is
 * the driver's only cue. The file is a bind mount of an nsfs inode, whose
 * unmount makes no event, so the watch is on its name, in the parent
 * directory; the file is looked for once the watch is in place. (An
 * inotify queue that overflows, with thousands of files coming and going
 * there, loses the event: tapir then stays until its tap's namespace is
 * otherwise gone from under it.)
 *
 * Return: 0 on success, -1 after printing one error line
 */
int lifecycle_watch_path(struct ctx *c)
{
	const char *path = c->o->watch_path;
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (!path[0])
		return 0;
	watch_name = path;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s",
		         slash == path ? 1 : (int)(slash - path), path);
	watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (watch_fd < 0) {
		err_errno(errno, "watch %s: inotify", path);
		return -1;
	}
	if (inotify_add_watch(watch_fd, dir,
	                      IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF |
	                              IN_MOVE_SELF) < 0) {
		err_errno(errno, "watch %s", dir);
		return -1;
	}
	if (stat(path, &st)) {
		err_errno(errno, "network namespace %s", path);
		return -1;
	}
	return 0;
}

/**
 * start_path_watch() - read the inotify fd from the event loop
 * @c:		context with its event base
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int start_path_watch(struct ctx *c)
{
	if (watch_fd < 0)
		return 0;
	watch_ev = event_new(c->base, watch_fd, EV_READ | EV_PERSIST,
	                     path_gone_cb, c);
	if (!watch_ev || event_add(watch_ev, NULL)) {
		err_msg("watch %s: libevent failed", c->o->watch_path);
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
	if (start_path_watch(c))
		return -1;
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
 * detach_stdio() - a daemon's stdio and log lines go to /dev/null
 * @c:		context
 *
 * pasta's contract with podman: the process that stays holds none of the
 * caller's pipe, or podman waits for its end forever.
 */
static void detach_stdio(struct ctx *c)
{
	int fd = c->o->detach_fd, err;

	if (fd < 0)
		return;
	for (int i = STDIN_FILENO; i < STDERR_FILENO; i++)
		if (fd != i && dup3(fd, i, 0) < 0)
			err_errno(errno, "put /dev/null over fd %d", i);
	err = log_redirect(fd);
	if (err)
		err_errno(err, "put /dev/null over stderr");
	close(fd);
}

/**
 * lifecycle_signal_ready() - write "1" to the ready fd and close it
 * @c:		context
 *
 * Called last in set-up: rootlesskit and podman treat any byte as "tap
 * attached, API listening". A daemon lets go of its stdio first, so the
 * caller's pipe ends when the first process does.
 */
void lifecycle_signal_ready(struct ctx *c)
{
	int fd = c->o->ready_fd;
	ssize_t n;

	detach_stdio(c);
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
 * lifecycle_write_pid() - write @pid and a newline to an open pid file
 * @fd:		the file, truncated
 * @pid:	PID
 * @path:	its name, for the message
 *
 * Return: 0, or -1 after one error line
 */
int lifecycle_write_pid(int fd, pid_t pid, const char *path)
{
	char buf[24];
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	ssize_t n = write(fd, buf, (size_t)len);

	if (n != len) {
		err_errno(n < 0 ? errno : EIO, "write PID file %s", path);
		return -1;
	}
	return 0;
}

/**
 * lifecycle_stop() - remove the watchers
 * @c:		context
 */
void lifecycle_stop(struct ctx *c)
{
	struct event **evs[] = {&exitfd_ev, &sigterm_ev, &sigint_ev, &target_ev,
	                        &watch_ev};

	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		if (*evs[i])
			event_free(*evs[i]);
		*evs[i] = NULL;
	}
	if (c->target_pidfd >= 0)
		close(c->target_pidfd);
	c->target_pidfd = -1;
	if (watch_fd >= 0)
		close(watch_fd);
	watch_fd = -1;
}
