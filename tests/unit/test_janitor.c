// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the janitor: the files removed at exit, by a
 * process that holds their directories so that tapir holds none
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "driver/sandbox/janitor.h"
#include "tests/unit/unit.h"

/**
 * struct scratch - a temporary directory with a subdirectory and a file
 * @top:	the directory
 * @sub:	top/sub, as tapir run's tapir-run.XXXXXX
 * @file:	top/sub/resolv.conf
 * @sock:	top/api.sock, a plain file standing for the API socket
 */
struct scratch {
	char top[64];
	char sub[80];
	char file[96];
	char sock[80];
};

/**
 * touch() - create an empty file
 * @path:	its path
 *
 * Return: true on success
 */
static bool touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/**
 * scratch_make() - create the scratch tree
 * @t:		filled
 *
 * Return: true on success
 */
static bool scratch_make(struct scratch *t)
{
	snprintf(t->top, sizeof(t->top), "/tmp/tapir-janitor.XXXXXX");
	if (!mkdtemp(t->top))
		return false;
	snprintf(t->sub, sizeof(t->sub), "%s/sub", t->top);
	snprintf(t->file, sizeof(t->file), "%s/resolv.conf", t->sub);
	snprintf(t->sock, sizeof(t->sock), "%s/api.sock", t->top);
	return !mkdir(t->sub, 0700) && touch(t->file) && touch(t->sock);
}

/**
 * scratch_remove() - remove whatever is left of the scratch tree
 * @t:		tree
 */
static void scratch_remove(const struct scratch *t)
{
	unlink(t->file);
	unlink(t->sock);
	rmdir(t->sub);
	rmdir(t->top);
}

/**
 * exists() - whether @path exists
 * @path:	path
 *
 * Return: true if lstat() finds it
 */
static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/**
 * dir_fds() - directory fds this process holds
 *
 * Return: their count
 */
static int dir_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		struct stat st;
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd != dirfd(d) && !fstat(fd, &st) &&
		    S_ISDIR(st.st_mode))
			n++;
	}
	closedir(d);
	return n;
}

/**
 * register_all() - have the file, its directory and the socket removed
 * @t:		tree
 *
 * Return: true if all three registered
 */
static bool register_all(const struct scratch *t)
{
	return !janitor_remove_at_exit(t->file, false) &&
	       !janitor_remove_at_exit(t->sub, true) &&
	       !janitor_remove_at_exit(t->sock, false);
}

/*
 * Not isolated, there is no janitor: tapir removes the files itself, the
 * file before the directory that holds it.
 */
static void test_in_process(void)
{
	struct scratch t = {0};

	CHECK(scratch_make(&t));
	CHECK(register_all(&t));
	janitor_finish();
	CHECK(!exists(t.file) && !exists(t.sub) && !exists(t.sock));
	/* A second call has nothing left to do. */
	janitor_finish();
	scratch_remove(&t);
}

/*
 * With a janitor, the caller holds no directory fd once it runs, and the
 * files are gone when janitor_finish() returns.
 */
static void test_janitor_removes(void)
{
	int before = dir_fds();
	struct scratch t = {0};

	CHECK(scratch_make(&t));
	CHECK(register_all(&t));
	CHECK(dir_fds() == before + 3);
	CHECK(!janitor_start(true));
	CHECK(dir_fds() == before);
	CHECK(exists(t.file) && exists(t.sock));
	janitor_finish();
	CHECK(!exists(t.file) && !exists(t.sub) && !exists(t.sock));
	scratch_remove(&t);
}

/*
 * A socket file another instance put in place meanwhile (a new inode at
 * the same path) is not ours to remove.
 */
static void test_replaced_file_kept(void)
{
	char tmp[96];
	struct scratch t = {0};

	CHECK(scratch_make(&t));
	CHECK(!janitor_remove_at_exit(t.sock, false));
	CHECK(!janitor_start(true));
	snprintf(tmp, sizeof(tmp), "%s/other", t.top);
	CHECK(touch(tmp) && !rename(tmp, t.sock));
	janitor_finish();
	CHECK(exists(t.sock));
	scratch_remove(&t);
}

/*
 * tapir killed (here: a process that registered, started the janitor and
 * died without a word): the janitor sees EOF and removes the files.
 */
static void test_killed_tapir(void)
{
	struct timespec pause = {0, 20 * 1000 * 1000};
	struct scratch t = {0};
	int status, i;
	pid_t pid;

	CHECK(scratch_make(&t));
	pid = fork();
	if (!pid) {
		if (!register_all(&t) || janitor_start(true))
			_exit(1);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (i = 0; i < 100 && exists(t.sock); i++)
		nanosleep(&pause, NULL);
	CHECK(!exists(t.file) && !exists(t.sub) && !exists(t.sock));
	scratch_remove(&t);
}

const struct unit_case unit_cases[] = {
        {"not isolated: the files go at exit, file before directory",
         test_in_process},
        {"janitor: the caller keeps no directory fd, the files go at exit",
         test_janitor_removes},
        {"janitor: a file replaced meanwhile stays", test_replaced_file_kept},
        {"janitor: the files go even when tapir dies without a word",
         test_killed_tapir},
        {NULL, NULL},
};
