// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - pasta's options beyond the layout and the forwards, onto tapir's
 *
 * pasta.c turns what podman, rootlesskit and Docker pass into tapir's
 * options; this file does the same for the rest of pasta(1), which
 * containers.conf's pasta_options may carry: logging, capture, MACs,
 * outbound addresses, the namespace target's variants, and the checks
 * that need the system (interfaces, who we are). What the datapath reads
 * itself (--no-tcp, -M, DHCP's contents, --dns-host, --freebind) stays in
 * struct pasta_opts, which every context reaches as c->o->pasta.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>

#include "driver/core/log.h"
#include "driver/front/pasta_apply.h"

/**
 * outbound_if() - --outbound-if4 or --outbound-if6: the interface's address
 * @name:	interface, or empty for none
 * @family:	AF_INET or AF_INET6
 * @set:	set if @name was given
 * @out:	struct in_addr or struct in6_addr, filled
 *
 * pasta binds its sockets to the interface (SO_BINDTODEVICE); tapir binds
 * them to its address, as slirp4netns's --outbound-addr=IFNAME does,
 * which needs no privilege.
 *
 * Return: 0, or -1 after one error line
 */
static int outbound_if(const char *name, int family, bool *set, void *out)
{
	if (!name[0])
		return 0;
	if (!if_nametoindex(name) || cli_resolve_outbound(name, family, out)) {
		err_msg("--outbound-if%c %s: no such interface with an IPv%c "
		        "address",
		        family == AF_INET ? '4' : '6', name,
		        family == AF_INET ? '4' : '6');
		return -1;
	}
	*set = true;
	return 0;
}

/**
 * apply_outbound() - -o and --outbound-if4/6: where outbound flows leave from
 * @po:		pasta's options
 * @o:		tapir's options: outbound4 and outbound6 set
 *
 * An interface's address comes after -o's of the same family, as pasta's
 * binding to the interface comes on top of the address.
 *
 * Return: 0, or -1 after one error line
 */
static int apply_outbound(const struct pasta_opts *po, struct opts *o)
{
	if (po->outbound.v4_set) {
		o->outbound4_set = true;
		o->outbound4 = po->outbound.v4;
	}
	if (po->outbound.v6_set) {
		o->outbound6_set = true;
		o->outbound6 = po->outbound.v6;
	}
	if (!po->outbound.v4_set &&
	    outbound_if(po->outbound_if4, AF_INET, &o->outbound4_set,
	                &o->outbound4))
		return -1;
	if (!po->outbound.v6_set &&
	    outbound_if(po->outbound_if6, AF_INET6, &o->outbound6_set,
	                &o->outbound6))
		return -1;
	return 0;
}

/**
 * apply_target() - --netns-only and --no-netns-quit
 * @po:		pasta's options
 * @o:		tapir's options, the target set
 *
 * --netns-only joins a PID's network namespace as a path: no user
 * namespace is joined then. --no-netns-quit stops watching a --netns file
 * and a PID target's exit.
 */
static void apply_target(const struct pasta_opts *po, struct opts *o)
{
	if (po->netns_only && o->netns_type == NETNS_PID) {
		o->netns_type = NETNS_PATH;
		snprintf(o->netns_path, sizeof(o->netns_path),
		         "/proc/%d/ns/net", (int)o->pid);
	}
	if (po->no_netns_quit) {
		o->watch_path[0] = '\0';
		o->no_target_quit = true;
	}
}

/**
 * apply_runas() - --runas: as root, the user tapir serves as once set up;
 *		   as anyone else, only that user itself can be asked for
 * @po:		pasta's options
 * @o:		tapir's options: runas, runas_uid and runas_gid set
 *
 * Return: 0, or -1 after one error line
 */
static int apply_runas(const struct pasta_opts *po, struct opts *o)
{
	if (!po->runas)
		return 0;
	if (!geteuid()) {
		o->runas = true;
		o->runas_uid = po->runas_uid;
		o->runas_gid = po->runas_gid;
		return 0;
	}
	if (po->runas_uid == geteuid() && po->runas_gid == getegid())
		return 0;
	err_msg("--runas %u:%u: only root can become another user",
	        (unsigned int)po->runas_uid, (unsigned int)po->runas_gid);
	return -1;
}

/**
 * pasta_apply() - the rest of pasta's options onto tapir's
 * @po:		pasta's options, parsed
 * @o:		tapir's options, from pasta.c's layout and target
 *
 * Return: 0, or -1 after one error line
 */
int pasta_apply(const struct pasta_opts *po, struct opts *o)
{
	if (apply_runas(po, o) || apply_outbound(po, o))
		return -1;
	if (po->debug) {
		o->debug = true;
		log_debug_enabled = true;
	}
	if (po->pcap[0])
		snprintf(o->pcap, sizeof(o->pcap), "%s", po->pcap);
	if (po->ns_mac_set) {
		o->mac_set = true;
		memcpy(o->mac, po->ns_mac, 6);
	}
	/* The bypass is what brings loopback clients to loopback. */
	if (po->no_splice)
		o->host_lo_to_ns_lo = false;
	apply_target(po, o);
	return 0;
}

/**
 * pasta_copy_ifindex() - the host interface pasta's layout is copied from
 * @po:		pasta's options
 * @family:	AF_INET or AF_INET6
 *
 * -i for both families; else --outbound-if4 or --outbound-if6 for its
 * own, as pasta(1) says.
 *
 * Return: its index, 0 for the default route's, or -1 after one error line
 */
int pasta_copy_ifindex(const struct pasta_opts *po, int family)
{
	const char *name = po->ifname_copy[0]  ? po->ifname_copy
	                   : family == AF_INET ? po->outbound_if4
	                                       : po->outbound_if6;
	unsigned int idx;

	if (!name[0])
		return 0;
	idx = if_nametoindex(name);
	if (!idx) {
		err_errno(errno, "host interface %s", name);
		return -1;
	}
	return (int)idx;
}

/**
 * pasta_log_open() - -l: log to a file, --log-size bytes at most
 * @po:		pasta's options
 *
 * Opened before the sandbox hides the path; lines go to stderr as well
 * until the daemon lets go of it.
 *
 * Return: 0, or -1 after one error line
 */
int pasta_log_open(const struct pasta_opts *po)
{
	int err;

	if (!po->log_file[0])
		return 0;
	err = log_to_file(po->log_file, po->log_size);
	if (err) {
		err_errno(err, "open log file %s", po->log_file);
		return -1;
	}
	return 0;
}
