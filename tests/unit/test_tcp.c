// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: TCP connections on real host sockets, in a netns
 *
 * Each case runs in a child process with a network namespace of its own
 * (unit_netns_run()), so the host side is that namespace's loopback only.
 * The guest is this file: it writes frames into the fake tap and reads
 * tapir's answers back. Under ASan, released connections are poisoned
 * (tcp_conn.c), so touching one fails the case.
 */

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/csum.h"
#include "driver/ctx.h"
#include "driver/tapio.h"
#include "driver/tcp.h"
#include "driver/tcp_internal.h"
#include "tests/unit/fakectx.h"
#include "tests/unit/unit.h"

#define GUEST_IP "10.0.2.100"
#define GW_IP "10.0.2.2"
#define HOST_PORT 7070
#define GUEST_ISN 1000

static const uint8_t guest_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static const uint8_t gw_mac[6] = {0x52, 0x55, 0x0a, 0x00, 0x02, 0x02};

/**
 * struct guest - the test's side of one context
 * @c:		context under test
 * @o:		its options
 * @tap:	the guest's end of the fake tap
 * @listener:	host listener on 127.0.0.1:HOST_PORT
 */
struct guest {
	struct ctx c;
	struct opts o;
	int tap;
	int listener;
};

/**
 * struct seg - what a frame from tapir carried
 * @src:	IPv4 source, network order
 * @dst:	IPv4 destination, network order
 * @sport:	TCP source port
 * @dport:	TCP destination port
 * @seq:	sequence number
 * @ack:	acknowledgement number
 * @flags:	TCP flags
 * @len:	payload bytes
 * @data:	the first of them
 */
struct seg {
	uint32_t src;
	uint32_t dst;
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t flags;
	size_t len;
	uint8_t data[64];
};

/**
 * guest_open() - a context with TCP, a started tap and a host listener
 * @g:		filled
 * @discard:	peek past a discard buffer, as on kernels without
 *		SO_PEEK_OFF for TCP, whatever this one has
 *
 * Return: 0 on success
 */
static int guest_open(struct guest *g, bool discard)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons(HOST_PORT)};
	int one = 1;

	memset(g, 0, sizeof(*g));
	g->tap = fake_ctx_init(&g->c, &g->o, false, guest_mac);
	g->c.base = event_base_new();
	if (!g->c.base || tcp_init(&g->c) || tapio_start(&g->c))
		return -1;
	if (discard)
		g->c.tcp->peek_off4 = g->c.tcp->peek_off6 = false;
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	g->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (g->listener < 0 ||
	    setsockopt(g->listener, SOL_SOCKET, SO_REUSEADDR, &one,
	               sizeof(one)) ||
	    bind(g->listener, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(g->listener, 8))
		return -1;
	return 0;
}

/**
 * guest_close() - release everything guest_open() made
 * @g:		guest
 */
static void guest_close(struct guest *g)
{
	tcp_cleanup(&g->c);
	tapio_stop(&g->c);
	event_base_free(g->c.base);
	close(g->tap);
	close(g->listener);
}

/**
 * send_seg() - the guest sends one TCP segment to GW_IP:HOST_PORT
 * @g:		guest
 * @sport:	guest port
 * @flags:	TCP flags
 * @seq:	sequence number
 * @ack:	acknowledgement number
 * @win:	raw window field
 * @data:	payload, or NULL
 * @len:	payload bytes
 */
static void send_seg(struct guest *g, uint16_t sport, uint8_t flags,
                     uint32_t seq, uint32_t ack, uint16_t win, const void *data,
                     size_t len)
{
	uint8_t f[14 + 20 + 20 + 64] = {0};
	struct tcphdr th = {0};
	struct iphdr ip = {0};
	struct in_addr src, dst;
	uint16_t ck;

	memcpy(f, gw_mac, 6);
	memcpy(f + 6, guest_mac, 6);
	f[12] = 0x08;
	inet_pton(AF_INET, GUEST_IP, &src);
	inet_pton(AF_INET, GW_IP, &dst);
	ip.version = 4;
	ip.ihl = 5;
	ip.tot_len = htons((uint16_t)(40 + len));
	ip.ttl = 64;
	ip.protocol = IPPROTO_TCP;
	ip.saddr = src.s_addr;
	ip.daddr = dst.s_addr;
	ip.check = csum_ip4_header(&ip, 20);
	memcpy(f + 14, &ip, 20);
	th.source = htons(sport);
	th.dest = htons(HOST_PORT);
	th.seq = htonl(seq);
	th.ack_seq = htonl(ack);
	th.doff = 5;
	th.window = htons(win);
	memcpy(f + 34, &th, 20);
	f[34 + 13] = flags;
	if (len)
		memcpy(f + 54, data, len);
	ck = csum_fold(csum_add(
	        csum_pseudo4(src, dst, IPPROTO_TCP, (uint32_t)(20 + len)),
	        f + 34, 20 + len));
	memcpy(f + 34 + 16, &ck, 2);
	if (send(g->tap, f, 54 + len, 0) != (ssize_t)(54 + len))
		CHECK(!"send a frame into the fake tap");
	event_base_loop(g->c.base, EVLOOP_NONBLOCK);
}

