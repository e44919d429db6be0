/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - frames to the guest: vnet header, conditions, capture, the write
 */
#ifndef TAPIR_TAP_WRITE_H
#define TAPIR_TAP_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <linux/virtio_net.h>

#include "driver/core/ctx.h"

#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5
#endif

/* Largest frame the tap hands us: a 64 KiB GSO packet plus Ethernet. */
#define TAP_FRAME_MAX (65536 + 14 + 64)

/**
 * struct frame - one frame read from the tap
 * @vh:		its virtio_net_hdr, or NULL without vnet headers
 * @data:	Ethernet header and payload
 * @len:	bytes at @data
 */
struct frame {
	struct virtio_net_hdr *vh;
	uint8_t *data;
	size_t len;
};

int tap_send(struct ctx *c, const struct virtio_net_hdr *vh,
             const struct iovec *iov, int iovcnt);
void tap_write_held(struct ctx *c, uint8_t *buf, size_t len);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const tap_write_syscalls[];

#endif /* TAPIR_TAP_WRITE_H */
