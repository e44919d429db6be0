// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: pasta's mappings to the host, in both IP versions
 * (flow/fwd.c; test_fwd.c has which guest address a client reaches)
 */

#include <arpa/inet.h>
#include <string.h>

#include "driver/core/inany.h"
#include "driver/flow/fwd.h"
#include "driver/stack/ip.h"
#include "tests/unit/unit.h"

static struct opts o;
static struct ctx c;

/**
 * addr() - an address of either IP version, as inany
 * @text:	dotted quad or IPv6 text
 *
 * Return: the address (IPv4 as v4-mapped)
 */
static struct in6_addr addr(const char *text)
{
	struct in6_addr a = in6addr_any;
	struct in_addr v4;

	if (inet_pton(AF_INET, text, &v4) == 1)
		inany_from_v4(&a, v4);
	else
		CHECK(inet_pton(AF_INET6, text, &a) == 1);
	return a;
}

/**
 * pasta_ctx() - a context in pasta's addressing: the guest has the host's
 *		 198.18.0.1 and fd18::1; 169.254.1.2 and fd00::99 map to
 *		 them, and fd00::2 (not the gateway fd18::fe) to ::1
 */
static void pasta_ctx(void)
{
	memset(&o, 0, sizeof(o));
	memset(&c, 0, sizeof(c));
	c.o = &o;
	o.pasta_net = true;
	o.copy6 = true;
	inet_pton(AF_INET, "198.18.0.1", &c.guest4);
	inet_pton(AF_INET, "198.18.0.254", &c.gw4);
	c.mask4.s_addr = htonl(0xffffff00);
	c.guest6 = o.guest6 = addr("fd18::1");
	c.gw6 = o.gw6 = addr("fd18::fe");
	o.prefix6 = 64;
	o.map4.own = addr("198.18.0.1");
	o.map4.guest = addr("169.254.1.2");
	o.map6.own = addr("fd18::1");
	o.map6.guest = addr("fd00::99");
	o.map6.lo = addr("fd00::2");
	c.dns6 = addr("fd00::53");
}

/**
 * goes_to() - where fwd_outbound() sends a guest flow to @dst port 80
 * @dst:	destination, as text
 * @want:	the host address expected, as text
 *
 * Return: true if it is sent there, on port 80
 */
static bool goes_to(const char *dst, const char *want)
{
	struct in6_addr d = addr(dst), w = addr(want), got;
	union sockaddr_inany sa;
	socklen_t len;

	if (fwd_outbound(&c, IPPROTO_TCP, &d, 80, &sa, &len) != FWD_OK)
		return false;
	if (sa.sa.sa_family == AF_INET) {
		inany_from_v4(&got, sa.sa4.sin_addr);
		return inany_equal(&got, &w) && ntohs(sa.sa4.sin_port) == 80;
	}
	return inany_equal(&sa.sa6.sin6_addr, &w) &&
	       ntohs(sa.sa6.sin6_port) == 80;
}

/**
 * seen_as() - how fwd_guest_source() shows a host peer to the guest
 * @peer:	the host peer's address, as text (an AF_INET6 socket's
 *		peer if @v6sock, else of its own family)
 * @v6sock:	the peer came to a socket that takes both families
 * @want:	the address the guest should see, as text
 *
 * Return: true if it sees @want
 */
static bool seen_as(const char *peer, bool v6sock, const char *want)
{
	struct in6_addr p = addr(peer), w = addr(want), got;
	union sockaddr_inany sa;
	socklen_t len;
	uint16_t port;

	if (v6sock) {
		memset(&sa, 0, sizeof(sa));
		sa.sa6.sin6_family = AF_INET6;
		sa.sa6.sin6_addr = p;
	} else {
		sockaddr_from_inany(&sa, &len, &p, 0);
	}
	fwd_guest_source(&c, &sa, &got, &port);
	return inany_equal(&got, &w);
}

static void test_outbound(void)
{
	struct in6_addr dns6 = addr("fd00::53"), none4 = addr("0.0.0.0");

	pasta_ctx();
	CHECK(goes_to("fd00::99", "fd18::1"));
	CHECK(goes_to("169.254.1.2", "198.18.0.1"));
	CHECK(goes_to("fd00::2", "::1"));
	/* --map-host-loopback took the gateway's place in IPv6 only. */
	CHECK(goes_to("fd18::fe", "fd18::fe"));
	CHECK(goes_to("198.18.0.254", "127.0.0.1"));
	CHECK(goes_to("fd18::7", "fd18::7"));
	/* One helper serves both versions: IPv4's takes the place too. */
	o.map4.lo = addr("10.9.9.9");
	CHECK(goes_to("10.9.9.9", "127.0.0.1"));
	CHECK(goes_to("198.18.0.254", "198.18.0.254"));
	o.map4.lo = in6addr_any;
	CHECK(ip_is_dns(&c, &dns6));
	/* No IPv4 forwarder: 0.0.0.0 is not one. */
	CHECK(!ip_is_dns(&c, &none4));
}

static void test_guest_source(void)
{
	pasta_ctx();
	CHECK(seen_as("::1", false, "fd00::2"));
	CHECK(seen_as("fd18::1", false, "fd00::99"));
	CHECK(seen_as("127.0.0.1", false, "198.18.0.254"));
	CHECK(seen_as("198.18.0.1", false, "169.254.1.2"));
	CHECK(seen_as("198.18.0.1", true, "169.254.1.2"));
	CHECK(seen_as("fd18::7", false, "fd18::7"));
	/* Without --map-guest-addr, the host's own address is the gateway;
	 * with -a (not shadowed, no mapping) it is itself.
	 */
	o.map6.guest = in6addr_any;
	CHECK(seen_as("fd18::1", false, "fd18::fe"));
	o.map6.own = in6addr_any;
	CHECK(seen_as("fd18::1", false, "fd18::1"));
}

const struct unit_case unit_cases[] = {
        {"--map-guest-addr and --map-host-loopback of both IP versions: "
         "where guest flows go on the host",
         test_outbound},
        {"the same: how the host's peers appear to the guest",
         test_guest_source},
        {NULL, NULL},
};
