// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - network conditions: the delay line of one thread, its held
 * frames and its one timer
 *
 * A held frame is a copy in a FIFO per rule and direction, whose times
 * delay and rate never let fall, so that the FIFO's head is always its
 * earliest. When the rules change, the FIFOs of the old rules become
 * drains: they deliver at the times they gave, and frames under the new
 * rules never wait behind them. One timerfd per thread fires for the
 * earliest head of all.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/timerfd.h>
#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/cond/cond_internal.h"
#include "driver/core/log.h"

/* Arming the timer, once running; it is read with read(). */
const char *const cond_syscalls[] = {"timerfd_settime", NULL};

/* A frame due within this much is delivered now: a wakeup comes about
 * this late (the kernel's timer slack), so waking this early centres the
 * error of a delay on zero.
 */
#define COND_SLACK_NS 50000ULL
/* Frames delivered per timer callback and direction before other events
 * get a turn.
 */
#define COND_BATCH 256
/* After arming the timerfd failed, libevent's timer retries this soon. */
#define COND_RETRY_US 1000

/**
 * cond_held_cost() - what holding a frame costs the thread's bound
 * @len:	its bytes, vnet header included
 *
 * Its copy, its header and the allocator's: glibc's malloc rounds to 16
 * bytes and keeps 8 of its own, counted as 16. A guest sending the
 * smallest frames must not hold more memory than the bound says.
 *
 * Return: bytes
 */
size_t cond_held_cost(size_t len)
{
	return (sizeof(struct held) + len + 16 + 15) & ~(size_t)15;
}

/**
 * fifo_push() - append a frame, its time raised to the last one's
 * @f:		FIFO
 * @h:		frame, @h->at set
 */
static void fifo_push(struct fifo *f, struct held *h)
{
	h->next = NULL;
	if (h->at < f->last)
		h->at = f->last;
	f->last = h->at;
	*f->tail = h;
	f->tail = &h->next;
}

/**
 * fifo_pop() - take a FIFO's first frame
 * @f:		FIFO, not empty
 *
 * Return: the frame
 */
static struct held *fifo_pop(struct fifo *f)
{
	struct held *h = f->head;

	f->head = h->next;
	if (!f->head) {
		f->tail = &f->head;
		f->last = 0;
	}
	return h;
}

/**
 * fifo_reset() - an empty FIFO
 * @f:		FIFO
 */
static void fifo_reset(struct fifo *f)
{
	f->head = NULL;
	f->tail = &f->head;
	f->last = 0;
}

/**
 * earlier() - the earlier of two times, where 0 is none
 * @a:		one
 * @b:		another
 *
 * Return: the earlier, or 0 if both are
 */
static uint64_t earlier(uint64_t a, uint64_t b)
{
	if (!a || (b && b < a))
		return b;
	return a;
}

/**
 * arm() - have the timer fire for a frame due at @at, if it would not
 *	   fire by then anyway
 * @st:		thread's conditions
 * @at:		deadline, clock_ns()
 *
 * A timerfd, not a libevent timer: libevent reads a coarse clock (a tick
 * of up to 4 ms) and waits whole milliseconds, while a delay line must
 * be exact to a fraction of one. It costs a call only while frames are
 * held, and only when the earliest deadline moves earlier; while
 * cond_run() runs, none: the frames its deliveries and their flush hold
 * wait for its one call at the end. Should arming it fail, a libevent
 * timer retries soon, so that no frame waits for good.
 */
static void arm(struct cond_state *st, uint64_t at)
{
	static const struct timeval retry = {0, COND_RETRY_US};
	static struct log_limit limit;
	struct itimerspec its = {0};
	uint64_t when;

	if (st->running) {
		st->due = earlier(st->due, at);
		return;
	}
	if (st->armed && st->armed <= at)
		return;
	st->arms++;
	when = at > COND_SLACK_NS ? at - COND_SLACK_NS : 1;
	its.it_value.tv_sec = (time_t)(when / 1000000000ULL);
	its.it_value.tv_nsec = (long)(when % 1000000000ULL);
	if (timerfd_settime(st->tfd, TFD_TIMER_ABSTIME, &its, NULL)) {
		err_limited(&limit, errno, "conditions: arm the timer");
		if (evtimer_add(st->retry, &retry))
			err_limited(&limit, 0,
			            "conditions: retry timer: libevent failed");
		return;
	}
	st->armed = at;
}

