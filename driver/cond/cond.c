// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - network conditions on the tap: the rules in force, which frames
 * they match, and what they decide for each frame
 *
 * Every frame between the guest and tapir crosses the tap, whatever made
 * it: translated TCP, UDP and ICMP, forwarded connections, DNS answers,
 * DHCP, NDP and ARP replies, ICMP errors and resets. So conditions apply
 * at the tap and nowhere else: frames to the guest as tap_send() writes
 * them, frames from the guest as they are read, before anything handles
 * them. The rules are process-wide and replaced whole (cond_install());
 * each thread takes a copy when the generation changes. What a rule holds
 * waits in the thread's delay line (cond_line.c); what the rules mean for
 * a TCP connection's flight and timers is cond_tcp.c's.
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/clock.h"
#include "driver/cond/cond_internal.h"
#include "driver/core/log.h"
#include "driver/core/seed.h"

/**
 * rng_next() - the thread's next random 64 bits (xorshift64*)
 * @st:		its state
 *
 * Return: the bits
 */
static uint64_t rng_next(struct cond_state *st)
{
	st->rng ^= st->rng >> 12;
	st->rng ^= st->rng << 25;
	st->rng ^= st->rng >> 27;
	return st->rng * 0x2545f4914f6cdd1dULL;
}

/**
 * rng_unit() - a uniform number in [0, 1)
 * @st:		thread's state
 *
 * Return: the number
 */
static double rng_unit(struct cond_state *st)
{
	return (double)(rng_next(st) >> 11) * 0x1.0p-53;
}

/**
 * cond_wire_bytes() - what a frame takes on an Ethernet wire
 * @len:	its bytes, from its Ethernet header on
 * @hlen:	bytes of its headers (Ethernet to TCP or UDP), 0 if unknown
 * @gso_size:	payload bytes per segment if it is a GSO frame, else 0
 *
 * Each frame at least COND_WIRE_MIN bytes, and COND_WIRE_GAP more. A GSO
 * frame goes on the wire as the segments it stands for, each with the
 * headers again: one 64 KiB frame at MTU 1500 is 45 frames.
 *
 * Return: bytes
 */
uint64_t cond_wire_bytes(size_t len, size_t hlen, uint16_t gso_size)
{
	uint64_t segs, last, one;

	if (!gso_size || !hlen || hlen >= len)
		return (len > COND_WIRE_MIN ? len : COND_WIRE_MIN) +
		       COND_WIRE_GAP;
	segs = (len - hlen + gso_size - 1) / gso_size;
	last = len - hlen - (segs - 1) * gso_size;
	one = hlen + gso_size;
	return (segs - 1) * ((one > COND_WIRE_MIN ? one : COND_WIRE_MIN) +
	                     COND_WIRE_GAP) +
	       (hlen + last > COND_WIRE_MIN ? hlen + last : COND_WIRE_MIN) +
	       COND_WIRE_GAP;
}

/**
 * frame_rng() - start the random choices of a rule's next frame
 * @st:		thread's conditions; @st->rng is set
 * @i:		rule index
 * @d:		direction index
 *
 * The frame's number under its rule and direction is counted by every
 * thread together: with a seed, the same frames meet the same fate run
 * after run, whichever thread reads or sends them.
 */
static void frame_rng(struct cond_state *st, unsigned int i, unsigned int d)
{
	uint64_t n =
	        __atomic_fetch_add(&st->sh->nth[i][d], 1, __ATOMIC_RELAXED);
	uint64_t v;

	/* splitmix64 of the seed, the stream (rule and direction) and n */
	v = st->sh->seed + 0x9e3779b97f4a7c15ULL * (n + 1) +
	    0xd1b54a32d192ed03ULL * (i * 2 + d + 1);
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
	v ^= v >> 31;
	st->rng = v ? v : 1;
}

/**
 * lost() - whether a loss condition drops this frame
 * @st:		thread's conditions
 * @r:		rule
 * @burst:	the rule's "last one was lost" for this direction
 *
 * With loss-corr, a two-state (Gilbert) chain: after a loss the next is
 * lost with probability loss-corr, else with the probability that keeps
 * the long-run rate at loss. Without, each frame on its own.
 *
 * Return: true to drop it
 */
static bool lost(struct cond_state *st, const struct cond_rule *r, bool *burst)
{
	double p = r->loss;

	if (!r->loss)
		return false;
	if (r->loss_corr && r->loss < 1)
		p = *burst ? r->loss_corr
		           : r->loss * (1 - r->loss_corr) / (1 - r->loss);
	*burst = rng_unit(st) < p;
	return *burst;
}

