/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - IPv4: validate packets from the guest, build headers to it
 */
#ifndef TAPIR_IP4_H
#define TAPIR_IP4_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/ip.h>

#include "driver/core/ctx.h"

struct frame;

void ip4_input(struct ctx *c, struct frame *f);
void ip4_build_header(struct ctx *c, struct iphdr *ih, struct in_addr src,
                      struct in_addr dst, uint8_t proto, size_t l4len);

#endif /* TAPIR_IP4_H */
