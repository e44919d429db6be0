/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - every option, validated: what the front ends hand the datapath
 *
 * Data only: the command lines that fill it are the front ends' (cli.c,
 * pasta_cli.c, pasta_ports.c), and every layer below reads it.
 */
#ifndef TAPIR_OPTS_H
#define TAPIR_OPTS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/types.h>
#include <sys/un.h>

/* The rules --conditions gave (cond_spec.h), kept by the front end. */
struct cond_set;

/* Ranges one option's specs may add up to, after exclusions split them. */
#define PASTA_RANGES_MAX 256

enum pasta_ports_mode {
	PASTA_PORTS_UNSET, /* not given: the caller applies pasta's default */
	PASTA_PORTS_NONE,  /* "none" */
	PASTA_PORTS_AUTO,  /* "auto": whatever listens on the other side */
	PASTA_PORTS_LIST,  /* ranges ("all" is 1-65535) */
};

/**
 * struct pasta_range - host ports @first..@last go to @target and up
 * @addr_set:	bound to @addr only, not every address
 * @addr:	the address (IPv4 as v4-mapped IPv6)
 * @ifname:	bound to this interface too, or empty
 * @first:	first port, 1..65535
 * @last:	last port, @first..65535
 * @target:	the port @first goes to; @last goes to @target + @last - @first
 */
struct pasta_range {
	bool addr_set;
	struct in6_addr addr;
	char ifname[IFNAMSIZ];
	uint16_t first;
	uint16_t last;
	uint16_t target;
};

/**
 * struct pasta_ports - every spec of one option (-t, -u, -T or -U)
 * @mode:	what the specs asked for
 * @n:		entries in @r (PASTA_PORTS_LIST)
 * @r:		ranges, none overlapping another of the same address
 */
struct pasta_ports {
	enum pasta_ports_mode mode;
	unsigned int n;
	struct pasta_range r[PASTA_RANGES_MAX];
};

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

#define TAPIR_MTU_MIN 68
#define TAPIR_MTU_MAX 65521
/* Below it the kernel turns IPv6 off on a link (RFC 8200). */
#define TAPIR_IPV6_MTU_MIN 1280
#define TAPIR_MAX_QUEUES 16
/* --max-flows at most, and the ceiling a higher fd limit gives: the flow
 * table reserves address space (not memory) for this many per thread.
 */
#define TAPIR_MAX_FLOWS (1U << 22)
/* --queues auto: one queue per online CPU, up to this many. */
#define TAPIR_AUTO_QUEUES_MAX 8
#define TAPIR_TXQLEN_MAX 1000000
#define TAPIR_MAX_PUBLISH 64
#define API_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)

struct pasta_opts;

enum netns_type {
	NETNS_PID,
	NETNS_PATH,
};

/* How TCP port forwards reach the namespace (--forward-mode). */
enum forward_mode {
	FORWARD_TAP,    /* via the tap: the guest sees the client's address */
	FORWARD_SPLICE, /* socket inside the netns + splice(): fast, no source */
};

enum cli_mode {
	CLI_ATTACH, /* tapir [OPTION]... PID|PATH TAPNAME */
	CLI_RUN,    /* tapir run [OPTION]... -- CMD... */
};

/**
 * struct publish - one -p/--publish request
 * @udp:	UDP rather than TCP
 * @dual:	no address given: every address of both families (::
 *		taking IPv4 too, or 0.0.0.0 on a host without IPv6)
 * @host_addr:	host address to listen on (IPv4 as v4-mapped IPv6)
 * @host_port:	host port, 1..65535
 * @guest_port:	port in the namespace, 1..65535
 */
struct publish {
	bool udp;
	bool dual;
	struct in6_addr host_addr;
	uint16_t host_port;
	uint16_t guest_port;
};

/**
 * struct host_map - where pasta's addressing takes one IP version's guest
 *		     traffic to the host; IPv4 as v4-mapped IPv6, and ::
 *		     where there is none
 * @guest:	--map-guest-addr: this address reaches @own
 * @own:	the host's own address, where the guest's copy of it shadows
 *		it or @guest stands for it: its packets to the guest come
 *		from @guest, else from the gateway
 * @lo:		--map-host-loopback: this address, not the gateway, reaches
 *		the host's loopback
 */
struct host_map {
	struct in6_addr guest;
	struct in6_addr own;
	struct in6_addr lo;
};

