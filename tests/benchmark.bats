#!/usr/bin/env bats
# tests/benchmark.bats - the benchmark harness in a short mode (BENCH_TIME=2,
# one round): a few cells run, every number comes with a verified
# identity, and a binary that is not the driver it claims to be gets no
# number at all; nor does tapir-6.1 when the old-kernel shim did not take
# effect.
# Speeds are never asserted; only that the harness ran and that the numbers
# are positive. The scripts enter hack/sandbox.sh themselves.

load lib
bats_require_minimum_version 1.5.0
# $stderr is set by `run --separate-stderr`.
# shellcheck disable=SC2154

# bench SCRIPT ARGS...: run a benchmark script (via `run`): stdout in
# $output and $lines, stderr in $BATS_TEST_TMPDIR/err, bounded in time
# (BENCH_TEST_TIMEOUT seconds, default 120).
bench() {
	local script=$1
	shift
	run --separate-stderr timeout -k 5 "${BENCH_TEST_TIMEOUT:-120}" \
		env BENCH_TIME="${BENCH_TIME:-2}" \
		"$TAPIR_ROOT/benchmark/$script" "$@"
	printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/err"
	# A run-matrix cell that failed, and the last lines of its log, go
	# first: a long run's log is cut in the middle, and the why with it.
	grep -E -A5 '^run-matrix: [^ ]+: (failed|refused|timed out) \(status' \
		<<<"$stderr" || true
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

@test "benchmark: tapir-6.1 is tapir on the path of a kernel without TCP SO_PEEK_OFF" {
	bench benchmark-iperf3-net.sh tapir-6.1 1500 --reverse
	[ "$status" -eq 0 ]
	verified_line '.driver == "tapir-6.1" and .kernel_imitated == "6.1" and
		.tcp_peek.ipv4 == "discard" and .proof.tcp_peek.ipv4 == "discard" and
		(.proof.shim_loaded | test("/oldkernel\\.so$")) and
		(.proof.exe | test("/tapir$")) and .direction == "host-ns" and
		.gbps > 0 and .proof.stats_tcp_bytes >= .bytes and
		.driver_cpu_s_per_gb > 0 and .round == 1 and
		(.version | startswith("tapir ")) and (.sha256 | length) == 64 and
		(.intervals.gbps | length) > 0 and .stalled == false'
	[[ "$output" == *"get_info reports tcp_peek ipv4 discard, ipv6 discard"* ]]
}

@test "benchmark: tapir-sandbox runs sandboxed and filtered, and says so" {
	bench benchmark-iperf3-net.sh tapir-sandbox 1500
	[ "$status" -eq 0 ]
	verified_line '.driver == "tapir-sandbox" and
		.proof.isolation.seccomp == 2 and .proof.isolation.no_new_privs == 1 and
		.proof.isolation.cap_eff == "0000000000000400" and
		(.launcher | test("--slirp4netns-sandbox=true --slirp4netns-seccomp=true")) and
		.gbps > 0 and .proof.stats_tcp_bytes >= .bytes'
	[[ "$output" == *"Seccomp 2, NoNewPrivs 1, CapEff 0000000000000400"* ]]
}

@test "benchmark: a shim that does not take effect is not the old-kernel path" {
	# A library that loads but changes nothing, in the shim's place: tapir
	# then peeks with SO_PEEK_OFF, and its get_info says so.
	local lib
	lib=$(ldconfig -p | awk '$1 == "libdl.so.2" { print $NF; exit }')
	[ -f "$lib" ]
	mkdir -p "$BATS_TEST_TMPDIR/shim"
	cp "$lib" "$BATS_TEST_TMPDIR/shim/oldkernel.so"
	BENCH_OLDKERNEL_SO=$BATS_TEST_TMPDIR/shim/oldkernel.so \
		bench benchmark-iperf3-net.sh tapir-6.1 1500
	[ "$status" -eq 3 ]
	no_number
	grep -q 'REFUSED:.*tcp_peek.*peek-offset' "$BATS_TEST_TMPDIR/err"
}

@test "benchmark: the matrix in rounds, with the same round's loopback" {
	BENCH_ROUNDS=1 BENCH_TIME=1 BENCH_SUITES=net BENCH_DRIVERS=tapir \
		BENCH_MTUS=65520 BENCH_DOC="" \
		BENCH_RESULTS=$BATS_TEST_TMPDIR/results bench run-matrix.sh
	[ "$status" -eq 0 ]
	local jsonl=$BATS_TEST_TMPDIR/results/latest/results.jsonl
	# tapir and loopback, both directions, each verified, in round 1.
	jq -se 'length == 4 and all(.[]; .driver as $d | .verified == true and .round == 1 and
		.loopback_gbps > 0 and .loopback_share > 0 and
		(.loadavg_before | length) == 3 and .cpus > 0 and
		(.kernel | length) > 0) and
		([.[] | .driver] | sort) == ["loopback", "loopback", "tapir", "tapir"]' \
		"$jsonl"
	[[ "$output" == *"| 65520 | ns → host | tapir | "* ]]
	[[ "$output" == *"share of loopback"* ]]
}

