// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for NDP: solicitation parsing, NA and RA building */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <event2/event.h>

/* The parser and builders are file-local; test them where they live. */
#include "driver/stack/ndp.c"

#include "driver/stack/frag.h"
#include "driver/stack/ip6.h"
#include "driver/thread/tap_read.h"
#include "driver/stack/tap_write.h"
#include "fakectx.h"
#include "unit.h"

static const uint8_t guest_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};

static struct opts t_opts;
static struct ctx t_ctx;
static struct ndp_state t_ndp;
static int t_peer = -1;

/**
 * setup() - an IPv6 context whose tap is one end of a socketpair
 */
static void setup(void)
{
	t_peer = fake_ctx_init(&t_ctx, &t_opts, true, guest_mac);
	t_ctx.ndp = &t_ndp;
}

/**
 * teardown() - undo setup()
 */
static void teardown(void)
{
	fake_ctx_close(&t_ctx, t_peer);
}

/**
 * addr6() - parse an IPv6 literal
 * @s:		literal
 *
 * Return: the address
 */
static struct in6_addr addr6(const char *s)
{
	struct in6_addr a;

	if (inet_pton(AF_INET6, s, &a) != 1)
		abort();
	return a;
}

/**
 * struct tpkt - a guest packet in an exactly-sized heap buffer
 * @p:		the packet as ndp_input() sees it
 * @buf:	IPv6 header followed by the ICMPv6 message
 */
struct tpkt {
	struct pkt p;
	uint8_t *buf;
};

/**
 * make_pkt() - wrap an ICMPv6 message in an IPv6 header
 * @t:		filled; free with free_pkt()
 * @src:	source literal
 * @dst:	destination literal
 * @hlim:	hop limit
 * @msg:	ICMPv6 message
 * @len:	its length
 */
static void make_pkt(struct tpkt *t, const char *src, const char *dst,
                     uint8_t hlim, const uint8_t *msg, size_t len)
{
	struct ip6_hdr h = {0};

	t->buf = malloc(sizeof(h) + len);
	h.ip6_flow = htonl(6U << 28);
	h.ip6_plen = htons((uint16_t)len);
	h.ip6_nxt = IPPROTO_ICMPV6;
	h.ip6_hlim = hlim;
	h.ip6_src = addr6(src);
	h.ip6_dst = addr6(dst);
	memcpy(t->buf, &h, sizeof(h));
	memcpy(t->buf + sizeof(h), msg, len);
	memset(&t->p, 0, sizeof(t->p));
	t->p.v6 = true;
	t->p.src = h.ip6_src;
	t->p.dst = h.ip6_dst;
	t->p.proto = IPPROTO_ICMPV6;
	t->p.l3 = t->buf;
	t->p.l3len = sizeof(h);
	t->p.l4 = t->buf + sizeof(h);
	t->p.l4len = len;
}

/**
 * ns_msg() - a Neighbor Solicitation
 * @buf:	at least 32 bytes
 * @target:	target literal
 * @sll:	append a source link-layer address option
 *
 * Return: message length
 */
static size_t ns_msg(uint8_t *buf, const char *target, bool sll)
{
	struct in6_addr t = addr6(target);

	memset(buf, 0, 32);
	buf[0] = ND_NEIGHBOR_SOLICIT;
	memcpy(buf + 8, &t, 16);
	if (!sll)
		return 24;
	buf[24] = ND_OPT_SOURCE_LINKADDR;
	buf[25] = 1;
	memcpy(buf + 26, guest_mac, 6);
	return 32;
}

/**
 * input() - run ndp_input() on a packet and free it
 * @src:	source literal
 * @dst:	destination literal
 * @hlim:	hop limit
 * @msg:	ICMPv6 message
 * @len:	its length
 *
 * Return: what ndp_input() returned
 */
static bool input(const char *src, const char *dst, uint8_t hlim,
                  const uint8_t *msg, size_t len)
{
	struct tpkt t;
	bool ret;

	make_pkt(&t, src, dst, hlim, msg, len);
	ret = ndp_input(&t_ctx, &t.p);
	free(t.buf);
	return ret;
}

