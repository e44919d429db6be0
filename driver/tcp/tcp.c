// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - TCP: guest connections translated onto host kernel sockets
 *
 * There is no TCP stack here. Each guest connection is a host kernel socket;
 * tapir translates sequence space between the two:
 * - guest -> host: in-order payload goes straight into send(); we ACK only
 *   what the socket took, and advertise only the space the socket's send
 *   buffer really has (SO_MEMINFO), so a burst the guest may send fits;
 * - host -> guest: data stays in the socket's receive queue until the guest
 *   ACKs it: we read with MSG_PEEK from SO_PEEK_OFF, discard with MSG_TRUNC
 *   on ACK, and retransmit by rewinding the peek offset;
 * - with vnet headers, data goes to the guest as 64 KiB GSO frames with a
 *   partial checksum, whatever the MTU.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/host/outbound.h"
#include "driver/flow/fwd.h"
#include "driver/stack/icmp.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/stack/ip4.h"
#include "driver/stack/ip6.h"
#include "driver/core/log.h"
#include "driver/host/probe.h"
#include "driver/tcp/tcp.h"
#include "driver/thread/thread.h"
#include "driver/tcp/tcp_conn.h"
#include "driver/tcp/tcp_internal.h"
#include "driver/tcp/tcp_seg.h"

/* Syscalls of TCP translation, once running (tcp*.c, fwd.c's bind). */
const char *const tcp_syscalls[] = {
        "socket",  "connect",  "bind",   "setsockopt", "getsockopt",
        "recvmsg", "recvfrom", "sendto", "sendmsg",    "shutdown",
        "poll",    "ppoll",    "close",  NULL,
};

/**
 * count_flows() - the TCP connections of @c changed: update its counter and
 *		   what placement of new ones sees
 * @c:		context
 */
static void count_flows(struct ctx *c)
{
	c->stats.flows[PROTO_TCP] = flow_count(c->flows, FLOW_TCP);
	thread_count_tcp(c, c->stats.flows[PROTO_TCP]);
}

/**
 * tcp_release() - free a connection's resources and its table entry
 * @c:		context
 * @conn:	connection
 * @reset:	close the host socket with RST rather than FIN
 */
void tcp_release(struct ctx *c, struct tcp_conn *conn, bool reset)
{
	tcp_later_forget(c, conn);
	tcp_ooo_free(c, conn);
	tcp_stash_free(c, conn);
	/* Bytes left unread make close() reset the host's side: the ones the
	 * guest ACKed go first, for a FIN.
	 */
	if (!reset && conn->fd >= 0 && tcp_discard_acked(conn))
		reset = true;
	/* Events first: once the fd is closed, another datapath thread may
	 * get its number, and removing it from our epoll would name that.
	 */
	if (conn->rev)
		event_free(conn->rev);
	if (conn->wev)
		event_free(conn->wev);
	if (conn->timer)
		event_free(conn->timer);
	conn->rev = conn->wev = conn->timer = NULL;
	if (conn->fd >= 0) {
		if (reset)
			fwd_reset_close(conn->fd);
		else
			close(conn->fd);
		conn->fd = -1;
	}
	/* Still linked for the batch's ACKs: tcp_flush() frees it. */
	if (conn->flags & CONN_IN_FLUSH) {
		conn->flags |= CONN_DEAD;
		tcp_conn_retire(c->flows, conn);
		return;
	}
	tcp_conn_release(c->flows, &conn);
	count_flows(c);
}

/**
 * tcp_abort() - reset a connection on both sides
 * @c:		context
 * @conn:	connection
 * @rst_guest:	also send the guest an RST: once no partition cuts it
 *		(tcp_owed.c), so that the guest never holds a connection
 *		that is gone
 */
void tcp_abort(struct ctx *c, struct tcp_conn *conn, bool rst_guest)
{
	if (rst_guest)
		tcp_reset_or_owe(c, conn);
	tcp_release(c, conn, true);
}

