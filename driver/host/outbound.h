/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - --outbound-addr{,6}: the host address new host sockets bind to
 */
#ifndef TAPIR_OUTBOUND_H
#define TAPIR_OUTBOUND_H

#include "driver/core/ctx.h"

int outbound_bind(const struct ctx *c, int fd, int family);

#endif /* TAPIR_OUTBOUND_H */
