// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - what the running kernel has, probed at start: TCP SO_PEEK_OFF
 *
 * Users run kernels from 5.10 on; a feature newer than that is probed
 * here, on the host side, once, and the layers that use it (TCP) and the
 * ones that report it (--version, get_info) read the answer.
 */

#define _GNU_SOURCE
#include <stdbool.h>
#include <unistd.h>
#include <sys/socket.h>

#include "driver/host/probe.h"

/**
 * probe_tcp_peek_off() - whether this kernel has SO_PEEK_OFF for TCP
 * @family:	AF_INET or AF_INET6
 *
 * Linux added it in 6.10 for IPv4 and in 6.12 for IPv6; before, the
 * setsockopt() fails with EOPNOTSUPP and MSG_PEEK always starts at the
 * head of the receive queue.
 *
 * Return: true if a TCP socket of @family takes the option
 */
bool probe_tcp_peek_off(int family)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), zero = 0;
	bool ok;

	if (fd < 0)
		return false;
	ok = !setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero));
	close(fd);
	return ok;
}

/**
 * probe_peek_mode() - how host data is peeked, for --version and get_info
 * @peek_off:	SO_PEEK_OFF is available for the family
 *
 * Return: "peek-offset" (SO_PEEK_OFF) or "discard" (each peek re-reads the
 *	   bytes in flight into a discard buffer)
 */
const char *probe_peek_mode(bool peek_off)
{
	return peek_off ? "peek-offset" : "discard";
}
