// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - run as pasta: pasta's options onto tapir's, and pasta's lifecycle
 *
 * podman 5, rootlesskit 2 and Docker rootless run "pasta"; tapir answers
 * to that name (a link or copy, or `tapir pasta ARGS`). pasta_cli.c parses
 * the command line; here it becomes struct opts, and the process behaves
 * as pasta does for its callers (../shared/reference/pasta-contract.md):
 * - without --foreground the first process returns, 0 only once the
 *   interface is configured, and the one that stays holds none of its
 *   caller's stdio;
 * - --pid gets the PID of the process that stays, as the caller sees it;
 * - a PID target, or a --netns file, going away ends it.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <sys/wait.h>

#include "driver/front/cli.h"
#include "driver/core/ctx.h"
#include "driver/core/inany.h"
#include "driver/sandbox/fds.h"
#include "driver/sandbox/isolation.h"
#include "driver/host/lifecycle.h"
#include "driver/core/log.h"
#include "driver/host/netlink.h"
#include "driver/front/loop.h"
#include "driver/front/pasta.h"
#include "driver/front/pasta_apply.h"
#include "driver/front/pasta_cli.h"
#include "driver/front/run.h"
#include "driver/sandbox/runas.h"
#include "driver/host/version.h"

/**
 * classful_prefix() - the prefix length pasta takes for -a without -n
 * @a:		the address
 *
 * Return: 8, 16 or 24 by the address's class
 */
static unsigned int classful_prefix(struct in_addr a)
{
	uint32_t h = ntohl(a.s_addr);

	if (IN_CLASSA(h))
		return 8;
	return IN_CLASSB(h) ? 16 : 24;
}

/**
 * first_host_but() - the network's first host address other than @not
 * @net:	network address
 * @not:	address to avoid
 *
 * Return: the address
 */
static struct in_addr first_host_but(struct in_addr net, struct in_addr not )
{
	struct in_addr a = {htonl(ntohl(net.s_addr) + 1)};

	if (a.s_addr == not .s_addr)
		a.s_addr = htonl(ntohl(net.s_addr) + 2);
	return a;
}

/**
 * host_address() - whether @a may be a host of its /@plen network
 * @a:		address
 * @plen:	prefix length, 1..32
 *
 * Return: false for the network and broadcast addresses of a /30 or
 *	   wider; any address of a /31 or /32 (RFC 3021) is a host
 */
static bool host_address(struct in_addr a, unsigned int plen)
{
	uint32_t hostbits = plen >= 31 ? 0 : ~0U >> plen;
	uint32_t h = ntohl(a.s_addr) & hostbits;

	return plen >= 31 || (h && h != hostbits);
}

/**
 * struct host_if - the host's outbound interface, as pasta copies it
 * @name:	its name
 * @addr:	its first global IPv4 address
 * @plen:	that address's prefix length
 * @gw:		the default route's gateway, or 0.0.0.0 if on-link
 */
struct host_if {
	char name[IFNAMSIZ];
	struct in_addr addr;
	unsigned int plen;
	struct in_addr gw;
};

/**
 * host_outbound() - find the interface of the host's IPv4 default route
 * @h:		filled; zeroed if there is none
 * @ifindex:	the interface to copy (pasta's -i), or 0 for the route's
 * @quiet:	say nothing if there is none (only its name was wanted)
 *
 * Return: 0, or -errno (after one error line unless @quiet):
 *	   -ENETUNREACH if the host has no IPv4 default route
 */
static int host_outbound(struct host_if *h, int ifindex, bool quiet)
{
	struct route_default r;
	struct nl nl;
	int ret;

	if ((ret = nl_open(&nl))) {
		if (!quiet)
			err_errno(-ret, "open rtnetlink socket");
		return ret;
	}
	ret = route_get_default_on(&nl, AF_INET, ifindex, &r);
	if (!ret)
		ret = addr_get(&nl, r.ifindex, AF_INET, &h->addr, &h->plen);
	nl_close(&nl);
	if (!ret && !if_indextoname((unsigned int)r.ifindex, h->name))
		ret = -errno;
	if (ret) {
		memset(h, 0, sizeof(*h));
		if (!quiet)
			err_errno(-ret, "the host's IPv4 default route and its "
			                "interface's address (give -a, -n and "
			                "-g)");
		return ret;
	}
	h->gw = r.gw.v4;
	return 0;
}

