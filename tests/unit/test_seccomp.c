// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the seccomp allow-list: names, what it kills,
 * and the arguments it refuses
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <seccomp.h>

#include "driver/host/dns.h"
#include "driver/sandbox/seccomp.h"
#include "driver/front/syscalls.h"
#include "tests/unit/unit.h"

/**
 * listed() - whether @list names @name
 * @list:	NULL-terminated names
 * @name:	syscall name
 *
 * Return: true if so
 */
static bool listed(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

/*
 * Every name is one libseccomp knows on this machine: a typo would allow
 * nothing, and only the test that needs the call would notice.
 */
static void test_names_resolve(void)
{
	unsigned int unknown = 1;

	CHECK(seccomp_check_lists(syscall_lists, syscall_lists_n, &unknown) >
	      40);
	CHECK(unknown == 0);
}

/*
 * aarch64 has no poll, epoll_wait, open or accept: glibc uses the newer
 * calls there, so a list naming an old one must name its successor too.
 */
static void test_aarch64_successors(void)
{
	static const char *const pairs[][2] = {
	        {"poll", "ppoll"},
	        {"epoll_wait", "epoll_pwait"},
	        {"open", "openat"},
	        {"accept", "accept4"},
	};

	for (size_t i = 0; i < syscall_lists_n; i++)
		for (size_t j = 0; j < sizeof(pairs) / sizeof(pairs[0]); j++)
			CHECK(!listed(syscall_lists[i], pairs[j][0]) ||
			      listed(syscall_lists[i], pairs[j][1]));
	for (size_t j = 0; j < sizeof(pairs) / sizeof(pairs[0]); j++)
		CHECK(seccomp_syscall_resolve_name_arch(SCMP_ARCH_AARCH64,
		                                        pairs[j][1]) >= 0);
}

/* A directory fd opened before the filter, as api.c and run.c held one. */
static int dir_fd = -1;
/* A child the filtered process may signal (seccomp_allow_kill()), and
 * the test itself, which it may not.
 */
static pid_t known_child, test_pid;

/**
 * filtered_child() - fork, load tapir's filter, then run @body
 * @body:	what the child does after the filter is on; it returns, or
 *		_exit()s with a status naming the check that failed
 *
 * Return: the child's wait status
 */
static int filtered_child(void (*body)(void))
{
	const struct rlimit no_core = {0, 0};
	int status = 0;
	pid_t pid = fork();

	if (!pid) {
		/* abort_body() dumps no core. */
		if (setrlimit(RLIMIT_CORE, &no_core) ||
		    (known_child > 0 && seccomp_allow_kill(known_child)) ||
		    seccomp_apply(syscall_lists, syscall_lists_n))
			_exit(3);
		body();
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return status;
}

/**
 * exited_0() - whether a wait status is a plain exit with status 0
 * @status:	from waitpid()
 *
 * Return: true if so
 */
static bool exited_0(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void allowed_body(void)
{
	if (getpid() <= 0 || write(-1, "", 0) != -1)
		_exit(2);
}

static void forbidden_body(void)
{
	unsigned int cpu;

	syscall(SYS_getcpu, &cpu, NULL, NULL);
}

static void exec_memory_body(void)
{
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
	     0);
}

static void test_kills_outside(void)
{
	int status = filtered_child(allowed_body);

	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	status = filtered_child(forbidden_body);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
}

static void test_no_exec_memory(void)
{
	int status = filtered_child(exec_memory_body);

	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
}

static void sockets_body(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 || errno != EAFNOSUPPORT)
		_exit(10);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd >= 0 || errno != EAFNOSUPPORT)
		_exit(11);
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 || errno != EAFNOSUPPORT)
		_exit(12);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		_exit(13);
	close(fd);
	/* A kernel without IPv6 says so itself. */
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && errno != EAFNOSUPPORT)
		_exit(14);
	if (fd >= 0)
		close(fd);
}

/*
 * No Unix socket, abstract or on a path (the user's D-Bus, podman's and
 * Docker's sockets), nor netlink or packet ones: EAFNOSUPPORT, and the
 * families of the datapath still work.
 */
static void test_socket_families(void)
{
	CHECK(exited_0(filtered_child(sockets_body)));
}

