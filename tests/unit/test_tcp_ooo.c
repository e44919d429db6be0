// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: the SACK option built from the segments held after
 * a hole (tcp_ooo.c), on a connection of its own without sockets
 *
 * test_tcp.c drives SACK through real frames from a guest whose sequence
 * numbers start at 1000; here they cross 2^32, and the cases a frame
 * sequence reaches only slowly (a window that cuts a range, a range sent
 * again) are set up directly.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>

#include "driver/core/ctx.h"
#include "driver/tcp/tcp_internal.h"
#include "tests/unit/unit.h"

/* The guest's next byte: ranges after it cross 2^32. */
#define BASE 0xffffff00U
/* A window that takes all the ranges below, whatever they cost the host
 * socket.
 */
#define WIDE 0x100000U

/**
 * struct ooo_test - a context and a connection with SACK permitted
 * @c:		context, only its TCP state is used
 * @conn:	connection expecting BASE
 * @data:	payload bytes for any segment
 */
struct ooo_test {
	struct ctx c;
	struct tcp_conn conn;
	uint8_t data[0x10000];
};

/**
 * ooo_open() - a connection that expects BASE and permits SACK
 *
 * Return: the test's state, NULL if out of memory
 */
static struct ooo_test *ooo_open(void)
{
	struct ooo_test *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->c.tcp = calloc(1, sizeof(*t->c.tcp));
	if (!t->c.tcp) {
		free(t);
		return NULL;
	}
	t->conn.rcv_nxt = BASE;
	t->conn.mss = 1460;
	t->conn.flags = CONN_ESTABLISHED | CONN_SACK_OK;
	return t;
}

/**
 * ooo_close() - free what the connection holds, and the state
 * @t:		test state
 */
static void ooo_close(struct ooo_test *t)
{
	tcp_ooo_free(&t->c, &t->conn);
	CHECK(t->c.tcp->ooo_cost == 0);
	free(t->c.tcp);
	free(t);
}

/**
 * hold() - hold bytes [BASE + @from, BASE + @to)
 * @t:		test state
 * @from:	offset of the first
 * @to:		offset after the last
 */
static void hold(struct ooo_test *t, uint32_t from, uint32_t to)
{
	CHECK(tcp_ooo_hold(&t->c, &t->conn, BASE + from, t->data, to - from,
	                   false));
}

/**
 * sack_is() - the option for a window of @wnd bytes holds these blocks,
 *	       in this order, aligned behind two NOPs
 * @t:		test state
 * @wnd:	window the ACK offers
 * @want:	edges as offsets from BASE, ending with 0, 0; none for no
 *		option at all
 *
 * Return: true if so
 */
static bool sack_is(struct ooo_test *t, uint32_t wnd, const uint32_t *want)
{
	uint8_t opt[TCP_SACK_OPTLEN_MAX];
	size_t len = tcp_ooo_sack(&t->c, &t->conn, wnd, opt), n = 0;

	while (want[2 * n] || want[2 * n + 1])
		n++;
	if (!n)
		return len == 0;
	if (len != 4 + 8 * n || opt[0] != TCPOPT_NOP || opt[1] != TCPOPT_NOP ||
	    opt[2] != TCPOPT_SACK || opt[3] != 2 + 8 * n)
		return false;
	for (size_t k = 0; k < 2 * n; k++) {
		uint32_t v;

		memcpy(&v, opt + 4 + 4 * k, 4);
		if (ntohl(v) != BASE + want[k])
			return false;
	}
	return true;
}

/* Ranges that cross 2^32 merge when they touch, and order by recency. */
static void test_wrap(void)
{
	struct ooo_test *t = ooo_open();

	CHECK(t);
	if (!t)
		return;
	hold(t, 0x300, 0x400);
	hold(t, 0x0c0, 0x140);
	CHECK(sack_is(t, WIDE, (uint32_t[]){0x0c0, 0x140, 0x300, 0x400, 0, 0}));
	hold(t, 0x140, 0x200);
	CHECK(sack_is(t, WIDE, (uint32_t[]){0x0c0, 0x200, 0x300, 0x400, 0, 0}));
	/* The hole fills from a retransmission: ranges behind are freed. */
	t->conn.rcv_nxt = BASE + 0x200;
	CHECK(!tcp_ooo_ready(&t->c, &t->conn));
	CHECK(sack_is(t, WIDE, (uint32_t[]){0x300, 0x400, 0, 0}));
	ooo_close(t);
}