/**
 * struct host_if6 - the host's IPv6, as pasta copies it
 * @name:	the IPv6 default route's interface, or empty
 * @copy:	@addr, @plen and @gw are set: the route has a gateway, and
 *		its interface a global address
 * @addr:	that interface's first global IPv6 address
 * @plen:	its prefix length
 * @gw:		the route's gateway
 */
struct host_if6 {
	char name[IFNAMSIZ];
	bool copy;
	struct in6_addr addr;
	unsigned int plen;
	struct in6_addr gw;
};

/**
 * host_ipv6() - the host's IPv6 address and gateway, if it has them
 * @h:		filled; @h->copy false if there are none
 * @ifindex:	the interface to copy (pasta's -i), or 0 for the route's
 *
 * The address is the first global one of the IPv6 default route's
 * interface; a host without either (or with an on-link default route)
 * leaves the guest tapir's fd00::/64 (without -a and -g), through which
 * it still reaches IPv6 hosts.
 *
 * Return: true if the host has an IPv6 default route (copied or not)
 */
static bool host_ipv6(struct host_if6 *h, int ifindex)
{
	struct route_default r;
	struct nl nl;
	int ret;

	memset(h, 0, sizeof(*h));
	if (nl_open(&nl))
		return false;
	ret = route_get_default_on(&nl, AF_INET6, ifindex, &r);
	if (ret) {
		nl_close(&nl);
		return false;
	}
	if (!if_indextoname((unsigned int)r.ifindex, h->name))
		h->name[0] = '\0';
	ret = addr_get(&nl, r.ifindex, AF_INET6, &h->addr, &h->plen);
	nl_close(&nl);
	if (ret || IN6_IS_ADDR_UNSPECIFIED(&r.gw.v6) || !h->plen ||
	    h->plen > 128)
		return true;
	h->gw = r.gw.v6;
	h->copy = true;
	return true;
}

/**
 * set_layout6() - the guest's IPv6: the host's, copied, under -a and -g
 * @po:		pasta's options
 * @o:		tapir's options: copy6, guest6, prefix6 and gw6 set
 * @h:		the host's IPv6 (host_ipv6())
 *
 * As pasta: -a gives the guest a /64 of its own (the host's address is
 * then no longer shadowed), -g another gateway; what they don't say is
 * the host's. A gateway outside the prefix is reached on-link. Without
 * --config-net, -a or -g, nothing is copied: the caller's interface is
 * IPv4-only (rootlesskit), and IPv6 is tapir's fd00::/64.
 *
 * Return: 0, or -1 after one error line
 */
static int set_layout6(const struct pasta_opts *po, struct opts *o,
                       const struct host_if6 *h)
{
	bool given = po->addr.v6_set || po->gw.v6_set;
	char a[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN];

	if (h->copy && (po->config_net || given)) {
		o->guest6 = h->addr;
		o->prefix6 = h->plen;
		o->gw6 = h->gw;
		o->copy6 = true;
	} else if (given && !(po->addr.v6_set && po->gw.v6_set)) {
		err_msg("-%c: the host has no IPv6 default route with a "
		        "gateway "
		        "and an address to take the rest from: give -a and -g",
		        po->addr.v6_set ? 'a' : 'g');
		return -1;
	}
	if (!given) {
		if (!o->copy6)
			cli_default_guest6(o);
		return 0;
	}
	if (po->addr.v6_set) {
		o->guest6 = po->addr.v6;
		o->prefix6 = 64;
	}
	if (po->gw.v6_set)
		o->gw6 = po->gw.v6;
	o->copy6 = true;
	if (inany_equal(&o->guest6, &o->gw6) || inany_is_loopback(&o->gw6) ||
	    inany_is_loopback(&o->guest6) ||
	    IN6_IS_ADDR_LINKLOCAL(&o->guest6)) {
		err_msg("-a %s and -g %s: the guest and the gateway must be "
		        "two "
		        "addresses, the guest's global, neither loopback",
		        inany_ntop(&o->guest6, a), inany_ntop(&o->gw6, g));
		return -1;
	}
	return 0;
}

