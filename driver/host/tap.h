/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - open, attach or recreate the tap; vnet header and offloads
 */
#ifndef TAPIR_TAP_H
#define TAPIR_TAP_H

#include <stdbool.h>
#include <stddef.h>

/* TUN_F_* with the Linux 6.2 USO bits: the schema of the helper's reply. */
#include "ipc/msg.h"

/* Size of struct virtio_net_hdr, in front of every frame with vnet_hdr. */
#define TAP_VNET_HDR_LEN 10

struct nl;

int tap_open_queues(struct nl *nl, const char *ifname, bool vnet,
                    unsigned int queues, int *fds, char *op, size_t oplen);
unsigned int tap_enable_offloads(int fd);
unsigned int tap_auto_txqueuelen(unsigned int mtu);

#endif /* TAPIR_TAP_H */
