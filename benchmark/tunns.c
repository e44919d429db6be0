// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - benchmark helper: list tun/tap fds with their device's netns */

/*
 * tunns [PID]...
 *
 * Prints one line per open /dev/net/tun file of the given processes (all
 * processes when none are given):
 *
 *	PID FD IFNAME NETNS_INODE
 *
 * NETNS_INODE is the inode of the network namespace that holds the tap
 * device, from the TUNGETDEVNETNS ioctl on a copy of the fd taken with
 * pidfd_getfd(). Compared with `stat -L -c %i /proc/CLIENT/ns/net`, it
 * proves that this process, and no other, holds the tap that a
 * benchmark's traffic crossed; /proc/PID/fdinfo only names the device,
 * and every namespace may have its own tap0. Needs root (ptrace access
 * and CAP_NET_ADMIN over the device's namespace). A tun fd it cannot
 * inspect makes it exit 1, so that a proof built on it fails closed.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/if_tun.h>

#ifndef TUNGETDEVNETNS
#define TUNGETDEVNETNS _IO('T', 227)
#endif

/**
 * fd_is_tun() - tell whether a process's fd is open on /dev/net/tun
 * @pid:	process id
 * @fd:		file descriptor number in that process
 *
 * Return: 1 if it is, 0 if not (or if it vanished meanwhile)
 */
static int fd_is_tun(long pid, int fd)
{
	char path[64], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/fd/%d", pid, fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	return strcmp(target, "/dev/net/tun") == 0;
}

/**
 * tun_describe() - name and namespace of the tap behind another process's fd
 * @pidfd:	pidfd of the holder
 * @fd:		the fd number in the holder
 * @ifname:	filled with the interface name, IFNAMSIZ bytes
 * @ino:	filled with the inode of the device's network namespace
 *
 * Return: 0 on success, 1 if the fd is not attached to a device (or was
 * closed meanwhile), -1 with errno set on any other failure
 */
static int tun_describe(int pidfd, int fd, char *ifname, unsigned long *ino)
{
	struct ifreq ifr;
	struct stat st;
	int copy, ns, ret = -1;

	copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (copy < 0)
		return errno == EBADF ? 1 : -1;
	memset(&ifr, 0, sizeof(ifr));
	if (ioctl(copy, TUNGETIFF, &ifr) < 0) {
		/* EBADFD: opened but never attached to a device. */
		ret = errno == EBADFD ? 1 : -1;
		goto out;
	}
	ns = ioctl(copy, TUNGETDEVNETNS);
	if (ns < 0)
		goto out;
	if (fstat(ns, &st) == 0) {
		memcpy(ifname, ifr.ifr_name, IFNAMSIZ);
		ifname[IFNAMSIZ - 1] = '\0';
		*ino = (unsigned long)st.st_ino;
		ret = 0;
	}
	close(ns);
out:
	close(copy);
	return ret;
}

/**
 * scan_pid() - print every attached tun fd of one process
 * @pid:	process id
 *
 * Return: 0 on success or if the process went away, -1 if a tun fd
 * could not be inspected
 */
static int scan_pid(long pid)
{
	char path[64], ifname[IFNAMSIZ];
	struct dirent *d;
	int pidfd, ret = 0;
	unsigned long ino;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pidfd < 0) {
		closedir(dir);
		return errno == ESRCH ? 0 : -1;
	}
	while ((d = readdir(dir))) {
		int fd = atoi(d->d_name), rc;

		if (d->d_name[0] == '.' || !fd_is_tun(pid, fd))
			continue;
		rc = tun_describe(pidfd, fd, ifname, &ino);
		if (rc == 0) {
			printf("%ld %d %s %lu\n", pid, fd, ifname, ino);
		} else if (rc < 0) {
			fprintf(stderr, "tunns: pid %ld fd %d: %s\n", pid, fd,
			        strerror(errno));
			ret = -1;
		}
	}
	close(pidfd);
	closedir(dir);
	return ret;
}

/**
 * scan_all() - run scan_pid() on every process in /proc
 *
 * Return: 0 on success, -1 if some tun fd could not be inspected
 */
static int scan_all(void)
{
	struct dirent *d;
	int ret = 0;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir) {
		perror("tunns: /proc");
		return -1;
	}
	while ((d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (scan_pid(pid) < 0)
			ret = -1;
	}
	closedir(dir);
	return ret;
}

/**
 * main() - scan the given pids, or all of them
 * @argc:	argument count
 * @argv:	PID...
 *
 * Return: 0 on success, 1 if a tun fd could not be inspected, 2 on usage
 */
int main(int argc, char **argv)
{
	int ret = 0;

	if (argc == 1)
		return scan_all() ? 1 : 0;
	for (int i = 1; i < argc; i++) {
		char *end;
		long pid = strtol(argv[i], &end, 10);

		if (*end || pid <= 0) {
			fprintf(stderr, "usage: tunns [PID]...\n");
			return 2;
		}
		if (scan_pid(pid) < 0)
			ret = 1;
	}
	return ret;
}
