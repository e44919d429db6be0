// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - the guest's TCP segments that arrive after a hole, held until
 * the hole fills
 *
 * Thrown away, the segments after a hole made each loss cost the whole
 * flight behind it, and worse: the new data the guest sends while it
 * recovers from a timeout (F-RTO, RFC 5682) lands after the hole too, and
 * Linux's Reno keeps its loss state until data above the recovery point
 * is ACKed (RFC 6582), so it waited for a timer that doubled each time.
 * An upload at 1 % loss took a minute for 10 MB. Held here, those
 * segments go to the host socket as soon as the hole fills, as from a
 * kernel receiver's out-of-order queue.
 *
 * A guest that asked for SACK hears which ranges are held (RFC 2018), so
 * it resends only the holes, several in one round trip, where duplicate
 * ACKs alone tell of one hole per round trip and a lost retransmission
 * costs a timeout. What is held is never dropped before the connection
 * ends, and a range is reported only if the host socket will take it,
 * and all before it, once the hole fills, so a range once reported stays
 * true (no reneging).
 *
 * It hears of data it sent twice too (D-SACK, RFC 2883). A Linux sender
 * with SACK probes for a lost tail (TLP) and takes every probe for a
 * loss, and every timeout for a real one, unless a D-SACK says the first
 * copy came: behind a narrow rate it shrank its window for nothing, and
 * the probes took a quarter of a 1 Mbit/s link.
 *
 * Only data within the largest window tapir offers is held, and only up to
 * TCP_OOO_CONN_MAX per connection and TCP_OOO_THREAD_MAX per thread,
 * counted with each segment's overhead; beyond that a segment is dropped
 * as before, and the guest sends it again.
 *
 * What it costs: the list is kept in both directions, with its tail, the
 * segment that came last, and the tail run (the bytes held without a
 * hole up to the highest). A flight held after a hole, in order or in
 * reverse, a tail sent again, and holes resent in order cost a step or
 * two per segment, and one step per SACK option, however many are held.
 * Nothing looks at more than all held segments a few times over: placing
 * one, at most TCP_OOO_SEGS steps; a SACK option with holes between the
 * ranges it reports, at most five times that (tests/unit/test_tcp_ooo.c
 * counts them).
 */

#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>

#include "driver/tcp/tcp_internal.h"

/* What a held segment costs besides its bytes: the allocator's header. */
#define OOO_MALLOC_OVERHEAD 32U

/**
 * ooo_cost() - memory a held segment takes
 * @len:	its payload
 *
 * Return: bytes, as counted against the bounds
 */
static uint32_t ooo_cost(uint32_t len)
{
	return (uint32_t)sizeof(struct tcp_ooo_seg) + len + OOO_MALLOC_OVERHEAD;
}

/**
 * ooo_fits() - may a segment be held, by its place and the bounds
 * @c:		context
 * @conn:	connection
 * @seq:	sequence number of its first byte, after conn->rcv_nxt
 * @len:	payload length
 *
 * Return: true if it lies within the window and its cost fits
 */
static bool ooo_fits(const struct ctx *c, const struct tcp_conn *conn,
                     uint32_t seq, uint32_t len)
{
	uint32_t from = seq - conn->rcv_nxt, cost = ooo_cost(len);

	if (from >= TCP_WINDOW_MAX || len > TCP_WINDOW_MAX - from)
		return false;
	return conn->ooo_segs < TCP_OOO_SEGS &&
	       conn->ooo_cost + cost <= TCP_OOO_CONN_MAX &&
	       c->tcp->ooo_cost + cost <= TCP_OOO_THREAD_MAX;
}

/**
 * walk_back() - towards the head, the first held segment that does not
 *		 start before @seq
 * @c:		context, whose step counter counts the segments passed
 * @h:		a held segment that does not start before @seq
 * @seq:	sequence number
 *
 * Return: that segment
 */
static struct tcp_ooo_seg *walk_back(struct ctx *c, struct tcp_ooo_seg *h,
                                     uint32_t seq)
{
	while (h->prev && !seq_lt(h->prev->seq, seq)) {
		h = h->prev;
		c->tcp->ooo_steps++;
	}
	return h;
}

