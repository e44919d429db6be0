// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - host data in flight to the guest that tapir keeps itself, read
 * out of the host socket, under network conditions that stretch the
 * guest's round trip
 *
 * Without conditions, the bytes in flight to the guest wait in the host
 * socket's receive queue until the guest ACKs them (MSG_PEEK, tcp_data.c).
 * The kernel sizes that buffer for the host side's round trip, microseconds
 * on loopback: it starts at tcp_rmem[1] (128 KiB) and grows with what the
 * reader consumes per round trip of its own, which peeking never does. A
 * delay of 50 ms each way then caps a download at what that buffer holds
 * per 100 ms. An unprivileged driver can't raise the buffer past rmem_max
 * (208 KiB by default), so under such rules tapir reads the bytes it sends
 * out of the socket, which opens the host's window at once, and keeps them
 * here until the guest ACKs them.
 *
 * The bytes are a chain of chunks, [snd_una, snd_una + stash_len) of the
 * stream; what follows is in the socket, in flight or not. Bounded per
 * connection (TCP_STASH_CONN_MAX) and per thread (TCP_STASH_THREAD_MAX),
 * each chunk counted with its header and the allocator's: past them, the
 * bytes stay in the socket and are peeked, as without rules.
 *
 * tcp_stash_copy() walks the chain from its head to the bytes it sends,
 * and tcp_stash_commit() to the chunk before the last when a read ended
 * at a chunk's end: at most the connection's chunks, 128 of 64 KiB for
 * its 8 MiB (more, of a page each, only where reads were that small),
 * per send or read of a connection under rules, whatever the connections
 * held.
 */

#include <stdlib.h>
#include <string.h>

#include "driver/tcp/tcp_internal.h"

/* A chunk's bytes: one GSO frame's worth, at most. */
#define STASH_CHUNK (64U << 10)
/* Smaller chunks go by pages: a reply of a few bytes takes no 64 KiB. */
#define STASH_PAGE 4096U
/* What a chunk costs besides its bytes: its header and the allocator's. */
#define STASH_OVERHEAD (sizeof(struct tcp_stash_chunk) + 32U)

/**
 * struct tcp_stash_chunk - some of the bytes kept
 * @next:	the next chunk, later in the stream
 * @cap:	room at @data
 * @used:	bytes at @data that hold the stream
 * @data:	the bytes
 */
struct tcp_stash_chunk {
	struct tcp_stash_chunk *next;
	uint32_t cap;
	uint32_t used;
	uint8_t data[];
};

/**
 * chunk_cost() - what a chunk of @cap bytes costs the bounds
 * @cap:	its room
 *
 * Return: bytes
 */
static uint32_t chunk_cost(uint32_t cap)
{
	return cap + (uint32_t)STASH_OVERHEAD;
}

/**
 * budget() - what the bounds let the connection's chunks cost more
 * @c:		context
 * @conn:	connection
 *
 * Return: bytes
 */
static uint32_t budget(const struct ctx *c, const struct tcp_conn *conn)
{
	size_t t = c->tcp->stash_cost < TCP_STASH_THREAD_MAX
	                   ? TCP_STASH_THREAD_MAX - c->tcp->stash_cost
	                   : 0;
	uint32_t k = conn->stash_cost < TCP_STASH_CONN_MAX
	                     ? TCP_STASH_CONN_MAX - conn->stash_cost
	                     : 0;

	return t < k ? (uint32_t)t : k;
}

/**
 * tail_room() - free bytes after the last one kept, in chunks allocated
 * @conn:	connection
 *
 * Return: bytes
 */
static uint32_t tail_room(const struct tcp_conn *conn)
{
	uint32_t room = 0;

	for (const struct tcp_stash_chunk *k = conn->stash_tail; k; k = k->next)
		room += k->cap - k->used;
	return room;
}

/**
 * tcp_stash_room() - how many more bytes the connection may keep
 * @c:		context
 * @conn:	connection
 *
 * Return: bytes
 */
uint32_t tcp_stash_room(const struct ctx *c, const struct tcp_conn *conn)
{
	uint32_t b = budget(c, conn), full, rest;

	full = b / chunk_cost(STASH_CHUNK);
	rest = b - full * chunk_cost(STASH_CHUNK);
	rest = rest > STASH_OVERHEAD
	               ? (rest - (uint32_t)STASH_OVERHEAD) & ~(STASH_PAGE - 1)
	               : 0;
	return tail_room(conn) + full * STASH_CHUNK + rest;
}

/**
 * chunk_new() - allocate an empty chunk for at least @want bytes, at most
 *		 STASH_CHUNK, and append it
 * @c:		context
 * @conn:	connection
 * @want:	bytes it should hold
 *
 * Return: 0, or -1 if the bounds or the allocator refuse
 */
static int chunk_new(struct ctx *c, struct tcp_conn *conn, uint32_t want)
{
	uint32_t cap = want < STASH_CHUNK ? want : STASH_CHUNK;
	struct tcp_stash_chunk *k, **pp;

	cap = (cap + STASH_PAGE - 1) & ~(STASH_PAGE - 1);
	if (chunk_cost(cap) > budget(c, conn))
		return -1;
	k = malloc(sizeof(*k) + cap);
	if (!k)
		return -1;
	*k = (struct tcp_stash_chunk){.cap = cap};
	pp = conn->stash_tail ? &conn->stash_tail->next : &conn->stash;
	while (*pp)
		pp = &(*pp)->next;
	*pp = k;
	if (!conn->stash_tail)
		conn->stash_tail = k;
	conn->stash_cost += chunk_cost(cap);
	c->tcp->stash_cost += chunk_cost(cap);
	return 0;
}

