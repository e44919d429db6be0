// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - pasta's forwards: -t/-u lists and "auto", and the rescan timer
 * that -T and -U (nsfwd.c) share
 *
 * A list becomes host forwards at start, as -p does (hostfwd.c): a port
 * without an address listens on 0.0.0.0 and, unless -4, on ::. "auto"
 * forwards whatever listens in the namespace: once a second the
 * namespace's bound ports are read (portscan.c: sock_diag through the
 * socket the namespace helper made in it, else its /proc/net tables,
 * which it opened there), and forwards are added and removed to match,
 * as rootlesskit's "implicit" port driver expects of pasta.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/host/fdlimit.h"
#include "driver/fwd/hostfwd.h"
#include "driver/core/inany.h"
#include "driver/core/log.h"
#include "driver/host/nshelper.h"
#include "driver/fwd/nsfwd.h"
#include "driver/core/opts.h"
#include "driver/fwd/pasta_fwd.h"
#include "driver/fwd/portscan.h"

/* Syscalls of the rescans (-t/-u and -T/-U auto), once running: a
 * sock_diag dump, or the tables read again, and the diag socket closed
 * where the kernel has none (forwards: hostfwd.c's).
 */
const char *const pasta_fwd_syscalls[] = {"sendto", "recvfrom", "pread64",
                                          "close", NULL};

/* The host has IPv6 sockets (a kernel booted with ipv6.disable=1 has
 * none): forwards listen on :: too.
 */
static bool host_ipv6 = true;

/**
 * struct auto_fwd - the host forwards that stand for one namespace port
 * @port:	the port, on both sides
 * @lo:		on the host's loopback only (127.0.0.1, ::1), else on every
 *		address
 * @id:		forward on every address (:: taking IPv4 too, or 0.0.0.0),
 *		or on 127.0.0.1
 * @id6:	forward on ::1, or 0
 */
struct auto_fwd {
	uint16_t port;
	bool lo;
	unsigned int id;
	unsigned int id6;
};

/**
 * struct auto_list - one protocol's auto forwards, by port
 * @f:		entries, ascending ports
 * @n:		entries in use
 * @cap:	entries allocated
 */
struct auto_list {
	struct auto_fwd *f;
	unsigned int n;
	unsigned int cap;
};

/**
 * struct pasta_fwd_state - what "auto" keeps between scans
 * @scan:	the rescan timer
 * @scans:	scans so far
 * @on:		per protocol, the forwards made by "auto"
 * @next:	scratch: the list a sync builds, swapped with @on after it
 * @failed:	per protocol, ports the host refused (taken there, say):
 *		tried again every PASTA_FWD_RETRY_SCANS scans
 * @seen:	scratch: per protocol, what the last scan found
 * @udp_bound:	scratch: the ports of the last scan that UDP itself has
 *		bound (@seen[1] takes TCP's too)
 */
struct pasta_fwd_state {
	struct event *scan;
	unsigned int scans;
	struct auto_list on[2];
	struct auto_list next;
	struct port_set failed[2];
	struct portscan seen[2];
	struct port_set udp_bound;
};

/**
 * add_one() - one host forward of @port to the guest's @target
 * @c:		context
 * @udp:	UDP rather than TCP
 * @addr:	host address to listen on
 * @dual:	@addr is :: and takes IPv4 clients too
 * @ifname:	bound to this interface too, or NULL
 * @port:	host port
 * @target:	port in the namespace
 * @id:		set to the forward's id
 * @why:	on failure, the reason
 * @whylen:	size of @why
 *
 * Return: 0, or -errno (hostfwd_add())
 */
static int add_one(struct ctx *c, bool udp, const struct in6_addr *addr,
                   bool dual, const char *ifname, uint16_t port,
                   uint16_t target, unsigned int *id, char *why, size_t whylen)
{
	struct hostfwd_spec s = {
	        .udp = udp,
	        .host_addr = *addr,
	        .host_port = port,
	        .guest_port = target,
	        .dual = dual,
	};
	int ret;

	if (ifname)
		snprintf(s.ifname, sizeof(s.ifname), "%s", ifname);
	inany_from_v4(&s.guest_addr, c->guest4);
	ret = hostfwd_add(c, &s, why, whylen);
	*id = ret ? 0 : s.id;
	return ret;
}

