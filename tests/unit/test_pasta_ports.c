// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: pasta's -t/-u/-T/-U port specs */

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "driver/front/pasta_ports.h"
#include "tests/unit/unit.h"

static struct pasta_ports pp;
static char why[160];

/**
 * parse() - start a fresh option and add the given specs to it
 * @n:		number of specs
 * @specs:	the specs
 *
 * Return: what the last pasta_ports_parse() returned, or the first failure
 */
static int parse(unsigned int n, const char *const *specs)
{
	memset(&pp, 0, sizeof(pp));
	why[0] = '\0';
	for (unsigned int i = 0; i < n; i++)
		if (pasta_ports_parse(&pp, specs[i], why, sizeof(why)))
			return -1;
	return 0;
}

/**
 * parse1() - start a fresh option with one spec
 * @spec:	the spec
 *
 * Return: 0 on success, -1 on failure
 */
static int parse1(const char *spec)
{
	return parse(1, &spec);
}

/**
 * range_is() - whether range @i forwards @first..@last to @target
 * @i:		index in pp
 * @first:	first host port
 * @last:	last host port
 * @target:	first target port
 *
 * Return: true if so
 */
static bool range_is(unsigned int i, unsigned int first, unsigned int last,
                     unsigned int target)
{
	return i < pp.n && pp.r[i].first == first && pp.r[i].last == last &&
	       pp.r[i].target == target;
}

/**
 * addr_is() - whether range @i is bound to @text only
 * @i:		index in pp
 * @text:	IPv6 text (IPv4 as ::ffff:a.b.c.d)
 *
 * Return: true if so
 */
static bool addr_is(unsigned int i, const char *text)
{
	struct in6_addr a;

	return i < pp.n && pp.r[i].addr_set &&
	       inet_pton(AF_INET6, text, &a) == 1 &&
	       !memcmp(&a, &pp.r[i].addr, sizeof(a));
}

static void test_keywords(void)
{
	CHECK(!parse1("none") && pp.mode == PASTA_PORTS_NONE && !pp.n);
	CHECK(!parse1("auto") && pp.mode == PASTA_PORTS_AUTO && !pp.n);
	CHECK(!parse1("all") && pp.mode == PASTA_PORTS_LIST && pp.n == 1 &&
	      range_is(0, 1, 65535, 1) && !pp.r[0].addr_set);
}

static void test_podman(void)
{
	const char *two[] = {"8081-8081:80-80", "127.0.0.1/8080-8080:80-80"};

	CHECK(!parse1("127.0.0.1/8080-8080:80-80") && pp.n == 1 &&
	      range_is(0, 8080, 8080, 80) && addr_is(0, "::ffff:127.0.0.1"));
	CHECK(!parse(2, two) && pp.n == 2 && range_is(0, 8081, 8081, 80) &&
	      !pp.r[0].addr_set && range_is(1, 8080, 8080, 80));
	CHECK(!parse1("::1/8080-8080:80-80") && addr_is(0, "::1"));
	CHECK(!parse1("[::1]/8080") && addr_is(0, "::1") &&
	      range_is(0, 8080, 8080, 8080));
}

static void test_manual(void)
{
	CHECK(!parse1("22") && pp.n == 1 && range_is(0, 22, 22, 22));
	CHECK(!parse1("22:23") && pp.n == 1 && range_is(0, 22, 22, 23));
	CHECK(!parse1("22,25") && pp.n == 2 && range_is(0, 22, 22, 22) &&
	      range_is(1, 25, 25, 25));
	CHECK(!parse1("22-80") && pp.n == 1 && range_is(0, 22, 80, 22));
	CHECK(!parse1("22-80:32-90") && range_is(0, 22, 80, 32));
	CHECK(!parse1("192.0.2.1/22") && addr_is(0, "::ffff:192.0.2.1") &&
	      !pp.r[0].ifname[0]);
	CHECK(!parse1("192.0.2.1%eth0/22") && addr_is(0, "::ffff:192.0.2.1") &&
	      !strcmp(pp.r[0].ifname, "eth0"));
}

