// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - `tapir run`: a command in new user+net namespaces, wired up */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "driver/front/cli.h"
#include "driver/sandbox/fds.h"
#include "driver/sandbox/janitor.h"
#include "driver/host/lifecycle.h"
#include "driver/core/log.h"
#include "driver/front/loop.h"
#include "driver/host/netlink.h"
#include "driver/front/run.h"
#include "driver/sandbox/runas.h"
#include "driver/sandbox/seccomp.h"

/* Syscalls of tapir run once running: the command's end. Its resolv.conf
 * is removed by the janitor (janitor.c).
 */
const char *const run_syscalls[] = {
        "kill", "wait4", "waitid", "close", NULL,
};

/**
 * write_file() - write a short string to a /proc file
 * @path:	file
 * @s:		content
 *
 * Return: 0 on success, -errno on failure
 */
static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		err = -errno;
	close(fd);
	return err;
}

/**
 * map_self() - map our outer uid and gid to root in the new user namespace
 * @uid:	outer uid
 * @gid:	outer gid
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int map_self(uid_t uid, gid_t gid)
{
	char map[64];
	int ret;

	/* An unprivileged gid_map write needs setgroups disabled first. */
	ret = write_file("/proc/self/setgroups", "deny");
	if (ret && ret != -ENOENT) {
		err_errno(-ret, "run: write /proc/self/setgroups");
		return -1;
	}
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)uid);
	if ((ret = write_file("/proc/self/uid_map", map))) {
		err_errno(-ret, "run: write /proc/self/uid_map");
		return -1;
	}
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)gid);
	if ((ret = write_file("/proc/self/gid_map", map))) {
		err_errno(-ret, "run: write /proc/self/gid_map");
		return -1;
	}
	return 0;
}

/**
 * bind_resolv_conf() - point the command's resolver at the DNS forwarder
 * @path:	a resolv.conf naming net+3
 *
 * A failure only warns: the command still runs, with the host's resolver
 * list, which may not be reachable from the namespace.
 */
static void bind_resolv_conf(const char *path)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount(path, "/etc/resolv.conf", NULL, MS_BIND, NULL))
		err_errno(errno, "run: warning: bind %s over /etc/resolv.conf",
		          path);
}

/**
 * child_main() - the command's side: namespaces, wait for go, exec
 * @o:		options
 * @resolv:	resolv.conf to bind, or NULL
 * @to_parent:	write end: one byte once the namespaces exist
 * @from_parent: read end: one byte once the tap is up, EOF on failure
 */
static void __attribute__((noreturn))
child_main(const struct opts *o, const char *resolv, int to_parent,
           int from_parent)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	char go;

	/* Killed with tapir: the command must not outlive its network. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL)) {
		err_errno(errno, "run: prctl(PR_SET_PDEATHSIG)");
		_exit(125);
	}
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS)) {
		err_errno(errno, "run: create user and network namespaces");
		_exit(125);
	}
	if (map_self(uid, gid))
		_exit(125);
	if (resolv)
		bind_resolv_conf(resolv);
	if (write(to_parent, "1", 1) != 1)
		_exit(125);
	close(to_parent);
	if (read(from_parent, &go, 1) != 1)
		_exit(125);
	close(from_parent);
	/* Both are tapir's alone: a command holding the ready fd would keep
	 * the caller from seeing EOF after "1" for as long as it runs.
	 */
	if (o->ready_fd >= 0)
		close(o->ready_fd);
	if (o->exit_fd >= 0)
		close(o->exit_fd);
	execvp(o->run_argv[0], o->run_argv);
	err_errno(errno, "run: execute %s", o->run_argv[0]);
	_exit(errno == ENOENT ? 127 : 126);
}

/**
 * make_resolv_conf() - write a resolv.conf naming our DNS forwarder
 * @o:		options, for the address
 * @dir:	filled with the temporary directory holding it
 * @dirlen:	size of @dir
 * @file:	filled with the file's path
 * @filelen:	size of @file
 *
 * A file that could not be written whole (ENOSPC) is an error: bound over
 * /etc/resolv.conf, an empty one would leave the command without DNS.
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int make_resolv_conf(const struct opts *o, char *dir, size_t dirlen,
                            char *file, size_t filelen)
{
	const char *tmp = getenv("TMPDIR");
	struct in_addr dns = o->dns4;
	int err = 0;
	FILE *f;

	snprintf(dir, dirlen, "%s/tapir-run.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		err_errno(errno, "run: create temporary directory %s", dir);
		return -1;
	}
	snprintf(file, filelen, "%s/resolv.conf", dir);
	f = fopen(file, "we");
	if (!f) {
		err_errno(errno, "run: create %s", file);
		rmdir(dir);
		return -1;
	}
	if (fprintf(f, "nameserver %s\n", inet_ntoa(dns)) < 0 ||
	    (o->ipv6 && !o->copy6 && fprintf(f, "nameserver fd00::3\n") < 0)) {
		err = errno ? errno : EIO;
		fclose(f);
	} else if (fclose(f)) {
		err = errno ? errno : EIO;
	}
	if (err) {
		err_errno(err, "run: write %s", file);
		unlink(file);
		rmdir(dir);
		return -1;
	}
	return 0;
}

/**
 * start_child() - fork the command's process and wait for its namespaces
 * @o:		options
 * @resolv:	resolv.conf to bind, or NULL
 * @go_fd:	filled with the write end that releases the command
 *
 * Return: the child's PID, or -1 after an error was printed
 */
