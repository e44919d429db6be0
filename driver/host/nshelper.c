// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - forked helper: join the target's namespaces, set up the tap */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include "ipc/channel.h"
#include "driver/core/ctx.h"
#include "driver/sandbox/fds.h"
#include "driver/core/inany.h"
#include "driver/core/log.h"
#include "driver/host/netlink.h"
#include "driver/host/nshelper.h"
#include "driver/host/tap.h"

_Static_assert(NS_TABLES == CTX_NS_TABLES, "ctx.h counts the tables too");

static const struct in6_addr router_ll6 = {
        .s6_addr = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}};

/**
 * fail() - fill @e with a failed step and its errno
 * @e:		error to fill
 * @err:	errno value, positive or negative
 * @fmt:	printf format naming the step and the object
 *
 * Return: -1, for "return fail(...)"
 */
__attribute__((format(printf, 3, 4))) static int
fail(struct ipc_error *e, int err, const char *fmt, ...)
{
	va_list ap;

	e->err = err < 0 ? -err : err;
	va_start(ap, fmt);
	vsnprintf(e->op, sizeof(e->op), fmt, ap);
	va_end(ap);
	snprintf(e->text, sizeof(e->text), "%s", strerror(e->err));
	return -1;
}

/**
 * nshelper_close_other_fds() - close every fd but stdio and @keep
 * @keep:	the socket to tapir
 *
 * For helpers about to join the container's namespaces: they must not hold
 * tapir's tap, listeners or connections, and copies of them would delay
 * tapir's own close() of a connection until the helper exits.
 */
void nshelper_close_other_fds(int keep)
{
	const int fds[] = {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, keep};

	fds_close_except(fds, sizeof(fds) / sizeof(fds[0]));
}

/**
 * same_ns() - whether namespace file @fd is the one we are already in
 * @fd:		open namespace file
 * @self:	our own, e.g. "/proc/self/ns/user"
 *
 * Return: true if both name the same namespace
 */
