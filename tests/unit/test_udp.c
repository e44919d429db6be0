// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for UDP validation, replies to the guest, flow table */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/stack/csum.h"
#include "driver/flow/flow.h"
#include "driver/stack/frag.h"
#include "driver/stack/frag_reasm.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/stack/ip4.h"
#include "driver/thread/tap_read.h"
#include "driver/stack/tap_write.h"
#include "driver/fwd/udpsplice.h"
#include "driver/udp/ping.h"
#include "driver/udp/udp.h"
#include "driver/udp/udp_flow.h"
#include "tests/unit/fakectx.h"
#include "tests/unit/unit.h"

static uint8_t pkt_buf[65536];
static uint8_t rx[65536 + 64];

/**
 * struct fake - a context whose tap is a SEQPACKET socketpair, no network
 * @c:		context
 * @o:		its options
 * @peer:	the "guest" end of the tap
 */
struct fake {
	struct ctx c;
	struct opts o;
	int peer;
};

/**
 * fake_open() - set up a context with the slirp4netns addresses
 * @f:		filled
 * @mtu:	MTU of the fake tap
 * @vnet_len:	vnet header bytes on the fake tap, or 0
 *
 * Return: 0 on success
 */
static int fake_open(struct fake *f, unsigned int mtu, unsigned int vnet_len)
{
	int sv[2];

	memset(f, 0, sizeof(*f));
	f->c.o = &f->o;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		return -1;
	f->c.tapfd[0] = sv[0];
	f->peer = sv[1];
	f->c.tap.mtu = mtu;
	f->c.tap.queues = 1;
	f->c.vnet_len = vnet_len;
	inet_pton(AF_INET, "10.0.2.100", &f->c.guest4);
	inet_pton(AF_INET, "10.0.2.2", &f->c.gw4);
	inet_pton(AF_INET, "10.0.2.3", &f->c.dns4);
	inet_pton(AF_INET, "255.255.255.0", &f->c.mask4);
	inet_pton(AF_INET6, "fd00::2", &f->c.gw6);
	inet_pton(AF_INET6, "fd00::3", &f->c.dns6);
	memcpy(f->c.guest_mac, "\x02\x00\x00\x00\x00\x01", 6);
	return fake_ctx_udp_open(&f->c);
}

/**
 * fake_close() - release fake_open()
 * @f:		fake context
 */
static void fake_close(struct fake *f)
{
	fake_ctx_udp_close(&f->c);
	close(f->c.tapfd[0]);
	close(f->peer);
}

/**
 * next_frame() - the next frame written to the fake tap
 * @f:		fake context
 *
 * Return: its length (into @rx), or -1 if none is waiting
 */
static ssize_t next_frame(struct fake *f)
{
	return recv(f->peer, rx, sizeof(rx), MSG_DONTWAIT);
}

/**
 * udp4() - build an IPv4 UDP packet from the guest
 * @p:		filled
 * @dst:	destination, dotted
 * @dport:	destination port
 * @len:	payload bytes (zeros)
 * @csum:	0: none, 1: correct, 2: wrong
 */
static void udp4(struct pkt *p, const char *dst, uint16_t dport, size_t len,
                 int csum)
{
	struct iphdr *ih = (struct iphdr *)(void *)pkt_buf;
	struct udphdr *uh = (struct udphdr *)(void *)(pkt_buf + 20);

	memset(pkt_buf, 0, 28 + len);
	memset(p, 0, sizeof(*p));
	ih->version = 4;
	ih->ihl = 5;
	ih->tot_len = htons((uint16_t)(28 + len));
	ih->ttl = 64;
	ih->protocol = IPPROTO_UDP;
	inet_pton(AF_INET, "10.0.2.100", &ih->saddr);
	inet_pton(AF_INET, dst, &ih->daddr);
	ih->check = csum_ip4_header(ih, 20);
	uh->source = htons(40000);
	uh->dest = htons(dport);
	uh->len = htons((uint16_t)(8 + len));
	inany_from_v4(&p->src, (struct in_addr){ih->saddr});
	inany_from_v4(&p->dst, (struct in_addr){ih->daddr});
	p->proto = IPPROTO_UDP;
	p->l3 = pkt_buf;
	p->l3len = 20;
	p->l4 = pkt_buf + 20;
	p->l4len = 8 + len;
	if (csum) {
		uint32_t s =
		        ip_pseudo_csum(&p->src, &p->dst, IPPROTO_UDP, 8 + len);

		uh->check = csum_fold(csum_add(s, uh, 8 + len));
		if (csum == 2)
			uh->check ^= 0x0101;
	}
}

/**
 * is_icmp_unreach() - whether @rx holds an IPv4 ICMP destination unreachable
 * @n:		frame length
 * @code:	expected code
 * @from:	expected source, dotted
 *
 * Return: true if the frame is that error, to the guest, quoting our packet
 */
static bool is_icmp_unreach(ssize_t n, uint8_t code, const char *from)
{
	const uint8_t *icmp = rx + 14 + 20;
	struct in_addr src;
	struct iphdr ih;

	memcpy(&ih, rx + 14, sizeof(ih));
	inet_pton(AF_INET, from, &src);
	return n >= 14 + 20 + 8 + 28 && ih.protocol == IPPROTO_ICMP &&
	       ih.saddr == src.s_addr && icmp[0] == ICMP_DEST_UNREACH &&
	       icmp[1] == code && !memcmp(icmp + 8, pkt_buf, 28) &&
	       csum_fold(csum_add(0, icmp, (size_t)n - 34)) == 0;
}

static void test_lengths(void)
{
	struct fake f;
	struct pkt p;

	CHECK(fake_open(&f, 1500, 0) == 0);
	udp4(&p, "198.18.0.1", 9, 0, 1);
	p.l4len = 4;
	udp_input(&f.c, &p);
	CHECK(f.c.stats.drops[DROP_SHORT_FRAME] == 1);
	udp4(&p, "198.18.0.1", 9, 10, 0);
	p.l4[5] = 19; /* length 19 > 18 bytes present */
	udp_input(&f.c, &p);
	p.l4[5] = 7; /* shorter than the header */
	udp_input(&f.c, &p);
	CHECK(f.c.stats.drops[DROP_BAD_LENGTH] == 2);
	CHECK(next_frame(&f) < 0);
	fake_close(&f);
}

static void test_checksums(void)
{
	struct virtio_net_hdr vh = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM};
	struct fake f;
	struct pkt p;

	CHECK(fake_open(&f, 1500, 0) == 0);
	f.o.disable_host_loopback = true;
	udp4(&p, "10.0.2.2", 9, 5, 2);
	udp_input(&f.c, &p);
	CHECK(f.c.stats.drops[DROP_BAD_CHECKSUM] == 1);
	CHECK(next_frame(&f) < 0);
	/* Past the checksum, --disable-host-loopback answers net-unreach. */
	udp4(&p, "10.0.2.2", 9, 5, 1);
	udp_input(&f.c, &p);
	CHECK(is_icmp_unreach(next_frame(&f), ICMP_NET_UNREACH, "10.0.2.2"));
	udp4(&p, "10.0.2.2", 9, 5, 0);
	udp_input(&f.c, &p);
	CHECK(is_icmp_unreach(next_frame(&f), ICMP_NET_UNREACH, "10.0.2.2"));
	/* A partial checksum is the tap's to finish: not verified. */
	udp4(&p, "10.0.2.2", 9, 5, 2);
	p.vh = &vh;
	udp_input(&f.c, &p);
	CHECK(is_icmp_unreach(next_frame(&f), ICMP_NET_UNREACH, "10.0.2.2"));
	CHECK(f.c.stats.drops[DROP_BAD_CHECKSUM] == 1);
	CHECK(f.c.stats.drops[DROP_NO_ROUTE] == 3);
	fake_close(&f);
}

