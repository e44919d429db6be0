/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - IPv6 neighbour discovery and router adverts (SLAAC for fd00::/64)
 */
#ifndef TAPIR_NDP_H
#define TAPIR_NDP_H

#include <stdbool.h>
#include <netinet/in.h>

#include "driver/core/ctx.h"

struct pkt;

/* The router's link-local address, fe80::2: source of every advert, the
 * guest's default route in slirp4netns's addressing. */
extern const struct in6_addr ndp_router_ll;

int ndp_init(struct ctx *c);
void ndp_cleanup(struct ctx *c);
bool ndp_input(struct ctx *c, const struct pkt *p);

#endif /* TAPIR_NDP_H */
