// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - what a TCP connection does a few milliseconds later, if nothing
 * did it first: a delayed ACK, a look at a drained host socket, a discard
 * of ACKed bytes
 *
 * All three serve request/response traffic, where the next segment comes
 * within microseconds and does the job for free:
 * - The ACK for the guest's answer rides on the host's next request
 *   instead of a frame of its own, as a TCP receiver's delayed ACK does
 *   (RFC 9293 3.8.6.3). Only the ACK for in-order data the host socket
 *   took whole may wait, never past a second full segment, so a bulk
 *   sender is ACKed as before. A connection whose ACK had to wait for the
 *   timer (a host that does not answer, a guest whose Nagle algorithm
 *   holds its next bytes for that ACK) gets its next TCP_QUICKACKS ACKs
 *   at once.
 * - A peek that drained the host socket needs no poll() to learn that the
 *   host did not close or send urgent data: TCP_INQ said so (tcp_data.c).
 *   Only a reset queued behind the data could hide; the guest's next send
 *   to that socket would fail and show it, and if none comes in time, the
 *   timer polls.
 * - Bytes the guest ACKed leave the socket's queue in batches
 *   (tcp_data.c); once the guest has ACKed everything, the ones held go
 *   when the timer fires, if no batch filled meanwhile.
 * One list and one timer per thread hold all three, oldest first; the
 * timer runs only while the list has entries, for the oldest one's
 * deadline.
 */

#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/core/log.h"
#include "driver/tcp/tcp.h"
#include "driver/tcp/tcp_internal.h"
#include "driver/tcp/tcp_seg.h"

/**
 * later_oldest() - the connection that joined the later list first
 * @ts:		the thread's TCP state
 *
 * Return: it, or NULL if the list is empty
 */
static struct tcp_conn *later_oldest(const struct tcp_state *ts)
{
	struct list_node *n = ts->later.head;

	return n ? (struct tcp_conn *)((char *)n -
	                               offsetof(struct tcp_conn, later))
	         : NULL;
}

/**
 * later_unlink() - take a connection off its thread's list; the timer
 *		    stops with the list's last entry
 * @ts:		the thread's TCP state
 * @conn:	connection on the list
 */
static void later_unlink(struct tcp_state *ts, struct tcp_conn *conn)
{
	list_unlink(&ts->later, &conn->later);
	conn->flags &= ~CONN_LATER;
	if (!ts->later.head)
		evtimer_del(ts->later_timer);
}

/**
 * later_arm() - run the timer for @ns from now
 * @ts:		the thread's TCP state
 * @ns:		delay
 *
 * Return: 0, or -1 if libevent failed (said, rate-limited)
 */
static int later_arm(struct tcp_state *ts, uint64_t ns)
{
	static struct log_limit limit;
	struct timeval tv = {(time_t)(ns / 1000000000U),
	                     (suseconds_t)(ns % 1000000000U / 1000U)};

	if (!evtimer_add(ts->later_timer, &tv))
		return 0;
	err_limited(&limit, 0,
	            "tcp: delayed-ACK timer: libevent failed; ACKs go at once");
	return -1;
}

/**
 * tcp_later_add() - a connection waits for @reason, unless it is done
 *		     first: to the end of its thread's list, which the timer
 *		     serves oldest first
 * @c:		context
 * @conn:	connection
 * @reason:	CONN_DELACK: an ACK for the guest's data (tcp_ack_owed());
 *		CONN_HOST_CHECK: a peek drained the host socket unpolled, and
 *		a send to it that succeeds shows it was not reset;
 *		CONN_DISCARD: the guest ACKed everything, and ACKed bytes
 *		wait for a discard batch. Held bytes count against the
 *		socket's receive buffer: a host blocked by the window they
 *		close would send nothing more, and no batch would fill.
 *
 * A reason already pending keeps its deadline: a stream of small
 * segments never holds its ACK past TCP_LATER_MS. A new one restarts the
 * wait for the connection's others, so that an ACK that just became due
 * never goes early with an older check or discard; those only wait
 * longer while the connection is busy. The timer is armed before
 * anything moves: a failure leaves the connection as it was.
 *
 * Return: 0, or -1 if the timer can't be armed (the caller acts now)
 */
int tcp_later_add(struct ctx *c, struct tcp_conn *conn, uint32_t reason)
{
	struct tcp_state *ts = c->tcp;

	if (conn->flags & reason)
		return 0;
	/* A pending timer fires no later than the new deadline, and
	 * later_fired() sets it for the oldest entry.
	 */
	if (!evtimer_pending(ts->later_timer, NULL) &&
	    later_arm(ts, TCP_LATER_MS * 1000000ULL))
		return -1;
	if (conn->flags & CONN_LATER)
		list_unlink(&ts->later, &conn->later);
	conn->later_at = clock_ns();
	list_append(&ts->later, &conn->later);
	conn->flags |= CONN_LATER | reason;
	return 0;
}

/* Reasons to be on the list. */
#define LATER_REASONS (CONN_DELACK | CONN_HOST_CHECK | CONN_DISCARD)

/**
 * tcp_later_done() - one reason to be on the list is gone: done another
 *		      way (a segment carried the ACK, a send to the host
 *		      succeeded, the ACKed bytes left the queue)
 * @conn:	connection
 * @flag:	one of LATER_REASONS
 */
void tcp_later_done(struct tcp_conn *conn, uint32_t flag)
{
	conn->flags &= ~flag;
	if ((conn->flags & CONN_LATER) && !(conn->flags & LATER_REASONS))
		later_unlink(conn->flow.c->tcp, conn);
}

