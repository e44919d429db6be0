// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - which datapath thread owns each flow the guest sees
 *
 * With --queues N every thread has a flow table of its own, and tun may
 * hand a flow's frames to any queue. The owner table maps each TCP and
 * UDP flow key, as the guest sees it, to the one thread that holds the
 * flow, or that a new connection was placed on and is on its way to. So:
 * - a frame read on a thread without its flow goes straight to the owner;
 * - a flow can't be opened twice (one guest flow, one host socket), and a
 *   host client can't get a connection whose four-tuple the guest already
 *   has on another thread: the guest would answer the newcomer's SYN with
 *   a challenge ACK, and the newcomer's RST would end the established one.
 *
 * One mutex serialises it. It is taken when a flow opens or closes and
 * for a frame its reader has no flow for, never for a frame of a flow
 * the reader holds. Entries come from a pool that doubles as it fills,
 * up to a ceiling set at start (every thread's flows): a full pool
 * refuses new flows, as a full flow table does. Connections
 * placed on a thread and not opened there yet are bounded per thread: a
 * guest flooding SYNs faster than a thread opens them can't fill the pool
 * with them.
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/ctx.h"
#include "driver/flow/flow_key.h"
#include "driver/flow/flow_owner.h"
#include "driver/core/seed.h"

/**
 * struct owner_entry - one key and its thread
 * @k:		the flow key, guest side
 * @next:	next entry in its chain, or on the free list: index + 1,
 *		0 = end
 * @owner:	thread index
 * @placed:	a connection placed on @owner, not opened there yet
 */
struct owner_entry {
	struct flow_key k;
	uint32_t next;
	uint8_t owner;
	bool placed;
};

/**
 * struct flow_owners - the owner table shared by every datapath thread
 * @lock:	protects everything below
 * @seed:	hash seed: a guest can't aim for one chain
 * @nbuckets:	chain heads, a power of two
 * @buckets:	chain heads, as @next
 * @free_head:	first entry given back, as @next
 * @top:	entries handed out from the start of @e so far
 * @size:	entries in @e now
 * @cap:	entries @e may grow to
 * @placed:	per thread, entries placed on it and not opened yet
 * @e:		the entries
 */
struct flow_owners {
	pthread_mutex_t lock;
	uint64_t seed;
	uint32_t nbuckets;
	uint32_t *buckets;
	uint32_t free_head;
	uint32_t top;
	uint32_t size;
	uint32_t cap;
	uint32_t placed[TAPIR_MAX_QUEUES];
	struct owner_entry *e;
};

/* Entries an owner table starts with; it doubles from there. */
#define OWNERS_FIRST 1024

/**
 * flow_owners_new() - an empty owner table
 * @cap:	keys it holds at most
 *
 * Return: the table, or NULL (ENOMEM)
 */
struct flow_owners *flow_owners_new(uint32_t cap)
{
	struct flow_owners *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->size = cap < OWNERS_FIRST ? cap : OWNERS_FIRST;
	o->nbuckets = 1;
	while (o->nbuckets < o->size)
		o->nbuckets <<= 1;
	o->buckets = calloc(o->nbuckets, sizeof(*o->buckets));
	o->e = calloc(o->size, sizeof(*o->e));
	if (!cap || !o->buckets || !o->e ||
	    pthread_mutex_init(&o->lock, NULL)) {
		free(o->buckets);
		free(o->e);
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	o->cap = cap;
	o->seed = seed_u64();
	return o;
}

/**
 * flow_owners_free() - free an owner table no thread uses any more
 * @o:		table, or NULL
 */
void flow_owners_free(struct flow_owners *o)
{
	if (!o)
		return;
	pthread_mutex_destroy(&o->lock);
	free(o->buckets);
	free(o->e);
	free(o);
}

/**
 * link_of() - where the chain link to @k's entry is, under the lock
 * @o:		table
 * @k:		key
 * @h:		flow_key_mix() of @k with @o's seed, taken before the lock
 *
 * Return: the bucket head or the @next field pointing at the entry, or at
 *	   the chain's end (0) if no entry has @k
 */
static uint32_t *link_of(struct flow_owners *o, const struct flow_key *k,
                         uint64_t h)
{
	uint32_t *l = &o->buckets[h & (o->nbuckets - 1)];

	while (*l && !flow_key_equal(&o->e[*l - 1].k, k))
		l = &o->e[*l - 1].next;
	return l;
}

/**
 * grow() - double the entries, and the buckets with them, under the lock
 * @o:		table, every entry in use
 *
 * Every key is hashed again: once per doubling, so the cost per key stays
 * flat.
 *
 * Return: 0, or -1 at the ceiling or out of memory (the table is as it
 *	   was)
 */
static int grow(struct flow_owners *o)
{
	uint32_t n = o->size <= o->cap / 2 ? o->size * 2 : o->cap;
	uint32_t nb = o->nbuckets, *b;
	struct owner_entry *e;

	if (n <= o->size)
		return -1;
	while (nb < n && nb < (1U << 30))
		nb <<= 1;
	e = realloc(o->e, (size_t)n * sizeof(*e));
	if (!e)
		return -1;
	o->e = e;
	b = calloc(nb, sizeof(*b));
	if (!b)
		return -1;
	memset(e + o->size, 0, (size_t)(n - o->size) * sizeof(*e));
	o->size = n;
	free(o->buckets);
	o->buckets = b;
	o->nbuckets = nb;
	/* Called with the free list empty: every entry is in a chain. */
	for (uint32_t i = 0; i < o->top; i++) {
		b = &o->buckets[flow_key_mix(o->seed, &e[i].k) &
		                (o->nbuckets - 1)];
		e[i].next = *b;
		*b = i + 1;
	}
	return 0;
}

/**
 * entry_new() - a free entry, under the lock
 * @o:		table
 *
 * Return: its index + 1, or 0 if every entry is in use
 */
static uint32_t entry_new(struct flow_owners *o)
{
	uint32_t i = o->free_head;

	if (i) {
		o->free_head = o->e[i - 1].next;
		return i;
	}
	if (o->top == o->size && grow(o))
		return 0;
	return ++o->top;
}

/**
 * set_placed() - change whether an entry waits for its placed connection
 * @o:		table, locked
 * @e:		entry
 * @placed:	its new state
 */
static void set_placed(struct flow_owners *o, struct owner_entry *e,
                       bool placed)
{
	if (e->placed != placed && e->owner < TAPIR_MAX_QUEUES)
		o->placed[e->owner] += placed ? 1 : (uint32_t)-1;
	e->placed = placed;
}

/**
 * flow_owner_take() - make @to the owner of @k, unless a thread is already
 * @o:		table
 * @k:		guest-side key
 * @to:		thread index
 * @placed:	for a connection placed on @to, which @to has yet to open
 *		(flow_owner_unplace() takes it back if it doesn't); false
 *		for a flow @to opens now
 * @holder:	OWNER_HELD: set to the thread that has it (maybe @to)
 *
 * A key placed on @to and then opened there is held by @to: its flow
 * takes it over (with @placed false).
 *
 * Return: enum owner_take
 */
enum owner_take flow_owner_take(struct flow_owners *o, const struct flow_key *k,
                                unsigned int to, bool placed,
                                unsigned int *holder)
{
	uint64_t h = flow_key_mix(o->seed, k);
	enum owner_take ret = OWNER_TAKEN;
	uint32_t *l, i;

	pthread_mutex_lock(&o->lock);
	l = link_of(o, k, h);
	if (*l) {
		*holder = o->e[*l - 1].owner;
		if (*holder == to && !placed)
			set_placed(o, &o->e[*l - 1], false);
		ret = OWNER_HELD;
	} else if (placed && to < TAPIR_MAX_QUEUES &&
	           o->placed[to] >= FLOW_OWNER_PLACED_MAX) {
		ret = OWNER_BUSY;
	} else if (!(i = entry_new(o))) {
		ret = OWNER_FULL;
	} else {
		/* entry_new() may have grown the table: find the chain's
		 * end again.
		 */
		l = link_of(o, k, h);
		o->e[i - 1].k = *k;
		o->e[i - 1].owner = (uint8_t)to;
		o->e[i - 1].placed = false;
		o->e[i - 1].next = 0;
		set_placed(o, &o->e[i - 1], placed);
		*l = i;
	}
	pthread_mutex_unlock(&o->lock);
	return ret;
}

/**
 * flow_owner_find() - the thread that owns @k
 * @o:		table
 * @k:		guest-side key
 *
 * Return: its index, or -1 if no thread has it
 */
int flow_owner_find(struct flow_owners *o, const struct flow_key *k)
{
	uint64_t h = flow_key_mix(o->seed, k);
	uint32_t *l;
	int ret;

	pthread_mutex_lock(&o->lock);
	l = link_of(o, k, h);
	ret = *l ? o->e[*l - 1].owner : -1;
	pthread_mutex_unlock(&o->lock);
	return ret;
}

/**
 * forget() - remove @k if @owner has it (and only if it was placed there
 *	      and not opened, for @placed_only)
 * @o:		table
 * @k:		guest-side key
 * @owner:	thread that gives it up
 * @placed_only: leave it if a flow opened with it
 */
static void forget(struct flow_owners *o, const struct flow_key *k,
                   unsigned int owner, bool placed_only)
{
	uint64_t h = flow_key_mix(o->seed, k);
	uint32_t *l, i;

	pthread_mutex_lock(&o->lock);
	l = link_of(o, k, h);
	if (*l && o->e[*l - 1].owner == owner &&
	    (!placed_only || o->e[*l - 1].placed)) {
		i = *l - 1;
		set_placed(o, &o->e[i], false);
		*l = o->e[i].next;
		o->e[i].next = o->free_head;
		o->free_head = i + 1;
	}
	pthread_mutex_unlock(&o->lock);
}

/**
 * flow_owner_release() - forget @k, if @owner has it
 * @o:		table
 * @k:		guest-side key
 * @owner:	thread that gives it up: its flow closed
 */
void flow_owner_release(struct flow_owners *o, const struct flow_key *k,
                        unsigned int owner)
{
	forget(o, k, owner, false);
}

/**
 * flow_owner_unplace() - forget @k if it was placed on @owner and no flow
 *			  opened with it there (the SYN was refused, or the
 *			  hand-off failed)
 * @o:		table
 * @k:		guest-side key
 * @owner:	thread it was placed on
 */
void flow_owner_unplace(struct flow_owners *o, const struct flow_key *k,
                        unsigned int owner)
{
	forget(o, k, owner, true);
}

/**
 * flow_owner_claim() - make @c's thread the owner of a flow it opens
 * @c:		context opening the flow
 * @k:		its guest-side key, which @c's own table doesn't have
 *
 * The key may wait for @c already: a connection placed on it.
 *
 * Return: 0 if the key is @c's thread's; -1 with errno EEXIST if another
 *	   thread has it, ENOSPC if the table is full. Always 0 without
 *	   datapath threads
 */
int flow_owner_claim(struct ctx *c, const struct flow_key *k)
{
	unsigned int holder;

	if (!c->owners)
		return 0;
	switch (flow_owner_take(c->owners, k, c->thread, false, &holder)) {
	case OWNER_TAKEN:
		return 0;
	case OWNER_HELD:
		if (holder == c->thread)
			return 0;
		errno = EEXIST;
		return -1;
	case OWNER_BUSY:
	case OWNER_FULL:
		break;
	}
	errno = ENOSPC;
	return -1;
}

/**
 * flow_owner_elsewhere() - whether a thread other than @c's has @k
 * @c:		context
 * @k:		guest-side key
 *
 * Return: true if so; false without datapath threads
 */
bool flow_owner_elsewhere(const struct ctx *c, const struct flow_key *k)
{
	int owner;

	if (!c->owners)
		return false;
	owner = flow_owner_find(c->owners, k);
	return owner >= 0 && (unsigned int)owner != c->thread;
}

/**
 * flow_owner_drop() - @c's thread gives up @k (its flow closed, or a
 *		       connection placed on it did not open)
 * @c:		context
 * @k:		guest-side key
 */
void flow_owner_drop(const struct ctx *c, const struct flow_key *k)
{
	if (c->owners)
		flow_owner_release(c->owners, k, c->thread);
}
