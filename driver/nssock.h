/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pool of TCP sockets created inside the target's network namespace
 */
#ifndef TAPIR_NSSOCK_H
#define TAPIR_NSSOCK_H

#include <stdint.h>

#include "ctx.h"

/* Sockets kept per address family; one helper reply carries both rows,
 * and a message takes at most 253 fds (SCM_MAX_FD).
 */
#define NSSOCK_POOL 64
/* Below this many, a refill starts in the background. */
#define NSSOCK_LOW 32

struct nssock_pool;

struct nssock_pool *nssock_new(struct ctx *c);
void nssock_free(struct nssock_pool *p);
void nssock_prime(struct nssock_pool *p);
int nssock_get(struct nssock_pool *p, int family);
unsigned int nssock_count(const struct nssock_pool *p, int family);
uint64_t nssock_refills(const struct nssock_pool *p);

#endif /* TAPIR_NSSOCK_H */
