// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - TCP connection table: preallocated entries, O(1) hash lookup */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "tcp_conn.h"

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
	struct timespec ts;
	uint64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	/* A different key than the table's, so buckets reveal nothing. */
	return (uint32_t)tuple_mix(~t->seed, gaddr, gport, raddr, rport) +
	       (uint32_t)(ns >> 6);
}

/**
 * tcp_table_init() - allocate every entry and the hash index once
 * @t:		table to initialise
 *
 * Return: 0 on success, -ENOMEM
 */
int tcp_table_init(struct tcp_table *t)
{
	memset(t, 0, sizeof(*t));
	t->nbuckets = TCP_MAX_CONNS * 2;
	t->conns = calloc(TCP_MAX_CONNS, sizeof(*t->conns));
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->conns || !t->buckets) {
		tcp_table_free(t);
		return -ENOMEM;
	}
	if (getrandom(&t->seed, sizeof(t->seed), GRND_NONBLOCK) !=
	    sizeof(t->seed))
		t->seed = (uint64_t)random() << 32 | (uint64_t)random();
	for (uint32_t i = TCP_MAX_CONNS; i > 0; i--) {
		t->conns[i - 1].fd = -1;
		t->conns[i - 1].hash_next = t->free_head;
		t->free_head = i;
	}
	return 0;
}

/**
 * tcp_table_free() - release the table's memory
 * @t:		table
 */
void tcp_table_free(struct tcp_table *t)
{
	free(t->conns);
	free(t->buckets);
	t->conns = NULL;
	t->buckets = NULL;
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
		i = conn->hash_next;
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
	t->free_head = conn->hash_next;
	memset(conn, 0, sizeof(*conn));
	conn->fd = -1;
	conn->gaddr = *gaddr;
	conn->raddr = *raddr;
	conn->gport = gport;
	conn->rport = rport;
	b = tuple_hash(t, gaddr, gport, raddr, rport);
	conn->hash_next = t->buckets[b];
	t->buckets[b] = idx;
	t->used++;
	return conn;
}

/**
 * tcp_conn_release() - unindex an entry and put it on the free list
 * @t:		table
 * @conn:	entry; its fd and events must already be gone
 */
void tcp_conn_release(struct tcp_table *t, struct tcp_conn *conn)
{
	uint32_t idx = (uint32_t)(conn - t->conns) + 1;
	uint32_t *p = &t->buckets[tuple_hash(t, &conn->gaddr, conn->gport,
	                                     &conn->raddr, conn->rport)];

	while (*p && *p != idx)
		p = &t->conns[*p - 1].hash_next;
	if (*p)
		*p = conn->hash_next;
	memset(conn, 0, sizeof(*conn));
	conn->fd = -1;
	conn->hash_next = t->free_head;
	t->free_head = idx;
	t->used--;
}
