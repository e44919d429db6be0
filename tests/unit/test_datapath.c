// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: malformed guest frames are counted, dropped, harmless */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <net/if_arp.h>
#include <netinet/icmp6.h>
#include <netinet/if_ether.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/core/ctx.h"
#include "driver/flow/flow.h"
#include "driver/stack/dhcp.h"
#include "driver/stack/eth.h"
#include "driver/stack/frag.h"
#include "driver/stack/ndp.h"
#include "driver/udp/ping.h"
#include "driver/thread/tap_read.h"
#include "driver/stack/tap_write.h"
#include "driver/tcp/tcp.h"
#include "driver/udp/udp.h"
#include "tests/unit/fakectx.h"
#include "tests/unit/unit.h"

/*
 * These tests run as root outside any sandbox, so no frame here may make
 * tapir open a host socket: nothing valid goes to the gateway or DNS address
 * except ICMP (answered locally), and everything else is addressed to
 * 10.0.2.50 or fd00::50, inside the virtual network, which tapir answers
 * with net-unreachable on its own, or to broadcast and multicast addresses
 * no host socket may reach.
 */
#define GUEST4 0x0a000264   /* 10.0.2.100 */
#define GW4 0x0a000202      /* 10.0.2.2 */
#define NOWHERE4 0x0a000232 /* 10.0.2.50 */
#define NOWHERE6 "fd00::50"
#define GUEST6 "fd00::100"
#define VNET_LEN 10
#define FUZZ_FRAMES 3000
#define FUZZ_MAX_LEN 2000

static const uint8_t guest_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static const uint8_t gw_mac[6] = {0x52, 0x55, 0x0a, 0x00, 0x02, 0x02};

static struct opts t_opts;
static struct ctx t_ctx;
static int t_peer = -1;
static uint8_t rx[TAP_FRAME_MAX + 64];

/**
 * struct tframe - a frame under construction
 * @d:		Ethernet header onwards
 * @len:	bytes used in @d
 * @vh:		virtio_net_hdr to pass along, if @has_vh
 * @has_vh:	whether the frame comes with a vnet header
 */
struct tframe {
	uint8_t d[FUZZ_MAX_LEN + 64];
	size_t len;
	struct virtio_net_hdr vh;
	bool has_vh;
};

/**
 * setup() - a context as loop_prepare() builds it, with a socketpair tap
 *
 * The tap is an AF_UNIX datagram socketpair: frames tapir sends to the
 * guest are read back from @t_peer, and frames written to @t_peer reach
 * tapir's tap read path once the loop runs.
 */
static void setup(void)
{
	t_peer = fake_ctx_init(&t_ctx, &t_opts, true, guest_mac);
	t_ctx.base = event_base_new();
	if (!t_ctx.base || flow_init(&t_ctx) || tcp_init(&t_ctx) ||
	    udp_init(&t_ctx) || ping_init(&t_ctx) || frag_init(&t_ctx) ||
	    ndp_init(&t_ctx))
		abort();
}

/**
 * teardown() - undo setup(), in loop_cleanup()'s order
 */
static void teardown(void)
{
	ndp_cleanup(&t_ctx);
	dhcp_cleanup(&t_ctx);
	frag_cleanup(&t_ctx);
	ping_cleanup(&t_ctx);
	udp_cleanup(&t_ctx);
	tcp_cleanup(&t_ctx);
	flow_cleanup(&t_ctx);
	tapio_stop(&t_ctx);
	event_base_free(t_ctx.base);
	t_ctx.base = NULL;
	close(t_peer);
	t_peer = -1;
}

/**
 * drain() - read every frame tapir sent to the guest so far
 * @last_len:	if not NULL, the length of the last one (0 if none)
 *
 * The last frame stays in @rx, vnet header included.
 *
 * Return: number of frames
 */
static int drain(size_t *last_len)
{
	int n = 0;
	ssize_t r;

	if (last_len)
		*last_len = 0;
	while ((r = recv(t_peer, rx, sizeof(rx), 0)) >= 0) {
		n++;
		if (last_len)
			*last_len = (size_t)r;
	}
	return n;
}

/**
 * feed() - hand a frame to eth_input() in an exactly-sized heap buffer
 * @t:		frame, at least 14 bytes
 *
 * The exact size lets AddressSanitizer catch a parser reading one byte past
 * the frame, which a large static buffer would hide.
 */
static void feed(const struct tframe *t)
{
	struct virtio_net_hdr *vh = NULL;
	struct frame f;

	f.data = malloc(t->len);
	if (!f.data)
		abort();
	memcpy(f.data, t->d, t->len);
	f.len = t->len;
	if (t->has_vh) {
		vh = malloc(sizeof(*vh));
		if (!vh)
			abort();
		*vh = t->vh;
	}
	f.vh = vh;
	t_ctx.vnet_len = t->has_vh ? VNET_LEN : 0;
	eth_input(&t_ctx, &f);
	free(vh);
	free(f.data);
}

/**
 * feed_tap() - write a frame into the tap and let the loop read it
 * @buf:	vnet header (if the tap has them) and frame, any length
 * @len:	bytes
 */
static void feed_tap(const void *buf, size_t len)
{
	if (send(t_peer, buf, len, 0) != (ssize_t)len)
		abort();
	event_base_loop(t_ctx.base, EVLOOP_NONBLOCK);
}

/**
 * sum16() - one's complement sum of big-endian 16-bit words, unfolded
 * @sum:	running sum
 * @b:		data
 * @len:	bytes; an odd last byte is padded with zero
 *
 * Independent of driver/stack/csum.c on purpose: the tests check its results.
 *
 * Return: new running sum
 */
static uint32_t sum16(uint32_t sum, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (i < len)
		sum += (uint32_t)b[i] << 8;
	return sum;
}

/**
 * fold() - final checksum of a running sum
 * @sum:	running sum
 *
 * Return: checksum, host order; 0 over data with a correct checksum
 */
static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/**
 * put16() - store a big-endian 16-bit value
 * @p:		where
 * @v:		value
 */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/**
 * get16() - load a big-endian 16-bit value
 * @p:		where
 *
 * Return: the value
 */
static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/**
 * tf_eth() - start a frame from the guest to the gateway's MAC
 * @t:		frame, reset
 * @type:	ethertype
 */
static void tf_eth(struct tframe *t, uint16_t type)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->d, gw_mac, 6);
	memcpy(t->d + 6, guest_mac, 6);
	put16(t->d + 12, type);
	t->len = 14;
}

/**
 * ip4_fix() - recompute the IPv4 header checksum after an edit
 * @t:		IPv4 frame with at least ihl*4 header bytes
 */
static void ip4_fix(struct tframe *t)
{
	size_t hlen = (size_t)(t->d[14] & 15) * 4;

	put16(t->d + 24, 0);
	put16(t->d + 24, fold(sum16(0, t->d + 14, hlen)));
}

/**
 * l4_csum_offset() - where an L4 protocol keeps its checksum
 * @proto:	IPPROTO_*
 *
 * Return: offset in the L4 header, or -1 for protocols without one here
 */
static int l4_csum_offset(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return 16;
	case IPPROTO_UDP:
		return 6;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return 2;
	default:
		return -1;
	}
}

/**
 * l4_fix() - recompute the L4 checksum of a frame without IPv6 extensions
 * @t:		IPv4 frame, or IPv6 frame whose next header is the L4 one
 * @proto:	L4 protocol
 *
 * Return: 0, or -1 if the frame is too short to hold the checksum field
 */
static int l4_fix(struct tframe *t, uint8_t proto)
{
	bool v6 = get16(t->d + 12) == ETHERTYPE_IPV6;
	size_t l4off = v6 ? 54 : 14 + (size_t)(t->d[14] & 15) * 4;
	int off = l4_csum_offset(proto);
	size_t l4len;
	uint32_t sum = 0;

	if (off < 0 || t->len < l4off + (size_t)off + 2)
		return -1;
	l4len = t->len - l4off;
	if (v6)
		sum = sum16(0, t->d + 22, 32);
	else if (proto != IPPROTO_ICMP)
		sum = sum16(0, t->d + 26, 8);
	if (v6 || proto != IPPROTO_ICMP)
		sum += proto + (uint32_t)l4len;
	put16(t->d + l4off + off, 0);
	put16(t->d + l4off + off, fold(sum16(sum, t->d + l4off, l4len)));
	/* UDP sends a computed 0 as all ones: 0 means "no checksum". */
	if (proto == IPPROTO_UDP && !get16(t->d + l4off + off))
		put16(t->d + l4off + off, 0xffff);
	return 0;
}