/**
 * flush_link() - put a connection on the list tcp_flush() walks
 * @c:		context
 * @conn:	connection
 */
static void flush_link(struct ctx *c, struct tcp_conn *conn)
{
	if (conn->flags & CONN_IN_FLUSH)
		return;
	conn->flags |= CONN_IN_FLUSH;
	conn->flush_next = c->tcp->flush_head;
	c->tcp->flush_head = conn;
}

/**
 * tcp_schedule_ack() - owe the guest an ACK at the end of this tap batch,
 *			one that may not wait
 * @c:		context
 * @conn:	connection
 */
void tcp_schedule_ack(struct ctx *c, struct tcp_conn *conn)
{
	conn->flags |= CONN_ACK_PENDING | CONN_ACK_NOW;
	flush_link(c, conn);
}

/**
 * tcp_schedule_data_ack() - owe the guest an ACK for in-order data the host
 *			     socket took: it may wait for a segment to ride
 *			     on (tcp_later.c)
 * @c:		context
 * @conn:	connection
 */
void tcp_schedule_data_ack(struct ctx *c, struct tcp_conn *conn)
{
	conn->flags |= CONN_ACK_PENDING;
	flush_link(c, conn);
}

/**
 * tcp_schedule_push() - send host data to the guest at the end of this tap
 *			 batch
 * @c:		context
 * @conn:	connection
 */
void tcp_schedule_push(struct ctx *c, struct tcp_conn *conn)
{
	conn->flags |= CONN_PUSH_PENDING;
	flush_link(c, conn);
}

/**
 * flush_one() - what a connection is owed after a batch: duplicate ACKs,
 *		 data, then an ACK if no segment carried one (it may wait:
 *		 tcp_later.c)
 * @c:		context
 * @conn:	connection, just taken off the flush list
 */
static void flush_one(struct ctx *c, struct tcp_conn *conn)
{
	/* Pure ACKs, before any data: the guest counts only those as
	 * duplicates.
	 */
	if (tcp_ooo_waits(conn))
		conn->dupacks_owed = 0;
	for (; conn->dupacks_owed; conn->dupacks_owed--)
		tcp_send_flags(c, conn, TH_ACK, conn->snd_nxt,
		               tcp_rcv_window(conn));
	if (conn->flags & CONN_PUSH_PENDING) {
		conn->flags &= ~CONN_PUSH_PENDING;
		if (tcp_host_to_guest(c, conn))
			return;
	}
	if (conn->flags & CONN_ACK_PENDING)
		tcp_ack_owed(c, conn);
}

/**
 * tcp_flush() - send the data and ACKs owed after a batch of guest frames
 * @c:		context
 */
void tcp_flush(struct ctx *c)
{
	struct tcp_conn *conn = c->tcp->flush_head, *next;

	c->tcp->flush_head = NULL;
	for (; conn; conn = next) {
		next = conn->flush_next;
		conn->flags &= ~CONN_IN_FLUSH;
		if (conn->flags & CONN_DEAD)
			tcp_conn_release(c->flows, &conn);
		else
			flush_one(flow_enter(&conn->flow), conn);
	}
	count_flows(c);
}

/**
 * tcp_maybe_finish() - close a connection whose both directions are done
 * @c:		context
 * @conn:	connection
 *
 * Return: TCP_RELEASED if it was closed, else 0
 */
int tcp_maybe_finish(struct ctx *c, struct tcp_conn *conn)
{
	if ((conn->flags & (CONN_GUEST_FIN | CONN_FIN_ACKED)) !=
	    (CONN_GUEST_FIN | CONN_FIN_ACKED))
		return 0;
	/* The guest's FIN is owed its ACK now: the flush list can't send it
	 * for a released entry, and the guest would retransmit into an RST.
	 */
	if (conn->flags & CONN_ACK_PENDING)
		tcp_send_flags(c, conn, TH_ACK, conn->snd_nxt, 0);
	tcp_release(c, conn, false);
	return TCP_RELEASED;
}

