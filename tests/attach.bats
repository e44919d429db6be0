#!/usr/bin/env bats
# tests/attach.bats - tapir PID|PATH TAPNAME as the test user: with
# --configure the namespace shows exactly the link, addresses and routes
# asked for; without it tapir attaches to the tap it finds (rootlesskit's
# way), with the vnet header as --offload says, and recreates it when
# --queues asks for more queues than it has.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# show_tap PID DEV: DEV and lo as `ip` shows them in PID's namespaces, plus
# one summary line each for the addresses and routes.
show_tap() {
	local pid=$1 dev=$2
	nsrun "$pid" ip -d link show dev "$dev"
	nsrun "$pid" ip link show dev lo
	echo "addr4: $(nsrun "$pid" ip -4 -o addr show dev "$dev" |
		awk '{print $4}' | paste -sd' ')"
	echo "addr6: $(nsrun "$pid" ip -6 -o addr show dev "$dev" scope global |
		awk '{print $4}' | paste -sd' ')"
	# ip ends its route lines with a space.
	echo "route4: $(nsrun "$pid" ip -4 route show | sed 's/ *$//' |
		paste -sd';')"
	echo "default6: $(nsrun "$pid" ip -6 route show default)"
}

# sbx SNIPPET [ARGS...]: in_sandbox with the helpers above defined.
sbx() {
	local script=$1
	shift
	in_sandbox "$(declare -f show_tap)
		$script" "$@"
}

# before_has REGEX: a "before: " line of $output (the tap before tapir
# ran) matches the extended REGEX.
before_has() {
	grep -qE -- "^before: .*$1" <<<"$output"
}

# after: $output without the "before: " lines.
after() {
	grep -v '^before: ' <<<"$output"
}

# link_line DEV: the first line `ip link` printed for DEV after tapir ran.
link_line() {
	after | grep -E "^[0-9]+: $1:"
}

# tap_is DEV MTU QLEN: DEV is up with carrier, this MTU and this qlen.
tap_is() {
	[[ "$(link_line "$1")" =~ \<[A-Z_,]*,UP,LOWER_UP\>\ mtu\ $2\ .*\ qlen\ $3$ ]]
}

@test "attach --configure PID: the MTU, qlen, address and route asked for" {
	run sbx '
		pid=$(userns_holder)
		start_tapir t --configure --mtu 1500 --txqueuelen 4000 "$pid" tap0
		show_tap "$pid" tap0
	'
	echo "$output"
	[ "$status" -eq 0 ]
	tap_is tap0 1500 4000
	[[ "$(link_line lo)" == *"<LOOPBACK,UP,LOWER_UP>"* ]]
	has_line "addr4: 10.0.2.100/24"
	has_line "addr6: "
	has_line "route4: default via 10.0.2.2 dev tap0;10.0.2.0/24 dev tap0 proto kernel scope link src 10.0.2.100"
	has_line "default6: "
	[[ "$output" == *"tun type tap pi off vnet_hdr on"* ]]
}

@test "attach --configure: --macaddress, -6 and --cidr" {
	run sbx '
		pid=$(userns_holder)
		start_tapir t -c -6 --macaddress 02:00:00:aa:bb:cc \
			--cidr 10.0.135.128/25 "$pid" tap0
		show_tap "$pid" tap0
	'
	echo "$output"
	[ "$status" -eq 0 ]
	# Default MTU 1500, as slirp4netns; qlen sized by tapir, above 1000.
	tap_is tap0 1500 '([0-9]+)'
	((BASH_REMATCH[1] > 1000))
	[[ "$output" == *"link/ether 02:00:00:aa:bb:cc brd"* ]]
	has_line "addr4: 10.0.135.228/25"
	grep -Eq '^addr6: (.* )?fd00::100/64( |$)' <<<"$output"
	has_line "route4: default via 10.0.135.130 dev tap0;10.0.135.128/25 dev tap0 proto kernel scope link src 10.0.135.228"
	[[ "$output" =~ default6:\ default\ via\ fe80::2\ dev\ tap0 ]]
}

@test "attach --configure --netns-type=path: same result as with a PID" {
	run sbx '
		pid=$(userns_holder)
		start_tapir t --configure --mtu 1500 --txqueuelen 4000 \
			--netns-type=path "/proc/$pid/ns/net" \
			--userns-path="/proc/$pid/ns/user" tap0
		show_tap "$pid" tap0
	'
	echo "$output"
	[ "$status" -eq 0 ]
	tap_is tap0 1500 4000
	[[ "$(link_line lo)" == *"<LOOPBACK,UP,LOWER_UP>"* ]]
	has_line "addr4: 10.0.2.100/24"
	has_line "route4: default via 10.0.2.2 dev tap0;10.0.2.0/24 dev tap0 proto kernel scope link src 10.0.2.100"
}

@test "attach to rootlesskit's tap: no address added, vnet_hdr on by default" {
	run sbx '
		pid=$(userns_holder)
		# What rootlesskit does before it starts the driver.
		nsrun "$pid" ip tuntap add name tap0 mode tap
		nsrun "$pid" ip link set tap0 up
		nsrun "$pid" ip -d link show dev tap0 | sed "s/^/before: /"
		# One queue whatever TAPIR_QUEUES says: this is the tap reused.
		start_tapir t --queues 1 --mtu 65520 "$pid" tap0
		show_tap "$pid" tap0
	'
	echo "$output"
	[ "$status" -eq 0 ]
	before_has "vnet_hdr off persist on"
	# Still the persistent tap, now with the vnet header; no carrier
	# loss (LOWER_UP: tapir holds it); lo untouched.
	tap_is tap0 65520 '([0-9]+)'
	((BASH_REMATCH[1] > 1000))
	[[ "$(after)" == *"tun type tap pi off vnet_hdr on persist on"* ]]
	[[ "$(link_line lo)" == *"<LOOPBACK>"* ]]
	has_line "addr4: "
	has_line "addr6: "
	has_line "route4: "
}

@test "attach --offload off: vnet_hdr off on the existing tap" {
	run sbx '
		pid=$(userns_holder)
		nsrun "$pid" ip tuntap add name tap0 mode tap vnet_hdr
		nsrun "$pid" ip link set tap0 up
		nsrun "$pid" ip -d link show dev tap0 | sed "s/^/before: /"
		start_tapir t --queues 1 --offload off "$pid" tap0
		show_tap "$pid" tap0
	'
	echo "$output"
	[ "$status" -eq 0 ]
	# Created with the header, so that "off" is tapir's doing.
	before_has "vnet_hdr on persist on"
	[[ "$(after)" == *"tun type tap pi off vnet_hdr off persist on"* ]]
	has_line "addr4: "
}

@test "attach --queues 2: a single-queue tap is recreated multi-queue, up as it was" {
	run sbx '
		pid=$(userns_holder)
		nsrun "$pid" ip tuntap add name tap0 mode tap
		nsrun "$pid" ip link set tap0 up
		nsrun "$pid" ip -d link show dev tap0 | sed "s/^/before: /"
		start_tapir t --queues 2 "$pid" tap0
		show_tap "$pid" tap0
	'
	echo "$output"
	[ "$status" -eq 0 ]
	before_has " numtxqueues 1 "
	before_has "vnet_hdr off"
	[[ "$(after)" == *"vnet_hdr on multi_queue numqueues 2 "* ]]
	[[ "$(after)" =~ \ numtxqueues\ ([0-9]+)\ numrxqueues\ ([0-9]+) ]]
	((BASH_REMATCH[1] >= 2 && BASH_REMATCH[2] >= 2))
	[[ "$(link_line tap0)" == *",UP"* ]]
}
