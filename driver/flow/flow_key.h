/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - a flow's key: what the flow table and its owners look flows up by
 */
#ifndef TAPIR_FLOW_KEY_H
#define TAPIR_FLOW_KEY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <netinet/in.h>

/**
 * enum flow_type - protocol of a flow, which says what follows its
 *		    struct flow_common
 * @FLOW_TCP:	struct tcp_conn
 * @FLOW_UDP:	struct udp_flow
 * @FLOW_PING:	struct ping_flow
 * @FLOW_USPLICE: struct usplice_flow (udpsplice.c)
 * @FLOW_TYPES:	number of types
 */
enum flow_type {
	FLOW_TCP,
	FLOW_UDP,
	FLOW_PING,
	FLOW_USPLICE,
	FLOW_TYPES,
};

/**
 * enum flow_side - which of its keys a flow is found by
 * @FLOW_SIDE_GUEST:	the addresses and ports the guest sees
 * @FLOW_SIDE_HOST:	the host socket's view, for a flow a host peer
 *			started on a shared listener (UDP inbound)
 * @FLOW_SIDES:		number of sides
 */
enum flow_side {
	FLOW_SIDE_GUEST,
	FLOW_SIDE_HOST,
	FLOW_SIDES,
};

/**
 * struct flow_key - what a lookup compares, field by field
 * @gaddr:	guest side: the guest's address; host side: unused (zero)
 * @faddr:	far address: the guest's destination, or the host peer
 * @gport:	guest port, or the ping echo id (as the guest sent it)
 * @fport:	far port, host order
 * @type:	enum flow_type: equal tuples of two protocols differ
 * @side:	enum flow_side of the key
 * @disc:	protocol-specific discriminator: the listener fd of a UDP
 *		host-side key, else 0
 * @scope:	IPv6 scope of a host peer, else 0
 */
struct flow_key {
	struct in6_addr gaddr;
	struct in6_addr faddr;
	uint16_t gport;
	uint16_t fport;
	uint8_t type;
	uint8_t side;
	int32_t disc;
	uint32_t scope;
};

void flow_key_guest(struct flow_key *k, enum flow_type type,
                    const struct in6_addr *gaddr, uint16_t gport,
                    const struct in6_addr *faddr, uint16_t fport);
/**
 * flow_key_mix64() - finalise a 64-bit hash (splitmix64's mixer)
 * @x:		value
 *
 * Return: well-mixed value
 */
static inline uint64_t flow_key_mix64(uint64_t x)
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
static inline uint64_t flow_key_mix(uint64_t seed, const struct flow_key *k)
{
	uint64_t w[6], h = seed;

	memcpy(w, &k->gaddr, 16);
	memcpy(w + 2, &k->faddr, 16);
	w[4] = (uint64_t)k->gport << 48 | (uint64_t)k->fport << 32 |
	       (uint64_t)k->type << 8 | k->side;
	w[5] = (uint64_t)(uint32_t)k->disc << 32 | k->scope;
	for (int i = 0; i < 6; i++)
		h = flow_key_mix64(h ^ w[i]);
	return h;
}

/**
 * flow_key_equal() - compare two keys, field by field
 * @a:		one
 * @b:		other
 *
 * Return: true if equal
 */
static inline bool flow_key_equal(const struct flow_key *a,
                                  const struct flow_key *b)
{
	return a->gport == b->gport && a->fport == b->fport &&
	       a->type == b->type && a->side == b->side && a->disc == b->disc &&
	       a->scope == b->scope && !memcmp(&a->faddr, &b->faddr, 16) &&
	       !memcmp(&a->gaddr, &b->gaddr, 16);
}

#endif /* TAPIR_FLOW_KEY_H */
