// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: placement of new TCP connections on datapath threads
 *
 * The threads' contexts are set up as with --queues N but not started:
 * each test runs their loops one at a time (guest_run()), so that a SYN's
 * way round the ring, and what waits in which inbox when, is the same in
 * every run. The host side is the namespace's loopback (tcpguest.c).
 */

#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "driver/ctx.h"
#include "driver/flow.h"
#include "driver/stats.h"
#include "driver/thread.h"
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
	/* Round the ring (0 -> 1 -> 0), then placed by their reader. */
	guest_run(&g, 0);
	guest_run(&g, 1);
	guest_run(&g, 0);
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
 * retransmitted_body() - a SYN and its retransmission, both back at their
 *			  reader before the first was opened: both go to
 *			  the thread the first was placed on, one
 *			  connection opens
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
	guest_run(&g, 0);
	guest_run(&g, 1);
	/* Both placed here; neither is open yet. */
	guest_run(&g, 0);
	CHECK(tcp_flows(&g, 0) == 0);
	CHECK(settle(&g, 2, 1) == 1);
	CHECK(tcp_flows(&g, 0) == 0 && tcp_flows(&g, 1) == 1);
	CHECK(!synack_ports(&g, 0, 41010) && synack_ports(&g, 1, 41010) == 1);
	guest_close(&g);
}

/**
 * fill_inbox() - frames for no connection, read by thread 1 one at a time,
 *		  fill the inbox of thread 2, the next on the ring, which
 *		  does not run
 * @g:		guest with 3 threads
 *
 * Full-sized frames until one is dropped, then empty ones until one of
 * those is dropped too: the inbox then has no room for a SYN either.
 *
 * Return: true once it is full
 */
static bool fill_inbox(struct guest *g)
{
	static const uint8_t junk[TCPGUEST_PAYLOAD_MAX];

	g->tap = g->taps[1];
	/* 8 MiB of inbox is some 5 500 full frames. */
	for (int i = 0; i < 20000 && handoff_drops(g, 1) < 2; i++) {
		queue_seg(g, 41099, TH_ACK, 1, 1, 65535, junk,
		          handoff_drops(g, 1) ? 0 : sizeof(junk));
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

	if (guest_open_threads(&g, 3)) {
		CHECK(!"set-up");
		return;
	}
	/* A first connection goes to thread 1 (ties in turn, from 1). */
	syn(&g, 0, 41020);
	for (unsigned int i = 0; i < 4; i++)
		guest_run(&g, i % 3);
	guest_run(&g, 1);
	CHECK(tcp_flows(&g, 1) == 1);
	/* The next SYN goes round the ring, then waits at its reader... */
	syn(&g, 0, 41021);
	guest_run(&g, 0);
	guest_run(&g, 1);
	guest_run(&g, 2);
	/* ...while thread 2, the least busy, falls behind. */
	CHECK(fill_inbox(&g));
	CHECK(tcp_flows(&g, 0) == 0);
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
	guest_close(&g);
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

const struct unit_case unit_cases[] = {
        {"4 SYNs in a burst on one queue: 2 threads open 2 each", test_burst},
        {"a retransmitted SYN back at its reader before the first copy "
         "opened follows it: one connection, not two",
         test_retransmitted},
        {"the least busy thread's inbox is full: the connection opens at "
         "the SYN's reader, nothing dropped",
         test_full_pick},
        {NULL, NULL},
};
