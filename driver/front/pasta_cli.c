// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - pasta's command line, as podman, rootlesskit and Docker write it
 *
 * Options keep pasta(1)'s names, forms (long and short, --opt=value and
 * --opt value) and meanings; ../shared/reference/pasta-contract.md lists
 * what each caller passes. Every option of pasta(1) (Debian 13's) is
 * taken, since podman passes containers.conf's pasta_options as they are
 * and an unknown one keeps the container from starting; tapir(1) says
 * what each does here (tests/pasta.bats checks the list against pasta's
 * man page). passt's own options (qemu's socket) fail with one line, as in
 * pasta, and anything else in getopt's words, "unrecognized option
 * '--X'", which podman reacts to (it retries without --map-guest-addr).
 * Every value is checked here; what needs the system (names, interfaces)
 * is looked up when the options are applied (pasta_apply.c).
 */

#include <ctype.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "driver/front/cli.h"
#include "driver/core/log.h"
#include "driver/core/parse.h"
#include "driver/front/pasta_cli.h"
#include "driver/front/pasta_ports.h"

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
	OPT_TRACE,
	OPT_LOG_SIZE,
	OPT_RUNAS,
	OPT_OUTBOUND_IF4,
	OPT_OUTBOUND_IF6,
	OPT_DNS_HOST,
	OPT_NO_DHCP_DNS,
	OPT_DHCP_DNS,
	OPT_NO_DHCP_SEARCH,
	OPT_DHCP_SEARCH,
	OPT_NO_TCP,
	OPT_NO_UDP,
	OPT_NO_ICMP,
	OPT_FREEBIND,
	OPT_FQDN,
	OPT_NETNS_ONLY,
	OPT_NO_NETNS_QUIT,
	OPT_NO_COPY_ROUTES,
	OPT_NO_COPY_ADDRS,
	OPT_NS_MAC_ADDR,
	OPT_NO_SPLICE,
	OPT_PASST_ONLY,
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
        {"debug", no_argument, NULL, 'd'},
        {"trace", no_argument, NULL, OPT_TRACE},
        {"log-file", required_argument, NULL, 'l'},
        {"log-size", required_argument, NULL, OPT_LOG_SIZE},
        {"runas", required_argument, NULL, OPT_RUNAS},
        {"pcap", required_argument, NULL, 'p'},
        {"mac-addr", required_argument, NULL, 'M'},
        {"interface", required_argument, NULL, 'i'},
        {"outbound", required_argument, NULL, 'o'},
        {"outbound-if4", required_argument, NULL, OPT_OUTBOUND_IF4},
        {"outbound-if6", required_argument, NULL, OPT_OUTBOUND_IF6},
        {"dns", required_argument, NULL, 'D'},
        {"dns-host", required_argument, NULL, OPT_DNS_HOST},
        {"search", required_argument, NULL, 'S'},
        {"no-dhcp-dns", no_argument, NULL, OPT_NO_DHCP_DNS},
        {"dhcp-dns", no_argument, NULL, OPT_DHCP_DNS},
        {"no-dhcp-search", no_argument, NULL, OPT_NO_DHCP_SEARCH},
        {"dhcp-search", no_argument, NULL, OPT_DHCP_SEARCH},
        {"no-tcp", no_argument, NULL, OPT_NO_TCP},
        {"no-udp", no_argument, NULL, OPT_NO_UDP},
        {"no-icmp", no_argument, NULL, OPT_NO_ICMP},
        {"freebind", no_argument, NULL, OPT_FREEBIND},
        {"hostname", required_argument, NULL, 'H'},
        {"fqdn", required_argument, NULL, OPT_FQDN},
        {"netns-only", no_argument, NULL, OPT_NETNS_ONLY},
        {"no-netns-quit", no_argument, NULL, OPT_NO_NETNS_QUIT},
        {"no-copy-routes", no_argument, NULL, OPT_NO_COPY_ROUTES},
        {"no-copy-addrs", no_argument, NULL, OPT_NO_COPY_ADDRS},
        {"ns-mac-addr", required_argument, NULL, OPT_NS_MAC_ADDR},
        {"no-splice", no_argument, NULL, OPT_NO_SPLICE},
        /* passt's: a socket for qemu, which pasta has no use for. */
        {"socket", required_argument, NULL, OPT_PASST_ONLY},
        {"socket-path", required_argument, NULL, OPT_PASST_ONLY},
        {"vhost-user", no_argument, NULL, OPT_PASST_ONLY},
        {"print-capabilities", no_argument, NULL, OPT_PASST_ONLY},
        {"repair-path", required_argument, NULL, OPT_PASST_ONLY},
        {"fd", required_argument, NULL, OPT_PASST_ONLY},
        {"one-off", no_argument, NULL, OPT_PASST_ONLY},
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
        "  -d, --debug, --trace     log details\n"
        "  -l, --log-file PATH      log to PATH instead of stderr\n"
        "  --log-size SIZE          at most SIZE bytes of log file, then it\n"
        "                           starts over (default 1 MiB)\n"
        "  --runas UID[:GID]|LOGIN[:GROUP]\n"
        "                           who to serve as, when started as root\n"
        "  -p, --pcap FILE          capture the namespace side's frames\n"
        "  -I, --ns-ifname NAME     interface name in the namespace\n"
        "  --ns-mac-addr MAC        MAC of that interface\n"
        "  -M, --mac-addr MAC       tapir's own MAC toward the namespace\n"
        "  -m, --mtu MTU            MTU, 68..65520, or 0 (default 65520)\n"
        "  -a, --address ADDR       guest address, IPv4 and/or IPv6\n"
        "  -n, --netmask MASK       IPv4 prefix length or netmask\n"
        "  -g, --gateway ADDR       gateway, IPv4 and/or IPv6\n"
        "  -i, --interface NAME     host interface to copy addresses and\n"
        "                           routes from\n"
        "  -o, --outbound ADDR      source address of outbound flows\n"
        "  --outbound-if4 NAME, --outbound-if6 NAME\n"
        "                           source address: NAME's, per family\n"
        "  -4, --ipv4-only          IPv4 only\n"
        "  -6, --ipv6-only          IPv6 only: no IPv4 in the namespace\n"
        "  --no-dhcp, --no-dhcpv6, --no-ndp, --no-ra\n"
        "                           don't answer those\n"
        "  --no-tcp, --no-udp, --no-icmp\n"
        "                           drop that protocol (ICMP: echo)\n"
        "  -D, --dns ADDR|none      a DNS server for --dhcp-dns\n"
        "  --dhcp-dns, --no-dhcp-dns\n"
        "                           DHCP and NDP name DNS servers, or not\n"
        "                           (the default)\n"
        "  -S, --search LIST|none   search domains for --dhcp-search\n"
        "  --dhcp-search, --no-dhcp-search\n"
        "                           DHCP names search domains, or not\n"
        "                           (the default)\n"
        "  -H, --hostname NAME      host name DHCP names\n"
        "  --fqdn NAME              FQDN DHCP names\n"
        "  --no-map-gw              the gateway is not the host's loopback\n"
        "  --dns-forward ADDR       DNS to ADDR goes to the host's resolver\n"
        "  --dns-host ADDR          the resolver DNS to --dns-forward goes "
        "to\n"
        "  --map-guest-addr ADDR|none\n"
        "                           ADDR reaches the host's own address\n"
        "  --map-host-loopback ADDR|none\n"
        "                           ADDR reaches the host's loopback\n"
        "  --host-lo-to-ns-lo       host loopback clients reach the "
        "namespace's\n"
        "                           loopback\n"
        "  --no-splice              ... through the interface instead\n"
        "  --freebind               -t and -u may bind any address\n"
        "  -t, --tcp-ports SPEC     TCP forwards, host to namespace\n"
        "  -u, --udp-ports SPEC     UDP forwards, host to namespace\n"
        "  -T, --tcp-ns SPEC        TCP forwards, namespace to host "
        "loopback\n"
        "  -U, --udp-ns SPEC        UDP forwards, namespace to host "
        "loopback\n"
        "                           SPEC: none, auto, all or\n"
        "                           "
        "[ADDR[%IF]/]PORT[-PORT][:PORT[-PORT]][,...]\n"
        "                           (ADDR, IF: -t and -u only), ~PORT[-PORT]\n"
        "                           excludes\n"
        "  --netns PATH|NAME        join this network namespace\n"
        "  --userns PATH            join this user namespace\n"
        "  --netns-only             join the PID's network namespace only\n"
        "  --no-netns-quit          keep running when the namespace goes\n"
        "  --no-copy-routes, --no-copy-addrs\n"
        "                           no effect: one address and the default\n"
        "                           route are all tapir copies\n"
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
	if (!parse_uint(s, 0, 32, &v)) {
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
 * parse_ifname() - an interface name option's value
 * @name:	option, for messages
 * @s:		value, untrusted
 * @out:	IFNAMSIZ bytes
 *
 * Return: 0, or -1 after one error line
 */
static int parse_ifname(const char *name, const char *s, char *out)
{
	if (!*s || strlen(s) >= IFNAMSIZ || strpbrk(s, "/: \t\n") ||
	    !strcmp(s, ".") || !strcmp(s, "..")) {
		err_msg("%s: bad interface name \"%.32s\"", name, s);
		return -1;
	}
	strcpy(out, s);
	return 0;
}

/**
 * parse_mac_opt() - a MAC address option's value
 * @name:	option, for messages
 * @s:		value, untrusted
 * @mac:	filled
 *
 * Return: 0, or -1 after one error line
 */
static int parse_mac_opt(const char *name, const char *s, uint8_t mac[6])
{
	static const uint8_t zero[6];

	if (cli_parse_mac(s, mac)) {
		err_msg("%s: bad MAC address \"%.32s\": expected "
		        "xx:xx:xx:xx:xx:xx",
		        name, s);
		return -1;
	}
	if ((mac[0] & 1) || !memcmp(mac, zero, 6)) {
		err_msg("%s: %s can't be used: multicast or zero", name, s);
		return -1;
	}
	return 0;
}

/**
 * encode_name() - a domain name in DNS's encoding (labels, then 0)
 * @s:		name, dots between labels, one trailing dot allowed
 * @len:	its length
 * @out:	filled
 * @room:	bytes at @out
 *
 * Return: bytes written, or -1 if @s is no domain name or does not fit
 */
static int encode_name(const char *s, size_t len, uint8_t *out, size_t room)
{
	size_t n = 0, start = 0;

	if (len && s[len - 1] == '.')
		len--;
	if (!len || len > 253)
		return -1;
	for (size_t i = 0; i <= len; i++) {
		size_t l = i - start;

		if (i < len && s[i] != '.') {
			if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
			    s[i] != '_')
				return -1;
			continue;
		}
		/* RFC 1123: no label begins or ends with a hyphen. */
		if (!l || l > 63 || n + 1 + l + 1 > room || s[start] == '-' ||
		    s[i - 1] == '-')
			return -1;
		out[n++] = (uint8_t)l;
		memcpy(out + n, s + start, l);
		n += l;
		start = i + 1;
	}
	out[n++] = 0;
	return (int)n;
}

