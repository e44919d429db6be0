// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - network conditions on the tap: delay, jitter, loss, rate,
 * duplicates, reordering and partitions, per thread, one timer each
 *
 * Every frame between the guest and tapir crosses the tap, whatever made
 * it: translated TCP, UDP and ICMP, forwarded connections, DNS answers,
 * DHCP, NDP and ARP replies, ICMP errors and resets. So conditions apply
 * at the tap and nowhere else: frames to the guest as tap_send() writes
 * them, frames from the guest as they are read, before anything handles
 * them. A held frame is a copy in a FIFO per rule and direction, whose
 * order delay and rate never change; one timer per thread serves every
 * FIFO. The rules are process-wide and replaced whole (cond_install());
 * each thread takes a copy when the generation changes.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/timerfd.h>
#include <event2/event.h>

#include "clock.h"
#include "cond.h"
#include "log.h"
#include "seccomp.h"
#include "seed.h"
#include "tapio.h"
#include "tcp.h"

/* Arming the timer, once running; it is read with read(). */
const char *const cond_syscalls[] = {"timerfd_settime", NULL};

/* A frame due within this much is delivered now: a wakeup comes about
 * this late (the kernel's timer slack), so waking this early centres the
 * error of a delay on zero.
 */
#define COND_SLACK_NS 50000ULL
/* Frames delivered per timer callback before other events get a turn. */
#define COND_BATCH 256
/* Bytes of a frame's headers that matching reads. */
#define COND_HDR_BYTES 128
/* A rate's queue: frames that would wait longer than this, plus what two
 * of the largest frames and the burst take at the rate, are dropped, as a
 * bottleneck link's buffer drops them (counted as dropped_rate). TCP
 * never fills it: its flight stays under cond_flight_max(), which keeps
 * half this and one frame queued.
 */
#define COND_QUEUE_NS 100000000ULL
#define COND_QUEUE_FRAMES_BYTES (2U * 65536U)
/* What a connection under a rate sends at once: that rate's worth of this
 * long (cond_flight_max()).
 */
#define COND_SEND_NS 5000000ULL
#define COND_SEND_MIN 6000U

bool cond_on;

/* The rules in force and what moves with them, process-wide. */
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cond_set cond_cur; /* under cond_lock */
static unsigned int cond_gen;    /* atomic: bumped by each install */
/* Per rule and direction, the rate's theoretical arrival time (GCRA),
 * shared by the threads (atomic): a rate is the rate of the whole rule.
 */
static uint64_t cond_tat[COND_RULES_MAX][2];
/* What the rules add to a round trip at most (atomic): the longest
 * delays each way, and the longest a rate queues a frame. For TCP's
 * retransmission timer and flight (cond_rto_extra_ms(), cond_flight_max()).
 */
static uint64_t cond_delays_ns;
static uint64_t cond_queue_ns;

/**
 * struct held - a frame that waits for its time
 * @next:	next in its FIFO
 * @at:		when it goes, clock.c's nanoseconds
 * @q:		tap queue it came from or goes to
 * @len:	bytes at @data: the vnet header, then the frame
 * @data:	the bytes
 */
struct held {
	struct held *next;
	uint64_t at;
	unsigned int q;
	size_t len;
	uint8_t data[];
};

/**
 * struct fifo - held frames of one rule and direction, @at never falling
 * @head:	first, or NULL
 * @tail:	where the next goes
 * @last:	@at of the last one added
 */
struct fifo {
	struct held *head;
	struct held **tail;
	uint64_t last;
};

/**
 * struct cond_state - one thread's conditions
 * @gen:	cond_gen its copy of the rules is from
 * @set:	that copy
 * @has_down:	a rule of @set is a partition
 * @rng:	xorshift state of its random choices
 * @burst:	per rule and direction, the last frame was lost (loss-corr)
 * @fifo:	held frames per direction and rule
 * @held:	bytes held per direction
 * @tfd:	its one timer, a timerfd on CLOCK_MONOTONIC (clock.c's)
 * @ev:		read event on @tfd
 * @armed:	deadline @tfd is armed for, or 0
 */
struct cond_state {
	unsigned int gen;
	struct cond_set set;
	bool has_down;
	uint64_t rng;
	bool burst[COND_RULES_MAX][2];
	struct fifo fifo[2][COND_RULES_MAX];
	size_t held[2];
	int tfd;
	struct event *ev;
	uint64_t armed;
};