/**
 * tf_ip4() - build an IPv4 frame from the guest, checksums correct
 * @t:		frame, reset
 * @dst:	destination, host order
 * @proto:	L4 protocol
 * @l4:		L4 header and payload
 * @l4len:	its length
 */
static void tf_ip4(struct tframe *t, uint32_t dst, uint8_t proto,
                   const void *l4, size_t l4len)
{
	uint8_t *ip = t->d + 14;

	tf_eth(t, ETHERTYPE_IP);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + l4len));
	put16(ip + 4, 0x1234);
	put16(ip + 6, IP_DF);
	ip[8] = 64;
	ip[9] = proto;
	put16(ip + 12, GUEST4 >> 16);
	put16(ip + 14, GUEST4 & 0xffff);
	put16(ip + 16, (uint16_t)(dst >> 16));
	put16(ip + 18, (uint16_t)dst);
	memcpy(ip + 20, l4, l4len);
	t->len = 34 + l4len;
	ip4_fix(t);
	l4_fix(t, proto);
}

/**
 * tf_ip6() - build an IPv6 frame from the guest, checksums correct
 * @t:		frame, reset
 * @dst:	destination literal
 * @nh:		next header
 * @l4:		payload after the fixed header
 * @l4len:	its length
 */
static void tf_ip6(struct tframe *t, const char *dst, uint8_t nh,
                   const void *l4, size_t l4len)
{
	struct ip6_hdr h = {0};

	tf_eth(t, ETHERTYPE_IPV6);
	h.ip6_flow = htonl(6U << 28);
	h.ip6_plen = htons((uint16_t)l4len);
	h.ip6_nxt = nh;
	h.ip6_hlim = 255;
	inet_pton(AF_INET6, GUEST6, &h.ip6_src);
	inet_pton(AF_INET6, dst, &h.ip6_dst);
	memcpy(t->d + 14, &h, sizeof(h));
	memcpy(t->d + 54, l4, l4len);
	t->len = 54 + l4len;
	l4_fix(t, nh);
}

/**
 * tcp_hdr() - a 20-byte TCP header from port 40000 to 80
 * @b:		at least 20 bytes
 * @flags:	TH_* flags
 *
 * Return: 20
 */
static size_t tcp_hdr(uint8_t *b, uint8_t flags)
{
	memset(b, 0, 20);
	put16(b, 40000);
	put16(b + 2, 80);
	b[7] = 1; /* seq */
	b[12] = 5 << 4;
	b[13] = flags;
	put16(b + 14, 65535);
	return 20;
}

/**
 * udp_hdr() - a UDP datagram from port 40000 to @dport with @n payload bytes
 * @b:		at least 8 + @n bytes
 * @dport:	destination port
 * @n:		payload bytes (filled with 'x')
 *
 * Return: 8 + @n
 */
static size_t udp_hdr(uint8_t *b, uint16_t dport, size_t n)
{
	memset(b, 0, 8);
	put16(b, 40000);
	put16(b + 2, dport);
	put16(b + 4, (uint16_t)(8 + n));
	memset(b + 8, 'x', n);
	return 8 + n;
}

/**
 * echo_req() - an ICMP or ICMPv6 echo request with 8 payload bytes
 * @b:		at least 16 bytes
 * @v6:		ICMPv6
 *
 * Return: 16
 */
static size_t echo_req(uint8_t *b, bool v6)
{
	memset(b, 0, 16);
	b[0] = v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;
	put16(b + 4, 0x4242);
	put16(b + 6, 7);
	memcpy(b + 8, "tapir!!!", 8);
	return 16;
}

/* ---- the catalogue: one builder per malformation ------------------------ */

/**
 * m_ip4_short() - IPv4 header truncated
 * @t:		frame to build
 */
static void m_ip4_short(struct tframe *t)
{
	tf_eth(t, ETHERTYPE_IP);
	t->d[14] = 0x45;
	t->len = 14 + 19;
}

/**
 * m_ip6_short() - IPv6 header truncated
 * @t:		frame to build
 */
static void m_ip6_short(struct tframe *t)
{
	tf_eth(t, ETHERTYPE_IPV6);
	t->d[14] = 0x60;
	t->len = 14 + 39;
}

/**
 * m_ip4_version() - IPv4 version 6 in an IPv4 frame
 * @t:		frame to build
 */
static void m_ip4_version(struct tframe *t)
{
	uint8_t l4[20];
	size_t len;

	len = tcp_hdr(l4, TH_SYN);
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, len);
	t->d[14] = 0x65;
	ip4_fix(t);
}

/**
 * m_ip4_ihl_small() - IPv4 ihl < 5
 * @t:		frame to build
 */
static void m_ip4_ihl_small(struct tframe *t)
{
	uint8_t l4[20];
	size_t len;

	len = tcp_hdr(l4, TH_SYN);
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, len);
	t->d[14] = 0x44;
	ip4_fix(t);
}

/**
 * m_ip4_ihl_beyond_frame() - IPv4 ihl*4 beyond the frame
 * @t:		frame to build
 */
static void m_ip4_ihl_beyond_frame(struct tframe *t)
{
	uint8_t l4[8];
	size_t len;

	/* 60 header bytes claimed, 28 present. */
	len = udp_hdr(l4, 9, 0);
	tf_ip4(t, NOWHERE4, IPPROTO_UDP, l4, len);
	t->d[14] = 0x4f;
}

/**
 * m_ip4_totlen_beyond_frame() - IPv4 tot_len beyond the frame
 * @t:		frame to build
 */
static void m_ip4_totlen_beyond_frame(struct tframe *t)
{
	uint8_t l4[20];
	size_t len;

	len = tcp_hdr(l4, TH_SYN);
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, len);
	put16(t->d + 16, 41);
	ip4_fix(t);
}

/**
 * m_ip4_totlen_below_ihl() - IPv4 tot_len < ihl*4
 * @t:		frame to build
 */
static void m_ip4_totlen_below_ihl(struct tframe *t)
{
	uint8_t l4[20];
	size_t len;

	len = tcp_hdr(l4, TH_SYN);
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, len);
	put16(t->d + 16, 19);
	ip4_fix(t);
}

/**
 * m_ip4_bad_csum() - IPv4 header checksum wrong
 * @t:		frame to build
 */
static void m_ip4_bad_csum(struct tframe *t)
{
	uint8_t l4[16];
	size_t len;

	len = echo_req(l4, false);
	tf_ip4(t, GW4, IPPROTO_ICMP, l4, len);
	t->d[24] ^= 0x01;
}

/**
 * m_tcp_short() - TCP header truncated
 * @t:		frame to build
 */
static void m_tcp_short(struct tframe *t)
{
	uint8_t l4[20];

	tcp_hdr(l4, TH_SYN);
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, 19);
}

/**
 * m_tcp_doff_small() - TCP doff < 5
 * @t:		frame to build
 */
static void m_tcp_doff_small(struct tframe *t)
{
	uint8_t l4[20];

	tcp_hdr(l4, TH_SYN);
	l4[12] = 4 << 4;
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, 20);
}

/**
 * m_tcp_doff_beyond() - TCP doff beyond the packet
 * @t:		frame to build
 */
static void m_tcp_doff_beyond(struct tframe *t)
{
	uint8_t l4[24];

	tcp_hdr(l4, TH_SYN);
	l4[12] = 7 << 4; /* 28 bytes of header claimed, 24 present */
	memset(l4 + 20, TCPOPT_NOP, 4);
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, 24);
}

/**
 * m_tcp_option_overrun() - TCP SYN option overruns the header
 * @t:		frame to build
 */
