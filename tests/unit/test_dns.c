// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the resolv.conf parser of the DNS forwarder */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "driver/core/clock.h"
#include "driver/host/dns.h"
#include "driver/core/inany.h"
#include "tests/unit/unit.h"

/**
 * parse() - run the parser over a NUL-terminated text
 * @text:	file contents
 * @out:	filled with up to @max addresses
 * @max:	capacity of @out
 *
 * Return: the parser's count
 */
static int parse(const char *text, union sockaddr_inany *out, int max)
{
	return dns_parse_resolv(text, strlen(text), out, max);
}

/**
 * is_v4() - whether @sa is the IPv4 address @s, port 53
 * @sa:		parsed address
 * @s:		expected address in dotted form
 *
 * Return: true on a match
 */
static bool is_v4(const union sockaddr_inany *sa, const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return sa->sa.sa_family == AF_INET &&
	       sa->sa4.sin_addr.s_addr == a.s_addr &&
	       sa->sa4.sin_port == htons(53);
}

/**
 * is_v6() - whether @sa is the IPv6 address @s with @scope, port 53
 * @sa:		parsed address
 * @s:		expected address
 * @scope:	expected scope id
 *
 * Return: true on a match
 */
static bool is_v6(const union sockaddr_inany *sa, const char *s, uint32_t scope)
{
	struct in6_addr a;

	inet_pton(AF_INET6, s, &a);
	return sa->sa.sa_family == AF_INET6 &&
	       !memcmp(&sa->sa6.sin6_addr, &a, sizeof(a)) &&
	       sa->sa6.sin6_port == htons(53) && sa->sa6.sin6_scope_id == scope;
}

static void test_plain(void)
{
	union sockaddr_inany ns[3];

	CHECK(parse("nameserver 192.0.2.53\n", ns, 3) == 1);
	CHECK(is_v4(&ns[0], "192.0.2.53"));
	CHECK(parse("nameserver\t127.0.0.1", ns, 3) == 1);
	CHECK(is_v4(&ns[0], "127.0.0.1"));
}

static void test_comments_and_options(void)
{
	static const char text[] = "# nameserver 192.0.2.1\n"
	                           "; nameserver 192.0.2.2\n"
	                           "search example.org\n"
	                           "options edns0 timeout:1\n"
	                           "nameserver 192.0.2.3 # the office one\n"
	                           "nameserver 192.0.2.4;trailing\n"
	                           "\n";
	union sockaddr_inany ns[3];

	CHECK(parse(text, ns, 3) == 2);
	CHECK(is_v4(&ns[0], "192.0.2.3"));
	CHECK(is_v4(&ns[1], "192.0.2.4"));
}

static void test_ipv6_and_scope(void)
{
	static const char text[] = "nameserver 2001:db8::53\n"
	                           "nameserver fe80::1%7\n"
	                           "nameserver fe80::2\n"
	                           "nameserver fe80::3%no-such-if0\n"
	                           "nameserver 2001:db8::54%3\n";
	union sockaddr_inany ns[3];

	/* Unscoped link-local servers are unreachable: skipped. */
	CHECK(parse(text, ns, 3) == 3);
	CHECK(is_v6(&ns[0], "2001:db8::53", 0));
	CHECK(is_v6(&ns[1], "fe80::1", 7));
	CHECK(is_v6(&ns[2], "2001:db8::54", 3));
}

static void test_scope_by_name(void)
{
	union sockaddr_inany ns[1];

	/* "lo" exists in every network namespace. */
	CHECK(parse("nameserver fe80::1%lo\n", ns, 1) == 1);
	CHECK(ns[0].sa.sa_family == AF_INET6 && ns[0].sa6.sin6_scope_id > 0);
}

static void test_garbage(void)
{
	static const char text[] = "nameserver\n"
	                           "nameserver \n"
	                           "nameserver not-an-address\n"
	                           "nameserver 300.1.1.1\n"
	                           "nameserver 1.2.3.4.5\n"
	                           "nameservers 192.0.2.9\n"
	                           "nameserver192.0.2.8\n"
	                           " nameserver 192.0.2.7\n"
	                           "nameserver 192.0.2.6%1\n"
	                           "\x01\xff\x80 binary\n"
	                           "nameserver 192.0.2.5\r\n";
	union sockaddr_inany ns[3];

	CHECK(parse(text, ns, 3) == 1);
	CHECK(is_v4(&ns[0], "192.0.2.5"));
}

static void test_max_servers(void)
{
	static const char text[] = "nameserver 192.0.2.1\n"
	                           "nameserver 192.0.2.2\n"
	                           "nameserver 192.0.2.3\n"
	                           "nameserver 192.0.2.4\n"
	                           "nameserver 192.0.2.5\n";
	union sockaddr_inany ns[DNS_MAX_SERVERS + 1];

	memset(ns, 0, sizeof(ns));
	CHECK(parse(text, ns, DNS_MAX_SERVERS) == DNS_MAX_SERVERS);
	CHECK(is_v4(&ns[2], "192.0.2.3"));
	CHECK(ns[DNS_MAX_SERVERS].sa.sa_family == 0);
	CHECK(parse(text, ns, 1) == 1);
	CHECK(is_v4(&ns[0], "192.0.2.1"));
}

