// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for closing inherited fds: the named ones stay, with
 * close_range() and without it
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "driver/front/cli.h"
#include "driver/sandbox/fds.h"
#include "tests/unit/unit.h"

/**
 * is_open() - whether @fd is open
 * @fd:		fd
 *
 * Return: true if so
 */
static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/**
 * close_except_body() - open fds 3..12, keep 4, 7 and 12 (out of order,
 *			 with a duplicate and a negative), check the rest
 *			 closed
 */
static void close_except_body(void)
{
	const int keep[] = {12, 4, -1, 7, 4, 0, 1, 2};
	int fd = -1;

	for (int i = 3; i <= 12; i++) {
		fd = open("/dev/null", O_RDONLY);
		if (fd != i && dup2(fd, i) != i)
			CHECK(!"dup2");
	}
	fds_close_except(keep, sizeof(keep) / sizeof(keep[0]));
	for (int i = 0; i <= 14; i++)
		CHECK(is_open(i) == (i <= 2 || i == 4 || i == 7 || i == 12));
}

static void close_except_fallback_body(void)
{
	/* A kernel before 5.9, or a filter that refuses close_range(). */
	CHECK(!unit_fail_syscall(__NR_close_range, -1, ENOSYS));
	close_except_body();
}

/*
 * Only the fds named stay open; the caller's others are closed, by
 * close_range() and, where it fails, one by one.
 */
static void test_close_except(void)
{
	CHECK(unit_netns_run(close_except_body));
	CHECK(unit_netns_run(close_except_fallback_body));
}

static void close_inherited_body(void)
{
	static struct opts o;
	int p[2];

	cli_opts_defaults(&o, CLI_ATTACH);
	CHECK(!pipe(p));
	o.ready_fd = p[1];
	o.exit_fd = dup(p[0]);
	CHECK(dup2(p[0], 30) == 30);
	/* A namespace passed as an fd and named by its path (bubblejail). */
	CHECK(dup2(p[0], 31) == 31 && dup2(p[0], 32) == 32);
	snprintf(o.netns_path, sizeof(o.netns_path), "/proc/self/fd/31");
	snprintf(o.userns_path, sizeof(o.userns_path), "/dev/fd/32");
	fds_close_inherited(&o, p[0]);
	CHECK(is_open(o.ready_fd) && is_open(o.exit_fd) && is_open(p[0]));
	CHECK(!is_open(30));
	CHECK(is_open(31) && is_open(32));
}

/*
 * At start, the ready and exit fds the command line names stay, and so do
 * namespaces named as /proc/self/fd/N or /dev/fd/N; another fd the caller
 * passed (x=$(tapir ... 3>&1)) does not.
 */
static void test_close_inherited(void)
{
	CHECK(unit_netns_run(close_inherited_body));
}

const struct unit_case unit_cases[] = {
        {"fds: only those named stay open, with close_range() or without",
         test_close_except},
        {"fds: the ready and exit fds and namespace fds named stay, the "
         "caller's others go",
         test_close_inherited},
        {NULL, NULL},
};
