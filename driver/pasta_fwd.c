// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - pasta's forwards: -t/-u lists and "auto", and the rescan timer
 * that -T and -U (nsfwd.c) share
 *
 * A list becomes host forwards at start, as -p does (hostfwd.c): a port
 * without an address listens on 0.0.0.0 and, unless -4, on ::. "auto"
 * forwards whatever listens in the namespace: once a second the
 * namespace's /proc/net tables (which the namespace helper opened in it,
 * read with pread) are scanned, and forwards are added and removed to
 * match, as rootlesskit's "implicit" port driver expects of pasta.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "seccomp.h"
#include "hostfwd.h"
#include "inany.h"
#include "log.h"
#include "nshelper.h"
#include "nsfwd.h"
#include "pasta_cli.h"
#include "pasta_fwd.h"
#include "portscan.h"

/* Syscalls of the rescan, once running (forwards: hostfwd.c's). */
const char *const pasta_fwd_syscalls[] = {"pread64", NULL};

/* The host has IPv6 sockets (a kernel booted with ipv6.disable=1 has
 * none): forwards listen on :: too.
 */
static bool host_ipv6 = true;

/**
 * struct auto_fwd - the host forwards that stand for one namespace port
 * @udp:	UDP rather than TCP
 * @port:	the port, on both sides
 * @lo:		on the host's loopback only (127.0.0.1, ::1), else on every
 *		address
 * @id4:	forward on 0.0.0.0 (or 127.0.0.1), or 0
 * @id6:	forward on :: (or ::1), or 0
 */
struct auto_fwd {
	bool udp;
	uint16_t port;
	bool lo;
	unsigned int id4;
	unsigned int id6;
};

/**
 * struct pasta_fwd_state - what "auto" keeps between scans
 * @scan:	the rescan timer
 * @scans:	scans so far
 * @on:		per protocol, ports in @f
 * @failed:	per protocol, ports the host refused (taken there, say):
 *		tried again every PASTA_FWD_RETRY_SCANS scans
 * @seen:	scratch: what the last scan found
 * @n:		entries in @f
 * @f:		forwards made by "auto"
 */
struct pasta_fwd_state {
	struct event *scan;
	unsigned int scans;
	struct port_set on[2];
	struct port_set failed[2];
	struct portscan seen;
	unsigned int n;
	struct auto_fwd f[HOSTFWD_MAX];
};

/**
 * add_one() - one host forward of @port to the guest's @target
 * @c:		context
 * @udp:	UDP rather than TCP
 * @addr:	host address to listen on
 * @port:	host port
 * @target:	port in the namespace
 * @id:		set to the forward's id
 * @why:	on failure, the reason
 * @whylen:	size of @why
 *
 * Return: 0, or -errno
 */
static int add_one(struct ctx *c, bool udp, const struct in6_addr *addr,
                   uint16_t port, uint16_t target, unsigned int *id, char *why,
                   size_t whylen)
{
	struct hostfwd_spec s = {
	        .udp = udp,
	        .host_addr = *addr,
	        .host_port = port,
	        .guest_port = target,
	};
	int ret;

	inany_from_v4(&s.guest_addr, c->guest4);
	ret = hostfwd_add(c, &s, why, whylen);
	*id = ret ? 0 : s.id;
	return ret;
}

/**
 * add_pair() - forward @port on every host address: 0.0.0.0, and :: too
 *		unless IPv6 is off; or on the host's loopback likewise
 * @c:		context
 * @udp:	UDP rather than TCP
 * @lo:		on 127.0.0.1 and ::1 only
 * @port:	host port
 * @target:	port in the namespace
 * @a:		filled with the forwards' ids
 * @why:	on failure, the reason
 * @whylen:	size of @why
 *
 * Return: 0 if both (or the IPv4 one alone, with -4 or on a host without
 *	   IPv6) listen, or -errno with nothing left listening
 */
