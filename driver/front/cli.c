// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - command line: slirp4netns-compatible options plus tapir's own */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/front/cli.h"
#include "driver/cond/cond_spec.h"
#include "driver/cond/cond.h"
#include "driver/core/inany.h"
#include "driver/core/log.h"
#include "driver/core/parse.h"
#include "driver/host/version.h"

/* Where `make install` puts the docs that --help cites (the Makefile's
 * DOCDIR).
 */
#ifndef TAPIR_DOCDIR
#define TAPIR_DOCDIR "/usr/local/share/doc/tapir"
#endif

/* Long-only options start above the range of short option characters. */
enum {
	OPT_CIDR = 256,
	OPT_DISABLE_HOST_LOOPBACK,
	OPT_NETNS_TYPE,
	OPT_USERNS_PATH,
	OPT_MACADDRESS,
	OPT_DISABLE_DNS,
	OPT_OUTBOUND_ADDR,
	OPT_OUTBOUND_ADDR6,
	OPT_TXQUEUELEN,
	OPT_OFFLOAD,
	OPT_QUEUES,
	OPT_MAX_FLOWS,
	OPT_PCAP,
	OPT_DEBUG,
	OPT_FORWARD_MODE,
	OPT_ENABLE_SANDBOX,
	OPT_ENABLE_SECCOMP,
	OPT_NO_SANDBOX,
	OPT_NO_SECCOMP,
	OPT_CONDITIONS,
};

static const struct option long_opts[] = {
        {"configure", no_argument, NULL, 'c'},
        {"exit-fd", required_argument, NULL, 'e'},
        {"ready-fd", required_argument, NULL, 'r'},
        {"mtu", required_argument, NULL, 'm'},
        {"enable-ipv6", no_argument, NULL, '6'},
        {"api-socket", required_argument, NULL, 'a'},
        {"publish", required_argument, NULL, 'p'},
        {"cidr", required_argument, NULL, OPT_CIDR},
        {"disable-host-loopback", no_argument, NULL, OPT_DISABLE_HOST_LOOPBACK},
        {"netns-type", required_argument, NULL, OPT_NETNS_TYPE},
        {"userns-path", required_argument, NULL, OPT_USERNS_PATH},
        {"macaddress", required_argument, NULL, OPT_MACADDRESS},
        {"disable-dns", no_argument, NULL, OPT_DISABLE_DNS},
        {"outbound-addr", required_argument, NULL, OPT_OUTBOUND_ADDR},
        {"outbound-addr6", required_argument, NULL, OPT_OUTBOUND_ADDR6},
        {"txqueuelen", required_argument, NULL, OPT_TXQUEUELEN},
        {"offload", required_argument, NULL, OPT_OFFLOAD},
        {"queues", required_argument, NULL, OPT_QUEUES},
        {"max-flows", required_argument, NULL, OPT_MAX_FLOWS},
        {"pcap", required_argument, NULL, OPT_PCAP},
        {"debug", no_argument, NULL, OPT_DEBUG},
        {"forward-mode", required_argument, NULL, OPT_FORWARD_MODE},
        {"enable-sandbox", no_argument, NULL, OPT_ENABLE_SANDBOX},
        {"enable-seccomp", no_argument, NULL, OPT_ENABLE_SECCOMP},
        {"no-sandbox", no_argument, NULL, OPT_NO_SANDBOX},
        {"no-seccomp", no_argument, NULL, OPT_NO_SECCOMP},
        {"conditions", required_argument, NULL, OPT_CONDITIONS},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
};

/* The options of both modes, in two parts: attach mode's own go between. */
static const char usage_options[] =
        "Options:\n"
        "  -c, --configure          bring up the interface: address net+100,\n"
        "                           default route via net+2, lo up\n"
        "  -e, --exit-fd=FD         exit when FD is closed (POLLHUP)\n"
        "  -r, --ready-fd=FD        write \"1\" to FD once the tap is ready\n"
        "  -m, --mtu=MTU            MTU, 68..65521 (default 1500)\n"
        "  -6, --enable-ipv6        enable IPv6 (fd00::/64, router fe80::2)\n"
        "  -a, --api-socket=PATH    serve the slirp4netns JSON API on PATH\n"
        "  -p, --publish=[HOSTIP:]HOSTPORT:GUESTPORT[/tcp|/udp]\n"
        "                           forward a host port to the namespace\n"
        "      --cidr=CIDR          virtual network (default 10.0.2.0/24)\n"
        "      --disable-host-loopback\n"
        "                           keep the namespace away from host "
        "loopback\n";