/**
 * pasta_addr_of() - an address option's value of one IP version
 * @a:		the option
 * @v4:		IPv4's, else IPv6's
 * @out:	filled (IPv4 as v4-mapped), :: if not given
 */
static void pasta_addr_of(const struct pasta_addr *a, bool v4,
                          struct in6_addr *out)
{
	*out = in6addr_any;
	if (v4 && a->v4_set)
		inany_from_v4(out, a->v4);
	else if (!v4 && a->v6_set)
		*out = a->v6;
}

/**
 * set_maps() - --dns-forward, --map-guest-addr and --map-host-loopback, of
 *		one IP version
 * @po:		pasta's options
 * @o:		tapir's options, the layout set: dns4 or dns6, and map4 or
 *		map6, filled
 * @v4:		IPv4's, else IPv6's
 * @host:	the host's own address of that version, or ::
 *
 * Where the guest has a copy of the host's address, the host's own
 * packets from it are mapped (fwd_guest_source()); --map-guest-addr
 * reaches it.
 *
 * Return: 0, or -1 after one error line
 */
static int set_maps(const struct pasta_opts *po, struct opts *o, bool v4,
                    const struct in6_addr *host)
{
	struct host_map *m = v4 ? &o->map4 : &o->map6;
	unsigned int plen = v4 ? o->prefix + 96 : o->prefix6;
	struct in6_addr guest, gw, dns;
	char t[INET6_ADDRSTRLEN];

	if (v4) {
		inany_from_v4(&guest, o->guest4);
		inany_from_v4(&gw, o->gw4);
	} else {
		guest = o->guest6;
		gw = o->gw6;
	}
	pasta_addr_of(&po->dns_forward, v4, &dns);
	pasta_addr_of(&po->map_guest, v4, &m->guest);
	pasta_addr_of(&po->map_host_lo, v4, &m->lo);
	if (inany_matches(&dns, &guest) || inany_matches(&dns, &gw) ||
	    inany_is_loopback(&dns)) {
		err_msg("--dns-forward %s: the guest's or the gateway's "
		        "address, or loopback",
		        inany_ntop(&dns, t));
		return -1;
	}
	if (!IN6_IS_ADDR_UNSPECIFIED(&m->guest) &&
	    (in6_same_prefix(&m->guest, &guest, plen) ||
	     inany_equal(&m->guest, &dns) || IN6_IS_ADDR_UNSPECIFIED(host))) {
		err_msg("--map-guest-addr %s: in the guest's network, the DNS "
		        "forwarder, or the host has no address of its IP "
		        "version",
		        inany_ntop(&m->guest, t));
		return -1;
	}
	if (inany_matches(&m->lo, &guest) || inany_matches(&m->lo, &dns) ||
	    inany_matches(&m->lo, &m->guest) || inany_is_loopback(&m->lo)) {
		err_msg("--map-host-loopback %s: the guest's address, the DNS "
		        "forwarder, --map-guest-addr's, or loopback",
		        inany_ntop(&m->lo, t));
		return -1;
	}
	if (!IN6_IS_ADDR_UNSPECIFIED(&m->guest) || inany_matches(host, &guest))
		m->own = *host;
	if (v4)
		o->dns4.s_addr = inany_is_v4(&dns) ? inany_v4(&dns).s_addr : 0;
	else
		o->dns6 = dns;
	return 0;
}

/**
 * ipv6_only_layout() - a guest without IPv4: pasta's -6, or a host with
 *			no IPv4 default route
 * @po:		pasta's options
 * @o:		tapir's options
 * @if6:	the interface to copy (pasta's -i), or 0 for the route's
 * @given:	-6 was given; else the host must have an IPv6 default route
 *
 * IPv6 is the host's, copied as in every mode (set_layout6()); IPv4 is
 * neither configured nor answered (no DHCP, no DNS forwarder), and
 * forwards take clients of both families to the guest's IPv6 address
 * (fwd_guest_target()). The IPv4 layout tapir keeps inside is
 * slirp4netns's, which no packet uses.
 *
 * Return: 0; 1 (quietly) if the host has no IPv6 default route and -6
 *	   was not given; -1 after one error line
 */
