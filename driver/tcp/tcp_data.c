// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - TCP data both ways: windows, peeking, ACKs and retransmission
 *
 * Guest to host: in-order payload goes straight into send(); we ACK only
 * what the socket took and advertise only what its send buffer can take.
 * Host to guest: data stays in the socket's receive queue until the guest
 * ACKs it (MSG_PEEK from SO_PEEK_OFF, MSG_TRUNC on ACK); a retransmission
 * rewinds the peek offset. New data waits while the window is silly, and,
 * without SO_PEEK_OFF, while a peek would re-read far more than it sends.
 * Under network conditions that stretch the guest's round trip, the data
 * is read out of the socket instead, and kept until the guest ACKs it
 * (tcp_stash.c): the bytes in flight then start with those kept, and the
 * socket's queue holds the rest.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/core/log.h"
#include "driver/tcp/tcp_internal.h"
#include "driver/tcp/tcp_seg.h"

/**
 * tcp_cond() - what network conditions mean for this connection
 * @conn:	connection
 * @t:		filled, when a rule applies
 *
 * Return: true if a rule in force applies to its frames (cond_tcp.c)
 */
bool tcp_cond(struct tcp_conn *conn, struct cond_tcp *t)
{
	struct cond_flow f = {conn->snd_nxt - conn->snd_una, conn->cond_mark};

	if (!cond_active())
		return false;
	cond_tcp(conn->flow.c, &conn->flow.key.faddr, conn->flow.key.fport,
	         conn->flow.key.gport, &f, t);
	conn->cond_mark = f.mark;
	return t->any;
}

/**
 * window_under_rate() - a window, no larger than a rate condition on the
 *			 guest's data lets it have in flight
 * @conn:	connection
 * @wnd:	the window the host socket allows
 *
 * Return: window in bytes
 */
static uint32_t window_under_rate(struct tcp_conn *conn, uint32_t wnd)
{
	struct cond_tcp t;

	if (!tcp_cond(conn, &t))
		return wnd;
	return wnd < t.wnd_max ? wnd : t.wnd_max;
}

/**
 * stretched() - whether rules in force add to the connection's round trip
 *		 (1 ms or more: a delay, or a rate's queue)
 * @conn:	connection
 *
 * Return: true if so
 */
static bool stretched(struct tcp_conn *conn)
{
	struct cond_tcp t;

	return tcp_cond(conn, &t) && t.rto_extra_ms;
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
 * The answer is kept: until sends may have taken half of it (each counted
 * as its bytes and TCP_SEND_OVERHEAD, more than the kernel charges), or
 * what is left falls below a segment, the window is what it was less
 * that, which the buffer still has, since it only drains meanwhile. A
 * request/response exchange then asks the kernel once in many round
 * trips, not on every segment. A rate condition bounds it further
 * (window_under_rate()).
 *
 * Return: window in bytes
 */
uint32_t tcp_rcv_window(struct tcp_conn *conn)
{
	uint32_t mi[SK_MEMINFO_VARS] = {0};
	socklen_t len = sizeof(mi);
	uint32_t sndbuf, queued, free_, threshold;

	/* After the guest's FIN no data comes: nothing to wait for (and a
	 * socket shut down for writing is always "writable").
	 */
	if (conn->flags & (CONN_SOCK_FULL | CONN_GUEST_FIN))
		return 0;
	/* Kept while it stays above the threshold below: mss is at least it.
	 * Not under rules that stretch the round trip: its right edge would
	 * move in steps of half the window, and a guest whose flight is the
	 * window would have three quarters of it, on average, in flight.
	 */
	if (conn->wnd_est && conn->wnd_used <= conn->wnd_est / 2 &&
	    conn->wnd_est - conn->wnd_used >= conn->mss && !stretched(conn))
		return window_under_rate(conn, conn->wnd_est - conn->wnd_used);
	conn->wnd_est = 0;
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
		/* Without the wake-up, a zero window would never reopen: offer
		 * what there is, and the guest's probes ask again.
		 */
		if (tcp_wait_writable(conn))
			return free_;
		return 0;
	}
	conn->wnd_est = free_ < TCP_WINDOW_MAX ? free_ : TCP_WINDOW_MAX;
	conn->wnd_used = 0;
	return window_under_rate(conn, conn->wnd_est);
}

/**
 * window_charge() - a send() took @n bytes: what the kept window loses
 * @conn:	connection
 * @n:		bytes the socket took
 */
static void window_charge(struct tcp_conn *conn, uint32_t n)
{
	uint64_t used = (uint64_t)conn->wnd_used + n +
	                TCP_SEND_OVERHEAD * (n / (64U << 10) + 1);

	conn->wnd_used = used < UINT32_MAX ? (uint32_t)used : UINT32_MAX;
}

/**
 * tcp_wait_writable() - advertise a zero window until the socket drains
 * @conn:	connection
 *
 * Return: 0, or -1 if the write event could not be armed (the window is
 *	   then left to the guest's probes)
 */
int tcp_wait_writable(struct tcp_conn *conn)
{
	static struct log_limit limit;

	/* The socket refused, or nearly: the kept window is no more. */
	conn->wnd_est = 0;
	if (event_add(conn->wev, NULL)) {
		err_limited(&limit, 0,
		            "tcp: watch host socket of port %u: "
		            "libevent failed",
		            conn->flow.key.fport);
		conn->flags &= ~CONN_SOCK_FULL;
		return -1;
	}
	conn->flags |= CONN_SOCK_FULL;
	return 0;
}

/**
 * sock_flight() - bytes in flight to the guest that are still in the host
 *		   socket's queue, after the ones kept (tcp_stash.c)
 * @conn:	connection
 *
 * Return: bytes
 */
static uint32_t sock_flight(const struct tcp_conn *conn)
{
	uint32_t inflight = conn->snd_nxt - conn->snd_una;

	return inflight > conn->stash_len ? inflight - conn->stash_len : 0;
}

/**
 * seq_max() - the later of two sequence numbers
 * @a:		one
 * @b:		other
 *
 * Return: @a or @b, modulo 2^32
 */
static uint32_t seq_max(uint32_t a, uint32_t b)
{
	return seq_lt(a, b) ? b : a;
}