static void m_tcp_option_overrun(struct tframe *t)
{
	uint8_t l4[24];

	tcp_hdr(l4, TH_SYN);
	l4[12] = 6 << 4;
	l4[20] = TCPOPT_NOP;
	l4[21] = TCPOPT_NOP;
	l4[22] = TCPOPT_MAXSEG;
	l4[23] = TCPOLEN_MAXSEG; /* runs 2 bytes past the header */
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, 24);
}

/**
 * m_tcp_bad_csum() - TCP checksum wrong
 * @t:		frame to build
 */
static void m_tcp_bad_csum(struct tframe *t)
{
	uint8_t l4[20];
	size_t len;

	len = tcp_hdr(l4, TH_SYN);
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, len);
	t->d[34 + 16] ^= 0x40;
}

/**
 * m_tcp_bad_csum_vnet_no_needs_csum() - TCP checksum wrong, vnet header without NEEDS_CSUM
 * @t:		frame to build
 */
static void m_tcp_bad_csum_vnet_no_needs_csum(struct tframe *t)
{
	m_tcp_bad_csum(t);
	t->has_vh = true;
}

/**
 * m_tcp6_bad_csum() - TCP over IPv6 checksum wrong
 * @t:		frame to build
 */
static void m_tcp6_bad_csum(struct tframe *t)
{
	uint8_t l4[20];
	size_t len;

	len = tcp_hdr(l4, TH_SYN);
	tf_ip6(t, NOWHERE6, IPPROTO_TCP, l4, len);
	t->d[54 + 16] ^= 0x40;
}

/**
 * m_udp_short() - UDP header truncated
 * @t:		frame to build
 */
static void m_udp_short(struct tframe *t)
{
	uint8_t l4[8];

	udp_hdr(l4, 9, 0);
	tf_ip4(t, NOWHERE4, IPPROTO_UDP, l4, 7);
}

/**
 * m_udp_len_beyond_ip() - UDP length beyond the IP length
 * @t:		frame to build
 */
static void m_udp_len_beyond_ip(struct tframe *t)
{
	uint8_t l4[12];

	udp_hdr(l4, 9, 4);
	put16(l4 + 4, 13);
	tf_ip4(t, NOWHERE4, IPPROTO_UDP, l4, 12);
}

/**
 * m_udp_len_below_header() - UDP length < 8
 * @t:		frame to build
 */
static void m_udp_len_below_header(struct tframe *t)
{
	uint8_t l4[12];

	udp_hdr(l4, 9, 4);
	put16(l4 + 4, 7);
	tf_ip4(t, NOWHERE4, IPPROTO_UDP, l4, 12);
}

/**
 * m_udp_bad_csum() - UDP checksum wrong
 * @t:		frame to build
 */
static void m_udp_bad_csum(struct tframe *t)
{
	uint8_t l4[12];
	size_t len;

	len = udp_hdr(l4, 9, 4);
	tf_ip4(t, NOWHERE4, IPPROTO_UDP, l4, len);
	t->d[34 + 8] ^= 0x01; /* payload, so the stored sum is now wrong */
}

/**
 * m_udp6_zero_csum() - UDP over IPv6 without checksum
 * @t:		frame to build
 */
static void m_udp6_zero_csum(struct tframe *t)
{
	uint8_t l4[12];
	size_t len;

	/* Optional in IPv4 only: RFC 8200 8.1. */
	len = udp_hdr(l4, 9, 4);
	tf_ip6(t, NOWHERE6, IPPROTO_UDP, l4, len);
	put16(t->d + 54 + 6, 0);
}

/**
 * m_icmp_bad_csum() - ICMP checksum wrong
 * @t:		frame to build
 */
static void m_icmp_bad_csum(struct tframe *t)
{
	uint8_t l4[16];
	size_t len;

	len = echo_req(l4, false);
	tf_ip4(t, GW4, IPPROTO_ICMP, l4, len);
	t->d[34 + 9] ^= 0x01;
}

/**
 * m_icmp_short() - ICMP header truncated
 * @t:		frame to build
 */
static void m_icmp_short(struct tframe *t)
{
	uint8_t l4[16];

	echo_req(l4, false);
	tf_ip4(t, GW4, IPPROTO_ICMP, l4, 7);
}

/**
 * m_icmp6_bad_csum() - ICMPv6 checksum wrong
 * @t:		frame to build
 */
static void m_icmp6_bad_csum(struct tframe *t)
{
	uint8_t l4[16];
	size_t len;

	len = echo_req(l4, true);
	tf_ip6(t, "fd00::2", IPPROTO_ICMPV6, l4, len);
	t->d[54 + 9] ^= 0x01;
}

/**
 * m_ip6_plen_beyond_frame() - IPv6 payload length beyond the frame
 * @t:		frame to build
 */
static void m_ip6_plen_beyond_frame(struct tframe *t)
{
	uint8_t l4[16];
	size_t len;

	len = echo_req(l4, true);
	tf_ip6(t, "fd00::2", IPPROTO_ICMPV6, l4, len);
	put16(t->d + 18, 17);
}

/**
 * m_ip6_version() - IPv6 version 4 in an IPv6 frame
 * @t:		frame to build
 */
static void m_ip6_version(struct tframe *t)
{
	uint8_t l4[16];
	size_t len;

	len = echo_req(l4, true);
	tf_ip6(t, "fd00::2", IPPROTO_ICMPV6, l4, len);
	t->d[14] = 0x40;
}

/**
 * m_ip6_ext_overrun() - IPv6 extension header overruns the packet
 * @t:		frame to build
 */
static void m_ip6_ext_overrun(struct tframe *t)
{
	uint8_t ext[16] = {IPPROTO_ICMPV6, 2};

	/* A hop-by-hop header claiming 24 bytes in a 16-byte payload. */
	tf_ip6(t, NOWHERE6, IPPROTO_HOPOPTS, ext, sizeof(ext));
}

/**
 * m_ip6_ext_chain_overrun() - IPv6 extension chain overruns the packet
 * @t:		frame to build
 */
static void m_ip6_ext_chain_overrun(struct tframe *t)
{
	uint8_t ext[16] = {IPPROTO_DSTOPTS, 0};

	/* Two 8-byte headers fill the payload; the third lies past it. */
	ext[8] = IPPROTO_ROUTING;
	tf_ip6(t, NOWHERE6, IPPROTO_HOPOPTS, ext, sizeof(ext));
}

/**
 * m_ip6_ext_truncated() - IPv6 extension header truncated
 * @t:		frame to build
 */
static void m_ip6_ext_truncated(struct tframe *t)
{
	uint8_t ext[4] = {IPPROTO_ICMPV6, 0};

	tf_ip6(t, NOWHERE6, IPPROTO_DSTOPTS, ext, sizeof(ext));
}

/**
 * m_ip6_mapped_dst() - IPv6 echo to an IPv4-mapped gateway address
 * @t:		frame to build
 */
static void m_ip6_mapped_dst(struct tframe *t)
{
	uint8_t l4[16];
	size_t len;

	/* Taken as IPv4, it would be answered locally with an IPv4 frame. */
	len = echo_req(l4, true);
	tf_ip6(t, "::ffff:10.0.2.2", IPPROTO_ICMPV6, l4, len);
}

/**
 * m_ip6_mapped_src() - IPv6 echo from an IPv4-mapped address
 * @t:		frame to build
 */
static void m_ip6_mapped_src(struct tframe *t)
{
	uint8_t l4[16];
	size_t len;

	len = echo_req(l4, true);
	tf_ip6(t, "fd00::2", IPPROTO_ICMPV6, l4, len);
	inet_pton(AF_INET6, "::ffff:10.0.2.100", t->d + 22);
	l4_fix(t, IPPROTO_ICMPV6);
}

/**
 * m_tcp6_mapped_dst() - TCP over IPv6 to an IPv4-mapped address
 * @t:		frame to build
 */
