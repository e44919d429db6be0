// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - --enable-seccomp: only the syscalls tapir makes once running
 *
 * An allow-list, as pasta keeps (slirp4netns blocks a list instead): the
 * union of what each module says it calls after set-up (seccomp.h), built
 * with libseccomp for the machine's architecture. Anything else, and any
 * syscall through another ABI (x86's int 0x80, x32), kills the process.
 *
 * Some calls are allowed only with the arguments tapir uses (arg_rules[]):
 * socket() for IPv4 and IPv6 only, openat() relative to the working
 * directory only, kill() only to the children named before the filter,
 * ioctl() only to look up an interface index, tgkill() only for abort(),
 * clone() only for threads and never with a namespace flag, mmap() and
 * mprotect() never with PROT_EXEC. Where glibc itself might try another
 * argument (nscd's Unix socket, isatty()), the call fails with an errno
 * and tapir goes on; clone() and tgkill() otherwise kill it.
 *
 * Arguments the kernel reads as an int (a family, a dirfd, a pid, an
 * ioctl request) are compared on their low 32 bits, exactly what the
 * kernel reads: the upper half of the register is undefined (glibc 2.36
 * passes AT_FDCWD zero-extended, the sanitizer runtimes sign-extended).
 * libseccomp 2.5 makes an unconditional rule win over every conditional
 * one for the same call, so "any other argument" is a catch-all condition
 * (an argument >= 0, unsigned: always true), which loses to the equality
 * rules (tests/unit/test_seccomp.c checks each).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <seccomp.h>

#include "driver/sandbox/isolation.h"
#include "driver/core/log.h"
#include "driver/sandbox/seccomp.h"

/* What any running C program with glibc and libevent needs; tgkill() is
 * abort()'s (allow_abort()).
 */
static const char *const process_syscalls[] = {
        "exit",         "exit_group",     "brk",
        "munmap",       "mremap",         "madvise",
        "rt_sigreturn", "rt_sigprocmask", "restart_syscall",
        "futex",        "clock_gettime",  "gettimeofday",
        "time",         "getrandom",      "tgkill",
        NULL,
};

/* The sanitizer runtimes of `make check-asan` and `make check-tsan` at
 * exit and in reports (LeakSanitizer stops the world with a ptrace()ing
 * thread; ThreadSanitizer's background thread sleeps): test builds only.
 * Their clone() is allow_threads()'s, their openat() allow_cwd_open()'s:
 * the argument filters hold in these builds too.
 */
static const char *const sanitizer_syscalls[] = {
        "ptrace",
        "wait4",
        "waitid",
        "sched_yield",
        "prctl",
        "getpid",
        "gettid",
        "tgkill",
        "readlink",
        "readlinkat",
        "open",
        "close",
        "read",
        "pread64",
        "write",
        "fstat",
        "newfstatat",
        "statx",
        "lseek",
        "sigaltstack",
        "rt_sigaction",
        "execve",
        "pipe2",
        "dup2",
        "dup3",
        "getppid",
        "setsid",
        "sched_getaffinity",
        "getrlimit",
        "prlimit64",
        "process_vm_readv",
        "uname",
        "getdents",
        "getdents64",
        "nanosleep",
        "clock_nanosleep",
        NULL,
};

/* The namespace socket helper: it only makes sockets and passes them on. */
static const char *const nssock_helper_syscalls[] = {
        "read", "socket", "sendmsg", "close", "write", NULL,
};

/* The janitor (janitor.c): one byte in, the files out, one byte back.
 * Its fstatat() and unlinkat() are allowed on its directory fds only.
 */
static const char *const janitor_helper_syscalls[] = {
        "read",
        "sendto",
        "close",
        NULL,
};

/* Namespace flags clone() takes (CLONE_NEWTIME only through clone3(),
 * which is refused: in clone() that bit is the exit signal's).
 */
#define CLONE_NS_FLAGS                                                         \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |         \
	 CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

/* An int argument as the kernel reads it: the low 32 bits of @arg. */
#define INT_ARG(arg, v)                                                        \
	SCMP_CMP((arg), SCMP_CMP_MASKED_EQ, 0xffffffffULL,                     \
	         (scmp_datum_t)(uint32_t)(v))

/* Children tapir may signal (seccomp_allow_kill()). */
#define KILL_PIDS_MAX 8
static pid_t kill_pids[KILL_PIDS_MAX];
static unsigned int kill_npids;

/**
 * seccomp_allow_kill() - let the filter loaded later allow kill(@pid)
 * @pid:	a child tapir must be able to signal once filtered
 *
 * Called as each child is forked (tapir run's command, the namespace
 * socket helper, the janitor), before the filter is loaded: kill() of
 * any other pid fails with EPERM once it is.
 *
 * Return: 0, or -1 if the table is full (a bug: there are three children)
 */
int seccomp_allow_kill(pid_t pid)
{
	if (kill_npids == KILL_PIDS_MAX)
		return -1;
	kill_pids[kill_npids++] = pid;
	return 0;
}

/**
 * refuse_rest() - any call of @nr no other rule allows fails with @err
 * @f:		filter
 * @nr:		syscall
 * @arg:	the argument the allowing rules compare
 * @err:	errno
 *
 * An argument >= 0 compared unsigned is always true, yet a condition:
 * the allowing rules on the same argument still win (see the top).
 *
 * Return: 0 on success, -errno on failure
 */
static int refuse_rest(scmp_filter_ctx f, int nr, unsigned int arg, int err)
{
	return seccomp_rule_add(f, SCMP_ACT_ERRNO((unsigned int)err), nr, 1,
	                        SCMP_CMP(arg, SCMP_CMP_GE, 0, 0));
}

/**
 * allow_inet_sockets() - socket() for AF_INET and AF_INET6 only
 * @f:		filter
 * @nr:		socket's number
 *
 * Every socket tapir makes once running is IPv4 or IPv6 (TCP, UDP, ping,
 * listeners, if_nametoindex()'s). No Unix socket: the host's (the user's
 * D-Bus, podman's, Docker's) and abstract ones of the host's network
 * namespace are out of reach even where a path would be. glibc's own
 * fallbacks (nscd, if_nametoindex() out of IPv4 sockets) get
 * EAFNOSUPPORT.
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_inet_sockets(scmp_filter_ctx f, int nr)
{
	int ret =
	        seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1, INT_ARG(0, AF_INET));

	if (!ret)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
		                       INT_ARG(0, AF_INET6));
	return ret ? ret : refuse_rest(f, nr, 0, EAFNOSUPPORT);
}

/**
 * allow_cwd_open() - openat() relative to the working directory only
 * @f:		filter
 * @nr:		openat's number
 *
 * A directory fd could reach past the sandbox's root ("../../home"); none
 * survives isolation, and none may be used if one did.
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_cwd_open(scmp_filter_ctx f, int nr)
{
	int ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
	                           INT_ARG(0, AT_FDCWD));

	return ret ? ret : refuse_rest(f, nr, 0, EACCES);
}

/**
 * allow_known_kills() - kill() only to the children seccomp_allow_kill()
 *			 named
 * @f:		filter
 * @nr:		kill's number
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_known_kills(scmp_filter_ctx f, int nr)
{
	int ret = 0;

	for (unsigned int i = 0; !ret && i < kill_npids; i++)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
		                       INT_ARG(0, kill_pids[i]));
	return ret ? ret : refuse_rest(f, nr, 0, EPERM);
}

/**
 * allow_ifindex_ioctl() - ioctl() for SIOCGIFINDEX only
 * @f:		filter
 * @nr:		ioctl's number
 *
 * if_nametoindex() for a scoped nameserver (fe80::1%eth0) asks a socket;
 * any other request, such as isatty()'s, fails with ENOTTY.
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_ifindex_ioctl(scmp_filter_ctx f, int nr)
{
	int ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
	                           INT_ARG(1, SIOCGIFINDEX));

	return ret ? ret : refuse_rest(f, nr, 1, ENOTTY);
}

/**
 * allow_abort() - tgkill() of this process with SIGABRT only
 * @f:		filter
 * @nr:		tgkill's number
 *
 * abort() (a failed assertion, glibc's malloc checks) raises SIGABRT
 * with tgkill(getpid(), gettid(), SIGABRT): tapir then dies of SIGABRT,
 * its message written, rather than of SIGSYS.
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_abort(scmp_filter_ctx f, int nr)
{
	return seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 2, INT_ARG(0, getpid()),
	                        INT_ARG(2, SIGABRT));
}

/**
 * allow_fd_fcntls() - fcntl() for what tapir does with an fd only: flags
 *		       (never O_ASYNC), close-on-exec, dup, pipe size
 * @f:		filter
 * @nr:		fcntl's number
 *
 * F_SETOWN and F_SETSIG name a process and a signal the kernel sends for
 * the fd's I/O: SIGKILL to any process of the same user, past the filter
 * on kill(). Locks and leases act on files other processes use. Each of
 * those fails with EPERM.
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_fd_fcntls(scmp_filter_ctx f, int nr)
{
	static const int cmds[] = {F_GETFL,         F_GETFD,      F_SETFD,
	                           F_DUPFD_CLOEXEC, F_GETPIPE_SZ, F_SETPIPE_SZ};
	int ret =
	        seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 2, INT_ARG(1, F_SETFL),
	                         SCMP_A2(SCMP_CMP_MASKED_EQ, O_ASYNC, 0));

	for (size_t i = 0; !ret && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
		                       INT_ARG(1, cmds[i]));
	return ret ? ret : refuse_rest(f, nr, 1, EPERM);
}

/**
 * refuse_shared_sockopts() - setsockopt(), but never an option that would
 *			      share a port with, or load code into, a socket
 * @f:		filter
 * @nr:		setsockopt's number
 *
 * SO_REUSEPORT would let tapir bind a port a listener of the same user
 * holds with it, and take a share of its connections; tapir never asks
 * for it, nor for a BPF program on a socket (kernel code paths it need
 * not reach). Each fails with EPERM; every other option is allowed.
 *
 * Return: 0 on success, -errno on failure
 */
static int refuse_shared_sockopts(scmp_filter_ctx f, int nr)
{
	static const int opts[] = {SO_REUSEPORT, SO_ATTACH_FILTER,
	                           SO_ATTACH_BPF, SO_ATTACH_REUSEPORT_CBPF,
	                           SO_ATTACH_REUSEPORT_EBPF};
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(opts) / sizeof(opts[0]); i++)
		ret = seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), nr, 2,
		                       INT_ARG(1, SOL_SOCKET),
		                       INT_ARG(2, opts[i]));
	/* An always-true condition, so that the errno rules above win. */
	return ret ? ret
	           : seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
	                              SCMP_CMP(1, SCMP_CMP_GE, 0, 0));
}

