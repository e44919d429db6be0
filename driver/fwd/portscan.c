// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - which ports are bound on a side: /proc/net/{tcp,udp}{,6} scanned
 *
 * pasta's "auto" port specs follow what listens on the other side, rescanned
 * about once a second: -t/-u auto forward what is bound in the namespace,
 * -T/-U auto what is bound on the host. The tables are the kernel's
 * (proc(5)): one line per socket, the local address as the raw
 * network-order words printed in hex (so their bytes in memory are the
 * address's), then the port in hex and, two fields on, the state in hex.
 *
 * The caller keeps one fd per table open, in the namespace whose view it
 * wants (a /proc/self/net file shows the netns of the process that opened
 * it), and each scan reads it again from the start.
 *
 * A table lists every socket, each connection too, and the kernel walks
 * all of the machine's to print the namespace's: with 9000 connections
 * open a scan of tcp took 28 ms, each second. So where the side has a
 * NETLINK_SOCK_DIAG socket, the kernel is asked for the listening (or
 * unconnected) sockets alone (sock_diag(7)), and for TCP walks only its
 * listeners: the scan no longer grows with the connections held. The
 * tables stay for a kernel whose sock_diag for TCP or UDP is missing
 * (inet_diag, tcp_diag and udp_diag are modules on some distributions,
 * and a host may not have them): the first scan that fails says so and
 * the side reads its tables from then on.
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "driver/core/inany.h"
#include "driver/core/log.h"
#include "driver/fwd/portscan.h"

/* A line of any of the four tables is well under this; longer ones are
 * skipped whole.
 */
#define LINE_MAX_LEN 512
/* A netlink dump's reply takes up to 32 KiB per read, however large the
 * reads before (net/netlink/af_netlink.c's netlink_dump()).
 */
#define DIAG_BUF 32768
/* States of interest, as include/net/tcp_states.h numbers them. */
#define STATE_CLOSE 0x07
#define STATE_LISTEN 0x0a

/**
 * port_set_del() - take @port out of @s
 * @s:		set
 * @port:	0..65535
 */
void port_set_del(struct port_set *s, unsigned int port)
{
	s->bits[port / 8] &= (uint8_t) ~(1U << (port % 8));
}

/**
 * port_set_add() - add @port to @s
 * @s:		set
 * @port:	0..65535
 */
void port_set_add(struct port_set *s, unsigned int port)
{
	s->bits[(port & 0xffff) / 8] |= (uint8_t)(1U << (port % 8));
}

/**
 * port_set_has() - whether @port is in @s
 * @s:		set
 * @port:	0..65535
 *
 * Return: true if so
 */
bool port_set_has(const struct port_set *s, unsigned int port)
{
	return s->bits[(port & 0xffff) / 8] & (1U << (port % 8));
}

/**
 * portscan_mask() - leave the ports of @own out of a scan's loopback sets
 * @ps:		scan
 * @own:	ports bound on the loopback by tapir itself, or NULL
 *
 * Whatever else is bound to those ports on the loopback is masked with
 * them, as pasta masks them.
 */
void portscan_mask(struct portscan *ps, const struct port_set *own)
{
	if (!own)
		return;
	for (size_t i = 0; i < sizeof(own->bits); i++) {
		ps->loopback.bits[i] &= (uint8_t)~own->bits[i];
		ps->lo1.bits[i] &= (uint8_t)~own->bits[i];
		ps->lo6.bits[i] &= (uint8_t)~own->bits[i];
	}
}

/**
 * portscan_merge() - add every port of @from to @to, set by set
 * @to:		scan
 * @from:	another scan
 */
void portscan_merge(struct portscan *to, const struct portscan *from)
{
	for (size_t i = 0; i < sizeof(to->any.bits); i++) {
		to->any.bits[i] |= from->any.bits[i];
		to->loopback.bits[i] |= from->loopback.bits[i];
		to->other.bits[i] |= from->other.bits[i];
		to->lo1.bits[i] |= from->lo1.bits[i];
		to->lo6.bits[i] |= from->lo6.bits[i];
	}
}

/**
 * hex_word() - @n hex digits at *@p, which moves past them
 * @p:		cursor
 * @end:	end of the line
 * @n:		digits, 1..8
 * @out:	value
 *
 * Return: 0, or -1 if there are not @n hex digits
 */
static int hex_word(const char **p, const char *end, int n, uint32_t *out)
{
	uint32_t v = 0;

	if (end - *p < n)
		return -1;
	for (int i = 0; i < n; i++) {
		char ch = (*p)[i];
		int d;

		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else
			return -1;
		v = v << 4 | (uint32_t)d;
	}
	*p += n;
	*out = v;
	return 0;
}

/**
 * skip_field() - move past spaces, one field, and the spaces after it
 * @p:		cursor
 * @end:	end of the line
 */
static void skip_field(const char **p, const char *end)
{
	while (*p < end && **p == ' ')
		(*p)++;
	while (*p < end && **p != ' ')
		(*p)++;
	while (*p < end && **p == ' ')
		(*p)++;
}

/**
 * parse_addr() - ADDR:PORT of the local address field
 * @p:		cursor at the field
 * @end:	end of the line
 * @a:		filled: IPv4 as ::ffff:a.b.c.d
 * @port:	filled
 *
 * Return: 0, or -1 if the field has neither shape
 */
static int parse_addr(const char **p, const char *end, struct in6_addr *a,
                      uint32_t *port)
{
	const char *colon = memchr(*p, ':', (size_t)(end - *p));
	uint32_t w;

	if (!colon || (colon - *p != 8 && colon - *p != 32))
		return -1;
	memset(a, 0, sizeof(*a));
	if (colon - *p == 8) {
		struct in_addr v4;

		if (hex_word(p, end, 8, &w))
			return -1;
		memcpy(&v4, &w, 4);
		inany_from_v4(a, v4);
	} else {
		for (int i = 0; i < 4; i++) {
			if (hex_word(p, end, 8, &w))
				return -1;
			memcpy(&a->s6_addr[i * 4], &w, 4);
		}
	}
	(*p)++; /* ':' */
	return hex_word(p, end, 4, port);
}

/**
 * classify() - the set of @ps an address's ports go to
 * @ps:		scan
 * @a:		bound address
 *
 * Return: the set
 */
static struct port_set *classify(struct portscan *ps, const struct in6_addr *a)
{
	uint32_t v4 = ntohl(inany_v4(a).s_addr);

	if (inany_is_v4(a))
		return !v4 ? &ps->any
		           : (v4 >> 24 == 127 ? &ps->loopback : &ps->other);
	if (IN6_IS_ADDR_UNSPECIFIED(a))
		return &ps->any;
	return IN6_IS_ADDR_LOOPBACK(a) ? &ps->loopback : &ps->other;
}

/**
 * add_bound() - a port bound to @a
 * @ps:		scan
 * @a:		bound address
 * @port:	port, not 0
 */
static void add_bound(struct portscan *ps, const struct in6_addr *a,
                      uint32_t port)
{
	port_set_add(classify(ps, a), port);
	if (inany_is_v4(a) && ntohl(inany_v4(a).s_addr) == INADDR_LOOPBACK)
		port_set_add(&ps->lo1, port);
	else if (IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_UNSPECIFIED(a))
		port_set_add(&ps->lo6, port);
}

/**
 * parse_line() - one line of a table: add its port if bound as @proto asks
 * @line:	the line, without its newline
 * @end:	its end
 * @proto:	TCP (listening) or UDP (unconnected)
 * @ps:		scan
 */
static void parse_line(const char *line, const char *end,
                       enum portscan_proto proto, struct portscan *ps)
{
	const char *p = line;
	struct in6_addr a;
	uint32_t port, state;

	ps->looked++;
	skip_field(&p, end); /* "sl:" */
	if (parse_addr(&p, end, &a, &port))
		return;      /* the header, or not a table line */
	skip_field(&p, end); /* the remote address */
	if (hex_word(&p, end, 2, &state))
		return;
	if (state != (proto == PORTSCAN_TCP ? STATE_LISTEN : STATE_CLOSE) ||
	    !port)
		return;
	add_bound(ps, &a, port);
}

/**
 * portscan_read() - add the ports bound in one table to @ps
 * @fd:		/proc/.../net/tcp, tcp6, udp or udp6, read from its start
 * @proto:	what the table lists
 * @ps:		scan; zero it before the first table of a round
 *
 * Return: 0, or -errno if the table could not be read (a partial read
 *	   leaves what it saw in @ps)
 */
int portscan_read(int fd, enum portscan_proto proto, struct portscan *ps)
{
	char buf[8192 + LINE_MAX_LEN];
	size_t have = 0;
	bool skipping = false;
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(fd, buf + have, sizeof(buf) - have, off);
		char *p = buf, *nl;

		if (n < 0)
			return errno == EINTR ? -EAGAIN : -errno;
		if (!n)
			return 0;
		off += n;
		have += (size_t)n;
		while ((nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			if (!skipping)
				parse_line(p, nl, proto, ps);
			skipping = false;
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		/* A line longer than the buffer: drop it up to its end. */
		if (have == sizeof(buf)) {
			have = 0;
			skipping = true;
		}
	}
}

/**
 * portscan_read_pair() - a protocol's IPv4 and IPv6 tables into a fresh @ps
 * @fd4:	/proc/.../net/tcp or udp
 * @fd6:	the matching tcp6 or udp6, or -1 (no IPv6 in that kernel)
 * @proto:	what the tables list
 * @ps:		scan, zeroed first
 *
 * Return: 0, or -errno of the first table that could not be read
 */
int portscan_read_pair(int fd4, int fd6, enum portscan_proto proto,
                       struct portscan *ps)
{
	int ret;

	memset(ps, 0, sizeof(*ps));
	ret = portscan_read(fd4, proto, ps);
	if (!ret && fd6 >= 0)
		ret = portscan_read(fd6, proto, ps);
	return ret;
}

/**
 * diag_one() - mnl_cb_run() callback: one socket the kernel reports
 * @nlh:	its message
 * @data:	struct portscan
 *
 * Return: MNL_CB_OK, or MNL_CB_ERROR for a message too short
 */
static int diag_one(const struct nlmsghdr *nlh, void *data)
{
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	struct portscan *ps = data;
	struct in6_addr a;
	uint32_t port;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*m))
		return MNL_CB_ERROR;
	ps->looked++;
	port = ntohs(m->id.idiag_sport);
	if (m->idiag_family == AF_INET)
		inany_from_v4(&a, (struct in_addr){m->id.idiag_src[0]});
	else
		memcpy(&a, m->id.idiag_src, sizeof(a));
	if (port)
		add_bound(ps, &a, port);
	return MNL_CB_OK;
}