static int ipv6_only_layout(const struct pasta_opts *po, struct opts *o,
                            int if6, bool given)
{
	struct host_if6 h;

	if (!host_ipv6(&h, if6) && !given)
		return 1;
	if (o->mtu < TAPIR_IPV6_MTU_MIN) {
		err_msg("-m %u: IPv6 only needs an MTU of %d or more", o->mtu,
		        TAPIR_IPV6_MTU_MIN);
		return -1;
	}
	o->ipv6_only = true;
	o->no_dhcp = true;
	o->pasta_net = true;
	cli_derive_addresses(o);
	o->dns4.s_addr = 0;
	if (set_layout6(po, o, &h) ||
	    set_maps(po, o, false, h.copy ? &h.addr : &in6addr_any))
		return -1;
	o->disable_dns = !po->dns_forward.v6_set;
	if (!po->ifname[0] && h.name[0])
		snprintf(o->ifname, sizeof(o->ifname), "%s", h.name);
	return 0;
}

/**
 * given_layout() - -a, -n and -g, or the host's interface: the guest's
 *		    IPv4 network
 *
 * A gateway outside the guest's network (a /32 host's, as clouds give
 * them, or the host's own on-link route) is reached on-link, as there.
 * @po:		pasta's options
 * @h:		the host's interface, used where no -a came
 * @o:		tapir's options: net, prefix, guest4 and gw4 set
 *
 * Return: 0, or -1 after one error line
 */
static int given_layout(const struct pasta_opts *po, const struct host_if *h,
                        struct opts *o)
{
	struct in_addr addr = po->addr.v4_set ? po->addr.v4 : h->addr;
	unsigned int plen = po->prefix4 >= 0  ? (unsigned int)po->prefix4
	                    : po->addr.v4_set ? classful_prefix(addr)
	                                      : h->plen;
	uint32_t mask;

	if (plen < 1 || plen > 32) {
		err_msg("-n: prefix length %u: 1..32", plen);
		return -1;
	}
	mask = plen == 32 ? ~0U : htonl(~0U << (32 - plen));
	o->prefix = plen;
	o->guest4 = addr;
	o->net.s_addr = o->guest4.s_addr & mask;
	if (po->gw.v4_set)
		o->gw4 = po->gw.v4;
	else if (!po->addr.v4_set && h->gw.s_addr)
		o->gw4 = h->gw;
	else if (plen <= 30)
		o->gw4 = first_host_but(o->net, o->guest4);
	else
		goto no_gateway;
	/* Outside the network, the gateway is on-link: as on a /32 host
	 * whose route pasta copies; a /30 or wider one given with -a is a
	 * mistake.
	 */
	if (!host_address(o->guest4, plen) ||
	    o->gw4.s_addr == o->guest4.s_addr ||
	    (ntohl(o->gw4.s_addr) >> 24) == 127 ||
	    ((o->gw4.s_addr & mask) == o->net.s_addr &&
	     !host_address(o->gw4, plen)) ||
	    ((o->gw4.s_addr & mask) != o->net.s_addr && po->addr.v4_set &&
	     plen <= 30)) {
		char a[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &o->guest4, a, sizeof(a));
		inet_ntop(AF_INET, &o->gw4, g, sizeof(g));
		err_msg("-a %s/%u and -g %s: the guest and the gateway must be "
		        "two host addresses of one network",
		        a, plen, g);
		return -1;
	}
	return 0;
no_gateway:
	err_msg("a /%u network without a gateway (the host's default route "
	        "has none): give -g",
	        plen);
	return -1;
}

/**
 * set_layout() - the guest's addresses, gateway and DNS forwarder
 * @po:		pasta's options
 * @o:		tapir's options
 *
 * As pasta: what -a, -n and -g don't say is copied from the host's
 * outbound interface, its name too (without -I). IPv6 is the host's too
 * (set_layout6()), IPv4's -a given or not, as podman expects of pasta.
 *
 * Return: 0, or -1 after one error line
 */
