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

#include "driver/core/ctx.h"
#include "driver/core/inany.h"
#include "driver/tcp/tcp.h"
#include "driver/tcp/tcp_internal.h"
#include "tests/unit/tcpguest.h"
#include "tests/unit/unit.h"

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
	spin(&g, 20);
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
	spin(&g, 50);
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
	spin(&g, 20);
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

/**
 * last_ack_body() - the host closes first; the guest's FIN, which ends the
 *		     connection, still gets its ACK
 *
 * Without it the guest stays in LAST_ACK, retransmits its FIN and gets an
 * RST for an entry that no longer exists.
 */
static void last_ack_body(void)
{
	bool fin = false, acked = false, rst = false;
	struct guest g;
	struct seg s;
	uint32_t isn;
	int fd;

	CHECK(!guest_open(&g, false));
	fd = handshake(&g, 40004, 65535, &isn);
	CHECK(fd >= 0 && !shutdown(fd, SHUT_WR));
	while (!fin && next_seg(&g, &s))
		fin = !!(s.flags & TH_FIN);
	CHECK(fin);
	send_seg(&g, 40004, TH_ACK, GUEST_ISN + 1, isn + 2, 65535, NULL, 0);
	send_seg(&g, 40004, TH_ACK | TH_FIN, GUEST_ISN + 1, isn + 2, 65535,
	         NULL, 0);
	while (next_seg(&g, &s)) {
		acked |= (s.flags & TH_ACK) && s.ack == GUEST_ISN + 2;
		rst |= !!(s.flags & TH_RST);
	}
	CHECK(acked && !rst);
	CHECK(g.c.stats.flows[PROTO_TCP] == 0);
	close(fd);
	guest_close(&g);
}

static void test_last_ack(void)
{
	CHECK(unit_netns_run(last_ack_body));
}

/**
 * exit_reset_body() - at exit, a connection with data in flight to the
 *		       guest: RSTs at the ACK the guest sent and at snd_nxt,
 *		       as either may be what it expects; the host peer of a
 *		       stream the guest never ended is reset, not sent a FIN
 */
static void exit_reset_body(void)
{
	static uint8_t data[3000];
	uint32_t rsts[4] = {0};
	struct guest g;
	struct seg s;
	uint32_t isn;
	size_t sent = 0;
	int fd, n = 0;
	char b;

	CHECK(!guest_open(&g, false));
	fd = handshake(&g, 40037, 65535, &isn);
	CHECK(fd >= 0);
	CHECK(send(fd, data, sizeof(data), 0) == (ssize_t)sizeof(data));
	while (sent < sizeof(data) && next_seg(&g, &s))
		sent += s.len;
	CHECK(sent == sizeof(data));
	/* Not acknowledged: the guest may have any of it, or none. */
	tcp_cleanup(&g.c);
	while (n < 4 && take_seg(&g, &s))
		if (s.flags & TH_RST)
			rsts[n++] = s.seq - (isn + 1);
	CHECK(n == 2 && rsts[0] == 0 && rsts[1] == sizeof(data));
	CHECK(recv(fd, &b, 1, 0) < 0 && errno == ECONNRESET);
	close(fd);
	guest_close(&g);
}

