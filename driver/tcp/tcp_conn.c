// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - TCP connections in the flow table: lookup by four-tuple, ISN */

#include <errno.h>
#include <string.h>

#include "driver/core/clock.h"
#include "driver/tcp/tcp_conn.h"

_Static_assert(TCP_CONN_DEAD_FROM % 8 == 0,
               "ASan poisons whole 8-byte granules");

/**
 * tcp_isn() - initial sequence number for a new connection, as RFC 6528
 * @t:		flow table, for the secret
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
uint32_t tcp_isn(const struct flow_table *t, const struct in6_addr *gaddr,
                 uint16_t gport, const struct in6_addr *raddr, uint16_t rport)
{
	uint64_t ns = clock_ns();
	struct flow_key k;

	flow_key_guest(&k, FLOW_TCP, gaddr, gport, raddr, rport);
	/* A different key than the table's, so buckets reveal nothing. */
	return (uint32_t)flow_key_mix(~t->seed, &k) + (uint32_t)(ns >> 6);
}

/**
 * tcp_conn_lookup() - find a connection by its four-tuple
 * @t:		flow table
 * @gaddr:	guest address
 * @gport:	guest port
 * @raddr:	remote address
 * @rport:	remote port
 *
 * Return: the connection, or NULL
 */
struct tcp_conn *tcp_conn_lookup(const struct flow_table *t,
                                 const struct in6_addr *gaddr, uint16_t gport,
                                 const struct in6_addr *raddr, uint16_t rport)
{
	struct flow_key k;

	flow_key_guest(&k, FLOW_TCP, gaddr, gport, raddr, rport);
	/* The flow part is first: a TCP flow is a connection. */
	return (struct tcp_conn *)flow_lookup(t, &k);
}

/**
 * tcp_conn_alloc() - take a free entry and index it under the four-tuple
 * @t:		flow table
 * @gaddr:	guest address
 * @gport:	guest port
 * @raddr:	remote address
 * @rport:	remote port
 *
 * The caller has checked that the tuple is not in use here; another
 * datapath thread may have it (flow_hash_owned()).
 *
 * Return: zeroed entry (fd = -1) with the tuple filled, or NULL with
 *	   errno ENOSPC if every TCP entry is taken, EEXIST if another
 *	   thread has the tuple
 */
struct tcp_conn *tcp_conn_alloc(struct flow_table *t,
                                const struct in6_addr *gaddr, uint16_t gport,
                                const struct in6_addr *raddr, uint16_t rport)
{
	struct tcp_conn *conn = (struct tcp_conn *)flow_alloc(t, FLOW_TCP);
	struct flow_common *f;
	int err;

	if (!conn) {
		errno = ENOSPC;
		return NULL;
	}
	conn->fd = -1;
	flow_key_guest(&conn->flow.key, FLOW_TCP, gaddr, gport, raddr, rport);
	if (flow_hash_owned(t, &conn->flow)) {
		err = errno;
		f = &conn->flow;
		flow_release(t, &f);
		errno = err;
		return NULL;
	}
	return conn;
}

/**
 * tcp_conn_retire() - release an entry that the flush list still holds
 * @t:		flow table
 * @conn:	entry in use; its fd and events must already be gone
 *
 * Lookups stop finding it at once; only its flow part, flags and flush
 * link stay valid until tcp_flush() passes it to tcp_conn_release().
 */
void tcp_conn_retire(struct flow_table *t, struct tcp_conn *conn)
{
	flow_retire(t, &conn->flow, TCP_CONN_DEAD_FROM);
}

/**
 * tcp_conn_release() - unindex an entry and put it on the free list
 * @t:		flow table
 * @connp:	entry in use or dying, whose fd and events must already be
 *		gone; set to NULL
 */
void tcp_conn_release(struct flow_table *t, struct tcp_conn **connp)
{
	struct flow_common *f = &(*connp)->flow;

	flow_release(t, &f);
	*connp = NULL;
}