/**
 * add_pair() - forward @port on every host address, or on the host's
 *		loopback
 * @c:		context
 * @udp:	UDP rather than TCP
 * @lo:		on 127.0.0.1 and ::1 only
 * @port:	host port
 * @target:	port in the namespace
 * @a:		filled with the forwards' ids
 * @why:	on failure, the reason
 * @whylen:	size of @why
 *
 * Every address is one socket on :: that takes IPv4 too, as pasta's: one
 * fd a port; 0.0.0.0 with -4 or on a host without IPv6. The loopback
 * addresses are two.
 *
 * Return: 0 if every socket listens, or -errno with nothing left listening
 */
static int add_pair(struct ctx *c, bool udp, bool lo, uint16_t port,
                    uint16_t target, struct auto_fwd *a, char *why,
                    size_t whylen)
{
	bool v6 = c->o->ipv6 && host_ipv6;
	struct in6_addr addr;
	int ret;

	a->port = port;
	a->lo = lo;
	a->id6 = 0;
	if (!lo && v6)
		return add_one(c, udp, &in6addr_any, true, NULL, port, target,
		               &a->id, why, whylen);
	inany_from_v4(&addr, (struct in_addr){lo ? htonl(INADDR_LOOPBACK) : 0});
	ret = add_one(c, udp, &addr, false, NULL, port, target, &a->id, why,
	              whylen);
	if (ret || !lo || !v6)
		return ret;
	ret = add_one(c, udp, &in6addr_loopback, false, NULL, port, target,
	              &a->id6, why, whylen);
	if (ret)
		hostfwd_remove(c, a->id);
	return ret;
}

/**
 * out_of_files() - the line for a forward past the fd ceiling
 * @opt:	the option: "-t", "-u" or "auto"
 * @done:	ports it forwarded
 * @total:	ports it asked for, or 0 if open-ended (auto)
 */
static void out_of_files(const char *opt, unsigned int done, unsigned int total)
{
	char lim[96];

	fdlimit_describe(lim, sizeof(lim));
	if (total)
		err_msg("%s: %u of %u ports forwarded, then no more files: %s",
		        opt, done, total, lim);
	else
		err_msg("%s: %u ports forwarded, then no more files: %s", opt,
		        done, lim);
}

/**
 * add_list() - the ranges of one -t or -u option, at start
 * @c:		context
 * @udp:	UDP (-u) rather than TCP (-t)
 * @pp:		the option's ranges
 *
 * Return: 0, or -1 after one error line naming the port, or how many
 *	   ports were forwarded before the fds ran out
 */
static int add_list(struct ctx *c, bool udp, const struct pasta_ports *pp)
{
	const char *opt = udp ? "-u" : "-t";
	unsigned int total = 0, done = 0, id;
	char why[256];

	for (unsigned int i = 0; i < pp->n; i++)
		total += (unsigned int)(pp->r[i].last - pp->r[i].first) + 1;
	for (unsigned int i = 0; i < pp->n; i++) {
		const struct pasta_range *r = &pp->r[i];

		for (unsigned int p = r->first; p <= r->last; p++, done++) {
			uint16_t target = (uint16_t)(r->target + p - r->first);
			struct auto_fwd a;
			int ret;

			if (r->addr_set)
				ret = add_one(c, udp, &r->addr, false,
				              r->ifname[0] ? r->ifname : NULL,
				              (uint16_t)p, target, &id, why,
				              sizeof(why));
			else
				ret = add_pair(c, udp, false, (uint16_t)p,
				               target, &a, why, sizeof(why));
			if (ret == -EMFILE) {
				out_of_files(opt, done, total);
				return -1;
			}
			if (ret) {
				err_msg("%s: %s", opt, why);
				return -1;
			}
		}
	}
	return 0;
}

/**
 * auto_drop() - the port left the namespace: stop forwarding it
 * @c:		context
 * @udp:	protocol
 * @a:		its entry
 *
 * Connections already made stay up (hostfwd_remove()).
 */
static void auto_drop(struct ctx *c, bool udp, const struct auto_fwd *a)
{
	if (a->id)
		hostfwd_remove(c, a->id);
	if (a->id6)
		hostfwd_remove(c, a->id6);
	debug_msg("auto: %s port %u no longer bound in the namespace",
	          udp ? "UDP" : "TCP", a->port);
}

