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
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include "driver/core/inany.h"
#include "driver/fwd/portscan.h"

/* A line of any of the four tables is well under this; longer ones are
 * skipped whole.
 */
#define LINE_MAX_LEN 512
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

	skip_field(&p, end); /* "sl:" */
	if (parse_addr(&p, end, &a, &port))
		return;      /* the header, or not a table line */
	skip_field(&p, end); /* the remote address */
	if (hex_word(&p, end, 2, &state))
		return;
	if (state != (proto == PORTSCAN_TCP ? STATE_LISTEN : STATE_CLOSE) ||
	    !port)
		return;
	port_set_add(classify(ps, &a), port);
	if (inany_is_v4(&a) && ntohl(inany_v4(&a).s_addr) == INADDR_LOOPBACK)
		port_set_add(&ps->lo1, port);
	else if (IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_UNSPECIFIED(&a))
		port_set_add(&ps->lo6, port);
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
