// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - resets a partition keeps from the guest, sent once it heals
 *
 * A connection that ends while a partition (a `down` rule) cuts its
 * frames to the guest, because the host reset it or its socket failed,
 * would send the guest a reset that the partition drops: the guest would
 * hold a connection that no longer exists, until it next sent on it. So
 * the reset is owed instead: its addresses and sequence numbers wait on a
 * short list per thread, which a timer looks at once a second while it
 * holds any, and the reset goes as soon as no partition cuts it.
 */

#include <string.h>
#include <event2/event.h>

#include "driver/core/log.h"
#include "driver/tcp/tcp_internal.h"
#include "driver/tcp/tcp_seg.h"

/* How often the list is looked at while it holds resets. */
#define TCP_OWED_CHECK_MS 1000

/**
 * tcp_reset_guest() - send the guest an RST it takes, whatever it got
 * @c:		context
 * @conn:	connection, or a copy of its addresses, flags and sequence
 *		numbers
 *
 * The guest takes an RST only at the sequence number it expects next
 * (RFC 5961). That is snd_una once it ACKed all it got; but segments may
 * be in flight, held by the conditions, or above snd_nxt after a timeout
 * rewound it. So one RST goes at each of snd_una, snd_nxt and snd_max
 * that differ; one the guest doesn't take costs a challenge ACK at most.
 * A full or vanished tap refuses them (counted): then the guest's own
 * timeouts end the connection, as they would have.
 */
void tcp_reset_guest(struct ctx *c, struct tcp_conn *conn)
{
	const uint32_t seqs[3] = {conn->snd_una, conn->snd_nxt, conn->snd_max};

	for (int i = 0; i < 3; i++)
		if (!i || (seqs[i] != seqs[0] && seqs[i] != seqs[i - 1]))
			(void)tcp_send_flags(c, conn, TH_RST | TH_ACK, seqs[i],
			                     0);
}

/**
 * send_owed() - send an owed reset, and take it off the list
 * @c:		context
 * @k:		its index
 */
static void send_owed(struct ctx *c, unsigned int k)
{
	struct tcp_state *ts = c->tcp;
	struct tcp_conn fake = {0};
	const struct tcp_owed *o = &ts->owed[k];

	fake.flow.key = o->key;
	fake.flags = o->flags;
	fake.snd_una = o->snd_una;
	fake.snd_nxt = o->snd_nxt;
	fake.snd_max = o->snd_max;
	fake.rcv_nxt = o->rcv_nxt;
	tcp_reset_guest(c, &fake);
	ts->owed[k] = ts->owed[--ts->nowed];
}

/**
 * owed_cut() - whether a partition still cuts an owed reset
 * @c:		context
 * @o:		the reset
 *
 * Return: true if so
 */
static bool owed_cut(struct ctx *c, const struct tcp_owed *o)
{
	struct cond_tcp t;

	if (!cond_active())
		return false;
	cond_tcp(c, &o->key.faddr, o->key.fport, o->key.gport, NULL, &t);
	return t.cut & COND_TO_GUEST;
}

/**
 * owed_arm() - look at the list again in TCP_OWED_CHECK_MS
 * @ts:		the thread's TCP state, its list not empty
 */
static void owed_arm(struct tcp_state *ts)
{
	static const struct timeval tv = {TCP_OWED_CHECK_MS / 1000, 0};
	static struct log_limit limit;

	if (!evtimer_pending(ts->owed_timer, NULL) &&
	    evtimer_add(ts->owed_timer, &tv))
		err_limited(&limit, 0,
		            "tcp: timer of the resets a partition holds: "
		            "libevent failed");
}

/**
 * owed_fired() - send the resets no partition cuts any more
 * @fd:		unused
 * @what:	unused
 * @arg:	context
 *
 * A look at each entry, once a second while any is owed: at most
 * TCP_OWED_MAX, whatever the connections held.
 */
static void owed_fired(evutil_socket_t fd, short what, void *arg)
{
	struct ctx *c = arg;

	(void)fd;
	(void)what;
	for (unsigned int k = c->tcp->nowed; k--;)
		if (!owed_cut(c, &c->tcp->owed[k]))
			send_owed(c, k);
	if (c->tcp->nowed)
		owed_arm(c->tcp);
}

/**
 * tcp_reset_or_owe() - reset the guest's side of a connection that ends,
 *			now or once no partition cuts it
 * @c:		context
 * @conn:	connection
 *
 * A full list sends one of its resets now, into the partition: the list
 * stays bounded, and that guest is where it would have been without it.
 */
void tcp_reset_or_owe(struct ctx *c, struct tcp_conn *conn)
{
	struct tcp_state *ts = c->tcp;
	struct tcp_owed *o;

	if (!(tcp_cut(conn) & COND_TO_GUEST)) {
		(void)tcp_send_flags(c, conn, TH_RST | TH_ACK, conn->snd_nxt,
		                     0);
		return;
	}
	if (ts->nowed == TCP_OWED_MAX)
		send_owed(c, 0);
	o = &ts->owed[ts->nowed++];
	*o = (struct tcp_owed){.key = conn->flow.key,
	                       .flags = conn->flags,
	                       .snd_una = conn->snd_una,
	                       .snd_nxt = conn->snd_nxt,
	                       .snd_max = conn->snd_max,
	                       .rcv_nxt = conn->rcv_nxt};
	owed_arm(ts);
}

/**
 * tcp_owed_init() - create the thread's timer for owed resets
 * @c:		context with its TCP state
 *
 * Return: 0, or -1 after printing one error line
 */
int tcp_owed_init(struct ctx *c)
{
	c->tcp->owed_timer = evtimer_new(c->base, owed_fired, c);
	if (!c->tcp->owed_timer) {
		err_msg("tcp: timer of the resets a partition holds: libevent "
		        "failed");
		return -1;
	}
	return 0;
}

/**
 * tcp_owed_cleanup() - send what is owed, partition or not, and free the
 *			timer
 * @c:		context
 */
void tcp_owed_cleanup(struct ctx *c)
{
	while (c->tcp->nowed)
		send_owed(c, c->tcp->nowed - 1);
	if (c->tcp->owed_timer)
		event_free(c->tcp->owed_timer);
	c->tcp->owed_timer = NULL;
}
