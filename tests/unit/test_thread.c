// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: datapath threads: placement of new TCP connections,
 * one owner per flow, get_stats
 *
 * The threads' contexts are set up as with --queues N but not started:
 * each test runs their loops one at a time (guest_run()), so that what
 * waits in which inbox when is the same in every run. The host side is
 * the namespace's loopback (tcpguest.c).
 */

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <jansson.h>

#include "driver/api/api.h"
#include "driver/core/ctx.h"
#include "driver/flow/flow.h"
#include "driver/core/stats.h"
#include "driver/thread/thread.h"
#include "tests/unit/tcpguest.h"
#include "tests/unit/unit.h"

/* Rounds of every loop that a SYN-ACK may take: tapir's connect() to the
 * host listener completes, then it answers.
 */
#define SETTLE_ROUNDS 200

/**
 * syn() - the guest sends a SYN from @port on queue @q, not read yet
 * @g:		guest
 * @q:		tap queue
 * @port:	guest port
 */
static void syn(struct guest *g, unsigned int q, uint16_t port)
{
	g->tap = g->taps[q];
	queue_seg(g, port, TH_SYN, GUEST_ISN, 0, 65535, NULL, 0);
}

/**
 * tcp_flows() - TCP connections thread @i has
 * @g:		guest from guest_open_threads()
 * @i:		thread
 *
 * Return: the count
 */
static unsigned int tcp_flows(struct guest *g, unsigned int i)
{
	return flow_count(thread_ctx(&g->c, i)->flows, FLOW_TCP);
}

/**
 * handoff_drops() - frames and connections thread @i dropped because
 *		     another's inbox was full
 * @g:		guest from guest_open_threads()
 * @i:		thread
 *
 * Return: the count
 */
static uint64_t handoff_drops(struct guest *g, unsigned int i)
{
	return thread_ctx(&g->c, i)->stats.drops[DROP_HANDOFF];
}

/**
 * settle() - run every thread's loop until the host listener has @want
 *	      connections waiting, and accept them
 * @g:		guest from guest_open_threads()
 * @queues:	its queues
 * @want:	connections expected
 *
 * Runs SETTLE_ROUNDS more rounds after the last one came, so that a
 * connection too many shows.
 *
 * Return: the connections accepted, closed again
 */
static unsigned int settle(struct guest *g, unsigned int queues,
                           unsigned int want)
{
	struct timespec ms = {0, 1000000};
	struct pollfd p = {.fd = g->listener, .events = POLLIN};
	unsigned int got = 0, quiet = 0;

	for (int round = 0; round < 5 * SETTLE_ROUNDS && quiet < SETTLE_ROUNDS;
	     round++) {
		for (unsigned int i = 0; i < queues; i++)
			guest_run(g, i);
		while (poll(&p, 1, 0) == 1) {
			int fd = accept(g->listener, NULL, NULL);

			if (fd < 0)
				break;
			close(fd);
			got++;
		}
		quiet = got >= want ? quiet + 1 : 0;
		nanosleep(&ms, NULL);
	}
	return got;
}

/**
 * synack_ports() - guest ports tapir wrote SYN-ACKs to on queue @q, taking
 *		    every frame waiting there
 * @g:		guest
 * @q:		tap queue
 * @base:	first port of the 32 looked at
 *
 * A port counts once however often its SYN-ACK was sent (tapir sends it
 * again after a second without the guest's ACK).
 *
 * Return: bit p - @base set for each port p answered on @q
 */
static uint32_t synack_ports(struct guest *g, unsigned int q, uint16_t base)
{
	uint32_t ports = 0;
	struct seg s;

	g->tap = g->taps[q];
	while (take_seg(g, &s))
		if (s.flags == (TH_SYN | TH_ACK) && s.dport >= base &&
		    s.dport - base < 32)
			ports |= 1U << (s.dport - base);
	return ports;
}

/**
 * burst_body() - 4 SYNs read on one queue before any connection opened:
 *		  2 threads get 2 each
 */