@test "benchmark: pasta, MTU 65520, host to namespace" {
	bench benchmark-iperf3-net.sh pasta 65520 --reverse
	[ "$status" -eq 0 ]
	verified_line '.driver == "pasta" and .direction == "host-ns" and
		.gbps > 0 and (.proof.exe | test("/pas(ta|st)[^/]*$")) and
		(.launcher | length) > 0'
}

@test "benchmark: pasta-trixie is trixie's pasta, its banner read on a terminal" {
	# trixie's pasta prints --version into stdio's buffer and leaves with
	# _exit(): a pipe gets nothing.
	[ -x /var/cache/tapir/trixie/passt/pasta ]
	[ -z "$(/var/cache/tapir/trixie/passt/pasta --version | head -n1)" ]
	BENCH_TIME=1 bench benchmark-iperf3-net.sh pasta-trixie 65520 --reverse
	[ "$status" -eq 0 ]
	verified_line '.driver == "pasta-trixie" and
		(.version | test("^pasta 0\\.0~git2025")) and
		(.binary | startswith("/var/cache/tapir/trixie/passt/")) and
		(.proof.exe | test("/var/cache/tapir/trixie/passt/passt(\\.avx2)?$")) and
		.gbps > 0'
}

@test "benchmark: HTTP and request/response through tapir" {
	BENCH_TIME=1 bench benchmark-http.sh tapir --concurrency "1 8"
	[ "$status" -eq 0 ]
	verified_line '.bench == "http" and .concurrency == 8 and .rps > 0 and
		.failed == 0 and .p99_ms > 0 and .syscalls_per_tx > 0 and
		.frames_to_guest_per_tx >= 1'
	BENCH_TIME=1 bench benchmark-rr.sh tapir --sizes "100 4096" \
		--connections "1 4"
	[ "$status" -eq 0 ]
	verified_line '.bench == "rr" and .mode == "rr-fwd" and .size == 4096 and
		.connections == 4 and .tps > 0 and .p50_us > 0 and
		.p99_us >= .p50_us'
	# Every cell: the driver's calls and the tap's frames per transaction,
	# both ways (crr at the first size only).
	[ "$(grep -c '^{' <<<"$output")" -eq 10 ]
	grep '^{' <<<"$output" | jq -se 'all(.[]; .syscalls_per_tx > 0 and
		.frames_to_guest_per_tx >= 1 and .frames_to_host_per_tx >= 1)'
	grep '^{' <<<"$output" | jq -se '[.[] | .mode] | unique ==
		["crr", "rr", "rr-fwd"]'
}

@test "benchmark: tapir-q2 runs with two tap queues, proven, with each thread's CPU and each queue's bytes" {
	bench benchmark-iperf3-net.sh tapir-q2 1500 --parallel 2
	[ "$status" -eq 0 ]
	verified_line '.driver == "tapir-q2" and .streams == 2 and .gbps > 0 and
		.proof.queues == 2 and .proof.tasks >= 1 and
		(.launcher | startswith("TAPIR_QUEUES=2 ")) and
		(.queues | length) == 2 and
		([.queues[].rx_bytes] | add) >= .bytes and
		(.queue_byte_share | add) > 0.99 and
		(.threads | length) == .proof.tasks and
		all(.threads[]; .cpu_s >= 0 and .comm != "") and
		(.threads | map(.share) | add) > 0.99'
	[[ "$output" == *"get_stats lists 2 tap queues and get_info's tap has 2 (TAPIR_QUEUES=2)"* ]]
	# A thread per queue is required only when asked: refused by a
	# single-threaded tapir, verified by one with a thread per queue.
	local tasks
	tasks=$(jq '.proof.tasks' <<<"${lines[${#lines[@]} - 1]}")
	BENCH_QUEUE_THREADS=1 BENCH_TIME=1 bench benchmark-iperf3-net.sh tapir-q2 1500
	if ((tasks >= 2)); then
		[ "$status" -eq 0 ]
		verified_line '.proof.tasks >= 2'
	else
		[ "$status" -eq 3 ]
		no_number
		grep -q 'REFUSED:.*fewer than one per queue' "$BATS_TEST_TMPDIR/err"
	fi
}

