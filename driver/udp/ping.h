/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - ICMP echo to remote hosts through unprivileged ping sockets
 */
#ifndef TAPIR_PING_H
#define TAPIR_PING_H

#include <stdbool.h>
#include <stdint.h>

#include "driver/core/ctx.h"

struct pkt;

int ping_init(struct ctx *c);
void ping_cleanup(struct ctx *c);
void ping_forward(struct ctx *c, const struct pkt *p);
unsigned int ping_expire_idle(struct ctx *c, uint64_t now);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const ping_syscalls[];

#endif /* TAPIR_PING_H */
