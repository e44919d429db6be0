// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - network conditions: the rules in force, each thread's copy of
 * them, which rule a frame falls under, and what a partition cut
 *
 * The rules are process-wide and replaced whole (cond_install()); each
 * thread takes a copy when the generation changes (cond_reload()). The
 * delay line (cond_line.c) and the decisions for each frame (cond.c) both
 * read them; this file calls neither.
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <linux/virtio_net.h>

#include "driver/cond/cond_internal.h"
#include "driver/core/inany.h"
#include "driver/core/seed.h"

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
 * cond_shared_put() - drop a reference to the state the threads share for one
 *		  set of rules, freeing it with the last
 * @sh:		the state, or NULL
 */
void cond_shared_put(struct cond_shared *sh)
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
	cond_shared_put(old);
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
 * cond_reload() - take the rules in force if they changed since the last
 *		   copy
 * @st:		a thread's conditions
 * @from:	filled when they changed: for each rule now in force, the
 *		index of the same rule before, or -1
 *
 * The random choices of each frame come from the seed and the frame's
 * number under its rule (frame_rng()). A rule that stays the same keeps
 * its FIFO and its loss bursts' state. A thread that is delivering held
 * frames (cond_run()) keeps its copy until it is done. The FIFOs of the
 * rules gone are the delay line's to retire (cond_line_reload()).
 *
 * Return: true if the rules changed
 */
bool cond_reload(struct cond_state *st, int from[COND_RULES_MAX])
{
	unsigned int gen = __atomic_load_n(&cond_gen, __ATOMIC_ACQUIRE);
	bool burst[COND_RULES_MAX][2];
	struct cond_set old;

	/* Not while it delivers held frames: their FIFOs must stay put. */
	if (gen == st->gen || st->delivering)
		return false;
	cond_shared_put(st->sh);
	old = st->set;
	pthread_mutex_lock(&cond_lock);
	st->set = cond_cur;
	st->sh = cond_sh;
	if (st->sh)
		__atomic_add_fetch(&st->sh->refs, 1, __ATOMIC_RELAXED);
	st->gen = __atomic_load_n(&cond_gen, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cond_lock);
	cond_same_rules(&old, &st->set, from);
	memcpy(burst, st->burst, sizeof(burst));
	memset(st->burst, 0, sizeof(st->burst));
	for (unsigned int j = 0; j < st->set.n; j++)
		if (from[j] >= 0)
			memcpy(st->burst[j], burst[from[j]], sizeof(burst[0]));
	return true;
}

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
 * cond_frame_hdrs() - the fields a frame's rule and rate read, bounds checked
 * @iov:	vnet header (@vnet_len bytes, maybe 0), then the frame
 * @iovcnt:	entries
 * @vnet_len:	bytes of vnet header
 * @h:		filled
 */
void cond_frame_hdrs(const struct iovec *iov, int iovcnt, size_t vnet_len,
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
 * cond_first_match() - the first rule that applies to a frame
 * @st:		thread's conditions
 * @dir:	COND_TO_GUEST or COND_TO_HOST
 * @h:		the frame's fields
 *
 * Per frame, a look at each rule: at most COND_RULES_MAX, whatever the
 * flows held (so for cond_tcp_rule(), per TCP timer and window).
 *
 * Return: its index, or -1
 */
int cond_first_match(const struct cond_state *st, unsigned int dir,
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

	cond_frame_hdrs(iov, iovcnt, vnet_len, &h);
	return cond_first_match(st, dir, &h);
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
	cond_frame_hdrs(iov, iovcnt, vnet_len, &h);
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
