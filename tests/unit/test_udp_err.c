// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: the host's errors about a guest's UDP datagrams come
 * back to the guest as ICMP, quoted, rate-limited, read in bounded batches
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/icmp6.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/ip_icmp.h>
#include <netinet/udp.h>
#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/stack/csum.h"
#include "driver/flow/flow.h"
#include "driver/stack/frag.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/stack/ip4.h"
#include "driver/udp/udp.h"
#include "driver/udp/udp_err.h"
#include "driver/udp/udp_flow.h"
#include "tests/unit/fakectx.h"
#include "tests/unit/unit.h"

/* ICMP errors the guest may get at once (icmp.c's ICMP_ERR_BURST). */
#define BURST 50
/* Datagrams of the flood: several batches of UDP_ERR_BATCH, and more than
 * the burst. */
#define FLOOD 200

static const uint8_t guest_mac[6] = {0x02, 0, 0, 0, 0, 1};
static uint8_t pkt_buf[4096];
static uint8_t rx[65536];

/**
 * struct fake - a context with its loop and UDP, and the guest's tap end
 * @c:		context
 * @o:		its options
 * @peer:	the guest's end of the tap
 */
struct fake {
	struct ctx c;
	struct opts o;
	int peer;
};

/**
 * fake_open() - a context for 10.0.2.0/24 and fd00::/64, UDP ready
 * @f:		filled
 *
 * Return: 0 on success
 */
static int fake_open(struct fake *f)
{
	f->peer = fake_ctx_init(&f->c, &f->o, true, guest_mac);
	return fake_ctx_udp_open(&f->c);
}

/**
 * fake_close() - release fake_open()
 * @f:		fake context
 */
static void fake_close(struct fake *f)
{
	fake_ctx_udp_close(&f->c);
	fake_ctx_close(&f->c, f->peer);
}

/**
 * udp_from_guest() - build a guest datagram and hand it to tapir
 * @f:		fake context
 * @sport:	source port
 * @dst:	destination literal: 10.0.2.x or fd00::x
 * @dport:	destination port
 * @len:	payload bytes (a counting pattern)
 *
 * The packet stays in pkt_buf, for comparing quotes with.
 */
static void udp_from_guest(struct fake *f, uint16_t sport, const char *dst,
                           uint16_t dport, size_t len)
{
	bool v6 = strchr(dst, ':');
	size_t l3 = v6 ? 40 : 20;
	struct udphdr *uh = (struct udphdr *)(void *)(pkt_buf + l3);
	struct pkt p = {0};
	uint32_t sum;

	memset(pkt_buf, 0, l3 + 8);
	for (size_t i = 0; i < len; i++)
		pkt_buf[l3 + 8 + i] = (uint8_t)i;
	if (v6) {
		struct ip6_hdr *ih = (struct ip6_hdr *)(void *)pkt_buf;

		ih->ip6_flow = htonl(6U << 28);
		ih->ip6_plen = htons((uint16_t)(8 + len));
		ih->ip6_nxt = IPPROTO_UDP;
		ih->ip6_hlim = 64;
		inet_pton(AF_INET6, "fd00::100", &ih->ip6_src);
		inet_pton(AF_INET6, dst, &ih->ip6_dst);
		p.src = ih->ip6_src;
		p.dst = ih->ip6_dst;
	} else {
		struct iphdr *ih = (struct iphdr *)(void *)pkt_buf;

		ih->version = 4;
		ih->ihl = 5;
		ih->tot_len = htons((uint16_t)(28 + len));
		ih->ttl = 64;
		ih->protocol = IPPROTO_UDP;
		inet_pton(AF_INET, "10.0.2.100", &ih->saddr);
		inet_pton(AF_INET, dst, &ih->daddr);
		ih->check = csum_ip4_header(ih, 20);
		inany_from_v4(&p.src, (struct in_addr){ih->saddr});
		inany_from_v4(&p.dst, (struct in_addr){ih->daddr});
	}
	uh->source = htons(sport);
	uh->dest = htons(dport);
	uh->len = htons((uint16_t)(8 + len));
	sum = ip_pseudo_csum(&p.src, &p.dst, IPPROTO_UDP, 8 + len);
	uh->check = csum_fold(csum_add(sum, uh, 8 + len));
	p.v6 = v6;
	p.proto = IPPROTO_UDP;
	p.l3 = pkt_buf;
	p.l3len = l3;
	p.l4 = pkt_buf + l3;
	p.l4len = 8 + len;
	udp_input(&f->c, &p);
}