/**
 * list_room() - room in @l for @n entries
 * @l:		list
 * @n:		entries it must hold
 *
 * Return: 0, or -ENOMEM (@l as it was)
 */
static int list_room(struct auto_list *l, unsigned int n)
{
	unsigned int cap = l->cap ? l->cap : 64;
	struct auto_fwd *f;

	if (n <= l->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	f = realloc(l->f, cap * sizeof(*f));
	if (!f)
		return -ENOMEM;
	l->f = f;
	l->cap = cap;
	return 0;
}

/**
 * auto_add() - a port appeared in the namespace: forward it
 * @c:		context
 * @s:		state
 * @udp:	protocol
 * @port:	port
 * @lo:		on the host's loopback only
 *
 * The entry goes at the end of s->next. A port the host refuses (taken
 * there, say) is reported, rate-limited and not under --quiet, nor for a
 * UDP port only TCP has bound (the host's DNS on 53 while the namespace
 * serves TCP there), and tried again every PASTA_FWD_RETRY_SCANS scans.
 * Out of fds (or memory), the scan adds no more: that is said, under
 * --quiet too, and the ports are tried again at the next scan.
 *
 * Return: false if no more forwards can be added in this scan
 */
static bool auto_add(struct ctx *c, struct pasta_fwd_state *s, bool udp,
                     unsigned int port, bool lo)
{
	static struct log_limit lim, full;
	struct auto_list *l = &s->next;
	char why[256];
	int ret;

	ret = list_room(l, l->n + 1);
	if (!ret)
		ret = add_pair(c, udp, lo, (uint16_t)port, (uint16_t)port,
		               &l->f[l->n], why, sizeof(why));
	if (!ret) {
		l->n++;
		return true;
	}
	if (ret == -EMFILE || ret == -ENOMEM) {
		char what[128] = "memory", lim_text[96];

		if (ret == -EMFILE) {
			fdlimit_describe(lim_text, sizeof(lim_text));
			snprintf(what, sizeof(what), "files: %s", lim_text);
		}
		err_limited(&full, 0,
		            "auto: %s port %u and more not forwarded: %u ports "
		            "forwarded, then no more %s",
		            udp ? "UDP" : "TCP", port,
		            s->on[!udp].n + s->next.n, what);
		return false;
	}
	/* The guest picks the ports: its churn must not flood the log. */
	if (!c->o->pasta->quiet && (!udp || port_set_has(&s->udp_bound, port)))
		err_limited(&lim, 0, "auto: can't forward %s", why);
	else
		debug_msg("auto: can't forward %s", why);
	port_set_add(&s->failed[udp], port);
	return true;
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
 * @seen:	the scan of the protocol
 * @p:		port
 *
 * A port bound only to the namespace's loopback is not reachable through
 * the tap: it is forwarded only with --host-lo-to-ns-lo, which brings
 * clients on the host's loopback to the namespace's, and then only from
 * the host's loopback (Docker's proxy for -p 127.0.0.1:P:Q).
 *
 * Return: enum auto_kind
 */
static enum auto_kind kind_of(const struct ctx *c, const struct portscan *seen,
                              unsigned int p)
{
	if (port_set_has(&seen->any, p) || port_set_has(&seen->other, p))
		return AUTO_ALL;
	if (c->o->host_lo_to_ns_lo && port_set_has(&seen->loopback, p))
		return AUTO_LO;
	return AUTO_NONE;
}

/**
 * sync_proto() - make one protocol's auto forwards match the namespace
 * @c:		context
 * @s:		state, s->seen[@udp] filled
 * @udp:	protocol
 *
 * One walk over the ports and the list (both ascending) builds the next
 * list: each port costs a bit test, each forward an entry. A port whose
 * kind changed (bound to every address after loopback only, say) is
 * forwarded anew.
 */
static void sync_proto(struct ctx *c, struct pasta_fwd_state *s, bool udp)
{
	static struct log_limit lim;
	struct auto_list *cur = &s->on[udp], swap;
	const struct portscan *seen = &s->seen[udp];
	unsigned int r = 0;
	bool room = true;

	s->next.n = 0;
	if (list_room(&s->next, cur->n)) {
		err_limited(&lim, ENOMEM, "auto: rescan");
		return;
	}
	if (!(s->scans % PASTA_FWD_RETRY_SCANS))
		memset(&s->failed[udp], 0, sizeof(s->failed[udp]));
	for (unsigned int p = 1; p < 65536; p++) {
		enum auto_kind want = kind_of(c, seen, p);
		const struct auto_fwd *a = NULL;

		if (r < cur->n && cur->f[r].port == p)
			a = &cur->f[r++];
		if (a && (want == AUTO_NONE || a->lo != (want == AUTO_LO))) {
			auto_drop(c, udp, a);
			a = NULL;
		}
		if (a)
			s->next.f[s->next.n++] = *a;
		else if (want == AUTO_NONE)
			port_set_del(&s->failed[udp], p);
		else if (room && !port_set_has(&s->failed[udp], p))
			room = auto_add(c, s, udp, p, want == AUTO_LO);
	}
	swap = *cur;
	*cur = s->next;
	s->next = swap;
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
 * scan_ns() - read the namespace's bound ports of the protocols "auto"
 *	       needs: from sock_diag, else from its tables
 * @c:		context
 * @s:		state: s->seen filled
 * @tcp:	-t is "auto"
 * @udp:	-u is "auto"
 *
 * The namespace's ports that are tapir's own (-T and -U listeners) are
 * left out: forwarded, they would come straight back. -u auto forwards
 * UDP ports bound for TCP too, as pasta's does (iperf3 sends its UDP
 * data to the port its TCP control connection uses), so that a UDP
 * service started on such a port loses no datagram waiting for a scan.
 *
 * Return: bit 0 set if the TCP scan is good, bit 1 if the UDP one is
 */
static unsigned int scan_ns(struct ctx *c, struct pasta_fwd_state *s, bool tcp,
                            bool udp)
{
	static struct log_limit lim;
	unsigned int good = 0;
	int ret;

	for (int u = 0; u < 2; u++) {
		if (!(u ? udp : (tcp || udp)))
			continue;
		ret = portscan_read_side(&c->ns_tables[NS_DIAG],
		                         c->ns_tables[u ? NS_UDP : NS_TCP],
		                         c->ns_tables[u ? NS_UDP6 : NS_TCP6],
		                         u ? PORTSCAN_UDP : PORTSCAN_TCP,
		                         &s->seen[u]);
		if (ret) {
			err_limited(&lim, -ret,
			            "auto: read the namespace's "
			            "sockets");
			continue;
		}
		portscan_mask(&s->seen[u], nsfwd_held(c, u));
		good |= 1U << u;
	}
	if (udp && (good & 2)) {
		const struct portscan *u = &s->seen[1];

		for (size_t i = 0; i < sizeof(s->udp_bound.bits); i++)
			s->udp_bound.bits[i] = u->any.bits[i] |
			                       u->loopback.bits[i] |
			                       u->other.bits[i];
	}
	if (udp && (good & 3) == 3)
		portscan_merge(&s->seen[1], &s->seen[0]);
	return good & (tcp ? 3 : 2);
}

/**
 * scan_cb() - timer: rescan the namespace, both protocols that are "auto"
 * @fd:		unused
 * @what:	unused
 * @arg:	struct ctx
 */
static void scan_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctx *c = arg;
	struct pasta_fwd_state *s = c->pasta_fwd;
	const struct pasta_opts *po = c->o->pasta;
	bool tcp = mode_of(&po->tcp) == PASTA_PORTS_AUTO;
	bool udp = mode_of(&po->udp) == PASTA_PORTS_AUTO;
	unsigned int good;

	(void)fd;
	(void)what;
	good = tcp || udp ? scan_ns(c, s, tcp, udp) : 0;
	for (int u = 0; u < 2; u++)
		if (good & (1U << u))
			sync_proto(c, s, u);
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
 * The first scan's forwards, -T and -U's too, are in place on return:
 * before tapir says it is ready, writes --pid, or starts a command.
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
	nsfwd_settle(c);
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
	free(s->on[0].f);
	free(s->on[1].f);
	free(s->next.f);
	free(s);
	c->pasta_fwd = NULL;
}
