// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - one flow table for TCP, UDP and ping: keyed hash, alloc, release */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sanitizer/asan_interface.h>
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/* LeakSanitizer scans the heap for pointers, not mappings of our own:
 * the events a flow points to would look leaked.
 */
#define LSAN_ROOT(p, n) __lsan_register_root_region(p, n)
#define LSAN_UNROOT(p, n) __lsan_unregister_root_region(p, n)
#else
#define LSAN_ROOT(p, n) ((void)(p), (void)(n))
#define LSAN_UNROOT(p, n) ((void)(p), (void)(n))
#endif

#include "driver/core/ctx.h"
#include "driver/flow/flow.h"
#include "driver/flow/flow_owner.h"
#include "driver/core/log.h"
#include "driver/core/seed.h"
#include "driver/host/fdlimit.h"

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
 * poison() - under ASan, mark entries unusable until flow_alloc()
 * @t:		table
 * @from:	first entry
 * @to:		entry after the last
 */
static void poison(const struct flow_table *t, uint32_t from, uint32_t to)
{
	ASAN_POISON_MEMORY_REGION(t->mem + (size_t)from * FLOW_ENTRY_SIZE,
	                          (size_t)(to - from) * FLOW_ENTRY_SIZE);
}

/**
 * grow_array() - make a per-entry array room for @n entries, the new part
 *		  zeroed
 * @p:		the array, updated on success
 * @old:	entries it has
 * @n:		entries it needs, more than @old
 * @per:	bytes per entry
 *
 * Return: 0, or -1 if out of memory (@p is left as it was)
 */
static int grow_array(void *p, uint32_t old, uint32_t n, size_t per)
{
	unsigned char *a = realloc(*(void **)p, (size_t)n * per);

	if (!a)
		return -1;
	memset(a + (size_t)old * per, 0, (size_t)(n - old) * per);
	*(void **)p = a;
	return 0;
}

/**
 * rehash() - move every hash chain to @nb buckets
 * @t:		table
 * @nb:		the new bucket count, a power of two
 *
 * Once per doubling of the table, so its cost per flow stays flat.
 *
 * Return: 0, or -1 if out of memory (the old buckets stay)
 */
static int rehash(struct flow_table *t, uint32_t nb)
{
	uint32_t *b = calloc(nb, sizeof(*b));

	if (!b)
		return -1;
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = nb;
	for (uint32_t i = 0; i < t->fresh; i++) {
		struct flow_common *f;

		if (t->state[i] != FLOW_USED)
			continue;
		f = entry(t, i);
		for (unsigned int side = 0; side < FLOW_SIDES; side++) {
			uint32_t l = i * FLOW_SIDES + side, h;

			if (!(f->hashed & 1U << side))
				continue;
			h = bucket_of(t, side_key(f, side));
			t->link[l] = t->buckets[h];
			t->buckets[h] = l + 1;
		}
	}
	return 0;
}

/**
 * grow() - make the table's usable entries @n
 * @t:		table
 * @n:		more than t->size, at most t->limit
 *
 * The entries' memory is mapped, not touched: a page becomes resident
 * when flow_alloc() first hands out an entry on it.
 *
 * Return: 0, or -1 if out of memory (the table is as it was)
 */
static int grow(struct flow_table *t, uint32_t n)
{
	uint32_t nb = t->nbuckets ? t->nbuckets : 2;

	if (mprotect(t->mem + (size_t)t->size * FLOW_ENTRY_SIZE,
	             (size_t)(n - t->size) * FLOW_ENTRY_SIZE,
	             PROT_READ | PROT_WRITE) ||
	    grow_array(&t->link, t->size, n, FLOW_SIDES * sizeof(*t->link)) ||
	    grow_array(&t->walk, t->size, n, 2 * sizeof(*t->walk)) ||
	    grow_array(&t->state, t->size, n, sizeof(*t->state)))
		return -1;
	/* Twice the entries, a power of two for the mask. */
	while (nb < n * 2)
		nb <<= 1;
	if (nb != t->nbuckets && rehash(t, nb))
		return -1;
	poison(t, t->size, n);
	t->size = n;
	return 0;
}

/**
 * flow_table_init() - reserve room for every entry, make the first usable
 * @t:		table to initialise
 * @c:		context new flows belong to (may be NULL in tests)
 * @cap:	flows of each type at most; their sum is the table's limit
 *
 * The room is address space only: memory is taken as the table grows
 * (flow_alloc()), and pages as entries are first used.
 *
 * Return: 0 on success, -ENOMEM, or -EINVAL for an empty table
 */
