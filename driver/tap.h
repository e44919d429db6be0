/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - open, attach or recreate the tap; vnet header and offloads
 */
#ifndef TAPIR_TAP_H
#define TAPIR_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/if_tun.h>

/* Added in Linux 6.2; older uapi headers (Debian 12) do not have them. */
#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#endif
#ifndef TUN_F_USO6
#define TUN_F_USO6 0x40
#endif

/* Size of struct virtio_net_hdr, in front of every frame with vnet_hdr. */
#define TAP_VNET_HDR_LEN 10

struct nl;

int tap_open_queues(struct nl *nl, const char *ifname, bool vnet,
                    unsigned int queues, int *fds, char *op, size_t oplen);
unsigned int tap_enable_offloads(int fd);

#endif /* TAPIR_TAP_H */
