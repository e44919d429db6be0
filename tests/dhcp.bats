#!/usr/bin/env bats
# tests/dhcp.bats - the DHCP server, as slirp4netns' upstream test uses it:
# without --configure, busybox udhcpc on the tap leases net+15 with the
# gateway as router, the DNS address, the MTU and a one-day lease; other
# clients get the next addresses; --cidr and --disable-dns show up in it.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

setup() {
	command -v udhcpc >/dev/null ||
		skip "udhcpc not installed (Debian package udhcpc, hack/install-deps.sh)"
}

# attach_unconfigured PID ARGS...: tapir ARGS PID tap0 without --configure,
# then tap0 up by hand, as a guest that wants DHCP would have it.
attach_unconfigured() {
	local pid=$1
	shift
	start_tapir t "$@" "$pid" tap0
	nsrun "$pid" ip link set tap0 up
}

# lease PID: run udhcpc once on PID's tap0 (bounded: 3 tries, 1 s apart)
# and print one "bound ..." line with what the server handed out.
lease() {
	local script=$SCEN_DIR/udhcpc.script
	if [[ ! -x "$script" ]]; then
		cat >"$script" <<-'EOF'
			#!/bin/sh
			[ "$1" = bound ] || exit 0
			echo "bound ip=$ip mask=$subnet router=$router dns=$dns mtu=$mtu lease=$lease server=$serverid"
		EOF
		chmod 0755 "$script"
	fi
	nsrun "$1" timeout 10 udhcpc -i tap0 -q -n -f -t 3 -T 1 -s "$script"
}

# sbx SNIPPET [ARGS...]: in_sandbox with the helpers above defined.
sbx() {
	local script=$1
	shift
	in_sandbox "$(declare -f attach_unconfigured lease)
		$script" "$@"
}

@test "dhcp: udhcpc without --configure leases 10.0.2.15 via 10.0.2.2" {
	run sbx '
		pid=$(userns_holder)
		attach_unconfigured "$pid" --mtu 4000
		lease "$pid"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "bound ip=10.0.2.15 mask=255.255.255.0 router=10.0.2.2 dns=10.0.2.3 mtu=4000 lease=86400 server=10.0.2.2"
}

@test "dhcp: leases follow the client MAC: a second client gets .16" {
	run sbx '
		pid=$(userns_holder)
		attach_unconfigured "$pid"
		nsrun "$pid" ip link set tap0 address 02:00:00:00:00:01
		lease "$pid" | sed "s/^/first: /"
		nsrun "$pid" ip link set tap0 address 02:00:00:00:00:02
		lease "$pid" | sed "s/^/second: /"
		nsrun "$pid" ip link set tap0 address 02:00:00:00:00:01
		lease "$pid" | sed "s/^/first again: /"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx "first: bound ip=10.0.2.15 .*" <<<"$output"
	grep -qx "second: bound ip=10.0.2.16 .*" <<<"$output"
	grep -qx "first again: bound ip=10.0.2.15 .*" <<<"$output"
}

@test "dhcp: --cidr and --disable-dns change what is handed out" {
	run sbx '
		pid=$(userns_holder)
		attach_unconfigured "$pid" --cidr 10.0.135.128/25 --disable-dns
		lease "$pid"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "bound ip=10.0.135.143 mask=255.255.255.128 router=10.0.135.130 dns= mtu=1500 lease=86400 server=10.0.135.130"
}