/**
 * walk_on() - towards the tail, the first held segment that does not
 *	       start before @seq
 * @c:		context, whose step counter counts the segments passed
 * @h:		a held segment that starts before @seq, followed by one
 *		that does not
 * @seq:	sequence number
 *
 * Return: that segment
 */
static struct tcp_ooo_seg *walk_on(struct ctx *c, struct tcp_ooo_seg *h,
                                   uint32_t seq)
{
	while (seq_lt(h->seq, seq)) {
		h = h->next;
		c->tcp->ooo_steps++;
	}
	return h;
}

/**
 * dist() - how far apart two sequence numbers are, either way
 * @a:		one
 * @b:		other
 *
 * Return: bytes
 */
static uint32_t dist(uint32_t a, uint32_t b)
{
	return seq_lt(a, b) ? b - a : a - b;
}

/**
 * ooo_after() - where a segment starting at @seq goes among those held
 * @c:		context
 * @conn:	connection
 * @seq:	its first sequence number
 *
 * The search starts from whichever of the head, the tail and the segment
 * that came last lies nearest to @seq: held segments are mostly of one
 * size, so that is the nearest in steps too. The flight after a hole goes
 * at the tail, a tail sent again (a loss probe) next to it, holes resent
 * in order each next to the one before: a step or two each. Anywhere
 * else, at most a walk over the held segments, of which a connection has
 * at most TCP_OOO_SEGS.
 *
 * Return: the first held segment that does not start before @seq, NULL
 *	   if none: the new one goes last
 */
static struct tcp_ooo_seg *ooo_after(struct ctx *c, const struct tcp_conn *conn,
                                     uint32_t seq)
{
	struct tcp_ooo_seg *head = conn->ooo, *tail = conn->ooo_tail,
	                   *hint = conn->ooo_hint;
	uint32_t from_tail, from_head;

	if (!tail || seq_lt(tail->seq, seq))
		return NULL;
	if (!seq_lt(head->seq, seq))
		return head;
	from_tail = tail->seq - seq;
	from_head = seq - head->seq;
	if (hint && dist(hint->seq, seq) < from_tail &&
	    dist(hint->seq, seq) < from_head)
		return seq_lt(hint->seq, seq) ? walk_on(c, hint, seq)
		                              : walk_back(c, hint, seq);
	return from_tail <= from_head ? walk_back(c, tail, seq)
	                              : walk_on(c, head, seq);
}

/**
 * run_add() - a segment joined those held: follow the tail run and the
 *	       edges of what is held
 * @conn:	connection
 * @n:		the segment, linked
 *
 * The tail run is what a SACK block reports without a look at each of
 * its segments (next_range()). A segment that joins it from below may
 * join the run before it too; which one begins where is then unknown
 * until tcp_ooo_sack() looks (run_find()), unless nothing is before it.
 */
static void run_add(struct tcp_conn *conn, const struct tcp_ooo_seg *n)
{
	uint32_t end = n->seq + n->len, right = end + (n->fin ? 1 : 0);
	uint16_t len = n->len < UINT16_MAX ? (uint16_t)n->len : UINT16_MAX;

	if (conn->ooo_segs == 1) {
		conn->ooo_run = n->seq;
		conn->ooo_run_ok = true;
		conn->ooo_end = end;
		conn->ooo_right = right;
		conn->ooo_minlen = len;
		return;
	}
	if (seq_lt(conn->ooo_right, n->seq)) {
		conn->ooo_run = n->seq;
		conn->ooo_run_ok = true;
	} else if (conn->ooo_run_ok && seq_lt(n->seq, conn->ooo_run) &&
	           !seq_lt(right, conn->ooo_run)) {
		conn->ooo_run = n->seq;
		conn->ooo_run_ok = !n->prev;
	}
	if (seq_lt(conn->ooo_right, right))
		conn->ooo_right = right;
	if (seq_lt(conn->ooo_end, end))
		conn->ooo_end = end;
	if (len && (!conn->ooo_minlen || len < conn->ooo_minlen))
		conn->ooo_minlen = len;
}