/**
 * parse_search() - -S: a space-separated list of domains, or "none"
 * @s:		value, untrusted
 * @po:		its search list is set
 *
 * The list is kept as DHCP's domain search option carries it (RFC 3397,
 * without compression), so it must fit one option.
 *
 * Return: 0, or -1 after one error line
 */
static int parse_search(const char *s, struct pasta_opts *po)
{
	size_t n = 0;

	po->search_len = 0;
	if (!strcmp(s, "none"))
		return 0;
	while (*s) {
		size_t l = strcspn(s, " ");
		int w = l ? encode_name(s, l, po->search + n,
		                        sizeof(po->search) - n)
		          : 0;

		if (w < 0) {
			err_msg("-S: \"%.*s\" is no domain name, or the list "
			        "is "
			        "longer than one DHCP option (%d bytes)",
			        (int)(l < 64 ? l : 64), s, PASTA_OPTION_MAX);
			return -1;
		}
		n += (size_t)w;
		s += l + (s[l] == ' ');
	}
	po->search_len = n;
	return 0;
}

/**
 * parse_dns() - -D: one DNS server address more, or "none"
 * @s:		value, untrusted
 * @po:		its DNS list is set
 *
 * Return: 0, or -1 after one error line
 */
static int parse_dns(const char *s, struct pasta_opts *po)
{
	struct pasta_addr a = {0};

	if (!strcmp(s, "none")) {
		po->dns_none = true;
		po->n_dns4 = po->n_dns6 = 0;
		return 0;
	}
	if (parse_addr("-D", s, &a))
		return -1;
	po->dns_none = false;
	if ((a.v4_set && po->n_dns4 == PASTA_DNS_MAX) ||
	    (a.v6_set && po->n_dns6 == PASTA_DNS_MAX)) {
		err_msg("-D %s: at most %d per IP version", s, PASTA_DNS_MAX);
		return -1;
	}
	if (a.v4_set)
		po->dns4[po->n_dns4++] = a.v4;
	else
		po->dns6[po->n_dns6++] = a.v6;
	return 0;
}

