// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - link, address and route set-up over rtnetlink (libmnl) */

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>

#include "driver/host/netlink.h"

/* MNL_SOCKET_BUFFER_SIZE depends on the page size at run time (a VLA). */
#define NL_BUF_SIZE 8192

/**
 * nl_open() - open and bind a NETLINK_ROUTE socket
 * @nl:		state to fill
 *
 * Return: 0 on success, -errno on failure
 */
int nl_open(struct nl *nl)
{
	nl->sock = mnl_socket_open(NETLINK_ROUTE);
	if (!nl->sock)
		return -errno;
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = -errno;

		mnl_socket_close(nl->sock);
		nl->sock = NULL;
		return err;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (unsigned int)time(NULL);
	return 0;
}

/**
 * nl_close() - close the socket opened by nl_open()
 * @nl:		state
 */
void nl_close(struct nl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	nl->sock = NULL;
}

/**
 * nl_talk() - send one request and run @cb over the replies until the ACK
 * @nl:		socket
 * @nlh:	request, NLM_F_ACK is added here
 * @cb:		data callback for replies, or NULL
 * @data:	passed to @cb
 *
 * Return: 0 on success, -errno from the kernel's ACK or from the socket
 */
static int nl_talk(struct nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[NL_BUF_SIZE];
	int ret;

	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++nl->seq;
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		ret = mnl_socket_recvfrom(nl->sock, buf, sizeof(buf));
		if (ret < 0)
			return -errno;
		ret = mnl_cb_run(buf, ret, nl->seq, nl->portid, cb, data);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}

/**
 * link_msg() - start an RTM_NEWLINK request for @ifindex
 * @buf:	buffer of NL_BUF_SIZE bytes
 * @ifindex:	target link
 *
 * Return: the message, ready for attributes
 */
static struct nlmsghdr *link_msg(char *buf, int ifindex)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return nlh;
}

/**
 * link_attr_cb() - collect the attributes of an RTM_NEWLINK reply
 * @nlh:	reply
 * @data:	struct link_state to fill
 *
 * Return: MNL_CB_OK
 */
static int link_attr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct link_state *st = data;
	struct nlattr *a;

	st->ifindex = ifi->ifi_index;
	st->up = ifi->ifi_flags & IFF_UP;
	mnl_attr_for_each(a, nlh, sizeof(*ifi))
	{
		switch (mnl_attr_get_type(a)) {
		case IFLA_MTU:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				st->mtu = mnl_attr_get_u32(a);
			break;
		case IFLA_TXQLEN:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				st->txqlen = mnl_attr_get_u32(a);
			break;
		case IFLA_ADDRESS:
			if (mnl_attr_get_payload_len(a) == 6)
				memcpy(st->mac, mnl_attr_get_payload(a), 6);
			break;
		}
	}
	return MNL_CB_OK;
}

/**
 * link_get() - read index, MTU, txqueuelen, MAC and state of a link
 * @nl:		socket
 * @name:	interface name
 * @st:		filled on success
 *
 * Return: 0 on success, -errno (-ENODEV if there is no such link)
 */
int link_get(struct nl *nl, const char *name, struct link_state *st)
{
	char buf[NL_BUF_SIZE];
	struct nlmsghdr *nlh = link_msg(buf, 0);

	nlh->nlmsg_type = RTM_GETLINK;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	memset(st, 0, sizeof(*st));
	return nl_talk(nl, nlh, link_attr_cb, st);
}

/**
 * link_set_u32() - set one 32-bit link attribute
 * @nl:		socket
 * @ifindex:	link
 * @type:	IFLA_* attribute
 * @val:	value
 *
 * Return: 0 on success, -errno on failure
 */
static int link_set_u32(struct nl *nl, int ifindex, uint16_t type, uint32_t val)
{
	char buf[NL_BUF_SIZE];
	struct nlmsghdr *nlh = link_msg(buf, ifindex);

	mnl_attr_put_u32(nlh, type, val);
	return nl_talk(nl, nlh, NULL, NULL);
}

/**
 * link_set_mtu() - set the MTU of a link, like `ip link set mtu`
 * @nl:		socket
 * @ifindex:	link
 * @mtu:	new MTU
 *
 * Return: 0 on success, -errno on failure
 */
