/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - the one source of secret keys: hash seeds, ISN keys and ids
 */
#ifndef TAPIR_SEED_H
#define TAPIR_SEED_H

#include <stdint.h>

uint64_t seed_u64(void);

/* Test seam: every later seed_u64() derives from @seed alone. */
void seed_set_fixed(uint64_t seed);
void seed_set_random(void);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const seed_syscalls[];

#endif /* TAPIR_SEED_H */
