// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - --outbound-addr{,6}: the host address new host sockets bind to */

#include <errno.h>
#include <sys/socket.h>

#include "driver/core/inany.h"
#include "driver/host/outbound.h"

/**
 * outbound_bind() - bind a new host socket to --outbound-addr{,6}
 * @c:		context
 * @fd:		unbound socket
 * @family:	its family
 *
 * Return: 0 on success or when no outbound address applies, -errno
 */
int outbound_bind(const struct ctx *c, int fd, int family)
{
	union sockaddr_inany sa = {0};
	socklen_t len;

	if (family == AF_INET && c->o->outbound4_set) {
		sa.sa4.sin_family = AF_INET;
		sa.sa4.sin_addr = c->o->outbound4;
		len = sizeof(sa.sa4);
	} else if (family == AF_INET6 && c->o->outbound6_set) {
		sa.sa6.sin6_family = AF_INET6;
		sa.sa6.sin6_addr = c->o->outbound6;
		len = sizeof(sa.sa6);
	} else {
		return 0;
	}
	return bind(fd, &sa.sa, len) ? -errno : 0;
}
