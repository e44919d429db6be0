// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: the owner table of the datapath threads' flows */

#include <arpa/inet.h>
#include <stdbool.h>
#include <netinet/in.h>

#include "driver/flow/flow.h"
#include "driver/flow/flow_owner.h"
#include "tests/unit/unit.h"

/**
 * key() - a TCP key from the guest's port @port to 10.0.2.2:80
 * @k:		filled
 * @port:	guest port
 */
static void key(struct flow_key *k, uint16_t port)
{
	struct in6_addr g, f;

	inet_pton(AF_INET6, "::ffff:10.0.2.100", &g);
	inet_pton(AF_INET6, "::ffff:10.0.2.2", &f);
	flow_key_guest(k, FLOW_TCP, &g, port, &f, 80);
}

/* A key has one owner; another thread sees it held, by whom. */
static void test_one_owner(void)
{
	struct flow_owners *o = flow_owners_new(8);
	unsigned int holder = 99;
	struct flow_key k;

	key(&k, 1000);
	CHECK(o && flow_owner_find(o, &k) == -1);
	CHECK(flow_owner_take(o, &k, 2, false, &holder) == OWNER_TAKEN);
	CHECK(flow_owner_find(o, &k) == 2);
	CHECK(flow_owner_take(o, &k, 1, false, &holder) == OWNER_HELD &&
	      holder == 2);
	/* Only its owner gives it up. */
	flow_owner_release(o, &k, 1);
	CHECK(flow_owner_find(o, &k) == 2);
	flow_owner_release(o, &k, 2);
	CHECK(flow_owner_find(o, &k) == -1);
	flow_owners_free(o);
}

/* Full, it refuses new keys; a key given back makes room again. */
static void test_full(void)
{
	struct flow_owners *o = flow_owners_new(3);
	unsigned int holder;
	struct flow_key k;

	for (uint16_t p = 1; p <= 3; p++) {
		key(&k, p);
		CHECK(flow_owner_take(o, &k, 0, false, &holder) == OWNER_TAKEN);
	}
	key(&k, 4);
	CHECK(flow_owner_take(o, &k, 0, false, &holder) == OWNER_FULL);
	key(&k, 2);
	flow_owner_release(o, &k, 0);
	key(&k, 4);
	CHECK(flow_owner_take(o, &k, 0, false, &holder) == OWNER_TAKEN);
	for (uint16_t p = 1; p <= 4; p++) {
		key(&k, p);
		CHECK(flow_owner_find(o, &k) == (p == 2 ? -1 : 0));
	}
	flow_owners_free(o);
}

/* A placed key is taken back only while no flow opened with it; opened,
 * it no longer counts against the thread's placements.
 */
static void test_placed(void)
{
	struct flow_owners *o = flow_owners_new(4 * FLOW_OWNER_PLACED_MAX);
	unsigned int holder;
	struct flow_key k;

	key(&k, 7);
	CHECK(flow_owner_take(o, &k, 1, true, &holder) == OWNER_TAKEN);
	/* The thread opens it: its own claim finds it held for it. */
	CHECK(flow_owner_take(o, &k, 1, false, &holder) == OWNER_HELD &&
	      holder == 1);
	flow_owner_unplace(o, &k, 1);
	CHECK(flow_owner_find(o, &k) == 1);
	flow_owner_release(o, &k, 1);
	/* Placed, not opened: taken back. */
	CHECK(flow_owner_take(o, &k, 1, true, &holder) == OWNER_TAKEN);
	flow_owner_unplace(o, &k, 1);
	CHECK(flow_owner_find(o, &k) == -1);
	flow_owners_free(o);
}

/* A guest flooding SYNs can place only so many on one thread before they
 * open there; other threads, and keys opened at once, are not held up.
 */
static void test_placed_max(void)
{
	struct flow_owners *o = flow_owners_new(4 * FLOW_OWNER_PLACED_MAX);
	unsigned int holder, n = 0;
	struct flow_key k;
	uint16_t p;

	for (p = 1; p <= FLOW_OWNER_PLACED_MAX + 10; p++) {
		key(&k, p);
		n += flow_owner_take(o, &k, 3, true, &holder) == OWNER_TAKEN;
	}
	CHECK(n == FLOW_OWNER_PLACED_MAX);
	key(&k, p);
	CHECK(flow_owner_take(o, &k, 3, true, &holder) == OWNER_BUSY);
	CHECK(flow_owner_take(o, &k, 2, true, &holder) == OWNER_TAKEN);
	key(&k, (uint16_t)(p + 1));
	CHECK(flow_owner_take(o, &k, 3, false, &holder) == OWNER_TAKEN);
	/* One of them opens: room for one more placement. */
	key(&k, 1);
	CHECK(flow_owner_take(o, &k, 3, false, &holder) == OWNER_HELD);
	key(&k, (uint16_t)(p + 2));
	CHECK(flow_owner_take(o, &k, 3, true, &holder) == OWNER_TAKEN);
	CHECK(flow_owner_take(o, &k, 3, true, &holder) == OWNER_HELD);
	key(&k, (uint16_t)(p + 3));
	CHECK(flow_owner_take(o, &k, 3, true, &holder) == OWNER_BUSY);
	flow_owners_free(o);
}

/* The table grows to its ceiling as keys come: every key is still found
 * after it doubled, and past the ceiling it refuses.
 */
static void test_grow(void)
{
	const uint32_t n = 70000;
	struct flow_owners *o = flow_owners_new(n);
	struct in6_addr g, f;
	unsigned int holder;
	struct flow_key k;
	bool all = true;

	inet_pton(AF_INET6, "::ffff:10.0.2.100", &g);
	inet_pton(AF_INET6, "::ffff:10.0.2.2", &f);
	CHECK(o != NULL);
	for (uint32_t i = 0; o && i < n; i++) {
		flow_key_guest(&k, FLOW_TCP, &g, (uint16_t)i, &f,
		               (uint16_t)(i >> 16));
		all = all && flow_owner_take(o, &k, i % 4, false, &holder) ==
		                     OWNER_TAKEN;
	}
	CHECK(all);
	for (uint32_t i = 0; o && i < n; i++) {
		flow_key_guest(&k, FLOW_TCP, &g, (uint16_t)i, &f,
		               (uint16_t)(i >> 16));
		all = all && flow_owner_find(o, &k) == (int)(i % 4);
	}
	CHECK(all);
	flow_key_guest(&k, FLOW_TCP, &g, 1, &f, 9);
	CHECK(o && flow_owner_take(o, &k, 0, false, &holder) == OWNER_FULL);
	flow_owners_free(o);
}

const struct unit_case unit_cases[] = {
        {"a key has one owner, and only it gives the key up", test_one_owner},
        {"a full table refuses new keys until one is given back", test_full},
        {"a placed key is taken back only while no flow opened with it",
         test_placed},
        {"placements waiting for one thread are bounded; other threads "
         "and opened flows are not held up",
         test_placed_max},
        {"the table grows to its ceiling; every key is found after", test_grow},
        {NULL, NULL},
};