/**
 * sock_read_cb() - the host socket has new data, or an error (edge-triggered)
 * @fd:		socket
 * @what:	event flags
 * @arg:	connection
 */
static void sock_read_cb(evutil_socket_t fd, short what, void *arg);

/**
 * sock_write_cb() - the host socket connected, or has buffer space again
 * @fd:		socket
 * @what:	event flags
 * @arg:	connection
 */
static void sock_write_cb(evutil_socket_t fd, short what, void *arg);

/**
 * conn_events() - create the socket and timer events of a connection
 * @c:		context
 * @conn:	connection with its fd set
 *
 * Return: 0 on success, -1 on failure
 */
static int conn_events(struct ctx *c, struct tcp_conn *conn)
{
	conn->rev = event_new(c->base, conn->fd, EV_READ | EV_ET | EV_PERSIST,
	                      sock_read_cb, conn);
	conn->wev = event_new(c->base, conn->fd, EV_WRITE | EV_ET,
	                      sock_write_cb, conn);
	conn->timer = evtimer_new(c->base, tcp_timer_cb, conn);
	if (!conn->rev || !conn->wev || !conn->timer ||
	    event_add(conn->rev, NULL))
		return -1;
	return 0;
}

/**
 * socket_setup() - options every host-side TCP socket gets
 * @c:		context
 * @conn:	connection with its socket
 *
 * Peeks continue where the last ended with SO_PEEK_OFF (Linux 6.10 for
 * IPv4, 6.12 for IPv6); where the kernel lacks it, this connection peeks
 * past a discard buffer instead, which is just as correct. Each socket's
 * own answer counts, not only the start-up probe's.
 *
 * Urgent data stays in the stream (SO_OOBINLINE): otherwise reads skip the
 * urgent byte while the peek offset does not, and the sequence numbers we
 * give the guest would no longer match the queue.
 *
 * Return: 0, or an errno if the socket can't be used
 */
static int socket_setup(struct ctx *c, struct tcp_conn *conn)
{
	static struct log_limit limit;
	int one = 1, zero = 0;
	int family = AF_INET;
	socklen_t len = sizeof(family);

	if (setsockopt(conn->fd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one))) {
		err_limited(&limit, errno, "tcp: SO_OOBINLINE on port %u",
		            conn->flow.key.fport);
		return errno;
	}
	/* Without it, small writes wait for ACKs: slower, not wrong. */
	if (setsockopt(conn->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		err_limited(&limit, errno, "tcp: TCP_NODELAY on port %u",
		            conn->flow.key.fport);
	/* Without it, every peek that drains the queue polls it too. */
	if (setsockopt(conn->fd, SOL_TCP, TCP_INQ, &one, sizeof(one)))
		conn->flags |= CONN_NO_INQ;
	if (getsockopt(conn->fd, SOL_SOCKET, SO_DOMAIN, &family, &len) ||
	    !tcp_peek_in_use(c, family) ||
	    setsockopt(conn->fd, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero)))
		conn->flags |= CONN_NO_PEEK_OFF;
	return 0;
}

/**
 * guest_mss() - payload size for segments toward the guest
 * @c:		context
 * @conn:	connection (family)
 * @opt:	the guest's MSS option, 0 if absent
 *
 * Return: MSS
 */
static uint16_t guest_mss(const struct ctx *c, const struct tcp_conn *conn,
                          uint16_t opt)
{
	unsigned int mtu_mss = c->tap.mtu - ((conn->flags & CONN_V6) ? 60 : 40);

	if (!opt)
		opt = 536;
	return (uint16_t)(opt < mtu_mss ? opt : mtu_mss);
}

/**
 * send_synack() - the host connected: offer the guest our SYN-ACK
 * @c:		context
 * @conn:	connection
 */