static bool same_ns(int fd, const char *self)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(self, &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

/**
 * nshelper_join() - setns() into the target's user, then network namespace
 * @o:		options naming the target
 * @e:		filled on failure
 *
 * Joining the user namespace may fail harmlessly (we may be its owner
 * already, or root), as in slirp4netns; the netns join is what must work.
 *
 * Return: 0 on success, -1 on failure
 */
int nshelper_join(const struct opts *o, struct ipc_error *e)
{
	char userns[PATH_MAX + 32], netns[PATH_MAX + 32];
	int ufd = -1, nfd, userr = 0;

	userns[0] = '\0';
	if (o->userns_path[0])
		snprintf(userns, sizeof(userns), "%s", o->userns_path);
	else if (o->netns_type == NETNS_PID)
		snprintf(userns, sizeof(userns), "/proc/%d/ns/user", o->pid);
	if (o->netns_type == NETNS_PID)
		snprintf(netns, sizeof(netns), "/proc/%d/ns/net", o->pid);
	else
		snprintf(netns, sizeof(netns), "%s", o->netns_path);

	if (userns[0] && (ufd = open(userns, O_RDONLY | O_CLOEXEC)) < 0)
		return fail(e, errno, "open user namespace %s", userns);
	nfd = open(netns, O_RDONLY | O_CLOEXEC);
	if (nfd < 0) {
		int err = errno;

		if (ufd >= 0)
			close(ufd);
		return fail(e, err, "open network namespace %s", netns);
	}
	if (ufd >= 0 && !same_ns(ufd, "/proc/self/ns/user") &&
	    setns(ufd, CLONE_NEWUSER))
		userr = errno;
	if (ufd >= 0)
		close(ufd);
	if (setns(nfd, CLONE_NEWNET)) {
		int err = errno;

		close(nfd);
		if (err == EINVAL)
			return fail(e, err,
			            "join network namespace %s (not a network "
			            "namespace?)",
			            netns);
		if (userr)
			return fail(e, err,
			            "join network namespace %s (joining %s "
			            "failed: %s)",
			            netns, userns, strerror(userr));
		/* Path mode joins no user namespace unless told which. */
		if (err == EPERM && !userns[0])
			return fail(e, err,
			            "join network namespace %s (its user "
			            "namespace? see --userns-path)",
			            netns);
		return fail(e, err, "join network namespace %s", netns);
	}
	close(nfd);
	return 0;
}

/**
 * add_addr() - add an address to the tap and record it in @info
 * @nl:		netlink socket
 * @info:	reply being built
 * @family:	AF_INET or AF_INET6
 * @addr:	address
 * @plen:	prefix length
 * @e:		filled on failure
 *
 * Return: 0 on success, -1 on failure
 */
static int add_addr(struct nl *nl, struct ipc_tap_info *info, int family,
                    const void *addr, unsigned int plen, struct ipc_error *e)
{
	struct ipc_addr *a = &info->addrs[info->naddrs];
	char txt[INET6_ADDRSTRLEN];
	int ret = addr_add(nl, info->ifindex, family, addr, plen);

	if (ret) {
		inet_ntop(family, addr, txt, sizeof(txt));
		return fail(e, ret, "add address %s/%u to %s", txt, plen,
		            info->ifname);
	}
	a->family = family;
	memcpy(&a->addr, addr, family == AF_INET ? 4 : 16);
	a->prefixlen = plen;
	info->naddrs++;
	return 0;
}

/**
 * configure_copy6() - pasta's IPv6: the host's address and default route
 * @nl:		netlink socket
 * @o:		options, with copy6
 * @info:	reply being built
 * @e:		filled on failure
 *
 * A global gateway outside the prefix (as some hosts have) is on-link,
 * as on the host; a link-local one is on the tap's link anyway.
 *
 * Return: 0 on success, -1 on failure
 */
static int configure_copy6(struct nl *nl, const struct opts *o,
                           struct ipc_tap_info *info, struct ipc_error *e)
{
	char txt[INET6_ADDRSTRLEN];
	bool onlink = false;
	int ret;

	if (add_addr(nl, info, AF_INET6, &o->guest6, o->prefix6, e))
		return -1;
	if (!IN6_IS_ADDR_LINKLOCAL(&o->gw6))
		onlink = !in6_same_prefix(&o->gw6, &o->guest6, o->prefix6);
	if ((ret = route_add_default(nl, info->ifindex, AF_INET6, &o->gw6,
	                             onlink))) {
		inet_ntop(AF_INET6, &o->gw6, txt, sizeof(txt));
		return fail(e, ret, "add default route via %s", txt);
	}
	return 0;
}

/**
 * configure_ipv4() - the guest's IPv4 address and default route
 * @nl:		netlink socket
 * @o:		options
 * @info:	reply being built (ifname and ifindex set)
 * @e:		filled on failure
 *
 * A gateway outside the guest's network (pasta's copy of a /32 host) is
 * on-link.
 *
 * Return: 0 on success, -1 on failure
 */
static int configure_ipv4(struct nl *nl, const struct opts *o,
                          struct ipc_tap_info *info, struct ipc_error *e)
{
	struct in_addr gw = o->gw4;
	uint32_t mask;
	bool onlink;
	int ret;

	if (add_addr(nl, info, AF_INET, &o->guest4, o->prefix, e))
		return -1;
	mask = o->prefix >= 32 ? ~0U : htonl(~0U << (32 - o->prefix));
	onlink = (gw.s_addr & mask) != (o->guest4.s_addr & mask);
	if ((ret = route_add_default(nl, info->ifindex, AF_INET, &gw, onlink)))
		return fail(e, ret, "add default route via %s", inet_ntoa(gw));
	return 0;
}

/**
 * configure_links() - --configure: lo up, tap up, addresses, routes
 * @nl:		netlink socket
 * @o:		options
 * @info:	reply being built (ifname and ifindex set)
 * @e:		filled on failure
 *
 * Return: 0 on success, -1 on failure
 */
static int configure_links(struct nl *nl, const struct opts *o,
                           struct ipc_tap_info *info, struct ipc_error *e)
{
	struct link_state lo;
	int ret;

	if ((ret = link_get(nl, "lo", &lo)) ||
	    (ret = link_set_up(nl, lo.ifindex)))
		return fail(e, ret, "set lo up");
	if ((ret = link_set_up(nl, info->ifindex)))
		return fail(e, ret, "set %s up", info->ifname);
	if (!o->ipv6_only && configure_ipv4(nl, o, info, e))
		return -1;
	if (!o->ipv6)
		return 0;
	/* Else the kernel refuses the address with a bare EINVAL. */
	if (o->mtu < TAPIR_IPV6_MTU_MIN)
		return fail(e, EINVAL,
		            "IPv6 on %s: MTU %u is below IPv6's minimum, %d "
		            "(raise the MTU or turn IPv6 off)",
		            info->ifname, o->mtu, TAPIR_IPV6_MTU_MIN);
	if (o->copy6)
		return configure_copy6(nl, o, info, e);
	if (add_addr(nl, info, AF_INET6, &o->guest6, o->prefix6, e))
		return -1;
	if ((ret = route_add_default(nl, info->ifindex, AF_INET6, &router_ll6,
	                             false)))
		return fail(e, ret, "add default route via fe80::2");
	return 0;
}

/**
 * setup_tap() - in the target netns: attach the tap and configure it
 * @o:		options
 * @info:	filled with what was done
 * @fds:	filled with info->queues tap fds
 * @e:		filled on failure
 *
 * Return: 0 on success, -1 on failure
 */
static int setup_tap(const struct opts *o, struct ipc_tap_info *info, int *fds,
                     struct ipc_error *e)
{
	unsigned int txqlen =
	        o->txqueuelen ? o->txqueuelen : tap_auto_txqueuelen(o->mtu);
	struct link_state st;
	struct nl nl;
	char op[128];
	int ret;

	if ((ret = nl_open(&nl)))
		return fail(e, ret, "open rtnetlink socket");
	ret = tap_open_queues(&nl, o->ifname, o->offload, o->queues, fds, op,
	                      sizeof(op));
	if (ret) {
		fail(e, ret, "%s", op);
		goto out;
	}
	info->queues = o->queues;
	info->vnet_hdr = o->offload;
	info->vnet_hdr_len = o->offload ? TAP_VNET_HDR_LEN : 0;
	info->offloads = o->offload ? tap_enable_offloads(fds[0]) : 0;
	snprintf(info->ifname, sizeof(info->ifname), "%s", o->ifname);
	if ((ret = link_get(&nl, o->ifname, &st))) {
		fail(e, ret, "look up %s", o->ifname);
		goto out;
	}
	info->ifindex = st.ifindex;
	if ((ret = link_set_mtu(&nl, st.ifindex, o->mtu))) {
		fail(e, ret, "set MTU %u on %s", o->mtu, o->ifname);
		goto out;
	}
	if ((ret = link_set_txqlen(&nl, st.ifindex, txqlen))) {
		fail(e, ret, "set txqueuelen %u on %s", txqlen, o->ifname);
		goto out;
	}
	/* Before the link is up; pasta's --ns-mac-addr sets it either way. */
	if (o->mac_set && (ret = link_set_mac(&nl, st.ifindex, o->mac))) {
		fail(e, ret, "set MAC address of %s", o->ifname);
		goto out;
	}
	if (o->configure && (ret = configure_links(&nl, o, info, e)))
		goto out;
	if ((ret = link_get(&nl, o->ifname, &st))) {
		fail(e, ret, "read back %s", o->ifname);
		goto out;
	}
	info->mtu = st.mtu;
	info->txqueuelen = st.txqlen;
	memcpy(info->mac, st.mac, 6);
out:
	nl_close(&nl);
	if (ret)
		for (unsigned int i = 0; i < info->queues; i++)
			close(fds[i]);
	return ret ? -1 : 0;
}

/**
 * sent_fds() - how many fds a tap reply carries
 * @o:		options
 * @queues:	tap queues
 *
 * Return: the queues, and in pasta mode the socket tables after them
 */
static unsigned int sent_fds(const struct opts *o, unsigned int queues)
{
	return queues + (o->pasta ? NS_TABLES : 0);
}

/**
 * open_tables() - in the namespace: its /proc/net/{tcp,tcp6,udp,udp6},
 *		    and a sock_diag socket
 * @fds:	NS_TABLES entries, filled
 * @e:		filled on failure
 *
 * /proc/thread-self/net is the network namespace of the thread that
 * opens it, here the target's, whatever the caller named it by (a PID or
 * a --netns path); pasta's -t/-u auto read them for as long as tapir
 * runs. Without IPv6 in that kernel, the IPv4 table stands in for the
 * IPv6 one: the same ports twice. A netlink socket belongs to the
 * namespace it was made in; where the kernel makes none, the TCP table
 * stands in, and the first scan reads the tables from then on.
 *
 * Return: 0 on success, -1 on failure
 */
static int open_tables(int *fds, struct ipc_error *e)
{
	static const char *const names[NS_TABLES] = {
	        [NS_TCP] = "tcp",
	        [NS_TCP6] = "tcp6",
	        [NS_UDP] = "udp",
	        [NS_UDP6] = "udp6",
	};
	char path[64];

	for (int i = 0; i < NS_TABLES; i++) {
		if (i == NS_DIAG) {
			fds[i] = netlink_diag_open();
			if (fds[i] < 0)
				fds[i] = dup(fds[NS_TCP]);
			if (fds[i] < 0)
				return fail(e, errno, "dup a socket table");
			continue;
		}
		snprintf(path, sizeof(path), "/proc/thread-self/net/%s",
		         names[i]);
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0 && errno == ENOENT &&
		    (i == NS_TCP6 || i == NS_UDP6))
			fds[i] = dup(fds[i - 1]);
		if (fds[i] < 0)
			return fail(e, errno, "open %s", path);
	}
	return 0;
}

