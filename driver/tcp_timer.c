// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - TCP timers: retransmission, handshake, window probe and idle */

#include <event2/event.h>

#include "clock.h"
#include "cond.h"
#include "log.h"
#include "tcp_internal.h"
#include "tcp_seg.h"

/**
 * tcp_arm_timer() - (re)start the connection's timer
 * @conn:	connection
 * @ms:		delay in milliseconds
 *
 * Should libevent fail, the connection's retransmissions and idle expiry
 * stop until the next call re-arms it: that is said, rate-limited. The
 * timer now means what the caller arms it for: a persist timer is marked
 * (CONN_PERSIST) after this.
 */
void tcp_arm_timer(struct tcp_conn *conn, unsigned int ms)
{
	static struct log_limit limit;
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	conn->flags &= ~CONN_PERSIST;

	if (evtimer_add(conn->timer, &tv))
		err_limited(&limit, 0,
		            "tcp: timer of the connection to port %u: libevent "
		            "failed",
		            conn->flow.key.fport);
}

/**
 * tcp_rto_ms() - retransmission timeout after @retries attempts
 * @retries:	attempts so far
 *
 * Network conditions add their delays and queue to the round trip
 * (cond.c): the timer waits that much longer.
 *
 * Return: milliseconds, doubling per attempt
 */
unsigned int tcp_rto_ms(unsigned int retries)
{
	return (TCP_RTO_MS + cond_rto_extra_ms())
	       << (retries < TCP_RTO_MAX_SHIFT ? retries : TCP_RTO_MAX_SHIFT);
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
	tcp_arm_timer(conn, 1000U << conn->retries);
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
		if (++conn->retries > TCP_MAX_RETRIES) {
			tcp_abort(c, conn, true);
			return TCP_RELEASED;
		}
		tcp_arm_timer(conn, tcp_rto_ms(conn->retries));
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
		tcp_arm_timer(conn, tcp_rto_ms(conn->probes));
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

void tcp_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tcp_conn *conn = arg;

	(void)fd;
	(void)what;
	timer_fired(flow_enter(&conn->flow), conn);
}