static void send_synack(struct ctx *c, struct tcp_conn *conn)
{
	conn->flags &= ~CONN_CONNECTING;
	conn->flags |= CONN_SYN_RCVD;
	tcp_send_flags(c, conn, TH_SYN | TH_ACK, conn->snd_una, TCP_WINDOW_MAX);
	conn->snd_nxt = conn->snd_max = conn->snd_una + 1;
	tcp_arm_timer(conn, tcp_syn_rto_ms(conn));
}

/**
 * syn_unreach() - tell the guest by ICMP that its SYN can't be delivered
 * @c:		context
 * @conn:	connection whose connect failed, SYN received, nothing sent
 * @code:	ICMP_*_UNREACH code (IPv4 numbering)
 *
 * The guest's SYN is gone by now (the connect may fail a second later):
 * its headers are rebuilt from the connection, which is all the guest's
 * stack reads of a quote (addresses, ports, and the sequence number, which
 * must be its SYN's).
 *
 * Return: 0 if sent, -1 if not (rate limit)
 */
static int syn_unreach(struct ctx *c, const struct tcp_conn *conn, uint8_t code)
{
	const struct flow_key *k = &conn->flow.key;
	_Alignas(struct ip6_hdr) uint8_t buf[40 + 20] = {0};
	struct tcphdr th = {0};
	struct pkt q = {0};

	q.v6 = conn->flags & CONN_V6;
	q.src = k->gaddr;
	q.dst = k->faddr;
	q.proto = IPPROTO_TCP;
	q.l3 = buf;
	q.l3len = q.v6 ? sizeof(struct ip6_hdr) : sizeof(struct iphdr);
	q.l4 = buf + q.l3len;
	q.l4len = sizeof(th);
	if (q.v6)
		ip6_build_header((struct ip6_hdr *)(void *)buf, &k->gaddr,
		                 &k->faddr, IPPROTO_TCP, sizeof(th));
	else
		ip4_build_header(c, (struct iphdr *)(void *)buf,
		                 inany_v4(&k->gaddr), inany_v4(&k->faddr),
		                 IPPROTO_TCP, sizeof(th));
	th.source = htons(k->gport);
	th.dest = htons(k->fport);
	th.seq = htonl(conn->rcv_nxt - 1);
	th.doff = sizeof(th) / 4;
	th.syn = 1;
	memcpy(q.l4, &th, sizeof(th));
	return icmp_send_unreach(c, &q, code);
}

/**
 * connect_failed() - the host refused or couldn't reach the destination
 * @c:		context
 * @conn:	connection, released here
 * @err:	errno of the connect
 */
static void connect_failed(struct ctx *c, struct tcp_conn *conn, int err)
{
	int code = icmp_unreach_code(err);

	debug_msg("tcp: connect to port %u: %s", conn->flow.key.fport,
	          strerror(err));
	/* A refusal is the peer's RST; that the host has no route, or that
	 * its neighbour never answered, is an ICMP error, as from a router:
	 * the guest's connect fails with the same errno as the host's.
	 */
	if (code < 0 || code == ICMP_PORT_UNREACH || syn_unreach(c, conn, code))
		tcp_send_flags(c, conn, TH_RST | TH_ACK, 0, 0);
	tcp_release(c, conn, false);
}

/**
 * host_socket() - a host socket for a new outbound connection
 * @c:		context
 * @conn:	connection without a socket
 * @family:	AF_INET or AF_INET6
 *
 * Running out of fds is something a guest can cause at will, once per
 * SYN: the guest gets its RST each time, the log one line per interval.
 *
 * Return: 0, or an errno (nothing printed twice in a burst)
 */
static int host_socket(struct ctx *c, struct tcp_conn *conn, int family)
{
	static struct log_limit limit;
	int err;

	conn->fd =
	        socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (conn->fd < 0) {
		err = errno;
		err_limited(&limit, err, "tcp: host socket for port %u",
		            conn->flow.key.fport);
		return err;
	}
	err = -outbound_bind(c, conn->fd, family);
	if (err) {
		err_limited(&limit, err,
		            "tcp: bind outbound address for "
		            "port %u",
		            conn->flow.key.fport);
		return err;
	}
	if (conn_events(c, conn)) {
		err_limited(&limit, 0,
		            "tcp: watch host socket for port %u: "
		            "libevent failed",
		            conn->flow.key.fport);
		return ENOMEM;
	}
	return socket_setup(c, conn);
}

