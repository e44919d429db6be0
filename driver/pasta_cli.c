// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - pasta's command line, as podman, rootlesskit and Docker write it
 *
 * Options keep pasta(1)'s names, forms (long and short, --opt=value and
 * --opt value) and meanings; ../shared/reference/pasta-contract.md lists
 * what each caller passes. An option tapir does not take fails in
 * getopt's words, "unrecognized option '--X'", which podman reacts to
 * (it retries without --map-guest-addr). Nothing is silently ignored but
 * --stderr, which pasta itself ignores.
 */

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "cli.h"
#include "log.h"
#include "pasta_cli.h"

enum {
	OPT_CONFIG_NET = 256,
	OPT_NO_DHCP,
	OPT_NO_DHCPV6,
	OPT_NO_NDP,
	OPT_NO_RA,
	OPT_NO_MAP_GW,
	OPT_DNS_FORWARD,
	OPT_MAP_GUEST_ADDR,
	OPT_MAP_HOST_LOOPBACK,
	OPT_HOST_LO_TO_NS_LO,
	OPT_NETNS,
	OPT_USERNS,
	OPT_VERSION,
};

static const struct option long_opts[] = {
        {"config-net", no_argument, NULL, OPT_CONFIG_NET},
        {"foreground", no_argument, NULL, 'f'},
        {"stderr", no_argument, NULL, 'e'},
        {"quiet", no_argument, NULL, 'q'},
        {"ns-ifname", required_argument, NULL, 'I'},
        {"mtu", required_argument, NULL, 'm'},
        {"address", required_argument, NULL, 'a'},
        {"netmask", required_argument, NULL, 'n'},
        {"gateway", required_argument, NULL, 'g'},
        {"ipv4-only", no_argument, NULL, '4'},
        {"ipv6-only", no_argument, NULL, '6'},
        {"no-dhcp", no_argument, NULL, OPT_NO_DHCP},
        {"no-dhcpv6", no_argument, NULL, OPT_NO_DHCPV6},
        {"no-ndp", no_argument, NULL, OPT_NO_NDP},
        {"no-ra", no_argument, NULL, OPT_NO_RA},
        {"no-map-gw", no_argument, NULL, OPT_NO_MAP_GW},
        {"dns-forward", required_argument, NULL, OPT_DNS_FORWARD},
        {"map-guest-addr", required_argument, NULL, OPT_MAP_GUEST_ADDR},
        {"map-host-loopback", required_argument, NULL, OPT_MAP_HOST_LOOPBACK},
        {"host-lo-to-ns-lo", no_argument, NULL, OPT_HOST_LO_TO_NS_LO},
        {"tcp-ports", required_argument, NULL, 't'},
        {"udp-ports", required_argument, NULL, 'u'},
        {"tcp-ns", required_argument, NULL, 'T'},
        {"udp-ns", required_argument, NULL, 'U'},
        {"netns", required_argument, NULL, OPT_NETNS},
        {"userns", required_argument, NULL, OPT_USERNS},
        {"pid", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
};

static const char usage_text[] =
        "Usage: pasta [OPTION]... PID\n"
        "       pasta [OPTION]... --netns PATH|NAME [--userns PATH]\n"
        "       pasta [OPTION]... [--] COMMAND [ARG]...\n"
        "tapir, run as pasta: pasta's options and meanings, tapir's "
        "datapath.\n"
        "\n"
        "  --config-net             configure the namespace's interface\n"
        "  -f, --foreground         don't fork to the background\n"
        "  -e, --stderr             no effect (as in pasta)\n"
        "  -q, --quiet              no informational messages\n"
        "  -I, --ns-ifname NAME     interface name in the namespace\n"
        "  -m, --mtu MTU            MTU, 68..65520 (default 65520)\n"
        "  -a, --address ADDR       guest address, IPv4 and/or IPv6\n"
        "  -n, --netmask MASK       IPv4 prefix length or netmask\n"
        "  -g, --gateway ADDR       gateway, IPv4 and/or IPv6\n"
        "  -4, --ipv4-only          IPv4 only\n"
        "  -6, --ipv6-only          IPv6 only: refused, tapir always serves\n"
        "                           IPv4\n"
        "  --no-dhcp, --no-dhcpv6, --no-ndp, --no-ra\n"
        "                           don't answer those\n"
        "  --no-map-gw              the gateway is not the host's loopback\n"
        "  --dns-forward ADDR       DNS to ADDR goes to the host's resolver\n"
        "  --map-guest-addr ADDR|none\n"
        "                           ADDR reaches the host's own address\n"
        "  --map-host-loopback ADDR|none\n"
        "                           ADDR reaches the host's loopback\n"
        "  --host-lo-to-ns-lo       host loopback clients reach the "
        "namespace's\n"
        "                           loopback\n"
        "  -t, --tcp-ports SPEC     TCP forwards, host to namespace\n"
        "  -u, --udp-ports SPEC     UDP forwards, host to namespace\n"
        "  -T, --tcp-ns SPEC        TCP forwards, namespace to host "
        "loopback\n"
        "  -U, --udp-ns SPEC        UDP forwards, namespace to host "
        "loopback\n"
        "                           SPEC: none, auto, all or\n"
        "                           [ADDR/]PORT[-PORT][:PORT[-PORT]][,...]\n"
        "                           (ADDR: -t and -u only), ~PORT[-PORT]\n"
        "                           excludes\n"
        "  --netns PATH|NAME        join this network namespace\n"
        "  --userns PATH            join this user namespace\n"
        "  -P, --pid FILE           write the PID to FILE once set up\n"
        "  -h, --help               this text\n"
        "  --version                version\n";

/**
 * pasta_cli_usage() - print what pasta mode takes
 * @f:		stream
 */
void pasta_cli_usage(FILE *f)
{
	fputs(usage_text, f);
}

/**
 * parse_addr() - an address option's value, once per family
 * @name:	option, for messages
 * @s:		value, untrusted
 * @a:		the option's addresses so far
 *
 * Return: 0, or -1 after one error line
 */
static int parse_addr(const char *name, const char *s, struct pasta_addr *a)
{
	struct in6_addr v6;
	struct in_addr v4;

	if (inet_pton(AF_INET, s, &v4) == 1) {
		if (!v4.s_addr || IN_MULTICAST(ntohl(v4.s_addr)) ||
		    v4.s_addr == INADDR_BROADCAST)
			goto unusable;
		if (a->v4_set)
			goto twice;
		a->v4_set = true;
		a->v4 = v4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &v6) == 1) {
		/* tapir holds IPv4 as ::ffff:0:0/96: such an IPv6 address
		 * would be taken for IPv4 (inany.h). */
		if (IN6_IS_ADDR_UNSPECIFIED(&v6) ||
		    IN6_IS_ADDR_MULTICAST(&v6) || IN6_IS_ADDR_V4MAPPED(&v6))
			goto unusable;
		if (a->v6_set)
			goto twice;
		a->v6_set = true;
		a->v6 = v6;
		return 0;
	}
	err_msg("%s: bad address \"%s\"", name, s);
	return -1;
twice:
	err_msg("%s: given twice for one IP version (\"%s\")", name, s);
	return -1;
unusable:
	err_msg("%s: \"%s\" can't be used: unspecified, multicast, broadcast "
	        "or IPv4-mapped",
	        name, s);
	return -1;
}