static void m_tcp6_mapped_dst(struct tframe *t)
{
	uint8_t l4[20];
	size_t len;

	/* Taken as IPv4: 10.0.2.50, answered with an ICMP error. */
	len = tcp_hdr(l4, TH_SYN);
	tf_ip6(t, "::ffff:10.0.2.50", IPPROTO_TCP, l4, len);
}

/**
 * m_arp_short() - ARP truncated
 * @t:		frame to build
 */
static void m_arp_short(struct tframe *t)
{
	tf_eth(t, ETHERTYPE_ARP);
	t->len = 14 + 27;
}

/**
 * arp_req() - an ARP request from the guest for @tpa
 * @t:		frame, reset
 * @tpa:	target address, host order
 */
static void arp_req(struct tframe *t, uint32_t tpa)
{
	struct ether_arp a = {0};

	tf_eth(t, ETHERTYPE_ARP);
	memset(t->d, 0xff, 6);
	a.arp_hrd = htons(ARPHRD_ETHER);
	a.arp_pro = htons(ETHERTYPE_IP);
	a.arp_hln = 6;
	a.arp_pln = 4;
	a.arp_op = htons(ARPOP_REQUEST);
	memcpy(a.arp_sha, guest_mac, 6);
	put16(a.arp_spa, GUEST4 >> 16);
	put16(a.arp_spa + 2, GUEST4 & 0xffff);
	put16(a.arp_tpa, (uint16_t)(tpa >> 16));
	put16(a.arp_tpa + 2, (uint16_t)tpa);
	memcpy(t->d + 14, &a, sizeof(a));
	t->len = 14 + sizeof(a);
}

/**
 * m_arp_hlen() - ARP hlen 8
 * @t:		frame to build
 */
static void m_arp_hlen(struct tframe *t)
{
	arp_req(t, GW4);
	t->d[14 + 4] = 8;
}

/**
 * m_arp_plen() - ARP plen 16
 * @t:		frame to build
 */
static void m_arp_plen(struct tframe *t)
{
	arp_req(t, GW4);
	t->d[14 + 5] = 16;
}

/**
 * m_ethertype() - unknown ethertype
 * @t:		frame to build
 */
static void m_ethertype(struct tframe *t)
{
	tf_eth(t, 0x88cc); /* LLDP */
	t->len = 60;
}

/**
 * m_vnet_gso_unknown() - vnet gso_type unknown
 * @t:		frame to build
 */
static void m_vnet_gso_unknown(struct tframe *t)
{
	uint8_t l4[20];
	size_t len;

	len = tcp_hdr(l4, TH_ACK);
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, len);
	t->has_vh = true;
	t->vh.gso_type = 7;
	t->vh.gso_size = 1000;
}

/**
 * m_vnet_gso_size_zero() - vnet gso_type with gso_size 0
 * @t:		frame to build
 */
static void m_vnet_gso_size_zero(struct tframe *t)
{
	uint8_t l4[20];
	size_t len;

	len = tcp_hdr(l4, TH_ACK);
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, len);
	t->has_vh = true;
	t->vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	t->vh.hdr_len = 54;
}

/**
 * m_vnet_csum_beyond_frame() - vnet csum_start+csum_offset beyond the frame
 * @t:		frame to build
 */
static void m_vnet_csum_beyond_frame(struct tframe *t)
{
	uint8_t l4[20];
	size_t len;

	len = tcp_hdr(l4, TH_ACK);
	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, len);
	t->has_vh = true;
	t->vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	t->vh.csum_start = 34;
	t->vh.csum_offset = 40; /* 34 + 40 + 2 > 54 */
}

/**
 * vnet_tcp() - a TCP ACK to nowhere with a vnet header asking for TSO
 * @t:		frame to build
 * @gso_type:	the header's gso_type
 * @v6:		over IPv6 rather than IPv4
 */
static void vnet_tcp(struct tframe *t, uint8_t gso_type, bool v6)
{
	uint8_t l4[20];
	size_t len;

	len = tcp_hdr(l4, TH_ACK);
	if (v6)
		tf_ip6(t, NOWHERE6, IPPROTO_TCP, l4, len);
	else
		tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, len);
	t->has_vh = true;
	t->vh.gso_type = gso_type;
	t->vh.gso_size = 1000;
}

/**
 * m_vnet_tso4_on_ip6() - TSO for IPv4 on an IPv6 frame
 * @t:		frame to build
 */
static void m_vnet_tso4_on_ip6(struct tframe *t)
{
	vnet_tcp(t, VIRTIO_NET_HDR_GSO_TCPV4, true);
}

/**
 * m_vnet_tso6_on_ip4() - TSO for IPv6 on an IPv4 frame
 * @t:		frame to build
 */
static void m_vnet_tso6_on_ip4(struct tframe *t)
{
	vnet_tcp(t, VIRTIO_NET_HDR_GSO_TCPV6, false);
}

/**
 * m_vnet_tso_ecn() - TSO with the ECN bit, never offered
 * @t:		frame to build
 */
static void m_vnet_tso_ecn(struct tframe *t)
{
	vnet_tcp(t, VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN, false);
}

/**
 * m_vnet_ufo() - UFO (gso_type 3), never offered
 * @t:		frame to build
 */
static void m_vnet_ufo(struct tframe *t)
{
	vnet_tcp(t, VIRTIO_NET_HDR_GSO_UDP, false);
}

/**
 * m_vnet_csum_in_ip_header() - a partial checksum inside the IP header
 * @t:		frame to build
 */
static void m_vnet_csum_in_ip_header(struct tframe *t)
{
	vnet_tcp(t, VIRTIO_NET_HDR_GSO_NONE, false);
	t->vh.gso_size = 0;
	t->vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	t->vh.csum_start = 14 + 10;
	t->vh.csum_offset = 0;
}

/**
 * vnet_udp_partial() - a UDP datagram to nowhere with 40 payload bytes and
 *			a partial checksum at @csum_start
 * @t:		frame to build
 * @csum_start:	from the start of the frame
 */
static void vnet_udp_partial(struct tframe *t, uint16_t csum_start)
{
	uint8_t l4[48];
	size_t len = udp_hdr(l4, 4789, 40);

	tf_ip4(t, NOWHERE4, IPPROTO_UDP, l4, len);
	t->has_vh = true;
	t->vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	t->vh.csum_start = csum_start;
	t->vh.csum_offset = 6;
}

/**
 * m_vnet_csum_in_udp_header() - a partial checksum inside the UDP header
 *				 (it would overwrite the length)
 * @t:		frame to build
 */
static void m_vnet_csum_in_udp_header(struct tframe *t)
{
	vnet_udp_partial(t, 34 + 2);
	t->vh.csum_offset = 2;
}

/**
 * m_vnet_csum_in_fragment() - an inner partial checksum in the first
 *			       fragment of a datagram (it would cover that
 *			       fragment only)
 * @t:		frame to build
 */
static void m_vnet_csum_in_fragment(struct tframe *t)
{
	vnet_udp_partial(t, 34 + 8 + 16);
	put16(t->d + 14 + 6, IP_MF);
	ip4_fix(t);
}

/**
 * m_vnet_csum_in_tcp_payload() - a partial checksum in a TCP payload
 * @t:		frame to build
 */
static void m_vnet_csum_in_tcp_payload(struct tframe *t)
{
	uint8_t l4[40] = {0};
	size_t len = tcp_hdr(l4, TH_ACK);

	tf_ip4(t, NOWHERE4, IPPROTO_TCP, l4, len + 20);
	t->has_vh = true;
	t->vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	t->vh.csum_start = 14 + 20 + 20;
	t->vh.csum_offset = 6;
}

/**
 * m_vnet_tso_csum_in_payload() - TSO whose partial checksum lies past
 *				  the TCP header (an inner one: each
 *				  segment would need its own)
 * @t:		frame to build
 */
static void m_vnet_tso_csum_in_payload(struct tframe *t)
{
	m_vnet_csum_in_tcp_payload(t);
	t->vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	t->vh.gso_size = 1000;
}

/**
 * struct mcase - one malformation and the drop counter it must raise
 * @name:	shown on failure
 * @build:	builds the frame
 * @reason:	the counter
 */