static int set_layout(const struct pasta_opts *po, struct opts *o)
{
	int if4 = pasta_copy_ifindex(po, AF_INET);
	int if6 = pasta_copy_ifindex(po, AF_INET6);
	struct in6_addr host4 = in6addr_any;
	struct host_if h = {0};
	struct host_if6 h6 = {0};
	int ret;

	if (if4 < 0 || if6 < 0)
		return -1;
	if (po->ipv6_only)
		return ipv6_only_layout(po, o, if6, true);
	bool need_host = !po->addr.v4_set || po->map_guest.v4_set;

	/* As pasta, a host without IPv4 serves IPv6 alone. */
	if (need_host && (ret = host_outbound(&h, if4, true))) {
		ret = ret == -ENETUNREACH && o->ipv6 && !po->addr.v4_set
		              ? ipv6_only_layout(po, o, if6, false)
		              : 1;
		if (!ret && !po->quiet)
			info_msg("the host has no IPv4 default route: IPv6 "
			         "only, as with -6");
		if (ret <= 0)
			return ret;
		host_outbound(&h, if4, false);
		return -1;
	}
	/* With -a, only the name is copied; without such an interface, as
	 * pasta, tap0.
	 */
	if (!need_host && !po->ifname[0])
		host_outbound(&h, if4, true);
	if (given_layout(po, &h, o))
		return -1;
	if (h.addr.s_addr)
		inany_from_v4(&host4, h.addr);
	if (o->ipv6) {
		/* Whether it has a route at all matters to -6 only. */
		(void)host_ipv6(&h6, if6);
		if (set_layout6(po, o, &h6))
			return -1;
	} else {
		cli_default_guest6(o);
	}
	if (!po->ifname[0] && h.name[0])
		snprintf(o->ifname, sizeof(o->ifname), "%s", h.name);
	o->pasta_net = true;
	if (set_maps(po, o, true, &host4) ||
	    (o->ipv6 &&
	     set_maps(po, o, false, h6.copy ? &h6.addr : &in6addr_any)))
		return -1;
	/* Without --dns-forward pasta forwards no DNS address. */
	o->disable_dns =
	        !po->dns_forward.v4_set && !(o->ipv6 && po->dns_forward.v6_set);
	return 0;
}

/**
 * set_mappings() - --no-map-gw and --map-host-loopback none
 * @po:		pasta's options
 * @o:		tapir's options, the layout set (set_maps() took the
 *		addresses of --map-host-loopback)
 *
 * Without an address of either IP version standing for it, nothing
 * reaches the host's loopback.
 */
static void set_mappings(const struct pasta_opts *po, struct opts *o)
{
	o->disable_host_loopback = (po->no_map_gw || po->map_host_lo_none) &&
	                           !po->map_host_lo.v4_set &&
	                           !po->map_host_lo.v6_set;
}

/**
 * set_target() - the namespace to serve: a PID, --netns, or a command
 * @po:		pasta's options
 * @o:		tapir's options
 */
static void set_target(const struct pasta_opts *po, struct opts *o)
{
	if (po->userns[0] && !po->cmd)
		strcpy(o->userns_path, po->userns);
	if (po->pid) {
		o->netns_type = NETNS_PID;
		o->pid = po->pid;
	} else if (po->netns[0]) {
		o->netns_type = NETNS_PATH;
		strcpy(o->netns_path, po->netns);
		/* podman removes it and sends nothing: our cue to go. */
		strcpy(o->watch_path, po->netns);
	} else {
		o->run_argv = po->cmd;
	}
}

/**
 * check_ports() - what of -t, -u, -T and -U tapir can't do
 * @po:		pasta's options
 *
 * -T and -U bind the namespace's loopback and reach the host's: an
 * address (or interface) of their own is not taken.
 *
 * Return: 0, or -1 after one error line
 */
static int check_ports(const struct pasta_opts *po)
{
	const struct pasta_ports *pp[] = {&po->tcp, &po->udp, &po->tcp_ns,
	                                  &po->udp_ns};
	static const char opt[] = "tuTU";

	for (int i = 0; i < 4; i++) {
		for (unsigned int j = 0; j < pp[i]->n; j++) {
			const struct pasta_range *r = &pp[i]->r[j];

			if (i >= 2 && r->addr_set) {
				err_msg("-%c: an address is not supported: "
				        "the namespace's 127.0.0.1 reaches "
				        "the host's",
				        opt[i]);
				return -1;
			}
		}
	}
	return 0;
}

/**
 * pasta_to_opts() - tapir's options for pasta's command line
 * @po:		pasta's options, parsed
 * @o:		filled
 *
 * Return: 0, or -1 after one error line
 */