/**
 * helper_main() - body of the forked helper; never returns
 * @o:		options
 * @sock:	our end of the socketpair
 *
 * The helper must stay single-threaded: setns(CLONE_NEWUSER) refuses
 * multi-threaded callers.
 */
static void __attribute__((noreturn))
helper_main(const struct opts *o, int sock)
{
	struct ipc_reply r = {.kind = IPC_REPLY_TAP};
	int fds[TAPIR_MAX_QUEUES + NS_TABLES], ret;
	struct ipc_tap_info tap = {0};
	struct ipc_error err = {0};
	char *json;

	/* Don't outlive a parent killed while we work, and don't let the
	 * container ptrace us or reach tapir's fds through us: without
	 * those guarantees, don't enter it at all. Separate buffers: r.tap
	 * and r.error share memory in the union.
	 */
	nshelper_close_other_fds(sock);
	if ((prctl(PR_SET_PDEATHSIG, SIGKILL) &&
	     fail(&err, errno, "namespace helper: prctl(PR_SET_PDEATHSIG)")) ||
	    (prctl(PR_SET_DUMPABLE, 0) &&
	     fail(&err, errno, "namespace helper: prctl(PR_SET_DUMPABLE)")) ||
	    nshelper_join(o, &err) || setup_tap(o, &tap, fds, &err) ||
	    (o->pasta && open_tables(fds + tap.queues, &err))) {
		r.kind = IPC_REPLY_ERROR;
		r.error = err;
	} else {
		r.tap = tap;
	}
	json = ipc_reply_encode(&r);
	if (!json)
		_exit(2);
	ret = ipc_send(sock, json, strlen(json), fds,
	               r.kind == IPC_REPLY_TAP ? sent_fds(o, r.tap.queues) : 0);
	free(json);
	_exit(ret || r.kind != IPC_REPLY_TAP ? 1 : 0);
}

