/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - Ethernet: validate frames from the tap, dispatch by ethertype
 */
#ifndef TAPIR_ETH_H
#define TAPIR_ETH_H

#include <stdint.h>
#include <netinet/in.h>
#include <net/ethernet.h>

#include "driver/core/ctx.h"

struct frame;

#define ETH_HLEN_ 14

/* MAC of the IPv6 router fe80::2 and source of all IPv6 frames, as libslirp. */
extern const uint8_t eth_router6_mac[6];

void eth_input(struct ctx *c, struct frame *f);
void eth_learn_guest(struct ctx *c, const struct frame *f);
void eth_special_mac(const struct ctx *c, uint8_t mac[6], struct in_addr ip);
const uint8_t *eth_router6(const struct ctx *c);
void eth_header_to_guest(const struct ctx *c, struct ether_header *eh,
                         struct in_addr src, uint16_t ethertype);
void eth_share_guest_mac(struct ctx *c);
void eth_guest_mac(const struct ctx *c, uint8_t *mac);

#endif /* TAPIR_ETH_H */
