// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - minimal unit-test runner: runs unit_cases[], prints TAP */

#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "unit.h"

/* Seconds a unit_netns_run() body may take. */
#define UNIT_NETNS_TIMEOUT_S 30

static int case_failures;

/**
 * unit_check() - record the outcome of one expectation
 * @cond:	whether the expectation held
 * @expr:	its source text, printed on failure
 * @file:	source file of the expectation
 * @line:	source line of the expectation
 */
void unit_check(bool cond, const char *expr, const char *file, int line)
{
	if (cond)
		return;
	case_failures++;
	printf("#   failed: %s (%s:%d)\n", expr, file, line);
}

/**
 * netns_enter() - leave the host's network for a namespace with only lo
 *
 * Return: 0 on success, -1 with errno set
 */
static int netns_enter(void)
{
	struct ifreq ifr = {0};
	int fd, ret;

	/* Root here; without it, a user namespace grants the same. */
	if (unshare(CLONE_NEWNET) && unshare(CLONE_NEWUSER | CLONE_NEWNET))
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	strcpy(ifr.ifr_name, "lo");
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	if (!ret)
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	close(fd);
	return ret;
}

/**
 * unit_netns_run() - run a test body that needs real sockets, in a child
 *		      process with a network namespace of its own
 * @body:	test body, checking with CHECK() as usual
 *
 * Unit tests run as root outside any sandbox: in the child, only its own
 * loopback can be reached. A sanitizer report in the child fails it too,
 * and so does a body still running after UNIT_NETNS_TIMEOUT_S.
 *
 * Return: true if the namespace was made and every check held
 */
bool unit_netns_run(void (*body)(void))
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		if (netns_enter()) {
			printf("#   no network namespace: %s\n",
			       strerror(errno));
			fflush(stdout);
			_exit(2);
		}
		/* A body that hangs or spins fails alone, and soon. */
		alarm(UNIT_NETNS_TIMEOUT_S);
		body();
		fflush(stdout);
		_exit(case_failures ? 1 : 0);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	       WIFEXITED(status) && !WEXITSTATUS(status);
}

/**
 * unit_fail_syscall() - make one system call fail from now on, in this
 *			 process and the ones it forks
 * @nr:		syscall number (__NR_*)
 * @arg0:	fail it only when its first argument is this, or -1 for any
 * @err:	errno it fails with
 *
 * A seccomp filter, which cannot be removed: only for the child of
 * unit_netns_run(). Tests use it to force kernel failures (an old kernel
 * without close_range(), a prctl() refused) that can't be had otherwise.
 *
 * Return: 0, or -1 with errno set
 */
int unit_fail_syscall(long nr, long arg0, int err)
{
	/* The low word of args[0] is enough for the values tests use. */
	const unsigned int arg_off = offsetof(struct seccomp_data, args[0]) +
	                             (__BYTE_ORDER == __LITTLE_ENDIAN ? 0 : 4);
	const unsigned int ret_err =
	        SECCOMP_RET_ERRNO | ((unsigned int)err & SECCOMP_RET_DATA);
	struct sock_filter any[] = {
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                 offsetof(struct seccomp_data, nr)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1),
	        BPF_STMT(BPF_RET | BPF_K, ret_err),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter one[] = {
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                 offsetof(struct seccomp_data, nr)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 3),
	        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg_off),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)arg0, 0, 1),
	        BPF_STMT(BPF_RET | BPF_K, ret_err),
	        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(any) / sizeof(any[0]), any};

	if (arg0 >= 0) {
		prog.len = sizeof(one) / sizeof(one[0]);
		prog.filter = one;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -1 : 0;
}

/**
 * unit_capture_stderr() - send this process's stderr into a pipe
 *
 * Only for the child of unit_netns_run(): stderr is not restored.
 *
 * Return: the pipe's read end, non-blocking, or -1
 */
int unit_capture_stderr(void)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return -1;
	if (dup2(p[1], STDERR_FILENO) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	return p[0];
}

/**
 * main() - run every case, or those whose name holds argv[1], and print
 *	    one TAP line per case
 * @argc:	argument count
 * @argv:	no argument, or a part of the names of the cases to run (the
 *		others are reported as skipped, so the plan stays whole)
 *
 * Return: 0 if all cases run passed, 1 otherwise
 */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	int n = 0, failed = 0;

	while (unit_cases[n].name)
		n++;
	printf("1..%d\n", n);
	for (int i = 0; i < n; i++) {
		if (only && !strstr(unit_cases[i].name, only)) {
			printf("ok %d - %s # SKIP not selected\n", i + 1,
			       unit_cases[i].name);
			continue;
		}
		case_failures = 0;
		unit_cases[i].fn();
		if (case_failures)
			failed++;
		printf("%s %d - %s\n", case_failures ? "not ok" : "ok", i + 1,
		       unit_cases[i].name);
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

/**
 * unit_write_file() - write @text to the file at @path
 * @path:	file, e.g. a sysctl of the test's own network namespace
 * @text:	contents
 *
 * Return: true on success
 */
bool unit_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 &&
	          write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok;
}