/* tapir run makes its own namespaces: it refuses these. */
static const char usage_attach[] =
        "      --netns-type=TYPE    ARG1 is a \"pid\" (default) or a \"path\"\n"
        "      --userns-path=PATH   user namespace to join first\n";

static const char usage_options_more[] =
        "      --macaddress=MAC     MAC of the tap (needs --configure)\n"
        "      --disable-dns        do not forward DNS on net+3\n"
        "      --outbound-addr=IPv4|IFNAME\n"
        "                           source address for outgoing IPv4\n"
        "      --outbound-addr6=IPv6|IFNAME\n"
        "                           source address for outgoing IPv6\n"
        "      --txqueuelen=N       tap queue length (default: sized so a\n"
        "                           full TCP window of frames fits)\n"
        "      --offload=on|off     virtio-net header, checksum and TSO/USO\n"
        "                           offloads on the tap (default on)\n"
        "      --queues=N|auto      tap queues, 1..16, or auto: one per "
        "online\n"
        "                           CPU, at most 8 (default 1, or "
        "$TAPIR_QUEUES)\n"
        "      --max-flows=N        TCP flows per queue at most, UDP flows\n"
        "                           half as many (default: the fd limit, or\n"
        "                           $TAPIR_MAX_FLOWS)\n"
        "      --pcap=FILE          write a packet capture of the tap\n"
        "      --debug              log details on stderr, counters at exit\n"
        "      --forward-mode=tap|splice\n"
        "                           TCP port forwards through the tap (keeps\n"
        "                           the client address, default) or spliced\n"
        "                           from a socket inside the namespace\n"
        "      --enable-sandbox     once set up, live in an empty root that\n"
        "                           holds a read-only /etc, an empty /run\n"
        "                           (and the resolver's directory if\n"
        "                           resolv.conf links out of /etc), with no\n"
        "                           capability but CAP_NET_BIND_SERVICE\n"
        "                           (default in run)\n"
        "      --enable-seccomp     once set up, allow only the syscalls\n"
        "                           tapir makes (default in run)\n"
        "      --no-sandbox, --no-seccomp\n"
        "                           turn either off (for tapir run)\n"
        "      --conditions=RULE    network conditions, e.g. delay=50ms,\n"
        "                           jitter=5ms,loss=1%,rate=100mbit;\n"
        "                           repeat for rules scoped by proto=,\n"
        "                           port= or host= (see\n"
        "                           " TAPIR_DOCDIR "/conditions.md)\n"
        "  -h, --help               show this help and exit\n"
        "  -v, --version            show version and features and exit\n";

/**
 * cli_usage() - print the help text for @mode
 * @f:		stream to print to
 * @mode:	attach or run
 */
void cli_usage(FILE *f, enum cli_mode mode)
{
	if (mode == CLI_RUN)
		fprintf(f, "Usage: tapir run [OPTION]... [--] CMD [ARG]...\n"
		           "Run CMD in a new user and network namespace "
		           "connected through tapir.\n\n");
	else
		fprintf(f, "Usage: tapir [OPTION]... PID|PATH TAPNAME\n"
		           "       tapir run [OPTION]... [--] CMD [ARG]...\n"
		           "       tapir pasta [PASTA OPTION]... (see tapir "
		           "pasta --help)\n"
		           "       tapir api SOCKET JSON\n"
		           "User-mode networking for unprivileged network "
		           "namespaces.\n\n");
	fputs(usage_options, f);
	if (mode != CLI_RUN)
		fputs(usage_attach, f);
	fputs(usage_options_more, f);
}

/**
 * dotted_quad_shape() - check the shape slirp4netns's CIDR regex accepts
 * @s:		address part, without the prefix
 *
 * Return: true for four groups of 1-3 digits separated by dots
 */
static bool dotted_quad_shape(const char *s)
{
	int groups = 0, digits = 0;

	for (;; s++) {
		if (isdigit((unsigned char)*s)) {
			if (++digits > 3)
				return false;
			continue;
		}
		if (*s != '.' && *s != '\0')
			return false;
		if (!digits)
			return false;
		groups++;
		digits = 0;
		if (*s == '\0')
			break;
	}
	return groups == 4;
}