struct mcase {
	const char *name;
	void (*build)(struct tframe *t);
	enum drop_reason reason;
};

static const struct mcase catalogue[] = {
        {"IPv4 header truncated", m_ip4_short, DROP_SHORT_FRAME},
        {"IPv6 header truncated", m_ip6_short, DROP_SHORT_FRAME},
        {"IPv4 version 6 in an IPv4 frame", m_ip4_version, DROP_BAD_LENGTH},
        {"IPv4 ihl < 5", m_ip4_ihl_small, DROP_BAD_LENGTH},
        {"IPv4 ihl*4 beyond the frame", m_ip4_ihl_beyond_frame,
         DROP_BAD_LENGTH},
        {"IPv4 tot_len beyond the frame", m_ip4_totlen_beyond_frame,
         DROP_BAD_LENGTH},
        {"IPv4 tot_len < ihl*4", m_ip4_totlen_below_ihl, DROP_BAD_LENGTH},
        {"IPv4 header checksum wrong", m_ip4_bad_csum, DROP_BAD_CHECKSUM},
        {"TCP header truncated", m_tcp_short, DROP_SHORT_FRAME},
        {"TCP doff < 5", m_tcp_doff_small, DROP_BAD_LENGTH},
        {"TCP doff beyond the packet", m_tcp_doff_beyond, DROP_BAD_LENGTH},
        {"TCP SYN option overruns the header", m_tcp_option_overrun,
         DROP_BAD_LENGTH},
        {"TCP checksum wrong", m_tcp_bad_csum, DROP_BAD_CHECKSUM},
        {"TCP checksum wrong, vnet header without NEEDS_CSUM",
         m_tcp_bad_csum_vnet_no_needs_csum, DROP_BAD_CHECKSUM},
        {"TCP over IPv6 checksum wrong", m_tcp6_bad_csum, DROP_BAD_CHECKSUM},
        {"UDP header truncated", m_udp_short, DROP_SHORT_FRAME},
        {"UDP length beyond the IP length", m_udp_len_beyond_ip,
         DROP_BAD_LENGTH},
        {"UDP length < 8", m_udp_len_below_header, DROP_BAD_LENGTH},
        {"UDP checksum wrong", m_udp_bad_csum, DROP_BAD_CHECKSUM},
        {"UDP over IPv6 without checksum", m_udp6_zero_csum, DROP_BAD_CHECKSUM},
        {"ICMP checksum wrong", m_icmp_bad_csum, DROP_BAD_CHECKSUM},
        {"ICMP header truncated", m_icmp_short, DROP_SHORT_FRAME},
        {"ICMPv6 checksum wrong", m_icmp6_bad_csum, DROP_BAD_CHECKSUM},
        {"IPv6 payload length beyond the frame", m_ip6_plen_beyond_frame,
         DROP_BAD_LENGTH},
        {"IPv6 version 4 in an IPv6 frame", m_ip6_version, DROP_BAD_LENGTH},
        {"IPv6 extension header overruns the packet", m_ip6_ext_overrun,
         DROP_BAD_LENGTH},
        {"IPv6 extension chain overruns the packet", m_ip6_ext_chain_overrun,
         DROP_BAD_LENGTH},
        {"IPv6 extension header truncated", m_ip6_ext_truncated,
         DROP_BAD_LENGTH},
        {"IPv6 to an IPv4-mapped address", m_ip6_mapped_dst, DROP_BAD_ADDRESS},
        {"IPv6 from an IPv4-mapped address", m_ip6_mapped_src,
         DROP_BAD_ADDRESS},
        {"TCP over IPv6 to an IPv4-mapped address", m_tcp6_mapped_dst,
         DROP_BAD_ADDRESS},
        {"ARP truncated", m_arp_short, DROP_SHORT_FRAME},
        {"ARP hlen 8", m_arp_hlen, DROP_BAD_LENGTH},
        {"ARP plen 16", m_arp_plen, DROP_BAD_LENGTH},
        {"unknown ethertype", m_ethertype, DROP_UNKNOWN_ETHERTYPE},
        {"vnet gso_type unknown", m_vnet_gso_unknown, DROP_BAD_VNET_HDR},
        {"vnet gso_type with gso_size 0", m_vnet_gso_size_zero,
         DROP_BAD_VNET_HDR},
        {"vnet csum_start+csum_offset beyond the frame",
         m_vnet_csum_beyond_frame, DROP_BAD_VNET_HDR},
        {"vnet TSO4 on an IPv6 frame", m_vnet_tso4_on_ip6, DROP_BAD_VNET_HDR},
        {"vnet TSO6 on an IPv4 frame", m_vnet_tso6_on_ip4, DROP_BAD_VNET_HDR},
        {"vnet TSO with ECN, never offered", m_vnet_tso_ecn, DROP_BAD_VNET_HDR},
        {"vnet UFO, never offered", m_vnet_ufo, DROP_BAD_VNET_HDR},
        {"vnet csum_start inside the IP header", m_vnet_csum_in_ip_header,
         DROP_BAD_VNET_HDR},
        {"vnet TSO with its partial checksum past the TCP header",
         m_vnet_tso_csum_in_payload, DROP_BAD_VNET_HDR},
        {"vnet csum_start inside the UDP header", m_vnet_csum_in_udp_header,
         DROP_BAD_VNET_HDR},
        {"vnet inner partial checksum in an IP fragment",
         m_vnet_csum_in_fragment, DROP_BAD_VNET_HDR},
        {"vnet partial checksum in a TCP payload", m_vnet_csum_in_tcp_payload,
         DROP_BAD_VNET_HDR},
        {NULL, NULL, 0},
};

/**
 * expect_only_drop() - check that @before → now raised exactly @reason by 1
 * @name:	case, printed on failure
 * @before:	drop counters before the frame
 * @reason:	expected counter
 * @sent:	frames tapir sent meanwhile
 */
static void expect_only_drop(const char *name, const uint64_t *before,
                             enum drop_reason reason, int sent)
{
	bool ok = sent == 0;

	for (int r = 0; r < DROP_REASONS; r++) {
		uint64_t want = before[r] + (r == (int)reason);

		if (t_ctx.stats.drops[r] != want) {
			printf("#   %s: drops %s %llu, want %llu\n", name,
			       drop_reason_name(r),
			       (unsigned long long)t_ctx.stats.drops[r],
			       (unsigned long long)want);
			ok = false;
		}
	}
	if (sent)
		printf("#   %s: %d frames sent to the guest\n", name, sent);
	CHECK(ok);
}

/**
 * test_catalogue() - every malformation raises its own counter, nothing else
 */
static void test_catalogue(void)
{
	static struct tframe t;

	setup();
	for (const struct mcase *m = catalogue; m->name; m++) {
		uint64_t before[DROP_REASONS];

		m->build(&t);
		memcpy(before, t_ctx.stats.drops, sizeof(before));
		feed(&t);
		expect_only_drop(m->name, before, m->reason, drain(NULL));
	}
	teardown();
}

/**
 * test_short_ethernet() - frames below 14 bytes (after a vnet header) count
 * as short on the tap read path, not as received frames
 */
static void test_short_ethernet(void)
{
	static const uint8_t junk[VNET_LEN + 14] = {0xff, 0xff};
	uint64_t before[DROP_REASONS];

	setup();
	CHECK(!tapio_start(&t_ctx));
	memcpy(before, t_ctx.stats.drops, sizeof(before));
	feed_tap(junk, 13);
	feed_tap(junk, 0);
	CHECK(t_ctx.stats.drops[DROP_SHORT_FRAME] ==
	      before[DROP_SHORT_FRAME] + 2);
	CHECK(t_ctx.stats.tap_rx_frames == 0);

	/* With vnet headers 14 bytes are not enough: 10 of them are the header. */
	t_ctx.vnet_len = VNET_LEN;
	feed_tap(junk, 14);
	feed_tap(junk, VNET_LEN + 13);
	CHECK(t_ctx.stats.drops[DROP_SHORT_FRAME] ==
	      before[DROP_SHORT_FRAME] + 4);
	CHECK(t_ctx.stats.tap_rx_frames == 0);
	drain(NULL);
	teardown();
}

