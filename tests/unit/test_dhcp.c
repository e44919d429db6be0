// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the DHCP server: parser, replies and leases */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

/* The parser and builders are file-local; test them where they live. */
#include "driver/stack/dhcp.c"

#include "fakectx.h"
#include "unit.h"

static const uint8_t mac_a[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01};
static const uint8_t mac_b[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x02};

static struct opts t_opts;
static struct ctx t_ctx;
static int t_peer = -1;

/**
 * setup() - a context for 10.0.2.0/24 whose tap is one end of a socketpair
 */
static void setup(void)
{
	t_peer = fake_ctx_init(&t_ctx, &t_opts, false, mac_a);
}

/**
 * teardown() - undo setup()
 */
static void teardown(void)
{
	fake_ctx_close(&t_ctx, t_peer);
	dhcp_cleanup(&t_ctx);
}

/**
 * build_msg() - a client message with the given options after the cookie
 * @buf:	at least 240 + @optlen bytes
 * @mac:	client MAC
 * @opts:	raw options
 * @optlen:	their length
 *
 * Return: message length
 */
static size_t build_msg(uint8_t *buf, const uint8_t *mac, const uint8_t *opts,
                        size_t optlen)
{
	memset(buf, 0, DHCP_OPTS_OFF);
	buf[0] = 1;
	buf[1] = 1;
	buf[2] = 6;
	memcpy(buf + 4, "\x12\x34\x56\x78", 4);
	buf[10] = 0x80; /* broadcast */
	memcpy(buf + 28, mac, 6);
	memcpy(buf + BOOTP_HDR_LEN, "\x63\x82\x53\x63", 4);
	memcpy(buf + DHCP_OPTS_OFF, opts, optlen);
	return DHCP_OPTS_OFF + optlen;
}

/**
 * parse_copy() - dhcp_parse() on an exactly-sized heap copy, so that the
 *		  sanitizers see any read past the end
 * @msg:	message
 * @len:	length
 * @out:	result
 *
 * Return: what dhcp_parse() returned
 */
static int parse_copy(const uint8_t *msg, size_t len, struct dhcp_req *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	memcpy(copy, msg, len);
	ret = dhcp_parse(copy, len, out);
	free(copy);
	return ret;
}

static const uint8_t discover_opts[] = {
        53, 1, 1,                               /* DISCOVER */
        61, 7, 1, 2, 0xaa, 0xbb, 0xcc, 0xdd, 1, /* client id */
        55, 4, 1, 3, 6,    26,                  /* parameter request list */
        255};

static void test_parse_discover(void)
{
	uint8_t buf[512];
	size_t len =
	        build_msg(buf, mac_a, discover_opts, sizeof(discover_opts));
	struct dhcp_req r;

	CHECK(parse_copy(buf, len, &r) == 0);
	CHECK(r.type == DHCPDISCOVER);
	CHECK(!memcmp(r.chaddr, mac_a, 6));
	CHECK(!memcmp(&r.xid, "\x12\x34\x56\x78", 4));
	CHECK(r.broadcast);
	CHECK(!r.has_req_addr && !r.has_server_id);
	CHECK(r.ciaddr.s_addr == 0);
}

static void test_parse_request(void)
{
	static const uint8_t opts[] = {53, 1,  3, 50, 4, 10, 0, 2,
	                               15, 54, 4, 10, 0, 2,  2, 255};
	uint8_t buf[512];
	size_t len = build_msg(buf, mac_b, opts, sizeof(opts));
	struct dhcp_req r;

	buf[10] = 0;
	CHECK(parse_copy(buf, len, &r) == 0);
	CHECK(r.type == DHCPREQUEST);
	CHECK(!r.broadcast);
	CHECK(r.has_req_addr && r.req_addr.s_addr == htonl(0x0a00020f));
	CHECK(r.has_server_id && r.server_id.s_addr == htonl(0x0a000202));
	CHECK(!memcmp(r.chaddr, mac_b, 6));
}

