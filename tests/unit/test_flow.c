// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the one flow table: lookup, release, limits, walk */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "driver/core/ctx.h"
#include "driver/flow/flow.h"
#include "tests/unit/unit.h"

/**
 * key_of() - a guest-side key of a type, distinct per @n
 * @k:		filled
 * @type:	enum flow_type
 * @n:		tuple number
 */
static void key_of(struct flow_key *k, enum flow_type type, unsigned int n)
{
	memset(k, 0, sizeof(*k));
	inet_pton(AF_INET6, "::ffff:10.0.2.100", &k->gaddr);
	inet_pton(AF_INET6, "::ffff:192.0.2.1", &k->faddr);
	k->faddr.s6_addr[15] = (uint8_t)(n >> 16);
	k->gport = (uint16_t)(1024 + (n & 0xffff));
	k->fport = 80;
	k->type = (uint8_t)type;
	k->side = FLOW_SIDE_GUEST;
}

/**
 * add() - allocate a flow and hash it under key_of(@type, @n)
 * @t:		table
 * @type:	enum flow_type
 * @n:		tuple number
 *
 * Return: the flow, or NULL if @type is full
 */
static struct flow_common *add(struct flow_table *t, enum flow_type type,
                               unsigned int n)
{
	struct flow_common *f = flow_alloc(t, type);

	if (!f)
		return NULL;
	key_of(&f->key, type, n);
	flow_hash(t, f, FLOW_SIDE_GUEST);
	return f;
}

/**
 * find() - look key_of(@type, @n) up
 * @t:		table
 * @type:	enum flow_type
 * @n:		tuple number
 *
 * Return: the flow, or NULL
 */
static struct flow_common *find(const struct flow_table *t, enum flow_type type,
                                unsigned int n)
{
	struct flow_key k;

	key_of(&k, type, n);
	return flow_lookup(t, &k);
}

/* A flow is found by its key only: not by another port or protocol. */
static void test_insert_lookup(void)
{
	const unsigned int cap[FLOW_TYPES] = {8, 8, 8};
	struct flow_common *f;
	struct flow_table t;
	struct flow_key k;

	CHECK(!flow_table_init(&t, NULL, cap));
	CHECK(find(&t, FLOW_TCP, 1) == NULL);
	f = add(&t, FLOW_TCP, 1);
	CHECK(f && f->type == FLOW_TCP && f->queue == 0);
	CHECK(find(&t, FLOW_TCP, 1) == f);
	CHECK(find(&t, FLOW_TCP, 2) == NULL);
	CHECK(find(&t, FLOW_UDP, 1) == NULL);
	key_of(&k, FLOW_TCP, 1);
	k.side = FLOW_SIDE_HOST;
	CHECK(flow_lookup(&t, &k) == NULL);
	CHECK(flow_count(&t, FLOW_TCP) == 1);
	CHECK(flow_count(&t, FLOW_UDP) == 0);
	CHECK(add(&t, FLOW_UDP, 1) != NULL);
	CHECK(find(&t, FLOW_UDP, 1) != f && find(&t, FLOW_TCP, 1) == f);
	flow_table_free(&t);
}

/* A released flow is gone: not found, its pointer cleared, its entry
 * handed out again.
 */
static void test_release(void)
{
	const unsigned int cap[FLOW_TYPES] = {1, 0, 0};
	struct flow_common *f, *g;
	struct flow_table t;

	CHECK(!flow_table_init(&t, NULL, cap));
	f = add(&t, FLOW_TCP, 7);
	g = f;
	flow_release(&t, &f);
	CHECK(f == NULL);
	CHECK(find(&t, FLOW_TCP, 7) == NULL);
	CHECK(flow_count(&t, FLOW_TCP) == 0);
	CHECK(flow_at(&t, 0) == NULL);
	f = add(&t, FLOW_TCP, 8);
	CHECK(f == g && find(&t, FLOW_TCP, 8) == f);
	CHECK(find(&t, FLOW_TCP, 7) == NULL);
	flow_table_free(&t);
}

/* Each type has its own limit; one full type leaves the others alone. */
static void test_full(void)
{
	const unsigned int cap[FLOW_TYPES] = {2, 1, 1};
	struct flow_common *a, *b;
	struct flow_table t;

	CHECK(!flow_table_init(&t, NULL, cap));
	a = add(&t, FLOW_TCP, 1);
	b = add(&t, FLOW_TCP, 2);
	CHECK(a && b && a != b);
	CHECK(flow_full(&t, FLOW_TCP) && !flow_full(&t, FLOW_UDP));
	CHECK(flow_alloc(&t, FLOW_TCP) == NULL);
	CHECK(add(&t, FLOW_UDP, 1) != NULL);
	CHECK(add(&t, FLOW_PING, 1) != NULL);
	CHECK(flow_alloc(&t, FLOW_UDP) == NULL);
	flow_release(&t, &a);
	CHECK(!flow_full(&t, FLOW_TCP));
	CHECK(add(&t, FLOW_TCP, 3) != NULL);
	CHECK(find(&t, FLOW_TCP, 2) == b);
	flow_table_free(&t);
	CHECK(flow_table_init(&t, NULL, (const unsigned int[FLOW_TYPES]){0}) <
	      0);
}

