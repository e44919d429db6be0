// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - the janitor: files removed at exit from outside the sandbox
 *
 * An isolated tapir must still remove a few files at exit (the API
 * socket, `tapir run`'s resolv.conf and its directory), which its empty
 * root no longer shows. A directory fd kept for them would undo the
 * sandbox: openat(dirfd, "../../home/...") reaches every file the user
 * has. So the directories are held by a small process forked just before
 * isolation, the janitor, and tapir keeps none.
 *
 * The janitor waits for one byte from tapir (its exit), or for EOF (tapir
 * died, even of SIGKILL); then it removes each file that is still the one
 * registered (same device and inode: another instance may have replaced
 * an API socket), answers one byte and exits. It reads nothing else from
 * tapir, closes every other fd, is not dumpable (so not ptrace()able by a
 * compromised tapir of the same user), ignores the signals its process
 * group gets together with tapir (tapir decides when it is done), and
 * with --enable-seccomp it may only stat and unlink in its directories.
 *
 * Started as root, tapir serves as nobody once set up (runas.c), and may
 * no longer signal `tapir run`'s command, which is root's: the janitor,
 * root, passes its signals on, through a pidfd opened before the fork
 * (no pid that a reaped command left can be reached through it), one
 * byte each: 'T' SIGTERM, 'I' SIGINT, 'K' SIGKILL.
 *
 * Without isolation there is no janitor: tapir removes the files itself.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "driver/core/clock.h"
#include "driver/sandbox/fds.h"
#include "driver/sandbox/janitor.h"
#include "driver/core/log.h"
#include "driver/sandbox/seccomp.h"

/* tapir's side once running: the request at exit, the answer, the reaping
 * (and a janitor that doesn't answer killed).
 */
const char *const janitor_syscalls[] = {
        "sendto", "poll", "ppoll", "read", "close", "kill", "wait4", NULL,
};

/**
 * struct janitor_entry - one file to remove at exit
 * @dirfd:	its directory, O_PATH
 * @name:	its name there
 * @flags:	0, or AT_REMOVEDIR for a directory
 * @dev:	device of the file registered
 * @ino:	its inode
 */
struct janitor_entry {
	int dirfd;
	char name[NAME_MAX + 1];
	int flags;
	dev_t dev;
	ino_t ino;
};

static struct janitor_entry entries[JANITOR_MAX];
static unsigned int nentries;
/* The janitor, once started, and tapir's end of its socket. */
static pid_t janitor_pid;
static int janitor_sock = -1;
/* A pidfd on the command whose signals the janitor passes on, or -1. */
static int relay_pidfd = -1;

/* The signals the janitor passes on, and the byte that asks for each. */
static const struct {
	char byte;
	int sig;
} relayed[] = {{'T', SIGTERM}, {'I', SIGINT}, {'K', SIGKILL}};

#define RELAYED (sizeof(relayed) / sizeof(relayed[0]))

/**
 * janitor_remove_at_exit() - have @path removed when tapir exits
 * @path:	an existing file (or directory, if @dir) tapir made
 * @dir:	@path is a directory, removed once empty
 *
 * Called before isolation. Entries are removed in the order registered: a
 * file before the directory that holds it.
 *
 * Return: 0 on success, -errno (nothing is removed then)
 */
int janitor_remove_at_exit(const char *path, bool dir)
{
	const char *slash = strrchr(path, '/');
	struct janitor_entry *e = &entries[nentries];
	const char *name = slash ? slash + 1 : path;
	char parent[PATH_MAX];
	struct stat st;

	if (nentries == JANITOR_MAX)
		return -ENOSPC;
	if (!*name || strlen(name) >= sizeof(e->name))
		return -EINVAL;
	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else if (snprintf(parent, sizeof(parent), "%.*s",
	                  slash == path ? 1 : (int)(slash - path),
	                  path) >= (int)sizeof(parent))
		return -ENAMETOOLONG;
	if (lstat(path, &st))
		return -errno;
	e->dirfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (e->dirfd < 0)
		return -errno;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->flags = dir ? AT_REMOVEDIR : 0;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	nentries++;
	return 0;
}

/**
 * janitor_relay_signals() - have the janitor pass signals on to @pid
 * @pid:	tapir run's command, root's while tapir serves as nobody
 *
 * Called before janitor_start(), as root.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int janitor_relay_signals(pid_t pid)
{
	relay_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (relay_pidfd < 0) {
		err_errno(errno, "janitor: pidfd of the command %d", (int)pid);
		return -1;
	}
	return 0;
}

/**
 * janitor_signal_command() - have the janitor signal the command
 * @sig:	SIGTERM, SIGINT or SIGKILL
 *
 * Return: 0 if asked, -1 if there is no such relay (the caller signals
 *	   the command itself) or it could not be asked
 */
int janitor_signal_command(int sig)
{
	for (size_t i = 0; relay_pidfd >= 0 && janitor_pid && i < RELAYED; i++)
		if (relayed[i].sig == sig)
			return send(janitor_sock, &relayed[i].byte, 1,
			            MSG_NOSIGNAL) == 1
			               ? 0
			               : -1;
	return -1;
}

/**
 * relay() - pass on the signal @b asks for, if it asks for one
 * @b:		a byte from tapir
 *
 * Return: true if @b asked for a signal, false if it is the exit byte
 */
static bool relay(char b)
{
	for (size_t i = 0; i < RELAYED; i++) {
		if (relayed[i].byte != b)
			continue;
		/* ESRCH, the command gone, is all that can fail: nothing
		 * to say, and the janitor's stderr is closed anyway.
		 */
		(void)syscall(SYS_pidfd_send_signal, relay_pidfd,
		              relayed[i].sig, NULL, 0);
		return true;
	}
	return false;
}

/**
 * remove_entries() - remove every registered file that is still ours, and
 *		      close the directories
 *
 * Errors are ignored: a file someone removed already, or a directory the
 * command left a file in, is not ours to chase.
 */
static void remove_entries(void)
{
	for (unsigned int i = 0; i < nentries; i++) {
		struct janitor_entry *e = &entries[i];
		struct stat st;

		if (e->dirfd < 0)
			continue;
		if (!fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) &&
		    st.st_dev == e->dev && st.st_ino == e->ino &&
		    unlinkat(e->dirfd, e->name, e->flags) && errno != ENOENT)
			debug_msg("remove %s at exit: %s", e->name,
			          strerror(errno));
		close(e->dirfd);
		e->dirfd = -1;
	}
	nentries = 0;
}