static void test_ipv6_needs_checksum(void)
{
	struct fake f;
	struct pkt p = {.v6 = true, .proto = IPPROTO_UDP};
	struct udphdr uh = {.source = htons(1),
	                    .dest = htons(9),
	                    .len = htons(8),
	                    .check = 0};

	CHECK(fake_open(&f, 1500, 0) == 0);
	f.o.ipv6 = true;
	inet_pton(AF_INET6, "fd00::100", &p.src);
	inet_pton(AF_INET6, "fd18::1", &p.dst);
	memset(pkt_buf, 0, 40);
	memcpy(pkt_buf + 40, &uh, 8);
	p.l3 = pkt_buf;
	p.l3len = 40;
	p.l4 = pkt_buf + 40;
	p.l4len = 8;
	udp_input(&f.c, &p);
	CHECK(f.c.stats.drops[DROP_BAD_CHECKSUM] == 1);
	fake_close(&f);
}

static void test_silent_drops(void)
{
	struct fake f;
	struct pkt p;

	CHECK(fake_open(&f, 1500, 0) == 0);
	/* --disable-dns: the forwarder is just an address that never
	 * answers. */
	f.o.disable_dns = true;
	udp4(&p, "10.0.2.3", 53, 30, 1);
	udp_input(&f.c, &p);
	/* No ICMP about broadcast or multicast datagrams. (Only addresses
	 * that fwd_outbound() refuses: anything else would reach the real
	 * network, as unit tests run outside the sandbox.) */
	udp4(&p, "255.255.255.255", 9999, 30, 1);
	udp_input(&f.c, &p);
	udp4(&p, "224.0.0.251", 5353, 30, 1);
	udp_input(&f.c, &p);
	CHECK(f.c.stats.drops[DROP_NO_ROUTE] == 3);
	CHECK(next_frame(&f) < 0);
	CHECK(f.c.stats.flows[PROTO_UDP] == 0 &&
	      f.c.stats.flows[PROTO_DNS] == 0);
	fake_close(&f);
}

/**
 * check_udp() - check a UDP datagram sent to the guest
 * @p:		packet in @rx (l3 and l4 set)
 * @sport:	expected source port
 * @dport:	expected destination port
 * @data:	expected payload
 * @len:	its length
 *
 * Return: true if ports, length, checksum and payload match
 */
static bool check_udp(const struct pkt *p, uint16_t sport, uint16_t dport,
                      const uint8_t *data, size_t len)
{
	struct udphdr uh;
	uint32_t s;

	if (p->l4len != 8 + len)
		return false;
	memcpy(&uh, p->l4, 8);
	s = ip_pseudo_csum(&p->src, &p->dst, IPPROTO_UDP, 8 + len);
	return ntohs(uh.source) == sport && ntohs(uh.dest) == dport &&
	       ntohs(uh.len) == 8 + len && uh.check &&
	       csum_fold(csum_add(s, p->l4, 8 + len)) == 0 &&
	       !memcmp(p->l4 + 8, data, len);
}

static void test_inbound_small(void)
{
	union sockaddr_inany peer = {0};
	struct in6_addr guest;
	struct fake f;
	struct pkt p = {0};
	ssize_t n;
	int lfd = open("/dev/null", O_RDONLY);

	CHECK(fake_open(&f, 1500, 0) == 0);
	peer.sa4.sin_family = AF_INET;
	peer.sa4.sin_port = htons(5353);
	inet_pton(AF_INET, "127.0.0.1", &peer.sa4.sin_addr);
	inany_from_v4(&guest, f.c.guest4);
	udp_inbound(&f.c, lfd, &peer, &guest, 8080, (const uint8_t *)"hi", 2);
	n = next_frame(&f);
	CHECK(n == 14 + 20 + 8 + 2);
	/* Host loopback appears as the gateway. */
	inany_from_v4(&p.src, f.c.gw4);
	p.dst = guest;
	p.l4 = rx + 14 + 20;
	p.l4len = (size_t)n - 34;
	CHECK(!memcmp(rx + 14 + 12, &f.c.gw4, 4));
	CHECK(check_udp(&p, 5353, 8080, (const uint8_t *)"hi", 2));
	CHECK(f.c.stats.flows[PROTO_UDP] == 1);
	CHECK(f.c.stats.to_guest[PROTO_UDP].packets == 1);
	CHECK(f.c.stats.to_guest[PROTO_UDP].bytes == 2);
	fake_close(&f);
	/* The listener is the caller's: still open. */
	CHECK(fcntl(lfd, F_GETFD) >= 0);
	close(lfd);
}

static void test_inbound_offload(void)
{
	union sockaddr_inany peer = {0};
	struct virtio_net_hdr vh;
	struct in6_addr guest, src;
	struct fake f;
	uint16_t ck, want;
	uint32_t s;

	CHECK(fake_open(&f, 1500, sizeof(vh)) == 0);
	peer.sa4.sin_family = AF_INET;
	peer.sa4.sin_port = htons(7);
	inet_pton(AF_INET, "198.18.0.1", &peer.sa4.sin_addr);
	inany_from_v4(&guest, f.c.guest4);
	inany_from_v4(&src, peer.sa4.sin_addr);
	udp_inbound(&f.c, -1, &peer, &guest, 9, (const uint8_t *)"abc", 3);
	CHECK(next_frame(&f) == (ssize_t)sizeof(vh) + 14 + 20 + 8 + 3);
	memcpy(&vh, rx, sizeof(vh));
	CHECK(vh.flags == VIRTIO_NET_HDR_F_NEEDS_CSUM);
	CHECK(vh.csum_start == 14 + 20 && vh.csum_offset == 6);
	/* The field holds the pseudo-header sum, for the tap to finish. */
	s = ip_pseudo_csum(&src, &guest, IPPROTO_UDP, 11);
	memcpy(&ck, rx + sizeof(vh) + 14 + 20 + 6, 2);
	want = (uint16_t)~csum_fold(s);
	CHECK(ck == want);
	fake_close(&f);
}

