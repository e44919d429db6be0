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
#include <linux/virtio_net.h>

#include "clock.h"
#include "cond_internal.h"
#include "inany.h"
#include "log.h"
#include "seed.h"

/* Partitions remembered for the frames held before them (cond_cut()). */
#define COND_CUTS_MAX 8
/* Bytes of a frame's headers that matching reads, after its vnet header. */
#define COND_HDR_BYTES 128
/* The longest vnet header (struct virtio_net_hdr_mrg_rxbuf). */
#define COND_VNET_MAX 12

bool cond_on;

/* The rules in force, process-wide. */
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cond_set cond_cur;    /* under cond_lock */
static struct cond_shared *cond_sh; /* under cond_lock; holds a ref */
static unsigned int cond_gen;       /* atomic: bumped by each install */

/**
 * struct cut - a set of rules with a partition, installed at @gen
 * @gen:	the generation it was installed as
 * @set:	the set
 */
struct cut {
	unsigned int gen;
	struct cond_set set;
};

/* The last partitions set, under cond_lock, oldest first; and, atomic,
 * the generation of the newest (0 for none), and of the newest one
 * forgotten to make room.
 */
static struct cut cond_cuts[COND_CUTS_MAX];
static unsigned int cond_ncuts;
static unsigned int cond_cut_last;
static unsigned int cond_cut_lost;

/**
 * gen_before() - generation order, modulo 2^32
 * @a:		one
 * @b:		other
 *
 * Return: true if @a came before @b
 */
static bool gen_before(unsigned int a, unsigned int b)
{
	return (int)(a - b) < 0;
}

/**
 * remember_cut() - keep a set that holds a partition, for the frames held
 *		    before it (cond_cut())
 * @s:		the set
 * @gen:	its generation
 *
 * Under cond_lock. The oldest is forgotten past COND_CUTS_MAX.
 */
static void remember_cut(const struct cond_set *s, unsigned int gen)
{
	bool down = false;

	for (unsigned int i = 0; i < s->n; i++)
		down |= s->r[i].down;
	if (!down)
		return;
	if (cond_ncuts == COND_CUTS_MAX) {
		__atomic_store_n(&cond_cut_lost, cond_cuts[0].gen,
		                 __ATOMIC_RELEASE);
		memmove(cond_cuts, cond_cuts + 1,
		        sizeof(cond_cuts[0]) * (COND_CUTS_MAX - 1));
		cond_ncuts--;
	}
	cond_cuts[cond_ncuts].gen = gen;
	cond_cuts[cond_ncuts++].set = *s;
	__atomic_store_n(&cond_cut_last, gen, __ATOMIC_RELEASE);
}

/**
 * shared_put() - drop a reference to the state the threads share for one
 *		  set of rules, freeing it with the last
 * @sh:		the state, or NULL
 */
static void shared_put(struct cond_shared *sh)
{
	if (sh && !__atomic_sub_fetch(&sh->refs, 1, __ATOMIC_ACQ_REL))
		free(sh);
}

/**
 * scope_same() - whether two rules apply to the same frames
 * @a:		one
 * @b:		other
 *
 * Return: true if so
 */
static bool scope_same(const struct cond_rule *a, const struct cond_rule *b)
{
	return a->dir == b->dir && a->m.proto == b->m.proto &&
	       a->m.port == b->m.port && a->m.has_host == b->m.has_host &&
	       (!a->m.has_host || !memcmp(&a->m.host, &b->m.host, 16));
}

/**
 * rule_same() - whether two rules are the same: the frames they apply to
 *		 and what they do to them
 * @a:		one
 * @b:		other
 *
 * Return: true if so
 */
static bool rule_same(const struct cond_rule *a, const struct cond_rule *b)
{
	return scope_same(a, b) && a->delay_ns == b->delay_ns &&
	       a->jitter_ns == b->jitter_ns && a->dist == b->dist &&
	       a->loss == b->loss && a->loss_corr == b->loss_corr &&
	       a->duplicate == b->duplicate && a->reorder == b->reorder &&
	       a->rate_bps == b->rate_bps && a->burst == b->burst &&
	       a->down == b->down;
}