static void burst_body(void)
{
	uint32_t q0, q1;
	struct guest g;

	if (guest_open_threads(&g, 2)) {
		CHECK(!"set-up");
		return;
	}
	for (uint16_t port = 41001; port <= 41004; port++)
		syn(&g, 0, port);
	/* Placed by their reader in turn: 1, 0, 1, 0. */
	guest_run(&g, 0);
	CHECK(tcp_flows(&g, 0) == 2 && tcp_flows(&g, 1) == 0);
	CHECK(settle(&g, 2, 4) == 4);
	CHECK(tcp_flows(&g, 0) == 2 && tcp_flows(&g, 1) == 2);
	/* Each answered on its owner's queue only. */
	q0 = synack_ports(&g, 0, 41001);
	q1 = synack_ports(&g, 1, 41001);
	CHECK(__builtin_popcount(q0) == 2 && __builtin_popcount(q1) == 2 &&
	      !(q0 & q1));
	guest_close(&g);
}

/**
 * retransmitted_body() - a SYN and its retransmission, both read before
 *			  the first was opened: both go to the thread the
 *			  first was placed on, one connection opens
 *
 * Placed anew, the copy would go to the other thread, the least busy now,
 * and the host would see two connections for one.
 */
static void retransmitted_body(void)
{
	struct guest g;

	if (guest_open_threads(&g, 2)) {
		CHECK(!"set-up");
		return;
	}
	syn(&g, 0, 41010);
	syn(&g, 0, 41010);
	/* Both handed to thread 1, which hasn't run yet. */
	guest_run(&g, 0);
	CHECK(tcp_flows(&g, 0) == 0 && tcp_flows(&g, 1) == 0);
	CHECK(settle(&g, 2, 1) == 1);
	CHECK(tcp_flows(&g, 0) == 0 && tcp_flows(&g, 1) == 1);
	CHECK(!synack_ports(&g, 0, 41010) && synack_ports(&g, 1, 41010) == 1);
	guest_close(&g);
}

/**
 * udp_sink() - a UDP socket on the host's 127.0.0.1:@port
 * @port:	port
 *
 * Return: the socket, non-blocking, or -1
 */