/**
 * set_peek_offset() - point the kernel's peek offset at @off bytes past
 *		       snd_una
 * @c:		context
 * @conn:	connection
 * @off:	offset; the bytes kept out of the socket (tcp_stash.c) come
 *		first, so the kernel's offset is what lies past them
 *
 * Only for connections with SO_PEEK_OFF. A kernel that took the option
 * once does not refuse it later; if it did, the next peek would start at
 * the wrong byte, so the connection is reset rather than corrupted.
 *
 * Return: 0, or TCP_RELEASED
 */
static int set_peek_offset(struct ctx *c, struct tcp_conn *conn, uint32_t off)
{
	static struct log_limit limit;
	/* ACKed bytes not yet discarded still lead the queue. */
	uint32_t kept = off < conn->stash_len ? off : conn->stash_len;
	int v = (int)(off - kept + conn->undiscarded);

	if (conn->flags & CONN_NO_PEEK_OFF)
		return 0;
	if (!setsockopt(conn->fd, SOL_SOCKET, SO_PEEK_OFF, &v, sizeof(v)))
		return 0;
	err_limited(&limit, errno, "tcp: set SO_PEEK_OFF on port %u",
	            conn->flow.key.fport);
	tcp_abort(c, conn, true);
	return TCP_RELEASED;
}

/**
 * tcp_rewind_to_una() - retransmission timeout: send everything the guest
 *			 hasn't ACKed again
 * @c:		context
 * @conn:	connection
 *
 * Return: 0, or TCP_RELEASED
 */
int tcp_rewind_to_una(struct ctx *c, struct tcp_conn *conn)
{
	conn->snd_nxt = conn->snd_una;
	conn->flags &= ~(CONN_FIN_SENT | CONN_RECOVERY);
	conn->dupacks = 0;
	if (set_peek_offset(c, conn, 0))
		return TCP_RELEASED;
	return tcp_host_to_guest(c, conn);
}

/**
 * send_fin() - the host closed its side and all its data went out
 * @c:		context
 * @conn:	connection
 *
 * A FIN the tap refused is retried by the timer (tcp_timer.c).
 */
static void send_fin(struct ctx *c, struct tcp_conn *conn)
{
	conn->flags |= CONN_HOST_EOF;
	if (conn->flags & CONN_FIN_SENT)
		return;
	if (tcp_send_flags(c, conn, TH_FIN | TH_ACK, conn->snd_nxt,
	                   tcp_rcv_window(conn))) {
		tcp_arm_timer(conn, tcp_rto_ms(conn, conn->retries));
		return;
	}
	conn->snd_nxt++;
	conn->snd_max = seq_max(conn->snd_max, conn->snd_nxt);
	conn->flags |= CONN_FIN_SENT | CONN_FIN_EVER;
	tcp_arm_timer(conn, tcp_rto_ms(conn, conn->retries));
}

/**
 * send_room() - how many more bytes may go to the guest now
 * @c:		context
 * @conn:	connection
 *
 * Return: bytes: the guest's window left, bounded by one batch, by what
 *	   a rate condition lets be in flight (cond_tcp()) and, for
 *	   peeks past a discard buffer, by TCP_DISCARD_MAX in flight
 */
static uint32_t send_room(const struct ctx *c, struct tcp_conn *conn)
{
	uint32_t inflight = conn->snd_nxt - conn->snd_una, room;
	size_t batch = tcp_max_payload(c, conn) * TCP_BATCH_FRAMES;
	uint32_t wnd = conn->snd_wnd;
	struct cond_tcp t;

	if (tcp_cond(conn, &t)) {
		wnd = wnd < t.flight_max ? wnd : t.flight_max;
		batch = batch < t.burst ? batch : t.burst;
	}
	if (wnd <= inflight)
		return 0;
	room = wnd - inflight;
	/* Only what the socket still holds is peeked past. */
	inflight = sock_flight(conn);
	if (conn->flags & CONN_NO_PEEK_OFF) {
		if (inflight >= TCP_DISCARD_MAX)
			return 0;
		if (room > TCP_DISCARD_MAX - inflight)
			room = TCP_DISCARD_MAX - inflight;
	}
	if (batch > TCP_BATCH_BYTES)
		batch = TCP_BATCH_BYTES;
	return room < batch ? room : (uint32_t)batch;
}

/**
 * peek_result() - what a peek's return value says
 * @r:		its return value, errno set if negative
 * @skip:	bytes it passed over before the ones wanted
 * @eof:	set if the stream ended: no byte will follow the ones peeked
 *
 * Return: bytes past @skip, 0 if none; -1 with errno on failure
 */
static ssize_t peek_result(ssize_t r, size_t skip, bool *eof)
{
	*eof = false;
	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (!r && !skip) {
		*eof = true;
		return 0;
	}
	if ((size_t)r < skip) {
		/* The queue lost bytes we sent: never guess what follows. */
		errno = EPROTO;
		return -1;
	}
	return r - (ssize_t)skip;
}

/**
 * peek_inq_of() - what TCP_INQ said in a peek's control data
 * @mh:		the peek's message header, after recvmsg()
 *
 * Return: bytes left in the receive queue from its head (its FIN counts
 *	   1), or -1 if the peek did not say
 */
static int32_t peek_inq_of(struct msghdr *mh)
{
	struct cmsghdr *cmsg;
	int inq;

	if (!mh->msg_control || (mh->msg_flags & MSG_CTRUNC))
		return -1;
	for (cmsg = CMSG_FIRSTHDR(mh); cmsg; cmsg = CMSG_NXTHDR(mh, cmsg)) {
		if (cmsg->cmsg_level != SOL_TCP ||
		    cmsg->cmsg_type != TCP_CM_INQ ||
		    cmsg->cmsg_len < CMSG_LEN(sizeof(inq)))
			continue;
		memcpy(&inq, CMSG_DATA(cmsg), sizeof(inq));
		return inq < 0 ? -1 : inq;
	}
	return -1;
}

/**
 * host_recv() - read or peek at the host socket, and learn from TCP_INQ
 *		 what its queue holds after
 * @conn:	connection; its peek_inq is set
 * @iov:	where the bytes go
 * @n:		entries at @iov
 * @flags:	MSG_PEEK, or 0 to take the bytes out of the queue
 *
 * Return: recvmsg()'s
 */
static ssize_t host_recv(struct tcp_conn *conn, struct iovec *iov, size_t n,
                         int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = n};
	ssize_t r;

	if (!(conn->flags & CONN_NO_INQ)) {
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
	}
	r = recvmsg(conn->fd, &mh, flags | MSG_DONTWAIT);
	conn->peek_inq = r >= 0 ? peek_inq_of(&mh) : -1;
	return r;
}

