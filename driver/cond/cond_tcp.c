// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - network conditions: what the rules in force mean for one TCP
 * connection, its flight each way and its timers
 *
 * tapir is TCP's sender towards the guest and sets the window the guest
 * sends into, so it can do what a sender at a real bottleneck is made to
 * do: keep the path's delay × rate in flight, no more, and leave the rest
 * in the sender. And its timers must wait out the delay the rules add.
 * Each answer is for the rules that match this connection's frames, so
 * that a rule scoped elsewhere changes nothing here.
 */

#include <stdint.h>

#include "driver/core/clock.h"
#include "driver/cond/cond_internal.h"

/* What a connection under a rate sends at once: that rate's worth of this
 * long, at least COND_SEND_MIN (a few segments: pacing, while headers stay
 * a small part of each frame).
 */
#define COND_SEND_NS 5000000ULL
#define COND_SEND_MIN 6000U
/* The least flight a connection sharing a rate keeps, its share however
 * small: one segment of MTU 1500, so that its ACKs keep coming. So many
 * connections' least flights still fit the slack of the rate's queue
 * (flight_of()'s frame): 32 at 2 Mbit/s take 47 KB of its 79.
 */
#define COND_SHARE_MIN 1460U
/* Longest a timer may wait, whatever the rules add (120 s). */
#define COND_TCP_EXTRA_MAX_MS 120000U

/**
 * one_way_ns() - the most a rule delays a frame, jitter included
 * @r:		rule, or NULL
 *
 * Return: nanoseconds
 */
static uint64_t one_way_ns(const struct cond_rule *r)
{
	if (!r)
		return 0;
	return r->delay_ns + r->jitter_ns * (r->dist == COND_NORMAL ? 6 : 1);
}

/**
 * queue_of() - the most a rule's rate queues a frame
 * @r:		rule, or NULL
 *
 * Return: nanoseconds, 0 without a rate
 */
static uint64_t queue_of(const struct cond_rule *r)
{
	return r && r->rate_bps ? cond_queue_ns(r) : 0;
}

/**
 * flight_of() - the bytes a rate lets be in flight on a path
 * @r:		rule with a rate
 * @rtt_ns:	the round trip the rules add to the path
 *
 * Its delay × rate, half the rate's queue, the burst and one frame.
 *
 * Return: bytes, at most UINT32_MAX
 */
static uint32_t flight_of(const struct cond_rule *r, uint64_t rtt_ns)
{
	double bytes = (double)(rtt_ns + COND_QUEUE_NS / 2) *
	                       (double)r->rate_bps / 8e9 +
	               (double)r->burst + 65536;

	return bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
}

/**
 * sharers() - how many connections share a rule's rate to the guest
 * @st:		thread's conditions
 * @i:		the rule, with a rate
 * @win_ns:	how long a window of the count lasts: a few round trips,
 *		so that every connection sending is counted in each
 * @f:		the asking connection, or NULL
 *
 * Connections count themselves, once per window, while they have at
 * least COND_SHARE_MIN in flight: a request/response connection that
 * sends little takes no share from the bulk ones. Counted by all threads
 * together; the count is the larger of this window's and the last one's,
 * so that a window just begun does not count only its first callers.
 *
 * Return: the count, at least 1
 */
static uint32_t sharers(const struct cond_state *st, unsigned int i,
                        uint64_t win_ns, struct cond_flow *f)
{
	uint64_t *users = &st->sh->users[i];
	uint32_t ep = (uint32_t)(clock_ns() / win_ns), n, prev;
	uint64_t w = __atomic_load_n(users, __ATOMIC_RELAXED);
	/* Another set of rules counts in windows of its own. */
	uint32_t tag = ep ^ (uint32_t)((uintptr_t)st->sh >> 4);

	while ((uint32_t)(w >> 32) != ep) {
		prev = (uint32_t)(w >> 32) == ep - 1 ? (uint32_t)w : 0;
		if (__atomic_compare_exchange_n(users, &w, (uint64_t)ep << 32,
		                                false, __ATOMIC_RELAXED,
		                                __ATOMIC_RELAXED)) {
			__atomic_store_n(&st->sh->users_prev[i], prev,
			                 __ATOMIC_RELAXED);
			w = (uint64_t)ep << 32;
		}
	}
	if (f && f->inflight >= COND_SHARE_MIN && f->mark != tag) {
		f->mark = tag;
		w = __atomic_add_fetch(users, 1, __ATOMIC_RELAXED);
	}
	n = (uint32_t)w;
	prev = __atomic_load_n(&st->sh->users_prev[i], __ATOMIC_RELAXED);
	n = n > prev ? n : prev;
	return n ? n : 1;
}