static int udp_sink(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/**
 * udp_sources() - read every datagram waiting at a sink
 * @fd:		sink
 * @ports:	filled with the source port of each, up to @max
 * @max:	entries in @ports
 *
 * Return: datagrams read
 */
static unsigned int udp_sources(int fd, uint16_t *ports, unsigned int max)
{
	struct sockaddr_in from;
	socklen_t len = sizeof(from);
	unsigned int n = 0;
	char buf[4096];

	while (n < max && recvfrom(fd, buf, sizeof(buf), 0,
	                           (struct sockaddr *)&from, &len) >= 0) {
		ports[n++] = ntohs(from.sin_port);
		len = sizeof(from);
	}
	return n;
}

/**
 * open_with_sink() - a guest with @queues threads and a UDP sink on the
 *		      host's 127.0.0.1:7071
 * @g:		filled
 * @queues:	threads
 *
 * Return: the sink, or -1 after failing the check (nothing to close)
 */
static int open_with_sink(struct guest *g, unsigned int queues)
{
	int sink;

	if (guest_open_threads(g, queues)) {
		CHECK(!"set-up");
		return -1;
	}
	sink = udp_sink(7071);
	if (sink < 0) {
		CHECK(!"a UDP sink on 127.0.0.1:7071");
		guest_close(g);
	}
	return sink;
}

/**
 * udp_flows() - UDP flows thread @i has
 * @g:		guest from guest_open_threads()
 * @i:		thread
 *
 * Return: the count
 */
static unsigned int udp_flows(struct guest *g, unsigned int i)
{
	return flow_count(thread_ctx(&g->c, i)->flows, FLOW_UDP);
}

/**
 * fill_inbox() - datagrams of a flow thread 2 owns, read by thread 1 one
 *		  at a time, fill the inbox of thread 2, which does not run
 * @g:		guest with 3 threads, thread 2 owning guest port 41098's
 *		flow to the host's port 7071
 *
 * Full-sized datagrams until one is dropped, then empty ones until one of
 * those is dropped too: the inbox then has no room for a SYN either.
 *
 * Return: true once it is full
 */
static bool fill_inbox(struct guest *g)
{
	g->tap = g->taps[1];
	/* 8 MiB of inbox is some 5 500 full frames. */
	for (int i = 0; i < 20000 && handoff_drops(g, 1) < 2; i++) {
		queue_udp(g, 41098, 7071,
		          handoff_drops(g, 1) ? 0 : TCPGUEST_PAYLOAD_MAX, 'x');
		guest_run(g, 1);
	}
	return handoff_drops(g, 1) == 2;
}

/**
 * full_pick_body() - the thread placement picks has a full inbox: the
 *		      connection opens at the SYN's reader, not dropped
 */
static void full_pick_body(void)
{
	bool answered = false;
	struct guest g;
	int sink;

	sink = open_with_sink(&g, 3);
	if (sink < 0)
		return;
	/* Thread 2 owns a UDP flow, which is not in its TCP load... */
	g.tap = g.taps[2];
	queue_udp(&g, 41098, 7071, 1, 'x');
	guest_run(&g, 2);
	CHECK(udp_flows(&g, 2) == 1);
	/* ...and a first connection goes to thread 1 (ties in turn). */
	syn(&g, 0, 41020);
	guest_run(&g, 0);
	guest_run(&g, 1);
	CHECK(tcp_flows(&g, 1) == 1);
	/* Thread 2, the least busy now, falls behind. */
	CHECK(fill_inbox(&g));
	syn(&g, 0, 41021);
	guest_run(&g, 0);
	CHECK(tcp_flows(&g, 0) == 1);
	CHECK(handoff_drops(&g, 0) == 0);
	for (int i = 0; i < SETTLE_ROUNDS && !answered; i++) {
		struct timespec ms = {0, 1000000};

		guest_run(&g, 0);
		answered = synack_ports(&g, 0, 41021) & 1;
		nanosleep(&ms, NULL);
	}
	CHECK(answered);
	CHECK(tcp_flows(&g, 0) == 1 && tcp_flows(&g, 2) == 0);
	close(sink);
	guest_close(&g);
}

/**
 * reassembled_body() - a datagram reassembled from fragments read on
 *			thread 0, and a plain one of the same flow read on
 *			thread 1 meanwhile: one flow, one host socket
 *
 * tun steers fragments by addresses alone, so the two come in on
 * different queues. Before, the reassembled one went round the ring of
 * threads first, and the plain one opened the flow on thread 1 in the
 * meantime; back at thread 0, the reassembled one opened a second flow,
 * and the host saw two source ports for one guest flow.
 */
static void reassembled_body(void)
{
	unsigned int flows = 0, n;
	uint16_t ports[4];
	struct guest g;
	int sink;

	sink = open_with_sink(&g, 3);
	if (sink < 0)
		return;
	g.tap = g.taps[0];
	queue_udp_frags(&g, 41030, 7071, 2000, 'f', 77);
	guest_run(&g, 0);
	guest_run(&g, 1);
	g.tap = g.taps[1];
	queue_udp(&g, 41030, 7071, 100, 'p');
	guest_run(&g, 1);
	guest_run(&g, 2);
	guest_run(&g, 0);
	for (int round = 0; round < 3; round++)
		for (unsigned int i = 0; i < 3; i++)
			guest_run(&g, i);
	for (unsigned int i = 0; i < 3; i++)
		flows += udp_flows(&g, i);
	CHECK(flows == 1);
	n = udp_sources(sink, ports, 4);
	CHECK(n == 2);
	CHECK(n == 2 && ports[0] == ports[1]);
	close(sink);
	guest_close(&g);
}

/**
 * no_detour_body() - once a flow opened from a reassembled datagram, a new
 *		      flow read on another thread still opens there at once
 *
 * Before, every miss of every thread went round the ring for 120 s after
 * such a flow opened (and after one opened from a UDP forward's guest
 * port): a guest could make each new flow take N hops.
 */
static void no_detour_body(void)
{
	struct guest g;
	int sink;

	sink = open_with_sink(&g, 3);
	if (sink < 0)
		return;
	g.tap = g.taps[0];
	queue_udp_frags(&g, 41040, 7071, 2000, 'f', 78);
	for (int round = 0; round < 3; round++)
		for (unsigned int i = 0; i < 3; i++)
			guest_run(&g, i);
	CHECK(udp_flows(&g, 0) + udp_flows(&g, 1) + udp_flows(&g, 2) == 1);
	/* A new flow, read on thread 1, which alone runs. */
	g.tap = g.taps[1];
	queue_udp(&g, 41041, 7071, 10, 'n');
	guest_run(&g, 1);
	CHECK(udp_flows(&g, 1) == 1);
	close(sink);
	guest_close(&g);
}

/**
 * api_client() - connect to the API socket and send a request, EOF after
 * @path:	socket path
 * @req:	request text
 *
 * Return: the connected socket, or -1
 */
static int api_client(const char *path, const char *req)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, req, strlen(req), 0) != (ssize_t)strlen(req) ||
	    shutdown(fd, SHUT_WR)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/**
 * replied() - whether a reply (or EOF) waits on an API client's socket
 * @fd:		client socket
 *
 * Return: true if so
 */
