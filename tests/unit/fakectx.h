/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - unit tests: a context whose tap is one end of a socketpair
 */
#ifndef TAPIR_FAKECTX_H
#define TAPIR_FAKECTX_H

#include <stdbool.h>
#include <stdint.h>

#include "driver/core/ctx.h"

int fake_ctx_init(struct ctx *c, struct opts *o, bool ipv6,
                  const uint8_t guest_mac[6]);
void fake_ctx_close(struct ctx *c, int peer);
int fake_ctx_udp_open(struct ctx *c);
void fake_ctx_udp_close(struct ctx *c);

#endif /* TAPIR_FAKECTX_H */
