/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - ARP: answer for the gateway and the DNS forwarder
 */
#ifndef TAPIR_ARP_H
#define TAPIR_ARP_H

#include "driver/core/ctx.h"

struct frame;

void arp_input(struct ctx *c, struct frame *f);

#endif /* TAPIR_ARP_H */
