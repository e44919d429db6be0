// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - one flow table for TCP, UDP and ping: keyed hash, alloc, release */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/asan_interface.h>

#include "driver/core/ctx.h"
#include "driver/flow/flow.h"
#include "driver/flow/flow_owner.h"
#include "driver/core/log.h"
#include "driver/core/seed.h"

_Static_assert(sizeof(struct flow_common) % 8 == 0,
               "protocol fields after the common part stay aligned");
_Static_assert(FLOW_ENTRY_SIZE % 64 == 0, "entries start on cache lines");

/**
 * entry() - the entry at an index
 * @t:		table
 * @i:		index, below t->size
 *
 * Return: its common part, whatever its state
 */
static struct flow_common *entry(const struct flow_table *t, uint32_t i)
{
	return (struct flow_common *)(t->mem + (size_t)i * FLOW_ENTRY_SIZE);
}

/**
 * index_of() - the index of an entry
 * @t:		table
 * @f:		entry of @t
 *
 * Return: its index
 */
static uint32_t index_of(const struct flow_table *t,
                         const struct flow_common *f)
{
	return (uint32_t)(((const unsigned char *)f - t->mem) /
	                  FLOW_ENTRY_SIZE);
}

/**
 * side_key() - the key of one side of an entry
 * @f:		entry
 * @side:	enum flow_side
 *
 * Return: the key
 */
static struct flow_key *side_key(struct flow_common *f, unsigned int side)
{
	return side == FLOW_SIDE_GUEST ? &f->key : &f->host_key;
}

/**
 * flow_key_hash() - the table's hash of a key
 * @t:		table, for the seed
 * @k:		key
 *
 * Return: hash value; its low bits pick the bucket
 */
uint64_t flow_key_hash(const struct flow_table *t, const struct flow_key *k)
{
	return flow_key_mix(t->seed, k);
}

/**
 * bucket_of() - bucket of a key
 * @t:		table
 * @k:		key
 *
 * Return: bucket index
 */
static uint32_t bucket_of(const struct flow_table *t, const struct flow_key *k)
{
	return (uint32_t)flow_key_hash(t, k) & (t->nbuckets - 1);
}

/**
 * flow_table_init() - allocate every entry and the hash index once
 * @t:		table to initialise
 * @c:		context new flows belong to (may be NULL in tests)
 * @cap:	flows of each type at most; their sum is the table size
 *
 * Return: 0 on success, -ENOMEM, or -EINVAL for an empty table
 */
int flow_table_init(struct flow_table *t, struct ctx *c,
                    const unsigned int cap[FLOW_TYPES])
{
	uint64_t size = 0;

	memset(t, 0, sizeof(*t));
	for (int i = 0; i < FLOW_TYPES; i++) {
		t->cap[i] = cap[i];
		size += cap[i];
	}
	if (!size || size > UINT32_MAX / (FLOW_SIDES * 2))
		return -EINVAL;
	t->c = c;
	t->size = (uint32_t)size;
	/* Twice the entries, rounded up to a power of two for the mask. */
	t->nbuckets = 2;
	while (t->nbuckets < t->size * 2)
		t->nbuckets <<= 1;
	/* Entries on cache lines: FLOW_ENTRY_SIZE is a multiple of 64. Not
	 * zeroed here, which would make every page resident at start:
	 * flow_alloc() zeroes an entry when it hands it out.
	 */
	t->mem = aligned_alloc(64, (size_t)t->size * FLOW_ENTRY_SIZE);
	t->link = calloc((size_t)t->size * FLOW_SIDES, sizeof(*t->link));
	t->state = calloc(t->size, sizeof(*t->state));
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->mem || !t->link || !t->state || !t->buckets) {
		flow_table_free(t);
		return -ENOMEM;
	}
	t->seed = seed_u64();
	for (uint32_t i = t->size; i > 0; i--) {
		t->link[(i - 1) * FLOW_SIDES] = t->free_head;
		t->free_head = i;
	}
	/* Any use of a free entry is reported at once under ASan. */
	ASAN_POISON_MEMORY_REGION(t->mem, (size_t)t->size * FLOW_ENTRY_SIZE);
	return 0;
}

/**
 * flow_table_free() - release the table's memory
 * @t:		table; its flows' sockets and events must be gone
 */
void flow_table_free(struct flow_table *t)
{
	if (t->mem)
		ASAN_UNPOISON_MEMORY_REGION(t->mem,
		                            (size_t)t->size * FLOW_ENTRY_SIZE);
	free(t->mem);
	free(t->link);
	free(t->state);
	free(t->buckets);
	t->mem = NULL;
	t->link = NULL;
	t->state = NULL;
	t->buckets = NULL;
}

/**
 * flow_init() - allocate the context's flow table
 * @c:		context; c->tcp_conns TCP entries (0: FLOW_TCP_MAX)
 *
 * Return: 0 on success, -1 after printing one error line
 */
