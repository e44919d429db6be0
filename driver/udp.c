// SPDX-License-Identifier: GPL-2.0-or-later
/* PLACEHOLDER - to be replaced by the real implementation */

#include "ip.h"
#include "udp.h"
int udp_init(struct ctx *c) { (void)c; return 0; }
void udp_cleanup(struct ctx *c) { (void)c; }
void udp_input(struct ctx *c, struct pkt *p) { (void)p; c->stats.drops[DROP_UNKNOWN_PROTO]++; }
void udp_inbound(struct ctx *c, int lfd, const union sockaddr_inany *peer, const struct in6_addr *gaddr, uint16_t gport, const uint8_t *data, size_t len) { (void)c; (void)lfd; (void)peer; (void)gaddr; (void)gport; (void)data; (void)len; }
