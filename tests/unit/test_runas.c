// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for serving as nobody when started as root: tapir's
 * own sandbox, credentials and filter, and what they leave readable
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "driver/front/cli.h"
#include "driver/sandbox/isolation.h"
#include "driver/sandbox/runas.h"
#include "driver/sandbox/seccomp.h"
#include "driver/front/syscalls.h"
#include "tests/unit/unit.h"

/* A file only uid 0 (and group shadow) may read, as /etc/shadow is. */
#define SHADOW "/etc/shadow"

/**
 * effective_caps() - the low word of this process's effective capabilities
 *
 * Return: the bits, or ~0U if capget() failed
 */
static unsigned int effective_caps(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};

	if (syscall(SYS_capget, &h, d) || d[1].effective)
		return ~0U;
	return d[0].effective;
}

/**
 * served_creds() - the credentials of a tapir started as root, once
 *		    isolated
 *
 * Return: 0, or a status naming the check that failed
 */
static int served_creds(void)
{
	uid_t r, e, s;

	if (getresuid(&r, &e, &s) || r != 65534 || e != 65534 || s != 65534)
		return 20;
	if (getgid() != 65534 || getegid() != 65534 || getgroups(0, NULL))
		return 21;
	if (effective_caps() != 1U << CAP_NET_BIND_SERVICE)
		return 22;
	return 0;
}

/**
 * served_reads() - what a filtered tapir, started as root, may still read
 *
 * Only calls the filter allows: openat() from the working directory.
 *
 * Return: 0, or a status naming the check that failed
 */
static int served_reads(void)
{
	int fd = open(SHADOW, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 || errno != EACCES)
		return 23;
	/* The sandbox still shows the resolver's configuration. */
	fd = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		return 24;
	return 0;
}

/**
 * served_child() - as tapir started as root: the defaults, then the
 *		    sandbox (if @sandbox), served_creds(), the filter and
 *		    served_reads()
 * @sandbox:	enter tapir's sandbox first, or only serve as nobody
 *
 * Return: the child's wait status
 */
static int served_child(bool sandbox)
{
	static struct opts o;
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (!pid) {
		cli_opts_defaults(&o, CLI_ATTACH);
		o.netns_type = NETNS_PID;
		o.pid = getpid();
		runas_default(&o, true);
		if (!o.runas)
			_exit(10);
		if (sandbox ? isolation_sandbox(&o) : isolation_serve_as(&o))
			_exit(11);
		status = served_creds();
		if (status)
			_exit(status);
		if (seccomp_apply(syscall_lists, syscall_lists_n))
			_exit(12);
		_exit(served_reads());
	}
	waitpid(pid, &status, 0);
	return status;
}

/*
 * Started as the real root, tapir serves as nobody with only
 * CAP_NET_BIND_SERVICE: /etc/shadow, in the sandbox's /etc or the host's,
 * can't be read.
 */
static void test_root_serves_as_nobody(void)
{
	int status;

	if (geteuid() != 0) {
		printf("# not root: nothing to drop\n");
		return;
	}
	CHECK(access(SHADOW, R_OK) == 0);
	status = served_child(true);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("#   sandboxed: status %#x\n", status);
	status = served_child(false);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("#   not sandboxed: status %#x\n", status);
}

static void userns_root_body(void)
{
	static struct opts o;
	char map[32];
	int fd;

	if (unshare(CLONE_NEWUSER)) {
		/* ThreadSanitizer's own thread makes the process
		 * multi-threaded, which the kernel refuses a user
		 * namespace; the other builds run this check. */
#ifdef __SANITIZE_THREAD__
		if (errno == EINVAL) {
			printf("# multi-threaded under ThreadSanitizer: "
			       "unshare(CLONE_NEWUSER) is refused\n");
			return;
		}
#endif
		CHECK(!"unshare(CLONE_NEWUSER)");
		return;
	}
	snprintf(map, sizeof(map), "0 0 1");
	fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0 && write(fd, map, strlen(map)) == (ssize_t)strlen(map));
	if (fd >= 0)
		close(fd);
	cli_opts_defaults(&o, CLI_ATTACH);
	runas_default(&o, true);
	CHECK(!o.runas);
}

/*
 * Root of a user namespace (podman's rootless one runs pasta so) is the
 * user who made it: tapir does not change its uid there.
 */
static void test_userns_root_stays(void)
{
	if (geteuid() != 0) {
		printf("# not root: no uid 0 to map\n");
		return;
	}
	CHECK(unit_netns_run(userns_root_body));
}

const struct unit_case unit_cases[] = {
        {"started as root: serves as nobody, /etc/shadow unreadable, only "
         "CAP_NET_BIND_SERVICE",
         test_root_serves_as_nobody},
        {"root of a user namespace: the uid stays", test_userns_root_stays},
        {NULL, NULL},
};
