/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - link, address and route set-up over rtnetlink (libmnl)
 */
#ifndef TAPIR_NETLINK_H
#define TAPIR_NETLINK_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>

struct mnl_socket;

/**
 * struct nl - one rtnetlink socket in the current network namespace
 * @sock:	libmnl socket
 * @portid:	our netlink port id
 * @seq:	sequence number of the last request
 */
struct nl {
	struct mnl_socket *sock;
	unsigned int portid;
	unsigned int seq;
};

/**
 * struct link_state - what RTM_GETLINK reports about one link
 * @ifindex:	interface index
 * @mtu:	MTU
 * @txqlen:	txqueuelen
 * @mac:	hardware address
 * @up:		IFF_UP is set
 */
struct link_state {
	int ifindex;
	unsigned int mtu;
	unsigned int txqlen;
	uint8_t mac[6];
	bool up;
};

/**
 * struct route_default - a default route
 * @ifindex:	its output interface
 * @gw:		its gateway of the route's family, all zero for an on-link
 *		route
 */
struct route_default {
	int ifindex;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} gw;
};

int nl_open(struct nl *nl);
void nl_close(struct nl *nl);
int link_get(struct nl *nl, const char *name, struct link_state *st);
int link_set_mtu(struct nl *nl, int ifindex, unsigned int mtu);
int link_set_txqlen(struct nl *nl, int ifindex, unsigned int txqlen);
int link_set_up(struct nl *nl, int ifindex);
int link_set_mac(struct nl *nl, int ifindex, const uint8_t mac[6]);
int link_del(struct nl *nl, int ifindex);
int addr_add(struct nl *nl, int ifindex, int family, const void *addr,
             unsigned int prefixlen);
int route_add_default(struct nl *nl, int ifindex, int family, const void *gw,
                      bool onlink);
int route_get_default(struct nl *nl, int family, struct route_default *r);
int route_get_default_on(struct nl *nl, int family, int ifindex,
                         struct route_default *r);
int addr_get(struct nl *nl, int ifindex, int family, void *addr,
             unsigned int *plen);
int netlink_diag_open(void);

#endif /* TAPIR_NETLINK_H */