/**
 * cond_hold() - copy a frame into its rule's FIFO until @at
 * @c:		context
 * @st:		thread's conditions
 * @d:		direction index, 0 to the guest
 * @i:		rule index
 * @at:		when it goes
 * @iov:	vnet header, then the frame
 * @iovcnt:	entries
 *
 * Return: 0, or -1 if COND_HOLD_MAX is charged already or memory ran out
 *	   (counted as overflow: never meant, tests require none)
 */
int cond_hold(struct ctx *c, struct cond_state *st, unsigned int d,
              unsigned int i, uint64_t at, const struct iovec *iov, int iovcnt)
{
	size_t len = 0, off = 0, cost;
	struct held *h;

	for (int k = 0; k < iovcnt; k++)
		len += iov[k].iov_len;
	cost = cond_held_cost(len);
	if (st->held[d] + cost > COND_HOLD_MAX ||
	    !(h = malloc(sizeof(*h) + len))) {
		c->stats.cond[CC_OVERFLOW]++;
		return -1;
	}
	for (int k = 0; k < iovcnt; k++) {
		memcpy(h->data + off, iov[k].iov_base, iov[k].iov_len);
		off += iov[k].iov_len;
	}
	h->at = at;
	h->gen = st->gen;
	h->q = c->queue;
	h->len = len;
	fifo_push(&st->fifo[d][i], h);
	st->held[d] += cost;
	c->stats.cond[CC_DELAYED]++;
	arm(st, h->at);
	return 0;
}

/**
 * fifo_append() - move every frame of @from to the end of @to
 * @to:		FIFO that keeps them, in order after its own
 * @from:	FIFO emptied
 */
static void fifo_append(struct fifo *to, struct fifo *from)
{
	while (from->head)
		fifo_push(to, fifo_pop(from));
}

/**
 * retire_rest() - the FIFOs that still hold frames become drains
 * @st:		thread's conditions
 */
static void retire_rest(struct cond_state *st)
{
	for (unsigned int d = 0; d < 2; d++) {
		for (unsigned int i = 0; i < COND_RULES_MAX; i++) {
			struct fifo *f = &st->fifo[d][i];
			struct drain *dr = NULL;

			if (!f->head) {
				fifo_reset(f);
				continue;
			}
			if (st->ndrains[d] < COND_DRAINS_MAX)
				dr = malloc(sizeof(*dr));
			if (dr) {
				/* Its tail points into its last frame, which
				 * stays where it is.
				 */
				*dr = (struct drain){.f = *f,
				                     .next = st->drains[d]};
				st->drains[d] = dr;
				st->ndrains[d]++;
			} else if (st->drains[d]) {
				fifo_append(&st->drains[d]->f, f);
				continue;
			} else {
				/* No drain and none to make: the frames stay
				 * here, and new ones queue behind them.
				 */
				continue;
			}
			fifo_reset(f);
		}
	}
}

/**
 * cond_retire() - the rules changed: a rule that stayed the same keeps
 *		   its FIFO, the others that hold frames become drains, and
 *		   the new rules' FIFOs start empty
 * @st:		thread's conditions, its new rules in place
 * @from:	per new rule, the index of the same rule before, or -1
 *		(cond_same_rules())
 *
 * Past COND_DRAINS_MAX drains a direction (rules changed that often while
 * frames were held), the FIFO joins the last drain: its frames keep their
 * order, and those that were due earlier wait for the drain's last one.
 * Nothing is dropped, and the list stays bounded.
 */