/**
 * tcp_ooo_hold() - keep a segment that arrived after a hole
 * @c:		context
 * @conn:	connection
 * @seq:	sequence number of its first byte, after conn->rcv_nxt
 * @data:	payload
 * @len:	payload length
 * @fin:	it carries the guest's FIN
 *
 * Segments stay sorted by @seq (ooo_after() finds the place). One that a
 * held segment already covers is a retransmission and adds nothing but
 * its place at the head of the next SACK option; partial overlaps are
 * kept, and tcp_ooo_ready() skips what was taken already.
 *
 * Return: true if it is held (now or already), false if it was dropped
 */
bool tcp_ooo_hold(struct ctx *c, struct tcp_conn *conn, uint32_t seq,
                  const uint8_t *data, uint32_t len, bool fin)
{
	struct tcp_ooo_seg *next = ooo_after(c, conn, seq), *prev, *n;

	prev = next ? next->prev : conn->ooo_tail;
	if (prev && !seq_lt(prev->seq + prev->len, seq + len) &&
	    (prev->fin || !fin)) {
		conn->ooo_last = prev->seq;
		conn->ooo_hint = prev;
		return true;
	}
	if (next && next->seq == seq && next->len >= len &&
	    (next->fin || !fin)) {
		conn->ooo_last = seq;
		conn->ooo_hint = next;
		return true;
	}
	if (!ooo_fits(c, conn, seq, len))
		return false;
	n = malloc(sizeof(*n) + len);
	if (!n)
		return false;
	n->seq = seq;
	n->len = len;
	n->fin = fin;
	memcpy(n->data, data, len);
	n->prev = prev;
	n->next = next;
	if (prev)
		prev->next = n;
	else
		conn->ooo = n;
	if (next)
		next->prev = n;
	else
		conn->ooo_tail = n;
	conn->ooo_last = seq;
	conn->ooo_hint = n;
	conn->ooo_segs++;
	conn->ooo_cost += ooo_cost(len);
	c->tcp->ooo_cost += ooo_cost(len);
	run_add(conn, n);
	return true;
}

/**
 * ooo_pop() - free the first held segment
 * @c:		context
 * @conn:	connection with at least one held
 */
static void ooo_pop(struct ctx *c, struct tcp_conn *conn)
{
	struct tcp_ooo_seg *h = conn->ooo;

	conn->ooo = h->next;
	if (conn->ooo)
		conn->ooo->prev = NULL;
	else
		conn->ooo_tail = NULL;
	if (conn->ooo_hint == h)
		conn->ooo_hint = NULL;
	conn->ooo_segs--;
	conn->ooo_cost -= ooo_cost(h->len);
	c->tcp->ooo_cost -= ooo_cost(h->len);
	free(h);
}

/**
 * tcp_ooo_ready() - the held segment that now continues the stream
 * @c:		context
 * @conn:	connection
 *
 * Segments wholly before conn->rcv_nxt, taken meanwhile from a
 * retransmission, are freed on the way.
 *
 * Return: the first held segment if it starts at or before conn->rcv_nxt
 *	   and has something left (bytes, or its FIN), else NULL
 */
struct tcp_ooo_seg *tcp_ooo_ready(struct ctx *c, struct tcp_conn *conn)
{
	struct tcp_ooo_seg *h;

	while ((h = conn->ooo) && !seq_lt(conn->rcv_nxt, h->seq)) {
		uint32_t end = h->seq + h->len;

		if (seq_lt(conn->rcv_nxt, end) ||
		    (end == conn->rcv_nxt && h->fin))
			return h;
		ooo_pop(c, conn);
	}
	return NULL;
}

/**
 * tcp_ooo_free() - drop every held segment: the connection closes, or the
 *		    guest's FIN came, after which nothing is valid
 * @c:		context
 * @conn:	connection
 */
void tcp_ooo_free(struct ctx *c, struct tcp_conn *conn)
{
	while (conn->ooo)
		ooo_pop(c, conn);
}