static void test_inbound_fragmented(void)
{
	static uint8_t data[60000];
	union sockaddr_inany peer = {0};
	struct frag_state *fs = frag_state_new(FRAG_SLOTS);
	struct in6_addr guest;
	struct pkt w = {0};
	struct fake f;
	int frames = 0, complete = 0;
	ssize_t n;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i ^ (i >> 9));
	/* vnet headers on: fragments must still carry a full checksum. */
	CHECK(fake_open(&f, 1500, sizeof(struct virtio_net_hdr)) == 0);
	peer.sa4.sin_family = AF_INET;
	peer.sa4.sin_port = htons(7777);
	inet_pton(AF_INET, "198.18.0.1", &peer.sa4.sin_addr);
	inany_from_v4(&guest, f.c.guest4);
	udp_inbound(&f.c, -1, &peer, &guest, 40000, data, sizeof(data));
	while ((n = next_frame(&f)) > 0) {
		struct pkt p = {0};
		uint8_t *l3 = rx + sizeof(struct virtio_net_hdr) + 14;

		frames++;
		CHECK((size_t)n <= sizeof(struct virtio_net_hdr) + 14 + 1500);
		inany_from_v4(&p.src, peer.sa4.sin_addr);
		p.dst = guest;
		p.proto = IPPROTO_UDP;
		p.l3 = l3;
		p.l3len = 20;
		p.l4 = l3 + 20;
		p.l4len = (size_t)n - sizeof(struct virtio_net_hdr) - 34;
		if (frag4_reassemble(fs, &p, 0, &w) == FRAG_COMPLETE)
			complete++;
	}
	CHECK(frames == 41 && complete == 1);
	CHECK(complete && check_udp(&w, 7777, 40000, data, sizeof(data)));
	frag_state_free(fs);
	fake_close(&f);
}

/**
 * records() - count the datagrams waiting on a socket, draining it
 * @fd:		SEQPACKET end to read
 * @seg:	segment size: no datagram may be larger
 *
 * Return: how many there were, or -1 if one was larger
 */
static int records(int fd, size_t seg)
{
	static uint8_t b[65536];
	int n = 0;
	ssize_t r;

	while ((r = recv(fd, b, sizeof(b), MSG_DONTWAIT)) >= 0) {
		if ((size_t)r > seg)
			return -1;
		n++;
	}
	return n;
}

/**
 * uso_to_host() - a guest USO super-packet to the gateway, on an open flow
 * @f:		fake context
 * @vh:		vnet header to use, its gso_size set by the caller
 * @dport:	the flow's far port
 * @len:	payload bytes of the whole super-packet
 */
static void uso_to_host(struct fake *f, struct virtio_net_hdr *vh,
                        uint16_t dport, size_t len)
{
	struct pkt p;

	udp4(&p, "10.0.2.2", dport, len, 0);
	p.vh = vh;
	udp_input(&f->c, &p);
}

static void test_uso_segment_cap(void)
{
	struct virtio_net_hdr vh = {.gso_type = VIRTIO_NET_HDR_GSO_UDP_L4};
	union sockaddr_inany peer = {0};
	int sv[2], big = 1 << 20;
	struct in6_addr guest;
	struct fake f;

	CHECK(fake_open(&f, 1500, 0) == 0);
	/* The forward's "listener" reaches no network: a SEQPACKET pair
	 * keeps each datagram and ignores the peer address sent to. */
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	peer.sa4.sin_family = AF_INET;
	peer.sa4.sin_port = htons(5000);
	inet_pton(AF_INET, "127.0.0.1", &peer.sa4.sin_addr);
	inany_from_v4(&guest, f.c.guest4);
	udp_inbound(&f.c, sv[0], &peer, &guest, 40000, (const uint8_t *)"hi",
	            2);
	CHECK(next_frame(&f) > 0);
	/* As many segments as a kernel makes: every datagram leaves. */
	vh.gso_size = 100;
	uso_to_host(&f, &vh, 5000, 128 * 100);
	CHECK(records(sv[1], 100) == 128);
	CHECK(f.c.stats.to_host[PROTO_UDP].packets == 128);
	/* One more is no guest kernel's frame: none leaves, one drop. */
	uso_to_host(&f, &vh, 5000, 128 * 100 + 1);
	CHECK(records(sv[1], 100) == 0);
	CHECK(f.c.stats.drops[DROP_GSO_SEGMENTS] == 1);
	/* 65000 segments of one byte. */
	vh.gso_size = 1;
	uso_to_host(&f, &vh, 5000, 65000);
	CHECK(records(sv[1], 1) == 0);
	CHECK(f.c.stats.drops[DROP_GSO_SEGMENTS] == 2);
	CHECK(f.c.stats.to_host[PROTO_UDP].packets == 128);
	CHECK(f.c.stats.drops[DROP_SOCKET] == 0);
	fake_close(&f);
	close(sv[0]);
	close(sv[1]);
}

/**
 * guest_sport() - the UDP source port of the frame in @rx, if from the gateway
 * @f:		fake context
 * @n:		frame length, from next_frame()
 *
 * Return: the port, or -1 if there was no IPv4 UDP frame from 10.0.2.2
 */
static int guest_sport(const struct fake *f, ssize_t n)
{
	struct iphdr ih;
	struct udphdr uh;

	if (n < 14 + 20 + 8)
		return -1;
	memcpy(&ih, rx + 14, sizeof(ih));
	memcpy(&uh, rx + 14 + 20, sizeof(uh));
	if (ih.protocol != IPPROTO_UDP || ih.saddr != f->c.gw4.s_addr)
		return -1;
	return ntohs(uh.source);
}

/**
 * inbound_port() - a host peer's datagram on a forward, and the source
 *		    port the guest sees it from
 * @f:		fake context
 * @lfd:	listener
 * @peer:	host peer
 *
 * Return: the port, or -1 if nothing reached the guest
 */
static int inbound_port(struct fake *f, int lfd,
                        const union sockaddr_inany *peer)
{
	struct in6_addr guest;

	inany_from_v4(&guest, f->c.guest4);
	udp_inbound(&f->c, lfd, peer, &guest, 40000, (const uint8_t *)"x", 1);
	return guest_sport(f, next_frame(f));
}

/**
 * peer4() - an IPv4 host peer
 * @sa:		filled
 * @addr:	dotted address
 * @port:	port
 */
static void peer4(union sockaddr_inany *sa, const char *addr, uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa4.sin_family = AF_INET;
	sa->sa4.sin_port = htons(port);
	inet_pton(AF_INET, addr, &sa->sa4.sin_addr);
}

/**
 * gw_key() - the key of a flow between the guest's port 40000 and the
 *	      gateway
 * @f:		fake context
 * @k:		filled
 * @fport:	the gateway's port
 */
static void gw_key(const struct fake *f, struct flow_key *k, int fport)
{
	memset(k, 0, sizeof(*k));
	inany_from_v4(&k->gaddr, f->c.guest4);
	inany_from_v4(&k->faddr, f->c.gw4);
	k->gport = 40000;
	k->fport = (uint16_t)fport;
}

