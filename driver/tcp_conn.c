// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - TCP connection table: preallocated entries, O(1) hash lookup */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sanitizer/asan_interface.h>

#include "clock.h"
#include "seed.h"
#include "tcp_conn.h"

/* Under ASan a free entry is poisoned whole, so that any use of a released
 * connection is reported at once; without ASan these do nothing.
 */
#define POISON(conn) ASAN_POISON_MEMORY_REGION((conn), sizeof(*(conn)))
#define UNPOISON(conn) ASAN_UNPOISON_MEMORY_REGION((conn), sizeof(*(conn)))
/* A dying entry keeps its flags and flush link readable. */
#define POISON_DEAD(conn)                                                      \
	ASAN_POISON_MEMORY_REGION((char *)(conn) + TCP_CONN_DEAD_FROM,         \
	                          sizeof(*(conn)) - TCP_CONN_DEAD_FROM)

_Static_assert(TCP_CONN_DEAD_FROM % 8 == 0,
               "ASan poisons whole 8-byte granules");

/**
 * mix64() - finalise a 64-bit hash (splitmix64's mixer)
 * @x:		value
 *
 * Return: well-mixed value
 */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/**
 * tuple_mix() - keyed 64-bit hash of a connection's four-tuple
 * @key:	secret
 * @gaddr:	guest address
 * @gport:	guest port
 * @raddr:	remote address
 * @rport:	remote port
 *
 * Return: hash value
 */
static uint64_t tuple_mix(uint64_t key, const struct in6_addr *gaddr,
                          uint16_t gport, const struct in6_addr *raddr,
                          uint16_t rport)
{
	uint64_t w[4], h = key ^ ((uint64_t)gport << 16 | rport);

	memcpy(w, gaddr, 16);
	memcpy(w + 2, raddr, 16);
	for (int i = 0; i < 4; i++)
		h = mix64(h ^ w[i]);
	return h;
}

/**
 * tuple_hash() - bucket of a connection's four-tuple
 * @t:		table, for the seed and size
 * @gaddr:	guest address
 * @gport:	guest port
 * @raddr:	remote address
 * @rport:	remote port
 *
 * Return: bucket index
 */
static uint32_t tuple_hash(const struct tcp_table *t,
                           const struct in6_addr *gaddr, uint16_t gport,
                           const struct in6_addr *raddr, uint16_t rport)
{
	return (uint32_t)tuple_mix(t->seed, gaddr, gport, raddr, rport) &
	       (t->nbuckets - 1);
}

/**
 * tcp_isn() - initial sequence number for a new connection, as RFC 6528
 * @t:		table, for the secret
 * @gaddr:	guest address
 * @gport:	guest port
 * @raddr:	remote address
 * @rport:	remote port
 *
 * A keyed hash of the four-tuple plus a clock in 64 ns ticks: unguessable,
 * yet increasing for a reused tuple, so that the guest's TIME_WAIT takes a
 * new SYN from a forwarded port the host kernel picked again.
 *
 * Return: the sequence number
 */
uint32_t tcp_isn(const struct tcp_table *t, const struct in6_addr *gaddr,
                 uint16_t gport, const struct in6_addr *raddr, uint16_t rport)
{
	uint64_t ns = clock_ns();

	/* A different key than the table's, so buckets reveal nothing. */
	return (uint32_t)tuple_mix(~t->seed, gaddr, gport, raddr, rport) +
	       (uint32_t)(ns >> 6);
}

/**
 * tcp_table_init() - allocate every entry and the hash index once
 * @t:		table to initialise
 * @size:	entries, 1..TCP_MAX_CONNS (0: TCP_MAX_CONNS)
 *
 * Return: 0 on success, -ENOMEM
 */
int tcp_table_init(struct tcp_table *t, unsigned int size)
{
	memset(t, 0, sizeof(*t));
	if (!size || size > TCP_MAX_CONNS)
		size = TCP_MAX_CONNS;
	t->size = size;
	/* Twice the entries, rounded up to a power of two for the mask. */
	t->nbuckets = 2;
	while (t->nbuckets < size * 2)
		t->nbuckets <<= 1;
	t->conns = calloc(size, sizeof(*t->conns));
	t->link = calloc(size, sizeof(*t->link));
	t->state = calloc(size, sizeof(*t->state));
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->conns || !t->link || !t->state || !t->buckets) {
		tcp_table_free(t);
		return -ENOMEM;
	}
	t->seed = seed_u64();
	for (uint32_t i = size; i > 0; i--) {
		t->link[i - 1] = t->free_head;
		t->free_head = i;
		POISON(&t->conns[i - 1]);
	}
	return 0;
}

/**
 * tcp_table_free() - release the table's memory
 * @t:		table
 */