int link_set_mtu(struct nl *nl, int ifindex, unsigned int mtu)
{
	return link_set_u32(nl, ifindex, IFLA_MTU, mtu);
}

/**
 * link_set_txqlen() - set txqueuelen, like `ip link set txqueuelen`
 * @nl:		socket
 * @ifindex:	link
 * @txqlen:	queue length in frames
 *
 * Return: 0 on success, -errno on failure
 */
int link_set_txqlen(struct nl *nl, int ifindex, unsigned int txqlen)
{
	return link_set_u32(nl, ifindex, IFLA_TXQLEN, txqlen);
}

/**
 * link_set_up() - set a link administratively up, like `ip link set up`
 * @nl:		socket
 * @ifindex:	link
 *
 * Return: 0 on success, -errno on failure
 */
int link_set_up(struct nl *nl, int ifindex)
{
	char buf[NL_BUF_SIZE];
	struct nlmsghdr *nlh = link_msg(buf, ifindex);
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	return nl_talk(nl, nlh, NULL, NULL);
}

/**
 * link_set_mac() - set the hardware address, like `ip link set address`
 * @nl:		socket
 * @ifindex:	link
 * @mac:	new address
 *
 * Return: 0 on success, -errno on failure
 */
int link_set_mac(struct nl *nl, int ifindex, const uint8_t mac[6])
{
	char buf[NL_BUF_SIZE];
	struct nlmsghdr *nlh = link_msg(buf, ifindex);

	mnl_attr_put(nlh, IFLA_ADDRESS, 6, mac);
	return nl_talk(nl, nlh, NULL, NULL);
}

/**
 * link_del() - delete a link, like `ip link del`
 * @nl:		socket
 * @ifindex:	link
 *
 * Return: 0 on success, -errno on failure
 */
int link_del(struct nl *nl, int ifindex)
{
	char buf[NL_BUF_SIZE];
	struct nlmsghdr *nlh = link_msg(buf, ifindex);

	nlh->nlmsg_type = RTM_DELLINK;
	return nl_talk(nl, nlh, NULL, NULL);
}

/**
 * addr_len() - size of an address of @family
 * @family:	AF_INET or AF_INET6
 *
 * Return: 4 or 16
 */
static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/**
 * addr_add() - add an address to a link, like `ip addr add ... nodad`
 * @nl:		socket
 * @ifindex:	link
 * @family:	AF_INET or AF_INET6
 * @addr:	struct in_addr or struct in6_addr
 * @prefixlen:	prefix length
 *
 * IPv6 addresses skip duplicate address detection: nothing else lives on
 * the tap, and DAD would leave the address tentative for a second or two.
 *
 * Return: 0 on success, -errno on failure
 */