static void test_inbound_alike_peers_ports(void)
{
	union sockaddr_inany a, b;
	struct flow_key k;
	struct udp_flow *u;
	int seen[UDP_REMAP_TRIES], port;
	bool distinct = true;
	struct fake f;

	CHECK(fake_open(&f, 1500, 0) == 0);
	/* Both loopback peers appear as 10.0.2.2:5000; listener never used. */
	peer4(&a, "127.0.0.1", 5000);
	peer4(&b, "127.0.0.2", 5000);
	CHECK(inbound_port(&f, -1, &a) == 5000);
	/* Each time its port is taken (here by a stand-in flow), the second
	 * peer gets the next of a bounded sequence of ephemeral ports. */
	for (int i = 0; i < UDP_REMAP_TRIES; i++) {
		seen[i] = port = inbound_port(&f, -1, &b);
		CHECK(port >= UDP_REMAP_BASE && port != 5000);
		for (int j = 0; j < i; j++)
			distinct = distinct && seen[j] != port;
		/* Found again by peer: the same flow, the same port. */
		CHECK(inbound_port(&f, -1, &b) == port);
		u = udp_flow_lookup_peer(f.c.flows, -1, &b);
		gw_key(&f, &k, port);
		CHECK(u && u == udp_flow_lookup(f.c.flows, &k));
		if (!u)
			break;
		udp_flow_free(&f.c, &u);
		CHECK(udp_flow_add(&f.c, &k, false) != NULL);
	}
	CHECK(distinct);
	/* Every candidate taken: dropped and counted, nothing sent. */
	CHECK(inbound_port(&f, -1, &b) == -1);
	CHECK(f.c.stats.drops[DROP_FLOW_LIMIT] == 1);
	CHECK(f.c.stats.flows[PROTO_UDP] == 1 + UDP_REMAP_TRIES);
	/* Once the first peer's flow ends, its port is free again. */
	gw_key(&f, &k, 5000);
	u = udp_flow_lookup(f.c.flows, &k);
	CHECK(u && u == udp_flow_lookup_peer(f.c.flows, -1, &a));
	if (u)
		udp_flow_free(&f.c, &u);
	CHECK(inbound_port(&f, -1, &b) == 5000);
	fake_close(&f);
}

/**
 * loopback_udp() - a UDP socket bound to a loopback address
 * @addr:	address literal, IPv4 or IPv6
 * @port:	port, 0 for any
 * @sa:		filled with the bound address
 *
 * Return: the socket, or -1
 */
static int loopback_udp(const char *addr, uint16_t port,
                        union sockaddr_inany *sa)
{
	struct in6_addr a;
	struct in_addr v4;
	socklen_t len;
	int fd;

