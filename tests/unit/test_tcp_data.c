// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: TCP data toward the guest, on real host sockets
 *
 * Retransmission, urgent data, refused tap writes and zero windows, each
 * case in a network namespace of its own (unit_netns_run()), on both peek
 * paths where they differ: SO_PEEK_OFF and the discard buffer; and what
 * tapir keeps in flight under network conditions that delay it.
 */

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/cond/cond.h"
#include "driver/thread/thread.h"
#include "driver/core/ctx.h"
#include "driver/core/inany.h"
#include "driver/tcp/tcp_internal.h"
#include "driver/tcp/tcp_seg.h"
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

/* Bytes a peek may copy into the discard buffer (the bytes in flight read
 * again, without SO_PEEK_OFF) per byte it sends the guest: a small
 * constant, whatever the guest's ACKs or the host's writes.
 */
#define COPIED_PER_SENT_MAX 4
/* The guest's window scale, and its window field for 4 and 8 MiB. */
#define FLIGHT_WS 7
#define FLIGHT_WIN_4M ((4U << 20) >> FLIGHT_WS)
#define FLIGHT_WIN_8M 65535

/**
 * struct flight - host data on its way to a guest that peeks without
 *		   SO_PEEK_OFF and takes GSO frames, as by default
 * @g:		guest
 * @fd:		host socket
 * @port:	guest port
 * @base:	sequence number of the first data byte
 * @got:	bytes the guest received in order
 * @written:	bytes the host wrote
 * @copied:	discard-buffer bytes at the last flight_mark()
 * @sent:	payload bytes sent to the guest at the last flight_mark()
 */
struct flight {
	struct guest g;
	int fd;
	uint16_t port;
	uint32_t base;
	uint32_t got;
	size_t written;
	uint64_t copied;
	uint64_t sent;
};

/**
 * pattern() - the byte the host writes at stream offset @off
 * @off:	offset
 *
 * Return: a byte that tells offsets apart (251 is prime)
 */
static uint8_t pattern(size_t off)
{
	return (uint8_t)(off % 251);
}

/**
 * big_receive_buffers() - this namespace's TCP sockets start with 16 MiB
 *			   receive buffers
 *
 * tapir's socket holds everything in flight unread, and without reads
 * the kernel never grows its buffer: a test needs megabytes there from
 * the start. Only the test's own network namespace changes.
 *
 * Return: true on success
 */
static bool big_receive_buffers(void)
{
	static const char v[] = "4096 16777216 16777216";
	int fd = open("/proc/sys/net/ipv4/tcp_rmem", O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, v, sizeof(v) - 1) == (ssize_t)(sizeof(v) - 1);
	close(fd);
	return ok;
}

/**
 * flight_take() - read every segment tapir already sent, and note how far
 *		   the guest has the stream in order
 * @f:		flight
 */
static void flight_take(struct flight *f)
{
	struct seg s;

	while (take_seg(&f->g, &s)) {
		uint32_t off = s.seq - f->base;
		size_t n = s.len < sizeof(s.data) ? s.len : sizeof(s.data);

		if (s.dport != f->port || !s.len)
			continue;
		for (size_t i = 0; i < n; i++)
			if (s.data[i] != pattern(off + i)) {
				CHECK(!"every byte at its sequence number");
				break;
			}
		if (off <= f->got && off + s.len > f->got)
			f->got = off + (uint32_t)s.len;
	}
}

/**
 * flight_open_with() - a guest connection with window scaling and GSO
 *			frames
 * @f:		filled
 * @port:	guest port
 * @ws:	the guest's window scale shift
 * @win:	window field of the guest's final ACK, scaled by @ws
 * @discard:	peek past the discard buffer, as without SO_PEEK_OFF
 * @big:	the host's sockets start with 16 MiB receive buffers
 *
 * Return: true on success
 */
