// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: pasta's command line as its callers write it */

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "driver/front/cli.h"
#include "driver/front/pasta_cli.h"
#include "tests/unit/unit.h"

/* Large (four port tables, paths): keep it off the stack. */
static struct pasta_opts po;

/**
 * parse() - run pasta_cli_parse() on a NULL-terminated vector
 * @argv:	arguments, argv[0] being "pasta"
 *
 * Return: what pasta_cli_parse() returned
 */
static int parse(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return pasta_cli_parse(n, argv, &po);
}

/**
 * v4_is() - whether an address option holds @text for IPv4
 * @a:		option
 * @text:	dotted quad
 *
 * Return: true if so
 */
static bool v4_is(const struct pasta_addr *a, const char *text)
{
	struct in_addr want;

	return a->v4_set && inet_pton(AF_INET, text, &want) == 1 &&
	       a->v4.s_addr == want.s_addr;
}

static void test_rootlesskit_2_0(void)
{
	char *argv[] = {"pasta",
	                "--foreground",
	                "--stderr",
	                "--ns-ifname=tap0",
	                "--mtu=65520",
	                "--no-dhcp",
	                "--no-ra",
	                "--address=10.0.2.100",
	                "--netmask=24",
	                "--gateway=10.0.2.2",
	                "--dns-forward=10.0.2.3",
	                "--no-map-gw",
	                "--ipv4-only",
	                "--tcp-ports=none",
	                "--udp-ports=none",
	                "4242",
	                NULL};

	CHECK(parse(argv) == 0);
	CHECK(po.foreground && !po.config_net && po.no_dhcp && po.no_ra &&
	      po.no_map_gw && po.ipv4_only && !po.ipv6_only);
	CHECK(!strcmp(po.ifname, "tap0") && po.mtu == 65520);
	CHECK(v4_is(&po.addr, "10.0.2.100") && po.prefix4 == 24 &&
	      v4_is(&po.gw, "10.0.2.2") && v4_is(&po.dns_forward, "10.0.2.3"));
	CHECK(po.tcp.mode == PASTA_PORTS_NONE &&
	      po.udp.mode == PASTA_PORTS_NONE);
	/* Not given: the caller applies pasta's default, auto. */
	CHECK(po.tcp_ns.mode == PASTA_PORTS_UNSET &&
	      po.udp_ns.mode == PASTA_PORTS_UNSET);
	CHECK(po.pid == 4242 && !po.cmd && !po.netns[0]);
}

static void test_rootlesskit_2_3(void)
{
	char *argv[] = {"pasta",
	                "--stderr",
	                "--ns-ifname=tap0",
	                "--mtu=1500",
	                "--config-net",
	                "--address=10.0.2.100",
	                "--netmask=24",
	                "--gateway=10.0.2.2",
	                "--dns-forward=10.0.2.3",
	                "--ipv4-only",
	                "--tcp-ports=auto",
	                "--udp-ports=auto",
	                "--host-lo-to-ns-lo",
	                "--userns=/proc/4242/ns/user",
	                "--netns=/run/user/1000/rk/netns",
	                NULL};

	CHECK(parse(argv) == 0);
	CHECK(po.config_net && po.host_lo_to_ns_lo && !po.no_map_gw);
	CHECK(po.tcp.mode == PASTA_PORTS_AUTO &&
	      po.udp.mode == PASTA_PORTS_AUTO);
	CHECK(!strcmp(po.userns, "/proc/4242/ns/user") &&
	      !strcmp(po.netns, "/run/user/1000/rk/netns") && !po.pid);
}

