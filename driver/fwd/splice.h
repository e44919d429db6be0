/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - spliced TCP forwards: host socket to namespace socket via pipes
 */
#ifndef TAPIR_SPLICE_H
#define TAPIR_SPLICE_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "driver/core/ctx.h"

/* Spliced connections at most; each holds 2 sockets and 2 pipes. */
#define SPLICE_MAX_CONNS 2048
/* Of those, accepted in the namespace (pasta's -T) at most. */
#define SPLICE_MAX_OUTWARD (SPLICE_MAX_CONNS / 4)

struct splice_state;
struct nssock_pool;

struct splice_state *splice_new(struct ctx *c, struct nssock_pool *pool);
void splice_free(struct splice_state *s);
int splice_accept(struct splice_state *s, int fd, const struct in6_addr *dst,
                  uint16_t dport);
void splice_outward(struct splice_state *st, int fd, const struct in6_addr *dst,
                    uint16_t dport);
size_t splice_conns(const struct splice_state *s);
uint64_t splice_total(const struct splice_state *s);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const splice_syscalls[];

#endif /* TAPIR_SPLICE_H */
