/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - set-up, event loop and teardown of a running driver
 */
#ifndef TAPIR_LOOP_H
#define TAPIR_LOOP_H

#include "driver/core/ctx.h"

int loop_prepare(struct ctx *c, const struct opts *o);
int loop_run(struct ctx *c);
void loop_cleanup(struct ctx *c);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const loop_syscalls[];

#endif /* TAPIR_LOOP_H */
