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
 * tcp_ooo_hold() - keep a segment that arrived after a hole
 * @c:		context
 * @conn:	connection
 * @seq:	sequence number of its first byte, after conn->rcv_nxt
 * @data:	payload
 * @len:	payload length
 * @fin:	it carries the guest's FIN
 *
 * Segments stay sorted by @seq. One that a held segment already covers
 * is a retransmission and adds nothing but its place at the head of the
 * next SACK option; partial overlaps are kept, and tcp_ooo_ready() skips
 * what was taken already.
 *
 * Return: true if it is held (now or already), false if it was dropped
 */
bool tcp_ooo_hold(struct ctx *c, struct tcp_conn *conn, uint32_t seq,
                  const uint8_t *data, uint32_t len, bool fin)
{
	struct tcp_ooo_seg **pp = &conn->ooo, *prev = NULL, *n;

	while (*pp && seq_lt((*pp)->seq, seq)) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (prev && !seq_lt(prev->seq + prev->len, seq + len) &&
	    (prev->fin || !fin)) {
		conn->ooo_last = prev->seq;
		return true;
	}
	if (*pp && (*pp)->seq == seq && (*pp)->len >= len &&
	    ((*pp)->fin || !fin)) {
		conn->ooo_last = seq;
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
	n->next = *pp;
	*pp = n;
	conn->ooo_last = seq;
	conn->ooo_segs++;
	conn->ooo_cost += ooo_cost(len);
	c->tcp->ooo_cost += ooo_cost(len);
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
 * @conn:	connection
 * @hp:		the held segment to start from; left at the first one past
 *		the range
 * @limit:	the right edge of the window the ACK offers
 * @r:		filled with the range
 * @last:	set if the range holds the segment that came last
 *
 * Return: true if there is one
 */
static bool next_range(const struct tcp_conn *conn,
                       const struct tcp_ooo_seg **hp, uint32_t limit,
                       struct sack_blk *r, bool *last)
{
	const struct tcp_ooo_seg *h;
	bool have = false;

	*last = false;
	for (h = *hp; h && seq_lt(h->seq, limit); h = h->next) {
		uint32_t left = h->seq,
		         right = h->seq + h->len + (h->fin ? 1 : 0);

		if (!seq_lt(conn->rcv_nxt, right))
			continue;
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
		*last |= h->seq == conn->ooo_last;
	}
	*hp = h;
	return have;
}

/**
 * sack_blocks() - the held ranges a SACK option reports: the one holding
 *		   the segment that came last first, as RFC 2018 section 4
 *		   requires, then the lowest others
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
static size_t sack_blocks(const struct tcp_conn *conn, uint32_t limit,
                          struct sack_blk *b, size_t max)
{
	const struct tcp_ooo_seg *h = conn->ooo;
	struct sack_blk low[TCP_SACK_BLOCKS], r;
	size_t nlow = 0, n = 0;
	bool last, found = false;

	while (next_range(conn, &h, limit, &r, &last)) {
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
 * taken_limit() - how far the host socket will take the held bytes once
 *		   the hole before them fills
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
 * Return: the sequence number past the last held byte the socket will
 *	   take, all counted
 */
static uint32_t taken_limit(const struct tcp_conn *conn, uint32_t wnd)
{
	uint64_t room = (uint64_t)wnd / 3 * 4, cost = 0;
	uint32_t at = conn->rcv_nxt, seg = conn->mss ? conn->mss : 1U;
	const struct tcp_ooo_seg *h;

	for (h = conn->ooo; h; h = h->next)
		if (h->len && h->len < seg)
			seg = h->len;
	for (h = conn->ooo; h; h = h->next) {
		uint32_t left = h->seq, right = h->seq + h->len;

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
size_t tcp_ooo_sack(const struct tcp_conn *conn, uint32_t wnd, uint8_t *opt)
{
	struct sack_blk b[TCP_SACK_BLOCKS];
	uint32_t limit;
	size_t n = 0, len;

	if (!(conn->flags & CONN_SACK_OK))
		return 0;
	if (conn->flags & CONN_DSACK)
		b[n++] = (struct sack_blk){conn->dsack_left, conn->dsack_right};
	if (conn->ooo && !tcp_ooo_waits(conn)) {
		limit = taken_limit(conn, wnd);
		if (seq_lt(conn->rcv_nxt + wnd, limit))
			limit = conn->rcv_nxt + wnd;
		n += sack_blocks(conn, limit, b + n, TCP_SACK_BLOCKS - n);
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
