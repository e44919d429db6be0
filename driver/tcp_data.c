// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - TCP data both ways: windows, peeking, ACKs and retransmission
 *
 * Guest to host: in-order payload goes straight into send(); we ACK only
 * what the socket took and advertise only what its send buffer can take.
 * Host to guest: data stays in the socket's receive queue until the guest
 * ACKs it (MSG_PEEK from SO_PEEK_OFF, MSG_TRUNC on ACK); a retransmission
 * rewinds the peek offset.
 */

#include <errno.h>
#include <string.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "log.h"
#include "tcp_internal.h"
#include "tcp_seg.h"

/* Peeked host data on its way into one frame. */
static uint8_t peek_buf[65536];

/**
 * seq_lt() - sequence number comparison, modulo 2^32
 * @a:		one
 * @b:		other
 *
 * Return: true if @a comes before @b
 */
static bool seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/**
 * tcp_rcv_window() - the window to advertise: free space in the host socket
 * @conn:	connection
 *
 * SO_MEMINFO gives the send buffer and what is queued in it, the quantity
 * tcp_sendmsg() itself checks. Below a threshold we advertise zero and wait
 * for EPOLLOUT, which the kernel raises at a third of the buffer free: the
 * threshold stays under that, so the wake-up always finds a window.
 *
 * Return: window in bytes
 */
uint32_t tcp_rcv_window(struct tcp_conn *conn)
{
	uint32_t mi[SK_MEMINFO_VARS] = {0};
	socklen_t len = sizeof(mi);
	uint32_t sndbuf, queued, free_, threshold;

	if (conn->flags & CONN_SOCK_FULL)
		return 0;
	if (getsockopt(conn->fd, SOL_SOCKET, SO_MEMINFO, mi, &len))
		return conn->mss;
	sndbuf = mi[SK_MEMINFO_SNDBUF];
	queued = mi[SK_MEMINFO_WMEM_QUEUED];
	free_ = sndbuf > queued ? sndbuf - queued : 0;
	/* Data costs the buffer more than its length (skb overhead), and a
	 * window once offered must not shrink under data in flight: offer
	 * three quarters, which holds for overheads up to a third.
	 */
	free_ = free_ / 4 * 3;
	threshold = conn->mss < sndbuf / 4 ? conn->mss : sndbuf / 4;
	if (free_ < threshold || !free_) {
		conn->flags |= CONN_SOCK_FULL;
		event_add(conn->wev, NULL);
		return 0;
	}
	return free_ < TCP_WINDOW_MAX ? free_ : TCP_WINDOW_MAX;
}

/**
 * tcp_rewind_to_una() - retransmit: resend everything the guest hasn't ACKed
 * @c:		context
 * @conn:	connection
 */
void tcp_rewind_to_una(struct ctx *c, struct tcp_conn *conn)
{
	int off = 0;

	conn->snd_nxt = conn->snd_una;
	conn->flags &= ~CONN_FIN_SENT;
	conn->dupacks = 0;
	setsockopt(conn->fd, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off));
	tcp_host_to_guest(c, conn);
}

/**
 * send_fin() - the host closed its side and all its data went out
 * @c:		context
 * @conn:	connection
 */
static void send_fin(struct ctx *c, struct tcp_conn *conn)
{
	conn->flags |= CONN_HOST_EOF;
	if (conn->flags & CONN_FIN_SENT)
		return;
	if (tcp_send_flags(c, conn, TH_FIN | TH_ACK, conn->snd_nxt,
	                   tcp_rcv_window(conn)))
		return;
	conn->snd_nxt++;
	conn->flags |= CONN_FIN_SENT;
	conn->flags &= ~CONN_ACK_PENDING;
	tcp_arm_timer(conn, tcp_rto_ms(conn->retries));
}

/**
 * send_peeked() - send @n peeked bytes as one frame; rewind on failure
 * @c:		context
 * @conn:	connection
 * @n:		bytes at peek_buf
 * @wnd:	window to advertise
 *
 * Return: 0 on success, -1 if the tap refused the frame
 */
static int send_peeked(struct ctx *c, struct tcp_conn *conn, size_t n,
                       uint32_t wnd)
{
	int off = (int)(conn->snd_nxt - conn->snd_una);

	if (tcp_send_data(c, conn, peek_buf, n, wnd)) {
		/* The peek offset moved past bytes the guest never got. */
		setsockopt(conn->fd, SOL_SOCKET, SO_PEEK_OFF, &off,
		           sizeof(off));
		tcp_arm_timer(conn, tcp_rto_ms(conn->retries));
		return -1;
	}
	conn->snd_nxt += (uint32_t)n;
	conn->flags &= ~CONN_ACK_PENDING;
	if (!evtimer_pending(conn->timer, NULL) || conn->retries == 0)
		tcp_arm_timer(conn, tcp_rto_ms(conn->retries));
	return 0;
}

/**
 * tcp_host_to_guest() - send what the host socket holds, as far as the guest's
 *		     window allows
 * @c:		context
 * @conn:	established connection
 */