/**
 * may_wait() - whether the ACK owed for in-order data may wait
 * @conn:	connection
 *
 * Return: true if it may
 */
static bool may_wait(struct tcp_conn *conn)
{
	/* Only an exchange waits: host data went to the guest since our
	 * last ACK that went alone. A guest that sends and sends (an upload,
	 * whose window may end on a small segment) is ACKed at once.
	 */
	if (!(conn->flags & CONN_TURN))
		return false;
	if (conn->quickacks) {
		conn->quickacks--;
		return false;
	}
	/* A window that closed, or data the socket refused, is news the
	 * guest needs now; so is a second full segment (bulk).
	 */
	if (conn->flags & (CONN_SOCK_FULL | CONN_DATA_DROPPED | CONN_GUEST_FIN))
		return false;
	return (conn->flags & CONN_ESTABLISHED) &&
	       conn->rcv_nxt - conn->rcv_acked < 2U * conn->mss;
}

/**
 * tcp_ack_owed() - the end of a tap batch found an ACK owed: send it, or
 *		    let it wait for the next segment to the guest
 * @c:		context
 * @conn:	connection with CONN_ACK_PENDING
 */
void tcp_ack_owed(struct ctx *c, struct tcp_conn *conn)
{
	bool now = (conn->flags & CONN_ACK_NOW) || !may_wait(conn);

	conn->flags &= ~(CONN_ACK_PENDING | CONN_ACK_NOW);
	if (!now && !tcp_later_add(c, conn, CONN_DELACK))
		return;
	/* Sending it clears CONN_DELACK (tcp_ack_sent()). */
	conn->flags &= ~CONN_TURN;
	tcp_send_flags(c, conn, TH_ACK, conn->snd_nxt, tcp_rcv_window(conn));
}

/**
 * tcp_ack_sent() - a segment to the guest carried our ACK: nothing is owed
 * @conn:	connection (may be a stand-in without a table entry)
 */
void tcp_ack_sent(struct tcp_conn *conn)
{
	conn->rcv_acked = conn->rcv_nxt;
	conn->flags &= ~(CONN_ACK_PENDING | CONN_ACK_NOW);
	tcp_later_done(conn, CONN_DELACK);
}

/**
 * tcp_later_forget() - a connection goes away: off the list
 * @c:		context
 * @conn:	connection
 */
void tcp_later_forget(struct ctx *c, struct tcp_conn *conn)
{
	if (conn->flags & CONN_LATER)
		later_unlink(c->tcp, conn);
	conn->flags &= ~LATER_REASONS;
}

/**
 * later_one() - what one connection waited for
 * @c:		context
 * @conn:	connection, just taken off the list
 * @flags:	its LATER_REASONS, now cleared
 */
static void later_one(struct ctx *c, struct tcp_conn *conn, uint32_t flags)
{
	if ((flags & CONN_DISCARD) && tcp_discard_now(c, conn) == TCP_RELEASED)
		return;
	if (flags & CONN_DELACK) {
		conn->quickacks = TCP_QUICKACKS;
		conn->flags &= ~CONN_TURN;
		/* A full tap refused it: again after the delay. Without a
		 * timer (later_arm() said why), the guest's retransmission
		 * asks again.
		 */
		if (tcp_send_flags(c, conn, TH_ACK, conn->snd_nxt,
		                   tcp_rcv_window(conn)) &&
		    tcp_later_add(c, conn, CONN_DELACK))
			debug_msg("tcp: ACK to port %u dropped, not retried",
			          conn->flow.key.gport);
	}
	/* Last: it may release the connection. */
	if ((flags & CONN_HOST_CHECK) &&
	    tcp_host_check(c, conn) == TCP_RELEASED)
		return;
}

/**
 * later_fired() - the oldest entry waited TCP_LATER_MS: do what it and
 *		   every other entry that old wait for, then wait for the
 *		   next
 * @fd:		unused
 * @what:	unused
 * @arg:	context
 */
static void later_fired(evutil_socket_t fd, short what, void *arg)
{
	const uint64_t delay = TCP_LATER_MS * 1000000ULL;
	struct ctx *c = arg;
	uint64_t now = clock_ns();
	struct tcp_conn *conn;
	uint32_t flags;

	(void)fd;
	(void)what;
	/* Signed: an entry that joined during this loop is not due. */
	while ((conn = later_oldest(c->tcp)) &&
	       (int64_t)(now - conn->later_at) >= (int64_t)delay) {
		later_unlink(c->tcp, conn);
		flags = conn->flags & LATER_REASONS;
		conn->flags &= ~flags;
		later_one(flow_enter(&conn->flow), conn, flags);
	}
	conn = later_oldest(c->tcp);
	/* Should libevent fail (later_arm() says so), the next
	 * tcp_later_add() finds no timer pending and arms it; the entries
	 * meanwhile wait for a segment or a send.
	 */
	if (conn && later_arm(c->tcp, conn->later_at + delay - now))
		debug_msg("tcp: the later list waits for its next entry");
	tcp_flush(c);
}

/**
 * tcp_later_init() - create the thread's timer
 * @c:		context with its TCP state
 *
 * Return: 0, or -1 after printing one error line
 */
int tcp_later_init(struct ctx *c)
{
	c->tcp->later_timer = evtimer_new(c->base, later_fired, c);
	if (!c->tcp->later_timer) {
		err_msg("tcp: delayed-ACK timer: libevent failed");
		return -1;
	}
	return 0;
}

/**
 * tcp_later_cleanup() - free the timer
 * @c:		context
 */
void tcp_later_cleanup(struct ctx *c)
{
	if (c->tcp->later_timer)
		event_free(c->tcp->later_timer);
	c->tcp->later_timer = NULL;
}
