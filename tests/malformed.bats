#!/usr/bin/env bats
# tests/malformed.bats - malformed and random frames written into the tap
# from inside the namespace (tests/tools/badframes, an AF_PACKET socket on
# tap0): tapir counts each one in get_stats, drops it, and keeps serving.
# Vnet headers and frames shorter than Ethernet cannot be crafted this way;
# tests/unit/test_datapath.c covers those, and the same catalogue in depth.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# The guest side, run by `tapir run` as root of its namespace: stats, the
# frames (badframes ARGS...), stats again once tapir has read them all, then
# two fetches through tapir, which must still work.
GUEST='
set -euo pipefail
S=$SCEN_DIR/api.sock
stats() { "$TAPIR_BIN" api "$S" "{\"execute\":\"get_stats\"}" >"$SCEN_DIR/$1.json"; }
# wait_rx N: until tapir has read N more frames than before.json says
wait_rx() {
	local want i
	want=$(($(jq .return.tap.rx_frames "$SCEN_DIR/before.json") + $1))
	for ((i = 0; i < 100; i++)); do
		stats now
		(($(jq .return.tap.rx_frames "$SCEN_DIR/now.json") >= want)) && return 0
		sleep 0.05
	done
	echo "tapir read fewer than $1 frames" >&2
	return 1
}
stats before
"$TAPIR_BIN_DIR/badframes" tap0 "$@" >"$SCEN_DIR/sent.txt"
wait_rx "$(awk "{ n += \$2 } END { print n }" "$SCEN_DIR/sent.txt")"
stats after
curl -sS --max-time 5 http://10.0.2.2:8080/
curl -sS --max-time 5 http://198.18.0.1:8081/
'

# Inside the sandbox: run GUEST ($1) through tapir with BADFRAMES_ARGS...,
# then print "sent NAME N" (from badframes), "delta NAME N" per drop
# counter, "dropped N" (all drop counters) and "rx N" (frames tapir read).
RUN='
	guest=$1
	shift
	nginx_start web 127.0.0.1:8080 198.18.0.1:8081
	printf "%s\n" "$guest" >"$SCEN_DIR/guest.sh"
	as_user "$TAPIR_BIN" run -6 -a "$SCEN_DIR/api.sock" -- \
		bash "$SCEN_DIR/guest.sh" "$@"
	sed "s/^/sent /" "$SCEN_DIR/sent.txt"
	jq -rn --slurpfile a "$SCEN_DIR/before.json" \
		--slurpfile b "$SCEN_DIR/after.json" "
		(\$a[0].return) as \$x | (\$b[0].return) as \$y |
		def total(s): [s] | add;
		(\$y.drops | keys_unsorted[] as \$k |
			\"delta \(\$k) \(\$y.drops[\$k] - \$x.drops[\$k])\"),
		\"dropped \(total(\$y.drops[]) - total(\$x.drops[]))\",
		\"rx \(\$y.tap.rx_frames - \$x.tap.rx_frames)\""
'

# field KEY: what follows "KEY " on its line of $output.
field() {
	awk -v k="$1 " 'index($0, k) == 1 { print substr($0, length(k) + 1) }' <<<"$output"
}

@test "malformed: each bad frame raises its own drop counter; tapir keeps serving" {
	run in_sandbox "$RUN" "$GUEST" catalogue
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^tapir test page$' <<<"$output")" -eq 2 ]
	for name in short_frame bad_length bad_checksum unknown_ethertype; do
		sent=$(field "sent $name")
		[ "$sent" -gt 0 ]
		# The guest kernel never sends any of these on its own.
		[ "$(field "delta $name")" -eq "$sent" ]
	done
	[ "$(field "delta socket")" -eq 0 ]
	[ "$(field "delta tap_write")" -eq 0 ]
}

@test "malformed: 2000 random frames leave tapir alive, each one counted" {
	run in_sandbox "$RUN" "$GUEST" random 2000 20240601
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^tapir test page$' <<<"$output")" -eq 2 ]
	[ "$(field "rx")" -ge 2000 ]
	# Each frame goes to 10.0.2.50 or fd00::50, or is malformed: each
	# must end in a drop counter. The guest's own frames only add to it.
	[ "$(field "dropped")" -ge 2000 ]
	[ "$(field "delta bad_length")" -gt 0 ]
	[ "$(field "delta bad_checksum")" -gt 0 ]
	[ "$(field "delta socket")" -eq 0 ]
}