/**
 * jitter_of() - a frame's jitter, to add to its rule's delay
 * @st:		thread's conditions
 * @r:		rule
 *
 * Normal jitter is the sum of twelve uniforms (mean 6, σ 1): close enough
 * to Gauss for a delay line, and bounded at ±6σ.
 *
 * Return: nanoseconds, negative or positive
 */
static double jitter_of(struct cond_state *st, const struct cond_rule *r)
{
	double z = 0;

	if (!r->jitter_ns)
		return 0;
	if (r->dist == COND_NORMAL) {
		for (int i = 0; i < 12; i++)
			z += rng_unit(st);
		z -= 6;
	} else {
		z = 2 * rng_unit(st) - 1;
	}
	return z * (double)r->jitter_ns;
}

/**
 * cond_queue_ns() - how long a frame may wait for its turn under a rate
 * @r:		rule with a rate
 *
 * Return: nanoseconds
 */
uint64_t cond_queue_ns(const struct cond_rule *r)
{
	return COND_QUEUE_NS +
	       (uint64_t)((double)(COND_QUEUE_FRAMES_BYTES + r->burst) * 8e9 /
	                  (double)r->rate_bps);
}

/**
 * cond_backlog_ns() - how long a frame the rule takes now waits in its
 *		       rate's queue
 * @st:		thread's conditions
 * @i:		rule index, with a rate
 * @d:		direction index, 0 to the guest
 * @now:	clock_ns()
 *
 * Frames join the rate after the rule's delay (departure()), so the time
 * booked is counted from then: the delay is the link's length, not its
 * queue.
 *
 * Return: nanoseconds, 0 if its bucket is not empty
 */
uint64_t cond_backlog_ns(const struct cond_state *st, unsigned int i,
                         unsigned int d, uint64_t now)
{
	uint64_t tat = __atomic_load_n(&st->sh->tat[i][d], __ATOMIC_RELAXED);
	uint64_t ready = now + st->set.r[i].delay_ns;

	return tat > ready ? tat - ready : 0;
}

/**
 * rate_departure() - when a frame leaves under a rule's rate
 * @st:		thread's conditions
 * @i:		rule index
 * @d:		direction index, 0 to the guest
 * @ready:	when it could leave otherwise
 * @wire:	its bytes on the wire (cond_wire_bytes())
 *
 * A link of the rule's rate: a frame starts when the theoretical arrival
 * time (the generic cell rate algorithm's), less the burst's worth, has
 * come, and leaves once it has been sent, its length on an Ethernet wire
 * at the rate later; each frame pushes that time on by as much. So an
 * idle link still takes its time to send a frame, as a real one does.
 * Shared by the threads through one compare-and-swap. A frame that would
 * wait longer than the rate's queue (cond_queue_ns()) is refused, and
 * leaves the time as it was.
 *
 * Return: the departure time, or 0 if the rate's queue is full
 */
static uint64_t rate_departure(const struct cond_state *st, unsigned int i,
                               unsigned int d, uint64_t ready, uint64_t wire)
{
	const struct cond_rule *r = &st->set.r[i];
	uint64_t tx = (uint64_t)((double)wire * 8e9 / (double)r->rate_bps);
	uint64_t tau = (uint64_t)((double)r->burst * 8e9 / (double)r->rate_bps);
	uint64_t tat = __atomic_load_n(&st->sh->tat[i][d], __ATOMIC_RELAXED);
	uint64_t start, depart;

	do {
		start = tat > ready ? tat : ready;
		depart = (start > tau && start - tau > ready ? start - tau
		                                             : ready) +
		         tx;
		if (depart - ready > cond_queue_ns(r))
			return 0;
	} while (!__atomic_compare_exchange_n(
	        &st->sh->tat[i][d], &tat, start + tx, false, __ATOMIC_RELAXED,
	        __ATOMIC_RELAXED));
	return depart;
}

/**
 * departure() - when a frame a rule holds leaves
 * @st:		thread's conditions
 * @i:		rule index
 * @d:		direction index, 0 to the guest
 * @now:	clock_ns()
 * @wire:	the frame's bytes on the wire (cond_wire_bytes())
 *
 * The delay, then the rate, then the jitter: jitter spreads frames
 * around their times, and never makes the rate's queue look longer than
 * it is. A frame never leaves before @now.
 *
 * Return: the time, or 0 if the rate's queue is full
 */