/**
 * test_needs_csum_not_verified() - with NEEDS_CSUM the guest kernel left the
 * checksum to us, so a "wrong" one is not a reason to drop
 *
 * The SYN goes to 10.0.2.50, which gets it past the checksum to the
 * forwarding decision: net unreachable, answered with ICMP, no socket.
 */
static void test_needs_csum_not_verified(void)
{
	static struct tframe t;
	uint8_t l4[20];
	size_t len;

	setup();
	len = tcp_hdr(l4, TH_SYN);
	tf_ip4(&t, NOWHERE4, IPPROTO_TCP, l4, len);
	put16(t.d + 34 + 16, 0x1234); /* partial sum, as the kernel leaves it */
	t.has_vh = true;
	t.vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	t.vh.csum_start = 34;
	t.vh.csum_offset = 16;
	feed(&t);
	CHECK(t_ctx.stats.drops[DROP_BAD_CHECKSUM] == 0);
	CHECK(t_ctx.stats.drops[DROP_NO_ROUTE] == 1);
	CHECK(drain(&len) == 1);
	/* vnet header, Ethernet, IPv4, then ICMP destination unreachable. */
	CHECK(len >= VNET_LEN + 34 + 8);
	CHECK(rx[VNET_LEN + 14 + 9] == IPPROTO_ICMP);
	CHECK(rx[VNET_LEN + 34] == ICMP_DEST_UNREACH);
	CHECK(rx[VNET_LEN + 34 + 1] == ICMP_NET_UNREACH);

	/* The same frame without the flag is checked, and dropped. */
	t.vh.flags = 0;
	feed(&t);
	CHECK(t_ctx.stats.drops[DROP_BAD_CHECKSUM] == 1);
	CHECK(drain(NULL) == 0);
	teardown();
}

/**
 * test_offloads_not_offered() - a tap without TSO (--offload=off, or the
 *				 kernel refused it) or without checksum
 *				 offload: frames using them are dropped
 */
static void test_offloads_not_offered(void)
{
	static struct tframe t;

	setup();
	t_ctx.tap.offloads = TUN_F_CSUM;
	vnet_tcp(&t, VIRTIO_NET_HDR_GSO_TCPV4, false);
	feed(&t);
	CHECK(t_ctx.stats.drops[DROP_BAD_VNET_HDR] == 1);
	t_ctx.tap.offloads = 0;
	vnet_tcp(&t, VIRTIO_NET_HDR_GSO_NONE, false);
	t.vh.gso_size = 0;
	t.vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	t.vh.csum_start = 34;
	t.vh.csum_offset = 16;
	feed(&t);
	CHECK(t_ctx.stats.drops[DROP_BAD_VNET_HDR] == 2);
	CHECK(drain(NULL) == 0);
	teardown();
}

/**
 * test_arp_reply() - control: ARP for the gateway is answered with its MAC
 */
static void test_arp_reply(void)
{
	static struct tframe t;
	struct ether_arp a;
	size_t len;

	setup();
	arp_req(&t, GW4);
	feed(&t);
	CHECK(drain(&len) == 1);
	CHECK(len == 14 + sizeof(a));
	if (len == 14 + sizeof(a)) {
		memcpy(&a, rx + 14, sizeof(a));
		CHECK(!memcmp(rx, guest_mac, 6));
		CHECK(!memcmp(rx + 6, gw_mac, 6));
		CHECK(get16(rx + 12) == ETHERTYPE_ARP);
		CHECK(ntohs(a.arp_op) == ARPOP_REPLY);
		CHECK(!memcmp(a.arp_sha, gw_mac, 6));
		CHECK(get16(a.arp_spa) == (GW4 >> 16) &&
		      get16(a.arp_spa + 2) == (GW4 & 0xffff));
		CHECK(!memcmp(a.arp_tha, guest_mac, 6));
		CHECK(get16(a.arp_tpa + 2) == (GUEST4 & 0xffff));
	}
	/* Nobody else's address is answered. */
	arp_req(&t, NOWHERE4);
	feed(&t);
	CHECK(drain(NULL) == 0);
	CHECK(t_ctx.stats.drops[DROP_NOT_FOR_US] == 1);
	teardown();
}

/**
 * check_echo_reply() - the frame in @rx is a correct reply to echo_req()
 * @len:	its length
 * @off:	vnet header bytes before it
 */
static void check_echo_reply(size_t len, size_t off)
{
	const uint8_t *e = rx + off, *ip = e + 14, *icmp = ip + 20;

	CHECK(len == off + 34 + 16);
	if (len != off + 34 + 16)
		return;
	CHECK(!memcmp(e, guest_mac, 6));
	CHECK(!memcmp(e + 6, gw_mac, 6));
	CHECK(get16(e + 12) == ETHERTYPE_IP);
	CHECK(ip[0] == 0x45 && get16(ip + 2) == 36 && ip[9] == IPPROTO_ICMP);
	CHECK(fold(sum16(0, ip, 20)) == 0);
	CHECK(get16(ip + 12) == GW4 >> 16 && get16(ip + 14) == (GW4 & 0xffff));
	CHECK(get16(ip + 18) == (GUEST4 & 0xffff));
	CHECK(icmp[0] == ICMP_ECHOREPLY && icmp[1] == 0);
	CHECK(fold(sum16(0, icmp, 16)) == 0);
	CHECK(get16(icmp + 4) == 0x4242 && get16(icmp + 6) == 7);
	CHECK(!memcmp(icmp + 8, "tapir!!!", 8));
}

/**
 * test_echo_reply() - control: ping to the gateway is answered locally,
 * with and without a vnet header on the tap
 */
static void test_echo_reply(void)
{
	static struct tframe t;
	uint8_t l4[16];
	size_t len;

	setup();
	len = echo_req(l4, false);
	tf_ip4(&t, GW4, IPPROTO_ICMP, l4, len);
	feed(&t);
	CHECK(drain(&len) == 1);
	check_echo_reply(len, 0);
	t.has_vh = true;
	feed(&t);
	CHECK(drain(&len) == 1);
	check_echo_reply(len, VNET_LEN);
	for (int r = 0; r < DROP_REASONS; r++)
		CHECK(t_ctx.stats.drops[r] == 0);
	teardown();
}

/**
 * test_junk_does_not_move_guest_mac() - a malformed frame from another MAC
 * must not redirect what tapir sends to the guest
 */
static void test_junk_does_not_move_guest_mac(void)
{
	static struct tframe t;
	uint8_t l4[16];
	size_t len;

	setup();
	len = echo_req(l4, false);
	tf_ip4(&t, GW4, IPPROTO_ICMP, l4, len);
	feed(&t);
	CHECK(drain(&len) == 1);
	m_ip4_bad_csum(&t);
	t.d[6] = 0x02;
	t.d[11] = 0x99; /* some other source MAC */
	feed(&t);
	CHECK(drain(&len) == 0);
	/* Frames tapir starts itself (host data, RAs) use what it learnt. */
	CHECK(!memcmp(t_ctx.guest_mac, guest_mac, 6));
	teardown();
}

/**
 * test_no_answer_to_broadcast() - no ICMP error or RST about a packet sent
 * to a broadcast or multicast address (RFC 1122 3.2.2, 4.2.3.10)
 */
static void test_no_answer_to_broadcast(void)
{
	static const uint32_t dsts[] = {0x0a0002ff, 0xffffffff, 0xe0000001};
	static struct tframe t;
	uint8_t l4[20];
	size_t len;

	setup();
	for (size_t i = 0; i < sizeof(dsts) / sizeof(dsts[0]); i++) {
		len = tcp_hdr(l4, TH_SYN);
		tf_ip4(&t, dsts[i], IPPROTO_TCP, l4, len);
		feed(&t);
		CHECK(drain(NULL) == 0);
		len = tcp_hdr(l4, TH_ACK);
		tf_ip4(&t, dsts[i], IPPROTO_TCP, l4, len);
		feed(&t);
		CHECK(drain(NULL) == 0);
		len = echo_req(l4, false);
		tf_ip4(&t, dsts[i], IPPROTO_ICMP, l4, len);
		feed(&t);
		CHECK(drain(NULL) == 0);
	}
	teardown();
}