/**
 * tcp_ooo_waits() - do the bytes at rcv_nxt wait, held, for the host
 *		     socket's room (it refused them), rather than for the
 *		     guest to fill a hole
 * @conn:	connection
 *
 * Return: true if the first held segment covers rcv_nxt
 */
bool tcp_ooo_waits(const struct tcp_conn *conn)
{
	return conn->ooo && !seq_lt(conn->rcv_nxt, conn->ooo->seq);
}

/**
 * struct sack_blk - one SACK block: a range of held bytes
 * @left:	its first sequence number
 * @right:	the one after its last
 */
struct sack_blk {
	uint32_t left;
	uint32_t right;
};

/**
 * next_range() - the next range of held bytes, segments that touch or
 *		  overlap merged, within [rcv_nxt, @limit)
 * @c:		context, whose step counter counts the segments looked at
 * @conn:	connection
 * @hp:		the held segment to start from; left at the first one past
 *		the range
 * @limit:	the right edge of the window the ACK offers
 * @r:		filled with the range
 * @last:	set if the range holds the segment that came last
 *
 * From the tail run on (run_add()), every byte up to ooo_right is held:
 * its segments are not looked at one by one. So the common case, a
 * flight held after one hole, costs one step however long it is.
 *
 * Return: true if there is one
 */
static bool next_range(struct ctx *c, const struct tcp_conn *conn,
                       const struct tcp_ooo_seg **hp, uint32_t limit,
                       struct sack_blk *r, bool *last)
{
	const struct tcp_ooo_seg *h;
	bool have = false;

	*last = false;
	for (h = *hp; h && seq_lt(h->seq, limit); h = h->next) {
		bool run = conn->ooo_run_ok && !seq_lt(h->seq, conn->ooo_run);
		uint32_t left = h->seq,
		         right = run ? conn->ooo_right
		                     : h->seq + h->len + (h->fin ? 1 : 0);

		c->tcp->ooo_steps++;
		if (!seq_lt(conn->rcv_nxt, right)) {
			if (!run)
				continue;
			h = NULL;
			break;
		}
		if (seq_lt(left, conn->rcv_nxt))
			left = conn->rcv_nxt;
		if (seq_lt(limit, right))
			right = limit;
		if (have && seq_lt(r->right, left))
			break;
		if (!have)
			*r = (struct sack_blk){left, right};
		else if (seq_lt(r->right, right))
			r->right = right;
		have = true;
		if (run) {
			*last |= !seq_lt(conn->ooo_last, h->seq) &&
			         seq_lt(conn->ooo_last, limit);
			h = NULL;
			break;
		}
		*last |= h->seq == conn->ooo_last;
	}
	*hp = h;
	return have;
}

/**
 * sack_blocks() - the held ranges a SACK option reports: the one holding
 *		   the segment that came last first, as RFC 2018 section 4
 *		   requires, then the lowest others
 * @c:		context
 * @conn:	connection, with segments held after a hole
 * @limit:	the right edge of the window this ACK offers: beyond it,
 *		nothing is reported
 * @b:		@max entries to fill
 * @max:	at most TCP_SACK_BLOCKS
 *
 * RFC 2018 would rather have the other blocks repeat the ones reported
 * last, against lost ACKs. The lowest are the ones nearest the holes,
 * which the guest resends first, and its scoreboard keeps what earlier
 * ACKs said.
 *
 * Only what the window offers is reported: the host socket should take
 * it once the hole fills. An ACK that then stopped inside a reported
 * range would read as reneging, and a Linux guest would drop its
 * scoreboard and resend everything from a window of one.
 *
 * Return: how many were filled
 */
static size_t sack_blocks(struct ctx *c, const struct tcp_conn *conn,
                          uint32_t limit, struct sack_blk *b, size_t max)
{
	const struct tcp_ooo_seg *h = conn->ooo;
	struct sack_blk low[TCP_SACK_BLOCKS], r;
	size_t nlow = 0, n = 0;
	bool last, found = false;

	while (next_range(c, conn, &h, limit, &r, &last)) {
		if (last && !found) {
			b[n++] = r;
			found = true;
		} else if (nlow < TCP_SACK_BLOCKS) {
			low[nlow++] = r;
		}
		if (found && nlow + 1 >= max)
			break;
	}
	for (size_t i = 0; i < nlow && n < max; i++)
		b[n++] = low[i];
	return n;
}

