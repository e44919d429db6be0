// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - datapath threads: every thread's counters, for get_stats
 *
 * Each thread writes only its own counters. get_stats gets the others'
 * from the copy each makes when asked, so no counter is read while it is
 * written, and nothing waits for a thread: the main thread asks every
 * worker in one round, goes on with its loop, and answers the waiting
 * requests when the last copy is in, or after STATS_WAIT_MS with the
 * latest copy of a worker that is behind. A request that arrives during a
 * round waits for the next one, so that its counts are never older than
 * the request. A worker whose loop ended is not asked: its last copy is
 * final.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "driver/core/log.h"
#include "driver/thread/thread_internal.h"

/* How long a round waits for the workers' copies at most, by default. */
#define STATS_WAIT_MS 200

/* threads_stats_set_wait(): the unit tests' own deadline, or 0. */
static unsigned int wait_ms_set;
/* Requests waiting at once: as many as the API has connections. */
#define STATS_WAITERS 64

/**
 * struct stats_waiter - a request waiting for a round
 * @fn:		called with the counters
 * @arg:	its argument, which also names the request
 * @round:	the round whose counts it needs
 */
struct stats_waiter {
	threads_stats_fn *fn;
	void *arg;
	uint64_t round;
};

/**
 * struct stats_rounds - the main thread's rounds of copies
 * @c:		main context
 * @w:		waiting requests
 * @nw:		entries in @w
 * @started:	rounds started so far
 * @running:	round @started is under way
 * @asked_gen:	per worker, its @snap_gen when the round asked it
 * @waiting:	per worker, the round still waits for its copy
 * @deadline:	ends a round after STATS_WAIT_MS
 */
struct stats_rounds {
	struct ctx *c;
	struct stats_waiter w[STATS_WAITERS];
	unsigned int nw;
	uint64_t started;
	bool running;
	uint64_t asked_gen[TAPIR_MAX_QUEUES];
	bool waiting[TAPIR_MAX_QUEUES];
	struct event *deadline;
};

/**
 * stats_add() - add every counter of @s to @sum
 * @sum:	total
 * @s:		one thread's counters
 */
void stats_add(struct stats *sum, const struct stats *s)
{
	sum->tap_rx_frames += s->tap_rx_frames;
	sum->tap_rx_bytes += s->tap_rx_bytes;
	sum->tap_tx_frames += s->tap_tx_frames;
	sum->tap_tx_bytes += s->tap_tx_bytes;
	for (int p = 0; p < PROTO_COUNT; p++) {
		sum->to_host[p].packets += s->to_host[p].packets;
		sum->to_host[p].bytes += s->to_host[p].bytes;
		sum->to_guest[p].packets += s->to_guest[p].packets;
		sum->to_guest[p].bytes += s->to_guest[p].bytes;
		sum->flows[p] += s->flows[p];
	}
	for (int r = 0; r < DROP_REASONS; r++)
		sum->drops[r] += s->drops[r];
	for (int n = 0; n < CC_COUNT; n++)
		sum->cond[n] += s->cond[n];
	for (int q = 0; q < TAPIR_MAX_QUEUES; q++) {
		sum->queues[q].rx_frames += s->queues[q].rx_frames;
		sum->queues[q].rx_bytes += s->queues[q].rx_bytes;
		sum->queues[q].tx_frames += s->queues[q].tx_frames;
		sum->queues[q].tx_bytes += s->queues[q].tx_bytes;
	}
}

/**
 * threads_stats_now() - the counters of every thread, added up, as far as
 *			 their last copies go; nothing waits
 * @c:		main context
 * @sum:	filled
 */
void threads_stats_now(struct ctx *c, struct stats *sum)
{
	*sum = c->stats;
	if (!c->threads)
		return;
	for (unsigned int i = 1; i < c->threads->n; i++) {
		struct thread *t = &c->threads->t[i];

		pthread_mutex_lock(&t->lock);
		stats_add(sum, &t->snap);
		pthread_mutex_unlock(&t->lock);
	}
}