/**
 * queue_ns() - how long a frame may wait for its turn under a rate
 * @r:		rule with a rate
 *
 * Return: nanoseconds
 */
static uint64_t queue_ns(const struct cond_rule *r)
{
	return COND_QUEUE_NS +
	       (uint64_t)((double)(COND_QUEUE_FRAMES_BYTES + r->burst) * 8e9 /
	                  (double)r->rate_bps);
}

/**
 * rtt_extra() - the most a set of rules adds to a round trip, by cause
 * @s:		rules
 * @delays:	the longest delay each way, jitter included, added up
 * @queue:	the longest a rate may queue a frame
 */
static void rtt_extra(const struct cond_set *s, uint64_t *delays,
                      uint64_t *queue)
{
	uint64_t way[2] = {0, 0};

	*queue = 0;
	for (unsigned int i = 0; i < s->n; i++) {
		const struct cond_rule *r = &s->r[i];
		uint64_t d = r->delay_ns + r->jitter_ns * (r->dist ? 6 : 1);

		for (unsigned int k = 0; k < 2; k++)
			if (r->dir & (1U << k) && d > way[k])
				way[k] = d;
		if (r->rate_bps && queue_ns(r) > *queue)
			*queue = queue_ns(r);
	}
	*delays = way[0] + way[1];
}

/**
 * cond_rto_extra_ms() - what TCP's retransmission timer to the guest
 *			 adds for the rules in force
 *
 * Without it, a delay longer than the timer would have tapir resend
 * every segment it holds, into the same delay.
 *
 * Return: milliseconds, 0 without rules
 */
unsigned int cond_rto_extra_ms(void)
{
	if (!cond_active())
		return 0;
	return (unsigned int)((__atomic_load_n(&cond_delays_ns,
	                                       __ATOMIC_RELAXED) +
	                       __atomic_load_n(&cond_queue_ns,
	                                       __ATOMIC_RELAXED)) /
	                      1000000);
}

/**
 * cond_install() - put a set of rules in force, replacing the last
 * @s:		the new rules, checked (cond_check_memory()); none clears
 *
 * Frames read or sent after this returns see the new rules; frames held
 * already keep the times they were given. Rate buckets start full.
 */
void cond_install(const struct cond_set *s)
{
	uint64_t delays, queue;

	rtt_extra(s, &delays, &queue);
	pthread_mutex_lock(&cond_lock);
	cond_cur = *s;
	memset(cond_tat, 0, sizeof(cond_tat));
	__atomic_store_n(&cond_delays_ns, delays, __ATOMIC_RELAXED);
	__atomic_store_n(&cond_queue_ns, queue, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cond_gen, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&cond_on, s->n > 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cond_lock);
}

/**
 * cond_current() - a copy of the rules in force
 * @s:		filled
 */
void cond_current(struct cond_set *s)
{
	pthread_mutex_lock(&cond_lock);
	*s = cond_cur;
	pthread_mutex_unlock(&cond_lock);
}

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
 * reload() - take the rules in force if they changed since the last copy
 * @c:		context
 * @st:		its conditions
 *
 * With a seed, each thread's random choices restart from it and the
 * thread's index: the same frames meet the same fate run after run.
 */
static void reload(const struct ctx *c, struct cond_state *st)
{
	unsigned int gen = __atomic_load_n(&cond_gen, __ATOMIC_ACQUIRE);

	if (gen == st->gen)
		return;
	pthread_mutex_lock(&cond_lock);
	st->set = cond_cur;
	st->gen = __atomic_load_n(&cond_gen, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cond_lock);
	st->rng = (st->set.seeded ? st->set.seed : seed_u64()) ^
	          (0x9e3779b97f4a7c15ULL * (c->thread + 1));
	if (!st->rng)
		st->rng = 1;
	memset(st->burst, 0, sizeof(st->burst));
	st->has_down = false;
	for (unsigned int i = 0; i < st->set.n; i++)
		st->has_down |= st->set.r[i].down;
}

/**
 * struct hdrs - what rules match on, from a frame's headers
 * @proto:	IP protocol, ICMPv6 counted as ICMP, or 0 if not IP
 * @sport:	TCP or UDP source port, else 0
 * @dport:	destination port, else 0
 * @src:	IP source (IPv4 mapped)
 * @dst:	IP destination
 */
struct hdrs {
	uint8_t proto;
	uint16_t sport;
	uint16_t dport;
	struct in6_addr src;
	struct in6_addr dst;
};