/* ---- random frames -------------------------------------------------------- */

static uint64_t rng_state;

/**
 * rnd() - xorshift64*: reproducible, seeded per test
 *
 * Return: 32 pseudo-random bits
 */
static uint32_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

/**
 * rnd_fill() - fill with pseudo-random bytes
 * @b:		buffer
 * @len:	bytes
 */
static void rnd_fill(uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)rnd();
}

/**
 * pick() - one of a few values
 * @v:		values
 * @n:		how many
 *
 * Return: one of them
 */
static uint8_t pick(const uint8_t *v, size_t n)
{
	return v[rnd() % n];
}

/**
 * fuzz_dst4() - a destination that never leads to a host socket
 * @proto:	L4 protocol of the packet
 *
 * Return: 10.0.2.50, a broadcast address, or for ICMP also the gateway
 *	   (echo is answered locally)
 */
static uint32_t fuzz_dst4(uint8_t proto)
{
	switch (rnd() % 4) {
	case 0:
		return 0xffffffff;
	case 1:
		return 0x0a0002ff;
	case 2:
		if (proto == IPPROTO_ICMP)
			return GW4;
		return NOWHERE4;
	default:
		return NOWHERE4;
	}
}

/**
 * fuzz_options() - random type-length-value options, mostly well-formed
 * @b:		where they go
 * @len:	bytes available
 * @unit:	length unit (1 for DHCP, 8 for NDP, whose length counts
 *		the type and length bytes too)
 */
static void fuzz_options(uint8_t *b, size_t len, size_t unit)
{
	size_t off = 0;

	while (off + 2 <= len) {
		size_t olen = rnd() % 4 ? rnd() % 6 : rnd() % 256;

		b[off] = (uint8_t)(rnd() % 4 ? rnd() % 64 : rnd());
		b[off + 1] = (uint8_t)olen;
		off += unit == 1 ? 2 + olen : olen * unit;
		if (!olen && unit > 1)
			break;
	}
}

/**
 * fuzz_dhcp() - a BOOTREQUEST with random options and message type
 * @b:		UDP payload
 * @len:	its length
 */
static void fuzz_dhcp(uint8_t *b, size_t len)
{
	if (len < 240 + 3)
		return;
	b[0] = 1;
	b[1] = 1;
	b[2] = 6;
	memcpy(b + 236, "\x63\x82\x53\x63", 4);
	b[240] = 53;
	b[241] = 1;
	b[242] = (uint8_t)(rnd() % 9);
	fuzz_options(b + 243, len - 243, 1);
}

/**
 * fuzz_l4() - make random L4 bytes plausible enough to pass the first checks
 * @l4:		L4 header and payload
 * @len:	their length
 * @proto:	L4 protocol
 * @dhcp:	a UDP datagram may go to the DHCP server
 */
static void fuzz_l4(uint8_t *l4, size_t len, uint8_t proto, bool dhcp)
{
	if (rnd() % 4 == 0)
		return;
	if (proto == IPPROTO_TCP && len >= 20) {
		l4[12] = (uint8_t)((5 + rnd() % 11) << 4);
		if (l4[12] >> 4 > 5 && rnd() % 2)
			fuzz_options(l4 + 20, (size_t)(l4[12] >> 4) * 4 - 20,
			             1);
	} else if (proto == IPPROTO_UDP && len >= 8) {
		put16(l4 + 4, (uint16_t)len);
		if (dhcp && rnd() % 2) {
			put16(l4 + 2, 67);
			fuzz_dhcp(l4 + 8, len - 8);
		}
	} else if (proto == IPPROTO_ICMP && len >= 8) {
		l4[0] = rnd() % 2 ? ICMP_ECHO : (uint8_t)rnd();
		l4[1] = rnd() % 2 ? 0 : (uint8_t)rnd();
	} else if (proto == IPPROTO_ICMPV6 && len >= 8) {
		static const uint8_t types[] = {
		        ICMP6_ECHO_REQUEST, ND_ROUTER_SOLICIT,
		        ND_ROUTER_ADVERT,   ND_NEIGHBOR_SOLICIT,
		        ND_NEIGHBOR_ADVERT, ND_REDIRECT};

		l4[0] = pick(types, sizeof(types));
		l4[1] = rnd() % 2 ? 0 : (uint8_t)rnd();
		if (l4[0] == ND_NEIGHBOR_SOLICIT && len >= 24 && rnd() % 2)
			inet_pton(AF_INET6, rnd() % 2 ? "fd00::2" : "fd00::3",
			          l4 + 8);
		if (len > 24)
			fuzz_options(l4 + 24, len - 24, 8);
	}
}

/**
 * fuzz_ip4() - IPv4 with a valid header and random contents
 * @t:		frame
 * @len:	total frame length, at least 34
 *
 * Return: true if it is a fragment (tapir may hold it: no counter yet)
 */
static bool fuzz_ip4(struct tframe *t, size_t len)
{
	static const uint8_t protos[] = {IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP,
	                                 0};
	uint8_t proto = pick(protos, sizeof(protos)), *ip = t->d + 14;
	size_t hlen = rnd() % 4 ? 20 : 20 + 4 * (rnd() % 11);
	uint32_t dst;
	bool frag = !(rnd() % 8);

	if (!proto)
		proto = (uint8_t)rnd();
	dst = fuzz_dst4(proto);
	if (hlen > len - 14)
		hlen = 20;
	rnd_fill(t->d + 14, len - 14);
	ip[0] = (uint8_t)(0x40 | hlen / 4);
	put16(ip + 2, (uint16_t)(len - 14));
	if (!(rnd() % 8))
		put16(ip + 2, (uint16_t)rnd());
	put16(ip + 6, frag ? (uint16_t)rnd() : IP_DF);
	ip[9] = proto;
	put16(ip + 12, GUEST4 >> 16);
	put16(ip + 14, GUEST4 & 0xffff);
	put16(ip + 16, (uint16_t)(dst >> 16));
	put16(ip + 18, (uint16_t)dst);
	/* Only broadcasts reach the DHCP server without leaving tapir. */
	fuzz_l4(ip + hlen, len - 14 - hlen, proto, dst >= 0x0a0002ff);
	t->len = len;
	ip4_fix(t);
	if (rnd() % 4 && get16(ip + 2) == len - 14)
		l4_fix(t, proto);
	return frag && (get16(ip + 6) & (IP_MF | IP_OFFMASK));
}

/**
 * fuzz_ip6() - IPv6 with a plausible header and random contents
 * @t:		frame
 * @len:	total frame length, at least 54
 *
 * Return: true if it may be a fragment (tapir may hold it: no counter yet)
 */
static bool fuzz_ip6(struct tframe *t, size_t len)
{
	static const uint8_t nhs[] = {IPPROTO_TCP,      IPPROTO_UDP,
	                              IPPROTO_ICMPV6,   IPPROTO_HOPOPTS,
	                              IPPROTO_DSTOPTS,  IPPROTO_ROUTING,
	                              IPPROTO_FRAGMENT, 0};
	static const char *const dsts[] = {NOWHERE6, "ff02::1", "ff02::2",
	                                   "ff02::1:ff00:2"};
	uint8_t nh = pick(nhs, sizeof(nhs)), *ip = t->d + 14;
	struct in6_addr a;

	if (!nh)
		nh = (uint8_t)rnd();
	rnd_fill(ip, len - 14);
	ip[0] = 0x60;
	put16(ip + 4, (uint16_t)(len - 54));
	if (!(rnd() % 8))
		put16(ip + 4, (uint16_t)rnd());
	ip[6] = nh;
	ip[7] = 255;
	inet_pton(AF_INET6, GUEST6, &a);
	memcpy(ip + 8, &a, 16);
	/* Local echo and NDP for the gateway, but only for plain ICMPv6. */
	inet_pton(AF_INET6,
	          nh == IPPROTO_ICMPV6 && rnd() % 2 ? "fd00::2"
	                                            : dsts[rnd() % 4],
	          &a);
	memcpy(ip + 24, &a, 16);
	fuzz_l4(ip + 40, len - 54, nh, false);
	t->len = len;
	if (rnd() % 4 && get16(ip + 4) == len - 54)
		l4_fix(t, nh);
	/* Any extension header may lead to a Fragment header. */
	return nh != IPPROTO_TCP && nh != IPPROTO_UDP && nh != IPPROTO_ICMPV6;
}

