/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - the one monotonic clock every timeout and rate limit reads
 */
#ifndef TAPIR_CLOCK_H
#define TAPIR_CLOCK_H

#include <stdint.h>

uint64_t clock_ns(void);
uint64_t clock_ms(void);
uint64_t clock_s(void);

/* Test seam: a clock that moves only when told to. */
void clock_set_fake(uint64_t ns);
void clock_advance(uint64_t ns);
void clock_set_real(void);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const clock_syscalls[];

#endif /* TAPIR_CLOCK_H */
