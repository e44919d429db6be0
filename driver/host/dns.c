// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - the host's resolvers, from /etc/resolv.conf, for the forwarder */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "driver/core/clock.h"
#include "driver/host/outbound.h"
#include "driver/host/dns.h"
#include "driver/core/inany.h"
#include "driver/core/log.h"
#include "driver/core/opts.h"

/* Syscalls the resolver cache makes once running: re-reading resolv.conf,
 * if_nametoindex() for a scoped server (an AF_INET socket and
 * ioctl(SIOCGIFINDEX), which seccomp.c allows alone), and the connect()
 * that tells an unreachable server.
 */
const char *const dns_syscalls[] = {
        "openat", "open",   "read",  "fstat", "newfstatat", "statx", "lseek",
        "close",  "socket", "ioctl", "bind",  "connect",    NULL,
};

#define RESOLV_CONF "/etc/resolv.conf"
/* Enough for any real resolv.conf; nameserver lines sit near the top. */
#define RESOLV_MAX 65536
/* An address with a scope: 45 characters, '%', an interface name. */
#define TOKEN_MAX 64

/**
 * struct dns_state - the cached resolver list
 * @checked_ms:	monotonic time of the last stat(), 0 before the first
 * @dev:	device of the file last parsed
 * @ino:	its inode
 * @size:	its size
 * @mtime:	its modification time
 * @n:		entries in @ns
 * @use:	the entry queries go to: the first reachable one
 * @ns:		nameservers, port 53, in file order
 * @buf:	the file's text while it is parsed
 */
struct dns_state {
	uint64_t checked_ms;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int n;
	int use;
	union sockaddr_inany ns[DNS_MAX_SERVERS];
	char buf[RESOLV_MAX];
};

/**
 * parse_scope() - interface index of an IPv6 scope suffix
 * @s:		text after '%': a number or an interface name
 *
 * A name is looked up with if_nametoindex(): an AF_INET socket and
 * ioctl(SIOCGIFINDEX), both allowed by the seccomp filter, as NetworkManager
 * writes "fe80::1%wlan0" from a router advertisement. A name that is no
 * interface (yet, or any more) is said once in a while: the server is
 * skipped.
 *
 * Return: the index, 0 if unknown
 */
static uint32_t parse_scope(const char *s)
{
	static struct log_limit limit;
	unsigned long v;
	unsigned int idx;
	char *end;

	if (!*s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*end && !errno && v <= UINT32_MAX)
		return (uint32_t)v;
	idx = if_nametoindex(s);
	if (!idx)
		err_limited(&limit, errno == ENODEV ? 0 : errno,
		            "dns: nameserver scope %%%.*s: no such interface, "
		            "server skipped",
		            IF_NAMESIZE, s);
	return idx;
}

/**
 * parse_server() - turn one nameserver token into a socket address
 * @tok:	NUL-terminated address, IPv6 possibly with %scope
 * @sa:		filled with the address and port 53
 *
 * A link-local server without a usable scope is unreachable, so it is
 * skipped rather than guessed.
 *
 * Return: 0 on success, -1 to skip the line
 */
static int parse_server(char *tok, union sockaddr_inany *sa)
{
	char *pct = strchr(tok, '%');

	memset(sa, 0, sizeof(*sa));
	if (!pct && inet_pton(AF_INET, tok, &sa->sa4.sin_addr) == 1) {
		sa->sa4.sin_family = AF_INET;
		sa->sa4.sin_port = htons(53);
		return 0;
	}
	if (pct)
		*pct = '\0';
	if (inet_pton(AF_INET6, tok, &sa->sa6.sin6_addr) != 1)
		return -1;
	sa->sa6.sin6_family = AF_INET6;
	sa->sa6.sin6_port = htons(53);
	if (pct)
		sa->sa6.sin6_scope_id = parse_scope(pct + 1);
	if (IN6_IS_ADDR_LINKLOCAL(&sa->sa6.sin6_addr) && !sa->sa6.sin6_scope_id)
		return -1;
	return 0;
}

/**
 * nameserver_token() - find the address on a "nameserver" line
 * @line:	start of the line
 * @len:	its length, without the newline
 * @tok:	filled with the NUL-terminated address
 *
 * As glibc: the keyword starts the line and is followed by a blank; the
 * address ends at a blank or a comment character.
 *
 * Return: 0 if @line names a server that fits @tok, -1 otherwise
 */