/**
 * struct arg_rule - a syscall allowed only with some arguments
 * @name:	as the module lists name it
 * @add:	adds its rules
 */
struct arg_rule {
	const char *name;
	int (*add)(scmp_filter_ctx f, int nr);
};

static const struct arg_rule arg_rules[] = {
        {"socket", allow_inet_sockets},
        {"openat", allow_cwd_open},
        {"kill", allow_known_kills},
        {"ioctl", allow_ifindex_ioctl},
        {"tgkill", allow_abort},
        {"fcntl", allow_fd_fcntls},
        {"setsockopt", refuse_shared_sockopts},
};

#define ARG_RULES (sizeof(arg_rules) / sizeof(arg_rules[0]))

/**
 * listed() - whether a NULL-terminated list names @name
 * @list:	names
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

/**
 * arg_rule_of() - the argument filter for @name, if it has one
 * @name:	syscall name
 *
 * Sanitizer builds allow what their runtime needs outright: an
 * unconditional rule would override the filter anyway.
 *
 * Return: index into arg_rules[], or -1
 */
static int arg_rule_of(const char *name)
{
	if (isolation_sanitized() && listed(sanitizer_syscalls, name))
		return -1;
	for (size_t i = 0; i < ARG_RULES; i++)
		if (!strcmp(arg_rules[i].name, name))
			return (int)i;
	return -1;
}

