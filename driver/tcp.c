// SPDX-License-Identifier: GPL-2.0-or-later
/* PLACEHOLDER - to be replaced by the real implementation */

#include "ip.h"
#include "tcp.h"
int tcp_init(struct ctx *c) { (void)c; return 0; }
void tcp_cleanup(struct ctx *c) { (void)c; }
void tcp_input(struct ctx *c, struct pkt *p) { (void)p; c->stats.drops[DROP_UNKNOWN_PROTO]++; }
void tcp_flush(struct ctx *c) { (void)c; }
int tcp_accept_inbound(struct ctx *c, int fd, const struct in6_addr *src, uint16_t sport, const struct in6_addr *dst, uint16_t dport) { (void)c; (void)fd; (void)src; (void)sport; (void)dst; (void)dport; return -1; }
