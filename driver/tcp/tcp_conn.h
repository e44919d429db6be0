/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - TCP connections in the flow table: lookup by four-tuple, ISN
 */
#ifndef TAPIR_TCP_CONN_H
#define TAPIR_TCP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "driver/core/list.h"
#include "driver/flow/flow.h"

struct event;

enum tcp_conn_flag {
	CONN_CONNECTING = 1 << 0,  /* host connect() in progress */
	CONN_SYN_RCVD = 1 << 1,    /* SYN-ACK sent to guest, awaiting ACK */
	CONN_SYN_SENT = 1 << 2,    /* inbound: SYN sent to guest */
	CONN_ESTABLISHED = 1 << 3, /* both sides synchronised */
	CONN_GUEST_FIN = 1 << 4,   /* guest closed its side: host SHUT_WR */
	CONN_HOST_EOF = 1 << 5,    /* host socket reached end of stream */
	CONN_FIN_SENT = 1 << 6,    /* our FIN is in flight to the guest */
	CONN_FIN_ACKED = 1 << 7,   /* the guest acknowledged our FIN */
	CONN_ACK_PENDING = 1 << 8, /* an ACK is owed at the end of the batch */
	CONN_SOCK_FULL = 1 << 9,   /* window 0 advertised, waiting EPOLLOUT */
	CONN_READ_PENDING = 1 << 10, /* host data may wait for guest window */
	CONN_IN_FLUSH = 1 << 11,     /* linked on the flush list */
	CONN_WS_OK = 1 << 12,        /* window scaling negotiated */
	CONN_V6 = 1 << 13,           /* the guest side is IPv6 */
	CONN_DATA_DROPPED = 1 << 14, /* guest data didn't fit the socket */
	CONN_NO_PEEK_OFF = 1 << 15,  /* peeks skip the bytes in flight */
	CONN_PUSH_PENDING = 1 << 16, /* host data to send after the batch */
	CONN_FIN_EVER = 1 << 17,     /* our FIN went out once: at snd_max - 1 */
	CONN_RECOVERY = 1 << 18,     /* fast retransmit done, until @recover */
	CONN_PERSIST = 1 << 19, /* the timer sends what a silly window held */
	CONN_ACK_NOW = 1 << 20, /* the owed ACK may not wait (tcp_later.c) */
	CONN_DELACK = 1 << 21,  /* an ACK waits on the later list */
	CONN_HOST_CHECK = 1 << 22, /* a poll of the host socket waits there */
	CONN_LATER = 1 << 23,      /* linked on the later list */
	CONN_CHECK_NOW = 1 << 24,  /* the next drained peek polls */
	CONN_NO_INQ = 1 << 25,     /* peeks don't report TCP_INQ */
	CONN_TURN = 1 << 26,    /* host data went out since our last lone ACK */
	CONN_DISCARD = 1 << 27, /* a discard of ACKed bytes waits (later) */
	CONN_SACK_OK = 1 << 28, /* SACK permitted both ways (RFC 2018) */
	CONN_DSACK = 1 << 29,   /* a duplicate to report in the next ACK */
};