static void test_exit_reset(void)
{
	CHECK(unit_netns_run(exit_reset_body));
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

/**
 * queue_affinity_body() - two tap queues: a connection's frames to the
 *			   guest leave on the queue its first frame came in
 *			   on, even after another queue was read last
 *
 * tun steers the guest's frames of a flow to the queue tapir last wrote
 * that flow's frames on: answering on any other queue would move the
 * flow between queues.
 */
static void queue_affinity_body(void)
{
	bool got = false, stray = false;
	struct guest g;
	uint32_t isn;
	struct seg s;
	int fd, q0;

	CHECK(!guest_open_queues(&g, false, 2));
	q0 = g.tap;
	/* The guest's frames of port 40010 come in on queue 1, and the
	 * SYN-ACK must leave there: handshake() reads queue 1 only.
	 */
	g.tap = g.taps[1];
	fd = handshake(&g, 40010, 65535, &isn);
	CHECK(fd >= 0);
	/* Another connection starts on queue 0, the last queue read. */
	g.tap = q0;
	send_seg(&g, 40011, TH_SYN, GUEST_ISN, 0, 65535, NULL, 0);
	CHECK(next_seg(&g, &s) && s.dport == 40011 &&
	      s.flags == (TH_SYN | TH_ACK));
	/* Host data for the first connection still leaves on queue 1. */
	CHECK(fd >= 0 && write(fd, "data", 4) == 4);
	g.tap = g.taps[1];
	while (!got && next_seg(&g, &s))
		got = s.dport == 40010 && s.len == 4 &&
		      !memcmp(s.data, "data", 4);
	CHECK(got);
	g.tap = q0;
	while (take_seg(&g, &s))
		stray |= s.dport == 40010;
	CHECK(!stray);
	CHECK(g.c.stats.queues[1].rx_frames == 2);
	CHECK(g.c.stats.queues[1].tx_frames >= 2);
	CHECK(g.c.stats.queues[0].rx_frames == 1);
	if (fd >= 0)
		close(fd);
	guest_close(&g);
}

static void test_queue_affinity(void)
{
	CHECK(unit_netns_run(queue_affinity_body));
}

/**
 * recv_all() - read what the host socket has, until it would block
 * @fd:		host socket
 * @buf:	buffer
 * @size:	its size
 *
 * Return: bytes read
 */
static size_t recv_all(int fd, uint8_t *buf, size_t size)
{
	size_t got = 0;
	ssize_t n;

	for (int i = 0; i < 100 && got < size; i++) {
		n = recv(fd, buf + got, size - got, MSG_DONTWAIT);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/**
 * opt_at() - where a segment's options hold an option
 * @s:		segment from tapir
 * @kind:	TCPOPT_*
 *
 * Return: its offset in s->opt, or -1 if absent
 */
static int opt_at(const struct seg *s, uint8_t kind)
{
	size_t i = 0;

	while (i < s->optlen && s->opt[i] != TCPOPT_EOL) {
		if (s->opt[i] == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= s->optlen || s->opt[i + 1] < 2)
			break;
		if (s->opt[i] == kind)
			return (int)i;
		i += s->opt[i + 1];
	}
	return -1;
}

/**
 * sack_of() - the SACK blocks a segment carries, as stream offsets
 * @s:		segment from tapir
 * @edges:	2 * TCP_SACK_BLOCKS to fill: left, right, left, ...
 *
 * Return: how many blocks, -1 for no SACK option
 */
static int sack_of(const struct seg *s, uint32_t *edges)
{
	int at = opt_at(s, TCPOPT_SACK), n;

	if (at < 0)
		return -1;
	n = (s->opt[at + 1] - 2) / 8;
	if (n > TCP_SACK_BLOCKS)
		return -1;
	for (int k = 0; k < 2 * n; k++) {
		uint32_t v;

		memcpy(&v, s->opt + at + 2 + 4 * k, 4);
		edges[k] = ntohl(v) - (GUEST_ISN + 1);
	}
	return n;
}

/**
 * out_of_order_body() - segments after a hole: a duplicate ACK for each
 *			 segment they hold (a GSO frame holds several), at
 *			 most three a batch; they are held, a retransmission
 *			 of one adds nothing, and once the hole fills the
 *			 host gets every byte in order, then the FIN that
 *			 came before the hole did
 *
 * Coalesced into one ACK a batch, the duplicates never reach the guest's
 * DupThresh; thrown away, the segments after a hole cost the guest a
 * timeout each (tcp_ooo.c).
 */
static void out_of_order_body(void)
{
	static uint8_t data[1760], got[2000];
	int fd, dups[2] = {0, 0}, fin = 0;
	uint32_t isn, acked = 0;
	struct guest g;
	struct seg s;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + i / 256);
	CHECK(!guest_open(&g, false));
	/* MSS 536: the guest sent no option. */
	fd = handshake(&g, 40030, 65535, &isn);
	CHECK(fd >= 0);
	/* It didn't permit SACK: none offered, none sent. */
	CHECK(opt_at(&g.synack, TCPOPT_SACK_PERMITTED) < 0);
	while (take_seg(&g, &s))
		;
	/* Bytes 100..199, then 200..1659 in one frame: 1 and 3 segments. */
	for (int i = 0; i < 2; i++) {
		uint32_t off = 100U + 100U * (uint32_t)i;

		queue_seg(&g, 40030, TH_ACK | TH_PUSH, GUEST_ISN + 1 + off,
		          isn + 1, 65535, data + off, i ? 1460 : 100);
		event_base_loop(g.c.base, EVLOOP_NONBLOCK);
		while (take_seg(&g, &s))
			dups[i] += s.flags == TH_ACK && !s.len &&
			           s.ack == GUEST_ISN + 1 && !s.optlen;
	}
	CHECK(dups[0] == 1 && dups[1] == 3);
	/* The same frame again, and the last 100 bytes with the FIN. */
	queue_seg(&g, 40030, TH_ACK | TH_PUSH, GUEST_ISN + 201, isn + 1, 65535,
	          data + 200, 1460);
	queue_seg(&g, 40030, TH_ACK | TH_FIN, GUEST_ISN + 1661, isn + 1, 65535,
	          data + 1660, 100);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	CHECK(g.c.stats.drops[DROP_TCP_OUT_OF_ORDER] == 0);
	CHECK(g.c.tcp->ooo_cost > 1660 && g.c.tcp->ooo_cost < 2000);
	CHECK(recv(fd, got, sizeof(got), MSG_DONTWAIT) < 0);
	while (take_seg(&g, &s))
		;
	queue_seg(&g, 40030, TH_ACK | TH_PUSH, GUEST_ISN + 1, isn + 1, 65535,
	          data, 100);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	while (take_seg(&g, &s)) {
		acked = s.ack;
		fin += !!(s.flags & TH_FIN);
	}
	CHECK(acked == GUEST_ISN + 1 + sizeof(data) + 1);
	CHECK(recv_all(fd, got, sizeof(got)) == sizeof(data));
	CHECK(!memcmp(got, data, sizeof(data)));
	CHECK(recv(fd, got, sizeof(got), MSG_DONTWAIT) == 0);
	CHECK(g.c.tcp->ooo_cost == 0);
	(void)fin;
	close(fd);
	guest_close(&g);
}

/**
 * queue_range() - the guest queues stream bytes [@from, @to) of a
 *		   connection, in one segment
 * @g:		guest
 * @sport:	its port
 * @isn:	tapir's initial sequence number
 * @data:	the stream
 * @from:	first offset
 * @to:		offset after the last
 */
static void queue_range(struct guest *g, uint16_t sport, uint32_t isn,
                        const uint8_t *data, uint32_t from, uint32_t to)
{
	queue_seg(g, sport, TH_ACK, GUEST_ISN + 1 + from, isn + 1, 65535,
	          data + from, to - from);
}

/**
 * last_ack_sack() - run a batch, and read the blocks of tapir's last ACK
 * @g:		guest
 * @ack:	filled with its acknowledgement, as a stream offset
 * @edges:	2 * TCP_SACK_BLOCKS, filled as sack_of() does
 *
 * Return: its number of blocks, -1 for none (or no ACK)
 */
static int last_ack_sack(struct guest *g, uint32_t *ack, uint32_t *edges)
{
	struct seg s;
	int n = -1;

	event_base_loop(g->c.base, EVLOOP_NONBLOCK);
	*ack = 0;
	while (take_seg(g, &s)) {
		*ack = s.ack - (GUEST_ISN + 1);
		n = sack_of(&s, edges);
	}
	return n;
}

/**
 * blocks_are() - the blocks read are these, in this order
 * @n:		how many were read
 * @edges:	their edges
 * @want:	the expected edges, ending with 0, 0
 *
 * Return: true if they match
 */
static bool blocks_are(int n, const uint32_t *edges, const uint32_t *want)
{
	int k = 0;

	while (want[2 * k] || want[2 * k + 1])
		k++;
	return n == k && !memcmp(edges, want, sizeof(*edges) * 2 * (size_t)k);
}

/**
 * sack_body() - a guest that permits SACK is offered it, and hears which
 *		 ranges after a hole are held: the one it sent last first,
 *		 then the lowest, at most 4, merged as holes fill, none
 *		 once the stream is whole, then of bytes it sent twice
 *		 (D-SACK); every byte reaches the host in order, once
 *
 * Without SACK the guest learns of one hole per round trip, and a lost
 * retransmission costs it a timeout.
 */
static void sack_body(void)
{
	static uint8_t data[1000], got[1100];
	uint32_t isn, ack, e[2 * TCP_SACK_BLOCKS];
	struct guest g;
	struct seg s;
	int fd, n;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + i / 256);
	CHECK(!guest_open(&g, false));
	fd = handshake_sack(&g, 40034, 65535, &isn);
	CHECK(fd >= 0);
	CHECK(opt_at(&g.synack, TCPOPT_SACK_PERMITTED) >= 0);
	while (take_seg(&g, &s))
		;
	queue_range(&g, 40034, isn, data, 100, 200);
	n = last_ack_sack(&g, &ack, e);
	CHECK(ack == 0 && blocks_are(n, e, (uint32_t[]){100, 200, 0, 0}));
	queue_range(&g, 40034, isn, data, 300, 400);
	n = last_ack_sack(&g, &ack, e);
	CHECK(blocks_are(n, e, (uint32_t[]){300, 400, 100, 200, 0, 0}));
	/* Five ranges held: the last one sent, then the three lowest. */
	for (uint32_t from = 500; from < 1000; from += 200)
		queue_range(&g, 40034, isn, data, from, from + 100);
	n = last_ack_sack(&g, &ack, e);
	CHECK(blocks_are(
	        n, e,
	        (uint32_t[]){900, 1000, 100, 200, 300, 400, 500, 600, 0, 0}));
	/* A hole between two ranges fills: one block. */
	queue_range(&g, 40034, isn, data, 200, 300);
	n = last_ack_sack(&g, &ack, e);
	CHECK(blocks_are(
	        n, e,
	        (uint32_t[]){100, 400, 500, 600, 700, 800, 900, 1000, 0, 0}));
	/* The first hole fills: the ACK moves, the rest is still held. */
	queue_range(&g, 40034, isn, data, 0, 100);
	n = last_ack_sack(&g, &ack, e);
	CHECK(ack == 400 &&
	      blocks_are(n, e,
	                 (uint32_t[]){500, 600, 700, 800, 900, 1000, 0, 0}));
	for (uint32_t from = 400; from < 1000; from += 200)
		queue_range(&g, 40034, isn, data, from, from + 100);
	n = last_ack_sack(&g, &ack, e);
	CHECK(ack == 1000 && n == -1);
	/* Bytes sent twice, in two segments of one batch: one D-SACK below
	 * the ACK says the first copies came, in one pure ACK, once.
	 */
	queue_range(&g, 40034, isn, data, 100, 200);
	queue_range(&g, 40034, isn, data, 200, 300);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	n = 0;
	while (take_seg(&g, &s)) {
		CHECK(s.ack == GUEST_ISN + 1 + 1000 && !s.len);
		n += blocks_are(sack_of(&s, e), e,
		                (uint32_t[]){100, 300, 0, 0});
	}
	CHECK(n == 1);
	queue_seg(&g, 40034, TH_ACK, GUEST_ISN + 1000, isn + 1, 65535, NULL, 0);
	n = last_ack_sack(&g, &ack, e);
	CHECK(ack == 1000 && n == -1);
	CHECK(recv_all(fd, got, sizeof(got)) == sizeof(data));
	CHECK(!memcmp(got, data, sizeof(data)));
	CHECK(g.c.tcp->ooo_cost == 0);
	close(fd);
	guest_close(&g);
}

/**
 * inbound_sack() - a forwarded connection: tapir's SYN permits SACK, and
 *		    the guest's SYN-ACK decides
 * @guest_sack:	the guest's SYN-ACK permits it too
 *
 * ACKs after a hole carry blocks only if it did; either way the bytes
 * reach the host client in order.
 */
static void inbound_sack(bool guest_sack)
{
	const uint8_t opts[8] = {
	        TCPOPT_MAXSEG,
	        TCPOLEN_MAXSEG,
	        1460 >> 8,
	        1460 & 0xff,
	        TCPOPT_NOP,
	        TCPOPT_NOP,
	        guest_sack ? TCPOPT_SACK_PERMITTED : TCPOPT_NOP,
	        guest_sack ? TCPOLEN_SACK_PERMITTED : TCPOPT_NOP};
	struct sockaddr_in to = {.sin_family = AF_INET,
	                         .sin_port = htons(HOST_PORT)};
	uint32_t isn, ack, e[2 * TCP_SACK_BLOCKS];
	static uint8_t data[300], got[400];
	struct in_addr gw, guest;
	struct in6_addr src, dst;
	struct guest g;
	struct seg s;
	int cl, fd, n;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 5 + 1);
	CHECK(!guest_open(&g, false));
	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	cl = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(cl >= 0 && !connect(cl, (struct sockaddr *)&to, sizeof(to)));
	fd = accept(g.listener, NULL, NULL);
	CHECK(fd >= 0);
	inet_pton(AF_INET, GW_IP, &gw);
	inet_pton(AF_INET, GUEST_IP, &guest);
	inany_from_v4(&src, gw);
	inany_from_v4(&dst, guest);
	CHECK(!tcp_accept_inbound(&g.c, fd, &src, HOST_PORT, &dst, 40035));
	CHECK(next_seg(&g, &s) && s.flags == TH_SYN);
	CHECK(opt_at(&s, TCPOPT_SACK_PERMITTED) >= 0);
	isn = s.seq;
	queue_frame(&g, 40035, TH_SYN | TH_ACK, GUEST_ISN, isn + 1, 65535, opts,
	            sizeof(opts), NULL, 0);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	while (take_seg(&g, &s))
		;
	queue_range(&g, 40035, isn, data, 200, 300);
	n = last_ack_sack(&g, &ack, e);
	CHECK(ack == 0);
	CHECK(guest_sack ? blocks_are(n, e, (uint32_t[]){200, 300, 0, 0})
	                 : n == -1);
	queue_range(&g, 40035, isn, data, 0, 200);
	n = last_ack_sack(&g, &ack, e);
	CHECK(ack == 300 && n == -1);
	CHECK(recv_all(cl, got, sizeof(got)) == sizeof(data));
	CHECK(!memcmp(got, data, sizeof(data)));
	close(cl);
	guest_close(&g);
}

