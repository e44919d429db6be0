#!/usr/bin/env bats
# tests/benchmark.bats - the benchmark harness in a short mode (BENCH_TIME=2):
# a few cells run, every number comes with a verified identity, and a
# binary that is not the driver it claims to be gets no number at all.
# Speeds are never asserted; only that the harness ran and that the numbers
# are positive. The scripts enter hack/sandbox.sh themselves.

load lib
bats_require_minimum_version 1.5.0
# $stderr is set by `run --separate-stderr`.
# shellcheck disable=SC2154

# bench SCRIPT ARGS...: run a benchmark script (via `run`): stdout in
# $output and $lines, stderr in $BATS_TEST_TMPDIR/err, bounded in time.
bench() {
	local script=$1
	shift
	run --separate-stderr timeout -k 5 120 \
		env BENCH_TIME="${BENCH_TIME:-2}" \
		"$TAPIR_ROOT/benchmark/$script" "$@"
	printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/err"
	echo "status $status; stdout:"
	echo "$output"
	echo "stderr:"
	echo "$stderr"
}

# verified_line JQ_CONDITION: the last stdout line is a verified JSON
# object for which JQ_CONDITION holds.
verified_line() {
	local last=${lines[${#lines[@]} - 1]}
	jq -e ".verified == true and ($1)" <<<"$last" >/dev/null
}

# no_number: nothing on stdout looks like a result.
no_number() {
	[[ "$output" != *"{"* && "$output" != *gbps* && "$output" != *proof:* ]]
}

@test "benchmark: slirp4netns, MTU 1500, namespace to host" {
	bench benchmark-iperf3-net.sh slirp4netns 1500
	[ "$status" -eq 0 ]
	verified_line '.driver == "slirp4netns" and .mtu == 1500 and
		.direction == "ns-host" and .gbps > 0 and .bytes > 0 and
		(.proof.tap_holder_pid | type) == "number" and
		(.proof.exe | test("slirp4netns"))'
	[[ "$output" == *"proof: pid "*" runs "* ]]
}

@test "benchmark: tapir, MTU 65520, both directions, counted by tapir" {
	bench benchmark-iperf3-net.sh tapir 65520
	[ "$status" -eq 0 ]
	verified_line '.driver == "tapir" and .direction == "ns-host" and
		.gbps > 0 and .proof.stats_tcp_bytes >= .bytes and
		.driver_cpu_s_per_gb > 0'
	bench benchmark-iperf3-net.sh tapir 65520 --reverse
	[ "$status" -eq 0 ]
	verified_line '.driver == "tapir" and .direction == "host-ns" and
		.gbps > 0 and .proof.stats_tcp_bytes >= .bytes'
}

@test "benchmark: TAPIR_BIN that is slirp4netns is refused, without a number" {
	TAPIR_BIN=$(command -v slirp4netns) bench benchmark-iperf3-net.sh tapir 1500
	[ "$status" -ne 0 ]
	no_number
	grep -q 'REFUSED:.*slirp4netns' "$BATS_TEST_TMPDIR/err"
}

@test "benchmark: the runtime proof alone refuses slirp4netns renamed tapir" {
	# With the --version and byte-identity checks skipped, the run goes
	# ahead; the proof must still catch it: no tapir get_stats counters.
	cp "$(command -v slirp4netns)" "$BATS_TEST_TMPDIR/tapir"
	TAPIR_BIN=$BATS_TEST_TMPDIR/tapir BENCH_SKIP_STATIC_IDENTITY=1 \
		bench benchmark-iperf3-net.sh tapir 1500
	[ "$status" -eq 3 ]
	no_number
	grep -q 'REFUSED:.*get_stats' "$BATS_TEST_TMPDIR/err"
}

@test "benchmark: pasta, MTU 65520, host to namespace" {
	bench benchmark-iperf3-net.sh pasta 65520 --reverse
	[ "$status" -eq 0 ]
	verified_line '.driver == "pasta" and .direction == "host-ns" and
		.gbps > 0 and (.proof.exe | test("/pas(ta|st)[^/]*$")) and
		(.launcher | length) > 0'
}

@test "benchmark: HTTP and request/response through tapir" {
	BENCH_TIME=1 bench benchmark-http.sh tapir --concurrency "1 8"
	[ "$status" -eq 0 ]
	verified_line '.bench == "http" and .concurrency == 8 and .rps > 0 and
		.failed == 0 and .p99_ms > 0'
	BENCH_TIME=1 bench benchmark-rr.sh tapir
	[ "$status" -eq 0 ]
	verified_line '.bench == "rr" and .mode == "crr" and .tps > 0 and
		.p50_us > 0 and .p99_us >= .p50_us'
}