/**
 * cli_parse_cidr() - parse --cidr as slirp4netns does
 * @s:		input, e.g. "10.0.2.0/24"
 * @net:	network address (network byte order)
 * @prefix:	prefix length, 1..25
 * @why:	on failure, the slirp4netns error text
 * @whylen:	size of @why
 *
 * Return: 0 on success, -1 on failure
 */
int cli_parse_cidr(const char *s, struct in_addr *net, unsigned int *prefix,
                   char *why, size_t whylen)
{
	char addr[16];
	const char *slash = strchr(s, '/');
	unsigned long plen;
	uint32_t mask;

	if (!slash || (size_t)(slash - s) >= sizeof(addr) || !slash[1] ||
	    strlen(slash + 1) > 2) {
		snprintf(why, whylen, "invalid CIDR: %s", s);
		return -1;
	}
	memcpy(addr, s, slash - s);
	addr[slash - s] = '\0';
	if (!dotted_quad_shape(addr) || parse_uint(slash + 1, 0, 99, &plen)) {
		snprintf(why, whylen, "invalid CIDR: %s", s);
		return -1;
	}
	if (inet_pton(AF_INET, addr, net) != 1) {
		snprintf(why, whylen, "invalid network address: %s", addr);
		return -1;
	}
	if (plen < 1 || plen > 25) {
		snprintf(why, whylen, "prefix length needs to be 1-25");
		return -1;
	}
	mask = htonl(~0U << (32 - plen));
	if (net->s_addr & ~mask) {
		snprintf(why, whylen,
		         "CIDR needs to be a network address like 10.0.2.0/24, "
		         "not like %s",
		         s);
		return -1;
	}
	*prefix = plen;
	return 0;
}

/**
 * cli_parse_mac() - parse a MAC address in xx:xx:xx:xx:xx:xx form
 * @s:		input
 * @mac:	result
 *
 * Unlike slirp4netns, a short MAC is refused: it would silently be padded
 * with zeroes.
 *
 * Return: 0 on success, -1 on failure
 */
int cli_parse_mac(const char *s, uint8_t mac[6])
{
	for (int i = 0; i < 6; i++) {
		const char *g = s + i * 3;

		if (!isxdigit((unsigned char)g[0]) ||
		    !isxdigit((unsigned char)g[1]))
			return -1;
		if (g[2] != (i == 5 ? '\0' : ':'))
			return -1;
		mac[i] = (uint8_t)strtoul((char[]){g[0], g[1], 0}, NULL, 16);
	}
	return 0;
}

/**
 * parse_publish_addr() - -p's HOSTIP: dotted quad, or IPv6 in brackets
 * @s:		the address, brackets and all (modified)
 * @a:		result, IPv4 as v4-mapped
 *
 * Return: 0, or -1 if it is neither
 */
static int parse_publish_addr(char *s, struct in6_addr *a)
{
	struct in_addr v4;
	size_t len = strlen(s);

	if (inet_pton(AF_INET, s, &v4) == 1) {
		inany_from_v4(a, v4);
		return 0;
	}
	if (len < 3 || s[0] != '[' || s[len - 1] != ']')
		return -1;
	s[len - 1] = '\0';
	return inet_pton(AF_INET6, s + 1, a) == 1 && !inany_is_v4(a) ? 0 : -1;
}

/**
 * cli_parse_publish() - parse [HOSTIP:]HOSTPORT:GUESTPORT[/tcp|/udp]
 * @s:		input; an IPv6 HOSTIP in brackets, as Docker's -p takes it
 * @p:		result
 * @why:	on failure, the reason
 * @whylen:	size of @why
 *
 * Return: 0 on success, -1 on failure
 */
