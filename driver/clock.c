// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - the one monotonic clock every timeout and rate limit reads
 *
 * One place, so that timeouts agree with each other and a test or fuzzer
 * has one seam to replace.
 */

#include <time.h>

#include "clock.h"

/**
 * clock_ms() - monotonic milliseconds
 *
 * Return: milliseconds since an arbitrary point; never goes back
 */
uint64_t clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/**
 * clock_s() - monotonic seconds
 *
 * Return: seconds since the same point as clock_ms()
 */
uint64_t clock_s(void)
{
	return clock_ms() / 1000;
}