static void inbound_sack_body(void)
{
	inbound_sack(true);
}

static void inbound_no_sack_body(void)
{
	inbound_sack(false);
}

/**
 * fill_tap() - fill the guest's end of queue 0 with frames it skips, so
 *		that tapir's next writes are refused, as a full tap's are
 * @g:		guest
 *
 * Return: frames written
 */
static int fill_tap(struct guest *g)
{
	uint8_t junk[60] = {[12] = 0x88, [13] = 0xb5};
	int n = 0;

	while (n < 100000 && write(g->c.tapfd[0], junk, sizeof(junk)) > 0)
		n++;
	return n;
}

/**
 * dsack_refused_body() - a D-SACK whose ACK the full tap refused goes in
 *			  the next ACK: the guest still learns that its
 *			  resend was needless
 */
static void dsack_refused_body(void)
{
	static uint8_t data[400], got[500];
	uint32_t isn, ack, e[2 * TCP_SACK_BLOCKS];
	uint64_t refused;
	struct guest g;
	struct seg s;
	int fd, n;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	CHECK(!guest_open(&g, false));
	fd = handshake_sack(&g, 40036, 65535, &isn);
	CHECK(fd >= 0);
	queue_range(&g, 40036, isn, data, 0, 200);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	while (take_seg(&g, &s))
		;
	refused = g.c.stats.drops[DROP_TAP_WRITE];
	CHECK(fill_tap(&g) > 0);
	queue_range(&g, 40036, isn, data, 100, 200);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	CHECK(g.c.stats.drops[DROP_TAP_WRITE] > refused);
	while (take_seg(&g, &s))
		CHECK(false);
	/* A hole: the duplicate ACK reports the resend first. */
	queue_range(&g, 40036, isn, data, 300, 400);
	n = last_ack_sack(&g, &ack, e);
	CHECK(ack == 200);
	CHECK(blocks_are(n, e, (uint32_t[]){100, 200, 300, 400, 0, 0}));
	queue_range(&g, 40036, isn, data, 200, 300);
	n = last_ack_sack(&g, &ack, e);
	CHECK(ack == 400 && n == -1);
	CHECK(recv_all(fd, got, sizeof(got)) == sizeof(data));
	CHECK(!memcmp(got, data, sizeof(data)));
	close(fd);
	guest_close(&g);
}

