#!/usr/bin/env bats
# tests/icmp.bats - ICMP echo from the namespace: the gateway and DNS
# addresses answer locally (also with --disable-host-loopback), other hosts
# through the host's unprivileged ping sockets, and a ping_group_range that
# excludes tapir's group is explained in one line instead of failing mutely.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# ping1 ADDR: one echo with a 2 s deadline, printing "ok ADDR" or "fail
# ADDR". setpriv --no-new-privs: without the file capability ping can't
# open a raw socket outside a namespace it owns, as for any plain user.
# shellcheck disable=SC2034 # used inside the sandbox
PING1='ping1() {
	if setpriv --no-new-privs ping -n -c1 -W2 "$1" >/dev/null; then
		echo "ok $1"
	else
		echo "fail $1"
	fi
}'

@test "icmp: ping the gateway, the DNS address and a host via ping sockets" {
	run in_sandbox '
		as_user "$TAPIR_BIN" run -- sh -c "$1
			ping1 10.0.2.2
			ping1 10.0.2.3
			ping1 $SANDBOX_HOST_IP4
			# Nobody has this address: no made-up replies.
			ping1 198.18.0.77
			# Two pings at once to one host: each gets its own
			# replies, under the echo id it chose.
			setpriv --no-new-privs ping -n -c3 -i0.2 -W2 $SANDBOX_HOST_IP4 >$SCEN_DIR/a &
			setpriv --no-new-privs ping -n -c3 -i0.2 -W2 $SANDBOX_HOST_IP4 >$SCEN_DIR/b
			wait
			grep -h received $SCEN_DIR/a $SCEN_DIR/b
		"
	' "$PING1"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "ok 10.0.2.2"
	has_line "ok 10.0.2.3"
	has_line "ok 198.18.0.1"
	has_line "fail 198.18.0.77"
	[ "$(grep -c "3 packets transmitted, 3 received" <<<"$output")" -eq 2 ]
}

@test "icmp: ping_group_range without our gid: one clear line, local echo works" {
	run in_sandbox '
		# Before tapir starts, as a host that never opened the range.
		sysctl -qw net.ipv4.ping_group_range="1 0"
		as_user "$TAPIR_BIN" run -- sh -c "$1
			ping1 $SANDBOX_HOST_IP4
			setpriv --no-new-privs ping -n -c3 -i0.2 -W1 $SANDBOX_HOST_IP4 >/dev/null
			ping1 10.0.2.2
		" 2>"$SCEN_DIR/tapir.err"
		sed "s/^/stderr: /" "$SCEN_DIR/tapir.err"
		echo "gid: $(id -g "$TAPIR_TEST_USER")"
	' "$PING1"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "fail 198.18.0.1"
	has_line "ok 10.0.2.2"
	gid=$(sed -n 's/^gid: //p' <<<"$output")
	[ "$(grep -c "ping sockets not allowed" <<<"$output")" -eq 1 ]
	has_line "stderr: tapir: ping sockets not allowed for gid $gid (net.ipv4.ping_group_range is \"1 0\"): ICMP echo to remote hosts is dropped"
}

@test "icmp: --disable-host-loopback still answers echo to the gateway" {
	run in_sandbox '
		as_user "$TAPIR_BIN" run --disable-host-loopback -- sh -c "$1
			ping1 10.0.2.2
			ping1 10.0.2.3
			ping1 $SANDBOX_HOST_IP4
		"
	' "$PING1"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "ok 10.0.2.2"
	has_line "ok 10.0.2.3"
	has_line "ok 198.18.0.1"
}
