// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - the guest's TCP segments that arrive after a hole, held until
 * the hole fills
 *
 * tapir offers the guest no SACK, so its sender (Reno) learns of a lost
 * segment from duplicate ACKs and its timer alone. Thrown away, the
 * segments after a hole made each loss cost the whole flight behind it,
 * and worse: the new data the guest sends while it recovers from a
 * timeout (F-RTO, RFC 5682) lands after the hole too, and Linux's Reno
 * keeps its loss state until data above the recovery point is ACKed
 * (RFC 6582), so it waited for a timer that doubled each time. An upload
 * at 1 % loss took a minute for 10 MB. Held here, those segments go to
 * the host socket as soon as the hole fills, as from a kernel receiver's
 * out-of-order queue.
 *
 * Only data within the largest window tapir offers is held, and only up to
 * TCP_OOO_CONN_MAX per connection and TCP_OOO_THREAD_MAX per thread,
 * counted with each segment's overhead; beyond that a segment is dropped
 * as before, and the guest sends it again.
 */

#include <stdlib.h>
#include <string.h>

#include "tcp_internal.h"

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
 * is a retransmission and adds nothing; partial overlaps are kept, and
 * tcp_ooo_ready() skips what was taken already.
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
	    (prev->fin || !fin))
		return true;
	if (*pp && (*pp)->seq == seq && (*pp)->len >= len &&
	    ((*pp)->fin || !fin))
		return true;
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