/**
 * parse_addr_or_none() - an address option that also takes "none"
 * @name:	option, for messages
 * @s:		value, untrusted
 * @a:		the option's addresses so far
 * @none:	set for "none"
 *
 * Return: 0, or -1 after one error line
 */
static int parse_addr_or_none(const char *name, const char *s,
                              struct pasta_addr *a, bool *none)
{
	if (strcmp(s, "none"))
		return parse_addr(name, s, a);
	*none = true;
	return 0;
}

/**
 * parse_netmask() - -n as a prefix length (0..32) or a dotted netmask
 * @s:		value, untrusted
 * @prefix:	set to the length
 *
 * Return: 0, or -1 after one error line
 */
static int parse_netmask(const char *s, int *prefix)
{
	unsigned long v;
	struct in_addr m;
	uint32_t h;

	if (*prefix >= 0) {
		err_msg("-n: given twice (\"%s\")", s);
		return -1;
	}
	if (!cli_parse_uint(s, 0, 32, &v)) {
		*prefix = (int)v;
		return 0;
	}
	if (inet_pton(AF_INET, s, &m) == 1) {
		h = ntohl(m.s_addr);
		/* Contiguous: the inverse plus one is a power of two. */
		if (!((~h + 1) & ~h)) {
			*prefix = __builtin_popcount(h);
			return 0;
		}
	}
	err_msg("-n: bad netmask \"%s\": a prefix length 0..32 or a "
	        "contiguous dotted mask",
	        s);
	return -1;
}