/**
 * stats_copy() - a worker copies its counters, asked by MSG_STATS, and
 *		  tells the main thread
 * @t:		the worker
 *
 * If the main thread can't be told (no memory), the round ends at its
 * deadline, with this copy.
 */
void stats_copy(struct thread *t)
{
	struct msg *m = msg_new(MSG_STATS_DONE, 0);

	pthread_mutex_lock(&t->lock);
	t->snap = t->c->stats;
	t->snap_gen++;
	t->stats_asked = false;
	pthread_mutex_unlock(&t->lock);
	if (m) {
		m->from = t->c->thread;
		inbox_post(&t->set->t[0], m);
	}
}

/**
 * ask() - ask a worker for a copy of its counters, unless one is on its
 *	   way already
 * @t:		worker
 * @gen:	set to its copies so far: a later one answers
 *
 * Return: true if a copy will come; false if the worker's loop ended, or
 *	   no request could be sent
 */
static bool ask(struct thread *t, uint64_t *gen)
{
	struct msg *m = NULL;
	bool asked, ended;

	pthread_mutex_lock(&t->lock);
	*gen = t->snap_gen;
	asked = t->stats_asked;
	ended = t->ended;
	if (!asked && !ended) {
		m = msg_new(MSG_STATS, 0);
		t->stats_asked = m != NULL;
	}
	pthread_mutex_unlock(&t->lock);
	if (ended)
		return false;
	if (asked)
		return true;
	return m && !inbox_post(t, m);
}

/**
 * start_round() - ask every worker, and arm the deadline
 * @r:		rounds, none running
 *
 * Return: true if a copy is to come; false if none is (the round is
 *	   complete at once)
 */
static bool start_round(struct stats_rounds *r)
{
	unsigned int ms = wait_ms_set ? wait_ms_set : STATS_WAIT_MS;
	const struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	struct thread_set *set = r->c->threads;
	static struct log_limit limit;
	bool any = false;

	r->started++;
	for (unsigned int i = 1; i < set->n; i++) {
		r->waiting[i] = ask(&set->t[i], &r->asked_gen[i]);
		any |= r->waiting[i];
	}
	r->running = any;
	/* Without the deadline, a worker that never answers would hold
	 * every request: answer them now with what there is instead.
	 */
	if (any && evtimer_add(r->deadline, &tv)) {
		err_limited(&limit, 0,
		            "get_stats: arm a timer: libevent failed");
		r->running = false;
	}
	return r->running;
}

/**
 * finish_round() - answer the requests the round was for, and start the
 *		    next one if others wait
 * @r:		rounds
 *
 * Callbacks may add or forget requests: the ones answered are taken out
 * of the list first.
 */
static void finish_round(struct stats_rounds *r)
{
	struct stats_waiter done[STATS_WAITERS];
	unsigned int n = 0, keep = 0;
	struct stats sum;

	r->running = false;
	evtimer_del(r->deadline);
	for (unsigned int i = 0; i < r->nw; i++) {
		if (r->w[i].round <= r->started)
			done[n++] = r->w[i];
		else
			r->w[keep++] = r->w[i];
	}
	r->nw = keep;
	/* The ones that came during the round need one of their own; if
	 * it has no copy to wait for, it is complete now.
	 */
	if (r->nw && !start_round(r)) {
		for (unsigned int i = 0; i < r->nw; i++)
			done[n++] = r->w[i];
		r->nw = 0;
	}
	threads_stats_now(r->c, &sum);
	for (unsigned int i = 0; i < n; i++)
		done[i].fn(done[i].arg, &sum);
}

/**
 * stats_copied() - the main thread hears that worker @from copied its
 *		    counters
 * @c:		main context
 * @from:	the worker
 */
