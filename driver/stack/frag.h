/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - IP fragments: bounded IPv4 reassembly, fragmentation toward the guest
 */
#ifndef TAPIR_FRAG_H
#define TAPIR_FRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <netinet/in.h>

#include "driver/core/ctx.h"

struct pkt;

int frag_init(struct ctx *c);
void frag_cleanup(struct ctx *c);
bool frag4_input(struct ctx *c, struct pkt *p);
bool frag6_input(struct ctx *c, struct pkt *p);
int frag_output(struct ctx *c, const struct in6_addr *src,
                const struct in6_addr *dst, uint8_t proto,
                const struct iovec *l4, int l4cnt, size_t l4len);

#endif /* TAPIR_FRAG_H */
