/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - the one monotonic clock every timeout and rate limit reads
 */
#ifndef TAPIR_CLOCK_H
#define TAPIR_CLOCK_H

#include <stdint.h>

uint64_t clock_ms(void);
uint64_t clock_s(void);

#endif /* TAPIR_CLOCK_H */
