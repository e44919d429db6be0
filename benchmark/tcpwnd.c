// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - benchmark helper: the windows of this network namespace's TCP
 * connections to one port, as the kernel has them
 *
 *   tcpwnd PORT
 *
 * One line per established IPv4 or IPv6 connection whose peer's port is
 * PORT: "LOCAL_PORT RCV_WND SND_WND SNDBUF BYTES_RECEIVED BYTES_ACKED",
 * the local port telling the connections apart. RCV_WND is
 * the window this side offers, after scaling (tcp_info's tcpi_rcv_wnd,
 * Linux 6.10), or -1 where the kernel has no such field; SND_WND the one
 * the peer offers (tcpi_snd_wnd, Linux 5.19); SNDBUF the send buffer.
 * `ss` of iproute2 before 6.10 shows no RCV_WND, and rcv_ssthresh, which
 * it does show, is not the window: it falls under memory pressure while
 * the window offered, which never shrinks, stays.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* tcp_info's tcpi_rcv_wnd, right after tcpi_snd_wnd, where the headers
 * this builds with may lack it.
 */
#define RCV_WND_OFF (offsetof(struct tcp_info, tcpi_snd_wnd) + 4)

/**
 * dump() - ask for every established TCP socket of one family
 * @fd:		NETLINK_SOCK_DIAG socket
 * @family:	AF_INET or AF_INET6
 *
 * Return: 0, or -1 with errno set
 */
static int dump(int fd, int family)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
	        .nlh = {.nlmsg_len = sizeof(msg),
	                .nlmsg_type = SOCK_DIAG_BY_FAMILY,
	                .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
	        .req = {.sdiag_family = (__u8)family,
	                .sdiag_protocol = IPPROTO_TCP,
	                .idiag_ext = (1 << (INET_DIAG_INFO - 1)) |
	                             (1 << (INET_DIAG_SKMEMINFO - 1)),
	                .idiag_states = 1 << 1 /* TCP_ESTABLISHED */},
	};

	return send(fd, &msg, sizeof(msg), 0) == (ssize_t)sizeof(msg) ? 0 : -1;
}

/**
 * print_one() - one connection's line, if its peer's port is @port
 * @m:		its message
 * @len:	bytes of @m, from its header on
 * @port:	the port, host order
 */
static void print_one(const struct inet_diag_msg *m, size_t len,
                      unsigned int port)
{
	const struct rtattr *a = (const void *)(m + 1);
	size_t left = len - NLMSG_ALIGN(sizeof(*m));
	struct tcp_info ti;
	long long rcv_wnd = -1;
	unsigned int sndbuf = 0;
	bool info = false;

	if (ntohs(m->id.idiag_dport) != port)
		return;
	memset(&ti, 0, sizeof(ti));
	for (; RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		size_t n = RTA_PAYLOAD(a);

		if (a->rta_type == INET_DIAG_INFO) {
			memcpy(&ti, RTA_DATA(a),
			       n < sizeof(ti) ? n : sizeof(ti));
			if (n >= RCV_WND_OFF + 4) {
				__u32 w;

				memcpy(&w,
				       (const char *)RTA_DATA(a) + RCV_WND_OFF,
				       4);
				rcv_wnd = w;
			}
			info = true;
		} else if (a->rta_type == INET_DIAG_SKMEMINFO &&
		           n >= (SK_MEMINFO_SNDBUF + 1) * sizeof(__u32)) {
			memcpy(&sndbuf,
			       (const char *)RTA_DATA(a) +
			               SK_MEMINFO_SNDBUF * sizeof(__u32),
			       sizeof(sndbuf));
		}
	}
	if (info)
		printf("%u %lld %u %u %llu %llu\n", ntohs(m->id.idiag_sport),
		       rcv_wnd, ti.tcpi_snd_wnd, sndbuf,
		       (unsigned long long)ti.tcpi_bytes_received,
		       (unsigned long long)ti.tcpi_bytes_acked);
}

/**
 * read_dump() - print the connections of one dump
 * @fd:		NETLINK_SOCK_DIAG socket, a dump asked for
 * @port:	the peer's port, host order
 *
 * Return: 0, or -1 with errno set
 */
static int read_dump(int fd, unsigned int port)
{
	static char buf[65536];

	for (int round = 0; round < 10000; round++) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		size_t left;
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n < 0)
			return -1;
		left = (size_t)n;
		for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				errno = EPROTO;
				return -1;
			}
			if (h->nlmsg_len <
			    NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
				continue;
			print_one(NLMSG_DATA(h), h->nlmsg_len - NLMSG_HDRLEN,
			          port);
		}
	}
	errno = EOVERFLOW;
	return -1;
}

/**
 * main() - print the windows of the connections to one port
 * @argc:	2
 * @argv:	the port
 *
 * Return: 0, 1 if the kernel could not be asked, 2 on bad arguments
 */
int main(int argc, char **argv)
{
	char *end;
	unsigned long port;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: tcpwnd PORT\n");
		return 2;
	}
	port = strtoul(argv[1], &end, 10);
	if (*end || !port || port > 65535) {
		fprintf(stderr, "tcpwnd: bad port \"%s\": 1..65535\n", argv[1]);
		return 2;
	}
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0) {
		fprintf(stderr, "tcpwnd: netlink socket: %s\n",
		        strerror(errno));
		return 1;
	}
	for (int family = AF_INET; family;
	     family = family == AF_INET ? AF_INET6 : 0) {
		if (dump(fd, family) || read_dump(fd, (unsigned int)port)) {
			fprintf(stderr, "tcpwnd: dump TCP sockets: %s\n",
			        strerror(errno));
			close(fd);
			return 1;
		}
	}
	close(fd);
	return 0;
}