int flow_init(struct ctx *c)
{
	unsigned int cap[FLOW_TYPES] = {
	        [FLOW_TCP] = FLOW_TCP_MAX,
	        [FLOW_UDP] = FLOW_UDP_MAX,
	        [FLOW_PING] = FLOW_PING_MAX,
	        [FLOW_USPLICE] = FLOW_USPLICE_MAX,
	};
	int ret;

	if (c->tcp_conns && c->tcp_conns < FLOW_TCP_MAX)
		cap[FLOW_TCP] = c->tcp_conns;
	c->flows = calloc(1, sizeof(*c->flows));
	if (!c->flows) {
		err_errno(ENOMEM, "flow table");
		return -1;
	}
	ret = flow_table_init(c->flows, c, cap);
	if (ret) {
		err_errno(-ret, "flow table of %u TCP, %u UDP, %u ping entries",
		          cap[FLOW_TCP], cap[FLOW_UDP], cap[FLOW_PING]);
		free(c->flows);
		c->flows = NULL;
		return -1;
	}
	return 0;
}

/**
 * flow_cleanup() - free the context's flow table
 * @c:		context; every protocol's cleanup has released its flows
 */
void flow_cleanup(struct ctx *c)
{
	if (!c->flows)
		return;
	flow_table_free(c->flows);
	free(c->flows);
	c->flows = NULL;
}

/**
 * flow_alloc() - take a free entry for a new flow of a type
 * @t:		table
 * @type:	enum flow_type
 *
 * Return: the zeroed entry with its type and context set, in no hash
 *	   chain yet; NULL if @type has all its entries
 */
struct flow_common *flow_alloc(struct flow_table *t, enum flow_type type)
{
	uint32_t idx = t->free_head;
	struct flow_common *f;

	if (t->used[type] >= t->cap[type] || !idx)
		return NULL;
	f = entry(t, idx - 1);
	t->free_head = t->link[(idx - 1) * FLOW_SIDES];
	t->link[(idx - 1) * FLOW_SIDES] = 0;
	t->state[idx - 1] = FLOW_USED;
	ASAN_UNPOISON_MEMORY_REGION(f, FLOW_ENTRY_SIZE);
	memset(f, 0, FLOW_ENTRY_SIZE);
	f->c = t->c;
	f->type = (uint8_t)type;
	/* A flow the guest starts lives on the queue its first frame came in
	 * on; flow_place() moves one a host peer starts.
	 */
	f->queue = t->c ? (uint8_t)t->c->queue : 0;
	t->used[type]++;
	return f;
}

/**
 * flow_hash() - make a flow found by the key of one side
 * @t:		table
 * @f:		flow in use, not hashed on @side; its key for @side set,
 *		with the flow's type and @side, and not in the table
 * @side:	enum flow_side
 */
void flow_hash(struct flow_table *t, struct flow_common *f, enum flow_side side)
{
	uint32_t i = index_of(t, f), b = bucket_of(t, side_key(f, side));
	uint32_t l = i * FLOW_SIDES + side;

	if (t->state[i] != FLOW_USED || f->hashed & 1U << side)
		abort();
	t->link[l] = t->buckets[b];
	t->buckets[b] = l + 1;
	f->hashed |= (uint8_t)(1U << side);
}

/**
 * flow_hash_owned() - make a new flow found by its guest-side key, which
 *		       its thread takes in the owner table first
 * @t:		table
 * @f:		flow in use, not hashed, its guest-side key set
 *
 * Return: 0, or -1 with errno EEXIST (another datapath thread has a flow
 *	   with that key, or one is being placed there) or ENOSPC (the
 *	   owner table is full): the flow is not hashed then
 */
int flow_hash_owned(struct flow_table *t, struct flow_common *f)
{
	if (t->c && flow_owner_claim(t->c, &f->key))
		return -1;
	f->owned = 1;
	flow_hash(t, f, FLOW_SIDE_GUEST);
	return 0;
}

/**
 * flow_lookup() - find a flow by a key
 * @t:		table
 * @k:		key, whose type and side say which flows it can match
 *
 * Return: the flow, or NULL
 */
struct flow_common *flow_lookup(const struct flow_table *t,
                                const struct flow_key *k)
{
	uint32_t l = t->buckets[bucket_of(t, k)];

	while (l) {
		struct flow_common *f = entry(t, (l - 1) / FLOW_SIDES);

		if (flow_key_equal(side_key(f, (l - 1) % FLOW_SIDES), k))
			return f;
		l = t->link[l - 1];
	}
	return NULL;
}

/**
 * unhash() - take a flow out of every hash chain it is in
 * @t:		table
 * @f:		flow in use
 */
static void unhash(struct flow_table *t, struct flow_common *f)
{
	uint32_t i = index_of(t, f);

	for (unsigned int side = 0; side < FLOW_SIDES; side++) {
		uint32_t l = i * FLOW_SIDES + side + 1, *p;

		if (!(f->hashed & 1U << side))
			continue;
		p = &t->buckets[bucket_of(t, side_key(f, side))];
		while (*p && *p != l)
			p = &t->link[*p - 1];
		if (*p)
			*p = t->link[l - 1];
		t->link[l - 1] = 0;
	}
	if (f->owned && t->c)
		flow_owner_drop(t->c, &f->key);
	f->hashed = 0;
	f->owned = 0;
}