int addr_add(struct nl *nl, int ifindex, int family, const void *addr,
             unsigned int prefixlen)
{
	char buf[NL_BUF_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;

	nlh->nlmsg_type = RTM_NEWADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = family;
	ifa->ifa_prefixlen = prefixlen;
	ifa->ifa_index = ifindex;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	mnl_attr_put(nlh, IFA_LOCAL, addr_len(family), addr);
	mnl_attr_put(nlh, IFA_ADDRESS, addr_len(family), addr);
	if (family == AF_INET6)
		mnl_attr_put_u32(nlh, IFA_FLAGS, IFA_F_NODAD);
	return nl_talk(nl, nlh, NULL, NULL);
}

/**
 * route_add_default() - add a default route, like `ip route add default via`
 * @nl:		socket
 * @ifindex:	outgoing link
 * @family:	AF_INET or AF_INET6
 * @gw:		gateway, struct in_addr or struct in6_addr
 * @onlink:	reach @gw on the link even if no prefix of it covers @gw
 *
 * Return: 0 on success, -errno on failure (-EEXIST if one exists)
 */
int route_add_default(struct nl *nl, int ifindex, int family, const void *gw,
                      bool onlink)
{
	char buf[NL_BUF_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;

	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = family;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_BOOT;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	/* A gateway outside every prefix of the link (a /32 address's). */
	if (onlink)
		rtm->rtm_flags |= RTNH_F_ONLINK;
	mnl_attr_put(nlh, RTA_GATEWAY, addr_len(family), gw);
	mnl_attr_put_u32(nlh, RTA_OIF, ifindex);
	/* The kernel drops a whole router advert (prefix too, so no SLAAC
	 * address) when it can't add the advert's default route, as happens
	 * if ours has the same gateway and metric (1024): stay behind it.
	 */
	if (family == AF_INET6)
		mnl_attr_put_u32(nlh, RTA_PRIORITY, 2048);
	return nl_talk(nl, nlh, NULL, NULL);
}

/**
 * dump() - dump one kind of object of one family, @cb called for each
 * @nl:		socket
 * @type:	RTM_GETROUTE or RTM_GETADDR
 * @family:	AF_INET or AF_INET6
 * @hdrlen:	its family header's size (struct rtmsg, struct ifaddrmsg),
 *		whose first byte is the family in both
 * @cb:		called for each object
 * @data:	passed to @cb
 *
 * Return: 0 on success, -errno
 */
_Static_assert(offsetof(struct rtmsg, rtm_family) == 0 &&
                       offsetof(struct ifaddrmsg, ifa_family) == 0,
               "dump() writes the family as the header's first byte");

static int dump(struct nl *nl, uint16_t type, int family, size_t hdrlen,
                mnl_cb_t cb, void *data)
{
	char buf[NL_BUF_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	uint8_t *fam;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	fam = mnl_nlmsg_put_extra_header(nlh, hdrlen);
	*fam = (uint8_t)family;
	return nl_talk(nl, nlh, cb, data);
}

/**
 * struct route_pick - the default route with the lowest metric, so far
 * @family:	the family asked for
 * @ifindex:	the interface asked for, or 0 for any
 * @found:	one was seen
 * @metric:	its RTA_PRIORITY
 * @r:		what is returned
 */
struct route_pick {
	int family;
	int ifindex;
	bool found;
	uint32_t metric;
	struct route_default r;
};

/**
 * route_dump_cb() - keep the best default route of the main table
 * @nlh:	one RTM_NEWROUTE of the dump
 * @data:	struct route_pick
 *
 * Return: MNL_CB_OK
 */
static int route_dump_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct route_pick *p = data;
	struct route_default r = {0};
	uint32_t metric = 0;
	struct nlattr *a;

	/* Not a source-specific one ("default from X"), nor a dead one. */
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm) ||
	    rtm->rtm_family != p->family || rtm->rtm_dst_len ||
	    rtm->rtm_src_len || rtm->rtm_type != RTN_UNICAST ||
	    rtm->rtm_table != RT_TABLE_MAIN ||
	    (rtm->rtm_flags & (RTNH_F_DEAD | RTNH_F_LINKDOWN)))
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*rtm))
	{
		switch (mnl_attr_get_type(a)) {
		case RTA_OIF:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				r.ifindex = (int)mnl_attr_get_u32(a);
			break;
		case RTA_GATEWAY:
			if (mnl_attr_get_payload_len(a) == addr_len(p->family))
				memcpy(&r.gw, mnl_attr_get_payload(a),
				       addr_len(p->family));
			break;
		case RTA_PRIORITY:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				metric = mnl_attr_get_u32(a);
			break;
		}
	}
	if (r.ifindex > 0 && (!p->ifindex || r.ifindex == p->ifindex) &&
	    (!p->found || metric < p->metric)) {
		p->found = true;
		p->metric = metric;
		p->r = r;
	}
	return MNL_CB_OK;
}

/**
 * route_get_default() - the default route of the main table
 * @nl:		socket
 * @family:	AF_INET or AF_INET6
 * @r:		filled with its interface and gateway (zero if on-link)
 *
 * Of several, the one of the lowest metric, as the kernel picks.
 *
 * Return: 0 on success, -ENETUNREACH if there is none, -errno
 */
int route_get_default(struct nl *nl, int family, struct route_default *r)
{
	return route_get_default_on(nl, family, 0, r);
}