/**
 * allow_list() - allow every syscall of a NULL-terminated list
 * @f:		filter
 * @list:	names
 * @done:	per arg_rules[] entry, whether its rules are in @f already
 *
 * Names the architecture lacks (poll on aarch64, say) are skipped: the
 * lists name both a call and its newer form where glibc may use either.
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_list(scmp_filter_ctx f, const char *const *list,
                      bool done[ARG_RULES])
{
	for (; *list; list++) {
		int nr = seccomp_syscall_resolve_name(*list), ret;
		int rule = arg_rule_of(*list);

		if (nr == __NR_SCMP_ERROR)
			continue;
		if (rule >= 0 && done[rule])
			continue;
		if (rule >= 0) {
			done[rule] = true;
			ret = arg_rules[rule].add(f, nr);
		} else {
			ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 0);
		}
		if (ret && ret != -EEXIST)
			return ret;
	}
	return 0;
}

/**
 * allow_noexec_memory() - mmap() and mprotect(), but never PROT_EXEC
 * @f:		filter
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_noexec_memory(scmp_filter_ctx f)
{
	int ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
	                           SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));

	if (!ret)
		ret = seccomp_rule_add(
		        f, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
		        SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	return ret;
}

/**
 * allow_threads() - clone() for new threads only; clone3() says ENOSYS
 * @f:		filter
 *
 * clone3() passes its flags in memory, where a filter can't look, so it
 * fails as on a kernel before 5.3 and glibc falls back to clone(), whose
 * flags must then make a thread (no fork) and never a namespace, whatever
 * the capabilities: anything else kills. The kernel reads the low 32 bits
 * of the flags, where all of these are. A thread names itself with
 * prctl(PR_SET_NAME), the one prctl() allowed. LeakSanitizer's
 * stop-the-world clone() is no thread: sanitizer builds allow any clone()
 * without a namespace flag.
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_threads(scmp_filter_ctx f)
{
	const scmp_datum_t thread = isolation_sanitized() ? 0 : CLONE_THREAD;
	int ret;

	ret = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (!ret)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
		                       SCMP_A0(SCMP_CMP_MASKED_EQ,
		                               thread | CLONE_NS_FLAGS,
		                               thread));
	if (!ret && !isolation_sanitized())
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
		                       SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME, 0));
	return ret;
}

/**
 * allow_on_fds() - @name only on the fds in @fds (directories, or the
 *		       janitor's pidfd)
 * @f:		filter
 * @name:	a syscall whose first argument is a directory fd
 * @fds:	the fds
 * @n:		how many
 *
 * Return: 0 on success (or if this architecture lacks @name), -errno
 */
