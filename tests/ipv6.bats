#!/usr/bin/env bats
# tests/ipv6.bats - --enable-ipv6: router adverts give the guest a SLAAC
# address in fd00::/64 and a default route via fe80::2 (answered or
# unsolicited), neighbour solicitations for fe80::2, fd00::2 and fd00::3
# are answered with 52:56:00:00:00:02, echo to fd00::2/::3 is answered
# locally and to other hosts through ping sockets; fe80::2, the default
# route, is the gateway too: echo, and UDP and TCP to the host's ::1.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# has_slaac PID: PID's tap0 has a usable (not tentative) SLAAC address.
has_slaac() {
	local a
	a=$(nsrun "$1" ip -6 addr show dev tap0 scope global) || return 1
	grep -q "inet6 fd00::.* dynamic" <<<"$a" && ! grep -q tentative <<<"$a"
}

# show_v6 PID: tap0's IPv6 addresses, default routes and router neighbour.
show_v6() {
	nsrun "$1" ip -6 addr show dev tap0 | sed 's/^ *//'
	nsrun "$1" ip -6 route show default | sed 's/^/route: /'
	nsrun "$1" ip -6 neigh show dev tap0 | sed 's/^/neigh: /'
}

# sbx SNIPPET [ARGS...]: in_sandbox with the helpers above defined.
sbx() {
	local script=$1
	shift
	in_sandbox "$(declare -f has_slaac show_v6)
		$script" "$@"
}

# check_ra_result: $output shows a SLAAC address from fd00::/64 with the
# advertised lifetimes and the advertised default route.
check_ra_result() {
	grep -qE "^inet6 fd00::[0-9a-f:]+/64 scope global dynamic" <<<"$output"
	grep -qE "^valid_lft 86[0-9]{3}sec preferred_lft 14[0-9]{3}sec" <<<"$output"
	grep -qE "^route: default via fe80::2 dev tap0 proto ra metric [0-9]+ expires 1[0-9]{3}sec" <<<"$output"
}

@test "ipv6: an RA answers the guest's RS: SLAAC address, default route" {
	run sbx '
		pid=$(userns_holder)
		# Userns root may set its own netns sysctls: skip DAD (~1 s).
		nsrun "$pid" sysctl -qw net.ipv6.conf.default.accept_dad=0
		start_tapir t -6 "$pid" tap0
		nsrun "$pid" ip link set tap0 up
		wait_for 5 has_slaac "$pid"
		nsrun "$pid" setpriv --no-new-privs ping -n -c1 -W2 fd00::2 >/dev/null
		show_v6 "$pid"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	check_ra_result
	grep -qE "^neigh: fd00::2 lladdr 52:56:00:00:00:02 router" <<<"$output"
}

@test "ipv6: unsolicited RA right after start reaches a guest that never asks" {
	run sbx '
		pid=$(userns_holder)
		nsrun "$pid" sysctl -qw net.ipv6.conf.default.accept_dad=0
		nsrun "$pid" sysctl -qw net.ipv6.conf.default.router_solicitations=0
		# As rootlesskit: the tap exists and is up before tapir starts.
		nsrun "$pid" ip tuntap add name tap0 mode tap
		nsrun "$pid" ip link set tap0 up
		start_tapir t -6 "$pid" tap0
		wait_for 5 has_slaac "$pid"
		show_v6 "$pid"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	check_ra_result
}

@test "ipv6: run -6: echo to fd00::2 and fd00::3 locally, to fd18::1 via ping sockets" {
	run sbx '
		as_user "$TAPIR_BIN" run -6 -- sh -c "
			for a in fd00::2 fd00::3 $SANDBOX_HOST_IP6 fd18::77; do
				if setpriv --no-new-privs ping -n -c1 -W2 \$a >/dev/null; then
					echo ok \$a
				else
					echo fail \$a
				fi
			done
			ip -6 neigh show dev tap0 | sed \"s/^/neigh: /\"
		"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx "ok fd00::2" <<<"$output"
	grep -qx "ok fd00::3" <<<"$output"
	grep -qx "ok fd18::1" <<<"$output"
	# Nobody has this address: no made-up replies.
	grep -qx "fail fd18::77" <<<"$output"
	grep -qE "^neigh: fe80::2 lladdr 52:56:00:00:00:02 router" <<<"$output"
	grep -qE "^neigh: fd00::3 lladdr 52:56:00:00:00:02 " <<<"$output"
}

@test "ipv6: run -6: SLAAC address and RA route next to the static ones" {
	run sbx '
		as_user "$TAPIR_BIN" run -6 -- sh -c "
			i=0
			while [ \$i -lt 50 ]; do
				a=\$(ip -6 addr show dev tap0 scope global)
				case \$a in *dynamic*) case \$a in *tentative*) ;; *) break ;; esac ;; esac
				sleep 0.1
				i=\$((i + 1))
			done
			ip -6 addr show dev tap0 | sed \"s/^ *//\"
			ip -6 route show default | sed \"s/^/route: /\"
		"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qE "^inet6 fd00::100/64 scope global" <<<"$output"
	check_ra_result
}

# What FE80_PROBE prints, from inside a guest with IPv6: echo, UDP and TCP
# to the router's link-local address, fe80::2, the guest's default route.
FE80_PROBE='
if setpriv --no-new-privs ping -n -c1 -W2 fe80::2%tap0 >/dev/null; then
	echo "ping ok"
fi
echo "udp ok" | timeout 3 socat -T2 - "UDP6:[fe80::2%tap0]:7778" 2>&1
timeout 3 socat - "TCP6:[fe80::2%tap0]:7790" </dev/null 2>&1 | sed "s/.*E connect.*: //"
'

@test "ipv6: fe80::2 is the gateway: echo answered, UDP and TCP reach the host's ::1 (run -6, attach -6 -c)" {
	run sbx '
		bg_start echolo socat -b 65535 UDP6-RECVFROM:7778,bind=[::1],fork PIPE
		bg_start tcplo socat TCP6-LISTEN:7790,bind=[::1],fork,reuseaddr \
			SYSTEM:"echo tcp ok"
		wait_for 5 bash -c "ss -Hlun | grep -q :7778 && ss -Hltn | grep -q :7790"
		as_user "$TAPIR_BIN" run -6 -- sh -c "$1" | sed "s/^/run: /"
		as_user "$TAPIR_BIN" run -6 --disable-host-loopback -- sh -c "$1" |
			sed "s/^/no-lo: /"
		pid=$(userns_holder)
		nsrun "$pid" sysctl -qw net.ipv6.conf.default.accept_dad=0
		start_tapir t -6 -c "$pid" tap0
		nsrun "$pid" sh -c "$1" | sed "s/^/attach: /"
	' "$FE80_PROBE"
	echo "$output"
	[ "$status" -eq 0 ]
	local mode
	for mode in run attach; do
		has_line "$mode: ping ok"
		has_line "$mode: udp ok"
		has_line "$mode: tcp ok"
	done
	# --disable-host-loopback: echo still answered, as for fd00::2; the
	# host's loopback is out of reach (net-unreachable, as slirp4netns).
	has_line "no-lo: ping ok"
	has_line "no-lo: Network is unreachable"
	! grep -q "no-lo: [ut][dc]p ok" <<<"$output"
}