/**
 * next_seg() - run the loop until tapir sends the guest a TCP segment
 * @g:		guest
 * @s:		filled
 *
 * Return: true if one came within a second
 */
static bool next_seg(struct guest *g, struct seg *s)
{
	struct timespec ms = {0, 1000000};
	uint8_t f[70000];

	for (int i = 0; i < 1000; i++) {
		ssize_t n = recv(g->tap, f, sizeof(f), MSG_DONTWAIT);
		struct tcphdr th;
		struct iphdr ip;

		if (n < 0) {
			event_base_loop(g->c.base, EVLOOP_NONBLOCK);
			nanosleep(&ms, NULL);
			continue;
		}
		if (n < 54 || f[12] != 0x08 || f[13] != 0x00)
			continue;
		memcpy(&ip, f + 14, sizeof(ip));
		if (ip.protocol != IPPROTO_TCP)
			continue;
		memcpy(&th, f + 14 + ip.ihl * 4, sizeof(th));
		s->src = ip.saddr;
		s->dst = ip.daddr;
		s->sport = ntohs(th.source);
		s->dport = ntohs(th.dest);
		s->seq = ntohl(th.seq);
		s->ack = ntohl(th.ack_seq);
		s->flags = f[14 + ip.ihl * 4 + 13];
		s->len = (size_t)n - 14 - ip.ihl * 4 - th.doff * 4;
		memcpy(s->data, f + n - s->len,
		       s->len < sizeof(s->data) ? s->len : sizeof(s->data));
		return true;
	}
	return false;
}

/**
 * addressed_right() - a segment goes from GW_IP to GUEST_IP
 * @s:		segment
 *
 * Return: true if so; a released connection sends from 0.0.0.0
 */
static bool addressed_right(const struct seg *s)
{
	struct in_addr gw, guest;

	inet_pton(AF_INET, GW_IP, &gw);
	inet_pton(AF_INET, GUEST_IP, &guest);
	return s->src == gw.s_addr && s->dst == guest.s_addr;
}

/**
 * handshake() - open a connection from guest port @sport, and accept it
 * @g:		guest
 * @sport:	guest port
 * @win:	window the guest's final ACK advertises
 * @isn:	filled with tapir's initial sequence number
 *
 * Return: the host's accepted socket, or -1
 */
static int handshake(struct guest *g, uint16_t sport, uint16_t win,
                     uint32_t *isn)
{
	struct seg s;
	int fd;

	send_seg(g, sport, TH_SYN, GUEST_ISN, 0, 65535, NULL, 0);
	if (!next_seg(g, &s) || s.flags != (TH_SYN | TH_ACK) ||
	    s.ack != GUEST_ISN + 1 || !addressed_right(&s))
		return -1;
	*isn = s.seq;
	send_seg(g, sport, TH_ACK, GUEST_ISN + 1, *isn + 1, win, NULL, 0);
	fd = accept(g->listener, NULL, NULL);
	return fd;
}

/**
 * reset_by_host() - the host resets an accepted connection
 * @fd:		accepted socket, closed here
 */