/**
 * tcp_stash_iov() - room for @len more bytes, as iovecs to read into
 * @c:		context
 * @conn:	connection
 * @len:	bytes wanted, at most tcp_stash_room()
 * @iov:	filled
 * @max:	entries at @iov
 *
 * The room stays allocated until tcp_stash_commit(), which frees what the
 * read left of it.
 *
 * Return: entries filled; they hold less than @len if memory ran out
 */
int tcp_stash_iov(struct ctx *c, struct tcp_conn *conn, uint32_t len,
                  struct iovec *iov, int max)
{
	struct tcp_stash_chunk *k;
	uint32_t room = tail_room(conn);
	int n = 0;

	while (room < len && !chunk_new(c, conn, len - room))
		room = tail_room(conn);
	for (k = conn->stash_tail; k && n < max && len; k = k->next) {
		uint32_t l = k->cap - k->used < len ? k->cap - k->used : len;

		if (!l)
			continue;
		iov[n++] = (struct iovec){k->data + k->used, l};
		len -= l;
	}
	return n;
}

/**
 * chunk_free() - free the first chunk
 * @c:		context
 * @conn:	connection with one
 */
static void chunk_free(struct ctx *c, struct tcp_conn *conn)
{
	struct tcp_stash_chunk *k = conn->stash;

	conn->stash = k->next;
	if (conn->stash_tail == k)
		conn->stash_tail = k->next;
	conn->stash_head = 0;
	conn->stash_cost -= chunk_cost(k->cap);
	c->tcp->stash_cost -= chunk_cost(k->cap);
	free(k);
}

/**
 * tcp_stash_commit() - @len bytes were read into the room of the last
 *			tcp_stash_iov(): they are kept now, and the room
 *			left unused is freed
 * @c:		context
 * @conn:	connection
 * @len:	bytes read, at most what that room held
 *
 * A read that found less than it had room for, or nothing, leaves no
 * memory behind: only the chunk the next byte goes to stays, and only if
 * it holds bytes already.
 */
void tcp_stash_commit(struct ctx *c, struct tcp_conn *conn, uint32_t len)
{
	struct tcp_stash_chunk *k;

	conn->stash_len += len;
	while (len) {
		uint32_t l;

		k = conn->stash_tail;
		l = k->cap - k->used < len ? k->cap - k->used : len;
		k->used += l;
		len -= l;
		if (k->used == k->cap && k->next)
			conn->stash_tail = k->next;
	}
	if (!conn->stash_len) {
		tcp_stash_free(c, conn);
		return;
	}
	k = conn->stash_tail;
	if (!k->used)
		for (k = conn->stash; k->next != conn->stash_tail; k = k->next)
			;
	while (k->next) {
		struct tcp_stash_chunk *e = k->next;

		k->next = e->next;
		conn->stash_cost -= chunk_cost(e->cap);
		c->tcp->stash_cost -= chunk_cost(e->cap);
		free(e);
	}
	conn->stash_tail = k;
}

/**
 * tcp_stash_trim() - the guest ACKed the first @len bytes kept: drop them
 * @c:		context
 * @conn:	connection
 * @len:	bytes, at most conn->stash_len
 *
 * Chunks emptied are freed; with nothing left, all of them, so that an
 * idle connection keeps no memory.
 */
void tcp_stash_trim(struct ctx *c, struct tcp_conn *conn, uint32_t len)
{
	conn->stash_len -= len;
	while (len) {
		struct tcp_stash_chunk *k = conn->stash;
		uint32_t l = k->used - conn->stash_head;

		if (len < l) {
			conn->stash_head += len;
			break;
		}
		len -= l;
		conn->stash_head += l;
		if (conn->stash_head < k->cap)
			break;
		chunk_free(c, conn);
	}
	if (!conn->stash_len)
		tcp_stash_free(c, conn);
}

/**
 * tcp_stash_copy() - copy kept bytes out, to send them
 * @conn:	connection
 * @off:	offset of the first from snd_una
 * @dst:	where to
 * @len:	bytes; @off + @len at most conn->stash_len
 */
void tcp_stash_copy(const struct tcp_conn *conn, uint32_t off, uint8_t *dst,
                    uint32_t len)
{
	const struct tcp_stash_chunk *k = conn->stash;

	off += conn->stash_head;
	while (k && off >= k->used) {
		off -= k->used;
		k = k->next;
	}
	for (; k && len; k = k->next, off = 0) {
		uint32_t l = k->used - off < len ? k->used - off : len;

		memcpy(dst, k->data + off, l);
		dst += l;
		len -= l;
	}
}

/**
 * tcp_stash_free() - drop every chunk: nothing is kept, or the connection
 *		      ends
 * @c:		context
 * @conn:	connection
 */
void tcp_stash_free(struct ctx *c, struct tcp_conn *conn)
{
	while (conn->stash)
		chunk_free(c, conn);
	conn->stash_len = 0;
}
