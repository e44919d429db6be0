// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - the one monotonic clock every timeout and rate limit reads
 *
 * One place, so that timeouts agree with each other and a test or fuzzer
 * has one seam to replace: clock_set_fake() freezes time at a value the
 * caller then moves with clock_advance(), so retransmission, probe, idle
 * and expiry paths run without waiting for them.
 */

#include <stdbool.h>
#include <time.h>

#include "driver/core/clock.h"

/* The only syscall of the clock once running (usually served by the vDSO,
 * which seccomp never sees, but a kernel without one makes the call).
 */
const char *const clock_syscalls[] = {
        "clock_gettime",
        NULL,
};

static bool fake_on;
static uint64_t fake_ns;

/**
 * clock_ns() - monotonic nanoseconds
 *
 * Return: nanoseconds since an arbitrary point; never goes back (unless a
 *	   test sets a fake time backwards)
 */
uint64_t clock_ns(void)
{
	struct timespec ts;

	if (fake_on)
		return fake_ns;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/**
 * clock_ms() - monotonic milliseconds
 *
 * Return: milliseconds since the same point as clock_ns()
 */
uint64_t clock_ms(void)
{
	return clock_ns() / 1000000;
}

/**
 * clock_s() - monotonic seconds
 *
 * Return: seconds since the same point as clock_ns()
 */
uint64_t clock_s(void)
{
	return clock_ns() / 1000000000ULL;
}

/**
 * clock_set_fake() - tests and fuzzers: stop the clock at @ns
 * @ns:		the time every clock_*() call returns from now on
 *
 * libevent's own timers still run on the real clock: a caller that wants
 * them to fire activates them itself after clock_advance().
 */
void clock_set_fake(uint64_t ns)
{
	fake_on = true;
	fake_ns = ns;
}

/**
 * clock_advance() - move the fake clock forward
 * @ns:		nanoseconds to add; ignored unless clock_set_fake() was called
 */
void clock_advance(uint64_t ns)
{
	if (fake_on)
		fake_ns += ns;
}

/**
 * clock_set_real() - back to the kernel's monotonic clock
 */
void clock_set_real(void)
{
	fake_on = false;
}
