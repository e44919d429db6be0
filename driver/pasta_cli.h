/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pasta's command line, as podman, rootlesskit and Docker write it
 */
#ifndef TAPIR_PASTA_CLI_H
#define TAPIR_PASTA_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/types.h>

#include "pasta_ports.h"

/* pasta's largest MTU (and its default): 65535 minus headers, rounded. */
#define PASTA_MTU_MAX 65520
/* -D addresses kept per family, as glibc reads at most three (MAXNS). */
#define PASTA_DNS_MAX 3
/* One DHCP option's value: -S's list, encoded, and -H. */
#define PASTA_OPTION_MAX 255
/* --log-size: pasta's least, and its default. */
#define PASTA_LOG_SIZE_MIN 40960
#define PASTA_LOG_SIZE_DEFAULT (1UL << 20)

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
 * @debug:		-d, --debug or --trace
 * @log_file:		-l, or empty
 * @log_size:		--log-size, bytes (PASTA_LOG_SIZE_DEFAULT if not given)
 * @runas:		--runas given
 * @runas_uid:		its uid
 * @runas_gid:		its gid
 * @pcap:		-p, or empty
 * @mac_set:		-M given
 * @mac:		-M: tapir's own MAC toward the guest
 * @ns_mac_set:		--ns-mac-addr given
 * @ns_mac:		--ns-mac-addr: the namespace interface's MAC
 * @ifname_copy:	-i: the host interface to copy from, or empty
 * @outbound:		-o, per family
 * @outbound_if4:	--outbound-if4, or empty
 * @outbound_if6:	--outbound-if6, or empty
 * @dns_host:		--dns-host, per family
 * @dns_none:		-D none
 * @dns4:		-D, IPv4 ones
 * @n_dns4:		entries in @dns4
 * @dns6:		-D, IPv6 ones
 * @n_dns6:		entries in @dns6
 * @dhcp_dns:		--dhcp-dns (and not a later --no-dhcp-dns)
 * @dhcp_search:	--dhcp-search (and not a later --no-dhcp-search)
 * @search:		-S, in DHCP option 119's encoding (RFC 3397)
 * @search_len:		bytes in @search; 0 for none
 * @hostname:		-H, or empty
 * @fqdn:		--fqdn, in DNS's encoding, as DHCP option 81 carries it
 * @fqdn_len:		bytes in @fqdn; 0 for none
 * @no_tcp:		--no-tcp
 * @no_udp:		--no-udp
 * @no_icmp:		--no-icmp
 * @freebind:		--freebind
 * @netns_only:		--netns-only
 * @no_netns_quit:	--no-netns-quit
 * @no_copy_routes:	--no-copy-routes (what tapir does anyway)
 * @no_copy_addrs:	--no-copy-addrs (likewise)
 * @no_splice:		--no-splice
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
	bool debug;
	char log_file[PATH_MAX];
	unsigned long log_size;
	bool runas;
	uid_t runas_uid;
	gid_t runas_gid;
	char pcap[PATH_MAX];
	bool mac_set;
	uint8_t mac[6];
	bool ns_mac_set;
	uint8_t ns_mac[6];
	char ifname_copy[IFNAMSIZ];
	struct pasta_addr outbound;
	char outbound_if4[IFNAMSIZ];
	char outbound_if6[IFNAMSIZ];
	struct pasta_addr dns_host;
	bool dns_none;
	struct in_addr dns4[PASTA_DNS_MAX];
	unsigned int n_dns4;
	struct in6_addr dns6[PASTA_DNS_MAX];
	unsigned int n_dns6;
	bool dhcp_dns;
	bool dhcp_search;
	uint8_t search[PASTA_OPTION_MAX];
	size_t search_len;
	char hostname[PASTA_OPTION_MAX + 1];
	uint8_t fqdn[PASTA_OPTION_MAX - 3];
	size_t fqdn_len;
	bool no_tcp;
	bool no_udp;
	bool no_icmp;
	bool freebind;
	bool netns_only;
	bool no_netns_quit;
	bool no_copy_routes;
	bool no_copy_addrs;
	bool no_splice;
};

int pasta_cli_parse(int argc, char **argv, struct pasta_opts *po);
void pasta_cli_usage(FILE *f);

#endif /* TAPIR_PASTA_CLI_H */