static void test_long_lines(void)
{
	size_t n = 100000;
	char *text = malloc(n + 64);
	union sockaddr_inany ns[3];

	if (!text) {
		CHECK(text != NULL);
		return;
	}
	/* An overlong address, then an overlong comment line. */
	memcpy(text, "nameserver ", 11);
	memset(text + 11, '1', n / 2);
	text[11 + n / 2] = '\n';
	memset(text + 12 + n / 2, '#', n / 2);
	strcpy(text + 12 + n, "\nnameserver 192.0.2.10\n");
	CHECK(parse(text, ns, 3) == 1);
	CHECK(is_v4(&ns[0], "192.0.2.10"));
	free(text);
}

static void test_no_trailing_newline_and_bounds(void)
{
	/* The length, not a NUL, ends the text: "…53" is cut to "…5". */
	static const char text[] = "nameserver 192.0.2.53";
	union sockaddr_inany ns[1];

	CHECK(dns_parse_resolv(text, sizeof(text) - 1, ns, 1) == 1);
	CHECK(is_v4(&ns[0], "192.0.2.53"));
	CHECK(dns_parse_resolv(text, sizeof(text) - 2, ns, 1) == 1);
	CHECK(is_v4(&ns[0], "192.0.2.5"));
	CHECK(dns_parse_resolv(text, 10, ns, 1) == 0);
}

static void test_empty(void)
{
	union sockaddr_inany ns[1];

	CHECK(dns_parse_resolv("", 0, ns, 1) == 0);
	CHECK(parse("\n\n\n", ns, 1) == 0);
	CHECK(parse("# only a comment", ns, 1) == 0);
	CHECK(parse("nameserver 192.0.2.1\n", ns, 0) == 0);
}

static void test_embedded_nul(void)
{
	static const char text[] = "nameserver 192.0.2.1\0junk\nnameserver "
	                           "192.0.2.2\n";
	union sockaddr_inany ns[2];

	CHECK(dns_parse_resolv(text, sizeof(text) - 1, ns, 2) == 2);
	CHECK(is_v4(&ns[0], "192.0.2.1"));
	CHECK(is_v4(&ns[1], "192.0.2.2"));
}

/**
 * resolves_at() - dns_host_resolves_at() for an address literal
 * @c:		context
 * @s:		IPv4 or IPv6 literal
 *
 * Return: its answer
 */
static bool resolves_at(struct ctx *c, const char *s)
{
	struct in6_addr a;
	struct in_addr v4;

	if (inet_pton(AF_INET, s, &v4) == 1)
		inany_from_v4(&a, v4);
	else
		inet_pton(AF_INET6, s, &a);
	return dns_host_resolves_at(c, &a);
}

/**
 * write_resolv() - replace the test's resolver file
 * @path:	the file
 * @text:	its new contents
 *
 * Return: true on success
 */
static bool write_resolv(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	return f && fputs(text, f) >= 0 && !fclose(f);
}

static void test_gateway_resolver(void)
{
	char path[] = "/tmp/tapir-test-resolv.XXXXXX";
	struct opts o = {0};
	struct ctx c = {0};
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	c.o = &o;
	c.resolv_conf = path;
	clock_set_fake(5000000000ULL);
	/* A home router as the host's resolver: the gateway is one. */
	CHECK(write_resolv(path, "nameserver 192.0.2.1\n"
	                         "nameserver 2001:db8::53\n"));
	CHECK(resolves_at(&c, "192.0.2.1"));
	CHECK(resolves_at(&c, "2001:db8::53"));
	CHECK(!resolves_at(&c, "192.0.2.2"));
	CHECK(!resolves_at(&c, "2001:db8::54"));
	/* systemd-resolved: a loopback resolver, whatever the gateway. */
	CHECK(write_resolv(path, "nameserver 127.0.0.53\n"));
	clock_advance(1000000000ULL);
	CHECK(resolves_at(&c, "192.0.2.2"));
	CHECK(write_resolv(path, "nameserver ::1\n"));
	clock_advance(1000000000ULL);
	CHECK(resolves_at(&c, "2001:db8::54"));
	/* A scoped link-local server is the gateway of that address. */
	CHECK(write_resolv(path, "nameserver fe80::1%1\n"));
	clock_advance(1000000000ULL);
	CHECK(resolves_at(&c, "fe80::1"));
	CHECK(!resolves_at(&c, "fe80::2"));
	CHECK(!resolves_at(&c, "192.0.2.1"));
	dns_cleanup(&c);
	clock_set_real();
	unlink(path);
}

const struct unit_case unit_cases[] = {
        {"plain nameserver lines", test_plain},
        {"comments, options and trailing text", test_comments_and_options},
        {"IPv6 and scope ids", test_ipv6_and_scope},
        {"scope id by interface name", test_scope_by_name},
        {"garbage lines are skipped", test_garbage},
        {"at most max servers", test_max_servers},
        {"very long lines", test_long_lines},
        {"no trailing newline, length bounds",
         test_no_trailing_newline_and_bounds},
        {"empty files", test_empty},
        {"embedded NUL", test_embedded_nul},
        {"the host's resolvers: the gateway's address, or loopback",
         test_gateway_resolver},
        {NULL, NULL},
};