/**
 * tcp_ooo_dsack() - the guest sent bytes tapir has taken already: the
 *		     next pure ACK reports them (D-SACK, RFC 2883)
 * @conn:	connection
 * @seq:	first of them, before conn->rcv_nxt
 * @len:	how many, all before conn->rcv_nxt
 *
 * A duplicate that touches the one still to report extends it, as
 * several retransmissions in one batch do: without timestamps, a Linux
 * guest undoes a window cut only once every segment it resent is
 * reported. A pure ACK is owed at the end of the batch, ahead of any
 * data (flush_one() in tcp.c), since data segments carry no options.
 */
void tcp_ooo_dsack(struct tcp_conn *conn, uint32_t seq, uint32_t len)
{
	uint32_t end = seq + len;

	if (!(conn->flags & CONN_SACK_OK) || !len)
		return;
	if ((conn->flags & CONN_DSACK) && !seq_lt(conn->dsack_right, seq) &&
	    !seq_lt(end, conn->dsack_left)) {
		if (seq_lt(seq, conn->dsack_left))
			conn->dsack_left = seq;
		if (seq_lt(conn->dsack_right, end))
			conn->dsack_right = end;
	} else {
		conn->dsack_left = seq;
		conn->dsack_right = end;
	}
	conn->flags |= CONN_DSACK;
	if (!conn->dupacks_owed)
		conn->dupacks_owed = 1;
}

/**
 * all_taken() - whether the host socket takes every held byte once the
 *		 hole before them fills, by a bound on what taken_limit()'s
 *		 walk would count
 * @conn:	connection, with segments held after a hole
 * @room:	what the walk may count
 *
 * From rcv_nxt to ooo_end, held bytes and holes together are the span;
 * each held segment costs at most one TCP_SEND_OVERHEAD, and the holes
 * at most one per hole (one per held segment at most) and one per
 * ooo_minlen bytes of span. ooo_minlen is never above the smallest
 * segment held, so the bound never falls below the walk's count.
 *
 * Return: true if all of it fits, surely; false if the walk must tell
 */
static bool all_taken(const struct tcp_conn *conn, uint64_t room)
{
	uint32_t seg = conn->mss ? conn->mss : 1U, span;

	if (conn->ooo_minlen && conn->ooo_minlen < seg)
		seg = conn->ooo_minlen;
	if (!seq_lt(conn->rcv_nxt, conn->ooo_end))
		return true;
	span = conn->ooo_end - conn->rcv_nxt;
	return (uint64_t)span + ((uint64_t)2 * conn->ooo_segs +
	                         ((uint64_t)span + seg - 1) / seg) *
	                                TCP_SEND_OVERHEAD <=
	       room;
}

/**
 * run_find() - where the tail run begins, by a look at every held segment
 * @c:		context, whose step counter counts them
 * @conn:	connection, with segments held after a hole
 *
 * Once after a hole next to the tail run filled (run_add()), rather than
 * a look at them all for every ACK.
 */
static void run_find(struct ctx *c, struct tcp_conn *conn)
{
	uint32_t right = conn->ooo->seq;

	for (const struct tcp_ooo_seg *h = conn->ooo; h; h = h->next) {
		uint32_t r = h->seq + h->len + (h->fin ? 1 : 0);

		c->tcp->ooo_steps++;
		if (h == conn->ooo || seq_lt(right, h->seq))
			conn->ooo_run = h->seq;
		if (seq_lt(right, r))
			right = r;
	}
	conn->ooo_run_ok = true;
}

