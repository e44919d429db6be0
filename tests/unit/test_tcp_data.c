// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: TCP data toward the guest, on real host sockets
 *
 * Retransmission, urgent data, refused tap writes and zero windows, each
 * case in a network namespace of its own (unit_netns_run()), on both peek
 * paths where they differ: SO_PEEK_OFF and the discard buffer.
 */

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/ctx.h"
#include "tests/unit/tcpguest.h"
#include "tests/unit/unit.h"

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
 * refused_then_sent() - the tap refuses the first frame of a reply (or the
 *			 FIN) while nothing is in flight; once the tap takes
 *			 frames again, the guest still gets it
 * @fin:	the host closes instead of sending data
 *
 * Another connection fills the fake tap's small buffer first. Nothing in
 * flight means no retransmission timer would ever send it.
 */
static void refused_then_sent(bool fin)
{
	static char filler[60000];
	int small = 4096, big = 1 << 20, fa, fb;
	bool got = false;
	uint32_t ia, ib;
	struct guest g;
	struct seg s;

	CHECK(!guest_open(&g, false));
	fa = handshake(&g, 40010, 65535, &ia);
	fb = handshake(&g, 40011, 65535, &ib);
	CHECK(fa >= 0 && fb >= 0);
	drain(&g);
	CHECK(!setsockopt(g.c.tapfd[0], SOL_SOCKET, SO_SNDBUF, &small,
	                  sizeof(small)));
	CHECK(!fcntl(fb, F_SETFL, O_NONBLOCK));
	CHECK(write(fb, filler, sizeof(filler)) > 0);
	spin(&g, 20);
	if (fin)
		CHECK(!shutdown(fa, SHUT_WR));
	else
		CHECK(write(fa, "hello", 5) == 5);
	spin(&g, 20);
	CHECK(g.c.stats.drops[DROP_TAP_WRITE] > 0);
	CHECK(!setsockopt(g.c.tapfd[0], SOL_SOCKET, SO_SNDBUF, &big,
	                  sizeof(big)));
	for (int tries = 0; tries < 3 && !got; tries++)
		while (!got && next_seg(&g, &s))
			got = s.dport == 40010 &&
			      (fin ? !!(s.flags & TH_FIN)
			           : s.len == 5 && !memcmp(s.data, "hello", 5));
	CHECK(got);
	close(fa);
	close(fb);
	guest_close(&g);
}

static void refused_data_body(void)
{
	refused_then_sent(false);
}

static void refused_fin_body(void)
{
	refused_then_sent(true);
}

static void test_refused_then_sent(void)
{
	CHECK(unit_netns_run(refused_data_body));
	CHECK(unit_netns_run(refused_fin_body));
}

/*
 * One frame lost in a flight of ten: the guest sends a duplicate ACK for
 * each of the nine that follow, in one batch. Only the lost frame goes out
 * again, once; resending the whole flight for every third duplicate would
 * flood the tap queue whose overflow lost the frame.
 */
static void dupack_body(void)
{
	static char buf[10 * 536]; /* MSS 536: the guest sent no option */
	int fd, flight = 0, resent = 0, first = 0;
	struct guest g;
	struct seg s;
	uint32_t isn;

	CHECK(!guest_open(&g, false));
	fd = handshake(&g, 40020, 65535, &isn);
	CHECK(fd >= 0);
	drain(&g);
	CHECK(write(fd, buf, sizeof(buf)) == sizeof(buf));
	/* The first flight only: after 200 ms the timer sends it again. */
	while (flight < 10 && next_seg(&g, &s))
		flight += s.len > 0;
	CHECK(flight == 10);
	for (int i = 0; i < 9; i++)
		queue_seg(&g, 40020, TH_ACK, GUEST_ISN + 1, isn + 1, 65535,
		          NULL, 0);
	event_base_loop(g.c.base, EVLOOP_NONBLOCK);
	while (take_seg(&g, &s)) {
		resent += s.len > 0;
		first += s.len > 0 && s.seq == isn + 1;
	}
	CHECK(resent == 1 && first == 1);
	close(fd);
	guest_close(&g);
}

static void test_dupack(void)
{
	CHECK(unit_netns_run(dupack_body));
}

