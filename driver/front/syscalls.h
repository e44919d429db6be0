/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - every module's system calls once running: the filter's union
 */
#ifndef TAPIR_SYSCALLS_H
#define TAPIR_SYSCALLS_H

#include <stddef.h>

extern const char *const *const syscall_lists[];
extern const size_t syscall_lists_n;

#endif /* TAPIR_SYSCALLS_H */