void cond_retire(struct cond_state *st, const int *from)
{
	struct fifo keep[2][COND_RULES_MAX];

	for (unsigned int d = 0; d < 2; d++) {
		for (unsigned int j = 0; j < COND_RULES_MAX; j++) {
			struct fifo *f = &keep[d][j];

			fifo_reset(f);
			if (from[j] < 0 || !st->fifo[d][from[j]].head)
				continue;
			/* A tail that points into the last frame moves. */
			*f = st->fifo[d][from[j]];
			fifo_reset(&st->fifo[d][from[j]]);
		}
	}
	retire_rest(st);
	for (unsigned int d = 0; d < 2; d++) {
		for (unsigned int j = 0; j < COND_RULES_MAX; j++) {
			struct fifo *f = &st->fifo[d][j];

			/* Frames that found no drain to go to stay, first. */
			if (f->head) {
				fifo_append(f, &keep[d][j]);
				continue;
			}
			*f = keep[d][j];
			if (!f->head)
				fifo_reset(f);
		}
	}
}

/**
 * cond_line_reload() - take the rules in force if they changed, and retire
 *			the FIFOs of the rules gone
 * @st:		a thread's conditions
 */
void cond_line_reload(struct cond_state *st)
{
	int from[COND_RULES_MAX];

	if (cond_reload(st, from))
		cond_retire(st, from);
}

/**
 * deliver() - send one held frame on its way, and free it
 * @c:		context
 * @d:		direction index, 0 to the guest
 * @h:		the frame, out of its FIFO
 */
static void deliver(struct ctx *c, unsigned int d, struct held *h)
{
	struct iovec iov = {.iov_base = h->data, .iov_len = h->len};

	/* A partition set since it was held cuts it too, healed or not. */
	if (cond_cut(h->gen, d ? COND_TO_HOST : COND_TO_GUEST, &iov, 1,
	             c->vnet_len)) {
		c->stats.cond[CC_DOWN]++;
		free(h);
		return;
	}
	c->queue = h->q;
	if (d == 0)
		c->cond->out->to_guest(c, h->data, h->len);
	else
		c->cond->out->from_guest(c, h->data, h->len);
	free(h);
}

/**
 * fifo_deliver() - deliver a FIFO's frames that are due
 * @c:		context
 * @d:		direction index, 0 to the guest
 * @f:		FIFO
 * @now:	clock_ns()
 * @budget:	frames left to deliver in this callback, updated
 *
 * Return: the time of the first frame left, or 0 if none is
 */
static uint64_t fifo_deliver(struct ctx *c, unsigned int d, struct fifo *f,
                             uint64_t now, int *budget)
{
	struct cond_state *st = c->cond;

	while (f->head && *budget && f->head->at <= now + COND_SLACK_NS) {
		struct held *h = fifo_pop(f);

		st->held[d] -= cond_held_cost(h->len);
		(*budget)--;
		deliver(c, d, h);
	}
	return f->head ? f->head->at : 0;
}

/**
 * deliver_due() - deliver what is due, oldest first within each FIFO, and
 *		   free the drains that emptied
 * @c:		context
 * @st:		its conditions
 * @now:	clock_ns()
 * @inputs:	set if a frame from the guest was handled
 *
 * Per wakeup, a look at the head of each FIFO, COND_RULES_MAX and at
 * most COND_DRAINS_MAX drains a direction, and at the frames it delivers:
 * not at what waits behind them, nor at the flows held.
 *
 * Return: the earliest time still held, or 0 if nothing is
 */
static uint64_t deliver_due(struct ctx *c, struct cond_state *st, uint64_t now,
                            bool *inputs)
{
	uint64_t next = 0;

	/* A budget each way: a flood one way can't hold the other back. */
	for (unsigned int d = 0; d < 2; d++) {
		struct drain **pp = &st->drains[d];
		int budget = COND_BATCH;

		for (unsigned int i = 0; i < COND_RULES_MAX; i++)
			next = earlier(next, fifo_deliver(c, d, &st->fifo[d][i],
			                                  now, &budget));
		while (*pp) {
			struct drain *dr = *pp;

			next = earlier(
			        next, fifo_deliver(c, d, &dr->f, now, &budget));
			if (dr->f.head) {
				pp = &dr->next;
				continue;
			}
			*pp = dr->next;
			st->ndrains[d]--;
			free(dr);
		}
		*inputs |= d == 1 && budget != COND_BATCH;
	}
	return next;
}