/**
 * cond_same_rules() - which rule of an earlier set each rule of a new set
 *		       is, unchanged
 * @old:	the earlier set
 * @s:		the new set
 * @from:	filled: per rule of @s, the index of the same rule in @old,
 *		each taken once, or -1
 */
void cond_same_rules(const struct cond_set *old, const struct cond_set *s,
                     int *from)
{
	bool taken[COND_RULES_MAX] = {false};

	for (unsigned int j = 0; j < COND_RULES_MAX; j++) {
		from[j] = -1;
		for (unsigned int i = 0; j < s->n && i < old->n; i++) {
			if (taken[i] || !rule_same(&old->r[i], &s->r[j]))
				continue;
			taken[i] = true;
			from[j] = (int)i;
			break;
		}
	}
}

/**
 * carry_rates() - a new set's rates go on from where the set they replace
 *		   left them
 * @old:	the rules replaced, or none
 * @osh:	their shared state, or NULL
 * @s:		the new rules
 * @sh:		their shared state, not yet in use
 *
 * A rule that stays the same keeps its clock: setting the same rules
 * again, or changing another, gives its rate no fresh queue while the old
 * one still drains (10 Mbit/s passed 27 with a set every 100 ms). A rule
 * that applies to the same frames with another rate starts where the old
 * one's queue ends: the frames held keep their times, and the new rate
 * applies to those that come after, with no burst above either.
 */
static void carry_rates(const struct cond_set *old,
                        const struct cond_shared *osh, const struct cond_set *s,
                        struct cond_shared *sh)
{
	int from[COND_RULES_MAX];

	if (!osh)
		return;
	cond_same_rules(old, s, from);
	for (unsigned int j = 0; j < s->n; j++) {
		int i = from[j];

		for (unsigned int k = 0; i < 0 && k < old->n; k++)
			if (old->r[k].rate_bps &&
			    scope_same(&old->r[k], &s->r[j]))
				i = (int)k;
		if (i < 0 || !s->r[j].rate_bps || !old->r[i].rate_bps)
			continue;
		for (unsigned int d = 0; d < 2; d++)
			sh->tat[j][d] = __atomic_load_n(&osh->tat[i][d],
			                                __ATOMIC_RELAXED);
	}
}

/**
 * cond_install() - put a set of rules in force, replacing the last
 * @s:		the new rules, checked (cond_check_memory()); none clears
 *
 * Frames read or sent after this returns see the new rules; frames held
 * already keep the times they were given. A rule that stays the same
 * keeps its FIFO (cond_reload()) and its rate's clock (carry_rates());
 * the FIFOs of the others no longer hold new frames back (cond_retire()).
 * The new rules get state of their own that the threads share (struct
 * cond_shared): frame counts that start at 0, and the rates carried over.
 * A thread still on the old rules writes only to the old state, which
 * lives until its last thread moves on.
 *
 * Return: 0, or -1 if memory ran out (the old rules stay)
 */