/**
 * diag_read() - add the ports of one family the kernel reports bound
 * @nl:		NETLINK_SOCK_DIAG socket, non-blocking
 * @proto:	what to report: listening TCP or unconnected UDP sockets
 * @family:	AF_INET or AF_INET6
 * @ps:		scan
 *
 * The kernel answers a dump as the reads come, so none waits; one that
 * would is an error, and the tables do instead. Scans run on the main
 * thread only: one buffer serves them all.
 *
 * Return: 0, or -errno
 */
static int diag_read(int nl, enum portscan_proto proto, int family,
                     struct portscan *ps)
{
	static uint8_t buf[DIAG_BUF];
	static uint32_t seq;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct inet_diag_req_v2 *r;
	ssize_t n;
	int ret;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++seq ? seq : ++seq;
	r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));
	r->sdiag_family = (uint8_t)family;
	r->sdiag_protocol = proto == PORTSCAN_TCP ? IPPROTO_TCP : IPPROTO_UDP;
	r->idiag_states = 1U
	                  << (proto == PORTSCAN_TCP ? TCP_LISTEN : TCP_CLOSE);
	/* What a dump cut short left would not match this one's number. */
	while (recv(nl, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	if (send(nl, nlh, nlh->nlmsg_len, 0) < 0)
		return -errno;
	do {
		n = recv(nl, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, 0, diag_one,
		                 ps);
	} while (ret > MNL_CB_STOP);
	return ret < 0 ? -(errno ? errno : EPROTO) : 0;
}

/**
 * portscan_read_side() - a protocol's bound ports on one side into a
 *			  fresh @ps: from the kernel's sock_diag, else from
 *			  the side's tables
 * @diag:	the side's NETLINK_SOCK_DIAG socket (netlink_diag_open()),
 *		or -1; closed and set to -1 once the kernel has no sock_diag
 *		for the protocol
 * @fd4:	/proc/.../net/tcp or udp
 * @fd6:	the matching tcp6 or udp6, or -1 (no IPv6 in that kernel)
 * @proto:	what to count as bound
 * @ps:		scan, zeroed first; ps->looked says how many sockets it
 *		took to know
 *
 * A scan that fails for want of memory or a full buffer reads the tables
 * this once.
 *
 * Return: 0, or -errno of the first table that could not be read
 */
int portscan_read_side(int *diag, int fd4, int fd6, enum portscan_proto proto,
                       struct portscan *ps)
{
	int ret;

	if (*diag >= 0) {
		memset(ps, 0, sizeof(*ps));
		ret = diag_read(*diag, proto, AF_INET, ps);
		if (!ret && fd6 >= 0)
			ret = diag_read(*diag, proto, AF_INET6, ps);
		if (!ret)
			return 0;
		if (ret != -ENOMEM && ret != -ENOBUFS && ret != -EAGAIN &&
		    ret != -EINTR) {
			debug_msg(
			        "port scan: no sock_diag for %s (%s): reading "
			        "/proc/net tables instead",
			        proto == PORTSCAN_TCP ? "TCP" : "UDP",
			        strerror(-ret));
			close(*diag);
			*diag = -1;
		}
	}
	return portscan_read_pair(fd4, fd6, proto, ps);
}