/**
 * taps_are() - whether every fd is a queue of tap @ifname
 * @fds:	fds the helper sent
 * @n:		how many
 * @ifname:	the tap asked for
 *
 * The helper ran inside the container's namespaces: what it sends is
 * checked like any input from there.
 *
 * Return: true if all are
 */
static bool taps_are(const int *fds, unsigned int n, const char *ifname)
{
	for (unsigned int i = 0; i < n; i++) {
		struct ifreq ifr = {0};

		if (ioctl(fds[i], TUNGETIFF, &ifr) ||
		    (ifr.ifr_flags & (IFF_TUN | IFF_TAP)) != IFF_TAP ||
		    strncmp(ifr.ifr_name, ifname, IFNAMSIZ))
			return false;
	}
	return true;
}

/**
 * tables_are() - whether every fd is a file of a procfs, but the last,
 *		  which may be a NETLINK_SOCK_DIAG socket instead
 * @fds:	the socket tables the helper sent, NS_DIAG's last
 * @n:		how many: 0, or NS_TABLES
 *
 * The helper has the container's credentials but tapir's mounts: a
 * procfs file is one of ours, and a sock_diag socket only reports.
 *
 * Return: true if all are
 */
static bool tables_are(const int *fds, unsigned int n)
{
	int dom = 0, proto = 0;
	socklen_t len = sizeof(int);
	struct statfs sf;
	struct stat st;

	for (unsigned int i = 0; i < n; i++) {
		if (i == NS_DIAG &&
		    !getsockopt(fds[i], SOL_SOCKET, SO_DOMAIN, &dom, &len) &&
		    !getsockopt(fds[i], SOL_SOCKET, SO_PROTOCOL, &proto,
		                &len) &&
		    dom == AF_NETLINK && proto == NETLINK_SOCK_DIAG)
			continue;
		if (fstat(fds[i], &st) || !S_ISREG(st.st_mode) ||
		    fstatfs(fds[i], &sf) || sf.f_type != PROC_SUPER_MAGIC)
			return false;
	}
	return true;
}