static uint64_t departure(struct cond_state *st, unsigned int i, unsigned int d,
                          uint64_t now, uint64_t wire)
{
	const struct cond_rule *r = &st->set.r[i];
	uint64_t at = now + r->delay_ns;
	double jit;

	if (r->rate_bps && !(at = rate_departure(st, i, d, at, wire)))
		return 0;
	jit = jitter_of(st, r);
	if (jit < 0 && (double)(at - now) < -jit)
		return now;
	return jit < 0 ? at - (uint64_t)-jit : at + (uint64_t)jit;
}

/**
 * cond_frame() - apply the conditions to a frame, if any rule matches
 * @c:		context; @c->queue is the frame's tap queue
 * @dir:	COND_TO_GUEST (tap_send()) or COND_TO_HOST (a tap read)
 * @iov:	@c->vnet_len bytes of vnet header, then the frame
 * @iovcnt:	entries in @iov
 *
 * A frame no rule holds back goes on at once, the caller's way: a
 * neutral rule costs a lookup, not a copy. Frames of a rule that holds
 * some already queue behind them, so that delay and rate keep order.
 *
 * Return: true if the frame was taken (held or dropped), false if the
 *	   caller handles it now
 */
bool cond_frame(struct ctx *c, unsigned int dir, const struct iovec *iov,
                int iovcnt)
{
	struct cond_state *st = c->cond;
	const struct cond_rule *r;
	unsigned int d = dir == COND_TO_GUEST ? 0 : 1;
	uint64_t now, at;
	bool dup, skip;
	struct hdrs h;
	size_t len = 0;
	int i;

	if (!st)
		return false;
	cond_line_reload(st);
	cond_frame_hdrs(iov, iovcnt, c->vnet_len, &h);
	i = cond_first_match(st, dir, &h);
	if (i < 0)
		return false;
	r = &st->set.r[i];
	if (r->down) {
		c->stats.cond[CC_DOWN]++;
		return true;
	}
	if (r->loss || r->duplicate || r->reorder || r->jitter_ns)
		frame_rng(st, (unsigned int)i, d);
	if (lost(st, r, &st->burst[i][d])) {
		c->stats.cond[CC_LOSS]++;
		return true;
	}
	dup = r->duplicate && rng_unit(st) < r->duplicate;
	/* Reordered: past the delay line and the rate, at once. */
	skip = r->reorder && rng_unit(st) < r->reorder;
	if (skip)
		c->stats.cond[CC_REORDERED]++;
	if (skip && !dup)
		return false;
	for (int k = 0; k < iovcnt; k++)
		len += iov[k].iov_len;
	now = clock_ns();
	at = departure(st, (unsigned int)i, d, now,
	               cond_wire_bytes(len - c->vnet_len, h.hlen, h.gso_size));
	if (!at) {
		c->stats.cond[CC_RATE]++;
		return !skip;
	}
	/* The copy takes the delay line; one that can't be held is counted
	 * as overflow, and the original still goes.
	 */
	if (dup && !cond_hold(c, st, d, (unsigned int)i, at, iov, iovcnt))
		c->stats.cond[CC_DUPLICATED]++;
	if (skip || (at <= now && !st->fifo[d][i].head))
		return false;
	/* Dropped if it can't be held: counted as overflow (cond_hold()). */
	(void)cond_hold(c, st, d, (unsigned int)i, at, iov, iovcnt);
	return true;
}

/**
 * cond_init() - a thread's conditions: its delay line and timer, made
 *		 before the sandbox, whatever the rules, so that the API can
 *		 set some later
 * @c:		context with its event base
 * @out:	where held frames go, and the flush after a batch
 *
 * Return: 0, or -1 after printing one error line
 */
int cond_init(struct ctx *c, const struct cond_out *out)
{
	struct cond_state *st = calloc(1, sizeof(*st));

	if (!st) {
		err_msg("conditions: out of memory");
		return -1;
	}
	if (cond_line_init(c, st)) {
		free(st);
		return -1;
	}
	st->gen = ~0U;
	st->out = out;
	c->cond = st;
	return 0;
}

/**
 * cond_cleanup() - free held frames and the timer
 * @c:		context, with or without its conditions
 */
void cond_cleanup(struct ctx *c)
{
	if (!c->cond)
		return;
	cond_line_cleanup(c->cond);
	cond_shared_put(c->cond->sh);
	free(c->cond);
	c->cond = NULL;
}