int cli_parse_publish(const char *s, struct publish *p, char *why,
                      size_t whylen)
{
	char buf[80], *proto, *gport, *hport;
	unsigned long v;

	memset(p, 0, sizeof(*p));
	p->dual = true;
	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	proto = strchr(buf, '/');
	if (proto) {
		*proto++ = '\0';
		if (!strcmp(proto, "udp"))
			p->udp = true;
		else if (strcmp(proto, "tcp"))
			goto bad;
	}
	gport = strrchr(buf, ':');
	if (!gport)
		goto bad;
	*gport++ = '\0';
	hport = strrchr(buf, ':');
	if (hport) {
		*hport++ = '\0';
		if (parse_publish_addr(buf, &p->host_addr))
			goto bad;
		p->dual = false;
	} else {
		hport = buf;
	}
	if (parse_uint(hport, 1, 65535, &v))
		goto bad;
	p->host_port = (uint16_t)v;
	if (parse_uint(gport, 1, 65535, &v))
		goto bad;
	p->guest_port = (uint16_t)v;
	return 0;
bad:
	snprintf(why, whylen,
	         "bad --publish \"%s\": expected "
	         "[HOSTIP:]HOSTPORT:GUESTPORT[/tcp|/udp], ports 1-65535",
	         s);
	return -1;
}

/**
 * cli_auto_queues() - the queue count --queues auto means
 * @online:	online CPUs, as sysconf(_SC_NPROCESSORS_ONLN) gave it (-1 if
 *		it failed)
 *
 * Each queue gets a datapath thread of its own, so one per CPU; the cap
 * keeps a many-core host from giving every container dozens of threads,
 * each with its own buffers and event loop.
 *
 * Return: @online clamped to 1..TAPIR_AUTO_QUEUES_MAX
 */
unsigned int cli_auto_queues(long online)
{
	if (online < 1)
		return 1;
	if (online > TAPIR_AUTO_QUEUES_MAX)
		return TAPIR_AUTO_QUEUES_MAX;
	return (unsigned int)online;
}

/**
 * parse_queues() - parse a --queues or TAPIR_QUEUES value
 * @s:		input: an integer in 1..TAPIR_MAX_QUEUES, or "auto"
 * @out:	queue count
 *
 * Return: 0 on success, -1 if @s is neither
 */
static int parse_queues(const char *s, unsigned int *out)
{
	unsigned long v;

	if (!strcmp(s, "auto")) {
		*out = cli_auto_queues(sysconf(_SC_NPROCESSORS_ONLN));
		return 0;
	}
	if (parse_uint(s, 1, TAPIR_MAX_QUEUES, &v))
		return -1;
	*out = (unsigned int)v;
	return 0;
}

/**
 * parse_max_flows() - parse a --max-flows or TAPIR_MAX_FLOWS value
 * @s:		input: an integer in 1..TAPIR_MAX_FLOWS
 * @out:	the ceiling
 *
 * Return: 0 on success, -1 if @s is not one
 */
static int parse_max_flows(const char *s, unsigned int *out)
{
	unsigned long v;

	if (parse_uint(s, 1, TAPIR_MAX_FLOWS, &v))
		return -1;
	*out = (unsigned int)v;
	return 0;
}

/**
 * cli_resolve_outbound() - turn an address literal or interface name into
 *			    an address of @family
 * @s:		input
 * @family:	AF_INET or AF_INET6
 * @out:	struct in_addr or struct in6_addr to fill
 *
 * Return: 0 on success, -1 if @s is neither a literal nor an interface with
 *	   an address of @family
 */
int cli_resolve_outbound(const char *s, int family, void *out)
{
	struct ifaddrs *ifa, *i;
	int ret = -1;

	if (inet_pton(family, s, out) == 1)
		return 0;
	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != family ||
		    strcmp(i->ifa_name, s))
			continue;
		if (family == AF_INET)
			memcpy(out,
			       &((struct sockaddr_in *)i->ifa_addr)->sin_addr,
			       sizeof(struct in_addr));
		else
			memcpy(out,
			       &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
			       sizeof(struct in6_addr));
		ret = 0;
		break;
	}
	freeifaddrs(ifa);
	return ret;
}

/**
 * cli_derive_addresses() - slirp4netns's layout of --cidr: guest net+100,
 *			    gateway net+2, DNS net+3
 * @o:		options whose @net and @prefix are final
 */
void cli_derive_addresses(struct opts *o)
{
	uint32_t net = ntohl(o->net.s_addr);

	o->guest4.s_addr = htonl(net + 100);
	o->gw4.s_addr = htonl(net + 2);
	o->dns4.s_addr = htonl(net + 3);
}

/**
 * cli_default_guest6() - the guest's static IPv6 address where no host's
 *			  is copied: fd00::100/64 (SLAAC adds another)
 * @o:		options: guest6 and prefix6 set
 *
 * --configure gives it to the interface; forwards reach it from IPv6
 * clients (fwd_guest_target()).
 */
