// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test shim: make this kernel refuse what an older one lacks
 *
 * LD_PRELOAD=oldkernel.so, with TAPIR_OLDKERNEL=X.Y naming the kernel to
 * imitate (default 5.10, the oldest tapir supports). Each call below fails
 * exactly as it does on a kernel older than the feature, so the kernel's
 * own behaviour afterwards is that of the old kernel too:
 *
 * - setsockopt(SOL_SOCKET, SO_PEEK_OFF) on a TCP socket: EOPNOTSUPP before
 *   6.10 for IPv4 (commit 05ea491641d3 "tcp: add support for SO_PEEK_OFF
 *   socket option") and before 6.12 for IPv6 (be9a4fb831b8, which added
 *   the forgotten TCPv6 half); the socket's peek offset stays disabled, so
 *   MSG_PEEK reads from the head of the receive queue, as it always did;
 * - ioctl(TUNSETOFFLOAD) with TUN_F_USO4 or TUN_F_USO6: EINVAL before 6.2,
 *   whose tun driver refuses any flag it does not know.
 *
 * Every other call goes to the real function untouched. tapir's own
 * report (--version, get_info) shows the shim took effect.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_tun.h>

#ifndef SO_PEEK_OFF
#define SO_PEEK_OFF 42
#endif
#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#endif
#ifndef TUN_F_USO6
#define TUN_F_USO6 0x40
#endif

/**
 * kernel_older_than() - whether the imitated kernel predates @major.@minor
 * @major:	major version of the feature's first kernel
 * @minor:	its minor version
 *
 * Return: true if the feature must look missing
 */
static int kernel_older_than(int major, int minor)
{
	const char *v = getenv("TAPIR_OLDKERNEL");
	int ma = 5, mi = 10;

	if (v && *v && sscanf(v, "%d.%d", &ma, &mi) != 2)
		ma = 5, mi = 10;
	return ma < major || (ma == major && mi < minor);
}

/**
 * tcp_family() - the address family of a TCP socket
 * @fd:		file descriptor
 *
 * Return: AF_INET or AF_INET6 for TCP sockets, 0 for anything else
 */
static int tcp_family(int fd)
{
	int proto = 0, domain = 0;
	socklen_t len = sizeof(proto);

	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) ||
	    proto != IPPROTO_TCP)
		return 0;
	len = sizeof(domain);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
		return 0;
	return domain;
}

/**
 * peek_off_missing() - whether SO_PEEK_OFF on @fd must fail
 * @fd:		socket
 *
 * Return: 1 if the imitated kernel lacks it for this socket
 */
static int peek_off_missing(int fd)
{
	switch (tcp_family(fd)) {
	case AF_INET:
		return kernel_older_than(6, 10);
	case AF_INET6:
		return kernel_older_than(6, 12);
	default:
		return 0;
	}
}

/**
 * setsockopt() - the libc function, refusing SO_PEEK_OFF on TCP where the
 *		  imitated kernel lacks it
 * @fd:		socket
 * @level:	option level
 * @name:	option name
 * @val:	option value
 * @len:	its length
 *
 * Return: as setsockopt(2)
 */
int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int (*real)(int, int, int, const void *, socklen_t);

	if (level == SOL_SOCKET && name == SO_PEEK_OFF &&
	    peek_off_missing(fd)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (!real)
		real = (int (*)(int, int, int, const void *, socklen_t))dlsym(
		        RTLD_NEXT, "setsockopt");
	return real(fd, level, name, val, len);
}

/**
 * ioctl() - the libc function, refusing USO in TUNSETOFFLOAD before 6.2
 * @fd:		file descriptor
 * @req:	request
 *
 * Return: as ioctl(2)
 */
int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == TUNSETOFFLOAD &&
	    ((unsigned long)arg & (TUN_F_USO4 | TUN_F_USO6)) &&
	    kernel_older_than(6, 2)) {
		errno = EINVAL;
		return -1;
	}
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT,
		                                               "ioctl");
	return real(fd, req, arg);
}