static void test_exclusions(void)
{
	CHECK(!parse1("2000-5000,~3000-3010") && pp.n == 2 &&
	      range_is(0, 2000, 2999, 2000) && range_is(1, 3011, 5000, 3011));
	CHECK(!parse1("192.0.2.1/20-30,~25") && pp.n == 2 &&
	      range_is(0, 20, 24, 20) && range_is(1, 26, 30, 26) &&
	      addr_is(1, "::ffff:192.0.2.1"));
	CHECK(!parse1("~20000-20010") && pp.n == 2 &&
	      range_is(0, 1, 19999, 1) && range_is(1, 20011, 65535, 20011));
	/* A split keeps each port's own target. */
	CHECK(!parse1("2000-5000:12000-15000,~3000-3010") &&
	      range_is(1, 3011, 5000, 13011));
	/* The exclusion may come first, and may cover the ends. */
	CHECK(!parse1("~1-10,1-20") && pp.n == 1 && range_is(0, 11, 20, 11));
	/* Everything excluded: nothing left, and that is no error. */
	CHECK(!parse1("80,~80") && pp.n == 0);
}

static void test_refused(void)
{
	const struct {
		const char *spec, *why;
	} bad[] = {
	        {"0", "out of range"},
	        {"65536", "out of range"},
	        {"99999999999999999999", "out of range"},
	        {"80-22", "backwards"},
	        {"22-80:32", "not as long"},
	        {"22:", "port number"},
	        {"abc", "port number"},
	        {"22,,23", "empty item"},
	        {"22,", "empty item"},
	        {",22", "empty item"},
	        {"~22:23", "no target"},
	        {"22x", "unexpected"},
	        {"1.2.3/22", "bad address"},
	        {"/22", "bad address"},
	        {"::1%/22", "interface"},
	        {"127.0.0.1%averyveryverylongname/22", "interface"},
	        {"127.0.0.1/", "no ports"},
	        {"", "no ports"},
	        {"-1", "port number"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bool ok = parse1(bad[i].spec) && strstr(why, bad[i].why);

		if (!ok)
			fprintf(stderr, "# '%s': %s\n", bad[i].spec, why);
		CHECK(ok);
	}
}

static void test_combined(void)
{
	const char *none_then[] = {"none", "22"};
	const char *then_auto[] = {"22", "auto"};
	const char *twice[] = {"8080", "8000-8100:9000-9100"};
	const char *any_and_lo[] = {"80", "127.0.0.1/80"};
	const char *two_addrs[] = {"127.0.0.1/80", "127.0.0.2/80", "::1/80"};

	CHECK(parse(2, none_then) && strstr(why, "can't be combined"));
	CHECK(parse(2, then_auto) && strstr(why, "can't be combined"));
	CHECK(parse(2, twice) && strstr(why, "port 8080 is forwarded twice"));
	CHECK(parse(2, any_and_lo) && strstr(why, "forwarded twice"));
	CHECK(!parse(3, two_addrs) && pp.n == 3);
}

/**
 * test_many_exclusions() - thousands of whole-range exclusions in one spec
 *			    leave nothing, and are marked a byte at a time
 */
static void test_many_exclusions(void)
{
	static char spec[20000 * 9];
	size_t len = 0;

	for (int i = 0; i < 20000; i++)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s",
		                        i ? ",~1-65535" : "~1-65535");
	CHECK(len < sizeof(spec) && !parse1(spec) && pp.n == 0);
	/* Ranges that start and end mid-byte. */
	CHECK(!parse1("1-100,~3-21,~30-33") && pp.n == 3 &&
	      range_is(0, 1, 2, 1) && range_is(1, 22, 29, 22) &&
	      range_is(2, 34, 100, 34));
}

static void test_too_many(void)
{
	char spec[4096];
	size_t len = 0;

	/* 1-600 with every other port out: 300 ranges. */
	len += (size_t)snprintf(spec, sizeof(spec), "1-600");
	for (unsigned int p = 2; p <= 600 && len < sizeof(spec) - 8; p += 2)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, ",~%u",
		                        p);
	CHECK(parse1(spec) && strstr(why, "more than 256 ranges"));
	CHECK(pp.n == PASTA_RANGES_MAX);
}

const struct unit_case unit_cases[] = {
        {"none, auto and all", test_keywords},
        {"podman's -t/-u forms: address, range and target", test_podman},
        {"pasta(1)'s examples", test_manual},
        {"~ exclusions split ranges and keep each port's target",
         test_exclusions},
        {"bad specs are refused with what is wrong", test_refused},
        {"none/auto alone; a port forwarded twice on one address is "
         "refused, on distinct addresses not",
         test_combined},
        {"more than 256 ranges are refused", test_too_many},
        {"20 000 whole-range exclusions, and exclusions mid-byte",
         test_many_exclusions},
        {NULL, NULL},
};
