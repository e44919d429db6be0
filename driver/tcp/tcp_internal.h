/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - TCP module internals shared by tcp.c, tcp_data.c and tcp_timer.c
 */
#ifndef TAPIR_TCP_INTERNAL_H
#define TAPIR_TCP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <event2/util.h>

#include "driver/cond/cond.h"
#include "driver/core/ctx.h"
#include "driver/tcp/tcp_conn.h"

struct tcp_seg;

#ifndef SO_PEEK_OFF
#define SO_PEEK_OFF 42
#endif
#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

/* Largest window we advertise; the tap's txqueuelen is sized for it. */
#define TCP_WINDOW_MAX (8U << 20)
/* Host data peeked and sent per connection per wakeup, in bytes and in
 * frames, before other connections get a turn.
 */
#define TCP_BATCH_BYTES (1U << 20)
/* The discard buffer, reused for every TCP_DISCARD_BUF bytes skipped. */
#define TCP_DISCARD_BUF (1U << 16)
#define TCP_BATCH_FRAMES 256
/* Without SO_PEEK_OFF each peek re-reads the bytes in flight into a
 * discard buffer: bound them, so a peek costs at most this much more.
 */
#define TCP_DISCARD_MAX (4U << 20)
/* ... and make each such peek worth it: it must be able to send at least
 * 1/TCP_DISCARD_RATIO of the bytes it skips, so that the bytes copied stay
 * within this many times the bytes sent (TCP_DISCARD_MAX is this many
 * batches).
 */
#define TCP_DISCARD_RATIO 4
#define TCP_RTO_MS 200
/* New data a silly window held back goes anyway after this, with nothing
 * in flight to bring an ACK (RFC 1122 4.2.3.4's override timeout: 0.1 to
 * 1 s).
 */
#define TCP_PERSIST_MS 200
#define TCP_RTO_MAX_SHIFT 6
/* First timeout of a SYN or SYN-ACK, as Linux (RFC 6298 2.1). */
#define TCP_SYN_RTO_MS 1000U
/* Longest any retransmission timer waits, whatever conditions add. */
#define TCP_TIMER_MAX_MS 120000U
#define TCP_MAX_RETRIES 12
#define TCP_SYN_RETRIES 5
#define TCP_IDLE_S 7200
/* An ACK for in-order data waits at most this for a segment to ride on,
 * and a drained host socket as long for a send that shows it alive
 * (tcp_later.c); after an ACK waited that long, the next this many go at
 * once.
 */
#define TCP_LATER_MS 10
#define TCP_QUICKACKS 8
/* Duplicate ACKs that start the guest's fast retransmit (RFC 5681's
 * DupThresh): its sender counts them to find a hole, with SACK too
 * (RFC 6675's DupThresh).
 */
#define TCP_DUPTHRESH 3
/* With SO_PEEK_OFF, bytes the guest ACKed leave the receive queue once
 * this many have gathered (or the connection closes), not one recv() per
 * ACK; the host's window loses at most this much meanwhile.
 */
#define TCP_DISCARD_BATCH (16U << 10)
/* What one send() may take of a socket's send buffer beyond its bytes: a
 * new skb's own size, rounded up (tcp_rcv_window()'s estimate).
 */
#define TCP_SEND_OVERHEAD 2048U
/* Segments after a hole held per connection (tcp_ooo.c), and their cost
 * per connection and per thread: a few flights at the rates a lossy link
 * allows, and the thread's bound well under what one stalled host socket
 * may hold.
 */
#define TCP_OOO_SEGS 512U
#define TCP_OOO_CONN_MAX (2U << 20)
#define TCP_OOO_THREAD_MAX (32U << 20)
/* Host data in flight that tapir keeps itself under network conditions
 * (tcp_stash.c), per connection and per thread: what the largest window a
 * guest offers by default (tcp_rmem's 6 MiB) needs, and eight such
 * connections a thread.
 */
#define TCP_STASH_CONN_MAX (8U << 20)
#define TCP_STASH_THREAD_MAX (64U << 20)
/* Resets a partition keeps from the guest, per thread (tcp_owed.c). */
#define TCP_OWED_MAX 256U
/* A connection marked for release once it leaves the flush list. */
#define CONN_DEAD (1U << 31)

