// SPDX-License-Identifier: GPL-2.0-or-later
/* PLACEHOLDER - to be replaced by the real implementation */

#include "ip.h"
#include "ping.h"
int ping_init(struct ctx *c) { (void)c; return 0; }
void ping_cleanup(struct ctx *c) { (void)c; }
void ping_forward(struct ctx *c, const struct pkt *p) { (void)p; c->stats.drops[DROP_NO_ROUTE]++; }