/**
 * peek_at() - peek at host data from @skip bytes past snd_una
 * @conn:	connection
 * @skip:	bytes to pass over: the bytes in flight, or 0 to peek from
 *		snd_una (a retransmission); with SO_PEEK_OFF the kernel's
 *		offset must already point there, and @skip is 0
 * @len:	most bytes wanted
 * @eof:	set if the stream ended: no byte will follow the ones peeked
 *
 * Without SO_PEEK_OFF, MSG_PEEK always starts at the head of the receive
 * queue, which holds the bytes in flight first: those land in the discard
 * buffer, so that the peek buffer still receives exactly the bytes wanted.
 *
 * Return: bytes at the TCP state's peek_buf, 0 if none; -1 with errno on
 *	   failure
 */
static ssize_t peek_at(struct tcp_conn *conn, size_t skip, size_t len,
                       bool *eof)
{
	struct iovec iov[TCP_DISCARD_MAX / TCP_DISCARD_BUF + 1];
	struct tcp_state *ts = conn->flow.c->tcp;
	size_t n = 0;
	ssize_t r;

	for (size_t left = skip; left; n++) {
		size_t l = left < TCP_DISCARD_BUF ? left : TCP_DISCARD_BUF;

		iov[n] = (struct iovec){ts->discard_buf, l};
		left -= l;
	}
	iov[n++] = (struct iovec){ts->peek_buf, len};
	r = host_recv(conn, iov, n, MSG_PEEK);
	if (r > 0)
		ts->discard_copied += (size_t)r < skip ? (size_t)r : skip;
	return peek_result(r, skip, eof);
}

/**
 * peek_new() - peek at host data not yet sent to the guest
 * @conn:	connection
 * @len:	most bytes wanted
 * @eof:	set if the stream ended after the bytes peeked
 *
 * Return: as peek_at()
 */
static ssize_t peek_new(struct tcp_conn *conn, size_t len, bool *eof)
{
	size_t skip = 0;

	if (conn->flags & CONN_NO_PEEK_OFF)
		skip = sock_flight(conn);
	return peek_at(conn, skip, len, eof);
}

/**
 * count_new() - how many bytes the host sent past snd_nxt, copying none
 * @c:		context
 * @conn:	connection
 * @max:	count no further
 * @eof:	set if the stream ended: no byte will follow the ones counted
 *
 * A peek with MSG_TRUNC counts what a peek would copy (tcp_recvmsg() skips
 * only the copy) and stops where a peek would, at an urgent mark too. With
 * SO_PEEK_OFF it moves the kernel's peek offset as a peek does: it is put
 * back.
 *
 * Return: bytes, at most @max; TCP_RELEASED if the socket failed (the
 *	   connection is reset)
 */