/**
 * parse_hostname() - -H: a host name, sent in DHCP option 12
 * @s:		value, untrusted; empty sends none
 * @po:		its host name is set
 *
 * Return: 0, or -1 after one error line
 */
static int parse_hostname(const char *s, struct pasta_opts *po)
{
	uint8_t wire[PASTA_OPTION_MAX];

	if (*s && encode_name(s, strlen(s), wire, sizeof(wire)) < 0) {
		err_msg("-H: \"%.64s\" is no host name", s);
		return -1;
	}
	snprintf(po->hostname, sizeof(po->hostname), "%s", s);
	return 0;
}

/**
 * parse_fqdn() - --fqdn: a domain name, sent in DHCP option 81
 * @s:		value, untrusted
 * @po:		its FQDN is set
 *
 * Return: 0, or -1 after one error line
 */
static int parse_fqdn(const char *s, struct pasta_opts *po)
{
	int n = encode_name(s, strlen(s), po->fqdn, sizeof(po->fqdn));

	if (n < 0) {
		err_msg("--fqdn: \"%.64s\" is no domain name, or too long", s);
		return -1;
	}
	po->fqdn_len = (size_t)n;
	return 0;
}

/**
 * parse_id() - one side of --runas: a number, or a name to look up
 * @s:		value, untrusted, NUL-terminated
 * @group:	a group (else a user)
 * @id:		filled
 * @gid:	for a user name, filled with its group; may be NULL
 *
 * Return: 0, or -1 if it is neither
 */
