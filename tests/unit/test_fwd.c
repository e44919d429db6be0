// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: which guest address a forward's client reaches, and
 * how the client appears to the guest (flow/fwd.c)
 */

#include <string.h>
#include <arpa/inet.h>

#include "driver/core/ctx.h"
#include "driver/core/inany.h"
#include "driver/flow/fwd.h"
#include "tests/unit/unit.h"

static struct opts o;
static struct ctx c;

/**
 * setup() - a context as ctx_set_addresses() leaves it: 10.0.2.0/24,
 *	     IPv6 on or off, configured by tapir or not
 * @ipv6:	-6
 * @configure:	--configure (tapir gave the guest fd00::100)
 */
static void setup(bool ipv6, bool configure)
{
	memset(&o, 0, sizeof(o));
	memset(&c, 0, sizeof(c));
	o.ipv6 = ipv6;
	o.configure = configure;
	o.mtu = 1500;
	o.prefix = 24;
	inet_pton(AF_INET, "10.0.2.100", &o.guest4);
	inet_pton(AF_INET, "10.0.2.2", &o.gw4);
	inet_pton(AF_INET6, "fd00::100", &o.guest6);
	o.prefix6 = 64;
	c.o = &o;
	ctx_set_addresses(&c);
}

/**
 * peer() - a client's address as accept() or recvfrom() gives it
 * @sa:		filled
 * @addr:	IPv4 or IPv6 literal; "::ffff:..." for a v4-mapped one
 */
static void peer(union sockaddr_inany *sa, const char *addr)
{
	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, addr, &sa->sa4.sin_addr) == 1) {
		sa->sa4.sin_family = AF_INET;
		sa->sa4.sin_port = htons(40000);
		return;
	}
	sa->sa6.sin6_family = AF_INET6;
	sa->sa6.sin6_port = htons(40000);
	inet_pton(AF_INET6, addr, &sa->sa6.sin6_addr);
}

/**
 * target_is() - the guest address @client reaches through a forward to
 *		 @gaddr, compared with @want
 * @client:	client address
 * @gaddr:	the forward's guest address, IPv4 literal
 * @want:	expected target, IPv4 or IPv6 literal
 *
 * Return: true if it is @want
 */
static bool target_is(const char *client, const char *gaddr, const char *want)
{
	struct in6_addr g, dst, w;
	union sockaddr_inany sa;
	struct in_addr v4;

	peer(&sa, client);
	inet_pton(AF_INET, gaddr, &v4);
	inany_from_v4(&g, v4);
	if (inet_pton(AF_INET, want, &v4) == 1)
		inany_from_v4(&w, v4);
	else
		inet_pton(AF_INET6, want, &w);
	fwd_guest_target(&c, &sa, &g, &dst);
	return inany_equal(&dst, &w);
}

/* An IPv6 client reaches the guest's IPv6 address, an IPv4 one (or one
 * v4-mapped by a dual-stack socket) its IPv4 address.
 */
static void test_family_kept(void)
{
	setup(true, true);
	CHECK(target_is("::1", "10.0.2.100", "fd00::100"));
	CHECK(target_is("fd18::1", "10.0.2.100", "fd00::100"));
	CHECK(target_is("127.0.0.1", "10.0.2.100", "10.0.2.100"));
	CHECK(target_is("::ffff:127.0.0.1", "10.0.2.100", "10.0.2.100"));
}

/* Without IPv6, or where tapir did not give the guest its address, or to a
 * guest address the caller named, every client reaches the IPv4 one.
 */
static void test_family_not_kept(void)
{
	setup(false, true);
	CHECK(target_is("::1", "10.0.2.100", "10.0.2.100"));
	setup(true, false);
	CHECK(target_is("::1", "10.0.2.100", "10.0.2.100"));
	setup(true, true);
	CHECK(target_is("::1", "10.0.2.7", "10.0.2.7"));
	o.mtu = 1000; /* no IPv6 below its minimum MTU */
	ctx_set_addresses(&c);
	CHECK(target_is("::1", "10.0.2.100", "10.0.2.100"));
}

/* A guest with IPv6 only is reached at it from both families. */
static void test_ipv6_only(void)
{
	setup(true, true);
	o.ipv6_only = true;
	CHECK(target_is("::1", "10.0.2.100", "fd00::100"));
	CHECK(target_is("127.0.0.1", "10.0.2.100", "fd00::100"));
}

/* Loopback clients, and the host's own copied IPv6 address, appear as the
 * gateway; other clients keep their address.
 */
static void test_source(void)
{
	union sockaddr_inany sa;
	struct in6_addr a, want;
	uint16_t port;

	setup(true, true);
	peer(&sa, "::1");
	fwd_guest_source(&c, &sa, &a, &port);
	CHECK(inany_equal(&a, &c.gw6) && port == 40000);
	peer(&sa, "fd18::7");
	fwd_guest_source(&c, &sa, &a, &port);
	inet_pton(AF_INET6, "fd18::7", &want);
	CHECK(inany_equal(&a, &want));
	o.copy6 = true;
	inet_pton(AF_INET6, "fd18::1", &o.guest6);
	inet_pton(AF_INET6, "fd18::fe", &o.gw6);
	o.map6.own = o.guest6; /* as pasta's front end sets it */
	ctx_set_addresses(&c);
	peer(&sa, "fd18::1");
	fwd_guest_source(&c, &sa, &a, &port);
	CHECK(inany_equal(&a, &o.gw6));
}

const struct unit_case unit_cases[] = {
        {"fwd: a forward's client keeps its family", test_family_kept},
        {"fwd: IPv4 where the guest's IPv6 is not known", test_family_not_kept},
        {"fwd: a guest with IPv6 only, from both families", test_ipv6_only},
        {"fwd: loopback and the host's own address appear as the gateway",
         test_source},
        {NULL, NULL},
};