/**
 * ooo_bound_body() - a guest that sends a hole and then more than a
 *		      connection may hold after it: the rest is dropped and
 *		      counted, and a reset frees what was held
 */
static void ooo_bound_body(void)
{
	static uint8_t data[TCPGUEST_PAYLOAD_MAX];
	uint32_t seq = GUEST_ISN + 1 + 1;
	struct guest g;
	struct seg s;
	uint32_t isn;
	int fd;

	CHECK(!guest_open(&g, false));
	fd = handshake(&g, 40031, 65535, &isn);
	CHECK(fd >= 0);
	for (int i = 0; i < 1600; i++) {
		queue_seg(&g, 40031, TH_ACK, seq, isn + 1, 65535, data,
		          sizeof(data));
		seq += sizeof(data);
		if (i % 32 == 31) {
			event_base_loop(g.c.base, EVLOOP_NONBLOCK);
			while (take_seg(&g, &s))
				;
		}
	}
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	CHECK(g.c.tcp->ooo_cost <= TCP_OOO_CONN_MAX);
	/* Small segments meet the count's bound first. */
	CHECK(g.c.tcp->ooo_cost >= TCP_OOO_SEGS * sizeof(data));
	CHECK(g.c.stats.drops[DROP_TCP_OUT_OF_ORDER] > 100);
	send_seg(&g, 40031, TH_RST, seq, 0, 0, NULL, 0);
	CHECK(g.c.tcp->ooo_cost == 0);
	close(fd);
	guest_close(&g);
}

