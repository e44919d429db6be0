/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - IPv6 neighbour discovery and router adverts (SLAAC for fd00::/64)
 */
#ifndef TAPIR_NDP_H
#define TAPIR_NDP_H

#include <stdbool.h>

#include "ctx.h"

struct pkt;

int ndp_init(struct ctx *c);
void ndp_cleanup(struct ctx *c);
bool ndp_input(struct ctx *c, const struct pkt *p);

#endif /* TAPIR_NDP_H */