static void test_parse_truncated(void)
{
	uint8_t buf[512];
	size_t len =
	        build_msg(buf, mac_a, discover_opts, sizeof(discover_opts));
	struct dhcp_req r;

	/* Every cut inside the fixed part or inside an option fails. */
	for (size_t n = 0; n < DHCP_OPTS_OFF + 3; n++)
		CHECK(parse_copy(buf, n, &r) == -1);
	/* Cut right after the type option: no END, but complete options. */
	CHECK(parse_copy(buf, DHCP_OPTS_OFF + 3, &r) == 0);
	/* Cut inside the client id option. */
	CHECK(parse_copy(buf, DHCP_OPTS_OFF + 7, &r) == -1);
	/* Cut between the tag and length of the next option. */
	CHECK(parse_copy(buf, DHCP_OPTS_OFF + 13, &r) == -1);
	/* Any length at all is safe to look at. */
	for (size_t n = 0; n <= len; n++)
		parse_copy(buf, n, &r);
}

static void test_parse_bad_header(void)
{
	uint8_t buf[512];
	size_t len =
	        build_msg(buf, mac_a, discover_opts, sizeof(discover_opts));
	struct dhcp_req r;

	buf[BOOTP_HDR_LEN + 3] = 0x64;
	CHECK(parse_copy(buf, len, &r) == -1);
	build_msg(buf, mac_a, discover_opts, sizeof(discover_opts));
	buf[0] = 2; /* BOOTREPLY */
	CHECK(parse_copy(buf, len, &r) == -1);
	build_msg(buf, mac_a, discover_opts, sizeof(discover_opts));
	buf[2] = 16; /* not a 6-byte MAC */
	CHECK(parse_copy(buf, len, &r) == -1);
	build_msg(buf, mac_a, discover_opts, sizeof(discover_opts));
	buf[1] = 6; /* IEEE 802 */
	CHECK(parse_copy(buf, len, &r) == -1);
}

static void test_parse_option_overrun(void)
{
	static const uint8_t overrun[] = {53, 1, 1, 12, 10, 'h', 'o'};
	static const uint8_t dangling[] = {53, 1, 1, 12};
	static const uint8_t big[] = {53, 1, 1, 12, 255, 'x'};
	uint8_t buf[512];
	struct dhcp_req r;
	size_t len;

	len = build_msg(buf, mac_a, overrun, sizeof(overrun));
	CHECK(parse_copy(buf, len, &r) == -1);
	len = build_msg(buf, mac_a, dangling, sizeof(dangling));
	CHECK(parse_copy(buf, len, &r) == -1);
	len = build_msg(buf, mac_a, big, sizeof(big));
	CHECK(parse_copy(buf, len, &r) == -1);
}

static void test_parse_bad_option_lengths(void)
{
	static const uint8_t type2[] = {53, 2, 1, 1, 255};
	static const uint8_t type0[] = {53, 1, 0, 255};
	static const uint8_t reqip3[] = {53, 1, 3, 50, 3, 10, 0, 2, 255};
	static const uint8_t sid5[] = {53, 1, 3, 54, 5, 10, 0, 2, 2, 0, 255};
	uint8_t buf[512];
	struct dhcp_req r;
	size_t len;

	len = build_msg(buf, mac_a, type2, sizeof(type2));
	CHECK(parse_copy(buf, len, &r) == -1);
	len = build_msg(buf, mac_a, type0, sizeof(type0));
	CHECK(parse_copy(buf, len, &r) == -1);
	len = build_msg(buf, mac_a, reqip3, sizeof(reqip3));
	CHECK(parse_copy(buf, len, &r) == -1);
	len = build_msg(buf, mac_a, sid5, sizeof(sid5));
	CHECK(parse_copy(buf, len, &r) == -1);
}

static void test_parse_missing_type(void)
{
	static const uint8_t none[] = {50, 4, 10, 0, 2, 15, 255};
	static const uint8_t after_end[] = {255, 53, 1, 1};
	uint8_t buf[512];
	struct dhcp_req r;
	size_t len;

	len = build_msg(buf, mac_a, none, sizeof(none));
	CHECK(parse_copy(buf, len, &r) == -1);
	/* Plain BOOTP: no options at all. */
	CHECK(parse_copy(buf, DHCP_OPTS_OFF, &r) == -1);
	/* Options after END don't count. */
	len = build_msg(buf, mac_a, after_end, sizeof(after_end));
	CHECK(parse_copy(buf, len, &r) == -1);
}

static void test_parse_pad_and_end(void)
{
	/* Pads anywhere; after END even an overrunning option is ignored. */
	static const uint8_t opts[] = {
	        0,  0,                 /* pad */
	        53, 1,   1,            /* DISCOVER */
	        0,  0,   0,            /* pad */
	        50, 4,   10, 0, 2, 20, /* requested address */
	        0,  255,               /* pad, END */
	        12, 200,               /* after END: ignored */
	};
	uint8_t buf[512];
	size_t len = build_msg(buf, mac_a, opts, sizeof(opts));
	struct dhcp_req r;

	CHECK(parse_copy(buf, len, &r) == 0);
	CHECK(r.type == DHCPDISCOVER);
	CHECK(r.has_req_addr && r.req_addr.s_addr == htonl(0x0a000214));
}

