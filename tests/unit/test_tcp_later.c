// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: what waits a little (driver/tcp/tcp_later.c), on real
 * host sockets: the ACK for the guest's data rides on the host's answer,
 * or goes alone after the delay; a reset hidden behind the host's last
 * data still reaches the guest; ACKed bytes discarded in batches never
 * shift a retransmission. Each case in a network namespace of
 * its own, on both peek paths where they differ.
 */

#include <string.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/core/ctx.h"
#include "driver/tcp/tcp_internal.h"
#include "driver/tcp/tcp_seg.h"
#include "tests/unit/tcpguest.h"
#include "tests/unit/unit.h"

#define PORT 40100

/**
 * drain() - read every segment tapir sends for a while
 * @g:		guest
 */
static void drain(struct guest *g)
{
	struct seg s;

	while (next_seg(g, &s))
		;
}

/**
 * pure_acks() - take what tapir sent so far: count its segments without
 *		 payload or flags other than ACK, and note the last ACK
 *		 number of any segment
 * @g:		guest
 * @ack:	filled with the last ACK number seen, if any
 *
 * Return: pure ACKs
 */
static int pure_acks(struct guest *g, uint32_t *ack)
{
	struct seg s;
	int n = 0;

	while (take_seg(g, &s)) {
		n += !s.len && s.flags == TH_ACK;
		*ack = s.ack;
	}
	return n;
}

/**
 * spend_one() - flow_walk() callback: no quick ACKs left
 * @f:		a TCP flow
 * @arg:	unused
 */
static void spend_one(struct flow_common *f, void *arg)
{
	(void)arg;
	((struct tcp_conn *)f)->quickacks = 0;
}

/**
 * conn_quickacks_spent() - the guest's connections delay their ACKs again
 * @g:		guest
 */
static void conn_quickacks_spent(struct guest *g)
{
	flow_walk(g->c.flows, FLOW_TCP, spend_one, NULL);
}

/**
 * exchange() - the host writes @n bytes, the guest gets them and ACKs
 * @g:		guest
 * @fd:		host socket
 * @seq:	the guest's next sequence number
 * @ack:	tapir's next sequence number, advanced
 * @n:		bytes, at most 64
 */
static void exchange(struct guest *g, int fd, uint32_t seq, uint32_t *ack,
                     size_t n)
{
	static const char answer[64];
	struct seg s;

	CHECK(write(fd, answer, n) == (ssize_t)n);
	CHECK(next_seg(g, &s) && s.len == n && s.seq == *ack && s.ack == seq);
	*ack += (uint32_t)n;
}

/*
 * A request and its answer: the guest's 100 bytes are ACKed by the
 * host's answer, without a frame of their own. A host that does not
 * answer gets the ACK sent after TCP_LATER_MS, and the next ACKs go at
 * once. A request in two segments waits whole. Once an ACK went alone,
 * a guest that sends again with no answer in between (an upload), or one
 * that sends two full segments, is ACKed at once.
 */