	if (inet_pton(AF_INET, addr, &v4) == 1)
		inany_from_v4(&a, v4);
	else if (inet_pton(AF_INET6, addr, &a) != 1)
		return -1;
	sockaddr_from_inany(sa, &len, &a, port);
	fd = socket(sa->sa.sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, &sa->sa, len) ||
	    getsockname(fd, &sa->sa, &len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/**
 * recv_wait() - receive one datagram, waiting up to a second
 * @fd:		socket
 * @buf:	at least 64 bytes
 * @from:	filled with the sender
 *
 * Return: its length, or -1
 */
static ssize_t recv_wait(int fd, char *buf, union sockaddr_inany *from)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	socklen_t len = sizeof(*from);

	if (poll(&pfd, 1, 1000) != 1)
		return -1;
	return recvfrom(fd, buf, 63, MSG_DONTWAIT, &from->sa, &len);
}

/**
 * relay() - a host peer's datagram through a listener to the guest
 * @f:		fake context
 * @lfd:	listener
 * @lsa:	its address
 * @pfd:	peer's socket
 * @msg:	text to send
 *
 * Return: the source port the guest sees, or -1
 */
static int relay(struct fake *f, int lfd, const union sockaddr_inany *lsa,
                 int pfd, const char *msg)
{
	socklen_t len = lsa->sa.sa_family == AF_INET ? sizeof(lsa->sa4)
	                                             : sizeof(lsa->sa6);
	union sockaddr_inany peer;
	struct in6_addr guest;
	char buf[64];
	ssize_t n;

	if (sendto(pfd, msg, strlen(msg), 0, &lsa->sa, len) < 0)
		return -1;
	n = recv_wait(lfd, buf, &peer);
	if (n < 0)
		return -1;
	inany_from_v4(&guest, f->c.guest4);
	udp_inbound(&f->c, lfd, &peer, &guest, 40000, (uint8_t *)buf,
	            (size_t)n);
	return guest_sport(f, next_frame(f));
}

/**
 * guest_reply() - the guest answers from port 40000 to 10.0.2.2:@port
 * @f:		fake context
 * @port:	the port the guest saw the peer's datagram come from
 * @msg:	text
 */
static void guest_reply(struct fake *f, int port, const char *msg)
{
	struct pkt p;

	udp4(&p, "10.0.2.2", (uint16_t)port, strlen(msg), 0);
	memcpy(p.l4 + 8, msg, strlen(msg));
	udp_input(&f->c, &p);
}

/**
 * got() - whether a peer received exactly @msg, from the listener @lsa
 * @pfd:	peer's socket
 * @msg:	expected text
 * @lsa:	listener's address
 *
 * Return: true if so, and nothing else was waiting
 */
static bool got(int pfd, const char *msg, const union sockaddr_inany *lsa)
{
	union sockaddr_inany from = {0};
	char buf[64];
	ssize_t n = recv_wait(pfd, buf, &from);
	bool same_port = lsa->sa.sa_family == AF_INET
	                         ? from.sa4.sin_port == lsa->sa4.sin_port
	                         : from.sa6.sin6_port == lsa->sa6.sin6_port;

	return n == (ssize_t)strlen(msg) && !memcmp(buf, msg, (size_t)n) &&
	       from.sa.sa_family == lsa->sa.sa_family && same_port &&
	       recv(pfd, buf, sizeof(buf), MSG_DONTWAIT) < 0;
}

/**
 * alike_peers_body() - unit_netns_run() body of test_inbound_alike_peers()
 */
static void alike_peers_body(void)
{
	union sockaddr_inany l4a, l6a, aa, ba, ca;
	int l4 = loopback_udp("127.0.0.1", 0, &l4a);
	int l6 = loopback_udp("::1", 0, &l6a);
	int a = loopback_udp("127.0.0.1", 5000, &aa);
	int b = loopback_udp("127.0.0.2", 5000, &ba);
	int cc = loopback_udp("::1", 5000, &ca);
	int pa, pb, pc;
	struct fake f;

	CHECK(l4 >= 0 && l6 >= 0 && a >= 0 && b >= 0 && cc >= 0);
	CHECK(fake_open(&f, 1500, 0) == 0);
	/* To the IPv4 guest all three are 10.0.2.2, port 5000. */
	pa = relay(&f, l4, &l4a, a, "a1");
	pb = relay(&f, l4, &l4a, b, "b1");
	pc = relay(&f, l6, &l6a, cc, "c1");
	CHECK(pa == 5000);
	CHECK(pb > 0 && pb != pa);
	CHECK(pc > 0 && pc != pa && pc != pb);
	/* A later datagram keeps its peer's flow and port. */
	CHECK(relay(&f, l4, &l4a, b, "b2") == pb);
	CHECK(f.c.stats.flows[PROTO_UDP] == 3);
	/* Each reply reaches the peer the guest answers, from its listener. */
	guest_reply(&f, pc, "to c");
	guest_reply(&f, pb, "to b");
	guest_reply(&f, pa, "to a");
	CHECK(got(a, "to a", &l4a));
	CHECK(got(b, "to b", &l4a));
	CHECK(got(cc, "to c", &l6a));
	fake_close(&f);
	close(l4);
	close(l6);
	close(a);
	close(b);
	close(cc);
}

static void test_inbound_alike_peers(void)
{
	CHECK(unit_netns_run(alike_peers_body));
}

/**
 * key_n() - a distinct flow key per @i
 * @k:		filled
 * @i:		index
 */
static void key_n(struct flow_key *k, unsigned int i)
{
	memset(k, 0, sizeof(*k));
	inany_from_v4(&k->gaddr, (struct in_addr){htonl(0x0a000264)});
	inany_from_v4(&k->faddr,
	              (struct in_addr){htonl(0xc6120001 + i / 60000)});
	k->gport = (uint16_t)(1024 + i % 60000);
	k->fport = 9;
}

static void test_flow_limit(void)
{
	struct flow_key k;
	struct fake f;
	bool all = true;

	/* A clock that stands still: filling the table may take over a
	 * second (ThreadSanitizer), which would make the first flows idle.
	 */
	clock_set_fake(5000000000ULL);
	CHECK(fake_open(&f, 1500, 0) == 0);
	for (unsigned int i = 0; i < UDP_FLOW_MAX; i++) {
		key_n(&k, i);
		all = all && udp_flow_add(&f.c, &k, false);
	}
	CHECK(all);
	CHECK(f.c.stats.flows[PROTO_UDP] == UDP_FLOW_MAX);
	key_n(&k, 7);
	CHECK(udp_flow_lookup(f.c.flows, &k) != NULL);
	/* Everyone active just now: the table refuses a new flow. */
	key_n(&k, UDP_FLOW_MAX);
	CHECK(udp_flow_add(&f.c, &k, false) == NULL);
	/* Once the least recently used is idle, it makes room. */
	udp_flow_next(f.c.udp, NULL)->last -= 2;
	CHECK(udp_flow_add(&f.c, &k, true) != NULL);
	CHECK(udp_flow_lookup(f.c.flows, &k) != NULL);
	key_n(&k, 0);
	CHECK(udp_flow_lookup(f.c.flows, &k) == NULL);
	CHECK(f.c.stats.flows[PROTO_UDP] == UDP_FLOW_MAX - 1);
	CHECK(f.c.stats.flows[PROTO_DNS] == 1);
	fake_close(&f);
	CHECK(f.c.stats.flows[PROTO_UDP] == 0 &&
	      f.c.stats.flows[PROTO_DNS] == 0);
	clock_set_real();
}

/**
 * age_all() - make every flow's last activity @secs before @now
 * @f:		fake context
 * @now:	reference time
 * @secs:	age
 */
static void age_all(struct fake *f, uint64_t now, uint64_t secs)
{
	for (struct udp_flow *u = udp_flow_next(f->c.udp, NULL); u;
	     u = udp_flow_next(f->c.udp, u))
		u->last = now - secs;
}

static void test_flow_timeouts(void)
{
	struct flow_key k;
	struct udp_flow *dns, *one, *both;
	uint64_t now = clock_s() + 1000;
	struct fake f;

	CHECK(fake_open(&f, 1500, 0) == 0);
	key_n(&k, 1);
	dns = udp_flow_add(&f.c, &k, true);
	key_n(&k, 2);
	one = udp_flow_add(&f.c, &k, false);
	key_n(&k, 3);
	both = udp_flow_add(&f.c, &k, false);
	CHECK(dns && one && both);
	udp_flow_touch(f.c.udp, one, true);
	udp_flow_touch(f.c.udp, both, true);
	udp_flow_touch(f.c.udp, both, false);
	age_all(&f, now, UDP_TIMEOUT_DNS - 1);
	udp_flow_expire(&f.c, now);
	CHECK(flow_count(f.c.flows, FLOW_UDP) == 3);
	age_all(&f, now, UDP_TIMEOUT_DNS);
	udp_flow_expire(&f.c, now);
	CHECK(flow_count(f.c.flows, FLOW_UDP) == 2);
	age_all(&f, now, UDP_TIMEOUT);
	udp_flow_expire(&f.c, now);
	CHECK(flow_count(f.c.flows, FLOW_UDP) == 1);
	key_n(&k, 3);
	CHECK(udp_flow_lookup(f.c.flows, &k) == both);
	age_all(&f, now, UDP_TIMEOUT_STREAM - 1);
	udp_flow_expire(&f.c, now);
	CHECK(flow_count(f.c.flows, FLOW_UDP) == 1);
	age_all(&f, now, UDP_TIMEOUT_STREAM);
	udp_flow_expire(&f.c, now);
	CHECK(flow_count(f.c.flows, FLOW_UDP) == 0);
	fake_close(&f);
}

/* Flows in the expiry test: more than a sweep should ever look at. */
#define SWEEP_FLOWS 3000U

/* The 1 s sweep looks at the flows it ends, and at most one more per
 * timeout, however many are held: flows that exchanged datagrams both
 * ways (120 s) and were idle a minute used to be looked at, all of them,
 * every second.
 */
static void test_sweep_cost(void)
{
	uint64_t now = clock_s() + 1000;
	struct flow_key k;
	struct udp_flow *u;
	unsigned int looked;
	struct fake f;
	bool all = true;

	CHECK(fake_open(&f, 1500, 0) == 0);
	for (unsigned int i = 0; i < SWEEP_FLOWS; i++) {
		key_n(&k, i);
		u = udp_flow_add(&f.c, &k, false);
		all = all && u;
		if (!u)
			break;
		udp_flow_touch(f.c.udp, u, true);
		udp_flow_touch(f.c.udp, u, false);
	}
	CHECK(all);
	age_all(&f, now, 60);
	looked = udp_flow_expire(&f.c, now);
	printf("#   %u flows idle 60 s: %u looked at\n", SWEEP_FLOWS, looked);
	CHECK(looked <= UDP_CLASSES);
	CHECK(flow_count(f.c.flows, FLOW_UDP) == SWEEP_FLOWS);
	/* Past their timeout, each is looked at once, as it ends. */
	age_all(&f, now, UDP_TIMEOUT_STREAM);
	looked = udp_flow_expire(&f.c, now);
	CHECK(looked == SWEEP_FLOWS);
	CHECK(flow_count(f.c.flows, FLOW_UDP) == 0);
	fake_close(&f);
}

/* Echo flows in the ping expiry test. */
#define PING_FLOWS 300U

/**
 * echo4() - an echo request from the guest to 192.0.2.1, which no route
 *	     of the test's namespace reaches: nothing leaves it
 * @p:		filled
 * @id:		echo identifier, network order
 */
static void echo4(struct pkt *p, uint16_t id)
{
	struct iphdr *ih = (struct iphdr *)(void *)pkt_buf;
	uint8_t *icmp = pkt_buf + 20;

	memset(pkt_buf, 0, 36);
	ih->version = 4;
	ih->ihl = 5;
	ih->tot_len = htons(36);
	ih->ttl = 64;
	ih->protocol = IPPROTO_ICMP;
	inet_pton(AF_INET, "10.0.2.100", &ih->saddr);
	inet_pton(AF_INET, "192.0.2.1", &ih->daddr);
	ih->check = csum_ip4_header(ih, 20);
	icmp[0] = ICMP_ECHO;
	memcpy(icmp + 4, &id, sizeof(id));
	memset(p, 0, sizeof(*p));
	inany_from_v4(&p->src, (struct in_addr){ih->saddr});
	inany_from_v4(&p->dst, (struct in_addr){ih->daddr});
	p->proto = IPPROTO_ICMP;
	p->l3 = pkt_buf;
	p->l3len = 20;
	p->l4 = icmp;
	p->l4len = 16;
}

/**
 * ping_sweep_body() - unit_netns_run() body of test_ping_sweep_cost()
 */
static void ping_sweep_body(void)
{
	unsigned int looked;
	struct fake f;
	struct pkt p;

	clock_set_fake(5000000000ULL);
	/* A new namespace lets no group open ping sockets ("1 0"). */
	CHECK(unit_write_file("/proc/sys/net/ipv4/ping_group_range",
	                      "0 2147483647"));
	CHECK(fake_open(&f, 1500, 0) == 0);
	CHECK(!ping_init(&f.c));
	for (unsigned int i = 0; i < PING_FLOWS; i++) {
		echo4(&p, htons((uint16_t)(i + 1)));
		ping_forward(&f.c, &p);
	}
	CHECK(flow_count(f.c.flows, FLOW_PING) == PING_FLOWS);
	clock_advance(59000000000ULL);
	looked = ping_expire_idle(&f.c, clock_s());
	printf("#   %u echo flows idle 59 s: %u looked at\n", PING_FLOWS,
	       looked);
	CHECK(looked <= 1);
	CHECK(flow_count(f.c.flows, FLOW_PING) == PING_FLOWS);
	/* The last one asks again; the others reach 60 s and close. */
	echo4(&p, htons((uint16_t)PING_FLOWS));
	ping_forward(&f.c, &p);
	clock_advance(1000000000ULL);
	looked = ping_expire_idle(&f.c, clock_s());
	CHECK(looked == PING_FLOWS);
	CHECK(flow_count(f.c.flows, FLOW_PING) == 1);
	ping_cleanup(&f.c);
	fake_close(&f);
	clock_set_real();
}

/* The echo flows' sweep (every 10 s) looks at the flows it closes and one
 * more: it used to look at every one.
 */
static void test_ping_sweep_cost(void)
{
	CHECK(unit_netns_run(ping_sweep_body));
}

/* Clients in the spliced UDP sweep test: fewer than the half of the
 * table each direction has (FLOW_USPLICE_MAX).
 */
#define USPLICE_CLIENTS 100U

/**
 * usplice_sweep_body() - unit_netns_run() body of
 *			  test_usplice_sweep_cost()
 */
static void usplice_sweep_body(void)
{
	union sockaddr_inany la, peer;
	int lfd = loopback_udp("127.0.0.1", 0, &la);
	struct in6_addr dst;
	unsigned int looked;
	struct fake f;

	clock_set_fake(5000000000ULL);
	CHECK(lfd >= 0);
	CHECK(fake_open(&f, 1500, 0) == 0);
	inany_from_v4(&dst, (struct in_addr){htonl(INADDR_LOOPBACK)});
	for (unsigned int i = 0; i < USPLICE_CLIENTS; i++) {
		peer4(&peer, "127.0.0.1", (uint16_t)(20000 + i));
		usplice_datagram(&f.c, lfd, &peer, false, &dst, 9,
		                 (uint8_t *)"x", 1);
	}
	CHECK(flow_count(f.c.flows, FLOW_USPLICE) == USPLICE_CLIENTS);
	clock_advance((USPLICE_TIMEOUT - 1) * 1000000000ULL);
	looked = usplice_sweep(&f.c, clock_s());
	printf("#   %u spliced UDP clients idle %u s: %u looked at\n",
	       USPLICE_CLIENTS, (unsigned int)USPLICE_TIMEOUT - 1, looked);
	CHECK(looked <= 1);
	CHECK(flow_count(f.c.flows, FLOW_USPLICE) == USPLICE_CLIENTS);
	clock_advance(1000000000ULL);
	looked = usplice_sweep(&f.c, clock_s());
	CHECK(looked == USPLICE_CLIENTS);
	CHECK(flow_count(f.c.flows, FLOW_USPLICE) == 0);
	usplice_stop(&f.c);
	fake_close(&f);
	close(lfd);
	clock_set_real();
}

/* The spliced UDP flows' sweep (every 10 s) looks at the flows it closes
 * and one more per direction: it used to look at every one.
 */
static void test_usplice_sweep_cost(void)
{
	CHECK(unit_netns_run(usplice_sweep_body));
}

/* A tunnel datagram as the guest's tap gets it: outer Ethernet, IPv4 and
 * UDP, the tunnel's header, then the inner Ethernet, IPv4 and L4 headers
 * and TUN_DATA bytes. VXLAN (RFC 7348) carries a UDP datagram here;
 * GENEVE (RFC 8926) a TCP SYN after an 8-byte option, so that
 * csum_start and csum_offset differ from VXLAN's.
 */
#define TUN_DATA 32
#define TUN_MAX (14 + 20 + 8 + 16 + 14 + 20 + 20 + TUN_DATA)

struct tun_kind {
	const char *name;
	size_t encap_len; /* the tunnel header, options included */
	uint8_t inner_proto;
	size_t inner_l4_len;
	uint16_t csum_offset;
};

static const struct tun_kind tun_vxlan = {"VXLAN", 8, IPPROTO_UDP, 8, 6};
static const struct tun_kind tun_geneve = {"GENEVE", 16, IPPROTO_TCP, 20, 16};

static size_t tun_inner_l3(const struct tun_kind *k)
{
	return 14 + 20 + 8 + k->encap_len + 14;
}

static size_t tun_inner_l4(const struct tun_kind *k)
{
	return tun_inner_l3(k) + 20;
}

static size_t tun_len(const struct tun_kind *k)
{
	return tun_inner_l4(k) + k->inner_l4_len + TUN_DATA;
}

/**
 * tun_encap() - write the tunnel header
 * @b:		where it goes
 * @k:		which tunnel
 */
static void tun_encap(uint8_t *b, const struct tun_kind *k)
{
	if (k == &tun_vxlan) {
		b[0] = 0x08; /* VNI valid */
		return;
	}
	b[0] = (k->encap_len - 8) / 4; /* version 0, option length */
	b[2] = 0x65;                   /* Transparent Ethernet Bridging */
	b[3] = 0x58;
	b[8] = 0x01; /* an option: class 0x0102, type 0x80, 4 data bytes */
	b[9] = 0x02;
	b[10] = 0x80;
	b[11] = 0x01;
	memset(b + 12, 'o', 4);
}

/**
 * tun_inner_l4_hdr() - write the inner UDP header, or a TCP SYN's
 * @b:		where it goes
 * @k:		which tunnel (its inner protocol)
 * @check:	the checksum field's value
 */
static void tun_inner_l4_hdr(uint8_t *b, const struct tun_kind *k,
                             uint16_t check)
{
	if (k->inner_proto == IPPROTO_UDP) {
		struct udphdr iu = {.source = htons(5000),
		                    .dest = htons(6000),
		                    .len = htons(8 + TUN_DATA),
		                    .check = check};

		memcpy(b, &iu, sizeof(iu));
		return;
	}
	struct tcphdr th = {.source = htons(5000),
	                    .dest = htons(6000),
	                    .seq = htonl(1),
	                    .doff = 5,
	                    .syn = 1,
	                    .window = htons(65535),
	                    .check = check};

	memcpy(b, &th, sizeof(th));
}

/**
 * tunnel_frame() - a guest tunnel frame to 10.0.2.2:@dport whose inner
 *		    checksum is left partial for the tap, as a guest kernel
 *		    leaves it
 * @b:		TUN_MAX bytes, filled
 * @vh:		filled: NEEDS_CSUM at the inner L4 header
 * @dport:	outer destination port
 * @k:		which tunnel
 *
 * Return: the frame's length
 */
static size_t tunnel_frame(uint8_t *b, struct virtio_net_hdr *vh,
                           uint16_t dport, const struct tun_kind *k)
{
	const size_t len = tun_len(k), l3 = tun_inner_l3(k);
	const size_t inner_len = 20 + k->inner_l4_len + TUN_DATA;
	/* Built aside and copied in: the headers are not aligned in @b. */
	struct iphdr ih = {.version = 4,
	                   .ihl = 5,
	                   .ttl = 64,
	                   .protocol = IPPROTO_UDP,
	                   .tot_len = htons(len - 14)};
	struct iphdr in = {.version = 4,
	                   .ihl = 5,
	                   .ttl = 64,
	                   .protocol = k->inner_proto,
	                   .tot_len = htons(inner_len)};
	struct udphdr uh = {.source = htons(40001),
	                    .dest = htons(dport),
	                    .len = htons(len - 34)};
	struct in6_addr s, d;

	memset(b, 0, TUN_MAX);
	memcpy(b, "\x52\x55\x0a\x00\x02\x02\x02\x00\x00\x00\x00\x01\x08\x00",
	       14);
	inet_pton(AF_INET, "10.0.2.100", &ih.saddr);
	inet_pton(AF_INET, "10.0.2.2", &ih.daddr);
	ih.check = csum_ip4_header(&ih, 20);
	memcpy(b + 14, &ih, 20);
	memcpy(b + 34, &uh, 8);
	tun_encap(b + 42, k);
	memcpy(b + l3 - 14,
	       "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01"
	       "\x08\x00",
	       14);
	inet_pton(AF_INET, "10.244.0.1", &in.saddr);
	inet_pton(AF_INET, "10.244.1.1", &in.daddr);
	in.check = csum_ip4_header(&in, 20);
	memcpy(b + l3, &in, 20);
	/* What the guest leaves: the pseudo-header's sum, uncomplemented. */
	inany_from_v4(&s, (struct in_addr){in.saddr});
	inany_from_v4(&d, (struct in_addr){in.daddr});
	tun_inner_l4_hdr(b + tun_inner_l4(k), k,
	                 (uint16_t)~csum_fold(ip_pseudo_csum(
	                         &s, &d, k->inner_proto, inner_len - 20)));
	memset(b + tun_inner_l4(k) + k->inner_l4_len, 'v', TUN_DATA);
	*vh = (struct virtio_net_hdr){.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
	                              .csum_start = tun_inner_l4(k),
	                              .csum_offset = k->csum_offset};
	return len;
}

/**
 * inner_csum_ok() - whether the inner checksum of a tunnel payload as the
 *		     host peer got it verifies
 * @pl:		outer UDP payload
 * @n:		its length
 * @k:		which tunnel
 *
 * Return: true if so
 */
static bool inner_csum_ok(const uint8_t *pl, ssize_t n,
                          const struct tun_kind *k)
{
	const size_t l3 = tun_inner_l3(k) - 42, l4 = tun_inner_l4(k) - 42;
	const size_t l4_len = k->inner_l4_len + TUN_DATA;
	struct in6_addr s, d;
	struct iphdr in;

	if (n != (ssize_t)(tun_len(k) - 42))
		return false;
	memcpy(&in, pl + l3, sizeof(in));
	inany_from_v4(&s, (struct in_addr){in.saddr});
	inany_from_v4(&d, (struct in_addr){in.daddr});
	return csum_fold(
	               csum_add(ip_pseudo_csum(&s, &d, k->inner_proto, l4_len),
	                        pl + l4, l4_len)) == 0;
}

/**
 * tunnel_body() - the guest's partial inner checksum is finished before
 *		   the datagram leaves, for VXLAN and GENEVE; one tapir
 *		   can't finish is dropped, counted
 *
 * Before, the payload left as it came, with the bare pseudo-header sum,
 * and the far end of a VXLAN overlay dropped every inner datagram.
 */
static void tunnel_body(void)
{
	static const struct tun_kind *const kinds[] = {&tun_vxlan, &tun_geneve};
	struct pollfd pfd = {.events = POLLIN};
	uint8_t b[TUN_MAX], got_buf[TUN_MAX];
	struct virtio_net_hdr vh;
	union sockaddr_inany sa;
	struct frame fr = {.vh = &vh, .data = b};
	struct fake f;
	uint16_t port;
	ssize_t n;

	pfd.fd = loopback_udp("127.0.0.1", 0, &sa);
	CHECK(pfd.fd >= 0);
	port = ntohs(sa.sa4.sin_port);
	CHECK(fake_open(&f, 1500, sizeof(vh)) == 0);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		fr.len = tunnel_frame(b, &vh, port, kinds[i]);
		ip4_input(&f.c, &fr);
		n = poll(&pfd, 1, 1000) == 1
		            ? recv(pfd.fd, got_buf, sizeof(got_buf),
		                   MSG_DONTWAIT)
		            : -1;
		if (!inner_csum_ok(got_buf, n, kinds[i]))
			fprintf(stderr, "%s: inner checksum wrong\n",
			        kinds[i]->name);
		CHECK(inner_csum_ok(got_buf, n, kinds[i]));
		CHECK(!(vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM));
	}
	/* As a GSO frame, or pointing into the outer headers: dropped. */
	fr.len = tunnel_frame(b, &vh, port, &tun_geneve);
	vh.gso_type = VIRTIO_NET_HDR_GSO_UDP_L4;
	vh.gso_size = 100;
	ip4_input(&f.c, &fr);
	fr.len = tunnel_frame(b, &vh, port, &tun_vxlan);
	vh.csum_start = 14 + 10;
	vh.csum_offset = 0;
	ip4_input(&f.c, &fr);
	/* Past the end of the frame: dropped, not read beyond it. */
	fr.len = tunnel_frame(b, &vh, port, &tun_geneve);
	vh.csum_start = fr.len - 1;
	ip4_input(&f.c, &fr);
	CHECK(f.c.stats.drops[DROP_BAD_VNET_HDR] == 3);
	CHECK(poll(&pfd, 1, 100) == 0);
	fake_close(&f);
	close(pfd.fd);
}