/**
 * map4() - an IPv4 address as IPv4-mapped IPv6
 * @a:		filled
 * @p:		4 bytes
 */
static void map4(struct in6_addr *a, const uint8_t *p)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[10] = a->s6_addr[11] = 0xff;
	memcpy(&a->s6_addr[12], p, 4);
}

/**
 * parse_hdrs() - the fields matching reads, bounds checked
 * @b:		start of the Ethernet frame
 * @len:	bytes at @b
 * @h:		filled; zero where the frame has no such field
 */
static void parse_hdrs(const uint8_t *b, size_t len, struct hdrs *h)
{
	size_t l4;

	memset(h, 0, sizeof(*h));
	if (len >= 14 + 20 && b[12] == 0x08 && b[13] == 0x00) {
		h->proto = b[14 + 9];
		map4(&h->src, b + 14 + 12);
		map4(&h->dst, b + 14 + 16);
		l4 = 14 + (size_t)(b[14] & 0x0f) * 4;
		/* Only a first fragment has the ports. */
		if (b[14 + 6] & 0x1f || b[14 + 7])
			l4 = len;
	} else if (len >= 14 + 40 && b[12] == 0x86 && b[13] == 0xdd) {
		h->proto =
		        b[14 + 6] == IPPROTO_ICMPV6 ? IPPROTO_ICMP : b[14 + 6];
		memcpy(&h->src, b + 14 + 8, 16);
		memcpy(&h->dst, b + 14 + 24, 16);
		l4 = 14 + 40;
	} else {
		return;
	}
	if ((h->proto == IPPROTO_TCP || h->proto == IPPROTO_UDP) &&
	    l4 + 4 <= len) {
		h->sport = (uint16_t)(b[l4] << 8 | b[l4 + 1]);
		h->dport = (uint16_t)(b[l4 + 2] << 8 | b[l4 + 3]);
	}
}

/**
 * rule_matches() - whether a rule applies to a frame
 * @r:		rule
 * @dir:	COND_TO_GUEST or COND_TO_HOST
 * @h:		the frame's fields
 *
 * The host side is the source of a frame to the guest and the
 * destination of one from it.
 *
 * Return: true if so
 */
static bool rule_matches(const struct cond_rule *r, unsigned int dir,
                         const struct hdrs *h)
{
	const struct in6_addr *host = dir == COND_TO_GUEST ? &h->src : &h->dst;

	if (!(r->dir & dir))
		return false;
	if (r->m.proto && r->m.proto != h->proto)
		return false;
	if (r->m.port && r->m.port != h->sport && r->m.port != h->dport)
		return false;
	return !r->m.has_host || (h->proto && !memcmp(host, &r->m.host, 16));
}

/**
 * find_rule() - the first rule that applies to a frame
 * @st:		thread's conditions
 * @dir:	COND_TO_GUEST or COND_TO_HOST
 * @iov:	vnet header (@vnet_len bytes, maybe 0), then the frame
 * @iovcnt:	entries
 * @vnet_len:	bytes of vnet header
 *
 * Return: its index, or -1
 */