static void delayed_ack_body(void)
{
	static char req[100], full[2 * 536];
	uint32_t isn, seq = GUEST_ISN + 1, nxt, ack = 0;
	struct guest g;
	int fd;

	CHECK(!guest_open(&g, false));
	fd = handshake(&g, PORT, 65535, &isn);
	CHECK(fd >= 0);
	drain(&g);
	nxt = isn + 1;
	/* The host speaks first; then the guest's request waits for the
	 * answer to carry its ACK.
	 */
	exchange(&g, fd, seq, &nxt, 5);
	send_seg(&g, PORT, TH_ACK | TH_PSH, seq, nxt, 65535, req, 100);
	seq += 100;
	CHECK(pure_acks(&g, &ack) == 0);
	CHECK(read(fd, req, sizeof(req)) == 100);
	exchange(&g, fd, seq, &nxt, 6);
	spin(&g, 3 * TCP_LATER_MS);
	CHECK(pure_acks(&g, &ack) == 0);
	/* Not answered: one ACK, after the delay. */
	send_seg(&g, PORT, TH_ACK | TH_PSH, seq, nxt, 65535, req, 100);
	seq += 100;
	CHECK(pure_acks(&g, &ack) == 0);
	spin(&g, 3 * TCP_LATER_MS);
	CHECK(pure_acks(&g, &ack) == 1 && ack == seq);
	/* ... and the next goes at once. */
	exchange(&g, fd, seq, &nxt, 7);
	send_seg(&g, PORT, TH_ACK | TH_PSH, seq, nxt, 65535, req, 100);
	seq += 100;
	CHECK(pure_acks(&g, &ack) == 1 && ack == seq);
	/* A request in two segments waits whole; once an ACK went alone,
	 * more data without an answer in between (an upload) is ACKed at
	 * once.
	 */
	conn_quickacks_spent(&g);
	exchange(&g, fd, seq, &nxt, 8);
	send_seg(&g, PORT, TH_ACK, seq, nxt, 65535, req, 100);
	seq += 100;
	send_seg(&g, PORT, TH_ACK | TH_PSH, seq, nxt, 65535, req, 100);
	seq += 100;
	CHECK(pure_acks(&g, &ack) == 0);
	spin(&g, 3 * TCP_LATER_MS);
	CHECK(pure_acks(&g, &ack) == 1 && ack == seq);
	conn_quickacks_spent(&g);
	send_seg(&g, PORT, TH_ACK | TH_PSH, seq, nxt, 65535, req, 100);
	seq += 100;
	CHECK(pure_acks(&g, &ack) == 1 && ack == seq);
	/* Small segments every few milliseconds: each arrival does not
	 * restart the wait; the first one's ACK goes TCP_LATER_MS after it.
	 */
	conn_quickacks_spent(&g);
	exchange(&g, fd, seq, &nxt, 8);
	for (int i = 0; i < 8; i++) {
		send_seg(&g, PORT, TH_ACK | TH_PSH, seq, nxt, 65535, req, 10);
		seq += 10;
		spin(&g, TCP_LATER_MS / 3);
	}
	/* 24 ms and more since the first: were each arrival to restart the
	 * wait, the ACK would still be 10 ms away.
	 */
	CHECK(pure_acks(&g, &ack) >= 1);
	spin(&g, 3 * TCP_LATER_MS);
	pure_acks(&g, &ack);
	CHECK(ack == seq);
	/* Two full segments in one batch, after an answer: at once. */
	exchange(&g, fd, seq, &nxt, 9);
	queue_seg(&g, PORT, TH_ACK, seq, nxt, 65535, full, 536);
	queue_seg(&g, PORT, TH_ACK | TH_PSH, seq + 536, nxt, 65535, full + 536,
	          536);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	seq += 2 * 536;
	CHECK(pure_acks(&g, &ack) == 1 && ack == seq);
	close(fd);
	guest_close(&g);
}

static void test_delayed_ack(void)
{
	CHECK(unit_netns_run(delayed_ack_body));
}

/**
 * reset_behind_data() - the host writes and resets at once: its data and
 *			 the reset are queued together, and the peek that
 *			 reads the data says nothing of the reset; the guest
 *			 still gets the data, then an RST, without sending
 *			 anything but its ACK
 * @discard:	peek without SO_PEEK_OFF
 */
static void reset_behind_data(bool discard)
{
	bool data = false, rst = false;
	struct guest g;
	struct seg s;
	uint32_t isn;
	int fd;

	CHECK(!guest_open(&g, discard));
	fd = handshake(&g, PORT, 65535, &isn);
	CHECK(fd >= 0);
	drain(&g);
	CHECK(write(fd, "last", 4) == 4);
	reset_by_host(fd);
	for (int i = 0; i < 3 && !rst; i++)
		while (!rst && next_seg(&g, &s)) {
			if (s.len == 4 && !memcmp(s.data, "last", 4)) {
				data = true;
				send_seg(&g, PORT, TH_ACK, GUEST_ISN + 1,
				         s.seq + 4, 65535, NULL, 0);
			}
			rst = !!(s.flags & TH_RST);
		}
	CHECK(data && rst);
	CHECK(flow_count(g.c.flows, FLOW_TCP) == 0);
	guest_close(&g);
}

static void reset_peek_off_body(void)
{
	reset_behind_data(false);
}

static void reset_discard_body(void)
{
	reset_behind_data(true);
}

static void test_reset_behind_data(void)
{
	CHECK(unit_netns_run(reset_peek_off_body));
	CHECK(unit_netns_run(reset_discard_body));
}

/**
 * host_sent() - the host writes @n bytes of a pattern, which the guest
 *		 receives and does not ACK
 * @g:		guest, opened here on the SO_PEEK_OFF path
 * @buf:	filled with the pattern
 * @n:		bytes
 * @isn:	filled with tapir's initial sequence number
 *
 * Return: the host's socket
 */