static int parse_id(const char *s, bool group, unsigned long *id,
                    unsigned long *gid)
{
	const struct passwd *pw;
	const struct group *gr;

	if (!parse_uint(s, 0, UINT32_MAX - 1, id)) {
		if (!group && gid) {
			pw = getpwuid((uid_t)*id);
			*gid = pw ? pw->pw_gid : *id;
		}
		return 0;
	}
	if (group) {
		gr = getgrnam(s);
		if (gr)
			*id = gr->gr_gid;
		return gr ? 0 : -1;
	}
	pw = getpwnam(s);
	if (pw) {
		*id = pw->pw_uid;
		if (gid)
			*gid = pw->pw_gid;
	}
	return pw ? 0 : -1;
}

/**
 * parse_runas() - --runas UID|UID:GID|LOGIN|LOGIN:GROUP
 * @s:		value, untrusted
 * @po:		its runas fields are set
 *
 * A user alone brings its group (from the user database, else the same
 * number), as in pasta.
 *
 * Return: 0, or -1 after one error line
 */
static int parse_runas(const char *s, struct pasta_opts *po)
{
	char user[256], *colon;
	unsigned long uid, gid = 0;

	if (strlen(s) >= sizeof(user))
		goto bad;
	strcpy(user, s);
	colon = strchr(user, ':');
	if (colon)
		*colon = '\0';
	if (!*user || parse_id(user, false, &uid, &gid) ||
	    (colon && parse_id(colon + 1, true, &gid, NULL)))
		goto bad;
	po->runas = true;
	po->runas_uid = (uid_t)uid;
	po->runas_gid = (gid_t)gid;
	return 0;
bad:
	err_msg("--runas: \"%.64s\" is no UID[:GID] or known LOGIN[:GROUP]", s);
	return -1;
}