/**
 * parse_ports() - one -t/-u/-T/-U spec
 * @opt:	the option's letter, for messages
 * @s:		spec, untrusted
 * @pp:		the option's ranges so far
 *
 * Return: 0, or -1 after one error line
 */
static int parse_ports(char opt, const char *s, struct pasta_ports *pp)
{
	char why[160];

	if (!pasta_ports_parse(pp, s, why, sizeof(why)))
		return 0;
	err_msg("-%c %.64s: %s", opt, s, why);
	return -1;
}

/**
 * parse_path() - a path option's value
 * @name:	option, for messages
 * @s:		value, untrusted
 * @out:	PATH_MAX bytes
 *
 * Return: 0, or -1 after one error line
 */
static int parse_path(const char *name, const char *s, char *out)
{
	if (!*s || strlen(s) >= PATH_MAX) {
		err_msg("%s: bad path \"%.64s\"", name, s);
		return -1;
	}
	strcpy(out, s);
	return 0;
}

/**
 * parse_netns() - --netns PATH, or a NAME as ip-netns(8) has it
 * @s:		value, untrusted
 * @out:	PATH_MAX bytes
 *
 * Return: 0, or -1 after one error line
 */
static int parse_netns(const char *s, char *out)
{
	if (strchr(s, '/'))
		return parse_path("--netns", s, out);
	if (!*s || strlen(s) > NAME_MAX || !strcmp(s, ".") ||
	    !strcmp(s, "..")) {
		err_msg("--netns: bad name \"%.64s\"", s);
		return -1;
	}
	snprintf(out, PATH_MAX, "/run/netns/%s", s);
	return 0;
}

/**
 * parse_flag() - an option without an argument
 * @po:		options being built
 * @c:		its code
 *
 * Return: 0, or 1 if @c is not one
 */
static int parse_flag(struct pasta_opts *po, int c)
{
	switch (c) {
	case OPT_CONFIG_NET:
		po->config_net = true;
		break;
	case 'f':
		po->foreground = true;
		break;
	case 'e':
		/* Deprecated in pasta, where it has no effect either. */
		break;
	case 'q':
		po->quiet = true;
		break;
	case '4':
		po->ipv4_only = true;
		break;
	case '6':
		po->ipv6_only = true;
		break;
	case OPT_NO_DHCP:
		po->no_dhcp = true;
		break;
	case OPT_NO_DHCPV6:
		po->no_dhcpv6 = true;
		break;
	case OPT_NO_NDP:
		po->no_ndp = true;
		break;
	case OPT_NO_RA:
		po->no_ra = true;
		break;
	case OPT_NO_MAP_GW:
		po->no_map_gw = true;
		break;
	case OPT_HOST_LO_TO_NS_LO:
		po->host_lo_to_ns_lo = true;
		break;
	default:
		return 1;
	}
	return 0;
}

/**
 * parse_value() - an option with an argument
 * @po:		options being built
 * @c:		its code
 * @arg:	its argument, untrusted
 *
 * Return: 0, or -1 after one error line
 */
static int parse_value(struct pasta_opts *po, int c, const char *arg)
{
	unsigned long v;

	switch (c) {
	case 'I':
		if (!*arg || strlen(arg) >= IFNAMSIZ ||
		    strpbrk(arg, "/: \t\n") || !strcmp(arg, ".") ||
		    !strcmp(arg, "..")) {
			err_msg("-I: bad interface name \"%.32s\"", arg);
			return -1;
		}
		strcpy(po->ifname, arg);
		return 0;
	case 'm':
		if (cli_parse_uint(arg, 68, PASTA_MTU_MAX, &v)) {
			err_msg("-m: MTU must be an integer in 68..%d, not "
			        "\"%s\"",
			        PASTA_MTU_MAX, arg);
			return -1;
		}
		po->mtu = (unsigned int)v;
		return 0;
	case 'a':
		return parse_addr("-a", arg, &po->addr);
	case 'n':
		return parse_netmask(arg, &po->prefix4);
	case 'g':
		return parse_addr("-g", arg, &po->gw);
	case OPT_DNS_FORWARD:
		return parse_addr("--dns-forward", arg, &po->dns_forward);
	case OPT_MAP_GUEST_ADDR:
		return parse_addr_or_none("--map-guest-addr", arg,
		                          &po->map_guest, &po->map_guest_none);
	case OPT_MAP_HOST_LOOPBACK:
		return parse_addr_or_none("--map-host-loopback", arg,
		                          &po->map_host_lo,
		                          &po->map_host_lo_none);
	case 't':
		return parse_ports('t', arg, &po->tcp);
	case 'u':
		return parse_ports('u', arg, &po->udp);
	case 'T':
		return parse_ports('T', arg, &po->tcp_ns);
	case 'U':
		return parse_ports('U', arg, &po->udp_ns);
	case OPT_NETNS:
		return parse_netns(arg, po->netns);
	case OPT_USERNS:
		return parse_path("--userns", arg, po->userns);
	case 'P':
		return parse_path("-P", arg, po->pidfile);
	default:
		err_msg("unhandled option %d", c);
		return -1;
	}
}

