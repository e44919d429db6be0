/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - host port forwards: listeners, the forward table, -p at start-up
 */
#ifndef TAPIR_HOSTFWD_H
#define TAPIR_HOSTFWD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>

#include "driver/core/ctx.h"
#include "driver/host/nssock.h"

struct splice_state;

/* Listen backlog of TCP forwards (slirp4netns uses 1). */
#define HOSTFWD_BACKLOG 128

/**
 * struct hostfwd_spec - one port forward, as the API describes it
 * @id:		identifier, from 1, never reused; 0 until added
 * @udp:	UDP rather than TCP
 * @host_addr:	host address listened on (inany: IPv4 or IPv6)
 * @host_port:	host port, 1..65535
 * @guest_addr:	destination in the namespace (inany, IPv4)
 * @guest_port:	destination port, 1..65535
 * @dual:	@host_addr is "::" and takes IPv4 clients too (no
 *		IPV6_V6ONLY): pasta's forward of a port on every address
 * @ifname:	bound to this interface too (pasta's ADDR%IF/), or empty
 */
struct hostfwd_spec {
	unsigned int id;
	bool udp;
	struct in6_addr host_addr;
	uint16_t host_port;
	struct in6_addr guest_addr;
	uint16_t guest_port;
	bool dual;
	char ifname[IFNAMSIZ];
};

/**
 * struct hostfwd_status - counters for get_info
 * @forwards:		forwards in the table
 * @splice_conns:	spliced connections open now
 * @splice_total:	spliced connections since start
 * @splice_waiting:	connections waiting for a namespace socket now
 * @splice_fallbacks:	connections of spliced forwards served through the
 *			tap, no namespace socket coming in time, since start
 * @splice_refused:	such connections reset instead, the tap not reaching
 *			their forward's guest_addr, since start
 * @pool_inet:		IPv4 sockets waiting in the namespace socket pool
 * @pool_inet6:		IPv6 sockets waiting likewise
 * @pool_refills:	requests for sockets sent to the namespace helper
 * @pool_helper:	what the helper is doing
 * @pool_wait_ms:	how long its pending request has waited, or 0
 */
struct hostfwd_status {
	size_t forwards;
	size_t splice_conns;
	uint64_t splice_total;
	size_t splice_waiting;
	uint64_t splice_fallbacks;
	uint64_t splice_refused;
	unsigned int pool_inet;
	unsigned int pool_inet6;
	uint64_t pool_refills;
	enum nssock_helper pool_helper;
	uint64_t pool_wait_ms;
};

int hostfwd_init(struct ctx *c);
int hostfwd_publish(struct ctx *c);
void hostfwd_cleanup(struct ctx *c);
int hostfwd_add(struct ctx *c, struct hostfwd_spec *s, char *why,
                size_t whylen);
int hostfwd_remove(struct ctx *c, unsigned int id);
const struct hostfwd_spec *hostfwd_entry(const struct ctx *c, size_t i);
void hostfwd_status(const struct ctx *c, struct hostfwd_status *st);
struct nssock_pool *hostfwd_pool(const struct ctx *c);
struct splice_state *hostfwd_splicer(const struct ctx *c);
void hostfwd_spec_str(const struct hostfwd_spec *s, char *buf, size_t len);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const hostfwd_syscalls[];

#endif /* TAPIR_HOSTFWD_H */
