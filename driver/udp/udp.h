/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - UDP: one connected host socket per guest flow, both directions
 */
#ifndef TAPIR_UDP_H
#define TAPIR_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver/core/ctx.h"
#include "driver/flow/fwd.h"

struct pkt;

int udp_init(struct ctx *c);
void udp_cleanup(struct ctx *c);
void udp_input(struct ctx *c, struct pkt *p);
void udp_listener_closed(struct ctx *c, int lfd);
void udp_listener_read(struct ctx *c, int lfd, const struct in6_addr *gaddr,
                       uint16_t gport, uint32_t *ovfl);
bool udp_sock_tune(int fd);
void udp_inbound(struct ctx *c, int lfd, const union sockaddr_inany *peer,
                 const struct in6_addr *gaddr, uint16_t gport,
                 const uint8_t *data, size_t len);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const udp_syscalls[];

#endif /* TAPIR_UDP_H */
