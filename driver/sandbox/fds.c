// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - fds a process inherited: only those it names stay open
 *
 * A caller's fds leak into tapir (an `x=$(tapir pasta ... 3>&1)`, a file
 * open for writing outside the sandbox's root, a lock), and tapir's own
 * leak into the helpers it forks. Each keeps the fds it names and closes
 * the rest, at start: the caller sees EOF on its pipes as soon as it
 * would with pasta, and the sandbox holds no file from outside it.
 */

#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "driver/sandbox/fds.h"
#include "driver/core/log.h"

/**
 * kept() - whether @fd is in @keep
 * @fd:		fd
 * @keep:	fds to keep
 * @n:		how many
 *
 * Return: true if so
 */
static bool kept(long fd, const int *keep, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (keep[i] == fd)
			return true;
	return false;
}

/**
 * close_walk() - close every fd not in @keep, one by one
 * @keep:	fds to keep
 * @n:		how many
 *
 * Reads /proc/self/fd; without /proc, tries every number below the fd
 * limit. Closing an fd does not move the later entries of the listing.
 */
static void close_walk(const int *keep, size_t n)
{
	DIR *d = opendir("/proc/self/fd");
	struct rlimit rl;
	struct dirent *e;
	long max = INT_MAX;

	if (d) {
		while ((e = readdir(d))) {
			char *end;
			long fd = strtol(e->d_name, &end, 10);

			if (end != e->d_name && !*end && fd != dirfd(d) &&
			    !kept(fd, keep, n))
				close((int)fd);
		}
		closedir(d);
		return;
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)INT_MAX)
		max = (long)rl.rlim_cur;
	for (long fd = 0; fd < max; fd++)
		if (!kept(fd, keep, n))
			close((int)fd);
}

/**
 * cmp_int() - qsort() order of two ints
 * @a:		first
 * @b:		second
 *
 * Return: <0, 0 or >0
 */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/**
 * close_gaps() - close_range() over every gap between @sorted's fds
 * @sorted:	fds to keep, ascending
 * @n:		how many
 *
 * Return: 0, or -1 if close_range() failed (fds may be left open)
 */
static int close_gaps(const int *sorted, size_t n)
{
	unsigned int next = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned int fd = (unsigned int)sorted[i];

		if (fd > next && close_range(next, fd - 1, 0))
			return -1;
		next = fd + 1;
	}
	return close_range(next, ~0U, 0) ? -1 : 0;
}

/**
 * fds_close_except() - close every fd but those in @keep
 * @keep:	fds to keep, in any order; negative ones are ignored
 * @n:		how many, at most FDS_KEEP_MAX
 *
 * close_range() (Linux 5.9) over each gap between them; where it fails
 * (an older kernel, a seccomp profile that refuses it) each fd is closed
 * one by one.
 */
void fds_close_except(const int *keep, size_t n)
{
	int sorted[FDS_KEEP_MAX] = {0};
	size_t m = 0;

	for (size_t i = 0; i < n && m < FDS_KEEP_MAX; i++)
		if (keep[i] >= 0)
			sorted[m++] = keep[i];
	qsort(sorted, m, sizeof(sorted[0]), cmp_int);
	if (close_gaps(sorted, m))
		close_walk(sorted, m);
}

/**
 * fd_in_path() - the fd a path like /proc/self/fd/N or /dev/fd/N names
 * @path:	a namespace path from the command line, or empty
 *
 * A caller may pass a namespace as an open fd and name it so (bubblejail
 * does): that fd is named by the command line as much as -r is.
 *
 * Return: N, or -1 if @path names no fd
 */
static int fd_in_path(const char *path)
{
	static const char *const dirs[] = {"/proc/self/fd/", "/dev/fd/"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t len = strlen(dirs[i]);
		unsigned long fd;
		char *end;

		if (strncmp(path, dirs[i], len) ||
		    !isdigit((unsigned char)path[len]))
			continue;
		fd = strtoul(path + len, &end, 10);
		if (!*end && fd <= INT_MAX)
			return (int)fd;
	}
	return -1;
}

/**
 * fds_close_inherited() - close every fd the caller passed but did not name
 * @o:		options: its ready, exit and --pid fds stay open
 * @own:	an fd of tapir's own to keep as well, or -1
 *
 * At start, before tapir opens anything of its own but its log's fd:
 * stdio stays, as pasta's and slirp4netns's callers expect.
 */
void fds_close_inherited(const struct opts *o, int own)
{
	int logs[2];

	log_own_fds(logs);
	const int keep[] = {STDIN_FILENO,
	                    STDOUT_FILENO,
	                    STDERR_FILENO,
	                    o->ready_fd,
	                    o->exit_fd,
	                    logs[0],
	                    logs[1],
	                    o->detach_fd,
	                    o->pid_fd,
	                    own,
	                    fd_in_path(o->netns_path),
	                    fd_in_path(o->userns_path)};

	fds_close_except(keep, sizeof(keep) / sizeof(keep[0]));
}