/**
 * struct tcp_conn - one guest TCP connection and its host socket
 * @flow:	flow table part: the key holds the guest address and port
 *		(gaddr, gport) and the remote ones as the guest sees them
 *		(faddr, fport)
 * @flags:	enum tcp_conn_flag bits
 * @flush_next:	next entry on the flush list
 * @fd:		host socket, -1 for a free entry
 * @rev:	edge-triggered read event on @fd
 * @wev:	one-shot edge-triggered write event (connect completion,
 *		buffer space); both events on @fd must be edge-triggered, or
 *		libevent registers the fd level-triggered and the unacked
 *		data MSG_PEEK leaves in the socket reports it readable on
 *		every loop turn
 * @timer:	retransmission, probe and idle timer, pending at @timer_fire
 *		and re-armed only when the deadline moves earlier
 *		(tcp_timer.c)
 * @timer_at:	when the timer is due (clock_ns()), 0 for never
 * @timer_fire:	when @timer fires, as last armed (clock_ns()), 0 if it
 *		is not pending
 * @snd_una:	oldest sequence number sent to the guest and not acked
 * @snd_nxt:	next sequence number to send to the guest
 * @snd_max:	highest sequence number sent so far, plus one (above
 *		@snd_nxt after a retransmission timeout rewound it)
 * @recover:	@snd_nxt when a fast retransmit began: until the guest ACKs
 *		it, more duplicate ACKs retransmit nothing (NewReno)
 * @rcv_nxt:	next sequence number expected from the guest
 * @snd_wnd:	guest's receive window, in bytes
 * @max_wnd:	largest window the guest ever offered (RFC 9293's
 *		Max(SND.WND)), for silly window avoidance
 * @snd_ws:	shift for the guest's window field
 * @mss:	largest segment payload toward the guest
 * @retries:	retransmissions without progress
 * @probes:	zero-window probes since the window closed
 * @dupacks:	duplicate ACKs seen in a row
 * @last_ack:	last ACK number seen from the guest, for dupack counting
 * @last_active: last time (CLOCK_MONOTONIC s) anything happened
 * @rcv_acked:	the acknowledgement number of our last segment to the guest
 * @quickacks:	ACKs still to send at once, after a delayed one had to
 *		wait for its timer (tcp_later.c)
 * @dupacks_owed: duplicate ACKs owed for this batch's out-of-order
 *		segments, one each, at most TCP_DUPTHRESH
 * @ooo_segs:	segments held after a hole (tcp_ooo.c)
 * @ooo_cost:	what they cost, bytes and overhead
 * @ooo_last:	sequence number of the one that came last: its SACK
 *		block goes first (RFC 2018 section 4)
 * @dsack_left:	first byte of the duplicate the next ACK reports as its
 *		first SACK block (D-SACK, RFC 2883), with CONN_DSACK
 * @dsack_right: the byte after its last
 * @ooo:	the first of them, in sequence order
 * @ooo_tail:	the last of them
 * @ooo_hint:	the one at @ooo_last, NULL once freed: the next segment
 *		usually goes near it
 * @ooo_end:	the highest sequence number past a held byte
 * @ooo_right:	the same, a held FIN counted
 * @ooo_run:	the first sequence number of the tail run: from it to
 *		@ooo_right, every byte is held (with @ooo_run_ok)
 * @ooo_minlen:	at most the smallest segment held, 0 for none
 * @ooo_run_ok:	@ooo_run is known
 * @later:	its links on the later list (tcp_later.c)
 * @later_at:	when it joined the list (clock_ns())
 * @peek_inq:	what the last peek's TCP_INQ said the receive queue holds
 *		(its FIN counts 1), -1 if it said nothing
 * @wnd_est:	window computed at the last SO_MEMINFO query, 0 for none
 * @wnd_used:	what sends since then may have taken of it (tcp_data.c)
 * @undiscarded: bytes the guest ACKed that still sit at the head of the
 *		receive queue (SO_PEEK_OFF only: discards are batched)
 * @stash:	host data from snd_una on that tapir read out of the socket
 *		and keeps until the guest ACKs it (tcp_stash.c), first chunk
 * @stash_tail:	the chunk the next bytes read go to
 * @stash_len:	bytes kept: the socket's queue starts at snd_una + this
 * @stash_head:	offset of snd_una in the first chunk
 * @stash_cost:	what the chunks cost, bytes and overhead
 * @cond_mark:	when it last counted itself among the connections that
 *		share a rate (cond_tcp.c)
 */
struct tcp_ooo_seg;
struct tcp_stash_chunk;

struct tcp_conn {
	struct flow_common flow;
	uint32_t flags;
	struct tcp_conn *flush_next;
	int fd;
	struct event *rev;
	struct event *wev;
	struct event *timer;
	uint64_t timer_at;
	uint64_t timer_fire;
	uint32_t snd_una;
	uint32_t snd_nxt;
	uint32_t snd_max;
	uint32_t recover;
	uint32_t rcv_nxt;
	uint32_t snd_wnd;
	uint32_t max_wnd;
	uint8_t snd_ws;
	uint16_t mss;
	uint8_t retries;
	uint8_t probes;
	uint8_t dupacks;
	uint32_t last_ack;
	uint64_t last_active;
	uint32_t rcv_acked;
	uint8_t quickacks;
	uint8_t dupacks_owed;
	uint16_t ooo_segs;
	uint16_t ooo_minlen;
	bool ooo_run_ok;
	uint32_t ooo_cost;
	uint32_t ooo_last;
	uint32_t dsack_left;
	uint32_t dsack_right;
	struct tcp_ooo_seg *ooo;
	struct tcp_ooo_seg *ooo_tail;
	struct tcp_ooo_seg *ooo_hint;
	uint32_t ooo_end;
	uint32_t ooo_right;
	uint32_t ooo_run;
	struct list_node later;
	uint64_t later_at;
	int32_t peek_inq;
	uint32_t wnd_est;
	uint32_t wnd_used;
	uint32_t undiscarded;
	struct tcp_stash_chunk *stash;
	struct tcp_stash_chunk *stash_tail;
	uint32_t stash_len;
	uint32_t stash_head;
	uint32_t stash_cost;
	uint32_t cond_mark;
};

/* A connection released while tcp_flush() still holds it keeps only its
 * flow part, flags and flush link until then; everything from @fd on is dead (and
 * poisoned under ASan).
 */
#define TCP_CONN_DEAD_FROM offsetof(struct tcp_conn, fd)

_Static_assert(sizeof(struct tcp_conn) <= FLOW_ENTRY_SIZE,
               "a connection fits a flow table entry");

struct tcp_conn *tcp_conn_lookup(const struct flow_table *t,
                                 const struct in6_addr *gaddr, uint16_t gport,
                                 const struct in6_addr *raddr, uint16_t rport);
struct tcp_conn *tcp_conn_alloc(struct flow_table *t,
                                const struct in6_addr *gaddr, uint16_t gport,
                                const struct in6_addr *raddr, uint16_t rport);
void tcp_conn_retire(struct flow_table *t, struct tcp_conn *conn);
void tcp_conn_release(struct flow_table *t, struct tcp_conn **connp);
uint32_t tcp_isn(const struct flow_table *t, const struct in6_addr *gaddr,
                 uint16_t gport, const struct in6_addr *raddr, uint16_t rport);

#endif /* TAPIR_TCP_CONN_H */