/**
 * urgent_in_stream() - urgent data from the host reaches the guest in its
 *			place, once, and what follows it too
 * @discard:	use the discard-buffer peek path
 *
 * Peeks stop at the urgent mark. Without SO_OOBINLINE the urgent byte was
 * skipped while the peek offset was not, so later bytes went out at the
 * wrong sequence numbers; and a peek cut short at the mark was taken for a
 * drained queue, so the rest waited for news that never came.
 */
static void urgent_in_stream(bool discard)
{
	static const char want[] = "abcXdefghi";
	const size_t total = sizeof(want) - 1;
	struct guest g;
	uint32_t base;
	size_t len = 0;
	struct seg s;
	int fd;

	CHECK(!guest_open(&g, discard));
	fd = handshake(&g, 40030, 65535, &base);
	CHECK(fd >= 0);
	drain(&g);
	base++;
	CHECK(send(fd, "abc", 3, 0) == 3 && send(fd, "X", 1, MSG_OOB) == 1 &&
	      send(fd, "def", 3, 0) == 3);
	for (int round = 0; round < 4; round++) {
		if (round == 2)
			CHECK(send(fd, "ghi", 3, 0) == 3);
		while (next_seg(&g, &s)) {
			size_t off = s.seq - base;

			if (!s.len)
				continue;
			/* Every byte at its sequence number is the host's. */
			CHECK(off + s.len <= total &&
			      !memcmp(s.data, want + off, s.len));
			if (off == len && off + s.len <= total)
				len += s.len;
			send_seg(&g, 40030, TH_ACK, GUEST_ISN + 1,
			         base + (uint32_t)len, 65535, NULL, 0);
		}
	}
	CHECK(len == total);
	close(fd);
	guest_close(&g);
}

static void urgent_body(void)
{
	urgent_in_stream(false);
}

static void urgent_discard_body(void)
{
	urgent_in_stream(true);
}

static void test_urgent(void)
{
	CHECK(unit_netns_run(urgent_body));
	CHECK(unit_netns_run(urgent_discard_body));
}

/*
 * The guest's window stays shut for three probes, then opens; data goes
 * out and its ACK is lost. The retransmission comes after a fresh RTO:
 * probes are no failures, so neither their count nor their backed-off
 * timer carries over (with enough of them, the first timeout used to
 * reset the connection instead).
 */
static void zero_window_body(void)
{
	struct timespec t0, t1;
	bool rst = false;
	int fd, probes = 0;
	struct guest g;
	struct seg s;
	uint32_t isn;
	long ms = -1;

	CHECK(!guest_open(&g, false));
	fd = handshake(&g, 40050, 0, &isn);
	CHECK(fd >= 0 && write(fd, "hello", 5) == 5);
	for (int i = 0; i < 10 && probes < 3; i++)
		while (probes < 3 && next_seg(&g, &s))
			probes += !s.len && s.seq == isn;
	CHECK(probes == 3);
	send_seg(&g, 40050, TH_ACK, GUEST_ISN + 1, isn + 1, 65535, NULL, 0);
	while (next_seg(&g, &s) && !s.len)
		;
	CHECK(s.len == 5);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 3 && ms < 0 && !rst; i++) {
		while (ms < 0 && !rst && next_seg(&g, &s)) {
			rst |= !!(s.flags & TH_RST);
			if (s.len == 5) {
				clock_gettime(CLOCK_MONOTONIC, &t1);
				ms = (t1.tv_sec - t0.tv_sec) * 1000 +
				     (t1.tv_nsec - t0.tv_nsec) / 1000000;
			}
		}
	}
	CHECK(!rst);
	/* An RTO of 200 ms; the third probe's deadline was 1.6 s away. */
	CHECK(ms >= 0 && ms < 1000);
	close(fd);
	guest_close(&g);
}

static void test_zero_window(void)
{
	CHECK(unit_netns_run(zero_window_body));
}

/**
 * ms_since() - milliseconds since @t0
 * @t0:		CLOCK_MONOTONIC time
 *
 * Return: milliseconds
 */
static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/**
 * next_data() - the next segment with payload tapir sends to guest port
 *		 @port
 * @g:		guest
 * @port:	guest port
 * @s:		filled
 *
 * Return: true if one came within a second
 */