@test "benchmark: the queues suite, tapir-q1 against tapir-q2, in its own table" {
	BENCH_ROUNDS=1 BENCH_TIME=1 BENCH_SUITES=queues BENCH_MTUS=65520 \
		BENCH_QUEUE_STREAMS=2 BENCH_QUEUE_CONCURRENCY="" BENCH_DOC="" \
		BENCH_RESULTS=$BATS_TEST_TMPDIR/results bench run-matrix.sh
	[ "$status" -eq 0 ]
	local jsonl=$BATS_TEST_TMPDIR/results/latest/results.jsonl
	jq -se 'length == 4 and all(.[]; .driver as $d | .verified == true and
		.suite == "queues" and .streams == 2 and
		.proof.queues == (.driver | ltrimstr("tapir-q") | tonumber)) and
		([.[] | .driver] | sort) == ["tapir-q1", "tapir-q1", "tapir-q2", "tapir-q2"]' \
		"$jsonl"
	[[ "$output" == *"| MTU | direction | -P | driver | Gbit/s | vs q1 | driver CPU s/GB | per-thread CPU % | per-queue byte share | notes |"* ]]
	[[ "$output" == *"| 65520 | host → ns | 2 | tapir-q2 | "* ]]
	# Its lines stay out of the main tables.
	[[ "$output" != *"share of loopback"* ]]
}

@test "benchmark: the overlay suite, pod to pod over VXLAN across two hosts, proven on both sides, in its own table" {
	BENCH_ROUNDS=1 BENCH_TIME=2 BENCH_SUITES=overlay BENCH_MTUS=1500 \
		BENCH_OVERLAY_DRIVERS="tapir slirp4netns" BENCH_OVERLAY_LINKS=tap \
		BENCH_DOC="" BENCH_RESULTS=$BATS_TEST_TMPDIR/results \
		bench run-matrix.sh
	[ "$status" -eq 0 ]
	local jsonl=$BATS_TEST_TMPDIR/results/latest/results.jsonl
	# Both directions for each driver, each side's tap held by that
	# driver's own process, on two different hosts' namespaces.
	jq -se 'length == 4 and all(.[]; .driver as $d | .verified == true and
		.suite == "overlay" and .bench == "overlay" and .gbps > 0 and
		.mtu == 1500 and .link_mtu == 1500 and .overlay_mtu == 1450 and
		.proof.a.tap_holder_pid != .proof.b.tap_holder_pid and
		.proof.a.netns != .proof.b.netns and
		(.proof.a.exe | test($d)) and (.proof.b.exe | test($d)) and
		.sender_segments > 0 and (.host_rcvbuf_errors | type) == "number" and
		(.side_cpu_s.a | type) == "number") and
		([.[] | "\(.driver) \(.direction)"] | sort) ==
		["slirp4netns a-b", "slirp4netns b-a", "tapir a-b", "tapir b-a"]' \
		"$jsonl"
	# tapir counted the overlay as UDP on both sides, and its forwards
	# dropped nothing: no UDP receive-buffer error on either host.
	jq -se '[.[] | select(.driver == "tapir")] | length == 2 and all(.[];
		.proof.a.stats_udp_bytes >= .bytes and
		.proof.b.stats_udp_bytes >= .bytes and
		.host_rcvbuf_errors == 0 and .retrans_pct < 1)' "$jsonl"
	[[ "$output" == *"| tap MTU | link MTU | direction | driver | Gbit/s | vs tapir |"* ]]
	[[ "$output" == *"| 1500 | 1500 | pod B → pod A | tapir | "* ]]
	[[ "$output" == *"Goal: tapir pod to pod at least 1.5× slirp4netns"* ]]
	# Its lines stay out of the main tables.
	[[ "$output" != *"share of loopback"* ]]
}