/**
 * struct tcp_owed - a reset owed to the guest once no partition cuts it
 *		     (tcp_owed.c)
 * @key:	the connection's addresses and ports
 * @flags:	its flags (CONN_V6, CONN_WS_OK)
 * @snd_una:	its oldest byte the guest had not ACKed
 * @snd_nxt:	its next byte to send
 * @snd_max:	the byte after the last it ever sent
 * @rcv_nxt:	the next byte it expected from the guest
 */
struct tcp_owed {
	struct flow_key key;
	uint32_t flags;
	uint32_t snd_una;
	uint32_t snd_nxt;
	uint32_t snd_max;
	uint32_t rcv_nxt;
};

/**
 * struct tcp_state - the TCP module's part of the context (its
 *		      connections are in the context's flow table)
 * @flush_head:	connections owing an ACK at the end of the tap batch
 * @later:	connections with something to do TCP_LATER_MS after they
 *		joined (tcp_later.c), oldest first
 * @later_timer: does it
 * @peek_off4:	the kernel has SO_PEEK_OFF for TCP over IPv4 (Linux 6.10),
 *		probed at start; connections use it where it has
 * @peek_off6:	the same for IPv6 (Linux 6.12)
 * @peek_buf:	peeked host data on its way into frames: one batch
 * @discard_buf: without SO_PEEK_OFF, the bytes in flight are peeked again
 *		into this, as often as needed: it stays in the cache, and
 *		its contents are never read
 * @discard_copied: bytes peeks copied into @discard_buf, all connections
 *		together: the price of peeking without SO_PEEK_OFF, which
 *		tests weigh against the bytes sent
 * @ooo_cost:	what the segments held after holes cost, all connections
 *		together (tcp_ooo.c)
 * @stash_cost:	what the host data kept in flight costs, all connections
 *		together (tcp_stash.c)
 * @ooo_steps:	held segments looked at beyond the first, to place one or
 *		to build a SACK option (tcp_ooo.c): what tests count
 * @timer_arms:	times a connection's timer went to libevent (tcp_timer.c):
 *		what tests count
 * @owed_timer:	looks at @owed once a second while it holds any
 * @nowed:	entries in @owed
 * @owed:	resets a partition keeps from the guest (tcp_owed.c)
 */
struct tcp_state {
	struct tcp_conn *flush_head;
	struct list later;
	struct event *later_timer;
	bool peek_off4;
	bool peek_off6;
	uint64_t discard_copied;
	size_t ooo_cost;
	size_t stash_cost;
	uint64_t ooo_steps;
	uint64_t timer_arms;
	struct event *owed_timer;
	unsigned int nowed;
	struct tcp_owed owed[TCP_OWED_MAX];
	uint8_t peek_buf[TCP_BATCH_BYTES];
	uint8_t discard_buf[TCP_DISCARD_BUF];
};

/**
 * seq_lt() - sequence number comparison, modulo 2^32
 * @a:		one
 * @b:		other
 *
 * Return: true if @a comes before @b
 */
static inline bool seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* Every function below that may release the connection returns
 * TCP_RELEASED when it did, and its callers must stop touching the entry:
 * the compiler insists that they look.
 */
#define TCP_RELEASED (-1)
#define TCP_MUST_CHECK __attribute__((warn_unused_result))

/* tcp.c: connection life */
void tcp_release(struct ctx *c, struct tcp_conn *conn, bool reset);
void tcp_abort(struct ctx *c, struct tcp_conn *conn, bool rst_guest);
void tcp_schedule_ack(struct ctx *c, struct tcp_conn *conn);
void tcp_schedule_data_ack(struct ctx *c, struct tcp_conn *conn);
void tcp_schedule_push(struct ctx *c, struct tcp_conn *conn);
TCP_MUST_CHECK int tcp_maybe_finish(struct ctx *c, struct tcp_conn *conn);

/* tcp_data.c: data both ways, windows, retransmission */
uint32_t tcp_rcv_window(struct tcp_conn *conn);
int tcp_wait_writable(struct tcp_conn *conn);
TCP_MUST_CHECK int tcp_host_to_guest(struct ctx *c, struct tcp_conn *conn);
int tcp_discard_acked(struct tcp_conn *conn);
TCP_MUST_CHECK int tcp_discard_now(struct ctx *c, struct tcp_conn *conn);
TCP_MUST_CHECK int tcp_host_check(struct ctx *c, struct tcp_conn *conn);
TCP_MUST_CHECK int tcp_rewind_to_una(struct ctx *c, struct tcp_conn *conn);
TCP_MUST_CHECK int tcp_send_persist(struct ctx *c, struct tcp_conn *conn);
TCP_MUST_CHECK int tcp_process_ack(struct ctx *c, struct tcp_conn *conn,
                                   const struct tcp_seg *s);