/**
 * find_opt() - find an option in a reply
 * @bootp:	reply message
 * @len:	its length
 * @tag:	option code
 * @olen:	filled with the option's length
 *
 * Return: the option value, or NULL
 */
static const uint8_t *find_opt(const uint8_t *bootp, size_t len, uint8_t tag,
                               uint8_t *olen)
{
	size_t off = DHCP_OPTS_OFF;

	while (off + 1 < len && bootp[off] != OPT_END) {
		if (bootp[off] == OPT_PAD) {
			off++;
			continue;
		}
		if (bootp[off] == tag) {
			*olen = bootp[off + 1];
			return bootp + off + 2;
		}
		off += 2 + (size_t)bootp[off + 1];
	}
	return NULL;
}

/**
 * client_send() - feed one client message through dhcp_input()
 * @mac:	client MAC
 * @opts:	options
 * @optlen:	their length
 * @ciaddr:	client address, host order
 * @bcast:	set the broadcast flag
 *
 * Return: what dhcp_input() returned
 */
static bool client_send(const uint8_t *mac, const uint8_t *opts, size_t optlen,
                        uint32_t ciaddr, bool bcast)
{
	static uint8_t l4[8 + 512];
	size_t len = 8 + build_msg(l4 + 8, mac, opts, optlen);
	struct pkt p = {0};
	uint32_t ci = htonl(ciaddr);
	uint16_t ck;

	memcpy(l4 + 8 + 12, &ci, 4);
	l4[8 + 10] = bcast ? 0x80 : 0;
	l4[0] = 0;
	l4[1] = 68;
	l4[2] = 0;
	l4[3] = 67;
	l4[4] = (uint8_t)(len >> 8);
	l4[5] = (uint8_t)len;
	l4[6] = l4[7] = 0;
	inany_from_v4(&p.src, (struct in_addr){htonl(ciaddr)});
	inany_from_v4(&p.dst,
	              ciaddr ? t_ctx.gw4
	                     : (struct in_addr){htonl(INADDR_BROADCAST)});
	ck = csum_fold(csum_add(
	        ip_pseudo_csum(&p.src, &p.dst, IPPROTO_UDP, len), l4, len));
	memcpy(l4 + 6, &ck, 2);
	p.proto = IPPROTO_UDP;
	p.l4 = l4;
	p.l4len = len;
	return dhcp_input(&t_ctx, &p);
}

/**
 * read_reply() - read the frame dhcp_input() wrote and check its headers
 * @bootp:	filled with a pointer to the BOOTP message in a static buffer
 * @dst:	filled with the IPv4 destination, host order
 *
 * Return: BOOTP length, or 0 if no valid frame was written
 */
static size_t read_reply(const uint8_t **bootp, uint32_t *dst)
{
	static uint8_t f[2048];
	ssize_t n = recv(t_peer, f, sizeof(f), MSG_DONTWAIT);
	struct in6_addr s6, d6;
	size_t ulen;

	if (n < 14 + 20 + 8)
		return 0;
	CHECK(!memcmp(f, mac_a, 6));
	CHECK(f[12] == 0x08 && f[13] == 0x00);
	CHECK(csum_ip4_header(f + 14, 20) == 0);
	CHECK(f[14 + 9] == IPPROTO_UDP);
	CHECK(!memcmp(f + 14 + 12, &t_ctx.gw4, 4));
	memcpy(dst, f + 14 + 16, 4);
	*dst = ntohl(*dst);
	CHECK(f[34] == 0 && f[35] == 67 && f[36] == 0 && f[37] == 68);
	ulen = (size_t)f[38] << 8 | f[39];
	CHECK(ulen == (size_t)n - 34);
	inany_from_v4(&s6, t_ctx.gw4);
	inany_from_v4(&d6, (struct in_addr){htonl(*dst)});
	CHECK(csum_fold(csum_add(ip_pseudo_csum(&s6, &d6, IPPROTO_UDP, ulen),
	                         f + 34, ulen)) == 0);
	*bootp = f + 42;
	return ulen - 8;
}