static int nameserver_token(const char *line, size_t len, char tok[TOKEN_MAX])
{
	static const char kw[] = "nameserver";
	size_t i = sizeof(kw) - 1, start;

	if (len <= i || memcmp(line, kw, i) ||
	    (line[i] != ' ' && line[i] != '\t'))
		return -1;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	start = i;
	/* strchr() matches the terminating NUL too: a NUL byte ends it. */
	while (i < len && !strchr(" \t\r;#", line[i]))
		i++;
	if (i == start || i - start >= TOKEN_MAX)
		return -1;
	memcpy(tok, line + start, i - start);
	tok[i - start] = '\0';
	return 0;
}

/**
 * dns_parse_resolv() - list the nameservers of a resolv.conf text
 * @text:	file contents, not necessarily NUL-terminated
 * @len:	bytes at @text
 * @out:	filled with up to @max addresses, port 53
 * @max:	capacity of @out
 *
 * Unparseable lines and addresses are skipped, as the C library does.
 *
 * Return: number of addresses stored
 */
int dns_parse_resolv(const char *text, size_t len, union sockaddr_inany *out,
                     int max)
{
	size_t pos = 0;
	int n = 0;

	while (pos < len && n < max) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - line) : len - pos;
		char tok[TOKEN_MAX];

		pos += llen + 1;
		if (nameserver_token(line, llen, tok))
			continue;
		if (!parse_server(tok, &out[n]))
			n++;
	}
	return n;
}

/**
 * read_resolv() - read up to RESOLV_MAX bytes of the resolver file
 * @s:		cache, whose buffer receives them
 * @fd:		open file
 *
 * Return: bytes read into @s->buf, or -errno
 */