/**
 * pattern_at() - the test stream's byte at an offset
 * @off:	offset in the stream
 *
 * Return: the byte
 */
static uint8_t pattern_at(size_t off)
{
	return (uint8_t)(off * 7 + off / 251);
}

/**
 * small_sndbuf() - flow_walk() callback: a send buffer that fills soon
 * @f:		a TCP flow
 * @arg:	unused
 */
static void small_sndbuf(struct flow_common *f, void *arg)
{
	int small = 4096;

	(void)arg;
	CHECK(!setsockopt(((struct tcp_conn *)f)->fd, SOL_SOCKET, SO_SNDBUF,
	                  &small, sizeof(small)));
}

/**
 * ooo_full_socket_body() - the hole fills while the host reads nothing:
 *			    the held segments wait in tapir for the socket's
 *			    room, and reach the host whole and in order as it
 *			    reads
 */
static void ooo_full_socket_body(void)
{
	enum { SEGS = 480, SEG = TCPGUEST_PAYLOAD_MAX };
	static uint8_t seg[SEG], got[100 + SEGS * SEG];
	size_t total = 100 + SEGS * SEG, have = 0;
	struct guest g;
	struct seg s;
	uint32_t isn;
	int fd;

	CHECK(!guest_open(&g, false));
	fd = handshake(&g, 40032, 65535, &isn);
	CHECK(fd >= 0);
	flow_walk(g.c.flows, FLOW_TCP, small_sndbuf, NULL);
	for (size_t i = 0; i < SEGS; i++) {
		size_t off = 100 + i * SEG;

		for (size_t k = 0; k < SEG; k++)
			seg[k] = pattern_at(off + k);
		queue_seg(&g, 40032, TH_ACK, GUEST_ISN + 1 + (uint32_t)off,
		          isn + 1, 65535, seg, SEG);
		if (i % 32 == 31) {
			event_base_loop(g.c.base, EVLOOP_NONBLOCK);
			while (take_seg(&g, &s))
				;
		}
	}
	for (size_t k = 0; k < 100; k++)
		seg[k] = pattern_at(k);
	queue_seg(&g, 40032, TH_ACK, GUEST_ISN + 1, isn + 1, 65535, seg, 100);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	CHECK(g.c.stats.drops[DROP_TCP_OUT_OF_ORDER] == 0);
	/* The socket took part: the rest waits for room. */
	CHECK(g.c.tcp->ooo_cost > 0);
	for (int i = 0; i < 2000 && have < total; i++) {
		have += recv_all(fd, got + have, total - have);
		spin(&g, 1);
		while (take_seg(&g, &s))
			;
	}
	CHECK(have == total);
	for (size_t k = 0; k < have; k++)
		if (got[k] != pattern_at(k)) {
			CHECK(!"every byte in its place");
			break;
		}
	CHECK(g.c.tcp->ooo_cost == 0);
	close(fd);
	guest_close(&g);
}