/**
 * close_all_but() - close every fd of the janitor but @sock, stderr and the
 *		     directories
 * @sock:	its socket to tapir
 *
 * tapir's ready fd among them: a caller waiting for its EOF must not wait
 * for the janitor too.
 */
static void close_all_but(int sock)
{
	int keep[JANITOR_MAX + 3];
	unsigned int n = 0;

	keep[n++] = STDERR_FILENO;
	keep[n++] = sock;
	keep[n++] = relay_pidfd;
	for (unsigned int i = 0; i < nentries; i++)
		keep[n++] = entries[i].dirfd;
	fds_close_except(keep, n);
}

/**
 * janitor_main() - the janitor's body; never returns
 * @sock:	its end of the socketpair
 * @filter:	load its seccomp filter (--enable-seccomp)
 */
static void __attribute__((noreturn)) janitor_main(int sock, bool filter)
{
	static const int ignored[] = {SIGTERM, SIGINT,  SIGHUP, SIGQUIT,
	                              SIGPIPE, SIGUSR1, SIGUSR2};
	int dirfds[JANITOR_MAX];
	ssize_t r;
	char b;

	/* What a setup step that fails costs is a file left behind: each is
	 * reported, and the janitor still does its work.
	 */
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (signal(ignored[i], SIG_IGN) == SIG_ERR)
			err_errno(errno, "janitor: ignore signal %d",
			          ignored[i]);
	if (prctl(PR_SET_DUMPABLE, 0))
		err_errno(errno, "janitor: prctl(PR_SET_DUMPABLE)");
	if (prctl(PR_SET_NAME, "tapir-janitor"))
		debug_msg("janitor: prctl(PR_SET_NAME): %s", strerror(errno));
	close_all_but(sock);
	for (unsigned int i = 0; i < nentries; i++)
		dirfds[i] = entries[i].dirfd;
	if (filter && seccomp_apply_janitor(dirfds, nentries, relay_pidfd))
		err_errno(errno, "janitor: seccomp filter");
	close(STDERR_FILENO);
	do
		r = read(sock, &b, 1);
	while ((r < 0 && errno == EINTR) || (r == 1 && relay(b)));
	remove_entries();
	if (r == 1 && send(sock, &b, 1, MSG_NOSIGNAL) != 1)
		_exit(1);
	_exit(0);
}