static void test_podman(void)
{
	char *plain[] = {"pasta",
	                 "--config-net",
	                 "--dns-forward",
	                 "169.254.1.1",
	                 "-t",
	                 "none",
	                 "-u",
	                 "none",
	                 "-T",
	                 "none",
	                 "-U",
	                 "none",
	                 "--no-map-gw",
	                 "--quiet",
	                 "--netns",
	                 "/run/user/1000/netns/netns-1",
	                 "--map-guest-addr",
	                 "169.254.1.2",
	                 NULL};
	char *ports[] = {"pasta",
	                 "--config-net",
	                 "-t",
	                 "127.0.0.1/8080-8080:80-80",
	                 "-t",
	                 "8081-8081:80-80",
	                 "-u",
	                 "9000-9000:9999-9999",
	                 "--dns-forward",
	                 "169.254.1.1",
	                 "-T",
	                 "none",
	                 "-U",
	                 "none",
	                 "--no-map-gw",
	                 "--quiet",
	                 "--netns",
	                 "netns-1",
	                 "--map-guest-addr",
	                 "169.254.1.2",
	                 NULL};
	char *layout[] = {"pasta",
	                  "--config-net",
	                  "-a",
	                  "10.0.2.100",
	                  "-n",
	                  "24",
	                  "-g",
	                  "10.0.2.2",
	                  "--dns-forward",
	                  "10.0.2.3",
	                  "-m",
	                  "1500",
	                  "-t",
	                  "none",
	                  "-u",
	                  "none",
	                  "-T",
	                  "none",
	                  "-U",
	                  "none",
	                  "--no-map-gw",
	                  "--quiet",
	                  "--netns",
	                  "/run/n",
	                  "--map-guest-addr",
	                  "169.254.1.2",
	                  NULL};
	char *bridge[] = {"pasta",
	                  "--config-net",
	                  "--pid",
	                  "/run/user/1000/rootless-netns-conn.pid",
	                  "--dns-forward",
	                  "169.254.1.1",
	                  "-t",
	                  "none",
	                  "-u",
	                  "none",
	                  "-T",
	                  "none",
	                  "-U",
	                  "none",
	                  "--no-map-gw",
	                  "--quiet",
	                  "--netns",
	                  "/run/user/1000/rootless-netns",
	                  "--map-guest-addr",
	                  "169.254.1.2",
	                  NULL};

	CHECK(parse(plain) == 0 && po.config_net && po.quiet &&
	      v4_is(&po.dns_forward, "169.254.1.1") &&
	      v4_is(&po.map_guest, "169.254.1.2") &&
	      po.tcp_ns.mode == PASTA_PORTS_NONE &&
	      !strcmp(po.netns, "/run/user/1000/netns/netns-1"));
	CHECK(parse(ports) == 0 && po.tcp.n == 2 && po.tcp.r[0].addr_set &&
	      po.tcp.r[0].first == 8080 && po.tcp.r[0].target == 80 &&
	      po.udp.n == 1 && po.udp.r[0].target == 9999);
	/* A name, as with ip-netns(8). */
	CHECK(!strcmp(po.netns, "/run/netns/netns-1"));
	CHECK(parse(layout) == 0 && v4_is(&po.addr, "10.0.2.100") &&
	      po.prefix4 == 24 && po.mtu == 1500);
	CHECK(parse(bridge) == 0 &&
	      !strcmp(po.pidfile, "/run/user/1000/rootless-netns-conn.pid"));
}

static void test_more_options(void)
{
	char *argv[] = {"pasta",
	                "-d",
	                "-l",
	                "/tmp/x.log",
	                "--log-size",
	                "65536",
	                "--runas",
	                "1000:1001",
	                "-p",
	                "/tmp/x.pcap",
	                "-M",
	                "02:aa:bb:cc:dd:ee",
	                "--ns-mac-addr=02:11:22:33:44:55",
	                "-i",
	                "eth1",
	                "-o",
	                "192.0.2.9",
	                "-o",
	                "2001:db8::9",
	                "--outbound-if6",
	                "eth2",
	                "-D",
	                "192.0.2.53",
	                "-D",
	                "2001:db8::53",
	                "--no-dhcp-dns",
	                "--dhcp-dns",
	                "-S",
	                "a.test b.test.",
	                "--dhcp-search",
	                "-H",
	                "guest",
	                "--fqdn",
	                "guest.a.test",
	                "--dns-host",
	                "192.0.2.1",
	                "--no-tcp",
	                "--no-udp",
	                "--no-icmp",
	                "--freebind",
	                "--netns-only",
	                "--no-netns-quit",
	                "--config-net",
	                "--no-copy-routes",
	                "--no-copy-addrs",
	                "--no-splice",
	                "--trace",
	                "-m",
	                "0",
	                "4242",
	                NULL};
	char *none[] = {"pasta", "-D",   "192.0.2.53", "-D", "none",
	                "-S",    "none", "1",          NULL};
	static const uint8_t search[] = "\1a\4test\0\1b\4test";
	static const uint8_t fqdn[] = "\5guest\1a\4test";

	CHECK(parse(argv) == 0);
	CHECK(po.debug && !strcmp(po.log_file, "/tmp/x.log") &&
	      po.log_size == 65536);
	CHECK(po.runas && po.runas_uid == 1000 && po.runas_gid == 1001);
	CHECK(!strcmp(po.pcap, "/tmp/x.pcap"));
	CHECK(po.mac_set && po.mac[0] == 0x02 && po.mac[5] == 0xee);
	CHECK(po.ns_mac_set && po.ns_mac[1] == 0x11 && po.ns_mac[5] == 0x55);
	CHECK(!strcmp(po.ifname_copy, "eth1") &&
	      !strcmp(po.outbound_if6, "eth2") && !po.outbound_if4[0]);
	CHECK(v4_is(&po.outbound, "192.0.2.9") && po.outbound.v6_set);
	CHECK(po.n_dns4 == 1 && po.n_dns6 == 1 && !po.dns_none && po.dhcp_dns);
	CHECK(po.search_len == sizeof(search) &&
	      !memcmp(po.search, search, sizeof(search)) && po.dhcp_search);
	CHECK(!strcmp(po.hostname, "guest"));
	CHECK(po.fqdn_len == sizeof(fqdn) &&
	      !memcmp(po.fqdn, fqdn, sizeof(fqdn)));
	CHECK(v4_is(&po.dns_host, "192.0.2.1"));
	CHECK(po.no_tcp && po.no_udp && po.no_icmp && po.freebind);
	CHECK(po.netns_only && po.no_netns_quit && po.no_copy_routes &&
	      po.no_copy_addrs && po.no_splice && po.mtu == 0);
	/* A disabled protocol forwards nothing, over pasta's "auto". */
	CHECK(po.tcp.mode == PASTA_PORTS_NONE &&
	      po.tcp_ns.mode == PASTA_PORTS_NONE &&
	      po.udp.mode == PASTA_PORTS_NONE &&
	      po.udp_ns.mode == PASTA_PORTS_NONE);
	/* "none" clears -D and -S; the defaults are back. */
	CHECK(parse(none) == 0);
	CHECK(po.dns_none && !po.n_dns4 && !po.search_len);
	CHECK(po.log_size == PASTA_LOG_SIZE_DEFAULT && !po.dhcp_dns);
}