/**
 * reply_type() - the message type option of a reply
 * @bootp:	reply
 * @len:	its length
 *
 * Return: the type, or 0 if absent
 */
static uint8_t reply_type(const uint8_t *bootp, size_t len)
{
	uint8_t olen = 0;
	const uint8_t *v = find_opt(bootp, len, OPT_MSG_TYPE, &olen);

	return v && olen == 1 ? v[0] : 0;
}

static void test_offer_contents(void)
{
	const uint8_t *b, *v;
	uint32_t dst, yi;
	uint8_t olen;
	size_t len;

	setup();
	CHECK(client_send(mac_a, discover_opts, sizeof(discover_opts), 0,
	                  true));
	len = read_reply(&b, &dst);
	CHECK(len >= DHCP_REPLY_MIN);
	if (len) {
		CHECK(dst == INADDR_BROADCAST);
		CHECK(b[0] == 2);
		CHECK(!memcmp(b + 4, "\x12\x34\x56\x78", 4));
		memcpy(&yi, b + 16, 4);
		CHECK(ntohl(yi) == 0x0a00020f);
		CHECK(!memcmp(b + 28, mac_a, 6));
		CHECK(reply_type(b, len) == DHCPOFFER);
		v = find_opt(b, len, OPT_SERVER_ID, &olen);
		CHECK(v && olen == 4 && !memcmp(v, &t_ctx.gw4, 4));
		v = find_opt(b, len, OPT_ROUTER, &olen);
		CHECK(v && olen == 4 && !memcmp(v, &t_ctx.gw4, 4));
		v = find_opt(b, len, OPT_SUBNET_MASK, &olen);
		CHECK(v && olen == 4 && !memcmp(v, "\xff\xff\xff\x00", 4));
		v = find_opt(b, len, OPT_DNS, &olen);
		CHECK(v && olen == 4 && !memcmp(v, &t_ctx.dns4, 4));
		v = find_opt(b, len, OPT_LEASE_TIME, &olen);
		CHECK(v && olen == 4 && !memcmp(v, "\x00\x01\x51\x80", 4));
		v = find_opt(b, len, OPT_MTU, &olen);
		CHECK(v && olen == 2 && v[0] == 0x05 && v[1] == 0xdc);
	}
	teardown();
}

static void test_offer_without_dns(void)
{
	const uint8_t *b;
	uint32_t dst;
	uint8_t olen;
	size_t len;

	setup();
	t_opts.disable_dns = true;
	CHECK(client_send(mac_a, discover_opts, sizeof(discover_opts), 0,
	                  true));
	len = read_reply(&b, &dst);
	CHECK(len > 0);
	if (len) {
		CHECK(reply_type(b, len) == DHCPOFFER);
		CHECK(!find_opt(b, len, OPT_DNS, &olen));
		CHECK(find_opt(b, len, OPT_ROUTER, &olen));
	}
	teardown();
}

static void test_leases(void)
{
	static const uint8_t req15[] = {53, 1,  3, 50, 4, 10, 0, 2,
	                                15, 54, 4, 10, 0, 2,  2, 255};
	static const uint8_t other_server[] = {53, 1,  3, 50, 4, 10, 0, 2,
	                                       15, 54, 4, 10, 0, 2,  1, 255};
	static const uint8_t release[] = {53, 1, 7, 54, 4, 10, 0, 2, 2, 255};
	const uint8_t *b;
	uint32_t dst, yi;
	size_t len;

	setup();
	/* A gets .15 and keeps it; B gets .16. */
	client_send(mac_a, discover_opts, sizeof(discover_opts), 0, true);
	len = read_reply(&b, &dst);
	CHECK(len && b[19] == 15);
	client_send(mac_a, req15, sizeof(req15), 0, true);
	len = read_reply(&b, &dst);
	CHECK(len && reply_type(b, len) == DHCPACK && b[19] == 15);
	client_send(mac_b, discover_opts, sizeof(discover_opts), 0, true);
	len = read_reply(&b, &dst);
	CHECK(len && reply_type(b, len) == DHCPOFFER && b[19] == 16);
	/* B can't have A's address. */
	client_send(mac_b, req15, sizeof(req15), 0, true);
	len = read_reply(&b, &dst);
	CHECK(len && reply_type(b, len) == DHCPNAK);
	memcpy(&yi, b + 16, 4);
	CHECK(yi == 0);
	/* A request for another server's offer gets no answer. */
	CHECK(client_send(mac_a, other_server, sizeof(other_server), 0, true));
	CHECK(read_reply(&b, &dst) == 0);
	/* A renewing client is answered at its address. */
	teardown();

	setup();
	/* After A releases .15, B's DISCOVER gets .15. */
	client_send(mac_a, discover_opts, sizeof(discover_opts), 0, true);
	read_reply(&b, &dst);
	client_send(mac_a, release, sizeof(release), 0x0a00020f, true);
	CHECK(read_reply(&b, &dst) == 0);
	client_send(mac_b, discover_opts, sizeof(discover_opts), 0, true);
	len = read_reply(&b, &dst);
	CHECK(len && b[19] == 15);
	teardown();
}