void cli_default_guest6(struct opts *o)
{
	inet_pton(AF_INET6, "fd00::100", &o->guest6);
	o->prefix6 = 64;
}

/**
 * cli_opts_defaults() - fill @o with slirp4netns's defaults and tapir's own
 * @o:		options to initialise
 * @mode:	attach or run
 */
void cli_opts_defaults(struct opts *o, enum cli_mode mode)
{
	/* One set of options a process: the rules live here. */
	static struct cond_set conditions;

	memset(o, 0, sizeof(*o));
	memset(&conditions, 0, sizeof(conditions));
	o->conditions = &conditions;
	o->mode = mode;
	o->exit_fd = -1;
	o->ready_fd = -1;
	o->detach_fd = -1;
	o->target_pidfd = -1;
	o->pid_fd = -1;
	o->mtu = 1500;
	o->net.s_addr = htonl(0x0a000200);
	o->prefix = 24;
	o->offload = true;
	o->queues = 1;
	if (mode == CLI_RUN) {
		o->configure = true;
		strcpy(o->ifname, "tap0");
		/* tapir run owns the whole set-up: it can always isolate. */
		o->sandbox = true;
		o->seccomp = true;
	}
}

/**
 * parse_conditions() - add one --conditions rule
 * @o:		options being built
 * @arg:	the rule, "delay=50ms,loss=1%,..."
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int parse_conditions(struct opts *o, const char *arg)
{
	char why[200];

	if (!COND_BUILT) {
		err_msg("--conditions: this tapir was built without network "
		        "conditions");
		return -1;
	}
	if (cond_parse_add(o->conditions, arg, why, sizeof(why)) ||
	    cond_check_memory(o->conditions, why, sizeof(why))) {
		err_msg("--conditions \"%.100s\": %s", arg, why);
		return -1;
	}
	return 0;
}

/**
 * parse_option() - apply one option to @o
 * @o:		options being built
 * @c:		option code from getopt_long()
 * @arg:	its argument, or NULL
 *
 * Return: 0 on success, -1 after printing one error line, CLI_EXIT_OK after
 *	   --help or --version
 */