static bool next_data(struct guest *g, uint16_t port, struct seg *s)
{
	for (int i = 0; i < 2; i++)
		while (next_seg(g, s))
			if (s->len && s->dport == port)
				return true;
	return false;
}

/**
 * small_window() - silly window avoidance: a window smaller than a
 *		    segment, from a guest that once offered more, takes new
 *		    data at once only if all of it fits, else after the
 *		    persist timeout; a guest whose whole window is small is
 *		    served at once
 * @discard:	use the discard-buffer peek path
 *
 * Filling each few bytes of window as it opens costs the guest a frame
 * per few bytes (and, without SO_PEEK_OFF, tapir a copy of the flight).
 */
static void small_window(bool discard)
{
	static char buf[5000];
	struct timespec t0;
	uint32_t isn, got;
	struct guest g;
	struct seg s;
	long ms;
	int fd;

	CHECK(!guest_open(&g, discard));
	fd = handshake_opts(&g, 40070, 1460, 0, 65535, 100, &isn);
	CHECK(fd >= 0);
	isn++;
	/* 50 bytes into a 100-byte window: all there is fits, so at once. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(write(fd, buf, 50) == 50);
	CHECK(next_data(&g, 40070, &s) && s.len == 50 && s.seq == isn);
	CHECK(ms_since(&t0) < 100);
	send_seg(&g, 40070, TH_ACK, GUEST_ISN + 1, isn + 50, 100, NULL, 0);
	/* 5000 bytes: the window waits for the persist timeout (200 ms). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(write(fd, buf, sizeof(buf)) == sizeof(buf));
	CHECK(next_data(&g, 40070, &s) && s.len == 100 && s.seq == isn + 50);
	ms = ms_since(&t0);
	CHECK(ms >= 150 && ms < 1000);
	/* A real window: the rest at once. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	send_seg(&g, 40070, TH_ACK, GUEST_ISN + 1, isn + 150, 65535, NULL, 0);
	for (got = 150; got < 50 + sizeof(buf) && next_data(&g, 40070, &s);)
		if (s.seq == isn + got)
			got += (uint32_t)s.len;
	CHECK(got == 50 + sizeof(buf));
	CHECK(ms_since(&t0) < 100);
	send_seg(&g, 40070, TH_ACK, GUEST_ISN + 1, isn + got, 65535, NULL, 0);
	close(fd);

	/* A guest whose window never exceeds 300 bytes. */
	fd = handshake_opts(&g, 40071, 1460, 0, 300, 300, &isn);
	CHECK(fd >= 0);
	isn++;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(write(fd, buf, 1000) == 1000);
	for (got = 0; got < 1000 && next_data(&g, 40071, &s);) {
		CHECK(s.seq == isn + got && s.len == (got < 900 ? 300 : 100));
		got += (uint32_t)s.len;
		send_seg(&g, 40071, TH_ACK, GUEST_ISN + 1, isn + got, 300, NULL,
		         0);
	}
	CHECK(got == 1000);
	CHECK(ms_since(&t0) < 100);
	close(fd);
	guest_close(&g);
}

static void small_window_body(void)
{
	small_window(false);
}

static void small_window_discard_body(void)
{
	small_window(true);
}

static void test_small_window(void)
{
	CHECK(unit_netns_run(small_window_body));
	CHECK(unit_netns_run(small_window_discard_body));
}

const struct unit_case unit_cases[] = {
        {"the tap refuses a reply's first frame or the FIN with nothing "
         "in flight: both still reach the guest",
         test_refused_then_sent},
        {"nine duplicate ACKs in one batch: the lost frame alone goes out "
         "again, once",
         test_dupack},
        {"urgent data: every byte in its place, once, and the bytes after "
         "the mark too (both peek paths)",
         test_urgent},
        {"a zero window probed three times, then opened: the next "
         "retransmission after a fresh RTO, no reset",
         test_zero_window},
        {"a window under one segment takes new data at once only if it all "
         "fits, else after the persist timeout; a small-window guest is "
         "served at once (both peek paths)",
         test_small_window},
        {NULL, NULL},
};
