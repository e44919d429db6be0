/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - ICMP and ICMPv6 from the guest: local echo, NDP, ping sockets
 */
#ifndef TAPIR_ICMP_H
#define TAPIR_ICMP_H

#include "driver/core/ctx.h"

struct pkt;

void icmp_input(struct ctx *c, struct pkt *p);
bool icmp_may_answer(const struct ctx *c, const struct pkt *p);
int icmp_send_unreach(struct ctx *c, const struct pkt *p, uint8_t code);
int icmp_send_too_big(struct ctx *c, const struct pkt *p, uint32_t mtu);
int icmp_unreach_code(int err);

#endif /* TAPIR_ICMP_H */
