/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pasta's -T and -U: host ports answer on the namespace's loopback
 */
#ifndef TAPIR_NSFWD_H
#define TAPIR_NSFWD_H

#include <stdbool.h>

#include "driver/core/ctx.h"
#include "driver/core/opts.h"
#include "driver/fwd/portscan.h"

int nsfwd_start(struct ctx *c, const struct pasta_ports *tcp,
                const struct pasta_ports *udp);
void nsfwd_sync(struct ctx *c);
void nsfwd_settle(struct ctx *c);
const struct port_set *nsfwd_held(const struct ctx *c, bool udp);
void nsfwd_stop(struct ctx *c);

#endif /* TAPIR_NSFWD_H */