int flow_table_init(struct flow_table *t, struct ctx *c,
                    const unsigned int cap[FLOW_TYPES])
{
	uint64_t limit = 0;
	void *mem;

	memset(t, 0, sizeof(*t));
	for (int i = 0; i < FLOW_TYPES; i++) {
		t->cap[i] = cap[i];
		limit += cap[i];
	}
	if (!limit || limit > UINT32_MAX / (FLOW_SIDES * 2))
		return -EINVAL;
	t->c = c;
	t->limit = (uint32_t)limit;
	/* Entries never move: protocols and libevent hold pointers to them.
	 * Unusable until grow() maps them, so the reservation costs no
	 * memory, whatever the limit.
	 */
	mem = mmap(NULL, (size_t)t->limit * FLOW_ENTRY_SIZE, PROT_NONE,
	           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		return -ENOMEM;
	t->mem = mem;
	LSAN_ROOT(mem, (size_t)t->limit * FLOW_ENTRY_SIZE);
	t->seed = seed_u64();
	if (grow(t, t->limit < FLOW_FIRST ? t->limit : FLOW_FIRST)) {
		flow_table_free(t);
		return -ENOMEM;
	}
	return 0;
}

/**
 * flow_table_free() - release the table's memory
 * @t:		table; its flows' sockets and events must be gone
 */
void flow_table_free(struct flow_table *t)
{
	if (t->mem) {
		/* Unpoisoned, or a later mapping at this address would be
		 * reported as a use of a free entry.
		 */
		ASAN_UNPOISON_MEMORY_REGION(t->mem,
		                            (size_t)t->size * FLOW_ENTRY_SIZE);
		LSAN_UNROOT(t->mem, (size_t)t->limit * FLOW_ENTRY_SIZE);
		munmap(t->mem, (size_t)t->limit * FLOW_ENTRY_SIZE);
	}
	free(t->link);
	free(t->walk);
	free(t->state);
	free(t->buckets);
	t->mem = NULL;
	t->link = NULL;
	t->walk = NULL;
	t->state = NULL;
	t->buckets = NULL;
}

/**
 * flow_caps() - flows of each type a context's table takes at most
 * @c:		context
 * @cap:	filled per enum flow_type
 *
 * TCP and UDP flows each hold a host socket, so the fd limit is their
 * ceiling: a table that refused flows while fds were left would be a
 * limit users could not raise. UDP's flows may take half of it, so that
 * a guest spraying datagrams leaves fds for connections (the least
 * recently used UDP flow makes room). --max-flows sets a lower ceiling;
 * tests ask for a few TCP entries (c->tcp_conns) to build contexts fast.
 */
void flow_caps(const struct ctx *c, unsigned int cap[FLOW_TYPES])
{
	unsigned int ceiling = c->o && c->o->max_flows ? c->o->max_flows : 0;
	unsigned int nofile = (unsigned int)fdlimit_nofile();

	if (nofile > TAPIR_MAX_FLOWS)
		nofile = TAPIR_MAX_FLOWS;

	cap[FLOW_TCP] = FLOW_TCP_MAX;
	cap[FLOW_UDP] = FLOW_UDP_MAX;
	cap[FLOW_PING] = FLOW_PING_MAX;
	cap[FLOW_USPLICE] = FLOW_USPLICE_MAX;
	if (c->tcp_conns) {
		cap[FLOW_TCP] = c->tcp_conns;
	} else if (ceiling) {
		cap[FLOW_TCP] = ceiling;
		cap[FLOW_UDP] = ceiling / 2 ? ceiling / 2 : 1;
	} else {
		if (nofile > cap[FLOW_TCP])
			cap[FLOW_TCP] = nofile;
		if (nofile / 2 > cap[FLOW_UDP])
			cap[FLOW_UDP] = nofile / 2;
	}
}

/**
 * flow_init() - set up the context's flow table
 * @c:		context
 *
 * Return: 0 on success, -1 after printing one error line
 */
int flow_init(struct ctx *c)
{
	unsigned int cap[FLOW_TYPES];
	int ret;

	flow_caps(c, cap);
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
 * walk_add() - put an entry first on its type's list
 * @t:		table
 * @i:		entry index
 * @type:	enum flow_type
 */
static void walk_add(struct flow_table *t, uint32_t i, unsigned int type)
{
	uint32_t head = t->first[type];

	t->walk[i * 2] = head;
	t->walk[i * 2 + 1] = 0;
	if (head)
		t->walk[(head - 1) * 2 + 1] = i + 1;
	t->first[type] = i + 1;
}

/**
 * walk_del() - take an entry off its type's list
 * @t:		table
 * @i:		entry index
 * @type:	enum flow_type
 */
static void walk_del(struct flow_table *t, uint32_t i, unsigned int type)
{
	uint32_t next = t->walk[i * 2], prev = t->walk[i * 2 + 1];

	if (prev)
		t->walk[(prev - 1) * 2] = next;
	else
		t->first[type] = next;
	if (next)
		t->walk[(next - 1) * 2 + 1] = prev;
	t->walk[i * 2] = 0;
	t->walk[i * 2 + 1] = 0;
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
	uint32_t idx = t->free_head, n;
	struct flow_common *f;

	if (t->used[type] >= t->cap[type])
		return NULL;
	if (idx) {
		t->free_head = t->link[(idx - 1) * FLOW_SIDES];
		t->link[(idx - 1) * FLOW_SIDES] = 0;
	} else {
		n = t->size <= t->limit / 2 ? t->size * 2 : t->limit;
		if (t->fresh == t->size && (n == t->size || grow(t, n)))
			return NULL;
		idx = ++t->fresh;
	}
	f = entry(t, idx - 1);
	t->state[idx - 1] = FLOW_USED;
	walk_add(t, idx - 1, type);
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
	/* Off its type's list now: a walk skips dying flows anyway, and one
	 * released by a walk's callback (TCP's flush) must not cut the walk
	 * short by unlinking the next flow it was to visit.
	 */
	walk_del(t, i, f->type);
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
	type = f->type;
	if (t->state[i] == FLOW_USED) {
		unhash(t, f);
		walk_del(t, i, type);
	}
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
 *
 * Visits the flows of @type only: a janitor's walk costs what its own
 * flows number, not what the table holds.
 */
void flow_walk(struct flow_table *t, enum flow_type type, flow_walk_fn *fn,
               void *arg)
{
	uint32_t i = t->first[type];

	while (i) {
		/* Read before @fn, which may release the flow. */
		uint32_t next = t->walk[(i - 1) * 2];
		struct flow_common *f = flow_at(t, i - 1);

		if (f)
			fn(f, arg);
		i = next;
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