/* Only what the window offers is reported: a range it cuts ends at its
 * edge, and one past it is left out. (64 KiB segments, whose cost to the
 * host socket is little more than their bytes.)
 */
static void test_window(void)
{
	struct ooo_test *t = ooo_open();

	CHECK(t);
	if (!t)
		return;
	t->conn.mss = 0xffff;
	hold(t, 0x10000, 0x20000);
	hold(t, 0x30000, 0x40000);
	CHECK(sack_is(t, 0x38000,
	              (uint32_t[]){0x30000, 0x38000, 0x10000, 0x20000, 0, 0}));
	CHECK(sack_is(t, 0x1c000, (uint32_t[]){0x10000, 0x1c000, 0, 0}));
	CHECK(sack_is(t, 0x10000, (uint32_t[]){0, 0}));
	CHECK(sack_is(t, 0, (uint32_t[]){0, 0}));
	ooo_close(t);
}

/* Nor what the host socket would not take once the hole fills: each held
 * segment and each segment that fills the hole costs it its bytes and an
 * skb. A 6 KiB window, three quarters of 8 KiB free, takes the hole and
 * two 200-byte segments: 4 × (200 + 2048) bytes would not fit.
 */
static void test_socket_cost(void)
{
	struct ooo_test *t = ooo_open();

	CHECK(t);
	if (!t)
		return;
	for (uint32_t from = 200; from < 2000; from += 200)
		hold(t, from, from + 200);
	CHECK(sack_is(t, 0x1800, (uint32_t[]){200, 600, 0, 0}));
	/* Bigger segments: each costs less of its bytes. */
	tcp_ooo_free(&t->c, &t->conn);
	hold(t, 1460, 2920);
	hold(t, 2920, 4380);
	CHECK(sack_is(t, 0x3000, (uint32_t[]){1460, 4380, 0, 0}));
	ooo_close(t);
}

/* A range the guest sends again goes first (RFC 2018 section 4), even one
 * the four blocks would otherwise leave out.
 */
static void test_resent_first(void)
{
	struct ooo_test *t = ooo_open();

	CHECK(t);
	if (!t)
		return;
	for (uint32_t from = 0x40; from < 0x400; from += 0x80)
		hold(t, from, from + 0x20);
	CHECK(sack_is(t, WIDE,
	              (uint32_t[]){0x3c0, 0x3e0, 0x040, 0x060, 0x0c0, 0x0e0,
	                           0x140, 0x160, 0, 0}));
	hold(t, 0x240, 0x260);
	CHECK(sack_is(t, WIDE,
	              (uint32_t[]){0x240, 0x260, 0x040, 0x060, 0x0c0, 0x0e0,
	                           0x140, 0x160, 0, 0}));
	ooo_close(t);
}

/* None without permission, and none while the bytes at rcv_nxt wait for
 * the host socket's room.
 */
static void test_none(void)
{
	struct ooo_test *t = ooo_open();

	CHECK(t);
	if (!t)
		return;
	hold(t, 0x100, 0x200);
	t->conn.flags &= ~CONN_SACK_OK;
	CHECK(sack_is(t, WIDE, (uint32_t[]){0, 0}));
	t->conn.flags |= CONN_SACK_OK;
	hold(t, 0x000, 0x080);
	CHECK(tcp_ooo_waits(&t->conn));
	CHECK(sack_is(t, WIDE, (uint32_t[]){0, 0}));
	ooo_close(t);
}