static void test_tunnel_inner_csum(void)
{
	CHECK(unit_netns_run(tunnel_body));
}

/* Datagrams a host peer floods a socket of tapir's with: far more than
 * any receive buffer the kernel grants (8 MiB with rmem_max at 4 MiB).
 */
#define FLOOD_N 20000
#define FLOOD_LEN 1000

/**
 * flood() - send FLOOD_N datagrams of FLOOD_LEN bytes from @fd to @to
 * @fd:		sending socket
 * @to:		destination
 *
 * Return: how many were sent
 */
static unsigned int flood(int fd, const union sockaddr_inany *to)
{
	static const uint8_t data[FLOOD_LEN];
	unsigned int sent = 0;

	for (unsigned int i = 0; i < FLOOD_N; i++)
		sent += sendto(fd, data, sizeof(data), 0, &to->sa,
		               sizeof(to->sa4)) == FLOOD_LEN;
	return sent;
}

/**
 * drain_guest() - run tapir's loop and read its frames to the guest until
 *		   neither has anything left
 * @f:		fake context
 * @lfd:	a forward's socket to read each round too, or -1
 * @ovfl:	its drop count, for udp_listener_read()
 *
 * Return: frames of FLOOD_LEN payload bytes the guest got
 */
static unsigned int drain_guest(struct fake *f, int lfd, uint32_t *ovfl)
{
	struct in6_addr guest;
	unsigned int frames = 0, idle = 0;
	ssize_t n;

	inany_from_v4(&guest, f->c.guest4);
	while (idle < 50) {
		bool any = false;

		if (lfd >= 0)
			udp_listener_read(&f->c, lfd, &guest, 9999, ovfl);
		event_base_loop(f->c.base, EVLOOP_NONBLOCK);
		while ((n = next_frame(f)) >= 0) {
			frames += n == 14 + 20 + 8 + FLOOD_LEN;
			any = true;
		}
		idle = any ? 0 : idle + 1;
	}
	return frames;
}