@test "benchmark: the conditions suite, each target against what was measured, and tapir with conditions compiled in and out" {
	BENCH_TEST_TIMEOUT=600 BENCH_ROUNDS=1 BENCH_TIME=2 BENCH_SUITES=conditions \
		BENCH_MTUS=65520 BENCH_DOC="" BENCH_RESULTS=$BATS_TEST_TMPDIR/results \
		bench run-matrix.sh
	[ "$status" -eq 0 ]
	local jsonl=$BATS_TEST_TMPDIR/results/latest/results.jsonl
	# No cell failed (run-matrix records a failed cell and goes on).
	jq -se '[.[] | select(.error)] | length == 0' "$jsonl"
	# Four delays, two losses, four rates both ways, the download, the
	# iperf3 upload, two whole uploads and the neutral rule, each
	# verified; nothing dropped for want of memory. iperf3 ends an upload
	# once the client has written its bytes: the server has most of them
	# by then. A whole upload ends when the host has them all.
	jq -se '[.[] | select(.bench == "conditions")] | length == 19 and
		all(.[]; .verified == true and .suite == "conditions" and
			.driver == "tapir" and .dropped_overflow == 0 and
			.proof.stats_tcp_bytes > 0) and
		([.[] | .kind] | group_by(.) | map("\(.[0]) \(length)")) ==
			["delay 4", "download 1", "loss 2", "neutral 1", "rate 8", "upload 1", "upload_whole 2"] and
		all(.[] | select(.kind == "delay"); .p50_ms > 0 and (.error_ms | type) == "number") and
		all(.[] | select(.kind == "loss"); (.measured_pct | type) == "number" and .sent == 10000) and
		all(.[] | select(.kind == "rate"); .mbps > 0) and
		all(.[] | select(.kind == "download"); .bytes == 16777216 and .seconds > 0) and
		all(.[] | select(.kind == "upload"); .bytes > 0 and .bytes <= 16777216 and .mbps > 0) and
		all(.[] | select(.kind == "upload_whole"); .bytes == 16777216 and .seconds > 0)' "$jsonl"
	# tapir and the build without conditions, both ways, proven.
	jq -se '[.[] | select(.bench == "iperf3-net")] |
		([.[] | "\(.driver) \(.direction)"] | sort) == ["tapir host-ns",
			"tapir ns-host", "tapir-nocond host-ns", "tapir-nocond ns-host"] and
		all(.[]; .verified == true and .suite == "conditions" and .gbps > 0)' "$jsonl"
	grep -q 'built without network conditions (make nocond)' \
		"$BATS_TEST_TMPDIR"/results/latest/conditions-net-tapir-nocond-65520-ns-host-r1.out
	[[ "$output" == *"#### Delay each way: UDP round trips, 200 probes (ms)"* ]]
	[[ "$output" == *"| rate=10mbit, host → ns | 10 | "* ]]
	[[ "$output" == *"Conditions compiled in (tapir) and out (tapir-nocond, make nocond)"* ]]
	[[ "$output" == *"| 65520 | ns → host | tapir-nocond | "* ]]
	# Its lines stay out of the main tables.
	[[ "$output" != *"share of loopback"* ]]
}

@test "benchmark: tapir-nocond that was built with conditions is refused by the runtime proof" {
	cp "$TAPIR_BIN" "$BATS_TEST_TMPDIR/tapir"
	TAPIR_NOCOND_BIN=$BATS_TEST_TMPDIR/tapir BENCH_SKIP_STATIC_IDENTITY=1 \
		bench benchmark-iperf3-net.sh tapir-nocond 1500
	[ "$status" -eq 3 ]
	no_number
	grep -q 'REFUSED:.*it was not built with make nocond' "$BATS_TEST_TMPDIR/err"
}