void tcp_host_to_guest(struct ctx *c, struct tcp_conn *conn)
{
	uint32_t wnd = tcp_rcv_window(conn);
	int frames;

	if (!(conn->flags & CONN_ESTABLISHED) || (conn->flags & CONN_FIN_SENT))
		return;
	for (frames = 0; frames < TCP_BUDGET_FRAMES; frames++) {
		uint32_t inflight = conn->snd_nxt - conn->snd_una;
		size_t max = tcp_max_payload(c, conn);
		ssize_t n;

		if (conn->snd_wnd <= inflight) {
			conn->flags |= CONN_READ_PENDING;
			if (!conn->snd_wnd)
				tcp_arm_timer(conn, tcp_rto_ms(conn->retries));
			return;
		}
		if (max > conn->snd_wnd - inflight)
			max = conn->snd_wnd - inflight;
		n = recv(conn->fd, peek_buf, max, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0) {
			send_fin(c, conn);
			return;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				conn->flags &= ~CONN_READ_PENDING;
				return;
			}
			debug_msg("tcp: recv from host socket: %s",
			          strerror(errno));
			tcp_abort(c, conn, true);
			return;
		}
		if (send_peeked(c, conn, (size_t)n, wnd))
			return;
	}
	/* Budget spent with data left: come back on the next loop turn. */
	conn->flags |= CONN_READ_PENDING;
	event_active(conn->rev, EV_READ, 0);
}

/**
 * discard_acked() - drop bytes the guest acknowledged from the socket
 * @conn:	connection
 * @n:		bytes
 *
 * Return: 0 on success, -1 if the socket failed
 */
static int discard_acked(struct tcp_conn *conn, uint32_t n)
{
	while (n) {
		ssize_t r = recv(conn->fd, NULL, n, MSG_TRUNC | MSG_DONTWAIT);

		if (r <= 0)
			return r < 0 && errno == EINTR ? 0 : -1;
		n -= (uint32_t)r;
	}
	return 0;
}

/**
 * tcp_process_ack() - apply the guest's acknowledgement and window
 * @c:		context
 * @conn:	established connection
 * @s:		segment with TH_ACK
 *
 * Return: 0, or -1 if the connection was closed
 */
int tcp_process_ack(struct ctx *c, struct tcp_conn *conn,
                    const struct tcp_seg *s)
{
	uint32_t inflight = conn->snd_nxt - conn->snd_una;
	uint32_t acked = s->ack - conn->snd_una;
	uint32_t old_wnd = conn->snd_wnd;

	conn->snd_wnd = (uint32_t)s->win << conn->snd_ws;
	if (acked && acked <= inflight) {
		uint32_t data = acked;

		if ((conn->flags & CONN_FIN_SENT) && s->ack == conn->snd_nxt) {
			data--;
			conn->flags |= CONN_FIN_ACKED;
		}
		if (data && discard_acked(conn, data)) {
			tcp_abort(c, conn, true);
			return -1;
		}
		conn->snd_una = s->ack;
		conn->retries = 0;
		conn->dupacks = 0;
		if (conn->snd_una == conn->snd_nxt)
			tcp_arm_timer(conn, TCP_IDLE_S * 1000U);
		else
			tcp_arm_timer(conn, tcp_rto_ms(0));
	} else if (!acked && inflight && !s->len && conn->snd_wnd == old_wnd &&
	           !(s->flags & (TH_FIN | TH_SYN)) && ++conn->dupacks == 3) {
		tcp_rewind_to_una(c, conn);
		return 0;
	}
	if ((conn->flags & CONN_READ_PENDING) ||
	    (conn->snd_wnd > old_wnd && !(conn->flags & CONN_HOST_EOF)))
		tcp_host_to_guest(c, conn);
	else if ((conn->flags & CONN_HOST_EOF) &&
	         !(conn->flags & CONN_FIN_SENT))
		tcp_host_to_guest(c, conn);
	return 0;
}

/**
 * tcp_process_data() - pass in-order payload and FIN from the guest to the host
 * @c:		context
 * @conn:	established connection
 * @s:		segment
 *
 * Return: 0, or -1 if the connection was closed
 */
int tcp_process_data(struct ctx *c, struct tcp_conn *conn,
                     const struct tcp_seg *s)
{
	const uint8_t *data = s->payload;
	uint32_t seq = s->seq, len = (uint32_t)s->len;
	ssize_t n = 0;

	if (!len && !(s->flags & TH_FIN)) {
		/* Keepalives and window probes carry an old sequence number
		 * and must be answered, or the guest declares the peer dead.
		 */
		if (seq_lt(seq, conn->rcv_nxt))
			tcp_schedule_ack(c, conn);
		return 0;
	}
	if (conn->flags & CONN_GUEST_FIN) {
		tcp_schedule_ack(c, conn);
		return 0;
	}
	if (seq_lt(seq, conn->rcv_nxt)) {
		uint32_t skip = conn->rcv_nxt - seq;

		if (skip > len) {
			tcp_schedule_ack(c, conn);
			return 0;
		}
		data += skip;
		len -= skip;
		seq = conn->rcv_nxt;
	}
	if (seq != conn->rcv_nxt) {
		/* Out of order: a duplicate ACK asks for the gap. */
		tcp_schedule_ack(c, conn);
		return 0;
	}
	if (len) {
		n = send(conn->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			debug_msg("tcp: send to host socket: %s",
			          strerror(errno));
			tcp_abort(c, conn, true);
			return -1;
		}
		if (n < 0)
			n = 0;
		conn->rcv_nxt += (uint32_t)n;
		c->stats.to_host[PROTO_TCP].packets++;
		c->stats.to_host[PROTO_TCP].bytes += (uint64_t)n;
		if ((uint32_t)n < len) {
			c->stats.drops[DROP_SOCKET]++;
			conn->flags |= CONN_SOCK_FULL | CONN_DATA_DROPPED;
			event_add(conn->wev, NULL);
		}
	}
	if ((uint32_t)n == len && (s->flags & TH_FIN)) {
		conn->rcv_nxt++;
		conn->flags |= CONN_GUEST_FIN;
		shutdown(conn->fd, SHUT_WR);
	}
	tcp_schedule_ack(c, conn);
	return 0;
}