/**
 * janitor_start() - fork the janitor, which takes the directories along
 * @filter:	load its seccomp filter (--enable-seccomp)
 *
 * Called right before isolation, single-threaded. Without a file to
 * remove there is no janitor.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int janitor_start(bool filter)
{
	int sv[2];
	pid_t pid;

	if (!nentries && relay_pidfd < 0)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		err_errno(errno, "janitor: socketpair");
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err_errno(errno, "janitor: fork");
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		janitor_main(sv[1], filter);
	}
	close(sv[1]);
	janitor_pid = pid;
	janitor_sock = sv[0];
	if (seccomp_allow_kill(pid))
		debug_msg("janitor: no room to allow kill(%d)", (int)pid);
	/* From now on the janitor holds the directories, tapir none. */
	for (unsigned int i = 0; i < nentries; i++) {
		close(entries[i].dirfd);
		entries[i].dirfd = -1;
	}
	if (relay_pidfd >= 0)
		close(relay_pidfd);
	return 0;
}

/**
 * wait_answer() - wait up to JANITOR_WAIT_MS for the janitor's byte
 *
 * Return: true if it answered (the files are gone), false on EOF, error or
 *	   timeout
 */
static bool wait_answer(void)
{
	uint64_t deadline = clock_ms() + JANITOR_WAIT_MS;
	struct pollfd p = {.fd = janitor_sock, .events = POLLIN};
	char b;

	for (;;) {
		uint64_t now = clock_ms();
		int r;

		if (now >= deadline)
			return false;
		r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		return read(janitor_sock, &b, 1) == 1;
	}
}

/**
 * janitor_finish() - remove the registered files, through the janitor if
 *		      there is one, and reap it
 *
 * At tapir's exit, isolated or not; a second call does nothing. tapir
 * waits up to JANITOR_WAIT_MS, so that the files are gone once it has
 * exited; a janitor that takes longer is killed.
 */
void janitor_finish(void)
{
	bool reap = true;
	int status;

	if (!janitor_pid) {
		remove_entries();
		return;
	}
	if (send(janitor_sock, "1", 1, MSG_NOSIGNAL) != 1 || !wait_answer()) {
		debug_msg("janitor: no answer; files may be left");
		if (kill(janitor_pid, SIGKILL)) {
			int err = errno;

			debug_msg("janitor: kill: %s", strerror(err));
			/* Root's janitor, tapir nobody now (runas.c): left
			 * to finish on its own, not waited for.
			 */
			reap = err != EPERM;
		}
	}
	close(janitor_sock);
	janitor_sock = -1;
	while (reap && waitpid(janitor_pid, &status, 0) < 0 && errno == EINTR)
		;
	janitor_pid = 0;
	nentries = 0;
	relay_pidfd = -1;
}