static bool flight_open_with(struct flight *f, uint16_t port, uint8_t ws,
                             uint16_t win, bool discard, bool big)
{
	int one = 1;

	memset(f, 0, sizeof(*f));
	f->port = port;
	f->fd = -1;
	if ((big && !big_receive_buffers()) || guest_open(&f->g, discard) ||
	    guest_vnet(&f->g))
		return false;
	f->fd = handshake_opts(&f->g, port, 1460, ws, 65535, win, &f->base);
	f->base++;
	return f->fd >= 0 && !fcntl(f->fd, F_SETFL, O_NONBLOCK) &&
	       !setsockopt(f->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/**
 * flight_open() - flight_open_with() peeking past the discard buffer, and
 *		   16 MiB receive buffers: the bytes in flight stay in them
 * @f:		filled
 * @port:	guest port
 * @win:	window field of the guest's final ACK, scaled by FLIGHT_WS
 *
 * Return: true on success
 */
static bool flight_open(struct flight *f, uint16_t port, uint16_t win)
{
	return flight_open_with(f, port, FLIGHT_WS, win, true, true);
}

/**
 * flight_write() - the host writes up to @total bytes of the pattern in
 *		    all, as far as its socket takes them now
 * @f:		flight
 * @total:	bytes, from the start of the stream
 */
static void flight_write(struct flight *f, size_t total)
{
	static uint8_t buf[1 << 16];

	while (f->written < total) {
		size_t len = total - f->written;
		ssize_t n;

		if (len > sizeof(buf))
			len = sizeof(buf);
		for (size_t i = 0; i < len; i++)
			buf[i] = pattern(f->written + i);
		n = write(f->fd, buf, len);
		if (n <= 0)
			return;
		f->written += (size_t)n;
	}
}

/**
 * flight_pump() - the host writes @total bytes while tapir runs, until the
 *		   guest has @want of them in order, for 5 s at most
 * @f:		flight
 * @total:	bytes the host writes, from the start of the stream
 * @want:	bytes the guest waits for
 */
static void flight_pump(struct flight *f, size_t total, uint32_t want)
{
	struct timespec ms = {0, 1000000};

	for (int i = 0; i < 5000 && f->got < want; i++) {
		flight_write(f, total);
		event_base_loop(f->g.c.base, EVLOOP_NONBLOCK);
		flight_take(f);
		if (f->got < want)
			nanosleep(&ms, NULL);
	}
}

/**
 * flight_ack() - the guest acknowledges @ack bytes of the stream and
 *		  advertises @win; tapir answers
 * @f:		flight
 * @ack:	bytes acknowledged, from the start of the stream
 * @win:	window field, scaled by FLIGHT_WS
 */
static void flight_ack(struct flight *f, uint32_t ack, uint16_t win)
{
	send_seg(&f->g, f->port, TH_ACK, GUEST_ISN + 1, f->base + ack, win,
	         NULL, 0);
	flight_take(f);
}

/**
 * flight_mark() - remember the copy and send counters
 * @f:		flight
 */
static void flight_mark(struct flight *f)
{
	f->copied = f->g.c.tcp->discard_copied;
	f->sent = f->g.c.stats.to_guest[PROTO_TCP].bytes;
}

/**
 * flight_copies_bounded() - since flight_mark(), the discard buffer took
 *			     at most COPIED_PER_SENT_MAX bytes per byte sent
 * @f:		flight
 *
 * Return: true if so
 */
static bool flight_copies_bounded(const struct flight *f)
{
	uint64_t copied = f->g.c.tcp->discard_copied - f->copied;
	uint64_t sent = f->g.c.stats.to_guest[PROTO_TCP].bytes - f->sent;

	if (copied <= COPIED_PER_SENT_MAX * sent)
		return true;
	printf("#   copied %llu bytes in flight again to send %llu\n",
	       (unsigned long long)copied, (unsigned long long)sent);
	return false;
}

/**
 * flight_close() - release a flight
 * @f:		flight
 */
static void flight_close(struct flight *f)
{
	if (f->fd >= 0)
		close(f->fd);
	guest_close(&f->g);
}

/*
 * Without SO_PEEK_OFF, 4 MiB in flight, and 2000 ACKs that each open one
 * more byte of window: each used to peek all 4 MiB again to send one byte
 * (118 us of CPU per ACK, outside the container's cgroup). The bytes
 * copied stay within a small constant times the bytes sent; once the
 * window really opens, the rest of the stream goes, within the same bound.
 */
static void one_byte_updates_body(void)
{
	const uint32_t flight = 4U << 20, total = 6U << 20;
	struct flight f;

	CHECK(flight_open(&f, 40060, FLIGHT_WIN_4M));
	flight_pump(&f, total, flight);
	CHECK(f.got == flight);
	flight_mark(&f);
	for (uint32_t i = 1; i <= 2000; i++)
		flight_ack(&f, i, FLIGHT_WIN_4M);
	CHECK(flight_copies_bounded(&f));
	flight_ack(&f, f.got, FLIGHT_WIN_4M);
	flight_pump(&f, total, total);
	CHECK(f.got == total);
	CHECK(flight_copies_bounded(&f));
	flight_close(&f);
}

static void test_one_byte_updates(void)
{
	CHECK(unit_netns_run(one_byte_updates_body));
}

/*
 * Without SO_PEEK_OFF, 3 MiB in flight in an 8 MiB window; the host then
 * writes one byte at a time, and each ACK takes one byte and moves the
 * window field by one. Each byte and each growth used to peek all 3 MiB
 * again, for one byte or none. The bytes copied stay within a small
 * constant times the bytes sent, and every byte reaches the guest once it
 * ACKs the rest.
 */
static void trickle_body(void)
{
	const uint32_t flight = 3U << 20, bytes = 200;
	struct flight f;

	CHECK(flight_open(&f, 40061, FLIGHT_WIN_8M));
	flight_pump(&f, flight, flight);
	CHECK(f.got == flight);
	flight_mark(&f);
	for (uint32_t i = 0; i < bytes; i++) {
		flight_write(&f, flight + i + 1);
		spin(&f.g, 1);
		/* Each ACK takes one byte more (no retransmission timeout)
		 * and moves the window field, up every other time.
		 */
		flight_ack(&f, i + 1, (uint16_t)(FLIGHT_WIN_8M - !(i & 1)));
	}
	CHECK(f.written == flight + bytes);
	CHECK(flight_copies_bounded(&f));
	flight_ack(&f, f.got, FLIGHT_WIN_8M);
	flight_pump(&f, flight + bytes, flight + bytes);
	CHECK(f.got == flight + bytes);
	CHECK(flight_copies_bounded(&f));
	flight_close(&f);
}

static void test_trickle(void)
{
	CHECK(unit_netns_run(trickle_body));
}

/**
 * cond_rule() - put one rule in force for the process, or none
 * @spec:	rule in the --conditions syntax, or NULL
 */
static void cond_rule(const char *spec)
{
	struct cond_set s = {0};
	char why[200];

	CHECK(!spec || !cond_parse_add(&s, spec, why, sizeof(why)));
	CHECK(!cond_install(&s));
}

/**
 * kept_flight() - under a delay, the flight to the guest is the guest's
 *		   window, not what the host socket's receive buffer holds
 * @discard:	use the discard-buffer peek path
 *
 * The kernel sizes that buffer for the host side's round trip: 128 KiB
 * at first, and peeking never grows it. A 50 ms delay then capped a
 * download at about 90 KB per round trip. Here, with 4 MiB of window and
 * no ACK, all 3 MiB the host writes go out, every byte in its place. A
 * retransmission timeout sends the oldest again, from what tapir kept;
 * once the guest ACKs everything, nothing is kept.
 */
static void kept_flight(bool discard)
{
	const uint32_t total = 3U << 20;
	struct flight f;
	uint64_t sent;

	CHECK(flight_open_with(&f, 40080, FLIGHT_WS, FLIGHT_WIN_4M, discard,
	                       false));
	CHECK(!cond_init(&f.g.c, &thread_cond_out));
	cond_rule("delay=1ms");
	flight_pump(&f, total, total);
	CHECK(f.got == total);
	CHECK(f.g.c.tcp->stash_cost >= total &&
	      f.g.c.tcp->stash_cost <= TCP_STASH_CONN_MAX);
	sent = f.g.c.stats.to_guest[PROTO_TCP].bytes;
	spin(&f.g, 300);
	flight_take(&f);
	CHECK(f.g.c.stats.to_guest[PROTO_TCP].bytes > sent);
	flight_ack(&f, total, FLIGHT_WIN_4M);
	spin(&f.g, 20);
	CHECK(f.g.c.tcp->stash_cost == 0);
	cond_rule(NULL);
	cond_cleanup(&f.g.c);
	flight_close(&f);
}

/*
 * Past the 8 MiB a connection may keep, the rest of the flight stays in
 * the host socket and is peeked, as without rules: with 16 MiB of window
 * and no ACK, more than the 8 MiB kept goes out. Then the guest ACKs a
 * bit at a time across where the kept bytes end and the socket's begin,
 * and gets every byte in its place; what is kept never passes the bound.
 */
static void kept_bound_body(void)
{
	const uint32_t total = 12U << 20;
	struct flight f;

	CHECK(flight_open_with(&f, 40081, 8, 65535, false, false));
	CHECK(!cond_init(&f.g.c, &thread_cond_out));
	cond_rule("delay=1ms");
	flight_pump(&f, total, (8U << 20) + 65536);
	CHECK(f.got >= (8U << 20) + 65536);
	CHECK(f.g.c.tcp->stash_cost <= TCP_STASH_CONN_MAX &&
	      f.g.c.tcp->stash_cost > TCP_STASH_CONN_MAX - (1U << 20));
	for (int i = 0; i < 4000 && f.got < total; i++) {
		flight_ack(&f, f.got - (f.got > 300000 ? 300000 : 0), 65535);
		flight_pump(&f, total, f.got + 1);
		CHECK(f.g.c.tcp->stash_cost <= TCP_STASH_CONN_MAX);
	}
	CHECK(f.got == total);
	flight_ack(&f, total, 65535);
	spin(&f.g, 20);
	CHECK(f.g.c.tcp->stash_cost == 0);
	cond_rule(NULL);
	cond_cleanup(&f.g.c);
	flight_close(&f);
}

static void kept_flight_body(void)
{
	kept_flight(false);
}

static void kept_flight_discard_body(void)
{
	kept_flight(true);
}

static void test_kept_flight(void)
{
	CHECK(unit_netns_run(kept_flight_body));
	CHECK(unit_netns_run(kept_flight_discard_body));
	CHECK(unit_netns_run(kept_bound_body));
}

/**
 * small_sndbuf_now() - flow_walk() callback: a 64 KiB send buffer for the
 *		      host socket, and the window estimated from the one
 *		      before forgotten
 * @f:		a TCP flow
 * @arg:	unused
 */
static void small_sndbuf_now(struct flow_common *f, void *arg)
{
	int size = 32768;

	(void)arg;
	CHECK(!setsockopt(((struct tcp_conn *)f)->fd, SOL_SOCKET, SO_SNDBUF,
	                  &size, sizeof(size)));
	((struct tcp_conn *)f)->wnd_est = 0;
}

/*
 * Under a delay, the window tapir offers the guest is what the host
 * socket has free at each ACK. Kept from one query until sends had taken
 * half of it, its right edge moved in steps of half the window, and a
 * guest whose flight is the window (a delayed link's) had three quarters
 * of it in flight on average: an upload at 50 ms each way measured 130
 * Mbit/s where its window allowed 157.
 */
static void window_each_ack_body(void)
{
	static uint8_t buf[1460], got[65536];
	uint32_t isn, lo = UINT32_MAX, hi = 0;
	struct guest g;
	struct seg s;
	int fd;

	CHECK(!guest_open(&g, false));
	CHECK(!cond_init(&g.c, &thread_cond_out));
	cond_rule("delay=1ms");
	fd = handshake_opts(&g, 40095, 1460, 7, 65535, 65535, &isn);
	CHECK(fd >= 0);
	flow_walk(g.c.flows, FLOW_TCP, small_sndbuf_now, NULL);
	drain(&g);
	for (uint32_t i = 0; i < 20; i++) {
		send_seg(&g, 40095, TH_ACK | TH_PSH, GUEST_ISN + 1 + i * 1460,
		         isn + 1, 65535, buf, sizeof(buf));
		/* The host reads all: its socket's buffer is free again. */
		while (recv(fd, got, sizeof(got), MSG_DONTWAIT) > 0)
			;
		spin(&g, 5);
		while (take_seg(&g, &s)) {
			uint32_t w = (uint32_t)s.win << TCP_WS_SHIFT;

			lo = w < lo ? w : lo;
			hi = w > hi ? w : hi;
		}
	}
	CHECK(hi > 0 && lo >= hi / 10 * 9);
	close(fd);
	cond_rule(NULL);
	cond_cleanup(&g.c);
	guest_close(&g);
}

static void test_window_each_ack(void)
{
	CHECK(unit_netns_run(window_each_ack_body));
}

/**
 * conn_of() - tapir's connection from guest port @port to the host
 * @g:		guest
 * @port:	guest port
 *
 * Return: the connection, or NULL if there is none
 */
static struct tcp_conn *conn_of(struct guest *g, uint16_t port)
{
	struct in6_addr guest, gw;

	inany_from_v4(&guest, (struct in_addr){htonl(0x0a000264)});
	inany_from_v4(&gw, (struct in_addr){htonl(0x0a000202)});
	return tcp_conn_lookup(g->c.flows, &guest, port, &gw, HOST_PORT);
}

/**
 * data_seg() - wait for a segment to guest port @port that carries @len
 *		bytes, or for an RST to it
 * @g:		guest
 * @port:	guest port
 * @len:	payload bytes, or 0 for an RST
 * @tries:	half-seconds to wait
 *
 * Return: true if it came
 */
static bool data_seg(struct guest *g, uint16_t port, size_t len, int tries)
{
	struct seg s;

	for (int i = 0; i < tries; i++)
		while (next_seg(g, &s))
			if (s.dport == port &&
			    (len ? s.len == len : !!(s.flags & TH_RST)))
				return true;
	return false;
}

/*
 * A partition longer than tapir's twelve retransmissions (about 100 s)
 * holds the connection: Linux would wait 15 minutes, and the reset tapir
 * sent was cut, leaving the guest's side open. Healed, the next
 * retransmission arrives, the guest ACKs it, and the connection goes on.
 * A connection the host resets during the partition has its reset kept
 * for the guest until the partition heals.
 */
static void partition_body(void)
{
	struct tcp_conn *conn;
	int fd, fd2, before;
	struct guest g;
	uint32_t isn, isn2;

	CHECK(!guest_open(&g, false));
	CHECK(!cond_init(&g.c, &thread_cond_out));
	fd = handshake(&g, 40090, 65535, &isn);
	fd2 = handshake(&g, 40091, 65535, &isn2);
	CHECK(fd >= 0 && fd2 >= 0);
	drain(&g);
	CHECK(write(fd, "hello", 5) == 5);
	CHECK(data_seg(&g, 40090, 5, 1));
	cond_rule("down");
	conn = conn_of(&g, 40090);
	CHECK(conn != NULL);
	/* As after twelve timeouts, and then some. */
	if (conn)
		conn->retries = TCP_MAX_RETRIES;
	for (int i = 0; i < 5 && conn && conn_of(&g, 40090) == conn; i++)
		tcp_timer_expire(conn);
	CHECK(conn_of(&g, 40090) == conn && conn);
	/* The host resets the other; the guest hears nothing yet. */
	reset_by_host(fd2);
	before = (int)g.c.tcp->nowed;
	CHECK(!data_seg(&g, 40091, 0, 1));
	CHECK(g.c.tcp->nowed == 1 && !before);
	cond_rule(NULL);
	/* Within a second of the heal, its reset; and the retransmission. */
	CHECK(data_seg(&g, 40091, 0, 3));
	CHECK(g.c.tcp->nowed == 0);
	if (conn && conn_of(&g, 40090) == conn)
		tcp_timer_expire(conn);
	CHECK(data_seg(&g, 40090, 5, 1));
	send_seg(&g, 40090, TH_ACK, GUEST_ISN + 1, isn + 6, 65535, NULL, 0);
	CHECK(conn_of(&g, 40090) == conn && conn && !conn->retries);
	CHECK(write(fd, "world", 5) == 5);
	CHECK(data_seg(&g, 40090, 5, 1));
	close(fd);
	cond_cleanup(&g.c);
	guest_close(&g);
}

static void test_partition(void)
{
	CHECK(unit_netns_run(partition_body));
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

/* Request/response rounds the timer test runs. */
#define RR_ROUNDS 400U

/*
 * A request/response exchange: each round, the guest sends a request that
 * ACKs the last answer, and the host answers. Each answer sent starts the
 * retransmission timer, and each ACK of it restarts it (or the idle
 * timer): re-added to libevent each time, every segment cost a step
 * through the heap of all the connections' timers. Only a deadline that
 * moves earlier goes to libevent now: about one per RTO (200 ms) of the
 * whole exchange, where there used to be two per round.
 */
static void timer_per_rto_body(void)
{
	static const char req[100], resp[100];
	uint32_t isn, gseq = GUEST_ISN + 1, got = 0;
	char buf[sizeof(req)];
	uint64_t arms;
	struct guest g;
	struct seg s;
	int fd;

	CHECK(!guest_open(&g, false));
	fd = handshake(&g, 40100, 65535, &isn);
	CHECK(fd >= 0);
	drain(&g);
	arms = g.c.tcp->timer_arms;
	for (unsigned int i = 0; i < RR_ROUNDS && fd >= 0; i++) {
		send_seg(&g, 40100, TH_ACK | TH_PUSH, gseq, isn + 1 + got,
		         65535, req, sizeof(req));
		gseq += sizeof(req);
		if (read(fd, buf, sizeof(buf)) != sizeof(buf) ||
		    write(fd, resp, sizeof(resp)) != sizeof(resp))
			break;
		while (next_seg(&g, &s))
			if (s.dport == 40100 && s.len) {
				got += (uint32_t)s.len;
				break;
			}
	}
	CHECK(got == RR_ROUNDS * sizeof(resp));
	arms = g.c.tcp->timer_arms - arms;
	printf("#   %u rounds, %llu timer arms\n", RR_ROUNDS,
	       (unsigned long long)arms);
	/* 2 s of rounds would be 10 RTOs; a round takes about 1 ms. */
	CHECK(arms <= RR_ROUNDS / 40);
	close(fd);
	guest_close(&g);
}

static void test_timer_per_rto(void)
{
	CHECK(unit_netns_run(timer_per_rto_body));
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
        {"no SO_PEEK_OFF, 4 MiB in flight, ACKs that each open one byte: "
         "the discard buffer copies at most 4 bytes per byte sent",
         test_one_byte_updates},
        {"no SO_PEEK_OFF, 3 MiB in flight, the host writes byte by byte "
         "and the window moves: at most 4 bytes copied per byte sent",
         test_trickle},
        {"under a delay, 3 MiB in flight to the guest with the host "
         "socket's default buffers, resent from what tapir keeps (both "
         "peek paths); past 8 MiB the rest is peeked, every byte in its "
         "place",
         test_kept_flight},
        {"under a delay, each ACK offers the window the host socket has "
         "free, not what is left of an older estimate",
         test_window_each_ack},
        {"a partition past twelve timeouts holds the connection, which "
         "goes on once healed; a reset it cut reaches the guest then",
         test_partition},
        {"a window under one segment takes new data at once only if it all "
         "fits, else after the persist timeout; a small-window guest is "
         "served at once (both peek paths)",
         test_small_window},
        {"timer: a request/response exchange arms it per RTO, not per "
         "segment",
         test_timer_per_rto},
        {NULL, NULL},
};
