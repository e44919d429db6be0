/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - where guest traffic goes on the host: loopback mapping, DNS, policy
 */
#ifndef TAPIR_FWD_H
#define TAPIR_FWD_H

#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "driver/core/ctx.h"
#include "driver/core/inany.h"
#include "driver/flow/flow_key.h"

struct pkt;

enum fwd_verdict {
	FWD_OK,          /* connect or send to the returned address */
	FWD_NET_UNREACH, /* answer ICMP net-unreachable (slirp4netns) */
	FWD_DROP,        /* drop silently: the guest sees a timeout */
};

enum fwd_verdict fwd_outbound(const struct ctx *c, uint8_t proto,
                              const struct in6_addr *dst, uint16_t dport,
                              union sockaddr_inany *sa, socklen_t *salen);
int fwd_outbound_or_reject(struct ctx *c, const struct pkt *p, uint16_t dport,
                           union sockaddr_inany *sa, socklen_t *salen);
void fwd_guest_source(const struct ctx *c, const union sockaddr_inany *sa,
                      struct in6_addr *addr, uint16_t *port);
void fwd_guest_target(const struct ctx *c, const union sockaddr_inany *peer,
                      const struct in6_addr *gaddr, struct in6_addr *dst);
void fwd_inbound_key(const struct ctx *c, const union sockaddr_inany *peer,
                     const struct in6_addr *gaddr, uint16_t gport,
                     struct flow_key *k);
bool fwd_ns_loopback(const union sockaddr_inany *sa, struct in6_addr *lo);

void fwd_reset_close(int fd);
void fwd_reset_on_close(int fd);

#endif /* TAPIR_FWD_H */