/* A duplicate goes first, below the ACK (D-SACK, RFC 2883), then the
 * held ranges, and a pure ACK is owed for it; duplicates that touch
 * merge. None without SACK.
 */
static void test_dsack(void)
{
	struct ooo_test *t = ooo_open();

	CHECK(t);
	if (!t)
		return;
	hold(t, 0x100, 0x200);
	tcp_ooo_dsack(&t->conn, BASE - 0x40, 0x20);
	CHECK(t->conn.dupacks_owed == 1);
	CHECK(sack_is(t, WIDE,
	              (uint32_t[]){-0x40U, -0x20U, 0x100, 0x200, 0, 0}));
	/* Another in the same batch that touches it extends it; one apart
	 * takes its place.
	 */
	tcp_ooo_dsack(&t->conn, BASE - 0x20, 0x10);
	tcp_ooo_dsack(&t->conn, BASE - 0x80, 0x40);
	CHECK(sack_is(t, WIDE,
	              (uint32_t[]){-0x80U, -0x10U, 0x100, 0x200, 0, 0}));
	tcp_ooo_dsack(&t->conn, BASE - 0x200, 0x10);
	CHECK(sack_is(t, WIDE,
	              (uint32_t[]){-0x200U, -0x1f0U, 0x100, 0x200, 0, 0}));
	/* With five ranges held: the duplicate, the newest, the lowest two. */
	for (uint32_t from = 0x300; from < 0x700; from += 0x100)
		hold(t, from, from + 0x80);
	CHECK(sack_is(t, WIDE,
	              (uint32_t[]){-0x200U, -0x1f0U, 0x600, 0x680, 0x100, 0x200,
	                           0x300, 0x380, 0, 0}));
	t->conn.flags &= ~CONN_DSACK;
	CHECK(sack_is(t, WIDE,
	              (uint32_t[]){0x600, 0x680, 0x100, 0x200, 0x300, 0x380,
	                           0x400, 0x480, 0, 0}));
	t->conn.flags &= ~CONN_SACK_OK;
	tcp_ooo_dsack(&t->conn, BASE - 0x40, 0x20);
	CHECK(!(t->conn.flags & CONN_DSACK));
	ooo_close(t);
}

/* Segments of MTU 1500 held in the tests of cost below: most of what a
 * connection may hold (TCP_OOO_SEGS), within its bounds.
 */
#define MANY 480U
#define SEG 1460U

/**
 * steps_since() - held segments looked at since @before
 * @t:		test state
 * @before:	an earlier reading of the counter
 *
 * Return: the steps
 */
static uint64_t steps_since(const struct ooo_test *t, uint64_t before)
{
	return t->c.tcp->ooo_steps - before;
}

/**
 * most() - the larger of two counts
 * @a:		one
 * @b:		other
 *
 * Return: it
 */