static int parse_option(struct opts *o, int c, const char *arg)
{
	char why[256];
	unsigned long v;
	struct stat st;

	switch (c) {
	case 'c':
		o->configure = true;
		break;
	case 'e':
	case 'r':
		if (parse_uint(arg, 0, INT_MAX, &v)) {
			err_msg("%s must be a non-negative integer",
			        c == 'e' ? "exit-fd" : "ready-fd");
			return -1;
		}
		*(c == 'e' ? &o->exit_fd : &o->ready_fd) = (int)v;
		break;
	case 'm':
		if (parse_uint(arg, TAPIR_MTU_MIN, TAPIR_MTU_MAX, &v)) {
			err_msg("MTU must be an integer in %d..%d, not \"%s\"",
			        TAPIR_MTU_MIN, TAPIR_MTU_MAX, arg);
			return -1;
		}
		o->mtu = (unsigned int)v;
		break;
	case '6':
		o->ipv6 = true;
		break;
	case 'a':
		if (strlen(arg) >= API_PATH_MAX) {
			err_msg("the specified API socket path is too long "
			        "(>= %zu)",
			        API_PATH_MAX);
			return -1;
		}
		strcpy(o->api_socket, arg);
		break;
	case 'p':
		if (o->npublish == TAPIR_MAX_PUBLISH) {
			err_msg("too many --publish options (max %d)",
			        TAPIR_MAX_PUBLISH);
			return -1;
		}
		if (cli_parse_publish(arg, &o->publish[o->npublish], why,
		                      sizeof(why))) {
			err_msg("%s", why);
			return -1;
		}
		o->npublish++;
		break;
	case OPT_CIDR:
		if (cli_parse_cidr(arg, &o->net, &o->prefix, why,
		                   sizeof(why))) {
			err_msg("%s", why);
			return -1;
		}
		break;
	case OPT_DISABLE_HOST_LOOPBACK:
		o->disable_host_loopback = true;
		break;
	case OPT_NETNS_TYPE:
		if (!strcmp(arg, "tapfd")) {
			err_msg("--netns-type=tapfd is not supported");
			return -1;
		}
		/* As in slirp4netns, any value but "pid" means a path. */
		o->netns_type = strcmp(arg, "pid") ? NETNS_PATH : NETNS_PID;
		break;
	case OPT_USERNS_PATH:
		if (strlen(arg) >= sizeof(o->userns_path) || stat(arg, &st)) {
			err_msg("userns path doesn't exist: %s", arg);
			return -1;
		}
		strcpy(o->userns_path, arg);
		break;
	case OPT_MACADDRESS:
		if (cli_parse_mac(arg, o->mac)) {
			err_msg("bad --macaddress \"%s\": expected "
			        "xx:xx:xx:xx:xx:xx",
			        arg);
			return -1;
		}
		/* The kernel takes neither for a tap (EADDRNOTAVAIL). */
		if ((o->mac[0] & 1) || !memcmp(o->mac, "\0\0\0\0\0\0", 6)) {
			err_msg("bad --macaddress \"%s\": a tap needs a "
			        "unicast address (first octet even, not all "
			        "zeros), e.g. 02:00:00:00:00:01",
			        arg);
			return -1;
		}
		o->mac_set = true;
		break;
	case OPT_DISABLE_DNS:
		o->disable_dns = true;
		break;
	case OPT_OUTBOUND_ADDR:
		if (cli_resolve_outbound(arg, AF_INET, &o->outbound4)) {
			err_msg("outbound-addr has to be valid ipv4 address or "
			        "interface name: %s",
			        arg);
			return -1;
		}
		o->outbound4_set = true;
		break;
	case OPT_OUTBOUND_ADDR6:
		if (cli_resolve_outbound(arg, AF_INET6, &o->outbound6)) {
			err_msg("outbound-addr6 has to be valid ipv6 address "
			        "or interface name: %s",
			        arg);
			return -1;
		}
		o->outbound6_set = true;
		break;
	case OPT_TXQUEUELEN:
		if (parse_uint(arg, 1, TAPIR_TXQLEN_MAX, &v)) {
			err_msg("txqueuelen must be an integer in 1..%d, not "
			        "\"%s\"",
			        TAPIR_TXQLEN_MAX, arg);
			return -1;
		}
		o->txqueuelen = (unsigned int)v;
		break;
	case OPT_OFFLOAD:
		if (strcmp(arg, "on") && strcmp(arg, "off")) {
			err_msg("--offload takes \"on\" or \"off\", not \"%s\"",
			        arg);
			return -1;
		}
		o->offload = !strcmp(arg, "on");
		break;
	case OPT_QUEUES:
		if (parse_queues(arg, &o->queues)) {
			err_msg("queues must be an integer in 1..%d or "
			        "\"auto\", not \"%s\"",
			        TAPIR_MAX_QUEUES, arg);
			return -1;
		}
		break;
	case OPT_MAX_FLOWS:
		if (parse_max_flows(arg, &o->max_flows)) {
			err_msg("--max-flows must be an integer in 1..%u, not "
			        "\"%s\"",
			        TAPIR_MAX_FLOWS, arg);
			return -1;
		}
		break;
	case OPT_CONDITIONS:
		return parse_conditions(o, arg);
	case OPT_PCAP:
		if (strlen(arg) >= sizeof(o->pcap)) {
			err_msg("--pcap path too long");
			return -1;
		}
		strcpy(o->pcap, arg);
		break;
	case OPT_DEBUG:
		o->debug = true;
		log_debug_enabled = true;
		break;
	case OPT_FORWARD_MODE:
		if (strcmp(arg, "tap") && strcmp(arg, "splice")) {
			err_msg("--forward-mode takes \"tap\" or \"splice\", "
			        "not \"%s\"",
			        arg);
			return -1;
		}
		o->forward_mode =
		        strcmp(arg, "tap") ? FORWARD_SPLICE : FORWARD_TAP;
		break;
	case OPT_ENABLE_SANDBOX:
	case OPT_NO_SANDBOX:
		o->sandbox = c == OPT_ENABLE_SANDBOX;
		break;
	case OPT_ENABLE_SECCOMP:
	case OPT_NO_SECCOMP:
		o->seccomp = c == OPT_ENABLE_SECCOMP;
		break;
	case 'h':
		cli_usage(stdout, o->mode);
		return CLI_EXIT_OK;
	case 'v':
		version_print(stdout);
		return CLI_EXIT_OK;
	default:
		err_msg("unhandled option %d", c);
		return -1;
	}
	return 0;
}