/* A flow with a host-side key is found by both, and released from both. */
static void test_two_sides(void)
{
	const unsigned int cap[FLOW_TYPES] = {0, 4, 0};
	struct flow_common *f;
	struct flow_table t;
	struct flow_key k;

	CHECK(!flow_table_init(&t, NULL, cap));
	f = add(&t, FLOW_UDP, 3);
	memset(&k, 0, sizeof(k));
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &k.faddr);
	k.fport = 5353;
	k.type = FLOW_UDP;
	k.side = FLOW_SIDE_HOST;
	k.disc = 9;
	f->host_key = k;
	flow_hash(&t, f, FLOW_SIDE_HOST);
	CHECK(flow_lookup(&t, &k) == f);
	CHECK(find(&t, FLOW_UDP, 3) == f);
	k.disc = 10;
	CHECK(flow_lookup(&t, &k) == NULL);
	k.disc = 9;
	flow_release(&t, &f);
	CHECK(flow_lookup(&t, &k) == NULL);
	CHECK(find(&t, FLOW_UDP, 3) == NULL);
	flow_table_free(&t);
}

/* A retired flow (TCP's DYING) is no longer found, yet still counted and
 * readable up to @keep until its release.
 */
static void test_retire(void)
{
	const unsigned int cap[FLOW_TYPES] = {2, 0, 0};
	struct flow_common *f;
	struct flow_table t;

	CHECK(!flow_table_init(&t, NULL, cap));
	f = add(&t, FLOW_TCP, 1);
	flow_retire(&t, f, sizeof(*f));
	CHECK(find(&t, FLOW_TCP, 1) == NULL);
	CHECK(flow_at(&t, 0) == NULL);
	CHECK(flow_count(&t, FLOW_TCP) == 1);
	CHECK(f->type == FLOW_TCP);
	/* The same tuple may start again while the old entry dies. */
	CHECK(add(&t, FLOW_TCP, 1) != NULL);
	flow_release(&t, &f);
	CHECK(flow_count(&t, FLOW_TCP) == 1);
	CHECK(find(&t, FLOW_TCP, 1) != NULL);
	flow_table_free(&t);
}

/**
 * expire_even() - flow_walk() callback: release flows with an even port
 * @f:		flow
 * @arg:	the table
 */
static void expire_even(struct flow_common *f, void *arg)
{
	struct flow_table *t = arg;

	if (!(f->key.gport & 1))
		flow_release(t, &f);
}

/* The walk visits one type only and survives releases on the way. */
static void test_walk_expiry(void)
{
	const unsigned int cap[FLOW_TYPES] = {4, 0, 16};
	struct flow_table t;

	CHECK(!flow_table_init(&t, NULL, cap));
	for (unsigned int i = 0; i < 16; i++)
		CHECK(add(&t, FLOW_PING, i) != NULL);
	for (unsigned int i = 0; i < 4; i++)
		CHECK(add(&t, FLOW_TCP, i) != NULL);
	flow_walk(&t, FLOW_PING, expire_even, &t);
	CHECK(flow_count(&t, FLOW_PING) == 8);
	CHECK(flow_count(&t, FLOW_TCP) == 4);
	for (unsigned int i = 0; i < 16; i++)
		CHECK((find(&t, FLOW_PING, i) != NULL) == (i & 1));
	for (unsigned int i = 0; i < 4; i++)
		CHECK(find(&t, FLOW_TCP, i) != NULL);
	flow_table_free(&t);
}

/* A full table of the default TCP size: every flow found through its
 * chain, half released, the rest still found.
 */
static void test_many(void)
{
	const unsigned int cap[FLOW_TYPES] = {FLOW_TCP_MAX, 0, 0};
	struct flow_table t;
	bool all = true;

	CHECK(!flow_table_init(&t, NULL, cap));
	for (unsigned int i = 0; i < FLOW_TCP_MAX; i++)
		all = all && add(&t, FLOW_TCP, i);
	CHECK(all);
	CHECK(flow_alloc(&t, FLOW_TCP) == NULL);
	for (unsigned int i = 0; i < FLOW_TCP_MAX; i += 2) {
		struct flow_common *f = find(&t, FLOW_TCP, i);

		all = all && f;
		if (f)
			flow_release(&t, &f);
	}
	CHECK(all);
	for (unsigned int i = 0; i < FLOW_TCP_MAX; i++)
		all = all && (find(&t, FLOW_TCP, i) != NULL) == (i & 1);
	CHECK(all);
	CHECK(flow_count(&t, FLOW_TCP) == FLOW_TCP_MAX / 2);
	flow_table_free(&t);
}

/**
 * rss_kb() - this process's resident memory, from /proc
 *
 * Return: VmRSS in kB, or 0 if unreadable
 */
static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* A table whose ceiling is the largest fd limit costs, with a thousand
 * flows, what those flows take: about 1 MB, not the 70 MB that its index
 * and links would take if they were made at start.
 */