/**
 * input_fragment() - one IPv6 fragment from the guest, through ip6_input()
 * @src:	source
 * @dst:	destination
 * @hlim:	hop limit
 * @id:		fragment identification
 * @data:	this fragment's part of the ICMPv6 message
 * @off:	its offset in the message
 * @len:	its length
 * @more:	more fragments follow
 */
static void input_fragment(const struct in6_addr *src,
                           const struct in6_addr *dst, uint8_t hlim,
                           uint32_t id, const uint8_t *data, size_t off,
                           size_t len, bool more)
{
	struct ip6_frag fh = {0};
	struct ip6_hdr h = {0};
	struct frame f = {0};

	f.len = 14 + sizeof(h) + sizeof(fh) + len;
	f.data = malloc(f.len);
	memcpy(f.data, eth_router6_mac, 6);
	memcpy(f.data + 6, guest_mac, 6);
	f.data[12] = 0x86;
	f.data[13] = 0xdd;
	h.ip6_flow = htonl(6U << 28);
	h.ip6_plen = htons((uint16_t)(sizeof(fh) + len));
	h.ip6_nxt = IPPROTO_FRAGMENT;
	h.ip6_hlim = hlim;
	h.ip6_src = *src;
	h.ip6_dst = *dst;
	fh.ip6f_nxt = IPPROTO_ICMPV6;
	fh.ip6f_offlg = htons((uint16_t)(off | (more ? 1 : 0)));
	fh.ip6f_ident = htonl(id);
	memcpy(f.data + 14, &h, sizeof(h));
	memcpy(f.data + 14 + sizeof(h), &fh, sizeof(fh));
	memcpy(f.data + 14 + sizeof(h) + sizeof(fh), data, len);
	ip6_input(&t_ctx, &f);
	free(f.data);
}

/**
 * input_fragments() - an ICMPv6 message from the guest in two fragments
 * @src:	source literal
 * @dst:	destination literal
 * @hlim:	hop limit of both fragments
 * @msg:	message; its checksum is filled in here
 * @len:	its length
 * @split:	bytes in the first fragment, a multiple of 8
 */
static void input_fragments(const char *src, const char *dst, uint8_t hlim,
                            uint8_t *msg, size_t len, size_t split)
{
	static uint32_t id = 1;
	struct in6_addr s = addr6(src), d = addr6(dst);
	uint16_t ck;

	msg[2] = msg[3] = 0;
	ck = csum_fold(csum_add(ip_pseudo_csum(&s, &d, IPPROTO_ICMPV6, len),
	                        msg, len));
	memcpy(msg + 2, &ck, 2);
	input_fragment(&s, &d, hlim, id, msg, 0, split, true);
	input_fragment(&s, &d, hlim, id, msg + split, split, len - split,
	               false);
	id++;
}

/**
 * struct reply - an ICMPv6 frame tapir wrote to the tap
 * @src:	IPv6 source
 * @dst:	IPv6 destination
 * @msg:	ICMPv6 message
 * @len:	its length
 */
struct reply {
	struct in6_addr src;
	struct in6_addr dst;
	const uint8_t *msg;
	size_t len;
};

/**
 * read_reply() - read one frame from the tap and check its headers
 * @r:		filled
 *
 * Return: true if a well-formed ICMPv6 frame was there
 */
static bool read_reply(struct reply *r)
{
	static uint8_t f[2048];
	ssize_t n = recv(t_peer, f, sizeof(f), MSG_DONTWAIT);
	struct ip6_hdr h;

	if (n < 14 + 40 + 4)
		return false;
	CHECK(!memcmp(f, guest_mac, 6));
	CHECK(!memcmp(f + 6, eth_router6_mac, 6));
	CHECK(f[12] == 0x86 && f[13] == 0xdd);
	memcpy(&h, f + 14, sizeof(h));
	CHECK(h.ip6_nxt == IPPROTO_ICMPV6);
	CHECK(h.ip6_hlim == 255);
	CHECK(ntohs(h.ip6_plen) == (size_t)n - 54);
	r->src = h.ip6_src;
	r->dst = h.ip6_dst;
	r->msg = f + 54;
	r->len = (size_t)n - 54;
	CHECK(csum_fold(csum_add(
	              ip_pseudo_csum(&r->src, &r->dst, IPPROTO_ICMPV6, r->len),
	              r->msg, r->len)) == 0);
	return true;
}

