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

#include "ctx.h"

extern const char *const api_syscalls[];
extern const char *const clock_syscalls[];
extern const char *const cond_syscalls[];
extern const char *const dns_syscalls[];
extern const char *const fdlimit_syscalls[];
extern const char *const hostfwd_syscalls[];
extern const char *const janitor_syscalls[];
extern const char *const lifecycle_syscalls[];
extern const char *const log_syscalls[];
extern const char *const loop_syscalls[];
extern const char *const nssock_syscalls[];
extern const char *const pasta_fwd_syscalls[];
extern const char *const pcap_syscalls[];
extern const char *const run_syscalls[];
extern const char *const seed_syscalls[];
extern const char *const ping_syscalls[];
extern const char *const splice_syscalls[];
extern const char *const usplice_syscalls[];
extern const char *const tapio_syscalls[];
extern const char *const thread_syscalls[];
extern const char *const tcp_syscalls[];
extern const char *const udp_syscalls[];

int seccomp_allow_kill(pid_t pid);
int seccomp_apply(void);
int seccomp_apply_nssock(void);
int seccomp_apply_janitor(const int *dirfds, size_t n, int pidfd);
int seccomp_check_lists(unsigned int *unknown);

#endif /* TAPIR_SECCOMP_H */