/**
 * open_outbound() - a guest SYN to a new destination: connect on the host
 * @c:		context
 * @p:		packet
 * @s:		its SYN segment
 * @k:		its connection's key, guest side
 */
static void open_outbound(struct ctx *c, const struct pkt *p,
                          const struct tcp_seg *s, const struct flow_key *k)
{
	union sockaddr_inany sa;
	struct tcp_conn *conn;
	socklen_t salen;
	int err;

	if (fwd_outbound_or_reject(c, p, s->dport, &sa, &salen))
		return;
	conn = tcp_conn_alloc(c->flows, &p->src, s->sport, &p->dst, s->dport);
	if (!conn && errno == EEXIST) {
		/* Another thread opened it meanwhile: it answers. */
		thread_pass_to_owner(c, k);
		return;
	}
	if (!conn) {
		c->stats.drops[DROP_FLOW_LIMIT]++;
		tcp_send_rst_reply(c, p, s);
		return;
	}
	conn->flags = p->v6 ? CONN_V6 : 0;
	conn->rcv_nxt = s->seq + 1;
	conn->snd_una = conn->snd_nxt = conn->snd_max =
	        tcp_isn(c->flows, &p->src, s->sport, &p->dst, s->dport);
	conn->mss = guest_mss(c, conn, s->mss);
	if (s->ws >= 0) {
		conn->flags |= CONN_WS_OK;
		conn->snd_ws = (uint8_t)s->ws;
	}
	if (s->sack_ok)
		conn->flags |= CONN_SACK_OK;
	conn->snd_wnd = conn->max_wnd = s->win;
	conn->last_active = clock_s();
	err = host_socket(c, conn, sa.sa.sa_family);
	if (err) {
		connect_failed(c, conn, err);
		return;
	}
	count_flows(c);
	if (!connect(conn->fd, &sa.sa, salen)) {
		send_synack(c, conn);
	} else if (errno != EINPROGRESS) {
		connect_failed(c, conn, errno);
	} else if (event_add(conn->wev, NULL)) {
		connect_failed(c, conn, ENOMEM);
	} else {
		conn->flags |= CONN_CONNECTING;
	}
}

/**
 * synack_from_guest() - the guest answered our inbound SYN
 * @c:		context
 * @conn:	connection in CONN_SYN_SENT
 * @s:		the SYN-ACK
 *
 * Return: 0, or TCP_RELEASED
 */
TCP_MUST_CHECK static int
synack_from_guest(struct ctx *c, struct tcp_conn *conn, const struct tcp_seg *s)
{
	if (s->ack != conn->snd_una + 1) {
		tcp_send_flags(c, conn, TH_RST, s->ack, 0);
		return 0;
	}
	conn->rcv_nxt = s->seq + 1;
	conn->snd_una = s->ack;
	conn->mss = guest_mss(c, conn, s->mss);
	if (s->ws >= 0) {
		conn->snd_ws = (uint8_t)s->ws;
	} else {
		conn->flags &= ~CONN_WS_OK;
		conn->snd_ws = 0;
	}
	if (!s->sack_ok)
		conn->flags &= ~CONN_SACK_OK;
	conn->snd_wnd = conn->max_wnd = s->win;
	conn->flags &= ~CONN_SYN_SENT;
	conn->flags |= CONN_ESTABLISHED;
	conn->retries = 0;
	tcp_arm_timer(conn, TCP_IDLE_S * 1000U);
	tcp_schedule_ack(c, conn);
	/* The host client may have written already; its edge is gone. */
	return tcp_host_to_guest(c, conn);
}

