/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - UDP: errors the host reports for a guest's datagrams, told to the
 * guest as ICMP
 */
#ifndef TAPIR_UDP_ERR_H
#define TAPIR_UDP_ERR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/errqueue.h>

#include "driver/core/ctx.h"

struct pkt;
struct udp_flow;

/* Error queue entries read per wakeup of a socket: a host that errs on
 * every datagram is answered a batch at a time, and the socket stays
 * signalled for the rest. */
#define UDP_ERR_BATCH 32
/* udp_err_code_of(): the datagram was too big for the path; beyond every
 * ICMP unreachable code. */
#define UDP_ERR_TOO_BIG 256

bool udp_err_enable(int fd);
int udp_err_code_of(const struct sock_extended_err *ee);
void udp_err_quote(struct udp_flow *f, const struct pkt *p);
void udp_err_to_guest(struct ctx *c, struct udp_flow *f, int code, uint32_t mtu,
                      const uint8_t *data, size_t len);
int udp_err_read(struct ctx *c, int fd, struct udp_flow *f);

#endif /* TAPIR_UDP_ERR_H */