/**
 * flow_fd() - the host socket of the guest's flow from port 40000
 * @f:		fake context
 * @dst:	the flow's destination literal
 * @dport:	its port
 *
 * Return: the socket, or -1 if there is no such flow
 */
static int flow_fd(struct fake *f, const char *dst, uint16_t dport)
{
	struct flow_key k = {0};
	struct udp_flow *u;
	struct in_addr v4;

	if (inet_pton(AF_INET, dst, &v4) == 1) {
		inany_from_v4(&k.gaddr, f->c.guest4);
		inany_from_v4(&k.faddr, v4);
	} else {
		inet_pton(AF_INET6, "fd00::100", &k.gaddr);
		inet_pton(AF_INET6, dst, &k.faddr);
	}
	k.gport = 40000;
	k.fport = dport;
	u = udp_flow_lookup(f->c.flows, &k);
	return u ? u->fd : -1;
}

/**
 * signalled() - whether a socket has something to read or an error
 * @fd:		socket
 * @ms:		how long to wait
 *
 * Return: true if so
 */
static bool signalled(int fd, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, ms) == 1 && (pfd.revents & (POLLIN | POLLERR));
}

/**
 * guest_errors() - read the frames waiting for the guest, counting ICMP
 *		    destination-unreachables
 * @f:		fake context
 * @len:	filled with the last one's length, if not NULL
 *
 * Return: how many; the last one stays in rx
 */
static unsigned int guest_errors(struct fake *f, ssize_t *len)
{
	static uint8_t other[65536];
	unsigned int n = 0;
	ssize_t r;

	for (;;) {
		uint8_t *buf = n ? other : rx;

		r = recv(f->peer, buf, sizeof(rx), MSG_DONTWAIT);
		if (r < 0)
			return n;
		if (r > 14 + 40 && ((buf[23] == IPPROTO_ICMP &&
		                     buf[34] == ICMP_DEST_UNREACH) ||
		                    (buf[20] == IPPROTO_ICMPV6 &&
		                     buf[54] == ICMP6_DST_UNREACH))) {
			if (buf != rx)
				memcpy(rx, buf, (size_t)r);
			if (len)
				*len = r;
			n++;
		}
	}
}

