// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - the execution context: what is derived from the options */

#include <arpa/inet.h>

#include "ctx.h"

/**
 * ctx_set_addresses() - derive the virtual network's addresses from --cidr
 * @c:		context whose options are set
 *
 * Guest net+100, gateway net+2, DNS net+3, as slirp4netns; IPv6 is fixed
 * at fd00::/64 whatever --cidr says.
 */
void ctx_set_addresses(struct ctx *c)
{
	uint32_t net = ntohl(c->o->net.s_addr);

	c->guest4.s_addr = htonl(net + 100);
	c->gw4.s_addr = htonl(net + 2);
	c->dns4.s_addr = htonl(net + 3);
	c->mask4.s_addr = htonl(~0U << (32 - c->o->prefix));
	inet_pton(AF_INET6, "fd00::2", &c->gw6);
	inet_pton(AF_INET6, "fd00::3", &c->dns6);
}

/**
 * ctx_queue_first() - the first tap queue a context reads and writes
 * @c:		context
 *
 * Return: its thread's queue, or 0 when one thread serves every queue
 */
unsigned int ctx_queue_first(const struct ctx *c)
{
	return c->threads ? c->thread : 0;
}

/**
 * ctx_queue_count() - how many tap queues a context reads and writes
 * @c:		context
 *
 * Return: 1 for a thread of a set, else every queue of the tap
 */
unsigned int ctx_queue_count(const struct ctx *c)
{
	return c->threads ? 1 : c->tap.queues;
}