/**
 * syn_on_existing() - a SYN for a known connection
 * @c:		context
 * @conn:	connection
 * @s:		segment with TH_SYN
 *
 * Return: 0, or TCP_RELEASED
 */
TCP_MUST_CHECK static int syn_on_existing(struct ctx *c, struct tcp_conn *conn,
                                          const struct tcp_seg *s)
{
	if ((conn->flags & CONN_SYN_SENT) && (s->flags & TH_ACK))
		return synack_from_guest(c, conn, s);
	if (conn->flags & CONN_SYN_RCVD)
		tcp_send_flags(c, conn, TH_SYN | TH_ACK, conn->snd_una,
		               TCP_WINDOW_MAX);
	/* A retransmitted SYN while we connect, or a stray one: ignore. */
	return 0;
}

/**
 * establish() - the guest acknowledged our SYN-ACK
 * @conn:	connection in CONN_SYN_RCVD
 * @s:		the ACK
 *
 * A server that speaks first (SSH, SMTP, MySQL) may have written before
 * this: its read edge came while we could not send, so look now.
 */
static void establish(struct tcp_conn *conn, const struct tcp_seg *s)
{
	conn->flags &= ~CONN_SYN_RCVD;
	conn->flags |= CONN_ESTABLISHED | CONN_READ_PENDING;
	conn->snd_una = s->ack;
	conn->retries = 0;
	tcp_arm_timer(conn, TCP_IDLE_S * 1000U);
}

/**
 * conn_segment() - a segment for a known connection
 * @c:		context
 * @conn:	connection, not dead
 * @s:		the segment
 *
 * Return: 0, or TCP_RELEASED; the caller only passes it on
 */
static int conn_segment(struct ctx *c, struct tcp_conn *conn,
                        const struct tcp_seg *s)
{
	int ret;

	conn->last_active = clock_s();
	if (s->flags & TH_RST) {
		tcp_release(c, conn, true);
		return TCP_RELEASED;
	}
	if (s->flags & TH_SYN)
		return syn_on_existing(c, conn, s);
	if ((conn->flags & CONN_SYN_SENT) && (s->flags & TH_ACK)) {
		/* An ACK where a SYN-ACK belongs: the guest still holds an
		 * older connection on this tuple (TIME_WAIT refusing our SYN).
		 * Reset it, as RFC 9293 says for an unacceptable ACK in
		 * SYN-SENT, and offer the SYN again.
		 */
		tcp_send_flags(c, conn, TH_RST, s->ack, 0);
		return tcp_retransmit_handshake(c, conn);
	}
	if (!(s->flags & TH_ACK) ||
	    (conn->flags & (CONN_CONNECTING | CONN_SYN_SENT)))
		return 0;
	if (conn->flags & CONN_SYN_RCVD) {
		if (s->ack != conn->snd_una + 1)
			return 0;
		establish(conn, s);
	}
	ret = tcp_process_ack(c, conn, s);
	if (!ret)
		ret = tcp_process_data(c, conn, s);
	if (!ret)
		ret = tcp_maybe_finish(c, conn);
	return ret;
}

/**
 * tcp_input() - handle a TCP segment from the guest
 * @c:		context
 * @p:		validated IP packet with proto TCP
 */
void tcp_input(struct ctx *c, struct pkt *p)
{
	struct tcp_conn *conn;
	struct flow_key k;
	struct tcp_seg s;
	bool syn;

	if (tcp_seg_parse(c, p, &s))
		return;
	conn = tcp_conn_lookup(c->flows, &p->src, s.sport, &p->dst, s.dport);
	if (conn) {
		conn_segment(flow_enter(&conn->flow), conn, &s);
		return;
	}
	/* Another thread may own it; a new one may be placed on another. */
	flow_key_guest(&k, FLOW_TCP, &p->src, s.sport, &p->dst, s.dport);
	syn = (s.flags & (TH_SYN | TH_ACK | TH_RST)) == TH_SYN;
	if (thread_route_miss(c, &k, syn))
		return;
	if (s.flags & TH_RST) {
		/* Discarded as RFC 9293 3.10.7.1 says, but counted. */
		c->stats.drops[DROP_NO_FLOW]++;
		return;
	}
	if (syn) {
		open_outbound(c, p, &s, &k);
		thread_place_done(c);
		return;
	}
	c->stats.drops[DROP_NO_FLOW]++;
	tcp_send_rst_reply(c, p, &s);
}

