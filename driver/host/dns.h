/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - the host's resolvers, from /etc/resolv.conf, for the forwarder
 */
#ifndef TAPIR_DNS_H
#define TAPIR_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <netinet/in.h>

#include "driver/core/ctx.h"
#include "driver/core/inany.h"

/* As glibc (MAXNS): later nameserver lines are ignored. */
#define DNS_MAX_SERVERS 3

int dns_upstream(struct ctx *c, union sockaddr_inany *sa, socklen_t *salen);
bool dns_host_resolves_at(struct ctx *c, const struct in6_addr *a);
void dns_cleanup(struct ctx *c);
int dns_parse_resolv(const char *text, size_t len, union sockaddr_inany *out,
                     int max);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const dns_syscalls[];

#endif /* TAPIR_DNS_H */