/**
 * parse_target() - take PID|PATH and TAPNAME from the positional arguments
 * @o:		options being built
 * @argc:	number of positional arguments
 * @argv:	positional arguments
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int parse_target(struct opts *o, int argc, char **argv)
{
	unsigned long v;
	struct stat st;

	if (argc < 2) {
		err_msg("missing %s: expected PID|PATH TAPNAME",
		        argc ? "TAPNAME" : "PID|PATH and TAPNAME");
		return -1;
	}
	if (argc > 2)
		err_msg("warning: too many arguments, ignoring \"%s\"...",
		        argv[2]);
	if (o->netns_type == NETNS_PID) {
		if (parse_uint(argv[0], 1, INT_MAX, &v)) {
			err_msg("PID must be a positive integer: %s", argv[0]);
			return -1;
		}
		o->pid = (pid_t)v;
	} else {
		if (strlen(argv[0]) >= sizeof(o->netns_path) ||
		    stat(argv[0], &st)) {
			err_errno(errno ? errno : ENAMETOOLONG,
			          "existing path expected when "
			          "--netns-type=path: %s",
			          argv[0]);
			return -1;
		}
		strcpy(o->netns_path, argv[0]);
	}
	if (!argv[1][0] || strlen(argv[1]) >= IFNAMSIZ ||
	    strpbrk(argv[1], "/: \t\n")) {
		err_msg("bad TAPNAME \"%s\": 1-%d characters, no '/', ':' or "
		        "spaces",
		        argv[1], IFNAMSIZ - 1);
		return -1;
	}
	strcpy(o->ifname, argv[1]);
	return 0;
}

/**
 * cli_getopt_error() - one line for an unknown option or missing argument,
 *			in getopt's words (podman matches them)
 * @c:		'?' (unknown option) or ':' (missing argument)
 * @arg:	the offending argv element
 * @help:	the command whose --help lists the options
 */
void cli_getopt_error(int c, const char *arg, const char *help)
{
	/* In a cluster such as -6cm, name the option, not the cluster. */
	if (c == ':' && arg[1] != '-')
		err_msg("option '-%c' requires an argument (see %s --help)",
		        optopt, help);
	else if (c == ':')
		err_msg("option '%s' requires an argument (see %s --help)", arg,
		        help);
	/* glibc sets optopt for an unknown short option only; within a
	 * cluster it has not moved past it, so @arg may be the argument
	 * before.
	 */
	else if (optopt)
		err_msg("unrecognized option '-%c' (see %s --help)", optopt,
		        help);
	else
		err_msg("unrecognized option '%s' (see %s --help)", arg, help);
}

/**
 * cli_env_defaults() - TAPIR_QUEUES and TAPIR_MAX_FLOWS as the defaults of
 *			--queues and --max-flows
 * @o:		options, defaults filled
 * @given:	bit per option given on the command line, which wins:
 *		CLI_GIVEN_QUEUES, CLI_GIVEN_MAX_FLOWS
 *
 * rootlesskit, podman and Docker start tapir with slirp4netns's or
 * pasta's flags only: the environment is how their users ask for these.
 *
 * Return: 0 on success or when unset, -1 after one error line
 */
int cli_env_defaults(struct opts *o, unsigned int given)
{
	const char *q = getenv("TAPIR_QUEUES");
	const char *m = getenv("TAPIR_MAX_FLOWS");

	if (!(given & CLI_GIVEN_QUEUES) && q && *q &&
	    parse_queues(q, &o->queues)) {
		err_msg("TAPIR_QUEUES must be an integer in 1..%d or \"auto\", "
		        "not \"%s\"",
		        TAPIR_MAX_QUEUES, q);
		return -1;
	}
	if (!(given & CLI_GIVEN_MAX_FLOWS) && m && *m &&
	    parse_max_flows(m, &o->max_flows)) {
		err_msg("TAPIR_MAX_FLOWS must be an integer in 1..%u, not "
		        "\"%s\"",
		        TAPIR_MAX_FLOWS, m);
		return -1;
	}
	return 0;
}

/**
 * check_inherited_fd() - one of -e and -r names an fd the caller left open
 * @what:	"exit-fd" or "ready-fd"
 * @fd:		its value, or -1
 *
 * Checked before tapir opens anything: a closed fd's number would go to
 * one of tapir's own, and "1" into its own pipe. An fd tapir opened
 * itself (the log's copy of stderr) is close-on-exec; an inherited one
 * is not.
 *
 * Return: 0, or -1 after one error line
 */
