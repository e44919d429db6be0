// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the command line parsers of driver/front/cli.c */

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/core/inany.h"
#include "driver/front/cli.h"
#include "driver/host/tap.h"
#include "tests/unit/unit.h"

/* Large (PATH_MAX buffers, publish table): keep it off the stack. */
static struct opts o;

/**
 * argv_len() - number of entries before the NULL terminator
 * @argv:	NULL-terminated argument vector
 *
 * Return: the count
 */
static int argv_len(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

/**
 * parse() - run cli_parse() on a NULL-terminated vector
 * @mode:	attach or run
 * @argv:	arguments, argv[0] being the program or subcommand name
 *
 * Return: what cli_parse() returned; its errors go to stderr
 */
static int parse(enum cli_mode mode, char **argv)
{
	return cli_parse(argv_len(argv), argv, mode, &o);
}

/**
 * parse_quiet() - parse() with stdout (--help, --version) sent to /dev/null
 * @mode:	attach or run
 * @argv:	NULL-terminated arguments
 *
 * Return: what cli_parse() returned
 */
static int parse_quiet(enum cli_mode mode, char **argv)
{
	int out = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
	int ret;

	fflush(stdout);
	if (null >= 0)
		dup2(null, STDOUT_FILENO);
	ret = parse(mode, argv);
	fflush(stdout);
	if (out >= 0)
		dup2(out, STDOUT_FILENO);
	if (out >= 0)
		close(out);
	if (null >= 0)
		close(null);
	return ret;
}

/**
 * cidr_ok() - whether @s parses, and to @net/@prefix
 * @s:		input
 * @net:	expected network address, dotted quad
 * @prefix:	expected prefix length
 *
 * Return: true if it parsed to exactly that
 */
static bool cidr_ok(const char *s, const char *net, unsigned int prefix)
{
	struct in_addr got, want;
	unsigned int plen = 0;
	char why[256];

	inet_pton(AF_INET, net, &want);
	return !cli_parse_cidr(s, &got, &plen, why, sizeof(why)) &&
	       got.s_addr == want.s_addr && plen == prefix;
}

/**
 * cidr_error() - whether @s is refused with a reason starting with @prefix
 * @s:		input
 * @prefix:	expected start of the slirp4netns error text
 *
 * Return: true if refused with that text
 */
static bool cidr_error(const char *s, const char *prefix)
{
	struct in_addr net;
	unsigned int plen;
	char why[256] = "";

	return cli_parse_cidr(s, &net, &plen, why, sizeof(why)) == -1 &&
	       !strncmp(why, prefix, strlen(prefix));
}

/**
 * test_cidr_valid() - network addresses with prefixes 1..25 are accepted
 */
static void test_cidr_valid(void)
{
	CHECK(cidr_ok("10.0.2.0/24", "10.0.2.0", 24));
	CHECK(cidr_ok("10.0.135.128/25", "10.0.135.128", 25));
	CHECK(cidr_ok("10.0.7.0/24", "10.0.7.0", 24));
	CHECK(cidr_ok("192.168.0.0/16", "192.168.0.0", 16));
	CHECK(cidr_ok("128.0.0.0/1", "128.0.0.0", 1));
	CHECK(cidr_ok("0.0.0.0/8", "0.0.0.0", 8));
}

/**
 * test_cidr_errors() - each rule gives slirp4netns's message, in its order
 */
static void test_cidr_errors(void)
{
	CHECK(cidr_error("10.0.2.100/24",
	                 "CIDR needs to be a network address like "
	                 "10.0.2.0/24, not like 10.0.2.100/24"));
	CHECK(cidr_error("10.0.135.128/24", "CIDR needs to be a network"));
	CHECK(cidr_error("10.0.2.0/26", "prefix length needs to be 1-25"));
	CHECK(cidr_error("10.0.2.0/32", "prefix length needs to be 1-25"));
	CHECK(cidr_error("10.0.0.0/0", "prefix length needs to be 1-25"));
	CHECK(cidr_error("300.0.2.0/24", "invalid network address: 300.0.2.0"));
	/* The regex allows leading zeros, inet_pton() does not. */
	CHECK(cidr_error("010.0.2.0/24", "invalid network address"));
	/* The regex: four groups of 1-3 digits, a prefix of 1-2 digits. */
	CHECK(cidr_error("10.0.2.0", "invalid CIDR: 10.0.2.0"));
	CHECK(cidr_error("10.0.2.0/", "invalid CIDR"));
	CHECK(cidr_error("10.0.2.0/024", "invalid CIDR"));
	CHECK(cidr_error("10.0.2/24", "invalid CIDR"));
	CHECK(cidr_error("10.0.2.0.0/24", "invalid CIDR"));
	CHECK(cidr_error("10..2.0/24", "invalid CIDR"));
	CHECK(cidr_error("1000.0.2.0/24", "invalid CIDR"));
	CHECK(cidr_error("a.b.c.d/24", "invalid CIDR"));
	CHECK(cidr_error("10.0.2.0/2a", "invalid CIDR"));
	CHECK(cidr_error("10.0.2.0/24 ", "invalid CIDR"));
	CHECK(cidr_error(" 10.0.2.0/24", "invalid CIDR"));
	CHECK(cidr_error("10.0.2.0/-1", "invalid CIDR"));
	CHECK(cidr_error("", "invalid CIDR"));
	CHECK(cidr_error("/24", "invalid CIDR"));
	CHECK(cidr_error("255.255.255.255.255.255/24", "invalid CIDR"));
	CHECK(cidr_error("fd00::/64", "invalid CIDR"));
}

/**
 * test_mac() - six colon-separated hex pairs, nothing shorter or longer
 */
static void test_mac(void)
{
	const uint8_t want[6] = {0x02, 0x00, 0x00, 0xaa, 0xbb, 0xcc};
	uint8_t mac[6];

	CHECK(!cli_parse_mac("02:00:00:aa:bb:cc", mac));
	CHECK(!memcmp(mac, want, 6));
	CHECK(!cli_parse_mac("02:00:00:AA:BB:CC", mac));
	CHECK(!memcmp(mac, want, 6));
	CHECK(cli_parse_mac("02:00:00:aa:bb", mac) == -1);
	CHECK(cli_parse_mac("02:00:00:aa:bb:", mac) == -1);
	CHECK(cli_parse_mac("02:00:00:aa:bb:c", mac) == -1);
	CHECK(cli_parse_mac("02:00:00:aa:bb:cc:", mac) == -1);
	CHECK(cli_parse_mac("02:00:00:aa:bb:cc:dd", mac) == -1);
	CHECK(cli_parse_mac("2:0:0:aa:bb:cc", mac) == -1);
	CHECK(cli_parse_mac("02-00-00-aa-bb-cc", mac) == -1);
	CHECK(cli_parse_mac("02:00:00:aa:bb:cg", mac) == -1);
	CHECK(cli_parse_mac("", mac) == -1);
}

/**
 * publish_ok() - parse @s and compare with the expected forward
 * @s:		input
 * @udp:	expected protocol
 * @addr:	expected host address, dotted quad
 * @hport:	expected host port
 * @gport:	expected guest port
 *
 * Return: true if it parsed to exactly that
 */
static bool publish_ok(const char *s, bool udp, const char *addr,
                       uint16_t hport, uint16_t gport)
{
	struct in6_addr want = IN6ADDR_ANY_INIT;
	struct publish p;
	struct in_addr a;
	char why[256];

	if (inet_pton(AF_INET, addr, &a) == 1)
		inany_from_v4(&want, a);
	else if (addr[0] && inet_pton(AF_INET6, addr, &want) != 1)
		return false;
	return !cli_parse_publish(s, &p, why, sizeof(why)) && p.udp == udp &&
	       p.dual == !addr[0] &&
	       (!addr[0] || inany_equal(&p.host_addr, &want)) &&
	       p.host_port == hport && p.guest_port == gport;
}

/**
 * publish_bad() - whether @s is refused with a reason naming it
 * @s:		input
 *
 * Return: true if refused and the reason quotes @s
 */
static bool publish_bad(const char *s)
{
	struct publish p;
	char why[256] = "";

	return cli_parse_publish(s, &p, why, sizeof(why)) == -1 &&
	       strstr(why, "--publish") != NULL;
}

/**
 * test_publish() - [HOSTIP:]HOSTPORT:GUESTPORT[/tcp|/udp]
 */
static void test_publish(void)
{
	CHECK(publish_ok("8080:80", false, "", 8080, 80));
	CHECK(publish_ok("8080:80/tcp", false, "", 8080, 80));
	CHECK(publish_ok("5353:53/udp", true, "", 5353, 53));
	CHECK(publish_ok("0.0.0.0:8080:80", false, "0.0.0.0", 8080, 80));
	CHECK(publish_ok("[::1]:8080:80", false, "::1", 8080, 80));
	CHECK(publish_ok("[::]:53:53/udp", true, "::", 53, 53));
	CHECK(publish_ok("[fd18::1]:1:2", false, "fd18::1", 1, 2));
	CHECK(publish_ok("127.0.0.1:18081:80", false, "127.0.0.1", 18081, 80));
	CHECK(publish_ok("198.18.0.1:1:65535/udp", true, "198.18.0.1", 1,
	                 65535));
	CHECK(publish_bad("0:80"));
	CHECK(publish_bad("8080:0"));
	CHECK(publish_bad("65536:80"));
	CHECK(publish_bad("8080:65536"));
	CHECK(publish_bad("8080"));
	CHECK(publish_bad("8080:80/sctp"));
	CHECK(publish_bad("8080:80/"));
	CHECK(publish_bad(":80"));
	CHECK(publish_bad("8080:"));
	CHECK(publish_bad("-1:80"));
	CHECK(publish_bad("localhost:8080:80"));
	CHECK(publish_bad("::1:8080:80"));
	CHECK(publish_bad("[::1:8080:80"));
	CHECK(publish_bad("[]:8080:80"));
	CHECK(publish_bad("[127.0.0.1]:8080:80"));
	CHECK(publish_bad("[::ffff:127.0.0.1]:8080:80"));
	CHECK(publish_bad("[::1]8080:80"));
	CHECK(publish_bad("1.2.3.4:8080:80:90"));
	CHECK(publish_bad(""));
	CHECK(publish_bad("127.0.0.1:8080:80/tcp/"
	                  "udpxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
}

/**
 * test_auto_txqueuelen() - above the kernel's 1000, holds an 8 MiB window
 */
static void test_auto_txqueuelen(void)
{
	const unsigned int mtus[] = {68,   576,   1280,  1500,
	                             9000, 16384, 65520, 65521};
	unsigned int prev = ~0U;

	for (size_t i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++) {
		unsigned int q = tap_auto_txqueuelen(mtus[i]);
		unsigned int mss = mtus[i] > 576 ? mtus[i] - 40 : 536;

		CHECK(q >= 2048 && q <= 65536);
		CHECK(q % 256 == 0);
		/* A full window of MSS-sized frames fits the ring. */
		CHECK((unsigned long)q * mss >= 8UL << 20);
		/* Bigger frames never need a longer ring. */
		CHECK(q <= prev);
		prev = q;
	}
	CHECK(tap_auto_txqueuelen(1500) > 1000);
	CHECK(tap_auto_txqueuelen(65520) > 1000);
}

/**
 * test_auto_queues() - one queue per online CPU, 1..8 whatever sysconf says
 */
static void test_auto_queues(void)
{
	CHECK(cli_auto_queues(-1) == 1); /* sysconf failed */
	CHECK(cli_auto_queues(0) == 1);
	CHECK(cli_auto_queues(1) == 1);
	CHECK(cli_auto_queues(2) == 2);
	CHECK(cli_auto_queues(7) == 7);
	CHECK(cli_auto_queues(8) == 8);
	CHECK(cli_auto_queues(9) == 8);
	CHECK(cli_auto_queues(256) == 8);
}

/**
 * test_parse_defaults() - PID TAPNAME alone gives slirp4netns's defaults
 */
static void test_parse_defaults(void)
{
	char *argv[] = {"tapir", "42", "tap0", NULL};
	struct in_addr net;

	/* The suite's multi-queue pass sets it; the defaults are without. */
	unsetenv("TAPIR_QUEUES");
	inet_pton(AF_INET, "10.0.2.0", &net);
	CHECK(parse(CLI_ATTACH, argv) == 0);
	CHECK(o.mode == CLI_ATTACH);
	CHECK(o.netns_type == NETNS_PID && o.pid == 42);
	CHECK(!strcmp(o.ifname, "tap0"));
	CHECK(!o.configure && !o.ipv6 && !o.disable_host_loopback);
	CHECK(o.exit_fd == -1 && o.ready_fd == -1);
	CHECK(o.mtu == 1500);
	CHECK(o.net.s_addr == net.s_addr && o.prefix == 24);
	CHECK(o.offload && o.queues == 1 && o.txqueuelen == 0);
	CHECK(!o.api_socket[0] && !o.mac_set && o.npublish == 0);
}

/**
 * test_parse_rootlesskit() - the argv rootlesskit 1.1.0 was observed to pass
 */
static void test_parse_rootlesskit(void)
{
	char *argv[] = {"tapir",
	                "--mtu",
	                "9000",
	                "-r",
	                "3",
	                "--disable-host-loopback",
	                "--cidr",
	                "10.0.7.0/24",
	                "--api-socket",
	                "/tmp/rootlesskit123/.s4nn.sock",
	                "--enable-ipv6",
	                "8983",
	                "eth7",
	                NULL};
	struct in_addr net;

	inet_pton(AF_INET, "10.0.7.0", &net);
	CHECK(parse(CLI_ATTACH, argv) == 0);
	CHECK(o.mtu == 9000 && o.ready_fd == 3 && o.exit_fd == -1);
	CHECK(o.disable_host_loopback && o.ipv6 && !o.configure);
	CHECK(o.net.s_addr == net.s_addr && o.prefix == 24);
	CHECK(!strcmp(o.api_socket, "/tmp/rootlesskit123/.s4nn.sock"));
	CHECK(o.pid == 8983 && !strcmp(o.ifname, "eth7"));
}

/**
 * test_parse_permuted() - options after positionals, --opt=v, last wins
 */
static void test_parse_permuted(void)
{
	char *argv[] = {"tapir",
	                "-c",
	                "1234",
	                "--cidr",
	                "10.0.135.128/25",
	                "tap11",
	                "--mtu=65520",
	                "-m",
	                "65521",
	                "--offload=off",
	                "--queues",
	                "4",
	                "--txqueuelen=4000",
	                "-e",
	                "4",
	                NULL};

	CHECK(parse(CLI_ATTACH, argv) == 0);
	CHECK(o.configure && o.pid == 1234 && !strcmp(o.ifname, "tap11"));
	CHECK(o.prefix == 25 && o.mtu == 65521);
	CHECK(!o.offload && o.queues == 4 && o.txqueuelen == 4000);
	CHECK(o.exit_fd == 4);
}

/**
 * test_parse_path() - --netns-type=path takes an existing path
 */
static void test_parse_path(void)
{
	char *ok[] = {"tapir",
	              "--netns-type=path",
	              "/proc/self/ns/net",
	              "--userns-path=/proc/self/ns/user",
	              "tap0",
	              NULL};
	char *missing[] = {"tapir", "--netns-type",
	                   "path",  "/nonexistent/netns",
	                   "tap0",  NULL};
	char *userns[] = {"tapir", "--userns-path", "/nonexistent/userns",
	                  "42",    "tap0",          NULL};
	char *tapfd[] = {"tapir", "--netns-type=tapfd", "3", "tap0", NULL};

	CHECK(parse(CLI_ATTACH, ok) == 0);
	CHECK(o.netns_type == NETNS_PATH);
	CHECK(!strcmp(o.netns_path, "/proc/self/ns/net"));
	CHECK(!strcmp(o.userns_path, "/proc/self/ns/user"));
	CHECK(parse(CLI_ATTACH, missing) == -1);
	CHECK(parse(CLI_ATTACH, userns) == -1);
	CHECK(parse(CLI_ATTACH, tapfd) == -1);
}

/**
 * test_parse_errors() - bad values and missing arguments are refused
 */
static void test_parse_errors(void)
{
	char *bad[][5] = {
	        {"tapir", "--bogus", "1", "tap0", NULL},
	        {"tapir", "-m", "0", "1", "tap0"},
	        {"tapir", "-m", "67", "1", "tap0"},
	        {"tapir", "-m", "65522", "1", "tap0"},
	        {"tapir", "-m", "abc", "1", "tap0"},
	        {"tapir", "-m", "+1500", "1", "tap0"},
	        {"tapir", "-m", "1500x", "1", "tap0"},
	        {"tapir", "-r", "-1", "1", "tap0"},
	        {"tapir", "-e", "x", "1", "tap0"},
	        {"tapir", "--txqueuelen", "0", "1", "tap0"},
	        {"tapir", "--queues", "17", "1", "tap0"},
	        {"tapir", "--queues", "0", "1", "tap0"},
	        {"tapir", "--queues", "Auto", "1", "tap0"},
	        {"tapir", "--queues", "auto2", "1", "tap0"},
	        {"tapir", "--queues", "", "1", "tap0"},
	        {"tapir", "--offload", "yes", "1", "tap0"},
	        {"tapir", "--cidr", "10.0.2.100/24", "1", "tap0"},
	        {"tapir", "--macaddress", "02:00:00:aa:bb:cc", "1", "tap0"},
	        {"tapir", "-c", "--macaddress", "02:00:00:aa:bb", "1"},
	        {"tapir", "-c", "--macaddress=01:00:5e:00:00:01", "1", "tap0"},
	        {"tapir", "-c", "--macaddress=03:00:00:aa:bb:cc", "1", "tap0"},
	        {"tapir", "-c", "--macaddress=00:00:00:00:00:00", "1", "tap0"},
	        {"tapir", "-6", "--mtu=1279", "1", "tap0"},
	        {"tapir", "-p", "8080", "1", "tap0"},
	        {"tapir", "--outbound-addr", "no-such-if0", "1", "tap0"},
	        {"tapir", "0", "tap0", NULL, NULL},
	        {"tapir", "-5", "tap0", NULL, NULL},
	        {"tapir", "12a", "tap0", NULL, NULL},
	        {"tapir", "1", "tap0/x", NULL, NULL},
	        {"tapir", "1", "", NULL, NULL},
	        {"tapir", "1", "sixteen-chars-xx", NULL, NULL},
	        {"tapir", "1", NULL, NULL, NULL},
	        {"tapir", NULL, NULL, NULL, NULL},
	        {"tapir", "1", "tap0", "-m", NULL},
	};
	char *longest[] = {"tapir", "1", "fifteen-chars-x", NULL};
	char *ipv6_min[] = {"tapir", "-6", "--mtu=1280", "1", "tap0", NULL};
	char *unicast[] = {"tapir", "-c",   "--macaddress=02:00:00:aa:bb:cc",
	                   "1",     "tap0", NULL};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[6] = {0};
		int ret;

		memcpy(argv, bad[i], sizeof(bad[i]));
		ret = parse(CLI_ATTACH, argv);
		if (ret != -1)
			printf("#   accepted: %s %s %s %s\n", argv[1],
			       argv[2] ? argv[2] : "", argv[3] ? argv[3] : "",
			       argv[4] ? argv[4] : "");
		CHECK(ret == -1);
	}
	CHECK(parse(CLI_ATTACH, longest) == 0);
	CHECK(!strcmp(o.ifname, "fifteen-chars-x"));
	CHECK(parse(CLI_ATTACH, ipv6_min) == 0 && o.ipv6 && o.mtu == 1280);
	CHECK(parse(CLI_ATTACH, unicast) == 0 && o.mac_set);
}

/**
 * test_parse_api_socket_length() - sun_path holds at most 107 bytes
 */
static void test_parse_api_socket_length(void)
{
	char path[API_PATH_MAX + 1];
	char *argv[] = {"tapir", "-a", path, "1", "tap0", NULL};

	memset(path, 'x', sizeof(path));
	path[0] = '/';
	path[API_PATH_MAX - 1] = '\0'; /* 107 bytes: fits */
	CHECK(parse(CLI_ATTACH, argv) == 0);
	CHECK(strlen(o.api_socket) == API_PATH_MAX - 1);
	path[API_PATH_MAX - 1] = 'x';
	path[API_PATH_MAX] = '\0'; /* 108 bytes: refused */
	CHECK(parse(CLI_ATTACH, argv) == -1);
}

/**
 * test_parse_run() - run stops at the command and configures by default
 */
static void test_parse_run(void)
{
	char *dashes[] = {"run", "-m", "65520",  "--",
	                  "sh",  "-c", "exit 7", NULL};
	char *bare[] = {"run", "sh", "-c", "exit 7", NULL};
	char *nocmd[] = {"run", "-m", "1500", NULL};
	char *path[] = {"run", "--netns-type=path", "sh", NULL};

	CHECK(parse(CLI_RUN, dashes) == 0);
	CHECK(o.mode == CLI_RUN && o.configure && o.mtu == 65520);
	CHECK(!strcmp(o.ifname, "tap0"));
	CHECK(o.run_argv == dashes + 4);
	/* The command's own options stay its own. */
	CHECK(parse(CLI_RUN, bare) == 0);
	CHECK(o.run_argv == bare + 1 && o.mtu == 1500);
	CHECK(!strcmp(o.run_argv[1], "-c") && !strcmp(o.run_argv[2], "exit 7"));
	CHECK(parse(CLI_RUN, nocmd) == -1);
	CHECK(parse(CLI_RUN, path) == -1);
}

/**
 * test_parse_repeated() - a parse starts afresh whatever the previous one did
 *
 * getopt keeps state between calls; a run parse after an attach parse must
 * still stop at the command, and a cluster cut short by an error must not
 * leak into the next parse.
 */
static void test_parse_repeated(void)
{
	char *attach[] = {"tapir", "1", "tap0", "-c", NULL};
	char *cut[] = {"tapir", "-z6", "1", "tap0", NULL};
	char *cluster[] = {"tapir", "-6cm", NULL};
	char *plain[] = {"tapir", "1", "tap0", NULL};
	char *run[] = {"run", "sh", "-c", "exit 7", NULL};

	CHECK(parse(CLI_ATTACH, attach) == 0);
	CHECK(parse(CLI_RUN, run) == 0);
	CHECK(o.run_argv == run + 1 && !strcmp(o.run_argv[1], "-c"));
	/* Stops at 'z' with "6" still unread. */
	CHECK(parse(CLI_ATTACH, cut) == -1);
	CHECK(parse(CLI_ATTACH, plain) == 0);
	CHECK(!o.ipv6 && !o.configure && o.pid == 1);
	CHECK(parse(CLI_ATTACH, cluster) == -1);
	CHECK(parse(CLI_ATTACH, plain) == 0);
	CHECK(!o.ipv6 && !o.configure && o.mtu == 1500);
	CHECK(parse(CLI_RUN, run) == 0);
	CHECK(o.run_argv == run + 1);
}

/**
 * test_queues_env() - TAPIR_QUEUES is the default of --queues, which wins;
 *		       either may be "auto"; a bad value fails the parse
 */
static void test_queues_env(void)
{
	char *attach[] = {"tapir", "42", "tap0", NULL};
	char *flag[] = {"tapir", "--queues", "2", "42", "tap0", NULL};
	char *autoflag[] = {"tapir", "--queues=auto", "42", "tap0", NULL};
	char *help[] = {"tapir", "--help", NULL};
	char *run_help[] = {"run", "--help", NULL};
	unsigned int online = cli_auto_queues(sysconf(_SC_NPROCESSORS_ONLN));
	const char *saved = getenv("TAPIR_QUEUES");
	char *keep = saved ? strdup(saved) : NULL;

	setenv("TAPIR_QUEUES", "3", 1);
	CHECK(parse(CLI_ATTACH, attach) == 0 && o.queues == 3);
	CHECK(parse(CLI_ATTACH, flag) == 0 && o.queues == 2);
	setenv("TAPIR_QUEUES", "", 1);
	CHECK(parse(CLI_ATTACH, attach) == 0 && o.queues == 1);
	setenv("TAPIR_QUEUES", "17", 1);
	CHECK(parse(CLI_ATTACH, attach) == -1);
	setenv("TAPIR_QUEUES", "2x", 1);
	CHECK(parse(CLI_ATTACH, attach) == -1);
	setenv("TAPIR_QUEUES", "auto", 1);
	CHECK(parse(CLI_ATTACH, attach) == 0 && o.queues == online);
	CHECK(parse(CLI_ATTACH, flag) == 0 && o.queues == 2);
	setenv("TAPIR_QUEUES", "2", 1);
	CHECK(parse(CLI_ATTACH, autoflag) == 0 && o.queues == online);
	setenv("TAPIR_QUEUES", "autox", 1);
	CHECK(parse(CLI_ATTACH, attach) == -1);
	/* A bad value breaks neither --help nor an explicit --queues. */
	setenv("TAPIR_QUEUES", "99", 1);
	CHECK(parse_quiet(CLI_ATTACH, help) == CLI_EXIT_OK);
	CHECK(parse_quiet(CLI_RUN, run_help) == CLI_EXIT_OK);
	CHECK(parse(CLI_ATTACH, flag) == 0 && o.queues == 2);
	if (keep)
		setenv("TAPIR_QUEUES", keep, 1);
	else
		unsetenv("TAPIR_QUEUES");
	free(keep);
}

const struct unit_case unit_cases[] = {
        {"queues: TAPIR_QUEUES is the default, --queues wins", test_queues_env},
        {"cidr: network addresses, prefixes 1-25", test_cidr_valid},
        {"cidr: slirp4netns error texts", test_cidr_errors},
        {"mac: six hex pairs only", test_mac},
        {"publish: [HOSTIP:]HOSTPORT:GUESTPORT[/proto]", test_publish},
        {"txqueuelen: holds a full window, above 1000", test_auto_txqueuelen},
        {"queues: auto is the online CPUs, 1..8", test_auto_queues},
        {"parse: defaults", test_parse_defaults},
        {"parse: rootlesskit 1.1.0 argv", test_parse_rootlesskit},
        {"parse: permuted options, last wins", test_parse_permuted},
        {"parse: --netns-type=path", test_parse_path},
        {"parse: bad input refused", test_parse_errors},
        {"parse: API socket path under 108 bytes",
         test_parse_api_socket_length},
        {"parse: run stops at the command", test_parse_run},
        {"parse: repeated parses start afresh", test_parse_repeated},
        {NULL, NULL},
};