static int pasta_to_opts(const struct pasta_opts *po, struct opts *o)
{
	if (check_ports(po))
		return -1;
	if (po->cmd && po->userns[0]) {
		err_msg("--userns can't be given with a command, which gets "
		        "new namespaces");
		return -1;
	}
	cli_opts_defaults(o, po->cmd ? CLI_RUN : CLI_ATTACH);
	if (cli_env_defaults(o, 0))
		return -1;
	o->pasta = po;
	o->configure = po->config_net;
	o->mtu = po->mtu ? po->mtu : PASTA_MTU_MAX;
	o->ipv6 = !po->ipv4_only;
	o->no_dhcp = po->no_dhcp;
	o->no_ra = po->no_ra;
	o->no_ndp = po->no_ndp;
	o->host_lo_to_ns_lo = po->host_lo_to_ns_lo;
	/* As pasta, which isolates itself whenever it runs. */
	o->sandbox = true;
	o->seccomp = true;
	snprintf(o->ifname, sizeof(o->ifname), "%s",
	         po->ifname[0] ? po->ifname : "tap0");
	set_target(po, o);
	if (set_layout(po, o))
		return -1;
	set_mappings(po, o);
	if (pasta_apply(po, o))
		return -1;
	/* Without --config-net the caller made the tap and configures it as
	 * we start (rootlesskit does not wait): making it again with more
	 * queues, as slirp4netns mode may, would pull it from under the
	 * caller. Said last, once the command line is known to be good.
	 */
	if (!po->config_net && o->queues > 1) {
		if (!po->quiet)
			info_msg("the caller's tap is single-queue: 1 queue, "
			         "not %u",
			         o->queues);
		o->queues = 1;
	}
	return 0;
}

/**
 * open_pidfile() - create the --pid file before the sandbox hides its path
 * @path:	file, or empty
 *
 * Return: an fd, -2 for none asked, or -1 after one error line
 */
static int open_pidfile(const char *path)
{
	int fd;

	if (!path[0])
		return -2;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	          0644);
	if (fd < 0)
		err_errno(errno, "open PID file %s", path);
	return fd;
}

/**
 * serve() - attach, configure, and run until an exit condition
 * @o:		options
 * @pidfd:	the --pid file, to write our PID once ready, or -2
 * @pidfile:	its name
 *
 * Return: exit status
 */
static int serve(const struct opts *o, int pidfd, const char *pidfile)
{
	struct ctx c;
	int ret = 1;

	if (!loop_prepare(&c, o) &&
	    (pidfd < 0 || !lifecycle_write_pid(pidfd, getpid(), pidfile)))
		ret = loop_run(&c);
	else if (pidfd >= 0 && unlink(pidfile))
		debug_msg("remove PID file %s: %s", pidfile, strerror(errno));
	if (pidfd >= 0)
		close(pidfd);
	loop_cleanup(&c);
	return ret;
}

/**
 * wait_ready() - the first process: exit 0 once the daemon is ready
 * @child:	the daemon
 * @ready:	read end of its ready pipe
 * @pidfd:	the --pid file, or -2
 * @pidfile:	its name
 *
 * Return: 0, or the daemon's exit status (1 if it had none) after it
 *	   failed and said why on the shared stderr
 */
static int wait_ready(pid_t child, int ready, int pidfd, const char *pidfile)
{
	int st = 0, ret;
	ssize_t n;
	char b;

	do
		n = read(ready, &b, 1);
	while (n < 0 && errno == EINTR);
	close(ready);
	if (n == 1 &&
	    (pidfd < 0 || !lifecycle_write_pid(pidfd, child, pidfile)))
		return 0;
	if (n == 1)
		kill(child, SIGTERM);
	do
		ret = waitpid(child, &st, 0);
	while (ret < 0 && errno == EINTR);
	if (ret > 0 && WIFSIGNALED(st))
		err_msg("daemon %d killed by signal %d before it was ready",
		        (int)child, WTERMSIG(st));
	return ret > 0 && WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st)
	                                                   : 1;
}

/**
 * remove_pidfile() - remove the --pid file a daemon that never got ready
 *		      left empty
 * @pidfd:	the file, or -2 for none
 * @pidfile:	its name
 *
 * Return: 1, the exit status of a failed start
 */