static void test_command_and_probes(void)
{
	char *bench[] = {"pasta",      "--config-net", "-a",
	                 "10.0.2.100", "-n",           "255.255.255.0",
	                 "-g",         "10.0.2.2",     "--mtu",
	                 "65520",      "--",           "iperf3",
	                 "-s",         "-1",           NULL};
	char *bare[] = {"pasta", "-f", "sh", "-c", "true", NULL};
	char *probe[] = {"pasta", "--host-lo-to-ns-lo", "--version", NULL};
	char *help[] = {"pasta", "--help", NULL};
	int out = dup(STDOUT_FILENO);
	FILE *null = freopen("/dev/null", "w", stdout);

	CHECK(parse(bench) == 0 && po.prefix4 == 24 && po.cmd &&
	      !strcmp(po.cmd[0], "iperf3") && !strcmp(po.cmd[2], "-1"));
	CHECK(parse(bare) == 0 && po.foreground && po.cmd &&
	      !strcmp(po.cmd[0], "sh"));
	CHECK(parse(probe) == CLI_EXIT_OK && po.version && po.host_lo_to_ns_lo);
	CHECK(parse(help) == CLI_EXIT_OK);
	fflush(stdout);
	CHECK(null && out >= 0 && dup2(out, STDOUT_FILENO) == STDOUT_FILENO);
	close(out);
}

/**
 * v6_is() - whether an address option holds @text for IPv6
 * @a:		option
 * @text:	IPv6 address
 *
 * Return: true if so
 */
static bool v6_is(const struct pasta_addr *a, const char *text)
{
	struct in6_addr want;

	return a->v6_set && inet_pton(AF_INET6, text, &want) == 1 &&
	       !memcmp(&a->v6, &want, sizeof(want));
}

static void test_ipv6_values(void)
{
	char *argv[] = {"pasta",      "-a",
	                "fd00::5",    "-g",
	                "fd00::1",    "--dns-forward",
	                "fd00::53",   "--dns-forward",
	                "10.0.2.3",   "--map-guest-addr",
	                "fd00:1::99", "--map-host-loopback",
	                "fd00:1::2",  "-6",
	                "1",          NULL};

	CHECK(parse(argv) == 0 && v6_is(&po.addr, "fd00::5") &&
	      !po.addr.v4_set && v6_is(&po.gw, "fd00::1") &&
	      v6_is(&po.dns_forward, "fd00::53") &&
	      v4_is(&po.dns_forward, "10.0.2.3") &&
	      v6_is(&po.map_guest, "fd00:1::99") &&
	      v6_is(&po.map_host_lo, "fd00:1::2") && po.ipv6_only &&
	      po.prefix4 == -1);
}

/**
 * refused_body() - bad command lines: -1, and one line on stderr that
 *		    names what is wrong
 */