static int find_rule(const struct cond_state *st, unsigned int dir,
                     const struct iovec *iov, int iovcnt, size_t vnet_len)
{
	uint8_t b[COND_HDR_BYTES];
	size_t skip = vnet_len, len = 0;
	struct hdrs h;

	for (int i = 0; i < iovcnt && len < sizeof(b); i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t n = iov[i].iov_len;

		if (skip >= n) {
			skip -= n;
			continue;
		}
		p += skip;
		n -= skip;
		skip = 0;
		if (n > sizeof(b) - len)
			n = sizeof(b) - len;
		memcpy(b + len, p, n);
		len += n;
	}
	parse_hdrs(b, len, &h);
	for (unsigned int i = 0; i < st->set.n; i++)
		if (rule_matches(&st->set.r[i], dir, &h))
			return (int)i;
	return -1;
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
 * delay_of() - a frame's delay: the rule's, plus its jitter
 * @st:		thread's conditions
 * @r:		rule
 *
 * Normal jitter is the sum of twelve uniforms (mean 6, σ 1): close enough
 * to Gauss for a delay line, and bounded at ±6σ.
 *
 * Return: nanoseconds, never below 0 or above COND_DELAY_MAX_NS
 */
static uint64_t delay_of(struct cond_state *st, const struct cond_rule *r)
{
	double d = (double)r->delay_ns, z = 0;

	if (r->jitter_ns) {
		if (r->dist == COND_NORMAL) {
			for (int i = 0; i < 12; i++)
				z += rng_unit(st);
			z -= 6;
		} else {
			z = 2 * rng_unit(st) - 1;
		}
		d += z * (double)r->jitter_ns;
	}
	if (d < 0)
		return 0;
	return d > (double)COND_DELAY_MAX_NS ? COND_DELAY_MAX_NS : (uint64_t)d;
}

/**
 * rate_departure() - when a frame leaves under a rule's rate
 * @i:		rule index
 * @d:		direction index, 0 to the guest
 * @r:		the rule
 * @ready:	when it could leave otherwise
 * @len:	its bytes
 *
 * The generic cell rate algorithm, delaying instead of dropping: a frame
 * leaves when the theoretical arrival time, less the burst's worth, has
 * come; every frame pushes that time on by its own length at the rate.
 * Shared by the threads through one compare-and-swap. A frame that would
 * wait longer than the rate's queue (queue_ns()) is refused, and leaves
 * the time as it was.
 *
 * Return: the departure time, or 0 if the rate's queue is full
 */
static uint64_t rate_departure(unsigned int i, unsigned int d,
                               const struct cond_rule *r, uint64_t ready,
                               size_t len)
{
	uint64_t tx = (uint64_t)((double)len * 8e9 / (double)r->rate_bps);
	uint64_t tau = (uint64_t)((double)r->burst * 8e9 / (double)r->rate_bps);
	uint64_t tat = __atomic_load_n(&cond_tat[i][d], __ATOMIC_RELAXED);
	uint64_t start, depart;

	do {
		start = tat > ready ? tat : ready;
		depart = start > tau && start - tau > ready ? start - tau
		                                            : ready;
		if (depart - ready > queue_ns(r))
			return 0;
	} while (!__atomic_compare_exchange_n(&cond_tat[i][d], &tat, start + tx,
	                                      false, __ATOMIC_RELAXED,
	                                      __ATOMIC_RELAXED));
	return depart;
}

/**
 * cond_flight_max() - the most a TCP connection should have in flight
 *		       under the rules in force, one way
 * @c:		context
 * @dir:	COND_TO_GUEST (tapir's data) or COND_TO_HOST (the guest's)
 * @host:	the host side's address as the guest sees it
 * @hport:	its port
 * @gport:	the guest's port
 * @burst:	set to the most to send at once: what the rate passes in
 *		COND_SEND_NS, at least COND_SEND_MIN, so that a slow rate
 *		paces a few segments at a time rather than 64 KiB frames, and
 *		headers stay a small part of it; UINT32_MAX if no rate
 *		applies
 *
 * A rate holds what exceeds it; with more in flight than the path's
 * delay × rate, the excess would only queue. So a connection under a rate
 * keeps that product in flight, plus headroom, and the rest waits in
 * the sender: tapir's data in the host socket (its flight), the guest's
 * in the guest (the window tapir offers it). That is the push back a
 * sender gets from a real link, and it keeps TCP out of the rate's drops.
 *
 * Return: bytes, or UINT32_MAX if no rate applies
 */
uint32_t cond_flight_max(struct ctx *c, unsigned int dir,
                         const struct in6_addr *host, uint16_t hport,
                         uint16_t gport, uint32_t *burst)
{
	struct cond_state *st = c->cond;
	const struct cond_rule *r = NULL;
	struct hdrs h = {.proto = IPPROTO_TCP};
	double bytes;

	*burst = UINT32_MAX;
	if (!st)
		return UINT32_MAX;
	reload(c, st);
	if (dir == COND_TO_GUEST) {
		h.src = *host;
		h.sport = hport;
		h.dport = gport;
	} else {
		h.dst = *host;
		h.sport = gport;
		h.dport = hport;
	}
	for (unsigned int i = 0; i < st->set.n && !r; i++)
		if (rule_matches(&st->set.r[i], dir, &h))
			r = &st->set.r[i];
	if (!r || !r->rate_bps)
		return UINT32_MAX;
	bytes = (double)COND_SEND_NS * (double)r->rate_bps / 8e9;
	*burst = bytes < COND_SEND_MIN ? COND_SEND_MIN : (uint32_t)bytes;
	bytes = (double)(__atomic_load_n(&cond_delays_ns, __ATOMIC_RELAXED) +
	                 COND_QUEUE_NS / 2) *
	                (double)r->rate_bps / 8e9 +
	        (double)r->burst + 65536;
	return bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
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
 * held.
 */
static void arm(struct cond_state *st, uint64_t at)
{
	static struct log_limit limit;
	struct itimerspec its = {0};

	if (st->armed && st->armed <= at)
		return;
	at = at > COND_SLACK_NS ? at - COND_SLACK_NS : 1;
	its.it_value.tv_sec = (time_t)(at / 1000000000ULL);
	its.it_value.tv_nsec = (long)(at % 1000000000ULL);
	if (timerfd_settime(st->tfd, TFD_TIMER_ABSTIME, &its, NULL)) {
		err_limited(&limit, errno, "conditions: arm the timer");
		return;
	}
	st->armed = at + COND_SLACK_NS;
}

/**
 * hold() - copy a frame into its rule's FIFO until @at
 * @c:		context
 * @st:		thread's conditions
 * @d:		direction index, 0 to the guest
 * @i:		rule index
 * @at:		when it goes
 * @iov:	vnet header, then the frame
 * @iovcnt:	entries
 *
 * Return: 0, or -1 if COND_HOLD_MAX bytes are held already or memory ran
 *	   out (counted as overflow: never meant, tests require none)
 */
static int hold(struct ctx *c, struct cond_state *st, unsigned int d,
                unsigned int i, uint64_t at, const struct iovec *iov,
                int iovcnt)
{
	struct fifo *f = &st->fifo[d][i];
	size_t len = 0, off = 0;
	struct held *h;

	for (int k = 0; k < iovcnt; k++)
		len += iov[k].iov_len;
	if (st->held[d] + len > COND_HOLD_MAX ||
	    !(h = malloc(sizeof(*h) + len))) {
		c->stats.cond[CC_OVERFLOW]++;
		return -1;
	}
	for (int k = 0; k < iovcnt; k++) {
		memcpy(h->data + off, iov[k].iov_base, iov[k].iov_len);
		off += iov[k].iov_len;
	}
	h->next = NULL;
	h->at = at < f->last ? f->last : at;
	h->q = c->queue;
	h->len = len;
	f->last = h->at;
	*f->tail = h;
	f->tail = &h->next;
	st->held[d] += len;
	c->stats.cond[CC_DELAYED]++;
	arm(st, h->at);
	return 0;
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
	size_t len = 0;
	int i;

	if (!st)
		return false;
	reload(c, st);
	i = find_rule(st, dir, iov, iovcnt, c->vnet_len);
	if (i < 0)
		return false;
	r = &st->set.r[i];
	if (r->down) {
		c->stats.cond[CC_DOWN]++;
		return true;
	}
	if (lost(st, r, &st->burst[i][d])) {
		c->stats.cond[CC_LOSS]++;
		return true;
	}
	dup = r->duplicate && rng_unit(st) < r->duplicate;
	skip = r->reorder && rng_unit(st) < r->reorder;
	now = clock_ns();
	at = now + (skip ? 0 : delay_of(st, r));
	for (int k = 0; k < iovcnt; k++)
		len += iov[k].iov_len;
	if (r->rate_bps) {
		at = rate_departure((unsigned int)i, d, r, at,
		                    len - c->vnet_len);
		if (!at) {
			c->stats.cond[CC_RATE]++;
			return true;
		}
	}
	/* A copy that can't be held is counted as overflow, and the
	 * original still goes.
	 */
	if (dup && !hold(c, st, d, (unsigned int)i, at, iov, iovcnt))
		c->stats.cond[CC_DUPLICATED]++;
	if (skip) {
		c->stats.cond[CC_REORDERED]++;
		if (at <= now)
			return false;
	}
	if (at <= now && !st->fifo[d][i].head)
		return false;
	/* Dropped if it can't be held: counted as overflow (hold()). */
	(void)hold(c, st, d, (unsigned int)i, at, iov, iovcnt);
	return true;
}

/**
 * deliver() - send one held frame on its way, and free it
 * @c:		context
 * @d:		direction index, 0 to the guest
 * @h:		the frame, out of its FIFO
 */
static void deliver(struct ctx *c, unsigned int d, struct held *h)
{
	struct cond_state *st = c->cond;
	struct iovec iov = {.iov_base = h->data, .iov_len = h->len};
	int i;

	/* A partition set since it was held cuts it too, as a cut link
	 * loses what was on it.
	 */
	if (st->has_down) {
		i = find_rule(st, d ? COND_TO_HOST : COND_TO_GUEST, &iov, 1,
		              c->vnet_len);
		if (i >= 0 && st->set.r[i].down) {
			c->stats.cond[CC_DOWN]++;
			free(h);
			return;
		}
	}
	c->queue = h->q;
	if (d == 0)
		tap_write_held(c, h->data, h->len);
	else
		tap_input_held(c, h->data, h->len);
	free(h);
}

/**
 * deliver_due() - deliver what is due, oldest first within each FIFO
 * @c:		context
 * @st:		its conditions
 * @now:	clock_ns()
 * @inputs:	set if a frame from the guest was handled
 *
 * Return: the earliest time still held, or 0 if nothing is
 */
static uint64_t deliver_due(struct ctx *c, struct cond_state *st, uint64_t now,
                            bool *inputs)
{
	uint64_t next = 0;
	int budget = COND_BATCH;

	for (unsigned int d = 0; d < 2; d++) {
		for (unsigned int i = 0; i < COND_RULES_MAX; i++) {
			struct fifo *f = &st->fifo[d][i];
			struct held *h;

			while ((h = f->head) && budget &&
			       h->at <= now + COND_SLACK_NS) {
				f->head = h->next;
				if (!f->head)
					f->tail = &f->head;
				st->held[d] -= h->len;
				budget--;
				*inputs |= d == 1;
				deliver(c, d, h);
			}
			if (f->head && (!next || f->head->at < next))
				next = f->head->at;
		}
	}
	return next;
}

/**
 * cond_run() - deliver what is due and re-arm for the rest
 * @c:		context
 *
 * The timer's work; unit tests call it after clock_advance().
 */
void cond_run(struct ctx *c)
{
	struct cond_state *st = c->cond;
	bool inputs = false;
	uint64_t next;

	st->armed = 0;
	reload(c, st);
	next = deliver_due(c, st, clock_ns(), &inputs);
	/* What the guest sent may have made ACKs and data for it: one
	 * flush for the batch, as after a tap read.
	 */
	if (inputs)
		tcp_flush(c);
	if (next)
		arm(st, next);
}

/**
 * cond_timer_cb() - the thread's one timer fired
 * @fd:		its timerfd
 * @what:	unused
 * @arg:	struct ctx
 */
static void cond_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	uint64_t expirations;

	(void)what;
	/* Only to clear it: a timer re-armed since reads EAGAIN. */
	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		debug_msg("conditions: read the timer: %s", strerror(errno));
	cond_run(arg);
}

/**
 * cond_init() - a thread's conditions: its FIFOs and its timer, made
 *		 before the sandbox, whatever the rules, so that the API can
 *		 set some later
 * @c:		context with its event base
 *
 * Return: 0, or -1 after printing one error line
 */
int cond_init(struct ctx *c)
{
	struct cond_state *st = calloc(1, sizeof(*st));

	if (!st) {
		err_msg("conditions: out of memory");
		return -1;
	}
	st->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (st->tfd < 0) {
		err_errno(errno, "conditions: create the timer");
		free(st);
		return -1;
	}
	st->ev = event_new(c->base, st->tfd, EV_READ | EV_PERSIST,
	                   cond_timer_cb, c);
	if (!st->ev || event_add(st->ev, NULL)) {
		err_msg("conditions: watch the timer: libevent failed");
		if (st->ev)
			event_free(st->ev);
		close(st->tfd);
		free(st);
		return -1;
	}
	for (unsigned int d = 0; d < 2; d++)
		for (unsigned int i = 0; i < COND_RULES_MAX; i++)
			st->fifo[d][i].tail = &st->fifo[d][i].head;
	st->gen = ~0U;
	c->cond = st;
	return 0;
}

/**
 * cond_cleanup() - free held frames and the timer
 * @c:		context, with or without its conditions
 */
void cond_cleanup(struct ctx *c)
{
	struct cond_state *st = c->cond;

	if (!st)
		return;
	for (unsigned int d = 0; d < 2; d++) {
		for (unsigned int i = 0; i < COND_RULES_MAX; i++) {
			struct held *h = st->fifo[d][i].head, *next;

			for (; h; h = next) {
				next = h->next;
				free(h);
			}
		}
	}
	event_free(st->ev);
	close(st->tfd);
	free(st);
	c->cond = NULL;
}
