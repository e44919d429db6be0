/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pasta's command line, as podman, rootlesskit and Docker write it
 */
#ifndef TAPIR_PASTA_CLI_H
#define TAPIR_PASTA_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/types.h>

#include "pasta_ports.h"

/* pasta's largest MTU (and its default): 65535 minus headers, rounded. */
#define PASTA_MTU_MAX 65520

/**
 * struct pasta_addr - an address option of either family, once per family
 * @v4_set:	@v4 given
 * @v4:		IPv4 address
 * @v6_set:	@v6 given
 * @v6:		IPv6 address
 */
struct pasta_addr {
	bool v4_set;
	struct in_addr v4;
	bool v6_set;
	struct in6_addr v6;
};

/**
 * struct pasta_opts - everything pasta's command line asked for, validated
 * @config_net:		--config-net: addresses, routes, MTU, link up
 * @foreground:		-f: don't fork to the background
 * @quiet:		-q: no informational messages
 * @no_dhcp:		--no-dhcp
 * @no_dhcpv6:		--no-dhcpv6
 * @no_ndp:		--no-ndp
 * @no_ra:		--no-ra
 * @no_map_gw:		--no-map-gw: the gateway is not host loopback
 * @host_lo_to_ns_lo:	--host-lo-to-ns-lo
 * @ipv4_only:		-4
 * @ipv6_only:		-6
 * @ifname:		-I, or empty for the host's outbound interface's name
 * @mtu:		-m, or 0 for the default (PASTA_MTU_MAX)
 * @addr:		-a, per family
 * @prefix4:		-n as an IPv4 prefix length, or -1
 * @gw:			-g, per family
 * @dns_forward:	--dns-forward, per family
 * @map_guest:		--map-guest-addr, per family
 * @map_guest_none:	--map-guest-addr none
 * @map_host_lo:	--map-host-loopback, per family
 * @map_host_lo_none:	--map-host-loopback none
 * @tcp:		-t, host to namespace
 * @udp:		-u
 * @tcp_ns:		-T, namespace to host loopback
 * @udp_ns:		-U
 * @netns:		--netns path (a name is under /run/netns), or empty
 * @userns:		--userns path, or empty
 * @pidfile:		-P, or empty
 * @pid:		PID whose namespaces to join, or 0
 * @cmd:		command to run in new namespaces, or NULL
 * @version:	--version came, and ended the parse
 */
struct pasta_opts {
	bool config_net;
	bool foreground;
	bool quiet;
	bool no_dhcp;
	bool no_dhcpv6;
	bool no_ndp;
	bool no_ra;
	bool no_map_gw;
	bool host_lo_to_ns_lo;
	bool ipv4_only;
	bool ipv6_only;
	char ifname[IFNAMSIZ];
	unsigned int mtu;
	struct pasta_addr addr;
	int prefix4;
	struct pasta_addr gw;
	struct pasta_addr dns_forward;
	struct pasta_addr map_guest;
	bool map_guest_none;
	struct pasta_addr map_host_lo;
	bool map_host_lo_none;
	struct pasta_ports tcp;
	struct pasta_ports udp;
	struct pasta_ports tcp_ns;
	struct pasta_ports udp_ns;
	char netns[PATH_MAX];
	char userns[PATH_MAX];
	char pidfile[PATH_MAX];
	pid_t pid;
	char **cmd;
	bool version;
};

int pasta_cli_parse(int argc, char **argv, struct pasta_opts *po);
void pasta_cli_usage(FILE *f);

#endif /* TAPIR_PASTA_CLI_H */
