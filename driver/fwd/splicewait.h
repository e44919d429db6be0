/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - connections of spliced forwards waiting for a namespace socket
 */
#ifndef TAPIR_SPLICEWAIT_H
#define TAPIR_SPLICEWAIT_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "driver/core/ctx.h"
#include "driver/flow/fwd.h"

/* Clients that may wait at once; more are not spliced. */
#define SPLICE_WAIT_MAX 256

struct splice_wait;
struct splice_state;
struct nssock_pool;

/**
 * typedef splice_unspliced_fn - serve a client without splicing it
 * @c:		context
 * @fd:		accepted socket, consumed
 * @peer:	the client's address
 * @dst:	the forward's guest_addr
 * @dport:	the forward's guest_port
 */
typedef void (*splice_unspliced_fn)(struct ctx *c, int fd,
                                    const union sockaddr_inany *peer,
                                    const struct in6_addr *dst, uint16_t dport);

struct splice_wait *splice_wait_new(struct ctx *c, struct splice_state *st,
                                    struct nssock_pool *pool,
                                    splice_unspliced_fn unspliced);
void splice_wait_free(struct splice_wait *w);
void splice_wait_accept(struct splice_wait *w, int fd,
                        const union sockaddr_inany *peer,
                        const struct in6_addr *dst, uint16_t dport);
size_t splice_wait_count(const struct splice_wait *w);

#endif /* TAPIR_SPLICEWAIT_H */