static void refused_body(void)
{
	static const struct {
		const char *args[6];
		const char *says;
	} bad[] = {
	        {{"--config-netx", "1"}, "unrecognized option '--config-netx'"},
	        {{"--map-guest-addrs", "x", "1"},
	         "unrecognized option '--map-guest-addrs'"},
	        {{"-x", "1"}, "unrecognized option '-x'"},
	        {{"-t"}, "option '-t' requires an argument"},
	        {{"-t", "0", "1"}, "-t 0: port '0' is out of range"},
	        {{"-u", "8080:80-81", "1"}, "not as long"},
	        {{"-a", "10.0.2.300", "1"}, "-a: bad address \"10.0.2.300\""},
	        {{"-a", "10.0.2.1", "-a", "10.0.2.2", "1"}, "given twice"},
	        {{"-n", "255.0.255.0", "1"}, "bad netmask"},
	        {{"-m", "65521", "1"}, "MTU must be an integer in 68..65520"},
	        {{"--quiet"}, "missing PID, --netns or command"},
	        {{"--netns", "/run/n", "42"},
	         "--netns can't be given with a PID"},
	        {{"-4", "-6", "1"}, "-4 and -6 can't be given together"},
	        {{"-4", "-a", "fd00::1", "1"}, "turned off"},
	        {{"-I", "a/b", "1"}, "bad interface name"},
	        {{"--map-guest-addr", "none", "--map-guest-addr", "1.2.3.4",
	          "1"},
	         "\"none\" and an address"},
	        {{"-n", "24", "-n", "16", "1"}, "-n: given twice"},
	        {{"-6", "-n", "24", "1"}, "turned off"},
	        /* -n is IPv4's: pasta says "Invalid netmask: 64". */
	        {{"-a", "fd00::5", "-n", "64", "1"}, "-n: bad netmask \"64\""},
	        {{"-I", "..", "1"}, "bad interface name"},
	        {{"--", ""}, "empty command"},
	        {{"-a", "0.0.0.0", "1"}, "can't be used"},
	        {{"-g", "::ffff:10.0.2.2", "1"}, "can't be used"},
	        {{"--dns-forward", "ff02::1", "1"}, "can't be used"},
	        /* Mid-cluster, glibc's optind still names the argument
	         * before: the message names the letter. */
	        {{"-I", "eth0", "-Zq", "1"}, "unrecognized option '-Z'"},
	        /* pasta(1)'s other options: a bad value, passt's own. */
	        {{"--socket", "/x", "1"}, "--socket: passt's"},
	        {{"-1", "1"}, "-1: passt's"},
	        {{"--vhost-user", "1"}, "--vhost-user: passt's"},
	        {{"--log-size", "40959", "1"}, "--log-size: bytes, at least"},
	        {{"-M", "03:00:00:00:00:01", "1"}, "multicast or zero"},
	        {{"--ns-mac-addr", "02:00:00:00:00", "1"}, "bad MAC address"},
	        {{"-S", "a.test -b.test", "1"}, "is no domain name"},
	        {{"-S", "none", "-H", "a..b", "1"}, "-H: \"a..b\" is no host"},
	        {{"--fqdn", "a.", "--fqdn", "", "1"}, "--fqdn: \"\" is no"},
	        {{"--runas", "0:no-such-group-here", "1"}, "--runas"},
	        {{"--no-tcp", "-T", "80", "1"}, "TCP is disabled"},
	        {{"--no-udp", "-u", "auto", "1"}, "UDP is disabled"},
	        {{"--no-copy-addrs", "1"}, "needs --config-net"},
	        {{"--netns-only", "--", "sh"}, "--netns-only can't be given"},
	        {{"-m", "67", "1"}, "or 0"},
	        {{"-o", "::", "1"}, "-o: \"::\" can't be used"},
	        {{"--outbound-if4", "a b", "1"}, "bad interface name"},
	};
	int err = unit_capture_stderr();

	CHECK(err >= 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[8] = {"pasta"}, text[512];
		ssize_t n;
		int argc = 1;

		for (int a = 0; a < 6 && bad[i].args[a]; a++)
			argv[argc++] = (char *)bad[i].args[a];
		CHECK(pasta_cli_parse(argc, argv, &po) == -1);
		n = read(err, text, sizeof(text) - 1);
		text[n > 0 ? n : 0] = '\0';
		if (n <= 0 || !strstr(text, bad[i].says) ||
		    strchr(text, '\n') != text + n - 1) {
			printf("#   case %zu: \"%s\"\n", i, text);
			CHECK(!"one line naming the fault");
		}
	}
	close(err);
}

static void test_refused(void)
{
	CHECK(unit_netns_run(refused_body));
}

const struct unit_case unit_cases[] = {
        {"rootlesskit 2.0.2's command line", test_rootlesskit_2_0},
        {"rootlesskit 2.3's command line, --userns and --netns",
         test_rootlesskit_2_3},
        {"podman 5.4's command lines: plain, ports, -a layout, bridge",
         test_podman},
        {"a command to run, --version and --help probes",
         test_command_and_probes},
        {"pasta(1)'s other options, each value kept as checked",
         test_more_options},
        {"IPv6 values of -a, -g, --dns-forward, --map-guest-addr and "
         "--map-host-loopback, next to IPv4 ones",
         test_ipv6_values},
        {"bad command lines: one line naming the fault, in getopt's words "
         "for options",
         test_refused},
        {NULL, NULL},
};
