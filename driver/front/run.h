/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - `tapir run`: a command in new user+net namespaces, wired up
 */
#ifndef TAPIR_RUN_H
#define TAPIR_RUN_H

struct opts;

int run_main(int argc, char **argv);
int run_command(struct opts *o);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const run_syscalls[];

#endif /* TAPIR_RUN_H */