/**
 * parse_flag_more() - an option without an argument, of the less common
 * @po:		options being built
 * @c:		its code
 *
 * Return: 0, or 1 if @c is not one
 */
static int parse_flag_more(struct pasta_opts *po, int c)
{
	switch (c) {
	case 'd':
	case OPT_TRACE: /* tapir has no per-packet log: as --debug */
		po->debug = true;
		break;
	case OPT_DHCP_DNS:
	case OPT_NO_DHCP_DNS:
		po->dhcp_dns = c == OPT_DHCP_DNS;
		break;
	case OPT_DHCP_SEARCH:
	case OPT_NO_DHCP_SEARCH:
		po->dhcp_search = c == OPT_DHCP_SEARCH;
		break;
	case OPT_NO_TCP:
		po->no_tcp = true;
		break;
	case OPT_NO_UDP:
		po->no_udp = true;
		break;
	case OPT_NO_ICMP:
		po->no_icmp = true;
		break;
	case OPT_FREEBIND:
		po->freebind = true;
		break;
	case OPT_NETNS_ONLY:
		po->netns_only = true;
		break;
	case OPT_NO_NETNS_QUIT:
		po->no_netns_quit = true;
		break;
	case OPT_NO_COPY_ROUTES:
		po->no_copy_routes = true;
		break;
	case OPT_NO_COPY_ADDRS:
		po->no_copy_addrs = true;
		break;
	case OPT_NO_SPLICE:
		po->no_splice = true;
		break;
	default:
		return 1;
	}
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
		return parse_flag_more(po, c);
	}
	return 0;
}

/**
 * parse_value_more() - an option with an argument, of the less common
 * @po:		options being built
 * @c:		its code
 * @arg:	its argument, untrusted
 *
 * Return: 0, or -1 after one error line
 */
