// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the seccomp allow-list: names, and what it kills */

#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <seccomp.h>

#include "driver/seccomp.h"
#include "tests/unit/unit.h"

static const char *const *const lists[] = {
        api_syscalls,     clock_syscalls,   seed_syscalls,      dns_syscalls,
        fdlimit_syscalls, hostfwd_syscalls, lifecycle_syscalls, log_syscalls,
        loop_syscalls,    nssock_syscalls,  pcap_syscalls,      ping_syscalls,
        run_syscalls,     splice_syscalls,  tapio_syscalls,     tcp_syscalls,
        udp_syscalls,
};

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

	CHECK(seccomp_check_lists(&unknown) > 40);
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

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		for (size_t j = 0; j < sizeof(pairs) / sizeof(pairs[0]); j++)
			CHECK(!listed(lists[i], pairs[j][0]) ||
			      listed(lists[i], pairs[j][1]));
	for (size_t j = 0; j < sizeof(pairs) / sizeof(pairs[0]); j++)
		CHECK(seccomp_syscall_resolve_name_arch(SCMP_ARCH_AARCH64,
		                                        pairs[j][1]) >= 0);
}

/**
 * filtered_child() - fork, load tapir's filter, then run @body
 * @body:	what the child does after the filter is on; it returns
 *
 * Return: the child's wait status
 */
static int filtered_child(void (*body)(void))
{
	int status = 0;
	pid_t pid = fork();

	if (!pid) {
		if (seccomp_apply())
			_exit(3);
		body();
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return status;
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

const struct unit_case unit_cases[] = {
        {"every name in the allow-lists resolves", test_names_resolve},
        {"lists naming a call aarch64 lacks name its successor too",
         test_aarch64_successors},
        {"filtered: allowed calls work, getcpu() dies of SIGSYS",
         test_kills_outside},
        {"filtered: mmap() with PROT_EXEC dies of SIGSYS", test_no_exec_memory},
        {NULL, NULL},
};