static bool replied(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

/**
 * not_for_us() - the not_for_us drop count in a get_stats reply
 * @fd:		client socket with the whole reply waiting
 *
 * Return: the count, or -1 if the reply doesn't have it
 */
static long long not_for_us(int fd)
{
	json_t *root, *v;
	char buf[8192];
	long long ret;
	ssize_t n;

	n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	root = json_loads(buf, 0, NULL);
	v = json_object_get(
	        json_object_get(json_object_get(root, "return"), "drops"),
	        "not_for_us");
	ret = json_is_integer(v) ? json_integer_value(v) : -1;
	json_decref(root);
	return ret;
}

/* The API socket's directory: private, so that no other user's file can
 * stand at the socket's path, and removed with it.
 */
static char api_dir[] = "/tmp/tapir-unit-thread.XXXXXX";

/**
 * open_with_api() - a guest with two threads and an API socket
 * @g:		filled
 *
 * Return: 0, or -1 after a failed CHECK (nothing left open)
 */
static int open_with_api(struct guest *g)
{
	if (guest_open_threads(g, 2)) {
		CHECK(!"set-up");
		return -1;
	}
	strcpy(api_dir + strlen(api_dir) - 6, "XXXXXX");
	if (!mkdtemp(api_dir)) {
		CHECK(!"mkdtemp");
		guest_close(g);
		return -1;
	}
	snprintf(g->o.api_socket, sizeof(g->o.api_socket), "%s/api.sock",
	         api_dir);
	if (api_init(&g->c)) {
		CHECK(!"API socket");
		guest_close(g);
		rmdir(api_dir);
		return -1;
	}
	return 0;
}

/**
 * close_with_api() - undo open_with_api(), the socket's file and
 *		      directory too
 * @g:		as open_with_api() filled it
 */
static void close_with_api(struct guest *g)
{
	api_cleanup(&g->c);
	guest_close(g);
	CHECK(!unlink(g->o.api_socket));
	CHECK(!rmdir(api_dir));
}

/**
 * stats_body() - get_stats while a worker doesn't run: the main thread
 *		  goes on (it answers another client first), the reply
 *		  comes once the worker copied its counters, or at the
 *		  round's deadline with its last copy
 *
 * Before, the main thread waited in the request for up to 200 ms: queue
 * 0's frames, every accept and every other client waited with it.
 */
static void stats_body(void)
{
	const char *stats = "{\"execute\":\"get_stats\"}";
	struct timespec ms = {0, 1000000};
	int c1 = -1, c2 = -1, c3 = -1;
	struct guest g;

	if (open_with_api(&g))
		return;
	thread_ctx(&g.c, 1)->stats.drops[DROP_NOT_FOR_US] = 4242;
	/* Long enough that only worker 1's copy can end the first round. */
	threads_stats_set_wait(60000);
	c1 = api_client(g.o.api_socket, stats);
	for (int i = 0; i < 5; i++)
		guest_run(&g, 0);
	CHECK(c1 >= 0 && !replied(c1));
	/* The main thread serves the next client meanwhile. */
	c2 = api_client(g.o.api_socket, "{\"execute\":\"none\"}");
	for (int i = 0; i < 5 && c2 >= 0 && !replied(c2); i++)
		guest_run(&g, 0);
	CHECK(c2 >= 0 && replied(c2));
	CHECK(c1 >= 0 && !replied(c1));
	/* The worker copies its counters; the main thread replies. */
	guest_run(&g, 1);
	guest_run(&g, 0);
	CHECK(c1 >= 0 && replied(c1) && not_for_us(c1) == 4242);
	/* A worker that never answers: its last copy, at the deadline. */
	thread_ctx(&g.c, 1)->stats.drops[DROP_NOT_FOR_US] = 1;
	threads_stats_set_wait(50);
	c3 = api_client(g.o.api_socket, stats);
	for (int i = 0; i < 2000 && c3 >= 0 && !replied(c3); i++) {
		guest_run(&g, 0);
		nanosleep(&ms, NULL);
	}
	CHECK(c3 >= 0 && replied(c3) && not_for_us(c3) == 4242);
	threads_stats_set_wait(0);
	close_with_api(&g);
	close(c1);
	close(c2);
	close(c3);
}

/**
 * ended_body() - get_stats after a worker's loop ended, once while a round
 *		  was asking it and once after: each reply comes from the
 *		  main thread's own loop, at once
 *
 * Before, the worker's stats_asked stayed set and every later request
 * waited for the round's deadline (here set to a minute).
 */
static void ended_body(void)
{
	const char *stats = "{\"execute\":\"get_stats\"}";
	int c1 = -1, c2 = -1;
	struct guest g;

	if (open_with_api(&g))
		return;
	thread_ctx(&g.c, 1)->stats.drops[DROP_NOT_FOR_US] = 77;
	threads_stats_set_wait(60000);
	/* Asked, then its loop ends before it copied anything. */
	c1 = api_client(g.o.api_socket, stats);
	for (int i = 0; i < 5; i++)
		guest_run(&g, 0);
	CHECK(c1 >= 0 && !replied(c1));
	thread_loop_ended(thread_ctx(&g.c, 1));
	for (int i = 0; i < 5 && c1 >= 0 && !replied(c1); i++)
		guest_run(&g, 0);
	CHECK(c1 >= 0 && replied(c1) && not_for_us(c1) == 77);
	/* Later requests don't ask it, nor wait for it. */
	c2 = api_client(g.o.api_socket, stats);
	for (int i = 0; i < 5 && c2 >= 0 && !replied(c2); i++)
		guest_run(&g, 0);
	CHECK(c2 >= 0 && replied(c2) && not_for_us(c2) == 77);
	threads_stats_set_wait(0);
	close_with_api(&g);
	close(c1);
	close(c2);
}

static void test_burst(void)
{
	CHECK(unit_netns_run(burst_body));
}

static void test_retransmitted(void)
{
	CHECK(unit_netns_run(retransmitted_body));
}

static void test_full_pick(void)
{
	CHECK(unit_netns_run(full_pick_body));
}

static void test_reassembled(void)
{
	CHECK(unit_netns_run(reassembled_body));
}

static void test_no_detour(void)
{
	CHECK(unit_netns_run(no_detour_body));
}

static void test_stats(void)
{
	CHECK(unit_netns_run(stats_body));
}

static void test_ended(void)
{
	CHECK(unit_netns_run(ended_body));
}

const struct unit_case unit_cases[] = {
        {"4 SYNs in a burst on one queue: 2 threads open 2 each", test_burst},
        {"a retransmitted SYN read before the first copy opened follows "
         "it: one connection, not two",
         test_retransmitted},
        {"the least busy thread's inbox is full: the connection opens at "
         "the SYN's reader, nothing dropped",
         test_full_pick},
        {"a datagram reassembled on one thread and a plain one of the same "
         "flow read on another meanwhile: one flow, one host port",
         test_reassembled},
        {"after a flow opened from a reassembled datagram, a new flow read "
         "on another thread opens there at once, no detour",
         test_no_detour},
        {"get_stats while a worker doesn't run: the main thread serves "
         "others meanwhile, the reply comes once the worker copied its "
         "counters, or at the deadline with its last copy",
         test_stats},
        {"get_stats after a worker's loop ended, asked or not: answered "
         "at once, with its last counters",
         test_ended},
        {NULL, NULL},
};
