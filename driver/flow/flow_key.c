// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - a flow's key: built, hashed and compared field by field
 *
 * The flow table (flow.c) and the table of which thread owns a flow
 * (flow_owner.c) both look flows up by it; neither calls the other for it.
 * The hash and the comparison, which every lookup makes, are inline in
 * flow_key.h.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "driver/flow/flow_key.h"

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