/**
 * find_opt() - find an NDP option in a message
 * @msg:	message
 * @len:	its length
 * @hdr:	bytes before the options
 * @type:	option type
 *
 * Return: the option (type byte first), or NULL
 */
static const uint8_t *find_opt(const uint8_t *msg, size_t len, size_t hdr,
                               uint8_t type)
{
	for (size_t off = hdr; off + 2 <= len && msg[off + 1];
	     off += (size_t)msg[off + 1] * 8)
		if (msg[off] == type)
			return msg + off;
	return NULL;
}

/**
 * get32() - read a 32-bit network-order value
 * @p:		data
 *
 * Return: the value
 */
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void test_build_ra(void)
{
	struct in6_addr dns = addr6("fd00::3"), pfx = addr6("fd00::");
	uint8_t ra[NDP_RA_MAX];
	size_t len = ndp_build_ra(ra, 1500, &dns, NULL, eth_router6_mac);
	const uint8_t *o;

	CHECK(len == 88);
	CHECK(ra[0] == ND_ROUTER_ADVERT && ra[1] == 0);
	CHECK(ra[4] == 64 && ra[5] == 0);
	CHECK(ra[6] == 0x07 && ra[7] == 0x08); /* 1800 s */
	o = find_opt(ra, len, 16, ND_OPT_SOURCE_LINKADDR);
	CHECK(o && o[1] == 1 && !memcmp(o + 2, eth_router6_mac, 6));
	o = find_opt(ra, len, 16, ND_OPT_MTU);
	CHECK(o && o[1] == 1 && get32(o + 4) == 1500);
	o = find_opt(ra, len, 16, ND_OPT_PREFIX_INFORMATION);
	CHECK(o && o[1] == 4 && o[2] == 64 && o[3] == 0xc0);
	CHECK(o && get32(o + 4) == 86400 && get32(o + 8) == 14400);
	CHECK(o && !memcmp(o + 16, &pfx, 16));
	o = find_opt(ra, len, 16, NDP_OPT_RDNSS);
	CHECK(o && o[1] == 3 && !memcmp(o + 8, &dns, 16));
	CHECK(o && get32(o + 4) > 0);
}

static void test_build_ra_small_mtu_no_dns(void)
{
	uint8_t ra[NDP_RA_MAX];
	size_t len = ndp_build_ra(ra, 1279, NULL, NULL, eth_router6_mac);

	CHECK(len == 16 + 8 + 32);
	CHECK(!find_opt(ra, len, 16, ND_OPT_MTU));
	CHECK(!find_opt(ra, len, 16, NDP_OPT_RDNSS));
	CHECK(find_opt(ra, len, 16, ND_OPT_PREFIX_INFORMATION));
	CHECK(ndp_build_ra(ra, 65520, NULL, NULL, eth_router6_mac) ==
	      16 + 8 + 8 + 32);
}

/* pasta's copy of the host's IPv6: its prefix, on-link only, no SLAAC,
 * no second default route.
 */
static void test_build_ra_copy6(void)
{
	struct opts o = {.copy6 = true, .prefix6 = 60};
	struct in6_addr pfx = addr6("2001:db8:1:2a0::");
	uint8_t ra[NDP_RA_MAX];
	size_t len;
	const uint8_t *opt;

	o.guest6 = addr6("2001:db8:1:2ab::7");
	len = ndp_build_ra(ra, 1500, NULL, &o, eth_router6_mac);
	CHECK(ra[6] == 0 && ra[7] == 0); /* not a default router */
	opt = find_opt(ra, len, 16, ND_OPT_PREFIX_INFORMATION);
	CHECK(opt && opt[2] == 60 && opt[3] == ND_OPT_PI_FLAG_ONLINK);
	CHECK(opt && !memcmp(opt + 16, &pfx, 16));
	CHECK(!find_opt(ra, len, 16, NDP_OPT_RDNSS));
}

