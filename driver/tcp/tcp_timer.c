// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - TCP timers: retransmission, handshake, window probe and idle */

#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/core/log.h"
#include "driver/tcp/tcp_internal.h"
#include "driver/tcp/tcp_seg.h"

/* A connection's timer found less than this before its deadline is due:
 * libevent reads a coarse clock, up to a tick (10 ms at HZ 100) behind
 * clock_ns(), so it fires up to that early; a second wakeup for the rest
 * would buy no precision the timer had before.
 */
#define TCP_TIMER_SLACK_NS 10000000ULL

/**
 * timer_add() - have libevent fire the connection's timer at @at
 * @conn:	connection
 * @at:		when, clock_ns()
 * @now:	clock_ns() now
 *
 * Should libevent fail, the connection's retransmissions and idle expiry
 * stop until the next tcp_arm_timer() tries again: that is said,
 * rate-limited.
 */
static void timer_add(struct tcp_conn *conn, uint64_t at, uint64_t now)
{
	static struct log_limit limit;
	uint64_t ns = at > now ? at - now : 0;
	struct timeval tv = {(time_t)(ns / 1000000000ULL),
	                     (suseconds_t)(ns % 1000000000ULL / 1000U)};

	if (conn->flow.c && conn->flow.c->tcp)
		conn->flow.c->tcp->timer_arms++;
	if (evtimer_add(conn->timer, &tv)) {
		conn->timer_fire = 0;
		err_limited(&limit, 0,
		            "tcp: timer of the connection to port %u: libevent "
		            "failed",
		            conn->flow.key.fport);
		return;
	}
	conn->timer_fire = at;
}

/**
 * tcp_arm_timer() - (re)start the connection's timer
 * @conn:	connection
 * @ms:		delay in milliseconds
 *
 * The timer now means what the caller arms it for: a persist timer is
 * marked (CONN_PERSIST) after this.
 *
 * Only a deadline that moves earlier goes to libevent. Every ACK of new
 * data restarts the retransmission timer, and every send may: re-added
 * each time, a timer costs libevent a step through its heap of all the
 * connections' timers, per segment. One that fires before its deadline
 * (tcp_timer_cb()) waits for the rest: one wakeup per RTO per busy
 * connection instead.
 */
void tcp_arm_timer(struct tcp_conn *conn, unsigned int ms)
{
	uint64_t now = clock_ns();

	conn->flags &= ~CONN_PERSIST;
	conn->timer_at = now + (uint64_t)ms * 1000000ULL;
	if (conn->timer_fire && conn->timer_fire <= conn->timer_at)
		return;
	timer_add(conn, conn->timer_at, now);
}

/**
 * cond_extra_ms() - what network conditions add to the connection's
 *		     round trip
 * @conn:	connection
 *
 * Return: milliseconds, 0 if no rule applies to it
 */
static uint64_t cond_extra_ms(struct tcp_conn *conn)
{
	struct cond_tcp t;

	return tcp_cond(conn, &t) ? t.rto_extra_ms : 0;
}

/**
 * tcp_cut() - the directions a partition cuts for this connection
 * @conn:	connection
 *
 * Return: COND_TO_GUEST and COND_TO_HOST bits, 0 if none
 */
unsigned int tcp_cut(struct tcp_conn *conn)
{
	struct cond_tcp t;

	return tcp_cond(conn, &t) ? t.cut : 0;
}

/**
 * backoff_ms() - a timeout doubled per attempt, at most TCP_TIMER_MAX_MS
 * @base:	the first timeout
 * @retries:	attempts so far
 *
 * Return: milliseconds
 */
static unsigned int backoff_ms(uint64_t base, unsigned int retries)
{
	uint64_t ms = base << (retries < TCP_RTO_MAX_SHIFT ? retries
	                                                   : TCP_RTO_MAX_SHIFT);

	return ms > TCP_TIMER_MAX_MS ? TCP_TIMER_MAX_MS : (unsigned int)ms;
}

/**
 * tcp_rto_ms() - retransmission timeout after @retries attempts
 * @conn:	connection
 * @retries:	attempts so far
 *
 * Network conditions that apply to the connection add their delays and
 * queue to the round trip (cond_tcp.c): the timer waits that much longer.
 *
 * Return: milliseconds, doubling per attempt
 */
unsigned int tcp_rto_ms(struct tcp_conn *conn, unsigned int retries)
{
	return backoff_ms(TCP_RTO_MS + cond_extra_ms(conn), retries);
}

/**
 * tcp_syn_rto_ms() - when to send our SYN or SYN-ACK again
 * @conn:	connection in the handshake, @conn->retries attempts so far
 *
 * Return: milliseconds: a second, plus what conditions add, doubling
 */
