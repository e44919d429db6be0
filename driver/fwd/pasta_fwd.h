/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pasta's host-to-namespace forwards: -t/-u lists and "auto"
 */
#ifndef TAPIR_PASTA_FWD_H
#define TAPIR_PASTA_FWD_H

#include "driver/core/ctx.h"

/* How often "auto" rescans the namespace's sockets, as pasta does. */
#define PASTA_FWD_SCAN_MS 1000
/* A port the host refused is tried again after this many scans. */
#define PASTA_FWD_RETRY_SCANS 10

int pasta_fwd_start(struct ctx *c);
void pasta_fwd_stop(struct ctx *c);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const pasta_fwd_syscalls[];

#endif /* TAPIR_PASTA_FWD_H */