static void reset_by_host(int fd)
{
	const struct linger l = {.l_onoff = 1, .l_linger = 0};

	CHECK(!setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	close(fd);
}

/**
 * window_update_after_reset() - the host resets a connection while the
 *				 guest's window is zero, then the guest opens
 *				 its window, with or without data
 * @data:	send payload with the window update
 *
 * The update makes tapir peek at the reset socket and abort the
 * connection; nothing may touch the released entry afterwards, and the
 * table must still hand out entries.
 */
static void window_update_after_reset(bool data)
{
	uint32_t isn, isn2;
	struct guest g;
	int fd, rsts = 0;
	struct seg s;

	CHECK(!guest_open(&g, false));
	fd = handshake(&g, 40000, 0, &isn);
	CHECK(fd >= 0);
	reset_by_host(fd);
	for (int i = 0; i < 20; i++)
		event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	send_seg(&g, 40000, TH_ACK | (data ? TH_PUSH : 0), GUEST_ISN + 1,
	         isn + 1, 65535, "hello", data ? 5 : 0);
	while (next_seg(&g, &s)) {
		CHECK(addressed_right(&s));
		rsts += s.dport == 40000 && (s.flags & TH_RST);
	}
	CHECK(rsts == 1);
	CHECK(g.c.stats.flows[PROTO_TCP] == 0);
	/* The free list survived: a new connection gets an entry. */
	fd = handshake(&g, 40001, 65535, &isn2);
	CHECK(fd >= 0);
	CHECK(g.c.stats.flows[PROTO_TCP] == 1);
	if (fd >= 0)
		close(fd);
	guest_close(&g);
}

/**
 * banner_heard() - a host server speaks first, before the guest's ACK of
 *		    tapir's SYN-ACK arrives: the guest gets the banner once the
 *		    handshake completes
 * @discard:	use the discard-buffer peek path
 *
 * The server's bytes raise their one read edge while the connection is
 * still in SYN_RCVD; nothing else will wake tapir for them.
 */
static void banner_heard(bool discard)
{
	static const char banner[] = "SSH-2.0-tapir-test\r\n";
	const size_t len = sizeof(banner) - 1;
	struct timespec ms = {0, 1000000};
	struct guest g;
	bool got = false;
	struct seg s;
	uint32_t isn;
	int fd;

	CHECK(!guest_open(&g, discard));
	send_seg(&g, 40002, TH_SYN, GUEST_ISN, 0, 65535, NULL, 0);
	CHECK(next_seg(&g, &s) && s.flags == (TH_SYN | TH_ACK));
	isn = s.seq;
	fd = accept(g.listener, NULL, NULL);
	CHECK(fd >= 0 && write(fd, banner, len) == (ssize_t)len);
	/* Let tapir see the edge now, while the handshake is open. */
	for (int i = 0; i < 50; i++) {
		event_base_loop(g.c.base, EVLOOP_NONBLOCK);
		nanosleep(&ms, NULL);
	}
	send_seg(&g, 40002, TH_ACK, GUEST_ISN + 1, isn + 1, 65535, NULL, 0);
	while (!got && next_seg(&g, &s))
		got = s.seq == isn + 1 && s.len == len &&
		      !memcmp(s.data, banner, len);
	CHECK(got);
	if (fd >= 0)
		close(fd);
	guest_close(&g);
}

static void banner_body(void)
{
	banner_heard(false);
}

static void banner_discard_body(void)
{
	banner_heard(true);
}

static void test_banner(void)
{
	CHECK(unit_netns_run(banner_body));
}

static void test_banner_discard(void)
{
	CHECK(unit_netns_run(banner_discard_body));
}

/**
 * reset_after_data() - the host sends data, then resets: the guest gets the
 *			data and an RST, never the FIN of an orderly close
 * @discard:	use the discard-buffer peek path
 */
static void reset_after_data(bool discard)
{
	struct timespec ms = {0, 1000000};
	bool data = false, rst = false, fin = false;
	struct guest g;
	struct seg s;
	uint32_t isn;
	int fd;

	CHECK(!guest_open(&g, discard));
	fd = handshake(&g, 40003, 65535, &isn);
	CHECK(fd >= 0 && write(fd, "hello", 5) == 5);
	/* The guest gets the data and does not ACK it: bytes in flight. */
	while (!data && next_seg(&g, &s))
		data = s.len == 5 && !memcmp(s.data, "hello", 5);
	CHECK(data);
	reset_by_host(fd);
	for (int i = 0; i < 20; i++) {
		event_base_loop(g.c.base, EVLOOP_NONBLOCK);
		nanosleep(&ms, NULL);
	}
	while (next_seg(&g, &s)) {
		rst |= !!(s.flags & TH_RST);
		fin |= !!(s.flags & TH_FIN);
	}
	CHECK(rst && !fin);
	CHECK(g.c.stats.flows[PROTO_TCP] == 0);
	guest_close(&g);
}

static void reset_after_data_body(void)
{
	reset_after_data(false);
}

static void reset_after_data_discard_body(void)
{
	reset_after_data(true);
}

static void test_reset_after_data(void)
{
	CHECK(unit_netns_run(reset_after_data_body));
	CHECK(unit_netns_run(reset_after_data_discard_body));
}

static void reset_then_window_body(void)
{
	window_update_after_reset(false);
}

static void reset_then_window_data_body(void)
{
	window_update_after_reset(true);
}

static void test_reset_then_window(void)
{
	CHECK(unit_netns_run(reset_then_window_body));
}

static void test_reset_then_window_data(void)
{
	CHECK(unit_netns_run(reset_then_window_data_body));
}

const struct unit_case unit_cases[] = {
        {"host reset while the guest's window is 0, then a window update: "
         "RST to the guest, the entry released once",
         test_reset_then_window},
        {"the same, with data in the window update",
         test_reset_then_window_data},
        {"a server that speaks before the handshake ends is heard",
         test_banner},
        {"the same, peeking past a discard buffer (no SO_PEEK_OFF)",
         test_banner_discard},
        {"a host reset after data: the data, then an RST, never a FIN "
         "(both peek paths)",
         test_reset_after_data},
        {NULL, NULL},
};