static ssize_t read_resolv(struct dns_state *s, int fd)
{
	size_t len = 0;

	while (len < sizeof(s->buf)) {
		ssize_t r = read(fd, s->buf + len, sizeof(s->buf) - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		len += (size_t)r;
	}
	return (ssize_t)len;
}

/**
 * dns_refresh() - re-read the resolver file if it changed
 * @s:		cache
 * @path:	the file: /etc/resolv.conf unless the context names another
 *
 * Called at most once a second; an unchanged file (device, inode, size,
 * mtime) keeps the cached list, and a missing file empties it. So does one
 * that can't be read (a directory, EIO), which is tried again next time
 * rather than taken for an empty file.
 */
static void dns_refresh(struct dns_state *s, const char *path)
{
	static struct log_limit limit;
	struct stat st;
	ssize_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		if (s->n)
			debug_msg("dns: %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		s->n = 0;
		s->ino = 0;
		return;
	}
	if (s->ino && st.st_dev == s->dev && st.st_ino == s->ino &&
	    st.st_size == s->size && st.st_mtim.tv_sec == s->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == s->mtime.tv_nsec) {
		close(fd);
		return;
	}
	len = read_resolv(s, fd);
	close(fd);
	if (len < 0) {
		err_limited(&limit, (int)-len, "dns: read %s", path);
		s->n = 0;
		s->ino = 0;
		return;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->size = st.st_size;
	s->mtime = st.st_mtim;
	s->n = dns_parse_resolv(s->buf, (size_t)len, s->ns, DNS_MAX_SERVERS);
	debug_msg("dns: %d nameserver(s) in %s", s->n, path);
}

/**
 * reachable() - whether the host has a route to nameserver @sa
 * @c:		context, for --outbound-addr
 * @sa:		the server
 *
 * A connect() of a UDP socket sends nothing: it only asks the routing
 * table, which refuses a link-local server on an interface that can't
 * reach it (fe80::1%lo: ENETUNREACH) as glibc's stub resolver would find
 * when it moves on to the next server.
 *
 * Return: false if the kernel refused, true otherwise (also when it could
 *	   not be asked: out of fds, the server is tried anyway)
 */
static bool reachable(const struct ctx *c, const union sockaddr_inany *sa)
{
	int family = sa->sa.sa_family;
	socklen_t len = family == AF_INET ? sizeof(sa->sa4) : sizeof(sa->sa6);
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return true;
	/* A refused --outbound-addr bind is the flow's to report. */
	ok = outbound_bind(c, fd, family) || !connect(fd, &sa->sa, len);
	close(fd);
	return ok;
}

/**
 * pick_server() - the first nameserver the host can reach, or the first
 * @c:		context
 * @s:		cache with @s->n > 0; @s->use is set
 */
static void pick_server(const struct ctx *c, struct dns_state *s)
{
	s->use = 0;
	if (s->n < 2)
		return;
	for (int i = 0; i < s->n; i++) {
		if (reachable(c, &s->ns[i])) {
			s->use = i;
			return;
		}
	}
}

/**
 * dns_state_fresh() - the resolver cache, created on first use, checked
 *		       against the file at most once a second
 * @c:		context; the cache lives in c->dns
 *
 * Return: the cache, or NULL if it could not be allocated
 */
static struct dns_state *dns_state_fresh(struct ctx *c)
{
	struct dns_state *s = c->dns;
	uint64_t now = clock_ms();

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		c->dns = s;
	}
	if (!s->checked_ms || now - s->checked_ms >= 1000) {
		s->checked_ms = now ? now : 1;
		dns_refresh(s, c->resolv_conf ? c->resolv_conf : RESOLV_CONF);
		pick_server(c, s);
	}
	return s;
}

/**
 * dns_upstream() - where DNS queries to the forwarder address go
 * @c:		context; the cache is created in c->dns on first use
 * @sa:		filled with the host's first nameserver, port 53
 * @salen:	filled with its length
 *
 * A loopback resolver is returned as it is, even with
 * --disable-host-loopback: slirp4netns forwards to it too. A server the
 * host has no route to is passed over for the next one (checked with the
 * file, at most once a second). pasta's --dns-host names it instead.
 *
 * Return: 0 on success, -1 if the host names no usable nameserver
 */
int dns_upstream(struct ctx *c, union sockaddr_inany *sa, socklen_t *salen)
{
	const struct pasta_opts *po = c->o->pasta;
	struct dns_state *s;
	struct in6_addr a;

	/* pasta's --dns-host; IPv4 first, as tapir has one upstream. */
	if (po && (po->dns_host.v4_set || po->dns_host.v6_set)) {
		if (po->dns_host.v4_set)
			inany_from_v4(&a, po->dns_host.v4);
		else
			a = po->dns_host.v6;
		sockaddr_from_inany(sa, salen, &a, 53);
		return 0;
	}
	s = dns_state_fresh(c);
	if (!s || !s->n)
		return -1;
	*sa = s->ns[s->use];
	*salen =
	        sa->sa.sa_family == AF_INET ? sizeof(sa->sa4) : sizeof(sa->sa6);
	return 0;
}

/**
 * dns_host_resolves_at() - whether the host's resolv.conf names @a, or a
 *			    loopback address, as a nameserver
 * @c:		context; the cache is created in c->dns on first use
 * @a:		address (IPv4-mapped for IPv4); a scope is not compared
 *
 * pasta's exception for its mapped gateway: DNS to it is meant for the
 * host's resolver, not for whatever listens on the host's port 53, when
 * the host's resolver is the gateway itself (a home router) or sits on
 * a loopback address (systemd-resolved's 127.0.0.53).
 *
 * Return: true if so
 */
bool dns_host_resolves_at(struct ctx *c, const struct in6_addr *a)
{
	struct dns_state *s = dns_state_fresh(c);

	for (int i = 0; s && i < s->n; i++) {
		const union sockaddr_inany *ns = &s->ns[i];

		if (ns->sa.sa_family == AF_INET &&
		    ((ntohl(ns->sa4.sin_addr.s_addr) >> 24) == 127 ||
		     (inany_is_v4(a) &&
		      inany_v4(a).s_addr == ns->sa4.sin_addr.s_addr)))
			return true;
		if (ns->sa.sa_family == AF_INET6 &&
		    (IN6_IS_ADDR_LOOPBACK(&ns->sa6.sin6_addr) ||
		     inany_equal(a, &ns->sa6.sin6_addr)))
			return true;
	}
	return false;
}

/**
 * dns_cleanup() - free the resolver cache
 * @c:		context
 */
void dns_cleanup(struct ctx *c)
{
	free(c->dns);
	c->dns = NULL;
}