void stats_copied(struct ctx *c, unsigned int from)
{
	struct stats_rounds *r = c->threads->rounds;
	struct thread *t;
	uint64_t gen;

	if (!r->running || from >= c->threads->n || !r->waiting[from])
		return;
	t = &c->threads->t[from];
	pthread_mutex_lock(&t->lock);
	gen = t->snap_gen;
	pthread_mutex_unlock(&t->lock);
	if (gen <= r->asked_gen[from])
		return;
	r->waiting[from] = false;
	for (unsigned int i = 1; i < c->threads->n; i++)
		if (r->waiting[i])
			return;
	finish_round(r);
}

/**
 * deadline_cb() - a round took STATS_WAIT_MS: answer with what there is
 * @fd:		unused
 * @what:	unused
 * @arg:	struct stats_rounds
 */
static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	finish_round(arg);
}

/**
 * threads_stats_ask() - have @fn called with every thread's counters,
 *			 added up, once each thread copied them
 * @c:		main context
 * @fn:		called from the main loop (or before this returns, without
 *		workers to wait for)
 * @arg:	its argument, which threads_stats_forget() knows it by
 *
 * Return: 0, or -1 with errno EBUSY if STATS_WAITERS requests wait
 *	   already (@fn is not called then)
 */
int threads_stats_ask(struct ctx *c, threads_stats_fn *fn, void *arg)
{
	struct stats_rounds *r = c->threads ? c->threads->rounds : NULL;
	struct stats sum;

	if (!r) {
		threads_stats_now(c, &sum);
		fn(arg, &sum);
		return 0;
	}
	if (r->nw == STATS_WAITERS) {
		errno = EBUSY;
		return -1;
	}
	r->w[r->nw].fn = fn;
	r->w[r->nw].arg = arg;
	r->w[r->nw].round = r->started + 1;
	r->nw++;
	if (!r->running && !start_round(r))
		finish_round(r);
	return 0;
}

/**
 * threads_stats_forget() - a request waiting for counters is gone
 * @c:		main context
 * @arg:	what it passed to threads_stats_ask()
 */
void threads_stats_forget(struct ctx *c, void *arg)
{
	struct stats_rounds *r = c->threads ? c->threads->rounds : NULL;
	unsigned int keep = 0;

	if (!r)
		return;
	for (unsigned int i = 0; i < r->nw; i++)
		if (r->w[i].arg != arg)
			r->w[keep++] = r->w[i];
	r->nw = keep;
}

/**
 * threads_stats_set_wait() - test seam: how long a round waits at most
 * @ms:		milliseconds, or 0 for STATS_WAIT_MS
 *
 * A unit test that must see a round wait for a worker it runs later sets
 * it long, so that a loaded machine can't end the round first.
 */
void threads_stats_set_wait(unsigned int ms)
{
	wait_ms_set = ms;
}

/**
 * stats_rounds_init() - the main thread's round state and deadline timer
 * @c:		main context, its thread set made
 *
 * Return: 0 on success, -1 after printing one error line
 */
int stats_rounds_init(struct ctx *c)
{
	struct stats_rounds *r = calloc(1, sizeof(*r));

	if (!r) {
		err_errno(ENOMEM, "datapath threads: get_stats state");
		return -1;
	}
	r->c = c;
	r->deadline = evtimer_new(c->base, deadline_cb, r);
	c->threads->rounds = r;
	if (!r->deadline) {
		err_msg("datapath threads: get_stats timer: libevent failed");
		return -1;
	}
	return 0;
}

/**
 * stats_rounds_cleanup() - free the round state; waiting requests are
 *			    forgotten (their connections are closed)
 * @c:		main context
 */
void stats_rounds_cleanup(struct ctx *c)
{
	struct stats_rounds *r = c->threads->rounds;

	if (!r)
		return;
	if (r->deadline)
		event_free(r->deadline);
	free(r);
	c->threads->rounds = NULL;
}