@test "benchmark: the connections suite, tapir and slirp4netns, every field, in its own generated section" {
	# A copy of the docs: the run replaces its connections section only.
	cp "$TAPIR_ROOT/docs/benchmarks.md" "$BATS_TEST_TMPDIR/benchmarks.md"
	BENCH_ROUNDS=1 BENCH_SUITES=connections BENCH_CONN_DRIVERS="tapir slirp4netns" \
		BENCH_CONN_SIZES=200 BENCH_CONN_UDP=200 BENCH_CONN_TIME=20 \
		BENCH_CONN_RTT_TIME=10 BENCH_DOC=$BATS_TEST_TMPDIR/benchmarks.md \
		BENCH_RESULTS=$BATS_TEST_TMPDIR/results bench run-matrix.sh
	[ "$status" -eq 0 ]
	local jsonl=$BATS_TEST_TMPDIR/results/latest/results.jsonl
	# Each driver, TCP and UDP, verified, with every field.
	jq -se 'length == 4 and all(.[]; .verified == true and
		.suite == "connections" and .bench == "connections" and
		.connections == 200 and .nofile > 200 and .driver_nofile > 200 and
		.open_limit_s == 20 and .size == 64 and .in_flight == 64 and
		.driver_fds >= .driver_fds_before and .driver_rss_kb > 0 and
		.driver_rss_before_kb > 0 and .driver_rss_held_kb > 0 and
		(.driver_kb_per_conn | type) == "number" and
		(.driver_fds_per_conn | type) == "number" and
		(.rtt_p50_ms | type) == "number" and .rtt_p99_ms >= .rtt_p50_ms and
		(.partial | type) == "boolean" and
		(.proof.tap_holder_pid | type) == "number" and
		(.driver as $d | .proof.exe | test($d))) and
		([.[] | "\(.driver) \(.proto)"] | sort) ==
		["slirp4netns tcp", "slirp4netns udp", "tapir tcp", "tapir udp"]' "$jsonl"
	jq -se '[.[] | select(.proto == "tcp")] | all(.[]; .roundtrip_limit_s == 10 and
		.window == 256 and (.open_seconds | type) == "number" and
		(.opens_per_s | type) == "number" and
		(.connect_p50_ms | type) == "number" and
		(.connect_errors | type) == "object" and
		(.roundtrip_errors | type) == "object" and
		(.open_deadline_hit | type) == "boolean" and
		(.pending_at_deadline | type) == "number" and
		(.not_attempted | type) == "number" and
		(.client_fd_limit | type) == "boolean" and
		(.roundtrip_unanswered | type) == "number" and .held == .opened and
		(.driver_cpu_open_s | type) == "number" and
		(.driver_cpu_us_per_open | type) == "number" and
		(.driver_cpu_roundtrip_s | type) == "number" and
		.proof.tap_bytes >= .bytes)' "$jsonl"
	jq -se '[.[] | select(.proto == "udp")] | all(.[]; .flows == 200 and
		.sockets == 200 and (.flows_per_s | type) == "number" and
		(.lost | type) == "number" and (.errors | type) == "object" and
		(.driver_cpu_s | type) == "number" and
		(.driver_cpu_us_per_flow | type) == "number")' "$jsonl"
	# tapir opened every connection and answered every flow, each round
	# trip echoed, and counted the bytes itself.
	jq -se '[.[] | select(.driver == "tapir")] | length == 2 and all(.[];
		.partial == false and .proof.exe != null and
		(.proof["stats_" + .proto + "_bytes"]) >= .bytes) and
		(.[] | select(.proto == "tcp") | .opened == 200 and .failed == 0 and
			.roundtrips == 200 and .bytes == 200 * 2 * 64 and
			.driver_fds - .driver_fds_before >= 200) and
		(.[] | select(.proto == "udp") | .answered == 200 and .lost == 0)' "$jsonl"
	# The report: the nofile ceiling, the tables, in the docs' own section.
	[[ "$output" == *"nofile ceiling: **"* ]]
	[[ "$output" == *"| connections | driver | opened | opens/s | vs tapir |"* ]]
	[[ "$output" == *"| 200 | tapir | all | "* ]]
	[[ "$output" == *"| flows | driver | answered | flows/s | vs tapir |"* ]]
	[[ "$output" != *"share of loopback"* ]]
	local doc=$BATS_TEST_TMPDIR/benchmarks.md
	grep -q '^| 200 | slirp4netns | ' "$doc"
	# Under make (make test, CI) the header names `make bench`.
	grep -Eq '^Generated by `.*BENCH_SUITES=connections .*(run-matrix.sh|make bench)`' "$doc"
	run ! grep -q "Not measured yet" "$doc"
	diff <(sed '/GENERATED connections/,/END GENERATED connections/d' "$doc") \
		<(sed '/GENERATED connections/,/END GENERATED connections/d' "$TAPIR_ROOT/docs/benchmarks.md")
}

@test "benchmark: connections past the nofile ceiling: a partial cell, with what it got, not a refusal" {
	# 600 connections under a hard limit of 400: the client and tapir
	# run out of fds; tapir's API then answers "too many open files",
	# and the proof reads its counters once the client let go.
	BENCH_CONN_NOFILE=400 BENCH_CONN_TIME=10 BENCH_CONN_RTT_TIME=5 \
		bench benchmark-connections.sh tapir tcp 600
	[ "$status" -eq 0 ]
	verified_line '.driver == "tapir" and .nofile == 400 and
		.driver_nofile == 400 and .partial == true and .opened > 0 and
		.opened < 600 and .roundtrips == .opened and .held == .opened and
		.client_fd_limit == true and .driver_fds <= 400 and
		.proof.stats_tcp_bytes >= .bytes'
}