/**
 * cond_run() - deliver what is due and re-arm for the rest
 * @c:		context
 *
 * The timer's work; unit tests call it after clock_advance(). The timer
 * is set once, for the earliest of what is left and what was held
 * meanwhile: set for each frame held as it went, it was set twice per
 * wakeup whenever a delivery held an answer later than what was left.
 */
void cond_run(struct ctx *c)
{
	struct cond_state *st = c->cond;
	bool inputs = false;
	uint64_t next;

	st->armed = 0;
	st->running = true;
	cond_line_reload(st);
	/* Delivering a frame may send others, whose cond_frame() must not
	 * retire the FIFOs being walked (cond_reload()).
	 */
	st->delivering = true;
	next = deliver_due(c, st, clock_ns(), &inputs);
	st->delivering = false;
	/* What the guest sent may have made ACKs and data for it: one
	 * flush for the batch, as after a tap read.
	 */
	if (inputs)
		st->out->flush(c);
	st->running = false;
	next = earlier(next, st->due);
	st->due = 0;
	if (next)
		arm(st, next);
}

/**
 * timer_cb() - the thread's timerfd fired
 * @fd:		the timerfd
 * @what:	unused
 * @arg:	struct ctx
 */
static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	uint64_t expirations;

	(void)what;
	/* Only to clear it: a timer re-armed since reads EAGAIN. */
	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		debug_msg("conditions: read the timer: %s", strerror(errno));
	cond_run(arg);
}

/**
 * retry_cb() - libevent's timer, after arming the timerfd failed
 * @fd:		unused
 * @what:	unused
 * @arg:	struct ctx
 */
static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	cond_run(arg);
}

/**
 * cond_line_init() - a thread's FIFOs and timers
 * @c:		context with its event base
 * @st:		its conditions, zeroed
 *
 * Return: 0, or -1 after printing one error line
 */
int cond_line_init(struct ctx *c, struct cond_state *st)
{
	for (unsigned int d = 0; d < 2; d++)
		for (unsigned int i = 0; i < COND_RULES_MAX; i++)
			fifo_reset(&st->fifo[d][i]);
	st->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (st->tfd < 0) {
		err_errno(errno, "conditions: create the timer");
		return -1;
	}
	st->ev = event_new(c->base, st->tfd, EV_READ | EV_PERSIST, timer_cb, c);
	st->retry = evtimer_new(c->base, retry_cb, c);
	if (!st->ev || !st->retry || event_add(st->ev, NULL)) {
		err_msg("conditions: watch the timer: libevent failed");
		cond_line_cleanup(st);
		return -1;
	}
	return 0;
}

/**
 * fifo_free() - free a FIFO's frames
 * @f:		FIFO
 */
static void fifo_free(struct fifo *f)
{
	while (f->head)
		free(fifo_pop(f));
}

/**
 * cond_line_cleanup() - free held frames, drains and timers
 * @st:		thread's conditions, set up fully or partly
 */
void cond_line_cleanup(struct cond_state *st)
{
	for (unsigned int d = 0; d < 2; d++) {
		for (unsigned int i = 0; i < COND_RULES_MAX; i++)
			fifo_free(&st->fifo[d][i]);
		while (st->drains[d]) {
			struct drain *dr = st->drains[d];

			st->drains[d] = dr->next;
			fifo_free(&dr->f);
			free(dr);
		}
		st->ndrains[d] = 0;
	}
	if (st->ev)
		event_free(st->ev);
	if (st->retry)
		event_free(st->retry);
	if (st->tfd >= 0)
		close(st->tfd);
	st->ev = st->retry = NULL;
	st->tfd = -1;
}
