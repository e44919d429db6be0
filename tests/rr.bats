#!/usr/bin/env bats
# tests/rr.bats - what a request/response exchange costs tapir, counted
# rather than timed: the system calls of tapir's process (every thread,
# `perf stat -e raw_syscalls:sys_enter -p PID`) and the frames on the tap
# (the namespace's /proc/net/dev), over 1000 round trips of 100 bytes
# each way on one connection (benchmark/rr.c), guest to host and through
# a port forward. Counts do not depend on the machine's speed, so the
# bounds hold on a loaded CI machine too.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# Run inside the sandbox with $1 = guest or forward, and optionally $2 =
# X.Y: tapir on the path of Linux X.Y (tests/tools/oldkernel.c). The guest script
# ($SCEN_DIR/guest.sh) reads tap0's packet counters, says ready, waits for
# go, runs its part, reads them again on stop; around that, perf counts
# the tap holder's system calls. Prints "calls N", "frames N", "rx N",
# "tx N", "trips N".
RR_COUNT='
	d=$SCEN_DIR
	n=1000
	rr=$TAPIR_BIN_DIR/rr
	env=()
	[ -n "${2:-}" ] && read -ra env <<<"$(oldkernel_env "$2")"
	cat >"$d/guest.sh" <<-"EOF"
		d=$1 mode=$2 rr=$3 n=$4
		frames() { awk "\$1 == \"tap0:\" { print \$3, \$11 }" /proc/net/dev; }
		if [ "$mode" = forward ]; then
			"$rr" server -p 5300 -s 100 &
		fi
		frames >"$d/before"
		touch "$d/ready"
		for i in $(seq 300); do [ -e "$d/go" ] && break; sleep 0.1; done
		if [ "$mode" = guest ]; then
			"$rr" client -H 10.0.2.2 -p 5300 -n "$n" -s 100 >"$d/rr.json"
		else
			for i in $(seq 300); do [ -e "$d/stop" ] && break; sleep 0.1; done
		fi
		frames >"$d/after"
		touch "$d/done"
		for i in $(seq 300); do [ -e "$d/exit" ] && break; sleep 0.1; done
	EOF
	if [ "$1" = guest ]; then
		bg_start_user srv "$rr" server -b 127.0.0.1 -p 5300 -s 100
		wait_for 5 tcp_listening 5300
		bg_start_user t env "${env[@]}" "$TAPIR_BIN" run -- \
			bash "$d/guest.sh" "$d" guest "$rr" "$n"
	else
		bg_start_user t env "${env[@]}" "$TAPIR_BIN" run -p 127.0.0.1:15300:5300 -- \
			bash "$d/guest.sh" "$d" forward "$rr" "$n"
	fi
	wait_for 10 test -e "$d/ready"
	pid=$(tap_holders tap0 | awk "{ print \$1 }")
	echo "holder $pid"
	perf stat -x, -e raw_syscalls:sys_enter -p "$pid" -o "$d/perf" &
	perf=$!
	sleep 0.5
	touch "$d/go"
	if [ "$1" = forward ]; then
		wait_for 10 tcp_listening 15300
		as_user "$rr" client -H 127.0.0.1 -p 15300 -n "$n" -s 100 >"$d/rr.json"
		touch "$d/stop"
	fi
	wait_for 60 test -e "$d/done"
	kill -INT "$perf"
	wait "$perf" || true
	touch "$d/exit"
	bg_stop t
	echo "trips $(jq -r .transactions "$d/rr.json")"
	calls=$(awk -F, "/raw_syscalls:sys_enter/ { print \$1 }" "$d/perf")
	read -r rx0 tx0 <"$d/before"
	read -r rx1 tx1 <"$d/after"
	echo "rx $((rx1 - rx0))"
	echo "tx $((tx1 - tx0))"
	awk -v c="$calls" -v f=$((rx1 - rx0 + tx1 - tx0)) -v n="$n" \
		"BEGIN { printf \"calls %.2f\\nframes %.2f\\n\", c / n, f / n }"
'

# rr_bounds DIRECTION [CALLS [KERNEL]]: run RR_COUNT and hold tapir to at
# most CALLS (default 7) system calls and 2.2 tap frames per round trip.
rr_bounds() {
	local max=${2:-7}
	run in_sandbox "$RR_COUNT" "$1" "${3:-}"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "trips 1000"
	local calls frames
	calls=$(sed -n 's/^calls //p' <<<"$output")
	frames=$(sed -n 's/^frames //p' <<<"$output")
	[ -n "$calls" ] && [ -n "$frames" ]
	awk -v c="$calls" -v f="$frames" -v m="$max" \
		'BEGIN { exit !(c <= m && f <= 2.2) }'
}

@test "rr: a 100-byte round trip from the guest costs tapir at most 7 system calls and 2.2 tap frames" {
	rr_bounds guest
}

@test "rr: a 100-byte round trip through a port forward costs tapir at most 7 system calls and 2.2 tap frames" {
	rr_bounds forward
}

@test "rr: on the path of Linux 6.1 (no SO_PEEK_OFF), a 100-byte round trip costs at most 8 system calls (one discard more) and 2.2 tap frames" {
	rr_bounds guest 8 6.1
	rr_bounds forward 8 6.1
}