static int parse_value_more(struct pasta_opts *po, int c, const char *arg)
{
	unsigned long v;

	switch (c) {
	case 'l':
		return parse_path("-l", arg, po->log_file);
	case OPT_LOG_SIZE:
		if (parse_uint(arg, PASTA_LOG_SIZE_MIN, 1UL << 40, &v)) {
			err_msg("--log-size: bytes, at least %d, not \"%.32s\"",
			        PASTA_LOG_SIZE_MIN, arg);
			return -1;
		}
		po->log_size = v;
		return 0;
	case OPT_RUNAS:
		return parse_runas(arg, po);
	case 'p':
		return parse_path("-p", arg, po->pcap);
	case 'M':
		po->mac_set = true;
		return parse_mac_opt("-M", arg, po->mac);
	case OPT_NS_MAC_ADDR:
		po->ns_mac_set = true;
		return parse_mac_opt("--ns-mac-addr", arg, po->ns_mac);
	case 'i':
		return parse_ifname("-i", arg, po->ifname_copy);
	case 'o':
		return parse_addr("-o", arg, &po->outbound);
	case OPT_OUTBOUND_IF4:
		return parse_ifname("--outbound-if4", arg, po->outbound_if4);
	case OPT_OUTBOUND_IF6:
		return parse_ifname("--outbound-if6", arg, po->outbound_if6);
	case 'D':
		return parse_dns(arg, po);
	case OPT_DNS_HOST:
		return parse_addr("--dns-host", arg, &po->dns_host);
	case 'S':
		return parse_search(arg, po);
	case 'H':
		return parse_hostname(arg, po);
	case OPT_FQDN:
		return parse_fqdn(arg, po);
	default:
		err_msg("unhandled option %d", c);
		return -1;
	}
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
		/* 0: as pasta, no MTU of its own: the default's. */
		if (parse_uint(arg, 0, PASTA_MTU_MAX, &v) || (v && v < 68)) {
			err_msg("-m: MTU must be an integer in 68..%d, or 0, "
			        "not \"%s\"",
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
		return parse_value_more(po, c, arg);
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

	if (argc == 1 && !parse_uint(argv[0], 1, INT_MAX, &v))
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
	if (po->netns_only && (po->cmd || po->userns[0])) {
		err_msg("--netns-only can't be given with %s",
		        po->cmd ? "a command, which gets new namespaces"
		                : "--userns");
		return -1;
	}
	return 0;
}

/**
 * ports_given() - whether a -t/-u/-T/-U option asks for any forward
 * @pp:		the option's specs
 *
 * Return: true unless it was not given or is "none"
 */
static bool ports_given(const struct pasta_ports *pp)
{
	return pp->mode != PASTA_PORTS_UNSET && pp->mode != PASTA_PORTS_NONE;
}

/**
 * check_disabled() - --no-tcp and --no-udp against forwards of that
 *		      protocol, and the options that need --config-net
 * @po:		options, all parsed; a disabled protocol's forwards are set
 *		to "none", over pasta's default of "auto"
 *
 * Return: 0, or -1 after one error line
 */
static int check_disabled(struct pasta_opts *po)
{
	if (po->no_tcp && (ports_given(&po->tcp) || ports_given(&po->tcp_ns))) {
		err_msg("-t or -T with --no-tcp: TCP is disabled");
		return -1;
	}
	if (po->no_udp && (ports_given(&po->udp) || ports_given(&po->udp_ns))) {
		err_msg("-u or -U with --no-udp: UDP is disabled");
		return -1;
	}
	if (po->no_tcp)
		po->tcp.mode = po->tcp_ns.mode = PASTA_PORTS_NONE;
	if (po->no_udp)
		po->udp.mode = po->udp_ns.mode = PASTA_PORTS_NONE;
	if ((po->no_copy_routes || po->no_copy_addrs) && !po->config_net) {
		err_msg("--no-copy-%s needs --config-net",
		        po->no_copy_routes ? "routes" : "addrs");
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
static int check_combinations(struct pasta_opts *po)
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
	if (check_disabled(po))
		return -1;
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
 * passt_only() - refuse one of passt's own options, as pasta does
 * @c:		its code
 * @li:		index of the long option, if it was one
 */
static void passt_only(int c, int li)
{
	char name[32];

	if (c == OPT_PASST_ONLY)
		snprintf(name, sizeof(name), "--%s", long_opts[li].name);
	else
		snprintf(name, sizeof(name), "-%c", c);
	err_msg("%s: passt's, for qemu; not in pasta mode", name);
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
	int c, li = 0;

	memset(po, 0, sizeof(*po));
	po->prefix4 = -1;
	po->log_size = PASTA_LOG_SIZE_DEFAULT;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv,
	                        "+:feqI:m:a:n:g:46t:u:T:U:P:hdl:p:M:i:o:D:S:"
	                        "H:s:F:1",
	                        long_opts, &li)) != -1) {
		if (c == '?' || c == ':') {
			cli_getopt_error(c, argv[optind - 1], "tapir pasta");
			return -1;
		}
		if (c == OPT_PASST_ONLY || c == 's' || c == 'F' || c == '1') {
			passt_only(c, li);
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
