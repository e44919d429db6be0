// SPDX-License-Identifier: GPL-2.0-or-later
/* PLACEHOLDER - to be replaced by the real implementation */

#include "ip.h"
#include "frag.h"
int frag_init(struct ctx *c) { (void)c; return 0; }
void frag_cleanup(struct ctx *c) { (void)c; }
bool frag4_input(struct ctx *c, struct pkt *p) { (void)p; c->stats.drops[DROP_FRAGMENT]++; return true; }
int frag_output(struct ctx *c, const struct in6_addr *src, const struct in6_addr *dst, uint8_t proto, const struct iovec *l4, int l4cnt, size_t l4len) { (void)src; (void)dst; (void)proto; (void)l4; (void)l4cnt; (void)l4len; c->stats.drops[DROP_BAD_LENGTH]++; return -1; }
