/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - IP layer shared by IPv4 and IPv6: parsed packets, output
 */
#ifndef TAPIR_IP_H
#define TAPIR_IP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <linux/virtio_net.h>

#include "driver/core/ctx.h"

struct frame;

/**
 * struct pkt - one IP packet from the guest, validated down to L4
 * @v6:		IPv6 rather than IPv4
 * @src:	source (IPv4-mapped for IPv4)
 * @dst:	destination (IPv4-mapped for IPv4)
 * @proto:	L4 protocol
 * @l3:		IP header
 * @l3len:	IP header length
 * @l4:		L4 header and payload
 * @l4len:	bytes at @l4, as the IP length fields say
 * @vh:		virtio_net_hdr of the frame, or NULL
 */
struct pkt {
	bool v6;
	struct in6_addr src;
	struct in6_addr dst;
	uint8_t proto;
	uint8_t *l3;
	size_t l3len;
	uint8_t *l4;
	size_t l4len;
	const struct virtio_net_hdr *vh;
};

int ip_output(struct ctx *c, const struct in6_addr *src,
              const struct in6_addr *dst, uint8_t proto, const struct iovec *l4,
              int l4cnt, const struct virtio_net_hdr *vh);
void ip_l4_input(struct ctx *c, struct pkt *p);
bool ip_finish_csum(struct ctx *c, struct frame *f, const struct pkt *p,
                    bool fragment);
uint32_t ip_pseudo_csum(const struct in6_addr *src, const struct in6_addr *dst,
                        uint8_t proto, size_t len);
const struct host_map *ip_host_map(const struct ctx *c,
                                   const struct in6_addr *a);
void ip_gateway(const struct ctx *c, bool v4, struct in6_addr *gw);
void ip_host_lo(const struct ctx *c, bool v4, struct in6_addr *lo);
bool ip_is_gateway(const struct ctx *c, const struct in6_addr *a);
bool ip_is_dns(const struct ctx *c, const struct in6_addr *a);

#endif /* TAPIR_IP_H */
