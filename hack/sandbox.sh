#!/usr/bin/env bash
# hack/sandbox.sh - run a command as root inside a fresh, isolated "host".
#
#   hack/sandbox.sh CMD [ARGS...]
#
# CMD gets its own network, mount and pid namespaces. The network namespace
# looks like a small host: loopback is up, and a veth pair sbx0/sbx1 (both
# ends stay inside) carries 198.18.0.1/24 and fd18::1/64 plus default routes
# to gateways that do not exist, so tools that need "a default route" work,
# yet no packet can reach the machine's real network. /etc/resolv.conf is
# replaced (in the private mount namespace only) by `nameserver
# fe80::1%lo` and `nameserver 127.0.0.1`, so a resolver the test starts on
# loopback is the host's resolver, and the machine's real resolver is never
# a target. The first line is what NetworkManager writes from a router
# advertisement (`fe80::1%eth0`): a scoped link-local server, here one that
# no route reaches (loopback has no link-local address, so nothing is
# sent), which resolvers must pass over for the next. /tmp stays shared:
# the binaries under test are copied there by tests/run.sh.
#
# CMD becomes pid 1 of the new pid namespace, so every process it starts
# (daemons included, even after setsid or double fork) is killed by the
# kernel when CMD exits. Note the pid-1 rule: signals for which CMD has no
# handler (e.g. SIGTERM, SIGINT) are ignored by it; SIGKILL from outside
# always works.
#
# With SANDBOX_IPV6_ONLY=1 the host is IPv6-only, as some clouds give
# them: sbx0 has no IPv4 address and there is no IPv4 route (loopback
# keeps 127.0.0.1, as on any host), and resolv.conf names ::1 where it
# named 127.0.0.1.
#
# Environment given to CMD: SANDBOX=1, SANDBOX_HOST_IP4 (empty when
# IPv6-only), SANDBOX_HOST_IP6, SANDBOX_IFACE, SANDBOX_IPV6_ONLY. The exit
# status is CMD's. Inside a sandbox already
# (SANDBOX=1, and sbx0 really is there) it just runs CMD.
set -euo pipefail

readonly HOST_IP4=198.18.0.1 HOST_IP6=fd18::1
readonly GW_IP4=198.18.0.254 GW_IP6=fd18::fe
readonly IFACE=sbx0 PEER=sbx1
readonly STAGE2_FLAG=--tapir-sandbox-stage2

die() {
	echo "hack/sandbox.sh: $*" >&2
	exit 1
}

# Runs as pid 1 inside the new namespaces: build the host, then become CMD.
stage2() {
	# The setup below changes mounts and interfaces; never let it run in
	# the machine's own namespaces, e.g. if someone passes the flag by hand.
	(($$ == 1)) || die "$STAGE2_FLAG is internal; run hack/sandbox.sh CMD"

	# Keep every mount made here out of the parent mount namespace.
	mount --make-rprivate /
	local v6only=0
	[[ "${SANDBOX_IPV6_ONLY:-}" == 1 ]] && v6only=1

	ip link set lo up
	# The kernel here has no dummy module; a veth pair works, and keeping
	# both ends in this namespace means there is nowhere to send packets.
	ip link add "$IFACE" type veth peer name "$PEER"
	((v6only)) || ip addr add "$HOST_IP4/24" dev "$IFACE"
	# nodad: the address is usable at once instead of after DAD (~1 s).
	ip -6 addr add "$HOST_IP6/64" dev "$IFACE" nodad
	ip link set "$IFACE" up
	ip link set "$PEER" up
	((v6only)) || ip route add default via "$GW_IP4" dev "$IFACE"
	ip -6 route add default via "$GW_IP6" dev "$IFACE"

	# A private copy of resolv.conf on a tmpfs that exists only in this
	# mount namespace: it vanishes with the sandbox, and, unlike an
	# unlinked file, it can itself be bind-mounted over again (tapir run
	# binds its own resolv.conf over /etc/resolv.conf in the guest).
	local dir=/mnt
	[[ -d "$dir" ]] || dir=/media
	mount -t tmpfs -o size=64k,mode=0755 tapir-sandbox "$dir"
	printf 'nameserver fe80::1%%lo\nnameserver %s\n' \
		"$( ((v6only)) && echo ::1 || echo 127.0.0.1)" >"$dir/resolv.conf"
	chmod 0644 "$dir/resolv.conf"
	mount --bind "$dir/resolv.conf" /etc/resolv.conf

	# Per network namespace, and a new one starts at "1 0": without this
	# no user could open ICMP ping sockets here.
	sysctl -qw net.ipv4.ping_group_range="0 2147483647"

	export SANDBOX=1
	export SANDBOX_HOST_IP4=$HOST_IP4 SANDBOX_HOST_IP6=$HOST_IP6
	((v6only)) && SANDBOX_HOST_IP4=
	export SANDBOX_IFACE=$IFACE SANDBOX_IPV6_ONLY=$v6only
	exec "$@"
}

if [[ "${1:-}" == "$STAGE2_FLAG" ]]; then
	shift
	stage2 "$@"
fi

if (($# == 0)); then
	echo "usage: hack/sandbox.sh CMD [ARGS...]" >&2
	exit 2
fi

# Nested use (a helper that sandboxes itself, called from a sandboxed test)
# gets the sandbox it is already in. A SANDBOX=1 that leaked into a shell
# on the real machine must not let CMD loose there, so check that this
# network namespace really is one of ours.
if [[ "${SANDBOX:-}" == 1 ]]; then
	if ip -o -6 addr show dev "$IFACE" 2>/dev/null | grep -qF " $HOST_IP6/"; then
		exec "$@"
	fi
	die "SANDBOX=1 is set, but this is no sandbox (no $HOST_IP6 on $IFACE); unset it"
fi

((EUID == 0)) || die "must run as root: it creates network, mount and pid namespaces (try sudo)"

self=$(readlink -f "${BASH_SOURCE[0]}")
# --fork + --pid: the re-executed script is pid 1 of the new pid namespace;
# --mount-proc: /proc shows that namespace's processes only.
exec unshare --net --mount --pid --fork --mount-proc -- \
	"$self" "$STAGE2_FLAG" "$@"