static int allow_on_fds(scmp_filter_ctx f, const char *name, const int *fds,
                        size_t n)
{
	int nr = seccomp_syscall_resolve_name(name), ret = 0;

	if (nr == __NR_SCMP_ERROR)
		return 0;
	for (size_t i = 0; !ret && i < n; i++)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
		                       INT_ARG(0, fds[i]));
	return ret == -EEXIST ? 0 : ret;
}

/**
 * build() - a filter from @lists and what any process needs, to be loaded
 * @lists:	NULL-terminated name lists
 * @n:		number of lists
 * @threads:	the process may start threads (allow_threads())
 *
 * Return: the filter, or NULL after setting errno
 */
static scmp_filter_ctx build(const char *const *const *lists, size_t n,
                             bool threads)
{
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_KILL_PROCESS);
	bool done[ARG_RULES] = {false};
	int ret;

	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	ret = seccomp_attr_set(f, SCMP_FLTATR_ACT_BADARCH,
	                       SCMP_ACT_KILL_PROCESS);
	if (!ret)
		ret = allow_list(f, process_syscalls, done);
	for (size_t i = 0; !ret && i < n; i++)
		ret = allow_list(f, lists[i], done);
	if (!ret && isolation_sanitized())
		ret = allow_list(f, sanitizer_syscalls, done);
	if (!ret)
		ret = allow_noexec_memory(f);
	if (!ret && threads)
		ret = allow_threads(f);
	if (ret) {
		seccomp_release(f);
		errno = -ret;
		return NULL;
	}
	return f;
}

