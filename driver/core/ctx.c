// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - the execution context: what is derived from the options */

#include <arpa/inet.h>

#include "driver/core/ctx.h"

/**
 * ctx_set_addresses() - take the virtual network's addresses from the options
 * @c:		context whose options are set
 *
 * IPv4 as the options resolved it (cli_derive_addresses(), or pasta's -a,
 * -g and --dns-forward); IPv6 is fixed at fd00::/64 whatever --cidr says,
 * unless pasta mode copied the host's or took -a and -g, which has a DNS
 * forwarder of ours only where --dns-forward named one.
 * The guest's IPv6 address is known only where tapir gave it (an MTU
 * below IPv6's minimum leaves the interface without IPv6).
 */
void ctx_set_addresses(struct ctx *c)
{
	c->guest4 = c->o->guest4;
	c->guest6 =
	        c->o->ipv6 && c->o->configure && c->o->mtu >= TAPIR_IPV6_MTU_MIN
	                ? c->o->guest6
	                : in6addr_any;
	c->gw4 = c->o->gw4;
	c->dns4 = c->o->dns4;
	c->mask4.s_addr = htonl(~0U << (32 - c->o->prefix));
	if (c->o->copy6) {
		c->gw6 = c->o->gw6;
		c->dns6 = c->o->dns6;
		return;
	}
	inet_pton(AF_INET6, "fd00::2", &c->gw6);
	if (IN6_IS_ADDR_UNSPECIFIED(&c->o->dns6))
		inet_pton(AF_INET6, "fd00::3", &c->dns6);
	else
		c->dns6 = c->o->dns6;
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

/**
 * ctx_queue_end() - one past the last tap queue @c reads and writes
 * @c:		context
 *
 * Return: the end of its range, within TAPIR_MAX_QUEUES
 */
unsigned int ctx_queue_end(const struct ctx *c)
{
	unsigned int end = ctx_queue_first(c) + ctx_queue_count(c);

	return end < TAPIR_MAX_QUEUES ? end : TAPIR_MAX_QUEUES;
}
