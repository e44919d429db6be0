/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - a flow's key: what the flow table and its owners look flows up by
 */
#ifndef TAPIR_FLOW_KEY_H
#define TAPIR_FLOW_KEY_H

#include <stdbool.h>
#include <stdint.h>
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
uint64_t flow_key_mix(uint64_t seed, const struct flow_key *k);
bool flow_key_equal(const struct flow_key *a, const struct flow_key *b);

#endif /* TAPIR_FLOW_KEY_H */