/**
 * parse_target() - the positional arguments: a PID, or a command
 * @po:		options, all parsed
 * @argc:	positional argument count
 * @argv:	positional arguments
 *
 * A lone number is a PID, as pasta takes it; anything else is a command.
 *
 * Return: 0, or -1 after one error line
 */
static int parse_target(struct pasta_opts *po, int argc, char **argv)
{
	unsigned long v;

	if (argc == 1 && !cli_parse_uint(argv[0], 1, INT_MAX, &v))
		po->pid = (pid_t)v;
	else if (argc && !argv[0][0]) {
		err_msg("empty command");
		return -1;
	} else if (argc)
		po->cmd = argv;
	if ((po->pid || po->cmd) && po->netns[0]) {
		err_msg("--netns can't be given with a %s",
		        po->pid ? "PID" : "command");
		return -1;
	}
	if (!po->pid && !po->cmd && !po->netns[0]) {
		err_msg("missing PID, --netns or command: which namespace?");
		return -1;
	}
	return 0;
}

/**
 * check_combinations() - what pasta refuses across options
 * @po:		options, all parsed
 *
 * Return: 0, or -1 after one error line
 */
static int check_combinations(const struct pasta_opts *po)
{
	if (po->ipv4_only && po->ipv6_only) {
		err_msg("-4 and -6 can't be given together");
		return -1;
	}
	if ((po->ipv4_only && (po->addr.v6_set || po->gw.v6_set)) ||
	    (po->ipv6_only &&
	     (po->addr.v4_set || po->gw.v4_set || po->prefix4 >= 0))) {
		err_msg("-a, -g or -n of an IP version that -4 or -6 turned "
		        "off");
		return -1;
	}
	if (po->map_guest_none &&
	    (po->map_guest.v4_set || po->map_guest.v6_set))
		goto none_and_addr;
	if (po->map_host_lo_none &&
	    (po->map_host_lo.v4_set || po->map_host_lo.v6_set))
		goto none_and_addr;
	return 0;
none_and_addr:
	err_msg("\"none\" and an address given to one --map option");
	return -1;
}

/**
 * pasta_cli_parse() - parse and validate pasta's whole command line
 * @argc:	argument count, the program name included
 * @argv:	arguments
 * @po:		filled on success
 *
 * Options stop at the first positional argument, so a command's own
 * options are left to it.
 *
 * Return: 0, CLI_EXIT_OK after --help (printed) or --version (po->version
 *	   set, not printed), or -1 after exactly
 *	   one error line
 */
int pasta_cli_parse(int argc, char **argv, struct pasta_opts *po)
{
	int c;

	memset(po, 0, sizeof(*po));
	po->prefix4 = -1;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:feqI:m:a:n:g:46t:u:T:U:P:h",
	                        long_opts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			cli_getopt_error(c, argv[optind - 1], "tapir pasta");
			return -1;
		}
		if (c == 'h') {
			pasta_cli_usage(stdout);
			return CLI_EXIT_OK;
		}
		/* Printed by the caller, after what came before is judged:
		 * rootlesskit probes "--host-lo-to-ns-lo --version".
		 */
		if (c == OPT_VERSION) {
			po->version = true;
			return CLI_EXIT_OK;
		}
		if (parse_flag(po, c) && parse_value(po, c, optarg))
			return -1;
	}
	if (check_combinations(po))
		return -1;
	return parse_target(po, argc - optind, argv + optind);
}