static void test_build_na(void)
{
	struct in6_addr t = addr6("fe80::2");
	uint8_t na[NDP_NA_LEN];

	CHECK(ndp_build_na(na, &t, true, true, eth_router6_mac) == 32);
	CHECK(na[0] == ND_NEIGHBOR_ADVERT && na[1] == 0);
	CHECK(na[4] == 0xe0);
	CHECK(!memcmp(na + 8, &t, 16));
	CHECK(na[24] == ND_OPT_TARGET_LINKADDR && na[25] == 1);
	CHECK(!memcmp(na + 26, eth_router6_mac, 6));
	ndp_build_na(na, &t, false, false, eth_router6_mac);
	CHECK(na[4] == 0x20);
}

static void test_parse_ns(void)
{
	uint8_t ns[32];
	size_t len = ns_msg(ns, "fd00::2", true);
	struct in6_addr gw = addr6("fd00::2");
	struct ndp_msg m;
	struct tpkt t;

	make_pkt(&t, "fe80::1", "ff02::1:ff00:2", 255, ns, len);
	CHECK(ndp_parse(&t.p, &m) == 0);
	CHECK(m.type == ND_NEIGHBOR_SOLICIT);
	CHECK(IN6_ARE_ADDR_EQUAL(&m.target, &gw));
	CHECK(m.has_sll && !memcmp(m.sll, guest_mac, 6));
	free(t.buf);
	/* Every truncation is rejected, and safe to look at. */
	for (size_t n = 0; n < len; n++) {
		make_pkt(&t, "fe80::1", "ff02::1:ff00:2", 255, ns, n);
		CHECK(ndp_parse(&t.p, &m) != 0 || n == 24);
		free(t.buf);
	}
}

static void test_parse_bad(void)
{
	uint8_t ns[32], rs[16] = {ND_ROUTER_SOLICIT};
	struct ndp_msg m;
	struct tpkt t;
	size_t len;

	len = ns_msg(ns, "fd00::2", true);
	make_pkt(&t, "fe80::1", "fd00::2", 64, ns, len);
	CHECK(ndp_parse(&t.p, &m) == NDP_OFF_LINK);
	free(t.buf);
	ns[25] = 0; /* option length 0 */
	make_pkt(&t, "fe80::1", "fd00::2", 255, ns, len);
	CHECK(ndp_parse(&t.p, &m) == NDP_MALFORMED);
	free(t.buf);
	ns[25] = 2; /* option longer than the message */
	make_pkt(&t, "fe80::1", "fd00::2", 255, ns, len);
	CHECK(ndp_parse(&t.p, &m) == NDP_MALFORMED);
	free(t.buf);
	len = ns_msg(ns, "fd00::2", true);
	ns[1] = 1; /* code */
	make_pkt(&t, "fe80::1", "fd00::2", 255, ns, len);
	CHECK(ndp_parse(&t.p, &m) == NDP_MALFORMED);
	free(t.buf);
	len = ns_msg(ns, "ff02::1", false);
	make_pkt(&t, "fe80::1", "ff02::1", 255, ns, len);
	CHECK(ndp_parse(&t.p, &m) == NDP_MALFORMED);
	free(t.buf);
	/* DAD probe: no source address, so no link-layer option ... */
	len = ns_msg(ns, "fd00::2", true);
	make_pkt(&t, "::", "ff02::1:ff00:2", 255, ns, len);
	CHECK(ndp_parse(&t.p, &m) == NDP_MALFORMED);
	free(t.buf);
	/* ... and only to the solicited-node group. */
	len = ns_msg(ns, "fd00::2", false);
	make_pkt(&t, "::", "fd00::2", 255, ns, len);
	CHECK(ndp_parse(&t.p, &m) == NDP_MALFORMED);
	free(t.buf);
	/* RS: 8 bytes plus options; a lone option byte is truncated. */
	make_pkt(&t, "fe80::1", "ff02::2", 255, rs, 8);
	CHECK(ndp_parse(&t.p, &m) == 0 && m.type == ND_ROUTER_SOLICIT);
	free(t.buf);
	make_pkt(&t, "fe80::1", "ff02::2", 255, rs, 9);
	CHECK(ndp_parse(&t.p, &m) == NDP_MALFORMED);
	free(t.buf);
	rs[8] = ND_OPT_SOURCE_LINKADDR;
	rs[9] = 0;
	make_pkt(&t, "fe80::1", "ff02::2", 255, rs, 16);
	CHECK(ndp_parse(&t.p, &m) == NDP_MALFORMED);
	free(t.buf);
	rs[9] = 1;
	make_pkt(&t, "fe80::1", "ff02::2", 255, rs, 16);
	CHECK(ndp_parse(&t.p, &m) == 0 && m.has_sll);
	free(t.buf);
	make_pkt(&t, "fe80::1", "ff02::2", 254, rs, 16);
	CHECK(ndp_parse(&t.p, &m) == NDP_OFF_LINK);
	free(t.buf);
	make_pkt(&t, "fe80::1", "ff02::2", 255, rs, 4);
	CHECK(ndp_parse(&t.p, &m) == NDP_MALFORMED);
	free(t.buf);
}