/**
 * struct opts - everything the command line asked for, validated
 * @mode:		attach or run
 * @netns_type:		how ARG1 names the target
 * @pid:		target PID (NETNS_PID)
 * @netns_path:		target netns path (NETNS_PATH)
 * @userns_path:	--userns-path, or empty
 * @ifname:		tap name
 * @configure:		-c: addresses, routes and link state too
 * @exit_fd:		-e, or -1
 * @ready_fd:		-r, or -1
 * @mtu:		-m, 68..65521
 * @ipv6:		-6
 * @ipv6_only:		the guest has no IPv4 (pasta's -6, or a host
 *			without IPv4): none configured, no DHCP or DNS
 *			forwarder, and forwards reach the guest's IPv6
 *			address from clients of both families
 * @api_socket:		-a, or empty
 * @net:		--cidr network address (network byte order)
 * @prefix:		--cidr prefix length, 1..25 (pasta's -n: 1..30)
 * @guest4:		the guest's address: net+100, or pasta's -a
 * @gw4:		the gateway and host alias: net+2, or pasta's -g
 * @dns4:		the DNS forwarder: net+3, or pasta's --dns-forward
 * @no_dhcp:		pasta's --no-dhcp: DHCP requests go unanswered
 * @no_ra:		pasta's --no-ra: no router adverts
 * @no_ndp:		pasta's --no-ndp: no NDP answers at all
 * @pasta_net:		pasta's addressing: the guest's subnet stands for
 *			addresses outside (every one but the guest's is
 *			forwarded, and answered in ARP), and with
 *			@disable_host_loopback the gateway is one of them
 * @map4:		pasta's addressing: where IPv4 reaches the host
 * @map6:		likewise for IPv6
 * @copy6:		pasta's IPv6 addressing: the guest has @guest6/@prefix6,
 *			the host's own or -a's, routed via @gw6, the host's
 *			gateway or -g's; the prefix stands for the host's
 *			network (NDP), and without it IPv6 is fd00::/64
 * @guest6:		the guest's static IPv6 address: the host's or -a's
 *			with @copy6, else fd00::100 (cli_default_guest6())
 * @prefix6:		its prefix length
 * @gw6:		with @copy6, the IPv6 gateway (link-local or not)
 * @dns6:		pasta's --dns-forward for IPv6, or ::
 * @disable_host_loopback:	--disable-host-loopback
 * @host_lo_to_ns_lo:	pasta's --host-lo-to-ns-lo: forwards' clients on
 *			host loopback reach the namespace's loopback
 * @mac_set:		--macaddress given
 * @mac:		its value
 * @disable_dns:	--disable-dns
 * @outbound4_set:	--outbound-addr given
 * @outbound4:		its address, resolved from a literal or an interface
 * @outbound6_set:	--outbound-addr6 given
 * @outbound6:		its address, resolved likewise
 * @txqueuelen:		--txqueuelen, 0 = sized automatically
 * @offload:		--offload on|off
 * @queues:		--queues, 1..TAPIR_MAX_QUEUES (auto already resolved)
 * @max_flows:		--max-flows: TCP flows per datapath thread at most,
 *			UDP flows half as many; 0 = set by the fd limit
 * @debug:		--debug
 * @pcap:		--pcap file, or empty
 * @forward_mode:	--forward-mode tap|splice
 * @sandbox:		--enable-sandbox (default in run, off with --no-sandbox)
 * @seccomp:		--enable-seccomp (likewise)
 * @runas:		serve as @runas_uid and @runas_gid once set up
 *			(started as the real root: runas.c)
 * @runas_uid:		that uid
 * @runas_gid:		that gid
 * @npublish:		number of -p entries
 * @publish:		-p entries
 * @run_argv:		CLI_RUN: the command to run (NULL-terminated)
 * @detach_fd:		/dev/null, put over stdio and stderr's log once
 *			ready (pasta's background mode), or -1
 * @target_pidfd:	a pidfd on the target, opened before a PID namespace
 *			hid it (lifecycle_open_target()), or -1
 * @pid_fd:		CLI_RUN: our PID is written here once ready, before
 *			the command starts (pasta's --pid), or -1
 * @pid_path:		its name, for messages
 * @watch_path:		stop when this file is removed (pasta's --netns),
 *			or empty
 * @no_target_quit:	pasta's --no-netns-quit: the target's exit does not
 *			end tapir
 * @pasta:		pasta mode: its forwards (pasta_fwd.c), else NULL
 * @conditions:	--conditions rules, put in force at start (cond.c): the
 *			front end's own storage (cli.c)
 */
struct opts {
	enum cli_mode mode;
	enum netns_type netns_type;
	pid_t pid;
	char netns_path[PATH_MAX];
	char userns_path[PATH_MAX];
	char ifname[IFNAMSIZ];
	bool configure;
	int exit_fd;
	int ready_fd;
	unsigned int mtu;
	bool ipv6;
	bool ipv6_only;
	char api_socket[API_PATH_MAX];
	struct in_addr net;
	unsigned int prefix;
	struct in_addr guest4;
	struct in_addr gw4;
	struct in_addr dns4;
	bool no_dhcp;
	bool no_ra;
	bool no_ndp;
	bool pasta_net;
	struct host_map map4;
	struct host_map map6;
	bool copy6;
	struct in6_addr guest6;
	unsigned int prefix6;
	struct in6_addr gw6;
	struct in6_addr dns6;
	bool disable_host_loopback;
	bool host_lo_to_ns_lo;
	bool mac_set;
	uint8_t mac[6];
	bool disable_dns;
	bool outbound4_set;
	struct in_addr outbound4;
	bool outbound6_set;
	struct in6_addr outbound6;
	unsigned int txqueuelen;
	bool offload;
	unsigned int queues;
	unsigned int max_flows;
	bool debug;
	char pcap[PATH_MAX];
	enum forward_mode forward_mode;
	bool sandbox;
	bool seccomp;
	bool runas;
	uid_t runas_uid;
	gid_t runas_gid;
	unsigned int npublish;
	struct publish publish[TAPIR_MAX_PUBLISH];
	char **run_argv;
	int detach_fd;
	int target_pidfd;
	int pid_fd;
	const char *pid_path;
	char watch_path[PATH_MAX];
	bool no_target_quit;
	const struct pasta_opts *pasta;
	struct cond_set *conditions;
};

#endif /* TAPIR_OPTS_H */
