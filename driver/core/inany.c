// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - one address type for IPv4 and IPv6: host socket addresses, and
 * text for messages
 */

#include <arpa/inet.h>

#include "driver/core/inany.h"

/**
 * sockaddr_from_inany() - build a host socket address
 * @sa:		filled
 * @salen:	filled with its length
 * @addr:	address; IPv4-mapped gives an AF_INET address
 * @port:	port, host order
 */
void sockaddr_from_inany(union sockaddr_inany *sa, socklen_t *salen,
                         const struct in6_addr *addr, uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	if (inany_is_v4(addr)) {
		sa->sa4.sin_family = AF_INET;
		sa->sa4.sin_addr = inany_v4(addr);
		sa->sa4.sin_port = htons(port);
		*salen = sizeof(sa->sa4);
	} else {
		sa->sa6.sin6_family = AF_INET6;
		sa->sa6.sin6_addr = *addr;
		sa->sa6.sin6_port = htons(port);
		*salen = sizeof(sa->sa6);
	}
}

/**
 * inany_ntop() - printable form of an address, for messages and replies
 * @a:		address (IPv4-mapped for IPv4, printed as a dotted quad)
 * @buf:	filled
 *
 * Return: @buf
 */
const char *inany_ntop(const struct in6_addr *a, char buf[INET6_ADDRSTRLEN])
{
	struct in_addr v4 = inany_v4(a);

	if (inany_is_v4(a))
		return inet_ntop(AF_INET, &v4, buf, INET6_ADDRSTRLEN);
	return inet_ntop(AF_INET6, a, buf, INET6_ADDRSTRLEN);
}
