/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - IPv6: validate packets from the guest, build headers to it
 */
#ifndef TAPIR_IP6_H
#define TAPIR_IP6_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/ip6.h>

#include "driver/core/ctx.h"

struct frame;

void ip6_input(struct ctx *c, struct frame *f);
void ip6_build_header(struct ip6_hdr *h, const struct in6_addr *src,
                      const struct in6_addr *dst, uint8_t proto, size_t l4len);

#endif /* TAPIR_IP6_H */
