/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - ready fd, exit fd, signals and the target's lifetime
 */
#ifndef TAPIR_LIFECYCLE_H
#define TAPIR_LIFECYCLE_H

#include <sys/types.h>

#include "driver/core/ctx.h"

int lifecycle_target_exists(const struct opts *o);
pid_t lifecycle_target_pid(const struct opts *o);
int lifecycle_open_target(struct opts *o);
int lifecycle_watch_target(struct ctx *c, pid_t pid);
int lifecycle_watch_path(struct ctx *c);
int lifecycle_start(struct ctx *c);
void lifecycle_signal_ready(struct ctx *c);
int lifecycle_write_pid(int fd, pid_t pid, const char *path);
void lifecycle_stop(struct ctx *c);
void lifecycle_fail(struct ctx *c);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const lifecycle_syscalls[];

#endif /* TAPIR_LIFECYCLE_H */
