// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: a context whose tap is one end of a socketpair */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "driver/front/cli.h"
#include "driver/flow/flow.h"
#include "driver/stack/frag.h"
#include "driver/udp/udp.h"
#include "fakectx.h"

/**
 * fake_ctx_init() - a context for 10.0.2.0/24 (and fd00::/64), MTU 1500,
 *		     as loop_prepare() derives it, without namespaces or loop
 * @c:		context to fill
 * @o:		options to fill, kept by @c
 * @ipv6:	as --enable-ipv6
 * @guest_mac:	the guest's MAC
 *
 * The tap is an AF_UNIX datagram socketpair: each frame tapir writes to
 * the guest arrives as one datagram at the returned end. Aborts on failure.
 *
 * Return: the test's end of the socketpair
 */
int fake_ctx_init(struct ctx *c, struct opts *o, bool ipv6,
                  const uint8_t guest_mac[6])
{
	int sv[2], big = 1 << 20;

	memset(o, 0, sizeof(*o));
	memset(c, 0, sizeof(*c));
	o->mtu = 1500;
	o->net.s_addr = htonl(0x0a000200);
	o->prefix = 24;
	cli_derive_addresses(o);
	o->detach_fd = -1;
	o->ipv6 = ipv6;
	o->queues = 1;
	c->o = o;
	c->target_pidfd = -1;
	c->spare_fd = -1;
	ctx_set_addresses(c);
	memcpy(c->guest_mac, guest_mac, 6);
	c->tap.mtu = 1500;
	c->tap.queues = 1;
	/* As a kernel with all of them: frames with vnet headers may use
	 * any offload tapir asks for.
	 */
	c->tap.offloads =
	        TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_USO4 | TUN_F_USO6;
	for (int i = 0; i < TAPIR_MAX_QUEUES; i++)
		c->tapfd[i] = -1;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv))
		abort();
	/* Room for a burst of replies between two reads. */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	c->tapfd[0] = sv[0];
	return sv[1];
}

/**
 * fake_ctx_close() - close both ends of the socketpair
 * @c:		context from fake_ctx_init()
 * @peer:	the test's end
 */
void fake_ctx_close(struct ctx *c, int peer)
{
	close(c->tapfd[0]);
	c->tapfd[0] = -1;
	close(peer);
}

/**
 * fake_ctx_udp_open() - an event loop, the flow table, UDP and reassembly
 *			 for a context whose addresses and tap are set
 * @c:		context
 *
 * Return: 0 on success
 */
int fake_ctx_udp_open(struct ctx *c)
{
	c->base = event_base_new();
	if (!c->base || flow_init(c) || udp_init(c) || frag_init(c))
		return -1;
	return 0;
}

/**
 * fake_ctx_udp_close() - release fake_ctx_udp_open()
 * @c:		context
 */
void fake_ctx_udp_close(struct ctx *c)
{
	udp_cleanup(c);
	flow_cleanup(c);
	frag_cleanup(c);
	event_base_free(c->base);
	c->base = NULL;
}
