/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - Internet checksums (RFC 1071) for IPv4, IPv6, TCP, UDP, ICMP
 */
#ifndef TAPIR_CSUM_H
#define TAPIR_CSUM_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

uint32_t csum_add(uint32_t sum, const void *buf, size_t len);
uint16_t csum_fold(uint32_t sum);
uint16_t csum_ip4_header(const void *iph, size_t len);
uint32_t csum_pseudo4(struct in_addr src, struct in_addr dst, uint8_t proto,
                      uint32_t len);
uint32_t csum_pseudo6(const struct in6_addr *src, const struct in6_addr *dst,
                      uint8_t proto, uint32_t len);

#endif /* TAPIR_CSUM_H */