static int host_sent(struct guest *g, uint8_t *buf, size_t n, uint32_t *isn)
{
	int fd;

	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(i % 251);
	CHECK(!guest_open(g, false));
	fd = handshake(g, PORT, 65535, isn);
	CHECK(fd >= 0);
	drain(g);
	CHECK(write(fd, buf, n) == (ssize_t)n);
	drain(g);
	return fd;
}

/*
 * ACKed bytes stay at the head of the host socket's queue until a discard
 * batch gathers (SO_PEEK_OFF): a retransmission must still start at the
 * first unacknowledged byte. The host writes 4000 bytes of a pattern, the
 * guest ACKs the first 1000 only, and the retransmission timer sends the
 * rest again: byte 1000 of the pattern first. Then the guest ACKs
 * everything and the host's close arrives as a FIN after the data.
 */
static void retransmit_after_acks_body(void)
{
	static uint8_t buf[4000];
	struct guest g;
	struct seg s;
	uint32_t isn;
	bool again = false, fin = false;
	int fd;

	fd = host_sent(&g, buf, sizeof(buf), &isn);
	send_seg(&g, PORT, TH_ACK, GUEST_ISN + 1, isn + 1 + 1000, 65535, NULL,
	         0);
	/* The first retransmission comes after TCP_RTO_MS. */
	for (int i = 0; i < 3 && !again; i++)
		while (!again && next_seg(&g, &s))
			again = s.len > 0 && s.seq == isn + 1 + 1000;
	CHECK(again && !memcmp(s.data, buf + 1000, sizeof(s.data)));
	CHECK(!shutdown(fd, SHUT_WR));
	send_seg(&g, PORT, TH_ACK, GUEST_ISN + 1, isn + 1 + sizeof(buf), 65535,
	         NULL, 0);
	for (int i = 0; i < 3 && !fin; i++)
		while (!fin && next_seg(&g, &s))
			fin = (s.flags & TH_FIN) &&
			      s.seq == isn + 1 + sizeof(buf);
	CHECK(fin);
	close(fd);
	guest_close(&g);
}

static void test_retransmit_after_acks(void)
{
	CHECK(unit_netns_run(retransmit_after_acks_body));
}

/*
 * A retransmission timeout rewinds to the oldest unacknowledged byte, and
 * the guest's window, now one segment, lets only that segment go again.
 * Then the guest ACKs everything it had from the first sending, past what
 * the rewind resent, while the bytes it ACKed wait in the queue for a
 * discard batch. The host's next bytes must reach the guest as they are,
 * at the ACKed sequence number, not bytes it already has.
 */
static void ack_past_rewind_body(void)
{
	static uint8_t buf[3000];
	uint32_t isn, end;
	bool resent = false, next = false;
	struct guest g;
	struct seg s;
	int fd;

	fd = host_sent(&g, buf, sizeof(buf), &isn);
	end = isn + 1 + sizeof(buf);
	/* Nothing ACKed, the window shrinks to one segment. */
	send_seg(&g, PORT, TH_ACK, GUEST_ISN + 1, isn + 1, 536, NULL, 0);
	for (int i = 0; i < 3 && !resent; i++)
		while (!resent && next_seg(&g, &s))
			resent = s.len > 0 && s.seq == isn + 1;
	CHECK(resent);
	send_seg(&g, PORT, TH_ACK, GUEST_ISN + 1, end, 65535, NULL, 0);
	CHECK(write(fd, "NEXT", 4) == 4);
	for (int i = 0; i < 3 && !next; i++)
		while (!next && next_seg(&g, &s))
			next = s.len > 0 && s.seq == end;
	CHECK(next && s.len == 4 && !memcmp(s.data, "NEXT", 4));
	close(fd);
	guest_close(&g);
}

static void test_ack_past_rewind(void)
{
	CHECK(unit_netns_run(ack_past_rewind_body));
}

const struct unit_case unit_cases[] = {
        {"the guest's data is ACKed by the host's answer, else once after "
         "the delay, then at once; two full segments at once",
         test_delayed_ack},
        {"a reset queued behind the host's last data reaches the guest "
         "after the data (both peek paths)",
         test_reset_behind_data},
        {"with ACKed bytes still queued, a retransmission starts at the "
         "first unacknowledged byte, and the FIN follows the data",
         test_retransmit_after_acks},
        {"the guest ACKs past what a rewind resent, with ACKed bytes "
         "still queued: the host's next bytes arrive as they are",
         test_ack_past_rewind},
        {NULL, NULL},
};