static ssize_t count_new(struct ctx *c, struct tcp_conn *conn, uint32_t max,
                         bool *eof)
{
	uint32_t inflight = conn->snd_nxt - conn->snd_una;
	size_t skip = (conn->flags & CONN_NO_PEEK_OFF) ? sock_flight(conn) : 0;
	ssize_t r, n;

	conn->peek_inq = -1;
	r = recv(conn->fd, NULL, skip + max,
	         MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	n = peek_result(r, skip, eof);
	if (n < 0) {
		debug_msg("tcp: count host data of port %u: %s",
		          conn->flow.key.fport, strerror(errno));
		tcp_abort(c, conn, true);
		return TCP_RELEASED;
	}
	if (!skip && r > 0 && set_peek_offset(c, conn, inflight))
		return TCP_RELEASED;
	return n;
}

/**
 * sws_threshold() - usable window below which new data waits
 * @conn:	connection
 *
 * Sender-side silly window avoidance (RFC 1122 4.2.3.4, RFC 9293
 * 3.8.6.2.1): a full segment, or half the largest window the guest ever
 * offered if that is less, so that a guest whose whole window is small
 * is still served at once.
 *
 * Return: bytes
 */
static uint32_t sws_threshold(const struct tcp_conn *conn)
{
	uint32_t half = conn->max_wnd / 2;

	return conn->mss < half ? conn->mss : half;
}

/**
 * discard_free() - bytes in flight that a peek may read again whatever
 *		    little it sends
 * @conn:	connection
 *
 * One discard buffer's worth (a few microseconds to copy) is cheap next
 * to the system calls of a peek and its frames. Two segments, if more: a
 * guest delays its ACK for at most one (it ACKs every second full segment
 * at once), so data held until fewer bytes are in flight never waits for
 * a delayed ACK, as Nagle's algorithm would.
 *
 * Return: bytes
 */
static uint32_t discard_free(const struct tcp_conn *conn)
{
	uint32_t two = 2U * conn->mss;

	return two > TCP_DISCARD_BUF ? two : TCP_DISCARD_BUF;
}

/* worth_peeking(): new data waits for a larger window or for ACKs. */
#define PUSH_HELD (-3)

/**
 * worth_peeking() - whether to peek now, what the guest's window and the
 *		     bytes in flight considered
 * @c:		context
 * @conn:	connection
 * @room:	bytes send_room() allows, not 0
 * @force:	the persist timer fired: send what fits, however little
 * @eof:	set if a count found that the stream ended
 *
 * Two rules hold new data back, until an ACK, a window update or more
 * host data changes the answer:
 * - silly window avoidance, on both peek paths: with less usable window
 *   than sws_threshold(), new data goes only if all of it fits, or when
 *   the persist timer fires (@force);
 * - without SO_PEEK_OFF, a peek past more than discard_free() bytes in
 *   flight must be able to send 1/TCP_DISCARD_RATIO of them, so that the
 *   bytes copied stay within a constant times the bytes sent: a guest
 *   opening its window byte by byte, or a host writing byte by byte,
 *   waits for ACKs instead of making each byte cost a copy of the flight.
 * Retransmissions (below snd_max) are never held: the window took them
 * once. Where the host sent nothing new, the count stands for the peek:
 * it would find nothing either.
 *
 * Return: @room to peek; 0 if the host sent nothing past snd_nxt;
 *	   PUSH_HELD; TCP_RELEASED
 */
static ssize_t worth_peeking(struct ctx *c, struct tcp_conn *conn,
                             uint32_t room, bool force, bool *eof)
{
	uint32_t usable = conn->snd_wnd - (conn->snd_nxt - conn->snd_una);
	uint32_t inflight = sock_flight(conn);
	bool costly = (conn->flags & CONN_NO_PEEK_OFF) &&
	              inflight > discard_free(conn);
	bool silly = !force && !seq_lt(conn->snd_nxt, conn->snd_max) &&
	             usable < sws_threshold(conn);
	ssize_t n;

	*eof = false;
	if (costly && (uint64_t)room * TCP_DISCARD_RATIO < inflight)
		return PUSH_HELD;
	if (!costly && !silly)
		return room;
	n = count_new(c, conn, room + 1, eof);
	if (n <= 0)
		return n;
	if (silly && (size_t)n > room)
		return PUSH_HELD;
	if ((size_t)n > room)
		n = room;
	if (costly && (uint64_t)n * TCP_DISCARD_RATIO < inflight)
		return PUSH_HELD;
	return room;
}

/**
 * hold() - new data waits: for an ACK if one is due, else for the persist
 *	    timer, which sends it anyway
 * @conn:	connection
 *
 * A timer armed for something else (a retransmission, idleness) clears
 * CONN_PERSIST, so that the next hold arms it again; a persist timer
 * already running is left alone, so that window updates can't postpone it.
 */
static void hold(struct tcp_conn *conn)
{
	conn->flags |= CONN_READ_PENDING;
	if (conn->snd_nxt != conn->snd_una || (conn->flags & CONN_PERSIST))
		return;
	tcp_arm_timer(conn, TCP_PERSIST_MS);
	conn->flags |= CONN_PERSIST;
}

/* What host_state() sees on a drained socket; more than one may hold. */
#define HOST_CLOSED 1U /* its FIN arrived: the stream ends in the queue */
#define HOST_RESET 2U  /* it was reset, or the socket failed */
#define HOST_URGENT 4U /* urgent data is queued: peeks stop at its mark */

/**
 * host_state() - whether the host closed or reset, or sent urgent data,
 *		  after a peek found no more data
 * @conn:	connection
 *
 * A peek past bytes in flight (no SO_PEEK_OFF) returns them even after a
 * FIN or a reset, so the socket's poll state tells instead: one syscall,
 * as the extra peek that would otherwise return 0 or an error. A reset
 * leaves the error pending (the peek copied data), which poll reports.
 * A peek that copied something stops at an urgent mark, so a short peek
 * proves nothing while urgent data is queued (POLLPRI).
 *
 * Return: HOST_* bits, 0 if the host is open and the queue drained
 */
static unsigned int host_state(const struct tcp_conn *conn)
{
	struct pollfd p = {.fd = conn->fd,
	                   .events = POLLIN | POLLRDHUP | POLLPRI};
	unsigned int state = 0;

	if (poll(&p, 1, 0) < 0 || (p.revents & (POLLERR | POLLNVAL)))
		return HOST_RESET;
	if (p.revents & (POLLRDHUP | POLLHUP))
		state |= HOST_CLOSED;
	if (p.revents & POLLPRI)
		state |= HOST_URGENT;
	return state;
}

/**
 * send_peeked() - send @n peeked bytes at snd_nxt as frames of at most one
 *		   payload
 * @c:		context
 * @conn:	connection
 * @n:		bytes at the peek buffer
 * @wnd:	window to advertise
 *
 * Return: 0 if all went out; 1 if the tap refused a frame (the rest is
 *	   peeked again later); TCP_RELEASED
 */
static int send_peeked(struct ctx *c, struct tcp_conn *conn, size_t n,
                       uint32_t wnd)
{
	size_t max = tcp_max_payload(c, conn);

	for (size_t off = 0; off < n;) {
		size_t len = n - off < max ? n - off : max;

		if (tcp_send_data(c, conn, conn->snd_nxt,
		                  c->tcp->peek_buf + off, len, wnd)) {
			/* The peek offset moved past bytes the guest never
			 * got: move it back, and retry on the timer.
			 */
			if (set_peek_offset(c, conn,
			                    conn->snd_nxt - conn->snd_una))
				return TCP_RELEASED;
			tcp_arm_timer(conn, tcp_rto_ms(conn, conn->retries));
			return 1;
		}
		conn->snd_nxt += (uint32_t)len;
		conn->snd_max = seq_max(conn->snd_max, conn->snd_nxt);
		off += len;
		conn->flags |= CONN_TURN;
	}
	/* No deadline: the timer's own callback runs, or none was set. */
	if (!conn->timer_at || conn->retries == 0)
		tcp_arm_timer(conn, tcp_rto_ms(conn, conn->retries));
	return 0;
}

/* push_once(): the tap refused a frame; the timer retries. */
#define PUSH_STOPPED (-2)

/**
 * push_once() - one peek, and the frames it fills
 * @c:		context
 * @conn:	connection
 * @room:	most bytes to peek and send
 * @eof:	set if the stream ended after the bytes peeked
 *
 * Return: bytes sent, PUSH_STOPPED, or TCP_RELEASED
 */
static ssize_t push_once(struct ctx *c, struct tcp_conn *conn, uint32_t room,
                         bool *eof)
{
	uint32_t wnd = tcp_rcv_window(conn);
	ssize_t n = peek_new(conn, room, eof);
	int ret;

	if (n < 0) {
		debug_msg("tcp: peek at host socket of port %u: %s",
		          conn->flow.key.fport, strerror(errno));
		tcp_abort(c, conn, true);
		return TCP_RELEASED;
	}
	if (n > 0 && (ret = send_peeked(c, conn, (size_t)n, wnd)))
		return ret == TCP_RELEASED ? TCP_RELEASED : PUSH_STOPPED;
	return n;
}

/**
 * send_kept() - send bytes kept out of the socket from snd_nxt on: after a
 *		 retransmission timeout rewound it, or read just now
 * @c:		context
 * @conn:	connection, snd_nxt within the bytes kept
 * @room:	most bytes to send, at most TCP_BATCH_BYTES
 *
 * Return: bytes sent, PUSH_STOPPED, or TCP_RELEASED
 */
static ssize_t send_kept(struct ctx *c, struct tcp_conn *conn, uint32_t room)
{
	uint32_t off = conn->snd_nxt - conn->snd_una;
	uint32_t len = conn->stash_len - off;
	int ret;

	if (len > room)
		len = room;
	tcp_stash_copy(conn, off, c->tcp->peek_buf, len);
	ret = send_peeked(c, conn, len, tcp_rcv_window(conn));
	if (ret)
		return ret == TCP_RELEASED ? TCP_RELEASED : PUSH_STOPPED;
	return len;
}

/* Entries of the iovec a read into kept chunks takes at once. */
#define KEEP_IOV 32

/**
 * absorb() - read the bytes in flight that the socket still holds out of
 *	      it, and keep them
 * @c:		context
 * @conn:	connection, nothing ACKed left in the socket
 *
 * Return: 1 if they are all kept, 0 if memory ran out first (the rest
 *	   stays in the socket), or TCP_RELEASED
 */
static int absorb(struct ctx *c, struct tcp_conn *conn)
{
	uint32_t left = sock_flight(conn);

	while (left) {
		struct iovec iov[KEEP_IOV];
		int n = tcp_stash_iov(c, conn, left, iov, KEEP_IOV);
		ssize_t r;

		if (!n)
			return 0;
		/* An urgent mark stops a read short: the next passes it. */
		r = host_recv(conn, iov, (size_t)n, 0);
		if (r <= 0 || (uint32_t)r > left) {
			/* The queue lost bytes we sent. */
			debug_msg("tcp: keep host data of port %u: %s",
			          conn->flow.key.fport,
			          r < 0 ? strerror(errno) : "short");
			tcp_abort(c, conn, true);
			return TCP_RELEASED;
		}
		tcp_stash_commit(c, conn, (uint32_t)r);
		left -= (uint32_t)r;
	}
	return 1;
}

/**
 * keep_mode() - whether new data is read out of the socket and kept
 *		 (tcp_stash.c) rather than peeked at
 * @c:		context
 * @conn:	connection, snd_nxt at or past the bytes kept
 * @room:	most bytes to send; cut to what may be kept
 *
 * Under rules that add to the guest's round trip, the host socket's
 * receive buffer, sized by the kernel for the host side's own round
 * trip, would hold the bytes in flight and bound them. The bytes in
 * flight that the socket still holds are kept first, so that what is
 * kept stays one run from snd_una.
 *
 * Return: 1 to read and keep, 0 to peek, or TCP_RELEASED
 */
static int keep_mode(struct ctx *c, struct tcp_conn *conn, uint32_t *room)
{
	uint32_t kept;
	int ret;

	if (!stretched(conn))
		return 0;
	if (tcp_discard_now(c, conn))
		return TCP_RELEASED;
	kept = tcp_stash_room(c, conn);
	if (kept <= sock_flight(conn))
		return 0;
	ret = absorb(c, conn);
	if (ret != 1)
		return ret;
	kept = tcp_stash_room(c, conn);
	if (!kept)
		return 0;
	if (*room > kept)
		*room = kept;
	return 1;
}

/* pull_once(): memory for what is kept ran out; nothing was read. */
#define PULL_NO_ROOM (-4)

/**
 * pull_once() - read new host data out of the socket, keep it, and send it
 * @c:		context
 * @conn:	connection in keep_mode(), snd_nxt at the socket's head
 * @room:	bytes to read and send
 * @eof:	set if the stream ended, no byte read
 *
 * Return: bytes sent, PUSH_STOPPED, PULL_NO_ROOM (the allocator gave less
 *	   than @room), or TCP_RELEASED
 */
static ssize_t pull_once(struct ctx *c, struct tcp_conn *conn, uint32_t room,
                         bool *eof)
{
	struct iovec iov[KEEP_IOV];
	int n = tcp_stash_iov(c, conn, room, iov, KEEP_IOV);
	uint32_t got = 0;
	ssize_t r;

	for (int i = 0; i < n; i++)
		got += (uint32_t)iov[i].iov_len;
	*eof = false;
	/* Less room than asked for would read as a drained socket. */
	if (got < room) {
		tcp_stash_commit(c, conn, 0);
		return PULL_NO_ROOM;
	}
	r = peek_result(host_recv(conn, iov, (size_t)n, 0), 0, eof);
	if (r < 0) {
		debug_msg("tcp: read host socket of port %u: %s",
		          conn->flow.key.fport, strerror(errno));
		tcp_abort(c, conn, true);
		return TCP_RELEASED;
	}
	if (!r)
		return 0;
	tcp_stash_commit(c, conn, (uint32_t)r);
	return send_kept(c, conn, (uint32_t)r);
}

/**
 * peek_was_last() - whether the last peek read the receive queue to its
 *		     end, by TCP_INQ: no FIN behind it, and no urgent mark
 *		     stopped it
 * @conn:	connection, its snd_nxt past the bytes peeked
 *
 * Return: true if so; false if more is queued, or TCP_INQ said nothing
 */
static bool peek_was_last(const struct tcp_conn *conn)
{
	uint64_t held = (uint64_t)conn->undiscarded + sock_flight(conn);

	return conn->peek_inq >= 0 && (uint64_t)conn->peek_inq == held;
}

/**
 * drained() - a peek came up short: FIN, reset, urgent mark, or nothing
 * @c:		context
 * @conn:	connection
 * @n:		bytes the short peek sent
 * @took:	the bytes were read out of the socket (tcp_stash.c), not
 *		peeked
 * @final:	set when the host's FIN is known to be in the queue, and one
 *		more peek must pass what came before it
 *
 * When the peek's TCP_INQ shows that it read the queue to its end, only a
 * reset could hide behind it: the poll waits (tcp_later.c), and a send
 * to the socket that succeeds meanwhile makes it needless.
 *
 * Return: 1 to peek again now, 0 to wait for the next edge or ACK, or
 *	   TCP_RELEASED
 */
static int drained(struct ctx *c, struct tcp_conn *conn, ssize_t n, bool took,
                   bool *final)
{
	unsigned int state;

	if (!(conn->flags & CONN_CHECK_NOW) && peek_was_last(conn) &&
	    !tcp_later_add(c, conn, CONN_HOST_CHECK))
		return 0;
	conn->flags &= ~CONN_CHECK_NOW;
	state = host_state(conn);

	if (state & HOST_RESET) {
		tcp_abort(c, conn, true);
		return TCP_RELEASED;
	}
	if (state & HOST_URGENT) {
		/* With SO_PEEK_OFF, a peek that starts at the mark passes
		 * it, as a read does; without, every peek starts at the head
		 * and stops at the mark until the guest ACKs what precedes
		 * it.
		 */
		conn->flags |= CONN_READ_PENDING;
		return n > 0 && (took || !(conn->flags & CONN_NO_PEEK_OFF));
	}
	if (state & HOST_CLOSED) {
		/* Data may have come between the peek and the FIN. */
		*final = true;
		return 1;
	}
	return 0;
}

/**
 * host_to_guest() - send what the host socket holds, as far as the guest's
 *		     window allows
 * @c:		context
 * @conn:	connection
 * @force:	the persist timer fired: a silly window holds nothing back
 *
 * One peek and up to one batch of frames per call; a full batch comes back
 * on the next loop turn, so that other connections get theirs. When a peek
 * drains the queue, the socket tells whether the host closed; if it did,
 * one more peek, now of a final queue, sends what came before the FIN,
 * then our FIN follows. A reset becomes an RST. worth_peeking() may hold
 * new data back first.
 *
 * Return: 0, or TCP_RELEASED
 */
static int host_to_guest(struct ctx *c, struct tcp_conn *conn, bool force)
{
	bool eof = false, final = false, behind;
	uint32_t room;
	ssize_t n;
	int keep;

	if (!(conn->flags & CONN_ESTABLISHED) || (conn->flags & CONN_FIN_SENT))
		return 0;
	for (;;) {
		room = send_room(c, conn);
		if (!room) {
			conn->flags |= CONN_READ_PENDING;
			if (!conn->snd_wnd)
				tcp_arm_timer(conn,
				              tcp_rto_ms(conn, conn->probes));
			return 0;
		}
		/* Bytes kept out of the socket go before what it holds. */
		behind = seq_lt(conn->snd_nxt, conn->snd_una + conn->stash_len);
		keep = 0;
		if (behind) {
			n = send_kept(c, conn, room);
		} else if ((keep = keep_mode(c, conn, &room)) == TCP_RELEASED) {
			return TCP_RELEASED;
		} else {
			n = worth_peeking(c, conn, room, force, &eof);
			if (n == PUSH_HELD) {
				hold(conn);
				return 0;
			}
			if (n > 0 && keep)
				n = pull_once(c, conn, room, &eof);
			/* Memory ran out for what is kept: peek, as without. */
			if (n == PULL_NO_ROOM || (n > 0 && !keep))
				n = push_once(c, conn, room, &eof);
		}
		if (n == TCP_RELEASED)
			return TCP_RELEASED;
		if (n == PUSH_STOPPED) {
			conn->flags |= CONN_READ_PENDING;
			return 0;
		}
		if ((size_t)n == room) {
			/* A batch or the window ended, not the data. */
			conn->flags |= CONN_READ_PENDING;
			if (send_room(c, conn))
				event_active(conn->rev, EV_READ, 0);
			return 0;
		}
		if (behind)
			continue;
		conn->flags &= ~CONN_READ_PENDING;
		if (eof || final) {
			send_fin(c, conn);
			return 0;
		}
		keep = drained(c, conn, n, keep, &final);
		if (keep != 1)
			return keep;
	}
}

/**
 * tcp_host_to_guest() - send what the host socket holds, as far as the
 *			 guest's window allows and silly window avoidance
 *			 lets it
 * @c:		context
 * @conn:	connection
 *
 * Return: 0, or TCP_RELEASED
 */
int tcp_host_to_guest(struct ctx *c, struct tcp_conn *conn)
{
	return host_to_guest(c, conn, false);
}

/**
 * tcp_send_persist() - the persist timer fired: send new data into a
 *			window too small to wait for any longer
 * @c:		context
 * @conn:	connection
 *
 * RFC 9293 3.8.6.2.1's override timeout: a window that stays small would
 * otherwise hold the data for good.
 *
 * Return: 0, or TCP_RELEASED
 */
int tcp_send_persist(struct ctx *c, struct tcp_conn *conn)
{
	return host_to_guest(c, conn, true);
}

/**
 * tcp_host_check() - poll a host socket a drained peek left unpolled, and
 *		      act on a FIN, reset or urgent mark it finds
 * @c:		context
 * @conn:	connection
 *
 * Return: 0, or TCP_RELEASED
 */
int tcp_host_check(struct ctx *c, struct tcp_conn *conn)
{
	unsigned int state = host_state(conn);

	if (!state)
		return 0;
	if (state & HOST_RESET) {
		tcp_abort(c, conn, true);
		return TCP_RELEASED;
	}
	/* The peeks that follow poll again, and act on what they find. */
	conn->flags |= CONN_CHECK_NOW | CONN_READ_PENDING;
	return host_to_guest(c, conn, false);
}

/**
 * retransmit_first() - fast retransmit: send the oldest unacked frame again
 * @c:		context
 * @conn:	connection with bytes in flight
 *
 * Only that frame, as a real TCP does: the guest holds what followed it.
 *
 * Return: 0, or TCP_RELEASED
 */
static int retransmit_first(struct ctx *c, struct tcp_conn *conn)
{
	uint32_t data = conn->snd_nxt - conn->snd_una;
	size_t len = tcp_max_payload(c, conn);
	bool eof;
	ssize_t n;

	if (conn->flags & CONN_FIN_SENT)
		data--;
	if (!data) {
		tcp_send_flags(c, conn, TH_FIN | TH_ACK, conn->snd_una,
		               tcp_rcv_window(conn));
		return 0;
	}
	if (len > data)
		len = data;
	if (conn->stash_len) {
		/* The oldest bytes are kept: no peek. */
		if (len > conn->stash_len)
			len = conn->stash_len;
		tcp_stash_copy(conn, 0, c->tcp->peek_buf, (uint32_t)len);
		tcp_send_data(c, conn, conn->snd_una, c->tcp->peek_buf, len,
		              tcp_rcv_window(conn));
		return 0;
	}
	if (set_peek_offset(c, conn, 0))
		return TCP_RELEASED;
	n = peek_at(conn, 0, len, &eof);
	if (set_peek_offset(c, conn, conn->snd_nxt - conn->snd_una))
		return TCP_RELEASED;
	if (n < (ssize_t)len) {
		debug_msg("tcp: peek for a retransmission on port %u: %s",
		          conn->flow.key.fport,
		          n < 0 ? strerror(errno) : "short");
		tcp_abort(c, conn, true);
		return TCP_RELEASED;
	}
	tcp_send_data(c, conn, conn->snd_una, c->tcp->peek_buf, len,
	              tcp_rcv_window(conn));
	return 0;
}

/**
 * tcp_discard_acked() - drop the bytes the guest acknowledged from the
 *			 socket
 * @conn:	connection; its undiscarded bytes are all in the receive queue
 *
 * Return: 0 on success, -1 if the socket failed (the connection is lost:
 *	   the queue no longer lines up with our sequence numbers)
 */
int tcp_discard_acked(struct tcp_conn *conn)
{
	while (conn->undiscarded) {
		ssize_t r = recv(conn->fd, NULL, conn->undiscarded,
		                 MSG_TRUNC | MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (uint32_t)r > conn->undiscarded)
			return -1;
		conn->undiscarded -= (uint32_t)r;
	}
	tcp_later_done(conn, CONN_DISCARD);
	return 0;
}

/**
 * tcp_discard_now() - drop the ACKed bytes; a socket that fails loses the
 *		       connection
 * @c:		context
 * @conn:	connection
 *
 * Return: 0, or TCP_RELEASED
 */
int tcp_discard_now(struct ctx *c, struct tcp_conn *conn)
{
	if (!tcp_discard_acked(conn))
		return 0;
	debug_msg("tcp: discard acked data of port %u: %s",
	          conn->flow.key.fport, strerror(errno));
	tcp_abort(c, conn, true);
	return TCP_RELEASED;
}

/**
 * discard_due() - whether the ACKed bytes should leave the queue now
 * @conn:	connection
 *
 * Without SO_PEEK_OFF every peek would copy them again: at once. With
 * it, once TCP_DISCARD_BATCH gathered; and when all that is left is our
 * FIN, since the connection may then end. Under network conditions that
 * delay it or limit its rate, at once too: they stretch the guest's round
 * trip far past the host socket's, whose receive buffer the kernel sizes
 * for the latter, so the bytes in flight fill it, and ACKed bytes held
 * there would close the window the host sends into.
 *
 * Return: true if so
 */
static bool discard_due(struct tcp_conn *conn)
{
	return (conn->flags & (CONN_NO_PEEK_OFF | CONN_FIN_ACKED)) ||
	       conn->undiscarded >= TCP_DISCARD_BATCH || stretched(conn);
}

/**
 * ack_new() - the guest acknowledged @acked more bytes
 * @c:		context
 * @conn:	connection
 * @ack:	its acknowledgement number, past snd_una and at most snd_max
 *
 * After a retransmission timeout rewound snd_nxt, the guest may ACK past
 * it what it had from the first time: snd_nxt moves up with snd_una (the
 * kernel's peek offset follows the discard down to 0 by itself).
 *
 * Return: 0, or TCP_RELEASED
 */
static int ack_new(struct ctx *c, struct tcp_conn *conn, uint32_t ack)
{
	uint32_t data = ack - conn->snd_una, kept;

	if ((conn->flags & CONN_FIN_EVER) && ack == conn->snd_max) {
		data--;
		conn->flags |= CONN_FIN_SENT | CONN_FIN_ACKED;
	}
	/* The bytes kept out of the socket are the oldest. */
	kept = data < conn->stash_len ? data : conn->stash_len;
	if (kept)
		tcp_stash_trim(c, conn, kept);
	conn->undiscarded += data - kept;
	/* Past snd_nxt (a rewind resent less than the guest had): the
	 * kernel's peek offset lags, and only a discard puts it right.
	 */
	if (discard_due(conn) || seq_lt(conn->snd_nxt, ack) ||
	    (ack == conn->snd_nxt && conn->undiscarded &&
	     tcp_later_add(c, conn, CONN_DISCARD))) {
		if (tcp_discard_now(c, conn))
			return TCP_RELEASED;
	}
	conn->snd_una = ack;
	if (seq_lt(conn->snd_nxt, ack))
		conn->snd_nxt = ack;
	conn->retries = 0;
	conn->dupacks = 0;
	if (conn->snd_una == conn->snd_nxt)
		tcp_arm_timer(conn, TCP_IDLE_S * 1000U);
	else
		tcp_arm_timer(conn, tcp_rto_ms(conn, 0));
	if (!(conn->flags & CONN_RECOVERY))
		return 0;
	if (!seq_lt(ack, conn->recover)) {
		conn->flags &= ~CONN_RECOVERY;
		return 0;
	}
	/* A partial ACK: the next hole, at once (NewReno). */
	return retransmit_first(c, conn);
}

/**
 * dupack() - one more duplicate ACK: the third starts a fast retransmit
 * @c:		context
 * @conn:	connection with bytes in flight
 *
 * During recovery, duplicate ACKs only say that frames after the hole
 * arrived: retransmitting again for each would flood the tap queue whose
 * overflow caused the loss.
 *
 * Return: 0, or TCP_RELEASED
 */
static int dupack(struct ctx *c, struct tcp_conn *conn)
{
	if ((conn->flags & CONN_RECOVERY) || ++conn->dupacks < 3)
		return 0;
	conn->flags |= CONN_RECOVERY;
	conn->recover = conn->snd_nxt;
	conn->dupacks = 0;
	return retransmit_first(c, conn);
}

/**
 * tcp_process_ack() - apply the guest's acknowledgement and window
 * @c:		context
 * @conn:	established connection
 * @s:		segment with TH_ACK
 *
 * New data for the guest goes out once the tap batch ends (tcp_flush()),
 * not after every ACK of it: one peek then serves all the batch's ACKs,
 * which matters most when a peek re-reads the bytes in flight.
 *
 * Return: 0, or TCP_RELEASED
 */
int tcp_process_ack(struct ctx *c, struct tcp_conn *conn,
                    const struct tcp_seg *s)
{
	uint32_t inflight = conn->snd_nxt - conn->snd_una;
	uint32_t acked = s->ack - conn->snd_una;
	uint32_t old_wnd = conn->snd_wnd;
	int ret = 0;

	conn->snd_wnd = (uint32_t)s->win << conn->snd_ws;
	if (conn->snd_wnd > conn->max_wnd)
		conn->max_wnd = conn->snd_wnd;
	if (!old_wnd && conn->snd_wnd) {
		/* Reopened: probes were no failures, and their backed-off
		 * timer must not stand in for the next RTO.
		 */
		conn->probes = 0;
		conn->retries = 0;
		tcp_arm_timer(conn, inflight ? tcp_rto_ms(conn, 0)
		                             : TCP_IDLE_S * 1000U);
	}
	if (acked && acked <= conn->snd_max - conn->snd_una)
		ret = ack_new(c, conn, s->ack);
	else if (!acked && inflight && !s->len && conn->snd_wnd == old_wnd &&
	         !(s->flags & (TH_FIN | TH_SYN)))
		ret = dupack(c, conn);
	if (ret)
		return ret;
	if ((conn->flags & CONN_READ_PENDING) ||
	    (conn->snd_wnd > old_wnd && !(conn->flags & CONN_HOST_EOF)) ||
	    ((conn->flags & CONN_HOST_EOF) && !(conn->flags & CONN_FIN_SENT)))
		tcp_schedule_push(c, conn);
	return 0;
}

/**
 * take_in_order() - pass in-order payload, and a FIN after it, to the host
 * @c:		context
 * @conn:	connection
 * @data:	payload, starting at conn->rcv_nxt
 * @len:	its length
 * @fin:	the guest's FIN follows it
 * @held:	the bytes are held (tcp_ooo.c): what the socket refuses stays
 *		there, rather than being dropped
 * @taken:	set to the bytes the socket took
 *
 * Return: 0, or TCP_RELEASED
 */
static int take_in_order(struct ctx *c, struct tcp_conn *conn,
                         const uint8_t *data, uint32_t len, bool fin, bool held,
                         uint32_t *taken)
{
	ssize_t n = 0;

	if (len) {
		n = send(conn->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			debug_msg("tcp: send to host socket of port %u: %s",
			          conn->flow.key.fport, strerror(errno));
			tcp_abort(c, conn, true);
			return TCP_RELEASED;
		}
		if (n < 0)
			n = 0;
		/* The hole they asked for is filled. */
		if (n > 0)
			conn->dupacks_owed = 0;
		conn->rcv_nxt += (uint32_t)n;
		window_charge(conn, (uint32_t)n);
		/* A reset socket would have refused it. */
		if (n > 0)
			tcp_later_done(conn, CONN_HOST_CHECK);
		c->stats.to_host[PROTO_TCP].packets++;
		c->stats.to_host[PROTO_TCP].bytes += (uint64_t)n;
		/* What the socket refused waits with the segments held after
		 * a hole, for its room (socket_room()): only past their
		 * bounds is it dropped, for the guest to send again.
		 */
		if ((uint32_t)n < len) {
			if (!held &&
			    !tcp_ooo_hold(c, conn, conn->rcv_nxt, data + n,
			                  len - (uint32_t)n, fin)) {
				c->stats.drops[DROP_SOCKET]++;
				conn->flags |= CONN_DATA_DROPPED;
			}
			tcp_wait_writable(conn);
		}
	}
	*taken = (uint32_t)n;
	if ((uint32_t)n == len && fin) {
		conn->rcv_nxt++;
		conn->flags |= CONN_GUEST_FIN;
		tcp_ooo_free(c, conn);
		if (shutdown(conn->fd, SHUT_WR)) {
			/* Only a socket the host already reset refuses. */
			debug_msg("tcp: shut down host socket of port %u: %s",
			          conn->flow.key.fport, strerror(errno));
			tcp_abort(c, conn, true);
			return TCP_RELEASED;
		}
	}
	return 0;
}

/**
 * tcp_take_held() - pass the held segments that now continue the stream
 * @c:		context
 * @conn:	connection
 *
 * Stops where a hole is left, or where the host socket is full: its
 * writable event comes back here.
 *
 * Return: 0, or TCP_RELEASED
 */
int tcp_take_held(struct ctx *c, struct tcp_conn *conn)
{
	struct tcp_ooo_seg *h;
	uint32_t left, n;

	while (!(conn->flags & CONN_GUEST_FIN) &&
	       (h = tcp_ooo_ready(c, conn))) {
		/* Taking a FIN frees every held segment, this one too. */
		left = h->seq + h->len - conn->rcv_nxt;
		if (take_in_order(c, conn, h->data + (h->len - left), left,
		                  h->fin, true, &n))
			return TCP_RELEASED;
		if (n < left)
			break;
	}
	return 0;
}

/**
 * tcp_process_data() - pass in-order payload and FIN from the guest to the host
 * @c:		context
 * @conn:	established connection
 * @s:		segment
 *
 * Return: 0, or TCP_RELEASED
 */
int tcp_process_data(struct ctx *c, struct tcp_conn *conn,
                     const struct tcp_seg *s)
{
	const uint8_t *data = s->payload;
	uint32_t seq = s->seq, len = (uint32_t)s->len, n;
	bool fin = s->flags & TH_FIN;

	if (!len && !fin) {
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

		tcp_ooo_dsack(conn, seq, skip < len ? skip : len);
		if (skip > len) {
			tcp_schedule_ack(c, conn);
			return 0;
		}
		data += skip;
		len -= skip;
		seq = conn->rcv_nxt;
	}
	if (seq != conn->rcv_nxt) {
		/* After a hole: held for when it fills, and a duplicate ACK
		 * asks for it, one per segment as RFC 5681 4.2 says (a GSO
		 * frame is many), or the guest never counts to its DupThresh
		 * and waits for its retransmission timer.
		 */
		uint32_t mss = conn->mss ? conn->mss : 1U, segs;
		bool room = tcp_ooo_waits(conn);

		if (!tcp_ooo_hold(c, conn, seq, data, len, fin))
			c->stats.drops[DROP_TCP_OUT_OF_ORDER]++;
		/* No hole if the bytes before it wait for the socket's room:
		 * its writable event answers (socket_room() in tcp.c), and
		 * ACKs meanwhile would read to the guest as duplicates, a
		 * loss to retransmit and a window to halve.
		 */
		if (room)
			return 0;
		segs = conn->dupacks_owed + (len + mss - 1) / mss;
		conn->dupacks_owed =
		        (uint8_t)(segs < TCP_DUPTHRESH ? segs : TCP_DUPTHRESH);
		tcp_schedule_ack(c, conn);
		return 0;
	}
	if (take_in_order(c, conn, data, len, fin, false, &n))
		return TCP_RELEASED;
	/* A hole filled, or partly: the guest hears of it at once. */
	if (n == len && conn->ooo) {
		if (tcp_take_held(c, conn))
			return TCP_RELEASED;
		tcp_schedule_ack(c, conn);
		return 0;
	}
	/* Only new data taken whole, without a FIN, leaves an ACK that may
	 * wait; a duplicate asks for one now.
	 */
	if (len && n == len && !fin)
		tcp_schedule_data_ack(c, conn);
	else
		tcp_schedule_ack(c, conn);
	return 0;
}