static void sock_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tcp_conn *conn = arg;

	(void)fd;
	(void)what;
	/* Edge-triggered: an edge before the handshake ends is remembered,
	 * or the data that caused it would wait for the next one.
	 */
	if (!(conn->flags & CONN_ESTABLISHED))
		conn->flags |= CONN_READ_PENDING;
	else if (tcp_host_to_guest(flow_enter(&conn->flow), conn) ==
	         TCP_RELEASED)
		return; /* nothing may follow that touches @conn */
}

/**
 * socket_room() - the host socket that was full has room: the bytes held
 *		   for it first, then the guest hears of the window
 * @c:		context
 * @conn:	connection
 *
 * Writable, yet taking none of the held bytes, the socket is short of the
 * host's TCP memory, not of its own buffer: waiting for it to be writable
 * again would wake at once, over and over. The guest's retransmission
 * tries again instead (its ACK says the window is 0).
 *
 * If data was dropped, or segments wait behind a hole after what went,
 * three duplicate ACKs make the guest retransmit at once instead of after
 * its backed-off RTO.
 */
static void socket_room(struct ctx *c, struct tcp_conn *conn)
{
	static struct log_limit limit;
	uint32_t before = conn->rcv_nxt, wnd;
	bool held = conn->ooo, hole;
	int acks;

	conn->flags &= ~CONN_SOCK_FULL;
	if (held && tcp_take_held(c, conn))
		return;
	if (held && conn->rcv_nxt == before && (conn->flags & CONN_SOCK_FULL) &&
	    event_del(conn->wev))
		err_limited(&limit, 0,
		            "tcp: stop watching host socket of port %u: "
		            "libevent failed",
		            conn->flow.key.fport);
	wnd = tcp_rcv_window(conn);
	hole = (conn->flags & CONN_DATA_DROPPED) ||
	       (conn->ooo && !tcp_ooo_waits(conn));
	acks = hole && wnd ? 1 + TCP_DUPTHRESH : 1;
	conn->flags &= ~CONN_DATA_DROPPED;
	while (acks--)
		tcp_send_flags(c, conn, TH_ACK, conn->snd_nxt, wnd);
	/* The held segments may have ended with the guest's FIN. */
	if (tcp_maybe_finish(c, conn) == TCP_RELEASED)
		return;
}

static void sock_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tcp_conn *conn = arg;
	struct ctx *c = flow_enter(&conn->flow);
	socklen_t len = sizeof(int);
	int err = 0;

	(void)what;
	if (conn->flags & CONN_CONNECTING) {
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err)
			connect_failed(c, conn, err ? err : errno);
		else
			send_synack(c, conn);
		return;
	}
	if (conn->flags & CONN_SOCK_FULL)
		socket_room(c, conn);
}

/**
 * tcp_accept_inbound() - a forwarded host connection: open it to the guest
 * @c:		context
 * @fd:		accepted host socket; owned by TCP from here on success
 * @src:	source as the guest should see it
 * @sport:	source port
 * @dst:	guest address
 * @dport:	guest port
 *
 * Return: 0 on success, -1 (fd not taken) if the tuple is busy or the table
 *	   is full
 */
