/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - TCP: guest connections translated onto host kernel sockets
 */
#ifndef TAPIR_TCP_H
#define TAPIR_TCP_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "driver/core/ctx.h"

struct pkt;

int tcp_init(struct ctx *c);
void tcp_cleanup(struct ctx *c);
void tcp_input(struct ctx *c, struct pkt *p);
void tcp_flush(struct ctx *c);
bool tcp_peek_in_use(const struct ctx *c, int family);
int tcp_accept_inbound(struct ctx *c, int fd, const struct in6_addr *src,
                       uint16_t sport, const struct in6_addr *dst,
                       uint16_t dport);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const tcp_syscalls[];

#endif /* TAPIR_TCP_H */
