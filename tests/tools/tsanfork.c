// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test shim: fork() that leaves a TSan child single-threaded
 *
 * LD_PRELOAD=tsanfork.so, by `make check-tsan` (hack/check-tsan.sh) into
 * the ThreadSanitizer build of tapir only.
 *
 * In the child of a fork() from a single-threaded process, the TSan
 * runtimes of gcc 12 and clang 14 start their background thread
 * (ForkChildAfter() -> StartBackgroundThread()). That child is then
 * multithreaded, and the kernel refuses it unshare(CLONE_NEWUSER) and
 * setns() into a user namespace with EINVAL: `tapir run` would fail with
 * "run: create user and network namespaces: Invalid argument" before any
 * test ran. So while the process has one thread, fork() here is glibc's
 * _Fork(), which runs no atfork handlers, TSan's among them: the child
 * keeps the one thread it really has. With one thread no lock can be held
 * at the fork, which is what the skipped handlers guard against. With
 * more threads (the datapath threads of --queues N) the real fork() runs,
 * whose TSan handler starts no thread in that case.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/**
 * single_threaded() - whether this process has exactly one thread
 *
 * Return: 1 if /proc/self/status says so, 0 otherwise or if unreadable
 */
static int single_threaded(void)
{
	char line[128];
	int n = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	}
	fclose(f);
	return n == 1;
}

/**
 * fork() - _Fork() when single-threaded, else the next fork() in line
 *
 * Return: as fork(2)
 */
pid_t fork(void)
{
	pid_t (*next)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");

	if (single_threaded() || !next)
		return _Fork();
	return next();
}