int tcp_accept_inbound(struct ctx *c, int fd, const struct in6_addr *src,
                       uint16_t sport, const struct in6_addr *dst,
                       uint16_t dport)
{
	struct tcp_conn *conn;

	/* The guest has a connection that looks the same: refuse this one
	 * rather than have the guest's answer end that one.
	 */
	if (tcp_conn_lookup(c->flows, dst, dport, src, sport)) {
		c->stats.drops[DROP_FLOW_LIMIT]++;
		return -1;
	}
	conn = tcp_conn_alloc(c->flows, dst, dport, src, sport);
	if (!conn) {
		c->stats.drops[DROP_FLOW_LIMIT]++;
		return -1;
	}
	flow_place(c->flows, &conn->flow);
	conn->fd = fd;
	if (conn_events(c, conn) || socket_setup(c, conn)) {
		conn->fd = -1;
		tcp_release(c, conn, false);
		return -1;
	}
	conn->flags |= CONN_SYN_SENT | CONN_WS_OK | CONN_SACK_OK |
	               (inany_is_v4(dst) ? 0 : CONN_V6);
	conn->mss = guest_mss(c, conn, 0);
	conn->snd_una = tcp_isn(c->flows, dst, dport, src, sport);
	conn->snd_nxt = conn->snd_max = conn->snd_una + 1;
	conn->last_active = clock_s();
	tcp_send_flags(c, conn, TH_SYN, conn->snd_una, TCP_WINDOW_MAX);
	tcp_arm_timer(conn, tcp_syn_rto_ms(conn));
	count_flows(c);
	return 0;
}

/**
 * tcp_peek_in_use() - whether this driver peeks with SO_PEEK_OFF
 * @c:		context after tcp_init()
 * @family:	AF_INET or AF_INET6
 *
 * Return: the start-up probe's result for @family
 */
bool tcp_peek_in_use(const struct ctx *c, int family)
{
	if (!c->tcp)
		return false;
	return family == AF_INET6 ? c->tcp->peek_off6 : c->tcp->peek_off4;
}

/**
 * tcp_init() - allocate the TCP state and probe the kernel
 * @c:		context, with its flow table (flow_init())
 *
 * Return: 0 on success, -1 after printing one error line
 */
int tcp_init(struct ctx *c)
{
	c->tcp = calloc(1, sizeof(*c->tcp));
	if (!c->tcp) {
		err_errno(ENOMEM, "tcp: allocate the TCP state");
		return -1;
	}
	if (!(event_base_get_features(c->base) & EV_FEATURE_ET)) {
		err_msg("tcp: the event loop lacks edge-triggered events");
		return -1;
	}
	if (tcp_later_init(c) || tcp_owed_init(c))
		return -1;
	c->tcp->peek_off4 = probe_tcp_peek_off(AF_INET);
	c->tcp->peek_off6 = probe_tcp_peek_off(AF_INET6);
	debug_msg("tcp: peeking at host data: IPv4 %s, IPv6 %s (SO_PEEK_OFF "
	          "for TCP came in Linux 6.10 and 6.12)",
	          probe_peek_mode(c->tcp->peek_off4),
	          probe_peek_mode(c->tcp->peek_off6));
	return 0;
}

/**
 * release_one() - flow_walk() callback: close one connection at exit
 * @f:		a TCP flow
 * @arg:	unused
 *
 * The guest gets a reset: its path to the host is gone, and a namespace
 * that outlives tapir would otherwise retransmit into the void. So does
 * the host peer of a connection the guest never closed: a FIN would tell
 * it that the guest sent all it meant to.
 */
static void release_one(struct flow_common *f, void *arg)
{
	struct tcp_conn *conn = (struct tcp_conn *)f;
	struct ctx *c = flow_enter(f);

	(void)arg;
	tcp_reset_guest(c, conn);
	tcp_release(c, conn, !(conn->flags & CONN_GUEST_FIN));
}

/**
 * tcp_cleanup() - close every connection and free the TCP state
 * @c:		context
 */
void tcp_cleanup(struct ctx *c)
{
	if (!c->tcp)
		return;
	tcp_flush(c);
	if (c->flows)
		flow_walk(c->flows, FLOW_TCP, release_one, NULL);
	tcp_later_cleanup(c);
	tcp_owed_cleanup(c);
	free(c->tcp);
	c->tcp = NULL;
}