/**
 * load() - load a filter built by build(), and release it
 * @f:		filter, or NULL (errno set)
 *
 * Return: 0 on success, -errno on failure
 */
static int load(scmp_filter_ctx f)
{
	int ret;

	if (!f)
		return -errno;
	ret = seccomp_load(f);
	seccomp_release(f);
	return ret;
}

/**
 * seccomp_apply() - filter tapir itself, for --enable-seccomp
 * @lists:	NULL-terminated name lists, each module's (syscalls.c)
 * @n:		how many
 *
 * Called last in set-up, before the ready fd is written, and after every
 * child it may signal was named (seccomp_allow_kill()). The modules'
 * lists come from the top, so that this file knows none of them.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int seccomp_apply(const char *const *const *lists, size_t n)
{
	int ret = load(build(lists, n, true));

	if (ret) {
		err_errno(-ret, "seccomp: load the filter");
		return -1;
	}
	debug_msg("seccomp: allow-list loaded; anything else kills tapir");
	return 0;
}

/**
 * seccomp_apply_nssock() - filter the namespace socket helper
 *
 * Return: 0 on success, -1 with errno set
 */
int seccomp_apply_nssock(void)
{
	const char *const *const lists[] = {nssock_helper_syscalls};
	int ret = load(build(lists, 1, false));

	if (ret)
		errno = -ret;
	return ret ? -1 : 0;
}

/**
 * seccomp_apply_janitor() - filter the janitor (janitor.c)
 * @dirfds:	the directory fds it removes files from
 * @n:		how many
 * @pidfd:	the pidfd of the command it passes signals on to, or -1
 *
 * Return: 0 on success, -1 with errno set
 */
int seccomp_apply_janitor(const int *dirfds, size_t n, int pidfd)
{
	static const char *const at_calls[] = {"newfstatat", "fstatat64",
	                                       "statx", "unlinkat"};
	const char *const *const lists[] = {janitor_helper_syscalls};
	scmp_filter_ctx f = build(lists, 1, false);
	int ret = 0;

	for (size_t i = 0;
	     f && !ret && i < sizeof(at_calls) / sizeof(*at_calls); i++)
		ret = allow_on_fds(f, at_calls[i], dirfds, n);
	if (f && !ret && pidfd >= 0)
		ret = allow_on_fds(f, "pidfd_send_signal", &pidfd, 1);
	if (ret) {
		seccomp_release(f);
		errno = -ret;
		return -1;
	}
	ret = load(f);
	if (ret)
		errno = -ret;
	return ret ? -1 : 0;
}

/**
 * seccomp_check_lists() - count names this architecture doesn't know
 * @lists:	NULL-terminated name lists
 * @n:		how many
 * @unknown:	set to the count
 *
 * For the tests: a typo in a list would silently allow nothing.
 *
 * Return: the number of names in all lists
 */
int seccomp_check_lists(const char *const *const *lists, size_t n,
                        unsigned int *unknown)
{
	int total = 0;

	*unknown = 0;
	for (size_t i = 0; i < n; i++)
		for (const char *const *l = lists[i]; *l; l++, total++)
			if (seccomp_syscall_resolve_name(*l) == __NR_SCMP_ERROR)
				(*unknown)++;
	return total;
}
