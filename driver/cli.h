/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - command line: slirp4netns-compatible options plus tapir's own
 */
#ifndef TAPIR_CLI_H
#define TAPIR_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/types.h>
#include <sys/un.h>

#include "cond_spec.h"

#define TAPIR_MTU_MIN 68
#define TAPIR_MTU_MAX 65521
/* Below it the kernel turns IPv6 off on a link (RFC 8200). */
#define TAPIR_IPV6_MTU_MIN 1280
#define TAPIR_MAX_QUEUES 16
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
 * @host_addr:	host address to listen on (INADDR_ANY by default)
 * @host_port:	host port, 1..65535
 * @guest_port:	port in the namespace, 1..65535
 */
struct publish {
	bool udp;
	struct in_addr host_addr;
	uint16_t host_port;
	uint16_t guest_port;
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
 * @map_guest4:		pasta's --map-guest-addr: this address reaches
 *			@host4, or 0.0.0.0
 * @host4:		the host's own address on its outbound interface
 * @copy6:		pasta's IPv6 addressing: the guest has @guest6/@prefix6,
 *			the host's own, routed via @gw6, the host's gateway;
 *			the prefix stands for the host's network (NDP), and
 *			without it IPv6 is fd00::/64
 * @guest6:		with @copy6, the guest's IPv6 address
 * @prefix6:		with @copy6, its prefix length
 * @gw6:		with @copy6, the IPv6 gateway (link-local or not)
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
 * @conditions:	--conditions rules, put in force at start (cond.c)
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
	struct in_addr map_guest4;
	struct in_addr host4;
	bool copy6;
	struct in6_addr guest6;
	unsigned int prefix6;
	struct in6_addr gw6;
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
	struct cond_set conditions;
};

/* Returned by cli_parse() when --help or --version was handled. */
#define CLI_EXIT_OK 1

int cli_parse(int argc, char **argv, enum cli_mode mode, struct opts *o);
int cli_check_fds(const struct opts *o);
void cli_usage(FILE *f, enum cli_mode mode);
int cli_parse_cidr(const char *s, struct in_addr *net, unsigned int *prefix,
                   char *why, size_t whylen);
int cli_parse_mac(const char *s, uint8_t mac[6]);
int cli_resolve_outbound(const char *s, int family, void *out);
int cli_parse_publish(const char *s, struct publish *p, char *why,
                      size_t whylen);
void cli_opts_defaults(struct opts *o, enum cli_mode mode);
int cli_queues_from_env(struct opts *o);
void cli_derive_addresses(struct opts *o);
unsigned int cli_auto_txqueuelen(unsigned int mtu);
unsigned int cli_auto_queues(long online);
int cli_parse_uint(const char *s, unsigned long min, unsigned long max,
                   unsigned long *out);
void cli_getopt_error(int c, const char *arg, const char *help);

#endif /* TAPIR_CLI_H */