static void test_reserve(void)
{
	const unsigned int cap[FLOW_TYPES] = {TAPIR_MAX_FLOWS,
	                                      TAPIR_MAX_FLOWS / 2, 1024};
	struct flow_table t;
	long before = rss_kb(), grew;
	bool all = true;

	CHECK(!flow_table_init(&t, NULL, cap));
	for (unsigned int i = 0; i < 1000; i++)
		all = all && add(&t, FLOW_TCP, i);
	CHECK(all);
	grew = rss_kb() - before;
	printf("# RSS grew %ld kB for a table of %u entries, 1000 flows\n",
	       grew, t.limit);
	CHECK(before > 0 && grew < 2048);
	flow_table_free(&t);
}

/* Past the first entries the table grows: every flow is still found, and
 * still where it was (protocols and events hold pointers to flows), with
 * what it held; a released entry is reused before the table grows again.
 */
static void test_grow(void)
{
	const unsigned int n = 3 * FLOW_TCP_MAX;
	const unsigned int cap[FLOW_TYPES] = {n, 0, 0};
	struct flow_common *first, *f;
	struct flow_table t;
	bool all = true;
	uint32_t size;

	CHECK(!flow_table_init(&t, NULL, cap));
	CHECK(t.size < n);
	first = add(&t, FLOW_TCP, 0);
	CHECK(first != NULL);
	for (unsigned int i = 1; i < n; i++)
		all = all && add(&t, FLOW_TCP, i);
	CHECK(all && t.size == n);
	CHECK(flow_alloc(&t, FLOW_TCP) == NULL);
	CHECK(find(&t, FLOW_TCP, 0) == first && first->key.gport == 1024);
	for (unsigned int i = 0; i < n; i++)
		all = all && find(&t, FLOW_TCP, i);
	CHECK(all);
	f = find(&t, FLOW_TCP, 5);
	flow_release(&t, &f);
	size = t.size;
	CHECK(add(&t, FLOW_TCP, n) != NULL && t.size == size);
	flow_table_free(&t);
}

/* The hash is keyed: the same key hashes alike under one seed only, and
 * padding never counts.
 */
static void test_keyed_hash(void)
{
	struct flow_key a, b;

	key_of(&a, FLOW_TCP, 1);
	memset(&b, 0xa5, sizeof(b));
	b.gaddr = a.gaddr;
	b.faddr = a.faddr;
	b.gport = a.gport;
	b.fport = a.fport;
	b.type = a.type;
	b.side = a.side;
	b.disc = a.disc;
	b.scope = a.scope;
	CHECK(flow_key_mix(1, &a) == flow_key_mix(1, &b));
	CHECK(flow_key_mix(1, &a) != flow_key_mix(2, &a));
	b.fport++;
	CHECK(flow_key_mix(1, &a) != flow_key_mix(1, &b));
}

/* A flow the guest starts takes the queue being read; entering a flow
 * selects its queue; flows host peers start spread over the queues, each
 * staying where it was put (32 flows all on one queue: once in 2^31).
 */
static void test_queues(void)
{
	const unsigned int cap[FLOW_TYPES] = {64, 8, 8};
	unsigned int on[2] = {0, 0};
	struct flow_common *f, *g;
	struct flow_table t;
	struct ctx c;

	memset(&c, 0, sizeof(c));
	c.tap.queues = 2;
	CHECK(!flow_table_init(&t, &c, cap));
	c.queue = 1;
	g = add(&t, FLOW_TCP, 0);
	CHECK(g && g->queue == 1);
	c.queue = 0;
	CHECK(g && flow_enter(g) == &c && c.queue == 1);
	for (unsigned int n = 1; n <= 32; n++) {
		unsigned int q;

		f = add(&t, FLOW_TCP, n);
		CHECK(f != NULL);
		if (!f)
			break;
		flow_place(&t, f);
		q = f->queue;
		CHECK(q < 2 && c.queue == q);
		flow_place(&t, f);
		CHECK(f->queue == q);
		on[q < 2 ? q : 0]++;
	}
	CHECK(on[0] && on[1]);
	c.tap.queues = 1;
	f = add(&t, FLOW_TCP, 40);
	CHECK(f != NULL);
	if (f) {
		flow_place(&t, f);
		CHECK(f->queue == 0);
	}
	flow_table_free(&t);
}

const struct unit_case unit_cases[] = {
        {"flow: queues: the queue read, entering, placing by hash",
         test_queues},
        {"flow: insert and lookup by key, type and side", test_insert_lookup},
        {"flow: a released flow is not found", test_release},
        {"flow: per-type limits", test_full},
        {"flow: a flow hashed by two keys", test_two_sides},
        {"flow: retired flows wait for their release", test_retire},
        {"flow: expiry walk over one type", test_walk_expiry},
        {"flow: a full TCP table", test_many},
        {"flow: keyed hash over fields only", test_keyed_hash},
        {"flow: a table of the largest ceiling costs only its flows' memory",
         test_reserve},
        {"flow: the table grows; flows keep their place", test_grow},
        {NULL, NULL},
};