unsigned int tcp_syn_rto_ms(struct tcp_conn *conn)
{
	return backoff_ms(TCP_SYN_RTO_MS + cond_extra_ms(conn), conn->retries);
}

/**
 * tcp_retransmit_handshake() - resend our SYN or SYN-ACK, or give up
 * @c:		context
 * @conn:	connection in CONN_SYN_SENT or CONN_SYN_RCVD
 *
 * Return: 0, or TCP_RELEASED after giving up
 */
int tcp_retransmit_handshake(struct ctx *c, struct tcp_conn *conn)
{
	if (++conn->retries > TCP_SYN_RETRIES) {
		tcp_abort(c, conn, false);
		return TCP_RELEASED;
	}
	if (conn->flags & CONN_SYN_SENT)
		tcp_send_flags(c, conn, TH_SYN, conn->snd_una, TCP_WINDOW_MAX);
	else
		tcp_send_flags(c, conn, TH_SYN | TH_ACK, conn->snd_una,
		               TCP_WINDOW_MAX);
	tcp_arm_timer(conn, tcp_syn_rto_ms(conn));
	return 0;
}

/**
 * timer_fired() - what the connection's timer means now
 * @c:		context
 * @conn:	connection
 *
 * Return: 0, or TCP_RELEASED
 */
static int timer_fired(struct ctx *c, struct tcp_conn *conn)
{
	if (conn->flags & (CONN_SYN_SENT | CONN_SYN_RCVD))
		return tcp_retransmit_handshake(c, conn);
	if (conn->snd_nxt != conn->snd_una) {
		/* A partition holds the connection, however long: Linux would
		 * wait 15 minutes, and a guest would never hear of our reset.
		 * Once healed, the next retransmission gets its chance.
		 */
		if (++conn->retries > TCP_MAX_RETRIES - 1 && tcp_cut(conn))
			conn->retries = TCP_MAX_RETRIES - 1;
		if (conn->retries > TCP_MAX_RETRIES) {
			tcp_abort(c, conn, true);
			return TCP_RELEASED;
		}
		tcp_arm_timer(conn, tcp_rto_ms(conn, conn->retries));
		return tcp_rewind_to_una(c, conn);
	}
	if (!conn->snd_wnd && (conn->flags & CONN_READ_PENDING)) {
		/* Zero-window probe: an old sequence number draws an ACK.
		 * Probes are no failures: they back off on their own count.
		 */
		tcp_send_flags(c, conn, TH_ACK, conn->snd_nxt - 1,
		               tcp_rcv_window(conn));
		if (conn->probes < UINT8_MAX)
			conn->probes++;
		tcp_arm_timer(conn, tcp_rto_ms(conn, conn->probes));
		return 0;
	}
	if (conn->flags & CONN_PERSIST) {
		/* A window below silly held new data back, with nothing in
		 * flight to bring an ACK: the override timeout sends what fits.
		 */
		tcp_arm_timer(conn, TCP_IDLE_S * 1000U);
		return tcp_send_persist(c, conn);
	}
	if (clock_s() - conn->last_active >= TCP_IDLE_S) {
		tcp_abort(c, conn, true);
		return TCP_RELEASED;
	}
	if ((conn->flags & CONN_ESTABLISHED) &&
	    ((conn->flags & CONN_READ_PENDING) ||
	     ((conn->flags & CONN_HOST_EOF) &&
	      !(conn->flags & CONN_FIN_SENT)))) {
		/* The tap refused data or our FIN with nothing in flight,
		 * so no retransmission would ever send them: try again.
		 */
		tcp_arm_timer(conn, TCP_IDLE_S * 1000U);
		return tcp_host_to_guest(c, conn);
	}
	tcp_arm_timer(conn, TCP_IDLE_S * 1000U);
	return 0;
}

/**
 * tcp_timer_expire() - the connection's timer is due: do what it means
 * @conn:	connection
 *
 * Tests call it to run a timer without waiting for it.
 */
void tcp_timer_expire(struct tcp_conn *conn)
{
	conn->timer_at = 0;
	timer_fired(flow_enter(&conn->flow), conn);
}

/**
 * tcp_timer_cb() - libevent fired the connection's timer: due, or the
 *		    deadline moved later since it was armed (tcp_arm_timer())
 * @fd:		unused
 * @what:	unused
 * @arg:	connection
 */
void tcp_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tcp_conn *conn = arg;
	uint64_t now = clock_ns();

	(void)fd;
	(void)what;
	conn->timer_fire = 0;
	if (!conn->timer_at)
		return;
	if (now + TCP_TIMER_SLACK_NS < conn->timer_at) {
		timer_add(conn, conn->timer_at, now);
		return;
	}
	tcp_timer_expire(conn);
}