int cond_install(const struct cond_set *s)
{
	struct cond_shared *sh = calloc(1, sizeof(*sh)), *old;

	if (!sh)
		return -1;
	sh->refs = 1;
	sh->seed = s->seeded ? s->seed : seed_u64();
	pthread_mutex_lock(&cond_lock);
	old = cond_sh;
	carry_rates(&cond_cur, old, s, sh);
	cond_sh = sh;
	cond_cur = *s;
	remember_cut(s, __atomic_add_fetch(&cond_gen, 1, __ATOMIC_RELEASE));
	__atomic_store_n(&cond_on, s->n > 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cond_lock);
	shared_put(old);
	return 0;
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
 * cond_reload() - take the rules in force if they changed since the last
 *		   copy
 * @st:		a thread's conditions
 *
 * The random choices of each frame come from the seed and the frame's
 * number under its rule (frame_rng()). A rule that stays the same keeps
 * its FIFO and its loss bursts' state. A thread that is delivering held
 * frames (cond_run()) keeps its copy until it is done.
 */
void cond_reload(struct cond_state *st)
{
	unsigned int gen = __atomic_load_n(&cond_gen, __ATOMIC_ACQUIRE);
	bool burst[COND_RULES_MAX][2];
	int from[COND_RULES_MAX];
	struct cond_set old;

	/* Not while it delivers held frames: their FIFOs must stay put. */
	if (gen == st->gen || st->delivering)
		return;
	shared_put(st->sh);
	old = st->set;
	pthread_mutex_lock(&cond_lock);
	st->set = cond_cur;
	st->sh = cond_sh;
	if (st->sh)
		__atomic_add_fetch(&st->sh->refs, 1, __ATOMIC_RELAXED);
	st->gen = __atomic_load_n(&cond_gen, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cond_lock);
	cond_same_rules(&old, &st->set, from);
	cond_retire(st, from);
	memcpy(burst, st->burst, sizeof(burst));
	memset(st->burst, 0, sizeof(st->burst));
	for (unsigned int j = 0; j < st->set.n; j++)
		if (from[j] >= 0)
			memcpy(st->burst[j], burst[from[j]], sizeof(burst[0]));
}

/**
 * struct hdrs - what rules match on, from a frame's headers, and what a
 *		 rate counts
 * @proto:	IP protocol, ICMPv6 counted as ICMP, or 0 if not IP
 * @sport:	TCP or UDP source port, else 0
 * @dport:	destination port, else 0
 * @src:	IP source (IPv4 mapped)
 * @dst:	IP destination
 * @hlen:	bytes of Ethernet, IP and TCP or UDP headers, 0 if unknown
 * @gso_size:	payload bytes per segment of a GSO frame, else 0
 */
struct hdrs {
	uint8_t proto;
	uint16_t sport;
	uint16_t dport;
	struct in6_addr src;
	struct in6_addr dst;
	size_t hlen;
	uint16_t gso_size;
};

/**
 * parse_hdrs() - the fields matching reads, bounds checked
 * @b:		start of the Ethernet frame
 * @len:	bytes at @b
 * @h:		filled; zero where the frame has no such field
 */
static void parse_hdrs(const uint8_t *b, size_t len, struct hdrs *h)
{
	struct in_addr a4;
	size_t l4;

	memset(h, 0, sizeof(*h));
	if (len >= 14 + 20 && b[12] == 0x08 && b[13] == 0x00) {
		h->proto = b[14 + 9];
		memcpy(&a4, b + 14 + 12, 4);
		inany_from_v4(&h->src, a4);
		memcpy(&a4, b + 14 + 16, 4);
		inany_from_v4(&h->dst, a4);
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
	if (h->proto == IPPROTO_UDP && l4 + 8 <= len)
		h->hlen = l4 + 8;
	else if (h->proto == IPPROTO_TCP && l4 + 13 < len)
		h->hlen = l4 + (size_t)(b[l4 + 12] >> 4) * 4;
}

/**
 * frame_hdrs() - the fields a frame's rule and rate read, bounds checked
 * @iov:	vnet header (@vnet_len bytes, maybe 0), then the frame
 * @iovcnt:	entries
 * @vnet_len:	bytes of vnet header
 * @h:		filled
 */
static void frame_hdrs(const struct iovec *iov, int iovcnt, size_t vnet_len,
                       struct hdrs *h)
{
	uint8_t b[COND_VNET_MAX + COND_HDR_BYTES];
	size_t want = vnet_len + COND_HDR_BYTES, len = 0;
	struct virtio_net_hdr vh;

	if (vnet_len > COND_VNET_MAX)
		want = COND_HDR_BYTES;
	for (int i = 0; i < iovcnt && len < want; i++) {
		size_t n = iov[i].iov_len < want - len ? iov[i].iov_len
		                                       : want - len;

		memcpy(b + len, iov[i].iov_base, n);
		len += n;
	}
	if (vnet_len > COND_VNET_MAX || len < vnet_len) {
		memset(h, 0, sizeof(*h));
		return;
	}
	parse_hdrs(b + vnet_len, len - vnet_len, h);
	if (vnet_len < sizeof(vh))
		return;
	memcpy(&vh, b, sizeof(vh));
	if (vh.gso_type != VIRTIO_NET_HDR_GSO_NONE)
		h->gso_size = vh.gso_size;
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
 * first_match() - the first rule that applies to a frame
 * @st:		thread's conditions
 * @dir:	COND_TO_GUEST or COND_TO_HOST
 * @h:		the frame's fields
 *
 * Return: its index, or -1
 */
static int first_match(const struct cond_state *st, unsigned int dir,
                       const struct hdrs *h)
{
	for (unsigned int i = 0; i < st->set.n; i++)
		if (rule_matches(&st->set.r[i], dir, h))
			return (int)i;
	return -1;
}

/**
 * cond_find_rule() - the first rule that applies to a frame
 * @st:		thread's conditions
 * @dir:	COND_TO_GUEST or COND_TO_HOST
 * @iov:	vnet header (@vnet_len bytes, maybe 0), then the frame
 * @iovcnt:	entries
 * @vnet_len:	bytes of vnet header
 *
 * Return: its index, or -1
 */
int cond_find_rule(const struct cond_state *st, unsigned int dir,
                   const struct iovec *iov, int iovcnt, size_t vnet_len)
{
	struct hdrs h;

	frame_hdrs(iov, iovcnt, vnet_len, &h);
	return first_match(st, dir, &h);
}

/**
 * cond_cut() - whether a partition set since a frame was held cuts it,
 *		as a cut link loses what was on it
 * @gen:	generation of the rules the frame was held under
 * @dir:	COND_TO_GUEST or COND_TO_HOST
 * @iov:	vnet header (@vnet_len bytes, maybe 0), then the frame
 * @iovcnt:	entries
 * @vnet_len:	bytes of vnet header
 *
 * Whether the partition still holds or was healed since: a frame on a
 * link when it was cut is lost either way. One atomic load when no
 * partition came after the frame; else the partitions remembered are
 * looked up under the lock, once for each frame that was held across
 * one. A frame older than a partition forgotten (more than COND_CUTS_MAX
 * set since) counts as cut.
 *
 * Return: true if the frame is cut
 */
bool cond_cut(unsigned int gen, unsigned int dir, const struct iovec *iov,
              int iovcnt, size_t vnet_len)
{
	unsigned int last = __atomic_load_n(&cond_cut_last, __ATOMIC_ACQUIRE);
	struct hdrs h;
	bool cut = false;

	if (!last || !gen_before(gen, last))
		return false;
	if (gen_before(gen, __atomic_load_n(&cond_cut_lost, __ATOMIC_ACQUIRE)))
		return true;
	frame_hdrs(iov, iovcnt, vnet_len, &h);
	pthread_mutex_lock(&cond_lock);
	for (unsigned int k = 0; k < cond_ncuts && !cut; k++) {
		const struct cond_set *s = &cond_cuts[k].set;

		if (!gen_before(gen, cond_cuts[k].gen))
			continue;
		for (unsigned int i = 0; i < s->n; i++) {
			if (!rule_matches(&s->r[i], dir, &h))
				continue;
			cut = s->r[i].down;
			break;
		}
	}
	pthread_mutex_unlock(&cond_lock);
	return cut;
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
 * cond_tcp_rule() - the first rule that applies to a TCP connection's
 *		     frames one way
 * @st:		thread's conditions
 * @dir:	COND_TO_GUEST or COND_TO_HOST
 * @host:	the host side's address as the guest sees it
 * @hport:	its port
 * @gport:	the guest's port
 *
 * Return: its index, or -1
 */
int cond_tcp_rule(const struct cond_state *st, unsigned int dir,
                  const struct in6_addr *host, uint16_t hport, uint16_t gport)
{
	struct hdrs h = {.proto = IPPROTO_TCP};

	if (dir == COND_TO_GUEST) {
		h.src = *host;
		h.sport = hport;
		h.dport = gport;
	} else {
		h.dst = *host;
		h.sport = gport;
		h.dport = hport;
	}
	for (unsigned int i = 0; i < st->set.n; i++)
		if (rule_matches(&st->set.r[i], dir, &h))
			return (int)i;
	return -1;
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
	cond_reload(st);
	frame_hdrs(iov, iovcnt, c->vnet_len, &h);
	i = first_match(st, dir, &h);
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
	if (cond_line_init(c, st)) {
		free(st);
		return -1;
	}
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
	if (!c->cond)
		return;
	cond_line_cleanup(c->cond);
	shared_put(c->cond->sh);
	free(c->cond);
	c->cond = NULL;
}
