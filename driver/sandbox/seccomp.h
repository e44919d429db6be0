/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - --enable-seccomp: only the syscalls tapir makes once running
 *
 * Each module lists, next to its code, the syscalls it makes after set-up
 * (NULL-terminated names, resolved per architecture); seccomp.c allows
 * exactly their union, some only with the arguments tapir uses (socket,
 * openat, kill, ioctl, tgkill, clone: see seccomp.c), and kills the
 * process on anything else. A syscall added to a module without its name
 * here kills tapir in the tests, which run filtered.
 */
#ifndef TAPIR_SECCOMP_H
#define TAPIR_SECCOMP_H

#include <stddef.h>
#include <sys/types.h>

#include "driver/core/ctx.h"

int seccomp_allow_kill(pid_t pid);
int seccomp_apply(const char *const *const *lists, size_t n);
int seccomp_apply_nssock(void);
int seccomp_apply_janitor(const int *dirfds, size_t n, int pidfd);
int seccomp_check_lists(const char *const *const *lists, size_t n,
                        unsigned int *unknown);

#endif /* TAPIR_SECCOMP_H */