static void test_codes(void)
{
	static const struct {
		uint8_t origin, type, code;
		uint32_t err;
		int want;
		uint32_t info;
	} t[] = {
	        {SO_EE_ORIGIN_ICMP, ICMP_DEST_UNREACH, ICMP_PORT_UNREACH,
	         ECONNREFUSED, ICMP_PORT_UNREACH, 0},
	        {SO_EE_ORIGIN_ICMP, ICMP_DEST_UNREACH, ICMP_HOST_UNREACH,
	         EHOSTUNREACH, ICMP_HOST_UNREACH, 0},
	        {SO_EE_ORIGIN_ICMP, ICMP_DEST_UNREACH, ICMP_NET_UNREACH,
	         ENETUNREACH, ICMP_NET_UNREACH, 0},
	        {SO_EE_ORIGIN_ICMP, ICMP_DEST_UNREACH, ICMP_PKT_FILTERED,
	         EHOSTUNREACH, ICMP_PKT_FILTERED, 0},
	        /* Too big for the path: the guest hears the MTU. */
	        {SO_EE_ORIGIN_ICMP, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED,
	         EMSGSIZE, UDP_ERR_TOO_BIG, 1400},
	        {SO_EE_ORIGIN_ICMP, ICMP_DEST_UNREACH, 16, EHOSTUNREACH, -1, 0},
	        {SO_EE_ORIGIN_ICMP, ICMP_TIME_EXCEEDED, 0, EHOSTUNREACH, -1, 0},
	        {SO_EE_ORIGIN_ICMP6, ICMP6_DST_UNREACH,
	         ICMP6_DST_UNREACH_NOPORT, ECONNREFUSED, ICMP_PORT_UNREACH, 0},
	        {SO_EE_ORIGIN_ICMP6, ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_ADDR,
	         EHOSTUNREACH, ICMP_HOST_UNREACH, 0},
	        {SO_EE_ORIGIN_ICMP6, ICMP6_DST_UNREACH,
	         ICMP6_DST_UNREACH_NOROUTE, ENETUNREACH, ICMP_NET_UNREACH, 0},
	        {SO_EE_ORIGIN_ICMP6, ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_ADMIN,
	         EACCES, ICMP_PKT_FILTERED, 0},
	        {SO_EE_ORIGIN_ICMP6, ICMP6_PACKET_TOO_BIG, 0, EMSGSIZE,
	         UDP_ERR_TOO_BIG, 1280},
	        {SO_EE_ORIGIN_LOCAL, 0, 0, EHOSTUNREACH, ICMP_HOST_UNREACH, 0},
	        {SO_EE_ORIGIN_LOCAL, 0, 0, ECONNREFUSED, ICMP_PORT_UNREACH, 0},
	        /* IPV6_DONTFRAG's own EMSGSIZE carries the MTU; without
	         * one there is nothing to tell. */
	        {SO_EE_ORIGIN_LOCAL, 0, 0, EMSGSIZE, UDP_ERR_TOO_BIG, 1280},
	        {SO_EE_ORIGIN_LOCAL, 0, 0, EMSGSIZE, -1, 0},
	        {SO_EE_ORIGIN_NONE, 0, 0, ECONNREFUSED, -1, 0},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct sock_extended_err ee = {
		        .ee_errno = t[i].err,
		        .ee_origin = t[i].origin,
		        .ee_type = t[i].type,
		        .ee_code = t[i].code,
		        .ee_info = t[i].info,
		};

		CHECK(udp_err_code_of(&ee) == t[i].want);
	}
}

/**
 * refused_body() - unit_netns_run() body: datagrams to closed ports on the
 *		    namespace's loopback, through 10.0.2.2 and fd00::2
 */
static void refused_body(void)
{
	const uint8_t *icmp = rx + 14 + 20, *icmp6 = rx + 14 + 40;
	unsigned int got = 0, wakeups = 0;
	struct in_addr src;
	struct fake f;
	ssize_t n = 0;
	int fd;

	/* A clock that stands still: the error bucket never refills. */
	clock_set_fake(1000000000ULL);
	/* No rate limit on the host's errors in this namespace. */
	CHECK(unit_write_file("/proc/sys/net/ipv4/icmp_ratemask", "0"));
	CHECK(fake_open(&f) == 0);
	udp_from_guest(&f, 40000, "10.0.2.2", 9, 5);
	fd = flow_fd(&f, "10.0.2.2", 9);
	CHECK(fd >= 0 && signalled(fd, 1000));
	event_base_loop(f.c.base, EVLOOP_NONBLOCK);
	/* Port unreachable from the address the guest sent to, quoting the
	 * guest's IP header and 8 bytes, checksummed. */
	CHECK(guest_errors(&f, &n) == 1);
	inet_pton(AF_INET, "10.0.2.2", &src);
	CHECK(n == 14 + 20 + 8 + 28 && !memcmp(rx + 26, &src, 4) &&
	      icmp[1] == ICMP_PORT_UNREACH && !memcmp(icmp + 8, pkt_buf, 28) &&
	      csum_fold(csum_add(0, icmp, (size_t)n - 34)) == 0);

	/* IPv6: as much of the datagram as fits 1280 bytes is quoted. */
	udp_from_guest(&f, 40000, "fd00::2", 9, 2000);
	fd = flow_fd(&f, "fd00::2", 9);
	CHECK(fd >= 0 && signalled(fd, 1000));
	event_base_loop(f.c.base, EVLOOP_NONBLOCK);
	CHECK(guest_errors(&f, &n) == 1);
	CHECK(n == 14 + 1280 && icmp6[1] == ICMP6_DST_UNREACH_NOPORT &&
	      !memcmp(icmp6 + 8, pkt_buf, 1280 - 48));

	/* A flood the host refuses datagram by datagram: read a batch per
	 * wakeup until none is left, then the socket is quiet; the guest
	 * gets no more errors than the burst. */
	for (int i = 0; i < FLOOD; i++)
		udp_from_guest(&f, 40000, "10.0.2.2", 9, 5);
	fd = flow_fd(&f, "10.0.2.2", 9);
	while (signalled(fd, 0) && wakeups++ < 2 * FLOOD / UDP_ERR_BATCH) {
		event_base_loop(f.c.base, EVLOOP_NONBLOCK | EVLOOP_ONCE);
		got += guest_errors(&f, NULL);
	}
	CHECK(wakeups >= FLOOD / UDP_ERR_BATCH);
	CHECK(wakeups <= FLOOD / UDP_ERR_BATCH + 2);
	CHECK(!signalled(fd, 100));
	CHECK(got == BURST - 2);
	/* Each one was sent, though a send may report an earlier one's
	 * error: nothing of the guest's is lost to a stale error. */
	CHECK(f.c.stats.to_host[PROTO_UDP].packets == 2 + FLOOD);
	/* A second later, errors are let through again. */
	clock_advance(1000000000ULL);
	udp_from_guest(&f, 40000, "10.0.2.2", 9, 5);
	CHECK(signalled(fd, 1000));
	event_base_loop(f.c.base, EVLOOP_NONBLOCK);
	CHECK(guest_errors(&f, NULL) == 1);
	fake_close(&f);
	clock_set_real();
}