static pid_t start_child(const struct opts *o, const char *resolv, int *go_fd)
{
	int up[2], down[2], status;
	pid_t pid;
	char b;

	if (pipe2(up, O_CLOEXEC) || pipe2(down, O_CLOEXEC)) {
		err_errno(errno, "run: pipe");
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err_errno(errno, "run: fork");
		return -1;
	}
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		child_main(o, resolv, up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	if (read(up[0], &b, 1) != 1) {
		close(up[0]);
		close(down[1]);
		waitpid(pid, &status, 0);
		return -1;
	}
	close(up[0]);
	*go_fd = down[1];
	if (seccomp_allow_kill(pid))
		debug_msg("run: no room to allow kill(%d)", (int)pid);
	return pid;
}

/**
 * ipv6_where_no_ipv4() - turn IPv6 on where the host has no IPv4 route
 * @o:		options of CLI_RUN, parsed
 *
 * On an IPv6-only host the command could reach nothing without -6, and
 * pasta would serve it IPv6 by itself: so does tapir run, where the MTU
 * allows. The host's routes are read once; a failure to read them leaves
 * the options as they were.
 */
static void ipv6_where_no_ipv4(struct opts *o)
{
	struct route_default r;
	struct nl nl;
	bool v4, v6;

	if (o->ipv6 || o->mtu < TAPIR_IPV6_MTU_MIN || nl_open(&nl))
		return;
	v4 = route_get_default(&nl, AF_INET, &r) != -ENETUNREACH;
	v6 = !route_get_default(&nl, AF_INET6, &r);
	nl_close(&nl);
	if (v4 || !v6)
		return;
	info_msg("run: the host has no IPv4 default route: IPv6 on, as with "
	         "-6");
	o->ipv6 = true;
}

/**
 * run_main() - tapir run [OPTION]... [--] CMD [ARG]...
 * @argc:	argument count, argv[0] being "run"
 * @argv:	arguments
 *
 * Return: the command's exit status (128+signal if killed), 125 if tapir
 *	   itself failed, 126/127 if the command could not be executed
 */
int run_main(int argc, char **argv)
{
	static struct opts o;
	int ret;

	ret = cli_parse(argc, argv, CLI_RUN, &o);
	if (ret)
		return ret == CLI_EXIT_OK ? 0 : 125;
	if (cli_check_fds(&o))
		return 125;
	ipv6_where_no_ipv4(&o);
	runas_default(&o, false);
	return run_command(&o);
}

/**
 * run_command() - run o->run_argv in new namespaces, tapir serving them
 * @o:		validated options of CLI_RUN; the target is filled in
 *
 * Return: as run_main()
 */
int run_command(struct opts *o)
{
	char dir[PATH_MAX], resolv[PATH_MAX + 16];
	int ret, go_fd = -1, status;
	struct ctx c;
	pid_t pid;

	dir[0] = '\0';
	if (!o->disable_dns &&
	    make_resolv_conf(o, dir, sizeof(dir), resolv, sizeof(resolv)))
		return 125;
	pid = start_child(o, dir[0] ? resolv : NULL, &go_fd);
	/* The command keeps what the caller passed it; tapir keeps none. */
	fds_close_inherited(o, go_fd);
	/* The sandbox hides the paths by the time they go: the janitor's. */
	if (dir[0] && ((ret = janitor_remove_at_exit(resolv, false)) ||
	               (ret = janitor_remove_at_exit(dir, true))))
		err_errno(-ret, "run: warning: %s will be left at exit", dir);
	ret = 125;
	if (pid < 0)
		goto out;
	/* Started as root, the command stays root's (root in its own
	 * namespaces, as a user's is the user's); tapir, nobody once set
	 * up, has the janitor pass its signals on.
	 */
	if (o->runas && janitor_relay_signals(pid)) {
		close(go_fd);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		goto out;
	}
	o->netns_type = NETNS_PID;
	o->pid = pid;
	if (loop_prepare(&c, o) ||
	    (o->pid_fd >= 0 &&
	     lifecycle_write_pid(o->pid_fd, getpid(), o->pid_path))) {
		close(go_fd);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		loop_cleanup(&c);
		goto out;
	}
	c.run_child = pid;
	if (write(go_fd, "1", 1) != 1)
		err_errno(errno, "run: release the command");
	close(go_fd);
	ret = loop_run(&c);
	if (c.run_child > 0) {
		if (janitor_signal_command(SIGKILL))
			kill(c.run_child, SIGKILL);
		waitpid(c.run_child, &status, 0);
	}
	loop_cleanup(&c);
out:
	janitor_finish();
	return ret;
}