static void test_ns_router(void)
{
	struct in6_addr ll = addr6("fe80::2"), src = addr6("fe80::1");
	uint8_t ns[32];
	size_t len = ns_msg(ns, "fe80::2", true);
	struct reply r;
	const uint8_t *o;

	setup();
	CHECK(input("fe80::1", "ff02::1:ff00:2", 255, ns, len));
	CHECK(read_reply(&r));
	CHECK(IN6_ARE_ADDR_EQUAL(&r.src, &ll));
	CHECK(IN6_ARE_ADDR_EQUAL(&r.dst, &src));
	CHECK(r.len == 32 && r.msg[0] == ND_NEIGHBOR_ADVERT);
	CHECK(r.msg[4] == 0xe0); /* router, solicited, override */
	CHECK(!memcmp(r.msg + 8, &ll, 16));
	o = find_opt(r.msg, r.len, 24, ND_OPT_TARGET_LINKADDR);
	CHECK(o && !memcmp(o + 2, eth_router6_mac, 6));
	/* fd00::2 is the router too; fd00::3 is not. */
	len = ns_msg(ns, "fd00::2", false);
	CHECK(input("fd00::100", "ff02::1:ff00:2", 255, ns, len));
	CHECK(read_reply(&r) && r.msg[4] == 0xe0);
	CHECK(IN6_ARE_ADDR_EQUAL(&r.src, &t_ctx.gw6));
	len = ns_msg(ns, "fd00::3", true);
	CHECK(input("fd00::100", "fd00::3", 255, ns, len));
	CHECK(read_reply(&r) && r.msg[4] == 0x60);
	CHECK(IN6_ARE_ADDR_EQUAL(&r.src, &t_ctx.dns6));
	teardown();
}

static void test_ns_dad_and_others(void)
{
	struct in6_addr all = addr6("ff02::1");
	uint8_t ns[32];
	size_t len;
	struct reply r;

	setup();
	/* Someone probing our address learns it's taken, by multicast. */
	len = ns_msg(ns, "fd00::2", false);
	CHECK(input("::", "ff02::1:ff00:2", 255, ns, len));
	CHECK(read_reply(&r));
	CHECK(IN6_ARE_ADDR_EQUAL(&r.dst, &all));
	CHECK(r.msg[4] == 0xa0); /* router, override, not solicited */
	/* The guest's own DAD and other addresses get no answer. */
	len = ns_msg(ns, "fd00::5054:ff:fe12:3456", false);
	CHECK(input("::", "ff02::1:ff12:3456", 255, ns, len));
	len = ns_msg(ns, "fd00::1", true);
	CHECK(input("fe80::1", "ff02::1:ff00:1", 255, ns, len));
	CHECK(!read_reply(&r));
	CHECK(t_ctx.stats.drops[DROP_NOT_FOR_US] == 2);
	teardown();
}

/* With pasta's copy, the prefix stands for the host's network: every
 * global neighbour is answered, but not the guest's own address, nor any
 * duplicate address probe (the guest's new addresses would fail).
 */