/**
 * queue_pattern() - the guest queues the test stream's segment at an offset
 * @g:		guest
 * @sport:	its port
 * @isn:	tapir's initial sequence number
 * @off:	offset in the stream
 * @len:	bytes, at most TCPGUEST_PAYLOAD_MAX
 */
static void queue_pattern(struct guest *g, uint16_t sport, uint32_t isn,
                          size_t off, size_t len)
{
	uint8_t seg[TCPGUEST_PAYLOAD_MAX];

	for (size_t k = 0; k < len && k < sizeof(seg); k++)
		seg[k] = pattern_at(off + k);
	queue_seg(g, sport, TH_ACK, GUEST_ISN + 1 + (uint32_t)off, isn + 1,
	          65535, seg, len);
}

/**
 * struct sack_seen - the SACK blocks a guest was told, as a Linux sender
 *		      keeps them in its scoreboard
 * @edges:	left, right, ... as stream offsets
 * @n:		blocks kept
 */
struct sack_seen {
	uint32_t edges[2 * 64];
	int n;
};

/**
 * seen_reneging() - note a segment's blocks; did its ACK stop at or inside
 *		     a range reported before, or a block pass the window
 * @seen:	what was reported so far
 * @s:		segment from tapir, its window unscaled
 *
 * A Linux sender takes an ACK that leaves a range it was told is held
 * unacknowledged at its head for reneging (tcp_check_sack_reneging()):
 * it drops its scoreboard and resends all from a window of one.
 *
 * Return: true if it did, or a block passed the window
 */
static bool seen_reneging(struct sack_seen *seen, const struct seg *s)
{
	uint32_t ack = s->ack - (GUEST_ISN + 1), e[2 * TCP_SACK_BLOCKS];
	int n = sack_of(s, e);

	for (int i = 0; i < seen->n; i++)
		if (!seq_lt(ack, seen->edges[2 * i]) &&
		    seq_lt(ack, seen->edges[2 * i + 1]))
			return true;
	for (int k = 0; k < n; k++) {
		if (seq_lt(ack + s->win, e[2 * k + 1]))
			return true;
		if (seen->n < 64) {
			seen->edges[2 * seen->n] = e[2 * k];
			seen->edges[2 * seen->n + 1] = e[2 * k + 1];
			seen->n++;
		}
	}
	return false;
}

/**
 * refused_tail() - a guest that sends more than the host socket takes
 *		    (past a window it was told), with one segment lost on
 *		    the way: what the socket refuses waits in tapir, nothing
 *		    is dropped, no three equal ACKs while it waits, a
 *		    retransmission is answered, and once the host reads, the
 *		    hole is asked for with three duplicates and every byte
 *		    arrives in order
 * @sack:	the guest permits SACK: no blocks while bytes wait for the
 *		socket, then the duplicates for the hole report of the rest
 *		what the window offers and the socket will take, and no ACK
 *		reads as reneging
 *
 * Dropped, the refused bytes cost the guest a retransmission, and the
 * duplicate ACKs for what followed them a halved window; unanswered, a
 * retransmission makes a guest give up on a host that stopped reading.
 * Ranges reported held above bytes that wait would read to the guest as
 * those bytes lost, and ranges past the window the socket's room, once it
 * took less, as reneging.
 */