/**
 * fuzz_arp() - an ARP packet with random fields, often the right sizes
 * @t:		frame
 * @len:	total frame length
 */
static void fuzz_arp(struct tframe *t, size_t len)
{
	rnd_fill(t->d + 14, len - 14);
	if (len >= 14 + 28 && rnd() % 2) {
		put16(t->d + 14, ARPHRD_ETHER);
		put16(t->d + 16, ETHERTYPE_IP);
		t->d[18] = 6;
		t->d[19] = 4;
		put16(t->d + 20, (uint16_t)(rnd() % 3));
	}
	t->len = len;
}

/**
 * fuzz_vnet() - a vnet header: random, or plausible, or none needed
 * @vh:		filled
 * @len:	frame length
 */
static void fuzz_vnet(struct virtio_net_hdr *vh, size_t len)
{
	static const uint8_t gso[] = {
	        VIRTIO_NET_HDR_GSO_NONE, VIRTIO_NET_HDR_GSO_TCPV4,
	        VIRTIO_NET_HDR_GSO_TCPV6, VIRTIO_NET_HDR_GSO_UDP_L4, 0xff};

	memset(vh, 0, sizeof(*vh));
	switch (rnd() % 4) {
	case 0:
		rnd_fill((uint8_t *)vh, sizeof(*vh));
		break;
	case 1:
		vh->gso_type = pick(gso, sizeof(gso));
		vh->gso_size = (uint16_t)(rnd() % 2 ? rnd() % 1500 : rnd());
		vh->hdr_len = (uint16_t)(rnd() % 128);
		/* fall through */
	case 2:
		vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh->csum_start = (uint16_t)(rnd() % (len + 8));
		vh->csum_offset = (uint16_t)(rnd() % 20);
		break;
	default:
		break;
	}
}

/**
 * accounted() - sum of the counters every frame must raise at least one of
 *
 * Return: drops, packets handed on, and frames sent back
 */
static uint64_t accounted(void)
{
	uint64_t n = t_ctx.stats.tap_tx_frames;

	for (int r = 0; r < DROP_REASONS; r++)
		n += t_ctx.stats.drops[r];
	for (int p = 0; p < PROTO_COUNT; p++)
		n += t_ctx.stats.to_host[p].packets;
	return n;
}

/**
 * fuzz_bytes() - a frame of random bytes behind an ethertype
 * @t:		frame
 * @len:	total frame length, at least 14
 *
 * Return: true if it may be a fragment or lead to one (tapir may hold it)
 */
static bool fuzz_bytes(struct tframe *t, size_t len)
{
	static const uint16_t types[] = {ETHERTYPE_IP, ETHERTYPE_IPV6,
	                                 ETHERTYPE_ARP};
	uint16_t type = rnd() % 4 ? types[rnd() % 3] : (uint16_t)rnd();

	tf_eth(t, type);
	rnd_fill(t->d + 14, len - 14);
	t->len = len;
	/* Random bytes, random destination: pin that as for the others. */
	if (type == ETHERTYPE_IP && len >= 34) {
		put16(t->d + 30, NOWHERE4 >> 16);
		put16(t->d + 32, NOWHERE4 & 0xffff);
		return get16(t->d + 20) & (IP_MF | IP_OFFMASK);
	}
	if (type == ETHERTYPE_IPV6 && len >= 54) {
		inet_pton(AF_INET6, NOWHERE6, t->d + 38);
		return true;
	}
	return false;
}

/**
 * fuzz_one() - build and feed one random frame
 * @t:		scratch frame
 * @vnet:	give it a vnet header
 *
 * Return: true if it must show in accounted(), false if it may be held
 */
static bool fuzz_one(struct tframe *t, bool vnet)
{
	size_t len = rnd() % (FUZZ_MAX_LEN + 1);
	bool held = false;

	t_ctx.vnet_len = vnet ? VNET_LEN : 0;
	if (len < 14) {
		uint8_t b[VNET_LEN + 14];

		rnd_fill(b, sizeof(b));
		feed_tap(b, len + t_ctx.vnet_len);
		return true;
	}
	switch (rnd() % 8) {
	case 0:
	case 1:
	case 2:
		tf_eth(t, ETHERTYPE_IP);
		held = len < 34 ? fuzz_bytes(t, len) : fuzz_ip4(t, len);
		break;
	case 3:
	case 4:
		tf_eth(t, ETHERTYPE_IPV6);
		held = len < 54 ? fuzz_bytes(t, len) : fuzz_ip6(t, len);
		break;
	case 5:
		tf_eth(t, ETHERTYPE_ARP);
		fuzz_arp(t, len);
		break;
	default:
		held = fuzz_bytes(t, len);
	}
	t->has_vh = vnet;
	if (vnet)
		fuzz_vnet(&t->vh, len);
	feed(t);
	return !held;
}

/**
 * hex() - hex dump for a failure message
 * @b:		bytes
 * @n:		how many, at most 64
 *
 * Return: static string, overwritten by the next call
 */
static const char *hex(const uint8_t *b, size_t n)
{
	static char s[129];

	for (size_t i = 0; i < n && i < 64; i++)
		snprintf(s + 2 * i, 3, "%02x", b[i]);
	return s;
}

/**
 * fuzz() - feed @n random frames; each is dropped, handled or answered
 * @seed:	PRNG seed, printed on failure to reproduce
 * @n:		frames
 * @vnet:	with vnet headers
 */
static void fuzz(uint64_t seed, int n, bool vnet)
{
	static struct tframe t;
	int silent = 0;

	setup();
	CHECK(!tapio_start(&t_ctx));
	rng_state = seed;
	for (int i = 0; i < n; i++) {
		uint64_t before = accounted();
		bool must = fuzz_one(&t, vnet);

		drain(NULL);
		if (must && accounted() == before && silent++ < 5)
			printf("#   seed %llu frame %d (ethertype %04x, len "
			       "%zu,"
			       " bytes 14..61 %s) left no trace\n",
			       (unsigned long long)seed, i, get16(t.d + 12),
			       t.len, hex(t.d + 14, 48));
	}
	CHECK(silent == 0);
	teardown();
}

/**
 * test_fuzz_plain() - random frames on a tap without vnet headers
 */
static void test_fuzz_plain(void)
{
	fuzz(0x7461706972ULL, FUZZ_FRAMES, false);
}

/**
 * test_fuzz_vnet() - random frames with random or plausible vnet headers
 */
static void test_fuzz_vnet(void)
{
	fuzz(0x766e6574ULL, FUZZ_FRAMES, true);
}

const struct unit_case unit_cases[] = {
        {"malformed frames raise their own drop counter, send nothing",
         test_catalogue},
        {"frames shorter than Ethernet are short on the tap read path",
         test_short_ethernet},
        {"NEEDS_CSUM: the checksum is not verified, otherwise it is",
         test_needs_csum_not_verified},
        {"offloads the tap was not given: frames using them are dropped",
         test_offloads_not_offered},
        {"control: ARP for the gateway is answered with 52:55:0a:00:02:02",
         test_arp_reply},
        {"control: echo to the gateway gets a correctly summed reply",
         test_echo_reply},
        {"a malformed frame from another MAC does not redirect replies",
         test_junk_does_not_move_guest_mac},
        {"no ICMP error or RST answers a broadcast or multicast destination",
         test_no_answer_to_broadcast},
        {"3000 random frames: no crash, each one counted", test_fuzz_plain},
        {"3000 random frames with vnet headers: no crash, each one counted",
         test_fuzz_vnet},
        {NULL, NULL},
};
