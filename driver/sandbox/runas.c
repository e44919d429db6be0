// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - started as root, served as nobody
 *
 * tapir parses every frame of an untrusted container. Run by the real
 * root (sudo tapir run, rootful podman's pasta), a sandbox alone is not
 * enough: uid 0 owns /etc/shadow and the SSH host keys, which the new
 * root's /etc shows, and reading them needs no capability. So, as pasta
 * does, tapir serves as nobody (65534:65534) once set up, keeping only
 * CAP_NET_BIND_SERVICE, and `tapir run`'s command runs as nobody too (root
 * in its own namespaces), so that tapir can still signal it.
 *
 * Root inside a user namespace (podman's rootless one) is the user, not
 * the real root: nothing changes there.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "driver/core/log.h"
#include "driver/sandbox/runas.h"

/* Debian's and most distributions' nobody and nogroup. */
#define NOBODY_UID 65534
#define NOBODY_GID 65534

/**
 * initial_userns() - whether we run in the initial user namespace
 *
 * Its uid_map maps every id to itself; any other namespace's maps fewer.
 *
 * Return: true if so, or if the map can't be read (no /proc: the safe side)
 */
static bool initial_userns(void)
{
	unsigned long first, lower, count;
	FILE *f = fopen("/proc/self/uid_map", "re");
	int n;

	if (!f)
		return true;
	n = fscanf(f, "%lu %lu %lu", &first, &lower, &count);
	fclose(f);
	return n != 3 || (first == 0 && lower == 0 && count == 4294967295UL);
}

/**
 * runas_default() - serve as nobody if started by the real root
 * @o:		options: runas, runas_uid, runas_gid set unless given already
 * @quiet:	say nothing (pasta's --quiet)
 */
void runas_default(struct opts *o, bool quiet)
{
	if (o->runas || geteuid() != 0 || !initial_userns())
		return;
	o->runas = true;
	o->runas_uid = NOBODY_UID;
	o->runas_gid = NOBODY_GID;
	if (!quiet)
		info_msg("started as root: serving as nobody (%u:%u)",
		         (unsigned int)o->runas_uid,
		         (unsigned int)o->runas_gid);
}

/**
 * runas_switch() - become o->runas_uid and o->runas_gid, with no other
 *		    group, the permitted capabilities kept
 * @o:		options
 *
 * The caller raises what it keeps of the permitted set again. A change of
 * uid clears the parent-death signal, which a caller that runs tapir as
 * root may rely on (rootlesskit's children have SIGKILL): it is set again,
 * and if the parent died meanwhile tapir dies of it now.
 *
 * Return: 0 on success (or nothing to do), -1 after one error line
 */
int runas_switch(const struct opts *o)
{
	pid_t parent = getppid();
	int pdeath = 0;

	if (!o->runas)
		return 0;
	if (prctl(PR_GET_PDEATHSIG, &pdeath, 0, 0, 0) ||
	    prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)) {
		err_errno(errno, "keep capabilities through the uid change");
		return -1;
	}
	if (setgroups(0, NULL) ||
	    setresgid(o->runas_gid, o->runas_gid, o->runas_gid) ||
	    setresuid(o->runas_uid, o->runas_uid, o->runas_uid)) {
		err_errno(errno, "serve as uid %u gid %u",
		          (unsigned int)o->runas_uid,
		          (unsigned int)o->runas_gid);
		return -1;
	}
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0))
		debug_msg("prctl(PR_SET_KEEPCAPS, 0): %s", strerror(errno));
	if (pdeath && prctl(PR_SET_PDEATHSIG, pdeath, 0, 0, 0)) {
		err_errno(errno, "set the parent-death signal again");
		return -1;
	}
	if (pdeath && getppid() != parent)
		raise(pdeath);
	return 0;
}