/**
 * overflow_body() - a host peer floods a flow's socket and a forward's
 *		     socket faster than tapir reads: every datagram reaches
 *		     the guest or is counted as host_rcvbuf, none vanishes
 */
static void overflow_body(void)
{
	union sockaddr_inany psa, fsa, lsa;
	socklen_t len = sizeof(fsa);
	unsigned int sent, got;
	uint32_t ovfl = 0;
	struct fake f;
	struct pkt p;
	static char buf[FLOOD_LEN];
	int pfd, lfd;

	pfd = loopback_udp("127.0.0.1", 0, &psa);
	lfd = loopback_udp("127.0.0.1", 0, &lsa);
	/* The fake tap takes a round of frames (its own netns's setting). */
	CHECK(unit_write_file("/proc/sys/net/unix/max_dgram_qlen", "512"));
	CHECK(pfd >= 0 && lfd >= 0 && fake_open(&f, 1500, 0) == 0);
	/* A tap that never blocks tapir: what it can't take is counted. */
	CHECK(fcntl(f.c.tapfd[0], F_SETFL, O_NONBLOCK) == 0);
	/* A guest flow to the peer; the peer learns its source. */
	udp4(&p, "10.0.2.2", ntohs(psa.sa4.sin_port), 5, 1);
	udp_input(&f.c, &p);
	CHECK(recvfrom(pfd, buf, sizeof(buf), 0, &fsa.sa, &len) == 5);
	sent = flood(pfd, &fsa);
	got = drain_guest(&f, -1, NULL);
	/* The count comes with the next datagram, as in a stream. */
	sent += sendto(pfd, buf, FLOOD_LEN, 0, &fsa.sa, sizeof(fsa.sa4)) ==
	        FLOOD_LEN;
	got += drain_guest(&f, -1, NULL);
	CHECK(sent == FLOOD_N + 1 && got < sent);
	CHECK(f.c.stats.drops[DROP_HOST_RCVBUF] > 0);
	CHECK(f.c.stats.drops[DROP_HOST_RCVBUF] +
	              f.c.stats.drops[DROP_TAP_WRITE] ==
	      sent - got);
	/* The same through a forward's socket (tuned as hostfwd.c does). */
	memset(f.c.stats.drops, 0, sizeof(f.c.stats.drops));
	udp_sock_tune(lfd);
	sent = flood(pfd, &lsa);
	got = drain_guest(&f, lfd, &ovfl);
	sent += sendto(pfd, buf, FLOOD_LEN, 0, &lsa.sa, sizeof(lsa.sa4)) ==
	        FLOOD_LEN;
	got += drain_guest(&f, lfd, &ovfl);
	CHECK(sent == FLOOD_N + 1 && got < sent && ovfl > 0);
	CHECK(ovfl == f.c.stats.drops[DROP_HOST_RCVBUF]);
	CHECK(f.c.stats.drops[DROP_HOST_RCVBUF] +
	              f.c.stats.drops[DROP_TAP_WRITE] ==
	      sent - got);
	fake_close(&f);
	close(pfd);
	close(lfd);
}