static void test_ns_copy6_neighbours(void)
{
	struct in6_addr gw = addr6("fd18::fe"), nb = addr6("fd18::7");
	uint8_t ns[32];
	size_t len;
	struct reply r;

	setup();
	t_opts.copy6 = true;
	t_opts.guest6 = addr6("fd18::1");
	t_opts.prefix6 = 64;
	t_opts.gw6 = gw;
	t_ctx.gw6 = gw;
	t_ctx.dns6 = in6addr_any;
	len = ns_msg(ns, "fd18::7", true);
	CHECK(input("fd18::1", "ff02::1:ff00:7", 255, ns, len));
	CHECK(read_reply(&r) && r.msg[4] == 0x60); /* solicited, override */
	CHECK(IN6_ARE_ADDR_EQUAL(&r.src, &nb));
	len = ns_msg(ns, "fd18::fe", true);
	CHECK(input("fd18::1", "ff02::1:ff00:fe", 255, ns, len));
	CHECK(read_reply(&r) && r.msg[4] == 0xe0); /* the router */
	len = ns_msg(ns, "fd18::1", true);
	CHECK(input("fe80::1", "ff02::1:ff00:1", 255, ns, len));
	len = ns_msg(ns, "fd18::5054:ff:fe12:3456", false);
	CHECK(input("::", "ff02::1:ff12:3456", 255, ns, len));
	len = ns_msg(ns, "fe80::5054:ff:fe12:3456", false);
	CHECK(input("::", "ff02::1:ff12:3456", 255, ns, len));
	/* Outside the copied prefix, and ::, which c->dns6 now is. */
	len = ns_msg(ns, "2001:db8::9", true);
	CHECK(input("fd18::1", "ff02::1:ff00:9", 255, ns, len));
	len = ns_msg(ns, "::", true);
	CHECK(input("fd18::1", "ff02::1:ff00:0", 255, ns, len));
	CHECK(!read_reply(&r));
	CHECK(t_ctx.stats.drops[DROP_NOT_FOR_US] == 5);
	t_opts.copy6 = false;
	teardown();
}

static void test_ns_malformed_dropped(void)
{
	uint8_t ns[32];
	size_t len = ns_msg(ns, "fe80::2", true);
	struct reply r;

	setup();
	ns[25] = 0;
	CHECK(input("fe80::1", "ff02::1:ff00:2", 255, ns, len));
	CHECK(input("fe80::1", "ff02::1:ff00:2", 255, ns, 20));
	CHECK(t_ctx.stats.drops[DROP_BAD_LENGTH] == 2);
	ns[25] = 1;
	CHECK(input("fe80::1", "ff02::1:ff00:2", 64, ns, len));
	CHECK(t_ctx.stats.drops[DROP_NOT_FOR_US] == 1);
	CHECK(!read_reply(&r));
	teardown();
}

static void test_rs_gets_ra(void)
{
	uint8_t rs[16] = {ND_ROUTER_SOLICIT};
	struct in6_addr ll = addr6("fe80::2"), src = addr6("fe80::1");
	struct in6_addr all = addr6("ff02::1");
	struct reply r;

	setup();
	rs[8] = ND_OPT_SOURCE_LINKADDR;
	rs[9] = 1;
	memcpy(rs + 10, guest_mac, 6);
	CHECK(input("fe80::1", "ff02::2", 255, rs, 16));
	CHECK(read_reply(&r));
	CHECK(IN6_ARE_ADDR_EQUAL(&r.src, &ll));
	CHECK(IN6_ARE_ADDR_EQUAL(&r.dst, &src));
	CHECK(r.len == 88 && r.msg[0] == ND_ROUTER_ADVERT);
	CHECK(find_opt(r.msg, r.len, 16, NDP_OPT_RDNSS));
	/* Without a source address: to all nodes; no RDNSS without DNS. */
	t_opts.disable_dns = true;
	CHECK(input("::", "ff02::2", 255, rs, 8));
	CHECK(read_reply(&r));
	CHECK(IN6_ARE_ADDR_EQUAL(&r.dst, &all));
	CHECK(!find_opt(r.msg, r.len, 16, NDP_OPT_RDNSS));
	/* Not from the link. */
	CHECK(input("fe80::1", "ff02::2", 200, rs, 16));
	CHECK(!read_reply(&r));
	teardown();
}

