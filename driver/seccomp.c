// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - --enable-seccomp: only the syscalls tapir makes once running
 *
 * An allow-list, as pasta keeps (slirp4netns blocks a list instead): the
 * union of what each module says it calls after set-up (seccomp.h), built
 * with libseccomp for the machine's architecture. Anything else, and any
 * syscall through another ABI (x86's int 0x80, x32), kills the process.
 * New executable memory is refused too: mmap() and mprotect() are allowed
 * only without PROT_EXEC.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <seccomp.h>

#include "isolation.h"
#include "log.h"
#include "seccomp.h"

/* What any running C program with glibc and libevent needs. */
static const char *const process_syscalls[] = {
        "exit",         "exit_group",     "brk",
        "munmap",       "mremap",         "madvise",
        "rt_sigreturn", "rt_sigprocmask", "restart_syscall",
        "futex",        "clock_gettime",  "gettimeofday",
        "time",         "getrandom",      NULL,
};

/* The sanitizer runtimes of `make check-asan` and `make check-tsan` at
 * exit and in reports (LeakSanitizer stops the world with a ptrace()ing
 * thread; ThreadSanitizer's background thread sleeps): test builds only.
 */
static const char *const sanitizer_syscalls[] = {
        "clone",
        "clone3",
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
        "openat",
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

static const char *const *const tapir_lists[] = {
        process_syscalls, api_syscalls,       clock_syscalls,
        seed_syscalls,    dns_syscalls,       fdlimit_syscalls,
        hostfwd_syscalls, lifecycle_syscalls, log_syscalls,
        loop_syscalls,    nssock_syscalls,    pcap_syscalls,
        ping_syscalls,    run_syscalls,       splice_syscalls,
        tapio_syscalls,   tcp_syscalls,       thread_syscalls,
        udp_syscalls,
};

/* The namespace socket helper: it only makes sockets and passes them on. */
static const char *const nssock_helper_syscalls[] = {
        "read", "socket", "sendmsg", "close", "write", NULL,
};

/**
 * allow_list() - allow every syscall of a NULL-terminated list
 * @f:		filter
 * @list:	names
 *
 * Names the architecture lacks (poll on aarch64, say) are skipped: the
 * lists name both a call and its newer form where glibc may use either.
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_list(scmp_filter_ctx f, const char *const *list)
{
	for (; *list; list++) {
		int nr = seccomp_syscall_resolve_name(*list), ret;

		if (nr == __NR_SCMP_ERROR)
			continue;
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 0);
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
 * flags must then make a thread: no fork, no new namespace. A thread
 * names itself with prctl(PR_SET_NAME), the one prctl() allowed. Builds
 * with sanitizers allow these outright (sanitizer_syscalls).
 *
 * Return: 0 on success, -errno on failure
 */
static int allow_threads(scmp_filter_ctx f)
{
	int ret;

	if (isolation_sanitized())
		return 0;
	ret = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (!ret)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
		                       SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD,
		                               CLONE_THREAD));
	if (!ret)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
		                       SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME, 0));
	return ret;
}

/**
 * load() - build a filter from @lists and load it
 * @lists:	NULL-terminated name lists
 * @n:		number of lists
 * @threads:	the process may start threads (allow_threads())
 *
 * Return: 0 on success, -errno on failure
 */
static int load(const char *const *const *lists, size_t n, bool threads)
{
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int ret;

	if (!f)
		return -ENOMEM;
	ret = seccomp_attr_set(f, SCMP_FLTATR_ACT_BADARCH,
	                       SCMP_ACT_KILL_PROCESS);
	for (size_t i = 0; !ret && i < n; i++)
		ret = allow_list(f, lists[i]);
	if (!ret && isolation_sanitized())
		ret = allow_list(f, sanitizer_syscalls);
	if (!ret)
		ret = allow_noexec_memory(f);
	if (!ret && threads)
		ret = allow_threads(f);
	if (!ret)
		ret = seccomp_load(f);
	seccomp_release(f);
	return ret;
}

/**
 * seccomp_apply() - filter tapir itself, for --enable-seccomp
 *
 * Called last in set-up, before the ready fd is written.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int seccomp_apply(void)
{
	int ret = load(tapir_lists,
	               sizeof(tapir_lists) / sizeof(tapir_lists[0]), true);

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
	const char *const *const lists[] = {process_syscalls,
	                                    nssock_helper_syscalls};
	int ret = load(lists, 2, false);

	if (ret)
		errno = -ret;
	return ret ? -1 : 0;
}

/**
 * seccomp_check_lists() - count names this architecture doesn't know
 * @unknown:	set to the count
 *
 * For the tests: a typo in a list would silently allow nothing.
 *
 * Return: the number of names in all lists
 */
int seccomp_check_lists(unsigned int *unknown)
{
	int total = 0;

	*unknown = 0;
	for (size_t i = 0; i < sizeof(tapir_lists) / sizeof(tapir_lists[0]);
	     i++) {
		for (const char *const *l = tapir_lists[i]; *l; l++, total++)
			if (seccomp_syscall_resolve_name(*l) == __NR_SCMP_ERROR)
				(*unknown)++;
	}
	return total;
}
