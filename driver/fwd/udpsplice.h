/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - UDP between the host's and the namespace's loopback, socket to
 * socket: pasta's -U and --host-lo-to-ns-lo
 */
#ifndef TAPIR_UDPSPLICE_H
#define TAPIR_UDPSPLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "driver/core/ctx.h"
#include "driver/flow/fwd.h"

/* Idle seconds before a spliced UDP flow is closed (pasta's 180). */
#define USPLICE_TIMEOUT 180

void usplice_datagram(struct ctx *c, int lfd, const union sockaddr_inany *peer,
                      bool in_ns, const struct in6_addr *dst, uint16_t dport,
                      const uint8_t *data, size_t len);
void usplice_listener_read(struct ctx *c, int lfd, bool in_ns,
                           const struct in6_addr *dst, uint16_t dport);
void usplice_listener_closed(struct ctx *c, int lfd);
unsigned int usplice_sweep(struct ctx *c, uint64_t now);
void usplice_stop(struct ctx *c);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const usplice_syscalls[];

#endif /* TAPIR_UDPSPLICE_H */