static int add_pair(struct ctx *c, bool udp, bool lo, uint16_t port,
                    uint16_t target, struct auto_fwd *a, char *why,
                    size_t whylen)
{
	struct in6_addr addr4;
	int ret;

	inany_from_v4(&addr4,
	              (struct in_addr){lo ? htonl(INADDR_LOOPBACK) : 0});
	a->udp = udp;
	a->port = port;
	a->lo = lo;
	a->id6 = 0;
	ret = add_one(c, udp, &addr4, port, target, &a->id4, why, whylen);
	if (ret || !c->o->ipv6 || !host_ipv6)
		return ret;
	ret = add_one(c, udp, lo ? &in6addr_loopback : &in6addr_any, port,
	              target, &a->id6, why, whylen);
	if (ret)
		hostfwd_remove(c, a->id4);
	return ret;
}

/**
 * add_list() - the ranges of one -t or -u option, at start
 * @c:		context
 * @udp:	UDP (-u) rather than TCP (-t)
 * @pp:		the option's ranges
 *
 * Return: 0, or -1 after one error line naming the port
 */
static int add_list(struct ctx *c, bool udp, const struct pasta_ports *pp)
{
	char why[256];
	unsigned int id;

	for (unsigned int i = 0; i < pp->n; i++) {
		const struct pasta_range *r = &pp->r[i];

		for (unsigned int p = r->first; p <= r->last; p++) {
			uint16_t target = (uint16_t)(r->target + p - r->first);
			struct auto_fwd a;
			int ret;

			if (r->addr_set)
				ret = add_one(c, udp, &r->addr, (uint16_t)p,
				              target, &id, why, sizeof(why));
			else
				ret = add_pair(c, udp, false, (uint16_t)p,
				               target, &a, why, sizeof(why));
			if (ret) {
				err_msg("-%c: %s", udp ? 'u' : 't', why);
				return -1;
			}
		}
	}
	return 0;
}

/**
 * auto_find() - the entry of an auto forward
 * @s:		state
 * @udp:	protocol
 * @port:	port
 *
 * Return: its index, or -1
 */
static int auto_find(const struct pasta_fwd_state *s, bool udp,
                     unsigned int port)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (s->f[i].udp == udp && s->f[i].port == port)
			return (int)i;
	return -1;
}

/**
 * auto_remove() - the port left the namespace: stop forwarding it
 * @c:		context
 * @s:		state
 * @i:		its entry
 *
 * Connections already made stay up (hostfwd_remove()).
 */
static void auto_remove(struct ctx *c, struct pasta_fwd_state *s, int i)
{
	struct auto_fwd *a = &s->f[i];

	if (a->id4)
		hostfwd_remove(c, a->id4);
	if (a->id6)
		hostfwd_remove(c, a->id6);
	debug_msg("auto: %s port %u no longer bound in the namespace",
	          a->udp ? "UDP" : "TCP", a->port);
	port_set_del(&s->on[a->udp], a->port);
	s->f[i] = s->f[--s->n];
}

/**
 * auto_add() - a port appeared in the namespace: forward it
 * @c:		context
 * @s:		state
 * @udp:	protocol
 * @port:	port
 * @lo:		on the host's loopback only
 *
 * A port the host refuses (taken there, or the table full) is reported,
 * rate-limited, and tried again every PASTA_FWD_RETRY_SCANS scans.
 *
 * Return: false if the forward table is full: no use trying more ports
 *	   in this scan
 */
static bool auto_add(struct ctx *c, struct pasta_fwd_state *s, bool udp,
                     unsigned int port, bool lo)
{
	static struct log_limit lim;
	char why[256];
	int ret = -ENOSPC;

	if (s->n < HOSTFWD_MAX &&
	    !(ret = add_pair(c, udp, lo, (uint16_t)port, (uint16_t)port,
	                     &s->f[s->n], why, sizeof(why)))) {
		s->n++;
		port_set_add(&s->on[udp], port);
		return true;
	}
	if (s->n == HOSTFWD_MAX)
		snprintf(why, sizeof(why), "%s port %u: %d forwards already",
		         udp ? "UDP" : "TCP", port, HOSTFWD_MAX);
	/* The guest picks the ports: its churn must not flood the log. */
	if (!c->o->pasta->quiet)
		err_limited(&lim, 0, "auto: can't forward %s", why);
	port_set_add(&s->failed[udp], port);
	return ret != -ENOSPC;
}