static uint64_t most(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/**
 * sack_steps() - build the option an ACK with the largest window carries
 * @t:		test state
 *
 * Return: held segments looked at for it
 */
static uint64_t sack_steps(struct ooo_test *t)
{
	uint8_t opt[TCP_SACK_OPTLEN_MAX];
	uint64_t before = t->c.tcp->ooo_steps;

	CHECK(tcp_ooo_sack(&t->c, &t->conn, TCP_WINDOW_MAX, opt) > 0);
	return steps_since(t, before);
}

/* A flight after one lost segment arrives in order: each segment goes to
 * the end of those held, and the duplicate ACK it draws reports them all
 * in one block, without a walk over them.
 */
static void test_cost_append(void)
{
	struct ooo_test *t = ooo_open();
	uint64_t worst = 0, before;

	CHECK(t);
	if (!t)
		return;
	for (uint32_t i = 1; i <= MANY; i++) {
		before = t->c.tcp->ooo_steps;
		hold(t, i * SEG, (i + 1) * SEG);
		worst = most(worst, steps_since(t, before));
		worst = most(worst, sack_steps(t));
	}
	printf("#   %u in order: at most %llu steps each\n", MANY,
	       (unsigned long long)worst);
	CHECK(worst <= 2);
	CHECK(t->conn.ooo_segs == MANY);
	CHECK(sack_is(t, TCP_WINDOW_MAX,
	              (uint32_t[]){SEG, (MANY + 1) * SEG, 0, 0}));
	/* The guest sends the last one again (a tail loss probe). */
	before = t->c.tcp->ooo_steps;
	hold(t, MANY * SEG, (MANY + 1) * SEG);
	CHECK(steps_since(t, before) <= 2);
	CHECK(t->conn.ooo_segs == MANY);
	ooo_close(t);
}

/* The same flight in reverse order: each goes first. */
static void test_cost_prepend(void)
{
	struct ooo_test *t = ooo_open();
	uint64_t worst = 0, before;

	CHECK(t);
	if (!t)
		return;
	for (uint32_t i = MANY; i >= 1; i--) {
		before = t->c.tcp->ooo_steps;
		hold(t, i * SEG, (i + 1) * SEG);
		worst = most(worst, steps_since(t, before));
		worst = most(worst, sack_steps(t));
	}
	printf("#   %u in reverse: at most %llu steps each\n", MANY,
	       (unsigned long long)worst);
	CHECK(worst <= 2);
	CHECK(sack_is(t, TCP_WINDOW_MAX,
	              (uint32_t[]){SEG, (MANY + 1) * SEG, 0, 0}));
	ooo_close(t);
}

/* Every other segment was lost, and the guest resends them in order while
 * the first is still missing: each goes next to the one resent before.
 * Resent in any order, placing one and the SACK option that follows look
 * at all those held at most a few times over.
 */
static void test_cost_fill(void)
{
	struct ooo_test *t = ooo_open();
	uint64_t worst = 0, before;

	CHECK(t);
	if (!t)
		return;
	for (uint32_t i = 2; i <= MANY; i += 2)
		hold(t, i * SEG, (i + 1) * SEG);
	before = t->c.tcp->ooo_steps;
	for (uint32_t i = 3; i < MANY; i += 2)
		hold(t, i * SEG, (i + 1) * SEG);
	printf("#   %u holes resent in order: %llu steps\n", MANY / 2,
	       (unsigned long long)steps_since(t, before));
	CHECK(steps_since(t, before) <= 2 * MANY);
	CHECK(sack_is(t, TCP_WINDOW_MAX,
	              (uint32_t[]){2 * SEG, (MANY + 1) * SEG, 0, 0}));
	tcp_ooo_free(&t->c, &t->conn);
	/* Anywhere, in any order. */
	for (uint32_t i = 2; i <= MANY; i += 2)
		hold(t, i * SEG, (i + 1) * SEG);
	for (uint32_t k = 0; k < MANY / 2; k++) {
		uint32_t i = 2 * ((k * 97) % (MANY / 2)) + 1;

		before = t->c.tcp->ooo_steps;
		hold(t, i * SEG, (i + 1) * SEG);
		worst = most(worst, steps_since(t, before));
		worst = most(worst, sack_steps(t));
	}
	printf("#   holes resent in any order: at most %llu steps each\n",
	       (unsigned long long)worst);
	CHECK(worst <= 5 * TCP_OOO_SEGS);
	ooo_close(t);
}

const struct unit_case unit_cases[] = {
        {"SACK: ranges across 2^32 merge, the newest first", test_wrap},
        {"SACK: nothing past the window the ACK offers", test_window},
        {"SACK: nothing the host socket would not take once the hole fills",
         test_socket_cost},
        {"SACK: a range sent again goes first", test_resent_first},
        {"SACK: none unless permitted, none while bytes wait", test_none},
        {"D-SACK: the latest duplicate first, merged with those it touches",
         test_dsack},
        {"held: segments in order after a hole cost steps, not a walk",
         test_cost_append},
        {"held: segments in reverse order cost steps, not a walk",
         test_cost_prepend},
        {"held: a resent segment goes near the last, any at most a walk",
         test_cost_fill},
        {NULL, NULL},
};
