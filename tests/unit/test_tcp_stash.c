// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: the host data in flight that tapir keeps under
 * network conditions (tcp_stash.c), on connections of their own without
 * sockets
 *
 * Reads of every size into the room it offers, ACKs of every size, and
 * copies from anywhere: the bytes always match what was read, and the
 * memory counted stays within the bounds per connection and per thread,
 * back to nothing once all is ACKed. test_tcp_data.c drives it through
 * real sockets.
 */

#include <stdlib.h>
#include <string.h>

#include "driver/core/ctx.h"
#include "driver/tcp/tcp_internal.h"
#include "tests/unit/unit.h"

/* Connections a test thread has: more than the thread's bound allows at
 * the connection's bound.
 */
#define CONNS ((int)(TCP_STASH_THREAD_MAX / TCP_STASH_CONN_MAX) + 2)

/**
 * struct stash_test - a context and connections without sockets
 * @c:		context, only its TCP state is used
 * @conn:	connections
 * @acked:	bytes each has had ACKed, from its stream's start
 * @read:	bytes each has kept, from its stream's start
 * @rng:	xorshift state
 */
struct stash_test {
	struct ctx c;
	struct tcp_conn conn[CONNS];
	uint32_t acked[CONNS];
	uint32_t read[CONNS];
	uint64_t rng;
};

/**
 * next() - a random number below @n
 * @t:		test state
 * @n:		bound, above 0
 *
 * Return: the number
 */
static uint32_t next(struct stash_test *t, uint32_t n)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return (uint32_t)(t->rng % n);
}

/**
 * stash_open() - a context and CONNS empty connections
 *
 * Return: the test's state, NULL if out of memory
 */
static struct stash_test *stash_open(void)
{
	struct stash_test *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->c.tcp = calloc(1, sizeof(*t->c.tcp));
	if (!t->c.tcp) {
		free(t);
		return NULL;
	}
	t->rng = 88172645463325252ULL;
	return t;
}

/**
 * stash_close() - free what the connections keep, and the state
 * @t:		test state
 */
static void stash_close(struct stash_test *t)
{
	for (int i = 0; i < CONNS; i++) {
		tcp_stash_free(&t->c, &t->conn[i]);
		CHECK(t->conn[i].stash_cost == 0 && !t->conn[i].stash);
	}
	CHECK(t->c.tcp->stash_cost == 0);
	free(t->c.tcp);
	free(t);
}

/**
 * fill() - "read" up to @len bytes into connection @i's room, as a socket
 *	    read would: byte k of the stream is k % 253
 * @t:		test state
 * @i:		connection
 * @len:	bytes wanted
 *
 * Return: bytes kept
 */
static uint32_t fill(struct stash_test *t, int i, uint32_t len)
{
	struct tcp_conn *conn = &t->conn[i];
	uint32_t room = tcp_stash_room(&t->c, conn), got = 0, take;
	struct iovec iov[64];
	int n;

	if (len > room)
		len = room;
	if (!len)
		return 0;
	n = tcp_stash_iov(&t->c, conn, len, iov, 64);
	for (int k = 0; k < n; k++)
		got += (uint32_t)iov[k].iov_len;
	CHECK(got == len);
	/* A read may take less than the room offered. */
	take = next(t, 4) ? got : next(t, got + 1);
	for (int k = 0, done = 0; k < n && (uint32_t)done < take; k++) {
		uint32_t l = (uint32_t)iov[k].iov_len;

		if (l > take - (uint32_t)done)
			l = take - (uint32_t)done;
		for (uint32_t b = 0; b < l; b++)
			((uint8_t *)iov[k].iov_base)[b] =
			        (uint8_t)((t->read[i] + (uint32_t)done + b) %
			                  253);
		done += (int)l;
	}
	tcp_stash_commit(&t->c, conn, take);
	t->read[i] += take;
	return take;
}

/**
 * matches() - connection @i keeps exactly the bytes read and not ACKed,
 *	       copied from a random place
 * @t:		test state
 * @i:		connection
 *
 * Return: true if so
 */
static bool matches(struct stash_test *t, int i)
{
	static uint8_t buf[1 << 16];
	struct tcp_conn *conn = &t->conn[i];
	uint32_t off, len;

	if (conn->stash_len != t->read[i] - t->acked[i])
		return false;
	if (!conn->stash_len)
		return true;
	off = next(t, conn->stash_len);
	len = next(t, conn->stash_len - off) + 1;
	if (len > sizeof(buf))
		len = sizeof(buf);
	tcp_stash_copy(conn, off, buf, len);
	for (uint32_t b = 0; b < len; b++)
		if (buf[b] != (uint8_t)((t->acked[i] + off + b) % 253))
			return false;
	return true;
}

/* Reads and ACKs of random sizes on several connections: the bytes kept
 * are always the ones read and not yet ACKed, in order; the memory they
 * cost stays within both bounds, and reaching them stops the reads.
 */
static void test_bytes_and_bounds(void)
{
	struct stash_test *t = stash_open();
	size_t most_conn = 0, most_thread = 0;

	CHECK(t);
	if (!t)
		return;
	for (int step = 0; step < 6000; step++) {
		/* Filled up first, to the bounds; then anything goes. */
		int i = step < 1000 ? step % CONNS : (int)next(t, CONNS);
		struct tcp_conn *conn = &t->conn[i];
		uint32_t len;

		if (step < 1000 || next(t, 3)) {
			len = next(t, 4) ? next(t, 300000) : next(t, 600) + 1;
			fill(t, i, len);
		} else if (conn->stash_len) {
			len = next(t, 3) ? next(t, conn->stash_len) + 1
			                 : conn->stash_len;
			tcp_stash_trim(&t->c, conn, len);
			t->acked[i] += len;
		}
		CHECK(matches(t, i));
		CHECK(conn->stash_cost <= TCP_STASH_CONN_MAX);
		CHECK(t->c.tcp->stash_cost <= TCP_STASH_THREAD_MAX);
		/* Nothing kept costs nothing. */
		CHECK(conn->stash_len || !conn->stash_cost);
		if (conn->stash_cost > most_conn)
			most_conn = conn->stash_cost;
		if (t->c.tcp->stash_cost > most_thread)
			most_thread = t->c.tcp->stash_cost;
	}
	/* Both bounds were reached, to within a chunk each connection. */
	CHECK(most_conn > TCP_STASH_CONN_MAX - (128U << 10));
	CHECK(most_thread > TCP_STASH_THREAD_MAX - CONNS * (128U << 10));
	stash_close(t);
}

/* A connection kept to its bound holds most of it in bytes: the overhead
 * of its chunks is small, and a reply of a few bytes costs a page, not a
 * whole chunk.
 */
static void test_overhead(void)
{
	struct stash_test *t = stash_open();

	CHECK(t);
	if (!t)
		return;
	while (fill(t, 0, 1U << 20))
		;
	CHECK(t->conn[0].stash_len >= TCP_STASH_CONN_MAX / 100 * 99);
	CHECK(fill(t, 1, 10) == 10);
	CHECK(t->conn[1].stash_cost <= 4096 + 64);
	stash_close(t);
}

const struct unit_case unit_cases[] = {
        {"kept bytes are the ones read and not ACKed, within the bounds "
         "per connection and per thread",
         test_bytes_and_bounds},
        {"kept bytes cost little more than themselves, a small reply a "
         "page",
         test_overhead},
        {NULL, NULL},
};
