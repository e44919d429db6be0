// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - UDP: errors the host reports for a guest's datagrams, told to the
 * guest as ICMP
 *
 * A host socket that carries guest datagrams (a flow's connected socket,
 * or a port forward's listener that the guest's replies leave from) has
 * IP_RECVERR (IPV6_RECVERR) on: every ICMP error the host gets about a
 * datagram it sent, and every one the host makes itself (a neighbour that
 * never answered: host unreachable), is queued on it with the code and the
 * part of the datagram the error quoted. Without the option the kernel
 * reports only "Connection refused", and only on connected sockets, so a
 * guest whose resolver names a dead server waits its full timeout where
 * it would move on at once.
 *
 * Each queued destination-unreachable becomes one to the guest, from the
 * address the guest sent to, quoting the guest's datagram: the IP and UDP
 * headers the flow kept of the guest's last datagram, then the payload
 * the host's error quoted, as much as fits the minimum IPv6 MTU for IPv6
 * (RFC 4443 2.4 (c)); IPv4 quotes the header and 8 bytes (RFC 792). A
 * datagram too big for the path (a router's packet too big or
 * fragmentation needed, or the host's own EMSGSIZE for a datagram sent
 * with IPV6_DONTFRAG) becomes packet too big (fragmentation needed) with
 * the path's MTU, so that the guest's next datagrams fit. Other errors
 * (time exceeded, ...) are read and dropped. icmp.c rate-limits what
 * reaches the guest.
 *
 * A socket whose error queue is not empty stays signalled (EPOLLERR, which
 * libevent reports as readable): the queue is read a bounded batch per
 * wakeup, and one that can't be read is emptied by turning the option off,
 * so that the loop never spins on it.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <sys/socket.h>

#include "driver/stack/icmp.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/core/log.h"
#include "driver/udp/udp_err.h"
#include "driver/udp/udp_flow.h"

/* Payload of the guest's datagram that an error can carry back: as much as
 * an ICMPv6 error may quote, less the IPv6 and UDP headers. */
#define UDP_ERR_DATA (1280 - 40 - 8 - 40 - 8)
/* One extended error and the address of who sent it. */
#define UDP_ERR_CTL                                                            \
	CMSG_SPACE(sizeof(struct sock_extended_err) +                          \
	           sizeof(struct sockaddr_in6))

/**
 * udp_err_enable() - have a UDP socket queue the host's errors for reading
 * @fd:		UDP socket, IPv4 or IPv6
 *
 * Its reader must then read the queue (udp_err_read()) whenever the socket
 * reports an error or wakes up with nothing to read. A failure is logged,
 * at most once per 5 s: the socket still works, and refusals still reach
 * the guest through the socket's pending error.
 *
 * Return: true if the errors are queued
 */
bool udp_err_enable(int fd)
{
	static struct log_limit limit;
	const int one = 1;
	socklen_t len = sizeof(int);
	int family;

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &len) ||
	    setsockopt(fd, family == AF_INET6 ? SOL_IPV6 : SOL_IP,
	               family == AF_INET6 ? IPV6_RECVERR : IP_RECVERR, &one,
	               sizeof(one))) {
		err_limited(&limit, errno,
		            "udp: IP_RECVERR: only refusals reach the guest");
		return false;
	}
	return true;
}

/**
 * udp_err_disable() - stop a socket queueing errors, which empties its queue
 * @fd:		UDP socket
 *
 * Return: 0, or -1 with errno set
 */
static int udp_err_disable(int fd)
{
	const int zero = 0;
	socklen_t len = sizeof(int);
	int family;

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &len))
		return -1;
	return setsockopt(fd, family == AF_INET6 ? SOL_IPV6 : SOL_IP,
	                  family == AF_INET6 ? IPV6_RECVERR : IP_RECVERR, &zero,
	                  sizeof(zero));
}

/**
 * icmp6_code() - an ICMPv6 destination-unreachable code in IPv4 numbering
 * @code:	ICMP6_DST_UNREACH_* code
 *
 * Return: ICMP_*_UNREACH code
 */