static void refused_tail(bool sack)
{
	enum { SEGS = 400, SEG = TCPGUEST_PAYLOAD_MAX, HOLE = 350 };
	static uint8_t got[SEGS * SEG];
	size_t total = SEGS * SEG, have = 0;
	int fd, same = 0, most = 0, at_hole = 0, blocks = 0, told = 0;
	uint32_t isn, last = 0, hole = GUEST_ISN + 1 + HOLE * SEG;
	uint32_t e[2 * TCP_SACK_BLOCKS];
	struct sack_seen seen = {0};
	bool answered = false;
	struct guest g;
	struct seg s;

	CHECK(!guest_open(&g, false));
	fd = sack ? handshake_sack(&g, 40033, 65535, &isn)
	          : handshake(&g, 40033, 65535, &isn);
	CHECK(fd >= 0);
	flow_walk(g.c.flows, FLOW_TCP, small_sndbuf, NULL);
	for (size_t i = 0; i < SEGS; i++) {
		if (i != HOLE)
			queue_pattern(&g, 40033, isn, i * SEG, SEG);
		if (i % 32 == 31 || i == SEGS - 1) {
			event_base_loop(g.c.base, EVLOOP_NONBLOCK);
			while (take_seg(&g, &s)) {
				same = s.ack == last ? same + 1 : 0;
				most = same > most ? same : most;
				last = s.ack;
				blocks += sack_of(&s, e) >= 0;
			}
		}
	}
	CHECK(g.c.stats.drops[DROP_SOCKET] == 0);
	CHECK(g.c.stats.drops[DROP_TCP_OUT_OF_ORDER] == 0);
	/* No three duplicates: nothing for the guest to send again. */
	CHECK(most < TCP_DUPTHRESH);
	/* The guest's timer sends the oldest bytes again: answered. */
	queue_pattern(&g, 40033, isn, last - GUEST_ISN - 1, SEG);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	while (take_seg(&g, &s)) {
		answered |= s.flags == TH_ACK && s.ack == last;
		blocks += sack_of(&s, e) >= 0;
	}
	CHECK(answered);
	CHECK(blocks == 0);
	for (int i = 0; i < 2000 && have < HOLE * SEG; i++) {
		have += recv_all(fd, got + have, total - have);
		spin(&g, 1);
		while (take_seg(&g, &s)) {
			at_hole += s.ack == hole && !s.len;
			/* Up to the window, as far as the socket takes:
			 * with so small a buffer, maybe nothing.
			 */
			if (s.ack == hole && sack_of(&s, e) >= 0)
				told += sack_of(&s, e) != 1 ||
				                        e[0] != (HOLE + 1) *
				                                        SEG ||
				                        e[1] <= e[0] ||
				                        e[1] > HOLE * SEG +
				                                        (uint32_t)
				                                                s.win
				                ? 1000
				                : 1;
			CHECK(!seen_reneging(&seen, &s));
		}
	}
	CHECK(have == HOLE * SEG);
	CHECK(at_hole >= 1 + TCP_DUPTHRESH);
	CHECK(sack ? told < 1000 : told == 0);
	queue_pattern(&g, 40033, isn, HOLE * SEG, SEG);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	for (int i = 0; i < 2000 && have < total; i++) {
		have += recv_all(fd, got + have, total - have);
		spin(&g, 1);
		while (take_seg(&g, &s)) {
			last = s.ack;
			CHECK(!seen_reneging(&seen, &s));
		}
	}
	CHECK(have == total);
	for (size_t k = 0; k < have; k++)
		if (got[k] != pattern_at(k)) {
			CHECK(!"every byte in its place");
			break;
		}
	CHECK(last == GUEST_ISN + 1 + total);
	CHECK(g.c.tcp->ooo_cost == 0);
	close(fd);
	guest_close(&g);
}

/**
 * small_sndbuf_now() - flow_walk() callback: small_sndbuf(), and the
 *			window tapir keeps estimating from the larger buffer
 *			before is forgotten
 * @f:		a TCP flow
 * @arg:	unused
 */
static void small_sndbuf_now(struct flow_common *f, void *arg)
{
	small_sndbuf(f, arg);
	((struct tcp_conn *)f)->wnd_est = 0;
}

/**
 * small_segments_body() - an 8 KiB send buffer, a host that reads
 *			   slowly, and a guest that permits SACK and sends
 *			   small segments after a hole: no ACK stops inside a
 *			   range it was told is held
 *
 * Each small segment costs the socket its bytes and an skb's overhead,
 * more than the window's margin of a third allows: once the hole filled,
 * the socket took less than the ranges reported, and a Linux sender took
 * the ACK for reneging.
 */