TCP_MUST_CHECK int tcp_process_data(struct ctx *c, struct tcp_conn *conn,
                                    const struct tcp_seg *s);
TCP_MUST_CHECK int tcp_take_held(struct ctx *c, struct tcp_conn *conn);

/**
 * struct tcp_ooo_seg - a guest segment held after a hole (tcp_ooo.c)
 * @next:	the next held, by sequence number
 * @prev:	the one before
 * @seq:	sequence number of @data[0]
 * @len:	bytes in @data
 * @fin:	the guest's FIN follows them
 * @data:	payload
 */
struct tcp_ooo_seg {
	struct tcp_ooo_seg *next;
	struct tcp_ooo_seg *prev;
	uint32_t seq;
	uint32_t len;
	bool fin;
	uint8_t data[];
};

/* SACK blocks a pure ACK carries: 4 fit in the 40 bytes of options,
 * with 2 NOPs for alignment (RFC 2018 section 3).
 */
#define TCP_SACK_BLOCKS 4
#define TCP_SACK_OPTLEN_MAX (4 + 8 * TCP_SACK_BLOCKS)

/* tcp_ooo.c: segments after a hole */
bool tcp_ooo_hold(struct ctx *c, struct tcp_conn *conn, uint32_t seq,
                  const uint8_t *data, uint32_t len, bool fin);
struct tcp_ooo_seg *tcp_ooo_ready(struct ctx *c, struct tcp_conn *conn);
void tcp_ooo_free(struct ctx *c, struct tcp_conn *conn);
bool tcp_ooo_waits(const struct tcp_conn *conn);
void tcp_ooo_dsack(struct tcp_conn *conn, uint32_t seq, uint32_t len);
size_t tcp_ooo_sack(struct ctx *c, struct tcp_conn *conn, uint32_t wnd,
                    uint8_t *opt);

/* tcp_stash.c: host data in flight kept out of the socket */
uint32_t tcp_stash_room(const struct ctx *c, const struct tcp_conn *conn);
int tcp_stash_iov(struct ctx *c, struct tcp_conn *conn, uint32_t len,
                  struct iovec *iov, int max);
void tcp_stash_commit(struct ctx *c, struct tcp_conn *conn, uint32_t len);
void tcp_stash_trim(struct ctx *c, struct tcp_conn *conn, uint32_t len);
void tcp_stash_copy(const struct tcp_conn *conn, uint32_t off, uint8_t *dst,
                    uint32_t len);
void tcp_stash_free(struct ctx *c, struct tcp_conn *conn);

/* tcp_owed.c: resets a partition keeps from the guest */
void tcp_reset_guest(struct ctx *c, struct tcp_conn *conn);
void tcp_reset_or_owe(struct ctx *c, struct tcp_conn *conn);
int tcp_owed_init(struct ctx *c);
void tcp_owed_cleanup(struct ctx *c);

/* tcp_later.c: delayed ACKs, host socket checks and discards */
void tcp_ack_owed(struct ctx *c, struct tcp_conn *conn);
void tcp_ack_sent(struct tcp_conn *conn);
int tcp_later_add(struct ctx *c, struct tcp_conn *conn, uint32_t reason);
void tcp_later_done(struct tcp_conn *conn, uint32_t reason);
void tcp_later_forget(struct ctx *c, struct tcp_conn *conn);
int tcp_later_init(struct ctx *c);
void tcp_later_cleanup(struct ctx *c);

/* tcp_timer.c: timers */
void tcp_arm_timer(struct tcp_conn *conn, unsigned int ms);
unsigned int tcp_rto_ms(struct tcp_conn *conn, unsigned int retries);
unsigned int tcp_syn_rto_ms(struct tcp_conn *conn);
bool tcp_cond(struct tcp_conn *conn, struct cond_tcp *t);
unsigned int tcp_cut(struct tcp_conn *conn);
TCP_MUST_CHECK int tcp_retransmit_handshake(struct ctx *c,
                                            struct tcp_conn *conn);
void tcp_timer_expire(struct tcp_conn *conn);
void tcp_timer_cb(evutil_socket_t fd, short what, void *arg);

#endif /* TAPIR_TCP_INTERNAL_H */
