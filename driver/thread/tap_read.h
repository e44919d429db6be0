/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - frames from the guest: batched reads off the tap
 */
#ifndef TAPIR_TAP_READ_H
#define TAPIR_TAP_READ_H

#include <stddef.h>
#include <stdint.h>

#include "driver/core/ctx.h"

int tapio_start(struct ctx *c);
void tapio_stop_reading(struct ctx *c);
void tapio_stop(struct ctx *c);
void tap_input_held(struct ctx *c, uint8_t *buf, size_t len);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const tap_read_syscalls[];

#endif /* TAPIR_TAP_READ_H */
