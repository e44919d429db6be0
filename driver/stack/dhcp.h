/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - DHCP server for guests that ask (leases from net+15)
 */
#ifndef TAPIR_DHCP_H
#define TAPIR_DHCP_H

#include <stdbool.h>

#include "driver/core/ctx.h"

struct pkt;

bool dhcp_input(struct ctx *c, const struct pkt *p);
void dhcp_cleanup(struct ctx *c);

#endif /* TAPIR_DHCP_H */
