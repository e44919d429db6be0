// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: the one clock and the one seed, and their test seams */

#include <stddef.h>
#include <stdint.h>

#include "driver/core/clock.h"
#include "driver/core/seed.h"
#include "tests/unit/unit.h"

/* The three units read one clock, and it never goes back. */
static void test_real_clock(void)
{
	uint64_t ns = clock_ns(), ms = clock_ms(), s = clock_s();

	CHECK(ns > 0);
	CHECK(clock_ms() >= ms);
	CHECK(ms >= ns / 1000000);
	CHECK(s == ms / 1000 || s + 1 == clock_s());
}

/* A fake clock moves only when told to, in every unit. */
static void test_fake_clock(void)
{
	clock_set_fake(5000000000ULL);
	CHECK(clock_ns() == 5000000000ULL);
	CHECK(clock_ms() == 5000);
	CHECK(clock_s() == 5);
	clock_advance(1500000000ULL);
	CHECK(clock_ms() == 6500);
	CHECK(clock_s() == 6);
	clock_set_real();
	clock_advance(1);
	CHECK(clock_ns() != 6500000000ULL);
}

/* A fixed seed gives the same keys again; none is 0; real ones differ. */
static void test_seed(void)
{
	uint64_t a[4], b[4];

	seed_set_fixed(42);
	for (int i = 0; i < 4; i++)
		a[i] = seed_u64();
	seed_set_fixed(42);
	for (int i = 0; i < 4; i++) {
		b[i] = seed_u64();
		CHECK(a[i] == b[i]);
		CHECK(a[i] != 0);
	}
	CHECK(a[0] != a[1]);
	seed_set_random();
	CHECK(seed_u64() != seed_u64());
}

const struct unit_case unit_cases[] = {
        {"clock: ns, ms and s agree", test_real_clock},
        {"clock: a fake clock for tests and fuzzers", test_fake_clock},
        {"seed: fixed for fuzzers, random otherwise", test_seed},
        {NULL, NULL},
};