/**
 * scan_table() - read both of a protocol's tables (c->ns_tables, from the
 *		  namespace helper) into s->seen
 * @c:		context
 * @s:		state
 * @udp:	protocol
 *
 * Return: 0, or -errno of the first table that could not be read
 */
static int scan_table(const struct ctx *c, struct pasta_fwd_state *s, bool udp)
{
	return portscan_read_pair(c->ns_tables[udp ? NS_UDP : NS_TCP],
	                          c->ns_tables[udp ? NS_UDP6 : NS_TCP6],
	                          udp ? PORTSCAN_UDP : PORTSCAN_TCP, &s->seen);
}

/* How a namespace port is forwarded from the host, if at all. */
enum auto_kind {
	AUTO_NONE, /* not bound, or only where the host can't reach it */
	AUTO_ALL,  /* on every host address */
	AUTO_LO,   /* on the host's loopback only */
};

/**
 * kind_of() - how the last scan's port @p is to be forwarded
 * @c:		context
 * @s:		state, s->seen filled
 * @p:		port
 *
 * A port bound only to the namespace's loopback is not reachable through
 * the tap: it is forwarded only with --host-lo-to-ns-lo, which brings
 * clients on the host's loopback to the namespace's, and then only from
 * the host's loopback (Docker's proxy for -p 127.0.0.1:P:Q).
 *
 * Return: enum auto_kind
 */
static enum auto_kind kind_of(const struct ctx *c,
                              const struct pasta_fwd_state *s, unsigned int p)
{
	if (port_set_has(&s->seen.any, p) || port_set_has(&s->seen.other, p))
		return AUTO_ALL;
	if (c->o->host_lo_to_ns_lo && port_set_has(&s->seen.loopback, p))
		return AUTO_LO;
	return AUTO_NONE;
}

/**
 * sync_proto() - make one protocol's auto forwards match the namespace
 * @c:		context
 * @s:		state, s->seen filled for this protocol
 * @udp:	protocol
 *
 * A port whose kind changed (bound to every address after loopback only,
 * say) is forwarded anew.
 */
static void sync_proto(struct ctx *c, struct pasta_fwd_state *s, bool udp)
{
	bool room = true;

	if (!(s->scans % PASTA_FWD_RETRY_SCANS))
		memset(&s->failed[udp], 0, sizeof(s->failed[udp]));
	for (unsigned int p = 1; p < 65536; p++) {
		enum auto_kind want = kind_of(c, s, p);
		bool on = port_set_has(&s->on[udp], p);

		if (on) {
			int i = auto_find(s, udp, p);

			if (want == AUTO_NONE ||
			    s->f[i].lo != (want == AUTO_LO)) {
				auto_remove(c, s, i);
				on = false;
			}
		}
		if (want == AUTO_NONE)
			port_set_del(&s->failed[udp], p);
		else if (room && !on && !port_set_has(&s->failed[udp], p))
			room = auto_add(c, s, udp, p, want == AUTO_LO);
	}
}

/**
 * mode_of() - what one -t or -u option asks for, pasta's default applied
 * @pp:		the option
 *
 * Return: PASTA_PORTS_NONE, PASTA_PORTS_AUTO or PASTA_PORTS_LIST
 */
static enum pasta_ports_mode mode_of(const struct pasta_ports *pp)
{
	return pp->mode == PASTA_PORTS_UNSET ? PASTA_PORTS_AUTO : pp->mode;
}

/**
 * scan_cb() - timer: rescan the namespace, both protocols that are "auto"
 * @fd:		unused
 * @what:	unused
 * @arg:	struct ctx
 */