static int check_inherited_fd(const char *what, int fd)
{
	int flags;

	if (fd < 0)
		return 0;
	flags = fcntl(fd, F_GETFD);
	if (flags >= 0 && !(flags & FD_CLOEXEC))
		return 0;
	err_errno(EBADF, "%s %d is not an open file descriptor of the caller",
	          what, fd);
	return -1;
}

/**
 * hold_hung_up() - put a pipe whose writer is gone at @fd
 * @fd:		an exit fd the caller left closed
 *
 * slirp4netns polls such an fd, sees POLLNVAL and exits once ready, and
 * callers rely on it. Left closed, its number could go to one of tapir's
 * own fds, which would never hang up: this one already has.
 *
 * Return: 0, or -1 after one error line
 */
static int hold_hung_up(int fd)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC)) {
		err_errno(errno, "exit-fd %d: a pipe to stand for it", fd);
		return -1;
	}
	close(p[1]);
	if (p[0] == fd)
		return 0;
	if (dup3(p[0], fd, O_CLOEXEC) < 0) {
		err_errno(errno, "exit-fd %d: a pipe to stand for it", fd);
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return 0;
}

/**
 * cli_check_fds() - -r names an fd the caller left open; an exit fd left
 *		     closed has hung up already
 * @o:		options, parsed
 *
 * Return: 0, or -1 after one error line
 */
int cli_check_fds(const struct opts *o)
{
	if (check_inherited_fd("ready-fd", o->ready_fd))
		return -1;
	if (o->exit_fd >= 0 && fcntl(o->exit_fd, F_GETFD) < 0)
		return hold_hung_up(o->exit_fd);
	return check_inherited_fd("exit-fd", o->exit_fd);
}

/**
 * cli_parse() - parse and validate the whole command line
 * @argc:	argument count, including the program (or subcommand) name
 * @argv:	arguments
 * @mode:	attach (PID|PATH TAPNAME) or run (-- CMD...)
 * @o:		filled on success
 *
 * Return: 0 on success, CLI_EXIT_OK after --help/--version, -1 after
 *	   printing exactly one error line
 */
int cli_parse(int argc, char **argv, enum cli_mode mode, struct opts *o)
{
	/* run stops at the command, so its own options are left alone. */
	const char *shortopts =
	        mode == CLI_RUN ? "+:ce:r:m:6a:p:hv" : ":ce:r:m:6a:p:hv";
	unsigned int given = 0;
	int c, ret;

	cli_opts_defaults(o, mode);
	/* 0, not 1: glibc then also forgets a cluster an error cut short
	 * and re-reads the '+' of @shortopts, which it caches otherwise.
	 */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, long_opts, NULL)) !=
	       -1) {
		if (c == '?' || c == ':') {
			cli_getopt_error(c, argv[optind - 1], "tapir");
			return -1;
		}
		ret = parse_option(o, c, optarg);
		if (ret)
			return ret;
		given |= c == OPT_QUEUES ? CLI_GIVEN_QUEUES : 0;
		given |= c == OPT_MAX_FLOWS ? CLI_GIVEN_MAX_FLOWS : 0;
	}
	/* After the options: --help works whatever it says, and the
	 * command line wins over it.
	 */
	if (cli_env_defaults(o, given))
		return -1;
	if (o->ipv6 && o->mtu < TAPIR_IPV6_MTU_MIN) {
		err_msg("--enable-ipv6 needs --mtu %d or more (IPv6's "
		        "minimum), not %u",
		        TAPIR_IPV6_MTU_MIN, o->mtu);
		return -1;
	}
	cli_derive_addresses(o);
	cli_default_guest6(o);
	if (o->mac_set && !o->configure) {
		err_msg("--macaddress cannot be specified when --configure or "
		        "-c is not specified");
		return -1;
	}
	if (mode == CLI_RUN) {
		if (optind >= argc) {
			err_msg("run: missing the command to run");
			return -1;
		}
		if (o->netns_type == NETNS_PATH || o->userns_path[0]) {
			err_msg("run: --netns-type and --userns-path do not "
			        "apply; run makes its own namespaces");
			return -1;
		}
		o->run_argv = argv + optind;
		return 0;
	}
	return parse_target(o, argc - optind, argv + optind);
}