/**
 * cond_tcp() - what the rules in force mean for a TCP connection
 * @c:		context
 * @host:	the host side's address as the guest sees it
 * @hport:	its port
 * @gport:	the guest's port
 * @f:		the connection's own state, or NULL (no flight, not counted)
 * @t:		filled: nothing limited, without a rule that matches
 *
 * A rate holds what exceeds it; with more in flight than the path's
 * delay × rate, the excess would only queue. So a connection under a rate
 * keeps that product in flight each way, plus headroom (flight_of()), and
 * the rest waits in the sender: tapir's data in the host socket, the
 * guest's in the guest, through the window it is offered. The rule's
 * queue is shared by its connections to the guest: each keeps its share
 * of that flight (sharers()), at least COND_SHARE_MIN, so that together
 * they fit the queue and none starves; should the queue still fill past
 * what one connection would keep in it, one with more than COND_SHARE_MIN
 * in flight waits for its ACKs. That keeps TCP to the guest out of the
 * rate's drops; the guest's connections may still fill it together, and
 * their congestion control backs off, as at any bottleneck.
 */
void cond_tcp(struct ctx *c, const struct in6_addr *host, uint16_t hport,
              uint16_t gport, struct cond_flow *f, struct cond_tcp *t)
{
	struct cond_state *st = c->cond;
	const struct cond_rule *rg = NULL, *rh = NULL;
	uint64_t rtt, extra, send, queue;
	uint32_t share;
	int ig, ih;

	*t = (struct cond_tcp){UINT32_MAX, UINT32_MAX, UINT32_MAX, 0, 0, false};
	if (!st)
		return;
	cond_line_reload(st);
	ig = cond_tcp_rule(st, COND_TO_GUEST, host, hport, gport);
	ih = cond_tcp_rule(st, COND_TO_HOST, host, hport, gport);
	rg = ig >= 0 ? &st->set.r[ig] : NULL;
	rh = ih >= 0 ? &st->set.r[ih] : NULL;
	if (!rg && !rh)
		return;
	t->any = true;
	t->cut = (rg && rg->down ? COND_TO_GUEST : 0) |
	         (rh && rh->down ? COND_TO_HOST : 0);
	rtt = one_way_ns(rg) + one_way_ns(rh);
	extra = (rtt +
	         (queue_of(rg) > queue_of(rh) ? queue_of(rg) : queue_of(rh))) /
	        1000000;
	t->rto_extra_ms = extra > COND_TCP_EXTRA_MAX_MS ? COND_TCP_EXTRA_MAX_MS
	                                                : (uint32_t)extra;
	if (rg && rg->rate_bps) {
		send = COND_SEND_NS * rg->rate_bps / 8000000000ULL;
		t->burst =
		        send < COND_SEND_MIN ? COND_SEND_MIN : (uint32_t)send;
		queue = queue_of(rg);
		share = flight_of(rg, rtt) /
		        sharers(st, (unsigned int)ig, 2 * (rtt + queue), f);
		t->flight_max = share > COND_SHARE_MIN ? share : COND_SHARE_MIN;
		/* Past what one connection's flight leaves queued: half the
		 * queue, the burst and a frame.
		 */
		if (cond_backlog_ns(st, (unsigned int)ig, 0, clock_ns()) >
		    COND_QUEUE_NS / 2 + (uint64_t)((double)(65536 + rg->burst) *
		                                   8e9 / (double)rg->rate_bps))
			t->flight_max = COND_SHARE_MIN;
	}
	if (rh && rh->rate_bps)
		t->wnd_max = flight_of(rh, rtt);
}