static int remove_pidfile(int pidfd, const char *pidfile)
{
	if (pidfd >= 0 && unlink(pidfile))
		err_errno(errno, "remove PID file %s", pidfile);
	return 1;
}

/**
 * background() - fork the daemon; the first process waits for it to be ready
 * @o:		options; the daemon's ready and detach fds are set here
 * @pidfd:	the --pid file, or -2
 * @pidfile:	its name
 *
 * Return: the daemon's exit status, in the daemon; the first process exits
 *	   here with 0 once the daemon is ready, or 1
 */
static int background(struct opts *o, int pidfd, const char *pidfile)
{
	int p[2], devnull, ret;
	pid_t pid;

	/* The daemon is pid 1 of a namespace of its own, as pasta's: the
	 * target's pidfd first, which its pid would not reach from there.
	 */
	if (lifecycle_open_target(o) || isolation_pid_namespace(o))
		return remove_pidfile(pidfd, pidfile);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || pipe2(p, O_CLOEXEC)) {
		err_errno(errno, "%s", devnull < 0 ? "open /dev/null" : "pipe");
		return remove_pidfile(pidfd, pidfile);
	}
	pid = fork();
	if (pid < 0) {
		err_errno(errno, "fork");
		return remove_pidfile(pidfd, pidfile);
	}
	if (pid > 0) {
		close(p[1]);
		close(devnull);
		ret = wait_ready(pid, p[0], pidfd, pidfile);
		/* Ours to remove: the daemon never got as far. */
		if (ret)
			remove_pidfile(pidfd, pidfile);
		/* Done, and out at once: any process we started now would
		 * be born in the daemon's PID namespace, where it cannot see
		 * us. LeakSanitizer's exit check is one (an ASan build): it
		 * could not stop us, and waited for ever.
		 */
		fflush(NULL);
		_exit(ret);
	}
	close(p[0]);
	/* Out of the caller's session: its terminal and process group. A
	 * forked child leads no group, so this cannot fail; if it did, the
	 * daemon would only share the caller's group.
	 */
	if (setsid() < 0)
		debug_msg("setsid: %s", strerror(errno));
	o->ready_fd = p[1];
	o->detach_fd = devnull;
	if (pidfd >= 0)
		close(pidfd);
	return serve(o, -2, pidfile);
}

/**
 * fill_stdio() - put /dev/null on any of fds 0-2 the caller left closed
 *
 * Return: 0, or -1 after one error line (if stderr works at all)
 */
static int fill_stdio(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= STDERR_FILENO)
		;
	if (fd < 0) {
		err_errno(errno, "open /dev/null");
		return -1;
	}
	close(fd);
	log_init();
	return 0;
}

/**
 * pasta_main() - tapir run as pasta
 * @argc:	argument count, argv[0] being "pasta"
 * @argv:	arguments
 *
 * Return: exit status: 0 once ready, 1 after one error line; with a
 *	   command, the command's (as `tapir run`)
 */
int pasta_main(int argc, char **argv)
{
	static struct pasta_opts po;
	static struct opts o;
	int ret, pidfd;

	/* Before anything is opened: a closed stdio fd would be taken by
	 * the ready pipe, and the caller's SIGCHLD of SIG_IGN would lose
	 * the daemon's status.
	 */
	if (fill_stdio() || signal(SIGCHLD, SIG_DFL) == SIG_ERR)
		return 1;
	ret = pasta_cli_parse(argc, argv, &po);
	if (ret < 0)
		return 1;
	if (po.version)
		version_print(stdout);
	if (ret)
		return 0;
	if (pasta_to_opts(&po, &o))
		return 1;
	/* As pasta: not even a command gets the caller's other fds. */
	fds_close_inherited(&o, -1);
	runas_default(&o, po.quiet);
	if (pasta_log_open(&po))
		return 1;
	pidfd = open_pidfile(po.pidfile);
	if (pidfd == -1)
		return 1;
	if (po.cmd) {
		/* Written once ready, before the command starts. */
		o.pid_fd = pidfd;
		o.pid_path = po.pidfile;
		ret = run_command(&o);
		if (pidfd >= 0)
			close(pidfd);
		return ret;
	}
	if (po.foreground)
		return serve(&o, pidfd, po.pidfile);
	return background(&o, pidfd, po.pidfile);
}