/**
 * nshelper_receive_reply() - read and validate the helper's reply
 * @sock:	our end of the socketpair
 * @o:		options, to cross-check the reply
 * @info:	filled on success
 * @fds:	filled with info->queues fds on success
 * @tables:	in pasta mode, filled with NS_TABLES fds on success
 *
 * Everything the helper sends passes here, so it is also the seam the IPC
 * fuzzer drives (tests/fuzz/fuzz_ipc.c).
 *
 * Return: 0 on success, -1 after printing one error line
 */
int nshelper_receive_reply(int sock, const struct opts *o,
                           struct ipc_tap_info *info, int *fds, int *tables)
{
	int all[TAPIR_MAX_QUEUES + NS_TABLES];
	struct ipc_reply r;
	unsigned int nfds = 0;
	char *body = NULL, why[256];
	size_t len;
	int ret;

	ret = ipc_recv(sock, &body, &len, all, sent_fds(o, TAPIR_MAX_QUEUES),
	               &nfds);
	if (ret) {
		err_errno(-ret, "read reply from namespace helper");
		return -1;
	}
	ret = ipc_reply_decode(body, len, &r, why, sizeof(why));
	free(body);
	if (!ret && r.kind == IPC_REPLY_ERROR) {
		err_msg("%s: %s", r.error.op, r.error.text);
		ret = -1;
	} else if (ret) {
		err_msg("bad reply from namespace helper: %s", why);
	} else if (nfds != sent_fds(o, r.tap.queues) ||
	           r.tap.queues != o->queues ||
	           strcmp(r.tap.ifname, o->ifname)) {
		err_msg("bad reply from namespace helper: %u fds for %u "
		        "queues of %s",
		        nfds, r.tap.queues, r.tap.ifname);
		ret = -1;
	} else if (!taps_are(all, r.tap.queues, o->ifname)) {
		err_msg("bad reply from namespace helper: the fds are no "
		        "queues of tap %s",
		        o->ifname);
		ret = -1;
	} else if (!tables_are(all + r.tap.queues, nfds - r.tap.queues)) {
		err_msg("bad reply from namespace helper: the fds after the "
		        "tap's are no /proc files or sock_diag socket");
		ret = -1;
	}
	if (ret) {
		for (unsigned int i = 0; i < nfds; i++)
			close(all[i]);
		return -1;
	}
	memcpy(fds, all, r.tap.queues * sizeof(*fds));
	if (nfds > r.tap.queues)
		memcpy(tables, all + r.tap.queues, NS_TABLES * sizeof(*tables));
	*info = r.tap;
	return 0;
}

/**
 * nshelper_setup_tap() - fork the helper, get the configured tap back
 * @o:		options naming the target and what to configure
 * @info:	filled with the helper's report
 * @fds:	filled with info->queues tap fds
 * @tables:	in pasta mode, filled with the namespace's socket tables
 *		(NS_TABLES fds); else untouched, and may be NULL
 *
 * Return: 0 on success, -1 after printing one error line
 */
int nshelper_setup_tap(const struct opts *o, struct ipc_tap_info *info,
                       int *fds, int *tables)
{
	int sv[2], status, ret;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		err_errno(errno, "socketpair for namespace helper");
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err_errno(errno, "fork namespace helper");
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		helper_main(o, sv[1]);
	}
	close(sv[1]);
	ret = nshelper_receive_reply(sv[0], o, info, fds, tables);
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!ret && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		err_msg("namespace helper failed (status %d)", status);
		for (unsigned int i = 0; i < info->queues; i++)
			close(fds[i]);
		return -1;
	}
	return ret;
}