/**
 * route_get_default_on() - the default route of the main table through one
 *			    interface (pasta's -i)
 * @nl:		socket
 * @family:	AF_INET or AF_INET6
 * @ifindex:	the interface, or 0 for any (route_get_default())
 * @r:		filled with its interface and gateway (zero if on-link); an
 *		interface given but without a default route is returned
 *		with no gateway, its addresses still there to copy
 *
 * Return: 0 on success, -ENETUNREACH if there is none, -errno
 */
int route_get_default_on(struct nl *nl, int family, int ifindex,
                         struct route_default *r)
{
	struct route_pick p = {.family = family, .ifindex = ifindex};
	int ret;

	ret = dump(nl, RTM_GETROUTE, family, sizeof(struct rtmsg),
	           route_dump_cb, &p);
	if (ret)
		return ret;
	if (!p.found && ifindex > 0) {
		memset(r, 0, sizeof(*r));
		r->ifindex = ifindex;
		return 0;
	}
	if (!p.found)
		return -ENETUNREACH;
	*r = p.r;
	return 0;
}

/**
 * struct addr_pick - the first global address of one link
 * @family:	the family asked for
 * @ifindex:	the link
 * @found:	one was seen
 * @addr:	it
 * @plen:	its prefix length
 */
struct addr_pick {
	int family;
	int ifindex;
	bool found;
	uint8_t addr[16];
	unsigned int plen;
};

/**
 * addr_dump_cb() - keep the first usable global address of the link
 * @nlh:	one RTM_NEWADDR of the dump
 * @data:	struct addr_pick
 *
 * An IPv6 address still in or failed in duplicate address detection, or
 * deprecated, is not one to copy.
 *
 * Return: MNL_CB_OK
 */
static int addr_dump_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	struct addr_pick *p = data;
	bool local = false;
	struct nlattr *a;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifa) ||
	    ifa->ifa_family != p->family || (int)ifa->ifa_index != p->ifindex ||
	    ifa->ifa_scope != RT_SCOPE_UNIVERSE || p->found ||
	    (ifa->ifa_flags &
	     (IFA_F_TENTATIVE | IFA_F_DADFAILED | IFA_F_DEPRECATED)))
		return MNL_CB_OK;
	/* IFA_LOCAL is the local address where there is one: with a peer
	 * (point-to-point links), IFA_ADDRESS is the peer's. IPv6 addresses
	 * without a peer have IFA_ADDRESS alone.
	 */
	mnl_attr_for_each(a, nlh, sizeof(*ifa))
	{
		uint16_t type = mnl_attr_get_type(a);

		if ((type != IFA_LOCAL && (type != IFA_ADDRESS || local)) ||
		    mnl_attr_get_payload_len(a) != addr_len(p->family))
			continue;
		memcpy(p->addr, mnl_attr_get_payload(a), addr_len(p->family));
		p->plen = ifa->ifa_prefixlen;
		p->found = true;
		local = type == IFA_LOCAL;
	}
	return MNL_CB_OK;
}

/**
 * addr_get() - the first global address of a link
 * @nl:		socket
 * @ifindex:	the link
 * @family:	AF_INET or AF_INET6
 * @addr:	filled with the address: struct in_addr or struct in6_addr
 * @plen:	filled with its prefix length
 *
 * Return: 0 on success, -EADDRNOTAVAIL if it has none, -errno
 */
int addr_get(struct nl *nl, int ifindex, int family, void *addr,
             unsigned int *plen)
{
	struct addr_pick p = {.family = family, .ifindex = ifindex};
	int ret;

	ret = dump(nl, RTM_GETADDR, family, sizeof(struct ifaddrmsg),
	           addr_dump_cb, &p);
	if (ret)
		return ret;
	if (!p.found)
		return -EADDRNOTAVAIL;
	memcpy(addr, p.addr, addr_len(family));
	*plen = p.plen;
	return 0;
}

/**
 * netlink_diag_open() - a NETLINK_SOCK_DIAG socket in the caller's network
 *			 namespace, for the port scans (fwd/portscan.c)
 *
 * Made at start: once running, the seccomp filter allows IPv4 and IPv6
 * sockets only.
 *
 * Return: the socket, non-blocking, or -1 with errno set
 */
int netlink_diag_open(void)
{
	return socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
	              NETLINK_SOCK_DIAG);
}
