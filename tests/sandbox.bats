#!/usr/bin/env bats
# tests/sandbox.bats - checks of the test sandbox itself (hack/sandbox.sh and
# tests/scenario.bash), so that a broken harness shows up as such rather
# than as failures of tapir.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

@test "sandbox: host addresses are on sbx0 and answer ping" {
	run in_sandbox '
		ip -br addr show dev "$SANDBOX_IFACE"
		ip -4 route show default
		ip -6 route show default
		ping -c1 -W1 "$SANDBOX_HOST_IP4" >/dev/null
		ping -c1 -W1 "$SANDBOX_HOST_IP6" >/dev/null
		echo pings-ok
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"198.18.0.1/24"* ]]
	[[ "$output" == *"fd18::1/64"* ]]
	[[ "$output" == *"default via 198.18.0.254 dev sbx0"* ]]
	[[ "$output" == *"default via fd18::fe dev sbx0"* ]]
	[[ "$output" == *pings-ok* ]]
}

@test "sandbox: /etc/resolv.conf says fe80::1%lo, then 127.0.0.1, inside only" {
	local before
	before=$(cat /etc/resolv.conf)
	run in_sandbox 'cat /etc/resolv.conf'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'nameserver fe80::1%%lo\nnameserver 127.0.0.1')" ]
	[ "$(cat /etc/resolv.conf)" = "$before" ]
}

@test "sandbox: background processes are gone after it exits" {
	# The sandbox has its own pid namespace, so a pid recorded inside
	# means nothing outside. Give the daemon a unique argv[0], find its
	# outer pid while the sandbox runs, and check that pid afterwards.
	local token="tapir-sbx-sleeper-$$-$RANDOM"
	local ready="$BATS_TEST_TMPDIR/ready" go="$BATS_TEST_TMPDIR/go"
	in_sandbox '
		bg_start sleeper bash -c "exec -a \"\$0\" sleep 600" "$1"
		wait_for 5 pgrep -f "^$1 " >/dev/null
		touch "$2"
		# Exit without bg_stop once the outside has looked: the pid
		# namespace, not the EXIT trap, must do the killing. (Emptying
		# the start list keeps the rest of the cleanup.)
		: >"$SCEN_DIR/.started"
		wait_for 20 test -e "$3"
	' "$token" "$ready" "$go" >"$BATS_TEST_TMPDIR/sandbox.log" 2>&1 3>&- &
	local sandbox=$! pid="" i
	for ((i = 0; i < 100; i++)); do
		[[ -e "$ready" ]] && break
		sleep 0.1
	done
	pid=$(pgrep -f "^$token ") || true
	touch "$go"
	wait "$sandbox" || { cat "$BATS_TEST_TMPDIR/sandbox.log"; false; }
	echo "outer pid of the sleeper: '$pid'"
	[[ "$pid" =~ ^[0-9]+$ ]]
	run kill -0 "$pid"
	[ "$status" -ne 0 ]
}

@test "sandbox: the test user can open ping sockets" {
	# Debian's ping has cap_net_raw as a file capability and would work
	# anyway; --no-new-privs drops it, so ping must use an ICMP datagram
	# socket, which ping_group_range governs. The second ping, with the
	# range a new netns starts with, checks that this test can fail.
	run in_sandbox '
		as_user setpriv --no-new-privs ping -c1 -W1 "$SANDBOX_HOST_IP4"
		sysctl -qw net.ipv4.ping_group_range="1 0"
		if as_user setpriv --no-new-privs ping -c1 -W1 "$SANDBOX_HOST_IP4"; then
			echo "ping worked although ping sockets were forbidden"
			exit 1
		fi
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"1 received"* ]]
}
