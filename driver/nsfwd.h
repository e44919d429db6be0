/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pasta's -T and -U: host ports answer on the namespace's loopback
 */
#ifndef TAPIR_NSFWD_H
#define TAPIR_NSFWD_H

#include "ctx.h"
#include "pasta_ports.h"

int nsfwd_start(struct ctx *c, const struct pasta_ports *tcp,
                const struct pasta_ports *udp);
void nsfwd_sync(struct ctx *c);
void nsfwd_settle(struct ctx *c);
void nsfwd_stop(struct ctx *c);

#endif /* TAPIR_NSFWD_H */