static void scan_cb(evutil_socket_t fd, short what, void *arg)
{
	static struct log_limit lim = {0};
	struct ctx *c = arg;
	struct pasta_fwd_state *s = c->pasta_fwd;
	const struct pasta_opts *po = c->o->pasta;
	int ret;

	(void)fd;
	(void)what;
	for (int udp = 0; udp < 2; udp++) {
		if (mode_of(udp ? &po->udp : &po->tcp) != PASTA_PORTS_AUTO)
			continue;
		ret = scan_table(c, s, udp);
		if (ret) {
			err_limited(&lim, -ret,
			            "auto: read the namespace's "
			            "sockets");
			continue;
		}
		sync_proto(c, s, udp);
	}
	s->scans++;
	nsfwd_sync(c);
}

/**
 * check_tables() - the namespace's socket tables came with the tap
 * @c:		context
 *
 * The helper opened them inside the namespace, whether a PID or a
 * --netns path named it; the context closes them.
 *
 * Return: 0, or -1 after one error line
 */
static int check_tables(const struct ctx *c)
{
	for (int i = 0; i < NS_TABLES; i++) {
		if (c->ns_tables[i] < 0) {
			err_msg("auto: the namespace's socket tables did not "
			        "come with the tap");
			return -1;
		}
	}
	return 0;
}

/**
 * start_auto() - the first scan now, then one a second
 * @c:		context
 * @s:		state
 *
 * Return: 0, or -1 after one error line
 */
static int start_auto(struct ctx *c, struct pasta_fwd_state *s)
{
	const struct timeval tv = {PASTA_FWD_SCAN_MS / 1000,
	                           (PASTA_FWD_SCAN_MS % 1000) * 1000};
	const struct pasta_opts *po = c->o->pasta;

	if ((mode_of(&po->tcp) == PASTA_PORTS_AUTO ||
	     mode_of(&po->udp) == PASTA_PORTS_AUTO) &&
	    check_tables(c))
		return -1;
	s->scan = event_new(c->base, -1, EV_PERSIST, scan_cb, c);
	if (!s->scan || event_add(s->scan, &tv)) {
		err_msg("auto: create the rescan timer: libevent failed");
		return -1;
	}
	scan_cb(-1, 0, c);
	return 0;
}

/**
 * probe_host_ipv6() - can the host have IPv6 sockets at all
 *
 * Return: false only on a host whose kernel has no IPv6 (EAFNOSUPPORT):
 *	   forwards then listen on 0.0.0.0 only, as pasta's do there
 */
static bool probe_host_ipv6(void)
{
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	if (errno != EAFNOSUPPORT)
		return true; /* the listen itself will say what is wrong */
	info_msg("no IPv6 on the host: forwards listen on 0.0.0.0 only");
	return false;
}

/**
 * pasta_fwd_start() - pasta mode: -t, -u, -T and -U
 * @c:		context, after hostfwd_init()
 *
 * Return: 0 (also outside pasta mode), or -1 after one error line
 */
int pasta_fwd_start(struct ctx *c)
{
	const struct pasta_opts *po = c->o->pasta;
	struct pasta_fwd_state *s;

	if (!po)
		return 0;
	host_ipv6 = probe_host_ipv6();
	if (add_list(c, false, &po->tcp) || add_list(c, true, &po->udp))
		return -1;
	if (nsfwd_start(c, &po->tcp_ns, &po->udp_ns))
		return -1;
	if (mode_of(&po->tcp) != PASTA_PORTS_AUTO &&
	    mode_of(&po->udp) != PASTA_PORTS_AUTO && !c->nsfwd)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s) {
		err_errno(ENOMEM, "auto: allocate state");
		return -1;
	}
	c->pasta_fwd = s;
	return start_auto(c, s);
}

/**
 * pasta_fwd_stop() - stop rescanning; the forwards go with hostfwd's table
 * @c:		context; pasta_fwd_start() may not have run
 */
void pasta_fwd_stop(struct ctx *c)
{
	struct pasta_fwd_state *s = c->pasta_fwd;

	nsfwd_stop(c);
	if (!s)
		return;
	if (s->scan)
		event_free(s->scan);
	free(s);
	c->pasta_fwd = NULL;
}