static void test_refused(void)
{
	CHECK(unit_netns_run(refused_body));
}

/**
 * listener_body() - unit_netns_run() body: a forward's host peer is gone
 *		     when the guest replies through the forward's socket
 */
static void listener_body(void)
{
	struct sockaddr_in lsa = {.sin_family = AF_INET}, psa = lsa;
	socklen_t len = sizeof(psa);
	struct in6_addr guest;
	uint8_t buf[64];
	struct fake f;
	ssize_t n = 0;
	int lfd, pfd, port;
	uint32_t ovfl = 0;

	CHECK(fake_open(&f) == 0);
	lsa.sin_addr.s_addr = psa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	pfd = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(lfd >= 0 && pfd >= 0);
	udp_sock_tune(lfd);
	CHECK(!bind(lfd, (struct sockaddr *)&lsa, sizeof(lsa)) &&
	      !getsockname(lfd, (struct sockaddr *)&lsa, &len));
	CHECK(sendto(pfd, "hi", 2, 0, (struct sockaddr *)&lsa, len) == 2);
	CHECK(signalled(lfd, 1000));
	inany_from_v4(&guest, f.c.guest4);
	udp_listener_read(&f.c, lfd, &guest, 7000, &ovfl);
	/* The peer appears as 10.0.2.2 to the guest, from its own port. */
	len = sizeof(psa);
	CHECK(!getsockname(pfd, (struct sockaddr *)&psa, &len));
	n = recv(f.peer, rx, sizeof(rx), MSG_DONTWAIT);
	CHECK(n == 14 + 20 + 8 + 2);
	port = rx[34] << 8 | rx[35];
	close(pfd);
	/* The guest answers the gone peer: the host refuses; the guest
	 * hears it from the peer's address. */
	udp_from_guest(&f, 7000, "10.0.2.2", (uint16_t)port, 3);
	memcpy(buf, pkt_buf, 28);
	CHECK(signalled(lfd, 1000));
	udp_listener_read(&f.c, lfd, &guest, 7000, &ovfl);
	CHECK(guest_errors(&f, &n) == 1);
	CHECK(n == 14 + 20 + 8 + 28 && rx[34] == ICMP_DEST_UNREACH &&
	      rx[35] == ICMP_PORT_UNREACH && !memcmp(rx + 42, buf, 28));
	CHECK(!signalled(lfd, 100));
	close(lfd);
	fake_close(&f);
}

static void test_listener(void)
{
	CHECK(unit_netns_run(listener_body));
}

const struct unit_case unit_cases[] = {
        {"host errors of either family map to the guest's unreachable codes",
         test_codes},
        {"refusals via 10.0.2.2 and fd00::2 quote the guest's datagram; a "
         "flood is read in batches, leaves the socket quiet and gets the "
         "guest a burst of errors, no more",
         test_refused},
        {"a forward's gone host peer: the guest's reply gets port "
         "unreachable",
         test_listener},
        {NULL, NULL},
};
