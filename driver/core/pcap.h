/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - --pcap: buffered capture of every tap frame, pcap format
 */
#ifndef TAPIR_PCAP_H
#define TAPIR_PCAP_H

#include <stddef.h>
#include <sys/uio.h>

#include "driver/core/ctx.h"

int pcap_open(struct ctx *c, const char *path);
void pcap_frame(struct ctx *c, const void *data, size_t len);
void pcap_frame_iov(struct ctx *c, const struct iovec *iov, int iovcnt);
void pcap_close(struct ctx *c);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const pcap_syscalls[];

#endif /* TAPIR_PCAP_H */
