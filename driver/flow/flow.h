/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - one flow table for TCP, UDP and ping: keyed hash, alloc, release
 */
#ifndef TAPIR_FLOW_H
#define TAPIR_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "driver/flow/flow_key.h"

struct ctx;

/* Flows of each type at once by default, where the fd limit does not set
 * more (flow_init()): TCP's and UDP's ceilings follow RLIMIT_NOFILE, as
 * every such flow holds a host socket. Ping and the UDP relay keep theirs:
 * their flows expire in seconds, and a guest must not spend the fds that
 * connections need on them.
 */
#define FLOW_TCP_MAX 16384
#define FLOW_UDP_MAX 4096
#define FLOW_PING_MAX 1024
/* Spliced UDP clients (udpsplice.c); only the main loop's table has any. */
#define FLOW_USPLICE_MAX 256
/* Entries made usable at first; the table doubles from there up to the
 * sum of its ceilings. A multiple of 32, so that every step starts on a
 * page (32 entries are 3 pages).
 */
#define FLOW_FIRST 1024
/* Bytes of every entry: the largest protocol flow fits, which each
 * protocol checks with a _Static_assert. A multiple of 64, so entries
 * start on cache lines.
 */
#define FLOW_ENTRY_SIZE 384

/**
 * struct flow_common - the first member of every protocol's flow
 * @c:		context the flow belongs to, for its libevent callbacks
 * @type:	enum flow_type
 * @queue:	tap queue the flow belongs to: where its frames to the guest
 *		leave (flow_enter()), so that the kernel keeps its frames
 *		from the guest there too
 * @hashed:	bit per enum flow_side whose key is in the hash
 * @owned:	its guest-side key is its thread's in the owner table
 *		(flow_owner.c), given up when it is unhashed
 * @key:	guest-side key, set by the protocol before flow_hash()
 * @host_key:	host-side key, for a flow found by both
 */
struct flow_common {
	struct ctx *c;
	uint8_t type;
	uint8_t queue;
	uint8_t hashed;
	uint8_t owned;
	struct flow_key key;
	struct flow_key host_key;
};

/**
 * enum flow_state - where a table entry is in its life
 * @FLOW_FREE:	on the free list
 * @FLOW_USED:	allocated; found by lookups once hashed
 * @FLOW_DYING:	retired: unhashed, still referenced by its protocol (the
 *		TCP flush list) until flow_release()
 */
enum flow_state {
	FLOW_FREE,
	FLOW_USED,
	FLOW_DYING,
};

/**
 * struct flow_table - every flow of a context, one hash index, free list
 * @mem:	room for @limit entries of FLOW_ENTRY_SIZE bytes, reserved
 *		at start and never moved (protocols and events hold pointers
 *		to entries); the first @size are usable, the rest not mapped
 * @c:		context new flows belong to
 * @link:	per entry and side, the next one in its hash chain (in use)
 *		or, side 0, on the free list (free), as (entry * FLOW_SIDES
 *		+ side) + 1; 0 = end. Kept outside the entries so that a free
 *		entry can be poisoned whole under ASan
 * @walk:	per entry, the next and the previous flow of its type (in
 *		use), as index + 1: flow_walk() visits one type's flows only
 * @state:	per entry, enum flow_state
 * @buckets:	hash heads, encoded as @link, 0 = empty
 * @limit:	entries at most, the sum of @cap
 * @size:	entries usable now; grows by doubling up to @limit
 * @fresh:	entries handed out at least once: those from @fresh to
 *		@size have never been touched, so their pages are not resident
 * @nbuckets:	number of buckets, a power of two, at least 2 * @size
 * @free_head:	first entry given back, index + 1, 0 = none
 * @seed:	random hash seed, so that a guest can't aim for one chain
 * @cap:	flows of each type at most
 * @used:	flows of each type allocated, dying ones included
 * @first:	per type, the first flow in use, index + 1, for flow_walk()
 */
struct flow_table {
	unsigned char *mem;
	struct ctx *c;
	uint32_t *link;
	uint32_t *walk;
	uint8_t *state;
	uint32_t *buckets;
	uint32_t limit;
	uint32_t size;
	uint32_t fresh;
	uint32_t nbuckets;
	uint32_t free_head;
	uint64_t seed;
	unsigned int cap[FLOW_TYPES];
	unsigned int used[FLOW_TYPES];
	uint32_t first[FLOW_TYPES];
};

/**
 * typedef flow_walk_fn - called by flow_walk() on each flow of a type
 * @f:		flow in use; the function may release it
 * @arg:	the walk's argument
 */
typedef void flow_walk_fn(struct flow_common *f, void *arg);

int flow_table_init(struct flow_table *t, struct ctx *c,
                    const unsigned int cap[FLOW_TYPES]);
void flow_table_free(struct flow_table *t);
void flow_caps(const struct ctx *c, unsigned int cap[FLOW_TYPES]);
int flow_init(struct ctx *c);
void flow_cleanup(struct ctx *c);
uint64_t flow_key_hash(const struct flow_table *t, const struct flow_key *k);
struct flow_common *flow_alloc(struct flow_table *t, enum flow_type type);
void flow_hash(struct flow_table *t, struct flow_common *f,
               enum flow_side side);
int flow_hash_owned(struct flow_table *t, struct flow_common *f);
struct flow_common *flow_lookup(const struct flow_table *t,
                                const struct flow_key *k);
void flow_retire(struct flow_table *t, struct flow_common *f, size_t keep);
void flow_release(struct flow_table *t, struct flow_common **fp);
struct flow_common *flow_at(const struct flow_table *t, unsigned int i);
unsigned int flow_count(const struct flow_table *t, enum flow_type type);
bool flow_full(const struct flow_table *t, enum flow_type type);
void flow_walk(struct flow_table *t, enum flow_type type, flow_walk_fn *fn,
               void *arg);
struct ctx *flow_enter(struct flow_common *f);
void flow_place(struct flow_table *t, struct flow_common *f);

#endif /* TAPIR_FLOW_H */