static int icmp6_code(uint8_t code)
{
	switch (code) {
	case ICMP6_DST_UNREACH_NOROUTE:
		return ICMP_NET_UNREACH;
	case ICMP6_DST_UNREACH_NOPORT:
		return ICMP_PORT_UNREACH;
	case ICMP6_DST_UNREACH_ADMIN:
	case 5: /* source address failed ingress/egress policy */
	case 6: /* reject route to destination */
		return ICMP_PKT_FILTERED;
	default: /* beyond scope, address unreachable, and later ones */
		return ICMP_HOST_UNREACH;
	}
}

/**
 * udp_err_code_of() - what to tell the guest about one queued error
 * @ee:		the error, as IP_RECVERR or IPV6_RECVERR gave it
 *
 * Destination-unreachable from either family is kept (its code in IPv4
 * numbering, which icmp_send_unreach() maps back for an IPv6 guest), and
 * so are the host's own refusals and unreachables (SO_EE_ORIGIN_LOCAL).
 * So is a datagram too big for the path: a router's fragmentation needed
 * or packet too big, or the host's own EMSGSIZE for a datagram sent with
 * IPV6_DONTFRAG, the MTU in @ee->ee_info either way.
 *
 * Return: ICMP_*_UNREACH code, UDP_ERR_TOO_BIG, or -1 to tell the guest
 *	   nothing
 */
int udp_err_code_of(const struct sock_extended_err *ee)
{
	switch (ee->ee_origin) {
	case SO_EE_ORIGIN_ICMP:
		if (ee->ee_type != ICMP_DEST_UNREACH ||
		    ee->ee_code > NR_ICMP_UNREACH)
			return -1;
		return ee->ee_code == ICMP_FRAG_NEEDED ? UDP_ERR_TOO_BIG
		                                       : ee->ee_code;
	case SO_EE_ORIGIN_ICMP6:
		if (ee->ee_type == ICMP6_PACKET_TOO_BIG)
			return UDP_ERR_TOO_BIG;
		if (ee->ee_type != ICMP6_DST_UNREACH)
			return -1;
		return icmp6_code(ee->ee_code);
	case SO_EE_ORIGIN_LOCAL:
		if (ee->ee_errno == EMSGSIZE)
			return ee->ee_info ? UDP_ERR_TOO_BIG : -1;
		return icmp_unreach_code((int)ee->ee_errno);
	default:
		return -1;
	}
}

/**
 * udp_err_quote() - keep the headers of a guest's datagram for its errors
 * @f:		flow
 * @p:		the guest's datagram on it
 */
void udp_err_quote(struct udp_flow *f, const struct pkt *p)
{
	if (p->l3len + 8 > sizeof(f->quote))
		return;
	memcpy(f->quote, p->l3, p->l3len);
	memcpy(f->quote + p->l3len, p->l4, 8);
	f->quote_l3len = p->l3len;
}

/**
 * udp_err_to_guest() - tell the guest the host could not deliver a datagram
 *			of a flow
 * @c:		the flow's context
 * @f:		flow
 * @code:	ICMP_*_UNREACH code (IPv4 numbering), UDP_ERR_TOO_BIG, or -1
 *		for nothing
 * @mtu:	the path's MTU, for UDP_ERR_TOO_BIG
 * @data:	the datagram's payload as the error quoted it, or NULL
 * @len:	bytes at @data
 *
 * Nothing is sent before the guest sent a datagram on the flow: there is
 * nothing to quote, and nothing of the guest's that failed.
 */
void udp_err_to_guest(struct ctx *c, struct udp_flow *f, int code, uint32_t mtu,
                      const uint8_t *data, size_t len)
{
	uint8_t buf[UDP_QUOTE_MAX + UDP_ERR_DATA];
	size_t hdr = f->quote_l3len + 8;
	struct pkt q = {0};

	if (code < 0 || !f->quote_l3len)
		return;
	if (len > sizeof(buf) - hdr)
		len = sizeof(buf) - hdr;
	memcpy(buf, f->quote, hdr);
	if (len)
		memcpy(buf + hdr, data, len);
	q.v6 = !inany_is_v4(&f->flow.key.gaddr);
	q.src = f->flow.key.gaddr;
	q.dst = f->flow.key.faddr;
	q.proto = IPPROTO_UDP;
	q.l3 = buf;
	q.l3len = f->quote_l3len;
	q.l4 = buf + f->quote_l3len;
	q.l4len = 8 + len;
	if (code == UDP_ERR_TOO_BIG)
		icmp_send_too_big(c, &q, mtu);
	else
		icmp_send_unreach(c, &q, (uint8_t)code);
}