void tcp_table_free(struct tcp_table *t)
{
	if (t->conns)
		ASAN_UNPOISON_MEMORY_REGION(t->conns,
		                            t->size * sizeof(*t->conns));
	free(t->conns);
	free(t->link);
	free(t->state);
	free(t->buckets);
	t->conns = NULL;
	t->link = NULL;
	t->state = NULL;
	t->buckets = NULL;
}

/**
 * tcp_conn_at() - the connection in entry @i, if it is in use
 * @t:		table
 * @i:		entry index, below t->size
 *
 * Return: the connection, or NULL for a free entry
 */
struct tcp_conn *tcp_conn_at(struct tcp_table *t, unsigned int i)
{
	return t->state[i] == TCP_ENTRY_USED ? &t->conns[i] : NULL;
}

/**
 * tcp_conn_lookup() - find a connection by its four-tuple
 * @t:		table
 * @gaddr:	guest address
 * @gport:	guest port
 * @raddr:	remote address
 * @rport:	remote port
 *
 * Return: the connection, or NULL
 */
struct tcp_conn *tcp_conn_lookup(struct tcp_table *t,
                                 const struct in6_addr *gaddr, uint16_t gport,
                                 const struct in6_addr *raddr, uint16_t rport)
{
	uint32_t i = t->buckets[tuple_hash(t, gaddr, gport, raddr, rport)];

	while (i) {
		struct tcp_conn *conn = &t->conns[i - 1];

		if (conn->gport == gport && conn->rport == rport &&
		    !memcmp(&conn->gaddr, gaddr, 16) &&
		    !memcmp(&conn->raddr, raddr, 16))
			return conn;
		i = t->link[i - 1];
	}
	return NULL;
}

/**
 * tcp_conn_alloc() - take a free entry and index it under the four-tuple
 * @t:		table
 * @gaddr:	guest address
 * @gport:	guest port
 * @raddr:	remote address
 * @rport:	remote port
 *
 * The caller has checked that the tuple is not in use.
 *
 * Return: zeroed entry (fd = -1) with the tuple filled, or NULL if full
 */
struct tcp_conn *tcp_conn_alloc(struct tcp_table *t,
                                const struct in6_addr *gaddr, uint16_t gport,
                                const struct in6_addr *raddr, uint16_t rport)
{
	uint32_t idx = t->free_head, b;
	struct tcp_conn *conn;

	if (!idx)
		return NULL;
	conn = &t->conns[idx - 1];
	t->free_head = t->link[idx - 1];
	t->state[idx - 1] = TCP_ENTRY_USED;
	UNPOISON(conn);
	memset(conn, 0, sizeof(*conn));
	conn->fd = -1;
	conn->gaddr = *gaddr;
	conn->raddr = *raddr;
	conn->gport = gport;
	conn->rport = rport;
	b = tuple_hash(t, gaddr, gport, raddr, rport);
	t->link[idx - 1] = t->buckets[b];
	t->buckets[b] = idx;
	t->used++;
	return conn;
}

/**
 * unhash() - take an entry in use out of its hash chain
 * @t:		table
 * @conn:	entry
 */
static void unhash(struct tcp_table *t, struct tcp_conn *conn)
{
	uint32_t idx = (uint32_t)(conn - t->conns) + 1;
	uint32_t *p = &t->buckets[tuple_hash(t, &conn->gaddr, conn->gport,
	                                     &conn->raddr, conn->rport)];

	while (*p && *p != idx)
		p = &t->link[*p - 1];
	if (*p)
		*p = t->link[idx - 1];
}

/**
 * tcp_conn_retire() - release an entry that the flush list still holds
 * @t:		table
 * @conn:	entry in use; its fd and events must already be gone
 *
 * Lookups stop finding it at once; only its flags and flush link stay
 * valid until tcp_flush() passes it to tcp_conn_release().
 */
void tcp_conn_retire(struct tcp_table *t, struct tcp_conn *conn)
{
	uint32_t i = (uint32_t)(conn - t->conns);

	if (t->state[i] != TCP_ENTRY_USED)
		abort();
	unhash(t, conn);
	t->state[i] = TCP_ENTRY_DYING;
	POISON_DEAD(conn);
}

/**
 * tcp_conn_release() - unindex an entry and put it on the free list
 * @t:		table
 * @conn:	entry in use or dying; its fd and events must already be gone
 *
 * Releasing an entry twice would link it into the free list twice and
 * hand it to two connections later: that is a bug in the caller, so it
 * stops the process rather than corrupt the table.
 */
void tcp_conn_release(struct tcp_table *t, struct tcp_conn *conn)
{
	uint32_t i = (uint32_t)(conn - t->conns);

	if (t->state[i] == TCP_ENTRY_FREE)
		abort();
	if (t->state[i] == TCP_ENTRY_USED)
		unhash(t, conn);
	UNPOISON(conn);
	memset(conn, 0, sizeof(*conn));
	POISON(conn);
	t->state[i] = TCP_ENTRY_FREE;
	t->link[i] = t->free_head;
	t->free_head = i + 1;
	t->used--;
}
