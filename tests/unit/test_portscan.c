// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: the bound ports of /proc/net/{tcp,udp}{,6} */

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "driver/fwd/portscan.h"
#include "driver/host/netlink.h"
#include "tests/unit/unit.h"

static struct portscan ps;

/**
 * table() - a file holding @text, read from its start
 * @text:	contents
 *
 * Return: its fd, or -1
 */
static int table(const char *text)
{
	int fd = memfd_create("table", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	return fd;
}

/**
 * scan_text() - scan @text as a table into a fresh @ps
 * @text:	table
 * @proto:	what it lists
 *
 * Return: what portscan_read() returned, or -1 without a file
 */
static int scan_text(const char *text, enum portscan_proto proto)
{
	int fd = table(text), ret;

	memset(&ps, 0, sizeof(ps));
	if (fd < 0)
		return -1;
	ret = portscan_read(fd, proto, &ps);
	close(fd);
	return ret;
}

static const char tcp4[] =
        "  sl  local_address rem_address   st tx_queue rx_queue tr "
        "tm->when retrnsmt   uid  timeout inode\n"
        "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 "
        "00:00000000 00000000     0        0 172 1 0000000 100 0 0 10 0\n"
        "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 "
        "00:00000000 00000000  1000        0 173 1 0000000 100 0 0 10 0\n"
        "   2: 6400020A:0050 00000000:0000 0A 00000000:00000000 "
        "00:00000000 00000000  1000        0 174 1 0000000 100 0 0 10 0\n"
        /* Established, not listening. */
        "   3: 0100007F:1F91 0100007F:C000 01 00000000:00000000 "
        "00:00000000 00000000  1000        0 175 1 0000000 20 4 30 10 -1\n";

static const char tcp6[] =
        "  sl  local_address                         remote_address"
        "                        st tx_queue rx_queue tr tm->when "
        "retrnsmt   uid  timeout inode\n"
        "   0: 00000000000000000000000000000000:0016 "
        "00000000000000000000000000000000:0000 0A 00000000:00000000 "
        "00:00000000 00000000     0        0 180 1 0000000 100 0 0 10 0\n"
        "   1: 00000000000000000000000001000000:0277 "
        "00000000000000000000000000000000:0000 0A 00000000:00000000 "
        "00:00000000 00000000     0        0 181 1 0000000 100 0 0 10 0\n"
        "   2: 0000000000000000FFFF00000100007F:1388 "
        "00000000000000000000000000000000:0000 0A 00000000:00000000 "
        "00:00000000 00000000     0        0 182 1 0000000 100 0 0 10 0\n";

static const char udp4[] =
        "   sl  local_address rem_address   st tx_queue rx_queue tr "
        "tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
        "  100: 00000000:0035 00000000:0000 07 00000000:00000000 "
        "00:00000000 00000000     0        0 190 2 0000000 0\n"
        /* Connected: a client, not a server. */
        "  101: 0100007F:A000 0100007F:0035 01 00000000:00000000 "
        "00:00000000 00000000  1000        0 191 2 0000000 0\n";

static void test_tables(void)
{
	CHECK(scan_text(tcp4, PORTSCAN_TCP) == 0);
	CHECK(port_set_has(&ps.any, 2024) && port_set_has(&ps.loopback, 8080) &&
	      port_set_has(&ps.other, 80));
	CHECK(!port_set_has(&ps.loopback, 8081) &&
	      !port_set_has(&ps.any, 8080));
	CHECK(scan_text(tcp6, PORTSCAN_TCP) == 0);
	CHECK(port_set_has(&ps.any, 22) && port_set_has(&ps.loopback, 631) &&
	      port_set_has(&ps.loopback, 5000));
	CHECK(scan_text(udp4, PORTSCAN_UDP) == 0);
	CHECK(port_set_has(&ps.any, 53) && !port_set_has(&ps.loopback, 0xa000));
	/* A TCP table read as UDP has no unconnected sockets. */
	CHECK(scan_text(tcp4, PORTSCAN_UDP) == 0 &&
	      !port_set_has(&ps.any, 2024));
}

static void test_junk(void)
{
	static char big[40000];
	size_t n;

	/* A line longer than any buffer is skipped, the next one read. */
	memset(big, 'x', 20000);
	n = 20000;
	n += (size_t)snprintf(big + n, sizeof(big) - n,
	                      "\n   1: 0100007F:1F90 00000000:0000 0A x\n");
	CHECK(n < sizeof(big) && scan_text(big, PORTSCAN_TCP) == 0 &&
	      port_set_has(&ps.loopback, 8080));
	/* Cut lines, bad digits, no newline at the end: nothing taken. */
	CHECK(scan_text("   0: 0100007F:1F9", PORTSCAN_TCP) == 0);
	CHECK(scan_text("   0: 0100007G:1F90 00000000:0000 0A\n"
	                "   1: 0100007F:1F90 00000000:0000 0\n"
	                "   2: 0100007F:0000 00000000:0000 0A\n"
	                "   3: 0100007F\n",
	                PORTSCAN_TCP) == 0);
	for (size_t i = 0; i < sizeof(ps.any.bits); i++)
		if (ps.any.bits[i] || ps.loopback.bits[i] || ps.other.bits[i]) {
			CHECK(!"a port from a bad line");
			break;
		}
}

/**
 * bound() - a socket of @type bound to @addr, port chosen by the kernel
 * @family:	AF_INET or AF_INET6
 * @type:	SOCK_STREAM (then listening) or SOCK_DGRAM
 * @addr:	address literal
 * @port:	set to the port
 *
 * Return: the socket, or -1
 */
static int bound(int family, int type, const char *addr, unsigned int *port)
{
	struct sockaddr_storage ss = {0};
	socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in)
	                                  : sizeof(struct sockaddr_in6);
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	ss.ss_family = (sa_family_t)family;
	if (fd < 0 ||
	    inet_pton(family, addr,
	              family == AF_INET ? (void *)&s4->sin_addr
	                                : (void *)&s6->sin6_addr) != 1 ||
	    bind(fd, (struct sockaddr *)&ss, len) ||
	    (type == SOCK_STREAM && listen(fd, 1)) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(family == AF_INET ? s4->sin_port : s6->sin6_port);
	return fd;
}

/**
 * live_body() - the kernel's own tables, in a fresh netns: what is bound
 *		 shows in its class, a second scan of the same fd sees a
 *		 socket closed meanwhile go
 */
static void live_body(void)
{
	unsigned int p1 = 0, p2 = 0, p3 = 0;
	int l1 = bound(AF_INET, SOCK_STREAM, "127.0.0.1", &p1);
	int l2 = bound(AF_INET6, SOCK_STREAM, "::", &p2);
	int u1 = bound(AF_INET, SOCK_DGRAM, "0.0.0.0", &p3);
	int t4 = open("/proc/self/net/tcp", O_RDONLY | O_CLOEXEC);
	int t6 = open("/proc/self/net/tcp6", O_RDONLY | O_CLOEXEC);
	int ud = open("/proc/self/net/udp", O_RDONLY | O_CLOEXEC);

	CHECK(l1 >= 0 && l2 >= 0 && u1 >= 0 && t4 >= 0 && t6 >= 0 && ud >= 0);
	memset(&ps, 0, sizeof(ps));
	CHECK(portscan_read(t4, PORTSCAN_TCP, &ps) == 0 &&
	      portscan_read(t6, PORTSCAN_TCP, &ps) == 0);
	CHECK(port_set_has(&ps.loopback, p1) && port_set_has(&ps.any, p2));
	/* The pair starts afresh, and 127.0.0.1 itself is in lo1 too. */
	memset(&ps, 0xff, sizeof(ps));
	CHECK(portscan_read_pair(t4, t6, PORTSCAN_TCP, &ps) == 0);
	CHECK(port_set_has(&ps.lo1, p1) && port_set_has(&ps.any, p2) &&
	      !port_set_has(&ps.lo1, p2) && !port_set_has(&ps.other, p1));
	/* :: is reached at ::1 (-T's IPv6 side); 127.0.0.1 is not. */
	CHECK(port_set_has(&ps.lo6, p2) && !port_set_has(&ps.lo6, p1));
	CHECK(portscan_read_pair(t4, -1, PORTSCAN_TCP, &ps) == 0 &&
	      port_set_has(&ps.lo1, p1) && !port_set_has(&ps.any, p2));
	memset(&ps, 0, sizeof(ps));
	CHECK(portscan_read(ud, PORTSCAN_UDP, &ps) == 0 &&
	      port_set_has(&ps.any, p3));
	close(l1);
	memset(&ps, 0, sizeof(ps));
	CHECK(portscan_read(t4, PORTSCAN_TCP, &ps) == 0 &&
	      !port_set_has(&ps.loopback, p1));
	close(l2);
	close(u1);
	close(t4);
	close(t6);
	close(ud);
}

static void test_live(void)
{
	CHECK(unit_netns_run(live_body));
}

/* Connections open during the sock_diag test: each is two sockets. */
#define DIAG_CONNS 1000

/**
 * connect_many() - @n loopback connections to a listener of their own
 * @fds:	filled with 2 * @n sockets, -1 where one failed
 * @n:		connections
 *
 * Return: how many opened
 */
static int connect_many(int *fds, int n)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok = 0;

	for (int i = 0; i < 2 * n; i++)
		fds[i] = -1;
	if (l < 0 || bind(l, (struct sockaddr *)&sa, len) || listen(l, 64) ||
	    getsockname(l, (struct sockaddr *)&sa, &len)) {
		if (l >= 0)
			close(l);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		fds[2 * i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[2 * i] < 0 ||
		    connect(fds[2 * i], (struct sockaddr *)&sa, len))
			break;
		fds[2 * i + 1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		ok += fds[2 * i + 1] >= 0;
	}
	close(l);
	return ok;
}

/**
 * same_ports() - two scans found the same ports in every set
 * @a:		one
 * @b:		other
 *
 * Return: true if so
 */
static bool same_ports(const struct portscan *a, const struct portscan *b)
{
	return !memcmp(&a->any, &b->any, sizeof(a->any)) &&
	       !memcmp(&a->loopback, &b->loopback, sizeof(a->loopback)) &&
	       !memcmp(&a->other, &b->other, sizeof(a->other)) &&
	       !memcmp(&a->lo1, &b->lo1, sizeof(a->lo1)) &&
	       !memcmp(&a->lo6, &b->lo6, sizeof(a->lo6));
}

/**
 * diag_body() - sock_diag against the tables, in a fresh netns, with
 *		 DIAG_CONNS connections open: the same ports, and only the
 *		 bound sockets looked at; a side without sock_diag reads its
 *		 tables
 */
static void diag_body(void)
{
	static int conns[2 * DIAG_CONNS];
	static struct portscan tables;
	unsigned int p1 = 0, p2 = 0, p3 = 0, p4 = 0;
	int l1 = bound(AF_INET, SOCK_STREAM, "127.0.0.1", &p1);
	int l2 = bound(AF_INET6, SOCK_STREAM, "::", &p2);
	int u1 = bound(AF_INET, SOCK_DGRAM, "0.0.0.0", &p3);
	int u2 = bound(AF_INET6, SOCK_DGRAM, "::1", &p4);
	int t4 = open("/proc/self/net/tcp", O_RDONLY | O_CLOEXEC);
	int t6 = open("/proc/self/net/tcp6", O_RDONLY | O_CLOEXEC);
	int d4 = open("/proc/self/net/udp", O_RDONLY | O_CLOEXEC);
	int d6 = open("/proc/self/net/udp6", O_RDONLY | O_CLOEXEC);
	int diag = netlink_diag_open(), none;

	CHECK(l1 >= 0 && l2 >= 0 && u1 >= 0 && u2 >= 0 && t4 >= 0 && t6 >= 0 &&
	      d4 >= 0 && d6 >= 0 && diag >= 0);
	CHECK(connect_many(conns, DIAG_CONNS) == DIAG_CONNS);
	CHECK(portscan_read_pair(t4, t6, PORTSCAN_TCP, &tables) == 0);
	CHECK(portscan_read_side(&diag, t4, t6, PORTSCAN_TCP, &ps) == 0);
	printf("#   %d connections open: sock_diag looked at %u sockets, the "
	       "tables at %u\n",
	       DIAG_CONNS, ps.looked, tables.looked);
	CHECK(diag >= 0 && ps.looked <= 4);
	CHECK(same_ports(&ps, &tables));
	CHECK(port_set_has(&ps.lo1, p1) && port_set_has(&ps.any, p2) &&
	      port_set_has(&ps.lo6, p2));
	CHECK(portscan_read_pair(d4, d6, PORTSCAN_UDP, &tables) == 0);
	CHECK(portscan_read_side(&diag, d4, d6, PORTSCAN_UDP, &ps) == 0);
	CHECK(diag >= 0 && same_ports(&ps, &tables));
	CHECK(port_set_has(&ps.any, p3) && port_set_has(&ps.lo6, p4));
	/* A side without sock_diag (a helper that could not make the
	 * socket passes a table in its place): the tables, from then on.
	 */
	none = dup(t4);
	CHECK(portscan_read_side(&none, t4, t6, PORTSCAN_TCP, &ps) == 0);
	CHECK(none == -1);
	CHECK(portscan_read_pair(t4, t6, PORTSCAN_TCP, &tables) == 0);
	CHECK(same_ports(&ps, &tables) && port_set_has(&ps.lo1, p1));
	CHECK(portscan_read_side(&none, t4, t6, PORTSCAN_TCP, &ps) == 0 &&
	      same_ports(&ps, &tables));
	for (int i = 0; i < 2 * DIAG_CONNS; i++)
		if (conns[i] >= 0)
			close(conns[i]);
	close(diag);
	close(l1);
	close(l2);
	close(u1);
	close(u2);
	close(t4);
	close(t6);
	close(d4);
	close(d6);
}

/* The scan asks the kernel for the bound sockets alone: with a thousand
 * connections open it looked at 2000 lines of the tables each second.
 */
static void test_diag(void)
{
	CHECK(unit_netns_run(diag_body));
}

static void test_mask(void)
{
	struct portscan tcp = {0};
	struct port_set own = {0};

	/* tapir's own 127.0.0.1:8097 goes; the same port elsewhere stays. */
	port_set_add(&tcp.loopback, 8097);
	port_set_add(&tcp.lo1, 8097);
	port_set_add(&tcp.loopback, 8098);
	port_set_add(&tcp.any, 8097);
	port_set_add(&own, 8097);
	portscan_mask(&tcp, &own);
	CHECK(!port_set_has(&tcp.loopback, 8097) &&
	      !port_set_has(&tcp.lo1, 8097));
	CHECK(port_set_has(&tcp.loopback, 8098) &&
	      port_set_has(&tcp.any, 8097));
	portscan_mask(&tcp, NULL);
	CHECK(port_set_has(&tcp.loopback, 8098));
}

static void test_merge(void)
{
	struct portscan tcp = {0}, udp = {0};

	/* UDP takes TCP's ports, each in its own set, and keeps its own. */
	port_set_add(&tcp.any, 5201);
	port_set_add(&tcp.other, 8080);
	port_set_add(&tcp.loopback, 8098);
	port_set_add(&tcp.lo1, 8098);
	port_set_add(&udp.any, 53);
	portscan_merge(&udp, &tcp);
	CHECK(port_set_has(&udp.any, 53) && port_set_has(&udp.any, 5201) &&
	      port_set_has(&udp.other, 8080) &&
	      port_set_has(&udp.loopback, 8098) &&
	      port_set_has(&udp.lo1, 8098));
	CHECK(!port_set_has(&udp.other, 5201) &&
	      !port_set_has(&udp.loopback, 5201) &&
	      !port_set_has(&tcp.any, 53));
}

const struct unit_case unit_cases[] = {
        {"tables as the kernel prints them: listening or unconnected ports "
         "by the address bound",
         test_tables},
        {"overlong, cut and malformed lines: skipped, nothing invented",
         test_junk},
        {"this kernel's tables, read again through one fd", test_live},
        {"sock_diag: the tables' ports, looking at the bound sockets alone; "
         "without it, the tables",
         test_diag},
        {"tapir's own loopback ports masked, nothing else", test_mask},
        {"one scan's ports added to another's, set by set", test_merge},
        {NULL, NULL},
};
