// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - the one source of secret keys: hash seeds, ISN keys and ids
 *
 * Every table key, ISN key and identification stream starts here, so that
 * a guest can't predict them in normal runs, and a test or fuzzer can make
 * them all reproducible at once with seed_set_fixed(): a fuzzer then sees
 * the same ISN for the same input and can complete a TCP handshake.
 */

#include <stdbool.h>
#include <unistd.h>
#include <sys/random.h>

#include "driver/core/clock.h"
#include "driver/core/seed.h"

/* getrandom() is called at start-up, but a table may be created later. */
const char *const seed_syscalls[] = {
        "getrandom",
        NULL,
};

static bool fixed_on;
static uint64_t fixed_state;

/**
 * splitmix64() - next value of a splitmix64 sequence
 * @state:	sequence state, advanced
 *
 * Return: a well-mixed 64-bit value
 */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/**
 * seed_u64() - a fresh secret 64-bit key
 *
 * From getrandom(); should the kernel's pool not be ready (GRND_NONBLOCK),
 * from the clock and PID, which still differs run to run. Never 0, so that
 * xorshift generators seeded from it never stall.
 *
 * Return: the key
 */
uint64_t seed_u64(void)
{
	uint64_t v;

	if (fixed_on) {
		v = splitmix64(&fixed_state);
	} else if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v)) {
		uint64_t s = clock_ns() ^ (uint64_t)getpid() << 32;

		v = splitmix64(&s);
	}
	return v ? v : 0x9e3779b97f4a7c15ULL;
}

/**
 * seed_set_fixed() - tests and fuzzers: a reproducible key sequence
 * @seed:	start of the sequence; the same @seed gives the same keys in
 *		the same order
 */
void seed_set_fixed(uint64_t seed)
{
	fixed_on = true;
	fixed_state = seed;
}

/**
 * seed_set_random() - back to keys from getrandom()
 */
void seed_set_random(void)
{
	fixed_on = false;
}