static void test_other_types_not_consumed(void)
{
	uint8_t echo[16] = {ICMP6_ECHO_REQUEST}, mld[28] = {143};
	uint8_t na[32] = {ND_NEIGHBOR_ADVERT};

	setup();
	CHECK(!input("fd00::100", "fd00::2", 64, echo, sizeof(echo)));
	CHECK(!input("fe80::1", "ff02::16", 1, mld, sizeof(mld)));
	CHECK(input("fe80::1", "ff02::1", 255, na, sizeof(na)));
	t_ctx.ndp = NULL;
	CHECK(!input("fe80::1", "ff02::2", 255, na, sizeof(na)));
	teardown();
}

static void test_fragmented_ndp_dropped(void)
{
	uint8_t ns[32], rs[16] = {ND_ROUTER_SOLICIT};
	uint8_t echo[48] = {ICMP6_ECHO_REQUEST};
	struct reply r;

	setup();
	CHECK(frag_init(&t_ctx) == 0);
	/* RFC 6980: hop limit 255 on every fragment, and still ignored. */
	input_fragments("fe80::1", "ff02::1:ff00:2", 255, ns,
	                ns_msg(ns, "fe80::2", true), 16);
	CHECK(!read_reply(&r));
	rs[8] = ND_OPT_SOURCE_LINKADDR;
	rs[9] = 1;
	memcpy(rs + 10, guest_mac, 6);
	input_fragments("fe80::1", "ff02::2", 255, rs, sizeof(rs), 8);
	CHECK(!read_reply(&r));
	CHECK(t_ctx.stats.drops[DROP_FRAGMENT] == 2);
	/* Echo over fragments is still answered, all 48 bytes of it. */
	memset(echo + 4, 'p', sizeof(echo) - 4);
	input_fragments("fd00::100", "fd00::2", 64, echo, sizeof(echo), 24);
	CHECK(read_reply(&r));
	CHECK(r.len == sizeof(echo) && r.msg[0] == ICMP6_ECHO_REPLY);
	CHECK(!memcmp(r.msg + 4, echo + 4, sizeof(echo) - 4));
	CHECK(t_ctx.stats.drops[DROP_FRAGMENT] == 2);
	frag_cleanup(&t_ctx);
	teardown();
}

static void test_unsolicited_ra_at_start(void)
{
	struct in6_addr all = addr6("ff02::1");
	struct reply r;

	setup();
	t_ctx.ndp = NULL;
	t_ctx.base = event_base_new();
	t_opts.ipv6 = false;
	CHECK(ndp_init(&t_ctx) == 0 && !t_ctx.ndp);
	t_opts.ipv6 = true;
	CHECK(ndp_init(&t_ctx) == 0 && t_ctx.ndp);
	event_base_loop(t_ctx.base, EVLOOP_ONCE);
	CHECK(read_reply(&r));
	CHECK(IN6_ARE_ADDR_EQUAL(&r.dst, &all));
	CHECK(r.msg[0] == ND_ROUTER_ADVERT);
	ndp_cleanup(&t_ctx);
	CHECK(!t_ctx.ndp);
	event_base_free(t_ctx.base);
	teardown();
}

const struct unit_case unit_cases[] = {
        {"RA: lifetime, MTU, prefix, RDNSS", test_build_ra},
        {"RA: no MTU below 1280, no RDNSS", test_build_ra_small_mtu_no_dns},
        {"RA: pasta's copied prefix, on-link only", test_build_ra_copy6},
        {"NA: flags, target and link-layer option", test_build_na},
        {"NS parse and truncations", test_parse_ns},
        {"NS/RS: hop limit, option length 0, code", test_parse_bad},
        {"NS for the router and DNS addresses", test_ns_router},
        {"NS: DAD for ours, others ignored", test_ns_dad_and_others},
        {"NS with pasta's copy: neighbours answered, the guest's own and "
         "probes not",
         test_ns_copy6_neighbours},
        {"malformed NS counted and dropped", test_ns_malformed_dropped},
        {"RS answered with an RA", test_rs_gets_ra},
        {"echo and MLD left to icmp.c", test_other_types_not_consumed},
        {"fragmented NS and RS ignored, fragmented echo answered",
         test_fragmented_ndp_dropped},
        {"unsolicited RA right after start", test_unsolicited_ra_at_start},
        {NULL, NULL},
};