static void test_overflow(void)
{
	CHECK(unit_netns_run(overflow_body));
}

const struct unit_case unit_cases[] = {
        {"short and bad-length datagrams", test_lengths},
        {"checksums: wrong, absent, partial", test_checksums},
        {"IPv6 requires a checksum", test_ipv6_needs_checksum},
        {"--disable-dns and broadcasts drop silently", test_silent_drops},
        {"inbound datagram to the guest, from the gateway", test_inbound_small},
        {"inbound checksum offloaded to the tap", test_inbound_offload},
        {"inbound 60000 bytes leave as checksummed fragments",
         test_inbound_fragmented},
        {"USO frames split into at most 128 datagrams", test_uso_segment_cap},
        {"alike host peers get their own far ports, boundedly",
         test_inbound_alike_peers_ports},
        {"replies reach the right one of alike host peers (own netns)",
         test_inbound_alike_peers},
        {"flow table bound and LRU eviction", test_flow_limit},
        {"flow idle timeouts", test_flow_timeouts},
        {"the expiry sweep looks at the flows it ends, not at every flow",
         test_sweep_cost},
        {"the echo flows' sweep looks at the flows it closes, not at every "
         "flow",
         test_ping_sweep_cost},
        {"the spliced UDP flows' sweep looks at the flows it closes, not at "
         "every flow",
         test_usplice_sweep_cost},
        {"a VXLAN or GENEVE datagram's partial inner checksum is finished "
         "before it leaves; a GSO one is dropped, counted",
         test_tunnel_inner_csum},
        {"a host peer floods a flow and a forward: what its socket drops "
         "is counted as host_rcvbuf, nothing vanishes",
         test_overflow},
        {NULL, NULL},
};