static void openat_body(void)
{
	int fd = openat(dir_fd, "etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 || errno != EACCES)
		_exit(20);
	fd = openat(dir_fd, "..", O_PATH | O_CLOEXEC);
	if (fd >= 0 || errno != EACCES)
		_exit(21);
	/* glibc passes AT_FDCWD zero-extended; others sign-extend it. */
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		_exit(22);
	close(fd);
	fd = (int)syscall(SYS_openat, -100L, "/", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(23);
	close(fd);
}

/*
 * openat() relative to a directory fd that outlived isolation is
 * refused; relative to the working directory (a path) it works.
 */
static void test_openat_cwd_only(void)
{
	dir_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(dir_fd >= 0);
	CHECK(exited_0(filtered_child(openat_body)));
	close(dir_fd);
	dir_fd = -1;
}

static void clone_ns_body(void)
{
	/* Without CLONE_SIGHAND the kernel would refuse it (EINVAL): the
	 * filter must not let it get that far.
	 */
	syscall(SYS_clone, CLONE_THREAD | CLONE_NEWUSER, NULL, NULL, NULL, 0);
	_exit(30);
}

static void clone_netns_body(void)
{
	syscall(SYS_clone, CLONE_THREAD | CLONE_NEWNET, NULL, NULL, NULL, 0);
	_exit(31);
}

static void *thread_fn(void *arg)
{
	return arg;
}

static void thread_body(void)
{
	static int token;
	void *ret = NULL;
	pthread_t t;

	if (pthread_create(&t, NULL, thread_fn, &token) ||
	    pthread_join(t, &ret) || ret != &token)
		_exit(32);
}

/*
 * clone() makes threads (glibc falls back from clone3()), and a clone()
 * with a namespace flag kills, whatever else its flags say.
 */
static void test_clone_threads_only(void)
{
	int status = filtered_child(clone_ns_body);

	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
	status = filtered_child(clone_netns_body);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
	CHECK(exited_0(filtered_child(thread_body)));
}

static void kill_body(void)
{
	if (kill(known_child, 0))
		_exit(40);
	if (!kill(test_pid, 0) || errno != EPERM)
		_exit(41);
	if (!kill(1, 0) || errno != EPERM)
		_exit(42);
}

/*
 * kill() reaches the children named before the filter (the command, the
 * helpers), and no other process of the user.
 */
static void test_kill_known_children(void)
{
	int status;

	test_pid = getpid();
	known_child = fork();
	if (!known_child) {
		pause();
		_exit(0);
	}
	CHECK(known_child > 0);
	CHECK(exited_0(filtered_child(kill_body)));
	kill(known_child, SIGKILL);
	waitpid(known_child, &status, 0);
	known_child = 0;
}

/* A process of the same user that tapir never forked: the shell, an
 * agent, systemd --user.
 */
static pid_t victim;

/* A pidfd on the victim, opened before the filter. */
static int pidfd_body_fd = -1;

static void pidfd_body(void)
{
	syscall(SYS_pidfd_send_signal, pidfd_body_fd, SIGKILL, NULL, 0);
}

static void fcntl_signal_body(void)
{
	struct f_owner_ex owner = {F_OWNER_PID, victim};
	int p[2];

	if (pipe2(p, O_NONBLOCK))
		_exit(60);
	/* The route the issue found: owner, signal, O_ASYNC, then I/O. */
	if (fcntl(p[0], F_SETOWN, victim) != -1 || errno != EPERM)
		_exit(61);
	if (fcntl(p[0], F_SETOWN_EX, &owner) != -1 || errno != EPERM)
		_exit(62);
	if (fcntl(p[0], F_SETSIG, SIGKILL) != -1 || errno != EPERM)
		_exit(63);
	if (fcntl(p[0], F_SETFL, O_NONBLOCK | O_ASYNC) != -1 || errno != EPERM)
		_exit(64);
	if (fcntl(p[0], F_SETLEASE, F_RDLCK) != -1 || errno != EPERM)
		_exit(65);
	if (ioctl(p[0], FIOSETOWN, &victim) != -1 || errno != ENOTTY)
		_exit(66);
	if (write(p[1], "x", 1) != 1)
		_exit(67);
	/* What tapir does with fcntl() still works. */
	if (fcntl(p[0], F_GETFL) < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) ||
	    fcntl(p[0], F_SETPIPE_SZ, 1 << 16) < 0 ||
	    fcntl(p[0], F_GETPIPE_SZ) < 0 || fcntl(p[0], F_SETFD, FD_CLOEXEC) ||
	    fcntl(p[0], F_GETFD) < 0)
		_exit(68);
}

static void sockopt_body(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (s < 0)
		_exit(70);
	if (!setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    errno != EPERM)
		_exit(71);
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		_exit(72);
}

/**
 * victim_alive() - whether @victim is still alive, and reap it if not
 *
 * Return: true if so
 */
static bool victim_alive(void)
{
	int status;

	return waitpid(victim, &status, WNOHANG) == 0;
}

/*
 * No signal reaches a process of the same user through fcntl(): not
 * F_SETOWN with F_SETSIG(SIGKILL) and O_ASYNC, nor a lease or ioctl()'s
 * FIOSETOWN; nor through pidfd_send_signal(), which kills the filtered
 * process instead. SO_REUSEPORT, which would share a same-user listener's
 * port, is refused; other socket options are not.
 */
static void test_no_signal_routes(void)
{
	int status, pidfd;

	victim = fork();
	if (!victim) {
		pause();
		_exit(0);
	}
	CHECK(victim > 0);
	status = filtered_child(fcntl_signal_body);
	CHECK(exited_0(status));
	if (!exited_0(status))
		fprintf(stderr, "# fcntl body: status %#x\n", status);
	CHECK(victim_alive());
	pidfd = (int)syscall(SYS_pidfd_open, victim, 0);
	CHECK(pidfd >= 0);
	pidfd_body_fd = pidfd;
	status = filtered_child(pidfd_body);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
	close(pidfd);
	CHECK(victim_alive());
	CHECK(exited_0(filtered_child(sockopt_body)));
	kill(victim, SIGKILL);
	waitpid(victim, &status, 0);
}

static void scoped_dns_body(void)
{
	union sockaddr_inany ns[2];
	static const char text[] = "nameserver fe80::1%lo\n"
	                           "nameserver fe80::2%no-such-if0\n"
	                           "nameserver ::1\n";

	if (dns_parse_resolv(text, sizeof(text) - 1, ns, 2) != 2)
		_exit(50);
	if (ns[0].sa6.sin6_scope_id != 1 || ns[1].sa6.sin6_scope_id != 0)
		_exit(51);
}

/*
 * A scoped nameserver (NetworkManager's "fe80::1%eth0") is looked up
 * under the filter: if_nametoindex()'s ioctl(SIOCGIFINDEX) is allowed, an
 * unknown interface only skips its line.
 */
static void test_scoped_nameserver(void)
{
	CHECK(exited_0(filtered_child(scoped_dns_body)));
}

static void isatty_body(void)
{
	if (isatty(STDIN_FILENO) || errno != ENOTTY)
		_exit(60);
}

static void abort_body(void)
{
	abort();
}

/*
 * Any other ioctl (isatty()'s TCGETS, as stdio and the sanitizers ask)
 * says ENOTTY; abort() dies of SIGABRT, not SIGSYS.
 */
static void test_isatty_and_abort(void)
{
	int status;

	CHECK(exited_0(filtered_child(isatty_body)));
	status = filtered_child(abort_body);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

static void helper_sockets_body(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd >= 0 || errno != EAFNOSUPPORT)
		_exit(70);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		_exit(71);
	close(fd);
}

/*
 * The namespace socket helper's own filter: TCP sockets of the
 * datapath's families, no Unix socket of the container's namespace.
 */
static void test_nssock_helper_families(void)
{
	int status = 0;
	pid_t pid = fork();

	if (!pid) {
		if (seccomp_apply_nssock())
			_exit(3);
		helper_sockets_body();
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(exited_0(status));
}

/**
 * janitor_child() - fork, load the janitor's filter for @allowed only, and
 *		     unlink a file that isn't there relative to @fd
 * @allowed:	the directory fd the filter allows
 * @fd:		the one used
 *
 * Return: the child's wait status: 0 when the call was allowed (ENOENT)
 */
static int janitor_child(int allowed, int fd)
{
	int status = 0;
	pid_t pid = fork();

	if (!pid) {
		struct stat st;

		if (seccomp_apply_janitor(&allowed, 1, -1))
			_exit(3);
		if (!fstatat(fd, "tapir-no-such-file", &st,
		             AT_SYMLINK_NOFOLLOW) ||
		    !unlinkat(fd, "tapir-no-such-file", 0) || errno != ENOENT)
			_exit(80);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return status;
}

/*
 * The janitor may stat and unlink in the directories it holds, and
 * nowhere else.
 */
static void test_janitor_dirfds_only(void)
{
	int a = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int b = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int status;

	CHECK(a >= 0 && b >= 0);
	CHECK(exited_0(janitor_child(a, a)));
	status = janitor_child(a, b);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
	status = janitor_child(a, AT_FDCWD);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
	close(a);
	close(b);
}

const struct unit_case unit_cases[] = {
        {"every name in the allow-lists resolves", test_names_resolve},
        {"lists naming a call aarch64 lacks name its successor too",
         test_aarch64_successors},
        {"filtered: allowed calls work, getcpu() dies of SIGSYS",
         test_kills_outside},
        {"filtered: mmap() with PROT_EXEC dies of SIGSYS", test_no_exec_memory},
        {"filtered: socket() for IPv4 and IPv6 only, no Unix socket",
         test_socket_families},
        {"filtered: openat() with a directory fd is refused",
         test_openat_cwd_only},
        {"filtered: clone() for threads only, a namespace flag kills",
         test_clone_threads_only},
        {"filtered: kill() reaches the named children only",
         test_kill_known_children},
        {"filtered: no signal reaches a process of the same user by "
         "fcntl(), ioctl() or a pidfd; no SO_REUSEPORT",
         test_no_signal_routes},
        {"filtered: scoped nameservers are looked up", test_scoped_nameserver},
        {"filtered: isatty() says no, abort() dies of SIGABRT",
         test_isatty_and_abort},
        {"namespace helper filtered: TCP sockets only",
         test_nssock_helper_families},
        {"janitor filtered: stat and unlink in its directories only",
         test_janitor_dirfds_only},
        {NULL, NULL},
};