/**
 * taken_limit() - how far the host socket will take the held bytes once
 *		   the hole before them fills
 * @c:		context, whose step counter counts the segments looked at
 * @conn:	connection, with segments held after a hole
 * @wnd:	the window an ACK offers: three quarters of the socket's free
 *		space when it was measured (tcp_rcv_window()), and it only
 *		grows while the hole stays
 *
 * Each held segment goes to the socket in a send() of its own, and so
 * does each segment that fills the hole; each costs the socket its bytes
 * and an skb (TCP_SEND_OVERHEAD). Small segments cost more than the
 * window's margin of a third allows: an 8 KiB send buffer offered 6 KiB
 * of window, took the hole and part of the 200-byte segments after it,
 * and the ACK stopped inside a range reported held. The hole is counted
 * in segments of the size the guest sends: the smallest it holds, or its
 * MSS.
 *
 * Most often all of it fits, which a bound on the cost tells without a
 * look at each segment (all_taken()).
 *
 * Return: the sequence number past the last held byte the socket will
 *	   take, all counted
 */
static uint32_t taken_limit(struct ctx *c, const struct tcp_conn *conn,
                            uint32_t wnd)
{
	uint64_t room = (uint64_t)wnd / 3 * 4, cost = 0;
	uint32_t at = conn->rcv_nxt, seg = conn->mss ? conn->mss : 1U;
	const struct tcp_ooo_seg *h;

	if (all_taken(conn, room))
		return seq_lt(at, conn->ooo_end) ? conn->ooo_end : at;
	for (h = conn->ooo; h; h = h->next) {
		c->tcp->ooo_steps++;
		if (h->len && h->len < seg)
			seg = h->len;
	}
	for (h = conn->ooo; h; h = h->next) {
		uint32_t left = h->seq, right = h->seq + h->len;

		c->tcp->ooo_steps++;

		if (!seq_lt(at, right))
			continue;
		if (seq_lt(left, at))
			left = at;
		if (seq_lt(at, left))
			cost += (uint64_t)(left - at) +
			        (uint64_t)((left - at + seg - 1) / seg) *
			                TCP_SEND_OVERHEAD;
		cost += (uint64_t)(right - left) + TCP_SEND_OVERHEAD;
		if (cost > room)
			return left;
		at = right;
	}
	return at;
}

/**
 * tcp_ooo_sack() - the SACK option for an ACK to the guest
 * @c:		context
 * @conn:	connection
 * @wnd:	the window that ACK offers, in bytes
 * @opt:	TCP_SACK_OPTLEN_MAX bytes to fill
 *
 * None unless the guest permitted SACK. First the latest duplicate, if
 * one came since the last ACK: below the ACK, it reads as a D-SACK.
 * Then the ranges held after a hole, as far as the window offers and
 * the host socket will take them once the hole fills (taken_limit()),
 * but not while the bytes at rcv_nxt wait for the host socket's room,
 * which the guest would take, below ranges reported held, for a loss to
 * resend.
 *
 * Return: the option's length, a multiple of 4, 0 for none
 */
size_t tcp_ooo_sack(struct ctx *c, struct tcp_conn *conn, uint32_t wnd,
                    uint8_t *opt)
{
	struct sack_blk b[TCP_SACK_BLOCKS];
	uint32_t limit;
	size_t n = 0, len;

	if (!(conn->flags & CONN_SACK_OK))
		return 0;
	if (conn->flags & CONN_DSACK)
		b[n++] = (struct sack_blk){conn->dsack_left, conn->dsack_right};
	if (conn->ooo && !tcp_ooo_waits(conn)) {
		if (!conn->ooo_run_ok)
			run_find(c, conn);
		limit = taken_limit(c, conn, wnd);
		if (seq_lt(conn->rcv_nxt + wnd, limit))
			limit = conn->rcv_nxt + wnd;
		n += sack_blocks(c, conn, limit, b + n, TCP_SACK_BLOCKS - n);
	}
	if (!n)
		return 0;
	len = 2 + 8 * n;
	opt[0] = TCPOPT_NOP;
	opt[1] = TCPOPT_NOP;
	opt[2] = TCPOPT_SACK;
	opt[3] = (uint8_t)len;
	for (size_t i = 0; i < n; i++) {
		uint32_t edges[2] = {htonl(b[i].left), htonl(b[i].right)};

		memcpy(opt + 4 + 8 * i, edges, sizeof(edges));
	}
	return 2 + len;
}
