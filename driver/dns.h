/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - the host's resolvers, from /etc/resolv.conf, for the forwarder
 */
#ifndef TAPIR_DNS_H
#define TAPIR_DNS_H

#include "ctx.h"
#include "fwd.h"

int dns_upstream(struct ctx *c, union sockaddr_inany *sa, socklen_t *salen);

#endif /* TAPIR_DNS_H */