static void test_renew_unicast(void)
{
	static const uint8_t renew[] = {53, 1, 3, 255};
	const uint8_t *b;
	uint32_t dst = 0;
	size_t len;

	setup();
	client_send(mac_a, discover_opts, sizeof(discover_opts), 0, true);
	read_reply(&b, &dst);
	/* RENEWING: ciaddr set, no option 50, broadcast flag clear. */
	CHECK(client_send(mac_a, renew, sizeof(renew), 0x0a00020f, false));
	len = read_reply(&b, &dst);
	CHECK(len && reply_type(b, len) == DHCPACK);
	CHECK(dst == 0x0a00020f);
	/* The same with the broadcast flag: broadcast. */
	CHECK(client_send(mac_a, renew, sizeof(renew), 0x0a00020f, true));
	len = read_reply(&b, &dst);
	CHECK(len && reply_type(b, len) == DHCPACK);
	CHECK(dst == INADDR_BROADCAST);
	teardown();
}

static void test_not_for_us(void)
{
	static uint8_t l4[8 + 512];
	size_t n = 8 + build_msg(l4 + 8, mac_a, discover_opts,
	                         sizeof(discover_opts));
	struct pkt p = {0};

	setup();
	l4[1] = 68;
	l4[3] = 67;
	l4[4] = (uint8_t)(n >> 8);
	l4[5] = (uint8_t)n;
	inany_from_v4(&p.src, (struct in_addr){0});
	/* A DHCP server elsewhere: forwarded as ordinary UDP. */
	inany_from_v4(&p.dst, (struct in_addr){htonl(0xc6120001)});
	p.proto = IPPROTO_UDP;
	p.l4 = l4;
	p.l4len = n;
	CHECK(!dhcp_input(&t_ctx, &p));
	/* Other port. */
	inany_from_v4(&p.dst, (struct in_addr){htonl(INADDR_BROADCAST)});
	l4[3] = 68;
	CHECK(!dhcp_input(&t_ctx, &p));
	/* Ours, but the UDP length runs beyond the packet. */
	l4[3] = 67;
	l4[4] = 0x10;
	CHECK(dhcp_input(&t_ctx, &p));
	CHECK(t_ctx.stats.drops[DROP_BAD_LENGTH] == 1);
	/* Ours, but not DHCP: consumed, counted, unanswered. */
	l4[4] = (uint8_t)(n >> 8);
	l4[8 + BOOTP_HDR_LEN] = 0;
	CHECK(dhcp_input(&t_ctx, &p));
	CHECK(t_ctx.stats.drops[DROP_BAD_LENGTH] == 2);
	CHECK(recv(t_peer, l4, 1, MSG_DONTWAIT) < 0);
	/* IPv6 never reaches the server. */
	p.v6 = true;
	CHECK(!dhcp_input(&t_ctx, &p));
	teardown();
}

const struct unit_case unit_cases[] = {
        {"parse a DISCOVER", test_parse_discover},
        {"parse a REQUEST with options 50 and 54", test_parse_request},
        {"truncated messages are rejected", test_parse_truncated},
        {"bad op, htype, hlen or magic cookie", test_parse_bad_header},
        {"option overrunning the message", test_parse_option_overrun},
        {"options with wrong lengths", test_parse_bad_option_lengths},
        {"no message type", test_parse_missing_type},
        {"pad and end options", test_parse_pad_and_end},
        {"OFFER carries address and options", test_offer_contents},
        {"no DNS option with --disable-dns", test_offer_without_dns},
        {"leases by MAC, NAK, release", test_leases},
        {"RENEWING client gets a unicast ACK", test_renew_unicast},
        {"datagrams not for the server", test_not_for_us},
        {NULL, NULL},
};