/**
 * flow_retire() - unhash a flow that its protocol still references
 * @t:		table
 * @f:		flow in use; its sockets and events must already be gone
 * @keep:	bytes from the start of the entry that stay valid (the
 *		rest is poisoned under ASan), a multiple of 8
 *
 * Lookups stop finding it at once; flow_release() frees it later.
 */
void flow_retire(struct flow_table *t, struct flow_common *f, size_t keep)
{
	uint32_t i = index_of(t, f);

	if (t->state[i] != FLOW_USED || keep > FLOW_ENTRY_SIZE)
		abort();
	unhash(t, f);
	t->state[i] = FLOW_DYING;
	ASAN_POISON_MEMORY_REGION((unsigned char *)f + keep,
	                          FLOW_ENTRY_SIZE - keep);
}

/**
 * flow_release() - unhash a flow and put its entry on the free list
 * @t:		table
 * @fp:		flow in use or dying, whose sockets and events must already
 *		be gone; set to NULL
 *
 * The entry is zeroed and, under ASan, poisoned, and the caller's pointer
 * cleared: a use after release faults at once rather than read another
 * flow later. Releasing an entry twice would link it into the free list
 * twice and hand it to two flows later: that is a bug in the caller, so
 * it stops the process rather than corrupt the table.
 */
void flow_release(struct flow_table *t, struct flow_common **fp)
{
	struct flow_common *f = *fp;
	uint32_t i = index_of(t, f);
	unsigned int type;

	if (t->state[i] == FLOW_FREE)
		abort();
	ASAN_UNPOISON_MEMORY_REGION(f, FLOW_ENTRY_SIZE);
	if (t->state[i] == FLOW_USED)
		unhash(t, f);
	type = f->type;
	memset(f, 0, FLOW_ENTRY_SIZE);
	ASAN_POISON_MEMORY_REGION(f, FLOW_ENTRY_SIZE);
	t->state[i] = FLOW_FREE;
	t->link[i * FLOW_SIDES] = t->free_head;
	t->free_head = i + 1;
	t->used[type]--;
	*fp = NULL;
}

/**
 * flow_at() - the flow in entry @i, if it is in use and not dying
 * @t:		table
 * @i:		entry index, below t->size
 *
 * Return: the flow, or NULL
 */
struct flow_common *flow_at(const struct flow_table *t, unsigned int i)
{
	return t->state[i] == FLOW_USED ? entry(t, i) : NULL;
}

/**
 * flow_count() - flows of a type allocated now
 * @t:		table
 * @type:	enum flow_type
 *
 * Return: the count, dying flows included
 */
unsigned int flow_count(const struct flow_table *t, enum flow_type type)
{
	return t->used[type];
}

/**
 * flow_full() - whether flow_alloc() would refuse a type now
 * @t:		table
 * @type:	enum flow_type
 *
 * Return: true if every entry of @type is taken
 */
bool flow_full(const struct flow_table *t, enum flow_type type)
{
	return t->used[type] >= t->cap[type];
}

/**
 * flow_walk() - call a function on every flow of a type, for expiry and
 *		 cleanup
 * @t:		table
 * @type:	enum flow_type
 * @fn:		called on each flow in use (not dying); may release it
 * @arg:	passed to @fn
 */
void flow_walk(struct flow_table *t, enum flow_type type, flow_walk_fn *fn,
               void *arg)
{
	for (uint32_t i = 0; i < t->size && t->used[type]; i++) {
		struct flow_common *f = flow_at(t, i);

		if (f && f->type == type)
			fn(f, arg);
	}
}

/**
 * flow_enter() - about to handle a flow: its frames leave on its queue
 * @f:		flow in use
 *
 * Every event of a flow (its socket, its timer, a frame of the guest's)
 * goes through here before anything is sent, so that a flow's frames to
 * the guest always leave on one queue. tun records the queue a flow was
 * last written on and steers the guest's frames of that flow to it.
 *
 * Return: the flow's context
 */
struct ctx *flow_enter(struct flow_common *f)
{
	f->c->queue = f->queue;
	return f->c;
}

/**
 * flow_place() - put a flow a host peer started on a queue, by its hash
 * @t:		table
 * @f:		flow in use, its guest-side key set
 *
 * No guest frame chose a queue for it: the key's hash spreads such flows
 * over the queues. Enters the flow.
 */
void flow_place(struct flow_table *t, struct flow_common *f)
{
	unsigned int n = ctx_queue_count(t->c);

	f->queue = (uint8_t)(ctx_queue_first(t->c) +
	                     (n > 1 ? flow_key_hash(t, &f->key) % n : 0));
	flow_enter(f);
}
