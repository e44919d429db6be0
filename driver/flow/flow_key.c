// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - a flow's key: built, hashed and compared field by field
 *
 * The flow table (flow.c) and the table of which thread owns a flow
 * (flow_owner.c) both look flows up by it; neither calls the other for it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "driver/flow/flow_key.h"

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
 * flow_key_mix() - keyed 64-bit hash of a flow key
 * @seed:	secret
 * @k:		key
 *
 * Fields are read one by one, never padding, so that equal keys hash
 * alike however they were built.
 *
 * Return: hash value
 */
uint64_t flow_key_mix(uint64_t seed, const struct flow_key *k)
{
	uint64_t w[6], h = seed;

	memcpy(w, &k->gaddr, 16);
	memcpy(w + 2, &k->faddr, 16);
	w[4] = (uint64_t)k->gport << 48 | (uint64_t)k->fport << 32 |
	       (uint64_t)k->type << 8 | k->side;
	w[5] = (uint64_t)(uint32_t)k->disc << 32 | k->scope;
	for (int i = 0; i < 6; i++)
		h = mix64(h ^ w[i]);
	return h;
}

/**
 * flow_key_guest() - the guest-side key of a flow, every other field zero
 * @k:		filled
 * @type:	enum flow_type
 * @gaddr:	guest address
 * @gport:	guest port, or the ping echo id as the guest sent it
 * @faddr:	far address: where the guest sends to
 * @fport:	far port, host order; 0 for ping
 */
void flow_key_guest(struct flow_key *k, enum flow_type type,
                    const struct in6_addr *gaddr, uint16_t gport,
                    const struct in6_addr *faddr, uint16_t fport)
{
	memset(k, 0, sizeof(*k));
	k->gaddr = *gaddr;
	k->faddr = *faddr;
	k->gport = gport;
	k->fport = fport;
	k->type = (uint8_t)type;
	k->side = FLOW_SIDE_GUEST;
}

/**
 * flow_key_equal() - compare two keys, field by field
 * @a:		one
 * @b:		other
 *
 * Return: true if equal
 */
bool flow_key_equal(const struct flow_key *a, const struct flow_key *b)
{
	return a->gport == b->gport && a->fport == b->fport &&
	       a->type == b->type && a->side == b->side && a->disc == b->disc &&
	       a->scope == b->scope && !memcmp(&a->faddr, &b->faddr, 16) &&
	       !memcmp(&a->gaddr, &b->gaddr, 16);
}