static void small_segments_body(void)
{
	enum { SEG = 200, TOTAL = 40 * 1024 };
	static uint8_t got[TOTAL];
	uint32_t isn, right = 0, off = SEG;
	struct sack_seen seen = {0};
	size_t have = 0;
	int fd, rcv = 2048;
	struct guest g;
	struct seg s;

	CHECK(!guest_open(&g, false));
	CHECK(!setsockopt(g.listener, SOL_SOCKET, SO_RCVBUF, &rcv,
	                  sizeof(rcv)));
	fd = handshake_sack(&g, 40036, 65535, &isn);
	CHECK(fd >= 0);
	flow_walk(g.c.flows, FLOW_TCP, small_sndbuf_now, NULL);
	/* What the window offers, in small segments, after a lost first:
	 * the duplicate ACK for the first tells the window.
	 */
	right = 2 * SEG;
	for (int round = 0; round < 50 && off + SEG <= right; round++) {
		for (int k = 0; k < 16 && off + SEG <= right; k++) {
			queue_pattern(&g, 40036, isn, off, SEG);
			off += SEG;
		}
		event_base_loop(g.c.base, EVLOOP_NONBLOCK);
		while (take_seg(&g, &s)) {
			CHECK(!seen_reneging(&seen, &s));
			right = s.ack - (GUEST_ISN + 1) + s.win;
		}
	}
	CHECK(seen.n > 0);
	/* The hole fills; then the host reads, slowly, and the rest
	 * follows as the window opens.
	 */
	queue_pattern(&g, 40036, isn, 0, SEG);
	for (int i = 0; i < 3000 && have < TOTAL; i++) {
		event_base_loop(g.c.base, EVLOOP_NONBLOCK);
		while (take_seg(&g, &s)) {
			CHECK(!seen_reneging(&seen, &s));
			right = s.ack - (GUEST_ISN + 1) + s.win;
		}
		if (i % 10 == 9)
			have += recv_all(fd, got + have,
			                 1000 < TOTAL - have ? 1000
			                                     : TOTAL - have);
		for (int k = 0; k < 16 && off < TOTAL && off + SEG <= right;
		     k++) {
			queue_pattern(&g, 40036, isn, off, SEG);
			off += SEG;
		}
		spin(&g, 1);
	}
	CHECK(have == TOTAL);
	for (size_t k = 0; k < have; k++)
		if (got[k] != pattern_at(k)) {
			CHECK(!"every byte in its place");
			break;
		}
	close(fd);
	guest_close(&g);
}

static void refused_tail_body(void)
{
	refused_tail(false);
}

static void refused_tail_sack_body(void)
{
	refused_tail(true);
}

static void test_refused_tail(void)
{
	CHECK(unit_netns_run(refused_tail_body));
}

static void test_refused_tail_sack(void)
{
	CHECK(unit_netns_run(refused_tail_sack_body));
}

static void test_small_segments(void)
{
	CHECK(unit_netns_run(small_segments_body));
}

static void test_ooo_full_socket(void)
{
	CHECK(unit_netns_run(ooo_full_socket_body));
}

static void test_ooo_bound(void)
{
	CHECK(unit_netns_run(ooo_bound_body));
}

static void test_out_of_order(void)
{
	CHECK(unit_netns_run(out_of_order_body));
}

static void test_sack(void)
{
	CHECK(unit_netns_run(sack_body));
}

static void test_inbound_sack(void)
{
	CHECK(unit_netns_run(inbound_sack_body));
	CHECK(unit_netns_run(inbound_no_sack_body));
}

static void test_dsack_refused(void)
{
	CHECK(unit_netns_run(dsack_refused_body));
}

const struct unit_case unit_cases[] = {
        {"two tap queues: a connection's frames leave on the queue it came "
         "in on, not the one read last",
         test_queue_affinity},
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
        {"segments after a hole: a duplicate ACK for each segment they "
         "hold, at most three a batch; held, and once the hole fills the "
         "host gets every byte in order and the FIN",
         test_out_of_order},
        {"a guest that permits SACK hears which ranges after a hole are "
         "held: the newest first, then the lowest, at most 4, merged as "
         "holes fill; and of bytes it sent twice (D-SACK)",
         test_sack},
        {"a forwarded connection: tapir's SYN permits SACK; blocks only if "
         "the guest's SYN-ACK permits it too",
         test_inbound_sack},
        {"a D-SACK whose ACK the full tap refused goes in the next ACK",
         test_dsack_refused},
        {"more than a connection may hold after a hole: the rest dropped "
         "and counted, all freed by a reset",
         test_ooo_bound},
        {"a hole fills while the host reads nothing: the held segments wait "
         "for the socket's room and arrive whole and in order",
         test_ooo_full_socket},
        {"more than the host socket takes, one segment lost: the rest "
         "waits in tapir, no drop, no three equal ACKs, a retransmission "
         "answered, the hole asked for once the host reads, every byte in "
         "order",
         test_refused_tail},
        {"the same from a guest that permits SACK: no blocks while bytes "
         "wait for the socket, the rest reported with the hole",
         test_refused_tail_sack},
        {"an 8 KiB send buffer, a slow host and small segments after a "
         "hole: no ACK stops inside a range reported held",
         test_small_segments},
        {"the host closes first: the guest's FIN is still ACKed, no RST",
         test_last_ack},
        {"at exit: RSTs the guest takes whatever it got, and a reset for "
         "the host peer of a stream the guest never ended",
         test_exit_reset},
        {NULL, NULL},
};