/**
 * error_of() - the extended error of one message read from an error queue
 * @mh:		the message
 * @ee:		filled
 *
 * Return: 0, or -1 if it carries none
 */
static int error_of(struct msghdr *mh, struct sock_extended_err *ee)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm;
	     cm = CMSG_NXTHDR(mh, cm)) {
		if (!((cm->cmsg_level == SOL_IP &&
		       cm->cmsg_type == IP_RECVERR) ||
		      (cm->cmsg_level == SOL_IPV6 &&
		       cm->cmsg_type == IPV6_RECVERR)) ||
		    cm->cmsg_len < CMSG_LEN(sizeof(*ee)))
			continue;
		memcpy(ee, CMSG_DATA(cm), sizeof(*ee));
		return 0;
	}
	return -1;
}

/**
 * one_error() - tell the guest about one queued error, if it concerns it
 * @c:		context of the socket's reader
 * @fd:		the socket
 * @f:		its flow, or NULL for a port forward's listener: the flow is
 *		then the one of the host peer the datagram went to
 * @mh:		the message read, its name the datagram's destination
 * @data:	the payload the error quoted
 * @len:	its length
 */
static void one_error(struct ctx *c, int fd, struct udp_flow *f,
                      struct msghdr *mh, const uint8_t *data, size_t len)
{
	const union sockaddr_inany *to = mh->msg_name;
	struct sock_extended_err ee;
	int code;

	if (error_of(mh, &ee) || (code = udp_err_code_of(&ee)) < 0)
		return;
	if (!f && mh->msg_namelen >= sizeof(to->sa4) &&
	    (to->sa.sa_family == AF_INET ||
	     (to->sa.sa_family == AF_INET6 &&
	      mh->msg_namelen >= sizeof(to->sa6))))
		f = udp_flow_lookup_peer(c->flows, fd, to);
	if (f)
		udp_err_to_guest(flow_enter(&f->flow), f, code, ee.ee_info,
		                 data, len);
}

/**
 * udp_err_read() - read a bounded batch of a socket's queued errors, and
 *		    tell the guest about those that concern it
 * @c:		context of the socket's reader
 * @fd:		UDP socket with errors queued (udp_err_enable())
 * @f:		its flow, or NULL for a port forward's listener
 *
 * Each read makes the next queued error the socket's pending one, so a
 * queue left non-empty keeps the socket signalled: the caller returns
 * after a full batch, and the next wakeup reads on. A queue that can't be
 * read is emptied by turning the option off, said at most once per 5 s:
 * left full, it would wake the loop for ever.
 *
 * Return: errors read, UDP_ERR_BATCH if more may be left
 */
int udp_err_read(struct ctx *c, int fd, struct udp_flow *f)
{
	static struct log_limit limit;
	int n;

	for (n = 0; n < UDP_ERR_BATCH; n++) {
		_Alignas(struct cmsghdr) uint8_t ctl[UDP_ERR_CTL];
		uint8_t data[UDP_ERR_DATA];
		union sockaddr_inany to = {0};
		struct iovec iov = {data, sizeof(data)};
		struct msghdr mh = {
		        .msg_name = &to,
		        .msg_namelen = sizeof(to),
		        .msg_iov = &iov,
		        .msg_iovlen = 1,
		        .msg_control = ctl,
		        .msg_controllen = sizeof(ctl),
		};
		ssize_t len = recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);

		if (len < 0 && errno == EAGAIN)
			break;
		if (len < 0) {
			err_limited(
			        &limit, errno,
			        "udp: read a socket's errors: dropping them");
			if (udp_err_disable(fd))
				err_limited(&limit, errno,
				            "udp: turn IP_RECVERR off");
			break;
		}
		one_error(c, fd, f, &mh, data, (size_t)len);
	}
	return n;
}
