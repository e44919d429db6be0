/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - the janitor: files removed at exit from outside the sandbox
 */
#ifndef TAPIR_JANITOR_H
#define TAPIR_JANITOR_H

#include <stdbool.h>
#include <sys/types.h>

/* Files one tapir removes at exit: the API socket, and tapir run's
 * resolv.conf and its directory.
 */
#define JANITOR_MAX 4
/* How long tapir waits at exit for the janitor to say the files are gone. */
#define JANITOR_WAIT_MS 1000

int janitor_remove_at_exit(const char *path, bool dir);
int janitor_relay_signals(pid_t pid);
int janitor_signal_command(int sig);
int janitor_start(bool filter);
void janitor_finish(void);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const janitor_syscalls[];

#endif /* TAPIR_JANITOR_H */
